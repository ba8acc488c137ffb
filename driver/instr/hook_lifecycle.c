// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: process lifecycle (MEMMON_REC_FORK, _EXEC, _EXIT, _COMM) and the
 * watch table's fork/exit callbacks.
 *
 * Tracepoints, found by name and attached with tracepoint_probe_register():
 *
 *   sched_process_fork(parent, child)  in kernel_clone(), after
 *       copy_process() and before wake_up_new_task(): the child has not
 *       run, so memmon_watch_fork() here watches it from its first
 *       instruction.
 *   sched_process_exec(p, old_pid, bprm)  after a successful exec.
 *   sched_process_exit(p)  in do_exit(), after exit_mm().
 *   task_rename(task, comm)  in __set_task_comm(), task_lock(task) held
 *       (a spinlock_t: a sleeping lock on PREEMPT_RT, so nothing here may
 *       sleep or allocate), before task->comm changes. A rename with
 *       current->in_execve set is left to the exec probe.
 *
 * A kprobe on taskstats_exit(), just before exit_mm(), notes group_dead and
 * the mm's peaks for the exit tracepoint: faults taken in exit_mm() still
 * precede the EXIT record.
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "hooks.h"
#include "reserve.h"
#include "task_auxv.h"

#include <linux/binfmts.h>
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

/*
 * Exit notes: taskstats_exit() -> sched_process_exit, same task.
 *
 * Synchronisation: memmon_exit_notes and memmon_exit_nr under
 * memmon_exit_lock (process context only: both probes run in do_exit(),
 * with preemption disabled, hence a raw lock for PREEMPT_RT);
 * memmon_exit_overflow is atomic. Notes come from memmon_exit_reserve
 * (reserve.h) and go back to it from their taker, or are freed by
 * memmon_life_detach() once neither probe can run.
 */

#define MEMMON_EXIT_BITS	6

struct memmon_exit_note {
	struct hlist_node node;
	struct task_struct *task;	/* compared only, never dereferenced */
	u64 peak_rss;			/* bytes */
	u64 peak_vm;			/* bytes */
};

static DEFINE_HASHTABLE(memmon_exit_notes, MEMMON_EXIT_BITS);
static DEFINE_RAW_SPINLOCK(memmon_exit_lock);
static struct memmon_reserve memmon_exit_reserve;
static unsigned int memmon_exit_nr;
/* Notes that could not be allocated: fall back to reading signal->live. */
static atomic_t memmon_exit_overflow = ATOMIC_INIT(0);

/*
 * taskstats_exit(tsk, group_dead), entry. tsk is current, still with its
 * mm and its final exit_code.
 * Context: kprobe handler, preemption disabled, task context in do_exit().
 */
static int memmon_taskstats_exit_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct task_struct *tsk = (struct task_struct *)regs->di;
	int group_dead = (int)regs->si;
	struct memmon_exit_note *n;
	struct mm_struct *mm;

	if (!group_dead || !static_branch_unlikely(&memmon_active) ||
	    !memmon_sessions_watching(tsk))
		return 0;

	n = memmon_reserve_alloc(&memmon_exit_reserve,
				 GFP_ATOMIC | __GFP_NOWARN);
	if (!n) {
		atomic_inc(&memmon_exit_overflow);
		return 0;
	}
	n->task = tsk;
	mm = tsk->mm;
	n->peak_rss = mm ? (u64)get_mm_hiwater_rss(mm) << PAGE_SHIFT : 0;
	n->peak_vm = mm ? (u64)get_mm_hiwater_vm(mm) << PAGE_SHIFT : 0;
	raw_spin_lock(&memmon_exit_lock);
	hash_add(memmon_exit_notes, &n->node, (unsigned long)tsk);
	memmon_exit_nr++;
	raw_spin_unlock(&memmon_exit_lock);
	return 0;
}

/* Take @tsk's note: true (and the peaks) if @tsk is its group's last. */
static bool memmon_exit_note_take(struct task_struct *tsk, u64 *peak_rss,
				  u64 *peak_vm)
{
	struct memmon_exit_note *n, *found = NULL;

	if (!READ_ONCE(memmon_exit_nr))
		return false;
	raw_spin_lock(&memmon_exit_lock);
	hash_for_each_possible(memmon_exit_notes, n, node, (unsigned long)tsk) {
		if (n->task == tsk) {
			hash_del(&n->node);
			memmon_exit_nr--;
			found = n;
			break;
		}
	}
	raw_spin_unlock(&memmon_exit_lock);
	if (!found)
		return false;
	*peak_rss = found->peak_rss;
	*peak_vm = found->peak_vm;
	memmon_reserve_free(&memmon_exit_reserve, found);
	return true;
}

static void memmon_exit_notes_clear(void)
{
	struct memmon_exit_note *n;
	struct hlist_node *tmp;
	int bkt;

	hash_for_each_safe(memmon_exit_notes, bkt, tmp, n, node) {
		hash_del(&n->node);
		kfree(n);
	}
	memmon_exit_nr = 0;
	atomic_set(&memmon_exit_overflow, 0);
}

/*
 * The tracepoint probes. Context of all four: process context, inside the
 * tracepoint's RCU read side (preemption disabled), never interrupts.
 */

static void memmon_tp_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	unsigned long clone_flags = 0;
	u64 watchers, sessions;
	u32 flags = 0;

	if (!static_branch_unlikely(&memmon_active))
		return;
	watchers = memmon_sessions_watching(parent);
	if (likely(!watchers))
		return;

	if (same_thread_group(parent, child))
		clone_flags |= CLONE_THREAD;
	if (child->mm && child->mm == parent->mm)
		clone_flags |= CLONE_VM;
	/* Before the child can run: it is watched from its first instruction. */
	memmon_watch_fork(parent, child, clone_flags);

	sessions = memmon_sessions_wanting(watchers, MEMMON_EV_LIFECYCLE, 0);
	if (!sessions)
		return;
	if (clone_flags & CLONE_THREAD)
		flags |= MEMMON_FORKF_THREAD;
	if (clone_flags & CLONE_VM)
		flags |= MEMMON_FORKF_VM;
	/* The child's ids as each session sees them. */
	memmon_emit_fork(sessions, parent, child, flags, memmon_now());
}

/* A COMM record of @task named @comm (truncated as __set_task_comm() does). */
static void memmon_emit_comm(u64 sessions, struct task_struct *task,
			     const char *comm, u32 why)
{
	struct memmon_rec_comm rec;

	memset(&rec, 0, sizeof(rec));
	rec.why = why;
	strscpy_pad(rec.comm, comm, sizeof(rec.comm));
	memmon_emit(sessions, task, MEMMON_REC_COMM, &rec, sizeof(rec),
		    NULL, 0, memmon_now());
}

static void memmon_tp_exec(void *data, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	struct memmon_rec_exec rec;
	const char *path;
	u64 sessions;
	char *buf;

	sessions = memmon_sessions_for(p, MEMMON_EV_LIFECYCLE, 0);
	if (!sessions)
		return;

	buf = memmon_pathbuf_get();
	path = buf ? d_path(&bprm->file->f_path, buf, PATH_MAX) :
		     ERR_PTR(-EBUSY);
	if (IS_ERR(path))
		path = bprm->filename;	/* as passed to execve() */

	memset(&rec, 0, sizeof(rec));
	rec.path_len = strlen(path);
	memmon_emit(sessions, p, MEMMON_REC_EXEC, &rec, sizeof(rec), path,
		    rec.path_len + 1, memmon_now());
	if (buf)
		memmon_pathbuf_put();
	/*
	 * p is current; its name was set in begin_new_exec(). Read without
	 * task_lock() (preemption is off, and it sleeps on RT): a rename
	 * racing from another thread writes its own record after this one.
	 */
	memmon_emit_comm(sessions, p, p->comm, MEMMON_COMM_EXEC);
	/* Where the new image was placed (p is current: its mm is stable). */
	if (p->mm) {
		struct memmon_rec_auxv av;

		memmon_auxv_fill(p->mm, &av);
		memmon_emit(sessions, p, MEMMON_REC_AUXV, &av, sizeof(av),
			    NULL, 0, memmon_now());
	}
}

static void memmon_tp_rename(void *data, struct task_struct *task,
			     const char *comm)
{
	u64 sessions;

	/* exec's own rename: the exec probe records it (above). */
	if (task == current && current->in_execve)
		return;
	sessions = memmon_sessions_for(task, MEMMON_EV_LIFECYCLE, 0);
	if (!sessions)
		return;
	memmon_emit_comm(sessions, task, comm, MEMMON_COMM_RENAME);
}

/* The wait status the parent will read (wait_task_zombie()'s rule). */
static u32 memmon_exit_status(struct task_struct *p)
{
	if (p->signal->flags & SIGNAL_GROUP_EXIT)
		return p->signal->group_exit_code;
	return p->exit_code;
}

static void memmon_tp_exit(void *data, struct task_struct *p)
{
	struct memmon_rec_exit rec;
	u64 watchers, sessions;
	u64 peak_rss = 0, peak_vm = 0;
	bool group;

	if (!static_branch_unlikely(&memmon_active))
		return;
	/* Before the watch test: a note whose process stopped being watched
	 * in between must not stay behind.
	 */
	group = memmon_exit_note_take(p, &peak_rss, &peak_vm);
	if (!group && unlikely(atomic_read(&memmon_exit_overflow)))
		group = !atomic_read(&p->signal->live);
	watchers = memmon_sessions_watching(p);
	if (likely(!watchers))
		return;

	sessions = memmon_sessions_wanting(watchers, MEMMON_EV_LIFECYCLE, 0);
	if (sessions) {
		memset(&rec, 0, sizeof(rec));
		rec.code = memmon_exit_status(p);
		if (group) {
			rec.flags = MEMMON_EXITF_GROUP;
			rec.peak_rss = peak_rss;
			rec.peak_vm = peak_vm;
		}
		memmon_emit(sessions, p, MEMMON_REC_EXIT, &rec,
			    sizeof(rec), NULL, 0, memmon_now());
	}
	/* Every thread: the group-dead one need not be the last through. */
	memmon_watch_exit(p);
}

/*
 * Attach / detach.
 */

struct memmon_life_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static struct memmon_life_tp memmon_life_tps[] = {
	{ "sched_process_fork", memmon_tp_fork },
	{ "sched_process_exec", memmon_tp_exec },
	{ "sched_process_exit", memmon_tp_exit },
	{ "task_rename", memmon_tp_rename },
};

static struct kprobe memmon_taskstats_kp;

static void memmon_life_unregister_tps(unsigned int n)
{
	while (n--)
		WARN_ON_ONCE(tracepoint_probe_unregister(memmon_life_tps[n].tp,
							 memmon_life_tps[n].probe,
							 NULL));
}

/**
 * memmon_life_attach() - attach the lifecycle tracepoints and kprobe.
 *
 * The kprobe goes first: an exit tracepoint without the notes would not
 * see group exits.
 *
 * Context: process context, may sleep; serialised by memmon_hooks_attach().
 * Return: 0, or a negative errno with nothing attached.
 */
static int memmon_life_attach(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(memmon_life_tps); i++) {
		memmon_life_tps[i].tp = memmon_find_tracepoint(memmon_life_tps[i].name);
		if (!memmon_life_tps[i].tp) {
			pr_err("no tracepoint %s in this kernel\n",
			       memmon_life_tps[i].name);
			return -ENOENT;
		}
	}

	err = memmon_reserve_init(&memmon_exit_reserve,
				  sizeof(struct memmon_exit_note), 16, 64);
	if (err)
		return err;

	memset(&memmon_taskstats_kp, 0, sizeof(memmon_taskstats_kp));
	memmon_taskstats_kp.symbol_name = "taskstats_exit";
	memmon_taskstats_kp.pre_handler = memmon_taskstats_exit_pre;
	err = register_kprobe(&memmon_taskstats_kp);
	if (err) {
		pr_err("cannot hook taskstats_exit: %d\n", err);
		memmon_reserve_destroy(&memmon_exit_reserve);
		return err;
	}

	for (i = 0; i < ARRAY_SIZE(memmon_life_tps); i++) {
		err = tracepoint_probe_register(memmon_life_tps[i].tp,
						memmon_life_tps[i].probe, NULL);
		if (err) {
			pr_err("cannot attach to %s: %d\n",
			       memmon_life_tps[i].name, err);
			goto err_unregister;
		}
	}
	return 0;

err_unregister:
	memmon_life_unregister_tps(i);
	tracepoint_synchronize_unregister();
	unregister_kprobe(&memmon_taskstats_kp);
	memmon_exit_notes_clear();
	memmon_reserve_destroy(&memmon_exit_reserve);
	return err;
}

/**
 * memmon_life_detach() - detach the lifecycle probes.
 *
 * Context: process context, may sleep; serialised by memmon_hooks_detach().
 */
static void memmon_life_detach(void)
{
	memmon_life_unregister_tps(ARRAY_SIZE(memmon_life_tps));
	tracepoint_synchronize_unregister();
	unregister_kprobe(&memmon_taskstats_kp);
	memmon_exit_notes_clear();
	memmon_reserve_destroy(&memmon_exit_reserve);
}

const struct memmon_hook_group memmon_hooks_lifecycle = {
	.name		= "lifecycle",
	.attach		= memmon_life_attach,
	.detach		= memmon_life_detach,
};
