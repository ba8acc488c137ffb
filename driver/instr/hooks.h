/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: what the instrumentation files (hooks.c, hook_*.c, procfs.c)
 * share. Not seen by the transport side, which knows only emit.h.
 *
 * Hook groups. Each group attaches all of its probes or none, and detaches
 * them so that no handler of the group runs, or will run, once detach
 * returns (kprobes and kretprobes: unregister_k*probes() waits for an RCU
 * grace period; tracepoints: tracepoint_synchronize_unregister()). Tasks
 * still inside a kretprobed function then return through the kernel's own
 * kretprobe trampoline, which finds the handler gone and touches nothing
 * of ours: see hook_syscalls.c for why that makes rmmod safe. Tasks still
 * inside handle_mm_fault() under fault_tramp.c's trampoline return through
 * module text: until the last has, the module holds itself (fault_tramp.c).
 *
 *   group       probes                                       file
 *   ---------   -------------------------------------------  ----------------
 *   syscalls    kretprobes on __x64_sys_* and __ia32_sys_*   hook_syscalls.c
 *   faults      direct-call trampoline (or a kretprobe) on   hook_faults.c,
 *               handle_mm_fault, kprobes on the x86          fault_tramp.c
 *               bad-area paths
 *   lifecycle   tracepoints sched_process_fork/exec/exit,    hook_lifecycle.c
 *               kprobe on taskstats_exit
 *   rss         tracepoint rss_stat, a per-CPU flush timer   hook_rss.c
 */
#ifndef MEMMON_DRIVER_INSTR_HOOKS_H
#define MEMMON_DRIVER_INSTR_HOOKS_H

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/limits.h>
#include <linux/preempt.h>
#include <linux/stddef.h>
#include <linux/seq_file.h>
#include <linux/tracepoint.h>

#include "clock.h"
#include "emit.h"

/**
 * memmon_sessions_for() - the sessions that want event @ev of @task.
 * @task: the task the event belongs to (usually current).
 * @ev:   enum memmon_event.
 * @sys:  enum memmon_sys for MEMMON_EV_SYSCALL, else 0.
 *
 * The three filters of emit.h, cheapest first: the static key, the watch
 * table, the sessions' event masks. Inlined into every hook so that an
 * unwatched task costs a patched-out branch and one RCU hash lookup.
 *
 * Context: any context emit.h allows (preemption disabled in all our
 * callers).
 * Return: a mask of session ids, 0 for "nobody".
 */
static __always_inline u64 memmon_sessions_for(struct task_struct *task,
					       enum memmon_event ev,
					       unsigned int sys)
{
	u64 sessions;

	if (!static_branch_unlikely(&memmon_active))
		return 0;
	sessions = memmon_sessions_watching(task);
	if (likely(!sessions))
		return 0;
	return memmon_sessions_wanting(sessions, ev, sys);
}

/*
 * memmon_sessions_for_current() - memmon_sessions_for() for current, from
 * a kretprobe's return handler: this CPU's cached answer (emit.h) serves when
 * it is current's process's in this generation of the watch table, as it
 * nearly always is for a watched task (its entry was filtered moments ago, on
 * this CPU unless it migrated); otherwise one lookup, kept as the cached
 * answer. An unchanged generation means an unchanged table: every change of
 * it bumps the generation (watch.c), including a closed session's bits
 * leaving every entry, which happens before a grace period that the session's
 * id waits for before reuse; the caller's section (preemption disabled) holds
 * that grace period off until it has emitted. Also the entry and return
 * halves of fault_tramp.c's trampoline (hook_faults.c), where nothing
 * filtered the call before.
 * Context: the rethook trampoline handler, or the trampoline's halves:
 * task context, preemption disabled, nested in no filter callback on this
 * CPU (emit.h's rule for the cached answer).
 */
static __always_inline u64 memmon_sessions_for_current(enum memmon_event ev,
						       unsigned int sys)
{
	u64 sessions;

	if (!static_branch_unlikely(&memmon_active))
		return 0;
	sessions = memmon_sessions_watching_cached(current);
	if (likely(!sessions))
		return 0;
	return memmon_sessions_wanting(sessions, ev, sys);
}

/* hooks.c: helpers shared by the groups. */
struct tracepoint *memmon_find_tracepoint(const char *name);
int memmon_pathbuf_alloc(void);
void memmon_pathbuf_free(void);
char *memmon_pathbuf_get(void);
void memmon_pathbuf_put(void);

/**
 * struct memmon_gate - keeps unwatched tasks out of a kretprobe (hooks.c)
 * @kp:       hook_kprobes: a plain kprobe on the kretprobe's address, in
 *            front of it
 * @krp:      the kretprobe it guards, registered disabled by its group
 * @ev:       the event the kretprobe records (memmon_sessions_for())
 * @sys:      its syscall, for MEMMON_EV_SYSCALL
 * @on:       @kp registered, in front of @krp
 * @filtered: @krp stays disabled and a struct memmon_filter fires it
 * @armed:    @krp enabled (hook_kprobes, or no filter): a kprobe
 */
struct memmon_gate {
	struct kprobe kp;
	struct kretprobe *krp;
	enum memmon_event ev;
	unsigned int sys;
	bool on;
	bool filtered;
	bool armed;
};

#define MEMMON_FILTER_SLOTS 64	/* a power of two, > 2 x a group's gates */

/**
 * struct memmon_filter - memmon's own ftrace_ops on the fentry sites of a
 * group's kretprobes, which fires them for watched tasks (hooks.c)
 * @ops:  the ftrace_ops (never zeroed: ftrace keeps state in it)
 * @slot: the gates by fentry address, open addressing
 * @on:   @ops registered
 */
struct memmon_filter {
	struct ftrace_ops ops;
	struct {
		unsigned long ip;
		struct memmon_gate *gate;
	} slot[MEMMON_FILTER_SLOTS];
	bool on;
};

void memmon_gate_init(struct memmon_gate *g, struct kretprobe *krp,
		      enum memmon_event ev, unsigned int sys);
int memmon_gates_arm(struct memmon_filter *f, struct memmon_gate **g,
		     unsigned int n);
void memmon_gates_disarm(struct memmon_filter *f, struct memmon_gate **g,
			 unsigned int n);
const char *memmon_gate_mode(const struct memmon_gate *g);

/*
 * struct memmon_gate_answer - a gate's cached answer, handed to the kretprobe
 * behind it so that a watched call looks the task up once, not twice.
 *
 * Written for a watched task by the filter's callback just before it
 * calls the kretprobe's pre-handler, or by memmon_gate_pre() (hook_kprobes)
 * just before kprobe_ftrace_handler() calls it; read and cleared by the
 * kretprobe's entry handler (memmon_sessions_from_gate()), which the pre-handler
 * calls. Both on one CPU, back to back, preemption disabled; nothing in
 * between runs a hook of ours (with a kprobe gate, kprobe_running() is
 * set; our hooked functions are syscalls and handle_mm_fault()): per CPU,
 * no atomics. A pass the entry handler never takes (the gate was disarmed
 * in between, or a task other than current) is never used: the entry
 * handler takes it only for the same task, event and syscall, and else
 * looks up itself. A stale but matching pass could only make the
 * kretprobe hook one return it would not have; the return handler looks
 * up again before it records anything.
 */
struct memmon_gate_answer {
	struct task_struct *task;
	u64 sessions;
	enum memmon_event ev;
	unsigned int sys;
};

DECLARE_PER_CPU(struct memmon_gate_answer, memmon_gate_answer);

/* Calls the gates (and fault_tramp.c's trampoline) kept out, per CPU. */
DECLARE_PER_CPU(unsigned long, memmon_gate_skipped);

/* The hook_kprobes parameter (hooks.c), read at attach. */
bool memmon_hooks_use_kprobes(void);

/*
 * memmon_sessions_from_gate() - memmon_sessions_for() for a kretprobe's entry
 * handler: the gate's cached answer if it left one for this call.
 * Context: the kretprobe's entry handler (preemption disabled).
 */
static __always_inline u64 memmon_sessions_from_gate(struct task_struct *task,
						     enum memmon_event ev,
						     unsigned int sys)
{
	struct memmon_gate_answer *p = this_cpu_ptr(&memmon_gate_answer);

	if (p->task == task && p->ev == ev && p->sys == sys) {
		p->task = NULL;
		return p->sessions;
	}
	return memmon_sessions_for(task, ev, sys);
}

/**
 * struct memmon_hook_group - one group of hooks (one instr/hook_*.c file)
 * @name: for messages
 * @attach: attach every hook of the group, all or nothing: 0, or a
 *	negative errno with nothing attached
 * @detach: detach them; after it no handler of the group runs
 * @forget_session: optional; session id @id is about to be reused: forget
 *	what the group kept for the last session of that id
 * @show: optional; the group's "key value" lines for /proc/memmon/stats
 * @exit: optional; module exit, after the last @detach
 *
 * hooks.c calls them in the order of its table, with memmon_hooks_lock
 * held (process context, may sleep), except @forget_session (the
 * session's lock; the group's own locking) and @exit (module exit).
 */
struct memmon_hook_group {
	const char *name;
	int (*attach)(void);
	void (*detach)(void);
	void (*forget_session)(unsigned int id);
	void (*show)(struct seq_file *m);
	void (*exit)(void);
};

extern const struct memmon_hook_group memmon_hooks_lifecycle;
extern const struct memmon_hook_group memmon_hooks_syscalls;
extern const struct memmon_hook_group memmon_hooks_faults;
extern const struct memmon_hook_group memmon_hooks_rss;

#endif /* MEMMON_DRIVER_INSTR_HOOKS_H */
