// SPDX-License-Identifier: GPL-2.0
/*
 * The examples of libmemmon(3) compile, link and (the trace-file one) run:
 * they are cut out of the roff (.EX/.EE), unescaped, and built with the
 * library sources. Also: every public header compiles alone, as C and as
 * C++ (a header that needs another one first fails here).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <memmon/trace.h>

#ifndef REPO_ROOT
#define REPO_ROOT "."
#endif

static char dir[64];

static const char *cc(void)
{
	const char *c = getenv("CC");

	return c && *c ? c : "cc";
}

/* roff to C: \e -> \, \- -> -, \& -> "", \(aq -> ', \(dq -> " */
static void unroff(const char *in, FILE *out)
{
	while (*in) {
		if (in[0] == '\\' && in[1] == 'e') {
			fputc('\\', out);
			in += 2;
		} else if (in[0] == '\\' && in[1] == '-') {
			fputc('-', out);
			in += 2;
		} else if (in[0] == '\\' && in[1] == '&') {
			in += 2;
		} else if (!strncmp(in, "\\(aq", 4)) {
			fputc('\'', out);
			in += 4;
		} else if (!strncmp(in, "\\(dq", 4)) {
			fputc('"', out);
			in += 4;
		} else {
			fputc(*in++, out);
		}
	}
}

/* Write example n (0-based) to path; false if there is no such example. */
static bool extract(int n, const char *path)
{
	FILE *man = fopen(REPO_ROOT "/docs/man/libmemmon.3", "r");
	FILE *out = NULL;
	char line[1024];
	int idx = -1;
	bool in = false, found = false;

	assert_non_null(man);
	while (fgets(line, sizeof(line), man)) {
		if (!strncmp(line, ".EX", 3)) {
			in = ++idx == n;
			if (in) {
				out = fopen(path, "w");
				assert_non_null(out);
				found = true;
			}
			continue;
		}
		if (!strncmp(line, ".EE", 3)) {
			in = false;
			continue;
		}
		if (in)
			unroff(line, out);
	}
	fclose(man);
	if (out)
		fclose(out);
	return found;
}

static int build(const char *src, const char *bin)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "cd %s && %s -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror "
		 "-I uapi -I libmemmon/include -I libmemmon -o %s %s "
		 "libmemmon/session.c libmemmon/ring.c libmemmon/merge.c "
		 "libmemmon/decode.c libmemmon/paths.c libmemmon/json.c "
		 "libmemmon/trace_read.c libmemmon/trace_write.c libmemmon/trace_crc.c "
		 "-ljansson -lzstd -lisal -lz", REPO_ROOT, cc(), bin, src);
	return system(cmd);
}

static void test_examples_build(void **state)
{
	char src[128], bin[128];
	int n;

	(void)state;
	for (n = 0; ; n++) {
		snprintf(src, sizeof(src), "%s/ex%d.c", dir, n);
		snprintf(bin, sizeof(bin), "%s/ex%d", dir, n);
		if (!extract(n, src))
			break;
		if (build(src, bin))
			fail_msg("example %d of libmemmon(3) does not build", n);
	}
	/* the page has its two examples */
	assert_int_equal(n, 2);
}

/* The trace-file example, run on a file with 3 faults and 1 mmap. */
static void test_example_runs(void **state)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 1);
	struct memmon_trace_writer *w;
	char path[128], cmd[512], out[256] = "";
	__u8 buf[4 * 128];
	size_t len = 0;
	FILE *p;
	int i;

	(void)state;
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	w = memmon_trace_writer__open(path, &o);
	assert_non_null(w);
	for (i = 0; i < 4; i++) {
		struct memmon_rec_header *h = (void *)(buf + len);
		size_t sz = i ? sizeof(struct memmon_rec_fault) :
				sizeof(struct memmon_rec_syscall);

		memset(h, 0, sz);
		h->size = (__u32)sz;
		h->type = i ? MEMMON_REC_FAULT : MEMMON_REC_SYSCALL;
		h->time_ns = (__u64)i;
		len += sz;
	}
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, buf, len), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
	snprintf(cmd, sizeof(cmd), "%s/ex1 %s", dir, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, sizeof(out), p));
	assert_int_equal(pclose(p), 0);
	assert_string_equal(out, "3 faults\n");
}

static void test_headers_alone(void **state)
{
	static const char *const hdrs[] = {
		"memmon/memmon.h", "memmon/decode.h", "memmon/trace.h",
		"linux/memmon.h",
	};
	const char *cxx = getenv("CXX");
	char cmd[1024];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(hdrs) / sizeof(hdrs[0]); i++) {
		snprintf(cmd, sizeof(cmd),
			 "cd %s && echo '#include <%s>' | %s -x c -std=c99 -Wall "
			 "-Wextra -Werror -I uapi -I libmemmon/include "
			 "-fsyntax-only -", REPO_ROOT, hdrs[i], cc());
		if (system(cmd))
			fail_msg("%s does not compile alone as C", hdrs[i]);
		snprintf(cmd, sizeof(cmd),
			 "cd %s && echo '#include <%s>' | %s -x c++ -std=c++11 "
			 "-Wall -Wextra -Werror -I uapi -I libmemmon/include "
			 "-fsyntax-only -", REPO_ROOT, hdrs[i],
			 cxx && *cxx ? cxx : "c++");
		if (system(cmd))
			fail_msg("%s does not compile alone as C++", hdrs[i]);
	}
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/memmon-man-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_build),
		cmocka_unit_test(test_example_runs),
		cmocka_unit_test(test_headers_alone),
	};

	return cmocka_run_group_tests_name("lib_man", tests, setup, teardown);
}
