// SPDX-License-Identifier: GPL-2.0
/*
 * MEMMON_FULL_OVERWRITE, the flight recorder: an 8 KiB ring flooded with
 * MARKs by threads pinned on every CPU keeps its newest records. Per CPU:
 * produced == delivered + lost, lost == overwritten (nothing else drops
 * here), the records from tail_pos are exactly the delivered ones, intact,
 * each thread's in order and ending with its last MARK. A consumer copying
 * while the flood runs (the uapi's copy, [G], re-read tail_pos) keeps only
 * whole records. A hostile consumer_pos changes nothing; read() refuses.
 */
#include <stdbool.h>
#include "mmtest.h"

#define THREADS_PER_CPU	2
#define MARKS		4000
#define MAX_CPUS	64
#define RING		8192

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
		if (mm_mark(p->fd, 0, &pl, 8 + (i % 4) * 8))
			break;
	}
	return NULL;
}

struct tally {
	uint64_t marks[MAX_CPUS];
	uint32_t last[MAX_CPUS * THREADS_PER_CPU];
	uint32_t newest[MAX_CPUS];	/* seq of the last MARK read per CPU */
	long bad;
	int nthreads;
	bool gapless;		/* quiescent: each thread's MARKs consecutive */
};

static void tally_rec(const struct memmon_rec_header *rec, unsigned int cpu,
		      struct tally *t)
{
	const struct memmon_rec_mark *m = (const void *)rec;
	struct payload pl;
	uint32_t len = m->len;

	if (rec->type != MEMMON_REC_MARK || rec->cpu != cpu) {
		t->bad++;
		return;
	}
	t->marks[cpu]++;
	memset(&pl, 0, sizeof(pl));
	memcpy(&pl, m->data, len < sizeof(pl) ? len : sizeof(pl));
	if (len < 8 || len > sizeof(pl) || rec->size != ((32 + len + 7) & ~7u) ||
	    pl.thread >= (uint32_t)t->nthreads || pl.seq <= t->last[pl.thread] ||
	    (t->gapless && t->last[pl.thread] && pl.seq != t->last[pl.thread] + 1) ||
	    (int)pl.thread / THREADS_PER_CPU != (int)cpu) {
		t->bad++;
		return;
	}
	for (uint32_t i = 0; i + 8 < len; i++)
		if (pl.fill[i] != (pl.seq & 0xff))
			t->bad++;
	t->last[pl.thread] = pl.seq;
	t->newest[cpu] = pl.seq;
}

/*
 * The uapi's reader: copy [max(cons, tail_pos), producer_pos), fence,
 * re-read tail_pos, walk from the later of the two. Returns records kept.
 */
static long read_overwrite(const struct mm_map *m, unsigned int cpu,
			   uint64_t *cons, uint8_t *copy, struct tally *t)
{
	struct memmon_ring_page *pg = mm_ring_page(m, cpu);
	uint64_t mask = m->info.ring_size - 1, prod, tail, start;
	const struct memmon_rec_header *rec;
	long n = 0;

	prod = __atomic_load_n(&pg->producer_pos, __ATOMIC_ACQUIRE);	/* [C] */
	tail = __atomic_load_n(&pg->tail_pos, __ATOMIC_RELAXED);
	start = *cons >= tail && *cons <= prod ? *cons : tail;
	if (prod - start > m->info.ring_size)
		return -1;
	memcpy(copy + (start & mask), mm_ring_data(m, cpu) + (start & mask),
	       prod - start);
	/* The copy has no alias: what ran past its end is also at its start. */
	if ((start & mask) + (prod - start) > m->info.ring_size)
		memcpy(copy, copy + m->info.ring_size,
		       (start & mask) + (prod - start) - m->info.ring_size);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);			/* [G] */
	tail = __atomic_load_n(&pg->tail_pos, __ATOMIC_RELAXED);
	if (tail > prod)
		start = prod;
	else if (tail > start)
		start = tail;
	while (start < prod) {
		rec = (const void *)(copy + (start & mask));
		if (rec->size < sizeof(*rec) || rec->size % MEMMON_REC_ALIGN ||
		    rec->size > prod - start)
			return -1;
		tally_rec(rec, cpu, t);
		start += rec->size;
		n++;
	}
	*cons = prod;
	return n;
}

static volatile int reading;

struct reader {
	const struct mm_map *m;
	struct tally *t;
	int ncpus;
	long bad;
};

static void *concurrent_reader(void *arg)
{
	struct reader *rd = arg;
	static uint64_t cons[MAX_CPUS];
	uint8_t *copy = malloc(2 * RING);

	while (__atomic_load_n(&reading, __ATOMIC_ACQUIRE))
		for (int cpu = 0; cpu < rd->ncpus; cpu++)
			if (read_overwrite(rd->m, cpu, &cons[cpu], copy, rd->t) < 0)
				rd->bad++;
	free(copy);
	return NULL;
}

static int configure_overwrite(int fd, uint64_t size)
{
	struct memmon_config c = {
		.size = sizeof(c),
		.full_policy = MEMMON_FULL_OVERWRITE,
		.ring_size = size,
	};

	return ioctl(fd, MEMMON_IOC_CONFIGURE, &c);
}

static void run(int with_reader)
{
	int ncpus = mm_nr_cpus(), n = ncpus * THREADS_PER_CPU, cpu, i, exact = 1;
	const char *what = with_reader ? "a concurrent reader" : "no reader";
	struct producer p[MAX_CPUS * THREADS_PER_CPU];
	pthread_t th[MAX_CPUS * THREADS_PER_CPU], rth;
	struct memmon_cpu_stats cs[MAX_CPUS];
	uint64_t produced = 0, ow = 0;
	static struct tally t, tr;
	struct reader rd;
	pthread_barrier_t go;
	uint8_t *copy = malloc(2 * RING);
	struct mm_map m;
	int fd = mm_open();
	char buf[256];

	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	memset(&t, 0, sizeof(t));
	memset(&tr, 0, sizeof(tr));
	t.nthreads = tr.nthreads = n;
	t.gapless = true;
	VT_SUCCESS(configure_overwrite(fd, RING), "CONFIGURE OVERWRITE 8 KiB (%s)", what);
	mm_map(fd, &m);
	for (cpu = 0; cpu < ncpus; cpu++)	/* hostile: ignored in this mode */
		*mm_cons_pos(&m, cpu) = 0x7ff0000000000000ULL + (uint64_t)cpu;
	rd = (struct reader){ .m = &m, .t = &tr, .ncpus = ncpus };
	if (with_reader) {
		reading = 1;
		pthread_create(&rth, NULL, concurrent_reader, &rd);
	}
	pthread_barrier_init(&go, NULL, (unsigned int)n);
	for (i = 0; i < n; i++) {
		p[i] = (struct producer){ .fd = fd, .cpu = i / THREADS_PER_CPU,
					  .thread = (uint32_t)i, .go = &go };
		pthread_create(&th[i], NULL, produce, &p[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (with_reader) {
		__atomic_store_n(&reading, 0, __ATOMIC_RELEASE);
		pthread_join(rth, NULL);
	}
	mm_stats(fd, cs, MAX_CPUS);
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct memmon_ring_page *pg = mm_ring_page(&m, cpu);
		uint64_t cons = 0;
		long kept = read_overwrite(&m, cpu, &cons, copy, &t);

		printf("# cpu %d: produced %llu delivered %llu lost %llu overwritten %llu; kept %ld from tail %llu to %llu\n",
		       cpu, (unsigned long long)cs[cpu].produced,
		       (unsigned long long)cs[cpu].delivered,
		       (unsigned long long)cs[cpu].lost,
		       (unsigned long long)pg->overwritten, kept,
		       (unsigned long long)pg->tail_pos,
		       (unsigned long long)pg->producer_pos);
		if (cs[cpu].produced != cs[cpu].delivered + cs[cpu].lost ||
		    cs[cpu].lost != pg->overwritten || kept < 0 ||
		    (uint64_t)kept != cs[cpu].delivered ||
		    pg->producer_pos - pg->tail_pos > RING || !pg->tail_pos)
			exact = 0;
		produced += cs[cpu].produced;
		ow += pg->overwritten;
	}
	VT_OK(produced == (uint64_t)n * MARKS, "%s: produced %llu", what,
	      (unsigned long long)produced);
	VT_OK(ow > 0, "%s: %llu events overwritten", what, (unsigned long long)ow);
	VT_OK(exact, "%s: per CPU produced = delivered + lost, lost = overwritten, "
	      "the ring holds exactly the delivered", what);
	VT_OK(!t.bad, "%s: records kept are whole and gapless: %ld bad", what, t.bad);
	for (cpu = 0, exact = 1; cpu < ncpus; cpu++)
		if (t.newest[cpu] != MARKS)
			exact = 0;
	VT_OK(exact, "%s: each CPU's ring ends with the last MARK made there", what);
	if (with_reader)
		VT_OK(!tr.bad && !rd.bad, "%s: what it kept while the ring was written over "
		      "is whole and in order (%ld bad records, %ld bad rounds)", what,
		      tr.bad, rd.bad);
	VT_ERRNO(read(fd, buf, sizeof(buf)), EOPNOTSUPP, "%s: read() is refused", what);
	mm_unmap(&m);
	close(fd);
	free(copy);
}

int main(void)
{
	struct memmon_info info;
	int fd = mm_open();

	mm_info(fd, &info);
	VT_OK(info.features & MEMMON_FEAT_OVERWRITE, "MEMMON_FEAT_OVERWRITE offered");
	VT_OK(info.abi_minor >= 3, "ABI 1.%u", info.abi_minor);
	close(fd);
	run(0);
	run(1);
	return vt_exit();
}
