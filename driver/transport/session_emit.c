// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the event path, from a hook's record into the rings of the
 * sessions that want it (the emit API of emit.h; emit_inline.h has its
 * loop). The rules of memmon_sessions[] and of the masks are at the top of
 * session.c, the rings' in ring.h.
 */
#include "main.h"
#include "emit.h"
#include "session.h"
#include "emit_inline.h"

#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>

/**
 * memmon_emit() - write one record into the rings of some sessions
 * @sessions: the sessions (memmon_sessions_wanting()'s answer)
 * @task: the task the record is about (header tgid/tid), or NULL
 * @type: enum memmon_rec_type
 * @rec: the record, built as its uapi struct: the header is the
 *	transport's to fill, the body follows it
 * @size: bytes of @rec, header included (at least the header)
 * @tail: variable-length data after @rec (path, payload), or NULL
 * @tail_len: bytes of @tail
 * @time_ns: CLOCK_MONOTONIC time of the event
 *
 * For each session in @sessions that is still enabled: reserve on this CPU's
 * ring, fill the header (tgid/tid in the session opener's PID namespace),
 * copy @rec's body and @tail, zero the padding to MEMMON_REC_ALIGN, commit, and
 * queue the ring's irq_work if readers should wake. A full ring drops the
 * event and counts it (ring.h). Nothing sleeps, nothing takes a lock.
 *
 * Context: any context the hooks run in: task context with or without
 * preemption, tracepoint probes (RCU-sched), softirq, IRQ, NMI (a kprobe on
 * an int3); nested on this CPU is fine: only local ops, RCU reads and
 * irq_work_queue(). @sessions must have been computed inside the same RCU
 * read-side critical section (see memmon_sessions_watching()). Disables preemption
 * itself (notrace, so an ftrace-based caller does not recurse).
 * Pairs with: [A]/[B] inside ring.h; [E] through the irq_work.
 */
void memmon_emit(u64 sessions, struct task_struct *task, u16 type,
		 const void *rec, u32 size,
		 const void *tail, u32 tail_len, u64 time_ns)
{
	const u32 hdr = sizeof(struct memmon_rec_header);

	__memmon_emit(sessions, task, type, (const u8 *)rec + hdr, size - hdr,
		      tail, tail_len, time_ns);
}

/* A record's fixed body and the user stack that follows it. */
struct memmon_stacked_fill {
	const u8 *body;
	u32 body_len;
	u32 flags_off;		/* of the body's __u32 flags */
	u32 flag;		/* its *_USTACK bit */
	const struct memmon_ustack *st;
};

/* The stack as deep as session @s asked (read once: the fill uses hdr->size). */
static __always_inline u64 memmon_stacked_len(const struct memmon_ksession *s,
					      const void *ctx)
{
	const struct memmon_stacked_fill *f = ctx;

	return f->body_len +
	       memmon_ustack_bytes(memmon_ustack_nr(f->st, READ_ONCE(s->stack_depth)));
}

static __always_inline void memmon_stacked_fill(struct memmon_rec_header *hdr,
						const struct memmon_ksession *s,
						const void *ctx)
{
	const struct memmon_stacked_fill *f = ctx;
	u8 *p = (u8 *)(hdr + 1);
	u32 nr, flags;

	/* What memmon_stacked_len() gave @s: 8-byte parts, no padding. */
	nr = (hdr->size - sizeof(*hdr) - f->body_len -
	      sizeof(struct memmon_user_stack)) / sizeof(u64);
	memcpy(p, f->body, f->body_len);
	memcpy(&flags, p + f->flags_off, sizeof(flags));
	flags |= f->flag;
	memcpy(p + f->flags_off, &flags, sizeof(flags));
	memmon_ustack_put(p + f->body_len, f->st, nr);
}

/**
 * memmon_emit_stacked() - memmon_emit() of a record followed by a user stack
 * @sessions: the sessions to write to
 * @task: whose record it is
 * @type: its type
 * @rec: the record as its uapi struct (memmon_emit()'s @rec)
 * @size: its bytes, header included (a multiple of 8)
 * @flags_off: the offset in @rec of its __u32 flags
 * @flag: the flag that says a struct memmon_user_stack follows
 * @st: the stack (@st->nr > 0); each session gets it as deep as it asked
 * @time_ns: the record's time
 *
 * Contexts as memmon_emit().
 */
void memmon_emit_stacked(u64 sessions, struct task_struct *task, u16 type,
			 const void *rec, u32 size, u32 flags_off, u32 flag,
			 const struct memmon_ustack *st, u64 time_ns)
{
	const u32 hdr = sizeof(struct memmon_rec_header);
	const struct memmon_stacked_fill f = {
		.body = (const u8 *)rec + hdr, .body_len = size - hdr,
		.flags_off = flags_off - hdr, .flag = flag, .st = st,
	};

	__memmon_emit_fill_len(sessions, task, type, 0, memmon_stacked_len,
			       memmon_stacked_fill, &f, time_ns);
}

/*
 * memmon_emit_stacked() of a syscall record of current (every watched call
 * writes one), with the record's size known to the compiler where the
 * stack is empty. (The fault hook compiles the loop into itself:
 * hook_faults.c.) Contexts as memmon_emit().
 */
void memmon_emit_syscall(u64 sessions, const struct memmon_rec_syscall *rec,
			 const struct memmon_ustack *st, u64 time_ns)
{
	const u32 body = sizeof(*rec) - sizeof(rec->hdr);

	if (!st->nr) {
		__memmon_emit(sessions, current, MEMMON_REC_SYSCALL,
			      (const u8 *)rec + sizeof(rec->hdr), body, NULL, 0,
			      time_ns);
		return;
	}
	memmon_emit_stacked(sessions, current, MEMMON_REC_SYSCALL, rec,
			    sizeof(*rec), offsetof(struct memmon_rec_syscall, flags),
			    MEMMON_SYSF_USTACK, st, time_ns);
}

/*
 * What a FORK record is written from: the child, whose ids each session
 * sees in its own PID namespace.
 */
struct memmon_fork_fill {
	struct task_struct *child;
	u32 flags;
};

static __always_inline void memmon_fork_fill(struct memmon_rec_header *hdr,
					     const struct memmon_ksession *s,
					     const void *ctx)
{
	struct memmon_rec_fork *rec = container_of(hdr, struct memmon_rec_fork, hdr);
	const struct memmon_fork_fill *f = ctx;

	/* 0 where the child is not visible in the session's namespace. */
	memmon_task_ids(s, f->child, &rec->child_tgid, &rec->child_tid);
	rec->flags = f->flags;
	rec->__reserved = 0;
}

/*
 * memmon_emit() of a FORK record of @parent: every PID in a record is in
 * the reading session's namespace, the child's too. Contexts as
 * memmon_emit(); @child must stay alive (the fork tracepoint's is).
 */
void memmon_emit_fork(u64 sessions, struct task_struct *parent,
		      struct task_struct *child, u32 flags, u64 time_ns)
{
	const struct memmon_fork_fill f = { .child = child, .flags = flags };

	__memmon_emit_fill(sessions, parent, MEMMON_REC_FORK,
			   sizeof(struct memmon_rec_fork) -
			   sizeof(struct memmon_rec_header),
			   memmon_fork_fill, &f, time_ns);
}

