// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Trace file reader.
 *
 * Memory stays flat: per CPU one chunk is in a buffer at a time, read
 * with pread() (never mapped: a file cut short under a mapping is a
 * SIGBUS, under pread() an end of file at a known offset), and the page
 * cache behind each chunk read is dropped. The index is the only thing
 * proportional to the file (40 bytes per chunk).
 *
 * Nothing in the file is trusted: every size is checked against the file
 * and the enclosing block before use, every block's header and payload
 * against their checksums. A failure is -EBADMSG with a message naming
 * the offset (memmon_trace_reader__errmsg()). Inside a chunk whose
 * checksum holds, memmon_rec_check() decides: a record whose length
 * cannot be trusted is skipped with the rest of its chunk and counted
 * (memmon_trace_reader__bad_records()); one whose length is sound is
 * delivered, for the decoder to refuse by name.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include <zstd.h>
#include <memmon_rec_check.h>
#include "internal.h"
#include "merge.h"
#include "trace_format.h"

#define MTF_META_MAX	(16U << 20)
#define MTF_HEADER_MAX	4096U

struct src {
	__u64 *chunks;		/* block offsets of this CPU, file order */
	__u64 (*span)[2];	/* [i]: chunks[i]'s first_ns, last_ns */
	size_t nr, cap;
	size_t next;		/* the chunk to load next */
	size_t begin, end;	/* the window's chunks: [begin, end) */
	__u8 *buf;		/* the loaded chunk's payload, as on disk */
	size_t bcap;
	const __u8 *data;	/* the records of the loaded chunk */
	__u64 len;
	__u64 pos;
	__u64 chunk_off;	/* block offset of the loaded chunk */
	bool compressed;
	void *zbuf;
	size_t zcap;
};

struct memmon_trace_reader {
	int fd;
	long page;
	struct memmon_trace_info info;
	json_t *meta;
	char *meta_text;
	struct src *src;
	struct libmm_merge merge;
	__u64 win_start;	/* records before this are not delivered */
	__u64 bad_records;	/* skipped by memmon_rec_check()'s verdict */
	char errmsg[512];
};

static int __attribute__((format(printf, 3, 4)))
fail(struct memmon_trace_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

static int read_at(struct memmon_trace_reader *r, void *buf, size_t len,
		   __u64 off)
{
	ssize_t n;
	size_t done = 0;

	while (done < len) {
		n = pread(r->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno ? errno : EIO;

			return fail(r, -e, "read at offset %llu: %s",
				    (unsigned long long)(off + done), strerror(e));
		}
		if (!n)
			return fail(r, -EBADMSG, "unexpected end of file at offset %llu",
				    (unsigned long long)(off + done));
		done += (size_t)n;
	}
	return 0;
}

/*
 * Read and check the block header at off. Returns 0, or -EBADMSG with the
 * reason in errmsg. *torn tells a block cut short by the end of the file
 * (what a killed writer leaves) from one that is damaged.
 */
static int read_block(struct memmon_trace_reader *r, __u64 off,
		      struct mtf_block *b, bool *torn)
{
	__u64 size = r->info.file_size;
	__u8 raw[MTF_HEADER_MAX];
	__u32 want;
	int err;

	*torn = false;
	if (size - off < sizeof(*b)) {
		*torn = true;
		return fail(r, -EBADMSG, "block at offset %llu: cut short by the "
			    "end of the file", (unsigned long long)off);
	}
	err = read_at(r, b, sizeof(*b), off);
	if (err)
		return err;
	if (b->magic != MTF_BLOCK_MAGIC)
		return fail(r, -EBADMSG, "block at offset %llu: bad magic %#x",
			    (unsigned long long)off, b->magic);
	if (b->header_size < sizeof(*b) || b->header_size > MTF_HEADER_MAX ||
	    b->header_size % 8)
		return fail(r, -EBADMSG, "block at offset %llu: bad header size %u",
			    (unsigned long long)off, b->header_size);
	if (size - off < b->header_size) {
		*torn = true;
		return fail(r, -EBADMSG, "block at offset %llu: header cut short "
			    "by the end of the file", (unsigned long long)off);
	}
	err = read_at(r, raw, b->header_size, off);
	if (err)
		return err;
	want = b->header_crc;
	memset(raw + offsetof(struct mtf_block, header_crc), 0, 4);
	if (mtf_crc32(raw, b->header_size) != want)
		return fail(r, -EBADMSG, "block at offset %llu: header checksum "
			    "mismatch", (unsigned long long)off);
	if (b->payload_size > size - off - b->header_size) {
		*torn = true;
		return fail(r, -EBADMSG, "block at offset %llu: payload of %llu "
			    "bytes runs past the end of the file (%llu)",
			    (unsigned long long)off,
			    (unsigned long long)b->payload_size,
			    (unsigned long long)size);
	}
	if (b->type == MTF_BLOCK_CHUNK) {
		if (b->cpu >= r->info.nr_cpus)
			return fail(r, -EBADMSG, "chunk at offset %llu: cpu %u, "
				    "but the file has %u CPUs",
				    (unsigned long long)off, b->cpu,
				    r->info.nr_cpus);
		if (b->compression > MTF_COMP_ZSTD ||
		    b->raw_size > MTF_CHUNK_MAX ||
		    (b->compression == MTF_COMP_NONE &&
		     b->raw_size != b->payload_size))
			return fail(r, -EBADMSG, "chunk at offset %llu: bad "
				    "compression %u or size %llu",
				    (unsigned long long)off, b->compression,
				    (unsigned long long)b->raw_size);
	}
	return 0;
}

static __u64 block_end(const struct mtf_block *b, __u64 off)
{
	return off + b->header_size + mtf_align8(b->payload_size);
}

static int add_chunk(struct memmon_trace_reader *r, const struct mtf_block *b,
		     __u64 off)
{
	struct src *s = &r->src[b->cpu];

	if (s->nr == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		__u64 *n = realloc(s->chunks, ncap * sizeof(*n));
		__u64 (*sp)[2];

		if (!n)
			return fail(r, -ENOMEM, "out of memory");
		s->chunks = n;
		sp = realloc(s->span, ncap * sizeof(*sp));
		if (!sp)
			return fail(r, -ENOMEM, "out of memory");
		s->span = sp;
		s->cap = ncap;
	}
	/* An empty chunk holds nothing of any window: an empty span. */
	s->span[s->nr][0] = b->nr_records ? b->first_ns : UINT64_MAX;
	s->span[s->nr][1] = b->nr_records ? b->last_ns : 0;
	s->chunks[s->nr++] = off;
	s->end = s->nr;
	r->info.nr_chunks++;
	r->info.nr_records += b->nr_records;
	if (b->nr_records) {
		if (b->first_ns < r->info.first_ns)
			r->info.first_ns = b->first_ns;
		if (b->last_ns > r->info.last_ns)
			r->info.last_ns = b->last_ns;
	}
	return 0;
}

static int read_meta(struct memmon_trace_reader *r, const struct mtf_block *b,
		     __u64 off)
{
	json_error_t jerr;
	json_t *j;
	char *buf;
	int err;

	if (b->payload_size > MTF_META_MAX)
		return fail(r, -EBADMSG, "metadata at offset %llu: %llu bytes is "
			    "too large", (unsigned long long)off,
			    (unsigned long long)b->payload_size);
	buf = malloc(b->payload_size + 1);
	if (!buf)
		return fail(r, -ENOMEM, "out of memory");
	err = read_at(r, buf, b->payload_size, off + b->header_size);
	if (err)
		goto out;
	if (mtf_crc32(buf, b->payload_size) != b->payload_crc) {
		err = fail(r, -EBADMSG, "metadata at offset %llu: checksum "
			   "mismatch", (unsigned long long)off);
		goto out;
	}
	j = json_loadb(buf, b->payload_size, 0, &jerr);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		err = fail(r, -EBADMSG, "metadata at offset %llu: not a JSON "
			   "object", (unsigned long long)off);
		goto out;
	}
	json_object_update(r->meta, j);
	json_decref(j);
out:
	free(buf);
	return err;
}

/* The file as the writer left it after close(): trailer -> index. */
static int load_index(struct memmon_trace_reader *r, bool *have)
{
	__u64 size = r->info.file_size, ioff, plen, i;
	struct mtf_trailer t;
	struct mtf_index ih;
	struct mtf_block b;
	__u8 *payload = NULL;
	bool torn;
	int err;

	*have = false;
	if (size < sizeof(struct mtf_file_header) + sizeof(t) + sizeof(b))
		return 0;
	err = read_at(r, &t, sizeof(t), size - sizeof(t));
	if (err)
		return err;
	/* No trailer: the writer did not finish. Scan instead. */
	if (memcmp(t.magic, MTF_TRAILER_MAGIC, sizeof(t.magic)) ||
	    mtf_crc32(&t, offsetof(struct mtf_trailer, crc)) != t.crc ||
	    t.file_size != size)
		return 0;
	ioff = t.index_offset;
	if (ioff < sizeof(struct mtf_file_header) || ioff > size - sizeof(t) - sizeof(b) ||
	    ioff % 8)
		return fail(r, -EBADMSG, "trailer at offset %llu: index offset "
			    "%llu out of the file", (unsigned long long)(size - sizeof(t)),
			    (unsigned long long)ioff);
	err = read_block(r, ioff, &b, &torn);
	if (err)
		return err;
	if (b.type != MTF_BLOCK_INDEX || block_end(&b, ioff) != size - sizeof(t))
		return fail(r, -EBADMSG, "index at offset %llu: not an index block "
			    "ending at the trailer", (unsigned long long)ioff);
	plen = b.payload_size;
	if (plen < sizeof(ih))
		return fail(r, -EBADMSG, "index at offset %llu: too short",
			    (unsigned long long)ioff);
	payload = malloc(plen);
	if (!payload)
		return fail(r, -ENOMEM, "out of memory");
	err = read_at(r, payload, plen, ioff + b.header_size);
	if (err)
		goto out;
	if (mtf_crc32(payload, plen) != b.payload_crc) {
		err = fail(r, -EBADMSG, "index at offset %llu: checksum mismatch",
			   (unsigned long long)ioff);
		goto out;
	}
	memcpy(&ih, payload, sizeof(ih));
	if (ih.entry_size < sizeof(struct mtf_index_entry) || ih.entry_size % 8 ||
	    ih.nr_entries > (plen - sizeof(ih)) / ih.entry_size) {
		err = fail(r, -EBADMSG, "index at offset %llu: bad entry size %u "
			   "or count %llu", (unsigned long long)ioff, ih.entry_size,
			   (unsigned long long)ih.nr_entries);
		goto out;
	}
	for (i = 0; i < ih.nr_entries; i++) {
		struct mtf_index_entry e;
		struct mtf_block eb;

		memcpy(&e, payload + sizeof(ih) + i * ih.entry_size, sizeof(e));
		if (e.offset < sizeof(struct mtf_file_header) || e.offset >= ioff ||
		    e.offset % 8) {
			err = fail(r, -EBADMSG, "index at offset %llu: entry %llu "
				   "points outside the file (%llu)",
				   (unsigned long long)ioff, (unsigned long long)i,
				   (unsigned long long)e.offset);
			goto out;
		}
		if (e.type == MTF_BLOCK_CHUNK) {
			if (e.cpu >= r->info.nr_cpus) {
				err = fail(r, -EBADMSG, "index at offset %llu: "
					   "entry %llu has cpu %u",
					   (unsigned long long)ioff,
					   (unsigned long long)i, e.cpu);
				goto out;
			}
			/* The chunk itself is checked when it is read. */
			memset(&eb, 0, sizeof(eb));
			eb.cpu = e.cpu;
			eb.nr_records = e.nr_records;
			eb.first_ns = e.first_ns;
			eb.last_ns = e.last_ns;
			err = add_chunk(r, &eb, e.offset);
		} else if (e.type == MTF_BLOCK_META) {
			err = read_block(r, e.offset, &eb, &torn);
			if (!err && eb.type != MTF_BLOCK_META)
				err = fail(r, -EBADMSG, "index entry %llu: block "
					   "at offset %llu is not metadata",
					   (unsigned long long)i,
					   (unsigned long long)e.offset);
			if (!err)
				err = read_meta(r, &eb, e.offset);
		}
		if (err)
			goto out;
	}
	*have = true;
out:
	free(payload);
	return err;
}

/* No index: walk the blocks from the start until the file ends or breaks. */
static int scan(struct memmon_trace_reader *r, __u64 off)
{
	struct mtf_block b;
	bool torn;
	int err;

	r->info.truncated = true;
	while (off < r->info.file_size) {
		err = read_block(r, off, &b, &torn);
		if (err == -EBADMSG) {
			/* A torn or garbled tail: what a crash leaves. */
			r->info.truncated_at = off;
			return 0;
		}
		if (err)
			return err;
		if (b.type == MTF_BLOCK_CHUNK)
			err = add_chunk(r, &b, off);
		else if (b.type == MTF_BLOCK_META)
			err = read_meta(r, &b, off);
		if (err == -EBADMSG) {
			r->info.truncated_at = off;
			return 0;
		}
		if (err)
			return err;
		off = block_end(&b, off);
	}
	r->info.truncated_at = off < r->info.file_size ? off : r->info.file_size;
	return 0;
}

static int read_header(struct memmon_trace_reader *r)
{
	__u8 raw[MTF_HEADER_MAX];
	struct mtf_file_header h;
	__u32 want;
	int err;

	if (r->info.file_size < sizeof(h))
		return fail(r, -EBADMSG, "file header cut short at offset %llu "
			    "(%zu bytes needed)",
			    (unsigned long long)r->info.file_size, sizeof(h));
	err = read_at(r, &h, sizeof(h), 0);
	if (err)
		return err;
	if (memcmp(h.magic, MTF_MAGIC, sizeof(h.magic)))
		return fail(r, -EBADMSG, "not a memmon trace file (bad magic at "
			    "offset 0)");
	if (h.version_major != MTF_VERSION_MAJOR)
		return fail(r, -EPROTONOSUPPORT, "trace format version %u.%u is "
			    "not supported (this reader: %u.x)", h.version_major,
			    h.version_minor, MTF_VERSION_MAJOR);
	if (h.header_size < sizeof(h) || h.header_size > MTF_HEADER_MAX ||
	    h.header_size % 8 || h.header_size > r->info.file_size)
		return fail(r, -EBADMSG, "file header at offset 0: bad header "
			    "size %u", h.header_size);
	err = read_at(r, raw, h.header_size, 0);
	if (err)
		return err;
	want = h.header_crc;
	memset(raw + offsetof(struct mtf_file_header, header_crc), 0, 4);
	if (mtf_crc32(raw, h.header_size) != want)
		return fail(r, -EBADMSG, "file header at offset 0: checksum "
			    "mismatch");
	if (!h.nr_cpus || h.nr_cpus > 65536)
		return fail(r, -EBADMSG, "file header at offset 0: bad CPU count "
			    "%u", h.nr_cpus);
	r->info.version_major = h.version_major;
	r->info.version_minor = h.version_minor;
	r->info.nr_cpus = h.nr_cpus;
	r->info.clock = h.clock;
	r->info.realtime_offset_ns = h.realtime_offset_ns;
	return (int)h.header_size;
}

struct memmon_trace_reader *
memmon_trace_reader__open(const char *path,
			  const struct memmon_trace_reader_opts *opts)
{
	struct memmon_trace_reader *r;
	struct stat st;
	bool have;
	int err, hsize;

	if (!path || !OPTS_VALID(opts, memmon_trace_reader_opts))
		return libmm_err_ptr(-EINVAL);
	r = calloc(1, sizeof(*r));
	if (!r)
		return libmm_err_ptr(-ENOMEM);
	r->fd = -1;
	r->page = sysconf(_SC_PAGESIZE);
	r->info.first_ns = UINT64_MAX;
	r->meta = json_object();
	if (!r->meta) {
		err = fail(r, -ENOMEM, "out of memory");
		goto err_out;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = fail(r, -errno, "%s", strerror(errno));
		goto err_out;
	}
	if (fstat(r->fd, &st) < 0) {
		err = fail(r, -errno, "%s", strerror(errno));
		goto err_out;
	}
	r->info.file_size = (__u64)st.st_size;
	hsize = read_header(r);
	if (hsize < 0) {
		err = hsize;
		goto err_out;
	}
	r->src = calloc(r->info.nr_cpus, sizeof(*r->src));
	if (!r->src) {
		err = fail(r, -ENOMEM, "out of memory");
		goto err_out;
	}
	err = load_index(r, &have);
	if (err)
		goto err_out;
	r->info.has_index = have;
	if (!have) {
		err = scan(r, (__u64)hsize);
		if (err)
			goto err_out;
	}
	if (r->info.first_ns == UINT64_MAX)
		r->info.first_ns = 0;
	err = libmm_merge_init(&r->merge, r->info.nr_cpus);
	if (err) {
		fail(r, err, "out of memory");
		goto err_out;
	}
	r->meta_text = json_dumps(r->meta, JSON_COMPACT);
	if (!r->meta_text) {
		err = fail(r, -ENOMEM, "out of memory");
		goto err_out;
	}
	r->errmsg[0] = '\0';
	return r;

err_out:
	if (OPTS_GET(opts, errbuf, NULL) && OPTS_GET(opts, errbuf_size, 0))
		snprintf(opts->errbuf, opts->errbuf_size, "%s: %s", path, r->errmsg);
	memmon_trace_reader__close(r);
	return libmm_err_ptr(err);
}

static void src_unload(struct src *s)
{
	s->data = NULL;
	s->len = s->pos = 0;
}

/* Grow buf to n bytes (kept for the next chunk: one allocation per CPU). */
static int grow(struct memmon_trace_reader *r, __u8 **buf, size_t *cap,
		size_t n)
{
	void *nb;

	if (n <= *cap)
		return 0;
	nb = realloc(*buf, n);
	if (!nb)
		return fail(r, -ENOMEM, "out of memory");
	*buf = nb;
	*cap = n;
	return 0;
}
/*
 * Read (and check, and maybe decompress) chunk number s->next. The file may
 * shrink under us: read_at() then fails with the offset where it ended.
 */
static int src_load(struct memmon_trace_reader *r, struct src *s, unsigned int cpu)
{
	__u64 off = s->chunks[s->next++], start, end;
	struct mtf_block b;
	bool torn;
	int err;

	err = read_block(r, off, &b, &torn);
	if (err)
		return err;
	if (b.type != MTF_BLOCK_CHUNK || b.cpu != cpu)
		return fail(r, -EBADMSG, "block at offset %llu: not a chunk of "
			    "cpu %u as the index says", (unsigned long long)off, cpu);
	/*
	 * read_block() checked the payload against the file's size; a
	 * compressed one is at most ZSTD_compressBound(MTF_CHUNK_MAX) in any
	 * file this library wrote, and no larger than the file in any other.
	 */
	if (b.payload_size > SIZE_MAX)
		return fail(r, -EBADMSG, "chunk at offset %llu: payload of %llu "
			    "bytes", (unsigned long long)off,
			    (unsigned long long)b.payload_size);
	err = grow(r, &s->buf, &s->bcap, (size_t)b.payload_size);
	if (err)
		return err;
	err = read_at(r, s->buf, (size_t)b.payload_size, off + b.header_size);
	if (err)
		return err;
	/*
	 * Drop the page cache behind us: flat memory on big files. Only the
	 * pages wholly inside this block: the ones at its ends hold the
	 * neighbours' bytes, which may not be read yet.
	 */
	start = (off + (__u64)r->page - 1) & ~((__u64)r->page - 1);
	end = (off + b.header_size + b.payload_size) & ~((__u64)r->page - 1);
	if (end > start)
		posix_fadvise(r->fd, (off_t)start, (off_t)(end - start),
			      POSIX_FADV_DONTNEED);
	if (mtf_crc32(s->buf, b.payload_size) != b.payload_crc)
		return fail(r, -EBADMSG, "chunk at offset %llu (cpu %u): checksum "
			    "mismatch", (unsigned long long)off, cpu);
	s->chunk_off = off;
	s->compressed = b.compression == MTF_COMP_ZSTD;
	if (s->compressed) {
		size_t n;
		__u8 *zb = s->zbuf;

		err = grow(r, &zb, &s->zcap, (size_t)b.raw_size);
		s->zbuf = zb;
		if (err)
			return err;
		n = ZSTD_decompress(s->zbuf, s->zcap, s->buf, b.payload_size);
		if (ZSTD_isError(n) || n != b.raw_size)
			return fail(r, -EBADMSG, "chunk at offset %llu (cpu %u): "
				    "zstd: %s", (unsigned long long)off, cpu,
				    ZSTD_isError(n) ? ZSTD_getErrorName(n) :
				    "wrong size");
		s->data = s->zbuf;
	} else {
		s->data = s->buf;
	}
	s->len = b.raw_size;
	s->pos = 0;
	return 0;
}

/* The next record of cpu's stream into the merge (or the source is done). */
static int src_push(struct memmon_trace_reader *r, unsigned int cpu, bool replace)
{
	struct src *s = &r->src[cpu];
	const struct memmon_rec_header *h;
	struct libmm_merge_node n;
	__u32 size;
	int err;

again:
	while (s->pos >= s->len) {
		src_unload(s);
		if (s->next >= s->end) {
			if (replace)
				libmm_merge_pop(&r->merge);
			return 0;
		}
		err = src_load(r, s, cpu);
		if (err)
			return err;
	}
	h = (const void *)(s->data + s->pos);
	/*
	 * The merge takes this stream's records one in k (k CPUs): by the
	 * time it gets here again the lines ahead would have to come from
	 * far away. Ask for them now (a hint: past the end is harmless).
	 */
	__builtin_prefetch(s->data + s->pos + 256);
	switch (memmon_rec_check(h, s->len - s->pos, &size)) {
	case MEMMON_REC_OK:
		break;
	case MEMMON_REC_BAD_BODY:
		/*
		 * Framed, so the stream is intact: delivered (and counted),
		 * and the decoder refuses it by name (memmon script and
		 * export report such a record rather than lose it silently).
		 */
		r->bad_records++;
		break;
	case MEMMON_REC_BAD_FRAME:
		/* No later record of this chunk can be found: the next one. */
		r->bad_records++;
		s->pos = s->len;
		goto again;
	}
	/* Before the window: as if this CPU's stream did not hold it. */
	if (h->time_ns < r->win_start) {
		s->pos += size;
		goto again;
	}
	n.time = h->time_ns;
	n.pos = s->pos;
	n.src = cpu;
	n.size = size;
	if (replace)
		libmm_merge_replace_top(&r->merge, &n);
	else
		libmm_merge_push(&r->merge, &n);
	return 0;
}

long memmon_trace_reader__for_each(struct memmon_trace_reader *r,
				   memmon_record_fn fn, void *ctx)
{
	const struct libmm_merge_node *top;
	long cnt = 0;
	unsigned int c;
	int err = 0, ret;

	if (!r || !fn)
		return libmm_err(-EINVAL);
	r->errmsg[0] = '\0';
	libmm_merge_reset(&r->merge);
	for (c = 0; c < r->info.nr_cpus; c++) {
		src_unload(&r->src[c]);
		r->src[c].next = r->src[c].begin;
	}
	for (c = 0; c < r->info.nr_cpus && !err; c++)
		err = src_push(r, c, false);
	while (!err && (top = libmm_merge_top(&r->merge))) {
		struct src *s = &r->src[top->src];

		ret = fn(ctx, (const void *)(s->data + top->pos));
		cnt++;
		s->pos = top->pos + top->size;
		if (ret < 0) {
			err = ret;
			fail(r, ret, "stopped by the callback: %s", strerror(-ret));
			break;
		}
		if (ret > 0)
			break;
		err = src_push(r, top->src, true);
	}
	for (c = 0; c < r->info.nr_cpus; c++)
		src_unload(&r->src[c]);
	if (err)
		return libmm_err(err);
	return cnt;
}

void memmon_trace_reader__close(struct memmon_trace_reader *r)
{
	unsigned int c;

	if (!r)
		return;
	for (c = 0; r->src && c < r->info.nr_cpus; c++) {
		free(r->src[c].chunks);
		free(r->src[c].span);
		free(r->src[c].buf);
		free(r->src[c].zbuf);
	}
	free(r->src);
	libmm_merge_fini(&r->merge);
	json_decref(r->meta);
	free(r->meta_text);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

const struct memmon_trace_info *
memmon_trace_reader__info(const struct memmon_trace_reader *r)
{
	return r ? &r->info : libmm_err_ptr(-EINVAL);
}

const char *memmon_trace_reader__meta(const struct memmon_trace_reader *r)
{
	return r && r->meta_text ? r->meta_text : "{}";
}

/*
 * Why this is exact (the same records, in the same order, as a full pass
 * that drops those before start_ns), without trusting a CPU's records to
 * be in time order (the driver writes them so; a file is not trusted to
 * be what the driver wrote). The merge always takes the smallest head;
 * removing every record before start_ns from every stream changes no head
 * at the moment a full pass delivers a record at or after start_ns (all
 * heads are then >= start_ns, and what came before them in their stream
 * was delivered), so the order of what is left is the same. The chunks
 * before a CPU's first one with last_ns >= start_ns hold only such
 * records. At the other end, only a suffix is cut: from the first chunk
 * after which every chunk starts after end_ns; a stream's tail that never
 * reaches the output changes nothing of the order of the others. Records
 * after end_ns inside the kept chunks are delivered: the caller filters
 * (dropping them inside a stream would reorder what is left).
 */
int memmon_trace_reader__set_window(struct memmon_trace_reader *r,
				    __u64 start_ns, __u64 end_ns)
{
	unsigned int c;
	size_t i;

	if (!r || start_ns > end_ns)
		return libmm_err(-EINVAL);
	r->win_start = start_ns;
	for (c = 0; c < r->info.nr_cpus; c++) {
		struct src *s = &r->src[c];

		for (i = 0; i < s->nr && s->span[i][1] < start_ns; i++)
			;
		s->begin = i;
		for (i = s->nr; i > s->begin && s->span[i - 1][0] > end_ns; i--)
			;
		s->end = i;
	}
	return 0;
}

const char *memmon_trace_reader__errmsg(const struct memmon_trace_reader *r)
{
	return r ? r->errmsg : "";
}

__u64 memmon_trace_reader__bad_records(const struct memmon_trace_reader *r)
{
	return r ? r->bad_records : 0;
}
