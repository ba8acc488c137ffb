// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Trace file writer. One thread uses a writer at a time. Every write goes
 * through one sticky error: after the first failure nothing more is
 * written and close() reports it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <jansson.h>
#include <zstd.h>
#include <memmon_rec_check.h>
#include "internal.h"
#include "trace_format.h"

struct memmon_trace_writer {
	int fd;
	int err;			/* first error, sticky */
	__u64 off;			/* where the next block goes */
	__u32 nr_cpus;
	int level;
	__u64 *lost;			/* per CPU, from LOST records */
	struct mtf_index_entry *idx;
	size_t nr_idx, cap_idx;
	void *zbuf;
	size_t zcap;
};

static int write_all(struct memmon_trace_writer *w, const struct iovec *iov,
		     int cnt)
{
	struct iovec v[4];
	ssize_t n;
	int i;

	if (w->err)
		return w->err;
	memcpy(v, iov, sizeof(*iov) * (size_t)cnt);
	i = 0;
	while (i < cnt) {
		n = writev(w->fd, &v[i], cnt - i);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->err = -errno;
			return w->err;
		}
		w->off += (__u64)n;
		while (i < cnt && (size_t)n >= v[i].iov_len)
			n -= (ssize_t)v[i++].iov_len;
		if (i < cnt) {
			v[i].iov_base = (char *)v[i].iov_base + n;
			v[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int index_add(struct memmon_trace_writer *w, const struct mtf_block *b,
		     __u64 off)
{
	struct mtf_index_entry *e;

	if (w->nr_idx == w->cap_idx) {
		size_t ncap = w->cap_idx ? w->cap_idx * 2 : 256;

		e = realloc(w->idx, ncap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		w->idx = e;
		w->cap_idx = ncap;
	}
	e = &w->idx[w->nr_idx++];
	memset(e, 0, sizeof(*e));
	e->offset = off;
	e->type = b->type;
	e->cpu = b->cpu;
	e->first_ns = b->first_ns;
	e->last_ns = b->last_ns;
	e->nr_records = b->nr_records;
	return 0;
}

static int write_block(struct memmon_trace_writer *w, struct mtf_block *b,
		       const void *payload, size_t len)
{
	static const char zeros[8];
	struct iovec iov[3];
	__u64 start = w->off;
	size_t pad = (size_t)(mtf_align8(len) - len);
	int err;

	b->magic = MTF_BLOCK_MAGIC;
	b->header_size = sizeof(*b);
	b->payload_size = len;
	b->payload_crc = mtf_crc32(payload, len);
	b->header_crc = 0;
	b->header_crc = mtf_crc32(b, sizeof(*b));
	iov[0].iov_base = b;
	iov[0].iov_len = sizeof(*b);
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = len;
	iov[2].iov_base = (void *)zeros;
	iov[2].iov_len = pad;
	err = write_all(w, iov, pad ? 3 : 2);
	if (err)
		return err;
	if (b->type != MTF_BLOCK_INDEX) {
		err = index_add(w, b, start);
		if (err)
			return w->err = err;
	}
	return 0;
}

struct memmon_trace_writer *
memmon_trace_writer__open(const char *path,
			  const struct memmon_trace_writer_opts *opts)
{
	struct memmon_trace_writer *w;
	struct mtf_file_header h;
	struct timespec ts;
	struct iovec iov;
	int err;

	if (!path || !OPTS_VALID(opts, memmon_trace_writer_opts) ||
	    !OPTS_GET(opts, nr_cpus, 0) || OPTS_GET(opts, nr_cpus, 0) > 65536 ||
	    OPTS_GET(opts, compress_level, 0) < 0 ||
	    OPTS_GET(opts, compress_level, 0) > ZSTD_maxCLevel())
		return libmm_err_ptr(-EINVAL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return libmm_err_ptr(-ENOMEM);
	w->nr_cpus = OPTS_GET(opts, nr_cpus, 0);
	w->level = OPTS_GET(opts, compress_level, 0);
	w->lost = calloc(w->nr_cpus, sizeof(*w->lost));
	if (!w->lost) {
		err = -ENOMEM;
		goto err_free;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		err = -errno;
		goto err_free;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MTF_MAGIC, sizeof(h.magic));
	h.version_major = MTF_VERSION_MAJOR;
	h.version_minor = MTF_VERSION_MINOR;
	h.header_size = sizeof(h);
	h.nr_cpus = w->nr_cpus;
	h.clock = MEMMON_CLOCK_MONOTONIC;
	h.rec_abi_major = MEMMON_ABI_MAJOR;
	h.rec_abi_minor = MEMMON_ABI_MINOR;
	h.realtime_offset_ns = OPTS_GET(opts, realtime_offset_ns, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	h.created_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	h.header_crc = mtf_crc32(&h, sizeof(h));
	iov.iov_base = &h;
	iov.iov_len = sizeof(h);
	err = write_all(w, &iov, 1);
	if (err)
		goto err_close;
	return w;

err_close:
	close(w->fd);
err_free:
	free(w->lost);
	free(w);
	return libmm_err_ptr(err);
}

int memmon_trace_writer__add_chunk(struct memmon_trace_writer *w,
				   unsigned int cpu, const void *recs,
				   size_t len)
{
	const __u8 *p = recs;
	struct mtf_block b;
	const void *payload = recs;
	size_t plen = len, off;
	__u64 lost = 0;
	__u32 size;

	if (!w || cpu >= w->nr_cpus || (len && !recs) || len > MTF_CHUNK_MAX)
		return libmm_err(-EINVAL);
	if (w->err)
		return libmm_err(w->err);
	if (!len)
		return 0;
	memset(&b, 0, sizeof(b));
	b.type = MTF_BLOCK_CHUNK;
	b.cpu = cpu;
	b.raw_size = len;
	b.first_ns = UINT64_MAX;
	for (off = 0; off < len; off += size) {
		const struct memmon_rec_header *h = (const void *)(p + off);

		/* Never write what a reader would skip: refuse the chunk. */
		if (memmon_rec_check(h, len - off, &size) == MEMMON_REC_BAD_FRAME)
			return libmm_err(-EBADMSG);
		if (h->time_ns < b.first_ns)
			b.first_ns = h->time_ns;
		if (h->time_ns > b.last_ns)
			b.last_ns = h->time_ns;
		if (h->type == MEMMON_REC_LOST && size >= sizeof(struct memmon_rec_lost))
			lost += ((const struct memmon_rec_lost *)h)->count;
		b.nr_records++;
	}
	if (w->level) {
		size_t bound = ZSTD_compressBound(len), n;

		if (bound > w->zcap) {
			void *nb = realloc(w->zbuf, bound);

			if (!nb)
				return libmm_err(-ENOMEM);
			w->zbuf = nb;
			w->zcap = bound;
		}
		n = ZSTD_compress(w->zbuf, w->zcap, recs, len, w->level);
		if (ZSTD_isError(n))
			return libmm_err(-EIO);
		/* Worth it only if smaller; a reader takes either. */
		if (n < len) {
			b.compression = MTF_COMP_ZSTD;
			payload = w->zbuf;
			plen = n;
		}
	}
	if (write_block(w, &b, payload, plen))
		return libmm_err(w->err);
	w->lost[cpu] += lost;
	return 0;
}

int memmon_trace_writer__add_meta(struct memmon_trace_writer *w,
				  const char *json_object)
{
	struct mtf_block b;
	json_t *j;

	if (!w || !json_object)
		return libmm_err(-EINVAL);
	/* Only objects: readers merge them key by key. */
	j = json_loads(json_object, JSON_REJECT_DUPLICATES, NULL);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return libmm_err(-EINVAL);
	}
	json_decref(j);
	memset(&b, 0, sizeof(b));
	b.type = MTF_BLOCK_META;
	if (write_block(w, &b, json_object, strlen(json_object)))
		return libmm_err(w->err);
	return 0;
}

__u64 memmon_trace_writer__lost(const struct memmon_trace_writer *w,
				unsigned int cpu)
{
	return w && cpu < w->nr_cpus ? w->lost[cpu] : 0;
}

__u64 memmon_trace_writer__bytes(const struct memmon_trace_writer *w)
{
	return w ? w->off : 0;
}

static int write_end(struct memmon_trace_writer *w)
{
	struct mtf_trailer t;
	struct mtf_index ih;
	struct mtf_block b;
	struct iovec iov[4];
	json_t *meta, *lost;
	char *text;
	__u64 idx_off;
	__u32 c;
	int err;

	/* The exact losses, as counted from the LOST records written. */
	meta = json_object();
	lost = json_array();
	for (c = 0; meta && lost && c < w->nr_cpus; c++)
		json_array_append_new(lost, json_integer((json_int_t)w->lost[c]));
	if (!meta || !lost || json_object_set_new(meta, "lost_records_per_cpu", lost)) {
		json_decref(meta);
		return -ENOMEM;
	}
	text = json_dumps(meta, JSON_COMPACT);
	json_decref(meta);
	if (!text)
		return -ENOMEM;
	err = memmon_trace_writer__add_meta(w, text);
	free(text);
	if (err)
		return w->err ? w->err : err;

	idx_off = w->off;
	memset(&ih, 0, sizeof(ih));
	ih.entry_size = sizeof(struct mtf_index_entry);
	ih.nr_entries = w->nr_idx;
	memset(&b, 0, sizeof(b));
	b.type = MTF_BLOCK_INDEX;
	b.magic = MTF_BLOCK_MAGIC;
	b.header_size = sizeof(b);
	b.payload_size = sizeof(ih) + w->nr_idx * sizeof(*w->idx);
	b.payload_crc = mtf_crc32_update(mtf_crc32(&ih, sizeof(ih)), w->idx,
					 w->nr_idx * sizeof(*w->idx));
	b.header_crc = mtf_crc32(&b, sizeof(b));

	memset(&t, 0, sizeof(t));
	memcpy(t.magic, MTF_TRAILER_MAGIC, sizeof(t.magic));
	t.index_offset = idx_off;
	t.file_size = idx_off + sizeof(b) + b.payload_size + sizeof(t);
	t.crc = mtf_crc32(&t, offsetof(struct mtf_trailer, crc));

	iov[0].iov_base = &b;
	iov[0].iov_len = sizeof(b);
	iov[1].iov_base = &ih;
	iov[1].iov_len = sizeof(ih);
	iov[2].iov_base = w->idx;
	iov[2].iov_len = w->nr_idx * sizeof(*w->idx);
	iov[3].iov_base = &t;
	iov[3].iov_len = sizeof(t);
	return write_all(w, iov, 4);
}

int memmon_trace_writer__close(struct memmon_trace_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = w->err;
	if (!err)
		err = write_end(w);
	if (!err && fsync(w->fd) < 0 && errno != EINVAL)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	free(w->idx);
	free(w->zbuf);
	free(w->lost);
	free(w);
	return libmm_err(err);
}
