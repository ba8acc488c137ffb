// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * (dev, ino) -> path, from MEMMON_REC_PATH records. Open addressing with
 * linear probing; the table only grows (a session emits one PATH per file).
 * Single-threaded: callers that share one serialise around it.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct path_ent {
	__u64 dev;
	__u64 ino;
	char *path;		/* NULL: free slot */
};

struct memmon_paths {
	struct path_ent *e;
	size_t cap;		/* power of two */
	size_t nr;
};

static size_t path_hash(__u64 dev, __u64 ino)
{
	__u64 h = ino * 0x9e3779b97f4a7c15ULL ^ (dev + 0x632be59bd9b4e019ULL);

	h ^= h >> 29;
	return (size_t)h;
}

struct memmon_paths *memmon_paths__new(void)
{
	struct memmon_paths *p = calloc(1, sizeof(*p));

	if (!p)
		return libmm_err_ptr(-ENOMEM);
	p->cap = 64;
	p->e = calloc(p->cap, sizeof(*p->e));
	if (!p->e) {
		free(p);
		return libmm_err_ptr(-ENOMEM);
	}
	return p;
}

void memmon_paths__free(struct memmon_paths *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; p->e && i < p->cap; i++)
		free(p->e[i].path);
	free(p->e);
	free(p);
}

static struct path_ent *slot(struct path_ent *e, size_t cap, __u64 dev, __u64 ino)
{
	size_t i = path_hash(dev, ino) & (cap - 1);

	while (e[i].path && (e[i].dev != dev || e[i].ino != ino))
		i = (i + 1) & (cap - 1);
	return &e[i];
}

static int grow(struct memmon_paths *p)
{
	size_t ncap = p->cap * 2, i;
	struct path_ent *ne = calloc(ncap, sizeof(*ne));

	if (!ne)
		return -ENOMEM;
	for (i = 0; i < p->cap; i++)
		if (p->e[i].path)
			*slot(ne, ncap, p->e[i].dev, p->e[i].ino) = p->e[i];
	free(p->e);
	p->e = ne;
	p->cap = ncap;
	return 0;
}

int memmon_paths__add(struct memmon_paths *p, __u64 dev, __u64 ino,
		      const char *path)
{
	struct path_ent *s;
	char *dup;
	int err;

	if (!p || !path)
		return libmm_err(-EINVAL);
	if ((p->nr + 1) * 2 > p->cap) {
		err = grow(p);
		if (err)
			return libmm_err(err);
	}
	dup = strdup(path);
	if (!dup)
		return libmm_err(-ENOMEM);
	s = slot(p->e, p->cap, dev, ino);
	if (s->path) {
		free(s->path);	/* the newest name wins (rename, reuse) */
	} else {
		p->nr++;
		s->dev = dev;
		s->ino = ino;
	}
	s->path = dup;
	return 0;
}

int memmon_paths__add_rec(struct memmon_paths *p,
			  const struct memmon_rec_header *rec)
{
	const struct memmon_rec_path *pr;

	if (!p || !rec)
		return libmm_err(-EINVAL);
	if (rec->type != MEMMON_REC_PATH)
		return 0;
	pr = memmon_rec__path(rec);
	if (!pr)
		return libmm_err(-EBADMSG);
	return memmon_paths__add(p, pr->dev, pr->ino, pr->path);
}

const char *memmon_paths__lookup(const struct memmon_paths *p, __u64 dev,
				 __u64 ino)
{
	const struct path_ent *s;

	if (!p)
		return NULL;
	s = slot(p->e, p->cap, dev, ino);
	return s->path;
}

int memmon_paths__for_each(const struct memmon_paths *p,
			   int (*fn)(void *ctx, __u64 dev, __u64 ino,
				     const char *path),
			   void *ctx)
{
	size_t i;
	int ret;

	if (!p || !fn)
		return libmm_err(-EINVAL);
	for (i = 0; i < p->cap; i++) {
		if (!p->e[i].path)
			continue;
		ret = fn(ctx, p->e[i].dev, p->e[i].ino, p->e[i].path);
		if (ret)
			return ret;
	}
	return 0;
}
