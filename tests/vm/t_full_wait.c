// SPDX-License-Identifier: GPL-2.0
/*
 * MEMMON_FULL_WAIT, the lossless mode (uapi/linux/memmon.h): a watched task
 * whose records fill a ring past half waits at its return to user space
 * until the consumer has made room, instead of its events being dropped.
 *
 *  - CONFIGURE: the policy, its timeout's bounds, the VER0 size;
 *  - a fault storm through a 64 KiB ring whose consumer does not read:
 *    the task is found waiting (in memmon_full_wait) with nothing lost;
 *    then the consumer drains and the storm ends with 0 lost;
 *  - SIGKILL of the waiting task ends its wait: it dies;
 *  - SIGKILL of the consumer (its session's file released) ends the wait:
 *    the task runs to its end;
 *  - a consumer that never reads: after wait_timeout_ms the task goes on,
 *    its events are dropped, and the accounting is exact.
 *
 * "Waiting" is read from /proc (state S, wchan in memmon_full_wait): the
 * storm makes no blocking call, so the wait is the only sleep it has. The
 * waits for those states are bounded at 10 s so that a missing wakeup
 * fails instead of hanging: not a measure of speed.
 */
#include <signal.h>
#include <poll.h>
#include <sys/wait.h>

#include "mmtest.h"

#define MAX_CPUS	64
#define PAGES		20000
#define RING		65536
#define BOUND_MS	10000

struct tally {
	uint64_t events[MAX_CPUS];
	uint64_t lost[MAX_CPUS];
	uint64_t faults;
	pid_t child;
	long bad;
};

static void tally_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	struct tally *t = arg;

	if (cpu >= MAX_CPUS || rec->cpu != cpu) {
		t->bad++;
		return;
	}
	if (rec->type == MEMMON_REC_LOST) {
		t->lost[cpu] += ((const struct memmon_rec_lost *)rec)->count;
		return;
	}
	t->events[cpu]++;
	if (rec->type == MEMMON_REC_FAULT && rec->tgid == (uint32_t)t->child)
		t->faults++;
}

static void drain_all(struct mm_map *m, struct tally *t)
{
	int n = mm_nr_cpus() < MAX_CPUS ? mm_nr_cpus() : MAX_CPUS;

	for (int cpu = 0; cpu < n; cpu++)
		if (mm_drain_cpu(m, cpu, tally_rec, t) < 0)
			t->bad++;
}

/* A child that faults PAGES fresh pages, one by one, when told. */
static pid_t spawn_storm(int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		MM_DIE("pipe");
	pid = fork();
	if (!pid) {
		char b, *m;

		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		m = mmap(NULL, PAGES * 4096UL, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(2);
		madvise(m, PAGES * 4096UL, MADV_NOHUGEPAGE);
		for (long i = 0; i < PAGES; i++)
			m[i * 4096] = 1;
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void start(int go)
{
	if (write(go, "g", 1) != 1)
		MM_DIE("start the storm");
	close(go);
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* Is @pid asleep in memmon's wait for room? */
static int waiting(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] != 'S')
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	if (read_file(path, buf, sizeof(buf)))
		return 0;
	return strstr(buf, "memmon_full_wait") != NULL;
}

static int wait_until_waiting(pid_t pid)
{
	for (int ms = 0; ms < BOUND_MS; ms += 5) {
		if (waiting(pid))
			return 1;
		usleep(5000);
	}
	return 0;
}

/* waitpid(), bounded: the status, or -1 if @pid is still there. */
static int reap(pid_t pid)
{
	int status;

	for (int ms = 0; ms < BOUND_MS; ms += 5) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(5000);
	}
	return -1;
}

static int open_wait(uint32_t timeout_ms)
{
	struct memmon_config c = {
		.size = sizeof(c),
		.full_policy = MEMMON_FULL_WAIT,
		.ring_size = RING,
		.wait_timeout_ms = timeout_ms,
	};
	int fd = mm_open();

	if (ioctl(fd, MEMMON_IOC_CONFIGURE, &c))
		MM_DIE("CONFIGURE MEMMON_FULL_WAIT");
	return fd;
}

static uint64_t stats_lost(int fd)
{
	struct memmon_cpu_stats cs[MAX_CPUS];
	int n = mm_nr_cpus() < MAX_CPUS ? mm_nr_cpus() : MAX_CPUS;
	uint64_t lost = 0;

	mm_stats(fd, cs, MAX_CPUS);
	for (int cpu = 0; cpu < n; cpu++)
		lost += cs[cpu].lost;
	return lost;
}

static void configure_rules(void)
{
	struct memmon_config c = { .size = sizeof(c), .full_policy = MEMMON_FULL_WAIT };
	struct memmon_info info;
	int fd = mm_open();

	mm_info(fd, &info);
	VT_OK(info.features & MEMMON_FEAT_FULL_WAIT, "GET_INFO: MEMMON_FEAT_FULL_WAIT");
	c.wait_timeout_ms = 60001;
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), EINVAL, "a timeout above 60 s: EINVAL");
	c.full_policy = MEMMON_FULL_DROP_NEW;
	c.wait_timeout_ms = 100;
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), EINVAL, "a timeout without FULL_WAIT: EINVAL");
	c.full_policy = MEMMON_FULL_WAIT;
	c.__reserved = 1;
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), EINVAL, "__reserved set: EINVAL");
	c.__reserved = 0;
	c.size = MEMMON_CONFIG_SIZE_VER0;
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), "FULL_WAIT with the VER0 size (default timeout)");
	c.size = sizeof(c);
	c.wait_timeout_ms = 60000;
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), "FULL_WAIT, 60 s");
	close(fd);
}

static void lossless_storm(void)
{
	int fd = open_wait(60000), go, status, n, cpu;
	static struct tally t;
	struct mm_map m;
	uint64_t used = 0;
	pid_t pid;

	memset(&t, 0, sizeof(t));
	mm_map(fd, &m);
	pid = spawn_storm(&go);
	t.child = pid;
	if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)pid, 0))
		MM_DIE("WATCH_ADD");
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE (64 KiB rings, FULL_WAIT)");
	start(go);
	VT_OK(wait_until_waiting(pid), "nobody reads: the storm waits for room");
	n = mm_nr_cpus() < MAX_CPUS ? mm_nr_cpus() : MAX_CPUS;
	for (cpu = 0; cpu < n; cpu++)
		used += mm_ring_page(&m, cpu)->producer_pos - *mm_cons_pos(&m, cpu);
	VT_OK(stats_lost(fd) == 0 && used > RING / 2,
	      "... with nothing lost, a ring more than half full (%llu bytes unread)",
	      (unsigned long long)used);
	/* Now a consumer: poll(), then take everything. */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		drain_all(&m, &t);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		poll(&p, 1, 10);
	}
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE");
	drain_all(&m, &t);
	VT_OK(WIFEXITED(status) && !WEXITSTATUS(status), "the storm ran to its end");
	VT_OK(stats_lost(fd) == 0, "0 events lost (%llu)", (unsigned long long)stats_lost(fd));
	VT_OK(t.faults >= PAGES, "its %d faults are all there (%llu)", PAGES,
	      (unsigned long long)t.faults);
	VT_OK(!t.bad, "every record well formed (%ld bad)", t.bad);
	mm_unmap(&m);
	close(fd);
}

static void kill_the_waiter(void)
{
	int fd = open_wait(60000), go, status;
	pid_t pid = spawn_storm(&go);

	if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)pid, 0) ||
	    ioctl(fd, MEMMON_IOC_ENABLE))
		MM_DIE("watch and enable");
	start(go);
	VT_OK(wait_until_waiting(pid), "SIGKILL: the task waits for room");
	kill(pid, SIGKILL);
	status = reap(pid);
	VT_OK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "... and dies of SIGKILL while it waits (status %#x)", status);
	close(fd);
}

static void kill_the_consumer(void)
{
	int go, status, ready[2];
	pid_t pid = spawn_storm(&go), consumer;
	char b;

	if (pipe(ready))
		MM_DIE("pipe");
	consumer = fork();
	if (!consumer) {
		int fd = open_wait(60000);

		if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)pid, 0) ||
		    ioctl(fd, MEMMON_IOC_ENABLE))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();	/* never reads */
	}
	close(ready[1]);
	if (read(ready[0], &b, 1) != 1)
		MM_DIE("the consumer's session");
	close(ready[0]);
	start(go);
	VT_OK(wait_until_waiting(pid), "consumer killed: the task waits for room");
	kill(consumer, SIGKILL);
	waitpid(consumer, NULL, 0);
	status = reap(pid);
	VT_OK(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status),
	      "... and runs to its end once the session's file is gone (status %#x)", status);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void timeout_then_drop(void)
{
	struct memmon_cpu_stats cs[MAX_CPUS];
	int fd = open_wait(300), go, status, n, cpu, exact = 1;
	static struct tally t;
	uint64_t lost = 0;
	struct mm_map m;
	pid_t pid;

	memset(&t, 0, sizeof(t));
	mm_map(fd, &m);
	pid = spawn_storm(&go);
	t.child = pid;
	if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)pid, 0) ||
	    ioctl(fd, MEMMON_IOC_ENABLE))
		MM_DIE("watch and enable");
	start(go);
	status = reap(pid);
	VT_OK(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status),
	      "a consumer that never reads: after the 300 ms timeout the storm goes on to its end");
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE");
	drain_all(&m, &t);
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE again");
	drain_all(&m, &t);
	mm_stats(fd, cs, MAX_CPUS);
	n = mm_nr_cpus() < MAX_CPUS ? mm_nr_cpus() : MAX_CPUS;
	for (cpu = 0; cpu < n; cpu++) {
		printf("# cpu %d: produced %llu delivered %llu lost %llu; stream: %llu events, LOST %llu\n",
		       cpu, (unsigned long long)cs[cpu].produced,
		       (unsigned long long)cs[cpu].delivered,
		       (unsigned long long)cs[cpu].lost,
		       (unsigned long long)t.events[cpu], (unsigned long long)t.lost[cpu]);
		if (cs[cpu].produced != cs[cpu].delivered + cs[cpu].lost ||
		    cs[cpu].delivered != t.events[cpu] || cs[cpu].lost != t.lost[cpu])
			exact = 0;
		lost += cs[cpu].lost;
	}
	VT_OK(lost > 0, "... its events were then dropped (%llu)", (unsigned long long)lost);
	VT_OK(exact, "... and counted exactly: produced = delivered + lost = records + LOST counts");
	mm_unmap(&m);
	close(fd);
}

int main(void)
{
	configure_rules();
	lossless_storm();
	kill_the_waiter();
	kill_the_consumer();
	timeout_then_drop();
	return vt_exit();
}
