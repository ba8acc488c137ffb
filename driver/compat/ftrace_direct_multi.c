// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * the kernel has register_ftrace_direct_multi() (5.16 to 6.4; 6.5 renamed
 * it register_ftrace_direct()), which fault_tramp.c's trampoline needs.
 */
#include <linux/ftrace.h>

int memmon_probe(struct ftrace_ops *ops, unsigned long addr);

int memmon_probe(struct ftrace_ops *ops, unsigned long addr)
{
	return register_ftrace_direct_multi(ops, addr) +
	       unregister_ftrace_direct_multi(ops, addr);
}
