// SPDX-License-Identifier: GPL-2.0
/*
 * memmon top's model: records counted per process and interval, rates and
 * the RSS trend at each tick, the sort, and the text of the lines (shared
 * by the ncurses view and --batch).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <memmon/decode.h>
#include "top_model.h"

static const char *const col_names[TOP_COL__COUNT] = {
	[TOP_COL_FAULTS] = "FLT/s",	[TOP_COL_ANON] = "ANON",
	[TOP_COL_FILE] = "FILE",	[TOP_COL_SHMEM] = "SHMEM",
	[TOP_COL_SWAP] = "SWAP",	[TOP_COL_MAJOR] = "MAJ/s",
	[TOP_COL_SYSCALLS] = "SYS/s",	[TOP_COL_MMAP] = "MMAP",
	[TOP_COL_MUNMAP] = "MUNMAP",	[TOP_COL_BRK] = "BRK",
	[TOP_COL_MPROTECT] = "MPROT",	[TOP_COL_MADVISE] = "MADV",
	[TOP_COL_OTHER] = "OTHER",	[TOP_COL_RSS] = "RSS",
	[TOP_COL_TREND] = "RSS/s",
};

/* Every column is 7 wide but the trend's 9 (sign and "/s" suffix-free). */
#define COL_W		7
#define TREND_W		9

const char *top_col_name(enum top_col c)
{
	return c < TOP_COL__COUNT ? col_names[c] : "?";
}

void top_model_init(struct top_model *m)
{
	memset(m, 0, sizeof(*m));
	m->sort = TOP_COL_FAULTS;
}

void top_model_free(struct top_model *m)
{
	free(m->procs);
	m->procs = NULL;
	m->nr = m->cap = 0;
}

struct top_proc *top_model_find(struct top_model *m, pid_t pid)
{
	size_t i;

	/* Linear: a view shows tens of processes, max_watch caps it. */
	for (i = 0; i < m->nr; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

struct top_proc *top_model_get(struct top_model *m, pid_t pid)
{
	struct top_proc *p = top_model_find(m, pid);

	if (p)
		return p;
	if (m->nr == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct top_proc *np = realloc(m->procs, cap * sizeof(*np));

		if (!np)
			return NULL;
		m->procs = np;
		m->cap = cap;
	}
	p = &m->procs[m->nr++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

void top_model_remove(struct top_model *m, pid_t pid)
{
	struct top_proc *p = top_model_find(m, pid);

	if (p)
		*p = m->procs[--m->nr];
}

static enum top_col fault_col(__u32 fclass)
{
	switch (fclass) {
	case MEMMON_FCLASS_ANON: return TOP_COL_ANON;
	case MEMMON_FCLASS_SWAP: return TOP_COL_SWAP;
	case MEMMON_FCLASS_FILE: return TOP_COL_FILE;
	case MEMMON_FCLASS_SHMEM: return TOP_COL_SHMEM;
	default: return TOP_COL__COUNT;	/* only in the total */
	}
}

static enum top_col sys_col(__u32 sys)
{
	switch (sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
	case MEMMON_SYS_OLD_MMAP: return TOP_COL_MMAP;
	case MEMMON_SYS_MUNMAP: return TOP_COL_MUNMAP;
	case MEMMON_SYS_BRK: return TOP_COL_BRK;
	case MEMMON_SYS_MPROTECT: return TOP_COL_MPROTECT;
	case MEMMON_SYS_MADVISE: return TOP_COL_MADVISE;
	default: return TOP_COL_OTHER;
	}
}

void top_model_add_rec(struct top_model *m, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_fault *f;
	const struct memmon_rec_syscall *sc;
	const struct memmon_rec_rss *rss;
	const struct memmon_rec_exit *ex;
	const struct memmon_rec_lost *lost;
	struct top_proc *p;
	enum top_col c;

	if (rec->type == MEMMON_REC_LOST) {
		lost = memmon_rec__lost(rec);
		if (lost) {
			m->lost += lost->count;
			m->lost_total += lost->count;
		}
		return;
	}
	m->events++;
	switch (rec->type) {
	case MEMMON_REC_FAULT:
		f = memmon_rec__fault(rec);
		p = f ? top_model_get(m, (pid_t)rec->tgid) : NULL;
		if (!p)
			return;
		p->cnt[TOP_COL_FAULTS]++;
		c = fault_col(f->fclass);
		if (c != TOP_COL__COUNT)
			p->cnt[c]++;
		if (f->flags & MEMMON_FAULTF_MAJOR)
			p->cnt[TOP_COL_MAJOR]++;
		break;
	case MEMMON_REC_SYSCALL:
		sc = memmon_rec__syscall(rec);
		p = sc ? top_model_get(m, (pid_t)rec->tgid) : NULL;
		if (!p)
			return;
		p->cnt[TOP_COL_SYSCALLS]++;
		p->cnt[sys_col(sc->sys)]++;
		break;
	case MEMMON_REC_RSS:
		rss = memmon_rec__rss(rec);
		p = rss ? top_model_get(m, (pid_t)rec->tgid) : NULL;
		if (!p)
			return;
		p->rss = rss->anon + rss->file + rss->shmem;
		p->rss_known = true;
		break;
	case MEMMON_REC_EXIT:
		ex = memmon_rec__exit(rec);
		if (ex && (ex->flags & MEMMON_EXITF_GROUP)) {
			p = top_model_find(m, (pid_t)rec->tgid);
			if (p)
				p->gone = true;
		}
		break;
	default:
		break;
	}
}

void top_model_tick(struct top_model *m, unsigned long long elapsed_ns)
{
	double secs = elapsed_ns ? elapsed_ns / 1e9 : 1.0;
	size_t i;
	int c;

	m->events_rate = m->events / secs;
	m->lost_rate = m->lost / secs;
	m->events = m->lost = 0;
	for (i = 0; i < m->nr; i++) {
		struct top_proc *p = &m->procs[i];

		for (c = 0; c < TOP_COL_RSS; c++) {
			p->rate[c] = p->cnt[c] / secs;
			p->cnt[c] = 0;
		}
		p->rate[TOP_COL_RSS] = p->rss_known ? (double)p->rss : 0;
		p->rate[TOP_COL_TREND] = p->rss_known && p->rss_prev_known ?
			((double)p->rss - (double)p->rss_prev) / secs : 0;
		p->rss_prev = p->rss;
		p->rss_prev_known = p->rss_known;
	}
}

static enum top_col sort_key;

static int cmp_proc(const void *va, const void *vb)
{
	const struct top_proc *a = va, *b = vb;

	if (a->rate[sort_key] != b->rate[sort_key])
		return a->rate[sort_key] < b->rate[sort_key] ? 1 : -1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

void top_model_sort(struct top_model *m)
{
	/* qsort has no context argument; top is single-threaded. */
	sort_key = m->sort < TOP_COL__COUNT ? m->sort : TOP_COL_FAULTS;
	if (m->nr > 1)
		qsort(m->procs, m->nr, sizeof(*m->procs), cmp_proc);
}

/* 1234 -> "1234", 12345 -> "12.3k", 1.5e6 -> "1.5M": fits 6 chars. */
static void fmt_num(double v, char *buf, size_t len)
{
	static const char units[] = "kMGTP";
	int u = -1;

	if (v < 9999.5) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	while (v >= 999.95 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, "%.1f%c", v, units[u]);
}

/* Bytes in binary units: "512K", "12.5M", "1.2G". */
static void fmt_bytes(double v, char *buf, size_t len)
{
	static const char units[] = "BKMGTP";
	int u = 0;

	while (v >= 1023.95 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v >= 99.95)
		snprintf(buf, len, "%.0f%c", v, units[u]);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
}

void top_col_format(const struct top_proc *p, enum top_col c, char *buf,
		    size_t len)
{
	double v = p->rate[c];

	if (c == TOP_COL_RSS) {
		if (p->rss_known)
			fmt_bytes(v, buf, len);
		else
			snprintf(buf, len, "-");
	} else if (c == TOP_COL_TREND) {
		char b[16];

		/* The arrow is the trend; the figure its rate. */
		if (!p->rss_known || !p->rss_prev_known || v == 0) {
			snprintf(buf, len, "=");
			return;
		}
		fmt_bytes(v < 0 ? -v : v, b, sizeof(b));
		snprintf(buf, len, "%s%s", v < 0 ? "v-" : "^+", b);
	} else {
		fmt_num(v, buf, len);
	}
}

void top_format_columns(const struct top_model *m, char *buf, size_t len)
{
	size_t off;
	int c, n;

	off = (size_t)snprintf(buf, len, "%7s %-15s", "PID", "COMM");
	for (c = 0; c < TOP_COL__COUNT && off < len; c++) {
		char name[16];

		/* The sort column is marked: "*FLT/s". */
		snprintf(name, sizeof(name), "%s%s", c == (int)m->sort ? "*" : "",
			 col_names[c]);
		n = snprintf(buf + off, len - off, " %*s",
			     c == TOP_COL_TREND ? TREND_W : COL_W, name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

void top_format_line(const struct top_proc *p, char *buf, size_t len)
{
	size_t off;
	int c, n;

	off = (size_t)snprintf(buf, len, "%7d %-15.15s", (int)p->pid,
			       p->comm[0] ? p->comm : "?");
	for (c = 0; c < TOP_COL__COUNT && off < len; c++) {
		char v[32];

		top_col_format(p, c, v, sizeof(v));
		n = snprintf(buf + off, len - off, " %*s",
			     c == TOP_COL_TREND ? TREND_W : COL_W, v);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (p->gone && off < len)
		snprintf(buf + off, len - off, " (exited)");
}

void top_format_header(const struct top_model *m, char *buf, size_t len)
{
	char ev[16], lo[16];

	fmt_num(m->events_rate, ev, sizeof(ev));
	fmt_num(m->lost_rate, lo, sizeof(lo));
	snprintf(buf, len, "processes: %zu  events/s: %s  lost/s: %s  lost: %llu"
		 "  sort: %s", m->nr, ev, lo, m->lost_total,
		 col_names[m->sort < TOP_COL__COUNT ? m->sort : 0]);
}

int top_model_print(const struct top_model *m, FILE *f, double now_s,
		    bool paused)
{
	char line[512];
	size_t i;

	top_format_header(m, line, sizeof(line));
	fprintf(f, "memmon top  %.1fs  %s%s\n", now_s, line,
		paused ? "  PAUSED" : "");
	top_format_columns(m, line, sizeof(line));
	fprintf(f, "%s\n", line);
	for (i = 0; i < m->nr; i++) {
		top_format_line(&m->procs[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
