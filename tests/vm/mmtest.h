/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the in-VM tests of the event transport (t_ioctl,
 * t_mmap, t_poll_read, t_overflow, t_sessions, t_perm, t_stress): thin
 * wrappers of the raw ABI, with nothing of libmemmon, so that these tests
 * check the kernel alone.
 */
#ifndef MEMMON_TESTS_VM_MMTEST_H
#define MEMMON_TESTS_VM_MMTEST_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/memmon.h>

#include "vmtest.h"

/* Abort the test program: a helper that cannot work makes the rest moot. */
#define MM_DIE(...) do {						\
	printf("not ok - ");						\
	printf(__VA_ARGS__);						\
	printf(" (errno %d: %s)\n", errno, strerror(errno));		\
	exit(1);							\
} while (0)

static inline int mm_open(void)
{
	int fd = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		MM_DIE("open %s", MEMMON_DEVICE_PATH);
	return fd;
}

static inline int mm_get_info(int fd, struct memmon_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, MEMMON_IOC_GET_INFO, info);
}

static inline void mm_info(int fd, struct memmon_info *info)
{
	if (mm_get_info(fd, info))
		MM_DIE("MEMMON_IOC_GET_INFO");
}

static inline int mm_configure(int fd, uint64_t ring_size, uint64_t wakeup)
{
	struct memmon_config c = {
		.size = sizeof(c),
		.full_policy = MEMMON_FULL_DROP_NEW,
		.ring_size = ring_size,
		.wakeup_bytes = wakeup,
	};

	return ioctl(fd, MEMMON_IOC_CONFIGURE, &c);
}

static inline int mm_mark(int fd, uint32_t flags, const void *data, uint32_t len)
{
	struct memmon_mark m = {
		.size = sizeof(m),
		.flags = flags,
		.data = (uintptr_t)data,
		.len = len,
	};

	return ioctl(fd, MEMMON_IOC_MARK, &m);
}

static inline int mm_watch(int fd, unsigned long cmd, uint32_t pid, uint32_t flags)
{
	struct memmon_watch w = { .size = sizeof(w), .flags = flags, .pid = pid };

	return ioctl(fd, cmd, &w);
}

static inline int mm_set_events(int fd, uint64_t mask, uint64_t syscalls)
{
	struct memmon_events e = {
		.size = sizeof(e), .mask = mask, .syscalls = syscalls,
	};

	return ioctl(fd, MEMMON_IOC_SET_EVENTS, &e);
}

/* Fill @cs[0..n) ; returns the kernel's nr_cpus or -1. */
static inline int mm_stats(int fd, struct memmon_cpu_stats *cs, uint32_t n)
{
	struct memmon_stats s = {
		.size = sizeof(s),
		.nr_cpus = n,
		.cpus = (uintptr_t)cs,
		.cpu_stats_size = sizeof(*cs),
	};

	if (ioctl(fd, MEMMON_IOC_GET_STATS, &s))
		return -1;
	return (int)s.nr_cpus;
}

static inline int mm_nr_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_CONF);
}

static inline void mm_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		MM_DIE("sched_setaffinity cpu %d", cpu);
}

static inline pid_t mm_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Both mappings of a session. */
struct mm_map {
	struct memmon_info info;
	void *cons;
	void *prod;
};

static inline void mm_map(int fd, struct mm_map *m)
{
	mm_info(fd, &m->info);
	m->cons = mmap(NULL, m->info.consumer_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (m->cons == MAP_FAILED)
		MM_DIE("mmap consumer area");
	m->prod = mmap(NULL, m->info.producer_size, PROT_READ, MAP_SHARED, fd,
		       (off_t)m->info.producer_offset);
	if (m->prod == MAP_FAILED)
		MM_DIE("mmap producer area");
}

static inline void mm_unmap(struct mm_map *m)
{
	munmap(m->cons, m->info.consumer_size);
	munmap(m->prod, m->info.producer_size);
}

static inline struct memmon_ring_page *mm_ring_page(const struct mm_map *m,
						    unsigned int cpu)
{
	return (void *)((char *)m->prod + m->info.page_size +
			(size_t)cpu * m->info.ring_stride);
}

static inline uint8_t *mm_ring_data(const struct mm_map *m, unsigned int cpu)
{
	return (uint8_t *)mm_ring_page(m, cpu) + m->info.ring_data_offset;
}

static inline uint64_t *mm_cons_pos(const struct mm_map *m, unsigned int cpu)
{
	return (uint64_t *)((char *)m->cons + (size_t)cpu * MEMMON_CONSUMER_STRIDE);
}

typedef void (*mm_rec_fn)(const struct memmon_rec_header *rec, unsigned int cpu,
			  void *arg);

/*
 * Consume every record of one CPU's ring through the mapping, with the
 * protocol's [C] and [D]. Returns the records consumed, -1 on a malformed
 * record (the test then fails: the kernel wrote it).
 */
static inline long mm_drain_cpu(const struct mm_map *m, unsigned int cpu,
				mm_rec_fn fn, void *arg)
{
	struct memmon_ring_page *pg = mm_ring_page(m, cpu);
	uint64_t *cp = mm_cons_pos(m, cpu);
	uint64_t mask = m->info.ring_size - 1;
	const struct memmon_rec_header *rec;
	uint64_t prod, cons;
	long n = 0;

	prod = __atomic_load_n(&pg->producer_pos, __ATOMIC_ACQUIRE);	/* [C] */
	cons = __atomic_load_n(cp, __ATOMIC_RELAXED);
	while (cons < prod) {
		rec = (const void *)(mm_ring_data(m, cpu) + (cons & mask));
		if (rec->size < sizeof(*rec) || rec->size % MEMMON_REC_ALIGN ||
		    rec->size > prod - cons) {
			printf("# cpu %u: malformed record at %llu: size %u\n", cpu,
			       (unsigned long long)cons, rec->size);
			return -1;
		}
		if (fn)
			fn(rec, cpu, arg);
		cons += rec->size;
		n++;
	}
	__atomic_store_n(cp, cons, __ATOMIC_RELEASE);			/* [D] */
	return n;
}

/* Walk records of a read() buffer; returns the count, -1 if malformed. */
static inline long mm_walk_buf(const void *buf, size_t len, mm_rec_fn fn,
			       void *arg)
{
	const struct memmon_rec_header *rec;
	size_t off = 0;
	long n = 0;

	while (off < len) {
		rec = (const void *)((const char *)buf + off);
		if (len - off < sizeof(*rec) || rec->size < sizeof(*rec) ||
		    rec->size % MEMMON_REC_ALIGN || rec->size > len - off) {
			printf("# malformed record at offset %zu\n", off);
			return -1;
		}
		if (fn)
			fn(rec, rec->cpu, arg);
		off += rec->size;
		n++;
	}
	return n;
}

#endif /* MEMMON_TESTS_VM_MMTEST_H */
