// SPDX-License-Identifier: GPL-2.0
/*
 * The watch table with the lifecycle hooks attached (a session enabled):
 * FOLLOW_CHILDREN follows fork children recursively, from their first
 * instruction, and only for the sessions that asked; threads are not new
 * processes; exits leave the table.
 */
#include <signal.h>
#include <sys/wait.h>

#include "mmtest.h"

static uint32_t count(int fd, struct memmon_watch_entry *e, uint32_t cap)
{
	struct memmon_watch_list l = {
		.size = sizeof(l), .count = cap, .entries = (uintptr_t)e,
	};

	if (ioctl(fd, MEMMON_IOC_WATCH_LIST, &l))
		MM_DIE("WATCH_LIST");
	return l.count;
}

static int has(const struct memmon_watch_entry *e, uint32_t n, pid_t pid, uint32_t flags)
{
	for (uint32_t i = 0; i < n; i++)
		if (e[i].pid == (uint32_t)pid && e[i].flags == flags)
			return 1;
	return 0;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/* A child that forks a grandchild, reports its pid, then waits. */
static pid_t spawn_family(int report, int go)
{
	pid_t child = fork();
	char c;

	if (!child) {
		pid_t gc = fork();

		if (!gc) {
			pause();
			_exit(0);
		}
		write(report, &gc, sizeof(gc));
		read(go, &c, 1);
		kill(gc, SIGKILL);
		waitpid(gc, NULL, 0);
		_exit(0);
	}
	return child;
}

int main(void)
{
	struct memmon_watch_entry e[16];
	int a = mm_open(), b = mm_open(), p1[2], p2[2], st;
	pid_t child, gc = 0;
	pthread_t th;
	uint32_t n;

	pipe(p1);
	pipe(p2);
	/* a follows children; b watches us alone. */
	VT_SUCCESS(mm_watch(a, MEMMON_IOC_WATCH_ADD, 0, MEMMON_WATCH_FOLLOW_CHILDREN),
		   "session a: WATCH_ADD self, FOLLOW_CHILDREN");
	/* b without FOLLOW_CHILDREN. */
	VT_SUCCESS(mm_watch(b, MEMMON_IOC_WATCH_ADD, 0, 0), "session b: WATCH_ADD self");
	/* Enabling attaches the hooks that see fork and exit. */
	VT_OK(!ioctl(a, MEMMON_IOC_ENABLE) && !ioctl(b, MEMMON_IOC_ENABLE), "ENABLE both");

	pthread_create(&th, NULL, sleeper, NULL);
	/* A new thread is not a new process: still one entry. */
	VT_OK(count(a, e, 16) == 1, "a thread adds no entry");

	child = spawn_family(p1[1], p2[0]);
	read(p1[0], &gc, sizeof(gc));
	n = count(a, e, 16);
	/* a: us, the child and the grandchild, all following. */
	VT_OK(n == 3 && has(e, n, getpid(), MEMMON_WATCH_FOLLOW_CHILDREN) &&
	      has(e, n, child, MEMMON_WATCH_FOLLOW_CHILDREN) &&
	      has(e, n, gc, MEMMON_WATCH_FOLLOW_CHILDREN),
	      "a follows child %d and grandchild %d (%u entries)", child, gc, n);
	/* b: only us. */
	VT_OK(count(b, e, 16) == 1, "b does not follow");

	write(p2[1], "g", 1);
	waitpid(child, &st, 0);
	/* After the family exited, a is back to us alone. */
	VT_OK(count(a, e, 16) == 1, "exits leave the table");

	/* A followed child's MARK_WATCHERS reaches a, not b. */
	child = fork();
	if (!child) {
		int fd = mm_open();

		_exit(mm_mark(fd, MEMMON_MARK_WATCHERS, "kid", 3) ? 1 : 0);
	}
	waitpid(child, &st, 0);
	{
		char buf[4096];
		ssize_t got;
		long marks = 0;
		const struct memmon_rec_header *r;

		fcntl(a, F_SETFL, O_NONBLOCK);
		fcntl(b, F_SETFL, O_NONBLOCK);
		while ((got = read(a, buf, sizeof(buf))) > 0)
			for (ssize_t off = 0; off < got; off += r->size) {
				r = (const void *)(buf + off);
				if (r->type == MEMMON_REC_MARK && r->tgid == (uint32_t)child)
					marks++;
			}
		/* The child's marker is in a (it was watched from birth). */
		VT_OK(marks == 1, "a received the followed child's marker");
		marks = 0;
		while ((got = read(b, buf, sizeof(buf))) > 0)
			for (ssize_t off = 0; off < got; off += r->size) {
				r = (const void *)(buf + off);
				if (r->type == MEMMON_REC_MARK && r->tgid == (uint32_t)child)
					marks++;
			}
		/* Not in b. */
		VT_OK(marks == 0, "b did not");
	}
	pthread_cancel(th);
	pthread_join(th, NULL);
	close(a);
	close(b);
	return vt_exit();
}
