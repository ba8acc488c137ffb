// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: sessions: their table, lifecycle, configuration and statistics.
 * The event path into their rings is session_emit.c, the watch ioctl and its
 * permission rule session_watch.c, the consumers (mmap, poll, read)
 * session_read.c; this file's globals and their rules serve all four.
 *
 * Each open() of /dev/memmon is a session, numbered 0..63 and published in
 * memmon_sessions[] under RCU.
 *
 * Producers (hooks, MARK) never take a lock and never look at a session's
 * configuration: they read the global masks below (which session ids are
 * enabled, which want each event and each syscall), then the session through
 * memmon_sessions[] and its rings. All of that happens inside one RCU
 * read-side critical section (preemption disabled in memmon_emit()), and a
 * session is torn down in this order:
 *
 *   1. disable: its bit leaves every mask        (memmon_sessions_lock)
 *   2. its bit leaves the watch table            (watch.c's lock)
 *   3. memmon_sessions[id] = NULL
 *   4. synchronize_rcu(): no producer still uses the session or its rings
 *   5. the id becomes free for a new session     (so a stale mask bit
 *                                                 never names a stranger;
 *                                                 the hooks forget the id's
 *                                                 PATH records first)
 *   6. irq_work_sync() and free the rings, then the session
 *
 * Lifetime: a kref. The file holds one, every VMA of its mappings holds one
 * (vm_ops open/close in dev.c).
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "emit.h"
#include "instr.h"
#include "session.h"
#include "emit_inline.h"
#include "full_wait.h"
#include "user_limits.h"
#include "watch.h"

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/*
 * Ring sizes. The floor is fixed by the design: a ring must hold a LOST
 * record and the largest record (an EXEC or PATH record with a PATH_MAX
 * path is ~4.1 KiB) at once. The ceiling keeps 2 x ring_size x nr_cpus of
 * vmap space and the u32 record sizes comfortably apart.
 */
#define MEMMON_RING_SIZE_FLOOR	SZ_8K
#define MEMMON_RING_SIZE_CEIL	SZ_1G

static unsigned long ring_size = SZ_1M;
module_param(ring_size, ulong, 0444);
MODULE_PARM_DESC(ring_size,
		 "Per-CPU ring data bytes of a new session, a power of two (default 1 MiB)");

static unsigned long ring_size_max = SZ_256M;
module_param(ring_size_max, ulong, 0444);
MODULE_PARM_DESC(ring_size_max,
		 "Largest per-CPU ring a session may configure, a power of two (default 256 MiB, at most 1 GiB)");

#define MEMMON_EV_ALL	(BIT_ULL(MEMMON_EV__COUNT) - 1)
#define MEMMON_SYS_ALL	(BIT_ULL(MEMMON_SYS__COUNT) - 1)

DEFINE_STATIC_KEY_FALSE(memmon_active);

/*
 * memmon_sessions_lock protects the session table, the id bitmap, the masks,
 * memmon_nr_enabled and the attaching of the hooks.
 *
 * Synchronisation of the globals:
 *
 *   object               written                       read
 *   -------------------  ----------------------------  ----------------------
 *   memmon_sessions[]    lock; rcu_assign_pointer /    producers under RCU
 *                        RCU_INIT_POINTER
 *   memmon_session_ids   lock                          lock
 *   memmon_masks.*       lock, WRITE_ONCE              producers, READ_ONCE
 *   memmon_nr_enabled    lock                          lock
 *   memmon_active        lock (static_branch_*)        hooks (static branch)
 */
static DEFINE_MUTEX(memmon_sessions_lock);
struct memmon_ksession __rcu *memmon_sessions[MEMMON_MAX_SESSIONS];
static u64 memmon_session_ids;
static unsigned int memmon_nr_enabled;
/*
 * Sessions whose opener had CAP_SYS_PTRACE (MEMMON_SESSF_PTRACE): set
 * before the session is published, cleared before the grace period that
 * precedes the reuse of its id. Read locklessly by the exec guard
 * (memmon_sessions_ptrace()).
 */
static u64 memmon_session_ptrace;

/* What producers read (emit.h), on one cache line of its own. */
struct memmon_masks memmon_masks __read_mostly ____cacheline_aligned;

static u64 memmon_ring_size_min(void)
{
	return max_t(u64, MEMMON_RING_SIZE_FLOOR, PAGE_SIZE);
}

/* ---------------------------------------------------------------------
 * Masks, enable and disable
 */

/* Recompute what producers read from the enabled sessions. Lock held. */
static void __memmon_publish_masks(void)
{
	u64 ev[MEMMON_EV__COUNT] = { 0 }, sys[MEMMON_SYS__COUNT] = { 0 };
	struct memmon_ksession *s;
	unsigned int id, i;
	u64 m, stack_faults = 0;
	u32 depth = 0;

	lockdep_assert_held(&memmon_sessions_lock);
	for (m = memmon_masks.enabled; m; m &= m - 1) {
		id = __ffs64(m);
		s = rcu_dereference_protected(memmon_sessions[id],
					      lockdep_is_held(&memmon_sessions_lock));
		for (i = 0; i < MEMMON_EV__COUNT; i++)
			if (s->events & BIT_ULL(i))
				ev[i] |= BIT_ULL(id);
		for (i = 0; i < MEMMON_SYS__COUNT; i++)
			if (s->syscalls & BIT_ULL(i))
				sys[i] |= BIT_ULL(id);
		if (s->stack_faults)
			stack_faults |= BIT_ULL(id);
		depth = max(depth, s->stack_depth);
	}
	for (i = 0; i < MEMMON_EV__COUNT; i++)
		WRITE_ONCE(memmon_masks.ev[i], ev[i]);
	for (i = 0; i < MEMMON_SYS__COUNT; i++)
		WRITE_ONCE(memmon_masks.sys[i], sys[i]);
	WRITE_ONCE(memmon_masks.stack_faults, stack_faults);
	WRITE_ONCE(memmon_masks.stack_depth, depth);
}

/* Create the rings with the current configuration if needed. rings_lock held. */
struct memmon_rings *__memmon_session_rings(struct memmon_ksession *s)
{
	struct memmon_rings *rings;
	struct memmon_layout l;
	int err;

	lockdep_assert_held(&s->rings_lock);
	if (s->rings)
		return s->rings;
	/* Sizes were validated when they were set: this cannot fail. */
	memmon_layout_compute(&l, s->ring_size);
	err = memmon_limits_charge_rings(s, l.consumer_size + l.producer_size);
	if (err)
		return ERR_PTR(err);
	rings = memmon_rings_alloc(s->ring_size, s->wakeup_bytes, s->overwrite,
				   &s->wq);
	if (IS_ERR(rings)) {
		memmon_limits_uncharge_rings(s);
		return rings;
	}
	/* Pairs with the load-acquires of producers, poll() and read(). */
	smp_store_release(&s->rings, rings);
	return rings;
}

/**
 * memmon_session_rings() - the session's rings, created on first use
 * @s: the session
 *
 * The first mmap(), read(), ENABLE or MARK creates them with the
 * configuration of the moment; CONFIGURE is refused afterwards.
 *
 * Context: process context, may sleep.
 * Return: the rings, or an ERR_PTR() from memmon_rings_alloc().
 */
struct memmon_rings *memmon_session_rings(struct memmon_ksession *s)
{
	struct memmon_rings *rings = memmon_session_rings_peek(s);

	if (rings)
		return rings;
	mutex_lock(&s->rings_lock);
	rings = __memmon_session_rings(s);
	mutex_unlock(&s->rings_lock);
	return rings;
}

/**
 * memmon_session_enable() - start recording (MEMMON_IOC_ENABLE)
 * @s: the session
 *
 * Creates the rings if needed. The first session enabled attaches the hooks
 * and turns the memmon_active static key on. Enabling an enabled session
 * does nothing.
 *
 * Context: process context, may sleep.
 * Return: 0, or an error from the ring allocation or memmon_hooks_attach().
 */
int memmon_session_enable(struct memmon_ksession *s)
{
	struct memmon_rings *rings;
	int err = 0;

	mutex_lock(&s->lock);
	if (s->enabled)
		goto out_unlock;
	rings = memmon_session_rings(s);
	if (IS_ERR(rings)) {
		err = PTR_ERR(rings);
		goto out_unlock;
	}
	mutex_lock(&memmon_sessions_lock);
	if (!memmon_nr_enabled) {
		err = memmon_hooks_attach();
		if (err)
			goto out_unlock_sessions;
	}
	s->enabled = true;
	memmon_nr_enabled++;
	if (s->full_wait)
		static_branch_inc(&memmon_full_wait_active);
	WRITE_ONCE(memmon_masks.enabled, memmon_masks.enabled | BIT_ULL(s->id));
	__memmon_publish_masks();
	/* Hooks first, then the key: a hook that sees the key finds its masks. */
	if (memmon_nr_enabled == 1)
		static_branch_enable(&memmon_active);
out_unlock_sessions:
	mutex_unlock(&memmon_sessions_lock);
	/* With the rename hook attached: see memmon_session_comms(). */
	if (!err)
		memmon_session_comms_pending(s);
out_unlock:
	mutex_unlock(&s->lock);
	return err;
}

/*
 * One CPU's pending loss into its ring, on that CPU: an IPI, so nested in
 * whatever runs there like any interrupt-context writer (ring.h). Readers
 * are woken by the caller, in process context: a wait queue's lock may
 * sleep on PREEMPT_RT, so never from here.
 */
static void memmon_session_flush_cpu(void *info)
{
	struct memmon_rings *rings = info;

	memmon_ring_flush_lost(&this_cpu_ptr(rings->cpu)->ring, ktime_get_ns());
}

/*
 * Write every CPU's pending loss into the stream (see
 * memmon_session_disable()). Only CPUs with a loss pending are asked (an
 * unprivileged DISABLE loop must not become an IPI storm); the racy read
 * is exact here, since after the grace period nothing but a MARK, which
 * reports a pending loss itself, still writes these rings. Online CPUs
 * flush their own ring; an offline CPU runs nothing that could write its
 * ring while cpus_read_lock() keeps it offline, so that one is flushed from
 * here, with preemption disabled as ring.h wants of any writer.
 */
static void memmon_session_flush_lost(struct memmon_ksession *s)
{
	struct memmon_rings *rings = memmon_session_rings_peek(s);
	struct memmon_ring *r;
	unsigned int cpu;

	if (!rings)
		return;
	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		r = &per_cpu_ptr(rings->cpu, cpu)->ring;
		if (!local_read(&r->lost_pending))
			continue;
		if (cpu_online(cpu)) {
			smp_call_function_single(cpu, memmon_session_flush_cpu,
						 rings, 1);
			continue;
		}
		preempt_disable();
		memmon_ring_flush_lost(r, ktime_get_ns());
		preempt_enable();
	}
	cpus_read_unlock();
	wake_up_all(&s->wq);
}

/* Leave the masks; the last session out detaches the hooks. @s->lock held. */
static void __memmon_session_disable(struct memmon_ksession *s)
{
	if (!s->enabled)
		return;
	mutex_lock(&memmon_sessions_lock);
	WRITE_ONCE(s->enabled, false);
	WRITE_ONCE(memmon_masks.enabled, memmon_masks.enabled & ~BIT_ULL(s->id));
	__memmon_publish_masks();
	if (s->full_wait)
		static_branch_dec(&memmon_full_wait_active);
	if (!--memmon_nr_enabled) {
		static_branch_disable(&memmon_active);
		memmon_hooks_detach();
	}
	mutex_unlock(&memmon_sessions_lock);
	/*
	 * Renames are not recorded while disabled: the next ENABLE records
	 * every watched thread's name again (memmon_session_comms_pending()).
	 */
	xchg(&s->comm_pending, 1);
	/* Tasks waiting for room stop waiting (memmon_wait_over()). */
	wake_up_all(&s->wait_wq);
}

/**
 * memmon_session_close() - the session's file is released
 * @s: the session
 *
 * Nobody can read the rings any more (a mapping pins the file, so this is
 * after the last munmap() too): disable, so that tasks waiting for room
 * (MEMMON_FULL_WAIT) stop now rather than at their timeout, and drop the
 * file's reference. Their own references may keep the session a little
 * longer.
 *
 * Context: process context, may sleep.
 */
void memmon_session_close(struct memmon_ksession *s)
{
	mutex_lock(&s->lock);
	__memmon_session_disable(s);
	mutex_unlock(&s->lock);
	memmon_session_put(s);
}

/**
 * memmon_session_disable() - stop recording (MEMMON_IOC_DISABLE)
 * @s: the session
 *
 * The last session disabled turns the static key off and detaches the hooks.
 * Then, enabled or not before: wait for the producers that saw the session
 * enabled (a grace period: they run inside one RCU read-side section) and
 * write each CPU's pending loss as a LOST record with no event after it, so
 * that a stream read to its end shows every loss counted so far. A ring
 * without room for it keeps the loss pending: draining and disabling again
 * writes it (uapi/memmon.h, "Ending a recording").
 *
 * Context: process context, may sleep.
 */
void memmon_session_disable(struct memmon_ksession *s)
{
	mutex_lock(&s->lock);
	__memmon_session_disable(s);
	/*
	 * Our bit has left the masks (here or at an earlier DISABLE): after
	 * the grace period, no producer that saw it is still writing.
	 */
	synchronize_rcu();
	memmon_session_flush_lost(s);
	mutex_unlock(&s->lock);
}

/* ---------------------------------------------------------------------
 * Creation and teardown
 */

/**
 * memmon_session_create() - a new session for an open()
 *
 * The defaults: ring_size from the module parameter, wakeup at a quarter of it,
 * every event and syscall, nothing watched, disabled, no rings yet.
 *
 * Context: process context, may sleep.
 * Return: the session holding one reference, ERR_PTR(-EMFILE) when
 * MEMMON_MAX_SESSIONS are open already or the caller's user holds
 * max_user_sessions (user_limits.c), ERR_PTR(-ENOMEM), or an error from
 * attaching the exec guard.
 */
struct memmon_ksession *memmon_session_create(void)
{
	struct memmon_ksession *s;
	unsigned int id;
	int err;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	kref_init(&s->ref);
	mutex_init(&s->lock);
	mutex_init(&s->rings_lock);
	mutex_init(&s->read_lock);
	init_waitqueue_head(&s->wq);
	init_waitqueue_head(&s->wait_wq);
	timer_setup(&s->flush_timer, memmon_session_flush_tick, 0);
	s->ring_size = ring_size;
	s->wakeup_bytes = ring_size / 4;
	s->events = MEMMON_EV_ALL;
	s->syscalls = MEMMON_SYS_ALL;
	/*
	 * The opener's rights, once (docs/security.md): PFNs as
	 * /proc/PID/pagemap shows them (CAP_SYS_ADMIN), and watches that
	 * outlive a privileged exec as ptrace does (CAP_SYS_PTRACE). In the
	 * initial user namespace: a container's root gets neither.
	 */
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		s->flags |= MEMMON_SESSF_PFN;
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_PTRACE))
		s->flags |= MEMMON_SESSF_PTRACE;

	err = memmon_exec_guard_get();
	if (err)
		goto err_free;
	err = memmon_limits_session_open(s);
	if (err)
		goto err_guard;
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	s->opener = get_task_pid(current, PIDTYPE_TGID);
	get_task_comm(s->opener_comm, current);

	mutex_lock(&memmon_sessions_lock);
	if (memmon_session_ids == U64_MAX) {
		mutex_unlock(&memmon_sessions_lock);
		put_pid(s->opener);
		put_pid_ns(s->pid_ns);
		memmon_limits_session_close(s);
		/* As inotify_init() at its instance limit. */
		err = -EMFILE;
		goto err_guard;
	}
	id = __ffs64(~memmon_session_ids);
	memmon_session_ids |= BIT_ULL(id);
	s->id = id;
	if (s->flags & MEMMON_SESSF_PTRACE)
		WRITE_ONCE(memmon_session_ptrace,
			   memmon_session_ptrace | BIT_ULL(id));
	rcu_assign_pointer(memmon_sessions[id], s);
	mutex_unlock(&memmon_sessions_lock);
	return s;

err_guard:
	memmon_exec_guard_put();
err_free:
	kfree(s);
	return ERR_PTR(err);
}

/**
 * memmon_sessions_ptrace() - the sessions whose opener had CAP_SYS_PTRACE
 *
 * Context: any. A snapshot: a bit of a session being freed may still be
 * set, but only until the grace period before its id is reused, so inside
 * an RCU read-side critical section a set bit never names a stranger.
 * Return: the mask of session ids.
 */
u64 memmon_sessions_ptrace(void)
{
	return READ_ONCE(memmon_session_ptrace);
}

static void memmon_session_release(struct kref *ref)
{
	struct memmon_ksession *s = container_of(ref, struct memmon_ksession, ref);

	/* No flush: nobody reads these rings again. */
	mutex_lock(&s->lock);
	__memmon_session_disable(s);
	mutex_unlock(&s->lock);
	memmon_watch_remove_session(s->id);
	mutex_lock(&memmon_sessions_lock);
	RCU_INIT_POINTER(memmon_sessions[s->id], NULL);
	WRITE_ONCE(memmon_session_ptrace,
		   memmon_session_ptrace & ~BIT_ULL(s->id));
	mutex_unlock(&memmon_sessions_lock);
	/*
	 * Every producer found the session through memmon_sessions[] inside
	 * an RCU read-side critical section (memmon_emit() runs with
	 * preemption disabled); after this, none is left in its rings.
	 */
	synchronize_rcu();
	/*
	 * No file or mapping is left, so nobody waits or arms the tick any
	 * more; del_timer_sync() also outlasts the tick re-arming itself.
	 */
	del_timer_sync(&s->flush_timer);
	/* What the instrumentation remembers per session id goes with it. */
	memmon_hooks_forget_session(s->id);
	mutex_lock(&memmon_sessions_lock);
	memmon_session_ids &= ~BIT_ULL(s->id);
	mutex_unlock(&memmon_sessions_lock);

	memmon_rings_free(s->rings);
	memmon_limits_session_close(s);
	memmon_exec_guard_put();
	put_pid(s->opener);
	put_pid_ns(s->pid_ns);
	mutex_destroy(&s->read_lock);
	mutex_destroy(&s->rings_lock);
	mutex_destroy(&s->lock);
	kfree(s);
}

/**
 * memmon_session_get() - take a reference
 * @s: the session, to which the caller holds a reference already
 *
 * Context: any.
 */
void memmon_session_get(struct memmon_ksession *s)
{
	kref_get(&s->ref);
}

/**
 * memmon_session_put() - drop a reference, tearing down on the last one
 * @s: the session
 *
 * The last reference disables the session, forgets its watch set, waits for
 * a grace period (so no producer is inside its rings) and frees everything.
 *
 * Context: process context, may sleep (the last put).
 */
void memmon_session_put(struct memmon_ksession *s)
{
	might_sleep();
	kref_put(&s->ref, memmon_session_release);
}

/* ---------------------------------------------------------------------
 * ioctl backends (arguments already copied in and checked for reserved
 * fields and flags by dev.c)
 */

/**
 * memmon_session_info() - fill MEMMON_IOC_GET_INFO's answer
 * @s: the session
 * @info: out; everything but @info->size
 *
 * Context: process context, may sleep.
 */
void memmon_session_info(struct memmon_ksession *s, struct memmon_info *info)
{
	struct memmon_layout l;
	u64 size, wakeup;

	mutex_lock(&s->rings_lock);
	size = s->ring_size;
	wakeup = s->wakeup_bytes;
	mutex_unlock(&s->rings_lock);
	/* Sizes were validated when they were set: this cannot fail. */
	memmon_layout_compute(&l, size);

	info->abi_major = MEMMON_ABI_MAJOR;
	info->abi_minor = MEMMON_ABI_MINOR;
	/* Transport, then what the hook groups (hook_*.c) record. */
	info->features = MEMMON_FEAT_MMAP | MEMMON_FEAT_READ |
			 MEMMON_FEAT_POLL | MEMMON_FEAT_MARK |
			 MEMMON_FEAT_FOLLOW_CHILDREN |
			 MEMMON_FEAT_SYSCALLS | MEMMON_FEAT_FAULTS |
			 MEMMON_FEAT_RSS | MEMMON_FEAT_LIFECYCLE |
			 MEMMON_FEAT_FLUSH_LOST | MEMMON_FEAT_FULL_WAIT |
			 MEMMON_FEAT_OVERWRITE | MEMMON_FEAT_COMM |
			 MEMMON_FEAT_USTACK;
	if (IS_ENABLED(CONFIG_IA32_EMULATION))
		info->features |= MEMMON_FEAT_COMPAT32;
	info->events_supported = MEMMON_EV_ALL;
	info->nr_cpus = nr_cpu_ids;
	info->page_size = PAGE_SIZE;
	info->max_sessions = MEMMON_MAX_SESSIONS;
	info->max_watch = memmon_watch_max();
	info->mark_max = MEMMON_MARK_MAX;
	info->ring_size_min = memmon_ring_size_min();
	info->ring_size_max = ring_size_max;
	info->ring_size_default = ring_size;
	info->ring_size = l.ring_size;
	info->wakeup_bytes = wakeup;
	info->consumer_size = l.consumer_size;
	info->producer_offset = l.producer_offset;
	info->producer_size = l.producer_size;
	info->ring_stride = l.ring_stride;
	info->ring_data_offset = l.ring_data_offset;
	info->session_flags = s->flags;
	memmon_limits_info(s, info);
}

/**
 * memmon_session_configure() - MEMMON_IOC_CONFIGURE
 * @s: the session
 * @cfg: the configuration (0 fields mean the defaults)
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for an unknown
 * policy, a wait_timeout_ms above the maximum or without MEMMON_FULL_WAIT,
 * a non-zero __reserved, a ring size that is not a power of two in [ring_size_min,
 * ring_size_max] or a watermark outside 1..ring_size/2; -EBUSY once the
 * rings exist.
 */
int memmon_session_configure(struct memmon_ksession *s,
			     const struct memmon_config *cfg)
{
	u64 size, wakeup;
	int err = 0;

	if (cfg->full_policy != MEMMON_FULL_DROP_NEW &&
	    cfg->full_policy != MEMMON_FULL_WAIT &&
	    cfg->full_policy != MEMMON_FULL_OVERWRITE)
		return -EINVAL;
	if (cfg->__reserved || cfg->wait_timeout_ms > MEMMON_WAIT_TIMEOUT_MAX ||
	    (cfg->wait_timeout_ms && cfg->full_policy != MEMMON_FULL_WAIT))
		return -EINVAL;
	size = cfg->ring_size ?: ring_size;
	if (!is_power_of_2(size) || size < memmon_ring_size_min() ||
	    size > ring_size_max)
		return -EINVAL;
	wakeup = cfg->wakeup_bytes ?: size / 4;
	if (wakeup > size / 2)
		return -EINVAL;

	mutex_lock(&s->rings_lock);
	if (s->rings) {
		err = -EBUSY;
	} else {
		s->ring_size = size;
		s->wakeup_bytes = wakeup;
		s->full_wait = cfg->full_policy == MEMMON_FULL_WAIT;
		s->overwrite = cfg->full_policy == MEMMON_FULL_OVERWRITE;
		s->wait_timeout_ms = cfg->wait_timeout_ms ?:
				     MEMMON_WAIT_TIMEOUT_DEFAULT;
	}
	mutex_unlock(&s->rings_lock);
	return err;
}

/**
 * memmon_session_set_events() - MEMMON_IOC_SET_EVENTS
 * @s: the session
 * @ev: the new masks
 *
 * Context: process context, may sleep.
 * Return: 0, or -EINVAL for an unknown event, syscall or stack flag bit,
 * or a stack depth over MEMMON_STACK_DEPTH_MAX.
 */
int memmon_session_set_events(struct memmon_ksession *s,
			      const struct memmon_events *ev)
{
	if ((ev->mask & ~MEMMON_EV_ALL) || (ev->syscalls & ~MEMMON_SYS_ALL) ||
	    ev->stack_depth > MEMMON_STACK_DEPTH_MAX ||
	    (ev->stack_flags & ~MEMMON_STACK_FLAGS_MASK))
		return -EINVAL;
	mutex_lock(&s->lock);
	mutex_lock(&memmon_sessions_lock);
	s->events = ev->mask;
	s->syscalls = ev->syscalls;
	WRITE_ONCE(s->stack_depth, ev->stack_depth);
	WRITE_ONCE(s->stack_faults, !!(ev->stack_flags & MEMMON_STACK_FAULTS));
	if (s->enabled)
		__memmon_publish_masks();
	mutex_unlock(&memmon_sessions_lock);
	mutex_unlock(&s->lock);
	return 0;
}

/**
 * memmon_session_mark() - MEMMON_IOC_MARK
 * @s: the session
 * @flags: MEMMON_MARK_*
 * @data: payload (kernel copy)
 * @len: payload bytes, at most MEMMON_MARK_MAX
 *
 * Without MEMMON_MARK_WATCHERS: into this session's ring of the caller's
 * CPU, enabled or not (creating the rings if needed), so a marker can be put
 * before ENABLE. With it: into every enabled session that watches the
 * caller's process and records MEMMON_EV_MARK (not this one unless it does).
 * A full ring drops the marker like any event: counted, LOST record.
 *
 * Context: process context, may sleep.
 * Return: 0, or an error from creating the rings.
 */
int memmon_session_mark(struct memmon_ksession *s, u32 flags,
			const void *data, u32 len)
{
	struct memmon_rings *rings;
	struct {
		u32 len;
		u32 flags;
	} body = { .len = len, .flags = flags };
	const struct memmon_fill_bytes fill = {
		.body = &body, .body_len = sizeof(body),
		.tail = data, .tail_len = len,
	};
	u64 sessions;

	BUILD_BUG_ON(sizeof(body) != sizeof(struct memmon_rec_mark) -
				     sizeof(struct memmon_rec_header));
	/*
	 * The time is taken with preemption disabled, on the CPU whose ring
	 * gets the record: a writer preempted between its clock read and its
	 * reserve would land behind younger records of the same ring, which
	 * consumers merge by time assuming each ring is in order.
	 */
	if (flags & MEMMON_MARK_WATCHERS) {
		/* An RCU read side: the mask stays meaningful until the emit. */
		preempt_disable();
		sessions = memmon_sessions_wanting(memmon_sessions_watching(current),
						   MEMMON_EV_MARK, 0);
		if (sessions)
			__memmon_emit(sessions, current, MEMMON_REC_MARK, &body,
				      sizeof(body), data, len, ktime_get_ns());
		preempt_enable();
		return 0;
	}
	rings = memmon_session_rings(s);
	if (IS_ERR(rings))
		return PTR_ERR(rings);
	preempt_disable();
	__memmon_emit_one(s, rings, smp_processor_id(), current,
			  MEMMON_REC_MARK, (u64)sizeof(body) + len,
			  memmon_fill_bytes, &fill, ktime_get_ns(), false);
	preempt_enable();
	return 0;
}

/**
 * memmon_session_stats() - one CPU's counters (MEMMON_IOC_GET_STATS)
 * @s: the session
 * @cpu: the CPU, < nr_cpu_ids
 * @st: out; zero for a session without rings or an impossible CPU
 *
 * The counters are read racily; produced == delivered + lost holds exactly
 * once the CPU's producers are quiet.
 *
 * Context: any.
 */
void memmon_session_stats(struct memmon_ksession *s, u32 cpu,
			  struct memmon_cpu_stats *st)
{
	struct memmon_rings *rings = memmon_session_rings_peek(s);
	struct memmon_ring *r;

	memset(st, 0, sizeof(*st));
	if (!rings || cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return;
	r = &per_cpu_ptr(rings->cpu, cpu)->ring;
	st->produced = local_read(&r->produced);
	st->delivered = local_read(&r->delivered);
	st->lost = local_read(&r->lost);
	st->bytes = local_read(&r->bytes);
}

/**
 * memmon_sessions_show() - one line per live session, for /proc/memmon/sessions
 * @m: the seq_file; pids are shown in its reader's PID namespace (0 when
 *	not visible there), uids in its user namespace
 *
 * The sessions of every user: the file is root's (0400), as the other
 * files of /proc/memmon.
 *
 * Context: process context. Holds memmon_sessions_lock: a session in the
 * table cannot be freed meanwhile (release clears its slot under the lock
 * before it frees anything), and the watch table's lock nests inside it.
 */
void memmon_sessions_show(struct seq_file *m)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct memmon_cpu_stats st;
	u64 produced, delivered, lost;
	struct memmon_ksession *s;
	unsigned int id, cpu;

	mutex_lock(&memmon_sessions_lock);
	for (id = 0; id < MEMMON_MAX_SESSIONS; id++) {
		s = rcu_dereference_protected(memmon_sessions[id],
					      lockdep_is_held(&memmon_sessions_lock));
		if (!s)
			continue;
		produced = 0;
		delivered = 0;
		lost = 0;
		for_each_possible_cpu(cpu) {
			memmon_session_stats(s, cpu, &st);
			produced += st.produced;
			delivered += st.delivered;
			lost += st.lost;
		}
		seq_printf(m, "session %u pid %d comm %s uid %u enabled %d watched %u ring_size %llu full_wait %d produced %llu delivered %llu lost %llu\n",
			   id, pid_nr_ns(s->opener, ns), s->opener_comm,
			   from_kuid_munged(seq_user_ns(m), s->user->uid),
			   READ_ONCE(s->enabled),
			   memmon_watch_list(id, ns, NULL, 0),
			   READ_ONCE(s->ring_size), READ_ONCE(s->full_wait),
			   produced, delivered, lost);
	}
	mutex_unlock(&memmon_sessions_lock);
}

/* ---------------------------------------------------------------------
 * Module init and exit
 */

/**
 * memmon_session_init() - validate the ring size parameters
 *
 * Context: module init, process context.
 * Return: 0, or -EINVAL with a message naming the bad parameter.
 */
int memmon_session_init(void)
{
	u64 min = memmon_ring_size_min();

	if (!is_power_of_2(ring_size_max) || ring_size_max < min ||
	    ring_size_max > MEMMON_RING_SIZE_CEIL) {
		pr_err("ring_size_max=%lu must be a power of two in [%llu, %u]\n",
		       ring_size_max, min, MEMMON_RING_SIZE_CEIL);
		return -EINVAL;
	}
	if (!is_power_of_2(ring_size) || ring_size < min ||
	    ring_size > ring_size_max) {
		pr_err("ring_size=%lu must be a power of two in [%llu, ring_size_max=%lu]\n",
		       ring_size, min, ring_size_max);
		return -EINVAL;
	}
	return 0;
}

/**
 * memmon_session_cleanup() - module exit
 *
 * Every session is gone by now: each open file pins the module, and every
 * VMA pins its file.
 *
 * Context: module exit, process context.
 */
void memmon_session_cleanup(void)
{
	WARN_ON_ONCE(memmon_session_ids || memmon_nr_enabled);
}
