// SPDX-License-Identifier: GPL-2.0
/*
 * What trace and record watch: PIDs, or a command started under the
 * session so that none of its events is missed:
 *
 *   parent                          child
 *   pipe(); fork() ---------------> read(go) blocks
 *   WATCH_ADD(child); ENABLE
 *   close(go) --------------------> read returns: execvp(CMD)
 *
 * The child's exec and everything after it happen under the watch.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "builtin.h"

int target_add_pids(const char *cmd, struct target *t, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL, *end;
	pid_t *np;
	long v;

	if (!dup)
		return tool_err(cmd, "out of memory");
	/* Commas or blanks: what users paste, e.g. `pidof` output "12 34". */
	for (tok = strtok_r(dup, ", \t\n", &save); tok;
	     tok = strtok_r(NULL, ", \t\n", &save)) {
		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || end == tok || v <= 0 || v > 0x3fffffff) {
			int ret = tool_usage_err(cmd, "bad PID '%s'", tok);

			free(dup);
			return ret;
		}
		if (kill((pid_t)v, 0) < 0 && errno == ESRCH) {
			free(dup);
			return tool_err(cmd, "PID %ld not found: no such process", v);
		}
		np = realloc(t->pids, sizeof(*np) * (size_t)(t->nr_pids + 1));
		if (!np) {
			free(dup);
			return tool_err(cmd, "out of memory");
		}
		t->pids = np;
		t->pids[t->nr_pids++] = (pid_t)v;
	}
	free(dup);
	return 0;
}

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_DEPTH	32	/* nested cgroups walked at most */

int target_add_cgroup(const char *cmd, struct target *t, const char *arg)
{
	char path[PATH_MAX], procs[PATH_MAX + 16];
	int n;

	if (t->cgroup)
		return tool_usage_err(cmd, "one -G/--cgroup at a time");
	if (arg[0] == '/')
		n = snprintf(path, sizeof(path), "%s", arg);
	else
		n = snprintf(path, sizeof(path), CGROUP_ROOT "/%s", arg);
	if (n < 0 || (size_t)n >= sizeof(path))
		return tool_usage_err(cmd, "cgroup path too long");
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	if (access(procs, R_OK) < 0)
		return tool_err(cmd, "cgroup '%s': %s (a cgroup v2 directory, "
				"absolute or under " CGROUP_ROOT ")", arg,
				strerror(errno));
	t->cgroup = strdup(path);
	if (!t->cgroup)
		return tool_err(cmd, "out of memory");
	return 0;
}

/* Watch each PID listed in @dir/cgroup.procs; returns 0 or an exit code. */
static int watch_procs(const char *cmd, const char *dir,
		       struct memmon_session *s, struct proctab *pt)
{
	char path[PATH_MAX + 16];
	FILE *f;
	long pid;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;	/* removed meanwhile */
	while (fscanf(f, "%ld", &pid) == 1) {
		if (pid <= 0 || pid > INT_MAX)
			continue;
		if (memmon_session__watch_add(s, (pid_t)pid,
					      MEMMON_WATCH_FOLLOW_CHILDREN) == 0) {
			proctab_add(pt, (pid_t)pid);
			continue;
		}
		/* Watched already, or gone since it was listed: fine. */
		if (errno == EEXIST || errno == ESRCH)
			continue;
		if (errno == EACCES) {
			ret = tool_err(cmd, "not allowed to watch PID %ld of "
				       "the cgroup: it needs ptrace access to it",
				       pid);
			break;
		}
		ret = tool_explain_errno(cmd, errno, "watch a cgroup's process");
		break;
	}
	fclose(f);
	return ret;
}

static int rescan_dir(const char *cmd, const char *dir, int depth,
		      struct memmon_session *s, struct proctab *pt)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = watch_procs(cmd, dir, s, pt);

	if (ret || depth >= CGROUP_DEPTH)
		return ret;
	d = opendir(dir);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(sub))
			continue;
		ret = rescan_dir(cmd, sub, depth + 1, s, pt);
	}
	closedir(d);
	return ret;
}

int target_rescan(const char *cmd, struct target *t, struct memmon_session *s,
		  struct proctab *pt)
{
	if (!t->cgroup)
		return 0;
	return rescan_dir(cmd, t->cgroup, 0, s, pt);
}

int target_spawn(const char *cmd, struct target *t)
{
	int pfd[2];
	char c;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return tool_err(cmd, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return tool_err(cmd, "fork: %s", strerror(errno));
	}
	if (!pid) {
		close(pfd[1]);
		/* Wait for the parent: EOF means go, unless it died. */
		while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
			;
		if (getppid() == 1)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(t->cmd_argv[0], t->cmd_argv);
		fprintf(stderr, "memmon %s: cannot run '%s': %s\n", cmd,
			t->cmd_argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(pfd[0]);
	t->child = pid;
	t->go_fd = pfd[1];
	return 0;
}

void target_abort(struct target *t)
{
	if (t->child > 0 && t->go_fd >= 0) {
		kill(t->child, SIGKILL);
		close(t->go_fd);
		t->go_fd = -1;
		waitpid(t->child, NULL, 0);
		t->child = 0;
	}
}

int target_start(const char *cmd, struct target *t, struct memmon_session *s)
{
	__u32 wflags = t->follow ? MEMMON_WATCH_FOLLOW_CHILDREN : 0;
	char what[64];
	int i;

	/*
	 * Lifecycle records are always on in the kernel: they tell us when
	 * the watched processes are gone. Output shows what was asked.
	 */
	if (memmon_session__set_events(s, t->ev_mask | 1ULL << MEMMON_EV_LIFECYCLE,
				       t->ev_syscalls) < 0)
		return tool_explain_errno(cmd, errno, "set events");
	/*
	 * Enable before watching: attaching the hooks can take a while, and a
	 * running process (-p) must not exit unseen between its WATCH_ADD
	 * and the ENABLE. Nothing is recorded before the first WATCH_ADD.
	 */
	if (memmon_session__map(s) < 0)
		return tool_explain_errno(cmd, errno, "map the rings");
	if (memmon_session__enable(s) < 0)
		return tool_explain_errno(cmd, errno, "enable");
	if (t->child > 0 &&
	    memmon_session__watch_add(s, t->child, wflags) < 0) {
		snprintf(what, sizeof(what), "watch command (PID %d)", t->child);
		return tool_explain_errno(cmd, errno, what);
	}
	for (i = 0; i < t->nr_pids; i++) {
		if (memmon_session__watch_add(s, t->pids[i], wflags) == 0)
			continue;
		switch (errno) {
		case EEXIST:	/* given twice */
			continue;
		case ESRCH:
			return tool_err(cmd, "PID %d not found: no such process "
					"(or a thread ID: give the process ID)",
					t->pids[i]);
		case EACCES:
			return tool_err(cmd, "not allowed to watch PID %d: it "
					"needs ptrace access to it (same user, or "
					"CAP_SYS_PTRACE)", t->pids[i]);
		case ENOSPC:
			return tool_err(cmd, "too many watched processes (see "
					"max_watch in 'memmon info')");
		default:
			snprintf(what, sizeof(what), "watch PID %d", t->pids[i]);
			return tool_explain_errno(cmd, errno, what);
		}
	}
	return 0;
}

void target_go(struct target *t)
{
	if (t->go_fd >= 0) {
		close(t->go_fd);	/* the child execs now */
		t->go_fd = -1;
	}
}

void target_free(struct target *t)
{
	target_abort(t);
	free(t->pids);
	t->pids = NULL;
	free(t->cgroup);
	t->cgroup = NULL;
}
