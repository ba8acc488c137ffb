// SPDX-License-Identifier: GPL-2.0
/*
 * Trace files: write/read round trip (plain and zstd), merge order, the
 * metadata, hundreds of small chunks, truncation at every length and
 * under an open reader, bad records inside sound chunks, random
 * corruption (fixed seed), targeted checksum failures, forward
 * compatibility (unknown blocks, longer headers), writer errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>
#include "internal.h"
#include "trace_format.h"

#define NCPU 3
#define CHUNK_MAX 8192

/* tmpfs when there is one: the fuzz loop writes thousands of files. */
static char dir[64];

struct exp_rec {
	__u64 time;
	__u32 cpu;
	__u32 seq;
};

static struct exp_rec expect[4096];
static unsigned int nexpect;

/* A MARK record carrying seq; size varies with seq. */
static size_t make_rec(__u8 *p, unsigned int cpu, __u64 t, __u32 seq, __u16 type)
{
	struct memmon_rec_mark *m = (void *)p;
	size_t len = 4 + (seq % 5) * 8;
	size_t size = (sizeof(*m) + len + 7) & ~7UL;

	memset(p, 0, size);
	m->hdr.size = (__u32)size;
	m->hdr.type = type;
	m->hdr.cpu = (__u16)cpu;
	m->hdr.time_ns = t;
	m->hdr.tgid = 100 + cpu;
	m->hdr.tid = seq;
	m->len = (__u32)len;
	memcpy(m->data, &seq, 4);
	return size;
}

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

/*
 * Write a file of chunks of up to chunk (<= CHUNK_MAX) bytes, a few per
 * CPU at CHUNK_MAX; fills expect[].
 */
static void write_file_chunks(const char *path, int level, unsigned int nrec,
			      size_t chunk)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = NCPU,
		       .compress_level = level, .realtime_offset_ns = 5);
	struct memmon_trace_writer *w;
	__u8 buf[NCPU][CHUNK_MAX];
	size_t fill[NCPU] = { 0 };
	__u64 t[NCPU] = { 0 };
	unsigned int i, c;

	w = memmon_trace_writer__open(path, &o);
	assert_non_null(w);
	assert_int_equal(memmon_trace_writer__add_meta(w,
		"{\"command\":[\"ls\"],\"kernel\":\"6.1\",\"pids\":[1]}"), 0);
	srand(1234);
	nexpect = 0;
	for (i = 0; i < nrec; i++) {
		c = (unsigned int)rand() % NCPU;
		t[c] += 1 + (unsigned int)rand() % 100;
		if (fill[c] > chunk - 128) {
			assert_int_equal(memmon_trace_writer__add_chunk(w, c, buf[c], fill[c]), 0);
			fill[c] = 0;
		}
		fill[c] += make_rec(buf[c] + fill[c], c, t[c], i, MEMMON_REC_MARK);
		expect[nexpect++] = (struct exp_rec){ t[c], c, i };
	}
	/* a LOST record on cpu 1 and an unknown future type on cpu 2 */
	{
		struct memmon_rec_lost *l = (void *)(buf[1] + fill[1]);

		memset(l, 0, sizeof(*l));
		l->hdr.size = sizeof(*l);
		l->hdr.type = MEMMON_REC_LOST;
		l->hdr.cpu = 1;
		l->hdr.time_ns = t[1] + 1;
		l->count = 42;
		fill[1] += sizeof(*l);
		expect[nexpect++] = (struct exp_rec){ t[1] + 1, 1, UINT32_MAX };
		fill[2] += make_rec(buf[2] + fill[2], 2, t[2] + 1, 9999, 200);
		expect[nexpect++] = (struct exp_rec){ t[2] + 1, 2, 9999 };
	}
	for (c = 0; c < NCPU; c++)
		assert_int_equal(memmon_trace_writer__add_chunk(w, c, buf[c], fill[c]), 0);
	assert_int_equal(memmon_trace_writer__lost(w, 1), 42);
	assert_int_equal(memmon_trace_writer__add_meta(w, "{\"kernel\":\"6.2\",\"end\":true}"), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
}

static void write_file(const char *path, int level, unsigned int nrec)
{
	write_file_chunks(path, level, nrec, CHUNK_MAX);
}

static int exp_cmp(const void *a, const void *b)
{
	const struct exp_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return 0;	/* stable enough: same cpu, same time never here */
}

struct got {
	unsigned int n;
	int bad;
	int stop_at;
};

static int check_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct got *g = ctx;
	const struct exp_rec *e = &expect[g->n];
	__u32 seq = UINT32_MAX;

	if (rec->type != MEMMON_REC_LOST)
		memcpy(&seq, ((const struct memmon_rec_mark *)rec)->data, 4);
	if (g->n >= nexpect || rec->time_ns != e->time || rec->cpu != e->cpu ||
	    seq != e->seq)
		g->bad++;
	g->n++;
	return g->stop_at && (int)g->n == g->stop_at;
}

static void round_trip(int level)
{
	struct memmon_trace_reader *r;
	const struct memmon_trace_info *in;
	struct got g = { 0 };
	char path[256];
	json_t *meta;

	path_of(path, sizeof(path), level ? "z.trace" : "plain.trace");
	write_file(path, level, 2000);
	qsort(expect, nexpect, sizeof(expect[0]), exp_cmp);
	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	in = memmon_trace_reader__info(r);
	assert_true(in->has_index);
	assert_false(in->truncated);
	assert_int_equal(in->nr_cpus, NCPU);
	assert_int_equal(in->nr_records, nexpect);
	assert_int_equal(in->realtime_offset_ns, 5);
	assert_true(in->nr_chunks > NCPU);
	/* every record, in time order, byte for byte what was written */
	assert_int_equal(memmon_trace_reader__for_each(r, check_cb, &g), nexpect);
	assert_int_equal(g.bad, 0);
	/* metadata merged; later blocks override */
	meta = json_loads(memmon_trace_reader__meta(r), 0, NULL);
	assert_non_null(meta);
	assert_string_equal(json_string_value(json_object_get(meta, "kernel")), "6.2");
	assert_true(json_is_array(json_object_get(meta, "command")));
	assert_int_equal(json_integer_value(json_array_get(
		json_object_get(meta, "lost_records_per_cpu"), 1)), 42);
	json_decref(meta);
	/* a second pass starts over; stop after 10 */
	g.n = 0;
	g.stop_at = 10;
	assert_int_equal(memmon_trace_reader__for_each(r, check_cb, &g), 10);
	memmon_trace_reader__close(r);
}

static void test_round_trip_plain(void **state)
{
	(void)state;
	round_trip(0);
}

static void test_round_trip_zstd(void **state)
{
	char p1[256], p2[256];
	struct stat s1, s2;

	(void)state;
	round_trip(3);
	path_of(p1, sizeof(p1), "plain.trace");
	path_of(p2, sizeof(p2), "z.trace");
	write_file(p1, 0, 2000);
	assert_int_equal(stat(p1, &s1), 0);
	assert_int_equal(stat(p2, &s2), 0);
	/* compression did something */
	assert_true(s2.st_size < s1.st_size);
}

static __u8 *slurp(const char *path, size_t *len)
{
	struct stat st;
	__u8 *b;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size + 1);
	assert_int_equal(read(fd, b, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

static void spit(const char *path, const void *b, size_t len)
{
	int fd;

	/* A new file each time: truncating one makes ext4 flush it. */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	close(fd);
}

static int count_cb(void *ctx, const struct memmon_rec_header *rec)
{
	(void)rec;
	(*(long *)ctx)++;
	return 0;
}

/*
 * Open and read a damaged file: it must either work or fail with a
 * message; never crash (ASan watches). Returns records read or -1.
 */
static long try_read(const char *path, bool *truncated)
{
	char err[512] = "";
	LIBMEMMON_OPTS(memmon_trace_reader_opts, o, .errbuf = err,
		       .errbuf_size = sizeof(err));
	struct memmon_trace_reader *r;
	long n = 0, ret;

	r = memmon_trace_reader__open(path, &o);
	if (!r) {
		if (!strstr(err, "offset") && !strstr(err, "not supported"))
			fail_msg("open failed without an offset: %s", err);
		return -1;
	}
	*truncated = memmon_trace_reader__info(r)->truncated;
	ret = memmon_trace_reader__for_each(r, count_cb, &n);
	if (ret < 0) {
		if (!strstr(memmon_trace_reader__errmsg(r), "offset"))
			fail_msg("read failed without an offset: %s",
				 memmon_trace_reader__errmsg(r));
		n = -1;
	} else {
		assert_int_equal(ret, n);
	}
	memmon_trace_reader__close(r);
	return n;
}

/*
 * Hundreds of chunks of 1 KiB, four to a page: the reader releases the
 * passed ones in batches while pages they share with chunks in use are
 * still read; every record still arrives, byte for byte, twice.
 */
static void many_chunks(void)
{
	struct memmon_trace_reader *r;
	struct got g = { 0 };
	char path[256];

	path_of(path, sizeof(path), "many.trace");
	write_file_chunks(path, 0, 4000, 1024);
	qsort(expect, nexpect, sizeof(expect[0]), exp_cmp);
	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	assert_true(memmon_trace_reader__info(r)->nr_chunks > 200);
	assert_int_equal(memmon_trace_reader__for_each(r, check_cb, &g), nexpect);
	assert_int_equal(g.bad, 0);
	g.n = 0;
	assert_int_equal(memmon_trace_reader__for_each(r, check_cb, &g), nexpect);
	assert_int_equal(g.bad, 0);
	memmon_trace_reader__close(r);
}

static void test_many_chunks(void **state)
{
	(void)state;
	many_chunks();
}

static void test_truncated_every_length(void **state)
{
	char path[256], cut[256];
	size_t len, l;
	__u8 *b;
	unsigned int ok = 0;

	(void)state;
	path_of(path, sizeof(path), "small.trace");
	path_of(cut, sizeof(cut), "cut.trace");
	write_file(path, 0, 60);
	b = slurp(path, &len);
	for (l = 0; l < len; l++) {
		bool trunc = false;
		long n;

		spit(cut, b, l);
		n = try_read(cut, &trunc);
		if (n >= 0) {
			/* opened: it must say it was truncated */
			if (!trunc)
				fail_msg("length %zu: not reported truncated", l);
			assert_true(n <= (long)nexpect);
			ok++;
		} else {
			/* only a file without a whole header fails to open */
			assert_true(l < sizeof(struct mtf_file_header));
		}
	}
	/* most cut points leave a readable prefix */
	assert_true(ok > len / 2);
	free(b);
}

static void test_fuzz_corruption(void **state)
{
	char path[256], bad[256];
	size_t len;
	__u8 *b, *c;
	unsigned int i, k, failed = 0;

	(void)state;
	path_of(path, sizeof(path), "fuzz.trace");
	path_of(bad, sizeof(bad), "fuzzed.trace");
	write_file(path, 0, 300);
	b = slurp(path, &len);
	c = malloc(len);
	srand(20261129);
	for (i = 0; i < 1500; i++) {
		bool trunc;
		unsigned int nflip = 1 + (unsigned int)rand() % 4;

		memcpy(c, b, len);
		for (k = 0; k < nflip; k++)
			c[(size_t)rand() % len] ^= (__u8)(1 + rand() % 255);
		spit(bad, c, len);
		if (try_read(bad, &trunc) < 0)
			failed++;
	}
	/* a flipped byte almost always hits a checksum */
	assert_true(failed > 1000);
	free(b);
	free(c);
}

/* A flipped payload byte is found, and the message names that chunk. */
static void test_chunk_checksum(void **state)
{
	char path[256], err[512], want[64];
	struct mtf_trailer t;
	struct memmon_trace_reader *r;
	size_t len;
	__u8 *b;
	__u64 off;
	long n = 0;

	(void)state;
	path_of(path, sizeof(path), "crc.trace");
	write_file(path, 0, 200);
	b = slurp(path, &len);
	memcpy(&t, b + len - sizeof(t), sizeof(t));
	/* the first block after the file header is META; the next a chunk */
	off = sizeof(struct mtf_file_header);
	off += mtf_align8(((struct mtf_block *)(b + off))->payload_size) + 64;
	assert_int_equal(((struct mtf_block *)(b + off))->type, MTF_BLOCK_CHUNK);
	b[off + 64 + 30] ^= 0x40;
	spit(path, b, len);
	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	assert_int_equal(memmon_trace_reader__for_each(r, count_cb, &n), -EBADMSG);
	snprintf(want, sizeof(want), "chunk at offset %llu", (unsigned long long)off);
	snprintf(err, sizeof(err), "%s", memmon_trace_reader__errmsg(r));
	if (!strstr(err, want) || !strstr(err, "checksum"))
		fail_msg("message \"%s\" does not name %s", err, want);
	memmon_trace_reader__close(r);
	free(b);
}

/*
 * A bad record inside a chunk whose checksums hold (a file not written by
 * this library): a bad length skips the rest of its chunk and is counted;
 * a sound length with bad contents is delivered, for the decoder to refuse.
 * The pass goes on either way.
 */
static void test_bad_record_in_chunk(void **state)
{
	static const struct {
		const char *what;
		bool frame;		/* the length is broken */
	} cases[] = {
		{ "type 0: delivered, for the decoder", false },
		{ "size 12", true },
	};
	struct memmon_trace_reader *r;
	struct memmon_rec_header *h;
	struct mtf_block *blk;
	char path[256];
	size_t len, i;
	__u64 off, skipped;
	long n;
	__u8 *b;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		path_of(path, sizeof(path), "badrec.trace");
		write_file(path, 0, 200);
		b = slurp(path, &len);
		off = sizeof(struct mtf_file_header);
		off += mtf_align8(((struct mtf_block *)(b + off))->payload_size) + 64;
		blk = (struct mtf_block *)(b + off);
		assert_int_equal(blk->type, MTF_BLOCK_CHUNK);
		assert_int_equal(blk->compression, MTF_COMP_NONE);
		h = (struct memmon_rec_header *)(b + off + blk->header_size);
		if (cases[i].frame)
			h->size = 12;
		else
			h->type = 0;
		skipped = cases[i].frame ? blk->nr_records : 0;
		blk->payload_crc = mtf_crc32(h, blk->payload_size);
		blk->header_crc = 0;
		blk->header_crc = mtf_crc32(blk, blk->header_size);
		spit(path, b, len);
		free(b);
		r = memmon_trace_reader__open(path, NULL);
		assert_non_null(r);
		n = 0;
		/* expect: every other record, no error, the bad one counted */
		if (memmon_trace_reader__for_each(r, count_cb, &n) !=
		    (long)(nexpect - skipped) || n != (long)(nexpect - skipped))
			fail_msg("%s: %ld records, want %llu", cases[i].what, n,
				 (unsigned long long)(nexpect - skipped));
		/* delivered or skipped with its chunk: counted either way */
		assert_int_equal(memmon_trace_reader__bad_records(r), 1);
		memmon_trace_reader__close(r);
	}
}

struct cutter {
	const char *path;
	off_t to;
	long n, at;
};

static int cut_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct cutter *c = ctx;

	(void)rec;
	if (++c->n == c->at)
		assert_int_equal(truncate(c->path, c->to), 0);
	return 0;
}

/*
 * The file cut short while a reader is in the middle of it (an open
 * reader, then a pass that truncates from its callback): no SIGBUS, the
 * records read so far, then -EBADMSG naming where the file ended.
 */
static void test_truncated_under_reader(void **state)
{
	struct memmon_trace_reader *r;
	struct cutter c = { 0 };
	char path[256], want[64];
	struct stat st;
	long ret;

	(void)state;
	path_of(path, sizeof(path), "cut.trace");
	write_file_chunks(path, 0, 4000, 1024);
	assert_int_equal(stat(path, &st), 0);
	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	assert_true(memmon_trace_reader__info(r)->has_index);
	c.path = path;
	c.to = st.st_size / 2 & ~(off_t)4095;
	c.at = 100;
	ret = memmon_trace_reader__for_each(r, cut_cb, &c);
	/* expect: a clean error after a partial result, not a signal */
	assert_int_equal(ret, -EBADMSG);
	assert_true(c.n > c.at && c.n < (long)nexpect);
	snprintf(want, sizeof(want), "end of file at offset %llu",
		 (unsigned long long)c.to);
	if (!strstr(memmon_trace_reader__errmsg(r), want))
		fail_msg("message \"%s\" does not say \"%s\"",
			 memmon_trace_reader__errmsg(r), want);
	/* expect: a second pass fails the same way, still no signal */
	c.at = 0;
	assert_int_equal(memmon_trace_reader__for_each(r, cut_cb, &c), -EBADMSG);
	memmon_trace_reader__close(r);
}

static void test_bad_files(void **state)
{
	char path[256], err[256];
	LIBMEMMON_OPTS(memmon_trace_reader_opts, o, .errbuf = err,
		       .errbuf_size = sizeof(err));
	struct mtf_file_header h;
	__u8 junk[200];

	(void)state;
	path_of(path, sizeof(path), "junk.trace");
	memset(junk, 'x', sizeof(junk));
	spit(path, junk, sizeof(junk));
	/* not a trace file */
	assert_null(memmon_trace_reader__open(path, &o));
	assert_int_equal(errno, EBADMSG);
	assert_non_null(strstr(err, "not a memmon trace file"));

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MTF_MAGIC, 8);
	h.version_major = 2;
	h.header_size = sizeof(h);
	spit(path, &h, sizeof(h));
	/* a future major version: refused by name */
	assert_null(memmon_trace_reader__open(path, &o));
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_non_null(strstr(err, "version 2.0"));

	/* missing file: ENOENT */
	path_of(path, sizeof(path), "absent.trace");
	assert_null(memmon_trace_reader__open(path, &o));
	assert_int_equal(errno, ENOENT);
}

/* Unknown block types and a longer file header are skipped (scan mode). */
static void test_forward_compat(void **state)
{
	char path[256], path2[256];
	struct mtf_file_header h;
	struct mtf_trailer t;
	struct mtf_block ub;
	struct got g = { 0 };
	struct memmon_trace_reader *r;
	size_t len, n = 0;
	__u8 *b, *o, upay[16] = "future payload!";
	__u32 crc;

	(void)state;
	path_of(path, sizeof(path), "fc.trace");
	path_of(path2, sizeof(path2), "fc2.trace");
	write_file(path, 0, 100);
	qsort(expect, nexpect, sizeof(expect[0]), exp_cmp);
	b = slurp(path, &len);
	memcpy(&t, b + len - sizeof(t), sizeof(t));
	o = malloc(len + 200);
	/* a 72-byte header: 8 more bytes a newer writer knows about */
	memcpy(&h, b, sizeof(h));
	h.header_size = 72;
	h.header_crc = 0;
	memcpy(o, &h, sizeof(h));
	memset(o + 64, 0, 8);
	crc = (__u32)crc32(crc32(0, NULL, 0), o, 72);
	memcpy(o + offsetof(struct mtf_file_header, header_crc), &crc, 4);
	n = 72;
	/* then an unknown block type 9 */
	memset(&ub, 0, sizeof(ub));
	ub.magic = MTF_BLOCK_MAGIC;
	ub.type = 9;
	ub.header_size = 64;
	ub.payload_size = sizeof(upay);
	ub.payload_crc = (__u32)crc32(crc32(0, NULL, 0), upay, sizeof(upay));
	ub.header_crc = (__u32)crc32(crc32(0, NULL, 0), (void *)&ub, sizeof(ub));
	memcpy(o + n, &ub, sizeof(ub));
	memcpy(o + n + 64, upay, sizeof(upay));
	n += 64 + sizeof(upay);
	/* then the old blocks up to the index (no index: offsets moved) */
	memcpy(o + n, b + 64, t.index_offset - 64);
	n += t.index_offset - 64;
	spit(path2, o, n);
	r = memmon_trace_reader__open(path2, NULL);
	assert_non_null(r);
	/* read by scanning, so reported as truncated, but all records there */
	assert_false(memmon_trace_reader__info(r)->has_index);
	assert_true(memmon_trace_reader__info(r)->truncated);
	assert_int_equal(memmon_trace_reader__for_each(r, check_cb, &g), nexpect);
	assert_int_equal(g.bad, 0);
	memmon_trace_reader__close(r);
	free(o);
	free(b);
}

static void test_writer_errors(void **state)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 2);
	struct memmon_trace_writer *w;
	char path[256];
	__u8 rec[64];
	size_t len;

	(void)state;
	assert_int_equal(memmon_trace_writer__close(NULL), 0);
	/* the disk is full: the header write fails, ENOSPC */
	assert_null(memmon_trace_writer__open("/dev/full", &o));
	assert_int_equal(errno, ENOSPC);
	o.nr_cpus = 0;
	assert_null(memmon_trace_writer__open("/tmp/x", &o));
	assert_int_equal(errno, EINVAL);
	o.nr_cpus = 2;
	path_of(path, sizeof(path), "w.trace");
	w = memmon_trace_writer__open(path, &o);
	assert_non_null(w);
	make_rec(rec, 0, 1, 1, MEMMON_REC_MARK);
	/* not whole records */
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, rec, 20), -EBADMSG);
	((struct memmon_rec_header *)rec)->size = 12;
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, rec, 32), -EBADMSG);
	/* whole but short for its type: written, the decoder refuses it */
	len = make_rec(rec, 0, 1, 0, MEMMON_REC_LOST);
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, rec, len), 0);
	assert_int_equal(memmon_trace_writer__lost(w, 0), 0);
	/* cpu out of range */
	make_rec(rec, 0, 1, 1, MEMMON_REC_MARK);
	assert_int_equal(memmon_trace_writer__add_chunk(w, 2, rec, 32), -EINVAL);
	/* metadata must be a JSON object */
	assert_int_equal(memmon_trace_writer__add_meta(w, "[1,2]"), -EINVAL);
	assert_int_equal(memmon_trace_writer__add_meta(w, "{bad"), -EINVAL);
	assert_int_equal(memmon_trace_writer__close(w), 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/dev/shm/memmon-trace-test-XXXXXX");
	if (mkdtemp(dir))
		return 0;
	strcpy(dir, "/tmp/memmon-trace-test-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * The format says "zlib's CRC-32" (docs/trace-format.md); the library
 * computes it with ISA-L. Same value at every length and alignment around
 * the vector code's block sizes, and on the standard check string.
 */
typedef __u32 (*crc_fn)(__u32 crc, const void *p, size_t len);

/* mtf_crc32_update() and both implementations it chooses from. */
static __u32 crc_chosen(__u32 crc, const void *p, size_t len)
{
	return mtf_crc32_update(crc, p, len);
}

static void test_crc_is_zlibs(void **state)
{
	static const char check[] = "123456789";
	static const crc_fn fns[] = { crc_chosen, mtf_crc32_isal, mtf_crc32_zlib };
	unsigned char *buf = malloc(4096 + 64);
	size_t off, len;
	unsigned int f;

	(void)state;
	assert_non_null(buf);
	for (len = 0; len < 4096 + 64; len++)
		buf[len] = (unsigned char)(len * 131 + (len >> 7));
	print_message("# carry-less multiply: %s\n", mtf_crc32_has_clmul() ?
		      "yes (ISA-L)" : "no (zlib)");
	for (f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
		assert_int_equal(fns[f](0, check, 9), 0xcbf43926U);
		for (off = 0; off < 16; off++)
			for (len = 0; len <= 4096; len += (len < 300 ? 1 : 61))
				assert_int_equal(fns[f](0, buf + off, len),
						 (__u32)crc32(0, buf + off, (uInt)len));
		/* continued over two pieces, as the writer does for the index */
		for (len = 0; len <= 4096; len += 97)
			assert_int_equal(fns[f](fns[f](0, buf, len), buf + len, 4096 - len),
					 (__u32)crc32(0, buf, 4096));
	}
	assert_int_equal(mtf_crc32(check, 9), 0xcbf43926U);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_is_zlibs),
		cmocka_unit_test(test_round_trip_plain),
		cmocka_unit_test(test_round_trip_zstd),
		cmocka_unit_test(test_many_chunks),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_fuzz_corruption),
		cmocka_unit_test(test_chunk_checksum),
		cmocka_unit_test(test_bad_record_in_chunk),
		cmocka_unit_test(test_truncated_under_reader),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_forward_compat),
		cmocka_unit_test(test_writer_errors),
	};

	return cmocka_run_group_tests_name("lib_trace", tests, setup, teardown);
}
