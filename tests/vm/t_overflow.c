// SPDX-License-Identifier: GPL-2.0
/*
 * Overflow accounting, exactly: an 8 KiB ring flooded with MARKs by threads
 * pinned on every CPU, with no consumer and then with one draining through
 * the mapping at the same time. Per CPU: produced == delivered + lost, the
 * LOST records of the stream add up to lost, and the MARK records read are
 * the delivered ones, each intact and in its thread's order.
 */
#include "mmtest.h"

#define THREADS_PER_CPU	2
#define MARKS		4000
#define MAX_CPUS	64

struct payload {
	uint32_t thread;
	uint32_t seq;
	uint8_t fill[24];	/* seq's low byte, repeated */
};

struct producer {
	int fd;
	int cpu;
	uint32_t thread;
	pthread_barrier_t *go;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct payload pl = { .thread = p->thread };

	mm_pin(p->cpu);
	pthread_barrier_wait(p->go);
	for (uint32_t i = 1; i <= MARKS; i++) {
		pl.seq = i;
		memset(pl.fill, (int)(i & 0xff), sizeof(pl.fill));
		/* Spread the sizes a little: 40..64-byte records. */
		if (mm_mark(p->fd, 0, &pl, 8 + (i % 4) * 8))
			break;
	}
	return NULL;
}

struct tally {
	uint64_t lost[MAX_CPUS];
	uint64_t marks[MAX_CPUS];
	uint32_t last[MAX_CPUS * THREADS_PER_CPU];
	long bad;
	int nthreads;
};

static void tally_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	const struct memmon_rec_mark *m = (const void *)rec;
	struct tally *t = arg;
	struct payload pl;
	uint32_t len;

	if (rec->cpu != cpu || cpu >= MAX_CPUS) {
		t->bad++;
		return;
	}
	if (rec->type == MEMMON_REC_LOST) {
		const struct memmon_rec_lost *l = (const void *)rec;

		if (rec->size != sizeof(*l) || !l->count || l->first_ns > l->last_ns)
			t->bad++;
		t->lost[cpu] += l->count;
		return;
	}
	if (rec->type != MEMMON_REC_MARK) {
		t->bad++;
		return;
	}
	t->marks[cpu]++;
	len = m->len;
	if (len == 0)	/* the flush marker */
		return;
	memset(&pl, 0, sizeof(pl));
	memcpy(&pl, m->data, len < sizeof(pl) ? len : sizeof(pl));
	if (len < 8 || len > sizeof(pl) || rec->size != ((32 + len + 7) & ~7u) ||
	    pl.thread >= (uint32_t)t->nthreads || pl.seq <= t->last[pl.thread] ||
	    (int)pl.thread / THREADS_PER_CPU != (int)cpu ||
	    rec->tgid != (uint32_t)getpid()) {
		t->bad++;
		return;
	}
	for (uint32_t i = 0; i + 8 < len; i++)
		if (pl.fill[i] != (pl.seq & 0xff))
			t->bad++;
	t->last[pl.thread] = pl.seq;
}

static volatile int draining;

struct consumer {
	struct mm_map *m;
	struct tally *t;
	int ncpus;
};

static void *consume(void *arg)
{
	struct consumer *c = arg;

	while (__atomic_load_n(&draining, __ATOMIC_ACQUIRE))
		for (int cpu = 0; cpu < c->ncpus; cpu++)
			if (mm_drain_cpu(c->m, cpu, tally_rec, c->t) < 0)
				c->t->bad++;
	return NULL;
}

static void run(int with_consumer)
{
	int ncpus = mm_nr_cpus(), n = ncpus * THREADS_PER_CPU, cpu, i, exact = 1;
	struct memmon_cpu_stats cs[MAX_CPUS];
	struct producer p[MAX_CPUS * THREADS_PER_CPU];
	static struct tally t;
	struct consumer c;
	pthread_barrier_t go;
	pthread_t th[MAX_CPUS * THREADS_PER_CPU], cth;
	uint64_t produced = 0, lost = 0;
	struct mm_map m;
	int fd = mm_open();
	const char *what = with_consumer ? "with a concurrent consumer" : "no consumer";

	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	memset(&t, 0, sizeof(t));
	t.nthreads = n;
	/* The smallest ring. */
	VT_SUCCESS(mm_configure(fd, 8192, 0), "CONFIGURE 8 KiB (%s)", what);
	mm_map(fd, &m);
	c = (struct consumer){ .m = &m, .t = &t, .ncpus = ncpus };
	if (with_consumer) {
		draining = 1;
		pthread_create(&cth, NULL, consume, &c);
	}
	pthread_barrier_init(&go, NULL, (unsigned int)n);
	for (i = 0; i < n; i++) {
		p[i] = (struct producer){ .fd = fd, .cpu = i / THREADS_PER_CPU,
					  .thread = (uint32_t)i, .go = &go };
		pthread_create(&th[i], NULL, produce, &p[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (with_consumer) {
		__atomic_store_n(&draining, 0, __ATOMIC_RELEASE);
		pthread_join(cth, NULL);
	}
	/* Drain, then one empty marker per CPU carries the pending loss out. */
	for (cpu = 0; cpu < ncpus; cpu++) {
		mm_drain_cpu(&m, cpu, tally_rec, &t);
		mm_pin(cpu);
		mm_mark(fd, 0, NULL, 0);
		mm_drain_cpu(&m, cpu, tally_rec, &t);
	}
	mm_stats(fd, cs, MAX_CPUS);
	for (cpu = 0; cpu < ncpus; cpu++) {
		printf("# cpu %d: produced %llu delivered %llu lost %llu; stream: %llu marks, lost %llu; pending %llu\n",
		       cpu, (unsigned long long)cs[cpu].produced,
		       (unsigned long long)cs[cpu].delivered,
		       (unsigned long long)cs[cpu].lost,
		       (unsigned long long)t.marks[cpu],
		       (unsigned long long)t.lost[cpu],
		       (unsigned long long)mm_ring_page(&m, cpu)->lost_pending);
		if (cs[cpu].produced != cs[cpu].delivered + cs[cpu].lost ||
		    cs[cpu].lost != t.lost[cpu] || cs[cpu].delivered != t.marks[cpu] ||
		    mm_ring_page(&m, cpu)->lost_pending)
			exact = 0;
		produced += cs[cpu].produced;
		lost += cs[cpu].lost;
	}
	/* Every MARK and flush marker was produced on its CPU. */
	VT_OK(produced == (uint64_t)n * MARKS + (uint64_t)ncpus, "%s: produced %llu", what,
	      (unsigned long long)produced);
	/* The ring did overflow. */
	VT_OK(lost > 0, "%s: %llu events lost", what, (unsigned long long)lost);
	/* Per CPU: produced = delivered + lost = MARKs read + LOST counts read. */
	VT_OK(exact, "%s: accounting exact on every CPU", what);
	/* Every record intact, every thread's MARKs in order. */
	VT_OK(!t.bad, "%s: %ld bad records", what, t.bad);
	mm_unmap(&m);
	close(fd);
}

int main(void)
{
	run(0);
	run(1);
	return vt_exit();
}
