// SPDX-License-Identifier: GPL-2.0
/*
 * The clock of durations (driver/instr/clock.c): a syscall's or a fault's
 * duration_ns is taken from the TSC where timekeeping counts it, else from
 * ktime_get_ns() at both ends; hdr.time_ns is CLOCK_MONOTONIC either way.
 *
 * 1. With hook_span_tsc=-1 (the default) /proc/memmon/stats' duration_clock
 *    says "tsc" exactly when the kernel's clocksource is the TSC: the
 *    module's guess agrees with /sys/devices/system/clocksource.
 * 2. For each of hook_span_tsc=0 (ktime) and =1 (the TSC, forced; every
 *    task of the workload stays on one CPU, where a TSC is monotonic):
 *    - munmap() of BIG populated bytes lasts at most the time elapsed
 *      across it (CLOCK_MONOTONIC), give or take 5 % and 500 us for the
 *      calibrated frequencies of the clocks (the TSC's against the HPET's,
 *      in a VM), and at least half the CPU time the thread spent across
 *      the call (CLOCK_THREAD_CPUTIME_ID; where the VM's clocks disagree,
 *      the elapsed time; see in_window() for why half): a wrong unit or
 *      factor fails one side;
 *    - mmap(MAP_POPULATE) of BIG bytes likewise, and the faults recorded
 *      inside it (GUP's; 4 KiB or 2 MiB pages, as THP has it) each last
 *      more than 0 and together no longer than it;
 *    - every syscall of a loop of mmap/munmap lasts more than 0 and no
 *      longer than the time between its record and the thread's previous
 *      SYSCALL record (it began after that one ended).
 * No speed is assumed: the bounds hold on any machine.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>

#include "vmtest.h"
#include "instr.h"

#define P		4096UL
#define BIG		(32UL << 20)
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

/* One call's window, as the child saw it. */
struct span {
	uint64_t mono0, mono1;	/* CLOCK_MONOTONIC before and after */
	uint64_t cpu;		/* CLOCK_THREAD_CPUTIME_ID across it */
};

/* What the child tells the parent. */
struct report {
	struct span pop, unmap;	/* mmap(MAP_POPULATE), munmap() of BIG */
	int err;
};

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void workload(int go, int out)
{
	struct report r = { 0 };
	uint64_t c0;
	char *big;
	char c;
	int i;

	if (read(go, &c, 1) != 1)
		_exit(99);
	c0 = cpu_ns();
	r.pop.mono0 = mono_ns();
	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	r.pop.mono1 = mono_ns();
	r.pop.cpu = cpu_ns() - c0;
	if (big == MAP_FAILED)
		r.err = 1;
	c0 = cpu_ns();
	r.unmap.mono0 = mono_ns();
	if (!r.err && munmap(big, BIG))
		r.err = 2;
	r.unmap.mono1 = mono_ns();
	r.unmap.cpu = cpu_ns() - c0;
	for (i = 0; i < NSYS; i++) {
		void *p = mmap(NULL, P, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || munmap(p, P))
			r.err = 3;
	}
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(98);
	_exit(0);
}

/* @d (ns) is within @bound (ns) up to the TSC's calibration. */
static bool within(uint64_t d, uint64_t bound)
{
	return d <= bound + bound / 20 + 500000;
}

/* @d (ns) is at least @bound (ns), up to the same. */
static bool atleast(uint64_t d, uint64_t bound)
{
	return d + d / 20 + 500000 >= bound;
}

/*
 * A syscall's record lies in the window @w and lasts what @w allows. The
 * thread's CPU time is sched_clock()'s (the TSC) and the window is
 * CLOCK_MONOTONIC's (the clocksource, HPET in the VM): on a loaded host the
 * two emulated clocks drift apart by more than the slack over tens of ms
 * (seen: 44.6 ms of CPU time in 39.8 ms elapsed). Time on a CPU is never
 * more than time elapsed, so the lower bound is the smaller of the two. And
 * with hook_span_tsc=1 the duration is a third clock, the TSC converted with
 * the tsc_khz the kernel calibrated at boot, which TCG on a loaded host gets
 * wrong by more than the slack too (seen: 40.8 ms for a call of 44.3 ms of
 * CPU time and 44.3 ms elapsed, while its faults, in the same clock, add up
 * to 39.9 ms). So across clocks the lower bound only catches a duration that
 * misses most of the call (half of it); the exact check is in one clock, the
 * faults' sum against the call's.
 */
static bool in_window(const struct memmon_rec_syscall *c, const struct span *w)
{
	uint64_t elapsed = w->mono1 - w->mono0;
	uint64_t floor = (w->cpu < elapsed ? w->cpu : elapsed) / 2;

	return c->hdr.time_ns >= w->mono0 && c->hdr.time_ns <= w->mono1 &&
	       within(c->duration_ns, elapsed) && atleast(c->duration_ns, floor);
}

static void one_mode(const char *mode, const char *want_clock)
{
	struct in_sess s;
	struct report r = { 0 };
	cpu_set_t one;
	int go[2], out[2], st;
	const struct memmon_rec_syscall *pop = NULL, *unmap = NULL;
	uint64_t prev = 0, fsum = 0;	/* prev: the last SYSCALL's time */
	unsigned int nsys = 0, bad_sys = 0, nfault = 0, bad_fault = 0;
	char clock[64];
	pid_t pid, waited;
	ssize_t got;
	size_t i;

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
	got = read(out[0], &r, sizeof(r));
	VT_OK(got == sizeof(r) && !r.err, "%s: the workload ran (err %d)",
	      want_clock, r.err);
	waited = waitpid(pid, &st, 0);
	VT_OK(waited == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "%s: the child exited 0 (status %#x)", want_clock, st);
	in_disable(&s);
	in_drain(&s);
	VT_OK(!s.lost && !in_stats_lost(&s), "%s: nothing lost", want_clock);

	for (i = 0; i < s.n; i++) {
		const struct memmon_rec_header *h = &s.recs[i]->hdr;
		const struct memmon_rec_syscall *c = (const void *)h;
		const struct memmon_rec_fault *f = (const void *)h;

		if (h->tid != (uint32_t)pid)
			continue;
		if (h->type == MEMMON_REC_SYSCALL) {
			if (c->sys == MEMMON_SYS_MMAP && c->args[1] == BIG)
				pop = c;
			else if (c->sys == MEMMON_SYS_MUNMAP && c->args[1] == BIG)
				unmap = c;
			if (!c->duration_ns ||
			    (prev && !within(c->duration_ns, h->time_ns - prev)))
				bad_sys++;
			nsys++;
			prev = h->time_ns;
		} else if (h->type == MEMMON_REC_FAULT &&
			   (f->flags & MEMMON_FAULTF_KERNEL) &&
			   h->time_ns >= r.pop.mono0 && h->time_ns <= r.pop.mono1) {
			fsum += f->duration_ns;
			bad_fault += !f->duration_ns;
			nfault++;
		}
	}
	printf("# %s: populate %llu ns (cpu %llu, elapsed %llu; %u faults, %llu ns), munmap %llu ns (cpu %llu, elapsed %llu)\n",
	       want_clock, pop ? (unsigned long long)pop->duration_ns : 0,
	       (unsigned long long)r.pop.cpu,
	       (unsigned long long)(r.pop.mono1 - r.pop.mono0), nfault,
	       (unsigned long long)fsum,
	       unmap ? (unsigned long long)unmap->duration_ns : 0,
	       (unsigned long long)r.unmap.cpu,
	       (unsigned long long)(r.unmap.mono1 - r.unmap.mono0));
	VT_OK(unmap && in_window(unmap, &r.unmap),
	      "%s: munmap of %lu MiB lasts between its CPU time and its elapsed time",
	      want_clock, BIG >> 20);
	VT_OK(pop && in_window(pop, &r.pop),
	      "%s: mmap(MAP_POPULATE) of %lu MiB likewise", want_clock,
	      BIG >> 20);
	VT_OK(pop && nfault && !bad_fault &&
	      within(fsum, pop->duration_ns),
	      "%s: its %u faults each last > 0 (%u not), together %llu ns, no longer than it",
	      want_clock, nfault, bad_fault, (unsigned long long)fsum);
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
