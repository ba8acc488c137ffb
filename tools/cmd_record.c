// SPDX-License-Identifier: GPL-2.0
/*
 * memmon record: the watched processes' events into a trace file.
 *
 * It must keep up with the producers, so the work is split:
 *
 *   CPU c ring --> reader thread c (pinned to c) --+
 *                  peek, copy whole records into    |  wfcqueue of
 *                  a chunk buffer, release ([D]),   +--> filled chunks --> writer
 *                  note FORK/EXIT in the proctab    |   (wait-free         thread:
 *   CPU d ring --> reader thread d ----------------+    enqueue)          add_chunk()
 *
 *   main thread: progress line, child/live-process checks, Ctrl-C,
 *                --duration, SIGUSR1.
 *
 * Readers never block on the writer (enqueue is wait-free) nor on each
 * other; the writer is the only dequeuer, as __cds_wfcq_dequeue_blocking()
 * requires. On stop (processes gone, or a signal) the readers drain their
 * rings once more, the writer empties the queue, then the end metadata,
 * the index and the trailer are written: Ctrl-C leaves a complete file.
 *
 * With --max-size the output is a series of parts, each a complete file;
 * the writer thread alone closes one and opens the next, at a record
 * boundary of one CPU's stream. Each part accounts for its own stretch of
 * every CPU's stream (see part_end_meta()).
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <jansson.h>
#include <urcu/uatomic.h>
#include <urcu/wfcqueue.h>
#include <memmon/trace.h>
#include "builtin.h"
#include "stack_out.h"
#include "rec_rotate.h"

#define CHUNK_MAX	(1U << 20)	/* bytes per chunk, at most */
#define RECORD_MAX_BUILD_IDS	16384	/* files whose build-id the metadata keeps */
#define CHUNK_FLUSH	(256U << 10)	/* hand over once this full... */
#define CHUNK_AGE_NS	(500ULL * 1000 * 1000)	/* ...or this old */

struct chunk {
	struct cds_wfcq_node node;
	unsigned int cpu;
	size_t len;
	__u8 data[];
};

struct record;

/* One CPU's stream so far, as written: events, LOST counts, bytes. */
struct stream_pos {
	__u64 delivered;
	__u64 lost;
	__u64 bytes;
};

struct reader {
	struct record *rec;
	unsigned int cpu;
	pthread_t thread;
	bool started;
	struct chunk *cur;
	__u64 cur_since;
	unsigned long records;	/* uatomic: copied so far */
	int err;
	/* --overwrite: the last round done (uatomic, reader -> main), and
	 * the ring's overwritten count already put in a LOST record. */
	int done_gen;
	__u64 ow_reported;
};

/*
 * Synchronisation:
 *   qhead/qtail     wfcqueue: readers enqueue (wait-free, any number), the
 *                   writer alone dequeues.
 *   wake_fd         eventfd: readers post, the writer sleeps on it.
 *   stop_readers    uatomic, main -> readers; a reader that saw it before
 *                   an empty peek has drained its ring and exits.
 *   stop_writer     uatomic, main -> writer, set after the readers joined:
 *                   the writer empties the queue once more and exits.
 *   reader_failed, writer_err
 *                   uatomic, a thread -> main: stop early.
 *   readers[].records uatomic, a reader counts, main reads (progress).
 *   events, paths, w, part*, pos, part_pos
 *                   the writer thread's until it is joined, then main's
 *                   (main opens part 1 before the writer starts).
 *   snapshot        uatomic, main -> writer: close the part, open the next.
 *   mark_ns, after_mark  the writer's, as events, until it is joined.
 *   mark_seen       uatomic, writer -> main: the --until-mark MARK is
 *                   written.
 *   pt              RCU hash table, see proctab.c.
 */
struct record {
	const char *cmd;
	struct memmon_session *s;
	struct memmon_trace_writer *w;
	struct proctab *pt;
	struct memmon_paths *paths;
	/*
	 * build_ids: path -> hex GNU build-id (null: none readable), read
	 * when a record first names the file so that report can tell a file
	 * changed since; ids_lock: the writer (note_records) and the main
	 * thread (the attach-time maps) both add.
	 */
	json_t *build_ids;
	pthread_mutex_t ids_lock;
	unsigned int nr_cpus;
	struct reader *readers;
	struct cds_wfcq_head qhead;
	struct cds_wfcq_tail qtail;
	int wake_fd;			/* eventfd: readers -> writer */
	int stop_readers;		/* uatomic */
	int stop_writer;		/* uatomic */
	int reader_failed;		/* uatomic, readers -> main */
	pthread_t writer;
	int writer_err;
	unsigned long long events;	/* written, LOST records excluded */

	/* Parts: max_size 0 is one file, output itself. */
	const char *output;
	__u64 max_size;
	unsigned int keep;		/* --rotate; 0: keep every part */
	unsigned long part;		/* the open part's number */
	bool part_has_data;
	unsigned long long part_events;
	const char *start_meta;		/* every part begins with it */
	int level;
	__s64 rt_off;
	struct stream_pos *pos;		/* per CPU, since the start */
	struct stream_pos *part_pos;	/* per CPU, where the part began */
	int snapshot;			/* uatomic */
	/*
	 * --overwrite: the rings keep the newest events; readers copy them
	 * only when main asks (a new drain_gen, uatomic), with the session
	 * disabled so that what they read and what was overwritten are exact.
	 */
	bool overwrite;
	int drain_gen;
	const char *until_mark;
	size_t until_len;
	int mark_seen;			/* uatomic */
	__u64 mark_ns;			/* the mark's time, once seen */
	__u64 closed_bytes;		/* of the parts closed */
	unsigned long written_mb;	/* uatomic, writer -> main (progress) */
	__u64 *after_mark;		/* per CPU: events dropped, later than it */
};

static const char record_usage[] =
"usage: memmon record [-p PID[,PID...]] [-G CGROUP] [-f] [-e EVENTS] [-m RING_SIZE]\n"
"                     [-o FILE] [-z] [--no-loss[=MS]] [--duration TIME]\n"
"                     [--until-mark TEXT] [--max-size SIZE [--rotate N]]\n"
"                     [-- CMD [ARGS...]]\n"
"\n"
"  -p, --pid PIDS      watch these processes (comma-separated)\n"
"  -G, --cgroup DIR    record a cgroup v2's processes, its descendants' and\n"
"                      those that join later, with their children (DIR\n"
"                      absolute or under /sys/fs/cgroup); runs until stopped\n"
"  -f, --follow        follow children (fork/clone), recursively\n"
"  -e, --events LIST   what to record (default: all)\n"
"  -m, --ring-size N   per-CPU ring bytes, a power of two (e.g. 4M)\n"
"      --no-loss[=MS]  a recorded task whose events fill a ring waits for\n"
"                      room instead of losing them (at most MS, 1000)\n"
"  -o, --output FILE   the trace file (default: memmon.trace)\n"
"  -z, --compress      zstd-compress the chunks\n"
"      --duration TIME stop after TIME: seconds, or with an s, m or h suffix\n"
"      --until-mark TEXT  stop once a mark with exactly TEXT is recorded\n"
"                      ('memmon mark TEXT'); the mark is in the file\n"
"      --max-size SIZE write parts FILE.1, FILE.2, ... of at most SIZE\n"
"                      bytes of events each (K/M/G, binary; at least 16K);\n"
"                      each part is a complete trace file\n"
"      --rotate N      with --max-size: keep only the newest N parts\n"
"      --overwrite     a flight recorder: the rings keep the newest events,\n"
"                      written out only on SIGUSR1 (part FILE.N) and at\n"
"                      the end (the last part); what the rings wrote over\n"
"                      is counted lost, exactly, in LOST records\n"
"  -g, --call-graph[=[fp,]DEPTH]  user call stacks by frame pointers, DEPTH\n"
"                      frames (8) beyond the call site\n"
"      --fault-stacks  faults carry a call stack too\n"
"  -- CMD              run CMD under the watch from its first instruction\n"
"\n"
"Stops when the watched processes have exited, on Ctrl-C, after\n"
"--duration or at the --until-mark mark; the file is complete either way.\n"
"With --max-size, SIGUSR1 closes the current part now (a readable\n"
"snapshot) and recording goes on in the next. Read a file with\n"
"'memmon report FILE'.\n";

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void wake_writer(struct record *r)
{
	eventfd_write(r->wake_fd, 1);
}

static void hand_over(struct reader *rd)
{
	struct chunk *c = rd->cur;

	if (!c || !c->len)
		return;
	rd->cur = NULL;
	cds_wfcq_node_init(&c->node);
	cds_wfcq_enqueue(&rd->rec->qhead, &rd->rec->qtail, &c->node);
	wake_writer(rd->rec);
}

/* A current chunk to copy into: 0 or -ENOMEM. */
static int chunk_get(struct reader *rd)
{
	if (rd->cur)
		return 0;
	rd->cur = malloc(sizeof(*rd->cur) + CHUNK_MAX);
	if (!rd->cur)
		return -ENOMEM;
	rd->cur->cpu = rd->cpu;
	rd->cur->len = 0;
	rd->cur_since = now_ns();
	return 0;
}

/* Copy what the ring holds into the current chunk. Returns bytes copied. */
static ssize_t drain_once(struct reader *rd)
{
	struct record *r = rd->rec;
	const void *p;
	ssize_t len;
	size_t off;

	if (chunk_get(rd))
		return -ENOMEM;
	len = memmon_session__peek_cpu(r->s, rd->cpu, CHUNK_MAX - rd->cur->len, &p);
	if (len == -ENOBUFS) {		/* no room for the next record */
		if (!rd->cur->len)
			return -EMSGSIZE;	/* a record larger than a chunk */
		hand_over(rd);
		return 1;
	}
	if (len <= 0)
		return len;
	memcpy(rd->cur->data + rd->cur->len, p, (size_t)len);
	memmon_session__release_cpu(r->s, rd->cpu, (size_t)len);
	/* Lifecycle bookkeeping on our copy. */
	for (off = 0; off < (size_t)len;) {
		const struct memmon_rec_header *h =
			(const void *)(rd->cur->data + rd->cur->len + off);

		if (h->type == MEMMON_REC_FORK || h->type == MEMMON_REC_EXIT)
			proctab_on_record(r->pt, h);
		uatomic_inc(&rd->records);
		off += h->size;
	}
	rd->cur->len += (size_t)len;
	return len;
}

/*
 * --overwrite: one round of a reader, the session disabled by main. The
 * events the ring wrote over since the last round become a LOST record
 * ahead of what the ring still holds (with the time of the first of
 * those, so the stream stays in time order), then the ring is copied.
 */
static int overwrite_round(struct reader *rd)
{
	struct memmon_rec_lost l = {
		.hdr = { .size = sizeof(l), .type = MEMMON_REC_LOST,
			 .cpu = (__u16)rd->cpu },
	};
	struct record *r = rd->rec;
	const struct memmon_rec_header *first;
	const void *p;
	__u64 ow;
	ssize_t n;

	if (!memmon_session__ring_overwritten(r->s, rd->cpu, &ow) &&
	    ow > rd->ow_reported) {
		l.count = ow - rd->ow_reported;
		l.hdr.time_ns = now_ns();
		n = memmon_session__peek_cpu(r->s, rd->cpu, CHUNK_MAX, &p);
		if (n > 0) {
			first = p;
			l.hdr.time_ns = first->time_ns;
		}
		/* Each round ends with hand_over(): the chunk is new or empty. */
		if (chunk_get(rd))
			return -ENOMEM;
		memcpy(rd->cur->data + rd->cur->len, &l, sizeof(l));
		rd->cur->len += sizeof(l);
		rd->ow_reported = ow;
	}
	do
		n = drain_once(rd);
	while (n > 0);
	hand_over(rd);
	return n < 0 ? (int)n : 0;
}

/*
 * The end of a recording, readers joined: a second DISABLE writes the
 * losses that found a ring full at the first (the rings are drained now),
 * and what the kernel still could not write (an older kernel) becomes a
 * LOST record here, so that the file alone accounts for every event.
 */
static int finish_losses(struct record *r)
{
	struct memmon_rec_lost l = {
		.hdr = { .size = sizeof(l), .type = MEMMON_REC_LOST },
	};
	struct reader *rd;
	__u64 pending;
	unsigned int c;
	ssize_t n;

	memmon_session__disable(r->s);
	for (c = 0; c < r->nr_cpus; c++) {
		rd = &r->readers[c];
		do
			n = drain_once(rd);
		while (n > 0);
		if (n < 0)
			return (int)n;
		if (!memmon_session__ring_stats(r->s, c, NULL, &pending) &&
		    pending) {
			if (rd->cur->len + sizeof(l) > CHUNK_MAX)
				hand_over(rd);
			if (!rd->cur && drain_once(rd) < 0)
				return -ENOMEM;
			l.hdr.cpu = (__u16)c;
			l.hdr.time_ns = now_ns();
			l.count = pending;
			memcpy(rd->cur->data + rd->cur->len, &l, sizeof(l));
			rd->cur->len += sizeof(l);
		}
		hand_over(rd);
		free(rd->cur);
		rd->cur = NULL;
	}
	return 0;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct record *r = rd->rec;
	struct pollfd pfd = { .fd = memmon_session__fd(r->s), .events = POLLIN };
	cpu_set_t set;
	ssize_t n;
	bool stopping = false;

	/* On its CPU, a reader shares that CPU's cache with the producer. */
	CPU_ZERO(&set);
	CPU_SET(rd->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	proctab_thread_online();
	for (;;) {
		stopping = uatomic_read(&r->stop_readers);
		if (r->overwrite) {
			int gen = uatomic_read(&r->drain_gen);

			if (stopping || gen != uatomic_read(&rd->done_gen)) {
				n = overwrite_round(rd);
				if (n < 0) {
					rd->err = (int)n;
					uatomic_set(&r->reader_failed, 1);
					break;
				}
				/* The chunks are queued before main learns it. */
				cmm_smp_wmb();
				uatomic_set(&rd->done_gen, gen);
				if (stopping)
					break;
			}
			usleep(5000);
			continue;
		}
		n = drain_once(rd);
		if (n < 0) {
			rd->err = (int)n;
			uatomic_set(&r->reader_failed, 1);
			break;
		}
		if (rd->cur && (rd->cur->len >= CHUNK_FLUSH ||
				(rd->cur->len && now_ns() - rd->cur_since > CHUNK_AGE_NS)))
			hand_over(rd);
		if (n > 0)
			continue;
		/* Empty, and the stop was seen before this last look: done. */
		if (stopping)
			break;
		if (poll(&pfd, 1, 100) > 0)
			usleep(1000);	/* maybe another CPU's data: don't spin */
	}
	hand_over(rd);
	free(rd->cur);
	rd->cur = NULL;
	proctab_thread_offline();
	return NULL;
}

static bool is_until_mark(const struct record *r,
			  const struct memmon_rec_header *h)
{
	const struct memmon_rec_mark *m = (const void *)h;

	return r->until_mark && h->type == MEMMON_REC_MARK &&
	       h->size >= sizeof(*m) && m->len == r->until_len &&
	       m->len <= h->size - sizeof(*m) &&
	       !memcmp(m->data, r->until_mark, r->until_len);
}

/* The build-id of path, once per path (bounded by the table's size). */
static void note_build_id(struct record *r, const char *path)
{
	__u8 id[SYM_BUILD_ID_MAX];
	char hex[2 * SYM_BUILD_ID_MAX + 1];
	int n, i;

	pthread_mutex_lock(&r->ids_lock);
	if (!r->build_ids || json_object_get(r->build_ids, path) ||
	    json_object_size(r->build_ids) >= RECORD_MAX_BUILD_IDS)
		goto out;
	n = sym_read_build_id(path, id);
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	json_object_set_new(r->build_ids, path, n > 0 ? json_string(hex) : json_null());
out:
	pthread_mutex_unlock(&r->ids_lock);
}

/* A PATH or EXEC record's path, NUL-terminated inside the record, or NULL. */
static const char *rec_path(const struct memmon_rec_header *h)
{
	const char *path;
	size_t fixed, len;

	if (h->type == MEMMON_REC_PATH) {
		const struct memmon_rec_path *pr = (const void *)h;

		fixed = sizeof(*pr);
		len = h->size >= fixed ? pr->path_len : 0;
		path = pr->path;
	} else if (h->type == MEMMON_REC_EXEC) {
		const struct memmon_rec_exec *e = (const void *)h;

		fixed = sizeof(*e);
		len = h->size >= fixed ? e->path_len : 0;
		path = e->path;
	} else {
		return NULL;
	}
	if (h->size < fixed || !len || len >= h->size - fixed || path[len])
		return NULL;
	return path;
}

/* Records just written (add_chunk checked their sizes). */
static void note_records(struct record *r, unsigned int cpu, const __u8 *p,
			 size_t len)
{
	struct stream_pos *sp = &r->pos[cpu];
	size_t off;

	for (off = 0; off < len;) {
		const struct memmon_rec_header *h = (const void *)(p + off);

		if (h->type == MEMMON_REC_PATH)
			memmon_paths__add_rec(r->paths, h);
		if (h->type == MEMMON_REC_PATH || h->type == MEMMON_REC_EXEC) {
			const char *path = rec_path(h);

			if (path)
				note_build_id(r, path);
		}
		if (h->type == MEMMON_REC_LOST) {
			if (h->size >= sizeof(struct memmon_rec_lost))
				sp->lost += ((const struct memmon_rec_lost *)h)->count;
		} else {
			r->events++;
			r->part_events++;
			sp->delivered++;
			sp->bytes += h->size;
		}
		off += h->size;
	}
}

/*
 * --until-mark: the recording ends at the mark. Once it is seen, the events
 * after it in its CPU's stream and those of a later time on the others
 * are left out of the file (in place, p is the writer's copy) and counted
 * in after_mark[], so that the accounting stays exact. LOST records stay.
 * Returns the new length.
 */
static size_t cut_after_mark(struct record *r, unsigned int cpu, __u8 *p,
			     size_t len)
{
	size_t off = 0, out = 0;

	while (off < len) {
		struct memmon_rec_header *h = (void *)(p + off);
		size_t sz = h->size;

		if (len - off < sizeof(*h) || sz < sizeof(*h) || sz > len - off)
			break;	/* add_chunk rejects what is left */
		if (r->mark_ns && h->type != MEMMON_REC_LOST &&
		    h->time_ns >= r->mark_ns) {
			r->after_mark[cpu]++;
		} else {
			if (out != off)
				memmove(p + out, p + off, sz);
			out += sz;
			h = (void *)(p + out - sz);
			if (!r->mark_ns && is_until_mark(r, h)) {
				/* the mark's own time, +1: it is kept */
				r->mark_ns = h->time_ns + 1;
				uatomic_set(&r->mark_seen, 1);
			}
		}
		off += sz;
	}
	if (off < len && out != off)
		memmove(p + out, p + off, len - off);
	return out + (len - off);
}

/* The longest prefix of whole records of p[0..len) of at most room bytes. */
static size_t fit_records(const __u8 *p, size_t len, __u64 room)
{
	size_t off = 0;

	while (off < len) {
		const struct memmon_rec_header *h = (const void *)(p + off);

		if (len - off < sizeof(*h) || h->size < sizeof(*h) ||
		    h->size > len - off || off + h->size > room)
			break;
		off += h->size;
	}
	return off;
}

static int path_to_json(void *ctx, __u64 dev, __u64 ino, const char *path);

/* m["build_ids"]: a copy, the writer may add meanwhile. */
static void add_build_ids(struct record *r, json_t *m)
{
	pthread_mutex_lock(&r->ids_lock);
	if (r->build_ids)
		json_object_set_new(m, "build_ids", json_deep_copy(r->build_ids));
	pthread_mutex_unlock(&r->ids_lock);
}

/*
 * m["maps"]: each -p process's /proc/PID/maps when watching began (what
 * it mapped before has no record), and the build-ids of its files.
 */
static void add_maps(struct record *r, const struct target *t, json_t *m)
{
	json_t *maps = json_object();
	int i;

	for (i = 0; maps && i < t->nr_pids; i++) {
		char name[64], line[4352], *buf = NULL;
		size_t len = 0;
		FILE *f, *o;

		snprintf(name, sizeof(name), "/proc/%d/maps", (int)t->pids[i]);
		f = fopen(name, "re");
		if (!f)
			continue;
		o = open_memstream(&buf, &len);
		while (o && fgets(line, sizeof(line), f)) {
			char *path = strchr(line, '/');

			fputs(line, o);
			if (path) {
				path[strcspn(path, "\n")] = '\0';
				note_build_id(r, path);
			}
		}
		fclose(f);
		if (o && !fclose(o)) {
			snprintf(name, sizeof(name), "%d", (int)t->pids[i]);
			json_object_set_new(maps, name, json_string(buf));
		}
		free(buf);
	}
	json_object_set_new(m, "maps", maps);
}

/* Per CPU, the events left out after the --until-mark mark. */
static json_t *after_mark_json(const struct record *r)
{
	json_t *a = json_array();
	unsigned int c;

	for (c = 0; c < r->nr_cpus; c++)
		json_array_append_new(a, json_integer((json_int_t)r->after_mark[c]));
	return a;
}

/*
 * What a part says at its start besides the recording's metadata: its
 * number and where each CPU's stream stood when it began (stream_before),
 * so that consecutive parts chain: stream_before + cpu_stats of part n ==
 * stream_before of part n + 1.
 */
static int part_start_meta(struct record *r)
{
	json_t *m = json_object(), *arr = json_array();
	unsigned int c;
	char *text;
	int err = -ENOMEM;

	for (c = 0; arr && c < r->nr_cpus; c++) {
		json_t *e = json_object();

		json_object_set_new(e, "produced", json_integer((json_int_t)
				    (r->pos[c].delivered + r->pos[c].lost)));
		json_object_set_new(e, "delivered", json_integer((json_int_t)r->pos[c].delivered));
		json_object_set_new(e, "lost", json_integer((json_int_t)r->pos[c].lost));
		json_array_append_new(arr, e);
	}
	json_object_set_new(m, "part", json_integer((json_int_t)r->part));
	json_object_set_new(m, "stream_before", arr);
	text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (text && memmon_trace_writer__add_meta(r->w, r->start_meta) >= 0 &&
	    memmon_trace_writer__add_meta(r->w, text) >= 0)
		err = 0;
	else if (text)
		err = -errno;
	free(text);
	return err;
}

/*
 * A part's end: its cpu_stats count its own stretch of each CPU's stream,
 * the events it holds (delivered) and the losses its LOST records report
 * (lost), produced being their sum; the paths are all those seen so far,
 * so that the part names files on its own. kernel, when not NULL, is the
 * kernel's counters at the end of the recording (the last part): there,
 * stream_before + cpu_stats (+ after_mark) == kernel, CPU by CPU.
 */
static int part_end_meta(struct record *r, bool interrupted,
			 const struct memmon_cpu_stats *kernel)
{
	json_t *m = json_object(), *arr = json_array(), *paths = json_array();
	json_t *k = kernel ? json_array() : NULL;
	unsigned int c;
	char *text;
	int err = -ENOMEM;

	for (c = 0; c < r->nr_cpus; c++) {
		json_t *e = json_object();
		__u64 d = r->pos[c].delivered - r->part_pos[c].delivered;
		__u64 l = r->pos[c].lost - r->part_pos[c].lost;

		json_object_set_new(e, "produced", json_integer((json_int_t)(d + l)));
		json_object_set_new(e, "delivered", json_integer((json_int_t)d));
		json_object_set_new(e, "lost", json_integer((json_int_t)l));
		json_object_set_new(e, "bytes", json_integer((json_int_t)
				    (r->pos[c].bytes - r->part_pos[c].bytes)));
		json_array_append_new(arr, e);
		if (!k)
			continue;
		e = json_object();
		json_object_set_new(e, "produced", json_integer((json_int_t)kernel[c].produced));
		json_object_set_new(e, "delivered", json_integer((json_int_t)kernel[c].delivered));
		json_object_set_new(e, "lost", json_integer((json_int_t)kernel[c].lost));
		json_array_append_new(k, e);
	}
	memmon_paths__for_each(r->paths, path_to_json, paths);
	json_object_set_new(m, "cpu_stats", arr);
	if (k)
		json_object_set_new(m, "kernel_cpu_stats", k);
	if (k && r->until_mark)
		json_object_set_new(m, "after_mark", after_mark_json(r));
	json_object_set_new(m, "paths", paths);
	add_build_ids(r, m);
	json_object_set_new(m, "end_ns", json_integer((json_int_t)now_ns()));
	json_object_set_new(m, "events", json_integer((json_int_t)r->part_events));
	json_object_set_new(m, "interrupted", json_boolean(interrupted));
	json_object_set_new(m, "last_part", json_boolean(kernel != NULL));
	text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (text && memmon_trace_writer__add_meta(r->w, text) >= 0)
		err = 0;
	else if (text)
		err = -errno;
	free(text);
	return err;
}

/* Opens part r->part + 1 (its metadata comes from part_start_meta()). */
static int part_open(struct record *r)
{
	LIBMEMMON_OPTS(memmon_trace_writer_opts, wo, .nr_cpus = r->nr_cpus,
		       .compress_level = r->level,
		       .realtime_offset_ns = r->rt_off);
	unsigned long old;
	char *path;

	path = rec_part_path(r->output, r->part + 1);
	if (!path)
		return -ENOMEM;
	r->w = memmon_trace_writer__open(path, &wo);
	if (!r->w) {
		int err = -errno;

		tool_err(r->cmd, "%s: %s", path, strerror(errno));
		free(path);
		return err;
	}
	free(path);
	r->part++;
	r->part_events = 0;
	r->part_has_data = false;
	memcpy(r->part_pos, r->pos, r->nr_cpus * sizeof(*r->pos));
	/* Only once the new part exists: at least keep parts stay. */
	old = rec_part_to_remove(r->part, r->keep);
	if (old) {
		path = rec_part_path(r->output, old);
		if (!path)
			return -ENOMEM;
		if (unlink(path) < 0 && errno != ENOENT)
			tool_err(r->cmd, "cannot remove %s: %s", path, strerror(errno));
		free(path);
	}
	return 0;
}

/* Writer thread: the open part complete, recording goes on in the next. */
static int next_part(struct record *r)
{
	int err = part_end_meta(r, false, NULL);

	r->closed_bytes += memmon_trace_writer__bytes(r->w);
	if (memmon_trace_writer__close(r->w) < 0 && !err)
		err = -errno;
	r->w = NULL;
	if (err)
		return err;
	err = part_open(r);
	if (!err)
		err = part_start_meta(r);
	return err;
}

/* Writer thread: a CPU's records into the part(s) they fit in. */
static int write_records(struct record *r, unsigned int cpu, __u8 *p,
			 size_t len)
{
	size_t n;
	int err;

	if (r->until_mark)
		len = cut_after_mark(r, cpu, p, len);
	while (len) {
		n = len;
		if (r->max_size) {
			__u64 used = memmon_trace_writer__bytes(r->w);

			n = fit_records(p, len, used < r->max_size ?
					r->max_size - used : 0);
			if (!n && r->part_has_data) {
				err = next_part(r);
				if (err)
					return err;
				continue;
			}
			/* A record alone larger than the room: a part of its own. */
			if (!n)
				n = fit_records(p, len, ((const struct memmon_rec_header *)p)->size);
			if (!n)
				return -EBADMSG;
		}
		err = memmon_trace_writer__add_chunk(r->w, cpu, p, n);
		if (err)
			return err;
		note_records(r, cpu, p, n);
		r->part_has_data = true;
		/* main must not look at r->w: the writer swaps it. */
		uatomic_set(&r->written_mb, (unsigned long)((r->closed_bytes +
			    memmon_trace_writer__bytes(r->w)) >> 20));
		p += n;
		len -= n;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct record *r = arg;
	struct cds_wfcq_node *n;
	struct pollfd pfd = { .fd = r->wake_fd, .events = POLLIN };
	eventfd_t v;
	bool done;

	for (;;) {
		done = uatomic_read(&r->stop_writer);
		while ((n = __cds_wfcq_dequeue_blocking(&r->qhead, &r->qtail))) {
			struct chunk *c = caa_container_of(n, struct chunk, node);

			if (!r->writer_err) {
				int err = write_records(r, c->cpu, c->data, c->len);

				if (err)
					uatomic_set(&r->writer_err, err);
			}
			free(c);
		}
		/*
		 * After the queue: the snapshot holds what was handed over
		 * before it was asked for, which may have come in since the
		 * loop above found the queue empty.
		 */
		if (uatomic_xchg(&r->snapshot, 0) && !r->writer_err) {
			int err;

			while ((n = __cds_wfcq_dequeue_blocking(&r->qhead, &r->qtail))) {
				struct chunk *c = caa_container_of(n, struct chunk, node);

				err = r->writer_err ? 0 :
				      write_records(r, c->cpu, c->data, c->len);
				if (err)
					uatomic_set(&r->writer_err, err);
				free(c);
			}
			err = next_part(r);

			if (err)
				uatomic_set(&r->writer_err, err);
		}
		if (done)
			break;
		if (poll(&pfd, 1, 200) > 0)
			eventfd_read(r->wake_fd, &v);
	}
	return NULL;
}

static char *start_meta(struct record *r, struct target *t, int argc, char **argv,
			__u64 ring_size, unsigned int nr_cpus)
{
	json_t *m = json_object(), *a = json_array(), *p = json_array();
	struct utsname u;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		json_array_append_new(a, json_string(argv[i]));
	for (i = 0; i < t->nr_pids; i++)
		json_array_append_new(p, json_integer(t->pids[i]));
	if (t->child > 0)
		json_array_append_new(p, json_integer(t->child));
	json_object_set_new(m, "memmon_argv", a);
	json_object_set_new(m, "pids", p);
	json_object_set_new(m, "follow_children", json_boolean(t->follow));
	if (t->cgroup)
		json_object_set_new(m, "cgroup", json_string(t->cgroup));
	if (!uname(&u)) {
		json_object_set_new(m, "kernel_release", json_string(u.release));
		json_object_set_new(m, "hostname", json_string(u.nodename));
		json_object_set_new(m, "machine", json_string(u.machine));
	}
	json_object_set_new(m, "nr_cpus", json_integer(nr_cpus));
	json_object_set_new(m, "clock", json_string("monotonic"));
	json_object_set_new(m, "ring_size", json_integer((json_int_t)ring_size));
	json_object_set_new(m, "start_ns", json_integer((json_int_t)now_ns()));
	add_maps(r, t, m);
	add_build_ids(r, m);
	s = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	return s;
}

static int path_to_json(void *ctx, __u64 dev, __u64 ino, const char *path)
{
	json_t *e = json_object();

	json_object_set_new(e, "dev", json_integer((json_int_t)dev));
	json_object_set_new(e, "ino", json_integer((json_int_t)ino));
	json_object_set_new(e, "path", json_string(path));
	json_array_append_new(ctx, e);
	return 0;
}

/* Lost counts per CPU: GET_STATS, or the ring pages if that fails. */
static void end_meta(struct record *r, bool interrupted, unsigned long long *lost_total,
		     char **text)
{
	struct memmon_cpu_stats *st = calloc(r->nr_cpus, sizeof(*st));
	json_t *m = json_object(), *arr = json_array(), *paths = json_array();
	unsigned int c;
	int got = -1;

	*lost_total = 0;
	if (st)
		got = memmon_session__stats(r->s, st, r->nr_cpus);
	for (c = 0; st && c < r->nr_cpus; c++) {
		json_t *e = json_object();

		if (got < 0)
			memmon_session__ring_stats(r->s, c, &st[c], NULL);
		json_object_set_new(e, "produced", json_integer((json_int_t)st[c].produced));
		json_object_set_new(e, "delivered", json_integer((json_int_t)st[c].delivered));
		json_object_set_new(e, "lost", json_integer((json_int_t)st[c].lost));
		json_object_set_new(e, "bytes", json_integer((json_int_t)st[c].bytes));
		json_array_append_new(arr, e);
		*lost_total += st[c].lost;
	}
	memmon_paths__for_each(r->paths, path_to_json, paths);
	json_object_set_new(m, "cpu_stats", arr);
	json_object_set_new(m, "paths", paths);
	add_build_ids(r, m);
	json_object_set_new(m, "end_ns", json_integer((json_int_t)now_ns()));
	json_object_set_new(m, "events", json_integer((json_int_t)r->events));
	json_object_set_new(m, "interrupted", json_boolean(interrupted));
	if (r->until_mark)
		json_object_set_new(m, "after_mark", after_mark_json(r));
	*text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (*lost_total) {
		fprintf(stderr, "memmon record: LOST %llu events:", *lost_total);
		for (c = 0; c < r->nr_cpus; c++)
			if (st[c].lost)
				fprintf(stderr, " cpu%u=%llu", c,
					(unsigned long long)st[c].lost);
		fprintf(stderr, "\nmemmon record: the rings overflowed; use a "
			"bigger -m (now %llu bytes per CPU)\n",
			(unsigned long long)memmon_session__info(r->s)->ring_size);
	}
	free(st);
}

static void progress(struct record *r, bool tty)
{
	unsigned long long ev = 0, lost = 0;
	struct memmon_cpu_stats st;
	unsigned int c;

	if (!tty)
		return;
	for (c = 0; c < r->nr_cpus; c++) {
		ev += uatomic_read(&r->readers[c].records);
		if (!memmon_session__ring_stats(r->s, c, &st, NULL))
			lost += st.lost;
	}
	fprintf(stderr, "\rmemmon record: %llu events, %lu MiB, %llu lost   ",
		ev, uatomic_read(&r->written_mb), lost);
}

/*
 * --overwrite, on SIGUSR1: pause the producers (DISABLE waits for those in
 * flight, as perf pauses an overwrite buffer to read it), have every
 * reader copy its ring, cut the part after what they queued, resume.
 * Events made meanwhile are not produced for the session: nothing to lose.
 */
static int overwrite_snapshot(struct record *r)
{
	unsigned int c, done;
	int gen, err;

	err = memmon_session__disable(r->s);
	if (err)
		return tool_err(r->cmd, "pausing for a snapshot: %s", strerror(-err));
	gen = uatomic_add_return(&r->drain_gen, 1);
	do {
		for (c = done = 0; c < r->nr_cpus; c++)
			done += uatomic_read(&r->readers[c].done_gen) == gen;
		if (done < r->nr_cpus)
			usleep(2000);
	} while (done < r->nr_cpus && !uatomic_read(&r->reader_failed));
	/* Pairs with the readers' cmm_smp_wmb(): their chunks are queued. */
	cmm_smp_rmb();
	uatomic_set(&r->snapshot, 1);
	wake_writer(r);
	err = memmon_session__enable(r->s);
	if (err)
		return tool_err(r->cmd, "resuming after a snapshot: %s",
				strerror(-err));
	return 0;
}

static volatile sig_atomic_t snapshot_req;

static void on_usr1(int sig)
{
	(void)sig;
	snapshot_req = 1;
}

/* The end of the last part, with the kernel's final counters. */
static void last_part_meta(struct record *r, bool interrupted)
{
	struct memmon_cpu_stats *st = calloc(r->nr_cpus, sizeof(*st));
	unsigned int c;
	int err;

	if (!st || !r->w)
		goto out;
	if (memmon_session__stats(r->s, st, r->nr_cpus) < 0)
		for (c = 0; c < r->nr_cpus; c++)
			memmon_session__ring_stats(r->s, c, &st[c], NULL);
	err = part_end_meta(r, interrupted, st);
	if (err)
		tool_err(r->cmd, "%s.%lu: writing metadata: %s", r->output,
			 r->part, strerror(-err));
out:
	free(st);
}

static __s64 realtime_offset(void)
{
	struct timespec re, mo;

	clock_gettime(CLOCK_REALTIME, &re);
	clock_gettime(CLOCK_MONOTONIC, &mo);
	return ((__s64)re.tv_sec - mo.tv_sec) * 1000000000LL +
	       ((__s64)re.tv_nsec - mo.tv_nsec);
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "follow", no_argument, NULL, 'f' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "events", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "ring-size", required_argument, NULL, 'm' },
		{ "compress", no_argument, NULL, 'z' },
		{ "no-loss", optional_argument, NULL, 'L' },
		{ "duration", required_argument, NULL, 'D' },
		{ "until-mark", required_argument, NULL, 'U' },
		{ "max-size", required_argument, NULL, 'S' },
		{ "rotate", required_argument, NULL, 'R' },
		{ "overwrite", no_argument, NULL, 'O' },
		{ "call-graph", optional_argument, NULL, 'g' },
		{ "fault-stacks", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "record", *output = "memmon.trace";
	struct target t = { .go_fd = -1 };
	struct record r = { .cmd = cmd, .wake_fd = -1 };
	__u64 ring_size = 0;
	unsigned int wait_ms = 0;
	int opt, ret = 1, status = 0, level = 0, err, fin_err = 0;
	unsigned int c;
	bool child_done = false, tty = isatty(2), writer_started = false;
	unsigned long long lost = 0;
	char *meta = NULL;
	sigset_t block, old;
	time_t last_reap = 0;
	__u64 duration_ns = 0, started = 0;
	bool rotate_set = false, usr1_warned = false;
	const char *why = NULL;
	struct sigaction sa;
	struct stack_opts stack = { 0 };

	t.ev_mask = (1ULL << MEMMON_EV__COUNT) - 1;
	t.ev_syscalls = (1ULL << MEMMON_SYS__COUNT) - 1;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+p:G:fe:o:m:zgh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			ret = target_add_pids(cmd, &t, optarg);
			if (ret)
				goto out_target;
			break;
		case 'G':
			ret = target_add_cgroup(cmd, &t, optarg);
			if (ret)
				goto out_target;
			break;
		case 'f':
			t.follow = true;
			break;
		case 'e':
			ret = tool_parse_events(cmd, optarg, &t.ev_mask, &t.ev_syscalls);
			if (ret)
				goto out_target;
			break;
		case 'o':
			output = optarg;
			break;
		case 'g':
			ret = stack_parse_call_graph(cmd, optarg, &stack);
			if (ret)
				goto out_target;
			ret = 1;
			break;
		case 'F':
			stack.fault_stacks = true;
			break;
		case 'z':
			level = 3;
			break;
		case 'L':
			ret = tool_parse_no_loss(cmd, optarg, &wait_ms);
			if (ret)
				goto out_target;
			break;
		case 'D':
			if (rec_parse_duration(optarg, &duration_ns)) {
				ret = tool_usage_err(cmd, "bad duration '%s': seconds, "
					"or a number with s, m or h (e.g. 30, 90s, 15m, "
					"2h), at most 1000 days", optarg);
				goto out_target;
			}
			break;
		case 'U':
			if (!*optarg || strlen(optarg) > MEMMON_MARK_MAX) {
				ret = tool_usage_err(cmd, "bad --until-mark text: 1 "
					"to %d bytes", MEMMON_MARK_MAX);
				goto out_target;
			}
			r.until_mark = optarg;
			r.until_len = strlen(optarg);
			break;
		case 'S':
			if (rec_parse_max_size(optarg, &r.max_size)) {
				ret = tool_usage_err(cmd, "bad max size '%s': bytes with "
					"an optional K, M or G (binary), at least 16K",
					optarg);
				goto out_target;
			}
			break;
		case 'O':
			r.overwrite = true;
			break;
		case 'R':
			if (rec_parse_rotate(optarg, &r.keep)) {
				ret = tool_usage_err(cmd, "bad rotate count '%s': the "
					"number of parts to keep, 1 to %u", optarg,
					REC_ROTATE_MAX);
				goto out_target;
			}
			rotate_set = true;
			break;
		case 'm':
			if (tool_parse_size(optarg, &ring_size) ||
			    !ring_size || (ring_size & (ring_size - 1))) {
				ret = tool_usage_err(cmd, "bad ring size '%s': a "
					"power of two in bytes, e.g. 1M, 4M", optarg);
				goto out_target;
			}
			break;
		case 'h':
			fputs(record_usage, stdout);
			ret = tool_close_stdout(cmd);
			goto out_target;
		default:
			ret = tool_usage_err(cmd, "unknown or incomplete option '%s'",
					     argv[optind - 1]);
			goto out_target;
		}
	}
	if (optind < argc)
		t.cmd_argv = &argv[optind];
	if (!t.cmd_argv && !t.nr_pids && !t.cgroup) {
		ret = tool_usage_err(cmd, "nothing to record: give -p PID, -G CGROUP or -- CMD");
		goto out_target;
	}
	if (r.overwrite && r.until_mark) {
		ret = tool_usage_err(cmd, "--overwrite and --until-mark: a flight "
				     "recorder reads its rings only on SIGUSR1 "
				     "and at the end");
		goto out_target;
	}
	if (r.overwrite && wait_ms) {
		ret = tool_usage_err(cmd, "--overwrite and --no-loss: a flight "
				     "recorder drops the oldest events by design");
		goto out_target;
	}
	/* A flight recorder writes a part per snapshot, however small. */
	if (r.overwrite && !r.max_size)
		r.max_size = UINT64_MAX;
	if (rotate_set && !r.max_size) {
		ret = tool_usage_err(cmd, "--rotate needs --max-size");
		goto out_target;
	}
	if (r.until_mark && !(t.ev_mask & (1ULL << MEMMON_EV_MARK))) {
		ret = tool_usage_err(cmd, "--until-mark needs the mark events "
				     "(-e ...,mark)");
		goto out_target;
	}
	r.output = output;
	r.level = level;
	r.rt_off = realtime_offset();
	ret = 1;
	r.pt = proctab_new(t.follow);
	r.paths = memmon_paths__new();
	r.build_ids = json_object();
	pthread_mutex_init(&r.ids_lock, NULL);
	r.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!r.pt || !r.paths || r.wake_fd < 0) {
		tool_err(cmd, "out of memory");
		goto out_free;
	}
	proctab_thread_online();
	r.s = tool_open_session_policy(cmd, ring_size, r.overwrite ?
				       MEMMON_FULL_OVERWRITE : wait_ms ?
				       MEMMON_FULL_WAIT : MEMMON_FULL_DROP_NEW,
				       wait_ms);
	if (!r.s)
		goto out_offline;
	if (stack_session_setup(cmd, r.s, &stack))
		goto out_session;
	r.nr_cpus = memmon_session__nr_cpus(r.s);
	/* Before part 1 exists: whoever sees it may send SIGUSR1. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	r.pos = calloc(r.nr_cpus, sizeof(*r.pos));
	r.part_pos = calloc(r.nr_cpus, sizeof(*r.part_pos));
	r.after_mark = calloc(r.nr_cpus, sizeof(*r.after_mark));
	if (!r.pos || !r.part_pos || !r.after_mark) {
		tool_err(cmd, "out of memory");
		goto out_session;
	}
	if (r.max_size) {
		if (part_open(&r))
			goto out_session;
	} else {
		LIBMEMMON_OPTS(memmon_trace_writer_opts, wo, .nr_cpus = r.nr_cpus,
			       .compress_level = level,
			       .realtime_offset_ns = r.rt_off);

		r.w = memmon_trace_writer__open(output, &wo);
		if (!r.w) {
			tool_err(cmd, "%s: %s", output, strerror(errno));
			goto out_session;
		}
	}
	if (t.cmd_argv && target_spawn(cmd, &t))
		goto out_writer;
	tool_catch_signals();
	ret = target_start(cmd, &t, r.s);
	if (ret) {
		target_abort(&t);
		goto out_writer;
	}
	ret = 1;
	meta = start_meta(&r, &t, argc, argv, memmon_session__info(r.s)->ring_size,
			  r.nr_cpus);
	r.start_meta = meta;
	if (!meta || (r.max_size ? part_start_meta(&r) :
		      memmon_trace_writer__add_meta(r.w, meta)) < 0) {
		tool_err(cmd, "%s: writing metadata: %s", output, strerror(errno));
		goto out_disable;
	}
	if (t.child > 0)
		proctab_add(r.pt, t.child);
	for (c = 0; c < (unsigned int)t.nr_pids; c++)
		proctab_add(r.pt, t.pids[c]);
	if (target_rescan(cmd, &t, r.s, r.pt))
		goto out_disable;

	/* Threads: signals go to the main thread only. */
	cds_wfcq_init(&r.qhead, &r.qtail);
	r.readers = calloc(r.nr_cpus, sizeof(*r.readers));
	if (!r.readers) {
		tool_err(cmd, "out of memory");
		goto out_disable;
	}
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = pthread_create(&r.writer, NULL, writer_main, &r);
	writer_started = !err;
	for (c = 0; !err && c < r.nr_cpus; c++) {
		r.readers[c].rec = &r;
		r.readers[c].cpu = c;
		err = pthread_create(&r.readers[c].thread, NULL, reader_main,
				     &r.readers[c]);
		r.readers[c].started = !err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		tool_err(cmd, "cannot start threads: %s", strerror(err));
	else
		/*
		 * Only now, with every reader waiting on its ring, does the
		 * command run: on a busy or single CPU it would otherwise
		 * fill the rings while this thread writes the metadata and
		 * starts the threads (events lost, then a burst of draining
		 * in the middle of its run).
		 */
		target_go(&t);
	started = now_ns();

	while (!err && !tool_stop) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		progress(&r, tty);
		if (snapshot_req) {
			snapshot_req = 0;
			if (r.overwrite) {
				if (overwrite_snapshot(&r))
					break;
			} else if (r.max_size) {
				uatomic_set(&r.snapshot, 1);
				wake_writer(&r);
			} else if (!usr1_warned) {
				usr1_warned = true;
				fprintf(stderr, "memmon record: SIGUSR1 ignored: "
					"snapshots need --max-size\n");
			}
		}
		if (duration_ns && now_ns() - started >= duration_ns) {
			why = "duration reached";
			break;
		}
		if (uatomic_read(&r.mark_seen)) {
			why = "mark recorded";
			break;
		}
		if (t.child > 0 && !child_done &&
		    waitpid(t.child, &status, WNOHANG) == t.child) {
			child_done = true;
			proctab_exited(r.pt, t.child);
		}
		if (time(NULL) != last_reap) {
			last_reap = time(NULL);
			proctab_reap_gone(r.pt, child_done ? 0 : t.child);
		}
		if (uatomic_read(&r.writer_err) || uatomic_read(&r.reader_failed))
			break;
		/* A cgroup's newcomers, at the loop's pace; it may be empty. */
		if (t.cgroup) {
			if (target_rescan(cmd, &t, r.s, r.pt)) {
				err = 1;
				break;
			}
		} else if (proctab_live(r.pt) == 0) {
			break;
		}
	}
	/*
	 * Stop the producers (DISABLE also writes each CPU's pending loss
	 * where it fits), the readers drain once more, then the rest of the
	 * losses; the writer empties the queue last.
	 */
	memmon_session__disable(r.s);
	uatomic_set(&r.stop_readers, 1);
	for (c = 0; c < r.nr_cpus; c++)
		if (r.readers[c].started)
			pthread_join(r.readers[c].thread, NULL);
	if (!err)
		fin_err = finish_losses(&r);
	uatomic_set(&r.stop_writer, 1);
	wake_writer(&r);
	if (writer_started)
		pthread_join(r.writer, NULL);
	if (tty)
		fprintf(stderr, "\n");
	ret = 0;
	for (c = 0; c < r.nr_cpus; c++)
		if (r.readers[c].err) {
			ret = tool_err(cmd, "reading cpu %u: %s", c,
				       strerror(-r.readers[c].err));
			break;
		}
	if (fin_err < 0)
		ret = tool_err(cmd, "reading the last records: %s",
			       strerror(-fin_err));
	if (r.writer_err)
		ret = tool_err(cmd, "%s: %s", output, strerror(-r.writer_err));
	if (err)
		ret = 1;
out_disable:
	target_abort(&t);	/* a command that never got going: killed */
	memmon_session__disable(r.s);
	free(meta);
	meta = NULL;
	r.start_meta = NULL;
	end_meta(&r, tool_stop, &lost, &meta);
	if (r.max_size)
		last_part_meta(&r, tool_stop);
	else if (meta)
		memmon_trace_writer__add_meta(r.w, meta);
	if (t.child > 0 && !child_done) {
		/* Stopped before the command ended: it ends too. */
		if (tool_stop || why)
			kill(t.child, SIGTERM);
		waitpid(t.child, &status, 0);
	}
out_writer:
	if (memmon_trace_writer__close(r.w) < 0 && r.w)
		ret = tool_err(cmd, "%s: %s", output, strerror(errno));
	else if (!ret && r.max_size)
		fprintf(stderr, "memmon record: %llu events written to %s.%lu..%s.%lu, "
			"kept from %s.%lu%s%s%s\n", r.events, output, 1UL, output,
			r.part, output, r.part - (r.keep && r.part > r.keep ?
						  r.keep : r.part) + 1,
			tool_stop ? " (interrupted)" : "", why ? ": " : "",
			why ? why : "");
	else if (!ret)
		fprintf(stderr, "memmon record: %llu events written to %s%s%s%s\n",
			r.events, output, tool_stop ? " (interrupted)" : "",
			why ? ": " : "", why ? why : "");
	r.w = NULL;
out_session:
	memmon_session__close(r.s);
out_offline:
	free(r.readers);
	free(r.pos);
	free(r.part_pos);
	free(r.after_mark);
	free(meta);
	proctab_free(r.pt);
	r.pt = NULL;
	proctab_thread_offline();
out_free:
	proctab_free(r.pt);
	memmon_paths__free(r.paths);
	json_decref(r.build_ids);
	pthread_mutex_destroy(&r.ids_lock);
	if (r.wake_fd >= 0)
		close(r.wake_fd);
out_target:
	target_free(&t);
	return ret;
}
