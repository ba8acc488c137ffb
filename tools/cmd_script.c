// SPDX-License-Identifier: GPL-2.0
/*
 * memmon script FILE: a recording's records printed back as `memmon
 * trace` prints them live (same decoder, same options), filtered by
 * rec_filter; a --time window is a seek by the file's index.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <memmon/trace.h>
#include "builtin.h"
#include "rec_filter.h"
#include "rec_pipe.h"
#include "stack_out.h"
#include "trace_summary.h"

struct script_ctx {
	FILE *out;
	bool json;
	struct memmon_format_opts fopts;
	struct memmon_paths *paths;
	struct symbolizer *sym;	/* every record feeds it, kept or not */
	bool raw;		/* --no-symbols */
	const struct rec_filter *f;
	struct ts_state ts;
	bool records, summary;	/* -c: the summary alone; -C: both */
	struct sys_summary sum;
	int werr;		/* the stream's errno of a failed write */
	struct memmon_rec_header bad;	/* a record the decoder refused */
};

static const char script_usage[] =
"usage: memmon script [--json] [-o FILE] [FILTERS] TRACE\n"
"\n"
"Print the records of a trace file (memmon record) as memmon trace\n"
"prints them: text, or JSON lines with --json.\n"
"\n"
"      --json            one JSON object per record (JSON lines)\n"
"  -r                    seconds since the previous record, as strace -r\n"
"      --ts STYLE        timestamps: abs (default), rel (since the first\n"
"                        record printed), delta, none\n"
"  -c, --summary-only    only the summary, as strace -c (see memmon trace -c)\n"
"  -C, --summary         the records and the summary\n"
"  -o, --output FILE     write there instead of standard output\n"
"      --no-symbols      call stacks as raw addresses\n";

/*
 * Every record feeds the path table before the filter: an mmap kept by
 * the filter decodes its fd<path> from a PATH record that was not.
 */
static int script_rec(struct script_ctx *c, const struct memmon_rec_header *rec);

/*
 * Every record feeds the symboliser, after it is printed: a stack is
 * that of the call, in the address space before the call's own change.
 * A full model only bounds what it learns: no error stops the script.
 */
static int script_cb(void *vctx, const struct memmon_rec_header *rec)
{
	struct script_ctx *c = vctx;
	int ret = script_rec(c, rec);

	sym_feed(c->sym, rec, c->paths);
	return ret;
}

static int script_rec(struct script_ctx *c, const struct memmon_rec_header *rec)
{
	int ret;

	memmon_paths__add_rec(c->paths, rec);
	if (!rec_filter_match(c->f, rec))
		return 0;
	/* PATH records feed the fd<path> decoding; text shows them there. */
	if (rec->type == MEMMON_REC_PATH && !c->json)
		return 0;
	if (c->summary)
		summary_add(&c->sum, rec);
	if (!c->records)
		return 0;
	if (c->json) {
		ret = stack_fprint_json(c->out, c->sym, rec, &c->fopts, c->raw);
	} else {
		ret = ts_fprint(c->out, rec, &c->fopts, &c->ts);
		if (ret >= 0 && stack_fprint_text(c->out, c->sym, rec, c->raw))
			ret = -EIO;
	}
	if (ret == -EBADMSG && !ferror(c->out)) {
		/* a known type, too short for its fields (CRC-valid: written so) */
		c->bad = *rec;
		return -EBADMSG;
	}
	if (ret < 0) {
		c->werr = errno ? errno : EIO;
		return -EIO;
	}
	return 0;
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, REC_FILTER_OPT_TID },
		{ "time", required_argument, NULL, REC_FILTER_OPT_TIME },
		{ "events", required_argument, NULL, 'e' },
		{ "failed", no_argument, NULL, REC_FILTER_OPT_FAILED },
		{ "min-duration", required_argument, NULL, REC_FILTER_OPT_MIN_DUR },
		{ "faults", required_argument, NULL, REC_FILTER_OPT_FAULTS },
		{ "json", no_argument, NULL, 'J' },
		{ "ts", required_argument, NULL, 'T' },
		{ "summary-only", no_argument, NULL, 'c' },
		{ "summary", no_argument, NULL, 'C' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-symbols", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "script", *output = NULL, *path;
	struct memmon_trace_reader *r = NULL;
	const struct memmon_trace_info *in;
	struct script_ctx c = { 0 };
	struct rec_filter f;
	int opt, ret;
	long n;

	rec_filter_init(&f);
	c.records = true;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, REC_FILTER_SHORTOPTS "o:rcCh",
				  longopts, NULL)) != -1) {
		ret = rec_filter_option(cmd, &f, opt, optarg);
		if (ret >= 0) {
			if (ret)
				goto out_free;
			continue;
		}
		switch (opt) {
		case 'J':
			c.json = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'N':
			c.raw = true;
			break;
		case 'r':
			c.ts.mode = TS_DELTA;
			break;
		case 'T':
			ret = ts_parse(cmd, optarg, &c.ts.mode);
			if (ret)
				goto out_free;
			break;
		case 'c':
			c.summary = true;
			c.records = false;
			break;
		case 'C':
			c.summary = true;
			c.records = true;
			break;
		case 'h':
			fputs(script_usage, stdout);
			fputs(rec_filter_help, stdout);
			ret = tool_close_stdout(cmd);
			goto out_free;
		default:
			ret = tool_usage_err(cmd, "unknown or incomplete option '%s'",
					     argv[optind - 1]);
			goto out_free;
		}
	}
	if (c.summary && c.json) {
		ret = tool_usage_err(cmd, "-c/-C print a text summary: not with --json");
		goto out_free;
	}
	if (optind != argc - 1) {
		ret = tool_usage_err(cmd, optind >= argc ? "missing TRACE" :
				     "one TRACE only");
		goto out_free;
	}
	path = argv[optind];
	ret = rec_filter_open(cmd, "printing", &f, path, &r, &c.paths);
	if (ret)
		goto out_free;
	in = memmon_trace_reader__info(r);
	ret = 1;
	c.f = &f;
	c.fopts.sz = sizeof(c.fopts);
	c.fopts.realtime_offset_ns = in->realtime_offset_ns;
	c.fopts.paths = c.paths;
	c.sym = sym_new();
	if (!c.sym) {
		tool_err(cmd, "out of memory");
		goto out_close;
	}
	stack_load_meta(c.sym, memmon_trace_reader__meta(r));
	c.out = stdout;
	if (output) {
		c.out = fopen(output, "w");
		if (!c.out) {
			tool_err(cmd, "%s: %s", output, strerror(errno));
			goto out_close;
		}
	}
	if (!isatty(fileno(c.out)))
		setvbuf(c.out, NULL, _IOFBF, 1 << 20);
	n = rec_pipe_for_each(r, script_cb, &c, 0);
	if (n == -EIO && c.werr) {
		tool_err(cmd, "write error: %s", strerror(c.werr));
	} else if (n == -EBADMSG && c.bad.size) {
		tool_err(cmd, "%s: a malformed record: type %u (%s) of %u bytes at "
			 "time_ns %llu, cpu %u", path, c.bad.type,
			 memmon_rec_type__name(c.bad.type) ?: "?", c.bad.size,
			 (unsigned long long)c.bad.time_ns, c.bad.cpu);
	} else if (n < 0) {
		const char *msg = memmon_trace_reader__errmsg(r);

		tool_err(cmd, "%s: %s", path, *msg ? msg : strerror((int)-n));
	} else if (c.summary && summary_print(c.out, &c.sum) < 0) {
		tool_err(cmd, "write error: %s", strerror(errno ? errno : EIO));
	} else {
		ret = 0;
	}
	if (c.out != stdout) {
		if (ferror(c.out) | fclose(c.out))
			ret = tool_err(cmd, "%s: write error", output);
	} else if (tool_close_stdout(cmd)) {
		ret = 1;
	}
out_close:
	sym_free(c.sym);
	memmon_paths__free(c.paths);
	memmon_trace_reader__close(r);
out_free:
	rec_filter_free(&f);
	return ret;
}
