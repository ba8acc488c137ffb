// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: MEMMON_FULL_WAIT, the lossless mode.
 *
 * A producer never waits. When one running in a watched user task leaves a
 * ring more than half full, it queues a task_work (TWA_RESUME); the task,
 * returning to user space, waits until the consumer brings the ring down
 * to a quarter. The wait is bounded (wait_timeout_ms) and interruptible; a
 * timeout sets the ring's wait_off until it is seen half empty. DISABLE
 * and release() end every wait at once.
 *
 * Lifetimes. A queued task_work cannot be cancelled from a module, so
 * everything it uses outlives it: the slots are static (one per waiting
 * task, found by hashing the task pointer); each queued work holds a
 * module reference, dropped as its last act, and
 * memmon_full_wait_cleanup() waits out those last instructions with
 * synchronize_rcu_tasks(); and the work holds a session reference, so the
 * last put may be its own (in task context, where the teardown may sleep).
 *
 *   slot field  written                            read
 *   ----------  ---------------------------------  -------------------------
 *   task        cmpxchg NULL -> current by the     producers (READ_ONCE)
 *               producer; store-release NULL by
 *               the work when it starts
 *   work, s,    the producer that owns the slot,   the work, in the same
 *     cpu       before and after task_work_add()   task, after it returns
 *                                                  to user space
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "emit.h"
#include "full_wait.h"
#include "ring_alloc.h"
#include "session.h"
#include "emit_inline.h"

#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/kref.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/task_work.h>
#include <linux/wait.h>

DEFINE_STATIC_KEY_FALSE(memmon_full_wait_active);

#define MEMMON_WAIT_SLOTS_BITS	10
#define MEMMON_WAIT_SLOTS	BIT(MEMMON_WAIT_SLOTS_BITS)
#define MEMMON_WAIT_PROBES	8
#define MEMMON_WAIT_RECHECK	max(1UL, msecs_to_jiffies(5))

struct memmon_wait_slot {
	struct callback_head work;
	struct task_struct *task;
	struct memmon_ksession *s;
	unsigned int cpu;
};

static struct memmon_wait_slot memmon_wait_slots[MEMMON_WAIT_SLOTS];
/* A work was queued since the load: cleanup must wait for its tail. */
static bool memmon_wait_queued;

/*
 * Bytes the consumer has not taken yet, from the producer's published
 * position; a consumer position outside the ring (hostile or torn) counts
 * as a full ring, as it does for the producer.
 */
static u64 memmon_ring_used(const struct memmon_ring *r)
{
	u64 used = READ_ONCE(r->page->producer_pos) - READ_ONCE(*r->consumer_pos);

	return min(used, r->size);
}

static bool memmon_wait_over(struct memmon_ksession *s, struct memmon_ring *r)
{
	return memmon_ring_used(r) <= r->size / 4 || !READ_ONCE(s->enabled);
}

/* Wait, in @s's task at its return to user space, for room on @cpu's ring. */
static void memmon_full_wait(struct memmon_ksession *s, unsigned int cpu)
{
	struct memmon_rings *rings = memmon_session_rings_peek(s);
	unsigned long deadline;
	struct memmon_cpu_ring *cr;
	long left;

	/* A producer wrote into them: they exist, and our reference keeps them. */
	cr = per_cpu_ptr(rings->cpu, cpu);
	deadline = jiffies + msecs_to_jiffies(s->wait_timeout_ms);
	while (!memmon_wait_over(s, &cr->ring)) {
		left = (long)(deadline - jiffies);
		if (left <= 0) {
			WRITE_ONCE(cr->wait_off, true);
			return;
		}
		if (wait_event_interruptible_timeout(s->wait_wq,
						     memmon_wait_over(s, &cr->ring),
						     min_t(long, left, MEMMON_WAIT_RECHECK)) < 0)
			return;		/* a signal: it goes first */
	}
}

static void memmon_full_wait_run(struct callback_head *work)
{
	struct memmon_wait_slot *w = container_of(work, struct memmon_wait_slot, work);
	struct memmon_ksession *s = w->s;
	unsigned int cpu = w->cpu;

	/*
	 * The slot is free from here: only the copies above are used. The
	 * release orders our reads of it before a new owner's writes.
	 */
	smp_store_release(&w->task, NULL);
	if (s) {
		memmon_full_wait(s, cpu);
		memmon_session_put(s);
	}
	/* Our last act: memmon_full_wait_cleanup() waits out the return. */
	module_put(THIS_MODULE);
}

/**
 * memmon_full_wait_check() - after a record into @cr, should current wait?
 * @s: a session configured with MEMMON_FULL_WAIT
 * @cr: its ring on this CPU, just written to (or found full)
 * @cpu: this CPU
 *
 * If the ring is more than half full and current is a user task that will
 * return to user space, queue its wait there (once: a task already queued
 * is not queued again).
 *
 * Context: a producer's: preemption disabled, any locks held; never sleeps.
 */
void memmon_full_wait_check(struct memmon_ksession *s,
			    struct memmon_cpu_ring *cr, unsigned int cpu)
{
	struct memmon_ring *r = &cr->ring;
	struct memmon_wait_slot *w;
	struct task_struct *t;
	unsigned int i, h;

	if (memmon_ring_used(r) <= r->size / 2) {
		if (unlikely(READ_ONCE(cr->wait_off)))
			WRITE_ONCE(cr->wait_off, false);
		return;
	}
	if (!in_task() || READ_ONCE(cr->wait_off) ||
	    (current->flags & (PF_KTHREAD | PF_EXITING | PF_IO_WORKER)))
		return;
	h = hash_ptr(current, MEMMON_WAIT_SLOTS_BITS);
	for (i = 0; i < MEMMON_WAIT_PROBES; i++) {
		w = &memmon_wait_slots[(h + i) % MEMMON_WAIT_SLOTS];
		t = READ_ONCE(w->task);
		if (t == current)
			return;
		if (!t && !cmpxchg(&w->task, NULL, current))
			goto claimed;
	}
	return;		/* no slot: this task goes on, as without the mode */

claimed:
	__module_get(THIS_MODULE);	/* live: a session of ours is open */
	w->s = NULL;
	w->cpu = cpu;
	init_task_work(&w->work, memmon_full_wait_run);
	if (task_work_add(current, &w->work, TWA_RESUME)) {
		/* Our stores to the slot come before a new owner's. */
		smp_store_release(&w->task, NULL);
		module_put(THIS_MODULE);
		return;
	}
	/*
	 * The work runs in this task once it leaves the kernel, so not before
	 * we return: setting its session now is no race. Only a reference
	 * taken before the last one went keeps it (a session being torn
	 * down is still found by producers until its grace period).
	 */
	if (kref_get_unless_zero(&s->ref))
		w->s = s;
	WRITE_ONCE(memmon_wait_queued, true);
}

/*
 * At module exit. Every queued work held a module reference, so all have
 * run; what may remain is the tail of one after its module_put(). Tasks RCU
 * waits until every task has left the code it was running.
 */
void memmon_full_wait_cleanup(void)
{
	if (READ_ONCE(memmon_wait_queued))
		synchronize_rcu_tasks();
}
