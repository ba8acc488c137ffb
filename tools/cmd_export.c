// SPDX-License-Identifier: GPL-2.0
/*
 * memmon export --format chrome|csv FILE: a recording for other tools.
 * chrome: the Trace Event Format (Perfetto UI, chrome://tracing); csv: one
 * table per record kind. Both are written as the records stream by: what
 * is kept besides the output is the set of threads seen (for the Chrome
 * metadata), never anything per record.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <memmon/trace.h>
#include "builtin.h"
#include "rec_filter.h"
#include "rec_pipe.h"

enum {
	CSV_SYSCALLS,
	CSV_FAULTS,
	CSV_RSS,
	CSV_LIFECYCLE,
	CSV_MARKS,
	CSV_LOST,
	CSV__COUNT
};

static const struct {
	const char *file;
	const char *header;
} csv_tables[CSV__COUNT] = {
	[CSV_SYSCALLS] = { "syscalls.csv", "time_ns,cpu,tgid,tid,syscall,arg0,arg1,"
			   "arg2,arg3,arg4,arg5,ret,errno,duration_ns,compat,"
			   "file_dev,file_ino,path" },
	[CSV_FAULTS] = { "faults.csv", "time_ns,cpu,tgid,tid,addr,ip,access,class,"
			 "major,kernel,new_page,result,duration_ns,pfn" },
	[CSV_RSS] = { "rss.csv", "time_ns,cpu,tgid,tid,anon,file,shmem,swap" },
	[CSV_LIFECYCLE] = { "lifecycle.csv", "time_ns,cpu,tgid,tid,event,child_tgid,"
			    "child_tid,thread,path,exit_status,exit_code,group,"
			    "peak_rss,peak_vm,comm,comm_why" },
	[CSV_MARKS] = { "marks.csv", "time_ns,cpu,tgid,tid,text" },
	[CSV_LOST] = { "lost.csv", "time_ns,cpu,count,first_ns,last_ns" },
};

/*
 * The threads (tgid << 32 | tid) and processes (tid ~0) given their
 * Chrome metadata: open addressing, linear probing, at most half full.
 * 0 is never a key: pid 0 (LOST records) is stored as ~0ULL << 32 | tid.
 */
struct idset {
	__u64 *keys;
	size_t cap, nr;
};

/*
 * --fault-bucket: a process's faults in the current bucket, by class
 * (enum memmon_fault_class) and major; open addressing by tgid, as idset.
 */
#define NR_FCLASS	(MEMMON_FCLASS_OTHER + 1)

struct fault_agg {
	__u32 tgid;		/* 0: free slot */
	__u32 tid;		/* the last fault's thread: the event's tid */
	__u64 bucket;		/* time_ns / bucket_ns of the counts */
	__u64 cnt[NR_FCLASS];
	__u64 major;
	bool counted;		/* cnt[]/major hold something */
};

struct export_ctx {
	const struct rec_filter *f;
	__u64 bucket_ns;	/* 0: a fault is an instant event */
	struct fault_agg *agg;
	size_t agg_cap, agg_nr;
	struct memmon_paths *paths;
	struct memmon_format_opts fopts;
	bool csv;
	FILE *out;		/* chrome */
	bool first;		/* no event written yet (no comma) */
	struct idset seen;
	FILE *t[CSV__COUNT];	/* csv */
	int err;		/* negative errno that stopped the pass */
	struct memmon_rec_header bad;	/* a record too short for its type */
};

static const char export_usage[] =
"usage: memmon export --format chrome|csv [-o FILE|DIR] [FILTERS] TRACE\n"
"\n"
"  -f, --format FMT      chrome: Trace Event Format JSON (Perfetto UI,\n"
"                        chrome://tracing), to FILE or standard output;\n"
"                        csv: syscalls.csv, faults.csv, rss.csv,\n"
"                        lifecycle.csv, marks.csv, lost.csv in DIR\n"
"  -o, --output PATH     the file (chrome) or directory (csv, required)\n"
"      --fault-bucket D  chrome: faults as per-process counters of each D\n"
"                        (e.g. 10ms) instead of an instant event each\n";

static __u64 id_hash(__u64 k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

/* 1: added, 0: was there, -ENOMEM. */
static int idset_add(struct idset *s, __u64 key)
{
	size_t i;

	if ((s->nr + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256, j;
		__u64 *nk = calloc(ncap, sizeof(*nk));

		if (!nk)
			return -ENOMEM;
		for (j = 0; j < s->cap; j++) {
			if (!s->keys[j])
				continue;
			for (i = id_hash(s->keys[j]) & (ncap - 1); nk[i];
			     i = (i + 1) & (ncap - 1))
				;
			nk[i] = s->keys[j];
		}
		free(s->keys);
		s->keys = nk;
		s->cap = ncap;
	}
	for (i = id_hash(key) & (s->cap - 1); s->keys[i]; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == key)
			return 0;
	s->keys[i] = key;
	s->nr++;
	return 1;
}

/*
 * Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF), or 0.
 */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* s as a JSON string: quotes, escapes, bytes that are not UTF-8 as U+FFFD. */
static void json_str(FILE *f, const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i = 0, n;

	fputc('"', f);
	while (i < len) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else {
			n = utf8_len(s + i, len - i);
			if (n)
				fwrite(s + i, 1, n, f);
			else
				fputs("\\ufffd", f);
			i += n ? n : 1;
		}
	}
	fputc('"', f);
}

/* s as a CSV field (RFC 4180); not UTF-8 or NUL: U+FFFD. */
static void csv_str(FILE *f, const void *p, size_t len)
{
	const unsigned char *s = p;
	bool quote = false;
	size_t i, n;

	for (i = 0; i < len; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			quote = true;
	if (quote)
		fputc('"', f);
	for (i = 0; i < len; i += n) {
		n = utf8_len(s + i, len - i);
		if (!n || !s[i]) {
			fputs("\xef\xbf\xbd", f);
			n = 1;
		} else if (s[i] == '"') {
			fputs("\"\"", f);
		} else {
			fwrite(s + i, 1, n, f);
		}
	}
	if (quote)
		fputc('"', f);
}

static void csv_cstr(FILE *f, const char *s)
{
	csv_str(f, s, strlen(s));
}

/* ns as microseconds, exactly: the format's unit, fractions allowed. */
static void put_us(FILE *f, __u64 ns)
{
	fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s && s[1] ? s + 1 : p;
}

static void chrome_sep(struct export_ctx *c)
{
	fputs(c->first ? "\n" : ",\n", c->out);
	c->first = false;
}

static void chrome_meta(struct export_ctx *c, const char *what, __u32 pid,
			__u32 tid, const char *name, size_t len)
{
	chrome_sep(c);
	fprintf(c->out, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
		"\"args\":{\"name\":", what, pid, tid);
	json_str(c->out, name, len);
	fputs("}}", c->out);
}

/* Metadata the first time a process or a thread shows up. */
static int chrome_seen(struct export_ctx *c, __u32 pid, __u32 tid)
{
	__u64 hi = pid ? pid : 0xffffffffULL;
	char name[48];
	int ret;

	ret = idset_add(&c->seen, hi << 32 | 0xffffffffULL);
	if (ret < 0)
		return ret;
	if (ret) {
		if (pid)
			snprintf(name, sizeof(name), "pid %u", pid);
		else
			snprintf(name, sizeof(name), "memmon (lost events)");
		chrome_meta(c, "process_name", pid, tid, name, strlen(name));
	}
	ret = idset_add(&c->seen, hi << 32 | tid);
	if (ret < 0)
		return ret;
	if (ret) {
		snprintf(name, sizeof(name), "tid %u", tid);
		chrome_meta(c, "thread_name", pid, tid, name, strlen(name));
	}
	return 0;
}

/*
 * A thread's name (COMM): its thread_name, and its process's name when it
 * is the main thread. Metadata events are not ordered in the Trace Event
 * Format: the last one written wins, the name the thread ended with.
 */
static int chrome_comm(struct export_ctx *c, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_comm *cm = memmon_rec__comm(rec);
	size_t len;
	int ret;

	if (!cm)
		return -EBADMSG;
	ret = chrome_seen(c, rec->tgid, rec->tid);
	if (ret)
		return ret;
	len = strnlen(cm->comm, sizeof(cm->comm));
	if (rec->tid == rec->tgid)
		chrome_meta(c, "process_name", rec->tgid, rec->tid, cm->comm, len);
	chrome_meta(c, "thread_name", rec->tgid, rec->tid, cm->comm, len);
	return 0;
}

/* The common head of an event, up to and including "tid". */
static void chrome_head(struct export_ctx *c, const char *name, size_t len,
			const char *cat, const char *ph, __u64 ts_ns,
			const struct memmon_rec_header *rec)
{
	chrome_sep(c);
	fputs("{\"name\":", c->out);
	json_str(c->out, name, len);
	fprintf(c->out, ",\"cat\":\"%s\",\"ph\":\"%s\",\"ts\":", cat, ph);
	put_us(c->out, ts_ns);
	fprintf(c->out, ",\"pid\":%u,\"tid\":%u", rec->tgid, rec->tid);
}

/* The decoded line, as memmon trace prints it, without time and CPU. */
static void chrome_call(struct export_ctx *c, const struct memmon_rec_header *rec)
{
	struct memmon_format_opts o = c->fopts;
	char buf[1024], *p = buf;
	int n;

	o.flags |= MEMMON_FMT_NO_TIME | MEMMON_FMT_NO_CPU;
	n = memmon_rec__format(rec, buf, sizeof(buf), &o);
	if (n >= (int)sizeof(buf)) {
		p = malloc((size_t)n + 1);
		if (p)
			memmon_rec__format(rec, p, (size_t)n + 1, &o);
	}
	if (n > 0 && p) {
		fputs("\"call\":", c->out);
		json_str(c->out, p, strlen(p));
		fputc(',', c->out);
	}
	if (p != buf)
		free(p);
}

static struct fault_agg *agg_get(struct export_ctx *c, __u32 tgid)
{
	size_t i, j;

	/* tgid 0 (not visible in the recorder's namespace) keeps slot ~0 */
	tgid = tgid ? tgid : 0xffffffffU;
	if ((c->agg_nr + 1) * 2 > c->agg_cap) {
		size_t ncap = c->agg_cap ? c->agg_cap * 2 : 64;
		struct fault_agg *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (j = 0; j < c->agg_cap; j++) {
			if (!c->agg[j].tgid)
				continue;
			for (i = id_hash(c->agg[j].tgid) & (ncap - 1); n[i].tgid;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = c->agg[j];
		}
		free(c->agg);
		c->agg = n;
		c->agg_cap = ncap;
	}
	for (i = id_hash(tgid) & (c->agg_cap - 1); c->agg[i].tgid;
	     i = (i + 1) & (c->agg_cap - 1))
		if (c->agg[i].tgid == tgid)
			return &c->agg[i];
	c->agg[i].tgid = tgid;
	c->agg_nr++;
	return &c->agg[i];
}

static void agg_counter(struct export_ctx *c, const struct fault_agg *a,
			__u64 bucket, const __u64 *cnt, __u64 major)
{
	unsigned int k;

	chrome_sep(c);
	fputs("{\"name\":\"faults\",\"cat\":\"fault\",\"ph\":\"C\",\"ts\":", c->out);
	put_us(c->out, bucket * c->bucket_ns);
	fprintf(c->out, ",\"pid\":%u,\"tid\":%u,\"args\":{",
		a->tgid == 0xffffffffU ? 0 : a->tgid, a->tid);
	for (k = 0; k < NR_FCLASS; k++)
		fprintf(c->out, "\"%s\":%llu,", memmon_fault_class__name(k),
			(unsigned long long)cnt[k]);
	fprintf(c->out, "\"major\":%llu}}", (unsigned long long)major);
}

/*
 * A bucket's counts, as a counter at its start; and zeros at the next
 * bucket when the process had no fault there, so that the step graph
 * drops instead of holding the count across the gap.
 */
static void agg_flush(struct export_ctx *c, struct fault_agg *a, __u64 next)
{
	static const __u64 zero[NR_FCLASS];

	if (!a->counted)
		return;
	agg_counter(c, a, a->bucket, a->cnt, a->major);
	if (next != a->bucket + 1)
		agg_counter(c, a, a->bucket + 1, zero, 0);
	memset(a->cnt, 0, sizeof(a->cnt));
	a->major = 0;
	a->counted = false;
}

static int agg_fault(struct export_ctx *c, const struct memmon_rec_fault *ft)
{
	struct fault_agg *a = agg_get(c, ft->hdr.tgid);
	__u64 b = ft->hdr.time_ns / c->bucket_ns;

	if (!a)
		return -ENOMEM;
	if (a->counted && a->bucket != b)
		agg_flush(c, a, b);
	a->bucket = b;
	a->tid = ft->hdr.tid;
	a->cnt[ft->fclass < NR_FCLASS ? ft->fclass : MEMMON_FCLASS_OTHER]++;
	a->major += !!(ft->flags & MEMMON_FAULTF_MAJOR);
	a->counted = true;
	return 0;
}

static void agg_flush_all(struct export_ctx *c)
{
	size_t i;

	for (i = 0; i < c->agg_cap; i++)
		if (c->agg[i].tgid)
			agg_flush(c, &c->agg[i], UINT64_MAX);
}

static int chrome_rec(struct export_ctx *c, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_syscall *sc;
	const struct memmon_rec_fault *ft;
	const struct memmon_rec_rss *rs;
	const struct memmon_rec_fork *fk;
	const struct memmon_rec_exec *ex;
	const struct memmon_rec_exit *xt;
	const struct memmon_rec_mark *mk;
	const struct memmon_rec_lost *l;
	char name[64], buf[128];
	const char *s;
	int ret;

	switch (rec->type) {
	case MEMMON_REC_SYSCALL:
	case MEMMON_REC_FAULT:
	case MEMMON_REC_RSS:
	case MEMMON_REC_FORK:
	case MEMMON_REC_EXEC:
	case MEMMON_REC_EXIT:
	case MEMMON_REC_MARK:
	case MEMMON_REC_LOST:
		ret = chrome_seen(c, rec->tgid, rec->tid);
		if (ret)
			return ret;
		break;
	case MEMMON_REC_COMM:
		return chrome_comm(c, rec);
	default:
		return 0;	/* PATH, AUXV: decoding only; unknown types skipped */
	}
	/* at most one is not NULL: the record's type, if its size is right */
	sc = memmon_rec__syscall(rec);
	ft = memmon_rec__fault(rec);
	rs = memmon_rec__rss(rec);
	fk = memmon_rec__fork(rec);
	ex = memmon_rec__exec(rec);
	xt = memmon_rec__exit(rec);
	mk = memmon_rec__mark(rec);
	l = memmon_rec__lost(rec);
	if (sc) {
		/* stamped at return: the call began duration_ns before */
		__u64 start = rec->time_ns > sc->duration_ns ?
			      rec->time_ns - sc->duration_ns : 0;

		s = memmon_sys__name(sc->sys);
		if (!s) {
			snprintf(name, sizeof(name), "syscall_%u", sc->sys);
			s = name;
		}
		chrome_head(c, s, strlen(s), "syscall", "X", start, rec);
		fputs(",\"dur\":", c->out);
		put_us(c->out, rec->time_ns - start);
		fputs(",\"args\":{", c->out);
		chrome_call(c, rec);
		fprintf(c->out, "\"ret\":%lld", (long long)sc->ret);
		if (sc->ret < 0 && sc->ret >= -4095) {
			s = memmon_errno__name((int)-sc->ret);
			fputs(",\"errno\":", c->out);
			if (s)
				json_str(c->out, s, strlen(s));
			else
				fprintf(c->out, "\"%lld\"", (long long)-sc->ret);
		}
		fputs("}}", c->out);
	} else if (ft && c->bucket_ns) {
		return agg_fault(c, ft);
	} else if (ft) {
		s = memmon_fault_class__name(ft->fclass);
		snprintf(name, sizeof(name), "fault %s%s", s ? s : "?",
			 ft->flags & MEMMON_FAULTF_MAJOR ? " major" : "");
		chrome_head(c, name, strlen(name), "fault", "i", rec->time_ns, rec);
		memmon_fault_access__format(buf, sizeof(buf), ft->access);
		s = memmon_fault_result__name(ft->result);
		fprintf(c->out, ",\"s\":\"t\",\"args\":{\"addr\":\"0x%llx\","
			"\"ip\":\"0x%llx\",\"access\":\"%s\",\"major\":%s,"
			"\"result\":\"%s\",\"duration_ns\":%llu}}",
			(unsigned long long)ft->addr, (unsigned long long)ft->ip,
			buf, ft->flags & MEMMON_FAULTF_MAJOR ? "true" : "false",
			s ? s : "other", (unsigned long long)ft->duration_ns);
	} else if (rs) {
		chrome_head(c, "rss", 3, "rss", "C", rec->time_ns, rec);
		fprintf(c->out, ",\"args\":{\"anon\":%llu,\"file\":%llu,"
			"\"shmem\":%llu,\"swap\":%llu}}",
			(unsigned long long)rs->anon, (unsigned long long)rs->file,
			(unsigned long long)rs->shmem, (unsigned long long)rs->swap);
	} else if (fk) {
		s = fk->flags & MEMMON_FORKF_THREAD ? "clone_thread" : "fork";
		chrome_head(c, s, strlen(s), "lifecycle", "i", rec->time_ns, rec);
		fprintf(c->out, ",\"s\":\"t\",\"args\":{\"child_tgid\":%u,"
			"\"child_tid\":%u,\"flags\":%u}}", fk->child_tgid,
			fk->child_tid, fk->flags);
	} else if (ex) {
		size_t len = strnlen(ex->path, ex->path_len);
		char *p = strndup(ex->path, len);

		chrome_head(c, "exec", 4, "lifecycle", "i", rec->time_ns, rec);
		fputs(",\"s\":\"t\",\"args\":{\"path\":", c->out);
		json_str(c->out, ex->path, len);
		fputs("}}", c->out);
		/* the process and the thread are named after what they run */
		if (p) {
			chrome_meta(c, "process_name", rec->tgid, rec->tid,
				    base_name(p), strlen(base_name(p)));
			chrome_meta(c, "thread_name", rec->tgid, rec->tid,
				    base_name(p), strlen(base_name(p)));
		}
		free(p);
	} else if (xt) {
		memmon_wait_status__format(buf, sizeof(buf), xt->code);
		chrome_head(c, "exit", 4, "lifecycle", "i", rec->time_ns, rec);
		fputs(",\"s\":\"t\",\"args\":{\"status\":", c->out);
		json_str(c->out, buf, strlen(buf));
		fprintf(c->out, ",\"code\":%u,\"group\":%s,\"peak_rss\":%llu,"
			"\"peak_vm\":%llu}}", xt->code,
			xt->flags & MEMMON_EXITF_GROUP ? "true" : "false",
			(unsigned long long)xt->peak_rss,
			(unsigned long long)xt->peak_vm);
	} else if (mk) {
		chrome_head(c, (const char *)mk->data,
			    strnlen((const char *)mk->data, mk->len), "mark", "i",
			    rec->time_ns, rec);
		fputs(",\"s\":\"g\"}", c->out);
	} else if (l) {
		chrome_head(c, "LOST", 4, "lost", "i", rec->time_ns, rec);
		fprintf(c->out, ",\"s\":\"g\",\"args\":{\"count\":%llu,\"cpu\":%u,"
			"\"first_ns\":%llu,\"last_ns\":%llu}}",
			(unsigned long long)l->count, rec->cpu,
			(unsigned long long)l->first_ns,
			(unsigned long long)l->last_ns);
	} else {
		/* a known type too short for its view: the file is damaged */
		return -EBADMSG;
	}
	return 0;
}

static void csv_head(FILE *f, const struct memmon_rec_header *rec)
{
	fprintf(f, "%llu,%u,%u,%u,", (unsigned long long)rec->time_ns, rec->cpu,
		rec->tgid, rec->tid);
}

/* A COMM: a lifecycle row "comm" with the name and why it was written. */
static int csv_comm(struct export_ctx *c, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_comm *cm = memmon_rec__comm(rec);
	FILE *f = c->t[CSV_LIFECYCLE];
	const char *why;

	if (!cm)
		return -EBADMSG;
	csv_head(f, rec);
	fputs("comm,,,,,,,,,,", f);
	csv_str(f, cm->comm, strnlen(cm->comm, sizeof(cm->comm)));
	why = memmon_comm_why__name(cm->why);
	if (why)
		fprintf(f, ",%s\n", why);
	else
		fprintf(f, ",%u\n", cm->why);
	return 0;
}

static int csv_rec(struct export_ctx *c, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_syscall *sc;
	const struct memmon_rec_fault *ft;
	const struct memmon_rec_rss *rs;
	const struct memmon_rec_fork *fk;
	const struct memmon_rec_exec *ex;
	const struct memmon_rec_exit *xt;
	const struct memmon_rec_mark *mk;
	const struct memmon_rec_lost *l;
	char buf[128];
	const char *s;
	FILE *f;
	int i;

	if (rec->type == MEMMON_REC_PATH || rec->type == MEMMON_REC_AUXV ||
	    rec->type >= MEMMON_REC__COUNT || !rec->type)
		return 0;
	if (rec->type == MEMMON_REC_COMM)
		return csv_comm(c, rec);
	sc = memmon_rec__syscall(rec);
	ft = memmon_rec__fault(rec);
	rs = memmon_rec__rss(rec);
	fk = memmon_rec__fork(rec);
	ex = memmon_rec__exec(rec);
	xt = memmon_rec__exit(rec);
	mk = memmon_rec__mark(rec);
	l = memmon_rec__lost(rec);
	if (sc) {
		f = c->t[CSV_SYSCALLS];
		csv_head(f, rec);
		s = memmon_sys__name(sc->sys);
		if (s)
			fprintf(f, "%s,", s);
		else
			fprintf(f, "%u,", sc->sys);
		for (i = 0; i < 6; i++)
			fprintf(f, "0x%llx,", (unsigned long long)sc->args[i]);
		fprintf(f, "%lld,", (long long)sc->ret);
		if (sc->ret < 0 && sc->ret >= -4095) {
			s = memmon_errno__name((int)-sc->ret);
			if (s)
				fputs(s, f);
			else
				fprintf(f, "%lld", (long long)-sc->ret);
		}
		fprintf(f, ",%llu,%d,", (unsigned long long)sc->duration_ns,
			!!(sc->flags & MEMMON_SYSF_COMPAT));
		if (sc->flags & MEMMON_SYSF_FILE) {
			fprintf(f, "%llu,%llu,", (unsigned long long)sc->aux[0],
				(unsigned long long)sc->aux[1]);
			s = memmon_paths__lookup(c->paths, sc->aux[0], sc->aux[1]);
			if (s)
				csv_cstr(f, s);
		} else {
			fputs(",,", f);
		}
	} else if (ft) {
		f = c->t[CSV_FAULTS];
		csv_head(f, rec);
		memmon_fault_access__format(buf, sizeof(buf), ft->access);
		fprintf(f, "0x%llx,0x%llx,", (unsigned long long)ft->addr,
			(unsigned long long)ft->ip);
		csv_cstr(f, buf);
		s = memmon_fault_class__name(ft->fclass);
		fprintf(f, ",%s,%d,%d,%d,", s ? s : "other",
			!!(ft->flags & MEMMON_FAULTF_MAJOR),
			!!(ft->flags & MEMMON_FAULTF_KERNEL),
			!!(ft->flags & MEMMON_FAULTF_NEWPAGE));
		s = memmon_fault_result__name(ft->result);
		fprintf(f, "%s,%llu,", s ? s : "other",
			(unsigned long long)ft->duration_ns);
		if (ft->flags & MEMMON_FAULTF_PFN)
			fprintf(f, "%llu", (unsigned long long)ft->pfn);
	} else if (rs) {
		f = c->t[CSV_RSS];
		csv_head(f, rec);
		fprintf(f, "%llu,%llu,%llu,%llu", (unsigned long long)rs->anon,
			(unsigned long long)rs->file, (unsigned long long)rs->shmem,
			(unsigned long long)rs->swap);
	} else if (fk) {
		f = c->t[CSV_LIFECYCLE];
		csv_head(f, rec);
		fprintf(f, "fork,%u,%u,%d,,,,,,,,", fk->child_tgid, fk->child_tid,
			!!(fk->flags & MEMMON_FORKF_THREAD));
	} else if (ex) {
		f = c->t[CSV_LIFECYCLE];
		csv_head(f, rec);
		fputs("exec,,,,", f);
		csv_str(f, ex->path, strnlen(ex->path, ex->path_len));
		fputs(",,,,,,,", f);
	} else if (xt) {
		f = c->t[CSV_LIFECYCLE];
		csv_head(f, rec);
		memmon_wait_status__format(buf, sizeof(buf), xt->code);
		fputs("exit,,,,,", f);
		csv_cstr(f, buf);
		fprintf(f, ",%u,%d,%llu,%llu,,", xt->code,
			!!(xt->flags & MEMMON_EXITF_GROUP),
			(unsigned long long)xt->peak_rss,
			(unsigned long long)xt->peak_vm);
	} else if (mk) {
		f = c->t[CSV_MARKS];
		csv_head(f, rec);
		csv_str(f, mk->data, strnlen((const char *)mk->data, mk->len));
	} else if (l) {
		f = c->t[CSV_LOST];
		fprintf(f, "%llu,%u,%llu,%llu,%llu", (unsigned long long)rec->time_ns,
			rec->cpu, (unsigned long long)l->count,
			(unsigned long long)l->first_ns,
			(unsigned long long)l->last_ns);
	} else {
		return -EBADMSG;
	}
	fputc('\n', f);
	return 0;
}

static int export_cb(void *vctx, const struct memmon_rec_header *rec)
{
	struct export_ctx *c = vctx;
	int ret, i;

	memmon_paths__add_rec(c->paths, rec);
	if (!rec_filter_match(c->f, rec))
		return 0;
	ret = c->csv ? csv_rec(c, rec) : chrome_rec(c, rec);
	if (!ret) {
		/* a full disk stops the pass instead of reading on for nothing */
		if (!c->csv && ferror(c->out))
			ret = -EIO;
		for (i = 0; c->csv && i < CSV__COUNT; i++)
			if (ferror(c->t[i]))
				ret = -EIO;
	}
	if (ret == -EBADMSG)
		c->bad = *rec;
	if (ret)
		c->err = ret;
	return ret;
}

static int open_csv(const char *cmd, struct export_ctx *c, const char *dir)
{
	char p[4096];
	int i;

	if (mkdir(dir, 0777) && errno != EEXIST)
		return tool_err(cmd, "%s: %s", dir, strerror(errno));
	for (i = 0; i < CSV__COUNT; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, csv_tables[i].file);
		c->t[i] = fopen(p, "w");
		if (!c->t[i])
			return tool_err(cmd, "%s: %s", p, strerror(errno));
		setvbuf(c->t[i], NULL, _IOFBF, 1 << 18);
		fprintf(c->t[i], "%s\n", csv_tables[i].header);
	}
	return 0;
}

/* Close what was opened; 1 if any of it failed to be written. */
static int close_outputs(const char *cmd, struct export_ctx *c, const char *output)
{
	int ret = 0, i;

	for (i = 0; i < CSV__COUNT; i++) {
		if (c->t[i] && (ferror(c->t[i]) | fclose(c->t[i])))
			ret = tool_err(cmd, "%s/%s: write error", output,
				       csv_tables[i].file);
		c->t[i] = NULL;
	}
	if (c->out && c->out != stdout) {
		if (ferror(c->out) | fclose(c->out))
			ret = tool_err(cmd, "%s: write error", output);
	} else if (c->out && tool_close_stdout(cmd)) {
		ret = 1;
	}
	c->out = NULL;
	return ret;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, REC_FILTER_OPT_TID },
		{ "time", required_argument, NULL, REC_FILTER_OPT_TIME },
		{ "events", required_argument, NULL, 'e' },
		{ "failed", no_argument, NULL, REC_FILTER_OPT_FAILED },
		{ "min-duration", required_argument, NULL, REC_FILTER_OPT_MIN_DUR },
		{ "faults", required_argument, NULL, REC_FILTER_OPT_FAULTS },
		{ "format", required_argument, NULL, 'f' },
		{ "fault-bucket", required_argument, NULL, 'B' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "export", *output = NULL, *format = NULL, *path;
	struct memmon_trace_reader *r = NULL;
	const struct memmon_trace_info *in;
	struct export_ctx c = { .first = true };
	struct rec_filter f;
	int opt, ret;
	long n;

	rec_filter_init(&f);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, REC_FILTER_SHORTOPTS "f:o:h",
				  longopts, NULL)) != -1) {
		ret = rec_filter_option(cmd, &f, opt, optarg);
		if (ret >= 0) {
			if (ret)
				goto out_free;
			continue;
		}
		switch (opt) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'B':
			ret = rec_filter_parse_duration(cmd, optarg, &c.bucket_ns);
			if (ret)
				goto out_free;
			if (!c.bucket_ns) {
				ret = tool_usage_err(cmd, "bad --fault-bucket '%s': "
						     "at least 1ns", optarg);
				goto out_free;
			}
			break;
		case 'h':
			fputs(export_usage, stdout);
			fputs(rec_filter_help, stdout);
			ret = tool_close_stdout(cmd);
			goto out_free;
		default:
			ret = tool_usage_err(cmd, "unknown or incomplete option '%s'",
					     argv[optind - 1]);
			goto out_free;
		}
	}
	if (!format || (strcmp(format, "chrome") && strcmp(format, "csv"))) {
		ret = tool_usage_err(cmd, format ? "unknown format '%s': chrome or csv" :
				     "missing --format (chrome or csv)%s", format ?: "");
		goto out_free;
	}
	c.csv = !strcmp(format, "csv");
	if (c.csv && !output) {
		ret = tool_usage_err(cmd, "csv needs -o DIR (its tables are files)");
		goto out_free;
	}
	if (optind != argc - 1) {
		ret = tool_usage_err(cmd, optind >= argc ? "missing TRACE" :
				     "one TRACE only");
		goto out_free;
	}
	path = argv[optind];
	ret = rec_filter_open(cmd, "exporting", &f, path, &r, &c.paths);
	if (ret)
		goto out_free;
	in = memmon_trace_reader__info(r);
	ret = 1;
	c.f = &f;
	c.fopts.sz = sizeof(c.fopts);
	c.fopts.realtime_offset_ns = in->realtime_offset_ns;
	c.fopts.paths = c.paths;
	if (c.csv) {
		if (open_csv(cmd, &c, output))
			goto out_outputs;
	} else {
		c.out = output ? fopen(output, "w") : stdout;
		if (!c.out) {
			tool_err(cmd, "%s: %s", output, strerror(errno));
			goto out_outputs;
		}
		setvbuf(c.out, NULL, _IOFBF, 1 << 20);
		fputs("{\"traceEvents\":[", c.out);
	}
	n = rec_pipe_for_each(r, export_cb, &c, 0);
	if (n < 0 && c.err == -EIO) {
		tool_err(cmd, "write error: %s", strerror(errno ? errno : EIO));
	} else if (n < 0 && c.err == -ENOMEM) {
		tool_err(cmd, "out of memory");
	} else if (n < 0) {
		const char *msg = memmon_trace_reader__errmsg(r);

		if (c.err == -EBADMSG)
			tool_err(cmd, "%s: a malformed record: type %u (%s) of %u "
				 "bytes at time_ns %llu, cpu %u", path, c.bad.type,
				 memmon_rec_type__name(c.bad.type) ?: "?",
				 c.bad.size, (unsigned long long)c.bad.time_ns,
				 c.bad.cpu);
		else
			tool_err(cmd, "%s: %s", path, *msg ? msg : strerror((int)-n));
	} else {
		agg_flush_all(&c);
		if (!c.csv)
			fprintf(c.out, "\n],\"displayTimeUnit\":\"ns\","
				"\"otherData\":{\"source\":\"memmon export\"}}\n");
		ret = 0;
	}
out_outputs:
	if (close_outputs(cmd, &c, output))
		ret = 1;
	free(c.seen.keys);
	free(c.agg);
	memmon_paths__free(c.paths);
	memmon_trace_reader__close(r);
out_free:
	rec_filter_free(&f);
	return ret;
}
