// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: one binary, a table of sub-commands, each cmd_<name>() in
 * tools/cmd_<name>.c.
 */
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
	{ "timeline", cmd_timeline, "draw a trace file as a self-contained HTML page" },
	{ "mark",   cmd_mark,   "put a text marker into the sessions watching us" },
	{ "info",   cmd_info,   "show the kernel module's ABI, features and limits" },
};

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
		printf("memmon (ABI %d.%d)\n", MEMMON_ABI_MAJOR, MEMMON_ABI_MINOR);
		return tool_close_stdout("memmon");
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "memmon: '%s' is not a memmon command.\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
