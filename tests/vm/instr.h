/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the instrumentation tests (t_instr_*.c): a /dev/memmon session
 * read through its mapping exactly as uapi/linux/memmon.h specifies (no
 * libmemmon: the tests check the ABI, not the library), records collected
 * into memory and sorted by time, and a few record filters.
 *
 * Typical use:
 *   struct in_sess s;
 *   in_open(&s, 32 << 20);            // 32 MiB per CPU: no loss in a test
 *   in_watch(&s, child, 0); in_enable(&s);
 *   ...run the workload...
 *   in_disable(&s); in_drain(&s);     // every record, time order
 */
#ifndef MEMMON_TESTS_VM_INSTR_H
#define MEMMON_TESTS_VM_INSTR_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/memmon.h>

struct in_rec {
	struct memmon_rec_header hdr;	/* followed by the body */
};

struct in_sess {
	int fd;
	struct memmon_info info;
	uint8_t *cons;
	uint8_t *prod;
	struct in_rec **recs;
	size_t n, cap;
	uint64_t lost;			/* sum of LOST records */
};

static inline int in_open(struct in_sess *s, uint64_t ring_size)
{
	struct memmon_config cfg = { .size = sizeof(cfg), .ring_size = ring_size };

	memset(s, 0, sizeof(*s));
	s->fd = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return -1;
	if (ring_size && ioctl(s->fd, MEMMON_IOC_CONFIGURE, &cfg))
		return -1;
	s->info.size = sizeof(s->info);
	if (ioctl(s->fd, MEMMON_IOC_GET_INFO, &s->info))
		return -1;
	s->cons = mmap(NULL, s->info.consumer_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, s->fd, 0);
	if (s->cons == MAP_FAILED)
		return -1;
	s->prod = mmap(NULL, s->info.producer_size, PROT_READ, MAP_SHARED,
		       s->fd, s->info.producer_offset);
	if (s->prod == MAP_FAILED)
		return -1;
	return 0;
}

static inline int in_watch(struct in_sess *s, pid_t pid, uint32_t flags)
{
	struct memmon_watch w = { .size = sizeof(w), .flags = flags, .pid = pid };

	return ioctl(s->fd, MEMMON_IOC_WATCH_ADD, &w);
}

static inline int in_unwatch(struct in_sess *s, pid_t pid)
{
	struct memmon_watch w = { .size = sizeof(w), .pid = pid };

	return ioctl(s->fd, MEMMON_IOC_WATCH_DEL, &w);
}

static inline int in_events(struct in_sess *s, uint64_t mask, uint64_t sys)
{
	struct memmon_events e = { .size = sizeof(e), .mask = mask, .syscalls = sys };

	return ioctl(s->fd, MEMMON_IOC_SET_EVENTS, &e);
}

static inline int in_enable(struct in_sess *s)
{
	return ioctl(s->fd, MEMMON_IOC_ENABLE);
}

static inline int in_disable(struct in_sess *s)
{
	return ioctl(s->fd, MEMMON_IOC_DISABLE);
}

static inline void in_keep(struct in_sess *s, const struct memmon_rec_header *h)
{
	struct in_rec *r;

	if (h->type == MEMMON_REC_LOST) {
		s->lost += ((const struct memmon_rec_lost *)h)->count;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->recs = realloc(s->recs, s->cap * sizeof(*s->recs));
		if (!s->recs)
			abort();
	}
	r = malloc(h->size);
	if (!r)
		abort();
	memcpy(r, h, h->size);
	s->recs[s->n++] = r;
}

/* Move every published record of every CPU into s->recs. Returns how many. */
static inline size_t in_read(struct in_sess *s)
{
	uint64_t mask = s->info.ring_size - 1;
	size_t before = s->n;
	uint32_t cpu;

	for (cpu = 0; cpu < s->info.nr_cpus; cpu++) {
		uint8_t *blk = s->prod + s->info.page_size + cpu * s->info.ring_stride;
		struct memmon_ring_page *rp = (struct memmon_ring_page *)blk;
		uint8_t *data = blk + s->info.ring_data_offset;
		uint64_t *cp = (uint64_t *)(s->cons + cpu * MEMMON_CONSUMER_STRIDE);
		uint64_t prod, cons;

		/* [C], pairs with [B] in the kernel. */
		prod = __atomic_load_n(&rp->producer_pos, __ATOMIC_ACQUIRE);
		cons = *cp;
		while (cons < prod) {
			const struct memmon_rec_header *h =
				(const void *)(data + (cons & mask));

			if (h->size < sizeof(*h) || h->size % MEMMON_REC_ALIGN)
				abort();
			in_keep(s, h);
			cons += h->size;
		}
		/* [D], pairs with [A] in the kernel. */
		__atomic_store_n(cp, cons, __ATOMIC_RELEASE);
	}
	return s->n - before;
}

struct in_sort {
	struct in_rec *r;
	size_t idx;
};

static inline int in_cmp_time(const void *a, const void *b)
{
	const struct in_sort *x = a, *y = b;

	if (x->r->hdr.time_ns != y->r->hdr.time_ns)
		return x->r->hdr.time_ns < y->r->hdr.time_ns ? -1 : 1;
	/* Equal times keep their ring order (a PATH before its SYSCALL). */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Read what is left and sort everything by time, stably. */
static inline void in_drain(struct in_sess *s)
{
	struct in_sort *v;
	size_t i;

	in_read(s);
	v = calloc(s->n + 1, sizeof(*v));
	if (!v)
		abort();
	for (i = 0; i < s->n; i++) {
		v[i].r = s->recs[i];
		v[i].idx = i;
	}
	qsort(v, s->n, sizeof(*v), in_cmp_time);
	for (i = 0; i < s->n; i++)
		s->recs[i] = v[i].r;
	free(v);
}

static inline void in_close(struct in_sess *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->recs[i]);
	free(s->recs);
	if (s->prod && s->prod != MAP_FAILED)
		munmap(s->prod, s->info.producer_size);
	if (s->cons && s->cons != MAP_FAILED)
		munmap(s->cons, s->info.consumer_size);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* Session-wide count of events dropped (GET_STATS), for "nothing lost". */
static inline uint64_t in_stats_lost(struct in_sess *s)
{
	struct memmon_cpu_stats st[256];
	struct memmon_stats q = {
		.size = sizeof(q), .nr_cpus = 256, .cpus = (uintptr_t)st,
		.cpu_stats_size = sizeof(st[0]),
	};
	uint64_t lost = 0;
	uint32_t i;

	if (ioctl(s->fd, MEMMON_IOC_GET_STATS, &q))
		return ~0ULL;
	for (i = 0; i < q.nr_cpus && i < 256; i++)
		lost += st[i].lost;
	return lost;
}

static inline const char *in_type_name(unsigned int t)
{
	static const char *const n[] = {
		"?", "LOST", "MARK", "SYSCALL", "FAULT", "RSS", "FORK", "EXEC",
		"EXIT", "PATH",
	};

	return t < sizeof(n) / sizeof(n[0]) ? n[t] : "?";
}

/* Print a record as a "#" comment line (diagnostics). */
static inline void in_dump(const struct in_rec *r)
{
	const struct memmon_rec_header *h = &r->hdr;

	printf("# %llu cpu%u %u/%u %s", (unsigned long long)h->time_ns, h->cpu,
	       h->tgid, h->tid, in_type_name(h->type));
	switch (h->type) {
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *c = (const void *)r;

		printf(" sys=%u fl=%#x args=%#llx,%#llx,%#llx,%#llx,%#llx,%#llx ret=%lld aux=%#llx,%llu",
		       c->sys, c->flags,
		       (unsigned long long)c->args[0], (unsigned long long)c->args[1],
		       (unsigned long long)c->args[2], (unsigned long long)c->args[3],
		       (unsigned long long)c->args[4], (unsigned long long)c->args[5],
		       (long long)c->ret, (unsigned long long)c->aux[0],
		       (unsigned long long)c->aux[1]);
		break;
	}
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f = (const void *)r;

		printf(" addr=%#llx ip=%#llx acc=%u class=%u res=%u fl=%#x pfn=%#llx dur=%llu",
		       (unsigned long long)f->addr, (unsigned long long)f->ip,
		       f->access, f->fclass, f->result, f->flags,
		       (unsigned long long)f->pfn,
		       (unsigned long long)f->duration_ns);
		break;
	}
	case MEMMON_REC_PATH: {
		const struct memmon_rec_path *p = (const void *)r;

		printf(" dev=%#llx ino=%llu %s", (unsigned long long)p->dev,
		       (unsigned long long)p->ino, p->path);
		break;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = (const void *)r;

		printf(" child=%u/%u fl=%#x", f->child_tgid, f->child_tid, f->flags);
		break;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = (const void *)r;

		printf(" %s", e->path);
		break;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *e = (const void *)r;

		printf(" code=%#x fl=%#x peak_rss=%llu peak_vm=%llu", e->code,
		       e->flags, (unsigned long long)e->peak_rss,
		       (unsigned long long)e->peak_vm);
		break;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *m = (const void *)r;

		printf(" anon=%llu file=%llu shmem=%llu swap=%llu",
		       (unsigned long long)m->anon, (unsigned long long)m->file,
		       (unsigned long long)m->shmem, (unsigned long long)m->swap);
		break;
	}
	}
	putchar('\n');
}

#endif /* MEMMON_TESTS_VM_INSTR_H */
