// SPDX-License-Identifier: GPL-2.0
/* memmon info: is the module there, which ABI, what it offers, its limits. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "builtin.h"

static const char *const feature_names[] = {
	"mmap", "read", "poll", "mark", "follow_children", "syscalls",
	"faults", "rss", "lifecycle", "compat32", "overwrite", "flush_lost",
	"full_wait",
};

/*
 * The live sessions of every user, from /proc/memmon/sessions (root's:
 * anyone else is told why not, not shown an empty list).
 */
static void print_sessions(void)
{
	const char *path = "/proc/memmon/sessions";
	char line[512];
	unsigned int n = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		printf("%-20s not shown: %s: %s%s\n", "sessions", path, strerror(errno),
		       errno == EACCES ? " (root's; or the procfs=0 parameter)" : "");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int id, uid, watched, enabled, full_wait;
		unsigned long long ring, produced, delivered, lost;
		char comm[32];
		int pid;

		if (sscanf(line, "session %u pid %d comm %31s uid %u enabled %u watched %u "
			   "ring_size %llu full_wait %u produced %llu delivered %llu lost %llu",
			   &id, &pid, comm, &uid, &enabled, &watched, &ring, &full_wait,
			   &produced, &delivered, &lost) != 11)
			continue;
		if (!n++)
			printf("sessions\n  %4s %7s %-16s %6s %-8s %7s %9s %12s %12s %10s\n",
			       "id", "pid", "comm", "uid", "state", "watched", "ring",
			       "produced", "delivered", "lost");
		printf("  %4u %7d %-16s %6u %-8s %7u %8lluK %12llu %12llu %10llu\n",
		       id, pid, comm, uid, enabled ? (full_wait ? "on,wait" : "on") : "off",
		       watched, ring / 1024, produced, delivered, lost);
	}
	fclose(f);
	if (!n)
		printf("%-20s none\n", "sessions");
}

static void size_line(const char *name, unsigned long long v)
{
	printf("%-20s %llu", name, v);
	if (v >= 1024 && !(v % 1024))
		printf(" (%llu KiB)", v / 1024);
	printf("\n");
}

int cmd_info(int argc, char **argv)
{
	const char *cmd = "info";
	const struct memmon_info *in;
	struct memmon_session *s;
	unsigned int i;

	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			printf("usage: memmon info\n\nShows the memmon kernel "
			       "module's ABI version, features and limits,\n"
			       "and the live sessions (as root).\n");
			return tool_close_stdout(cmd);
		}
		return tool_usage_err(cmd, "unexpected argument '%s'", argv[1]);
	}
	s = tool_open_session(cmd, 0, 0);
	if (!s)
		return 1;
	in = memmon_session__info(s);
	printf("%-20s %s\n", "device", tool_device());
	printf("%-20s %u.%u (this memmon: %d.%d)\n", "abi", in->abi_major,
	       in->abi_minor, MEMMON_ABI_MAJOR, MEMMON_ABI_MINOR);
	printf("%-20s", "features");
	for (i = 0; i < 64; i++) {
		if (!(in->features & (1ULL << i)))
			continue;
		if (i < sizeof(feature_names) / sizeof(feature_names[0]))
			printf(" %s", feature_names[i]);
		else
			printf(" bit%u", i);
	}
	printf("\n%-20s", "events");
	for (i = 0; i < 64; i++) {
		const char *n = memmon_event__name(i);

		if (in->events_supported & (1ULL << i))
			printf(" %s", n ? n : "?");
	}
	printf("\n");
	printf("%-20s %u\n", "cpus", in->nr_cpus);
	printf("%-20s %u\n", "page_size", in->page_size);
	printf("%-20s %u\n", "max_sessions", in->max_sessions);
	printf("%-20s %u\n", "max_watch", in->max_watch);
	printf("%-20s %u\n", "mark_max", in->mark_max);
	size_line("ring_size_min", in->ring_size_min);
	size_line("ring_size_max", in->ring_size_max);
	size_line("ring_size_default", in->ring_size_default);
	/* ABI 1.1: what this caller may still use (docs/security.md). */
	if (in->size >= MEMMON_INFO_SIZE_VER1) {
		printf("%-20s %s, %s\n", "rights",
		       in->session_flags & MEMMON_SESSF_PFN ?
		       "pfn shown" : "pfn hidden (needs CAP_SYS_ADMIN)",
		       in->session_flags & MEMMON_SESSF_PTRACE ?
		       "watches survive privileged exec" :
		       "watches end at privileged exec");
		if (in->user_sessions_max)
			printf("%-20s %u of %u\n", "user_sessions",
			       in->user_sessions, in->user_sessions_max);
		else
			printf("%-20s %u (no limit)\n", "user_sessions",
			       in->user_sessions);
		size_line("user_ring_bytes", in->user_ring_bytes);
		size_line("user_ring_budget", in->user_ring_budget);
		if (in->user_ring_avail == ~0ULL)
			printf("%-20s no limit (CAP_IPC_LOCK or unlimited RLIMIT_MEMLOCK)\n",
			       "user_ring_avail");
		else
			size_line("user_ring_avail", in->user_ring_avail);
	}
	memmon_session__close(s);
	/* Ours is closed: the list is everybody else's. */
	print_sessions();
	return tool_close_stdout(cmd);
}
