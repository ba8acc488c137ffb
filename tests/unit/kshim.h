/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim.h - the kernel primitives driver/transport/ring.h uses, for host builds.
 *
 * In the kernel, local_t operations are atomic only against interrupts on
 * the same CPU, and the ring's producer-private fields are touched by one CPU
 * only. The host tests play that CPU with one thread and simulate interrupts
 * by calling a nested writer from a hook, so the local ops need no ordering:
 * they are relaxed atomics, which also keeps ThreadSanitizer informed when a
 * second thread reads the page the producer mirrors its counters into.
 *
 * The acquire/release pair maps to the __atomic builtins with the same
 * orders, i.e. the C11 model the userspace half of the protocol uses.
 *
 * Also here: kshim_ring_map(), the double mapping of the data pages that
 * driver/transport/ring_alloc.c builds with vmap(), built from a memfd mapped twice
 * back to back, with an inaccessible guard page on either side so that an
 * out-of-bounds access faults instead of passing silently.
 */
#ifndef MEMMON_TESTS_UNIT_KSHIM_H
#define MEMMON_TESTS_UNIT_KSHIM_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/types.h>

/* The kernel's own definitions: u64 is the uapi's __u64 (unsigned long long). */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* A compiler barrier, as in the kernel: no CPU fence, no code moved across. */
#define barrier()	__atomic_signal_fence(__ATOMIC_SEQ_CST)

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* The [A]/[C] loads of the ring protocol (uapi/linux/memmon.h). */
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
/* The [B]/[D] stores of the ring protocol. */
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
/*
 * Orders earlier stores before later ones, as the kernel's does. GCC
 * rejects fences under ThreadSanitizer, which does not model them; its
 * build (test_ring_stress_tsan) never overwrites, the only user.
 */
#ifdef __SANITIZE_THREAD__
#define smp_wmb()	__atomic_signal_fence(__ATOMIC_SEQ_CST)
#else
#define smp_wmb()	__atomic_thread_fence(__ATOMIC_RELEASE)
#endif

/* The kernel's type is a typedef too (asm-generic/local.h). */
typedef struct {
	long a;
} local_t;

static inline long local_read(const local_t *l)
{
	return __atomic_load_n(&l->a, __ATOMIC_RELAXED);
}

static inline void local_set(local_t *l, long i)
{
	__atomic_store_n(&l->a, i, __ATOMIC_RELAXED);
}

static inline void local_add(long i, local_t *l)
{
	__atomic_fetch_add(&l->a, i, __ATOMIC_RELAXED);
}

static inline void local_sub(long i, local_t *l)
{
	__atomic_fetch_sub(&l->a, i, __ATOMIC_RELAXED);
}

static inline void local_inc(local_t *l)
{
	local_add(1, l);
}

static inline void local_dec(local_t *l)
{
	local_sub(1, l);
}

static inline long local_add_return(long i, local_t *l)
{
	return __atomic_add_fetch(&l->a, i, __ATOMIC_RELAXED);
}

static inline long local_sub_return(long i, local_t *l)
{
	return __atomic_sub_fetch(&l->a, i, __ATOMIC_RELAXED);
}

static inline long local_inc_return(local_t *l)
{
	return local_add_return(1, l);
}

/* Returns the value found, like the kernel's: the swap happened iff == old. */
static inline long local_cmpxchg(local_t *l, long old, long new)
{
	__atomic_compare_exchange_n(&l->a, &old, new, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return old;
}

/*
 * kshim_ring_map() - @size bytes of shared memory mapped twice back to back
 * @size: a multiple of the page size
 *
 * Layout: guard page | data | the same data again | guard page.
 *
 * Return: the first data byte (data[size] aliases data[0]), or NULL.
 */
static inline u8 *kshim_ring_map(size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	u8 *base, *data = NULL;
	int fd;

	fd = memfd_create("memmon-ring", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)size))
		goto out_close;
	base = mmap(NULL, 2 * size + 2 * pg, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		goto out_close;
	if (mmap(base + pg, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    mmap(base + pg + size, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		munmap(base, 2 * size + 2 * pg);
		goto out_close;
	}
	data = base + pg;
out_close:
	close(fd);
	return data;
}

static inline void kshim_ring_unmap(u8 *data, size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (data)
		munmap(data - pg, 2 * size + 2 * pg);
}

#endif /* MEMMON_TESTS_UNIT_KSHIM_H */
