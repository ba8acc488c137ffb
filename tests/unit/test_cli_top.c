// SPDX-License-Identifier: GPL-2.0
/*
 * memmon top's model from synthetic records: rates per class and kind,
 * lost events, the RSS trend, exits, the sort and its keys, the text of
 * the lines; and the command's usage errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>
#include "test_cli_run.h"
#include "top_model.h"

#define SEC	1000000000ULL

static void rec_fault(struct top_model *m, __u32 tgid, __u32 fclass, bool major)
{
	struct memmon_rec_fault f;

	memset(&f, 0, sizeof(f));
	f.hdr.size = sizeof(f);
	f.hdr.type = MEMMON_REC_FAULT;
	f.hdr.tgid = tgid;
	f.hdr.tid = tgid;
	f.fclass = fclass;
	f.flags = major ? MEMMON_FAULTF_MAJOR : 0;
	top_model_add_rec(m, &f.hdr);
}

static void rec_sys(struct top_model *m, __u32 tgid, __u32 sys)
{
	struct memmon_rec_syscall sc;

	memset(&sc, 0, sizeof(sc));
	sc.hdr.size = sizeof(sc);
	sc.hdr.type = MEMMON_REC_SYSCALL;
	sc.hdr.tgid = tgid;
	sc.sys = sys;
	top_model_add_rec(m, &sc.hdr);
}

static void rec_rss(struct top_model *m, __u32 tgid, __u64 anon, __u64 file)
{
	struct memmon_rec_rss r;

	memset(&r, 0, sizeof(r));
	r.hdr.size = sizeof(r);
	r.hdr.type = MEMMON_REC_RSS;
	r.hdr.tgid = tgid;
	r.anon = anon;
	r.file = file;
	top_model_add_rec(m, &r.hdr);
}

static void rec_lost(struct top_model *m, __u64 count)
{
	struct memmon_rec_lost l;

	memset(&l, 0, sizeof(l));
	l.hdr.size = sizeof(l);
	l.hdr.type = MEMMON_REC_LOST;
	l.count = count;
	top_model_add_rec(m, &l.hdr);
}

static void rec_exit(struct top_model *m, __u32 tgid, bool group)
{
	struct memmon_rec_exit x;

	memset(&x, 0, sizeof(x));
	x.hdr.size = sizeof(x);
	x.hdr.type = MEMMON_REC_EXIT;
	x.hdr.tgid = tgid;
	x.flags = group ? MEMMON_EXITF_GROUP : 0;
	top_model_add_rec(m, &x.hdr);
}

static void test_rates(void **state)
{
	static const struct {
		__u32 fclass;
		bool major;
		int n;
	} faults[] = {
		{ MEMMON_FCLASS_ANON, false, 40 },
		{ MEMMON_FCLASS_FILE, false, 10 },
		{ MEMMON_FCLASS_FILE, true, 6 },
		{ MEMMON_FCLASS_SHMEM, false, 4 },
		{ MEMMON_FCLASS_SWAP, true, 2 },
		{ MEMMON_FCLASS_NONE, false, 8 },	/* total only */
	};
	static const struct {
		__u32 sys;
		int n;
	} sys[] = {
		{ MEMMON_SYS_MMAP, 6 }, { MEMMON_SYS_MMAP2, 2 },
		{ MEMMON_SYS_MUNMAP, 4 }, { MEMMON_SYS_BRK, 10 },
		{ MEMMON_SYS_MPROTECT, 2 }, { MEMMON_SYS_MADVISE, 2 },
		{ MEMMON_SYS_MREMAP, 2 }, { MEMMON_SYS_FSYNC, 2 },
	};
	struct top_model m;
	struct top_proc *p;
	size_t i;
	int k;

	(void)state;
	top_model_init(&m);
	for (i = 0; i < ARRAY_SIZE(faults); i++)
		for (k = 0; k < faults[i].n; k++)
			rec_fault(&m, 100, faults[i].fclass, faults[i].major);
	for (i = 0; i < ARRAY_SIZE(sys); i++)
		for (k = 0; k < sys[i].n; k++)
			rec_sys(&m, 100, sys[i].sys);
	rec_fault(&m, 200, MEMMON_FCLASS_ANON, false);
	rec_lost(&m, 30);
	/* an interval of 2 s: every count halves */
	top_model_tick(&m, 2 * SEC);
	p = top_model_find(&m, 100);
	assert_non_null(p);
	assert_true(p->rate[TOP_COL_FAULTS] == 35.0);
	assert_true(p->rate[TOP_COL_ANON] == 20.0);
	assert_true(p->rate[TOP_COL_FILE] == 8.0);
	assert_true(p->rate[TOP_COL_SHMEM] == 2.0);
	assert_true(p->rate[TOP_COL_SWAP] == 1.0);
	assert_true(p->rate[TOP_COL_MAJOR] == 4.0);
	assert_true(p->rate[TOP_COL_SYSCALLS] == 15.0);
	assert_true(p->rate[TOP_COL_MMAP] == 4.0);	/* mmap2 is mmap */
	assert_true(p->rate[TOP_COL_MUNMAP] == 2.0);
	assert_true(p->rate[TOP_COL_BRK] == 5.0);
	assert_true(p->rate[TOP_COL_MPROTECT] == 1.0);
	assert_true(p->rate[TOP_COL_MADVISE] == 1.0);
	assert_true(p->rate[TOP_COL_OTHER] == 2.0);	/* mremap, fsync */
	/* 70 + 30 + 1 records, the LOST one not an event */
	assert_true(m.events_rate == 50.5);
	assert_true(m.lost_rate == 15.0);
	assert_int_equal(m.lost_total, 30);
	assert_int_equal(m.nr, 2);
	/* the next interval starts from zero */
	rec_lost(&m, 2);
	top_model_tick(&m, SEC);
	assert_true(p->rate[TOP_COL_FAULTS] == 0.0);
	assert_true(m.events_rate == 0.0);
	assert_true(m.lost_rate == 2.0);
	assert_int_equal(m.lost_total, 32);
	top_model_free(&m);
}

static void test_trend(void **state)
{
	struct top_model m;
	struct top_proc *p;
	char buf[32];

	(void)state;
	top_model_init(&m);
	rec_rss(&m, 7, 4 << 20, 2 << 20);
	top_model_tick(&m, SEC);
	p = top_model_find(&m, 7);
	assert_true(p->rate[TOP_COL_RSS] == (double)(6 << 20));
	/* one sample: no trend yet */
	assert_true(p->rate[TOP_COL_TREND] == 0.0);
	top_col_format(p, TOP_COL_TREND, buf, sizeof(buf));
	assert_string_equal(buf, "=");
	top_col_format(p, TOP_COL_RSS, buf, sizeof(buf));
	assert_string_equal(buf, "6.0M");
	/* +4 MiB in 2 s */
	rec_rss(&m, 7, 8 << 20, 2 << 20);
	top_model_tick(&m, 2 * SEC);
	assert_true(p->rate[TOP_COL_TREND] == (double)(2 << 20));
	top_col_format(p, TOP_COL_TREND, buf, sizeof(buf));
	assert_string_equal(buf, "^+2.0M");
	/* -1 MiB in 1 s */
	rec_rss(&m, 7, 7 << 20, 2 << 20);
	top_model_tick(&m, SEC);
	assert_true(p->rate[TOP_COL_TREND] == -(double)(1 << 20));
	top_col_format(p, TOP_COL_TREND, buf, sizeof(buf));
	assert_string_equal(buf, "v-1.0M");
	/* no change */
	top_model_tick(&m, SEC);
	top_col_format(p, TOP_COL_TREND, buf, sizeof(buf));
	assert_string_equal(buf, "=");
	/* a process without any RSS known shows "-" */
	rec_fault(&m, 8, MEMMON_FCLASS_ANON, false);
	top_model_tick(&m, SEC);
	top_col_format(top_model_find(&m, 8), TOP_COL_RSS, buf, sizeof(buf));
	assert_string_equal(buf, "-");
	top_model_free(&m);
}

static pid_t order(struct top_model *m, size_t i)
{
	return m->procs[i].pid;
}

static void test_sort(void **state)
{
	struct top_model m;
	int k;

	(void)state;
	top_model_init(&m);
	/* 30: most faults; 10: most major; 20: most syscalls; 40: most RSS */
	for (k = 0; k < 9; k++)
		rec_fault(&m, 30, MEMMON_FCLASS_ANON, false);
	for (k = 0; k < 3; k++)
		rec_fault(&m, 10, MEMMON_FCLASS_FILE, true);
	for (k = 0; k < 5; k++)
		rec_sys(&m, 20, MEMMON_SYS_MMAP);
	rec_rss(&m, 40, 100 << 20, 0);
	rec_rss(&m, 30, 1 << 20, 0);
	top_model_tick(&m, SEC);
	assert_int_equal(m.sort, TOP_COL_FAULTS);	/* the default */
	top_model_sort(&m);
	assert_int_equal(order(&m, 0), 30);
	assert_int_equal(order(&m, 1), 10);
	/* ties (no faults) by PID */
	assert_int_equal(order(&m, 2), 20);
	assert_int_equal(order(&m, 3), 40);
	m.sort = TOP_COL_MAJOR;
	top_model_sort(&m);
	assert_int_equal(order(&m, 0), 10);
	m.sort = TOP_COL_SYSCALLS;
	top_model_sort(&m);
	assert_int_equal(order(&m, 0), 20);
	m.sort = TOP_COL_RSS;
	top_model_sort(&m);
	assert_int_equal(order(&m, 0), 40);
	assert_int_equal(order(&m, 1), 30);
	top_model_free(&m);
}

static void test_exit(void **state)
{
	struct top_model m;
	struct top_proc *p;
	char line[512];

	(void)state;
	top_model_init(&m);
	rec_fault(&m, 5, MEMMON_FCLASS_ANON, false);
	/* a thread's exit leaves the process */
	rec_exit(&m, 5, false);
	p = top_model_find(&m, 5);
	assert_false(p->gone);
	rec_exit(&m, 5, true);
	assert_true(p->gone);
	/* an unknown process's exit adds nothing */
	rec_exit(&m, 6, true);
	assert_null(top_model_find(&m, 6));
	snprintf(p->comm, sizeof(p->comm), "worker");
	top_model_tick(&m, SEC);
	top_format_line(p, line, sizeof(line));
	assert_non_null(strstr(line, "worker"));
	assert_non_null(strstr(line, "(exited)"));
	top_model_remove(&m, 5);
	assert_int_equal(m.nr, 0);
	top_model_free(&m);
}

static void test_text(void **state)
{
	struct top_model m;
	struct top_proc *p;
	char line[512];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;
	int k;

	(void)state;
	top_model_init(&m);
	p = top_model_get(&m, 4242);
	snprintf(p->comm, sizeof(p->comm), "python3");
	for (k = 0; k < 12345; k++)
		rec_fault(&m, 4242, MEMMON_FCLASS_ANON, false);
	top_model_tick(&m, SEC);
	top_format_line(p, line, sizeof(line));
	/* pid, comm, faults/s as "12.3k" */
	assert_int_equal(strncmp(line, "   4242 python3 ", 16), 0);
	assert_non_null(strstr(line, " 12.3k "));
	top_format_columns(&m, line, sizeof(line));
	assert_non_null(strstr(line, "*FLT/s"));
	m.sort = TOP_COL_RSS;
	top_format_columns(&m, line, sizeof(line));
	assert_null(strstr(line, "*FLT/s"));
	assert_non_null(strstr(line, "*RSS "));
	top_format_header(&m, line, sizeof(line));
	assert_non_null(strstr(line, "events/s: 12.3k"));
	assert_non_null(strstr(line, "sort: RSS"));
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(top_model_print(&m, f, 1.0, true), 0);
	fclose(f);
	assert_non_null(strstr(buf, "memmon top  1.0s  processes: 1"));
	assert_non_null(strstr(buf, "PAUSED"));
	assert_non_null(strstr(buf, "\n   4242 python3"));
	free(buf);
	top_model_free(&m);
}

static void test_usage(void **state)
{
	static const struct {
		const char *args[8];
		const char *err;
	} cases[] = {
		{ { "top", NULL }, "nothing to watch" },
		{ { "top", "-a", "-p", "1", NULL }, "not with -p" },
		{ { "top", "-p", "1", "-d", "0", NULL }, "bad delay '0'" },
		{ { "top", "-p", "1", "-d", "x", NULL }, "bad delay 'x'" },
		{ { "top", "-p", "1", "-b", "-n", "0", NULL }, "bad iteration count" },
		{ { "top", "-p", "1", "-n", "2", NULL }, "-n is for --batch" },
		{ { "top", "-a", "-N", "0", NULL }, "bad count '0'" },
		{ { "top", "-p", "1", "-m", "3", NULL }, "bad ring size" },
		{ { "top", "-p", "1", "--bogus", NULL }, "unknown or incomplete" },
		/* the unit test's stdin is no terminal */
		{ { "top", "-p", "1", NULL }, "needs a terminal" },
	};
	struct run *r = malloc(sizeof(*r));
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		run_memmon(r, NULL, NULL, cases[i].args);
		assert_int_equal(r->code, EXIT_USAGE);
		if (!strstr(r->err, cases[i].err))
			fail_msg("case %zu: '%s' not in '%s'", i, cases[i].err, r->err);
	}
	run_memmon(r, NULL, NULL, (const char *const[]){ "top", "--help", NULL });
	assert_int_equal(r->code, 0);
	assert_non_null(strstr(r->out, "usage: memmon top"));
	assert_non_null(strstr(r->out, "busiest"));
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_trend),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_usage),
	};

	return cmocka_run_group_tests_name("cli_top", tests, NULL, NULL);
}
