/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The merge's per-record operations (see merge.c and internal.h), inline:
 * the trace reader and the merged ring consumer take them once per
 * record, where the calls cost more than a match.
 */
#ifndef MEMMON_LIBMEMMON_MERGE_H
#define MEMMON_LIBMEMMON_MERGE_H

#include "internal.h"

#define LIBMM_MERGE_EMPTY	(~0U)	/* src of an empty leaf */

/*
 * Leaf a before leaf b: time, then source, which is the leaf's index. An
 * empty leaf has the largest time and, on a tie (only a record stamped
 * with the largest time can tie with it), goes after the record.
 */
static inline bool libmm_merge_before(const struct libmm_merge *m, unsigned int a,
				   unsigned int b)
{
	__u64 ta = m->time[a], tb = m->time[b];

	if (ta != tb)
		return ta < tb;
	if (ta == ~0ULL) {
		bool ea = m->leaf[a].src == LIBMM_MERGE_EMPTY;
		bool eb = m->leaf[b].src == LIBMM_MERGE_EMPTY;

		if (ea != eb)
			return eb;
	}
	return a < b;
}

static inline const struct libmm_merge_node *libmm_merge_top(struct libmm_merge *m)
{
	const struct libmm_merge_node *t;

	if (!m->built)
		libmm_merge_build(m);
	t = &m->leaf[m->loser[0]];
	return t->src == LIBMM_MERGE_EMPTY ? NULL : t;
}

/*
 * The winner's leaf changed: replay its path. Two ways, by the tree's
 * depth:
 * - one match (k <= 2): a branch. Predicted, it lets the CPU go on to the
 *   next record before this one's time has loaded; what it costs when the
 *   CPUs' records interleave at random is one mispredict a record.
 * - deeper trees: masks. The sources' times interleave at random, so a
 *   branch on each of log2(k) matches would mispredict about half the
 *   time; the masks swap winner and loser without one (only a tie, rare,
 *   takes before()'s rules on a branch), at the price of waiting for the
 *   times before the next record.
 * Measured: `hostbench drain -m merged` (two CPUs) 82 M records/s with the
 * branch, 57 with masks; memmon report's reading thread (eight CPUs)
 * 1.06 s with branches, 0.81 with masks, on a 1 GiB trace.
 */
static inline void libmm_merge_replay(struct libmm_merge *m)
{
	unsigned int w = m->loser[0], i, t, x;
	__u64 tw, tt, sw;

	if (m->k <= 2) {
		for (i = (w + m->k) >> 1; i >= 1; i >>= 1) {
			t = m->loser[i];
			if (libmm_merge_before(m, t, w)) {
				m->loser[i] = w;
				w = t;
			}
		}
		m->loser[0] = w;
		return;
	}
	tw = m->time[w];
	for (i = (w + m->k) >> 1; i >= 1; i >>= 1) {
		t = m->loser[i];
		tt = m->time[t];
		/* sw: all ones when t wins the match (and w stays there) */
		if (__builtin_expect(tt == tw, 0))
			sw = -(__u64)libmm_merge_before(m, t, w);
		else
			sw = -(__u64)(tt < tw);
		x = (w ^ t) & (unsigned int)sw;
		m->loser[i] = t ^ x;
		w ^= x;
		tw ^= (tw ^ tt) & sw;
	}
	m->loser[0] = w;
}

/* The top's source is done. */
static inline void libmm_merge_pop(struct libmm_merge *m)
{
	struct libmm_merge_node *t;

	if (!m->built)
		libmm_merge_build(m);
	t = &m->leaf[m->loser[0]];
	t->src = LIBMM_MERGE_EMPTY;
	m->time[m->loser[0]] = ~0ULL;
	libmm_merge_replay(m);
}

/* The top's source has a next head, n (n->src is the top's source). */
static inline void libmm_merge_replace_top(struct libmm_merge *m,
					const struct libmm_merge_node *n)
{
	if (!m->built)
		libmm_merge_build(m);
	m->leaf[m->loser[0]] = *n;
	m->time[m->loser[0]] = n->time;
	libmm_merge_replay(m);
}

#endif
