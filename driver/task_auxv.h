/* SPDX-License-Identifier: GPL-2.0 */
/* memmon: a process's auxiliary vector (task_auxv.c). */
#ifndef MEMMON_DRIVER_TASK_AUXV_H
#define MEMMON_DRIVER_TASK_AUXV_H

#include <linux/memmon.h>

struct mm_struct;
void memmon_auxv_fill(const struct mm_struct *mm, struct memmon_rec_auxv *rec);

#endif /* MEMMON_DRIVER_TASK_AUXV_H */
