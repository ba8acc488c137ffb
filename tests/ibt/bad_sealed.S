/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: an address-taken function whose ENDBR64 is listed in
 * .ibt_endbr_seal (where objtool puts those it believes never reached
 * indirectly: the kernel turns them into NOPs when it loads the module).
 *
 * run: --ibt yes | fail | an address-taken ENDBR64 that objtool sealed
 * expect: ^not ok .*address of sealed_fn is taken by ops .*\.ibt_endbr_seal
 */
	.text
	.type sealed_fn, @function
sealed_fn:
	endbr64
	ret
	.size sealed_fn, . - sealed_fn

	.data
	.type ops, @object
ops:
	.quad sealed_fn
	.size ops, . - ops

	.section .ibt_endbr_seal, "a"
	.long sealed_fn - .
