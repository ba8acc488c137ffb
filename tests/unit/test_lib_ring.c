// SPDX-License-Identifier: GPL-2.0
/*
 * libmemmon over fake rings: mapping checks, zero-copy per-CPU
 * consumption, the [C]/[D] protocol, wraparound, malformed records,
 * peek/release, and the open() error paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <cmocka.h>
#include "test_lib_fake.h"

#define RING (64 * 1024)

struct collect {
	struct fake *f;
	unsigned int n;
	__u64 seq[4096];
	unsigned int cpu[4096];
	const void *ptr[4096];
	__u64 cons_seen[4096];	/* consumer_pos of the record's CPU during cb */
	int stop_at;		/* return 1 at this count (1-based); 0: never */
	int fail_at;		/* return -EIO at this count */
};

static int collect_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct collect *c = ctx;
	unsigned int i = c->n++;

	if (i < 4096) {
		c->seq[i] = rec_seq(rec);
		c->cpu[i] = rec->cpu;
		c->ptr[i] = rec;
		c->cons_seen[i] = *fake_consumer_pos(c->f, rec->cpu);
	}
	if (c->fail_at && (int)c->n == c->fail_at)
		return -EIO;
	if (c->stop_at && (int)c->n == c->stop_at)
		return 1;
	return 0;
}

static void setup_session(struct fake *f, struct memmon_session **s,
			  struct collect *c, unsigned int cpus, __u32 flags)
{
	LIBMEMMON_OPTS(memmon_consume_opts, o, .flags = flags);

	assert_int_equal(fake_init(f, cpus, RING), 0);
	*s = fake_session(f);
	assert_non_null(*s);
	memset(c, 0, sizeof(*c));
	c->f = f;
	assert_int_equal(memmon_session__set_callback(*s, collect_cb, c, &o), 0);
}

/* Table: a header field broken -> the error attach must give. */
static void test_attach_checks(void **state)
{
	static const struct {
		const char *what;
		int field;
		int err;
	} cases[] = {
		{ "magic", 0, EPROTO },
		{ "abi major", 1, EPROTONOSUPPORT },
		{ "nr_cpus differs from info", 2, EPROTO },
		{ "ring_size not a power of two", 3, EPROTO },
		{ "data offset past the stride", 4, EPROTO },
		{ "producer area too small", 5, EPROTO },
		{ "header_size too small", 6, EPROTO },
		{ "consumer area too small", 7, EPROTO },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct memmon_mmap_header *h;
		struct memmon_info info;
		struct fake f;

		assert_int_equal(fake_init(&f, 2, RING), 0);
		h = f.prod;
		info = f.info;
		switch (cases[i].field) {
		case 0: h->magic ^= 1; break;
		case 1: h->abi_major++; break;
		case 2: info.nr_cpus = 3; break;
		case 3: h->ring_size = info.ring_size = RING + 8; break;
		case 4: h->ring_data_offset = info.ring_data_offset = info.ring_stride; break;
		case 5: info.producer_size -= f.page; break;
		case 6: h->header_size = 8; break;
		case 7: info.consumer_size = 64; break;
		}
		errno = 0;
		/* expect: NULL with errno naming the mismatch */
		assert_null(memmon__session_from_mapping(&info, f.cons, f.prod, -1));
		if (errno != cases[i].err)
			fail_msg("%s: errno %d, want %d", cases[i].what, errno,
				 cases[i].err);
		fake_fini(&f);
	}
}

static void test_per_cpu_zero_copy(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	unsigned int i;

	(void)state;
	setup_session(&f, &s, &c, 2, MEMMON_CONSUME_PER_CPU);
	for (i = 0; i < 10; i++)
		assert_true(fake_seq(&f, i % 2, 100 - i, i) >= 0);
	assert_int_equal(memmon_session__consume(s), 10);
	assert_int_equal(c.n, 10);
	for (i = 0; i < 10; i++) {
		/* per-CPU mode: all of cpu 0 in ring order, then cpu 1 */
		assert_int_equal(c.seq[i], i < 5 ? 2 * i : 2 * (i - 5) + 1);
		/* zero copy: the record is in cpu's data mapping */
		assert_true((const __u8 *)c.ptr[i] >= fake_data(&f, c.cpu[i]) &&
			    (const __u8 *)c.ptr[i] < fake_data(&f, c.cpu[i]) + 2 * RING);
		/* [D] happens after the batch: consumer_pos still 0 */
		assert_int_equal(c.cons_seen[i], 0);
	}
	/* after: consumer_pos == producer_pos on both */
	assert_int_equal(*fake_consumer_pos(&f, 0), f.prod_pos[0]);
	assert_int_equal(*fake_consumer_pos(&f, 1), f.prod_pos[1]);
	/* nothing new: 0 */
	assert_int_equal(memmon_session__consume(s), 0);
	memmon_session__close(s);
	fake_fini(&f);
}

static void test_unpublished_invisible(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	struct { __u32 len, flags; __u64 seq; } b = { 8, 0, 7 };

	(void)state;
	setup_session(&f, &s, &c, 1, 0);
	assert_true(fake_put(&f, 0, MEMMON_REC_MARK, 1, 1, &b, sizeof(b)) >= 0);
	/* written but producer_pos not stored: invisible */
	assert_int_equal(memmon_session__consume(s), 0);
	fake_publish(&f, 0);
	assert_int_equal(memmon_session__consume(s), 1);
	assert_int_equal(c.seq[0], 7);
	memmon_session__close(s);
	fake_fini(&f);
}

/* Records straddling the end of the ring arrive whole (double mapping). */
static void test_wraparound(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	__u64 seq = 0, want = 0;
	unsigned int round, k;
	unsigned char body[512];

	(void)state;
	setup_session(&f, &s, &c, 1, 0);
	srand(42);
	for (round = 0; round < 2000; round++) {
		unsigned int n = 1 + (unsigned int)rand() % 8;

		for (k = 0; k < n; k++) {
			size_t len = 8 + ((size_t)rand() % 60) * 8;
			struct memmon_rec_mark *m = (void *)(body - sizeof(struct memmon_rec_header));

			(void)m;
			memset(body, 0xa5, sizeof(body));
			memcpy(body, &(__u32){ (__u32)len }, 4);
			memcpy(body + 4, &(__u32){ 0 }, 4);
			memcpy(body + 8, &seq, 8);
			if (fake_write(&f, 0, MEMMON_REC_MARK, seq, 1, body, len + 8) < 0)
				break;
			seq++;
		}
		c.n = 0;
		assert_true(memmon_session__consume(s) >= 0);
		for (k = 0; k < c.n; k++) {
			const struct memmon_rec_mark *m = c.ptr[k];
			size_t j;

			assert_int_equal(c.seq[k], want);
			want++;
			/* payload intact across the wrap */
			for (j = 8; j < m->len; j++)
				assert_int_equal(m->data[j], 0xa5);
		}
	}
	assert_int_equal(want, seq);
	/* we did wrap many times */
	assert_true(f.prod_pos[0] > 10 * RING);
	memmon_session__close(s);
	fake_fini(&f);
}

/* A producer thread and the library consumer race on real memory. */
struct race {
	struct fake *f;
	__u64 total;
};

static void *producer_thread(void *arg)
{
	struct race *r = arg;
	__u64 seq = 0;

	while (seq < r->total) {
		if (fake_seq(r->f, 0, seq, seq) >= 0)
			seq++;
		else
			sched_yield();
	}
	return NULL;
}

struct race_check {
	__u64 next;
	int bad;
};

static int race_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct race_check *rc = ctx;

	if (rec_seq(rec) != rc->next || rec->size != 40)
		rc->bad++;
	rc->next++;
	return 0;
}

static void test_concurrent_producer(void **state)
{
	struct memmon_session *s;
	struct race r;
	struct race_check rc = { 0, 0 };
	struct fake f;
	pthread_t t;

	(void)state;
	assert_int_equal(fake_init(&f, 1, 4096), 0);
	s = fake_session(&f);
	assert_non_null(s);
	assert_int_equal(memmon_session__set_callback(s, race_cb, &rc, NULL), 0);
	r.f = &f;
	r.total = 200000;
	assert_int_equal(pthread_create(&t, NULL, producer_thread, &r), 0);
	while (rc.next < r.total)
		assert_true(memmon_session__consume_cpu(s, 0) >= 0);
	pthread_join(t, NULL);
	/* every record seen once, in order, intact */
	assert_int_equal(rc.bad, 0);
	assert_int_equal(rc.next, r.total);
	memmon_session__close(s);
	fake_fini(&f);
}

/*
 * Hostile records: the second of three damaged. Every reader skips and
 * counts (memmon_rec_check()): by the length when it is sound (the third
 * record is delivered), else by resynchronising to producer_pos as the
 * kernel's read() does (the third is passed over). Either way the ring
 * moves on: a record written after the damage is delivered by the next
 * round, in both consumption modes.
 */
static const struct {
	const char *what;
	int field;		/* 0: size, 1: type, 2: mark len */
	__u32 value;
	bool third;		/* the record after it is delivered */
	unsigned int bad;	/* bad records counted */
} bad_cases[] = {
	{ "size 0", 0, 0, false, 1 },
	{ "size smaller than a header", 0, 16, false, 1 },
	{ "size not 8-aligned", 0, 44, false, 1 },
	{ "size crossing producer_pos", 0, 4096, false, 1 },
	{ "size crossing the ring", 0, 2 * RING, false, 1 },
	{ "type 0", 1, 0, true, 1 },
	{ "syscall shorter than its struct", 1, MEMMON_REC_SYSCALL, true, 1 },
	{ "fault shorter than its struct", 1, MEMMON_REC_FAULT, true, 1 },
	{ "mark payload past its end", 2, 100, true, 1 },
	{ "unknown type 200: delivered", 1, 200, true, 0 },
};

static void bad_record_round(size_t i, __u32 flags)
{
	struct memmon_session *s;
	struct memmon_rec_mark *m;
	struct collect c;
	struct fake f;
	long long pos;
	unsigned int want;
	int ret;

	setup_session(&f, &s, &c, 1, flags);
	assert_true(fake_seq(&f, 0, 1, 1) >= 0);
	pos = fake_seq(&f, 0, 2, 2);
	assert_true(fake_seq(&f, 0, 3, 3) >= 0);
	m = (void *)(fake_data(&f, 0) + pos);
	switch (bad_cases[i].field) {
	case 0: m->hdr.size = bad_cases[i].value; break;
	case 1: m->hdr.type = (__u16)bad_cases[i].value; break;
	case 2: m->len = bad_cases[i].value; break;
	}
	want = bad_cases[i].third ? 2 + !bad_cases[i].bad : 1;
	/* expect: the good records, no error; the bad one counted */
	ret = memmon_session__consume(s);
	if (ret != (int)want || c.n != want)
		fail_msg("%s (flags %u): returned %d after %u records, want %u",
			 bad_cases[i].what, flags, ret, c.n, want);
	assert_int_equal(c.seq[0], 1);
	assert_int_equal(c.seq[want - 1], want == 1 ? 1 : 3);
	assert_int_equal(memmon_session__bad_records(s), bad_cases[i].bad);
	/* expect: everything published is consumed, the bad record too */
	assert_int_equal(*fake_consumer_pos(&f, 0), f.prod_pos[0]);
	/* expect: no stall, the next round delivers what follows */
	assert_true(fake_seq(&f, 0, 4, 4) >= 0);
	assert_int_equal(memmon_session__consume(s), 1);
	assert_int_equal(c.seq[want], 4);
	assert_int_equal(memmon_session__bad_records(s), bad_cases[i].bad);
	memmon_session__close(s);
	fake_fini(&f);
}

static void test_bad_records(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		bad_record_round(i, 0);
		bad_record_round(i, MEMMON_CONSUME_PER_CPU);
	}
}

/* A bad record on one CPU holds back neither the others nor its own. */
static void test_bad_record_merged_cpus(void **state)
{
	struct memmon_session *s;
	struct memmon_rec_header *h;
	struct collect c;
	struct fake f;
	long long pos;

	(void)state;
	setup_session(&f, &s, &c, 2, 0);
	pos = fake_seq(&f, 0, 1, 1);
	assert_true(fake_seq(&f, 0, 3, 3) >= 0);
	assert_true(fake_seq(&f, 1, 2, 2) >= 0);
	assert_true(fake_seq(&f, 1, 4, 4) >= 0);
	h = (void *)(fake_data(&f, 0) + pos);
	h->type = 0;
	/* expect: 2, 3, 4 in time order; the bad head of cpu 0 counted */
	assert_int_equal(memmon_session__consume(s), 3);
	assert_int_equal(c.seq[0], 2);
	assert_int_equal(c.seq[1], 3);
	assert_int_equal(c.seq[2], 4);
	assert_int_equal(memmon_session__bad_records(s), 1);
	memmon_session__close(s);
	fake_fini(&f);
}

/* peek_cpu skips a bad head, and stops its run before a bad record. */
static void test_bad_record_peek(void **state)
{
	struct memmon_session *s;
	struct memmon_rec_header *h;
	const void *data;
	struct collect c;
	struct fake f;
	long long pos[4];
	unsigned int i;

	(void)state;
	setup_session(&f, &s, &c, 1, 0);
	for (i = 0; i < 4; i++)
		pos[i] = fake_seq(&f, 0, i + 1, i + 1);
	h = (void *)(fake_data(&f, 0) + pos[0]);
	h->type = 0;
	h = (void *)(fake_data(&f, 0) + pos[2]);
	h->type = 0;
	/* expect: the run is record 1 alone, after the bad head */
	assert_int_equal(memmon_session__peek_cpu(s, 0, 4096, &data),
			 pos[2] - pos[1]);
	assert_ptr_equal(data, fake_data(&f, 0) + pos[1]);
	assert_int_equal(memmon_session__bad_records(s), 1);
	/* expect: the bad head was given back, the run was not */
	assert_int_equal(*fake_consumer_pos(&f, 0), pos[1]);
	assert_int_equal(memmon_session__release_cpu(s, 0, pos[2] - pos[1]), 0);
	/* expect: the second bad record skipped, record 4 handed out */
	assert_int_equal(memmon_session__peek_cpu(s, 0, 4096, &data),
			 f.prod_pos[0] - pos[3]);
	assert_int_equal(memmon_session__bad_records(s), 2);
	memmon_session__close(s);
	fake_fini(&f);
}

/* A consumer position more than a ring behind: resync, count, go on. */
static void test_bad_consumer_pos(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;

	(void)state;
	setup_session(&f, &s, &c, 1, MEMMON_CONSUME_PER_CPU);
	assert_true(fake_seq(&f, 0, 1, 1) >= 0);
	s->rings[0].cons = f.prod_pos[0] - 2 * RING;
	/* expect: nothing delivered, no error, counted, position repaired */
	assert_int_equal(memmon_session__consume(s), 0);
	assert_int_equal(memmon_session__bad_records(s), 1);
	assert_int_equal(*fake_consumer_pos(&f, 0), f.prod_pos[0]);
	assert_true(fake_seq(&f, 0, 2, 2) >= 0);
	assert_int_equal(memmon_session__consume(s), 1);
	assert_int_equal(c.seq[0], 2);
	memmon_session__close(s);
	fake_fini(&f);
}

static void test_callback_stop_and_error(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	unsigned int i;

	(void)state;
	setup_session(&f, &s, &c, 1, MEMMON_CONSUME_PER_CPU);
	for (i = 0; i < 6; i++)
		assert_true(fake_seq(&f, 0, i, i) >= 0);
	c.stop_at = 2;
	/* > 0 from the callback: stop after it, count 2, both consumed */
	assert_int_equal(memmon_session__consume(s), 2);
	assert_int_equal(*fake_consumer_pos(&f, 0), 2 * 40);
	c.stop_at = 0;
	c.fail_at = 4;
	errno = 0;
	/* < 0: the error, errno set, the failing record consumed too */
	assert_int_equal(memmon_session__consume(s), -EIO);
	assert_int_equal(errno, EIO);
	assert_int_equal(*fake_consumer_pos(&f, 0), 4 * 40);
	c.fail_at = 0;
	assert_int_equal(memmon_session__consume(s), 2);
	assert_int_equal(c.seq[5], 5);
	memmon_session__close(s);
	fake_fini(&f);
}

static void test_peek_release(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	const void *p;
	unsigned int i;

	(void)state;
	setup_session(&f, &s, &c, 2, 0);
	for (i = 0; i < 5; i++)
		assert_true(fake_seq(&f, 1, i, i) >= 0);
	/* empty ring: 0 */
	assert_int_equal(memmon_session__peek_cpu(s, 0, 4096, &p), 0);
	/* whole records only: 100 bytes hold two 40-byte records */
	assert_int_equal(memmon_session__peek_cpu(s, 1, 100, &p), 80);
	assert_ptr_equal(p, fake_data(&f, 1));
	/* a first record bigger than max_bytes: -ENOBUFS */
	assert_int_equal(memmon_session__peek_cpu(s, 1, 39, &p), -ENOBUFS);
	assert_int_equal(memmon_session__release_cpu(s, 1, 80), 0);
	assert_int_equal(*fake_consumer_pos(&f, 1), 80);
	assert_int_equal(memmon_session__peek_cpu(s, 1, 4096, &p), 120);
	assert_int_equal(rec_seq(p), 2);
	/* releasing more than committed: -EINVAL, nothing moves */
	assert_int_equal(memmon_session__release_cpu(s, 1, 160), -EINVAL);
	/* unaligned: -EINVAL */
	assert_int_equal(memmon_session__release_cpu(s, 1, 4), -EINVAL);
	assert_int_equal(memmon_session__release_cpu(s, 1, 120), 0);
	assert_int_equal(*fake_consumer_pos(&f, 1), 200);
	/* bad cpu */
	assert_int_equal(memmon_session__peek_cpu(s, 2, 4096, &p), -EINVAL);
	memmon_session__close(s);
	fake_fini(&f);
}

static void test_ring_stats(void **state)
{
	struct memmon_session *s;
	struct memmon_cpu_stats st;
	struct fake f;
	__u64 lp = 0;

	(void)state;
	assert_int_equal(fake_init(&f, 2, RING), 0);
	fake_page(&f, 1)->stats.produced = 10;
	fake_page(&f, 1)->stats.delivered = 7;
	fake_page(&f, 1)->stats.lost = 3;
	fake_page(&f, 1)->lost_pending = 2;
	s = fake_session(&f);
	assert_non_null(s);
	assert_int_equal(memmon_session__ring_stats(s, 1, &st, &lp), 0);
	assert_int_equal(st.produced, 10);
	assert_int_equal(st.delivered, 7);
	assert_int_equal(st.lost, 3);
	assert_int_equal(lp, 2);
	assert_int_equal(memmon_session__ring_stats(s, 2, &st, &lp), -EINVAL);
	memmon_session__close(s);
	fake_fini(&f);
}

/*
 * memmon_session__finish(): everything is delivered, holdback or not, and
 * a loss the kernel left pending comes last as a LOST record of its CPU.
 */
static struct memmon_rec_lost finish_lost[4];
static unsigned int finish_nlost, finish_nrec;

static int finish_cb(void *ctx, const struct memmon_rec_header *rec)
{
	(void)ctx;
	if (rec->type == MEMMON_REC_LOST) {
		assert_int_equal(rec->size, sizeof(struct memmon_rec_lost));
		if (finish_nlost < 4)
			memcpy(&finish_lost[finish_nlost], rec, sizeof(finish_lost[0]));
		finish_nlost++;
		return 0;
	}
	/* The made-up LOST records come after every real one. */
	assert_int_equal(finish_nlost, 0);
	finish_nrec++;
	return 0;
}

static void test_finish(void **state)
{
	LIBMEMMON_OPTS(memmon_consume_opts, o, .holdback_ns = UINT64_MAX / 2);
	struct memmon_session *s;
	struct fake f;
	unsigned int i;

	(void)state;
	assert_int_equal(fake_init(&f, 2, RING), 0);
	s = fake_session(&f);
	assert_non_null(s);
	finish_nlost = finish_nrec = 0;
	assert_int_equal(memmon_session__set_callback(s, finish_cb, NULL, &o), 0);
	for (i = 0; i < 7; i++)
		assert_true(fake_seq(&f, i % 2, 10 + i, i) >= 0);
	fake_page(&f, 1)->lost_pending = 5;
	/* held back by consume, all there after finish */
	assert_int_equal(memmon_session__consume(s), 0);
	assert_int_equal(memmon_session__finish(s), 8);
	assert_int_equal(finish_nrec, 7);
	assert_int_equal(finish_nlost, 1);
	assert_int_equal(finish_lost[0].hdr.cpu, 1);
	assert_int_equal(finish_lost[0].count, 5);
	assert_int_equal(finish_lost[0].first_ns, 0);
	/* nothing pending: nothing made up */
	fake_page(&f, 1)->lost_pending = 0;
	finish_nlost = finish_nrec = 0;
	assert_int_equal(memmon_session__finish(s), 0);
	assert_int_equal(finish_nlost, 0);
	memmon_session__close(s);
	fake_fini(&f);
}

/* poll() on the session fd (an eventfd here), then the records. */
static void test_poll(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	int efd;

	(void)state;
	assert_int_equal(fake_init(&f, 1, RING), 0);
	efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	s = memmon__session_from_mapping(&f.info, f.cons, f.prod, efd);
	assert_non_null(s);
	memset(&c, 0, sizeof(c));
	c.f = &f;
	assert_int_equal(memmon_session__set_callback(s, collect_cb, &c, NULL), 0);
	assert_int_equal(memmon_session__fd(s), efd);
	/* timeout, nothing there: 0 */
	assert_int_equal(memmon_session__poll(s, 10), 0);
	assert_true(fake_seq(&f, 0, 5, 5) >= 0);
	assert_int_equal(eventfd_write(efd, 1), 0);
	assert_int_equal(memmon_session__poll(s, 1000), 1);
	memmon_session__close(s);
	/* the session did not own the fd: still open */
	assert_true(fcntl(efd, F_GETFD) >= 0);
	close(efd);
	fake_fini(&f);
}

/*
 * A flight recorder (MEMMON_FULL_OVERWRITE): records below the ring page's
 * tail_pos were overwritten (here: garbage) and are skipped, not an error;
 * our own position counts when it lies among the records kept; what is
 * delivered comes from the library's copy, not from the mapping.
 */
static void test_overwrite_reads_from_tail(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	long long pos[8];
	unsigned int i;

	(void)state;
	setup_session(&f, &s, &c, 1, MEMMON_CONSUME_PER_CPU);
	s->overwrite = true;
	for (i = 0; i < 8; i++) {
		pos[i] = fake_seq(&f, 0, 100 + i, i);
		assert_true(pos[i] >= 0);
	}
	/* The producer passed records 0..2 and wrote over them. */
	memset(fake_data(&f, 0), 0xff, (size_t)pos[3]);
	fake_page(&f, 0)->tail_pos = (__u64)pos[3];
	fake_page(&f, 0)->overwritten = 3;
	assert_int_equal(memmon_session__consume(s), 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(c.seq[i], 3 + i);
		/* Delivered from the copy. */
		assert_true((const __u8 *)c.ptr[i] < fake_data(&f, 0) ||
			    (const __u8 *)c.ptr[i] >= fake_data(&f, 0) + 2 * RING);
	}
	assert_int_equal(*fake_consumer_pos(&f, 0), f.prod_pos[0]);
	/* Our position is ahead of tail: the next round starts there. */
	assert_true(fake_seq(&f, 0, 200, 8) >= 0);
	assert_int_equal(memmon_session__consume(s), 1);
	assert_int_equal(c.seq[5], 8);
	/* Nothing new: nothing delivered, no error. */
	assert_int_equal(memmon_session__consume(s), 0);
	memmon_session__close(s);
	fake_fini(&f);
}

/*
 * Round after round across the end of the ring: records that wrap, and
 * records that start past the end, are read from the copy as from the
 * double mapping.
 */
static void test_overwrite_wraps(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;
	unsigned int i, seen = 0;

	(void)state;
	setup_session(&f, &s, &c, 1, MEMMON_CONSUME_PER_CPU);
	s->overwrite = true;
	for (i = 0; i < 3 * RING / 40; i++) {
		assert_true(fake_seq(&f, 0, i, i) >= 0);
		if (i % 300 == 299) {
			/* As a kernel that passed what we read (a boundary). */
			fake_page(&f, 0)->tail_pos = *fake_consumer_pos(&f, 0);
			c.n = 0;
			assert_int_equal(memmon_session__consume(s), 300);
			assert_int_equal(c.seq[0], i - 299);
			assert_int_equal(c.seq[299], i);
			seen += 300;
		}
	}
	assert_true(seen * 40 > 2 * RING);
	memmon_session__close(s);
	fake_fini(&f);
}

/* A tail_pos beyond what was published (a lying page) is refused. */
static void test_overwrite_bad_tail(void **state)
{
	struct memmon_session *s;
	struct collect c;
	struct fake f;

	(void)state;
	setup_session(&f, &s, &c, 1, MEMMON_CONSUME_PER_CPU);
	s->overwrite = true;
	assert_true(fake_seq(&f, 0, 1, 0) >= 0);
	fake_page(&f, 0)->tail_pos = f.prod_pos[0] + 8;
	assert_int_equal(memmon_session__consume(s), -EBADMSG);
	memmon_session__close(s);
	fake_fini(&f);
}

static void test_open_errors(void **state)
{
	struct memmon_session_opts o;
	char path[] = "/tmp/memmon-notdev-XXXXXX";
	int fd;

	(void)state;
	/* NULL and half-built are fine for the destructor */
	memmon_session__close(NULL);

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.path = "/nonexistent/memmon";
	errno = 0;
	/* no such device node: ENOENT */
	assert_null(memmon_session__open(&o));
	assert_int_equal(errno, ENOENT);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	o.path = path;
	errno = 0;
	/* a regular file answers GET_INFO with ENOTTY */
	assert_null(memmon_session__open(&o));
	assert_int_equal(errno, ENOTTY);
	unlink(path);

	{
		struct {
			struct memmon_session_opts o;
			__u64 future;
		} big;

		memset(&big, 0, sizeof(big));
		big.o.sz = sizeof(big);
		big.o.path = "/nonexistent";
		big.future = 1;
		errno = 0;
		/* unknown non-zero option bytes: EINVAL before anything */
		assert_null(memmon_session__open(&big.o));
		assert_int_equal(errno, EINVAL);
	}
	/* ioctls on a NULL session: -EINVAL with errno */
	assert_int_equal(memmon_session__enable(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_checks),
		cmocka_unit_test(test_per_cpu_zero_copy),
		cmocka_unit_test(test_unpublished_invisible),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_concurrent_producer),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_bad_record_merged_cpus),
		cmocka_unit_test(test_bad_record_peek),
		cmocka_unit_test(test_bad_consumer_pos),
		cmocka_unit_test(test_callback_stop_and_error),
		cmocka_unit_test(test_peek_release),
		cmocka_unit_test(test_ring_stats),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_poll),
		cmocka_unit_test(test_overwrite_reads_from_tail),
		cmocka_unit_test(test_overwrite_wraps),
		cmocka_unit_test(test_overwrite_bad_tail),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests_name("lib_ring", tests, NULL, NULL);
}
