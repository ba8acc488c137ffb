// SPDX-License-Identifier: GPL-2.0
/*
 * The memmon command's argument and environment errors: each gives the
 * documented exit code (2: usage, 1: run time) and a message that says
 * what to do. Table-driven; no kernel module needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <errno.h>
#include <cmocka.h>
#include "test_cli_run.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct cli_case {
	const char *const *args;
	const char *env;
	int code;
	const char *in_err;	/* must appear in stderr */
	const char *in_out;	/* must appear in stdout (or NULL) */
};

static char missing_pid[16];

static void check(const struct cli_case *c, size_t n)
{
	static struct run res;
	struct run *r = &res;
	size_t i;

	for (i = 0; i < n; i++) {
		run_memmon(r, c[i].env, NULL, c[i].args);
		if (r->code != c[i].code ||
		    (c[i].in_err && !strstr(r->err, c[i].in_err)) ||
		    (c[i].in_out && !strstr(r->out, c[i].in_out)))
			fail_msg("case %zu (%s %s): exit %d (want %d)\nstderr: %s\nstdout: %.200s",
				 i, c[i].args[0] ? c[i].args[0] : "",
				 c[i].args[0] && c[i].args[1] ? c[i].args[1] : "",
				 r->code, c[i].code, r->err, r->out);
	}
}

static void test_usage_errors(void **state)
{
	const struct cli_case c[] = {
		{ A(NULL), NULL, 2, "usage: memmon COMMAND", NULL },
		{ A("bogus"), NULL, 2, "'bogus' is not a memmon command", NULL },
		{ A("trace"), NULL, 2, "nothing to trace", NULL },
		{ A("trace", "-x"), NULL, 2, "unknown or incomplete option '-x'", NULL },
		{ A("trace", "-e"), NULL, 2, "unknown or incomplete option", NULL },
		{ A("trace", "-e", "bogus", "-p", "1"), NULL, 2, "unknown event 'bogus'", NULL },
		{ A("trace", "-e", "faults,mmap,bogus", "-p", "1"), NULL, 2,
		  "Valid events: all, syscalls, faults, rss, lifecycle, mark", NULL },
		{ A("trace", "-e", "", "-p", "1"), NULL, 2, "empty event list", NULL },
		{ A("trace", "-m", "3M", "-p", "1"), NULL, 2, "bad ring size '3M'", NULL },
		{ A("trace", "-m", "abc", "-p", "1"), NULL, 2, "bad ring size 'abc'", NULL },
		{ A("trace", "-m", "-4M", "-p", "1"), NULL, 2, "bad ring size", NULL },
		{ A("trace", "-m", "99999999999999999999G", "-p", "1"), NULL, 2, "bad ring size", NULL },
		{ A("trace", "-p", "abc"), NULL, 2, "bad PID 'abc'", NULL },
		{ A("trace", "-p", "1,,x"), NULL, 2, "bad PID 'x'", NULL },
		{ A("trace", "-p", "0"), NULL, 2, "bad PID '0'", NULL },
		{ A("record", "-m", "0", "-p", "1"), NULL, 2, "bad ring size '0'", NULL },
		{ A("record"), NULL, 2, "nothing to record", NULL },
		{ A("record", "--bogus"), NULL, 2, "unknown or incomplete option '--bogus'", NULL },
		{ A("report"), NULL, 2, "missing FILE", NULL },
		{ A("report", "a", "b"), NULL, 2, "one FILE only", NULL },
		{ A("report", "-q", "a"), NULL, 2, "unknown option", NULL },
		{ A("mark"), NULL, 2, "missing TEXT", NULL },
		{ A("info", "extra"), NULL, 2, "unexpected argument 'extra'", NULL },
	};

	(void)state;
	check(c, ARRAY_SIZE(c));
}

static void test_runtime_errors(void **state)
{
	const struct cli_case c[] = {
		/* no module: say how to load it */
		{ A("info"), "MEMMON_DEVICE=/nonexistent/memmon", 1,
		  "Try 'modprobe memmon'", NULL },
		{ A("trace", "-p", "1"), "MEMMON_DEVICE=/nonexistent/memmon", 1,
		  "Is the memmon kernel module loaded?", NULL },
		{ A("record", "-o", "/dev/null", "-p", "1"), "MEMMON_DEVICE=/nonexistent/memmon", 1,
		  "modprobe memmon", NULL },
		{ A("mark", "hello"), "MEMMON_DEVICE=/nonexistent/memmon", 1,
		  "modprobe memmon", NULL },
		/* a node that is not ours */
		{ A("info"), "MEMMON_DEVICE=/dev/null", 1, "is not a memmon device", NULL },
		/* a PID that does not exist */
		{ A("trace", "-p", missing_pid), NULL, 1, "not found: no such process", NULL },
		{ A("report", "/nonexistent.trace"), NULL, 1,
		  "/nonexistent.trace: No such file or directory", NULL },
		{ A("report", "/proc/self/exe"), NULL, 1, "not a memmon trace file", NULL },
	};

	(void)state;
	check(c, ARRAY_SIZE(c));
}

static void test_help_and_stdout(void **state)
{
	const struct cli_case c[] = {
		{ A("--help"), NULL, 0, NULL, "usage: memmon COMMAND" },
		{ A("trace", "--help"), NULL, 0, NULL, "usage: memmon trace" },
		{ A("record", "-h"), NULL, 0, NULL, "usage: memmon record" },
		{ A("report", "--help"), NULL, 0, NULL, "usage: memmon report" },
		{ A("info", "--help"), NULL, 0, NULL, "usage: memmon info" },
		{ A("mark", "--help"), NULL, 0, NULL, "usage: memmon mark" },
	};
	struct run *r = malloc(sizeof(*r));

	(void)state;
	check(c, ARRAY_SIZE(c));
	/* a failed write to stdout is an error */
	run_memmon(r, NULL, "/dev/full", A("--help"));
	assert_int_equal(r->code, 1);
	assert_non_null(strstr(r->err, "write error on standard output"));
	run_memmon(r, NULL, "/dev/full", A("trace", "--help"));
	assert_int_equal(r->code, 1);
	free(r);
}

/* -p takes what users paste: commas, blanks, pidof's output. */
static void test_pid_lists(void **state)
{
	struct target t = { .go_fd = -1 };
	char list[64];

	(void)state;
	snprintf(list, sizeof(list), " %d  %d,%d\n", (int)getpid(), (int)getppid(),
		 (int)getpid());
	assert_int_equal(target_add_pids("trace", &t, list), 0);
	assert_int_equal(t.nr_pids, 3);
	assert_int_equal(t.pids[0], getpid());
	assert_int_equal(t.pids[1], getppid());
	assert_int_equal(t.pids[2], getpid());
	assert_int_equal(target_add_pids("trace", &t, "12x 3"), EXIT_USAGE);
	assert_int_equal(t.nr_pids, 3);
	target_free(&t);
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		int ret;
		__u64 v;
	} c[] = {
		{ "4096", 0, 4096 }, { "4K", 0, 4096 }, { "4k", 0, 4096 },
		{ "4KiB", 0, 4096 }, { "1M", 0, 1 << 20 }, { "2MB", 0, 2 << 20 },
		{ "1G", 0, 1ULL << 30 }, { "0", 0, 0 },
		{ "", -EINVAL, 0 }, { "M", -EINVAL, 0 }, { "1T", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 }, { "1.5M", -EINVAL, 0 }, { "1MM", -EINVAL, 0 },
		{ "18446744073709551615K", -ERANGE, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		__u64 v = 0;
		int ret = tool_parse_size(c[i].s, &v);

		if (ret != c[i].ret || (!ret && v != c[i].v))
			fail_msg("parse_size(\"%s\") = %d, %llu", c[i].s, ret,
				 (unsigned long long)v);
	}
}

static void test_parse_events(void **state)
{
	__u64 m = 0, sc = 0;

	(void)state;
	assert_int_equal(tool_parse_events("t", "faults,rss", &m, &sc), 0);
	assert_int_equal(m, (1ULL << MEMMON_EV_FAULT) | (1ULL << MEMMON_EV_RSS));
	assert_int_equal(sc, 0);
	/* a syscall name turns on the syscall event for that call only */
	assert_int_equal(tool_parse_events("t", "mmap,munmap", &m, &sc), 0);
	assert_int_equal(m, 1ULL << MEMMON_EV_SYSCALL);
	assert_int_equal(sc, (1ULL << MEMMON_SYS_MMAP) | (1ULL << MEMMON_SYS_MUNMAP));
	assert_int_equal(tool_parse_events("t", "all", &m, &sc), 0);
	assert_int_equal(m, (1ULL << MEMMON_EV__COUNT) - 1);
	assert_int_equal(sc, (1ULL << MEMMON_SYS__COUNT) - 1);
	assert_int_equal(tool_parse_events("t", "lifecycle,mark,syscalls", &m, &sc), 0);
	assert_int_equal(sc, (1ULL << MEMMON_SYS__COUNT) - 1);
}

static int setup(void **state)
{
	pid_t p;

	(void)state;
	/* a PID nobody has */
	for (p = 4194000; p > 300000; p -= 997)
		if (kill(p, 0) < 0 && errno == ESRCH)
			break;
	snprintf(missing_pid, sizeof(missing_pid), "%d", p);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_runtime_errors),
		cmocka_unit_test(test_help_and_stdout),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_events),
		cmocka_unit_test(test_pid_lists),
	};

	return cmocka_run_group_tests_name("cli_args", tests, setup, NULL);
}
