// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: a session's consumers: mmap() of its rings, poll(), read(), and
 * memmon_session_visit() for a reader in the kernel (/proc/memmon). The
 * rings' protocol and its barriers [A]..[E] are in ring.h.
 */
#include "main.h"
#include "emit.h"
#include "session.h"
#include "emit_inline.h"
#include "full_wait.h"
#include "ring_alloc.h"

#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

/*
 * The longest a record waits in a ring below the watermark while a reader
 * sleeps in read() or poll() (trace_pipe's promptness for the few-events
 * case); 0 leaves only the watermark. Read at each tick.
 */
static unsigned int wakeup_ms = 100;
module_param(wakeup_ms, uint, 0644);
MODULE_PARM_DESC(wakeup_ms,
		 "A sleeping reader sees a record within this many ms even below the watermark (default 100; 0: only at the watermark)");

/**
 * memmon_session_mmap() - check and map one of the session's areas
 * @s: the session
 * @vma: the new mapping
 *
 * The request is checked against the layout of the current configuration
 * before anything is allocated, so a refused mmap() leaves CONFIGURE
 * possible; an accepted one creates the rings. The caller installs vm_ops
 * and the VMA's session reference on success.
 *
 * Context: the mmap file operation: mmap_lock held for writing; may sleep.
 * Return: 0, or the errors of memmon_mmap_check(), of the allocation and
 * of memmon_rings_remap().
 */
int memmon_session_mmap(struct memmon_ksession *s, struct vm_area_struct *vma)
{
	struct memmon_rings *rings;
	struct memmon_layout l;
	int area;

	mutex_lock(&s->rings_lock);
	if (s->rings)
		l = s->rings->layout;
	else
		memmon_layout_compute(&l, s->ring_size);
	area = memmon_mmap_check(&l, vma);
	if (area < 0) {
		mutex_unlock(&s->rings_lock);
		return area;
	}
	rings = __memmon_session_rings(s);
	mutex_unlock(&s->rings_lock);
	if (IS_ERR(rings))
		return PTR_ERR(rings);
	return memmon_rings_remap(rings, vma, area);
}

/*
 * The tick of prompt delivery: wake the sleepers if a ring holds anything,
 * and tick again while anyone still waits. A sleeper that arrives after
 * the wq_has_sleeper() test arms the timer itself
 * (memmon_session_wait_prepare(), after it is on the queue).
 *
 * Context: timer (softirq; a thread on PREEMPT_RT). Pairs with: [B]
 * through [C] in memmon_rings_readable(); [E] through the wait queue lock.
 */
void memmon_session_flush_tick(struct timer_list *t)
{
	struct memmon_ksession *s = from_timer(s, t, flush_timer);
	struct memmon_rings *rings = memmon_session_rings_peek(s);
	unsigned int ms = READ_ONCE(wakeup_ms);

	if (!ms)
		return;
	if (rings && memmon_rings_hold_records(rings)) {
		WRITE_ONCE(s->flush_due, true);
		wake_up_all(&s->wq);
	}
	if (wq_has_sleeper(&s->wq))
		mod_timer(t, jiffies + msecs_to_jiffies(ms));
}

/**
 * memmon_session_wait_prepare() - a reader is about to wait on @s->wq
 * @s: the session
 *
 * Arms the tick of prompt delivery unless it is due sooner already
 * (timer_reduce() never postpones it), so that a record below the
 * watermark reaches the waiter within wakeup_ms.
 *
 * Context: process context, after the caller is on @s->wq (poll_wait(),
 * prepare_to_wait()), so that the tick's wq_has_sleeper() sees it.
 */
void memmon_session_wait_prepare(struct memmon_ksession *s)
{
	unsigned int ms = READ_ONCE(wakeup_ms);

	if (ms)
		timer_reduce(&s->flush_timer, jiffies + msecs_to_jiffies(ms));
}

/**
 * memmon_session_poll_readable() - poll()'s EPOLLIN condition
 * @s: the session
 *
 * Context: process context; the caller registered on @s->wq first ([E]).
 * Return: true when a ring holds at least wakeup_bytes, or holds something
 * while a loss is pending, or holds anything once the tick of prompt
 * delivery found it there.
 */
bool memmon_session_poll_readable(struct memmon_ksession *s)
{
	struct memmon_rings *rings = memmon_session_rings_peek(s);

	if (!rings)
		return false;
	memmon_session_room_made(s);
	/* wakeup_bytes is fixed once the rings exist. */
	if (memmon_rings_readable(rings, s->wakeup_bytes))
		return true;
	if (!memmon_rings_readable(rings, 1)) {
		/* Drained: the next record waits for the next tick. */
		WRITE_ONCE(s->flush_due, false);
		return false;
	}
	return READ_ONCE(s->flush_due);
}

/*
 * Copy whole records of one ring to @buf, at most @room bytes. Returns the
 * bytes copied, or -EFAULT; *@blocked is set when the next record did not
 * fit. read_lock held.
 */
static ssize_t memmon_read_ring(struct memmon_ring *r, char __user *buf,
				size_t room, bool *blocked)
{
	const struct memmon_rec_header *rec;
	struct memmon_ring_cursor c;
	size_t len = 0;
	u32 size;

	memmon_ring_cursor_begin(&c, r);
	while (memmon_ring_cursor_next(&c, &rec, &size)) {
		if (size > room - len) {
			*blocked = true;
			break;
		}
		len += size;
		memmon_ring_cursor_advance(&c, size);
	}
	/*
	 * [start, cons) is at most ring_size bytes from a position inside the
	 * first copy of the data, so it is contiguous in the double mapping.
	 * A fault leaves the ring as it was: nothing is consumed.
	 */
	if (len && copy_to_user(buf, r->data + (c.start & (r->size - 1)), len))
		return -EFAULT;
	memmon_ring_cursor_end(&c);
	return len;
}

/* One pass over every ring. read_lock held. */
static ssize_t memmon_read_rings(struct memmon_ksession *s,
				 struct memmon_rings *rings,
				 char __user *buf, size_t count)
{
	unsigned int i, cpu, nr = nr_cpu_ids;
	bool blocked = false;
	size_t copied = 0;
	ssize_t n;

	for (i = 0; i < nr; i++) {
		cpu = (s->read_cpu + i) % nr;
		if (!cpu_possible(cpu))
			continue;
		n = memmon_read_ring(&per_cpu_ptr(rings->cpu, cpu)->ring,
				     buf + copied, count - copied, &blocked);
		if (n < 0)
			return copied ? copied : n;
		copied += n;
		if (blocked) {
			/* Start with this ring's record next time. */
			s->read_cpu = cpu;
			return copied ? copied : -EINVAL;
		}
	}
	s->read_cpu = (s->read_cpu + 1) % nr;
	return copied;
}

/*
 * Start an in-kernel read of @s: its rings (created if need be) with
 * read_lock held, or an ERR_PTR with no lock. The flight recorder is read
 * through the mapping, copy-then-check (uapi): no in-kernel cursor for it
 * (s->overwrite is stable once the rings exist).
 */
static struct memmon_rings *memmon_session_read_begin(struct memmon_ksession *s)
{
	struct memmon_rings *rings = memmon_session_rings(s);

	if (IS_ERR(rings))
		return rings;
	if (s->overwrite)
		return ERR_PTR(-EOPNOTSUPP);
	if (mutex_lock_interruptible(&s->read_lock))
		return ERR_PTR(-ERESTARTSYS);
	return rings;
}

/**
 * memmon_session_read() - read(): copy whole records to userspace
 * @s: the session
 * @buf: the user buffer
 * @count: its size
 * @nonblock: O_NONBLOCK
 *
 * Rings are visited round robin, each call starting one CPU further, and
 * each ring is drained as far as the buffer allows: records of one CPU keep
 * their order, records of different CPUs are not merged by time (sort on
 * time_ns if needed). Blocks, interruptibly, until a record is produced
 * after a read that found nothing (consumer positions rewritten through a
 * shared mapping do not end the wait); the wakeups are poll()'s, so a
 * sleeper wakes at the watermark or on a loss.
 *
 * Context: process context, may sleep.
 * Return: bytes copied (whole records); 0 for @count 0; -EINVAL if the
 * next record is larger than @count; -EAGAIN if empty and @nonblock;
 * -ERESTARTSYS on a signal; -EFAULT; or a ring allocation error.
 */
ssize_t memmon_session_read(struct memmon_ksession *s, char __user *buf,
			    size_t count, bool nonblock)
{
	struct memmon_rings *rings;
	ssize_t ret;

	if (!count)
		return 0;
	rings = memmon_session_read_begin(s);
	if (IS_ERR(rings))
		return PTR_ERR(rings);
	for (;;) {
		/*
		 * What was produced before the rings are read: the wait below
		 * ends only when something more is, never because a consumer
		 * position moved (memmon_rings_produced()).
		 */
		u64 seen = memmon_rings_produced(rings);

		ret = memmon_read_rings(s, rings, buf, count);
		memmon_session_room_made(s);
		if (ret)
			break;
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		/*
		 * [E]: prepare_to_wait() registers before the condition reads;
		 * the tick is armed once we are on the queue.
		 */
		if (wait_event_interruptible(s->wq,
					     (memmon_session_wait_prepare(s),
					      memmon_rings_produced(rings) != seen))) {
			ret = -ERESTARTSYS;
			break;
		}
	}
	mutex_unlock(&s->read_lock);
	return ret;
}

/*
 * One pass over every ring for memmon_session_visit(): each CPU's records in
 * order, until @fn refuses one (*@refused set). read_lock held. Returns the
 * records taken.
 */
static ssize_t memmon_visit_rings(struct memmon_rings *rings,
				  memmon_visit_t fn, void *ctx, bool *refused)
{
	const struct memmon_rec_header *rec;
	struct memmon_ring_cursor c;
	unsigned int cpu;
	ssize_t n = 0;
	u32 size;

	for_each_possible_cpu(cpu) {
		memmon_ring_cursor_begin(&c, &per_cpu_ptr(rings->cpu, cpu)->ring);
		while (memmon_ring_cursor_next(&c, &rec, &size)) {
			if (!fn(ctx, rec, size))
				break;
			n++;
			memmon_ring_cursor_advance(&c, size);
		}
		memmon_ring_cursor_end(&c);
		if (c.st == MEMMON_PEEK_RECORD) {
			*refused = true;	/* @fn took no more */
			break;
		}
	}
	return n;
}

/**
 * memmon_session_visit() - consume records through a function, in the kernel
 * @s: the session
 * @fn: takes one record (@rec, @size bytes, validated) and returns true,
 *	or returns false to leave it, and every later one, in the rings
 * @ctx: for @fn
 * @nonblock: do not wait for a record
 * @cancel: a wait ends when *@cancel becomes true (after a wake_up_all()
 *	of the session's readers, memmon_session_wake_readers())
 *
 * What read() is to a process, for an in-kernel reader (/proc/memmon): the
 * rings are visited in CPU order, each as far as @fn takes records. Waits,
 * interruptibly, while no ring holds a record. @fn runs under the session's
 * read_lock and must not sleep on it or on the rings.
 *
 * Context: process context, may sleep.
 * Return: records taken (> 0); 0 only if cancelled; -EINVAL if @fn refused
 * the first record it was offered (it can never take it); -EAGAIN if empty
 * and @nonblock; -ERESTARTSYS on a signal; or a ring allocation error.
 */
ssize_t memmon_session_visit(struct memmon_ksession *s, memmon_visit_t fn,
			     void *ctx, bool nonblock, const bool *cancel)
{
	struct memmon_rings *rings;
	ssize_t ret;

	rings = memmon_session_read_begin(s);
	if (IS_ERR(rings))
		return PTR_ERR(rings);
	for (;;) {
		bool refused = false;

		ret = memmon_visit_rings(rings, fn, ctx, &refused);
		memmon_session_room_made(s);
		if (ret)
			break;
		if (refused) {
			ret = -EINVAL;
			break;
		}
		/* Empty when visited; one committed since ends the wait. */
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		/*
		 * [E]: wait_event registers before it tests the rings; the
		 * tick of prompt delivery is armed once we are on the queue.
		 */
		if (wait_event_interruptible(s->wq,
					     (memmon_session_wait_prepare(s),
					      memmon_rings_readable(rings, 1)) ||
					     READ_ONCE(*cancel))) {
			ret = -ERESTARTSYS;
			break;
		}
		if (READ_ONCE(*cancel))
			break;	/* 0 */
	}
	mutex_unlock(&s->read_lock);
	return ret;
}

/**
 * memmon_session_wake_readers() - wake every reader waiting on a session
 * @s: the session
 *
 * For an in-kernel reader's @cancel (memmon_session_visit()): set it, then
 * call this. Context: any.
 */
void memmon_session_wake_readers(struct memmon_ksession *s)
{
	wake_up_all(&s->wq);
}

