// SPDX-License-Identifier: GPL-2.0
/*
 * memmon export: the Chrome JSON parses (jansson, which also refuses
 * invalid UTF-8) and keeps the Trace Event Format's rules (ph, ts, pid,
 * tid on every event, dur >= 0 on X, metadata before every pid and tid
 * used, ts in microseconds equal to the records' time_ns); each record
 * kind becomes its event, hostile text is escaped; --fault-bucket's
 * counters add up to the faults; the CSV tables have
 * their headers, one row per record of their kind, fields that read back
 * as written (quoted commas, quotes and newlines included); filters
 * apply; errors give the documented exit codes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include "test_cli_run.h"
#include "test_cli_story.h"

#define A(...) ((const char *const[]){ __VA_ARGS__, NULL })

static char dir[] = "/tmp/memmon-export-XXXXXX";
static char trace[128], outp[128], csvdir[128];
static struct run res;

/* The hostile mark as a JSON or CSV reader gets it: bad bytes U+FFFD. */
static const char hostile_clean[] =
	"q\"uo,te\\ \x01\x1f\n\xef\xbf\xbd\xef\xbf\xbd(bad \xe2\x82\xac ok";

static void run_ok(const char *const *args)
{
	run_memmon(&res, NULL, NULL, args);
	if (res.code)
		fail_msg("memmon %s: exit %d: %s", args[0], res.code, res.err);
}

static __u64 us_to_ns(json_t *v)
{
	assert_true(json_is_number(v));
	return (__u64)(json_number_value(v) * 1000.0 + 0.5);
}

/* The next story record of type, from *k on. */
static const struct story_rec *next_of(size_t *k, __u16 type)
{
	while (*k < story_n && story[*k].type != type)
		(*k)++;
	assert_true(*k < story_n);
	return &story[(*k)++];
}

static void test_chrome(void **state)
{
	size_t kx = 0, kf = 0, kr = 0, km = 0, kl = 0, i, len;
	size_t nx = 0, nf = 0, nc = 0, nl = 0, nm = 0, nlost = 0, nmeta = 0;
	json_t *root, *evs, *e;
	json_error_t jerr;
	char *raw;
	/* pids and pid/tid pairs with metadata so far: small, fixed sets */
	__u64 named[64];
	size_t nnamed = 0, nexec_named = 0;

	(void)state;
	run_ok(A("export", "--format", "chrome", "-o", outp, trace));
	raw = story_slurp(outp, &len);
	assert_non_null(raw);
	/* no raw control byte but the newlines between events */
	for (i = 0; i < len; i++)
		if ((unsigned char)raw[i] < 0x20 && raw[i] != '\n')
			fail_msg("raw control byte %#x at %zu", raw[i], i);
	free(raw);
	root = json_load_file(outp, 0, &jerr);
	if (!root)
		fail_msg("not JSON: %s at line %d", jerr.text, jerr.line);
	assert_string_equal(json_string_value(json_object_get(root, "displayTimeUnit")),
			    "ns");
	evs = json_object_get(root, "traceEvents");
	assert_true(json_is_array(evs));
	json_array_foreach(evs, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *cat = json_string_value(json_object_get(e, "cat"));
		json_t *pid = json_object_get(e, "pid"), *tid = json_object_get(e, "tid");
		json_t *args = json_object_get(e, "args");
		__u64 ts, key, pkey;
		size_t j;
		bool have_p = false, have_t = false;

		assert_non_null(ph);
		assert_non_null(name);
		assert_true(json_is_integer(pid) && json_integer_value(pid) >= 0);
		assert_true(json_is_integer(tid) && json_integer_value(tid) >= 0);
		key = (__u64)json_integer_value(pid) << 32 | (__u64)json_integer_value(tid);
		pkey = (__u64)json_integer_value(pid) << 32 | 0xffffffffULL;
		if (!strcmp(ph, "M")) {
			nmeta++;
			assert_true(json_is_string(json_object_get(args, "name")));
			if (strcmp(name, "process_name") && strcmp(name, "thread_name"))
				fail_msg("metadata %s", name);
			/* an exec names its process after the program */
			nexec_named += !strcmp(name, "process_name") &&
				!strcmp(json_string_value(json_object_get(args, "name")),
					"t\xc3\xa9st");
			key = !strcmp(name, "process_name") ? pkey : key;
			for (j = 0; j < nnamed && named[j] != key; j++)
				;
			if (j == nnamed)
				named[nnamed++] = key;
			assert_true(nnamed < 60);
			continue;
		}
		/* metadata came before the first event of its pid and tid */
		for (j = 0; j < nnamed; j++) {
			have_p |= named[j] == pkey;
			have_t |= named[j] == key;
		}
		if (!have_p || !have_t)
			fail_msg("event %zu (%s): no metadata for pid/tid %lld/%lld", i,
				 name, json_integer_value(pid), json_integer_value(tid));
		assert_non_null(cat);
		ts = us_to_ns(json_object_get(e, "ts"));
		if (!strcmp(ph, "X")) {
			const struct story_rec *s = next_of(&kx, MEMMON_REC_SYSCALL);
			__u64 dur = us_to_ns(json_object_get(e, "dur"));

			assert_true(json_number_value(json_object_get(e, "dur")) >= 0);
			/* ts is the call's start: it was stamped at its return */
			assert_int_equal(ts + dur, s->time_ns);
			assert_int_equal(dur, s->dur);
			assert_int_equal(json_integer_value(pid), s->tgid);
			assert_int_equal(json_integer_value(tid), s->tid);
			assert_string_equal(name, memmon_sys__name(s->sys));
			assert_int_equal(json_integer_value(json_object_get(args, "ret")),
					 s->ret);
			if (s->ret == -ENOMEM)
				assert_string_equal(json_string_value(
					json_object_get(args, "errno")), "ENOMEM");
			assert_true(json_is_string(json_object_get(args, "call")));
			if (s->sys == MEMMON_SYS_MMAP && s->ret > 0)
				assert_non_null(strstr(json_string_value(
					json_object_get(args, "call")),
					"3</usr/lib/libc \"x\".so>"));
			nx++;
		} else if (!strcmp(ph, "C")) {
			const struct story_rec *s = next_of(&kr, MEMMON_REC_RSS);

			assert_int_equal(ts, s->time_ns);
			assert_int_equal(json_integer_value(json_object_get(args, "anon")),
					 s->rss[0]);
			assert_int_equal(json_integer_value(json_object_get(args, "file")),
					 s->rss[1]);
			assert_int_equal(json_integer_value(json_object_get(args, "shmem")),
					 s->rss[2]);
			assert_int_equal(json_integer_value(json_object_get(args, "swap")),
					 s->rss[3]);
			nc++;
		} else if (!strcmp(ph, "i")) {
			const char *scope = json_string_value(json_object_get(e, "s"));

			assert_non_null(scope);
			if (!strcmp(cat, "fault")) {
				const struct story_rec *s = next_of(&kf, MEMMON_REC_FAULT);
				char want[64], addr[32];

				assert_int_equal(ts, s->time_ns);
				assert_string_equal(scope, "t");
				snprintf(want, sizeof(want), "fault %s%s",
					 memmon_fault_class__name(s->fclass),
					 s->fflags & MEMMON_FAULTF_MAJOR ? " major" : "");
				assert_string_equal(name, want);
				snprintf(addr, sizeof(addr), "0x%llx",
					 (unsigned long long)s->addr);
				assert_string_equal(json_string_value(
					json_object_get(args, "addr")), addr);
				assert_int_equal(json_integer_value(
					json_object_get(args, "duration_ns")), s->dur);
				nf++;
			} else if (!strcmp(cat, "mark")) {
				const struct story_rec *s = next_of(&km, MEMMON_REC_MARK);

				assert_int_equal(ts, s->time_ns);
				assert_string_equal(scope, "g");
				assert_string_equal(name, s->text == mark_hostile ?
						    hostile_clean : s->text);
				nm++;
			} else if (!strcmp(cat, "lost")) {
				const struct story_rec *s = next_of(&kl, MEMMON_REC_LOST);

				assert_int_equal(ts, s->time_ns);
				assert_string_equal(scope, "g");
				assert_int_equal(json_integer_value(json_object_get(args, "count")),
						 s->lost_count);
				nlost++;
			} else if (!strcmp(cat, "lifecycle")) {
				nl++;
			} else {
				fail_msg("instant event of category %s", cat);
			}
		} else {
			fail_msg("event %zu: phase %s", i, ph);
		}
	}
	assert_int_equal(nx, story_count(MEMMON_REC_SYSCALL));
	assert_int_equal(nf, story_count(MEMMON_REC_FAULT));
	assert_int_equal(nc, story_count(MEMMON_REC_RSS));
	assert_int_equal(nm, story_count(MEMMON_REC_MARK));
	assert_int_equal(nm, 5);
	assert_int_equal(nlost, story_count(MEMMON_REC_LOST));
	assert_int_equal(nlost, 3);
	assert_int_equal(nl, story_count(MEMMON_REC_FORK) + story_count(MEMMON_REC_EXEC) +
			 story_count(MEMMON_REC_EXIT));
	/* 3 processes + pid 0 (LOST), 5 threads + tid 0, and a name per exec */
	assert_int_equal(nmeta, 4 + 6 + 2 * story_count(MEMMON_REC_EXEC));
	assert_int_equal(nexec_named, story_count(MEMMON_REC_EXEC));
	json_decref(root);
}

/* A filter applies to the export as to script; LOST is kept. */
static void test_chrome_filtered(void **state)
{
	json_t *root, *e;
	json_error_t jerr;
	size_t i, lost = 0, n = 0;

	(void)state;
	run_ok(A("export", "-f", "chrome", "-p", "300", "-e", "faults",
		 "-o", outp, trace));
	root = json_load_file(outp, 0, &jerr);
	assert_non_null(root);
	json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		json_int_t pid = json_integer_value(json_object_get(e, "pid"));

		if (!strcmp(ph, "M"))
			continue;
		if (!strcmp(json_string_value(json_object_get(e, "cat")), "lost")) {
			lost++;
			continue;
		}
		assert_int_equal(pid, 300);
		assert_string_equal(json_string_value(json_object_get(e, "cat")), "fault");
		n++;
	}
	for (i = 0; i < story_n; i++)
		if (story[i].type == MEMMON_REC_FAULT && story[i].tgid == 300)
			n--;
	assert_int_equal(n, 0);
	assert_int_equal(lost, 3);
	json_decref(root);
	/* standard output when there is no -o */
	run_ok(A("export", "--format=chrome", "--time", "2.99,", trace));
	root = json_loads(res.out, 0, &jerr);
	assert_non_null(root);
	assert_true(json_array_size(json_object_get(root, "traceEvents")) > 5);
	json_decref(root);
}

/* --fault-bucket: counters per process and bucket that add up to the faults. */
static void test_chrome_fault_buckets(void **state)
{
	static const __u32 pids[] = { 100, 200, 300 };
	__u64 sum[3] = { 0 }, want[3] = { 0 }, major = 0, want_major = 0;
	json_t *root, *e, *v;
	json_error_t jerr;
	const char *key;
	size_t i, k, zeros = 0;

	(void)state;
	run_ok(A("export", "-f", "chrome", "--fault-bucket", "10ms", "-o", outp, trace));
	root = json_load_file(outp, 0, &jerr);
	assert_non_null(root);
	json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
		const char *cat = json_string_value(json_object_get(e, "cat"));
		json_int_t pid = json_integer_value(json_object_get(e, "pid"));
		__u64 ts, n = 0;

		if (!cat || strcmp(cat, "fault"))
			continue;
		ts = us_to_ns(json_object_get(e, "ts"));
		assert_string_equal(json_string_value(json_object_get(e, "ph")), "C");
		assert_string_equal(json_string_value(json_object_get(e, "name")), "faults");
		/* at a bucket's start */
		assert_int_equal(ts % 10000000, 0);
		json_object_foreach(json_object_get(e, "args"), key, v) {
			if (!strcmp(key, "major")) {
				major += (__u64)json_integer_value(v);
				continue;
			}
			n += (__u64)json_integer_value(v);
		}
		zeros += !n;
		for (k = 0; k < 3; k++)
			if (pid == pids[k])
				sum[k] += n;
	}
	for (i = 0; i < story_n; i++) {
		if (story[i].type != MEMMON_REC_FAULT)
			continue;
		want_major += !!(story[i].fflags & MEMMON_FAULTF_MAJOR);
		for (k = 0; k < 3; k++)
			if (story[i].tgid == pids[k])
				want[k]++;
	}
	for (k = 0; k < 3; k++) {
		assert_true(want[k] > 10);
		assert_int_equal(sum[k], want[k]);
	}
	assert_int_equal(major, want_major);
	/* the story's faults are sparse: the graph drops between buckets */
	assert_true(zeros > 10);
	json_decref(root);
	run_memmon(&res, NULL, NULL, A("export", "-f", "chrome", "--fault-bucket", "0",
				       trace));
	assert_int_equal(res.code, 2);
	assert_non_null(strstr(res.err, "bad --fault-bucket '0'"));
}

/* RFC 4180 rows: fields split, quotes undone. */
struct csv {
	char *buf;
	char ***rows;		/* rows[i][j] */
	size_t *nf;
	size_t nr;
};

static void csv_parse(struct csv *c, const char *path)
{
	char *p, *w, *field;
	size_t cap = 0, fcap;

	memset(c, 0, sizeof(*c));
	c->buf = story_slurp(path, NULL);
	assert_non_null(c->buf);
	p = w = c->buf;
	while (*p) {
		if (c->nr == cap) {
			cap = cap ? cap * 2 : 64;
			c->rows = realloc(c->rows, cap * sizeof(*c->rows));
			c->nf = realloc(c->nf, cap * sizeof(*c->nf));
		}
		c->rows[c->nr] = NULL;
		c->nf[c->nr] = 0;
		fcap = 0;
		for (;;) {
			field = w;
			if (*p == '"') {
				for (p++;; p++) {
					assert_true(*p);
					if (*p == '"' && p[1] == '"') {
						*w++ = '"';
						p++;
					} else if (*p == '"') {
						p++;
						break;
					} else {
						*w++ = *p;
					}
				}
			} else {
				while (*p && *p != ',' && *p != '\n')
					*w++ = *p++;
			}
			if (c->nf[c->nr] == fcap) {
				fcap = fcap ? fcap * 2 : 16;
				c->rows[c->nr] = realloc(c->rows[c->nr],
							 fcap * sizeof(char *));
			}
			c->rows[c->nr][c->nf[c->nr]++] = field;
			if (*p == ',') {
				*w++ = '\0';
				p++;
				continue;
			}
			assert_true(*p == '\n');	/* every row ends with one */
			*w++ = '\0';
			p++;
			break;
		}
		c->nr++;
	}
}

static void csv_free(struct csv *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		free(c->rows[i]);
	free(c->rows);
	free(c->nf);
	free(c->buf);
}

static struct csv *table(const char *name, const char *header, size_t rows)
{
	static struct csv c;
	char p[256];
	size_t i;

	snprintf(p, sizeof(p), "%s/%s", csvdir, name);
	csv_parse(&c, p);
	assert_true(c.nr >= 1);
	{
		char *h = NULL;
		size_t len = 0, j;
		FILE *f = open_memstream(&h, &len);

		for (j = 0; j < c.nf[0]; j++)
			fprintf(f, "%s%s", j ? "," : "", c.rows[0][j]);
		fclose(f);
		assert_string_equal(h, header);
		free(h);
	}
	if (c.nr - 1 != rows)
		fail_msg("%s: %zu rows, %zu records", name, c.nr - 1, rows);
	for (i = 1; i < c.nr; i++)
		if (c.nf[i] != c.nf[0])
			fail_msg("%s row %zu: %zu fields, the header has %zu", name, i,
				 c.nf[i], c.nf[0]);
	return &c;
}

static __u64 num(const char *s)
{
	char *end;
	__u64 v = strtoull(s, &end, 0);

	if (!*s || *end)
		fail_msg("'%s' is not a number", s);
	return v;
}

static void test_csv(void **state)
{
	struct csv *c;
	size_t i, k;

	(void)state;
	run_ok(A("export", "--format", "csv", "-o", csvdir, trace));

	c = table("syscalls.csv", "time_ns,cpu,tgid,tid,syscall,arg0,arg1,arg2,arg3,"
		  "arg4,arg5,ret,errno,duration_ns,compat,file_dev,file_ino,path",
		  story_count(MEMMON_REC_SYSCALL));
	for (i = 1, k = 0; i < c->nr; i++) {
		const struct story_rec *s = next_of(&k, MEMMON_REC_SYSCALL);
		char **f = c->rows[i];

		assert_int_equal(num(f[0]), s->time_ns);
		assert_int_equal(num(f[1]), s->cpu);
		assert_int_equal(num(f[2]), s->tgid);
		assert_int_equal(num(f[3]), s->tid);
		assert_string_equal(f[4], memmon_sys__name(s->sys));
		assert_int_equal(num(f[5]), s->addr);
		assert_int_equal(num(f[6]), s->a1);
		assert_int_equal(strtoll(f[11], NULL, 10), s->ret);
		assert_string_equal(f[12], s->ret == -ENOMEM ? "ENOMEM" :
				    s->ret == -EACCES ? "EACCES" : "");
		assert_int_equal(num(f[13]), s->dur);
		if (s->sys == MEMMON_SYS_MMAP && s->ret > 0) {
			assert_int_equal(num(f[15]), 0x801);
			assert_int_equal(num(f[16]), 4242);
			assert_string_equal(f[17], "/usr/lib/libc \"x\".so");
		} else {
			assert_string_equal(f[17], "");
		}
	}
	csv_free(c);

	c = table("faults.csv", "time_ns,cpu,tgid,tid,addr,ip,access,class,major,"
		  "kernel,new_page,result,duration_ns,pfn",
		  story_count(MEMMON_REC_FAULT));
	for (i = 1, k = 0; i < c->nr; i++) {
		const struct story_rec *s = next_of(&k, MEMMON_REC_FAULT);
		char **f = c->rows[i];

		assert_int_equal(num(f[0]), s->time_ns);
		assert_int_equal(num(f[4]), s->addr);
		assert_string_equal(f[7], memmon_fault_class__name(s->fclass));
		assert_int_equal(num(f[8]), !!(s->fflags & MEMMON_FAULTF_MAJOR));
		assert_string_equal(f[11], memmon_fault_result__name(s->fres));
		assert_int_equal(num(f[12]), s->dur);
	}
	csv_free(c);

	c = table("rss.csv", "time_ns,cpu,tgid,tid,anon,file,shmem,swap",
		  story_count(MEMMON_REC_RSS));
	for (i = 1, k = 0; i < c->nr; i++) {
		const struct story_rec *s = next_of(&k, MEMMON_REC_RSS);

		assert_int_equal(num(c->rows[i][0]), s->time_ns);
		for (size_t j = 0; j < 4; j++)
			assert_int_equal(num(c->rows[i][4 + j]), s->rss[j]);
	}
	csv_free(c);

	c = table("lifecycle.csv", "time_ns,cpu,tgid,tid,event,child_tgid,child_tid,"
		  "thread,path,exit_status,exit_code,group,peak_rss,peak_vm,comm,"
		  "comm_why",
		  story_count(MEMMON_REC_FORK) + story_count(MEMMON_REC_EXEC) +
		  story_count(MEMMON_REC_EXIT));
	for (i = 1; i < c->nr; i++) {
		char **f = c->rows[i];

		if (!strcmp(f[4], "exec"))
			assert_string_equal(f[8], "/usr/bin/t\xc3\xa9st");
		else if (!strcmp(f[4], "exit"))
			assert_non_null(strstr(f[9], "exited"));
		else if (strcmp(f[4], "fork"))
			fail_msg("lifecycle event %s", f[4]);
	}
	csv_free(c);

	c = table("marks.csv", "time_ns,cpu,tgid,tid,text", story_count(MEMMON_REC_MARK));
	for (i = 1, k = 0; i < c->nr; i++) {
		const struct story_rec *s = next_of(&k, MEMMON_REC_MARK);

		assert_int_equal(num(c->rows[i][0]), s->time_ns);
		assert_string_equal(c->rows[i][4], s->text == mark_hostile ?
				    hostile_clean : s->text);
	}
	csv_free(c);

	c = table("lost.csv", "time_ns,cpu,count,first_ns,last_ns",
		  story_count(MEMMON_REC_LOST));
	for (i = 1, k = 0; i < c->nr; i++) {
		const struct story_rec *s = next_of(&k, MEMMON_REC_LOST);

		assert_int_equal(num(c->rows[i][0]), s->time_ns);
		assert_int_equal(num(c->rows[i][2]), s->lost_count);
		assert_int_equal(num(c->rows[i][3]), s->lost_first);
	}
	csv_free(c);

	/* a window: fewer rows, all inside it (LOST aside) */
	run_ok(A("export", "--format", "csv", "--time", "1,2", "-o", csvdir, trace));
	c = table("marks.csv", "time_ns,cpu,tgid,tid,text", 1);
	assert_int_equal(num(c->rows[1][0]), STORY_T0 + 500000 + 1500 * STORY_STEP);
	csv_free(c);
}

static void test_errors(void **state)
{
	char flipped[160], notdir[200], malformed[160];
	size_t len, i;
	char *buf = story_slurp(trace, &len);
	const struct {
		const char *const *args;
		int code;
		const char *in_err;
	} c[] = {
		{ A("export", trace), 2, "missing --format" },
		{ A("export", "--format", "xml", trace), 2, "unknown format 'xml'" },
		{ A("export", "--format", "csv", trace), 2, "csv needs -o DIR" },
		{ A("export", "--format", "chrome"), 2, "missing TRACE" },
		{ A("export", "--format", "chrome", "--bogus", trace), 2,
		  "unknown or incomplete option '--bogus'" },
		{ A("export", "-f", "chrome", "--time", "x", trace), 2, "bad --time" },
		{ A("export", "-f", "chrome", "--min-duration", "-1", trace), 2,
		  "bad duration" },
		{ A("export", "-f", "chrome", "/nonexistent"), 1, "No such file" },
		{ A("export", "-f", "chrome", flipped), 1, "checksum mismatch" },
		{ A("export", "-f", "chrome", malformed), 1,
		  "a malformed record: type 3 (syscall) of 32 bytes" },
		{ A("export", "-f", "csv", "-o", csvdir, malformed), 1,
		  "a malformed record: type 3 (syscall) of 32 bytes" },
		{ A("export", "-f", "csv", "-o", flipped, flipped), 1, "" },
		{ A("export", "-f", "csv", "-o", notdir, trace), 1, "No such file" },
		{ A("export", "-f", "chrome", "-o", notdir, trace), 1, "No such file" },
		{ A("export", "-f", "chrome", "--time", "nosuch,", trace), 1,
		  "no marker 'nosuch'" },
	};

	(void)state;
	snprintf(flipped, sizeof(flipped), "%s/flipped.trace", dir);
	snprintf(notdir, sizeof(notdir), "%s/no/such/dir", dir);
	snprintf(malformed, sizeof(malformed), "%s/malformed.trace", dir);
	story_write_malformed(malformed);
	buf[len / 2] ^= 0x08;
	{
		FILE *f = fopen(flipped, "wb");

		fwrite(buf, 1, len, f);
		fclose(f);
	}
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		run_memmon(&res, NULL, NULL, c[i].args);
		if (res.code != c[i].code || !strstr(res.err, c[i].in_err))
			fail_msg("case %zu: exit %d (want %d)\nstderr: %s", i,
				 res.code, c[i].code, res.err);
	}
	run_memmon(&res, NULL, NULL, A("export", "--help"));
	assert_int_equal(res.code, 0);
	assert_non_null(strstr(res.out, "--format"));
	unlink(flipped);
	free(buf);
}

/* Append one record of @size bytes to @buf at *@fill. */
static void *names_put(__u8 *buf, size_t *fill, __u16 type, size_t size,
		       __u64 t, __u32 tgid, __u32 tid)
{
	struct memmon_rec_header *h = (void *)(buf + *fill);

	size = (size + 7) & ~7UL;
	memset(h, 0, size);
	h->size = (__u32)size;
	h->type = type;
	h->time_ns = t;
	h->tgid = tgid;
	h->tid = tid;
	*fill += size;
	return h;
}

/*
 * Thread names: an exec's COMM names process 500 "prog", a rename names
 * its thread 501 "worker"; the AUXV record between them is for decoders
 * only. Chrome's metadata carries the names, the CSV a "comm" row each.
 */
static void test_names(void **state)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, wo, .nr_cpus = 1);
	static const char exe[] = "/usr/bin/prog";
	struct memmon_trace_writer *w;
	struct memmon_rec_exec *ex;
	struct memmon_rec_comm *cm;
	struct memmon_rec_auxv *av;
	__u8 buf[1024];
	size_t fill = 0, i, nprocess = 0, nworker = 0;
	char path[300], out[300], csv[sizeof(csvdir)];
	json_t *root, *evs, *e;
	struct csv *c;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/names.trace", dir);
	snprintf(out, sizeof(out), "%s/names.json", dir);
	snprintf(csv, sizeof(csv), "%s/names-csv", dir);
	ex = names_put(buf, &fill, MEMMON_REC_EXEC, sizeof(*ex) + sizeof(exe),
		       1000, 500, 500);
	ex->path_len = sizeof(exe) - 1;
	memcpy(ex->path, exe, sizeof(exe));
	cm = names_put(buf, &fill, MEMMON_REC_COMM, sizeof(*cm), 1001, 500, 500);
	cm->why = MEMMON_COMM_EXEC;
	strcpy(cm->comm, "prog");
	av = names_put(buf, &fill, MEMMON_REC_AUXV, sizeof(*av), 1002, 500, 500);
	av->phdr = 0x555555554040ULL;
	av->entry = 0x555555555000ULL;
	cm = names_put(buf, &fill, MEMMON_REC_COMM, sizeof(*cm), 1003, 500, 501);
	cm->why = MEMMON_COMM_RENAME;
	strcpy(cm->comm, "worker");
	w = memmon_trace_writer__open(path, &wo);
	assert_non_null(w);
	assert_int_equal(memmon_trace_writer__add_meta(w, "{\"start_ns\":1000}"), 0);
	assert_int_equal(memmon_trace_writer__add_chunk(w, 0, buf, fill), 0);
	assert_int_equal(memmon_trace_writer__close(w), 0);

	run_ok(A("export", "--format", "chrome", "-o", out, path));
	root = json_load_file(out, 0, NULL);
	assert_non_null(root);
	evs = json_object_get(root, "traceEvents");
	json_array_foreach(evs, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *arg = json_string_value(json_object_get(json_object_get(e, "args"),
								    "name"));
		json_int_t tid = json_integer_value(json_object_get(e, "tid"));

		if (!name || !arg)
			continue;
		if (!strcmp(name, "process_name") && !strcmp(arg, "prog"))
			nprocess++;
		if (!strcmp(name, "thread_name") && !strcmp(arg, "worker")) {
			assert_int_equal(tid, 501);
			nworker++;
		}
		/* the worker never names its process */
		if (!strcmp(name, "process_name"))
			assert_string_not_equal(arg, "worker");
	}
	json_decref(root);
	assert_true(nprocess >= 1);
	assert_int_equal(nworker, 1);

	run_ok(A("export", "--format", "csv", "-o", csv, path));
	snprintf(out, sizeof(out), "%s/lifecycle.csv", csv);
	f = fopen(out, "r");
	assert_non_null(f);
	fclose(f);
	/* table() reads csvdir: point it at this export for the check */
	{
		char saved[sizeof(csvdir)];

		memcpy(saved, csvdir, sizeof(saved));
		snprintf(csvdir, sizeof(csvdir), "%s", csv);
		c = table("lifecycle.csv", "time_ns,cpu,tgid,tid,event,child_tgid,"
			  "child_tid,thread,path,exit_status,exit_code,group,"
			  "peak_rss,peak_vm,comm,comm_why", 3);
		memcpy(csvdir, saved, sizeof(saved));
	}
	assert_string_equal(c->rows[1][4], "exec");
	assert_string_equal(c->rows[2][4], "comm");
	assert_string_equal(c->rows[2][14], "prog");
	assert_string_equal(c->rows[2][15], "exec");
	assert_string_equal(c->rows[3][4], "comm");
	assert_int_equal(num(c->rows[3][3]), 501);
	assert_string_equal(c->rows[3][14], "worker");
	assert_string_equal(c->rows[3][15], "rename");
	csv_free(c);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(trace, sizeof(trace), "%s/story.trace", dir);
	snprintf(outp, sizeof(outp), "%s/out.json", dir);
	snprintf(csvdir, sizeof(csvdir), "%s/csv", dir);
	story_write(trace, true);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chrome),
		cmocka_unit_test(test_chrome_filtered),
		cmocka_unit_test(test_chrome_fault_buckets),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
