/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Text into a caller's buffer with snprintf()'s semantics, without printf:
 * the record formatters (decode.c, json.c) run once per event, and a
 * format string costs more to interpret than the line costs to write.
 */
#ifndef MEMMON_LIBMEMMON_STRBUF_H
#define MEMMON_LIBMEMMON_STRBUF_H

#include <string.h>
#include "internal.h"

#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))	/* the kernel's name */
#endif

/*
 * Writers: each puts one item at p, unchecked, and returns its end. The
 * caller has made sure of the room: the W_*_MAX bound each.
 */
#define W_U64_MAX	20	/* 18446744073709551615 */
#define W_S64_MAX	20	/* -9223372036854775808 */
#define W_HEX_MAX	18	/* 0xffffffffffffffff */
#define W_SEC_US_MAX	18	/* 18446744073.709551 (ns / 1e9, 6 digits) */

/*
 * n bytes, with the moves memcpy() makes for a small n but inline: two
 * overlapping loads and stores of the largest size that fits twice.
 * Names and numbers are short; a call costs more than the copy.
 */
static inline char *w_put(char *p, const char *s, size_t n)
{
	__u64 a, b, c, d;
	__u32 x, y;

	if (n > 32) {
		memcpy(p, s, n);
	} else if (n > 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		memcpy(&c, s + n - 16, 8);
		memcpy(&d, s + n - 8, 8);
		memcpy(p, &a, 8);
		memcpy(p + 8, &b, 8);
		memcpy(p + n - 16, &c, 8);
		memcpy(p + n - 8, &d, 8);
	} else if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(p, &a, 8);
		memcpy(p + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(p, &x, 4);
		memcpy(p + n - 4, &y, 4);
	} else if (n >= 2) {
		__u16 h, l;

		memcpy(&h, s, 2);
		memcpy(&l, s + n - 2, 2);
		memcpy(p, &h, 2);
		memcpy(p + n - 2, &l, 2);
	} else if (n) {
		*p = *s;
	}
	return p + n;
}

/* A string literal: its length is known when compiling, and so the copy. */
#define w_lit(p, s)	w_put((p), "" s, sizeof(s) - 1)

/* "00" to "99" and "00" to "ff", two characters each (decode.c). */
extern LIBMM_HIDDEN const char libmm_digits2[200];
extern LIBMM_HIDDEN const char libmm_xdigits2[512];

/* 1 to 4 digits of v < 10000 */
static inline char *w_u4(char *p, __u32 v)
{
	__u32 hi, lo;

	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100)
		return w_put(p, &libmm_digits2[2 * v], 2);
	hi = v / 100;
	lo = v % 100;
	if (hi < 10)
		*p++ = (char)('0' + hi);
	else
		p = w_put(p, &libmm_digits2[2 * hi], 2);
	return w_put(p, &libmm_digits2[2 * lo], 2);
}

/* exactly 4 digits of v < 10000 */
static inline char *w_04u(char *p, __u32 v)
{
	memcpy(p, &libmm_digits2[2 * (v / 100)], 2);
	memcpy(p + 2, &libmm_digits2[2 * (v % 100)], 2);
	return p + 4;
}

/* exactly 8 digits of v < 100000000 */
static inline char *w_08u(char *p, __u32 v)
{
	w_04u(p, v / 10000);
	return w_04u(p + 4, v % 10000);
}

/* %u of v < 100000000 */
static inline char *w_u8(char *p, __u32 v)
{
	if (v < 10000)
		return w_u4(p, v);
	p = w_u4(p, v / 10000);
	return w_04u(p, v % 10000);
}

/*
 * %llu: eight digits a step from the left, each step in 32 bits (the
 * 64-bit divisions, by constants, are multiplications).
 */
static __attribute_noinline__ __attribute_maybe_unused__ char *
w_u64_big(char *p, __u64 v)
{
	__u64 hi;

	if (v < 100000000)
		return w_u8(p, (__u32)v);
	if (v < 10000000000000000ULL) {
		hi = v / 100000000;
		p = w_u8(p, (__u32)hi);
		return w_08u(p, (__u32)(v - hi * 100000000));
	}
	hi = v / 10000000000000000ULL;		/* at most 1844 */
	v -= hi * 10000000000000000ULL;
	p = w_u4(p, (__u32)hi);
	p = w_08u(p, (__u32)(v / 100000000));
	return w_08u(p, (__u32)(v % 100000000));
}

/* %llu, the short ones (CPUs, PIDs, seconds) inline */
static inline char *w_u64(char *p, __u64 v)
{
	if (__builtin_expect(v < 10000, 1))
		return w_u4(p, (__u32)v);
	return w_u64_big(p, v);
}

/* %lld */
static inline char *w_s64(char *p, __s64 v)
{
	if (v < 0) {
		*p++ = '-';
		return w_u64(p, -(__u64)v);
	}
	return w_u64(p, (__u64)v);
}

/* %06u of v < 1000000: the microseconds of a time. */
static inline char *w_u6(char *p, __u32 v)
{
	__u32 hi = v / 10000, lo = v % 10000;

	memcpy(p, &libmm_digits2[2 * hi], 2);
	memcpy(p + 2, &libmm_digits2[2 * (lo / 100)], 2);
	memcpy(p + 4, &libmm_digits2[2 * (lo % 100)], 2);
	return p + 6;
}

/* "%llu.%06llu" of ns / 1e9 and (ns % 1e9) / 1000: a time or a duration. */
static inline char *w_sec_us(char *p, __u64 ns)
{
	__u64 sec = ns / 1000000000;

	p = w_u64(p, sec);
	*p++ = '.';
	return w_u6(p, (__u32)(ns - sec * 1000000000) / 1000);
}

/* %02d */
static inline char *w_02d(char *p, int v)
{
	if (v >= 0 && v < 100)
		return w_put(p, &libmm_digits2[2 * v], 2);
	return w_s64(p, v);
}

static inline unsigned int hex_len(__u64 v)
{
	return (67 - (unsigned int)__builtin_clzll(v | 1)) / 4;
}

/*
 * 0x... of v != 0: lower case, no leading zeros. Two digits a step, from
 * the right, each step's place and shift known when compiling (a switch
 * falling through, as many steps as full pairs below the top one); then
 * the top one or two digits.
 */
/* The k-th pair of hex digits from the right of v, ending 2 (k - 1) before end. */
static __always_inline void hex_pair(char *end, __u64 v, unsigned int k)
{
	memcpy(end - 2 * k, &libmm_xdigits2[2 * ((v >> (8 * (k - 1))) & 0xff)], 2);
}

static __always_inline char *w_0x(char *p, __u64 v)
{
	unsigned int n = hex_len(v), pairs = (n - 1) / 2;
	char *end = p + 2 + n;
	__u64 top = v >> (8 * pairs);

	memcpy(p, "0x", 2);
	switch (pairs) {
	case 7:
		hex_pair(end, v, 7);
		fallthrough;
	case 6:
		hex_pair(end, v, 6);
		fallthrough;
	case 5:
		hex_pair(end, v, 5);
		fallthrough;
	case 4:
		hex_pair(end, v, 4);
		fallthrough;
	case 3:
		hex_pair(end, v, 3);
		fallthrough;
	case 2:
		hex_pair(end, v, 2);
		fallthrough;
	case 1:
		hex_pair(end, v, 1);
		fallthrough;
	default:
		break;
	}
	if (n & 1)
		p[2] = libmm_xdigits2[2 * top + 1];
	else
		memcpy(p + 2, &libmm_xdigits2[2 * top], 2);
	return end;
}

/* %#llx: "0" for zero, else 0x... */
static __always_inline char *w_hex(char *p, __u64 v)
{
	if (!v) {
		*p = '0';
		return p + 1;
	}
	return w_0x(p, v);
}

/*
 * A text growing in a buffer of size bytes:
 *
 *   buf                      pos               end = buf + size - 1
 *   | the text so far ...... | room ........... | the NUL's place
 *
 * What does not fit is not written but counted in over, so the whole
 * text's length is (pos - buf) + over, which is what snprintf() returns.
 * Invariants: buf <= pos <= end; over != 0 only when pos == end (an append
 * that does not fit fills the room first). With no buffer (size 0 or buf
 * NULL) pos and end point at none and nothing is ever written.
 * sb_finish() puts the NUL at pos.
 */
struct strbuf {
	char *pos;
	char *end;
	char *buf;		/* NULL: no buffer */
	size_t over;
	char none;
};

static inline void sb_init(struct strbuf *sb, char *buf, size_t size)
{
	sb->over = 0;
	if (!buf || !size) {
		sb->buf = NULL;
		sb->pos = &sb->none;
		sb->end = &sb->none;
		return;
	}
	sb->buf = buf;
	sb->pos = buf;
	sb->end = buf + size - 1;
}

static inline size_t sb_room(const struct strbuf *sb)
{
	return (size_t)(sb->end - sb->pos);
}

static inline size_t sb_len(const struct strbuf *sb)
{
	return (sb->buf ? (size_t)(sb->pos - sb->buf) : 0) + sb->over;
}

/* The length as snprintf() returns it (an int). */
static inline int sb_ret(const struct strbuf *sb)
{
	size_t len = sb_len(sb);

	return len > INT32_MAX ? INT32_MAX : (int)len;
}

static inline void sb_finish(struct strbuf *sb)
{
	if (sb->buf)
		*sb->pos = '\0';
}

/* n bytes that may not all fit: what does, then count the rest. */
static inline void sb_put_slow(struct strbuf *sb, const char *s, size_t n)
{
	size_t k = n < sb_room(sb) ? n : sb_room(sb);

	memcpy(sb->pos, s, k);
	sb->pos += k;
	sb->over += n - k;
}

static inline void sb_put(struct strbuf *sb, const char *s, size_t n)
{
	if (__builtin_expect(n <= sb_room(sb), 1))
		sb->pos = w_put(sb->pos, s, n);
	else
		sb_put_slow(sb, s, n);
}

#define sb_lit(sb, s)	sb_put((sb), "" s, sizeof(s) - 1)

static inline void sb_ch(struct strbuf *sb, char c)
{
	if (__builtin_expect(sb->pos < sb->end, 1))
		*sb->pos++ = c;
	else
		sb->over++;
}

/* A NUL-terminated string, copied as it is scanned (names are short). */
static inline void sb_str(struct strbuf *sb, const char *s)
{
	char *p = sb->pos, *end = sb->end;

	for (; *s; s++) {
		if (__builtin_expect(p == end, 0)) {
			sb->pos = p;
			sb->over += strlen(s);
			return;
		}
		*p++ = *s;
	}
	sb->pos = p;
}

/*
 * A segment: up to max bytes written by the unchecked writers, into the
 * buffer when it has the room, else into the caller's scratch (max bytes
 * too), then cut to fit by sb_put(). The common case costs one comparison
 * for a whole stretch of a line:
 *
 *   char tmp[MAX], *s = sb_seg(sb, tmp, sizeof(tmp)), *p = s;
 *
 *   p = w_lit(p, "...");
 *   ...
 *   sb_seg_end(sb, tmp, s, p);
 */
static inline char *sb_seg(struct strbuf *sb, char *scratch, size_t max)
{
	return __builtin_expect(max <= sb_room(sb), 1) ? sb->pos : scratch;
}

static inline void sb_seg_end(struct strbuf *sb, char *scratch, char *start,
			      char *p)
{
	if (__builtin_expect(start != scratch, 1))
		sb->pos = p;
	else
		sb_put_slow(sb, scratch, (size_t)(p - scratch));
}

/*
 * A name inside a segment: the segment reserves LIBMM_NAME_MAX bytes for it,
 * which every name of memmon_names.h fits in; a longer one ends the
 * segment, goes in checked, and a segment of the same max begins again.
 */
#define LIBMM_NAME_MAX	24

static inline char *sb_seg_name(struct strbuf *sb, char *scratch, size_t max,
				char **start, char *p, const char *name,
				size_t len)
{
	if (__builtin_expect(len <= LIBMM_NAME_MAX, 1))
		return w_put(p, name, len);
	sb_seg_end(sb, scratch, *start, p);
	sb_put(sb, name, len);
	*start = sb_seg(sb, scratch, max);
	return *start;
}

/* The writers as appenders, each its own segment. */
#define SB_WRITER(name, type, max)					\
static inline void sb_##name(struct strbuf *sb, type v)		\
{									\
	char tmp[max], *s = sb_seg(sb, tmp, sizeof(tmp));		\
									\
	sb_seg_end(sb, tmp, s, w_##name(s, v));				\
}
SB_WRITER(u64, __u64, W_U64_MAX)
SB_WRITER(s64, __s64, W_S64_MAX)
SB_WRITER(0x, __u64, W_HEX_MAX)
SB_WRITER(hex, __u64, W_HEX_MAX)
SB_WRITER(sec_us, __u64, W_SEC_US_MAX)
#undef SB_WRITER

/* tbl[i] of a table of names, NULL past its end (or in a hole). */
#define LIBMM_NAME_AT(tbl, i) ((i) < ARRAY_SIZE(tbl) ? (tbl)[i] : NULL)

/*
 * tbl[k] of a table of names that the compiler can read (static const,
 * k known), if no longer than LIBMM_NAME_MAX; else NULL. The name and its
 * length are then known when compiling: the copy becomes a store or two
 * of immediates.
 */
static __always_inline char *name_k(char *p, const char *const *tbl,
				    size_t n, unsigned int k)
{
	if (k < n && tbl[k] && __builtin_strlen(tbl[k]) <= LIBMM_NAME_MAX)
		return w_put(p, tbl[k], __builtin_strlen(tbl[k]));
	return NULL;
}

/*
 * Name tbl[i] (not NULL: name) of one of memmon_names.h's tables (n
 * entries) into a segment, as sb_seg_name() does: the first 16 entries
 * each from a case of its own, so name_k() sees a constant k; the others
 * through strlen().
 */
static __always_inline char *sb_seg_name_at(struct strbuf *sb, char *scratch,
					    size_t max, char **start, char *p,
					    const char *const *tbl, size_t n,
					    unsigned int i, const char *name)
{
	char *q = NULL;

	switch (i) {
	case 0:
		q = name_k(p, tbl, n, 0);
		break;
	case 1:
		q = name_k(p, tbl, n, 1);
		break;
	case 2:
		q = name_k(p, tbl, n, 2);
		break;
	case 3:
		q = name_k(p, tbl, n, 3);
		break;
	case 4:
		q = name_k(p, tbl, n, 4);
		break;
	case 5:
		q = name_k(p, tbl, n, 5);
		break;
	case 6:
		q = name_k(p, tbl, n, 6);
		break;
	case 7:
		q = name_k(p, tbl, n, 7);
		break;
	case 8:
		q = name_k(p, tbl, n, 8);
		break;
	case 9:
		q = name_k(p, tbl, n, 9);
		break;
	case 10:
		q = name_k(p, tbl, n, 10);
		break;
	case 11:
		q = name_k(p, tbl, n, 11);
		break;
	case 12:
		q = name_k(p, tbl, n, 12);
		break;
	case 13:
		q = name_k(p, tbl, n, 13);
		break;
	case 14:
		q = name_k(p, tbl, n, 14);
		break;
	case 15:
		q = name_k(p, tbl, n, 15);
		break;
	}
	return q ? q : sb_seg_name(sb, scratch, max, start, p, name, strlen(name));
}

/*
 * decode.c's decoders of flags and values, for the text and the JSON
 * formatter (json.c) alike: strace's spelling, "PROT_READ|PROT_WRITE".
 */
#define LIBMM_ACCESS_MAX	(15 + 1 + 10)	/* "read|write|exec|0xfffffff8" */

LIBMM_HIDDEN void libmm_sb_prot(struct strbuf *sb, __u64 prot);
LIBMM_HIDDEN void libmm_sb_mmap_flags(struct strbuf *sb, __u64 flags);
LIBMM_HIDDEN void libmm_sb_mremap_flags(struct strbuf *sb, __u64 flags);
LIBMM_HIDDEN void libmm_sb_madvise(struct strbuf *sb, __u64 advice);
LIBMM_HIDDEN void libmm_sb_mlockall_flags(struct strbuf *sb, __u64 flags);
LIBMM_HIDDEN void libmm_sb_mlock2_flags(struct strbuf *sb, __u64 flags);
LIBMM_HIDDEN void libmm_sb_wait_status(struct strbuf *sb, __u32 status);

/* A fault's access bits, as the flag decoders write them (read|write). */
static inline char *w_fault_access(char *p, __u32 access)
{
	const __u32 named = MEMMON_FAULT_READ | MEMMON_FAULT_WRITE |
			    MEMMON_FAULT_EXEC;

	switch (access & named) {
	case 0:
		if (!access)
			p = w_lit(p, "none");
		break;
	case MEMMON_FAULT_READ:
		p = w_lit(p, "read");
		break;
	case MEMMON_FAULT_WRITE:
		p = w_lit(p, "write");
		break;
	case MEMMON_FAULT_READ | MEMMON_FAULT_WRITE:
		p = w_lit(p, "read|write");
		break;
	case MEMMON_FAULT_EXEC:
		p = w_lit(p, "exec");
		break;
	case MEMMON_FAULT_READ | MEMMON_FAULT_EXEC:
		p = w_lit(p, "read|exec");
		break;
	case MEMMON_FAULT_WRITE | MEMMON_FAULT_EXEC:
		p = w_lit(p, "write|exec");
		break;
	default:
		p = w_lit(p, "read|write|exec");
	}
	if (access & ~named) {
		if (access & named)
			*p++ = '|';
		p = w_0x(p, access & ~named);
	}
	return p;
}

#endif /* MEMMON_LIBMEMMON_STRBUF_H */
