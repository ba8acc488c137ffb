// SPDX-License-Identifier: GPL-2.0
/*
 * The live-process table: which of the watched processes (and, with -f,
 * their descendants) are still alive, so that trace/record know when to
 * stop. memmon record updates it from one reader thread per CPU at once,
 * hence an RCU lock-free hash table (liburcu rculfhash) rather than a
 * locked one: the readers never wait on each other.
 *
 * Synchronisation:
 *   ht       entries are added (cds_lfht_add_unique) under rcu_read_lock
 *            and never removed until proctab_free(), when no thread uses
 *            the table any more: so no grace period is ever needed.
 *   dead     0 -> 1 (exit) and 1 -> 0 (PID reused by a later fork) by
 *            cmpxchg; whoever wins adjusts live.
 *   death_ns written before dead becomes 1; read after seeing dead == 1.
 *   live     uatomic counter of entries with dead == 0.
 *
 * Records of one process arrive on several CPUs, and per-CPU readers do
 * not see them in global order: a child's EXIT may be seen before the
 * FORK that created it. The EXIT then leaves a dead entry (tombstone)
 * with its time, and the older FORK does not revive it.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <urcu.h>
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>
#include "builtin.h"

struct proc {
	struct cds_lfht_node node;
	pid_t pid;
	int dead;
	__u64 death_ns;
};

struct proctab {
	struct cds_lfht *ht;
	bool follow;
	long live;
};

static unsigned long pid_hash(pid_t pid)
{
	return (unsigned long)(__u32)pid * 0x9e3779b97f4a7c15UL;
}

static int pid_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct proc, node)->pid == *(const pid_t *)key;
}

void proctab_thread_online(void)
{
	rcu_register_thread();
}

void proctab_thread_offline(void)
{
	rcu_unregister_thread();
}

struct proctab *proctab_new(bool follow)
{
	struct proctab *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->follow = follow;
	pt->ht = cds_lfht_new(64, 64, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
			      NULL);
	if (!pt->ht) {
		free(pt);
		return NULL;
	}
	return pt;
}

void proctab_free(struct proctab *pt)
{
	struct cds_lfht_iter it;
	struct proc *p;

	if (!pt)
		return;
	/* No other thread uses the table now: free without a grace period. */
	rcu_read_lock();
	cds_lfht_for_each_entry(pt->ht, &it, p, node) {
		cds_lfht_del(pt->ht, &p->node);
		free(p);
	}
	rcu_read_unlock();
	cds_lfht_destroy(pt->ht, NULL);
	free(pt);
}

/* The entry of pid, inserted (with dead as given) if absent. */
static struct proc *get_or_add(struct proctab *pt, pid_t pid, int dead,
			       __u64 death_ns, bool *added)
{
	struct cds_lfht_node *n;
	struct proc *p = calloc(1, sizeof(*p));

	*added = false;
	if (!p)
		return NULL;
	p->pid = pid;
	p->dead = dead;
	p->death_ns = death_ns;
	cds_lfht_node_init(&p->node);
	rcu_read_lock();
	n = cds_lfht_add_unique(pt->ht, pid_hash(pid), pid_match, &pid, &p->node);
	rcu_read_unlock();
	if (n != &p->node) {
		free(p);
		return caa_container_of(n, struct proc, node);
	}
	*added = true;
	if (!dead)
		uatomic_inc(&pt->live);
	return p;
}

static void mark_dead(struct proctab *pt, pid_t pid, __u64 time)
{
	bool added;
	struct proc *p = get_or_add(pt, pid, 1, time, &added);

	if (!p || added)
		return;
	p->death_ns = time;
	cmm_smp_wmb();
	if (uatomic_cmpxchg(&p->dead, 0, 1) == 0)
		uatomic_dec(&pt->live);
}

static void fork_child(struct proctab *pt, pid_t pid, __u64 time)
{
	bool added;
	struct proc *p = get_or_add(pt, pid, 0, 0, &added);

	if (!p || added)
		return;
	/* A dead entry is revived only by a fork after its death: the PID
	 * was reused. A fork older than the death is the late-seen FORK of
	 * a child whose EXIT we already processed.
	 */
	if (uatomic_read(&p->dead)) {
		cmm_smp_rmb();
		if (time > p->death_ns && uatomic_cmpxchg(&p->dead, 1, 0) == 1)
			uatomic_inc(&pt->live);
	}
}

void proctab_add(struct proctab *pt, pid_t pid)
{
	fork_child(pt, pid, ~0ULL);
}

void proctab_exited(struct proctab *pt, pid_t pid)
{
	mark_dead(pt, pid, ~0ULL - 1);
}

static bool is_watched(struct proctab *pt, pid_t pid)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	bool ret;

	rcu_read_lock();
	cds_lfht_lookup(pt->ht, pid_hash(pid), pid_match, &pid, &it);
	n = cds_lfht_iter_get_node(&it);
	ret = n != NULL;
	rcu_read_unlock();
	return ret;
}

void proctab_on_record(struct proctab *pt, const struct memmon_rec_header *rec)
{
	if (rec->type == MEMMON_REC_EXIT) {
		const struct memmon_rec_exit *x = memmon_rec__exit(rec);

		if (x && x->flags & MEMMON_EXITF_GROUP && rec->tgid)
			mark_dead(pt, (pid_t)rec->tgid, rec->time_ns);
	} else if (rec->type == MEMMON_REC_FORK && pt->follow) {
		const struct memmon_rec_fork *f = memmon_rec__fork(rec);

		/* The kernel only reports watched parents; a new process
		 * (not a thread) of one is watched from now on.
		 */
		if (f && !(f->flags & MEMMON_FORKF_THREAD) && f->child_tgid &&
		    is_watched(pt, (pid_t)rec->tgid))
			fork_child(pt, (pid_t)f->child_tgid, rec->time_ns);
	}
}

long proctab_live(struct proctab *pt)
{
	return uatomic_read(&pt->live);
}

void proctab_reap_gone(struct proctab *pt, pid_t except)
{
	struct cds_lfht_iter it;
	struct proc *p;

	rcu_read_lock();
	cds_lfht_for_each_entry(pt->ht, &it, p, node) {
		if (uatomic_read(&p->dead) || p->pid == except)
			continue;
		if (kill(p->pid, 0) < 0 && errno == ESRCH &&
		    uatomic_cmpxchg(&p->dead, 0, 1) == 0)
			uatomic_dec(&pt->live);
	}
	rcu_read_unlock();
}
