// SPDX-License-Identifier: GPL-2.0
/*
 * memmon timeline TRACE -o run.html: the trace drawn as one self-contained
 * HTML page (lanes per process and thread, calls, fault heat, RSS,
 * markers, lost intervals). One streaming pass (timeline_agg), then the
 * page (timeline_out); the output file is written whole or not at all.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "builtin.h"
#include "rec_pipe.h"
#include "timeline_agg.h"
#include "timeline_out.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memmon timeline TRACE -o FILE.html [--title TEXT] "
		   "[--max-detail N]\n\n"
		   "Draws a trace as one self-contained HTML page: a lane per "
		   "process\n(expandable into threads), calls, fault heat, RSS, "
		   "markers, lost events.\n\n"
		   "  -o, --output FILE     the page to write (required)\n"
		   "  -t, --title TEXT      its title (default: the trace's name)\n"
		   "      --max-detail N    calls drawn one by one, a uniform "
		   "sample (default %d,\n"
		   "                        at most %d; the rest as per-bucket "
		   "counts), and up to\n"
		   "                        min(N, %d) more: every call of "
		   "some short windows\n", TL_DETAIL_DEFAULT, TL_DETAIL_MAX, TL_EXACT_CALLS);
}

/* The kernel's lost counts (meta "cpu_stats"), as memmon report reads them. */
static __u64 *kernel_lost(const char *meta_text, unsigned int nr_cpus)
{
	json_t *meta = json_loads(meta_text, 0, NULL);
	json_t *st = json_object_get(meta, "cpu_stats");
	__u64 *v = calloc(nr_cpus ? nr_cpus : 1, sizeof(*v));
	unsigned int c;

	for (c = 0; v && c < nr_cpus && c < json_array_size(st); c++) {
		json_t *l = json_object_get(json_array_get(st, c), "lost");

		v[c] = json_is_integer(l) ? (__u64)json_integer_value(l) : 0;
	}
	json_decref(meta);
	return v;
}

int cmd_timeline(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "max-detail", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "timeline";
	char err[600], *tmp = NULL, *end;
	LIBMEMMON_OPTS(memmon_trace_reader_opts, ro, .errbuf = err,
		       .errbuf_size = sizeof(err));
	struct memmon_trace_reader *r = NULL;
	const struct memmon_trace_info *in;
	struct tl_out_opts oo = { 0 };
	struct tl_agg agg;
	const char *out = NULL, *title = NULL, *path;
	unsigned long max_detail = TL_DETAIL_DEFAULT;
	__u64 *klost = NULL;
	FILE *f = NULL;
	long n;
	int opt, ret = 1, e;

	memset(&agg, 0, sizeof(agg));
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "ho:t:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 't':
			title = optarg;
			break;
		case 'D':
			errno = 0;
			max_detail = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    max_detail > TL_DETAIL_MAX)
				return tool_usage_err(cmd, "bad --max-detail '%s': a count "
						      "from 0 to %d", optarg, TL_DETAIL_MAX);
			break;
		case 'h':
			usage(stdout);
			return tool_close_stdout(cmd);
		default:
			return tool_usage_err(cmd, "unknown or incomplete option '%s'",
					      argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return tool_usage_err(cmd, "missing TRACE");
	if (optind != argc - 1)
		return tool_usage_err(cmd, "one TRACE only");
	if (!out)
		return tool_usage_err(cmd, "missing -o FILE.html");
	path = argv[optind];

	r = memmon_trace_reader__open(path, &ro);
	if (!r)
		return tool_err(cmd, "%s", err);
	in = memmon_trace_reader__info(r);
	if (tl_agg_init(&agg, in->nr_cpus, max_detail)) {
		tool_err(cmd, "out of memory");
		goto out;
	}
	if (in->truncated)
		fprintf(stderr, "memmon timeline: %s: truncated at offset %llu (the "
			"recording did not finish); drawing what is there\n",
			path, (unsigned long long)in->truncated_at);
	n = rec_pipe_for_each(r, tl_agg_record, &agg, 0);
	if (n < 0) {
		const char *msg = memmon_trace_reader__errmsg(r);

		tool_err(cmd, "%s: %s", path, *msg ? msg : strerror((int)-n));
		goto out;
	}
	tl_agg_finish(&agg);
	klost = kernel_lost(memmon_trace_reader__meta(r), in->nr_cpus);

	oo.title = title ? title : path;
	oo.file = path;
	oo.rt_off = in->realtime_offset_ns;
	oo.truncated = in->truncated;
	oo.kernel_lost = klost;

	/* Into FILE.XXXXXX, renamed over FILE when whole. */
	if (asprintf(&tmp, "%s.XXXXXX", out) < 0) {
		tmp = NULL;
		tool_err(cmd, "out of memory");
		goto out;
	}
	e = mkstemp(tmp);
	f = e >= 0 ? fdopen(e, "w") : NULL;
	if (!f) {
		tool_err(cmd, "%s: %s", out, strerror(errno));
		if (e >= 0) {
			close(e);
			unlink(tmp);
		}
		goto out;
	}
	e = tl_write_html(f, &agg, &oo);
	if (fclose(f) && !e)
		e = errno ? -errno : -EIO;
	f = NULL;
	if (!e && chmod(tmp, 0644))
		e = -errno;
	if (!e && rename(tmp, out))
		e = -errno;
	if (e) {
		unlink(tmp);
		tool_err(cmd, "%s: %s", out, strerror(-e));
		goto out;
	}
	fprintf(stderr, "memmon timeline: %s: %ld records, %zu processes, "
		"%zu of %llu calls sampled, %zu in %zu exact windows -> %s\n", path,
		n, agg.nr_procs, agg.nr_detail, (unsigned long long)agg.calls_total,
		agg.nr_exact, agg.nr_win, out);
	ret = 0;
out:
	free(tmp);
	free(klost);
	tl_agg_fini(&agg);
	memmon_trace_reader__close(r);
	return ret;
}
