/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Syscall latency for `memmon report`: per syscall name, the count, the
 * failures, the total, min and max duration (exact) and a log-linear
 * histogram for the percentiles.
 *
 * Precision. Below 16 ns every value has a bucket of its own; above, each
 * power of two [2^e, 2^(e+1)) is cut in 16 equal buckets, so a bucket is
 * at most 1/16 of its low edge wide. A percentile is the low edge of the
 * bucket holding the nearest-rank value, clamped to [min, max]: it is at
 * most 6.25% below the true value and never above it, and exact for
 * durations with at most 5 significant bits (e.g. 1024, 1536, 3072).
 * 976 buckets cover every __u64; they are allocated on a syscall's first
 * record, per process and syscall that occurs.
 */
#ifndef MEMMON_TOOLS_REPORT_LATENCY_H
#define MEMMON_TOOLS_REPORT_LATENCY_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include <linux/types.h>
#include <linux/memmon.h>

#define LAT_SUB_BITS	4
#define LAT_SUB		(1U << LAT_SUB_BITS)
#define LAT_NR_BUCKETS	((64 - LAT_SUB_BITS + 1) * LAT_SUB)

struct lat_hist {
	__u64 count, errors;
	__u64 total_ns, min_ns, max_ns;
	__u64 buckets[LAT_NR_BUCKETS];
};

/* One process's (or any group's) histograms, by enum memmon_sys. */
struct lat_set {
	struct lat_hist *sys[MEMMON_SYS__COUNT];
	__u64 total_ns;		/* over every syscall */
	__u64 count;
};

unsigned int lat_bucket(__u64 ns);
__u64 lat_bucket_low(unsigned int b);

/* One call of sys that took ns. -ENOMEM, or 0. */
int lat_add(struct lat_set *s, unsigned int sys, __u64 ns, bool failed);
/* The p-th percentile (0 < p <= 100) by nearest rank; 0 when empty. */
__u64 lat_percentile(const struct lat_hist *h, double p);
void lat_set_free(struct lat_set *s);

/* A table: call, count, errors, total, p50, p99, max; a line each. */
void lat_print(FILE *out, const struct lat_set *s, const char *indent);
/* {"mmap":{"count":..,"errors":..,"total_ns":..,"p50_ns":..,...},...} */
json_t *lat_json(const struct lat_set *s);

#endif
