// SPDX-License-Identifier: GPL-2.0
/*
 * JSON lines: every record type gives one parseable object; escaping of
 * hostile strings (quotes, control bytes, invalid UTF-8); unknown types are
 * skipped; failed writes are errors; memmon_rec__format_json() cuts as
 * snprintf() does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <jansson.h>
#include "internal.h"
#include "test_lib_rec.h"

static json_t *parse(const struct memmon_rec_header *rec,
		     const struct memmon_format_opts *o)
{
	char *s = memmon_rec__to_json(rec, o);
	json_error_t jerr;
	json_t *j;

	assert_non_null(s);
	/* one line: no raw newline inside */
	assert_null(strchr(s, '\n'));
	j = json_loads(s, 0, &jerr);
	if (!j)
		fail_msg("not JSON (%s): %s", jerr.text, s);
	free(s);
	return j;
}

static const char *str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_string(v))
		fail_msg("%s: not a string", k);
	return json_string_value(v);
}

static long long num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		fail_msg("%s: not an integer", k);
	return json_integer_value(v);
}

static void test_mmap(void **state)
{
	union rec_buf b;
	json_t *j, *a;

	(void)state;
	rec_syscall(&b, MEMMON_SYS_MMAP, 0, 4096, 3, 0x22, (__u64)-1, 0,
		    0x7f12345000, 12000);
	j = parse(&b.hdr, NULL);
	assert_string_equal(str(j, "type"), "syscall");
	assert_string_equal(str(j, "name"), "mmap");
	assert_int_equal(num(j, "tgid"), 1234);
	assert_int_equal(num(j, "tid"), 1235);
	assert_int_equal(num(j, "cpu"), 1);
	assert_int_equal(num(j, "ret"), 0x7f12345000);
	assert_int_equal(num(j, "duration_ns"), 12000);
	assert_null(json_object_get(j, "errno"));
	a = json_object_get(j, "args");
	assert_string_equal(str(a, "addr"), "0x0");
	assert_int_equal(num(a, "len"), 4096);
	assert_string_equal(str(a, "prot"), "PROT_READ|PROT_WRITE");
	assert_string_equal(str(a, "flags"), "MAP_PRIVATE|MAP_ANONYMOUS");
	assert_int_equal(num(a, "fd"), -1);
	json_decref(j);

	rec_syscall(&b, MEMMON_SYS_MUNMAP, 0x1000, 4096, 0, 0, 0, 0, -EINVAL, 1);
	j = parse(&b.hdr, NULL);
	assert_int_equal(num(j, "ret"), -EINVAL);
	assert_string_equal(str(j, "errno"), "EINVAL");
	json_decref(j);
}

static void test_every_type(void **state)
{
	static const __u16 types[] = {
		MEMMON_REC_LOST, MEMMON_REC_MARK, MEMMON_REC_SYSCALL,
		MEMMON_REC_FAULT, MEMMON_REC_RSS, MEMMON_REC_FORK,
		MEMMON_REC_EXEC, MEMMON_REC_EXIT, MEMMON_REC_PATH,
		MEMMON_REC_COMM, MEMMON_REC_AUXV,
	};
	struct memmon_format_opts o = { .sz = sizeof(o), .realtime_offset_ns = TEST_OFFSET };
	union rec_buf b;
	size_t i;
	__u32 sys;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		json_t *j;

		if (types[i] == MEMMON_REC_EXEC || types[i] == MEMMON_REC_PATH)
			rec_path(&b, types[i], "/usr/bin/x");
		else if (types[i] == MEMMON_REC_MARK)
			rec_mark(&b, "m", 1);
		else
			rec_hdr(&b, types[i], 256);
		j = parse(&b.hdr, &o);
		/* the type name and the wall-clock time are there */
		assert_string_equal(str(j, "type"), memmon_rec_type__name(types[i]));
		assert_int_equal(num(j, "realtime_ns"), TEST_T0_REAL + 123456000LL);
		json_decref(j);
	}
	for (sys = 0; sys <= MEMMON_SYS__COUNT; sys++) {
		json_t *j;

		rec_syscall(&b, sys, 1, 2, 3, 4, 5, 6, 0, 0);
		j = parse(&b.hdr, NULL);
		assert_non_null(json_object_get(j, "args"));
		json_decref(j);
	}
}

/* COMM: why by name and the name as a string. */
static void test_comm(void **state)
{
	struct memmon_rec_comm *cm;
	union rec_buf b;
	json_t *j;

	(void)state;
	cm = (void *)&b;
	rec_hdr(&b, MEMMON_REC_COMM, sizeof(*cm));
	cm->why = MEMMON_COMM_RENAME;
	strcpy(cm->comm, "w\"1");
	j = parse(&b.hdr, NULL);
	assert_string_equal(str(j, "type"), "comm");
	assert_string_equal(str(j, "why"), "rename");
	assert_string_equal(str(j, "comm"), "w\"1");
	assert_int_equal(num(j, "tid"), 1235);
	json_decref(j);
	/* an unknown why: its number */
	cm->why = 9;
	j = parse(&b.hdr, NULL);
	assert_int_equal(num(j, "why"), 9);
	json_decref(j);
}

/* The user stack as an object of hex strings; AUXV's fields. */
static void test_ustack_auxv(void **state)
{
	struct memmon_rec_syscall *sc;
	struct memmon_user_stack *u;
	struct memmon_rec_auxv *a;
	union rec_buf b;
	json_t *j, *st, *ips;

	(void)state;
	rec_syscall(&b, MEMMON_SYS_MMAP, 0, 4096, 3, 0x22, -1, 0, 0x7f0000000000LL, 0);
	j = parse(&b.hdr, NULL);
	assert_null(json_object_get(j, "ustack"));
	json_decref(j);
	sc = (void *)&b;
	sc->flags |= MEMMON_SYSF_USTACK;
	b.hdr.size = sizeof(*sc) + sizeof(*u) + 2 * 8;
	u = (void *)(sc + 1);
	u->nr = 2;
	u->flags = MEMMON_USTACK_SP | MEMMON_USTACK_TRUNCATED;
	u->ip[0] = 0x7f00000019b3ULL;
	u->ip[1] = 0x55000000aaaaULL;
	j = parse(&b.hdr, NULL);
	st = json_object_get(j, "ustack");
	ips = json_object_get(st, "ips");
	assert_int_equal(json_array_size(ips), 2);
	assert_string_equal(json_string_value(json_array_get(ips, 0)), "0x7f00000019b3");
	assert_string_equal(json_string_value(json_array_get(ips, 1)), "0x55000000aaaa");
	assert_true(json_is_true(json_object_get(st, "sp")));
	assert_true(json_is_true(json_object_get(st, "truncated")));
	assert_true(json_is_false(json_object_get(st, "compat")));
	json_decref(j);

	a = (void *)&b;
	rec_hdr(&b, MEMMON_REC_AUXV, sizeof(*a));
	a->phdr = 0x1040;
	a->phnum = 13;
	a->base = 0x7f0000001000ULL;
	j = parse(&b.hdr, NULL);
	assert_string_equal(str(j, "type"), "auxv");
	assert_string_equal(str(j, "phdr"), "0x1040");
	assert_int_equal(num(j, "phnum"), 13);
	assert_string_equal(str(j, "base"), "0x7f0000001000");
	assert_string_equal(str(j, "vdso"), "0x0");
	json_decref(j);
}

/* A revoked watch reads as the end of the process, and says why. */
static void test_exit_revoked(void **state)
{
	union rec_buf b;
	struct memmon_rec_exit *x = (void *)&b;
	json_t *j;

	(void)state;
	rec_hdr(&b, MEMMON_REC_EXIT, sizeof(*x));
	x->flags = MEMMON_EXITF_GROUP | MEMMON_EXITF_REVOKED;
	j = parse(&b.hdr, NULL);
	assert_string_equal(str(j, "how"), "revoked");
	assert_true(json_is_true(json_object_get(j, "group")));
	assert_true(json_is_true(json_object_get(j, "revoked")));
	assert_null(json_object_get(j, "status"));
	json_decref(j);
	/* An ordinary exit has no "revoked" member. */
	x->flags = MEMMON_EXITF_GROUP;
	j = parse(&b.hdr, NULL);
	assert_null(json_object_get(j, "revoked"));
	assert_string_equal(str(j, "how"), "exited 0");
	json_decref(j);
}

static void test_fault(void **state)
{
	union rec_buf b;
	struct memmon_rec_fault *f = (void *)&b;
	json_t *j;

	(void)state;
	rec_hdr(&b, MEMMON_REC_FAULT, sizeof(*f));
	f->addr = 0xffff800000001000ULL;	/* beyond 2^63: still exact */
	f->ip = 0x401000;
	f->access = MEMMON_FAULT_WRITE;
	f->fclass = MEMMON_FCLASS_SWAP;
	f->flags = MEMMON_FAULTF_MAJOR;
	j = parse(&b.hdr, NULL);
	assert_string_equal(str(j, "addr"), "0xffff800000001000");
	assert_string_equal(str(j, "access"), "write");
	assert_string_equal(str(j, "class"), "swap");
	assert_true(json_is_true(json_object_get(j, "major")));
	assert_string_equal(str(j, "result"), "handled");
	json_decref(j);
}

static void test_escaping(void **state)
{
	static const struct {
		const char *in;
		__u32 len;
		const char *want;	/* the decoded JSON string */
	} c[] = {
		{ "plain", 5, "plain" },
		{ "q\"uo\\te", 7, "q\"uo\\te" },
		{ "nl\nt\tcr\r", 8, "nl\nt\tcr\r" },
		{ "\x01\x1f", 2, "\x01\x1f" },
		{ "caf\xc3\xa9", 5, "caf\xc3\xa9" },	/* valid UTF-8 kept */
		{ "bad\xff\xfe", 5, "bad\\xff\\xfe" },	/* invalid: \xNN text */
		{ "nul\0x", 5, "nul\\x00x" },
		{ "</script>", 9, "</script>" },
	};
	union rec_buf b;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		json_t *j;

		rec_mark(&b, c[i].in, c[i].len);
		j = parse(&b.hdr, NULL);
		if (strcmp(str(j, "text"), c[i].want))
			fail_msg("case %zu: got \"%s\"", i, str(j, "text"));
		json_decref(j);
	}
}

static void test_unknown_and_errors(void **state)
{
	union rec_buf b;
	FILE *f;
	char *mem = NULL;
	size_t len = 0;

	(void)state;
	rec_hdr(&b, 77, 64);
	errno = 0;
	/* unknown: NULL with ENOMSG, and fprint writes nothing */
	assert_null(memmon_rec__to_json(&b.hdr, NULL));
	assert_int_equal(errno, ENOMSG);
	f = open_memstream(&mem, &len);
	assert_int_equal(memmon_rec__fprint_json(f, &b.hdr, NULL), 0);
	fclose(f);
	assert_int_equal(len, 0);
	free(mem);

	/* malformed: EBADMSG */
	rec_syscall(&b, MEMMON_SYS_MMAP, 0, 0, 0, 0, 0, 0, 0, 0);
	b.hdr.size = 32;
	assert_null(memmon_rec__to_json(&b.hdr, NULL));
	assert_int_equal(errno, EBADMSG);

	f = fopen("/dev/full", "w");
	setvbuf(f, NULL, _IONBF, 0);
	rec_mark(&b, "x", 1);
	assert_int_equal(memmon_rec__fprint_json(f, &b.hdr, NULL), -ENOSPC);
	fclose(f);
}

/* The object of memmon_rec__to_json(), into a buffer, cut as snprintf() cuts. */
static void test_format_json(void **state)
{
	union rec_buf b;
	char buf[512], small[16];
	char *s;
	int n;

	(void)state;
	rec_syscall(&b, MEMMON_SYS_MMAP, 0, 4096, 3, 0x22, (__u64)-1, 0,
		    0x7f12345000, 12000);
	s = memmon_rec__to_json(&b.hdr, NULL);
	assert_non_null(s);
	n = memmon_rec__format_json(&b.hdr, buf, sizeof(buf), NULL);
	/* the same object, and its length */
	assert_int_equal(n, (int)strlen(s));
	assert_string_equal(buf, s);
	/* cut and terminated, the whole length returned all the same */
	assert_int_equal(memmon_rec__format_json(&b.hdr, small, sizeof(small), NULL), n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, s, sizeof(small) - 1);
	/* no buffer: the length alone */
	assert_int_equal(memmon_rec__format_json(&b.hdr, NULL, 0, NULL), n);
	free(s);

	/* unknown type: nothing, 0 */
	rec_hdr(&b, 77, 64);
	strcpy(buf, "junk");
	assert_int_equal(memmon_rec__format_json(&b.hdr, buf, sizeof(buf), NULL), 0);
	assert_string_equal(buf, "");
	/* malformed: EBADMSG; no record: EINVAL */
	rec_syscall(&b, MEMMON_SYS_MMAP, 0, 0, 0, 0, 0, 0, 0, 0);
	b.hdr.size = 32;
	assert_int_equal(memmon_rec__format_json(&b.hdr, buf, sizeof(buf), NULL), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(memmon_rec__format_json(NULL, buf, sizeof(buf), NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap),
		cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_fault),
		cmocka_unit_test(test_exit_revoked),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_ustack_auxv),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_unknown_and_errors),
		cmocka_unit_test(test_format_json),
	};

	return cmocka_run_group_tests_name("lib_json", tests, NULL, NULL);
}
