/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the exec guard (exec_guard.c).
 */
#ifndef _MEMMON_EXEC_GUARD_H
#define _MEMMON_EXEC_GUARD_H

int memmon_exec_guard_get(void);
void memmon_exec_guard_put(void);

#endif /* _MEMMON_EXEC_GUARD_H */
