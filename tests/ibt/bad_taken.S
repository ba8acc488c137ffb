/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: code whose address is taken must be an ENDBR64. Here
 * it is not: an asm function in a data table, one loaded with an absolute
 * and one with a RIP-relative address, and a function's address plus 4.
 *
 * run: --ibt yes | fail | addresses taken of code without ENDBR64
 * expect: ^not ok .*address of in_table is taken by table .*R_X86_64_64, bu
 * expect: ^not ok .*address of loaded_abs is taken by .*R_X86_64_32S, but
 * expect: ^not ok .*address of loaded_rip is taken by .*R_X86_64_PC32, but
 * expect: ^not ok .*address of with_endbr\+0x4 is taken
 * run: --ibt no | pass | the same without IBT
 * expect: ^ok .*no CONFIG_X86_KERNEL_IBT
 */
	.section .text.taken, "ax", @progbits
	.type in_table, @function
in_table:
	ret
	.size in_table, . - in_table
	.type loaded_abs, @function
loaded_abs:
	ret
	.size loaded_abs, . - loaded_abs
	.type loaded_rip, @function
loaded_rip:
	ret
	.size loaded_rip, . - loaded_rip

	.text
	.type with_endbr, @function
with_endbr:
	endbr64
	movq $loaded_abs, %rax
	leaq loaded_rip(%rip), %rdx
	movq $with_endbr + 4, %rcx
	ret
	.size with_endbr, . - with_endbr

	.data
	.type table, @object
table:
	.quad in_table
	.size table, . - table
