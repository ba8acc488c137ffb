/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: what every file of the driver includes first: its log prefix, and
 * the few functions main.c calls or offers that belong to neither half (not
 * part of the ABI; that is uapi/linux/memmon.h).
 */
#ifndef MEMMON_DRIVER_MAIN_H
#define MEMMON_DRIVER_MAIN_H

#include <linux/init.h>

/* Every file logs as "memmon: ..." (samples/ftrace/ftrace-ops.c does the same). */
#ifdef pr_fmt
#undef pr_fmt
#endif
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/* main.c: kernel symbols that are not exported to modules. */
unsigned long memmon_ksym(const char *name);

/* transport/dev.c: the /dev/memmon misc device (main.c's init and exit). */
int memmon_dev_init(void);
void memmon_dev_exit(void);

/* procfs.c: /proc/memmon (main.c's init and exit). */
int memmon_procfs_init(void);
void memmon_procfs_exit(void);

#endif /* MEMMON_DRIVER_MAIN_H */
