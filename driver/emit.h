/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the seam between instrumentation (hook_*.c: what happened) and
 * transport (session.c, watch.c: who wants it, and the rings).
 *
 * A hook does, in this order, stopping at the first "no":
 *   1. static_branch_unlikely(&memmon_active)  - any session enabled at all?
 *   2. memmon_watchers(task)                   - which sessions watch it?
 *   3. memmon_want(sessions, ev, sys)          - which of them want this?
 *   4. build the record body on the stack, memmon_emit(...)
 * so an unwatched task costs a static branch and one RCU hash lookup, and
 * writes no shared cache line.
 */
#ifndef _MEMMON_EMIT_H
#define _MEMMON_EMIT_H

#include <linux/jump_label.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/memmon.h>

#define MEMMON_MAX_SESSIONS	64	/* sessions are bits of a u64 */

/* True while at least one session is enabled (session.c flips it). */
DECLARE_STATIC_KEY_FALSE(memmon_active);

/* watch.c */
u64 memmon_watchers(struct task_struct *task);
void memmon_watch_fork(struct task_struct *parent, struct task_struct *child,
		       unsigned long clone_flags);
void memmon_watch_exit(struct task_struct *task);

/* session.c */
u64 memmon_want(u64 sessions, enum memmon_event ev, unsigned int sys);
void memmon_emit(u64 sessions, struct task_struct *task, u16 type,
		 const void *body, u32 body_len,
		 const void *tail, u32 tail_len, u64 time_ns);

/* hooks.c (instrumentation): attach every hook when the first session is
 * enabled, detach after the last one is disabled. Process context, may
 * sleep; the caller serialises calls (session.c's mutex).
 */
int memmon_hooks_attach(void);
void memmon_hooks_detach(void);

#endif /* _MEMMON_EMIT_H */
