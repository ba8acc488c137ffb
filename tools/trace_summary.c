// SPDX-License-Identifier: GPL-2.0
/*
 * Timestamp styles and the -c summary of trace and script (see
 * trace_summary.h).
 */
#include <errno.h>
#include <string.h>
#include "builtin.h"
#include "trace_summary.h"

int ts_parse(const char *cmd, const char *arg, enum ts_mode *mode)
{
	static const char *const names[] = { "abs", "rel", "delta", "none" };
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(arg, names[i])) {
			*mode = (enum ts_mode)i;
			return 0;
		}
	return tool_usage_err(cmd, "bad --ts '%s': abs, rel, delta or none", arg);
}

int ts_fprint(FILE *out, const struct memmon_rec_header *rec,
	      const struct memmon_format_opts *o, struct ts_state *st)
{
	struct memmon_format_opts no_time = *o;
	__u64 d;

	if (st->mode == TS_ABS)
		return memmon_rec__fprint(out, rec, o);
	no_time.flags |= MEMMON_FMT_NO_TIME;
	if (st->mode == TS_NONE)
		return memmon_rec__fprint(out, rec, &no_time);
	if (!memmon_rec_type__name(rec->type))
		return 0;
	if (!st->started) {
		st->started = true;
		st->base_ns = st->prev_ns = rec->time_ns;
	}
	d = rec->time_ns - (st->mode == TS_REL ? st->base_ns : st->prev_ns);
	if (rec->time_ns < (st->mode == TS_REL ? st->base_ns : st->prev_ns))
		d = 0;	/* a LOST record stamped before what it follows */
	else
		st->prev_ns = rec->time_ns;
	if (fprintf(out, "%6llu.%06llu ", (unsigned long long)(d / 1000000000ULL),
		    (unsigned long long)(d % 1000000000ULL / 1000)) < 0)
		return errno ? -errno : -EIO;
	return memmon_rec__fprint(out, rec, &no_time);
}

void summary_add(struct sys_summary *s, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);
	const struct memmon_rec_fault *f;

	if (sc) {
		if (sc->sys >= MEMMON_SYS__COUNT)
			return;
		s->calls[sc->sys]++;
		s->errors[sc->sys] += sc->ret < 0 && sc->ret >= -4095;
		s->ns[sc->sys] += sc->duration_ns;
		return;
	}
	f = memmon_rec__fault(rec);
	if (f)
		s->faults[f->fclass <= MEMMON_FCLASS_OTHER ? f->fclass :
			  MEMMON_FCLASS_OTHER + 1][!!(f->flags & MEMMON_FAULTF_MAJOR)]++;
}

static const char rule[] =
"------ ----------- ----------- --------- --------- ----------------\n";

int summary_print(FILE *out, const struct sys_summary *s)
{
	__u64 total = 0, calls = 0, errors = 0, minor = 0, major = 0;
	unsigned int i, c;

	for (i = 0; i < MEMMON_SYS__COUNT; i++) {
		total += s->ns[i];
		calls += s->calls[i];
		errors += s->errors[i];
	}
	fprintf(out, "%% time     seconds  usecs/call     calls    errors syscall\n%s",
		rule);
	for (i = 0; i < MEMMON_SYS__COUNT; i++) {
		if (!s->calls[i])
			continue;
		fprintf(out, "%6.2f %11.6f %11llu %9llu ",
			total ? 100.0 * (double)s->ns[i] / (double)total : 0.0,
			(double)s->ns[i] / 1e9,
			(unsigned long long)(s->ns[i] / 1000 / s->calls[i]),
			(unsigned long long)s->calls[i]);
		if (s->errors[i])
			fprintf(out, "%9llu", (unsigned long long)s->errors[i]);
		else
			fprintf(out, "%9s", "");
		fprintf(out, " %s\n", memmon_sys__name(i));
	}
	fprintf(out, "%s%6.2f %11.6f %11llu %9llu ", rule, 100.0, (double)total / 1e9,
		(unsigned long long)(calls ? total / 1000 / calls : 0),
		(unsigned long long)calls);
	if (errors)
		fprintf(out, "%9llu", (unsigned long long)errors);
	else
		fprintf(out, "%9s", "");
	fprintf(out, " total\n\n%-8s %10s %10s\n", "faults", "minor", "major");
	for (c = 0; c <= MEMMON_FCLASS_OTHER + 1; c++) {
		const char *cn = memmon_fault_class__name(c);

		minor += s->faults[c][0];
		major += s->faults[c][1];
		if (s->faults[c][0] || s->faults[c][1])
			fprintf(out, "%-8s %10llu %10llu\n", cn ? cn : "unknown",
				(unsigned long long)s->faults[c][0],
				(unsigned long long)s->faults[c][1]);
	}
	if (fprintf(out, "%-8s %10llu %10llu\n", "total", (unsigned long long)minor,
		    (unsigned long long)major) < 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
