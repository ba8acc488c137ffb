// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: attaching and detaching the instrumentation as a whole, and the
 * helpers the hook groups share (tracepoint lookup, path buffers).
 *
 * The hooks exist only while a session is enabled, and for hooks_linger_ms
 * after the last one is disabled: the transport calls memmon_hooks_attach()
 * when the first session is enabled and memmon_hooks_detach() after the
 * last one is disabled (with the memmon_active key already off, so the
 * handlers do nothing meanwhile); the probes themselves go a little later,
 * unless a session is enabled again first. Attach is all-or-nothing: the
 * groups attach in a fixed order and a failure detaches, in reverse, the
 * groups already attached.
 *
 * Why linger: arming and disarming the kprobes patches kernel text twice
 * per probe, each a grace period or more; a tool that opens, enables and
 * closes sessions in a loop would pay that every time, and the fewer code
 * modifications, the better (docs/design.md, "Module parameters").
 */
#include "main.h"
#include "compat.h"
#include "instr.h"
#include "hooks.h"

#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

static unsigned int hooks_linger_ms = 2000;
/* Long enough to cover a tool's disable-then-enable, short enough that an
 * idle system is back to zero cost at once for a human.
 */
module_param(hooks_linger_ms, uint, 0644);
MODULE_PARM_DESC(hooks_linger_ms,
		 "Keep the hooks this long (ms) after the last session is disabled (0: detach at once)");

/*
 * memmon_hooks_lock protects memmon_hooks_attached and memmon_hooks_wanted
 * and serialises attaching and detaching (the groups' own state) against
 * each other, the linger work and the statistics readers (procfs.c). It
 * nests inside session.c's memmon_sessions_lock.
 *
 *   memmon_hooks_attached  the groups are attached
 *   memmon_hooks_wanted    a session is enabled (attach..detach)
 */
static DEFINE_MUTEX(memmon_hooks_lock);
static bool memmon_hooks_attached;
static bool memmon_hooks_wanted;

static void memmon_hooks_linger_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(memmon_hooks_linger, memmon_hooks_linger_fn);

/*
 * Gates. A kretprobe takes an instance from its pool - a lock-free list
 * whose head is one cache line shared by every CPU, two atomics on it per
 * call (rethook_try_get(), rethook_recycle()) - before its entry handler
 * can say "not watched". Every fault and hooked syscall of every task of
 * the system would pay that while a session is enabled. A gate keeps the
 * unwatched tasks out, one of two ways:
 *
 * The filter (default). The groups register their kretprobes *disabled*:
 * no code is patched for them and kprobes never dispatches to them. One
 * ftrace_ops per group (struct memmon_filter) sits on the kretprobes'
 * fentry sites instead. Its callback looks the task up; for an unwatched
 * one it returns, having cost the ftrace trampoline and one hash lookup.
 * For a watched one it leaves its answer (memmon_gate_answer) and fires
 * the kretprobe itself: it calls the kretprobe's pre-handler with the
 * trampoline's registers, which is what
 * kprobe_ftrace_handler() does for an armed kretprobe on an fentry site
 * (memmon_filter_regs() says which registers that takes).
 * The pre-handler takes an instance, calls our entry handler and replaces
 * the return address at regs->sp with the kernel's rethook trampoline;
 * from there on everything is the kretprobe's, its unload safety included
 * (hook_syscalls.c). Saved against a kprobe gate: kprobe_ftrace_handler()
 * (the kprobe hash, current_kprobe, the kprobe status) and the
 * aggregate's handler list, on every call of every task. The ops does not
 * set FTRACE_OPS_FL_IPMODIFY and never changes regs->ip, so it coexists
 * with livepatch and with anyone's probes on the same functions; their
 * kprobes, aggregated with our disabled one, never run it.
 *
 * The kprobe gate (hook_kprobes=1, or when the filter cannot be
 * registered). The kretprobes are enabled, and a plain kprobe is
 * registered on each address after its kretprobe: kprobes then chains both
 * under one aggregate probe, newest first, and the gate's handler runs
 * first. For a task no session wants, it ends the chain the way an
 * ftrace-based kprobe handler may: it sets regs->ip to where the function
 * continues after its fentry call (what kprobe_ftrace_handler() would
 * restore) and returns 1, so the kretprobe's handler, and its pool, are
 * never reached. Someone else's kprobe on the same function (perf,
 * bpftrace, tracefs) must not lose the calls we skip: the gate skips only
 * while the aggregate's list is exactly [gate, kretprobe]. A probe
 * registered or removed concurrently with that check may miss one call or
 * let one through to our pool; kprobes publishes list entries with RCU and
 * we run inside its RCU-sched section (preemption disabled). Only on
 * ftrace-based kprobes (the function's fentry site): an int3 kprobe must
 * single-step the instruction it replaced, which the early return would
 * skip. Elsewhere the gate is not armed and the kretprobe filters in its
 * entry handler, as it always did.
 */
static bool hook_kprobes;
module_param(hook_kprobes, bool, 0644);
MODULE_PARM_DESC(hook_kprobes,
		 "Arm the kretprobes as kprobes behind kprobe gates instead of firing them from memmon's ftrace filters (read at attach)");

bool memmon_hooks_use_kprobes(void)
{
	return READ_ONCE(hook_kprobes);
}

/*
 * Calls the gates kept out (per CPU: no shared line on the fast path), and
 * how many gates are armed, a filtered function counting as one (hooks
 * lock). For /proc/memmon/stats and the tests that check the gates really
 * work.
 */
DEFINE_PER_CPU(unsigned long, memmon_gate_skipped);
DEFINE_PER_CPU(struct memmon_gate_answer, memmon_gate_answer);
static unsigned int memmon_gates_armed;

/*
 * The registers the filter hands to a kretprobe's pre-handler. What reads
 * them: the pre-handler itself only regs->sp (rethook: where the return
 * address is, to replace it), our entry handlers the argument registers
 * (di, si, dx, cx). On x86-64 with DYNAMIC_FTRACE_WITH_ARGS, ftrace_caller
 * - the trampoline of an ops without FTRACE_OPS_FL_SAVE_REGS - already
 * stores exactly those in the pt_regs inside struct ftrace_regs (ax, cx,
 * dx, si, di, r8, r9, bp, ip and sp, with cs zero so that
 * ftrace_get_regs() says "partial"; checked on Debian's 6.1 in its
 * disassembly), and it is cheaper than ftrace_regs_caller, on every call
 * of every task. Elsewhere the whole registers are asked for.
 */
#if defined(CONFIG_X86_64) && defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS)
#define MEMMON_FILTER_OPS_FLAGS 0
static __always_inline struct pt_regs *memmon_filter_regs(struct ftrace_regs *fregs)
{
	return memmon_ftrace_regs_pt(fregs);
}
#else
#define MEMMON_FILTER_OPS_FLAGS FTRACE_OPS_FL_SAVE_REGS
static __always_inline struct pt_regs *memmon_filter_regs(struct ftrace_regs *fregs)
{
	return ftrace_get_regs(fregs);
}
#endif

/* A filter's slot for @ip: its gate's, or the empty one where it goes. */
static __always_inline unsigned int memmon_filter_slot(const struct memmon_filter *f,
						       unsigned long ip)
{
	unsigned int i = hash_long(ip, ilog2(MEMMON_FILTER_SLOTS));

	while (f->slot[i].ip && f->slot[i].ip != ip)
		i = (i + 1) & (MEMMON_FILTER_SLOTS - 1);
	return i;
}

/*
 * Everything but the common case: no session enabled (the hooks linger),
 * a cached answer to look up, or a watched task. The arguments are the
 * callback's, in the same registers (__noclone: a clone without the unused
 * parent_ip would have the callback move them first).
 */
static noinline __noclone void notrace
memmon_filter_slow(unsigned long ip, unsigned long parent_ip,
		   struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct memmon_filter *f = container_of(op, struct memmon_filter, ops);
	struct pt_regs *regs = memmon_filter_regs(fregs);
	struct memmon_gate_answer *pass;
	struct memmon_gate *g;
	u64 sessions;

	preempt_disable_notrace();
	if (!static_branch_unlikely(&memmon_active))
		goto skip;
	sessions = memmon_sessions_watching_cached(current);
	if (likely(!sessions))
		goto skip;
	g = f->slot[memmon_filter_slot(f, ip)].gate;
	if (unlikely(!g || !regs))
		goto out;
	sessions = memmon_sessions_wanting(sessions, g->ev, g->sys);
	if (!sessions)
		goto skip;
	pass = this_cpu_ptr(&memmon_gate_answer);
	pass->task = current;
	pass->sessions = sessions;
	pass->ev = g->ev;
	pass->sys = g->sys;
	g->krp->kp.pre_handler(&g->krp->kp, regs);
	goto out;
skip:
	this_cpu_inc(memmon_gate_skipped);
out:
	preempt_enable_notrace();
}

/*
 * The filter's ftrace callback (see "Gates" above).
 *
 * Context: ftrace callback, task context on a hooked function's fentry
 * site. The ops has no FTRACE_OPS_FL_RECURSION, and we take no recursion
 * lock either: this callback runs only on the fentry of the functions
 * the ops filters (syscall wrappers, handle_mm_fault()), and nothing it
 * calls - the watch lookup, the kretprobe's pre-handler, our entry
 * handlers (which read user memory only with page faults disabled) - can
 * enter one of those, in task, interrupt or NMI context. (What it calls
 * is not notrace throughout - memmon_sessions_watching_lookup() is traceable -
 * but another ops tracing it runs in its own callback, not this one.)
 * Preemption is disabled for the per-CPU pass and for the pre-handler
 * (rethook_try_get() wants it). The slots are written before the ops is registered and
 * cleared after it is unregistered, which waits for every callback
 * (memmon_gates_disarm()).
 *
 * The common case, a task of this CPU's unwatched process (emit.h,
 * memmon_watch_unwatched), is one compare and a count, each a single
 * per-CPU instruction, so it needs neither a stack frame nor preemption
 * disabled: a few instructions with the return (the trampoline and this
 * are all an unwatched task pays). It does not even test memmon_active:
 * the unwatched process is watched by no session, enabled or not. The rest is
 * memmon_filter_slow(), a tail call with the arguments in the same
 * registers.
 */
static void notrace memmon_filter_func(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *op,
				       struct ftrace_regs *fregs)
{
	if (likely(memmon_watch_is_unwatched(current))) {
		this_cpu_inc(memmon_gate_skipped);
		return;
	}
	memmon_filter_slow(ip, parent_ip, op, fregs);
}

/*
 * Register @f on the fentry sites of @g[0..n-1]'s kretprobes (registered,
 * disabled). 0, or a negative errno with nothing registered.
 */
static int memmon_filter_on(struct memmon_filter *f, struct memmon_gate **g,
			    unsigned int n)
{
	unsigned long ips[MEMMON_FILTER_SLOTS / 2];
	unsigned int i;
	int err;

	if (n > ARRAY_SIZE(ips))
		return -E2BIG;
	memset(f->slot, 0, sizeof(f->slot));
	for (i = 0; i < n; i++) {
		struct kprobe *kp = &g[i]->krp->kp;
		unsigned int s;

		/* Only where the kprobe would have been an ftrace one. */
		if (!kprobe_ftrace(kp) || !kp->pre_handler)
			return -EOPNOTSUPP;
		ips[i] = (unsigned long)kp->addr;
		s = memmon_filter_slot(f, ips[i]);
		if (f->slot[s].ip)
			return -EEXIST;	/* one function hooked twice */
		f->slot[s].ip = ips[i];
		f->slot[s].gate = g[i];
	}
	f->ops.func = memmon_filter_func;
	f->ops.flags = MEMMON_FILTER_OPS_FLAGS;
	err = ftrace_set_filter_ips(&f->ops, ips, n, 0, 1);
	if (err)
		return err;
	err = register_ftrace_function(&f->ops);
	if (err) {
		ftrace_set_filter_ips(&f->ops, ips, n, 1, 0);
		return err;
	}
	f->on = true;
	for (i = 0; i < n; i++)
		g[i]->filtered = true;
	memmon_gates_armed += n;
	return 0;
}

/*
 * A plain kprobe in front of @g->krp, which is enabled (hook_kprobes).
 * Failure is not an error: the kretprobe's entry handler still filters.
 */
static int memmon_gate_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct memmon_gate *g = container_of(p, struct memmon_gate, kp);
	struct list_head *krp = &g->krp->kp.list;
	u64 sessions = memmon_sessions_for(current, g->ev, g->sys);

	if (sessions) {
		/* watched: on to the kretprobe, with the cached answer */
		struct memmon_gate_answer *pass = this_cpu_ptr(&memmon_gate_answer);

		pass->task = current;
		pass->sessions = sessions;
		pass->ev = g->ev;
		pass->sys = g->sys;
		return 0;
	}
	if (READ_ONCE(p->list.next) != krp ||
	    READ_ONCE(krp->next) != READ_ONCE(p->list.prev))
		return 0;	/* not alone with it: let every probe run */
	this_cpu_inc(memmon_gate_skipped);
	instruction_pointer_set(regs, (unsigned long)p->addr + MCOUNT_INSN_SIZE);
	return 1;
}

static void memmon_kprobe_gate_arm(struct memmon_gate *g)
{
	int err;

	g->kp.addr = g->krp->kp.addr;
	g->kp.pre_handler = memmon_gate_pre;
	err = register_kprobe(&g->kp);
	if (err) {
		pr_info("no gate in front of %pS (%d): unwatched tasks take the kretprobe's pool\n",
			g->krp->kp.addr, err);
		return;
	}
	if (!kprobe_ftrace(&g->kp)) {
		unregister_kprobe(&g->kp);
		return;
	}
	g->on = true;
	memmon_gates_armed++;
}

/**
 * memmon_gate_init() - describe the gate of a kretprobe.
 * @g:   the gate, zeroed
 * @krp: a kretprobe, to be registered with KPROBE_FLAG_DISABLED
 * @ev:  what @krp records
 * @sys: its enum memmon_sys, for MEMMON_EV_SYSCALL
 */
void memmon_gate_init(struct memmon_gate *g, struct kretprobe *krp,
		      enum memmon_event ev, unsigned int sys)
{
	g->krp = krp;
	g->ev = ev;
	g->sys = sys;
}

/**
 * memmon_gates_arm() - make a group's kretprobes fire, behind gates.
 * @f: the group's filter (its ops is never zeroed)
 * @g: the gates, memmon_gate_init()ed, their kretprobes registered disabled
 * @n: how many (at most MEMMON_FILTER_SLOTS / 2)
 *
 * The filter @f, unless hook_kprobes is set or it cannot be registered;
 * then each kretprobe is enabled with a kprobe gate in front of it.
 *
 * Context: process context, may sleep; the hooks lock held.
 * Return: 0, or a negative errno when a kretprobe cannot be enabled; then
 * memmon_gates_disarm() must still be called before the kretprobes are
 * unregistered.
 */
int memmon_gates_arm(struct memmon_filter *f, struct memmon_gate **g,
		     unsigned int n)
{
	unsigned int i;
	int err;

	lockdep_assert_held(&memmon_hooks_lock);
	if (!READ_ONCE(hook_kprobes)) {
		err = memmon_filter_on(f, g, n);
		if (!err)
			return 0;
		pr_info("no ftrace filter on %pS and %u more (%d): kprobes instead\n",
			g[0]->krp->kp.addr, n - 1, err);
	}
	for (i = 0; i < n; i++) {
		err = enable_kretprobe(g[i]->krp);
		if (err) {
			pr_err("cannot enable the kretprobe on %pS: %d\n",
			       g[i]->krp->kp.addr, err);
			return err;
		}
		g[i]->armed = true;
		memmon_kprobe_gate_arm(g[i]);
	}
	return 0;
}

/**
 * memmon_gates_disarm() - remove a group's gates, before its kretprobes.
 * @f: the group's filter
 * @g: the gates (armed or not)
 * @n: how many
 *
 * Returns with no gate or filter callback running, so the caller may then
 * unregister and free the kretprobes and the gates.
 *
 * Context: process context, may sleep; the hooks lock held.
 */
void memmon_gates_disarm(struct memmon_filter *f, struct memmon_gate **g,
			 unsigned int n)
{
	unsigned long ips[MEMMON_FILTER_SLOTS / 2];
	struct kprobe *kps[32];		/* a grace period per 32 gates */
	unsigned int i, m = 0;

	lockdep_assert_held(&memmon_hooks_lock);
	if (f->on) {
		/* Waits for the callbacks (and their trampoline) to finish. */
		unregister_ftrace_function(&f->ops);
		for (i = 0; i < n && i < ARRAY_SIZE(ips); i++)
			ips[i] = (unsigned long)g[i]->krp->kp.addr;
		ftrace_set_filter_ips(&f->ops, ips, i, 1, 0);
		memset(f->slot, 0, sizeof(f->slot));
		f->on = false;
		memmon_gates_armed -= n;
	}
	for (i = 0; i < n; i++) {
		g[i]->filtered = false;
		g[i]->armed = false;
		if (g[i]->on) {
			kps[m++] = &g[i]->kp;
			memmon_gates_armed--;
		}
		g[i]->on = false;
		if (m == ARRAY_SIZE(kps) || (i == n - 1 && m)) {
			unregister_kprobes(kps, m);
			m = 0;
		}
	}
}

/**
 * memmon_gate_mode() - how a gate's kretprobe fires now.
 * @g: the gate
 *
 * Context: the hooks lock held.
 * Return: "ftrace" (a filter), "kprobe" (enabled) or "none".
 */
const char *memmon_gate_mode(const struct memmon_gate *g)
{
	if (g->filtered)
		return "ftrace";
	return g->armed ? "kprobe" : "none";
}

/*
 * Tracepoints by name: the __tracepoint_* symbols are not exported.
 */

struct memmon_tp_lookup {
	const char *name;
	struct tracepoint *tp;
};

static void memmon_tp_match(struct tracepoint *tp, void *priv)
{
	struct memmon_tp_lookup *l = priv;

	if (!l->tp && !strcmp(tp->name, l->name))
		l->tp = tp;
}

/**
 * memmon_find_tracepoint() - a built-in tracepoint by name.
 * @name: e.g. "sched_process_fork".
 *
 * Context: process context.
 * Return: the tracepoint, or NULL if the kernel has none of that name.
 */
struct tracepoint *memmon_find_tracepoint(const char *name)
{
	struct memmon_tp_lookup l = { .name = name };

	for_each_kernel_tracepoint(memmon_tp_match, &l);
	return l.tp;
}

/*
 * Path buffers: one PATH_MAX buffer per CPU for d_path() in handlers that
 * run with preemption disabled (syscall return, exec tracepoint). None of
 * them runs in interrupt context, so they cannot nest on a CPU; the busy
 * flag turns a nesting we did not foresee into "no path" rather than into
 * two writers in one buffer.
 */

struct memmon_pathbuf {
	bool busy;
	char buf[PATH_MAX];
};

static struct memmon_pathbuf __percpu *memmon_pathbufs;

/**
 * memmon_pathbuf_alloc() - allocate the per-CPU path buffers.
 *
 * Context: process context, may sleep; under memmon_hooks_lock.
 * Return: 0 or -ENOMEM.
 */
int memmon_pathbuf_alloc(void)
{
	memmon_pathbufs = alloc_percpu(struct memmon_pathbuf);
	return memmon_pathbufs ? 0 : -ENOMEM;
}

/**
 * memmon_pathbuf_free() - free them once no handler can run.
 *
 * Context: process context; under memmon_hooks_lock, after detach.
 */
void memmon_pathbuf_free(void)
{
	free_percpu(memmon_pathbufs);
	memmon_pathbufs = NULL;
}

/**
 * memmon_pathbuf_get() - this CPU's path buffer (PATH_MAX bytes).
 *
 * Context: preemption disabled until memmon_pathbuf_put(); not from
 * interrupts.
 * Return: the buffer, or NULL if it is in use on this CPU.
 */
char *memmon_pathbuf_get(void)
{
	struct memmon_pathbuf *pb = this_cpu_ptr(memmon_pathbufs);

	if (pb->busy)
		return NULL;
	pb->busy = true;
	return pb->buf;
}

/**
 * memmon_pathbuf_put() - release what memmon_pathbuf_get() returned.
 *
 * Context: the same CPU, preemption still disabled.
 */
void memmon_pathbuf_put(void)
{
	this_cpu_ptr(memmon_pathbufs)->busy = false;
}

/*
 * Attach / detach.
 */

/*
 * Attach order. Lifecycle goes before syscalls and faults so that fork is
 * followed as soon as anything is recorded; rss last (it only reads).
 */
static const struct memmon_hook_group *const memmon_hook_groups[] = {
	&memmon_hooks_lifecycle,
	&memmon_hooks_syscalls,
	&memmon_hooks_faults,
	&memmon_hooks_rss,
};

/* Detach every group. memmon_hooks_lock held. */
static void __memmon_hooks_detach(void)
{
	unsigned int i = ARRAY_SIZE(memmon_hook_groups);

	lockdep_assert_held(&memmon_hooks_lock);
	if (!memmon_hooks_attached)
		return;
	while (i--)
		memmon_hook_groups[i]->detach();
	memmon_pathbuf_free();
	memmon_hooks_attached = false;
}

/**
 * memmon_hooks_attach() - attach every hook (first session enabled).
 *
 * Still attached (lingering): only cancels the pending detach.
 *
 * Context: process context, may sleep; serialised by the caller.
 * Return: 0 or a negative errno, in which case nothing stays attached.
 */
int memmon_hooks_attach(void)
{
	unsigned int i;
	int err = 0;

	mutex_lock(&memmon_hooks_lock);
	/*
	 * Not _sync: the work takes memmon_hooks_lock. If it is running, it
	 * waits for us and then finds memmon_hooks_wanted set.
	 */
	cancel_delayed_work(&memmon_hooks_linger);
	if (WARN_ON_ONCE(memmon_hooks_wanted)) {
		err = -EBUSY;
		goto out_unlock;
	}
	if (memmon_hooks_attached)
		goto out_wanted;
	err = memmon_pathbuf_alloc();
	if (err)
		goto out_unlock;
	memmon_clock_setup();	/* before a hook can start a duration */
	for (i = 0; i < ARRAY_SIZE(memmon_hook_groups); i++) {
		err = memmon_hook_groups[i]->attach();
		if (err) {
			pr_err("attaching the %s hooks failed: %d\n",
			       memmon_hook_groups[i]->name, err);
			goto err_detach;
		}
	}
	memmon_hooks_attached = true;
out_wanted:
	memmon_hooks_wanted = true;
out_unlock:
	mutex_unlock(&memmon_hooks_lock);
	return err;

err_detach:
	while (i--)
		memmon_hook_groups[i]->detach();
	memmon_pathbuf_free();
	mutex_unlock(&memmon_hooks_lock);
	return err;
}

static void memmon_hooks_linger_fn(struct work_struct *work)
{
	mutex_lock(&memmon_hooks_lock);
	if (!memmon_hooks_wanted)
		__memmon_hooks_detach();
	mutex_unlock(&memmon_hooks_lock);
}

/**
 * memmon_hooks_detach() - detach every hook (last session disabled).
 *
 * The probes go hooks_linger_ms later (at once if 0), unless
 * memmon_hooks_attach() comes first. Until then they run but find the
 * memmon_active key off. Once they are gone no handler of ours runs or
 * will run; tasks still inside a hooked function return through kernel
 * text only.
 *
 * Context: process context, may sleep; serialised by the caller.
 */
void memmon_hooks_detach(void)
{
	unsigned int ms = READ_ONCE(hooks_linger_ms);

	mutex_lock(&memmon_hooks_lock);
	memmon_hooks_wanted = false;
	if (ms)
		mod_delayed_work(system_wq, &memmon_hooks_linger,
				 msecs_to_jiffies(ms));
	else
		__memmon_hooks_detach();
	mutex_unlock(&memmon_hooks_lock);
}

/**
 * memmon_hooks_forget_session() - a session id is about to be reused
 * @id: the session id
 *
 * Context: process context (transport/session.c, as the id is released).
 */
void memmon_hooks_forget_session(unsigned int id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(memmon_hook_groups); i++)
		if (memmon_hook_groups[i]->forget_session)
			memmon_hook_groups[i]->forget_session(id);
}

/**
 * memmon_hooks_show() - the hooks' state, for /proc/memmon/stats.
 * @m: one "key value" line per counter or mode
 *
 * Context: process context, may sleep.
 */
void memmon_hooks_show(struct seq_file *m)
{
	unsigned long skipped = 0;
	unsigned int i;
	int cpu;

	mutex_lock(&memmon_hooks_lock);
	seq_printf(m, "hooks_attached %d\n", memmon_hooks_attached);
	seq_printf(m, "duration_clock %s\n", memmon_clock_span_name());
	seq_printf(m, "gates_armed %u\n", memmon_gates_armed);
	for (i = 0; i < ARRAY_SIZE(memmon_hook_groups); i++)
		if (memmon_hook_groups[i]->show)
			memmon_hook_groups[i]->show(m);
	mutex_unlock(&memmon_hooks_lock);
	for_each_possible_cpu(cpu)
		skipped += per_cpu(memmon_gate_skipped, cpu);
	seq_printf(m, "gate_skipped %lu\n", skipped);
}

/**
 * memmon_hooks_exit() - module exit of the instrumentation.
 *
 * Every session is gone by now, so only a lingering detach can be left:
 * it is done here, synchronously; then each group's own exit.
 *
 * Context: module exit.
 */
void memmon_hooks_exit(void)
{
	unsigned int i;

	cancel_delayed_work_sync(&memmon_hooks_linger);
	mutex_lock(&memmon_hooks_lock);
	WARN_ON_ONCE(memmon_hooks_wanted);
	__memmon_hooks_detach();
	mutex_unlock(&memmon_hooks_lock);
	for (i = 0; i < ARRAY_SIZE(memmon_hook_groups); i++)
		if (memmon_hook_groups[i]->exit)
			memmon_hook_groups[i]->exit();
}
