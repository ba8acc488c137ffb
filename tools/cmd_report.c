// SPDX-License-Identifier: GPL-2.0
#include "builtin.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tool_err("report", "not implemented yet");
}
