/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: what the page-fault record (hook_faults.c) and the direct-call
 * trampoline on handle_mm_fault() (fault_tramp.c) share.
 *
 * handle_mm_fault() is hooked one of two ways (hook_faults.c says which,
 * and when):
 *
 *   direct     fault_tramp.c's trampoline, called by handle_mm_fault()'s
 *              fentry site (register_ftrace_direct_multi()). It calls
 *              memmon_fault_enter(), then the function itself, then
 *              memmon_fault_exit(): the record's two halves, with the
 *              struct memmon_fault_call between them on the trampoline's
 *              own stack frame.
 *   kretprobe  a kretprobe fired by hooks.c's ftrace filter (or armed
 *              behind a kprobe gate): its entry and return handlers call
 *              the same two halves, the call in the instance's data.
 */
#ifndef MEMMON_DRIVER_INSTR_HOOK_FAULTS_H
#define MEMMON_DRIVER_INSTR_HOOK_FAULTS_H

#include <linux/mm_types.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/types.h>

/* What the entry half leaves for the return half. */
struct memmon_fault_call {
	u64 start;		/* memmon_span_begin() */
	unsigned long addr;
	unsigned long ip;
	unsigned long old_pfn;
	pte_t *ptep;		/* the PTE's slot, if the entry found one */
	pmd_t *pmdp;		/* the PMD slot pointing to ptep's table */
	struct mm_struct *mm;	/* vma->vm_mm: pinned by the caller */
	struct pt_regs *fregs;	/* the fault's registers; NULL for GUP */
	unsigned int fflags;	/* FAULT_FLAG_* */
	u32 access;		/* MEMMON_FAULT_* */
	u32 fclass;		/* enum memmon_fault_class */
	u8 old_state;		/* enum memmon_pte_state (hook_faults.c) */
	bool start_tsc;		/* the unit of start */
};

/*
 * The trampoline's C halves (hook_faults.c). memmon_fault_enter() returns
 * true when the fault is recorded: it filled @call and counted the call in
 * memmon_fault_inflight; the trampoline then calls handle_mm_fault() and
 * passes its result to memmon_fault_exit(), which returns it.
 */
bool memmon_fault_enter(struct vm_area_struct *vma, unsigned long addr,
			unsigned int flags, struct pt_regs *regs,
			struct memmon_fault_call *call);
vm_fault_t memmon_fault_exit(struct memmon_fault_call *call, vm_fault_t ret);

/*
 * Watched calls inside handle_mm_fault() under the trampoline: their
 * return goes through module text. Incremented by memmon_fault_enter(),
 * decremented by memmon_fault_exit() (maybe on another CPU: only the sum
 * means anything, and only once nothing increments any more: see
 * fault_tramp.c).
 */
DECLARE_PER_CPU(long, memmon_fault_inflight);

/* fault_tramp.c; the first is the trampoline's asm, never called from C. */
void memmon_fault_tramp(void);
int memmon_fault_tramp_on(void);
void memmon_fault_tramp_off(void);
void memmon_fault_tramp_exit(void);

#endif /* MEMMON_DRIVER_INSTR_HOOK_FAULTS_H */
