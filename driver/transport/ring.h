/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the per-CPU ring algorithm.
 *
 * One ring per CPU and session. The producer is the kernel on that CPU: a
 * task, and whatever interrupts it (IRQ, NMI) and emits on the same CPU
 * while it is between reserve and commit. The consumer is userspace through
 * the mapping, or read(), on any CPU. The protocol, and the letters [A]-[E]
 * the barriers below cite, are in uapi/linux/memmon.h.
 *
 * This file is compiled in the module and, unchanged, in the host unit tests
 * (tests/unit/kshim.h emulates the few kernel primitives it uses). It holds
 * algorithm only: driver/transport/ring_alloc.c allocates the pages and builds the
 * double mapping.
 *
 *          consumer_pos (untrusted)  producer_pos (published)   head
 *                    |                        |                   |
 *   ... free ... [ records to read ........ ][ being written ..... ] ... free
 *                    <----------------- at most size ------------->
 *
 * Positions are free-running u64 byte counts; a position's byte lives at
 * data[pos & (size - 1)]. The data pages are mapped twice back to back, so a
 * record is contiguous from its start even when it wraps.
 *
 * Nesting (the perf scheme). Interrupts nest strictly: an interrupting writer
 * finishes before the writer it interrupted resumes. @nest counts the writers
 * in progress on the CPU, so a writer that sees nest == 1 is the outermost
 * and stays so while it runs. Every writer claims its own space with a
 * local_cmpxchg() on @head, so nested writers never overlap and are never
 * refused for nesting. Only the outermost writer publishes producer_pos, once
 * the records of everybody nested inside it are complete: a nested writer's
 * commit just leaves, and the outermost one, on its way out, re-reads head
 * and publishes again if someone reserved meanwhile. producer_pos never moves
 * backwards: it is stored only while the storing writer is the outermost one,
 * and always with a head read in that same window.
 *
 * Losses. A writer that finds no room drops its event: lost and lost_pending
 * grow by one. The outermost writer that next finds room for a LOST record
 * *and* its own event writes both in one claim, LOST first, reporting the
 * lost_pending it read and subtracting exactly that (a drop nested inside the
 * report stays pending for the next one). Nested writers never report: that
 * keeps a single subtractor, so the count can never be reported twice. An
 * event that fits alone but not with the pending LOST record is dropped too,
 * so that a LOST record always precedes the events that follow the loss.
 *
 * Overwrite (MEMMON_FULL_OVERWRITE, the flight recorder). consumer_pos is
 * ignored: the ring keeps the newest records. @tail is the oldest record
 * still in the ring; the outermost writer that finds no room moves it over
 * whole published records and counts each event it passes as lost (taken
 * back from delivered), so produced == delivered + lost still holds with
 * "delivered" meaning "read, or still readable": events below consumer_pos
 * (the consumer's own word, trusted only for its own counts) are passed
 * without a loss; an unread LOST record it passes adds its count to
 * overwritten, so that lost == overwritten + the counts of the LOST records
 * in the stream + lost_pending. Only the outermost writer moves
 * tail (a nested writer that finds no room drops, as above), so tail and
 * its mirror have one writer at a time. The mirror page->tail_pos is
 * stored before tail itself, with [F] between it and any store into the
 * space it releases; a reader copies records, then re-reads tail_pos with
 * [G]: a record below it may be torn and is discarded.
 */
#ifndef MEMMON_DRIVER_TRANSPORT_RING_H
#define MEMMON_DRIVER_TRANSPORT_RING_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <asm/local.h>
#include <asm/barrier.h>
#include <linux/memmon.h>
#else
#include "kshim.h"
#include <linux/memmon.h>
#endif
#include <memmon_rec_check.h>

/* Positions and counters live in local_t: it must hold a u64. */
static_assert(sizeof(long) == sizeof(u64), "memmon rings need a 64-bit local_t");

/*
 * Host tests define memmon_ring_irq(r, point) to run a nested writer at the
 * named point, the way an interrupt on this CPU could. Nothing in the kernel.
 */
#if defined(__KERNEL__) || !defined(memmon_ring_irq)
#undef memmon_ring_irq
#define memmon_ring_irq(r, point) do { } while (0)
#endif

/**
 * struct memmon_ring - one CPU's ring of one session
 *
 * Synchronisation (P = the producer: any writer on @cpu, nesting allowed;
 * C = the consumer, any CPU; "init" = memmon_ring_init(), before either runs):
 *
 *   field                  written by          read by      ordering
 *   ---------------------  ------------------  -----------  ------------------
 *   head, nest             P (local ops)       P            claimed by cmpxchg
 *   produced, delivered,   P (local ops)       P            mirrored to
 *     lost, bytes,                                          page->stats,
 *     lost_pending                                          page->lost_pending
 *   lost_first_ns,         P, dropping writer  P, reporter  none (best effort
 *     lost_last_ns                                          when nested)
 *   wakeup_next, tail,     P, outermost only   P            owned via nest == 1
 *     overwritten
 *   page->tail_pos         P, outermost only   C            [F] -> [G]
 *   page->producer_pos     P, outermost only   C, P         [B] -> [C]
 *   page->stats,           P, outermost only   C (racily)   before [B]
 *     page->lost_pending
 *   *consumer_pos          C (untrusted)       P, C         [D] -> [A]
 *   data[]                 P, in its claim     C            [B]/[C], [D]/[A]
 *   page, consumer_pos,    init                P, C         -
 *     data, size,
 *     wakeup_bytes, cpu
 *
 * "local ops" are atomic only against interrupts on the same CPU; nothing
 * but that CPU touches these fields.
 */
struct memmon_ring {
	/* Producer-private: touched only by this ring's CPU (nesting-safe local ops). */
	local_t head;		/* bytes reserved */
	local_t nest;		/* writers in progress on this CPU */
	local_t produced;	/* events meant for this ring */
	local_t delivered;	/* events given space */
	local_t lost;		/* events dropped */
	local_t bytes;		/* bytes of delivered events */
	local_t lost_pending;	/* dropped, not yet reported by a LOST record */
	u64 lost_first_ns;	/* time of the first pending drop */
	u64 lost_last_ns;	/* time of the last pending drop */
	u64 wakeup_next;	/* next producer position that triggers a wakeup */
	u64 tail;		/* overwrite: oldest record kept (outermost only) */
	u64 overwritten;	/* overwrite: events passed by tail (outermost) */
	/* Set up once at allocation, read-only afterwards. */
	struct memmon_ring_page *page;	/* producer page, user maps it read-only */
	u64 *consumer_pos;		/* in the user-WRITABLE consumer area: never trusted */
	u8 *data;			/* size bytes mapped twice back to back */
	u64 size;			/* power of two */
	u64 wakeup_bytes;		/* poll watermark, see memmon_ring_commit() */
	u16 cpu;			/* hdr.cpu of the LOST records */
	bool overwrite;			/* MEMMON_FULL_OVERWRITE */
};

/**
 * memmon_ring_init() - set up a ring over memory allocated by the caller
 * @r: the ring
 * @page: the producer page (user-mapped read-only); reset to zero here
 * @consumer_pos: this ring's word in the consumer area; reset to zero here
 * @data: @size bytes followed by the same @size bytes mapped again
 * @size: data bytes, a power of two, at least one page
 * @wakeup_bytes: wake the readers each time the producer passes this many
 *	more bytes (0: at every publish)
 * @cpu: the CPU that owns the ring
 *
 * Context: any, before the ring is mapped to userspace or written to (the
 * resets would race with either otherwise).
 */
static inline void memmon_ring_init(struct memmon_ring *r,
				    struct memmon_ring_page *page,
				    u64 *consumer_pos, u8 *data, u64 size,
				    u64 wakeup_bytes, u16 cpu)
{
	local_set(&r->head, 0);
	local_set(&r->nest, 0);
	local_set(&r->produced, 0);
	local_set(&r->delivered, 0);
	local_set(&r->lost, 0);
	local_set(&r->bytes, 0);
	local_set(&r->lost_pending, 0);
	r->lost_first_ns = 0;
	r->lost_last_ns = 0;
	r->wakeup_next = wakeup_bytes;
	r->tail = 0;
	r->overwritten = 0;
	r->overwrite = false;
	r->page = page;
	r->consumer_pos = consumer_pos;
	r->data = data;
	r->size = size;
	r->wakeup_bytes = wakeup_bytes;
	r->cpu = cpu;

	WRITE_ONCE(page->producer_pos, 0);
	WRITE_ONCE(page->stats.produced, 0);
	WRITE_ONCE(page->stats.delivered, 0);
	WRITE_ONCE(page->stats.lost, 0);
	WRITE_ONCE(page->stats.bytes, 0);
	WRITE_ONCE(page->lost_pending, 0);
	WRITE_ONCE(page->tail_pos, 0);
	WRITE_ONCE(page->overwritten, 0);
	WRITE_ONCE(*consumer_pos, 0);
}

/*
 * memmon_ring_set_overwrite() - make a ring keep its newest records
 * Context: as memmon_ring_init(), after it.
 */
static inline void memmon_ring_set_overwrite(struct memmon_ring *r)
{
	r->overwrite = true;
}

/*
 * Leave a writer's section: drop our count on @nest and, if we were the
 * outermost writer, publish everything reserved so far. Returns true when the
 * published position passed wakeup_next.
 *
 * Only compiler ordering matters between the local ops below: the other
 * party is an interrupt on this same CPU, which sees our program order.
 */
static __always_inline bool __memmon_ring_put(struct memmon_ring *r)
{
	struct memmon_ring_page *pg = r->page;
	u64 head, produced;
	bool wake = false;

	/*
	 * Nested: the writer we interrupted is still in its section, and
	 * re-reads head after we are gone, so it publishes our record.
	 */
	if (local_read(&r->nest) != 1) {
		local_dec(&r->nest);
		return false;
	}
again:
	/*
	 * From here until local_dec() we are the outermost writer: whoever
	 * interrupts us is nested and neither publishes nor touches
	 * wakeup_next, so this window owns both.
	 */
	produced = (u64)local_read(&r->produced);
	head = (u64)local_read(&r->head);
	memmon_ring_irq(r, PUT_MIRROR);
	WRITE_ONCE(pg->stats.produced, produced);
	WRITE_ONCE(pg->stats.delivered, (u64)local_read(&r->delivered));
	WRITE_ONCE(pg->stats.lost, (u64)local_read(&r->lost));
	WRITE_ONCE(pg->stats.bytes, (u64)local_read(&r->bytes));
	WRITE_ONCE(pg->lost_pending, (u64)local_read(&r->lost_pending));
	WRITE_ONCE(pg->overwritten, r->overwritten);
	/*
	 * [B], pairs with [C] in the consumer (userspace, memmon_ring_peek()
	 * callers): the records below head, ours and those of the writers
	 * nested in us, and the stats above are complete before
	 * producer_pos says so.
	 */
	smp_store_release(&pg->producer_pos, head);
	if (head >= r->wakeup_next) {
		r->wakeup_next = head + r->wakeup_bytes;
		wake = true;
	}
	memmon_ring_irq(r, PUT_DEC);
	barrier();
	local_dec(&r->nest);
	barrier();
	memmon_ring_irq(r, PUT_RECHECK);
	/*
	 * A writer nested in us after our reads of head/produced has finished
	 * but is not published (its put saw nest == 2), or its drop is not
	 * mirrored. One that came after local_dec() published itself, but a
	 * second pass is harmless: it re-reads head, so it never goes back.
	 */
	if (unlikely(head != (u64)local_read(&r->head) ||
		     produced != (u64)local_read(&r->produced))) {
		local_inc(&r->nest);
		barrier();
		goto again;
	}
	return wake;
}

/*
 * Write the LOST record of everything pending at @pos, claimed already by
 * the outermost writer (the only one that reports: nobody else subtracts,
 * so what it reads is >= 1 and stays its to report).
 */
static __always_inline void __memmon_ring_write_lost(struct memmon_ring *r,
						     u64 pos, u64 now_ns)
{
	struct memmon_rec_lost *lr = (void *)(r->data + (pos & (r->size - 1)));
	u64 n, first, last;

	memmon_ring_irq(r, RESERVE_LOST);
	n = (u64)local_read(&r->lost_pending);
	first = READ_ONCE(r->lost_first_ns);
	last = READ_ONCE(r->lost_last_ns);
	memmon_ring_irq(r, RESERVE_LOST_TAKE);
	/*
	 * Subtract what we report, not reset: a drop nested since our read
	 * stays pending. Its time is the best first_ns we have.
	 */
	if (local_sub_return(n, &r->lost_pending))
		WRITE_ONCE(r->lost_first_ns, READ_ONCE(r->lost_last_ns));

	lr->hdr.size = sizeof(*lr);
	lr->hdr.type = MEMMON_REC_LOST;
	lr->hdr.cpu = r->cpu;
	lr->hdr.time_ns = now_ns;
	lr->hdr.tgid = 0;
	lr->hdr.tid = 0;
	lr->count = n;
	lr->first_ns = first;
	lr->last_ns = last;
}

/*
 * Is there room for @need bytes at @head? With DROP_NEW, below the
 * consumer ([A]); with OVERWRITE, above tail, which the outermost writer
 * moves over whole published records to make the room.
 */
static __always_inline bool __memmon_ring_room(struct memmon_ring *r, u64 pub,
					       u64 head, u64 need)
{
	const struct memmon_rec_header *h;
	u64 tail, cons;
	u32 len;

	if (!r->overwrite) {
		/*
		 * [A], pairs with [D] in the consumer: once we see its
		 * position, it is done reading what lies below it, so our
		 * stores into that space cannot reach it early.
		 */
		cons = smp_load_acquire(r->consumer_pos);
		/*
		 * Never trust cons. Outside [pub - size, pub] it is hostile
		 * (or a consumer claiming records not yet published), and the
		 * first test, unsigned, catches both sides. Inside, we have
		 * cons <= pub <= head, so head - cons cannot wrap, and the
		 * claim [head, head + need) overlaps neither unread records
		 * nor the space nested writers are still filling.
		 */
		return pub - cons <= r->size && head - cons <= r->size - need;
	}
	/* tail <= pub <= head: only published records are ever passed. */
	tail = READ_ONCE(r->tail);
	if (head - tail <= r->size - need)
		return true;
	if (local_read(&r->nest) != 1)
		return false;
	/*
	 * What the consumer says it has read was delivered: passing it is no
	 * loss. Untrusted, it decides only this session's own counts; outside
	 * [tail, pub] it is ignored and every event passed counts lost.
	 */
	cons = READ_ONCE(*r->consumer_pos);
	if (cons - tail > pub - tail)
		cons = tail;
	do {
		if (tail >= pub)
			return false;	/* the rest is being written */
		h = (const void *)(r->data + (tail & (r->size - 1)));
		len = READ_ONCE(h->size);
		/* Ours and published: a bad size is a bug; drop, move nothing. */
		if (unlikely(!memmon_rec_frame_ok(len, pub - tail)))
			return false;
		if (tail < cons) {
			/* Read already: neither lost nor unreported. */
		} else if (READ_ONCE(h->type) != MEMMON_REC_LOST) {
			local_dec(&r->delivered);
			local_inc(&r->lost);
			local_sub(len, &r->bytes);
			r->overwritten++;
		} else {
			/* Counted lost when dropped; now its report is gone. */
			r->overwritten += READ_ONCE(((const struct memmon_rec_lost *)h)->count);
		}
		tail += len;
	} while (head - tail > r->size - need);
	WRITE_ONCE(r->page->tail_pos, tail);
	/*
	 * [F], pairs with [G] in the reader: the new tail is visible before
	 * any store into the space it releases, ours or a nested writer's
	 * (which can only use that space once it sees the tail below).
	 */
	smp_wmb();
	WRITE_ONCE(r->tail, tail);
	return true;
}

/**
 * memmon_ring_reserve() - claim room for one record on this CPU's ring
 * @r: the ring of the current CPU
 * @size: bytes of the record, header included: a multiple of
 *	MEMMON_REC_ALIGN, at least sizeof(struct memmon_rec_header)
 * @now_ns: the event's time (for the LOST bookkeeping if it is dropped)
 * @wake: out: true when NULL is returned and the readers should be woken
 *	(first loss since the last LOST record, or the drop published records
 *	of nested writers past the watermark); false otherwise. On success the
 *	wakeup decision is memmon_ring_commit()'s.
 *
 * Counts the event as produced. If a loss is pending and this is the
 * outermost writer, writes the LOST record first, in the same claim; the
 * returned space follows it.
 *
 * Dropped (NULL, counted lost, LOST record pending): no room below the
 * consumer, no room for the pending LOST record together with the event, a
 * consumer_pos outside [producer_pos - size, producer_pos], or a @size that
 * can never fit (larger than the ring, or malformed). A record larger than
 * size - sizeof(struct memmon_rec_lost) is delivered only while no loss is
 * pending. A NULL return has already left the section: no commit.
 *
 * Context: preemption disabled, on r->cpu; task, softirq, IRQ or NMI, nested
 * in another writer of this ring on this CPU or not. Each successful reserve
 * must be followed by memmon_ring_commit() on the same CPU, innermost first.
 * Pairs with: [D] in the consumer through [A] here.
 *
 * Return: where to write the record (contiguous, @size bytes), or NULL.
 */
static __always_inline void *memmon_ring_reserve(struct memmon_ring *r,
						 u32 size, u64 now_ns,
						 bool *wake)
{
	u64 pub, head, need, pos;
	bool report;

	*wake = false;
	memmon_ring_irq(r, RESERVE_ENTRY);
	local_inc(&r->nest);
	barrier();
	/*
	 * After nest: a writer interrupting us now cannot publish, so no
	 * mirror ever shows this event produced but neither delivered nor lost.
	 */
	local_inc(&r->produced);
	memmon_ring_irq(r, RESERVE_NESTED);

	if (unlikely(size < sizeof(struct memmon_rec_header) ||
		     size % MEMMON_REC_ALIGN || size > r->size))
		goto drop;

	/* Only the outermost writer reports: see "Losses" at the top. */
	report = local_read(&r->lost_pending) && local_read(&r->nest) == 1;
	need = size + (report ? sizeof(struct memmon_rec_lost) : 0);
	if (unlikely(need > r->size))
		goto drop;

	do {
		/* Ours, trusted. Read before head, so pub <= head. */
		pub = READ_ONCE(r->page->producer_pos);
		head = (u64)local_read(&r->head);
		if (!__memmon_ring_room(r, pub, head, need))
			goto drop;
		memmon_ring_irq(r, RESERVE_CLAIM);
	} while ((u64)local_cmpxchg(&r->head, head, head + need) != head);
	/* The record stores below must not be hoisted above the claim. */
	barrier();

	pos = head;
	if (report) {
		__memmon_ring_write_lost(r, pos, now_ns);
		pos += sizeof(struct memmon_rec_lost);
	}
	local_inc(&r->delivered);
	local_add(size, &r->bytes);
	return r->data + (pos & (r->size - 1));

drop:
	local_inc(&r->lost);
	if (local_inc_return(&r->lost_pending) == 1) {
		WRITE_ONCE(r->lost_first_ns, now_ns);
		*wake = true;	/* poll() is readable on lost_pending != 0 */
	}
	WRITE_ONCE(r->lost_last_ns, now_ns);
	/*
	 * Leave the section like a commit would: a writer nested in us may
	 * have reserved and committed, and only we can publish it now.
	 */
	if (__memmon_ring_put(r))
		*wake = true;
	return NULL;
}

/**
 * memmon_ring_commit() - finish a record returned by memmon_ring_reserve()
 * @r: the ring it was reserved on
 * @rec: the record, completely written (header included)
 *
 * Leaves the writer's section. The outermost writer publishes producer_pos
 * ([B]) covering its record and those of all writers nested in it; a nested
 * writer's record is published by the writer it interrupted.
 *
 * Context: the same CPU and nesting level as the matching reserve, with
 * preemption still disabled; records nested in this one already committed.
 * Pairs with: [C] in the consumer through [B] here.
 *
 * Return: true if the readers should be woken: the published position passed
 * the next multiple of wakeup_bytes beyond the previous wakeup. Never wake up
 * from here directly (NMI, scheduler locks): defer, e.g. irq_work_queue(),
 * which is [E].
 */
static __always_inline bool memmon_ring_commit(struct memmon_ring *r, void *rec)
{
	/* Commits come innermost first: the position needs no lookup. */
	(void)rec;
	return __memmon_ring_put(r);
}

/**
 * memmon_ring_flush_lost() - write the pending LOST record with no event
 * @r: the ring of the current CPU
 * @now_ns: the LOST record's time
 *
 * A loss is reported by the next event that finds room (see "Losses"); at
 * the end of a recording there is no next event, and without this the
 * count would stay in lost_pending, outside the stream. Writes the LOST
 * record alone if a loss is pending, we are the outermost writer and it
 * fits; otherwise leaves it pending. Counts no event (produced and
 * delivered are untouched: a LOST record is not one).
 *
 * Context: as memmon_ring_reserve(). Pairs with: [D] through [A] here, [C]
 * through [B] in the put.
 * Return: true if the readers should be woken (as memmon_ring_commit()).
 */
static inline bool memmon_ring_flush_lost(struct memmon_ring *r, u64 now_ns)
{
	const u64 need = sizeof(struct memmon_rec_lost);
	u64 pub, head;

	local_inc(&r->nest);
	barrier();
	if (!local_read(&r->lost_pending) || local_read(&r->nest) != 1)
		goto out;
	do {
		/* The checks of memmon_ring_reserve(), for need. */
		pub = READ_ONCE(r->page->producer_pos);
		head = (u64)local_read(&r->head);
		if (!__memmon_ring_room(r, pub, head, need))
			goto out;
	} while ((u64)local_cmpxchg(&r->head, head, head + need) != head);
	barrier();
	__memmon_ring_write_lost(r, head, now_ns);
out:
	return __memmon_ring_put(r);
}

/* enum memmon_peek: what memmon_ring_peek() found. */
enum memmon_peek {
	MEMMON_PEEK_EMPTY,	/* nothing to read: cons == prod */
	MEMMON_PEEK_RECORD,	/* *rec is a complete record of *size bytes */
	MEMMON_PEEK_BAD,	/* cons or the record there is invalid: resync */
};

/**
 * memmon_ring_peek() - validate the next record for a consumer
 * @r: the ring (only data and size are used)
 * @cons: the consumer position (untrusted)
 * @prod: the producer position, read with [C] (smp_load_acquire())
 * @rec: out: the record, valid when MEMMON_PEEK_RECORD is returned
 * @size: out: its size, read once; copy exactly this many bytes and advance
 *	cons by it, never by a second read of (*rec)->size
 *
 * MEMMON_PEEK_BAD when cons is not within [prod - size, prod] or not
 * aligned, or memmon_rec_check() refuses the record at cons, either verdict:
 * every record this ring holds was written by the producer from its struct,
 * so one that fails means cons is not a record boundary (a hostile
 * consumer_pos) and no length from there on is to be trusted. The caller
 * resyncs (e.g. cons = prod, delivering nothing) rather than trusting
 * anything at cons. Whatever cons is, nothing outside data[0, 2 * size) is
 * read.
 *
 * Context: any; the caller serialises consumers of one ring. Pairs with: [B]
 * via the caller's [C]; after copying, the caller stores the new position
 * with [D].
 *
 * Return: enum memmon_peek.
 */
static inline enum memmon_peek memmon_ring_peek(const struct memmon_ring *r,
						u64 cons, u64 prod,
						const struct memmon_rec_header **rec,
						u32 *size)
{
	const struct memmon_rec_header *hdr;
	u64 avail = prod - cons;
	u32 len;

	if (avail > r->size || cons % MEMMON_REC_ALIGN)
		return MEMMON_PEEK_BAD;
	if (!avail)
		return MEMMON_PEEK_EMPTY;
	hdr = (const void *)(r->data + (cons & (r->size - 1)));
	if (memmon_rec_check(hdr, avail, &len) != MEMMON_REC_OK)
		return MEMMON_PEEK_BAD;
	*rec = hdr;
	*size = len;
	return MEMMON_PEEK_RECORD;
}

/*
 * An in-kernel consumer of one ring (read() and /proc/memmon/events): the
 * cursor holds the positions and the barriers, the caller decides what to
 * do with each record.
 *
 *	memmon_ring_cursor_begin(&c, r);
 *	while (memmon_ring_cursor_next(&c, &rec, &size)) {
 *		if (!use(rec, size))		// e.g. out of room: stop here
 *			break;
 *		memmon_ring_cursor_advance(&c, size);
 *	}
 *	... [c.start, c.cons) is what was used, contiguous in the double
 *	    mapping; finish with it (copy it out) before ...
 *	memmon_ring_cursor_end(&c);		// publishes c.cons with [D]
 *
 * Context: the caller serialises the consumers of one ring (the session's
 * read_lock); any context otherwise.
 */
struct memmon_ring_cursor {
	struct memmon_ring *r;
	u64 prod;		/* producer_pos, read with [C] at begin */
	u64 start;		/* consumer_pos at begin */
	u64 cons;		/* past the last record advanced over */
	enum memmon_peek st;	/* what the last _next() found */
};

static inline void memmon_ring_cursor_begin(struct memmon_ring_cursor *c,
					    struct memmon_ring *r)
{
	c->r = r;
	/* [C], pairs with [B] in __memmon_ring_put(). */
	c->prod = smp_load_acquire(&r->page->producer_pos);
	/*
	 * consumer_pos is user-mappable (and writable through mmap): read it
	 * once here; memmon_ring_peek() validates every use of it.
	 */
	c->cons = READ_ONCE(*r->consumer_pos);
	c->start = c->cons;
	c->st = MEMMON_PEEK_EMPTY;
}

/* The next record, not yet consumed: true and *rec, *size, or false. */
static inline bool memmon_ring_cursor_next(struct memmon_ring_cursor *c,
					   const struct memmon_rec_header **rec,
					   u32 *size)
{
	c->st = memmon_ring_peek(c->r, c->cons, c->prod, rec, size);
	return c->st == MEMMON_PEEK_RECORD;
}

/* Consume the record _next() returned: @size is its *size, read once. */
static inline void memmon_ring_cursor_advance(struct memmon_ring_cursor *c,
					      u32 size)
{
	c->cons += size;
}

/*
 * Publish the new consumer position. A hostile or corrupt position or
 * record (MEMMON_PEEK_BAD) skips to what the producer published: nothing
 * past the last good record is trusted.
 */
static inline void memmon_ring_cursor_end(struct memmon_ring_cursor *c)
{
	if (c->st == MEMMON_PEEK_BAD)
		c->cons = c->prod;
	if (c->cons != c->start) {
		/* [D], pairs with [A] in memmon_ring_reserve(). */
		smp_store_release(c->r->consumer_pos, c->cons);
	}
}

#endif /* MEMMON_DRIVER_TRANSPORT_RING_H */
