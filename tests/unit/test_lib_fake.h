/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake /dev/memmon mapping in memory, laid out exactly as uapi
 * <linux/memmon.h> describes it, with a tiny producer, so that the
 * library's consumer and merge run over real double-mapped rings:
 *
 *   consumer area (anonymous)     producer area (one reservation)
 *   +-------------------+         +--------------------------------+
 *   | cpu0 consumer_pos |         | memmon_mmap_header      (page) |
 *   | cpu1 consumer_pos |         | cpu0 ring page          (page) |
 *   | ...               |         | cpu0 data  = memfd[0, R)       |
 *   +-------------------+         | cpu0 alias = memfd[0, R) again |
 *                                 | cpu1 ring page ...             |
 *                                 +--------------------------------+
 *
 * The producer is the kernel's protocol in miniature: check space against
 * consumer_pos (load-acquire, [A]), write the record, publish producer_pos
 * (store-release, [B]).
 */
#ifndef MEMMON_TESTS_UNIT_TEST_LIB_FAKE_H
#define MEMMON_TESTS_UNIT_TEST_LIB_FAKE_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "internal.h"

struct fake {
	struct memmon_info info;
	unsigned int nr_cpus;
	size_t page;
	__u64 ring_size;
	void *cons;
	void *prod;
	int memfd;
	__u64 prod_pos[64];	/* written, maybe not yet published */
};

static inline struct memmon_ring_page *fake_page(struct fake *f, unsigned int c)
{
	return (void *)((char *)f->prod + f->page + c * f->info.ring_stride);
}

static inline __u8 *fake_data(struct fake *f, unsigned int c)
{
	return (__u8 *)fake_page(f, c) + f->info.ring_data_offset;
}

static inline __u64 *fake_consumer_pos(struct fake *f, unsigned int c)
{
	return (__u64 *)((char *)f->cons + c * MEMMON_CONSUMER_STRIDE);
}

static inline int fake_init(struct fake *f, unsigned int nr_cpus, __u64 ring_size)
{
	struct memmon_mmap_header *h;
	unsigned int c;

	memset(f, 0, sizeof(*f));
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	f->nr_cpus = nr_cpus;
	f->ring_size = ring_size;
	f->info.size = sizeof(f->info);
	f->info.abi_major = MEMMON_ABI_MAJOR;
	f->info.abi_minor = MEMMON_ABI_MINOR;
	f->info.nr_cpus = nr_cpus;
	f->info.page_size = (__u32)f->page;
	f->info.ring_size = ring_size;
	f->info.ring_data_offset = f->page;
	f->info.ring_stride = f->page + 2 * ring_size;
	f->info.consumer_size = (nr_cpus * MEMMON_CONSUMER_STRIDE + f->page - 1) /
				f->page * f->page;
	f->info.producer_offset = 1ULL << 30;
	f->info.producer_size = f->page + nr_cpus * f->info.ring_stride;

	f->cons = mmap(NULL, f->info.consumer_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->prod = mmap(NULL, f->info.producer_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->memfd = memfd_create("fake-memmon", MFD_CLOEXEC);
	if (f->cons == MAP_FAILED || f->prod == MAP_FAILED || f->memfd < 0)
		return -errno;
	if (ftruncate(f->memfd, (off_t)(nr_cpus * ring_size)) < 0)
		return -errno;
	for (c = 0; c < nr_cpus; c++) {
		__u8 *d = fake_data(f, c);
		off_t off = (off_t)(c * ring_size);

		if (mmap(d, ring_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, f->memfd, off) == MAP_FAILED ||
		    mmap(d + ring_size, ring_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, f->memfd, off) == MAP_FAILED)
			return -errno;
	}
	h = f->prod;
	h->magic = MEMMON_MMAP_MAGIC;
	h->abi_major = MEMMON_ABI_MAJOR;
	h->abi_minor = MEMMON_ABI_MINOR;
	h->header_size = sizeof(*h);
	h->nr_cpus = nr_cpus;
	h->ring_size = ring_size;
	h->ring_stride = f->info.ring_stride;
	h->ring_data_offset = f->info.ring_data_offset;
	h->clock = MEMMON_CLOCK_MONOTONIC;
	h->page_size = (__u32)f->page;
	return 0;
}

static inline void fake_fini(struct fake *f)
{
	if (f->cons && f->cons != MAP_FAILED)
		munmap(f->cons, f->info.consumer_size);
	if (f->prod && f->prod != MAP_FAILED)
		munmap(f->prod, f->info.producer_size);
	if (f->memfd >= 0)
		close(f->memfd);
}

static inline struct memmon_session *fake_session(struct fake *f)
{
	return memmon__session_from_mapping(&f->info, f->cons, f->prod, -1);
}

/* Write a record (not yet visible); returns its ring position or -ENOSPC. */
static inline long long fake_put(struct fake *f, unsigned int cpu, __u16 type,
				 __u64 time, __u32 tgid, const void *body,
				 size_t body_len)
{
	struct memmon_rec_header *h;
	__u64 cons, pos = f->prod_pos[cpu];
	__u32 size = (__u32)((sizeof(*h) + body_len + 7) & ~7UL);

	/* [A] */
	cons = __atomic_load_n(fake_consumer_pos(f, cpu), __ATOMIC_ACQUIRE);
	if (pos + size - cons > f->ring_size)
		return -ENOSPC;
	h = (void *)(fake_data(f, cpu) + (pos & (f->ring_size - 1)));
	memset(h, 0, size);
	h->size = size;
	h->type = type;
	h->cpu = (__u16)cpu;
	h->time_ns = time;
	h->tgid = tgid;
	h->tid = tgid;
	if (body_len)
		memcpy(h + 1, body, body_len);
	f->prod_pos[cpu] = pos + size;
	return (long long)pos;
}

static inline void fake_publish(struct fake *f, unsigned int cpu)
{
	/* [B] */
	__atomic_store_n(&fake_page(f, cpu)->producer_pos, f->prod_pos[cpu],
			 __ATOMIC_RELEASE);
}

static inline long long fake_write(struct fake *f, unsigned int cpu, __u16 type,
				   __u64 time, __u32 tgid, const void *body,
				   size_t body_len)
{
	long long pos = fake_put(f, cpu, type, time, tgid, body, body_len);

	if (pos >= 0)
		fake_publish(f, cpu);
	return pos;
}

/* A MARK record whose payload is a sequence number (8 bytes). */
static inline long long fake_seq(struct fake *f, unsigned int cpu, __u64 time,
				 __u64 seq)
{
	struct {
		__u32 len;
		__u32 flags;
		__u64 seq;
	} body = { 8, 0, seq };

	return fake_write(f, cpu, MEMMON_REC_MARK, time, 1, &body, sizeof(body));
}

static inline __u64 rec_seq(const struct memmon_rec_header *rec)
{
	__u64 v;

	memcpy(&v, ((const struct memmon_rec_mark *)rec)->data, sizeof(v));
	return v;
}

#endif /* MEMMON_TESTS_UNIT_TEST_LIB_FAKE_H */
