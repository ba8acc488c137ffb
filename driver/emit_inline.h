/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: memmon_emit()'s loop, inline, for the hottest producer.
 *
 * emit.h is the seam between the hooks and the transport, and memmon_emit()
 * the call across it. A watched page fault is the commonest record and the
 * one whose cost is measured against the fault itself: its return half
 * (hook_faults.c) compiles this loop into itself, and writes the record's
 * fields straight into each ring (a fill function, below): no call across
 * the seam, no copy of the record on the stack.
 * Everything here is session.c's, exposed only for that: the rules of
 * memmon_sessions[] and of the rings are at the top of session.c and in
 * ring.h.
 */
#ifndef MEMMON_DRIVER_EMIT_INLINE_H
#define MEMMON_DRIVER_EMIT_INLINE_H

#include <linux/irq_work.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "emit.h"
#include "transport/full_wait.h"
#include "transport/ring.h"
#include "transport/ring_alloc.h"
#include "transport/session.h"

/* session.c: the sessions by id, RCU-published under its lock. */
extern struct memmon_ksession __rcu *memmon_sessions[MEMMON_MAX_SESSIONS];

/*
 * The rings, if they exist yet: NULL, or rings whose initialisation is
 * visible (pairs with the store-release in __memmon_session_rings()).
 */
static inline struct memmon_rings *memmon_session_rings_peek(struct memmon_ksession *s)
{
	/* Pairs with smp_store_release() in __memmon_session_rings(). */
	return smp_load_acquire(&s->rings);
}

/* tgid and tid of @task as the session's opener sees them. */
static inline void memmon_task_ids(const struct memmon_ksession *s,
				   struct task_struct *task, u32 *tgid,
				   u32 *tid)
{
	if (!task) {
		*tgid = 0;
		*tid = 0;
	} else if (likely(s->pid_ns == &init_pid_ns)) {
		*tgid = task->tgid;
		*tid = task->pid;
	} else {
		*tgid = task_tgid_nr_ns(task, s->pid_ns);
		*tid = task_pid_nr_ns(task, s->pid_ns);
	}
}

/*
 * Writes a record's body, everything after the header at @hdr, from @ctx,
 * as session @s may see it (its PID namespace, its MEMMON_SESSF_* rights):
 * exactly the body_len bytes its emit said (the transport zeroes the
 * padding). Always a constant, inline function: each emit site's loop
 * compiles it in, so that a record built field by field goes straight into
 * the ring, with no copy on the stack in between.
 * Context: the emit's, inside a ring's reserve and commit; must not emit.
 */
typedef void (*memmon_fill_t)(struct memmon_rec_header *hdr,
			      const struct memmon_ksession *s, const void *ctx);

/*
 * Write one record into @cpu's ring of @s. Preemption disabled, on @cpu;
 * @rings are @s's (non-NULL, seen with acquire). @may_wait: current is the
 * event's task, which MEMMON_FULL_WAIT may make wait for room; false for
 * what a session's own ioctl writes (its names, an unscoped MARK): the
 * consumer must never wait for itself. Inline: as a call, its arguments
 * cost a watched fault more than its body, and @fill could not compile in.
 */
static __always_inline void __memmon_emit_one(struct memmon_ksession *s,
					      struct memmon_rings *rings,
					      unsigned int cpu,
					      struct task_struct *task, u16 type,
					      u64 body_len, memmon_fill_t fill,
					      const void *ctx, u64 time_ns,
					      bool may_wait)
{
	struct memmon_cpu_ring *cr = per_cpu_ptr(rings->cpu, cpu);
	struct memmon_rec_header *hdr;
	u64 len, size64;
	bool wake;
	u32 size;

	len = sizeof(*hdr) + body_len;
	size64 = ALIGN(len, MEMMON_REC_ALIGN);
	/* Too big for any ring: reserve drops it, and counts it lost. */
	size = size64 > U32_MAX ? rounddown(U32_MAX, MEMMON_REC_ALIGN) : size64;

	hdr = memmon_ring_reserve(&cr->ring, size, time_ns, &wake);
	if (hdr) {
		hdr->size = size;
		hdr->type = type;
		hdr->cpu = cpu;
		hdr->time_ns = time_ns;
		memmon_task_ids(s, task, &hdr->tgid, &hdr->tid);
		fill(hdr, s, ctx);
		/* Never leak stale ring bytes: the padding is zero. */
		if (size > len)
			memset((u8 *)hdr + len, 0, size - len);
		wake = memmon_ring_commit(&cr->ring, hdr);
	}
	/* [E]: the wakeup is deferred; producers never take the wq lock. */
	if (wake)
		irq_work_queue(&cr->wake);
	/* MEMMON_FULL_WAIT: a no-op branch unless a session asked for it. */
	if (may_wait && static_branch_unlikely(&memmon_full_wait_active) &&
	    unlikely(s->full_wait))
		memmon_full_wait_check(s, cr, cpu);
}

/*
 * The bytes after the header of session @s's copy of a record whose length
 * depends on the session (a user stack cut to its depth). Called once per
 * session and record; @fill then finds the same length in hdr->size.
 */
typedef u64 (*memmon_len_t)(const struct memmon_ksession *s, const void *ctx);

/*
 * The loop over the sessions of memmon_emit(), for a record of @body_len
 * bytes after its header (or @len's, per session, if not NULL) that @fill
 * writes from @ctx. Inline: memmon_emit(), memmon_emit_syscall()
 * (session.c) and the fault hook (hook_faults.c) each have their own copy,
 * in which a constant @body_len folds the size arithmetic away and @fill
 * compiles in.
 * Contexts and rules: memmon_emit()'s.
 */
static __always_inline void __memmon_emit_fill_len(u64 sessions,
						   struct task_struct *task,
						   u16 type, u64 body_len,
						   memmon_len_t len,
						   memmon_fill_t fill,
						   const void *ctx, u64 time_ns)
{
	struct memmon_ksession *s;
	struct memmon_rings *rings;
	unsigned int cpu;

	preempt_disable_notrace();
	sessions &= READ_ONCE(memmon_masks.enabled);
	cpu = smp_processor_id();
	while (sessions) {
		s = rcu_dereference_sched(memmon_sessions[__ffs64(sessions)]);
		sessions &= sessions - 1;
		if (unlikely(!s))
			continue;
		rings = memmon_session_rings_peek(s);
		if (likely(rings))
			__memmon_emit_one(s, rings, cpu, task, type,
					  len ? len(s, ctx) : body_len,
					  fill, ctx, time_ns, true);
	}
	preempt_enable_notrace();
}

/* __memmon_emit_fill_len() of a record whose length is @body_len for all. */
static __always_inline void __memmon_emit_fill(u64 sessions,
					       struct task_struct *task,
					       u16 type, u64 body_len,
					       memmon_fill_t fill,
					       const void *ctx, u64 time_ns)
{
	__memmon_emit_fill_len(sessions, task, type, body_len, NULL, fill, ctx,
			       time_ns);
}

/* A body given as bytes: @body, then @tail (memmon_emit()'s arguments). */
struct memmon_fill_bytes {
	const void *body;
	const void *tail;
	u32 body_len;
	u32 tail_len;
};

static __always_inline void memmon_fill_bytes(struct memmon_rec_header *hdr,
					      const struct memmon_ksession *s,
					      const void *ctx)
{
	const struct memmon_fill_bytes *b = ctx;
	u8 *p = (u8 *)(hdr + 1);

	memcpy(p, b->body, b->body_len);
	if (b->tail_len)
		memcpy(p + b->body_len, b->tail, b->tail_len);
}

/* __memmon_emit_fill() of a body given as bytes (memmon_emit()'s). */
static __always_inline void __memmon_emit(u64 sessions,
					  struct task_struct *task, u16 type,
					  const void *body, u32 body_len,
					  const void *tail, u32 tail_len,
					  u64 time_ns)
{
	const struct memmon_fill_bytes b = {
		.body = body, .tail = tail,
		.body_len = body_len, .tail_len = tail_len,
	};

	__memmon_emit_fill(sessions, task, type, (u64)body_len + tail_len,
			   memmon_fill_bytes, &b, time_ns);
}

#endif /* MEMMON_DRIVER_EMIT_INLINE_H */
