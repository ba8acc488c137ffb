/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the user stack of the current task (struct memmon_user_stack in
 * the uapi header says what each entry is).
 */
#ifndef MEMMON_DRIVER_USTACK_H
#define MEMMON_DRIVER_USTACK_H

#include <linux/types.h>
#include <linux/memmon.h>

/* ip[0], the word at the stack pointer, then the frame-pointer walk. */
#define MEMMON_USTACK_MAX	(2 + MEMMON_STACK_DEPTH_MAX)

/*
 * A walked stack. @base entries precede the walk (ip[0] and, with
 * MEMMON_USTACK_SP, the stack pointer's word): a session asking for depth
 * d is given the first min(@nr, @base + d).
 */
struct memmon_ustack {
	u16 nr;
	u16 flags;		/* MEMMON_USTACK_* */
	u16 base;
	u64 ip[MEMMON_USTACK_MAX];
};

void memmon_ustack_walk(struct memmon_ustack *st, unsigned int depth);

struct mm_struct;
void memmon_auxv_fill(const struct mm_struct *mm, struct memmon_rec_auxv *rec);

/* Entries of @st for a session that asked for @depth frames. */
static inline unsigned int memmon_ustack_nr(const struct memmon_ustack *st,
					    unsigned int depth)
{
	unsigned int n = st->base + depth;

	return n < st->nr ? n : st->nr;
}

/* Bytes of the struct memmon_user_stack that carries @nr entries. */
static inline u32 memmon_ustack_bytes(unsigned int nr)
{
	return sizeof(struct memmon_user_stack) + nr * sizeof(u64);
}

/*
 * Write @st's first @nr entries as a struct memmon_user_stack at @to
 * (memmon_ustack_bytes(@nr) bytes, inside a ring's reservation).
 */
static __always_inline void memmon_ustack_put(void *to,
					      const struct memmon_ustack *st,
					      unsigned int nr)
{
	struct memmon_user_stack *u = to;

	u->nr = nr;
	/* Cut inside the walk, or the walk itself stopped at its depth. */
	u->flags = st->flags & ~MEMMON_USTACK_TRUNCATED;
	if (nr > st->base &&
	    (nr < st->nr || (st->flags & MEMMON_USTACK_TRUNCATED)))
		u->flags |= MEMMON_USTACK_TRUNCATED;
	u->__reserved = 0;
	memcpy(u->ip, st->ip, nr * sizeof(u64));
}

#endif /* MEMMON_DRIVER_USTACK_H */
