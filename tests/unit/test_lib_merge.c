// SPDX-License-Identifier: GPL-2.0
/*
 * The k-way merge over the per-CPU rings: time order, ties (CPU, then ring
 * position), empty CPUs, LOST records, wraparound, stopping mid-merge,
 * holdback and flush, and the heap itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "test_lib_fake.h"
#include "merge.h"

#define RING (16 * 1024)
#define MAXN 20000

struct out {
	unsigned int n;
	__u64 time[MAXN];
	__u16 cpu[MAXN];
	__u16 type[MAXN];
	__u64 seq[MAXN];
	int stop_at;
};

static int out_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct out *o = ctx;
	unsigned int i = o->n++;

	assert_true(i < MAXN);
	o->time[i] = rec->time_ns;
	o->cpu[i] = rec->cpu;
	o->type[i] = rec->type;
	o->seq[i] = rec->type == MEMMON_REC_MARK ? rec_seq(rec) : ~0ULL;
	return o->stop_at && (int)o->n == o->stop_at;
}

static struct out *out_new(void)
{
	struct out *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	return o;
}

static struct memmon_session *merged(struct fake *f, struct out *o,
				     unsigned int cpus, __u64 holdback)
{
	LIBMEMMON_OPTS(memmon_consume_opts, opts, .holdback_ns = holdback);
	struct memmon_session *s;

	assert_int_equal(fake_init(f, cpus, RING), 0);
	s = fake_session(f);
	assert_non_null(s);
	assert_int_equal(memmon_session__set_callback(s, out_cb, o, &opts), 0);
	return s;
}

static void assert_sorted(const struct out *o)
{
	unsigned int i;

	for (i = 1; i < o->n; i++) {
		if (o->time[i - 1] > o->time[i] ||
		    (o->time[i - 1] == o->time[i] && o->cpu[i - 1] > o->cpu[i]))
			fail_msg("out of order at %u: t=%llu cpu%u before t=%llu cpu%u",
				 i, (unsigned long long)o->time[i - 1], o->cpu[i - 1],
				 (unsigned long long)o->time[i], o->cpu[i]);
	}
}

/* Random interleaving on 4 CPUs, each CPU's times increasing. */
static void test_random_order(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 4, 0);
	__u64 t[4] = { 0 }, seq = 0;
	unsigned int i, c;

	(void)state;
	srand(7);
	for (i = 0; i < 300; i++) {
		c = (unsigned int)rand() % 4;
		t[c] += 1 + (unsigned int)rand() % 50;
		assert_true(fake_seq(&f, c, t[c], seq++) >= 0);
	}
	assert_int_equal(memmon_session__consume(s), 300);
	assert_int_equal(o->n, 300);
	assert_sorted(o);
	/* every record exactly once */
	{
		char seen[300] = { 0 };

		for (i = 0; i < 300; i++) {
			assert_true(o->seq[i] < 300);
			assert_int_equal(seen[o->seq[i]]++, 0);
		}
	}
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

static void test_ties(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 3, 0);

	(void)state;
	/* same time on cpu 2, 0, 1, and twice on cpu 2 */
	fake_seq(&f, 2, 100, 20);
	fake_seq(&f, 2, 100, 21);
	fake_seq(&f, 0, 100, 0);
	fake_seq(&f, 1, 100, 10);
	fake_seq(&f, 1, 50, 11);	/* cpu 1 is not sorted: ring order kept */
	assert_int_equal(memmon_session__consume(s), 5);
	/* ties go to the lower CPU; within a CPU, ring order */
	assert_int_equal(o->seq[0], 0);
	assert_int_equal(o->seq[1], 10);
	assert_int_equal(o->seq[2], 11);
	assert_int_equal(o->seq[3], 20);
	assert_int_equal(o->seq[4], 21);
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

static void test_empty_cpus(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 4, 0);

	(void)state;
	/* all empty */
	assert_int_equal(memmon_session__consume(s), 0);
	/* cpu 0 and 3 idle */
	fake_seq(&f, 1, 30, 1);
	fake_seq(&f, 2, 20, 2);
	fake_seq(&f, 1, 40, 3);
	assert_int_equal(memmon_session__consume(s), 3);
	assert_int_equal(o->seq[0], 2);
	assert_int_equal(o->seq[1], 1);
	assert_int_equal(o->seq[2], 3);
	assert_int_equal(*fake_consumer_pos(&f, 0), 0);
	assert_int_equal(*fake_consumer_pos(&f, 3), 0);
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

static void test_lost_records(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 2, 0);
	struct { __u64 count, first, last; } lost = { 5, 11, 19 };

	(void)state;
	fake_seq(&f, 0, 10, 0);
	fake_write(&f, 0, MEMMON_REC_LOST, 20, 0, &lost, sizeof(lost));
	fake_seq(&f, 1, 15, 1);
	fake_seq(&f, 1, 25, 2);
	/* an unknown future type is delivered too (the caller skips it) */
	fake_write(&f, 0, 200, 30, 1, "abcdefgh", 8);
	assert_int_equal(memmon_session__consume(s), 5);
	assert_int_equal(o->type[0], MEMMON_REC_MARK);
	assert_int_equal(o->type[1], MEMMON_REC_MARK);
	assert_int_equal(o->type[2], MEMMON_REC_LOST);
	assert_int_equal(o->time[2], 20);
	assert_int_equal(o->type[4], 200);
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

/* Many rounds with wraparound on every CPU; order within each round. */
static void test_wrap_rounds(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 3, 0);
	__u64 t = 0, seq = 0, got = 0;
	unsigned int round, k;

	(void)state;
	srand(3);
	for (round = 0; round < 500; round++) {
		for (k = 0; k < 200; k++) {
			unsigned int c = (unsigned int)rand() % 3;

			if (fake_seq(&f, c, ++t, seq) < 0)
				break;
			seq++;
		}
		o->n = 0;
		assert_true(memmon_session__consume(s) >= 0);
		assert_sorted(o);
		got += o->n;
	}
	assert_int_equal(got, seq);
	assert_true(f.prod_pos[0] > 4 * RING);
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

/* Stop mid-merge: each CPU's consumer_pos is what was delivered from it. */
static void test_stop_resume(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 2, 0);
	unsigned int i;

	(void)state;
	for (i = 0; i < 10; i++)
		fake_seq(&f, i % 2, i, i);
	o->stop_at = 3;		/* t=0 (cpu0), 1 (cpu1), 2 (cpu0) */
	assert_int_equal(memmon_session__consume(s), 3);
	assert_int_equal(*fake_consumer_pos(&f, 0), 2 * 40);
	assert_int_equal(*fake_consumer_pos(&f, 1), 1 * 40);
	o->stop_at = 0;
	assert_int_equal(memmon_session__consume(s), 7);
	for (i = 0; i < 10; i++)
		assert_int_equal(o->seq[i], i);
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

static __u64 fake_now;
static __u64 fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

/* holdback: newer records stay in the ring; flush takes them all. */
static void test_holdback_flush(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 2, 100);

	(void)state;
	memmon__session_set_clock(s, fake_clock, NULL);
	fake_now = 1000;
	fake_seq(&f, 0, 850, 0);
	fake_seq(&f, 0, 950, 1);	/* newer than now - 100 */
	fake_seq(&f, 1, 900, 2);	/* exactly at the limit: due */
	assert_int_equal(memmon_session__consume(s), 2);
	assert_int_equal(o->seq[0], 0);
	assert_int_equal(o->seq[1], 2);
	/* the held-back record is still in the ring: consumer_pos before it */
	assert_int_equal(*fake_consumer_pos(&f, 0), 40);
	/* a late record on the idle CPU, older than the held one */
	fake_seq(&f, 1, 920, 3);
	fake_now = 1100;
	assert_int_equal(memmon_session__consume(s), 2);
	/* it came out before the held one: holdback fixed the order */
	assert_int_equal(o->seq[2], 3);
	assert_int_equal(o->seq[3], 1);
	fake_seq(&f, 0, 5000, 4);
	assert_int_equal(memmon_session__consume(s), 0);
	/* flush ignores the holdback */
	assert_int_equal(memmon_session__flush(s), 1);
	assert_int_equal(o->seq[4], 4);
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

/* A corrupt head on one CPU: skipped and counted, the others still flow. */
static void test_corrupt_cpu(void **state)
{
	struct out *o = out_new();
	struct fake f;
	struct memmon_session *s = merged(&f, o, 2, 0);
	long long pos;

	(void)state;
	pos = fake_seq(&f, 0, 1, 0);
	((struct memmon_rec_header *)(fake_data(&f, 0) + pos))->size = 12;
	fake_seq(&f, 1, 2, 1);
	assert_int_equal(memmon_session__consume(s), 1);
	assert_int_equal(o->n, 1);
	assert_int_equal(o->seq[0], 1);
	assert_int_equal(memmon_session__bad_records(s), 1);
	/* its length cannot be trusted: cpu 0 resyncs to producer_pos */
	assert_int_equal(*fake_consumer_pos(&f, 0), f.prod_pos[0]);
	memmon_session__close(s);
	fake_fini(&f);
	free(o);
}

/*
 * The tournament tree alone: k sources of sorted times (ties within and
 * across sources, empty sources, a record at the largest time, which the
 * empty-leaf sentinel must not hide), merged into one stream ordered by
 * (time, source) with nothing lost or repeated.
 */
static void test_merge_tree(void **state)
{
	static const unsigned int ks[] = { 1, 2, 3, 5, 8, 13, 64 };
	unsigned int ki;

	(void)state;
	srand(11);
	for (ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
		unsigned int k = ks[ki], src, total = 0, seen = 0;
		__u64 *t[64], prev_t = 0;
		unsigned int len[64], at[64], prev_src = 0;
		const struct libmm_merge_node *top;
		struct libmm_merge m;
		struct libmm_merge_node n;

		assert_int_equal(libmm_merge_init(&m, k), 0);
		for (src = 0; src < k; src++) {
			unsigned int i;
			__u64 v = 0;

			len[src] = src % 4 == 3 ? 0 : (unsigned int)(rand() % 200);
			at[src] = 0;
			t[src] = calloc(len[src] + 1, sizeof(__u64));
			assert_non_null(t[src]);
			for (i = 0; i < len[src]; i++) {
				v += (__u64)(rand() % 3);
				t[src][i] = v;
			}
			if (src == k - 1 && len[src])
				t[src][len[src] - 1] = ~0ULL;
			total += len[src];
		}
		for (int round = 0; round < 2; round++) {
			libmm_merge_reset(&m);
			seen = 0;
			prev_t = 0;
			prev_src = 0;
			for (src = 0; src < k; src++) {
				at[src] = 0;
				if (!len[src])
					continue;
				n = (struct libmm_merge_node){ t[src][0], 0, src, 8 };
				libmm_merge_push(&m, &n);
			}
			while ((top = libmm_merge_top(&m))) {
				src = top->src;
				assert_true(src < k);
				assert_int_equal(top->time, t[src][at[src]]);
				assert_int_equal(top->pos, at[src]);
				assert_true(prev_t < top->time ||
					    (prev_t == top->time && prev_src <= src));
				prev_t = top->time;
				prev_src = src;
				seen++;
				if (++at[src] < len[src]) {
					n = (struct libmm_merge_node){ t[src][at[src]], at[src], src, 8 };
					libmm_merge_replace_top(&m, &n);
				} else {
					libmm_merge_pop(&m);
				}
			}
			assert_int_equal(seen, total);
			for (src = 0; src < k; src++)
				assert_int_equal(at[src], len[src]);
		}
		for (src = 0; src < k; src++)
			free(t[src]);
		libmm_merge_fini(&m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_order),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_empty_cpus),
		cmocka_unit_test(test_lost_records),
		cmocka_unit_test(test_wrap_rounds),
		cmocka_unit_test(test_stop_resume),
		cmocka_unit_test(test_holdback_flush),
		cmocka_unit_test(test_corrupt_cpu),
		cmocka_unit_test(test_merge_tree),
	};

	return cmocka_run_group_tests_name("lib_merge", tests, NULL, NULL);
}
