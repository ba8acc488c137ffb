// SPDX-License-Identifier: GPL-2.0
/*
 * rec_pipe: reading a trace file on one thread, using its records on
 * another.
 *
 * Why. `memmon report` is two jobs of similar weight: reading (the page
 * cache, the CRC of every chunk, the k-way merge of the CPUs' streams)
 * and modelling (per-process address spaces). On one thread they also
 * share one core's caches, and the reading streams hundreds of KiB per
 * chunk through them, evicting the model's arrays. Here the reader runs
 * memmon_trace_reader__for_each() on a thread of its own and copies each
 * record, in merged order, into one of NR_BATCH buffers; the caller's
 * thread walks those buffers front to back (a sequential read the hardware
 * prefetches) and calls fn. The copy is ~80 bytes a record, the cheapest
 * part of reading one.
 *
 * Synchronisation. One mutex, two condition variables, a ring of NR_BATCH
 * buffers: head (the consumer's next) and tail (the producer's next),
 * head <= tail <= head + NR_BATCH. Buffers in [head, tail) belong to the
 * consumer, the others to the producer; ownership changes only under the
 * mutex, whose unlock/lock orders a buffer's contents with its handover
 * both ways. One handover per batch (a MiB), never per record.
 *
 * Sharing. Nothing either side writes per record is on a line the other
 * reads: each batch's descriptor has a cache line of its own, the producer
 * fills its batch through a private cursor (fill) and writes the batch's
 * len once, at the handover, and the consumer reads a batch's data and len
 * once, when it takes it. (A len written per record on the line the
 * consumer read per record made that line cross between the cores at
 * every record: a third of both threads' time.)
 *
 * Stopping. The consumer stops (fn's request or error) by setting stop;
 * the producer sees it when it next wants a buffer or while it waits for
 * one, and ends its for_each by returning 1 from its callback. The
 * producer's own end (the last record, or the reader's error) sets done;
 * the consumer first uses every buffer handed over before it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "rec_pipe.h"

#define NR_BATCH	4

struct batch {
	__u8 *data;
	size_t len, cap;
} __attribute__((aligned(64)));

struct rec_pipe {
	pthread_mutex_t lock;
	pthread_cond_t filled;		/* tail moved, or done */
	pthread_cond_t emptied;		/* head moved, or stop */
	struct batch b[NR_BATCH];
	unsigned long head, tail;	/* lock */
	bool stop;			/* lock: the consumer gave up */
	bool done;			/* lock: the producer has ended */
	long result;			/* the producer's for_each, once done */
	/* The producer's own, on a line of their own. */
	struct memmon_trace_reader *r __attribute__((aligned(64)));
	struct batch *cur;		/* being filled */
	size_t fill;			/* cur's bytes so far */
};

/*
 * Producer: hand the batch being filled over (if any), wait for a free
 * one. Returns false when the consumer has stopped.
 */
static bool next_batch(struct rec_pipe *p)
{
	bool ok;

	pthread_mutex_lock(&p->lock);
	if (p->cur) {
		p->cur->len = p->fill;
		p->cur = NULL;
		p->tail++;
		pthread_cond_signal(&p->filled);
	}
	while (!p->stop && p->tail - p->head == NR_BATCH)
		pthread_cond_wait(&p->emptied, &p->lock);
	ok = !p->stop;
	if (ok) {
		p->cur = &p->b[p->tail % NR_BATCH];
		p->fill = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/* The producer's for_each callback: append rec to the current batch. */
static int copy_rec(void *ctx, const struct memmon_rec_header *rec)
{
	struct rec_pipe *p = ctx;
	struct batch *b = p->cur;

	if (!b || (p->fill && b->cap - p->fill < rec->size)) {
		if (!next_batch(p))
			return 1;
		b = p->cur;
	}
	if (b->cap - p->fill < rec->size) {
		/* Empty, and too small for this record: a batch of its own. */
		__u8 *n = realloc(b->data, rec->size);

		if (!n)
			return -ENOMEM;
		b->data = n;
		b->cap = rec->size;
	}
	memcpy(b->data + p->fill, rec, rec->size);
	p->fill += rec->size;
	return 0;
}

static void *producer(void *arg)
{
	struct rec_pipe *p = arg;
	long n = memmon_trace_reader__for_each(p->r, copy_rec, p);

	pthread_mutex_lock(&p->lock);
	if (p->cur) {
		p->cur->len = p->fill;
		if (p->fill)
			p->tail++;
		p->cur = NULL;
	}
	p->result = n;
	p->done = true;
	pthread_cond_signal(&p->filled);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Consumer: fn over one batch. Returns fn's first non-zero return, or 0. */
static int consume(const struct batch *b, memmon_record_fn fn, void *ctx,
		   long *cnt)
{
	const __u8 *data = b->data;
	size_t off = 0, len = b->len;
	int ret;

	while (off < len) {
		const struct memmon_rec_header *rec = (const void *)(data + off);

		/*
		 * The batch was written on the reader's core: ask for the
		 * lines a few dozen records ahead (a hint; past the end is
		 * harmless), the hardware's prefetch stops at 4 KiB pages.
		 */
		__builtin_prefetch(data + off + 2048);
		/* The reader checked the size against its chunk. */
		off += rec->size;
		++*cnt;
		ret = fn(ctx, rec);
		if (ret)
			return ret;
	}
	return 0;
}

long rec_pipe_for_each(struct memmon_trace_reader *r, memmon_record_fn fn,
		       void *ctx, size_t batch)
{
	struct rec_pipe p = { .r = r };
	pthread_t thread;
	long cnt = 0, result;
	unsigned int i;
	int ret = 0;

	if (!r || !fn)
		return -EINVAL;
	if (!batch)
		batch = REC_PIPE_BATCH;
	for (i = 0; i < NR_BATCH; i++) {
		p.b[i].data = malloc(batch);
		if (!p.b[i].data)
			goto fallback;
		p.b[i].cap = batch;
	}
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.filled, NULL);
	pthread_cond_init(&p.emptied, NULL);
	if (pthread_create(&thread, NULL, producer, &p)) {
		pthread_cond_destroy(&p.emptied);
		pthread_cond_destroy(&p.filled);
		pthread_mutex_destroy(&p.lock);
		goto fallback;
	}

	for (;;) {
		const struct batch *b;

		pthread_mutex_lock(&p.lock);
		while (p.head == p.tail && !p.done)
			pthread_cond_wait(&p.filled, &p.lock);
		b = p.head != p.tail ? &p.b[p.head % NR_BATCH] : NULL;
		pthread_mutex_unlock(&p.lock);
		if (!b)
			break;		/* done, and every batch used */
		ret = consume(b, fn, ctx, &cnt);
		pthread_mutex_lock(&p.lock);
		p.head++;
		if (ret)
			p.stop = true;
		pthread_cond_signal(&p.emptied);
		pthread_mutex_unlock(&p.lock);
		if (ret)
			break;
	}
	pthread_join(thread, NULL);
	pthread_cond_destroy(&p.emptied);
	pthread_cond_destroy(&p.filled);
	pthread_mutex_destroy(&p.lock);
	if (ret < 0)
		result = ret;
	else if (!ret && p.result < 0)
		result = p.result;	/* the reader's error, after the rest */
	else
		result = cnt;
	for (i = 0; i < NR_BATCH; i++)
		free(p.b[i].data);
	return result;

fallback:
	/* No memory or no thread: read on this one. */
	for (i = 0; i < NR_BATCH; i++)
		free(p.b[i].data);
	return memmon_trace_reader__for_each(r, fn, ctx);
}
