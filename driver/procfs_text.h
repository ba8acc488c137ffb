/* SPDX-License-Identifier: GPL-2.0 */
/* memmon: the records as text for /proc/memmon/events (procfs_text.c). */
#ifndef MEMMON_DRIVER_PROCFS_TEXT_H
#define MEMMON_DRIVER_PROCFS_TEXT_H

#include <linux/types.h>
#include <linux/memmon.h>

size_t memmon_proc_line(const struct memmon_rec_header *h, u32 size,
			char *out, size_t room);

#endif /* MEMMON_DRIVER_PROCFS_TEXT_H */
