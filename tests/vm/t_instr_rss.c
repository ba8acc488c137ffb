// SPDX-License-Identifier: GPL-2.0
/*
 * MEMMON_REC_RSS: a process grows its anonymous memory by 32 MiB in two
 * steps, then gives it back. The records follow (the peak is seen, the
 * final drop is reported even though nothing changes afterwards: the
 * trailing value is flushed by the timer), they are coalesced (fewer than
 * one per rss_stat tracepoint call), and a session that did not ask for
 * RSS gets none.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "vmtest.h"
#include "instr.h"

#define P	4096UL
#define STEP	(16UL << 20)

static void workload(void)
{
	char *p = mmap(NULL, 2 * STEP, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		_exit(1);
	for (i = 0; i < STEP; i += P)
		p[i] = 1;
	usleep(100 * 1000);
	for (i = STEP; i < 2 * STEP; i += P)
		p[i] = 1;
	usleep(100 * 1000);
	munmap(p, 2 * STEP);
	/* Nothing changes any more: the last value must still arrive. */
	usleep(300 * 1000);
	_exit(0);
}

int main(void)
{
	struct in_sess s, other;
	uint64_t peak = 0, last = 0, n = 0;
	int go[2], st;
	size_t i;
	pid_t pid;
	char c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(go) || in_open(&s, 8 << 20) || in_open(&other, 1 << 20))
		return 1;
	pid = fork();
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(99);
		workload();
	}
	close(go[0]);
	VT_SUCCESS(in_events(&s, 1ULL << MEMMON_EV_RSS, 0), "RSS events only");
	VT_SUCCESS(in_events(&other, 1ULL << MEMMON_EV_FAULT, 0),
		   "a second session: faults only");
	VT_SUCCESS(in_watch(&s, pid, 0), "watch the child");
	VT_SUCCESS(in_watch(&other, pid, 0), "the second session watches it too");
	VT_SUCCESS(in_enable(&s), "enable");
	VT_SUCCESS(in_enable(&other), "enable the second");
	VT_OK(write(go[1], "g", 1) == 1, "start");
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
	/* Expectation: coalesced: rss_stat fires at least once per 64 faults. */
	VT_OK(n > 2 && n < 2 * STEP / P / 64,
	      "coalesced: %llu records for %lu pages", (unsigned long long)n,
	      2 * STEP / P);
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
