// SPDX-License-Identifier: GPL-2.0
/*
 * memmon script: its text is what the decoder prints for the same records
 * (with the file's realtime offset and fd<path>); each filter keeps
 * exactly the records the story says it should (computed here from what
 * was written, not by the tool's code), LOST records always; --time by
 * seconds and by marker text; a window is a seek (a damaged chunk before
 * it is never read) and gives what a full pass gives; bad options and
 * bad files are errors with the documented exit codes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include "test_cli_run.h"
#include "test_cli_story.h"
#include "trace_format.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })

static char dir[] = "/tmp/memmon-script-XXXXXX";
static char tr_lost[128], tr_clean[128], outp[128];
static struct run res;

/* What a filter keeps, computed from story[] alone. */
struct want {
	__u32 pids[4], tids[4];
	int nr_pids, nr_tids;
	__u64 start, end;	/* absolute; end 0: open */
	__u64 ev;		/* 1 << MEMMON_EV_*; 0: all */
	__u64 sys;		/* 1 << MEMMON_SYS_*; 0: all */
	bool failed;
	__u64 min_dur;
	bool text;		/* PATH records are not printed in text */
};

/* story[] describes the lost trace, or (rewritten alike) the clean one. */
static void use(bool lost)
{
	story_write(lost ? tr_lost : tr_clean, lost);
}

static bool want_rec(const struct want *w, const struct story_rec *s)
{
	__u64 end = w->end ? w->end : UINT64_MAX;
	int i, ev;
	bool ok;

	if (s->type == MEMMON_REC_LOST)
		return s->time_ns >= w->start &&
		       (s->time_ns <= end || s->lost_first <= end);
	if (s->time_ns < w->start || s->time_ns > end)
		return false;
	if (s->type == MEMMON_REC_PATH && w->text)
		return false;
	for (i = 0, ok = !w->nr_pids; i < w->nr_pids; i++)
		ok |= s->tgid == w->pids[i];
	if (!ok)
		return false;
	for (i = 0, ok = !w->nr_tids; i < w->nr_tids; i++)
		ok |= s->tid == w->tids[i];
	if (!ok)
		return false;
	switch (s->type) {
	case MEMMON_REC_SYSCALL:
	case MEMMON_REC_PATH: ev = MEMMON_EV_SYSCALL; break;
	case MEMMON_REC_FAULT: ev = MEMMON_EV_FAULT; break;
	case MEMMON_REC_RSS: ev = MEMMON_EV_RSS; break;
	case MEMMON_REC_MARK: ev = MEMMON_EV_MARK; break;
	default: ev = MEMMON_EV_LIFECYCLE; break;
	}
	if (w->ev && !(w->ev & (1ULL << ev)))
		return false;
	if (w->sys && s->type == MEMMON_REC_SYSCALL && !(w->sys & (1ULL << s->sys)))
		return false;
	if (w->failed) {
		if (s->type == MEMMON_REC_SYSCALL)
			return s->ret < 0 && s->dur >= w->min_dur;
		if (s->type == MEMMON_REC_FAULT)
			return s->fres == MEMMON_FRES_SIGSEGV && s->dur >= w->min_dur;
		return false;
	}
	if (w->min_dur)
		return (s->type == MEMMON_REC_SYSCALL || s->type == MEMMON_REC_FAULT) &&
		       s->dur >= w->min_dur;
	return true;
}

static void run_ok(const char *const *args)
{
	run_memmon(&res, NULL, NULL, args);
	if (res.code)
		fail_msg("memmon %s: exit %d: %s", args[0], res.code, res.err);
}

/* The output's records (JSON lines) are exactly story's kept by w, in order. */
static void check_json(const struct want *w, const char *what)
{
	char *out = story_slurp(outp, NULL), *line, *save = NULL;
	size_t k = 0, i, nwant = 0;

	assert_non_null(out);
	for (i = 0; i < story_n; i++)
		nwant += want_rec(w, &story[i]);
	/* a filter that keeps nothing but LOST, or everything, proves little */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(line, 0, NULL);
		__u64 t;

		if (!j)
			fail_msg("%s: not JSON: %s", what, line);
		t = (__u64)json_integer_value(json_object_get(j, "time_ns"));
		json_decref(j);
		while (k < story_n && !want_rec(w, &story[k]))
			k++;
		if (k == story_n || story[k].time_ns != t)
			fail_msg("%s: record at %llu: not expected (next expected: %llu)",
				 what, (unsigned long long)t, k < story_n ?
				 (unsigned long long)story[k].time_ns : 0ULL);
		k++;
	}
	while (k < story_n && !want_rec(w, &story[k]))
		k++;
	if (k != story_n)
		fail_msg("%s: record at %llu (type %u) missing (%zu expected)", what,
			 (unsigned long long)story[k].time_ns, story[k].type, nwant);
	free(out);
}

struct ref_ctx {
	FILE *f;
	struct memmon_paths *paths;
	struct memmon_format_opts o;
	const struct want *w;
	size_t nth;
};

/* The decoder's own text for the records w keeps: the reference. */
static int ref_cb(void *vctx, const struct memmon_rec_header *rec)
{
	struct ref_ctx *c = vctx;
	size_t i;

	memmon_paths__add_rec(c->paths, rec);
	for (i = 0; i < story_n && story[i].time_ns != rec->time_ns; i++)
		;
	assert_true(i < story_n);
	if (want_rec(c->w, &story[i])) {
		assert_true(memmon_rec__fprint(c->f, rec, &c->o) > 0);
		c->nth++;
	}
	return 0;
}

static char *reference_text(const char *trace, const struct want *w, size_t *n)
{
	struct memmon_trace_reader *r = memmon_trace_reader__open(trace, NULL);
	struct ref_ctx c = { .w = w };
	char *buf = NULL;
	size_t len;

	assert_non_null(r);
	c.f = open_memstream(&buf, &len);
	c.paths = memmon_paths__new();
	c.o.sz = sizeof(c.o);
	c.o.realtime_offset_ns = STORY_RT;
	c.o.paths = c.paths;
	assert_true(memmon_trace_reader__for_each(r, ref_cb, &c) > 0);
	fclose(c.f);
	memmon_paths__free(c.paths);
	memmon_trace_reader__close(r);
	*n = c.nth;
	return buf;
}

static void test_text_is_the_decoders(void **state)
{
	struct want all = { .text = true };
	struct want some = { .text = true, .pids = { 200 }, .nr_pids = 1,
			     .start = STORY_T0 + 1000000000ULL,
			     .end = STORY_T0 + 2000000000ULL };
	char *ref, *out;
	size_t n;

	(void)state;
	ref = reference_text(tr_lost, &all, &n);
	assert_true(n > STORY_N - 10);
	run_ok(A("script", "-o", outp, tr_lost));
	out = story_slurp(outp, NULL);
	assert_string_equal(out, ref);
	/* the file's wall clock (2026-01-01, UTC offset aside) and fd<path> */
	assert_non_null(strstr(out, "3</usr/lib/libc \"x\".so>"));
	assert_non_null(strstr(out, "= -1 ENOMEM"));
	assert_non_null(strstr(out, "lost 1010 events"));
	free(ref);
	free(out);

	ref = reference_text(tr_lost, &some, &n);
	assert_true(n > 100 && n < 400);
	run_ok(A("script", "-p", "200", "--time", "1,2", "-o", outp, tr_lost));
	out = story_slurp(outp, NULL);
	assert_string_equal(out, ref);
	free(ref);
	free(out);

	/* standard output, the same text */
	use(false);
	run_ok(A("script", "--time", "2.9,", tr_clean));
	ref = reference_text(tr_clean, &(struct want){ .text = true,
			     .start = STORY_T0 + 2900000000ULL }, &n);
	assert_true(n > 50);
	assert_string_equal(res.out, ref);
	free(ref);
	use(true);
}

struct filter_case {
	const char *const *args;	/* before "--json -o OUT TRACE" */
	struct want w;
};

static void run_filters(const char *trace, const struct filter_case *fc, size_t n)
{
	const char *args[24];
	size_t i, k;

	for (i = 0; i < n; i++) {
		char what[256] = "";

		for (k = 0; fc[i].args[k]; k++) {
			args[k] = fc[i].args[k];
			strncat(what, args[k], sizeof(what) - strlen(what) - 2);
			strcat(what, " ");
		}
		args[k++] = "--json";
		args[k++] = "-o";
		args[k++] = outp;
		args[k++] = trace;
		args[k] = NULL;
		run_ok(args);
		check_json(&fc[i].w, what);
	}
}

#define S(x)	(STORY_T0 + (__u64)((x) * 1e9))
#define MARK_T(i)	(STORY_T0 + 500000 + (__u64)(i) * STORY_STEP)
#define SYSBIT(s)	(1ULL << MEMMON_SYS_##s)
#define EVBIT(e)	(1ULL << MEMMON_EV_##e)

static const struct filter_case cases[] = {
	{ A("script"), { .ev = 0 } },
	{ A("script", "-p", "200"), { .pids = { 200 }, .nr_pids = 1 } },
	{ A("script", "--pid", "100,300"), { .pids = { 100, 300 }, .nr_pids = 2 } },
	{ A("script", "--tid", "101"), { .tids = { 101 }, .nr_tids = 1 } },
	{ A("script", "-p", "200", "--tid", "201,300"),
	  { .pids = { 200 }, .nr_pids = 1, .tids = { 201, 300 }, .nr_tids = 2 } },
	{ A("script", "-p", "999"), { .pids = { 999 }, .nr_pids = 1 } },
	{ A("script", "-e", "faults"), { .ev = EVBIT(FAULT) } },
	{ A("script", "-e", "rss,lifecycle"), { .ev = EVBIT(RSS) | EVBIT(LIFECYCLE) } },
	{ A("script", "-e", "mark"), { .ev = EVBIT(MARK) } },
	{ A("script", "-e", "mmap,munmap"),
	  { .ev = EVBIT(SYSCALL), .sys = SYSBIT(MMAP) | SYSBIT(MUNMAP) } },
	{ A("script", "--events", "syscalls"), { .ev = EVBIT(SYSCALL) } },
	{ A("script", "--failed"), { .failed = true } },
	{ A("script", "--min-duration", "2ms"), { .min_dur = 2000000 } },
	{ A("script", "--min-duration", "2500us"), { .min_dur = 2500000 } },
	{ A("script", "--min-duration", "0.003"), { .min_dur = 3000000 } },
	{ A("script", "--failed", "--min-duration", "600ns"),
	  { .failed = true, .min_dur = 600 } },
	{ A("script", "--time", "1,2"), { .start = S(1), .end = S(2) } },
	{ A("script", "--time", "0.9,1.3"), { .start = S(0.9), .end = S(1.3) } },
	{ A("script", "--time", "2.5,"), { .start = S(2.5) } },
	{ A("script", "--time", ",0.25"), { .end = S(0.25) } },
	{ A("script", "--time", "begin,finish"),
	  { .start = MARK_T(500), .end = MARK_T(2500) } },
	{ A("script", "--time", "middle,"), { .start = MARK_T(1500) } },
	{ A("script", "--time", "0.7,middle"), { .start = S(0.7), .end = MARK_T(1500) } },
	{ A("script", "--time", "begin,begin"),
	  { .start = MARK_T(500), .end = MARK_T(500) } },
	{ A("script", "-p", "100", "-e", "syscalls", "--failed", "--time", "0.2,2.8"),
	  { .pids = { 100 }, .nr_pids = 1, .ev = EVBIT(SYSCALL), .failed = true,
	    .start = S(0.2), .end = S(2.8) } },
};

static void test_filters(void **state)
{
	(void)state;
	run_filters(tr_lost, cases, ARRAY_SIZE(cases));
	use(false);
	run_filters(tr_clean, cases, ARRAY_SIZE(cases));
	use(true);
}

/* The filters are not vacuous: each keeps some and drops some. */
static void test_filters_discriminate(void **state)
{
	size_t i, k, n;

	(void)state;
	for (i = 1; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].w.pids[0] == 999)
			continue;	/* LOST only, on purpose */
		for (k = 0, n = 0; k < story_n; k++)
			n += want_rec(&cases[i].w, &story[k]);
		if (n == story_n || n == 0)
			fail_msg("case %zu keeps %zu of %zu", i, n, story_n);
	}
	/* LOST is kept by a filter that keeps nothing else */
	run_ok(A("script", "-p", "999", "--json", "-o", outp, tr_lost));
	{
		char *out = story_slurp(outp, NULL), *p = out;

		for (n = 0; (p = strstr(p, "\"type\":\"lost\"")); p++)
			n++;
		assert_int_equal(n, 3);
		free(out);
	}
}

/*
 * The window is a seek: with the first chunks damaged, a full pass fails
 * and a window after them prints what the intact file gives.
 */
static void test_time_seeks(void **state)
{
	char damaged[160];
	struct mtf_block b;
	size_t len;
	char *buf = story_slurp(tr_clean, &len), *good, *got;
	__u64 off;
	FILE *f;
	int k;

	(void)state;
	assert_non_null(buf);
	run_ok(A("script", "--json", "--time", "2.7,2.8", "-o", outp, tr_clean));
	good = story_slurp(outp, NULL);
	assert_true(strlen(good) > 1000);
	/* damage the first chunk of every CPU: skip META, then the chunks */
	off = sizeof(struct mtf_file_header);
	memcpy(&b, buf + off, sizeof(b));
	off += 64 + mtf_align8(b.payload_size);
	for (k = 0; k < STORY_NCPU; k++) {
		memcpy(&b, buf + off, sizeof(b));
		assert_int_equal(b.type, MTF_BLOCK_CHUNK);
		buf[off + 64 + 40] ^= 0x5a;
		off += 64 + mtf_align8(b.payload_size);
	}
	snprintf(damaged, sizeof(damaged), "%s/damaged.trace", dir);
	f = fopen(damaged, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);

	run_memmon(&res, NULL, NULL, A("script", "--json", "-o", outp, damaged));
	assert_int_equal(res.code, 1);
	assert_non_null(strstr(res.err, "checksum mismatch"));
	run_ok(A("script", "--json", "--time", "2.7,2.8", "-o", outp, damaged));
	got = story_slurp(outp, NULL);
	assert_string_equal(got, good);
	free(got);
	free(good);
	free(buf);
	unlink(damaged);
}

struct err_case {
	const char *const *args;
	int code;
	const char *in_err;
};

static void test_errors(void **state)
{
	char notrace[160], cut[160], flipped[160], malformed[160];
	size_t len;
	char *buf = story_slurp(tr_clean, &len);
	const struct err_case c[] = {
		{ A("script"), 2, "missing TRACE" },
		{ A("script", tr_clean, tr_clean), 2, "one TRACE only" },
		{ A("script", "--bogus", tr_clean), 2, "unknown or incomplete option '--bogus'" },
		{ A("script", "-x", tr_clean), 2, "unknown or incomplete option '-x'" },
		{ A("script", tr_clean, "--time"), 2, "unknown or incomplete option" },
		{ A("script", "--time", "5", tr_clean), 2, "bad --time '5'" },
		{ A("script", "--time", "3,1", tr_clean), 2, "ends before it starts" },
		{ A("script", "--time", "1.2.3,4", tr_clean), 2, "bad time '1.2.3'" },
		{ A("script", "--time", "nosuch,", tr_clean), 1, "no marker 'nosuch'" },
		{ A("script", "--time", "finish,begin", tr_clean), 1, "no marker 'begin'" },
		{ A("script", "--min-duration", "abc", tr_clean), 2, "bad duration 'abc'" },
		{ A("script", "--min-duration", "5xs", tr_clean), 2, "bad duration" },
		{ A("script", "-p", "x", tr_clean), 2, "bad id list 'x'" },
		{ A("script", "--tid", "1,,2", tr_clean), 2, "bad id list" },
		{ A("script", "-p", "-3", tr_clean), 2, "bad id list" },
		{ A("script", "-e", "bogus", tr_clean), 2, "unknown event 'bogus'" },
		{ A("script", "/nonexistent/x.trace"), 1, "No such file" },
		{ A("script", notrace), 1, "not a memmon trace file" },
		{ A("script", flipped), 1, "checksum mismatch" },
		{ A("script", malformed), 1,
		  "a malformed record: type 3 (syscall) of 32 bytes at time_ns 1000000000001" },
		{ A("script", "--json", malformed), 1, "a malformed record: type 3" },
		{ A("script", "--help"), 0, "" },
	};
	size_t i;
	FILE *f;

	(void)state;
	snprintf(notrace, sizeof(notrace), "%s/notrace", dir);
	snprintf(cut, sizeof(cut), "%s/cut.trace", dir);
	snprintf(flipped, sizeof(flipped), "%s/flipped.trace", dir);
	snprintf(malformed, sizeof(malformed), "%s/malformed.trace", dir);
	story_write_malformed(malformed);
	f = fopen(notrace, "w");
	fputs("hello, this is not a trace at all; not even close to one, and "
	      "long enough for a header\n", f);
	fclose(f);
	buf[len / 2] ^= 0x10;	/* inside a chunk's records */
	f = fopen(flipped, "wb");
	fwrite(buf, 1, len, f);
	fclose(f);
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		run_memmon(&res, NULL, NULL, c[i].args);
		if (res.code != c[i].code || !strstr(res.err, c[i].in_err))
			fail_msg("case %zu (%s): exit %d (want %d)\nstderr: %s", i,
				 c[i].args[1] ? c[i].args[1] : "", res.code,
				 c[i].code, res.err);
	}
	/* a file cut short: what is there, and a warning */
	buf[len / 2] ^= 0x10;
	f = fopen(cut, "wb");
	fwrite(buf, 1, len * 2 / 3, f);
	fclose(f);
	run_memmon(&res, NULL, NULL, A("script", "--json", "-o", outp, cut));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.err, "truncated at offset"));
	/* help names every filter */
	run_memmon(&res, NULL, NULL, A("script", "--help"));
	assert_non_null(strstr(res.out, "--min-duration"));
	assert_non_null(strstr(res.out, "--time START,END"));
	unlink(notrace);
	unlink(cut);
	unlink(flipped);
	unlink(malformed);
	free(buf);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(tr_lost, sizeof(tr_lost), "%s/lost.trace", dir);
	snprintf(tr_clean, sizeof(tr_clean), "%s/clean.trace", dir);
	snprintf(outp, sizeof(outp), "%s/out", dir);
	use(false);
	use(true);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(tr_lost);
	unlink(tr_clean);
	unlink(outp);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_is_the_decoders),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_filters_discriminate),
		cmocka_unit_test(test_time_seeks),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
