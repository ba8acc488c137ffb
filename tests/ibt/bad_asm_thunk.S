/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: calls and jumps to the retpoline thunks in an asm
 * section are indirect branches too (the kernel patches them back into
 * "call *%rax" where retpolines are off), and fail on an IBT kernel.
 *
 * run: --ibt yes | fail | retpoline thunk calls and jumps in an asm section
 * expect: ^not ok .*"call __x86_indirect_thunk_rax" in hand-written asm
 * expect: ^not ok .*"jmp __x86_indirect_jump_thunk_r11" in hand-written asm
 * expect: ^not ok .*"call __x86_indirect_its_thunk_rdx" in hand-written asm
 */
	.section .text.thunk_tramp, "ax", @progbits
	.globl thunk_tramp
	.type thunk_tramp, @function
thunk_tramp:
	endbr64
	call __x86_indirect_thunk_rax
	call __x86_indirect_its_thunk_rdx
	jmp __x86_indirect_jump_thunk_r11
	.size thunk_tramp, . - thunk_tramp
