// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Consuming the per-CPU rings in place: per CPU in ring order, or merged
 * across CPUs in time order, without copying a record.
 *
 * Each barrier cites its letter in the protocol table of uapi
 * <linux/memmon.h> and its partner in the kernel.
 */
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <memmon_rec_check.h>
#include "internal.h"
#include "merge.h"

/*
 * [G]'s fence. GCC rejects fences under ThreadSanitizer, which does not
 * model them; the TSan builds (the CLI's queue tests) never read a flight
 * recorder.
 */
#ifdef __SANITIZE_THREAD__
#define libmm_rmb()	__atomic_signal_fence(__ATOMIC_SEQ_CST)
#else
#define libmm_rmb()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

static bool is_pow2(__u64 v)
{
	return v && !(v & (v - 1));
}

int libmm_session_attach(struct memmon_session *s, void *cons, size_t cons_size,
		      void *prod, size_t prod_size)
{
	const struct memmon_info *in = &s->info;
	const struct memmon_mmap_header *hdr = prod;
	struct libmm_ring *rings;
	__u64 need;
	unsigned int c;
	int err;

	if (prod_size < sizeof(*hdr) || !cons || !prod)
		return -EPROTO;
	if (hdr->magic != MEMMON_MMAP_MAGIC)
		return -EPROTO;
	if (hdr->abi_major != MEMMON_ABI_MAJOR)
		return -EPROTONOSUPPORT;
	if (hdr->header_size < sizeof(*hdr))
		return -EPROTO;
	/* The header and GET_INFO describe one layout; disagreement means
	 * we would read the wrong memory.
	 */
	if (!hdr->nr_cpus || hdr->nr_cpus != in->nr_cpus ||
	    hdr->ring_size != in->ring_size || !is_pow2(hdr->ring_size) ||
	    hdr->ring_stride != in->ring_stride ||
	    hdr->ring_data_offset != in->ring_data_offset ||
	    hdr->page_size != in->page_size || !is_pow2(hdr->page_size) ||
	    hdr->header_size > hdr->page_size)
		return -EPROTO;
	if (hdr->ring_data_offset < sizeof(struct memmon_ring_page) ||
	    hdr->ring_data_offset % MEMMON_REC_ALIGN ||
	    hdr->ring_size > (UINT64_MAX - hdr->ring_data_offset) / 2 ||
	    hdr->ring_data_offset + 2 * hdr->ring_size > hdr->ring_stride)
		return -EPROTO;
	if (hdr->ring_stride > (UINT64_MAX - hdr->page_size) / hdr->nr_cpus)
		return -EPROTO;
	need = hdr->page_size + (__u64)hdr->nr_cpus * hdr->ring_stride;
	if (need > prod_size)
		return -EPROTO;
	if ((__u64)hdr->nr_cpus * MEMMON_CONSUMER_STRIDE > cons_size)
		return -EPROTO;

	rings = calloc(hdr->nr_cpus, sizeof(*rings));
	if (!rings)
		return -ENOMEM;
	err = libmm_merge_init(&s->merge, hdr->nr_cpus);
	if (err) {
		free(rings);
		return err;
	}
	for (c = 0; c < hdr->nr_cpus; c++) {
		const __u8 *blk = (const __u8 *)prod + hdr->page_size +
				  (size_t)c * hdr->ring_stride;
		struct libmm_ring *r = &rings[c];

		r->consumer_pos = (__u64 *)((__u8 *)cons +
					    (size_t)c * MEMMON_CONSUMER_STRIDE);
		r->page = (const struct memmon_ring_page *)blk;
		r->map = blk + hdr->ring_data_offset;
		r->data = r->map;
		/* Only we write it; relaxed is enough to start from it. */
		r->cons = __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED);
	}
	s->cons_area = cons;
	s->cons_size = cons_size;
	s->prod_area = prod;
	s->prod_size = prod_size;
	s->nr_cpus = hdr->nr_cpus;
	s->ring_size = hdr->ring_size;
	s->mask = hdr->ring_size - 1;
	s->rings = rings;
	s->mapped = true;
	return 0;
}

void libmm_session_detach(struct memmon_session *s)
{
	unsigned int c;

	if (s->own_maps) {
		if (s->prod_area)
			munmap(s->prod_area, s->prod_size);
		if (s->cons_area)
			munmap(s->cons_area, s->cons_size);
	}
	s->prod_area = s->cons_area = NULL;
	for (c = 0; s->rings && c < s->nr_cpus; c++)
		free(s->rings[c].copy);
	free(s->rings);
	s->rings = NULL;
	libmm_merge_fini(&s->merge);
	s->mapped = false;
}

static int ensure_mapped(struct memmon_session *s)
{
	if (!s)
		return -EINVAL;
	if (s->mapped)
		return 0;
	return memmon_session__map(s);
}

/*
 * A flight recorder's round (MEMMON_FULL_OVERWRITE): the producer may be
 * writing over the oldest records while we read, so records are copied
 * first and checked against tail_pos after: [G] pairs with [F], the
 * kernel's store of tail_pos before it reuses the space. What lies below
 * the tail read after the copy may be torn and is skipped (the kernel
 * counted those events lost when it passed them). The copy keeps the
 * mapping's layout, so records are found at the same offsets.
 */
static int ring_snapshot_overwrite(struct memmon_session *s, struct libmm_ring *r)
{
	__u64 snap, tail, start, off;

	if (!r->copy) {
		r->copy = malloc(2 * s->ring_size);
		if (!r->copy)
			return -ENOMEM;
		r->data = r->copy;
	}
	/* [C] pairs with [B]: records below snap are whole. */
	snap = __atomic_load_n(&r->page->producer_pos, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&r->page->tail_pos, __ATOMIC_RELAXED);
	if ((__s64)(snap - tail) < 0) {
		/*
		 * Lapped between the two loads, if the producer has now
		 * published past the tail; else the page lies.
		 */
		if ((__s64)(__atomic_load_n(&r->page->producer_pos,
					    __ATOMIC_ACQUIRE) - tail) < 0)
			return -EBADMSG;
		r->cons = snap;
		r->pos = snap;
		r->snap = snap;
		return 0;
	}
	if (snap - tail > s->ring_size)
		return -EBADMSG;
	/* Our position counts only if it lies among the records kept. */
	start = r->cons - tail <= snap - tail ? r->cons : tail;
	off = start & s->mask;
	memcpy(r->copy + off, r->map + off, snap - start);
	/* The copy has no alias: what ran past the end is also at the start. */
	if (off + (snap - start) > s->ring_size)
		memcpy(r->copy, r->copy + s->ring_size,
		       off + (snap - start) - s->ring_size);
	/* [G] pairs with [F]: tail_pos is read after the copy is whole. */
	libmm_rmb();
	tail = __atomic_load_n(&r->page->tail_pos, __ATOMIC_RELAXED);
	/* tail_pos only grows, and is always a record boundary. */
	if (tail > snap)
		start = snap;	/* all of it overwritten meanwhile */
	else if (tail > start)
		start = tail;
	r->cons = start;
	r->pos = start;
	r->snap = snap;
	return 0;
}

/*
 * Load a ring's producer_pos for this round. The kernel never has more than
 * ring_size bytes outstanding: a position further from ours means ours is
 * not a record boundary we can trust, so we resynchronise to the producer
 * as the kernel's read() does (and count it as one bad record).
 */
static int ring_snapshot(struct memmon_session *s, struct libmm_ring *r)
{
	if (s->overwrite)
		return ring_snapshot_overwrite(s, r);
	/* [C] pairs with [B], the kernel's store-release of producer_pos
	 * after the outermost writer finished: records below it are whole.
	 */
	r->snap = __atomic_load_n(&r->page->producer_pos, __ATOMIC_ACQUIRE);
	r->pos = r->cons;
	if (r->snap - r->cons > s->ring_size || r->cons % MEMMON_REC_ALIGN) {
		s->bad_records++;
		r->pos = r->snap;
	}
	return 0;
}

/*
 * Move r->pos to the next good record below the snapshot and return its
 * size (*recp set), or 0 when there is none. Bad records are skipped and
 * counted (memmon_rec_check()'s contract): by their length when it is
 * sound, else by resynchronising to the snapshot, as the kernel's read()
 * does, since no position after a bad length can be trusted. Committed
 * records do not change under us: the check reads each size once.
 */
static inline __u32 ring_next(struct memmon_session *s, struct libmm_ring *r,
			      const struct memmon_rec_header **recp)
{
	const struct memmon_rec_header *rec;
	__u64 pos = r->pos, snap = r->snap;
	__u32 size;

	while (pos < snap) {
		rec = (const void *)(r->data + (pos & s->mask));
		switch (memmon_rec_check(rec, snap - pos, &size)) {
		case MEMMON_REC_OK:
			r->pos = pos;
			*recp = rec;
			return size;
		case MEMMON_REC_BAD_BODY:
			s->bad_records++;
			pos += size;
			break;
		case MEMMON_REC_BAD_FRAME:
			s->bad_records++;
			pos = snap;
			break;
		}
	}
	r->pos = pos;
	return 0;
}

static void ring_commit(struct libmm_ring *r, __u64 pos)
{
	if (pos == r->cons)
		return;
	r->cons = pos;
	/* [D] pairs with [A], the kernel's load-acquire of consumer_pos
	 * before reserving: we are done reading everything below pos.
	 */
	__atomic_store_n(r->consumer_pos, pos, __ATOMIC_RELEASE);
}

/*
 * Deliver one CPU's records below its snapshot, in ring order: ring_next()
 * unrolled, with the position in a local, since the callback is opaque to
 * the compiler and every field read through @r would be read again after
 * each call. r->pos is stored once, at the end (nothing reads it while the
 * callback runs).
 */
static long consume_one(struct memmon_session *s, unsigned int cpu, long *cnt)
{
	struct libmm_ring *r = &s->rings[cpu];
	const struct memmon_rec_header *rec;
	const __u8 *data;
	__u64 pos, snap, mask;
	long n = *cnt;
	__u32 size;
	int ret = 0, err;

	err = ring_snapshot(s, r);
	if (err)
		return err;
	data = r->data;
	mask = s->mask;
	pos = r->pos;
	snap = r->snap;
	while (pos < snap) {
		rec = (const void *)(data + (pos & mask));
		switch (memmon_rec_check(rec, snap - pos, &size)) {
		case MEMMON_REC_OK:
			ret = s->fn(s->ctx, rec);
			pos += size;
			n++;
			break;
		case MEMMON_REC_BAD_BODY:
			s->bad_records++;
			pos += size;
			break;
		case MEMMON_REC_BAD_FRAME:
			s->bad_records++;
			pos = snap;
			break;
		}
		if (ret)
			break;
	}
	r->pos = pos;
	*cnt = n;
	ring_commit(r, pos);
	return ret;
}

static int consume_per_cpu(struct memmon_session *s)
{
	long cnt = 0;
	unsigned int c;
	long ret;

	for (c = 0; c < s->nr_cpus; c++) {
		ret = consume_one(s, c, &cnt);
		if (ret < 0)
			return (int)ret;
		if (ret > 0)
			break;
	}
	return cnt > INT_MAX ? INT_MAX : (int)cnt;
}

/* Put the head of ring src into the merge if it is due (time <= limit). */
static int merge_push_head(struct memmon_session *s, unsigned int src,
			   __u64 limit, bool replace)
{
	struct libmm_ring *r = &s->rings[src];
	const struct memmon_rec_header *rec;
	struct libmm_merge_node n;
	__u32 size;

	size = ring_next(s, r, &rec);
	if (size) {
		if (rec->time_ns <= limit) {
			n.time = rec->time_ns;
			n.pos = r->pos;
			n.src = src;
			n.size = size;
			if (replace)
				libmm_merge_replace_top(&s->merge, &n);
			else
				libmm_merge_push(&s->merge, &n);
			return 0;
		}
	}
	if (replace)
		libmm_merge_pop(&s->merge);
	return 0;
}

/*
 * One merge round. Every ring is snapshotted once; the merge holds the
 * head of each ring that has a due record; we deliver the smallest head
 * and replace it by its successor on the same ring. Rings are FIFO, so
 * what was delivered on each CPU is a prefix, and committing per CPU is
 * one store-release of the new position.
 */
static int consume_merged(struct memmon_session *s, __u64 limit)
{
	const struct libmm_merge_node *top;
	long cnt = 0;
	int err = 0, ret = 0, e;
	unsigned int c;

	libmm_merge_reset(&s->merge);
	for (c = 0; c < s->nr_cpus; c++) {
		e = ring_snapshot(s, &s->rings[c]);
		if (!e)
			e = merge_push_head(s, c, limit, false);
		if (e && !err)
			err = e;
	}
	while ((top = libmm_merge_top(&s->merge))) {
		struct libmm_ring *r = &s->rings[top->src];
		unsigned int src = top->src;

		ret = s->fn(s->ctx, (const void *)(r->data + (top->pos & s->mask)));
		r->pos = top->pos + top->size;
		if (cnt < INT_MAX)
			cnt++;
		if (ret)
			break;
		e = merge_push_head(s, src, limit, true);
		if (e && !err)
			err = e;
	}
	for (c = 0; c < s->nr_cpus; c++)
		ring_commit(&s->rings[c], s->rings[c].pos);
	if (ret < 0)
		return ret;
	if (err)
		return err;
	return cnt > INT_MAX ? INT_MAX : (int)cnt;
}

int memmon_session__set_callback(struct memmon_session *s, memmon_record_fn fn,
				 void *ctx, const struct memmon_consume_opts *opts)
{
	__u32 flags;

	if (!s || !fn || !OPTS_VALID(opts, memmon_consume_opts))
		return libmm_err(-EINVAL);
	flags = OPTS_GET(opts, flags, 0);
	if (flags & ~MEMMON_CONSUME_PER_CPU)
		return libmm_err(-EINVAL);
	s->fn = fn;
	s->ctx = ctx;
	s->consume_flags = flags;
	s->holdback_ns = OPTS_GET(opts, holdback_ns, 0);
	return 0;
}

static int do_consume(struct memmon_session *s, bool flush)
{
	__u64 limit = UINT64_MAX, now;
	int err;

	err = ensure_mapped(s);
	if (err)
		return libmm_err(err);
	if (!s->fn)
		return libmm_err(-EINVAL);
	if (s->consume_flags & MEMMON_CONSUME_PER_CPU)
		return libmm_err(consume_per_cpu(s));
	if (!flush && s->holdback_ns) {
		now = s->clock(s->clock_ctx);
		limit = now > s->holdback_ns ? now - s->holdback_ns : 0;
	}
	return libmm_err(consume_merged(s, limit));
}

int memmon_session__consume(struct memmon_session *s)
{
	return do_consume(s, false);
}

int memmon_session__flush(struct memmon_session *s)
{
	return do_consume(s, true);
}

int memmon_session__poll(struct memmon_session *s, int timeout_ms)
{
	struct pollfd pfd;
	int err;

	err = ensure_mapped(s);
	if (err)
		return libmm_err(err);
	if (s->fd >= 0) {
		pfd.fd = s->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, timeout_ms) < 0)
			return libmm_err(-errno);
	}
	/*
	 * Consume even after a timeout: a ring below the watermark does not
	 * wake us, and its records must not wait forever.
	 */
	return do_consume(s, false);
}

int memmon_session__consume_cpu(struct memmon_session *s, unsigned int cpu)
{
	long cnt = 0, ret;
	int err;

	err = ensure_mapped(s);
	if (err)
		return libmm_err(err);
	if (cpu >= s->nr_cpus || !s->fn)
		return libmm_err(-EINVAL);
	ret = consume_one(s, cpu, &cnt);
	if (ret < 0)
		return libmm_err((int)ret);
	return cnt > INT_MAX ? INT_MAX : (int)cnt;
}

ssize_t memmon_session__peek_cpu(struct memmon_session *s, unsigned int cpu,
				 size_t max_bytes, const void **data)
{
	const struct memmon_rec_header *rec;
	struct libmm_ring *r;
	__u64 pos;
	__u32 size;
	int err;

	err = ensure_mapped(s);
	if (err)
		return libmm_err(err);
	if (cpu >= s->nr_cpus || !data)
		return libmm_err(-EINVAL);
	r = &s->rings[cpu];
	err = ring_snapshot(s, r);
	if (err)
		return libmm_err(err);
	/* Bad records at the head are skipped, counted and given back. */
	ring_next(s, r, &rec);
	ring_commit(r, r->pos);
	for (pos = r->cons; pos < r->snap; pos += size) {
		rec = (const void *)(r->data + (pos & s->mask));
		/* A bad one further on: hand out the good prefix first. */
		if (memmon_rec_check(rec, r->snap - pos, &size) != MEMMON_REC_OK)
			break;
		if (pos - r->cons + size > max_bytes) {
			if (pos == r->cons)
				return libmm_err(-ENOBUFS);
			break;
		}
	}
	*data = r->data + (r->cons & s->mask);
	return (ssize_t)(pos - r->cons);
}

int memmon_session__release_cpu(struct memmon_session *s, unsigned int cpu,
				size_t len)
{
	struct libmm_ring *r;
	__u64 prod;

	if (!s || !s->mapped || cpu >= s->nr_cpus || len % MEMMON_REC_ALIGN)
		return libmm_err(-EINVAL);
	r = &s->rings[cpu];
	/* [C]: never give back more than was committed. */
	prod = __atomic_load_n(&r->page->producer_pos, __ATOMIC_ACQUIRE);
	if (len > prod - r->cons)
		return libmm_err(-EINVAL);
	ring_commit(r, r->cons + len);
	return 0;
}

int memmon_session__ring_stats(struct memmon_session *s, unsigned int cpu,
			       struct memmon_cpu_stats *stats,
			       __u64 *lost_pending)
{
	const struct memmon_ring_page *p;
	int err;

	err = ensure_mapped(s);
	if (err)
		return libmm_err(err);
	if (cpu >= s->nr_cpus)
		return libmm_err(-EINVAL);
	p = s->rings[cpu].page;
	/* Racy counters: each word is read whole, the set is not atomic. */
	if (stats) {
		stats->produced = __atomic_load_n(&p->stats.produced, __ATOMIC_RELAXED);
		stats->delivered = __atomic_load_n(&p->stats.delivered, __ATOMIC_RELAXED);
		stats->lost = __atomic_load_n(&p->stats.lost, __ATOMIC_RELAXED);
		stats->bytes = __atomic_load_n(&p->stats.bytes, __ATOMIC_RELAXED);
	}
	if (lost_pending)
		*lost_pending = __atomic_load_n(&p->lost_pending, __ATOMIC_RELAXED);
	return 0;
}

int memmon_session__ring_overwritten(struct memmon_session *s, unsigned int cpu,
				     __u64 *overwritten)
{
	int err = ensure_mapped(s);

	if (err)
		return libmm_err(err);
	if (cpu >= s->nr_cpus || !overwritten)
		return libmm_err(-EINVAL);
	*overwritten = s->overwrite ?
		__atomic_load_n(&s->rings[cpu].page->overwritten, __ATOMIC_RELAXED) : 0;
	return 0;
}

/*
 * A loss the kernel left pending (a kernel without MEMMON_FEAT_FLUSH_LOST,
 * or a ring a MARK filled between our two DISABLEs), as the LOST record the
 * kernel would have written: so that the stream alone always accounts for
 * every event. Its first_ns and last_ns are 0: the kernel does not show
 * them.
 */
static int deliver_pending_lost(struct memmon_session *s, unsigned int cpu,
				__u64 count)
{
	struct memmon_rec_lost l = {
		.hdr = {
			.size = sizeof(l),
			.type = MEMMON_REC_LOST,
			.cpu = (__u16)cpu,
			.time_ns = s->clock(s->clock_ctx),
		},
		.count = count,
	};

	return s->fn(s->ctx, &l.hdr);
}

int memmon_session__finish(struct memmon_session *s)
{
	__u64 pending;
	unsigned int c;
	int n, total, err;

	err = ensure_mapped(s);
	if (err)
		return libmm_err(err);
	if (!s->fn)
		return libmm_err(-EINVAL);
	/*
	 * DISABLE waits for the producers and writes each CPU's pending loss
	 * where it fits; one that did not fit fits once the rings are drained,
	 * hence the second round. A session made from a mapping has no
	 * device to stop: only the draining.
	 */
	err = s->fd >= 0 ? memmon_session__disable(s) : 0;
	if (err)
		return err;
	total = memmon_session__flush(s);
	if (total < 0)
		return total;
	err = s->fd >= 0 ? memmon_session__disable(s) : 0;
	if (err)
		return err;
	n = memmon_session__flush(s);
	if (n < 0)
		return n;
	total += n;
	for (c = 0; c < s->nr_cpus; c++) {
		pending = __atomic_load_n(&s->rings[c].page->lost_pending,
					  __ATOMIC_ACQUIRE);
		if (!pending)
			continue;
		n = deliver_pending_lost(s, c, pending);
		if (n < 0)
			return libmm_err(n);
		total++;
	}
	return total;
}

__u64 memmon_session__bad_records(const struct memmon_session *s)
{
	return s ? s->bad_records : 0;
}
