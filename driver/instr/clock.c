// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the clock of durations.
 *
 * hdr.time_ns is always CLOCK_MONOTONIC (ktime_get_ns()). A duration is two
 * rdtsc_ordered() reads converted with tsc_khz where timekeeping's
 * clocksource is the TSC, else two ktime_get_ns(); NTP's slewing is not
 * applied. Whether the clocksource is the TSC is checked at every attach:
 * the counter ktime_get_snapshot() returns lies between two rdtsc taken
 * around it on the same CPU only for the TSC. The choice holds until the
 * next attach; in between, a duration spanning CPUs may be off by their
 * skew (a negative one reads as 0).
 *
 * hook_span_tsc: -1 (default) as above; 0 never; 1 whenever the CPU has a
 * TSC and its frequency is known (single-CPU tests only).
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "clock.h"

#include <linux/clocksource.h>
#include <linux/moduleparam.h>
#include <linux/time64.h>
#include <asm/tsc.h>

static int hook_span_tsc = -1;
module_param(hook_span_tsc, int, 0644);
MODULE_PARM_DESC(hook_span_tsc,
		 "Durations from the TSC: -1 when timekeeping uses it (default), 0 never, 1 always (one-CPU tests); read at attach");

DEFINE_STATIC_KEY_FALSE(memmon_span_tsc);
u64 memmon_span_conv;

/* Does timekeeping read the TSC? See the top of this file. */
static bool memmon_clock_is_tsc(void)
{
	struct system_time_snapshot snap;
	u64 before, after;

	preempt_disable();
	before = rdtsc_ordered();
	ktime_get_snapshot(&snap);
	after = rdtsc_ordered();
	preempt_enable();
	return before <= snap.cycles && snap.cycles <= after;
}

/**
 * memmon_clock_setup() - choose the clock of durations for this attach
 *
 * Context: process context, may sleep; memmon_hooks_lock held (hooks.c),
 * before any hook is attached.
 */
void memmon_clock_setup(void)
{
	int want = READ_ONCE(hook_span_tsc);
	bool tsc = false;
	u32 mult, shift;

	if (want && boot_cpu_has(X86_FEATURE_TSC) && tsc_khz)
		tsc = want > 0 || (!check_tsc_unstable() && memmon_clock_is_tsc());
	if (!tsc) {
		static_branch_disable(&memmon_span_tsc);
		return;
	}
	/* ns = cycles * mult >> shift (mul_u64_u32_shr(): 128-bit product). */
	clocks_calc_mult_shift(&mult, &shift, tsc_khz, NSEC_PER_MSEC, 600);
	WRITE_ONCE(memmon_span_conv, (u64)shift << 32 | mult);
	static_branch_enable(&memmon_span_tsc);
}

/**
 * memmon_clock_span_name() - the clock of durations now: "tsc" or "ktime"
 *
 * Context: any.
 */
const char *memmon_clock_span_name(void)
{
	return static_key_enabled(&memmon_span_tsc) ? "tsc" : "ktime";
}
