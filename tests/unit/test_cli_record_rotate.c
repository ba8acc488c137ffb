// SPDX-License-Identifier: GPL-2.0
/*
 * memmon record's stop and rotation options: the parsers (rec_rotate.c),
 * part names and the order parts are removed in, and the usage errors the
 * command gives for bad values (exit 2, before any device is opened).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "test_cli_run.h"
#include "rec_rotate.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NS(s)	((__u64)(s) * 1000000000ULL)

static void test_duration(void **state)
{
	static const struct { const char *s; int err; __u64 ns; } c[] = {
		{ "1", 0, NS(1) },
		{ "90", 0, NS(90) },
		{ "90s", 0, NS(90) },
		{ "15m", 0, NS(15 * 60) },
		{ "2h", 0, NS(2 * 3600) },
		{ "24000h", 0, NS(24000ULL * 3600) },	/* 1000 days */
		{ "24001h", -ERANGE, 0 },
		{ "99999999999999999999", -ERANGE, 0 },
		{ "0", -EINVAL, 0 },
		{ "0s", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ "-5", -EINVAL, 0 },
		{ "+5", -EINVAL, 0 },
		{ " 5", -EINVAL, 0 },
		{ "5x", -EINVAL, 0 },
		{ "5ms", -EINVAL, 0 },
		{ "5d", -EINVAL, 0 },
		{ "m", -EINVAL, 0 },
		{ "1.5", -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		__u64 ns = 12345;
		int err = rec_parse_duration(c[i].s, &ns);

		/* the documented result, and *ns untouched on error */
		if (err != c[i].err || ns != (c[i].err ? 12345 : c[i].ns))
			fail_msg("'%s': err %d ns %llu, want %d %llu", c[i].s, err,
				 (unsigned long long)ns, c[i].err,
				 (unsigned long long)c[i].ns);
	}
	assert_int_equal(rec_parse_duration(NULL, &(__u64){ 0 }), -EINVAL);
}

static void test_max_size(void **state)
{
	static const struct { const char *s; int err; __u64 v; } c[] = {
		{ "16K", 0, 16384 },
		{ "16384", 0, 16384 },
		{ "1M", 0, 1ULL << 20 },
		{ "1MiB", 0, 1ULL << 20 },
		{ "3M", 0, 3ULL << 20 },	/* no power of two needed */
		{ "2G", 0, 2ULL << 30 },
		{ "16383", -ERANGE, 0 },
		{ "15K", -ERANGE, 0 },
		{ "0", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "-1M", -EINVAL, 0 },
		{ "1T", -EINVAL, 0 },
		{ "1MX", -EINVAL, 0 },
		{ "99999999999999999999G", -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		__u64 v = 7;
		int err = rec_parse_max_size(c[i].s, &v);

		if (err != c[i].err || v != (c[i].err ? 7 : c[i].v))
			fail_msg("'%s': err %d v %llu, want %d %llu", c[i].s, err,
				 (unsigned long long)v, c[i].err,
				 (unsigned long long)c[i].v);
	}
}

static void test_rotate(void **state)
{
	static const struct { const char *s; int err; unsigned int v; } c[] = {
		{ "1", 0, 1 },
		{ "3", 0, 3 },
		{ "1000000", 0, 1000000 },
		{ "1000001", -ERANGE, 0 },
		{ "0", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "3x", -EINVAL, 0 },
		{ "99999999999999999999999", -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		unsigned int v = 7;
		int err = rec_parse_rotate(c[i].s, &v);

		if (err != c[i].err || v != (c[i].err ? 7 : c[i].v))
			fail_msg("'%s': err %d v %u, want %d %u", c[i].s, err, v,
				 c[i].err, c[i].v);
	}
}

static void test_part_names(void **state)
{
	char *p;

	(void)state;
	p = rec_part_path("out.trace", 1);
	assert_string_equal(p, "out.trace.1");
	free(p);
	p = rec_part_path("/tmp/d/x", 12);
	assert_string_equal(p, "/tmp/d/x.12");
	free(p);
	/* numbers grow without a width: a name is never reused */
	p = rec_part_path("x", 4294967296UL);
	assert_string_equal(p, "x.4294967296");
	free(p);
}

/*
 * With keep = 3, opening parts 1, 2, 3 removes nothing, then each new part
 * removes the oldest: 4 -> 1, 5 -> 2, ...; so after part n the files on
 * disk are n-2..n. keep 0 (no --rotate) removes nothing.
 */
static void test_removal_order(void **state)
{
	unsigned long n, removed[16], nr = 0, lowest_kept = 1, i;

	(void)state;
	for (n = 1; n <= 10; n++) {
		unsigned long old = rec_part_to_remove(n, 3);

		if (old) {
			/* the oldest still there, once */
			assert_int_equal(old, lowest_kept);
			removed[nr++] = old;
			lowest_kept++;
		}
		/* exactly min(n, 3) parts remain */
		assert_int_equal(n - lowest_kept + 1, n < 3 ? n : 3);
	}
	assert_int_equal(nr, 7);
	for (i = 0; i < nr; i++)
		assert_int_equal(removed[i], i + 1);
	assert_int_equal(rec_part_to_remove(1, 1), 0);
	assert_int_equal(rec_part_to_remove(2, 1), 1);
	assert_int_equal(rec_part_to_remove(1000, 0), 0);
}

static void test_usage_errors(void **state)
{
	const struct { const char *const *args; const char *in_err; } c[] = {
		{ A("record", "--duration", "0", "-p", "1"), "bad duration '0'" },
		{ A("record", "--duration", "5d", "-p", "1"), "bad duration '5d'" },
		{ A("record", "--duration", "", "-p", "1"), "bad duration ''" },
		{ A("record", "--duration"), "unknown or incomplete option" },
		{ A("record", "--max-size", "1K", "-p", "1"), "bad max size '1K'" },
		{ A("record", "--max-size", "lots", "-p", "1"), "at least 16K" },
		{ A("record", "--rotate", "3", "-p", "1"), "--rotate needs --max-size" },
		{ A("record", "--max-size", "1M", "--rotate", "0", "-p", "1"),
		  "bad rotate count '0'" },
		{ A("record", "--max-size", "1M", "--rotate", "x", "-p", "1"),
		  "bad rotate count 'x'" },
		{ A("record", "--until-mark", "", "-p", "1"), "bad --until-mark text" },
		{ A("record", "--until-mark", "end", "-e", "faults", "-p", "1"),
		  "--until-mark needs the mark events" },
	};
	static struct run res;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		run_memmon(&res, NULL, NULL, c[i].args);
		/* exit 2 with the message, nothing recorded */
		if (res.code != 2 || !strstr(res.err, c[i].in_err))
			fail_msg("case %zu: exit %d\nstderr: %s", i, res.code, res.err);
	}
	run_memmon(&res, NULL, NULL, A("record", "--help"));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.out, "--max-size SIZE"));
	assert_non_null(strstr(res.out, "--rotate N"));
	assert_non_null(strstr(res.out, "--until-mark TEXT"));
	assert_non_null(strstr(res.out, "--duration TIME"));
	assert_non_null(strstr(res.out, "SIGUSR1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_max_size),
		cmocka_unit_test(test_rotate),
		cmocka_unit_test(test_part_names),
		cmocka_unit_test(test_removal_order),
		cmocka_unit_test(test_usage_errors),
	};

	return cmocka_run_group_tests_name("cli_record_rotate", tests, NULL, NULL);
}
