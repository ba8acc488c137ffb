/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `memmon report` says about memory kept: the regions still mapped
 * at exit (or at the end of the trace) split three ways, and the growth
 * of a process over time.
 *
 *  - leak candidates: anonymous and heap (brk) memory never released,
 *    grouped by kind ([anon], [shared anon], [heap]) and call site (the
 *    region's site, report_sites.h) when the record that mapped it had a
 *    usable stack; otherwise by kind, size, prot and mmap flags. Each
 *    group has its count, bytes and the first and last time one was
 *    mapped.
 *  - file mappings: libraries, their .bss (an anonymous MAP_FIXED over a
 *    file mapping: region.image) and data files. Listed, not leaks.
 *  - startup memory: anonymous regions the dynamic loader mapped (TLS,
 *    its own allocations) between exec and the end of loading, which is
 *    taken as the first munmap of a file mapping (ld.so drops
 *    ld.so.cache when it is done) or the first heap growth, whichever
 *    comes first. A heuristic, named as such in the output.
 *
 * Growth: a series of (time, value) samples per quantity, at most
 * GROWTH_MAX_SAMPLES kept (past that every other one is dropped, the
 * first and the last always kept), gives the slope over the run (last -
 * first over the time between) and the window of a tenth of the run
 * with the steepest rise.
 */
#ifndef MEMMON_TOOLS_REPORT_LEAKS_H
#define MEMMON_TOOLS_REPORT_LEAKS_H

#include <stddef.h>
#include <linux/types.h>
#include "region_map.h"

enum leak_kind {
	LEAK_HEAP,
	LEAK_ANON,
	LEAK_SHARED_ANON,
};

struct leak_group {
	enum leak_kind kind;
	__u32 site;		/* report_sites.h's number; 0: none */
	__u64 size;		/* of each region; 0: a site's of several sizes */
	__u32 prot, flags;
	__u64 count, bytes;
	__u64 first_ns, last_ns;	/* mapped_ns of the first and last */
};

struct leak_split {
	struct leak_group *groups;	/* most bytes first */
	size_t nr_groups;
	__u64 leak_count, leak_bytes;
	struct region *files;		/* by address */
	size_t nr_files;
	__u64 file_bytes;
	struct region *startup;
	size_t nr_startup;
	__u64 startup_bytes;
};

const char *leak_kind_name(enum leak_kind k);
/* Split the live regions r[0..n) (by address). -ENOMEM or 0. */
int leak_split(struct leak_split *ls, const struct region *r, size_t n);
void leak_split_free(struct leak_split *ls);

#define GROWTH_MAX_SAMPLES	1024

struct growth {
	__u64 *t, *v;
	size_t n;
};

struct growth_stats {
	bool have;		/* two samples at least */
	__u64 first_ns, last_ns;
	__u64 first, last, peak;
	double slope;		/* bytes per second over the run */
	bool have_window;
	__u64 win_start_ns, win_end_ns;
	__s64 win_delta;	/* bytes gained in the window */
	double win_slope;	/* bytes per second in the window */
};

/* A sample at time t (not before the previous one). -ENOMEM or 0. */
int growth_add(struct growth *g, __u64 t, __u64 v);
void growth_stats(const struct growth *g, struct growth_stats *st);
void growth_free(struct growth *g);

#endif
