// SPDX-License-Identifier: GPL-2.0
/*
 * MEMMON_REC_SYSCALL and MEMMON_REC_PATH, record by record.
 *
 * A child makes every hooked syscall with known arguments, successful and
 * failing, through syscall(2) (no libc wrapper adds or reorders calls),
 * plus the ia32 entry points through int $0x80, and writes what it did and
 * what it got into a shared log. The parent watches it, and compares the
 * child's SYSCALL records, in time order, with the log: same syscall,
 * arguments, return value (-errno on failure), flags and aux, and a PATH
 * record before the first mapping of each file, once.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "vmtest.h"
#include "instr.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT	0x01
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT	4
#endif

/* ia32 syscall numbers (arch/x86/entry/syscalls/syscall_32.tbl). */
#define NR32_BRK	45
#define NR32_OLD_MMAP	90
#define NR32_MUNMAP	91
#define NR32_FSYNC	118
#define NR32_MPROTECT	125
#define NR32_MUNLOCKALL	153
#define NR32_MMAP2	192

struct exp {
	uint32_t sys;
	uint32_t flags;
	uint64_t args[6];
	int64_t ret;
	uint64_t aux[2];
	bool check_aux;
	bool path;		/* a PATH record must precede this one */
	uint64_t dev, ino;
};

#define MAX_EXP 128
static struct exp *log_;	/* MAP_SHARED: the child writes, parent reads */
static unsigned int *nlog;

static struct exp *note(uint32_t sys, uint32_t flags, int nargs,
			const long *a, long ret)
{
	struct exp *e = &log_[(*nlog)++];
	int i;

	memset(e, 0, sizeof(*e));
	e->sys = sys;
	e->flags = flags;
	for (i = 0; i < nargs; i++)
		e->args[i] = (uint64_t)a[i];
	e->ret = ret;
	return e;
}

/* A raw x86-64 syscall, noted; returns the kernel's value (-errno). */
static long sys64(uint32_t sys, long nr, int nargs, long a0, long a1, long a2,
		  long a3, long a4, long a5)
{
	long a[6] = { a0, a1, a2, a3, a4, a5 };
	long r;

	r = syscall(nr, a0, a1, a2, a3, a4, a5);
	if (r == -1)
		r = -errno;
	note(sys, 0, nargs, a, r);
	return r;
}

/*
 * An ia32 syscall from this 64-bit process: int $0x80 enters the compat
 * path and calls the __ia32_sys_* wrappers with args in ebx, ecx, edx, esi,
 * edi, ebp. The red zone is skipped before rbp is saved on the stack.
 */
static long int80(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long r12 asm("r12") = a5;
	long ret;

	asm volatile("sub $128, %%rsp\n\t"
		     "push %%rbp\n\t"
		     "mov %%r12, %%rbp\n\t"
		     "int $0x80\n\t"
		     "pop %%rbp\n\t"
		     "add $128, %%rsp"
		     : "=a"(ret)
		     : "a"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3), "D"(a4),
		       "r"(r12)
		     : "memory", "cc", "r8", "r9", "r10", "r11");
	return ret;
}

static long sys32(uint32_t sys, long nr, int nargs, long a0, long a1, long a2,
		  long a3, long a4, long a5)
{
	long a[6] = { (uint32_t)a0, (uint32_t)a1, (uint32_t)a2,
		      (uint32_t)a3, (uint32_t)a4, (uint32_t)a5 };
	long r = int80(nr, a0, a1, a2, a3, a4, a5);

	note(sys, MEMMON_SYSF_COMPAT, nargs, a, r);
	return r;
}

static void file_id(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (fstat(fd, &st))
		_exit(90);
	*dev = st.st_dev;	/* glibc's dev_t is new_encode_dev() already */
	*ino = st.st_ino;
}

/* The workload. Only raw syscalls between go and _exit(). */
static void child(int go_fd, int fd_a, int fd_b)
{
	const long P = 4096;
	uint64_t dev_a, ino_a, dev_b, ino_b;
	long p, q, r, brk0, low;
	struct exp *e;
	char c;

	file_id(fd_a, &dev_a, &ino_a);
	file_id(fd_b, &dev_b, &ino_b);
	/* A struct old_mmap can reach: below 4 GiB. */
	low = (long)mmap(NULL, P, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == -1L)
		_exit(91);
	memset((void *)low, 0, P);
	if (read(go_fd, &c, 1) != 1)
		_exit(92);

	/* mmap: anonymous, success and failure (no MAP_PRIVATE/SHARED). */
	p = sys64(MEMMON_SYS_MMAP, SYS_mmap, 6, 0, 3 * P, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sys64(MEMMON_SYS_MMAP, SYS_mmap, 6, 0, P, PROT_READ, MAP_ANONYMOUS, -1, 0);
	/* File mappings: a PATH record before the first of each file only. */
	r = sys64(MEMMON_SYS_MMAP, SYS_mmap, 6, 0, 2 * P, PROT_READ, MAP_SHARED,
		  fd_a, 0);
	e = &log_[*nlog - 1];
	e->flags |= MEMMON_SYSF_FILE;
	e->aux[0] = dev_a;
	e->aux[1] = ino_a;
	e->check_aux = true;
	e->path = true;
	e->dev = dev_a;
	e->ino = ino_a;
	q = sys64(MEMMON_SYS_MMAP, SYS_mmap, 6, 0, P, PROT_READ, MAP_PRIVATE,
		  fd_a, P);
	e = &log_[*nlog - 1];
	e->flags |= MEMMON_SYSF_FILE;
	e->aux[0] = dev_a;
	e->aux[1] = ino_a;
	e->check_aux = true;
	sys64(MEMMON_SYS_MUNMAP, SYS_munmap, 2, q, P, 0, 0, 0, 0);
	q = sys64(MEMMON_SYS_MMAP, SYS_mmap, 6, 0, P, PROT_READ, MAP_PRIVATE,
		  fd_b, 0);
	e = &log_[*nlog - 1];
	e->flags |= MEMMON_SYSF_FILE;
	e->aux[0] = dev_b;
	e->aux[1] = ino_b;
	e->check_aux = true;
	e->path = true;
	e->dev = dev_b;
	e->ino = ino_b;
	/* A bad fd: no file, no aux. */
	sys64(MEMMON_SYS_MMAP, SYS_mmap, 6, 0, P, PROT_READ, MAP_PRIVATE, 999, 0);

	p = sys64(MEMMON_SYS_MREMAP, SYS_mremap, 5, p, 3 * P, 6 * P,
		  MREMAP_MAYMOVE, 0, 0);
	sys64(MEMMON_SYS_MREMAP, SYS_mremap, 5, p, 6 * P, 7 * P, 0x80, 0, 0);
	sys64(MEMMON_SYS_MPROTECT, SYS_mprotect, 3, p, P, PROT_READ, 0, 0, 0);
	sys64(MEMMON_SYS_MPROTECT, SYS_mprotect, 3, p + 1, P, PROT_READ, 0, 0, 0);
	sys64(MEMMON_SYS_MADVISE, SYS_madvise, 3, p, P, MADV_DONTNEED, 0, 0, 0);
	sys64(MEMMON_SYS_MADVISE, SYS_madvise, 3, p, P, 12345, 0, 0, 0);
	sys64(MEMMON_SYS_MLOCK, SYS_mlock, 2, p, P, 0, 0, 0, 0);
	sys64(MEMMON_SYS_MUNLOCK, SYS_munlock, 2, p, P, 0, 0, 0, 0);
	sys64(MEMMON_SYS_MLOCK2, SYS_mlock2, 3, p, 2 * P, MLOCK_ONFAULT, 0, 0, 0);
	sys64(MEMMON_SYS_MLOCK2, SYS_mlock2, 3, p, P, 0x10, 0, 0, 0);
	sys64(MEMMON_SYS_MUNLOCK, SYS_munlock, 2, 0, P, 0, 0, 0, 0);
	sys64(MEMMON_SYS_MLOCKALL, SYS_mlockall, 1, MCL_CURRENT | MCL_ONFAULT,
	      0, 0, 0, 0, 0);
	sys64(MEMMON_SYS_MLOCKALL, SYS_mlockall, 1, MCL_ONFAULT, 0, 0, 0, 0, 0);
	sys64(MEMMON_SYS_MUNLOCKALL, SYS_munlockall, 0, 0, 0, 0, 0, 0, 0);
	sys64(MEMMON_SYS_FSYNC, SYS_fsync, 1, fd_a, 0, 0, 0, 0, 0);
	sys64(MEMMON_SYS_FSYNC, SYS_fsync, 1, -1, 0, 0, 0, 0, 0);
	sys64(MEMMON_SYS_MUNMAP, SYS_munmap, 2, p, 6 * P, 0, 0, 0, 0);
	sys64(MEMMON_SYS_MUNMAP, SYS_munmap, 2, r + 1, P, 0, 0, 0, 0);

	/* brk: aux = { break before, break after }. */
	brk0 = sys64(MEMMON_SYS_BRK, SYS_brk, 1, 0, 0, 0, 0, 0, 0);
	e = &log_[*nlog - 1];
	e->aux[0] = brk0;
	e->aux[1] = brk0;
	e->check_aux = true;
	r = sys64(MEMMON_SYS_BRK, SYS_brk, 1, brk0 + 4 * P, 0, 0, 0, 0, 0);
	e = &log_[*nlog - 1];
	e->aux[0] = brk0;
	e->aux[1] = r;
	e->check_aux = true;
	/* Below the start of the heap: refused, the break stays. */
	q = sys64(MEMMON_SYS_BRK, SYS_brk, 1, 4096, 0, 0, 0, 0, 0);
	e = &log_[*nlog - 1];
	e->aux[0] = r;
	e->aux[1] = q;
	e->check_aux = true;

	/* ia32 entry points. */
	p = sys32(MEMMON_SYS_MMAP2, NR32_MMAP2, 6, 0, 2 * P,
		  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sys32(MEMMON_SYS_MPROTECT, NR32_MPROTECT, 3, p, P, PROT_READ, 0, 0, 0);
	sys32(MEMMON_SYS_MUNMAP, NR32_MUNMAP, 2, p, 2 * P, 0, 0, 0, 0);
	{
		uint32_t *s = (uint32_t *)low;
		long a[6];
		int i;

		s[0] = 0;
		s[1] = 2 * P;
		s[2] = PROT_READ;
		s[3] = MAP_PRIVATE;
		s[4] = fd_b;
		s[5] = 0;
		r = int80(NR32_OLD_MMAP, low, 0, 0, 0, 0, 0);
		for (i = 0; i < 6; i++)
			a[i] = s[i];
		e = note(MEMMON_SYS_OLD_MMAP,
			 MEMMON_SYSF_COMPAT | MEMMON_SYSF_FILE, 6, a, r);
		e->aux[0] = dev_b;
		e->aux[1] = ino_b;
		e->check_aux = true;
		sys32(MEMMON_SYS_MUNMAP, NR32_MUNMAP, 2, r, 2 * P, 0, 0, 0, 0);
	}
	sys32(MEMMON_SYS_FSYNC, NR32_FSYNC, 1, -1, 0, 0, 0, 0, 0);
	sys32(MEMMON_SYS_MUNLOCKALL, NR32_MUNLOCKALL, 0, 0, 0, 0, 0, 0, 0);
	brk0 = sys32(MEMMON_SYS_BRK, NR32_BRK, 1, 0, 0, 0, 0, 0, 0);
	e = &log_[*nlog - 1];
	e->aux[0] = brk0;
	e->aux[1] = brk0;
	e->check_aux = true;
	_exit(0);
}

static int tmpfile_of(const char *name, size_t size)
{
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, size))
		return -1;
	return fd;
}

int main(void)
{
	const struct memmon_rec_syscall *c;
	const struct memmon_user_stack *st;
	const struct memmon_rec_path *pr;
	unsigned int i, k, npath = 0, mismatches = 0;
	int go[2], fd_a, fd_b, status;
	struct in_sess s;
	pid_t pid;

	log_ = mmap(NULL, MAX_EXP * sizeof(*log_) + 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	nlog = (unsigned int *)(log_ + MAX_EXP);
	fd_a = tmpfile_of("/tmp/memmon-sys-a", 4 * 4096);
	fd_b = tmpfile_of("/tmp/memmon-sys-b", 4 * 4096);
	if (log_ == MAP_FAILED || fd_a < 0 || fd_b < 0 || pipe(go)) {
		perror("setup");
		return 1;
	}

	VT_SUCCESS(in_open(&s, 4 << 20), "open and map a session");
	pid = fork();
	if (!pid) {
		close(go[1]);
		child(go[0], fd_a, fd_b);
	}
	close(go[0]);
	VT_SUCCESS(in_watch(&s, pid, 0), "watch the child");
	VT_SUCCESS(in_enable(&s), "enable");
	VT_OK(write(go[1], "g", 1) == 1, "start the child");
	VT_OK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      !WEXITSTATUS(status), "the child ran its syscalls (status %#x)",
	      status);
	in_disable(&s);
	in_drain(&s);
	VT_OK(s.lost == 0 && in_stats_lost(&s) == 0, "no record was lost");

	/* The child's SYSCALL records, in time order, against its log. */
	k = 0;
	for (i = 0; i < s.n; i++) {
		const struct memmon_rec_header *h = &s.recs[i]->hdr;
		const struct exp *e;
		bool ok;

		if (h->tgid != (uint32_t)pid)
			continue;
		if (h->type == MEMMON_REC_PATH) {
			pr = (const void *)h;
			npath++;
			/* Expectation: the next expected call maps this file first. */
			ok = k < *nlog && log_[k].path && log_[k].dev == pr->dev &&
			     log_[k].ino == pr->ino && pr->path_len == strlen(pr->path) &&
			     !strncmp(pr->path, "/tmp/memmon-sys-", 16);
			VT_OK(ok, "PATH %s (dev %#llx ino %llu) precedes the first mapping of the file",
			      pr->path, (unsigned long long)pr->dev,
			      (unsigned long long)pr->ino);
			if (!ok)
				in_dump(s.recs[i]);
			continue;
		}
		if (h->type != MEMMON_REC_SYSCALL)
			continue;
		c = (const void *)h;
		if (k >= *nlog) {
			VT_OK(0, "no SYSCALL record beyond the %u calls made", *nlog);
			in_dump(s.recs[i]);
			continue;
		}
		e = &log_[k++];
		/* Every call carries its user stack (ABI 1.5): ip[0] at least. */
		st = (const void *)(c + 1);
		ok = c->sys == e->sys && (c->flags & ~MEMMON_SYSF_USTACK) == e->flags &&
		     (c->flags & MEMMON_SYSF_USTACK) &&
		     h->size >= sizeof(*c) + sizeof(*st) + st->nr * sizeof(st->ip[0]) &&
		     st->nr >= 1 && st->ip[0] &&
		     (!(st->flags & MEMMON_USTACK_COMPAT) || st->nr == 1) &&
		     !memcmp(c->args, e->args, sizeof(e->args)) &&
		     c->ret == e->ret && h->tid == (uint32_t)pid &&
		     (!e->check_aux || !memcmp(c->aux, e->aux, sizeof(e->aux))) &&
		     (e->check_aux || (!c->aux[0] && !c->aux[1])) &&
		     c->duration_ns > 0 && c->duration_ns < 10ULL * 1000000000;
		/* Expectation: record k is call k, field for field. */
		VT_OK(ok, "call %u: sys %u ret %lld flags %#x", k - 1, e->sys,
		      (long long)e->ret, e->flags);
		if (!ok) {
			mismatches++;
			in_dump(s.recs[i]);
			printf("# want sys=%u fl=%#x args=%#llx,%#llx,%#llx,%#llx,%#llx,%#llx ret=%lld aux=%#llx,%llu\n",
			       e->sys, e->flags,
			       (unsigned long long)e->args[0], (unsigned long long)e->args[1],
			       (unsigned long long)e->args[2], (unsigned long long)e->args[3],
			       (unsigned long long)e->args[4], (unsigned long long)e->args[5],
			       (long long)e->ret, (unsigned long long)e->aux[0],
			       (unsigned long long)e->aux[1]);
		}
	}
	VT_OK(k == *nlog, "one SYSCALL record per call: %u records, %u calls", k,
	      *nlog);
	VT_OK(npath == 2, "one PATH record per file: %u", npath);

	in_close(&s);
	unlink("/tmp/memmon-sys-a");
	unlink("/tmp/memmon-sys-b");
	return vt_exit();
}
