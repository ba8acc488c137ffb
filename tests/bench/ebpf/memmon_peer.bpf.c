// SPDX-License-Identifier: GPL-2.0
/*
 * memmon_peer.bpf.c - memmon's eBPF peer (make bench, config "ebpf"): the
 * memory syscalls and handle_mm_fault() of watched processes, one
 * memmon-format record per completed call or fault, into a BPF ring buffer.
 *
 * The same functions memmon hooks (driver/instr/hook_syscalls.c, hook_faults.c):
 * fentry/fexit on the __x64_sys_* wrappers and on handle_mm_fault(), or,
 * where the kernel has no BPF trampoline, kprobe/kretprobe on the same
 * functions (the consumer loads one set or the other). Filter: the tgid in
 * "watched", at entry; the exits look only at the task's own storage, which
 * an entry fills for watched tasks alone.
 *
 * No vmlinux.h: the few kernel types read are declared below with
 * preserve_access_index, so that libbpf relocates every field against the
 * running kernel's BTF (CO-RE) and the object builds from this file and
 * libbpf's headers alone, on a machine with no kernel image at all.
 */
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <linux/memmon.h>
#include "memmon_peer.h"

typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;

/* ---- kernel types, CO-RE relocated (checked on 6.1 and 6.12) ---------- */

struct pt_regs {
	unsigned long di, si, dx, cx, r10, r8, r9, ax, ip, cs;
} __attribute__((preserve_access_index));

struct super_block {
	unsigned long s_magic;
} __attribute__((preserve_access_index));

struct inode {
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

/* 6.3+ keep vm_flags in an anonymous union: CO-RE finds it there. */
struct vm_area_struct {
	unsigned long vm_flags;
	struct file *vm_file;
	const void *vm_ops;
} __attribute__((preserve_access_index));

struct mm_struct {
	unsigned long brk;
} __attribute__((preserve_access_index));

struct task_struct {
	struct mm_struct *mm;
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

/* Values are placeholders: bpf_core_enum_value() takes the kernel's. */
enum fault_flag {
	FAULT_FLAG_WRITE = 1,
	FAULT_FLAG_TRIED = 2,
	FAULT_FLAG_USER = 3,
	FAULT_FLAG_INSTRUCTION = 4,
};

enum vm_fault_reason {
	VM_FAULT_OOM = 1,
	VM_FAULT_SIGBUS = 2,
	VM_FAULT_MAJOR = 3,
	VM_FAULT_HWPOISON = 4,
	VM_FAULT_HWPOISON_LARGE = 5,
	VM_FAULT_SIGSEGV = 6,
	VM_FAULT_RETRY = 7,
	VM_FAULT_FALLBACK = 8,
};

/* include/linux/mm.h, the same on 6.1 and 6.12 (macros: not in BTF). */
#define VM_IO		0x00004000UL
#define VM_PFNMAP	0x00000400UL
#define VM_HUGETLB	0x00400000UL
#define VM_MIXEDMAP	0x10000000UL
#define TMPFS_MAGIC	0x01021994UL

/* ---- maps ------------------------------------------------------------- */

/* Processes (tgid) watched; the consumer adds its child, forks add theirs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u8);
} watched SEC(".maps");

/* Sized by the consumer (bpf_map__set_max_entries) before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PEER_CNT__COUNT);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

/*
 * A call in flight, per task: syscalls and faults apart, because a call
 * faults (mlock populating) inside itself. The kprobe set keeps what the
 * return probe cannot see; fexit has the arguments again.
 */
struct peer_task {
	u64 sys_start;		/* 0: no syscall of ours in flight */
	u64 sys_aux;		/* brk: the break before the call */
	u64 sys_args[6];	/* kprobe set only */
	u64 f_start;		/* 0: no fault of ours in flight */
	u64 f_addr;		/* kprobe set only */
	u64 f_regs;		/* kprobe set only */
	u32 f_flags;		/* kprobe set only */
	u32 f_class;		/* enum memmon_fault_class, from the VMA */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct peer_task);
} tasks SEC(".maps");

/* Wake the consumer once this much is unread (0: every record, libbpf's
 * default adaptive wakeup). Set by the consumer before load.
 */
const volatile __u64 wakeup_bytes = 0;

char LICENSE[] SEC("license") = "GPL";

/* ---- helpers ------------------------------------------------------------ */

static __always_inline void count(u32 slot)
{
	u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c)
		(*c)++;
}

/* The task's state if its process is watched (created on first use). */
static __always_inline struct peer_task *watched_task(void)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct peer_task *t;

	if (!bpf_map_lookup_elem(&watched, &tgid))
		return NULL;
	t = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		count(PEER_CNT_NOSTATE);
	return t;
}

/* The task's state, or NULL: no lookup in "watched", no creation. */
static __always_inline struct peer_task *this_task(void)
{
	return bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), NULL, 0);
}

static __always_inline void *reserve(u32 size)
{
	void *rec = bpf_ringbuf_reserve(&rb, size, 0);

	if (!rec)
		count(PEER_CNT_DROPPED);
	return rec;
}

static __always_inline void submit(void *rec)
{
	u64 flags = BPF_RB_NO_WAKEUP;

	if (!wakeup_bytes ||
	    bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = wakeup_bytes ? BPF_RB_FORCE_WAKEUP : 0;
	bpf_ringbuf_submit(rec, flags);
}

static __always_inline void fill_header(struct memmon_rec_header *h, u32 size,
					u32 type, u64 now)
{
	u64 id = bpf_get_current_pid_tgid();

	h->size = size;
	h->type = type;
	h->cpu = bpf_get_smp_processor_id();
	h->time_ns = now;
	h->tgid = id >> 32;
	h->tid = (u32)id;
}

/* ---- syscalls ------------------------------------------------------------ */

static __always_inline void sys_begin(struct peer_task *t, u32 sys)
{
	t->sys_aux = 0;
	if (sys == MEMMON_SYS_BRK)
		t->sys_aux = bpf_get_current_task_btf()->mm->brk;
	t->sys_start = bpf_ktime_get_ns();
}

/* @args: nargs of them, the rest of the record's args[] stays zero. */
static __always_inline void sys_end(struct peer_task *t, u32 sys,
				    const u64 *args, u32 nargs, s64 ret)
{
	struct memmon_rec_syscall *r;
	u64 now = bpf_ktime_get_ns();
	u32 i;

	r = reserve(sizeof(*r));
	if (r) {
		fill_header(&r->hdr, sizeof(*r), MEMMON_REC_SYSCALL, now);
		r->sys = sys;
		r->flags = 0;
		for (i = 0; i < 6; i++)
			r->args[i] = i < nargs ? args[i] : 0;
		r->ret = ret;
		r->duration_ns = now - t->sys_start;
		r->aux[0] = t->sys_aux;
		r->aux[1] = sys == MEMMON_SYS_BRK ? (u64)ret : 0;
		submit(r);
	}
	t->sys_start = 0;
}

static __always_inline void regs_args(const struct pt_regs *regs, u64 *a)
{
	a[0] = regs->di;
	a[1] = regs->si;
	a[2] = regs->dx;
	a[3] = regs->r10;
	a[4] = regs->r8;
	a[5] = regs->r9;
}

/*
 * Per syscall: fentry/fexit on its x86-64 wrapper, whose argument is the
 * user's pt_regs (BTF-typed: read directly), and the kprobe/kretprobe pair
 * of the fallback set, which reads that pointer out of the probe's regs.
 */
#define PEER_SYSCALL(name, SYS, nargs)						\
SEC("fentry/__x64_sys_" #name)							\
int BPF_PROG(fentry_##name, const struct pt_regs *regs)			\
{										\
	struct peer_task *t = watched_task();					\
										\
	if (t)									\
		sys_begin(t, SYS);						\
	return 0;								\
}										\
										\
SEC("fexit/__x64_sys_" #name)							\
int BPF_PROG(fexit_##name, const struct pt_regs *regs, long ret)		\
{										\
	struct peer_task *t = this_task();					\
	u64 a[6];								\
										\
	if (!t || !t->sys_start)						\
		return 0;							\
	if (nargs)								\
		regs_args(regs, a);						\
	sys_end(t, SYS, a, nargs, ret);						\
	return 0;								\
}										\
										\
SEC("kprobe/__x64_sys_" #name)							\
int kprobe_##name(struct pt_regs *ctx)						\
{										\
	struct peer_task *t = watched_task();					\
	const struct pt_regs *regs;						\
										\
	if (!t)									\
		return 0;							\
	if (nargs) {								\
		regs = (const struct pt_regs *)ctx->di;				\
		t->sys_args[0] = BPF_CORE_READ(regs, di);			\
		t->sys_args[1] = BPF_CORE_READ(regs, si);			\
		t->sys_args[2] = BPF_CORE_READ(regs, dx);			\
		t->sys_args[3] = BPF_CORE_READ(regs, r10);			\
		t->sys_args[4] = BPF_CORE_READ(regs, r8);			\
		t->sys_args[5] = BPF_CORE_READ(regs, r9);			\
	}									\
	sys_begin(t, SYS);							\
	return 0;								\
}										\
										\
SEC("kretprobe/__x64_sys_" #name)						\
int kretprobe_##name(struct pt_regs *ctx)					\
{										\
	struct peer_task *t = this_task();					\
										\
	if (!t || !t->sys_start)						\
		return 0;							\
	sys_end(t, SYS, t->sys_args, nargs, ctx->ax);				\
	return 0;								\
}

PEER_SYSCALL(mmap, MEMMON_SYS_MMAP, 6)
PEER_SYSCALL(munmap, MEMMON_SYS_MUNMAP, 2)
PEER_SYSCALL(mremap, MEMMON_SYS_MREMAP, 5)
PEER_SYSCALL(brk, MEMMON_SYS_BRK, 1)
PEER_SYSCALL(mlock, MEMMON_SYS_MLOCK, 2)
PEER_SYSCALL(mlock2, MEMMON_SYS_MLOCK2, 3)
PEER_SYSCALL(munlock, MEMMON_SYS_MUNLOCK, 2)
PEER_SYSCALL(mlockall, MEMMON_SYS_MLOCKALL, 1)
PEER_SYSCALL(munlockall, MEMMON_SYS_MUNLOCKALL, 0)
PEER_SYSCALL(fsync, MEMMON_SYS_FSYNC, 1)
PEER_SYSCALL(madvise, MEMMON_SYS_MADVISE, 3)
PEER_SYSCALL(mprotect, MEMMON_SYS_MPROTECT, 3)

/* ---- page faults ------------------------------------------------------- */

/*
 * memmon_fault_class() without its page-table walk: swap-ins are classed
 * anonymous here (memmon reads the PTE for that, and for the pfn). Two
 * copies: fentry's @vma is BTF-typed, read with plain loads (the verifier
 * makes them fault-safe, no helper call); the kprobe's is a bare address,
 * read with bpf_probe_read_kernel().
 */
static __always_inline u32 fault_class_of(unsigned long vm_flags, bool ops,
					  bool file, bool shmem)
{
	if (vm_flags & (VM_PFNMAP | VM_IO))
		return MEMMON_FCLASS_OTHER;
	if (!ops)
		return vm_flags & VM_MIXEDMAP ? MEMMON_FCLASS_OTHER :
						MEMMON_FCLASS_ANON;
	if (vm_flags & VM_HUGETLB)
		return MEMMON_FCLASS_SHMEM;
	if (file)
		return shmem ? MEMMON_FCLASS_SHMEM : MEMMON_FCLASS_FILE;
	return MEMMON_FCLASS_OTHER;
}

/* shmem_mapping(): tmpfs, SysV shm and shared anonymous memory alike. */
static __always_inline u32 fault_class(struct vm_area_struct *vma)
{
	unsigned long vm_flags = vma->vm_flags;
	struct file *file;

	if (vm_flags & (VM_PFNMAP | VM_IO) || !vma->vm_ops)
		return fault_class_of(vm_flags, vma->vm_ops, false, false);
	file = vma->vm_file;
	return fault_class_of(vm_flags, true, file,
			      file && file->f_inode->i_sb->s_magic == TMPFS_MAGIC);
}

static __always_inline u32 fault_class_probe(struct vm_area_struct *vma)
{
	unsigned long vm_flags = BPF_CORE_READ(vma, vm_flags);
	bool ops = BPF_CORE_READ(vma, vm_ops);
	struct file *file;

	if (vm_flags & (VM_PFNMAP | VM_IO) || !ops)
		return fault_class_of(vm_flags, ops, false, false);
	file = BPF_CORE_READ(vma, vm_file);
	return fault_class_of(vm_flags, true, file,
			      file && BPF_CORE_READ(file, f_inode, i_sb, s_magic) == TMPFS_MAGIC);
}

static __always_inline void fault_begin(struct peer_task *t, u32 fclass)
{
	t->f_class = fclass;
	t->f_start = bpf_ktime_get_ns();
}

/* memmon_fault_result(): the kernel's enum values, relocated. */
static __always_inline u32 fault_result(u32 ret)
{
	u32 error = bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_OOM) |
		    bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_SIGBUS) |
		    bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_SIGSEGV) |
		    bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_HWPOISON) |
		    bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_HWPOISON_LARGE) |
		    bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_FALLBACK);
	u32 retry = bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_RETRY);

	if (!(ret & (error | retry)))
		return MEMMON_FRES_HANDLED;
	if (ret & bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_OOM))
		return MEMMON_FRES_OOM;
	if (ret & (bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_SIGBUS) |
		   bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_HWPOISON) |
		   bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_HWPOISON_LARGE)))
		return MEMMON_FRES_SIGBUS;
	if (ret & bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_SIGSEGV))
		return MEMMON_FRES_SIGSEGV;
	if (ret & error)
		return MEMMON_FRES_OTHER;
	return MEMMON_FRES_RETRY;
}

/* The record, at the return of handle_mm_fault(vma, addr, flags, regs). */
static __always_inline void fault_end(struct peer_task *t, u64 addr, u32 flags,
				      u64 ip, u32 ret)
{
	struct memmon_rec_fault *r;
	u64 now = bpf_ktime_get_ns();
	u32 rflags = 0;

	r = reserve(sizeof(*r));
	if (!r)
		goto out;
	fill_header(&r->hdr, sizeof(*r), MEMMON_REC_FAULT, now);
	r->addr = addr;
	r->ip = ip;
	if (flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_INSTRUCTION))
		r->access = MEMMON_FAULT_EXEC;
	else if (flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_WRITE))
		r->access = MEMMON_FAULT_WRITE;
	else
		r->access = MEMMON_FAULT_READ;
	r->fclass = t->f_class;
	r->result = fault_result(ret);
	if (!(flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_USER)))
		rflags |= MEMMON_FAULTF_KERNEL;
	/* mm_account_fault()'s rule, as memmon (hook_faults.c). */
	if (r->result == MEMMON_FRES_HANDLED &&
	    ((ret & bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_MAJOR)) ||
	     (flags & bpf_core_enum_value(enum fault_flag, FAULT_FLAG_TRIED))))
		rflags |= MEMMON_FAULTF_MAJOR;
	r->flags = rflags;
	r->duration_ns = now - t->f_start;
	r->pfn = 0;
	submit(r);
out:
	t->f_start = 0;
}

SEC("fentry/handle_mm_fault")
int BPF_PROG(fentry_fault, struct vm_area_struct *vma, unsigned long address,
	     unsigned int flags, struct pt_regs *regs)
{
	struct peer_task *t = watched_task();

	if (t)
		fault_begin(t, fault_class(vma));
	return 0;
}

SEC("fexit/handle_mm_fault")
int BPF_PROG(fexit_fault, struct vm_area_struct *vma, unsigned long address,
	     unsigned int flags, struct pt_regs *regs, unsigned int ret)
{
	struct peer_task *t = this_task();
	struct pt_regs *uregs = regs;

	if (!t || !t->f_start)
		return 0;
	/* ip: the faulting user instruction, or for a fault taken in the
	 * kernel (GUP: no regs; copy_*_user: kernel regs) the user ip of
	 * the syscall, as memmon.
	 */
	if (!regs || !(regs->cs & 3))
		uregs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	fault_end(t, address, flags, uregs->ip, ret);
	return 0;
}

SEC("kprobe/handle_mm_fault")
int kprobe_fault(struct pt_regs *ctx)
{
	struct peer_task *t = watched_task();

	if (!t)
		return 0;
	t->f_addr = ctx->si;
	t->f_flags = ctx->dx;
	t->f_regs = ctx->cx;
	fault_begin(t, fault_class_probe((struct vm_area_struct *)ctx->di));
	return 0;
}

SEC("kretprobe/handle_mm_fault")
int kretprobe_fault(struct pt_regs *ctx)
{
	struct peer_task *t = this_task();
	struct pt_regs *regs;

	if (!t || !t->f_start)
		return 0;
	regs = (struct pt_regs *)t->f_regs;
	if (!regs || !(BPF_CORE_READ(regs, cs) & 3))
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	fault_end(t, t->f_addr, t->f_flags, BPF_CORE_READ(regs, ip), ctx->ax);
	return 0;
}

/* ---- children ------------------------------------------------------------ */

/* A watched process's new process is watched (memmon's FOLLOW_CHILDREN). */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 ptgid = BPF_CORE_READ(parent, tgid);
	u32 ctgid = BPF_CORE_READ(child, tgid);
	u8 one = 1;

	if (ptgid != ctgid && bpf_map_lookup_elem(&watched, &ptgid))
		bpf_map_update_elem(&watched, &ctgid, &one, BPF_ANY);
	return 0;
}

/* The process is gone: its tgid may be reused. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(forget_exit, struct task_struct *task)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32;

	if ((u32)id == tgid)
		bpf_map_delete_elem(&watched, &tgid);
	return 0;
}
