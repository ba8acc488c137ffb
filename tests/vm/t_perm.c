// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what, and the module's lifetime: open needs CAP_PERFMON or
 * CAP_SYS_ADMIN; WATCH_ADD needs ptrace read access to the target; a mapping
 * outlives its fd (readable, MARK impossible); rmmod is refused while a
 * session or only a mapping exists, and succeeds after munmap.
 */
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "mmtest.h"

/* Drop every capability of this process, keeping its uids. */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	return (int)syscall(SYS_capset, &h, d);
}

/* Become nobody: setresuid() away from 0 clears every capability. */
static int become_nobody(void)
{
	return setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534);
}

/* Run @fn in a child; its exit status is the errno it saw, 0 on success. */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int st;

	if (!pid)
		_exit(fn(arg));
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static int open_without_caps(void *arg)
{
	(void)arg;
	if (drop_caps())
		return 254;
	return open(MEMMON_DEVICE_PATH, O_RDWR) < 0 ? errno : 0;
}

static int open_as_nobody(void *arg)
{
	(void)arg;
	if (become_nobody())
		return 254;
	return open(MEMMON_DEVICE_PATH, O_RDWR) < 0 ? errno : 0;
}

struct watch_req {
	int fd;
	pid_t pid;
};

/* With a session opened by root, become nobody, then WATCH_ADD. */
static int watch_as_nobody(void *arg)
{
	struct watch_req *w = arg;

	if (become_nobody())
		return 254;
	return mm_watch(w->fd, MEMMON_IOC_WATCH_ADD, (uint32_t)w->pid, 0) ? errno : 0;
}

static void test_open(void)
{
	/* Root without capabilities (still the owner of the node): EPERM. */
	VT_OK(in_child(open_without_caps, NULL) == EPERM, "open without CAP_PERFMON/CAP_SYS_ADMIN: EPERM");
	/* nobody is stopped by the node's mode 0600: EACCES. */
	VT_OK(in_child(open_as_nobody, NULL) == EACCES, "open as nobody, mode 0600: EACCES");
	chmod(MEMMON_DEVICE_PATH, 0666);
	/* With the node open to all, the capability check still refuses: EPERM. */
	VT_OK(in_child(open_as_nobody, NULL) == EPERM, "open as nobody, mode 0666: EPERM");
	chmod(MEMMON_DEVICE_PATH, 0600);
}

static void test_ptrace_rule(void)
{
	struct watch_req w = { .fd = mm_open() };
	pid_t peer;
	int st, ready[2];
	char c;

	w.pid = 1;
	/* nobody may not watch init (root): EACCES. */
	VT_OK(in_child(watch_as_nobody, &w) == EACCES, "WATCH_ADD of init as nobody: EACCES");
	w.pid = getpid();
	/* Nor its root parent: EACCES. */
	VT_OK(in_child(watch_as_nobody, &w) == EACCES, "WATCH_ADD of a root process as nobody: EACCES");
	w.pid = 0;
	/* It may watch itself. */
	VT_OK(in_child(watch_as_nobody, &w) == 0, "WATCH_ADD of itself as nobody");
	if (pipe(ready))
		exit(1);
	peer = fork();
	if (!peer) {
		/* A uid change made it non-dumpable: undo that, like a normal nobody process. */
		if (become_nobody() || prctl(PR_SET_DUMPABLE, 1))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	/* Wait until it is a nobody process (EOF: it failed and exited). */
	close(ready[1]);
	VT_OK(read(ready[0], &c, 1) == 1, "a nobody peer process is ready");
	close(ready[0]);
	w.pid = peer;
	/* And another nobody process (same uid, dumpable). */
	VT_OK(in_child(watch_as_nobody, &w) == 0, "WATCH_ADD of another nobody process as nobody");
	kill(peer, SIGKILL);
	waitpid(peer, &st, 0);
	w.pid = 1;
	/* Root may watch init. */
	VT_SUCCESS(mm_watch(w.fd, MEMMON_IOC_WATCH_ADD, 1, 0), "WATCH_ADD of init as root");
	close(w.fd);
}

static long rmmod(void)
{
	return syscall(SYS_delete_module, "memmon", O_NONBLOCK);
}

static void test_lifetime(void)
{
	struct mm_map m;
	int fd = mm_open();

	mm_pin(0);
	/* While a session is open: EWOULDBLOCK (module in use). */
	VT_ERRNO(rmmod(), EWOULDBLOCK, "rmmod with an open session: EWOULDBLOCK");
	mm_map(fd, &m);
	mm_mark(fd, 0, "alive", 5);
	ioctl(fd, MEMMON_IOC_ENABLE);
	close(fd);
	/* The fd is gone: MARK through it is impossible (EBADF). */
	VT_ERRNO(mm_mark(fd, 0, "x", 1), EBADF, "MARK after close: EBADF");
	/* The mapping still shows the marker. */
	VT_OK(mm_ring_page(&m, 0)->producer_pos == 40 &&
	      ((struct memmon_rec_header *)mm_ring_data(&m, 0))->type == MEMMON_REC_MARK,
	      "mapping readable after close");
	/* Only a mapping is left, and it pins the module: EWOULDBLOCK. */
	VT_ERRNO(rmmod(), EWOULDBLOCK, "rmmod with only a mapping left: EWOULDBLOCK");
	munmap(m.prod, m.info.producer_size);
	/* The consumer mapping alone pins it too. */
	VT_ERRNO(rmmod(), EWOULDBLOCK, "rmmod with only the consumer mapping: EWOULDBLOCK");
	munmap(m.cons, m.info.consumer_size);
	/* After the last munmap, rmmod succeeds. */
	VT_SUCCESS(rmmod(), "rmmod after munmap");
	/* And the device is gone. */
	VT_OK(access(MEMMON_DEVICE_PATH, F_OK) == -1, "/dev/memmon removed");
}

int main(void)
{
	test_open();
	test_ptrace_rule();
	test_lifetime();
	return vt_exit();
}
