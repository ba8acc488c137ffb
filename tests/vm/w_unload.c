// SPDX-License-Identifier: GPL-2.0
/*
 * The unload hazard: tasks sleeping inside hooked functions while the hooks
 * go away and memmon.ko is removed. Run by t_instr_unload.sh, which gives
 * DIR on a device that holds every I/O (dm-delay), removes the module
 * between our "ready" and its "go", and releases the I/O once we have said
 * "checked" after "go".
 *
 *   w_unload DIR READY_FIFO GO_FIFO
 *
 * Three watched children, each blocked in a hooked function:
 *   A  one thread reads /proc/self/mem at a cold page of a file on DIR:
 *      GUP without FAULT_FLAG_ALLOW_RETRY, so the fault sleeps on the I/O
 *      *holding mmap_lock*; meanwhile three threads call munmap(), mmap()
 *      and mlock(), which sleep inside their syscalls on that mmap_lock.
 *   B  fsync() of dirty data on DIR.
 *   C  a user-mode read fault on a cold page of a file on DIR.
 * Once all are seen asleep where expected, the session is closed (hooks
 * detached), we say "ready" and wait; after "go" (memmon.ko is gone by
 * then) every task must still be asleep there, then finish normally.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "vmtest.h"
#include "instr.h"

#define P 4096UL

static const char *dir;
static char *cold_a;		/* A's mapping of DIR/cold-a */
static int memfd;
/* A's threads exist before anything holds mmap_lock (their stacks are
 * mmap()ed by pthread_create()); these let them go, GUP first.
 */
static volatile int a_go[2];

static void a_wait(int which)
{
	while (!a_go[which])
		usleep(1000);
}

static int open_in_dir(const char *name, int flags)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, flags, 0600);
}

/* ---------------------------------------------------------------- A */

static void *a_gup(void *arg)
{
	char buf[64];

	(void)arg;
	a_wait(0);
	/* access_remote_vm(): GUP with mmap_lock held across the I/O. */
	if (pread(memfd, buf, sizeof(buf), (off_t)(uintptr_t)cold_a) != sizeof(buf))
		return (void *)1;
	return buf[0] == 'a' ? NULL : (void *)2;
}

static void *a_munmap(void *arg)
{
	a_wait(1);
	return syscall(SYS_munmap, arg, P) ? (void *)1 : NULL;
}

static void *a_mmap(void *arg)
{
	long r;

	(void)arg;
	a_wait(1);
	r = syscall(SYS_mmap, 0, P, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	return r == -1 ? (void *)1 : NULL;
}

static void *a_mlock(void *arg)
{
	a_wait(1);
	return syscall(SYS_mlock, arg, P) ? (void *)1 : NULL;
}

static int child_a(void)
{
	void *(*fn[])(void *) = { a_gup, a_munmap, a_mmap, a_mlock };
	pthread_t t[4];
	char *spare;
	void *ret;
	int fd, i, bad = 0;

	fd = open_in_dir("cold-a", O_RDONLY);
	memfd = open("/proc/self/mem", O_RDONLY);
	spare = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || memfd < 0 || spare == MAP_FAILED)
		return 10;
	cold_a = mmap(NULL, 16 * P, PROT_READ, MAP_SHARED, fd, 0);
	if (cold_a == MAP_FAILED)
		return 11;
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, fn[i], i == 1 ? spare : spare + P))
			return 12;
	a_go[0] = 1;
	/* Let the GUP take mmap_lock and start its I/O first. */
	usleep(300 * 1000);
	a_go[1] = 1;
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		bad |= !!ret << i;
	}
	return bad ? 20 + bad : 0;
}

/* ---------------------------------------------------------------- B, C */

static int child_b(void)
{
	char buf[4096];
	int fd = open_in_dir("dirty-b", O_WRONLY);
	int i;

	if (fd < 0)
		return 10;
	memset(buf, 'b', sizeof(buf));
	for (i = 0; i < 64; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return 11;
	return syscall(SYS_fsync, fd) ? 12 : 0;
}

static int child_c(void)
{
	int fd = open_in_dir("cold-c", O_RDONLY);
	volatile char *p;

	if (fd < 0)
		return 10;
	p = mmap(NULL, 16 * P, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 11;
	return p[0] == 'c' ? 0 : 12;
}

/* ---------------------------------------------------------------- parent */

struct expect {
	int child;		/* 0 A, 1 B, 2 C */
	long nr;
	const char *what;
};

/*
 * Is some thread of @pid asleep in syscall @nr (-1: in a page fault, i.e.
 * not in a syscall, in state D)?
 */
static bool asleep_in(pid_t pid, long nr)
{
	char path[384], buf[256], state;
	struct dirent *de;
	bool found = false;
	ssize_t n;
	long sys;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", pid,
			 de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		if (!strncmp(buf, "running", 7))
			continue;
		sys = strtol(buf, NULL, 10);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid,
			 de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		state = strrchr(buf, ')') ? strrchr(buf, ')')[2] : '?';
		found = sys == nr && (state == 'D' || state == 'S');
	}
	closedir(d);
	return found;
}

/* What each thread of @pid is doing, for a failed check: its syscall line
 * and its kernel stack (where it sleeps, if not where we expected).
 */
static void show_threads(pid_t pid)
{
	char path[384], buf[2048], *line, *save;
	struct dirent *de;
	const char *file;
	ssize_t n;
	DIR *d;
	int fd, k;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d) {
		printf("# %d: gone\n", pid);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		for (k = 0; k < 2; k++) {
			file = k ? "stack" : "syscall";
			snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", pid,
				 de->d_name, file);
			fd = open(path, O_RDONLY);
			n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			if (fd >= 0)
				close(fd);
			buf[n > 0 ? n : 0] = 0;
			for (line = strtok_r(buf, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				printf("#   %d/%s %s: %s\n", pid, de->d_name,
				       file, line);
		}
	}
	closedir(d);
}

static void check_asleep(pid_t pid, const struct expect *e, const char *when)
{
	bool ok = asleep_in(pid, e->nr);

	VT_OK(ok, "%s%s", when, e->what);
	if (!ok)
		show_threads(pid);
}

static const struct expect expects[] = {
	{ 0, SYS_munmap, "A: a thread asleep in munmap() on mmap_lock" },
	{ 0, SYS_mmap, "A: a thread asleep in mmap() on mmap_lock" },
	{ 0, SYS_mlock, "A: a thread asleep in mlock() on mmap_lock" },
	{ 0, SYS_pread64, "A: a thread asleep in a GUP fault (pread of /proc/self/mem)" },
	{ 1, SYS_fsync, "B: asleep in fsync() on the slow device" },
	{ 2, -1, "C: asleep in a page fault on the slow device" },
};

int main(int argc, char **argv)
{
	int (*children[])(void) = { child_a, child_b, child_c };
	pid_t pid[3];
	int go[2], i, k, status = 0;
	bool all;
	struct in_sess s;
	char c;
	FILE *f;

	if (argc != 4)
		return 2;
	dir = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);

	VT_SUCCESS(in_open(&s, 1 << 20), "open a session");
	if (pipe(go))
		return 1;
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		if (!pid[i]) {
			in_close(&s);
			close(go[1]);
			/* EOF is the start signal, for all at once. */
			if (read(go[0], &c, 1) != 0)
				_exit(99);
			_exit(children[i]());
		}
		VT_SUCCESS(in_watch(&s, pid[i], 0), "watch child %c", 'A' + i);
	}
	VT_SUCCESS(in_enable(&s), "enable: hooks attached");
	close(go[0]);
	close(go[1]);	/* EOF: every child goes */

	/* Everyone asleep where intended, within 20 s. */
	for (k = 0; k < 2000; k++) {
		all = true;
		for (i = 0; i < (int)(sizeof(expects) / sizeof(expects[0])); i++)
			all &= asleep_in(pid[expects[i].child], expects[i].nr);
		if (all)
			break;
		usleep(10 * 1000);
	}
	for (i = 0; i < (int)(sizeof(expects) / sizeof(expects[0])); i++)
		check_asleep(pid[expects[i].child], &expects[i], "");

	/* Close the session: the last one, so the hooks are detached. */
	in_read(&s);
	in_close(&s);
	f = fopen(argv[2], "w");
	if (!f || fputs("ready\n", f) == EOF || fclose(f))
		return 1;
	/* The script removes memmon.ko now, then says go. */
	f = fopen(argv[3], "r");
	if (!f || fgetc(f) == EOF)
		return 1;
	fclose(f);

	for (i = 0; i < (int)(sizeof(expects) / sizeof(expects[0])); i++)
		check_asleep(pid[expects[i].child], &expects[i],
			     "still so after rmmod: ");
	/* The script releases the held I/O now. */
	f = fopen(argv[2], "w");
	if (!f || fputs("checked\n", f) == EOF || fclose(f))
		return 1;
	for (i = 0; i < 3; i++) {
		VT_OK(waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0,
		      "child %c finished its calls normally (status %#x)", 'A' + i,
		      status);
	}
	return vt_exit();
}
