/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model behind `memmon report`: per process, what a trace shows it did
 * to its address space (calls, bytes, faults, latency, hot regions, the
 * regions still mapped, growth), built in one streaming pass over the
 * records in time order. What is kept is per process and per mapped region,
 * never per record. The views (report_text.c, report_json.c) only read it.
 *
 * The address-space model only knows what the trace shows: mappings made
 * before tracing began are invisible, so the tracked peak virtual size is
 * of the traced mappings; the kernel's own peak_vm/peak_rss at exit are
 * kept beside it when the process exited during the trace.
 */
#ifndef MEMMON_TOOLS_REPORT_MODEL_H
#define MEMMON_TOOLS_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/memmon.h>
#include <memmon/decode.h>
#include <memmon/trace.h>
#include "rec_filter.h"
#include "region_map.h"
#include "report_latency.h"
#include "report_leaks.h"
#include "report_sites.h"

#define REPORT_HOT_REGIONS	10
#define REPORT_LAT_BUCKETS	64

struct report_proc {
	/*
	 * What every record touches first (the hash chain, the times), then
	 * what every fault does (the map, the counters): a fault's updates
	 * fall on a few adjacent lines of a struct of ~2 KiB.
	 */
	__u32 tgid;
	__u32 parent;
	struct report_proc *next;
	__u64 first_ns, last_ns;
	__u64 faults_total;
	struct region_map map;	/* the live regions */
	__u64 faults[MEMMON_FCLASS_OTHER + 2][2];	/* [class][major] */
	__u64 results[MEMMON_FRES_OTHER + 2];
	__u64 lat[REPORT_LAT_BUCKETS];
	__u64 calls[MEMMON_SYS__COUNT];
	__u64 failed[MEMMON_SYS__COUNT];
	__u64 call_bytes[MEMMON_SYS__COUNT];
	__u64 mapped, unmapped, locked, unlocked;
	__u64 vm_now, vm_peak;
	__u64 rss_peak;
	__u64 marks;
	char *exe;
	char comm[MEMMON_COMM_LEN];	/* the name, "" if none was recorded */
	bool comm_leader;		/* comm is the main thread's */
	bool exited;
	__u32 exit_code;
	__u64 peak_rss_kernel, peak_vm_kernel;
	bool loading;			/* exec'd, the loader not done yet */
	__u64 anon_now;			/* anonymous bytes mapped (the model's) */
	struct lat_set sys_lat;
	struct growth rss_g, anon_g;
	struct region hot[REPORT_HOT_REGIONS];	/* retired regions, most faults */
	size_t nr_hot;
	size_t hot_min;			/* the fewest faults in a full hot[] */
};

struct report {
	const char *path;
	struct report_proc *last;		/* the last record's process: a hint */
	struct report_proc *buckets[1024];
	struct report_proc **list;
	size_t nr_procs;
	struct memmon_paths *paths;
	__u64 *lost;			/* per CPU, from LOST records */
	unsigned int nr_cpus;
	__s64 rt_off;
	struct rec_filter f;
	struct sites sites;		/* call sites; fed every record */
	int err;
};

/* The --sort keys, in the order report_sort() numbers them. */
extern const char *const report_sort_keys[];
extern const unsigned int report_nr_sort_keys;

/* Before the first record: one LOST counter per CPU of in. -ENOMEM or 0. */
int report_begin(struct report *rp, const struct memmon_trace_info *in);
/*
 * One record (a rec_pipe_for_each() callback; ctx is the report). Returns
 * rp->err: the first error (-ENOMEM) the model hit, or 0.
 */
int report_add(void *ctx, const struct memmon_rec_header *rec);
/* After the last record: the kernel's per-CPU lost counts from the meta. */
void report_merge_kernel_lost(struct report *rp, const char *meta_text);
/* The events lost over every CPU. */
__u64 report_lost_total(const struct report *rp);
/* rp->list by report_sort_keys[key], most first; ties (and key 0) by pid. */
void report_sort(struct report *rp, unsigned int key);
/* Free what the model holds (not rp->f); rp may be half built. */
void report_fini(struct report *rp);

/* Up to REPORT_HOT_REGIONS regions, live and retired, most faults first,
 * none without a fault; *n of them. Caller frees; NULL: out of memory.
 */
struct region *report_hot_list(const struct report_proc *p, size_t *n);
/* The regions still mapped, split (report_leaks.h). Caller frees *ls. */
int report_proc_split(const struct report_proc *p, struct leak_split *ls);
/* "rwx" with '-' for what prot lacks, in b[4]. */
void report_prot_str(char *b, __u32 prot);
/* What a region is: [heap], [anon], [shared anon], its path or [file]. */
const char *report_region_what(const struct report *rp, const struct region *r);

/* The views: the processes rp->list[0..shown), of records records. */
void report_print_text(const struct report *rp, const struct memmon_trace_info *in,
		       long records, size_t shown);
void report_print_json(const struct report *rp, const struct memmon_trace_info *in,
		       const char *meta_text, long records, size_t shown);

#endif
