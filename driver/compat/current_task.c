// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * current is the per-CPU variable current_task (x86 until 6.1; 6.2 moved
 * it into pcpu_hot), which fault_tramp.c's trampoline reads by name.
 */
#include <linux/percpu.h>
#include <asm/current.h>

struct task_struct *memmon_probe(void);

struct task_struct *memmon_probe(void)
{
	return this_cpu_read(current_task);
}
