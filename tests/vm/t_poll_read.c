// SPDX-License-Identifier: GPL-2.0
/*
 * poll()/epoll and read(): the watermark, wakeups from another thread, the
 * blocking and non-blocking paths and each error of read(). With
 * wakeup_ms=0, so that only the watermark wakes (t_prompt tests the tick).
 */
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>

#include "mmtest.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int poll_in(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);

	return r < 0 ? -1 : r && (p.revents & POLLIN);
}

/* A 288-byte record: 32 bytes of header and mark fields, 256 of payload. */
static char payload[MEMMON_MARK_MAX];

struct delayed {
	int fd;
	int ms;
	int count;
	int cpu;
};

static void *mark_later(void *arg)
{
	struct delayed *d = arg;

	mm_pin(d->cpu);
	usleep((useconds_t)d->ms * 1000);
	for (int i = 0; i < d->count; i++)
		mm_mark(d->fd, 0, payload, sizeof(payload));
	return NULL;
}

static void test_poll(void)
{
	struct delayed d;
	pthread_t th;
	uint64_t t0;
	char buf[65536];
	int fd = mm_open(), i;

	mm_pin(0);
	/* No rings yet: nothing to read. */
	VT_OK(poll_in(fd, 0) == 0, "poll on a fresh session: not readable");
	/* 64 KiB rings, readable from 4 KiB on. */
	VT_SUCCESS(mm_configure(fd, 65536, 4096), "CONFIGURE 64 KiB, wakeup 4096");
	for (i = 0; i < 14; i++)
		mm_mark(fd, 0, payload, sizeof(payload));
	t0 = now_ms();
	i = poll_in(fd, 200);
	t0 = now_ms() - t0;
	/* 14 * 288 = 4032 bytes, below the watermark: poll times out. */
	VT_OK(i == 0 && t0 >= 150, "poll below the watermark times out (%llu ms)",
	      (unsigned long long)t0);
	mm_mark(fd, 0, payload, sizeof(payload));
	/* 4320 bytes: readable at once. */
	VT_OK(poll_in(fd, 0) == 1, "poll at the watermark: POLLIN");
	/* Draining it... */
	VT_OK(read(fd, buf, sizeof(buf)) == 15 * 288, "read drains 15 records");
	/* ...makes it unreadable again. */
	VT_OK(poll_in(fd, 0) == 0, "poll after draining: not readable");

	/* A sleeping poller is woken when another thread crosses the watermark. */
	d = (struct delayed){ .fd = fd, .ms = 200, .count = 15, .cpu = 1 };
	pthread_create(&th, NULL, mark_later, &d);
	t0 = now_ms();
	i = poll_in(fd, 10000);
	t0 = now_ms() - t0;
	/* Woken by the MARKs on the other CPU, after their 200 ms, not by the timeout. */
	VT_OK(i == 1 && t0 >= 150 && t0 < 5000, "poll woken by another thread (%llu ms)",
	      (unsigned long long)t0);
	pthread_join(th, NULL);
	read(fd, buf, sizeof(buf));
	close(fd);
}

static void test_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct delayed d;
	pthread_t th;
	uint64_t t0;
	int fd = mm_open(), ep = epoll_create1(0), n;
	char buf[65536];

	mm_configure(fd, 65536, 4096);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	/* Nothing yet: epoll_wait times out. */
	VT_OK(epoll_wait(ep, &out, 1, 100) == 0, "epoll_wait on an empty session times out");
	d = (struct delayed){ .fd = fd, .ms = 100, .count = 15, .cpu = 0 };
	pthread_create(&th, NULL, mark_later, &d);
	t0 = now_ms();
	n = epoll_wait(ep, &out, 1, 10000);
	t0 = now_ms() - t0;
	/* Woken by the MARKs, 100 ms later. */
	VT_OK(n == 1 && (out.events & EPOLLIN) && t0 >= 50, "epoll_wait woken: EPOLLIN (%llu ms)",
	      (unsigned long long)t0);
	pthread_join(th, NULL);
	read(fd, buf, sizeof(buf));
	/* Edge-triggered: a new crossing wakes again. */
	ev.events = EPOLLIN | EPOLLET;
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
	d.ms = 100;
	pthread_create(&th, NULL, mark_later, &d);
	t0 = now_ms();
	n = epoll_wait(ep, &out, 1, 10000);
	t0 = now_ms() - t0;
	/* Edge-triggered epoll is woken by the next crossing. */
	VT_OK(n == 1 && t0 >= 50, "EPOLLET woken by the next crossing (%llu ms)",
	      (unsigned long long)t0);
	pthread_join(th, NULL);
	close(ep);
	close(fd);
}

static void test_blocking_read(void)
{
	struct memmon_rec_mark *r;
	struct delayed d;
	char buf[4096];
	pthread_t th;
	uint64_t t0;
	ssize_t n;
	int fd = mm_open();

	/* Wake on any record. */
	VT_SUCCESS(mm_configure(fd, 8192, 8), "CONFIGURE wakeup 8");
	d = (struct delayed){ .fd = fd, .ms = 300, .count = 1, .cpu = 1 };
	pthread_create(&th, NULL, mark_later, &d);
	t0 = now_ms();
	n = read(fd, buf, sizeof(buf));
	t0 = now_ms() - t0;
	r = (void *)buf;
	/* The read slept until the other thread's MARK, then returned it. */
	VT_OK(n == 288 && r->hdr.type == MEMMON_REC_MARK && t0 >= 200,
	      "blocking read woken by a MARK from another thread (%zd bytes, %llu ms)",
	      n, (unsigned long long)t0);
	pthread_join(th, NULL);
	close(fd);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_read_errors(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	char buf[4096];
	int fd = mm_open(), flags;
	void *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	munmap(hole, 4096);

	mm_pin(0);
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	/* Empty, non-blocking: EAGAIN. */
	VT_ERRNO(read(fd, buf, sizeof(buf)), EAGAIN, "non-blocking read of an empty session: EAGAIN");
	mm_mark(fd, 0, payload, sizeof(payload));
	/* A buffer smaller than the next record: EINVAL. */
	VT_ERRNO(read(fd, buf, 100), EINVAL, "read with a 100-byte buffer, 288-byte record: EINVAL");
	/* A zero-length read returns 0. */
	VT_OK(read(fd, buf, 0) == 0, "read of 0 bytes: 0");
	/* An unmapped buffer: EFAULT. */
	VT_ERRNO(read(fd, hole, 4096), EFAULT, "read into an unmapped buffer: EFAULT");
	/* The record survived all of that. */
	VT_OK(read(fd, buf, sizeof(buf)) == 288, "the record is still there");
	/* Exactly one record's worth of buffer is enough. */
	mm_mark(fd, 0, payload, 8);
	VT_OK(read(fd, buf, 40) == 40, "read with a buffer of exactly the record size");
	mm_mark(fd, 0, payload, 8);
	mm_mark(fd, 0, payload, 8);
	/* A buffer for one and a half records returns one whole record. */
	VT_OK(read(fd, buf, 60) == 40, "read returns whole records only");
	read(fd, buf, sizeof(buf));
	/* A stream of records has no file position: lseek() is ESPIPE. */
	VT_ERRNO(lseek(fd, 0, SEEK_SET), ESPIPE, "lseek: ESPIPE");
	/* And neither has pread(): ESPIPE. */
	VT_ERRNO(pread(fd, buf, sizeof(buf), 0), ESPIPE, "pread: ESPIPE");

	fcntl(fd, F_SETFL, flags);
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART */
	alarm(1);
	/* A signal interrupts a blocking read: EINTR. */
	VT_ERRNO(read(fd, buf, sizeof(buf)), EINTR, "blocking read interrupted by a signal: EINTR");
	close(fd);
}

struct seen {
	uint64_t seq[2];
	int bad;
	long n;
};

static void check_order(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	const struct memmon_rec_mark *m = (const void *)rec;
	struct seen *s = arg;
	uint64_t v;

	if (rec->type != MEMMON_REC_MARK || m->len != 8 || cpu > 1) {
		s->bad++;
		return;
	}
	memcpy(&v, m->data, 8);
	if (v != s->seq[cpu] + 1)
		s->bad++;
	s->seq[cpu] = v;
	s->n++;
}

static void test_read_both_cpus(void)
{
	struct seen s = { .seq = { 0, 0 } };
	char buf[8192];
	uint64_t v;
	ssize_t n;
	int fd = mm_open(), cpu, i;

	for (cpu = 0; cpu < 2; cpu++) {
		mm_pin(cpu);
		for (i = 1; i <= 50; i++) {
			v = i;
			mm_mark(fd, 0, &v, 8);
		}
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((n = read(fd, buf, 1000)) > 0)
		if (mm_walk_buf(buf, n, check_order, &s) < 0)
			s.bad++;
	/* 50 records of each CPU, each CPU's in order, in 1000-byte reads. */
	VT_OK(s.n == 100 && !s.bad && s.seq[0] == 50 && s.seq[1] == 50,
	      "read across CPUs: %ld records, %d out of order", s.n, s.bad);
	close(fd);
}

struct reader {
	int fd;
	long n;
	int bad;
};

static void *concurrent_reader(void *arg)
{
	struct reader *r = arg;
	struct seen s = { 0 };
	char buf[512];
	ssize_t n;

	while ((n = read(r->fd, buf, sizeof(buf))) > 0)
		r->n += mm_walk_buf(buf, n, NULL, &s);
	return NULL;
}

static void test_concurrent_readers(void)
{
	struct reader r[4];
	pthread_t th[4];
	uint64_t v;
	long total = 0;
	int fd = mm_open(), i;

	mm_configure(fd, 1 << 20, 0);
	mm_pin(0);
	for (i = 0; i < 5000; i++) {
		v = i;
		mm_mark(fd, 0, &v, 8);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < 4; i++) {
		r[i] = (struct reader){ .fd = fd };
		pthread_create(&th[i], NULL, concurrent_reader, &r[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += r[i].n;
	}
	/* Four readers at once: every record read exactly once. */
	VT_OK(total == 5000, "4 concurrent readers read %ld of 5000 records", total);
	close(fd);
}

int main(void)
{
	int fd = open("/sys/module/memmon/parameters/wakeup_ms", O_WRONLY | O_CLOEXEC);

	VT_OK(fd >= 0 && write(fd, "0", 1) == 1, "wakeup_ms=0: the watermark alone wakes");
	if (fd >= 0)
		close(fd);
	memset(payload, 0x33, sizeof(payload));
	test_poll();
	test_epoll();
	test_blocking_read();
	test_read_errors();
	test_read_both_cpus();
	test_concurrent_readers();
	return vt_exit();
}
