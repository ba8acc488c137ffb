// SPDX-License-Identifier: GPL-2.0
/*
 * The watch table with the lifecycle hooks attached (a session enabled):
 * FOLLOW_CHILDREN follows fork children recursively, from their first
 * instruction, and only for the sessions that asked; threads are not new
 * processes; exits leave the table, but not before the exit is recorded,
 * whatever the other sessions' WATCH_LIST calls do meanwhile.
 */
#include <signal.h>
#include <stdatomic.h>
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

static atomic_int listing_stop;

/* Call WATCH_LIST on session *arg (it prunes dead entries) until told. */
static void *lister(void *arg)
{
	struct memmon_watch_entry e[4];
	long calls = 0;

	while (!atomic_load(&listing_stop)) {
		count(*(int *)arg, e, 4);
		calls++;
	}
	return (void *)calls;
}

struct exit_seen {
	pid_t pid;
	long exits;
	uint32_t code, flags;
};

static void find_exit(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	const struct memmon_rec_exit *x = (const void *)rec;
	struct exit_seen *s = arg;

	(void)cpu;
	if (rec->type != MEMMON_REC_EXIT || rec->tgid != (uint32_t)s->pid)
		return;
	s->exits++;
	s->code = x->code;
	s->flags = x->flags;
}

/*
 * A process whose last thread is in do_exit() has signal->live == 0 for a
 * while (exit_mm() tears its memory down) before the exit hook records its
 * EXIT. WATCH_LIST (any session's) drops dead processes from the table: it
 * must not take that one for dead, or its last records are lost.
 */
static void test_exit_while_listing(void)
{
	const size_t big = 128UL << 20;
	int a = mm_open(), other = mm_open(), ready[2], go[2], st;
	struct exit_seen seen = { 0 };
	char buf[65536], c;
	pthread_t th;
	void *calls;
	ssize_t got;
	pid_t child;

	pipe(ready);
	pipe(go);
	child = fork();
	if (!child) {
		/* Much to tear down in exit_mm(): a long window. */
		void *p = mmap(NULL, big, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		write(ready[1], "r", 1);
		read(go[0], &c, 1);
		_exit(p == MAP_FAILED ? 1 : 7);
	}
	read(ready[0], &c, 1);
	mm_set_events(a, 1ULL << MEMMON_EV_LIFECYCLE, 0);
	/* Session a watches the child and records its lifecycle. */
	VT_OK(!mm_watch(a, MEMMON_IOC_WATCH_ADD, (uint32_t)child, 0) &&
	      !ioctl(a, MEMMON_IOC_ENABLE), "session a watches child %d", child);
	atomic_store(&listing_stop, 0);
	pthread_create(&th, NULL, lister, &other);
	write(go[1], "g", 1);
	waitpid(child, &st, 0);
	atomic_store(&listing_stop, 1);
	pthread_join(th, &calls);
	printf("# %ld WATCH_LIST calls while the child exited\n", (long)calls);

	seen.pid = child;
	fcntl(a, F_SETFL, O_NONBLOCK);
	while ((got = read(a, buf, sizeof(buf))) > 0)
		mm_walk_buf(buf, (size_t)got, find_exit, &seen);
	/* Its EXIT was recorded, as the group's last thread, with its status. */
	VT_OK(seen.exits == 1 && (seen.flags & MEMMON_EXITF_GROUP) && seen.code == (7 << 8),
	      "EXIT recorded despite concurrent WATCH_LIST (%ld records, flags 0x%x, code 0x%x)",
	      seen.exits, seen.flags, seen.code);
	/* And then it left the table. */
	VT_OK(count(a, NULL, 0) == 0, "the exited child left the table");
	close(a);
	close(other);
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
	test_exit_while_listing();
	return vt_exit();
}
