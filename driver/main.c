// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: module init and exit.
 *
 * Init brings the pieces up in dependency order and exit takes them down in
 * exactly the reverse order; each step of init that fails unwinds the
 * steps before it.
 */
#include "main.h"
#include "instr.h"
#include "transport/full_wait.h"
#include "transport/session.h"
#include "transport/user_limits.h"
#include "transport/watch.h"

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#endif

/*
 * May we call kernel functions through addresses kallsyms gave us? Such a
 * call is an indirect branch the kernel never planned. With x86 IBT on it
 * must land on an ENDBR, which the kernel seals away at boot from functions
 * whose address it never takes (kallsyms_lookup_name, ptrace_may_access),
 * and a kprobe's address is past the ENDBR anyway: #CP. Clang's kCFI traps
 * on a callee without the caller's type hash. Then: no lookups at all.
 */
static bool memmon_ksym_callable(void)
{
	if (IS_ENABLED(CONFIG_CFI_CLANG))
		return false;
#if defined(CONFIG_X86) && defined(X86_FEATURE_IBT)
	if (cpu_feature_enabled(X86_FEATURE_IBT))
		return false;
#endif
	return true;
}

/**
 * memmon_ksym() - the address of a kernel symbol that is not exported
 * @name: the symbol
 *
 * kallsyms_lookup_name() itself is not exported since 5.7; its address is
 * what a kprobe on it resolves to (the probe is removed at once). Looked up
 * on first use, not at load: registering a kprobe costs a grace period.
 * Use sparingly, for what has no exported equivalent, and always with a
 * fallback for a NULL answer. A function found here may be called through
 * the address: where that would fault (IBT, kCFI), every answer is 0.
 *
 * Context: process context, may sleep (the first call).
 * Return: the address, or 0 if unknown or if kallsyms cannot be reached.
 */
unsigned long memmon_ksym(const char *name)
{
	static unsigned long (*lookup)(const char *name);
	static DEFINE_MUTEX(lock);
	static bool tried;
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };

	mutex_lock(&lock);
	if (!tried) {
		tried = true;
		if (memmon_ksym_callable() && !register_kprobe(&kp)) {
			lookup = (unsigned long (*)(const char *))kp.addr;
			unregister_kprobe(&kp);
		}
	}
	mutex_unlock(&lock);
	return lookup ? lookup(name) : 0;
}

static int __init memmon_init(void)
{
	int err;

	err = memmon_limits_init();
	if (err)
		goto err_out;
	err = memmon_session_init();
	if (err)
		goto err_out;
	err = memmon_watch_init();
	if (err)
		goto err_session_cleanup;
	err = memmon_procfs_init();
	if (err)
		goto err_watch_cleanup;
	err = memmon_dev_init();
	if (err)
		goto err_procfs_exit;

	pr_info("loaded, version %s\n", MEMMON_VERSION);
	return 0;

err_procfs_exit:
	memmon_procfs_exit();
	memmon_hooks_exit();
err_watch_cleanup:
	memmon_watch_cleanup();
err_session_cleanup:
	memmon_session_cleanup();
err_out:
	return err;
}

static void __exit memmon_exit(void)
{
	memmon_dev_exit();
	memmon_procfs_exit();	/* the last session */
	memmon_hooks_exit();
	memmon_watch_cleanup();
	memmon_session_cleanup();
	memmon_limits_cleanup();
	memmon_full_wait_cleanup();
	pr_info("unloaded\n");
}

module_init(memmon_init);
module_exit(memmon_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("memmon developers");
MODULE_DESCRIPTION("memmon: trace processes' virtual-memory activity (syscalls, page faults) into per-CPU zero-copy rings");
MODULE_VERSION(MEMMON_VERSION);
