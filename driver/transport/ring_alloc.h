/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: the memory behind a session's rings (ring_alloc.c) and its layout
 * as userspace maps it (uapi/linux/memmon.h, "The mapping").
 */
#ifndef MEMMON_DRIVER_TRANSPORT_RING_ALLOC_H
#define MEMMON_DRIVER_TRANSPORT_RING_ALLOC_H

#include <linux/irq_work.h>
#include <linux/mm_types.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "ring.h"

/**
 * struct memmon_layout - where everything is, in bytes (uapi names)
 * @ring_size: data bytes per CPU, a power of two, at least PAGE_SIZE
 * @ring_stride: bytes between two CPUs' blocks: ring page + data twice
 * @ring_data_offset: data offset inside a CPU's block: one page
 * @consumer_size: the consumer area (mmap offset 0): nr_cpus words,
 *	MEMMON_CONSUMER_STRIDE apart, rounded up to pages
 * @producer_offset: mmap offset of the producer area: @consumer_size
 * @producer_size: header page + nr_cpus blocks
 * @nr_cpus: CPU blocks: nr_cpu_ids
 *
 * Immutable once computed.
 */
struct memmon_layout {
	u64 ring_size;
	u64 ring_stride;
	u64 ring_data_offset;
	u64 consumer_size;
	u64 producer_offset;
	u64 producer_size;
	u32 nr_cpus;
};

/**
 * struct memmon_cpu_ring - kernel state of one CPU's ring of a session
 * @ring: the ring (ring.h); producer-owned counters, see its table
 * @wake: wakes @wq; queued by this CPU's producers only ([E])
 * @wq: the session's wait queue (outlives the rings)
 * @wait_off: MEMMON_FULL_WAIT gave up on this ring (full_wait.c)
 *
 * Per-CPU memory, so each CPU's producer writes its own cache lines on its
 * own node.
 *
 *   field   written                       read
 *   ------  ----------------------------  ---------------------------------
 *   ring    see struct memmon_ring        see struct memmon_ring
 *   wake    irq_work_queue() by this      irq_work core; irq_work_sync() at
 *           CPU's producers (atomic       free, after a grace period
 *           claim inside)
 *   wq      at allocation                 the irq_work callback
 *   wait_off full_wait.c, racily (a hint:  full_wait.c
 *           a MEMMON_FULL_WAIT ring whose
 *           wait timed out; no waiting
 *           until it is half empty again)
 */
struct memmon_cpu_ring {
	struct memmon_ring ring;
	struct irq_work wake;
	wait_queue_head_t *wq;
	bool wait_off;
};

/**
 * struct memmon_rings - all the rings of a session
 * @layout: their layout
 * @cpu: kernel ring state per possible CPU
 * @producer: vmap of the producer area: header page, then per CPU its ring
 *	page and its data pages twice (read-only to userspace)
 * @consumer: vmalloc_user() consumer area, one u64 per CPU every
 *	MEMMON_CONSUMER_STRIDE bytes (user-writable: never trusted)
 * @pages: the page array @producer was built from (data pages twice)
 * @nr_pages: entries of @pages
 *
 * Synchronisation: every field is written once, by memmon_rings_alloc(),
 * before the rings are published (store-release of session->rings); all
 * readers load that pointer with acquire. Freed by memmon_rings_free() once
 * no producer can be inside and no VMA maps them (the session's refcount).
 * What lives *in* the areas is the ring protocol's ([A]-[E], ring.h).
 */
struct memmon_rings {
	struct memmon_layout layout;
	struct memmon_cpu_ring __percpu *cpu;
	void *producer;
	u64 *consumer;
	struct page **pages;
	unsigned long nr_pages;
};

int memmon_layout_compute(struct memmon_layout *l, u64 ring_size);
struct memmon_rings *memmon_rings_alloc(u64 ring_size, u64 wakeup_bytes,
					bool overwrite, wait_queue_head_t *wq);
void memmon_rings_free(struct memmon_rings *rings);
/* The two mappable areas: memmon_mmap_check()'s answer. */
enum {
	MEMMON_AREA_CONSUMER,
	MEMMON_AREA_PRODUCER,
};

int memmon_mmap_check(const struct memmon_layout *l, struct vm_area_struct *vma);
int memmon_rings_remap(struct memmon_rings *rings, struct vm_area_struct *vma,
		       int area);
bool memmon_rings_readable(struct memmon_rings *rings, u64 watermark);
bool memmon_rings_hold_records(struct memmon_rings *rings);
u64 memmon_rings_produced(struct memmon_rings *rings);

#endif /* MEMMON_DRIVER_TRANSPORT_RING_ALLOC_H */
