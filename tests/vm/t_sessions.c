// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions are independent: 8 at once each see only their own markers; 64
 * may be open and the 65th is refused with EMFILE; MARK_WATCHERS reaches
 * exactly the enabled sessions that watch the caller and record
 * MEMMON_EV_MARK; tgid/tid are numbers in the opener's PID namespace;
 * sessions come and go (mapped, enabled, closed before munmap) while other
 * threads produce into them, and a reused session id starts empty.
 */
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "mmtest.h"

struct collect {
	long marks, other;
	uint32_t flags, tgid, tid;
	char text[16];
};

static void collect_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	const struct memmon_rec_mark *m = (const void *)rec;
	struct collect *c = arg;

	(void)cpu;
	if (rec->type != MEMMON_REC_MARK) {
		c->other++;
		return;
	}
	c->marks++;
	c->flags = m->flags;
	c->tgid = rec->tgid;
	c->tid = rec->tid;
	memset(c->text, 0, sizeof(c->text));
	memcpy(c->text, m->data, m->len < sizeof(c->text) - 1 ? m->len : sizeof(c->text) - 1);
}

/* Read everything a session holds (non-blocking). */
static struct collect drain(int fd)
{
	struct collect c = { 0 };
	char buf[16384];
	int fl = fcntl(fd, F_GETFL);
	ssize_t n;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		mm_walk_buf(buf, (size_t)n, collect_rec, &c);
	fcntl(fd, F_SETFL, fl);
	return c;
}

static void test_eight(void)
{
	struct memmon_cpu_stats cs[64];
	int fd[8], i, ok = 1, stats_ok = 1;
	char text[16];
	struct collect c;

	for (i = 0; i < 8; i++) {
		fd[i] = mm_open();
		mm_configure(fd[i], 16384 << (i % 3), 0);
		if (i % 2)
			ioctl(fd[i], MEMMON_IOC_ENABLE);
	}
	for (i = 0; i < 8; i++) {
		snprintf(text, sizeof(text), "session %d", i);
		for (int k = 0; k <= i; k++)
			mm_mark(fd[i], 0, text, (uint32_t)strlen(text));
	}
	for (i = 0; i < 8; i++) {
		snprintf(text, sizeof(text), "session %d", i);
		c = drain(fd[i]);
		if (c.marks != i + 1 || c.other || strcmp(c.text, text))
			ok = 0;
		mm_stats(fd[i], cs, 64);
		if (cs[0].produced + cs[1].produced != (uint64_t)i + 1)
			stats_ok = 0;
	}
	/* Each of 8 sessions holds exactly its own markers. */
	VT_OK(ok, "8 sessions: each reads only its own markers");
	/* And counts only its own events. */
	VT_OK(stats_ok, "8 sessions: independent statistics");
	for (i = 0; i < 8; i++)
		close(fd[i]);
}

static void test_limit(void)
{
	int fd[65], i, n = 0, fd2;

	for (i = 0; i < 64; i++) {
		fd[i] = open(MEMMON_DEVICE_PATH, O_RDWR);
		if (fd[i] >= 0)
			n++;
	}
	/* 64 sessions open at once. */
	VT_OK(n == 64, "64 sessions open");
	/* The 65th: EMFILE. */
	VT_ERRNO(open(MEMMON_DEVICE_PATH, O_RDWR), EMFILE, "65th session: EMFILE");
	close(fd[17]);
	fd2 = open(MEMMON_DEVICE_PATH, O_RDWR);
	/* Closing one frees its slot. */
	VT_OK(fd2 >= 0, "a session opens again after one closed");
	/* The new session works. */
	VT_OK(!mm_mark(fd2, 0, "x", 1) && drain(fd2).marks == 1, "the reused slot's session works");
	fd[17] = fd2;
	for (i = 0; i < 64; i++)
		close(fd[i]);
	for (i = 0; i < 64; i++)
		fd[i] = open(MEMMON_DEVICE_PATH, O_RDWR);
	/* After closing all 64, all 64 slots are free again. */
	VT_OK(fd[63] >= 0, "64 sessions again after closing all");
	for (i = 0; i < 64; i++)
		close(fd[i]);
}

static void test_watchers(void)
{
	int a = mm_open(), b = mm_open(), c = mm_open(), d = mm_open(), e = mm_open();
	int caller = mm_open();
	struct collect r;

	/* a, b: watch us, enabled, record marks. */
	mm_watch(a, MEMMON_IOC_WATCH_ADD, 0, 0);
	mm_watch(b, MEMMON_IOC_WATCH_ADD, getpid(), 0);
	ioctl(a, MEMMON_IOC_ENABLE);
	ioctl(b, MEMMON_IOC_ENABLE);
	/* c: enabled, does not watch us. */
	ioctl(c, MEMMON_IOC_ENABLE);
	/* d: watches us, not enabled. */
	mm_watch(d, MEMMON_IOC_WATCH_ADD, 0, 0);
	/* e: watches us, enabled, no MEMMON_EV_MARK. */
	mm_watch(e, MEMMON_IOC_WATCH_ADD, 0, 0);
	mm_set_events(e, 1ULL << MEMMON_EV_FAULT, 0);
	ioctl(e, MEMMON_IOC_ENABLE);

	/* MARK_WATCHERS through a session that does not watch us. */
	VT_SUCCESS(mm_mark(caller, MEMMON_MARK_WATCHERS, "hello", 5), "MARK_WATCHERS");
	r = drain(a);
	/* a got it, with the flag and our ids. */
	VT_OK(r.marks == 1 && !strcmp(r.text, "hello") && r.flags == MEMMON_MARK_WATCHERS &&
	      r.tgid == (uint32_t)getpid() && r.tid == (uint32_t)mm_gettid(),
	      "watching session a received it");
	r = drain(b);
	/* b got it. */
	VT_OK(r.marks == 1 && !strcmp(r.text, "hello"), "watching session b received it");
	/* c does not watch us. */
	VT_OK(drain(c).marks == 0, "non-watching session c did not");
	/* d is not enabled. */
	VT_OK(drain(d).marks == 0, "disabled session d did not");
	/* e does not record markers. */
	VT_OK(drain(e).marks == 0, "session e without EV_MARK did not");
	/* The caller's own session does not watch us. */
	VT_OK(drain(caller).marks == 0, "the calling session did not");

	/* After DISABLE of b, only a. */
	ioctl(b, MEMMON_IOC_DISABLE);
	mm_mark(caller, MEMMON_MARK_WATCHERS, "again", 5);
	/* a still receives. */
	VT_OK(drain(a).marks == 1, "after b's DISABLE: a receives");
	/* b no longer does. */
	VT_OK(drain(b).marks == 0, "after b's DISABLE: b does not");
	/* After WATCH_DEL in a, nobody. */
	mm_watch(a, MEMMON_IOC_WATCH_DEL, 0, 0);
	mm_mark(caller, MEMMON_MARK_WATCHERS, "none", 4);
	VT_OK(drain(a).marks == 0, "after a's WATCH_DEL: a does not receive");
	/* A session that watches us gets its own MARK_WATCHERS. */
	mm_mark(e, 0, NULL, 0);
	drain(e);
	mm_set_events(e, 1ULL << MEMMON_EV_MARK, 0);
	mm_mark(e, MEMMON_MARK_WATCHERS, "self", 4);
	VT_OK(drain(e).marks == 1, "MARK_WATCHERS through a watching session reaches it");
	close(a);
	close(b);
	close(c);
	close(d);
	close(e);
	close(caller);
}

/* In a new PID namespace, records show the namespace's numbers. */
static void test_pid_ns(void)
{
	int host = mm_open(), pipefd[2], pidpipe[2], st;
	struct collect r;
	pid_t child;
	char go;

	pipe(pipefd);
	pipe(pidpipe);
	child = fork();
	if (!child) {
		pid_t inner;

		if (unshare(CLONE_NEWPID))
			_exit(10);
		inner = fork();
		if (inner) {
			/* Our namespace is the host's: fork() gave the host pid. */
			write(pidpipe[1], &inner, sizeof(inner));
			waitpid(inner, &st, 0);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 11);
		}
		/* PID 1 of the new namespace. */
		int fd = mm_open();
		struct collect cr;
		struct memmon_watch_entry we;
		struct memmon_watch_list wl = { .size = sizeof(wl), .count = 1,
						.entries = (uintptr_t)&we };

		read(pipefd[0], &go, 1);
		mm_mark(fd, 0, "inner", 5);
		cr = drain(fd);
		if (cr.marks != 1 || cr.tgid != 1 || cr.tid != 1)
			_exit(12);
		if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0, 0) ||
		    ioctl(fd, MEMMON_IOC_WATCH_LIST, &wl) || wl.count != 1 || we.pid != 1)
			_exit(13);
		/* Into the host's session, which watches us by our host pid. */
		mm_mark(fd, MEMMON_MARK_WATCHERS, "to host", 7);
		_exit(0);
	}
	/* The host session watches the namespace's init: the grandchild. */
	{
		pid_t inner = 0;

		/* (Not /proc/PID/task/TID/children: CONFIG_PROC_CHILDREN is
		 * Debian's, not the debug kernel's.)
		 */
		if (read(pidpipe[0], &inner, sizeof(inner)) != sizeof(inner))
			inner = 0;
		/* The namespace's init is visible from here, by its host pid. */
		VT_OK(inner > 0 && !kill(inner, 0),
		      "found the namespace's init: host pid %d", inner);
		VT_SUCCESS(mm_watch(host, MEMMON_IOC_WATCH_ADD, (uint32_t)inner, 0),
			   "host session watches it");
		ioctl(host, MEMMON_IOC_ENABLE);
		write(pipefd[1], "g", 1);
		waitpid(child, &st, 0);
		/* Inside: its own record says tgid 1, WATCH_LIST says pid 1. */
		VT_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "inside the namespace: ids are 1 (exit %d)",
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		r = drain(host);
		/* The host's session sees the host pid. */
		VT_OK(r.marks == 1 && r.tgid == (uint32_t)inner && r.tid == (uint32_t)inner &&
		      !strcmp(r.text, "to host"), "host session: tgid %u (host pid %d)", r.tgid, inner);
	}
	close(host);
}

static volatile int churn_stop;

/* MARK_WATCHERS as fast as possible: into every enabled session watching us. */
static void *churn_marker(void *arg)
{
	int fd = mm_open(), cpu = (int)(intptr_t)arg;
	long n = 0;

	mm_pin(cpu);
	while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)) {
		mm_mark(fd, MEMMON_MARK_WATCHERS, "churn", 5);
		n++;
	}
	close(fd);
	return (void *)n;
}

/* Fork children that exit at once: the fork and exit hooks follow them. */
static void *churn_forker(void *arg)
{
	long n = 0;
	pid_t pid;

	(void)arg;
	while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)) {
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		n++;
	}
	return (void *)n;
}

/*
 * Session teardown against producers: sessions are created, mapped,
 * enabled, fed, and closed (half of them with their mappings still alive,
 * dropped later) while two threads MARK_WATCHERS into them and another forks
 * children they follow. A session created on a reused id, mapped but never
 * enabled, must stay empty: no producer may still hold its id for the
 * session that had it before. The kernel must stay quiet throughout (the
 * VM runner fails the run on any BUG, WARNING or KASAN report).
 */
static void test_teardown_under_load(void)
{
	int anchor = mm_open(), ncpu = mm_nr_cpus() > 1 ? 2 : 1, i, c, fd;
	struct mm_map m, kept[4];
	long marks = 0, forks = 0, stale = 0, rounds = 0;
	pthread_t th[3];
	void *ret;

	memset(kept, 0, sizeof(kept));
	/* The anchor keeps the hooks attached for most of the churn. */
	mm_watch(anchor, MEMMON_IOC_WATCH_ADD, 0, MEMMON_WATCH_FOLLOW_CHILDREN);
	mm_set_events(anchor, 1ULL << MEMMON_EV_MARK, 0);
	ioctl(anchor, MEMMON_IOC_ENABLE);
	churn_stop = 0;
	for (c = 0; c < ncpu; c++)
		pthread_create(&th[c], NULL, churn_marker, (void *)(intptr_t)c);
	pthread_create(&th[ncpu], NULL, churn_forker, NULL);

	for (i = 0; i < 30; i++, rounds++) {
		fd = mm_open();
		mm_configure(fd, 16384, 0);
		mm_map(fd, &m);
		/* Not enabled, not watching: nothing may arrive. */
		usleep(1000);
		for (c = 0; c < (int)m.info.nr_cpus; c++)
			if (mm_ring_page(&m, (unsigned int)c)->producer_pos)
				stale++;
		mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0, i % 2 ? MEMMON_WATCH_FOLLOW_CHILDREN : 0);
		ioctl(fd, MEMMON_IOC_ENABLE);
		for (c = 0; c < (int)m.info.nr_cpus; c++)
			mm_drain_cpu(&m, (unsigned int)c, NULL, NULL);
		if (i % 2) {
			/* Closed with its mappings alive: they go a few rounds later. */
			if (kept[i % 4].prod)
				mm_unmap(&kept[i % 4]);
			kept[i % 4] = m;
		} else {
			mm_unmap(&m);
		}
		close(fd);
		/* Now and then the anchor goes too: hooks detach and attach again. */
		if (i % 10 == 9) {
			close(anchor);
			anchor = mm_open();
			mm_watch(anchor, MEMMON_IOC_WATCH_ADD, 0, MEMMON_WATCH_FOLLOW_CHILDREN);
			ioctl(anchor, MEMMON_IOC_ENABLE);
		}
	}
	__atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
	for (c = 0; c < ncpu; c++) {
		pthread_join(th[c], &ret);
		marks += (long)ret;
	}
	pthread_join(th[ncpu], &ret);
	forks = (long)ret;
	for (i = 0; i < 4; i++)
		if (kept[i].prod)
			mm_unmap(&kept[i]);
	close(anchor);
	printf("# %ld rounds, %ld MARK_WATCHERS, %ld forks meanwhile\n", rounds, marks, forks);
	/* The producers really ran during the churn. */
	VT_OK(marks > 0 && forks > 0, "producers ran during the churn");
	/* A session on a reused id got nothing meant for its predecessor. */
	VT_OK(stale == 0, "new sessions on reused ids start empty (%ld non-empty rings)", stale);
}

int main(void)
{
	test_eight();
	test_limit();
	test_watchers();
	test_pid_ns();
	test_teardown_under_load();
	return vt_exit();
}
