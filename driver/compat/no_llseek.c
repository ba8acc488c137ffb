// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * the kernel still has no_llseek() (removed in 6.12, where a file opened
 * with nonseekable_open() and no llseek method is -ESPIPE on its own).
 */
#include <linux/fs.h>

loff_t (*memmon_probe)(struct file *, loff_t, int) = no_llseek;
