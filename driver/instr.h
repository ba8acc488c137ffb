/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: what the instrumentation (instr/) offers the rest of the module:
 * the hooks as a whole, to the transport (transport/session.c), to
 * /proc/memmon (procfs.c) and to module init (main.c). It is the only instr/
 * header a file outside instr/ includes; emit.h is the other direction. The
 * include graph is in docs/design.md.
 */
#ifndef MEMMON_DRIVER_INSTR_H
#define MEMMON_DRIVER_INSTR_H

struct seq_file;

/*
 * instr/hooks.c: attach every hook group when the first session is enabled,
 * detach after the last one is disabled. Process context, may sleep; the
 * caller serialises the calls (transport/session.c's sessions lock).
 */
int memmon_hooks_attach(void);
void memmon_hooks_detach(void);

/*
 * instr/hooks.c: session id @id is about to be reused; every hook group
 * forgets what it kept for the last session of that id. Process context.
 */
void memmon_hooks_forget_session(unsigned int id);

/* instr/hooks.c: the hooks' state as "key value" lines (/proc/memmon/stats). */
void memmon_hooks_show(struct seq_file *m);

/* instr/hooks.c: module exit; every session is gone (main.c). */
void memmon_hooks_exit(void);

/*
 * instr/exec_guard.c: the exec guard's hooks exist while a reference is
 * held; each session holds one for its life (transport/session.c).
 * Process context, may sleep. get: 0 or a negative errno.
 */
int memmon_exec_guard_get(void);
void memmon_exec_guard_put(void);

#endif /* MEMMON_DRIVER_INSTR_H */
