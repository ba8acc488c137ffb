// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The k-way merge under the live rings and trace files: a tournament tree
 * of losers (Knuth, TAOCP vol. 3, 5.4.1). Leaves are the sources' heads,
 * by source number; each internal node keeps the loser of the match played
 * there and loser[0] the overall winner. When the winner's source moves to
 * its next record (or runs out), only the matches on that leaf's path to
 * the root are replayed: log2(k) comparisons and no moves of nodes, where a
 * binary heap pays about twice the comparisons plus the copies. A source
 * that is empty holds a sentinel that loses to every record.
 *
 * k is the number of CPUs (at most 65536, checked by the callers), so
 * the tree is three small arrays.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define MM_MERGE_EMPTY	(~0U)	/* src of an empty leaf */

/*
 * Leaf a before leaf b: time, then source, which is the leaf's index. An
 * empty leaf has the largest time and, on a tie (only a record stamped
 * with the largest time can tie with it), goes after the record.
 */
static inline bool before(const struct mm_merge *m, unsigned int a,
			  unsigned int b)
{
	__u64 ta = m->time[a], tb = m->time[b];

	if (ta != tb)
		return ta < tb;
	if (ta == ~0ULL) {
		bool ea = m->leaf[a].src == MM_MERGE_EMPTY;
		bool eb = m->leaf[b].src == MM_MERGE_EMPTY;

		if (ea != eb)
			return eb;
	}
	return a < b;
}

int mm_merge_init(struct mm_merge *m, unsigned int cap)
{
	unsigned int k = 1;

	memset(m, 0, sizeof(*m));
	while (k < cap)
		k <<= 1;
	m->leaf = calloc(k, sizeof(*m->leaf));
	m->time = calloc(k, sizeof(*m->time));
	m->loser = calloc(k, sizeof(*m->loser));
	m->scratch = calloc(2 * (size_t)k, sizeof(*m->scratch));
	if (!m->leaf || !m->time || !m->loser || !m->scratch) {
		mm_merge_fini(m);
		return -ENOMEM;
	}
	m->k = k;
	mm_merge_reset(m);
	return 0;
}

void mm_merge_fini(struct mm_merge *m)
{
	free(m->leaf);
	free(m->time);
	free(m->loser);
	free(m->scratch);
	memset(m, 0, sizeof(*m));
}

/* Every source empty. */
void mm_merge_reset(struct mm_merge *m)
{
	unsigned int i;

	for (i = 0; i < m->k; i++) {
		m->leaf[i].src = MM_MERGE_EMPTY;
		m->time[i] = ~0ULL;
	}
	m->built = false;
}

/* Set the head of source n->src (< cap); the tree is rebuilt at top(). */
void mm_merge_push(struct mm_merge *m, const struct mm_merge_node *n)
{
	m->leaf[n->src] = *n;
	m->time[n->src] = n->time;
	m->built = false;
}

/* Play every match bottom-up: O(k), once per round of pushes. */
static void build(struct mm_merge *m)
{
	unsigned int *win = m->scratch, i, a, b;

	for (i = 0; i < m->k; i++)
		win[m->k + i] = i;
	for (i = m->k - 1; i >= 1; i--) {
		a = win[2 * i];
		b = win[2 * i + 1];
		if (before(m, b, a)) {
			win[i] = b;
			m->loser[i] = a;
		} else {
			win[i] = a;
			m->loser[i] = b;
		}
	}
	m->loser[0] = m->k > 1 ? win[1] : 0;
	m->built = true;
}

const struct mm_merge_node *mm_merge_top(struct mm_merge *m)
{
	const struct mm_merge_node *t;

	if (!m->built)
		build(m);
	t = &m->leaf[m->loser[0]];
	return t->src == MM_MERGE_EMPTY ? NULL : t;
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
static void replay(struct mm_merge *m)
{
	unsigned int w = m->loser[0], i, t, x;
	__u64 tw, tt, sw;

	if (m->k <= 2) {
		for (i = (w + m->k) >> 1; i >= 1; i >>= 1) {
			t = m->loser[i];
			if (before(m, t, w)) {
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
			sw = -(__u64)before(m, t, w);
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
void mm_merge_pop(struct mm_merge *m)
{
	struct mm_merge_node *t;

	if (!m->built)
		build(m);
	t = &m->leaf[m->loser[0]];
	t->src = MM_MERGE_EMPTY;
	m->time[m->loser[0]] = ~0ULL;
	replay(m);
}

/* The top's source has a next head, n (n->src is the top's source). */
void mm_merge_replace_top(struct mm_merge *m, const struct mm_merge_node *n)
{
	if (!m->built)
		build(m);
	m->leaf[m->loser[0]] = *n;
	m->time[m->loser[0]] = n->time;
	replay(m);
}
