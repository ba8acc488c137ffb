// SPDX-License-Identifier: GPL-2.0
/*
 * The reference for test_lib_format: libmemmon's flag decoders, text and
 * JSON formatters as they were written on vsnprintf() and jansson (8688e42),
 * renamed ref_*. They are the specification of the bytes the library's
 * hand-written formatters must produce: not to be fixed or restyled. A
 * deliberate change of the output changes both, in the same commit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/wait.h>
#include <jansson.h>
#include "internal.h"
#include "ref_format.h"

/* ------------------------------------------------------------------ */
/* Flag decoders */

struct flag_name {
	__u64 val;
	const char *name;
};

/* A growing text in a caller's buffer, snprintf semantics. */
struct strbuf {
	char *buf;
	size_t size;
	size_t len;		/* length the full text needs */
};

static void sb_init(struct strbuf *sb, char *buf, size_t size)
{
	sb->buf = buf;
	sb->size = buf ? size : 0;
	sb->len = 0;
	if (sb->size)
		buf[0] = '\0';
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	size_t room = sb->len < sb->size ? sb->size - sb->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->len += (size_t)n;
}

static int sb_ret(const struct strbuf *sb)
{
	return sb->len > INT32_MAX ? INT32_MAX : (int)sb->len;
}

/* OR of names from tbl; unknown bits as |0x...; zero as zero_name. */
static void sb_flags(struct strbuf *sb, const struct flag_name *tbl, size_t n,
		     __u64 v, const char *zero_name)
{
	bool first = true;
	size_t i;

	if (!v) {
		sb_printf(sb, "%s", zero_name ? zero_name : "0");
		return;
	}
	for (i = 0; i < n; i++) {
		if (tbl[i].val && (v & tbl[i].val) == tbl[i].val) {
			sb_printf(sb, "%s%s", first ? "" : "|", tbl[i].name);
			v &= ~tbl[i].val;
			first = false;
		}
	}
	if (v)
		sb_printf(sb, "%s%#llx", first ? "" : "|", (unsigned long long)v);
}

static const char *value_name(const struct flag_name *tbl, size_t n, __u64 v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tbl[i].val == v)
			return tbl[i].name;
	return NULL;
}

#define FLAG(x, v) { v, #x }

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

static const struct flag_name fault_access[] = {
	FLAG(read, MEMMON_FAULT_READ),
	FLAG(write, MEMMON_FAULT_WRITE),
	FLAG(exec, MEMMON_FAULT_EXEC),
};

int ref_prot__format(char *buf, size_t size, __u64 prot)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_flags(&sb, prot_flags, ARRAY_SIZE(prot_flags), prot, "PROT_NONE");
	return sb_ret(&sb);
}

static void sb_mmap_flags(struct strbuf *sb, __u64 flags)
{
	const char *type = value_name(map_types, ARRAY_SIZE(map_types),
				      flags & LIBMM_MAP_TYPE);
	__u64 rest = flags & ~(__u64)LIBMM_MAP_TYPE;
	__u64 huge = 0;

	if (type)
		sb_printf(sb, "%s", type);
	else
		sb_printf(sb, "%#llx", (unsigned long long)(flags & LIBMM_MAP_TYPE));
	if (rest & 0x40000) {	/* MAP_HUGETLB: a size may follow */
		huge = (rest >> LIBMM_MAP_HUGE_SHIFT) & LIBMM_MAP_HUGE_MASK;
		rest &= ~(LIBMM_MAP_HUGE_MASK << LIBMM_MAP_HUGE_SHIFT);
	}
	if (rest) {
		sb_printf(sb, "|");
		sb_flags(sb, map_flags, ARRAY_SIZE(map_flags), rest, NULL);
	}
	if (huge)
		sb_printf(sb, "|%llu<<MAP_HUGE_SHIFT", (unsigned long long)huge);
}

int ref_mmap_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_mmap_flags(&sb, flags);
	return sb_ret(&sb);
}

int ref_mremap_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_flags(&sb, mremap_flags, ARRAY_SIZE(mremap_flags), flags, "0");
	return sb_ret(&sb);
}

static void sb_madvise(struct strbuf *sb, __u64 advice)
{
	const char *n = value_name(madv_values, ARRAY_SIZE(madv_values), advice);

	if (n)
		sb_printf(sb, "%s", n);
	else
		sb_printf(sb, "%#llx /* MADV_??? */", (unsigned long long)advice);
}

int ref_madvise__format(char *buf, size_t size, __u64 advice)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_madvise(&sb, advice);
	return sb_ret(&sb);
}

int ref_mlockall_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_flags(&sb, mcl_flags, ARRAY_SIZE(mcl_flags), flags, "0");
	return sb_ret(&sb);
}

int ref_mlock2_flags__format(char *buf, size_t size, __u64 flags)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_flags(&sb, mlock2_flags, ARRAY_SIZE(mlock2_flags), flags, "0");
	return sb_ret(&sb);
}

int ref_fault_access__format(char *buf, size_t size, __u32 access)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_flags(&sb, fault_access, ARRAY_SIZE(fault_access), access, "none");
	return sb_ret(&sb);
}

static void sb_wait_status(struct strbuf *sb, __u32 st)
{
	if (WIFEXITED(st)) {
		sb_printf(sb, "exited %d", WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		const char *abbr = sigabbrev_np(WTERMSIG(st));

		if (abbr)
			sb_printf(sb, "killed by SIG%s", abbr);
		else
			sb_printf(sb, "killed by signal %d", WTERMSIG(st));
		if (WCOREDUMP(st))
			sb_printf(sb, " (core dumped)");
	} else {
		sb_printf(sb, "status %#x", st);
	}
}

int ref_wait_status__format(char *buf, size_t size, __u32 status)
{
	struct strbuf sb;

	sb_init(&sb, buf, size);
	sb_wait_status(&sb, status);
	return sb_ret(&sb);
}

/* ------------------------------------------------------------------ */
/* Text */

static int format_opts_check(const struct memmon_format_opts *opts)
{
	if (!OPTS_VALID(opts, memmon_format_opts))
		return -EINVAL;
	return 0;
}

/* "12:00:00.123456" (wall clock) or "12345.678901" (monotonic). */
static void sb_time(struct strbuf *sb, __u64 time_ns,
		    const struct memmon_format_opts *opts)
{
	__u32 flags = OPTS_GET(opts, flags, 0);
	__s64 off = OPTS_GET(opts, realtime_offset_ns, 0);
	__s64 t;
	time_t sec;
	struct tm tm;

	if (flags & MEMMON_FMT_MONOTONIC || !off) {
		sb_printf(sb, "%llu.%06llu", (unsigned long long)(time_ns / 1000000000),
			  (unsigned long long)(time_ns % 1000000000 / 1000));
		return;
	}
	t = (__s64)time_ns + off;
	if (t < 0)
		t = 0;
	sec = (time_t)(t / 1000000000);
	if (flags & MEMMON_FMT_UTC)
		gmtime_r(&sec, &tm);
	else
		localtime_r(&sec, &tm);
	sb_printf(sb, "%02d:%02d:%02d.%06lld", tm.tm_hour, tm.tm_min, tm.tm_sec,
		  (long long)(t % 1000000000 / 1000));
}

static void sb_duration(struct strbuf *sb, __u64 ns)
{
	sb_printf(sb, " <%llu.%06llu>", (unsigned long long)(ns / 1000000000),
		  (unsigned long long)(ns % 1000000000 / 1000));
}

static void sb_addr(struct strbuf *sb, __u64 a)
{
	if (a)
		sb_printf(sb, "%#llx", (unsigned long long)a);
	else
		sb_printf(sb, "NULL");
}

/* Bytes as a C string literal, strace style; at most max shown. */
static void sb_cstr(struct strbuf *sb, const __u8 *p, size_t len, size_t max)
{
	size_t i;

	sb_printf(sb, "\"");
	for (i = 0; i < len && i < max; i++) {
		__u8 c = p[i];

		switch (c) {
		case '"':
			sb_printf(sb, "\\\"");
			break;
		case '\\':
			sb_printf(sb, "\\\\");
			break;
		case '\n':
			sb_printf(sb, "\\n");
			break;
		case '\t':
			sb_printf(sb, "\\t");
			break;
		case '\r':
			sb_printf(sb, "\\r");
			break;
		default:
			if (c < 0x20 || c >= 0x7f)
				sb_printf(sb, "\\x%02x", c);
			else
				sb_printf(sb, "%c", c);
		}
	}
	sb_printf(sb, "\"%s", len > max ? "..." : "");
}

static void sb_fd(struct strbuf *sb, const struct memmon_rec_syscall *sc,
		  __u64 fd, const struct memmon_format_opts *opts)
{
	const struct memmon_paths *paths = OPTS_GET(opts, paths, NULL);
	const char *path = NULL;

	sb_printf(sb, "%d", (int)(__s32)fd);
	if (paths && sc->flags & MEMMON_SYSF_FILE)
		path = memmon_paths__lookup(paths, sc->aux[0], sc->aux[1]);
	if (path)
		sb_printf(sb, "<%s>", path);
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

static void sb_syscall(struct strbuf *sb, const struct memmon_rec_syscall *sc,
		       const struct memmon_format_opts *opts)
{
	const __u64 *a = sc->args;
	const char *name = memmon_sys__name(sc->sys);

	if (name)
		sb_printf(sb, "%s(", name);
	else
		sb_printf(sb, "syscall_%u(", sc->sys);

	switch (sc->sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
		sb_addr(sb, a[0]);
		sb_printf(sb, ", %llu, ", (unsigned long long)a[1]);
		sb_flags(sb, prot_flags, ARRAY_SIZE(prot_flags), a[2], "PROT_NONE");
		sb_printf(sb, ", ");
		sb_mmap_flags(sb, a[3]);
		sb_printf(sb, ", ");
		sb_fd(sb, sc, a[4], opts);
		sb_printf(sb, ", %#llx", (unsigned long long)(sc->sys == MEMMON_SYS_MMAP2 ?
					 a[5] * MMAP2_UNIT : a[5]));
		break;
	case MEMMON_SYS_OLD_MMAP:
		sb_printf(sb, "%#llx", (unsigned long long)a[0]);
		break;
	case MEMMON_SYS_MUNMAP:
	case MEMMON_SYS_MLOCK:
	case MEMMON_SYS_MUNLOCK:
		sb_addr(sb, a[0]);
		sb_printf(sb, ", %llu", (unsigned long long)a[1]);
		break;
	case MEMMON_SYS_MLOCK2:
		sb_addr(sb, a[0]);
		sb_printf(sb, ", %llu, ", (unsigned long long)a[1]);
		sb_flags(sb, mlock2_flags, ARRAY_SIZE(mlock2_flags), a[2], "0");
		break;
	case MEMMON_SYS_MREMAP:
		sb_addr(sb, a[0]);
		sb_printf(sb, ", %llu, %llu, ", (unsigned long long)a[1],
			  (unsigned long long)a[2]);
		sb_flags(sb, mremap_flags, ARRAY_SIZE(mremap_flags), a[3], "0");
		if (a[3] & 0x2) {	/* MREMAP_FIXED: new_address is used */
			sb_printf(sb, ", ");
			sb_addr(sb, a[4]);
		}
		break;
	case MEMMON_SYS_BRK:
		sb_addr(sb, a[0]);
		break;
	case MEMMON_SYS_MLOCKALL:
		sb_flags(sb, mcl_flags, ARRAY_SIZE(mcl_flags), a[0], "0");
		break;
	case MEMMON_SYS_MUNLOCKALL:
		break;
	case MEMMON_SYS_FSYNC:
		sb_printf(sb, "%d", (int)(__s32)a[0]);
		break;
	case MEMMON_SYS_MADVISE:
		sb_addr(sb, a[0]);
		sb_printf(sb, ", %llu, ", (unsigned long long)a[1]);
		sb_madvise(sb, a[2]);
		break;
	case MEMMON_SYS_MPROTECT:
		sb_addr(sb, a[0]);
		sb_printf(sb, ", %llu, ", (unsigned long long)a[1]);
		sb_flags(sb, prot_flags, ARRAY_SIZE(prot_flags), a[2], "PROT_NONE");
		break;
	default:
		sb_printf(sb, "%#llx, %#llx, %#llx, %#llx, %#llx, %#llx",
			  (unsigned long long)a[0], (unsigned long long)a[1],
			  (unsigned long long)a[2], (unsigned long long)a[3],
			  (unsigned long long)a[4], (unsigned long long)a[5]);
	}
	sb_printf(sb, ") = ");
	if (sc->ret < 0 && sc->ret >= -4095) {
		int e = (int)-sc->ret;
		const char *en = memmon_errno__name(e);
		const char *ed = memmon_errno__desc(e);

		if (en)
			sb_printf(sb, "-1 %s (%s)", en, ed ? ed : "?");
		else
			sb_printf(sb, "-1 errno %d", e);
	} else if (sys_returns_addr(sc->sys)) {
		sb_printf(sb, "%#llx", (unsigned long long)sc->ret);
	} else {
		sb_printf(sb, "%lld", (long long)sc->ret);
	}
	if (sc->flags & MEMMON_SYSF_COMPAT)
		sb_printf(sb, " [ia32]");
	sb_duration(sb, sc->duration_ns);
}

static void sb_fault(struct strbuf *sb, const struct memmon_rec_fault *f)
{
	const char *cls = memmon_fault_class__name(f->fclass);
	const char *res = memmon_fault_result__name(f->result);

	sb_printf(sb, "fault %#llx ip=%#llx ", (unsigned long long)f->addr,
		  (unsigned long long)f->ip);
	sb_flags(sb, fault_access, ARRAY_SIZE(fault_access), f->access, "none");
	if (cls)
		sb_printf(sb, " %s", cls);
	else
		sb_printf(sb, " class%u", f->fclass);
	sb_printf(sb, " %s", f->flags & MEMMON_FAULTF_MAJOR ? "major" : "minor");
	if (res)
		sb_printf(sb, " %s", res);
	else
		sb_printf(sb, " result%u", f->result);
	if (f->flags & MEMMON_FAULTF_KERNEL)
		sb_printf(sb, " kernel");
	if (f->flags & MEMMON_FAULTF_NEWPAGE)
		sb_printf(sb, " newpage");
	if (f->flags & MEMMON_FAULTF_PFN)
		sb_printf(sb, " pfn=%#llx", (unsigned long long)f->pfn);
	sb_duration(sb, f->duration_ns);
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
		sb_printf(sb, "lost %llu events", (unsigned long long)l->count);
		if (l->count && l->first_ns) {
			/* in the same clock as the line's own time */
			sb_printf(sb, " (");
			sb_time(sb, l->first_ns, opts);
			sb_printf(sb, "..");
			sb_time(sb, l->last_ns, opts);
			sb_printf(sb, ")");
		}
		return 0;
	}
	case MEMMON_REC_MARK: {
		const struct memmon_rec_mark *m = memmon_rec__mark(rec);

		if (!m)
			return -EBADMSG;
		sb_printf(sb, "mark ");
		sb_cstr(sb, m->data, m->len, MEMMON_MARK_MAX);
		return 0;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r = memmon_rec__rss(rec);

		if (!r)
			return -EBADMSG;
		sb_printf(sb, "rss anon=%llu file=%llu shmem=%llu swap=%llu",
			  (unsigned long long)r->anon, (unsigned long long)r->file,
			  (unsigned long long)r->shmem, (unsigned long long)r->swap);
		return 0;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = memmon_rec__fork(rec);

		if (!f)
			return -EBADMSG;
		sb_printf(sb, "%s %u/%u",
			  f->flags & MEMMON_FORKF_THREAD ? "clone_thread" : "fork",
			  f->child_tgid, f->child_tid);
		if ((f->flags & MEMMON_FORKF_VM) && !(f->flags & MEMMON_FORKF_THREAD))
			sb_printf(sb, " shared_vm");
		return 0;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = memmon_rec__exec(rec);

		if (!e)
			return -EBADMSG;
		sb_printf(sb, "exec ");
		sb_cstr(sb, (const __u8 *)e->path, e->path_len, 4096);
		return 0;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x = memmon_rec__exit(rec);

		if (!x)
			return -EBADMSG;
		/* Still alive, but no longer ours to watch (uapi). */
		if (x->flags & MEMMON_EXITF_REVOKED) {
			sb_printf(sb, "exit revoked (privileged exec or not dumpable)");
			return 0;
		}
		sb_printf(sb, "exit ");
		sb_wait_status(sb, x->code);
		if (x->flags & MEMMON_EXITF_GROUP)
			sb_printf(sb, " group peak_rss=%llu peak_vm=%llu",
				  (unsigned long long)x->peak_rss,
				  (unsigned long long)x->peak_vm);
		return 0;
	}
	case MEMMON_REC_PATH: {
		const struct memmon_rec_path *p = memmon_rec__path(rec);

		if (!p)
			return -EBADMSG;
		sb_printf(sb, "path dev=%u:%u ino=%llu ",
			  (unsigned int)((p->dev >> 20) & 0xfff),
			  (unsigned int)(p->dev & 0xfffff),
			  (unsigned long long)p->ino);
		sb_cstr(sb, (const __u8 *)p->path, p->path_len, 4096);
		return 0;
	}
	default:
		return -ENOMSG;
	}
}

int ref_rec__format(const struct memmon_rec_header *rec, char *buf,
		       size_t size, const struct memmon_format_opts *opts)
{
	__u32 flags = OPTS_GET(opts, flags, 0);
	struct strbuf sb;
	int err;

	if (!rec || format_opts_check(opts))
		return libmm_err(-EINVAL);
	sb_init(&sb, buf, size);
	if (!memmon_rec_type__name(rec->type))
		return 0;
	if (!(flags & MEMMON_FMT_NO_TIME)) {
		sb_time(&sb, rec->time_ns, opts);
		sb_printf(&sb, " ");
	}
	if (!(flags & MEMMON_FMT_NO_CPU))
		sb_printf(&sb, "[cpu%u] ", rec->cpu);
	if (rec->type != MEMMON_REC_LOST)
		sb_printf(&sb, "%u/%u ", rec->tgid, rec->tid);
	err = sb_record(&sb, rec, opts);
	if (err == -ENOMSG) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	if (err)
		return libmm_err(err);
	return sb_ret(&sb);
}

int ref_rec__fprint(FILE *f, const struct memmon_rec_header *rec,
		       const struct memmon_format_opts *opts)
{
	char stack[1024], *buf = stack;
	int n, ret;

	n = ref_rec__format(rec, buf, sizeof(stack), opts);
	if (n <= 0)
		return n;
	if ((size_t)n >= sizeof(stack)) {
		buf = malloc((size_t)n + 1);
		if (!buf)
			return libmm_err(-ENOMEM);
		ref_rec__format(rec, buf, (size_t)n + 1, opts);
	}
	errno = 0;
	ret = fprintf(f, "%s\n", buf) < 0 || ferror(f) ? (errno ? -errno : -EIO) : n + 1;
	if (buf != stack)
		free(buf);
	return libmm_err(ret);
}

/* ------------------------------------------------------------------ */
/* JSON (libmemmon/json.c) */

typedef int (*flags_fmt_fn)(char *buf, size_t size, __u64 v);

static int set(json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set_new(o, key, v))
		return -ENOMEM;
	return 0;
}

static int set_hex(json_t *o, const char *key, __u64 v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)v);
	if (!v)
		strcpy(buf, "0x0");
	return set(o, key, json_string(buf));
}

static int set_u64(json_t *o, const char *key, __u64 v)
{
	/* json_int_t is signed 64-bit: beyond it, keep the bits as hex. */
	if (v > (__u64)INT64_MAX)
		return set_hex(o, key, v);
	return set(o, key, json_integer((json_int_t)v));
}

static int set_flags(json_t *o, const char *key, flags_fmt_fn fn, __u64 v)
{
	char buf[512];

	fn(buf, sizeof(buf), v);
	return set(o, key, json_string(buf));
}

/* Bytes that are not valid UTF-8, and NUL, become "\xNN" text, so the line is JSON. */
static json_t *bytes_string(const void *p, size_t len)
{
	const __u8 *b = p;
	json_t *s;
	char *tmp;
	size_t i, j = 0;

	/* NUL is legal JSON (\u0000) but breaks C readers: escape it too. */
	if (!memchr(p, 0, len)) {
		s = json_stringn(p, len);
		if (s)
			return s;
	}
	tmp = malloc(len * 4 + 1);
	if (!tmp)
		return NULL;
	for (i = 0; i < len; i++) {
		if (b[i] >= 0x80 || !b[i])
			j += (size_t)sprintf(tmp + j, "\\x%02x", b[i]);
		else
			tmp[j++] = (char)b[i];
	}
	s = json_stringn(tmp, j);
	free(tmp);
	return s;
}

static int fmt_mlock2(char *b, size_t n, __u64 v)
{
	return ref_mlock2_flags__format(b, n, v);
}

static int json_syscall(json_t *o, const struct memmon_rec_syscall *sc,
			const struct memmon_format_opts *opts)
{
	const struct memmon_paths *paths = OPTS_GET(opts, paths, NULL);
	const __u64 *a = sc->args;
	const char *name = memmon_sys__name(sc->sys);
	json_t *args = json_object();
	int err = 0;

	if (!args)
		return -ENOMEM;
	if (name)
		err |= set(o, "name", json_string(name));
	else
		err |= set(o, "sys", json_integer(sc->sys));
	switch (sc->sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "prot", ref_prot__format, a[2]);
		err |= set_flags(args, "flags", ref_mmap_flags__format, a[3]);
		err |= set(args, "fd", json_integer((__s32)a[4]));
		err |= set_u64(args, "offset", sc->sys == MEMMON_SYS_MMAP2 ?
			       a[5] * 4096 : a[5]);
		break;
	case MEMMON_SYS_MUNMAP:
	case MEMMON_SYS_MLOCK:
	case MEMMON_SYS_MUNLOCK:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		break;
	case MEMMON_SYS_MLOCK2:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "flags", fmt_mlock2, a[2]);
		break;
	case MEMMON_SYS_MREMAP:
		err |= set_hex(args, "old_addr", a[0]);
		err |= set_u64(args, "old_len", a[1]);
		err |= set_u64(args, "new_len", a[2]);
		err |= set_flags(args, "flags", ref_mremap_flags__format, a[3]);
		err |= set_hex(args, "new_addr", a[4]);
		break;
	case MEMMON_SYS_BRK:
		err |= set_hex(args, "brk", a[0]);
		err |= set_hex(o, "brk_before", sc->aux[0]);
		err |= set_hex(o, "brk_after", sc->aux[1]);
		break;
	case MEMMON_SYS_MLOCKALL:
		err |= set_flags(args, "flags", ref_mlockall_flags__format, a[0]);
		break;
	case MEMMON_SYS_FSYNC:
		err |= set(args, "fd", json_integer((__s32)a[0]));
		break;
	case MEMMON_SYS_MADVISE:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "advice", ref_madvise__format, a[2]);
		break;
	case MEMMON_SYS_MPROTECT:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "prot", ref_prot__format, a[2]);
		break;
	case MEMMON_SYS_MUNLOCKALL:
		break;
	default: {
		json_t *raw = json_array();
		int i;

		for (i = 0; raw && i < 6; i++)
			if (json_array_append_new(raw, json_integer((json_int_t)a[i])))
				err = -ENOMEM;
		err |= set(args, "raw", raw);
	}
	}
	err |= set(o, "args", args);
	err |= set(o, "ret", json_integer(sc->ret));
	if (sc->ret < 0 && sc->ret >= -4095) {
		const char *en = memmon_errno__name((int)-sc->ret);

		if (en)
			err |= set(o, "errno", json_string(en));
	}
	err |= set_u64(o, "duration_ns", sc->duration_ns);
	if (sc->flags & MEMMON_SYSF_COMPAT)
		err |= set(o, "compat", json_true());
	if (sc->flags & MEMMON_SYSF_FILE) {
		const char *path = memmon_paths__lookup(paths, sc->aux[0], sc->aux[1]);

		err |= set_u64(o, "dev", sc->aux[0]);
		err |= set_u64(o, "ino", sc->aux[1]);
		if (path)
			err |= set(o, "path", bytes_string(path, strlen(path)));
	}
	return err ? -ENOMEM : 0;
}

static int json_fault(json_t *o, const struct memmon_rec_fault *f)
{
	const char *cls = memmon_fault_class__name(f->fclass);
	const char *res = memmon_fault_result__name(f->result);
	char buf[64];
	int err = 0;

	err |= set_hex(o, "addr", f->addr);
	err |= set_hex(o, "ip", f->ip);
	ref_fault_access__format(buf, sizeof(buf), f->access);
	err |= set(o, "access", json_string(buf));
	err |= set(o, "class", cls ? json_string(cls) : json_integer(f->fclass));
	err |= set(o, "major", json_boolean(f->flags & MEMMON_FAULTF_MAJOR));
	err |= set(o, "result", res ? json_string(res) : json_integer(f->result));
	if (f->flags & MEMMON_FAULTF_KERNEL)
		err |= set(o, "kernel", json_true());
	if (f->flags & MEMMON_FAULTF_NEWPAGE)
		err |= set(o, "newpage", json_true());
	if (f->flags & MEMMON_FAULTF_PFN)
		err |= set_hex(o, "pfn", f->pfn);
	err |= set_u64(o, "duration_ns", f->duration_ns);
	return err ? -ENOMEM : 0;
}

/*
 * The user stack after a syscall or fault record's fixed part (ABI 1.5):
 * "ustack" when the flag says so, -EBADMSG when it does not fit.
 */
static int json_ustack(json_t *o, const struct memmon_rec_header *rec,
		       size_t fixed, bool flagged)
{
	const struct memmon_user_stack *st;
	json_t *u, *ips;
	char buf[24];
	int err = 0;
	__u16 i;

	if (!flagged)
		return 0;
	if (rec->size < fixed + sizeof(*st))
		return -EBADMSG;
	st = (const void *)((const __u8 *)rec + fixed);
	if ((rec->size - fixed - sizeof(*st)) / 8 < st->nr)
		return -EBADMSG;
	u = json_object();
	ips = json_array();
	for (i = 0; i < st->nr; i++) {
		snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)st->ip[i]);
		if (!st->ip[i])
			strcpy(buf, "0x0");
		err |= json_array_append_new(ips, json_string(buf));
	}
	err |= set(u, "ips", ips);
	err |= set(u, "sp", json_boolean(st->flags & MEMMON_USTACK_SP));
	err |= set(u, "truncated", json_boolean(st->flags & MEMMON_USTACK_TRUNCATED));
	err |= set(u, "compat", json_boolean(st->flags & MEMMON_USTACK_COMPAT));
	err |= set(o, "ustack", u);
	return err ? -ENOMEM : 0;
}

static int json_body(json_t *o, const struct memmon_rec_header *rec,
		     const struct memmon_format_opts *opts)
{
	int err = 0;

	switch (rec->type) {
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);

		if (!sc)
			return -EBADMSG;
		err = json_syscall(o, sc, opts);
		return err ? err : json_ustack(o, rec, sizeof(*sc),
					       sc->flags & MEMMON_SYSF_USTACK);
	}
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f = memmon_rec__fault(rec);

		if (!f)
			return -EBADMSG;
		err = json_fault(o, f);
		return err ? err : json_ustack(o, rec, sizeof(*f),
					       f->flags & MEMMON_FAULTF_USTACK);
	}
	case MEMMON_REC_LOST: {
		const struct memmon_rec_lost *l = memmon_rec__lost(rec);

		if (!l)
			return -EBADMSG;
		err |= set_u64(o, "count", l->count);
		err |= set_u64(o, "first_ns", l->first_ns);
		err |= set_u64(o, "last_ns", l->last_ns);
		break;
	}
	case MEMMON_REC_MARK: {
		const struct memmon_rec_mark *m = memmon_rec__mark(rec);

		if (!m)
			return -EBADMSG;
		err |= set(o, "text", bytes_string(m->data, m->len));
		err |= set(o, "flags", json_integer(m->flags));
		break;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r = memmon_rec__rss(rec);

		if (!r)
			return -EBADMSG;
		err |= set_u64(o, "anon", r->anon);
		err |= set_u64(o, "file", r->file);
		err |= set_u64(o, "shmem", r->shmem);
		err |= set_u64(o, "swap", r->swap);
		break;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = memmon_rec__fork(rec);

		if (!f)
			return -EBADMSG;
		err |= set(o, "child_tgid", json_integer(f->child_tgid));
		err |= set(o, "child_tid", json_integer(f->child_tid));
		err |= set(o, "thread", json_boolean(f->flags & MEMMON_FORKF_THREAD));
		err |= set(o, "shared_vm", json_boolean(f->flags & MEMMON_FORKF_VM));
		break;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = memmon_rec__exec(rec);

		if (!e)
			return -EBADMSG;
		err |= set(o, "path", bytes_string(e->path, e->path_len));
		break;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x = memmon_rec__exit(rec);
		char buf[64];

		if (!x)
			return -EBADMSG;
		if (x->flags & MEMMON_EXITF_REVOKED) {
			/* Still alive, but no longer ours to watch (uapi). */
			err |= set(o, "how", json_string("revoked"));
			err |= set(o, "group", json_true());
			err |= set(o, "revoked", json_true());
			break;
		}
		ref_wait_status__format(buf, sizeof(buf), x->code);
		err |= set(o, "status", json_integer(x->code));
		err |= set(o, "how", json_string(buf));
		err |= set(o, "group", json_boolean(x->flags & MEMMON_EXITF_GROUP));
		if (x->flags & MEMMON_EXITF_GROUP) {
			err |= set_u64(o, "peak_rss", x->peak_rss);
			err |= set_u64(o, "peak_vm", x->peak_vm);
		}
		break;
	}
	case MEMMON_REC_PATH: {
		const struct memmon_rec_path *p = memmon_rec__path(rec);

		if (!p)
			return -EBADMSG;
		err |= set_u64(o, "dev", p->dev);
		err |= set_u64(o, "ino", p->ino);
		err |= set(o, "path", bytes_string(p->path, p->path_len));
		break;
	}
	default:
		return -ENOMSG;
	}
	return err ? -ENOMEM : 0;
}

static json_t *rec_to_obj(const struct memmon_rec_header *rec,
			  const struct memmon_format_opts *opts, int *errp)
{
	const char *type = memmon_rec_type__name(rec->type);
	json_t *o;
	int err = 0;

	if (!type) {
		*errp = -ENOMSG;
		return NULL;
	}
	o = json_object();
	if (!o) {
		*errp = -ENOMEM;
		return NULL;
	}
	err |= set_u64(o, "time_ns", rec->time_ns);
	if (OPTS_GET(opts, realtime_offset_ns, 0))
		err |= set(o, "realtime_ns", json_integer((json_int_t)rec->time_ns +
					OPTS_GET(opts, realtime_offset_ns, 0)));
	err |= set(o, "cpu", json_integer(rec->cpu));
	err |= set(o, "tgid", json_integer(rec->tgid));
	err |= set(o, "tid", json_integer(rec->tid));
	err |= set(o, "type", json_string(type));
	if (err) {
		*errp = -ENOMEM;
		json_decref(o);
		return NULL;
	}
	err = json_body(o, rec, opts);
	if (err) {
		*errp = err;
		json_decref(o);
		return NULL;
	}
	return o;
}

char *ref_rec__to_json(const struct memmon_rec_header *rec,
			  const struct memmon_format_opts *opts)
{
	json_t *o;
	char *s;
	int err = 0;

	if (!rec || !OPTS_VALID(opts, memmon_format_opts))
		return libmm_err_ptr(-EINVAL);
	o = rec_to_obj(rec, opts, &err);
	if (!o)
		return libmm_err_ptr(err);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return libmm_err_ptr(-ENOMEM);
	return s;
}

int ref_rec__fprint_json(FILE *f, const struct memmon_rec_header *rec,
			    const struct memmon_format_opts *opts)
{
	char *s = ref_rec__to_json(rec, opts);
	int ret;

	if (!s)
		return errno == ENOMSG ? 0 : libmm_err(-errno);
	errno = 0;
	ret = fprintf(f, "%s\n", s) < 0 || ferror(f) ? (errno ? -errno : -EIO) :
							 (int)strlen(s) + 1;
	free(s);
	return libmm_err(ret);
}
