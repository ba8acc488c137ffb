// SPDX-License-Identifier: GPL-2.0
/*
 * rec_filter: the record filters of `memmon script`, `export`, `trace`
 * and `report`
 * (see rec_filter.h), their option parsers, and --time as a seek.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "builtin.h"
#include "rec_filter.h"
#include "rec_pipe.h"

void rec_filter_init(struct rec_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->ev_mask = (1ULL << MEMMON_EV__COUNT) - 1;
	f->ev_sys = (1ULL << MEMMON_SYS__COUNT) - 1;
	f->end_ns = UINT64_MAX;
}

void rec_filter_free(struct rec_filter *f)
{
	free(f->pids);
	free(f->tids);
	free(f->from.mark);
	free(f->to.mark);
	f->pids = NULL;
	f->tids = NULL;
	f->from.mark = NULL;
	f->to.mark = NULL;
}

int rec_filter_parse_ids(const char *cmd, const char *arg, pid_t **ids, int *nr)
{
	const char *p = arg;
	unsigned long v;
	pid_t *n;
	char *end;

	do {
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || (*end && *end != ',') || !v ||
		    v > INT32_MAX || *p == '-' || *p == '+' || *p == ' ')
			return tool_usage_err(cmd, "bad id list '%s': numbers "
					      "separated by commas", arg);
		n = realloc(*ids, (size_t)(*nr + 1) * sizeof(*n));
		if (!n)
			return tool_err(cmd, "out of memory");
		*ids = n;
		(*ids)[(*nr)++] = (pid_t)v;
		p = end + 1;
	} while (*end);
	return 0;
}

/*
 * Seconds as decimal text to ns, exactly (no binary fraction): "1.5" is
 * 1500000000. -EINVAL unless the whole text is [0-9]+(.[0-9]*)? or .[0-9]+.
 */
static int parse_seconds(const char *s, __u64 *ns)
{
	__u64 sec = 0, frac = 0, scale = 1000000000ULL;
	bool digits = false;

	for (; *s >= '0' && *s <= '9'; s++, digits = true) {
		if (sec > (UINT64_MAX / 1000000000ULL - 9) / 10)
			return -ERANGE;
		sec = sec * 10 + (__u64)(*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits = true) {
			/* digits past the nanosecond are dropped, not rounded */
			if (scale > 1) {
				scale /= 10;
				frac += (__u64)(*s - '0') * scale;
			}
		}
	}
	if (*s || !digits)
		return -EINVAL;
	*ns = sec * 1000000000ULL + frac;
	return 0;
}

static int parse_bound(const char *cmd, struct rec_filter_bound *b,
		       const char *s, size_t len)
{
	char *t = strndup(s, len);

	if (!t)
		return tool_err(cmd, "out of memory");
	if (!*t) {
		b->open = true;
		free(t);
		return 0;
	}
	/* A number is seconds; anything else names a marker. */
	if (!parse_seconds(t, &b->rel_ns)) {
		free(t);
		return 0;
	}
	if (strspn(t, "0123456789.") == strlen(t)) {
		free(t);
		return tool_usage_err(cmd, "bad time '%.*s': seconds, e.g. 1.5",
				      (int)len, s);
	}
	b->mark = t;
	return 0;
}

int rec_filter_parse_time(const char *cmd, struct rec_filter *f, const char *arg)
{
	const char *comma = strchr(arg, ',');
	int ret;

	if (!comma)
		return tool_usage_err(cmd, "bad --time '%s': START,END (seconds "
				      "from the start, or marker texts; either "
				      "may be empty)", arg);
	free(f->from.mark);
	free(f->to.mark);
	memset(&f->from, 0, sizeof(f->from));
	memset(&f->to, 0, sizeof(f->to));
	ret = parse_bound(cmd, &f->from, arg, (size_t)(comma - arg));
	if (!ret)
		ret = parse_bound(cmd, &f->to, comma + 1, strlen(comma + 1));
	if (ret)
		return ret;
	if (!f->from.mark && !f->to.mark && !f->from.open && !f->to.open &&
	    f->from.rel_ns > f->to.rel_ns)
		return tool_usage_err(cmd, "bad --time '%s': it ends before it "
				      "starts", arg);
	f->has_time = true;
	return 0;
}

int rec_filter_parse_duration(const char *cmd, const char *arg, __u64 *ns)
{
	static const struct {
		const char *unit;
		__u64 div;	/* ns = seconds-text * 1e9 / div */
	} units[] = {
		{ "ns", 1000000000ULL }, { "us", 1000000 }, { "ms", 1000 },
		{ "s", 1 }, { "", 1 },
	};
	size_t len = strlen(arg), i, ul;
	char *num;
	__u64 v;
	int err;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		ul = strlen(units[i].unit);
		if (len > ul && !strcmp(arg + len - ul, units[i].unit))
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]))
		return tool_usage_err(cmd, "bad duration '%s': e.g. 250us, 1.5ms, 2s",
				      arg);
	num = strndup(arg, len - ul);
	if (!num)
		return tool_err(cmd, "out of memory");
	/* the number as if seconds, then scaled: exact for whole ns */
	err = parse_seconds(num, &v);
	free(num);
	if (err)
		return tool_usage_err(cmd, "bad duration '%s': e.g. 250us, 1.5ms, 2s",
				      arg);
	*ns = v / units[i].div;
	return 0;
}

int rec_filter_parse_events(const char *cmd, struct rec_filter *f, const char *arg)
{
	return tool_parse_events(cmd, arg, &f->ev_mask, &f->ev_sys);
}

int rec_filter_parse_faults(const char *cmd, struct rec_filter *f, const char *arg)
{
	static const struct {
		const char *name;
		__u32 kind, cls;
	} words[] = {
		{ "major", REC_FILTER_FAULT_MAJOR, 0 },
		{ "minor", REC_FILTER_FAULT_MINOR, 0 },
		{ "none", 0, 1U << MEMMON_FCLASS_NONE },
		{ "anon", 0, 1U << MEMMON_FCLASS_ANON },
		{ "swap", 0, 1U << MEMMON_FCLASS_SWAP },
		{ "file", 0, 1U << MEMMON_FCLASS_FILE },
		{ "shmem", 0, 1U << MEMMON_FCLASS_SHMEM },
		{ "other", 0, 1U << MEMMON_FCLASS_OTHER },
	};
	__u32 kinds = 0, classes = 0;
	const char *p = arg;
	size_t len, i;

	do {
		len = strcspn(p, ",");
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (len == strlen(words[i].name) &&
			    !strncmp(p, words[i].name, len))
				break;
		if (i == sizeof(words) / sizeof(words[0]))
			return tool_usage_err(cmd, "bad --faults '%s': a comma "
					      "list of major, minor, anon, file, "
					      "shmem, swap, none, other", arg);
		kinds |= words[i].kind;
		classes |= words[i].cls;
		p += len + 1;
	} while (p[-1]);
	f->fault_kinds = kinds;
	f->fault_classes = classes;
	return 0;
}

const char rec_filter_help[] =
"  -p, --pid PIDS        records of these processes only (comma-separated)\n"
"      --tid TIDS        records of these threads only\n"
"      --time START,END  records in this window: seconds from the start of\n"
"                        the recording (1.5) or the text of a marker (memmon\n"
"                        mark); either may be empty\n"
"  -e, --events LIST     what to keep (default: all); e.g. faults,mmap,munmap\n"
"      --failed          failed syscalls and faults only\n"
"      --min-duration D  syscalls and faults that took at least D (250us, 2ms)\n"
"      --faults LIST     faults of these kinds and classes only: major, minor,\n"
"                        anon, file, shmem, swap, none, other (other records\n"
"                        pass; add -e faults for faults alone)\n"
"LOST records are always kept (with --time: those of losses that began\n"
"before the window ended, written after it began).\n";

int rec_filter_option(const char *cmd, struct rec_filter *f, int opt,
		      const char *arg)
{
	switch (opt) {
	case 'p':
		return rec_filter_parse_ids(cmd, arg, &f->pids, &f->nr_pids);
	case REC_FILTER_OPT_TID:
		return rec_filter_parse_ids(cmd, arg, &f->tids, &f->nr_tids);
	case REC_FILTER_OPT_TIME:
		return rec_filter_parse_time(cmd, f, arg);
	case 'e':
		return rec_filter_parse_events(cmd, f, arg);
	case REC_FILTER_OPT_FAILED:
		f->failed = true;
		return 0;
	case REC_FILTER_OPT_MIN_DUR:
		return rec_filter_parse_duration(cmd, arg, &f->min_dur_ns);
	case REC_FILTER_OPT_FAULTS:
		return rec_filter_parse_faults(cmd, f, arg);
	default:
		return -1;
	}
}

/* The marker search: the first MARK of each text, from (for `to`). */
struct mark_find {
	const struct rec_filter *f;
	__u64 start_ns;		/* a numeric or open START */
	bool from_found, to_found;
	__u64 from_ns, to_ns;
};

static bool mark_is(const struct memmon_rec_header *rec, const char *text)
{
	const struct memmon_rec_mark *m = memmon_rec__mark(rec);
	size_t len;

	if (!m)
		return false;
	len = strnlen((const char *)m->data, m->len);
	return len == strlen(text) && !memcmp(m->data, text, len);
}

static int mark_find_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct mark_find *mf = ctx;
	const struct rec_filter *f = mf->f;

	if (rec->type != MEMMON_REC_MARK)
		return 0;
	if (f->from.mark && !mf->from_found && mark_is(rec, f->from.mark)) {
		mf->from_found = true;
		mf->from_ns = rec->time_ns;
	}
	/* END names the first such marker at or after START. */
	if (f->to.mark && !mf->to_found &&
	    (f->from.mark ? mf->from_found : rec->time_ns >= mf->start_ns) &&
	    mark_is(rec, f->to.mark)) {
		mf->to_found = true;
		mf->to_ns = rec->time_ns;
	}
	return (!f->from.mark || mf->from_found) &&
	       (!f->to.mark || mf->to_found);
}

static __u64 trace_base(struct memmon_trace_reader *r)
{
	json_t *meta = json_loads(memmon_trace_reader__meta(r), 0, NULL);
	json_t *s = meta ? json_object_get(meta, "start_ns") : NULL;
	__u64 base = memmon_trace_reader__info(r)->first_ns;

	if (json_is_integer(s) && json_integer_value(s) > 0)
		base = (__u64)json_integer_value(s);
	json_decref(meta);
	return base;
}

/*
 * Whether any CPU may have lost events: then a LOST record after the
 * window's end can still be about it, and the tail is read.
 */
static bool may_have_lost(struct memmon_trace_reader *r)
{
	json_t *meta = json_loads(memmon_trace_reader__meta(r), 0, NULL);
	json_t *l = meta ? json_object_get(meta, "lost_records_per_cpu") : NULL;
	bool lost = !json_is_array(l);
	size_t i;
	json_t *v;

	json_array_foreach(l, i, v)
		if (!json_is_integer(v) || json_integer_value(v))
			lost = true;
	json_decref(meta);
	return lost;
}

static __u64 add_sat(__u64 a, __u64 b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int rec_filter_resolve(const char *cmd, struct rec_filter *f,
		       struct memmon_trace_reader *r, const char *path)
{
	struct mark_find mf = { .f = f };
	__u64 base;
	long n;

	if (!f->has_time)
		return 0;
	base = trace_base(r);
	mf.start_ns = f->from.open ? 0 : add_sat(base, f->from.rel_ns);
	if (f->from.mark || f->to.mark) {
		n = rec_pipe_for_each(r, mark_find_cb, &mf, 0);
		if (n < 0) {
			const char *msg = memmon_trace_reader__errmsg(r);

			return tool_err(cmd, "%s: %s", path,
					*msg ? msg : strerror((int)-n));
		}
		if (f->from.mark && !mf.from_found)
			return tool_err(cmd, "%s: no marker '%s' in the trace",
					path, f->from.mark);
		if (f->to.mark && !mf.to_found)
			return tool_err(cmd, "%s: no marker '%s' in the trace "
					"at or after the window's start", path,
					f->to.mark);
	}
	f->start_ns = f->from.mark ? mf.from_ns : mf.start_ns;
	f->end_ns = f->to.open ? UINT64_MAX : f->to.mark ? mf.to_ns :
		    add_sat(base, f->to.rel_ns);
	if (f->start_ns > f->end_ns)
		return tool_err(cmd, "the --time window ends before it starts");
	if (memmon_trace_reader__set_window(r, f->start_ns, may_have_lost(r) ?
					    UINT64_MAX : f->end_ns))
		return tool_err(cmd, "setting the window: %s", strerror(errno));
	return 0;
}

static bool in_ids(const pid_t *ids, int nr, __u32 id)
{
	int i;

	for (i = 0; i < nr; i++)
		if ((__u32)ids[i] == id)
			return true;
	return false;
}

/* Which `-e` event a record belongs to; -1: none (never filtered by -e). */
static int rec_event(const struct memmon_rec_header *rec)
{
	switch (rec->type) {
	case MEMMON_REC_SYSCALL:
	case MEMMON_REC_PATH:
		return MEMMON_EV_SYSCALL;
	case MEMMON_REC_FAULT:
		return MEMMON_EV_FAULT;
	case MEMMON_REC_RSS:
		return MEMMON_EV_RSS;
	case MEMMON_REC_FORK:
	case MEMMON_REC_EXEC:
	case MEMMON_REC_COMM:
	case MEMMON_REC_EXIT:
		return MEMMON_EV_LIFECYCLE;
	case MEMMON_REC_MARK:
		return MEMMON_EV_MARK;
	default:
		return -1;
	}
}

bool rec_filter_match(const struct rec_filter *f,
		      const struct memmon_rec_header *rec)
{
	const struct memmon_rec_syscall *sc;
	const struct memmon_rec_fault *ft;
	int ev;

	if (rec->type == MEMMON_REC_LOST) {
		const struct memmon_rec_lost *l = memmon_rec__lost(rec);

		return rec->time_ns >= f->start_ns &&
		       (rec->time_ns <= f->end_ns ||
			(l && l->first_ns <= f->end_ns));
	}
	if (rec->time_ns < f->start_ns || rec->time_ns > f->end_ns)
		return false;
	if (f->nr_pids && !in_ids(f->pids, f->nr_pids, rec->tgid))
		return false;
	if (f->nr_tids && !in_ids(f->tids, f->nr_tids, rec->tid))
		return false;
	ev = rec_event(rec);
	if (ev >= 0 && !(f->ev_mask & (1ULL << ev)))
		return false;
	sc = memmon_rec__syscall(rec);
	if (sc && sc->sys < 64 && !(f->ev_sys & (1ULL << sc->sys)))
		return false;
	ft = memmon_rec__fault(rec);
	if (ft && f->fault_kinds &&
	    !(f->fault_kinds & (ft->flags & MEMMON_FAULTF_MAJOR ?
				REC_FILTER_FAULT_MAJOR : REC_FILTER_FAULT_MINOR)))
		return false;
	if (ft && f->fault_classes &&
	    (ft->fclass >= 32 || !(f->fault_classes & (1U << ft->fclass))))
		return false;
	if (f->failed) {
		if (sc)
			return sc->ret < 0 && sc->ret >= -4095 &&
			       sc->duration_ns >= f->min_dur_ns;
		if (ft)
			return ft->result != MEMMON_FRES_HANDLED &&
			       ft->result != MEMMON_FRES_RETRY &&
			       ft->duration_ns >= f->min_dur_ns;
		return false;
	}
	if (f->min_dur_ns)
		return (sc && sc->duration_ns >= f->min_dur_ns) ||
		       (ft && ft->duration_ns >= f->min_dur_ns);
	return true;
}

void rec_filter_meta_paths(struct memmon_trace_reader *r, struct memmon_paths *p)
{
	json_t *meta = json_loads(memmon_trace_reader__meta(r), 0, NULL);
	json_t *arr = meta ? json_object_get(meta, "paths") : NULL, *e;
	size_t i;

	json_array_foreach(arr, i, e) {
		json_t *dev = json_object_get(e, "dev");
		json_t *ino = json_object_get(e, "ino");
		json_t *path = json_object_get(e, "path");

		if (json_is_integer(dev) && json_is_integer(ino) && json_is_string(path))
			memmon_paths__add(p, (__u64)json_integer_value(dev),
					  (__u64)json_integer_value(ino),
					  json_string_value(path));
	}
	json_decref(meta);
}

int rec_filter_open(const char *cmd, const char *what, struct rec_filter *f,
		    const char *path, struct memmon_trace_reader **r,
		    struct memmon_paths **paths)
{
	char err[600];
	LIBMEMMON_OPTS(memmon_trace_reader_opts, ro, .errbuf = err,
		       .errbuf_size = sizeof(err));
	const struct memmon_trace_info *in;
	int ret;

	*paths = NULL;
	*r = memmon_trace_reader__open(path, &ro);
	if (!*r)
		return tool_err(cmd, "%s", err);
	in = memmon_trace_reader__info(*r);
	if (in->truncated)
		fprintf(stderr, "memmon %s: %s: truncated at offset %llu (the "
			"recording did not finish); %s what is there\n",
			cmd, path, (unsigned long long)in->truncated_at, what);
	ret = rec_filter_resolve(cmd, f, *r, path);
	if (!ret) {
		*paths = memmon_paths__new();
		if (*paths) {
			/* What a window skipped: the file lists its paths at the end. */
			rec_filter_meta_paths(*r, *paths);
			return 0;
		}
		ret = tool_err(cmd, "out of memory");
	}
	memmon_trace_reader__close(*r);
	*r = NULL;
	return ret;
}
