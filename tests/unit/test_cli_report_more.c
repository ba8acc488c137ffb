// SPDX-License-Identifier: GPL-2.0
/*
 * memmon report's syscall latency, --sort/--top/--pid, the leak split and
 * the growth slopes; the trace/script filters (--faults, --failed), -r and
 * the -c summary; on synthetic trace files whose every number is known.
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
#include "rec_filter.h"
#include "report_latency.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define MIB (1ULL << 20)

static char path[] = "/tmp/memmon-report-more-XXXXXX";
static struct run res;

struct buf {
	__u8 b[1 << 16];
	size_t n;
};

static void *put(struct buf *cb, __u16 type, size_t size, __u64 t, __u32 tgid)
{
	struct memmon_rec_header *h = (void *)(cb->b + cb->n);

	size = (size + 7) & ~7UL;
	assert_true(cb->n + size <= sizeof(cb->b));
	memset(h, 0, size);
	h->size = (__u32)size;
	h->type = type;
	h->time_ns = t;
	h->tgid = tgid;
	h->tid = tgid;
	cb->n += size;
	return h;
}

static struct memmon_rec_syscall *sys(struct buf *cb, __u64 t, __u32 tgid, __u32 nr,
				      __u64 a0, __u64 a1, __u64 a2, __u64 a3,
				      __s64 ret, __u64 dur)
{
	struct memmon_rec_syscall *s = put(cb, MEMMON_REC_SYSCALL, sizeof(*s), t, tgid);

	s->sys = nr;
	s->args[0] = a0;
	s->args[1] = a1;
	s->args[2] = a2;
	s->args[3] = a3;
	s->args[4] = (__u64)-1;
	s->ret = ret;
	s->duration_ns = dur;
	return s;
}

static void fault(struct buf *cb, __u64 t, __u32 tgid, __u32 cls, bool major)
{
	struct memmon_rec_fault *f = put(cb, MEMMON_REC_FAULT, sizeof(*f), t, tgid);

	f->addr = 0x1000;
	f->fclass = cls;
	f->flags = major ? MEMMON_FAULTF_MAJOR : 0;
	f->duration_ns = 100;
}

static void exec_rec(struct buf *cb, __u64 t, __u32 tgid, const char *exe)
{
	struct memmon_rec_exec *e = put(cb, MEMMON_REC_EXEC, sizeof(*e) + 32, t, tgid);

	e->path_len = (__u32)strlen(exe);
	memcpy(e->path, exe, strlen(exe));
}

static void exit_rec(struct buf *cb, __u64 t, __u32 tgid)
{
	struct memmon_rec_exit *x = put(cb, MEMMON_REC_EXIT, sizeof(*x), t, tgid);

	x->flags = MEMMON_EXITF_GROUP;
}

static void write_file(const struct buf *cb)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 1);
	struct memmon_trace_writer *w = memmon_trace_writer__open(path, &o);

	assert_non_null(w);
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, cb->b, cb->n), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
}

static json_t *report_json(const char *const *args)
{
	json_t *j;

	run_memmon(&res, NULL, NULL, args);
	assert_int_equal(res.code, 0);
	j = json_loads(res.out, 0, NULL);
	assert_non_null(j);
	return j;
}

static json_int_t geti(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		fail_msg("no integer \"%s\"", k);
	return json_integer_value(v);
}

/* The histogram's edges: exact below 16 ns, 1/16 of a power of two above. */
static void test_lat_buckets(void **state)
{
	static const struct { __u64 v, low; } t[] = {
		{ 0, 0 }, { 15, 15 }, { 16, 16 }, { 17, 17 }, { 31, 31 }, { 32, 32 },
		{ 33, 32 }, { 1000, 992 }, { 1024, 1024 }, { 1087, 1024 },
		{ 1088, 1088 }, { 3072, 3072 }, { UINT64_MAX, 0xf800000000000000ULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		unsigned int b = lat_bucket(t[i].v);

		assert_true(b < LAT_NR_BUCKETS);
		assert_int_equal(lat_bucket_low(b), t[i].low);
	}
}

/*
 * 100 mmaps: 98 of 1024 ns, one of 3072, one of 65536; two failed. p50
 * is the 50th smallest (1024), p99 the 99th (3072), max 65536.
 */
static void test_latency(void **state)
{
	struct buf *cb = calloc(1, sizeof(*cb));
	json_t *j, *m;
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		sys(cb, 1000 + (__u64)i, 100, MEMMON_SYS_MMAP, 0, 4096, 3, 0x22,
		    i < 2 ? -ENOMEM : 0x10000000 + i * 0x1000,
		    i == 50 ? 3072 : i == 70 ? 65536 : 1024);
	sys(cb, 2000, 100, MEMMON_SYS_MUNMAP, 0x10000000, 4096, 0, 0, 0, 7);
	write_file(cb);
	free(cb);
	j = report_json(A("report", "--json", path));
	m = json_object_get(json_object_get(json_array_get(
		json_object_get(j, "processes"), 0), "syscall_latency"), "mmap");
	assert_int_equal(geti(m, "count"), 100);
	assert_int_equal(geti(m, "errors"), 2);
	assert_int_equal(geti(m, "total_ns"), 98 * 1024 + 3072 + 65536);
	assert_int_equal(geti(m, "min_ns"), 1024);
	assert_int_equal(geti(m, "p50_ns"), 1024);
	assert_int_equal(geti(m, "p99_ns"), 3072);
	assert_int_equal(geti(m, "max_ns"), 65536);
	m = json_object_get(json_object_get(json_array_get(
		json_object_get(j, "processes"), 0), "syscall_latency"), "munmap");
	assert_int_equal(geti(m, "p50_ns"), 7);
	json_decref(j);
	run_memmon(&res, NULL, NULL, A("report", path));
	assert_int_equal(res.code, 0);
	if (!strstr(res.out, "    mmap                100        2        168.960        1.024        3.072       65.536"))
		fail_msg("no mmap latency line in:\n%s", res.out);
}

/* Three processes: 5, 1 and 10 faults; 2, 0 and 1 syscalls. */
static void write_three(void)
{
	struct buf *cb = calloc(1, sizeof(*cb));
	int i;

	for (i = 0; i < 5; i++)
		fault(cb, 100 + (__u64)i, 300, MEMMON_FCLASS_ANON, false);
	fault(cb, 200, 301, MEMMON_FCLASS_FILE, true);
	for (i = 0; i < 10; i++)
		fault(cb, 300 + (__u64)i, 302, MEMMON_FCLASS_ANON, false);
	sys(cb, 400, 300, MEMMON_SYS_MADVISE, 0, 4096, 4, 0, 0, 10);
	sys(cb, 401, 300, MEMMON_SYS_MADVISE, 0, 4096, 4, 0, 0, 10);
	sys(cb, 402, 302, MEMMON_SYS_MADVISE, 0, 4096, 4, 0, 0, 10);
	write_file(cb);
	free(cb);
}

static __u32 tgid_at(json_t *j, size_t i)
{
	return (__u32)geti(json_array_get(json_object_get(j, "processes"), i), "tgid");
}

static void test_sort_top_pid(void **state)
{
	json_t *j;

	(void)state;
	write_three();
	j = report_json(A("report", "--json", path));
	assert_int_equal(json_array_size(json_object_get(j, "processes")), 3);
	assert_int_equal(tgid_at(j, 0), 300);
	json_decref(j);
	j = report_json(A("report", "--json", "--sort", "faults", "--top", "2", path));
	assert_int_equal(json_array_size(json_object_get(j, "processes")), 2);
	assert_int_equal(tgid_at(j, 0), 302);
	assert_int_equal(tgid_at(j, 1), 300);
	json_decref(j);
	j = report_json(A("report", "--json", "-s", "syscalls", "-n", "1", path));
	assert_int_equal(json_array_size(json_object_get(j, "processes")), 1);
	assert_int_equal(tgid_at(j, 0), 300);
	json_decref(j);
	j = report_json(A("report", "--json", "--sort", "major", path));
	assert_int_equal(tgid_at(j, 0), 301);
	json_decref(j);
	j = report_json(A("report", "--json", "--pid", "301,302", path));
	assert_int_equal(json_array_size(json_object_get(j, "processes")), 2);
	assert_int_equal(tgid_at(j, 0), 301);
	assert_int_equal(tgid_at(j, 1), 302);
	json_decref(j);
	run_memmon(&res, NULL, NULL, A("report", "--top", "2", path));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.out, "... 1 more processes (--top 2)"));
	/* one bad value: one clear message each */
	run_memmon(&res, NULL, NULL, A("report", "--sort", "size", path));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "bad --sort 'size'"));
	run_memmon(&res, NULL, NULL, A("report", "--top", "0", path));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "bad --top '0'"));
	run_memmon(&res, NULL, NULL, A("report", "--pid", "x", path));
	assert_int_equal(res.code, 2);
}

/*
 * A process that loads (ld.so.cache, a TLS page), maps a library with
 * its .bss, leaks 3 x 64 KiB from one place and 1 MiB from another,
 * frees two 32 KiB mappings, and exits: exactly two leak groups.
 */
static void test_leak_split(void **state)
{
	struct buf *cb = calloc(1, sizeof(*cb));
	struct memmon_rec_syscall *s;
	struct memmon_rec_path *pa;
	json_t *j, *p, *l, *g;
	int i;

	(void)state;
	exec_rec(cb, 1000, 400, "/usr/bin/leaky");
	pa = put(cb, MEMMON_REC_PATH, sizeof(*pa) + 32, 1001, 400);
	pa->dev = 5;
	pa->ino = 9;
	pa->path_len = 20;
	memcpy(pa->path, "/usr/lib/libfoo.so.1", 20);
	/* the loader's TLS page */
	sys(cb, 1010, 400, MEMMON_SYS_MMAP, 0, 8192, 3, 0x22, 0x7000000, 10);
	/* ld.so.cache, dropped at the end of loading */
	s = sys(cb, 1020, 400, MEMMON_SYS_MMAP, 0, 20000, 1, 0x2, 0x7100000, 10);
	s->flags = MEMMON_SYSF_FILE;
	s->aux[0] = 5;
	s->aux[1] = 8;
	/* libfoo: 64 KiB reserved, text remapped, .bss anonymous MAP_FIXED */
	s = sys(cb, 1030, 400, MEMMON_SYS_MMAP, 0, 65536, 1, 0x802, 0x7200000, 10);
	s->flags = MEMMON_SYSF_FILE;
	s->aux[0] = 5;
	s->aux[1] = 9;
	s = sys(cb, 1040, 400, MEMMON_SYS_MMAP, 0x7200000, 16384, 5, 0x812, 0x7200000, 10);
	s->flags = MEMMON_SYSF_FILE;
	s->aux[0] = 5;
	s->aux[1] = 9;
	sys(cb, 1050, 400, MEMMON_SYS_MMAP, 0x720c000, 16384, 3, 0x32, 0x720c000, 10);
	sys(cb, 1060, 400, MEMMON_SYS_MUNMAP, 0x7100000, 20000, 0, 0, 0, 10);
	/* the program: two freed mappings, then the leaks */
	sys(cb, 2000, 400, MEMMON_SYS_MMAP, 0, 32768, 3, 0x22, 0x8000000, 10);
	sys(cb, 2010, 400, MEMMON_SYS_MMAP, 0, 32768, 3, 0x22, 0x8100000, 10);
	sys(cb, 2020, 400, MEMMON_SYS_MUNMAP, 0x8000000, 32768, 0, 0, 0, 10);
	sys(cb, 2030, 400, MEMMON_SYS_MUNMAP, 0x8100000, 32768, 0, 0, 0, 10);
	for (i = 0; i < 3; i++)
		sys(cb, 3000 + (__u64)i * 100, 400, MEMMON_SYS_MMAP, 0, 65536, 3, 0x22,
		    0x9000000 + i * 0x100000, 10);
	sys(cb, 4000, 400, MEMMON_SYS_MMAP, 0, MIB, 3, 0x22, 0xa000000, 10);
	exit_rec(cb, 5000, 400);
	write_file(cb);
	free(cb);

	j = report_json(A("report", "--json", path));
	p = json_array_get(json_object_get(j, "processes"), 0);
	l = json_object_get(p, "leaks");
	assert_int_equal(geti(l, "count"), 4);
	assert_int_equal(geti(l, "bytes"), 3 * 65536 + MIB);
	assert_int_equal(json_array_size(json_object_get(l, "groups")), 2);
	g = json_array_get(json_object_get(l, "groups"), 0);
	assert_string_equal(json_string_value(json_object_get(g, "what")), "[anon]");
	assert_int_equal(geti(g, "count"), 1);
	assert_int_equal(geti(g, "bytes"), MIB);
	assert_int_equal(geti(g, "first_ns"), 4000);
	g = json_array_get(json_object_get(l, "groups"), 1);
	assert_int_equal(geti(g, "count"), 3);
	assert_int_equal(geti(g, "size"), 65536);
	assert_int_equal(geti(g, "bytes"), 3 * 65536);
	assert_int_equal(geti(g, "first_ns"), 3000);
	assert_int_equal(geti(g, "last_ns"), 3200);
	/* libfoo: its text, the rest of its reservation, its .bss */
	assert_int_equal(geti(l, "file_bytes"), 65536);
	assert_int_equal(json_array_size(json_object_get(l, "file_mappings")), 3);
	g = json_array_get(json_object_get(l, "file_mappings"), 2);
	assert_string_equal(json_string_value(json_object_get(g, "what")),
			    "/usr/lib/libfoo.so.1");
	assert_true(json_is_true(json_object_get(g, "image_bss")));
	assert_int_equal(geti(l, "startup_bytes"), 8192);
	/* mapped anonymous memory: 8 KiB .. 1.2 MiB at exit */
	g = json_object_get(json_object_get(p, "growth"), "anon_mapped");
	assert_int_equal(geti(g, "last"), 8192 + 3 * 65536 + MIB);
	json_decref(j);

	run_memmon(&res, NULL, NULL, A("report", path));
	assert_int_equal(res.code, 0);
	if (!strstr(res.out, "leak candidates: anonymous and heap memory never released at exit: 4 regions, 1.2 MiB") ||
	    !strstr(res.out, "[anon]         rw- flags 0x22  1 x 1.0 MiB = 1048576 bytes") ||
	    !strstr(res.out, "[anon]         rw- flags 0x22  3 x 64.0 KiB = 196608 bytes") ||
	    !strstr(res.out, "file mappings still mapped at exit (libraries, data; not leaks): 3 regions, 64.0 KiB") ||
	    !strstr(res.out, "0x720c000   16.0 KiB rw- /usr/lib/libfoo.so.1 (its .bss)"))
		fail_msg("leak split not as expected:\n%s", res.out);
}

/*
 * RSS: 0 at 0 s, +1 MiB a second to 5 MiB at 5 s, 10 MiB at 6 s, flat to
 * 10 s. Slope 1 MiB/s over the run; the steepest tenth is [5 s, 6 s].
 */
static void test_growth(void **state)
{
	struct buf *cb = calloc(1, sizeof(*cb));
	json_t *j, *g;
	__u64 k;

	(void)state;
	for (k = 0; k <= 10; k++) {
		struct memmon_rec_rss *r = put(cb, MEMMON_REC_RSS, sizeof(*r),
					       1000000000ULL * (k + 1), 500);

		r->anon = k <= 5 ? k * MIB : 10 * MIB;
	}
	write_file(cb);
	free(cb);
	j = report_json(A("report", "--json", path));
	g = json_object_get(json_object_get(json_array_get(
		json_object_get(j, "processes"), 0), "growth"), "rss");
	assert_int_equal(geti(g, "first"), 0);
	assert_int_equal(geti(g, "last"), 10 * MIB);
	assert_int_equal(geti(g, "peak"), 10 * MIB);
	assert_true(json_real_value(json_object_get(g, "bytes_per_s")) == (double)MIB);
	assert_int_equal(geti(g, "steepest_start_ns"), 6000000000LL);
	assert_int_equal(geti(g, "steepest_end_ns"), 7000000000LL);
	assert_int_equal(geti(g, "steepest_bytes"), 5 * MIB);
	json_decref(j);
	run_memmon(&res, NULL, NULL, A("report", path));
	if (!strstr(res.out, "rss growth: 0 B -> 10.0 MiB (peak 10.0 MiB) over 10.000000 s: +1.0 MiB/s") ||
	    !strstr(res.out, "steepest: +5.0 MiB in [5.000000 s, 6.000000 s] of the run: +5.0 MiB/s"))
		fail_msg("growth not as expected:\n%s", res.out);
}

static void test_faults_parse(void **state)
{
	static const struct {
		const char *arg;
		int ret;
		__u32 kinds, classes;
	} t[] = {
		{ "major", 0, REC_FILTER_FAULT_MAJOR, 0 },
		{ "minor,anon", 0, REC_FILTER_FAULT_MINOR, 1U << MEMMON_FCLASS_ANON },
		{ "file,shmem,swap", 0, 0, (1U << MEMMON_FCLASS_FILE) |
			(1U << MEMMON_FCLASS_SHMEM) | (1U << MEMMON_FCLASS_SWAP) },
		{ "major,minor", 0, REC_FILTER_FAULT_MAJOR | REC_FILTER_FAULT_MINOR, 0 },
		{ "", 2, 0, 0 },
		{ "majr", 2, 0, 0 },
		{ "major,", 2, 0, 0 },
		{ ",anon", 2, 0, 0 },
	};
	struct rec_filter f;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		rec_filter_init(&f);
		ret = rec_filter_parse_faults("test", &f, t[i].arg);
		assert_int_equal(ret, t[i].ret);
		if (!ret) {
			assert_int_equal(f.fault_kinds, t[i].kinds);
			assert_int_equal(f.fault_classes, t[i].classes);
		}
	}
}

/* 2 major file faults, 3 minor anon, 1 minor shmem; 4 mmaps, 1 failed. */
static void write_mixed(void)
{
	struct buf *cb = calloc(1, sizeof(*cb));
	int i;

	fault(cb, 1000, 600, MEMMON_FCLASS_FILE, true);
	for (i = 0; i < 3; i++)
		fault(cb, 1100 + (__u64)i, 600, MEMMON_FCLASS_ANON, false);
	fault(cb, 1200, 600, MEMMON_FCLASS_SHMEM, false);
	fault(cb, 1300, 600, MEMMON_FCLASS_FILE, true);
	for (i = 0; i < 4; i++)
		sys(cb, 2000000 + (__u64)i * 1000000, 600, MEMMON_SYS_MMAP, 0, 4096, 3,
		    0x22, i == 3 ? -ENOMEM : 0x10000 + i * 0x1000, 2000);
	write_file(cb);
	free(cb);
}

static size_t count_lines(const char *s, const char *needle)
{
	size_t n = 0;
	const char *l;

	for (l = s; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strstr(l, needle) && (!strchr(l, '\n') || strstr(l, needle) < strchr(l, '\n')))
			n++;
	return n;
}

static void test_script_filters(void **state)
{
	(void)state;
	write_mixed();
	run_memmon(&res, NULL, NULL, A("script", "--faults=major", "-e", "faults", path));
	assert_int_equal(res.code, 0);
	assert_int_equal(count_lines(res.out, "fault"), 2);
	assert_int_equal(count_lines(res.out, "major"), 2);
	run_memmon(&res, NULL, NULL, A("script", "--faults", "minor,anon", "-e", "faults", path));
	assert_int_equal(count_lines(res.out, "fault"), 3);
	run_memmon(&res, NULL, NULL, A("script", "--failed", path));
	assert_int_equal(count_lines(res.out, "mmap("), 1);
	assert_int_equal(count_lines(res.out, "ENOMEM"), 1);
	/* -r: seconds since the previous record; the mmaps are 1 ms apart */
	run_memmon(&res, NULL, NULL, A("script", "-r", "-e", "mmap", path));
	assert_int_equal(res.code, 0);
	assert_int_equal(count_lines(res.out, "     0.001000 "), 3);
	assert_int_equal(count_lines(res.out, "     0.000000 "), 1);
	run_memmon(&res, NULL, NULL, A("script", "--ts", "rel", "-e", "mmap", path));
	assert_int_equal(count_lines(res.out, "     0.003000 "), 1);
	run_memmon(&res, NULL, NULL, A("script", "--ts", "later", path));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "bad --ts 'later'"));
	run_memmon(&res, NULL, NULL, A("script", "-c", "--json", path));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "not with --json"));
	/* -c: the summary alone */
	run_memmon(&res, NULL, NULL, A("script", "-c", path));
	assert_int_equal(res.code, 0);
	assert_int_equal(count_lines(res.out, "mmap("), 0);
	if (!strstr(res.out, "100.00    0.000008           2         4         1 mmap") ||
	    !strstr(res.out, "file              0          2") ||
	    !strstr(res.out, "anon              3          0") ||
	    !strstr(res.out, "total             4          2"))
		fail_msg("summary not as expected:\n%s", res.out);
}

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	close(fd);
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
		cmocka_unit_test(test_lat_buckets),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_sort_top_pid),
		cmocka_unit_test(test_leak_split),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_faults_parse),
		cmocka_unit_test(test_script_filters),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
