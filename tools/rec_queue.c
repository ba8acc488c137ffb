// SPDX-License-Identifier: GPL-2.0
/*
 * rec_queue: records handed between two threads in batches.
 *
 * Why. Two of memmon's jobs are a fast half feeding a slow one: `report`
 * reads and merges a trace file (fast) for a model of address spaces (slow),
 * `trace` drains the rings (166 M records/s) for a decoder writing text or
 * JSON (a few M/s). On one thread the slow half holds the fast one back;
 * for `trace` that means full rings and lost events in a storm. Here the
 * producer copies each record (~80 bytes, the cheapest step of any record's
 * life) into a batch, and the consumer walks the batches front to back, a
 * sequential read the hardware prefetches.
 *
 * Synchronisation. One mutex, two condition variables. A batch is on
 * exactly one of: the free list, the producer's hands (cur), the filled
 * FIFO, the consumer's hands. It changes hands only under the mutex, whose
 * unlock/lock orders its contents with its handover both ways; one
 * handover per batch, never per record. nr counts the batches that exist
 * (at most max); the producer allocates one only when the free list is
 * empty, and waits ("emptied") only when all max are taken.
 *
 * Sharing. Nothing either side writes per record is on a line the other
 * reads: each batch descriptor has a cache line of its own, the producer
 * fills through a private cursor (fill) and writes the batch's len once, at
 * the handover, and the consumer reads a batch's len once, when it takes it.
 * (A len written per record on a line the consumer read per record made
 * that line cross between the cores at every record: a third of both
 * threads' time in `report`.)
 *
 * Stopping. The consumer stops (fn's non-zero return, or cancel) by setting
 * stop: the producer's next push, or its wait for a batch, returns
 * -ECANCELED. The producer's end (close) sets done; the consumer first uses
 * every batch handed over before it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "rec_queue.h"

struct batch {
	struct batch *next;
	__u8 *data;
	size_t len, cap;
} __attribute__((aligned(64)));

struct rec_queue {
	pthread_mutex_t lock;
	pthread_cond_t filled;		/* a batch queued, or done */
	pthread_cond_t emptied;		/* a batch freed, or stop */
	struct batch *free_list;	/* lock */
	struct batch *fifo, **fifo_tail; /* lock: filled, oldest first */
	unsigned int nr, max;		/* lock: batches that exist; cap */
	bool stop;			/* lock: the consumer gave up */
	bool done;			/* lock: the producer has closed */
	bool consumer_idle;		/* lock: waiting on filled */
	long result;			/* lock: close()'s */
	size_t batch_size;
	/* The producer's own, on a line of their own. */
	struct batch *cur __attribute__((aligned(64)));
	size_t fill;			/* cur's bytes so far */
};

static struct batch *batch_new(size_t size)
{
	struct batch *b = aligned_alloc(64, sizeof(*b));

	if (!b)
		return NULL;
	memset(b, 0, sizeof(*b));
	b->data = malloc(size);
	if (!b->data) {
		free(b);
		return NULL;
	}
	b->cap = size;
	return b;
}

static void batch_free_list(struct batch *b)
{
	while (b) {
		struct batch *next = b->next;

		free(b->data);
		free(b);
		b = next;
	}
}

struct rec_queue *rec_queue_new(size_t batch, unsigned int max_batches,
				unsigned int prealloc)
{
	struct rec_queue *q;

	if (!batch || !max_batches || prealloc > max_batches)
		return NULL;
	q = aligned_alloc(64, sizeof(*q));
	if (!q)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->batch_size = batch;
	q->max = max_batches;
	q->fifo_tail = &q->fifo;
	for (; q->nr < prealloc; q->nr++) {
		struct batch *b = batch_new(batch);

		if (!b) {
			batch_free_list(q->free_list);
			free(q);
			return NULL;
		}
		b->next = q->free_list;
		q->free_list = b;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->filled, NULL);
	pthread_cond_init(&q->emptied, NULL);
	return q;
}

void rec_queue_free(struct rec_queue *q)
{
	if (!q)
		return;
	batch_free_list(q->free_list);
	batch_free_list(q->fifo);
	if (q->cur)
		batch_free_list(q->cur);
	pthread_cond_destroy(&q->emptied);
	pthread_cond_destroy(&q->filled);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Under lock: queue the producer's batch, if it holds anything. */
static void hand_over(struct rec_queue *q)
{
	struct batch *b = q->cur;

	if (!b || !q->fill)
		return;
	b->len = q->fill;
	b->next = NULL;
	*q->fifo_tail = b;
	q->fifo_tail = &b->next;
	q->cur = NULL;
	q->fill = 0;
	pthread_cond_signal(&q->filled);
}

/* Producer: hand cur over, get an empty batch. 0, -ECANCELED or -ENOMEM. */
static int next_batch(struct rec_queue *q)
{
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	hand_over(q);
	for (;;) {
		if (q->stop) {
			ret = -ECANCELED;
			break;
		}
		if (!q->cur && q->free_list) {
			q->cur = q->free_list;
			q->free_list = q->cur->next;
			q->cur->next = NULL;
			break;
		}
		if (!q->cur && q->nr < q->max) {
			/* Allocate outside the lock; nr reserves the slot. */
			q->nr++;
			pthread_mutex_unlock(&q->lock);
			q->cur = batch_new(q->batch_size);
			pthread_mutex_lock(&q->lock);
			if (!q->cur) {
				/* No growing further: wait for the others. */
				q->max = --q->nr;
				if (!q->nr) {
					ret = -ENOMEM;
					break;
				}
				continue;
			}
			break;
		}
		if (q->cur)
			break;
		pthread_cond_wait(&q->emptied, &q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	q->fill = 0;
	return ret;
}

int rec_queue_push(struct rec_queue *q, const struct memmon_rec_header *rec)
{
	struct batch *b = q->cur;
	size_t size = rec->size;
	int ret;

	if (!b || (q->fill && b->cap - q->fill < size)) {
		ret = next_batch(q);
		if (ret)
			return ret;
		b = q->cur;
	}
	if (b->cap - q->fill < size) {
		/* Empty, and too small for this record: a batch of its own. */
		__u8 *n = realloc(b->data, size);

		if (!n)
			return -ENOMEM;
		b->data = n;
		b->cap = size;
	}
	memcpy(b->data + q->fill, rec, size);
	q->fill += size;
	return 0;
}

void rec_queue_flush(struct rec_queue *q)
{
	if (!q->fill)
		return;
	pthread_mutex_lock(&q->lock);
	/* A busy consumer will come back for more: keep filling this one. */
	if (q->consumer_idle)
		hand_over(q);
	pthread_mutex_unlock(&q->lock);
}

void rec_queue_close(struct rec_queue *q, long result)
{
	pthread_mutex_lock(&q->lock);
	hand_over(q);
	q->result = result;
	q->done = true;
	pthread_cond_signal(&q->filled);
	pthread_mutex_unlock(&q->lock);
}

void rec_queue_cancel(struct rec_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->emptied);
	pthread_mutex_unlock(&q->lock);
}

long rec_queue_result(struct rec_queue *q)
{
	long r;

	pthread_mutex_lock(&q->lock);
	r = q->result;
	pthread_mutex_unlock(&q->lock);
	return r;
}

/* Consumer: fn over one batch. Returns fn's first non-zero return, or 0. */
static int consume_batch(const struct batch *b, memmon_record_fn fn, void *ctx,
			 long *cnt)
{
	const __u8 *data = b->data;
	size_t off = 0, len = b->len;
	int ret;

	while (off < len) {
		const struct memmon_rec_header *rec = (const void *)(data + off);

		/*
		 * The batch was written on the producer's core: ask for the
		 * lines a few dozen records ahead (a hint; past the end is
		 * harmless), the hardware's prefetch stops at 4 KiB pages.
		 */
		__builtin_prefetch(data + off + 2048);
		/* The producer copied whole records of their own size. */
		off += rec->size;
		++*cnt;
		ret = fn(ctx, rec);
		if (ret)
			return ret;
	}
	return 0;
}

int rec_queue_consume(struct rec_queue *q, memmon_record_fn fn,
		      void (*idle)(void *ctx), void *ctx, long *cnt)
{
	int ret = 0;

	for (;;) {
		struct batch *b;

		pthread_mutex_lock(&q->lock);
		if (!q->fifo && !q->done && idle) {
			pthread_mutex_unlock(&q->lock);
			idle(ctx);
			pthread_mutex_lock(&q->lock);
		}
		while (!q->fifo && !q->done) {
			q->consumer_idle = true;
			pthread_cond_wait(&q->filled, &q->lock);
		}
		q->consumer_idle = false;
		b = q->fifo;
		if (b) {
			q->fifo = b->next;
			if (!q->fifo)
				q->fifo_tail = &q->fifo;
		}
		pthread_mutex_unlock(&q->lock);
		if (!b)
			break;		/* done, and every batch used */
		ret = consume_batch(b, fn, ctx, cnt);
		pthread_mutex_lock(&q->lock);
		b->next = q->free_list;
		q->free_list = b;
		if (ret)
			q->stop = true;
		pthread_cond_signal(&q->emptied);
		pthread_mutex_unlock(&q->lock);
		if (ret)
			break;
	}
	return ret;
}
