// SPDX-License-Identifier: GPL-2.0
/*
 * The leak split and the growth series of `memmon report` (see
 * report_leaks.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "report_leaks.h"

#define MAP_SHARED_FLAG	0x01

const char *leak_kind_name(enum leak_kind k)
{
	switch (k) {
	case LEAK_HEAP: return "[heap]";
	case LEAK_ANON: return "[anon]";
	case LEAK_SHARED_ANON: return "[shared anon]";
	}
	return "?";
}

static enum leak_kind kind_of(const struct region *r)
{
	if (r->heap)
		return LEAK_HEAP;
	return r->flags & MAP_SHARED_FLAG ? LEAK_SHARED_ANON : LEAK_ANON;
}

static int cmp_leak(const void *a, const void *b)
{
	const struct region *x = a, *y = b;
	enum leak_kind kx = kind_of(x), ky = kind_of(y);
	__u64 sx = x->end - x->start, sy = y->end - y->start;

	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	if (x->site)
		goto by_time;	/* one call site is one group, whatever the sizes */
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (x->prot != y->prot)
		return x->prot < y->prot ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
by_time:
	return (x->mapped_ns > y->mapped_ns) - (x->mapped_ns < y->mapped_ns);
}

static int cmp_group(const void *a, const void *b)
{
	const struct leak_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
}

int leak_split(struct leak_split *ls, const struct region *r, size_t n)
{
	struct region *leaks = malloc((n + 1) * sizeof(*leaks));
	size_t i, nl = 0;

	memset(ls, 0, sizeof(*ls));
	ls->files = malloc((n + 1) * sizeof(*ls->files));
	ls->startup = malloc((n + 1) * sizeof(*ls->startup));
	ls->groups = malloc((n + 1) * sizeof(*ls->groups));
	if (!leaks || !ls->files || !ls->startup || !ls->groups) {
		free(leaks);
		leak_split_free(ls);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		__u64 sz = r[i].end - r[i].start;

		if (r[i].file || r[i].image) {
			ls->files[ls->nr_files++] = r[i];
			ls->file_bytes += sz;
		} else if (r[i].startup) {
			ls->startup[ls->nr_startup++] = r[i];
			ls->startup_bytes += sz;
		} else if (sz) {
			leaks[nl++] = r[i];
		}
	}
	qsort(leaks, nl, sizeof(*leaks), cmp_leak);
	for (i = 0; i < nl; i++) {
		struct leak_group *g = ls->nr_groups ? &ls->groups[ls->nr_groups - 1] : NULL;
		__u64 sz = leaks[i].end - leaks[i].start;

		if (!g || g->kind != kind_of(&leaks[i]) || g->site != leaks[i].site ||
		    (!g->site && (g->size != sz || g->prot != leaks[i].prot ||
				  g->flags != leaks[i].flags))) {
			g = &ls->groups[ls->nr_groups++];
			memset(g, 0, sizeof(*g));
			g->kind = kind_of(&leaks[i]);
			g->site = leaks[i].site;
			g->size = sz;
			g->prot = leaks[i].prot;
			g->flags = leaks[i].flags;
			g->first_ns = leaks[i].mapped_ns;
		}
		if (g->size != sz)
			g->size = 0;	/* a site's regions of several sizes */
		g->count++;
		g->bytes += sz;
		if (leaks[i].mapped_ns < g->first_ns)
			g->first_ns = leaks[i].mapped_ns;
		if (leaks[i].mapped_ns > g->last_ns)
			g->last_ns = leaks[i].mapped_ns;
		ls->leak_count++;
		ls->leak_bytes += sz;
	}
	qsort(ls->groups, ls->nr_groups, sizeof(*ls->groups), cmp_group);
	free(leaks);
	return 0;
}

void leak_split_free(struct leak_split *ls)
{
	free(ls->groups);
	free(ls->files);
	free(ls->startup);
	memset(ls, 0, sizeof(*ls));
}

int growth_add(struct growth *g, __u64 t, __u64 v)
{
	size_t i, k;

	if (!g->t) {
		g->t = malloc(GROWTH_MAX_SAMPLES * sizeof(*g->t));
		g->v = malloc(GROWTH_MAX_SAMPLES * sizeof(*g->v));
		if (!g->t || !g->v) {
			growth_free(g);
			return -ENOMEM;
		}
	}
	if (g->n == GROWTH_MAX_SAMPLES) {
		/* keep the even ones (the first among them) and the last */
		for (i = 0, k = 0; i < g->n; i += 2, k++) {
			g->t[k] = g->t[i];
			g->v[k] = g->v[i];
		}
		g->t[k] = g->t[g->n - 1];
		g->v[k] = g->v[g->n - 1];
		g->n = k + 1;
	}
	g->t[g->n] = t;
	g->v[g->n] = v;
	g->n++;
	return 0;
}

void growth_stats(const struct growth *g, struct growth_stats *st)
{
	__u64 w;
	size_t i, j;

	memset(st, 0, sizeof(*st));
	if (g->n < 2 || g->t[g->n - 1] == g->t[0])
		return;
	st->have = true;
	st->first_ns = g->t[0];
	st->last_ns = g->t[g->n - 1];
	st->first = g->v[0];
	st->last = g->v[g->n - 1];
	for (i = 0; i < g->n; i++)
		if (g->v[i] > st->peak)
			st->peak = g->v[i];
	st->slope = ((double)st->last - (double)st->first) * 1e9 /
		    (double)(st->last_ns - st->first_ns);
	/* windows of at least a tenth of the run: sample i to the first j past it */
	w = (st->last_ns - st->first_ns) / 10;
	if (!w)
		w = 1;
	for (i = 0, j = 0; i < g->n; i++) {
		double rate;

		if (j <= i)
			j = i + 1;
		while (j < g->n && g->t[j] - g->t[i] < w)
			j++;
		if (j >= g->n)
			break;
		rate = ((double)g->v[j] - (double)g->v[i]) * 1e9 /
		       (double)(g->t[j] - g->t[i]);
		if (!st->have_window || rate > st->win_slope) {
			st->have_window = true;
			st->win_slope = rate;
			st->win_start_ns = g->t[i];
			st->win_end_ns = g->t[j];
			st->win_delta = (__s64)(g->v[j] - g->v[i]);
		}
	}
}

void growth_free(struct growth *g)
{
	free(g->t);
	free(g->v);
	memset(g, 0, sizeof(*g));
}
