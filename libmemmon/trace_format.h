/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The on-disk layout of a memmon trace file. docs/trace-format.md is the
 * prose; this is the same thing in C. Little-endian, every structure and
 * every block 8-byte aligned.
 *
 *   0                +---------------------------------------+
 *                    | struct mtf_file_header                |
 *   header_size      +---------------------------------------+
 *                    | block: struct mtf_block + payload     |  META (JSON)
 *                    | block                                 |  CHUNK cpu 0
 *                    | block                                 |  CHUNK cpu 1
 *                    | ...                                   |
 *                    | block                                 |  META (end)
 *   index_offset     | block                                 |  INDEX
 *   size - 32        | struct mtf_trailer                    |
 *                    +---------------------------------------+
 *
 * A block is its header (header_size bytes) then payload_size bytes, then
 * zero padding to 8 bytes. Readers skip unknown block types and header
 * fields beyond what they know (header_size says where the payload is).
 */
#ifndef MEMMON_LIBMEMMON_TRACE_FORMAT_H
#define MEMMON_LIBMEMMON_TRACE_FORMAT_H

#include <stddef.h>
#include <linux/types.h>
#include "internal.h"	/* LIBMM_HIDDEN */

#define MTF_MAGIC		"MEMMONTF"	/* 8 bytes, no NUL */
#define MTF_VERSION_MAJOR	1
#define MTF_VERSION_MINOR	0

struct mtf_file_header {
	char magic[8];			/* MTF_MAGIC */
	__u16 version_major;		/* a reader refuses another major */
	__u16 version_minor;
	__u32 header_size;		/* >= 64; skip to here */
	__u32 flags;			/* none yet, zero */
	__u32 nr_cpus;			/* chunk cpu < nr_cpus */
	__u32 clock;			/* enum memmon_clock of time_ns */
	__u16 rec_abi_major;		/* MEMMON_ABI_* of the records */
	__u16 rec_abi_minor;
	__s64 realtime_offset_ns;	/* CLOCK_REALTIME - clock at record */
	__u64 created_ns;		/* CLOCK_REALTIME when created */
	__u32 __reserved[3];
	__u32 header_crc;		/* crc32 of header_size bytes, this 0 */
};

#define MTF_BLOCK_MAGIC		0x4b4c424dU	/* "MBLK" */

/* enum mtf_block_type */
enum mtf_block_type {
	MTF_BLOCK_CHUNK	= 1,	/* records of one CPU, as in its ring */
	MTF_BLOCK_META	= 2,	/* a JSON object */
	MTF_BLOCK_INDEX	= 3,	/* struct mtf_index + entries */
};

/* enum mtf_compression */
enum mtf_compression {
	MTF_COMP_NONE	= 0,
	MTF_COMP_ZSTD	= 1,
};

#define MTF_CHUNK_MAX	(64U << 20)	/* raw bytes of one chunk, at most */

struct mtf_block {
	__u32 magic;		/* MTF_BLOCK_MAGIC */
	__u16 type;		/* enum mtf_block_type */
	__u16 header_size;	/* >= 64 */
	__u64 payload_size;	/* bytes on disk after the header */
	__u32 payload_crc;	/* crc32 of those bytes */
	__u32 header_crc;	/* crc32 of header_size bytes, this 0 */
	/* CHUNK only (zero otherwise): */
	__u32 cpu;
	__u32 compression;	/* enum mtf_compression */
	__u64 raw_size;		/* payload bytes once decompressed */
	__u64 nr_records;
	__u64 first_ns;		/* smallest time_ns in the chunk */
	__u64 last_ns;		/* largest */
};

struct mtf_index {
	__u32 entry_size;	/* sizeof(struct mtf_index_entry) as written */
	__u32 __reserved;
	__u64 nr_entries;
};

struct mtf_index_entry {
	__u64 offset;		/* of the block */
	__u16 type;		/* enum mtf_block_type */
	__u16 __reserved;
	__u32 cpu;
	__u64 first_ns;
	__u64 last_ns;
	__u64 nr_records;
};

#define MTF_TRAILER_MAGIC	"MMTFEND"	/* 8 bytes with the NUL */

struct mtf_trailer {
	char magic[8];		/* MTF_TRAILER_MAGIC */
	__u64 index_offset;	/* the INDEX block */
	__u64 file_size;	/* the whole file, trailer included */
	__u32 __reserved;
	__u32 crc;		/* crc32 of the 28 bytes before */
};

_Static_assert(sizeof(struct mtf_file_header) == 64, "file header layout");
_Static_assert(sizeof(struct mtf_block) == 64, "block header layout");
_Static_assert(sizeof(struct mtf_index_entry) == 40, "index entry layout");
_Static_assert(sizeof(struct mtf_trailer) == 32, "trailer layout");

/*
 * Every "crc32" above is zlib's CRC-32 (IEEE 802.3 polynomial, reflected,
 * initial and final XOR ~0): crc32(0, p, len) in zlib's terms. trace_crc.c
 * computes it with ISA-L's crc32_gzip_refl() where the CPU has a carry-less
 * multiply (several GB/s), else with zlib's own (where ISA-L would go a
 * byte at a time). mtf_crc32_update(crc, ...) continues crc over more bytes.
 */
LIBMM_HIDDEN __u32 mtf_crc32_update(__u32 crc, const void *p, size_t len);
/* The two implementations, and the test of the choice (for the tests). */
LIBMM_HIDDEN __u32 mtf_crc32_isal(__u32 crc, const void *p, size_t len);
LIBMM_HIDDEN __u32 mtf_crc32_zlib(__u32 crc, const void *p, size_t len);
LIBMM_HIDDEN bool mtf_crc32_has_clmul(void);

static inline __u32 mtf_crc32(const void *p, size_t len)
{
	return mtf_crc32_update(0, p, len);
}

static inline __u64 mtf_align8(__u64 v)
{
	return (v + 7) & ~7ULL;
}

#endif /* MEMMON_LIBMEMMON_TRACE_FORMAT_H */
