// SPDX-License-Identifier: GPL-2.0
/*
 * `memmon report`'s text view of the model (report_model.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <memmon/trace.h>
#include "report_model.h"

#define LEAKS_SHOWN	20

static const char *human(char *buf, size_t n, __u64 v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	unsigned int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, n, "%llu B", (unsigned long long)v);
	else
		snprintf(buf, n, "%.1f %s", d, unit[u]);
	return buf;
}

static void fmt_time(const struct report *rp, __u64 t, char *buf, size_t n)
{
	__s64 rt = (__s64)t + rp->rt_off;
	time_t sec = (time_t)(rt / 1000000000);
	struct tm tm;

	if (!rp->rt_off || rt < 0) {
		snprintf(buf, n, "%.6f", t / 1e9);
		return;
	}
	localtime_r(&sec, &tm);
	snprintf(buf, n, "%02d:%02d:%02d.%06lld", tm.tm_hour, tm.tm_min,
		 tm.tm_sec, (long long)(rt % 1000000000 / 1000));
}

static void print_leaks(const struct report *rp, const struct report_proc *p)
{
	const char *when = p->exited ? "exit" : "the end of the trace";
	char b1[32], b2[32], t1[32], t2[32], prot[4];
	const struct site *site;
	struct leak_split ls;
	size_t i;

	if (!p->map.nr)
		return;
	if (report_proc_split(p, &ls)) {
		fprintf(stderr, "memmon report: out of memory\n");
		return;
	}
	printf("  leak candidates: anonymous and heap memory never released at %s: "
	       "%llu regions, %s\n", when, (unsigned long long)ls.leak_count,
	       human(b1, sizeof(b1), ls.leak_bytes));
	if (ls.nr_groups && !ls.groups[0].site)
		printf("    (no call sites in this trace: grouped by kind, size, "
		       "prot and flags)\n");
	for (i = 0; i < ls.nr_groups && i < LEAKS_SHOWN; i++) {
		const struct leak_group *g = &ls.groups[i];

		report_prot_str(prot, g->prot);
		fmt_time(rp, g->first_ns, t1, sizeof(t1));
		fmt_time(rp, g->last_ns, t2, sizeof(t2));
		site = sites_get(&rp->sites, g->site);
		if (site) {
			char name[512];
			const struct sym_frame *at = &site->frame[site->at];

			printf("    %-14s %s", leak_kind_name(g->kind),
			       sym_frame_name(name, sizeof(name), at));
			if (at->file && at->status == SYM_OK)
				printf(" (%s)", at->file);
			if (g->size)
				printf("  %llu x %s", (unsigned long long)g->count,
				       human(b1, sizeof(b1), g->size));
			else
				printf("  %llu regions", (unsigned long long)g->count);
			printf(" = %llu bytes (%s), mapped %s .. %s\n",
			       (unsigned long long)g->bytes,
			       human(b2, sizeof(b2), g->bytes), t1, t2);
			fflush(stdout);
			sym_fprint_stack(stdout, site->frame, site->nr, false);
			continue;
		}
		printf("    %-14s %s flags %#x  %llu x %s = %llu bytes (%s), "
		       "mapped %s .. %s\n", leak_kind_name(g->kind), prot, g->flags,
		       (unsigned long long)g->count, human(b1, sizeof(b1), g->size),
		       (unsigned long long)g->bytes, human(b2, sizeof(b2), g->bytes),
		       t1, t2);
	}
	if (ls.nr_groups > LEAKS_SHOWN)
		printf("    ... %zu more groups\n", ls.nr_groups - LEAKS_SHOWN);
	if (ls.nr_files)
		printf("  file mappings still mapped at %s (libraries, data; not "
		       "leaks): %zu regions, %s\n", when, ls.nr_files,
		       human(b1, sizeof(b1), ls.file_bytes));
	for (i = 0; i < ls.nr_files && i < LEAKS_SHOWN; i++) {
		report_prot_str(prot, ls.files[i].prot);
		printf("    %#llx %10s %s %s%s\n",
		       (unsigned long long)ls.files[i].start,
		       human(b1, sizeof(b1), ls.files[i].end - ls.files[i].start),
		       prot, report_region_what(rp, &ls.files[i]),
		       ls.files[i].image ? " (its .bss)" : "");
	}
	if (ls.nr_files > LEAKS_SHOWN)
		printf("    ... %zu more\n", ls.nr_files - LEAKS_SHOWN);
	if (ls.nr_startup)
		printf("  startup memory (anonymous, mapped while the loader ran; "
		       "not leaks): %zu regions, %s\n", ls.nr_startup,
		       human(b1, sizeof(b1), ls.startup_bytes));
	leak_split_free(&ls);
}

static void print_growth(const struct report *rp, const char *what,
			 const struct growth *g)
{
	struct growth_stats st;
	char b1[32], b2[32], b3[32], b4[32];

	(void)rp;
	growth_stats(g, &st);
	if (!st.have)
		return;
	printf("  %s growth: %s -> %s (peak %s) over %.6f s: %s%s/s\n", what,
	       human(b1, sizeof(b1), st.first), human(b2, sizeof(b2), st.last),
	       human(b3, sizeof(b3), st.peak), (st.last_ns - st.first_ns) / 1e9,
	       st.slope < 0 ? "-" : "+",
	       human(b4, sizeof(b4), (__u64)(st.slope < 0 ? -st.slope : st.slope)));
	if (st.have_window && st.win_delta > 0)
		printf("    steepest: +%s in [%.6f s, %.6f s] of the run: +%s/s\n",
		       human(b1, sizeof(b1), (__u64)st.win_delta),
		       (st.win_start_ns - st.first_ns) / 1e9,
		       (st.win_end_ns - st.first_ns) / 1e9,
		       human(b2, sizeof(b2), (__u64)st.win_slope));
}

static void print_proc(const struct report *rp, const struct report_proc *p)
{
	char b1[32], b2[32], b3[32], t[32], prot[4];
	struct region *list;
	unsigned int i, c;
	size_t n;
	__u64 max = 0;

	printf("\nprocess %u", p->tgid);
	if (p->comm[0])
		printf(" %s", p->comm);
	if (p->exe)
		printf(" (%s)", p->exe);
	if (p->parent)
		printf(", child of %u", p->parent);
	if (p->exited) {
		memmon_wait_status__format(b1, sizeof(b1), p->exit_code);
		printf(", %s", b1);
	} else {
		printf(", alive at the end of the trace");
	}
	printf(", %.6f s traced\n", (p->last_ns - p->first_ns) / 1e9);

	printf("  %-12s %10s %8s %12s\n", "call", "count", "failed", "bytes");
	for (i = 0; i < MEMMON_SYS__COUNT; i++)
		if (p->calls[i])
			printf("  %-12s %10llu %8llu %12s\n", memmon_sys__name(i),
			       (unsigned long long)p->calls[i],
			       (unsigned long long)p->failed[i],
			       human(b1, sizeof(b1), p->call_bytes[i]));
	printf("  mapped %s, unmapped %s, locked %s, unlocked %s\n",
	       human(b1, sizeof(b1), p->mapped), human(b2, sizeof(b2), p->unmapped),
	       human(b3, sizeof(b3), p->locked), human(t, sizeof(t), p->unlocked));
	printf("  peak virtual size (traced mappings) %s", human(b1, sizeof(b1), p->vm_peak));
	if (p->exited && p->peak_vm_kernel)
		printf("; at exit the kernel's peak_vm %s, peak_rss %s",
		       human(b2, sizeof(b2), p->peak_vm_kernel),
		       human(b3, sizeof(b3), p->peak_rss_kernel));
	else if (p->rss_peak)
		printf("; peak rss seen %s", human(b2, sizeof(b2), p->rss_peak));
	printf("\n");

	if (p->faults_total) {
		printf("  faults %llu\n", (unsigned long long)p->faults_total);
		for (c = 0; c <= MEMMON_FCLASS_OTHER + 1; c++) {
			const char *cn = memmon_fault_class__name(c);

			if (p->faults[c][0] || p->faults[c][1])
				printf("    %-8s minor %10llu  major %10llu\n",
				       cn ? cn : "unknown",
				       (unsigned long long)p->faults[c][0],
				       (unsigned long long)p->faults[c][1]);
		}
		printf("    results:");
		for (c = 0; c <= MEMMON_FRES_OTHER + 1; c++) {
			const char *rn = memmon_fault_result__name(c);

			if (p->results[c])
				printf(" %s %llu", rn ? rn : "unknown",
				       (unsigned long long)p->results[c]);
		}
		printf("\n  fault latency (log2 buckets)\n");
		for (i = 0; i < REPORT_LAT_BUCKETS; i++)
			if (p->lat[i] > max)
				max = p->lat[i];
		for (i = 0; i < REPORT_LAT_BUCKETS; i++) {
			int bar;

			if (!p->lat[i])
				continue;
			bar = (int)(p->lat[i] * 40 / (max ? max : 1));
			printf("    [%9llu ns, %9llu ns) %10llu |%.*s\n",
			       i ? 1ULL << i : 0ULL, 2ULL << i,
			       (unsigned long long)p->lat[i], bar ? bar : 1,
			       "########################################");
		}
		list = report_hot_list(p, &n);
		if (n)
			printf("  hottest regions by faults\n");
		for (i = 0; list && i < n; i++) {
			report_prot_str(prot, list[i].prot);
			printf("    %#llx-%#llx %10s %s %-24s faults %llu (major %llu)\n",
			       (unsigned long long)list[i].start,
			       (unsigned long long)list[i].end,
			       human(b1, sizeof(b1), list[i].end - list[i].start), prot,
			       report_region_what(rp, &list[i]),
			       (unsigned long long)list[i].faults,
			       (unsigned long long)list[i].major);
		}
		free(list);
	}

	if (p->sys_lat.count) {
		printf("  syscall latency (p50/p99: log-linear buckets, at most "
		       "6.25%% low)\n");
		lat_print(stdout, &p->sys_lat, "    ");
	}
	print_leaks(rp, p);
	print_growth(rp, "rss", &p->rss_g);
	print_growth(rp, "anonymous mapped", &p->anon_g);
}

void report_print_text(const struct report *rp, const struct memmon_trace_info *in,
		       long records, size_t shown)
{
	unsigned long long lost = report_lost_total(rp);
	unsigned int c;
	size_t i;

	printf("memmon report: %s: %ld records, %u CPUs, %llu chunks%s\n",
	       rp->path, records, in->nr_cpus, (unsigned long long)in->nr_chunks,
	       in->truncated ? " (truncated)" : "");
	printf("lost events: %llu", lost);
	for (c = 0; lost && c < rp->nr_cpus; c++)
		if (rp->lost[c])
			printf(" cpu%u=%llu", c, (unsigned long long)rp->lost[c]);
	printf("\n");
	for (i = 0; i < shown; i++)
		print_proc(rp, rp->list[i]);
	if (shown < rp->nr_procs)
		printf("\n... %zu more processes (--top %zu)\n",
		       rp->nr_procs - shown, shown);
}
