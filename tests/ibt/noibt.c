/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: a module built without IBT (no ENDBR64 anywhere, as
 * gcc -fcf-protection=none makes it): nothing to check, and the check
 * says how it decided.
 *
 * cflags: -fcf-protection=none
 * run: | pass | no IBT inferred: no ENDBR64 at any C function's start
 * expect: ^ok .*no CONFIG_X86_KERNEL_IBT \(inferred: 0 of [1-9]
 * run: --ibt yes | fail | the same module checked as for IBT
 * expect: ^not ok .*address of noibt_fn is taken by noibt_ops
 */
static int noibt_fn(int x)
{
	return x * 7;
}

int (*const noibt_ops[])(int) = { noibt_fn };
