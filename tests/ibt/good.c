/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibt-check fixture: a module done right for an IBT kernel. C functions
 * reached through an ops table and called through pointers (retpoline
 * thunks); an asm trampoline that starts with ENDBR64, whose address C
 * takes; from it a direct call into the middle of a kernel function, and
 * from C that function's address plus an offset as a value (notes).
 *
 * run: --ibt yes | pass | a right module passes, with its notes
 * expect: ^ok .*\.text\.good_tramp \(hand-written asm\) has no indirect
 * expect: ^ok .* [1-9] code addresses taken, each an ENDBR64
 * expect: ^ok .*1 global asm function.*good_tramp
 * expect: ^# note: .*direct call to ext_fn\+0x9
 * expect: ^# note: .*loads the address ext_fn\+0x4
 * run: --kdir @IBT | pass | IBT read from KDIR's auto.conf
 * expect: CONFIG_X86_KERNEL_IBT=y \(from .*auto\.conf\)
 * run: --kdir @NOIBT | pass | no IBT read from KDIR's auto.conf
 * expect: ^ok .*no CONFIG_X86_KERNEL_IBT \(from .*auto\.conf\)
 * run: | pass | IBT inferred from ENDBR64 at every C function's start
 * expect: IBT=y \(inferred: ([1-9][0-9]*) of \1 C functions start with
 */
struct good_ops {
	int (*open)(int);
	int (*close)(int);
};

static int good_open(int x)
{
	return x + 1;
}

static int good_close(int x)
{
	return x - 1;
}

const struct good_ops good_ops = { good_open, good_close };

int good_call(const struct good_ops *ops, int x);
int good_call(const struct good_ops *ops, int x)
{
	return ops->open(x) + ops->close(x);
}

void good_tramp(void);
void good_helper(void);
void ext_fn(void);

unsigned long good_tramp_addr(void);
unsigned long good_tramp_addr(void)
{
	return (unsigned long)good_tramp;
}

unsigned long good_ext_site(void);
unsigned long good_ext_site(void)
{
	return (unsigned long)ext_fn + 4;
}

void good_helper(void)
{
}

asm(".pushsection .text.good_tramp, \"ax\", @progbits\n"
    ".globl good_tramp\n"
    ".type good_tramp, @function\n"
    "good_tramp:\n\t"
    "endbr64\n\t"
    "call good_helper\n\t"
    "call ext_fn+9\n\t"
    "ret\n"
    ".size good_tramp, . - good_tramp\n"
    ".popsection\n");
