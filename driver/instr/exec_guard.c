// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the exec guard. Ends a watch when the process gains rights that
 * ptrace's rule, checked at WATCH_ADD (session.c), would refuse.
 *
 *   setup_new_exec(bprm)   entered with the new creds committed and
 *                          exec_update_lock held for writing: a privileged
 *                          image ends the watch of every session whose
 *                          opener lacked CAP_SYS_PTRACE. WATCH_ADD holds
 *                          the same lock for reading over its check and
 *                          insert, so a watch added around an exec is
 *                          checked against the creds before it or after
 *                          it, never in between.
 *   set_dumpable(mm, v)    v != SUID_DUMP_USER on current's mm. Entered
 *                          before the store, so a WATCH_ADD racing it can
 *                          still win the check, as ptrace's attach can.
 *
 * Revoked sessions get an EXIT record (MEMMON_EXITF_REVOKED) from the
 * process before it runs its new image. Both kprobes are attached while
 * any session exists: memmon_exec_guard_get()/put() from session creation
 * and teardown, counted under memmon_guard_lock.
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "clock.h"
#include "emit.h"
#include "instr.h"

#include <linux/binfmts.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/string.h>

static DEFINE_MUTEX(memmon_guard_lock);
static unsigned int memmon_guard_users;	/* memmon_guard_lock */

/*
 * End the watches of current's process for the sessions that may not keep
 * them, and tell them so.
 * Context: a kprobe's pre-handler: task context, preemption disabled (an
 * RCU read-side critical section, which the masks and the emit need).
 */
static void memmon_guard_revoke(void)
{
	struct memmon_rec_exit rec;
	u64 drop;

	if (likely(!memmon_sessions_watching(current)))
		return;
	drop = memmon_watch_revoke(current, memmon_sessions_ptrace());
	drop = memmon_sessions_wanting(drop, MEMMON_EV_LIFECYCLE, 0);
	if (!drop)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.flags = MEMMON_EXITF_GROUP | MEMMON_EXITF_REVOKED;
	memmon_emit(drop, current, MEMMON_REC_EXIT, &rec, sizeof(rec), NULL, 0,
		    memmon_now());
}

/* setup_new_exec(bprm): compat/signatures.c checks the prototype. */
static int memmon_guard_exec_pre(struct kprobe *kp, struct pt_regs *regs)
{
	const struct linux_binprm *bprm = (const void *)regs->di;

	if (bprm->secureexec || get_dumpable(current->mm) != SUID_DUMP_USER)
		memmon_guard_revoke();
	return 0;
}

/* set_dumpable(mm, value): compat/signatures.c checks the prototype. */
static int memmon_guard_dumpable_pre(struct kprobe *kp, struct pt_regs *regs)
{
	const struct mm_struct *mm = (const void *)regs->di;
	int value = (int)regs->si;

	if (value != SUID_DUMP_USER && mm && mm == current->mm)
		memmon_guard_revoke();
	return 0;
}

static struct kprobe memmon_guard_exec_kp;
static struct kprobe memmon_guard_dumpable_kp;
static struct kprobe *memmon_guard_kps[] = {
	&memmon_guard_exec_kp,
	&memmon_guard_dumpable_kp,
};

/**
 * memmon_exec_guard_get() - attach the guard for one more session
 *
 * Context: process context, may sleep.
 * Return: 0, or the error of register_kprobes(): no session may exist
 * unguarded.
 */
int memmon_exec_guard_get(void)
{
	int err = 0;

	mutex_lock(&memmon_guard_lock);
	if (!memmon_guard_users) {
		/* A kprobe cannot be registered twice without a reset. */
		memset(&memmon_guard_exec_kp, 0, sizeof(memmon_guard_exec_kp));
		memset(&memmon_guard_dumpable_kp, 0,
		       sizeof(memmon_guard_dumpable_kp));
		memmon_guard_exec_kp.symbol_name = "setup_new_exec";
		memmon_guard_exec_kp.pre_handler = memmon_guard_exec_pre;
		memmon_guard_dumpable_kp.symbol_name = "set_dumpable";
		memmon_guard_dumpable_kp.pre_handler = memmon_guard_dumpable_pre;
		err = register_kprobes(memmon_guard_kps,
				       ARRAY_SIZE(memmon_guard_kps));
		if (err)
			pr_err("cannot attach the exec guard: %d\n", err);
	}
	if (!err)
		memmon_guard_users++;
	mutex_unlock(&memmon_guard_lock);
	return err;
}

/**
 * memmon_exec_guard_put() - one session fewer; the last detaches the guard
 *
 * Context: process context, may sleep (unregistering waits for handlers
 * in flight).
 */
void memmon_exec_guard_put(void)
{
	mutex_lock(&memmon_guard_lock);
	if (!WARN_ON_ONCE(!memmon_guard_users) && !--memmon_guard_users)
		unregister_kprobes(memmon_guard_kps,
				   ARRAY_SIZE(memmon_guard_kps));
	mutex_unlock(&memmon_guard_lock);
}
