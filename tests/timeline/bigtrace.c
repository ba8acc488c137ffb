// SPDX-License-Identifier: GPL-2.0
/*
 * bigtrace: write a synthetic trace of about SIZE bytes, for measuring
 * `memmon timeline` (and report) on traces larger than a VM records
 * quickly: 8 processes of 4 threads over 10 minutes, faults of every
 * class (most records), memory calls, RSS every 10 ms, a marker a
 * minute, a LOST record now and then.
 *
 *   cc -O2 -I uapi -I libmemmon/include -o build/timeline/bigtrace \
 *      tests/timeline/bigtrace.c build/lib/libmemmon.a -ljansson -lzstd -lisal -lz
 *   build/timeline/bigtrace build/timeline/big.trace 4G
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <memmon/trace.h>

#define CHUNK	(1U << 20)

static unsigned char buf[2][CHUNK + 4096];
static size_t len[2];

static void *put(struct memmon_trace_writer *w, unsigned int cpu, __u16 type,
		 size_t size, __u64 t, __u32 tgid, __u32 tid)
{
	struct memmon_rec_header *h;

	size = (size + 7) & ~7UL;
	if (len[cpu] + size > CHUNK) {
		if (memmon_trace_writer__add_chunk(w, cpu, buf[cpu], len[cpu])) {
			perror("add_chunk");
			exit(1);
		}
		len[cpu] = 0;
	}
	h = (void *)(buf[cpu] + len[cpu]);
	memset(h, 0, size);
	h->size = (__u32)size;
	h->type = type;
	h->cpu = (__u16)cpu;
	h->time_ns = t;
	h->tgid = tgid;
	h->tid = tid;
	len[cpu] += size;
	return h;
}

int main(int argc, char **argv)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 2,
		       .realtime_offset_ns = 1764806400LL * 1000000000LL);
	unsigned long long size, i, n;
	struct memmon_trace_writer *w;
	const __u64 span = 600ULL * 1000000000ULL;
	char *end;
	__u32 p;

	if (argc != 3) {
		fprintf(stderr, "usage: bigtrace FILE SIZE[K|M|G]\n");
		return 2;
	}
	size = strtoull(argv[2], &end, 10);
	size <<= *end == 'G' ? 30 : *end == 'M' ? 20 : *end == 'K' ? 10 : 0;
	w = memmon_trace_writer__open(argv[1], &o);
	if (!w) {
		perror(argv[1]);
		return 1;
	}
	for (p = 0; p < 8; p++) {
		struct memmon_rec_exec *e = put(w, 0, MEMMON_REC_EXEC, sizeof(*e) + 16,
						1000 + p, 1000 + p, 1000 + p);

		e->path_len = 12;
		memcpy(e->path, "/usr/bin/big", 12);
	}
	/* ~72 bytes a record on average */
	n = size / 72;
	for (i = 0; i < n; i++) {
		__u64 t = 10000 + i * (span / n);
		__u32 tgid = 1000 + (__u32)(i % 8), tid = tgid + (__u32)(i / 8 % 4) * 10000;
		unsigned int cpu = (unsigned int)(i & 1);

		if (i % 10 == 9) {
			struct memmon_rec_syscall *s = put(w, cpu, MEMMON_REC_SYSCALL, sizeof(*s),
							   t, tgid, tid);

			s->sys = (__u32)(i / 10 % 12);
			s->args[0] = 0x7f0000000000ULL + (i << 12);
			s->args[1] = 65536;
			s->args[2] = 3;
			s->args[3] = 0x22;
			s->args[4] = (__u64)-1;
			s->ret = i % 97 ? (__s64)s->args[0] : -ENOMEM;
			s->duration_ns = 1000 + i % 20000;
		} else if (i % 1000 == 500) {
			struct memmon_rec_rss *r = put(w, cpu, MEMMON_REC_RSS, sizeof(*r), t,
						       tgid, tid);

			r->anon = (i % 100000) << 12;
			r->file = 8 << 20;
		} else {
			struct memmon_rec_fault *f = put(w, cpu, MEMMON_REC_FAULT, sizeof(*f), t,
							 tgid, tid);

			f->addr = 0x7f0000000000ULL + (i << 12);
			f->fclass = 1 + (__u32)(i % 4);
			f->flags = i % 50 ? 0 : MEMMON_FAULTF_MAJOR;
			f->duration_ns = 200 + i % 30000;
		}
		if (i % (n / 10 + 1) == 0) {
			struct memmon_rec_mark *m = put(w, 0, MEMMON_REC_MARK, sizeof(*m) + 8,
							t, tgid, tid);

			m->len = 7;
			memcpy(m->data, "a tenth", 7);
		}
		if (i % 5000000 == 2500000) {
			struct memmon_rec_lost *l = put(w, 1, MEMMON_REC_LOST, sizeof(*l), t,
							0, 0);

			l->count = 1234;
			l->first_ns = t - 1000000;
			l->last_ns = t - 1000;
		}
	}
	for (p = 0; p < 2; p++)
		if (len[p] && memmon_trace_writer__add_chunk(w, p, buf[p], len[p]))
			return 1;
	if (memmon_trace_writer__close(w)) {
		perror("close");
		return 1;
	}
	return 0;
}
