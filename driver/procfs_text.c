// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the records as text, for /proc/memmon/events (procfs.c). The
 * names are uapi/memmon_names.h's, the ones libmemmon's decoder prints; the
 * fields and their order are this file's own: the text interface is for
 * shells and quick looks, libmemmon's text and JSON for tools.
 */
#include "main.h"
#include "procfs_text.h"
#include "memmon_names.h"

#include <linux/ctype.h>
#include <linux/kdev_t.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/time64.h>

/* Argument names per syscall; NULL ends the list. */
static const char *const memmon_sys_args[MEMMON_SYS__COUNT][7] = {
	[MEMMON_SYS_MMAP]	= { "addr", "len", "prot", "flags", "fd", "off" },
	[MEMMON_SYS_MUNMAP]	= { "addr", "len" },
	[MEMMON_SYS_MREMAP]	= { "addr", "old_len", "new_len", "flags", "new_addr" },
	[MEMMON_SYS_BRK]	= { "brk" },
	[MEMMON_SYS_MLOCK]	= { "addr", "len" },
	[MEMMON_SYS_MLOCK2]	= { "addr", "len", "flags" },
	[MEMMON_SYS_MUNLOCK]	= { "addr", "len" },
	[MEMMON_SYS_MLOCKALL]	= { "flags" },
	[MEMMON_SYS_MUNLOCKALL]	= { },
	[MEMMON_SYS_FSYNC]	= { "fd" },
	[MEMMON_SYS_MADVISE]	= { "addr", "len", "advice" },
	[MEMMON_SYS_MPROTECT]	= { "addr", "len", "prot" },
	[MEMMON_SYS_MMAP2]	= { "addr", "len", "prot", "flags", "fd", "pgoff" },
	[MEMMON_SYS_OLD_MMAP]	= { "addr", "len", "prot", "flags", "fd", "off" },
};

static const char *memmon_name(const char *const *tab, size_t n, u32 i)
{
	return i < n && tab[i] ? tab[i] : "?";
}

/* A string from the record (a path: user-chosen bytes) on one line. */
static int memmon_proc_str(char *out, size_t room, const char *s, u32 len)
{
	size_t i, n = min_t(size_t, len, room ? room - 1 : 0);

	for (i = 0; i < n; i++)
		out[i] = isprint(s[i]) ? s[i] : '?';
	if (room)
		out[n] = '\0';
	return n;
}

/**
 * memmon_proc_line() - one record as a line of /proc/memmon/events
 * @h: the record, @size bytes, validated (memmon_ring_peek())
 * @size: its size
 * @out: where the line goes, NUL-terminated
 * @room: bytes at @out
 *
 * Context: any; reads only the record.
 * Return: the line's length, or 0 if it does not fit in @room.
 */
size_t memmon_proc_line(const struct memmon_rec_header *h, u32 size,
			char *out, size_t room)
{
	const void *body = h;
	size_t n;
	int i;

#define OUT(...) (n += scnprintf(out + n, room - n, __VA_ARGS__))
	n = 0;
	OUT("%llu.%06llu %u/%u ", h->time_ns / NSEC_PER_SEC,
	    (h->time_ns % NSEC_PER_SEC) / NSEC_PER_USEC, h->tgid, h->tid);

	switch (h->type) {
	case MEMMON_REC_SYSCALL: {
		const struct memmon_rec_syscall *c = body;

		if (size < sizeof(*c))
			goto short_rec;
		OUT("%s%s(", c->flags & MEMMON_SYSF_COMPAT ? "ia32 " : "",
		    memmon_name(memmon_sys_names, ARRAY_SIZE(memmon_sys_names),
				c->sys));
		for (i = 0; c->sys < MEMMON_SYS__COUNT && i < 6; i++) {
			if (!memmon_sys_args[c->sys][i])
				break;
			OUT("%s%s=%#llx", i ? ", " : "", memmon_sys_args[c->sys][i],
			    c->args[i]);
		}
		/* Addresses in hex, counts and -errno in decimal. */
		if (c->ret >= 0 && (c->sys == MEMMON_SYS_MMAP ||
				    c->sys == MEMMON_SYS_MMAP2 ||
				    c->sys == MEMMON_SYS_OLD_MMAP ||
				    c->sys == MEMMON_SYS_MREMAP ||
				    c->sys == MEMMON_SYS_BRK))
			OUT(") = %#llx", c->ret);
		else
			OUT(") = %lld", c->ret);
		if (c->sys == MEMMON_SYS_BRK)
			OUT(" old=%#llx", c->aux[0]);
		if (c->flags & MEMMON_SYSF_FILE)
			OUT(" file=%u:%u:%llu", MAJOR(c->aux[0]), MINOR(c->aux[0]),
			    c->aux[1]);
		OUT(" %lluus", c->duration_ns / NSEC_PER_USEC);
		break;
	}
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f = body;

		if (size < sizeof(*f))
			goto short_rec;
		OUT("fault addr=%#llx ip=%#llx %s %s %s%s %s %lluus",
		    f->addr, f->ip,
		    f->access & MEMMON_FAULT_EXEC ? "exec" :
		    f->access & MEMMON_FAULT_WRITE ? "write" : "read",
		    memmon_name(memmon_fclass_names, ARRAY_SIZE(memmon_fclass_names),
				f->fclass),
		    f->flags & MEMMON_FAULTF_MAJOR ? "major" : "minor",
		    f->flags & MEMMON_FAULTF_KERNEL ? " kernel" : "",
		    memmon_name(memmon_fresult_names,
				ARRAY_SIZE(memmon_fresult_names), f->result),
		    f->duration_ns / NSEC_PER_USEC);
		if (f->flags & MEMMON_FAULTF_PFN)
			OUT(" pfn=%#llx%s", f->pfn,
			    f->flags & MEMMON_FAULTF_NEWPAGE ? " new" : "");
		break;
	}
	case MEMMON_REC_RSS: {
		const struct memmon_rec_rss *r = body;

		if (size < sizeof(*r))
			goto short_rec;
		OUT("rss anon=%lluK file=%lluK shmem=%lluK swap=%lluK",
		    r->anon >> 10, r->file >> 10, r->shmem >> 10, r->swap >> 10);
		break;
	}
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *f = body;

		if (size < sizeof(*f))
			goto short_rec;
		OUT("fork child=%u/%u%s%s", f->child_tgid, f->child_tid,
		    f->flags & MEMMON_FORKF_THREAD ? " thread" : "",
		    f->flags & MEMMON_FORKF_VM ? " vm" : "");
		break;
	}
	case MEMMON_REC_EXEC: {
		const struct memmon_rec_exec *e = body;

		if (size < sizeof(*e) || e->path_len > size - sizeof(*e))
			goto short_rec;
		OUT("exec ");
		n += memmon_proc_str(out + n, room - n, e->path, e->path_len);
		break;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *e = body;

		if (size < sizeof(*e))
			goto short_rec;
		OUT("exit code=%#x%s", e->code,
		    e->flags & MEMMON_EXITF_GROUP ? " group" : "");
		if (e->flags & MEMMON_EXITF_GROUP)
			OUT(" peak_rss=%lluK peak_vm=%lluK", e->peak_rss >> 10,
			    e->peak_vm >> 10);
		break;
	}
	case MEMMON_REC_PATH: {
		const struct memmon_rec_path *p = body;

		if (size < sizeof(*p) || p->path_len > size - sizeof(*p))
			goto short_rec;
		OUT("path file=%u:%u:%llu ", MAJOR(p->dev), MINOR(p->dev), p->ino);
		n += memmon_proc_str(out + n, room - n, p->path, p->path_len);
		break;
	}
	case MEMMON_REC_LOST: {
		const struct memmon_rec_lost *l = body;

		if (size < sizeof(*l))
			goto short_rec;
		OUT("lost %llu", l->count);
		break;
	}
	case MEMMON_REC_MARK: {
		const struct memmon_rec_mark *m = body;

		if (size < sizeof(*m))
			goto short_rec;
		OUT("mark len=%u", m->len);
		break;
	}
	default:
short_rec:
		OUT("record type=%u size=%u", h->type, size);
		break;
	}
	OUT("\n");
#undef OUT
	/* scnprintf() stops one short of @room: a line that filled it was cut. */
	return n + 1 < room ? n : 0;
}
