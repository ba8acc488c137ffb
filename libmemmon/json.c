// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Records as JSON lines, written straight into the caller's buffer: one
 * compact object per record, its members always in the same order. The
 * bytes are those json_dumps(JSON_COMPACT) of jansson 2.14 made of the
 * objects this file built before (tests/unit/ref_format.c keeps that code,
 * test_lib_format holds this one to it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "memmon_names.h"
#include "strbuf.h"

/*
 * Names, flag texts and errno names go between quotes as they are: they
 * are ASCII without '"', '\' or control characters, which JSON would
 * escape. Bytes from a traced process (marks, paths) go through
 * sb_json_bytes().
 *
 * A u64 as a JSON number, or beyond INT64_MAX as "0x..." (jansson's
 * integers are signed 64-bit).
 */
#define W_JSON_U64_MAX	(2 + W_HEX_MAX)

static char *w_json_u64(char *p, __u64 v)
{
	if (v > (__u64)INT64_MAX) {
		*p++ = '"';
		p = w_0x(p, v);
		*p++ = '"';
		return p;
	}
	return w_u64(p, v);
}

/* "0x...", "0x0" for zero: addresses, whose digits readers would round. */
#define W_JSON_HEX_MAX	(2 + W_HEX_MAX)

static __always_inline char *w_json_hex(char *p, __u64 v)
{
	*p++ = '"';
	p = v ? w_0x(p, v) : w_lit(p, "0x0");
	*p++ = '"';
	return p;
}

/* Each a segment of its own, for the members of no fixed length. */
#define SB_JSON_WRITER(name, type, max)					\
static void sb_##name(struct strbuf *sb, type v)			\
{									\
	char tmp[max], *s = sb_seg(sb, tmp, sizeof(tmp));		\
									\
	sb_seg_end(sb, tmp, s, w_##name(s, v));				\
}
SB_JSON_WRITER(json_u64, __u64, W_JSON_U64_MAX)
SB_JSON_WRITER(json_hex, __u64, W_JSON_HEX_MAX)
#undef SB_JSON_WRITER

/* A flag text between quotes, as the decoder writes it. */
static void sb_json_flags(struct strbuf *sb, void (*fn)(struct strbuf *, __u64),
			  __u64 v)
{
	sb_ch(sb, '"');
	fn(sb, v);
	sb_ch(sb, '"');
}

/*
 * UTF-8 as jansson checks it (RFC 3629): no overlong forms, no surrogates,
 * nothing past U+10FFFF, no sequence cut at the end.
 */
static bool utf8_valid(const __u8 *p, size_t len)
{
	const __u8 *end = p + len;

	while (p < end) {
		__u32 cp;
		size_t n, i;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p < 0xc2)		/* a continuation byte, or overlong */
			return false;
		if (*p < 0xe0) {
			n = 2;
			cp = *p & 0x1f;
		} else if (*p < 0xf0) {
			n = 3;
			cp = *p & 0x0f;
		} else if (*p < 0xf5) {
			n = 4;
			cp = *p & 0x07;
		} else {
			return false;
		}
		if ((size_t)(end - p) < n)
			return false;
		for (i = 1; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
		    (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000))
			return false;
		p += n;
	}
	return true;
}

/*
 * How a byte is written in a JSON string: 0 as itself, 'u' as \u00XX,
 * else the character after a backslash; 'x' (bytes >= 0x80, NUL) as the
 * text \xNN, whose backslash JSON escapes: see sb_json_bytes().
 */
static const char json_esc[256] = {
	[0] = 'x', [1 ... 7] = 'u', ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n',
	[0x0b] = 'u', ['\f'] = 'f', ['\r'] = 'r', [0x0e ... 0x1f] = 'u',
	['"'] = '"', ['\\'] = '\\', [0x80 ... 0xff] = 'x',
};

/*
 * Bytes of a traced process as a JSON string. Valid UTF-8 without NUL is
 * kept; otherwise every byte >= 0x80 and every NUL (legal JSON, \u0000,
 * but it cuts C strings short) becomes the four characters \xNN, so the
 * line stays valid UTF-8 and shows what the bytes were.
 */
static void sb_json_bytes(struct strbuf *sb, const void *data, size_t len)
{
	static const char upper[] = "0123456789ABCDEF";
	const __u8 *p = data, *end = p + len;
	bool raw = !memchr(p, 0, len) && utf8_valid(p, len);

	sb_ch(sb, '"');
	while (p < end) {
		const __u8 *run = p;
		char esc[6] = { '\\' };
		char e;

		while (p < end && (!json_esc[*p] || (raw && *p >= 0x80)))
			p++;
		sb_put(sb, (const char *)run, (size_t)(p - run));
		if (p == end)
			break;
		e = json_esc[*p];
		if (e == 'x') {
			/* "\\xNN": the escaped backslash, then the text */
			esc[1] = '\\';
			esc[2] = 'x';
			memcpy(esc + 3, &libmm_xdigits2[2 * *p], 2);
			sb_put(sb, esc, 5);
		} else if (e == 'u') {
			memcpy(esc + 1, "u00", 3);
			esc[4] = upper[*p >> 4];
			esc[5] = upper[*p & 0xf];
			sb_put(sb, esc, 6);
		} else {
			esc[1] = e;
			sb_put(sb, esc, 2);
		}
		p++;
	}
	sb_ch(sb, '"');
}

/* "addr":"0x...","len":4096 */
#define ADDR_LEN_MAX	(7 + W_JSON_HEX_MAX + 7 + W_JSON_U64_MAX)

static void sb_addr_len(struct strbuf *sb, const __u64 *a)
{
	char tmp[ADDR_LEN_MAX], *s = sb_seg(sb, tmp, sizeof(tmp)), *p;

	p = w_lit(s, "\"addr\":");
	p = w_json_hex(p, a[0]);
	p = w_lit(p, ",\"len\":");
	sb_seg_end(sb, tmp, s, w_json_u64(p, a[1]));
}

static void json_args(struct strbuf *sb, const struct memmon_rec_syscall *sc)
{
	const __u64 *a = sc->args;
	unsigned int i;

	switch (sc->sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
		sb_addr_len(sb, a);
		sb_lit(sb, ",\"prot\":");
		sb_json_flags(sb, libmm_sb_prot, a[2]);
		sb_lit(sb, ",\"flags\":");
		sb_json_flags(sb, libmm_sb_mmap_flags, a[3]);
		sb_lit(sb, ",\"fd\":");
		sb_s64(sb, (__s32)a[4]);
		sb_lit(sb, ",\"offset\":");
		sb_json_u64(sb, sc->sys == MEMMON_SYS_MMAP2 ? a[5] * 4096 : a[5]);
		break;
	case MEMMON_SYS_MUNMAP:
	case MEMMON_SYS_MLOCK:
	case MEMMON_SYS_MUNLOCK:
		sb_addr_len(sb, a);
		break;
	case MEMMON_SYS_MLOCK2:
		sb_addr_len(sb, a);
		sb_lit(sb, ",\"flags\":");
		sb_json_flags(sb, libmm_sb_mlock2_flags, a[2]);
		break;
	case MEMMON_SYS_MREMAP:
		sb_lit(sb, "\"old_addr\":");
		sb_json_hex(sb, a[0]);
		sb_lit(sb, ",\"old_len\":");
		sb_json_u64(sb, a[1]);
		sb_lit(sb, ",\"new_len\":");
		sb_json_u64(sb, a[2]);
		sb_lit(sb, ",\"flags\":");
		sb_json_flags(sb, libmm_sb_mremap_flags, a[3]);
		sb_lit(sb, ",\"new_addr\":");
		sb_json_hex(sb, a[4]);
		break;
	case MEMMON_SYS_BRK:
		sb_lit(sb, "\"brk\":");
		sb_json_hex(sb, a[0]);
		break;
	case MEMMON_SYS_MLOCKALL:
		sb_lit(sb, "\"flags\":");
		sb_json_flags(sb, libmm_sb_mlockall_flags, a[0]);
		break;
	case MEMMON_SYS_FSYNC:
		sb_lit(sb, "\"fd\":");
		sb_s64(sb, (__s32)a[0]);
		break;
	case MEMMON_SYS_MADVISE:
		sb_addr_len(sb, a);
		sb_lit(sb, ",\"advice\":");
		sb_json_flags(sb, libmm_sb_madvise, a[2]);
		break;
	case MEMMON_SYS_MPROTECT:
		sb_addr_len(sb, a);
		sb_lit(sb, ",\"prot\":");
		sb_json_flags(sb, libmm_sb_prot, a[2]);
		break;
	case MEMMON_SYS_MUNLOCKALL:
		break;
	default:
		/* the registers as jansson's (signed) integers */
		sb_lit(sb, "\"raw\":[");
		for (i = 0; i < 6; i++) {
			if (i)
				sb_ch(sb, ',');
			sb_s64(sb, (__s64)a[i]);
		}
		sb_ch(sb, ']');
	}
}

/* ,"name":"brk","brk_before":"0x...","brk_after":"0x...","args":{ */
#define SYSCALL_HEAD_MAX	(9 + LIBMM_NAME_MAX + 1 + 14 + W_JSON_HEX_MAX + 13 + \
				 W_JSON_HEX_MAX + 9)
/*
 * },"ret":-12,"errno":"ENOMEM","duration_ns":1,"compat":true,"dev":1,"ino":2
 * (the larger: the one scratch serves both)
 */
#define SYSCALL_TAIL_MAX	(8 + W_S64_MAX + 10 + LIBMM_NAME_MAX + 1 + 15 + \
				 W_JSON_U64_MAX + 14 + 7 + W_JSON_U64_MAX + 7 + \
				 W_JSON_U64_MAX)

static void json_syscall(struct strbuf *sb, const struct memmon_rec_syscall *sc,
			 const struct memmon_format_opts *opts)
{
	const char *name = LIBMM_NAME_AT(memmon_sys_names, sc->sys);
	char tmp[SYSCALL_TAIL_MAX], *s = sb_seg(sb, tmp, SYSCALL_HEAD_MAX), *p;
	const char *path = NULL;

	if (name) {
		p = w_lit(s, ",\"name\":\"");
		p = sb_seg_name_at(sb, tmp, SYSCALL_HEAD_MAX, &s, p, memmon_sys_names,
				   ARRAY_SIZE(memmon_sys_names), sc->sys, name);
		*p++ = '"';
	} else {
		p = w_lit(s, ",\"sys\":");
		p = w_u64(p, sc->sys);
	}
	if (sc->sys == MEMMON_SYS_BRK) {
		p = w_lit(p, ",\"brk_before\":");
		p = w_json_hex(p, sc->aux[0]);
		p = w_lit(p, ",\"brk_after\":");
		p = w_json_hex(p, sc->aux[1]);
	}
	sb_seg_end(sb, tmp, s, w_lit(p, ",\"args\":{"));
	json_args(sb, sc);

	s = sb_seg(sb, tmp, SYSCALL_TAIL_MAX);
	p = w_lit(s, "},\"ret\":");
	p = w_s64(p, sc->ret);
	if (sc->ret < 0 && sc->ret >= -4095) {
		const char *en = memmon_errno__name((int)-sc->ret);

		if (en) {
			p = w_lit(p, ",\"errno\":\"");
			p = sb_seg_name(sb, tmp, SYSCALL_TAIL_MAX, &s, p, en, strlen(en));
			*p++ = '"';
		}
	}
	p = w_lit(p, ",\"duration_ns\":");
	p = w_json_u64(p, sc->duration_ns);
	if (sc->flags & MEMMON_SYSF_COMPAT)
		p = w_lit(p, ",\"compat\":true");
	if (sc->flags & MEMMON_SYSF_FILE) {
		path = memmon_paths__lookup(OPTS_GET(opts, paths, NULL),
					    sc->aux[0], sc->aux[1]);
		p = w_lit(p, ",\"dev\":");
		p = w_json_u64(p, sc->aux[0]);
		p = w_lit(p, ",\"ino\":");
		p = w_json_u64(p, sc->aux[1]);
	}
	sb_seg_end(sb, tmp, s, p);
	if (path) {
		sb_lit(sb, ",\"path\":");
		sb_json_bytes(sb, path, strlen(path));
	}
}

/*
 * ,"ustack":{"ips":["0x...",...],"sp":true,"truncated":false,
 * "compat":false} when the record carries a user stack; nothing otherwise.
 */
static int json_ustack(struct strbuf *sb, const struct memmon_rec_header *rec)
{
	const struct memmon_user_stack *st = memmon_rec__ustack(rec);
	unsigned int i;

	if (!st)
		return errno == ENOMSG ? 0 : -EBADMSG;
	sb_lit(sb, ",\"ustack\":{\"ips\":[");
	for (i = 0; i < st->nr; i++) {
		if (i)
			sb_ch(sb, ',');
		sb_json_hex(sb, st->ip[i]);
	}
	sb_lit(sb, "],\"sp\":");
	sb_str(sb, st->flags & MEMMON_USTACK_SP ? "true" : "false");
	sb_lit(sb, ",\"truncated\":");
	sb_str(sb, st->flags & MEMMON_USTACK_TRUNCATED ? "true" : "false");
	sb_lit(sb, ",\"compat\":");
	sb_str(sb, st->flags & MEMMON_USTACK_COMPAT ? "true" : "false");
	sb_ch(sb, '}');
	return 0;
}

/*
 * ,"addr":"0x...","ip":"0x...","access":"write","class":"anon",
 * "major":false,"result":"handled","newpage":true,"pfn":"0x...",
 * "duration_ns":3000: one segment.
 */
#define FAULT_MAX	(8 + W_JSON_HEX_MAX + 6 + W_JSON_HEX_MAX + 11 + \
			 LIBMM_ACCESS_MAX + 10 + LIBMM_NAME_MAX + 2 + 24 + \
			 LIBMM_NAME_MAX + 2 + 14 + 15 + 7 + W_JSON_HEX_MAX + 15 + \
			 W_JSON_U64_MAX)

static void json_fault(struct strbuf *sb, const struct memmon_rec_fault *f)
{
	const char *cls = LIBMM_NAME_AT(memmon_fclass_names, f->fclass);
	const char *res = LIBMM_NAME_AT(memmon_fresult_names, f->result);
	char tmp[FAULT_MAX], *s = sb_seg(sb, tmp, sizeof(tmp)), *p;

	p = w_lit(s, ",\"addr\":");
	p = w_json_hex(p, f->addr);
	p = w_lit(p, ",\"ip\":");
	p = w_json_hex(p, f->ip);
	p = w_lit(p, ",\"access\":\"");
	p = w_fault_access(p, f->access);
	p = w_lit(p, "\",\"class\":");
	if (cls) {
		*p++ = '"';
		p = sb_seg_name_at(sb, tmp, sizeof(tmp), &s, p, memmon_fclass_names,
				   ARRAY_SIZE(memmon_fclass_names), f->fclass, cls);
		*p++ = '"';
	} else {
		p = w_u64(p, f->fclass);
	}
	if (f->flags & MEMMON_FAULTF_MAJOR)
		p = w_lit(p, ",\"major\":true,\"result\":");
	else
		p = w_lit(p, ",\"major\":false,\"result\":");
	if (res) {
		*p++ = '"';
		p = sb_seg_name_at(sb, tmp, sizeof(tmp), &s, p, memmon_fresult_names,
				   ARRAY_SIZE(memmon_fresult_names), f->result, res);
		*p++ = '"';
	} else {
		p = w_u64(p, f->result);
	}
	if (f->flags & MEMMON_FAULTF_KERNEL)
		p = w_lit(p, ",\"kernel\":true");
	if (f->flags & MEMMON_FAULTF_NEWPAGE)
		p = w_lit(p, ",\"newpage\":true");
	if (f->flags & MEMMON_FAULTF_PFN) {
		p = w_lit(p, ",\"pfn\":");
		p = w_json_hex(p, f->pfn);
	}
	p = w_lit(p, ",\"duration_ns\":");
	sb_seg_end(sb, tmp, s, w_json_u64(p, f->duration_ns));
}

/* ,"anon":1,"file":2,"shmem":3,"swap":4 */
#define RSS_MAX		(8 + 8 + 9 + 8 + 4 * W_JSON_U64_MAX)

static void json_rss(struct strbuf *sb, const struct memmon_rec_rss *r)
{
	char tmp[RSS_MAX], *s = sb_seg(sb, tmp, sizeof(tmp)), *p;

	p = w_lit(s, ",\"anon\":");
	p = w_json_u64(p, r->anon);
	p = w_lit(p, ",\"file\":");
	p = w_json_u64(p, r->file);
	p = w_lit(p, ",\"shmem\":");
	p = w_json_u64(p, r->shmem);
	p = w_lit(p, ",\"swap\":");
	sb_seg_end(sb, tmp, s, w_json_u64(p, r->swap));
}

static void sb_bool(struct strbuf *sb, bool v)
{
	if (v)
		sb_lit(sb, "true");
	else
		sb_lit(sb, "false");
}

/* The members after the header's; -EBADMSG for a malformed record. */
static int json_body(struct strbuf *sb, const struct memmon_rec_header *rec,
		     const struct memmon_format_opts *opts)
{
	switch (rec->type) {
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *sc =
			libmm_view(rec, MEMMON_REC_SYSCALL, sizeof(*sc));

		if (!sc)
			return -EBADMSG;
		json_syscall(sb, sc, opts);
		return json_ustack(sb, rec);
	}
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f =
			libmm_view(rec, MEMMON_REC_FAULT, sizeof(*f));

		if (!f)
			return -EBADMSG;
		json_fault(sb, f);
		return json_ustack(sb, rec);
	}
	case MEMMON_REC_AUXV: {
		const struct memmon_rec_auxv *a = memmon_rec__auxv(rec);

		if (!a)
			return -EBADMSG;
		sb_lit(sb, ",\"phdr\":");
		sb_json_hex(sb, a->phdr);
		sb_lit(sb, ",\"phent\":");
		sb_json_u64(sb, a->phent);
		sb_lit(sb, ",\"phnum\":");
		sb_json_u64(sb, a->phnum);
		sb_lit(sb, ",\"entry\":");
		sb_json_hex(sb, a->entry);
		sb_lit(sb, ",\"base\":");
		sb_json_hex(sb, a->base);
		sb_lit(sb, ",\"vdso\":");
		sb_json_hex(sb, a->vdso);
		return 0;
	}
	case MEMMON_REC_LOST: {
		const struct memmon_rec_lost *l =
			libmm_view(rec, MEMMON_REC_LOST, sizeof(*l));

		if (!l)
			return -EBADMSG;
		sb_lit(sb, ",\"count\":");
		sb_json_u64(sb, l->count);
		sb_lit(sb, ",\"first_ns\":");
		sb_json_u64(sb, l->first_ns);
		sb_lit(sb, ",\"last_ns\":");
		sb_json_u64(sb, l->last_ns);
		return 0;
	}
	case MEMMON_REC_MARK: {
		const struct memmon_rec_mark *m = memmon_rec__mark(rec);

		if (!m)
			return -EBADMSG;
		sb_lit(sb, ",\"text\":");
		sb_json_bytes(sb, m->data, m->len);
		sb_lit(sb, ",\"flags\":");
		sb_u64(sb, m->flags);
		return 0;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r =
			libmm_view(rec, MEMMON_REC_RSS, sizeof(*r));

		if (!r)
			return -EBADMSG;
		json_rss(sb, r);
		return 0;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f =
			libmm_view(rec, MEMMON_REC_FORK, sizeof(*f));

		if (!f)
			return -EBADMSG;
		sb_lit(sb, ",\"child_tgid\":");
		sb_u64(sb, f->child_tgid);
		sb_lit(sb, ",\"child_tid\":");
		sb_u64(sb, f->child_tid);
		sb_lit(sb, ",\"thread\":");
		sb_bool(sb, f->flags & MEMMON_FORKF_THREAD);
		sb_lit(sb, ",\"shared_vm\":");
		sb_bool(sb, f->flags & MEMMON_FORKF_VM);
		return 0;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = memmon_rec__exec(rec);

		if (!e)
			return -EBADMSG;
		sb_lit(sb, ",\"path\":");
		sb_json_bytes(sb, e->path, e->path_len);
		return 0;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x =
			libmm_view(rec, MEMMON_REC_EXIT, sizeof(*x));

		if (!x)
			return -EBADMSG;
		if (x->flags & MEMMON_EXITF_REVOKED) {
			/* Still alive, but no longer ours to watch (uapi). */
			sb_lit(sb, ",\"how\":\"revoked\",\"group\":true,\"revoked\":true");
			return 0;
		}
		sb_lit(sb, ",\"status\":");
		sb_u64(sb, x->code);
		sb_lit(sb, ",\"how\":\"");
		libmm_sb_wait_status(sb, x->code);
		if (x->flags & MEMMON_EXITF_GROUP) {
			sb_lit(sb, "\",\"group\":true,\"peak_rss\":");
			sb_json_u64(sb, x->peak_rss);
			sb_lit(sb, ",\"peak_vm\":");
			sb_json_u64(sb, x->peak_vm);
		} else {
			sb_lit(sb, "\",\"group\":false");
		}
		return 0;
	}
	case MEMMON_REC_PATH: {
		const struct memmon_rec_path *p = memmon_rec__path(rec);

		if (!p)
			return -EBADMSG;
		sb_lit(sb, ",\"dev\":");
		sb_json_u64(sb, p->dev);
		sb_lit(sb, ",\"ino\":");
		sb_json_u64(sb, p->ino);
		sb_lit(sb, ",\"path\":");
		sb_json_bytes(sb, p->path, p->path_len);
		return 0;
	}
	case MEMMON_REC_COMM: {
		const struct memmon_rec_comm *c = memmon_rec__comm(rec);
		const char *why;

		if (!c)
			return -EBADMSG;
		why = LIBMM_NAME_AT(memmon_comm_why_names, c->why);
		sb_lit(sb, ",\"why\":");
		if (why) {
			sb_ch(sb, '"');
			sb_str(sb, why);
			sb_ch(sb, '"');
		} else {
			sb_u64(sb, c->why);
		}
		sb_lit(sb, ",\"comm\":");
		sb_json_bytes(sb, c->comm, strlen(c->comm));
		return 0;
	}
	default:
		return -ENOMSG;
	}
}

/* {"time_ns":1,"realtime_ns":2,"cpu":1,"tgid":1234,"tid":1235,"type":"fault" */
#define HEAD_MAX	(11 + W_JSON_U64_MAX + 15 + W_S64_MAX + 7 + 5 + 8 + 10 + \
			 7 + 10 + 9 + LIBMM_NAME_MAX + 1)

int memmon_rec__format_json(const struct memmon_rec_header *rec, char *buf,
			    size_t size, const struct memmon_format_opts *opts)
{
	const char *type;
	__s64 off = OPTS_GET(opts, realtime_offset_ns, 0);
	char tmp[HEAD_MAX], *s, *p;
	struct strbuf sb;
	int err;

	if (!rec || !OPTS_VALID(opts, memmon_format_opts))
		return libmm_err(-EINVAL);
	sb_init(&sb, buf, size);
	type = LIBMM_NAME_AT(memmon_rec_type_names, rec->type);
	if (!type) {
		sb_finish(&sb);
		return 0;
	}
	s = sb_seg(&sb, tmp, sizeof(tmp));
	p = w_lit(s, "{\"time_ns\":");
	p = w_json_u64(p, rec->time_ns);
	if (off) {
		/* the sum wraps as two's complement does, not undefined */
		p = w_lit(p, ",\"realtime_ns\":");
		p = w_s64(p, (__s64)(rec->time_ns + (__u64)off));
	}
	p = w_lit(p, ",\"cpu\":");
	p = w_u64(p, rec->cpu);
	p = w_lit(p, ",\"tgid\":");
	p = w_u64(p, rec->tgid);
	p = w_lit(p, ",\"tid\":");
	p = w_u64(p, rec->tid);
	p = w_lit(p, ",\"type\":\"");
	p = sb_seg_name_at(&sb, tmp, sizeof(tmp), &s, p, memmon_rec_type_names,
			   ARRAY_SIZE(memmon_rec_type_names), rec->type, type);
	*p++ = '"';
	sb_seg_end(&sb, tmp, s, p);
	err = json_body(&sb, rec, opts);
	if (!err)
		sb_ch(&sb, '}');
	sb_finish(&sb);
	if (err)
		return libmm_err(err);
	return sb_ret(&sb);
}

char *memmon_rec__to_json(const struct memmon_rec_header *rec,
			  const struct memmon_format_opts *opts)
{
	char stack[1024], *s;
	int n;

	n = memmon_rec__format_json(rec, stack, sizeof(stack), opts);
	if (n < 0)
		return NULL;	/* errno is set */
	if (!n)
		return libmm_err_ptr(-ENOMSG);
	s = malloc((size_t)n + 1);
	if (!s)
		return libmm_err_ptr(-ENOMEM);
	if ((size_t)n < sizeof(stack))
		memcpy(s, stack, (size_t)n + 1);
	else
		memmon_rec__format_json(rec, s, (size_t)n + 1, opts);
	return s;
}

int memmon_rec__fprint_json(FILE *f, const struct memmon_rec_header *rec,
			    const struct memmon_format_opts *opts)
{
	char stack[1024], *buf = stack;
	int n, ret;

	n = memmon_rec__format_json(rec, stack, sizeof(stack), opts);
	if (n < 0)
		return n;
	if (!n) {
		errno = ENOMSG;		/* as memmon_rec__to_json() says */
		return 0;
	}
	if ((size_t)n >= sizeof(stack)) {
		buf = malloc((size_t)n + 1);
		if (!buf)
			return libmm_err(-ENOMEM);
		memmon_rec__format_json(rec, buf, (size_t)n + 1, opts);
	}
	/* the object and its newline in one write */
	buf[n] = '\n';
	errno = 0;
	ret = fwrite(buf, 1, (size_t)n + 1, f) != (size_t)n + 1 || ferror(f) ?
	      (errno ? -errno : -EIO) : n + 1;
	if (buf != stack)
		free(buf);
	return libmm_err(ret);
}
