/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic recording for the script and export tests: every record
 * kind (syscalls ok, failed and long; faults of each class, minor and
 * major, handled and not; rss; fork/exec/exit; marks with plain and
 * hostile text; PATH; LOST) over three processes, five threads and three
 * CPUs, in small chunks so that a window skips some. story[] keeps what
 * was written, one entry per record, for the tests' own expectations.
 */
#ifndef MEMMON_TESTS_UNIT_TEST_CLI_STORY_H
#define MEMMON_TESTS_UNIT_TEST_CLI_STORY_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <memmon/trace.h>
#include <memmon/decode.h>

#define STORY_NCPU	3
#define STORY_N		3000		/* steps; a PATH adds a record */
#define STORY_T0	1000000000000ULL	/* start_ns: 1000 s */
#define STORY_STEP	1000000ULL		/* 1 ms a step */
#define STORY_RT	1767268800000000000LL	/* realtime offset */
#define STORY_CHUNK	2048

struct story_rec {
	__u16 type;
	__u16 cpu;
	__u64 time_ns;
	__u32 tgid, tid;
	__u32 sys;		/* SYSCALL */
	__s64 ret;
	__u64 dur;		/* SYSCALL, FAULT */
	__u32 fclass, fres, fflags;	/* FAULT */
	__u64 addr;		/* FAULT addr, SYSCALL args[0] */
	__u64 a1;		/* SYSCALL args[1] */
	__u64 rss[4];		/* RSS */
	__u64 lost_first;	/* LOST */
	__u64 lost_count;
	const char *text;	/* MARK, EXEC, PATH */
	size_t text_len;
};

static struct story_rec story[STORY_N * 2];
static size_t story_n;

/* Marker texts: the window tests use the first three by name. */
#define MARK_BEGIN	"begin"
#define MARK_MIDDLE	"middle"
#define MARK_FINISH	"finish"
static const char mark_hostile[] = "q\"uo,te\\ \x01\x1f\n\xff\xc3(bad \xe2\x82\xac ok";
static const char mark_newline[] = "two\nlines, \"quoted\"";

struct story_out {
	__u8 buf[STORY_NCPU][STORY_CHUNK];
	size_t fill[STORY_NCPU];
	struct memmon_trace_writer *w;
};

static inline void *story_put(struct story_out *o, struct story_rec *s, __u16 type,
		       size_t size)
{
	struct memmon_rec_header *h;
	unsigned int c = s->cpu;

	size = (size + 7) & ~7UL;
	if (o->fill[c] + size > STORY_CHUNK) {
		if (memmon_trace_writer__add_chunk(o->w, c, o->buf[c], o->fill[c]))
			abort();
		o->fill[c] = 0;
	}
	h = (void *)(o->buf[c] + o->fill[c]);
	memset(h, 0, size);
	o->fill[c] += size;
	h->size = (__u32)size;
	h->type = type;
	h->cpu = (__u16)c;
	h->time_ns = s->time_ns;
	h->tgid = s->tgid;
	h->tid = s->tid;
	s->type = type;
	return h;
}

static inline void story_syscall(struct story_out *o, struct story_rec *s, __u32 sys,
			  __u64 a0, __u64 a1, __s64 ret, __u64 dur, bool file)
{
	struct memmon_rec_syscall *sc = story_put(o, s, MEMMON_REC_SYSCALL, sizeof(*sc));

	sc->sys = sys;
	sc->args[0] = a0;
	sc->args[1] = a1;
	sc->args[2] = 3;		/* PROT_READ|PROT_WRITE */
	sc->args[3] = file ? 2 : 0x22;	/* MAP_PRIVATE(|MAP_ANONYMOUS) */
	sc->args[4] = file ? 3 : (__u64)-1;
	sc->ret = ret;
	sc->duration_ns = dur;
	if (file) {
		sc->flags = MEMMON_SYSF_FILE;
		sc->aux[0] = 0x801;
		sc->aux[1] = 4242;
	}
	s->sys = sys;
	s->ret = ret;
	s->dur = dur;
	s->addr = a0;
	s->a1 = a1;
}

/*
 * Write the story to path; lost: with LOST records. The steps go round
 * the CPUs; each CPU's records are in time order, as a ring's are.
 */
static inline void story_write(const char *path, bool lost)
{
	static struct story_out o;
	static const __u32 tgids[] = { 100, 100, 200, 200, 300 };
	static const __u32 tids[] = { 100, 101, 200, 201, 300 };
	LIBMEMMON_OPTS(memmon_trace_writer_opts, wo, .nr_cpus = STORY_NCPU,
		       .realtime_offset_ns = STORY_RT);
	char meta[128];
	unsigned int i, c;
	bool path_done = false;

	memset(&o, 0, sizeof(o));
	story_n = 0;
	o.w = memmon_trace_writer__open(path, &wo);
	if (!o.w)
		abort();
	snprintf(meta, sizeof(meta), "{\"start_ns\":%llu}",
		 (unsigned long long)STORY_T0);
	if (memmon_trace_writer__add_meta(o.w, meta))
		abort();
	for (i = 0; i < STORY_N; i++) {
		struct story_rec *s = &story[story_n++];
		unsigned int who = (i / 3) % 5;

		memset(s, 0, sizeof(*s));
		s->cpu = (__u16)(i % STORY_NCPU);
		s->time_ns = STORY_T0 + 500000 + (__u64)i * STORY_STEP;
		s->tgid = tgids[who];
		s->tid = tids[who];
		if (i == 500 || i == 1500 || i == 2500 || i == 2000 || i == 2100) {
			const char *t = i == 500 ? MARK_BEGIN : i == 1500 ? MARK_MIDDLE :
					i == 2500 ? MARK_FINISH : i == 2000 ?
					mark_hostile : mark_newline;
			size_t len = i == 2000 ? sizeof(mark_hostile) - 1 : strlen(t);
			struct memmon_rec_mark *m = story_put(&o, s, MEMMON_REC_MARK,
							      sizeof(*m) + len);

			m->len = (__u32)len;
			memcpy(m->data, t, len);
			s->text = t;
			s->text_len = len;
			continue;
		}
		if (lost && (i == 1000 || i == 2999 || i == 1800)) {
			struct memmon_rec_lost *l = story_put(&o, s, MEMMON_REC_LOST,
							      sizeof(*l));

			s->tgid = s->tid = 0;
			l->hdr.tgid = l->hdr.tid = 0;
			l->count = 10 + i;
			/* i == 1800: losses from 1.2 s on, told at 1.8 s */
			l->first_ns = s->time_ns - (i == 1800 ? 600 : 50) * STORY_STEP;
			l->last_ns = s->time_ns - STORY_STEP;
			s->lost_first = l->first_ns;
			s->lost_count = l->count;
			continue;
		}
		switch (i % 12) {
		case 0:
			/* a file mmap; the first one has its PATH just before */
			if (!path_done) {
				static const char p[] = "/usr/lib/libc \"x\".so";
				struct memmon_rec_path *pr;

				s->time_ns -= 1;
				pr = story_put(&o, s, MEMMON_REC_PATH,
					       sizeof(*pr) + sizeof(p));
				pr->dev = 0x801;
				pr->ino = 4242;
				pr->path_len = sizeof(p) - 1;
				memcpy(pr->path, p, sizeof(p));
				s->text = p;
				s->text_len = sizeof(p) - 1;
				path_done = true;
				s = &story[story_n++];
				*s = story[story_n - 2];
				s->time_ns += 1;
				s->text = NULL;
			}
			story_syscall(&o, s, MEMMON_SYS_MMAP, 0, 8192,
				      0x7f0000000000LL + i * 4096, 1000 + i, true);
			break;
		case 1:
			story_syscall(&o, s, MEMMON_SYS_MMAP, 0, 1 << 20,
				      -ENOMEM, 700, false);
			break;
		case 2:
			story_syscall(&o, s, MEMMON_SYS_MUNMAP, 0x7f0000000000ULL + i * 4096,
				      4096, 0, 2000, false);
			break;
		case 3: {
			struct memmon_rec_fault *f = story_put(&o, s, MEMMON_REC_FAULT,
							       sizeof(*f));

			f->addr = 0x10000 + (__u64)i * 8;
			f->ip = 0x400000 + i;
			f->access = i % 2 ? MEMMON_FAULT_WRITE : MEMMON_FAULT_READ;
			f->fclass = (i / 12) % 6;
			f->result = (i / 12) % 7 == 3 ? MEMMON_FRES_SIGSEGV :
				    MEMMON_FRES_HANDLED;
			f->flags = (i / 12) % 4 == 1 ? MEMMON_FAULTF_MAJOR : 0;
			f->duration_ns = (i / 12) % 5 == 2 ? 3000000 : 1500;
			s->addr = f->addr;
			s->fclass = f->fclass;
			s->fres = f->result;
			s->fflags = f->flags;
			s->dur = f->duration_ns;
			break;
		}
		case 4: {
			struct memmon_rec_rss *r = story_put(&o, s, MEMMON_REC_RSS,
							     sizeof(*r));

			r->anon = s->rss[0] = 4096ULL * i;
			r->file = s->rss[1] = 8192ULL * i;
			r->shmem = s->rss[2] = i;
			r->swap = s->rss[3] = 7;
			break;
		}
		case 5:
			/* a long call: 5 ms in mlock */
			story_syscall(&o, s, MEMMON_SYS_MLOCK, 0x10000, 1 << 24, 0,
				      5000000, false);
			break;
		case 6: {
			struct memmon_rec_fork *f = story_put(&o, s, MEMMON_REC_FORK,
							      sizeof(*f));

			f->child_tgid = 5000 + i;
			f->child_tid = 5000 + i;
			break;
		}
		case 7: {
			static const char p[] = "/usr/bin/t\xc3\xa9st";
			struct memmon_rec_exec *e = story_put(&o, s, MEMMON_REC_EXEC,
							      sizeof(*e) + sizeof(p));

			e->path_len = sizeof(p) - 1;
			memcpy(e->path, p, sizeof(p));
			s->text = p;
			s->text_len = sizeof(p) - 1;
			break;
		}
		case 8: {
			struct memmon_rec_exit *e = story_put(&o, s, MEMMON_REC_EXIT,
							      sizeof(*e));

			e->code = (i % 5) << 8;
			e->flags = MEMMON_EXITF_GROUP;
			e->peak_rss = 1 << 20;
			e->peak_vm = 1 << 22;
			break;
		}
		case 9:
			story_syscall(&o, s, MEMMON_SYS_BRK, 0, 0, 0x560000000000LL, 300,
				      false);
			break;
		case 10:
			story_syscall(&o, s, MEMMON_SYS_MPROTECT, 0x10000, 4096, -EACCES,
				      400, false);
			break;
		default:
			story_syscall(&o, s, MEMMON_SYS_MADVISE, 0x10000, 4096, 0,
				      2500000, false);
			break;
		}
	}
	for (c = 0; c < STORY_NCPU; c++)
		if (o.fill[c] &&
		    memmon_trace_writer__add_chunk(o.w, c, o.buf[c], o.fill[c]))
			abort();
	/* as memmon record ends: the paths of the PATH records */
	if (memmon_trace_writer__add_meta(o.w, "{\"paths\":[{\"dev\":2049,"
					  "\"ino\":4242,\"path\":"
					  "\"/usr/lib/libc \\\"x\\\".so\"}]}"))
		abort();
	if (memmon_trace_writer__close(o.w))
		abort();
}

/*
 * A file whose checksums are right but whose second record, a SYSCALL,
 * is 32 bytes: too short for its fields (a writer's bug, not damage).
 */
static inline void story_write_malformed(const char *path)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, wo, .nr_cpus = 1);
	struct memmon_trace_writer *w = memmon_trace_writer__open(path, &wo);
	__u64 buf[16] = { 0 };
	struct memmon_rec_rss *r = (void *)buf;
	struct memmon_rec_header *h = (void *)((char *)buf + sizeof(*r));

	if (!w)
		abort();
	r->hdr.size = sizeof(*r);
	r->hdr.type = MEMMON_REC_RSS;
	r->hdr.time_ns = STORY_T0;
	r->hdr.tgid = r->hdr.tid = 1;
	h->size = 32;
	h->type = MEMMON_REC_SYSCALL;
	h->time_ns = STORY_T0 + 1;
	h->tgid = h->tid = 1;
	if (memmon_trace_writer__add_chunk(w, 0, buf, sizeof(*r) + 32) ||
	    memmon_trace_writer__close(w))
		abort();
}

static inline size_t story_count(__u16 type)
{
	size_t i, n = 0;

	for (i = 0; i < story_n; i++)
		n += story[i].type == type;
	return n;
}

/* The whole file as a string (NUL-terminated); free() it. */
static inline char *story_slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	char *b = NULL;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = '\0';
	if (len)
		*len = (size_t)n;
	fclose(f);
	return b;
}

#endif /* MEMMON_TESTS_UNIT_TEST_CLI_STORY_H */
