// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded fuzzer of /dev/memmon and /proc/memmon, run by t_fuzz.sh with
 * the module loaded (require_cap=0, the node 0666):
 *
 *   w_fuzz [--seed S] [--seconds N] [--workers W] [--dir D]
 *
 * W worker processes, half root and half nobody, each a single thread with
 * its own stream of the seeded generator, drive open/dup/close, every
 * ioctl with random and boundary sizes, flags and pointers (NULL, a kernel
 * address, PROT_NONE and read-only pages, a struct that crosses into a
 * guard page, unaligned, the last user page, the rings themselves), mmap
 * with random offsets, sizes, protections and flags, mprotect, mremap,
 * munmap and madvise of parts of those mappings, garbage written to the
 * consumer positions and the producer pages read, read() and poll(), fork
 * with the mappings inherited, MARK, and the /proc/memmon files. All the
 * while a churn workload (nobody) maps, faults, forks, execs (a plain and
 * a setuid image on D, a tmpfs of ours) and exits, and a root session
 * watches it with its children and consumes everything.
 *
 * Every mapping a worker makes is inside a PROT_NONE reservation of its
 * own and every hole it leaves is reserved again at once, so no random
 * mmap/mremap/munmap can touch the program's own memory; its reads and
 * writes of mappings survive SIGSEGV/SIGBUS (counted).
 *
 * It prints the seed, the calls made per kind and their errors per errno,
 * then TAP lines of its verdicts: every worker ended by itself; the
 * watching session's accounting is exact per CPU (produced = delivered +
 * lost; delivered = the records read; lost = the LOST records' counts);
 * it recorded the churn; both users' charges are back to zero. The kernel
 * log and rmmod are t_fuzz.sh's to judge.
 */
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "mmtest.h"

#define NOBODY		65534
#define MAX_WORKERS	16
#define MAX_CPUS	64
#define NFD		6		/* session fds a worker holds at most */
#define NSLOT		48		/* mapping slots */
#define SLOT		(16UL << 20)	/* bytes each */
#define GOOD_BYTES	(256UL << 10)
#define NPIDS		64		/* churn pids published */
#define ERR_SEGV	134		/* pseudo errnos of the counts */
#define ERR_BUS		135
#define NERR		136

enum kind {
	K_OPEN, K_DUP, K_CLOSE, K_INFO, K_CONFIG, K_WADD, K_WDEL, K_WLIST,
	K_EVENTS, K_ENABLE, K_DISABLE, K_STATS, K_MARK, K_BADIOC, K_MMAP,
	K_MPROTECT, K_MREMAP, K_MUNMAP, K_MADVISE, K_SCRIBBLE, K_PEEK, K_READ,
	K_POLL, K_FORK, K_PROC_READ, K_PROC_WRITE, K_NR
};

static const char *const kind_name[K_NR] = {
	"open", "dup", "close", "GET_INFO", "CONFIGURE", "WATCH_ADD",
	"WATCH_DEL", "WATCH_LIST", "SET_EVENTS", "ENABLE", "DISABLE",
	"GET_STATS", "MARK", "other-ioctl", "mmap", "mprotect", "mremap",
	"munmap", "madvise", "scribble", "peek", "read", "poll", "fork",
	"proc-read", "proc-write",
};

struct counts {
	uint64_t calls[K_NR];
	uint64_t err[K_NR][NERR];
	uint64_t fork_bad;	/* fork children that died of a signal */
	uint64_t done;		/* set when the worker finished */
};

/* Shared by every process of the run (MAP_SHARED). */
struct shared {
	volatile int stop;
	volatile uint32_t npids;
	volatile pid_t pids[NPIDS];	/* churn processes, recent first */
	struct counts w[MAX_WORKERS];
};

static struct shared *sh;
static char img_plain[4200], img_suid[4200];
static char self[4096];

/* ------------------------------------------------------------------
 * The generator: splitmix64, one stream per process.
 */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static bool coin(uint32_t one_in)
{
	return rn(one_in) == 0;
}

/* ------------------------------------------------------------------
 * Worker state
 */

struct fdslot {
	int fd;			/* -1: free */
	struct memmon_info info;	/* as last read */
};

static struct {
	struct counts *c;
	bool root;
	long page;
	struct fdslot fds[NFD];
	char *resv;		/* NSLOT * SLOT, PROT_NONE when unused */
	bool used[NSLOT];
	char *arena;		/* RW | NONE | RO | NONE */
	char *good;		/* GOOD_BYTES read-write */
	int null_fd;		/* /dev/null: a descriptor that is no session */
} W;

static sigjmp_buf touch_jmp;
static volatile sig_atomic_t touching;

static void on_fault(int sig)
{
	if (touching)
		siglongjmp(touch_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void count(enum kind k, long r)
{
	W.c->calls[k]++;
	if (r < 0)
		W.c->err[k][errno > 0 && errno < ERR_SEGV ? errno : 0]++;
}

/* ------------------------------------------------------------------
 * Pointers and sizes
 */

enum ptr_kind {
	P_NULL, P_KERNEL, P_NONE, P_RO, P_GUARD, P_GOOD, P_UNALIGNED, P_HIGH,
	P_RING, P_NR
};

/*
 * A pointer for an argument of @len bytes, holding @src's first bytes where
 * the page can be written (P_GUARD: only those before the guard page).
 */
static void *arg_ptr(const void *src, size_t len)
{
	char *p;
	size_t room;

	switch (rn(12) < 6 ? P_GOOD : rn(P_NR)) {
	case P_NULL:
		return NULL;
	case P_KERNEL:
		return (void *)(coin(2) ? 0xffffffff81000000UL : 0xffff888000000000UL);
	case P_NONE:
		return W.arena + W.page;
	case P_RO:
		return W.arena + 2 * W.page;
	case P_GUARD:
		room = 1 + rn(len ? (uint32_t)(len < (size_t)W.page ? len : (size_t)W.page) : 1);
		p = W.arena + W.page - room;
		if (src)
			memcpy(p, src, room < len ? room : len);
		return p;
	case P_HIGH:
		return (void *)(0x7ffffffff000UL - rn(64));
	case P_RING:
		for (int i = 0; i < 4; i++) {
			uint32_t s = rn(NSLOT);

			if (W.used[s])
				return W.resv + s * SLOT + rn(8) * 8;
		}
		return NULL;
	case P_UNALIGNED:
		p = W.good + 1 + rn(7);
		break;
	case P_GOOD:
	default:
		p = W.good;
		break;
	}
	room = GOOD_BYTES - (size_t)(p - W.good);
	if (src)
		memcpy(p, src, len < room ? len : room);
	return p;
}

/* A struct's size field: mostly right, else a boundary or noise. */
static uint32_t fz_size(uint32_t sz)
{
	switch (rn(16)) {
	case 0: return 0;
	case 1: return rn(sz);
	case 2: return sz - 1;
	case 3: return sz + 8;
	case 4: return sz + rn(64);
	case 5: return 4096;
	case 6: return 0xffffffffU;
	case 7: return (uint32_t)rnd();
	default: return sz;
	}
}

static uint64_t fz_u64(void)
{
	static const uint64_t edge[] = {
		0, 1, 7, 8, 4095, 4096, 4097, 1ULL << 31, 1ULL << 32,
		~0ULL, ~0ULL >> 1, 0x8000000000000000ULL,
	};

	return coin(2) ? edge[rn(sizeof(edge) / sizeof(edge[0]))] : rnd();
}

/*
 * The buffer a struct argument is built in: its tail (bytes past the
 * struct a larger size field covers) zero or garbage.
 */
static union {
	struct memmon_info info;
	struct memmon_config config;
	struct memmon_watch watch;
	struct memmon_watch_list wlist;
	struct memmon_events events;
	struct memmon_stats stats;
	struct memmon_mark mark;
	char bytes[8192];
} A;

static void arg_reset(void)
{
	if (coin(4))
		for (size_t i = 0; i < sizeof(A.bytes); i += 8)
			*(uint64_t *)(A.bytes + i) = rnd();
	else
		memset(&A, 0, sizeof(A));
}

/* ------------------------------------------------------------------
 * Sessions
 */

static struct fdslot *pick_fd(void)
{
	for (int i = 0; i < 4; i++) {
		struct fdslot *f = &W.fds[rn(NFD)];

		if (f->fd >= 0)
			return f;
	}
	return NULL;
}

static int any_fd(void)
{
	struct fdslot *f = pick_fd();

	/* Now and then a descriptor that is no session, or none at all. */
	if (!f || coin(32))
		return coin(2) ? W.null_fd : (coin(2) ? -1 : 1023);
	return f->fd;
}

static void refresh_info(struct fdslot *f)
{
	if (mm_get_info(f->fd, &f->info))
		memset(&f->info, 0, sizeof(f->info));
}

static void op_open(void)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	struct fdslot *f = &W.fds[rn(NFD)];
	int flags = modes[rn(5)] | O_CLOEXEC | (coin(2) ? O_NONBLOCK : 0);
	int fd;

	if (f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
	}
	fd = open(MEMMON_DEVICE_PATH, flags);
	count(K_OPEN, fd);
	if (fd >= 0) {
		f->fd = fd;
		refresh_info(f);
	}
}

static void op_dup(void)
{
	struct fdslot *from = pick_fd(), *to = &W.fds[rn(NFD)];
	int fd;

	if (!from || from == to)
		return;
	if (to->fd >= 0)
		close(to->fd);
	fd = dup(from->fd);
	count(K_DUP, fd);
	to->fd = fd;
	if (fd >= 0)
		to->info = from->info;
}

static void op_close(void)
{
	struct fdslot *f = pick_fd();

	if (!f)
		return;
	count(K_CLOSE, close(f->fd));
	f->fd = -1;
}

static long ioc(unsigned long cmd, const void *src, size_t len)
{
	return ioctl(any_fd(), cmd, arg_ptr(src, len));
}

static void op_info(void)
{
	arg_reset();
	A.info.size = fz_size(sizeof(A.info));
	count(K_INFO, ioc(MEMMON_IOC_GET_INFO, &A, sizeof(A.info) + 64));
}

static void op_config(void)
{
	static const uint64_t sizes[] = {
		0, 4096, 8192, 16384, 65536, 1 << 20, 4 << 20, 8 << 20, 12288,
		~0ULL,
	};
	struct fdslot *f = pick_fd();
	long r;

	arg_reset();
	A.config.size = fz_size(sizeof(A.config));
	A.config.full_policy = coin(4) ? (uint32_t)rnd() : rn(3);
	A.config.ring_size = coin(8) ? fz_u64() : sizes[rn(sizeof(sizes) / sizeof(sizes[0]))];
	A.config.wakeup_bytes = coin(2) ? 0 : fz_u64() % (A.config.ring_size | 1);
	if (f && coin(2)) {
		/* The structured call on a real session, reaching the rings. */
		r = ioctl(f->fd, MEMMON_IOC_CONFIGURE, arg_ptr(&A, sizeof(A.config) + 64));
		if (!r)
			refresh_info(f);
	} else {
		r = ioc(MEMMON_IOC_CONFIGURE, &A, sizeof(A.config) + 64);
	}
	count(K_CONFIG, r);
}

static uint32_t fz_pid(void)
{
	uint32_t n = sh->npids;

	switch (rn(10)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return (uint32_t)getpid();
	case 3: return (uint32_t)getppid();
	case 4: return 0xffffffffU;
	case 5: return 0x7fffffffU;
	case 6: return 2 + rn(32768);
	default: return n ? (uint32_t)sh->pids[rn(n < NPIDS ? n : NPIDS)] : 1;
	}
}

static void op_watch(enum kind k)
{
	arg_reset();
	A.watch.size = fz_size(sizeof(A.watch));
	A.watch.flags = coin(4) ? (uint32_t)rnd() : (coin(2) ? MEMMON_WATCH_FOLLOW_CHILDREN : 0);
	A.watch.pid = fz_pid();
	if (coin(2))
		A.watch.__reserved = 0;
	count(k, ioc(k == K_WADD ? MEMMON_IOC_WATCH_ADD : MEMMON_IOC_WATCH_DEL,
		     &A, sizeof(A.watch) + 64));
}

static void op_wlist(void)
{
	static const uint32_t counts[] = { 0, 1, 2, 64, 1024, 4096, 0x10000, 0xffffffffU };

	arg_reset();
	A.wlist.size = fz_size(sizeof(A.wlist));
	A.wlist.count = counts[rn(8)];
	A.wlist.entries = (uint64_t)(uintptr_t)arg_ptr(NULL, (size_t)A.wlist.count * 8);
	count(K_WLIST, ioc(MEMMON_IOC_WATCH_LIST, &A, sizeof(A.wlist) + 64));
}

static void op_events(void)
{
	arg_reset();
	A.events.size = fz_size(sizeof(A.events));
	A.events.mask = coin(2) ? (1ULL << MEMMON_EV__COUNT) - 1 : fz_u64();
	A.events.syscalls = coin(2) ? ~0ULL : fz_u64();
	if (coin(2))
		A.events.__reserved = 0;
	count(K_EVENTS, ioc(MEMMON_IOC_SET_EVENTS, &A, sizeof(A.events) + 64));
}

static void op_stats(void)
{
	static const uint32_t n[] = { 0, 1, 2, 64, 4096, 0xffffffffU };

	arg_reset();
	A.stats.size = fz_size(sizeof(A.stats));
	A.stats.nr_cpus = n[rn(6)];
	A.stats.cpu_stats_size = coin(2) ? sizeof(struct memmon_cpu_stats)
					 : fz_size(sizeof(struct memmon_cpu_stats));
	A.stats.cpus = (uint64_t)(uintptr_t)arg_ptr(NULL, (size_t)A.stats.nr_cpus *
							  A.stats.cpu_stats_size);
	if (coin(2))
		A.stats.__reserved = 0;
	count(K_STATS, ioc(MEMMON_IOC_GET_STATS, &A, sizeof(A.stats) + 64));
}

static void op_mark(void)
{
	static const uint32_t lens[] = { 0, 1, 8, 255, MEMMON_MARK_MAX, MEMMON_MARK_MAX + 1,
					 4096, 0xffffffffU };
	char payload[MEMMON_MARK_MAX + 64];

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (char)rnd();
	arg_reset();
	A.mark.size = fz_size(sizeof(A.mark));
	A.mark.flags = coin(4) ? (uint32_t)rnd() : (coin(2) ? MEMMON_MARK_WATCHERS : 0);
	A.mark.len = coin(2) ? rn(MEMMON_MARK_MAX + 1) : lens[rn(8)];
	/* The payload first: arg_ptr may hand out the same buffer twice. */
	A.mark.data = (uint64_t)(uintptr_t)arg_ptr(payload, sizeof(payload));
	if (A.mark.data == (uint64_t)(uintptr_t)W.good)
		A.mark.data += 4096;	/* keep it apart from the struct */
	if (coin(2))
		A.mark.__reserved = 0;
	count(K_MARK, ioc(MEMMON_IOC_MARK, &A, sizeof(A.mark) + 64));
}

/* An ioctl number that is not quite one of ours, or ours with no argument. */
static void op_badioc(void)
{
	static const unsigned long ours[] = {
		MEMMON_IOC_GET_INFO, MEMMON_IOC_CONFIGURE, MEMMON_IOC_WATCH_ADD,
		MEMMON_IOC_WATCH_DEL, MEMMON_IOC_WATCH_LIST, MEMMON_IOC_SET_EVENTS,
		MEMMON_IOC_ENABLE, MEMMON_IOC_DISABLE, MEMMON_IOC_GET_STATS,
		MEMMON_IOC_MARK,
	};
	unsigned long cmd = ours[rn(10)];

	switch (rn(5)) {
	case 0:	/* another size */
		cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), rn(1 << 14));
		break;
	case 1:	/* another direction */
		cmd = _IOC(rn(4), _IOC_TYPE(cmd), _IOC_NR(cmd), _IOC_SIZE(cmd));
		break;
	case 2:	/* a number past ours */
		cmd = _IOC(rn(4), MEMMON_IOC_MAGIC, 0x0a + rn(0xf6), rn(512));
		break;
	case 3:	/* another magic */
		cmd = _IOC(_IOC_DIR(cmd), rn(256), _IOC_NR(cmd), _IOC_SIZE(cmd));
		break;
	default:
		cmd = (unsigned long)rnd();
		break;
	}
	arg_reset();
	count(K_BADIOC, ioc(cmd, &A, 4096));
}

static void op_enable(bool on)
{
	count(on ? K_ENABLE : K_DISABLE,
	      ioctl(any_fd(), on ? MEMMON_IOC_ENABLE : MEMMON_IOC_DISABLE,
		    coin(4) ? (void *)(uintptr_t)rnd() : NULL));
}

/* ------------------------------------------------------------------
 * Mappings, all inside W.resv
 */

/*
 * Reserve again the holes a call may have left in a range of our slots:
 * nothing else maps into a slot, and the worker is one thread, so nothing
 * can have taken a hole meanwhile. msync() fails with ENOMEM on a range
 * with a hole; a part that is still our mapping is left as it is (a
 * MAP_FIXED over part of one would be refused: memmon's VMAs do not split).
 */
static void rereserve(char *p, size_t len)
{
	size_t half;

	if (!msync(p, len, MS_ASYNC))
		return;
	if (mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		 MAP_FIXED_NOREPLACE, -1, 0) != MAP_FAILED)
		return;
	if (errno != EEXIST)
		MM_DIE("re-reserve %p+%zu", (void *)p, len);
	if (len <= (size_t)W.page)
		return;
	half = len / (size_t)W.page / 2 * (size_t)W.page;
	rereserve(p, half);
	rereserve(p + half, len - half);
}

static size_t pages(uint32_t max)
{
	return (size_t)(1 + rn(max)) * (size_t)W.page;
}

/* A page-aligned sub-range [*off, *off + *len) of slot @s. */
static void subrange(size_t *off, size_t *len)
{
	uint32_t npg = (uint32_t)(SLOT / (size_t)W.page);
	uint32_t a = coin(2) ? 0 : rn(coin(2) ? 8 : npg);

	*off = (size_t)a * (size_t)W.page;
	*len = (size_t)(1 + rn(coin(2) ? 8 : npg - a)) * (size_t)W.page;
	if (*off + *len > SLOT)
		*len = SLOT - *off;
}

static void op_mmap(void)
{
	struct fdslot *f = pick_fd();
	uint32_t s = rn(NSLOT);
	size_t len;
	off_t off;
	int prot, flags;
	void *p;

	if (!f)
		return;
	prot = coin(3) ? (int)rn(8) : PROT_READ;
	flags = (coin(6) ? MAP_PRIVATE : MAP_SHARED) | MAP_FIXED |
		(coin(8) ? MAP_POPULATE : 0);
	/* Half of them as a consumer would map, to reach the rings. */
	if (coin(2)) {
		bool cons = coin(2);

		len = cons ? f->info.consumer_size : f->info.producer_size;
		off = cons ? 0 : (off_t)f->info.producer_offset;
		if (cons && coin(2))
			prot |= PROT_WRITE;
		if (coin(2))
			flags = (flags & ~MAP_PRIVATE) | MAP_SHARED;
		goto map;
	}
	switch (rn(6)) {
	case 0: len = f->info.consumer_size; break;
	case 1: len = f->info.producer_size; break;
	case 2: len = (size_t)f->info.ring_stride; break;
	case 3: len = 0; break;
	default: len = pages(coin(2) ? 4 : 4096); break;
	}
	if (!len && coin(2))
		len = (size_t)W.page;
	switch (rn(7)) {
	case 0: off = 0; break;
	case 1: case 2: off = (off_t)f->info.producer_offset; break;
	case 3: off = (off_t)(f->info.producer_offset + (uint64_t)W.page * rn(16)); break;
	case 4: off = (off_t)((uint64_t)W.page * rn(1 << 16)); break;
	case 5: off = (off_t)(fz_u64() & ~((uint64_t)W.page - 1) & 0x7fffffffffffULL); break;
	default: off = (off_t)((uint64_t)W.page * rn(4)); break;
	}
map:
	if (len > SLOT)
		len = SLOT;
	p = mmap(W.resv + s * SLOT, len, prot, flags, f->fd, off);
	count(K_MMAP, p == MAP_FAILED ? -1 : 0);
	if (p != MAP_FAILED)
		W.used[s] = true;
	else
		/* A failed MAP_FIXED may already have unmapped the range. */
		rereserve(W.resv + s * SLOT, len ? len : (size_t)W.page);
}

static uint32_t used_slot(void)
{
	for (int i = 0; i < 8; i++) {
		uint32_t s = rn(NSLOT);

		if (W.used[s])
			return s;
	}
	return rn(NSLOT);
}

static void op_mprotect(void)
{
	uint32_t s = used_slot();
	size_t off, len;

	subrange(&off, &len);
	count(K_MPROTECT, mprotect(W.resv + s * SLOT + off, len, (int)rn(8)));
}

static void op_mremap(void)
{
	uint32_t s = used_slot(), t = rn(NSLOT);
	char *old;
	size_t off, len, nlen;
	void *p;

	subrange(&off, &len);
	old = W.resv + s * SLOT + off;
	nlen = coin(2) ? len : pages(coin(2) ? 8 : 4096);
	if (nlen > SLOT)
		nlen = SLOT;
	if (t != s && coin(2)) {
		p = mremap(old, len, nlen, MREMAP_MAYMOVE | MREMAP_FIXED, W.resv + t * SLOT);
		count(K_MREMAP, p == MAP_FAILED ? -1 : 0);
		if (p != MAP_FAILED) {
			W.used[t] = true;
			rereserve(old, len);
		}
		return;
	}
	/* In place: only a shrink can work, the reservation follows. */
	if (nlen > len && coin(2))
		nlen = len / 2 ? (len / 2 + (size_t)W.page - 1) / (size_t)W.page * (size_t)W.page
			       : len;
	p = mremap(old, len, nlen, 0);
	count(K_MREMAP, p == MAP_FAILED ? -1 : 0);
	if (p != MAP_FAILED && nlen < len)
		rereserve(old + nlen, len - nlen);
}

static void op_munmap(void)
{
	uint32_t s = used_slot();
	size_t off, len;
	long r;

	if (coin(2)) {
		off = 0;
		len = SLOT;
	} else {
		subrange(&off, &len);
	}
	r = munmap(W.resv + s * SLOT + off, len);
	count(K_MUNMAP, r);
	if (!r) {
		rereserve(W.resv + s * SLOT + off, len);
		if (len == SLOT)
			W.used[s] = false;
	}
}

static void op_madvise(void)
{
	static const int advice[] = {
		MADV_DONTNEED, MADV_DOFORK, MADV_DONTFORK, MADV_WILLNEED,
		MADV_REMOVE, MADV_DONTDUMP, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
		MADV_FREE, MADV_COLD, MADV_PAGEOUT, MADV_WIPEONFORK, MADV_KEEPONFORK,
	};
	uint32_t s = used_slot();
	size_t off, len;

	subrange(&off, &len);
	count(K_MADVISE, madvise(W.resv + s * SLOT + off, len,
				 advice[rn(sizeof(advice) / sizeof(advice[0]))]));
}

/* Write garbage where consumer positions are, or anywhere in a slot. */
static void op_scribble(void)
{
	static const uint64_t vals[] = { 0, 1, 8, 4096, ~0ULL, 1ULL << 63, ~0ULL - 7 };
	uint32_t s = used_slot();
	volatile uint64_t *volatile p;
	int sig;

	if (coin(2))
		p = (uint64_t *)(W.resv + s * SLOT) + rn(MAX_CPUS) * (MEMMON_CONSUMER_STRIDE / 8);
	else
		p = (uint64_t *)(W.resv + s * SLOT) + rn((uint32_t)(SLOT / 8 / 64));
	W.c->calls[K_SCRIBBLE]++;
	touching = 1;
	sig = sigsetjmp(touch_jmp, 1);
	if (!sig) {
		uint64_t v = coin(2) ? vals[rn(7)] : rnd();

		/* Near what is there now, as a confused consumer would write. */
		if (coin(3))
			v = *p + (rnd() % 65536) - 32768;
		*p = v;
	} else {
		W.c->err[K_SCRIBBLE][sig == SIGBUS ? ERR_BUS : ERR_SEGV]++;
	}
	touching = 0;
}

/* Read the producer pages, as a consumer that walks records would. */
static void op_peek(void)
{
	uint32_t s = used_slot();
	const volatile uint64_t *p = (const uint64_t *)(W.resv + s * SLOT);
	uint64_t sum = 0;
	int sig;

	W.c->calls[K_PEEK]++;
	touching = 1;
	sig = sigsetjmp(touch_jmp, 1);
	if (!sig) {
		size_t at = rn((uint32_t)(SLOT / 8));

		for (int i = 0; i < 64; i++)
			sum += p[(at + (size_t)i * 509) % (SLOT / 8)];
		if (sum == 42)
			W.c->calls[K_PEEK]++;
	} else {
		W.c->err[K_PEEK][sig == SIGBUS ? ERR_BUS : ERR_SEGV]++;
	}
	touching = 0;
}

/*
 * A timer that breaks a blocking call out with EINTR: it repeats, so a
 * signal that comes before the call has started does not leave it asleep.
 */
static void arm(long usec)
{
	struct itimerval it = { .it_value = { 0, usec }, .it_interval = { 0, usec } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static void op_read(void)
{
	static const size_t lens[] = { 0, 1, 8, 31, 32, 64, 4096, 65536, 1 << 20 };
	size_t len = coin(8) ? (size_t)rnd() : lens[rn(9)];
	void *buf = arg_ptr(NULL, len);
	ssize_t r;

	arm(2000 + rn(8000));
	r = read(any_fd(), buf, len);
	arm(0);
	count(K_READ, r);
}

static void op_poll(void)
{
	struct pollfd p[3];
	int n = 1 + (int)rn(3);

	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = any_fd(), .events = (short)(coin(2) ? POLLIN : rnd()) };
	count(K_POLL, poll(p, (nfds_t)n, (int)rn(4)));
}

static const char *const proc_files[] = {
	"/proc/memmon/watch-pids", "/proc/memmon/events", "/proc/memmon/stats",
};

static void op_proc_read(void)
{
	int fd = open(proc_files[rn(3)], O_RDONLY | O_CLOEXEC | (coin(2) ? O_NONBLOCK : 0));
	ssize_t r = -1;

	if (fd >= 0) {
		arm(2000 + rn(8000));
		r = read(fd, W.good, coin(2) ? 4096 : 1 + rn(64));
		arm(0);
		close(fd);
	}
	count(K_PROC_READ, r);
}

static void op_proc_write(void)
{
	char text[4200];
	size_t len;
	ssize_t r = -1;
	int fd;

	switch (rn(8)) {
	case 0: len = (size_t)snprintf(text, sizeof(text), "%u\n", fz_pid()); break;
	case 1: len = (size_t)snprintf(text, sizeof(text), "-%u\n", fz_pid()); break;
	case 2: len = (size_t)snprintf(text, sizeof(text), "%u %u\n", fz_pid(), fz_pid()); break;
	case 3: len = (size_t)snprintf(text, sizeof(text), "99999999999999999999999\n"); break;
	case 4: len = (size_t)snprintf(text, sizeof(text), "\n"); break;
	case 5:
		len = 1 + rn(sizeof(text) - 1);
		memset(text, '1', len);
		break;
	default:
		len = 1 + rn(64);
		for (size_t i = 0; i < len; i++)
			text[i] = (char)rnd();
		break;
	}
	fd = open(proc_files[coin(4) ? rn(3) : 0], O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		r = write(fd, text, len);
		close(fd);
	}
	count(K_PROC_WRITE, r);
}

static void step(bool may_fork);

/* A child inherits the sessions and whatever mappings the advice let it. */
static void op_fork(void)
{
	pid_t c;
	int st;

	W.c->calls[K_FORK]++;
	c = fork();
	if (c < 0) {
		W.c->err[K_FORK][errno < ERR_SEGV ? errno : 0]++;
		return;
	}
	if (!c) {
		rng_state ^= (uint64_t)getpid() << 32;
		for (int i = 0; i < 40; i++)
			step(false);
		_exit(0);
	}
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return;
	if (WIFSIGNALED(st))
		W.c->fork_bad++;
}

static void step(bool may_fork)
{
	switch (rn(34)) {
	case 0: case 1: op_open(); break;
	case 2: op_dup(); break;
	case 3: op_close(); break;
	case 4: op_info(); break;
	case 5: case 6: op_config(); break;
	case 7: case 8: op_watch(K_WADD); break;
	case 9: op_watch(K_WDEL); break;
	case 10: op_wlist(); break;
	case 11: op_events(); break;
	case 12: case 13: op_enable(true); break;
	case 14: op_enable(false); break;
	case 15: op_stats(); break;
	case 16: op_mark(); break;
	case 17: op_badioc(); break;
	case 18: case 19: case 20: op_mmap(); break;
	case 21: op_mprotect(); break;
	case 22: op_mremap(); break;
	case 23: op_munmap(); break;
	case 24: op_madvise(); break;
	case 25: case 26: op_scribble(); break;
	case 27: op_peek(); break;
	case 28: case 29: op_read(); break;
	case 30: op_poll(); break;
	case 31:
		if (may_fork && coin(4))
			op_fork();
		break;
	case 32: op_proc_read(); break;
	default: op_proc_write(); break;
	}
}

static int become_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int worker(int id, uint64_t seed, double end)
{
	struct sigaction sa = { .sa_handler = on_fault };

	W.c = &sh->w[id];
	W.root = id % 2 == 0;
	W.page = sysconf(_SC_PAGESIZE);
	rng_state = seed ^ (0x632be59bd9b4e019ULL * (uint64_t)(id + 1));
	for (int i = 0; i < NFD; i++)
		W.fds[i].fd = -1;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sa.sa_handler = on_alarm;	/* no SA_RESTART: EINTR */
	sigaction(SIGALRM, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!W.root && become_nobody())
		return 2;
	W.resv = mmap(NULL, NSLOT * SLOT, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	W.arena = mmap(NULL, 4 * W.page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	W.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	W.good = mmap(NULL, GOOD_BYTES, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (W.resv == MAP_FAILED || W.arena == MAP_FAILED || W.good == MAP_FAILED ||
	    W.null_fd < 0)
		return 3;
	memset(W.arena + 2 * W.page, 0x5a, W.page);
	if (mprotect(W.arena + W.page, W.page, PROT_NONE) ||
	    mprotect(W.arena + 2 * W.page, W.page, PROT_READ) ||
	    mprotect(W.arena + 3 * W.page, W.page, PROT_NONE))
		return 4;
	while (now() < end)
		for (int i = 0; i < 64; i++)
			step(true);
	W.c->done = 1;
	return 0;
}

/* ------------------------------------------------------------------
 * The churn: a nobody workload that the root session watches.
 */

static void publish(pid_t pid)
{
	uint32_t n = sh->npids;

	sh->pids[n % NPIDS] = pid;
	__atomic_store_n(&sh->npids, n + 1, __ATOMIC_RELEASE);
}

static void touch_pages(char *p, size_t len, long page)
{
	for (size_t i = 0; i < len; i += (size_t)page)
		p[i] = (char)i;
}

static int image_main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 16 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	touch_pages(p, 16 * page, page);
	return 0;
}

static void churn_child(long page)
{
	size_t len = (size_t)(1 + rn(64)) * (size_t)page;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		touch_pages(p, len, page);
	if (coin(4)) {
		pid_t g = fork();

		if (!g)
			_exit(0);
		if (g > 0)
			waitpid(g, NULL, 0);
	}
	_exit(0);
}

static int churn(uint64_t seed, int go)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat stb;
	int fd, fpages;
	char c;

	rng_state = seed ^ 0xc0ffee;
	if (read(go, &c, 1) != 1)
		return 1;
	close(go);
	fd = open(img_plain, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &stb))
		MM_DIE("fstat %s", img_plain);
	fpages = fd >= 0 ? (int)(stb.st_size / page) : 0;
	while (!sh->stop) {
		uint32_t what = rn(20);
		size_t len = (size_t)(1 + rn(32)) * (size_t)page;
		char *p;
		pid_t k;

		if (what < 8) {
			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				continue;
			touch_pages(p, len, page);
			if (coin(2))
				mprotect(p, len, PROT_READ);
			if (coin(2))
				madvise(p, len, MADV_DONTNEED);
			munmap(p, len);
		} else if (what < 11 && fpages > 0) {
			/* Whole pages of the file only: past its end is SIGBUS. */
			p = mmap(NULL, (size_t)fpages * page, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED)
				continue;
			for (int i = 0; i < fpages; i += 1 + (int)rn(4))
				(void)*(volatile char *)(p + i * page);
			if (coin(4))
				madvise(p, (size_t)fpages * page, MADV_DONTNEED);
			munmap(p, (size_t)fpages * page);
		} else if (what < 13) {
			p = sbrk(0);
			if (sbrk((intptr_t)len) != (void *)-1) {
				touch_pages(p, len, page);
				sbrk(-(intptr_t)len);
			}
		} else if (what < 16) {
			k = fork();
			if (!k)
				churn_child(page);
			if (k > 0)
				publish(k);
		} else if (what < 18) {
			const char *img = coin(3) ? img_suid : img_plain;

			k = fork();
			if (!k) {
				execl(img, img, "--image", (char *)NULL);
				_exit(127);
			}
			if (k > 0)
				publish(k);
		} else {
			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if (!mlock(p, len))
				munlock(p, len);
			msync(p, len, MS_SYNC);
			munmap(p, len);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

/* ------------------------------------------------------------------
 * The root session that watches the churn and accounts for everything.
 */

struct tally {
	uint64_t records[MAX_CPUS];	/* all but LOST */
	uint64_t lost[MAX_CPUS];	/* LOST counts */
	uint64_t faults, forks, execs, exits;
	long bad;
};

static struct mm_map acct_map;
static struct tally tally;
static volatile int draining = 1;
static int ncpus;

static void tally_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	struct tally *t = arg;

	if (rec->cpu != cpu || cpu >= MAX_CPUS) {
		t->bad++;
		return;
	}
	switch (rec->type) {
	case MEMMON_REC_LOST:
		t->lost[cpu] += ((const struct memmon_rec_lost *)rec)->count;
		return;
	case MEMMON_REC_FAULT: t->faults++; break;
	case MEMMON_REC_FORK: t->forks++; break;
	case MEMMON_REC_EXEC: t->execs++; break;
	case MEMMON_REC_EXIT: t->exits++; break;
	default: break;
	}
	t->records[cpu]++;
}

static void *drain(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&draining, __ATOMIC_ACQUIRE)) {
		for (int cpu = 0; cpu < ncpus; cpu++)
			if (mm_drain_cpu(&acct_map, cpu, tally_rec, &tally) < 0)
				tally.bad++;
		usleep(1000);
	}
	return NULL;
}

/* A session of the caller: what its user holds now. */
static int user_use(uint32_t *sessions, uint64_t *ring_bytes)
{
	struct memmon_info info;
	int fd = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0 || mm_get_info(fd, &info))
		return -1;
	*sessions = info.user_sessions;
	*ring_bytes = info.user_ring_bytes;
	close(fd);
	return 0;
}

struct use {
	int r;
	uint32_t sessions;
	uint64_t ring_bytes;
};

/* What root or nobody holds, seen from a session of its own. */
static struct use user_now(bool nobody)
{
	struct use u = { -1, 0, 0 };
	int p[2], st;
	pid_t c;

	if (pipe(p))
		MM_DIE("pipe");
	c = fork();
	if (!c) {
		close(p[0]);
		if (nobody && become_nobody())
			_exit(1);
		u.r = user_use(&u.sessions, &u.ring_bytes);
		_exit(write(p[1], &u, sizeof(u)) == sizeof(u) ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &u, sizeof(u)) != sizeof(u))
		u.r = -1;
	close(p[0]);
	waitpid(c, &st, 0);
	return u;
}

static void check_user(bool nobody, struct use before)
{
	struct use u = user_now(nobody);

	VT_OK(before.r == 0 && u.r == 0 && u.sessions == before.sessions &&
	      u.ring_bytes == before.ring_bytes,
	      "%s: the user's charges are what they were before the run (%u sessions, "
	      "%llu ring bytes; before %u, %llu)", nobody ? "nobody" : "root", u.sessions,
	      (unsigned long long)u.ring_bytes, before.sessions,
	      (unsigned long long)before.ring_bytes);
}

/*
 * /proc/memmon's session lives as long as the module, charged to the root
 * user that used it first: make it now, with its rings (enabled once), so
 * that root's charges before and after the run can be compared exactly.
 */
static void proc_session_settle(void)
{
	char line[32];
	int fd = open(proc_files[0], O_WRONLY | O_CLOEXEC);
	int len = snprintf(line, sizeof(line), "%d\n", getpid());

	if (fd < 0 || write(fd, line, (size_t)len) != len)
		MM_DIE("write %s", proc_files[0]);
	len = snprintf(line, sizeof(line), "-%d\n", getpid());
	if (write(fd, line, (size_t)len) != len)
		MM_DIE("write %s", proc_files[0]);
	close(fd);
}

/* ------------------------------------------------------------------ */

static void copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	char buf[65536];
	ssize_t n;

	if (in < 0 || out < 0)
		MM_DIE("copy %s to %s", from, to);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			MM_DIE("write %s", to);
	if (n < 0 || close(out) || chmod(to, mode))
		MM_DIE("copy %s", to);
	close(in);
}

static void print_counts(int nworkers)
{
	static const char *const pseudo[] = { [ERR_SEGV - ERR_SEGV] = "SIGSEGV",
					      [ERR_BUS - ERR_SEGV] = "SIGBUS" };
	struct counts all;
	uint64_t total = 0, fork_bad = 0;

	memset(&all, 0, sizeof(all));
	for (int i = 0; i < nworkers; i++) {
		for (int k = 0; k < K_NR; k++) {
			all.calls[k] += sh->w[i].calls[k];
			for (int e = 0; e < NERR; e++)
				all.err[k][e] += sh->w[i].err[k][e];
		}
		fork_bad += sh->w[i].fork_bad;
	}
	for (int k = 0; k < K_NR; k++) {
		char line[2048] = "";
		size_t at = 0;
		uint64_t errs = 0;

		for (int e = 0; e < NERR; e++) {
			if (!all.err[k][e])
				continue;
			errs += all.err[k][e];
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %s %llu",
					       e >= ERR_SEGV ? pseudo[e - ERR_SEGV] :
					       e ? strerrorname_np(e) : "?",
					       (unsigned long long)all.err[k][e]);
			if (at >= sizeof(line))
				break;
		}
		total += all.calls[k];
		printf("# %-12s %10llu calls %10llu ok%s\n", kind_name[k],
		       (unsigned long long)all.calls[k],
		       (unsigned long long)(all.calls[k] - errs), line);
	}
	printf("# all          %10llu calls\n", (unsigned long long)total);
	VT_OK(fork_bad == 0, "no forked child of a worker died of a signal (%llu)",
	      (unsigned long long)fork_bad);
	VT_OK(total > 0, "the workers made calls (%llu)", (unsigned long long)total);
}

/* Where a stuck process and its children sleep, for the log. */
static void show_stuck(pid_t pid)
{
	char path[96], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			printf("# pid %d, %s:\n%s", pid, path, buf);
		}
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
		show_stuck(atoi(t));
}

int main(int argc, char **argv)
{
	uint64_t seed = 0;
	double seconds = 30, end;
	int nworkers = 6, go[2], st;
	const char *dir = NULL;
	struct memmon_cpu_stats cs[MAX_CPUS];
	pid_t churn_pid, wpid[MAX_WORKERS];
	pthread_t th;
	struct use root_before, nobody_before;
	int afd, i, all_ended = 1, exact = 1;
	uint64_t records = 0, lost = 0;
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "--image"))
		return image_main();
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--workers"))
			nworkers = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else
			break;
	}
	if (i != argc || !dir || nworkers < 1 || nworkers > MAX_WORKERS || seconds <= 0) {
		fprintf(stderr, "usage: w_fuzz --dir D [--seed S] [--seconds N] [--workers 1-%d]\n",
			MAX_WORKERS);
		return 2;
	}
	if (!seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# seed %llu (w_fuzz --seed %llu --seconds %g --workers %d)\n",
	       (unsigned long long)seed, (unsigned long long)seed, seconds, nworkers);
	ncpus = mm_nr_cpus();
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		MM_DIE("/proc/self/exe");
	self[n] = 0;
	snprintf(img_plain, sizeof(img_plain), "%s/plain", dir);
	snprintf(img_suid, sizeof(img_suid), "%s/suid", dir);
	copy_file(self, img_plain, 0755);
	copy_file(self, img_suid, 04755);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		MM_DIE("shared memory");

	proc_session_settle();
	root_before = user_now(false);
	nobody_before = user_now(true);
	VT_OK(nobody_before.r == 0 && nobody_before.sessions == 1 && !nobody_before.ring_bytes,
	      "nobody holds nothing before the run but the session asking (%u, %llu)",
	      nobody_before.sessions, (unsigned long long)nobody_before.ring_bytes);

	/* The churn, held until the session watches it. */
	if (pipe(go))
		MM_DIE("pipe");
	churn_pid = fork();
	if (!churn_pid) {
		close(go[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setpgid(0, 0) || become_nobody())
			_exit(2);
		_exit(churn(seed, go[0]));
	}
	close(go[0]);
	publish(churn_pid);

	afd = mm_open();
	VT_SUCCESS(mm_configure(afd, 16384, 0), "the watching session: 16 KiB rings (losses are likely)");
	VT_SUCCESS(mm_watch(afd, MEMMON_IOC_WATCH_ADD, (uint32_t)churn_pid,
			    MEMMON_WATCH_FOLLOW_CHILDREN), "it watches the churn and its children");
	VT_SUCCESS(ioctl(afd, MEMMON_IOC_ENABLE), "ENABLE");
	mm_map(afd, &acct_map);
	pthread_create(&th, NULL, drain, NULL);
	if (write(go[1], "g", 1) != 1)
		MM_DIE("start the churn");
	close(go[1]);

	end = now() + seconds;
	for (i = 0; i < nworkers; i++) {
		wpid[i] = fork();
		if (!wpid[i])
			_exit(worker(i, seed, end));
	}
	/* Each worker ends by itself; one still there well after is stuck. */
	for (i = 0; i < nworkers; i++) {
		pid_t r;

		while ((r = waitpid(wpid[i], &st, WNOHANG)) == 0 && now() < end + 120)
			usleep(100000);
		if (!r) {
			printf("# worker %d (pid %d) still running 120 s after the end: killed\n",
			       i, wpid[i]);
			show_stuck(wpid[i]);
			kill(wpid[i], SIGKILL);
			waitpid(wpid[i], &st, 0);
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) || !sh->w[i].done) {
			printf("# worker %d (%s): %s %d\n", i, i % 2 ? "nobody" : "root",
			       WIFEXITED(st) ? "exit status" : "signal",
			       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			all_ended = 0;
		}
	}
	VT_OK(all_ended, "all %d workers (%d root, %d nobody) ran to the end and exited 0",
	      nworkers, (nworkers + 1) / 2, nworkers / 2);

	sh->stop = 1;
	waitpid(churn_pid, &st, 0);
	kill(-churn_pid, SIGKILL);
	VT_OK(WIFEXITED(st) && !WEXITSTATUS(st), "the churn ran to the end (status 0x%x)", st);

	/* Drain, then one empty MARK per CPU carries a pending loss out. */
	__atomic_store_n(&draining, 0, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	for (i = 0; i < ncpus; i++) {
		mm_drain_cpu(&acct_map, i, tally_rec, &tally);
		mm_pin(i);
		mm_mark(afd, 0, NULL, 0);
		mm_drain_cpu(&acct_map, i, tally_rec, &tally);
	}
	VT_SUCCESS(mm_stats(afd, cs, MAX_CPUS), "GET_STATS");
	for (i = 0; i < ncpus; i++) {
		printf("# cpu %d: produced %llu delivered %llu lost %llu; read %llu records, "
		       "LOST %llu\n", i, (unsigned long long)cs[i].produced,
		       (unsigned long long)cs[i].delivered, (unsigned long long)cs[i].lost,
		       (unsigned long long)tally.records[i], (unsigned long long)tally.lost[i]);
		if (cs[i].produced != cs[i].delivered + cs[i].lost ||
		    cs[i].delivered != tally.records[i] || cs[i].lost != tally.lost[i])
			exact = 0;
		records += tally.records[i];
		lost += tally.lost[i];
	}
	VT_OK(exact && !tally.bad,
	      "exact per CPU: produced = delivered + lost, delivered = records read, "
	      "lost = LOST counts (%ld malformed)", tally.bad);
	printf("# the churn: %llu records (%llu faults, %llu forks, %llu execs, %llu exits), "
	       "%llu lost\n", (unsigned long long)records, (unsigned long long)tally.faults,
	       (unsigned long long)tally.forks, (unsigned long long)tally.execs,
	       (unsigned long long)tally.exits, (unsigned long long)lost);
	VT_OK(tally.faults && tally.forks && tally.execs && tally.exits,
	      "the churn's faults, forks, execs and exits were recorded");
	mm_unmap(&acct_map);
	close(afd);

	print_counts(nworkers);
	check_user(false, root_before);
	check_user(true, nobody_before);
	unlink(img_plain);
	unlink(img_suid);
	return vt_exit();
}
