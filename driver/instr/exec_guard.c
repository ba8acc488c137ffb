// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the exec guard. A watch is checked once, at WATCH_ADD, against
 * ptrace's rule (session.c); this takes it away again when the process
 * gains rights that rule would refuse, as perf does at exec and as ptrace
 * refuses to grant them (docs/security.md):
 *
 *   setup_new_exec(bprm)   entered with the new image's credentials
 *                          committed and exec_update_lock still held for
 *                          writing (fs/exec.c, 6.1 and 6.12): a privileged
 *                          image (bprm->secureexec: setuid, setgid, file
 *                          capabilities, an LSM transition; or an mm that
 *                          is not SUID_DUMP_USER) ends the watch of every
 *                          session whose opener lacked CAP_SYS_PTRACE.
 *                          WATCH_ADD holds the same lock for reading over
 *                          its check and insert, so a watch added around an
 *                          exec is checked against the creds before it or
 *                          after it, never in between.
 *   set_dumpable(mm, v)    v != SUID_DUMP_USER on current's mm: a setuid()
 *                          family call or prctl(PR_SET_DUMPABLE, 0), the
 *                          rule ptrace applies to later attaches. Entered
 *                          before the store, so a WATCH_ADD racing it can
 *                          still win the check: ptrace's own attach has the
 *                          same window, and an attach is not undone either.
 *
 * The sessions that lose the watch get an EXIT record with
 * MEMMON_EXITF_GROUP | MEMMON_EXITF_REVOKED, from the process itself before
 * it runs a single instruction of the new image; nothing of it follows.
 *
 * Both kprobes are attached while any session exists (a watch set outlives
 * DISABLE, and an exec while nothing records must still end the watch):
 * memmon_exec_guard_get()/put() from session creation and teardown, counted
 * under memmon_guard_lock. A kprobe costs each exec and each setuid() on
 * the system ~0.1 us while memmon is in use, nothing otherwise.
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
