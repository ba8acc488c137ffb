/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the user stack of the current task (struct memmon_user_stack in
 * the uapi header says what each entry is).
 */
#ifndef MEMMON_DRIVER_INSTR_USTACK_H
#define MEMMON_DRIVER_INSTR_USTACK_H

#include "emit.h"

void memmon_ustack_walk(struct memmon_ustack *st, unsigned int depth);

#endif /* MEMMON_DRIVER_INSTR_USTACK_H */
