// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: the memory behind a session's rings, and its user mappings.
 *
 * A session's rings live in two kernel areas, each mapped by one mmap():
 *
 *   producer (one vmap of a page array, VM_USERMAP; read-only to userspace)
 *   +--------+---------------------------------------+-------------------+
 *   | header | cpu 0: ring page | D0 D1 .. Dn | D0 D1 .. Dn | cpu 1: ... |
 *   +--------+---------------------------------------+-------------------+
 *   page 0    <------------------ ring_stride ------------->
 *
 *   consumer (vmalloc_user(); the only user-writable memory)
 *   +---------------------+---------------------+-----
 *   | cpu 0 consumer_pos  | cpu 1 consumer_pos  | ...   64 bytes apart
 *   +---------------------+---------------------+-----
 *
 * Each CPU's data pages appear twice back to back in the vmap (the BPF
 * ring buffer's trick), so a record that wraps is still contiguous, for the
 * kernel and for userspace alike. The pages of a CPU are allocated on that
 * CPU's node: its producer is the only writer. Every page is zeroed, so
 * nothing of the kernel's leaks through the mapping.
 *
 * The consumer positions are on their own pages, apart from anything the
 * kernel trusts: the only thing a hostile consumer can break is its own
 * reading (ring.h never trusts them, [A]).
 */
#include "main.h"
#include "compat.h"
#include "ring_alloc.h"

#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/vmalloc.h>

/* One ring page holds the producer's struct. */
static_assert(sizeof(struct memmon_ring_page) <= PAGE_SIZE);
static_assert(sizeof(struct memmon_mmap_header) <= PAGE_SIZE);

/* Pages of the vmap before the first CPU block: the header page. */
#define MEMMON_HEADER_PAGES	1

/**
 * memmon_layout_compute() - the mapping layout for a ring size
 * @l: out
 * @ring_size: data bytes per CPU: a power of two, at least PAGE_SIZE
 *
 * Context: any.
 * Return: 0, or -EINVAL if @ring_size is not a usable size.
 */
int memmon_layout_compute(struct memmon_layout *l, u64 ring_size)
{
	u64 blocks;

	/* hdr.cpu and the rings' cpu field are u16. */
	BUILD_BUG_ON(CONFIG_NR_CPUS - 1 > U16_MAX);
	if (!is_power_of_2(ring_size) || ring_size < PAGE_SIZE)
		return -EINVAL;
	l->nr_cpus = nr_cpu_ids;
	l->ring_size = ring_size;
	l->ring_data_offset = PAGE_SIZE;
	if (check_add_overflow((u64)PAGE_SIZE, 2 * ring_size, &l->ring_stride) ||
	    check_mul_overflow((u64)nr_cpu_ids, l->ring_stride, &blocks) ||
	    check_add_overflow((u64)MEMMON_HEADER_PAGES * PAGE_SIZE, blocks,
			       &l->producer_size))
		return -EINVAL;
	l->consumer_size = PAGE_ALIGN((u64)nr_cpu_ids * MEMMON_CONSUMER_STRIDE);
	l->producer_offset = l->consumer_size;
	return 0;
}

/* The node to allocate a CPU's pages on; any node if it has no memory. */
static int memmon_cpu_node(unsigned int cpu)
{
	int node;

	if (!cpu_possible(cpu))
		return NUMA_NO_NODE;
	node = cpu_to_node(cpu);
	if (node == NUMA_NO_NODE || !node_state(node, N_MEMORY))
		return NUMA_NO_NODE;
	return node;
}

/* Index in rings->pages of the first page of CPU @cpu's block. */
static unsigned long memmon_block_index(const struct memmon_rings *rings,
					unsigned int cpu)
{
	unsigned long data_pages = rings->layout.ring_size >> PAGE_SHIFT;

	return MEMMON_HEADER_PAGES + cpu * (1 + 2 * data_pages);
}

/* Free every page of @rings->pages once (the aliases are skipped). */
static void memmon_rings_free_pages(struct memmon_rings *rings)
{
	unsigned long data_pages = rings->layout.ring_size >> PAGE_SHIFT;
	unsigned long i, base;
	unsigned int cpu;

	if (rings->pages[0])
		__free_page(rings->pages[0]);
	for (cpu = 0; cpu < rings->layout.nr_cpus; cpu++) {
		base = memmon_block_index(rings, cpu);
		/* The ring page, then the first copy of the data pages. */
		for (i = 0; i <= data_pages; i++)
			if (rings->pages[base + i])
				__free_page(rings->pages[base + i]);
	}
}

/* Fill rings->pages: every page allocated once, data pages entered twice. */
static int memmon_rings_alloc_pages(struct memmon_rings *rings)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN |
			  __GFP_RETRY_MAYFAIL;
	unsigned long data_pages = rings->layout.ring_size >> PAGE_SHIFT;
	unsigned long i, base;
	struct page *page;
	unsigned int cpu;
	int node;

	rings->pages[0] = alloc_page(gfp);
	if (!rings->pages[0])
		return -ENOMEM;
	for (cpu = 0; cpu < rings->layout.nr_cpus; cpu++) {
		node = memmon_cpu_node(cpu);
		base = memmon_block_index(rings, cpu);
		for (i = 0; i <= data_pages; i++) {
			page = alloc_pages_node(node, gfp, 0);
			if (!page)
				return -ENOMEM;
			rings->pages[base + i] = page;
			if (i)	/* a data page: its alias, one ring later */
				rings->pages[base + i + data_pages] = page;
		}
		/* A 256 MiB ring is 64k pages: stay preemptible, killable. */
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

static void memmon_ring_wake(struct irq_work *work)
{
	struct memmon_cpu_ring *cr = container_of(work, struct memmon_cpu_ring, wake);

	/* [E]: takes the wait-queue lock, after the producer's [B]. */
	wake_up_all(cr->wq);
}

static void memmon_rings_fill_header(struct memmon_rings *rings)
{
	struct memmon_mmap_header *h = rings->producer;
	const struct memmon_layout *l = &rings->layout;

	h->magic = MEMMON_MMAP_MAGIC;
	h->abi_major = MEMMON_ABI_MAJOR;
	h->abi_minor = MEMMON_ABI_MINOR;
	h->header_size = sizeof(*h);
	h->nr_cpus = l->nr_cpus;
	h->ring_size = l->ring_size;
	h->ring_stride = l->ring_stride;
	h->ring_data_offset = l->ring_data_offset;
	h->clock = MEMMON_CLOCK_MONOTONIC;
	h->page_size = PAGE_SIZE;
}

/**
 * memmon_rings_alloc() - allocate and initialise a session's rings
 * @ring_size: data bytes per CPU: a power of two, at least PAGE_SIZE
 * @wakeup_bytes: the poll watermark, see memmon_ring_init()
 * @overwrite: the rings keep their newest records (MEMMON_FULL_OVERWRITE)
 * @wq: the session's wait queue, woken by the rings' irq_work
 *
 * One ring per possible CPU; a CPU id that can never be online (a hole in
 * cpu_possible_mask) still gets its block in the mapping, which stays empty.
 *
 * Context: process context, may sleep; allocates nr_cpu_ids * (ring_size +
 * 2 pages) + 1 page, charged to the caller's memory cgroup.
 * Return: the rings, or ERR_PTR(-ENOMEM), ERR_PTR(-EINVAL) for a bad size,
 * ERR_PTR(-EINTR) if the caller was killed while allocating.
 */
struct memmon_rings *memmon_rings_alloc(u64 ring_size, u64 wakeup_bytes,
					bool overwrite, wait_queue_head_t *wq)
{
	struct memmon_rings *rings;
	struct memmon_cpu_ring *cr;
	unsigned int cpu;
	u8 *block;
	int err;

	rings = kzalloc(sizeof(*rings), GFP_KERNEL_ACCOUNT);
	if (!rings)
		return ERR_PTR(-ENOMEM);
	err = memmon_layout_compute(&rings->layout, ring_size);
	if (err)
		goto err_free_rings;
	/* vmap() counts pages in an unsigned int. */
	err = -ENOMEM;
	rings->nr_pages = memmon_block_index(rings, rings->layout.nr_cpus);
	if (rings->nr_pages > UINT_MAX)
		goto err_free_rings;

	/* NOWARN: with many CPUs and big rings this may exceed kvmalloc's limit. */
	rings->pages = kvcalloc(rings->nr_pages, sizeof(*rings->pages),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!rings->pages)
		goto err_free_rings;
	err = memmon_rings_alloc_pages(rings);
	if (err)
		goto err_free_pages;

	err = -ENOMEM;
	rings->producer = vmap(rings->pages, rings->nr_pages,
			       VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!rings->producer)
		goto err_free_pages;
	rings->consumer = vmalloc_user(rings->layout.consumer_size);
	if (!rings->consumer)
		goto err_unmap;
	rings->cpu = alloc_percpu_gfp(struct memmon_cpu_ring, GFP_KERNEL_ACCOUNT);
	if (!rings->cpu)
		goto err_free_consumer;

	memmon_rings_fill_header(rings);
	for_each_possible_cpu(cpu) {
		cr = per_cpu_ptr(rings->cpu, cpu);
		block = (u8 *)rings->producer + MEMMON_HEADER_PAGES * PAGE_SIZE +
			cpu * rings->layout.ring_stride;
		memmon_ring_init(&cr->ring, (struct memmon_ring_page *)block,
				 rings->consumer + cpu * (MEMMON_CONSUMER_STRIDE / sizeof(u64)),
				 block + rings->layout.ring_data_offset,
				 ring_size, wakeup_bytes, cpu);
		if (overwrite)
			memmon_ring_set_overwrite(&cr->ring);
		init_irq_work(&cr->wake, memmon_ring_wake);
		cr->wq = wq;
	}
	return rings;

err_free_consumer:
	vfree(rings->consumer);
err_unmap:
	vunmap(rings->producer);
err_free_pages:
	memmon_rings_free_pages(rings);
	kvfree(rings->pages);
err_free_rings:
	kfree(rings);
	return ERR_PTR(err);
}

/**
 * memmon_rings_free() - free what memmon_rings_alloc() returned
 * @rings: the rings, or NULL
 *
 * Waits for the rings' pending wakeups first.
 *
 * Context: process context, may sleep. No producer may be inside any ring
 * (the caller waited for a grace period after unpublishing the session), and
 * no VMA maps them (each VMA holds a session reference).
 */
void memmon_rings_free(struct memmon_rings *rings)
{
	unsigned int cpu;

	if (!rings)
		return;
	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(rings->cpu, cpu)->wake);
	free_percpu(rings->cpu);
	vfree(rings->consumer);
	vunmap(rings->producer);
	memmon_rings_free_pages(rings);
	kvfree(rings->pages);
	kfree(rings);
}

/**
 * memmon_mmap_check() - is this one of the two mappings we offer?
 * @l: the layout the mapping must match
 * @vma: the new mapping; its flags are adjusted when accepted
 *
 * Accepts exactly two mappings, both MAP_SHARED: offset 0 with
 * consumer_size bytes (may be writable), and producer_offset with
 * producer_size bytes (read-only: VM_MAYWRITE is cleared so that mprotect()
 * cannot make it writable later). Neither may be executable (VM_MAYEXEC is
 * cleared too), grow, or be copied into a fork child.
 *
 * Context: the mmap file operation: process context, mmap_lock held for
 * writing.
 * Return: MEMMON_AREA_CONSUMER or MEMMON_AREA_PRODUCER; -EINVAL for a
 * private mapping or any other offset/size; -EPERM for a writable producer
 * or an executable mapping.
 */
int memmon_mmap_check(const struct memmon_layout *l, struct vm_area_struct *vma)
{
	unsigned long size = vma->vm_end - vma->vm_start;
	int area;

	/* MAP_SHARED only: a private copy of positions means nothing. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_pgoff == 0 && size == l->consumer_size) {
		if (vma->vm_flags & VM_EXEC)
			return -EPERM;
		memmon_vm_flags_clear(vma, VM_MAYEXEC);
		area = MEMMON_AREA_CONSUMER;
	} else if (vma->vm_pgoff == l->producer_offset >> PAGE_SHIFT &&
		   size == l->producer_size) {
		if (vma->vm_flags & (VM_WRITE | VM_EXEC))
			return -EPERM;
		memmon_vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
		area = MEMMON_AREA_PRODUCER;
	} else {
		return -EINVAL;
	}
	/*
	 * DONTEXPAND: mremap() cannot grow it (-EFAULT there). DONTCOPY: not
	 * inherited across fork(). DONTDUMP: no ring contents in core dumps.
	 */
	memmon_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	return area;
}

/**
 * memmon_rings_remap() - insert an area's pages into a checked mapping
 * @rings: the rings
 * @vma: a mapping memmon_mmap_check() accepted for @rings' layout
 * @area: what memmon_mmap_check() returned
 *
 * Context: the mmap file operation: process context, mmap_lock held for
 * writing.
 * Return: 0 or an error of remap_vmalloc_range().
 */
int memmon_rings_remap(struct memmon_rings *rings, struct vm_area_struct *vma,
		       int area)
{
	void *kaddr = area == MEMMON_AREA_PRODUCER ? rings->producer :
						     (void *)rings->consumer;

	/* The whole VMA from the start of the area: sizes were checked. */
	return remap_vmalloc_range(vma, kaddr, 0);
}

/**
 * memmon_rings_hold_records() - does any ring hold records to read?
 * @rings: the session's rings
 *
 * Unlike memmon_rings_readable(), a consumer position out of range is not
 * a reason: the tick of prompt delivery asks, and waking a reader every
 * tick because a hostile consumer scribbled its positions is only a cost.
 *
 * Context: any; reads userspace-writable positions, trusting none.
 * Pairs with: [B] through [C] here.
 * Return: true if some ring holds between 1 and ring_size unread bytes.
 */
bool memmon_rings_hold_records(struct memmon_rings *rings)
{
	struct memmon_ring *r;
	unsigned int cpu;
	u64 prod, cons;

	for_each_possible_cpu(cpu) {
		r = &per_cpu_ptr(rings->cpu, cpu)->ring;
		/* [C], pairs with [B] in __memmon_ring_put(). */
		prod = smp_load_acquire(&r->page->producer_pos);
		cons = READ_ONCE(*r->consumer_pos);
		if (prod != cons && prod - cons <= r->size)
			return true;
	}
	return false;
}

/**
 * memmon_rings_readable() - does any ring hold something worth waking for?
 * @rings: the rings
 * @watermark: bytes a ring must hold (1: anything at all)
 *
 * True when a ring holds at least @watermark bytes, or holds anything while
 * events are lost and not yet reported (the LOST record will follow the
 * next event; an empty ring with a loss pending has nothing to read yet, and
 * reporting it readable would make a poller spin). A consumer position out
 * of range counts as readable: the reader has to resync.
 *
 * Context: any; reads userspace-writable positions, trusting none.
 * Pairs with: [B] through [C] here; [E] with the caller's wait-queue
 * registration done before this is called.
 * Return: true if readable.
 */
bool memmon_rings_readable(struct memmon_rings *rings, u64 watermark)
{
	struct memmon_ring *r;
	unsigned int cpu;
	u64 prod, cons;

	for_each_possible_cpu(cpu) {
		r = &per_cpu_ptr(rings->cpu, cpu)->ring;
		/* [C], pairs with [B] in __memmon_ring_put(). */
		prod = smp_load_acquire(&r->page->producer_pos);
		cons = READ_ONCE(*r->consumer_pos);
		if (prod == cons)
			continue;
		if (prod - cons >= watermark || READ_ONCE(r->page->lost_pending))
			return true;
	}
	return false;
}

/**
 * memmon_rings_produced() - the sum of every ring's producer position
 * @rings: the rings
 *
 * It grows with every record committed anywhere and never otherwise:
 * unlike memmon_rings_readable(), nothing a consumer writes moves it. A
 * blocking read() waits for it to move, so that a process scribbling on
 * the consumer positions through a shared mapping cannot make the reader
 * spin (each scribble would look like a position to resync from).
 *
 * Context: any. Pairs with: [B] through [C] here.
 * Return: the sum (wrapping; compared for equality only).
 */
u64 memmon_rings_produced(struct memmon_rings *rings)
{
	unsigned int cpu;
	u64 sum = 0;

	for_each_possible_cpu(cpu)
		/* [C], pairs with [B] in __memmon_ring_put(). */
		sum += smp_load_acquire(&per_cpu_ptr(rings->cpu, cpu)->ring.page->producer_pos);
	return sum;
}
