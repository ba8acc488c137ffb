/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * Names of the values of linux/memmon.h's enums, for the two places that
 * turn records into text: the driver's /proc/memmon/events and libmemmon's
 * decoder. One table each, here, so the two never disagree.
 *
 * Not part of the ABI and not installed: names are for people. Each table
 * is indexed by its enum; a hole or an index past the end has no name
 * (callers print "?" or a number).
 */
#ifndef MEMMON_UAPI_MEMMON_NAMES_H
#define MEMMON_UAPI_MEMMON_NAMES_H

#include <linux/memmon.h>

/* A file includes this for one table or two: the others are unused. */
#ifndef __KERNEL__
#ifndef __maybe_unused
#define __maybe_unused __attribute__((__unused__))	/* the kernel's name */
#endif
#endif
#define MEMMON_NAMES static __maybe_unused const char *const

MEMMON_NAMES memmon_rec_type_names[] = {
	[MEMMON_REC_LOST]	= "lost",
	[MEMMON_REC_MARK]	= "mark",
	[MEMMON_REC_SYSCALL]	= "syscall",
	[MEMMON_REC_FAULT]	= "fault",
	[MEMMON_REC_RSS]	= "rss",
	[MEMMON_REC_FORK]	= "fork",
	[MEMMON_REC_EXEC]	= "exec",
	[MEMMON_REC_EXIT]	= "exit",
	[MEMMON_REC_PATH]	= "path",
	[MEMMON_REC_COMM]	= "comm",
	[MEMMON_REC_AUXV]	= "auxv",
};

MEMMON_NAMES memmon_comm_why_names[] = {
	[MEMMON_COMM_WATCH]	= "watch",
	[MEMMON_COMM_EXEC]	= "exec",
	[MEMMON_COMM_RENAME]	= "rename",
};

MEMMON_NAMES memmon_sys_names[MEMMON_SYS__COUNT] = {
	[MEMMON_SYS_MMAP]	= "mmap",
	[MEMMON_SYS_MUNMAP]	= "munmap",
	[MEMMON_SYS_MREMAP]	= "mremap",
	[MEMMON_SYS_BRK]	= "brk",
	[MEMMON_SYS_MLOCK]	= "mlock",
	[MEMMON_SYS_MLOCK2]	= "mlock2",
	[MEMMON_SYS_MUNLOCK]	= "munlock",
	[MEMMON_SYS_MLOCKALL]	= "mlockall",
	[MEMMON_SYS_MUNLOCKALL]	= "munlockall",
	[MEMMON_SYS_FSYNC]	= "fsync",
	[MEMMON_SYS_MADVISE]	= "madvise",
	[MEMMON_SYS_MPROTECT]	= "mprotect",
	[MEMMON_SYS_MMAP2]	= "mmap2",
	[MEMMON_SYS_OLD_MMAP]	= "old_mmap",
};

MEMMON_NAMES memmon_fclass_names[] = {
	[MEMMON_FCLASS_NONE]	= "none",
	[MEMMON_FCLASS_ANON]	= "anon",
	[MEMMON_FCLASS_SWAP]	= "swap",
	[MEMMON_FCLASS_FILE]	= "file",
	[MEMMON_FCLASS_SHMEM]	= "shmem",
	[MEMMON_FCLASS_OTHER]	= "other",
};

MEMMON_NAMES memmon_fresult_names[] = {
	[MEMMON_FRES_HANDLED]	= "handled",
	[MEMMON_FRES_RETRY]	= "retry",
	[MEMMON_FRES_SIGSEGV]	= "sigsegv",
	[MEMMON_FRES_SIGBUS]	= "sigbus",
	[MEMMON_FRES_OOM]	= "oom",
	[MEMMON_FRES_OTHER]	= "other",
};

#undef MEMMON_NAMES

#endif /* MEMMON_UAPI_MEMMON_NAMES_H */
