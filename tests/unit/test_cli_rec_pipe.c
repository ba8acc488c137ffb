// SPDX-License-Identifier: GPL-2.0
/*
 * tools/rec_pipe.c: the reader on a thread of its own gives the consumer
 * exactly what memmon_trace_reader__for_each() gives (same records, same
 * bytes, same order) at every batch size, including records larger than a
 * batch; stopping early and the consumer's errors end both threads; the
 * reader's error on a damaged chunk arrives after every record before it.
 * Built twice: with ASan/UBSan (as every CLI test) and with TSan
 * (test_cli_rec_pipe_tsan) for the handover between the threads.
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
#include <sys/stat.h>
#include <cmocka.h>
#include <memmon/trace.h>
#include "rec_pipe.h"

#define NCPU	3
#define NREC	6000

static char path[128];

/* A MARK record of size ~ 32..4120 bytes carrying seq. */
static size_t make_mark(__u8 *p, unsigned int cpu, __u64 t, __u32 seq)
{
	struct memmon_rec_mark *m = (void *)p;
	size_t len = seq % 97 == 0 ? 4000 : 4 + (seq % 7) * 8;
	size_t size = (sizeof(*m) + len + 7) & ~7UL;

	memset(p, 0, size);
	m->hdr.size = (__u32)size;
	m->hdr.type = MEMMON_REC_MARK;
	m->hdr.cpu = (__u16)cpu;
	m->hdr.time_ns = t;
	m->hdr.tgid = 100 + cpu;
	m->hdr.tid = seq;
	m->len = (__u32)len;
	memset(m->data, (int)(seq & 0xff), len);
	return size;
}

static void write_trace(void)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = NCPU);
	struct memmon_trace_writer *w;
	static __u8 buf[NCPU][64 * 1024];
	size_t fill[NCPU] = { 0 };
	__u64 t[NCPU] = { 0 };
	unsigned int i, c;

	w = memmon_trace_writer__open(path, &o);
	assert_non_null(w);
	srand(42);
	for (i = 0; i < NREC; i++) {
		c = (unsigned int)rand() % NCPU;
		t[c] += 1 + (unsigned int)rand() % 50;
		if (fill[c] + 8192 > sizeof(buf[c])) {
			assert_int_equal(memmon_trace_writer__add_chunk(w, c, buf[c], fill[c]), 0);
			fill[c] = 0;
		}
		fill[c] += make_mark(buf[c] + fill[c], c, t[c], i);
	}
	for (c = 0; c < NCPU; c++)
		if (fill[c])
			assert_int_equal(memmon_trace_writer__add_chunk(w, c, buf[c], fill[c]), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
}

/* Everything a consumer saw, concatenated, and when to stop. */
struct seen {
	__u8 *bytes;
	size_t len, cap;
	long n;
	long stop_at;
	int stop_ret;
};

static int record_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct seen *s = ctx;

	if (s->len + rec->size > s->cap) {
		s->cap = (s->cap + rec->size) * 2;
		s->bytes = realloc(s->bytes, s->cap);
		assert_non_null(s->bytes);
	}
	memcpy(s->bytes + s->len, rec, rec->size);
	s->len += rec->size;
	s->n++;
	return s->n == s->stop_at ? s->stop_ret : 0;
}

static struct memmon_trace_reader *open_trace(void)
{
	struct memmon_trace_reader *r = memmon_trace_reader__open(path, NULL);

	assert_non_null(r);
	return r;
}

/* The single-threaded reader's view: the reference. */
static long reference(struct seen *ref, long stop_at, int stop_ret)
{
	struct memmon_trace_reader *r = open_trace();
	long n;

	memset(ref, 0, sizeof(*ref));
	ref->stop_at = stop_at;
	ref->stop_ret = stop_ret;
	n = memmon_trace_reader__for_each(r, record_cb, ref);
	memmon_trace_reader__close(r);
	return n;
}

static void test_same_as_reader(void **state)
{
	static const size_t batches[] = { 0, 64, 1000, 4096, 100000 };
	struct seen ref, got;
	unsigned int i;
	long n;

	(void)state;
	n = reference(&ref, 0, 0);
	assert_int_equal(n, NREC);
	for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		struct memmon_trace_reader *r = open_trace();

		memset(&got, 0, sizeof(got));
		assert_int_equal(rec_pipe_for_each(r, record_cb, &got, batches[i]), NREC);
		assert_int_equal(got.n, NREC);
		assert_int_equal(got.len, ref.len);
		assert_memory_equal(got.bytes, ref.bytes, ref.len);
		/* The reader can go again afterwards (the thread is gone). */
		free(got.bytes);
		memset(&got, 0, sizeof(got));
		assert_int_equal(rec_pipe_for_each(r, record_cb, &got, batches[i]), NREC);
		assert_int_equal(got.len, ref.len);
		free(got.bytes);
		memmon_trace_reader__close(r);
	}
	free(ref.bytes);
}

/* fn > 0 stops, fn < 0 is returned; both threads end (else: a hang). */
static void test_stop_and_error(void **state)
{
	static const long at[] = { 1, 2, 777, NREC - 1, NREC };
	struct seen ref, got;
	unsigned int i, k;

	(void)state;
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		for (k = 0; k < 2; k++) {
			int ret = k ? -EIO : 1;
			struct memmon_trace_reader *r = open_trace();
			long want = reference(&ref, at[i], ret);

			memset(&got, 0, sizeof(got));
			got.stop_at = at[i];
			got.stop_ret = ret;
			assert_int_equal(rec_pipe_for_each(r, record_cb, &got, 512),
					 k ? -EIO : want);
			assert_int_equal(got.n, at[i]);
			assert_int_equal(got.len, ref.len);
			assert_memory_equal(got.bytes, ref.bytes, ref.len);
			free(got.bytes);
			free(ref.bytes);
			memmon_trace_reader__close(r);
		}
	}
}

/* A damaged chunk: -EBADMSG, after the same records the reader gives. */
static void test_reader_error(void **state)
{
	struct memmon_trace_reader *r;
	struct seen ref, got;
	struct stat st;
	FILE *f;
	int c;

	(void)state;
	assert_int_equal(stat(path, &st), 0);
	f = fopen(path, "r+b");
	assert_non_null(f);
	/* a byte in the middle of the file: inside some chunk's payload */
	assert_int_equal(fseek(f, st.st_size / 2, SEEK_SET), 0);
	c = fgetc(f);
	assert_int_equal(fseek(f, st.st_size / 2, SEEK_SET), 0);
	fputc(c ^ 0x5a, f);
	fclose(f);

	assert_int_equal(reference(&ref, 0, 0), -EBADMSG);
	assert_true(ref.n > 0 && ref.n < NREC);
	r = open_trace();
	memset(&got, 0, sizeof(got));
	assert_int_equal(rec_pipe_for_each(r, record_cb, &got, 0), -EBADMSG);
	assert_non_null(strstr(memmon_trace_reader__errmsg(r), "checksum"));
	assert_int_equal(got.n, ref.n);
	assert_int_equal(got.len, ref.len);
	assert_memory_equal(got.bytes, ref.bytes, ref.len);
	free(got.bytes);
	free(ref.bytes);
	memmon_trace_reader__close(r);
	write_trace();		/* undamaged again for any test after */
}

static int setup(void **state)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	(void)state;
	snprintf(path, sizeof(path), "%s/memmon-rec-pipe-%d.trace", tmp, (int)getpid());
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
		cmocka_unit_test(test_same_as_reader),
		cmocka_unit_test(test_stop_and_error),
		cmocka_unit_test(test_reader_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
