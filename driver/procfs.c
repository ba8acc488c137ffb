// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: /proc/memmon, the text interface. Not there yet: these are the
 * entry points hooks.c calls, so that the module links while it is
 * written.
 */
#include "memmon.h"
#include "hooks.h"

/**
 * memmon_procfs_init() - create /proc/memmon (not yet).
 *
 * Context: module init.
 * Return: 0.
 */
int memmon_procfs_init(void)
{
	return 0;
}

/**
 * memmon_procfs_exit() - remove /proc/memmon (not yet).
 *
 * Context: module exit.
 */
void memmon_procfs_exit(void)
{
}
