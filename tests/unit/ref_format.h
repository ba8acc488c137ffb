/* SPDX-License-Identifier: GPL-2.0 */
/* The reference formatters of tests/unit/ref_format.c. */
#ifndef MEMMON_TESTS_UNIT_REF_FORMAT_H
#define MEMMON_TESTS_UNIT_REF_FORMAT_H

#include <stdio.h>
#include <memmon/decode.h>

int ref_prot__format(char *buf, size_t size, __u64 prot);
int ref_mmap_flags__format(char *buf, size_t size, __u64 flags);
int ref_mremap_flags__format(char *buf, size_t size, __u64 flags);
int ref_madvise__format(char *buf, size_t size, __u64 advice);
int ref_mlockall_flags__format(char *buf, size_t size, __u64 flags);
int ref_mlock2_flags__format(char *buf, size_t size, __u64 flags);
int ref_fault_access__format(char *buf, size_t size, __u32 access);
int ref_wait_status__format(char *buf, size_t size, __u32 status);
int ref_rec__format(const struct memmon_rec_header *rec, char *buf,
		    size_t size, const struct memmon_format_opts *opts);
int ref_rec__fprint(FILE *f, const struct memmon_rec_header *rec,
		    const struct memmon_format_opts *opts);
char *ref_rec__to_json(const struct memmon_rec_header *rec,
		       const struct memmon_format_opts *opts);
int ref_rec__fprint_json(FILE *f, const struct memmon_rec_header *rec,
			 const struct memmon_format_opts *opts);

#endif /* MEMMON_TESTS_UNIT_REF_FORMAT_H */
