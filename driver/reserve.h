/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: objects for hooks that run with preemption disabled, where the
 * allocator may not be called on PREEMPT_RT (reserve.c).
 */
#ifndef MEMMON_DRIVER_RESERVE_H
#define MEMMON_DRIVER_RESERVE_H

#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

/*
 * A free list of @size-byte objects from kmalloc(), kept between @low and
 * @high by a work item in process context.
 *
 *   lock      raw: taken in any context, never around a call out
 *   free, nr  the list (linked through each object's first word), lock
 *   refill    queued from any context when nr falls below low or rises
 *             above high; runs the allocator (GFP_KERNEL) or kfree()
 */
struct memmon_reserve {
	raw_spinlock_t lock;
	void *free;
	unsigned int nr;
	unsigned int low;
	unsigned int high;
	size_t size;
	struct work_struct refill;
};

int memmon_reserve_init(struct memmon_reserve *r, size_t size,
			unsigned int low, unsigned int high);
void memmon_reserve_destroy(struct memmon_reserve *r);
void *memmon_reserve_take(struct memmon_reserve *r);
void memmon_reserve_give(struct memmon_reserve *r, void *obj);

/*
 * For a hook with preemption disabled: a zeroed object from the allocator
 * (@gfp: an atomic mask) where that is allowed, from the reserve on
 * PREEMPT_RT or when the allocator has none. memmon_reserve_free() undoes
 * it in the same kind of context.
 */
static inline void *memmon_reserve_alloc(struct memmon_reserve *r, gfp_t gfp)
{
	void *obj;

	if (!IS_ENABLED(CONFIG_PREEMPT_RT)) {
		obj = kzalloc(r->size, gfp);
		if (obj)
			return obj;
	}
	return memmon_reserve_take(r);
}

static inline void memmon_reserve_free(struct memmon_reserve *r, void *obj)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		memmon_reserve_give(r, obj);
	else
		kfree(obj);
}

#endif /* MEMMON_DRIVER_RESERVE_H */
