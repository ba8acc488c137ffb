// SPDX-License-Identifier: GPL-2.0
/*
 * test_rec_check.c - the record validator (uapi/memmon_rec_check.h), table
 * driven with hostile records, and its use by driver/ring.h's consumer
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
	__u32 len;		/* MARK len / EXEC, PATH path_len */
	__u64 avail;		/* 0: AVAIL */
	enum memmon_rec_verdict want;
};

static const struct rec_case cases[] = {
	{ "lost, exact", sizeof(struct memmon_rec_lost), MEMMON_REC_LOST, 0, 0, MEMMON_REC_OK },
	{ "syscall, exact", sizeof(struct memmon_rec_syscall), MEMMON_REC_SYSCALL, 0, 0, MEMMON_REC_OK },
	{ "fault, longer", sizeof(struct memmon_rec_fault) + 8, MEMMON_REC_FAULT, 0, 0, MEMMON_REC_OK },
	{ "unknown type: framed is enough", 24, 200, 0, 0, MEMMON_REC_OK },
	{ "unknown type 0xffff", 24, 0xffff, 0, 0, MEMMON_REC_OK },
	{ "size 0", 0, MEMMON_REC_LOST, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "size below a header", 16, 200, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "size misaligned", 44, 200, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "size huge", 0xfffffff8U, 200, 0, 0, MEMMON_REC_BAD_FRAME },
	{ "crossing the end", 64, 200, 0, 56, MEMMON_REC_BAD_FRAME },
	{ "exactly at the end", 56, 200, 0, 56, MEMMON_REC_OK },
	{ "no header available", 24, 200, 0, 16, MEMMON_REC_BAD_FRAME },
	{ "type 0", 24, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "type 0, large", 256, 0, 0, 0, MEMMON_REC_BAD_BODY },
	{ "lost below its struct", 40, MEMMON_REC_LOST, 0, 0, MEMMON_REC_BAD_BODY },
	{ "syscall below its struct", 104, MEMMON_REC_SYSCALL, 0, 0, MEMMON_REC_BAD_BODY },
	{ "fork below its struct", 24, MEMMON_REC_FORK, 0, 0, MEMMON_REC_BAD_BODY },
	{ "path below its struct", 40, MEMMON_REC_PATH, 0, 0, MEMMON_REC_BAD_BODY },
	{ "mark, payload fits", 48, MEMMON_REC_MARK, 16, 0, MEMMON_REC_OK },
	{ "mark, payload past the end", 48, MEMMON_REC_MARK, 17, 0, MEMMON_REC_BAD_BODY },
	{ "mark, len huge", 48, MEMMON_REC_MARK, 0xffffffffU, 0, MEMMON_REC_BAD_BODY },
	{ "exec, path and NUL fit", 48, MEMMON_REC_EXEC, 15, 0, MEMMON_REC_OK },
	{ "exec, no room for the NUL", 48, MEMMON_REC_EXEC, 16, 0, MEMMON_REC_BAD_BODY },
	{ "path, path and NUL fit", 64, MEMMON_REC_PATH, 15, 0, MEMMON_REC_OK },
	{ "path, no room for the NUL", 64, MEMMON_REC_PATH, 16, 0, MEMMON_REC_BAD_BODY },
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
		cmocka_unit_test(test_ring_peek),
	};

	return cmocka_run_group_tests_name("rec_check", tests, NULL, NULL);
}
