// SPDX-License-Identifier: GPL-2.0
/*
 * Every loss reaches the stream when a recording ends. A loss is reported
 * by the LOST record that the next event on its CPU brings; at the end
 * there is no next event. Here a watched process faults through 8 KiB
 * rings that nobody reads, one child per CPU, so that every ring ends full
 * with a loss pending. Then, as uapi/linux/memmon.h "Ending a recording"
 * says: DISABLE, drain, DISABLE, drain; and per CPU:
 *
 *   produced == delivered + lost,
 *   records read (not LOST) == delivered,
 *   the counts of the LOST records read == lost,
 *   nothing left pending.
 *
 * Also: DISABLE of a session never enabled, with or without rings, is 0;
 * GET_INFO says MEMMON_FEAT_FLUSH_LOST; the same through libmemmon's
 * memmon_session__finish() is in test_lib_device (t_cli_lib).
 */
#include <signal.h>
#include <sys/wait.h>

#include "mmtest.h"

#define MAX_CPUS	64
#define PAGES		2048

struct tally {
	uint64_t events[MAX_CPUS];
	uint64_t lost[MAX_CPUS];
	long bad;
};

static void tally_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	struct tally *t = arg;

	if (cpu >= MAX_CPUS || rec->cpu != cpu) {
		t->bad++;
		return;
	}
	if (rec->type == MEMMON_REC_LOST) {
		const struct memmon_rec_lost *l = (const void *)rec;

		if (rec->size != sizeof(*l) || !l->count || l->first_ns > l->last_ns ||
		    !l->first_ns)
			t->bad++;
		t->lost[cpu] += l->count;
		return;
	}
	t->events[cpu]++;
}

/* A child on @cpu that touches PAGES fresh pages when told, then exits. */
static pid_t spawn(int cpu, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		MM_DIE("pipe");
	pid = fork();
	if (!pid) {
		char b, *m;

		close(p[1]);
		mm_pin(cpu);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		m = mmap(NULL, PAGES * 4096UL, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(2);
		/* A fault per page, not one per huge page. */
		madvise(m, PAGES * 4096UL, MADV_NOHUGEPAGE);
		for (long i = 0; i < PAGES; i++)
			m[i * 4096] = 1;
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void drain_all(struct mm_map *m, int ncpus, struct tally *t)
{
	for (int cpu = 0; cpu < ncpus; cpu++)
		if (mm_drain_cpu(m, cpu, tally_rec, t) < 0)
			t->bad++;
}

static void ends_with_losses(void)
{
	int ncpus = mm_nr_cpus(), fd = mm_open(), go[MAX_CPUS], cpu, status;
	struct memmon_cpu_stats cs[MAX_CPUS];
	uint64_t pending = 0, lost = 0;
	pid_t pid[MAX_CPUS];
	static struct tally t;
	struct mm_map m;
	int exact = 1, exited = 1;

	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	memset(&t, 0, sizeof(t));
	VT_SUCCESS(mm_configure(fd, 8192, 0), "CONFIGURE 8 KiB rings");
	mm_map(fd, &m);
	for (cpu = 0; cpu < ncpus; cpu++) {
		pid[cpu] = spawn(cpu, &go[cpu]);
		if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)pid[cpu], 0))
			MM_DIE("WATCH_ADD");
	}
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE");
	for (cpu = 0; cpu < ncpus; cpu++)
		if (write(go[cpu], "g", 1) != 1)
			MM_DIE("start a child");
	for (cpu = 0; cpu < ncpus; cpu++) {
		if (waitpid(pid[cpu], &status, 0) != pid[cpu] || status)
			exited = 0;
		close(go[cpu]);
	}
	VT_OK(exited, "the %d children faulted %d pages each and exited 0", ncpus, PAGES);
	/* Still enabled: what a trace that just saw its process exit has. */
	for (cpu = 0; cpu < ncpus; cpu++)
		pending += __atomic_load_n(&mm_ring_page(&m, cpu)->lost_pending,
					   __ATOMIC_ACQUIRE);
	VT_OK(pending > 0, "the rings end with %llu losses pending, no event to carry them",
	      (unsigned long long)pending);

	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE");
	drain_all(&m, ncpus, &t);
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE again, the rings drained");
	drain_all(&m, ncpus, &t);

	mm_stats(fd, cs, MAX_CPUS);
	pending = 0;
	for (cpu = 0; cpu < ncpus; cpu++) {
		uint64_t lp = mm_ring_page(&m, cpu)->lost_pending;

		printf("# cpu %d: produced %llu delivered %llu lost %llu; stream: %llu events, LOST %llu; pending %llu\n",
		       cpu, (unsigned long long)cs[cpu].produced,
		       (unsigned long long)cs[cpu].delivered,
		       (unsigned long long)cs[cpu].lost,
		       (unsigned long long)t.events[cpu],
		       (unsigned long long)t.lost[cpu], (unsigned long long)lp);
		if (cs[cpu].produced != cs[cpu].delivered + cs[cpu].lost ||
		    cs[cpu].delivered != t.events[cpu] || cs[cpu].lost != t.lost[cpu])
			exact = 0;
		pending += lp;
		lost += cs[cpu].lost;
	}
	VT_OK(lost > 0, "%llu events lost in all", (unsigned long long)lost);
	VT_OK(exact, "per CPU: produced = delivered + lost, delivered = events read, lost = LOST counts read");
	VT_OK(pending == 0, "nothing left pending (%llu)", (unsigned long long)pending);
	VT_OK(!t.bad, "every record well formed, LOST records with their times (%ld bad)", t.bad);
	/* Nothing more comes: a third DISABLE writes nothing. */
	{
		uint64_t before = 0, after = 0;

		for (cpu = 0; cpu < ncpus; cpu++)
			before += mm_ring_page(&m, cpu)->producer_pos;
		VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "a third DISABLE");
		for (cpu = 0; cpu < ncpus; cpu++)
			after += mm_ring_page(&m, cpu)->producer_pos;
		VT_OK(before == after, "it wrote nothing (%llu -> %llu bytes)",
		      (unsigned long long)before, (unsigned long long)after);
	}
	mm_unmap(&m);
	close(fd);
}

int main(void)
{
	struct memmon_info info;
	int fd = mm_open();

	mm_info(fd, &info);
	VT_OK(info.features & MEMMON_FEAT_FLUSH_LOST, "GET_INFO: MEMMON_FEAT_FLUSH_LOST");
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE of a session with no rings");
	close(fd);
	fd = mm_open();
	VT_SUCCESS(mm_configure(fd, 8192, 0), "CONFIGURE");
	VT_SUCCESS(mm_mark(fd, 0, "x", 1), "a MARK creates the rings");
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE of a session never enabled");
	close(fd);
	ends_with_losses();
	return vt_exit();
}
