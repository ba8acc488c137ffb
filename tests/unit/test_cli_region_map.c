// SPDX-License-Identifier: GPL-2.0
/*
 * memmon report's address-space model (tools/region_map.c) against a
 * naive one: an unsorted list of regions where every operation is a scan.
 * Random mmap/munmap/heap-grow/fault sequences over a small address
 * space (so that overlaps, cuts in two and exact hits are common), compared
 * after every step: the regions and their fault counts, the bytes each
 * operation reports, and what it retired, and the order's own invariants
 * (tombstones included) after every step. Also the branch-free search at
 * every size and position, tombstones reused and compacted, and copy/clear.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "region_map.h"

#define PG	4096ULL
#define SPAN	256		/* pages of address space */
#define MAXR	(4 * SPAN)

/* ---- the oracle --------------------------------------------------------- */

struct naive {
	struct region r[MAXR];
	size_t nr;
	__u64 retired_faults;	/* sum over regions retired whole */
	size_t retired;
};

static long long naive_carve(struct naive *n, __u64 start, __u64 end,
			     bool retire)
{
	struct region keep[MAXR];
	size_t i, k = 0;
	__u64 gone = 0;

	for (i = 0; i < n->nr; i++) {
		struct region *r = &n->r[i], piece;

		if (r->end <= start || r->start >= end) {
			keep[k++] = *r;
			continue;
		}
		gone += (r->end < end ? r->end : end) - (r->start > start ? r->start : start);
		if (r->start < start) {
			piece = *r;
			piece.end = start;
			keep[k++] = piece;
		}
		if (r->end > end) {
			piece = *r;
			piece.start = end;
			if (r->start < start) {
				piece.faults = 0;
				piece.major = 0;
			}
			keep[k++] = piece;
		}
		if (retire && r->start >= start && r->end <= end) {
			n->retired++;
			n->retired_faults += r->faults;
		}
	}
	memcpy(n->r, keep, k * sizeof(*keep));
	n->nr = k;
	return (long long)gone;
}

static long long naive_insert(struct naive *n, const struct region *r)
{
	long long gone = naive_carve(n, r->start, r->end, true);

	n->r[n->nr++] = *r;
	return gone;
}

/* The heap region ending at start, or NULL. */
static struct region *naive_heap_at(struct naive *n, __u64 start)
{
	size_t i;

	for (i = 0; i < n->nr; i++)
		if (n->r[i].end == start && n->r[i].heap)
			return &n->r[i];
	return NULL;
}

static long long naive_grow(struct naive *n, __u64 start, __u64 end)
{
	long long gone;

	if (!naive_heap_at(n, start))
		return -ENOENT;
	gone = naive_carve(n, start, end, true);
	naive_heap_at(n, start)->end = end;
	return gone;
}

static void naive_fault(struct naive *n, __u64 addr, bool major)
{
	size_t i;

	for (i = 0; i < n->nr; i++)
		if (n->r[i].start <= addr && addr < n->r[i].end) {
			n->r[i].faults++;
			n->r[i].major += major;
		}
}

static int by_start(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* ---- the comparison ----------------------------------------------------- */

struct retired {
	__u64 faults;
	size_t n;
};

static void retire_cb(void *ctx, const struct region_map *m, size_t i)
{
	struct retired *t = ctx;
	struct region r;

	region_map_get(m, i, &r);
	assert_int_equal(r.faults, m->count[i].faults);
	t->n++;
	t->faults += r.faults;
}

/*
 * The order's invariants: sorted, starts[k] <= ends[k] <= starts[k + 1];
 * a region is non-empty and its slot a pool entry of its own; a tombstone
 * is empty, counts nothing; nr and nr_tomb count them; the pool's free
 * list and its regions account for every pool entry used.
 */
static void assert_order(const struct region_map *m)
{
	size_t k, live = 0, tomb = 0;

	assert_int_equal(m->len, m->nr + m->nr_tomb);
	assert_true(!m->cap || m->lo + m->len <= m->cap);
	assert_int_equal(m->pool_nr, m->nr + m->nr_freed);
	for (k = 0; k < m->len; k++) {
		assert_true(m->starts[k] <= m->ends[k]);
		if (k + 1 < m->len)
			assert_true(m->ends[k] <= m->starts[k + 1]);
		if (region_map_live(m, k)) {
			live++;
			assert_true(m->starts[k] < m->ends[k]);
			assert_true(m->slot[k] < m->pool_nr);
			assert_int_equal(m->pool[m->slot[k]].start, m->starts[k]);
			assert_int_equal(m->pool[m->slot[k]].end, m->ends[k]);
		} else {
			tomb++;
			assert_int_equal(m->starts[k], m->ends[k]);
			assert_int_equal(m->count[k].faults, 0);
			assert_int_equal(m->count[k].major, 0);
		}
	}
	assert_int_equal(live, m->nr);
	assert_int_equal(tomb, m->nr_tomb);
}

static void assert_same(const struct region_map *m, struct naive *n)
{
	struct region got[MAXR];
	size_t i, k = 0;

	assert_order(m);
	assert_int_equal(m->nr, n->nr);
	qsort(n->r, n->nr, sizeof(n->r[0]), by_start);
	region_map_export(m, got);
	for (i = 0; i < n->nr; i++) {
		assert_int_equal(got[i].start, n->r[i].start);
		assert_int_equal(got[i].end, n->r[i].end);
		assert_int_equal(got[i].faults, n->r[i].faults);
		assert_int_equal(got[i].major, n->r[i].major);
		assert_int_equal(got[i].ino, n->r[i].ino);
		assert_int_equal(got[i].heap, n->r[i].heap);
		while (!region_map_live(m, k))
			k++;
		assert_int_equal(m->starts[k], n->r[i].start);
		assert_int_equal(m->ends[k], n->r[i].end);
		k++;
	}
}

static __u64 rnd_page(void)
{
	return (__u64)(rand() % SPAN) * PG;
}

static void test_random_against_naive(void **state)
{
	static struct naive n;
	struct region_map m;
	struct retired t = { 0 };
	unsigned int round, step, compactions = 0;
	size_t most_tombs = 0, prev_tombs = 0;
	__u64 ino = 1;

	(void)state;
	for (round = 0; round < 40; round++) {
		srand(round);
		memset(&n, 0, sizeof(n));
		t = (struct retired){ 0 };
		region_map_init(&m);
		prev_tombs = 0;
		for (step = 0; step < 2000; step++) {
			int op = rand() % 11;
			__u64 a = rnd_page(), len = (1 + (__u64)(rand() % 24)) * PG;

			if (op < 3) {
				struct region r = { .start = a, .end = a + len,
						    .ino = ino++, .prot = 3,
						    .heap = rand() % 2 };

				assert_int_equal(region_map_insert(&m, &r, retire_cb, &t),
						 naive_insert(&n, &r));
			} else if (op < 5) {
				assert_int_equal(region_map_carve(&m, a, a + len, retire_cb, &t),
						 naive_carve(&n, a, a + len, true));
			} else if (op == 5) {
				/* mremap's source: carved, not retired */
				assert_int_equal(region_map_carve(&m, a, a + len, NULL, NULL),
						 naive_carve(&n, a, a + len, false));
			} else if (op == 10) {
				/* brk up: mostly from a region's end */
				if (n.nr && rand() % 4)
					a = n.r[rand() % n.nr].end;
				assert_int_equal(region_map_grow(&m, a, a + len, retire_cb, &t),
						 naive_grow(&n, a, a + len));
			} else {
				__u64 addr = a + (__u64)(rand() % 4096);
				size_t k = m.len ? (size_t)rand() % m.len : 0;
				bool major = rand() % 3 == 0;
				bool inside = false;
				long i;

				/* ... or exactly at a tombstone */
				if (m.len && !region_map_live(&m, k) && rand() % 2)
					addr = m.starts[k];
				i = region_map_find(&m, addr);

				for (k = 0; k < n.nr; k++)
					inside |= n.r[k].start <= addr && addr < n.r[k].end;
				assert_int_equal(i >= 0, inside);
				if (i >= 0)
					assert_true(m.starts[i] <= addr && addr < m.ends[i]);
				region_map_fault(&m, addr, major);
				naive_fault(&n, addr, major);
			}
			assert_same(&m, &n);
			assert_int_equal(t.n, n.retired);
			assert_int_equal(t.faults, n.retired_faults);
			if (m.nr_tomb > most_tombs)
				most_tombs = m.nr_tomb;
			if (m.nr_tomb + 16 < prev_tombs)
				compactions++;
			prev_tombs = m.nr_tomb;
		}
		region_map_fini(&m);
	}
	/* The sequences did reach the tombstones' paths. */
	assert_true(most_tombs > 16);
	assert_true(compactions > 0);
}

/*
 * Growth at one end only (mmap's top-down addresses, then bottom-up), then
 * removal from the middle outwards: every way the order's two-sided room
 * is used, re-centred and grown.
 */
static void test_one_sided(void **state)
{
	static struct naive n;
	struct region_map m;
	struct retired t = { 0 };
	int dir, k;

	(void)state;
	for (dir = 0; dir < 2; dir++) {
		memset(&n, 0, sizeof(n));
		region_map_init(&m);
		for (k = 0; k < 600; k++) {
			__u64 a = (dir ? (__u64)k : (__u64)(600 - k)) * 2 * PG;
			struct region r = { .start = a, .end = a + PG, .ino = (__u64)k };

			assert_int_equal(region_map_insert(&m, &r, retire_cb, &t),
					 naive_insert(&n, &r));
			region_map_fault(&m, a, false);
			naive_fault(&n, a, false);
			if (k % 50 == 0)
				assert_same(&m, &n);
		}
		assert_same(&m, &n);
		for (k = 0; k < 300; k++) {
			__u64 a = (__u64)(300 + (k % 2 ? k : -k)) * 2 * PG;

			assert_int_equal(region_map_carve(&m, a, a + PG, retire_cb, &t),
					 naive_carve(&n, a, a + PG, true));
		}
		assert_same(&m, &n);
		assert_int_equal(t.faults, n.retired_faults);
		region_map_fini(&m);
		t = (struct retired){ 0 };
	}
}

/* A region cut in two keeps its counts on the left; the right starts at 0. */
static void test_cut_in_two(void **state)
{
	struct region_map m;
	struct region r = { .start = 10 * PG, .end = 20 * PG }, got[3];

	(void)state;
	region_map_init(&m);
	assert_int_equal(region_map_insert(&m, &r, NULL, NULL), 0);
	region_map_fault(&m, 11 * PG, true);
	region_map_fault(&m, 19 * PG + 5, false);
	region_map_fault(&m, 20 * PG, false);	/* outside: end is exclusive */
	assert_int_equal(region_map_carve(&m, 14 * PG, 16 * PG, NULL, NULL), 2 * PG);
	assert_int_equal(m.nr, 2);
	region_map_export(&m, got);
	assert_int_equal(got[0].start, 10 * PG);
	assert_int_equal(got[0].end, 14 * PG);
	assert_int_equal(got[0].faults, 2);
	assert_int_equal(got[0].major, 1);
	assert_int_equal(got[1].start, 16 * PG);
	assert_int_equal(got[1].end, 20 * PG);
	assert_int_equal(got[1].faults, 0);
	assert_int_equal(region_map_find(&m, 15 * PG), -1);
	assert_int_equal(region_map_find(&m, 16 * PG), 1);
	assert_int_equal(region_map_find(&m, 9 * PG), -1);
	region_map_fini(&m);
}

/*
 * The search is a lower bound at every size and position: every size up
 * to 70 (blocks of 8, whole and partial; the first halving at 65), and
 * sizes where one or more halvings leave whole or partial blocks.
 */
static void test_lower_every_size(void **state)
{
	static const size_t big[] = { 127, 128, 129, 255, 256, 257, 258, 271,
				       272, 273, 300, 511, 512, 513, 1000 };
	struct region_map m;
	size_t nr, i, want, n;
	__u64 addr;

	(void)state;
	region_map_init(&m);
	for (n = 0; n < 71 + sizeof(big) / sizeof(big[0]); n++) {
		nr = n <= 70 ? n : big[n - 71];
		region_map_clear(&m);
		for (i = 0; i < nr; i++) {
			/* regions [3i+1, 3i+2) pages: gaps on both sides */
			struct region r = { .start = (3 * i + 1) * PG,
					    .end = (3 * i + 2) * PG };

			assert_int_equal(region_map_insert(&m, &r, NULL, NULL), 0);
		}
		assert_int_equal(m.nr, nr);
		assert_int_equal(m.len, nr);
		/* every page edge, one byte either side, and mid-page */
		for (addr = 0; addr <= (3 * nr + 3) * PG; addr += PG / 2) {
			__u64 at[3] = { addr, addr + 1, addr ? addr - 1 : 0 };
			unsigned int k;

			for (k = 0; k < 3; k++) {
				for (want = 0; want < nr && m.ends[want] <= at[k]; want++)
					;
				assert_int_equal(region_map_lower(&m, at[k]), want);
			}
		}
		assert_int_equal(region_map_lower(&m, ~0ULL), nr);
	}
	region_map_fini(&m);
}

/*
 * munmap leaves a tombstone in place, an mmap there takes it back: neither
 * moves a region of the order; a heap that grows over tombstones keeps the
 * order sorted; a run of them is compacted once they outnumber the regions.
 */
static void test_tombstones(void **state)
{
	struct region_map m;
	struct region r = { 0 };
	size_t i;

	(void)state;
	region_map_init(&m);
	for (i = 0; i < 10; i++) {	/* [2i + 1, 2i + 2) pages */
		r.start = (2 * i + 1) * PG;
		r.end = r.start + PG;
		r.heap = i == 2;
		assert_int_equal(region_map_insert(&m, &r, NULL, NULL), 0);
	}
	region_map_fault(&m, 11 * PG, true);
	assert_int_equal(region_map_carve(&m, 11 * PG, 12 * PG, NULL, NULL), PG);
	assert_order(&m);
	assert_int_equal(m.nr, 9);
	assert_int_equal(m.len, 10);
	assert_int_equal(m.nr_tomb, 1);
	assert_false(region_map_live(&m, 5));
	assert_int_equal(m.starts[6], 13 * PG);	/* nothing moved */
	assert_int_equal(region_map_find(&m, 11 * PG), -1);
	/* Mapped again there: position 5 again, its counts start at 0. */
	r.start = 11 * PG;
	r.end = 12 * PG;
	r.heap = false;
	assert_int_equal(region_map_insert(&m, &r, NULL, NULL), 0);
	assert_order(&m);
	assert_int_equal(m.len, 10);
	assert_int_equal(m.nr_tomb, 0);
	assert_int_equal(region_map_find(&m, 11 * PG), 5);
	assert_int_equal(m.count[5].faults, 0);
	/* Tombstones at 7..9 pages, then the heap (5, 6 pages) grows to 12. */
	assert_int_equal(region_map_carve(&m, 7 * PG, 10 * PG, NULL, NULL), 2 * PG);
	assert_int_equal(m.nr_tomb, 2);
	assert_int_equal(region_map_grow(&m, 6 * PG, 12 * PG, NULL, NULL), PG);
	assert_order(&m);
	assert_int_equal(region_map_find(&m, 11 * PG), 2);
	assert_int_equal(m.ends[2], 12 * PG);
	/* Past nr + 16 of them (59 > 41 + 16), the next change compacts. */
	region_map_clear(&m);
	for (i = 0; i < 100; i++) {
		r.start = (2 * i + 1) * PG;
		r.end = r.start + PG;
		assert_int_equal(region_map_insert(&m, &r, NULL, NULL), 0);
	}
	for (i = 0; i < 59; i++)
		assert_int_equal(region_map_carve(&m, (2 * i + 1) * PG,
						  (2 * i + 2) * PG, NULL, NULL), PG);
	assert_order(&m);
	assert_int_equal(m.len, 100);
	assert_int_equal(m.nr_tomb, 59);
	assert_int_equal(region_map_carve(&m, 0, PG, NULL, NULL), 0);
	assert_order(&m);
	assert_int_equal(m.nr_tomb, 0);
	assert_int_equal(m.len, 41);
	assert_int_equal(region_map_find(&m, 119 * PG), 0);
	region_map_fini(&m);
}

static void test_copy_clear(void **state)
{
	static struct region x[100], got[100];
	struct region_map a, b;
	struct region r = { .start = PG, .end = 3 * PG, .ino = 7 };
	unsigned int i;

	(void)state;
	region_map_init(&a);
	region_map_init(&b);
	for (i = 0; i < 100; i++) {
		r.start = (__u64)(2 * i + 1) * PG;
		r.end = r.start + PG;
		r.ino = i;
		assert_int_equal(region_map_insert(&a, &r, NULL, NULL), 0);
	}
	/*
	 * Holes in a's pool and tombstones in its order, so the copy must
	 * follow the order and skip them.
	 */
	assert_true(region_map_carve(&a, 0, 40 * PG, NULL, NULL) > 0);
	assert_int_equal(a.nr_tomb, 20);
	region_map_fault(&a, 51 * PG, false);
	assert_int_equal(region_map_copy(&b, &a), 0);
	assert_order(&b);
	assert_int_equal(b.nr, a.nr);
	assert_int_equal(b.nr_tomb, 0);
	region_map_export(&a, x);
	region_map_export(&b, got);
	assert_memory_equal(x, got, a.nr * sizeof(x[0]));
	/* Independent: a fault on the copy is not on the original. */
	region_map_fault(&b, 53 * PG, true);
	assert_int_equal(a.count[region_map_find(&a, 53 * PG)].faults, 0);
	region_map_clear(&b);
	assert_int_equal(b.nr, 0);
	assert_int_equal(region_map_find(&b, 53 * PG), -1);
	region_map_fini(&a);
	region_map_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_naive),
		cmocka_unit_test(test_one_sided),
		cmocka_unit_test(test_cut_in_two),
		cmocka_unit_test(test_lower_every_size),
		cmocka_unit_test(test_tombstones),
		cmocka_unit_test(test_copy_clear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
