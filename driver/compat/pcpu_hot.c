// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * x86's current task pointer lives in the per-CPU struct pcpu_hot (6.2 to
 * 6.14), which fault_tramp.c's trampoline reads by name; 6.1 and 6.15+
 * have the per-CPU variable current_task (current_task.c).
 */
#include <linux/percpu.h>
#include <asm/current.h>

struct task_struct *memmon_probe(void);

struct task_struct *memmon_probe(void)
{
	return this_cpu_read(pcpu_hot.current_task);
}
