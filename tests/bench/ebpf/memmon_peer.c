// SPDX-License-Identifier: GPL-2.0
/*
 * memmon_peer - the consumer of memmon's eBPF peer (make bench, config
 * "ebpf"): loads memmon_peer.bpf.c through its skeleton, watches one
 * command, and drains the BPF ring buffer to nowhere or to a file, counting
 * the records by kind. The eBPF counterpart of tests/bench/drain.
 *
 *   memmon_peer [-r RING_BYTES] [-w WAKEUP_BYTES] [-o FILE] [-k] [-v]
 *               -- CMD [ARG...]
 *
 *   -r  ring buffer bytes, a power of two (default 16 MiB)
 *   -w  wake the consumer once this much is unread (default a quarter of
 *       the ring, like drain's watermark; 0: libbpf's adaptive wakeup, a
 *       wakeup whenever the consumer has caught up)
 *   -o  append the raw records (memmon's format) to FILE
 *   -k  kprobe/kretprobe instead of fentry/fexit (the fallback, which is
 *       taken anyway when the fentry set does not load)
 *   -v  libbpf's messages
 *
 * Fork; the child waits until its pid is in the "watched" map, then execs
 * CMD, so that it is watched from its first instruction. The consumer
 * sleeps in epoll_wait() on the ring buffer's epoll fd and a pidfd of the
 * child; once the child has exited it drains what is left, and exits with
 * the child's status (SIGINT/SIGTERM are passed on to the child).
 *
 * Output on stderr, one line, after the child's own output:
 *   EBPF attach=fentry|kprobe events=E syscall=S fault=F other=O lost=L
 *        nostate=N bytes=B ring_bytes=R wakeup_bytes=W seconds=T
 *        load_ns=LN attach_ns=AN setup_cpu_ns=SC teardown_cpu_ns=TC
 * lost is the sum of the per-CPU drop counters (bpf_ringbuf_reserve()
 * failed); nostate counts entries not recorded for want of task storage;
 * seconds runs from the fork to the child's exit; load_ns and attach_ns
 * are wall times, setup_cpu_ns (open, verify, load, attach) and
 * teardown_cpu_ns (detach, unload) this process's CPU time, which whole
 * runs of make bench leave out (one-off costs that vary from run to run).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/memmon.h>
#include "memmon_peer.h"
#include "memmon_peer.skel.h"

#define OUT_BUF_BYTES	(1U << 20)
#define MAX_LINKS	128

struct counts {
	unsigned long long events, syscall, fault, other, bytes;
};

static struct counts cnt;
static int out_fd = -1;
static char *out_buf;
static size_t out_len;
static bool verbose;
static volatile sig_atomic_t stop_sig;

static void die(const char *what, int err)
{
	fprintf(stderr, "memmon_peer: %s: %s\n", what, strerror(err));
	exit(125);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: memmon_peer [-r RING_BYTES] [-w WAKEUP_BYTES] [-o FILE] [-k] [-v] -- CMD [ARG...]\n");
	exit(2);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* This process's CPU time (not its children's), as wait4() counts it. */
static unsigned long long cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		die("getrusage", errno);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	if (level == LIBBPF_INFO && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void out_flush(void)
{
	const char *p = out_buf;

	while (out_len) {
		ssize_t n = write(out_fd, p, out_len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("write", errno);
		}
		p += n;
		out_len -= n;
	}
}

/* ring_buffer__new()'s callback: one record, in place in the ring. */
static int on_record(void *ctx, void *data, size_t size)
{
	const struct memmon_rec_header *h = data;

	(void)ctx;
	cnt.events++;
	cnt.bytes += size;
	switch (h->type) {
	case MEMMON_REC_SYSCALL:
		cnt.syscall++;
		break;
	case MEMMON_REC_FAULT:
		cnt.fault++;
		break;
	default:
		cnt.other++;
		break;
	}
	if (out_fd >= 0) {
		if (out_len + size > OUT_BUF_BYTES)
			out_flush();
		memcpy(out_buf + out_len, data, size);
		out_len += size;
	}
	return 0;
}

static void on_signal(int sig)
{
	stop_sig = sig;
}

/* The fentry/fexit set or the kprobe/kretprobe one, by section name. */
static void choose_set(struct memmon_peer_bpf *skel, bool kprobes)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *sec = bpf_program__section_name(prog);
		bool is_k = !strncmp(sec, "kprobe/", 7) || !strncmp(sec, "kretprobe/", 10);
		bool is_f = !strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6);

		if (is_k)
			bpf_program__set_autoload(prog, kprobes);
		else if (is_f)
			bpf_program__set_autoload(prog, !kprobes);
	}
}

static struct memmon_peer_bpf *open_and_load(bool kprobes, __u64 ring_bytes,
					     __u64 wakeup_bytes)
{
	struct memmon_peer_bpf *skel;
	int err;

	skel = memmon_peer_bpf__open();
	if (!skel)
		die("opening the BPF object", errno);
	err = bpf_map__set_max_entries(skel->maps.rb, ring_bytes);
	if (err)
		die("sizing the ring buffer", -err);
	skel->rodata->wakeup_bytes = wakeup_bytes;
	choose_set(skel, kprobes);
	err = memmon_peer_bpf__load(skel);
	if (err) {
		memmon_peer_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

static unsigned long long counter_sum(struct memmon_peer_bpf *skel, __u32 slot)
{
	int ncpus = libbpf_num_possible_cpus();
	unsigned long long sum = 0;
	__u64 *v;
	int i;

	if (ncpus <= 0)
		return 0;
	v = calloc(ncpus, sizeof(*v));
	if (!v)
		die("calloc", errno);
	if (!bpf_map__lookup_elem(skel->maps.counters, &slot, sizeof(slot), v,
				  ncpus * sizeof(*v), 0))
		for (i = 0; i < ncpus; i++)
			sum += v[i];
	free(v);
	return sum;
}

int main(int argc, char **argv)
{
	__u64 ring_bytes = 16ULL << 20, wakeup_bytes = ~0ULL;
	unsigned long long t0, t_load, t_attach, t_start, t_end, cpu0, cpu_setup;
	unsigned long long cpu_tear, dropped, nostate;
	struct bpf_link *links[MAX_LINKS];
	struct epoll_event ev, evs[2];
	struct memmon_peer_bpf *skel;
	const char *out_path = NULL;
	struct bpf_program *prog;
	int gate[2], status = 0, opt, nlinks = 0, epfd, pidfd, i, n, err;
	bool kprobes = false, exited = false;
	struct ring_buffer *rb;
	struct sigaction sa;
	__u32 key;
	pid_t pid;
	__u8 one = 1;
	char c;

	while ((opt = getopt(argc, argv, "+r:w:o:kv")) != -1) {
		switch (opt) {
		case 'r':
			ring_bytes = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			wakeup_bytes = strtoull(optarg, NULL, 0);
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'k':
			kprobes = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || !ring_bytes || (ring_bytes & (ring_bytes - 1)))
		usage();
	if (wakeup_bytes == ~0ULL)
		wakeup_bytes = ring_bytes / 4;
	if (out_path) {
		out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0)
			die(out_path, errno);
		out_buf = malloc(OUT_BUF_BYTES);
		if (!out_buf)
			die("malloc", errno);
	}
	libbpf_set_print(libbpf_print);

	cpu0 = cpu_ns();
	t0 = now_ns();
	skel = open_and_load(kprobes, ring_bytes, wakeup_bytes);
	if (!skel && !kprobes) {
		/* No BPF trampoline here (or no BTF for a function): kprobes. */
		fprintf(stderr, "memmon_peer: fentry/fexit do not load (%s): kprobes\n",
			strerror(errno));
		kprobes = true;
		skel = open_and_load(kprobes, ring_bytes, wakeup_bytes);
	}
	if (!skel)
		die("loading the BPF programs", errno);
	t_load = now_ns();
	bpf_object__for_each_program(prog, skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (nlinks == MAX_LINKS)
			die("attaching", E2BIG);
		links[nlinks] = bpf_program__attach(prog);
		if (!links[nlinks])
			die(bpf_program__section_name(prog), errno);
		nlinks++;
	}
	t_attach = now_ns();

	rb = ring_buffer__new(bpf_map__fd(skel->maps.rb), on_record, NULL, NULL);
	if (!rb)
		die("ring_buffer__new", errno);
	cpu_setup = cpu_ns() - cpu0;

	if (pipe2(gate, O_CLOEXEC))
		die("pipe2", errno);
	t_start = now_ns();
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		/* Watched before its first instruction of CMD: wait for it. */
		close(gate[1]);
		if (read(gate[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "memmon_peer: exec %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	key = pid;
	err = bpf_map__update_elem(skel->maps.watched, &key, sizeof(key), &one,
				   sizeof(one), BPF_ANY);
	if (err) {
		kill(pid, SIGKILL);
		die("watching the child", -err);
	}
	if (write(gate[1], "", 1) != 1)
		die("write", errno);
	close(gate[1]);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		die("pidfd_open", errno);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1", errno);
	ev.events = EPOLLIN;
	ev.data.fd = ring_buffer__epoll_fd(rb);
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		die("epoll_ctl", errno);
	ev.data.fd = pidfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, pidfd, &ev))
		die("epoll_ctl", errno);

	while (!exited) {
		if (stop_sig) {
			kill(pid, stop_sig);
			stop_sig = 0;
		}
		n = epoll_wait(epfd, evs, 2, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait", errno);
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == pidfd) {
				exited = true;
				continue;
			}
			err = ring_buffer__consume(rb);
			if (err < 0)
				die("ring_buffer__consume", -err);
		}
	}
	/* The child is gone: nothing more comes; what is below the
	 * watermark was never signalled.
	 */
	err = ring_buffer__consume(rb);
	if (err < 0)
		die("ring_buffer__consume", -err);
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid", errno);
	if (out_fd >= 0) {
		out_flush();
		if (close(out_fd))
			die("close", errno);
	}

	t_end = now_ns();
	dropped = counter_sum(skel, PEER_CNT_DROPPED);
	nostate = counter_sum(skel, PEER_CNT_NOSTATE);

	cpu_tear = cpu_ns();
	ring_buffer__free(rb);
	for (i = nlinks - 1; i >= 0; i--)
		bpf_link__destroy(links[i]);
	memmon_peer_bpf__destroy(skel);
	cpu_tear = cpu_ns() - cpu_tear;

	fprintf(stderr,
		"EBPF attach=%s events=%llu syscall=%llu fault=%llu other=%llu lost=%llu nostate=%llu bytes=%llu ring_bytes=%llu wakeup_bytes=%llu seconds=%.6f load_ns=%llu attach_ns=%llu setup_cpu_ns=%llu teardown_cpu_ns=%llu\n",
		kprobes ? "kprobe" : "fentry", cnt.events, cnt.syscall, cnt.fault,
		cnt.other, dropped, nostate, cnt.bytes,
		(unsigned long long)ring_bytes, (unsigned long long)wakeup_bytes,
		(t_end - t_start) / 1e9, t_load - t0, t_attach - t_load,
		cpu_setup, cpu_tear);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
