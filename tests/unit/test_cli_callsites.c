// SPDX-License-Identifier: GPL-2.0
/*
 * Call sites through the commands: a trace file written here from this
 * process's own layout (EXEC + AUXV, libc's file mappings, anonymous
 * mmaps whose stacks return into site_a() and site_b()) is read by
 * memmon script (text and JSON stacks, --no-symbols) and memmon report
 * (leaks grouped by call site, exact bytes; --call-site=full), and with
 * a recorded build-id that differs, shows mismatches instead of names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gnu/libc-version.h>
#include <cmocka.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "builtin.h"
#include "symbolize.h"
#include "test_cli_run.h"

#define TGID	777
#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })

__attribute__((noinline)) static uintptr_t get_ra(void)
{
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);

	__asm__ volatile("" ::: "memory");
	return ra;
}

__attribute__((noinline)) uintptr_t site_a(void)
{
	uintptr_t ra = get_ra();

	__asm__ volatile("" ::: "memory");
	return ra;
}

__attribute__((noinline)) uintptr_t site_b(void)
{
	uintptr_t ra = get_ra();

	__asm__ volatile("" ::: "memory");
	return ra;
}

static char buf[1 << 20];
static size_t len;
static __u64 now = 1000000;
static char exe[PATH_MAX], dir[] = "/tmp/memmon-callsites-XXXXXX";
static char tr_ok[128], tr_bad[128];
static struct run res;

static void *put(__u16 type, size_t size)
{
	struct memmon_rec_header *h = (void *)(buf + len);

	size = (size + 7) & ~7UL;
	assert_true(len + size <= sizeof(buf));
	memset(h, 0, size);
	h->size = size;
	h->type = type;
	h->time_ns = now += 1000;
	h->tgid = h->tid = TGID;
	len += size;
	return h;
}

static void put_path(__u16 type, const char *path, __u64 dev, __u64 ino)
{
	size_t n = strlen(path);

	if (type == MEMMON_REC_EXEC) {
		struct memmon_rec_exec *e = put(type, sizeof(*e) + n + 1);

		e->path_len = n;
		memcpy(e->path, path, n);
	} else {
		struct memmon_rec_path *p = put(type, sizeof(*p) + n + 1);

		p->dev = dev;
		p->ino = ino;
		p->path_len = n;
		memcpy(p->path, path, n);
	}
}

static void put_mmap(__u64 addr, __u64 size, bool file, __u64 dev, __u64 ino,
		     __u64 off, __u32 prot, const __u64 *ip, size_t n, __u16 sflags)
{
	struct memmon_rec_syscall *sc = put(MEMMON_REC_SYSCALL, sizeof(*sc) +
					    sizeof(struct memmon_user_stack) + 8 * n);
	struct memmon_user_stack *st = (void *)(sc + 1);

	sc->sys = MEMMON_SYS_MMAP;
	sc->flags = MEMMON_SYSF_USTACK | (file ? MEMMON_SYSF_FILE : 0);
	sc->args[1] = size;
	sc->args[2] = prot;
	sc->args[3] = file ? MAP_PRIVATE : MAP_PRIVATE | MAP_ANONYMOUS;
	sc->args[4] = file ? 3 : (__u64)-1;
	sc->args[5] = off;
	sc->ret = (__s64)addr;
	sc->aux[0] = dev;
	sc->aux[1] = ino;
	st->nr = n;
	st->flags = sflags;
	memcpy(st->ip, ip, 8 * n);
}

static void write_trace(const char *path, const char *meta)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 1);
	struct memmon_trace_writer *w = memmon_trace_writer__open(path, &o);

	assert_non_null(w);
	assert_true(memmon_trace_writer__add_meta(w, meta) >= 0);
	assert_true(memmon_trace_writer__add_chunk(w, 0, buf, len) >= 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
}

/* The records: this process's libc mappings, its image, 4 leaks. */
static void build(void)
{
	char line[PATH_MAX + 128], path[PATH_MAX];
	uintptr_t libc_ip = (uintptr_t)&gnu_get_libc_version + 4;
	__u64 ip[2], ra_a = site_a(), ra_b = site_b();
	struct memmon_rec_auxv *a;
	FILE *m = fopen("/proc/self/maps", "re");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int i;

	assert_true(n > 0);
	exe[n] = '\0';
	put_path(MEMMON_REC_EXEC, exe, 0, 0);
	a = put(MEMMON_REC_AUXV, sizeof(*a));
	a->phdr = getauxval(AT_PHDR);
	a->base = getauxval(AT_BASE);
	assert_non_null(m);
	while (fgets(line, sizeof(line), m)) {
		unsigned long long start, end, off;
		char perms[8];
		struct stat st;
		int k = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %n", &start, &end, perms,
			   &off, &k) < 4 || sscanf(line + k, "%4095s", path) != 1 ||
		    !strstr(path, "/libc.so") || stat(path, &st))
			continue;
		put_path(MEMMON_REC_PATH, path, st.st_dev, st.st_ino);
		put_mmap(start, end - start, true, st.st_dev, st.st_ino, off,
			 (perms[0] == 'r' ? PROT_READ : 0) | (perms[2] == 'x' ? PROT_EXEC : 0),
			 (__u64[]){ libc_ip }, 1, 0);
	}
	fclose(m);
	/* the loader is done (report_leaks.h): a file mapping dropped */
	put_path(MEMMON_REC_PATH, exe, 1, 2);
	put_mmap(0x30000000, 4096, true, 1, 2, 0, PROT_READ, (__u64[]){ libc_ip }, 1, 0);
	{
		struct memmon_rec_syscall *sc = put(MEMMON_REC_SYSCALL, sizeof(*sc));

		sc->sys = MEMMON_SYS_MUNMAP;
		sc->args[0] = 0x30000000;
		sc->args[1] = 4096;
	}
	/* the libc wrapper's return address, then the word at sp: the site */
	ip[0] = libc_ip;
	ip[1] = ra_a;
	for (i = 0; i < 3; i++)
		put_mmap(0x10000000 + i * 0x100000ULL, 65536, false, 0, 0, 0,
			 PROT_READ | PROT_WRITE, ip, 2, MEMMON_USTACK_SP);
	ip[1] = ra_b;
	put_mmap(0x20000000, 1 << 20, false, 0, 0, 0, PROT_READ | PROT_WRITE, ip, 2,
		 MEMMON_USTACK_SP);
}

static int setup(void **state)
{
	__u8 id[SYM_BUILD_ID_MAX];
	char meta[PATH_MAX + 256];
	int n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(tr_ok, sizeof(tr_ok), "%s/ok.trace", dir);
	snprintf(tr_bad, sizeof(tr_bad), "%s/bad.trace", dir);
	build();
	write_trace(tr_ok, "{\"nr_cpus\":1}");
	n = sym_read_build_id(exe, id);
	assert_true(n > 0);
	/* a build-id one bit off: the file changed since the recording */
	snprintf(meta, sizeof(meta), "{\"build_ids\":{\"%s\":\"%02x%s\"}}", exe,
		 id[0] ^ 1, "00112233445566778899aabbccddeeff0011");
	write_trace(tr_bad, meta);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(tr_ok);
	unlink(tr_bad);
	rmdir(dir);
	return 0;
}

static void test_script_text(void **state)
{
	(void)state;
	run_memmon(&res, NULL, NULL, A("script", tr_ok));
	assert_int_equal(res.code, 0);
	/* under the mmap record: the libc frame, then the caller */
	assert_non_null(strstr(res.out, " gnu_get_libc_version+0x4 ("));
	assert_non_null(strstr(res.out, " site_a+0x"));
	assert_non_null(strstr(res.out, " site_b+0x"));
	run_memmon(&res, NULL, NULL, A("script", "--no-symbols", tr_ok));
	assert_int_equal(res.code, 0);
	assert_null(strstr(res.out, "site_a"));
}

static void test_script_json(void **state)
{
	json_t *j, *st;
	char *line, *save = NULL;
	int stacks = 0;

	(void)state;
	run_memmon(&res, NULL, NULL, A("script", "--json", tr_ok));
	assert_int_equal(res.code, 0);
	for (line = strtok_r(res.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		j = json_loads(line, 0, NULL);
		assert_non_null(j);	/* every line stays one JSON object */
		st = json_object_get(j, "stack");
		if (st && json_array_size(st) == 2 &&
		    !strcmp(json_string_value(json_object_get(json_array_get(st, 0), "sym")) ?: "",
			    "gnu_get_libc_version"))
			stacks++;
		json_decref(j);
	}
	assert_int_equal(stacks, 4);
}

static json_t *leaks_of(const char *out)
{
	json_t *d = json_loads(out, 0, NULL), *p;

	assert_non_null(d);
	p = json_array_get(json_object_get(d, "processes"), 0);
	assert_non_null(p);
	json_incref(json_object_get(p, "leaks"));
	p = json_object_get(p, "leaks");
	json_decref(d);
	return p;
}

static void test_report_sites(void **state)
{
	json_t *l, *g;
	size_t i;
	int seen = 0;

	(void)state;
	run_memmon(&res, NULL, NULL, A("report", "--json", tr_ok));
	assert_int_equal(res.code, 0);
	l = leaks_of(res.out);
	assert_string_equal(json_string_value(json_object_get(l, "grouped_by")), "kind,call_site");
	g = json_object_get(l, "groups");
	assert_int_equal(json_array_size(g), 2);
	for (i = 0; i < 2; i++) {
		json_t *x = json_array_get(g, i);
		json_t *st = json_object_get(x, "stack");
		int at = (int)json_integer_value(json_object_get(x, "call_site"));
		const char *sym = json_string_value(json_object_get(json_array_get(st, at), "sym"));
		json_int_t count = json_integer_value(json_object_get(x, "count"));
		json_int_t bytes = json_integer_value(json_object_get(x, "bytes"));

		assert_non_null(sym);
		/* the first frame outside libc: the function that called mmap */
		if (!strcmp(sym, "site_a")) {
			assert_int_equal(count, 3);
			assert_int_equal(bytes, 3 * 65536);
			seen |= 1;
		} else {
			assert_string_equal(sym, "site_b");
			assert_int_equal(count, 1);
			assert_int_equal(bytes, 1 << 20);
			seen |= 2;
		}
	}
	assert_int_equal(seen, 3);
	assert_int_equal(json_integer_value(json_object_get(l, "bytes")), 3 * 65536 + (1 << 20));
	/* libc: a file mapping, not a leak */
	assert_true(json_array_size(json_object_get(l, "file_mappings")) > 0);
	json_decref(l);

	run_memmon(&res, NULL, NULL, A("report", tr_ok));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.out, "site_b+0x"));
	assert_non_null(strstr(res.out, "1 x 1.0 MiB = 1048576 bytes"));
	assert_non_null(strstr(res.out, "3 x 64.0 KiB = 196608 bytes"));
	assert_null(strstr(res.out, "no call sites"));

	run_memmon(&res, NULL, NULL, A("report", "--json", "--call-site=full", tr_ok));
	assert_int_equal(res.code, 0);
	l = leaks_of(res.out);
	assert_string_equal(json_string_value(json_object_get(l, "grouped_by")), "kind,stack");
	assert_int_equal(json_array_size(json_object_get(l, "groups")), 2);
	json_decref(l);

	run_memmon(&res, NULL, NULL, A("report", "--call-site=some", tr_ok));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "--call-site"));
}

static void test_build_id_mismatch(void **state)
{
	char want[PATH_MAX + 64];

	(void)state;
	run_memmon(&res, NULL, NULL, A("script", tr_bad));
	assert_int_equal(res.code, 0);
	snprintf(want, sizeof(want), "[build-id mismatch: %s]", exe);
	assert_non_null(strstr(res.out, want));
	/* never a wrong name from the changed file */
	assert_null(strstr(res.out, "site_a"));
	assert_null(strstr(res.out, "site_b"));
	/* libc's frames are still named */
	assert_non_null(strstr(res.out, "gnu_get_libc_version+0x4"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script_text),
		cmocka_unit_test(test_script_json),
		cmocka_unit_test(test_report_sites),
		cmocka_unit_test(test_build_id_mismatch),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
