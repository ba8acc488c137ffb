// SPDX-License-Identifier: GPL-2.0
/*
 * The address-space model of `memmon report`: see region_map.h for the
 * layout and why.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "region_map.h"

void region_map_fini(struct region_map *m)
{
	free(m->starts);
	free(m->ends);
	free(m->count);
	free(m->slot);
	free(m->pool);
	free(m->freed);
	region_map_init(m);
}

void region_map_clear(struct region_map *m)
{
	m->nr = 0;
	m->pool_nr = 0;
	m->nr_freed = 0;
	m->last = 0;
}

/* *p grows to n elements of size; on failure *p is unchanged. */
static bool grow(void *p, size_t n, size_t size)
{
	void *nb = realloc(*(void **)p, n * size);

	if (!nb)
		return false;
	*(void **)p = nb;
	return true;
}

/* Room for extra more regions, in the order and in the pool. */
static int reserve(struct region_map *m, size_t extra)
{
	size_t cap;

	if (m->nr + extra <= m->cap && m->pool_nr + extra <= m->cap)
		return 0;
	cap = (m->cap ? m->cap * 2 : 16) + extra;
	/* A failure part-way leaves bigger arrays and the old cap: harmless. */
	if (!grow(&m->starts, cap, sizeof(*m->starts)) ||
	    !grow(&m->ends, cap, sizeof(*m->ends)) ||
	    !grow(&m->count, cap, sizeof(*m->count)) ||
	    !grow(&m->slot, cap, sizeof(*m->slot)) ||
	    !grow(&m->pool, cap, sizeof(*m->pool)) ||
	    !grow(&m->freed, cap, sizeof(*m->freed)))
		return -ENOMEM;
	m->cap = cap;
	return 0;
}

void region_map_get(const struct region_map *m, size_t i, struct region *r)
{
	*r = m->pool[m->slot[i]];
	r->faults = m->count[i].faults;
	r->major = m->count[i].major;
}

void region_map_export(const struct region_map *m, struct region *out)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		region_map_get(m, i, &out[i]);
}

/*
 * How many ends are <= addr, i.e. the first region with end > addr. Branch
 * free (the probes are data-dependent, so a branch would mispredict half
 * the time): the answer stays in [base, base + n] while n halves.
 */
size_t region_map_lower(const struct region_map *m, __u64 addr)
{
	const __u64 *base = m->ends;
	size_t n = m->nr, half;

	if (!n)
		return 0;
	while (n > 1) {
		half = n / 2;
		/* Arithmetic, not ?:, which compilers turn into a branch. */
		base += half & -(size_t)(base[half - 1] <= addr);
		n -= half;
	}
	return (size_t)(base - m->ends) + (*base <= addr);
}

long region_map_find(struct region_map *m, __u64 addr)
{
	size_t i = m->last;

	if (i < m->nr && m->starts[i] <= addr && addr < m->ends[i])
		return (long)i;
	i = region_map_lower(m, addr);
	if (i < m->nr && m->starts[i] <= addr) {
		m->last = i;
		return (long)i;
	}
	return -1;
}

void region_map_set_prot(struct region_map *m, __u64 start, __u64 end, __u32 prot)
{
	size_t i;

	for (i = region_map_lower(m, start); i < m->nr && m->starts[i] < end; i++)
		m->pool[m->slot[i]].prot = prot;
}

/* Order positions [from, nr) move to [to, ...): reserved by the caller. */
static void move_tail(struct region_map *m, size_t to, size_t from)
{
	size_t n = m->nr - from;

	memmove(&m->starts[to], &m->starts[from], n * sizeof(*m->starts));
	memmove(&m->ends[to], &m->ends[from], n * sizeof(*m->ends));
	memmove(&m->count[to], &m->count[from], n * sizeof(*m->count));
	memmove(&m->slot[to], &m->slot[from], n * sizeof(*m->slot));
}

/* Put r at order position i (a hole made by move_tail), in a pool entry. */
static void place(struct region_map *m, size_t i, const struct region *r)
{
	__u32 s = m->nr_freed ? m->freed[--m->nr_freed] : (__u32)m->pool_nr++;

	m->pool[s] = *r;
	m->slot[i] = s;
	m->starts[i] = r->start;
	m->ends[i] = r->end;
	m->count[i].faults = r->faults;
	m->count[i].major = r->major;
}

long long region_map_carve(struct region_map *m, __u64 start, __u64 end,
			   region_retire_fn retire, void *ctx)
{
	struct region left, right;
	bool has_left = false, has_right = false;
	size_t i, j, n;
	__u64 gone = 0;

	if (start >= end)
		return 0;
	/* At most one region becomes two: reserve first, then nothing fails. */
	if (reserve(m, 1))
		return -ENOMEM;
	i = region_map_lower(m, start);
	for (j = i; j < m->nr && m->starts[j] < end; j++) {
		struct region reg, *r = &reg;
		__u64 s, e;

		region_map_get(m, j, r);
		s = r->start > start ? r->start : start;
		e = r->end < end ? r->end : end;

		gone += e - s;
		if (r->start < start) {
			left = *r;
			left.end = start;
			has_left = true;
		}
		if (r->end > end) {
			right = *r;
			right.start = end;
			has_right = true;
			/* One region cut in two: its counts stay on the left. */
			if (r->start < start) {
				right.faults = 0;
				right.major = 0;
			}
		}
		if (retire && r->start >= start && r->end <= end)
			retire(ctx, r);
		m->freed[m->nr_freed++] = m->slot[j];
	}
	if (j == i)
		return 0;
	n = (size_t)has_left + (size_t)has_right;
	move_tail(m, i + n, j);
	m->nr = m->nr - (j - i) + n;
	if (has_left)
		place(m, i++, &left);
	if (has_right)
		place(m, i, &right);
	return (long long)gone;
}

long long region_map_insert(struct region_map *m, const struct region *r,
			    region_retire_fn retire, void *ctx)
{
	long long gone;
	size_t i;

	if (r->start >= r->end)
		return 0;
	/* The carve may add one region and this one more. */
	if (reserve(m, 2))
		return -ENOMEM;
	gone = region_map_carve(m, r->start, r->end, retire, ctx);
	i = region_map_lower(m, r->start);
	move_tail(m, i + 1, i);
	m->nr++;
	place(m, i, r);
	return gone;
}

int region_map_copy(struct region_map *dst, const struct region_map *src)
{
	size_t i;

	region_map_clear(dst);
	if (reserve(dst, src->nr))
		return -ENOMEM;
	for (i = 0; i < src->nr; i++) {
		dst->pool[i] = src->pool[src->slot[i]];
		dst->slot[i] = (__u32)i;
	}
	memcpy(dst->starts, src->starts, src->nr * sizeof(*src->starts));
	memcpy(dst->ends, src->ends, src->nr * sizeof(*src->ends));
	memcpy(dst->count, src->count, src->nr * sizeof(*src->count));
	dst->nr = src->nr;
	dst->pool_nr = src->nr;
	return 0;
}
