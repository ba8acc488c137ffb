// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the direct-call trampoline on handle_mm_fault(), and what keeps
 * it safe to unload. Called by the function's fentry site
 * (register_ftrace_direct()). Not watched (memmon_fault_enter() false):
 * "leave; ret" into cont with the arguments as they came. Watched: cont is
 * called directly as handle_mm_fault+MEMMON_CONT_OFF with the frame in
 * place, memmon_fault_exit() gets its result, and "leave; add $8" drops
 * cont so that the final ret goes to the caller. The frame:
 *
 *   rbp + 16  return into the caller of handle_mm_fault()
 *   rbp +  8  where handle_mm_fault() continues ("cont")
 *   rbp +  0  the rbp of the function's caller
 *   rbp -  8  rdi  vma        \
 *   rbp - 16  rsi  address     | the arguments, kept across
 *   rbp - 24  rdx  flags       | memmon_fault_enter()
 *   rbp - 32  rcx  regs       /
 *   rsp       struct memmon_fault_call (hook_faults.h), 16-aligned size
 *
 * Clobbered besides the saved arguments: rax, r8-r11 and the flags, all
 * caller-saved and carrying no argument of handle_mm_fault().
 *
 * Unload. The module's text must outlive every frame and every task in the
 * trampoline or its C halves:
 *
 *   who                                   what waits for it
 *   ------------------------------------  --------------------------------
 *   between the fentry call and the       synchronize_rcu_tasks() after
 *   count in memmon_fault_inflight        the unregistration: no voluntary
 *   (preemptible, never sleeps)           switch in there, so a task there
 *                                         holds the grace period
 *   counted: inside handle_mm_fault(),    the sum of memmon_fault_inflight
 *   may sleep                             back to 0
 *   after the count's decrement: the      a second synchronize_rcu_tasks()
 *   rest of memmon_fault_exit() and the   once the sum is 0: the same
 *   trampoline's return (never sleeps)    reason as the first
 *
 * After the first grace period the count only decreases, so a sum read as
 * 0 was 0. A sum not 0 when the hook goes parks a module reference
 * (memmon_tramp_holds_ref) that the drain work drops; module exit waits.
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "hooks.h"
#include "hook_faults.h"

#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/jiffies.h>
#include <linux/linkage.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/objtool.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <linux/workqueue.h>
#include <linux/uaccess.h>
#include <asm/ibt.h>
#include <asm/nops.h>
#include <asm/text-patching.h>
#include <asm/unwind_hints.h>

DEFINE_PER_CPU(long, memmon_fault_inflight);

#if defined(MEMMON_HAVE_FTRACE_DIRECT_MULTI) || defined(MEMMON_HAVE_FTRACE_DIRECT)
#define MEMMON_HAVE_DIRECT 1
#endif
#if defined(MEMMON_HAVE_CURRENT_TASK) || defined(MEMMON_HAVE_PCPU_HOT)
#define MEMMON_HAVE_ASM_CURRENT 1
#endif
#if defined(MEMMON_HAVE_DIRECT) && defined(MEMMON_HAVE_ASM_CURRENT) && \
	defined(CONFIG_X86_64) && \
	defined(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)
#define MEMMON_TRAMP 1
#else
#define MEMMON_TRAMP 0
#endif

#if MEMMON_TRAMP

#define MEMMON_TRAMP_CALL_SIZE	ALIGN(sizeof(struct memmon_fault_call), 16)
#define MEMMON_TRAMP_FRAME	(MEMMON_TRAMP_CALL_SIZE + 32)

/*
 * The trampoline calls the rest of handle_mm_fault() with a direct call
 * to the instruction after its fentry site, never through a register: on
 * a kernel built with CONFIG_X86_KERNEL_IBT an indirect branch must land on
 * an ENDBR64, and that instruction is not one. With IBT every global
 * function starts with ENDBR64 (or the NOP that sealing leaves), then the
 * fentry call; without, with the fentry call. memmon_fault_tramp_on()
 * checks the bytes at the site before registering (a kernel laid out
 * otherwise gets the kretprobe).
 */
#ifdef CONFIG_X86_KERNEL_IBT
#define MEMMON_FENTRY_OFF	4
#else
#define MEMMON_FENTRY_OFF	0
#endif
#define MEMMON_CONT_OFF		(MEMMON_FENTRY_OFF + MCOUNT_INSN_SIZE)

/* %gs-relative location of this CPU's current task. */
#ifdef MEMMON_HAVE_CURRENT_TASK
#define MEMMON_CURRENT_SYM	"current_task"
#define MEMMON_CURRENT_OFF	0
#else
#define MEMMON_CURRENT_SYM	"pcpu_hot"
#define MEMMON_CURRENT_OFF	offsetof(struct pcpu_hot, current_task)
#endif

#ifdef MEMMON_HAVE_FTRACE_DIRECT
static int memmon_direct_register(struct ftrace_ops *ops, unsigned long addr)
{
	return register_ftrace_direct(ops, addr);
}

static int memmon_direct_unregister(struct ftrace_ops *ops, unsigned long addr)
{
	return unregister_ftrace_direct(ops, addr, false);
}
#else
static int memmon_direct_register(struct ftrace_ops *ops, unsigned long addr)
{
	return register_ftrace_direct_multi(ops, addr);
}

static int memmon_direct_unregister(struct ftrace_ops *ops, unsigned long addr)
{
	return unregister_ftrace_direct_multi(ops, addr);
}
#endif

/*
 * The trampoline itself (the frame is drawn at the top of this file). It
 * is extended asm in a function that is never called, only for the
 * structure offsets as operands; the code goes to .text as a function of
 * its own, which objtool checks and gives unwind data like any other.
 */
static void __used memmon_fault_tramp_container(void)
{
	/* A section of its own: .text is where this function is. */
	asm volatile(".pushsection .text.memmon_tramp, \"ax\", @progbits\n\t"
	".globl memmon_fault_tramp\n\t"
	".type memmon_fault_tramp, @function\n\t"
	".p2align 4\n"
	"memmon_fault_tramp:\n\t"
	ASM_ENDBR
	/* this CPU's unwatched process (emit.h): one compare and a count */
	"movq %%gs:" MEMMON_CURRENT_SYM "+%c[cur], %%rax\n\t"
	"movl %c[tgid](%%rax), %%eax\n\t"
	"cmpl %%gs:memmon_watch_unwatched(%%rip), %%eax\n\t"
	"jne 1f\n\t"
	"incq %%gs:memmon_gate_skipped(%%rip)\n\t"
	ASM_RET
	"1:\n\t"
	"pushq %%rbp\n\t"
	"movq %%rsp, %%rbp\n\t"
	"subq $%c[frame], %%rsp\n\t"
	"movq %%rdi, -8(%%rbp)\n\t"
	"movq %%rsi, -16(%%rbp)\n\t"
	"movq %%rdx, -24(%%rbp)\n\t"
	"movq %%rcx, -32(%%rbp)\n\t"
	"movq %%rsp, %%r8\n\t"
	"call memmon_fault_enter\n\t"
	"movq -8(%%rbp), %%rdi\n\t"
	"movq -16(%%rbp), %%rsi\n\t"
	"movq -24(%%rbp), %%rdx\n\t"
	"movq -32(%%rbp), %%rcx\n\t"
	"testb %%al, %%al\n\t"
	"jnz 2f\n\t"
	"leave\n\t"
	ASM_RET
	"2:\n\t"
	/* watched: the function, returning here */
	"call handle_mm_fault+%c[cont]\n\t"
	"movq %%rsp, %%rdi\n\t"
	"movl %%eax, %%esi\n\t"
	"call memmon_fault_exit\n\t"
	"leave\n\t"
	/* drop cont: the ret goes to handle_mm_fault()'s caller */
	"addq $8, %%rsp\n\t"
	UNWIND_HINT_FUNC
	ASM_RET
	".size memmon_fault_tramp, . - memmon_fault_tramp\n\t"
	".popsection\n\t"
	:
	: [tgid] "i" (offsetof(struct task_struct, tgid)),
	  [cur] "i" (MEMMON_CURRENT_OFF),
	  [cont] "i" (MEMMON_CONT_OFF),
	  [frame] "i" (MEMMON_TRAMP_FRAME));
}

/*
 * memmon_tramp_lock protects the two flags below and serialises the hook's
 * registration against the drain work. It nests inside hooks.c's lock.
 *
 *   memmon_tramp_on      the trampoline is registered on handle_mm_fault()
 *   memmon_tramp_holds_ref  the module holds a reference of its own, which
 *                        memmon_tramp_drain drops (see the top of the file)
 *   memmon_tramp_pinned  the trampoline could not be unregistered: a
 *                        reference that is never dropped
 */
static DEFINE_MUTEX(memmon_tramp_lock);
static bool memmon_tramp_on;
static bool memmon_tramp_holds_ref;
static bool memmon_tramp_pinned;
/* Its filter hash holds handle_mm_fault() while registered; never zeroed. */
static struct ftrace_ops memmon_tramp_ops;

static void memmon_tramp_drain_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(memmon_tramp_drain, memmon_tramp_drain_fn);

#define MEMMON_TRAMP_DRAIN_MS	50

/* Watched faults in flight under the trampoline (see the top of the file). */
static long memmon_tramp_inflight(void)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu(memmon_fault_inflight, cpu));
	return n;
}

/*
 * Wait for the frames to return, then for the tail of the last one: where
 * the module cannot refuse to go (its exit). Unbounded: a fault that never
 * returns (an unanswered userfaultfd) holds rmmod until it does, or until
 * its process is killed. Lock held, not on the workqueue.
 */
static void memmon_tramp_wait(void)
{
	long n = memmon_tramp_inflight();

	/* Said at once: an rmmod that hangs says why. */
	if (n)
		pr_info("unloading waits for %ld traced page faults to finish\n",
			n);
	while (memmon_tramp_inflight())
		msleep(MEMMON_TRAMP_DRAIN_MS);
	synchronize_rcu_tasks();	/* the last decrement's tail */
}

/*
 * Drops the held reference once no watched fault is left under the
 * trampoline. Registered again meanwhile, it stops: the frames of before
 * are then covered as the new ones are (the sessions' files hold the
 * module, and the next memmon_fault_tramp_off() parks again or waits).
 * After module_put() only this function's return runs in module text;
 * memmon_fault_tramp_exit()'s cancel_delayed_work_sync() waits for it.
 */
static void memmon_tramp_drain_fn(struct work_struct *work)
{
	mutex_lock(&memmon_tramp_lock);
	if (memmon_tramp_on) {
		/* Registered again: the next memmon_fault_tramp_off() finds
		 * the reference held and queues us again.
		 */
		mutex_unlock(&memmon_tramp_lock);
		return;
	}
	if (memmon_tramp_inflight()) {
		queue_delayed_work(system_unbound_wq, &memmon_tramp_drain,
				   msecs_to_jiffies(MEMMON_TRAMP_DRAIN_MS));
		mutex_unlock(&memmon_tramp_lock);
		return;
	}
	memmon_tramp_holds_ref = false;
	mutex_unlock(&memmon_tramp_lock);
	/* The last decrement's tail: see the table at the top of the file. */
	synchronize_rcu_tasks();
	module_put(THIS_MODULE);
}

/*
 * The fentry site must be where the trampoline's direct call assumes
 * (MEMMON_FENTRY_OFF): a 5-byte NOP while nothing traces the function, a
 * call while something does, an int3 while ftrace rewrites it.
 */
static int memmon_fentry_check(unsigned long ip)
{
	static const u8 nop5[] = { BYTES_NOP5 };
	u8 site[MCOUNT_INSN_SIZE];

	if (copy_from_kernel_nofault(site, (void *)(ip + MEMMON_FENTRY_OFF),
				     sizeof(site)))
		return -EFAULT;
	if (!memcmp(site, nop5, sizeof(site)) || site[0] == CALL_INSN_OPCODE ||
	    site[0] == INT3_INSN_OPCODE)
		return 0;
	pr_info("handle_mm_fault's fentry site is not at +%d (%*ph): using a kretprobe\n",
		MEMMON_FENTRY_OFF, (int)sizeof(site), site);
	return -EOPNOTSUPP;
}

/**
 * memmon_fault_tramp_on() - register the trampoline on handle_mm_fault().
 *
 * Fails with -EBUSY where another direct call (a BPF trampoline) or an
 * IPMODIFY ops (livepatch) already holds the site, -EINVAL where the
 * function has no fentry site, -EOPNOTSUPP where the trampoline was not
 * built (no direct calls in the kernel, not x86-64); the caller falls back
 * to the kretprobe.
 *
 * Context: process context, may sleep; the hooks lock held.
 * Return: 0 or a negative errno, with nothing registered.
 */
int memmon_fault_tramp_on(void)
{
	unsigned long ip = (unsigned long)handle_mm_fault;
	int err;

	mutex_lock(&memmon_tramp_lock);
	if (WARN_ON_ONCE(memmon_tramp_on)) {
		err = -EBUSY;
		goto out_unlock;
	}
	err = memmon_fentry_check(ip);
	if (err)
		goto out_unlock;
	err = ftrace_set_filter_ip(&memmon_tramp_ops, ip, 0, 1);
	if (err)
		goto out_unlock;
	err = memmon_direct_register(&memmon_tramp_ops,
				     (unsigned long)memmon_fault_tramp);
	if (err) {
		/* It may have set these before failing; a retry needs them 0. */
		memmon_tramp_ops.func = NULL;
		memmon_tramp_ops.trampoline = 0;
		ftrace_set_filter_ip(&memmon_tramp_ops, ip, 1, 0);
		goto out_unlock;
	}
	memmon_tramp_on = true;
out_unlock:
	mutex_unlock(&memmon_tramp_lock);
	return err;
}

/**
 * memmon_fault_tramp_off() - unregister the trampoline.
 *
 * Returns with no task in the trampoline or its C halves, or with the
 * module holding a reference until the last watched fault under it has
 * returned (see the top of the file); at module exit it waits instead.
 *
 * Context: process context, may sleep; the hooks lock held.
 */
void memmon_fault_tramp_off(void)
{
	unsigned long ip = (unsigned long)handle_mm_fault;
	int err;

	mutex_lock(&memmon_tramp_lock);
	if (!memmon_tramp_on)
		goto out_unlock;
	err = memmon_direct_unregister(&memmon_tramp_ops,
				       (unsigned long)memmon_fault_tramp);
	if (err) {
		/*
		 * The fentry site may still call us (ftrace is dead after
		 * one of its own warnings, say): the module must never go.
		 * Nothing to undo, so no unwinding: it stays "on".
		 */
		pr_err("cannot unhook handle_mm_fault (%d): memmon stays loaded\n",
		       err);
		if (!memmon_tramp_pinned && try_module_get(THIS_MODULE))
			memmon_tramp_pinned = true;
		goto out_unlock;
	}
	ftrace_set_filter_ip(&memmon_tramp_ops, ip, 1, 0);
	memmon_tramp_on = false;
	/* Nobody left between the fentry call and the count. */
	synchronize_rcu_tasks();
	/*
	 * Frames left, or a reference held by an earlier detach whose
	 * frames may be gone by now: the drain work decides, after the
	 * second grace period. try_module_get() fails once rmmod has begun
	 * (the linger's detach racing with it, or module exit itself): then
	 * nothing can refuse, and this waits.
	 */
	if (!memmon_tramp_holds_ref && memmon_tramp_inflight() &&
	    try_module_get(THIS_MODULE))
		memmon_tramp_holds_ref = true;
	if (memmon_tramp_holds_ref) {
		queue_delayed_work(system_unbound_wq, &memmon_tramp_drain,
				   msecs_to_jiffies(MEMMON_TRAMP_DRAIN_MS));
		goto out_unlock;
	}
	memmon_tramp_wait();
out_unlock:
	mutex_unlock(&memmon_tramp_lock);
}

/**
 * memmon_fault_tramp_exit() - module exit: no drain work left running, no
 * task left in the trampoline.
 *
 * The held reference keeps module exit away while frames are left;
 * only a forced unload (rmmod -f) gets here with some, and then this
 * waits for them like the detach at exit does.
 *
 * Context: module exit, after the hooks are detached.
 */
void memmon_fault_tramp_exit(void)
{
	cancel_delayed_work_sync(&memmon_tramp_drain);
	mutex_lock(&memmon_tramp_lock);
	WARN_ON_ONCE(memmon_tramp_on);
	if (memmon_tramp_holds_ref)
		memmon_tramp_wait();
	memmon_tramp_holds_ref = false;
	mutex_unlock(&memmon_tramp_lock);
	ftrace_free_filter(&memmon_tramp_ops);
}

#else /* !MEMMON_TRAMP */

int memmon_fault_tramp_on(void)
{
	return -EOPNOTSUPP;
}

void memmon_fault_tramp_off(void)
{
}

void memmon_fault_tramp_exit(void)
{
}

#endif /* MEMMON_TRAMP */
