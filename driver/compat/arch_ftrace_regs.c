// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * struct ftrace_regs is opaque and its registers are reached through
 * arch_ftrace_regs() (6.12; before, fregs->regs on x86).
 */
#include <linux/ftrace.h>

struct pt_regs *memmon_probe(struct ftrace_regs *fregs);

struct pt_regs *memmon_probe(struct ftrace_regs *fregs)
{
	return &arch_ftrace_regs(fregs)->regs;
}
