// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the current task's user stack, as the uapi's struct
 * memmon_user_stack describes it.
 *
 * The registers are the task's user registers, saved at its entry into the
 * kernel (task_pt_regs()): for a syscall, where it was made; for a fault in
 * user mode, the faulting instruction; for a fault the kernel took on a
 * user address during a syscall, the syscall's. The walk follows the chain
 * of saved frame pointers as perf's does: [fp] is the caller's fp, [fp + 8]
 * the return address. User memory is read only with page faults disabled
 * (memmon_ustack_read()): nothing here faults a page in or sleeps, so it
 * runs under any of the hooks' contexts, mmap_lock or a VMA lock held by a
 * fault included, and on PREEMPT_RT. Every value is the task's to choose:
 * the chain must climb (each frame above the last, aligned, below the top
 * of user space) and stops at the first that does not, or that cannot be
 * read, so a hostile chain ends within the depth asked for.
 */
#include "main.h"

#include <linux/mm_types.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "ustack.h"

/*
 * Read @n words at user address @addr into @dst without faulting: false if
 * any is out of the user range or not present. One user-access window,
 * and no copy_from_user_nofault(): its hardened-usercopy check of the
 * destination (a walk of the kernel stack's frames, @dst being on it) cost
 * more than everything else the syscall record's first entries take.
 */
static __always_inline bool memmon_ustack_read(unsigned long *dst,
					       unsigned long addr,
					       unsigned int n)
{
	const unsigned long __user *p = (const unsigned long __user *)addr;
	bool ok = false;
	unsigned int i;

	pagefault_disable();
	if (!user_access_begin(p, n * sizeof(*p)))
		goto out;
	for (i = 0; i < n; i++)
		unsafe_get_user(dst[i], &p[i], efault);
	ok = true;
efault:
	user_access_end();
out:
	pagefault_enable();
	return ok;
}

/**
 * memmon_ustack_walk() - the current task's user stack
 * @st: filled in; @st->nr 0 for a task with no user context
 * @depth: frames to follow beyond the first entries, at most
 *	MEMMON_STACK_DEPTH_MAX
 *
 * Context: task context, any preemption state, interrupts enabled or not;
 * never sleeps or faults.
 */
void memmon_ustack_walk(struct memmon_ustack *st, unsigned int depth)
{
	const struct pt_regs *regs;
	unsigned long frame[2];
	unsigned long fp, low, word;
	unsigned int n = 0;

	st->flags = 0;
	st->nr = 0;
	st->base = 0;
	if (!current->mm || (current->flags & PF_KTHREAD))
		return;
	regs = task_pt_regs(current);
	st->ip[n++] = regs->ip;
	if (!user_64bit_mode((struct pt_regs *)regs)) {
		/* 32-bit frames and stacks: the first entry only. */
		st->flags = MEMMON_USTACK_COMPAT;
		st->nr = n;
		st->base = n;
		return;
	}
	low = regs->sp;
	if (memmon_ustack_read(&word, low, 1)) {
		st->ip[n++] = word;
		st->flags |= MEMMON_USTACK_SP;
	}
	st->base = n;
	if (depth > MEMMON_STACK_DEPTH_MAX)
		depth = MEMMON_STACK_DEPTH_MAX;
	fp = regs->bp;
	while (depth) {
		if (fp < low || fp % sizeof(unsigned long) ||
		    fp > TASK_SIZE_MAX - sizeof(frame))
			break;
		if (!memmon_ustack_read(frame, fp, ARRAY_SIZE(frame)))
			break;
		if (!frame[1])
			break;
		st->ip[n++] = frame[1];
		depth--;
		/* The caller's frame lies above this one. */
		low = fp + sizeof(frame);
		fp = frame[0];
	}
	st->nr = n;
	/* Stopped by the depth with a frame that looked followable. */
	if (!depth && fp >= low && !(fp % sizeof(unsigned long)) &&
	    fp <= TASK_SIZE_MAX - sizeof(frame) && n > st->base)
		st->flags |= MEMMON_USTACK_TRUNCATED;
}
