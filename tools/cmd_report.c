// SPDX-License-Identifier: GPL-2.0
/*
 * memmon report FILE: per process, what it did to its address space.
 *
 * The trace is read in time order (merged across CPUs) in one streaming
 * pass; what is kept is per process and per mapped region, never per
 * record, so a multi-GB trace is summarised in flat memory.
 *
 * The address-space model only knows what the trace shows: mappings made
 * before tracing began are invisible, so "peak virtual size (tracked)" is
 * of the traced mappings, and the kernel's own peak_vm/peak_rss at exit is
 * shown next to it when the process exited during the trace.
 *
 * Syscall latency is report_latency's, the leak split and the growth
 * series report_leaks'; the filters (--pid, --tid, --time) rec_filter's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "builtin.h"
#include "rec_pipe.h"
#include "rec_filter.h"
#include "region_map.h"
#include "report_latency.h"
#include "report_leaks.h"

#define HOT_REGIONS	10
#define LEAKS_SHOWN	20
#define LAT_BUCKETS	64

struct proc {
	/*
	 * What every record touches first (the hash chain, the times), then
	 * what every fault does (the map, the counters): a fault's updates
	 * fall on a few adjacent lines of a struct of ~2 KiB.
	 */
	__u32 tgid;
	__u32 parent;
	struct proc *next;
	__u64 first_ns, last_ns;
	__u64 faults_total;
	struct region_map map;	/* the live regions */
	__u64 faults[MEMMON_FCLASS_OTHER + 2][2];	/* [class][major] */
	__u64 results[MEMMON_FRES_OTHER + 2];
	__u64 lat[LAT_BUCKETS];
	__u64 calls[MEMMON_SYS__COUNT];
	__u64 failed[MEMMON_SYS__COUNT];
	__u64 call_bytes[MEMMON_SYS__COUNT];
	__u64 mapped, unmapped, locked, unlocked;
	__u64 vm_now, vm_peak;
	__u64 rss_peak;
	__u64 marks;
	char *exe;
	char comm[MEMMON_COMM_LEN];	/* the name, "" if none was recorded */
	bool comm_leader;		/* comm is the main thread's */
	bool exited;
	__u32 exit_code;
	__u64 peak_rss_kernel, peak_vm_kernel;
	bool loading;			/* exec'd, the loader not done yet */
	__u64 anon_now;			/* anonymous bytes mapped (the model's) */
	struct lat_set sys_lat;
	struct growth rss_g, anon_g;
	struct region hot[HOT_REGIONS];	/* retired regions, most faults */
	size_t nr_hot;
	size_t hot_min;			/* the fewest faults in a full hot[] */
};

struct report {
	const char *path;
	struct proc *last;		/* the last record's process: a hint */
	struct proc *buckets[1024];
	struct proc **list;
	size_t nr_procs;
	struct memmon_paths *paths;
	__u64 *lost;			/* per CPU, from LOST records */
	unsigned int nr_cpus;
	__s64 rt_off;
	struct rec_filter f;
	int err;
};

static struct proc *proc_get(struct report *rp, __u32 tgid)
{
	struct proc **b = &rp->buckets[tgid % 1024], *p;
	struct proc **nl;

	/* A CPU runs one task for a while: runs of records share one. */
	if (rp->last && rp->last->tgid == tgid)
		return rp->last;
	for (p = *b; p; p = p->next)
		if (p->tgid == tgid)
			return rp->last = p;
	p = calloc(1, sizeof(*p));
	nl = realloc(rp->list, (rp->nr_procs + 1) * sizeof(*nl));
	if (!p || !nl) {
		free(p);
		if (nl)
			rp->list = nl;
		rp->err = -ENOMEM;
		return NULL;
	}
	rp->list = nl;
	rp->list[rp->nr_procs++] = p;
	p->tgid = tgid;
	p->next = *b;
	*b = p;
	return rp->last = p;
}

/*
 * A region goes (unmapped whole): keep it if it is among the HOT_REGIONS
 * with the most faults so far. hot[hot_min] is the coolest kept once the
 * list is full; a region that would not replace it is never read from
 * the map's pool.
 */
static void retire_cb(void *ctx, const struct region_map *m, size_t i)
{
	struct proc *p = ctx;
	__u64 faults = m->count[i].faults;
	size_t k;

	if (!faults)
		return;
	if (p->nr_hot < HOT_REGIONS) {
		region_map_get(m, i, &p->hot[p->nr_hot++]);
	} else {
		if (faults <= p->hot[p->hot_min].faults)
			return;
		region_map_get(m, i, &p->hot[p->hot_min]);
	}
	if (p->nr_hot < HOT_REGIONS)
		return;
	for (k = 1, p->hot_min = 0; k < HOT_REGIONS; k++)
		if (p->hot[k].faults < p->hot[p->hot_min].faults)
			p->hot_min = k;
}

/* The anonymous bytes (not file, not a file's image) mapped in [start, end). */
static __u64 anon_in(const struct region_map *m, __u64 start, __u64 end)
{
	size_t i = region_map_lower(m, start);
	__u64 sum = 0;

	for (; i < m->len && m->starts[i] < end; i++) {
		const struct region *r;

		if (!region_map_live(m, i))
			continue;
		r = &m->pool[m->slot[i]];
		if (r->file || r->image)
			continue;
		sum += (m->ends[i] < end ? m->ends[i] : end) -
		       (m->starts[i] > start ? m->starts[i] : start);
	}
	return sum;
}

/* Unmap [start, end) in p's model; retire: count what goes as hot. */
static int carve(struct proc *p, __u64 start, __u64 end, bool retire)
{
	__u64 anon = anon_in(&p->map, start, end);
	long long gone = region_map_carve(&p->map, start, end,
					  retire ? retire_cb : NULL, p);

	if (gone < 0)
		return (int)gone;
	p->vm_now -= (__u64)gone;
	p->anon_now -= anon < p->anon_now ? anon : p->anon_now;
	return 0;
}

static int map_region(struct proc *p, const struct region *nr)
{
	__u64 anon = anon_in(&p->map, nr->start, nr->end);
	long long gone = -ENOENT;

	/* brk moves the top of the heap: one region grows, as its VMA does */
	if (nr->heap)
		gone = region_map_grow(&p->map, nr->start, nr->end, retire_cb, p);
	if (gone == -ENOENT)
		gone = region_map_insert(&p->map, nr, retire_cb, p);

	if (gone < 0)
		return (int)gone;
	p->vm_now += nr->end - nr->start - (__u64)gone;
	if (p->vm_now > p->vm_peak)
		p->vm_peak = p->vm_now;
	p->anon_now -= anon < p->anon_now ? anon : p->anon_now;
	if (!nr->file && !nr->image)
		p->anon_now += nr->end - nr->start;
	return 0;
}

#define PAGE_ALIGN_UP(x) (((x) + 4095) & ~4095ULL)

static void on_syscall(struct report *rp, struct proc *p,
		       const struct memmon_rec_syscall *sc)
{
	const __u64 *a = sc->args;
	bool ok = !(sc->ret < 0 && sc->ret >= -4095);
	struct region nr;

	if (sc->sys >= MEMMON_SYS__COUNT)
		return;
	p->calls[sc->sys]++;
	rp->err = lat_add(&p->sys_lat, sc->sys, sc->duration_ns, !ok) ?: rp->err;
	if (!ok) {
		p->failed[sc->sys]++;
		return;
	}
	memset(&nr, 0, sizeof(nr));
	nr.mapped_ns = sc->hdr.time_ns;
	switch (sc->sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
	case MEMMON_SYS_OLD_MMAP:
		nr.start = (__u64)sc->ret;
		nr.end = nr.start + PAGE_ALIGN_UP(a[1]);
		if (sc->sys == MEMMON_SYS_OLD_MMAP)
			nr.end = nr.start;	/* args not in registers */
		nr.prot = (__u32)a[2];
		nr.flags = (__u32)a[3];
		nr.file = sc->flags & MEMMON_SYSF_FILE;
		nr.dev = sc->aux[0];
		nr.ino = sc->aux[1];
		if (!nr.file && nr.flags & 0x10) {	/* MAP_FIXED */
			long over = region_map_find(&p->map, nr.start);
			struct region o;

			if (over >= 0) {
				region_map_get(&p->map, (size_t)over, &o);
				if (o.file || o.image) {
					/* ld.so's .bss after a library's data */
					nr.image = true;
					nr.dev = o.dev;
					nr.ino = o.ino;
				}
			}
		}
		nr.startup = !nr.file && !nr.image && p->loading;
		p->call_bytes[sc->sys] += nr.end - nr.start;
		p->mapped += nr.end - nr.start;
		rp->err = map_region(p, &nr) ?: rp->err;
		break;
	case MEMMON_SYS_MUNMAP: {
		long at = region_map_find(&p->map, a[0]);

		/* the loader is done when it drops ld.so.cache (see report_leaks.h) */
		if (at >= 0 && p->map.pool[p->map.slot[at]].file)
			p->loading = false;
		p->call_bytes[sc->sys] += PAGE_ALIGN_UP(a[1]);
		p->unmapped += PAGE_ALIGN_UP(a[1]);
		rp->err = carve(p, a[0], a[0] + PAGE_ALIGN_UP(a[1]), true) ?: rp->err;
		break;
	}
	case MEMMON_SYS_MREMAP: {
		long old = region_map_find(&p->map, a[0]);

		if (old >= 0)
			region_map_get(&p->map, (size_t)old, &nr);
		else
			nr.prot = 3;
		nr.faults = nr.major = 0;
		nr.start = (__u64)sc->ret;
		nr.end = nr.start + PAGE_ALIGN_UP(a[2]);
		nr.mapped_ns = sc->hdr.time_ns;
		p->call_bytes[sc->sys] += PAGE_ALIGN_UP(a[2]);
		if (!(a[3] & 0x4))	/* not MREMAP_DONTUNMAP */
			rp->err = carve(p, a[0], a[0] + PAGE_ALIGN_UP(a[1]), false) ?: rp->err;
		rp->err = map_region(p, &nr) ?: rp->err;
		break;
	}
	case MEMMON_SYS_BRK:
		if (sc->aux[1] > sc->aux[0]) {
			nr.start = PAGE_ALIGN_UP(sc->aux[0]);
			nr.end = PAGE_ALIGN_UP(sc->aux[1]);
			nr.prot = 3;
			nr.heap = true;
			p->loading = false;
			p->mapped += nr.end - nr.start;
			p->call_bytes[sc->sys] += nr.end - nr.start;
			rp->err = map_region(p, &nr) ?: rp->err;
		} else if (sc->aux[1] < sc->aux[0]) {
			__u64 s = PAGE_ALIGN_UP(sc->aux[1]), e = PAGE_ALIGN_UP(sc->aux[0]);

			p->unmapped += e - s;
			p->call_bytes[sc->sys] += e - s;
			rp->err = carve(p, s, e, true) ?: rp->err;
		}
		break;
	case MEMMON_SYS_MLOCK:
	case MEMMON_SYS_MLOCK2:
		p->locked += a[1];
		p->call_bytes[sc->sys] += a[1];
		break;
	case MEMMON_SYS_MUNLOCK:
		p->unlocked += a[1];
		p->call_bytes[sc->sys] += a[1];
		break;
	case MEMMON_SYS_MPROTECT:
		p->call_bytes[sc->sys] += a[1];
		/* Only whole regions change prot here: good enough for the
		 * leak list, which shows the prot regions had at the end.
		 */
		region_map_set_prot(&p->map, a[0], a[0] + a[1], (__u32)a[2]);
		break;
	case MEMMON_SYS_MADVISE:
		p->call_bytes[sc->sys] += a[1];
		break;
	default:
		break;
	}
	rp->err = growth_add(&p->anon_g, sc->hdr.time_ns, p->anon_now) ?: rp->err;
}

static unsigned int log2_bucket(__u64 v)
{
	return v ? 63 - (unsigned int)__builtin_clzll(v) : 0;
}

static void on_fault(struct proc *p, const struct memmon_rec_fault *f)
{
	unsigned int cls = f->fclass <= MEMMON_FCLASS_OTHER ? f->fclass :
			   MEMMON_FCLASS_OTHER + 1;
	bool major = f->flags & MEMMON_FAULTF_MAJOR;

	p->faults_total++;
	p->faults[cls][major]++;
	p->results[f->result <= MEMMON_FRES_OTHER ? f->result : MEMMON_FRES_OTHER + 1]++;
	p->lat[log2_bucket(f->duration_ns)]++;
	region_map_fault(&p->map, f->addr, major);
}

static void on_fork(struct report *rp, struct proc *parent,
		    const struct memmon_rec_fork *f)
{
	struct proc *c;

	if (f->flags & MEMMON_FORKF_THREAD || f->child_tgid == parent->tgid)
		return;
	c = proc_get(rp, f->child_tgid);
	if (!c)
		return;
	c->parent = parent->tgid;
	c->first_ns = f->hdr.time_ns;
	if (parent->exe && !c->exe)
		c->exe = strdup(parent->exe);
	/* A child starts with its creator's name: no COMM record says so. */
	if (!c->comm[0])
		memcpy(c->comm, parent->comm, sizeof(c->comm));
	/* fork copies the address space (CLONE_VM shares it: same model). */
	if (!c->map.nr && parent->map.nr) {
		if (region_map_copy(&c->map, &parent->map)) {
			rp->err = -ENOMEM;
			return;
		}
		c->vm_now = c->vm_peak = parent->vm_now;
		c->anon_now = parent->anon_now;
	}
}

static int report_cb(void *ctx, const struct memmon_rec_header *rec)
{
	struct report *rp = ctx;
	/*
	 * Most records are faults: a whole one (memmon_rec__fault()'s checks)
	 * skips the others' tests and the calls.
	 */
	bool fault = rec->type == MEMMON_REC_FAULT &&
		     rec->size >= sizeof(struct memmon_rec_fault);
	struct proc *p;

	if (!fault) {
		if (rec->type == MEMMON_REC_LOST) {
			const struct memmon_rec_lost *l = memmon_rec__lost(rec);

			if (l && rec->cpu < rp->nr_cpus)
				rp->lost[rec->cpu] += l->count;
			return 0;
		}
		if (rec->type == MEMMON_REC_PATH) {
			memmon_paths__add_rec(rp->paths, rec);
			return 0;
		}
		if (!memmon_rec_type__name(rec->type))
			return 0;	/* a newer record type: skip */
	}
	if (!rec_filter_match(&rp->f, rec))
		return 0;
	p = proc_get(rp, rec->tgid);
	if (!p)
		return rp->err;
	if (!p->first_ns)
		p->first_ns = rec->time_ns;
	p->last_ns = rec->time_ns;
	if (fault) {
		on_fault(p, (const struct memmon_rec_fault *)rec);
		return rp->err;
	}
	switch (rec->type) {
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);

		if (sc)
			on_syscall(rp, p, sc);
		break;
	}
	case MEMMON_REC_FAULT:	/* too short: whole ones were done above */
		break;
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r = memmon_rec__rss(rec);

		if (r && r->anon + r->file + r->shmem > p->rss_peak)
			p->rss_peak = r->anon + r->file + r->shmem;
		if (r)
			rp->err = growth_add(&p->rss_g, rec->time_ns,
					     r->anon + r->file + r->shmem) ?: rp->err;
		break;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = memmon_rec__fork(rec);

		if (f)
			on_fork(rp, p, f);
		break;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = memmon_rec__exec(rec);

		if (e) {
			free(p->exe);
			p->exe = strdup(e->path);
			/* A new address space: the old regions are gone. */
			region_map_clear(&p->map);
			p->vm_now = 0;
			p->anon_now = 0;
			p->loading = true;
		}
		break;
	}
	case MEMMON_REC_COMM: {
		const struct memmon_rec_comm *cm = memmon_rec__comm(rec);

		/* The process is named by its main thread, else any thread. */
		if (cm && (rec->tid == rec->tgid || !p->comm_leader)) {
			memcpy(p->comm, cm->comm, sizeof(p->comm));
			p->comm_leader = rec->tid == rec->tgid;
		}
		break;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x = memmon_rec__exit(rec);

		if (x && x->flags & MEMMON_EXITF_GROUP) {
			p->exited = true;
			p->exit_code = x->code;
			p->peak_rss_kernel = x->peak_rss;
			p->peak_vm_kernel = x->peak_vm;
		}
		break;
	}
	case MEMMON_REC_MARK:
		p->marks++;
		break;
	}
	return rp->err;
}

/* ------------------------------------------------------------------ */
/* Output */

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

static void prot_str(char *b, __u32 prot)
{
	b[0] = prot & 1 ? 'r' : '-';
	b[1] = prot & 2 ? 'w' : '-';
	b[2] = prot & 4 ? 'x' : '-';
	b[3] = '\0';
}

static const char *region_what(const struct report *rp, const struct region *r)
{
	const char *path;

	if (r->heap)
		return "[heap]";
	if (!r->file && !r->image)
		return r->flags & 0x01 ? "[shared anon]" : "[anon]";
	path = memmon_paths__lookup(rp->paths, r->dev, r->ino);
	return path ? path : "[file]";
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

static int cmp_region_faults(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	return x->faults < y->faults ? 1 : x->faults > y->faults ? -1 : 0;
}

/* Hot regions: live and retired, by faults. Caller frees. */
static struct region *hot_list(const struct proc *p, size_t *n)
{
	size_t nr = p->map.nr;
	struct region *all = malloc((nr + p->nr_hot + 1) * sizeof(*all));

	*n = 0;
	if (!all)
		return NULL;
	region_map_export(&p->map, all);
	memcpy(all + nr, p->hot, p->nr_hot * sizeof(*all));
	qsort(all, nr + p->nr_hot, sizeof(*all), cmp_region_faults);
	while (*n < nr + p->nr_hot && *n < HOT_REGIONS && all[*n].faults)
		(*n)++;
	return all;
}

/* The regions still mapped, split (report_leaks.h). Caller frees *ls. */
static int proc_split(const struct proc *p, struct leak_split *ls)
{
	struct region *list = malloc((p->map.nr + 1) * sizeof(*list));
	int ret;

	if (!list)
		return -ENOMEM;
	region_map_export(&p->map, list);
	ret = leak_split(ls, list, p->map.nr);
	free(list);
	return ret;
}

static void print_leaks(const struct report *rp, const struct proc *p)
{
	const char *when = p->exited ? "exit" : "the end of the trace";
	char b1[32], b2[32], t1[32], t2[32], prot[4];
	struct leak_split ls;
	size_t i;

	if (!p->map.nr)
		return;
	if (proc_split(p, &ls)) {
		fprintf(stderr, "memmon report: out of memory\n");
		return;
	}
	printf("  leak candidates: anonymous and heap memory never released at %s: "
	       "%llu regions, %s\n", when, (unsigned long long)ls.leak_count,
	       human(b1, sizeof(b1), ls.leak_bytes));
	if (ls.nr_groups)
		printf("    (no call sites in this trace: grouped by kind, size, "
		       "prot and flags)\n");
	for (i = 0; i < ls.nr_groups && i < LEAKS_SHOWN; i++) {
		const struct leak_group *g = &ls.groups[i];

		prot_str(prot, g->prot);
		fmt_time(rp, g->first_ns, t1, sizeof(t1));
		fmt_time(rp, g->last_ns, t2, sizeof(t2));
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
		prot_str(prot, ls.files[i].prot);
		printf("    %#llx %10s %s %s%s\n",
		       (unsigned long long)ls.files[i].start,
		       human(b1, sizeof(b1), ls.files[i].end - ls.files[i].start),
		       prot, region_what(rp, &ls.files[i]),
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

static void print_proc(const struct report *rp, const struct proc *p)
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
		for (i = 0; i < LAT_BUCKETS; i++)
			if (p->lat[i] > max)
				max = p->lat[i];
		for (i = 0; i < LAT_BUCKETS; i++) {
			int bar;

			if (!p->lat[i])
				continue;
			bar = (int)(p->lat[i] * 40 / (max ? max : 1));
			printf("    [%9llu ns, %9llu ns) %10llu |%.*s\n",
			       i ? 1ULL << i : 0ULL, 2ULL << i,
			       (unsigned long long)p->lat[i], bar ? bar : 1,
			       "########################################");
		}
		list = hot_list(p, &n);
		if (n)
			printf("  hottest regions by faults\n");
		for (i = 0; list && i < n; i++) {
			prot_str(prot, list[i].prot);
			printf("    %#llx-%#llx %10s %s %-24s faults %llu (major %llu)\n",
			       (unsigned long long)list[i].start,
			       (unsigned long long)list[i].end,
			       human(b1, sizeof(b1), list[i].end - list[i].start), prot,
			       region_what(rp, &list[i]),
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

static json_t *region_json(const struct report *rp, const struct region *r)
{
	char addr[24], prot[4];
	json_t *o = json_object();

	snprintf(addr, sizeof(addr), "%#llx", (unsigned long long)r->start);
	prot_str(prot, r->prot);
	json_object_set_new(o, "addr", json_string(addr));
	json_object_set_new(o, "size", json_integer((json_int_t)(r->end - r->start)));
	json_object_set_new(o, "prot", json_string(prot));
	json_object_set_new(o, "what", json_string(region_what(rp, r)));
	json_object_set_new(o, "mapped_ns", json_integer((json_int_t)r->mapped_ns));
	json_object_set_new(o, "faults", json_integer((json_int_t)r->faults));
	json_object_set_new(o, "major_faults", json_integer((json_int_t)r->major));
	return o;
}

static json_t *leaks_json(const struct report *rp, const struct proc *p)
{
	json_t *o = json_object(), *g = json_array(), *f = json_array();
	json_t *st = json_array();
	struct leak_split ls;
	size_t i;

	if (proc_split(p, &ls))
		return o;
	for (i = 0; i < ls.nr_groups; i++) {
		const struct leak_group *lg = &ls.groups[i];
		char prot[4];

		prot_str(prot, lg->prot);
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
	json_object_set_new(o, "grouped_by", json_string("kind,size,prot,flags"));
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

static json_t *proc_json(const struct report *rp, const struct proc *p)
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
	for (i = 0; i < LAT_BUCKETS; i++) {
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
	list = hot_list(p, &n);
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

/*
 * LOST records count what was dropped before the next event that fit; a
 * loss at the very end has no LOST record yet. The kernel's counters,
 * saved by memmon record at the end (meta "cpu_stats"), have it: per CPU,
 * the larger of the two is exact.
 */
static void merge_kernel_lost(struct report *rp, const char *meta_text)
{
	json_t *meta = json_loads(meta_text, 0, NULL);
	json_t *st = json_object_get(meta, "cpu_stats");
	unsigned int c;

	for (c = 0; c < rp->nr_cpus && c < json_array_size(st); c++) {
		json_t *l = json_object_get(json_array_get(st, c), "lost");
		__u64 v = json_is_integer(l) ? (__u64)json_integer_value(l) : 0;

		if (v > rp->lost[c])
			rp->lost[c] = v;
	}
	json_decref(meta);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;

	return (x->tgid > y->tgid) - (x->tgid < y->tgid);
}

/* --sort: what a process is ranked by, most first (ties: by pid). */
static const char *const sort_keys[] = {
	"pid", "faults", "major", "syscalls", "time", "mapped", "leaked", "rss",
};

static __u64 leaked_bytes(const struct proc *p)
{
	__u64 sum = 0;
	size_t i;

	for (i = 0; i < p->map.len; i++) {
		const struct region *r;

		if (!region_map_live(&p->map, i))
			continue;
		r = &p->map.pool[p->map.slot[i]];
		if (!r->file && !r->image && !r->startup)
			sum += p->map.ends[i] - p->map.starts[i];
	}
	return sum;
}

static __u64 sort_value(const struct proc *p, unsigned int key)
{
	__u64 v = 0;
	unsigned int c;

	switch (key) {
	case 1: return p->faults_total;
	case 2:
		for (c = 0; c <= MEMMON_FCLASS_OTHER + 1; c++)
			v += p->faults[c][1];
		return v;
	case 3: return p->sys_lat.count;
	case 4: return p->sys_lat.total_ns;
	case 5: return p->mapped;
	case 6: return leaked_bytes(p);
	case 7: return p->rss_peak > p->peak_rss_kernel ? p->rss_peak :
		       p->peak_rss_kernel;
	}
	return 0;
}

static unsigned int sort_key;

static int cmp_proc_key(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	__u64 vx = sort_value(x, sort_key), vy = sort_value(y, sort_key);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return cmp_proc(a, b);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, REC_FILTER_OPT_TID },
		{ "time", required_argument, NULL, REC_FILTER_OPT_TIME },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "report";
	struct memmon_trace_reader *r = NULL;
	const struct memmon_trace_info *in;
	struct report rp = { 0 };
	bool json = false;
	unsigned long long lost = 0;
	unsigned int c;
	size_t i, shown;
	unsigned long top = 0;
	char *end;
	long n;
	int opt, ret = 1;

	rec_filter_init(&rp.f);
	sort_key = 0;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "p:s:n:h", longopts, NULL)) != -1) {
		ret = opt == 'p' || opt == REC_FILTER_OPT_TID || opt == REC_FILTER_OPT_TIME ?
		      rec_filter_option(cmd, &rp.f, opt, optarg) : -1;
		if (ret >= 0) {
			if (ret)
				goto out_filter;
			continue;
		}
		ret = 1;
		switch (opt) {
		case 'J':
			json = true;
			break;
		case 's':
			for (c = 0; c < sizeof(sort_keys) / sizeof(sort_keys[0]); c++)
				if (!strcmp(optarg, sort_keys[c]))
					break;
			if (c == sizeof(sort_keys) / sizeof(sort_keys[0])) {
				ret = tool_usage_err(cmd, "bad --sort '%s': pid, faults, "
						     "major, syscalls, time, mapped, "
						     "leaked or rss", optarg);
				goto out_filter;
			}
			sort_key = c;
			break;
		case 'n':
			errno = 0;
			top = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-' || !top) {
				ret = tool_usage_err(cmd, "bad --top '%s': a number "
						     "of processes, 1 or more", optarg);
				goto out_filter;
			}
			break;
		case 'h':
			printf("usage: memmon report [--json] [-p PIDS] [--tid TIDS] "
			       "[--time START,END]\n"
			       "                     [-s|--sort KEY] [-n|--top N] FILE\n\n"
			       "Per process: calls with their latency (count, errors, "
			       "total, p50, p99, max),\nbytes, peak size, faults, fault "
			       "latency, hottest regions, leak candidates\n(anonymous "
			       "and heap memory never released) apart from the file\n"
			       "mappings still mapped, RSS and anonymous growth, lost "
			       "events.\n\n"
			       "  -p, --pid PIDS        these processes only (comma-separated)\n"
			       "      --tid TIDS        these threads' records only\n"
			       "      --time START,END  the records of this window only "
			       "(seconds from the\n"
			       "                        start, or marker texts; either "
			       "may be empty)\n"
			       "  -s, --sort KEY        pid (default), faults, major, "
			       "syscalls, time,\n"
			       "                        mapped, leaked, rss: most first\n"
			       "  -n, --top N           the first N processes only\n"
			       "      --json            JSON instead of text\n");
			ret = tool_close_stdout(cmd);
			goto out_filter;
		default:
			ret = tool_usage_err(cmd, "unknown option '%s' (or one "
					     "missing its argument)", argv[optind - 1]);
			goto out_filter;
		}
	}
	if (optind != argc - 1) {
		ret = tool_usage_err(cmd, optind >= argc ? "missing FILE" :
				     "one FILE only");
		goto out_filter;
	}
	rp.path = argv[optind];
	ret = rec_filter_open(cmd, "reporting", &rp.f, rp.path, &r, &rp.paths);
	if (ret)
		goto out_filter;
	ret = 1;
	in = memmon_trace_reader__info(r);
	rp.nr_cpus = in->nr_cpus;
	rp.rt_off = in->realtime_offset_ns;
	rp.lost = calloc(in->nr_cpus, sizeof(*rp.lost));
	if (!rp.lost) {
		tool_err(cmd, "out of memory");
		goto out;
	}
	/* Read and merged on a thread of its own, modelled on this one. */
	n = rec_pipe_for_each(r, report_cb, &rp, 0);
	if (n < 0) {
		const char *msg = memmon_trace_reader__errmsg(r);

		tool_err(cmd, "%s: %s", rp.path, *msg ? msg : strerror((int)-n));
		goto out;
	}
	qsort(rp.list, rp.nr_procs, sizeof(*rp.list), sort_key ? cmp_proc_key : cmp_proc);
	shown = top && top < rp.nr_procs ? top : rp.nr_procs;
	merge_kernel_lost(&rp, memmon_trace_reader__meta(r));
	for (c = 0; c < rp.nr_cpus; c++)
		lost += rp.lost[c];
	if (json) {
		json_t *o = json_object(), *procs = json_array(), *l = json_array();
		json_t *meta = json_loads(memmon_trace_reader__meta(r), 0, NULL);

		json_object_set_new(o, "file", json_string(rp.path));
		json_object_set_new(o, "truncated", json_boolean(in->truncated));
		json_object_set_new(o, "records", json_integer(n));
		json_object_set_new(o, "meta", meta ? meta : json_object());
		for (c = 0; c < rp.nr_cpus; c++)
			json_array_append_new(l, json_integer((json_int_t)rp.lost[c]));
		json_object_set_new(o, "lost_per_cpu", l);
		json_object_set_new(o, "lost", json_integer((json_int_t)lost));
		for (i = 0; i < shown; i++)
			json_array_append_new(procs, proc_json(&rp, rp.list[i]));
		json_object_set_new(o, "processes", procs);
		json_dumpf(o, stdout, JSON_INDENT(1));
		putchar('\n');
		json_decref(o);
	} else {
		printf("memmon report: %s: %ld records, %u CPUs, %llu chunks%s\n",
		       rp.path, n, in->nr_cpus, (unsigned long long)in->nr_chunks,
		       in->truncated ? " (truncated)" : "");
		printf("lost events: %llu", lost);
		for (c = 0; lost && c < rp.nr_cpus; c++)
			if (rp.lost[c])
				printf(" cpu%u=%llu", c, (unsigned long long)rp.lost[c]);
		printf("\n");
		for (i = 0; i < shown; i++)
			print_proc(&rp, rp.list[i]);
		if (shown < rp.nr_procs)
			printf("\n... %zu more processes (--top %zu)\n",
			       rp.nr_procs - shown, shown);
	}
	ret = tool_close_stdout(cmd);
out:
	for (i = 0; i < rp.nr_procs; i++) {
		region_map_fini(&rp.list[i]->map);
		lat_set_free(&rp.list[i]->sys_lat);
		growth_free(&rp.list[i]->rss_g);
		growth_free(&rp.list[i]->anon_g);
		free(rp.list[i]->exe);
		free(rp.list[i]);
	}
	free(rp.list);
	free(rp.lost);
	memmon_paths__free(rp.paths);
	memmon_trace_reader__close(r);
out_filter:
	rec_filter_free(&rp.f);
	return ret;
}
