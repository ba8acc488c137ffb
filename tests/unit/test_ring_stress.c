// SPDX-License-Identifier: GPL-2.0
/*
 * test_ring_stress.c - driver/transport/ring.h with a producer and a consumer running
 * at once, as the kernel on one CPU and a reader on another.
 *
 * The producer never blocks on the consumer: when the ring is full its events
 * are dropped and reported by LOST records, as in the kernel. Every event carries its
 * sequence number (also its time_ns, so LOST first_ns/last_ns name sequence
 * numbers) and a payload derived from it with a checksum. The consumer, a
 * plain userspace reader ([C] load-acquire of producer_pos, [D]
 * store-release of consumer_pos), checks every record: numbers follow each
 * other except across LOST records, whose count, first and last account for
 * the gap exactly. At the end, delivered + lost == produced on both sides.
 *
 * Bounded by a record count or a deadline, whichever comes first; nothing
 * asserts on time. After a drop the producer yields, as a real event rate
 * would let the consumer catch up, except in the "storm" case. Losses are
 * forced rather than hoped for: the consumer waits for the producer to drop
 * something before it starts, and again now and then, and the producer does
 * not stop at the deadline before its first drop. Built twice: -O2, and with
 * -fsanitize=thread (which must stay quiet).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "ring.h"

#define CPU		1
#define STRESS_REC	0x7e02	/* a record type no real writer uses */
#define MAX_WORDS	30	/* payload words: records of 40..272 bytes */

struct stress_rec {
	struct memmon_rec_header hdr;
	u64 seq;
	u64 sum;		/* of payload[] */
	u64 payload[];
};

struct stress {
	/* Parameters. */
	u64 ring_size;
	u64 max_records;
	u64 seconds;
	unsigned int pause_every;	/* events between forced losses */
	bool storm;			/* never wait after a drop */
	/* The ring, set up before the threads start. */
	struct memmon_ring r;
	struct memmon_ring_page *page;
	u64 *cons;
	u8 *data;
	/* Producer's results. */
	u64 attempted, wakes;
	int done;			/* release/acquire */
	/* Consumer's results. */
	u64 events, bytes, lost_counted, lost_records, pauses;
	u64 expect;			/* the next sequence number */
	u64 final_cons;
	const char *error;		/* first thing that was wrong */
	u64 error_seq;
};

static u64 mix(u64 x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static u32 rec_size(u64 seq)
{
	return sizeof(struct stress_rec) + 8 * (u32)(mix(seq) % (MAX_WORDS + 1));
}

static u64 word(u64 seq, u32 i)
{
	return mix(seq * 64 + i);
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static void *producer(void *arg)
{
	struct stress *x = arg;
	u64 deadline = now_ns() + x->seconds * 1000000000ULL, seq;

	for (seq = 0; seq < x->max_records; seq++) {
		u32 size = rec_size(seq), n = (size - sizeof(struct stress_rec)) / 8, i;
		struct stress_rec *rec;
		bool wake;
		u64 sum = 0;

		/* Time bound, but never before the first loss (see above). */
		if ((seq & 1023) == 0 && now_ns() > deadline && local_read(&x->r.lost))
			break;
		/* The event's time is its sequence number. */
		rec = memmon_ring_reserve(&x->r, size, seq, &wake);
		if (rec) {
			rec->hdr.size = size;
			rec->hdr.type = STRESS_REC;
			rec->hdr.cpu = CPU;
			rec->hdr.time_ns = seq;
			rec->hdr.tgid = 4242;
			rec->hdr.tid = 4243;
			rec->seq = seq;
			for (i = 0; i < n; i++) {
				rec->payload[i] = word(seq, i);
				sum = sum * 31 + rec->payload[i];
			}
			rec->sum = sum;
			wake = memmon_ring_commit(&x->r, rec);
		} else if (!x->storm) {
			/* Give the consumer a chance, as a real event rate would. */
			sched_yield();
		}
		x->wakes += wake;
	}
	x->attempted = seq;
	__atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Returns NULL if the record is right, else what is wrong with it. */
static const char *check(struct stress *x, const struct memmon_rec_header *h, u32 len)
{
	const struct stress_rec *rec = (const void *)h;
	const struct memmon_rec_lost *lost = (const void *)h;
	u64 sum = 0;
	u32 i, n;

	if (h->cpu != CPU)
		return "wrong cpu";
	if (h->type == MEMMON_REC_LOST) {
		if (len != sizeof(*lost) || h->tgid || h->tid)
			return "bad LOST header";
		if (!lost->count)
			return "LOST count 0";
		/* Without nesting, the dropped ones are exactly the gap. */
		if (lost->first_ns != x->expect)
			return "LOST first is not the first missing";
		if (lost->last_ns != x->expect + lost->count - 1)
			return "LOST last does not match its count";
		if (h->time_ns != x->expect + lost->count)
			return "LOST not written by the next event";
		x->expect += lost->count;
		x->lost_counted += lost->count;
		x->lost_records++;
		return NULL;
	}
	if (h->type != STRESS_REC)
		return "unknown record type";
	if (rec->seq != x->expect)
		return "sequence gap not covered by a LOST record";
	if (len != rec_size(rec->seq) || h->time_ns != rec->seq ||
	    h->tgid != 4242 || h->tid != 4243)
		return "bad event header";
	n = (len - sizeof(*rec)) / 8;
	for (i = 0; i < n; i++) {
		if (rec->payload[i] != word(rec->seq, i))
			return "payload corrupted";
		sum = sum * 31 + rec->payload[i];
	}
	if (sum != rec->sum)
		return "checksum mismatch";
	x->expect++;
	x->events++;
	x->bytes += len;
	return NULL;
}

static void *consumer(void *arg)
{
	struct stress *x = arg;
	const struct memmon_rec_header *h;
	u64 cons = 0, prod, next_pause = 0;
	int done;
	u32 len;

	for (;;) {
		/* Stop reading until the producer has dropped something. */
		if (x->events >= next_pause) {
			while (!__atomic_load_n(&x->page->lost_pending, __ATOMIC_RELAXED) &&
			       !__atomic_load_n(&x->done, __ATOMIC_ACQUIRE))
				sched_yield();
			next_pause = x->events + x->pause_every;
			x->pauses++;
		}
		/* done first: once seen, the prod read after it is final. */
		done = __atomic_load_n(&x->done, __ATOMIC_ACQUIRE);
		prod = __atomic_load_n(&x->page->producer_pos, __ATOMIC_ACQUIRE);	/* [C] */
		while (cons != prod) {
			const char *err;

			if (memmon_ring_peek(&x->r, cons, prod, &h, &len) != MEMMON_PEEK_RECORD)
				err = "peek refused a record";
			else
				err = check(x, h, len);
			if (err) {
				x->error = err;
				x->error_seq = x->expect;
				goto out;
			}
			cons += len;
			if (x->events >= next_pause)
				break;
		}
		__atomic_store_n(x->cons, cons, __ATOMIC_RELEASE);	/* [D] */
		if (done && cons == prod)
			break;
		if (cons == prod)
			sched_yield();
	}
out:
	x->final_cons = cons;
	return NULL;
}

static void run(struct stress *x)
{
	pthread_t p, c;
	u64 t0, t1;
	struct memmon_cpu_stats st;

	x->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(x->page != MAP_FAILED);
	x->cons = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(x->cons != MAP_FAILED);
	x->data = kshim_ring_map(x->ring_size);
	assert_non_null(x->data);
	memmon_ring_init(&x->r, x->page, x->cons, x->data, x->ring_size,
			 x->ring_size / 4, CPU);

	t0 = now_ns();
	assert_int_equal(pthread_create(&c, NULL, consumer, x), 0);
	assert_int_equal(pthread_create(&p, NULL, producer, x), 0);
	assert_int_equal(pthread_join(p, NULL), 0);
	assert_int_equal(pthread_join(c, NULL), 0);
	t1 = now_ns();

	if (x->error)
		fail_msg("consumer: %s (expecting seq %llu)", x->error,
			 (unsigned long long)x->error_seq);
	st = x->page->stats;
	/* The consumer read everything published, and that is everything. */
	assert_int_equal(x->final_cons, x->page->producer_pos);
	assert_int_equal(x->page->producer_pos, local_read(&x->r.head));
	assert_int_equal(st.produced, x->attempted);
	assert_int_equal(st.delivered, x->events);
	assert_int_equal(st.bytes, x->bytes);
	assert_int_equal(st.produced, st.delivered + st.lost);
	assert_int_equal(st.lost, x->lost_counted + x->page->lost_pending);
	/* Pending drops, if any, are the last events attempted. */
	assert_int_equal(x->expect + x->page->lost_pending, x->attempted);
	/* Forced, so the LOST path really ran. */
	assert_true(x->lost_records > 0);

	printf("# ring %llu KiB%s: %llu records in %.2f s, M/s attempted %.2f, delivered %.2f\n",
	       (unsigned long long)x->ring_size / 1024, x->storm ? " (storm)" : "",
	       (unsigned long long)x->attempted, (double)(t1 - t0) / 1e9,
	       (double)x->attempted / ((double)(t1 - t0) / 1e3),
	       (double)st.delivered / ((double)(t1 - t0) / 1e3));
	printf("#   %llu delivered, %llu lost in %llu LOST records, %llu wakeups, %llu pauses\n",
	       (unsigned long long)st.delivered, (unsigned long long)st.lost,
	       (unsigned long long)x->lost_records, (unsigned long long)x->wakes,
	       (unsigned long long)x->pauses);

	kshim_ring_unmap(x->data, x->ring_size);
	munmap(x->page, 4096);
	munmap(x->cons, 4096);
}

static void test_stress_64k(void **state)
{
	static struct stress x = {
		.ring_size = 64 * 1024,
		.max_records = 20000000,
		.seconds = 3,
		.pause_every = 1 << 18,
	};

	(void)state;
	run(&x);
}

/* One page: every few records wrap. */
static void test_stress_4k(void **state)
{
	static struct stress x = {
		.ring_size = 4096,
		.max_records = 5000000,
		.seconds = 1,
		.pause_every = 1 << 16,
	};

	(void)state;
	run(&x);
}

/* The producer never waits: nearly everything is dropped, and every drop
 * publishes; the few records that get through must still be right.
 */
static void test_stress_drop_storm(void **state)
{
	static struct stress x = {
		.ring_size = 4096,
		.max_records = 5000000,
		.seconds = 1,
		.pause_every = 1 << 12,
		.storm = true,
	};

	(void)state;
	run(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress_64k),
		cmocka_unit_test(test_stress_4k),
		cmocka_unit_test(test_stress_drop_storm),
	};

	return cmocka_run_group_tests_name("ring_stress", tests, NULL, NULL);
}
