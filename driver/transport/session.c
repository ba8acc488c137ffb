// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: sessions and the event path into their rings.
 *
 * Every open() of /dev/memmon is a session: its own rings, watch set, event
 * masks and statistics. A session is numbered 0..63 so that "which sessions
 * want this" is a u64, and published in memmon_sessions[] under RCU.
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
 * (vm_ops open/close in dev.c). In practice a VMA also pins the file
 * (vma->vm_file), so the last reference always goes in release(); the VMA
 * references make the session's lifetime explicit rather than borrowed.
 */
#include "memmon.h"
#include "emit.h"
#include "instr.h"
#include "task_auxv.h"
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
		 "Per-CPU ring data bytes of a new session, a power of two (default 1 MiB): records are 72-112 bytes, so ~10k events per CPU, several ms of a page-fault storm even under TCG; a session costs nr_cpu_ids times this");

static unsigned long ring_size_max = SZ_256M;
module_param(ring_size_max, ulong, 0444);
MODULE_PARM_DESC(ring_size_max,
		 "Largest per-CPU ring a session may configure, a power of two (default 256 MiB, at most 1 GiB): bounds the memory one session can pin");

/*
 * The longest a record waits in a ring below the watermark while a reader
 * sleeps in read() or poll() (trace_pipe's promptness for the few-events
 * case); 0 leaves only the watermark. Read at each tick.
 */
static unsigned int wakeup_ms = 100;
module_param(wakeup_ms, uint, 0644);
MODULE_PARM_DESC(wakeup_ms,
		 "A sleeping reader sees a record within this many ms even below the watermark (default 100; 0: only at the watermark)");

static void memmon_session_flush_tick(struct timer_list *t);

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
struct memmon_session __rcu *memmon_sessions[MEMMON_MAX_SESSIONS];
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

/* ptrace_may_access() is not exported: resolved once, see memmon_may_watch(). */
typedef bool (*memmon_ptrace_may_access_t)(struct task_struct *task,
					   unsigned int mode);

static u64 memmon_ring_size_min(void)
{
	return max_t(u64, MEMMON_RING_SIZE_FLOOR, PAGE_SIZE);
}

/* ---------------------------------------------------------------------
 * The event path
 */

/**
 * memmon_emit() - write one record into the rings of some sessions
 * @sessions: the sessions (memmon_sessions_wanting()'s answer)
 * @task: the task the record is about (header tgid/tid), or NULL
 * @type: enum memmon_rec_type
 * @body: the record after its struct memmon_rec_header
 * @body_len: bytes of @body
 * @tail: variable-length data after @body (path, payload), or NULL
 * @tail_len: bytes of @tail
 * @time_ns: CLOCK_MONOTONIC time of the event
 *
 * For each session in @sessions that is still enabled: reserve on this CPU's
 * ring, fill the header (tgid/tid in the session opener's PID namespace),
 * copy @body and @tail, zero the padding to MEMMON_REC_ALIGN, commit, and
 * queue the ring's irq_work if readers should wake. A full ring drops the
 * event and counts it (ring.h). Nothing sleeps, nothing takes a lock.
 *
 * Context: any context the hooks run in: task context with or without
 * preemption, tracepoint probes (RCU-sched), softirq, IRQ, NMI (a kprobe on
 * an int3); nested on this CPU is fine: only local ops, RCU reads and
 * irq_work_queue(). @sessions must have been computed inside the same RCU
 * read-side critical section (see memmon_sessions_watching()). Disables preemption
 * itself (notrace, so an ftrace-based caller does not recurse).
 * Pairs with: [A]/[B] inside ring.h; [E] through the irq_work.
 */
void memmon_emit(u64 sessions, struct task_struct *task, u16 type,
		 const void *body, u32 body_len,
		 const void *tail, u32 tail_len, u64 time_ns)
{
	__memmon_emit(sessions, task, type, body, body_len, tail, tail_len,
		      time_ns);
}

/* A record's fixed body and the user stack that follows it. */
struct memmon_stacked_fill {
	const u8 *body;
	u32 body_len;
	u32 flags_off;		/* of the body's __u32 flags */
	u32 flag;		/* its *_USTACK bit */
	const struct memmon_ustack *st;
};

/* The stack as deep as session @s asked (read once: the fill uses hdr->size). */
static __always_inline u64 memmon_stacked_len(const struct memmon_session *s,
					      const void *ctx)
{
	const struct memmon_stacked_fill *f = ctx;

	return f->body_len +
	       memmon_ustack_bytes(memmon_ustack_nr(f->st, READ_ONCE(s->stack_depth)));
}

static __always_inline void memmon_stacked_fill(struct memmon_rec_header *hdr,
						const struct memmon_session *s,
						const void *ctx)
{
	const struct memmon_stacked_fill *f = ctx;
	u8 *p = (u8 *)(hdr + 1);
	u32 nr, flags;

	/* What memmon_stacked_len() gave @s: 8-byte parts, no padding. */
	nr = (hdr->size - sizeof(*hdr) - f->body_len -
	      sizeof(struct memmon_user_stack)) / sizeof(u64);
	memcpy(p, f->body, f->body_len);
	memcpy(&flags, p + f->flags_off, sizeof(flags));
	flags |= f->flag;
	memcpy(p + f->flags_off, &flags, sizeof(flags));
	memmon_ustack_put(p + f->body_len, f->st, nr);
}

/**
 * memmon_emit_stacked() - memmon_emit() of a record followed by a user stack
 * @sessions: the sessions to write to
 * @task: whose record it is
 * @type: its type
 * @body: the record after its header, @body_len bytes (a multiple of 8)
 * @body_len: its length
 * @flags_off: the offset in @body of its __u32 flags
 * @flag: the flag that says a struct memmon_user_stack follows
 * @st: the stack (@st->nr > 0); each session gets it as deep as it asked
 * @time_ns: the record's time
 *
 * Contexts as memmon_emit().
 */
void memmon_emit_stacked(u64 sessions, struct task_struct *task, u16 type,
			 const void *body, u32 body_len, u32 flags_off, u32 flag,
			 const struct memmon_ustack *st, u64 time_ns)
{
	const struct memmon_stacked_fill f = {
		.body = body, .body_len = body_len,
		.flags_off = flags_off, .flag = flag, .st = st,
	};

	__memmon_emit_fill_len(sessions, task, type, 0, memmon_stacked_len,
			       memmon_stacked_fill, &f, time_ns);
}

/*
 * memmon_emit() of a syscall record (every watched call writes one) for
 * current, from its uapi struct (whose header the transport fills), with
 * the user stack @st after it: the same, with the record's size known to
 * the compiler. (The fault hook compiles the loop into itself:
 * hook_faults.c.) Contexts as memmon_emit().
 */
void memmon_emit_syscall(u64 sessions, const struct memmon_rec_syscall *rec,
			 const struct memmon_ustack *st, u64 time_ns)
{
	const u32 body = sizeof(*rec) - sizeof(rec->hdr);

	if (!st->nr) {
		__memmon_emit(sessions, current, MEMMON_REC_SYSCALL,
			      (const u8 *)rec + sizeof(rec->hdr), body, NULL, 0,
			      time_ns);
		return;
	}
	memmon_emit_stacked(sessions, current, MEMMON_REC_SYSCALL,
			    (const u8 *)rec + sizeof(rec->hdr), body,
			    offsetof(struct memmon_rec_syscall, flags) - sizeof(rec->hdr),
			    MEMMON_SYSF_USTACK, st, time_ns);
}

/*
 * What a FORK record is written from: the child, whose ids each session
 * sees in its own PID namespace.
 */
struct memmon_fork_fill {
	struct task_struct *child;
	u32 flags;
};

static __always_inline void memmon_fork_fill(struct memmon_rec_header *hdr,
					     const struct memmon_session *s,
					     const void *ctx)
{
	struct memmon_rec_fork *rec = container_of(hdr, struct memmon_rec_fork, hdr);
	const struct memmon_fork_fill *f = ctx;

	/* 0 where the child is not visible in the session's namespace. */
	memmon_task_ids(s, f->child, &rec->child_tgid, &rec->child_tid);
	rec->flags = f->flags;
	rec->__reserved = 0;
}

/*
 * memmon_emit() of a FORK record of @parent: every PID in a record is in
 * the reading session's namespace, the child's too. Contexts as
 * memmon_emit(); @child must stay alive (the fork tracepoint's is).
 */
void memmon_emit_fork(u64 sessions, struct task_struct *parent,
		      struct task_struct *child, u32 flags, u64 time_ns)
{
	const struct memmon_fork_fill f = { .child = child, .flags = flags };

	__memmon_emit_fill(sessions, parent, MEMMON_REC_FORK,
			   sizeof(struct memmon_rec_fork) -
			   sizeof(struct memmon_rec_header),
			   memmon_fork_fill, &f, time_ns);
}

/* ---------------------------------------------------------------------
 * Masks, enable and disable
 */

/* Recompute what producers read from the enabled sessions. Lock held. */
static void __memmon_publish_masks(void)
{
	u64 ev[MEMMON_EV__COUNT] = { 0 }, sys[MEMMON_SYS__COUNT] = { 0 };
	struct memmon_session *s;
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
static struct memmon_rings *__memmon_session_rings(struct memmon_session *s)
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
struct memmon_rings *memmon_session_rings(struct memmon_session *s)
{
	struct memmon_rings *rings = memmon_session_rings_peek(s);

	if (rings)
		return rings;
	mutex_lock(&s->rings_lock);
	rings = __memmon_session_rings(s);
	mutex_unlock(&s->rings_lock);
	return rings;
}

static void memmon_session_comms_pending(struct memmon_session *s);

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
int memmon_session_enable(struct memmon_session *s)
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
static void memmon_session_flush_lost(struct memmon_session *s)
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
static void __memmon_session_disable(struct memmon_session *s)
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
void memmon_session_close(struct memmon_session *s)
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
void memmon_session_disable(struct memmon_session *s)
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
struct memmon_session *memmon_session_create(void)
{
	struct memmon_session *s;
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
	struct memmon_session *s = container_of(ref, struct memmon_session, ref);

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
void memmon_session_get(struct memmon_session *s)
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
void memmon_session_put(struct memmon_session *s)
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
void memmon_session_info(struct memmon_session *s, struct memmon_info *info)
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
int memmon_session_configure(struct memmon_session *s,
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
int memmon_session_set_events(struct memmon_session *s,
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

/*
 * May the caller watch @task's process? The rule of /proc/PID/maps and of
 * perf_event_open() on another task: ptrace read access with the caller's
 * filesystem credentials. ptrace_may_access() is not exported to modules;
 * it is looked up once. Without it (a kernel that hides it), only the
 * caller's own process or a CAP_SYS_PTRACE caller passes: never more than
 * the real check would allow, short of an LSM's ptrace rules.
 */
static bool memmon_may_watch(struct task_struct *task)
{
	static memmon_ptrace_may_access_t may_access;
	static bool resolved;
	static DEFINE_MUTEX(resolve_lock);

	if (same_thread_group(task, current))
		return true;
	/* Pairs with the store-release below: may_access is set before. */
	if (!smp_load_acquire(&resolved)) {
		mutex_lock(&resolve_lock);
		if (!resolved) {
			may_access = (memmon_ptrace_may_access_t)
				     memmon_ksym("ptrace_may_access");
			if (!may_access)
				pr_warn("ptrace_may_access() not found: only CAP_SYS_PTRACE may watch other processes\n");
			/* Publishes may_access to the lockless check above. */
			smp_store_release(&resolved, true);
		}
		mutex_unlock(&resolve_lock);
	}
	if (may_access)
		return may_access(task, PTRACE_MODE_READ_FSCREDS);
	return capable(CAP_SYS_PTRACE);
}

/*
 * The names of @task's threads, one MEMMON_REC_COMM (MEMMON_COMM_WATCH)
 * each, into @s's own @rings, enabled or not (as an unscoped MARK): only
 * the session that starts watching learns them. Each thread's name is read
 * and written under its task_lock(), which __set_task_comm() holds around
 * the task_rename tracepoint: a rename is either already in the name read
 * here or recorded after it by the rename hook (attached, and the process
 * watched, by now), so a thread's last record carries its current name.
 * task_lock() sleeps on PREEMPT_RT, hence RCU (preemptible there) around
 * the walk and preemption disabled only around each record.
 * Context: process context, inside an RCU read side or holding @task.
 */
static void memmon_session_comms(struct memmon_session *s,
				 struct memmon_rings *rings,
				 struct task_struct *task)
{
	struct {
		u32 why;
		u32 reserved;
		char comm[MEMMON_COMM_LEN];
	} body = { .why = MEMMON_COMM_WATCH };
	const struct memmon_fill_bytes fill = {
		.body = &body, .body_len = sizeof(body),
	};
	struct task_struct *t;

	BUILD_BUG_ON(sizeof(body) != sizeof(struct memmon_rec_comm) -
				     sizeof(struct memmon_rec_header));
	BUILD_BUG_ON(MEMMON_COMM_LEN != TASK_COMM_LEN);
	rcu_read_lock();
	for_each_thread(task, t) {
		task_lock(t);
		strscpy_pad(body.comm, t->comm, sizeof(body.comm));
		/* Time and ring on one CPU: see memmon_session_mark(). */
		preempt_disable();
		__memmon_emit_one(s, rings, smp_processor_id(), t,
				  MEMMON_REC_COMM, sizeof(body),
				  memmon_fill_bytes, &fill, ktime_get_ns(), false);
		preempt_enable();
		task_unlock(t);
	}
	/* Where the program was placed: after its main thread's name. */
	task_lock(task);
	if (task->mm) {
		struct memmon_rec_auxv av;
		const struct memmon_fill_bytes afill = {
			.body = (const u8 *)&av + sizeof(av.hdr),
			.body_len = sizeof(av) - sizeof(av.hdr),
		};

		memmon_auxv_fill(task->mm, &av);
		preempt_disable();
		__memmon_emit_one(s, rings, smp_processor_id(), task,
				  MEMMON_REC_AUXV, afill.body_len,
				  memmon_fill_bytes, &afill, ktime_get_ns(), false);
		preempt_enable();
	}
	task_unlock(task);
	rcu_read_unlock();
}

static void memmon_session_comms_one(struct task_struct *task, void *arg)
{
	struct memmon_session *s = arg;

	memmon_session_comms(s, memmon_session_rings_peek(s), task);
}

/*
 * The names not recorded while the session was enabled (a WATCH_ADD before
 * the ENABLE, renames while disabled): every watched process's, once, by
 * whoever takes s->comm_pending while the session is enabled. Called by
 * ENABLE after the hooks are attached and @enabled is set, and by a
 * WATCH_ADD after it set the flag. The xchg()s are full barriers on either
 * side of those: a WATCH_ADD that set the flag either sees @enabled and
 * takes the flag itself, or ENABLE's xchg(), after @enabled was stored,
 * finds the flag set (its process is in the table by then).
 * Context: process context, may sleep.
 */
static void memmon_session_comms_pending(struct memmon_session *s)
{
	if (READ_ONCE(s->enabled) && memmon_session_rings_peek(s) &&
	    xchg(&s->comm_pending, 0))
		memmon_watch_each(s->id, memmon_session_comms_one, s);
}

/**
 * memmon_session_watch() - MEMMON_IOC_WATCH_ADD and _DEL
 * @s: the session
 * @w: the request; @w->pid is in the caller's PID namespace, 0 = the
 *	caller's process
 * @add: true for WATCH_ADD
 *
 * Context: process context, may sleep.
 * Return: 0; -ESRCH if no process has that pid (a thread id that is not a
 * process's is not a process); -EACCES if the caller may not ptrace-read it
 * (ADD); -EEXIST if watched already (ADD); -ENOENT if not watched (DEL);
 * -ENOSPC at max_watch (ADD); -ENOMEM; -EINTR if killed while waiting
 * for an exec of the target to finish (ADD).
 */
int memmon_session_watch(struct memmon_session *s, const struct memmon_watch *w,
			 bool add)
{
	struct memmon_rings *rings;
	struct task_struct *task;
	struct pid *pid;
	int err;

	if (w->pid > PID_MAX_LIMIT)
		return -ESRCH;
	pid = w->pid ? find_get_pid(w->pid) : get_pid(task_tgid(current));
	if (!pid)
		return -ESRCH;
	/* A thread id names no process, whether its process is watched or not. */
	if (!pid_has_task(pid, PIDTYPE_TGID)) {
		err = -ESRCH;
		goto out_put_pid;
	}
	if (!add) {
		err = memmon_watch_del(s->id, pid);
		goto out_put_pid;
	}
	task = get_pid_task(pid, PIDTYPE_TGID);
	if (!task) {
		err = -ESRCH;
		goto out_put_pid;
	}
	/*
	 * The check and the insert under the target's exec_update_lock, as
	 * perf_event_open() does: an exec between them would be judged by
	 * neither us nor the exec guard (exec_guard.c), which runs with the
	 * lock held for writing.
	 */
	err = down_read_killable(&task->signal->exec_update_lock);
	if (err)
		goto out_put_task;
	if (memmon_may_watch(task))
		err = memmon_watch_add(s->id, task,
				       w->flags & MEMMON_WATCH_FOLLOW_CHILDREN);
	else
		err = -EACCES;
	/*
	 * Under exec_update_lock: no exec renames the threads meanwhile.
	 * Rings are not created for it: CONFIGURE must still be possible.
	 */
	if (!err) {
		rings = memmon_session_rings_peek(s);
		if (rings && READ_ONCE(s->enabled)) {
			memmon_session_comms(s, rings, task);
		} else {
			xchg(&s->comm_pending, 1);
			memmon_session_comms_pending(s);
		}
	}
	up_read(&task->signal->exec_update_lock);
out_put_task:
	put_task_struct(task);
out_put_pid:
	put_pid(pid);
	return err;
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
int memmon_session_mark(struct memmon_session *s, u32 flags,
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
			memmon_emit(sessions, current, MEMMON_REC_MARK, &body,
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
void memmon_session_stats(struct memmon_session *s, u32 cpu,
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
	struct memmon_session *s;
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
 * Consumers: mmap(), poll(), read()
 */

/**
 * memmon_session_mmap() - check and map one of the session's areas
 * @s: the session
 * @vma: the new mapping
 *
 * The request is checked against the layout of the current configuration
 * before anything is allocated, so a refused mmap() leaves CONFIGURE
 * possible; an accepted one creates the rings. The caller installs vm_ops
 * and the VMA's session reference on success.
 *
 * Context: the mmap file operation: mmap_lock held for writing; may sleep.
 * Return: 0, or the errors of memmon_mmap_check(), of the allocation and
 * of memmon_rings_remap().
 */
int memmon_session_mmap(struct memmon_session *s, struct vm_area_struct *vma)
{
	struct memmon_rings *rings;
	struct memmon_layout l;
	int area;

	mutex_lock(&s->rings_lock);
	if (s->rings)
		l = s->rings->layout;
	else
		memmon_layout_compute(&l, s->ring_size);
	area = memmon_mmap_check(&l, vma);
	if (area < 0) {
		mutex_unlock(&s->rings_lock);
		return area;
	}
	rings = __memmon_session_rings(s);
	mutex_unlock(&s->rings_lock);
	if (IS_ERR(rings))
		return PTR_ERR(rings);
	return memmon_rings_remap(rings, vma, area);
}

/*
 * The tick of prompt delivery: wake the sleepers if a ring holds anything,
 * and tick again while anyone still waits. A sleeper that arrives after
 * the wq_has_sleeper() test arms the timer itself
 * (memmon_session_wait_prepare(), after it is on the queue).
 *
 * Context: timer (softirq; a thread on PREEMPT_RT). Pairs with: [B]
 * through [C] in memmon_rings_readable(); [E] through the wait queue lock.
 */
static void memmon_session_flush_tick(struct timer_list *t)
{
	struct memmon_session *s = from_timer(s, t, flush_timer);
	struct memmon_rings *rings = memmon_session_rings_peek(s);
	unsigned int ms = READ_ONCE(wakeup_ms);

	if (!ms)
		return;
	if (rings && memmon_rings_hold_records(rings)) {
		WRITE_ONCE(s->flush_due, true);
		wake_up_all(&s->wq);
	}
	if (wq_has_sleeper(&s->wq))
		mod_timer(t, jiffies + msecs_to_jiffies(ms));
}

/**
 * memmon_session_wait_prepare() - a reader is about to wait on @s->wq
 * @s: the session
 *
 * Arms the tick of prompt delivery unless it is due sooner already
 * (timer_reduce() never postpones it), so that a record below the
 * watermark reaches the waiter within wakeup_ms.
 *
 * Context: process context, after the caller is on @s->wq (poll_wait(),
 * prepare_to_wait()), so that the tick's wq_has_sleeper() sees it.
 */
void memmon_session_wait_prepare(struct memmon_session *s)
{
	unsigned int ms = READ_ONCE(wakeup_ms);

	if (ms)
		timer_reduce(&s->flush_timer, jiffies + msecs_to_jiffies(ms));
}

/**
 * memmon_session_poll_readable() - poll()'s EPOLLIN condition
 * @s: the session
 *
 * Context: process context; the caller registered on @s->wq first ([E]).
 * Return: true when a ring holds at least wakeup_bytes, or holds something
 * while a loss is pending, or holds anything once the tick of prompt
 * delivery found it there.
 */
bool memmon_session_poll_readable(struct memmon_session *s)
{
	struct memmon_rings *rings = memmon_session_rings_peek(s);

	if (!rings)
		return false;
	memmon_session_room_made(s);
	/* wakeup_bytes is fixed once the rings exist. */
	if (memmon_rings_readable(rings, s->wakeup_bytes))
		return true;
	if (!memmon_rings_readable(rings, 1)) {
		/* Drained: the next record waits for the next tick. */
		WRITE_ONCE(s->flush_due, false);
		return false;
	}
	return READ_ONCE(s->flush_due);
}

/*
 * Copy whole records of one ring to @buf, at most @room bytes. Returns the
 * bytes copied, or -EFAULT; *@blocked is set when the next record did not
 * fit. read_lock held.
 */
static ssize_t memmon_read_ring(struct memmon_ring *r, char __user *buf,
				size_t room, bool *blocked)
{
	const struct memmon_rec_header *rec;
	struct memmon_ring_cursor c;
	size_t len = 0;
	u32 size;

	memmon_ring_cursor_begin(&c, r);
	while (memmon_ring_cursor_next(&c, &rec, &size)) {
		if (size > room - len) {
			*blocked = true;
			break;
		}
		len += size;
		memmon_ring_cursor_advance(&c, size);
	}
	/*
	 * [start, cons) is at most ring_size bytes from a position inside the
	 * first copy of the data, so it is contiguous in the double mapping.
	 * A fault leaves the ring as it was: nothing is consumed.
	 */
	if (len && copy_to_user(buf, r->data + (c.start & (r->size - 1)), len))
		return -EFAULT;
	memmon_ring_cursor_end(&c);
	return len;
}

/* One pass over every ring. read_lock held. */
static ssize_t memmon_read_rings(struct memmon_session *s,
				 struct memmon_rings *rings,
				 char __user *buf, size_t count)
{
	unsigned int i, cpu, nr = nr_cpu_ids;
	bool blocked = false;
	size_t copied = 0;
	ssize_t n;

	for (i = 0; i < nr; i++) {
		cpu = (s->read_cpu + i) % nr;
		if (!cpu_possible(cpu))
			continue;
		n = memmon_read_ring(&per_cpu_ptr(rings->cpu, cpu)->ring,
				     buf + copied, count - copied, &blocked);
		if (n < 0)
			return copied ? copied : n;
		copied += n;
		if (blocked) {
			/* Start with this ring's record next time. */
			s->read_cpu = cpu;
			return copied ? copied : -EINVAL;
		}
	}
	s->read_cpu = (s->read_cpu + 1) % nr;
	return copied;
}

/**
 * memmon_session_read() - read(): copy whole records to userspace
 * @s: the session
 * @buf: the user buffer
 * @count: its size
 * @nonblock: O_NONBLOCK
 *
 * Rings are visited round robin, each call starting one CPU further, and
 * each ring is drained as far as the buffer allows: records of one CPU keep
 * their order, records of different CPUs are not merged by time (sort on
 * time_ns if needed). Blocks, interruptibly, until a record is produced
 * after a read that found nothing (consumer positions rewritten through a
 * shared mapping do not end the wait); the wakeups are poll()'s, so a
 * sleeper wakes at the watermark or on a loss.
 *
 * Context: process context, may sleep.
 * Return: bytes copied (whole records); 0 for @count 0; -EINVAL if the
 * next record is larger than @count; -EAGAIN if empty and @nonblock;
 * -ERESTARTSYS on a signal; -EFAULT; or a ring allocation error.
 */
ssize_t memmon_session_read(struct memmon_session *s, char __user *buf,
			    size_t count, bool nonblock)
{
	struct memmon_rings *rings;
	ssize_t ret;

	if (!count)
		return 0;
	rings = memmon_session_rings(s);
	if (IS_ERR(rings))
		return PTR_ERR(rings);
	/*
	 * Stable once the rings exist. The flight recorder is read through
	 * the mapping, copy-then-check (uapi): no in-kernel cursor for it.
	 */
	if (s->overwrite)
		return -EOPNOTSUPP;
	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	for (;;) {
		/*
		 * What was produced before the rings are read: the wait below
		 * ends only when something more is, never because a consumer
		 * position moved (memmon_rings_produced()).
		 */
		u64 seen = memmon_rings_produced(rings);

		ret = memmon_read_rings(s, rings, buf, count);
		memmon_session_room_made(s);
		if (ret)
			break;
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		/*
		 * [E]: prepare_to_wait() registers before the condition reads;
		 * the tick is armed once we are on the queue.
		 */
		if (wait_event_interruptible(s->wq,
					     (memmon_session_wait_prepare(s),
					      memmon_rings_produced(rings) != seen))) {
			ret = -ERESTARTSYS;
			break;
		}
	}
	mutex_unlock(&s->read_lock);
	return ret;
}

/*
 * One pass over every ring for memmon_session_visit(): each CPU's records in
 * order, until @fn refuses one. read_lock held. Returns the records taken.
 */
static ssize_t memmon_visit_rings(struct memmon_rings *rings,
				  memmon_visit_t fn, void *ctx)
{
	const struct memmon_rec_header *rec;
	struct memmon_ring_cursor c;
	unsigned int cpu;
	ssize_t n = 0;
	u32 size;

	for_each_possible_cpu(cpu) {
		memmon_ring_cursor_begin(&c, &per_cpu_ptr(rings->cpu, cpu)->ring);
		while (memmon_ring_cursor_next(&c, &rec, &size)) {
			if (!fn(ctx, rec, size))
				break;
			n++;
			memmon_ring_cursor_advance(&c, size);
		}
		memmon_ring_cursor_end(&c);
		if (c.st == MEMMON_PEEK_RECORD)
			break;	/* @fn took no more */
	}
	return n;
}

/**
 * memmon_session_visit() - consume records through a function, in the kernel
 * @s: the session
 * @fn: takes one record (@rec, @size bytes, validated) and returns true,
 *	or returns false to leave it, and every later one, in the rings
 * @ctx: for @fn
 * @nonblock: do not wait for a record
 * @cancel: a wait ends when *@cancel becomes true (after a wake_up_all()
 *	of the session's readers, memmon_session_wake_readers())
 *
 * What read() is to a process, for an in-kernel reader (/proc/memmon): the
 * rings are visited in CPU order, each as far as @fn takes records. Waits,
 * interruptibly, while no ring holds a record. @fn runs under the session's
 * read_lock and must not sleep on it or on the rings.
 *
 * Context: process context, may sleep.
 * Return: records taken (> 0); 0 if cancelled, or if @fn took none of the
 * records there; -EAGAIN if empty and @nonblock; -ERESTARTSYS on a signal;
 * or a ring allocation error.
 */
ssize_t memmon_session_visit(struct memmon_session *s, memmon_visit_t fn,
			     void *ctx, bool nonblock, const bool *cancel)
{
	struct memmon_rings *rings;
	ssize_t ret;

	rings = memmon_session_rings(s);
	if (IS_ERR(rings))
		return PTR_ERR(rings);
	if (s->overwrite)
		return -EOPNOTSUPP;
	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	for (;;) {
		ret = memmon_visit_rings(rings, fn, ctx);
		memmon_session_room_made(s);
		if (ret || memmon_rings_readable(rings, 1))
			break;
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		/*
		 * [E]: wait_event registers before it tests the rings; the
		 * tick of prompt delivery is armed once we are on the queue.
		 */
		if (wait_event_interruptible(s->wq,
					     (memmon_session_wait_prepare(s),
					      memmon_rings_readable(rings, 1)) ||
					     READ_ONCE(*cancel))) {
			ret = -ERESTARTSYS;
			break;
		}
		if (READ_ONCE(*cancel))
			break;	/* 0 */
	}
	mutex_unlock(&s->read_lock);
	return ret;
}

/**
 * memmon_session_wake_readers() - wake every reader waiting on a session
 * @s: the session
 *
 * For an in-kernel reader's @cancel (memmon_session_visit()): set it, then
 * call this. Context: any.
 */
void memmon_session_wake_readers(struct memmon_session *s)
{
	wake_up_all(&s->wq);
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
