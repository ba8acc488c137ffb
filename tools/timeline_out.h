/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timeline_out: the self-contained HTML page of `memmon timeline`, its
 * data written from a timeline_agg.
 */
#ifndef MEMMON_TOOLS_TIMELINE_OUT_H
#define MEMMON_TOOLS_TIMELINE_OUT_H

#include <stdbool.h>
#include <stdio.h>
#include "timeline_agg.h"

struct tl_out_opts {
	const char *title;
	const char *file;		/* the trace, as named on the command line */
	__s64 rt_off;			/* CLOCK_REALTIME - CLOCK_MONOTONIC; 0: unknown */
	bool truncated;
	const __u64 *kernel_lost;	/* per CPU, from the meta's cpu_stats, or NULL */
};

/* The page to f. 0, or the negative errno of a failed write. */
int tl_write_html(FILE *f, const struct tl_agg *a, const struct tl_out_opts *o);

#endif
