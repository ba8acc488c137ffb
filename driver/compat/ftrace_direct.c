// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * the kernel has the ops-based direct-call API of 6.5 and later,
 * register_ftrace_direct(ops, addr) and unregister_ftrace_direct(ops,
 * addr, free_filters); 5.16 to 6.4 called it *_direct_multi()
 * (ftrace_direct_multi.c).
 */
#include <linux/ftrace.h>

int memmon_probe(struct ftrace_ops *ops, unsigned long addr);

int memmon_probe(struct ftrace_ops *ops, unsigned long addr)
{
	return register_ftrace_direct(ops, addr) +
	       unregister_ftrace_direct(ops, addr, false);
}
