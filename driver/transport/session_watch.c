// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: MEMMON_IOC_WATCH_ADD and _DEL: who may watch what (ptrace's read
 * rule, docs/security.md), and the names and auxiliary vector a session
 * learns of a process when it starts watching it.
 */
#include "main.h"
#include "emit.h"
#include "session.h"
#include "emit_inline.h"
#include "task_auxv.h"
#include "watch.h"

#include <linux/capability.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>

/* ptrace_may_access() is not exported: resolved once, see memmon_may_watch(). */
typedef bool (*memmon_ptrace_may_access_t)(struct task_struct *task,
					   unsigned int mode);

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
static void memmon_session_comms(struct memmon_ksession *s,
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
	struct memmon_ksession *s = arg;

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
void memmon_session_comms_pending(struct memmon_ksession *s)
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
int memmon_session_watch(struct memmon_ksession *s, const struct memmon_watch *w,
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

