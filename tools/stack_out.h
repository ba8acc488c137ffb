/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call stacks in trace and script output: the -g/--call-graph,
 * --fault-stacks and --no-symbols options, the session's stack settings,
 * and a record's stack printed under it (text) or inside it (JSON).
 */
#ifndef MEMMON_TOOLS_STACK_OUT_H
#define MEMMON_TOOLS_STACK_OUT_H

#include <stdbool.h>
#include <stdio.h>
#include <memmon/decode.h>
#include "symbolize.h"

#define STACK_DEPTH_DEFAULT	8

struct memmon_session;

struct stack_opts {
	bool call_graph;	/* -g: ask the kernel for the frame-pointer walk */
	unsigned int depth;	/* frames beyond ip[0..1] */
	bool fault_stacks;	/* MEMMON_STACK_FAULTS */
	bool raw;		/* --no-symbols */
};

/* -g/--call-graph's value: NULL, "DEPTH", "fp" or "fp,DEPTH". */
int stack_parse_call_graph(const char *cmd, const char *arg, struct stack_opts *o);

/* Applies o to the session (before it starts); a tool error on failure. */
int stack_session_setup(const char *cmd, struct memmon_session *s,
			const struct stack_opts *o);

/* Under a text record: its stack, one line per frame; 0 or -1 (errno). */
int stack_fprint_text(FILE *out, struct symbolizer *sym,
		      const struct memmon_rec_header *rec, bool raw);

/*
 * rec as a JSON line (memmon_rec__fprint_json()) with a "stack" array
 * when it carries one; returns what that returns.
 */
int stack_fprint_json(FILE *out, struct symbolizer *sym,
		      const struct memmon_rec_header *rec,
		      const struct memmon_format_opts *fo, bool raw);

/*
 * What a recording's metadata says for symbols (memmon record): the
 * build-id of each file its records named ("build_ids") and each -p
 * process's maps when watching began ("maps"). Bad entries are skipped.
 */
void stack_load_meta(struct symbolizer *sym, const char *meta_text);

#endif /* MEMMON_TOOLS_STACK_OUT_H */
