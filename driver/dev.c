// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the /dev/memmon misc device.
 *
 * Every open() of the device is an independent session (see session.c once
 * the event transport lands). Opening requires CAP_PERFMON or CAP_SYS_ADMIN
 * unless the require_cap parameter is 0, in which case the device node's
 * permissions (e.g. a udev rule giving a group access) decide alone.
 */
#include "memmon.h"

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

static bool require_cap = true;
module_param(require_cap, bool, 0444);
MODULE_PARM_DESC(require_cap,
		 "Require CAP_PERFMON or CAP_SYS_ADMIN to open /dev/memmon (default 1); 0 lets the node's mode/group decide, as perf_event_paranoid does for perf");

static int memmon_open(struct inode *inode, struct file *file)
{
	if (require_cap && !perfmon_capable())
		return -EPERM;
	return nonseekable_open(inode, file);
}

static int memmon_release(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations memmon_fops = {
	.owner		= THIS_MODULE,
	.open		= memmon_open,
	.release	= memmon_release,
	.llseek		= no_llseek,
};

static struct miscdevice memmon_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "memmon",
	.fops	= &memmon_fops,
	/* Root only by default; a udev rule may widen it (udev/60-memmon.rules). */
	.mode	= 0600,
};

/**
 * memmon_dev_init() - register /dev/memmon.
 *
 * Context: module init, process context, may sleep.
 * Return: 0 or a negative errno from misc_register().
 */
int memmon_dev_init(void)
{
	return misc_register(&memmon_miscdev);
}

/**
 * memmon_dev_exit() - unregister /dev/memmon.
 *
 * Context: module exit, process context, may sleep. No file can be open:
 * each open file holds a module reference through .owner.
 */
void memmon_dev_exit(void)
{
	misc_deregister(&memmon_miscdev);
}
