// SPDX-License-Identifier: GPL-2.0
/*
 * `memmon report --json`'s view of the model (report_model.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "report_model.h"

static json_t *region_json(const struct report *rp, const struct region *r)
{
	char addr[24], prot[4];
	json_t *o = json_object();

	snprintf(addr, sizeof(addr), "%#llx", (unsigned long long)r->start);
	report_prot_str(prot, r->prot);
	json_object_set_new(o, "addr", json_string(addr));
	json_object_set_new(o, "size", json_integer((json_int_t)(r->end - r->start)));
	json_object_set_new(o, "prot", json_string(prot));
	json_object_set_new(o, "what", json_string(report_region_what(rp, r)));
	json_object_set_new(o, "mapped_ns", json_integer((json_int_t)r->mapped_ns));
	json_object_set_new(o, "faults", json_integer((json_int_t)r->faults));
	json_object_set_new(o, "major_faults", json_integer((json_int_t)r->major));
	return o;
}

/* The site's frames as sym_fprint_stack_json() writes them. */
static json_t *stack_json(const struct site *site)
{
	char *buf = NULL;
	size_t len = 0;
	json_t *j = NULL;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return json_array();
	int err = sym_fprint_stack_json(m, site->frame, site->nr, false);

	if (!(fclose(m) | err))
		j = json_loadb(buf, len, 0, NULL);
	free(buf);
	return j ? j : json_array();
}

static json_t *leaks_json(const struct report *rp, const struct report_proc *p)
{
	json_t *o = json_object(), *g = json_array(), *f = json_array();
	json_t *st = json_array();
	struct leak_split ls;
	size_t i;

	if (report_proc_split(p, &ls))
		return o;
	for (i = 0; i < ls.nr_groups; i++) {
		const struct leak_group *lg = &ls.groups[i];
		const struct site *site = sites_get(&rp->sites, lg->site);
		char prot[4];
		json_t *one;

		report_prot_str(prot, lg->prot);
		if (site) {
			one = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:o}",
				"what", leak_kind_name(lg->kind), "size", (json_int_t)lg->size,
				"count", (json_int_t)lg->count, "bytes", (json_int_t)lg->bytes,
				"first_ns", (json_int_t)lg->first_ns,
				"last_ns", (json_int_t)lg->last_ns,
				"stack", stack_json(site));
			if (one)
				json_object_set_new(one, "call_site", json_integer(site->at));
			json_array_append_new(g, one);
			continue;
		}
		json_array_append_new(g, json_pack("{s:s,s:I,s:s,s:i,s:I,s:I,s:I,s:I}",
			"what", leak_kind_name(lg->kind), "size", (json_int_t)lg->size,
			"prot", prot, "flags", (int)lg->flags,
			"count", (json_int_t)lg->count, "bytes", (json_int_t)lg->bytes,
			"first_ns", (json_int_t)lg->first_ns,
			"last_ns", (json_int_t)lg->last_ns));
	}
	for (i = 0; i < ls.nr_files; i++) {
		json_t *r = region_json(rp, &ls.files[i]);

		json_object_set_new(r, "image_bss", json_boolean(ls.files[i].image));
		json_array_append_new(f, r);
	}
	for (i = 0; i < ls.nr_startup; i++)
		json_array_append_new(st, region_json(rp, &ls.startup[i]));
	json_object_set_new(o, "grouped_by", json_string(
		ls.nr_groups && ls.groups[0].site ? rp->sites.full ? "kind,stack" :
		"kind,call_site" : "kind,size,prot,flags"));
	json_object_set_new(o, "count", json_integer((json_int_t)ls.leak_count));
	json_object_set_new(o, "bytes", json_integer((json_int_t)ls.leak_bytes));
	json_object_set_new(o, "groups", g);
	json_object_set_new(o, "file_mappings", f);
	json_object_set_new(o, "file_bytes", json_integer((json_int_t)ls.file_bytes));
	json_object_set_new(o, "startup", st);
	json_object_set_new(o, "startup_bytes", json_integer((json_int_t)ls.startup_bytes));
	leak_split_free(&ls);
	return o;
}

static json_t *growth_json(const struct growth *g)
{
	struct growth_stats st;
	json_t *o = json_object();

	growth_stats(g, &st);
	if (!st.have)
		return o;
	json_object_set_new(o, "first_ns", json_integer((json_int_t)st.first_ns));
	json_object_set_new(o, "last_ns", json_integer((json_int_t)st.last_ns));
	json_object_set_new(o, "first", json_integer((json_int_t)st.first));
	json_object_set_new(o, "last", json_integer((json_int_t)st.last));
	json_object_set_new(o, "peak", json_integer((json_int_t)st.peak));
	json_object_set_new(o, "bytes_per_s", json_real(st.slope));
	if (st.have_window) {
		json_object_set_new(o, "steepest_start_ns",
				    json_integer((json_int_t)st.win_start_ns));
		json_object_set_new(o, "steepest_end_ns",
				    json_integer((json_int_t)st.win_end_ns));
		json_object_set_new(o, "steepest_bytes", json_integer(st.win_delta));
		json_object_set_new(o, "steepest_bytes_per_s", json_real(st.win_slope));
	}
	return o;
}

static json_t *proc_json(const struct report *rp, const struct report_proc *p)
{
	json_t *o = json_object(), *calls = json_object(), *f = json_object();
	json_t *lat = json_array(), *hot = json_array(), *leaks = json_array();
	struct region *list;
	unsigned int i, c;
	size_t n;

	json_object_set_new(o, "tgid", json_integer(p->tgid));
	if (p->parent)
		json_object_set_new(o, "parent", json_integer(p->parent));
	if (p->exe)
		json_object_set_new(o, "exe", json_string(p->exe));
	if (p->comm[0])
		json_object_set_new(o, "comm", json_string(p->comm));
	json_object_set_new(o, "exited", json_boolean(p->exited));
	if (p->exited) {
		json_object_set_new(o, "exit_status", json_integer(p->exit_code));
		json_object_set_new(o, "peak_vm_kernel",
				    json_integer((json_int_t)p->peak_vm_kernel));
		json_object_set_new(o, "peak_rss_kernel",
				    json_integer((json_int_t)p->peak_rss_kernel));
	}
	json_object_set_new(o, "first_ns", json_integer((json_int_t)p->first_ns));
	json_object_set_new(o, "last_ns", json_integer((json_int_t)p->last_ns));
	for (i = 0; i < MEMMON_SYS__COUNT; i++) {
		json_t *e;

		if (!p->calls[i])
			continue;
		e = json_object();
		json_object_set_new(e, "count", json_integer((json_int_t)p->calls[i]));
		json_object_set_new(e, "failed", json_integer((json_int_t)p->failed[i]));
		json_object_set_new(e, "bytes", json_integer((json_int_t)p->call_bytes[i]));
		json_object_set_new(calls, memmon_sys__name(i), e);
	}
	json_object_set_new(o, "calls", calls);
	json_object_set_new(o, "bytes_mapped", json_integer((json_int_t)p->mapped));
	json_object_set_new(o, "bytes_unmapped", json_integer((json_int_t)p->unmapped));
	json_object_set_new(o, "bytes_locked", json_integer((json_int_t)p->locked));
	json_object_set_new(o, "bytes_unlocked", json_integer((json_int_t)p->unlocked));
	json_object_set_new(o, "peak_vm_traced", json_integer((json_int_t)p->vm_peak));
	json_object_set_new(o, "peak_rss_seen", json_integer((json_int_t)p->rss_peak));
	for (c = 0; c <= MEMMON_FCLASS_OTHER + 1; c++) {
		const char *cn = memmon_fault_class__name(c);
		json_t *e;

		if (!p->faults[c][0] && !p->faults[c][1])
			continue;
		e = json_object();
		json_object_set_new(e, "minor", json_integer((json_int_t)p->faults[c][0]));
		json_object_set_new(e, "major", json_integer((json_int_t)p->faults[c][1]));
		json_object_set_new(f, cn ? cn : "unknown", e);
	}
	json_object_set_new(o, "faults_total", json_integer((json_int_t)p->faults_total));
	json_object_set_new(o, "faults", f);
	/* by result: "handled" is what the kernel's fault counters count */
	f = json_object();
	for (c = 0; c <= MEMMON_FRES_OTHER + 1; c++) {
		const char *rn = memmon_fault_result__name(c);

		if (p->results[c])
			json_object_set_new(f, rn ? rn : "unknown",
					    json_integer((json_int_t)p->results[c]));
	}
	json_object_set_new(o, "fault_results", f);
	for (i = 0; i < REPORT_LAT_BUCKETS; i++) {
		json_t *e;

		if (!p->lat[i])
			continue;
		e = json_object();
		json_object_set_new(e, "ge_ns", json_integer(i ? (json_int_t)(1ULL << i) : 0));
		json_object_set_new(e, "lt_ns", json_integer((json_int_t)(2ULL << i)));
		json_object_set_new(e, "count", json_integer((json_int_t)p->lat[i]));
		json_array_append_new(lat, e);
	}
	json_object_set_new(o, "fault_latency", lat);
	list = report_hot_list(p, &n);
	for (i = 0; list && i < n; i++)
		json_array_append_new(hot, region_json(rp, &list[i]));
	free(list);
	json_object_set_new(o, "hottest_regions", hot);
	for (i = 0; i < p->map.len; i++) {
		struct region r;

		if (!region_map_live(&p->map, i))
			continue;
		region_map_get(&p->map, i, &r);
		json_array_append_new(leaks, region_json(rp, &r));
	}
	json_object_set_new(o, "still_mapped", leaks);
	json_object_set_new(o, "syscall_latency", lat_json(&p->sys_lat));
	json_object_set_new(o, "leaks", leaks_json(rp, p));
	json_object_set_new(o, "growth", json_pack("{s:o,s:o}",
		"rss", growth_json(&p->rss_g),
		"anon_mapped", growth_json(&p->anon_g)));
	return o;
}

void report_print_json(const struct report *rp, const struct memmon_trace_info *in,
		       const char *meta_text, long records, size_t shown)
{
	json_t *o = json_object(), *procs = json_array(), *l = json_array();
	json_t *meta = json_loads(meta_text, 0, NULL);
	unsigned int c;
	size_t i;

	json_object_set_new(o, "file", json_string(rp->path));
	json_object_set_new(o, "truncated", json_boolean(in->truncated));
	json_object_set_new(o, "records", json_integer(records));
	json_object_set_new(o, "meta", meta ? meta : json_object());
	for (c = 0; c < rp->nr_cpus; c++)
		json_array_append_new(l, json_integer((json_int_t)rp->lost[c]));
	json_object_set_new(o, "lost_per_cpu", l);
	json_object_set_new(o, "lost", json_integer((json_int_t)report_lost_total(rp)));
	for (i = 0; i < shown; i++)
		json_array_append_new(procs, proc_json(rp, rp->list[i]));
	json_object_set_new(o, "processes", procs);
	json_dumpf(o, stdout, JSON_INDENT(1));
	putchar('\n');
	json_decref(o);
}
