/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libmemmon: decoding records: typed views, names, strace-style text and
 * JSON lines. Every function here is pure (no session needed) and works on
 * records from a ring as well as from a trace file.
 *
 * Unknown record types are not errors: typed views return NULL, the
 * formatters print nothing and return 0, memmon_rec__to_json() returns
 * NULL with errno = ENOMSG. Callers skip them.
 */
#ifndef MEMMON_LIBMEMMON_INCLUDE_MEMMON_DECODE_H
#define MEMMON_LIBMEMMON_INCLUDE_MEMMON_DECODE_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/memmon.h>
#include <memmon/memmon.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Typed views: rec cast to its type after checking hdr.type and that
 * hdr.size covers the fixed part (and, for variable ones, the declared
 * payload); NULL (errno = EBADMSG or ENOMSG) otherwise.
 */
LIBMEMMON_API const struct memmon_rec_lost *
memmon_rec__lost(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_mark *
memmon_rec__mark(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_syscall *
memmon_rec__syscall(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_fault *
memmon_rec__fault(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_rss *
memmon_rec__rss(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_fork *
memmon_rec__fork(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_exec *
memmon_rec__exec(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_exit *
memmon_rec__exit(const struct memmon_rec_header *rec);
LIBMEMMON_API const struct memmon_rec_path *
memmon_rec__path(const struct memmon_rec_header *rec);
/* ABI 1.4; comm[] NUL-terminated in its 16 bytes, else EBADMSG. */
LIBMEMMON_API const struct memmon_rec_comm *
memmon_rec__comm(const struct memmon_rec_header *rec);
/*
 * The user stack after a SYSCALL or FAULT record (MEMMON_SYSF_USTACK,
 * MEMMON_FAULTF_USTACK), checked to fit in rec->size; NULL with errno
 * ENOMSG when the record carries none, EBADMSG when it does not fit.
 * Since MEMMON_0.6.
 */
LIBMEMMON_API const struct memmon_user_stack *
memmon_rec__ustack(const struct memmon_rec_header *rec);
/* A MEMMON_REC_AUXV record's view (as the others). Since MEMMON_0.6. */
LIBMEMMON_API const struct memmon_rec_auxv *
memmon_rec__auxv(const struct memmon_rec_header *rec);

/* Names; NULL when unknown. */
LIBMEMMON_API const char *memmon_rec_type__name(unsigned int type);
LIBMEMMON_API const char *memmon_sys__name(unsigned int sys);
LIBMEMMON_API int memmon_sys__from_name(const char *name);	/* -ENOENT */
LIBMEMMON_API const char *memmon_event__name(unsigned int ev);
LIBMEMMON_API int memmon_event__from_name(const char *name);	/* -ENOENT */
LIBMEMMON_API const char *memmon_fault_class__name(unsigned int fclass);
LIBMEMMON_API const char *memmon_fault_result__name(unsigned int result);
LIBMEMMON_API const char *memmon_comm_why__name(unsigned int why);
/* "ENOMEM"; kernel-internal ones too (ERESTARTSYS); NULL when unknown. */
LIBMEMMON_API const char *memmon_errno__name(int err);
/* "Cannot allocate memory", not localised; NULL when unknown. */
LIBMEMMON_API const char *memmon_errno__desc(int err);

/*
 * Flag decoders, strace style: "PROT_READ|PROT_WRITE", "MAP_PRIVATE|
 * MAP_ANONYMOUS", unknown bits appended as "|0x...". Write at most size
 * bytes (NUL included) and return the length the full text needs, like
 * snprintf.
 */
LIBMEMMON_API int memmon_prot__format(char *buf, size_t size, __u64 prot);
LIBMEMMON_API int memmon_mmap_flags__format(char *buf, size_t size, __u64 flags);
LIBMEMMON_API int memmon_mremap_flags__format(char *buf, size_t size, __u64 flags);
LIBMEMMON_API int memmon_madvise__format(char *buf, size_t size, __u64 advice);
LIBMEMMON_API int memmon_mlockall_flags__format(char *buf, size_t size, __u64 flags);
LIBMEMMON_API int memmon_mlock2_flags__format(char *buf, size_t size, __u64 flags);
LIBMEMMON_API int memmon_fault_access__format(char *buf, size_t size, __u32 access);
/* A wait status: "exited 0", "killed by SIGSEGV (core dumped)". */
LIBMEMMON_API int memmon_wait_status__format(char *buf, size_t size, __u32 status);

/*
 * A (dev, ino) -> path table fed by MEMMON_REC_PATH records, so that mmap
 * lines show "3</usr/lib/libc.so.6>".
 */
struct memmon_paths;
LIBMEMMON_API struct memmon_paths *memmon_paths__new(void);
LIBMEMMON_API void memmon_paths__free(struct memmon_paths *p);
/* Remembers the path of a MEMMON_REC_PATH record; other types are ignored
 * (returns 0), so every record may be passed.
 */
LIBMEMMON_API int memmon_paths__add_rec(struct memmon_paths *p,
					const struct memmon_rec_header *rec);
LIBMEMMON_API int memmon_paths__add(struct memmon_paths *p, __u64 dev,
				    __u64 ino, const char *path);
LIBMEMMON_API const char *memmon_paths__lookup(const struct memmon_paths *p,
					       __u64 dev, __u64 ino);
/* Calls fn for every entry; stops at a non-zero return and returns it. */
LIBMEMMON_API int memmon_paths__for_each(const struct memmon_paths *p,
					 int (*fn)(void *ctx, __u64 dev,
						   __u64 ino, const char *path),
					 void *ctx);

/* Text format flags. */
#define MEMMON_FMT_NO_TIME	(1U << 0)	/* no leading timestamp */
#define MEMMON_FMT_UTC		(1U << 1)	/* wall clock in UTC, not local */
#define MEMMON_FMT_MONOTONIC	(1U << 2)	/* raw seconds.micros of time_ns */
#define MEMMON_FMT_NO_CPU	(1U << 3)	/* no "[cpuN]" */

struct memmon_format_opts {
	size_t sz;		/* sizeof(struct memmon_format_opts) */
	__u32 flags;		/* MEMMON_FMT_* */
	__u32 __pad;
	/* CLOCK_REALTIME - CLOCK_MONOTONIC at the session, in ns, to print
	 * wall-clock times; ignored with MEMMON_FMT_MONOTONIC.
	 */
	__s64 realtime_offset_ns;
	const struct memmon_paths *paths;	/* may be NULL */
};
#define memmon_format_opts__last_field paths

/*
 * One line of text without the newline, e.g.
 *   12:00:00.123456 [cpu1] 1234/1235 mmap(NULL, 4096, PROT_READ|PROT_WRITE,
 *     MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f12345000 <0.000012>
 * (on one line). snprintf semantics; 0 for an unknown record type;
 * negative errno for a malformed record or bad opts.
 */
LIBMEMMON_API int memmon_rec__format(const struct memmon_rec_header *rec,
				     char *buf, size_t size,
				     const struct memmon_format_opts *opts);
/* The line plus '\n' to f; 0 (nothing written) for an unknown type;
 * the negative errno of a failed write (-EIO if the stream does not say).
 */
LIBMEMMON_API int memmon_rec__fprint(FILE *f, const struct memmon_rec_header *rec,
				     const struct memmon_format_opts *opts);
/*
 * One JSON object (no newline), malloc()ed, e.g.
 * {"time_ns":..,"cpu":1,"tgid":1234,"tid":1235,"type":"syscall",
 *  "name":"mmap","args":{"addr":"0x0",...},"ret":140737353936896,
 *  "duration_ns":12000}
 * Address arguments and fault addresses are strings ("0x..."): JSON
 * numbers beyond 2^53 lose precision in most readers. "ret" is the signed
 * return value; a failed call also has "errno":"ENOMEM". Mark and path
 * bytes that are not UTF-8 are written as \xNN text. NULL with
 * errno = ENOMSG for an unknown type.
 */
LIBMEMMON_API char *memmon_rec__to_json(const struct memmon_rec_header *rec,
					const struct memmon_format_opts *opts);
/*
 * The same JSON object into buf, with memmon_rec__format()'s semantics:
 * at most size bytes (NUL included) are written, the return value is the
 * length of the whole object (what memmon_rec__to_json() would return),
 * 0 and an empty buf for an unknown type, a negative errno for a
 * malformed record or bad opts. No allocation: the per-record path of
 * JSON lines.
 */
LIBMEMMON_API int memmon_rec__format_json(const struct memmon_rec_header *rec,
					  char *buf, size_t size,
					  const struct memmon_format_opts *opts);
/* The JSON object plus '\n' to f; 0 for an unknown type; errors as
 * memmon_rec__fprint().
 */
LIBMEMMON_API int memmon_rec__fprint_json(FILE *f,
					  const struct memmon_rec_header *rec,
					  const struct memmon_format_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* MEMMON_LIBMEMMON_INCLUDE_MEMMON_DECODE_H */
