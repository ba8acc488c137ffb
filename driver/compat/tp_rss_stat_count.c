// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * the rss_stat tracepoint passes (mm, member, count), as until 6.1; 6.2
 * dropped count (percpu RSS counters): (mm, member). signatures.c checks
 * that one of the two holds.
 */
#include <linux/mm_types.h>
#include <trace/events/kmem.h>

static_assert(__same_type(&register_trace_rss_stat,
			  int (*)(void (*)(void *, struct mm_struct *, int, long),
				  void *)));
