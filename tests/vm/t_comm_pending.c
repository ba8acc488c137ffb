// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's last COMM record carries its current name even when it was
 * renamed while the session was not enabled (renames are recorded only for
 * enabled sessions):
 *
 *  - rings mapped, WATCH_ADD, a rename, then ENABLE: the names are written
 *    at the ENABLE, the new one last;
 *  - enabled, DISABLE, a rename, ENABLE: written again at the ENABLE;
 *  - enabled throughout: the rename is its own record, once.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include "mmtest.h"

struct names {
	char last[MEMMON_COMM_LEN];
	unsigned int n;
	unsigned int rename;
};

static pid_t child_pid;

static void collect(const struct memmon_rec_header *h, unsigned int cpu, void *arg)
{
	const struct memmon_rec_comm *c = (const void *)h;
	struct names *n = arg;

	(void)cpu;
	if (h->type != MEMMON_REC_COMM || h->tgid != (uint32_t)child_pid)
		return;
	n->n++;
	n->rename += c->why == MEMMON_COMM_RENAME;
	memcpy(n->last, c->comm, sizeof(n->last));
	n->last[sizeof(n->last) - 1] = 0;
}

static struct mm_map m;

/* Everything the session holds, in order (all on CPU 0: see main()). */
static void drain(int fd, struct names *n)
{
	(void)fd;
	memset(n, 0, sizeof(*n));
	if (mm_drain_cpu(&m, 0, collect, n) < 0)
		MM_DIE("malformed records");
}

/* Ask the child to rename itself, and wait until it has. */
static void rename_child(int to, int from, const char *name)
{
	char ok;

	if (write(to, name, strlen(name) + 1) < 0 || read(from, &ok, 1) != 1)
		MM_DIE("rename the child");
}

int main(void)
{
	struct memmon_events ev = {
		.size = sizeof(ev), .mask = 1ULL << MEMMON_EV_LIFECYCLE,
	};
	int to[2], from[2], fd;
	struct names n;

	/* Both on CPU 0: its ring holds every record, in the order written. */
	mm_pin(0);
	if (pipe(to) || pipe(from))
		MM_DIE("pipe");
	child_pid = fork();
	if (!child_pid) {
		char name[64];

		close(to[1]);	/* else the read below never sees the end */
		close(from[0]);
		mm_pin(0);
		while (read(to[0], name, sizeof(name)) > 0) {
			prctl(PR_SET_NAME, name);
			if (write(from[1], "k", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	fd = mm_open();
	if (fd < 0 || ioctl(fd, MEMMON_IOC_SET_EVENTS, &ev))
		MM_DIE("session");
	rename_child(to[1], from[0], "before");
	mm_map(fd, &m);		/* the rings exist: WATCH_ADD could write now */
	VT_SUCCESS(mm_watch(fd, MEMMON_IOC_WATCH_ADD, child_pid, 0), "WATCH_ADD");
	rename_child(to[1], from[0], "while-off");
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE");
	drain(fd, &n);
	VT_OK(!strcmp(n.last, "while-off"),
	      "WATCH_ADD, rename, ENABLE: the last name is the new one (%s, %u records)",
	      n.last, n.n);

	rename_child(to[1], from[0], "enabled");
	drain(fd, &n);
	VT_OK(n.n == 1 && n.rename == 1 && !strcmp(n.last, "enabled"),
	      "enabled: a rename is one record (%u, %s)", n.n, n.last);

	VT_SUCCESS(ioctl(fd, MEMMON_IOC_DISABLE), "DISABLE");
	drain(fd, &n);
	rename_child(to[1], from[0], "after-off");
	VT_SUCCESS(ioctl(fd, MEMMON_IOC_ENABLE), "ENABLE again");
	drain(fd, &n);
	VT_OK(n.n >= 1 && !strcmp(n.last, "after-off"),
	      "DISABLE, rename, ENABLE: the last name is the new one (%s, %u records)",
	      n.last, n.n);

	close(to[1]);
	waitpid(child_pid, NULL, 0);
	mm_unmap(&m);
	close(fd);
	printf("# %d passed, %d failed\n", vt_count - vt_failed, vt_failed);
	return vt_failed ? 1 : 0;
}
