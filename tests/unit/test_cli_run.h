/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run the memmon command in-process (tool_main in a forked child, so that
 * exit paths and stdout closing behave as in the real binary), capturing
 * its exit code, stdout and stderr.
 */
#ifndef MEMMON_TESTS_UNIT_TEST_CLI_RUN_H
#define MEMMON_TESTS_UNIT_TEST_CLI_RUN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "builtin.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct run {
	int code;
	char out[65536];
	char err[8192];
};

static inline void slurp_fd(int fd, char *buf, size_t n)
{
	ssize_t r;
	size_t len = 0;

	lseek(fd, 0, SEEK_SET);
	while (len + 1 < n && (r = read(fd, buf + len, n - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
}

/* env: "NAME=value" or NULL; stdout_path: NULL for a capture file. */
static inline void run_memmon(struct run *res, const char *env,
			      const char *stdout_path, const char *const *args)
{
	char outp[] = "/tmp/memmon-cli-out-XXXXXX";
	char errp[] = "/tmp/memmon-cli-err-XXXXXX";
	int ofd = mkstemp(outp), efd = mkstemp(errp), st;
	char *argv[32];
	int argc = 0;
	pid_t pid;

	argv[argc++] = (char *)"memmon";
	while (args && args[argc - 1] && argc < 31) {
		argv[argc] = (char *)args[argc - 1];
		argc++;
	}
	argv[argc] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int o = stdout_path ? open(stdout_path, O_WRONLY) : ofd;

		if (env)
			putenv((char *)env);
		else
			unsetenv("MEMMON_DEVICE");
		dup2(o, 1);
		dup2(efd, 2);
		_exit(tool_main(argc, argv));
	}
	waitpid(pid, &st, 0);
	res->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp_fd(ofd, res->out, sizeof(res->out));
	slurp_fd(efd, res->err, sizeof(res->err));
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "--- memmon %s: exit %d\n%s--- stderr:\n%s",
			argv[1] ? argv[1] : "", res->code, res->out, res->err);
	close(ofd);
	close(efd);
	unlink(outp);
	unlink(errp);
}

#endif /* MEMMON_TESTS_UNIT_TEST_CLI_RUN_H */
