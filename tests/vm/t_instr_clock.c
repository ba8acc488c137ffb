// SPDX-License-Identifier: GPL-2.0
/*
 * The clock of durations (driver/clock.c): a syscall's or a fault's
 * duration_ns is taken from the TSC where timekeeping counts it, else from
 * ktime_get_ns() at both ends; hdr.time_ns is CLOCK_MONOTONIC either way.
 *
 * 1. With hook_span_tsc=-1 (the default) /proc/memmon/stats' duration_clock
 *    says "tsc" exactly when the kernel's clocksource is the TSC: the
 *    module's guess agrees with /sys/devices/system/clocksource.
 * 2. For each of hook_span_tsc=0 (ktime) and =1 (the TSC, forced; every
 *    task of the workload stays on one CPU, where a TSC is monotonic):
 *    - a fault that a userfaultfd handler answers only after sleeping
 *      SLEEP_MS lasts at least that (nanosleep's guarantee, CLOCK_MONOTONIC),
 *      and no longer than from the moment before the touch to the record's
 *      own time (both CLOCK_MONOTONIC), give or take 1 % and 20 us for the
 *      TSC's calibrated frequency: a wrong unit or factor fails one side;
 *    - every syscall of a loop of mmap/munmap lasts more than 0 and no
 *      longer than the time between its record and the thread's previous
 *      one (it began after that one ended), with the same tolerance.
 * No speed is assumed: the bounds hold on any machine.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/userfaultfd.h>

#include "vmtest.h"
#include "instr.h"

#define P		4096UL
#define SLEEP_MS	50
#define NSYS		200
#define PARAM		"/sys/module/memmon/parameters/"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The value of /proc/memmon/stats' line KEY into @out, or "". */
static void stat_of(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/memmon/stats", "r");
	char line[256];
	size_t kl = strlen(key);

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			snprintf(out, len, "%s", line + kl + 1);
			out[strcspn(out, "\n")] = 0;
			break;
		}
	}
	fclose(f);
}

/* Wait (up to 10 s) for the hooks to be detached, so the next attach
 * chooses the clock again.
 */
static bool hooks_detached(void)
{
	char v[64];
	int i;

	for (i = 0; i < 1000; i++) {
		stat_of("hooks_attached", v, sizeof(v));
		if (!strcmp(v, "0"))
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* What the child tells the parent. */
struct report {
	uint64_t fault_addr;
	uint64_t before_touch;	/* CLOCK_MONOTONIC, just before it */
	uint64_t after_touch;
	int err;
};

static int uffd;
static char *region;

/* Answer one missing-page fault, SLEEP_MS after it was reported. */
static void *handler(void *arg)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;
	static char page[P] __attribute__((aligned(4096)));
	struct uffdio_copy copy;
	struct timespec ts = { 0, SLEEP_MS * 1000000L };

	(void)arg;
	if (poll(&pfd, 1, 30000) != 1 ||
	    read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return (void *)1;
	while (nanosleep(&ts, &ts))
		;
	memset(page, 7, sizeof(page));
	copy.dst = msg.arg.pagefault.address & ~(P - 1);
	copy.src = (uintptr_t)page;
	copy.len = P;
	copy.mode = 0;
	copy.copy = 0;
	return ioctl(uffd, UFFDIO_COPY, &copy) ? (void *)2 : NULL;
}

static void workload(int go, int out)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct report r = { 0 };
	pthread_t th;
	void *ret;
	char c;
	int i;

	region = mmap(NULL, P, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (region == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		r.err = 1;
	reg.range.start = (uintptr_t)region;
	reg.range.len = P;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (!r.err && ioctl(uffd, UFFDIO_REGISTER, &reg))
		r.err = 2;
	if (!r.err && pthread_create(&th, NULL, handler, NULL))
		r.err = 3;
	if (read(go, &c, 1) != 1)
		_exit(99);
	if (!r.err) {
		r.fault_addr = (uintptr_t)region + 8;
		r.before_touch = mono_ns();
		*(volatile char *)(region + 8) = 1;
		r.after_touch = mono_ns();
		if (pthread_join(th, &ret) || ret)
			r.err = 4;
	}
	for (i = 0; i < NSYS; i++) {
		void *p = mmap(NULL, P, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || munmap(p, P))
			r.err = 5;
	}
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(98);
	_exit(0);
}

/* @d (ns) is within @bound (ns) up to the TSC's calibration. */
static bool within(uint64_t d, uint64_t bound)
{
	return d <= bound + bound / 100 + 20000;
}

static void one_mode(const char *mode, const char *want_clock)
{
	struct in_sess s;
	struct report r = { 0 };
	cpu_set_t one;
	int go[2], out[2], st;
	uint64_t prev = 0, longest = 0, longest_time = 0;	/* prev: last SYSCALL */
	unsigned int nsys = 0, bad_sys = 0, nfault = 0;
	char clock[64];
	size_t i;
	pid_t pid;

	VT_OK(!write_file(PARAM "hook_span_tsc", mode) && hooks_detached(),
	      "%s: hook_span_tsc=%s, hooks detached", want_clock, mode);
	if (pipe(go) || pipe(out) || in_open(&s, 8 << 20))
		exit(1);
	pid = fork();
	if (!pid) {
		close(go[1]);
		close(out[0]);
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			_exit(97);
		workload(go[0], out[1]);
	}
	close(go[0]);
	close(out[1]);
	VT_SUCCESS(in_watch(&s, pid, 0), "%s: watch the child", want_clock);
	VT_SUCCESS(in_events(&s, (1ULL << MEMMON_EV_SYSCALL) |
				     (1ULL << MEMMON_EV_FAULT),
			     (1ULL << MEMMON_SYS_MMAP) | (1ULL << MEMMON_SYS_MUNMAP)),
		   "%s: syscalls and faults", want_clock);
	VT_SUCCESS(in_enable(&s), "%s: enable", want_clock);
	stat_of("duration_clock", clock, sizeof(clock));
	VT_OK(!strcmp(clock, want_clock), "%s: duration_clock %s", want_clock,
	      clock);
	if (write(go[1], "g", 1) != 1)
		exit(1);
	VT_OK(read(out[0], &r, sizeof(r)) == sizeof(r) && !r.err,
	      "%s: the workload ran (err %d)", want_clock, r.err);
	waitpid(pid, &st, 0);
	in_disable(&s);
	in_drain(&s);
	VT_OK(!s.lost && !in_stats_lost(&s), "%s: nothing lost", want_clock);

	for (i = 0; i < s.n; i++) {
		const struct memmon_rec_header *h = &s.recs[i]->hdr;

		if (h->tid != (uint32_t)pid)
			continue;
		if (h->type == MEMMON_REC_FAULT) {
			const struct memmon_rec_fault *f = (const void *)h;

			if (f->addr == r.fault_addr && f->duration_ns > longest) {
				longest = f->duration_ns;
				longest_time = h->time_ns;
			}
			nfault++;
		} else if (h->type == MEMMON_REC_SYSCALL) {
			const struct memmon_rec_syscall *c = (const void *)h;

			if (!c->duration_ns ||
			    (prev && !within(c->duration_ns, h->time_ns - prev)))
				bad_sys++;
			nsys++;
			prev = h->time_ns;
		}
	}
	printf("# %s: fault %llu ns (touch %llu ns), %u syscalls\n", want_clock,
	       (unsigned long long)longest,
	       (unsigned long long)(r.after_touch - r.before_touch), nsys);
	VT_OK(longest >= SLEEP_MS * 1000000ULL,
	      "%s: the uffd fault lasted >= %d ms (%llu ns)", want_clock,
	      SLEEP_MS, (unsigned long long)longest);
	VT_OK(longest_time >= r.before_touch && longest_time <= r.after_touch &&
		      within(longest, longest_time - r.before_touch),
	      "%s: ... and no longer than since the touch began", want_clock);
	VT_OK(nsys >= 2 * NSYS && !bad_sys,
	      "%s: %u syscalls, each > 0 and within its gap (%u not)",
	      want_clock, nsys, bad_sys);
	in_close(&s);
	close(go[1]);
	close(out[0]);
}

/* The first line of @path into @out (no newline), or "". */
static void read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	out[0] = 0;
	if (!f)
		return;
	if (fgets(out, len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

int main(void)
{
	char cs[64], clock[64], linger[32];
	struct in_sess s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  cs, sizeof(cs));
	read_line(PARAM "hooks_linger_ms", linger, sizeof(linger));
	VT_OK(!write_file(PARAM "hooks_linger_ms", "0") &&
	      !write_file(PARAM "hook_span_tsc", "-1") && hooks_detached(),
	      "hooks detach at once, the default clock choice");
	if (in_open(&s, 1 << 20))
		return 1;
	VT_SUCCESS(in_enable(&s), "attach");
	stat_of("duration_clock", clock, sizeof(clock));
	VT_OK(!strcmp(clock, strcmp(cs, "tsc") ? "ktime" : "tsc"),
	      "clocksource %s: duration_clock %s", cs, clock);
	in_close(&s);

	one_mode("0", "ktime");
	one_mode("1", "tsc");

	VT_OK(!write_file(PARAM "hook_span_tsc", "-1") &&
	      !write_file(PARAM "hooks_linger_ms", linger),
	      "parameters restored (hooks_linger_ms %s)", linger);
	return vt_exit();
}
