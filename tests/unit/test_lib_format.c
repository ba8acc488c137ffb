// SPDX-License-Identifier: GPL-2.0
/*
 * The formatters produce exactly the bytes of their reference
 * (tests/unit/ref_format.c, the vsnprintf() and jansson originals): every
 * record type, edge values, every errno, hostile strings, every option, and
 * truncated buffers, byte for byte, return values and errno included;
 * memmon_rec__format_json() the reference's JSON with snprintf()'s
 * semantics. The records are drawn from a fixed seed, so a failure repeats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>
#include "internal.h"
#include "test_lib_rec.h"
#include "ref_format.h"

#define RECORDS		40000
#define BUF		(sizeof(union rec_buf) * 8)	/* > any line */
#define CANARY		0xa5

/* xorshift64*: the same records on every run. */
static __u64 rng = 0x9e3779b97f4a7c15ULL;

static __u64 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static __u64 below(__u64 n)
{
	return n ? rnd() % n : 0;
}

static __u64 pow_u64(__u64 b, unsigned int e)
{
	__u64 r = 1;

	while (e--)
		r *= b;
	return r;
}

/*
 * A 64-bit value: an edge of a digit count in decimal or hex (10^k - 1,
 * 10^k, 16^k - 1, ...), of a type (2^31, 2^53, 2^63, ~0), or random bits
 * of a random width.
 */
static __u64 val(void)
{
	static const __u64 fixed[] = {
		0, 1, 0x7f, 0x80, 0xff, 4095, 4096, INT32_MAX, 0x80000000ULL,
		UINT32_MAX, 1ULL << 32, 1ULL << 53, (1ULL << 53) + 1,
		INT64_MAX, 1ULL << 63, UINT64_MAX, UINT64_MAX - 1,
		999999, 1000000, 999999999, 1000000000, 1000000001,
		1999999999, 10000000000000000000ULL,
	};

	switch (below(4)) {
	case 0:
		return fixed[below(ARRAY_SIZE(fixed))];
	case 1: {
		__u64 p = pow_u64(10, (unsigned int)below(20));

		return p + below(3) - 1;
	}
	case 2: {
		__u64 p = below(16) ? 1ULL << (4 * below(16)) : 0;

		return p + below(3) - 1;
	}
	default:
		return rnd() >> below(64);
	}
}

static __u32 val32(void)
{
	return below(2) ? (__u32)below(8) : (__u32)val();
}

/* A syscall's return: every kind of errno, an address, a count. */
static __s64 ret_val(void)
{
	switch (below(4)) {
	case 0:
		return -(__s64)(1 + below(4096));	/* -1 .. -4096 */
	case 1:
		return -(__s64)(1 + below(135));	/* named errnos */
	case 2:
		return (__s64)(512 + below(20)) * -1;	/* kernel-internal */
	default:
		return (__s64)val();
	}
}

/* Syscall arguments that decode: flags, advice, fds. */
static __u64 prot_val(void)
{
	switch (below(3)) {
	case 0:
		return below(16) | (below(2) ? 0x01000000 : 0) | (below(2) ? 0x02000000 : 0);
	case 1:
		return below(8);
	default:
		return val();
	}
}

static __u64 mmap_flags_val(void)
{
	static const __u64 bits[] = {
		0x10, 0x20, 0x40, 0x100, 0x200, 0x800, 0x1000, 0x2000, 0x4000,
		0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x4000000,
	};
	__u64 v = below(16);
	unsigned int i;

	if (!below(5))
		return val();
	for (i = 0; i < ARRAY_SIZE(bits); i++)
		if (!below(4))
			v |= bits[i];
	if (!below(3))		/* MAP_HUGETLB with a size */
		v |= 0x40000 | (below(64) << 26);
	if (!below(8))
		v |= rnd() & ~0xffffffffULL;
	return v;
}

static __u64 small_flags_val(void)
{
	return below(2) ? below(16) : val();
}

static __u64 advice_val(void)
{
	switch (below(3)) {
	case 0:
		return below(30);
	case 1:
		return 98 + below(8);
	default:
		return val();
	}
}

/*
 * Bytes for a mark or a path: printable text, the characters JSON and C
 * escape, valid UTF-8 of every length, invalid UTF-8 (continuation bytes
 * alone, overlong leads, surrogates, beyond U+10FFFF, cut sequences), NUL.
 * clean strings are ASCII and valid UTF-8 only (jansson's own path); the
 * others take the \xNN one.
 */
static size_t gen_bytes(__u8 *p, size_t max, bool nul_ok)
{
	static const __u8 special[] = {
		'"', '\\', '\n', '\t', '\r', '\b', '\f', 0x01, 0x1f, 0x7f, '/',
		'<', '>', '%', '\'', ' ',
	};
	bool clean = below(2);
	size_t len, i = 0;

	switch (below(8)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = MEMMON_MARK_MAX - 1 + below(3);
		break;
	case 2:
		len = below(max + 1);
		break;
	default:
		len = below(48);
	}
	if (len > max)
		len = max;
	while (i < len) {
		__u8 seq[4];
		size_t n = 1, k;

		switch (below(clean ? 3 : 6)) {
		case 0:
			seq[0] = (__u8)(0x20 + below(0x5f));
			break;
		case 1:
			seq[0] = special[below(ARRAY_SIZE(special))];
			break;
		case 2:	/* valid UTF-8, 2 to 4 bytes */
			n = 2 + below(3);
			if (n == 2)
				seq[0] = (__u8)(0xc2 + below(30));
			else if (n == 3)
				seq[0] = (__u8)(0xe0 + below(16));
			else
				seq[0] = (__u8)(0xf0 + below(5));
			for (k = 1; k < n; k++)
				seq[k] = (__u8)(0x80 + below(64));
			/* the leads whose second byte has a narrower range */
			if (seq[0] == 0xe0)
				seq[1] |= 0x20;
			if (seq[0] == 0xed)
				seq[1] &= 0x9f;
			if (seq[0] == 0xf0 && seq[1] < 0x90)
				seq[1] |= 0x10;
			if (seq[0] == 0xf4)
				seq[1] &= 0x8f;
			break;
		case 3: {	/* invalid UTF-8 */
			static const __u8 bad[][4] = {
				{ 0x80 }, { 0xbf }, { 0xc0, 0x80 }, { 0xc1, 0xbf },
				{ 0xed, 0xa0, 0x80 }, { 0xed, 0xbf, 0xbf },
				{ 0xf4, 0x90, 0x80, 0x80 }, { 0xf5 }, { 0xff },
				{ 0xfe }, { 0xe0, 0x80, 0x80 }, { 0xf0, 0x80, 0x80, 0x80 },
				{ 0xc3 }, { 0xe2, 0x82 }, { 0xf0, 0x9f, 0x98 },
			};
			static const __u8 bad_len[] = {
				1, 1, 2, 2, 3, 3, 4, 1, 1, 1, 3, 4, 1, 2, 3,
			};
			k = below(ARRAY_SIZE(bad));
			n = bad_len[k];
			memcpy(seq, bad[k], n);
			break;
		}
		case 4:
			seq[0] = nul_ok ? 0 : 'z';
			break;
		default:
			seq[0] = (__u8)below(256);
			if (!seq[0] && !nul_ok)
				seq[0] = 0xff;
		}
		for (k = 0; k < n && i < len; k++)
			p[i++] = seq[k];
	}
	return len;
}

/* (dev, ino) -> path entries the syscall records point at. */
#define NR_PATHS 8
static __u64 path_dev[NR_PATHS], path_ino[NR_PATHS];

static struct memmon_paths *make_paths(void)
{
	struct memmon_paths *p = memmon_paths__new();
	char s[600];
	unsigned int i;

	assert_non_null(p);
	for (i = 0; i < NR_PATHS; i++) {
		size_t n = i ? gen_bytes((__u8 *)s, sizeof(s) - 1, false) : 0;

		s[n] = '\0';
		path_dev[i] = i == 1 ? UINT64_MAX : val();
		path_ino[i] = val();
		assert_int_equal(memmon_paths__add(p, path_dev[i], path_ino[i], s), 0);
	}
	return p;
}

static void gen_header(union rec_buf *b, __u16 type, size_t size)
{
	rec_hdr(b, type, size);
	b->hdr.cpu = (__u16)(below(2) ? below(64) : val());
	b->hdr.time_ns = val();
	b->hdr.tgid = val32();
	b->hdr.tid = val32();
}

/* Status words of every kind wait(2) describes, and junk. */
static __u32 status_val(void)
{
	switch (below(6)) {
	case 0:
		return (__u32)below(256) << 8;			/* exited */
	case 1:
		return (__u32)(1 + below(126)) | (below(2) ? 0x80 : 0);	/* killed */
	case 2:
		return 0x7f | (__u32)below(256) << 8;		/* stopped */
	case 3:
		return 0xffff;					/* continued */
	case 4:
		return (__u32)below(0x10000);
	default:
		return (__u32)val();
	}
}

/* A record of any type, sometimes malformed, sometimes of no known type. */
static void gen_record(union rec_buf *b)
{
	unsigned int i;

	switch (below(12)) {
	case 0: {
		struct memmon_rec_lost *l = (void *)b;

		gen_header(b, MEMMON_REC_LOST, sizeof(*l));
		l->count = below(4) ? val() : 0;
		l->first_ns = below(4) ? val() : 0;
		l->last_ns = val();
		break;
	}
	case 1: {
		struct memmon_rec_mark *m = (void *)b;
		__u8 data[MEMMON_MARK_MAX + 64];
		__u32 len = (__u32)gen_bytes(data, sizeof(data), true);

		gen_header(b, MEMMON_REC_MARK, sizeof(*m) + len);
		m->len = len;
		m->flags = val32();
		memcpy(m->data, data, len);
		break;
	}
	case 2:
	case 3:
	case 4: {
		struct memmon_rec_syscall *sc = (void *)b;

		gen_header(b, MEMMON_REC_SYSCALL, sizeof(*sc));
		sc->sys = below(8) ? (__u32)below(MEMMON_SYS__COUNT + 2) : val32();
		sc->flags = below(4) ? (__u32)below(4) : val32();
		for (i = 0; i < 6; i++)
			sc->args[i] = val();
		switch (sc->sys) {
		case MEMMON_SYS_MMAP:
		case MEMMON_SYS_MMAP2:
			if (below(2))
				sc->args[2] = prot_val();
			if (below(2))
				sc->args[3] = mmap_flags_val();
			if (below(2))
				sc->args[4] = below(2) ? (__u64)-1 : below(1000);
			break;
		case MEMMON_SYS_MPROTECT:
			sc->args[2] = prot_val();
			break;
		case MEMMON_SYS_MREMAP:
			sc->args[3] = small_flags_val();
			break;
		case MEMMON_SYS_MLOCK2:
			sc->args[2] = small_flags_val();
			break;
		case MEMMON_SYS_MLOCKALL:
			sc->args[0] = small_flags_val();
			break;
		case MEMMON_SYS_MADVISE:
			sc->args[2] = advice_val();
			break;
		}
		sc->ret = ret_val();
		sc->duration_ns = val();
		if (below(2)) {
			unsigned int k = (unsigned int)below(NR_PATHS);

			sc->aux[0] = path_dev[k];
			sc->aux[1] = path_ino[k];
		} else {
			sc->aux[0] = val();
			sc->aux[1] = val();
		}
		break;
	}
	case 5:
	case 6: {
		struct memmon_rec_fault *f = (void *)b;

		gen_header(b, MEMMON_REC_FAULT, sizeof(*f));
		f->addr = val();
		f->ip = val();
		f->access = val32();
		f->fclass = val32();
		f->result = val32();
		f->flags = below(4) ? (__u32)below(16) : val32();
		f->duration_ns = val();
		f->pfn = val();
		break;
	}
	case 7: {
		struct memmon_rec_rss *r = (void *)b;

		gen_header(b, MEMMON_REC_RSS, sizeof(*r));
		r->anon = val();
		r->file = val();
		r->shmem = val();
		r->swap = val();
		break;
	}
	case 8: {
		struct memmon_rec_fork *f = (void *)b;

		gen_header(b, MEMMON_REC_FORK, sizeof(*f));
		f->child_tgid = val32();
		f->child_tid = val32();
		f->flags = val32();
		break;
	}
	case 9: {
		struct memmon_rec_exit *x = (void *)b;

		gen_header(b, MEMMON_REC_EXIT, sizeof(*x));
		x->code = status_val();
		x->flags = below(2) ? (__u32)below(4) : val32();
		x->peak_rss = val();
		x->peak_vm = val();
		break;
	}
	case 10: {
		/* EXEC or PATH: up to a little over the text's 4096 */
		static __u8 s[4200];
		bool exec = below(2);
		__u32 len = (__u32)gen_bytes(s, below(8) ? 600 : sizeof(s), true);

		if (exec) {
			struct memmon_rec_exec *e = (void *)b;

			gen_header(b, MEMMON_REC_EXEC, sizeof(*e) + len + 1);
			e->path_len = len;
			memcpy(e->path, s, len);
		} else {
			struct memmon_rec_path *p = (void *)b;

			gen_header(b, MEMMON_REC_PATH, sizeof(*p) + len + 1);
			p->dev = val();
			p->ino = val();
			p->path_len = len;
			memcpy(p->path, s, len);
		}
		break;
	}
	default: {
		/* no type this library knows */
		static const __u16 types[] = { 0, MEMMON_REC__COUNT, 0x7fff, 0xffff };

		gen_header(b, types[below(ARRAY_SIZE(types))], 64 + below(64));
		break;
	}
	}

	/* Malformed: short, or a payload past the end, or no NUL. */
	if (!below(40)) {
		switch (below(3)) {
		case 0:
			b->hdr.size = (__u32)below(b->hdr.size);
			break;
		case 1:
			if (b->hdr.type == MEMMON_REC_MARK)
				((struct memmon_rec_mark *)b)->len += 1 + (__u32)below(64);
			else if (b->hdr.type == MEMMON_REC_EXEC)
				((struct memmon_rec_exec *)b)->path_len += 1 + (__u32)below(64);
			else if (b->hdr.type == MEMMON_REC_PATH)
				((struct memmon_rec_path *)b)->path_len += 1 + (__u32)below(64);
			break;
		default:
			if (b->hdr.type == MEMMON_REC_EXEC) {
				struct memmon_rec_exec *e = (void *)b;

				e->path[e->path_len] = 'x';
			}
		}
	}
}

/*
 * Options: absent, short (fields past sz are not read), every flag, wall
 * clocks before 1970 (shown as 1970), far ahead, and local time in the
 * zone the test sets.
 */
struct opts_case {
	struct {
		struct memmon_format_opts o;
		__u64 future;	/* zero: the opts are valid */
	} s;
	bool null;
};

static void gen_opts(struct opts_case *c, const struct memmon_paths *paths)
{
	static const __s64 offs[] = {
		0, TEST_OFFSET, -TEST_OFFSET, 1, -1, 999999999, 1000000000,
		-(1LL << 40), 1LL << 61, -(1LL << 61),
	};
	size_t sz;

	memset(c, 0, sizeof(*c));
	c->null = !below(10);
	switch (below(8)) {
	case 0:
		sz = sizeof(size_t);
		break;
	case 1:
		sz = offsetofend(struct memmon_format_opts, flags);
		break;
	case 2:
		sz = offsetofend(struct memmon_format_opts, realtime_offset_ns);
		break;
	case 3:
		sz = sizeof(c->s);	/* a newer caller's, tail zero */
		break;
	case 4:
		sz = below(sizeof(size_t));	/* too small: -EINVAL */
		break;
	default:
		sz = sizeof(c->s.o);
	}
	c->s.o.sz = sz;
	c->s.o.flags = (__u32)below(16) | (below(10) ? 0 : (__u32)val());
	c->s.o.realtime_offset_ns = below(3) ? offs[below(ARRAY_SIZE(offs))] :
					       (__s64)(rnd() >> 2) - (__s64)(rnd() >> 2);
	c->s.o.paths = below(4) ? paths : NULL;
	if (sz == sizeof(c->s) && !below(4))
		c->s.future = 1;	/* unknown request: -EINVAL */
}

static const struct memmon_format_opts *opts_of(const struct opts_case *c)
{
	return c->null ? NULL : &c->s.o;
}

/*
 * The reference adds time_ns to the offset as signed 64-bit numbers;
 * keep that sum in range (its overflow would be undefined there).
 */
static void fit_time(__u64 *t, const struct memmon_format_opts *o)
{
	__s64 off = o ? o->realtime_offset_ns : 0, r;

	while (__builtin_add_overflow((__s64)*t, off, &r))
		*t >>= 1;
}

static void fit_times(union rec_buf *b, const struct memmon_format_opts *o)
{
	fit_time(&b->hdr.time_ns, o);
	if (b->hdr.type == MEMMON_REC_LOST) {
		struct memmon_rec_lost *l = (void *)b;

		fit_time(&l->first_ns, o);
		fit_time(&l->last_ns, o);
	}
}

static void dump_rec(const union rec_buf *b)
{
	const __u8 *p = (const void *)b;
	__u32 i, n = b->hdr.size < 256 ? b->hdr.size : 256;

	fprintf(stderr, "record (%u bytes):", b->hdr.size);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n  ", p[i]);
	fprintf(stderr, "\n");
}

static char ref_buf[BUF], new_buf[BUF];

/* memmon_rec__format() into size bytes against the reference, canaries and all. */
static void check_text_size(const union rec_buf *b, const struct memmon_format_opts *o,
			    size_t size, bool null_buf)
{
	int r1, r2, e1, e2;

	memset(ref_buf, CANARY, sizeof(ref_buf));
	memset(new_buf, CANARY, sizeof(new_buf));
	errno = 0;
	r1 = ref_rec__format(&b->hdr, null_buf ? NULL : ref_buf, size, o);
	e1 = errno;
	errno = 0;
	r2 = memmon_rec__format(&b->hdr, null_buf ? NULL : new_buf, size, o);
	e2 = errno;
	if (r1 != r2 || (r1 < 0 && e1 != e2) || memcmp(ref_buf, new_buf, sizeof(ref_buf))) {
		dump_rec(b);
		fail_msg("text, size %zu: got %d (errno %d) \"%.*s\"\nwant %d (errno %d) \"%.*s\"",
			 size, r2, e2, (int)(size ? size : 1), new_buf, r1, e1,
			 (int)(size ? size : 1), ref_buf);
	}
}

static void check_text(const union rec_buf *b, const struct memmon_format_opts *o)
{
	int n = ref_rec__format(&b->hdr, NULL, 0, o);

	check_text_size(b, o, BUF, false);
	if (n < 0)
		return;
	/* cut anywhere, at the very end, one short; nothing at all */
	check_text_size(b, o, below((size_t)n + 2), false);
	check_text_size(b, o, (size_t)n, false);
	check_text_size(b, o, (size_t)n + 1, false);
	check_text_size(b, o, 0, true);
}

/*
 * memmon_rec__format_json() into size bytes: the reference's object cut
 * as snprintf() cuts, nothing written past the NUL; its errno negated
 * where the reference fails (0 and "" for an unknown type).
 */
static void check_json_size(const union rec_buf *b, const struct memmon_format_opts *o,
			    const char *want, int want_err, size_t size, bool null_buf)
{
	size_t len = want ? strlen(want) : 0;
	int r, e;

	memset(ref_buf, CANARY, sizeof(ref_buf));
	memset(new_buf, CANARY, sizeof(new_buf));
	if (size && !null_buf && want_err != EINVAL) {
		size_t k = len < size - 1 ? len : size - 1;

		memcpy(ref_buf, want ? want : "", k);
		ref_buf[k] = '\0';
	}
	errno = 0;
	r = memmon_rec__format_json(&b->hdr, null_buf ? NULL : new_buf, size, o);
	e = errno;
	if (want) {
		if (r != (int)len || memcmp(ref_buf, new_buf, sizeof(ref_buf))) {
			dump_rec(b);
			fail_msg("format_json, size %zu: got %d \"%.*s\"\nwant %zu \"%s\"",
				 size, r, (int)(size ? size : 1), new_buf, len, want);
		}
	} else if (want_err == ENOMSG) {
		if (r || memcmp(ref_buf, new_buf, sizeof(ref_buf)))
			fail_msg("format_json, unknown type: got %d \"%s\"", r, new_buf);
	} else if (r != -want_err || e != want_err) {
		dump_rec(b);
		fail_msg("format_json: got %d (errno %d), want %d", r, e, -want_err);
	} else if (want_err == EINVAL && memcmp(ref_buf, new_buf, sizeof(ref_buf))) {
		fail_msg("format_json wrote into the buffer of a refused call");
	}
}

static void check_json(const union rec_buf *b, const struct memmon_format_opts *o)
{
	char *s1, *s2;
	int e1, e2;

	errno = 0;
	s1 = ref_rec__to_json(&b->hdr, o);
	e1 = errno;
	errno = 0;
	s2 = memmon_rec__to_json(&b->hdr, o);
	e2 = errno;
	if (!s1 != !s2 || (s1 && strcmp(s1, s2)) || (!s1 && e1 != e2)) {
		dump_rec(b);
		fail_msg("json: got %s (errno %d)\nwant %s (errno %d)",
			 s2 ? s2 : "NULL", e2, s1 ? s1 : "NULL", e1);
	}
	check_json_size(b, o, s1, e1, BUF, false);
	if (s1) {
		size_t n = strlen(s1);

		check_json_size(b, o, s1, e1, below(n + 2), false);
		check_json_size(b, o, s1, e1, n, false);
		check_json_size(b, o, s1, e1, n + 1, false);
	}
	check_json_size(b, o, s1, e1, 0, true);
	free(s1);
	free(s2);
}

/* What fprint and fprint_json write, and return. */
static void check_fprint(const union rec_buf *b, const struct memmon_format_opts *o)
{
	char *m1 = NULL, *m2 = NULL;
	size_t l1 = 0, l2 = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		FILE *f1 = open_memstream(&m1, &l1), *f2 = open_memstream(&m2, &l2);
		int r1, r2;

		assert_non_null(f1);
		assert_non_null(f2);
		r1 = pass ? ref_rec__fprint_json(f1, &b->hdr, o) :
			    ref_rec__fprint(f1, &b->hdr, o);
		r2 = pass ? memmon_rec__fprint_json(f2, &b->hdr, o) :
			    memmon_rec__fprint(f2, &b->hdr, o);
		fclose(f1);
		fclose(f2);
		if (r1 != r2 || l1 != l2 || memcmp(m1, m2, l1)) {
			dump_rec(b);
			fail_msg("%s: got %d \"%s\"\nwant %d \"%s\"",
				 pass ? "fprint_json" : "fprint", r2, m2, r1, m1);
		}
		free(m1);
		free(m2);
		m1 = NULL;
		m2 = NULL;
	}
}

/* Local time in a zone with summer time, known without tzdata. */
static void set_tz(const char *tz)
{
	if (tz)
		setenv("TZ", tz, 1);
	else
		unsetenv("TZ");
	tzset();
}

static void test_records(void **state)
{
	static const char *const zones[] = {
		"EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3", "UTC0",
		"<+0545>-5:45",
	};
	struct memmon_paths *paths = make_paths();
	union rec_buf b;
	struct opts_case oc;
	unsigned int i;

	(void)state;
	for (i = 0; i < RECORDS; i++) {
		const struct memmon_format_opts *o;

		/* a new zone now and then: the local clock follows it */
		if (i % 5000 == 0)
			set_tz(zones[(i / 5000) % ARRAY_SIZE(zones)]);
		gen_opts(&oc, paths);
		o = opts_of(&oc);
		gen_record(&b);
		fit_times(&b, o);
		check_text(&b, o);
		check_json(&b, o);
		if (i % 16 == 0)
			check_fprint(&b, o);
	}
	set_tz(NULL);
	memmon_paths__free(paths);
}

/* Every return value a syscall can fail with, and the two sides of -4096. */
static void test_every_errno(void **state)
{
	static const __u32 sys[] = { MEMMON_SYS_MMAP, MEMMON_SYS_MUNMAP, MEMMON_SYS__COUNT };
	struct memmon_format_opts o = { .sz = sizeof(o), .flags = MEMMON_FMT_MONOTONIC };
	union rec_buf b;
	unsigned int i;
	__s64 r;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(sys); i++) {
		for (r = -4200; r <= 2; r++) {
			rec_syscall(&b, sys[i], 0, 4096, 3, 0x22, (__u64)-1, 0, r, 1000);
			check_text_size(&b, &o, BUF, false);
			check_json(&b, &o);
		}
	}
}

/*
 * Wall clock, second by second across a day with a summer-time change in
 * each zone, and the same second again after the zone changed under it.
 */
static void test_wall_clock(void **state)
{
	/* the zones, and the day of 2026 (UTC) their summer time starts */
	static const char *const zones[] = {
		"EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3",
	};
	static const __s64 days[] = { 1772928000, 1774742400 };
	struct memmon_format_opts o = { .sz = sizeof(o), .realtime_offset_ns = TEST_OFFSET };
	union rec_buf b;
	unsigned int z, s, utc;

	(void)state;
	for (z = 0; z < ARRAY_SIZE(zones); z++) {
		/* monotonic time of 00:00 UTC that day */
		__s64 day = days[z] * 1000000000 - TEST_OFFSET;

		set_tz(zones[z]);
		for (utc = 0; utc < 2; utc++) {
			o.flags = utc ? MEMMON_FMT_UTC : 0;
			for (s = 0; s < 86400 * 2; s += 7) {
				rec_syscall(&b, MEMMON_SYS_BRK, 0, 0, 0, 0, 0, 0, 0x1000, 1);
				b.hdr.time_ns = (__u64)day + s * 1000000000ULL +
						below(1000000000);
				check_text_size(&b, &o, BUF, false);
				/* the same second, a zone later */
				set_tz(zones[!z]);
				check_text_size(&b, &o, BUF, false);
				set_tz(zones[z]);
				check_text_size(&b, &o, BUF, false);
			}
		}
	}
	set_tz(NULL);
}

typedef int (*flags_fn)(char *buf, size_t size, __u64 v);

static int wait_new(char *b, size_t n, __u64 v)
{
	return memmon_wait_status__format(b, n, (__u32)v);
}

static int wait_ref(char *b, size_t n, __u64 v)
{
	return ref_wait_status__format(b, n, (__u32)v);
}

static int access_new(char *b, size_t n, __u64 v)
{
	return memmon_fault_access__format(b, n, (__u32)v);
}

static int access_ref(char *b, size_t n, __u64 v)
{
	return ref_fault_access__format(b, n, (__u32)v);
}

static void check_flags(const char *what, flags_fn fn, flags_fn ref, __u64 v)
{
	int n = ref(NULL, 0, v);
	size_t sizes[4] = { 512, (size_t)n, (size_t)n + 1, below((size_t)n + 1) };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		int r1, r2;

		memset(ref_buf, CANARY, 600);
		memset(new_buf, CANARY, 600);
		r1 = ref(ref_buf, sizes[i], v);
		r2 = fn(new_buf, sizes[i], v);
		if (r1 != r2 || memcmp(ref_buf, new_buf, 600))
			fail_msg("%s(%#llx), size %zu: got %d \"%s\", want %d \"%s\"", what,
				 (unsigned long long)v, sizes[i], r2, new_buf, r1, ref_buf);
	}
	/* NULL, 0: the length alone */
	assert_int_equal(fn(NULL, 0, v), n);
}

/* The public flag decoders, on their own, with every size of buffer. */
static void test_flag_decoders(void **state)
{
	static const struct {
		const char *what;
		flags_fn fn, ref;
		__u64 (*gen)(void);
	} c[] = {
		{ "prot", memmon_prot__format, ref_prot__format, prot_val },
		{ "mmap_flags", memmon_mmap_flags__format, ref_mmap_flags__format,
		  mmap_flags_val },
		{ "mremap_flags", memmon_mremap_flags__format, ref_mremap_flags__format,
		  small_flags_val },
		{ "madvise", memmon_madvise__format, ref_madvise__format, advice_val },
		{ "mlockall_flags", memmon_mlockall_flags__format, ref_mlockall_flags__format,
		  small_flags_val },
		{ "mlock2_flags", memmon_mlock2_flags__format, ref_mlock2_flags__format,
		  small_flags_val },
		{ "fault_access", access_new, access_ref, small_flags_val },
	};
	unsigned int i, j;
	__u32 st;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		check_flags(c[i].what, c[i].fn, c[i].ref, 0);
		check_flags(c[i].what, c[i].fn, c[i].ref, UINT64_MAX);
		for (j = 0; j < 3000; j++)
			check_flags(c[i].what, c[i].fn, c[i].ref, c[i].gen());
	}
	/* the longest flag texts still fit the JSON formatter's old buffers */
	assert_true(memmon_mmap_flags__format(NULL, 0, UINT64_MAX) < 512);
	assert_true(memmon_prot__format(NULL, 0, UINT64_MAX) < 512);
	assert_true(memmon_madvise__format(NULL, 0, UINT64_MAX) < 512);
	for (st = 0; st < 0x10000; st++)
		check_flags("wait_status", wait_new, wait_ref, st);
	for (j = 0; j < 3000; j++)
		check_flags("wait_status", wait_new, wait_ref, status_val());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flag_decoders),
		cmocka_unit_test(test_every_errno),
		cmocka_unit_test(test_wall_clock),
		cmocka_unit_test(test_records),
	};

	return cmocka_run_group_tests_name("lib_format", tests, NULL, NULL);
}
