// SPDX-License-Identifier: GPL-2.0
/*
 * A program of known memory behaviour for tests/vm/t_report_more.sh. It
 * never calls malloc (no heap, no stdio) so that every mapping it makes
 * is one the test names. Built with frame pointers (tests/vm/vm.mk): the
 * leaks' call sites, leak_small() and leak_big(), are what report names;
 * anon() is always inlined so that they are the first frame outside libc.
 *
 *   w_leak2 leak LIB    maps LIB (a library, kept to the end), maps and
 *                       frees 4 x 32 KiB, leaks 3 x 64 KiB from one
 *                       function and 1 MiB from another, exits
 *   w_leak2 calls N     N mmaps and N munmaps of 4 KiB, N brk(0) calls, and
 *                       one mmap that fails (EINVAL: length 0)
 *   w_leak2 touch FILE  maps FILE and reads a byte of each page
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static inline __attribute__((always_inline)) void *anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(10);
	memset(p, 1, len);
	return p;
}

static __attribute__((noinline)) void leak_small(void)
{
	int i;

	for (i = 0; i < 3; i++)
		anon(64 << 10);
}

static __attribute__((noinline)) void leak_big(void)
{
	anon(1 << 20);
}

static __attribute__((noinline)) int do_leak(const char *lib)
{
	int fd = open(lib, O_RDONLY), i;
	struct stat st;
	void *p[4];

	if (fd < 0 || fstat(fd, &st))
		return 11;
	if (mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		 fd, 0) == MAP_FAILED)
		return 12;
	close(fd);
	for (i = 0; i < 4; i++)
		p[i] = anon(32 << 10);
	for (i = 0; i < 4; i++)
		munmap(p[i], 32 << 10);
	leak_small();
	leak_big();
	return 0;
}

static int do_calls(long n)
{
	long i;

	for (i = 0; i < n; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 13;
		munmap(p, 4096);
		syscall(SYS_brk, 0);
	}
	if (mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED)
		return 14;
	return 0;
}

static int do_touch(const char *path)
{
	int fd = open(path, O_RDONLY);
	volatile const char *p;
	struct stat st;
	long sum = 0;
	off_t o;

	if (fd < 0 || fstat(fd, &st))
		return 15;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 16;
	for (o = 0; o < st.st_size; o += 4096)
		sum += p[o];
	return sum == -1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "leak"))
		_exit(do_leak(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "calls"))
		_exit(do_calls(atol(argv[2])));
	if (argc == 3 && !strcmp(argv[1], "touch"))
		_exit(do_touch(argv[2]));
	return 2;
}
