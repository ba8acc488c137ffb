// SPDX-License-Identifier: GPL-2.0
/*
 * memmon report on a trace file with a known story: one process maps,
 * faults, unmaps, grows its heap, locks, forks and exits; its child unmaps
 * part of the copy; one CPU lost events. The text and the JSON must tell
 * exactly that story. Then: a truncated file (reported, not fatal) and a
 * corrupt one (an error naming the offset).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>
#include <jansson.h>
#include <memmon/trace.h>
#include "test_cli_run.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })

static char path[] = "/tmp/memmon-report-XXXXXX";

struct chunkbuf {
	__u8 b[2][16384];
	size_t n[2];
};

static void *put(struct chunkbuf *cb, unsigned int cpu, __u16 type, size_t size,
		 __u64 t, __u32 tgid)
{
	struct memmon_rec_header *h = (void *)(cb->b[cpu] + cb->n[cpu]);

	size = (size + 7) & ~7UL;
	memset(h, 0, size);
	h->size = (__u32)size;
	h->type = type;
	h->cpu = (__u16)cpu;
	h->time_ns = t;
	h->tgid = tgid;
	h->tid = tgid;
	cb->n[cpu] += size;
	return h;
}

static void sys(struct chunkbuf *cb, unsigned int cpu, __u64 t, __u32 tgid,
		__u32 nr, __u64 a0, __u64 a1, __u64 a2, __u64 a3, __u64 a4, __s64 ret)
{
	struct memmon_rec_syscall *s = put(cb, cpu, MEMMON_REC_SYSCALL, sizeof(*s), t, tgid);

	s->sys = nr;
	s->args[0] = a0;
	s->args[1] = a1;
	s->args[2] = a2;
	s->args[3] = a3;
	s->args[4] = a4;
	s->ret = ret;
	s->duration_ns = 1000;
}

static void fault(struct chunkbuf *cb, unsigned int cpu, __u64 t, __u64 addr,
		  __u32 access, __u32 cls, bool major, __u64 dur)
{
	struct memmon_rec_fault *f = put(cb, cpu, MEMMON_REC_FAULT, sizeof(*f), t, 100);

	f->addr = addr;
	f->ip = 0x401000;
	f->access = access;
	f->fclass = cls;
	f->flags = major ? MEMMON_FAULTF_MAJOR : 0;
	f->duration_ns = dur;
}

static void write_story(const char *p)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 2);
	struct memmon_trace_writer *w = memmon_trace_writer__open(p, &o);
	struct chunkbuf *cb = calloc(1, sizeof(*cb));
	struct memmon_rec_exec *e;
	struct memmon_rec_path *pa;
	struct memmon_rec_syscall *s;
	struct memmon_rec_fork *fk;
	struct memmon_rec_lost *l;
	struct memmon_rec_exit *x;

	assert_non_null(w);
	e = put(cb, 0, MEMMON_REC_EXEC, sizeof(*e) + 16, 1000, 100);
	e->path_len = 12;
	memcpy(e->path, "/usr/bin/app", 12);
	pa = put(cb, 0, MEMMON_REC_PATH, sizeof(*pa) + 24, 1100, 100);
	pa->dev = (8 << 20) | 1;
	pa->ino = 77;
	pa->path_len = 18;
	memcpy(pa->path, "/usr/lib/libc.so.6", 18);
	sys(cb, 0, 1200, 100, MEMMON_SYS_MMAP, 0, 8192, 3, 0x22, -1, 0x10000);
	sys(cb, 1, 1300, 100, MEMMON_SYS_MMAP, 0, 12288, 1, 0x2, 3, 0x20000);
	s = (void *)(cb->b[1] + cb->n[1] - sizeof(*s));
	s->flags = MEMMON_SYSF_FILE;
	s->aux[0] = (8 << 20) | 1;
	s->aux[1] = 77;
	sys(cb, 1, 1400, 100, MEMMON_SYS_MMAP, 0, 1 << 20, 3, 0x22, -1, 0x100000);
	fault(cb, 0, 1500, 0x100010, MEMMON_FAULT_WRITE, MEMMON_FCLASS_ANON, false, 300);
	fault(cb, 0, 1510, 0x100020, MEMMON_FAULT_WRITE, MEMMON_FCLASS_ANON, false, 700);
	fault(cb, 1, 1520, 0x20010, MEMMON_FAULT_READ, MEMMON_FCLASS_FILE, true, 70000);
	/* dropped mmap_lock and retried: a record, not a fault the kernel counts */
	fault(cb, 1, 1530, 0x900000, MEMMON_FAULT_READ, MEMMON_FCLASS_ANON, false, 900);
	((struct memmon_rec_fault *)(cb->b[1] + cb->n[1]) - 1)->result = MEMMON_FRES_RETRY;
	sys(cb, 0, 1600, 100, MEMMON_SYS_MUNMAP, 0x100000, 1 << 20, 0, 0, 0, 0);
	sys(cb, 1, 1700, 100, MEMMON_SYS_MMAP, 0, 1ULL << 40, 3, 0x22, -1, -ENOMEM);
	sys(cb, 0, 1800, 100, MEMMON_SYS_BRK, 0x521000, 0, 0, 0, 0, 0x521000);
	s = (void *)(cb->b[0] + cb->n[0] - sizeof(*s));
	s->aux[0] = 0x500000;
	s->aux[1] = 0x521000;
	sys(cb, 1, 1900, 100, MEMMON_SYS_MLOCK, 0x10000, 8192, 0, 0, 0, 0);
	fk = put(cb, 0, MEMMON_REC_FORK, sizeof(*fk), 2000, 100);
	fk->child_tgid = 101;
	fk->child_tid = 101;
	sys(cb, 1, 2100, 101, MEMMON_SYS_MUNMAP, 0x10000, 8192, 0, 0, 0, 0);
	/* the heap grows again: one region, as the kernel's one VMA */
	sys(cb, 0, 2150, 100, MEMMON_SYS_BRK, 0x531000, 0, 0, 0, 0, 0x531000);
	s = (void *)(cb->b[0] + cb->n[0] - sizeof(*s));
	s->aux[0] = 0x521000;
	s->aux[1] = 0x531000;
	fault(cb, 0, 2160, 0x530008, MEMMON_FAULT_WRITE, MEMMON_FCLASS_ANON, false, 300);
	l = put(cb, 1, MEMMON_REC_LOST, sizeof(*l), 2200, 0);
	l->count = 5;
	put(cb, 0, 99, 48, 2500, 102);	/* a future record type, of no process seen */
	x = put(cb, 0, MEMMON_REC_EXIT, sizeof(*x), 3000, 100);
	x->flags = MEMMON_EXITF_GROUP;
	x->peak_vm = 50 << 20;
	x->peak_rss = 10 << 20;
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, cb->b[0], cb->n[0]), 0);
	assert_int_equal(memmon_trace_writer__add_chunk(w, 1, cb->b[1], cb->n[1]), 0);
	/* the kernel's counters at the end: cpu0 lost 2 with no LOST record
	 * yet (the loss was at the very end), cpu1 agrees with its record
	 */
	assert_int_equal(memmon_trace_writer__add_meta(w,
		"{\"cpu_stats\":[{\"lost\":2},{\"lost\":5}]}"), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
	free(cb);
}

static struct run res;

static void test_text(void **state)
{
	static const char *const want[] = {
		"2 CPUs",
		"lost events: 7 cpu0=2 cpu1=5",
		"process 100 (/usr/bin/app), exited 0",
		"  mmap                  4        1      1.0 MiB",
		"  munmap                1        0      1.0 MiB",
		"mapped 1.2 MiB, unmapped 1.0 MiB, locked 8.0 KiB",
		"peak virtual size (traced mappings) 1.0 MiB; at exit the kernel's peak_vm 50.0 MiB, peak_rss 10.0 MiB",
		"faults 5",
		"anon     minor          4  major          0",
		"file     minor          0  major          1",
		"results: handled 4 retry 1",
		"[      256 ns,       512 ns)          2",
		"[    65536 ns,    131072 ns)          1",
		"0x100000-0x200000    1.0 MiB rw- [anon]                   faults 2 (major 0)",
		"0x20000-0x23000   12.0 KiB r-- /usr/lib/libc.so.6       faults 1 (major 1)",
		"leak candidates: anonymous and heap memory never released at exit: 1 regions, 196.0 KiB",
		"[heap]         rw- flags 0  1 x 196.0 KiB = 200704 bytes (196.0 KiB)",
		"file mappings still mapped at exit (libraries, data; not leaks): 1 regions, 12.0 KiB",
		"0x20000   12.0 KiB r-- /usr/lib/libc.so.6",
		/* the 8 KiB anonymous mmap came before the first heap growth */
		"startup memory (anonymous, mapped while the loader ran; not leaks): 1 regions, 8.0 KiB",
		"process 101 (/usr/bin/app), child of 100, alive at the end of the trace",
		"leak candidates: anonymous and heap memory never released at the end of the trace: 1 regions, 132.0 KiB",
	};
	size_t i;

	(void)state;
	run_memmon(&res, NULL, NULL, A("report", path));
	assert_int_equal(res.code, 0);
	for (i = 0; i < ARRAY_SIZE(want); i++)
		if (!strstr(res.out, want[i]))
			fail_msg("missing \"%s\" in:\n%s", want[i], res.out);
	/* the unknown record type did not become a process of its own etc. */
	assert_null(strstr(res.out, "process 0"));
	assert_null(strstr(res.out, "process 102"));
}

static void test_json(void **state)
{
	json_t *j, *p, *q;

	(void)state;
	run_memmon(&res, NULL, NULL, A("report", "--json", path));
	assert_int_equal(res.code, 0);
	j = json_loads(res.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "lost")), 7);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "lost_per_cpu"), 0)), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "lost_per_cpu"), 1)), 5);
	p = json_array_get(json_object_get(j, "processes"), 0);
	assert_int_equal(json_integer_value(json_object_get(p, "tgid")), 100);
	q = json_object_get(json_object_get(p, "calls"), "mmap");
	assert_int_equal(json_integer_value(json_object_get(q, "count")), 4);
	assert_int_equal(json_integer_value(json_object_get(q, "failed")), 1);
	assert_int_equal(json_integer_value(json_object_get(p, "bytes_locked")), 8192);
	assert_int_equal(json_integer_value(json_object_get(p, "peak_vm_traced")), 1069056);
	assert_int_equal(json_array_size(json_object_get(p, "still_mapped")), 3);
	/* both brk grows are one [heap] region, the fault on the second's part
	 * counted on it
	 */
	q = json_array_get(json_object_get(p, "still_mapped"), 2);
	assert_string_equal(json_string_value(json_object_get(q, "what")), "[heap]");
	assert_int_equal(json_integer_value(json_object_get(q, "size")), 0x31000);
	assert_int_equal(json_integer_value(json_object_get(q, "faults")), 1);
	q = json_array_get(json_object_get(p, "hottest_regions"), 0);
	assert_int_equal(json_integer_value(json_object_get(q, "faults")), 2);
	q = json_object_get(json_object_get(p, "faults"), "file");
	assert_int_equal(json_integer_value(json_object_get(q, "major")), 1);
	assert_int_equal(json_array_size(json_object_get(p, "fault_latency")), 3);
	q = json_object_get(p, "fault_results");
	assert_int_equal(json_object_size(q), 2);
	assert_int_equal(json_integer_value(json_object_get(q, "handled")), 4);
	assert_int_equal(json_integer_value(json_object_get(q, "retry")), 1);
	assert_int_equal(json_integer_value(json_object_get(p, "faults_total")), 5);
	p = json_array_get(json_object_get(j, "processes"), 1);
	assert_int_equal(json_integer_value(json_object_get(p, "parent")), 100);
	assert_false(json_is_true(json_object_get(p, "exited")));
	json_decref(j);
}

static void test_truncated_and_corrupt(void **state)
{
	char cut[64];
	struct stat st;
	int fd;
	__u8 byte;

	(void)state;
	snprintf(cut, sizeof(cut), "%s.cut", path);
	assert_int_equal(stat(path, &st), 0);
	/* drop the trailer and part of the index: still reported, with a note */
	assert_int_equal(system("true"), 0);
	fd = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	{
		int in = open(path, O_RDONLY);
		char buf[65536];
		ssize_t n = read(in, buf, sizeof(buf));

		assert_true(n == st.st_size);
		assert_int_equal(write(fd, buf, (size_t)n - 40), n - 40);
		close(in);
	}
	close(fd);
	run_memmon(&res, NULL, NULL, A("report", cut));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.err, "truncated at offset"));
	assert_non_null(strstr(res.out, "process 100"));

	/* flip a byte inside the first chunk's records: an error at its offset */
	fd = open(path, O_RDWR);
	assert_int_equal(pread(fd, &byte, 1, 64 + 64 + 200), 1);
	byte ^= 0x10;
	assert_int_equal(pwrite(fd, &byte, 1, 64 + 64 + 200), 1);
	close(fd);
	run_memmon(&res, NULL, NULL, A("report", path));
	assert_int_equal(res.code, 1);
	assert_non_null(strstr(res.err, "chunk at offset 64 (cpu 0): checksum mismatch"));
	unlink(cut);
}

/*
 * A trace without the kernel's counters at the end (a recording killed
 * before it wrote them): the LOST records alone say what was lost, summed
 * per CPU.
 */
static void test_lost_records_alone(void **state)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, o, .nr_cpus = 2);
	char p2[64];
	struct memmon_trace_writer *w;
	struct chunkbuf *cb = calloc(1, sizeof(*cb));
	struct memmon_rec_lost *l;

	(void)state;
	assert_non_null(cb);
	snprintf(p2, sizeof(p2), "%s.lost", path);
	w = memmon_trace_writer__open(p2, &o);
	assert_non_null(w);
	fault(cb, 0, 100, 0x1000, MEMMON_FAULT_READ, MEMMON_FCLASS_ANON, false, 10);
	l = put(cb, 1, MEMMON_REC_LOST, sizeof(*l), 200, 0);
	l->count = 3;
	l = put(cb, 1, MEMMON_REC_LOST, sizeof(*l), 300, 0);
	l->count = 4;
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, cb->b[0], cb->n[0]), 0);
	assert_int_equal(memmon_trace_writer__add_chunk(w, 1, cb->b[1], cb->n[1]), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);
	free(cb);
	run_memmon(&res, NULL, NULL, A("report", p2));
	unlink(p2);
	assert_int_equal(res.code, 0);
	if (!strstr(res.out, "lost events: 7 cpu1=7"))
		fail_msg("no \"lost events: 7 cpu1=7\" in:\n%s", res.out);
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_truncated_and_corrupt),
		cmocka_unit_test(test_lost_records_alone),
	};

	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	write_story(path);
	return cmocka_run_group_tests_name("cli_report", tests, NULL, teardown);
}
