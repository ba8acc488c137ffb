/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon_peer: what the BPF program and its consumer share. The records
 * are memmon's own (struct memmon_rec_syscall, 112 bytes, and struct
 * memmon_rec_fault, 72 bytes, <linux/memmon.h>), so that both tools write
 * the same bytes per event; the BPF ring buffer adds its 8-byte header
 * where memmon's ring has none.
 */
#ifndef MEMMON_TESTS_BENCH_EBPF_MEMMON_PEER_H
#define MEMMON_TESTS_BENCH_EBPF_MEMMON_PEER_H

/* Slots of the per-CPU counter array (map "counters"). */
enum memmon_peer_counter {
	PEER_CNT_DROPPED = 0,	/* bpf_ringbuf_reserve() failed: lost */
	PEER_CNT_NOSTATE = 1,	/* no task storage: entry not recorded */
	PEER_CNT__COUNT
};

#endif
