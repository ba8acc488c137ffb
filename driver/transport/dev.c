// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the /dev/memmon misc device.
 *
 * Every open() of the device is an independent session (session.c). Opening
 * requires CAP_PERFMON or CAP_SYS_ADMIN unless the require_cap parameter is
 * 0, in which case the device node's permissions (e.g. a udev rule giving a
 * group access) decide alone.
 *
 * This file is the ABI's gatekeeper: it copies every argument in, checks
 * sizes, flags and reserved fields, and hands kernel copies to session.c.
 * Commands are dispatched on _IOC_TYPE and _IOC_NR alone, so a struct may
 * grow without changing its number; the size comes from the struct.
 *
 * Lifetime: the file holds a session reference and a module reference
 * (.owner). Each VMA of a mapping holds a session reference (vm_ops
 * open/close) and, through vma->vm_file, the file: the kernel calls
 * vm_ops->close before fput(vma->vm_file) (remove_vma()), so the module
 * whose text vm_ops->close is stays pinned until close has returned, and
 * rmmod is refused while a mapping exists, even with no fd left.
 */
#include "main.h"
#include "session.h"
#include "watch.h"

#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/uaccess.h>

static bool require_cap = true;
module_param(require_cap, bool, 0444);
MODULE_PARM_DESC(require_cap,
		 "Require CAP_PERFMON or CAP_SYS_ADMIN to open /dev/memmon (default 1; 0: the node's mode and group decide)");

/*
 * Copy in a size-first argument struct. The caller's size must cover the
 * first published version (@ver0) and be at most a page (as
 * sched_setattr()); bytes beyond what we know must be zero
 * (copy_struct_from_user(): -E2BIG). Fields the caller did not send read as
 * zero. The size word is read twice (here and by the copy); only this first
 * read is used.
 */
static int memmon_copy_arg(void *dst, size_t ksize, u32 ver0,
			   const void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < ver0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, uarg, usize);
}

static long memmon_ioctl_get_info(struct memmon_ksession *s,
				  struct memmon_info __user *uarg)
{
	struct memmon_info info = { 0 };
	u32 usize;

	if (get_user(usize, &uarg->size))
		return -EFAULT;
	if (usize < MEMMON_INFO_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	memmon_session_info(s, &info);
	/* What we filled; a newer caller's extra fields read as zero. */
	info.size = min_t(u32, usize, sizeof(info));
	if (copy_to_user(uarg, &info, info.size))
		return -EFAULT;
	if (usize > sizeof(info) &&
	    clear_user((u8 __user *)uarg + sizeof(info), usize - sizeof(info)))
		return -EFAULT;
	return 0;
}

static long memmon_ioctl_configure(struct memmon_ksession *s,
				   const void __user *uarg)
{
	struct memmon_config cfg;
	int err;

	err = memmon_copy_arg(&cfg, sizeof(cfg), MEMMON_CONFIG_SIZE_VER0, uarg);
	if (err)
		return err;
	return memmon_session_configure(s, &cfg);
}

static long memmon_ioctl_watch(struct memmon_ksession *s,
			       const void __user *uarg, bool add)
{
	struct memmon_watch w;
	int err;

	err = memmon_copy_arg(&w, sizeof(w), MEMMON_WATCH_SIZE_VER0, uarg);
	if (err)
		return err;
	/* WATCH_DEL ignores the flags (uapi); reserved is zero for both. */
	if ((add && (w.flags & ~MEMMON_WATCH_FLAGS_MASK)) || w.__reserved)
		return -EINVAL;
	return memmon_session_watch(s, &w, add);
}

static long memmon_ioctl_watch_list(struct memmon_ksession *s,
				    struct memmon_watch_list __user *uarg)
{
	struct memmon_watch_entry *entries = NULL;
	struct memmon_watch_list wl;
	u32 cap, total;
	long err;

	err = memmon_copy_arg(&wl, sizeof(wl), MEMMON_WATCH_LIST_SIZE_VER0, uarg);
	if (err)
		return err;
	/* A session never watches more than max_watch: no bigger buffer. */
	cap = min_t(u32, wl.count, memmon_watch_max());
	if (cap) {
		entries = kvmalloc_array(cap, sizeof(*entries), GFP_KERNEL);
		if (!entries)
			return -ENOMEM;
	}
	total = memmon_watch_list(s->id, s->pid_ns, entries, cap);
	err = 0;
	if (min(total, cap) &&
	    copy_to_user(u64_to_user_ptr(wl.entries), entries,
			 min(total, cap) * sizeof(*entries)))
		err = -EFAULT;
	else if (put_user(total, &uarg->count))
		err = -EFAULT;
	kvfree(entries);
	return err;
}

static long memmon_ioctl_set_events(struct memmon_ksession *s,
				    const void __user *uarg)
{
	struct memmon_events ev;
	int err;

	err = memmon_copy_arg(&ev, sizeof(ev), MEMMON_EVENTS_SIZE_VER0, uarg);
	if (err)
		return err;
	if (ev.__reserved)
		return -EINVAL;
	return memmon_session_set_events(s, &ev);
}

static long memmon_ioctl_get_stats(struct memmon_ksession *s,
				   struct memmon_stats __user *uarg)
{
	struct memmon_cpu_stats cs;
	struct memmon_stats st;
	u8 __user *ucpus;
	u32 cpu, n, esize;
	int err;

	err = memmon_copy_arg(&st, sizeof(st), MEMMON_STATS_SIZE_VER0, uarg);
	if (err)
		return err;
	if (st.__reserved)
		return -EINVAL;
	/* The caller's element size: lets struct memmon_cpu_stats grow. */
	esize = st.cpu_stats_size;
	if (esize < sizeof(u64) || esize % sizeof(u64) || esize > PAGE_SIZE)
		return -EINVAL;
	ucpus = u64_to_user_ptr(st.cpus);
	n = min_t(u32, st.nr_cpus, nr_cpu_ids);
	for (cpu = 0; cpu < n; cpu++) {
		memmon_session_stats(s, cpu, &cs);
		if (copy_to_user(ucpus + (size_t)cpu * esize, &cs,
				 min_t(u32, esize, sizeof(cs))))
			return -EFAULT;
		if (esize > sizeof(cs) &&
		    clear_user(ucpus + (size_t)cpu * esize + sizeof(cs),
			       esize - sizeof(cs)))
			return -EFAULT;
	}
	if (put_user(nr_cpu_ids, &uarg->nr_cpus))
		return -EFAULT;
	return 0;
}

static long memmon_ioctl_mark(struct memmon_ksession *s, const void __user *uarg)
{
	u8 data[MEMMON_MARK_MAX];
	struct memmon_mark m;
	int err;

	err = memmon_copy_arg(&m, sizeof(m), MEMMON_MARK_SIZE_VER0, uarg);
	if (err)
		return err;
	if ((m.flags & ~MEMMON_MARK_FLAGS_MASK) || m.__reserved ||
	    m.len > MEMMON_MARK_MAX)
		return -EINVAL;
	if (copy_from_user(data, u64_to_user_ptr(m.data), m.len))
		return -EFAULT;
	return memmon_session_mark(s, m.flags, data, m.len);
}

static long memmon_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct memmon_ksession *s = file->private_data;
	void __user *uarg = (void __user *)arg;

	if (_IOC_TYPE(cmd) != MEMMON_IOC_MAGIC)
		return -ENOTTY;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(MEMMON_IOC_GET_INFO):
		return memmon_ioctl_get_info(s, uarg);
	case _IOC_NR(MEMMON_IOC_CONFIGURE):
		return memmon_ioctl_configure(s, uarg);
	case _IOC_NR(MEMMON_IOC_WATCH_ADD):
		return memmon_ioctl_watch(s, uarg, true);
	case _IOC_NR(MEMMON_IOC_WATCH_DEL):
		return memmon_ioctl_watch(s, uarg, false);
	case _IOC_NR(MEMMON_IOC_WATCH_LIST):
		return memmon_ioctl_watch_list(s, uarg);
	case _IOC_NR(MEMMON_IOC_SET_EVENTS):
		return memmon_ioctl_set_events(s, uarg);
	case _IOC_NR(MEMMON_IOC_ENABLE):
		return memmon_session_enable(s);
	case _IOC_NR(MEMMON_IOC_DISABLE):
		memmon_session_disable(s);
		return 0;
	case _IOC_NR(MEMMON_IOC_GET_STATS):
		return memmon_ioctl_get_stats(s, uarg);
	case _IOC_NR(MEMMON_IOC_MARK):
		return memmon_ioctl_mark(s, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * VMA callbacks. Each VMA holds a session reference: taken in mmap() and
 * open() (a VMA copied by mremap()'s move, which .mremap then refuses, or by
 * fork() after madvise(MADV_DOFORK) lifted VM_DONTCOPY), dropped in close().
 */
static void memmon_vm_open(struct vm_area_struct *vma)
{
	memmon_session_get(vma->vm_private_data);
}

static void memmon_vm_close(struct vm_area_struct *vma)
{
	memmon_session_put(vma->vm_private_data);
}

/* Partial munmap()/mprotect() would split the mapping: refused. */
static int memmon_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

/* Moving the mapping is refused (growing it already is: VM_DONTEXPAND). */
static int memmon_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct memmon_vm_ops = {
	.open		= memmon_vm_open,
	.close		= memmon_vm_close,
	.may_split	= memmon_vm_may_split,
	.mremap		= memmon_vm_mremap,
};

static int memmon_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct memmon_ksession *s = file->private_data;
	int err;

	err = memmon_session_mmap(s, vma);
	if (err)
		return err;	/* mmap_region() calls no vm_ops->close on failure */
	vma->vm_ops = &memmon_vm_ops;
	vma->vm_private_data = s;
	memmon_session_get(s);
	return 0;
}

static __poll_t memmon_poll(struct file *file, poll_table *wait)
{
	struct memmon_ksession *s = file->private_data;

	/* [E]: on the wait queue (its lock) before the positions are read. */
	poll_wait(file, &s->wq, wait);
	memmon_session_wait_prepare(s);
	return memmon_session_poll_readable(s) ? EPOLLIN | EPOLLRDNORM : 0;
}

static ssize_t memmon_read(struct file *file, char __user *buf, size_t count,
			   loff_t *ppos)
{
	return memmon_session_read(file->private_data, buf, count,
				   file->f_flags & O_NONBLOCK);
}

static int memmon_open(struct inode *inode, struct file *file)
{
	struct memmon_ksession *s;
	int err;

	if (require_cap && !perfmon_capable())
		return -EPERM;
	err = nonseekable_open(inode, file);
	if (err)
		return err;
	s = memmon_session_create();
	if (IS_ERR(s))
		return PTR_ERR(s);
	/* Replaces the miscdevice pointer misc_open() left there. */
	file->private_data = s;
	return 0;
}

static int memmon_release(struct inode *inode, struct file *file)
{
	memmon_session_close(file->private_data);
	return 0;
}

static const struct file_operations memmon_fops = {
	.owner		= THIS_MODULE,
	.open		= memmon_open,
	.release	= memmon_release,
	.unlocked_ioctl	= memmon_ioctl,
	/* Every argument is a pointer to a struct laid out alike on ia32. */
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= memmon_mmap,
	.poll		= memmon_poll,
	.read		= memmon_read,
	/*
	 * No .llseek: nonseekable_open() clears FMODE_LSEEK, so lseek() is
	 * -ESPIPE (no_llseek is gone since 6.12; its job was this).
	 */
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
 * each open file holds a module reference through .owner, and each mapping
 * holds its file.
 */
void memmon_dev_exit(void)
{
	misc_deregister(&memmon_miscdev);
}
