// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: a process's auxiliary vector as a MEMMON_REC_AUXV body. Written by
 * both halves: the lifecycle hooks at exec, the sessions when watching
 * starts (their names of a process already running).
 */
#include "main.h"
#include "task_auxv.h"

#include <linux/auxvec.h>
#include <linux/mm_types.h>

/**
 * memmon_auxv_fill() - a MEMMON_REC_AUXV body from @mm's auxiliary vector
 * @mm: the process's mm (its saved_auxv, what /proc/PID/auxv shows)
 * @rec: its fields after the header are set; 0 for what the vector lacks
 *
 * The vector is written at exec, and by prctl(PR_SET_MM_AUXV) with
 * CAP_SYS_RESOURCE at any time: read racily, and bounded by its size.
 * Context: any; @mm must stay alive (current's, or under task_lock()).
 */
void memmon_auxv_fill(const struct mm_struct *mm, struct memmon_rec_auxv *rec)
{
	unsigned int i;
	unsigned long type, val;

	rec->phdr = 0;
	rec->phent = 0;
	rec->phnum = 0;
	rec->entry = 0;
	rec->base = 0;
	rec->vdso = 0;
	for (i = 0; i + 1 < ARRAY_SIZE(mm->saved_auxv); i += 2) {
		type = READ_ONCE(mm->saved_auxv[i]);
		val = READ_ONCE(mm->saved_auxv[i + 1]);
		switch (type) {
		case AT_NULL:
			return;
		case AT_PHDR:
			rec->phdr = val;
			break;
		case AT_PHENT:
			rec->phent = val;
			break;
		case AT_PHNUM:
			rec->phnum = val;
			break;
		case AT_ENTRY:
			rec->entry = val;
			break;
		case AT_BASE:
			rec->base = val;
			break;
		case AT_SYSINFO_EHDR:
			rec->vdso = val;
			break;
		}
	}
}
