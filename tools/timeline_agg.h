/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timeline_agg: a trace's records folded, in one streaming pass, into what
 * `memmon timeline` draws: per process lanes of time buckets, per thread
 * lifetimes, a bounded sample of individual calls, markers and lost
 * intervals. Memory is bounded by the limits below, never by the trace's
 * length; memmon(1) tells users what they bound.
 */
#ifndef MEMMON_TOOLS_TIMELINE_AGG_H
#define MEMMON_TOOLS_TIMELINE_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/memmon.h>
#include <memmon/decode.h>

/*
 * Buckets per lane at the finest level. The bucket width starts at 1 us and
 * doubles (adjacent buckets merged) whenever a record falls past the last
 * bucket or the bucket pages exceed TL_BUCKET_BUDGET; so the whole trace
 * always spans at most TL_NBUCKETS buckets of one width.
 */
#define TL_NBUCKETS		4096
#define TL_PAGE			32		/* buckets per lazily allocated page */
/*
 * Bytes of bucket pages, all lanes: 8 MiB is ~40k buckets, ~5 MiB of JSON
 * in the page, which keeps it under 25 MiB with the detail. A few
 * processes keep all TL_NBUCKETS; many share the budget at a coarser grid.
 */
#define TL_BUCKET_BUDGET	(8UL << 20)
#define TL_MAX_PROCS		2048		/* lanes; more fold into the last */
#define TL_MAX_THREADS		256		/* thread lanes per process */
#define TL_MAX_MARKS		10000
#define TL_MAX_LOST		4096		/* lost intervals; then merged */
#define TL_MAX_EVENTS		64		/* exec/fork events per process */
#define TL_DETAIL_DEFAULT	100000
#define TL_FOLD_TGID		0xffffffffU	/* the lane past TL_MAX_PROCS */
/*
 * 112 B each: 28 MiB at most, 3.5 more of exact windows, beside ~12 MiB of
 * buckets and rec_pipe's batches and the reader's ~9 MiB of mapped chunks:
 * ~51 MiB of peak RSS on a 4 GiB trace, under the 64 MiB bound
 * (tests/timeline/run's MEMMON_TIMELINE_BIG checks it at this value).
 */
#define TL_DETAIL_MAX		250000

/*
 * Exact windows: besides the uniform sample, every call of a few runs of
 * TL_EXACT_BLOCK consecutive calls (so short windows of time where calls
 * are dense), a uniform sample of those runs, at most min(TL_EXACT_CALLS,
 * max_detail) calls: zoomed into one, the page draws every call. 32768
 * calls are 3.5 MiB of memory and ~4 MiB of page.
 */
#define TL_EXACT_BLOCK		1024
#define TL_EXACT_CALLS		32768

/* Syscall kinds, the page's colours. */
enum tl_kind {
	TL_K_MMAP, TL_K_MUNMAP, TL_K_BRK, TL_K_MREMAP, TL_K_MLOCK,
	TL_K_MADVISE, TL_K_MPROTECT, TL_K_FSYNC, TL_K__COUNT
};

/* Fault classes of the heat strip. */
enum tl_class { TL_C_ANON, TL_C_FILE, TL_C_SHMEM, TL_C_SWAP, TL_C_OTHER, TL_C__COUNT };

/* Fault latency: bucket k counts durations < 2^(k+9) ns; the last, the rest. */
#define TL_LAT		16

struct tl_bucket {
	__u32 faults[TL_C__COUNT][2];	/* [class][major] */
	__u32 calls[TL_K__COUNT];
	__u32 failed;
	__u32 lat[TL_LAT];
	__u64 mapped, unmapped;
	__u64 rss[4];			/* last RSS record: anon, file, shmem, swap */
	bool has_rss;
};

struct tl_thread {
	__u32 tid;
	bool exited;
	__u64 first_ns, last_ns;
	__u64 calls, faults;
};

struct tl_event {
	__u64 t;
	__u32 child;		/* fork: the child; exec: 0 */
	char *path;		/* exec: the new image */
};

struct tl_proc {
	__u32 tgid;
	__u32 parent;
	struct tl_proc *next;		/* hash chain */
	__u64 first_ns, last_ns;
	char *exe;
	bool exited;
	__u32 exit_code;
	__u64 exit_ns;
	/* totals, as memmon report counts them */
	__u64 calls[MEMMON_SYS__COUNT];
	__u64 failed[MEMMON_SYS__COUNT];
	__u64 faults[MEMMON_FCLASS_OTHER + 2][2];
	__u64 faults_total;
	__u64 mapped, unmapped;
	__u64 records;
	struct tl_thread *threads;
	size_t nr_threads;
	size_t last_thread;		/* the last one found: a hint */
	__u64 threads_dropped;		/* records of threads past the cap */
	struct tl_event ev[TL_MAX_EVENTS];
	size_t nr_ev;
	__u64 ev_dropped;
	struct tl_bucket *pages[TL_NBUCKETS / TL_PAGE];
};

/* A run of consecutive calls all kept, at exact[off..off+n). */
struct tl_window {
	__u64 block;			/* calls before it / TL_EXACT_BLOCK */
	__u64 first_ns, last_ns;	/* its first and last call's record time */
	size_t off, n;
};

struct tl_mark {
	__u64 t;
	__u32 tgid, tid;
	char *text;
};

struct tl_lost {
	__u64 first_ns, last_ns, count;
	__u32 cpu;
};

struct tl_agg {
	/* the time grid: bucket i is [t0 + i * width, t0 + (i + 1) * width) */
	__u64 t0, t_last;
	bool started;
	__u64 width;
	size_t pages_used;

	struct tl_proc *buckets[1024];
	struct tl_proc **procs;		/* in order of first appearance */
	size_t nr_procs;
	struct tl_proc *last;
	__u64 records_folded;		/* of tgids past TL_MAX_PROCS */

	struct tl_mark *marks;
	size_t nr_marks;
	__u64 marks_dropped;

	struct tl_lost *lost;
	size_t nr_lost;
	__u64 *lost_per_cpu;
	unsigned int nr_cpus;

	/*
	 * Detail: a uniform sample of the calls, at most max_detail. A call
	 * is kept when its hash is below `keep`; when the array is full,
	 * keep halves and the array is filtered, so the sample stays uniform
	 * over the whole trace. Failed calls hash lower: they are the ones
	 * people hover.
	 */
	struct memmon_rec_syscall *detail;
	size_t nr_detail, max_detail;
	__u64 keep;			/* 2^32: everything */
	__u64 calls_total;

	/*
	 * Exact windows: blocks of calls kept whole when their hash is below
	 * xkeep, halved (and the kept blocks filtered) when the next block
	 * would not fit; the block being filled is always the last window.
	 */
	struct memmon_rec_syscall *exact;
	size_t nr_exact, max_exact;
	struct tl_window *win;
	size_t nr_win;
	__u64 xkeep;
	bool xcur;			/* the current block is kept */

	struct memmon_paths *paths;
	__u64 records;
	int err;
};

int tl_agg_init(struct tl_agg *a, unsigned int nr_cpus, size_t max_detail);
void tl_agg_fini(struct tl_agg *a);
/* memmon_record_fn: fold one record in. */
int tl_agg_record(void *ctx, const struct memmon_rec_header *rec);
/* After the last record: sort what is shown in order (detail by time). */
void tl_agg_finish(struct tl_agg *a);
/* Bucket i of p, NULL if nothing fell in it. */
const struct tl_bucket *tl_bucket_get(const struct tl_proc *p, size_t i);
/* enum tl_kind of an enum memmon_sys; -1 for an unknown call. */
int tl_sys_kind(__u32 sys);
const char *tl_kind_name(unsigned int k);
const char *tl_class_name(unsigned int c);

#endif
