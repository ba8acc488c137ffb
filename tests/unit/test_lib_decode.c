// SPDX-License-Identifier: GPL-2.0
/*
 * Decoders: every flag table, errno names, typed views, and the text of
 * every record type, strace style.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "internal.h"
#include "test_lib_rec.h"

typedef int (*fmt_fn)(char *, size_t, __u64);

struct flag_case {
	__u64 v;
	const char *want;
};

static void check_table(const char *what, fmt_fn fn, const struct flag_case *c,
			size_t n)
{
	char buf[256];
	size_t i;

	for (i = 0; i < n; i++) {
		int len = fn(buf, sizeof(buf), c[i].v);

		if (strcmp(buf, c[i].want) || len != (int)strlen(c[i].want))
			fail_msg("%s(%#llx) = \"%s\" (%d), want \"%s\"", what,
				 (unsigned long long)c[i].v, buf, len, c[i].want);
	}
}

static void test_prot(void **state)
{
	static const struct flag_case c[] = {
		{ 0, "PROT_NONE" },
		{ 1, "PROT_READ" },
		{ 2, "PROT_WRITE" },
		{ 4, "PROT_EXEC" },
		{ 8, "PROT_SEM" },
		{ 3, "PROT_READ|PROT_WRITE" },
		{ 7, "PROT_READ|PROT_WRITE|PROT_EXEC" },
		{ 0x01000001, "PROT_READ|PROT_GROWSDOWN" },
		{ 0x02000000, "PROT_GROWSUP" },
		{ 0x10, "0x10" },
		{ 0x11, "PROT_READ|0x10" },
	};

	(void)state;
	check_table("prot", memmon_prot__format, c, ARRAY_SIZE(c));
}

static void test_mmap_flags(void **state)
{
	static const struct flag_case c[] = {
		{ 0x01, "MAP_SHARED" },
		{ 0x02, "MAP_PRIVATE" },
		{ 0x03, "MAP_SHARED_VALIDATE" },
		{ 0x00, "0" },
		{ 0x0f, "0xf" },
		{ 0x22, "MAP_PRIVATE|MAP_ANONYMOUS" },
		{ 0x32, "MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS" },
		{ 0x12, "MAP_PRIVATE|MAP_FIXED" },
		{ 0x42, "MAP_PRIVATE|MAP_32BIT" },
		{ 0x102, "MAP_PRIVATE|MAP_GROWSDOWN" },
		{ 0x802, "MAP_PRIVATE|MAP_DENYWRITE" },
		{ 0x1002, "MAP_PRIVATE|MAP_EXECUTABLE" },
		{ 0x2002, "MAP_PRIVATE|MAP_LOCKED" },
		{ 0x4002, "MAP_PRIVATE|MAP_NORESERVE" },
		{ 0x8002, "MAP_PRIVATE|MAP_POPULATE" },
		{ 0x10002, "MAP_PRIVATE|MAP_NONBLOCK" },
		{ 0x20022, "MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK" },
		{ 0x40022, "MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB" },
		{ 0x80001, "MAP_SHARED|MAP_SYNC" },
		{ 0x100002, "MAP_PRIVATE|MAP_FIXED_NOREPLACE" },
		{ 0x4000022, "MAP_PRIVATE|MAP_ANONYMOUS|MAP_UNINITIALIZED" },
		{ 0x40022 | (21ULL << 26),
		  "MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB|21<<MAP_HUGE_SHIFT" },
		{ 0x202, "MAP_PRIVATE|0x200" },
	};

	(void)state;
	check_table("mmap flags", memmon_mmap_flags__format, c, ARRAY_SIZE(c));
}

static void test_madvise(void **state)
{
	static const struct flag_case c[] = {
		{ 0, "MADV_NORMAL" }, { 1, "MADV_RANDOM" },
		{ 2, "MADV_SEQUENTIAL" }, { 3, "MADV_WILLNEED" },
		{ 4, "MADV_DONTNEED" }, { 8, "MADV_FREE" },
		{ 9, "MADV_REMOVE" }, { 10, "MADV_DONTFORK" },
		{ 11, "MADV_DOFORK" }, { 12, "MADV_MERGEABLE" },
		{ 13, "MADV_UNMERGEABLE" }, { 14, "MADV_HUGEPAGE" },
		{ 15, "MADV_NOHUGEPAGE" }, { 16, "MADV_DONTDUMP" },
		{ 17, "MADV_DODUMP" }, { 18, "MADV_WIPEONFORK" },
		{ 19, "MADV_KEEPONFORK" }, { 20, "MADV_COLD" },
		{ 21, "MADV_PAGEOUT" }, { 22, "MADV_POPULATE_READ" },
		{ 23, "MADV_POPULATE_WRITE" }, { 24, "MADV_DONTNEED_LOCKED" },
		{ 25, "MADV_COLLAPSE" }, { 100, "MADV_HWPOISON" },
		{ 101, "MADV_SOFT_OFFLINE" }, { 102, "MADV_GUARD_INSTALL" },
		{ 103, "MADV_GUARD_REMOVE" },
		{ 77, "0x4d /* MADV_??? */" },
	};

	(void)state;
	check_table("madvise", memmon_madvise__format, c, ARRAY_SIZE(c));
}

static void test_small_flag_tables(void **state)
{
	static const struct flag_case mremap[] = {
		{ 0, "0" }, { 1, "MREMAP_MAYMOVE" }, { 2, "MREMAP_FIXED" },
		{ 3, "MREMAP_MAYMOVE|MREMAP_FIXED" },
		{ 5, "MREMAP_MAYMOVE|MREMAP_DONTUNMAP" }, { 8, "0x8" },
	};
	static const struct flag_case mcl[] = {
		{ 0, "0" }, { 1, "MCL_CURRENT" }, { 2, "MCL_FUTURE" },
		{ 3, "MCL_CURRENT|MCL_FUTURE" },
		{ 7, "MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT" }, { 0x10, "0x10" },
	};
	static const struct flag_case mlock2[] = {
		{ 0, "0" }, { 1, "MLOCK_ONFAULT" }, { 3, "MLOCK_ONFAULT|0x2" },
	};

	(void)state;
	check_table("mremap", memmon_mremap_flags__format, mremap, ARRAY_SIZE(mremap));
	check_table("mlockall", memmon_mlockall_flags__format, mcl, ARRAY_SIZE(mcl));
	check_table("mlock2", memmon_mlock2_flags__format, mlock2, ARRAY_SIZE(mlock2));
}

static void test_snprintf_semantics(void **state)
{
	char buf[8];
	int n;

	(void)state;
	memset(buf, 'x', sizeof(buf));
	n = memmon_prot__format(buf, sizeof(buf), 3);
	/* full length returned, buffer truncated and terminated */
	assert_int_equal(n, (int)strlen("PROT_READ|PROT_WRITE"));
	assert_string_equal(buf, "PROT_RE");
	/* size 0 / NULL: only the length */
	assert_int_equal(memmon_prot__format(NULL, 0, 3), n);
}

static void test_errno(void **state)
{
	int e;

	(void)state;
	for (e = 1; e <= 133; e++) {
		const char *n = memmon_errno__name(e);

		if (e == 41 || e == 58)	/* unused numbers on Linux */
			continue;
		if (!n || n[0] != 'E' || !memmon_errno__desc(e))
			fail_msg("errno %d: no name/desc", e);
		/* the sign does not matter */
		assert_string_equal(memmon_errno__name(-e), n);
	}
	assert_string_equal(memmon_errno__name(ENOMEM), "ENOMEM");
	assert_string_equal(memmon_errno__desc(ENOMEM), "Cannot allocate memory");
	assert_string_equal(memmon_errno__name(EINVAL), "EINVAL");
	assert_string_equal(memmon_errno__name(EAGAIN), "EAGAIN");
	assert_string_equal(memmon_errno__name(512), "ERESTARTSYS");
	assert_string_equal(memmon_errno__name(516), "ERESTART_RESTARTBLOCK");
	assert_string_equal(memmon_errno__name(524), "ENOTSUPP");
	assert_null(memmon_errno__name(0));
	assert_null(memmon_errno__name(4000));
}

static void test_names(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < MEMMON_SYS__COUNT; i++) {
		const char *n = memmon_sys__name(i);

		assert_non_null(n);
		/* name -> number round trip */
		assert_int_equal(memmon_sys__from_name(n), (int)i);
	}
	assert_null(memmon_sys__name(MEMMON_SYS__COUNT));
	assert_int_equal(memmon_sys__from_name("open"), -ENOENT);
	for (i = 0; i < MEMMON_EV__COUNT; i++)
		assert_int_equal(memmon_event__from_name(memmon_event__name(i)), (int)i);
	assert_int_equal(memmon_event__from_name("bogus"), -ENOENT);
	for (i = 1; i < MEMMON_REC__COUNT; i++)
		assert_non_null(memmon_rec_type__name(i));
	assert_null(memmon_rec_type__name(0));
	assert_null(memmon_rec_type__name(MEMMON_REC__COUNT));
	assert_string_equal(memmon_fault_class__name(MEMMON_FCLASS_SHMEM), "shmem");
	assert_string_equal(memmon_fault_result__name(MEMMON_FRES_OOM), "oom");
	assert_null(memmon_fault_class__name(99));
}

static const struct memmon_format_opts *utc_opts(void)
{
	static struct memmon_format_opts o;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = MEMMON_FMT_UTC;
	o.realtime_offset_ns = TEST_OFFSET;
	return &o;
}

static void check_line(const struct memmon_rec_header *rec,
		       const struct memmon_format_opts *o, const char *want)
{
	char buf[1024];
	int n = memmon_rec__format(rec, buf, sizeof(buf), o);

	if (n != (int)strlen(want) || strcmp(buf, want))
		fail_msg("got  \"%s\" (%d)\nwant \"%s\"", buf, n, want);
}

static void test_text_syscalls(void **state)
{
	static const struct {
		__u32 sys;
		__u64 a[6];
		__s64 ret;
		const char *want;
	} c[] = {
		{ MEMMON_SYS_MMAP, { 0, 4096, 3, 0x22, (__u64)-1, 0 }, 0x7f12345000,
		  "mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f12345000" },
		{ MEMMON_SYS_MMAP, { 0x7f0000000000, 1 << 20, 0, 0x4022, (__u64)-1, 0 }, -ENOMEM,
		  "mmap(0x7f0000000000, 1048576, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0) = -1 ENOMEM (Cannot allocate memory)" },
		{ MEMMON_SYS_MMAP2, { 0, 8192, 1, 2, 3, 2 }, 0xf7000000,
		  "mmap2(NULL, 8192, PROT_READ, MAP_PRIVATE, 3, 0x2000) = 0xf7000000" },
		{ MEMMON_SYS_MUNMAP, { 0x7f12345000, 4096 }, 0,
		  "munmap(0x7f12345000, 4096) = 0" },
		{ MEMMON_SYS_MUNMAP, { 0x7f12345001, 4096 }, -EINVAL,
		  "munmap(0x7f12345001, 4096) = -1 EINVAL (Invalid argument)" },
		{ MEMMON_SYS_MREMAP, { 0x1000, 4096, 8192, 1, 0 }, 0x2000,
		  "mremap(0x1000, 4096, 8192, MREMAP_MAYMOVE) = 0x2000" },
		{ MEMMON_SYS_MREMAP, { 0x1000, 4096, 8192, 3, 0x9000 }, 0x9000,
		  "mremap(0x1000, 4096, 8192, MREMAP_MAYMOVE|MREMAP_FIXED, 0x9000) = 0x9000" },
		{ MEMMON_SYS_BRK, { 0 }, 0x55550000,
		  "brk(NULL) = 0x55550000" },
		{ MEMMON_SYS_MLOCK, { 0x1000, 4096 }, -EPERM,
		  "mlock(0x1000, 4096) = -1 EPERM (Operation not permitted)" },
		{ MEMMON_SYS_MLOCK2, { 0x1000, 4096, 1 }, 0,
		  "mlock2(0x1000, 4096, MLOCK_ONFAULT) = 0" },
		{ MEMMON_SYS_MUNLOCK, { 0x1000, 4096 }, 0,
		  "munlock(0x1000, 4096) = 0" },
		{ MEMMON_SYS_MLOCKALL, { 3 }, 0,
		  "mlockall(MCL_CURRENT|MCL_FUTURE) = 0" },
		{ MEMMON_SYS_MUNLOCKALL, { 0 }, 0, "munlockall() = 0" },
		{ MEMMON_SYS_FSYNC, { 5 }, -EBADF,
		  "fsync(5) = -1 EBADF (Bad file descriptor)" },
		{ MEMMON_SYS_MADVISE, { 0x1000, 4096, 4 }, 0,
		  "madvise(0x1000, 4096, MADV_DONTNEED) = 0" },
		{ MEMMON_SYS_MPROTECT, { 0x1000, 4096, 5 }, 0,
		  "mprotect(0x1000, 4096, PROT_READ|PROT_EXEC) = 0" },
		{ MEMMON_SYS_OLD_MMAP, { 0xffd0 }, 0xf7001000,
		  "old_mmap(0xffd0) = 0xf7001000" },
		{ 77, { 1, 2, 3, 4, 5, 6 }, 0,
		  "syscall_77(0x1, 0x2, 0x3, 0x4, 0x5, 0x6) = 0" },
	};
	const char *prefix = "12:00:00.123456 [cpu1] 1234/1235 ";
	union rec_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		char want[512];

		rec_syscall(&b, c[i].sys, c[i].a[0], c[i].a[1], c[i].a[2],
			    c[i].a[3], c[i].a[4], c[i].a[5], c[i].ret, 12000);
		snprintf(want, sizeof(want), "%s%s <0.000012>", prefix, c[i].want);
		check_line(&b.hdr, utc_opts(), want);
	}
}

static void test_text_file_mmap(void **state)
{
	struct memmon_paths *paths = memmon_paths__new();
	struct memmon_format_opts o = { .sz = sizeof(o), .flags = MEMMON_FMT_NO_TIME | MEMMON_FMT_NO_CPU };
	struct memmon_rec_syscall *sc;
	union rec_buf b, pb;

	(void)state;
	assert_non_null(paths);
	/* a PATH record feeds the table */
	assert_int_equal(memmon_paths__add_rec(paths, rec_path(&pb, MEMMON_REC_PATH,
							      "/usr/lib/libc.so.6")), 0);
	rec_syscall(&b, MEMMON_SYS_MMAP, 0, 8192, 1, 0x802, 3, 0, 0x7f0000001000, 3000);
	sc = (void *)&b;
	sc->flags = MEMMON_SYSF_FILE;
	sc->aux[0] = (8 << 20) | 1;
	sc->aux[1] = 4242;
	o.paths = paths;
	check_line(&b.hdr, &o, "1234/1235 mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_DENYWRITE, 3</usr/lib/libc.so.6>, 0) = 0x7f0000001000 <0.000003>");
	memmon_paths__free(paths);
}

static void test_text_other_records(void **state)
{
	struct memmon_format_opts o = { .sz = sizeof(o), .flags = MEMMON_FMT_NO_TIME };
	union rec_buf b;
	struct memmon_rec_fault *f = (void *)&b;
	struct memmon_rec_exit *x = (void *)&b;
	struct memmon_rec_fork *k = (void *)&b;
	struct memmon_rec_rss *r = (void *)&b;
	struct memmon_rec_lost *l = (void *)&b;

	(void)state;
	rec_hdr(&b, MEMMON_REC_FAULT, sizeof(*f));
	f->addr = 0x7f12345000;
	f->ip = 0x401000;
	f->access = MEMMON_FAULT_WRITE;
	f->fclass = MEMMON_FCLASS_ANON;
	f->duration_ns = 3000;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 fault 0x7f12345000 ip=0x401000 write anon minor handled <0.000003>");
	f->flags = MEMMON_FAULTF_MAJOR | MEMMON_FAULTF_PFN | MEMMON_FAULTF_KERNEL;
	f->fclass = MEMMON_FCLASS_FILE;
	f->access = MEMMON_FAULT_READ | MEMMON_FAULT_EXEC;
	f->result = MEMMON_FRES_SIGBUS;
	f->pfn = 0x1234;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 fault 0x7f12345000 ip=0x401000 read|exec file major sigbus kernel pfn=0x1234 <0.000003>");

	rec_hdr(&b, MEMMON_REC_EXIT, sizeof(*x));
	x->code = 0;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 exit exited 0");
	x->code = 11 | 0x80;
	x->flags = MEMMON_EXITF_GROUP;
	x->peak_rss = 4096;
	x->peak_vm = 8192;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 exit killed by SIGSEGV (core dumped) group peak_rss=4096 peak_vm=8192");
	x->code = 3 << 8;
	x->flags = 0;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 exit exited 3");
	/* A revoked watch: the process lives on; no status to print. */
	x->code = 0;
	x->flags = MEMMON_EXITF_GROUP | MEMMON_EXITF_REVOKED;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 exit revoked (privileged exec or not dumpable)");

	rec_hdr(&b, MEMMON_REC_FORK, sizeof(*k));
	k->child_tgid = 1300;
	k->child_tid = 1300;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 fork 1300/1300");
	k->child_tgid = 1234;
	k->child_tid = 1301;
	k->flags = MEMMON_FORKF_THREAD | MEMMON_FORKF_VM;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 clone_thread 1234/1301");

	rec_hdr(&b, MEMMON_REC_RSS, sizeof(*r));
	r->anon = 1;
	r->file = 2;
	r->shmem = 3;
	r->swap = 4;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 rss anon=1 file=2 shmem=3 swap=4");

	rec_hdr(&b, MEMMON_REC_LOST, sizeof(*l));
	l->count = 17;
	l->first_ns = 1500000000;
	l->last_ns = 2500000000;
	/* LOST has no task */
	check_line(&b.hdr, &o, "[cpu1] lost 17 events (1.500000..2.500000)");

	rec_mark(&b, "a\"b\\c\n\x01\xff", 8);
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 mark \"a\\\"b\\\\c\\n\\x01\\xff\"");

	rec_path(&b, MEMMON_REC_EXEC, "/bin/true");
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 exec \"/bin/true\"");
	rec_path(&b, MEMMON_REC_PATH, "/x");
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 path dev=8:1 ino=4242 \"/x\"");
}

/* COMM: why by name (a number when unknown), the name escaped like data. */
static void test_text_comm(void **state)
{
	static const struct {
		__u32 why;
		const char *comm;
		const char *want;
	} c[] = {
		{ MEMMON_COMM_WATCH, "bash", "comm watch \"bash\"" },
		{ MEMMON_COMM_EXEC, "true", "comm exec \"true\"" },
		{ MEMMON_COMM_RENAME, "cm-pthread", "comm rename \"cm-pthread\"" },
		{ MEMMON_COMM_RENAME, "a b\"\n", "comm rename \"a b\\\"\\n\"" },
		{ MEMMON_COMM_RENAME, "", "comm rename \"\"" },
		{ MEMMON_COMM_RENAME, "0123456789abcde", "comm rename \"0123456789abcde\"" },
		{ 7, "x", "comm 7 \"x\"" },
	};
	struct memmon_format_opts o = { .sz = sizeof(o), .flags = MEMMON_FMT_NO_TIME };
	struct memmon_rec_comm *cm;
	union rec_buf b;
	char want[128];
	size_t i;

	(void)state;
	assert_int_equal(sizeof(*cm), 48);
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		cm = (void *)&b;
		rec_hdr(&b, MEMMON_REC_COMM, sizeof(*cm));
		cm->why = c[i].why;
		strcpy(cm->comm, c[i].comm);
		snprintf(want, sizeof(want), "[cpu1] 1234/1235 %s", c[i].want);
		check_line(&b.hdr, &o, want);
	}
	assert_string_equal(memmon_comm_why__name(MEMMON_COMM_EXEC), "exec");
	assert_null(memmon_comm_why__name(7));

	/* 16 bytes without a NUL: malformed */
	memset(cm->comm, 'x', sizeof(cm->comm));
	assert_null(memmon_rec__comm(&b.hdr));
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(memmon_rec__format(&b.hdr, want, sizeof(want), &o), -EBADMSG);
	/* shorter than a COMM record */
	rec_hdr(&b, MEMMON_REC_COMM, sizeof(*cm) - 8);
	assert_null(memmon_rec__comm(&b.hdr));
	assert_int_equal(errno, EBADMSG);
}

/* AUXV: the placement in hex; a short one is malformed. */
static void test_text_auxv(void **state)
{
	struct memmon_format_opts o = { .sz = sizeof(o), .flags = MEMMON_FMT_NO_TIME };
	struct memmon_rec_auxv *a;
	union rec_buf b;
	char buf[64];

	(void)state;
	a = (void *)&b;
	rec_hdr(&b, MEMMON_REC_AUXV, sizeof(*a));
	a->phdr = 0x55d0c0de0040ULL;
	a->phent = 56;
	a->phnum = 13;
	a->entry = 0x55d0c0de1000ULL;
	a->base = 0x7f0000001000ULL;
	a->vdso = 0x7ffd00000000ULL;
	check_line(&b.hdr, &o, "[cpu1] 1234/1235 auxv phdr=0x55d0c0de0040 phnum=13 "
		   "entry=0x55d0c0de1000 base=0x7f0000001000 vdso=0x7ffd00000000");
	assert_ptr_equal(memmon_rec__auxv(&b.hdr), a);
	rec_hdr(&b, MEMMON_REC_AUXV, sizeof(*a) - 8);
	assert_null(memmon_rec__auxv(&b.hdr));
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(memmon_rec__format(&b.hdr, buf, sizeof(buf), &o), -EBADMSG);
}

/*
 * memmon_rec__ustack(): the stack after a syscall or fault record with the
 * flag, NULL (ENOMSG) without, NULL (EBADMSG) when it does not fit; the
 * text line does not show it (the tools print frames below it).
 */
static void test_ustack_view(void **state)
{
	struct memmon_format_opts o = { .sz = sizeof(o), .flags = MEMMON_FMT_NO_TIME };
	const struct memmon_user_stack *st;
	struct memmon_rec_syscall *sc;
	struct memmon_rec_fault *f;
	struct memmon_user_stack *u;
	union rec_buf b;
	char line[512], plain[512];

	(void)state;
	rec_syscall(&b, MEMMON_SYS_MUNMAP, 0x1000, 4096, 0, 0, 0, 0, 0, 0);
	assert_true(memmon_rec__format(&b.hdr, plain, sizeof(plain), &o) > 0);
	assert_null(memmon_rec__ustack(&b.hdr));
	assert_int_equal(errno, ENOMSG);
	sc = (void *)&b;
	sc->flags |= MEMMON_SYSF_USTACK;
	b.hdr.size = sizeof(*sc) + sizeof(*u) + 3 * 8;
	u = (void *)(sc + 1);
	u->nr = 3;
	u->flags = MEMMON_USTACK_SP;
	u->ip[0] = 0x7f00000019b3ULL;
	u->ip[1] = 0x5500000011aaULL;
	u->ip[2] = 0x5500000012bbULL;
	st = memmon_rec__ustack(&b.hdr);
	assert_ptr_equal(st, u);
	assert_true(memmon_rec__format(&b.hdr, line, sizeof(line), &o) > 0);
	assert_string_equal(line, plain);
	u->nr = 4;
	assert_null(memmon_rec__ustack(&b.hdr));
	assert_int_equal(errno, EBADMSG);

	f = (void *)&b;
	rec_hdr(&b, MEMMON_REC_FAULT, sizeof(*f) + sizeof(*u) + 8);
	f->flags = MEMMON_FAULTF_USTACK;
	u = (void *)(f + 1);
	u->nr = 1;
	assert_ptr_equal(memmon_rec__ustack(&b.hdr), u);
	rec_hdr(&b, MEMMON_REC_RSS, sizeof(struct memmon_rec_rss));
	assert_null(memmon_rec__ustack(&b.hdr));
	assert_int_equal(errno, ENOMSG);
	assert_null(memmon_rec__ustack(NULL));
	assert_int_equal(errno, EINVAL);
}

static void test_time_formats(void **state)
{
	struct memmon_format_opts o = { .sz = sizeof(o), .flags = MEMMON_FMT_MONOTONIC | MEMMON_FMT_NO_CPU };
	union rec_buf b;

	(void)state;
	rec_syscall(&b, MEMMON_SYS_MUNLOCKALL, 0, 0, 0, 0, 0, 0, 0, 1500);
	check_line(&b.hdr, &o, "1000.123456 1234/1235 munlockall() = 0 <0.000001>");
	o.flags = MEMMON_FMT_UTC;
	o.realtime_offset_ns = TEST_OFFSET + 3600LL * 1000000000;
	check_line(&b.hdr, &o, "13:00:00.123456 [cpu1] 1234/1235 munlockall() = 0 <0.000001>");
}

static void test_malformed_and_unknown(void **state)
{
	union rec_buf b;
	char buf[256] = "junk";
	struct memmon_rec_exec *e = (void *)&b;

	(void)state;
	rec_hdr(&b, 99, 64);
	/* unknown type: nothing, 0 */
	assert_int_equal(memmon_rec__format(&b.hdr, buf, sizeof(buf), NULL), 0);
	assert_string_equal(buf, "");
	assert_null(memmon_rec__syscall(&b.hdr));
	assert_int_equal(errno, ENOMSG);

	rec_syscall(&b, MEMMON_SYS_MMAP, 0, 0, 0, 0, 0, 0, 0, 0);
	b.hdr.size = 40;	/* shorter than a syscall record */
	assert_null(memmon_rec__syscall(&b.hdr));
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(memmon_rec__format(&b.hdr, buf, sizeof(buf), NULL), -EBADMSG);

	rec_path(&b, MEMMON_REC_EXEC, "/bin/true");
	e->path_len = 4000;	/* runs past the record */
	assert_null(memmon_rec__exec(&b.hdr));
	assert_int_equal(errno, EBADMSG);
	rec_path(&b, MEMMON_REC_EXEC, "/bin/true");
	e->path[e->path_len] = 'x';	/* not NUL-terminated */
	assert_null(memmon_rec__exec(&b.hdr));

	rec_mark(&b, "abc", 3);
	((struct memmon_rec_mark *)&b)->len = 100;
	assert_null(memmon_rec__mark(&b.hdr));

	/* options with unknown non-zero bytes */
	{
		struct {
			struct memmon_format_opts o;
			__u64 future;
		} big = { .o = { .sz = sizeof(big) }, .future = 1 };

		rec_mark(&b, "abc", 3);
		assert_int_equal(memmon_rec__format(&b.hdr, buf, sizeof(buf), &big.o), -EINVAL);
	}
}

static void test_fprint(void **state)
{
	union rec_buf b;
	FILE *f;
	char *mem = NULL;
	size_t len = 0;

	(void)state;
	f = open_memstream(&mem, &len);
	assert_non_null(f);
	rec_mark(&b, "hi", 2);
	assert_int_equal(memmon_rec__fprint(f, &b.hdr, NULL) > 0, 1);
	rec_hdr(&b, 99, 64);
	/* unknown: nothing written */
	assert_int_equal(memmon_rec__fprint(f, &b.hdr, NULL), 0);
	fclose(f);
	assert_true(strstr(mem, "mark \"hi\"\n") != NULL);
	assert_int_equal(strchr(mem, '\n') - mem + 1, (long)len);
	free(mem);

	/* a stream that fails: its errno (/dev/full: ENOSPC) */
	f = fopen("/dev/full", "w");
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	rec_mark(&b, "hi", 2);
	assert_int_equal(memmon_rec__fprint(f, &b.hdr, NULL), -ENOSPC);
	fclose(f);
}

static int count_cb(void *ctx, __u64 dev, __u64 ino, const char *path)
{
	(void)dev;
	(void)ino;
	(void)path;
	(*(int *)ctx)++;
	return 0;
}

static void test_paths_table(void **state)
{
	struct memmon_paths *p = memmon_paths__new();
	char name[64];
	int i, n = 0;

	(void)state;
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "/f/%d", i);
		assert_int_equal(memmon_paths__add(p, (__u64)i % 7, (__u64)i, name), 0);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "/f/%d", i);
		assert_string_equal(memmon_paths__lookup(p, (__u64)i % 7, (__u64)i), name);
	}
	assert_null(memmon_paths__lookup(p, 1, 99999));
	/* re-adding replaces */
	assert_int_equal(memmon_paths__add(p, 0, 0, "/renamed"), 0);
	assert_string_equal(memmon_paths__lookup(p, 0, 0), "/renamed");
	assert_int_equal(memmon_paths__for_each(p, count_cb, &n), 0);
	assert_int_equal(n, 5000);
	memmon_paths__free(p);
	memmon_paths__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prot),
		cmocka_unit_test(test_mmap_flags),
		cmocka_unit_test(test_madvise),
		cmocka_unit_test(test_small_flag_tables),
		cmocka_unit_test(test_snprintf_semantics),
		cmocka_unit_test(test_errno),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_text_syscalls),
		cmocka_unit_test(test_text_file_mmap),
		cmocka_unit_test(test_text_other_records),
		cmocka_unit_test(test_text_comm),
		cmocka_unit_test(test_text_auxv),
		cmocka_unit_test(test_ustack_view),
		cmocka_unit_test(test_time_formats),
		cmocka_unit_test(test_malformed_and_unknown),
		cmocka_unit_test(test_fprint),
		cmocka_unit_test(test_paths_table),
	};

	return cmocka_run_group_tests_name("lib_decode", tests, NULL, NULL);
}
