/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memmon command: the table of sub-commands (memmon.c) and what they
 * share (util.c, target.c, proctab.c).
 */
#ifndef MEMMON_TOOLS_BUILTIN_H
#define MEMMON_TOOLS_BUILTIN_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <memmon/memmon.h>
#include <memmon/decode.h>

/* Exit codes: 0 success, 1 failure at run time, 2 bad usage. */
#define EXIT_USAGE	2

int cmd_trace(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_remote(int argc, char **argv);

/* The whole program, without main() so that the unit tests can run it. */
int tool_main(int argc, char **argv);

/* "memmon trace: " and the message, to stderr. Returns 1 / EXIT_USAGE. */
int tool_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int tool_usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The device: $MEMMON_DEVICE or MEMMON_DEVICE_PATH. */
const char *tool_device(void);
/* Open a session; on failure print why and what to do, return NULL. */
/* wait_ms != 0: MEMMON_FULL_WAIT (--no-loss) with that timeout. */
struct memmon_session *tool_open_session(const char *cmd, __u64 ring_size,
					 unsigned int wait_ms);
/* The same with an explicit enum memmon_full_policy. */
struct memmon_session *tool_open_session_policy(const char *cmd,
						__u64 ring_size, __u32 policy,
						unsigned int wait_ms);
int tool_parse_no_loss(const char *cmd, const char *arg, unsigned int *wait_ms);
/* Explain a failed ioctl on pid (watch_add etc.) and return 1. */
int tool_explain_errno(const char *cmd, int err, const char *what);

/* "4M", "65536", "1G": bytes. -EINVAL on junk or overflow. */
int tool_parse_size(const char *s, __u64 *out);

/* Event list "syscalls,faults,mmap,...": kernel masks. */
int tool_parse_events(const char *cmd, const char *s, __u64 *mask,
		      __u64 *syscalls);
/* The list of valid event names, for messages and --help. */
void tool_print_event_names(FILE *f);

/* Close stdout and check: a failed write to stdout is an error. */
int tool_close_stdout(const char *cmd);

/*
 * What trace and record watch: -p PID[,PID], -f, -e EVENTS, -- CMD.
 */
struct target {
	pid_t *pids;
	int nr_pids;
	bool follow;
	__u64 ev_mask;		/* what the user asked for */
	__u64 ev_syscalls;
	char **cmd_argv;	/* NULL: no command */
	pid_t child;		/* the command, once forked */
	int go_fd;		/* write end of the child's start pipe */
	char *cgroup;		/* -G: a cgroup v2 directory, or NULL */
};

/* -p: parse and check that every PID exists. Returns 0 or exit code. */
int target_add_pids(const char *cmd, struct target *t, const char *arg);
/*
 * -G: every process of a cgroup v2 directory (relative to /sys/fs/cgroup
 * or absolute) and of its descendants, and those that join later:
 * target_rescan() watches newcomers (with their children) each time the
 * consumer calls it. A cgroup target does not end when its processes do.
 */
int target_add_cgroup(const char *cmd, struct target *t, const char *arg);
struct proctab;
/* Watch the cgroup's processes not watched yet; add them to @pt. */
int target_rescan(const char *cmd, struct target *t, struct memmon_session *s,
		  struct proctab *pt);
/* Fork the command, stopped until target_go(). */
int target_spawn(const char *cmd, struct target *t);
/* SET_EVENTS (with lifecycle for exit detection), map, ENABLE, WATCH_ADD
 * everything. Returns 0 or an exit code. The command still waits: start
 * the consumer first, then target_go().
 */
int target_start(const char *cmd, struct target *t, struct memmon_session *s);
/* Let the spawned command run (exec). */
void target_go(struct target *t);
/* Kill a spawned command that never got going (and reap it). */
void target_abort(struct target *t);
void target_free(struct target *t);

/*
 * The set of processes still alive among the watched ones (and their
 * children with -f), kept from FORK/EXIT records. Safe for concurrent
 * updaters (record's per-CPU readers) and readers: an RCU hash table.
 */
struct proctab;
struct proctab *proctab_new(bool follow);
void proctab_free(struct proctab *pt);
/* Each thread touching the table registers with RCU first. */
void proctab_thread_online(void);
void proctab_thread_offline(void);
void proctab_add(struct proctab *pt, pid_t pid);
/* FORK adds a child (with follow), EXIT|GROUP removes a process. */
void proctab_on_record(struct proctab *pt, const struct memmon_rec_header *rec);
void proctab_exited(struct proctab *pt, pid_t pid);
long proctab_live(struct proctab *pt);
/* Drop entries whose process is gone (EXIT record lost); not our child. */
void proctab_reap_gone(struct proctab *pt, pid_t except);

/* Signals: SIGINT/SIGTERM set tool_stop; SIGCHLD is left default. */
extern volatile sig_atomic_t tool_stop;
void tool_catch_signals(void);

#endif /* MEMMON_TOOLS_BUILTIN_H */
