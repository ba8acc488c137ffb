/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: kernel API differences, decided at build time.
 *
 * Kbuild compiles each driver/compat/NAME.c against the target kernel's
 * headers with the module's own flags, and defines MEMMON_HAVE_<NAME> when
 * it compiles (STYLE rule 2: the headers are asked, not LINUX_VERSION_CODE,
 * because stable and distribution kernels backport APIs). Each wrapper
 * below has the newest kernel's semantics; the fallback is what older
 * kernels did.
 */
#ifndef MEMMON_DRIVER_COMPAT_H
#define MEMMON_DRIVER_COMPAT_H

#include <linux/ftrace.h>
#include <linux/mm.h>

/*
 * Every kernel difference memmon depends on, and the kernels each side was
 * checked on (Debian's 6.1.0, 6.12.117 and 6.12.117-rt, all x86-64):
 *
 *   what                         6.1                 6.12 (and -rt)
 *   ---------------------------  ------------------  -------------------------
 *   vma->vm_flags writes         direct              vm_flags_set() (6.3)
 *   ftrace_regs' pt_regs         fregs->regs         arch_ftrace_regs() (6.12)
 *   direct calls                 *_direct_multi()    register_ftrace_direct()
 *                                                    (ops API, 6.5)
 *   current in asm               %gs:current_task    %gs:pcpu_hot (6.2-6.14)
 *   proc lseek refusal           no_llseek           nonseekable_open() alone
 *   rss_stat tracepoint          (mm, member, count) (mm, member) (6.2)
 *   handle_mm_fault() entry      fentry at +0        endbr64; fentry at +4
 *                                                    (CONFIG_X86_KERNEL_IBT)
 *   fault path's lock            mmap_lock (read)    the VMA's lock (6.4,
 *                                                    PER_VMA_LOCK), else
 *                                                    mmap_lock: fault_walk.h
 *   PTE tables freed             mmap_lock (write)   also by khugepaged under
 *                                                    mmap_lock read, after an
 *                                                    RCU grace period (6.6)
 *   mmdrop()/put_pid() in        may not sleep       -rt: may sleep; deferred
 *   atomic context                                   (hook_rss.c)
 *
 * The prototypes of the exported functions and tracepoints the hooks read
 * are checked at build time by compat/signatures.c. Two hooked functions
 * are static in arch/x86/mm/fault.c, so no header can check them; memmon
 * reads only their first three arguments, which are the same on every
 * kernel above (regs, error_code, address): bad_area_nosemaphore() and
 * bad_area_access_error() (whose later arguments changed in 6.10: 6.1
 * (..., vma), 6.12 (..., mm, vma); memmon reads neither).
 */

/* The pt_regs inside the ftrace_regs that a WITH_ARGS callback gets. */
static __always_inline struct pt_regs *memmon_ftrace_regs_pt(struct ftrace_regs *fregs)
{
#ifdef MEMMON_HAVE_ARCH_FTRACE_REGS
	return &arch_ftrace_regs(fregs)->regs;
#else
	return &fregs->regs;
#endif
}

/*
 * 6.3 made vma->vm_flags read-only for per-VMA locking: changes go through
 * vm_flags_set()/vm_flags_clear(), which also mark the VMA write-locked.
 * Before, the mmap_lock held for writing was all a change needed.
 *
 * Context: mmap_lock held for writing (e.g. an mmap file operation).
 */
static inline void memmon_vm_flags_set(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
#ifdef MEMMON_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void memmon_vm_flags_clear(struct vm_area_struct *vma,
					 vm_flags_t flags)
{
#ifdef MEMMON_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

#endif /* MEMMON_DRIVER_COMPAT_H */
