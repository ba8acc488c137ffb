/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rec_pipe: a trace file's records read, checked and merged on a thread
 * of their own, and delivered in the same order on the caller's thread.
 * See rec_pipe.c for why and for the synchronisation.
 */
#ifndef MEMMON_TOOLS_REC_PIPE_H
#define MEMMON_TOOLS_REC_PIPE_H

#include <stddef.h>
#include <memmon/trace.h>

/* Batch size when the caller passes 0. */
#define REC_PIPE_BATCH	(1U << 20)
/* What prep may write beyond the record's own size. */
#define REC_PIPE_PREP_EXTRA	64

/*
 * prep, on the reading thread: turn rec into the item the consumer will
 * get, at out (8-byte aligned, rec->size + REC_PIPE_PREP_EXTRA bytes of
 * room). Returns the item's size, a multiple of 8 and > 0, or a negative
 * errno, which stops the reading with that error. It runs ahead of the
 * consumer: whatever it shares with fn must be written before the item
 * that carries it (the handover of a batch orders the two) and never
 * written by fn.
 */
typedef long (*rec_pipe_prep_fn)(void *ctx, const struct memmon_rec_header *rec,
				 void *out);
/* The consumer: one item, on the caller's thread, valid until it returns. */
typedef int (*rec_pipe_fn)(void *ctx, const void *item);

/*
 * memmon_trace_reader__for_each(r, ...), with the reading on another
 * thread: each record, in the reader's order, goes through prep (there)
 * and then fn (on this thread); prep NULL hands fn a copy of the record.
 * batch: bytes handed over at a time (0: the default; an item larger than
 * that gets a batch of its own).
 *
 * Returns the number of items fn was given; fn's negative return, which
 * stops everything; or the reader's error (-EBADMSG...; its message in
 * memmon_trace_reader__errmsg(r)) or prep's, after fn has had every item
 * before it. fn returning > 0 stops early, as with the reader.
 */
long rec_pipe_for_each(struct memmon_trace_reader *r, rec_pipe_prep_fn prep,
		       void *pctx, rec_pipe_fn fn, void *ctx, size_t batch);

#endif
