// SPDX-License-Identifier: GPL-2.0
/*
 * MEMMON_REC_RSS: a process grows its anonymous memory by 32 MiB in two
 * steps, then gives it back. The records follow (the peak is seen, the
 * final drop is reported even though nothing changes afterwards: the
 * trailing value is flushed by the timer), they are coalesced, and a
 * session that did not ask for RSS gets none.
 *
 * Coalescing is checked against its contract, which holds at any speed:
 * during each burst of faults, per CPU at most one record per tick plus a
 * timer flush per tick, plus one per rss_kib (1 MiB) of sudden change. The
 * child stamps each burst (CLOCK_MONOTONIC, the records' clock); the tick
 * is the resolution of CLOCK_MONOTONIC_COARSE (TICK_NSEC).
 */
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>

#include "vmtest.h"
#include "instr.h"

#define P	4096UL
#define STEP	(16UL << 20)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The two bursts' [start, end] times go to the parent through @fd. */
static void workload(int fd)
{
	char *p = mmap(NULL, 2 * STEP, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t t[4];
	size_t i;

	if (p == MAP_FAILED)
		_exit(1);
	t[0] = mono_ns();
	for (i = 0; i < STEP; i += P)
		p[i] = 1;
	t[1] = mono_ns();
	usleep(100 * 1000);
	t[2] = mono_ns();
	for (i = STEP; i < 2 * STEP; i += P)
		p[i] = 1;
	t[3] = mono_ns();
	if (write(fd, t, sizeof(t)) != sizeof(t))
		_exit(2);
	usleep(100 * 1000);
	munmap(p, 2 * STEP);
	/* Nothing changes any more: the last value must still arrive. */
	usleep(300 * 1000);
	_exit(0);
}

int main(void)
{
	struct in_sess s, other;
	uint64_t peak = 0, last = 0, n = 0, t[4] = { 0 }, burst_n = 0, bound, tick;
	struct timespec res;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int go[2], stamps[2], st;
	size_t i;
	pid_t pid;
	char c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(go) || pipe(stamps) || in_open(&s, 8 << 20) ||
	    in_open(&other, 1 << 20))
		return 1;
	pid = fork();
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(99);
		workload(stamps[1]);
	}
	close(go[0]);
	close(stamps[1]);
	VT_SUCCESS(in_events(&s, 1ULL << MEMMON_EV_RSS, 0), "RSS events only");
	VT_SUCCESS(in_events(&other, 1ULL << MEMMON_EV_FAULT, 0),
		   "a second session: faults only");
	VT_SUCCESS(in_watch(&s, pid, 0), "watch the child");
	VT_SUCCESS(in_watch(&other, pid, 0), "the second session watches it too");
	VT_SUCCESS(in_enable(&s), "enable");
	VT_SUCCESS(in_enable(&other), "enable the second");
	VT_OK(write(go[1], "g", 1) == 1, "start");
	VT_OK(read(stamps[0], t, sizeof(t)) == sizeof(t),
	      "the workload stamped its bursts");
	VT_OK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "the workload ran");
	in_disable(&s);
	in_disable(&other);
	in_drain(&s);
	in_drain(&other);

	for (i = 0; i < s.n; i++) {
		const struct memmon_rec_rss *r = (const void *)s.recs[i];

		if (r->hdr.type != MEMMON_REC_RSS || r->hdr.tgid != (uint32_t)pid)
			continue;
		n++;
		if ((r->hdr.time_ns >= t[0] && r->hdr.time_ns <= t[1]) ||
		    (r->hdr.time_ns >= t[2] && r->hdr.time_ns <= t[3]))
			burst_n++;
		if (r->anon > peak)
			peak = r->anon;
		last = r->anon;
	}
	printf("# %llu RSS records, peak anon %llu KiB, last %llu KiB\n",
	       (unsigned long long)n, (unsigned long long)peak >> 10,
	       (unsigned long long)last >> 10);
	/* Expectation: the 32 MiB are seen (less the per-thread batching, < 64 pages). */
	VT_OK(peak >= 2 * STEP - (256 * P) && peak <= 2 * STEP + (16UL << 20),
	      "the peak is about 32 MiB above the start: %llu KiB",
	      (unsigned long long)peak >> 10);
	/* Expectation: the drop after munmap() is reported without a later change. */
	VT_OK(last < STEP / 4, "the last record shows the memory given back: %llu KiB",
	      (unsigned long long)last >> 10);
	/*
	 * Expectation: coalesced. Per CPU, per tick: one record at once and
	 * one timer flush; plus a record per MiB of sudden change
	 * (2 x 16 MiB), plus the ticks each burst starts and ends in.
	 */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec ||
	    !res.tv_nsec)
		res.tv_nsec = 1000000;	/* HZ <= 1000 on every kernel */
	tick = (uint64_t)res.tv_nsec;
	bound = 2 * (uint64_t)ncpu *
		((t[1] - t[0]) / tick + (t[3] - t[2]) / tick + 4) +
		2 * STEP / (1 << 20);
	VT_OK(n > 2 && burst_n <= bound,
	      "coalesced: %llu records in the bursts (%llu ms, %llu ms, tick %llu us) for %lu pages, at most %llu",
	      (unsigned long long)burst_n,
	      (unsigned long long)(t[1] - t[0]) / 1000000,
	      (unsigned long long)(t[3] - t[2]) / 1000000,
	      (unsigned long long)tick / 1000, 2 * STEP / P,
	      (unsigned long long)bound);
	for (i = 0, n = 0; i < other.n; i++)
		n += other.recs[i]->hdr.type == MEMMON_REC_RSS;
	VT_OK(n == 0, "the faults-only session got no RSS record (%llu)",
	      (unsigned long long)n);
	for (i = 0, n = 0; i < s.n; i++)
		n += s.recs[i]->hdr.type == MEMMON_REC_FAULT;
	VT_OK(n == 0, "the RSS-only session got no FAULT record (%llu)",
	      (unsigned long long)n);
	in_close(&s);
	in_close(&other);
	return vt_exit();
}
