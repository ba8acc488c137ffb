/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libmemmon: sessions on /dev/memmon and zero-copy consumption of its
 * per-CPU rings.
 *
 * Conventions (all of libmemmon):
 *  - functions are named memmon_<object>__<verb>();
 *  - an int-returning function returns a negative errno on failure AND sets
 *    errno to its positive value; a constructor returns NULL with errno set;
 *  - a destructor accepts NULL and a half-built object;
 *  - options structs start with "size_t sz" (use LIBMEMMON_OPTS() to fill
 *    it); fields the library does not know must be zero, else -EINVAL;
 *  - records handed to callbacks point INTO the ring mapping: they are
 *    valid only during the callback and must not be written.
 *
 * The ABI under this library is uapi <linux/memmon.h>.
 */
#ifndef MEMMON_LIBMEMMON_INCLUDE_MEMMON_MEMMON_H
#define MEMMON_LIBMEMMON_INCLUDE_MEMMON_MEMMON_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <linux/memmon.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef LIBMEMMON_API
#define LIBMEMMON_API __attribute__((visibility("default")))
#endif

/*
 * Declare and zero an options struct, set its size and the named fields:
 *   LIBMEMMON_OPTS(memmon_session_opts, o, .ring_size = 1 << 20);
 */
#define LIBMEMMON_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		__builtin_memset(&NAME, 0, sizeof(struct TYPE));	\
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };	\
	})

struct memmon_session;

struct memmon_session_opts {
	size_t sz;		/* sizeof(struct memmon_session_opts) */
	const char *path;	/* device; NULL = MEMMON_DEVICE_PATH */
	__u64 ring_size;	/* != 0: MEMMON_IOC_CONFIGURE at open */
	__u64 wakeup_bytes;	/* with ring_size: the poll watermark */
	__u32 full_policy;	/* enum memmon_full_policy */
	__u32 wait_timeout_ms;	/* MEMMON_FULL_WAIT's bound; 0 = default */
};
#define memmon_session_opts__last_field wait_timeout_ms

/* open(2) the device, MEMMON_IOC_GET_INFO, and CONFIGURE if asked. */
LIBMEMMON_API struct memmon_session *
memmon_session__open(const struct memmon_session_opts *opts);
/* Unmap the rings, close the fd, free. NULL is fine. */
LIBMEMMON_API void memmon_session__close(struct memmon_session *s);

/* The fd: poll()/epoll it for EPOLLIN, then memmon_session__consume(). */
LIBMEMMON_API int memmon_session__fd(const struct memmon_session *s);
/* GET_INFO as of the last open/configure/map; never NULL for a session. */
LIBMEMMON_API const struct memmon_info *
memmon_session__info(const struct memmon_session *s);
/* The module's possible CPUs: one ring each, indexes 0..nr_cpus-1. */
LIBMEMMON_API unsigned int memmon_session__nr_cpus(const struct memmon_session *s);

/* MEMMON_IOC_CONFIGURE: before the rings exist (map/enable); 0 = default. */
LIBMEMMON_API int memmon_session__configure(struct memmon_session *s,
					    __u64 ring_size, __u64 wakeup_bytes);
/* flags: MEMMON_WATCH_FOLLOW_CHILDREN; pid 0 = the calling process. */
LIBMEMMON_API int memmon_session__watch_add(struct memmon_session *s,
					    pid_t pid, __u32 flags);
/* Stop watching pid's process; -ENOENT if not watched, -ESRCH if no such process. */
LIBMEMMON_API int memmon_session__watch_del(struct memmon_session *s, pid_t pid);
/* Fills up to cap entries; returns how many processes are watched. */
LIBMEMMON_API int memmon_session__watch_list(struct memmon_session *s,
					     struct memmon_watch_entry *entries,
					     unsigned int cap);
/*
 * MEMMON_IOC_SET_EVENTS: mask: 1 << enum memmon_event; syscalls: 1 <<
 * enum memmon_sys. Sends the stack settings of memmon_session__set_stack()
 * with them.
 */
LIBMEMMON_API int memmon_session__set_events(struct memmon_session *s,
					     __u64 mask, __u64 syscalls);
/*
 * User stacks (ABI 1.5, struct memmon_user_stack): @depth frames of the
 * frame-pointer walk after the first entries (0..MEMMON_STACK_DEPTH_MAX),
 * @flags MEMMON_STACK_FAULTS for stacks on fault records too. Kept by the
 * session and sent with every memmon_session__set_events(); if that was
 * already called, sent at once with its masks. -EOPNOTSUPP for a non-zero
 * request to a module without MEMMON_FEAT_USTACK, -EINVAL for a bad value
 * (nothing changes on an error). Since MEMMON_0.6.
 */
LIBMEMMON_API int memmon_session__set_stack(struct memmon_session *s,
					    unsigned int depth, unsigned int flags);
/*
 * MEMMON_IOC_ENABLE: start recording (creating the rings if needed; the
 * first enabled session attaches the hooks). Enabling twice does nothing.
 */
LIBMEMMON_API int memmon_session__enable(struct memmon_session *s);
/*
 * MEMMON_IOC_DISABLE: stop recording; each CPU's pending loss is written
 * as a LOST record first (MEMMON_FEAT_FLUSH_LOST), so the stream accounts
 * for everything up to here. Records already in the rings stay readable.
 */
LIBMEMMON_API int memmon_session__disable(struct memmon_session *s);
/* MEMMON_IOC_GET_STATS into cpus[0..cap); returns the number of CPUs. */
LIBMEMMON_API int memmon_session__stats(struct memmon_session *s,
					struct memmon_cpu_stats *cpus,
					unsigned int cap);
/* MEMMON_IOC_MARK; flags: MEMMON_MARK_WATCHERS. */
LIBMEMMON_API int memmon_session__mark(struct memmon_session *s,
				       const void *data, size_t len,
				       __u32 flags);

/*
 * Map the rings (consumer area RW at offset 0, producer area RO at
 * producer_offset) and check the mapping header against GET_INFO. Done
 * implicitly by the first consume/poll/peek; call it explicitly to get
 * mapping errors early. After it, CONFIGURE is -EBUSY.
 */
LIBMEMMON_API int memmon_session__map(struct memmon_session *s);

/*
 * A record callback. rec points into the ring (zero copy), is valid only
 * until the callback returns, and has passed the size checks: rec->size is
 * a multiple of 8, >= sizeof(*rec), and within what the producer committed.
 * Return 0 to go on; > 0 to stop after this record (the call returns the
 * count so far); < 0 to stop with that error. Either way the record counts
 * as consumed.
 */
typedef int (*memmon_record_fn)(void *ctx, const struct memmon_rec_header *rec);

/*
 * How memmon_session__consume()/__poll()/__flush() deliver records.
 *
 * MERGED (the default): a k-way merge over the per-CPU rings in time_ns
 * order (ties: lower CPU first; within a CPU, ring order is kept). Each
 * call is one ROUND: it loads every ring's producer_pos once ([C]) and
 * merges exactly the records below those positions. Within a round the
 * order is total. Across rounds it is not guaranteed: a record committed
 * after the round's load (on a CPU that looked idle, or one whose time_ns
 * is older than its commit, such as a syscall record stamped at entry) may
 * be older than records already delivered. To narrow that, holdback_ns > 0
 * leaves in the rings (not copied, consumer_pos not advanced past them)
 * records newer than "now - holdback_ns", so that late producers can catch
 * up; memmon_session__flush() then delivers everything regardless, for the
 * end of a session. perf's ordered events make the same trade.
 *
 * MEMMON_CONSUME_PER_CPU: no merge; each CPU's records in ring order, CPU
 * after CPU (cheapest; for consumers that sort later or do not care).
 */
#define MEMMON_CONSUME_PER_CPU	(1U << 0)

struct memmon_consume_opts {
	size_t sz;		/* sizeof(struct memmon_consume_opts) */
	__u32 flags;		/* MEMMON_CONSUME_* */
	__u32 __pad;
	__u64 holdback_ns;	/* merged mode only; 0 = deliver everything */
};
#define memmon_consume_opts__last_field holdback_ns

/* Where consume/poll/flush deliver records. opts may be NULL. */
LIBMEMMON_API int memmon_session__set_callback(struct memmon_session *s,
					       memmon_record_fn fn, void *ctx,
					       const struct memmon_consume_opts *opts);
/* One round without waiting. Returns records delivered (<= INT_MAX). */
LIBMEMMON_API int memmon_session__consume(struct memmon_session *s);
/* Wait up to timeout_ms (-1 forever) for EPOLLIN, then consume. -EINTR if
 * a signal came: the caller checks its flags and calls again.
 */
LIBMEMMON_API int memmon_session__poll(struct memmon_session *s, int timeout_ms);
/* Like consume, ignoring holdback_ns: drain everything committed now. */
LIBMEMMON_API int memmon_session__flush(struct memmon_session *s);
/*
 * End a recording: DISABLE, drain, DISABLE, drain, ignoring holdback_ns.
 * Afterwards the records delivered account for every event the session was
 * meant to get: per CPU, produced == records delivered + the counts of the
 * LOST records delivered. A loss the kernel could not write into the
 * stream is delivered as a LOST record made here (first_ns and last_ns 0).
 * Returns the records delivered. The session is not to be enabled again.
 */
LIBMEMMON_API int memmon_session__finish(struct memmon_session *s);
/* One CPU's ring, in ring order, through the session's callback. Safe to
 * run concurrently for different CPUs (one thread per CPU) once
 * memmon_session__map() has returned; not concurrently with
 * memmon_session__consume()/__poll()/__flush(), which touch every ring.
 */
LIBMEMMON_API int memmon_session__consume_cpu(struct memmon_session *s,
					      unsigned int cpu);

/*
 * Raw access for copying consumers (memmon record): *data is set to the
 * committed bytes of cpu's ring from consumer_pos, a run of whole records
 * at most max_bytes long (contiguous thanks to the double mapping).
 * Returns its length (0: empty) or -ENOBUFS if the first record alone is
 * larger than max_bytes. Malformed records at the head are skipped and
 * counted (memmon_session__bad_records()); the run handed out stops before
 * the next malformed one.
 * memmon_session__release_cpu() then gives len bytes back ([D]).
 */
LIBMEMMON_API ssize_t memmon_session__peek_cpu(struct memmon_session *s,
					       unsigned int cpu, size_t max_bytes,
					       const void **data);
/*
 * Give back the first len bytes of what memmon_session__peek_cpu() handed
 * out (a multiple of 8, whole records): consumer_pos moves on by len, with
 * release ([D]). -EINVAL beyond what the producer committed.
 */
LIBMEMMON_API int memmon_session__release_cpu(struct memmon_session *s,
					      unsigned int cpu, size_t len);
/* The counters of cpu's ring page (read racily, without a syscall). */
LIBMEMMON_API int memmon_session__ring_stats(struct memmon_session *s,
					     unsigned int cpu,
					     struct memmon_cpu_stats *stats,
					     __u64 *lost_pending);
/*
 * MEMMON_FULL_OVERWRITE (the flight recorder): how many events cpu's ring
 * has written over so far (part of stats.lost; never in a LOST record).
 * Exact once the session is disabled. 0 for any other policy. Since 0.4.
 */
LIBMEMMON_API int memmon_session__ring_overwritten(struct memmon_session *s,
						   unsigned int cpu,
						   __u64 *overwritten);
/*
 * How many malformed records the readers of this session have skipped so
 * far, over all CPUs. A record whose length is sound but whose contents are
 * not (type 0, shorter than its type's struct, a payload length past its
 * end) is skipped by its length; one whose length cannot be trusted, or a
 * ring whose producer position is more than ring_size ahead of ours, makes
 * the reader jump to the producer position: each counts one. The records
 * after the bad one are delivered; nothing stalls. 0 for NULL. Since 0.5.
 */
LIBMEMMON_API __u64 memmon_session__bad_records(const struct memmon_session *s);

#ifdef __cplusplus
}
#endif

#endif /* MEMMON_LIBMEMMON_INCLUDE_MEMMON_MEMMON_H */
