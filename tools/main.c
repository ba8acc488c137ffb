// SPDX-License-Identifier: GPL-2.0
#include "builtin.h"

int main(int argc, char **argv)
{
	return tool_main(argc, argv);
}
