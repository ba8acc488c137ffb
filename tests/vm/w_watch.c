// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal consumer: watch a process for a while, read its records.
 *
 *   w_watch PID MS      watch PID (following children) for MS ms, reading
 *                       the rings all along; print "records N lost L"
 *   w_churn             a workload that never stops: mmap, touch, munmap,
 *                       brk, fork+exit, in a loop (same binary, argv[0])
 *
 * Exit status 0 when the session worked (open, watch, enable, disable).
 */
#include <libgen.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "instr.h"

static int churn(void)
{
	unsigned long n;

	for (n = 0;; n++) {
		volatile char *p = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int i;

		if (p == MAP_FAILED)
			return 1;
		for (i = 0; i < 16; i++)
			p[i * 4096] = 1;
		munmap((void *)p, 16 * 4096);
		syscall(SYS_brk, 0);
		if (n % 64 == 0) {
			pid_t c = fork();

			if (!c)
				_exit(0);
			if (c > 0)
				waitpid(c, NULL, 0);
		}
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct in_sess s;
	uint64_t end, total = 0;
	size_t i;

	if (!strcmp(basename(argv[0]), "w_churn") ||
	    (argc > 1 && !strcmp(argv[1], "--churn")))
		return churn();
	if (argc != 3)
		return 2;
	if (in_open(&s, 1 << 20) ||
	    in_watch(&s, atoi(argv[1]), MEMMON_WATCH_FOLLOW_CHILDREN) ||
	    in_enable(&s)) {
		perror("w_watch: session");
		return 1;
	}
	end = now_ms() + atoi(argv[2]);
	while (now_ms() < end) {
		in_read(&s);
		for (i = 0; i < s.n; i++)
			free(s.recs[i]);
		total += s.n;
		s.n = 0;
		usleep(10 * 1000);
	}
	if (in_disable(&s))
		return 1;
	in_read(&s);
	total += s.n;
	printf("records %llu lost %llu\n", (unsigned long long)total,
	       (unsigned long long)s.lost);
	in_close(&s);
	return 0;
}
