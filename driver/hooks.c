// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: attaching and detaching the instrumentation as a whole.
 * (Placeholder until the syscall, fault and lifecycle hooks land: nothing
 * is attached yet, so only MARK records flow.)
 */
#include "memmon.h"
#include "emit.h"

/**
 * memmon_hooks_attach() - attach every hook (first session enabled).
 *
 * Context: process context, may sleep; serialised by the caller.
 * Return: 0 or a negative errno, in which case nothing stays attached.
 */
int memmon_hooks_attach(void)
{
	return 0;
}

/**
 * memmon_hooks_detach() - detach every hook (last session disabled).
 *
 * Context: process context, may sleep; serialised by the caller.
 */
void memmon_hooks_detach(void)
{
}
