// SPDX-License-Identifier: GPL-2.0
/*
 * test_ring.c - driver/transport/ring.h on the host.
 *
 * The data pages are really mapped twice (kshim_ring_map(): a memfd, guard
 * pages around), so wrapping records exercise the aliasing the kernel's vmap
 * gives, and any access outside the ring faults. Built with
 * -fsanitize=address,undefined.
 *
 * Interrupts are simulated through the memmon_ring_irq() hook ring.h calls at
 * its interesting points: a test arms one point and the hook runs a complete
 * nested writer there, as an IRQ on the producer's CPU could. The hook also
 * checks, at every point of every call, that producer_pos never goes back.
 *
 * Every event carries a sequence number (hdr.tgid/tid) and a byte pattern
 * derived from it. drain() checks each record it consumes and, unless a test
 * turns it off, that sequence numbers follow each other except across LOST
 * records whose counts account exactly for the gap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

enum irq_point {
	IRQ_NONE,
	IRQ_RESERVE_ENTRY,	/* reserve: before the writer takes nest */
	IRQ_RESERVE_NESTED,	/* reserve: nest taken, before the claim */
	IRQ_RESERVE_CLAIM,	/* reserve: space checked, before the cmpxchg */
	IRQ_RESERVE_LOST,	/* reserve: claimed, before reading lost_pending */
	IRQ_RESERVE_LOST_TAKE,	/* reserve: count read, before subtracting it */
	IRQ_PUT_MIRROR,		/* put: head read, before mirror and [B] */
	IRQ_PUT_DEC,		/* put: published, before nest-- */
	IRQ_PUT_RECHECK,	/* put: after nest--, before re-reading head */
};

struct memmon_ring;
static void test_irq(struct memmon_ring *r, enum irq_point at);
#define memmon_ring_irq(r, point) test_irq((r), IRQ_##point)

#include "ring.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define RING		4096u
#define CPU		3
#define TEST_REC	0x7e01	/* a record type no real writer uses */
#define LOST_SIZE	((u32)sizeof(struct memmon_rec_lost))

struct fx {
	struct memmon_ring r;
	struct memmon_ring_page *page;
	u64 *cons;		/* the ring's word of the consumer area */
	u8 *data;
	u64 size;
	u64 seq;		/* sequence number of the next event */
	/* The consumer's model. */
	u64 rd;			/* our position; stored into *cons by drain() */
	u64 lost_seen;		/* sum of the LOST counts consumed */
	u64 events_seen;
	u64 next_seq;		/* what the next event must carry */
	bool seq_check;
	u64 ow_kept;		/* overwrite: events ow_read() delivered */
};

/* One consumed record, as drain() saw it. */
struct seen {
	u64 pos;
	u32 size;
	u16 type;
	u64 seq;		/* events */
	u64 time;
	u64 count, first, last;	/* LOST records */
};

static struct {
	enum irq_point at;	/* armed point, IRQ_NONE when disarmed */
	struct fx *f;
	u32 size;		/* the nested writer's event */
	u64 now;
	int fired;
	bool ok;		/* its event was delivered */
	bool wake;
	u64 last_pub;		/* producer_pos seen at the previous point */
} irq;

static u8 pattern(u64 seq, u32 i)
{
	return (u8)(seq * 131 + i * 7 + 1);
}

static struct fx *fx_new(u64 size, u64 wakeup_bytes)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(f->page != MAP_FAILED);
	f->cons = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(f->cons != MAP_FAILED);
	f->data = kshim_ring_map(size);
	assert_non_null(f->data);
	/* Garbage everywhere: init must reset what it owns. */
	memset(f->page, 0xa5, sizeof(*f->page));
	*f->cons = 0xdeadbeefdeadbeefULL;
	memset(f->data, 0xcc, size);
	f->size = size;
	f->seq_check = true;
	memmon_ring_init(&f->r, f->page, f->cons, f->data, size, wakeup_bytes, CPU);
	memset(&irq, 0, sizeof(irq));
	irq.f = f;
	return f;
}

static void fx_free(struct fx *f)
{
	kshim_ring_unmap(f->data, f->size);
	munmap(f->page, 4096);
	munmap(f->cons, 4096);
	free(f);
}

static void fill_event(void *p, u32 size, u64 seq, u64 now)
{
	struct memmon_rec_header *h = p;
	u8 *b = p;
	u32 i;

	h->size = size;
	h->type = TEST_REC;
	h->cpu = CPU;
	h->time_ns = now;
	h->tgid = (u32)seq;
	h->tid = (u32)(seq >> 32);
	for (i = sizeof(*h); i < size; i++)
		b[i] = pattern(seq, i);
}

/* Reserve an event (numbered), fill it; NULL if dropped. */
static void *reserve_ev(struct fx *f, u32 size, u64 now, bool *wake)
{
	u64 seq = f->seq++;
	void *p = memmon_ring_reserve(&f->r, size, now, wake);

	if (p) {
		/* Success leaves the wakeup decision to the commit. */
		assert_false(*wake);
		fill_event(p, size, seq, now);
	}
	return p;
}

/* A whole event: reserve, fill, commit. @wake (may be NULL) gets either's. */
static bool emit(struct fx *f, u32 size, u64 now, bool *wake)
{
	bool w;
	void *p = reserve_ev(f, size, now, &w);

	if (p)
		w = memmon_ring_commit(&f->r, p);
	if (wake)
		*wake = w;
	return p;
}

static u64 prod_pos(struct fx *f)
{
	return __atomic_load_n(&f->page->producer_pos, __ATOMIC_ACQUIRE);	/* [C] */
}

static void check_record(struct fx *f, const struct memmon_rec_header *h,
			 u32 len, struct seen *s)
{
	const u8 *b = (const u8 *)h;
	u64 seq;
	u32 i;

	assert_ptr_equal(b, f->data + (f->rd & (f->size - 1)));
	assert_int_equal(h->size, len);
	assert_int_equal(h->cpu, CPU);
	if (s) {
		memset(s, 0, sizeof(*s));
		s->pos = f->rd;
		s->size = len;
		s->type = h->type;
		s->time = h->time_ns;
	}
	if (h->type == MEMMON_REC_LOST) {
		const struct memmon_rec_lost *l = (const void *)h;

		assert_int_equal(len, LOST_SIZE);
		assert_int_equal(h->tgid, 0);
		assert_int_equal(h->tid, 0);
		assert_true(l->count >= 1);
		assert_true(l->first_ns <= l->last_ns);
		f->lost_seen += l->count;
		f->next_seq += l->count;
		if (s) {
			s->count = l->count;
			s->first = l->first_ns;
			s->last = l->last_ns;
		}
		return;
	}
	assert_int_equal(h->type, TEST_REC);
	seq = h->tgid | (u64)h->tid << 32;
	for (i = sizeof(*h); i < len; i++)
		assert_int_equal(b[i], pattern(seq, i));
	if (f->seq_check)
		assert_int_equal(seq, f->next_seq);
	f->next_seq = seq + 1;
	f->events_seen++;
	if (s)
		s->seq = seq;
}

/* Consume up to @max records as userspace does: [C], records, [D]. */
static unsigned int drain(struct fx *f, struct seen *out, unsigned int max)
{
	const struct memmon_rec_header *h;
	u64 prod = prod_pos(f);
	unsigned int n = 0;
	u32 len;

	while (n < max) {
		enum memmon_peek st = memmon_ring_peek(&f->r, f->rd, prod, &h, &len);

		if (st == MEMMON_PEEK_EMPTY)
			break;
		assert_int_equal(st, MEMMON_PEEK_RECORD);
		check_record(f, h, len, out ? &out[n] : NULL);
		f->rd += len;
		n++;
	}
	__atomic_store_n(f->cons, f->rd, __ATOMIC_RELEASE);	/* [D] */
	return n;
}

#define DRAIN_ALL(f) drain((f), NULL, ~0u)

/* Sum of the LOST counts published but not consumed yet. */
static u64 scan_lost(struct fx *f)
{
	const struct memmon_rec_header *h;
	u64 pos = f->rd, prod = prod_pos(f), sum = 0;
	u32 len;

	while (memmon_ring_peek(&f->r, pos, prod, &h, &len) == MEMMON_PEEK_RECORD) {
		if (h->type == MEMMON_REC_LOST)
			sum += ((const struct memmon_rec_lost *)h)->count;
		pos += len;
	}
	assert_int_equal(pos, prod);
	return sum;
}

/* What must hold whenever no writer is in progress. */
static void check_invariants(struct fx *f)
{
	struct memmon_ring_page *pg = f->page;
	struct memmon_ring *r = &f->r;

	assert_int_equal(local_read(&r->nest), 0);
	assert_int_equal(pg->producer_pos, local_read(&r->head));
	assert_int_equal(pg->stats.produced, local_read(&r->produced));
	assert_int_equal(pg->stats.delivered, local_read(&r->delivered));
	assert_int_equal(pg->stats.lost, local_read(&r->lost));
	assert_int_equal(pg->stats.bytes, local_read(&r->bytes));
	assert_int_equal(pg->lost_pending, local_read(&r->lost_pending));
	assert_int_equal(pg->stats.produced, f->seq);
	assert_int_equal(pg->stats.produced, pg->stats.delivered + pg->stats.lost);
	assert_int_equal(pg->stats.lost, f->lost_seen + scan_lost(f) + pg->lost_pending);
}

static void test_irq(struct memmon_ring *r, enum irq_point at)
{
	u64 pub = r->page->producer_pos;

	/* producer_pos never goes back, whoever interrupts whom. */
	assert_true(pub >= irq.last_pub);
	irq.last_pub = pub;
	if (at != irq.at)
		return;
	irq.at = IRQ_NONE;
	irq.fired++;
	irq.ok = emit(irq.f, irq.size, irq.now, &irq.wake);
	assert_true(r->page->producer_pos >= irq.last_pub);
	irq.last_pub = r->page->producer_pos;
	/* If it published, it published a consistent state. */
	assert_int_equal(r->page->stats.produced,
			 r->page->stats.delivered + r->page->stats.lost);
}

/* Fill the ring up to @used bytes with 64-byte events, consumer at 0. */
static void prefill(struct fx *f, u64 used)
{
	u64 i;

	for (i = 0; i < used / 64; i++)
		assert_true(emit(f, 64, 10 + i, NULL));
	assert_int_equal(prod_pos(f), used);
}

/* ---------------------------------------------------------------------- */

static void test_init_empty(void **state)
{
	struct fx *f = fx_new(RING, 1024);
	const struct memmon_rec_header *h;
	u32 len;

	(void)state;
	assert_int_equal(f->page->producer_pos, 0);
	assert_int_equal(f->page->stats.produced, 0);
	assert_int_equal(f->page->stats.delivered, 0);
	assert_int_equal(f->page->stats.lost, 0);
	assert_int_equal(f->page->stats.bytes, 0);
	assert_int_equal(f->page->lost_pending, 0);
	assert_int_equal(*f->cons, 0);
	assert_int_equal(memmon_ring_peek(&f->r, 0, 0, &h, &len), MEMMON_PEEK_EMPTY);
	assert_int_equal(DRAIN_ALL(f), 0);
	check_invariants(f);
	fx_free(f);
}

static void test_single_record(void **state)
{
	struct fx *f = fx_new(RING, 1024);
	const struct memmon_rec_header *h;
	struct seen s;
	bool wake;
	void *p;
	u32 len;

	(void)state;
	p = reserve_ev(f, 32, 100, &wake);
	assert_ptr_equal(p, f->data);
	/* Reserved is not published. */
	assert_int_equal(f->page->producer_pos, 0);
	assert_int_equal(memmon_ring_peek(&f->r, 0, prod_pos(f), &h, &len),
			 MEMMON_PEEK_EMPTY);
	assert_false(memmon_ring_commit(&f->r, p));
	assert_int_equal(f->page->producer_pos, 32);
	assert_int_equal(f->page->stats.produced, 1);
	assert_int_equal(f->page->stats.delivered, 1);
	assert_int_equal(f->page->stats.lost, 0);
	assert_int_equal(f->page->stats.bytes, 32);
	assert_int_equal(drain(f, &s, ~0u), 1);
	assert_int_equal(s.pos, 0);
	assert_int_equal(s.size, 32);
	assert_int_equal(s.seq, 0);
	assert_int_equal(s.time, 100);
	check_invariants(f);
	fx_free(f);
}

static void test_wraparound(void **state)
{
	struct fx *f = fx_new(RING, 1024);
	unsigned int i, straddled = 0;

	(void)state;
	/* 56 does not divide 4096: records start everywhere, many wrap. */
	for (i = 0; i < 500; i++) {
		u64 pos = f->page->producer_pos, off = pos & (RING - 1);
		u8 *rec = f->data + off;

		assert_true(emit(f, 56, i, NULL));
		if (off + 56 > RING) {
			u64 head = RING - off, tail = 56 - head;
			u8 copy[56];

			/* Written through the alias, visible at the start. */
			memcpy(copy, rec, head);
			memcpy(copy + head, f->data, tail);
			assert_memory_equal(copy, rec, 56);
			straddled++;
		}
		assert_int_equal(DRAIN_ALL(f), 1);
	}
	assert_true(straddled >= 5);
	assert_int_equal(f->events_seen, 500);
	check_invariants(f);
	fx_free(f);
}

static void test_exact_fit(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);
	bool wake;

	(void)state;
	prefill(f, RING);
	assert_int_equal(f->page->stats.delivered, RING / 64);
	/* Completely full: one more is lost; the first loss wakes. */
	assert_false(emit(f, 64, 1000, &wake));
	assert_true(wake);
	assert_false(emit(f, 8 * 3, 1001, &wake));
	assert_false(wake);
	assert_int_equal(f->page->producer_pos, RING);
	assert_int_equal(f->page->stats.lost, 2);
	assert_int_equal(f->page->lost_pending, 2);
	check_invariants(f);
	/* The records already there are intact (drain checks each). */
	assert_int_equal(DRAIN_ALL(f), RING / 64);
	check_invariants(f);
	fx_free(f);
}

static void test_lost_record(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);
	struct seen s[4];

	(void)state;
	prefill(f, RING);
	assert_false(emit(f, 64, 100, NULL));
	assert_false(emit(f, 64, 200, NULL));
	assert_false(emit(f, 64, 300, NULL));
	assert_int_equal(DRAIN_ALL(f), RING / 64);
	assert_int_equal(f->page->lost_pending, 3);
	check_invariants(f);

	assert_true(emit(f, 64, 400, NULL));
	assert_int_equal(f->page->lost_pending, 0);
	assert_int_equal(f->page->producer_pos, RING + LOST_SIZE + 64);
	assert_true(emit(f, 64, 500, NULL));
	assert_int_equal(drain(f, s, 4), 3);
	/* LOST first, exact count and times; then the events, no second LOST. */
	assert_int_equal(s[0].type, MEMMON_REC_LOST);
	assert_int_equal(s[0].pos, RING);
	assert_int_equal(s[0].count, 3);
	assert_int_equal(s[0].first, 100);
	assert_int_equal(s[0].last, 300);
	assert_int_equal(s[0].time, 400);
	assert_int_equal(s[1].type, TEST_REC);
	assert_int_equal(s[1].time, 400);
	assert_int_equal(s[2].type, TEST_REC);
	assert_int_equal(s[2].time, 500);
	assert_int_equal(f->page->stats.produced, RING / 64 + 5);
	assert_int_equal(f->page->stats.delivered, RING / 64 + 2);
	assert_int_equal(f->page->stats.lost, 3);
	assert_int_equal(f->page->stats.bytes, RING + 128);
	check_invariants(f);
	fx_free(f);
}

/*
 * memmon_ring_flush_lost(): the pending loss reaches the stream with no
 * event after it, once there is room; nothing pending, nothing written; no
 * event counted.
 */
static void test_flush_lost(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);
	struct seen s[2];

	(void)state;
	assert_false(memmon_ring_flush_lost(&f->r, 50));
	assert_int_equal(f->page->producer_pos, 0);
	prefill(f, RING);
	assert_false(emit(f, 64, 100, NULL));
	assert_false(emit(f, 64, 200, NULL));
	/* Full: the flush finds no room, the loss stays pending. */
	memmon_ring_flush_lost(&f->r, 250);
	assert_int_equal(f->page->producer_pos, RING);
	assert_int_equal(f->page->lost_pending, 2);
	assert_int_equal(DRAIN_ALL(f), RING / 64);
	memmon_ring_flush_lost(&f->r, 300);
	assert_int_equal(f->page->lost_pending, 0);
	assert_int_equal(f->page->producer_pos, RING + LOST_SIZE);
	assert_int_equal(drain(f, s, 2), 1);
	assert_int_equal(s[0].type, MEMMON_REC_LOST);
	assert_int_equal(s[0].count, 2);
	assert_int_equal(s[0].first, 100);
	assert_int_equal(s[0].last, 200);
	assert_int_equal(s[0].time, 300);
	assert_int_equal(f->page->stats.produced, RING / 64 + 2);
	assert_int_equal(f->page->stats.delivered, RING / 64);
	assert_int_equal(f->page->stats.lost, 2);
	/* Nothing pending now: a second flush writes nothing. */
	memmon_ring_flush_lost(&f->r, 400);
	assert_int_equal(f->page->producer_pos, RING + LOST_SIZE);
	check_invariants(f);
	fx_free(f);
}

static void test_lost_needs_room_for_both(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);
	struct seen s[2];

	(void)state;
	prefill(f, RING);
	assert_false(emit(f, 64, 100, NULL));
	/* 64 bytes free: the event alone would fit, not with its LOST. */
	assert_int_equal(drain(f, NULL, 1), 1);
	assert_false(emit(f, 64, 200, NULL));
	assert_int_equal(f->page->producer_pos, RING);
	check_invariants(f);
	/* 128 free: both fit. */
	assert_int_equal(drain(f, NULL, 1), 1);
	assert_true(emit(f, 64, 300, NULL));
	assert_int_equal(f->page->producer_pos, RING + LOST_SIZE + 64);
	assert_int_equal(drain(f, NULL, RING / 64 - 2), RING / 64 - 2);
	assert_int_equal(drain(f, s, 2), 2);
	assert_int_equal(s[0].count, 2);
	assert_int_equal(s[0].first, 100);
	assert_int_equal(s[0].last, 200);
	check_invariants(f);
	fx_free(f);
}

static void test_whole_ring_record(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);

	(void)state;
	assert_true(emit(f, RING, 1, NULL));
	assert_int_equal(f->page->producer_pos, RING);
	assert_false(emit(f, 24, 2, NULL));
	assert_int_equal(DRAIN_ALL(f), 1);
	/* Empty again, but a loss is pending: the pair cannot fit. */
	assert_false(emit(f, RING, 3, NULL));
	assert_true(emit(f, 64, 4, NULL));
	assert_int_equal(DRAIN_ALL(f), 2);
	assert_int_equal(f->lost_seen, 2);
	check_invariants(f);
	fx_free(f);
}

/* Sizes that can never be written: dropped and counted, never written. */
static const struct bad_size {
	const char *name;
	u32 size;
} bad_sizes[] = {
	{ "0", 0 },
	{ "8 (< header)", 8 },
	{ "20 (< header)", 20 },
	{ "28 (not aligned)", 28 },
	{ "ring + 8", RING + 8 },
	{ "2 * ring", 2 * RING },
	{ "UINT32_MAX", UINT32_MAX },
};

static void test_bad_size(void **state)
{
	const struct bad_size *c = *state;
	struct fx *f = fx_new(RING, 1 << 20);
	bool wake;

	assert_false(emit(f, c->size, 7, &wake));
	assert_true(wake);
	assert_int_equal(f->page->producer_pos, 0);
	assert_int_equal(f->page->stats.lost, 1);
	assert_int_equal(f->page->lost_pending, 1);
	for (u64 i = 0; i < RING; i++)
		assert_int_equal(f->data[i], 0xcc);
	assert_true(emit(f, 64, 8, NULL));
	assert_int_equal(DRAIN_ALL(f), 2);
	assert_int_equal(f->lost_seen, 1);
	check_invariants(f);
	fx_free(f);
}

/* ---------------------------------------------------------------------- */
/* A consumer position userspace wrote, whatever it is. */

#define HOSTILE_HEAD	(1000 * 64)	/* head after the warm-up */

static const struct hostile {
	const char *name;
	bool from_head;		/* cons = head + delta, else cons = value */
	s64 delta;
	u64 value;
	bool writes;		/* the producer may still write */
	enum memmon_peek peek;	/* peek(cons, head) */
} hostile[] = {
	{ "0 with head large", false, 0, 0, false, MEMMON_PEEK_BAD },
	{ "head + 1", true, 1, 0, false, MEMMON_PEEK_BAD },
	{ "head + 8", true, 8, 0, false, MEMMON_PEEK_BAD },
	{ "head + size", true, RING, 0, false, MEMMON_PEEK_BAD },
	{ "head - size - 8", true, -(s64)RING - 8, 0, false, MEMMON_PEEK_BAD },
	{ "head - size - 3", true, -(s64)RING - 3, 0, false, MEMMON_PEEK_BAD },
	{ "UINT64_MAX", false, 0, UINT64_MAX, false, MEMMON_PEEK_BAD },
	{ "2^63", false, 0, 1ULL << 63, false, MEMMON_PEEK_BAD },
	{ "head - size (legal, full)", true, -(s64)RING, 0, false, MEMMON_PEEK_RECORD },
	{ "head - 3 (unaligned)", true, -3, 0, true, MEMMON_PEEK_BAD },
	{ "head - 64 (legal)", true, -64, 0, true, MEMMON_PEEK_RECORD },
	{ "head (legal, empty)", true, 0, 0, true, MEMMON_PEEK_EMPTY },
};

static void test_hostile_consumer(void **state)
{
	const struct hostile *c = *state;
	struct fx *f = fx_new(RING, 1 << 20);
	const struct memmon_rec_header *h;
	static u8 before[RING];
	u64 cons, head;
	unsigned int i;
	u32 len;

	for (i = 0; i < HOSTILE_HEAD / 64; i++) {
		assert_true(emit(f, 64, i, NULL));
		assert_int_equal(DRAIN_ALL(f), 1);
	}
	head = prod_pos(f);
	assert_int_equal(head, HOSTILE_HEAD);
	cons = c->from_head ? head + (u64)c->delta : c->value;
	*f->cons = cons;
	memcpy(before, f->data, RING);

	assert_int_equal(memmon_ring_peek(&f->r, cons, head, &h, &len), c->peek);
	if (c->writes) {
		assert_true(emit(f, 64, 1, NULL));
		assert_int_equal(prod_pos(f), head + 64);
	} else {
		/* Only this session's own event is lost; nothing is written. */
		assert_false(emit(f, 64, 1, NULL));
		assert_int_equal(prod_pos(f), head);
		assert_memory_equal(before, f->data, RING);
		assert_int_equal(f->page->lost_pending, 1);
	}
	check_invariants(f);

	/* A sane consumer again: the producer resumes, the loss reported. */
	*f->cons = f->rd;
	assert_true(emit(f, 64, 2, NULL));
	DRAIN_ALL(f);
	assert_int_equal(f->lost_seen, c->writes ? 0 : 1);
	check_invariants(f);
	fx_free(f);
}

/* A consumer claiming records not yet published must not let a nested
 * writer overwrite the record the interrupted writer is filling.
 */
static void test_consumer_ahead_of_published(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);
	struct seen s[2];
	bool wake;
	void *outer;

	(void)state;
	outer = reserve_ev(f, 64, 1, &wake);
	assert_non_null(outer);
	*f->cons = 64;	/* == head, beyond producer_pos (0) */
	/* Would cover [64, 64 + RING): the outer record too. */
	assert_false(emit(f, RING, 2, &wake));
	assert_false(memmon_ring_commit(&f->r, outer));
	assert_int_equal(prod_pos(f), 64);
	*f->cons = 0;
	assert_true(emit(f, 64, 3, NULL));
	assert_int_equal(drain(f, s, 2), 2);
	assert_int_equal(s[0].seq, 0);		/* intact */
	assert_int_equal(s[1].count, 1);
	assert_int_equal(DRAIN_ALL(f), 1);
	check_invariants(f);
	fx_free(f);
}

/* Every consumer position around the ring: no record outside [cons, prod],
 * no access outside the ring, the true boundaries recognised.
 */
static void test_peek_sweep(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);
	static bool boundary[RING];
	static u64 starts[1024];
	const struct memmon_rec_header *h;
	u64 prod, cons, low, bad_mid = 0;
	const u64 extreme[] = { 0, 1, 8, UINT64_MAX, UINT64_MAX - 7, 1ULL << 63 };
	unsigned int i, nr = 0;
	u32 len, size = 24;

	(void)state;
	/* Several laps of records of varied sizes, consumed as they come. */
	while (f->page->producer_pos < 5 * RING + 1000) {
		assert_true(nr < ARRAY_SIZE(starts));
		starts[nr++] = f->page->producer_pos;
		assert_true(emit(f, size, size, NULL));
		DRAIN_ALL(f);
		size = size >= 400 ? 24 : size + 40;
	}
	prod = prod_pos(f);
	low = prod - RING;
	memset(boundary, 0, sizeof(boundary));
	for (i = 0; i < nr; i++)
		if (starts[i] >= low)
			boundary[starts[i] & (RING - 1)] = true;

	for (cons = low - 64; cons <= prod + 64; cons++) {
		enum memmon_peek st = memmon_ring_peek(&f->r, cons, prod, &h, &len);
		u64 sum = 0;

		if (cons < low || cons > prod || cons % 8) {
			assert_int_equal(st, MEMMON_PEEK_BAD);
			continue;
		}
		if (cons == prod) {
			assert_int_equal(st, MEMMON_PEEK_EMPTY);
			continue;
		}
		if (boundary[cons & (RING - 1)]) {
			assert_int_equal(st, MEMMON_PEEK_RECORD);
			assert_int_equal(h->type, TEST_REC);
		}
		if (st == MEMMON_PEEK_BAD) {
			bad_mid++;
			continue;
		}
		/* Whatever it parsed mid-record stays inside [cons, prod]. */
		assert_int_equal(st, MEMMON_PEEK_RECORD);
		assert_ptr_equal(h, f->data + (cons & (RING - 1)));
		assert_true(len >= sizeof(*h) && len % 8 == 0 && len <= prod - cons);
		for (i = 0; i < len; i++)
			sum += ((const u8 *)h)[i];
		(void)sum;
	}
	assert_true(bad_mid > 0);
	for (i = 0; i < ARRAY_SIZE(extreme); i++)
		assert_int_equal(memmon_ring_peek(&f->r, extreme[i], prod, &h, &len),
				 MEMMON_PEEK_BAD);
	fx_free(f);
}

/* A record whose size field is broken (a kernel bug, a torn read). */
static const struct bad_hdr {
	const char *name;
	u32 size;
	enum memmon_peek peek;
} bad_hdrs[] = {
	{ "0", 0, MEMMON_PEEK_BAD },
	{ "8", 8, MEMMON_PEEK_BAD },
	{ "20", 20, MEMMON_PEEK_BAD },
	{ "28 (not aligned)", 28, MEMMON_PEEK_BAD },
	{ "beyond prod", 64 + 8, MEMMON_PEEK_BAD },
	{ "ring + 8", RING + 8, MEMMON_PEEK_BAD },
	{ "UINT32_MAX", UINT32_MAX, MEMMON_PEEK_BAD },
	{ "24 (control)", 24, MEMMON_PEEK_RECORD },
	{ "64 (control)", 64, MEMMON_PEEK_RECORD },
};

static void test_peek_bad_header(void **state)
{
	const struct bad_hdr *c = *state;
	struct fx *f = fx_new(RING, 1 << 20);
	const struct memmon_rec_header *h;
	u32 len;

	assert_true(emit(f, 64, 1, NULL));
	((struct memmon_rec_header *)f->data)->size = c->size;
	assert_int_equal(memmon_ring_peek(&f->r, 0, 64, &h, &len), c->peek);
	if (c->peek == MEMMON_PEEK_RECORD)
		assert_int_equal(len, c->size);
	fx_free(f);
}

/* ---------------------------------------------------------------------- */
/* Nesting */

static void test_nested_direct(void **state)
{
	struct fx *f = fx_new(RING, 1 << 20);
	void *a, *b, *c;
	struct seen s[3];
	bool wake;

	(void)state;
	/* A interrupted by B, B by C: each gets its own space, in order. */
	a = reserve_ev(f, 64, 1, &wake);
	b = reserve_ev(f, 32, 2, &wake);
	c = reserve_ev(f, 40, 3, &wake);
	assert_ptr_equal(a, f->data);
	assert_ptr_equal(b, f->data + 64);
	assert_ptr_equal(c, f->data + 96);
	assert_false(memmon_ring_commit(&f->r, c));
	assert_int_equal(f->page->producer_pos, 0);
	assert_false(memmon_ring_commit(&f->r, b));
	/* Nothing is published before the outermost writer is done. */
	assert_int_equal(f->page->producer_pos, 0);
	assert_int_equal(f->page->stats.produced, 0);
	assert_false(memmon_ring_commit(&f->r, a));
	assert_int_equal(f->page->producer_pos, 136);
	assert_int_equal(drain(f, s, 3), 3);
	assert_int_equal(s[0].seq, 0);
	assert_int_equal(s[1].seq, 1);
	assert_int_equal(s[2].seq, 2);
	check_invariants(f);
	fx_free(f);
}

/* An interrupt at each point of a writer's life. */
static const struct nest_case {
	const char *name;
	enum irq_point at;
	u64 free;		/* bytes free before the outer writer */
	bool outer_ok, inner_ok;
	bool inner_first;	/* the inner claimed first */
} nest_cases[] = {
	{ "reserve entry, before nest", IRQ_RESERVE_ENTRY, RING, true, true, true },
	{ "reserve start", IRQ_RESERVE_NESTED, RING, true, true, true },
	{ "reserve claim (cmpxchg retried)", IRQ_RESERVE_CLAIM, RING, true, true, true },
	{ "put, before mirror and [B]", IRQ_PUT_MIRROR, RING, true, true, false },
	{ "put, after [B], before nest--", IRQ_PUT_DEC, RING, true, true, false },
	{ "put, after nest--", IRQ_PUT_RECHECK, RING, true, true, false },
	{ "outer fails after an outermost irq took the room",
	  IRQ_RESERVE_ENTRY, 64, false, true, true },
	{ "outer fails after inner took the room (start)",
	  IRQ_RESERVE_NESTED, 64, false, true, true },
	{ "outer fails after inner took the room (claim)",
	  IRQ_RESERVE_CLAIM, 64, false, true, true },
	{ "inner dropped, put before mirror", IRQ_PUT_MIRROR, 64, true, false, false },
	{ "inner dropped, put before nest--", IRQ_PUT_DEC, 64, true, false, false },
	{ "inner dropped, put after nest--", IRQ_PUT_RECHECK, 64, true, false, false },
};

static void test_nest_irq(void **state)
{
	const struct nest_case *c = *state;
	struct fx *f = fx_new(RING, 1 << 20);
	u64 used = RING - c->free, outer_seq;
	unsigned int n;
	struct seen s[3];
	bool outer_ok, wake;

	prefill(f, used);
	/* Check and skip the prefill, but leave the room as it is. */
	assert_int_equal(drain(f, NULL, used / 64), used / 64);
	*f->cons = 0;
	irq.at = c->at;
	irq.size = 32;
	irq.now = 2000;
	irq.last_pub = prod_pos(f);
	outer_seq = f->seq;
	f->seq_check = !c->inner_first;
	outer_ok = emit(f, 64, 1000, &wake);
	assert_int_equal(irq.fired, 1);
	assert_int_equal(outer_ok, c->outer_ok);
	assert_int_equal(irq.ok, c->inner_ok);
	/* Whoever failed alone and first woke the readers. */
	if (!c->outer_ok)
		assert_true(wake);
	if (!c->inner_ok)
		assert_true(irq.wake);
	/* Everything claimed is published once nobody writes. */
	assert_int_equal(prod_pos(f), used + (c->outer_ok ? 64 : 0) + (c->inner_ok ? 32 : 0));
	*f->cons = used;
	n = drain(f, s, 3);
	assert_int_equal(n, c->outer_ok + c->inner_ok);
	if (c->outer_ok && c->inner_ok) {
		assert_int_equal(s[0].seq, c->inner_first ? outer_seq + 1 : outer_seq);
		assert_int_equal(s[1].seq, c->inner_first ? outer_seq : outer_seq + 1);
	} else {
		assert_int_equal(s[0].seq, c->outer_ok ? outer_seq : outer_seq + 1);
	}
	check_invariants(f);
	if (c->outer_ok && c->inner_ok)
		goto out;
	/* The loss is reported before the next event. */
	f->seq_check = false;
	assert_true(emit(f, 64, 3000, NULL));
	n = drain(f, s, 3);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].type, MEMMON_REC_LOST);
	assert_int_equal(s[0].count, 1);
	assert_int_equal(s[0].first, c->outer_ok ? 2000 : 1000);
	check_invariants(f);
out:
	fx_free(f);
}

/* An interrupt while the outer writer reports a loss. */
static const struct lost_case {
	const char *name;
	enum irq_point at;
	bool inner_fits;
	u64 count;		/* in the outer's LOST record */
	u64 left;		/* lost_pending after it */
} lost_cases[] = {
	{ "drop before the count is read", IRQ_RESERVE_LOST, false, 3, 0 },
	{ "drop after the count is read", IRQ_RESERVE_LOST_TAKE, false, 2, 1 },
	{ "nested event during the report", IRQ_RESERVE_LOST, true, 2, 0 },
	{ "nested event after the count is read", IRQ_RESERVE_LOST_TAKE, true, 2, 0 },
};

static void test_nest_lost(void **state)
{
	const struct lost_case *c = *state;
	struct fx *f = fx_new(RING, 1 << 20);
	unsigned int n;
	struct seen s[4];

	/*
	 * A drop nested before the count is read is reported ahead of the
	 * outer event, although it came after it: numbers are not in order.
	 */
	f->seq_check = c->count != 3;
	prefill(f, RING);
	assert_false(emit(f, 64, 100, NULL));
	assert_false(emit(f, 64, 200, NULL));
	/* Room for exactly LOST + 80 bytes, or for everything. */
	n = c->inner_fits ? RING / 64 : 2;
	assert_int_equal(drain(f, NULL, n), n);
	irq.at = c->at;
	irq.size = 32;
	irq.now = 300;
	irq.last_pub = prod_pos(f);
	assert_true(emit(f, 80, 400, NULL));
	assert_int_equal(irq.fired, 1);
	assert_int_equal(irq.ok, c->inner_fits);
	assert_int_equal(f->page->lost_pending, c->left);
	check_invariants(f);
	if (!c->inner_fits)
		assert_int_equal(drain(f, NULL, RING / 64 - 2), RING / 64 - 2);
	n = drain(f, s, 4);
	assert_int_equal(n, c->inner_fits ? 3 : 2);
	/* A single LOST record (nested writers never report), then events. */
	assert_int_equal(s[0].type, MEMMON_REC_LOST);
	assert_int_equal(s[0].count, c->count);
	assert_int_equal(s[0].first, 100);
	assert_int_equal(s[0].last, c->count == 3 ? 300 : 200);
	assert_int_equal(s[1].type, TEST_REC);
	assert_int_equal(s[1].size, 80);
	if (c->inner_fits) {
		assert_int_equal(s[2].type, TEST_REC);
		assert_int_equal(s[2].size, 32);
	}
	check_invariants(f);
	if (c->left) {
		/* The nested drop gets its own LOST record, with its time. */
		assert_true(emit(f, 64, 500, NULL));
		assert_int_equal(drain(f, s, 4), 2);
		assert_int_equal(s[0].count, c->left);
		assert_int_equal(s[0].first, 300);
		assert_int_equal(s[0].last, 300);
		check_invariants(f);
	}
	fx_free(f);
}

/* ---------------------------------------------------------------------- */
/* Wakeups */

static const struct wake_case {
	const char *name;
	u64 wakeup_bytes;
	u32 size;
	unsigned int period, first;	/* commits that wake: first + k * period */
} wake_cases[] = {
	{ "every 256 bytes, 64-byte records", 256, 64, 4, 3 },
	{ "every 100 bytes, 64-byte records", 100, 64, 2, 1 },
	{ "every record (64)", 64, 64, 1, 0 },
	{ "every publish (0)", 0, 64, 1, 0 },
	{ "every 1024 bytes, 40-byte records", 1024, 40, 26, 25 },
};

static void test_wakeup(void **state)
{
	const struct wake_case *c = *state;
	struct fx *f = fx_new(RING, c->wakeup_bytes);
	unsigned int i;
	bool wake;

	for (i = 0; i < 300; i++) {
		assert_true(emit(f, c->size, i, &wake));
		assert_int_equal(wake, i >= c->first && (i - c->first) % c->period == 0);
		DRAIN_ALL(f);
	}
	check_invariants(f);
	fx_free(f);
}

static void test_wakeup_nested_and_loss(void **state)
{
	struct fx *f = fx_new(RING, 64);
	unsigned int i, round;
	void *outer;
	bool wake;

	(void)state;
	/* A nested commit never wakes (it publishes nothing); the outer does. */
	outer = reserve_ev(f, 64, 1, &wake);
	assert_true(emit(f, 64, 2, &wake));
	assert_false(wake);
	assert_true(memmon_ring_commit(&f->r, outer));
	DRAIN_ALL(f);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < RING / 64; i++)
			assert_true(emit(f, 64, 10, NULL));
		/* The first loss wakes; the next ones do not... */
		assert_false(emit(f, 64, 20, &wake));
		assert_true(wake);
		assert_false(emit(f, 64, 21, &wake));
		assert_false(wake);
		DRAIN_ALL(f);
		/* ... until a LOST record reported them. */
		assert_true(emit(f, 64, 22, NULL));
		DRAIN_ALL(f);
		assert_int_equal(f->page->lost_pending, 0);
		check_invariants(f);
	}
	assert_int_equal(f->lost_seen, 4);
	fx_free(f);
}

/* ---------------------------------------------------------------------- */

/* Random emits, nested pairs and partial drains; invariants after each. */
static void test_random_ops(void **state)
{
	struct fx *f = fx_new(RING, 512);
	u64 x = 0x9e3779b97f4a7c15ULL;
	unsigned int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		u32 size, op;
		bool wake;
		void *p;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		op = x % 8;
		size = 24 + 8 * (u32)((x >> 8) % 60);
		if (op < 4) {
			emit(f, size, i, NULL);
		} else if (op == 4) {
			/* Outer reserves, an "interrupt" writes, outer commits. */
			p = reserve_ev(f, size, i, &wake);
			emit(f, 24 + 8 * (u32)((x >> 20) % 10), i, NULL);
			if (p)
				memmon_ring_commit(&f->r, p);
		} else if (op < 7) {
			drain(f, NULL, (unsigned int)(x >> 32) % 8);
		} else {
			DRAIN_ALL(f);
		}
		check_invariants(f);
	}
	DRAIN_ALL(f);
	check_invariants(f);
	assert_true(f->lost_seen > 0);
	assert_true(f->events_seen > 1000);
	fx_free(f);
}


/* ---------------------------------------------------------------------- */
/* MEMMON_FULL_OVERWRITE: the flight recorder. */

static struct fx *fx_overwrite(u64 size)
{
	struct fx *f = fx_new(size, size / 4);

	memmon_ring_set_overwrite(&f->r);
	return f;
}

/*
 * The reader of the uapi: from max(rd, tail_pos), copy what is published,
 * [G], re-read tail_pos, keep what lies at or above it. Checks every record
 * kept (pattern, order) and returns how many events it kept.
 */
static unsigned int ow_read(struct fx *f, u8 *copy, u64 *first_seq, u64 *last_seq)
{
	u64 prod = prod_pos(f), tail, start, pos, tail2;
	unsigned int n = 0;

	tail = __atomic_load_n(&f->page->tail_pos, __ATOMIC_ACQUIRE);
	start = f->rd > tail ? f->rd : tail;
	assert_true(prod - start <= f->size);
	memcpy(copy, f->data + (start & (f->size - 1)), prod - start);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* [G] */
	tail2 = __atomic_load_n(&f->page->tail_pos, __ATOMIC_RELAXED);
	/* tail_pos is always a record boundary: walk from the later one. */
	pos = tail2 > start ? tail2 : start;
	while (pos < prod) {
		const struct memmon_rec_header *h = (const void *)(copy + (pos - start));
		const u8 *b = (const u8 *)h;
		u64 seq;
		u32 i;

		assert_true(h->size >= sizeof(*h) && h->size <= prod - pos);
		if (h->type == TEST_REC) {
			seq = h->tgid | (u64)h->tid << 32;
			for (i = sizeof(*h); i < h->size; i++)
				assert_int_equal(b[i], pattern(seq, i));
			if (!n && first_seq)
				*first_seq = seq;
			if (last_seq) {
				if (n)
					assert_int_equal(seq, *last_seq + 1);
				*last_seq = seq;
			}
			n++;
		} else {
			assert_int_equal(h->type, MEMMON_REC_LOST);
		}
		pos += h->size;
	}
	assert_int_equal(pos, prod);
	f->rd = prod;
	f->ow_kept += n;
	__atomic_store_n(f->cons, prod, __ATOMIC_RELEASE);
	return n;
}

/* What must hold in overwrite mode whenever no writer is in progress. */
static void ow_invariants(struct fx *f)
{
	struct memmon_ring_page *pg = f->page;
	u64 pos = pg->tail_pos, prod = pg->producer_pos, events = 0, bytes = 0;

	assert_int_equal(local_read(&f->r.nest), 0);
	assert_int_equal(prod, local_read(&f->r.head));
	assert_true(prod - pos <= f->size);
	assert_int_equal(pg->stats.produced, f->seq);
	assert_int_equal(pg->stats.produced, pg->stats.delivered + pg->stats.lost);
	assert_int_equal(pg->overwritten, f->r.overwritten);
	assert_true(pg->stats.lost >= pg->overwritten);
	/* "Delivered" is what was read and what the ring still holds after it. */
	if (f->rd > pos)
		pos = f->rd;
	while (pos < prod) {
		const struct memmon_rec_header *h = (const void *)(f->data + (pos & (f->size - 1)));

		if (h->type != MEMMON_REC_LOST) {
			events++;
			bytes += h->size;
		}
		pos += h->size;
	}
	assert_int_equal(pos, prod);
	assert_int_equal(f->ow_kept + events, pg->stats.delivered);
	if (!f->ow_kept)
		assert_int_equal(bytes, pg->stats.bytes);
}

static void test_overwrite_keeps_newest(void **state)
{
	struct fx *f = fx_overwrite(RING);
	u64 first = 0, last = 0;
	u8 *copy = malloc(RING);
	unsigned int i;

	(void)state;
	/* A consumer position outside [tail, pub] changes nothing here. */
	*f->cons = 1ULL << 60;
	for (i = 0; i < 1000; i++) {
		assert_true(emit(f, 64, 100 + i, NULL));
		ow_invariants(f);
	}
	assert_int_equal(f->page->producer_pos, 64000);
	assert_int_equal(f->page->tail_pos, 64000 - RING);
	assert_int_equal(f->page->stats.delivered, RING / 64);
	assert_int_equal(f->page->stats.lost, 1000 - RING / 64);
	assert_int_equal(f->page->overwritten, 1000 - RING / 64);
	assert_int_equal(f->page->lost_pending, 0);
	assert_int_equal(ow_read(f, copy, &first, &last), RING / 64);
	assert_int_equal(first, 1000 - RING / 64);
	assert_int_equal(last, 999);
	/* Passing what was read is no loss; a second read starts after it. */
	for (i = 0; i < 3; i++)
		assert_true(emit(f, 64, 2000 + i, NULL));
	assert_int_equal(f->page->stats.lost, 1000 - RING / 64);
	assert_int_equal(f->page->stats.delivered, RING / 64 + 3);
	ow_invariants(f);
	assert_int_equal(ow_read(f, copy, &first, &last), 3);
	assert_int_equal(first, 1000);
	free(copy);
	fx_free(f);
}

/* Mixed sizes: tail passes whole records, never more than it must. */
static void test_overwrite_mixed_sizes(void **state)
{
	struct fx *f = fx_overwrite(RING);
	u8 *copy = malloc(RING);
	u64 first, last, x = 88172645463325252ULL;
	unsigned int i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		u32 size;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = 24 + 8 * (u32)(x % 120);
		assert_true(emit(f, size, i, NULL));
		ow_invariants(f);
		/* Once full, it stays full but for less than one record. */
		if (f->page->producer_pos > 2 * RING)
			assert_true(f->page->producer_pos - f->page->tail_pos > RING - 1000);
		if (i % 97 == 0)
			ow_read(f, copy, &first, &last);
	}
	assert_true(ow_read(f, copy, &first, &last) > 0);
	assert_int_equal(last, 4999);
	free(copy);
	fx_free(f);
}

/*
 * A writer nested in a full flight recorder drops (only the outermost moves
 * tail); the outermost reports that loss with a LOST record, which tail later
 * passes without touching delivered.
 */
static void test_overwrite_nested_drops(void **state)
{
	struct fx *f = fx_overwrite(RING);
	u8 *copy = malloc(RING);
	const struct memmon_rec_lost *l;
	u64 lost_before, ow_before;
	unsigned int i;

	(void)state;
	prefill(f, RING);
	ow_invariants(f);
	irq.at = IRQ_RESERVE_NESTED;
	irq.size = 64;
	irq.now = 7;
	assert_true(emit(f, 64, 8, NULL));
	assert_int_equal(irq.fired, 1);
	assert_false(irq.ok);
	/* The outer one reported it at once: LOST, then its event. */
	assert_int_equal(f->page->lost_pending, 0);
	assert_int_equal(f->page->stats.lost, 1 + f->page->overwritten);
	l = (const void *)(f->data + ((f->page->producer_pos - 64 - LOST_SIZE) & (RING - 1)));
	assert_int_equal(l->hdr.type, MEMMON_REC_LOST);
	assert_int_equal(l->count, 1);
	ow_invariants(f);
	lost_before = f->page->stats.lost;
	ow_before = f->page->overwritten;
	for (i = 0; i < 2 * RING / 64; i++) {
		assert_true(emit(f, 64, 10 + i, NULL));
		ow_invariants(f);
	}
	/*
	 * Events and the LOST record passed: the events counted lost now,
	 * the LOST record's count (lost already) moved into overwritten.
	 */
	assert_true(f->page->overwritten - ow_before >= RING / 64);
	assert_int_equal(f->page->stats.lost - lost_before + 1,
			 f->page->overwritten - ow_before);
	assert_int_equal(f->page->stats.lost, f->page->overwritten);
	f->seq_check = false;
	assert_int_equal(ow_read(f, copy, NULL, NULL), f->page->stats.delivered);
	free(copy);
	fx_free(f);
}

/* A nested writer that finds room in the flight recorder just writes. */
static void test_overwrite_nested_fits(void **state)
{
	struct fx *f = fx_overwrite(RING);
	u8 *copy = malloc(RING);

	(void)state;
	prefill(f, RING - 128);
	irq.at = IRQ_RESERVE_CLAIM;
	irq.size = 64;
	assert_true(emit(f, 128, 8, NULL));
	assert_int_equal(irq.fired, 1);
	assert_true(irq.ok);
	ow_invariants(f);
	/* The outer's cmpxchg failed once, then it moved tail over 1 record. */
	assert_int_equal(f->page->overwritten, 1);
	f->seq_check = false;
	/* 62 + 1 + 1 events, the first one passed; the inner one first. */
	assert_int_equal(ow_read(f, copy, NULL, NULL), RING / 64 - 1);
	free(copy);
	fx_free(f);
}

/*
 * Records copied by a reader and then overwritten before it re-reads
 * tail_pos lie below the new tail_pos: the reader discards exactly those,
 * and what it keeps is whole.
 */
static void test_overwrite_torn_copy_discarded(void **state)
{
	struct fx *f = fx_overwrite(RING);
	u8 *copy = malloc(RING);
	u64 prod, tail, tail2, pos, kept = 0;
	unsigned int i;

	(void)state;
	for (i = 0; i < 200; i++)
		emit(f, 64, i, NULL);
	prod = prod_pos(f);
	tail = f->page->tail_pos;
	memcpy(copy, f->data + (tail & (RING - 1)), prod - tail);
	/* The producer overwrites 10 records while we "copy". */
	for (i = 0; i < 10; i++)
		emit(f, 64, 500 + i, NULL);
	for (i = 0; i < 10; i++) {
		const struct memmon_rec_header *h = (const void *)(f->data + ((tail + 64 * i) & (RING - 1)));

		assert_int_not_equal(h->tgid, (u32)(136 + i));	/* really overwritten */
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* [G] */
	tail2 = __atomic_load_n(&f->page->tail_pos, __ATOMIC_RELAXED);
	assert_int_equal(tail2, tail + 10 * 64);
	for (pos = tail2; pos < prod; pos += 64) {
		const struct memmon_rec_header *h = (const void *)(copy + (pos - tail));

		assert_int_equal(h->tgid, 136 + (pos - tail) / 64);
		kept++;
	}
	assert_int_equal(kept, RING / 64 - 10);
	free(copy);
	fx_free(f);
}

/* Interrupts at every point of an outermost writer, ring always full. */
static void test_overwrite_random_nesting(void **state)
{
	static const enum irq_point pts[] = {
		IRQ_RESERVE_ENTRY, IRQ_RESERVE_NESTED, IRQ_RESERVE_CLAIM,
		IRQ_RESERVE_LOST, IRQ_RESERVE_LOST_TAKE, IRQ_PUT_MIRROR,
		IRQ_PUT_DEC, IRQ_PUT_RECHECK,
	};
	struct fx *f = fx_overwrite(RING);
	u8 *copy = malloc(RING);
	u64 x = 0x2545f4914f6cdd1dULL;
	unsigned int i;

	(void)state;
	f->seq_check = false;
	for (i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (x % 3 == 0) {
			irq.at = pts[(x >> 8) % ARRAY_SIZE(pts)];
			irq.size = 24 + 8 * (u32)((x >> 16) % 20);
			irq.now = i;
		}
		emit(f, 24 + 8 * (u32)((x >> 24) % 60), i, NULL);
		irq.at = IRQ_NONE;
		ow_invariants(f);
		if (x % 211 == 0)
			ow_read(f, copy, NULL, NULL);
	}
	assert_true(f->page->overwritten > 10000);
	free(copy);
	fx_free(f);
}

/* ---------------------------------------------------------------------- */

static struct CMUnitTest tests[128];
static size_t nr_tests;

static void add(const char *name, CMUnitTestFunction fn, const void *row)
{
	assert(nr_tests < ARRAY_SIZE(tests));
	tests[nr_tests].name = name;
	tests[nr_tests].test_func = fn;
	tests[nr_tests].initial_state = (void *)row;
	nr_tests++;
}

static const char *row_name(const char *fn, const char *row)
{
	size_t n = strlen(fn) + strlen(row) + 2;
	char *s = malloc(n);

	assert(s);
	snprintf(s, n, "%s/%s", fn, row);
	return s;
}

#define ADD(fn) add(#fn, fn, NULL)
#define ADD_ROWS(fn, rows) do {						\
	for (size_t i_ = 0; i_ < ARRAY_SIZE(rows); i_++)	\
		add(row_name(#fn, rows[i_].name), fn, &rows[i_]);	\
} while (0)

int main(void)
{
	ADD(test_init_empty);
	ADD(test_single_record);
	ADD(test_wraparound);
	ADD(test_exact_fit);
	ADD(test_lost_record);
	ADD(test_flush_lost);
	ADD(test_lost_needs_room_for_both);
	ADD(test_whole_ring_record);
	ADD_ROWS(test_bad_size, bad_sizes);
	ADD_ROWS(test_hostile_consumer, hostile);
	ADD(test_consumer_ahead_of_published);
	ADD(test_peek_sweep);
	ADD_ROWS(test_peek_bad_header, bad_hdrs);
	ADD(test_overwrite_keeps_newest);
	ADD(test_overwrite_mixed_sizes);
	ADD(test_overwrite_nested_drops);
	ADD(test_overwrite_nested_fits);
	ADD(test_overwrite_torn_copy_discarded);
	ADD(test_overwrite_random_nesting);
	ADD(test_nested_direct);
	ADD_ROWS(test_nest_irq, nest_cases);
	ADD_ROWS(test_nest_lost, lost_cases);
	ADD_ROWS(test_wakeup, wake_cases);
	ADD(test_wakeup_nested_and_loss);
	ADD(test_random_ops);
	return _cmocka_run_group_tests("ring", tests, nr_tests, NULL, NULL);
}
