// SPDX-License-Identifier: GPL-2.0
/*
 * Prompt delivery: a reader that sleeps sees a record within wakeup_ms
 * (default 100) even when the ring holds far less than the watermark,
 * as trace_pipe does; here the watched process makes one mmap() call:
 *
 *  - poll() on a session with the default watermark (a quarter of 1 MiB)
 *    becomes readable, and the record is there;
 *  - a blocking read() of the session returns it;
 *  - a blocking read of /proc/memmon/events prints its line;
 *  - with wakeup_ms=0 only the watermark wakes: poll() stays asleep.
 *
 * The waits are bounded at 10 s so that a missing wakeup fails instead of
 * hanging: 100 times the promised delay, not a measure of speed. The
 * blocking reads start asleep (the child's mmap() waits until they are).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "mmtest.h"

#define PARAM	"/sys/module/memmon/parameters/wakeup_ms"
#define WAIT_MS	10000

struct child {
	pid_t pid;
	int go;		/* write a byte: make the one mmap() call */
};

/* A process that makes one mmap() when told, then sleeps until killed. */
static struct child spawn(void)
{
	struct child c;
	int p[2];

	if (pipe(p))
		MM_DIE("pipe");
	c.pid = fork();
	if (!c.pid) {
		char b;

		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		if (mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
		    MAP_FAILED)
			_exit(2);
		pause();
		_exit(0);
	}
	close(p[0]);
	c.go = p[1];
	return c;
}

static void go(struct child *c)
{
	if (write(c->go, "g", 1) != 1)
		MM_DIE("start the child");
}

/* The state letter of thread @tid of this process, '?' if unknown. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

struct later {
	struct child *c;
	pid_t reader;
	int asleep;	/* the reader was seen asleep before the mmap() */
};

/*
 * Start the child's mmap() only once the reader sleeps, so that the
 * record arrives while it waits (not before its read() began): seen
 * asleep 5 times in a row, 20 ms apart, within 10 s.
 */
static void *go_when_asleep(void *arg)
{
	struct later *l = arg;
	int row = 0;

	for (int i = 0; i < 500 && row < 5; i++) {
		usleep(20000);
		row = thread_state(l->reader) == 'S' ? row + 1 : 0;
	}
	l->asleep = row == 5;
	go(l->c);
	return NULL;
}

static void go_later(struct later *l, struct child *c, pthread_t *th)
{
	*l = (struct later){ .c = c, .reader = mm_gettid() };
	if (pthread_create(th, NULL, go_when_asleep, l))
		MM_DIE("pthread_create");
}

static void reap(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	close(c->go);
}

/* A session watching @c, enabled, with the default ring and watermark. */
static int watching(struct child *c)
{
	int fd = mm_open();

	if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)c->pid, 0) ||
	    ioctl(fd, MEMMON_IOC_ENABLE))
		MM_DIE("watch %d", c->pid);
	return fd;
}

struct found {
	int mmap;
};

static void find_mmap(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	const struct memmon_rec_syscall *sc = (const void *)rec;
	struct found *f = arg;

	(void)cpu;
	if (rec->type == MEMMON_REC_SYSCALL && sc->sys == MEMMON_SYS_MMAP)
		f->mmap++;
}

static void test_poll(void)
{
	struct child c = spawn();
	int fd = watching(&c), r;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct found f = { 0 };
	struct mm_map m;

	mm_map(fd, &m);
	VT_OK(m.info.wakeup_bytes >= 4096, "the watermark is %llu bytes, far above one record",
	      (unsigned long long)m.info.wakeup_bytes);
	go(&c);
	r = poll(&p, 1, WAIT_MS);
	VT_OK(r == 1 && (p.revents & POLLIN), "poll(): readable with one record in the ring (%d)",
	      r);
	for (unsigned int cpu = 0; cpu < m.info.nr_cpus; cpu++)
		mm_drain_cpu(&m, cpu, find_mmap, &f);
	VT_OK(f.mmap == 1, "the mmap() record is there (%d)", f.mmap);
	/* Drained: poll() sleeps again (no spin on a stale flag). */
	r = poll(&p, 1, 300);
	VT_OK(r == 0, "poll() on the drained rings sleeps (%d)", r);
	mm_unmap(&m);
	close(fd);
	reap(&c);
}

static volatile sig_atomic_t alarmed;

/*
 * The bound of a blocking read: the signal ends the wait, and a record
 * already there is still returned (the wait tests its condition first),
 * so the flag tells a wakeup from the bound.
 */
static void on_alarm(int sig)
{
	(void)sig;
	alarmed = 1;
}

static void test_read(void)
{
	struct child c = spawn();
	int fd = watching(&c);
	struct sigaction sa = { .sa_handler = on_alarm };
	struct found f = { 0 };
	char buf[65536];
	struct later l;
	pthread_t th;
	ssize_t n;

	sigaction(SIGALRM, &sa, NULL);
	/*
	 * ENABLE made the rings and wrote the watched threads' names into
	 * them (COMM records, ABI 1.4): read those without waiting, so that
	 * the rings are empty and read() sleeps.
	 */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	go_later(&l, &c, &th);
	alarmed = 0;
	alarm(WAIT_MS / 1000);
	n = read(fd, buf, sizeof(buf));
	alarm(0);
	pthread_join(th, NULL);
	if (n > 0)
		mm_walk_buf(buf, (size_t)n, find_mmap, &f);
	VT_OK(l.asleep, "read() was asleep when the mmap() came");
	VT_OK(n > 0 && f.mmap == 1 && !alarmed,
	      "a blocking read() returns the mmap() record, woken before its %d s bound "
	      "(%zd bytes, %d%s)", WAIT_MS / 1000, n, f.mmap,
	      alarmed ? ", the bound ended it" : "");
	close(fd);
	reap(&c);
}

static void test_procfs(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct child c = spawn();
	char line[64], buf[8192];
	int w, e, len;
	ssize_t n, got = 0;
	struct later l;
	pthread_t th;

	sigaction(SIGALRM, &sa, NULL);
	w = open("/proc/memmon/watch-pids", O_WRONLY | O_CLOEXEC);
	e = open("/proc/memmon/events", O_RDONLY | O_CLOEXEC);
	len = snprintf(line, sizeof(line), "%d\n", c.pid);
	if (w < 0 || e < 0 || write(w, line, (size_t)len) != len)
		MM_DIE("/proc/memmon");
	/* Nothing of the child yet: the read sleeps until its mmap(). */
	go_later(&l, &c, &th);
	alarmed = 0;
	alarm(WAIT_MS / 1000);
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(e, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0) {
		got += n;
		buf[got] = 0;
		if (strstr(buf, "mmap("))
			break;
	}
	alarm(0);
	pthread_join(th, NULL);
	buf[got] = 0;
	VT_OK(l.asleep, "the events reader was asleep when the mmap() came");
	VT_OK(strstr(buf, "mmap(") && !alarmed,
	      "a blocking read of /proc/memmon/events prints the mmap() line, woken before "
	      "its %d s bound (%zd bytes%s)", WAIT_MS / 1000, got,
	      alarmed ? ", the bound ended it" : "");
	len = snprintf(line, sizeof(line), "-%d\n", c.pid);
	if (write(w, line, (size_t)len) != len)
		MM_DIE("unwatch");
	close(e);
	close(w);
	reap(&c);
}

static int set_param(const char *v)
{
	int fd = open(PARAM, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, v, strlen(v));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(v) ? 0 : -1;
}

static void test_off(void)
{
	struct child c = spawn();
	int fd = watching(&c), r;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	VT_SUCCESS(set_param("0"), "wakeup_ms=0");
	/* Rings first (ENABLE made them), then the one record. */
	go(&c);
	r = poll(&p, 1, 1000);
	VT_OK(r == 0, "wakeup_ms=0: one record does not wake poll() (%d)", r);
	VT_SUCCESS(set_param("100"), "wakeup_ms=100 again");
	r = poll(&p, 1, WAIT_MS);
	VT_OK(r == 1, "and the next poll() sees it (%d)", r);
	close(fd);
	reap(&c);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_poll();
	test_read();
	test_procfs();
	test_off();
	return vt_exit();
}
