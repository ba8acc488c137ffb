// SPDX-License-Identifier: GPL-2.0
/*
 * timeline_agg: fold a trace's records into bounded per-lane aggregates
 * for `memmon timeline`. Processes are counted exactly as memmon report
 * counts them (same records make the same processes, calls and faults), so
 * that the page and `memmon report --json` agree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "timeline_agg.h"

#define PAGE_ALIGN_UP(x) (((x) + 4095) & ~4095ULL)

static const char *const kind_names[TL_K__COUNT] = {
	"mmap", "munmap", "brk", "mremap", "mlock", "madvise", "mprotect", "fsync",
};

static const char *const class_names[TL_C__COUNT] = {
	"anon", "file", "shmem", "swap", "other",
};

const char *tl_kind_name(unsigned int k)
{
	return k < TL_K__COUNT ? kind_names[k] : NULL;
}

const char *tl_class_name(unsigned int c)
{
	return c < TL_C__COUNT ? class_names[c] : NULL;
}

int tl_sys_kind(__u32 sys)
{
	switch (sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
	case MEMMON_SYS_OLD_MMAP:
		return TL_K_MMAP;
	case MEMMON_SYS_MUNMAP:
		return TL_K_MUNMAP;
	case MEMMON_SYS_BRK:
		return TL_K_BRK;
	case MEMMON_SYS_MREMAP:
		return TL_K_MREMAP;
	case MEMMON_SYS_MLOCK:
	case MEMMON_SYS_MLOCK2:
	case MEMMON_SYS_MUNLOCK:
	case MEMMON_SYS_MLOCKALL:
	case MEMMON_SYS_MUNLOCKALL:
		return TL_K_MLOCK;
	case MEMMON_SYS_MADVISE:
		return TL_K_MADVISE;
	case MEMMON_SYS_MPROTECT:
		return TL_K_MPROTECT;
	case MEMMON_SYS_FSYNC:
		return TL_K_FSYNC;
	}
	return -1;
}

static unsigned int fault_class(__u32 fclass)
{
	switch (fclass) {
	case MEMMON_FCLASS_ANON:
		return TL_C_ANON;
	case MEMMON_FCLASS_FILE:
		return TL_C_FILE;
	case MEMMON_FCLASS_SHMEM:
		return TL_C_SHMEM;
	case MEMMON_FCLASS_SWAP:
		return TL_C_SWAP;
	}
	return TL_C_OTHER;
}

int tl_agg_init(struct tl_agg *a, unsigned int nr_cpus, size_t max_detail)
{
	memset(a, 0, sizeof(*a));
	a->width = 1000;
	a->nr_cpus = nr_cpus;
	a->max_detail = max_detail;
	a->keep = 1ULL << 32;
	a->lost_per_cpu = calloc(nr_cpus ? nr_cpus : 1, sizeof(*a->lost_per_cpu));
	a->lost = malloc(TL_MAX_LOST * sizeof(*a->lost));
	a->marks = malloc(TL_MAX_MARKS * sizeof(*a->marks));
	a->detail = max_detail ? malloc(max_detail * sizeof(*a->detail)) : NULL;
	a->xkeep = 1ULL << 32;
	a->max_exact = max_detail < TL_EXACT_CALLS ? max_detail : TL_EXACT_CALLS;
	a->max_exact -= a->max_exact % TL_EXACT_BLOCK;
	if (a->max_exact) {
		a->exact = malloc(a->max_exact * sizeof(*a->exact));
		a->win = malloc(a->max_exact / TL_EXACT_BLOCK * sizeof(*a->win));
	}
	a->paths = memmon_paths__new();
	if (!a->lost_per_cpu || !a->lost || !a->marks || !a->paths ||
	    (max_detail && !a->detail) || (a->max_exact && (!a->exact || !a->win))) {
		tl_agg_fini(a);
		return -ENOMEM;
	}
	return 0;
}

void tl_agg_fini(struct tl_agg *a)
{
	size_t i, j;

	for (i = 0; i < a->nr_procs; i++) {
		struct tl_proc *p = a->procs[i];

		for (j = 0; j < TL_NBUCKETS / TL_PAGE; j++)
			free(p->pages[j]);
		for (j = 0; j < p->nr_ev; j++)
			free(p->ev[j].path);
		free(p->threads);
		free(p->exe);
		free(p);
	}
	for (i = 0; i < a->nr_marks; i++)
		free(a->marks[i].text);
	free(a->procs);
	free(a->marks);
	free(a->lost);
	free(a->lost_per_cpu);
	free(a->detail);
	free(a->exact);
	free(a->win);
	memmon_paths__free(a->paths);
	memset(a, 0, sizeof(*a));
}

const struct tl_bucket *tl_bucket_get(const struct tl_proc *p, size_t i)
{
	const struct tl_bucket *pg;

	if (i >= TL_NBUCKETS)
		return NULL;
	pg = p->pages[i / TL_PAGE];
	return pg ? &pg[i % TL_PAGE] : NULL;
}

static void bucket_add(struct tl_bucket *d, const struct tl_bucket *s)
{
	unsigned int c, k;

	for (c = 0; c < TL_C__COUNT; c++) {
		d->faults[c][0] += s->faults[c][0];
		d->faults[c][1] += s->faults[c][1];
	}
	for (k = 0; k < TL_K__COUNT; k++)
		d->calls[k] += s->calls[k];
	d->failed += s->failed;
	for (k = 0; k < TL_LAT; k++)
		d->lat[k] += s->lat[k];
	d->mapped += s->mapped;
	d->unmapped += s->unmapped;
	/* s is the later of the two: its RSS is the bucket's last */
	if (s->has_rss) {
		memcpy(d->rss, s->rss, sizeof(d->rss));
		d->has_rss = true;
	}
}

/*
 * Double the width: bucket i of the new grid is old 2i and 2i+1, the older
 * first so that the later RSS wins. The upper half of the grid comes out
 * empty, which is what brings the pages back under budget.
 */
static int coarsen_proc(struct tl_agg *a, struct tl_proc *p)
{
	struct tl_bucket *np[TL_NBUCKETS / TL_PAGE] = { NULL };
	size_t i, pg;

	for (i = 0; i < TL_NBUCKETS / 2; i++) {
		const struct tl_bucket *lo = tl_bucket_get(p, 2 * i);
		const struct tl_bucket *hi = tl_bucket_get(p, 2 * i + 1);
		struct tl_bucket **d = &np[i / TL_PAGE];

		if (!lo && !hi)
			continue;
		if (!*d) {
			*d = calloc(TL_PAGE, sizeof(**d));
			if (!*d)
				goto err_free_new;
			a->pages_used++;
		}
		if (lo)
			bucket_add(&(*d)[i % TL_PAGE], lo);
		if (hi)
			bucket_add(&(*d)[i % TL_PAGE], hi);
	}
	for (pg = 0; pg < TL_NBUCKETS / TL_PAGE; pg++) {
		if (p->pages[pg]) {
			free(p->pages[pg]);
			a->pages_used--;
		}
		p->pages[pg] = np[pg];
	}
	return 0;

err_free_new:
	for (pg = 0; pg < TL_NBUCKETS / TL_PAGE; pg++) {
		if (np[pg]) {
			free(np[pg]);
			a->pages_used--;
		}
	}
	return -ENOMEM;
}

static void coarsen(struct tl_agg *a)
{
	size_t n;

	for (n = 0; n < a->nr_procs; n++) {
		if (coarsen_proc(a, a->procs[n])) {
			a->err = -ENOMEM;
			return;
		}
	}
	a->width *= 2;
}

static struct tl_bucket *bucket_at(struct tl_agg *a, struct tl_proc *p, __u64 t)
{
	__u64 i;
	struct tl_bucket **pg;

	if (!a->started) {
		a->started = true;
		a->t0 = t;
	}
	if (t < a->t0)		/* merged in time order: only a clock oddity */
		t = a->t0;
	while ((i = (t - a->t0) / a->width) >= TL_NBUCKETS) {
		coarsen(a);
		if (a->err)
			return NULL;
	}
	pg = &p->pages[i / TL_PAGE];
	if (!*pg) {
		/*
		 * Over budget: coarsen while that can free pages, i.e. while
		 * some lane has more than one (each lane needs at least one).
		 */
		while (a->pages_used * TL_PAGE * sizeof(struct tl_bucket) >=
		       TL_BUCKET_BUDGET && a->pages_used > a->nr_procs &&
		       a->width < (1ULL << 62)) {
			coarsen(a);
			if (a->err)
				return NULL;
			i = (t - a->t0) / a->width;
			pg = &p->pages[i / TL_PAGE];
			if (*pg)
				return &(*pg)[i % TL_PAGE];
		}
		*pg = calloc(TL_PAGE, sizeof(struct tl_bucket));
		if (!*pg) {
			a->err = -ENOMEM;
			return NULL;
		}
		a->pages_used++;
	}
	return &(*pg)[i % TL_PAGE];
}

static struct tl_proc *proc_get(struct tl_agg *a, __u32 tgid)
{
	struct tl_proc **b, *p, **nl;

	if (a->last && a->last->tgid == tgid)
		return a->last;
	b = &a->buckets[tgid % 1024];
	for (p = *b; p; p = p->next)
		if (p->tgid == tgid)
			return a->last = p;
	/* past the cap, one more lane takes every other process */
	if (a->nr_procs >= TL_MAX_PROCS && tgid != TL_FOLD_TGID) {
		a->records_folded++;
		return proc_get(a, TL_FOLD_TGID);
	}
	p = calloc(1, sizeof(*p));
	nl = realloc(a->procs, (a->nr_procs + 1) * sizeof(*nl));
	if (!p || !nl) {
		free(p);
		if (nl)
			a->procs = nl;
		a->err = -ENOMEM;
		return NULL;
	}
	a->procs = nl;
	a->procs[a->nr_procs++] = p;
	p->tgid = tgid;
	p->next = *b;
	*b = p;
	return a->last = p;
}

static struct tl_thread *thread_get(struct tl_proc *p, __u32 tid, __u64 t)
{
	struct tl_thread *th;
	size_t i;

	/* runs of records share a thread; else a linear search, newest first */
	if (p->last_thread < p->nr_threads && p->threads[p->last_thread].tid == tid)
		return &p->threads[p->last_thread];
	for (i = p->nr_threads; i-- > 0;) {
		if (p->threads[i].tid == tid) {
			p->last_thread = i;
			return &p->threads[i];
		}
	}
	if (p->nr_threads >= TL_MAX_THREADS) {
		p->threads_dropped++;
		return NULL;
	}
	th = realloc(p->threads, (p->nr_threads + 1) * sizeof(*th));
	if (!th)
		return NULL;
	p->threads = th;
	th = &p->threads[p->nr_threads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->first_ns = t;
	return th;
}

static void add_event(struct tl_proc *p, __u64 t, __u32 child, const char *path)
{
	struct tl_event *e;

	if (p->nr_ev >= TL_MAX_EVENTS) {
		p->ev_dropped++;
		return;
	}
	e = &p->ev[p->nr_ev];
	e->t = t;
	e->child = child;
	e->path = path ? strdup(path) : NULL;
	if (path && !e->path)
		return;
	p->nr_ev++;
}

/* 32 well-mixed bits of x (murmur3's finaliser): samples are reproducible. */
static __u64 mix32(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x & 0xffffffffULL;
}

/* The call's identity, mixed. */
static __u64 detail_hash(const struct memmon_rec_syscall *sc)
{
	return mix32(sc->hdr.time_ns ^ ((__u64)sc->hdr.tid << 32) ^ sc->sys);
}

static __u64 detail_rank(const struct memmon_rec_syscall *sc)
{
	__u64 h = detail_hash(sc);
	bool failed = sc->ret < 0 && sc->ret >= -4095;

	return failed ? h >> 6 : h;
}

static void detail_add(struct tl_agg *a, const struct memmon_rec_syscall *sc)
{
	size_t i, n;

	if (!a->max_detail || detail_rank(sc) >= a->keep)
		return;
	while (a->nr_detail >= a->max_detail) {
		a->keep /= 2;
		for (i = n = 0; i < a->nr_detail; i++)
			if (detail_rank(&a->detail[i]) < a->keep)
				a->detail[n++] = a->detail[i];
		a->nr_detail = n;
		if (detail_rank(sc) >= a->keep)
			return;
	}
	a->detail[a->nr_detail++] = *sc;
}

/* Keep the windows whose block still hashes below xkeep, packed. */
static void exact_filter(struct tl_agg *a)
{
	size_t i, nw = 0, ne = 0;

	for (i = 0; i < a->nr_win; i++) {
		struct tl_window w = a->win[i];

		if (mix32(w.block) >= a->xkeep)
			continue;
		memmove(&a->exact[ne], &a->exact[w.off], w.n * sizeof(*a->exact));
		w.off = ne;
		ne += w.n;
		a->win[nw++] = w;
	}
	a->nr_win = nw;
	a->nr_exact = ne;
}

/* Call number a->calls_total (before counting it) into the exact windows. */
static void exact_add(struct tl_agg *a, const struct memmon_rec_syscall *sc)
{
	__u64 blk = a->calls_total / TL_EXACT_BLOCK;
	struct tl_window *w;

	if (!a->max_exact)
		return;
	if (a->calls_total % TL_EXACT_BLOCK == 0) {
		a->xcur = false;
		if (mix32(blk) >= a->xkeep)
			return;
		while (a->nr_exact + TL_EXACT_BLOCK > a->max_exact) {
			a->xkeep /= 2;
			exact_filter(a);
			if (mix32(blk) >= a->xkeep)
				return;
		}
		w = &a->win[a->nr_win++];
		w->block = blk;
		w->first_ns = sc->hdr.time_ns;
		w->off = a->nr_exact;
		w->n = 0;
		a->xcur = true;
	}
	if (!a->xcur)
		return;
	w = &a->win[a->nr_win - 1];
	a->exact[a->nr_exact++] = *sc;
	w->n++;
	w->last_ns = sc->hdr.time_ns;
}

static void on_syscall(struct tl_agg *a, struct tl_proc *p, struct tl_bucket *b,
		       const struct memmon_rec_syscall *sc)
{
	const __u64 *arg = sc->args;
	bool ok = !(sc->ret < 0 && sc->ret >= -4095);
	int k = tl_sys_kind(sc->sys);
	__u64 mapped = 0, unmapped = 0;

	if (sc->sys >= MEMMON_SYS__COUNT || k < 0)
		return;
	p->calls[sc->sys]++;
	exact_add(a, sc);
	a->calls_total++;
	b->calls[k]++;
	detail_add(a, sc);
	if (!ok) {
		p->failed[sc->sys]++;
		b->failed++;
		return;
	}
	/* bytes as memmon report counts them */
	switch (sc->sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
		mapped = PAGE_ALIGN_UP(arg[1]);
		break;
	case MEMMON_SYS_MUNMAP:
		unmapped = PAGE_ALIGN_UP(arg[1]);
		break;
	case MEMMON_SYS_BRK:
		if (sc->aux[1] > sc->aux[0])
			mapped = PAGE_ALIGN_UP(sc->aux[1]) - PAGE_ALIGN_UP(sc->aux[0]);
		else if (sc->aux[1] < sc->aux[0])
			unmapped = PAGE_ALIGN_UP(sc->aux[0]) - PAGE_ALIGN_UP(sc->aux[1]);
		break;
	}
	p->mapped += mapped;
	p->unmapped += unmapped;
	b->mapped += mapped;
	b->unmapped += unmapped;
}

static void on_fault(struct tl_proc *p, struct tl_bucket *b,
		     const struct memmon_rec_fault *f)
{
	unsigned int cls = f->fclass <= MEMMON_FCLASS_OTHER ? f->fclass :
			   MEMMON_FCLASS_OTHER + 1;
	bool major = f->flags & MEMMON_FAULTF_MAJOR;
	unsigned int l = 0;

	p->faults_total++;
	p->faults[cls][major]++;
	b->faults[fault_class(f->fclass)][major]++;
	while (l < TL_LAT - 1 && f->duration_ns >= (1ULL << (l + 9)))
		l++;
	b->lat[l]++;
}

static void on_lost(struct tl_agg *a, const struct memmon_rec_lost *l)
{
	struct tl_lost *x;

	if (l->hdr.cpu < a->nr_cpus)
		a->lost_per_cpu[l->hdr.cpu] += l->count;
	/* full: the last interval grows to cover this one, counts kept */
	if (a->nr_lost >= TL_MAX_LOST) {
		x = &a->lost[a->nr_lost - 1];
		if (l->first_ns < x->first_ns)
			x->first_ns = l->first_ns;
		if (l->last_ns > x->last_ns)
			x->last_ns = l->last_ns;
		x->count += l->count;
		return;
	}
	x = &a->lost[a->nr_lost++];
	x->first_ns = l->first_ns ? l->first_ns : l->hdr.time_ns;
	x->last_ns = l->last_ns > x->first_ns ? l->last_ns : l->hdr.time_ns;
	x->count = l->count;
	x->cpu = l->hdr.cpu;
}

static void on_mark(struct tl_agg *a, const struct memmon_rec_mark *m)
{
	struct tl_mark *x;
	__u32 len = m->len;

	if (a->nr_marks >= TL_MAX_MARKS) {
		a->marks_dropped++;
		return;
	}
	x = &a->marks[a->nr_marks];
	x->text = strndup((const char *)m->data, len);
	if (!x->text)
		return;
	x->t = m->hdr.time_ns;
	x->tgid = m->hdr.tgid;
	x->tid = m->hdr.tid;
	a->nr_marks++;
}

static void on_fork(struct tl_agg *a, struct tl_proc *parent,
		    const struct memmon_rec_fork *f)
{
	struct tl_proc *c;

	/* a new thread: its lane starts at its creation, not its first event */
	if (f->flags & MEMMON_FORKF_THREAD || f->child_tgid == parent->tgid) {
		thread_get(parent, f->child_tid, f->hdr.time_ns);
		return;
	}
	add_event(parent, f->hdr.time_ns, f->child_tgid, NULL);
	c = proc_get(a, f->child_tgid);
	if (!c)
		return;
	c->parent = parent->tgid;
	c->first_ns = f->hdr.time_ns;
	if (parent->exe && !c->exe)
		c->exe = strdup(parent->exe);
}

int tl_agg_record(void *ctx, const struct memmon_rec_header *rec)
{
	struct tl_agg *a = ctx;
	struct tl_proc *p;
	struct tl_thread *th;
	struct tl_bucket *b;

	a->records++;
	if (rec->time_ns > a->t_last)
		a->t_last = rec->time_ns;
	if (rec->type == MEMMON_REC_LOST) {
		const struct memmon_rec_lost *l = memmon_rec__lost(rec);

		if (l)
			on_lost(a, l);
		return 0;
	}
	if (rec->type == MEMMON_REC_PATH) {
		memmon_paths__add_rec(a->paths, rec);
		return 0;
	}
	if (!memmon_rec_type__name(rec->type))
		return 0;	/* a newer record type: skip */
	p = proc_get(a, rec->tgid);
	if (!p)
		return a->err;
	b = bucket_at(a, p, rec->time_ns);
	if (!b)
		return a->err;
	if (!p->first_ns)
		p->first_ns = rec->time_ns;
	p->last_ns = rec->time_ns;
	p->records++;
	th = thread_get(p, rec->tid, rec->time_ns);
	if (th)
		th->last_ns = rec->time_ns;

	switch (rec->type) {
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f = memmon_rec__fault(rec);

		if (f) {
			on_fault(p, b, f);
			if (th)
				th->faults++;
		}
		break;
	}
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);

		if (sc) {
			on_syscall(a, p, b, sc);
			if (th)
				th->calls++;
		}
		break;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r = memmon_rec__rss(rec);

		if (r) {
			b->rss[0] = r->anon;
			b->rss[1] = r->file;
			b->rss[2] = r->shmem;
			b->rss[3] = r->swap;
			b->has_rss = true;
		}
		break;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = memmon_rec__fork(rec);

		if (f)
			on_fork(a, p, f);
		break;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = memmon_rec__exec(rec);

		if (e) {
			free(p->exe);
			p->exe = strdup(e->path);
			add_event(p, rec->time_ns, 0, e->path);
		}
		break;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x = memmon_rec__exit(rec);

		if (!x)
			break;
		if (th)
			th->exited = true;
		if (x->flags & MEMMON_EXITF_GROUP) {
			p->exited = true;
			p->exit_code = x->code;
			p->exit_ns = rec->time_ns;
		}
		break;
	}
	case MEMMON_REC_MARK: {
		const struct memmon_rec_mark *m = memmon_rec__mark(rec);

		if (m)
			on_mark(a, m);
		break;
	}
	}
	return a->err;
}

static int cmp_detail(const void *x, const void *y)
{
	const struct memmon_rec_syscall *a = x, *b = y;

	return (a->hdr.time_ns > b->hdr.time_ns) - (a->hdr.time_ns < b->hdr.time_ns);
}

void tl_agg_finish(struct tl_agg *a)
{
	/*
	 * The reader merges in time order and filtering keeps it, so this is
	 * already sorted; the page's binary searches rely on it, so make sure.
	 */
	qsort(a->detail, a->nr_detail, sizeof(*a->detail), cmp_detail);
}
