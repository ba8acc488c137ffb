// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: one binary, a table of sub-commands, each cmd_<name>() in
 * tools/cmd_<name>.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "builtin.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd_struct commands[] = {
	{ "trace",  cmd_trace,  "print memory events of processes as they happen" },
	{ "record", cmd_record, "write memory events to a trace file" },
	{ "report", cmd_report, "summarise a trace file per process" },
	{ "script", cmd_script, "print a trace file's events as trace does" },
	{ "export", cmd_export, "a trace file as Chrome trace JSON or CSV tables" },
	{ "timeline", cmd_timeline, "draw a trace file as a self-contained HTML page" },
	{ "top",    cmd_top,    "a live view of fault and syscall rates per process" },
	{ "mark",   cmd_mark,   "put a text marker into the sessions watching us" },
	{ "info",   cmd_info,   "show the kernel module's ABI, features and limits" },
	{ "serve",  cmd_serve,  "record on this host for memmon remote clients (HTTP)" },
	{ "remote", cmd_remote, "start, list, stop and fetch recordings of a memmon serve" },
};

/*
 * This program's version and ABI, and the loaded module's: its version from
 * sysfs (anyone may read it), its ABI from a session when we may open one.
 */
static void print_version(void)
{
	LIBMEMMON_OPTS(memmon_session_opts, o, .path = tool_device());
	struct memmon_session *s;
	char ver[64] = "";
	FILE *f;

	printf("memmon %s (ABI %d.%d)\n", MEMMON_VERSION, MEMMON_ABI_MAJOR,
	       MEMMON_ABI_MINOR);
	f = fopen("/sys/module/memmon/version", "re");
	if (!f || !fgets(ver, sizeof(ver), f)) {
		printf("module: not loaded\n");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	ver[strcspn(ver, "\n")] = 0;
	s = memmon_session__open(&o);
	if (s) {
		const struct memmon_info *in = memmon_session__info(s);

		printf("module: memmon %s (ABI %u.%u)\n", ver, in->abi_major,
		       in->abi_minor);
		memmon_session__close(s);
	} else {
		printf("module: memmon %s (ABI not known: %s: %s)\n", ver,
		       tool_device(), strerror(errno));
	}
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: memmon COMMAND [ARGS]\n\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "   %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'memmon COMMAND --help' for a command's options; "
		   "man memmon(1).\n");
}

int tool_main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return tool_close_stdout("memmon");
	}
	if (!strcmp(argv[1], "--version")) {
		print_version();
		return tool_close_stdout("memmon");
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "memmon: '%s' is not a memmon command.\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
