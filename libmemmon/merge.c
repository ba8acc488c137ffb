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
#include "merge.h"

int libmm_merge_init(struct libmm_merge *m, unsigned int cap)
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
		libmm_merge_fini(m);
		return -ENOMEM;
	}
	m->k = k;
	libmm_merge_reset(m);
	return 0;
}

void libmm_merge_fini(struct libmm_merge *m)
{
	free(m->leaf);
	free(m->time);
	free(m->loser);
	free(m->scratch);
	memset(m, 0, sizeof(*m));
}

/* Every source empty. */
void libmm_merge_reset(struct libmm_merge *m)
{
	unsigned int i;

	for (i = 0; i < m->k; i++) {
		m->leaf[i].src = LIBMM_MERGE_EMPTY;
		m->time[i] = ~0ULL;
	}
	m->built = false;
}

/* Set the head of source n->src (< cap); the tree is rebuilt at top(). */
void libmm_merge_push(struct libmm_merge *m, const struct libmm_merge_node *n)
{
	m->leaf[n->src] = *n;
	m->time[n->src] = n->time;
	m->built = false;
}

/* Play every match bottom-up: O(k), once per round of pushes. */
void libmm_merge_build(struct libmm_merge *m)
{
	unsigned int *win = m->scratch, i, a, b;

	for (i = 0; i < m->k; i++)
		win[m->k + i] = i;
	for (i = m->k - 1; i >= 1; i--) {
		a = win[2 * i];
		b = win[2 * i + 1];
		if (libmm_merge_before(m, b, a)) {
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

