// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: what one user may hold, perf's model (docs/security.md).
 *
 * A session belongs to the user (real uid: struct user_struct) of the task
 * that opened it, for its whole life:
 *
 *  - sessions: at most max_user_sessions per user, unless the opener had
 *    CAP_SYS_ADMIN (as inotify's max_user_instances, -EMFILE);
 *  - ring memory: a user's sessions may hold user_ring_kb per possible CPU
 *    of rings (perf_event_mlock_kb's allowance); what a new session's
 *    rings need beyond that is charged to the user's locked_vm and must fit
 *    the creating task's RLIMIT_MEMLOCK, unless it has CAP_IPC_LOCK
 *    (-EDQUOT otherwise). Ring pages are never swapped, so they are locked
 *    memory in all but name.
 *
 * memmon_limits_lock (a mutex: open(), ring creation and the last put of a
 * session are process context) protects the table of users and each
 * entry's counters; user->locked_vm is atomic and shared with the rest of
 * the kernel (io_uring, perf).
 */
#include "main.h"
#include "emit.h"
#include "user_limits.h"
#include "session.h"

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/sizes.h>
#include <linux/slab.h>

static unsigned int max_user_sessions = 16;
module_param(max_user_sessions, uint, 0444);
MODULE_PARM_DESC(max_user_sessions,
		 "Sessions one user may hold at once, mappings included (default 16, 1..64); CAP_SYS_ADMIN openers are not counted against it");

static unsigned long user_ring_kb = 4096;
module_param(user_ring_kb, ulong, 0444);
MODULE_PARM_DESC(user_ring_kb,
		 "Ring memory per possible CPU one user's sessions may hold before RLIMIT_MEMLOCK applies (default 4096 KiB, as perf_event_mlock_kb)");

/**
 * struct memmon_user_use - what one user's sessions hold
 * @node: in memmon_users, keyed by @user
 * @user: the user; a reference is held
 * @sessions: sessions of @user not yet freed
 * @ring_bytes: their rings' bytes
 */
struct memmon_user_use {
	struct hlist_node node;
	struct user_struct *user;
	unsigned int sessions;
	u64 ring_bytes;
};

static DEFINE_MUTEX(memmon_limits_lock);
static DEFINE_HASHTABLE(memmon_users, 6);

/* Lock held. */
static struct memmon_user_use *memmon_user_find(struct user_struct *user)
{
	struct memmon_user_use *u;

	hash_for_each_possible(memmon_users, u, node, (unsigned long)user)
		if (u->user == user)
			return u;
	return NULL;
}

static u64 memmon_user_budget(void)
{
	return (u64)user_ring_kb * SZ_1K * nr_cpu_ids;
}

/**
 * memmon_limits_session_open() - count a new session against its user
 * @s: the session, being created by current; sets @s->user
 *
 * Context: process context, may sleep.
 * Return: 0, -EMFILE at max_user_sessions, or -ENOMEM.
 */
int memmon_limits_session_open(struct memmon_ksession *s)
{
	struct user_struct *user = get_current_user();
	struct memmon_user_use *u, *new;
	bool exempt = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	int err = 0;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	mutex_lock(&memmon_limits_lock);
	u = memmon_user_find(user);
	if (!u) {
		if (!new) {
			err = -ENOMEM;
			goto out_unlock;
		}
		u = new;
		new = NULL;
		u->user = get_uid(user);
		hash_add(memmon_users, &u->node, (unsigned long)user);
	}
	if (!exempt && u->sessions >= max_user_sessions) {
		err = -EMFILE;
		if (!u->sessions && !u->ring_bytes) {
			hash_del(&u->node);
			free_uid(u->user);
			kfree(u);
		}
		goto out_unlock;
	}
	u->sessions++;
	s->user = user;
	user = NULL;
out_unlock:
	mutex_unlock(&memmon_limits_lock);
	kfree(new);
	if (user)
		free_uid(user);
	return err;
}

/**
 * memmon_limits_charge_rings() - charge a session's new rings to its user
 * @s: the session (its rings_lock held: the rings are about to be made)
 * @bytes: what they take
 *
 * The part within the user's allowance is only counted; the rest is
 * charged to user->locked_vm, checked against current's RLIMIT_MEMLOCK
 * unless current has CAP_IPC_LOCK. Undone by memmon_limits_session_close().
 *
 * Context: process context, may sleep.
 * Return: 0, or -EDQUOT if it does not fit.
 */
int memmon_limits_charge_rings(struct memmon_ksession *s, u64 bytes)
{
	struct memmon_user_use *u;
	u64 budget = memmon_user_budget(), within = 0;
	unsigned long pages = 0, limit, locked;
	int err = 0;

	mutex_lock(&memmon_limits_lock);
	u = memmon_user_find(s->user);
	if (WARN_ON_ONCE(!u || s->ring_bytes)) {
		err = -EINVAL;
		goto out_unlock;
	}
	if (budget > u->ring_bytes)
		within = min(bytes, budget - u->ring_bytes);
	pages = DIV_ROUND_UP(bytes - within, PAGE_SIZE);
	if (pages) {
		locked = atomic_long_add_return(pages, &s->user->locked_vm);
		limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
		if (locked > limit &&
		    !ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK)) {
			atomic_long_sub(pages, &s->user->locked_vm);
			err = -EDQUOT;
			goto out_unlock;
		}
	}
	u->ring_bytes += bytes;
	s->ring_bytes = bytes;
	s->locked_pages = pages;
out_unlock:
	mutex_unlock(&memmon_limits_lock);
	return err;
}

/**
 * memmon_limits_uncharge_rings() - undo memmon_limits_charge_rings()
 * @s: the session, whose rings could not be made after all
 *
 * Context: process context, may sleep.
 */
void memmon_limits_uncharge_rings(struct memmon_ksession *s)
{
	struct memmon_user_use *u;

	mutex_lock(&memmon_limits_lock);
	u = memmon_user_find(s->user);
	if (!WARN_ON_ONCE(!u || u->ring_bytes < s->ring_bytes))
		u->ring_bytes -= s->ring_bytes;
	if (s->locked_pages)
		atomic_long_sub(s->locked_pages, &s->user->locked_vm);
	s->ring_bytes = 0;
	s->locked_pages = 0;
	mutex_unlock(&memmon_limits_lock);
}

/**
 * memmon_limits_session_close() - give back what a freed session held
 * @s: the session, its rings freed already
 *
 * Context: process context, may sleep.
 */
void memmon_limits_session_close(struct memmon_ksession *s)
{
	struct memmon_user_use *u;

	if (!s->user)
		return;
	mutex_lock(&memmon_limits_lock);
	u = memmon_user_find(s->user);
	if (!WARN_ON_ONCE(!u || !u->sessions || u->ring_bytes < s->ring_bytes)) {
		u->sessions--;
		u->ring_bytes -= s->ring_bytes;
		if (!u->sessions) {
			hash_del(&u->node);
			free_uid(u->user);
			kfree(u);
		}
	}
	if (s->locked_pages)
		atomic_long_sub(s->locked_pages, &s->user->locked_vm);
	mutex_unlock(&memmon_limits_lock);
	free_uid(s->user);
	s->user = NULL;
}

/**
 * memmon_limits_info() - the user_* fields of MEMMON_IOC_GET_INFO
 * @s: the session; its user's figures, with current's limits
 * @info: out
 *
 * Context: process context, may sleep.
 */
void memmon_limits_info(struct memmon_ksession *s, struct memmon_info *info)
{
	u64 budget = memmon_user_budget(), avail = 0;
	unsigned long limit, locked;
	struct memmon_user_use *u;

	mutex_lock(&memmon_limits_lock);
	u = memmon_user_find(s->user);
	if (u) {
		info->user_sessions = u->sessions;
		info->user_ring_bytes = u->ring_bytes;
		if (budget > u->ring_bytes)
			avail = budget - u->ring_bytes;
	}
	mutex_unlock(&memmon_limits_lock);
	info->user_sessions_max =
		ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN) ? 0 :
		max_user_sessions;
	info->user_ring_budget = budget;
	limit = rlimit(RLIMIT_MEMLOCK);
	if (ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK) ||
	    limit == RLIM_INFINITY) {
		info->user_ring_avail = U64_MAX;
		return;
	}
	locked = atomic_long_read(&s->user->locked_vm);
	if ((limit >> PAGE_SHIFT) > locked)
		avail += (u64)((limit >> PAGE_SHIFT) - locked) << PAGE_SHIFT;
	info->user_ring_avail = avail;
}

/**
 * memmon_limits_init() - check the module parameters
 *
 * Context: module init.
 * Return: 0, or -EINVAL for a value out of range.
 */
int memmon_limits_init(void)
{
	if (!max_user_sessions || max_user_sessions > MEMMON_MAX_SESSIONS) {
		pr_err("max_user_sessions=%u is outside 1..%u\n",
		       max_user_sessions, MEMMON_MAX_SESSIONS);
		return -EINVAL;
	}
	if (user_ring_kb > SZ_1G) {
		pr_err("user_ring_kb=%lu is over %u\n", user_ring_kb, SZ_1G);
		return -EINVAL;
	}
	return 0;
}

/**
 * memmon_limits_cleanup() - module exit: every session is gone
 *
 * Context: module exit.
 */
void memmon_limits_cleanup(void)
{
	WARN_ON_ONCE(!hash_empty(memmon_users));
}
