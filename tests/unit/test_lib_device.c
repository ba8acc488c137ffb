// SPDX-License-Identifier: GPL-2.0
/*
 * libmemmon against the real /dev/memmon (run in the VM by
 * tests/vm/t_cli_lib.sh; not a host unit test: it needs the module).
 * The session watches this very process, so what it does (marks, mmap,
 * touching a page) comes back as records through the library: mapping
 * checks, configure, watch add/list/del, events, marks, zero-copy merged
 * and per-CPU consumption, poll, peek/release, stats and exact loss
 * accounting on overflow.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include <memmon/memmon.h>
#include <memmon/decode.h>

struct seen {
	const struct memmon_session *s;
	unsigned int marks, lost_recs, n;
	__u64 lost;
	char last_mark[64];
	bool mmap_seen, munmap_seen, fault_seen, in_mapping;
	__u64 addr;
	int cpu_of_mark;
};

static int seen_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct seen *v = ctx;
	const struct memmon_rec_mark *m = memmon_rec__mark(rec);
	const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);
	const struct memmon_rec_fault *f = memmon_rec__fault(rec);
	const struct memmon_rec_lost *l = memmon_rec__lost(rec);

	v->n++;
	if (m && m->len < sizeof(v->last_mark)) {
		v->marks++;
		memcpy(v->last_mark, m->data, m->len);
		v->last_mark[m->len] = '\0';
		v->cpu_of_mark = rec->cpu;
	}
	if (sc && sc->sys == MEMMON_SYS_MMAP && (__u64)sc->ret == v->addr)
		v->mmap_seen = true;
	if (sc && sc->sys == MEMMON_SYS_MUNMAP && sc->args[0] == v->addr)
		v->munmap_seen = true;
	if (f && f->addr >= v->addr && f->addr < v->addr + 4096 &&
	    f->access & MEMMON_FAULT_WRITE)
		v->fault_seen = true;
	if (l) {
		v->lost_recs++;
		v->lost += l->count;
	}
	return 0;
}

static struct memmon_session *open_self(__u64 ring_size, struct seen *v,
					__u32 consume_flags)
{
	LIBMEMMON_OPTS(memmon_session_opts, o, .ring_size = ring_size);
	LIBMEMMON_OPTS(memmon_consume_opts, c, .flags = consume_flags);
	struct memmon_session *s = memmon_session__open(&o);

	assert_non_null(s);
	memset(v, 0, sizeof(*v));
	v->s = s;
	assert_int_equal(memmon_session__set_callback(s, seen_cb, v, &c), 0);
	assert_int_equal(memmon_session__watch_add(s, getpid(), 0), 0);
	assert_int_equal(memmon_session__map(s), 0);
	assert_int_equal(memmon_session__enable(s), 0);
	return s;
}

static void test_info_configure(void **state)
{
	struct memmon_session *s = memmon_session__open(NULL);
	const struct memmon_info *in;

	(void)state;
	assert_non_null(s);
	in = memmon_session__info(s);
	/* the module speaks our major */
	assert_int_equal(in->abi_major, MEMMON_ABI_MAJOR);
	assert_int_equal(in->nr_cpus, memmon_session__nr_cpus(s));
	assert_true(in->nr_cpus >= (unsigned int)sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(in->page_size, (unsigned int)sysconf(_SC_PAGESIZE));
	assert_int_equal(memmon_session__configure(s, 64 * 1024, 16 * 1024), 0);
	/* info is refreshed */
	assert_int_equal(in->ring_size, 64 * 1024);
	assert_int_equal(in->wakeup_bytes, 16 * 1024);
	/* not a power of two: the module refuses */
	assert_int_equal(memmon_session__configure(s, 3 * 4096, 0), -EINVAL);
	/* the mapping matches GET_INFO (the library checks every field) */
	assert_int_equal(memmon_session__map(s), 0);
	/* after the map, the layout is fixed */
	assert_int_equal(memmon_session__configure(s, 128 * 1024, 0), -EBUSY);
	assert_int_equal(errno, EBUSY);
	memmon_session__close(s);
}

static void test_watch(void **state)
{
	struct memmon_session *s = memmon_session__open(NULL);
	struct memmon_watch_entry e[4];
	int n;

	(void)state;
	assert_non_null(s);
	assert_int_equal(memmon_session__watch_list(s, e, 4), 0);
	assert_int_equal(memmon_session__watch_add(s, getpid(),
						   MEMMON_WATCH_FOLLOW_CHILDREN), 0);
	n = memmon_session__watch_list(s, e, 4);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].pid, (__u32)getpid());
	assert_int_equal(e[0].flags, MEMMON_WATCH_FOLLOW_CHILDREN);
	/* count without entries */
	assert_int_equal(memmon_session__watch_list(s, NULL, 0), 1);
	assert_int_equal(memmon_session__watch_del(s, getpid()), 0);
	assert_int_equal(memmon_session__watch_list(s, e, 4), 0);
	/* no such process */
	assert_int_equal(memmon_session__watch_add(s, 4194303, 0), -ESRCH);
	assert_int_equal(errno, ESRCH);
	/* unknown event bits */
	assert_int_equal(memmon_session__set_events(s, 1ULL << 40, 0), -EINVAL);
	memmon_session__close(s);
}

static void test_mark_and_mmap_merged(void **state)
{
	struct seen v;
	struct memmon_session *s = open_self(0, &v, 0);
	char *p;

	(void)state;
	assert_int_equal(memmon_session__mark(s, "hello lib", 9, MEMMON_MARK_WATCHERS), 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	v.addr = (__u64)(uintptr_t)p;
	p[0] = 1;
	munmap(p, 4096);
	/* poll then flush: everything committed comes back */
	assert_true(memmon_session__poll(s, 200) >= 0);
	assert_true(memmon_session__flush(s) >= 0);
	assert_int_equal(v.marks, 1);
	assert_string_equal(v.last_mark, "hello lib");
	assert_true(v.mmap_seen);
	assert_true(v.fault_seen);
	assert_true(v.munmap_seen);
	memmon_session__close(s);
}

static void test_per_cpu_and_peek(void **state)
{
	struct seen v;
	struct memmon_session *s;
	const void *data;
	cpu_set_t set;
	ssize_t len;
	unsigned int cpu = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 1 : 0;

	(void)state;
	s = open_self(0, &v, MEMMON_CONSUME_PER_CPU);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	assert_int_equal(memmon_session__mark(s, "on cpu", 6, MEMMON_MARK_WATCHERS), 0);
	/* the mark is in that CPU's ring: raw peek sees whole records */
	len = memmon_session__peek_cpu(s, cpu, 1 << 20, &data);
	assert_true(len >= (ssize_t)sizeof(struct memmon_rec_mark));
	assert_int_equal(len % 8, 0);
	assert_int_equal(((const struct memmon_rec_header *)data)->cpu, cpu);
	/* nothing released yet: consume_cpu still gets it */
	assert_true(memmon_session__consume_cpu(s, cpu) >= 1);
	assert_string_equal(v.last_mark, "on cpu");
	assert_int_equal(v.cpu_of_mark, (int)cpu);
	/* and now the ring is empty up to what we did since */
	assert_int_equal(memmon_session__mark(s, "x", 1, MEMMON_MARK_WATCHERS), 0);
	len = memmon_session__peek_cpu(s, cpu, 1 << 20, &data);
	assert_true(len > 0);
	assert_int_equal(memmon_session__release_cpu(s, cpu, (size_t)len), 0);
	assert_int_equal(memmon_session__peek_cpu(s, cpu, 1 << 20, &data), 0);
	CPU_ZERO(&set);
	for (cpu = 0; cpu < (unsigned int)sysconf(_SC_NPROCESSORS_ONLN); cpu++)
		CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	memmon_session__close(s);
}

/* A small ring overflows; the losses are counted exactly. */
static void test_overflow_accounting(void **state)
{
	struct memmon_cpu_stats st[64], rs;
	struct seen v;
	struct memmon_session *s;
	unsigned int i, c, n;
	__u64 produced = 0, delivered = 0, lost = 0, pending = 0, lp;

	cpu_set_t set, all;

	(void)state;
	/* one CPU, so that the marks after the overflow meet the losses */
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	s = open_self(8192, &v, 0);
	for (i = 0; i < 2000; i++)
		memmon_session__mark(s, "spam spam spam spam", 19, MEMMON_MARK_WATCHERS);
	n = (unsigned int)memmon_session__stats(s, st, 64);
	assert_true(n >= 1);
	for (c = 0; c < n && c < 64; c++) {
		/* per CPU: produced == delivered + lost */
		assert_int_equal(st[c].produced, st[c].delivered + st[c].lost);
		produced += st[c].produced;
		delivered += st[c].delivered;
		lost += st[c].lost;
		/* the ring page has the same counters, without a syscall */
		assert_int_equal(memmon_session__ring_stats(s, c, &rs, &lp), 0);
		assert_int_equal(rs.lost, st[c].lost);
		pending += lp;
	}
	assert_true(lost > 0);
	/* drain: the LOST records already in the rings, then more marks
	 * (each ring reports its pending losses before the next event)
	 */
	memmon_session__flush(s);
	memmon_session__mark(s, "after", 5, MEMMON_MARK_WATCHERS);
	memmon_session__flush(s);
	/* every loss came back as LOST records, exactly */
	assert_int_equal(v.lost, lost);
	assert_true(v.lost_recs >= 1);
	assert_int_equal(produced, delivered + lost);
	(void)pending;
	sched_setaffinity(0, sizeof(all), &all);
	memmon_session__close(s);
}

/*
 * memmon_session__finish(): a session that ends with its ring full and a
 * loss pending (no event after it to carry the LOST record) still delivers
 * every loss, and the records delivered account for every event.
 */
static void test_finish_delivers_losses(void **state)
{
	struct memmon_cpu_stats st[64];
	struct seen v;
	struct memmon_session *s;
	unsigned int i, c, n;
	__u64 produced = 0, lost = 0, pending = 0, lp;
	cpu_set_t set, all;
	int got;

	(void)state;
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	s = open_self(8192, &v, 0);
	for (i = 0; i < 2000; i++)
		memmon_session__mark(s, "spam spam spam spam", 19, MEMMON_MARK_WATCHERS);
	assert_int_equal(memmon_session__ring_stats(s, 0, NULL, &lp), 0);
	/* the case: a loss pending that no later event will report */
	assert_true(lp > 0);
	got = memmon_session__finish(s);
	assert_true(got > 0);
	n = (unsigned int)memmon_session__stats(s, st, 64);
	for (c = 0; c < n && c < 64; c++) {
		assert_int_equal(st[c].produced, st[c].delivered + st[c].lost);
		produced += st[c].produced;
		lost += st[c].lost;
		assert_int_equal(memmon_session__ring_stats(s, c, NULL, &lp), 0);
		pending += lp;
	}
	assert_true(lost > 0);
	assert_int_equal(pending, 0);
	/* every loss is in the stream, every other record is an event */
	assert_int_equal(v.lost, lost);
	assert_int_equal(v.n - v.lost_recs + v.lost, produced);
	sched_setaffinity(0, sizeof(all), &all);
	memmon_session__close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_configure),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_mark_and_mmap_merged),
		cmocka_unit_test(test_per_cpu_and_peek),
		cmocka_unit_test(test_overflow_accounting),
		cmocka_unit_test(test_finish_delivers_losses),
	};

	return cmocka_run_group_tests_name("lib_device", tests, NULL, NULL);
}
