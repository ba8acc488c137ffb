/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rec_queue: records handed from one thread to another in batches, in
 * order. One producer (rec_queue_push...) and one consumer
 * (rec_queue_consume); either may be the caller's thread. See rec_queue.c
 * for the synchronisation.
 */
#ifndef MEMMON_TOOLS_REC_QUEUE_H
#define MEMMON_TOOLS_REC_QUEUE_H

#include <stddef.h>
#include <memmon/memmon.h>

struct rec_queue;

/*
 * A queue of at most max_batches batches of batch bytes each (a record
 * larger than that gets a batch of its own); prealloc of them allocated now,
 * the others when the producer first needs them. NULL: no memory.
 */
struct rec_queue *rec_queue_new(size_t batch, unsigned int max_batches,
				unsigned int prealloc);
/* After both sides are done with it. */
void rec_queue_free(struct rec_queue *q);

/*
 * Producer. push copies rec into the batch being filled; when that is full
 * it is handed over, and push waits only while max_batches are all in the
 * consumer's hands. Returns 0; -ECANCELED once the consumer has stopped;
 * -ENOMEM.
 */
int rec_queue_push(struct rec_queue *q, const struct memmon_rec_header *rec);
/*
 * Hand the partly filled batch over if the consumer has nothing else: a live
 * stream's bounded delay. Never waits.
 */
void rec_queue_flush(struct rec_queue *q);
/* The producer's end: everything pushed is handed over, with its result. */
void rec_queue_close(struct rec_queue *q, long result);

/*
 * Consumer: fn on every record, in order, until the producer has closed the
 * queue and every batch is used (returns 0), or fn returns non-zero (returns
 * that; the producer's next push sees -ECANCELED). idle, when not NULL, is
 * called with ctx each time the consumer has used everything handed over and
 * is about to wait. *cnt counts the records given to fn.
 */
int rec_queue_consume(struct rec_queue *q, memmon_record_fn fn,
		      void (*idle)(void *ctx), void *ctx, long *cnt);
/* Stop from the consumer's side without fn's help (e.g. a failed setup). */
void rec_queue_cancel(struct rec_queue *q);
/* The producer's result given to rec_queue_close(); after consume returned. */
long rec_queue_result(struct rec_queue *q);

#endif
