// SPDX-License-Identifier: GPL-2.0
/*
 * vmtest: no-module
 *
 * Module parameters: load-time validation (each bad value refused with
 * EINVAL) and their effect: ring_size, ring_size_max, max_watch (ENOSPC
 * past it), require_cap=0.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "mmtest.h"

static const char *ko;

/* finit_module(2) with @params; 0 or -1 with errno. */
static int load(const char *params)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		MM_DIE("open %s", ko);
	r = (int)syscall(SYS_finit_module, fd, params, 0);
	close(fd);
	return r;
}

static int unload(void)
{
	return (int)syscall(SYS_delete_module, "memmon", O_NONBLOCK);
}

static void test_bad_params(void)
{
	/* ring_size not a power of two: EINVAL. */
	VT_ERRNO(load("ring_size=12288"), EINVAL, "ring_size=12288: EINVAL");
	/* ring_size below the 8 KiB floor: EINVAL. */
	VT_ERRNO(load("ring_size=4096"), EINVAL, "ring_size=4096: EINVAL");
	/* ring_size above ring_size_max: EINVAL. */
	VT_ERRNO(load("ring_size=1048576 ring_size_max=65536"), EINVAL,
		 "ring_size > ring_size_max: EINVAL");
	/* ring_size_max above the 1 GiB ceiling: EINVAL. */
	VT_ERRNO(load("ring_size_max=2147483648"), EINVAL, "ring_size_max=2 GiB: EINVAL");
	/* ring_size_max not a power of two: EINVAL. */
	VT_ERRNO(load("ring_size_max=3000000"), EINVAL, "ring_size_max=3000000: EINVAL");
	/* max_watch 0: EINVAL. */
	VT_ERRNO(load("max_watch=0"), EINVAL, "max_watch=0: EINVAL");
	/* max_watch above its ceiling: EINVAL. */
	VT_ERRNO(load("max_watch=2000000"), EINVAL, "max_watch=2000000: EINVAL");
	/* Nothing stayed loaded. */
	VT_OK(access(MEMMON_DEVICE_PATH, F_OK) == -1, "no module loaded after the refusals");
}

static void test_good_params(void)
{
	struct memmon_info info;
	pid_t kids[2];
	int fd, st;

	/* Small rings, a small ceiling, two watches per session. */
	VT_SUCCESS(load("ring_size=16384 ring_size_max=65536 max_watch=2"), "load with parameters");
	fd = mm_open();
	mm_info(fd, &info);
	/* GET_INFO reports them. */
	VT_OK(info.ring_size_default == 16384 && info.ring_size == 16384 &&
	      info.ring_size_max == 65536 && info.max_watch == 2, "GET_INFO shows the parameters");
	/* The ceiling applies to CONFIGURE: EINVAL above it. */
	VT_ERRNO(mm_configure(fd, 131072, 0), EINVAL, "CONFIGURE above ring_size_max: EINVAL");
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			pause();
			_exit(0);
		}
	}
	/* Two watches fit. */
	VT_OK(!mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0, 0) &&
	      !mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)kids[0], 0), "two WATCH_ADDs");
	/* The third: ENOSPC. */
	VT_ERRNO(mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)kids[1], 0), ENOSPC,
		 "third WATCH_ADD with max_watch=2: ENOSPC");
	kill(kids[0], SIGKILL);
	waitpid(kids[0], &st, 0);
	/* A watched process that died frees its slot (even with no hook attached). */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, (uint32_t)kids[1], 0),
		   "WATCH_ADD after a watched process died");
	kill(kids[1], SIGKILL);
	waitpid(kids[1], &st, 0);
	close(fd);

	/* FOLLOW_CHILDREN stops at max_watch too. */
	fd = mm_open();
	mm_watch(fd, MEMMON_IOC_WATCH_ADD, 0, MEMMON_WATCH_FOLLOW_CHILDREN);
	ioctl(fd, MEMMON_IOC_ENABLE);
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			pause();
			_exit(0);
		}
	}
	{
		struct memmon_watch_list l = { .size = sizeof(l) };

		ioctl(fd, MEMMON_IOC_WATCH_LIST, &l);
		/* Us and the first child: the second child is not followed. */
		VT_OK(l.count == 2, "FOLLOW_CHILDREN at max_watch=2: %u entries", l.count);
	}
	for (int i = 0; i < 2; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], &st, 0);
	}
	close(fd);
	/* Unload. */
	VT_SUCCESS(unload(), "unload");
}

static int open_as_nobody(void)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(254);
		_exit(open(MEMMON_DEVICE_PATH, O_RDWR) < 0 ? errno : 0);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static void test_require_cap(void)
{
	/* require_cap=0: the node's mode alone decides. */
	VT_SUCCESS(load("require_cap=0"), "load with require_cap=0");
	chmod(MEMMON_DEVICE_PATH, 0666);
	/* nobody may open a world-writable node. */
	VT_OK(open_as_nobody() == 0, "require_cap=0, mode 0666: nobody opens");
	chmod(MEMMON_DEVICE_PATH, 0600);
	/* With mode 0600 again, the VFS refuses: EACCES. */
	VT_OK(open_as_nobody() == EACCES, "require_cap=0, mode 0600: EACCES");
	/* Unload. */
	VT_SUCCESS(unload(), "unload");
}

int main(void)
{
	ko = getenv("MEMMON_KO");
	if (!ko)
		ko = "memmon.ko";
	test_bad_params();
	test_good_params();
	test_require_cap();
	return vt_exit();
}
