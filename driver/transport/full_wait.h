/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: MEMMON_FULL_WAIT, the lossless mode (full_wait.c).
 *
 * A session configured with it makes a watched task that fills one of its
 * rings past half wait, at its return to user space, until the consumer has
 * brought that ring down to a quarter. Producers only queue the wait: they
 * never sleep, whatever their context or locks.
 */
#ifndef MEMMON_DRIVER_TRANSPORT_FULL_WAIT_H
#define MEMMON_DRIVER_TRANSPORT_FULL_WAIT_H

#include <linux/jump_label.h>

struct memmon_ksession;
struct memmon_cpu_ring;

/* On while a session with MEMMON_FULL_WAIT is enabled (session.c). */
DECLARE_STATIC_KEY_FALSE(memmon_full_wait_active);

void memmon_full_wait_check(struct memmon_ksession *s,
			    struct memmon_cpu_ring *cr, unsigned int cpu);
void memmon_full_wait_cleanup(void);

#endif /* MEMMON_DRIVER_TRANSPORT_FULL_WAIT_H */
