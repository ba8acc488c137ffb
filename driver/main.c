// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: module init and exit.
 *
 * Init brings the pieces up in dependency order and exit takes them down in
 * exactly the reverse order; each step of init that fails unwinds the
 * steps before it.
 */
#include "memmon.h"

#include <linux/module.h>

static int __init memmon_init(void)
{
	int err;

	err = memmon_dev_init();
	if (err)
		goto err_out;

	pr_info("loaded, version %s\n", MEMMON_VERSION);
	return 0;

err_out:
	return err;
}

static void __exit memmon_exit(void)
{
	memmon_dev_exit();
	pr_info("unloaded\n");
}

module_init(memmon_init);
module_exit(memmon_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("memmon developers");
MODULE_DESCRIPTION("memmon: trace processes' virtual-memory activity (syscalls, page faults) into per-CPU zero-copy rings");
MODULE_VERSION(MEMMON_VERSION);
