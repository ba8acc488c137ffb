// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: reserves of objects for hooks that run with preemption disabled.
 *
 * A tracepoint probe or a kprobe handler runs with preemption disabled. On
 * PREEMPT_RT neither kmalloc() nor kfree() may be called there: the slab
 * and page allocators take locks that sleep on RT (spinlock_t, local_lock).
 * Hooks that need an object there (a watch entry at fork, an exit note, a
 * remembered file) take it from a reserve instead and give back what they
 * did not use; a work item, in process context, refills the reserve with
 * GFP_KERNEL and trims it. The objects come from kmalloc(@size): one that
 * leaves the reserve is freed with kfree() or kfree_rcu() by whoever owns
 * it later, in a context where that is allowed. An empty reserve is an
 * allocation failure to the caller, which already counts those.
 */
#include "main.h"
#include "reserve.h"

#include <linux/slab.h>
#include <linux/string.h>

static void memmon_reserve_refill(struct work_struct *work)
{
	struct memmon_reserve *r = container_of(work, struct memmon_reserve,
						refill);
	unsigned long flags;
	void *obj;

	for (;;) {
		raw_spin_lock_irqsave(&r->lock, flags);
		if (r->nr > r->high) {
			obj = r->free;
			r->free = *(void **)obj;
			r->nr--;
			raw_spin_unlock_irqrestore(&r->lock, flags);
			kfree(obj);
			continue;
		}
		if (r->nr >= r->high) {
			raw_spin_unlock_irqrestore(&r->lock, flags);
			return;
		}
		raw_spin_unlock_irqrestore(&r->lock, flags);
		obj = kmalloc(r->size, GFP_KERNEL);
		if (!obj)
			return;
		memmon_reserve_give(r, obj);
	}
}

/**
 * memmon_reserve_init() - fill a reserve of @high objects of @size bytes
 * @r:    the reserve
 * @size: object size, at least a pointer's
 * @low:  refill when fewer are left
 * @high: the count the work item keeps
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM (nothing left allocated).
 */
int memmon_reserve_init(struct memmon_reserve *r, size_t size,
			unsigned int low, unsigned int high)
{
	void *obj;

	raw_spin_lock_init(&r->lock);
	r->free = NULL;
	r->nr = 0;
	r->low = low;
	r->high = high;
	r->size = max(size, sizeof(void *));
	INIT_WORK(&r->refill, memmon_reserve_refill);
	while (r->nr < high) {
		obj = kmalloc(r->size, GFP_KERNEL);
		if (!obj) {
			memmon_reserve_destroy(r);
			return -ENOMEM;
		}
		*(void **)obj = r->free;
		r->free = obj;
		r->nr++;
	}
	return 0;
}

/**
 * memmon_reserve_destroy() - free a reserve's objects
 * @r: the reserve, which nothing takes from or gives to any more
 *
 * Context: process context, may sleep.
 */
void memmon_reserve_destroy(struct memmon_reserve *r)
{
	void *obj;

	cancel_work_sync(&r->refill);
	while (r->free) {
		obj = r->free;
		r->free = *(void **)obj;
		kfree(obj);
	}
	r->nr = 0;
}

/**
 * memmon_reserve_take() - a zeroed object, or NULL if the reserve is empty
 * @r: the reserve
 *
 * Context: any but NMI; never sleeps, never calls the allocator.
 */
void *memmon_reserve_take(struct memmon_reserve *r)
{
	unsigned long flags;
	bool refill;
	void *obj;

	raw_spin_lock_irqsave(&r->lock, flags);
	obj = r->free;
	if (obj) {
		r->free = *(void **)obj;
		r->nr--;
	}
	refill = r->nr < r->low;
	raw_spin_unlock_irqrestore(&r->lock, flags);
	if (refill)
		queue_work(system_unbound_wq, &r->refill);
	if (obj)
		memset(obj, 0, r->size);
	return obj;
}

/**
 * memmon_reserve_give() - return an object taken from @r, unused
 * @r:   the reserve
 * @obj: the object, or NULL
 *
 * Context: any but NMI; never sleeps, never calls the allocator.
 */
void memmon_reserve_give(struct memmon_reserve *r, void *obj)
{
	unsigned long flags;
	bool trim;

	if (!obj)
		return;
	raw_spin_lock_irqsave(&r->lock, flags);
	*(void **)obj = r->free;
	r->free = obj;
	r->nr++;
	trim = r->nr > r->high;
	raw_spin_unlock_irqrestore(&r->lock, flags);
	if (trim)
		queue_work(system_unbound_wq, &r->refill);
}
