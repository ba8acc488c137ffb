// SPDX-License-Identifier: GPL-2.0
/*
 * tools/symbolize.c on records built from this process itself: its EXEC
 * and AUXV (getauxval()), mmap records for the libraries /proc/self/maps
 * shows, stacks made of real return addresses and junk; then a changed
 * build-id, a file that is not ELF, and a hostile record stream.
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
#include <sys/sysmacros.h>
#include <unistd.h>
#include <gnu/libc-version.h>
#include <cmocka.h>
#include "symbolize.h"

#define TGID	4242

/* A function whose address the tests resolve; noinline keeps it whole. */
__attribute__((noinline)) int sym_test_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* The return address into its caller: a real one, just after a call. */
__attribute__((noinline)) static uintptr_t sym_test_callee(void)
{
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);

	__asm__ volatile("" ::: "memory");
	return ra;
}

__attribute__((noinline)) uintptr_t sym_test_caller(void)
{
	uintptr_t ra = sym_test_callee();

	__asm__ volatile("" ::: "memory");
	return ra;
}

static union {
	__u64 align;
	char b[8192];
} recbuf;

static const struct memmon_rec_header *mk_exec(const char *path)
{
	struct memmon_rec_exec *e = (void *)recbuf.b;
	size_t len = strlen(path);

	memset(recbuf.b, 0, sizeof(recbuf.b));
	e->hdr.type = MEMMON_REC_EXEC;
	e->hdr.size = (sizeof(*e) + len + 1 + 7) & ~7U;
	e->hdr.tgid = e->hdr.tid = TGID;
	e->path_len = len;
	memcpy(e->path, path, len);
	return &e->hdr;
}

static const struct memmon_rec_header *mk_auxv(void)
{
	struct memmon_rec_auxv *a = (void *)recbuf.b;

	memset(recbuf.b, 0, sizeof(recbuf.b));
	a->hdr.type = MEMMON_REC_AUXV;
	a->hdr.size = sizeof(*a);
	a->hdr.tgid = a->hdr.tid = TGID;
	a->phdr = getauxval(AT_PHDR);
	a->phent = getauxval(AT_PHENT);
	a->phnum = getauxval(AT_PHNUM);
	a->entry = getauxval(AT_ENTRY);
	a->base = getauxval(AT_BASE);
	a->vdso = getauxval(AT_SYSINFO_EHDR);
	return &a->hdr;
}

/* A syscall record with a user stack of n entries. */
static struct memmon_rec_syscall *mk_sys(__u32 sys, const __u64 *ip, size_t n,
					 __u16 sflags)
{
	struct memmon_rec_syscall *sc = (void *)recbuf.b;
	struct memmon_user_stack *st = (void *)(sc + 1);

	memset(recbuf.b, 0, sizeof(recbuf.b));
	sc->hdr.type = MEMMON_REC_SYSCALL;
	sc->hdr.size = sizeof(*sc) + sizeof(*st) + n * 8;
	sc->hdr.tgid = sc->hdr.tid = TGID;
	sc->sys = sys;
	sc->flags = MEMMON_SYSF_USTACK;
	st->nr = n;
	st->flags = sflags;
	if (n)
		memcpy(st->ip, ip, n * 8);
	return sc;
}

static char exe[PATH_MAX];

static struct symbolizer *self_sym(void)
{
	struct symbolizer *s = sym_new();
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_non_null(s);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(sym_feed(s, mk_exec(exe), NULL), 0);
	assert_int_equal(sym_feed(s, mk_auxv(), NULL), 0);
	return s;
}

/* The program placed by AT_PHDR: its own functions resolve (PIE bias). */
static void test_exec_auxv_bias(void **state)
{
	struct symbolizer *s = self_sym();
	uintptr_t a = (uintptr_t)&sym_test_target;
	struct sym_frame f;

	(void)state;
	sym_resolve(s, TGID, a + 2, false, &f);
	assert_int_equal(f.status, SYM_OK);
	assert_string_equal(f.sym, "sym_test_target");
	assert_int_equal(f.off, 2);
	assert_string_equal(f.file, exe);
	/* a return address is looked up one byte back: still inside */
	sym_resolve(s, TGID, a + 1, true, &f);
	assert_string_equal(f.sym, "sym_test_target");
	assert_int_equal(f.off, 1);
	/* another process has no space: unknown */
	sym_resolve(s, TGID + 1, a, false, &f);
	assert_int_equal(f.status, SYM_UNKNOWN);
	sym_free(s);
}

/* The interpreter at AT_BASE: an address in it names ld.so. */
static void test_interp(void **state)
{
	struct symbolizer *s = self_sym();
	struct sym_frame f;

	(void)state;
	if (!getauxval(AT_BASE))
		skip();
	sym_resolve(s, TGID, getauxval(AT_BASE) + 0x100, false, &f);
	assert_non_null(f.file);
	assert_true(sym_frame_is_libc(&f));
	sym_free(s);
}

/* Feeds PATH + mmap records for every file mapping of /proc/self/maps. */
static void feed_self_maps(struct symbolizer *s, struct memmon_paths *paths)
{
	char line[PATH_MAX + 128], path[PATH_MAX];
	FILE *m = fopen("/proc/self/maps", "re");

	assert_non_null(m);
	while (fgets(line, sizeof(line), m)) {
		unsigned long long start, end, off;
		char perms[8];
		struct memmon_rec_syscall *sc;
		struct stat st;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %n", &start, &end, perms,
			   &off, &n) < 4 || sscanf(line + n, "%4095s", path) != 1 ||
		    path[0] != '/' || stat(path, &st))
			continue;
		assert_int_equal(memmon_paths__add(paths, st.st_dev, st.st_ino, path), 0);
		sc = mk_sys(MEMMON_SYS_MMAP, NULL, 0, 0);
		sc->flags = MEMMON_SYSF_FILE;
		sc->hdr.size = sizeof(*sc);
		sc->args[1] = end - start;
		sc->args[2] = (perms[0] == 'r' ? PROT_READ : 0) |
			      (perms[2] == 'x' ? PROT_EXEC : 0);
		sc->args[5] = off;
		sc->ret = (__s64)start;
		sc->aux[0] = st.st_dev;
		sc->aux[1] = st.st_ino;
		assert_int_equal(sym_feed(s, &sc->hdr, paths), 0);
	}
	fclose(m);
}

/* Libraries mapped by mmap records: libc's own function resolves. */
static void test_mmap_library(void **state)
{
	struct memmon_paths *paths = memmon_paths__new();
	struct symbolizer *s = sym_new();
	uintptr_t a = (uintptr_t)&gnu_get_libc_version;
	struct sym_frame f;

	(void)state;
	feed_self_maps(s, paths);
	sym_resolve(s, TGID, a, false, &f);
	assert_int_equal(f.status, SYM_OK);
	assert_string_equal(f.sym, "gnu_get_libc_version");
	assert_int_equal(f.off, 0);
	assert_true(sym_frame_is_libc(&f));
	/* the test's own code through its file mappings too */
	sym_resolve(s, TGID, (uintptr_t)&sym_test_target, false, &f);
	assert_string_equal(f.sym, "sym_test_target");
	assert_false(sym_frame_is_libc(&f));
	/* munmap of libc's text: unknown afterwards */
	{
		struct sym_frame g;
		struct memmon_rec_syscall *sc = mk_sys(MEMMON_SYS_MUNMAP, NULL, 0, 0);

		sc->hdr.size = sizeof(*sc);
		sc->flags = 0;
		sc->args[0] = a & ~4095ULL;
		sc->args[1] = 4096;
		assert_int_equal(sym_feed(s, &sc->hdr, paths), 0);
		sym_resolve(s, TGID, a, false, &g);
		assert_int_equal(g.status, SYM_UNKNOWN);
		/* the page after it is still libc */
		sym_resolve(s, TGID, (a & ~4095ULL) + 4096, false, &g);
		assert_non_null(g.file);
	}
	sym_free(s);
	memmon_paths__free(paths);
}

/* The /proc/PID/maps snapshot gives the same answers. */
static void test_load_maps(void **state)
{
	struct symbolizer *s = sym_new();
	struct sym_frame f;

	(void)state;
	assert_int_equal(sym_load_maps(s, TGID, "/proc/self/maps"), 0);
	sym_resolve(s, TGID, (uintptr_t)&gnu_get_libc_version + 1, false, &f);
	assert_int_equal(f.status, SYM_OK);
	assert_string_equal(f.sym, "gnu_get_libc_version");
	assert_int_equal(f.off, 1);
	assert_int_equal(sym_load_maps(s, TGID, "/nonexistent/maps"), -ENOENT);
	sym_free(s);
}

/* ip[1] at sp: a real return address stays, junk goes. */
static void test_sp_candidate(void **state)
{
	struct symbolizer *s = self_sym();
	uintptr_t ra = sym_test_caller();
	int on_stack = 0;
	struct sym_frame f[8];
	__u64 ip[3];
	size_t n;

	(void)state;
	assert_true(sym_after_call(s, TGID, ra));
	/* a function's first byte follows padding or a ret, not a call */
	assert_false(sym_after_call(s, TGID, (uintptr_t)&sym_test_target));
	assert_false(sym_after_call(s, TGID, (uintptr_t)&on_stack));
	assert_false(sym_after_call(s, TGID, 0));

	ip[0] = (uintptr_t)&sym_test_target + 1;
	ip[1] = ra;
	ip[2] = ra;
	n = sym_stack(s, &mk_sys(MEMMON_SYS_MMAP, ip, 3, MEMMON_USTACK_SP)->hdr, f, 8);
	assert_int_equal(n, 3);
	assert_string_equal(f[1].sym, "sym_test_caller");

	ip[1] = (uintptr_t)&on_stack;	/* data at sp */
	n = sym_stack(s, &mk_sys(MEMMON_SYS_MMAP, ip, 3, MEMMON_USTACK_SP)->hdr, f, 8);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].sym, "sym_test_target");
	assert_string_equal(f[1].sym, "sym_test_caller");

	/* without the SP flag ip[1] is a frame-pointer entry: kept */
	n = sym_stack(s, &mk_sys(MEMMON_SYS_MMAP, ip, 3, 0)->hdr, f, 8);
	assert_int_equal(n, 3);
	assert_int_equal(f[1].status, SYM_UNKNOWN);
	/* max bounds the output */
	n = sym_stack(s, &mk_sys(MEMMON_SYS_MMAP, ip, 3, 0)->hdr, f, 1);
	assert_int_equal(n, 1);
	sym_free(s);
}

/* A stack that claims more entries than the record holds is ignored. */
static void test_ustack_bounds(void **state)
{
	struct memmon_rec_syscall *sc;
	__u64 ip[2] = { 1, 2 };

	(void)state;
	sc = mk_sys(MEMMON_SYS_MMAP, ip, 2, 0);
	assert_non_null(sym_rec_ustack(&sc->hdr));
	((struct memmon_user_stack *)(sc + 1))->nr = 3;
	assert_null(sym_rec_ustack(&sc->hdr));
	sc->flags = 0;
	assert_null(sym_rec_ustack(&sc->hdr));
	sc->flags = MEMMON_SYSF_USTACK;
	sc->hdr.size = sizeof(*sc) + 4;
	assert_null(sym_rec_ustack(&sc->hdr));
}

/* A build-id other than the recorded one: a mismatch, never a name. */
static void test_build_id_mismatch(void **state)
{
	struct symbolizer *s = sym_new();
	__u8 id[SYM_BUILD_ID_MAX];
	char *buf = NULL;
	size_t len = 0;
	struct sym_frame f;
	FILE *m;
	int n;

	(void)state;
	n = sym_read_build_id("/proc/self/exe", id);
	if (n < 0)
		skip();	/* built without --build-id */
	id[0] ^= 0xff;
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(l > 0);
	exe[l] = '\0';
	assert_int_equal(sym_expect_build_id(s, exe, id, n), 0);
	assert_int_equal(sym_feed(s, mk_exec(exe), NULL), 0);
	assert_int_equal(sym_feed(s, mk_auxv(), NULL), 0);
	sym_resolve(s, TGID, (uintptr_t)&sym_test_target, false, &f);
	assert_int_equal(f.status, SYM_MISMATCH);
	assert_null(f.sym);
	m = open_memstream(&buf, &len);
	assert_int_equal(sym_fprint_stack(m, &f, 1, false), 0);
	fclose(m);
	assert_non_null(strstr(buf, "[build-id mismatch: "));
	assert_non_null(strstr(buf, exe));
	free(buf);
	/* the right one resolves */
	id[0] ^= 0xff;
	sym_free(s);
	s = sym_new();
	assert_int_equal(sym_expect_build_id(s, exe, id, n), 0);
	assert_int_equal(sym_feed(s, mk_exec(exe), NULL), 0);
	assert_int_equal(sym_feed(s, mk_auxv(), NULL), 0);
	sym_resolve(s, TGID, (uintptr_t)&sym_test_target, false, &f);
	assert_int_equal(f.status, SYM_OK);
	sym_free(s);
}

/* A file that is not ELF, and one that is gone: said so, no crash. */
static void test_not_elf(void **state)
{
	char tmpl[] = "/tmp/memmon-sym-XXXXXX";
	struct memmon_paths *paths = memmon_paths__new();
	struct symbolizer *s = sym_new();
	struct memmon_rec_syscall *sc;
	struct sym_frame f;
	int fd = mkstemp(tmpl);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	assert_int_equal(sym_read_build_id(tmpl, (__u8[SYM_BUILD_ID_MAX]){ 0 }), -ENOEXEC);
	assert_int_equal(sym_feed(s, mk_exec(tmpl), NULL), 0);
	assert_int_equal(sym_feed(s, mk_auxv(), NULL), 0);
	assert_int_equal(memmon_paths__add(paths, 1, 2, tmpl), 0);
	sc = mk_sys(MEMMON_SYS_MMAP, NULL, 0, 0);
	sc->hdr.size = sizeof(*sc);
	sc->flags = MEMMON_SYSF_FILE;
	sc->args[1] = 8192;
	sc->args[2] = PROT_READ | PROT_EXEC;
	sc->ret = 0x10000000;
	sc->aux[0] = 1;
	sc->aux[1] = 2;
	assert_int_equal(sym_feed(s, &sc->hdr, paths), 0);
	sym_resolve(s, TGID, 0x10000010, true, &f);
	assert_int_equal(f.status, SYM_NOT_FOUND);
	assert_false(sym_after_call(s, TGID, 0x10000010));
	unlink(tmpl);
	/* now gone */
	sc->ret = 0x20000000;
	assert_int_equal(memmon_paths__add(paths, 1, 3, "/nonexistent/lib.so"), 0);
	sc->aux[1] = 3;
	assert_int_equal(sym_feed(s, &sc->hdr, paths), 0);
	sym_resolve(s, TGID, 0x20000010, true, &f);
	assert_int_equal(f.status, SYM_NOT_FOUND);
	assert_string_equal(f.file, "/nonexistent/lib.so");
	sym_free(s);
	memmon_paths__free(paths);
}

/* Random records, then caps: no crash, bounded tables. */
static void test_hostile(void **state)
{
	struct memmon_paths *paths = memmon_paths__new();
	struct symbolizer *s = sym_new();
	struct sym_frame f[SYM_MAX_FRAMES];
	unsigned int seed = 29, i, enospc = 0;
	int ret;

	(void)state;
	assert_int_equal(memmon_paths__add(paths, 1, 1, "/proc/self/exe"), 0);
	for (i = 0; i < 20000; i++) {
		struct memmon_rec_header *h = (void *)recbuf.b;
		size_t j, size = 8 * (rand_r(&seed) % 64);

		for (j = 0; j < 64 * 8; j++)
			recbuf.b[j] = rand_r(&seed);
		if (size < sizeof(*h))
			size = sizeof(*h);
		h->size = size;
		h->type = rand_r(&seed) % (MEMMON_REC__COUNT + 1);
		h->tgid = rand_r(&seed) % 8;
		if (h->type == MEMMON_REC_SYSCALL && size >= sizeof(struct memmon_rec_syscall)) {
			struct memmon_rec_syscall *sc = (void *)h;

			sc->sys = rand_r(&seed) % 2;
			sc->aux[0] = sc->aux[1] = 1;
		}
		sym_feed(s, h, paths);
		sym_stack(s, h, f, SYM_MAX_FRAMES);
	}
	/* mappings past the cap: -ENOSPC, no more growth */
	for (i = 0; i < SYM_MAX_MAPS + 16; i++) {
		struct memmon_rec_syscall *sc = mk_sys(MEMMON_SYS_MMAP, NULL, 0, 0);

		sc->hdr.size = sizeof(*sc);
		sc->flags = MEMMON_SYSF_FILE;
		sc->args[1] = 4096;
		sc->ret = 0x100000000ULL + 8192ULL * i;
		sc->aux[0] = sc->aux[1] = 1;
		ret = sym_feed(s, &sc->hdr, paths);
		assert_true(ret == 0 || ret == -ENOSPC);
		enospc += ret == -ENOSPC;
	}
	assert_int_equal(enospc, 16);
	/* processes past the cap */
	for (i = 0, enospc = 0; i < SYM_MAX_PROCS + 16; i++) {
		struct memmon_rec_header *h = (void *)mk_exec("/nonexistent");

		h->tgid = 100 + i;
		enospc += sym_feed(s, h, paths) == -ENOSPC;
	}
	assert_true(enospc >= 16);
	sym_free(s);
	memmon_paths__free(paths);
}

/* The printed forms. */
static void test_format(void **state)
{
	const struct sym_frame f[] = {
		{ .ip = 0x401136, .status = SYM_OK, .sym = "leak_a", .off = 0x1a,
		  .file = "/usr/bin/w", .src = "w.c", .line = 12 },
		{ .ip = 0x7f0000001000, .status = SYM_NO_SYMBOL, .off = 0x1000,
		  .file = "/lib/x.so" },
		{ .ip = 0x10, .status = SYM_UNKNOWN },
		{ .ip = 0x20, .status = SYM_NOT_FOUND, .file = "/gone" },
		{ .ip = 0x30, .status = SYM_MISMATCH, .file = "/changed" },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(sym_fprint_stack(m, f, 5, false), 0);
	fflush(m);
	assert_string_equal(buf,
		"\t          401136 leak_a+0x1a (/usr/bin/w) w.c:12\n"
		"\t    7f0000001000 [/lib/x.so+0x1000]\n"
		"\t              10 [unknown]\n"
		"\t              20 [not found: /gone]\n"
		"\t              30 [build-id mismatch: /changed]\n");
	rewind(m);
	assert_int_equal(sym_fprint_stack(m, f, 2, true), 0);
	fputc('\0', m);
	fflush(m);
	assert_string_equal(buf, "\t          401136\n\t    7f0000001000\n");
	rewind(m);
	assert_int_equal(sym_fprint_stack_json(m, f, 5, false), 0);
	fputc('\0', m);
	fflush(m);
	assert_string_equal(buf,
		"[{\"ip\":4198710,\"sym\":\"leak_a\",\"off\":26,\"file\":\"/usr/bin/w\","
		"\"src\":\"w.c\",\"line\":12},"
		"{\"ip\":139637976731648,\"off\":4096,\"file\":\"/lib/x.so\"},"
		"{\"ip\":16},"
		"{\"ip\":32,\"file\":\"/gone\",\"error\":\"not found\"},"
		"{\"ip\":48,\"file\":\"/changed\",\"error\":\"build-id mismatch\"}]");
	fclose(m);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_auxv_bias),
		cmocka_unit_test(test_interp),
		cmocka_unit_test(test_mmap_library),
		cmocka_unit_test(test_load_maps),
		cmocka_unit_test(test_sp_candidate),
		cmocka_unit_test(test_ustack_bounds),
		cmocka_unit_test(test_build_id_mismatch),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
