// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: one producer thread per CPU MARKs as fast as it can for about a
 * second while a consumer drains the rings through the mapping, sleeping
 * in poll() between rounds. Every record is checked (type, size, CPU, ids,
 * payload, padding, per-thread order) and the accounting must be exact.
 */
#include <poll.h>
#include <time.h>

#include "mmtest.h"

#define MAX_CPUS	64
#define SECONDS		1

struct payload {
	uint32_t thread;
	uint32_t seq;
	uint64_t check;		/* seq * golden ratio, a checksum of sorts */
	uint8_t fill[40];	/* (seq + i) & 0xff */
};

static volatile int stop;

struct producer {
	int fd;
	int cpu;
	pid_t tid;
	uint32_t sent;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct payload pl = { .thread = (uint32_t)p->cpu };
	uint32_t len;

	mm_pin(p->cpu);
	p->tid = mm_gettid();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pl.seq = ++p->sent;
		pl.check = pl.seq * 0x9e3779b97f4a7c15ull;
		for (unsigned int i = 0; i < sizeof(pl.fill); i++)
			pl.fill[i] = (uint8_t)(pl.seq + i);
		/* 16..56 bytes of payload, not always a multiple of 8. */
		len = 16 + pl.seq % 41;
		if (mm_mark(p->fd, 0, &pl, len)) {
			p->sent--;
			break;
		}
	}
	return NULL;
}

struct check {
	struct producer *prod;
	int ncpus;
	uint32_t last[MAX_CPUS];
	uint64_t marks[MAX_CPUS], lost[MAX_CPUS];
	long bad;
};

static void check_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	const struct memmon_rec_mark *m = (const void *)rec;
	struct check *c = arg;
	struct payload pl = { 0 };
	uint32_t len, t;

	if (rec->cpu != cpu) {
		c->bad++;
		return;
	}
	if (rec->type == MEMMON_REC_LOST) {
		c->lost[cpu] += ((const struct memmon_rec_lost *)rec)->count;
		return;
	}
	if (rec->type != MEMMON_REC_MARK || rec->tgid != (uint32_t)getpid()) {
		c->bad++;
		return;
	}
	c->marks[cpu]++;
	len = m->len;
	if (!len)		/* the final flush marker */
		return;
	if (len < 16 || len > sizeof(pl) || rec->size != ((32 + len + 7) & ~7u)) {
		c->bad++;
		return;
	}
	memcpy(&pl, m->data, len);
	t = pl.thread;
	if (t != cpu || rec->tid != (uint32_t)c->prod[t].tid || pl.seq <= c->last[t] ||
	    pl.check != pl.seq * 0x9e3779b97f4a7c15ull) {
		c->bad++;
		return;
	}
	for (uint32_t i = 0; i + 16 < len; i++)
		if (pl.fill[i] != (uint8_t)(pl.seq + i))
			c->bad++;
	/* The padding after the payload is zero. */
	for (uint32_t i = 32 + len; i < rec->size; i++)
		if (((const uint8_t *)rec)[i])
			c->bad++;
	c->last[t] = pl.seq;
}

#define ORDER_THREADS	4
#define ORDER_MARKS	25000

static void *mark_on_cpu0(void *arg)
{
	int fd = *(int *)arg;

	mm_pin(0);
	for (int i = 0; i < ORDER_MARKS; i++)
		mm_mark(fd, 0, NULL, 0);
	return NULL;
}

struct order {
	uint64_t last;
	long recs, inversions;
};

static void check_time(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	struct order *o = arg;

	(void)cpu;
	if (rec->time_ns < o->last)
		o->inversions++;
	o->last = rec->time_ns;
	o->recs++;
}

/*
 * Several threads on one CPU, preempting each other (preempt=full makes that
 * happen inside the ioctl): the ring still holds records in time order,
 * which the k-way merge of the consumers relies on. A writer takes its
 * timestamp where it cannot be preempted before its record is reserved.
 */
static void test_time_order(void)
{
	int fd = mm_open();
	struct order o = { 0 };
	pthread_t th[ORDER_THREADS];
	struct mm_map m;

	/* 4 MiB: room for all 100000 empty (32-byte) markers. */
	mm_configure(fd, 4 << 20, 0);
	mm_map(fd, &m);
	for (int i = 0; i < ORDER_THREADS; i++)
		pthread_create(&th[i], NULL, mark_on_cpu0, &fd);
	for (int i = 0; i < ORDER_THREADS; i++)
		pthread_join(th[i], NULL);
	mm_drain_cpu(&m, 0, check_time, &o);
	/* Every marker is there, and none is older than the one before it. */
	VT_OK(o.recs == ORDER_THREADS * ORDER_MARKS && !o.inversions,
	      "%d threads on CPU 0: %ld records, %ld out of time order", ORDER_THREADS, o.recs, o.inversions);
	mm_unmap(&m);
	close(fd);
}

int main(void)
{
	int ncpus = mm_nr_cpus(), cpu, fd = mm_open(), exact = 1;
	struct producer prod[MAX_CPUS];
	struct memmon_cpu_stats cs[MAX_CPUS];
	static struct check c;
	pthread_t th[MAX_CPUS];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t sent = 0, marks = 0, lost = 0;
	long polls = 0, wakeups = 0;
	struct mm_map m;
	time_t end;

	test_time_order();
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	/* 64 KiB rings, woken at 8 KiB: many wraps and wakeups per second. */
	VT_SUCCESS(mm_configure(fd, 65536, 8192), "CONFIGURE 64 KiB, wakeup 8 KiB");
	mm_map(fd, &m);
	c.prod = prod;
	c.ncpus = ncpus;
	for (cpu = 0; cpu < ncpus; cpu++) {
		prod[cpu] = (struct producer){ .fd = fd, .cpu = cpu };
		pthread_create(&th[cpu], NULL, produce, &prod[cpu]);
	}
	end = time(NULL) + SECONDS + 1;
	while (time(NULL) < end) {
		polls++;
		if (poll(&pfd, 1, 100) == 1)
			wakeups++;
		for (cpu = 0; cpu < ncpus; cpu++)
			if (mm_drain_cpu(&m, cpu, check_rec, &c) < 0)
				c.bad++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (cpu = 0; cpu < ncpus; cpu++)
		pthread_join(th[cpu], NULL);
	/* Drain, then flush each CPU's pending loss with an empty marker. */
	for (cpu = 0; cpu < ncpus; cpu++) {
		mm_drain_cpu(&m, cpu, check_rec, &c);
		mm_pin(cpu);
		mm_mark(fd, 0, NULL, 0);
		mm_drain_cpu(&m, cpu, check_rec, &c);
	}
	mm_stats(fd, cs, MAX_CPUS);
	for (cpu = 0; cpu < ncpus; cpu++) {
		printf("# cpu %d: sent %u, produced %llu, delivered %llu, lost %llu, read %llu marks + lost %llu\n",
		       cpu, prod[cpu].sent, (unsigned long long)cs[cpu].produced,
		       (unsigned long long)cs[cpu].delivered, (unsigned long long)cs[cpu].lost,
		       (unsigned long long)c.marks[cpu], (unsigned long long)c.lost[cpu]);
		if (cs[cpu].produced != (uint64_t)prod[cpu].sent + 1 ||
		    cs[cpu].produced != cs[cpu].delivered + cs[cpu].lost ||
		    cs[cpu].delivered != c.marks[cpu] || cs[cpu].lost != c.lost[cpu])
			exact = 0;
		sent += prod[cpu].sent;
		marks += c.marks[cpu];
		lost += c.lost[cpu];
	}
	printf("# %ld polls, %ld readable\n", polls, wakeups);
	/* The producers got going. */
	VT_OK(sent > 1000, "%llu MARKs sent in ~%d s", (unsigned long long)sent, SECONDS);
	/* A good share reached the consumer (it competes for the same 2 CPUs). */
	VT_OK(marks > sent / 10, "%llu delivered, %llu lost", (unsigned long long)marks,
	      (unsigned long long)lost);
	/* poll() woke the consumer. */
	VT_OK(wakeups > 0, "poll() reported readable %ld times", wakeups);
	/* Every record intact and in order. */
	VT_OK(!c.bad, "%ld bad records", c.bad);
	/* Exact per-CPU accounting. */
	VT_OK(exact, "produced == sent == delivered + lost, stream agrees, per CPU");
	mm_unmap(&m);
	close(fd);
	return vt_exit();
}
