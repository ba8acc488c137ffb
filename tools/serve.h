/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon serve: what its files share. cmd_serve.c owns the process (options,
 * signals, the main loop that forks and reaps recordings), serve_http.c the
 * HTTP side, serve_rec.c the table of recordings, serve_auth.c the token
 * and name checks, serve_metrics.c the Prometheus text.
 */
#ifndef MEMMON_TOOLS_SERVE_H
#define MEMMON_TOOLS_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>
#include <linux/types.h>

#define SERVE_NAME_MAX		64
#define SERVE_TOKEN_BYTES	32	/* random bytes; the file holds them in hex */
#define SERVE_DEFAULT_PORT	7420

struct serve_cfg {
	const char *listen;		/* address; NULL: 127.0.0.1 */
	bool public_;			/* --public: every address */
	unsigned int port;
	const char *dir;
	const char *token_file;		/* NULL: DIR/token */
	const char *tls_cert, *tls_key;
	unsigned int max_recordings;
	__u64 quota;			/* bytes of DIR; 0: none */
	size_t max_body;
	unsigned int idle_timeout;	/* seconds */
	unsigned int max_connections;
	unsigned int metrics_top;	/* processes with labels of their own */
	char exe[4096];			/* this program, for the children */
	/* A report or timeline run for a client (serve_run_tool()): */
	size_t tool_out_max;		/* its stdout, bytes; 0: SERVE_TOOL_OUT_MAX */
	unsigned int tool_cpu_s;	/* its CPU seconds; 0: SERVE_TOOL_CPU_S */
};

/*
 * What one request may cost the server: a client names the recording, the
 * server runs the tool on it; a hostile or huge file must not take the
 * machine. The output cap bounds memory (stdout is collected) and, as
 * RLIMIT_FSIZE, a file the tool writes (timeline -o).
 */
#define SERVE_TOOL_OUT_MAX	((size_t)256 << 20)
#define SERVE_TOOL_CPU_S	600

enum rec_state {
	REC_RUNNING,
	REC_FINISHED,		/* exited 0 */
	REC_FAILED,		/* exited otherwise */
	REC_FOUND,		/* a file from before this server started */
};

/* Per-CPU progress read from a (possibly growing) trace file. */
struct rec_stats {
	__u64 size, mtime_ns;	/* of the file these were read from */
	unsigned int nr_cpus;
	__u64 events;
	__u64 *delivered, *lost;	/* per CPU */
	bool truncated;
};

struct rec {
	char name[SERVE_NAME_MAX + 1];
	enum rec_state state;
	pid_t pid;		/* > 0 while running */
	int status;		/* waitpid() status once reaped */
	bool stop_sent;
	bool spawned;		/* the main thread forked (or failed: spawn_err) */
	int spawn_err;
	char stop_reason[64];
	long long started, ended;	/* realtime seconds */
	struct rec_stats st;
	/* GET /recordings' progress fields, reused while fresh (see list) */
	json_t *cache;
	__u64 cache_size;
	long long cache_at;	/* CLOCK_MONOTONIC seconds */
	struct rec *next;
};

/*
 * The table of recordings.
 *
 * Synchronisation: lock guards the list and every field of its entries;
 * HTTP threads and the main thread take it. Children are forked by the
 * main thread only (PR_SET_PDEATHSIG follows the forking thread), so a
 * start request is handed over through spawn_* and the pipe, and the
 * HTTP thread waits on spawn_done.
 */
struct serve {
	struct serve_cfg cfg;
	char token[2 * SERVE_TOKEN_BYTES + 1];
	pthread_mutex_t lock;
	pthread_cond_t spawn_done;
	struct rec *recs;
	unsigned int running;		/* entries in REC_RUNNING: exact */
	int wake_pipe[2];
	/* the pending start request, main thread <- HTTP thread */
	char **spawn_argv;
	struct rec *spawn_rec;
	bool spawn_pending;
	unsigned long long requests, rejected;
	long long started_at;
};

/* serve_auth.c */
bool serve_name_valid(const char *name);
/* Constant time in the length of the longer string. */
bool serve_token_equal(const char *a, const char *b);
/* "Bearer TOKEN" header value against the token. */
bool serve_auth_ok(const char *token, const char *header);
/* Read the token from path, creating it (0600, random) if missing.
 * Returns 0 or a negative errno, with a message in err.
 */
int serve_token_load(const char *path, char *token, size_t size, char *err,
		     size_t errsize);

/* serve_http.c */
/*
 * One "Range: bytes=..." header against a file of size bytes:
 *   1: a satisfiable single range, [*start, *end] inclusive
 *   0: no range, or one to ignore (multiple ranges, junk): serve it whole
 *  -1: unsatisfiable (416)
 */
int serve_parse_range(const char *hdr, __u64 size, __u64 *start, __u64 *end);
/* RFC 9530's "sha-256=:BASE64:" of a file; 0 or a negative errno. */
int serve_file_digest(int fd, char *out, size_t size);
void serve_base64(const unsigned char *in, size_t len, char *out);
struct MHD_Daemon;
struct MHD_Daemon *serve_http_start(struct serve *sv, char *err, size_t errsize);

/* serve_rec.c */
void serve_rec_init(struct serve *sv);
/* The recordings already in DIR (after a restart): REC_FOUND. */
int serve_rec_scan(struct serve *sv);
struct rec *serve_rec_find(struct serve *sv, const char *name);	/* lock held */
/* Build record's argv from a start request; NULL with an HTTP status and a
 * message in err.
 */
char **serve_rec_argv(struct serve *sv, json_t *req, const char *path,
		      int *status, char *err, size_t errsize);
/* Called by the HTTP side: start (hands over to the main thread). Returns
 * an HTTP status, the message in err / the name in name.
 */
int serve_rec_start(struct serve *sv, json_t *req, char *name, char *err, size_t errsize);
int serve_rec_stop(struct serve *sv, const char *name, char *err, size_t errsize);
int serve_rec_delete(struct serve *sv, const char *name, char *err, size_t errsize);
json_t *serve_rec_list(struct serve *sv);
/* The main thread: fork a pending start request, reap children, enforce
 * the quota, stop everything on shutdown.
 */
void serve_rec_spawn_pending(struct serve *sv);
void serve_rec_reap(struct serve *sv);
void serve_rec_check_quota(struct serve *sv);
void serve_rec_stop_all(struct serve *sv, const char *reason);
__u64 serve_dir_usage(const char *dir);
/* path of NAME's file, or of its part (part > 0). */
void serve_rec_path(struct serve *sv, const char *name, unsigned int part,
		    char *out, size_t size);
/* Update r->st from its file (a pass over the records); lock not held. */
int serve_rec_read_stats(const char *path, struct rec_stats *st);
void serve_rec_stats_free(struct rec_stats *st);
/*
 * Run "memmon ARGV..." and collect its stdout: its exit status, 128 + the
 * signal that ended it (SIGXCPU past the CPU limit, SIGXFSZ past the file
 * limit), -EFBIG if its stdout passed the cap (it is killed), or -errno.
 */
int serve_run_tool(struct serve *sv, char *const args[], char **out, size_t *len);

/* serve_metrics.c */
struct metrics_input {
	const char *recording;
	json_t *report;			/* memmon report --json of its file */
	const struct rec_stats *st;
	bool running;
};
/* The exposition text of n inputs; malloc'd, NULL on no memory. */
char *serve_metrics_text(const struct metrics_input *in, size_t n, unsigned int top,
			 unsigned int sessions, unsigned long long requests);
char *serve_metrics(struct serve *sv);

/* cmd_remote.c / tests: "HOST[:PORT]" -> base URL */
int remote_base_url(const char *hostport, bool tls, char *out, size_t size);

#endif /* MEMMON_TOOLS_SERVE_H */
