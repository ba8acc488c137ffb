// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The trace format's CRC-32 (zlib's, see trace_format.h) at the best speed
 * this CPU allows.
 *
 * ISA-L's crc32_gzip_refl() folds 16 bytes at a time with a carry-less
 * multiply where the CPU has one (PCLMULQDQ with SSE4.1 on x86-64, PMULL on
 * arm64): several GB/s. Where it has none, ISA-L falls back to a table
 * lookup per byte, about twice the instructions of zlib's crc32_z()
 * (callgrind, 1 MiB: 10.2 against 5.1 per byte); there zlib's is used. A
 * CPU model without PCLMULQDQ is what qemu emulates by default, and what
 * the benchmarks' VM runs `memmon record` on. Both are the same function,
 * continuation included (tests/unit/test_lib_trace.c checks each against
 * zlib). The choice is made once per process; two threads racing to make
 * it make the same one.
 */
#include <stdbool.h>
#include <isa-l/crc.h>
#include <zlib.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif
#include "internal.h"
#include "trace_format.h"

__u32 mtf_crc32_isal(__u32 crc, const void *p, size_t len)
{
	return crc32_gzip_refl(crc, (const unsigned char *)p, len);
}

__u32 mtf_crc32_zlib(__u32 crc, const void *p, size_t len)
{
	return (__u32)crc32_z(crc, (const Bytef *)p, len);
}

/* Does ISA-L's crc32_gzip_refl() get a carry-less multiply here? */
bool mtf_crc32_has_clmul(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#elif defined(__aarch64__)
	return getauxval(AT_HWCAP) & HWCAP_PMULL;
#else
	return false;
#endif
}

__u32 mtf_crc32_update(__u32 crc, const void *p, size_t len)
{
	static int use;		/* 0: not chosen yet, 1: ISA-L, 2: zlib */
	int u = __atomic_load_n(&use, __ATOMIC_RELAXED);

	if (!u) {
		u = mtf_crc32_has_clmul() ? 1 : 2;
		__atomic_store_n(&use, u, __ATOMIC_RELAXED);
	}
	return u == 1 ? mtf_crc32_isal(crc, p, len) : mtf_crc32_zlib(crc, p, len);
}
