// SPDX-License-Identifier: GPL-2.0
/*
 * test_rec_check.c - the record validator (uapi/memmon_rec_check.h), table
 * driven with hostile records, and its use by driver/transport/ring.h's consumer
 * check, memmon_ring_peek().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ring.h"
#include <memmon_rec_check.h>

#define AVAIL 512

struct rec_case {
	const char *what;
	__u32 size;
	__u16 type;
	__u32 len;		/* MARK len / EXEC, PATH path_len /
				 * SYSCALL, FAULT: the user stack's nr
				 */
	int ustack;		/* SYSCALL, FAULT: set *_USTACK */
	__u64 avail;		/* 0: AVAIL */
	enum memmon_rec_verdict want;
};

static const struct rec_case cases[] = {
	{ "lost, exact", sizeof(struct memmon_rec_lost), MEMMON_REC_LOST, 0, 0, 0, MEMMON_REC_OK },
	{ "syscall, a stack of 2", sizeof(struct memmon_rec_syscall) + 24, MEMMON_REC_SYSCALL,
	  2, 1, 0, MEMMON_REC_OK },
	{ "syscall, a stack of 0", sizeof(struct memmon_rec_syscall) + 8, MEMMON_REC_SYSCALL,
	  0, 1, 0, MEMMON_REC_OK },
	{ "syscall, a stack of 3 in room for 2", sizeof(struct memmon_rec_syscall) + 24,
	  MEMMON_REC_SYSCALL, 3, 1, 0, MEMMON_REC_BAD_BODY },
	{ "syscall, the flag without room for a stack", sizeof(struct memmon_rec_syscall),
	  MEMMON_REC_SYSCALL, 0, 1, 0, MEMMON_REC_BAD_BODY },
	{ "syscall, a stack of 65535", sizeof(struct memmon_rec_syscall) + 24,
	  MEMMON_REC_SYSCALL, 0xffff, 1, 0, MEMMON_REC_BAD_BODY },
	{ "fault, a stack of 1", sizeof(struct memmon_rec_fault) + 16, MEMMON_REC_FAULT,
	  1, 1, 0, MEMMON_REC_OK },
	{ "fault, a stack of 2 in room for 1", sizeof(struct memmon_rec_fault) + 16,
	  MEMMON_REC_FAULT, 2, 1, 0, MEMMON_REC_BAD_BODY },
	{ "auxv, exact", sizeof(struct memmon_rec_auxv), MEMMON_REC_AUXV, 0, 0, 0, MEMMON_REC_OK },
	{ "auxv below its struct", sizeof(struct memmon_rec_auxv) - 8, MEMMON_REC_AUXV, 0, 0,
	  0, MEMMON_REC_BAD_BODY },
	{ "syscall, exact", sizeof(struct memmon_rec_syscall), MEMMON_REC_SYSCALL, 0, 0, 0, MEMMON_REC_OK },
	{ "fault, longer", sizeof(struct memmon_rec_fault) + 8, MEMMON_REC_FAULT, 0, 0, 0, MEMMON_REC_OK },
	{ "unknown type: framed is enough", 24, 200, 0, 0, 0, MEMMON_REC_OK },
	{ "unknown type 0xffff", 24, 0xffff, 0, 0, 0, MEMMON_REC_OK },
	{ "size 0", 0, MEMMON_REC_LOST, 0, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "size below a header", 16, 200, 0, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "size misaligned", 44, 200, 0, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "size huge", 0xfffffff8U, 200, 0, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "crossing the end", 64, 200, 0, 0, 56, MEMMON_REC_BAD_FRAME },
	{ "exactly at the end", 56, 200, 0, 0, 56, MEMMON_REC_OK },
	{ "no header available", 24, 200, 0, 0, 16, MEMMON_REC_BAD_FRAME },
	{ "type 0", 24, 0, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "type 0, large", 256, 0, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "lost below its struct", 40, MEMMON_REC_LOST, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "syscall below its struct", 104, MEMMON_REC_SYSCALL, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "fork below its struct", 24, MEMMON_REC_FORK, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "path below its struct", 40, MEMMON_REC_PATH, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "mark, payload fits", 48, MEMMON_REC_MARK, 16, 0, 0, MEMMON_REC_OK },
	{ "mark, payload past the end", 48, MEMMON_REC_MARK, 17, 0, 0, MEMMON_REC_BAD_BODY },
	{ "mark, len huge", 48, MEMMON_REC_MARK, 0xffffffffU, 0, 0, MEMMON_REC_BAD_BODY },
	{ "exec, path and NUL fit", 48, MEMMON_REC_EXEC, 15, 0, 0, MEMMON_REC_OK },
	{ "exec, no room for the NUL", 48, MEMMON_REC_EXEC, 16, 0, 0, MEMMON_REC_BAD_BODY },
	{ "path, path and NUL fit", 64, MEMMON_REC_PATH, 15, 0, 0, MEMMON_REC_OK },
	{ "path, no room for the NUL", 64, MEMMON_REC_PATH, 16, 0, 0, MEMMON_REC_BAD_BODY },
};

static void build(__u8 *buf, const struct rec_case *c)
{
	struct memmon_rec_header *h = (void *)buf;

	memset(buf, 0, AVAIL);
	h->size = c->size;
	h->type = c->type;
	switch (c->type) {
	case MEMMON_REC_MARK:
		((struct memmon_rec_mark *)h)->len = c->len;
		break;
	case MEMMON_REC_EXEC:
		((struct memmon_rec_exec *)h)->path_len = c->len;
		break;
	case MEMMON_REC_PATH:
		((struct memmon_rec_path *)h)->path_len = c->len;
		break;
	case MEMMON_REC_SYSCALL:
		if (c->ustack) {
			((struct memmon_rec_syscall *)h)->flags = MEMMON_SYSF_USTACK;
			if (c->size >= sizeof(struct memmon_rec_syscall) + 8)
				((struct memmon_user_stack *)(buf +
				  sizeof(struct memmon_rec_syscall)))->nr = c->len;
		}
		break;
	case MEMMON_REC_FAULT:
		if (c->ustack) {
			((struct memmon_rec_fault *)h)->flags = MEMMON_FAULTF_USTACK;
			((struct memmon_user_stack *)(buf +
			  sizeof(struct memmon_rec_fault)))->nr = c->len;
		}
		break;
	}
}

static void test_verdicts(void **state)
{
	_Alignas(8) __u8 buf[AVAIL];
	enum memmon_rec_verdict v;
	size_t i;
	__u32 size;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rec_case *c = &cases[i];

		build(buf, c);
		size = 1;
		v = memmon_rec_check((void *)buf, c->avail ? c->avail : AVAIL, &size);
		if (v != c->want)
			fail_msg("%s: verdict %d, want %d", c->what, v, c->want);
		/* expect: the size read once is handed back, except without a header */
		if (size != ((c->avail && c->avail < 24) ? 0 : c->size))
			fail_msg("%s: size %u", c->what, size);
	}
}

/*
 * The fast path answers only what the full check would: the two agree on
 * every table case and on random records of every type and size.
 */
static void test_fast_is_slow(void **state)
{
	_Alignas(8) __u8 buf[AVAIL];
	enum memmon_rec_verdict fast, slow;
	__u32 fsize, ssize, x = 12345, i, j;
	__u64 avail;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build(buf, &cases[i]);
		avail = cases[i].avail ? cases[i].avail : AVAIL;
		fast = memmon_rec_check((void *)buf, avail, &fsize);
		slow = memmon_rec_check_slow((void *)buf, avail, &ssize);
		if (fast != slow || (fast != MEMMON_REC_BAD_FRAME && fsize != ssize))
			fail_msg("%s: fast %d/%u, slow %d/%u", cases[i].what, fast,
				 fsize, slow, ssize);
	}
	for (i = 0; i < 200000; i++) {
		struct memmon_rec_header *h = (void *)buf;

		for (j = 0; j < AVAIL; j++) {
			x = x * 1103515245 + 12345;
			buf[j] = (__u8)(x >> 16) & ((j % 8) < 2 ? 0xff : 0x1f);
		}
		x = x * 1103515245 + 12345;
		h->type = (x >> 16) % (MEMMON_REC__COUNT + 2);
		h->size = ((x >> 8) % (AVAIL / 8 + 2)) * 8 + ((x & 0x100) ? 4 : 0) * !(x & 0x7000);
		avail = (x >> 20) % 2 ? AVAIL : (x >> 4) % AVAIL;
		fast = memmon_rec_check((void *)buf, avail, &fsize);
		slow = memmon_rec_check_slow((void *)buf, avail, &ssize);
		if (fast != slow || (fast != MEMMON_REC_BAD_FRAME && fsize != ssize))
			fail_msg("random record %u (type %u size %u avail %llu): fast %d/%u, "
				 "slow %d/%u", i, h->type, h->size, (unsigned long long)avail,
				 fast, fsize, slow, ssize);
	}
}

/* The kernel's consumer refuses, at cons, anything the validator refuses. */
static void test_ring_peek(void **state)
{
	static _Alignas(8) u8 data[2 * AVAIL];
	const struct memmon_rec_header *rec;
	struct memmon_ring r = { .data = data, .size = AVAIL };
	enum memmon_peek want, got;
	size_t i;
	u32 size;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rec_case *c = &cases[i];
		u64 prod = 8 * AVAIL + (c->avail ? c->avail : AVAIL);

		build(data, c);
		want = c->want == MEMMON_REC_OK ? MEMMON_PEEK_RECORD : MEMMON_PEEK_BAD;
		got = memmon_ring_peek(&r, 8 * AVAIL, prod, &rec, &size);
		if (got != want)
			fail_msg("%s: peek %d, want %d", c->what, got, want);
		if (got == MEMMON_PEEK_RECORD)
			assert_int_equal(size, c->size);
	}
	/* expect: a misaligned or far consumer position is refused first */
	assert_int_equal(memmon_ring_peek(&r, 4, 64, &rec, &size), MEMMON_PEEK_BAD);
	assert_int_equal(memmon_ring_peek(&r, 0, 2 * AVAIL, &rec, &size), MEMMON_PEEK_BAD);
	assert_int_equal(memmon_ring_peek(&r, 64, 64, &rec, &size), MEMMON_PEEK_EMPTY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_fast_is_slow),
		cmocka_unit_test(test_ring_peek),
	};

	return cmocka_run_group_tests_name("rec_check", tests, NULL, NULL);
}
