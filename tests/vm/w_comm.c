// SPDX-License-Identifier: GPL-2.0
/*
 * w_comm - a workload whose threads change their names, for t_comm.sh.
 *
 *   w_comm rename       rename as below, then exec /bin/true
 *   w_comm wait FILE    three threads (two started) that never rename,
 *                       alive until FILE exists
 *
 * rename, in this order, each step finished before the next:
 *   1. the main thread: prctl(PR_SET_NAME, "cm-main");
 *   2. a second thread: prctl(PR_SET_NAME, "cm-prctl") on itself;
 *   3. the main thread writes "cm-proc" to /proc/self/task/TID/comm of it;
 *   4. the main thread: pthread_setname_np(it, "cm-pthread") (glibc writes
 *      that thread's /proc comm too);
 *   5. the second thread exits; the main thread execs /bin/true.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_barrier_t step;
static pid_t second_tid;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *second(void *arg)
{
	(void)arg;
	second_tid = (pid_t)syscall(SYS_gettid);
	if (prctl(PR_SET_NAME, "cm-prctl"))
		die("prctl");
	pthread_barrier_wait(&step);	/* renamed itself */
	pthread_barrier_wait(&step);	/* renamed by the main thread */
	return NULL;
}

static void *idle(void *arg)
{
	const char *file = arg;
	struct stat st;

	while (stat(file, &st))
		usleep(100000);
	return NULL;
}

static int do_rename(void)
{
	char path[64];
	pthread_t t;
	FILE *f;
	int err;

	if (prctl(PR_SET_NAME, "cm-main"))
		die("prctl");
	if (pthread_barrier_init(&step, NULL, 2))
		die("pthread_barrier_init");
	err = pthread_create(&t, NULL, second, NULL);
	if (err) {
		errno = err;
		die("pthread_create");
	}
	pthread_barrier_wait(&step);
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", second_tid);
	f = fopen(path, "w");
	if (!f || fputs("cm-proc", f) == EOF || fclose(f))
		die(path);
	err = pthread_setname_np(t, "cm-pthread");
	if (err) {
		errno = err;
		die("pthread_setname_np");
	}
	pthread_barrier_wait(&step);
	pthread_join(t, NULL);
	execl("/bin/true", "true", (char *)NULL);
	die("execl /bin/true");
	return 1;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int i, err;

	if (argc == 2 && !strcmp(argv[1], "rename"))
		return do_rename();
	if (argc != 3 || strcmp(argv[1], "wait")) {
		fprintf(stderr, "usage: w_comm rename | w_comm wait FILE\n");
		return 2;
	}
	for (i = 0; i < 2; i++) {
		err = pthread_create(&t[i], NULL, idle, argv[2]);
		if (err) {
			errno = err;
			die("pthread_create");
		}
	}
	idle(argv[2]);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
