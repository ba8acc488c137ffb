// SPDX-License-Identifier: GPL-2.0
/*
 * memmon trace: a live, strace-like text (or JSON lines) stream of the
 * watched processes' memory events, merged across CPUs in time order.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "builtin.h"
#include "rec_filter.h"
#include "stack_out.h"
#include "rec_queue.h"
#include "trace_summary.h"

#define TRACE_HOLDBACK_NS	(5 * 1000 * 1000)	/* see consume_opts */
/*
 * The records drained but not yet formatted: up to TRACE_QUEUE_MAX batches
 * of TRACE_QUEUE_BATCH bytes (256 MiB, allocated as a storm needs them;
 * the fastest storm in `make bench` peaks near 30 MiB). Past that the
 * drain waits for the formatter and a full ring loses, counted, as before.
 */
#define TRACE_QUEUE_BATCH	(1U << 20)
#define TRACE_QUEUE_MAX		256U

/*
 * Two threads. The caller's drains the rings (memmon_session__poll, the
 * merge, the process table that says when to stop) and pushes every record
 * into q; the formatter (format_thread) owns everything below "formatter",
 * decodes and writes. A storm fills rings at the drain's pace, a hundred
 * times the decoder's: the queue holds the difference, so the rings do not.
 */
struct trace_ctx {
	struct rec_queue *q;
	struct proctab *pt;
	pthread_t formatter;
	bool formatter_running;
	/* formatter */
	FILE *out;
	bool json;
	struct memmon_format_opts fopts;
	struct memmon_paths *paths;
	struct symbolizer *sym;	/* the formatter's; every record feeds it */
	struct stack_opts stack;
	__u64 show_mask;
	__u64 show_sys;
	struct rec_filter f;	/* --failed, --min-duration, --faults */
	struct ts_state ts;
	bool records;		/* print the records (not with -c alone) */
	bool summary;		/* -c, -C */
	struct sys_summary sum;
	unsigned long long events;
	int werr;		/* read by the caller after the join */
};

static const char trace_usage[] =
"usage: memmon trace [-p PID[,PID...]] [-G CGROUP] [-f] [-e EVENTS] [-o FILE]\n"
"                    [--json] [-m RING_SIZE] [--no-loss[=MS]] [--failed]\n"
"                    [--min-duration D] [--faults LIST] [-r] [--ts STYLE]\n"
"                    [-c|-C] [-g|--call-graph[=[fp,]DEPTH]] [--fault-stacks]\n"
"                    [--no-symbols] [-- CMD [ARGS...]]\n"
"\n"
"  -p, --pid PIDS      watch these processes (comma-separated)\n"
"  -G, --cgroup DIR    watch a cgroup v2's processes, its descendants' and\n"
"                      those that join later, with their children (DIR\n"
"                      absolute or under /sys/fs/cgroup); runs until Ctrl-C\n"
"  -f, --follow        follow children (fork/clone), recursively\n"
"  -e, --events LIST   what to show (default: all); e.g. faults,mmap,munmap\n"
"  -o, --output FILE   write there instead of standard output\n"
"      --json          one JSON object per event (JSON lines)\n"
"      --failed        failed syscalls and faults only\n"
"      --min-duration D  syscalls and faults that took at least D (250us)\n"
"      --faults LIST   faults of these kinds and classes only: major, minor,\n"
"                      anon, file, shmem, swap, none, other (syscalls pass)\n"
"  -r                  seconds since the previous event, as strace -r\n"
"      --ts STYLE      timestamps: abs (wall clock, default), rel (since the\n"
"                      first event), delta (since the previous), none\n"
"  -c, --summary-only  only a summary at the end, as strace -c: per syscall\n"
"                      % time, seconds, usecs/call, calls, errors; faults by\n"
"                      class, minor and major (of the events the filters keep)\n"
"  -C, --summary       the events and the summary\n"
"  -m, --ring-size N   per-CPU ring bytes, a power of two (e.g. 4M)\n"
"      --no-loss[=MS]  a traced task whose events fill a ring waits for\n"
"                      room instead of losing them (at most MS, 1000)\n"
"  -g, --call-graph[=[fp,]DEPTH]  user call stacks by frame pointers, DEPTH\n"
"                      frames (8) beyond the call site; without it each\n"
"                      syscall still shows its call site\n"
"      --fault-stacks  faults carry a call stack too\n"
"      --no-symbols    call stacks as raw addresses\n"
"  -- CMD              run CMD under the watch from its first instruction\n"
"\n"
"Stops when the watched processes have exited (or on Ctrl-C). The output\n"
"ends with each CPU's account: events produced, delivered and lost; every\n"
"loss is also in the stream, as a LOST record where it happened.\n";

/* Which user-visible event a record belongs to; -1: always shown. */
static int rec_event(const struct memmon_rec_header *rec)
{
	switch (rec->type) {
	case MEMMON_REC_SYSCALL: return MEMMON_EV_SYSCALL;
	case MEMMON_REC_PATH: return MEMMON_EV_SYSCALL;
	case MEMMON_REC_FAULT: return MEMMON_EV_FAULT;
	case MEMMON_REC_RSS: return MEMMON_EV_RSS;
	case MEMMON_REC_FORK:
	case MEMMON_REC_EXEC:
	case MEMMON_REC_COMM:
	case MEMMON_REC_EXIT: return MEMMON_EV_LIFECYCLE;
	case MEMMON_REC_MARK: return MEMMON_EV_MARK;
	default: return -1;
	}
}

static int format_one(struct trace_ctx *c, const struct memmon_rec_header *rec);

/*
 * The formatter's, for each record in order. Every record feeds the
 * symboliser after it is printed: a stack is that of the call, in the
 * address space before the call's own change. A full model only bounds
 * what it learns: the trace goes on.
 */
static int format_rec(void *vctx, const struct memmon_rec_header *rec)
{
	struct trace_ctx *c = vctx;
	int ret = format_one(c, rec);

	sym_feed(c->sym, rec, c->paths);
	return ret;
}

static int format_one(struct trace_ctx *c, const struct memmon_rec_header *rec)
{
	int ev = rec_event(rec);

	memmon_paths__add_rec(c->paths, rec);
	if (ev >= 0 && !(c->show_mask & (1ULL << ev)))
		return 0;
	if (rec->type == MEMMON_REC_SYSCALL) {
		const struct memmon_rec_syscall *sc = memmon_rec__syscall(rec);

		if (sc && sc->sys < 64 && !(c->show_sys & (1ULL << sc->sys)))
			return 0;
	}
	/* PATH records feed the fd<path> decoding; text shows them there. */
	if (rec->type == MEMMON_REC_PATH && !c->json)
		return 0;
	if (!rec_filter_match(&c->f, rec))
		return 0;
	if (c->summary)
		summary_add(&c->sum, rec);
	if (!c->records)
		return 0;
	c->events++;
	if ((c->json ? stack_fprint_json(c->out, c->sym, rec, &c->fopts, c->stack.raw) :
		       ts_fprint(c->out, rec, &c->fopts, &c->ts)) < 0 ||
	    (!c->json && stack_fprint_text(c->out, c->sym, rec, c->stack.raw))) {
		c->werr = errno;	/* the stream's reason, e.g. EPIPE */
		return -EIO;
	}
	return 0;
}

/* The formatter has written everything it was given: out to the reader. */
static void format_idle(void *vctx)
{
	struct trace_ctx *c = vctx;

	fflush(c->out);
}

static void *format_thread(void *vctx)
{
	struct trace_ctx *c = vctx;
	long cnt = 0;

	rec_queue_consume(c->q, format_rec, format_idle, c, &cnt);
	return NULL;
}

/* The drain's, for each record in merged order: hand it to the formatter. */
static int trace_cb(void *vctx, const struct memmon_rec_header *rec)
{
	struct trace_ctx *c = vctx;
	int ret;

	proctab_on_record(c->pt, rec);
	ret = rec_queue_push(c->q, rec);
	if (ret == -ECANCELED)
		return -EIO;	/* the formatter's write error: c->werr */
	return ret;
}

static int formatter_start(struct trace_ctx *c)
{
	c->q = rec_queue_new(TRACE_QUEUE_BATCH, TRACE_QUEUE_MAX, 1);
	if (!c->q)
		return -ENOMEM;
	if (pthread_create(&c->formatter, NULL, format_thread, c)) {
		rec_queue_free(c->q);
		c->q = NULL;
		return -EAGAIN;
	}
	c->formatter_running = true;
	return 0;
}

/* Everything pushed is formatted and written when this returns. */
static void formatter_stop(struct trace_ctx *c)
{
	if (c->formatter_running) {
		rec_queue_close(c->q, 0);
		pthread_join(c->formatter, NULL);
		c->formatter_running = false;
	}
	rec_queue_free(c->q);
	c->q = NULL;
}

static __s64 realtime_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((__s64)r.tv_sec - m.tv_sec) * 1000000000LL +
	       ((__s64)r.tv_nsec - m.tv_nsec);
}

/* Lost events, loudly, per CPU. */
static void report_lost(const char *cmd, struct memmon_session *s)
{
	unsigned int n = memmon_session__nr_cpus(s), c;
	struct memmon_cpu_stats *st = calloc(n ? n : 1, sizeof(*st));
	unsigned long long total = 0;
	int got;

	if (!st)
		return;
	got = memmon_session__stats(s, st, n);
	for (c = 0; got > 0 && c < (unsigned int)got && c < n; c++)
		total += st[c].lost;
	if (total) {
		fprintf(stderr, "memmon %s: LOST %llu events:", cmd, total);
		for (c = 0; c < (unsigned int)got && c < n; c++)
			if (st[c].lost)
				fprintf(stderr, " cpu%u=%llu", c,
					(unsigned long long)st[c].lost);
		fprintf(stderr, "; try a bigger ring (-m)\n");
	}
	free(st);
}

/*
 * The account of the trace, last in its output, one line per CPU that had
 * events: with the LOST records before it, the output alone shows that
 * produced == delivered + lost and, when every event is shown, that each
 * delivered event is there.
 */
static int print_end_stats(struct trace_ctx *c, struct memmon_session *s)
{
	unsigned int n = memmon_session__nr_cpus(s), cpu;
	struct memmon_cpu_stats *st = calloc(n ? n : 1, sizeof(*st));
	struct timespec ts;
	__u64 now;
	int got;

	if (!st)
		return -ENOMEM;
	got = memmon_session__stats(s, st, n);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	for (cpu = 0; got > 0 && cpu < (unsigned int)got && cpu < n; cpu++) {
		if (!st[cpu].produced)
			continue;
		if (c->json)
			fprintf(c->out, "{\"time_ns\":%llu,\"cpu\":%u,\"type\":\"stats\","
				"\"produced\":%llu,\"delivered\":%llu,\"lost\":%llu}\n",
				(unsigned long long)now, cpu,
				(unsigned long long)st[cpu].produced,
				(unsigned long long)st[cpu].delivered,
				(unsigned long long)st[cpu].lost);
		else
			fprintf(c->out, "# cpu%u: produced %llu delivered %llu lost %llu\n",
				cpu, (unsigned long long)st[cpu].produced,
				(unsigned long long)st[cpu].delivered,
				(unsigned long long)st[cpu].lost);
	}
	free(st);
	return got < 0 ? got : 0;
}

int cmd_trace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "follow", no_argument, NULL, 'f' },
		{ "events", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "no-loss", optional_argument, NULL, 'L' },
		{ "ring-size", required_argument, NULL, 'm' },
		{ "failed", no_argument, NULL, REC_FILTER_OPT_FAILED },
		{ "min-duration", required_argument, NULL, REC_FILTER_OPT_MIN_DUR },
		{ "faults", required_argument, NULL, REC_FILTER_OPT_FAULTS },
		{ "ts", required_argument, NULL, 'T' },
		{ "summary-only", no_argument, NULL, 'c' },
		{ "summary", no_argument, NULL, 'C' },
		{ "call-graph", optional_argument, NULL, 'g' },
		{ "fault-stacks", no_argument, NULL, 'S' },
		{ "no-symbols", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "trace", *output = NULL;
	struct target t = { .go_fd = -1 };
	struct trace_ctx c = { 0 };
	struct memmon_session *s = NULL;
	__u64 ring_size = 0;
	unsigned int wait_ms = 0;
	int opt, ret = 1, status = 0, n;
	bool child_done = false;
	time_t last_reap = 0;

	t.ev_mask = (1ULL << MEMMON_EV__COUNT) - 1;
	t.ev_syscalls = (1ULL << MEMMON_SYS__COUNT) - 1;
	rec_filter_init(&c.f);
	c.records = true;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+p:G:fe:o:m:rcCgh", longopts, NULL)) != -1) {
		switch (opt) {
		case REC_FILTER_OPT_FAILED:
		case REC_FILTER_OPT_MIN_DUR:
		case REC_FILTER_OPT_FAULTS:
			ret = rec_filter_option(cmd, &c.f, opt, optarg);
			if (ret)
				goto out_free;
			break;
		case 'r':
			c.ts.mode = TS_DELTA;
			break;
		case 'T':
			ret = ts_parse(cmd, optarg, &c.ts.mode);
			if (ret)
				goto out_free;
			break;
		case 'c':
			c.summary = true;
			c.records = false;
			break;
		case 'C':
			c.summary = true;
			c.records = true;
			break;
		case 'p':
			ret = target_add_pids(cmd, &t, optarg);
			if (ret)
				goto out_free;
			break;
		case 'G':
			ret = target_add_cgroup(cmd, &t, optarg);
			if (ret)
				goto out_free;
			break;
		case 'f':
			t.follow = true;
			break;
		case 'e':
			ret = tool_parse_events(cmd, optarg, &t.ev_mask, &t.ev_syscalls);
			if (ret)
				goto out_free;
			break;
		case 'o':
			output = optarg;
			break;
		case 'J':
			c.json = true;
			break;
		case 'g':
			ret = stack_parse_call_graph(cmd, optarg, &c.stack);
			if (ret)
				goto out_free;
			break;
		case 'S':
			c.stack.fault_stacks = true;
			break;
		case 'N':
			c.stack.raw = true;
			break;
		case 'L':
			ret = tool_parse_no_loss(cmd, optarg, &wait_ms);
			if (ret)
				goto out_free;
			break;
		case 'm':
			if (tool_parse_size(optarg, &ring_size) ||
			    !ring_size || (ring_size & (ring_size - 1))) {
				ret = tool_usage_err(cmd, "bad ring size '%s': a "
					"power of two in bytes, e.g. 1M, 4M", optarg);
				goto out_free;
			}
			break;
		case 'h':
			fputs(trace_usage, stdout);
			ret = tool_close_stdout(cmd);
			goto out_free;
		default:
			ret = tool_usage_err(cmd, "unknown or incomplete option '%s'",
					     argv[optind - 1]);
			goto out_free;
		}
	}
	if (c.summary && c.json) {
		ret = tool_usage_err(cmd, "-c/-C print a text summary: not with --json");
		goto out_free;
	}
	if (optind < argc)
		t.cmd_argv = &argv[optind];
	if (!t.cmd_argv && !t.nr_pids && !t.cgroup) {
		ret = tool_usage_err(cmd, "nothing to trace: give -p PID, -G CGROUP or -- CMD");
		goto out_free;
	}
	ret = 1;
	c.show_mask = t.ev_mask;
	c.show_sys = t.ev_syscalls;
	c.out = stdout;
	if (output) {
		c.out = fopen(output, "w");
		if (!c.out) {
			ret = tool_err(cmd, "%s: %s", output, strerror(errno));
			goto out_free;
		}
	}
	/*
	 * A file or pipe gets large writes: at a storm's rate of JSON, 4 KiB
	 * writes cost the consumer as much as the formatting.
	 */
	if (!isatty(fileno(c.out)))
		setvbuf(c.out, NULL, _IOFBF, 1 << 20);
	c.paths = memmon_paths__new();
	c.pt = proctab_new(t.follow);
	c.sym = sym_new();
	if (!c.paths || !c.pt || !c.sym) {
		tool_err(cmd, "out of memory");
		goto out_close;
	}
	proctab_thread_online();
	s = tool_open_session(cmd, ring_size, wait_ms);
	if (!s)
		goto out_offline;
	/*
	 * A running process's mappings as they are now; what it maps from
	 * here on comes as records. Loaded before the formatter owns c.sym.
	 */
	for (n = 0; n < t.nr_pids; n++) {
		char maps[64];

		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)t.pids[n]);
		sym_load_maps(c.sym, (__u32)t.pids[n], maps);
	}
	if (stack_session_setup(cmd, s, &c.stack))
		goto out_session;
	n = formatter_start(&c);
	if (n) {
		tool_err(cmd, "the formatting thread: %s", strerror(-n));
		goto out_session;
	}
	if (t.cmd_argv && target_spawn(cmd, &t))
		goto out_session;
	c.fopts.sz = sizeof(c.fopts);
	c.fopts.realtime_offset_ns = realtime_offset();
	c.fopts.paths = c.paths;
	{
		LIBMEMMON_OPTS(memmon_consume_opts, co,
			       .holdback_ns = TRACE_HOLDBACK_NS);

		memmon_session__set_callback(s, trace_cb, &c, &co);
	}
	tool_catch_signals();
	ret = target_start(cmd, &t, s);
	if (ret) {
		target_abort(&t);
		goto out_session;
	}
	ret = 1;
	if (t.child > 0)
		proctab_add(c.pt, t.child);
	for (n = 0; n < t.nr_pids; n++)
		proctab_add(c.pt, t.pids[n]);
	if (target_rescan(cmd, &t, s, c.pt)) {
		target_abort(&t);
		goto out_disable;
	}
	target_go(&t);		/* this thread is the consumer */

	while (!tool_stop) {
		n = memmon_session__poll(s, 100);
		if (n < 0 && n != -EINTR) {
			formatter_stop(&c);
			if (n == -EIO && c.werr)
				tool_err(cmd, "write error: %s", strerror(c.werr));
			else
				tool_err(cmd, "reading events: %s", strerror(-n));
			goto out_disable;
		}
		rec_queue_flush(c.q);
		if (t.child > 0 && !child_done &&
		    waitpid(t.child, &status, WNOHANG) == t.child) {
			child_done = true;
			proctab_exited(c.pt, t.child);
		}
		if (time(NULL) != last_reap) {
			last_reap = time(NULL);
			proctab_reap_gone(c.pt, child_done ? 0 : t.child);
		}
		/* A cgroup's newcomers, at the poll's pace (100 ms at most). */
		if (t.cgroup) {
			if (target_rescan(cmd, &t, s, c.pt)) {
				formatter_stop(&c);
				goto out_disable;
			}
			continue;
		}
		if (proctab_live(c.pt) == 0)
			break;
	}
	/*
	 * Stop and drain everything: the last EXIT records, what was held
	 * back for ordering, and every loss still pending in a ring, so that
	 * the output accounts for each event.
	 */
	n = memmon_session__finish(s);
	formatter_stop(&c);
	if (n == -EIO && c.werr) {
		tool_err(cmd, "write error: %s", strerror(c.werr));
		goto out_report;
	}
	if (n < 0) {
		tool_err(cmd, "reading events: %s", strerror(-n));
		goto out_report;
	}
	if (c.summary && summary_print(c.out, &c.sum) < 0) {
		tool_err(cmd, "write error: %s", strerror(errno ? errno : EIO));
		goto out_report;
	}
	n = print_end_stats(&c, s);
	if (n < 0) {
		tool_err(cmd, "the ring statistics: %s", strerror(-n));
		goto out_report;
	}
	ret = 0;
	goto out_report;
out_disable:
	memmon_session__disable(s);
out_report:
	report_lost(cmd, s);
	if (t.child > 0 && !child_done) {
		if (tool_stop)
			kill(t.child, SIGTERM);
		waitpid(t.child, &status, 0);
		child_done = true;
	}
out_session:
	formatter_stop(&c);
	memmon_session__close(s);
out_offline:
	proctab_free(c.pt);
	c.pt = NULL;
	proctab_thread_offline();
out_close:
	sym_free(c.sym);
	memmon_paths__free(c.paths);
	if (c.out && c.out != stdout) {
		if (ferror(c.out) | fclose(c.out))
			ret = tool_err(cmd, "%s: write error", output);
	} else if (tool_close_stdout(cmd)) {
		ret = 1;
	}
	/* Like strace: the command's status is ours. */
	if (!ret && child_done) {
		if (WIFEXITED(status))
			ret = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ret = 128 + WTERMSIG(status);
	}
out_free:
	rec_filter_free(&c.f);
	proctab_free(c.pt);
	target_free(&t);
	return ret;
}
