/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: a global function of an asm section without ENDBR64,
 * even with no address taken here (ftrace or kallsyms may call it).
 *
 * run: --ibt yes | fail | a global asm function without ENDBR64
 * expect: ^not ok .*global_entry \(\.text\.entries\) is a global asm functi
 */
	.section .text.entries, "ax", @progbits
	.globl global_entry
	.type global_entry, @function
global_entry:
	xorl %eax, %eax
	ret
	.size global_entry, . - global_entry
