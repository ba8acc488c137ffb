/* SPDX-License-Identifier: GPL-2.0 */
/* Building records in memory for the decoder tests. */
#ifndef MEMMON_TESTS_UNIT_TEST_LIB_REC_H
#define MEMMON_TESTS_UNIT_TEST_LIB_REC_H

#include <string.h>
#include <linux/memmon.h>

/* 12:00:00 UTC on 2026-01-01 minus a monotonic base of 1000 s. */
#define TEST_T0_MONO	1000000000000ULL
#define TEST_T0_REAL	1767268800000000000LL
#define TEST_OFFSET	(TEST_T0_REAL - (long long)TEST_T0_MONO)

union rec_buf {
	struct memmon_rec_header hdr;
	__u64 words[1024];
};

static inline void rec_hdr(union rec_buf *b, __u16 type, size_t size)
{
	memset(b, 0, sizeof(*b));
	b->hdr.size = (__u32)((size + 7) & ~7UL);
	b->hdr.type = type;
	b->hdr.cpu = 1;
	b->hdr.time_ns = TEST_T0_MONO + 123456000ULL;
	b->hdr.tgid = 1234;
	b->hdr.tid = 1235;
}

static inline const struct memmon_rec_header *
rec_syscall(union rec_buf *b, __u32 sys, __u64 a0, __u64 a1, __u64 a2,
	    __u64 a3, __u64 a4, __u64 a5, __s64 ret, __u64 dur)
{
	struct memmon_rec_syscall *sc = (void *)b;

	rec_hdr(b, MEMMON_REC_SYSCALL, sizeof(*sc));
	sc->sys = sys;
	sc->args[0] = a0;
	sc->args[1] = a1;
	sc->args[2] = a2;
	sc->args[3] = a3;
	sc->args[4] = a4;
	sc->args[5] = a5;
	sc->ret = ret;
	sc->duration_ns = dur;
	return &b->hdr;
}

static inline const struct memmon_rec_header *
rec_mark(union rec_buf *b, const void *data, __u32 len)
{
	struct memmon_rec_mark *m = (void *)b;

	rec_hdr(b, MEMMON_REC_MARK, sizeof(*m) + len);
	m->len = len;
	memcpy(m->data, data, len);
	return &b->hdr;
}

static inline const struct memmon_rec_header *
rec_path(union rec_buf *b, __u16 type, const char *path)
{
	size_t len = strlen(path);

	if (type == MEMMON_REC_EXEC) {
		struct memmon_rec_exec *e = (void *)b;

		rec_hdr(b, type, sizeof(*e) + len + 1);
		e->path_len = (__u32)len;
		memcpy(e->path, path, len);
	} else {
		struct memmon_rec_path *p = (void *)b;

		rec_hdr(b, type, sizeof(*p) + len + 1);
		p->dev = (8 << 20) | 1;
		p->ino = 4242;
		p->path_len = (__u32)len;
		memcpy(p->path, path, len);
	}
	return &b->hdr;
}

#endif /* MEMMON_TESTS_UNIT_TEST_LIB_REC_H */
