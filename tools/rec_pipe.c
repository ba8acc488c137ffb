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
 * memmon_trace_reader__for_each() on a thread of its own, pushing each
 * record, in merged order, into a rec_queue of NR_BATCH batches; the
 * caller's thread consumes them (see rec_queue.c for the handover).
 *
 * Stopping. fn's non-zero return stops the queue; the reader's next push
 * fails and it ends its for_each by returning 1 from its callback. The
 * reader's own end (the last record, or its error) closes the queue; the
 * caller first uses every record before it.
 */
#include <errno.h>
#include <pthread.h>
#include "rec_pipe.h"
#include "rec_queue.h"

#define NR_BATCH	4

struct rec_pipe {
	struct rec_queue *q;
	struct memmon_trace_reader *r;
};

/* The reader's for_each callback. */
static int push_rec(void *ctx, const struct memmon_rec_header *rec)
{
	struct rec_pipe *p = ctx;
	int ret = rec_queue_push(p->q, rec);

	if (!ret)
		return 0;
	return ret == -ECANCELED ? 1 : ret;	/* 1: the consumer stopped */
}

static void *reader(void *arg)
{
	struct rec_pipe *p = arg;

	rec_queue_close(p->q, memmon_trace_reader__for_each(p->r, push_rec, p));
	return NULL;
}

long rec_pipe_for_each(struct memmon_trace_reader *r, memmon_record_fn fn,
		       void *ctx, size_t batch)
{
	struct rec_pipe p = { .r = r };
	pthread_t thread;
	long cnt = 0, result;
	int ret;

	if (!r || !fn)
		return -EINVAL;
	p.q = rec_queue_new(batch ? batch : REC_PIPE_BATCH, NR_BATCH, NR_BATCH);
	if (!p.q)
		goto fallback;
	if (pthread_create(&thread, NULL, reader, &p)) {
		rec_queue_free(p.q);
		goto fallback;
	}
	ret = rec_queue_consume(p.q, fn, NULL, ctx, &cnt);
	pthread_join(thread, NULL);
	result = rec_queue_result(p.q);
	rec_queue_free(p.q);
	if (ret < 0)
		return ret;
	if (!ret && result < 0)
		return result;	/* the reader's error, after the rest */
	return cnt;

fallback:
	/* No memory or no thread: read on this one. */
	return memmon_trace_reader__for_each(r, fn, ctx);
}
