/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the watched-process table, session side. (The hook side,
 * memmon_sessions_watching() and the fork/exit callbacks, is declared in emit.h.)
 */
#ifndef MEMMON_DRIVER_TRANSPORT_WATCH_H
#define MEMMON_DRIVER_TRANSPORT_WATCH_H

#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/types.h>
#include <linux/memmon.h>

int memmon_watch_init(void);
void memmon_watch_cleanup(void);

unsigned int memmon_watch_max(void);
int memmon_watch_add(unsigned int id, struct task_struct *task, bool follow);
int memmon_watch_del(unsigned int id, struct pid *pid);
u32 memmon_watch_list(unsigned int id, struct pid_namespace *ns,
		      struct memmon_watch_entry *out, u32 cap);
void memmon_watch_remove_session(unsigned int id);
void memmon_watch_each(unsigned int id,
		       void (*fn)(struct task_struct *task, void *arg),
		       void *arg);

#endif /* MEMMON_DRIVER_TRANSPORT_WATCH_H */
