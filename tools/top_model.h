/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon top's model: per-process counters fed by records, turned into
 * per-second rates once per interval, and sorted. No terminal, no kernel:
 * the unit tests feed it synthetic records (tests/unit/test_cli_top.c).
 */
#ifndef MEMMON_TOOLS_TOP_MODEL_H
#define MEMMON_TOOLS_TOP_MODEL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/memmon.h>

/* The numeric columns, in display order; each is a sort key. */
enum top_col {
	TOP_COL_FAULTS,		/* all faults/s */
	TOP_COL_ANON,
	TOP_COL_FILE,
	TOP_COL_SHMEM,
	TOP_COL_SWAP,
	TOP_COL_MAJOR,
	TOP_COL_SYSCALLS,	/* all syscalls/s */
	TOP_COL_MMAP,
	TOP_COL_MUNMAP,
	TOP_COL_BRK,
	TOP_COL_MPROTECT,
	TOP_COL_MADVISE,
	TOP_COL_OTHER,		/* other memory syscalls/s */
	TOP_COL_RSS,		/* bytes, not a rate */
	TOP_COL_TREND,		/* RSS bytes/s */
	TOP_COL__COUNT
};

struct top_proc {
	pid_t pid;
	char comm[16];
	unsigned long long cnt[TOP_COL_RSS];	/* this interval */
	double rate[TOP_COL__COUNT];		/* last interval; RSS, trend */
	unsigned long long rss;		/* bytes, latest known */
	unsigned long long rss_prev;	/* at the previous tick */
	bool rss_known, rss_prev_known;
	bool gone;			/* EXIT seen: shown once more */
};

struct top_model {
	struct top_proc *procs;
	size_t nr, cap;
	unsigned long long events;	/* records this interval */
	unsigned long long lost;	/* events lost this interval */
	unsigned long long lost_total;
	double events_rate, lost_rate;
	enum top_col sort;
};

void top_model_init(struct top_model *m);
void top_model_free(struct top_model *m);
/* The process, added (comm empty) if new; NULL only without memory. */
struct top_proc *top_model_get(struct top_model *m, pid_t pid);
struct top_proc *top_model_find(struct top_model *m, pid_t pid);
void top_model_remove(struct top_model *m, pid_t pid);
/* Count one record. RSS records set rss; EXIT|GROUP marks gone. */
void top_model_add_rec(struct top_model *m, const struct memmon_rec_header *rec);
/*
 * End of an interval of elapsed_ns: counts become rates, the RSS trend
 * is the change since the previous tick per second, counts restart.
 * Processes marked gone at the previous tick are dropped first, so that
 * an exit stays visible for one interval.
 */
void top_model_tick(struct top_model *m, unsigned long long elapsed_ns);
/* Sort by m->sort, highest first; ties by PID ascending. */
void top_model_sort(struct top_model *m);
/* Column names, as in the header line, e.g. "FLT/s". */
const char *top_col_name(enum top_col c);
/* A column's value of p as text (width chars at most), e.g. "1.2k". */
void top_col_format(const struct top_proc *p, enum top_col c, char *buf,
		    size_t len);
/* The header and one line per process, as --batch prints them. */
int top_model_print(const struct top_model *m, FILE *f, double now_s,
		    bool paused);
/* One process line, without newline, into buf. */
void top_format_line(const struct top_proc *p, char *buf, size_t len);
void top_format_header(const struct top_model *m, char *buf, size_t len);
void top_format_columns(const struct top_model *m, char *buf, size_t len);

#endif /* MEMMON_TOOLS_TOP_MODEL_H */
