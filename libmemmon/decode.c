// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Record decoding: typed views, name tables, strace-style text.
 *
 * The flag tables hold the Linux ABI values of asm-generic/mman-common.h
 * and mman.h as x86-64 (memmon's target) uses them, written out here rather
 * than taken from <sys/mman.h>: the records may come from a newer kernel
 * than the libc we are built against, and a trace file may be read on
 * another machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include "internal.h"
#include "memmon_names.h"
#include "memmon_rec_check.h"
#include "strbuf.h"
#include <sys/wait.h>

/* ------------------------------------------------------------------ */
/* Typed views */

const struct memmon_rec_lost *memmon_rec__lost(const struct memmon_rec_header *rec)
{
	return libmm_view(rec, MEMMON_REC_LOST, sizeof(struct memmon_rec_lost));
}

const struct memmon_rec_mark *memmon_rec__mark(const struct memmon_rec_header *rec)
{
	const struct memmon_rec_mark *m;

	m = libmm_view(rec, MEMMON_REC_MARK, sizeof(*m));
	if (m && m->len > rec->size - sizeof(*m))
		return libmm_err_ptr(-EBADMSG);
	return m;
}

const struct memmon_rec_syscall *
memmon_rec__syscall(const struct memmon_rec_header *rec)
{
	return libmm_view(rec, MEMMON_REC_SYSCALL, sizeof(struct memmon_rec_syscall));
}

const struct memmon_rec_fault *memmon_rec__fault(const struct memmon_rec_header *rec)
{
	return libmm_view(rec, MEMMON_REC_FAULT, sizeof(struct memmon_rec_fault));
}

const struct memmon_rec_rss *memmon_rec__rss(const struct memmon_rec_header *rec)
{
	return libmm_view(rec, MEMMON_REC_RSS, sizeof(struct memmon_rec_rss));
}

const struct memmon_rec_fork *memmon_rec__fork(const struct memmon_rec_header *rec)
{
	return libmm_view(rec, MEMMON_REC_FORK, sizeof(struct memmon_rec_fork));
}

/* path_len must leave room for the NUL inside the record. */
const struct memmon_rec_exec *memmon_rec__exec(const struct memmon_rec_header *rec)
{
	const struct memmon_rec_exec *e;

	e = libmm_view(rec, MEMMON_REC_EXEC, sizeof(*e));
	if (e && (e->path_len >= rec->size - sizeof(*e) || e->path[e->path_len]))
		return libmm_err_ptr(-EBADMSG);
	return e;
}

const struct memmon_rec_exit *memmon_rec__exit(const struct memmon_rec_header *rec)
{
	return libmm_view(rec, MEMMON_REC_EXIT, sizeof(struct memmon_rec_exit));
}

const struct memmon_rec_path *memmon_rec__path(const struct memmon_rec_header *rec)
{
	const struct memmon_rec_path *p;

	p = libmm_view(rec, MEMMON_REC_PATH, sizeof(*p));
	if (p && (p->path_len >= rec->size - sizeof(*p) || p->path[p->path_len]))
		return libmm_err_ptr(-EBADMSG);
	return p;
}

const struct memmon_rec_comm *memmon_rec__comm(const struct memmon_rec_header *rec)
{
	const struct memmon_rec_comm *c;

	c = libmm_view(rec, MEMMON_REC_COMM, sizeof(*c));
	if (c && !memchr(c->comm, 0, sizeof(c->comm)))
		return libmm_err_ptr(-EBADMSG);
	return c;
}

const struct memmon_user_stack *
memmon_rec__ustack(const struct memmon_rec_header *rec)
{
	__u32 at;

	if (!rec)
		return libmm_err_ptr(-EINVAL);
	if (rec->type == MEMMON_REC_SYSCALL &&
	    rec->size >= sizeof(struct memmon_rec_syscall) &&
	    (((const struct memmon_rec_syscall *)rec)->flags & MEMMON_SYSF_USTACK))
		at = sizeof(struct memmon_rec_syscall);
	else if (rec->type == MEMMON_REC_FAULT &&
		 rec->size >= sizeof(struct memmon_rec_fault) &&
		 (((const struct memmon_rec_fault *)rec)->flags & MEMMON_FAULTF_USTACK))
		at = sizeof(struct memmon_rec_fault);
	else
		return libmm_err_ptr(-ENOMSG);
	if (!memmon_rec_ustack_fits(rec, at, rec->size))
		return libmm_err_ptr(-EBADMSG);
	return (const void *)((const __u8 *)rec + at);
}

const struct memmon_rec_auxv *memmon_rec__auxv(const struct memmon_rec_header *rec)
{
	return libmm_view(rec, MEMMON_REC_AUXV, sizeof(struct memmon_rec_auxv));
}

/* ------------------------------------------------------------------ */
/* Name tables */

static const char *const event_names[] = {
	[MEMMON_EV_SYSCALL] = "syscalls",
	[MEMMON_EV_FAULT] = "faults",
	[MEMMON_EV_RSS] = "rss",
	[MEMMON_EV_LIFECYCLE] = "lifecycle",
	[MEMMON_EV_MARK] = "mark",
};

const char *memmon_rec_type__name(unsigned int type)
{
	return LIBMM_NAME_AT(memmon_rec_type_names, type);
}

const char *memmon_sys__name(unsigned int sys)
{
	return LIBMM_NAME_AT(memmon_sys_names, sys);
}

static int name_lookup(const char *const *tbl, size_t n, const char *name)
{
	size_t i;

	if (!name)
		return libmm_err(-EINVAL);
	for (i = 0; i < n; i++)
		if (tbl[i] && !strcmp(tbl[i], name))
			return (int)i;
	return libmm_err(-ENOENT);
}

int memmon_sys__from_name(const char *name)
{
	return name_lookup(memmon_sys_names, ARRAY_SIZE(memmon_sys_names), name);
}

const char *memmon_event__name(unsigned int ev)
{
	return LIBMM_NAME_AT(event_names, ev);
}

int memmon_event__from_name(const char *name)
{
	return name_lookup(event_names, ARRAY_SIZE(event_names), name);
}

const char *memmon_fault_class__name(unsigned int fclass)
{
	return LIBMM_NAME_AT(memmon_fclass_names, fclass);
}

const char *memmon_fault_result__name(unsigned int result)
{
	return LIBMM_NAME_AT(memmon_fresult_names, result);
}

const char *memmon_comm_why__name(unsigned int why)
{
	return LIBMM_NAME_AT(memmon_comm_why_names, why);
}

/*
 * errno: glibc's tables for the userspace ones (not localised), ours for
 * the kernel-internal codes that can leak into a return value.
 */
static const struct {
	int err;
	const char *name;
	const char *desc;
} kernel_errnos[] = {
	{ 512, "ERESTARTSYS", "To be restarted if SA_RESTART is set" },
	{ 513, "ERESTARTNOINTR", "To be restarted" },
	{ 514, "ERESTARTNOHAND", "To be restarted if no handler" },
	{ 515, "ENOIOCTLCMD", "No ioctl command" },
	{ 516, "ERESTART_RESTARTBLOCK", "Interrupted by signal" },
	{ 517, "EPROBE_DEFER", "Driver requests probe retry" },
	{ 518, "EOPENSTALE", "Open found a stale dentry" },
	{ 519, "ENOPARAM", "Parameter not supported" },
	{ 521, "EBADHANDLE", "Illegal NFS file handle" },
	{ 522, "ENOTSYNC", "Update synchronization mismatch" },
	{ 523, "EBADCOOKIE", "Cookie is stale" },
	{ 524, "ENOTSUPP", "Operation is not supported" },
	{ 525, "ETOOSMALL", "Buffer or request is too small" },
	{ 526, "ESERVERFAULT", "An untranslatable error occurred" },
	{ 527, "EBADTYPE", "Type not supported by server" },
	{ 528, "EJUKEBOX", "Request initiated, but will not complete before timeout" },
	{ 529, "EIOCBQUEUED", "iocb queued, will get completion event" },
	{ 530, "ERECALLCONFLICT", "Conflict with recalled state" },
};

const char *memmon_errno__name(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < ARRAY_SIZE(kernel_errnos); i++)
		if (kernel_errnos[i].err == err)
			return kernel_errnos[i].name;
	return err ? strerrorname_np(err) : NULL;
}

const char *memmon_errno__desc(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < ARRAY_SIZE(kernel_errnos); i++)
		if (kernel_errnos[i].err == err)
			return kernel_errnos[i].desc;
	return err ? strerrordesc_np(err) : NULL;
}

/* ------------------------------------------------------------------ */
/* Flag decoders */

struct flag_name {
	__u64 val;
	const char *name;
	size_t len;
};

/* The text so far, terminated, and its length as snprintf() returns it. */
static int sb_done(struct strbuf *sb)
{
	sb_finish(sb);
	return sb_ret(sb);
}

static void sb_name(struct strbuf *sb, const struct flag_name *f)
{
	sb_put(sb, f->name, f->len);
}

/* OR of names from tbl; unknown bits as |0x...; zero as zero_name. */
static void sb_flags(struct strbuf *sb, const struct flag_name *tbl, size_t n,
		     __u64 v, const char *zero_name)
{
	bool first = true;
	size_t i;

	if (!v) {
		sb_str(sb, zero_name ? zero_name : "0");
		return;
	}
	for (i = 0; i < n && v; i++) {
		if (tbl[i].val && (v & tbl[i].val) == tbl[i].val) {
			if (!first)
				sb_ch(sb, '|');
			sb_name(sb, &tbl[i]);
			v &= ~tbl[i].val;
			first = false;
		}
	}
	if (v) {
		if (!first)
			sb_ch(sb, '|');
		sb_0x(sb, v);
	}
}

static const struct flag_name *value_name(const struct flag_name *tbl,
					  size_t n, __u64 v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tbl[i].val == v)
			return &tbl[i];
	return NULL;
}

#define FLAG(x, v) { v, #x, sizeof(#x) - 1 }

static const struct flag_name prot_flags[] = {
	FLAG(PROT_READ, 0x1),
	FLAG(PROT_WRITE, 0x2),
	FLAG(PROT_EXEC, 0x4),
	FLAG(PROT_SEM, 0x8),
	FLAG(PROT_GROWSDOWN, 0x01000000),
	FLAG(PROT_GROWSUP, 0x02000000),
};

/* The low nibble of mmap flags is a type, not bits. */
#define LIBMM_MAP_TYPE		0x0f
static const struct flag_name map_types[] = {
	FLAG(MAP_SHARED, 0x01),
	FLAG(MAP_PRIVATE, 0x02),
	FLAG(MAP_SHARED_VALIDATE, 0x03),
};

static const struct flag_name map_flags[] = {
	FLAG(MAP_FIXED, 0x10),
	FLAG(MAP_ANONYMOUS, 0x20),
	FLAG(MAP_32BIT, 0x40),
	FLAG(MAP_GROWSDOWN, 0x100),
	FLAG(MAP_DENYWRITE, 0x800),
	FLAG(MAP_EXECUTABLE, 0x1000),
	FLAG(MAP_LOCKED, 0x2000),
	FLAG(MAP_NORESERVE, 0x4000),
	FLAG(MAP_POPULATE, 0x8000),
	FLAG(MAP_NONBLOCK, 0x10000),
	FLAG(MAP_STACK, 0x20000),
	FLAG(MAP_HUGETLB, 0x40000),
	FLAG(MAP_SYNC, 0x80000),
	FLAG(MAP_FIXED_NOREPLACE, 0x100000),
	FLAG(MAP_UNINITIALIZED, 0x4000000),
};

/* With MAP_HUGETLB, bits 26..31 are log2 of the huge page size. */
#define LIBMM_MAP_HUGE_SHIFT	26
#define LIBMM_MAP_HUGE_MASK	0x3fULL

static const struct flag_name mremap_flags[] = {
	FLAG(MREMAP_MAYMOVE, 0x1),
	FLAG(MREMAP_FIXED, 0x2),
	FLAG(MREMAP_DONTUNMAP, 0x4),
};

static const struct flag_name mcl_flags[] = {
	FLAG(MCL_CURRENT, 0x1),
	FLAG(MCL_FUTURE, 0x2),
	FLAG(MCL_ONFAULT, 0x4),
};

static const struct flag_name mlock2_flags[] = {
	FLAG(MLOCK_ONFAULT, 0x1),
};

static const struct flag_name madv_values[] = {
	FLAG(MADV_NORMAL, 0),
	FLAG(MADV_RANDOM, 1),
	FLAG(MADV_SEQUENTIAL, 2),
	FLAG(MADV_WILLNEED, 3),
	FLAG(MADV_DONTNEED, 4),
	FLAG(MADV_FREE, 8),
	FLAG(MADV_REMOVE, 9),
	FLAG(MADV_DONTFORK, 10),
	FLAG(MADV_DOFORK, 11),
	FLAG(MADV_MERGEABLE, 12),
	FLAG(MADV_UNMERGEABLE, 13),
	FLAG(MADV_HUGEPAGE, 14),
	FLAG(MADV_NOHUGEPAGE, 15),
	FLAG(MADV_DONTDUMP, 16),
	FLAG(MADV_DODUMP, 17),
	FLAG(MADV_WIPEONFORK, 18),
	FLAG(MADV_KEEPONFORK, 19),
	FLAG(MADV_COLD, 20),
	FLAG(MADV_PAGEOUT, 21),
	FLAG(MADV_POPULATE_READ, 22),
	FLAG(MADV_POPULATE_WRITE, 23),
	FLAG(MADV_DONTNEED_LOCKED, 24),
	FLAG(MADV_COLLAPSE, 25),
	FLAG(MADV_HWPOISON, 100),
	FLAG(MADV_SOFT_OFFLINE, 101),
	FLAG(MADV_GUARD_INSTALL, 102),
	FLAG(MADV_GUARD_REMOVE, 103),
};

void libmm_sb_prot(struct strbuf *sb, __u64 prot)
{
	sb_flags(sb, prot_flags, ARRAY_SIZE(prot_flags), prot, "PROT_NONE");
}

int memmon_prot__format(char *buf, size_t size, __u64 prot)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	libmm_sb_prot(&sb, prot);
	return sb_done(&sb);
}

void libmm_sb_mmap_flags(struct strbuf *sb, __u64 flags)
{
	const struct flag_name *type = value_name(map_types, ARRAY_SIZE(map_types),
						  flags & LIBMM_MAP_TYPE);
	__u64 rest = flags & ~(__u64)LIBMM_MAP_TYPE;
	__u64 huge = 0;

	if (type)
		sb_name(sb, type);
	else
		sb_hex(sb, flags & LIBMM_MAP_TYPE);
	if (rest & 0x40000) {	/* MAP_HUGETLB: a size may follow */
		huge = (rest >> LIBMM_MAP_HUGE_SHIFT) & LIBMM_MAP_HUGE_MASK;
		rest &= ~(LIBMM_MAP_HUGE_MASK << LIBMM_MAP_HUGE_SHIFT);
	}
	if (rest) {
		sb_ch(sb, '|');
		sb_flags(sb, map_flags, ARRAY_SIZE(map_flags), rest, NULL);
	}
	if (huge) {
		sb_ch(sb, '|');
		sb_u64(sb, huge);
		sb_lit(sb, "<<MAP_HUGE_SHIFT");
	}
}

int memmon_mmap_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	libmm_sb_mmap_flags(&sb, flags);
	return sb_done(&sb);
}

void libmm_sb_mremap_flags(struct strbuf *sb, __u64 flags)
{
	sb_flags(sb, mremap_flags, ARRAY_SIZE(mremap_flags), flags, "0");
}

int memmon_mremap_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	libmm_sb_mremap_flags(&sb, flags);
	return sb_done(&sb);
}

void libmm_sb_madvise(struct strbuf *sb, __u64 advice)
{
	const struct flag_name *n = value_name(madv_values, ARRAY_SIZE(madv_values),
					       advice);

	if (n) {
		sb_name(sb, n);
	} else {
		sb_hex(sb, advice);
		sb_lit(sb, " /* MADV_??? */");
	}
}

int memmon_madvise__format(char *buf, size_t size, __u64 advice)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	libmm_sb_madvise(&sb, advice);
	return sb_done(&sb);
}

void libmm_sb_mlockall_flags(struct strbuf *sb, __u64 flags)
{
	sb_flags(sb, mcl_flags, ARRAY_SIZE(mcl_flags), flags, "0");
}

int memmon_mlockall_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	libmm_sb_mlockall_flags(&sb, flags);
	return sb_done(&sb);
}

void libmm_sb_mlock2_flags(struct strbuf *sb, __u64 flags)
{
	sb_flags(sb, mlock2_flags, ARRAY_SIZE(mlock2_flags), flags, "0");
}

int memmon_mlock2_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	libmm_sb_mlock2_flags(&sb, flags);
	return sb_done(&sb);
}

static void sb_fault_access(struct strbuf *sb, __u32 access)
{
	char tmp[LIBMM_ACCESS_MAX], *s = sb_seg(sb, tmp, sizeof(tmp));

	sb_seg_end(sb, tmp, s, w_fault_access(s, access));
}

int memmon_fault_access__format(char *buf, size_t size, __u32 access)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_fault_access(&sb, access);
	return sb_done(&sb);
}

void libmm_sb_wait_status(struct strbuf *sb, __u32 st)
{
	if (WIFEXITED(st)) {
		sb_lit(sb, "exited ");
		sb_s64(sb, WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		const char *abbr = sigabbrev_np(WTERMSIG(st));

		if (abbr) {
			sb_lit(sb, "killed by SIG");
			sb_str(sb, abbr);
		} else {
			sb_lit(sb, "killed by signal ");
			sb_s64(sb, WTERMSIG(st));
		}
		if (WCOREDUMP(st))
			sb_lit(sb, " (core dumped)");
	} else {
		sb_lit(sb, "status ");
		sb_hex(sb, st);
	}
}

int memmon_wait_status__format(char *buf, size_t size, __u32 status)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	libmm_sb_wait_status(&sb, status);
	return sb_done(&sb);
}

/* ------------------------------------------------------------------ */
/* Text */

/* strbuf.h's digit pairs: "00".."99", "00".."ff" */
#define D10(x)	x "0" x "1" x "2" x "3" x "4" x "5" x "6" x "7" x "8" x "9"
#define X16(x)	D10(x) x "a" x "b" x "c" x "d" x "e" x "f"
const char libmm_digits2[200] = D10("0") D10("1") D10("2") D10("3") D10("4")
				D10("5") D10("6") D10("7") D10("8") D10("9");
const char libmm_xdigits2[512] = X16("0") X16("1") X16("2") X16("3") X16("4")
				 X16("5") X16("6") X16("7") X16("8") X16("9")
				 X16("a") X16("b") X16("c") X16("d") X16("e")
				 X16("f");
#undef X16
#undef D10

static int format_opts_check(const struct memmon_format_opts *opts)
{
	if (!OPTS_VALID(opts, memmon_format_opts))
		return -EINVAL;
	return 0;
}

/*
 * "hh:mm:ss" of a wall-clock second, from the last second this thread
 * asked for when it is the same: records come many to a second, and
 * gmtime_r() and localtime_r() cost more than the rest of a line (the
 * latter takes a lock). The local entry is also keyed on what tzset()
 * sets (the zone's names, offset and summer-time flag), so that a change
 * of zone is seen at once (localtime_r() itself reads TZ only the first
 * time, in glibc); only a new zone with the names and offsets of the old
 * one but other rules would go unseen until the next second.
 */
#define HMS_MAX		(3 * 11 + 2)	/* "%02d:%02d:%02d" of any ints */

struct hms_cache {
	__s64 sec;
	const char *tzname[2];
	long timezone;
	int daylight;
	bool valid;
	unsigned char len;
	char hms[HMS_MAX];
};

static __thread struct hms_cache hms_cache[2];	/* [0] local, [1] UTC */

static char *w_hms(char *p, __s64 sec, bool utc)
{
	struct hms_cache *c = &hms_cache[utc];
	time_t t = (time_t)sec;
	struct tm tm;
	char *q;

	if (c->valid && c->sec == sec &&
	    (utc || (c->tzname[0] == tzname[0] && c->tzname[1] == tzname[1] &&
		     c->timezone == timezone && c->daylight == daylight)))
		return w_put(p, c->hms, c->len);
	if (utc)
		gmtime_r(&t, &tm);
	else
		localtime_r(&t, &tm);
	q = w_02d(c->hms, tm.tm_hour);
	*q++ = ':';
	q = w_02d(q, tm.tm_min);
	*q++ = ':';
	q = w_02d(q, tm.tm_sec);
	c->len = (unsigned char)(q - c->hms);
	c->sec = sec;
	c->tzname[0] = tzname[0];
	c->tzname[1] = tzname[1];
	c->timezone = timezone;
	c->daylight = daylight;
	c->valid = true;
	return w_put(p, c->hms, c->len);
}

/* "12:00:00.123456" (wall clock) or "12345.678901" (monotonic). */
#define W_TIME_MAX	(HMS_MAX + 7 > W_SEC_US_MAX ? HMS_MAX + 7 : W_SEC_US_MAX)

/* The wall clock's "hh:mm:ss.uuuuuu", apart: the rarer, larger path. */
static __attribute_noinline__ char *w_wall(char *p, __u64 time_ns,
					   __u32 flags, __s64 off)
{
	/* the sum wraps as two's complement does, not undefined */
	__s64 t = (__s64)(time_ns + (__u64)off);

	if (t < 0)
		t = 0;
	p = w_hms(p, t / 1000000000, flags & MEMMON_FMT_UTC);
	*p++ = '.';
	return w_u6(p, (__u32)(t % 1000000000 / 1000));
}

static inline char *w_time(char *p, __u64 time_ns, __u32 flags, __s64 off)
{
	if (flags & MEMMON_FMT_MONOTONIC || !off)
		return w_sec_us(p, time_ns);
	return w_wall(p, time_ns, flags, off);
}

static void sb_time(struct strbuf *sb, __u64 time_ns,
		    const struct memmon_format_opts *opts)
{
	char tmp[W_TIME_MAX], *s = sb_seg(sb, tmp, sizeof(tmp));

	sb_seg_end(sb, tmp, s, w_time(s, time_ns, OPTS_GET(opts, flags, 0),
				      OPTS_GET(opts, realtime_offset_ns, 0)));
}

/* " <0.000012>" */
#define W_DURATION_MAX	(2 + W_SEC_US_MAX + 1)

static char *w_duration(char *p, __u64 ns)
{
	p = w_lit(p, " <");
	p = w_sec_us(p, ns);
	*p++ = '>';
	return p;
}

static void sb_duration(struct strbuf *sb, __u64 ns)
{
	char tmp[W_DURATION_MAX], *s = sb_seg(sb, tmp, sizeof(tmp));

	sb_seg_end(sb, tmp, s, w_duration(s, ns));
}

static void sb_addr(struct strbuf *sb, __u64 a)
{
	if (a)
		sb_0x(sb, a);
	else
		sb_lit(sb, "NULL");
}

/*
 * How sb_cstr() writes each byte: 0 as itself, 1 as \xNN, else the
 * character after a backslash.
 */
static const char cstr_esc[256] = {
	[0 ... 0x08] = 1, ['\t'] = 't', ['\n'] = 'n', [0x0b ... 0x0c] = 1,
	['\r'] = 'r', [0x0e ... 0x1f] = 1, ['"'] = '"', ['\\'] = '\\',
	[0x7f ... 0xff] = 1,
};

/* Bytes as a C string literal, strace style; at most max shown. */
static void sb_cstr(struct strbuf *sb, const __u8 *p, size_t len, size_t max)
{
	const __u8 *end = p + (len < max ? len : max);

	sb_ch(sb, '"');
	while (p < end) {
		const __u8 *run = p;
		char esc[4] = { '\\', 'x' };

		while (p < end && !cstr_esc[*p])
			p++;
		sb_put(sb, (const char *)run, (size_t)(p - run));
		if (p == end)
			break;
		if (cstr_esc[*p] == 1) {
			memcpy(esc + 2, &libmm_xdigits2[2 * *p], 2);
			sb_put(sb, esc, 4);
		} else {
			esc[1] = cstr_esc[*p];
			sb_put(sb, esc, 2);
		}
		p++;
	}
	sb_ch(sb, '"');
	if (len > max)
		sb_lit(sb, "...");
}

static void sb_fd(struct strbuf *sb, const struct memmon_rec_syscall *sc,
		  __u64 fd, const struct memmon_format_opts *opts)
{
	const struct memmon_paths *paths = OPTS_GET(opts, paths, NULL);
	const char *path = NULL;

	sb_s64(sb, (__s32)fd);
	if (paths && sc->flags & MEMMON_SYSF_FILE)
		path = memmon_paths__lookup(paths, sc->aux[0], sc->aux[1]);
	if (path) {
		sb_ch(sb, '<');
		sb_str(sb, path);
		sb_ch(sb, '>');
	}
}

/* Which syscalls return an address (printed in hex) on success. */
static bool sys_returns_addr(__u32 sys)
{
	return sys == MEMMON_SYS_MMAP || sys == MEMMON_SYS_MMAP2 ||
	       sys == MEMMON_SYS_OLD_MMAP || sys == MEMMON_SYS_MREMAP ||
	       sys == MEMMON_SYS_BRK;
}

/* Page size of mmap2's offset unit (ia32: always 4 KiB). */
#define MMAP2_UNIT 4096ULL

/* "0x7f0000000000, 4096" (or "NULL, 4096"): the usual first two. */
static void sb_addr_len(struct strbuf *sb, __u64 addr, __u64 len)
{
	char tmp[W_HEX_MAX + 2 + W_U64_MAX], *s = sb_seg(sb, tmp, sizeof(tmp));
	char *p = addr ? w_0x(s, addr) : w_lit(s, "NULL");

	p = w_lit(p, ", ");
	sb_seg_end(sb, tmp, s, w_u64(p, len));
}

static void sb_syscall(struct strbuf *sb, const struct memmon_rec_syscall *sc,
		       const struct memmon_format_opts *opts)
{
	const __u64 *a = sc->args;
	const char *name = memmon_sys__name(sc->sys);
	char tmp[LIBMM_NAME_MAX + 8 + 10 + 1], *s = sb_seg(sb, tmp, sizeof(tmp)), *p;
	unsigned int i;

	if (name) {
		p = sb_seg_name_at(sb, tmp, sizeof(tmp), &s, s, memmon_sys_names,
				   ARRAY_SIZE(memmon_sys_names), sc->sys, name);
	} else {
		p = w_lit(s, "syscall_");
		p = w_u64(p, sc->sys);
	}
	*p++ = '(';
	sb_seg_end(sb, tmp, s, p);

	switch (sc->sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
		sb_addr_len(sb, a[0], a[1]);
		sb_lit(sb, ", ");
		libmm_sb_prot(sb, a[2]);
		sb_lit(sb, ", ");
		libmm_sb_mmap_flags(sb, a[3]);
		sb_lit(sb, ", ");
		sb_fd(sb, sc, a[4], opts);
		sb_lit(sb, ", ");
		sb_hex(sb, sc->sys == MEMMON_SYS_MMAP2 ? a[5] * MMAP2_UNIT : a[5]);
		break;
	case MEMMON_SYS_OLD_MMAP:
		sb_hex(sb, a[0]);
		break;
	case MEMMON_SYS_MUNMAP:
	case MEMMON_SYS_MLOCK:
	case MEMMON_SYS_MUNLOCK:
		sb_addr_len(sb, a[0], a[1]);
		break;
	case MEMMON_SYS_MLOCK2:
		sb_addr_len(sb, a[0], a[1]);
		sb_lit(sb, ", ");
		libmm_sb_mlock2_flags(sb, a[2]);
		break;
	case MEMMON_SYS_MREMAP:
		sb_addr_len(sb, a[0], a[1]);
		sb_lit(sb, ", ");
		sb_u64(sb, a[2]);
		sb_lit(sb, ", ");
		libmm_sb_mremap_flags(sb, a[3]);
		if (a[3] & 0x2) {	/* MREMAP_FIXED: new_address is used */
			sb_lit(sb, ", ");
			sb_addr(sb, a[4]);
		}
		break;
	case MEMMON_SYS_BRK:
		sb_addr(sb, a[0]);
		break;
	case MEMMON_SYS_MLOCKALL:
		libmm_sb_mlockall_flags(sb, a[0]);
		break;
	case MEMMON_SYS_MUNLOCKALL:
		break;
	case MEMMON_SYS_FSYNC:
		sb_s64(sb, (__s32)a[0]);
		break;
	case MEMMON_SYS_MADVISE:
		sb_addr_len(sb, a[0], a[1]);
		sb_lit(sb, ", ");
		libmm_sb_madvise(sb, a[2]);
		break;
	case MEMMON_SYS_MPROTECT:
		sb_addr_len(sb, a[0], a[1]);
		sb_lit(sb, ", ");
		libmm_sb_prot(sb, a[2]);
		break;
	default:
		for (i = 0; i < 6; i++) {
			if (i)
				sb_lit(sb, ", ");
			sb_hex(sb, a[i]);
		}
	}
	sb_lit(sb, ") = ");
	if (sc->ret < 0 && sc->ret >= -4095) {
		int e = (int)-sc->ret;
		const char *en = memmon_errno__name(e);
		const char *ed = memmon_errno__desc(e);

		if (en) {
			sb_lit(sb, "-1 ");
			sb_str(sb, en);
			sb_lit(sb, " (");
			sb_str(sb, ed ? ed : "?");
			sb_ch(sb, ')');
		} else {
			sb_lit(sb, "-1 errno ");
			sb_s64(sb, e);
		}
	} else if (sys_returns_addr(sc->sys)) {
		sb_hex(sb, (__u64)sc->ret);
	} else {
		sb_s64(sb, sc->ret);
	}
	if (sc->flags & MEMMON_SYSF_COMPAT)
		sb_lit(sb, " [ia32]");
	sb_duration(sb, sc->duration_ns);
}

/*
 * "fault 0x7f12345000 ip=0x401000 write anon minor handled newpage
 * pfn=0x1234 <0.000003>": one segment.
 */
#define FAULT_MAX	(6 + W_HEX_MAX + 4 + W_HEX_MAX + 1 + LIBMM_ACCESS_MAX + 1 + \
			 LIBMM_NAME_MAX + 7 + LIBMM_NAME_MAX + 7 + 8 + 5 + W_HEX_MAX + \
			 W_DURATION_MAX)

static void sb_fault(struct strbuf *sb, const struct memmon_rec_fault *f)
{
	const char *cls = memmon_fault_class__name(f->fclass);
	const char *res = memmon_fault_result__name(f->result);
	char tmp[FAULT_MAX], *s = sb_seg(sb, tmp, sizeof(tmp)), *p;

	p = w_lit(s, "fault ");
	p = w_hex(p, f->addr);
	p = w_lit(p, " ip=");
	p = w_hex(p, f->ip);
	*p++ = ' ';
	p = w_fault_access(p, f->access);
	*p++ = ' ';
	if (cls) {
		p = sb_seg_name_at(sb, tmp, sizeof(tmp), &s, p, memmon_fclass_names,
				   ARRAY_SIZE(memmon_fclass_names), f->fclass, cls);
	} else {
		p = w_lit(p, "class");
		p = w_u64(p, f->fclass);
	}
	if (f->flags & MEMMON_FAULTF_MAJOR)
		p = w_lit(p, " major ");
	else
		p = w_lit(p, " minor ");
	if (res) {
		p = sb_seg_name_at(sb, tmp, sizeof(tmp), &s, p, memmon_fresult_names,
				   ARRAY_SIZE(memmon_fresult_names), f->result, res);
	} else {
		p = w_lit(p, "result");
		p = w_u64(p, f->result);
	}
	if (f->flags & MEMMON_FAULTF_KERNEL)
		p = w_lit(p, " kernel");
	if (f->flags & MEMMON_FAULTF_NEWPAGE)
		p = w_lit(p, " newpage");
	if (f->flags & MEMMON_FAULTF_PFN) {
		p = w_lit(p, " pfn=");
		p = w_hex(p, f->pfn);
	}
	sb_seg_end(sb, tmp, s, w_duration(p, f->duration_ns));
}

/* "rss anon=1 file=2 shmem=3 swap=4" */
#define RSS_MAX		(9 + 6 + 7 + 6 + 4 * W_U64_MAX)

static void sb_rss(struct strbuf *sb, const struct memmon_rec_rss *r)
{
	char tmp[RSS_MAX], *s = sb_seg(sb, tmp, sizeof(tmp)), *p;

	p = w_lit(s, "rss anon=");
	p = w_u64(p, r->anon);
	p = w_lit(p, " file=");
	p = w_u64(p, r->file);
	p = w_lit(p, " shmem=");
	p = w_u64(p, r->shmem);
	p = w_lit(p, " swap=");
	sb_seg_end(sb, tmp, s, w_u64(p, r->swap));
}

static int sb_record(struct strbuf *sb, const struct memmon_rec_header *rec,
		     const struct memmon_format_opts *opts)
{
	switch (rec->type) {
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);

		if (!sc)
			return -EBADMSG;
		sb_syscall(sb, sc, opts);
		return 0;
	}
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f = memmon_rec__fault(rec);

		if (!f)
			return -EBADMSG;
		sb_fault(sb, f);
		return 0;
	}
	case MEMMON_REC_LOST: {
		const struct memmon_rec_lost *l = memmon_rec__lost(rec);

		if (!l)
			return -EBADMSG;
		sb_lit(sb, "lost ");
		sb_u64(sb, l->count);
		sb_lit(sb, " events");
		if (l->count && l->first_ns) {
			/* in the same clock as the line's own time */
			sb_lit(sb, " (");
			sb_time(sb, l->first_ns, opts);
			sb_lit(sb, "..");
			sb_time(sb, l->last_ns, opts);
			sb_ch(sb, ')');
		}
		return 0;
	}
	case MEMMON_REC_MARK: {
		const struct memmon_rec_mark *m = memmon_rec__mark(rec);

		if (!m)
			return -EBADMSG;
		sb_lit(sb, "mark ");
		sb_cstr(sb, m->data, m->len, MEMMON_MARK_MAX);
		return 0;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r = memmon_rec__rss(rec);

		if (!r)
			return -EBADMSG;
		sb_rss(sb, r);
		return 0;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = memmon_rec__fork(rec);

		if (!f)
			return -EBADMSG;
		if (f->flags & MEMMON_FORKF_THREAD)
			sb_lit(sb, "clone_thread ");
		else
			sb_lit(sb, "fork ");
		sb_u64(sb, f->child_tgid);
		sb_ch(sb, '/');
		sb_u64(sb, f->child_tid);
		if ((f->flags & MEMMON_FORKF_VM) && !(f->flags & MEMMON_FORKF_THREAD))
			sb_lit(sb, " shared_vm");
		return 0;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = memmon_rec__exec(rec);

		if (!e)
			return -EBADMSG;
		sb_lit(sb, "exec ");
		sb_cstr(sb, (const __u8 *)e->path, e->path_len, 4096);
		return 0;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x = memmon_rec__exit(rec);

		if (!x)
			return -EBADMSG;
		/* Still alive, but no longer ours to watch (uapi). */
		if (x->flags & MEMMON_EXITF_REVOKED) {
			sb_lit(sb, "exit revoked (privileged exec or not dumpable)");
			return 0;
		}
		sb_lit(sb, "exit ");
		libmm_sb_wait_status(sb, x->code);
		if (x->flags & MEMMON_EXITF_GROUP) {
			sb_lit(sb, " group peak_rss=");
			sb_u64(sb, x->peak_rss);
			sb_lit(sb, " peak_vm=");
			sb_u64(sb, x->peak_vm);
		}
		return 0;
	}
	case MEMMON_REC_PATH: {
		const struct memmon_rec_path *p = memmon_rec__path(rec);

		if (!p)
			return -EBADMSG;
		sb_lit(sb, "path dev=");
		sb_u64(sb, (p->dev >> 20) & 0xfff);
		sb_ch(sb, ':');
		sb_u64(sb, p->dev & 0xfffff);
		sb_lit(sb, " ino=");
		sb_u64(sb, p->ino);
		sb_ch(sb, ' ');
		sb_cstr(sb, (const __u8 *)p->path, p->path_len, 4096);
		return 0;
	}
	case MEMMON_REC_COMM: {
		const struct memmon_rec_comm *c = memmon_rec__comm(rec);
		const char *why;

		if (!c)
			return -EBADMSG;
		/* "comm rename worker-1": the name escaped as a mark's data. */
		why = LIBMM_NAME_AT(memmon_comm_why_names, c->why);
		sb_lit(sb, "comm ");
		if (why)
			sb_str(sb, why);
		else
			sb_u64(sb, c->why);
		sb_ch(sb, ' ');
		sb_cstr(sb, (const __u8 *)c->comm, strlen(c->comm),
			MEMMON_COMM_LEN);
		return 0;
	}
	case MEMMON_REC_AUXV: {
		const struct memmon_rec_auxv *a = memmon_rec__auxv(rec);

		if (!a)
			return -EBADMSG;
		sb_lit(sb, "auxv phdr=");
		sb_hex(sb, a->phdr);
		sb_lit(sb, " phnum=");
		sb_u64(sb, a->phnum);
		sb_lit(sb, " entry=");
		sb_hex(sb, a->entry);
		sb_lit(sb, " base=");
		sb_hex(sb, a->base);
		sb_lit(sb, " vdso=");
		sb_hex(sb, a->vdso);
		return 0;
	}
	default:
		return -ENOMSG;
	}
}

/* "12:00:00.123456 [cpu1] 1234/1235 " */
#define HEAD_MAX	(W_TIME_MAX + 1 + 4 + 5 + 2 + 10 + 1 + 10 + 1)

int memmon_rec__format(const struct memmon_rec_header *rec, char *buf,
		       size_t size, const struct memmon_format_opts *opts)
{
	__u32 flags = OPTS_GET(opts, flags, 0);
	char tmp[HEAD_MAX], *s, *p;
	struct strbuf sb;
	int err;

	if (!rec || format_opts_check(opts))
		return libmm_err(-EINVAL);
	sb_init(&sb, buf, size);
	if (!memmon_rec_type__name(rec->type)) {
		sb_finish(&sb);
		return 0;
	}
	s = sb_seg(&sb, tmp, sizeof(tmp));
	p = s;
	if (!(flags & MEMMON_FMT_NO_TIME)) {
		p = w_time(p, rec->time_ns, flags, OPTS_GET(opts, realtime_offset_ns, 0));
		*p++ = ' ';
	}
	if (!(flags & MEMMON_FMT_NO_CPU)) {
		p = w_lit(p, "[cpu");
		p = w_u64(p, rec->cpu);
		p = w_lit(p, "] ");
	}
	if (rec->type != MEMMON_REC_LOST) {
		p = w_u64(p, rec->tgid);
		*p++ = '/';
		p = w_u64(p, rec->tid);
		*p++ = ' ';
	}
	sb_seg_end(&sb, tmp, s, p);
	err = sb_record(&sb, rec, opts);
	sb_finish(&sb);
	if (err)
		return libmm_err(err);
	return sb_ret(&sb);
}

int memmon_rec__fprint(FILE *f, const struct memmon_rec_header *rec,
		       const struct memmon_format_opts *opts)
{
	char stack[1024], *buf = stack;
	int n, ret;

	n = memmon_rec__format(rec, buf, sizeof(stack), opts);
	if (n <= 0)
		return n;
	if ((size_t)n >= sizeof(stack)) {
		buf = malloc((size_t)n + 1);
		if (!buf)
			return libmm_err(-ENOMEM);
		memmon_rec__format(rec, buf, (size_t)n + 1, opts);
	}
	/* the line and its newline in one write */
	buf[n] = '\n';
	errno = 0;
	ret = fwrite(buf, 1, (size_t)n + 1, f) != (size_t)n + 1 || ferror(f) ?
	      (errno ? -errno : -EIO) : n + 1;
	if (buf != stack)
		free(buf);
	return libmm_err(ret);
}
