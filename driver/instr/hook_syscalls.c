// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the memory syscalls (MEMMON_REC_SYSCALL, MEMMON_REC_PATH).
 *
 * One kretprobe per syscall wrapper (__x64_sys_*, __ia32_sys_*, plus mmap2
 * and old_mmap), registered disabled and fired for watched tasks by
 * hooks.c's ftrace filter (or behind kprobe gates: "Gates" in hooks.c).
 * The entry handler filters, copies the raw arguments from the syscall's
 * pt_regs and the start time into the instance, and returns 1 for an
 * unwatched task (no return hook); the return handler emits one record.
 *
 * Context: the calling task, in kprobe handlers (preemption disabled).
 * Unload never waits for a syscall: a task returning after detach goes
 * through the kernel's rethook trampoline, never module text. A call made
 * while the instance pool is empty is not recorded (nmissed, shown by
 * memmon_sys_missed()).
 *
 * Time: hdr.time_ns is when the call returned, duration_ns after its start;
 * faults taken inside a call precede its record.
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "hooks.h"
#include "reserve.h"
#include "ustack.h"

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/kdev_t.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <asm/syscall.h>

static int syscall_inflight = 128;
/*
 * Each watched task blocked in a syscall holds one instance of that
 * syscall's pool, for as long as it stays blocked.
 */
module_param(syscall_inflight, int, 0444);
MODULE_PARM_DESC(syscall_inflight,
		 "Calls of one hooked syscall that can be traced at once (kretprobe maxactive, 16..65536)");

/* How the wrapper's pt_regs hold the arguments. */
enum memmon_sys_abi {
	MEMMON_ABI_X64,		/* di, si, dx, r10, r8, r9 */
	MEMMON_ABI_IA32,	/* bx, cx, dx, si, di, bp (32 bits each) */
	MEMMON_ABI_IA32_STRUCT,	/* bx points at six u32 (old_mmap) */
	MEMMON_ABI_NONE,	/* SYSCALL_DEFINE0: no pt_regs at all */
};

struct memmon_sys_hook {
	const char *symbol;
	u8 sys;			/* enum memmon_sys */
	u8 abi;			/* enum memmon_sys_abi */
	u8 nargs;		/* args[] past these are zero, not stale registers */
};

static const struct memmon_sys_hook memmon_sys_hooks[] = {
	{ "__x64_sys_mmap",		MEMMON_SYS_MMAP,	MEMMON_ABI_X64, 6 },
	{ "__x64_sys_munmap",		MEMMON_SYS_MUNMAP,	MEMMON_ABI_X64, 2 },
	{ "__x64_sys_mremap",		MEMMON_SYS_MREMAP,	MEMMON_ABI_X64, 5 },
	{ "__x64_sys_brk",		MEMMON_SYS_BRK,		MEMMON_ABI_X64, 1 },
	{ "__x64_sys_mlock",		MEMMON_SYS_MLOCK,	MEMMON_ABI_X64, 2 },
	{ "__x64_sys_mlock2",		MEMMON_SYS_MLOCK2,	MEMMON_ABI_X64, 3 },
	{ "__x64_sys_munlock",		MEMMON_SYS_MUNLOCK,	MEMMON_ABI_X64, 2 },
	{ "__x64_sys_mlockall",		MEMMON_SYS_MLOCKALL,	MEMMON_ABI_X64, 1 },
	{ "__x64_sys_munlockall",	MEMMON_SYS_MUNLOCKALL,	MEMMON_ABI_NONE, 0 },
	{ "__x64_sys_fsync",		MEMMON_SYS_FSYNC,	MEMMON_ABI_X64, 1 },
	{ "__x64_sys_madvise",		MEMMON_SYS_MADVISE,	MEMMON_ABI_X64, 3 },
	{ "__x64_sys_mprotect",		MEMMON_SYS_MPROTECT,	MEMMON_ABI_X64, 3 },
#ifdef CONFIG_IA32_EMULATION
	{ "__ia32_sys_mmap_pgoff",	MEMMON_SYS_MMAP2,	MEMMON_ABI_IA32, 6 },
	{ "__ia32_compat_sys_ia32_mmap", MEMMON_SYS_OLD_MMAP,	MEMMON_ABI_IA32_STRUCT, 6 },
	{ "__ia32_sys_munmap",		MEMMON_SYS_MUNMAP,	MEMMON_ABI_IA32, 2 },
	{ "__ia32_sys_mremap",		MEMMON_SYS_MREMAP,	MEMMON_ABI_IA32, 5 },
	{ "__ia32_sys_brk",		MEMMON_SYS_BRK,		MEMMON_ABI_IA32, 1 },
	{ "__ia32_sys_mlock",		MEMMON_SYS_MLOCK,	MEMMON_ABI_IA32, 2 },
	{ "__ia32_sys_mlock2",		MEMMON_SYS_MLOCK2,	MEMMON_ABI_IA32, 3 },
	{ "__ia32_sys_munlock",		MEMMON_SYS_MUNLOCK,	MEMMON_ABI_IA32, 2 },
	{ "__ia32_sys_mlockall",	MEMMON_SYS_MLOCKALL,	MEMMON_ABI_IA32, 1 },
	{ "__ia32_sys_fsync",		MEMMON_SYS_FSYNC,	MEMMON_ABI_IA32, 1 },
	{ "__ia32_sys_madvise",		MEMMON_SYS_MADVISE,	MEMMON_ABI_IA32, 3 },
	{ "__ia32_sys_mprotect",	MEMMON_SYS_MPROTECT,	MEMMON_ABI_IA32, 3 },
#endif
};

#define MEMMON_NR_SYS_HOOKS ARRAY_SIZE(memmon_sys_hooks)

/* What the entry handler leaves for the return handler (kretprobe data). */
struct memmon_sys_call {
	u64 start;		/* memmon_span_begin() */
	u64 args[6];
	u64 old_brk;		/* brk: the break before the call */
	bool args_valid;	/* old_mmap: the user struct was readable */
	bool start_tsc;		/* the unit of start */
};

/* The old_mmap argument block (arch/x86/kernel/sys_ia32.c has its own). */
struct memmon_ia32_mmap_args {
	u32 addr;
	u32 len;
	u32 prot;
	u32 flags;
	u32 fd;
	u32 offset;
};

struct memmon_sys_probe {
	struct kretprobe krp;
	struct memmon_gate gate;	/* fires krp for watched tasks, hooks.c */
	const struct memmon_sys_hook *hook;
};

/*
 * The probes exist only while attached: allocated by memmon_sys_attach(),
 * freed by memmon_sys_detach() once unregister_kretprobes() has returned
 * (after which kprobes never dereferences them again, see the top).
 * Both, and memmon_sys_missed(), run under memmon_hooks_lock.
 */
static struct memmon_sys_probe *memmon_sys_probes;
static unsigned long memmon_sys_missed_total;
static struct memmon_filter memmon_sys_filter;	/* reused across attaches */

/*
 * PATH records: once per (dev, ino) per session.
 *
 * A set of the files seen, each with the mask of sessions that have had
 * its PATH record. Lookups are RCU; inserts take memmon_paths_lock (raw:
 * kretprobe handlers run with preemption disabled); entries
 * are freed only by memmon_paths_clear() (detach), after an RCU grace
 * period. Order: a PATH record is stamped, emitted, then its session's bit
 * set; a SYSCALL record is stamped after its caller looked at the bit (the
 * clock read is ordered after that load: rdtsc_ordered()). So whichever
 * CPU the first use of a file happens on, the PATH record's time is below
 * that of every SYSCALL record that relies on it, and readers merging the
 * rings by time see the PATH first. Two first uses racing on two CPUs may
 * both emit it: a duplicate, never a miss. When the set is full or an
 * allocation fails, the PATH record is emitted every time.
 *
 * Synchronisation:
 *   memmon_paths (buckets)   RCU readers; writers under memmon_paths_lock
 *   entry->dev, ->ino        immutable after publication
 *   entry->sessions          atomic64 (fetch_or / andnot), no lock
 *   memmon_paths_count       memmon_paths_lock
 */

#define MEMMON_PATHS_BITS	8
#define MEMMON_PATHS_MAX	4096	/* files remembered while attached */

struct memmon_path_seen {
	struct hlist_node node;
	u64 dev;
	u64 ino;
	atomic64_t sessions;
	struct rcu_head rcu;
};

static DEFINE_HASHTABLE(memmon_paths, MEMMON_PATHS_BITS);
static DEFINE_RAW_SPINLOCK(memmon_paths_lock);
static struct memmon_reserve memmon_paths_reserve;
static unsigned int memmon_paths_count;

static u32 memmon_path_hash(u64 dev, u64 ino)
{
	return hash_64(ino ^ (dev << 32 | dev >> 32), MEMMON_PATHS_BITS);
}

static struct memmon_path_seen *memmon_path_lookup(u64 dev, u64 ino)
{
	struct memmon_path_seen *e;

	hlist_for_each_entry_rcu(e, &memmon_paths[memmon_path_hash(dev, ino)],
				 node) {
		if (e->dev == dev && e->ino == ino)
			return e;
	}
	return NULL;
}

/* Find or insert the entry of (dev, ino); NULL when the set cannot grow. */
static struct memmon_path_seen *memmon_path_get(u64 dev, u64 ino)
{
	struct memmon_path_seen *e, *old;

	e = memmon_path_lookup(dev, ino);
	if (e)
		return e;
	if (READ_ONCE(memmon_paths_count) >= MEMMON_PATHS_MAX)
		return NULL;
	/* A syscall return in process context: atomic because kprobe
	 * handlers run with preemption disabled (reserve.h).
	 */
	e = memmon_reserve_alloc(&memmon_paths_reserve,
				 GFP_ATOMIC | __GFP_NOWARN);
	if (!e)
		return NULL;
	e->dev = dev;
	e->ino = ino;
	atomic64_set(&e->sessions, 0);

	raw_spin_lock(&memmon_paths_lock);
	old = memmon_path_lookup(dev, ino);
	if (old || memmon_paths_count >= MEMMON_PATHS_MAX) {
		raw_spin_unlock(&memmon_paths_lock);
		memmon_reserve_free(&memmon_paths_reserve, e);
		return old;
	}
	hlist_add_head_rcu(&e->node, &memmon_paths[memmon_path_hash(dev, ino)]);
	WRITE_ONCE(memmon_paths_count, memmon_paths_count + 1);
	raw_spin_unlock(&memmon_paths_lock);
	return e;
}

/* Empty the set (detach: no handler inserts any more). */
static void memmon_paths_clear(void)
{
	struct memmon_path_seen *e;
	struct hlist_node *tmp;
	int bkt;

	raw_spin_lock(&memmon_paths_lock);
	hash_for_each_safe(memmon_paths, bkt, tmp, e, node) {
		hash_del_rcu(&e->node);
		kfree_rcu(e, rcu);
	}
	memmon_paths_count = 0;
	raw_spin_unlock(&memmon_paths_lock);
}

/**
 * memmon_paths_forget_session() - a session id is about to be reused.
 * @id: the session id.
 *
 * Clears @id from every file of the set, so that the next session with
 * this id gets its own PATH records.
 *
 * Context: process context; any time (the set may be empty).
 */
static void memmon_paths_forget_session(unsigned int id)
{
	struct memmon_path_seen *e;
	int bkt;

	if (WARN_ON_ONCE(id >= MEMMON_MAX_SESSIONS))
		return;
	rcu_read_lock();
	hash_for_each_rcu(memmon_paths, bkt, e, node)
		atomic64_andnot(BIT_ULL(id), &e->sessions);
	rcu_read_unlock();
}

/*
 * Emit the PATH record of @file to those of @sessions that have not had it.
 * Context: the syscall return handler (preemption disabled).
 */
static void memmon_path_once(u64 sessions, struct file *file, u64 dev,
			     u64 ino)
{
	struct memmon_rec_path rec = { .dev = dev, .ino = ino };
	struct memmon_path_seen *e;
	const char *path;
	char *buf;
	u64 need;

	rcu_read_lock();
	e = memmon_path_get(dev, ino);
	need = e ? sessions & ~(u64)atomic64_read(&e->sessions) : sessions;
	if (!need)
		goto out;

	buf = memmon_pathbuf_get();
	if (!buf) {
		path = "";
	} else {
		path = d_path(&file->f_path, buf, PATH_MAX);
		if (IS_ERR(path))
			path = "";
	}
	rec.path_len = strlen(path);
	memmon_emit(need, current, MEMMON_REC_PATH, &rec, sizeof(rec),
		    path, rec.path_len + 1, memmon_now());
	if (buf)
		memmon_pathbuf_put();
	/* After the emit: see "PATH records" above. */
	if (e)
		atomic64_or(need, &e->sessions);
out:
	rcu_read_unlock();
}

/*
 * The file a successful mmap at @addr mapped: the VMA's (what is really
 * mapped: /dev/zero MAP_SHARED becomes a shmem file, MAP_PRIVATE of it none
 * at all) when mmap_lock is free right now, else the file behind @fd
 * (racy against a concurrent close or dup2 of that fd). A reference is
 * returned; the caller fput()s it.
 *
 * Context: the syscall return handler: process context, preemption
 * disabled, no lock held, so only trylock.
 */
static struct file *memmon_mapped_file(unsigned long addr, int fd, bool fd_ok)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct file *file = NULL;

	if (mm && mmap_read_trylock(mm)) {
		vma = vma_lookup(mm, addr);
		if (vma && vma->vm_start == addr && vma->vm_file)
			file = get_file(vma->vm_file);
		mmap_read_unlock(mm);
		return file;
	}
	return fd_ok ? fget(fd) : NULL;
}

/* Fill aux[] of a successful file mmap and emit its PATH if needed. */
static void memmon_sys_mmap_file(u64 sessions, struct memmon_rec_syscall *rec,
				 const struct memmon_sys_call *call)
{
	unsigned long addr = rec->ret;
	struct inode *inode;
	struct file *file;

	if (call->args[3] & MAP_ANONYMOUS)
		return;
	file = memmon_mapped_file(addr, (int)call->args[4], call->args_valid);
	if (!file)
		return;
	inode = file_inode(file);
	rec->flags |= MEMMON_SYSF_FILE;
	rec->aux[0] = new_encode_dev(inode->i_sb->s_dev);
	rec->aux[1] = inode->i_ino;
	memmon_path_once(sessions, file, rec->aux[0], rec->aux[1]);
	fput(file);
}

/*
 * The handlers.
 */

static const struct memmon_sys_hook *memmon_sys_hook_of(struct kretprobe_instance *ri)
{
	return container_of(get_kretprobe(ri), struct memmon_sys_probe, krp)->hook;
}

/*
 * Entry of a hooked wrapper. Returns 0 to hook the return, 1 to let the
 * call go unrecorded (and the instance back into the pool at once).
 * Context: the kretprobe's pre-handler (called by the filter or by kprobes),
 * preemption disabled, task context.
 */
static int memmon_sys_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	const struct memmon_sys_hook *h = memmon_sys_hook_of(ri);
	struct memmon_sys_call *call = (void *)ri->data;
	const struct pt_regs *u = (const struct pt_regs *)regs->di;
	struct memmon_ia32_mmap_args a;

	if (!memmon_sessions_from_gate(current, MEMMON_EV_SYSCALL, h->sys))
		return 1;

	call->args_valid = true;
	switch (h->abi) {
	case MEMMON_ABI_X64:
		call->args[0] = u->di;
		call->args[1] = u->si;
		call->args[2] = u->dx;
		call->args[3] = u->r10;
		call->args[4] = u->r8;
		call->args[5] = u->r9;
		break;
	case MEMMON_ABI_IA32:
		call->args[0] = (u32)u->bx;
		call->args[1] = (u32)u->cx;
		call->args[2] = (u32)u->dx;
		call->args[3] = (u32)u->si;
		call->args[4] = (u32)u->di;
		call->args[5] = (u32)u->bp;
		break;
	case MEMMON_ABI_IA32_STRUCT:
		/* User memory: never fault here (pagefault_disable()d copy). */
		if (copy_from_user_nofault(&a, (const void __user *)(unsigned long)(u32)u->bx,
					   sizeof(a))) {
			memset(call->args, 0, sizeof(call->args));
			call->args_valid = false;
			break;
		}
		call->args[0] = a.addr;
		call->args[1] = a.len;
		call->args[2] = a.prot;
		call->args[3] = a.flags;
		call->args[4] = a.fd;
		call->args[5] = a.offset;
		break;
	default:
		break;
	}
	memset(&call->args[h->nargs], 0,
	       sizeof(call->args) - h->nargs * sizeof(call->args[0]));
	/* Read without mmap_lock: a brk racing in another thread may make
	 * this stale, never invalid.
	 */
	call->old_brk = h->sys == MEMMON_SYS_BRK && current->mm ?
			READ_ONCE(current->mm->brk) : 0;
	call->start = memmon_span_begin(&call->start_tsc);
	return 0;
}

/*
 * Return of a hooked wrapper whose entry was recorded.
 * Context: the rethook trampoline handler, preemption disabled, task
 * context of the same task as the entry.
 */
static int memmon_sys_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	const struct memmon_sys_hook *h = memmon_sys_hook_of(ri);
	const struct memmon_sys_call *call = (const void *)ri->data;
	/* memset() below, once wanted (see memmon_fault_return()). */
	struct memmon_rec_syscall rec __uninitialized;
	struct memmon_ustack st __uninitialized;
	u64 sessions, now;

	/* Re-evaluated: a session may have stopped watching meanwhile. */
	sessions = memmon_sessions_for_current(MEMMON_EV_SYSCALL, h->sys);
	if (!sessions)
		return 0;

	memset(&rec, 0, sizeof(rec));
	rec.sys = h->sys;
	rec.flags = in_ia32_syscall() ? MEMMON_SYSF_COMPAT : 0;
	memcpy(rec.args, call->args, sizeof(rec.args));
	rec.ret = (long)regs_return_value(regs);

	switch (h->sys) {
	case MEMMON_SYS_BRK:
		rec.aux[0] = call->old_brk;
		rec.aux[1] = rec.ret;
		break;
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
	case MEMMON_SYS_OLD_MMAP:
		if (!IS_ERR_VALUE((unsigned long)rec.ret))
			memmon_sys_mmap_file(sessions, &rec, call);
		break;
	}
	/* After any PATH record: see "PATH records" above. */
	now = memmon_now();
	rec.duration_ns = memmon_span_ns(call->start, call->start_tsc, now);
	/* The user stack at the call, as deep as any session asked. */
	memmon_ustack_walk(&st, READ_ONCE(memmon_masks.stack_depth));
	memmon_emit_syscall(sessions, &rec, &st, now);
	return 0;
}

/*
 * Attach / detach.
 */

/**
 * memmon_sys_missed() - syscalls not recorded for want of an instance.
 *
 * Context: process context, memmon_hooks_lock held (hooks.c); kprobes'
 * counters are read racily (statistics only).
 * Return: the count since the module was loaded.
 */
static unsigned long memmon_sys_missed(void)
{
	struct memmon_sys_probe *p = memmon_sys_probes;
	unsigned long n = memmon_sys_missed_total;
	unsigned int i;

	if (!p)
		return n;
	for (i = 0; i < MEMMON_NR_SYS_HOOKS; i++)
		n += READ_ONCE(p[i].krp.nmissed) + READ_ONCE(p[i].krp.kp.nmissed);
	return n;
}

static void memmon_sys_unregister(struct memmon_sys_probe *p, unsigned int n)
{
	struct kretprobe *rps[MEMMON_NR_SYS_HOOKS];
	struct memmon_gate *gates[MEMMON_NR_SYS_HOOKS];
	unsigned int i;

	for (i = 0; i < n; i++) {
		rps[i] = &p[i].krp;
		gates[i] = &p[i].gate;
	}
	/* Gates first: they fire the kretprobes. */
	memmon_gates_disarm(&memmon_sys_filter, gates, n);
	/* One RCU grace period for all; returns with no handler running. */
	unregister_kretprobes(rps, n);
}

/**
 * memmon_sys_hook() - how the syscalls are hooked now.
 *
 * Context: process context, memmon_hooks_lock held (hooks.c).
 * Return: memmon_gate_mode() of their gates (all alike), "none" while
 * detached.
 */
static const char *memmon_sys_hook(void)
{
	return memmon_sys_probes ? memmon_gate_mode(&memmon_sys_probes[0].gate) :
				   "none";
}

/**
 * memmon_sys_attach() - hook every syscall of memmon_sys_hooks[].
 *
 * Context: process context, may sleep; memmon_hooks_lock held (hooks.c).
 * Return: 0, or a negative errno with nothing attached.
 */
static int memmon_sys_attach(void)
{
	struct memmon_gate *gates[MEMMON_NR_SYS_HOOKS];
	struct memmon_sys_probe *p;
	unsigned int i;
	int err;

	err = memmon_reserve_init(&memmon_paths_reserve,
				  sizeof(struct memmon_path_seen), 16, 64);
	if (err)
		return err;
	p = kcalloc(MEMMON_NR_SYS_HOOKS, sizeof(*p), GFP_KERNEL);
	if (!p) {
		memmon_reserve_destroy(&memmon_paths_reserve);
		return -ENOMEM;
	}
	for (i = 0; i < MEMMON_NR_SYS_HOOKS; i++) {
		p[i].hook = &memmon_sys_hooks[i];
		p[i].krp.kp.symbol_name = memmon_sys_hooks[i].symbol;
		p[i].krp.kp.flags = KPROBE_FLAG_DISABLED; /* the gates fire it */
		p[i].krp.entry_handler = memmon_sys_entry;
		p[i].krp.handler = memmon_sys_return;
		p[i].krp.data_size = sizeof(struct memmon_sys_call);
		p[i].krp.maxactive = clamp(syscall_inflight, 16, 65536);
		err = register_kretprobe(&p[i].krp);
		if (err) {
			pr_err("cannot hook %s: %d\n", memmon_sys_hooks[i].symbol,
			       err);
			goto err_unregister;
		}
	}
	for (i = 0; i < MEMMON_NR_SYS_HOOKS; i++) {
		memmon_gate_init(&p[i].gate, &p[i].krp, MEMMON_EV_SYSCALL,
				 p[i].hook->sys);
		gates[i] = &p[i].gate;
	}
	err = memmon_gates_arm(&memmon_sys_filter, gates, MEMMON_NR_SYS_HOOKS);
	if (err)
		goto err_unregister;
	memmon_sys_probes = p;
	return 0;

err_unregister:
	memmon_sys_unregister(p, i);
	kfree(p);
	memmon_paths_clear();
	memmon_reserve_destroy(&memmon_paths_reserve);
	return err;
}

/**
 * memmon_sys_detach() - unhook every syscall.
 *
 * Tasks still inside a hooked syscall return through the kernel's
 * trampoline without calling us (see the top of this file).
 *
 * Context: process context, may sleep; memmon_hooks_lock held (hooks.c).
 */
static void memmon_sys_detach(void)
{
	struct memmon_sys_probe *p = memmon_sys_probes;

	if (!p)
		return;
	memmon_sys_unregister(p, MEMMON_NR_SYS_HOOKS);
	memmon_sys_missed_total = memmon_sys_missed();
	memmon_sys_probes = NULL;
	kfree(p);
	memmon_paths_clear();
	memmon_reserve_destroy(&memmon_paths_reserve);
}

/* Context: process context, memmon_hooks_lock held (hooks.c). */
static void memmon_sys_show(struct seq_file *m)
{
	seq_printf(m, "syscall_hook %s\n", memmon_sys_hook());
	seq_printf(m, "syscalls_missed %lu\n", memmon_sys_missed());
}

const struct memmon_hook_group memmon_hooks_syscalls = {
	.name		= "syscalls",
	.attach		= memmon_sys_attach,
	.detach		= memmon_sys_detach,
	.forget_session	= memmon_paths_forget_session,
	.show		= memmon_sys_show,
};
