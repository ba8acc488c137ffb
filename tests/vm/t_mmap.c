// SPDX-License-Identifier: GPL-2.0
/*
 * The mapping rules (uapi/linux/memmon.h, "The mapping"): the two exact
 * mappings work and show the documented layout; every other request and
 * every later change (write, exec, split, grow, move, fork) is refused; a
 * hostile consumer position costs only its own events.
 * Modelled on tools/testing/selftests/bpf/prog_tests/ringbuf.c.
 */
#include <signal.h>
#include <sys/wait.h>

#include "mmtest.h"

static long page;

static void test_layout(int fd)
{
	struct memmon_mmap_header *h;
	struct mm_map m;
	unsigned int cpu;
	int ok = 1;

	mm_map(fd, &m);
	h = m.prod;
	/* The header page describes the layout GET_INFO gave. */
	VT_OK(h->magic == MEMMON_MMAP_MAGIC && h->abi_major == MEMMON_ABI_MAJOR &&
	      h->abi_minor == MEMMON_ABI_MINOR && h->header_size == sizeof(*h) &&
	      h->nr_cpus == m.info.nr_cpus && h->ring_size == m.info.ring_size &&
	      h->ring_stride == m.info.ring_stride &&
	      h->ring_data_offset == m.info.ring_data_offset &&
	      h->clock == MEMMON_CLOCK_MONOTONIC && h->page_size == page,
	      "header page: magic 0x%x, %u CPUs, ring %llu", h->magic, h->nr_cpus,
	      (unsigned long long)h->ring_size);
	for (cpu = 0; cpu < m.info.nr_cpus; cpu++)
		if (mm_ring_page(&m, cpu)->producer_pos || *mm_cons_pos(&m, cpu))
			ok = 0;
	/* Fresh rings: every position is zero. */
	VT_OK(ok, "all positions start at zero");
	mm_unmap(&m);
}

/* Fill the ring of CPU 0 past its end and check the alias. */
static void test_double_mapping(void)
{
	char payload[200];
	struct mm_map m;
	uint8_t *data;
	uint64_t i, prod;
	int fd = mm_open(), ok = 1;
	long n = 0;

	mm_configure(fd, 8192, 0);
	mm_map(fd, &m);
	mm_pin(0);
	memset(payload, 0x5a, sizeof(payload));
	/* 232-byte records: drain as we go, so that they wrap several times. */
	for (i = 0; i < 200; i++) {
		payload[0] = (char)i;
		if (mm_mark(fd, 0, payload, sizeof(payload)))
			ok = 0;
		n += mm_drain_cpu(&m, 0, NULL, NULL);
	}
	/* Every record was delivered and consumed. */
	VT_OK(ok && n == 200, "200 MARKs through an 8 KiB ring: %ld records", n);
	data = mm_ring_data(&m, 0);
	for (i = 0; i < m.info.ring_size; i++)
		if (data[i] != data[i + m.info.ring_size])
			ok = 0;
	/* The data pages appear twice, back to back. */
	VT_OK(ok, "data[i] == data[i + ring_size] for the whole ring");
	prod = mm_ring_page(&m, 0)->producer_pos;
	/* The positions ran past the ring size: records did wrap. */
	VT_OK(prod > 4 * m.info.ring_size, "producer_pos %llu > 4 rings", (unsigned long long)prod);
	mm_unmap(&m);
	close(fd);
}

/* An address range of our own, for MREMAP_FIXED to land on. */
static void *spare(size_t size)
{
	void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		MM_DIE("mmap spare");
	return p;
}

static void test_refusals(int fd)
{
	struct memmon_info info;
	off_t poff;
	size_t csz, psz;
	void *p;

	mm_info(fd, &info);
	poff = (off_t)info.producer_offset;
	csz = info.consumer_size;
	psz = info.producer_size;

	/* A writable producer area: EPERM. */
	VT_ERRNO(mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, poff) == MAP_FAILED ? -1 : 0,
		 EPERM, "producer PROT_WRITE: EPERM");
	/* An executable producer area: EPERM. */
	VT_ERRNO(mmap(NULL, psz, PROT_READ | PROT_EXEC, MAP_SHARED, fd, poff) == MAP_FAILED ? -1 : 0,
		 EPERM, "producer PROT_EXEC: EPERM");
	/* An executable consumer area: EPERM. */
	VT_ERRNO(mmap(NULL, csz, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0) == MAP_FAILED ? -1 : 0,
		 EPERM, "consumer PROT_EXEC: EPERM");
	/* A private consumer mapping: EINVAL. */
	VT_ERRNO(mmap(NULL, csz, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED ? -1 : 0,
		 EINVAL, "consumer MAP_PRIVATE: EINVAL");
	/* A private producer mapping: EINVAL. */
	VT_ERRNO(mmap(NULL, psz, PROT_READ, MAP_PRIVATE, fd, poff) == MAP_FAILED ? -1 : 0,
		 EINVAL, "producer MAP_PRIVATE: EINVAL");
	/* The consumer area one page too big: EINVAL. */
	VT_ERRNO(mmap(NULL, csz + page, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ? -1 : 0,
		 EINVAL, "consumer size + 1 page: EINVAL");
	/* The producer area one page short: EINVAL. */
	VT_ERRNO(mmap(NULL, psz - page, PROT_READ, MAP_SHARED, fd, poff) == MAP_FAILED ? -1 : 0,
		 EINVAL, "producer size - 1 page: EINVAL");
	/* The producer area one page too big: EINVAL. */
	VT_ERRNO(mmap(NULL, psz + page, PROT_READ, MAP_SHARED, fd, poff) == MAP_FAILED ? -1 : 0,
		 EINVAL, "producer size + 1 page: EINVAL");
	/* The producer area from its second page: EINVAL. */
	VT_ERRNO(mmap(NULL, psz - page, PROT_READ, MAP_SHARED, fd, poff + page) == MAP_FAILED ? -1 : 0,
		 EINVAL, "producer offset + 1 page: EINVAL");
	/* The consumer size at the producer offset: EINVAL. */
	VT_ERRNO(mmap(NULL, csz, PROT_READ, MAP_SHARED, fd, poff) == MAP_FAILED ? -1 : 0,
		 EINVAL, "consumer size at the producer offset: EINVAL");
	/* Far beyond both areas: EINVAL. */
	VT_ERRNO(mmap(NULL, page, PROT_READ, MAP_SHARED, fd, poff + (off_t)psz) == MAP_FAILED ? -1 : 0,
		 EINVAL, "offset past the producer area: EINVAL");
	/* The producer area at offset 0: EINVAL. */
	VT_ERRNO(mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ? -1 : 0,
		 EINVAL, "producer size at offset 0: EINVAL");

	p = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, poff);
	if (p == MAP_FAILED)
		MM_DIE("mmap producer");
	/* mprotect() cannot add write (VM_MAYWRITE cleared): EACCES. */
	VT_ERRNO(mprotect(p, psz, PROT_READ | PROT_WRITE), EACCES, "mprotect producer +WRITE: EACCES");
	/* mprotect() cannot add exec (VM_MAYEXEC cleared): EACCES. */
	VT_ERRNO(mprotect(p, psz, PROT_READ | PROT_EXEC), EACCES, "mprotect producer +EXEC: EACCES");
	/* mprotect() of one page would split the mapping: EINVAL. */
	VT_ERRNO(mprotect(p, page, PROT_NONE), EINVAL, "mprotect of the first page: EINVAL");
	/* The whole mapping may go PROT_NONE and come back. */
	VT_OK(!mprotect(p, psz, PROT_NONE) && !mprotect(p, psz, PROT_READ) &&
	      ((struct memmon_mmap_header *)p)->magic == MEMMON_MMAP_MAGIC,
	      "mprotect whole producer NONE then READ");
	/* munmap() of the first page would split it: EINVAL. */
	VT_ERRNO(munmap(p, page), EINVAL, "partial munmap (first page): EINVAL");
	/* munmap() of the last page too: EINVAL. */
	VT_ERRNO(munmap((char *)p + psz - page, page), EINVAL, "partial munmap (last page): EINVAL");
	/* munmap() of a page in the middle too: EINVAL. */
	VT_ERRNO(munmap((char *)p + 2 * page, page), EINVAL, "partial munmap (middle page): EINVAL");
	/* mremap() cannot grow it (VM_DONTEXPAND): EFAULT. */
	VT_ERRNO(mremap(p, psz, psz + page, 0) == MAP_FAILED ? -1 : 0, EFAULT, "mremap grow: EFAULT");
	/* mremap() cannot move it (.mremap refuses): EINVAL. */
	VT_ERRNO(mremap(p, psz, psz, MREMAP_MAYMOVE | MREMAP_FIXED,
			spare(psz)) == MAP_FAILED ? -1 : 0,
		 EINVAL, "mremap move: EINVAL");
	/* Shrinking would split it: EINVAL. */
	VT_ERRNO(mremap(p, psz, psz - page, 0) == MAP_FAILED ? -1 : 0, EINVAL, "mremap shrink: EINVAL");
	/* After all that, the mapping is intact. */
	VT_OK(((struct memmon_mmap_header *)p)->magic == MEMMON_MMAP_MAGIC, "producer still mapped and intact");
	/* Whole munmap works. */
	VT_SUCCESS(munmap(p, psz), "munmap producer");

	p = mmap(NULL, csz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		MM_DIE("mmap consumer");
	/* The consumer may not become executable: EACCES. */
	VT_ERRNO(mprotect(p, csz, PROT_READ | PROT_EXEC), EACCES, "mprotect consumer +EXEC: EACCES");
	/* It may drop and regain write. */
	VT_OK(!mprotect(p, csz, PROT_READ) && !mprotect(p, csz, PROT_READ | PROT_WRITE),
	      "mprotect consumer READ then READ|WRITE");
	/* mremap() move of the consumer: EINVAL. */
	VT_ERRNO(mremap(p, csz, csz, MREMAP_MAYMOVE | MREMAP_FIXED,
			spare(csz)) == MAP_FAILED ? -1 : 0,
		 EINVAL, "mremap move consumer: EINVAL");
	/* Whole munmap works. */
	VT_SUCCESS(munmap(p, csz), "munmap consumer");
}

static void test_proc_mem(int fd)
{
	struct memmon_info info;
	uint32_t bad = 0xdeadbeef;
	int mfd;
	void *p;

	mm_info(fd, &info);
	p = mmap(NULL, info.producer_size, PROT_READ, MAP_SHARED, fd,
		 (off_t)info.producer_offset);
	mfd = open("/proc/self/mem", O_RDWR);
	/* Not even a forced write (ptrace, /proc/PID/mem) reaches it: EIO. */
	VT_ERRNO(pwrite(mfd, &bad, sizeof(bad), (off_t)(uintptr_t)p), EIO,
		 "write through /proc/self/mem: EIO");
	/* The header is unchanged. */
	VT_OK(((struct memmon_mmap_header *)p)->magic == MEMMON_MMAP_MAGIC, "header unchanged");
	close(mfd);
	munmap(p, info.producer_size);
}

static void test_fork(int fd)
{
	struct memmon_info info;
	int st;
	pid_t pid;
	void *p;

	mm_info(fd, &info);
	p = mmap(NULL, info.producer_size, PROT_READ, MAP_SHARED, fd,
		 (off_t)info.producer_offset);
	pid = fork();
	if (!pid) {
		/* In the child: mprotect() on an unmapped range is ENOMEM. */
		_exit(mprotect(p, page, PROT_READ) == -1 && errno == ENOMEM ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	/* A fork child does not inherit the mapping (VM_DONTCOPY). */
	VT_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork: the child has no mapping");

	/* MADV_DOFORK lifts VM_DONTCOPY: the child shares the mapping... */
	VT_SUCCESS(madvise(p, info.producer_size, MADV_DOFORK), "madvise MADV_DOFORK");
	pid = fork();
	if (!pid) {
		_exit(((struct memmon_mmap_header *)p)->magic == MEMMON_MMAP_MAGIC ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	/* ...and reads it; its exit drops its VMA's reference. */
	VT_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "MADV_DOFORK: the child reads the header");
	munmap(p, info.producer_size);
}

struct lost_sum {
	uint64_t lost, marks;
};

static void count_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	struct lost_sum *s = arg;

	(void)cpu;
	if (rec->type == MEMMON_REC_LOST)
		s->lost += ((const struct memmon_rec_lost *)rec)->count;
	else if (rec->type == MEMMON_REC_MARK)
		s->marks++;
}

static void test_hostile_consumer(void)
{
	static const uint64_t bad_delta[] = { 1, 8, 8192 + 8, 3, (uint64_t)-1 << 40 };
	struct memmon_cpu_stats cs[64], other[64];
	struct lost_sum sum = { 0 };
	int fd = mm_open(), fd2 = mm_open();
	struct mm_map m;
	uint64_t prod, *cp;
	char buf[4096];
	unsigned int i;
	long n;

	mm_configure(fd, 8192, 0);
	mm_map(fd, &m);
	mm_pin(0);
	cp = mm_cons_pos(&m, 0);
	mm_mark(fd, 0, "before", 6);
	n = mm_drain_cpu(&m, 0, NULL, NULL);
	prod = mm_ring_page(&m, 0)->producer_pos;
	for (i = 0; i < sizeof(bad_delta) / sizeof(bad_delta[0]); i++) {
		/* Ahead of the producer, misaligned, far behind, wild. */
		*cp = i == 2 ? prod - bad_delta[i] : prod + bad_delta[i];
		mm_mark(fd, 0, "hostile", 7);
		mm_mark(fd2, 0, "innocent", 8);
	}
	mm_stats(fd, cs, 64);
	mm_stats(fd2, other, 64);
	/* Every MARK under a hostile position was dropped and counted lost. */
	VT_OK(n == 1 && cs[0].produced == 6 && cs[0].delivered == 1 && cs[0].lost == 5,
	      "hostile consumer_pos: own MARKs lost (%llu/%llu/%llu)",
	      (unsigned long long)cs[0].produced, (unsigned long long)cs[0].delivered,
	      (unsigned long long)cs[0].lost);
	/* Another session is not affected. */
	VT_OK(other[0].delivered == 5 && other[0].lost == 0, "another session: all delivered");
	/* The producer did not move: nothing was written. */
	VT_OK(mm_ring_page(&m, 0)->producer_pos == prod, "producer_pos unchanged");
	/* The ring page reports the loss as pending. */
	VT_OK(mm_ring_page(&m, 0)->lost_pending == 5, "lost_pending 5");

	/* read() on a hostile position resyncs instead of reading garbage. */
	*cp = prod + 3;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	/* Nothing valid to read: EAGAIN, and no crash. */
	VT_ERRNO(read(fd, buf, sizeof(buf)), EAGAIN, "read() with a hostile position: EAGAIN");
	/* The position was resynced to the producer's. */
	VT_OK(*cp == prod, "read() resynced consumer_pos");

	/* Back to sane: the next MARK comes after a LOST record of 5. */
	VT_SUCCESS(mm_mark(fd, 0, "after", 5), "MARK after resync");
	n = mm_drain_cpu(&m, 0, count_rec, &sum);
	/* One LOST record (count 5) and the MARK. */
	VT_OK(n == 2 && sum.lost == 5 && sum.marks == 1, "LOST(5) then MARK: %ld records, lost %llu",
	      n, (unsigned long long)sum.lost);
	mm_unmap(&m);
	close(fd);
	close(fd2);
}

static void test_mapping_outlives_fd(void)
{
	struct memmon_rec_mark *r;
	struct mm_map m;
	int fd = mm_open();

	mm_pin(0);
	mm_map(fd, &m);
	mm_mark(fd, 0, "kept", 4);
	close(fd);
	r = (void *)mm_ring_data(&m, 0);
	/* After close(), the mapping still shows the ring and its record. */
	VT_OK(mm_ring_page(&m, 0)->producer_pos == 40 && r->hdr.type == MEMMON_REC_MARK &&
	      !memcmp(r->data, "kept", 4), "mapping readable after close(fd)");
	/* And the consumer area is still writable. */
	VT_OK((*mm_cons_pos(&m, 0) = 40) == 40, "consumer area writable after close(fd)");
	mm_unmap(&m);
}

int main(void)
{
	int fd;

	page = sysconf(_SC_PAGESIZE);
	fd = mm_open();
	test_layout(fd);
	test_refusals(fd);
	test_proc_mem(fd);
	test_fork(fd);
	close(fd);
	test_double_mapping();
	test_hostile_consumer();
	test_mapping_outlives_fd();
	return vt_exit();
}
