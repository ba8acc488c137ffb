// SPDX-License-Identifier: GPL-2.0
#include "builtin.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tool_err("record", "not implemented yet");
}
