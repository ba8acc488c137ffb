/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libmemmon: trace files (memmon-trace-file(5), docs/trace-format.md).
 *
 * A writer appends per-CPU chunks of records copied straight from the
 * rings, each with a checksum, then an index and a trailer on close. A
 * reader reads one chunk per CPU at a time (pread(), never a mapping: a
 * file cut short under it is an error, not a SIGBUS) and merges the CPUs
 * in time order, so memory stays flat whatever the file size; a file without
 * index (the writer was killed) is read by scanning, and reported as
 * truncated. Corruption is an error that names the file offset.
 */
#ifndef MEMMON_LIBMEMMON_INCLUDE_MEMMON_TRACE_H
#define MEMMON_LIBMEMMON_INCLUDE_MEMMON_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/memmon.h>
#include <memmon/memmon.h>

#ifdef __cplusplus
extern "C" {
#endif

struct memmon_trace_writer;
struct memmon_trace_reader;

struct memmon_trace_writer_opts {
	size_t sz;			/* sizeof(struct memmon_trace_writer_opts) */
	__u32 nr_cpus;			/* CPUs of the session (required) */
	int compress_level;		/* 0: none; 1..19: zstd level */
	__s64 realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
};
#define memmon_trace_writer_opts__last_field realtime_offset_ns

/* Create (truncate) path and write the file header. */
LIBMEMMON_API struct memmon_trace_writer *
memmon_trace_writer__open(const char *path,
			  const struct memmon_trace_writer_opts *opts);
/*
 * Append a chunk: len bytes of whole records of one CPU, as peeked from
 * its ring (memmon_session__peek_cpu()). The records are checked (the
 * framing the readers use: sizes and alignment), counted, and written
 * unchanged (or zstd-compressed). -EBADMSG, and nothing written, if they
 * are not whole records.
 */
LIBMEMMON_API int memmon_trace_writer__add_chunk(struct memmon_trace_writer *w,
						 unsigned int cpu,
						 const void *recs, size_t len);
/* Append a metadata block: a JSON object; later keys override earlier. */
LIBMEMMON_API int memmon_trace_writer__add_meta(struct memmon_trace_writer *w,
						const char *json_object);
/* Events lost on cpu per the LOST records written so far. */
LIBMEMMON_API __u64 memmon_trace_writer__lost(const struct memmon_trace_writer *w,
					      unsigned int cpu);
/* Bytes written so far. */
LIBMEMMON_API __u64 memmon_trace_writer__bytes(const struct memmon_trace_writer *w);
/*
 * Write the final metadata (lost counts), the index and the trailer,
 * fsync, close and free. Returns 0, or the first write error of the
 * writer's life (negative errno). NULL is fine.
 */
LIBMEMMON_API int memmon_trace_writer__close(struct memmon_trace_writer *w);

struct memmon_trace_reader_opts {
	size_t sz;		/* sizeof(struct memmon_trace_reader_opts) */
	char *errbuf;		/* if open fails: why, with the offset */
	size_t errbuf_size;
};
#define memmon_trace_reader_opts__last_field errbuf_size

/* What a trace file says about itself. May grow at the end. */
struct memmon_trace_info {
	__u16 version_major;
	__u16 version_minor;
	__u32 nr_cpus;
	__u32 clock;			/* enum memmon_clock */
	bool has_index;			/* false: scanned */
	bool truncated;			/* no valid index/trailer, or a torn block */
	__u64 truncated_at;		/* offset where scanning stopped */
	__s64 realtime_offset_ns;
	__u64 file_size;
	__u64 nr_chunks;
	__u64 nr_records;		/* sum of the chunks' counts */
	__u64 first_ns;
	__u64 last_ns;
};

/*
 * Open a trace file: its header, its index (or a scan when it has none:
 * info->truncated) and its metadata. NULL with errno set; opts->errbuf
 * then says why, with the offset.
 */
LIBMEMMON_API struct memmon_trace_reader *
memmon_trace_reader__open(const char *path,
			  const struct memmon_trace_reader_opts *opts);
/* Close the file and free the reader. NULL is fine. */
LIBMEMMON_API void memmon_trace_reader__close(struct memmon_trace_reader *r);
/* What the file says about itself; valid until close. */
LIBMEMMON_API const struct memmon_trace_info *
memmon_trace_reader__info(const struct memmon_trace_reader *r);
/* All metadata blocks merged into one JSON object (text); never NULL. */
LIBMEMMON_API const char *memmon_trace_reader__meta(const struct memmon_trace_reader *r);
/*
 * Every record of the file, merged across CPUs in time order (ties: lower
 * CPU, then file order), zero-copy from the chunk's buffer (or its
 * decompression buffer). Records of unknown types are delivered too:
 * decoders skip them; ones whose length is bad are skipped and counted
 * (memmon_trace_reader__bad_records()). Returns the number of records delivered, or a
 * negative errno (-EBADMSG: corruption; memmon_trace_reader__errmsg()
 * names the offset). Callback return values as memmon_record_fn.
 */
LIBMEMMON_API long memmon_trace_reader__for_each(struct memmon_trace_reader *r,
						 memmon_record_fn fn, void *ctx);
/*
 * Limit the next passes of memmon_trace_reader__for_each() to a time
 * window, using the index: a CPU's chunks that end before start_ns, and
 * those from which on every chunk starts after end_ns, are not read. The
 * pass delivers exactly the records of a full pass with time_ns >=
 * start_ns, in the same order; records after end_ns may be delivered too
 * (the chunks that hold the window's last records), so the caller filters
 * them. (0, UINT64_MAX) is the whole file again. -EINVAL
 * if start_ns > end_ns. Since MEMMON_0.3.
 */
LIBMEMMON_API int memmon_trace_reader__set_window(struct memmon_trace_reader *r,
						  __u64 start_ns, __u64 end_ns);
/*
 * How many malformed records the passes of memmon_trace_reader__for_each()
 * have met inside chunks whose checksum holds (a file this library wrote
 * has none): one whose length cannot be trusted is skipped with the rest
 * of its chunk, and counts one; a record with a sound length but bad
 * contents is delivered (the decoder refuses it) and counts one. A damaged
 * chunk (checksum) is an error, not a skip. 0 for NULL. Since MEMMON_0.5.
 */
LIBMEMMON_API __u64 memmon_trace_reader__bad_records(const struct memmon_trace_reader *r);
/* The last error's message ("" if none). */
LIBMEMMON_API const char *memmon_trace_reader__errmsg(const struct memmon_trace_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* MEMMON_LIBMEMMON_INCLUDE_MEMMON_TRACE_H */
