/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: what one user may hold (user_limits.c).
 */
#ifndef MEMMON_DRIVER_TRANSPORT_USER_LIMITS_H
#define MEMMON_DRIVER_TRANSPORT_USER_LIMITS_H

#include <linux/types.h>

struct memmon_ksession;
struct memmon_info;

int memmon_limits_init(void);
void memmon_limits_cleanup(void);

int memmon_limits_session_open(struct memmon_ksession *s);
void memmon_limits_session_close(struct memmon_ksession *s);
int memmon_limits_charge_rings(struct memmon_ksession *s, u64 bytes);
void memmon_limits_uncharge_rings(struct memmon_ksession *s);
void memmon_limits_info(struct memmon_ksession *s, struct memmon_info *info);

#endif /* MEMMON_DRIVER_TRANSPORT_USER_LIMITS_H */
