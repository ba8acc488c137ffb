/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the emit API, what the transport (transport/: the watch table,
 * the sessions and their rings) offers the instrumentation (instr/: the
 * hooks). With emit_inline.h (the same API, inline, for the fault hook) it
 * is the only transport header an instr/ file includes; instr.h is the
 * other direction. The include graph is in docs/design.md.
 *
 * A hook does, in this order, stopping at the first "no":
 *   1. static_branch_unlikely(&memmon_active)      - any session enabled?
 *   2. memmon_sessions_watching(task)              - which sessions watch it?
 *   3. memmon_sessions_wanting(sessions, ev, sys)  - which of them want this?
 *   4. build the record on the stack, memmon_emit(...)
 * (memmon_sessions_for() in hooks.h does 1-3; memmon_sessions_for_current()
 * and memmon_sessions_from_gate() take this CPU's cached answer.)
 * so an unwatched task costs a static branch and one RCU hash lookup, and
 * writes no shared cache line.
 */
#ifndef MEMMON_DRIVER_EMIT_H
#define MEMMON_DRIVER_EMIT_H

#include <linux/jump_label.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/memmon.h>

#define MEMMON_MAX_SESSIONS	64	/* sessions are bits of a u64 */

/* True while at least one session is enabled (session.c flips it). */
DECLARE_STATIC_KEY_FALSE(memmon_active);

/* watch.c */
u64 memmon_sessions_watching(struct task_struct *task);

/*
 * Each CPU's cached answer: memmon_sessions_watching(), remembered per CPU.
 *
 * The filters (hooks.c) ask on every hooked call of every task, and an
 * unwatched process asks the same question again and again. Each CPU keeps
 * its last answer: the process (the struct pid of its thread group) and
 * the table's generation when it was looked up. Every change of the table
 * bumps memmon_watch_gen (watch.c, under its lock, with release after the
 * change); an answer taken in another generation is looked up again.
 * Keyed by struct pid: every thread of a process has the same answer; a
 * struct pid can be freed and reused only after it left the table, i.e.
 * in a later generation (the table holds a reference, and a removal bumps
 * the generation before the pid is put), and a reused one that becomes
 * watched does so by a change of the table.
 *
 * Context: task context, preemption disabled, not nested on this CPU
 * (only the filters' callbacks and the kretprobes' return handlers use it,
 * hooks.h; neither runs inside the other, nor does anything they call).
 */
struct memmon_watch_cache {
	const struct pid *pid;
	unsigned long gen;
	u64 mask;
};

DECLARE_PER_CPU(struct memmon_watch_cache, memmon_watch_cache);
extern unsigned long memmon_watch_gen;

/*
 * memmon_watch_cache_hit() - this CPU's cached answer on @task, if it has one:
 * true, with the mask in *@mask, when the cached answer is @task's process's in
 * this generation; false (nothing stored) otherwise, and the caller asks
 * memmon_sessions_watching_lookup().
 */
static __always_inline bool memmon_watch_cache_hit(struct task_struct *task,
						   u64 *mask)
{
	struct memmon_watch_cache *v = this_cpu_ptr(&memmon_watch_cache);
	/* Pairs with memmon_watch_changed(): a new generation, a new table. */
	unsigned long gen = smp_load_acquire(&memmon_watch_gen);

	if (v->gen != gen ||
	    v->pid != READ_ONCE(task->signal->pids[PIDTYPE_TGID]))
		return false;
	*mask = v->mask;
	return true;
}

/* Look @task's process up, and keep the answer as this CPU's cached answer. */
u64 memmon_sessions_watching_lookup(struct task_struct *task);

/*
 * memmon_sessions_watching() of @task by way of this CPU's cached answer:
 * that answer if it is @task's, else a lookup that becomes the answer.
 * Context: as memmon_watch_cache_hit().
 */
static __always_inline u64 memmon_sessions_watching_cached(struct task_struct *task)
{
	u64 mask;

	if (memmon_watch_cache_hit(task, &mask))
		return mask;
	return memmon_sessions_watching_lookup(task);
}

/*
 * Each CPU's unwatched process: the tgid of the last process this CPU found
 * unwatched, 0 for none (pid 0 is the idle task, never watched and never
 * on a hooked path). The filters' common case is one compare against it,
 * made without disabling preemption: it reads this CPU's copy in one
 * instruction (a task that migrates after the read has been answered for
 * what it is: unwatched, per the CPU it read).
 *
 * Unlike the cached answer above it carries no generation: instead a locked
 * section that changed the table clears every CPU's copy before it
 * unlocks (memmon_watch_unlock(), after the section's new generations,
 * with a full barrier between), and the lookup that sets a copy reads the
 * generation again after setting it (full barrier between) and clears the
 * copy if it moved (memmon_sessions_watching_lookup()). The two barriers pair (the
 * memory model's "R" pattern): either the clear comes after the set, or
 * the set sees a new generation and clears it itself.
 *
 * Keyed by tgid, a number that is reused: a process now running under a
 * tgid this CPU once found unwatched is a later one, born after that answer
 * was taken; if it is watched, a change of the table (WATCH_ADD, or a
 * followed fork) made it so after its birth, and that change cleared the
 * answer.
 */
DECLARE_PER_CPU(pid_t, memmon_watch_unwatched);

/* Is @task's process this CPU's unwatched one? Any context; preemptible. */
static __always_inline bool memmon_watch_is_unwatched(const struct task_struct *task)
{
	return this_cpu_read(memmon_watch_unwatched) == task->tgid;
}

void memmon_watch_fork(struct task_struct *parent, struct task_struct *child,
		       unsigned long clone_flags);
void memmon_watch_exit(struct task_struct *task);

/* session.c */

/*
 * What producers read, written (WRITE_ONCE, session.c's lock) only when a
 * session is enabled, disabled or changes its events:
 *  @enabled: bit n: session n is enabled
 *  @ev[e]:   bit n: session n is enabled and records event e
 *  @sys[c]:  bit n: session n is enabled and records syscall c
 */
struct memmon_masks {
	u64 enabled;
	u64 ev[MEMMON_EV__COUNT];
	u64 sys[MEMMON_SYS__COUNT];
	u64 stack_faults;	/* sessions with MEMMON_STACK_FAULTS */
	u32 stack_depth;	/* the largest stack_depth of any of them */
};

extern struct memmon_masks memmon_masks;

/**
 * memmon_sessions_wanting() - which of some sessions record an event
 * @sessions: candidate sessions (from memmon_sessions_watching())
 * @ev: the event class
 * @sys: for MEMMON_EV_SYSCALL, the enum memmon_sys of the call; else ignored
 *
 * Inline: every watched event asks, at entry and at return.
 *
 * Context: any, including NMI; reads two words. The result is a snapshot,
 * meaningful inside the caller's RCU read-side critical section (see
 * memmon_sessions_watching()).
 * Return: the subset of @sessions that are enabled and want @ev (and @sys).
 */
static __always_inline u64 memmon_sessions_wanting(u64 sessions,
						   enum memmon_event ev,
						   unsigned int sys)
{
	if ((unsigned int)ev >= MEMMON_EV__COUNT)
		return 0;
	sessions &= READ_ONCE(memmon_masks.ev[ev]);
	if (ev == MEMMON_EV_SYSCALL)
		sessions &= sys < MEMMON_SYS__COUNT ?
			    READ_ONCE(memmon_masks.sys[sys]) : 0;
	return sessions;
}

/*
 * The policy the exec guard (instr/exec_guard.c) enforces: which sessions
 * may keep watching a process that gains rights at exec, and taking the
 * others' watch away (transport/session.c, transport/watch.c).
 */
u64 memmon_sessions_ptrace(void);
u64 memmon_watch_revoke(struct task_struct *task, u64 keep);

/*
 * A user stack as a hook hands it to memmon_emit_stacked() and
 * memmon_emit_syscall() (instr/ustack.c walks it); each session's copy is
 * cut to the depth it asked for.
 */
/* ip[0], the word at the stack pointer, then the frame-pointer walk. */
#define MEMMON_USTACK_MAX	(2 + MEMMON_STACK_DEPTH_MAX)

/*
 * A walked stack. @base entries precede the walk (ip[0] and, with
 * MEMMON_USTACK_SP, the stack pointer's word): a session asking for depth
 * d is given the first min(@nr, @base + d).
 */
struct memmon_ustack {
	u16 nr;
	u16 flags;		/* MEMMON_USTACK_* */
	u16 base;
	u64 ip[MEMMON_USTACK_MAX];
};

/* Entries of @st for a session that asked for @depth frames. */
static inline unsigned int memmon_ustack_nr(const struct memmon_ustack *st,
					    unsigned int depth)
{
	unsigned int n = st->base + depth;

	return n < st->nr ? n : st->nr;
}

/* Bytes of the struct memmon_user_stack that carries @nr entries. */
static inline u32 memmon_ustack_bytes(unsigned int nr)
{
	return sizeof(struct memmon_user_stack) + nr * sizeof(u64);
}

/*
 * Write @st's first @nr entries as a struct memmon_user_stack at @to
 * (memmon_ustack_bytes(@nr) bytes, inside a ring's reservation).
 */
static __always_inline void memmon_ustack_put(void *to,
					      const struct memmon_ustack *st,
					      unsigned int nr)
{
	struct memmon_user_stack *u = to;

	u->nr = nr;
	/* Cut inside the walk, or the walk itself stopped at its depth. */
	u->flags = st->flags & ~MEMMON_USTACK_TRUNCATED;
	if (nr > st->base &&
	    (nr < st->nr || (st->flags & MEMMON_USTACK_TRUNCATED)))
		u->flags |= MEMMON_USTACK_TRUNCATED;
	u->__reserved = 0;
	memcpy(u->ip, st->ip, nr * sizeof(u64));
}

/*
 * The emit calls (session_emit.c has their contracts). A hook builds its
 * record as the uapi struct, on its stack, and hands over the whole: the
 * transport fills the header for each session.
 *   memmon_emit()          a record, and a tail of bytes (path, payload)
 *   memmon_emit_stacked()  a record followed by a user stack, each session's
 *                          copy cut to the depth it asked for
 *   memmon_emit_syscall()  memmon_emit_stacked() of a syscall record
 *   memmon_emit_fork()     a FORK record: the child's ids differ by session
 * emit_inline.h has the loop behind them, for the fault hook.
 */
void memmon_emit(u64 sessions, struct task_struct *task, u16 type,
		 const void *rec, u32 size,
		 const void *tail, u32 tail_len, u64 time_ns);
void memmon_emit_stacked(u64 sessions, struct task_struct *task, u16 type,
			 const void *rec, u32 size, u32 flags_off, u32 flag,
			 const struct memmon_ustack *st, u64 time_ns);
void memmon_emit_syscall(u64 sessions, const struct memmon_rec_syscall *rec,
			 const struct memmon_ustack *st, u64 time_ns);
void memmon_emit_fork(u64 sessions, struct task_struct *parent,
		      struct task_struct *child, u32 flags, u64 time_ns);

#endif /* MEMMON_DRIVER_EMIT_H */
