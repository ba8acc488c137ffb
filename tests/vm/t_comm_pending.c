// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's last COMM record carries its current name even when it was
 * renamed while the session was not enabled (renames are recorded only for
 * enabled sessions):
 *
 *  - rings mapped, WATCH_ADD, a rename, then ENABLE: the names are written
 *    at the ENABLE, the new one last;
 *  - enabled, DISABLE, a rename, ENABLE: written again at the ENABLE;
 *  - enabled throughout: the rename is its own record, once.
 *
 * And every thread of a process with many, while others come and go: the
 * kernel leaves its RCU read side every few dozen threads to reschedule and
 * must neither lose its place nor a thread (WATCH_ADD while enabled, and
 * the ENABLE after a WATCH_ADD, which walks the watch table).
 */
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "mmtest.h"

struct names {
	char last[MEMMON_COMM_LEN];
	unsigned int n;
	unsigned int rename;
};

static pid_t child_pid;

static void collect(const struct memmon_rec_header *h, unsigned int cpu, void *arg)
{
	const struct memmon_rec_comm *c = (const void *)h;
	struct names *n = arg;

	(void)cpu;
	if (h->type != MEMMON_REC_COMM || h->tgid != (uint32_t)child_pid)
		return;
	n->n++;
	n->rename += c->why == MEMMON_COMM_RENAME;
	memcpy(n->last, c->comm, sizeof(n->last));
	n->last[sizeof(n->last) - 1] = 0;
}

static struct mm_map m;

/*
 * The many-threads process: MANY named threads, started after CHURN threads
 * that each keep one short-lived thread alive at a time, so that the thread
 * list interleaves threads that stay with threads about to exit (the walk
 * starts over when the one it paused at is gone).
 */
#define MANY	200
#define CHURN	32

/* Threads up (named, or churning); they run until the child _exit()s. */
static int many_up;

static void *many_thread(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "cp-%ld", (long)arg);
	prctl(PR_SET_NAME, name);
	__atomic_add_fetch(&many_up, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static void *short_thread(void *arg)
{
	usleep(1000);
	return arg;
}

static void *churn_thread(void *arg)
{
	pthread_t t;

	prctl(PR_SET_NAME, "cp-churn");
	__atomic_add_fetch(&many_up, 1, __ATOMIC_RELEASE);
	for (;;)
		if (!pthread_create(&t, NULL, short_thread, arg))
			pthread_join(t, NULL);
	return NULL;
}

/* The child: says "r" on @ready once all its threads are up; ends at EOF on @done. */
static void many_child(int ready, int done)
{
	pthread_t t;
	char c;
	long i;

	for (i = 0; i < CHURN; i++)
		if (pthread_create(&t, NULL, churn_thread, NULL))
			_exit(1);
	for (i = 0; i < MANY; i++)
		if (pthread_create(&t, NULL, many_thread, (void *)i))
			_exit(1);
	while (__atomic_load_n(&many_up, __ATOMIC_ACQUIRE) < MANY + CHURN)
		usleep(1000);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	while (read(done, &c, 1) > 0)
		;
	_exit(0);
}

struct many_seen {
	pid_t tgid;
	unsigned char named[MANY];
	unsigned int comms;
};

static void many_collect(const struct memmon_rec_header *h, unsigned int cpu, void *arg)
{
	const struct memmon_rec_comm *c = (const void *)h;
	struct many_seen *ms = arg;
	char name[MEMMON_COMM_LEN];
	int i;

	(void)cpu;
	if (h->type != MEMMON_REC_COMM || h->tgid != (uint32_t)ms->tgid)
		return;
	ms->comms++;
	memcpy(name, c->comm, sizeof(name));
	name[sizeof(name) - 1] = 0;
	if (sscanf(name, "cp-%d", &i) == 1 && i >= 0 && i < MANY)
		ms->named[i] = 1;
}

static unsigned int many_named(const struct many_seen *ms)
{
	unsigned int i, n = 0;

	for (i = 0; i < MANY; i++)
		n += ms->named[i];
	return n;
}

/*
 * @enable_first: WATCH_ADD on an enabled session (the names are written by
 * the WATCH_ADD) or WATCH_ADD, then ENABLE (written by the ENABLE's walk of
 * the watch table).
 */
static void many_threads(bool enable_first)
{
	const char *how = enable_first ? "ENABLE, WATCH_ADD" : "WATCH_ADD, ENABLE";
	struct many_seen ms = { 0 };
	int ready[2], done[2], fd;
	struct mm_map mm;
	char c;

	if (pipe(ready) || pipe(done))
		MM_DIE("pipe");
	ms.tgid = fork();
	if (ms.tgid < 0)
		MM_DIE("fork");
	if (!ms.tgid) {
		close(ready[0]);
		close(done[1]);
		many_child(ready[1], done[0]);
	}
	close(ready[1]);
	close(done[0]);
	if (read(ready[0], &c, 1) != 1)
		MM_DIE("the child's threads");
	fd = mm_open();
	/* MARK only: the churn's thread records stay out of the ring. */
	if (fd < 0 || mm_configure(fd, 4 << 20, 0) ||
	    mm_set_events(fd, 1ULL << MEMMON_EV_MARK, 0))
		MM_DIE("session");
	mm_map(fd, &mm);
	if (enable_first) {
		VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "%s: ENABLE", how);
		VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, ms.tgid, 0),
			   "%s: WATCH_ADD", how);
	} else {
		VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, ms.tgid, 0),
			   "%s: WATCH_ADD", how);
		VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "%s: ENABLE", how);
	}
	if (mm_drain_cpu(&mm, 0, many_collect, &ms) < 0)
		MM_DIE("malformed records");
	VT_OK(many_named(&ms) == MANY,
	      "%s: each of %d threads' names, while threads come and go (%u named, %u COMM records)",
	      how, MANY, many_named(&ms), ms.comms);
	close(done[1]);
	waitpid(ms.tgid, NULL, 0);
	close(ready[0]);
	mm_unmap(&mm);
	close(fd);
}

/* Everything the session holds, in order (all on CPU 0: see main()). */
static void drain(int fd, struct names *n)
{
	(void)fd;
	memset(n, 0, sizeof(*n));
	if (mm_drain_cpu(&m, 0, collect, n) < 0)
		MM_DIE("malformed records");
}

/* Ask the child to rename itself, and wait until it has. */
static void rename_child(int to, int from, const char *name)
{
	char ok;

	if (write(to, name, strlen(name) + 1) < 0 || read(from, &ok, 1) != 1)
		MM_DIE("rename the child");
}

int main(void)
{
	struct memmon_events ev = {
		.size = sizeof(ev), .mask = 1ULL << MEMMON_EV_LIFECYCLE,
	};
	int to[2], from[2], fd;
	struct names n;

	/* Both on CPU 0: its ring holds every record, in the order written. */
	mm_pin(0);
	if (pipe(to) || pipe(from))
		MM_DIE("pipe");
	child_pid = fork();
	if (!child_pid) {
		char name[64];

		close(to[1]);	/* else the read below never sees the end */
		close(from[0]);
		mm_pin(0);
		while (read(to[0], name, sizeof(name)) > 0) {
			prctl(PR_SET_NAME, name);
			if (write(from[1], "k", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	fd = mm_open();
	if (fd < 0 || ioctl(fd, MEMMON_IOC_SET_EVENTS, &ev))
		MM_DIE("session");
	rename_child(to[1], from[0], "before");
	mm_map(fd, &m);		/* the rings exist: WATCH_ADD could write now */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, child_pid, 0), "WATCH_ADD");
	rename_child(to[1], from[0], "while-off");
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE");
	drain(fd, &n);
	VT_OK(!strcmp(n.last, "while-off"),
	      "WATCH_ADD, rename, ENABLE: the last name is the new one (%s, %u records)",
	      n.last, n.n);

	rename_child(to[1], from[0], "enabled");
	drain(fd, &n);
	VT_OK(n.n == 1 && n.rename == 1 && !strcmp(n.last, "enabled"),
	      "enabled: a rename is one record (%u, %s)", n.n, n.last);

	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE");
	drain(fd, &n);
	rename_child(to[1], from[0], "after-off");
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE again");
	drain(fd, &n);
	VT_OK(n.n >= 1 && !strcmp(n.last, "after-off"),
	      "DISABLE, rename, ENABLE: the last name is the new one (%s, %u records)",
	      n.last, n.n);

	close(to[1]);
	waitpid(child_pid, NULL, 0);
	mm_unmap(&m);
	close(fd);

	many_threads(true);
	many_threads(false);
	printf("# %d passed, %d failed\n", vt_count - vt_failed, vt_failed);
	return vt_failed ? 1 : 0;
}
