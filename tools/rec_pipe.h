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

/*
 * memmon_trace_reader__for_each(r, fn, ctx), with the reading on another
 * thread: fn sees the same records in the same order, on this thread, each
 * valid until fn returns. batch: bytes handed over at a time (0: the
 * default; a record larger than that gets a batch of its own).
 *
 * Returns the number of records fn was given; fn's negative return, which
 * stops everything; or the reader's error (-EBADMSG...; its message in
 * memmon_trace_reader__errmsg(r)) after fn has had every record before it.
 * fn returning > 0 stops early, as with the reader.
 */
long rec_pipe_for_each(struct memmon_trace_reader *r, memmon_record_fn fn,
		       void *ctx, size_t batch);

#endif
