/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `memmon trace` and `memmon script` add around the records they
 * print: timestamp styles (--ts abs|rel|delta|none, -r) and the strace
 * -c like summary (-c, -C) of the records shown: per syscall % time,
 * seconds, usecs/call, calls, errors; faults by class, minor and major.
 * Single-threaded: the formatter's.
 */
#ifndef MEMMON_TOOLS_TRACE_SUMMARY_H
#define MEMMON_TOOLS_TRACE_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>
#include <memmon/decode.h>

enum ts_mode {
	TS_ABS,		/* wall clock, as the library prints it */
	TS_REL,		/* seconds since the first record printed */
	TS_DELTA,	/* seconds since the previous record printed */
	TS_NONE,
};

struct ts_state {
	enum ts_mode mode;
	bool started;
	__u64 base_ns, prev_ns;
};

/* "abs", "rel", "delta", "none": 0, or an exit code after a message. */
int ts_parse(const char *cmd, const char *arg, enum ts_mode *mode);

/*
 * rec as memmon_rec__fprint() prints it, its timestamp in st's style.
 * 0 for an unknown type, a negative errno as memmon_rec__fprint().
 */
int ts_fprint(FILE *out, const struct memmon_rec_header *rec,
	      const struct memmon_format_opts *o, struct ts_state *st);

struct sys_summary {
	__u64 calls[MEMMON_SYS__COUNT], errors[MEMMON_SYS__COUNT];
	__u64 ns[MEMMON_SYS__COUNT];
	__u64 faults[MEMMON_FCLASS_OTHER + 2][2];	/* [class][major] */
};

void summary_add(struct sys_summary *s, const struct memmon_rec_header *rec);
/* The tables, strace -c's layout first. A negative errno on a write error. */
int summary_print(FILE *out, const struct sys_summary *s);

#endif
