/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: "call *%rax" in a hand-written asm section fails on
 * an IBT kernel; without IBT it is a note, and a failure under --strict.
 *
 * run: --ibt yes | fail | "call *%rax" in an asm section
 * expect: ^not ok .*bad_tramp\+0x9 .*"call \*%rax" in hand-written asm \.text
 * run: --ibt no | pass | the same without IBT: a note
 * expect: ^# note: .*"call \*%rax".*allowed: this kernel has no IBT
 * expect: ^ok .*harmless without IBT
 * run: --ibt no --strict | fail | the same without IBT, under --strict
 * expect: ^not ok .*"call \*%rax".*\(--strict\)
 */
	.section .text.bad_tramp, "ax", @progbits
	.globl bad_tramp
	.type bad_tramp, @function
bad_tramp:
	endbr64
	movq 8(%rsp), %rax
	call *%rax
	ret
	.size bad_tramp, . - bad_tramp
