// SPDX-License-Identifier: GPL-2.0
/*
 * The call-site table of memmon report (see report_sites.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report_sites.h"

int sites_init(struct sites *t)
{
	memset(t, 0, sizeof(*t));
	t->sym = sym_new();
	return t->sym ? 0 : -ENOMEM;
}

void sites_fini(struct sites *t)
{
	size_t i;

	for (i = 1; i <= t->nr; i++) {
		free(t->site[i].key);
		free(t->site[i].frame);
	}
	free(t->site);
	sym_free(t->sym);
	memset(t, 0, sizeof(*t));
}

/* FNV-1a */
static unsigned int hash_str(const char *s)
{
	unsigned int h = 2166136261U;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619U;
	return h;
}

/*
 * A frame's part of the key: where in which file (function and offset,
 * or file offset), so one site in two processes (or runs at other
 * addresses) is one key; the raw address when no file is known.
 */
static int key_frame(char *buf, size_t len, const struct sym_frame *f)
{
	if (f->file && f->sym)
		return snprintf(buf, len, "%s:%s+%llx;", f->file, f->sym,
				(unsigned long long)f->off);
	if (f->file)
		return snprintf(buf, len, "%s+%llx;", f->file, (unsigned long long)f->off);
	return snprintf(buf, len, "@%llx;", (unsigned long long)f->ip);
}

unsigned int sites_of(struct sites *t, const struct memmon_rec_header *rec)
{
	struct sym_frame f[SITES_MAX_FRAMES];
	char key[8192];
	size_t n, i, at, len = 0;
	unsigned int h, idx;
	struct site *s;

	n = sym_stack(t->sym, rec, f, SITES_MAX_FRAMES);
	if (!n)
		return 0;
	/* the first frame outside libc and ld.so; all inside: the last one */
	for (at = 0; at < n - 1 && sym_frame_is_libc(&f[at]); at++)
		;
	for (i = t->full ? 0 : at; i < (t->full ? n : at + 1); i++) {
		int w = key_frame(key + len, sizeof(key) - len, &f[i]);

		if (w < 0 || (size_t)w >= sizeof(key) - len)
			break;
		len += w;
	}
	key[len] = '\0';
	h = hash_str(key);
	for (idx = t->bucket[h % 4096]; idx; idx = t->site[idx].next)
		if (t->site[idx].hash == h && !strcmp(t->site[idx].key, key))
			return idx;
	if (t->nr + 1 >= SITES_MAX)
		return 0;
	if (t->nr + 1 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct site *ns = realloc(t->site, cap * sizeof(*ns));

		if (!ns)
			return 0;
		t->site = ns;
		t->cap = cap;
	}
	s = &t->site[t->nr + 1];
	memset(s, 0, sizeof(*s));
	s->key = strdup(key);
	s->frame = malloc(n * sizeof(*s->frame));
	if (!s->key || !s->frame) {
		free(s->key);
		free(s->frame);
		return 0;
	}
	memcpy(s->frame, f, n * sizeof(*f));
	s->nr = n;
	s->at = at;
	s->hash = h;
	s->next = t->bucket[h % 4096];
	t->nr++;
	t->bucket[h % 4096] = t->nr;
	return t->nr;
}
