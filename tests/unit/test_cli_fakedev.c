// SPDX-License-Identifier: GPL-2.0
/*
 * memmon trace / record / mark end to end on the host, against a fake
 * /dev/memmon: the binary is linked with --wrap=ioctl,mmap,munmap, and
 * the wrappers answer memmon's ioctls on /dev/null (MEMMON_DEVICE) and map
 * fake rings laid out per the uapi (tests/unit/test_lib_fake.h). On
 * ENABLE (or at WATCH_ADD, when that comes after ENABLE) the "kernel" writes
 * a scripted story for the watched process;
 * everything else (fork/exec of the command, watch, map, consume, merge,
 * decode, the live-process table, record's threads and file, Ctrl-C) is
 * the real code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "test_lib_fake.h"
#include "test_cli_run.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define DEV "MEMMON_DEVICE=/dev/null"

int __real_ioctl(int fd, unsigned long req, void *arg);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_munmap(void *addr, size_t len);

static struct fake F;
static bool fake_ready;
static __u32 watched[8];
static unsigned int nr_watched;
/* The story is written once enabled and watching, in either order. */
static bool fake_enabled;

static bool is_fake_fd(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == makedev(1, 3);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* The story, for the first watched process. */
static void produce(void)
{
	__u32 pid = watched[0];
	__u64 t = mono_ns() - 1000000;
	struct memmon_rec_syscall sc;
	struct memmon_rec_fault f;
	struct memmon_rec_exit x;
	struct memmon_rec_lost l;
	struct memmon_rec_fork fk;
	struct {
		__u32 len, res;
		char path[16];
	} ex = { 9, 0, "/bin/true" };

	fake_write(&F, 0, MEMMON_REC_EXEC, t, pid, &ex, sizeof(ex));
	memset(&sc, 0, sizeof(sc));
	sc.sys = MEMMON_SYS_MMAP;
	sc.args[1] = 4096;
	sc.args[2] = 3;
	sc.args[3] = 0x22;
	sc.args[4] = (__u64)-1;
	sc.ret = 0x7f0000000000;
	sc.duration_ns = 12000;
	fake_write(&F, 1, MEMMON_REC_SYSCALL, t + 100, pid, (char *)&sc + 24, sizeof(sc) - 24);
	memset(&f, 0, sizeof(f));
	f.addr = 0x7f0000000010;
	f.ip = 0x401000;
	f.access = MEMMON_FAULT_WRITE;
	f.fclass = MEMMON_FCLASS_ANON;
	f.duration_ns = 3000;
	fake_write(&F, 0, MEMMON_REC_FAULT, t + 200, pid, (char *)&f + 24, sizeof(f) - 24);
	memset(&l, 0, sizeof(l));
	l.count = 3;
	fake_write(&F, 1, MEMMON_REC_LOST, t + 250, 0, (char *)&l + 24, sizeof(l) - 24);
	fake_page(&F, 1)->stats.lost = 3;
	if (getenv("FAKE_FORK")) {
		memset(&fk, 0, sizeof(fk));
		fk.child_tgid = (__u32)atoi(getenv("FAKE_FORK"));
		fk.child_tid = fk.child_tgid;
		fake_write(&F, 1, MEMMON_REC_FORK, t + 260, pid, (char *)&fk + 24,
			   sizeof(fk) - 24);
	}
	if (!getenv("FAKE_NO_EXIT")) {
		memset(&x, 0, sizeof(x));
		x.flags = MEMMON_EXITF_GROUP;
		fake_write(&F, 1, MEMMON_REC_EXIT, t + 300, pid, (char *)&x + 24,
			   sizeof(x) - 24);
	}
}

int __wrap_ioctl(int fd, unsigned long req, void *arg)
{
	if (_IOC_TYPE(req) != MEMMON_IOC_MAGIC || !is_fake_fd(fd))
		return __real_ioctl(fd, req, arg);
	if (!fake_ready) {
		if (fake_init(&F, 2, 64 * 1024))
			return -1;
		fake_ready = true;
	}
	switch (_IOC_NR(req)) {
	case _IOC_NR(MEMMON_IOC_GET_INFO): {
		struct memmon_info *in = arg;

		*in = F.info;
		in->mark_max = MEMMON_MARK_MAX;
		in->features = MEMMON_FEAT_MMAP | MEMMON_FEAT_MARK;
		in->size = sizeof(*in);
		in->session_flags = MEMMON_SESSF_PTRACE;
		in->user_sessions = 3;
		in->user_sessions_max = 16;
		in->user_ring_bytes = 3 * 132 * 1024;
		in->user_ring_budget = 8 * 1024 * 1024;
		in->user_ring_avail = 8 * 1024 * 1024 - 3 * 132 * 1024;
		return 0;
	}
	case _IOC_NR(MEMMON_IOC_WATCH_ADD): {
		struct memmon_watch *w = arg;

		if (nr_watched < 8)
			watched[nr_watched++] = w->pid;
		/* The tools enable first, then watch (no event missed). */
		if (fake_enabled && nr_watched == 1)
			produce();
		return 0;
	}
	case _IOC_NR(MEMMON_IOC_ENABLE):
		fake_enabled = true;
		if (nr_watched)
			produce();
		return 0;
	case _IOC_NR(MEMMON_IOC_GET_STATS): {
		struct memmon_stats *st = arg;
		struct memmon_cpu_stats *cs = (void *)(uintptr_t)st->cpus;
		unsigned int c;

		for (c = 0; c < st->nr_cpus && c < F.nr_cpus; c++)
			cs[c] = fake_page(&F, c)->stats;
		st->nr_cpus = F.nr_cpus;
		return 0;
	}
	case _IOC_NR(MEMMON_IOC_MARK): {
		struct memmon_mark *m = arg;

		/* the test checks what the tool asked for */
		if (m->flags != MEMMON_MARK_WATCHERS || m->len != 11 ||
		    memcmp((void *)(uintptr_t)m->data, "phase two 2", 11)) {
			errno = EINVAL;
			return -1;
		}
		return 0;
	}
	default:
		return 0;
	}
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!is_fake_fd(fd))
		return __real_mmap(addr, len, prot, flags, fd, off);
	if (off == 0 && len == F.info.consumer_size)
		return F.cons;
	if ((__u64)off == F.info.producer_offset && len == F.info.producer_size)
		return F.prod;
	errno = EINVAL;
	return MAP_FAILED;
}

int __wrap_munmap(void *addr, size_t len)
{
	if (fake_ready && (addr == F.cons || addr == F.prod))
		return 0;
	return __real_munmap(addr, len);
}

static struct run res;

static void test_trace_command(void **state)
{
	static const char *const want[] = {
		"exec \"/bin/true\"",
		"mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000 <0.000012>",
		"fault 0x7f0000000010 ip=0x401000 write anon minor handled <0.000003>",
		"lost 3 events",
		"exit exited 0 group",
	};
	const char *p;
	size_t i;

	(void)state;
	run_memmon(&res, DEV, NULL, A("trace", "--", "true"));
	/* true's status is ours */
	assert_int_equal(res.code, 0);
	for (i = 0; i < ARRAY_SIZE(want); i++)
		if (!strstr(res.out, want[i]))
			fail_msg("missing \"%s\" in:\n%s\nstderr: %s", want[i],
				 res.out, res.err);
	/* merged in time order: exec, mmap, fault */
	p = strstr(res.out, "exec");
	assert_true(p < strstr(res.out, "mmap(") && strstr(res.out, "mmap(") <
		    strstr(res.out, "fault "));
	/* losses, loudly, per CPU */
	assert_non_null(strstr(res.err, "LOST 3 events: cpu1=3"));

	run_memmon(&res, DEV, NULL, A("trace", "--", "false"));
	assert_int_equal(res.code, 1);
	run_memmon(&res, DEV, NULL, A("trace", "--", "/nonexistent/cmd"));
	assert_int_equal(res.code, 127);
	assert_non_null(strstr(res.err, "cannot run '/nonexistent/cmd'"));
}

static void test_trace_pid_json_events(void **state)
{
	char pid[16], *line, *save = NULL;
	unsigned int n = 0;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", getpid());
	/* -p: stops on the EXIT|GROUP record of the process */
	run_memmon(&res, DEV, NULL, A("trace", "-p", pid, "--json"));
	assert_int_equal(res.code, 0);
	for (line = strtok_r(res.out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(line, 0, NULL);

		if (!j)
			fail_msg("not JSON: %s", line);
		assert_int_equal(json_integer_value(json_object_get(j, "tgid")),
				 strcmp(json_string_value(json_object_get(j, "type")),
					"lost") ? getpid() : 0);
		json_decref(j);
		n++;
	}
	assert_int_equal(n, 5);
	/* -e faults: only the fault (and LOST, always shown) */
	run_memmon(&res, DEV, NULL, A("trace", "-e", "faults", "-p", pid));
	assert_int_equal(res.code, 0);
	assert_null(strstr(res.out, "mmap("));
	assert_null(strstr(res.out, "exit"));
	assert_non_null(strstr(res.out, "fault 0x7f0000000010"));
}

/* -f: a child that never reports its exit is found gone by its PID. */
static void test_trace_follow_reap(void **state)
{
	char pid[16];

	(void)state;
	snprintf(pid, sizeof(pid), "%d", getpid());
	run_memmon(&res, "FAKE_FORK=4194301", NULL, A("trace", "-f", "-p", pid));
	/* MEMMON_DEVICE came from the environment variable set below */
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.out, "fork 4194301/4194301"));
}

static void test_record_and_report(void **state)
{
	char path[] = "/tmp/memmon-fakedev-XXXXXX";
	struct memmon_trace_reader *r;
	json_t *meta;
	int fd = mkstemp(path);

	(void)state;
	close(fd);
	run_memmon(&res, DEV, NULL, A("record", "-o", path, "--", "true"));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.err, "4 events written to"));
	assert_non_null(strstr(res.err, "LOST 3 events:"));
	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	/* a complete file: index, 5 records */
	assert_true(memmon_trace_reader__info(r)->has_index);
	assert_int_equal(memmon_trace_reader__info(r)->nr_records, 5);
	meta = json_loads(memmon_trace_reader__meta(r), 0, NULL);
	assert_non_null(json_object_get(meta, "kernel_release"));
	assert_int_equal(json_array_size(json_object_get(meta, "pids")), 1);
	assert_false(json_is_true(json_object_get(meta, "interrupted")));
	json_decref(meta);
	memmon_trace_reader__close(r);
	run_memmon(&res, NULL, NULL, A("report", path));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.out, "(/bin/true), exited 0"));
	assert_non_null(strstr(res.out, "lost events: 3 cpu1=3"));
	unlink(path);
}

/* Ctrl-C during record: the file is still complete. */
static void test_record_interrupted(void **state)
{
	char path[] = "/tmp/memmon-fakedev-XXXXXX", pid[16];
	const char *argv[] = { "memmon", "record", "-o", path, "-p", pid, NULL };
	struct memmon_trace_reader *r;
	int fd = mkstemp(path), st;
	json_t *meta;
	pid_t child;

	(void)state;
	close(fd);
	snprintf(pid, sizeof(pid), "%d", getpid());
	child = fork();
	if (!child) {
		int null = open("/dev/null", O_WRONLY);

		putenv((char *)DEV);
		putenv((char *)"FAKE_NO_EXIT=1");
		dup2(null, 2);
		_exit(tool_main(6, (char **)argv));
	}
	usleep(500 * 1000);
	kill(child, SIGINT);
	waitpid(child, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	r = memmon_trace_reader__open(path, NULL);
	assert_non_null(r);
	assert_true(memmon_trace_reader__info(r)->has_index);
	assert_false(memmon_trace_reader__info(r)->truncated);
	assert_int_equal(memmon_trace_reader__info(r)->nr_records, 4);
	meta = json_loads(memmon_trace_reader__meta(r), 0, NULL);
	assert_true(json_is_true(json_object_get(meta, "interrupted")));
	json_decref(meta);
	memmon_trace_reader__close(r);
	unlink(path);
}

static void test_mark_info(void **state)
{
	char abi[64];

	(void)state;
	run_memmon(&res, DEV, NULL, A("mark", "phase", "two", "2"));
	assert_int_equal(res.code, 0);
	run_memmon(&res, DEV, NULL, A("mark", "wrong"));
	assert_int_equal(res.code, 1);
	run_memmon(&res, DEV, NULL, A("info"));
	assert_int_equal(res.code, 0);
	snprintf(abi, sizeof(abi), "abi                  %d.%d (", MEMMON_ABI_MAJOR,
		 MEMMON_ABI_MINOR);
	assert_non_null(strstr(res.out, abi));
	/* ABI 1.1: the caller's rights and what its user may still use */
	assert_non_null(strstr(res.out, "rights               pfn hidden (needs CAP_SYS_ADMIN), watches survive privileged exec\n"));
	assert_non_null(strstr(res.out, "user_sessions        3 of 16\n"));
	assert_non_null(strstr(res.out, "user_ring_bytes      405504 (396 KiB)\n"));
	assert_non_null(strstr(res.out, "user_ring_avail      7983104 (7796 KiB)\n"));
	assert_non_null(strstr(res.out, "features             mmap mark"));
	assert_non_null(strstr(res.out, "cpus                 2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_command),
		cmocka_unit_test(test_trace_pid_json_events),
		cmocka_unit_test(test_trace_follow_reap),
		cmocka_unit_test(test_record_and_report),
		cmocka_unit_test(test_record_interrupted),
		cmocka_unit_test(test_mark_info),
	};

	/* children inherit it; cases that need it set pass it too */
	putenv((char *)DEV);
	return cmocka_run_group_tests_name("cli_fakedev", tests, NULL, NULL);
}
