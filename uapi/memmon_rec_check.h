/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * The one record validator, for every reader of records: the driver's ring
 * (driver/transport/ring.h), libmemmon's ring reader, and the trace file writer and
 * reader. Header-only so that the kernel and userspace compile the same
 * code. Not part of the ABI and not installed.
 *
 * Contract of memmon_rec_check(h, avail, &size):
 *  - @h points at @avail readable bytes (any value, 0 included); nothing
 *    outside them is read, whatever they hold;
 *  - *size is the h->size the verdict was reached on (read once per
 *    decision): a caller advances by that value, never by a second read of
 *    a header it does not own;
 *  - MEMMON_REC_BAD_FRAME: the size is below a header, not a multiple of
 *    MEMMON_REC_ALIGN, or beyond @avail (or @avail holds no header). The
 *    length cannot be trusted, so neither can the position of any record
 *    after it: the reader resynchronises (the ring reader jumps to the
 *    producer position, the trace reader to the next chunk);
 *  - MEMMON_REC_BAD_BODY: the frame is sound but the record is not: type 0,
 *    or a known type shorter than its struct, or a MARK/EXEC/PATH whose
 *    payload length overruns the record (EXEC/PATH: with its NUL), or a
 *    SYSCALL/FAULT whose user stack does not fit in it. The length is
 *    good: the reader skips *size bytes;
 *  - MEMMON_REC_OK: deliver. A type at or past MEMMON_REC__COUNT is OK
 *    with a sound frame: the ABI promises old readers skip new types by
 *    hdr.size, so only a consumer that decodes can ignore it.
 * libmemmon's readers count one per verdict other than OK: the ring reader
 * skips what it counts (or resynchronises); the trace reader, whose chunks'
 * checksums held, delivers a BAD_BODY record for the decoder to refuse by
 * name and skips the rest of the chunk at a BAD_FRAME. The kernel's
 * consumer (memmon_ring_peek()) takes either bad verdict as BAD_FRAME:
 * every record in its ring is the
 * producer's own, so a bad one means the untrusted consumer position is no
 * record boundary.
 */
#ifndef MEMMON_UAPI_MEMMON_REC_CHECK_H
#define MEMMON_UAPI_MEMMON_REC_CHECK_H

#include <linux/types.h>
#include <linux/memmon.h>

/*
 * One read of a field another party may write (a record in a mapping, a
 * header at a position the consumer chose): the compiler neither repeats
 * nor tears it.
 */
#ifdef __KERNEL__
#include <linux/compiler.h>
#define __memmon_rec_once(x)	READ_ONCE(x)
#else
#define __memmon_rec_once(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#endif

/* enum memmon_rec_verdict: what memmon_rec_check() found. */
enum memmon_rec_verdict {
	MEMMON_REC_OK		= 0,	/* a record: deliver */
	MEMMON_REC_BAD_BODY	= 1,	/* sound length, bad record: skip it */
	MEMMON_REC_BAD_FRAME	= 2,	/* length not to be trusted: resync */
};

/*
 * Does a record of @size bytes fit the framing rules with @avail bytes
 * left from its start? The producer uses this alone on its own records.
 */
static inline int memmon_rec_frame_ok(__u32 size, __u64 avail)
{
	return size >= sizeof(struct memmon_rec_header) &&
	       size % MEMMON_REC_ALIGN == 0 && size <= avail;
}

/*
 * sizeof() of each known type's struct, for type < MEMMON_REC__COUNT;
 * type 0 is never valid: no size is enough.
 */
static inline __u32 memmon_rec_min_size(__u16 type)
{
	static const __u32 min[MEMMON_REC__COUNT] = {
		[0]			= 0xffffffffU,
		[MEMMON_REC_LOST]	= sizeof(struct memmon_rec_lost),
		[MEMMON_REC_MARK]	= sizeof(struct memmon_rec_mark),
		[MEMMON_REC_SYSCALL]	= sizeof(struct memmon_rec_syscall),
		[MEMMON_REC_FAULT]	= sizeof(struct memmon_rec_fault),
		[MEMMON_REC_RSS]	= sizeof(struct memmon_rec_rss),
		[MEMMON_REC_FORK]	= sizeof(struct memmon_rec_fork),
		[MEMMON_REC_EXEC]	= sizeof(struct memmon_rec_exec),
		[MEMMON_REC_EXIT]	= sizeof(struct memmon_rec_exit),
		[MEMMON_REC_PATH]	= sizeof(struct memmon_rec_path),
		[MEMMON_REC_COMM]	= sizeof(struct memmon_rec_comm),
		[MEMMON_REC_AUXV]	= sizeof(struct memmon_rec_auxv),
	};

	return type < MEMMON_REC__COUNT ? min[type] : sizeof(struct memmon_rec_header);
}

/*
 * True if a struct memmon_user_stack at offset @at of the record at @h,
 * with all its nr entries, lies within the record's @len bytes.
 */
static inline int memmon_rec_ustack_fits(const struct memmon_rec_header *h,
					 __u32 at, __u32 len)
{
	const struct memmon_user_stack *st;
	__u32 nr;

	if (len < at || len - at < sizeof(*st))
		return 0;
	st = (const struct memmon_user_stack *)((const __u8 *)h + at);
	nr = __memmon_rec_once(st->nr);
	return nr <= (len - at - sizeof(*st)) / sizeof(st->ip[0]);
}

/* memmon_rec_check()'s whole decision; it answers the common case itself. */
static inline enum memmon_rec_verdict
memmon_rec_check_slow(const struct memmon_rec_header *h, __u64 avail,
		      __u32 *size)
{
	__u32 len, n;
	__u16 type;

	if (avail < sizeof(*h)) {
		*size = 0;
		return MEMMON_REC_BAD_FRAME;
	}
	len = __memmon_rec_once(h->size);
	*size = len;
	if (!memmon_rec_frame_ok(len, avail))
		return MEMMON_REC_BAD_FRAME;
	type = __memmon_rec_once(h->type);
	if (type >= MEMMON_REC__COUNT)
		return MEMMON_REC_OK;	/* newer than us: framed is enough */
	if (len < memmon_rec_min_size(type))
		return MEMMON_REC_BAD_BODY;
	/* Variable payloads: the length field, read once, within len. */
	switch (type) {
	case MEMMON_REC_MARK:
		n = __memmon_rec_once(((const struct memmon_rec_mark *)h)->len);
		if (n > len - sizeof(struct memmon_rec_mark))
			return MEMMON_REC_BAD_BODY;
		break;
	case MEMMON_REC_EXEC:
		n = __memmon_rec_once(((const struct memmon_rec_exec *)h)->path_len);
		if (n >= len - sizeof(struct memmon_rec_exec))
			return MEMMON_REC_BAD_BODY;
		break;
	case MEMMON_REC_PATH:
		n = __memmon_rec_once(((const struct memmon_rec_path *)h)->path_len);
		if (n >= len - sizeof(struct memmon_rec_path))
			return MEMMON_REC_BAD_BODY;
		break;
	case MEMMON_REC_SYSCALL:
		n = __memmon_rec_once(((const struct memmon_rec_syscall *)h)->flags);
		if ((n & MEMMON_SYSF_USTACK) &&
		    !memmon_rec_ustack_fits(h, sizeof(struct memmon_rec_syscall), len))
			return MEMMON_REC_BAD_BODY;
		break;
	case MEMMON_REC_FAULT:
		n = __memmon_rec_once(((const struct memmon_rec_fault *)h)->flags);
		if ((n & MEMMON_FAULTF_USTACK) &&
		    !memmon_rec_ustack_fits(h, sizeof(struct memmon_rec_fault), len))
			return MEMMON_REC_BAD_BODY;
		break;
	default:
		break;
	}
	return MEMMON_REC_OK;
}

/* Types whose record has more to check than its length. */
#define MEMMON_REC_VARIABLE	((1U << MEMMON_REC_MARK) | (1U << MEMMON_REC_EXEC) | \
				 (1U << MEMMON_REC_PATH) | (1U << MEMMON_REC_SYSCALL) | \
				 (1U << MEMMON_REC_FAULT))

/*
 * memmon_rec_check() - validate the record at @h; see the contract above.
 * Context: any; reads at most @avail bytes at @h, nothing else.
 *
 * A drain calls it per record: the common verdicts, a framed record of a
 * known fixed-size type and a syscall or fault record with no user stack
 * or one that fits, are reached with each field read once and no table but the
 * sizes; everything else goes through memmon_rec_check_slow(), which
 * decides alone (the fast path answers OK, or BAD_BODY for a stack that
 * does not fit, only where the slow path would: test_rec_check holds them
 * to it).
 */
static inline enum memmon_rec_verdict
memmon_rec_check(const struct memmon_rec_header *h, __u64 avail, __u32 *size)
{
	const struct memmon_rec_syscall *sc;
	const struct memmon_rec_fault *flt;
	__u32 len;
	__u16 type;

	if (avail < sizeof(*h))
		return memmon_rec_check_slow(h, avail, size);
	len = __memmon_rec_once(h->size);
	type = __memmon_rec_once(h->type);
	if (type >= MEMMON_REC__COUNT || len > avail ||
	    len % MEMMON_REC_ALIGN || len < memmon_rec_min_size(type))
		return memmon_rec_check_slow(h, avail, size);
	*size = len;
	if (!((MEMMON_REC_VARIABLE >> type) & 1))
		return MEMMON_REC_OK;
	if (type == MEMMON_REC_FAULT) {
		flt = (const struct memmon_rec_fault *)h;
		if (!(__memmon_rec_once(flt->flags) & MEMMON_FAULTF_USTACK) ||
		    memmon_rec_ustack_fits(h, sizeof(*flt), len))
			return MEMMON_REC_OK;
		return MEMMON_REC_BAD_BODY;
	}
	if (type == MEMMON_REC_SYSCALL) {
		sc = (const struct memmon_rec_syscall *)h;
		if (!(__memmon_rec_once(sc->flags) & MEMMON_SYSF_USTACK) ||
		    memmon_rec_ustack_fits(h, sizeof(*sc), len))
			return MEMMON_REC_OK;
		return MEMMON_REC_BAD_BODY;
	}
	return memmon_rec_check_slow(h, avail, size);
}

#endif /* MEMMON_UAPI_MEMMON_REC_CHECK_H */
