/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the clocks of the records: hdr.time_ns (CLOCK_MONOTONIC) and the
 * durations of syscalls and faults (clock.c has the rules).
 */
#ifndef MEMMON_DRIVER_INSTR_CLOCK_H
#define MEMMON_DRIVER_INSTR_CLOCK_H

#include <linux/jump_label.h>
#include <linux/math64.h>
#include <linux/preempt.h>
#include <linux/ktime.h>
#include <linux/types.h>
#include <asm/msr.h>

/*
 * Clock of every record: CLOCK_MONOTONIC (enum memmon_clock). A kprobe
 * that ends up on an int3 runs as an NMI, where only the fast accessor is
 * safe against an interrupted timekeeping update.
 */
static __always_inline u64 memmon_now(void)
{
	return unlikely(in_nmi()) ? ktime_get_mono_fast_ns() : ktime_get_ns();
}

/* clock.c: durations from the TSC (set at attach, with the factor below). */
DECLARE_STATIC_KEY_FALSE(memmon_span_tsc);
/* TSC cycles to ns: mult in the low 32 bits, shift in the high ones. */
extern u64 memmon_span_conv;

/*
 * The start of a duration: TSC cycles (and *@tsc true) when clock.c chose
 * the TSC, else memmon_now(). The unit goes with the start, so a call that
 * began under one choice ends under the same one (the choice is made again
 * at each attach). Any context.
 */
static __always_inline u64 memmon_span_begin(bool *tsc)
{
	if (static_branch_likely(&memmon_span_tsc)) {
		*tsc = true;
		return rdtsc_ordered();
	}
	*tsc = false;
	return memmon_now();
}

/*
 * The duration of a span that began at @start (in the unit @tsc says), in
 * ns, ending now; @now_ns is memmon_now() read at its end. Any context.
 */
static __always_inline u64 memmon_span_ns(u64 start, bool tsc, u64 now_ns)
{
	u64 conv;
	s64 cycles;

	if (!tsc)
		return now_ns - start;
	cycles = rdtsc_ordered() - start;
	if (unlikely(cycles <= 0))
		return 0;
	conv = READ_ONCE(memmon_span_conv);
	return mul_u64_u32_shr(cycles, (u32)conv, conv >> 32);
}

void memmon_clock_setup(void);
const char *memmon_clock_span_name(void);

#endif /* MEMMON_DRIVER_INSTR_CLOCK_H */
