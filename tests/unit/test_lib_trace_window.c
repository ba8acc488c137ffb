// SPDX-License-Identifier: GPL-2.0
/*
 * memmon_trace_reader__set_window(): a windowed pass delivers exactly the
 * records of a full pass at or after the start, in the same order, even
 * where a CPU's records are out of time order (the reader does not trust
 * the file to be as the driver writes it); every record up to the end is
 * among them; chunks outside the window are not read (a damaged one there
 * does not matter); a file without index is windowed alike; bad arguments
 * are refused; (0, max) is the whole file again.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "internal.h"
#include "trace_format.h"

#define NCPU	3
#define NREC	20000
#define CHUNK	4096

static char path[128];

struct seen {
	__u64 *t;		/* time_ns of each record delivered */
	__u32 *seq;		/* and its tid, a unique sequence number */
	long n;
};

static size_t make_rec(__u8 *p, unsigned int cpu, __u64 t, __u32 seq)
{
	struct memmon_rec_mark *m = (void *)p;
	size_t size = sizeof(*m) + 8;

	memset(p, 0, size);
	m->hdr.size = (__u32)size;
	m->hdr.type = MEMMON_REC_MARK;
	m->hdr.cpu = (__u16)cpu;
	m->hdr.time_ns = t;
	m->hdr.tgid = 1;
	m->hdr.tid = seq;
	m->len = 4;
	memcpy(m->data, &seq, 4);
	return size;
}

/*
 * NREC records over NCPU CPUs; one in 16 is stamped up to 3000 ns before
 * its CPU's clock (out of order in its ring, maybe across a chunk edge).
 */
static void write_trace(void)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = NCPU);
	struct memmon_trace_writer *w;
	static __u8 buf[NCPU][CHUNK];
	size_t fill[NCPU] = { 0 };
	__u64 t[NCPU] = { 100000, 100000, 100000 }, when;
	unsigned int i, c;

	w = memmon_trace_writer__open(path, &o);
	assert_non_null(w);
	srand(7);
	for (i = 0; i < NREC; i++) {
		c = (unsigned int)rand() % NCPU;
		t[c] += 1 + (unsigned int)rand() % 100;
		when = rand() % 16 ? t[c] : t[c] - (unsigned int)rand() % 3000;
		if (fill[c] + 64 > CHUNK) {
			assert_int_equal(memmon_trace_writer__add_chunk(w, c, buf[c],
									fill[c]), 0);
			fill[c] = 0;
		}
		fill[c] += make_rec(buf[c] + fill[c], c, when, i);
	}
	for (c = 0; c < NCPU; c++)
		if (fill[c])
			assert_int_equal(memmon_trace_writer__add_chunk(w, c, buf[c],
									fill[c]), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
}

static int seen_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct seen *s = ctx;

	s->t[s->n] = rec->time_ns;
	s->seq[s->n++] = rec->tid;
	return 0;
}

static void seen_init(struct seen *s)
{
	s->t = calloc(NREC, sizeof(*s->t));
	s->seq = calloc(NREC, sizeof(*s->seq));
	s->n = 0;
	assert_non_null(s->t);
	assert_non_null(s->seq);
}

static void seen_fini(struct seen *s)
{
	free(s->t);
	free(s->seq);
}

/*
 * The window's pass: nothing before start; in the window, the full pass's
 * records in its order; past the end, only records of the full pass, in
 * its order (a subsequence: some tails are not read).
 */
static void check_window(struct memmon_trace_reader *r, const struct seen *all,
			 __u64 start, __u64 end)
{
	struct seen got;
	long i, k = 0, w = 0;

	seen_init(&got);
	assert_int_equal(memmon_trace_reader__set_window(r, start, end), 0);
	assert_true(memmon_trace_reader__for_each(r, seen_cb, &got) >= 0);
	for (i = 0; i < got.n; i++)
		assert_true(got.t[i] >= start);
	for (i = 0; i < all->n && k < got.n; i++)
		if (all->seq[i] == got.seq[k])
			k++;
	if (k != got.n)
		fail_msg("window [%llu, %llu]: record %ld (seq %u) is not in the "
			 "full pass's order", (unsigned long long)start,
			 (unsigned long long)end, k, got.seq[k]);
	for (i = 0, k = 0; i < all->n; i++) {
		if (all->t[i] < start || all->t[i] > end)
			continue;
		while (k < got.n && (got.t[k] > end))
			k++;
		if (k == got.n || got.seq[k] != all->seq[i])
			fail_msg("window [%llu, %llu]: seq %u (t %llu) missing or "
				 "out of order", (unsigned long long)start,
				 (unsigned long long)end, all->seq[i],
				 (unsigned long long)all->t[i]);
		k++;
		w++;
	}
	while (k < got.n && got.t[k] > end)
		k++;
	/* nothing in the window that the full pass does not have there */
	assert_int_equal(k, got.n);
	assert_true(w <= got.n);
	seen_fini(&got);
}

static void test_window_is_exact(void **state)
{
	struct memmon_trace_reader *r;
	struct seen all;
	__u64 first, last, span;
	unsigned int i;

	(void)state;
	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	seen_init(&all);
	assert_int_equal(memmon_trace_reader__for_each(r, seen_cb, &all), NREC);
	first = memmon_trace_reader__info(r)->first_ns;
	last = memmon_trace_reader__info(r)->last_ns;
	span = last - first;
	check_window(r, &all, 0, UINT64_MAX);
	/* the whole window is the whole file */
	{
		struct seen got;
		long i;

		seen_init(&got);
		assert_int_equal(memmon_trace_reader__for_each(r, seen_cb, &got), NREC);
		for (i = 0; i < NREC; i++)
			assert_int_equal(got.seq[i], all.seq[i]);
		seen_fini(&got);
	}
	check_window(r, &all, first, last);
	check_window(r, &all, last, last);
	check_window(r, &all, last + 1, UINT64_MAX);
	check_window(r, &all, 0, first);
	for (i = 0; i < 40; i++) {
		__u64 a = first + span * i / 40, b = a + span / (1 + i % 7);

		check_window(r, &all, a, b);
	}
	/* a window that skips much, then the whole file again */
	check_window(r, &all, first + span * 9 / 10, UINT64_MAX);
	check_window(r, &all, 0, UINT64_MAX);
	seen_fini(&all);
	memmon_trace_reader__close(r);
}

/* A file without index (the writer was killed): the scan's chunks, alike. */
static void test_window_without_index(void **state)
{
	static __u8 b[8 << 20];
	char cut[160];
	struct memmon_trace_reader *r;
	struct seen all;
	__u64 first, span;
	unsigned int i;
	size_t len;
	FILE *f;

	(void)state;
	f = fopen(path, "rb");
	assert_non_null(f);
	len = fread(b, 1, sizeof(b), f);
	fclose(f);
	snprintf(cut, sizeof(cut), "%s.cut", path);
	f = fopen(cut, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len * 9 / 10, f), len * 9 / 10);
	fclose(f);
	r = memmon_trace_reader__open(cut, NULL);
	assert_non_null(r);
	assert_false(memmon_trace_reader__info(r)->has_index);
	seen_init(&all);
	assert_true(memmon_trace_reader__for_each(r, seen_cb, &all) > NREC / 2);
	first = memmon_trace_reader__info(r)->first_ns;
	span = memmon_trace_reader__info(r)->last_ns - first;
	for (i = 0; i < 10; i++)
		check_window(r, &all, first + span * i / 10,
			     first + span * i / 10 + span / 8);
	seen_fini(&all);
	memmon_trace_reader__close(r);
	unlink(cut);
}

static int count_cb(void *ctx, const struct memmon_rec_header *rec)
{
	(void)rec;
	(*(long *)ctx)++;
	return 0;
}

/* The first chunk damaged: a full pass fails, a window after it does not. */
static void test_window_skips_chunks(void **state)
{
	static __u8 b[8 << 20];
	struct memmon_trace_reader *r;
	struct mtf_block blk;
	__u64 off, last;
	FILE *f;
	size_t len;
	long n = 0;

	(void)state;
	f = fopen(path, "rb");
	assert_non_null(f);
	len = fread(b, 1, sizeof(b), f);
	fclose(f);
	assert_true(len > 0 && len < sizeof(b));
	/* the first block after the file header is META; the next a chunk */
	off = sizeof(struct mtf_file_header);
	memcpy(&blk, b + off, sizeof(blk));
	off += 64 + mtf_align8(blk.payload_size);
	memcpy(&blk, b + off, sizeof(blk));
	assert_int_equal(blk.type, MTF_BLOCK_CHUNK);
	last = blk.last_ns;
	b[off + 64 + 20] ^= 0x40;
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);

	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	/* the whole file: the damage is found */
	assert_int_equal(memmon_trace_reader__for_each(r, count_cb, &n), -EBADMSG);
	/* well after that chunk (and the others' out-of-order tails): never read */
	n = 0;
	assert_int_equal(memmon_trace_reader__set_window(r, last + 10000, UINT64_MAX), 0);
	assert_true(memmon_trace_reader__for_each(r, count_cb, &n) > 0);
	assert_true(n > NREC / 2);
	memmon_trace_reader__close(r);
	write_trace();
}

static void test_window_bad_args(void **state)
{
	struct memmon_trace_reader *r = memmon_trace_reader__open(path, NULL);

	(void)state;
	assert_non_null(r);
	assert_int_equal(memmon_trace_reader__set_window(r, 10, 9), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(memmon_trace_reader__set_window(NULL, 0, 1), -EINVAL);
	memmon_trace_reader__close(r);
}

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/memmon-window-%d.trace", (int)getpid());
	write_trace();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_is_exact),
		cmocka_unit_test(test_window_without_index),
		cmocka_unit_test(test_window_skips_chunks),
		cmocka_unit_test(test_window_bad_args),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
