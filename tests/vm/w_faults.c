// SPDX-License-Identifier: GPL-2.0
/*
 * MEMMON_REC_FAULT: each fault class on purpose, record by record, and the
 * fidelity rule: for a traced process, the HANDLED records split by
 * MEMMON_FAULTF_MAJOR equal the kernel's own count (getrusage ru_minflt,
 * ru_majflt) over the same interval, exactly.
 *
 *   w_faults [--dir DIR] [--swap]
 *     --dir DIR  a directory on a block-device filesystem (ext4 on a loop
 *                device): file-backed major/minor faults and RETRY
 *     --swap     swap is on: swap-in faults (MADV_PAGEOUT, touch again)
 *
 * Run by t_instr_faults.sh, which sets both up. Every workload runs in a
 * child that blocks on a pipe; the parent reads the child's counters from
 * /proc/PID/stat while it sleeps there (nothing faults), watches it,
 * releases it and collects its rusage with wait4(): the interval is exactly
 * "from WATCH_ADD to exit", on both sides.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "vmtest.h"
#include "instr.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define P 4096UL

#define ANON_PAGES 512	/* pages in each of w_anon's regions */

/* What a workload tells the parent: the ranges it touched, by purpose. */
struct shared {
	uint64_t base[16];
	uint64_t len[16];
	uint64_t ip_lo, ip_hi;
	/* w_anon: /proc/self/pagemap of its first two regions, at the end */
	uint64_t pagemap[2][ANON_PAGES];
	int pagemap_ok;
};

static struct shared *sh;
static const char *opt_dir;
static bool opt_swap;

/* ------------------------------------------------------------------ */

struct result {
	long min0, maj0;		/* /proc/PID/stat before */
	struct rusage ru;		/* wait4() after */
	uint64_t rec_min, rec_maj;	/* HANDLED records */
	uint64_t retry, errors, total;
};

/* minflt and majflt of a process (fields 10 and 12 of /proc/PID/stat). */
static int proc_faults(pid_t pid, long *min, long *maj, char *state)
{
	char path[64], buf[1024], *p;
	int fd, n, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* p[2] is field 3 (state); count fields from there. */
	*state = p[2];
	p += 2;
	for (field = 3; field < 12 && p; field++) {
		if (field == 10)
			*min = strtol(p, NULL, 10);
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return -1;
	*maj = strtol(p, NULL, 10);
	return 0;
}

typedef void (*workload_t)(void);

/*
 * Run @fn in a watched child; collect its records into @s (a fresh
 * session) and its counts into @r.
 */
static int run(workload_t fn, struct in_sess *s, struct result *r)
{
	int go[2], ready[2], status;
	char c, state = 0;
	pid_t pid;
	size_t i;

	memset(r, 0, sizeof(*r));
	memset(sh, 0, sizeof(*sh));
	if (in_open(s, 16 << 20) || pipe(go) || pipe(ready))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(go[1]);
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(100);
		fn();
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return -1;
	/* Asleep in read(go): it takes no fault until released. */
	do {
		usleep(1000);
		if (proc_faults(pid, &r->min0, &r->maj0, &state))
			return -1;
	} while (state != 'S');
	if (in_watch(s, pid, 0) || in_enable(s))
		return -1;
	if (write(go[1], "g", 1) != 1)
		return -1;
	if (wait4(pid, &status, 0, &r->ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("# workload status %#x\n", status);
		return -1;
	}
	in_disable(s);
	in_drain(s);
	close(go[1]);
	close(ready[0]);

	for (i = 0; i < s->n; i++) {
		const struct memmon_rec_fault *f = (const void *)s->recs[i];

		if (f->hdr.type != MEMMON_REC_FAULT || f->hdr.tgid != (uint32_t)pid)
			continue;
		r->total++;
		if (f->result == MEMMON_FRES_RETRY)
			r->retry++;
		else if (f->result != MEMMON_FRES_HANDLED)
			r->errors++;
		else if (f->flags & MEMMON_FAULTF_MAJOR)
			r->rec_maj++;
		else
			r->rec_min++;
	}
	return 0;
}

/* The fidelity assertion, with the numbers on the line. */
static void check_counts(const char *what, struct in_sess *s, struct result *r)
{
	long min = r->ru.ru_minflt - r->min0, maj = r->ru.ru_majflt - r->maj0;

	VT_OK(s->lost == 0 && in_stats_lost(s) == 0, "%s: no record lost", what);
	/* Expectation: HANDLED records == the kernel's count, minor and major. */
	VT_OK((long)r->rec_min == min && (long)r->rec_maj == maj,
	      "%s: records minor %llu major %llu == getrusage minor %ld major %ld (retry %llu, errors %llu)",
	      what, (unsigned long long)r->rec_min, (unsigned long long)r->rec_maj,
	      min, maj, (unsigned long long)r->retry,
	      (unsigned long long)r->errors);
}

/* Records of the child in [base, base + len), in time order. */
static size_t faults_in(struct in_sess *s, uint64_t base, uint64_t len,
			const struct memmon_rec_fault **out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++) {
		const struct memmon_rec_fault *f = (const void *)s->recs[i];

		if (f->hdr.type != MEMMON_REC_FAULT || f->addr < base ||
		    f->addr >= base + len)
			continue;
		if (n < max)
			out[n] = f;
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------
 * Workloads. They run in the child, between release and _exit().
 */

/*
 * The pagemap entries (PFN in bits 0-54, present in bit 63: root sees
 * PFNs) of n pages from addr into out. pread() writes into the shared
 * page, not into the regions the tests look at.
 */
static int read_pagemap(uintptr_t addr, size_t n, uint64_t *out)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t want = n * sizeof(*out);
	int ok;

	if (fd < 0)
		return 0;
	ok = pread(fd, out, want, (addr / P) * sizeof(*out)) == want;
	close(fd);
	return ok;
}

/* Anonymous: write first touch, read first touch (zero page), COW of it. */
static void w_anon(void)
{
	char *p = mmap(NULL, 3 * ANON_PAGES * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *v = p;
	size_t i;

	if (p == MAP_FAILED)
		_exit(1);
	sh->base[0] = (uintptr_t)p;
	sh->len[0] = ANON_PAGES * P;
	sh->base[1] = (uintptr_t)p + ANON_PAGES * P;
	sh->len[1] = ANON_PAGES * P;
	/* The loops below are in this function's first few KiB. */
	sh->ip_lo = (uintptr_t)w_anon;
	sh->ip_hi = (uintptr_t)w_anon + 4096;
	for (i = 0; i < ANON_PAGES; i++)
		v[i * P] = 1;
	for (i = ANON_PAGES; i < 2 * ANON_PAGES; i++)
		(void)v[i * P];
	for (i = ANON_PAGES; i < 2 * ANON_PAGES; i++)
		v[i * P] = 2;
	/* What the page tables map now: the pfns the records must report. */
	sh->pagemap_ok = read_pagemap(sh->base[0], ANON_PAGES, sh->pagemap[0]) &&
			 read_pagemap(sh->base[1], ANON_PAGES, sh->pagemap[1]);
	/* Untouched third: the kernel-mode case below writes there. */
	sh->base[2] = (uintptr_t)p + 2 * ANON_PAGES * P;
	sh->len[2] = 4 * P;
	{
		int fd = open("/proc/self/stat", O_RDONLY);

		/* copy_to_user() faults on a page never touched: kernel mode. */
		if (fd < 0 || read(fd, p + 2 * ANON_PAGES * P, 64) <= 0)
			_exit(2);
		close(fd);
	}
}

/* Shared memory: MAP_SHARED|MAP_ANONYMOUS and a /dev/shm file. */
/*
 * Transparent huge pages (MADV_HUGEPAGE, 2 MiB aligned): a read first
 * touch maps the huge zero page, a write then copies; a write first touch
 * of another 2 MiB maps a new huge page. base[2] is a NOHUGEPAGE page read
 * for the 4 KiB zero page's pfn; pagemap[0][0] is what the read mapped,
 * pagemap[1][0] the 4 KiB zero page.
 */
#define HPAGE (2UL << 20)

static void w_thp(void)
{
	char *m = mmap(NULL, 4 * HPAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *z = mmap(NULL, P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *a;

	if (m == MAP_FAILED || z == MAP_FAILED ||
	    prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0))
		_exit(1);
	a = (char *)(((uintptr_t)m + HPAGE - 1) & ~(HPAGE - 1));
	if (madvise((void *)a, 2 * HPAGE, MADV_HUGEPAGE) ||
	    madvise(z, P, MADV_NOHUGEPAGE))
		_exit(2);
	sh->base[0] = (uintptr_t)a;
	sh->len[0] = HPAGE;
	sh->base[1] = (uintptr_t)a + HPAGE;
	sh->len[1] = HPAGE;
	sh->base[2] = (uintptr_t)z;
	sh->len[2] = P;
	(void)a[0];
	(void)*(volatile char *)z;
	sh->pagemap_ok = read_pagemap(sh->base[0], 1, sh->pagemap[0]) &&
			 read_pagemap(sh->base[2], 1, sh->pagemap[1]);
	a[0] = 1;
	a[HPAGE] = 1;
}

static void w_shmem(void)
{
	char *a = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int fd = open("/dev/shm/memmon-w-faults", O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *b;
	size_t i;

	if (a == MAP_FAILED || fd < 0 || ftruncate(fd, 64 * P))
		_exit(1);
	b = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b == MAP_FAILED)
		_exit(1);
	sh->base[0] = (uintptr_t)a;
	sh->len[0] = 64 * P;
	sh->base[1] = (uintptr_t)b;
	sh->len[1] = 64 * P;
	for (i = 0; i < 64; i++) {
		a[i * P] = 1;
		b[i * P] = 1;
	}
	unlink("/dev/shm/memmon-w-faults");
}

/* File-backed, cold cache: major faults (and RETRY), then minor ones. */
#define FILE_PAGES 256

static void w_file(void)
{
	char path[512];
	volatile char *p;
	int fd;
	size_t i;

	snprintf(path, sizeof(path), "%s/memmon-w-faults", opt_dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		_exit(1);
	p = mmap(NULL, FILE_PAGES * P, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		_exit(1);
	sh->base[0] = (uintptr_t)p;
	sh->len[0] = FILE_PAGES * P;
	for (i = 0; i < FILE_PAGES; i++)
		(void)p[i * P];
	close(fd);
}

/* Swap: touch, page out (MADV_PAGEOUT), touch again. */
#define SWAP_PAGES 256

static void w_swap(void)
{
	char *p = mmap(NULL, SWAP_PAGES * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *v = p;
	size_t i;

	if (p == MAP_FAILED)
		_exit(1);
	for (i = 0; i < SWAP_PAGES; i++)
		v[i * P] = (char)i;
	if (madvise(p, SWAP_PAGES * P, MADV_PAGEOUT))
		_exit(2);
	sh->base[0] = (uintptr_t)p;
	sh->len[0] = SWAP_PAGES * P;
	for (i = 0; i < SWAP_PAGES; i++)
		if (v[i * P] != (char)i)
			_exit(3);
}

/* SIGSEGV: no VMA, and a write the VMA forbids; then -EFAULT in a syscall. */
static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

static void w_segv(void)
{
	struct sigaction sa = { .sa_handler = on_segv };
	char *hole, *ro;
	int pfd[2];

	hole = mmap(NULL, P, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, P, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED || ro == MAP_FAILED || munmap(hole, P) ||
	    sigaction(SIGSEGV, &sa, NULL) || pipe(pfd))
		_exit(1);
	sh->base[0] = (uintptr_t)hole;
	sh->base[1] = (uintptr_t)ro;
	if (!sigsetjmp(segv_jmp, 1))
		(void)*(volatile char *)hole;
	if (!sigsetjmp(segv_jmp, 1))
		*(volatile char *)ro = 1;
	/* The kernel reads the hole for write(): -EFAULT, no signal. */
	if (write(pfd[1], hole, 16) != -1 || errno != EFAULT)
		_exit(2);
}

/* Threads created after WATCH_ADD, all faulting at once. */
#define THREADS 4
#define THREAD_PAGES 256

static void *thread_fn(void *arg)
{
	volatile char *p = arg;
	size_t i;

	for (i = 0; i < THREAD_PAGES; i++)
		p[i * P] = 1;
	return NULL;
}

static void w_threads(void)
{
	pthread_t t[THREADS];
	char *p = mmap(NULL, THREADS * THREAD_PAGES * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (p == MAP_FAILED)
		_exit(1);
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_fn, p + i * THREAD_PAGES * P))
			_exit(2);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

/* GUP: mlock() and MAP_POPULATE populate in the kernel; process_vm_readv()
 * pins through GUP too; read() into fresh pages copies in kernel mode.
 */
static void w_gup(void)
{
	char *a = mmap(NULL, 128 * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b = mmap(NULL, 128 * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	char *c = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *d = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *e = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec local = { .iov_base = d, .iov_len = 64 * P };
	struct iovec remote = { .iov_base = e, .iov_len = 64 * P };
	int fd;

	if (a == MAP_FAILED || b == MAP_FAILED || c == MAP_FAILED ||
	    d == MAP_FAILED || e == MAP_FAILED || mlock(a, 128 * P))
		_exit(1);
	sh->base[0] = (uintptr_t)a;
	sh->len[0] = 128 * P;
	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0 || read(fd, c, 64 * P) != (ssize_t)(64 * P))
		_exit(2);
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
	    (ssize_t)(64 * P))
		_exit(3);
	munlock(a, 128 * P);
}

/* Everything at once, for the count; transparent huge pages allowed. */
static void w_mix(void)
{
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	w_anon();
	w_shmem();
	w_gup();
	w_threads();
	w_segv();
	if (opt_dir)
		w_file();
	if (opt_swap)
		w_swap();
}

/* ------------------------------------------------------------------ */

/* Drop @path's pages from the page cache (clean pages go at once). */
static int cold(const char *path)
{
	int fd = open(path, O_RDONLY);
	int err;

	if (fd < 0)
		return -1;
	err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return err;
}

static int make_file(void)
{
	char path[512], buf[4096];
	int fd;
	size_t i;

	snprintf(path, sizeof(path), "%s/memmon-w-faults", opt_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < FILE_PAGES; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return -1;
	if (fsync(fd))
		return -1;
	close(fd);
	return cold(path);
}

static void test_anon(void)
{
	const struct memmon_rec_fault *f[2 * ANON_PAGES + 8];
	struct in_sess s;
	struct result r;
	size_t n, m, i, bad;

	VT_SUCCESS(run(w_anon, &s, &r), "anon: workload ran");
	check_counts("anon", &s, &r);

	n = faults_in(&s, sh->base[0], sh->len[0], f, ANON_PAGES + 8);
	for (i = 0, bad = 0; i < n && i < ANON_PAGES; i++)
		bad += !(f[i]->fclass == MEMMON_FCLASS_ANON &&
			 f[i]->access == MEMMON_FAULT_WRITE &&
			 f[i]->result == MEMMON_FRES_HANDLED &&
			 f[i]->flags == (MEMMON_FAULTF_PFN | MEMMON_FAULTF_NEWPAGE) &&
			 f[i]->addr == sh->base[0] + i * P && f[i]->pfn &&
			 f[i]->ip >= sh->ip_lo && f[i]->ip < sh->ip_hi);
	/* Expectation: one record per page, in order: anon, write, minor, new page. */
	VT_OK(n == ANON_PAGES && !bad,
	      "anon write first touch: %zu records for %d pages, %zu unexpected",
	      n, ANON_PAGES, bad);
	if (bad)
		in_dump((const void *)f[0]);

	n = faults_in(&s, sh->base[1], sh->len[1], f, 2 * ANON_PAGES + 8);
	for (i = 0, bad = 0; i < n && i < 2 * ANON_PAGES; i++) {
		bool rd = i < ANON_PAGES;

		bad += !(f[i]->fclass == MEMMON_FCLASS_ANON &&
			 f[i]->access == (rd ? MEMMON_FAULT_READ : MEMMON_FAULT_WRITE) &&
			 f[i]->result == MEMMON_FRES_HANDLED &&
			 f[i]->flags == (rd ? MEMMON_FAULTF_PFN :
				MEMMON_FAULTF_PFN | MEMMON_FAULTF_NEWPAGE) &&
			 f[i]->addr == sh->base[1] + (i % ANON_PAGES) * P);
	}
	/* Expectation: a read maps the zero page (no new page), the write after it copies. */
	VT_OK(n == 2 * ANON_PAGES && !bad,
	      "anon read first touch then COW: %zu records, %zu unexpected", n, bad);

	/*
	 * The pfn of each write fault is the page the kernel mapped: the
	 * first touch's and the COW copy's (which replaced the zero page in
	 * the same PTE), as /proc/self/pagemap saw them after the loops.
	 */
	n = faults_in(&s, sh->base[0], sh->len[0], f, ANON_PAGES + 8);
	for (i = 0, bad = 0; i < n && i < ANON_PAGES; i++)
		bad += !((sh->pagemap[0][i] >> 63) &&
			 f[i]->pfn == (sh->pagemap[0][i] & ((1ULL << 55) - 1)));
	m = faults_in(&s, sh->base[1], sh->len[1], f, 2 * ANON_PAGES + 8);
	for (i = ANON_PAGES; i < m && i < 2 * ANON_PAGES; i++)
		bad += !((sh->pagemap[1][i - ANON_PAGES] >> 63) &&
			 f[i]->pfn == (sh->pagemap[1][i - ANON_PAGES] & ((1ULL << 55) - 1)));
	/* Expectation: every write fault's pfn is what pagemap says is mapped. */
	VT_OK(sh->pagemap_ok && n == ANON_PAGES && m == 2 * ANON_PAGES && !bad,
	      "anon pfns == /proc/self/pagemap: pagemap read %s, %zu of %d differ",
	      sh->pagemap_ok ? "ok" : "FAILED", bad, 2 * ANON_PAGES);

	n = faults_in(&s, sh->base[2], sh->len[2], f, 8);
	/* Expectation: read() wrote the page from kernel mode: KERNEL, user ip. */
	VT_OK(n == 1 && f[0]->fclass == MEMMON_FCLASS_ANON &&
	      f[0]->access == MEMMON_FAULT_WRITE &&
	      f[0]->result == MEMMON_FRES_HANDLED &&
	      (f[0]->flags & MEMMON_FAULTF_KERNEL) && f[0]->ip,
	      "copy_to_user into an untouched page: one kernel-mode record (%zu)", n);
	in_close(&s);
}

static void test_thp(void)
{
	const struct memmon_rec_fault *f[8];
	struct in_sess s;
	struct result r;
	uint64_t pfn_mask = (1ULL << 55) - 1, rd_pfn, zero_pfn;
	size_t n, m;

	/*
	 * PREEMPT_RT kernels have no THP (TRANSPARENT_HUGEPAGE depends on
	 * !PREEMPT_RT): then only that is checked, as the kernel says it.
	 */
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK)) {
		void *p = mmap(NULL, P, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		/* Expectation: without THP, MADV_HUGEPAGE is EINVAL. */
		VT_OK(p != MAP_FAILED && madvise(p, P, MADV_HUGEPAGE) == -1 &&
		      errno == EINVAL,
		      "thp: this kernel has no transparent huge pages (no /sys/kernel/mm/transparent_hugepage, MADV_HUGEPAGE refused)");
		if (p != MAP_FAILED)
			munmap(p, P);
		return;
	}
	VT_SUCCESS(run(w_thp, &s, &r), "thp: workload ran");
	check_counts("thp", &s, &r);
	rd_pfn = sh->pagemap[0][0] & pfn_mask;
	zero_pfn = sh->pagemap[1][0] & pfn_mask;
	/* The premise: the read mapped the huge zero page, not the 4 KiB one. */
	VT_OK(sh->pagemap_ok && (sh->pagemap[0][0] >> 63) && rd_pfn &&
	      rd_pfn != zero_pfn,
	      "thp: a read first touch mapped the huge zero page (pfn %#llx, the 4 KiB one %#llx)",
	      (unsigned long long)rd_pfn, (unsigned long long)zero_pfn);
	n = faults_in(&s, sh->base[0], sh->len[0], f, 8);
	/* Expectation: the read maps a page nobody allocated, the write a copy. */
	VT_OK(n == 2 && f[0]->access == MEMMON_FAULT_READ &&
	      f[0]->result == MEMMON_FRES_HANDLED &&
	      f[0]->flags == MEMMON_FAULTF_PFN && f[0]->pfn == rd_pfn &&
	      f[1]->access == MEMMON_FAULT_WRITE &&
	      f[1]->flags == (MEMMON_FAULTF_PFN | MEMMON_FAULTF_NEWPAGE),
	      "thp: read of the huge zero page: no new page; the write after it: a new page (%zu records)",
	      n);
	if (n && !(n == 2 && f[0]->flags == MEMMON_FAULTF_PFN))
		in_dump((const void *)f[0]);
	m = faults_in(&s, sh->base[1], sh->len[1], f, 8);
	/* Expectation: a write first touch allocates (a huge page). */
	VT_OK(m == 1 && f[0]->access == MEMMON_FAULT_WRITE &&
	      f[0]->fclass == MEMMON_FCLASS_ANON &&
	      f[0]->flags == (MEMMON_FAULTF_PFN | MEMMON_FAULTF_NEWPAGE),
	      "thp: write first touch: a new page (%zu records)", m);
	in_close(&s);
}

static void test_shmem(void)
{
	const struct memmon_rec_fault *f[80];
	struct in_sess s;
	struct result r;
	size_t n, m, i, bad = 0;

	VT_SUCCESS(run(w_shmem, &s, &r), "shmem: workload ran");
	check_counts("shmem", &s, &r);
	n = faults_in(&s, sh->base[0], sh->len[0], f, 80);
	for (i = 0; i < n && i < 80; i++)
		bad += f[i]->fclass != MEMMON_FCLASS_SHMEM ||
		       f[i]->result != MEMMON_FRES_HANDLED;
	m = faults_in(&s, sh->base[1], sh->len[1], f, 80);
	for (i = 0; i < m && i < 80; i++)
		bad += f[i]->fclass != MEMMON_FCLASS_SHMEM ||
		       f[i]->result != MEMMON_FRES_HANDLED;
	/* Expectation: MAP_SHARED anonymous and tmpfs pages are class shmem. */
	VT_OK(n == 64 && m == 64 && !bad,
	      "shmem: %zu + %zu records, %zu not shmem/handled", n, m, bad);
	in_close(&s);
}

static void test_file(void)
{
	const struct memmon_rec_fault *f[4 * FILE_PAGES];
	struct in_sess s;
	struct result r;
	size_t n, i, bad = 0, maj = 0, handled = 0;

	if (!opt_dir) {
		printf("ok %d - file faults # SKIP no --dir\n", ++vt_count);
		return;
	}
	VT_SUCCESS(make_file(), "file: %d pages on %s, out of the page cache",
		   FILE_PAGES, opt_dir);
	VT_SUCCESS(run(w_file, &s, &r), "file: workload ran");
	check_counts("file", &s, &r);
	n = faults_in(&s, sh->base[0], sh->len[0], f, 4 * FILE_PAGES);
	for (i = 0; i < n && i < 4 * FILE_PAGES; i++) {
		bad += f[i]->fclass != MEMMON_FCLASS_FILE ||
		       f[i]->access != MEMMON_FAULT_READ;
		handled += f[i]->result == MEMMON_FRES_HANDLED;
		maj += !!(f[i]->flags & MEMMON_FAULTF_MAJOR);
	}
	/* Expectation: file class; cold pages are read in: some major faults. */
	VT_OK(!bad && maj > 0 && handled <= FILE_PAGES,
	      "file: %zu records (%zu handled, %zu major, %llu retry), %zu not file/read",
	      n, handled, maj, (unsigned long long)r.retry, bad);
	in_close(&s);
}

static void test_swap(void)
{
	const struct memmon_rec_fault *f[4 * SWAP_PAGES];
	struct in_sess s;
	struct result r;
	size_t n, i, swapin = 0, bad = 0;

	if (!opt_swap) {
		printf("ok %d - swap-in faults # SKIP no --swap\n", ++vt_count);
		return;
	}
	VT_SUCCESS(run(w_swap, &s, &r), "swap: workload ran");
	check_counts("swap", &s, &r);
	n = faults_in(&s, sh->base[0], sh->len[0], f, 4 * SWAP_PAGES);
	for (i = 0; i < n && i < 4 * SWAP_PAGES; i++) {
		if (f[i]->fclass == MEMMON_FCLASS_SWAP) {
			swapin++;
			bad += f[i]->result == MEMMON_FRES_HANDLED &&
			       !(f[i]->flags & MEMMON_FAULTF_PFN);
		} else {
			bad += f[i]->fclass != MEMMON_FCLASS_ANON;
		}
	}
	/* Expectation: the pages paged out come back through swap-in faults. */
	VT_OK(swapin >= SWAP_PAGES / 2 && !bad,
	      "swap: %zu swap-in records of %zu (after %d pages out), %zu unexpected",
	      swapin, n, (int)SWAP_PAGES, bad);
	in_close(&s);
}

static void test_segv(void)
{
	const struct memmon_rec_fault *f[8];
	struct in_sess s;
	struct result r;
	size_t n, m, i, kern;

	VT_SUCCESS(run(w_segv, &s, &r), "segv: workload ran");
	check_counts("segv", &s, &r);
	n = faults_in(&s, sh->base[0], P, f, 8);
	for (i = 1, kern = 0; i < n && i < 8; i++)
		kern += f[i]->result == MEMMON_FRES_SIGSEGV &&
			(f[i]->flags & MEMMON_FAULTF_KERNEL) &&
			f[i]->fclass == MEMMON_FCLASS_NONE;
	/*
	 * Expectation: the user's read of a hole, then the kernel's reads of
	 * it for write() (the copy routine retries its tail once).
	 */
	VT_OK(n >= 2 && n <= 8 && f[0]->fclass == MEMMON_FCLASS_NONE &&
	      f[0]->result == MEMMON_FRES_SIGSEGV &&
	      f[0]->access == MEMMON_FAULT_READ &&
	      !(f[0]->flags & MEMMON_FAULTF_KERNEL) && kern == n - 1,
	      "no VMA: SIGSEGV in user mode, then %zu kernel-mode -EFAULT records", kern);
	m = faults_in(&s, sh->base[1], P, f, 8);
	/* Expectation: a write to a read-only VMA: class of the VMA, SIGSEGV. */
	VT_OK(m == 1 && f[0]->fclass == MEMMON_FCLASS_ANON &&
	      f[0]->result == MEMMON_FRES_SIGSEGV &&
	      f[0]->access == MEMMON_FAULT_WRITE &&
	      !(f[0]->flags & MEMMON_FAULTF_KERNEL),
	      "write to PROT_READ: one SIGSEGV record (%zu)", m);
	VT_OK(r.errors == n + m, "segv: %llu error records, none counted",
	      (unsigned long long)r.errors);
	in_close(&s);
}

static void test_gup(void)
{
	const struct memmon_rec_fault *f[160];
	struct in_sess s;
	struct result r;
	size_t n, i, bad = 0;

	VT_SUCCESS(run(w_gup, &s, &r), "gup: workload ran");
	check_counts("gup", &s, &r);
	n = faults_in(&s, sh->base[0], sh->len[0], f, 160);
	for (i = 0; i < n && i < 160; i++)
		bad += !(f[i]->flags & MEMMON_FAULTF_KERNEL) ||
		       f[i]->fclass != MEMMON_FCLASS_ANON ||
		       f[i]->access != MEMMON_FAULT_WRITE;
	/* Expectation: mlock() faults every page in, from the kernel (GUP). */
	VT_OK(n == 128 && !bad, "mlock populate: %zu kernel-mode records, %zu unexpected",
	      n, bad);
	in_close(&s);
}

static void test_counts(const char *what, workload_t fn)
{
	struct in_sess s;
	struct result r;

	VT_SUCCESS(run(fn, &s, &r), "%s: workload ran", what);
	check_counts(what, &s, &r);
	in_close(&s);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			opt_dir = argv[++i];
		else if (!strcmp(argv[i], "--swap"))
			opt_swap = true;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	/* One record per 4 KiB page in the per-record checks: no THP. */
	if (sh == MAP_FAILED || prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_anon();
	test_thp();
	test_shmem();
	test_file();
	test_swap();
	test_segv();
	test_counts("threads", w_threads);
	test_gup();
	if (opt_dir && make_file())
		return 1;
	test_counts("mix", w_mix);
	return vt_exit();
}
