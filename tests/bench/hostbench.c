// SPDX-License-Identifier: GPL-2.0
/*
 * hostbench - the host-side benchmarks of libmemmon (no kernel involved, so
 * they run on the host in real hardware time):
 *
 *   hostbench gen FILE MIB [-c CPUS] [-p PROCS] [-s SEED] [-z LEVEL]
 *                 [-l uniform|real]
 *       Write a synthetic trace file of about MIB MiB through libmemmon's
 *       trace writer, the way `memmon record` writes one: per-CPU chunks of
 *       at most 256 KiB of raw ring records. The mix is modelled on a busy
 *       multi-process machine (see gen_event()): ~70 % page faults over the
 *       processes' live mappings, ~27 % memory syscalls with consistent
 *       mmap/munmap/brk/mremap state, RSS samples, marks, PATH records
 *       before the first file mapping of each file, fork/exec at the start
 *       and exit at the end. -l says where the events fall: uniform (the
 *       default) picks a random process, CPU and region for each, the
 *       worst locality a trace can have; real follows the figures of
 *       `hostbench locality` on real programs' traces (REAL_*). Prints
 *       "GEN events=N bytes=B seconds=S".
 *
 *   hostbench locality FILE...
 *       How a trace's events cluster, the figures -l real follows: the
 *       share of faults, of records whose CPU's previous record was of the
 *       same process, of faults on the page after the process's previous
 *       fault, within 16 pages of it, or further, and of munmaps of the
 *       process's latest mmap. Prints "LOCALITY file=F ...".
 *
 *   hostbench drain [-c CPUS] [-r RING_BYTES] [-t SECONDS] [-n RECORDS] [-m MODE]
 *       The userspace drain rate: per-CPU rings laid out exactly like the
 *       driver's mapping (double-mapped data pages, a memfd), filled with
 *       fault records, then emptied through libmemmon by
 *         merged   memmon_session__consume(), k-way merge in time order
 *         per_cpu  memmon_session__consume() with MEMMON_CONSUME_PER_CPU
 *         peek     memmon_session__peek_cpu()/release_cpu() (what memmon
 *                  record does: whole runs of records, no callback)
 *       Filling is not timed; only the consumer is. With -n, exactly that
 *       many records go through each mode (for callgrind); -m runs one
 *       mode only. Prints
 *       "DRAIN mode=M events=N cpu_seconds=S wall_seconds=W events_per_s=R"
 *       (the rate on the consumer thread's CPU time).
 *
 *   hostbench decode [-n RECORDS] [-j]
 *       The text decoder: memmon_rec__format() of a realistic record mix,
 *       in memory (for callgrind); with -j the JSON one,
 *       memmon_rec__format_json() (what memmon_rec__fprint_json() runs,
 *       without the stream). Prints
 *       "DECODE format=text|json events=N cpu_seconds=S wall_seconds=W
 *       events_per_s=R".
 *
 * Each measured loop is its own function (bench_consume, bench_peek,
 * bench_format, bench_json) so that `valgrind --tool=callgrind --toggle-collect=FN`
 * counts its instructions and nothing else.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <memmon/memmon.h>
#include <memmon/decode.h>
#include <memmon/trace.h>
#include "internal.h"

#define PAGE		4096ULL
#define CHUNK_BYTES	(256U << 10)	/* memmon record's CHUNK_FLUSH */
#define MAX_CPUS	64
#define MAX_MAPS	192		/* live mappings per process */
#define MAX_THREADS	4

/*
 * gen -l real: the locality of real traces, from `hostbench locality` on
 * tests/bench/calib's recordings (gcc, two parallel gcc, python3, perl, a
 * sort pipeline) in the VM; the figures are in docs/benchmarks.md. Percent,
 * or one switch in REAL_SWITCH records. What the programs showed, and what
 * a 1 GiB trace of gen -l real shows:
 */
#define REAL_SWITCH		250	/* same task as the CPU's previous record:
					 * 0.92-1.00, the parallel build 0.995;
					 * gen 0.996 */
#define REAL_FAULT_NEXT		55	/* on the page after the last fault:
					 * 0.34-0.92, gcc 0.54; gen 0.51 */
#define REAL_FAULT_NEAR		17	/* within 16 pages of it: 0.00-0.26,
					 * gcc 0.17; gen 0.13 */
#define REAL_MUNMAP_LATEST	45	/* munmap of the latest mmap: 0.00-0.88,
					 * gcc 0.40, the build 0.19; gen 0.30 */

static void die(const char *what, int err)
{
	fprintf(stderr, "hostbench: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The measured loops are single-threaded: their thread's CPU time is the
 * figure (the hosts we share run other jobs; wall time would measure the
 * scheduler). Wall time is printed next to it.
 */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64*: fast, and the same file for the same seed. */
static __u64 rng_state = 88172645463325252ULL;

static __u64 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static __u64 below(__u64 n)
{
	return n ? rnd() % n : 0;
}

/* ---- synthetic records ------------------------------------------------ */

struct map {
	__u64 start, len;
	__u32 prot;
	bool file;
	__u64 dev, ino;
};

struct gproc {
	__u32 tgid;
	__u32 nthreads;
	__u64 brk_base, brk_cur;
	__u64 next_addr;
	struct map maps[MAX_MAPS];
	unsigned int nmaps;
	__u64 rss_anon, rss_file;
	__u64 ip;
	/* "real" locality: where this process's faults are running */
	__u64 run_start, run_end;	/* the region (0, 0: none) */
	__u64 run_next;			/* the page after the last fault */
	bool run_brk;			/* the region is the heap */
};

struct cpubuf {
	__u8 *buf;
	size_t len;
};

struct gen {
	struct memmon_trace_writer *w;
	unsigned int nr_cpus;
	struct cpubuf cpu[MAX_CPUS];
	struct gproc *procs;
	unsigned int nr_procs;
	__u64 time;
	__u64 events;
	__u64 files_seen;	/* PATH records emitted: files 0..files_seen-1 */
	int err;
	bool real;		/* -l real: the locality of real traces */
	struct gproc *on_cpu[MAX_CPUS];	/* -l real: each CPU's current task */
};

static void flush_cpu(struct gen *g, unsigned int cpu)
{
	struct cpubuf *b = &g->cpu[cpu];
	int err;

	if (!b->len)
		return;
	err = memmon_trace_writer__add_chunk(g->w, cpu, b->buf, b->len);
	if (err < 0)
		die("memmon_trace_writer__add_chunk", -err);
	b->len = 0;
}

/* Room for a record of size bytes in cpu's chunk; fills in the header. */
static void *put(struct gen *g, unsigned int cpu, __u16 type, __u32 size,
		 const struct gproc *p)
{
	struct cpubuf *b = &g->cpu[cpu];
	struct memmon_rec_header *h;

	size = (size + MEMMON_REC_ALIGN - 1) & ~(MEMMON_REC_ALIGN - 1);
	if (b->len + size > CHUNK_BYTES)
		flush_cpu(g, cpu);
	h = (void *)(b->buf + b->len);
	memset(h, 0, size);
	b->len += size;
	g->time += 40 + below(400);
	h->size = size;
	h->type = type;
	h->cpu = cpu;
	h->time_ns = g->time;
	h->tgid = p ? p->tgid : 0;
	h->tid = p ? p->tgid + (p->nthreads > 1 ? below(p->nthreads) : 0) : 0;
	if (type != MEMMON_REC_LOST && type != MEMMON_REC_PATH)
		g->events++;
	return h;
}

static const char *const exes[] = {
	"/usr/bin/python3.11", "/usr/sbin/mysqld", "/usr/lib/jvm/java-17/bin/java",
	"/usr/bin/node", "/usr/sbin/nginx", "/usr/bin/postgres",
};

static const char *const libs[] = {
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libm.so.6",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
	"/usr/lib/x86_64-linux-gnu/libssl.so.3",
	"/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
	"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
	"/var/lib/mysql/ibdata1",
	"/usr/share/locale/locale-archive",
};

#define NR_FILES	(sizeof(libs) / sizeof(libs[0]))

static void gen_path(struct gen *g, unsigned int cpu, unsigned int file)
{
	const char *path = libs[file];
	__u32 len = strlen(path);
	struct memmon_rec_path *r = put(g, cpu, MEMMON_REC_PATH,
					sizeof(*r) + len + 1, NULL);

	r->dev = 0x801;
	r->ino = 1000 + file;
	r->path_len = len;
	memcpy(r->path, path, len);
}

static void gen_syscall(struct gen *g, unsigned int cpu, struct gproc *p,
			__u32 sys, const __u64 args[6], __s64 ret,
			__u32 flags, __u64 aux0, __u64 aux1)
{
	struct memmon_rec_syscall *r = put(g, cpu, MEMMON_REC_SYSCALL,
					   sizeof(*r), p);

	r->sys = sys;
	r->flags = flags;
	memcpy(r->args, args, sizeof(r->args));
	r->ret = ret;
	r->duration_ns = 300 + below(5000);
	r->aux[0] = aux0;
	r->aux[1] = aux1;
}

static void gen_mmap(struct gen *g, unsigned int cpu, struct gproc *p)
{
	/* log-uniform lengths, 4 KiB .. 8 MiB */
	__u64 len = PAGE << below(12);
	bool file = below(100) < 15;
	struct map *m;
	unsigned int f = below(NR_FILES);
	__u64 args[6] = { 0, len, 3, file ? 0x2 : 0x22, file ? 3 : (__u64)-1, 0 };

	if (p->nmaps == MAX_MAPS)
		return;
	if (file && f >= g->files_seen) {
		while (g->files_seen <= f)
			gen_path(g, cpu, g->files_seen++);
	}
	m = &p->maps[p->nmaps++];
	p->next_addr -= len + PAGE;
	m->start = p->next_addr;
	m->len = len;
	m->prot = 3;
	m->file = file;
	m->dev = file ? 0x801 : 0;
	m->ino = file ? 1000 + f : 0;
	gen_syscall(g, cpu, p, MEMMON_SYS_MMAP, args, m->start,
		    file ? MEMMON_SYSF_FILE : 0, m->dev, m->ino);
}

/* maps[i] goes; the others keep their order. */
static void forget_map(struct gproc *p, unsigned int i)
{
	if (p->run_start == p->maps[i].start && !p->run_brk)
		p->run_start = p->run_end = 0;
	memmove(&p->maps[i], &p->maps[i + 1],
		(p->nmaps - i - 1) * sizeof(p->maps[0]));
	p->nmaps--;
}

static void gen_munmap(struct gen *g, unsigned int cpu, struct gproc *p)
{
	unsigned int i;
	__u64 args[6] = { 0 };

	if (!p->nmaps) {
		gen_mmap(g, cpu, p);
		return;
	}
	/* maps[] is in the order of mapping: the last is the latest. */
	i = g->real && below(100) < REAL_MUNMAP_LATEST ? p->nmaps - 1 :
	    below(p->nmaps);
	args[0] = p->maps[i].start;
	args[1] = p->maps[i].len;
	forget_map(p, i);
	gen_syscall(g, cpu, p, MEMMON_SYS_MUNMAP, args, 0, 0, 0, 0);
}

static void gen_brk(struct gen *g, unsigned int cpu, struct gproc *p)
{
	__u64 before = p->brk_cur, step = PAGE << below(6);
	__u64 args[6] = { 0 };

	if (below(2) && p->brk_cur - p->brk_base >= step)
		p->brk_cur -= step;
	else
		p->brk_cur += step;
	args[0] = p->brk_cur;
	gen_syscall(g, cpu, p, MEMMON_SYS_BRK, args, p->brk_cur, 0, before,
		    p->brk_cur);
}

static void gen_on_map(struct gen *g, unsigned int cpu, struct gproc *p,
		       __u32 sys, __u64 a2)
{
	struct map *m;
	__u64 args[6] = { 0 };

	if (!p->nmaps) {
		gen_mmap(g, cpu, p);
		return;
	}
	m = &p->maps[below(p->nmaps)];
	args[0] = m->start;
	args[1] = m->len;
	args[2] = a2;
	if (sys == MEMMON_SYS_MPROTECT)
		m->prot = a2;
	gen_syscall(g, cpu, p, sys, args, 0, 0, 0, 0);
}

static void gen_mremap(struct gen *g, unsigned int cpu, struct gproc *p)
{
	struct map *m, moved;
	__u64 args[6] = { 0 };
	unsigned int i;

	if (!p->nmaps) {
		gen_mmap(g, cpu, p);
		return;
	}
	i = below(p->nmaps);
	moved = p->maps[i];
	forget_map(p, i);
	m = &p->maps[p->nmaps++];	/* now the latest */
	*m = moved;
	args[0] = m->start;
	args[1] = m->len;
	args[2] = m->len * 2;
	args[3] = 1;	/* MREMAP_MAYMOVE */
	p->next_addr -= m->len * 2 + PAGE;
	m->start = p->next_addr;
	m->len *= 2;
	gen_syscall(g, cpu, p, MEMMON_SYS_MREMAP, args, m->start, 0, 0, 0);
}

/*
 * -l real: a fault that goes on where the process's last one was, as
 * they do in real traces (hostbench locality: build/calib in
 * docs/benchmarks.md), or false for one anywhere (the uniform pick).
 */
static bool real_fault(struct gproc *p, __u64 *addr, bool *file)
{
	__u64 x = below(100), end, pg;
	unsigned int i;

	if (!p->run_end || x >= REAL_FAULT_NEXT + REAL_FAULT_NEAR)
		return false;
	end = p->run_brk ? p->brk_cur + PAGE : p->run_end;
	if (x < REAL_FAULT_NEXT)
		pg = p->run_next;
	else				/* within 16 pages either side */
		pg = p->run_next - PAGE + (below(33) - 16) * PAGE;
	if (pg < p->run_start || pg >= end)
		return false;
	*addr = pg + below(PAGE);
	*file = false;
	if (!p->run_brk) {
		for (i = 0; i < p->nmaps; i++)
			if (p->maps[i].start == p->run_start)
				break;
		if (i == p->nmaps)
			return false;
		*file = p->maps[i].file;
	}
	return true;
}

static void gen_fault(struct gen *g, unsigned int cpu, struct gproc *p)
{
	struct memmon_rec_fault *r;
	struct map *m = NULL;
	__u64 addr;
	__u32 cls;
	bool file;

	if (g->real && real_fault(p, &addr, &file)) {
		cls = file ? MEMMON_FCLASS_FILE : MEMMON_FCLASS_ANON;
	} else if (p->nmaps && below(8)) {
		m = &p->maps[below(p->nmaps)];
		addr = m->start + below(m->len / PAGE) * PAGE + below(PAGE);
		cls = m->file ? MEMMON_FCLASS_FILE : MEMMON_FCLASS_ANON;
		if (!m->file && below(50) == 0)
			cls = MEMMON_FCLASS_SWAP;
		p->run_start = m->start;
		p->run_end = m->start + m->len;
		p->run_brk = false;
	} else {
		addr = p->brk_base + below(p->brk_cur - p->brk_base + PAGE);
		cls = MEMMON_FCLASS_ANON;
		p->run_start = p->brk_base;
		p->run_end = p->brk_cur + PAGE;
		p->run_brk = true;
	}
	p->run_next = (addr & ~(PAGE - 1)) + PAGE;
	if (below(40) == 0)
		cls = MEMMON_FCLASS_SHMEM;
	r = put(g, cpu, MEMMON_REC_FAULT, sizeof(*r), p);
	r->addr = addr;
	r->ip = p->ip + below(1 << 20);
	r->access = below(3) ? MEMMON_FAULT_WRITE : MEMMON_FAULT_READ;
	r->fclass = cls;
	r->result = below(500) ? MEMMON_FRES_HANDLED : MEMMON_FRES_RETRY;
	r->flags = MEMMON_FAULTF_PFN | MEMMON_FAULTF_NEWPAGE;
	if (cls == MEMMON_FCLASS_SWAP || (cls == MEMMON_FCLASS_FILE && below(20) == 0))
		r->flags |= MEMMON_FAULTF_MAJOR;
	r->duration_ns = 200 + below(r->flags & MEMMON_FAULTF_MAJOR ? 200000 : 3000);
	r->pfn = 0x100000 + below(1 << 22);
	if (cls == MEMMON_FCLASS_FILE)
		p->rss_file += PAGE;
	else
		p->rss_anon += PAGE;
}

static void gen_rss(struct gen *g, unsigned int cpu, struct gproc *p)
{
	struct memmon_rec_rss *r = put(g, cpu, MEMMON_REC_RSS, sizeof(*r), p);

	r->anon = p->rss_anon;
	r->file = p->rss_file;
	r->shmem = 0;
	r->swap = 0;
}

static void gen_mark(struct gen *g, unsigned int cpu, struct gproc *p)
{
	static const char msg[] = "request done";
	struct memmon_rec_mark *r = put(g, cpu, MEMMON_REC_MARK,
					sizeof(*r) + sizeof(msg), p);

	r->len = sizeof(msg);
	memcpy(r->data, msg, sizeof(msg));
}

/*
 * One event of the steady state; the mix (per mille) is that of a busy
 * multi-process server: mostly faults, mmap/munmap the most frequent calls.
 */
static void gen_event(struct gen *g)
{
	unsigned int cpu = below(g->nr_cpus);
	struct gproc *p = &g->procs[below(g->nr_procs)];
	unsigned int x = below(1000);

	/*
	 * -l real: a CPU runs one task for a while (the scheduler's slice),
	 * as real traces show, instead of a random one per event.
	 */
	if (g->real) {
		if (!g->on_cpu[cpu] || below(REAL_SWITCH) == 0)
			g->on_cpu[cpu] = p;
		p = g->on_cpu[cpu];
	}

	if (x < 700)
		gen_fault(g, cpu, p);
	else if (x < 780)
		gen_mmap(g, cpu, p);
	else if (x < 850)
		gen_munmap(g, cpu, p);
	else if (x < 890)
		gen_brk(g, cpu, p);
	else if (x < 930)
		gen_on_map(g, cpu, p, MEMMON_SYS_MADVISE, 4 /* DONTNEED */);
	else if (x < 960)
		gen_on_map(g, cpu, p, MEMMON_SYS_MPROTECT, below(2) ? 1 : 3);
	else if (x < 970)
		gen_mremap(g, cpu, p);
	else if (x < 975)
		gen_on_map(g, cpu, p, MEMMON_SYS_MLOCK, 0);
	else if (x < 995)
		gen_rss(g, cpu, p);
	else
		gen_mark(g, cpu, p);
}

static void gen_lifecycle(struct gen *g, struct gproc *p, bool start)
{
	unsigned int cpu = below(g->nr_cpus);

	if (start) {
		const char *exe = exes[p->tgid % (sizeof(exes) / sizeof(exes[0]))];
		__u32 len = strlen(exe);
		struct memmon_rec_fork *f = put(g, cpu, MEMMON_REC_FORK,
						sizeof(*f), p);
		struct memmon_rec_exec *e;

		f->hdr.tgid = 1;
		f->hdr.tid = 1;
		f->child_tgid = p->tgid;
		f->child_tid = p->tgid;
		e = put(g, cpu, MEMMON_REC_EXEC, sizeof(*e) + len + 1, p);
		e->path_len = len;
		memcpy(e->path, exe, len);
	} else {
		struct memmon_rec_exit *x = put(g, cpu, MEMMON_REC_EXIT,
						sizeof(*x), p);

		x->flags = MEMMON_EXITF_GROUP;
		x->peak_rss = p->rss_anon + p->rss_file;
		x->peak_vm = x->peak_rss * 2;
	}
}

static int cmd_gen(int argc, char **argv)
{
	unsigned int nr_cpus = 8, nr_procs = 48, i;
	int level = 0, c, err;
	double t0, t1;
	__u64 target, bytes;
	struct gen g = { 0 };
	char meta[512];

	while ((c = getopt(argc, argv, "c:p:s:z:l:")) != -1) {
		switch (c) {
		case 'l':
			if (strcmp(optarg, "uniform") && strcmp(optarg, "real")) {
				fprintf(stderr, "hostbench gen: -l uniform|real\n");
				return 2;
			}
			g.real = !strcmp(optarg, "real");
			break;
		case 'c':
			nr_cpus = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			nr_procs = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) | 1;
			break;
		case 'z':
			level = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2 || !nr_cpus || nr_cpus > MAX_CPUS || !nr_procs) {
		fprintf(stderr, "usage: hostbench gen FILE MIB [-c CPUS] [-p PROCS] [-s SEED] [-z LEVEL] [-l uniform|real]\n");
		return 2;
	}
	target = strtoull(argv[optind + 1], NULL, 0) << 20;

	LIBMEMMON_OPTS(memmon_trace_writer_opts, wo, .nr_cpus = nr_cpus,
		       .compress_level = level);
	g.w = memmon_trace_writer__open(argv[optind], &wo);
	if (!g.w)
		die(argv[optind], errno);
	g.nr_cpus = nr_cpus;
	g.nr_procs = nr_procs;
	for (i = 0; i < nr_cpus; i++) {
		g.cpu[i].buf = malloc(CHUNK_BYTES);
		if (!g.cpu[i].buf)
			die("malloc", ENOMEM);
	}
	g.procs = calloc(nr_procs, sizeof(*g.procs));
	if (!g.procs)
		die("calloc", ENOMEM);
	g.time = 1000000000ULL;
	snprintf(meta, sizeof(meta),
		 "{\"memmon_argv\":\"hostbench gen (synthetic)\",\"nr_cpus\":%u,\"clock\":1,\"ring_size\":4194304,\"start_ns\":%llu,\"hostname\":\"synthetic\"}",
		 nr_cpus, (unsigned long long)g.time);
	err = memmon_trace_writer__add_meta(g.w, meta);
	if (err < 0)
		die("memmon_trace_writer__add_meta", -err);

	t0 = now_s();
	for (i = 0; i < nr_procs; i++) {
		struct gproc *p = &g.procs[i];

		p->tgid = 2000 + i * 7;
		p->nthreads = 1 + below(MAX_THREADS);
		p->brk_base = p->brk_cur = 0x555555554000ULL + (i << 24);
		p->next_addr = 0x7f0000000000ULL - ((__u64)i << 36);
		p->ip = 0x555555554000ULL + (i << 24) + 0x1000;
		gen_lifecycle(&g, p, true);
	}
	/* Steady state until the file is big enough (chunks written so far
	 * plus what is buffered).
	 */
	for (;;) {
		for (i = 0; i < 4096; i++)
			gen_event(&g);
		bytes = memmon_trace_writer__bytes(g.w);
		if (bytes >= target)
			break;
	}
	for (i = 0; i < nr_procs; i++)
		gen_lifecycle(&g, &g.procs[i], false);
	for (i = 0; i < nr_cpus; i++)
		flush_cpu(&g, i);
	snprintf(meta, sizeof(meta), "{\"end_ns\":%llu,\"events\":%llu,\"interrupted\":false}",
		 (unsigned long long)g.time, (unsigned long long)g.events);
	err = memmon_trace_writer__add_meta(g.w, meta);
	if (err < 0)
		die("memmon_trace_writer__add_meta", -err);
	bytes = memmon_trace_writer__bytes(g.w);
	err = memmon_trace_writer__close(g.w);
	if (err < 0)
		die("memmon_trace_writer__close", -err);
	t1 = now_s();
	printf("GEN events=%llu bytes=%llu seconds=%.3f\n",
	       (unsigned long long)g.events, (unsigned long long)bytes, t1 - t0);
	return 0;
}

/* ---- a fake /dev/memmon mapping: the driver's layout, in memory -------- */

struct fake {
	struct memmon_info info;
	void *cons, *prod;
	int memfd;
	__u64 prod_pos[MAX_CPUS];
};

static struct memmon_ring_page *fake_page(struct fake *f, unsigned int c)
{
	return (void *)((char *)f->prod + f->info.page_size +
			c * f->info.ring_stride);
}

static __u8 *fake_data(struct fake *f, unsigned int c)
{
	return (__u8 *)fake_page(f, c) + f->info.ring_data_offset;
}

static void fake_init(struct fake *f, unsigned int nr_cpus, __u64 ring_size)
{
	struct memmon_mmap_header *h;
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned int c;

	memset(f, 0, sizeof(*f));
	f->info.size = sizeof(f->info);
	f->info.abi_major = MEMMON_ABI_MAJOR;
	f->info.abi_minor = MEMMON_ABI_MINOR;
	f->info.nr_cpus = nr_cpus;
	f->info.page_size = page;
	f->info.ring_size = ring_size;
	f->info.ring_data_offset = page;
	f->info.ring_stride = page + 2 * ring_size;
	f->info.consumer_size = (nr_cpus * MEMMON_CONSUMER_STRIDE + page - 1) /
				page * page;
	f->info.producer_offset = 1ULL << 30;
	f->info.producer_size = page + nr_cpus * f->info.ring_stride;
	f->cons = mmap(NULL, f->info.consumer_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->prod = mmap(NULL, f->info.producer_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->memfd = memfd_create("bench-memmon", MFD_CLOEXEC);
	if (f->cons == MAP_FAILED || f->prod == MAP_FAILED || f->memfd < 0 ||
	    ftruncate(f->memfd, nr_cpus * ring_size) < 0)
		die("fake mapping", errno);
	/* The data pages twice, back to back, as the driver maps them. */
	for (c = 0; c < nr_cpus; c++) {
		__u8 *d = fake_data(f, c);

		if (mmap(d, ring_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, f->memfd, c * ring_size) == MAP_FAILED ||
		    mmap(d + ring_size, ring_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, f->memfd, c * ring_size) == MAP_FAILED)
			die("fake double mapping", errno);
	}
	h = f->prod;
	h->magic = MEMMON_MMAP_MAGIC;
	h->abi_major = MEMMON_ABI_MAJOR;
	h->abi_minor = MEMMON_ABI_MINOR;
	h->header_size = sizeof(*h);
	h->nr_cpus = nr_cpus;
	h->ring_size = ring_size;
	h->ring_stride = f->info.ring_stride;
	h->ring_data_offset = f->info.ring_data_offset;
	h->clock = MEMMON_CLOCK_MONOTONIC;
	h->page_size = page;
}

/*
 * Fill every ring with fault records (the kernel's protocol in miniature:
 * [A] load-acquire consumer_pos, write, [B] store-release producer_pos),
 * time-interleaved across CPUs as a real fault storm would be. Returns the
 * records written.
 */
static __u64 fake_fill(struct fake *f, __u64 *time, __u64 max)
{
	unsigned int c, nr = f->info.nr_cpus;
	__u64 n = 0, ring = f->info.ring_size;
	bool room = true;

	while (room && n < max) {
		room = false;
		for (c = 0; c < nr && n < max; c++) {
			__u64 cons = __atomic_load_n((__u64 *)((char *)f->cons +
					c * MEMMON_CONSUMER_STRIDE), __ATOMIC_ACQUIRE);
			__u64 pos = f->prod_pos[c];
			struct memmon_rec_fault *r;

			if (pos + sizeof(*r) - cons > ring)
				continue;
			r = (void *)(fake_data(f, c) + (pos & (ring - 1)));
			memset(r, 0, sizeof(*r));
			r->hdr.size = sizeof(*r);
			r->hdr.type = MEMMON_REC_FAULT;
			r->hdr.cpu = c;
			r->hdr.time_ns = (*time)++;
			r->hdr.tgid = r->hdr.tid = 4242;
			r->addr = 0x7f0000000000ULL + (n << 12);
			r->access = MEMMON_FAULT_WRITE;
			r->fclass = MEMMON_FCLASS_ANON;
			f->prod_pos[c] = pos + sizeof(*r);
			n++;
			room = true;
		}
	}
	for (c = 0; c < nr; c++)
		__atomic_store_n(&fake_page(f, c)->producer_pos, f->prod_pos[c],
				 __ATOMIC_RELEASE);
	return n;
}

struct sink {
	__u64 n;
	__u64 sum;
};

static int count_rec(void *ctx, const struct memmon_rec_header *rec)
{
	struct sink *s = ctx;

	s->n++;
	s->sum += rec->time_ns;	/* touch the record, as any consumer does */
	return 0;
}

/* The measured loops (callgrind --toggle-collect=bench_*). */
__attribute__((noinline)) static __u64 bench_consume(struct memmon_session *s)
{
	__u64 n = 0;
	int r;

	while ((r = memmon_session__consume(s)) > 0)
		n += r;
	if (r < 0)
		die("memmon_session__consume", -r);
	return n;
}

__attribute__((noinline)) static __u64 bench_peek(struct memmon_session *s,
						  unsigned int nr_cpus)
{
	__u64 bytes = 0;
	unsigned int c;

	for (c = 0; c < nr_cpus; c++) {
		const void *data;
		ssize_t len;

		while ((len = memmon_session__peek_cpu(s, c, 1 << 20, &data)) > 0) {
			bytes += len;
			memmon_session__release_cpu(s, c, len);
		}
		if (len < 0)
			die("memmon_session__peek_cpu", (int)-len);
	}
	return bytes;
}

static int cmd_drain(int argc, char **argv)
{
	static const char *const modes[] = { "merged", "per_cpu", "peek" };
	unsigned int nr_cpus = 2, m, only = 3;
	__u64 ring = 4ULL << 20, exact = 0, time = 1;
	double secs = 1.0;
	int c;

	while ((c = getopt(argc, argv, "c:r:t:n:m:")) != -1) {
		switch (c) {
		case 'm':
			for (only = 0; only < 3; only++)
				if (!strcmp(optarg, modes[only]))
					break;
			if (only == 3)
				return 2;
			break;
		case 'c':
			nr_cpus = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			ring = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		case 'n':
			exact = strtoull(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (!nr_cpus || nr_cpus > MAX_CPUS || ring & (ring - 1) || ring < PAGE) {
		fprintf(stderr, "usage: hostbench drain [-c CPUS] [-r RING_BYTES (power of 2)] [-t SECONDS] [-n RECORDS] [-m MODE]\n");
		return 2;
	}
	for (m = 0; m < 3; m++) {
		if (only < 3 && m != only)
			continue;
		struct fake f;
		struct memmon_session *s;
		struct sink sink = { 0 };
		__u64 events = 0, want = exact ? exact : ~0ULL;
		double spent = 0, wall = 0;

		fake_init(&f, nr_cpus, ring);
		s = memmon__session_from_mapping(&f.info, f.cons, f.prod, -1);
		if (!s)
			die("memmon__session_from_mapping", errno);
		if (m < 2) {
			LIBMEMMON_OPTS(memmon_consume_opts, co,
				       .flags = m == 1 ? MEMMON_CONSUME_PER_CPU : 0);
			if (memmon_session__set_callback(s, count_rec, &sink, &co) < 0)
				die("memmon_session__set_callback", errno);
		}
		while (spent < secs && events < want) {
			__u64 n = fake_fill(&f, &time, want - events);
			double t0 = cpu_s(), w0 = now_s();

			if (m < 2) {
				if (bench_consume(s) != n)
					die("consumed count", EPROTO);
			} else {
				if (bench_peek(s, nr_cpus) != n * sizeof(struct memmon_rec_fault))
					die("peeked bytes", EPROTO);
			}
			spent += cpu_s() - t0;
			wall += now_s() - w0;
			events += n;
			if (exact && events >= exact)
				break;
		}
		printf("DRAIN mode=%s cpus=%u ring_bytes=%llu events=%llu cpu_seconds=%.6f wall_seconds=%.6f events_per_s=%.0f\n",
		       modes[m], nr_cpus, (unsigned long long)ring,
		       (unsigned long long)events, spent, wall, events / spent);
		memmon_session__close(s);
		munmap(f.cons, f.info.consumer_size);
		munmap(f.prod, f.info.producer_size);
		close(f.memfd);
	}
	return 0;
}

/* ---- the decoders ------------------------------------------------------ */

__attribute__((noinline)) static __u64 bench_format(const __u8 *buf, size_t len,
						    const struct memmon_format_opts *o)
{
	char line[512];
	__u64 n = 0, chars = 0;
	size_t off = 0;

	while (off < len) {
		const struct memmon_rec_header *h = (const void *)(buf + off);
		int r = memmon_rec__format(h, line, sizeof(line), o);

		if (r < 0)
			die("memmon_rec__format", -r);
		chars += r;
		n++;
		off += h->size;
	}
	return chars ? n : 0;
}

/* JSON lines: memmon_rec__format_json(), what memmon_rec__fprint_json() does. */
__attribute__((noinline)) static __u64 bench_json(const __u8 *buf, size_t len,
						  const struct memmon_format_opts *o)
{
	char line[1024];
	__u64 n = 0, chars = 0;
	size_t off = 0;

	while (off < len) {
		const struct memmon_rec_header *h = (const void *)(buf + off);
		int r = memmon_rec__format_json(h, line, sizeof(line), o);

		if (r < 0)
			die("memmon_rec__format_json", -r);
		chars += r;
		n++;
		off += h->size;
	}
	return chars ? n : 0;
}

static int cmd_decode(int argc, char **argv)
{
	__u64 want = 1000000, n = 0;
	struct gen g = { 0 };
	struct gproc p = { 0 };
	__u8 *all;
	size_t len = 0, cap = 64 << 20;
	double t0, t1, w0, w1;
	bool json = false;
	int c;

	while ((c = getopt(argc, argv, "n:j")) != -1) {
		switch (c) {
		case 'n':
			want = strtoull(optarg, NULL, 0);
			break;
		case 'j':
			json = true;
			break;
		default:
			return 2;
		}
	}
	/* The generator's mix for one process, into one flat buffer. */
	all = malloc(cap);
	if (!all)
		die("malloc", ENOMEM);
	g.nr_cpus = 1;
	g.nr_procs = 1;
	g.procs = &p;
	g.cpu[0].buf = malloc(CHUNK_BYTES);
	if (!g.cpu[0].buf)
		die("malloc", ENOMEM);
	p.tgid = 4242;
	p.nthreads = 1;
	p.brk_base = p.brk_cur = 0x555555554000ULL;
	p.next_addr = 0x7f0000000000ULL;
	p.ip = 0x555555555000ULL;
	g.files_seen = NR_FILES;	/* no PATH records: formatted alone */
	/* Records are moved out before the chunk buffer fills: put() never
	 * flushes (there is no writer).
	 */
	while (n < want) {
		__u64 ev = g.events;

		gen_event(&g);
		n += g.events - ev;
		if (g.cpu[0].len > CHUNK_BYTES - 1024) {
			memcpy(all + len, g.cpu[0].buf, g.cpu[0].len);
			len += g.cpu[0].len;
			g.cpu[0].len = 0;
			if (len + CHUNK_BYTES > cap) {
				cap *= 2;
				all = realloc(all, cap);
				if (!all)
					die("realloc", ENOMEM);
			}
		}
	}
	memcpy(all + len, g.cpu[0].buf, g.cpu[0].len);
	len += g.cpu[0].len;

	LIBMEMMON_OPTS(memmon_format_opts, fo, .flags = MEMMON_FMT_MONOTONIC);
	t0 = cpu_s();
	w0 = now_s();
	n = json ? bench_json(all, len, &fo) : bench_format(all, len, &fo);
	t1 = cpu_s();
	w1 = now_s();
	printf("DECODE format=%s events=%llu cpu_seconds=%.6f wall_seconds=%.6f events_per_s=%.0f\n",
	       json ? "json" : "text", (unsigned long long)n, t1 - t0, w1 - w0,
	       n / (t1 - t0));
	free(all);
	return 0;
}

/* ---- the locality of a real trace (what gen's "real" profile follows) -- */

#define LOC_PROCS	4096

struct loc_proc {
	__u32 tgid;
	bool seen;
	__u64 last_fault;	/* page */
	__u64 last_map;		/* the latest mmap's address */
};

struct loc {
	__u32 cpu_tgid[MAX_CPUS];
	__u64 recs, same_cpu_tgid, cpu_recs;
	__u64 faults, f_next, f_near, f_far, f_first;
	__u64 syscalls, munmaps, munmap_latest;
	struct loc_proc procs[LOC_PROCS];
};

static struct loc_proc *loc_proc(struct loc *l, __u32 tgid)
{
	struct loc_proc *p = &l->procs[tgid % LOC_PROCS];

	if (!p->seen || p->tgid != tgid) {
		memset(p, 0, sizeof(*p));
		p->tgid = tgid;
		p->seen = true;
	}
	return p;
}

static int loc_rec(void *ctx, const struct memmon_rec_header *h)
{
	struct loc *l = ctx;
	/* checked views (type and size): the trace file is input like any other */
	const struct memmon_rec_fault *f = memmon_rec__fault(h);
	const struct memmon_rec_syscall *c = memmon_rec__syscall(h);
	struct loc_proc *p;

	if (!h->tgid || h->cpu >= MAX_CPUS)
		return 0;
	l->recs++;
	if (l->cpu_tgid[h->cpu]) {
		l->cpu_recs++;
		l->same_cpu_tgid += l->cpu_tgid[h->cpu] == h->tgid;
	}
	l->cpu_tgid[h->cpu] = h->tgid;
	p = loc_proc(l, h->tgid);
	if (f) {
		__u64 pg = f->addr / PAGE;

		l->faults++;
		if (!p->last_fault)
			l->f_first++;
		else if (pg == p->last_fault + 1)
			l->f_next++;
		else if (pg - p->last_fault + 16 <= 32)
			l->f_near++;
		else
			l->f_far++;
		p->last_fault = pg;
	} else if (c) {
		l->syscalls++;
		if (c->sys == MEMMON_SYS_MMAP && c->ret > 0)
			p->last_map = c->ret;
		if (c->sys == MEMMON_SYS_MUNMAP) {
			l->munmaps++;
			l->munmap_latest += c->args[0] == p->last_map;
		}
	}
	return 0;
}

/* hostbench locality FILE...: how real traces cluster (see gen_event()). */
static int cmd_locality(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		struct memmon_trace_reader *r = memmon_trace_reader__open(argv[i], NULL);
		struct loc *l = calloc(1, sizeof(*l));
		__u64 after;
		long n;

		if (!r || !l)
			die(argv[i], r ? ENOMEM : errno);
		n = memmon_trace_reader__for_each(r, loc_rec, l);
		if (n < 0)
			die(memmon_trace_reader__errmsg(r), (int)-n);
		/* a fault after the process's first: the ones with a distance */
		after = l->faults > l->f_first ? l->faults - l->f_first : 1;
		printf("LOCALITY file=%s records=%llu faults=%.3f same_task_on_cpu=%.3f "
		       "fault_next_page=%.3f fault_within_16_pages=%.3f fault_far=%.3f "
		       "munmap_of_latest_mmap=%.3f\n", argv[i],
		       (unsigned long long)l->recs,
		       (double)l->faults / (l->recs ? l->recs : 1),
		       (double)l->same_cpu_tgid / (l->cpu_recs ? l->cpu_recs : 1),
		       (double)l->f_next / after, (double)l->f_near / after,
		       (double)l->f_far / after,
		       (double)l->munmap_latest / (l->munmaps ? l->munmaps : 1));
		memmon_trace_reader__close(r);
		free(l);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "gen"))
		return cmd_gen(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "drain"))
		return cmd_drain(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "locality"))
		return cmd_locality(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "decode"))
		return cmd_decode(argc - 1, argv + 1);
	fprintf(stderr, "usage: hostbench gen|drain|decode ...\n");
	return 2;
}
