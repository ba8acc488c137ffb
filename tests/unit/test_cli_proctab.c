// SPDX-License-Identifier: GPL-2.0
/*
 * The live-process table of trace/record: FORK/EXIT bookkeeping, records
 * seen out of order (a child's EXIT before its FORK), PID reuse, threads,
 * reaping vanished PIDs, and concurrent updaters (record's per-CPU
 * readers) under RCU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <cmocka.h>
#include "test_cli_run.h"

static void rec_exit(struct proctab *pt, __u32 tgid, __u64 t, bool group)
{
	struct memmon_rec_exit x;

	memset(&x, 0, sizeof(x));
	x.hdr.size = sizeof(x);
	x.hdr.type = MEMMON_REC_EXIT;
	x.hdr.time_ns = t;
	x.hdr.tgid = tgid;
	x.flags = group ? MEMMON_EXITF_GROUP : 0;
	proctab_on_record(pt, &x.hdr);
}

static void rec_fork(struct proctab *pt, __u32 parent, __u32 child, __u64 t,
		     __u32 flags)
{
	struct memmon_rec_fork f;

	memset(&f, 0, sizeof(f));
	f.hdr.size = sizeof(f);
	f.hdr.type = MEMMON_REC_FORK;
	f.hdr.time_ns = t;
	f.hdr.tgid = parent;
	f.child_tgid = child;
	f.child_tid = child;
	f.flags = flags;
	proctab_on_record(pt, &f.hdr);
}

static void test_lifecycle(void **state)
{
	struct proctab *pt = proctab_new(true);

	(void)state;
	proctab_thread_online();
	proctab_add(pt, 10);
	assert_int_equal(proctab_live(pt), 1);
	rec_fork(pt, 10, 11, 5, 0);
	/* a followed child is live */
	assert_int_equal(proctab_live(pt), 2);
	rec_fork(pt, 10, 10, 6, MEMMON_FORKF_THREAD | MEMMON_FORKF_VM);
	/* a thread is not a process */
	assert_int_equal(proctab_live(pt), 2);
	rec_exit(pt, 11, 7, false);
	/* a thread's exit (no GROUP) changes nothing */
	assert_int_equal(proctab_live(pt), 2);
	rec_exit(pt, 11, 9, true);
	assert_int_equal(proctab_live(pt), 1);
	/* the child's EXIT seen before its FORK: the FORK does not revive it */
	rec_exit(pt, 12, 20, true);
	rec_fork(pt, 10, 12, 15, 0);
	assert_int_equal(proctab_live(pt), 1);
	/* a later fork with the same PID: reused, live again */
	rec_fork(pt, 10, 12, 30, 0);
	assert_int_equal(proctab_live(pt), 2);
	/* a fork from a process we do not watch is not ours */
	rec_fork(pt, 99, 13, 31, 0);
	assert_int_equal(proctab_live(pt), 2);
	rec_exit(pt, 12, 40, true);
	rec_exit(pt, 10, 41, true);
	assert_int_equal(proctab_live(pt), 0);
	/* twice is once */
	rec_exit(pt, 10, 42, true);
	assert_int_equal(proctab_live(pt), 0);
	proctab_free(pt);
	proctab_thread_offline();
}

static void test_no_follow(void **state)
{
	struct proctab *pt = proctab_new(false);

	(void)state;
	proctab_thread_online();
	proctab_add(pt, 10);
	rec_fork(pt, 10, 11, 5, 0);
	/* without -f children are not waited for */
	assert_int_equal(proctab_live(pt), 1);
	proctab_exited(pt, 10);
	assert_int_equal(proctab_live(pt), 0);
	proctab_free(pt);
	proctab_thread_offline();
}

static void test_reap(void **state)
{
	struct proctab *pt = proctab_new(true);
	pid_t gone;

	(void)state;
	for (gone = 4194000; gone > 300000; gone -= 997)
		if (kill(gone, 0) < 0 && errno == ESRCH)
			break;
	proctab_thread_online();
	proctab_add(pt, getpid());
	proctab_add(pt, gone);
	assert_int_equal(proctab_live(pt), 2);
	/* the exception (a child not yet waited for) is kept */
	proctab_reap_gone(pt, gone);
	assert_int_equal(proctab_live(pt), 2);
	proctab_reap_gone(pt, 0);
	/* a vanished PID is dropped, we are still here */
	assert_int_equal(proctab_live(pt), 1);
	proctab_free(pt);
	proctab_thread_offline();
}

struct worker {
	struct proctab *pt;
	__u32 base;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	__u32 i;

	proctab_thread_online();
	for (i = 0; i < 2000; i++) {
		rec_fork(w->pt, 1, w->base + i, 10 + i, 0);
		rec_exit(w->pt, w->base + i, 100000 + i, true);
	}
	proctab_thread_offline();
	return NULL;
}

static void test_concurrent(void **state)
{
	struct proctab *pt = proctab_new(true);
	struct worker w[4];
	pthread_t t[4];
	int i;

	(void)state;
	proctab_thread_online();
	proctab_add(pt, 1);
	for (i = 0; i < 4; i++) {
		w[i].pt = pt;
		w[i].base = 1000 + (__u32)i * 10000;
		assert_int_equal(pthread_create(&t[i], NULL, worker, &w[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* 8000 children came and went: only the root is left */
	assert_int_equal(proctab_live(pt), 1);
	proctab_free(pt);
	proctab_thread_offline();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_no_follow),
		cmocka_unit_test(test_reap),
		cmocka_unit_test(test_concurrent),
	};

	return cmocka_run_group_tests_name("cli_proctab", tests, NULL, NULL);
}
