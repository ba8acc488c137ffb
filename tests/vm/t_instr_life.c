// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle: FORK, EXEC and EXIT records, following children, threads,
 * PID reuse, and a watched process exiting while the consumer reads.
 *
 *  1. A chain R -> C1 -> C2 -> C3, C3 exec()s /bin/true; R is watched with
 *     MEMMON_WATCH_FOLLOW_CHILDREN. Every FORK record names its parent and
 *     child, EXEC the image, EXIT the wait status and GROUP; and every
 *     fault of the tree, children from their first instruction, is
 *     recorded: fault records == wait4() rusage of R, minus what R had
 *     before WATCH_ADD.
 *  2. Threads: FORK records with THREAD|VM, EXIT without GROUP for each
 *     thread and GROUP for the process, faults under each thread's tid.
 *  3. PID reuse: a watched process exits; a new process that gets its PID
 *     is not watched and produces no record.
 *  4. A consumer thread reads continuously while watched processes exit;
 *     WATCH_LIST forgets them.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "vmtest.h"
#include "instr.h"

#define P 4096UL

static long proc_minmaj(pid_t pid)
{
	char path[64], buf[1024], *p;
	long min = 0, maj = 0;
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
	p += 2;
	for (field = 3; field < 12 && p; field++) {
		if (field == 10)
			min = strtol(p, NULL, 10);
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		maj = strtol(p, NULL, 10);
	return min + maj;
}

/* Wait until @pid sleeps (in the read() of its start pipe). */
static void wait_asleep(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (;;) {
		fd = open(path, O_RDONLY);
		n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = 0;
		p = strrchr(buf, ')');
		if (p && p[2] == 'S')
			return;
		usleep(1000);
	}
}

static const struct in_rec *find(struct in_sess *s, size_t from, uint16_t type,
				 uint32_t tgid, size_t *at)
{
	size_t i;

	for (i = from; i < s->n; i++) {
		if (s->recs[i]->hdr.type == type &&
		    (!tgid || s->recs[i]->hdr.tgid == tgid)) {
			if (at)
				*at = i;
			return s->recs[i];
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ 1 */

struct tree {
	pid_t pid[4];		/* R, C1, C2, C3 */
};

static struct tree *tree;

static int chain(int depth)
{
	pid_t c;
	int st;

	/* Something of its own to fault on. */
	volatile char *p = mmap(NULL, 8 * P, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 8; i++)
		p[i * P] = 1;
	if (depth == 3) {
		execl("/bin/true", "true", (char *)NULL);
		return 98;
	}
	c = fork();
	if (c < 0)
		return 97;
	if (!c)
		_exit(chain(depth + 1));
	tree->pid[depth + 1] = c;
	if (waitpid(c, &st, 0) != c)
		return 96;
	return depth == 0 ? 0 : depth + 2;	/* C1 exits 3, C2 exits 4 */
}

static void test_tree(void)
{
	const struct memmon_rec_fork *fk;
	const struct memmon_rec_exec *ex;
	const struct memmon_rec_exit *et;
	uint64_t faults = 0;
	struct in_sess s;
	struct rusage ru;
	int go[2], st, i, okfork = 0;
	long before;
	size_t k, at;
	pid_t r;
	char c;

	tree = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (tree == MAP_FAILED || pipe(go) || in_open(&s, 8 << 20))
		exit(1);
	r = fork();
	if (!r) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(99);
		_exit(chain(0));
	}
	tree->pid[0] = r;
	wait_asleep(r);
	before = proc_minmaj(r);
	VT_SUCCESS(in_watch(&s, r, MEMMON_WATCH_FOLLOW_CHILDREN),
		   "tree: watch R with FOLLOW_CHILDREN");
	VT_SUCCESS(in_enable(&s), "tree: enable");
	VT_OK(write(go[1], "g", 1) == 1, "tree: start R");
	st = -1;
	if (wait4(r, &st, 0, &ru) != r)
		st = -1;
	VT_OK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "tree: R and its chain ran (status %#x)", st);
	in_disable(&s);
	in_drain(&s);
	VT_OK(s.lost == 0, "tree: no record lost");

	/* FORK R->C1, C1->C2, C2->C3, in that order. */
	for (i = 0, k = 0; i < 3; i++) {
		fk = (const void *)find(&s, k, MEMMON_REC_FORK, tree->pid[i], &at);
		okfork += fk && fk->child_tgid == (uint32_t)tree->pid[i + 1] &&
			  fk->child_tid == (uint32_t)tree->pid[i + 1] && !fk->flags;
		k = fk ? at + 1 : k;
	}
	/* Expectation: one FORK per generation, parent in the header. */
	VT_OK(okfork == 3, "tree: FORK records R->C1->C2->C3 (%d of 3)", okfork);

	ex = (const void *)find(&s, 0, MEMMON_REC_EXEC, tree->pid[3], &at);
	/* Expectation: C3 (depth 3, a follow-children grandchild) exec()ed true. */
	VT_OK(ex && ex->path_len == strlen(ex->path) &&
	      !strcmp(ex->path + ex->path_len - 5, "/true"),
	      "tree: EXEC of C3: %s", ex ? ex->path : "(none)");
	/* Expectation: the new image (its loader's mmaps) is still watched. */
	VT_OK(ex && find(&s, at + 1, MEMMON_REC_SYSCALL, tree->pid[3], NULL),
	      "tree: the new image's syscalls are recorded");

	for (i = 0; i < 4; i++) {
		static const uint32_t code[] = { 0, 3 << 8, 4 << 8, 0 };

		et = (const void *)find(&s, 0, MEMMON_REC_EXIT, tree->pid[i], NULL);
		/* Expectation: the wait status, GROUP, the mm's peaks. */
		VT_OK(et && et->code == code[i] && (et->flags & MEMMON_EXITF_GROUP) &&
		      et->peak_rss > 0 && et->peak_vm >= et->peak_rss,
		      "tree: EXIT of %s: code %#x, group, peak rss %llu vm %llu",
		      i ? (i == 1 ? "C1" : i == 2 ? "C2" : "C3") : "R",
		      et ? et->code : ~0U,
		      et ? (unsigned long long)et->peak_rss : 0,
		      et ? (unsigned long long)et->peak_vm : 0);
	}

	for (k = 0; k < s.n; k++) {
		const struct memmon_rec_fault *f = (const void *)s.recs[k];

		for (i = 0; i < 4; i++)
			if (f->hdr.tgid == (uint32_t)tree->pid[i])
				break;
		if (i < 4 && f->hdr.type == MEMMON_REC_FAULT &&
		    f->result == MEMMON_FRES_HANDLED)
			faults++;
	}
	/* Expectation: children are watched from their first instruction. */
	VT_OK((long)faults == ru.ru_minflt + ru.ru_majflt - before,
	      "tree: %llu fault records == rusage of the tree since WATCH_ADD %ld",
	      (unsigned long long)faults, ru.ru_minflt + ru.ru_majflt - before);
	in_close(&s);
}

/* ------------------------------------------------------------------ 2 */

#define THREADS 3

static void *thread_fn(void *arg)
{
	volatile char *p = arg;

	p[0] = 1;
	p[P] = 1;
	return NULL;
}

static void test_threads(void)
{
	long tids[THREADS] = { 0 };
	struct in_sess s;
	pthread_t t[THREADS];
	int go[2], st, i, forks = 0, exits = 0, group = 0, faulted = 0;
	size_t k;
	pid_t pid;
	char c;

	if (pipe(go) || in_open(&s, 8 << 20))
		exit(1);
	pid = fork();
	if (!pid) {
		char *p = mmap(NULL, 2 * THREADS * P, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		close(go[1]);
		if (p == MAP_FAILED || read(go[0], &c, 1) != 1)
			_exit(99);
		for (i = 0; i < THREADS; i++)
			if (pthread_create(&t[i], NULL, thread_fn, p + 2 * i * P))
				_exit(98);
		for (i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		_exit(0);
	}
	close(go[0]);
	wait_asleep(pid);
	VT_SUCCESS(in_watch(&s, pid, 0), "threads: watch the process (no follow)");
	VT_SUCCESS(in_enable(&s), "threads: enable");
	VT_OK(write(go[1], "g", 1) == 1, "threads: start");
	VT_OK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "threads: ran");
	in_disable(&s);
	in_drain(&s);
	for (k = 0; k < s.n; k++) {
		const struct in_rec *r = s.recs[k];

		if (r->hdr.tgid != (uint32_t)pid)
			continue;
		if (r->hdr.type == MEMMON_REC_FORK) {
			const struct memmon_rec_fork *f = (const void *)r;

			if (f->child_tgid == (uint32_t)pid &&
			    f->flags == (MEMMON_FORKF_THREAD | MEMMON_FORKF_VM) &&
			    forks < THREADS)
				tids[forks++] = f->child_tid;
		}
		if (r->hdr.type == MEMMON_REC_EXIT) {
			const struct memmon_rec_exit *e = (const void *)r;

			if (e->flags & MEMMON_EXITF_GROUP)
				group += r->hdr.tid == (uint32_t)pid;
			else
				exits++;
		}
	}
	for (k = 0; k < s.n; k++) {
		const struct in_rec *r = s.recs[k];

		for (i = 0; i < forks; i++)
			if (r->hdr.type == MEMMON_REC_FAULT &&
			    r->hdr.tid == (uint32_t)tids[i] && tids[i] != pid) {
				faulted |= 1 << i;
				break;
			}
	}
	/* Expectation: threads born after WATCH_ADD are the process's. */
	VT_OK(forks == THREADS, "threads: %d FORK records with THREAD|VM", forks);
	VT_OK(exits == THREADS && group == 1,
	      "threads: %d thread EXITs without GROUP, %d GROUP EXIT", exits, group);
	VT_OK(faulted == (1 << THREADS) - 1,
	      "threads: each new thread's faults carry its tid (%#x)", faulted);
	in_close(&s);
}

/* ------------------------------------------------------------------ 3 */

static int set_pid_max(int v)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r+");
	int old = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &old) != 1)
		old = -1;
	rewind(f);
	fprintf(f, "%d\n", v);
	fclose(f);
	return old;
}

static void test_pid_reuse(void)
{
	struct memmon_watch_list wl = { .size = sizeof(wl) };
	struct in_sess s;
	int st, old_max, tries, go[2];
	pid_t victim, p = 0;
	char c;

	if (in_open(&s, 4 << 20) || pipe(go))
		exit(1);
	/*
	 * Few PIDs: reuse comes after a few hundred forks. After pid_max the
	 * kernel wraps to 300 (RESERVED_PIDS), so the victim must be above.
	 */
	old_max = set_pid_max(1024);
	do {
		p = fork();
		if (!p)
			_exit(0);
		waitpid(p, &st, 0);
	} while (p > 0 && p < 400);
	victim = fork();
	if (!victim) {
		close(go[1]);
		_exit(read(go[0], &c, 1) == 0 ? 7 : 99);
	}
	close(go[0]);
	VT_SUCCESS(in_watch(&s, victim, 0), "pid reuse: watch %d", victim);
	VT_SUCCESS(in_enable(&s), "pid reuse: enable");
	close(go[1]);
	waitpid(victim, &st, 0);
	/* Expectation: the exit of the process ends its watch entry. */
	VT_OK(!ioctl(s.fd, MEMMON_IOC_WATCH_LIST, &wl) && wl.count == 0,
	      "pid reuse: WATCH_LIST is empty after the exit (%u)", wl.count);
	for (tries = 0; tries < 4096; tries++) {
		p = fork();
		if (!p) {
			/* A syscall and faults that must not be recorded. */
			volatile char *m = mmap(NULL, P, PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m != MAP_FAILED)
				m[0] = 1;
			_exit(0);
		}
		waitpid(p, &st, 0);
		if (p == victim)
			break;
	}
	if (old_max > 0)
		set_pid_max(old_max);
	in_disable(&s);
	in_drain(&s);
	VT_OK(p == victim, "pid reuse: a new process got pid %d after %d forks",
	      victim, tries + 1);
	{
		size_t k, exit_at = 0, after = 0;

		find(&s, 0, MEMMON_REC_EXIT, victim, &exit_at);
		for (k = exit_at + 1; k < s.n; k++)
			after += s.recs[k]->hdr.tgid == (uint32_t)victim;
		/* Expectation: the watch was on the process, not the number. */
		VT_OK(find(&s, 0, MEMMON_REC_EXIT, victim, NULL) && after == 0,
		      "pid reuse: no record of the new process with the old pid (%zu)",
		      after);
	}
	in_close(&s);
}

/* ------------------------------------------------------------------ 4 */

static volatile int reading;

static void *reader(void *arg)
{
	struct in_sess *s = arg;

	while (reading)
		in_read(s);
	return NULL;
}

static void test_exit_while_reading(void)
{
	struct memmon_watch_list wl = { .size = sizeof(wl) };
	struct in_sess s;
	pthread_t t;
	pid_t pid[8];
	int i, st, exits = 0, ok = 0, watched = 0, go[2];
	size_t k;
	char c;

	if (pipe(go) || in_open(&s, 4 << 20) || in_enable(&s))
		exit(1);
	reading = 1;
	if (pthread_create(&t, NULL, reader, &s))
		exit(1);
	for (i = 0; i < 8; i++) {
		pid[i] = fork();
		if (!pid[i]) {
			/* Until every child is watched: EOF when the parent closes. */
			close(go[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(99);
			for (int j = 0; j < 50; j++) {
				volatile char *m = mmap(NULL, P, PROT_READ | PROT_WRITE,
							MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				m[0] = 1;
				munmap((void *)m, P);
			}
			_exit(i);
		}
		watched += !in_watch(&s, pid[i], MEMMON_WATCH_FOLLOW_CHILDREN);
	}
	close(go[1]);
	close(go[0]);
	VT_OK(watched == 8, "exit while reading: 8 processes watched (%d)", watched);
	for (i = 0; i < 8; i++)
		ok += waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) &&
		      WEXITSTATUS(st) == i;
	reading = 0;
	pthread_join(t, NULL);
	in_disable(&s);
	in_drain(&s);
	for (k = 0; k < s.n; k++)
		exits += s.recs[k]->hdr.type == MEMMON_REC_EXIT &&
			 (((const struct memmon_rec_exit *)s.recs[k])->flags &
			  MEMMON_EXITF_GROUP);
	VT_OK(ok == 8, "exit while reading: 8 watched processes exited normally");
	/* Expectation: each exit recorded once, as seen by a live reader. */
	VT_OK(exits == 8, "exit while reading: %d GROUP EXIT records", exits);
	VT_OK(!ioctl(s.fd, MEMMON_IOC_WATCH_LIST, &wl) && wl.count == 0,
	      "exit while reading: the watch list is empty (%u)", wl.count);
	in_close(&s);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_tree();
	test_threads();
	test_pid_reuse();
	test_exit_while_reading();
	return vt_exit();
}
