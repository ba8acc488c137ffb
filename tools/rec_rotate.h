/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rec_rotate: memmon record's stop and rotation options, parsed and
 * checked, and the names and removal order of a recording's parts.
 * Pure functions: no I/O but unlink() in rec_part_remove().
 */
#ifndef MEMMON_TOOLS_REC_ROTATE_H
#define MEMMON_TOOLS_REC_ROTATE_H

#include <linux/types.h>

/* Smallest --max-size: a part must hold at least a few chunks. */
#define REC_MAX_SIZE_MIN	(16ULL << 10)
/* Largest --rotate: the number is only ever compared. */
#define REC_ROTATE_MAX		1000000U

/*
 * "90", "90s", "15m", "2h" -> nanoseconds. 0 < TIME <= 1000 days.
 * Returns 0 or -EINVAL / -ERANGE.
 */
int rec_parse_duration(const char *s, __u64 *ns);
/* K/M/G (binary) suffixes as -m; at least REC_MAX_SIZE_MIN. */
int rec_parse_max_size(const char *s, __u64 *bytes);
/* 1..REC_ROTATE_MAX. */
int rec_parse_rotate(const char *s, unsigned int *keep);

/* "BASE.N", malloc'ed; NULL with errno ENOMEM. */
char *rec_part_path(const char *base, unsigned long n);
/*
 * Part n has just been opened: the part to remove so that only the newest
 * keep remain (n - keep), or 0 for none (keep 0 keeps every part).
 */
unsigned long rec_part_to_remove(unsigned long n, unsigned int keep);

#endif
