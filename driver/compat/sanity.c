// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: must compile
 * on every kernel. If it does not, the probe command itself is broken for
 * this kernel's build system, and every other probe's "no" would be wrong.
 */
#include <linux/module.h>

int memmon_probe(void);

int memmon_probe(void)
{
	return 0;
}
