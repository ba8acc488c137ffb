// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Records as JSON lines, through jansson (escaping, UTF-8 and number
 * formatting are its job, not ours).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "internal.h"

typedef int (*flags_fmt_fn)(char *buf, size_t size, __u64 v);

static int set(json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set_new(o, key, v))
		return -ENOMEM;
	return 0;
}

static int set_hex(json_t *o, const char *key, __u64 v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)v);
	if (!v)
		strcpy(buf, "0x0");
	return set(o, key, json_string(buf));
}

static int set_u64(json_t *o, const char *key, __u64 v)
{
	/* json_int_t is signed 64-bit: beyond it, keep the bits as hex. */
	if (v > (__u64)INT64_MAX)
		return set_hex(o, key, v);
	return set(o, key, json_integer((json_int_t)v));
}

static int set_flags(json_t *o, const char *key, flags_fmt_fn fn, __u64 v)
{
	char buf[512];

	fn(buf, sizeof(buf), v);
	return set(o, key, json_string(buf));
}

/* Bytes that are not valid UTF-8, and NUL, become "\xNN" text, so the line is JSON. */
static json_t *bytes_string(const void *p, size_t len)
{
	const __u8 *b = p;
	json_t *s;
	char *tmp;
	size_t i, j = 0;

	/* NUL is legal JSON (\u0000) but breaks C readers: escape it too. */
	if (!memchr(p, 0, len)) {
		s = json_stringn(p, len);
		if (s)
			return s;
	}
	tmp = malloc(len * 4 + 1);
	if (!tmp)
		return NULL;
	for (i = 0; i < len; i++) {
		if (b[i] >= 0x80 || !b[i])
			j += (size_t)sprintf(tmp + j, "\\x%02x", b[i]);
		else
			tmp[j++] = (char)b[i];
	}
	s = json_stringn(tmp, j);
	free(tmp);
	return s;
}

static int fmt_mlock2(char *b, size_t n, __u64 v)
{
	return memmon_mlock2_flags__format(b, n, v);
}

static int json_syscall(json_t *o, const struct memmon_rec_syscall *sc,
			const struct memmon_format_opts *opts)
{
	const struct memmon_paths *paths = OPTS_GET(opts, paths, NULL);
	const __u64 *a = sc->args;
	const char *name = memmon_sys__name(sc->sys);
	json_t *args = json_object();
	int err = 0;

	if (!args)
		return -ENOMEM;
	if (name)
		err |= set(o, "name", json_string(name));
	else
		err |= set(o, "sys", json_integer(sc->sys));
	switch (sc->sys) {
	case MEMMON_SYS_MMAP:
	case MEMMON_SYS_MMAP2:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "prot", memmon_prot__format, a[2]);
		err |= set_flags(args, "flags", memmon_mmap_flags__format, a[3]);
		err |= set(args, "fd", json_integer((__s32)a[4]));
		err |= set_u64(args, "offset", sc->sys == MEMMON_SYS_MMAP2 ?
			       a[5] * 4096 : a[5]);
		break;
	case MEMMON_SYS_MUNMAP:
	case MEMMON_SYS_MLOCK:
	case MEMMON_SYS_MUNLOCK:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		break;
	case MEMMON_SYS_MLOCK2:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "flags", fmt_mlock2, a[2]);
		break;
	case MEMMON_SYS_MREMAP:
		err |= set_hex(args, "old_addr", a[0]);
		err |= set_u64(args, "old_len", a[1]);
		err |= set_u64(args, "new_len", a[2]);
		err |= set_flags(args, "flags", memmon_mremap_flags__format, a[3]);
		err |= set_hex(args, "new_addr", a[4]);
		break;
	case MEMMON_SYS_BRK:
		err |= set_hex(args, "brk", a[0]);
		err |= set_hex(o, "brk_before", sc->aux[0]);
		err |= set_hex(o, "brk_after", sc->aux[1]);
		break;
	case MEMMON_SYS_MLOCKALL:
		err |= set_flags(args, "flags", memmon_mlockall_flags__format, a[0]);
		break;
	case MEMMON_SYS_FSYNC:
		err |= set(args, "fd", json_integer((__s32)a[0]));
		break;
	case MEMMON_SYS_MADVISE:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "advice", memmon_madvise__format, a[2]);
		break;
	case MEMMON_SYS_MPROTECT:
		err |= set_hex(args, "addr", a[0]);
		err |= set_u64(args, "len", a[1]);
		err |= set_flags(args, "prot", memmon_prot__format, a[2]);
		break;
	case MEMMON_SYS_MUNLOCKALL:
		break;
	default: {
		json_t *raw = json_array();
		int i;

		for (i = 0; raw && i < 6; i++)
			if (json_array_append_new(raw, json_integer((json_int_t)a[i])))
				err = -ENOMEM;
		err |= set(args, "raw", raw);
	}
	}
	err |= set(o, "args", args);
	err |= set(o, "ret", json_integer(sc->ret));
	if (sc->ret < 0 && sc->ret >= -4095) {
		const char *en = memmon_errno__name((int)-sc->ret);

		if (en)
			err |= set(o, "errno", json_string(en));
	}
	err |= set_u64(o, "duration_ns", sc->duration_ns);
	if (sc->flags & MEMMON_SYSF_COMPAT)
		err |= set(o, "compat", json_true());
	if (sc->flags & MEMMON_SYSF_FILE) {
		const char *path = memmon_paths__lookup(paths, sc->aux[0], sc->aux[1]);

		err |= set_u64(o, "dev", sc->aux[0]);
		err |= set_u64(o, "ino", sc->aux[1]);
		if (path)
			err |= set(o, "path", bytes_string(path, strlen(path)));
	}
	return err ? -ENOMEM : 0;
}

static int json_fault(json_t *o, const struct memmon_rec_fault *f)
{
	const char *cls = memmon_fault_class__name(f->fclass);
	const char *res = memmon_fault_result__name(f->result);
	char buf[64];
	int err = 0;

	err |= set_hex(o, "addr", f->addr);
	err |= set_hex(o, "ip", f->ip);
	memmon_fault_access__format(buf, sizeof(buf), f->access);
	err |= set(o, "access", json_string(buf));
	err |= set(o, "class", cls ? json_string(cls) : json_integer(f->fclass));
	err |= set(o, "major", json_boolean(f->flags & MEMMON_FAULTF_MAJOR));
	err |= set(o, "result", res ? json_string(res) : json_integer(f->result));
	if (f->flags & MEMMON_FAULTF_KERNEL)
		err |= set(o, "kernel", json_true());
	if (f->flags & MEMMON_FAULTF_NEWPAGE)
		err |= set(o, "newpage", json_true());
	if (f->flags & MEMMON_FAULTF_PFN)
		err |= set_hex(o, "pfn", f->pfn);
	err |= set_u64(o, "duration_ns", f->duration_ns);
	return err ? -ENOMEM : 0;
}

static int json_body(json_t *o, const struct memmon_rec_header *rec,
		     const struct memmon_format_opts *opts)
{
	int err = 0;

	switch (rec->type) {
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);

		return sc ? json_syscall(o, sc, opts) : -EBADMSG;
	}
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f = memmon_rec__fault(rec);

		return f ? json_fault(o, f) : -EBADMSG;
	}
	case MEMMON_REC_LOST: {
		const struct memmon_rec_lost *l = memmon_rec__lost(rec);

		if (!l)
			return -EBADMSG;
		err |= set_u64(o, "count", l->count);
		err |= set_u64(o, "first_ns", l->first_ns);
		err |= set_u64(o, "last_ns", l->last_ns);
		break;
	}
	case MEMMON_REC_MARK: {
		const struct memmon_rec_mark *m = memmon_rec__mark(rec);

		if (!m)
			return -EBADMSG;
		err |= set(o, "text", bytes_string(m->data, m->len));
		err |= set(o, "flags", json_integer(m->flags));
		break;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r = memmon_rec__rss(rec);

		if (!r)
			return -EBADMSG;
		err |= set_u64(o, "anon", r->anon);
		err |= set_u64(o, "file", r->file);
		err |= set_u64(o, "shmem", r->shmem);
		err |= set_u64(o, "swap", r->swap);
		break;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = memmon_rec__fork(rec);

		if (!f)
			return -EBADMSG;
		err |= set(o, "child_tgid", json_integer(f->child_tgid));
		err |= set(o, "child_tid", json_integer(f->child_tid));
		err |= set(o, "thread", json_boolean(f->flags & MEMMON_FORKF_THREAD));
		err |= set(o, "shared_vm", json_boolean(f->flags & MEMMON_FORKF_VM));
		break;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = memmon_rec__exec(rec);

		if (!e)
			return -EBADMSG;
		err |= set(o, "path", bytes_string(e->path, e->path_len));
		break;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x = memmon_rec__exit(rec);
		char buf[64];

		if (!x)
			return -EBADMSG;
		if (x->flags & MEMMON_EXITF_REVOKED) {
			/* Still alive, but no longer ours to watch (uapi). */
			err |= set(o, "how", json_string("revoked"));
			err |= set(o, "group", json_true());
			err |= set(o, "revoked", json_true());
			break;
		}
		memmon_wait_status__format(buf, sizeof(buf), x->code);
		err |= set(o, "status", json_integer(x->code));
		err |= set(o, "how", json_string(buf));
		err |= set(o, "group", json_boolean(x->flags & MEMMON_EXITF_GROUP));
		if (x->flags & MEMMON_EXITF_GROUP) {
			err |= set_u64(o, "peak_rss", x->peak_rss);
			err |= set_u64(o, "peak_vm", x->peak_vm);
		}
		break;
	}
	case MEMMON_REC_PATH: {
		const struct memmon_rec_path *p = memmon_rec__path(rec);

		if (!p)
			return -EBADMSG;
		err |= set_u64(o, "dev", p->dev);
		err |= set_u64(o, "ino", p->ino);
		err |= set(o, "path", bytes_string(p->path, p->path_len));
		break;
	}
	default:
		return -ENOMSG;
	}
	return err ? -ENOMEM : 0;
}

static json_t *rec_to_obj(const struct memmon_rec_header *rec,
			  const struct memmon_format_opts *opts, int *errp)
{
	const char *type = memmon_rec_type__name(rec->type);
	json_t *o;
	int err = 0;

	if (!type) {
		*errp = -ENOMSG;
		return NULL;
	}
	o = json_object();
	if (!o) {
		*errp = -ENOMEM;
		return NULL;
	}
	err |= set_u64(o, "time_ns", rec->time_ns);
	if (OPTS_GET(opts, realtime_offset_ns, 0))
		err |= set(o, "realtime_ns", json_integer((json_int_t)rec->time_ns +
					OPTS_GET(opts, realtime_offset_ns, 0)));
	err |= set(o, "cpu", json_integer(rec->cpu));
	err |= set(o, "tgid", json_integer(rec->tgid));
	err |= set(o, "tid", json_integer(rec->tid));
	err |= set(o, "type", json_string(type));
	if (err) {
		*errp = -ENOMEM;
		json_decref(o);
		return NULL;
	}
	err = json_body(o, rec, opts);
	if (err) {
		*errp = err;
		json_decref(o);
		return NULL;
	}
	return o;
}

char *memmon_rec__to_json(const struct memmon_rec_header *rec,
			  const struct memmon_format_opts *opts)
{
	json_t *o;
	char *s;
	int err = 0;

	if (!rec || !OPTS_VALID(opts, memmon_format_opts))
		return libmm_err_ptr(-EINVAL);
	o = rec_to_obj(rec, opts, &err);
	if (!o)
		return libmm_err_ptr(err);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return libmm_err_ptr(-ENOMEM);
	return s;
}

int memmon_rec__fprint_json(FILE *f, const struct memmon_rec_header *rec,
			    const struct memmon_format_opts *opts)
{
	char *s = memmon_rec__to_json(rec, opts);
	int ret;

	if (!s)
		return errno == ENOMSG ? 0 : libmm_err(-errno);
	errno = 0;
	ret = fprintf(f, "%s\n", s) < 0 || ferror(f) ? (errno ? -errno : -EIO) :
							 (int)strlen(s) + 1;
	free(s);
	return libmm_err(ret);
}
