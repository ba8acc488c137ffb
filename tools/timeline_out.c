// SPDX-License-Identifier: GPL-2.0
/*
 * timeline_out: the page of `memmon timeline`: the template built into the
 * binary (tools/timeline/, embedded by tools/tools.mk) with the aggregates
 * written into it as one JSON object, streamed (no JSON tree in memory).
 *
 * Times in the JSON are ns relative to "t0" (exact as JS numbers up to
 * 104 days); "rt0_ms" is t0 on the wall clock. Strings are escaped so that
 * "</script>" cannot occur inside the data block, and bytes that are not
 * UTF-8 become \u00XX.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "timeline_agg.h"
#include "timeline_out.h"
#include "timeline_page.h"


static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static void jstr(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	while (*s) {
		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20 || *s == '<' || *s == '>' || *s == '&') {
			fprintf(f, "\\u%04x", *s++);
		} else if (*s < 0x80) {
			fputc(*s++, f);
		} else if (utf8_len(s)) {
			fwrite(s, 1, utf8_len(s), f);
			s += utf8_len(s);
		} else {
			fprintf(f, "\\u%04x", *s++);
		}
	}
	fputc('"', f);
}

static unsigned long long rel(const struct tl_agg *a, __u64 t)
{
	return t > a->t0 ? t - a->t0 : 0;
}

static void write_bucket(FILE *f, size_t i, const struct tl_bucket *b)
{
	unsigned int k;

	fprintf(f, "[%zu", i);
	for (k = 0; k < TL_C__COUNT; k++)
		fprintf(f, ",%u,%u", b->faults[k][0], b->faults[k][1]);
	for (k = 0; k < TL_K__COUNT; k++)
		fprintf(f, ",%u", b->calls[k]);
	fprintf(f, ",%u,%llu,%llu", b->failed, (unsigned long long)b->mapped,
		(unsigned long long)b->unmapped);
	for (k = 0; k < TL_LAT; k++)
		fprintf(f, ",%u", b->lat[k]);
	if (b->has_rss)
		for (k = 0; k < 4; k++)
			fprintf(f, ",%llu", (unsigned long long)b->rss[k]);
	fputc(']', f);
}

static bool bucket_empty(const struct tl_bucket *b)
{
	static const struct tl_bucket zero;

	return !memcmp(b, &zero, sizeof(zero));
}

static void write_proc(FILE *f, const struct tl_agg *a, const struct tl_proc *p)
{
	char buf[64];
	unsigned int c;
	size_t i;
	bool first;

	fprintf(f, "{\"tgid\":%u,\"parent\":%u,\"exe\":", p->tgid, p->parent);
	if (p->tgid == TL_FOLD_TGID)
		jstr(f, "(more processes)");
	else
		jstr(f, p->exe);
	fprintf(f, ",\"start\":%llu,\"end\":%llu,\"exited\":%s,\"records\":%llu",
		rel(a, p->first_ns), rel(a, p->last_ns), p->exited ? "true" : "false",
		(unsigned long long)p->records);
	if (p->exited) {
		memmon_wait_status__format(buf, sizeof(buf), p->exit_code);
		fprintf(f, ",\"exit_status\":%u,\"exit_text\":", p->exit_code);
		jstr(f, buf);
		fprintf(f, ",\"exit_t\":%llu", rel(a, p->exit_ns));
	}
	fprintf(f, ",\"mapped\":%llu,\"unmapped\":%llu,\"calls\":{",
		(unsigned long long)p->mapped, (unsigned long long)p->unmapped);
	for (i = 0, first = true; i < MEMMON_SYS__COUNT; i++) {
		if (!p->calls[i])
			continue;
		fprintf(f, "%s\"%s\":{\"count\":%llu,\"failed\":%llu}", first ? "" : ",",
			memmon_sys__name((unsigned int)i), (unsigned long long)p->calls[i],
			(unsigned long long)p->failed[i]);
		first = false;
	}
	fprintf(f, "},\"faults_total\":%llu,\"faults\":{",
		(unsigned long long)p->faults_total);
	for (c = 0, first = true; c <= MEMMON_FCLASS_OTHER + 1; c++) {
		const char *cn = memmon_fault_class__name(c);

		if (!p->faults[c][0] && !p->faults[c][1])
			continue;
		fprintf(f, "%s\"%s\":{\"minor\":%llu,\"major\":%llu}", first ? "" : ",",
			cn ? cn : "unknown", (unsigned long long)p->faults[c][0],
			(unsigned long long)p->faults[c][1]);
		first = false;
	}
	fputs("},\"events\":[", f);
	for (i = 0; i < p->nr_ev; i++) {
		fprintf(f, "%s[%llu,%u,", i ? "," : "", rel(a, p->ev[i].t), p->ev[i].child);
		if (p->ev[i].path)
			jstr(f, p->ev[i].path);
		else
			fputs("null", f);
		fputc(']', f);
	}
	fprintf(f, "],\"events_dropped\":%llu,\"threads\":[",
		(unsigned long long)p->ev_dropped);
	for (i = 0; i < p->nr_threads; i++) {
		const struct tl_thread *t = &p->threads[i];

		fprintf(f, "%s{\"tid\":%u,\"start\":%llu,\"end\":%llu,\"exited\":%s,"
			"\"calls\":%llu,\"faults\":%llu}", i ? "," : "", t->tid,
			rel(a, t->first_ns), rel(a, t->last_ns > t->first_ns ?
						  t->last_ns : t->first_ns),
			t->exited ? "true" : "false", (unsigned long long)t->calls,
			(unsigned long long)t->faults);
	}
	fprintf(f, "],\"threads_dropped\":%llu,\"buckets\":[",
		(unsigned long long)p->threads_dropped);
	for (i = 0, first = true; i < TL_NBUCKETS; i++) {
		const struct tl_bucket *b = tl_bucket_get(p, i);

		if (!b || bucket_empty(b))
			continue;
		if (!first)
			fputc(',', f);
		write_bucket(f, i, b);
		first = false;
	}
	fputs("]}", f);
}

static void write_call(FILE *f, const struct tl_agg *a,
		       const struct memmon_rec_syscall *sc, bool first)
{
	LIBMEMMON_OPTS(memmon_format_opts, fo,
		       .flags = MEMMON_FMT_NO_TIME | MEMMON_FMT_NO_CPU,
		       .paths = a->paths);
	char text[512];
	const char *t = text, *sp;
	bool failed = sc->ret < 0 && sc->ret >= -4095;

	if (memmon_rec__format(&sc->hdr, text, sizeof(text), &fo) <= 0)
		text[0] = '\0';
	/* "tgid/tid call(...)": the lane already says who */
	sp = strchr(text, ' ');
	if (sp)
		t = sp + 1;
	fprintf(f, "%s[%llu,%llu,%u,%u,%d,%d,", first ? "\n" : ",\n",
		rel(a, sc->hdr.time_ns), (unsigned long long)sc->duration_ns,
		sc->hdr.tgid, sc->hdr.tid, tl_sys_kind(sc->sys), failed);
	jstr(f, t);
	fputc(']', f);
}

/*
 * The sample and the exact windows' calls, merged in time order; a call
 * in both (the exact one comes first on a tie) is written once.
 */
static void write_detail(FILE *f, const struct tl_agg *a)
{
	const struct memmon_rec_syscall *sc, *prev = NULL;
	size_t i = 0, j = 0, n = 0;

	fprintf(f, "\"detail\":{\"total\":%llu,\"sampled\":%zu,\"calls\":[",
		(unsigned long long)a->calls_total, a->nr_detail);
	while (i < a->nr_detail || j < a->nr_exact) {
		if (j < a->nr_exact && (i >= a->nr_detail ||
					a->exact[j].hdr.time_ns <= a->detail[i].hdr.time_ns))
			sc = &a->exact[j++];
		else
			sc = &a->detail[i++];
		if (prev && !memcmp(prev, sc, sizeof(*sc)))
			continue;
		write_call(f, a, sc, !n);
		prev = sc;
		n++;
	}
	fprintf(f, "],\"kept\":%zu,\"exact\":[", n);
	for (i = 0; i < a->nr_win; i++)
		fprintf(f, "%s[%llu,%llu,%zu]", i ? "," : "", rel(a, a->win[i].first_ns),
			rel(a, a->win[i].last_ns), a->win[i].n);
	fputs("]}", f);
}

static void write_json(FILE *f, const struct tl_agg *a, const struct tl_out_opts *o)
{
	size_t i;
	unsigned int c;
	unsigned long long lost = 0;

	fputs("{\"version\":1,\"title\":", f);
	jstr(f, o->title);
	fputs(",\"file\":", f);
	jstr(f, o->file);
	fprintf(f, ",\"t0\":%llu,\"duration\":%llu,\"rt0_ms\":%lld,\"has_rt\":%s,"
		"\"bucket_ns\":%llu,\"nbuckets\":%d,\"records\":%llu,\"truncated\":%s",
		(unsigned long long)a->t0, rel(a, a->t_last),
		o->rt_off ? (long long)(((__s64)a->t0 + o->rt_off) / 1000000) : 0LL,
		o->rt_off ? "true" : "false", (unsigned long long)a->width,
		TL_NBUCKETS, (unsigned long long)a->records,
		o->truncated ? "true" : "false");
	fputs(",\"kinds\":[", f);
	for (c = 0; c < TL_K__COUNT; c++)
		fprintf(f, "%s\"%s\"", c ? "," : "", tl_kind_name(c));
	fputs("],\"classes\":[", f);
	for (c = 0; c < TL_C__COUNT; c++)
		fprintf(f, "%s\"%s\"", c ? "," : "", tl_class_name(c));
	fputs("],\"lat_lt_ns\":[", f);
	for (c = 0; c < TL_LAT; c++)
		fprintf(f, "%s%llu", c ? "," : "",
			c == TL_LAT - 1 ? 0ULL : 1ULL << (c + 9));
	fputs("],\"lost_per_cpu\":[", f);
	for (c = 0; c < a->nr_cpus; c++) {
		unsigned long long v = a->lost_per_cpu[c];

		if (o->kernel_lost && o->kernel_lost[c] > v)
			v = o->kernel_lost[c];
		lost += v;
		fprintf(f, "%s%llu", c ? "," : "", v);
	}
	fprintf(f, "],\"lost\":%llu,\"lost_intervals\":[", lost);
	for (i = 0; i < a->nr_lost; i++)
		fprintf(f, "%s[%llu,%llu,%llu,%u]", i ? "," : "",
			rel(a, a->lost[i].first_ns), rel(a, a->lost[i].last_ns),
			(unsigned long long)a->lost[i].count, a->lost[i].cpu);
	fprintf(f, "],\"records_folded\":%llu,\"marks_dropped\":%llu,\"marks\":[",
		(unsigned long long)a->records_folded,
		(unsigned long long)a->marks_dropped);
	for (i = 0; i < a->nr_marks; i++) {
		fprintf(f, "%s[%llu,%u,%u,", i ? "," : "", rel(a, a->marks[i].t),
			a->marks[i].tgid, a->marks[i].tid);
		jstr(f, a->marks[i].text);
		fputc(']', f);
	}
	fputs("],\"processes\":[", f);
	for (i = 0; i < a->nr_procs; i++) {
		if (i)
			fputs(",\n", f);
		write_proc(f, a, a->procs[i]);
	}
	fputs("],", f);
	write_detail(f, a);
	fputc('}', f);
}

/* Write tmpl up to each "@NAME@" it holds, and what NAME stands for. */
int tl_write_html(FILE *f, const struct tl_agg *a, const struct tl_out_opts *o)
{
	const char *s = memmon_timeline_page_html, *at;

	while ((at = strchr(s, '@'))) {
		const char *end = strchr(at + 1, '@');
		size_t n;

		fwrite(s, 1, (size_t)(at - s), f);
		if (!end) {
			s = at;
			break;
		}
		n = (size_t)(end - at - 1);
		if (n == 5 && !memcmp(at + 1, "STYLE", 5)) {
			fputs(memmon_timeline_page_css, f);
		} else if (n == 6 && !memcmp(at + 1, "SCRIPT", 6)) {
			fputs(memmon_timeline_page_js, f);
		} else if (n == 4 && !memcmp(at + 1, "DATA", 4)) {
			write_json(f, a, o);
		} else if (n == 5 && !memcmp(at + 1, "TITLE", 5)) {
			/* HTML text: the JSON escaping is safe here too */
			const char *t = o->title;

			for (; *t; t++) {
				if (*t == '<')
					fputs("&lt;", f);
				else if (*t == '&')
					fputs("&amp;", f);
				else
					fputc(*t, f);
			}
		} else {
			fwrite(at, 1, n + 2, f);
		}
		s = end + 1;
	}
	fputs(s, f);
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
