// SPDX-License-Identifier: GPL-2.0
/*
 * memmon serve's pure parts: recording names, the token comparison and
 * file, Range headers, the digest, start requests (JSON errors and the
 * record command line they become), remote's URLs, and /metrics text
 * checked by promtool.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <stdio.h>
#include <signal.h>
#include "test_cli_run.h"
#include "serve.h"

static void test_names(void **state)
{
	static const struct { const char *name; bool ok; } t[] = {
		{ "a", true }, { "rec-1_x.v2", true }, { "A.B", true },
		{ "", false }, { ".", false }, { "..", false }, { ".hidden", false },
		{ "../etc", false }, { "a/b", false }, { "a..b", false },
		{ "..%2F", false }, { "a b", false }, { "a\\b", false },
		{ "\xc3\xa9", false }, { "x%2Fy", false },
		{ "0123456789012345678901234567890123456789012345678901234567890123", true },
		{ "01234567890123456789012345678901234567890123456789012345678901234", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++)
		if (serve_name_valid(t[i].name) != t[i].ok)
			fail_msg("name '%s': want %d", t[i].name, t[i].ok);
}

static void test_token(void **state)
{
	(void)state;
	assert_true(serve_token_equal("abcdef", "abcdef"));
	assert_false(serve_token_equal("abcdef", "abcdeg"));
	assert_false(serve_token_equal("abcdef", "abcde"));
	assert_false(serve_token_equal("abcde", "abcdef"));
	assert_false(serve_token_equal("", "a"));
	assert_true(serve_auth_ok("sekrit-token", "Bearer sekrit-token"));
	assert_false(serve_auth_ok("sekrit-token", "Bearer sekrit-tokex"));
	assert_false(serve_auth_ok("sekrit-token", "bearer sekrit-token"));
	assert_false(serve_auth_ok("sekrit-token", "Basic sekrit-token"));
	assert_false(serve_auth_ok("sekrit-token", NULL));
	assert_false(serve_auth_ok("", "Bearer "));
}

static void test_token_file(void **state)
{
	char dir[] = "/tmp/test_serve.XXXXXX", path[64], tok[80], tok2[80], err[256];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/token", dir);
	assert_int_equal(serve_token_load(path, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_int_equal(strlen(tok), 2 * SERVE_TOKEN_BYTES);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* the second start reads the same token */
	assert_int_equal(serve_token_load(path, tok2, sizeof(tok2), err, sizeof(err)), 0);
	assert_string_equal(tok, tok2);
	/* readable by others: refused */
	chmod(path, 0644);
	assert_int_equal(serve_token_load(path, tok2, sizeof(tok2), err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "chmod 600"));
	unlink(path);
	rmdir(dir);
}

static void test_range(void **state)
{
	static const struct {
		const char *hdr;
		__u64 size;
		int ret;
		__u64 start, end;
	} t[] = {
		{ NULL, 100, 0, 0, 0 },
		{ "bytes=0-", 100, 1, 0, 99 },
		{ "bytes=10-19", 100, 1, 10, 19 },
		{ "bytes=10-1000", 100, 1, 10, 99 },
		{ "bytes=99-", 100, 1, 99, 99 },
		{ "bytes=100-", 100, -1, 0, 0 },
		{ "bytes=500-600", 100, -1, 0, 0 },
		{ "bytes=-10", 100, 1, 90, 99 },
		{ "bytes=-1000", 100, 1, 0, 99 },
		{ "bytes=-0", 100, -1, 0, 0 },
		{ "bytes=0-", 0, -1, 0, 0 },
		{ "bytes=20-10", 100, 0, 0, 0 },
		{ "bytes=0-1,5-6", 100, 0, 0, 0 },
		{ "bytes=abc", 100, 0, 0, 0 },
		{ "bytes=-", 100, 0, 0, 0 },
		{ "bytes=1-2x", 100, 0, 0, 0 },
		{ "items=0-1", 100, 0, 0, 0 },
		{ "bytes=99999999999999999999999-", 100, 0, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		__u64 s = 0, e = 0;
		int r = serve_parse_range(t[i].hdr, t[i].size, &s, &e);

		if (r != t[i].ret || (r == 1 && (s != t[i].start || e != t[i].end)))
			fail_msg("'%s' size %llu: got %d %llu-%llu", t[i].hdr ? t[i].hdr : "(null)",
				 (unsigned long long)t[i].size, r, (unsigned long long)s,
				 (unsigned long long)e);
	}
}

static void test_digest(void **state)
{
	char path[] = "/tmp/test_serve_dg.XXXXXX", out[80], b[16];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	assert_int_equal(serve_file_digest(fd, out, sizeof(out)), 0);
	/* SHA-256("abc"), FIPS 180-2 */
	assert_string_equal(out, "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:");
	close(fd);
	unlink(path);
	serve_base64((const unsigned char *)"f", 1, b);
	assert_string_equal(b, "Zg==");
	serve_base64((const unsigned char *)"fo", 2, b);
	assert_string_equal(b, "Zm8=");
	serve_base64((const unsigned char *)"foo", 3, b);
	assert_string_equal(b, "Zm9v");
}

static void test_start_requests(void **state)
{
	static const struct { const char *json; int status; const char *msg; } t[] = {
		{ "{}", 400, "nothing to record" },
		{ "{\"cgroup\":\"../x\"}", 400, "cgroup" },
		{ "{\"cgroup\":\"/sys/fs/cgroup/a/../../x\"}", 400, "cgroup" },
		{ "{\"cgroup\":\"/etc\"}", 400, "cgroup" },
		{ "{\"cgroup\":\"\"}", 400, "cgroup" },
		{ "{\"cgroup\":7}", 400, "cgroup" },
		{ "{\"pids\":[]}", 400, "pids" },
		{ "{\"pids\":[-1]}", 400, "positive" },
		{ "{\"pids\":\"12\"}", 400, "pids" },
		{ "{\"cmd\":[]}", 400, "cmd" },
		{ "{\"cmd\":[1]}", 400, "cmd" },
		{ "{\"cmd\":[\"true\"],\"ring_size\":\"4Q\"}", 400, "ring_size" },
		{ "{\"cmd\":[\"true\"],\"rotate\":3}", 400, "max_size" },
		{ "{\"cmd\":[\"true\"],\"duration\":-1}", 400, "duration" },
		{ "{\"cmd\":[\"true\"],\"events\":\"-x\"}", 400, "events" },
		{ "{\"cmd\":[\"true\"],\"bogus\":1}", 400, "unknown field" },
		{ "{\"cmd\":[\"true\"],\"follow\":\"yes\"}", 400, "follow" },
	};
	struct serve sv = { .cfg = { .dir = "/tmp", .exe = "/bin/memmon" } };
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		json_t *req = json_loads(t[i].json, 0, NULL);
		int st = 0;
		char **argv;

		assert_non_null(req);
		err[0] = 0;
		argv = serve_rec_argv(&sv, req, "/tmp/x.memmon", &st, err, sizeof(err));
		json_decref(req);
		if (argv || st != t[i].status || !strstr(err, t[i].msg))
			fail_msg("%s: got %d '%s'", t[i].json, st, err);
	}
}

static void test_start_argv(void **state)
{
	struct serve sv = { .cfg = { .dir = "/tmp", .exe = "/bin/memmon" } };
	json_t *req = json_loads("{\"pids\":[12,34],\"events\":\"faults,mmap\","
				 "\"ring_size\":\"1M\",\"follow\":true,\"max_size\":\"64M\","
				 "\"rotate\":3,\"duration\":5,\"until_mark\":\"done\","
				 "\"cmd\":[\"sh\",\"-c\",\"exit 0\"]}", 0, NULL);
	char err[256], line[1024] = "";
	char **argv;
	int st, i;

	(void)state;
	argv = serve_rec_argv(&sv, req, "/tmp/x.memmon", &st, err, sizeof(err));
	json_decref(req);
	assert_non_null(argv);
	for (i = 0; argv[i]; i++) {
		strcat(line, i ? "|" : "");
		strcat(line, argv[i]);
		free(argv[i]);
	}
	free(argv);
	assert_string_equal(line, "/bin/memmon|record|-o|/tmp/x.memmon|-p|12,34|-f|-e|"
			    "faults,mmap|-m|1M|--max-size=64M|--rotate=3|--duration=5|"
			    "--until-mark=done|--|sh|-c|exit 0");

	req = json_loads("{\"cgroup\":\"system.slice/x.service\"}", 0, NULL);
	argv = serve_rec_argv(&sv, req, "/tmp/x.memmon", &st, err, sizeof(err));
	json_decref(req);
	assert_non_null(argv);
	line[0] = 0;
	for (i = 0; argv[i]; i++) {
		strcat(line, i ? "|" : "");
		strcat(line, argv[i]);
		free(argv[i]);
	}
	free(argv);
	assert_string_equal(line, "/bin/memmon|record|-o|/tmp/x.memmon|-G|system.slice/x.service");
}

static void test_base_url(void **state)
{
	char u[256];

	(void)state;
	assert_int_equal(remote_base_url("host", false, u, sizeof(u)), 0);
	assert_string_equal(u, "http://host:7420");
	assert_int_equal(remote_base_url("10.0.0.1:99", true, u, sizeof(u)), 0);
	assert_string_equal(u, "https://10.0.0.1:99");
	assert_int_equal(remote_base_url("[::1]:8", false, u, sizeof(u)), 0);
	assert_string_equal(u, "http://[::1]:8");
	assert_int_equal(remote_base_url("https://h:1/", false, u, sizeof(u)), 0);
	assert_string_equal(u, "https://h:1");
	assert_int_equal(remote_base_url("::1", false, u, sizeof(u)), -EINVAL);
	assert_int_equal(remote_base_url("a/b", false, u, sizeof(u)), -EINVAL);
	assert_int_equal(remote_base_url("", false, u, sizeof(u)), -EINVAL);
}

static const char report_a[] =
"{\"processes\":["
" {\"tgid\":100,\"exe\":\"/usr/bin/a\\\"q\",\"faults_total\":30,"
"  \"faults\":{\"anon\":{\"minor\":20,\"major\":1},\"file\":{\"minor\":9,\"major\":0}},"
"  \"calls\":{\"mmap\":{\"count\":5,\"failed\":1},\"munmap\":{\"count\":2,\"failed\":0}},"
"  \"fault_latency\":[{\"ge_ns\":512,\"lt_ns\":1024,\"count\":10},"
"                    {\"ge_ns\":4096,\"lt_ns\":8192,\"count\":20}],"
"  \"bytes_mapped\":8192,\"bytes_unmapped\":4096,\"peak_rss_seen\":65536},"
" {\"tgid\":101,\"exe\":\"/bin/b\",\"faults\":{\"anon\":{\"minor\":3,\"major\":0}},"
"  \"calls\":{},\"fault_latency\":[]},"
" {\"tgid\":102,\"exe\":\"/bin/c\",\"faults\":{\"anon\":{\"minor\":1,\"major\":0}},"
"  \"calls\":{\"brk\":{\"count\":1,\"failed\":0}},\"fault_latency\":[]}"
"]}";

static int promtool(const char *text, char *out, size_t size)
{
	char path[] = "/tmp/test_serve_prom.XXXXXX", cmd[128];
	int fd = mkstemp(path), st;
	FILE *p;
	size_t n;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics <%s 2>&1", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, size - 1, p);
	out[n] = 0;
	st = pclose(p);
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_metrics(void **state)
{
	__u64 del[2] = { 40, 7 }, lost[2] = { 0, 3 };
	struct rec_stats st = { .nr_cpus = 2, .delivered = del, .lost = lost };
	struct metrics_input in = { .recording = "r1", .st = &st, .running = true };
	char out[4096], *text;

	(void)state;
	if (system("command -v promtool >/dev/null 2>&1"))
		skip();	/* Debian's prometheus package; scripts/deps installs it */
	in.report = json_loads(report_a, 0, NULL);
	assert_non_null(in.report);
	/* top 2: pid 100 and 101 by own labels, 102 folded into "other" */
	text = serve_metrics_text(&in, 1, 2, 1, 5);
	json_decref(in.report);
	assert_non_null(text);
	assert_non_null(strstr(text, "memmon_faults_total{pid=\"100\",comm=\"a\\\"q\","
			       "class=\"anon\",kind=\"minor\"} 20\n"));
	assert_non_null(strstr(text, "memmon_syscalls_total{pid=\"100\",comm=\"a\\\"q\","
			       "syscall=\"mmap\",result=\"error\"} 1\n"));
	assert_non_null(strstr(text, "memmon_syscalls_total{pid=\"other\",comm=\"other\","
			       "syscall=\"brk\",result=\"ok\"} 1\n"));
	assert_null(strstr(text, "pid=\"102\""));
	assert_non_null(strstr(text, "memmon_processes_folded 1\n"));
	assert_non_null(strstr(text, "memmon_cpu_events_produced_total{recording=\"r1\","
			       "cpu=\"1\"} 10\n"));
	assert_non_null(strstr(text, "memmon_fault_latency_seconds_bucket{pid=\"100\","
			       "comm=\"a\\\"q\",le=\"1.024e-06\"} 10\n"));
	assert_non_null(strstr(text, "memmon_fault_latency_seconds_count{pid=\"100\","
			       "comm=\"a\\\"q\"} 30\n"));
	assert_non_null(strstr(text, "memmon_sessions 1\n"));
	if (promtool(text, out, sizeof(out)))
		fail_msg("promtool check metrics:\n%s\n--- text:\n%s", out, text);
	free(text);

	/* nothing running: still valid text */
	text = serve_metrics_text(NULL, 0, 10, 0, 0);
	assert_non_null(text);
	if (promtool(text, out, sizeof(out)))
		fail_msg("promtool check metrics (empty):\n%s", out);
	free(text);
}

/*
 * serve_run_tool() against stand-ins for memmon: a shell script as the
 * server's "exe" (argv[1] is the script's first argument).
 */
static struct serve tool_sv(const char *script, char *path, size_t size)
{
	struct serve sv = { .cfg = { .tool_out_max = 1 << 20, .tool_cpu_s = 1 } };
	FILE *f;

	snprintf(path, size, "/tmp/memmon-test-tool-%d.sh", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", script);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0700), 0);
	snprintf(sv.cfg.exe, sizeof(sv.cfg.exe), "%s", path);
	return sv;
}

static void test_run_tool_limits(void **state)
{
	char path[128], *out = NULL, *args[] = { "x", NULL };
	char file[128];
	struct stat st;
	struct serve sv;
	size_t len = 0;

	(void)state;
	/* Within the limits: the output, whole, and the exit status. */
	sv = tool_sv("echo \"$1\"; exit 3", path, sizeof(path));
	assert_int_equal(serve_run_tool(&sv, args, &out, &len), 3);
	assert_int_equal(len, 2);
	assert_memory_equal(out, "x\n", 2);
	free(out);

	/* stdout past the cap: killed, -EFBIG, never more than cap + 1 kept. */
	sv = tool_sv("exec cat /dev/zero", path, sizeof(path));
	assert_int_equal(serve_run_tool(&sv, args, &out, &len), -EFBIG);
	assert_int_equal(len, (1 << 20) + 1);
	free(out);

	/* CPU past the limit: SIGXCPU. */
	sv = tool_sv("while :; do :; done", path, sizeof(path));
	assert_int_equal(serve_run_tool(&sv, args, &out, &len), 128 + SIGXCPU);
	free(out);

	/* A file past the cap (timeline -o): SIGXFSZ, the file cut at it. */
	snprintf(file, sizeof(file), "/tmp/memmon-test-tool-%d.out", (int)getpid());
	args[0] = file;
	sv = tool_sv("exec head -c 2000000 /dev/zero > \"$1\"", path, sizeof(path));
	assert_int_equal(serve_run_tool(&sv, args, &out, &len), 128 + SIGXFSZ);
	free(out);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 1 << 20);
	unlink(file);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_start_requests),
		cmocka_unit_test(test_start_argv),
		cmocka_unit_test(test_base_url),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_run_tool_limits),
	};

	return cmocka_run_group_tests_name("cli_serve", tests, NULL, NULL);
}
