/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call sites for memmon report: each mmap/brk record's stack reduced to a
 * key (the first frame outside libc and ld.so, or with --call-site=full
 * the whole stack), interned in a table; regions keep the site's number.
 */
#ifndef MEMMON_TOOLS_REPORT_SITES_H
#define MEMMON_TOOLS_REPORT_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "symbolize.h"

#define SITES_MAX		65536	/* distinct sites kept; the rest: none */
#define SITES_MAX_FRAMES	(MEMMON_STACK_DEPTH_MAX + 2)

struct site {
	char *key;
	unsigned int hash;
	unsigned int next;		/* chain, 1-based, 0 ends */
	unsigned int at;		/* frame[at]: the call site */
	size_t nr;
	struct sym_frame *frame;	/* the stack it was first seen with */
};

struct sites {
	struct symbolizer *sym;
	bool full;			/* --call-site=full */
	struct site *site;		/* [1..nr]; site[0] unused */
	size_t nr, cap;
	unsigned int bucket[4096];
};

int sites_init(struct sites *t);
void sites_fini(struct sites *t);

/*
 * The site of rec (fed to t->sym before, by the caller): a number >= 1,
 * or 0 when the record has no usable stack (or the table is full).
 */
unsigned int sites_of(struct sites *t, const struct memmon_rec_header *rec);

static inline const struct site *sites_get(const struct sites *t, unsigned int i)
{
	return i && i <= t->nr ? &t->site[i] : NULL;
}

#endif /* MEMMON_TOOLS_REPORT_SITES_H */
