// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The binary heap under the k-way merges (live rings and trace files).
 * k is the number of CPUs, so the heap is small and lives in one array.
 */
#include <stdlib.h>
#include "internal.h"

static bool node_less(const struct mm_heap_node *a, const struct mm_heap_node *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	if (a->src != b->src)
		return a->src < b->src;
	return a->pos < b->pos;
}

int mm_heap_init(struct mm_heap *h, unsigned int cap)
{
	h->n = calloc(cap ? cap : 1, sizeof(*h->n));
	if (!h->n)
		return -ENOMEM;
	h->nr = 0;
	h->cap = cap;
	return 0;
}

void mm_heap_fini(struct mm_heap *h)
{
	free(h->n);
	h->n = NULL;
	h->nr = h->cap = 0;
}

static void sift_down(struct mm_heap *h, unsigned int i)
{
	struct mm_heap_node tmp = h->n[i];

	for (;;) {
		unsigned int l = 2 * i + 1, m = i;
		const struct mm_heap_node *best = &tmp;

		if (l < h->nr && node_less(&h->n[l], best)) {
			m = l;
			best = &h->n[l];
		}
		if (l + 1 < h->nr && node_less(&h->n[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		h->n[i] = h->n[m];
		i = m;
	}
	h->n[i] = tmp;
}

/* The caller never pushes more than cap nodes (one per source). */
void mm_heap_push(struct mm_heap *h, const struct mm_heap_node *n)
{
	unsigned int i = h->nr++;

	while (i) {
		unsigned int parent = (i - 1) / 2;

		if (!node_less(n, &h->n[parent]))
			break;
		h->n[i] = h->n[parent];
		i = parent;
	}
	h->n[i] = *n;
}

void mm_heap_pop(struct mm_heap *h)
{
	if (!h->nr)
		return;
	h->n[0] = h->n[--h->nr];
	if (h->nr)
		sift_down(h, 0);
}

void mm_heap_replace_top(struct mm_heap *h, const struct mm_heap_node *n)
{
	h->n[0] = *n;
	sift_down(h, 0);
}
