/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's address space as `memmon report` models it: disjoint
 * regions [start, end), looked up by address once per page fault and
 * changed by every mmap/munmap/mremap/brk.
 *
 * Layout (structure of arrays): the sorted order holds only what a fault
 * and an insert touch, starts[], ends[], count[] and slot[] (36 bytes a
 * position); the rest of each region (struct region, 72 bytes) stays put
 * in a pool and slot[i] says where the one at position i lives. A fault is
 * a search over ends[] (region_map_lower(): halving, then two rounds of
 * independent loads), tried after a one-entry cache of the last hit
 * (faults of real programs cluster), and an increment in count[]: it
 * never touches the pool, so the model's working set per fault is the
 * packed arrays.
 *
 * Tombstones. A region unmapped whole leaves its position as a tombstone
 * (slot REGION_TOMB, start == end, no counts) instead of closing the gap:
 * munmap moves nothing, and an mmap into a tombstone's place (programs
 * map again where they unmapped) moves nothing either. A tombstone's
 * start and end are one value v between its neighbours' (ends[k-1] <= v
 * <= starts[k+1]), so starts[] and ends[] stay sorted and a search needs
 * no test for them: a tombstone never holds an address. When tombstones
 * outnumber the regions the order is compacted in one pass, so each costs
 * O(1) moves amortised and a search at most one more step. Otherwise an
 * insert moves the shorter side of the order, which has room at both ends.
 *
 * Single-threaded; no locking.
 */
#ifndef MEMMON_TOOLS_REGION_MAP_H
#define MEMMON_TOOLS_REGION_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct region {
	__u64 start, end;
	__u32 prot;
	__u32 flags;		/* mmap flags; 0 for brk */
	bool file;
	bool heap;		/* grown by brk */
	bool image;		/* anonymous, MAP_FIXED over a file mapping:
				 * part of that file's image (a library's
				 * .bss); dev/ino are the file's
				 */
	bool startup;		/* anonymous, mapped while the loader ran
				 * (see report_leaks.h)
				 */
	__u32 site;		/* report_sites.h's number of the call
				 * site that mapped it; 0: none known
				 */
	__u64 dev, ino;
	__u64 mapped_ns;
	__u64 faults;
	__u64 major;
};

struct region_count {
	__u64 faults, major;
};

#define REGION_TOMB	0xffffffffU	/* slot[] of a tombstone */

struct region_map {
	/*
	 * The order: len positions (nr regions, nr_tomb tombstones) at
	 * [lo, lo + len) of buffers of cap, free room on both sides, so
	 * that an insert moves whichever side of it is shorter (mmap hands
	 * out addresses top-down: most new regions go in at the front).
	 * The views below point at [lo].
	 */
	/* sorted: starts[i] <= ends[i] <= starts[i + 1], < for a region */
	__u64 *starts;
	__u64 *ends;
	struct region_count *count; /* the faults (the pool's are stale) */
	__u32 *slot;		/* index into pool, or REGION_TOMB */
	size_t nr;		/* regions */
	size_t len, nr_tomb;	/* positions: nr + nr_tomb */
	size_t lo, cap;
	struct region *pool;	/* [cap] */
	size_t pool_nr;		/* pool entries ever used: nr + nr_freed */
	__u32 *freed;		/* [cap] pool entries free for reuse */
	size_t nr_freed;
	size_t last;		/* where the last lookup hit: a hint only */
};

/*
 * Called for each region region_map_carve() removes whole, while it is
 * still there: region_map_get(m, i, ...) reads it, m->count[i] is its
 * faults (so a caller that only wants some need not touch the pool).
 */
typedef void (*region_retire_fn)(void *ctx, const struct region_map *m, size_t i);

static inline void region_map_init(struct region_map *m)
{
	*m = (struct region_map){ 0 };
}

void region_map_fini(struct region_map *m);
/* Forget every region (exec: a new address space); keeps the memory. */
void region_map_clear(struct region_map *m);
/* dst (empty) becomes a copy of src. -ENOMEM leaves dst empty. */
int region_map_copy(struct region_map *dst, const struct region_map *src);

/* Position i < len holds a region (not a tombstone). */
static inline bool region_map_live(const struct region_map *m, size_t i)
{
	return m->slot[i] != REGION_TOMB;
}

/* The region at position i (i < len, live) into *r. */
void region_map_get(const struct region_map *m, size_t i, struct region *r);
/* Copy the regions, lowest first, to out[0..nr). */
void region_map_export(const struct region_map *m, struct region *out);

/* The first position with end > addr (len if none). */
size_t region_map_lower(const struct region_map *m, __u64 addr);
/* The order position of the region holding addr, or -1. */
long region_map_find(struct region_map *m, __u64 addr);
/* A fault at addr: count it on the region holding it, if any. */
static inline void region_map_fault(struct region_map *m, __u64 addr, bool major)
{
	long i = region_map_find(m, addr);

	if (i >= 0) {
		m->count[i].faults++;
		m->count[i].major += major;
	}
}

/* Regions overlapping [start, end) get prot, whole (see on_syscall()). */
void region_map_set_prot(struct region_map *m, __u64 start, __u64 end,
			 __u32 prot);

/*
 * Remove [start, end): regions inside it go (retire is called for each,
 * if not NULL), regions across an edge keep their outside part. A region cut in two keeps its counts on the left part. Returns the
 * bytes that were mapped in [start, end), or -ENOMEM (nothing changed).
 */
long long region_map_carve(struct region_map *m, __u64 start, __u64 end,
			   region_retire_fn retire, void *ctx);
/*
 * Map r: whatever overlapped it is carved out first (and retired). Returns
 * the bytes that were replaced, or -ENOMEM (nothing changed).
 */
long long region_map_insert(struct region_map *m, const struct region *r,
			    region_retire_fn retire, void *ctx);
/*
 * The heap region that ends at start grows to end, as the kernel grows
 * its one heap VMA when brk moves up: whatever overlapped [start, end) is
 * carved out first (and retired). Returns the bytes that were replaced;
 * -ENOENT if no heap region ends at start, -ENOMEM (nothing changed either
 * way: the caller inserts a region of its own instead).
 */
long long region_map_grow(struct region_map *m, __u64 start, __u64 end,
			  region_retire_fn retire, void *ctx);

#endif
