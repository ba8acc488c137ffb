/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rec_filter: which records of a trace file `memmon script` and `memmon
 * export` keep (--pid, --tid, --time, -e, --failed, --min-duration), and
 * the time window turned into a seek by the file's index.
 *
 * LOST records pass every filter but the time window, and pass that one
 * too when the losses began before the window ended: a loss is never
 * hidden from a window it may have emptied.
 */
#ifndef MEMMON_TOOLS_REC_FILTER_H
#define MEMMON_TOOLS_REC_FILTER_H

#include <stdbool.h>
#include <sys/types.h>
#include <memmon/decode.h>
#include <memmon/trace.h>

/* One end of --time: relative seconds, a marker's text, or open. */
struct rec_filter_bound {
	char *mark;		/* non-NULL: the first MARK with this text */
	__u64 rel_ns;		/* else: ns after the trace's start */
	bool open;		/* empty: the start or the end of the file */
};

struct rec_filter {
	pid_t *pids;		/* hdr.tgid in this list (none: any) */
	int nr_pids;
	pid_t *tids;		/* hdr.tid in this list (none: any) */
	int nr_tids;
	bool has_time;
	struct rec_filter_bound from, to;
	__u64 start_ns, end_ns;	/* absolute, once rec_filter_resolve()d */
	__u64 ev_mask;		/* 1 << MEMMON_EV_* shown */
	__u64 ev_sys;		/* 1 << MEMMON_SYS_* shown */
	bool failed;		/* failed syscalls and faults only */
	__u64 min_dur_ns;	/* > 0: syscalls and faults this long only */
	/*
	 * --faults: a fault passes when it is of a kind listed (major,
	 * minor; none listed: any) and of a class listed (none: any).
	 * Other records are not filtered by it.
	 */
	__u32 fault_kinds;	/* REC_FILTER_FAULT_MAJOR | _MINOR, or 0 */
	__u32 fault_classes;	/* 1 << MEMMON_FCLASS_*, or 0 */
};

#define REC_FILTER_FAULT_MAJOR	(1U << 0)
#define REC_FILTER_FAULT_MINOR	(1U << 1)

/* Everything passes; the defaults before the options. */
void rec_filter_init(struct rec_filter *f);
void rec_filter_free(struct rec_filter *f);

/*
 * Option parsers: 0, or an exit code after a message (EXIT_USAGE).
 * ids: "1,2,3", appended. time: "START,END", each relative seconds
 * ("1.5"), a marker's text, or empty. duration: "250us", "1.5ms", "2s",
 * "100ns"; a bare number is seconds.
 */
int rec_filter_parse_ids(const char *cmd, const char *arg, pid_t **ids, int *nr);
int rec_filter_parse_time(const char *cmd, struct rec_filter *f, const char *arg);
int rec_filter_parse_duration(const char *cmd, const char *arg, __u64 *ns);
int rec_filter_parse_events(const char *cmd, struct rec_filter *f, const char *arg);
/* faults: "major,anon": kinds (major, minor) and classes (anon, swap, file,
 * shmem, none, other), comma-separated; replaces an earlier list.
 */
int rec_filter_parse_faults(const char *cmd, struct rec_filter *f, const char *arg);

/*
 * Turn the window into absolute times (marker names take a pass over the
 * file's MARK records) and set the reader's window so that the chunks
 * outside it are not read. Relative seconds count from the recording's
 * start (the metadata's start_ns) or else the first record. 0, or an
 * exit code after a message: 1 for a marker not found or a window that
 * ends before it starts, or an unreadable file.
 */
int rec_filter_resolve(const char *cmd, struct rec_filter *f,
		       struct memmon_trace_reader *r, const char *path);

/*
 * The filter options, shared by the commands: -p/--pid, --tid, --time,
 * -e/--events, --failed, --min-duration, --faults (each command lists them in its
 * getopt_long() table with these values). rec_filter_option() returns 0,
 * an exit code after a message, or -1 if opt is none of them.
 */
#define REC_FILTER_SHORTOPTS	"p:e:"
enum {
	REC_FILTER_OPT_TID = 0x100,
	REC_FILTER_OPT_TIME,
	REC_FILTER_OPT_FAILED,
	REC_FILTER_OPT_MIN_DUR,
	REC_FILTER_OPT_FAULTS,
};

int rec_filter_option(const char *cmd, struct rec_filter *f, int opt,
		      const char *arg);
/* The options' help lines. */
extern const char rec_filter_help[];

/* Whether rec is kept. PATH records are syscall events, as in trace. */
bool rec_filter_match(const struct rec_filter *f,
		      const struct memmon_rec_header *rec);

/* The paths the metadata lists (what a window may have skipped). */
void rec_filter_meta_paths(struct memmon_trace_reader *r, struct memmon_paths *p);

/*
 * Open TRACE for a command that reads it through f: the reader (an error in
 * its own words), a warning when the recording did not finish (@what: what
 * the command does with the rest, e.g. "printing"), f resolved against the
 * file, and *paths holding the file's path list (rec_filter_meta_paths()).
 * On success *r and *paths are the caller's to free. Returns 0, or the
 * command's exit code with everything released.
 */
int rec_filter_open(const char *cmd, const char *what, struct rec_filter *f,
		    const char *path, struct memmon_trace_reader **r,
		    struct memmon_paths **paths);

#endif
