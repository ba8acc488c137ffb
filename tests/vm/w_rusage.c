// SPDX-License-Identifier: GPL-2.0
/*
 * w_rusage - run a command as a child and print what the kernel counted
 * for it: the referee of t_cli_fidelity.sh.
 *
 *   w_rusage OUT CMD [ARGS...]
 *
 * Forks; the child execs CMD; wait4() gives the child's rusage, which
 * covers the child from fork to exit and every descendant it reaped
 * (the kernel adds those in when it reaps them). Writes one line to OUT:
 *
 *   pid=PID status=S minflt=N majflt=N maxrss=KIB
 *
 * and exits with CMD's status. Under `memmon trace -f` the child is
 * watched from its first instruction (the fork is followed before the
 * child runs), so memmon's HANDLED fault records of the child's tree must
 * count exactly minflt + majflt, and the major ones exactly majflt.
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
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: w_rusage OUT CMD [ARGS...]\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "w_rusage: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("w_rusage: fork");
		return 2;
	}
	if (!pid) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "w_rusage: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("w_rusage: wait4");
		return 2;
	}
	fprintf(out, "pid=%d status=%d minflt=%ld majflt=%ld maxrss=%ld\n",
		(int)pid, status, ru.ru_minflt, ru.ru_majflt, ru.ru_maxrss);
	if (fclose(out)) {
		perror("w_rusage: write");
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
