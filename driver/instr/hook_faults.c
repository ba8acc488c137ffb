// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: page faults (MEMMON_REC_FAULT).
 *
 * Hooks both ends of handle_mm_fault() and applies mm_account_fault()'s
 * rule (mm/memory.c) to (ret, flags), on current:
 *
 *   not counted  if ret & (VM_FAULT_ERROR | VM_FAULT_RETRY)
 *   major        if ret & VM_FAULT_MAJOR, or flags & FAULT_FLAG_TRIED
 *   minor        otherwise
 *
 * so a HANDLED record is exactly a fault getrusage counts,
 * MEMMON_FAULTF_MAJOR exactly a major one. The hook is
 * fault_tramp.c's direct trampoline or a kretprobe (hook_faults.h;
 * /proc/memmon/stats' fault_hook). Faults that never reach
 * handle_mm_fault() are recorded (SIGSEGV) from kprobes on
 * bad_area_nosemaphore() and bad_area_access_error(), unless page faults
 * were disabled.
 *
 * Context: the faulting task, in handle_mm_fault()'s caller, which keeps
 * the VMA locked around it; the PTE walks run with preemption disabled
 * (fault_walk.c, "Safety"). No PTE lock: class and pfn are snapshots. A
 * watched fault may sleep inside handle_mm_fault(); fault_tramp.c has the
 * unload rules for the trampoline.
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "hooks.h"
#include "hook_faults.h"
#include "fault_walk.h"
#include "emit_inline.h"
#include "ustack.h"

#include <linux/hugetlb.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/pgtable.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/swapops.h>
#include <linux/uaccess.h>
#include <asm/traps.h>

static bool hook_fault_direct = true;
/* The trampoline is the cheap way (fault_tramp.c); the kretprobe is kept for
 * kernels without direct calls, and for sharing the site with another
 * direct call (a BPF fentry program on handle_mm_fault()).
 */
module_param(hook_fault_direct, bool, 0644);
MODULE_PARM_DESC(hook_fault_direct,
		 "Hook handle_mm_fault() with memmon's direct-call trampoline (0: a kretprobe; read at attach)");

static int fault_inflight = 1024;
/*
 * With the kretprobe, each watched task inside handle_mm_fault() holds one
 * instance; only major faults and lock waits keep it long. The trampoline
 * has no such limit.
 */
module_param(fault_inflight, int, 0444);
MODULE_PARM_DESC(fault_inflight,
		 "Page faults that can be traced at once, system-wide, when hooked by the kretprobe (its maxactive, 64..65536)");

/*
 * handle_mm_fault() returned VM_FAULT_SIGSEGV to the x86 fault handler,
 * which is about to call bad_area_nosemaphore() on this CPU: that one is
 * already recorded. Written by the return handler, read and cleared by the
 * bad-area kprobe, both on this CPU with preemption disabled; nothing in
 * interrupt context touches it.
 */
struct memmon_segv_note {
	struct task_struct *task;
	unsigned long addr;
};

static DEFINE_PER_CPU(struct memmon_segv_note, memmon_segv_note);

/*
 * The kretprobe and its gate exist only while attached (hooks lock); the
 * filter's ops is reused from one attach to the next.
 */
static struct kretprobe *memmon_fault_krp;
static struct memmon_gate memmon_fault_gate;
static bool memmon_fault_direct;	/* through fault_tramp.c instead */
static bool memmon_fault_attached;
static struct memmon_filter memmon_fault_filter;
static struct kprobe *memmon_badarea_kp;	/* [0] nosemaphore, [1] access_error */
static unsigned long memmon_fault_missed_total;

static __always_inline u32 memmon_fault_class(struct vm_area_struct *vma,
					      enum memmon_pte_state state)
{
	if (state == MEMMON_PTE_SWAP)
		return MEMMON_FCLASS_SWAP;
	if (vma->vm_flags & (VM_PFNMAP | VM_IO))
		return MEMMON_FCLASS_OTHER;
	/* Not VM_MIXEDMAP: a driver's pfns without a struct page. The ANON
	 * class promises memmon_fault_end() a struct page behind a present PTE.
	 */
	if (vma_is_anonymous(vma))
		return vma->vm_flags & VM_MIXEDMAP ? MEMMON_FCLASS_OTHER :
						     MEMMON_FCLASS_ANON;
	if (is_vm_hugetlb_page(vma))
		return MEMMON_FCLASS_SHMEM;
	if (vma->vm_file) {
		if (shmem_mapping(vma->vm_file->f_mapping))
			return MEMMON_FCLASS_SHMEM;
		return MEMMON_FCLASS_FILE;
	}
	return MEMMON_FCLASS_OTHER;
}

static __always_inline u32 memmon_fault_result(vm_fault_t ret)
{
	/* The common case in one test. */
	if (likely(!(ret & (VM_FAULT_ERROR | VM_FAULT_RETRY))))
		return MEMMON_FRES_HANDLED;
	if (ret & VM_FAULT_OOM)
		return MEMMON_FRES_OOM;
	if (ret & (VM_FAULT_SIGBUS | VM_FAULT_HWPOISON | VM_FAULT_HWPOISON_LARGE))
		return MEMMON_FRES_SIGBUS;
	if (ret & VM_FAULT_SIGSEGV)
		return MEMMON_FRES_SIGSEGV;
	if (ret & VM_FAULT_ERROR)
		return MEMMON_FRES_OTHER;
	if (ret & VM_FAULT_RETRY)
		return MEMMON_FRES_RETRY;
	return MEMMON_FRES_HANDLED;
}

/* The user ip behind a kernel-mode access: where the syscall came from. */
static unsigned long memmon_user_ip(void)
{
	if (current->flags & PF_KTHREAD)
		return 0;
	return instruction_pointer(task_pt_regs(current));
}

/*
 * What a fault's record body is written from, straight into each ring
 * (emit_inline.h): the call, and what its return half found.
 */
struct memmon_fault_fill {
	const struct memmon_fault_call *call;
	const struct memmon_ustack *st;		/* memmon_fault_fill_stacked() */
	u64 duration_ns;
	u64 pfn;
	u32 result;
	u32 flags;
};

/*
 * Every field of the body is assigned (no holes: the size below is the
 * fields'), the header is the transport's: no stale ring byte survives,
 * and nothing needs zeroing first.
 */
static_assert(sizeof(struct memmon_rec_fault) ==
	      sizeof(struct memmon_rec_header) + 4 * sizeof(u64) + 4 * sizeof(u32),
	      "struct memmon_rec_fault has a hole memmon_fault_fill() would leave stale");

/* The pfn only for a session whose opener had CAP_SYS_ADMIN (as pagemap). */
static __always_inline void memmon_fault_fill(struct memmon_rec_header *hdr,
					      const struct memmon_ksession *s,
					      const void *ctx)
{
	struct memmon_rec_fault *rec = container_of(hdr, struct memmon_rec_fault, hdr);
	const struct memmon_fault_fill *f = ctx;
	bool pfn = s->flags & MEMMON_SESSF_PFN;

	rec->addr = f->call->addr;
	rec->ip = f->call->ip;
	rec->access = f->call->access;
	rec->fclass = f->call->fclass;
	rec->result = f->result;
	rec->flags = pfn ? f->flags : f->flags & ~MEMMON_FAULTF_PFN;
	rec->duration_ns = f->duration_ns;
	rec->pfn = pfn ? f->pfn : 0;
}

/* A fault record and the stack, as deep as session @s asked. */
static __always_inline u64 memmon_fault_stacked_len(const struct memmon_ksession *s,
						    const void *ctx)
{
	const struct memmon_fault_fill *f = ctx;

	return sizeof(struct memmon_rec_fault) - sizeof(struct memmon_rec_header) +
	       memmon_ustack_bytes(memmon_ustack_nr(f->st, READ_ONCE(s->stack_depth)));
}

static __always_inline void memmon_fault_fill_stacked(struct memmon_rec_header *hdr,
						      const struct memmon_ksession *s,
						      const void *ctx)
{
	struct memmon_rec_fault *rec = container_of(hdr, struct memmon_rec_fault, hdr);
	const struct memmon_fault_fill *f = ctx;
	/* What memmon_fault_stacked_len() gave @s: 8-byte parts, no padding. */
	u32 nr = (hdr->size - sizeof(*rec) - sizeof(struct memmon_user_stack)) /
		 sizeof(u64);

	memmon_fault_fill(hdr, s, ctx);
	rec->flags |= MEMMON_FAULTF_USTACK;
	memmon_ustack_put(rec + 1, f->st, nr);
}

/*
 * The fault's record with the user stack, for the sessions in @stacked
 * (MEMMON_STACK_FAULTS). Out of line: the stack's buffer is not the
 * common fault's to carry. Context: memmon_fault_end()'s.
 */
static noinline void memmon_fault_emit_stacked(u64 stacked,
					       struct memmon_fault_fill *f,
					       u64 now)
{
	struct memmon_ustack st;

	memmon_ustack_walk(&st, READ_ONCE(memmon_masks.stack_depth));
	f->st = &st;
	if (!st.nr) {
		__memmon_emit_fill(stacked, current, MEMMON_REC_FAULT,
				   sizeof(struct memmon_rec_fault) -
				   sizeof(struct memmon_rec_header),
				   memmon_fault_fill, f, now);
		return;
	}
	__memmon_emit_fill_len(stacked, current, MEMMON_REC_FAULT, 0,
			       memmon_fault_stacked_len,
			       memmon_fault_fill_stacked, f, now);
}

/*
 * The entry half: what is known before handle_mm_fault(vma, addr, flags,
 * fregs) runs, into @call.
 * Context: preemption disabled, task context, the VMA locked by the caller
 * (mmap_lock for reading, or its own lock on 6.4+); the fault's task is
 * current.
 */
static __always_inline void memmon_fault_begin(struct memmon_fault_call *call,
					       struct vm_area_struct *vma,
					       unsigned long addr,
					       unsigned int flags,
					       struct pt_regs *fregs)
{
	call->addr = addr;
	call->fflags = flags;
	call->fregs = fregs;
	call->mm = vma->vm_mm;
	call->ip = fregs && user_mode(fregs) ? instruction_pointer(fregs) :
					       memmon_user_ip();
	if (flags & FAULT_FLAG_INSTRUCTION)
		call->access = MEMMON_FAULT_EXEC;
	else if (flags & FAULT_FLAG_WRITE)
		call->access = MEMMON_FAULT_WRITE;
	else
		call->access = MEMMON_FAULT_READ;
	call->old_pfn = 0;
	call->old_state = memmon_pte_peek(call->mm, addr, &call->old_pfn,
					  &call->ptep, &call->pmdp);
	call->fclass = memmon_fault_class(vma, call->old_state);
	call->start = memmon_span_begin(&call->start_tsc);
}

/*
 * Is @pfn, which the fault mapped where another or nothing was before, and
 * not the zero page, a page the fault allocated? The common case first: in
 * an anonymous VMA (class ANON: not VM_MIXEDMAP, memmon_fault_class()) a
 * PTE that was empty is filled only by do_anonymous_page(), with a fresh
 * page or the zero page, so the struct page need not be read. Only a PTE:
 * an empty PMD may be filled with the huge zero page (a THP read fault),
 * which is_zero_pfn() does not know, and PageAnon() tells apart. Otherwise a
 * fresh anonymous page (COW copy; not a swap-in's page) or a major
 * fault's. A present PTE of class ANON maps a struct page (PFN, I/O and
 * mixed maps are class OTHER): pfn_valid(), dearer, only of the others.
 */
static __always_inline bool memmon_fault_newpage(const struct memmon_fault_call *call,
						 unsigned long pfn, bool pte_level,
						 vm_fault_t ret)
{
	if (pte_level && call->fclass == MEMMON_FCLASS_ANON &&
	    call->old_state == MEMMON_PTE_NONE)
		return true;
	if (call->fclass != MEMMON_FCLASS_ANON && !pfn_valid(pfn))
		return false;
	if (ret & VM_FAULT_MAJOR)
		return true;
	return call->fclass != MEMMON_FCLASS_SWAP && PageAnon(pfn_to_page(pfn));
}

/*
 * The return half: handle_mm_fault() returned @ret for the call @call
 * describes; record it for the sessions that still want it.
 * Context: preemption disabled, the same task as the entry; the VMA
 * still locked unless ret has RETRY or COMPLETED; nested in no filter
 * callback on this CPU (memmon_sessions_for_current()).
 */
static __always_inline void memmon_fault_end(const struct memmon_fault_call *call,
					     vm_fault_t ret)
{
	enum memmon_pte_state state = MEMMON_PTE_NONE;
	/*
	 * Every field is assigned before the emit reads it: nothing for
	 * CONFIG_INIT_STACK_ALL_ZERO (Debian's) to zero on every return.
	 */
	struct memmon_fault_fill f __uninitialized;
	unsigned long pfn = 0;
	u64 sessions, stacked, now;
	bool pte_level = false;	/* state is a PTE's, not a huge page's */
	u32 flags = 0;

	sessions = memmon_sessions_for_current(MEMMON_EV_FAULT, 0);
	if (!sessions)
		return;
	now = memmon_now();

	f.result = memmon_fault_result(ret);
	if (!(call->fflags & FAULT_FLAG_USER))
		flags |= MEMMON_FAULTF_KERNEL;
	/* mm_account_fault()'s rule, see the top of this file. */
	if (f.result == MEMMON_FRES_HANDLED &&
	    ((ret & VM_FAULT_MAJOR) || (call->fflags & FAULT_FLAG_TRIED)))
		flags |= MEMMON_FAULTF_MAJOR;

	/*
	 * The VMA's lock (mmap_lock or, on 6.4+, its own) was held
	 * throughout unless RETRY or COMPLETED, so the tables above the PTE
	 * table are the entry's; the PTE table too unless khugepaged
	 * retracted it meanwhile (6.6+: fault_walk.c). Still installed, one
	 * load replaces a walk. Otherwise walk (the fault may have allocated
	 * the page table, or mapped a huge page).
	 */
	if (!(ret & (VM_FAULT_RETRY | VM_FAULT_COMPLETED))) {
		if (call->ptep && memmon_pte_table_live(call->pmdp, call->ptep)) {
			state = memmon_pte_state(READ_ONCE(*call->ptep), &pfn);
			pte_level = true;
		} else {
			struct memmon_pte_look look;

			look = memmon_pte_look(call->mm, call->addr);
			state = look.state;
			pfn = look.pfn;
			pte_level = look.pte_level;
		}
	}
	if (state == MEMMON_PTE_PRESENT) {
		flags |= MEMMON_FAULTF_PFN;
		if ((call->old_state != MEMMON_PTE_PRESENT || pfn != call->old_pfn) &&
		    !is_zero_pfn(pfn) &&
		    memmon_fault_newpage(call, pfn, pte_level, ret))
			flags |= MEMMON_FAULTF_NEWPAGE;
	} else {
		pfn = 0;
	}

	if ((ret & VM_FAULT_SIGSEGV) && call->fregs) {
		this_cpu_write(memmon_segv_note.task, current);
		this_cpu_write(memmon_segv_note.addr, call->addr);
	}

	f.call = call;
	f.flags = flags;
	f.duration_ns = memmon_span_ns(call->start, call->start_tsc, now);
	f.pfn = pfn;
	stacked = sessions & READ_ONCE(memmon_masks.stack_faults);
	if (unlikely(stacked)) {
		memmon_fault_emit_stacked(stacked, &f, now);
		sessions &= ~stacked;
		if (!sessions)
			return;
	}
	__memmon_emit_fill(sessions, current, MEMMON_REC_FAULT,
			   sizeof(struct memmon_rec_fault) - sizeof(struct memmon_rec_header),
			   memmon_fault_fill, &f, now);
}

/*
 * The kretprobe's entry handler on handle_mm_fault(vma, address, flags,
 * regs). Returns 0 to hook the return, 1 when no session wants this fault.
 * Context: the kretprobe's pre-handler (called by the filter or by kprobes),
 * preemption disabled, task context, the VMA locked by the caller
 * (mmap_lock, or its own lock on 6.4+).
 */
static int memmon_fault_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (!memmon_sessions_from_gate(current, MEMMON_EV_FAULT, 0))
		return 1;
	memmon_fault_begin((struct memmon_fault_call *)ri->data,
			   (struct vm_area_struct *)regs->di, regs->si,
			   regs->dx, (struct pt_regs *)regs->cx);
	return 0;
}

/*
 * The kretprobe's return handler, for a call its entry handler took.
 * Context: the rethook trampoline handler, preemption disabled, the same
 * task; the VMA still locked unless ret has RETRY or COMPLETED.
 */
static int memmon_fault_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	memmon_fault_end((const struct memmon_fault_call *)ri->data,
			 (__force vm_fault_t)regs_return_value(regs));
	return 0;
}

/**
 * memmon_fault_enter() - the trampoline's entry half (fault_tramp.c).
 * @vma:   handle_mm_fault()'s arguments
 * @addr:  ...
 * @flags: ...
 * @regs:  ...
 * @call:  out: the call, on the trampoline's frame
 *
 * Context: task context, preemptible (called by the trampoline from the
 * fentry site of handle_mm_fault(); the caller keeps the VMA locked), never
 * sleeps. Nothing it calls enters handle_mm_fault(). Pairs with
 * memmon_fault_exit(), which the trampoline calls iff this returns true.
 * Return: true when a session records the fault: @call is filled and the
 * call counted in memmon_fault_inflight.
 */
bool notrace memmon_fault_enter(struct vm_area_struct *vma, unsigned long addr,
				unsigned int flags, struct pt_regs *regs,
				struct memmon_fault_call *call)
{
	bool watched = false;

	preempt_disable_notrace();
	if (!memmon_sessions_for_current(MEMMON_EV_FAULT, 0)) {
		this_cpu_inc(memmon_gate_skipped);
		goto out;
	}
	/* Before anything else of ours: see fault_tramp.c's unload table. */
	this_cpu_inc(memmon_fault_inflight);
	memmon_fault_begin(call, vma, addr, flags, regs);
	watched = true;
out:
	preempt_enable_notrace();
	return watched;
}

/**
 * memmon_fault_exit() - the trampoline's return half (fault_tramp.c).
 * @call: what memmon_fault_enter() filled
 * @ret:  what handle_mm_fault() returned
 *
 * Context: task context, preemptible, the task memmon_fault_enter() ran
 * in (maybe on another CPU); the VMA still locked unless @ret has RETRY or
 * COMPLETED.
 * Return: @ret, for the trampoline to return.
 */
vm_fault_t notrace memmon_fault_exit(struct memmon_fault_call *call,
				     vm_fault_t ret)
{
	preempt_disable_notrace();
	memmon_fault_end(call, ret);
	/* The last thing of ours but the return: fault_tramp.c's table. */
	this_cpu_dec(memmon_fault_inflight);
	preempt_enable_notrace();
	return ret;
}

/*
 * bad_area_nosemaphore(regs, error_code, address) and
 * bad_area_access_error(regs, error_code, address, ...): a fault that the
 * kernel turns into SIGSEGV (user mode) or -EFAULT (kernel mode) without
 * handle_mm_fault(), or right after it returned VM_FAULT_SIGSEGV. Only
 * the first three arguments are read: they are the same on every
 * supported kernel, the rest is not (compat.h).
 * Context: kprobe handler on the fault path, preemption disabled; for
 * access_error with the faulting VMA locked: mmap_lock held for reading
 * (6.1, and 6.12's fallback path) or the VMA's own read lock (6.12's
 * per-VMA fast path), either of which keeps the VMA at @address in place.
 */
/*
 * The class of the VMA an access error hit. The caller's lock on that VMA
 * (see memmon_badarea_pre()) keeps it from being unmapped. The maple tree
 * walk: RCU-safe on 6.12 (the mm's tree is MT_FLAGS_USE_RCU since 6.4); on
 * 6.1 mmap_lock, held, excludes its writers.
 */
static u32 memmon_badarea_class(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma;
	u32 fclass = MEMMON_FCLASS_NONE;

	rcu_read_lock();
	vma = vma_lookup(mm, addr);
	if (vma)
		fclass = memmon_fault_class(vma, MEMMON_PTE_NONE);
	rcu_read_unlock();
	return fclass;
}

/* As memmon_fault_emit_stacked(), for a fault no handler took. */
static noinline void memmon_badarea_emit_stacked(u64 stacked,
						 const struct memmon_rec_fault *rec,
						 u64 now)
{
	struct memmon_ustack st;

	memmon_ustack_walk(&st, READ_ONCE(memmon_masks.stack_depth));
	if (!st.nr) {
		memmon_emit(stacked, current, MEMMON_REC_FAULT, rec,
			    sizeof(*rec), NULL, 0, now);
		return;
	}
	memmon_emit_stacked(stacked, current, MEMMON_REC_FAULT, rec, sizeof(*rec),
			    offsetof(struct memmon_rec_fault, flags),
			    MEMMON_FAULTF_USTACK, &st, now);
}

static int memmon_badarea_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct pt_regs *fregs = (struct pt_regs *)regs->di;
	unsigned long error_code = regs->si;
	unsigned long addr = regs->dx;
	struct memmon_rec_fault rec;
	bool access_error = false;
	u64 sessions, stacked, now;

	/* Kernel addresses (vmalloc faults, oopses) and nofault probes. */
	if (addr >= TASK_SIZE_MAX || pagefault_disabled())
		return 0;
	sessions = memmon_sessions_for(current, MEMMON_EV_FAULT, 0);
	if (!sessions)
		return 0;

	if (kp == &memmon_badarea_kp[1]) {
		access_error = true;
	} else if (this_cpu_read(memmon_segv_note.task) == current &&
		   this_cpu_read(memmon_segv_note.addr) == addr) {
		this_cpu_write(memmon_segv_note.task, NULL);
		return 0;
	}
	now = memmon_now();

	memset(&rec, 0, sizeof(rec));
	rec.addr = addr;
	if (user_mode(fregs)) {
		rec.ip = instruction_pointer(fregs);
	} else {
		rec.ip = memmon_user_ip();
		rec.flags |= MEMMON_FAULTF_KERNEL;
	}
	if (error_code & X86_PF_INSTR)
		rec.access = MEMMON_FAULT_EXEC;
	else if (error_code & X86_PF_WRITE)
		rec.access = MEMMON_FAULT_WRITE;
	else
		rec.access = MEMMON_FAULT_READ;
	rec.fclass = MEMMON_FCLASS_NONE;
	if (access_error && current->mm)
		rec.fclass = memmon_badarea_class(current->mm, addr);
	rec.result = MEMMON_FRES_SIGSEGV;
	stacked = sessions & READ_ONCE(memmon_masks.stack_faults);
	if (unlikely(stacked)) {
		memmon_badarea_emit_stacked(stacked, &rec, now);
		sessions &= ~stacked;
	}
	memmon_emit(sessions, current, MEMMON_REC_FAULT, &rec, sizeof(rec),
		    NULL, 0, now);
	return 0;
}

static const char *const memmon_badarea_symbols[] = {
	"bad_area_nosemaphore",
	"bad_area_access_error",
};

/**
 * memmon_fault_missed() - faults not recorded for want of an instance.
 *
 * Context: process context, memmon_hooks_lock held (hooks.c).
 * Return: the count since the module was loaded.
 */
static unsigned long memmon_fault_missed(void)
{
	unsigned long n = memmon_fault_missed_total;

	if (memmon_fault_krp)
		n += READ_ONCE(memmon_fault_krp->nmissed) +
		     READ_ONCE(memmon_fault_krp->kp.nmissed);
	return n;
}

/**
 * memmon_fault_hook() - how handle_mm_fault() is hooked now.
 *
 * Context: process context, memmon_hooks_lock held (hooks.c).
 * Return: "direct" (fault_tramp.c's trampoline), memmon_gate_mode() of the
 * kretprobe's gate, or "none" while detached.
 */
static const char *memmon_fault_hook(void)
{
	if (memmon_fault_direct)
		return "direct";
	return memmon_fault_krp ? memmon_gate_mode(&memmon_fault_gate) : "none";
}

/* The kretprobe on handle_mm_fault(), behind its gate. 0 or -errno. */
static int memmon_fault_krp_attach(void)
{
	struct memmon_gate *gate;
	struct kretprobe *krp;
	int err;

	krp = kzalloc(sizeof(*krp), GFP_KERNEL);
	if (!krp)
		return -ENOMEM;
	krp->kp.symbol_name = "handle_mm_fault";
	krp->kp.flags = KPROBE_FLAG_DISABLED;	/* memmon_gates_arm() fires it */
	krp->entry_handler = memmon_fault_entry;
	krp->handler = memmon_fault_return;
	krp->data_size = sizeof(struct memmon_fault_call);
	krp->maxactive = clamp(fault_inflight, 64, 65536);
	err = register_kretprobe(krp);
	if (err) {
		pr_err("cannot hook handle_mm_fault: %d\n", err);
		goto err_free;
	}
	memset(&memmon_fault_gate, 0, sizeof(memmon_fault_gate));
	memmon_gate_init(&memmon_fault_gate, krp, MEMMON_EV_FAULT, 0);
	gate = &memmon_fault_gate;
	err = memmon_gates_arm(&memmon_fault_filter, &gate, 1);
	if (err)
		goto err_unregister;
	memmon_fault_krp = krp;
	return 0;

err_unregister:
	memmon_gates_disarm(&memmon_fault_filter, &gate, 1);
	unregister_kretprobe(krp);
err_free:
	kfree(krp);
	return err;
}

static void memmon_fault_krp_detach(void)
{
	struct memmon_gate *gate = &memmon_fault_gate;

	if (!memmon_fault_krp)
		return;
	memmon_gates_disarm(&memmon_fault_filter, &gate, 1);	/* before it */
	unregister_kretprobe(memmon_fault_krp);
	memmon_fault_missed_total = memmon_fault_missed();
	kfree(memmon_fault_krp);
	memmon_fault_krp = NULL;
}

/**
 * memmon_fault_attach() - hook handle_mm_fault() and the bad-area paths.
 *
 * handle_mm_fault() through the trampoline (fault_tramp.c) where it can be
 * had - not with hook_kprobes=1 or hook_fault_direct=0, not where the
 * kernel has no direct calls or someone else's direct call or IPMODIFY ops
 * holds the site - else through the kretprobe.
 *
 * Context: process context, may sleep; memmon_hooks_lock held (hooks.c).
 * Return: 0, or a negative errno with nothing attached.
 */
static int memmon_fault_attach(void)
{
	struct kprobe *kps[ARRAY_SIZE(memmon_badarea_symbols)];
	struct kprobe *kp;
	unsigned int i;
	int err;

	kp = kcalloc(ARRAY_SIZE(memmon_badarea_symbols), sizeof(*kp),
		     GFP_KERNEL);
	if (!kp)
		return -ENOMEM;

	memmon_walk_setup();
	if (READ_ONCE(hook_fault_direct) && !memmon_hooks_use_kprobes()) {
		err = memmon_fault_tramp_on();
		if (!err)
			memmon_fault_direct = true;
		else if (err != -EOPNOTSUPP)	/* not built for this kernel */
			pr_info_ratelimited("no direct call on handle_mm_fault (%d): a kretprobe instead\n",
					    err);
	}
	if (!memmon_fault_direct) {
		err = memmon_fault_krp_attach();
		if (err)
			goto err_free;
	}

	for (i = 0; i < ARRAY_SIZE(memmon_badarea_symbols); i++) {
		kp[i].symbol_name = memmon_badarea_symbols[i];
		kp[i].pre_handler = memmon_badarea_pre;
		kps[i] = &kp[i];
	}
	/* The handler compares kp against these: publish before arming. */
	memmon_badarea_kp = kp;
	err = register_kprobes(kps, ARRAY_SIZE(kps));
	if (err) {
		pr_err("cannot hook the x86 bad-area paths: %d\n", err);
		goto err_unhook;
	}
	memmon_fault_attached = true;
	return 0;

err_unhook:
	memmon_badarea_kp = NULL;
	if (memmon_fault_direct)
		memmon_fault_tramp_off();
	memmon_fault_direct = false;
	memmon_fault_krp_detach();
err_free:
	kfree(kp);
	return err;
}

/**
 * memmon_fault_detach() - unhook the faults.
 *
 * Context: process context, may sleep; memmon_hooks_lock held (hooks.c).
 */
static void memmon_fault_detach(void)
{
	struct kprobe *kps[ARRAY_SIZE(memmon_badarea_symbols)];
	unsigned int i;
	int cpu;

	if (!memmon_fault_attached)
		return;
	for (i = 0; i < ARRAY_SIZE(kps); i++)
		kps[i] = &memmon_badarea_kp[i];
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	if (memmon_fault_direct)
		memmon_fault_tramp_off();
	memmon_fault_direct = false;
	memmon_fault_krp_detach();

	kfree(memmon_badarea_kp);
	memmon_badarea_kp = NULL;
	memmon_fault_attached = false;
	for_each_possible_cpu(cpu)
		per_cpu(memmon_segv_note, cpu).task = NULL;
}

/* Context: process context, memmon_hooks_lock held (hooks.c). */
static void memmon_fault_show(struct seq_file *m)
{
	seq_printf(m, "fault_hook %s\n", memmon_fault_hook());
	seq_printf(m, "fault_walk %s\n", memmon_walk_name());
	seq_printf(m, "faults_missed %lu\n", memmon_fault_missed());
}

const struct memmon_hook_group memmon_hooks_faults = {
	.name		= "faults",
	.attach		= memmon_fault_attach,
	.detach		= memmon_fault_detach,
	.show		= memmon_fault_show,
	.exit		= memmon_fault_tramp_exit,
};
