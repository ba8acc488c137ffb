// SPDX-License-Identifier: GPL-2.0
/*
 * memmon mark TEXT: a marker into every session that watches this process
 * (MEMMON_MARK_WATCHERS), e.g. from a script run under "memmon trace -f".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"

int cmd_mark(int argc, char **argv)
{
	const char *cmd = "mark";
	struct memmon_session *s;
	size_t len = 0, max;
	char *text;
	int i, ret = 0;

	if (argc < 2)
		return tool_usage_err(cmd, "missing TEXT");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		printf("usage: memmon mark TEXT...\n\nWrites TEXT as a marker "
		       "into every memmon session watching this process.\n");
		return tool_close_stdout(cmd);
	}
	for (i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = calloc(1, len + 1);
	if (!text)
		return tool_err(cmd, "out of memory");
	for (i = 1; i < argc; i++) {
		if (i > 1)
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	len = strlen(text);
	s = tool_open_session(cmd, 0, 0);
	if (!s) {
		free(text);
		return 1;
	}
	max = memmon_session__info(s)->mark_max;
	if (!max)
		max = MEMMON_MARK_MAX;
	if (len > max) {
		ret = tool_usage_err(cmd, "text too long: %zu bytes, at most %zu",
				     len, max);
	} else if (memmon_session__mark(s, text, len, MEMMON_MARK_WATCHERS) < 0) {
		ret = tool_explain_errno(cmd, errno, "mark");
	}
	memmon_session__close(s);
	free(text);
	return ret;
}
