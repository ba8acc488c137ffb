// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the watched-process table.
 *
 * "Which sessions watch this task?" is asked by every hook, for every event
 * of every task on the system, so the answer must be O(1), lock-free and
 * write no shared cache line: an RCU hash of entries keyed by the struct pid
 * of the thread-group leader (task_tgid()), each holding the u64 mask of the
 * sessions that watch the process.
 *
 * Why struct pid * and not the pid number: we hold a reference on the struct
 * pid, so it cannot be freed and reused while the entry exists; a process that
 * dies and whose number is recycled gets a different struct pid, which never
 * matches. The key survives exec by a non-leader thread too (de_thread()
 * moves the leader's task onto the same TGID struct pid).
 *
 *   memmon_watch_hash[hash_ptr(pid)] -> entry -> entry -> ...
 *                                       | pid       (reference held)
 *                                       | sessions  bit n: session n watches
 *                                       | follow    bit n: ... and its children
 *
 * Entries leave the table when the process exits (memmon_watch_exit(), from
 * the exit hook), when the last session watching them drops them, and
 * lazily (memmon_watch_prune()) when their process died while no hook was
 * attached. An unlinked entry is freed, and its pid reference dropped, only
 * after a grace period: a lookup still walking it compares against a pid its
 * caller holds, and that pid could otherwise be a reuse of ours.
 */
#include "main.h"
#include "emit.h"
#include "watch.h"
#include "reserve.h"

#include <linux/hash.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

/*
 * 4096 buckets (32 KiB): a chain stays short up to a few thousand watched
 * processes in total; beyond, lookups slow down gently (no resizing in the
 * hot path).
 */
#define MEMMON_WATCH_HASH_BITS	12
/* Hard ceiling of max_watch: a list of this many entries is 8 MiB. */
#define MEMMON_WATCH_MAX_LIMIT	(1024U * 1024)

static unsigned int max_watch = 4096;
module_param(max_watch, uint, 0444);
MODULE_PARM_DESC(max_watch,
		 "Processes one session may watch, followed children included (default 4096, 1..1048576)");

/**
 * struct memmon_watched - one watched process
 * @node: in memmon_watch_hash[]
 * @pid: the thread-group leader's struct pid; a reference is held
 * @sessions: bit n set: session n watches the process
 * @follow: bit n set: session n also watches its future children
 * @rcu: deferred free
 *
 * Synchronisation:
 *
 *   field     written under        read by                   how
 *   --------  -------------------  ------------------------  -------------
 *   node      memmon_watch_lock    lookups (RCU)             hlist *_rcu
 *   pid       set before insert    lookups, lock holders     immutable
 *   sessions  memmon_watch_lock    memmon_sessions_watching() (RCU)   WRITE/READ_ONCE
 *   follow    memmon_watch_lock    lock holders; RCU hint    WRITE/READ_ONCE
 *
 * Freed through call_rcu() after unlinking, never in place.
 */
struct memmon_watched {
	struct hlist_node node;
	struct pid *pid;
	u64 sessions;
	u64 follow;
	struct rcu_head rcu;
};

/*
 * Entries for memmon_watch_fork(), which runs with preemption disabled
 * (reserve.h). A burst of followed forks larger than HIGH before the
 * refill runs is counted in memmon_watch_fork_dropped, on PREEMPT_RT only.
 */
#define MEMMON_WATCH_RESERVE_LOW	64
#define MEMMON_WATCH_RESERVE_HIGH	256
static struct memmon_reserve memmon_watch_reserve;

/*
 * memmon_watch_lock serialises every change of the table and of
 * memmon_watch_count[]. Raw: the fork and exit hooks take it from tracepoint
 * probes, with preemption disabled. Never taken from interrupts.
 */
static DEFINE_RAW_SPINLOCK(memmon_watch_lock);
static struct hlist_head memmon_watch_hash[1 << MEMMON_WATCH_HASH_BITS];
/* Entries with bit n in ->sessions; memmon_watch_lock. */
static u32 memmon_watch_count[MEMMON_MAX_SESSIONS];
/* Children a following session did not get: no memory, or max_watch. */
static atomic_long_t memmon_watch_fork_dropped = ATOMIC_LONG_INIT(0);

/*
 * The table's generation: bumped by every change of it (lock held, release
 * after the change), read with acquire by memmon_watch_cache_hit() (emit.h)
 * and by memmon_sessions_watching_lookup() before it looks anything up.
 */
unsigned long memmon_watch_gen;
DEFINE_PER_CPU(struct memmon_watch_cache, memmon_watch_cache);
DEFINE_PER_CPU(pid_t, memmon_watch_unwatched);

/*
 * Every CPU's unwatched process (emit.h) is to be cleared before the lock is
 * released: memmon_watch_changed() bumped the generation. Lock held.
 */
static bool memmon_watch_unwatched_stale;

/* Lock held; after the change. */
static void memmon_watch_changed(void)
{
	/* Orders the change before the new generation: pairs with the
	 * smp_load_acquire() in memmon_watch_cache_hit() and
	 * memmon_sessions_watching_lookup(). The unwatched-process copies are
	 * cleared by memmon_watch_unlock().
	 */
	smp_store_release(&memmon_watch_gen, memmon_watch_gen + 1);
	memmon_watch_unwatched_stale = true;
}

/*
 * Release memmon_watch_lock, first clearing every CPU's unwatched process if
 * the table changed: once per locked section, not per change (closing a
 * session that follows children may drop thousands of entries at once),
 * a store per possible CPU.
 */
static void memmon_watch_unlock(void)
	__releases(&memmon_watch_lock)
{
	int cpu;

	if (memmon_watch_unwatched_stale) {
		memmon_watch_unwatched_stale = false;
		/* Every new generation of this section before the clears:
		 * pairs with the smp_mb() in memmon_sessions_watching_lookup()
		 * between its set and its second read of the generation
		 * (emit.h, memmon_watch_unwatched). A refresher that read a
		 * generation older than this section's first bump either
		 * sees a newer one then, or is cleared here.
		 */
		smp_mb();
		for_each_possible_cpu(cpu)
			WRITE_ONCE(per_cpu(memmon_watch_unwatched, cpu), 0);
	}
	raw_spin_unlock(&memmon_watch_lock);
}

static struct hlist_head *memmon_watch_bucket(const struct pid *pid)
{
	return &memmon_watch_hash[hash_ptr(pid, MEMMON_WATCH_HASH_BITS)];
}

/* Lock held. */
static struct memmon_watched *__memmon_watch_find(const struct pid *pid)
{
	struct memmon_watched *e;

	hlist_for_each_entry(e, memmon_watch_bucket(pid), node)
		if (e->pid == pid)
			return e;
	return NULL;
}

/* Lockless; the caller is in an RCU read-side critical section. */
static struct memmon_watched *memmon_watch_find_rcu(const struct pid *pid)
{
	struct memmon_watched *e;

	hlist_for_each_entry_rcu(e, memmon_watch_bucket(pid), node)
		if (e->pid == pid)
			return e;
	return NULL;
}

static void memmon_watched_free_rcu(struct rcu_head *head)
{
	struct memmon_watched *e = container_of(head, struct memmon_watched, rcu);

	put_pid(e->pid);
	kfree(e);
}

/* Lock held. Drops @bits from @e, and @e itself once no session is left. */
static void __memmon_watch_clear(struct memmon_watched *e, u64 bits)
{
	u64 m = e->sessions & bits;

	while (m) {
		memmon_watch_count[__ffs64(m)]--;
		m &= m - 1;
	}
	WRITE_ONCE(e->follow, e->follow & ~bits);
	WRITE_ONCE(e->sessions, e->sessions & ~bits);
	if (!e->sessions)
		hlist_del_rcu(&e->node);
	/* Before the pid can be put, let alone reused. */
	memmon_watch_changed();
	if (!e->sessions)
		call_rcu(&e->rcu, memmon_watched_free_rcu);
}

/*
 * Has every thread of the process of @pid finished do_exit()'s hooks, so
 * that nothing more can be recorded about it?
 *
 * Not "signal->live == 0": the last thread drops live early in do_exit(),
 * then tears its mm down (faults, RSS changes) and only then reaches the
 * exit tracepoint, whose EXIT record needs the entry. What is final is
 * exit_notify(), after the tracepoint: it sets exit_state, and a thread
 * other than the leader is unlinked from the group soon after (release).
 * So the process is done once its leader (pid_task(TGID)) is gone, or has
 * an exit_state and no other thread left. A zombie stays watched until then
 * only if another thread still runs.
 */
static bool memmon_pid_dead(struct pid *pid)
{
	struct task_struct *t;
	bool dead;

	rcu_read_lock();
	t = pid_task(pid, PIDTYPE_TGID);
	dead = !t || (READ_ONCE(t->exit_state) && thread_group_empty(t));
	rcu_read_unlock();
	return dead;
}

/*
 * Lock held. Drop the entries of processes that died while no exit hook was
 * attached (no session enabled). O(table), for the ioctl paths only.
 */
static void __memmon_watch_prune(void)
{
	struct memmon_watched *e;
	struct hlist_node *tmp;
	unsigned int b;

	for (b = 0; b < ARRAY_SIZE(memmon_watch_hash); b++)
		hlist_for_each_entry_safe(e, tmp, &memmon_watch_hash[b], node)
			if (memmon_pid_dead(e->pid))
				__memmon_watch_clear(e, U64_MAX);
}

/**
 * memmon_watch_max() - the per-session limit (module parameter max_watch)
 *
 * Context: any.
 * Return: the most processes one session may watch.
 */
unsigned int memmon_watch_max(void)
{
	return max_watch;
}

/**
 * memmon_watch_add() - watch a process for a session
 * @id: the session
 * @task: the process's thread-group leader; the caller holds a reference and
 *	has checked the caller's right to watch it
 * @follow: also watch its future children (MEMMON_WATCH_FOLLOW_CHILDREN)
 *
 * Context: process context, may sleep (allocates with GFP_KERNEL).
 * Return: 0; -ESRCH if the process is exiting; -EEXIST if the session
 * watches it already; -ENOSPC if the session watches max_watch processes;
 * -ENOMEM.
 */
int memmon_watch_add(unsigned int id, struct task_struct *task, bool follow)
{
	struct pid *pid = task_tgid(task);
	struct memmon_watched *e, *new;
	u64 bit = BIT_ULL(id);
	int err = 0;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return -ENOMEM;

	raw_spin_lock(&memmon_watch_lock);
	/*
	 * Under the lock, against memmon_watch_exit(): do_exit() drops
	 * signal->live before the exit hook runs, and the hook takes this
	 * lock. Either we see live == 0 here, or the hook comes after us and
	 * removes what we add. No stale entry either way.
	 */
	if (!atomic_read(&task->signal->live)) {
		err = -ESRCH;
		goto out_unlock;
	}
	e = __memmon_watch_find(pid);
	if (e && (e->sessions & bit)) {
		err = -EEXIST;
		goto out_unlock;
	}
	if (memmon_watch_count[id] >= max_watch) {
		__memmon_watch_prune();
		/* @e is alive (its process is @task): the prune kept it. */
		if (memmon_watch_count[id] >= max_watch) {
			err = -ENOSPC;
			goto out_unlock;
		}
	}
	if (!e) {
		e = new;
		new = NULL;
		e->pid = get_pid(pid);
		e->sessions = bit;
		e->follow = follow ? bit : 0;
		/* Publishes the initialised entry (release). */
		hlist_add_head_rcu(&e->node, memmon_watch_bucket(pid));
	} else {
		WRITE_ONCE(e->follow, follow ? e->follow | bit : e->follow & ~bit);
		WRITE_ONCE(e->sessions, e->sessions | bit);
	}
	memmon_watch_changed();
	memmon_watch_count[id]++;
out_unlock:
	memmon_watch_unlock();
	kfree(new);
	return err;
}

/**
 * memmon_watch_del() - stop watching a process for a session
 * @id: the session
 * @pid: the process's struct pid (thread-group leader)
 *
 * Context: process context (takes a raw spinlock; does not sleep).
 * Return: 0, or -ENOENT if the session does not watch it.
 */
int memmon_watch_del(unsigned int id, struct pid *pid)
{
	struct memmon_watched *e;
	int err = 0;

	raw_spin_lock(&memmon_watch_lock);
	e = __memmon_watch_find(pid);
	if (e && (e->sessions & BIT_ULL(id)))
		__memmon_watch_clear(e, BIT_ULL(id));
	else
		err = -ENOENT;
	memmon_watch_unlock();
	return err;
}

/**
 * memmon_watch_revoke() - stop the watches a process's new rights forbid
 * @task: a task of the process (current, in the exec guard)
 * @keep: sessions that may go on watching it
 *
 * Context: any context but interrupts; takes the table's raw lock.
 * Return: the sessions that watched the process and no longer do.
 */
u64 memmon_watch_revoke(struct task_struct *task, u64 keep)
{
	struct memmon_watched *e;
	struct pid *pid = task_tgid(task);
	u64 drop = 0;

	if (!pid)
		return 0;
	raw_spin_lock(&memmon_watch_lock);
	e = __memmon_watch_find(pid);
	if (e) {
		drop = e->sessions & ~keep;
		if (drop)
			__memmon_watch_clear(e, drop);
	}
	memmon_watch_unlock();
	return drop;
}

/**
 * memmon_watch_list() - the processes a session watches
 * @id: the session
 * @ns: the PID namespace to report numbers in (the session opener's); a
 *	process not visible there is reported as pid 0
 * @out: room for @cap entries (kernel memory)
 * @cap: capacity of @out
 *
 * Drops the entries of dead processes first, so the list holds live ones.
 *
 * Context: process context (takes a raw spinlock; does not sleep).
 * Return: the number of processes watched; the first min(that, @cap) are
 * in @out.
 */
u32 memmon_watch_list(unsigned int id, struct pid_namespace *ns,
		      struct memmon_watch_entry *out, u32 cap)
{
	const struct memmon_watched *e;
	u64 bit = BIT_ULL(id);
	unsigned int b;
	u32 n = 0;

	raw_spin_lock(&memmon_watch_lock);
	__memmon_watch_prune();
	for (b = 0; b < ARRAY_SIZE(memmon_watch_hash); b++) {
		hlist_for_each_entry(e, &memmon_watch_hash[b], node) {
			if (!(e->sessions & bit))
				continue;
			if (n < cap) {
				out[n].pid = pid_nr_ns(e->pid, ns);
				out[n].flags = e->follow & bit ?
					       MEMMON_WATCH_FOLLOW_CHILDREN : 0;
			}
			n++;
		}
	}
	memmon_watch_unlock();
	return n;
}

/**
 * memmon_watch_each() - call @fn for each process session @id watches
 * @id: the session
 * @fn: called with the process's thread-group leader, inside the walk's
 *	RCU read side (it may take task_lock(): RCU readers may block on
 *	that sleeping lock on PREEMPT_RT, and it does not sleep elsewhere)
 * @arg: for @fn
 *
 * A process added or removed during the walk may or may not be seen.
 * Context: process context.
 */
void memmon_watch_each(unsigned int id,
		       void (*fn)(struct task_struct *task, void *arg),
		       void *arg)
{
	struct memmon_watched *e;
	struct task_struct *task;
	u64 bit = BIT_ULL(id);
	unsigned int b;

	rcu_read_lock();
	for (b = 0; b < ARRAY_SIZE(memmon_watch_hash); b++) {
		hlist_for_each_entry_rcu(e, &memmon_watch_hash[b], node) {
			if (!(READ_ONCE(e->sessions) & bit))
				continue;
			task = pid_task(e->pid, PIDTYPE_TGID);
			if (task)
				fn(task, arg);
		}
	}
	rcu_read_unlock();
}

/**
 * memmon_watch_remove_session() - forget everything a session watches
 * @id: the session, being torn down
 *
 * After this returns no entry has bit @id, and memmon_watch_fork() can no
 * longer add one (it re-reads the parent's masks under the lock). Lookups
 * that read the old mask may still be running: the caller waits for a grace
 * period before reusing @id.
 *
 * Context: process context (takes a raw spinlock; does not sleep).
 */
void memmon_watch_remove_session(unsigned int id)
{
	struct memmon_watched *e;
	struct hlist_node *tmp;
	unsigned int b;

	raw_spin_lock(&memmon_watch_lock);
	for (b = 0; b < ARRAY_SIZE(memmon_watch_hash); b++)
		hlist_for_each_entry_safe(e, tmp, &memmon_watch_hash[b], node)
			if (e->sessions & BIT_ULL(id))
				__memmon_watch_clear(e, BIT_ULL(id));
	memmon_watch_count[id] = 0;
	memmon_watch_unlock();
}

/* memmon_sessions_watching() of the process whose thread-group pid is @pid. */
static u64 memmon_sessions_watching_pid(const struct pid *pid)
{
	struct memmon_watched *e;
	u64 mask = 0;

	if (!pid)
		return 0;
	rcu_read_lock();
	e = memmon_watch_find_rcu(pid);
	if (e)
		mask = READ_ONCE(e->sessions);
	rcu_read_unlock();
	return mask;
}

/**
 * memmon_sessions_watching() - the sessions that watch a task's process
 * @task: the task (usually current); the caller keeps it alive
 *
 * One RCU hash lookup; reads only, so an unwatched task costs no write to a
 * shared cache line. The mask is a snapshot: it is meaningful only inside the
 * caller's own RCU read-side critical section (preemption disabled counts),
 * which must last until memmon_emit() is done with it. Session ids are
 * reused only after a grace period, so within that section a bit never
 * names a different session.
 *
 * Context: any context the hooks run in: task, softirq, IRQ, NMI,
 * preemption disabled or not (takes rcu_read_lock() itself; never a lock).
 * Return: mask of session ids (bit n: session n), 0 if none.
 */
u64 memmon_sessions_watching(struct task_struct *task)
{
	/* NULL once the leader is unhashed (release_task()). */
	return memmon_sessions_watching_pid(READ_ONCE(task->signal->pids[PIDTYPE_TGID]));
}

/**
 * memmon_sessions_watching_lookup() - look a task's process up, and cache it
 * @task: the task (current)
 *
 * The generation is read (acquire) before the lookup: a change during the
 * lookup bumps it past what is stored here, so the next call looks up
 * again. An unwatched process also becomes this CPU's unwatched one (emit.h,
 * memmon_watch_unwatched), unless the generation moved meanwhile.
 *
 * Context: as memmon_watch_cache_hit() (emit.h).
 * Return: the mask of sessions watching @task's process.
 */
u64 memmon_sessions_watching_lookup(struct task_struct *task)
{
	struct memmon_watch_cache *v = this_cpu_ptr(&memmon_watch_cache);
	/* Pairs with memmon_watch_changed(). */
	unsigned long gen = smp_load_acquire(&memmon_watch_gen);
	const struct pid *pid = READ_ONCE(task->signal->pids[PIDTYPE_TGID]);
	u64 mask = memmon_sessions_watching_pid(pid);

	v->pid = pid;
	v->gen = gen;
	v->mask = mask;
	/* pid is NULL only at the very end of the process's exit, when its
	 * tgid may be another's already: never unwatched for that.
	 */
	if (!mask && pid) {
		/* Unwatched, unless the table changed meanwhile: see emit.h. */
		this_cpu_write(memmon_watch_unwatched, task->tgid);
		smp_mb();	/* pairs with memmon_watch_unlock() */
		if (READ_ONCE(memmon_watch_gen) != gen)
			this_cpu_write(memmon_watch_unwatched, 0);
	}
	return mask;
}

/**
 * memmon_watch_fork() - follow a new child
 * @parent: the task that called fork/clone (current)
 * @child: the new task, not yet running
 * @clone_flags: its clone flags
 *
 * If @child is a new process (not CLONE_THREAD) and some sessions watch
 * @parent's process with MEMMON_WATCH_FOLLOW_CHILDREN, those sessions watch
 * the child too, following its children in turn. A session already at
 * max_watch, or an allocation failure, leaves the child unwatched for that
 * session (counted in memmon_watch_fork_dropped).
 *
 * Context: the sched_process_fork tracepoint: process context, preemption
 * disabled, so the entry is allocated without sleeping, and on PREEMPT_RT
 * without the allocator at all (memmon_reserve_alloc()). GFP_NOWAIT, not
 * GFP_ATOMIC: a fork-heavy
 * watched workload (anyone's, with require_cap=0) must not drain the
 * reserves that interrupt handlers rely on; failing is cheap here (the child
 * is not followed, and counted). Charged to the forking task's memory
 * cgroup, as WATCH_ADD's entries are to the caller's. Before @child first
 * runs, so nothing it does escapes.
 */
void memmon_watch_fork(struct task_struct *parent, struct task_struct *child,
		       unsigned long clone_flags)
{
	struct memmon_watched *e, *ce, *new;
	struct pid *ppid, *cpid;
	u64 follow, add, m;

	if (clone_flags & CLONE_THREAD)
		return;

	/* Unlocked first: nearly every fork is of an unfollowed process. */
	rcu_read_lock();
	ppid = task_tgid(parent);
	e = memmon_watch_find_rcu(ppid);
	follow = e ? READ_ONCE(e->follow) & READ_ONCE(e->sessions) : 0;
	rcu_read_unlock();
	if (!follow)
		return;

	cpid = task_tgid(child);
	new = memmon_reserve_alloc(&memmon_watch_reserve,
				   GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);

	raw_spin_lock(&memmon_watch_lock);
	/* Again, authoritatively: a session may have gone meanwhile. */
	e = __memmon_watch_find(ppid);
	follow = e ? e->follow & e->sessions : 0;
	ce = __memmon_watch_find(cpid);
	add = follow & ~(ce ? ce->sessions : 0);
	for (m = add; m; m &= m - 1) {
		if (memmon_watch_count[__ffs64(m)] >= max_watch) {
			add &= ~BIT_ULL(__ffs64(m));
			atomic_long_inc(&memmon_watch_fork_dropped);
		}
	}
	if (!add)
		goto out_unlock;
	if (!ce) {
		if (!new) {
			atomic_long_add(hweight64(add), &memmon_watch_fork_dropped);
			goto out_unlock;
		}
		ce = new;
		new = NULL;
		ce->pid = get_pid(cpid);
		ce->sessions = add;
		ce->follow = add;
		hlist_add_head_rcu(&ce->node, memmon_watch_bucket(cpid));
	} else {
		WRITE_ONCE(ce->follow, ce->follow | add);
		WRITE_ONCE(ce->sessions, ce->sessions | add);
	}
	memmon_watch_changed();
	for (m = add; m; m &= m - 1)
		memmon_watch_count[__ffs64(m)]++;
out_unlock:
	memmon_watch_unlock();
	memmon_reserve_free(&memmon_watch_reserve, new);
}

/*
 * Whether @task, at its exit tracepoint with signal->live at 0, is the last
 * thread of its group to get there: every other thread that is still
 * linked has exit_state set, which exit_notify() does after the tracepoint.
 * Two threads at the tracepoint at once may each see the other without
 * exit_state: neither is "last" then, and the entry stays until a prune
 * (memmon_pid_dead() is exact) - never removed early, at worst late.
 */
static bool memmon_exit_is_last(struct task_struct *task)
{
	struct task_struct *t;
	bool last = true;

	rcu_read_lock();
	for_each_thread(task, t) {
		if (t != task && !READ_ONCE(t->exit_state)) {
			last = false;
			break;
		}
	}
	rcu_read_unlock();
	return last;
}

/**
 * memmon_watch_exit() - a thread of a watched process is gone
 * @task: an exiting task (current)
 *
 * Removes @task's process from every session once no thread of it can
 * still reach the exit hook. Call it from the exit hook of every thread,
 * after its last record. The thread that took signal->live to 0 (do_exit()'s
 * group_dead) is not always the last one through the hook: a thread that
 * dropped live earlier (say, one pthread_join() already returned for, at
 * exit_mm()) can get there after it, and must still find the entry to
 * have its EXIT record. So: live must be 0 and every other thread past
 * exit_notify() (memmon_exit_is_last()).
 *
 * Context: the sched_process_exit tracepoint: process context, preemption
 * disabled; after do_exit() decremented signal->live (memmon_watch_add()
 * relies on that order).
 */
void memmon_watch_exit(struct task_struct *task)
{
	struct memmon_watched *e;
	struct pid *pid;

	if (atomic_read(&task->signal->live))
		return;
	pid = task_tgid(task);
	if (!pid)
		return;
	rcu_read_lock();
	e = memmon_watch_find_rcu(pid);
	rcu_read_unlock();
	if (!e || !memmon_exit_is_last(task))
		return;

	raw_spin_lock(&memmon_watch_lock);
	e = __memmon_watch_find(pid);
	if (e)
		__memmon_watch_clear(e, U64_MAX);
	memmon_watch_unlock();
}

/**
 * memmon_watch_init() - validate max_watch, fill the fork reserve
 *
 * Context: module init, process context.
 * Return: 0, -EINVAL for an out-of-range max_watch, or -ENOMEM.
 */
int memmon_watch_init(void)
{
	if (!max_watch || max_watch > MEMMON_WATCH_MAX_LIMIT) {
		pr_err("max_watch=%u is outside 1..%u\n", max_watch,
		       MEMMON_WATCH_MAX_LIMIT);
		return -EINVAL;
	}
	return memmon_reserve_init(&memmon_watch_reserve,
				   sizeof(struct memmon_watched),
				   MEMMON_WATCH_RESERVE_LOW,
				   MEMMON_WATCH_RESERVE_HIGH);
}

/**
 * memmon_watch_cleanup() - empty the table for module unload
 *
 * Every session is gone (each open file pins the module), so the table is
 * normally empty already. Waits for the RCU callbacks that free entries:
 * they run module code.
 *
 * Context: module exit, process context, may sleep.
 */
void memmon_watch_cleanup(void)
{
	struct memmon_watched *e;
	struct hlist_node *tmp;
	unsigned int b;

	raw_spin_lock(&memmon_watch_lock);
	for (b = 0; b < ARRAY_SIZE(memmon_watch_hash); b++)
		hlist_for_each_entry_safe(e, tmp, &memmon_watch_hash[b], node)
			__memmon_watch_clear(e, U64_MAX);
	memmon_watch_unlock();
	rcu_barrier();
	if (atomic_long_read(&memmon_watch_fork_dropped))
		pr_info("%ld children were not followed (no memory or max_watch)\n",
			atomic_long_read(&memmon_watch_fork_dropped));
	memmon_reserve_destroy(&memmon_watch_reserve);
}
