// SPDX-License-Identifier: GPL-2.0
/*
 * drain - the benchmarks' memmon consumer, written against the uapi header
 * alone (no libmemmon): it maps a session's rings and drains every record
 * to nowhere (or to a file), counting them.
 *
 *   drain [-r RING_BYTES] [-o FILE] [-e EVENTS] [-g DEPTH] [-S] -- CMD [ARG...]
 *   drain [-r RING_BYTES] [-o FILE] [-e EVENTS] [-g DEPTH] [-S] --pid PID
 *
 * With CMD: fork, watch the child (MEMMON_WATCH_FOLLOW_CHILDREN), ENABLE,
 * then let the child exec CMD, so that it is watched from its first
 * instruction; drain until it exits, drain what is left, and exit with its
 * status (SIGINT/SIGTERM stop the draining and are passed on to CMD). With
 * --pid: watch PID until SIGINT/SIGTERM (the "another process is watched"
 * configuration).
 *
 *   -r  per-CPU ring bytes (MEMMON_IOC_CONFIGURE); default: the module's
 *   -o  write the raw records there (one write() per ring span); default:
 *       count them only
 *   -e  event mask, comma-separated: syscall,fault,rss,lifecycle,mark;
 *       default: everything
 *   -g  user stacks DEPTH frames deep on syscall records (ABI 1.5
 *       stack_depth; every event mask, as without -e)
 *   -S  spin: drain without sleeping in poll() (a CPU of its own)
 *
 * The consumer follows the ring protocol of <linux/memmon.h>: [C] load-
 * acquire of producer_pos before reading records below it, [D] store-release
 * of consumer_pos after them. It sleeps in poll() on the session fd (woken at
 * the wakeup watermark) and on a pidfd of the child.
 *
 * Output on stderr, one line, after the child's own output:
 *   DRAIN records=R events=E syscall=S fault=F mark=M other=O lost=L
 *         lost_records=LR bytes=B produced=P delivered=D stats_lost=SL
 *         seconds=T events_per_s=X enable_ns=EN disable_ns=DN
 * events excludes LOST records; lost sums their counts; produced, delivered
 * and stats_lost come from MEMMON_IOC_GET_STATS at the end; enable_ns and
 * disable_ns are how long MEMMON_IOC_ENABLE and _DISABLE took (attaching and
 * detaching the hooks, for the first/last session).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/memmon.h>

#define MAX_CPUS	1024

struct counts {
	unsigned long long records, events, by_type[MEMMON_REC__COUNT + 1];
	unsigned long long lost, lost_records, bytes;
};

static struct memmon_info info;
static char *producer;		/* the read-only producer area */
static char *consumer;		/* the consumer_pos words */
static __u64 cons[MAX_CPUS];	/* our copy of each consumer_pos */
static int out_fd = -1;
static struct counts cnt;
static volatile sig_atomic_t stop;

static void die(const char *what)
{
	fprintf(stderr, "drain: %s: %s\n", what, strerror(errno));
	exit(125);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: drain [-r RING_BYTES] [-o FILE] [-e EVENTS] [-g DEPTH] [-S] -- CMD [ARG...]\n"
		"       drain [-r RING_BYTES] [-o FILE] [-e EVENTS] [-S] --pid PID\n");
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct memmon_ring_page *ring_page(unsigned int cpu)
{
	return (struct memmon_ring_page *)(producer + info.page_size +
					   cpu * info.ring_stride);
}

static char *ring_data(unsigned int cpu)
{
	return (char *)ring_page(cpu) + info.ring_data_offset;
}

static __u64 *consumer_pos(unsigned int cpu)
{
	return (__u64 *)(consumer + cpu * MEMMON_CONSUMER_STRIDE);
}

static void write_all(const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(out_fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		p += n;
		len -= n;
	}
}

/* Drain one CPU's ring; returns the bytes consumed. */
static __u64 drain_cpu(unsigned int cpu)
{
	struct memmon_ring_page *rp = ring_page(cpu);
	char *data = ring_data(cpu);
	__u64 mask = info.ring_size - 1, prod, pos, start = cons[cpu];

	/* [C] pairs with [B] in the kernel's commit. */
	prod = __atomic_load_n(&rp->producer_pos, __ATOMIC_ACQUIRE);
	if (prod - start > info.ring_size) {
		fprintf(stderr, "drain: cpu %u: producer_pos %llu is more than a ring ahead of %llu\n",
			cpu, (unsigned long long)prod,
			(unsigned long long)start);
		exit(125);
	}
	for (pos = start; pos < prod;) {
		const struct memmon_rec_header *h =
			(const void *)(data + (pos & mask));

		if (h->size < sizeof(*h) || h->size % MEMMON_REC_ALIGN ||
		    h->size > prod - pos) {
			fprintf(stderr, "drain: cpu %u: bad record size %u at %llu\n",
				cpu, h->size, (unsigned long long)pos);
			exit(125);
		}
		cnt.records++;
		cnt.by_type[h->type < MEMMON_REC__COUNT ? h->type :
			    MEMMON_REC__COUNT]++;
		if (h->type == MEMMON_REC_LOST) {
			const struct memmon_rec_lost *l = (const void *)h;

			cnt.lost_records++;
			cnt.lost += l->count;
		} else {
			cnt.events++;
		}
		pos += h->size;
	}
	if (pos == start)
		return 0;
	cnt.bytes += pos - start;
	/* The double mapping makes [start, pos) one contiguous span. */
	if (out_fd >= 0)
		write_all(data + (start & mask), pos - start);
	cons[cpu] = pos;
	/* [D] pairs with [A] in the kernel's reserve. */
	__atomic_store_n(consumer_pos(cpu), pos, __ATOMIC_RELEASE);
	return pos - start;
}

static __u64 drain_all(void)
{
	__u64 n = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < info.nr_cpus; cpu++)
		n += drain_cpu(cpu);
	return n;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static __u64 parse_events(char *s)
{
	static const char *const names[MEMMON_EV__COUNT] = {
		"syscall", "fault", "rss", "lifecycle", "mark",
	};
	__u64 mask = 0;
	char *tok;
	int i;

	for (tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		for (i = 0; i < MEMMON_EV__COUNT; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == MEMMON_EV__COUNT) {
			fprintf(stderr, "drain: unknown event '%s'\n", tok);
			exit(2);
		}
		mask |= 1ULL << i;
	}
	return mask;
}

static void map_rings(int fd)
{
	struct memmon_mmap_header *mh;

	consumer = mmap(NULL, info.consumer_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, fd, 0);
	if (consumer == MAP_FAILED)
		die("mmap consumer area");
	producer = mmap(NULL, info.producer_size, PROT_READ, MAP_SHARED, fd,
			info.producer_offset);
	if (producer == MAP_FAILED)
		die("mmap producer area");
	mh = (struct memmon_mmap_header *)producer;
	if (mh->magic != MEMMON_MMAP_MAGIC || mh->nr_cpus != info.nr_cpus ||
	    mh->ring_size != info.ring_size) {
		errno = EPROTO;
		die("mapping header does not match GET_INFO");
	}
	if (info.nr_cpus > MAX_CPUS) {
		errno = E2BIG;
		die("nr_cpus");
	}
}

int main(int argc, char **argv)
{
	struct memmon_cpu_stats st[MAX_CPUS];
	struct memmon_stats sreq = {
		.size = sizeof(sreq), .nr_cpus = MAX_CPUS,
		.cpus = (__u64)(uintptr_t)st, .cpu_stats_size = sizeof(st[0]),
	};
	struct memmon_config cfg = { .size = sizeof(cfg) };
	struct memmon_events ev = { .size = sizeof(ev) };
	struct memmon_watch w = { .size = sizeof(w),
				  .flags = MEMMON_WATCH_FOLLOW_CHILDREN };
	unsigned long long produced = 0, delivered = 0, slost = 0;
	const char *out = NULL;
	bool spin = false, have_events = false;
	pid_t pid = 0, child = -1;
	int fd, pidfd = -1, go[2], status = 0, i;
	double t0, t1, t_en, t_dis;
	unsigned int cpu;
	char c = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--pid") && i + 1 < argc) {
			pid = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			cfg.ring_size = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "-e") && i + 1 < argc) {
			ev.mask = parse_events(argv[++i]);
			ev.syscalls = (1ULL << MEMMON_SYS__COUNT) - 1;
			have_events = true;
		} else if (!strcmp(argv[i], "-g") && i + 1 < argc) {
			ev.stack_depth = atoi(argv[++i]);
			if (!have_events) {
				ev.mask = (1ULL << MEMMON_EV__COUNT) - 1;
				ev.syscalls = (1ULL << MEMMON_SYS__COUNT) - 1;
			}
			have_events = true;
		} else if (!strcmp(argv[i], "-S")) {
			spin = true;
		} else {
			usage();
		}
	}
	if ((pid > 0) == (i < argc))
		usage();

	fd = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(MEMMON_DEVICE_PATH);
	info.size = sizeof(info);
	if (ioctl(fd, MEMMON_IOC_GET_INFO, &info))
		die("MEMMON_IOC_GET_INFO");
	if (cfg.ring_size) {
		if (ioctl(fd, MEMMON_IOC_CONFIGURE, &cfg))
			die("MEMMON_IOC_CONFIGURE");
		if (ioctl(fd, MEMMON_IOC_GET_INFO, &info))
			die("MEMMON_IOC_GET_INFO");
	}
	if (have_events && ioctl(fd, MEMMON_IOC_SET_EVENTS, &ev))
		die("MEMMON_IOC_SET_EVENTS");
	map_rings(fd);
	if (out) {
		out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644);
		if (out_fd < 0)
			die(out);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (!pid) {
		if (pipe2(go, O_CLOEXEC))
			die("pipe");
		child = fork();
		if (child < 0)
			die("fork");
		if (!child) {
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(126);	/* the parent gave up */
			execvp(argv[i], argv + i);
			fprintf(stderr, "drain: exec %s: %s\n", argv[i],
				strerror(errno));
			_exit(127);
		}
		close(go[0]);
		pid = child;
		pidfd = syscall(SYS_pidfd_open, child, 0);
		if (pidfd < 0)
			die("pidfd_open");
	}
	w.pid = pid;
	if (ioctl(fd, MEMMON_IOC_WATCH_ADD, &w))
		die("MEMMON_IOC_WATCH_ADD");
	t_en = now_s();
	if (ioctl(fd, MEMMON_IOC_ENABLE))
		die("MEMMON_IOC_ENABLE");
	t0 = now_s();
	t_en = t0 - t_en;
	if (child > 0) {
		if (write(go[1], &c, 1) != 1)
			die("write go");
		close(go[1]);
	}

	while (!stop) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
		};

		if (drain_all() && spin)
			continue;
		if (spin) {
			if (pidfd >= 0 && poll(&pfd[1], 1, 0) > 0)
				break;
			continue;
		}
		/* A wakeup comes at the watermark; the timeout bounds how long
		 * a ring below it waits (and covers a kernel without poll).
		 */
		if (poll(pfd, pidfd >= 0 ? 2 : 1, 100) < 0 && errno != EINTR)
			die("poll");
		if (pidfd >= 0 && (pfd[1].revents & POLLIN))
			break;
	}
	/* Stopped by a signal with the command still running: it goes too. */
	if (child > 0 && stop)
		kill(child, SIGTERM);
	if (child > 0 && waitpid(child, &status, 0) < 0)
		die("waitpid");
	t_dis = now_s();
	if (ioctl(fd, MEMMON_IOC_DISABLE))
		die("MEMMON_IOC_DISABLE");
	t_dis = now_s() - t_dis;
	drain_all();
	t1 = now_s();
	if (ioctl(fd, MEMMON_IOC_GET_STATS, &sreq))
		die("MEMMON_IOC_GET_STATS");
	for (cpu = 0; cpu < sreq.nr_cpus && cpu < MAX_CPUS; cpu++) {
		produced += st[cpu].produced;
		delivered += st[cpu].delivered;
		slost += st[cpu].lost;
	}
	fflush(stdout);
	fprintf(stderr,
		"DRAIN records=%llu events=%llu syscall=%llu fault=%llu mark=%llu other=%llu lost=%llu lost_records=%llu bytes=%llu produced=%llu delivered=%llu stats_lost=%llu seconds=%.6f events_per_s=%.0f enable_ns=%.0f disable_ns=%.0f\n",
		cnt.records, cnt.events, cnt.by_type[MEMMON_REC_SYSCALL],
		cnt.by_type[MEMMON_REC_FAULT], cnt.by_type[MEMMON_REC_MARK],
		cnt.events - cnt.by_type[MEMMON_REC_SYSCALL] -
		cnt.by_type[MEMMON_REC_FAULT] - cnt.by_type[MEMMON_REC_MARK],
		cnt.lost, cnt.lost_records, cnt.bytes, produced, delivered,
		slost, t1 - t0, cnt.events / (t1 - t0), t_en * 1e9, t_dis * 1e9);
	if (out_fd >= 0 && close(out_fd))
		die("close output");
	if (child < 0)
		return 0;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
