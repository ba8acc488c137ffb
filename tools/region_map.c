// SPDX-License-Identifier: GPL-2.0
/*
 * The address-space model of `memmon report`: see region_map.h for the
 * layout and why.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "region_map.h"

/* The start of each order buffer (the views point lo entries in). */
#define BUF(m, field)	((m)->field - (m)->lo)

void region_map_fini(struct region_map *m)
{
	/* A view is NULL until its buffer exists (lo is 0 then). */
	if (m->starts)
		free(BUF(m, starts));
	if (m->ends)
		free(BUF(m, ends));
	if (m->count)
		free(BUF(m, count));
	if (m->slot)
		free(BUF(m, slot));
	free(m->pool);
	free(m->freed);
	region_map_init(m);
}

/* Point the views at position lo of the buffers. */
static void set_lo(struct region_map *m, size_t lo)
{
	m->starts = BUF(m, starts) + lo;
	m->ends = BUF(m, ends) + lo;
	m->count = BUF(m, count) + lo;
	m->slot = BUF(m, slot) + lo;
	m->lo = lo;
}

void region_map_clear(struct region_map *m)
{
	m->nr = 0;
	m->len = 0;
	m->nr_tomb = 0;
	m->pool_nr = 0;
	m->nr_freed = 0;
	m->last = 0;
	if (m->cap)
		set_lo(m, m->cap / 2);
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

/* Room for extra more positions in the order and regions in the pool. */
static int reserve(struct region_map *m, size_t extra)
{
	__u64 *starts, *ends;
	struct region_count *count;
	__u32 *slot;
	size_t cap;
	bool ok;

	/*
	 * The order keeps a third of its buffers free (cap >= len + len / 2):
	 * a re-centring in make_holes() then leaves at least len / 4 on
	 * each side, so it comes at most once every len / 4 inserts at one
	 * end, a few moves per insert. Full buffers would re-centre the
	 * whole order every few inserts in a steady state of mmap and munmap.
	 */
	if (m->pool_nr + extra <= m->cap &&
	    m->len + extra + m->len / 2 <= m->cap)
		return 0;
	starts = m->starts ? BUF(m, starts) : NULL;
	ends = m->ends ? BUF(m, ends) : NULL;
	count = m->count ? BUF(m, count) : NULL;
	slot = m->slot ? BUF(m, slot) : NULL;
	cap = (m->cap ? m->cap * 2 : 16) + extra + m->len / 2;
	ok = grow(&starts, cap, sizeof(*starts)) &&
	     grow(&ends, cap, sizeof(*ends)) &&
	     grow(&count, cap, sizeof(*count)) &&
	     grow(&slot, cap, sizeof(*slot)) &&
	     grow(&m->pool, cap, sizeof(*m->pool)) &&
	     grow(&m->freed, cap, sizeof(*m->freed));
	/*
	 * The views follow the buffers whether or not all of them grew: a
	 * failure part-way leaves some bigger under the old cap (harmless)
	 * and nothing unowned.
	 */
	m->starts = starts ? starts + m->lo : NULL;
	m->ends = ends ? ends + m->lo : NULL;
	m->count = count ? count + m->lo : NULL;
	m->slot = slot ? slot + m->lo : NULL;
	if (!ok)
		return -ENOMEM;
	m->cap = cap;
	return 0;
}

/* One buffer position, from to to. */
static void move_one(struct region_map *m, size_t to, size_t from)
{
	BUF(m, starts)[to] = BUF(m, starts)[from];
	BUF(m, ends)[to] = BUF(m, ends)[from];
	BUF(m, count)[to] = BUF(m, count)[from];
	BUF(m, slot)[to] = BUF(m, slot)[from];
}

/* Buffer positions [from, from + n) move to [to, to + n). */
static void move_buf(struct region_map *m, size_t to, size_t from, size_t n)
{
	size_t k;

	/*
	 * Most moves are of a region or two (mmap's new region goes in
	 * just above the heap): four calls of memmove would cost more.
	 */
	if (n <= 4) {
		if (to < from)
			for (k = 0; k < n; k++)
				move_one(m, to + k, from + k);
		else
			for (k = n; k-- > 0;)
				move_one(m, to + k, from + k);
		return;
	}
	memmove(BUF(m, starts) + to, BUF(m, starts) + from, n * sizeof(*m->starts));
	memmove(BUF(m, ends) + to, BUF(m, ends) + from, n * sizeof(*m->ends));
	memmove(BUF(m, count) + to, BUF(m, count) + from, n * sizeof(*m->count));
	memmove(BUF(m, slot) + to, BUF(m, slot) + from, n * sizeof(*m->slot));
}

/*
 * d holes at positions [i, i + d), the caller fills them; len + d <= cap
 * (reserved). Moves the shorter side: the part before i, or the part from
 * i on; when that side has no room, the whole order is centred in its
 * buffers first (reserve() keeps a third of them free, so this is
 * amortised).
 */
static void make_holes(struct region_map *m, size_t i, size_t d)
{
	size_t before = i, after = m->len - i, lo = m->lo;

	if (before < after ? lo < d : lo + m->len + d > m->cap) {
		size_t mid = (m->cap - m->len - d) / 2;

		move_buf(m, mid, lo, m->len);
		set_lo(m, mid);
		lo = mid;
	}
	if (before < after && lo >= d) {
		move_buf(m, lo - d, lo, before);
		set_lo(m, lo - d);
	} else {
		/* centred leaves lo + len + d <= cap */
		move_buf(m, lo + i + d, lo + i, after);
	}
	m->len += d;
}

/* Position k becomes a tombstone at v (see region_map.h). */
static void bury(struct region_map *m, size_t k, __u64 v)
{
	m->starts[k] = v;
	m->ends[k] = v;
	m->count[k] = (struct region_count){ 0 };
	m->slot[k] = REGION_TOMB;
}

/*
 * Drop the tombstones once they outnumber the regions: one pass, the
 * regions keep their order and the order its lo. Each compaction follows
 * at least as many tombstones as it moves regions, so it is paid for by
 * the munmaps that made them.
 */
static void maybe_compact(struct region_map *m)
{
	size_t k, n = 0;

	if (m->nr_tomb <= m->nr + 16)
		return;
	for (k = 0; k < m->len; k++) {
		if (!region_map_live(m, k))
			continue;
		if (n != k) {
			m->starts[n] = m->starts[k];
			m->ends[n] = m->ends[k];
			m->count[n] = m->count[k];
			m->slot[n] = m->slot[k];
		}
		n++;
	}
	m->len = n;
	m->nr_tomb = 0;
	m->last = 0;
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

	for (i = 0; i < m->len; i++)
		if (region_map_live(m, i))
			region_map_get(m, i, out++);
}

/*
 * How many ends are <= addr, i.e. the first position with end > addr.
 * Tombstones need no test: their end is sorted with the rest, and a
 * caller that wants a region checks start <= addr, which a tombstone
 * (start == end > addr) fails.
 *
 * A fault's lookup waits on memory (the trace streams through the cache
 * and evicts the order), so what counts is how many loads wait on each
 * other, not how many there are. A binary search is a chain of ~log2(n)
 * loads, each waiting for the one before. Here the chain is cut short:
 * halving (branch free: the probes are data-dependent, a branch would
 * mispredict half the time) only until at most LOWER_SCAN ends are left,
 * then two rounds of independent loads: the last end of every block of
 * LOWER_BLOCK (64 bytes) says how many whole blocks lie below addr
 * (a prefix: the ends are sorted), then the next block's ends are
 * counted. A process of 200 regions waits 4 times instead of 8, for 1-2 %
 * more instructions over a whole report (docs/benchmarks.md).
 */
#define LOWER_BLOCK	8
#define LOWER_SCAN	64	/* at most 8 block ends compared */

size_t region_map_lower(const struct region_map *m, __u64 addr)
{
	const __u64 *base = m->ends;
	size_t n = m->len, half, blocks = 0, below = 0, k;

	/* The answer stays in [base, base + n] while n halves. */
	while (n > LOWER_SCAN) {
		half = n / 2;
		/* Arithmetic, not ?:, which compilers turn into a branch. */
		base += half & -(size_t)(base[half - 1] <= addr);
		n -= half;
	}
	for (k = LOWER_BLOCK - 1; k < n; k += LOWER_BLOCK)
		blocks += base[k] <= addr;
	base += blocks * LOWER_BLOCK;
	n -= blocks * LOWER_BLOCK;
	if (n > LOWER_BLOCK)
		n = LOWER_BLOCK;
	for (k = 0; k < n; k++)
		below += base[k] <= addr;
	return (size_t)(base - m->ends) + below;
}

long region_map_find(struct region_map *m, __u64 addr)
{
	size_t i = m->last;

	if (i < m->len && m->starts[i] <= addr && addr < m->ends[i])
		return (long)i;
	i = region_map_lower(m, addr);
	if (i < m->len && m->starts[i] <= addr) {
		m->last = i;
		return (long)i;
	}
	return -1;
}

void region_map_set_prot(struct region_map *m, __u64 start, __u64 end, __u32 prot)
{
	size_t i;

	for (i = region_map_lower(m, start); i < m->len && m->starts[i] < end; i++)
		if (region_map_live(m, i))
			m->pool[m->slot[i]].prot = prot;
}

/* Put r at position i (a hole of make_holes(), or a tombstone). */
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

/*
 * region_map_carve(). What was at [start, end) (the regions removed and
 * the tombstones among them) becomes tombstones at start, between what
 * stays of regions cut at the edges: *at is the first of them and *room
 * their number, so that an insert of [start, end) takes position *at
 * without moving anything. Without room (nothing there, or a region cut
 * in two), [start, end) would go just before position *at.
 */
static long long carve_at(struct region_map *m, __u64 start, __u64 end,
			  region_retire_fn retire, void *ctx, size_t *at,
			  size_t *room)
{
	struct region left, right;
	bool has_left = false, has_right = false;
	size_t i, j, k, n, live = 0;
	__u64 gone = 0;

	/* At most one region becomes two: reserve first, then nothing fails. */
	if (reserve(m, 1))
		return -ENOMEM;
	*at = i = region_map_lower(m, start);
	for (j = i; j < m->len && m->starts[j] < end; j++) {
		__u64 rs = m->starts[j], re = m->ends[j];
		struct region r;

		if (!region_map_live(m, j))
			continue;
		live++;
		gone += (re < end ? re : end) - (rs > start ? rs : start);
		if (rs < start || re > end) {
			/* Cut: what stays outside needs the whole region. */
			region_map_get(m, j, &r);
			if (rs < start) {
				left = r;
				left.end = start;
				has_left = true;
			}
			if (re > end) {
				right = r;
				right.start = end;
				has_right = true;
				/* Cut in two: the counts stay on the left. */
				if (rs < start) {
					right.faults = 0;
					right.major = 0;
				}
			}
		} else if (retire) {
			retire(ctx, m, j);
		}
		m->freed[m->nr_freed++] = m->slot[j];
	}
	n = (size_t)has_left + (size_t)has_right;
	if (j - i < n) {
		/* One region cut in two: one more position, after it. */
		make_holes(m, i + 1, 1);
		place(m, i, &left);
		place(m, i + 1, &right);
		m->nr++;
		*at = i + 1;
		*room = 0;
		return (long long)gone;
	}
	/* The tombstones there were j - i - live, are j - i - n. */
	m->nr = m->nr + n - live;
	m->nr_tomb = m->nr_tomb + live - n;
	k = i;
	if (has_left)
		place(m, k++, &left);
	*at = k;
	*room = j - i - n;
	for (; k < j - has_right; k++)
		bury(m, k, start);
	if (has_right)
		place(m, k, &right);
	return (long long)gone;
}

long long region_map_carve(struct region_map *m, __u64 start, __u64 end,
			   region_retire_fn retire, void *ctx)
{
	size_t at, room;

	if (start >= end)
		return 0;
	maybe_compact(m);
	return carve_at(m, start, end, retire, ctx, &at, &room);
}

long long region_map_insert(struct region_map *m, const struct region *r,
			    region_retire_fn retire, void *ctx)
{
	long long gone;
	size_t i, k, room;

	if (r->start >= r->end)
		return 0;
	maybe_compact(m);
	/* The carve may add one region and this one more. */
	if (reserve(m, 2))
		return -ENOMEM;
	/* reserved: cannot fail */
	gone = carve_at(m, r->start, r->end, retire, ctx, &i, &room);
	if (room) {
		/* r takes the first tombstone; the others go after its end. */
		for (k = i + 1; k < i + room; k++)
			m->starts[k] = m->ends[k] = r->end;
		m->nr_tomb--;
	} else if (i > 0 && !region_map_live(m, i - 1)) {
		/* Right after a tombstone (at <= r->start): take its place. */
		i--;
		m->nr_tomb--;
	} else if (i < m->len && !region_map_live(m, i)) {
		/* Right before one (at >= r->end): take its place. */
		m->nr_tomb--;
	} else {
		make_holes(m, i, 1);
	}
	place(m, i, r);
	m->nr++;
	return gone;
}

long long region_map_grow(struct region_map *m, __u64 start, __u64 end,
			  region_retire_fn retire, void *ctx)
{
	long long gone;
	size_t i, k, at, room;

	if (!start || start >= end)
		return -ENOENT;
	maybe_compact(m);
	/* The region holding start - 1, if it ends at start. */
	i = region_map_lower(m, start - 1);
	if (i >= m->len || !region_map_live(m, i) || m->ends[i] != start ||
	    !m->pool[m->slot[i]].heap)
		return -ENOENT;
	/*
	 * The carve starts at the first position with end > start, after i
	 * (nothing after i starts before start): it neither moves i within
	 * the order nor cuts it.
	 */
	gone = carve_at(m, start, end, retire, ctx, &at, &room);
	if (gone < 0)
		return gone;
	m->ends[i] = end;
	m->pool[m->slot[i]].end = end;
	/* The tombstones that now lie below i's end go up to it. */
	for (k = i + 1; k < m->len && !region_map_live(m, k) && m->ends[k] < end; k++)
		m->starts[k] = m->ends[k] = end;
	return gone;
}

int region_map_copy(struct region_map *dst, const struct region_map *src)
{
	size_t i, n = 0;

	region_map_clear(dst);
	if (reserve(dst, src->nr))
		return -ENOMEM;
	set_lo(dst, (dst->cap - src->nr) / 2);
	/* The regions only, in order: the copy has no tombstones. */
	for (i = 0; i < src->len; i++) {
		if (!region_map_live(src, i))
			continue;
		dst->pool[n] = src->pool[src->slot[i]];
		dst->slot[n] = (__u32)n;
		dst->starts[n] = src->starts[i];
		dst->ends[n] = src->ends[i];
		dst->count[n] = src->count[i];
		n++;
	}
	dst->nr = n;
	dst->len = n;
	dst->pool_nr = n;
	return 0;
}
