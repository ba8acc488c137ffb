/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: a switch compiled to a jump table (what the kernel's
 * -fno-jump-tables prevents): a NOTRACK jump, which the kernel does not
 * enable, to case labels that have no ENDBR64.
 *
 * cflags: -fjump-tables -fno-tree-switch-conversion -mindirect-branch=keep
 * run: --ibt yes | fail | a NOTRACK jump-table jump, and its table
 * expect: ^not ok .*"notrack jmp \*%rax": NOTRACK is not enabled
 * expect: ^not ok .*address of jt_switch\+0x[0-9a-f]+ is taken by .*\.rodata
 */
int jt_switch(int i, int x);
int jt_switch(int i, int x)
{
	switch (i) {
	case 0: return x + 10;
	case 1: return x * 21;
	case 2: return x - 37;
	case 3: return x << 4;
	case 4: return x ^ 53;
	case 5: return x / 67;
	case 6: return x | 71;
	case 7: return x % 89;
	default: return 0;
	}
}
