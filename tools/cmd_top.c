// SPDX-License-Identifier: GPL-2.0
/*
 * memmon top: a live full-screen view (ncurses) of the watched processes'
 * fault and memory-syscall rates, RSS and its trend; --batch prints the
 * same as text. The counting lives in top_model.c; this file owns the
 * session, the /proc sampling of -a, the loop and the screen.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curses.h>
#include <sys/wait.h>
#include "builtin.h"
#include "top_model.h"

#define TOP_ALL_DEFAULT		20	/* -a: processes watched at once */
#define TOP_REPICK_NS		(5ULL * 1000000000ULL)
#define TOP_POLL_MS		100	/* bounds the key latency */

static const char top_usage[] =
"usage: memmon top [-p PID[,PID...]] [-f] [-a [-N COUNT]] [-d SECONDS]\n"
"                  [-b [-n ITERATIONS]] [-m RING_SIZE] [-- CMD [ARGS...]]\n"
"\n"
"  -p, --pid PIDS      watch these processes (comma-separated)\n"
"  -f, --follow        follow children (fork/clone), recursively\n"
"  -a, --all           every process on the system: the module watches a\n"
"                      set of processes, not the whole system, so top\n"
"                      samples the fault counters of /proc/PID/stat and\n"
"                      watches the busiest COUNT, picked again every 5 s\n"
"  -N, --max COUNT     with -a: how many to watch (default 20)\n"
"  -d, --delay SECS    refresh interval (default 1; e.g. 0.5)\n"
"  -b, --batch         text, one block per interval, no terminal needed\n"
"  -n, --iterations N  with --batch: stop after N blocks (default: run\n"
"                      until the watched processes are gone)\n"
"  -m, --ring-size N   per-CPU ring bytes, a power of two (e.g. 4M)\n"
"  -- CMD              run CMD under the watch from its first instruction\n"
"\n"
"Columns: faults/s (all, then by class anon/file/shmem/swap), major\n"
"faults/s, memory syscalls/s (all, then mmap, munmap, brk, mprotect,\n"
"madvise, other), RSS (from /proc/PID/statm, else the RSS records) and its\n"
"change per second (^ growing, v shrinking, = flat). The header counts\n"
"events/s and the events lost by full rings.\n"
"\n"
"Keys: f faults, m major, s syscalls, r RSS: sort by that column;\n"
"< and > move the sort column; space or p pause (the screen freezes, the\n"
"rings are still drained, nothing is lost); q quits.\n";

struct top_ctx {
	struct top_model m;
	struct proctab *pt;
	struct memmon_session *s;
	bool follow;
	/* -a */
	bool all;
	int max_all;
	pid_t *samp_pid;		/* sorted by pid */
	unsigned long long *samp_flt;	/* minflt + majflt at the last pick */
	size_t samp_nr;
	pid_t self;
};

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int top_cb(void *vctx, const struct memmon_rec_header *rec)
{
	struct top_ctx *c = vctx;

	proctab_on_record(c->pt, rec);
	top_model_add_rec(&c->m, rec);
	if (rec->type == MEMMON_REC_EXEC) {
		struct top_proc *p = top_model_get(&c->m, (pid_t)rec->tgid);

		if (p)
			p->comm[0] = 0;	/* read again from /proc */
	} else if (rec->type == MEMMON_REC_FORK && c->follow) {
		const struct memmon_rec_fork *fk = memmon_rec__fork(rec);

		if (fk && fk->child_tgid && !(fk->flags & MEMMON_FORKF_THREAD))
			top_model_get(&c->m, (pid_t)fk->child_tgid);
	}
	return 0;
}

static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return ok;
}

/* comm and RSS from /proc; a process gone keeps what it had. */
static void refresh_proc(struct top_proc *p)
{
	static long page_size;
	char path[64], buf[128];
	unsigned long long size, res;

	if (!page_size)
		page_size = sysconf(_SC_PAGESIZE);
	if (!p->comm[0]) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
		if (read_line(path, buf, sizeof(buf))) {
			/* The kernel's comm is at most 15 bytes. */
			buf[strcspn(buf, "\n")] = 0;
			buf[sizeof(p->comm) - 1] = 0;
			memcpy(p->comm, buf, sizeof(p->comm));
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/statm", (int)p->pid);
	if (read_line(path, buf, sizeof(buf)) &&
	    sscanf(buf, "%llu %llu", &size, &res) == 2) {
		p->rss = res * (unsigned long long)page_size;
		p->rss_known = true;
	}
}

/* minflt + majflt of /proc/PID/stat; the comm may hold spaces and ')'. */
static bool read_faults(pid_t pid, unsigned long long *flt)
{
	char path[64], buf[1024], *s;
	unsigned long long minflt, majflt;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!read_line(path, buf, sizeof(buf)))
		return false;
	s = strrchr(buf, ')');
	/* After ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt */
	if (!s || sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu",
			 &minflt, &majflt) != 2)
		return false;
	*flt = minflt + majflt;
	return true;
}

struct busy {
	pid_t pid;
	unsigned long long delta;
};

static int cmp_busy(const void *va, const void *vb)
{
	const struct busy *a = va, *b = vb;

	if (a->delta != b->delta)
		return a->delta < b->delta ? 1 : -1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int cmp_pid(const void *va, const void *vb)
{
	pid_t a = *(const pid_t *)va, b = *(const pid_t *)vb;

	return (a > b) - (a < b);
}

/*
 * -a: the faults of every process since the last pick, from /proc; watch
 * the busiest max_all (those we may watch), stop watching the others.
 * Processes are read in /proc's order, ascending PIDs, so the previous
 * sample is found by bsearch.
 */
static int repick(struct top_ctx *c)
{
	size_t cap = 256, nr = 0, i, nb = 0;
	pid_t *pids = malloc(cap * sizeof(*pids));
	unsigned long long *flt = malloc(cap * sizeof(*flt));
	struct busy *busy = NULL;
	struct dirent *de;
	DIR *d = opendir("/proc");
	int ret = -ENOMEM;

	if (!d) {
		ret = -errno;
		goto out;
	}
	if (!pids || !flt)
		goto out;
	while ((de = readdir(d))) {
		unsigned long long v;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == c->self || !read_faults(pid, &v))
			continue;
		if (nr == cap) {
			pid_t *np = realloc(pids, cap * 2 * sizeof(*np));
			unsigned long long *nf;

			if (!np)
				goto out;
			pids = np;
			nf = realloc(flt, cap * 2 * sizeof(*nf));
			if (!nf)
				goto out;
			flt = nf;
			cap *= 2;
		}
		pids[nr] = (pid_t)pid;
		flt[nr++] = v;
	}
	/* Sort both arrays by pid (readdir's order is not promised). */
	busy = malloc((nr ? nr : 1) * sizeof(*busy));
	if (!busy)
		goto out;
	for (i = 0; i < nr; i++) {
		busy[i].pid = pids[i];
		busy[i].delta = flt[i];
	}
	qsort(busy, nr, sizeof(*busy), cmp_pid);	/* pid is first */
	for (i = 0; i < nr; i++) {
		pids[i] = busy[i].pid;
		flt[i] = busy[i].delta;
	}
	for (i = 0; i < nr; i++) {
		pid_t *prev = c->samp_pid ? bsearch(&pids[i], c->samp_pid, c->samp_nr,
						    sizeof(pid_t), cmp_pid) : NULL;
		unsigned long long base = prev ? c->samp_flt[prev - c->samp_pid] : 0;

		if (flt[i] > base) {
			busy[nb].pid = pids[i];
			busy[nb++].delta = flt[i] - base;
		}
	}
	qsort(busy, nb, sizeof(*busy), cmp_busy);
	if (nb > (size_t)c->max_all)
		nb = (size_t)c->max_all;
	/* Drop the ones no longer among the busiest. */
	for (i = 0; i < c->m.nr;) {
		struct top_proc *p = &c->m.procs[i];
		size_t j;

		for (j = 0; j < nb && busy[j].pid != p->pid; j++)
			;
		if (j == nb) {
			memmon_session__watch_del(c->s, p->pid);
			top_model_remove(&c->m, p->pid);
			continue;	/* another entry moved into i */
		}
		i++;
	}
	for (i = 0; i < nb; i++) {
		if (top_model_find(&c->m, busy[i].pid))
			continue;
		/* Not ours to watch (EACCES), or gone: skip it. */
		if (memmon_session__watch_add(c->s, busy[i].pid, 0) == 0 ||
		    errno == EEXIST)
			top_model_get(&c->m, busy[i].pid);
	}
	free(c->samp_pid);
	free(c->samp_flt);
	c->samp_pid = pids;
	c->samp_flt = flt;
	c->samp_nr = nr;
	pids = NULL;
	flt = NULL;
	ret = 0;
out:
	if (d)
		closedir(d);
	free(pids);
	free(flt);
	free(busy);
	return ret;
}

/* Rates for the interval that just ended, /proc's view, the sort. */
static void top_tick(struct top_ctx *c, unsigned long long elapsed_ns)
{
	size_t i;

	for (i = 0; i < c->m.nr; i++)
		refresh_proc(&c->m.procs[i]);
	top_model_tick(&c->m, elapsed_ns);
	top_model_sort(&c->m);
}

/* Processes gone at this tick leave the view at the next. */
static void drop_gone(struct top_ctx *c)
{
	size_t i;

	for (i = 0; i < c->m.nr;) {
		if (c->m.procs[i].gone) {
			c->m.procs[i] = c->m.procs[--c->m.nr];
			continue;
		}
		i++;
	}
}

static void draw(struct top_ctx *c, double now_s, bool paused, const char *note)
{
	char line[512], head[640];
	int rows, cols, y;
	size_t i;

	/* Lines are cut at the width: a wrapped line would push the others. */
	getmaxyx(stdscr, rows, cols);
	if (cols < 1)
		cols = 1;
	erase();
	top_format_header(&c->m, line, sizeof(line));
	snprintf(head, sizeof(head), "memmon top  %.1fs  %s%s", now_s, line,
		 paused ? "  PAUSED" : "");
	mvaddnstr(0, 0, head, cols);
	mvaddnstr(1, 0, note && *note ? note :
		  "keys: f m s r sort  < > column  space/p pause  q quit", cols);
	top_format_columns(&c->m, line, sizeof(line));
	attron(A_REVERSE);
	mvaddnstr(2, 0, line, cols);
	attroff(A_REVERSE);
	for (i = 0, y = 3; i < c->m.nr && y < rows; i++, y++) {
		top_format_line(&c->m.procs[i], line, sizeof(line));
		mvaddnstr(y, 0, line, cols);
	}
	refresh();
}

static int parse_seconds(const char *s, unsigned long long *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.1 && v <= 3600))
		return -EINVAL;
	*ns = (unsigned long long)(v * 1e9);
	return 0;
}

/* A key: true to redraw now. *quit on q. */
static bool handle_key(struct top_ctx *c, int ch, bool *paused, bool *quit)
{
	switch (ch) {
	case 'q':
	case 'Q':
		*quit = true;
		return false;
	case ' ':
	case 'p':
		*paused = !*paused;
		return true;
	case 'f':
		c->m.sort = TOP_COL_FAULTS;
		break;
	case 'm':
		c->m.sort = TOP_COL_MAJOR;
		break;
	case 's':
		c->m.sort = TOP_COL_SYSCALLS;
		break;
	case 'r':
		c->m.sort = TOP_COL_RSS;
		break;
	case '<':
		c->m.sort = (c->m.sort + TOP_COL__COUNT - 1) % TOP_COL__COUNT;
		break;
	case '>':
		c->m.sort = (c->m.sort + 1) % TOP_COL__COUNT;
		break;
	case KEY_RESIZE:
		return true;
	default:
		return false;
	}
	top_model_sort(&c->m);
	return true;
}

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "follow", no_argument, NULL, 'f' },
		{ "all", no_argument, NULL, 'a' },
		{ "max", required_argument, NULL, 'N' },
		{ "delay", required_argument, NULL, 'd' },
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "ring-size", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "top";
	struct target t = { .go_fd = -1 };
	struct top_ctx c = { .max_all = TOP_ALL_DEFAULT };
	unsigned long long interval = 1000000000ULL, start, last, next, now;
	unsigned long long next_pick = 0;
	__u64 ring_size = 0;
	long iterations = 0, iter = 0;
	bool batch = false, paused = false, quit = false, child_done = false;
	bool screen = false, redraw, ended = false;
	int opt, ret = 1, status = 0, n, ch;
	time_t last_reap = 0;
	char *end;

	top_model_init(&c.m);
	t.ev_mask = 1ULL << MEMMON_EV_SYSCALL | 1ULL << MEMMON_EV_FAULT |
		    1ULL << MEMMON_EV_RSS;
	t.ev_syscalls = (1ULL << MEMMON_SYS__COUNT) - 1;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+p:faN:d:bn:m:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			ret = target_add_pids(cmd, &t, optarg);
			if (ret)
				goto out_free;
			break;
		case 'f':
			t.follow = true;
			break;
		case 'a':
			c.all = true;
			break;
		case 'N':
			errno = 0;
			c.max_all = (int)strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || c.max_all < 1 ||
			    c.max_all > 4096) {
				ret = tool_usage_err(cmd, "bad count '%s': 1 to 4096",
						     optarg);
				goto out_free;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &interval)) {
				ret = tool_usage_err(cmd, "bad delay '%s': seconds, "
						     "0.1 to 3600", optarg);
				goto out_free;
			}
			break;
		case 'b':
			batch = true;
			break;
		case 'n':
			errno = 0;
			iterations = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || iterations < 1) {
				ret = tool_usage_err(cmd, "bad iteration count '%s'",
						     optarg);
				goto out_free;
			}
			break;
		case 'm':
			if (tool_parse_size(optarg, &ring_size) ||
			    !ring_size || (ring_size & (ring_size - 1))) {
				ret = tool_usage_err(cmd, "bad ring size '%s': a "
					"power of two in bytes, e.g. 1M, 4M", optarg);
				goto out_free;
			}
			break;
		case 'h':
			fputs(top_usage, stdout);
			ret = tool_close_stdout(cmd);
			goto out_free;
		default:
			ret = tool_usage_err(cmd, "unknown or incomplete option '%s'",
					     argv[optind - 1]);
			goto out_free;
		}
	}
	if (optind < argc)
		t.cmd_argv = &argv[optind];
	if (c.all && (t.cmd_argv || t.nr_pids || t.follow)) {
		ret = tool_usage_err(cmd, "-a watches the busiest processes: "
				     "not with -p, -f or a command");
		goto out_free;
	}
	if (!c.all && !t.cmd_argv && !t.nr_pids) {
		ret = tool_usage_err(cmd, "nothing to watch: give -p PID, -a or -- CMD");
		goto out_free;
	}
	if (iterations && !batch) {
		ret = tool_usage_err(cmd, "-n is for --batch");
		goto out_free;
	}
	if (!batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		ret = tool_usage_err(cmd, "the full-screen view needs a terminal; "
				     "use --batch for text");
		goto out_free;
	}
	ret = 1;
	c.follow = t.follow;
	c.self = getpid();
	c.pt = proctab_new(t.follow);
	if (!c.pt) {
		tool_err(cmd, "out of memory");
		goto out_free;
	}
	proctab_thread_online();
	c.s = tool_open_session(cmd, ring_size, 0);
	if (!c.s)
		goto out_offline;
	if (t.cmd_argv && target_spawn(cmd, &t))
		goto out_session;
	memmon_session__set_callback(c.s, top_cb, &c, NULL);
	tool_catch_signals();
	n = target_start(cmd, &t, c.s);
	if (n) {
		ret = n;
		target_abort(&t);
		goto out_session;
	}
	if (t.child > 0) {
		proctab_add(c.pt, t.child);
		top_model_get(&c.m, t.child);
	}
	for (n = 0; n < t.nr_pids; n++) {
		proctab_add(c.pt, t.pids[n]);
		top_model_get(&c.m, t.pids[n]);
	}
	if (c.all) {
		n = repick(&c);
		if (n < 0) {
			tool_err(cmd, "reading /proc: %s", strerror(-n));
			goto out_disable;
		}
		/* The first pick has only totals: pick again soon. */
		next_pick = mono_ns() + 1000000000ULL;
	}
	target_go(&t);
	if (!batch) {
		if (!initscr()) {
			tool_err(cmd, "cannot start the terminal (TERM=%s)",
				 getenv("TERM") ?: "");
			goto out_disable;
		}
		screen = true;
		cbreak();
		noecho();
		nodelay(stdscr, TRUE);
		keypad(stdscr, TRUE);
		curs_set(0);
	}
	start = last = mono_ns();
	next = start + interval;
	if (screen) {
		top_tick(&c, 0);
		draw(&c, 0, paused, "waiting for the first interval...");
	}
	while (!tool_stop && !quit) {
		now = mono_ns();
		if (now >= next) {
			drop_gone(&c);
			top_tick(&c, now - last);
			last = now;
			next += interval;
			if (next <= now)
				next = now + interval;
			if (batch) {
				if (top_model_print(&c.m, stdout, (now - start) / 1e9,
						    false) < 0 || fflush(stdout)) {
					tool_err(cmd, "write error: %s", strerror(errno));
					goto out_disable;
				}
				if (iterations && ++iter >= iterations)
					break;
			} else if (!paused) {
				draw(&c, (now - start) / 1e9, paused, NULL);
			}
			if (ended)
				break;
			if (c.all && now >= next_pick) {
				repick(&c);
				next_pick = now + TOP_REPICK_NS;
			}
		}
		n = (int)((next - now) / 1000000ULL);
		n = memmon_session__poll(c.s, n < TOP_POLL_MS ? n : TOP_POLL_MS);
		if (n < 0 && n != -EINTR) {
			if (screen)
				endwin();
			screen = false;
			tool_err(cmd, "reading events: %s", strerror(-n));
			goto out_disable;
		}
		redraw = false;
		while (screen && (ch = getch()) != ERR) {
			bool was = paused;

			redraw |= handle_key(&c, ch, &paused, &quit);
			/* Frozen: only the pause itself shows. */
			if (was && paused)
				redraw = false;
		}
		if (redraw && !quit)
			draw(&c, (mono_ns() - start) / 1e9, paused, NULL);
		if (t.child > 0 && !child_done &&
		    waitpid(t.child, &status, WNOHANG) == t.child) {
			child_done = true;
			proctab_exited(c.pt, t.child);
		}
		if (time(NULL) != last_reap) {
			last_reap = time(NULL);
			proctab_reap_gone(c.pt, child_done ? 0 : t.child);
		}
		/* Batch ends with a last block once all are gone. */
		if (batch && !c.all && proctab_live(c.pt) == 0)
			ended = true;
	}
	ret = 0;
out_disable:
	if (screen)
		endwin();
	memmon_session__disable(c.s);
	if (t.child > 0 && !child_done) {
		kill(t.child, SIGTERM);
		waitpid(t.child, &status, 0);
	}
out_session:
	memmon_session__close(c.s);
out_offline:
	proctab_free(c.pt);
	c.pt = NULL;
	proctab_thread_offline();
	if (tool_close_stdout(cmd))
		ret = 1;
out_free:
	free(c.samp_pid);
	free(c.samp_flt);
	top_model_free(&c.m);
	target_free(&t);
	return ret;
}
