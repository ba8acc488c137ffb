/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * memmon: the userspace ABI of /dev/memmon.
 *
 * This header is a contract. Everything below is versioned by
 * MEMMON_ABI_MAJOR / MEMMON_ABI_MINOR:
 *  - a MINOR bump adds: new ioctls, new record types, new fields at the end
 *    of a size-first struct, new feature/flag bits. Old readers keep working.
 *  - a MAJOR bump breaks something. We intend never to do it.
 *
 * Rules every struct follows (Documentation/process/botching-up-ioctls.rst):
 *  - only __u8..__u64, explicit padding, every struct a multiple of 8 bytes;
 *  - enums are stored in a __u16/__u32 field whose comment names the enum;
 *  - pointers travel as __u64;
 *  - argument structs start with "__u32 size" (sizeof as the caller knows
 *    it). The kernel accepts a smaller size (fields it did not get read as
 *    zero) and a larger one as long as the bytes it does not know are zero
 *    (copy_struct_from_user() semantics, -E2BIG otherwise). MEMMON_*_SIZE_VER0
 *    names the first published size of each;
 *  - unknown flag bits and non-zero reserved fields are -EINVAL;
 *  - the driver dispatches on _IOC_TYPE and _IOC_NR only and reads the size
 *    from the struct, so a struct may grow without changing its ioctl number.
 *    An ioctl number is never reused.
 *
 * Fields are marked in (caller → kernel), out (kernel → caller) or in/out.
 */
#ifndef MEMMON_UAPI_LINUX_MEMMON_H
#define MEMMON_UAPI_LINUX_MEMMON_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define MEMMON_ABI_MAJOR	1
#define MEMMON_ABI_MINOR	5

#define MEMMON_DEVICE_PATH	"/dev/memmon"

/* ------------------------------------------------------------------------
 * Discovery: MEMMON_IOC_GET_INFO
 */

/* Feature bits reported in memmon_info.features. */
#define MEMMON_FEAT_MMAP		(1ULL << 0)	/* zero-copy rings via mmap */
#define MEMMON_FEAT_READ		(1ULL << 1)	/* read() copies whole records */
#define MEMMON_FEAT_POLL		(1ULL << 2)	/* poll/epoll with watermark */
#define MEMMON_FEAT_MARK		(1ULL << 3)	/* MEMMON_IOC_MARK */
#define MEMMON_FEAT_FOLLOW_CHILDREN	(1ULL << 4)	/* MEMMON_WATCH_FOLLOW_CHILDREN */
#define MEMMON_FEAT_SYSCALLS		(1ULL << 5)	/* MEMMON_REC_SYSCALL records */
#define MEMMON_FEAT_FAULTS		(1ULL << 6)	/* MEMMON_REC_FAULT records */
#define MEMMON_FEAT_RSS			(1ULL << 7)	/* MEMMON_REC_RSS records */
#define MEMMON_FEAT_LIFECYCLE		(1ULL << 8)	/* FORK/EXEC/EXIT records */
#define MEMMON_FEAT_COMPAT32		(1ULL << 9)	/* ia32 tasks' syscalls traced */
#define MEMMON_FEAT_OVERWRITE		(1ULL << 10)	/* ABI 1.3:
							 * MEMMON_FULL_OVERWRITE
							 */
#define MEMMON_FEAT_FLUSH_LOST		(1ULL << 11)	/* ABI 1.2: DISABLE writes
							 * pending losses
							 */
#define MEMMON_FEAT_FULL_WAIT		(1ULL << 12)	/* ABI 1.2:
							 * MEMMON_FULL_WAIT
							 */
#define MEMMON_FEAT_COMM		(1ULL << 13)	/* ABI 1.4:
							 * MEMMON_REC_COMM records
							 */
#define MEMMON_FEAT_USTACK		(1ULL << 14)	/* ABI 1.5: user stacks
							 * on syscall and fault
							 * records, and
							 * MEMMON_REC_AUXV
							 */

/*
 * struct memmon_info - what this kernel offers, and this session's layout.
 *
 * The "session" half describes the mapping of *this* fd as configured now
 * (defaults until MEMMON_IOC_CONFIGURE); query it again after CONFIGURE.
 */
struct memmon_info {
	__u32 size;			/* in: sizeof(struct memmon_info) */
	__u16 abi_major;		/* out: MEMMON_ABI_MAJOR */
	__u16 abi_minor;		/* out: MEMMON_ABI_MINOR */
	__u64 features;			/* out: MEMMON_FEAT_* */
	__u64 events_supported;		/* out: mask of 1 << enum memmon_event */
	__u32 nr_cpus;			/* out: rings per session (nr_cpu_ids) */
	__u32 page_size;		/* out: PAGE_SIZE */
	__u32 max_sessions;		/* out: sessions open at once, system-wide */
	__u32 max_watch;		/* out: watch entries per session */
	__u32 mark_max;			/* out: max MEMMON_IOC_MARK payload bytes */
	__u32 __reserved0;		/* out: zero */
	__u64 ring_size_min;		/* out: per-CPU data bytes, power of two */
	__u64 ring_size_max;		/* out: per-CPU data bytes, power of two */
	__u64 ring_size_default;	/* out: module parameter ring_size */
	/* This session: */
	__u64 ring_size;		/* out: per-CPU data bytes */
	__u64 wakeup_bytes;		/* out: poll watermark */
	__u64 consumer_size;		/* out: bytes of the consumer area (offset 0) */
	__u64 producer_offset;		/* out: mmap offset of the producer area */
	__u64 producer_size;		/* out: bytes of the producer area */
	__u64 ring_stride;		/* out: bytes between two CPUs' blocks */
	__u64 ring_data_offset;		/* out: data offset inside a CPU's block */
	/* ABI 1.1: this session's rights and its user's limits. */
	__u64 session_flags;		/* out: MEMMON_SESSF_* */
	__u32 user_sessions;		/* out: sessions of the opener's user
					 *      (real uid) open now, this one
					 *      included
					 */
	__u32 user_sessions_max;	/* out: the most it may hold; 0: no
					 *      limit (CAP_SYS_ADMIN opener)
					 */
	__u64 user_ring_bytes;		/* out: ring memory of those sessions */
	__u64 user_ring_budget;		/* out: ring memory a user may have
					 *      beyond RLIMIT_MEMLOCK (module
					 *      parameter user_ring_kb x nr_cpus)
					 */
	__u64 user_ring_avail;		/* out: ring memory the caller may
					 *      still create: the budget left
					 *      plus what RLIMIT_MEMLOCK leaves;
					 *      ~0ULL: no limit (CAP_IPC_LOCK)
					 */
};

#define MEMMON_INFO_SIZE_VER0	128	/* first published */
#define MEMMON_INFO_SIZE_VER1	168	/* ABI 1.1: session_flags, user_* */

/*
 * memmon_info.session_flags: what the opener could do at open(), fixed for
 * the session's life (docs/security.md).
 */
#define MEMMON_SESSF_PFN	(1ULL << 0)	/* CAP_SYS_ADMIN: FAULT records
						 * carry pfn (as pagemap)
						 */
#define MEMMON_SESSF_PTRACE	(1ULL << 1)	/* CAP_SYS_PTRACE: a watch
						 * survives the exec of a
						 * privileged image
						 */

/* ------------------------------------------------------------------------
 * Session setup: MEMMON_IOC_CONFIGURE (only before the rings exist: before
 * the first mmap, read(), MEMMON_IOC_MARK or MEMMON_IOC_ENABLE; -EBUSY after)
 */

/* enum memmon_full_policy: what a producer does when a ring is full. */
enum memmon_full_policy {
	MEMMON_FULL_DROP_NEW	= 0,	/* drop and count; LOST record follows */
	MEMMON_FULL_OVERWRITE	= 1,	/* ABI 1.3: the flight recorder, below */
	MEMMON_FULL_WAIT	= 2,	/* ABI 1.2: the lossless mode, below */
};

/*
 * MEMMON_FULL_WAIT: a watched user task whose record leaves a ring of the
 * session more than half full waits, when it next returns to user space
 * (never where it made the record), until the consumer has brought that
 * ring down to a quarter; then drops are counted as with DROP_NEW. The
 * consumer's poll() and read() wake such tasks at once; a consumer that
 * drains only through the mapping has them look again every few
 * milliseconds. A wait ends early on any signal (SIGKILL included), on
 * DISABLE and when the session's file is released; it gives up after
 * wait_timeout_ms, and no task waits on that ring again until it has been
 * seen half empty. Still dropped and counted: whatever one kernel entry of
 * a task records beyond half a ring (a MAP_POPULATE or mlock() of a large
 * area), and records made in interrupts, kernel threads, io_uring workers
 * and exiting tasks.
 */
/*
 * MEMMON_FULL_OVERWRITE: each ring keeps its newest records. consumer_pos
 * is ignored by the producer; the oldest record still held is the ring
 * page's tail_pos, and each event overwritten counts as lost (taken back
 * from delivered: produced == delivered + lost holds, delivered being what
 * can still be read) and in the page's overwritten. A reader starts at
 * max(consumer_pos, tail_pos), COPIES the records below producer_pos, then
 * re-reads tail_pos ([G]) and discards what lies below it: those bytes may
 * have been overwritten while it copied. Read through the mapping only:
 * read() is -EOPNOTSUPP on such a session. Needs MEMMON_FEAT_OVERWRITE.
 */
struct memmon_config {
	__u32 size;		/* in: sizeof(struct memmon_config) */
	__u32 full_policy;	/* in: enum memmon_full_policy */
	__u64 ring_size;	/* in: per-CPU data bytes, power of two in
				 *     [ring_size_min, ring_size_max]; 0 = default
				 */
	__u64 wakeup_bytes;	/* in: poll() is readable once a ring holds
				 *     this many bytes; 1..ring_size/2;
				 *     0 = default (ring_size / 4)
				 */
	/* ABI 1.2 */
	__u32 wait_timeout_ms;	/* in: MEMMON_FULL_WAIT's bound on one wait,
				 *     1..60000; 0 = default (1000); must be 0
				 *     with any other policy
				 */
	__u32 __reserved;	/* in: zero */
};

#define MEMMON_CONFIG_SIZE_VER0	24	/* first published */
#define MEMMON_CONFIG_SIZE_VER1	32	/* ABI 1.2: wait_timeout_ms */

/* ------------------------------------------------------------------------
 * The watch set: MEMMON_IOC_WATCH_ADD / _DEL / _LIST
 */

/* Watch flags. */
#define MEMMON_WATCH_FOLLOW_CHILDREN	(1U << 0)	/* children (fork/clone,
							 * recursively) are
							 * watched from their
							 * first instruction
							 */
#define MEMMON_WATCH_FLAGS_MASK		(MEMMON_WATCH_FOLLOW_CHILDREN)

struct memmon_watch {
	__u32 size;		/* in: sizeof(struct memmon_watch) */
	__u32 flags;		/* in: MEMMON_WATCH_* (ignored by WATCH_DEL) */
	__u32 pid;		/* in: a process (tgid) in the caller's PID
				 *     namespace; 0 = the caller's own process
				 */
	__u32 __reserved;	/* in: zero */
};

#define MEMMON_WATCH_SIZE_VER0	16	/* first published */

struct memmon_watch_entry {
	__u32 pid;		/* out: tgid in the session opener's PID ns */
	__u32 flags;		/* out: MEMMON_WATCH_* */
};

struct memmon_watch_list {
	__u32 size;		/* in: sizeof(struct memmon_watch_list) */
	__u32 count;		/* in: capacity of entries[];
				 * out: number of watched processes (may be
				 *      larger than the capacity: only the first
				 *      capacity entries were written)
				 */
	__u64 entries;		/* in: pointer to struct memmon_watch_entry[] */
};

#define MEMMON_WATCH_LIST_SIZE_VER0	16	/* first published */

/* ------------------------------------------------------------------------
 * What to record: MEMMON_IOC_SET_EVENTS (any time; takes effect for events
 * that start after it returns). Default after open(): everything.
 */

/* enum memmon_event: bit numbers of memmon_events.mask. */
enum memmon_event {
	MEMMON_EV_SYSCALL	= 0,	/* MEMMON_REC_SYSCALL (+ MEMMON_REC_PATH) */
	MEMMON_EV_FAULT		= 1,	/* MEMMON_REC_FAULT */
	MEMMON_EV_RSS		= 2,	/* MEMMON_REC_RSS */
	MEMMON_EV_LIFECYCLE	= 3,	/* MEMMON_REC_FORK/EXEC/EXIT/COMM */
	MEMMON_EV_MARK		= 4,	/* MEMMON_REC_MARK from MARK_WATCHERS */
	MEMMON_EV__COUNT
};

/* enum memmon_sys: the syscalls memmon hooks (bit numbers of syscalls). */
enum memmon_sys {
	MEMMON_SYS_MMAP		= 0,
	MEMMON_SYS_MUNMAP	= 1,
	MEMMON_SYS_MREMAP	= 2,
	MEMMON_SYS_BRK		= 3,
	MEMMON_SYS_MLOCK	= 4,
	MEMMON_SYS_MLOCK2	= 5,
	MEMMON_SYS_MUNLOCK	= 6,
	MEMMON_SYS_MLOCKALL	= 7,
	MEMMON_SYS_MUNLOCKALL	= 8,
	MEMMON_SYS_FSYNC	= 9,
	MEMMON_SYS_MADVISE	= 10,
	MEMMON_SYS_MPROTECT	= 11,
	MEMMON_SYS_MMAP2	= 12,	/* ia32 only: offset in 4 KiB pages */
	MEMMON_SYS_OLD_MMAP	= 13,	/* ia32 only: args in a user struct */
	MEMMON_SYS__COUNT
};

/* memmon_events.stack_flags (ABI 1.5) */
#define MEMMON_STACK_FAULTS	(1U << 0)	/* fault records carry the
						 * user stack too
						 */
#define MEMMON_STACK_FLAGS_MASK	(MEMMON_STACK_FAULTS)

#define MEMMON_STACK_DEPTH_MAX	32	/* frames beyond the first two */

struct memmon_events {
	__u32 size;		/* in: sizeof(struct memmon_events) */
	__u32 __reserved;	/* in: zero */
	__u64 mask;		/* in: 1 << enum memmon_event; unknown bits
				 *     are -EINVAL
				 */
	__u64 syscalls;		/* in: 1 << enum memmon_sys, which syscalls
				 *     MEMMON_EV_SYSCALL records; unknown bits
				 *     are -EINVAL
				 */
	/* ABI 1.5 (MEMMON_FEAT_USTACK) */
	__u32 stack_depth;	/* in: frames the frame-pointer walk adds to
				 *     each user stack, 0..MEMMON_STACK_DEPTH_MAX
				 *     (larger is -EINVAL); 0 = none: the stack
				 *     holds its first two entries only
				 */
	__u32 stack_flags;	/* in: MEMMON_STACK_FAULTS, or -EINVAL */
};

#define MEMMON_EVENTS_SIZE_VER0	24	/* first published */
#define MEMMON_EVENTS_SIZE_VER1	32	/* ABI 1.5: stack_depth, stack_flags */

/* ------------------------------------------------------------------------
 * Statistics: MEMMON_IOC_GET_STATS. The same counters are readable without
 * a syscall in each CPU's struct memmon_ring_page.
 *
 * Per CPU, always: produced == delivered + lost. "produced" counts every
 * event the session should have received on that CPU; LOST records are
 * bookkeeping and not counted as events.
 */

struct memmon_cpu_stats {
	__u64 produced;		/* out: events meant for this ring */
	__u64 delivered;	/* out: events written into the ring */
	__u64 lost;		/* out: events dropped (ring full or nested) */
	__u64 bytes;		/* out: bytes of delivered events */
};

struct memmon_stats {
	__u32 size;		/* in: sizeof(struct memmon_stats) */
	__u32 nr_cpus;		/* in: capacity of cpus[]; out: nr_cpus */
	__u64 cpus;		/* in: pointer to struct memmon_cpu_stats[] */
	__u32 cpu_stats_size;	/* in: sizeof(struct memmon_cpu_stats) */
	__u32 __reserved;	/* in: zero */
};

#define MEMMON_STATS_SIZE_VER0	24	/* first published */

/* ------------------------------------------------------------------------
 * User markers: MEMMON_IOC_MARK
 *
 * Without flags the marker goes into this session's ring on the caller's
 * CPU, whether or not the session is enabled (the rings are created if
 * needed). With MEMMON_MARK_WATCHERS it goes into every enabled session
 * that watches the caller and has MEMMON_EV_MARK.
 */

#define MEMMON_MARK_WATCHERS	(1U << 0)	/* into every session that
						 * watches the caller (not
						 * this one unless it does)
						 */
#define MEMMON_MARK_FLAGS_MASK	(MEMMON_MARK_WATCHERS)
#define MEMMON_MARK_MAX		256		/* payload bytes */

struct memmon_mark {
	__u32 size;		/* in: sizeof(struct memmon_mark) */
	__u32 flags;		/* in: MEMMON_MARK_* */
	__u64 data;		/* in: pointer to the payload */
	__u32 len;		/* in: payload bytes, 0..mark_max */
	__u32 __reserved;	/* in: zero */
};

#define MEMMON_MARK_SIZE_VER0	24	/* first published */

/* ------------------------------------------------------------------------
 * ioctls. Errors common to all: -ENOTTY unknown command, -EFAULT bad
 * pointer, -EINVAL bad flags/reserved/values, -E2BIG struct tail not zero.
 *
 * Others: open() -EPERM without CAP_PERFMON/CAP_SYS_ADMIN (module parameter
 * require_cap=1, the default), -EMFILE when max_sessions are open or the
 * opener's user holds max_user_sessions already. The first mmap(), read(),
 * MARK or ENABLE creates the rings: -EDQUOT when they would take the
 * user's ring memory past user_ring_budget plus what RLIMIT_MEMLOCK
 * leaves (memmon_info.user_ring_avail says how much is left).
 * WATCH_ADD -ESRCH no such process (or a thread id), -EACCES the caller may
 * not ptrace-read it, -EEXIST already watched, -ENOSPC max_watch reached.
 * WATCH_DEL -ESRCH no such process, -ENOENT not watched; flags ignored.
 * CONFIGURE -EBUSY rings exist, -EOPNOTSUPP MEMMON_FULL_OVERWRITE.
 *
 * Ending a recording (MEMMON_FEAT_FLUSH_LOST, ABI 1.2). A loss is reported
 * by the LOST record the next event on its CPU brings; at the end there is
 * no next event. So DISABLE, on an enabled session or not, waits until no
 * producer that saw the session enabled is still writing, then writes each
 * CPU's pending loss as a LOST record of its own where the ring has room
 * for it. To end with every loss in the stream: DISABLE, drain every ring,
 * DISABLE again (the rings have room now), drain again. After that, per
 * CPU, produced == the events read + the counts of the LOST records read,
 * unless a MARK of this session filled a ring in between: the ring page's
 * lost_pending then says what the stream is missing.
 */

#define MEMMON_IOC_MAGIC	0xBA

#define MEMMON_IOC_GET_INFO	_IOWR(MEMMON_IOC_MAGIC, 0x00, struct memmon_info)
#define MEMMON_IOC_CONFIGURE	_IOW(MEMMON_IOC_MAGIC, 0x01, struct memmon_config)
#define MEMMON_IOC_WATCH_ADD	_IOW(MEMMON_IOC_MAGIC, 0x02, struct memmon_watch)
#define MEMMON_IOC_WATCH_DEL	_IOW(MEMMON_IOC_MAGIC, 0x03, struct memmon_watch)
#define MEMMON_IOC_WATCH_LIST	_IOWR(MEMMON_IOC_MAGIC, 0x04, struct memmon_watch_list)
#define MEMMON_IOC_SET_EVENTS	_IOW(MEMMON_IOC_MAGIC, 0x05, struct memmon_events)
#define MEMMON_IOC_ENABLE	_IO(MEMMON_IOC_MAGIC, 0x06)
#define MEMMON_IOC_DISABLE	_IO(MEMMON_IOC_MAGIC, 0x07)
#define MEMMON_IOC_GET_STATS	_IOWR(MEMMON_IOC_MAGIC, 0x08, struct memmon_stats)
#define MEMMON_IOC_MARK		_IOW(MEMMON_IOC_MAGIC, 0x09, struct memmon_mark)

/* ------------------------------------------------------------------------
 * The mapping
 *
 * A session maps through two mmap() calls on its fd:
 *
 *   offset 0, consumer_size bytes, PROT_READ|PROT_WRITE, MAP_SHARED
 *   +-------------------------------------------------------------+
 *   | cpu 0: __u64 consumer_pos | pad to 64 bytes                  |
 *   | cpu 1: __u64 consumer_pos | pad to 64 bytes                  |
 *   | ...                       (rounded up to whole pages)        |
 *   +-------------------------------------------------------------+
 *
 *   offset producer_offset, producer_size bytes, PROT_READ only, MAP_SHARED
 *   +-------------------------------------------------------------+
 *   | struct memmon_mmap_header                       (one page)  |
 *   +-------------------------------------------------------------+ <- +0
 *   | cpu 0: struct memmon_ring_page                  (one page)  |   ring
 *   |        data, ring_size bytes                                |   stride
 *   |        the same data pages again (alias)                    |
 *   +-------------------------------------------------------------+ <- +stride
 *   | cpu 1: ...                                                  |
 *   +-------------------------------------------------------------+
 *
 * Block of CPU c starts at (producer area) + page_size + c * ring_stride;
 * its data at that + ring_data_offset. The data pages are mapped twice back
 * to back, so a record that starts at (pos & (ring_size - 1)) is contiguous
 * in memory even when it wraps: readers never reassemble records.
 *
 * Only the consumer area may be writable. The driver refuses: a writable or
 * executable producer mapping (and clears VM_MAYWRITE/VM_MAYEXEC so that
 * mprotect() cannot add them later), any size or offset other than these
 * exact ones, splitting a mapping (partial munmap/mprotect), mremap. A
 * mapping stays valid after close() of the fd until munmap(); it is not
 * inherited by fork() children (VM_DONTCOPY).
 *
 * Positions are free-running byte counts (never wrap in practice: 2^64).
 */

#define MEMMON_MMAP_MAGIC	0x4d4d4f4eU	/* "MMON" */
#define MEMMON_CONSUMER_STRIDE	64		/* bytes per consumer_pos */

/* enum memmon_clock: the clock of every time_ns. */
enum memmon_clock {
	MEMMON_CLOCK_MONOTONIC	= 1,	/* clock_gettime(CLOCK_MONOTONIC) */
};

struct memmon_mmap_header {
	__u32 magic;		/* out: MEMMON_MMAP_MAGIC */
	__u16 abi_major;	/* out */
	__u16 abi_minor;	/* out */
	__u32 header_size;	/* out: sizeof(struct memmon_mmap_header) */
	__u32 nr_cpus;		/* out: number of CPU blocks */
	__u64 ring_size;	/* out: data bytes per CPU, power of two */
	__u64 ring_stride;	/* out: bytes between CPU blocks */
	__u64 ring_data_offset;	/* out: data offset inside a CPU block */
	__u32 clock;		/* out: enum memmon_clock */
	__u32 page_size;	/* out */
};

/* One page per CPU, written only by that CPU's producer. */
struct memmon_ring_page {
	__u64 producer_pos;	/* out: bytes committed; protocol [B]/[C] */
	__u64 __pad[7];		/* its own cache line */
	struct memmon_cpu_stats stats;	/* out: monotonic, read racily */
	__u64 lost_pending;	/* out: events dropped, not yet reported by
				 *      a LOST record in the stream
				 */
	/* ABI 1.3, MEMMON_FULL_OVERWRITE only (zero otherwise) */
	__u64 tail_pos;		/* out: the oldest record kept; [F]/[G] */
	__u64 overwritten;	/* out: events lost whose record, or whose
				 *      LOST record, was written over (part of
				 *      stats.lost, in no LOST record)
				 */
};

/*
 * The ring protocol (per CPU ring; one producer: the kernel, on that CPU,
 * possibly nested by interrupts; one consumer per session).
 *
 * Letter  Side      Operation                          Pairs with  Ensures
 * ------  --------  ---------------------------------  ----------  -----------
 *  [A]    kernel    load-acquire consumer_pos before   [D]         the consumer
 *                   reserving space                                has finished
 *                                                                  reading what
 *                                                                  is reused
 *  [B]    kernel    store-release producer_pos after   [C]         records below
 *                   the outermost writer on the CPU                producer_pos
 *                   finished its record(s)                         are complete
 *  [C]    consumer  load-acquire producer_pos before   [B]
 *                   reading records below it
 *  [D]    consumer  store-release consumer_pos after   [A]
 *                   it is done with records below it
 *  [F]    kernel    overwrite: store tail_pos, then    [G]         a record
 *                   smp_wmb(), before writing over                 copied below
 *                   the space it released                          tail_pos
 *  [G]    consumer  overwrite: copy records, then      [F]         read after
 *                   fence(acquire) and re-read                     the copy is
 *                   tail_pos                                       whole
 *  [E]    kernel    poll(): add to the wait queue,     wake_up()   no lost
 *                   then read positions; producer:     from irq    wakeup: the
 *                   [B] then irq_work → wake_up()      work        wq lock
 *                                                                  orders both
 *
 * The kernel never trusts consumer_pos: any value that is not within
 * [producer_pos - ring_size, producer_pos] makes the ring look full, so a
 * hostile consumer can only lose its own events.
 *
 * Userspace with C11/GCC atomics:
 *   prod = __atomic_load_n(&ring_page->producer_pos, __ATOMIC_ACQUIRE);   [C]
 *   while (cons < prod) { rec = data + (cons & (ring_size - 1));
 *                         ...; cons += rec->size; }
 *   __atomic_store_n(consumer_pos, cons, __ATOMIC_RELEASE);               [D]
 *
 * poll()/epoll: EPOLLIN when a ring of the session holds at least
 * wakeup_bytes, or is not empty and has lost_pending != 0 (an empty ring
 * has nothing to read until the next event brings the LOST record; saying
 * readable then would make pollers spin), or is not empty when a tick of
 * the module parameter wakeup_ms (default 100; 0: off) found it so while
 * someone waited: a record reaches a sleeping poll() or read() within
 * about wakeup_ms however few there are. The kernel wakes sleepers each
 * time a ring's producer passes another wakeup_bytes (deferred through
 * irq_work, so producers never take a lock), on the first loss, and at
 * those ticks, which run only while a reader waits.
 *
 * read(): copies whole records (never a partial one) from the rings into
 * the buffer, advancing the same consumer_pos words. -EINVAL if the buffer
 * cannot hold the next record; blocks unless O_NONBLOCK (-EAGAIN) until
 * poll() would report EPOLLIN. Use
 * either read() or the mapping as the consumer, not both at once.
 */

/* ------------------------------------------------------------------------
 * Records. 8-byte aligned, variable length; every record starts with the
 * header. A reader skips types it does not know by hdr.size.
 */

/* enum memmon_rec_type, stored in memmon_rec_header.type (__u16). */
enum memmon_rec_type {
	MEMMON_REC_LOST		= 1,	/* struct memmon_rec_lost */
	MEMMON_REC_MARK		= 2,	/* struct memmon_rec_mark */
	MEMMON_REC_SYSCALL	= 3,	/* struct memmon_rec_syscall */
	MEMMON_REC_FAULT	= 4,	/* struct memmon_rec_fault */
	MEMMON_REC_RSS		= 5,	/* struct memmon_rec_rss */
	MEMMON_REC_FORK		= 6,	/* struct memmon_rec_fork */
	MEMMON_REC_EXEC		= 7,	/* struct memmon_rec_exec */
	MEMMON_REC_EXIT		= 8,	/* struct memmon_rec_exit */
	MEMMON_REC_PATH		= 9,	/* struct memmon_rec_path */
	MEMMON_REC_COMM		= 10,	/* ABI 1.4: struct memmon_rec_comm */
	MEMMON_REC_AUXV		= 11,	/* ABI 1.5: struct memmon_rec_auxv */
	MEMMON_REC__COUNT
};

#define MEMMON_REC_ALIGN	8

struct memmon_rec_header {
	__u32 size;		/* bytes of the whole record, header included,
				 * a multiple of MEMMON_REC_ALIGN
				 */
	__u16 type;		/* enum memmon_rec_type */
	__u16 cpu;		/* CPU whose ring holds the record */
	__u64 time_ns;		/* CLOCK_MONOTONIC, ns */
	__u32 tgid;		/* process in the session opener's PID ns
				 * (0: not visible there, or a LOST record)
				 */
	__u32 tid;		/* thread, same namespace */
};

/* Events dropped on this CPU since the previous LOST record. */
struct memmon_rec_lost {
	struct memmon_rec_header hdr;
	__u64 count;		/* events dropped */
	__u64 first_ns;		/* time of the first dropped event */
	__u64 last_ns;		/* time of the last dropped event */
};

/* MEMMON_IOC_MARK payload; data[] is padded with zeros to 8 bytes. */
struct memmon_rec_mark {
	struct memmon_rec_header hdr;
	__u32 len;		/* payload bytes */
	__u32 flags;		/* MEMMON_MARK_* it was written with */
	__u8 data[];
};

/* memmon_rec_syscall.flags */
#define MEMMON_SYSF_COMPAT	(1U << 0)	/* an ia32 task's call; args
						 * are zero-extended 32-bit
						 */
#define MEMMON_SYSF_FILE	(1U << 1)	/* aux = { dev, ino } of the
						 * mapped file (mmap family)
						 */
#define MEMMON_SYSF_USTACK	(1U << 2)	/* ABI 1.5: a struct
						 * memmon_user_stack follows
						 * the record's fixed part
						 */

/*
 * One record per completed call. args[] are the raw register arguments in
 * the syscall's order (mmap: addr, len, prot, flags, fd, off). aux[]:
 *  - mmap/mmap2/old_mmap with MEMMON_SYSF_FILE: aux[0] = device (as
 *    st_dev, new_encode_dev), aux[1] = inode; a MEMMON_REC_PATH for that
 *    (dev, ino) precedes the first such record in each session;
 *  - brk: aux[0] = the break before the call, aux[1] = after it;
 *  - otherwise zero.
 */
struct memmon_rec_syscall {
	struct memmon_rec_header hdr;
	__u32 sys;		/* enum memmon_sys */
	__u32 flags;		/* MEMMON_SYSF_* */
	__u64 args[6];
	__s64 ret;		/* return value, or -errno */
	__u64 duration_ns;	/* entry to return */
	__u64 aux[2];
};

/* memmon_rec_fault.access */
#define MEMMON_FAULT_READ	(1U << 0)
#define MEMMON_FAULT_WRITE	(1U << 1)
#define MEMMON_FAULT_EXEC	(1U << 2)

/* enum memmon_fault_class, stored in memmon_rec_fault.fclass (__u32). */
enum memmon_fault_class {
	MEMMON_FCLASS_NONE	= 0,	/* no VMA: bad address */
	MEMMON_FCLASS_ANON	= 1,	/* anonymous memory, no swap involved */
	MEMMON_FCLASS_SWAP	= 2,	/* anonymous page read back from swap */
	MEMMON_FCLASS_FILE	= 3,	/* file-backed mapping */
	MEMMON_FCLASS_SHMEM	= 4,	/* shmem/tmpfs/SysV shm/MAP_SHARED anon */
	MEMMON_FCLASS_OTHER	= 5,	/* special: PFN maps, device memory */
};

/* enum memmon_fault_result, stored in memmon_rec_fault.result (__u32). */
enum memmon_fault_result {
	MEMMON_FRES_HANDLED	= 0,	/* the page is mapped */
	MEMMON_FRES_RETRY	= 1,	/* dropped mmap_lock; retried (the
					 * retry is its own record)
					 */
	MEMMON_FRES_SIGSEGV	= 2,
	MEMMON_FRES_SIGBUS	= 3,
	MEMMON_FRES_OOM		= 4,
	MEMMON_FRES_OTHER	= 5,
};

/* memmon_rec_fault.flags */
#define MEMMON_FAULTF_MAJOR	(1U << 0)	/* counted as major fault */
#define MEMMON_FAULTF_KERNEL	(1U << 1)	/* taken in kernel mode on a
						 * user address (copy_*_user)
						 */
#define MEMMON_FAULTF_PFN	(1U << 2)	/* pfn is valid; only in
						 * MEMMON_SESSF_PFN sessions
						 */
#define MEMMON_FAULTF_NEWPAGE	(1U << 3)	/* the page was allocated by
						 * this fault
						 */
#define MEMMON_FAULTF_USTACK	(1U << 4)	/* ABI 1.5: a struct
						 * memmon_user_stack follows
						 * the record's fixed part
						 */

struct memmon_rec_fault {
	struct memmon_rec_header hdr;
	__u64 addr;		/* faulting user address */
	__u64 ip;		/* user instruction pointer (kernel faults:
				 * the user ip of the syscall)
				 */
	__u32 access;		/* MEMMON_FAULT_* */
	__u32 fclass;		/* enum memmon_fault_class */
	__u32 result;		/* enum memmon_fault_result */
	__u32 flags;		/* MEMMON_FAULTF_* */
	__u64 duration_ns;	/* time in the fault handler */
	__u64 pfn;		/* backing page frame, if MEMMON_FAULTF_PFN */
};

/* Resident memory of a process, bytes (coalesced: at most one per tick). */
struct memmon_rec_rss {
	struct memmon_rec_header hdr;
	__u64 anon;
	__u64 file;
	__u64 shmem;
	__u64 swap;		/* swap entries, bytes */
};

/* memmon_rec_fork.flags */
#define MEMMON_FORKF_THREAD	(1U << 0)	/* CLONE_THREAD: same process */
#define MEMMON_FORKF_VM		(1U << 1)	/* CLONE_VM: shares the mm */

/*
 * hdr.tgid/tid is the parent. Like every PID in every record, the child's
 * are numbers in the session opener's PID namespace, 0 where the child is
 * not visible there.
 */
struct memmon_rec_fork {
	struct memmon_rec_header hdr;
	__u32 child_tgid;
	__u32 child_tid;
	__u32 flags;		/* MEMMON_FORKF_* */
	__u32 __reserved;
};

/* A successful execve; path[] is NUL-terminated, zero-padded to 8 bytes. */
struct memmon_rec_exec {
	struct memmon_rec_header hdr;
	__u32 path_len;		/* bytes of path, NUL excluded */
	__u32 __reserved;
	char path[];
};

/* memmon_rec_exit.flags */
#define MEMMON_EXITF_GROUP	(1U << 0)	/* last thread: process gone */
#define MEMMON_EXITF_REVOKED	(1U << 1)	/* ABI 1.1, with GROUP: the
						 * process lives on, but this
						 * session may no longer watch
						 * it: it exec'd a setuid,
						 * setgid or file-capability
						 * image or became
						 * non-dumpable (code 0, no
						 * peaks); no record of it
						 * follows
						 */

struct memmon_rec_exit {
	struct memmon_rec_header hdr;
	__u32 code;		/* wait status (as from waitpid) */
	__u32 flags;		/* MEMMON_EXITF_* */
	__u64 peak_rss;		/* bytes, hiwater_rss (GROUP only) */
	__u64 peak_vm;		/* bytes, hiwater_vm (GROUP only) */
};

/* A file's path, emitted once per (dev, ino) per session before its first
 * use; path[] is NUL-terminated, zero-padded to 8 bytes.
 */
struct memmon_rec_path {
	struct memmon_rec_header hdr;
	__u64 dev;
	__u64 ino;
	__u32 path_len;		/* bytes of path, NUL excluded */
	__u32 __reserved;
	char path[];
};

/* enum memmon_comm_why, stored in memmon_rec_comm.why (__u32). */
enum memmon_comm_why {
	MEMMON_COMM_WATCH	= 0,	/* the thread's name when WATCH_ADD
					 * began watching its process
					 */
	MEMMON_COMM_EXEC	= 1,	/* the name exec gave it (after the
					 * EXEC record)
					 */
	MEMMON_COMM_RENAME	= 2,	/* PR_SET_NAME, pthread_setname_np(),
					 * a write to /proc/PID/task/TID/comm
					 */
};

#define MEMMON_COMM_LEN		16	/* the kernel's TASK_COMM_LEN */

/*
 * ABI 1.4 (MEMMON_FEAT_COMM): a thread's name (comm), hdr.tgid/tid the
 * thread's. Written once per change, never per event, with the lifecycle
 * records (MEMMON_EV_LIFECYCLE):
 *  - WATCH: one per thread of a process that WATCH_ADD starts to watch,
 *    into the adding session only: at the WATCH_ADD if the session is
 *    enabled, else at its next ENABLE; and one per thread of every watched
 *    process at an ENABLE that follows a DISABLE (renames made while the
 *    session was disabled are not recorded, their result is).
 *  - EXEC: one after each EXEC record, the new image's name.
 *  - RENAME: one per rename of a watched thread, whoever renames it.
 * A thread or child that a fork record introduces gets none: it starts
 * with its creator's name, the one last recorded for hdr.tid of the FORK.
 * comm[] is NUL-terminated and zero-padded (at most 15 characters).
 */
struct memmon_rec_comm {
	struct memmon_rec_header hdr;
	__u32 why;		/* enum memmon_comm_why */
	__u32 __reserved;
	char comm[MEMMON_COMM_LEN];
};

/* memmon_user_stack.flags */
#define MEMMON_USTACK_SP	(1U << 0)	/* ip[1] is the word at the
						 * user stack pointer
						 */
#define MEMMON_USTACK_TRUNCATED	(1U << 1)	/* the walk stopped at
						 * stack_depth with frames left
						 */
#define MEMMON_USTACK_COMPAT	(1U << 2)	/* an ia32 task: ip[0] only */

/*
 * ABI 1.5 (MEMMON_FEAT_USTACK): the user stack of the thread a syscall or
 * fault record is about, at the point the record describes, innermost
 * first. It follows the record's fixed part (at sizeof(struct
 * memmon_rec_syscall) or sizeof(struct memmon_rec_fault)) when the record's
 * flags say MEMMON_SYSF_USTACK or MEMMON_FAULTF_USTACK; hdr.size covers it.
 * Syscall records always carry one; fault records when the session set
 * MEMMON_STACK_FAULTS.
 *  - ip[0]: the user instruction pointer: where the syscall returns to (in
 *    the libc wrapper that made it), or the faulting instruction (a fault in
 *    kernel mode: the syscall's return address).
 *  - ip[1], with MEMMON_USTACK_SP: the word at the user stack pointer. When
 *    ip[0] lies in a function that keeps no frame (libc's syscall wrappers)
 *    it is that function's return address, the call site a user asks for;
 *    otherwise it is data. The kernel cannot tell: a reader keeps it only if
 *    it points into an executable mapping, just after a call instruction.
 *  - then up to memmon_events.stack_depth return addresses read by following
 *    the frame-pointer chain from the user's rbp, with non-faulting reads;
 *    the walk stops at the first frame that is unreadable, not above the
 *    previous one, or misaligned, and at a zero return address. Code built
 *    without frame pointers breaks the chain (its entries are then
 *    meaningless beyond the last function that kept a frame).
 * Read from user memory the thread can change: a hostile or broken program
 * controls every entry beyond ip[0].
 */
struct memmon_user_stack {
	__u16 nr;		/* entries in ip[] */
	__u16 flags;		/* MEMMON_USTACK_* */
	__u32 __reserved;
	__u64 ip[];
};

/*
 * ABI 1.5 (MEMMON_FEAT_USTACK): where a program was placed, from its
 * auxiliary vector (getauxval(3)): written after the EXEC record's COMM,
 * and with the WATCH COMM of a process WATCH_ADD starts to watch (main
 * thread only). The kernel maps the program and its interpreter itself, so
 * no syscall record shows where: with the program's ELF file, phdr gives
 * its load bias (phdr minus the p_vaddr of its PT_PHDR, or of the bytes at
 * e_phoff), base the interpreter's. A value the vector lacks is 0.
 */
struct memmon_rec_auxv {
	struct memmon_rec_header hdr;
	__u64 phdr;		/* AT_PHDR: the program headers in memory */
	__u64 phent;		/* AT_PHENT */
	__u64 phnum;		/* AT_PHNUM */
	__u64 entry;		/* AT_ENTRY: the program's entry point */
	__u64 base;		/* AT_BASE: the interpreter's load address */
	__u64 vdso;		/* AT_SYSINFO_EHDR: the vDSO's ELF header */
};

#endif /* MEMMON_UAPI_LINUX_MEMMON_H */
