// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the clock of durations.
 *
 * Every record's hdr.time_ns is CLOCK_MONOTONIC (ktime_get_ns()), the clock
 * consumers merge the CPUs' rings by and compare with their own
 * clock_gettime(). A syscall or fault record also says how long the call
 * took, and that needed a second read of the same clock at entry: two
 * ktime_get() are a large share of what a watched fault costs
 * (docs/benchmarks.md has the figures).
 *
 * Where timekeeping itself counts the TSC (its clocksource is "tsc"), the
 * kernel has found the TSC constant and synchronised across CPUs, and a
 * duration can be two reads of it, converted to ns with the frequency
 * timekeeping was registered with (tsc_khz): rdtsc_ordered() is a few
 * instructions. NTP's slewing (parts per million) is not applied; a
 * duration is not a time of day. Elsewhere (HPET, ACPI PM timer, kvmclock,
 * Xen), ktime_get_ns() at both ends.
 *
 * Is the clocksource the TSC? The kernel does not say to modules; but
 * ktime_get_snapshot() returns the clocksource's counter as read, which
 * for the TSC lies between two rdtsc taken around it on the same CPU, and
 * for any other clocksource (a 32-bit HPET or 24-bit PM timer count, a
 * kvmclock's ns) does not. Checked at every attach (the choice holds until
 * the next one): a TSC the watchdog has since marked unstable is dropped
 * then; in between, a duration spanning CPUs may be off by their skew (a
 * negative one reads as 0).
 *
 * hook_span_tsc: -1 (default) as above; 0 never; 1 whenever the CPU has a
 * TSC and its frequency is known, for tests that stay on one CPU (on a
 * machine whose TSCs disagree, durations then spanning CPUs are wrong).
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
