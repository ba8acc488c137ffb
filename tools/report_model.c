// SPDX-License-Identifier: GPL-2.0
/*
 * The report model (report_model.h): records in, per-process state out.
 * Syscall latency is report_latency's, the leak split and the growth
 * series report_leaks', the regions region_map's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "report_model.h"

static struct report_proc *proc_get(struct report *rp, __u32 tgid)
{
	struct report_proc **b = &rp->buckets[tgid % 1024], *p;
	struct report_proc **nl;

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
 * A region goes (unmapped whole): keep it if it is among the REPORT_HOT_REGIONS
 * with the most faults so far. hot[hot_min] is the coolest kept once the
 * list is full; a region that would not replace it is never read from
 * the map's pool.
 */
static void retire_cb(void *ctx, const struct region_map *m, size_t i)
{
	struct report_proc *p = ctx;
	__u64 faults = m->count[i].faults;
	size_t k;

	if (!faults)
		return;
	if (p->nr_hot < REPORT_HOT_REGIONS) {
		region_map_get(m, i, &p->hot[p->nr_hot++]);
	} else {
		if (faults <= p->hot[p->hot_min].faults)
			return;
		region_map_get(m, i, &p->hot[p->hot_min]);
	}
	if (p->nr_hot < REPORT_HOT_REGIONS)
		return;
	for (k = 1, p->hot_min = 0; k < REPORT_HOT_REGIONS; k++)
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
static int carve(struct report_proc *p, __u64 start, __u64 end, bool retire)
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

static int map_region(struct report_proc *p, const struct region *nr)
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

static void on_syscall(struct report *rp, struct report_proc *p,
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
	if (sc->sys == MEMMON_SYS_MMAP || sc->sys == MEMMON_SYS_BRK)
		nr.site = sites_of(&rp->sites, &sc->hdr);
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

static void on_fault(struct report_proc *p, const struct memmon_rec_fault *f)
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

static void on_fork(struct report *rp, struct report_proc *parent,
		    const struct memmon_rec_fork *f)
{
	struct report_proc *c;

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

static int report_rec(struct report *rp, const struct memmon_rec_header *rec);

/*
 * Every record feeds the address spaces (whatever the filter keeps), after
 * the model took it: a stack is that of the call, in the space before the
 * call's own change.
 */
int report_add(void *ctx, const struct memmon_rec_header *rec)
{
	struct report *rp = ctx;
	int ret = report_rec(rp, rec);

	if (sym_feed(rp->sites.sym, rec, rp->paths) == -ENOMEM)
		rp->err = -ENOMEM;
	return ret;
}

static int report_rec(struct report *rp, const struct memmon_rec_header *rec)
{
	/*
	 * Most records are faults: a whole one (memmon_rec__fault()'s checks)
	 * skips the others' tests and the calls.
	 */
	bool fault = rec->type == MEMMON_REC_FAULT &&
		     rec->size >= sizeof(struct memmon_rec_fault);
	struct report_proc *p;

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
	/* A name is not activity: the span is that of the process's events. */
	if (rec->type != MEMMON_REC_COMM) {
		if (!p->first_ns)
			p->first_ns = rec->time_ns;
		p->last_ns = rec->time_ns;
	}
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

void report_prot_str(char *b, __u32 prot)
{
	b[0] = prot & 1 ? 'r' : '-';
	b[1] = prot & 2 ? 'w' : '-';
	b[2] = prot & 4 ? 'x' : '-';
	b[3] = '\0';
}

const char *report_region_what(const struct report *rp, const struct region *r)
{
	const char *path;

	if (r->heap)
		return "[heap]";
	if (!r->file && !r->image)
		return r->flags & 0x01 ? "[shared anon]" : "[anon]";
	path = memmon_paths__lookup(rp->paths, r->dev, r->ino);
	return path ? path : "[file]";
}

static int cmp_region_faults(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	return x->faults < y->faults ? 1 : x->faults > y->faults ? -1 : 0;
}

struct region *report_hot_list(const struct report_proc *p, size_t *n)
{
	size_t nr = p->map.nr;
	struct region *all = malloc((nr + p->nr_hot + 1) * sizeof(*all));

	*n = 0;
	if (!all)
		return NULL;
	region_map_export(&p->map, all);
	memcpy(all + nr, p->hot, p->nr_hot * sizeof(*all));
	qsort(all, nr + p->nr_hot, sizeof(*all), cmp_region_faults);
	while (*n < nr + p->nr_hot && *n < REPORT_HOT_REGIONS && all[*n].faults)
		(*n)++;
	return all;
}

int report_proc_split(const struct report_proc *p, struct leak_split *ls)
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

/*
 * LOST records count what was dropped before the next event that fit; a
 * loss at the very end has no LOST record yet. The kernel's counters,
 * saved by memmon record at the end (meta "cpu_stats"), have it: per CPU,
 * the larger of the two is exact.
 */
void report_merge_kernel_lost(struct report *rp, const char *meta_text)
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
	const struct report_proc *x = *(struct report_proc *const *)a;
	const struct report_proc *y = *(struct report_proc *const *)b;

	return (x->tgid > y->tgid) - (x->tgid < y->tgid);
}

/* --sort: what a process is ranked by, most first (ties: by pid). */
const char *const report_sort_keys[] = {
	"pid", "faults", "major", "syscalls", "time", "mapped", "leaked", "rss",
};
const unsigned int report_nr_sort_keys =
	sizeof(report_sort_keys) / sizeof(report_sort_keys[0]);

static __u64 leaked_bytes(const struct report_proc *p)
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

static __u64 sort_value(const struct report_proc *p, unsigned int key)
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

static int cmp_proc_key(const void *a, const void *b, void *key)
{
	const struct report_proc *x = *(struct report_proc *const *)a;
	const struct report_proc *y = *(struct report_proc *const *)b;
	unsigned int k = *(const unsigned int *)key;
	__u64 vx = sort_value(x, k), vy = sort_value(y, k);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return cmp_proc(a, b);
}

void report_sort(struct report *rp, unsigned int key)
{
	if (key)
		qsort_r(rp->list, rp->nr_procs, sizeof(*rp->list), cmp_proc_key, &key);
	else
		qsort(rp->list, rp->nr_procs, sizeof(*rp->list), cmp_proc);
}

int report_begin(struct report *rp, const struct memmon_trace_info *in)
{
	bool full = rp->sites.full;	/* set by the caller's options */

	rp->nr_cpus = in->nr_cpus;
	rp->rt_off = in->realtime_offset_ns;
	if (sites_init(&rp->sites))
		return -ENOMEM;
	rp->sites.full = full;
	rp->lost = calloc(in->nr_cpus, sizeof(*rp->lost));
	return rp->lost ? 0 : -ENOMEM;
}

__u64 report_lost_total(const struct report *rp)
{
	__u64 lost = 0;
	unsigned int c;

	for (c = 0; c < rp->nr_cpus; c++)
		lost += rp->lost[c];
	return lost;
}

void report_fini(struct report *rp)
{
	size_t i;

	for (i = 0; i < rp->nr_procs; i++) {
		region_map_fini(&rp->list[i]->map);
		lat_set_free(&rp->list[i]->sys_lat);
		growth_free(&rp->list[i]->rss_g);
		growth_free(&rp->list[i]->anon_g);
		free(rp->list[i]->exe);
		free(rp->list[i]);
	}
	free(rp->list);
	free(rp->lost);
	memmon_paths__free(rp->paths);
	sites_fini(&rp->sites);
	rp->list = NULL;
	rp->nr_procs = 0;
	rp->lost = NULL;
	rp->paths = NULL;
}
