// SPDX-License-Identifier: GPL-2.0
/*
 * Every ioctl of /dev/memmon with valid input and with each kind of
 * invalid input, the exact errno each time (uapi/linux/memmon.h).
 */
#include <signal.h>
#include <sys/wait.h>

#include "mmtest.h"

#define PAGE	((uint32_t)sysconf(_SC_PAGESIZE))

/* An address that is never mapped. */
#define BAD_PTR	((void *)8)

static char big[65536];

static void test_dispatch(int fd)
{
	/* Any struct size in the ioctl number: dispatch is on type and nr. */
	struct memmon_info info = { .size = sizeof(info) };

	/* A command of another type is not ours. */
	VT_ERRNO(ioctl(fd, _IO('x', 0x00)), ENOTTY, "foreign ioctl type: ENOTTY");
	/* An unused number of our type is unknown. */
	VT_ERRNO(ioctl(fd, _IO(MEMMON_IOC_MAGIC, 0x7f)), ENOTTY, "unknown ioctl nr: ENOTTY");
	/* GET_INFO encoded with another size still reaches GET_INFO. */
	VT_SUCCESS(ioctl(fd, _IOWR(MEMMON_IOC_MAGIC, 0x00, char[200]), &info),
		   "GET_INFO with a different encoded size is dispatched");
	/* And it filled the struct. */
	VT_OK(info.abi_major == MEMMON_ABI_MAJOR, "... and answered");
}

static void test_get_info(int fd)
{
	struct memmon_info info;
	uint32_t *grown;

	/* A current-size query succeeds. */
	VT_SUCCESS(mm_get_info(fd, &info), "GET_INFO");
	/* The ABI version is this header's. */
	VT_OK(info.abi_major == MEMMON_ABI_MAJOR && info.abi_minor == MEMMON_ABI_MINOR,
	      "GET_INFO: ABI %u.%u", info.abi_major, info.abi_minor);
	/* size says how much was filled. */
	VT_OK(info.size == sizeof(info), "GET_INFO: size %u", info.size);
	/* The transport features are all there. */
	VT_OK((info.features & (MEMMON_FEAT_MMAP | MEMMON_FEAT_READ | MEMMON_FEAT_POLL |
				MEMMON_FEAT_MARK)) ==
	      (MEMMON_FEAT_MMAP | MEMMON_FEAT_READ | MEMMON_FEAT_POLL | MEMMON_FEAT_MARK),
	      "GET_INFO: features 0x%llx", (unsigned long long)info.features);
	/* MARK is always a supported event. */
	VT_OK(info.events_supported & (1ULL << MEMMON_EV_MARK), "GET_INFO: EV_MARK supported");
	/* One ring per possible CPU. */
	VT_OK((int)info.nr_cpus >= mm_nr_cpus(), "GET_INFO: nr_cpus %u", info.nr_cpus);
	/* page_size is the system's. */
	VT_OK(info.page_size == PAGE, "GET_INFO: page_size");
	/* Limits from the design. */
	VT_OK(info.max_sessions == 64 && info.mark_max == MEMMON_MARK_MAX && info.max_watch > 0,
	      "GET_INFO: max_sessions 64, mark_max 256, max_watch %u", info.max_watch);
	/* The floor is 8 KiB (or a page), the sizes are ordered powers of two. */
	VT_OK(info.ring_size_min == (PAGE > 8192 ? PAGE : 8192) &&
	      info.ring_size_min <= info.ring_size_default &&
	      info.ring_size_default <= info.ring_size_max &&
	      !(info.ring_size_default & (info.ring_size_default - 1)),
	      "GET_INFO: ring sizes %llu <= %llu <= %llu",
	      (unsigned long long)info.ring_size_min,
	      (unsigned long long)info.ring_size_default,
	      (unsigned long long)info.ring_size_max);
	/* A fresh session has the default ring and a quarter-ring watermark. */
	VT_OK(info.ring_size == info.ring_size_default &&
	      info.wakeup_bytes == info.ring_size / 4, "GET_INFO: session defaults");
	/* The layout is the one the uapi header draws. */
	VT_OK(info.ring_data_offset == PAGE &&
	      info.ring_stride == PAGE + 2 * info.ring_size &&
	      info.consumer_size % PAGE == 0 &&
	      info.consumer_size >= info.nr_cpus * MEMMON_CONSUMER_STRIDE &&
	      info.producer_offset == info.consumer_size &&
	      info.producer_size == PAGE + info.nr_cpus * info.ring_stride,
	      "GET_INFO: layout");

	memset(&info, 0, sizeof(info));
	info.size = MEMMON_INFO_SIZE_VER0 - 8;
	/* Smaller than the first published size: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_INFO, &info), EINVAL, "GET_INFO size < VER0: EINVAL");
	/* A zero size (a caller that forgot it): EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_INFO, big), EINVAL, "GET_INFO size 0: EINVAL");
	*(uint32_t *)big = PAGE + 8;
	/* Larger than a page: E2BIG. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_INFO, big), E2BIG, "GET_INFO size > page: E2BIG");
	/* An unmapped argument: EFAULT. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_INFO, BAD_PTR), EFAULT, "GET_INFO bad pointer: EFAULT");

	/* A newer caller: bigger struct; the unknown tail comes back zero. */
	grown = calloc(1, sizeof(info) + 64);
	memset(grown, 0xa5, sizeof(info) + 64);
	grown[0] = sizeof(info) + 64;
	/* A bigger struct is accepted. */
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_GET_INFO, grown), "GET_INFO with a grown struct");
	/* size says what the kernel knows; the tail is zeroed. */
	VT_OK(grown[0] == sizeof(info) &&
	      !memcmp((char *)grown + sizeof(info), (char[64]){ 0 }, 64),
	      "GET_INFO grown: size %u, tail zeroed", grown[0]);
	free(grown);
}

static void test_configure(void)
{
	struct memmon_info info;
	struct memmon_config c;
	int fd = mm_open();
	char *p;

	mm_info(fd, &info);
	/* Defaults (all zero) are accepted. */
	VT_SUCCESS(mm_configure(fd, 0, 0), "CONFIGURE defaults");
	/* The smallest ring, with a one-byte watermark. */
	VT_SUCCESS(mm_configure(fd, info.ring_size_min, 1), "CONFIGURE min ring, wakeup 1");
	mm_info(fd, &info);
	/* GET_INFO describes the configured session. */
	VT_OK(info.ring_size == info.ring_size_min && info.wakeup_bytes == 1 &&
	      info.ring_stride == PAGE + 2 * info.ring_size_min,
	      "GET_INFO follows CONFIGURE");
	/* The largest ring. */
	VT_SUCCESS(mm_configure(fd, info.ring_size_max, 0), "CONFIGURE max ring");
	/* The watermark may be half the ring. */
	VT_SUCCESS(mm_configure(fd, 65536, 32768), "CONFIGURE wakeup = ring/2");
	/* Not a power of two: EINVAL. */
	VT_ERRNO(mm_configure(fd, 3 * 8192, 0), EINVAL, "CONFIGURE ring 24 KiB: EINVAL");
	/* Below the floor: EINVAL. */
	VT_ERRNO(mm_configure(fd, info.ring_size_min / 2, 0), EINVAL, "CONFIGURE ring < min: EINVAL");
	/* Above the ceiling: EINVAL. */
	VT_ERRNO(mm_configure(fd, info.ring_size_max * 2, 0), EINVAL, "CONFIGURE ring > max: EINVAL");
	/* Watermark above half the ring: EINVAL. */
	VT_ERRNO(mm_configure(fd, 65536, 32769), EINVAL, "CONFIGURE wakeup > ring/2: EINVAL");

	c = (struct memmon_config){ .size = sizeof(c), .full_policy = MEMMON_FULL_OVERWRITE,
				    .wait_timeout_ms = 10 };
	/* ABI 1.3: the flight recorder (t_overwrite); a wait bound is FULL_WAIT's. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), EINVAL, "CONFIGURE OVERWRITE with a wait bound: EINVAL");
	c.wait_timeout_ms = 0;
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), "CONFIGURE OVERWRITE");
	c.full_policy = 7;
	/* An unknown policy: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), EINVAL, "CONFIGURE policy 7: EINVAL");
	c = (struct memmon_config){ .size = MEMMON_CONFIG_SIZE_VER0 - 8 };
	/* Smaller than VER0: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, &c), EINVAL, "CONFIGURE size < VER0: EINVAL");

	p = calloc(1, PAGE * 2);
	*(uint32_t *)p = sizeof(c) + 8;
	/* A grown struct with a zero tail is fine. */
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_CONFIGURE, p), "CONFIGURE grown struct, zero tail");
	p[sizeof(c) + 3] = 1;
	/* A tail the kernel does not know, not zero: E2BIG. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, p), E2BIG, "CONFIGURE non-zero unknown tail: E2BIG");
	*(uint32_t *)p = PAGE + 8;
	/* Larger than a page: E2BIG. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, p), E2BIG, "CONFIGURE size > page: E2BIG");
	free(p);
	/* An unmapped argument: EFAULT. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_CONFIGURE, BAD_PTR), EFAULT, "CONFIGURE bad pointer: EFAULT");

	/* ENABLE creates the rings... */
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE");
	/* ...after which CONFIGURE is refused: EBUSY. */
	VT_ERRNO(mm_configure(fd, 0, 0), EBUSY, "CONFIGURE after ENABLE: EBUSY");
	/* Even after DISABLE (the rings stay). */
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE");
	/* Still EBUSY. */
	VT_ERRNO(mm_configure(fd, 0, 0), EBUSY, "CONFIGURE after DISABLE: EBUSY");
	close(fd);

	fd = mm_open();
	mm_info(fd, &info);
	p = mmap(NULL, info.consumer_size, PROT_READ, MAP_PRIVATE, fd, 0);
	/* A refused mmap() (private) does not create the rings... */
	VT_OK(p == MAP_FAILED, "refused mmap");
	/* ...so CONFIGURE still works. */
	VT_SUCCESS(mm_configure(fd, info.ring_size_min, 0), "CONFIGURE after a refused mmap");
	mm_info(fd, &info);
	p = mmap(NULL, info.consumer_size, PROT_READ, MAP_SHARED, fd, 0);
	/* An accepted mmap() creates them. */
	VT_OK(p != MAP_FAILED, "mmap consumer");
	/* Then CONFIGURE is refused. */
	VT_ERRNO(mm_configure(fd, 0, 0), EBUSY, "CONFIGURE after mmap: EBUSY");
	munmap(p, info.consumer_size);
	close(fd);

	fd = mm_open();
	/* A MARK creates the rings too. */
	VT_SUCCESS(mm_mark(fd, 0, "x", 1), "MARK on a fresh session");
	/* Then CONFIGURE is refused. */
	VT_ERRNO(mm_configure(fd, 0, 0), EBUSY, "CONFIGURE after MARK: EBUSY");
	close(fd);
}

static void *thread_sleep(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static int list(int fd, struct memmon_watch_entry *e, uint32_t cap, uint32_t *count)
{
	struct memmon_watch_list l = {
		.size = sizeof(l), .count = cap, .entries = (uintptr_t)e,
	};
	int r = ioctl(fd, MEMMON_IOC_WATCH_LIST, &l);

	*count = l.count;
	return r;
}

static void test_watch(void)
{
	struct memmon_watch_entry e[8];
	struct memmon_watch w;
	int fd = mm_open(), fd2 = mm_open();
	pid_t child, tid = 0;
	pthread_t th;
	uint32_t n;
	int st;

	/* pid 0 is the caller's process. */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0, 0), "WATCH_ADD pid 0");
	/* The same process again: EEXIST. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_ADD, getpid(), 0), EEXIST,
		 "WATCH_ADD of a watched process: EEXIST");
	/* Another session may watch it too: sessions are independent. */
	VT_SUCCESS(mm_watch(fd2, MEMMON_IOC_WATCH_ADD, getpid(), 0), "WATCH_ADD in a second session");
	/* No such pid: ESRCH. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0x3ffffff0, 0), ESRCH, "WATCH_ADD of no pid: ESRCH");
	/* A pid beyond any pid_max: ESRCH. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0xfffffff0u, 0), ESRCH, "WATCH_ADD of pid 2^32-16: ESRCH");

	pthread_create(&th, NULL, thread_sleep, NULL);
	for (int i = 0; i < 100 && !tid; i++) {
		/* Find the thread's id in /proc/self/task. */
		char path[64];

		for (pid_t t = getpid() + 1; t < getpid() + 64; t++) {
			snprintf(path, sizeof(path), "/proc/self/task/%d", t);
			if (!access(path, F_OK)) {
				tid = t;
				break;
			}
		}
		if (!tid)
			usleep(10000);
	}
	/* A thread's id is not a process: ESRCH. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_ADD, tid, 0), ESRCH, "WATCH_ADD of a thread id (%d): ESRCH", tid);
	/* Nor for DEL, though its process is watched: ESRCH, not ENOENT. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_DEL, tid, 0), ESRCH, "WATCH_DEL of a thread id (%d): ESRCH", tid);
	pthread_cancel(th);
	pthread_join(th, NULL);

	/* An unknown flag: EINVAL. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_ADD, 1, 1u << 5), EINVAL, "WATCH_ADD unknown flag: EINVAL");
	w = (struct memmon_watch){ .size = sizeof(w), .pid = 1, .__reserved = 1 };
	/* A non-zero reserved field: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_WATCH_ADD, &w), EINVAL, "WATCH_ADD reserved != 0: EINVAL");
	w = (struct memmon_watch){ .size = 8, .pid = 1 };
	/* Smaller than VER0: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_WATCH_ADD, &w), EINVAL, "WATCH_ADD size < VER0: EINVAL");
	/* An unmapped argument: EFAULT. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_WATCH_ADD, BAD_PTR), EFAULT, "WATCH_ADD bad pointer: EFAULT");
	/* Root may watch init. */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, 1, MEMMON_WATCH_FOLLOW_CHILDREN), "WATCH_ADD pid 1, follow");

	/* The list holds both processes. */
	VT_SUCCESS(list(fd, e, 8, &n), "WATCH_LIST");
	/* Two entries: ours without FOLLOW, init with it. */
	VT_OK(n == 2 && ((e[0].pid == (uint32_t)getpid() && !e[0].flags &&
			  e[1].pid == 1 && e[1].flags == MEMMON_WATCH_FOLLOW_CHILDREN) ||
			 (e[1].pid == (uint32_t)getpid() && !e[1].flags &&
			  e[0].pid == 1 && e[0].flags == MEMMON_WATCH_FOLLOW_CHILDREN)),
	      "WATCH_LIST: %u entries", n);
	/* A capacity of one still counts every entry. */
	VT_OK(!list(fd, e, 1, &n) && n == 2, "WATCH_LIST capacity 1: count 2");
	/* Capacity 0 with no buffer: just the count. */
	VT_OK(!list(fd, NULL, 0, &n) && n == 2, "WATCH_LIST capacity 0: count 2");
	/* An unmapped entries buffer: EFAULT. */
	VT_ERRNO(list(fd, BAD_PTR, 8, &n), EFAULT, "WATCH_LIST bad entries: EFAULT");
	/* The second session's list is its own. */
	VT_OK(!list(fd2, e, 8, &n) && n == 1 && e[0].pid == (uint32_t)getpid(),
	      "WATCH_LIST of the second session: 1 entry");

	/* DEL of a watched process. */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_DEL, 1, 0), "WATCH_DEL pid 1");
	/* DEL again: ENOENT. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_DEL, 1, 0), ENOENT, "WATCH_DEL of an unwatched pid: ENOENT");
	/* DEL ignores flags (uapi). */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_DEL, 0, 1u << 7), "WATCH_DEL pid 0, any flags");
	/* DEL of no pid: ESRCH. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_DEL, 0x3ffffff0, 0), ESRCH, "WATCH_DEL of no pid: ESRCH");
	w = (struct memmon_watch){ .size = sizeof(w), .pid = 0, .__reserved = 9 };
	/* DEL with a non-zero reserved field: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_WATCH_DEL, &w), EINVAL, "WATCH_DEL reserved != 0: EINVAL");
	/* Deleting in one session leaves the other alone. */
	VT_OK(!list(fd, e, 8, &n) && n == 0 && !list(fd2, e, 8, &n) && n == 1,
	      "WATCH_DEL is per session");

	/* FOLLOW_CHILDREN while enabled: a child is watched from birth... */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0, MEMMON_WATCH_FOLLOW_CHILDREN),
		   "WATCH_ADD self, follow");
	/* (enable, so that the fork/exit hooks run once they exist) */
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE");
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	usleep(100000);
	/* A dead child leaves the list; a living one stays. */
	VT_OK(!list(fd, e, 8, &n) && n >= 1, "WATCH_LIST with a child: %u entries", n);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	/* After its death, only we remain. */
	VT_OK(!list(fd, e, 8, &n) && n == 1 && e[0].pid == (uint32_t)getpid(),
	      "WATCH_LIST after the child died: %u entries", n);
	close(fd);
	close(fd2);
}

static void test_events(void)
{
	struct memmon_events e;
	int fd = mm_open();

	/* Everything. */
	VT_SUCCESS(mm_set_events(fd, (1ULL << MEMMON_EV__COUNT) - 1,
				 (1ULL << MEMMON_SYS__COUNT) - 1), "SET_EVENTS all");
	/* Nothing. */
	VT_SUCCESS(mm_set_events(fd, 0, 0), "SET_EVENTS none");
	/* An unknown event bit: EINVAL. */
	VT_ERRNO(mm_set_events(fd, 1ULL << MEMMON_EV__COUNT, 0), EINVAL, "SET_EVENTS unknown event: EINVAL");
	/* An unknown syscall bit: EINVAL. */
	VT_ERRNO(mm_set_events(fd, 1, 1ULL << MEMMON_SYS__COUNT), EINVAL, "SET_EVENTS unknown syscall: EINVAL");
	e = (struct memmon_events){ .size = sizeof(e), .__reserved = 1 };
	/* A non-zero reserved field: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_SET_EVENTS, &e), EINVAL, "SET_EVENTS reserved != 0: EINVAL");
	e = (struct memmon_events){ .size = 16 };
	/* Smaller than VER0: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_SET_EVENTS, &e), EINVAL, "SET_EVENTS size < VER0: EINVAL");
	/* An unmapped argument: EFAULT. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_SET_EVENTS, BAD_PTR), EFAULT, "SET_EVENTS bad pointer: EFAULT");
	/* ENABLE, twice: the second is a no-op. */
	VT_OK(!ioctl(fd, MEMMON_IOC_ENABLE) && !ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE twice");
	/* SET_EVENTS while enabled. */
	VT_SUCCESS(mm_set_events(fd, 1ULL << MEMMON_EV_MARK, 0), "SET_EVENTS while enabled");
	/* DISABLE, twice. */
	VT_OK(!ioctl(fd, MEMMON_IOC_DISABLE) && !ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE twice");
	close(fd);
}

static void test_stats(void)
{
	struct memmon_cpu_stats cs[64];
	struct memmon_stats s;
	uint64_t *wide;
	int fd = mm_open(), n;

	n = mm_stats(fd, cs, 64);
	/* Before the rings exist: nr_cpus and zeros. */
	VT_OK(n >= mm_nr_cpus() && !cs[0].produced && !cs[0].delivered, "GET_STATS fresh: nr_cpus %d", n);
	mm_pin(0);
	mm_mark(fd, 0, "abc", 3);
	mm_stats(fd, cs, 64);
	/* One MARK on CPU 0: one event produced and delivered, 32 + 8 bytes. */
	VT_OK(cs[0].produced == 1 && cs[0].delivered == 1 && cs[0].lost == 0 &&
	      cs[0].bytes == 40, "GET_STATS after a MARK: %llu/%llu/%llu/%llu",
	      (unsigned long long)cs[0].produced, (unsigned long long)cs[0].delivered,
	      (unsigned long long)cs[0].lost, (unsigned long long)cs[0].bytes);

	s = (struct memmon_stats){ .size = sizeof(s), .nr_cpus = 0, .cpu_stats_size = 32 };
	/* Capacity 0: nr_cpus only. */
	VT_OK(!ioctl(fd, MEMMON_IOC_GET_STATS, &s) && (int)s.nr_cpus == n, "GET_STATS capacity 0");
	s = (struct memmon_stats){ .size = sizeof(s), .nr_cpus = 1, .cpus = (uintptr_t)cs };
	/* Element size 0: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_STATS, &s), EINVAL, "GET_STATS cpu_stats_size 0: EINVAL");
	s.cpu_stats_size = 12;
	/* Element size not a multiple of 8: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_STATS, &s), EINVAL, "GET_STATS cpu_stats_size 12: EINVAL");
	s.cpu_stats_size = 32;
	s.__reserved = 1;
	/* A non-zero reserved field: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_STATS, &s), EINVAL, "GET_STATS reserved != 0: EINVAL");
	s.__reserved = 0;
	s.cpus = (uintptr_t)BAD_PTR;
	/* An unmapped cpus buffer: EFAULT. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_STATS, &s), EFAULT, "GET_STATS bad cpus: EFAULT");
	/* An unmapped argument: EFAULT. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_STATS, BAD_PTR), EFAULT, "GET_STATS bad pointer: EFAULT");
	s = (struct memmon_stats){ .size = 16 };
	/* Smaller than VER0: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_GET_STATS, &s), EINVAL, "GET_STATS size < VER0: EINVAL");

	wide = malloc(2 * 48);
	memset(wide, 0xff, 2 * 48);
	s = (struct memmon_stats){ .size = sizeof(s), .nr_cpus = 2, .cpus = (uintptr_t)wide,
				   .cpu_stats_size = 48 };
	/* A newer, wider element: known part filled, the rest zeroed. */
	VT_OK(!ioctl(fd, MEMMON_IOC_GET_STATS, &s) && wide[0] == 1 && wide[4] == 0 &&
	      wide[5] == 0 && wide[6] == cs[1].produced, "GET_STATS 48-byte elements");
	free(wide);
	close(fd);
}

static void test_mark(void)
{
	char payload[MEMMON_MARK_MAX + 1], buf[4096];
	struct memmon_rec_mark *r = (void *)buf;
	struct memmon_mark m;
	int fd = mm_open();
	ssize_t n;

	memset(payload, 'p', sizeof(payload));
	mm_pin(0);
	/* An empty marker. */
	VT_SUCCESS(mm_mark(fd, 0, NULL, 0), "MARK len 0");
	/* The largest marker. */
	VT_SUCCESS(mm_mark(fd, 0, payload, MEMMON_MARK_MAX), "MARK len 256");
	/* One byte too many: EINVAL. */
	VT_ERRNO(mm_mark(fd, 0, payload, MEMMON_MARK_MAX + 1), EINVAL, "MARK len 257: EINVAL");
	/* An unknown flag: EINVAL. */
	VT_ERRNO(mm_mark(fd, 1u << 3, payload, 1), EINVAL, "MARK unknown flag: EINVAL");
	/* An unmapped payload: EFAULT. */
	VT_ERRNO(mm_mark(fd, 0, BAD_PTR, 16), EFAULT, "MARK bad payload: EFAULT");
	m = (struct memmon_mark){ .size = sizeof(m), .__reserved = 1 };
	/* A non-zero reserved field: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_MARK, &m), EINVAL, "MARK reserved != 0: EINVAL");
	m = (struct memmon_mark){ .size = 8 };
	/* Smaller than VER0: EINVAL. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_MARK, &m), EINVAL, "MARK size < VER0: EINVAL");
	/* An unmapped argument: EFAULT. */
	VT_ERRNO(ioctl(fd, MEMMON_IOC_MARK, BAD_PTR), EFAULT, "MARK bad pointer: EFAULT");

	n = read(fd, buf, sizeof(buf));
	/* Two records: 32 bytes, then 32 + 256. */
	VT_OK(n == 32 + 32 + 256, "read the two markers: %zd bytes", n);
	/* The first is empty, with our ids, on CPU 0. */
	VT_OK(r->hdr.type == MEMMON_REC_MARK && r->hdr.size == 32 && r->len == 0 &&
	      r->flags == 0 && r->hdr.cpu == 0 && r->hdr.tgid == (uint32_t)getpid() &&
	      r->hdr.tid == (uint32_t)mm_gettid() && r->hdr.time_ns, "first MARK record");
	r = (void *)(buf + 32);
	/* The second carries the payload. */
	VT_OK(r->hdr.size == 32 + 256 && r->len == 256 && !memcmp(r->data, payload, 256),
	      "second MARK record");
	close(fd);
}

int main(void)
{
	int fd = mm_open();

	test_dispatch(fd);
	test_get_info(fd);
	close(fd);
	test_configure();
	test_watch();
	test_events();
	test_stats();
	test_mark();
	/* ENABLE and DISABLE take no argument: any arg is ignored. */
	fd = mm_open();
	VT_OK(!ioctl(fd, MEMMON_IOC_ENABLE, BAD_PTR) && !ioctl(fd, MEMMON_IOC_DISABLE, BAD_PTR),
	      "ENABLE/DISABLE ignore their argument");
	close(fd);
	return vt_exit();
}
