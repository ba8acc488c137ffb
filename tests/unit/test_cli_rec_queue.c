// SPDX-License-Identifier: GPL-2.0
/*
 * tools/rec_queue.c in `trace`'s direction: the caller pushes, a thread
 * consumes. The consumer gets every record pushed, byte for byte and in
 * order, at every batch size and cap, including records larger than a
 * batch; a queue that may grow never makes the producer wait (while a
 * stalled consumer holds it); a capped queue does, and resumes; flush hands
 * a partial batch to an idle consumer only; the consumer's stop reaches
 * the producer as -ECANCELED. Built twice, with ASan/UBSan and with TSan.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "rec_queue.h"

#define NREC	20000

/* A MARK record of 32..4120 bytes carrying seq in tid and its bytes. */
static size_t make_rec(__u8 *p, __u32 seq)
{
	struct memmon_rec_mark *m = (void *)p;
	size_t len = seq % 97 == 0 ? 4000 : 4 + (seq % 7) * 8;
	size_t size = (sizeof(*m) + len + 7) & ~7UL;

	memset(p, 0, size);
	m->hdr.size = (__u32)size;
	m->hdr.type = MEMMON_REC_MARK;
	m->hdr.time_ns = seq;
	m->hdr.tid = seq;
	m->len = (__u32)len;
	memset(m->data, (int)(seq & 0xff), len);
	return size;
}

struct consumer {
	struct rec_queue *q;
	pthread_mutex_t gate_lock;	/* the consumer waits at gate */
	pthread_cond_t gate_cond;
	int gate;			/* gate_lock: 0 closed, 1 open */
	long n;				/* gate_lock */
	long cnt, stop_at, idles, result;
	int bad, ret;
};

static int check_rec(void *ctx, const struct memmon_rec_header *rec)
{
	struct consumer *c = ctx;
	const struct memmon_rec_mark *m = (const void *)rec;
	__u8 want[8192];
	size_t size = make_rec(want, (__u32)c->n);

	long n;

	if (rec->size != size || memcmp(m, want, size))
		c->bad++;
	pthread_mutex_lock(&c->gate_lock);
	while (!c->gate)
		pthread_cond_wait(&c->gate_cond, &c->gate_lock);
	n = ++c->n;
	pthread_mutex_unlock(&c->gate_lock);
	return n == c->stop_at ? -EIO : 0;
}

static void count_idle(void *ctx)
{
	struct consumer *c = ctx;

	c->idles++;
}

static void *consumer_thread(void *arg)
{
	struct consumer *c = arg;

	c->ret = rec_queue_consume(c->q, check_rec, count_idle, c, &c->cnt);
	return NULL;
}

static void open_gate(struct consumer *c)
{
	pthread_mutex_lock(&c->gate_lock);
	c->gate = 1;
	pthread_cond_broadcast(&c->gate_cond);
	pthread_mutex_unlock(&c->gate_lock);
}

static void start(struct consumer *c, pthread_t *t, size_t batch,
		  unsigned int max, int gate)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->gate_lock, NULL);
	pthread_cond_init(&c->gate_cond, NULL);
	c->gate = gate;
	c->q = rec_queue_new(batch, max, 1);
	assert_non_null(c->q);
	assert_int_equal(pthread_create(t, NULL, consumer_thread, c), 0);
}

static void finish(struct consumer *c, pthread_t t)
{
	assert_int_equal(pthread_join(t, NULL), 0);
	c->result = rec_queue_result(c->q);
	rec_queue_free(c->q);
	pthread_cond_destroy(&c->gate_cond);
	pthread_mutex_destroy(&c->gate_lock);
}

/* Every record, in order, at every size; the result passes through. */
static void test_all_in_order(void **state)
{
	static const size_t batches[] = { 64, 1000, 4096, 100000 };
	static const unsigned int caps[] = { 1, 2, 64 };
	__u8 buf[8192];
	unsigned int i, k;
	__u32 s;

	(void)state;
	for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		for (k = 0; k < sizeof(caps) / sizeof(caps[0]); k++) {
			struct consumer c;
			pthread_t t;

			start(&c, &t, batches[i], caps[k], 1);
			for (s = 0; s < NREC; s++) {
				make_rec(buf, s);
				assert_int_equal(rec_queue_push(c.q, (const void *)buf), 0);
				if (s % 1000 == 0)
					rec_queue_flush(c.q);
			}
			rec_queue_close(c.q, 1234);
			finish(&c, t);
			assert_int_equal(c.ret, 0);
			assert_int_equal(c.n, NREC);
			assert_int_equal(c.cnt, NREC);
			assert_int_equal(c.bad, 0);
			assert_int_equal(c.result, 1234);
		}
}

/*
 * A queue allowed to grow takes everything while its consumer is stalled
 * (no wait: were push to wait here, the test would hang); the consumer then
 * gets it all.
 */
static void test_grows_while_stalled(void **state)
{
	struct consumer c;
	__u8 buf[8192];
	pthread_t t;
	__u32 s;

	(void)state;
	start(&c, &t, 4096, 100000, 0);
	for (s = 0; s < NREC; s++) {
		make_rec(buf, s);
		assert_int_equal(rec_queue_push(c.q, (const void *)buf), 0);
	}
	pthread_mutex_lock(&c.gate_lock);
	assert_int_equal(c.n, 0);	/* the gate: nothing consumed yet */
	pthread_mutex_unlock(&c.gate_lock);
	open_gate(&c);
	rec_queue_close(c.q, -7);
	finish(&c, t);
	assert_int_equal(c.n, NREC);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.result, -7);
}

struct producer {
	struct rec_queue *q;
	long pushed;
	int ret;
};

static void *producer_thread(void *arg)
{
	struct producer *p = arg;
	__u8 buf[8192];
	__u32 s;

	for (s = 0; s < NREC; s++) {
		make_rec(buf, s);
		p->ret = rec_queue_push(p->q, (const void *)buf);
		if (p->ret)
			return NULL;
		p->pushed++;
	}
	rec_queue_close(p->q, 0);
	return NULL;
}

/* A capped queue makes the producer wait while its consumer is stalled. */
static void test_cap_waits(void **state)
{
	struct consumer c;
	struct producer p = { 0 };
	pthread_t pt;
	long cnt = 0;

	(void)state;
	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.gate_lock, NULL);
	pthread_cond_init(&c.gate_cond, NULL);
	c.gate = 1;
	c.q = rec_queue_new(4096, 3, 0);
	assert_non_null(c.q);
	p.q = c.q;
	assert_int_equal(pthread_create(&pt, NULL, producer_thread, &p), 0);
	/* The consumer on this thread: the producer waits at the cap. */
	c.ret = rec_queue_consume(c.q, check_rec, NULL, &c, &cnt);
	assert_int_equal(pthread_join(pt, NULL), 0);
	assert_int_equal(c.ret, 0);
	assert_int_equal(p.ret, 0);
	assert_int_equal(c.n, NREC);
	assert_int_equal(c.bad, 0);
	assert_int_equal(rec_queue_result(c.q), 0);
	rec_queue_free(c.q);
	pthread_cond_destroy(&c.gate_cond);
	pthread_mutex_destroy(&c.gate_lock);
}

/* The consumer's error stops it; the producer's push says -ECANCELED. */
static void test_consumer_stops(void **state)
{
	struct consumer c;
	__u8 buf[8192];
	pthread_t t;
	int ret = 0;
	__u32 s;

	(void)state;
	start(&c, &t, 1000, 2, 1);
	c.stop_at = 777;
	for (s = 0; s < NREC && !ret; s++) {
		make_rec(buf, s);
		ret = rec_queue_push(c.q, (const void *)buf);
	}
	assert_int_equal(ret, -ECANCELED);
	rec_queue_close(c.q, 0);
	finish(&c, t);
	assert_int_equal(c.ret, -EIO);
	assert_int_equal(c.n, 777);
	assert_int_equal(c.bad, 0);
}

/*
 * flush gives an idle consumer the partial batch (a live stream's delay is
 * the producer's flush period), and the idle callback ran before it waited.
 */
static void test_flush_reaches_idle_consumer(void **state)
{
	struct consumer c;
	__u8 buf[8192];
	pthread_t t;
	long got;
	__u32 s;

	(void)state;
	start(&c, &t, 1 << 20, 4, 1);
	for (s = 0; s < 10; s++) {
		make_rec(buf, s);
		assert_int_equal(rec_queue_push(c.q, (const void *)buf), 0);
	}
	/* Until the consumer is waiting, a flush may keep the batch. */
	do {
		rec_queue_flush(c.q);
		pthread_mutex_lock(&c.gate_lock);
		got = c.n;
		pthread_mutex_unlock(&c.gate_lock);
	} while (got < 10 && !usleep(1000));
	assert_int_equal(got, 10);	/* 10 < one batch: only flush did it */
	rec_queue_close(c.q, 0);
	finish(&c, t);
	assert_true(c.idles >= 1);
	assert_int_equal(c.n, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_in_order),
		cmocka_unit_test(test_grows_while_stalled),
		cmocka_unit_test(test_cap_waits),
		cmocka_unit_test(test_consumer_stops),
		cmocka_unit_test(test_flush_reaches_idle_consumer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
