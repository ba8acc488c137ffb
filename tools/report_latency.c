// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall latency histograms of `memmon report` (see report_latency.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <memmon/decode.h>
#include "report_latency.h"

unsigned int lat_bucket(__u64 ns)
{
	unsigned int e;

	if (ns < LAT_SUB)
		return (unsigned int)ns;
	e = 63 - (unsigned int)__builtin_clzll(ns);
	/* the 4 bits under the leading one pick the sixteenth of [2^e, 2^e+1) */
	return (e - LAT_SUB_BITS + 1) * LAT_SUB +
	       (unsigned int)((ns >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

__u64 lat_bucket_low(unsigned int b)
{
	unsigned int e;

	if (b < LAT_SUB)
		return b;
	e = b / LAT_SUB + LAT_SUB_BITS - 1;
	return (__u64)(LAT_SUB + b % LAT_SUB) << (e - LAT_SUB_BITS);
}

int lat_add(struct lat_set *s, unsigned int sys, __u64 ns, bool failed)
{
	struct lat_hist *h;

	if (sys >= MEMMON_SYS__COUNT)
		return 0;
	h = s->sys[sys];
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->min_ns = ns;
		s->sys[sys] = h;
	}
	h->count++;
	h->errors += failed;
	h->total_ns += ns;
	if (ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->buckets[lat_bucket(ns)]++;
	s->total_ns += ns;
	s->count++;
	return 0;
}

__u64 lat_percentile(const struct lat_hist *h, double p)
{
	__u64 rank, seen = 0, v;
	unsigned int b;

	if (!h || !h->count)
		return 0;
	/* nearest rank: the smallest value with at least p% at or below it */
	rank = (__u64)(p / 100.0 * (double)h->count);
	if ((double)rank < p / 100.0 * (double)h->count)
		rank++;
	if (!rank)
		rank = 1;
	for (b = 0; b < LAT_NR_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank)
			break;
	}
	v = lat_bucket_low(b < LAT_NR_BUCKETS ? b : LAT_NR_BUCKETS - 1);
	if (v < h->min_ns)
		v = h->min_ns;
	if (v > h->max_ns)
		v = h->max_ns;
	return v;
}

void lat_set_free(struct lat_set *s)
{
	unsigned int i;

	for (i = 0; i < MEMMON_SYS__COUNT; i++) {
		free(s->sys[i]);
		s->sys[i] = NULL;
	}
}

/* Durations in microseconds with 3 decimals: ns exactly. */
static void us(char *b, size_t n, __u64 ns)
{
	snprintf(b, n, "%llu.%03llu", (unsigned long long)(ns / 1000),
		 (unsigned long long)(ns % 1000));
}

void lat_print(FILE *out, const struct lat_set *s, const char *indent)
{
	char t[32], p50[32], p99[32], mx[32];
	unsigned int i;

	fprintf(out, "%s%-12s %10s %8s %14s %12s %12s %12s\n", indent, "call",
		"count", "errors", "total us", "p50 us", "p99 us", "max us");
	for (i = 0; i < MEMMON_SYS__COUNT; i++) {
		const struct lat_hist *h = s->sys[i];

		if (!h)
			continue;
		us(t, sizeof(t), h->total_ns);
		us(p50, sizeof(p50), lat_percentile(h, 50));
		us(p99, sizeof(p99), lat_percentile(h, 99));
		us(mx, sizeof(mx), h->max_ns);
		fprintf(out, "%s%-12s %10llu %8llu %14s %12s %12s %12s\n", indent,
			memmon_sys__name(i), (unsigned long long)h->count,
			(unsigned long long)h->errors, t, p50, p99, mx);
	}
}

json_t *lat_json(const struct lat_set *s)
{
	json_t *o = json_object();
	unsigned int i;

	for (i = 0; i < MEMMON_SYS__COUNT; i++) {
		const struct lat_hist *h = s->sys[i];
		json_t *e;

		if (!h)
			continue;
		e = json_object();
		json_object_set_new(e, "count", json_integer((json_int_t)h->count));
		json_object_set_new(e, "errors", json_integer((json_int_t)h->errors));
		json_object_set_new(e, "total_ns", json_integer((json_int_t)h->total_ns));
		json_object_set_new(e, "min_ns", json_integer((json_int_t)h->min_ns));
		json_object_set_new(e, "p50_ns",
				    json_integer((json_int_t)lat_percentile(h, 50)));
		json_object_set_new(e, "p99_ns",
				    json_integer((json_int_t)lat_percentile(h, 99)));
		json_object_set_new(e, "max_ns", json_integer((json_int_t)h->max_ns));
		json_object_set_new(o, memmon_sys__name(i), e);
	}
	return o;
}
