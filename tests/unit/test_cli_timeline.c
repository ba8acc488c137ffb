// SPDX-License-Identifier: GPL-2.0
/*
 * memmon timeline on synthetic traces: a small story with every record
 * kind, whose page data (the JSON block of the HTML) must say exactly what
 * was written; a long, busy trace whose page stays small while every
 * fault and call is still counted (the grid coarsens, the detail is a
 * capped sample); hostile text; a corrupt trace and bad flags.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "test_cli_run.h"
#include "timeline_agg.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })

static char dir[] = "/tmp/memmon-timeline-XXXXXX";
static char story[128], html[128];
static struct run res;

struct chunkbuf {
	__u8 b[2][16384];
	size_t n[2];
};

static void *put(struct chunkbuf *cb, unsigned int cpu, __u16 type, size_t size,
		 __u64 t, __u32 tgid, __u32 tid)
{
	struct memmon_rec_header *h = (void *)(cb->b[cpu] + cb->n[cpu]);

	size = (size + 7) & ~7UL;
	assert_true(cb->n[cpu] + size <= sizeof(cb->b[cpu]));
	memset(h, 0, size);
	h->size = (__u32)size;
	h->type = type;
	h->cpu = (__u16)cpu;
	h->time_ns = t;
	h->tgid = tgid;
	h->tid = tid;
	cb->n[cpu] += size;
	return h;
}

static struct memmon_rec_syscall *sys(struct chunkbuf *cb, unsigned int cpu, __u64 t,
				      __u32 tgid, __u32 tid, __u32 nr, __u64 a0,
				      __u64 a1, __u64 a2, __u64 a3, __s64 ret)
{
	struct memmon_rec_syscall *s = put(cb, cpu, MEMMON_REC_SYSCALL, sizeof(*s), t,
					   tgid, tid);

	s->sys = nr;
	s->args[0] = a0;
	s->args[1] = a1;
	s->args[2] = a2;
	s->args[3] = a3;
	s->args[4] = (__u64)-1;
	s->ret = ret;
	s->duration_ns = 2000;
	return s;
}

static void fault(struct chunkbuf *cb, unsigned int cpu, __u64 t, __u32 tgid,
		  __u32 tid, __u32 cls, bool major, __u64 dur)
{
	struct memmon_rec_fault *f = put(cb, cpu, MEMMON_REC_FAULT, sizeof(*f), t,
					 tgid, tid);

	f->addr = 0x100000 + t;
	f->access = MEMMON_FAULT_WRITE;
	f->fclass = cls;
	f->flags = major ? MEMMON_FAULTF_MAJOR : 0;
	f->duration_ns = dur;
}

static void mark(struct chunkbuf *cb, unsigned int cpu, __u64 t, __u32 tgid,
		 const char *text)
{
	size_t len = strlen(text);
	struct memmon_rec_mark *m = put(cb, cpu, MEMMON_REC_MARK, sizeof(*m) + len + 1,
					t, tgid, tgid);

	m->len = (__u32)len;
	memcpy(m->data, text, len);
}

static void flush(struct memmon_trace_writer *w, struct chunkbuf *cb)
{
	unsigned int c;

	for (c = 0; c < 2; c++) {
		if (cb->n[c])
			assert_int_equal(memmon_trace_writer__add_chunk(w, c, cb->b[c],
									cb->n[c]), 0);
		cb->n[c] = 0;
	}
}

/*
 * The story (times in us from 1 s): 100 execs /usr/bin/app, maps (one
 * failed), faults of every class, starts thread 102, forks 101; 101 execs
 * /bin/child, calls brk/munmap/mremap/mlock/madvise/mprotect/fsync,
 * exits; cpu1 loses 5 events between 40 and 45 us; two markers; an RSS
 * record; a record of a future type.
 */
static void write_story(const char *p)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 2,
		       .realtime_offset_ns = 1700000000LL * 1000000000LL);
	struct memmon_trace_writer *w = memmon_trace_writer__open(p, &o);
	struct chunkbuf *cb = calloc(1, sizeof(*cb));
	const __u64 T = 1000000000ULL;
	struct memmon_rec_exec *e;
	struct memmon_rec_fork *fk;
	struct memmon_rec_lost *l;
	struct memmon_rec_exit *x;
	struct memmon_rec_rss *r;
	struct memmon_rec_syscall *s;

	assert_non_null(w);
	assert_non_null(cb);
	e = put(cb, 0, MEMMON_REC_EXEC, sizeof(*e) + 16, T + 1000, 100, 100);
	e->path_len = 12;
	memcpy(e->path, "/usr/bin/app", 12);
	sys(cb, 0, T + 2000, 100, 100, MEMMON_SYS_MMAP, 0, 8192, 3, 0x22, 0x10000);
	sys(cb, 0, T + 3000, 100, 100, MEMMON_SYS_MMAP, 0, 1ULL << 40, 3, 0x22, -ENOMEM);
	fault(cb, 0, T + 4000, 100, 100, MEMMON_FCLASS_ANON, false, 300);
	fault(cb, 0, T + 5000, 100, 100, MEMMON_FCLASS_ANON, false, 700);
	fault(cb, 0, T + 6000, 100, 100, MEMMON_FCLASS_FILE, true, 70000);
	fault(cb, 0, T + 7000, 100, 100, MEMMON_FCLASS_SHMEM, false, 900);
	fault(cb, 0, T + 8000, 100, 100, MEMMON_FCLASS_SWAP, true, 2000000);
	fault(cb, 0, T + 9000, 100, 100, MEMMON_FCLASS_NONE, false, 100);
	r = put(cb, 0, MEMMON_REC_RSS, sizeof(*r), T + 10000, 100, 100);
	r->anon = 1 << 20;
	r->file = 2 << 20;
	r->shmem = 4096;
	r->swap = 0;
	fk = put(cb, 0, MEMMON_REC_FORK, sizeof(*fk), T + 11000, 100, 100);
	fk->child_tgid = 100;
	fk->child_tid = 102;
	fk->flags = MEMMON_FORKF_THREAD | MEMMON_FORKF_VM;
	sys(cb, 1, T + 12000, 100, 102, MEMMON_SYS_MADVISE, 0x10000, 4096, 4, 0, 0);
	x = put(cb, 1, MEMMON_REC_EXIT, sizeof(*x), T + 13000, 100, 102);
	fk = put(cb, 0, MEMMON_REC_FORK, sizeof(*fk), T + 20000, 100, 100);
	fk->child_tgid = 101;
	fk->child_tid = 101;
	mark(cb, 0, T + 21000, 100, "phase two");
	e = put(cb, 1, MEMMON_REC_EXEC, sizeof(*e) + 16, T + 22000, 101, 101);
	e->path_len = 10;
	memcpy(e->path, "/bin/child", 10);
	s = sys(cb, 1, T + 23000, 101, 101, MEMMON_SYS_BRK, 0x521000, 0, 0, 0, 0x521000);
	s->aux[0] = 0x500000;
	s->aux[1] = 0x521000;
	sys(cb, 1, T + 24000, 101, 101, MEMMON_SYS_MUNMAP, 0x10000, 8192, 0, 0, 0);
	sys(cb, 1, T + 25000, 101, 101, MEMMON_SYS_MREMAP, 0x20000, 4096, 8192, 1, 0x30000);
	sys(cb, 1, T + 26000, 101, 101, MEMMON_SYS_MLOCK, 0x30000, 8192, 0, 0, 0);
	sys(cb, 1, T + 27000, 101, 101, MEMMON_SYS_MPROTECT, 0x30000, 8192, 1, 0, -EACCES);
	sys(cb, 1, T + 28000, 101, 101, MEMMON_SYS_FSYNC, 3, 0, 0, 0, 0);
	l = put(cb, 1, MEMMON_REC_LOST, sizeof(*l), T + 46000, 0, 0);
	l->count = 5;
	l->first_ns = T + 40000;
	l->last_ns = T + 45000;
	put(cb, 1, 99, 48, T + 47000, 103, 103);	/* a future record type */
	x = put(cb, 1, MEMMON_REC_EXIT, sizeof(*x), T + 50000, 101, 101);
	x->flags = MEMMON_EXITF_GROUP;
	x->code = 3 << 8;
	/* hostile text: the page must neither break nor end its script */
	mark(cb, 0, T + 60000, 100, "</script><b>\"x\" \xff end");
	flush(w, cb);
	assert_int_equal(memmon_trace_writer__close(w), 0);
	free(cb);
}

/* The JSON block of a page, parsed. */
static json_t *page_data(const char *p)
{
	static const char open_tag[] = "<script type=\"application/json\" id=\"memmon-data\">";
	FILE *f = fopen(p, "r");
	char *buf, *a, *b;
	json_error_t je;
	json_t *j;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	/* self-contained: nothing fetched */
	assert_null(strstr(buf, "http://"));
	assert_null(strstr(buf, "https://"));
	assert_null(strstr(buf, " src="));
	a = strstr(buf, open_tag);
	assert_non_null(a);
	a += strlen(open_tag);
	b = strstr(a, "</script>");
	assert_non_null(b);
	*b = '\0';
	j = json_loads(a, 0, &je);
	if (!j)
		fail_msg("page JSON: %s at %d", je.text, je.position);
	/* exactly one data block, and the page goes on with the script */
	assert_non_null(strstr(b + 1, "<script>"));
	free(buf);
	return j;
}

static json_int_t geti(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		fail_msg("no integer \"%s\"", k);
	return json_integer_value(v);
}

static json_t *proc_by_tgid(json_t *j, json_int_t tgid)
{
	json_t *p;
	size_t i;

	json_array_foreach(json_object_get(j, "processes"), i, p)
		if (geti(p, "tgid") == tgid)
			return p;
	fail_msg("no process %lld", (long long)tgid);
	return NULL;
}

/* Column of the bucket rows (see tools/timeline_out.c), summed. */
enum { COL_FAULT = 1, COL_CALL = COL_FAULT + 2 * TL_C__COUNT,
       COL_FAILED = COL_CALL + TL_K__COUNT, COL_MAPPED, COL_UNMAPPED,
       COL_LAT, COL_RSS = COL_LAT + TL_LAT, ROW_LEN = COL_RSS };

static json_int_t col_sum(json_t *p, size_t col)
{
	json_int_t s = 0;
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(p, "buckets"), i, r) {
		assert_true(json_array_size(r) == ROW_LEN || json_array_size(r) == ROW_LEN + 4);
		s += json_integer_value(json_array_get(r, col));
	}
	return s;
}

static void test_story(void **state)
{
	json_t *j, *p, *q, *t;
	json_int_t lat = 0;
	size_t i;

	(void)state;
	run_memmon(&res, NULL, NULL, A("timeline", story, "-o", html, "--title", "a <story>"));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.err, "26 records, 2 processes"));
	j = page_data(html);
	assert_string_equal(json_string_value(json_object_get(j, "title")), "a <story>");
	assert_int_equal(geti(j, "records"), 26);
	assert_int_equal(geti(j, "duration"), 59000);
	assert_true(json_is_true(json_object_get(j, "has_rt")));
	assert_int_equal(geti(j, "rt0_ms"), 1700000001000LL);
	/* the future type made no lane, as it makes no process in report */
	assert_int_equal(json_array_size(json_object_get(j, "processes")), 2);

	p = proc_by_tgid(j, 100);
	assert_string_equal(json_string_value(json_object_get(p, "exe")), "/usr/bin/app");
	assert_int_equal(geti(p, "parent"), 0);
	assert_false(json_is_true(json_object_get(p, "exited")));
	q = json_object_get(json_object_get(p, "calls"), "mmap");
	assert_int_equal(geti(q, "count"), 2);
	assert_int_equal(geti(q, "failed"), 1);
	assert_int_equal(geti(json_object_get(json_object_get(p, "faults"), "file"), "major"), 1);
	assert_int_equal(geti(json_object_get(json_object_get(p, "faults"), "swap"), "major"), 1);
	assert_int_equal(geti(json_object_get(json_object_get(p, "faults"), "none"), "minor"), 1);
	assert_int_equal(geti(p, "faults_total"), 6);
	/* buckets by class: anon 2 minor, file 1 major, shmem 1, swap 1 major,
	 * other (none) 1
	 */
	assert_int_equal(col_sum(p, COL_FAULT + 2 * TL_C_ANON), 2);
	assert_int_equal(col_sum(p, COL_FAULT + 2 * TL_C_FILE + 1), 1);
	assert_int_equal(col_sum(p, COL_FAULT + 2 * TL_C_SHMEM), 1);
	assert_int_equal(col_sum(p, COL_FAULT + 2 * TL_C_SWAP + 1), 1);
	assert_int_equal(col_sum(p, COL_FAULT + 2 * TL_C_OTHER), 1);
	assert_int_equal(col_sum(p, COL_CALL + TL_K_MMAP), 2);
	assert_int_equal(col_sum(p, COL_CALL + TL_K_MADVISE), 1);
	assert_int_equal(col_sum(p, COL_FAILED), 1);
	assert_int_equal(col_sum(p, COL_MAPPED), 8192);
	for (i = 0; i < TL_LAT; i++)
		lat += col_sum(p, COL_LAT + i);
	assert_int_equal(lat, 6);
	/* 300 ns < 512; 2 ms falls in [2^20, 2^21) ns: bucket 11... 2^(k+9) */
	assert_int_equal(col_sum(p, COL_LAT + 0), 2);
	assert_int_equal(col_sum(p, COL_LAT + 12), 1);
	/* the RSS record: its bucket row carries the four values */
	json_array_foreach(json_object_get(p, "buckets"), i, q)
		if (json_array_size(q) == ROW_LEN + 4)
			break;
	assert_int_equal(json_integer_value(json_array_get(q, COL_RSS)), 1 << 20);
	assert_int_equal(json_integer_value(json_array_get(q, COL_RSS + 1)), 2 << 20);
	/* threads: 100 and 102, which exited */
	assert_int_equal(json_array_size(json_object_get(p, "threads")), 2);
	t = json_array_get(json_object_get(p, "threads"), 1);
	assert_int_equal(geti(t, "tid"), 102);
	assert_true(json_is_true(json_object_get(t, "exited")));
	assert_int_equal(geti(t, "calls"), 1);
	/* events: exec at 0, fork of 101 at 19 us */
	q = json_object_get(p, "events");
	assert_int_equal(json_array_size(q), 2);
	assert_string_equal(json_string_value(json_array_get(json_array_get(q, 0), 2)),
			    "/usr/bin/app");
	assert_int_equal(json_integer_value(json_array_get(json_array_get(q, 1), 0)), 19000);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(q, 1), 1)), 101);

	p = proc_by_tgid(j, 101);
	assert_string_equal(json_string_value(json_object_get(p, "exe")), "/bin/child");
	assert_int_equal(geti(p, "parent"), 100);
	assert_int_equal(geti(p, "start"), 19000);
	assert_true(json_is_true(json_object_get(p, "exited")));
	assert_string_equal(json_string_value(json_object_get(p, "exit_text")), "exited 3");
	for (i = 0; i < TL_K__COUNT; i++)
		if (i != TL_K_MMAP && i != TL_K_MADVISE)
			assert_int_equal(col_sum(p, COL_CALL + i), 1);
	assert_int_equal(col_sum(p, COL_FAILED), 1);
	assert_int_equal(geti(p, "mapped"), 0x21000);
	assert_int_equal(geti(p, "unmapped"), 8192);

	/* lost: one interval, 39..44 us, 5 events on cpu1 */
	assert_int_equal(geti(j, "lost"), 5);
	q = json_array_get(json_object_get(j, "lost_intervals"), 0);
	assert_int_equal(json_array_size(json_object_get(j, "lost_intervals")), 1);
	assert_int_equal(json_integer_value(json_array_get(q, 0)), 39000);
	assert_int_equal(json_integer_value(json_array_get(q, 1)), 44000);
	assert_int_equal(json_integer_value(json_array_get(q, 2)), 5);
	assert_int_equal(json_integer_value(json_array_get(q, 3)), 1);
	/* markers, the hostile one intact (its bad byte as U+00FF) */
	q = json_object_get(j, "marks");
	assert_int_equal(json_array_size(q), 2);
	assert_string_equal(json_string_value(json_array_get(json_array_get(q, 0), 3)),
			    "phase two");
	assert_string_equal(json_string_value(json_array_get(json_array_get(q, 1), 3)),
			    "</script><b>\"x\" \xc3\xbf end");
	/* every call in detail, decoded as memmon trace prints it */
	q = json_object_get(j, "detail");
	assert_int_equal(geti(q, "total"), 9);
	assert_int_equal(geti(q, "kept"), 9);
	t = json_array_get(json_object_get(q, "calls"), 1);
	assert_int_equal(json_integer_value(json_array_get(t, 0)), 2000);
	assert_int_equal(json_integer_value(json_array_get(t, 4)), TL_K_MMAP);
	assert_int_equal(json_integer_value(json_array_get(t, 5)), 1);
	assert_non_null(strstr(json_string_value(json_array_get(t, 6)),
			       "mmap(NULL, 1099511627776, PROT_READ|PROT_WRITE, "
			       "MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = -1 ENOMEM"));
	json_decref(j);
}

/* A trace of n_procs processes over `secs` seconds, a fault and a call
 * every `step` ns round robin: long and busy enough to coarsen the grid.
 */
static void write_busy(const char *p, unsigned int n_procs, __u64 secs, __u64 step,
		       __u64 *faults, __u64 *calls)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 2);
	struct memmon_trace_writer *w = memmon_trace_writer__open(p, &o);
	struct chunkbuf *cb = calloc(1, sizeof(*cb));
	__u64 t, i = 0;

	assert_non_null(w);
	assert_non_null(cb);
	*faults = *calls = 0;
	for (t = 1000; t < secs * 1000000000ULL; t += step, i++) {
		__u32 tgid = 1000 + (__u32)(i % n_procs);

		if (cb->n[0] + 256 > sizeof(cb->b[0]) || cb->n[1] + 256 > sizeof(cb->b[1]))
			flush(w, cb);
		fault(cb, 0, t, tgid, tgid, (__u32)(1 + i % 4), i % 7 == 0, 100 + i % 5000);
		(*faults)++;
		sys(cb, 1, t + 1, tgid, tgid, (__u32)(i % 12), 0x1000, 4096, 3, 0x22,
		    i % 11 ? 0x1000 : -ENOMEM);
		(*calls)++;
	}
	flush(w, cb);
	assert_int_equal(memmon_trace_writer__close(w), 0);
	free(cb);
}

/*
 * The exact windows: as many as fit in min(max_detail, TL_EXACT_CALLS)
 * whole blocks (at least half of them once the trace has more), and in
 * each every call of its time range, in time order, in the detail.
 */
static void check_exact(json_t *detail, __u64 calls, long max_detail)
{
	json_t *cl = json_object_get(detail, "calls"), *w;
	long cap = max_detail < TL_EXACT_CALLS ? max_detail : TL_EXACT_CALLS;
	size_t i, k, nwin = json_array_size(json_object_get(detail, "exact"));
	json_int_t n, total = 0, prev = -1;

	cap -= cap % TL_EXACT_BLOCK;
	if (cap == 0 || calls < TL_EXACT_BLOCK) {
		assert_int_equal(nwin, calls && cap ? 1 : 0);
		return;
	}
	assert_true(nwin >= 1);
	if (calls >= (__u64)cap * 2)
		assert_true(nwin >= (size_t)cap / TL_EXACT_BLOCK / 2);
	json_array_foreach(json_object_get(detail, "exact"), i, w) {
		json_int_t a = json_integer_value(json_array_get(w, 0));
		json_int_t b = json_integer_value(json_array_get(w, 1));

		assert_true(a > prev && b >= a);
		prev = b;
		for (k = 0, n = 0; k < json_array_size(cl); k++) {
			json_int_t t = json_integer_value(json_array_get(json_array_get(cl, k), 0));

			n += t >= a && t <= b;
		}
		/* every call of the window is there, once */
		assert_int_equal(n, json_integer_value(json_array_get(w, 2)));
		if (i + 1 < nwin)
			assert_int_equal(n, TL_EXACT_BLOCK);
		total += n;
	}
	assert_true(total <= cap);
}

static void check_busy(const char *trace, unsigned int n_procs, __u64 faults,
		       __u64 calls, const char *max_detail, long max_bytes)
{
	json_int_t nf = 0, nc = 0, rows = 0;
	struct stat st;
	json_t *j, *p;
	size_t i, c;

	run_memmon(&res, NULL, NULL, A("timeline", trace, "-o", html, "--max-detail",
				       max_detail));
	assert_int_equal(res.code, 0);
	assert_int_equal(stat(html, &st), 0);
	if (st.st_size > max_bytes)
		fail_msg("page of %lld bytes, more than %ld", (long long)st.st_size, max_bytes);
	j = page_data(html);
	assert_int_equal(json_array_size(json_object_get(j, "processes")), n_procs);
	json_array_foreach(json_object_get(j, "processes"), i, p) {
		for (c = 0; c < 2 * TL_C__COUNT; c++)
			nf += col_sum(p, COL_FAULT + c);
		for (c = 0; c < TL_K__COUNT; c++)
			nc += col_sum(p, COL_CALL + c);
		rows += (json_int_t)json_array_size(json_object_get(p, "buckets"));
		assert_true(json_array_size(json_object_get(p, "buckets")) <= TL_NBUCKETS);
	}
	/* coarsening merged buckets, never lost a count */
	assert_int_equal(nf, faults);
	assert_int_equal(nc, calls);
	assert_true((size_t)rows * sizeof(struct tl_bucket) <= TL_BUCKET_BUDGET + n_procs *
		    TL_PAGE * sizeof(struct tl_bucket));
	p = json_object_get(j, "detail");
	assert_int_equal(geti(p, "total"), calls);
	assert_true(geti(p, "sampled") <= atol(max_detail));
	assert_true(geti(p, "sampled") >= atol(max_detail) / 2);
	assert_int_equal(json_array_size(json_object_get(p, "calls")), geti(p, "kept"));
	check_exact(p, calls, atol(max_detail));
	/* the sample spans the trace, not just its start */
	assert_true(json_integer_value(json_array_get(json_array_get(
		json_object_get(p, "calls"), geti(p, "kept") - 1), 0)) >
		geti(j, "duration") * 9 / 10);
	json_decref(j);
}

static void test_long_trace(void **state)
{
	char big[160];
	__u64 nf, nc;

	(void)state;
	snprintf(big, sizeof(big), "%s/long.trace", dir);
	/* 2 hours, 400k faults and calls: the 1 us grid doubles 21 times */
	write_busy(big, 3, 7200, 18000000, &nf, &nc);
	check_busy(big, 3, nf, nc, "1000", 2L << 20);
	/* 8 exact windows of 1024 calls, out of ~390: their sample halves */
	check_busy(big, 3, nf, nc, "8192", 4L << 20);
	unlink(big);
}

static void test_many_lanes(void **state)
{
	char big[160];
	__u64 nf, nc;

	(void)state;
	snprintf(big, sizeof(big), "%s/many.trace", dir);
	/* 400 busy processes over 2 s: their pages exceed the budget */
	write_busy(big, 400, 2, 2000, &nf, &nc);
	check_busy(big, 400, nf, nc, "5000", 12L << 20);
	unlink(big);
}

static void test_errors(void **state)
{
	char corrupt[160], missing[160], bad_out[200];
	struct stat st;
	__u8 byte;
	int fd;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/nothing.trace", dir);
	snprintf(bad_out, sizeof(bad_out), "%s/no/such/dir/x.html", dir);
	run_memmon(&res, NULL, NULL, A("timeline"));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "missing TRACE"));
	run_memmon(&res, NULL, NULL, A("timeline", story));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "missing -o FILE.html"));
	run_memmon(&res, NULL, NULL, A("timeline", story, story, "-o", html));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "one TRACE only"));
	run_memmon(&res, NULL, NULL, A("timeline", story, "-o", html, "--max-detail", "abc"));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "bad --max-detail 'abc'"));
	run_memmon(&res, NULL, NULL, A("timeline", story, "-o", html, "--max-detail", "-1"));
	assert_int_equal(res.code, 2);
	run_memmon(&res, NULL, NULL, A("timeline", story, "-o", html, "--max-detail",
				       "99999999999999999999"));
	assert_int_equal(res.code, 2);
	run_memmon(&res, NULL, NULL, A("timeline", story, "-o", html, "--bogus"));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "unknown or incomplete option '--bogus'"));
	run_memmon(&res, NULL, NULL, A("timeline", "--help"));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.out, "usage: memmon timeline TRACE -o FILE.html"));
	run_memmon(&res, NULL, NULL, A("timeline", missing, "-o", html));
	assert_int_equal(res.code, 1);
	assert_non_null(strstr(res.err, "memmon timeline: "));
	assert_non_null(strstr(res.err, "nothing.trace"));
	run_memmon(&res, NULL, NULL, A("timeline", story, "-o", bad_out));
	assert_int_equal(res.code, 1);
	assert_non_null(strstr(res.err, "No such file or directory"));

	/* a flipped byte in the first chunk: an error naming it, no page */
	snprintf(corrupt, sizeof(corrupt), "%s/corrupt.trace", dir);
	write_story(corrupt);
	fd = open(corrupt, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &byte, 1, 64 + 64 + 200), 1);
	byte ^= 0x10;
	assert_int_equal(pwrite(fd, &byte, 1, 64 + 64 + 200), 1);
	close(fd);
	unlink(html);
	run_memmon(&res, NULL, NULL, A("timeline", corrupt, "-o", html));
	assert_int_equal(res.code, 1);
	assert_non_null(strstr(res.err, "checksum mismatch"));
	assert_int_equal(stat(html, &st), -1);
	unlink(corrupt);
}

/* A trace with no records at all: an empty page, not an error. */
static void test_empty(void **state)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 1);
	char empty[160];
	json_t *j;

	(void)state;
	snprintf(empty, sizeof(empty), "%s/empty.trace", dir);
	assert_int_equal(memmon_trace_writer__close(memmon_trace_writer__open(empty, &o)), 0);
	run_memmon(&res, NULL, NULL, A("timeline", empty, "-o", html));
	assert_int_equal(res.code, 0);
	j = page_data(html);
	assert_int_equal(json_array_size(json_object_get(j, "processes")), 0);
	assert_int_equal(geti(j, "records"), 0);
	assert_int_equal(geti(j, "duration"), 0);
	json_decref(j);
	unlink(empty);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(story, sizeof(story), "%s/story.trace", dir);
	snprintf(html, sizeof(html), "%s/run.html", dir);
	write_story(story);
	return 0;
}

static int teardown(void **state)
{
	char cmd[200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_story),
		cmocka_unit_test(test_long_trace),
		cmocka_unit_test(test_many_lanes),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
