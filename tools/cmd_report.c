// SPDX-License-Identifier: GPL-2.0
/*
 * memmon report FILE: per process, what it did to its address space.
 *
 * This file owns the options and the order of things: open the trace
 * (with rec_filter's --pid, --tid, --time), feed every record to the
 * model (report_model.h) on rec_pipe's reader thread, sort, then hand
 * the model to the text or the JSON view.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <memmon/trace.h>
#include "builtin.h"
#include "rec_pipe.h"
#include "rec_filter.h"
#include "report_model.h"
#include "stack_out.h"

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, REC_FILTER_OPT_TID },
		{ "time", required_argument, NULL, REC_FILTER_OPT_TIME },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'J' },
		{ "call-site", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "report";
	struct memmon_trace_reader *r = NULL;
	const struct memmon_trace_info *in;
	struct report rp = { 0 };
	bool json = false;
	unsigned int c, sort_key = 0;
	size_t shown;
	unsigned long top = 0;
	char *end;
	long n;
	int opt, ret = 1;

	rec_filter_init(&rp.f);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "p:s:n:h", longopts, NULL)) != -1) {
		ret = opt == 'p' || opt == REC_FILTER_OPT_TID || opt == REC_FILTER_OPT_TIME ?
		      rec_filter_option(cmd, &rp.f, opt, optarg) : -1;
		if (ret >= 0) {
			if (ret)
				goto out_filter;
			continue;
		}
		ret = 1;
		switch (opt) {
		case 'J':
			json = true;
			break;
		case 'S':
			if (strcmp(optarg, "full") && strcmp(optarg, "first")) {
				ret = tool_usage_err(cmd, "bad --call-site '%s': first "
						     "or full", optarg);
				goto out_filter;
			}
			rp.sites.full = !strcmp(optarg, "full");
			break;
		case 's':
			for (c = 0; c < report_nr_sort_keys; c++)
				if (!strcmp(optarg, report_sort_keys[c]))
					break;
			if (c == report_nr_sort_keys) {
				ret = tool_usage_err(cmd, "bad --sort '%s': pid, faults, "
						     "major, syscalls, time, mapped, "
						     "leaked or rss", optarg);
				goto out_filter;
			}
			sort_key = c;
			break;
		case 'n':
			errno = 0;
			top = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-' || !top) {
				ret = tool_usage_err(cmd, "bad --top '%s': a number "
						     "of processes, 1 or more", optarg);
				goto out_filter;
			}
			break;
		case 'h':
			printf("usage: memmon report [--json] [-p PIDS] [--tid TIDS] "
			       "[--time START,END]\n"
			       "                     [-s|--sort KEY] [-n|--top N] FILE\n\n"
			       "Per process: calls with their latency (count, errors, "
			       "total, p50, p99, max),\nbytes, peak size, faults, fault "
			       "latency, hottest regions, leak candidates\n(anonymous "
			       "and heap memory never released) apart from the file\n"
			       "mappings still mapped, RSS and anonymous growth, lost "
			       "events.\n\n"
			       "  -p, --pid PIDS        these processes only (comma-separated)\n"
			       "      --tid TIDS        these threads' records only\n"
			       "      --time START,END  the records of this window only "
			       "(seconds from the\n"
			       "                        start, or marker texts; either "
			       "may be empty)\n"
			       "  -s, --sort KEY        pid (default), faults, major, "
			       "syscalls, time,\n"
			       "                        mapped, leaked, rss: most first\n"
			       "  -n, --top N           the first N processes only\n"
			       "      --json            JSON instead of text\n"
			       "      --call-site HOW   group leak candidates by the first "
			       "frame outside\n"
			       "                        libc and ld.so (first, default) or "
			       "the whole stack (full)\n");
			ret = tool_close_stdout(cmd);
			goto out_filter;
		default:
			ret = tool_usage_err(cmd, "unknown option '%s' (or one "
					     "missing its argument)", argv[optind - 1]);
			goto out_filter;
		}
	}
	if (optind != argc - 1) {
		ret = tool_usage_err(cmd, optind >= argc ? "missing FILE" :
				     "one FILE only");
		goto out_filter;
	}
	rp.path = argv[optind];
	ret = rec_filter_open(cmd, "reporting", &rp.f, rp.path, &r, &rp.paths);
	if (ret)
		goto out_filter;
	ret = 1;
	in = memmon_trace_reader__info(r);
	if (report_begin(&rp, in)) {
		tool_err(cmd, "out of memory");
		goto out;
	}
	stack_load_meta(rp.sites.sym, memmon_trace_reader__meta(r));
	/* Read and merged on a thread of its own, modelled on this one. */
	n = rec_pipe_for_each(r, report_add, &rp, 0);
	if (n < 0) {
		const char *msg = memmon_trace_reader__errmsg(r);

		tool_err(cmd, "%s: %s", rp.path, *msg ? msg : strerror((int)-n));
		goto out;
	}
	report_sort(&rp, sort_key);
	shown = top && top < rp.nr_procs ? top : rp.nr_procs;
	report_merge_kernel_lost(&rp, memmon_trace_reader__meta(r));
	if (json)
		report_print_json(&rp, in, memmon_trace_reader__meta(r), n, shown);
	else
		report_print_text(&rp, in, n, shown);
	ret = tool_close_stdout(cmd);
out:
	report_fini(&rp);
	memmon_trace_reader__close(r);
out_filter:
	rec_filter_free(&rp.f);
	return ret;
}

