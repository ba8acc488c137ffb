// SPDX-License-Identifier: GPL-2.0
/*
 * cputime - the CPU time of a command's whole process tree, to the
 * microsecond (make bench's whole runs).
 *
 *   cputime CMD [ARG...]
 *
 * Runs CMD and reaps it with wait4(), whose rusage sums user and system
 * time over CMD and every descendant it waited for (the kernel keeps that
 * sum exact: it is the tasks' scheduler runtime, split between user and
 * system by ticks). Prints, on stderr, after CMD's own output:
 *
 *   CPUTIME ns=N status=S pid=P
 *
 * (P: CMD's pid, for a system-wide tracer's lines) and exits with CMD's
 * exit status (128 + the signal if it was killed).
 * Inside the icount VM the CPU clock counts instructions executed, so N is
 * the instructions CMD's tree executed, idle time excluded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	unsigned long long ns;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: cputime CMD [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("cputime: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "cputime: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("cputime: wait4");
			return 1;
		}
	}
	ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	fprintf(stderr, "CPUTIME ns=%llu status=%d pid=%d\n", ns, status, (int)pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
