// SPDX-License-Identifier: GPL-2.0
/*
 * wl - the benchmark workloads of memmon (make bench).
 *
 *   wl WORKLOAD [-n ITERS] [-k RUNS] [-t SECONDS] [-j THREADS] [-s MIB]
 *
 * Workloads (one "op" each; EVENTS is what a complete tracer records per op):
 *
 *   mmap    mmap + munmap of 4 KiB anonymous memory, never touched.
 *           op = the pair; 2 syscall events.
 *   fault   map a region (-s MiB, default 16), madvise(MADV_NOHUGEPAGE) so
 *           that every 4 KiB page faults on its own, write one byte per
 *           page, munmap. op = one page (one minor anonymous fault); the
 *           three syscalls per region are spread over its pages.
 *   brk     brk(cur + 64 KiB), brk(cur): grow and shrink, never touched.
 *           op = the pair; 2 syscall events.
 *   mixed   -j threads (default: one per online CPU, at least 2) in one
 *           process, each looping: mmap 64 KiB, write its 16 pages,
 *           mprotect(PROT_READ), madvise(MADV_DONTNEED), munmap. op = one
 *           loop of one thread; 4 syscalls + 16 faults. ns/op = wall time
 *           / ops of all threads.
 *   storm   the fastest fault storm: -j threads (default one per CPU),
 *           each pinned to its CPU, each touching a private -s MiB region
 *           (default 4) page by page and dropping it with MADV_DONTNEED,
 *           for -t seconds (one run, no calibration). op = one fault.
 *   mark    a MARK storm: -j threads pinned per CPU, each issuing
 *           MEMMON_IOC_MARK(MEMMON_MARK_WATCHERS, 8 bytes) on its own
 *           /dev/memmon fd for -t seconds: every session watching this
 *           process gets a record per call. op = one mark.
 *
 * Timing: CLOCK_MONOTONIC around each run (vDSO: no syscall, so tracers
 * see nothing of it). Without -n the iteration count is calibrated: one
 * warm-up run, then the count doubles until a run lasts -t seconds
 * (default 0.25). Then -k runs (default 5) of that count; the best is the
 * result, the median is printed too. Every op executed, warm-up and
 * calibration included, is counted in ops_total, so that a tracer's event
 * count divided by ops_total is its events per op.
 *
 * Output: one line on stdout,
 *   RESULT workload=W ns_per_op=BEST median_ns_per_op=M iters=N runs=K
 *          threads=T ops_total=O events_per_op=E
 * (E is what a complete tracer of these syscalls and faults should see).
 * Linked statically so that the program's own start-up (the dynamic
 * loader's mmaps and faults) adds almost nothing to the traced counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/memmon.h>

#define PAGE		4096UL
#define MAX_RUNS	64
#define MAX_THREADS	64
#define MIXED_BYTES	(64UL << 10)
#define BRK_STEP	(64UL << 10)

static unsigned long opt_iters;		/* 0: calibrate */
static unsigned int opt_runs = 5;
static double opt_seconds = 0.25;
static unsigned int opt_threads;	/* 0: one per online CPU */
static unsigned long opt_mib;		/* 0: the workload's default */

static unsigned long ops_total;		/* every op executed */

static void die(const char *what)
{
	fprintf(stderr, "wl: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: wl mmap|fault|brk|mixed|storm|mark [-n ITERS] [-k RUNS]\n"
		"          [-t SECONDS] [-j THREADS] [-s MIB]\n");
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * A workload: ops_per_iter ops per iteration, events per op for a complete
 * tracer, and a function that runs n iterations (a "run").
 */
struct workload {
	const char *name;
	void (*setup)(void);
	void (*run)(unsigned long n);
	unsigned long start_iters;	/* first calibration step */
	double (*ops_per_iter)(void);
	double (*events_per_op)(void);
	unsigned int (*threads)(void);
};

static double one(void)
{
	return 1.0;
}

static double two(void)
{
	return 2.0;
}

static unsigned int single(void)
{
	return 1;
}

static unsigned int nr_threads(void)
{
	long n;

	if (opt_threads)
		return opt_threads;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > MAX_THREADS ? MAX_THREADS : n;
}

/* ---- (a) mmap + munmap --------------------------------------------- */

static void run_mmap(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		if (munmap(p, PAGE))
			die("munmap");
	}
}

/* ---- (b) page-fault loop ------------------------------------------- */

static unsigned long fault_pages(void)
{
	return (opt_mib ? opt_mib : 16) << 20 >> 12;
}

/* n regions: mmap, madvise, touch every page, munmap. */
static void run_fault(unsigned long n)
{
	unsigned long len = fault_pages() * PAGE, i, off;

	for (i = 0; i < n; i++) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		/*
		 * THP would turn 512 faults into one. A kernel without THP
		 * (Debian's PREEMPT_RT) refuses the advice with EINVAL, and
		 * faults page by page anyway.
		 */
		if (madvise((void *)p, len, MADV_NOHUGEPAGE) && errno != EINVAL)
			die("madvise");
		for (off = 0; off < len; off += PAGE)
			p[off] = 1;
		if (munmap((void *)p, len))
			die("munmap");
	}
}

static double fault_ops_per_iter(void)
{
	return fault_pages();
}

static double fault_events_per_op(void)
{
	return 1.0 + 3.0 / fault_pages();
}

/* ---- (c) brk grow/shrink ------------------------------------------- */

static unsigned long brk_base;

/* The raw syscall: glibc's sbrk() caches the break and may skip calls. */
static unsigned long sys_brk(unsigned long addr)
{
	return syscall(SYS_brk, addr);
}

static void setup_brk(void)
{
	brk_base = sys_brk(0);
}

static void run_brk(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		if (sys_brk(brk_base + BRK_STEP) != brk_base + BRK_STEP) {
			errno = ENOMEM;
			die("brk grow");
		}
		if (sys_brk(brk_base) != brk_base) {
			errno = EINVAL;
			die("brk shrink");
		}
	}
}

/* ---- (d) mixed, multi-threaded ------------------------------------- */

/*
 * Worker threads live across runs; the main thread and the workers meet at
 * a barrier before and after each run, and the main thread times the span
 * between the two (creating threads inside the timed span would add clone
 * and stack mmaps to it).
 */
static pthread_barrier_t mixed_start, mixed_end;
static unsigned long mixed_n;
static bool mixed_quit;
static unsigned int mixed_threads;

static void mixed_op(void)
{
	unsigned long off;
	volatile char *p = mmap(NULL, MIXED_BYTES, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	for (off = 0; off < MIXED_BYTES; off += PAGE)
		p[off] = 1;
	if (mprotect((void *)p, MIXED_BYTES, PROT_READ))
		die("mprotect");
	if (madvise((void *)p, MIXED_BYTES, MADV_DONTNEED))
		die("madvise");
	if (munmap((void *)p, MIXED_BYTES))
		die("munmap");
}

static void *mixed_worker(void *arg)
{
	unsigned long i;

	(void)arg;
	for (;;) {
		pthread_barrier_wait(&mixed_start);
		if (__atomic_load_n(&mixed_quit, __ATOMIC_ACQUIRE))
			return NULL;
		for (i = 0; i < mixed_n; i++)
			mixed_op();
		pthread_barrier_wait(&mixed_end);
	}
}

static void setup_mixed(void)
{
	pthread_t t;
	unsigned int i;

	/* Multi-threaded even on one CPU (the threads then take turns). */
	mixed_threads = opt_threads ? opt_threads : nr_threads() < 2 ? 2 : nr_threads();
	if (pthread_barrier_init(&mixed_start, NULL, mixed_threads + 1) ||
	    pthread_barrier_init(&mixed_end, NULL, mixed_threads + 1))
		die("pthread_barrier_init");
	for (i = 0; i < mixed_threads; i++) {
		errno = pthread_create(&t, NULL, mixed_worker, NULL);
		if (errno)
			die("pthread_create");
		pthread_detach(t);
	}
}

static void run_mixed(unsigned long n)
{
	mixed_n = n;
	pthread_barrier_wait(&mixed_start);
	pthread_barrier_wait(&mixed_end);
}

static double mixed_ops_per_iter(void)
{
	return mixed_threads;
}

static double mixed_events_per_op(void)
{
	return 4.0 + MIXED_BYTES / PAGE;
}

static unsigned int mixed_nr_threads(void)
{
	return mixed_threads;
}

/* ---- storms: every CPU as fast as it goes, for a fixed time -------- */

struct storm_thread {
	pthread_t t;
	unsigned int cpu;
	unsigned long ops;
	int fd;			/* mark: its own /dev/memmon */
};

static volatile bool storm_stop;

static void pin(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* Best effort: fewer CPUs than threads is still a storm. */
	sched_setaffinity(0, sizeof(set), &set);
}

static void *fault_storm(void *arg)
{
	struct storm_thread *st = arg;
	unsigned long len = (opt_mib ? opt_mib : 4) << 20, off, ops = 0;
	volatile char *p;

	pin(st->cpu);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	/* As in run_fault(): no THP, no EINVAL. */
	if (madvise((void *)p, len, MADV_NOHUGEPAGE) && errno != EINVAL)
		die("madvise");
	while (!storm_stop) {
		for (off = 0; off < len; off += PAGE)
			p[off] = 1;
		ops += len / PAGE;
		if (madvise((void *)p, len, MADV_DONTNEED))
			die("madvise");
	}
	munmap((void *)p, len);
	st->ops = ops;
	return NULL;
}

static void *mark_storm(void *arg)
{
	struct storm_thread *st = arg;
	__u64 payload = 0;
	struct memmon_mark m = {
		.size = sizeof(m),
		.flags = MEMMON_MARK_WATCHERS,
		.data = (__u64)(uintptr_t)&payload,
		.len = sizeof(payload),
	};
	unsigned long ops = 0;

	pin(st->cpu);
	while (!storm_stop) {
		payload = ops;
		if (ioctl(st->fd, MEMMON_IOC_MARK, &m))
			die("MEMMON_IOC_MARK");
		ops++;
	}
	st->ops = ops;
	return NULL;
}

static int run_storm(bool mark)
{
	struct storm_thread st[MAX_THREADS];
	unsigned int n = nr_threads(), ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	unsigned long ops = 0;
	uint64_t t0, t1;

	if (ncpu < 1)
		ncpu = 1;
	for (i = 0; i < n; i++) {
		st[i].cpu = i % ncpu;
		st[i].fd = -1;
		if (mark) {
			st[i].fd = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
			if (st[i].fd < 0)
				die(MEMMON_DEVICE_PATH);
		}
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		errno = pthread_create(&st[i].t, NULL,
				       mark ? mark_storm : fault_storm, &st[i]);
		if (errno)
			die("pthread_create");
	}
	usleep((useconds_t)(opt_seconds * 1e6));
	storm_stop = true;
	for (i = 0; i < n; i++) {
		pthread_join(st[i].t, NULL);
		ops += st[i].ops;
		if (st[i].fd >= 0)
			close(st[i].fd);
	}
	t1 = now_ns();
	printf("RESULT workload=%s ns_per_op=%.2f median_ns_per_op=%.2f iters=%lu runs=1 threads=%u ops_total=%lu events_per_op=1 seconds=%.6f ops_per_s=%.0f\n",
	       mark ? "mark" : "storm", (double)(t1 - t0) / ops,
	       (double)(t1 - t0) / ops, ops, n, ops, (t1 - t0) / 1e9,
	       ops / ((t1 - t0) / 1e9));
	return 0;
}

/* -------------------------------------------------------------------- */

static const struct workload workloads[] = {
	{ "mmap", NULL, run_mmap, 64, one, two, single },
	{ "fault", NULL, run_fault, 1, fault_ops_per_iter,
	  fault_events_per_op, single },
	{ "brk", setup_brk, run_brk, 64, one, two, single },
	{ "mixed", setup_mixed, run_mixed, 4, mixed_ops_per_iter,
	  mixed_events_per_op, mixed_nr_threads },
};

/* One run of n iterations; returns its ns. */
static uint64_t timed(const struct workload *w, unsigned long n)
{
	uint64_t t0 = now_ns();

	w->run(n);
	ops_total += (unsigned long)(n * w->ops_per_iter());
	return now_ns() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int bench(const struct workload *w)
{
	double per_op[MAX_RUNS], min_ns = opt_seconds * 1e9;
	unsigned long n = opt_iters;
	unsigned int k;

	if (w->setup)
		w->setup();
	if (!n) {
		/* Warm-up (page tables, caches, the tracer's own set-up),
		 * then double until one run lasts opt_seconds.
		 */
		n = w->start_iters;
		timed(w, n);
		while (timed(w, n) < min_ns && n < (1UL << 40))
			n *= 2;
	}
	for (k = 0; k < opt_runs; k++)
		per_op[k] = (double)timed(w, n) / (n * w->ops_per_iter());
	qsort(per_op, opt_runs, sizeof(per_op[0]), cmp_double);
	printf("RESULT workload=%s ns_per_op=%.2f median_ns_per_op=%.2f iters=%lu runs=%u threads=%u ops_total=%lu events_per_op=%.6f\n",
	       w->name, per_op[0], per_op[opt_runs / 2], n, opt_runs,
	       w->threads(), ops_total, w->events_per_op());
	if (fflush(stdout) || ferror(stdout))
		die("stdout");
	if (w->run == run_mixed) {
		__atomic_store_n(&mixed_quit, true, __ATOMIC_RELEASE);
		pthread_barrier_wait(&mixed_start);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *name;
	unsigned int i;
	int c;

	if (argc < 2)
		usage();
	name = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "n:k:t:j:s:")) != -1) {
		switch (c) {
		case 'n':
			opt_iters = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			opt_runs = strtoul(optarg, NULL, 0);
			if (opt_runs < 1 || opt_runs > MAX_RUNS)
				usage();
			break;
		case 't':
			opt_seconds = strtod(optarg, NULL);
			if (!(opt_seconds > 0))
				usage();
			break;
		case 'j':
			opt_threads = strtoul(optarg, NULL, 0);
			if (opt_threads < 1 || opt_threads > MAX_THREADS)
				usage();
			break;
		case 's':
			opt_mib = strtoul(optarg, NULL, 0);
			if (opt_mib < 1)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!strcmp(name, "storm"))
		return run_storm(false);
	if (!strcmp(name, "mark"))
		return run_storm(true);
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(name, workloads[i].name))
			return bench(&workloads[i]);
	usage();
	return 2;
}
