/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: declarations shared by the driver's files (not part of the ABI;
 * that is uapi/linux/memmon.h).
 */
#ifndef MEMMON_DRIVER_MEMMON_H
#define MEMMON_DRIVER_MEMMON_H

#include <linux/init.h>

/* Every file logs as "memmon: ..." (samples/ftrace/ftrace-ops.c does the same). */
#ifdef pr_fmt
#undef pr_fmt
#endif
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/* dev.c: the /dev/memmon misc device. */
int memmon_dev_init(void);
void memmon_dev_exit(void);

/* main.c: kernel symbols that are not exported to modules. */
unsigned long memmon_ksym(const char *name);

/*
 * The instrumentation side's entry points that main.c and session.c call
 * (hooks.h declares them too, for the instrumentation's own files).
 */
int memmon_hooks_init(void);
void memmon_hooks_exit(void);
void memmon_paths_forget_session(unsigned int id);

#endif /* MEMMON_DRIVER_MEMMON_H */
