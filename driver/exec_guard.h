/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the exec guard (exec_guard.c).
 */
#ifndef MEMMON_DRIVER_EXEC_GUARD_H
#define MEMMON_DRIVER_EXEC_GUARD_H

int memmon_exec_guard_get(void);
void memmon_exec_guard_put(void);

#endif /* MEMMON_DRIVER_EXEC_GUARD_H */
