// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module. It must
 * compile, or the build stops: it checks the prototype of every kernel
 * function and tracepoint whose arguments memmon's hooks read, against
 * this kernel's own headers. A hook that reads registers by position
 * (a kretprobe's pt_regs) or a tracepoint probe registered through the
 * untyped tracepoint_probe_register() would read garbage, or oops, on a
 * kernel where the prototype moved; here the compiler says so instead.
 *
 * Checked on Debian's 6.1.0 and 6.12.117 (+rt). Static functions, which
 * no header declares, are listed in driver/compat.h instead.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/taskstats_kern.h>
#include <linux/binfmts.h>
#include <linux/sched/coredump.h>
#include <trace/events/sched.h>
#include <trace/events/kmem.h>

/* hook_faults.c, fault_tramp.c: (vma, address, flags, regs) -> ret */
static_assert(__same_type(&handle_mm_fault,
			  vm_fault_t (*)(struct vm_area_struct *, unsigned long,
					 unsigned int, struct pt_regs *)));

/* hook_lifecycle.c's kprobe: (tsk, group_dead) */
static_assert(__same_type(&taskstats_exit,
			  void (*)(struct task_struct *, int)));

/*
 * exec_guard.c's kprobes: setup_new_exec(bprm), entered with the new
 * image's credentials committed and exec_update_lock still held (fs/exec.c
 * on 6.1 and 6.12: begin_new_exec() takes it, setup_new_exec() releases
 * it); set_dumpable(mm, value).
 */
static_assert(__same_type(&setup_new_exec,
			  void (*)(struct linux_binprm *)));
static_assert(__same_type(&set_dumpable,
			  void (*)(struct mm_struct *, int)));

/* hook_lifecycle.c's tracepoint probes */
static_assert(__same_type(&register_trace_sched_process_fork,
			  int (*)(void (*)(void *, struct task_struct *,
					   struct task_struct *), void *)));
static_assert(__same_type(&register_trace_sched_process_exec,
			  int (*)(void (*)(void *, struct task_struct *, pid_t,
					   struct linux_binprm *), void *)));
static_assert(__same_type(&register_trace_sched_process_exit,
			  int (*)(void (*)(void *, struct task_struct *),
				  void *)));

/* hook_rss.c: rss_stat is (mm, member, count) or, since 6.2, (mm, member) */
static_assert(__same_type(&register_trace_rss_stat,
			  int (*)(void (*)(void *, struct mm_struct *, int, long),
				  void *)) ||
	      __same_type(&register_trace_rss_stat,
			  int (*)(void (*)(void *, struct mm_struct *, int),
				  void *)));

/*
 * hook_syscalls.c: the x86-64 syscall wrappers take the user's registers,
 * a struct pt_regs * in rdi, and the arguments are read from there in the
 * syscall ABI's order (di, si, dx, r10, r8, r9), which is user ABI.
 */
#if !defined(CONFIG_X86_64) || !defined(CONFIG_ARCH_HAS_SYSCALL_WRAPPER)
#error "memmon's syscall hooks need x86-64's pt_regs syscall wrappers"
#endif
