// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: resident memory over time (MEMMON_REC_RSS), from the rss_stat
 * tracepoint. It may fire in a task that is not the mm's: the process is
 * then mm->owner. Changes are coalesced per CPU and per mm: at most one
 * record per tick (plus one per rss_kib of sudden change), the last value
 * written by a per-CPU timer within about two ticks.
 *
 * Synchronisation of a CPU's slots: the tracepoint probe (task context,
 * preemption disabled) and that CPU's timer are the only users, and each
 * disables interrupts around its use of them: the timer is pinned to the
 * CPU, and runs in softirq context, or on PREEMPT_RT in a preemptible
 * thread that the probe could otherwise preempt half-way through a slot.
 * A slot holds a reference on its mm (mmgrab: the struct, not the address
 * space), dropped on eviction with mmdrop_sched() (never mmdrop(): the
 * probe runs with preemption disabled) and on detach. The process is kept
 * as its global tgid number, never a struct pid reference; the timer finds
 * the task again and checks that it still has the slot's mm.
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "hooks.h"

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/timer.h>

static unsigned int rss_kib = 1024;
/* 1 MiB: a large allocation shows at once, page-by-page growth is paced. */
module_param(rss_kib, uint, 0644);
MODULE_PARM_DESC(rss_kib,
		 "RSS change (KiB) recorded at once instead of waiting for the next tick");

#define MEMMON_RSS_SLOTS	4	/* processes remembered per CPU */

/* rss_stat's arguments: 6.2 dropped the count (compat/signatures.c). */
#ifdef MEMMON_HAVE_TP_RSS_STAT_COUNT
#define MEMMON_RSS_STAT_ARGS	struct mm_struct *mm, int member, long count
#else
#define MEMMON_RSS_STAT_ARGS	struct mm_struct *mm, int member
#endif

struct memmon_rss_slot {
	struct mm_struct *mm;	/* mmgrab()bed; NULL: free slot */
	pid_t tgid;		/* the process, in the initial namespace */
	unsigned long last_jiffies;	/* the tick of the last record */
	u64 last_total;		/* bytes it reported (all four counters) */
	u64 used;		/* LRU stamp */
	bool dirty;		/* changed since the last record */
};

struct memmon_rss_cpu {
	struct memmon_rss_slot slot[MEMMON_RSS_SLOTS];
	struct timer_list timer;	/* pinned; flushes dirty slots */
	u64 clock;			/* LRU clock */
	struct memmon_rss_slot *hot;	/* the slot used last, or NULL */
};

static struct memmon_rss_cpu __percpu *memmon_rss_pcpu;
static struct tracepoint *memmon_rss_tp;

/* What memmon_rss_read() reports in all: the four counters' sum. */
static __always_inline u64 memmon_rss_total(struct mm_struct *mm)
{
	return ((u64)get_mm_counter(mm, MM_ANONPAGES) +
		get_mm_counter(mm, MM_FILEPAGES) +
		get_mm_counter(mm, MM_SHMEMPAGES) +
		get_mm_counter(mm, MM_SWAPENTS)) << PAGE_SHIFT;
}

static u64 memmon_rss_read(struct mm_struct *mm, struct memmon_rec_rss *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->anon = (u64)get_mm_counter(mm, MM_ANONPAGES) << PAGE_SHIFT;
	rec->file = (u64)get_mm_counter(mm, MM_FILEPAGES) << PAGE_SHIFT;
	rec->shmem = (u64)get_mm_counter(mm, MM_SHMEMPAGES) << PAGE_SHIFT;
	rec->swap = (u64)get_mm_counter(mm, MM_SWAPENTS) << PAGE_SHIFT;
	return rec->anon + rec->file + rec->shmem + rec->swap;
}

/*
 * The timer: write the latest values of slots left dirty for a tick.
 * Context: softirq on the slots' CPU (TIMER_PINNED).
 */
static void memmon_rss_timer(struct timer_list *t)
{
	struct memmon_rss_cpu *rc = from_timer(rc, t, timer);
	struct memmon_rec_rss rec;
	struct task_struct *task;
	bool again = false;
	u64 now, total, sessions;
	unsigned int i;

	unsigned long flags;

	now = memmon_now();
	local_irq_save(flags);	/* against the probe: see the top */
	for (i = 0; i < MEMMON_RSS_SLOTS; i++) {
		struct memmon_rss_slot *s = &rc->slot[i];

		if (!s->mm || !s->dirty)
			continue;
		if (!time_after(jiffies, s->last_jiffies)) {
			again = true;
			continue;
		}
		total = memmon_rss_read(s->mm, &rec);
		s->last_jiffies = jiffies;
		s->last_total = total;
		s->dirty = false;
		rcu_read_lock();
		task = pid_task(find_pid_ns(s->tgid, &init_pid_ns), PIDTYPE_TGID);
		/* A reused pid, or a process that has exec'd since: not ours. */
		if (task && READ_ONCE(task->mm) != s->mm)
			task = NULL;
		sessions = task ? memmon_sessions_for(task, MEMMON_EV_RSS, 0) : 0;
		if (sessions)
			memmon_emit(sessions, task, MEMMON_REC_RSS, &rec,
				    sizeof(rec), NULL, 0, now);
		rcu_read_unlock();
	}
	local_irq_restore(flags);
	if (again)
		mod_timer(t, jiffies + 1);
}

/*
 * A change that the slow path below would only mark dirty: this CPU wrote
 * a record of @mm in the current tick (its hot slot's, so some session
 * wanted it then; the timer asks again before writing), and the total has
 * not moved rss_kib since. No session lookup, no clock read.
 *
 * Without interrupts disabled, unlike the slow path: this only reads the
 * slot and sets its dirty mark, and the probe is the slots' only other
 * writer (it does not nest: task context, preemption disabled). The timer
 * may run in between on this CPU (softirq on an interrupt's exit; on
 * PREEMPT_RT it runs with interrupts disabled, so never in between): it
 * reads the counters, which rss_stat's caller updated before calling us,
 * so a flush there already holds this change, and a dirty mark set after
 * it costs at most one more record, in a later tick.
 * Context: the probe's, preemption disabled.
 */
static __always_inline bool memmon_rss_coalesce(struct mm_struct *mm)
{
	struct memmon_rss_cpu *rc = this_cpu_ptr(memmon_rss_pcpu);
	struct memmon_rss_slot *s = rc->hot;
	unsigned long flags;
	u64 total, last;

	if (!s || s->mm != mm ||
	    !time_before_eq(jiffies, READ_ONCE(s->last_jiffies)))
		return false;
	total = memmon_rss_total(mm);
	last = READ_ONCE(s->last_total);
	if ((total > last ? total - last : last - total) >=
	    (u64)READ_ONCE(rss_kib) << 10)
		return false;
	WRITE_ONCE(s->dirty, true);
	s->used = ++rc->clock;
	if (!timer_pending(&rc->timer)) {
		local_irq_save(flags);	/* as the slow path arms it */
		mod_timer(&rc->timer, jiffies + 1);
		local_irq_restore(flags);
	}
	return true;
}

/*
 * rss_stat(mm, member[, count]).
 * Context: task context (anything else is ignored), preemption disabled
 * (tracepoint), mm pinned by the caller.
 */
static void memmon_tp_rss(void *data, MEMMON_RSS_STAT_ARGS)
{
	struct memmon_rss_slot *s, *victim = NULL;
	struct mm_struct *drop_mm = NULL;
	struct memmon_rss_cpu *rc;
	struct task_struct *task;
	struct memmon_rec_rss rec;
	u64 sessions, now, total, delta;
	unsigned long flags;
	bool emit = false;
	unsigned int i;

	if (!static_branch_unlikely(&memmon_active) ||
	    !READ_ONCE(memmon_masks.ev[MEMMON_EV_RSS]) || !in_task())
		return;
	task = current;
	/*
	 * Since 6.2 rss_stat fires on every page a fault maps (6.1 batched
	 * the task's changes, ~1 in 64), so the common cases come first: a
	 * process watched by no session (this CPU's unwatched one, emit.h), and
	 * a watched one whose change only marks its slot dirty.
	 */
	if (likely(task->mm == mm && !(task->flags & PF_KTHREAD))) {
		if (memmon_watch_is_unwatched(task) || memmon_rss_coalesce(mm))
			return;
	}
	if (task->mm != mm || (task->flags & PF_KTHREAD)) {
#ifdef CONFIG_MEMCG
		/* RCU: task_structs are freed after a grace period. */
		task = rcu_dereference(mm->owner);
		if (!task)
			return;
#else
		return;
#endif
	}
	sessions = memmon_sessions_for(task, MEMMON_EV_RSS, 0);
	if (!sessions)
		return;

	now = memmon_now();
	total = memmon_rss_read(mm, &rec);

	local_irq_save(flags);	/* against this CPU's timer */
	rc = this_cpu_ptr(memmon_rss_pcpu);
	s = NULL;
	for (i = 0; i < MEMMON_RSS_SLOTS; i++) {
		if (rc->slot[i].mm == mm) {
			s = &rc->slot[i];
			break;
		}
		if (!victim || !rc->slot[i].mm ||
		    (victim->mm && rc->slot[i].used < victim->used))
			victim = &rc->slot[i];
	}
	if (!s) {
		/* A dirty victim loses its last update: it was paced anyway,
		 * and the process's next change is recorded at once.
		 */
		s = victim;
		drop_mm = s->mm;
		mmgrab(mm);
		s->mm = mm;
		s->tgid = task->tgid;
		s->dirty = false;
		emit = true;
	}
	s->used = ++rc->clock;
	rc->hot = s;
	delta = total > s->last_total ? total - s->last_total :
					s->last_total - total;
	if (emit || time_after(jiffies, s->last_jiffies) ||
	    delta >= (u64)READ_ONCE(rss_kib) << 10) {
		emit = true;
		s->last_jiffies = jiffies;
		s->last_total = total;
		s->dirty = false;
	} else {
		s->dirty = true;
		if (!timer_pending(&rc->timer))
			mod_timer(&rc->timer, jiffies + 1);
	}
	local_irq_restore(flags);

	if (emit)
		memmon_emit(sessions, task, MEMMON_REC_RSS, &rec,
			    sizeof(rec), NULL, 0, now);
	if (drop_mm)
		mmdrop_sched(drop_mm);
}

/**
 * memmon_rss_attach() - attach the rss_stat tracepoint.
 *
 * Context: process context, may sleep; serialised by memmon_hooks_attach().
 * Return: 0, or a negative errno with nothing attached.
 */
static int memmon_rss_attach(void)
{
	int cpu, err;

	memmon_rss_tp = memmon_find_tracepoint("rss_stat");
	if (!memmon_rss_tp) {
		pr_err("no tracepoint rss_stat in this kernel\n");
		return -ENOENT;
	}
	memmon_rss_pcpu = alloc_percpu(struct memmon_rss_cpu);
	if (!memmon_rss_pcpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		timer_setup(&per_cpu_ptr(memmon_rss_pcpu, cpu)->timer,
			    memmon_rss_timer, TIMER_PINNED);

	err = tracepoint_probe_register(memmon_rss_tp, memmon_tp_rss, NULL);
	if (err) {
		pr_err("cannot attach to rss_stat: %d\n", err);
		free_percpu(memmon_rss_pcpu);
		memmon_rss_pcpu = NULL;
		return err;
	}
	return 0;
}

/**
 * memmon_rss_detach() - detach rss_stat, stop the timers, drop the slots.
 *
 * Context: process context, may sleep; serialised by memmon_hooks_detach().
 */
static void memmon_rss_detach(void)
{
	struct memmon_rss_cpu *rc;
	unsigned int i;
	int cpu;

	if (!memmon_rss_pcpu)
		return;
	WARN_ON_ONCE(tracepoint_probe_unregister(memmon_rss_tp, memmon_tp_rss,
						 NULL));
	tracepoint_synchronize_unregister();
	/* No probe can arm a timer now; del_timer_sync() also disarms one
	 * that its own callback re-armed.
	 */
	for_each_possible_cpu(cpu) {
		rc = per_cpu_ptr(memmon_rss_pcpu, cpu);
		del_timer_sync(&rc->timer);
		for (i = 0; i < MEMMON_RSS_SLOTS; i++) {
			if (!rc->slot[i].mm)
				continue;
			mmdrop(rc->slot[i].mm);
		}
	}
	free_percpu(memmon_rss_pcpu);
	memmon_rss_pcpu = NULL;
}

const struct memmon_hook_group memmon_hooks_rss = {
	.name		= "rss",
	.attach		= memmon_rss_attach,
	.detach		= memmon_rss_detach,
};
