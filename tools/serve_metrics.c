// SPDX-License-Identifier: GPL-2.0
/*
 * memmon serve: /metrics in Prometheus' text exposition format (0.0.4).
 *
 * Source: at each scrape, every running recording's file as it stands,
 * through "memmon report --json" (a child: a damaged file cannot take the
 * server down) for the per-process families and through a pass over the
 * records for the per-CPU ones. Counters therefore restart with each
 * recording and stop with it; a process seen by two recordings is summed.
 *
 * Cardinality: the `top` processes with the most faults plus system calls
 * get labels pid and comm of their own; the rest are summed into one
 * series with pid="other", comm="other" (its RSS gauge is their sum).
 * Series per scrape are then at most (top + 1) x (fault classes x 2 +
 * latency buckets + system calls x 2 + 3) plus 3 per CPU per recording.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serve.h"

#define LAT_MAX		34	/* buckets le 2^1 .. 2^35 ns (~34 s), then +Inf */

struct mproc {
	char pid[24];
	char comm[64];
	json_t *faults;		/* class -> [minor, major] */
	json_t *calls;		/* syscall -> [ok, error] */
	__u64 lat[LAT_MAX + 1];	/* [LAT_MAX]: the slower ones */
	double lat_sum_ns;	/* estimated: midpoints of the buckets */
	__u64 mapped, unmapped, rss, weight;
};

struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < b->cap - b->len) {
			b->len += n;
			return;
		}
		b->cap = b->cap * 2 + n + 64;
		b->s = realloc(b->s, b->cap);
		if (!b->s) {
			b->oom = true;
			return;
		}
	}
}

/* Label values: backslash, double quote and newline escaped. */
static void esc(char *out, size_t size, const char *in)
{
	size_t o = 0;

	for (; *in && o + 3 < size; in++) {
		if (*in == '\\' || *in == '"') {
			out[o++] = '\\';
			out[o++] = *in;
		} else if (*in == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *in;
		}
	}
	out[o] = 0;
}

static void add_pair(json_t *obj, const char *key, __u64 a, __u64 b)
{
	json_t *e = json_object_get(obj, key);

	if (!e) {
		json_object_set_new(obj, key, json_pack("[II]", (json_int_t)a, (json_int_t)b));
		return;
	}
	json_array_set_new(e, 0, json_integer(json_integer_value(json_array_get(e, 0)) + a));
	json_array_set_new(e, 1, json_integer(json_integer_value(json_array_get(e, 1)) + b));
}

static __u64 ival(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 0;
}

static void merge(struct mproc *m, json_t *p)
{
	json_t *v, *lat = json_object_get(p, "fault_latency");
	const char *k;
	size_t i;

	json_object_foreach(json_object_get(p, "faults"), k, v) {
		add_pair(m->faults, k, ival(v, "minor"), ival(v, "major"));
		m->weight += ival(v, "minor") + ival(v, "major");
	}
	json_object_foreach(json_object_get(p, "calls"), k, v) {
		__u64 n = ival(v, "count"), f = ival(v, "failed");

		add_pair(m->calls, k, n > f ? n - f : 0, f);
		m->weight += n;
	}
	json_array_foreach(lat, i, v) {
		__u64 ge = ival(v, "ge_ns"), n = ival(v, "count");
		unsigned int b = 0;

		while (b < LAT_MAX && (2ULL << b) <= ge)
			b++;
		m->lat[b] += n;
		m->lat_sum_ns += (double)n * (ge ? ge * 1.5 : 1.0);
	}
	m->mapped += ival(p, "bytes_mapped");
	m->unmapped += ival(p, "bytes_unmapped");
	m->rss += ival(p, "peak_rss_seen");
}

static void fold(struct mproc *into, struct mproc *m)
{
	json_t *v;
	const char *k;
	unsigned int b;

	json_object_foreach(m->faults, k, v)
		add_pair(into->faults, k, json_integer_value(json_array_get(v, 0)),
			 json_integer_value(json_array_get(v, 1)));
	json_object_foreach(m->calls, k, v)
		add_pair(into->calls, k, json_integer_value(json_array_get(v, 0)),
			 json_integer_value(json_array_get(v, 1)));
	for (b = 0; b <= LAT_MAX; b++)
		into->lat[b] += m->lat[b];
	into->lat_sum_ns += m->lat_sum_ns;
	into->mapped += m->mapped;
	into->unmapped += m->unmapped;
	into->rss += m->rss;
}

static int by_weight(const void *a, const void *b)
{
	const struct mproc *x = a, *y = b;

	return (x->weight < y->weight) - (x->weight > y->weight);
}

static void head(struct buf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *serve_metrics_text(const struct metrics_input *in, size_t n, unsigned int top,
			 unsigned int sessions, unsigned long long requests)
{
	struct buf b = { 0 };
	struct mproc *ps = NULL, other = { .pid = "other", .comm = "other" };
	size_t np = 0, i, j, shown, folded = 0;
	char lab[256], ec[160];
	unsigned int c, k;
	json_t *v;
	const char *key;

	other.faults = json_object();
	other.calls = json_object();
	for (i = 0; i < n; i++) {
		json_t *procs = json_object_get(in[i].report, "processes"), *p;

		json_array_foreach(procs, j, p) {
			char pid[24];
			const char *exe = json_string_value(json_object_get(p, "exe"));
			size_t q;

			snprintf(pid, sizeof(pid), "%lld",
				 (long long)json_integer_value(json_object_get(p, "tgid")));
			for (q = 0; q < np && strcmp(ps[q].pid, pid); q++)
				;
			if (q == np) {
				struct mproc *nps = realloc(ps, (np + 1) * sizeof(*ps));

				if (!nps)
					goto oom;
				ps = nps;
				memset(&ps[np], 0, sizeof(ps[np]));
				snprintf(ps[np].pid, sizeof(ps[np].pid), "%s", pid);
				snprintf(ps[np].comm, sizeof(ps[np].comm), "%s",
					 exe ? (strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe) : "");
				ps[np].faults = json_object();
				ps[np].calls = json_object();
				np++;
			}
			merge(&ps[q], p);
		}
	}
	if (np)
		qsort(ps, np, sizeof(*ps), by_weight);
	shown = np < top ? np : top;
	for (i = shown; i < np; i++) {
		fold(&other, &ps[i]);
		folded++;
	}
	if (folded) {
		struct mproc *nps = realloc(ps, (shown + 1) * sizeof(*ps));

		if (!nps)
			goto oom;
		ps = nps;
		for (i = shown; i < np; i++) {
			json_decref(ps[i].faults);
			json_decref(ps[i].calls);
		}
		ps[shown] = other;
		other.faults = other.calls = NULL;
		np = shown + 1;
	} else {
		np = shown;
	}

	head(&b, "memmon_sessions", "gauge", "Recordings running now.");
	put(&b, "memmon_sessions %u\n", sessions);
	head(&b, "memmon_http_requests_total", "counter", "Requests the server received.");
	put(&b, "memmon_http_requests_total %llu\n", requests);
	head(&b, "memmon_processes_folded", "gauge",
	     "Processes summed into the pid=\"other\" series (beyond the top N).");
	put(&b, "memmon_processes_folded %zu\n", folded);

	head(&b, "memmon_cpu_events_produced_total", "counter",
	     "Events the kernel produced for a recording, per CPU (delivered + lost).");
	for (i = 0; i < n; i++)
		for (c = 0; in[i].st && c < in[i].st->nr_cpus; c++)
			put(&b, "memmon_cpu_events_produced_total{recording=\"%s\",cpu=\"%u\"} %llu\n",
			    in[i].recording, c, (unsigned long long)(in[i].st->delivered[c] +
								     in[i].st->lost[c]));
	head(&b, "memmon_cpu_events_delivered_total", "counter",
	     "Events written to a recording's file, per CPU.");
	for (i = 0; i < n; i++)
		for (c = 0; in[i].st && c < in[i].st->nr_cpus; c++)
			put(&b, "memmon_cpu_events_delivered_total{recording=\"%s\",cpu=\"%u\"} %llu\n",
			    in[i].recording, c, (unsigned long long)in[i].st->delivered[c]);
	head(&b, "memmon_cpu_events_lost_total", "counter",
	     "Events dropped for a recording (ring full), per CPU.");
	for (i = 0; i < n; i++)
		for (c = 0; in[i].st && c < in[i].st->nr_cpus; c++)
			put(&b, "memmon_cpu_events_lost_total{recording=\"%s\",cpu=\"%u\"} %llu\n",
			    in[i].recording, c, (unsigned long long)in[i].st->lost[c]);

	head(&b, "memmon_faults_total", "counter",
	     "Page faults of a watched process by fault class and kind.");
	for (i = 0; i < np; i++) {
		esc(ec, sizeof(ec), ps[i].comm);
		snprintf(lab, sizeof(lab), "pid=\"%s\",comm=\"%s\"", ps[i].pid, ec);
		json_object_foreach(ps[i].faults, key, v) {
			put(&b, "memmon_faults_total{%s,class=\"%s\",kind=\"minor\"} %lld\n",
			    lab, key, (long long)json_integer_value(json_array_get(v, 0)));
			put(&b, "memmon_faults_total{%s,class=\"%s\",kind=\"major\"} %lld\n",
			    lab, key, (long long)json_integer_value(json_array_get(v, 1)));
		}
	}
	head(&b, "memmon_fault_latency_seconds", "histogram",
	     "Page fault handling time of a watched process (_sum estimated from "
	     "bucket midpoints).");
	for (i = 0; i < np; i++) {
		__u64 cum = 0;

		esc(ec, sizeof(ec), ps[i].comm);
		snprintf(lab, sizeof(lab), "pid=\"%s\",comm=\"%s\"", ps[i].pid, ec);
		for (k = 0; k < LAT_MAX; k++) {
			cum += ps[i].lat[k];
			put(&b, "memmon_fault_latency_seconds_bucket{%s,le=\"%.9g\"} %llu\n",
			    lab, (double)(2ULL << k) / 1e9, (unsigned long long)cum);
		}
		cum += ps[i].lat[LAT_MAX];
		put(&b, "memmon_fault_latency_seconds_bucket{%s,le=\"+Inf\"} %llu\n",
		    lab, (unsigned long long)cum);
		put(&b, "memmon_fault_latency_seconds_sum{%s} %.9g\n", lab,
		    ps[i].lat_sum_ns / 1e9);
		put(&b, "memmon_fault_latency_seconds_count{%s} %llu\n", lab,
		    (unsigned long long)cum);
	}
	head(&b, "memmon_syscalls_total", "counter",
	     "Memory system calls of a watched process by name and result.");
	for (i = 0; i < np; i++) {
		esc(ec, sizeof(ec), ps[i].comm);
		snprintf(lab, sizeof(lab), "pid=\"%s\",comm=\"%s\"", ps[i].pid, ec);
		json_object_foreach(ps[i].calls, key, v) {
			put(&b, "memmon_syscalls_total{%s,syscall=\"%s\",result=\"ok\"} %lld\n",
			    lab, key, (long long)json_integer_value(json_array_get(v, 0)));
			put(&b, "memmon_syscalls_total{%s,syscall=\"%s\",result=\"error\"} %lld\n",
			    lab, key, (long long)json_integer_value(json_array_get(v, 1)));
		}
	}
	head(&b, "memmon_mapped_bytes_total", "counter",
	     "Bytes a watched process mapped (mmap, brk, mremap growth).");
	for (i = 0; i < np; i++) {
		esc(ec, sizeof(ec), ps[i].comm);
		put(&b, "memmon_mapped_bytes_total{pid=\"%s\",comm=\"%s\"} %llu\n",
		    ps[i].pid, ec, (unsigned long long)ps[i].mapped);
	}
	head(&b, "memmon_unmapped_bytes_total", "counter",
	     "Bytes a watched process unmapped.");
	for (i = 0; i < np; i++) {
		esc(ec, sizeof(ec), ps[i].comm);
		put(&b, "memmon_unmapped_bytes_total{pid=\"%s\",comm=\"%s\"} %llu\n",
		    ps[i].pid, ec, (unsigned long long)ps[i].unmapped);
	}
	head(&b, "memmon_rss_peak_bytes", "gauge",
	     "Largest resident set size of a watched process seen in its recording.");
	for (i = 0; i < np; i++) {
		esc(ec, sizeof(ec), ps[i].comm);
		put(&b, "memmon_rss_peak_bytes{pid=\"%s\",comm=\"%s\"} %llu\n",
		    ps[i].pid, ec, (unsigned long long)ps[i].rss);
	}
	for (i = 0; i < np; i++) {
		json_decref(ps[i].faults);
		json_decref(ps[i].calls);
	}
	free(ps);
	json_decref(other.faults);
	json_decref(other.calls);
	if (b.oom)
		return NULL;
	return b.s ? b.s : strdup("");
oom:
	for (i = 0; i < np; i++) {
		json_decref(ps[i].faults);
		json_decref(ps[i].calls);
	}
	free(ps);
	json_decref(other.faults);
	json_decref(other.calls);
	free(b.s);
	return NULL;
}

char *serve_metrics(struct serve *sv)
{
	struct metrics_input in[64] = { { 0 } };
	struct rec_stats st[64];
	char names[64][SERVE_NAME_MAX + 1];
	unsigned int sessions;
	struct rec *r;
	size_t n = 0, i;
	char *text;

	pthread_mutex_lock(&sv->lock);
	sessions = sv->running;
	for (r = sv->recs; r && n < 64; r = r->next)
		if (r->state == REC_RUNNING)
			snprintf(names[n++], sizeof(names[0]), "%s", r->name);
	pthread_mutex_unlock(&sv->lock);
	for (i = 0; i < n; i++) {
		char path[4200], *out = NULL, *args[4] = { "report", "--json", path, NULL };
		size_t len = 0;

		serve_rec_path(sv, names[i], 0, path, sizeof(path));
		memset(&in[i], 0, sizeof(in[i]));
		in[i].recording = names[i];
		in[i].running = true;
		if (!serve_rec_read_stats(path, &st[i]) || st[i].delivered)
			in[i].st = &st[i];
		if (serve_run_tool(sv, args, &out, &len) == 0)
			in[i].report = json_loadb(out, len, 0, NULL);
		free(out);
	}
	text = serve_metrics_text(in, n, sv->cfg.metrics_top, sessions,
				  __atomic_load_n(&sv->requests, __ATOMIC_RELAXED));
	for (i = 0; i < n; i++) {
		json_decref(in[i].report);
		if (in[i].st)
			serve_rec_stats_free(&st[i]);
	}
	return text;
}
