// SPDX-License-Identifier: GPL-2.0
/*
 * memmon serve: the table of recordings. Each recording is a child
 * "memmon record -o DIR/NAME.memmon ...", forked by the main thread: a crash
 * stays in one recording, SIGINT makes it finish its file, and
 * PR_SET_PDEATHSIG hands it SIGTERM (same effect) if the server dies.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <memmon/trace.h>
#include <memmon/decode.h>
#include "serve.h"

#define STOP_WAIT_S	60	/* POST .../stop waits this long for the file */
#define ARGV_MAX	64

static pthread_cond_t reaped = PTHREAD_COND_INITIALIZER;

void serve_rec_init(struct serve *sv)
{
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->spawn_done, NULL);
	sv->recs = NULL;
	sv->running = 0;
	sv->started_at = time(NULL);
}

void serve_rec_path(struct serve *sv, const char *name, unsigned int part,
		    char *out, size_t size)
{
	if (part)
		snprintf(out, size, "%s/%s.memmon.%u", sv->cfg.dir, name, part);
	else
		snprintf(out, size, "%s/%s.memmon", sv->cfg.dir, name);
}

struct rec *serve_rec_find(struct serve *sv, const char *name)
{
	struct rec *r;

	for (r = sv->recs; r; r = r->next)
		if (!strcmp(r->name, name))
			return r;
	return NULL;
}

static struct rec *rec_add(struct serve *sv, const char *name, enum rec_state state)
{
	struct rec *r = calloc(1, sizeof(*r)), **pp = &sv->recs;

	if (!r)
		return NULL;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->state = state;
	while (*pp)
		pp = &(*pp)->next;
	*pp = r;
	return r;
}

static void rec_remove(struct serve *sv, struct rec *r)
{
	struct rec **pp;

	for (pp = &sv->recs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	serve_rec_stats_free(&r->st);
	json_decref(r->cache);
	free(r);
}

/* "NAME.memmon" or "NAME.memmon.N": NAME into name; false otherwise. */
static bool file_rec_name(const char *file, char *name, size_t size)
{
	const char *p = strstr(file, ".memmon");
	size_t n;

	if (!p)
		return false;
	while (strstr(p + 1, ".memmon"))
		p = strstr(p + 1, ".memmon");
	if (p[7] && (p[7] != '.' || !p[8] || strspn(p + 8, "0123456789") != strlen(p + 8)))
		return false;
	n = p - file;
	if (!n || n >= size)
		return false;
	memcpy(name, file, n);
	name[n] = 0;
	return serve_name_valid(name);
}

int serve_rec_scan(struct serve *sv)
{
	DIR *d = opendir(sv->cfg.dir);
	struct dirent *e;
	char name[SERVE_NAME_MAX + 1];
	int n = 0;

	if (!d)
		return -errno;
	pthread_mutex_lock(&sv->lock);
	while ((e = readdir(d))) {
		struct rec *r;
		struct stat st;

		if (!file_rec_name(e->d_name, name, sizeof(name)) ||
		    serve_rec_find(sv, name))
			continue;
		r = rec_add(sv, name, REC_FOUND);
		if (r && !fstatat(dirfd(d), e->d_name, &st, 0))
			r->started = r->ended = st.st_mtime;
		n += !!r;
	}
	pthread_mutex_unlock(&sv->lock);
	closedir(d);
	return n;
}

__u64 serve_dir_usage(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	__u64 sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat st;

		if (!fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode))
			sum += st.st_size;
	}
	closedir(d);
	return sum;
}

static int add_arg(char **argv, int *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int add_arg(char **argv, int *n, const char *fmt, ...)
{
	va_list ap;
	int ret;

	if (*n >= ARGV_MAX - 1)
		return -E2BIG;
	va_start(ap, fmt);
	ret = vasprintf(&argv[*n], fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -ENOMEM;
	(*n)++;
	argv[*n] = NULL;
	return 0;
}

static void free_argv(char **argv)
{
	int i;

	for (i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* A size: a JSON integer (bytes) or a string with K/M/G as record takes. */
static bool size_arg(json_t *v, char *out, size_t size)
{
	const char *s;

	if (json_is_integer(v) && json_integer_value(v) > 0) {
		snprintf(out, size, "%lld", (long long)json_integer_value(v));
		return true;
	}
	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	if (!*s || strlen(s) > 20 || strspn(s, "0123456789") == 0 ||
	    strspn(s, "0123456789KMGkmg") != strlen(s))
		return false;
	snprintf(out, size, "%s", s);
	return true;
}

#define BAD(code, ...) do { *status = (code); snprintf(err, errsize, __VA_ARGS__); \
			    goto bad; } while (0)

char **serve_rec_argv(struct serve *sv, json_t *req, const char *path,
		      int *status, char *err, size_t errsize)
{
	char **argv = calloc(ARGV_MAX, sizeof(*argv));
	json_t *pids = json_object_get(req, "pids"), *cmd = json_object_get(req, "cmd");
	json_t *v;
	char buf[64];
	const char *key;
	size_t i;
	int n = 0;

	*status = 500;
	if (!argv)
		BAD(500, "out of memory");
	json_object_foreach(req, key, v) {
		static const char *const known[] = {
			"name", "pids", "cmd", "cgroup", "events", "ring_size",
			"follow", "compress", "max_size", "rotate", "duration",
			"until_mark", NULL,
		};
		const char *const *k;

		for (k = known; *k && strcmp(*k, key); k++)
			;
		if (!*k)
			BAD(400, "unknown field '%s'", key);
	}
	if (add_arg(argv, &n, "%s", sv->cfg.exe) || add_arg(argv, &n, "record") ||
	    add_arg(argv, &n, "-o") || add_arg(argv, &n, "%s", path))
		BAD(500, "out of memory");
	if (pids) {
		char list[1024] = "";
		size_t len = 0;

		if (!json_is_array(pids) || !json_array_size(pids) ||
		    json_array_size(pids) > 64)
			BAD(400, "\"pids\" must be an array of 1 to 64 process ids");
		json_array_foreach(pids, i, v) {
			if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
			    json_integer_value(v) > 0x7fffffff)
				BAD(400, "\"pids\" must hold positive integers");
			len += snprintf(list + len, sizeof(list) - len, "%s%lld",
					i ? "," : "", (long long)json_integer_value(v));
		}
		if (add_arg(argv, &n, "-p") || add_arg(argv, &n, "%s", list))
			BAD(500, "out of memory");
	}
	v = json_object_get(req, "cgroup");
	if (v) {
		const char *cg = json_string_value(v);

		/* A cgroup v2 directory by its path under the hierarchy's
		 * root (absolute, or relative to /sys/fs/cgroup): nothing
		 * that climbs out of it.
		 */
		if (!cg || !*cg || strlen(cg) > 512 || strstr(cg, "..") ||
		    (cg[0] == '/' && strncmp(cg, "/sys/fs/cgroup/", 15)))
			BAD(400, "\"cgroup\" must be a path under /sys/fs/cgroup, "
			    "without \"..\"");
		if (add_arg(argv, &n, "-G") || add_arg(argv, &n, "%s", cg))
			BAD(500, "out of memory");
	}
	if (!pids && !cmd && !v)
		BAD(400, "nothing to record: give \"pids\", \"cgroup\" or \"cmd\"");
	v = json_object_get(req, "follow");
	if (v && !json_is_boolean(v))
		BAD(400, "\"follow\" must be true or false");
	if (json_is_true(v) && add_arg(argv, &n, "-f"))
		BAD(500, "out of memory");
	v = json_object_get(req, "compress");
	if (v && !json_is_boolean(v))
		BAD(400, "\"compress\" must be true or false");
	if (json_is_true(v) && add_arg(argv, &n, "-z"))
		BAD(500, "out of memory");
	v = json_object_get(req, "events");
	if (v) {
		if (!json_is_string(v) || !*json_string_value(v) ||
		    json_string_length(v) > 512 || json_string_value(v)[0] == '-')
			BAD(400, "\"events\" must be a list like \"faults,mmap\"");
		if (add_arg(argv, &n, "-e") || add_arg(argv, &n, "%s", json_string_value(v)))
			BAD(500, "out of memory");
	}
	v = json_object_get(req, "ring_size");
	if (v) {
		if (!size_arg(v, buf, sizeof(buf)))
			BAD(400, "\"ring_size\" must be a size like 4M");
		if (add_arg(argv, &n, "-m") || add_arg(argv, &n, "%s", buf))
			BAD(500, "out of memory");
	}
	v = json_object_get(req, "max_size");
	if (v) {
		if (!size_arg(v, buf, sizeof(buf)))
			BAD(400, "\"max_size\" must be a size like 64M");
		if (add_arg(argv, &n, "--max-size=%s", buf))
			BAD(500, "out of memory");
	}
	v = json_object_get(req, "rotate");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 100000)
			BAD(400, "\"rotate\" must be a count of files");
		if (!json_object_get(req, "max_size"))
			BAD(400, "\"rotate\" needs \"max_size\"");
		if (add_arg(argv, &n, "--rotate=%lld", (long long)json_integer_value(v)))
			BAD(500, "out of memory");
	}
	v = json_object_get(req, "duration");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			BAD(400, "\"duration\" must be whole seconds");
		if (add_arg(argv, &n, "--duration=%lld", (long long)json_integer_value(v)))
			BAD(500, "out of memory");
	}
	v = json_object_get(req, "until_mark");
	if (v) {
		if (!json_is_string(v) || !*json_string_value(v))
			BAD(400, "\"until_mark\" must be a text");
		if (add_arg(argv, &n, "--until-mark=%s", json_string_value(v)))
			BAD(500, "out of memory");
	}
	if (cmd) {
		if (!json_is_array(cmd) || !json_array_size(cmd) ||
		    json_array_size(cmd) > (size_t)(ARGV_MAX - n - 2))
			BAD(400, "\"cmd\" must be a non-empty array of strings");
		if (add_arg(argv, &n, "--"))
			BAD(500, "out of memory");
		json_array_foreach(cmd, i, v) {
			if (!json_is_string(v))
				BAD(400, "\"cmd\" must be a non-empty array of strings");
			if (add_arg(argv, &n, "%s", json_string_value(v)))
				BAD(500, "out of memory");
		}
	}
	*status = 0;
	return argv;
bad:
	free_argv(argv);
	return NULL;
}

int serve_rec_start(struct serve *sv, json_t *req, char *name, char *err, size_t errsize)
{
	static unsigned int seq;
	json_t *jn = json_object_get(req, "name");
	char path[4200];
	char **argv;
	struct rec *r;
	int status;
	__u64 used;

	if (!json_is_object(req)) {
		snprintf(err, errsize, "the body must be a JSON object");
		return 400;
	}
	if (jn) {
		if (!json_is_string(jn) || !serve_name_valid(json_string_value(jn))) {
			snprintf(err, errsize, "bad name: 1-%d of A-Z a-z 0-9 _ - . "
				 "not starting with '.', no \"..\"", SERVE_NAME_MAX);
			return 400;
		}
		snprintf(name, SERVE_NAME_MAX + 1, "%s", json_string_value(jn));
	} else {
		struct tm tm;
		time_t now = time(NULL);

		gmtime_r(&now, &tm);
		snprintf(name, SERVE_NAME_MAX + 1, "rec-%04d%02d%02d-%02d%02d%02d-%u",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			 tm.tm_min, tm.tm_sec, __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	}
	serve_rec_path(sv, name, 0, path, sizeof(path));
	argv = serve_rec_argv(sv, req, path, &status, err, errsize);
	if (!argv)
		return status;
	used = sv->cfg.quota ? serve_dir_usage(sv->cfg.dir) : 0;

	pthread_mutex_lock(&sv->lock);
	if (serve_rec_find(sv, name)) {
		snprintf(err, errsize, "a recording named '%s' exists", name);
		status = 409;
	} else if (sv->running >= sv->cfg.max_recordings) {
		snprintf(err, errsize, "%u recordings are running, the most this "
			 "server allows (--max-recordings)", sv->running);
		status = 429;
	} else if (sv->cfg.quota && used >= sv->cfg.quota) {
		snprintf(err, errsize, "disk quota exceeded: %s holds %llu bytes, "
			 "the quota is %llu (--quota); delete recordings first",
			 sv->cfg.dir, (unsigned long long)used,
			 (unsigned long long)sv->cfg.quota);
		status = 507;
	}
	if (status) {
		pthread_mutex_unlock(&sv->lock);
		free_argv(argv);
		return status;
	}
	/* Counted as running from here: a concurrent start sees the slot taken. */
	r = rec_add(sv, name, REC_RUNNING);
	if (!r) {
		pthread_mutex_unlock(&sv->lock);
		free_argv(argv);
		snprintf(err, errsize, "out of memory");
		return 500;
	}
	sv->running++;
	r->started = time(NULL);
	while (sv->spawn_pending)
		pthread_cond_wait(&sv->spawn_done, &sv->lock);
	sv->spawn_pending = true;
	sv->spawn_argv = argv;
	sv->spawn_rec = r;
	/* EAGAIN: the pipe is full, the main thread will wake anyway */
	(void)!write(sv->wake_pipe[1], "s", 1);
	while (!r->spawned)
		pthread_cond_wait(&sv->spawn_done, &sv->lock);
	status = r->spawn_err;
	if (status) {
		snprintf(err, errsize, "cannot start memmon record: %s", strerror(status));
		sv->running--;
		rec_remove(sv, r);
		status = 500;
	} else {
		status = 201;
	}
	pthread_cond_broadcast(&sv->spawn_done);
	pthread_mutex_unlock(&sv->lock);
	free_argv(argv);
	return status;
}

/* Main thread: fork the pending request's child. */
void serve_rec_spawn_pending(struct serve *sv)
{
	char log[4200];
	pid_t parent = getpid(), pid;
	struct rec *r;
	int fd;

	pthread_mutex_lock(&sv->lock);
	if (!sv->spawn_pending) {
		pthread_mutex_unlock(&sv->lock);
		return;
	}
	r = sv->spawn_rec;
	snprintf(log, sizeof(log), "%s/%s.log", sv->cfg.dir, r->name);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	pid = fd < 0 ? -1 : fork();
	if (pid == 0) {
		sigset_t none;
		int null = open("/dev/null", O_RDONLY);

		/* Only async-signal-safe calls: other threads hold locks. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		setpgid(0, 0);	/* the terminal's Ctrl-C goes to the server */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (null >= 0)
			dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(sv->spawn_argv[0], sv->spawn_argv);
		_exit(127);
	}
	r->spawn_err = pid < 0 ? errno : 0;
	r->spawned = true;
	if (fd >= 0)
		close(fd);
	if (pid > 0)
		r->pid = pid;
	sv->spawn_pending = false;
	sv->spawn_rec = NULL;
	pthread_cond_broadcast(&sv->spawn_done);
	pthread_mutex_unlock(&sv->lock);
}

/* Main thread, on SIGCHLD: only our recordings' pids, so that the report
 * runs of HTTP threads (serve_run_tool) keep theirs.
 */
void serve_rec_reap(struct serve *sv)
{
	struct rec *r;
	int st;

	pthread_mutex_lock(&sv->lock);
	for (r = sv->recs; r; r = r->next) {
		if (r->state != REC_RUNNING || r->pid <= 0 ||
		    waitpid(r->pid, &st, WNOHANG) != r->pid)
			continue;
		r->status = st;
		r->state = WIFEXITED(st) && !WEXITSTATUS(st) ? REC_FINISHED : REC_FAILED;
		r->pid = 0;
		r->ended = time(NULL);
		sv->running--;
	}
	pthread_cond_broadcast(&reaped);
	pthread_mutex_unlock(&sv->lock);
}

static void stop_locked(struct rec *r, const char *reason)
{
	if (r->state != REC_RUNNING || r->pid <= 0)
		return;
	/* SIGINT: record drains its rings and writes the index and trailer. */
	kill(r->pid, SIGINT);
	r->stop_sent = true;
	if (!r->stop_reason[0])
		snprintf(r->stop_reason, sizeof(r->stop_reason), "%s", reason);
}

void serve_rec_stop_all(struct serve *sv, const char *reason)
{
	struct rec *r;

	pthread_mutex_lock(&sv->lock);
	for (r = sv->recs; r; r = r->next)
		stop_locked(r, reason);
	pthread_mutex_unlock(&sv->lock);
}

void serve_rec_check_quota(struct serve *sv)
{
	__u64 used;

	if (!sv->cfg.quota || !sv->running)
		return;
	used = serve_dir_usage(sv->cfg.dir);
	if (used > sv->cfg.quota)
		serve_rec_stop_all(sv, "disk quota reached");
}

int serve_rec_stop(struct serve *sv, const char *name, char *err, size_t errsize)
{
	struct timespec until;
	struct rec *r;
	int ret = 200;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STOP_WAIT_S;
	pthread_mutex_lock(&sv->lock);
	r = serve_rec_find(sv, name);
	if (!r) {
		snprintf(err, errsize, "no recording named '%s'", name);
		ret = 404;
	} else if (r->state != REC_RUNNING) {
		snprintf(err, errsize, "'%s' is not running", name);
		ret = 409;
	} else {
		stop_locked(r, "stopped by request");
		/* Answer once the file is complete: the client fetches next. */
		while ((r = serve_rec_find(sv, name)) && r->state == REC_RUNNING)
			if (pthread_cond_timedwait(&reaped, &sv->lock, &until) == ETIMEDOUT)
				break;
		if (r && r->state == REC_RUNNING) {
			snprintf(err, errsize, "'%s' was told to stop but still runs "
				 "after %d s", name, STOP_WAIT_S);
			ret = 504;
		}
	}
	pthread_mutex_unlock(&sv->lock);
	return ret;
}

int serve_rec_delete(struct serve *sv, const char *name, char *err, size_t errsize)
{
	char path[4200], fname[SERVE_NAME_MAX + 32], rn[SERVE_NAME_MAX + 1];
	struct dirent *e;
	struct rec *r;
	DIR *d;

	pthread_mutex_lock(&sv->lock);
	r = serve_rec_find(sv, name);
	if (!r) {
		pthread_mutex_unlock(&sv->lock);
		snprintf(err, errsize, "no recording named '%s'", name);
		return 404;
	}
	if (r->state == REC_RUNNING) {
		pthread_mutex_unlock(&sv->lock);
		snprintf(err, errsize, "'%s' is running: stop it first", name);
		return 409;
	}
	d = opendir(sv->cfg.dir);
	while (d && (e = readdir(d)))
		if (file_rec_name(e->d_name, rn, sizeof(rn)) && !strcmp(rn, name))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	snprintf(fname, sizeof(fname), "%s.log", name);
	snprintf(path, sizeof(path), "%s/%s", sv->cfg.dir, fname);
	unlink(path);
	rec_remove(sv, r);
	pthread_mutex_unlock(&sv->lock);
	return 200;
}

void serve_rec_stats_free(struct rec_stats *st)
{
	free(st->delivered);
	free(st->lost);
	st->delivered = st->lost = NULL;
}

static int count_rec(void *ctx, const struct memmon_rec_header *rec)
{
	struct rec_stats *st = ctx;

	if (rec->cpu >= st->nr_cpus)
		return 0;
	if (rec->type == MEMMON_REC_LOST) {
		const struct memmon_rec_lost *l = memmon_rec__lost(rec);

		if (l)
			st->lost[rec->cpu] += l->count;
		return 0;
	}
	st->delivered[rec->cpu]++;
	st->events++;
	return 0;
}

/*
 * Progress from the file itself, which works for a running recording (the
 * reader stops at the torn end) as for one from before a restart. At the
 * end record writes the kernel's counters (meta "cpu_stats"): exact, they
 * replace what the LOST records said.
 */
int serve_rec_read_stats(const char *path, struct rec_stats *st)
{
	struct memmon_trace_reader *rd;
	const struct memmon_trace_info *in;
	json_t *meta, *cs;
	struct stat sb;
	unsigned int c;
	long n;

	memset(st, 0, sizeof(*st));
	if (stat(path, &sb))
		return -errno;
	st->size = sb.st_size;
	st->mtime_ns = sb.st_mtim.tv_sec * 1000000000ULL + sb.st_mtim.tv_nsec;
	rd = memmon_trace_reader__open(path, NULL);
	if (!rd)
		return -errno;
	in = memmon_trace_reader__info(rd);
	st->nr_cpus = in->nr_cpus;
	st->truncated = in->truncated;
	st->delivered = calloc(st->nr_cpus ? st->nr_cpus : 1, sizeof(__u64));
	st->lost = calloc(st->nr_cpus ? st->nr_cpus : 1, sizeof(__u64));
	if (!st->delivered || !st->lost) {
		memmon_trace_reader__close(rd);
		serve_rec_stats_free(st);
		return -ENOMEM;
	}
	n = memmon_trace_reader__for_each(rd, count_rec, st);
	meta = json_loads(memmon_trace_reader__meta(rd), 0, NULL);
	cs = json_object_get(meta, "cpu_stats");
	for (c = 0; c < st->nr_cpus && c < json_array_size(cs); c++) {
		json_t *l = json_object_get(json_array_get(cs, c), "lost");

		if (json_is_integer(l) && (__u64)json_integer_value(l) > st->lost[c])
			st->lost[c] = json_integer_value(l);
	}
	json_decref(meta);
	memmon_trace_reader__close(rd);
	return n < 0 ? (int)n : 0;
}

#define STATS_TTL_S	2

static long long mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static const char *state_name(enum rec_state s)
{
	switch (s) {
	case REC_RUNNING:	return "running";
	case REC_FINISHED:	return "finished";
	case REC_FAILED:	return "failed";
	default:		return "found";
	}
}

/* The last line of NAME.log: why record failed. */
static json_t *log_tail(struct serve *sv, const char *name)
{
	char path[4200], buf[4096], *p;
	ssize_t n;
	off_t sz;
	int fd;

	snprintf(path, sizeof(path), "%s/%s.log", sv->cfg.dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	sz = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, sizeof(buf) - 1, sz > (off_t)sizeof(buf) - 1 ?
		  sz - (off_t)sizeof(buf) + 1 : 0);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = 0;
	p = strrchr(buf, '\n');
	p = p ? p + 1 : buf;
	if (strrchr(p, '\r'))
		p = strrchr(p, '\r') + 1;
	return json_string(p);
}

json_t *serve_rec_list(struct serve *sv)
{
	json_t *arr = json_array();
	struct rec *r;
	size_t i;

	pthread_mutex_lock(&sv->lock);
	for (r = sv->recs; r; r = r->next) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(r->name));
		json_object_set_new(o, "state", json_string(state_name(r->state)));
		if (r->pid > 0)
			json_object_set_new(o, "pid", json_integer(r->pid));
		if (r->state == REC_FINISHED || r->state == REC_FAILED) {
			if (WIFEXITED(r->status))
				json_object_set_new(o, "exit_status",
						    json_integer(WEXITSTATUS(r->status)));
			else
				json_object_set_new(o, "signal",
						    json_integer(WTERMSIG(r->status)));
		}
		if (r->stop_reason[0])
			json_object_set_new(o, "stop_reason", json_string(r->stop_reason));
		json_object_set_new(o, "started", json_integer(r->started));
		if (r->ended)
			json_object_set_new(o, "ended", json_integer(r->ended));
		json_array_append_new(arr, o);
	}
	pthread_mutex_unlock(&sv->lock);

	/*
	 * The files are read without the lock: a pass over a big file takes a
	 * while. Its result is kept per recording and reused while the file
	 * has not changed, or for a running one during STATS_TTL_S, so that
	 * clients polling the list cost at most one pass per recording per
	 * STATS_TTL_S.
	 */
	for (i = 0; i < json_array_size(arr); i++) {
		json_t *o = json_array_get(arr, i), *d, *l, *e, *p = NULL;
		const char *name = json_string_value(json_object_get(o, "name"));
		bool running = !strcmp(json_string_value(json_object_get(o, "state")),
				       "running");
		char path[4200];
		struct rec_stats st;
		struct stat sb;
		unsigned int c;
		long long now = mono_s();

		serve_rec_path(sv, name, 0, path, sizeof(path));
		if (!strcmp(json_string_value(json_object_get(o, "state")), "failed") &&
		    (e = log_tail(sv, name)))
			json_object_set_new(o, "error", e);
		if (stat(path, &sb))
			sb.st_size = 0;
		pthread_mutex_lock(&sv->lock);
		r = serve_rec_find(sv, name);
		if (r && r->cache && (running ? now - r->cache_at < STATS_TTL_S :
				      r->cache_size == (__u64)sb.st_size))
			p = json_deep_copy(r->cache);
		pthread_mutex_unlock(&sv->lock);
		if (!p) {
			p = json_object();
			if (serve_rec_read_stats(path, &st) && !st.delivered) {
				json_object_set_new(p, "bytes", json_integer((json_int_t)sb.st_size));
			} else {
				d = json_array();
				l = json_array();
				for (c = 0; c < st.nr_cpus; c++) {
					json_array_append_new(d, json_integer((json_int_t)st.delivered[c]));
					json_array_append_new(l, json_integer((json_int_t)st.lost[c]));
				}
				json_object_set_new(p, "bytes", json_integer((json_int_t)st.size));
				json_object_set_new(p, "events", json_integer((json_int_t)st.events));
				json_object_set_new(p, "events_per_cpu", d);
				json_object_set_new(p, "lost_per_cpu", l);
				json_object_set_new(p, "complete", json_boolean(!st.truncated));
				serve_rec_stats_free(&st);
			}
			pthread_mutex_lock(&sv->lock);
			r = serve_rec_find(sv, name);
			if (r) {
				json_decref(r->cache);
				r->cache = json_deep_copy(p);
				r->cache_size = st.size;
				r->cache_at = now;
			}
			pthread_mutex_unlock(&sv->lock);
		}
		json_object_update(o, p);
		json_decref(p);
	}
	return arr;
}

int serve_run_tool(struct serve *sv, char *const args[], char **out, size_t *len)
{
	size_t max = sv->cfg.tool_out_max ? sv->cfg.tool_out_max : SERVE_TOOL_OUT_MAX;
	unsigned int cpu_s = sv->cfg.tool_cpu_s ? sv->cfg.tool_cpu_s : SERVE_TOOL_CPU_S;
	char *argv[16];
	size_t cap = 65536, n = 0;
	bool too_big = false;
	int pfd[2], st, i;
	pid_t pid;

	argv[0] = sv->cfg.exe;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	*out = malloc(cap);
	if (!*out)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC)) {
		free(*out);
		*out = NULL;
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		sigset_t none;
		int null = open("/dev/null", O_RDWR);

		struct rlimit cpu = { cpu_s, cpu_s + 5 };
		struct rlimit fsize = { max, max };

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXCPU, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_FSIZE, &fsize))
			_exit(126);
		dup2(pfd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		free(*out);
		*out = NULL;
		return -EAGAIN;
	}
	for (;;) {
		ssize_t k;

		if (n == cap) {
			char *p = realloc(*out, cap * 2);

			if (!p)
				break;
			*out = p;
			cap *= 2;
		}
		/* At most max + 1 bytes: one more than the cap tells it passed. */
		k = read(pfd[0], *out + n, (cap < max + 1 ? cap : max + 1) - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += k;
		if (n > max) {
			too_big = true;
			kill(pid, SIGKILL);
			break;
		}
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*len = n;
	if (too_big)
		return -EFBIG;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
