/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libmemmon internals: not installed, not exported (the version script
 * keeps everything but memmon_* local; these are memmon__* or libmm_*,
 * hidden). The unit tests link the static library and use the test hooks
 * at the end.
 */
#ifndef MEMMON_LIBMEMMON_INTERNAL_H
#define MEMMON_LIBMEMMON_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <memmon/memmon.h>
#include <memmon/decode.h>
#include <memmon/trace.h>

#define LIBMM_HIDDEN __attribute__((visibility("hidden")))

#ifndef offsetofend
#define offsetofend(TYPE, FIELD) \
	(offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Return a negative errno and set errno (rule 6). */
static inline int libmm_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* NULL with errno set, for constructors; err is negative. */
static inline void *libmm_err_ptr(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

/*
 * Options structs: valid if sz covers at least the size field, and every
 * byte the library does not know (from the end of the last field it knows
 * to sz) is zero, so that a newer caller's non-default request is refused
 * rather than silently ignored. (sz of exactly what the library knows is
 * valid without the call: the formatters check once per record.)
 */
LIBMM_HIDDEN bool libmm_opts_valid(const void *opts, size_t user_sz,
				   size_t known_sz);

#define OPTS_VALID(opts, type)						\
	(!(opts) ||							\
	 (opts)->sz == offsetofend(struct type, type##__last_field) ||	\
	 libmm_opts_valid((opts), (opts)->sz,				\
		offsetofend(struct type, type##__last_field)))
#define OPTS_HAS(opts, field)						\
	((opts) && (opts)->sz >= offsetofend(__typeof__(*(opts)), field))
#define OPTS_GET(opts, field, fallback)					\
	(OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/*
 * rec as its type's structure of fixed bytes, or NULL with errno set: the
 * typed views (decode.c), inline for the formatters (json.c).
 */
static inline const void *libmm_view(const struct memmon_rec_header *rec,
				     __u16 type, size_t fixed)
{
	if (!rec)
		return libmm_err_ptr(-EINVAL);
	if (rec->type != type)
		return libmm_err_ptr(-ENOMSG);
	if (rec->size < fixed)
		return libmm_err_ptr(-EBADMSG);
	return rec;
}

/* ------------------------------------------------------------------ */
/* The k-way merge by time: a tournament (loser) tree (merge.c, merge.h). */

/*
 * One node per source (a CPU's ring, or a CPU's chunks in a trace file):
 * the source's head record. Order: time, then source (CPU); a source has
 * at most one node, so that order is total. The merge never copies a
 * record: it keeps positions, and delivers pointers.
 *
 * Use: libmm_merge_reset(), then libmm_merge_push() the first head of each
 * source that has one; then, while libmm_merge_top() is not NULL, deliver it
 * and either libmm_merge_replace_top() it with the next head of the same
 * source or libmm_merge_pop() it when that source is done. Each of those is
 * log2(sources) comparisons on one path of the tree, and no node moves.
 */
struct libmm_merge_node {
	__u64 time;
	__u64 pos;
	__u32 src;
	__u32 size;
};

struct libmm_merge {
	struct libmm_merge_node *leaf;	/* [k]: by source; src ~0 = empty */
	__u64 *time;			/* [k]: leaf[i].time, ~0 if empty */
	unsigned int *loser;		/* [k]: [1..k-1] losers, [0] winner */
	unsigned int *scratch;		/* [2k]: winners while building */
	unsigned int k;			/* leaves: cap rounded up to 2^n */
	bool built;			/* loser[] matches leaf[] */
};

LIBMM_HIDDEN int libmm_merge_init(struct libmm_merge *m, unsigned int cap);
LIBMM_HIDDEN void libmm_merge_fini(struct libmm_merge *m);
LIBMM_HIDDEN void libmm_merge_reset(struct libmm_merge *m);
LIBMM_HIDDEN void libmm_merge_push(struct libmm_merge *m, const struct libmm_merge_node *n);
LIBMM_HIDDEN void libmm_merge_build(struct libmm_merge *m);
/* libmm_merge_top(), libmm_merge_pop(), libmm_merge_replace_top(): merge.h */

/* ------------------------------------------------------------------ */
/* Sessions and rings (session.c, ring.c). */

/*
 * One CPU's ring as this consumer sees it.
 *
 * Synchronisation:
 *   consumer_pos  written only by us, store-release [D]; the kernel reads it
 *                 with load-acquire [A]. One thread per CPU at a time.
 *   page          producer_pos read with load-acquire [C] (pairs with [B]);
 *                 stats read relaxed (racy counters).
 *   cons, snap,   private to the thread consuming this CPU.
 *   pos
 */
struct libmm_ring {
	__u64 *consumer_pos;
	const struct memmon_ring_page *page;
	const __u8 *data;		/* what records are read from: map, or
					 * copy for a flight recorder
					 */
	const __u8 *map;		/* ring_size bytes, mapped twice */
	__u8 *copy;			/* overwrite: 2 * ring_size, laid out as
					 * map; filled by ring_snapshot()
					 */
	__u64 cons;			/* last value stored to consumer_pos */
	__u64 snap;			/* producer_pos loaded this round */
	__u64 pos;			/* merge cursor in [cons, snap] */
};

struct memmon_session {
	int fd;
	bool own_fd;
	bool own_maps;
	bool mapped;
	bool overwrite;			/* MEMMON_FULL_OVERWRITE configured */
	struct memmon_info info;

	void *cons_area;
	size_t cons_size;
	void *prod_area;
	size_t prod_size;

	unsigned int nr_cpus;
	__u64 ring_size;
	__u64 mask;
	struct libmm_ring *rings;
	__u64 bad_records;		/* skipped or resynchronised over */

	memmon_record_fn fn;
	void *ctx;
	__u32 consume_flags;
	__u64 holdback_ns;
	struct libmm_merge merge;

	/* What memmon_session__set_events() sends, for set_stack to resend. */
	bool events_set;
	__u64 ev_mask;
	__u64 ev_syscalls;
	__u32 stack_depth;
	__u32 stack_flags;

	__u64 (*clock)(void *ctx);	/* CLOCK_MONOTONIC; a test hook */
	void *clock_ctx;
};

/* Check a mapping against info and set up s->rings (ring.c). */
LIBMM_HIDDEN int libmm_session_attach(struct memmon_session *s, void *cons,
				   size_t cons_size, void *prod,
				   size_t prod_size);
LIBMM_HIDDEN void libmm_session_detach(struct memmon_session *s);

/* ------------------------------------------------------------------ */
/* Test hooks: sessions over memory laid out by the test. */

/*
 * A session over an existing mapping (consumer area at cons, producer area
 * at prod, sizes from info) that it does not own: close() neither unmaps
 * nor closes fd (which may be -1, or an eventfd for poll tests).
 */
LIBMM_HIDDEN struct memmon_session *
memmon__session_from_mapping(const struct memmon_info *info, void *cons,
			     void *prod, int fd);
LIBMM_HIDDEN void memmon__session_set_clock(struct memmon_session *s,
					    __u64 (*clock)(void *ctx),
					    void *ctx);

#endif /* MEMMON_LIBMEMMON_INTERNAL_H */
