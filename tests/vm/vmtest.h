/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny TAP helpers for the in-VM tests (kselftest spirit): one line per
 * assertion, "ok N - what" or "not ok N - what", and the exact errno on
 * every error path. tests/vm/suite counts the lines.
 */
#ifndef MEMMON_TESTS_VM_VMTEST_H
#define MEMMON_TESTS_VM_VMTEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int vt_count;
static int vt_failed;

static inline void vt_report(int pass, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void vt_report(int pass, const char *fmt, ...)
{
	va_list ap;

	vt_count++;
	if (!pass)
		vt_failed++;
	printf("%sok %d - ", pass ? "" : "not ", vt_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Assert a condition. */
#define VT_OK(cond, ...) vt_report(!!(cond), __VA_ARGS__)

/* Assert that @expr (a syscall returning -1 on error) fails with @err. */
#define VT_ERRNO(expr, err, ...) do {					\
	long __r;							\
	errno = 0;							\
	__r = (long)(expr);						\
	if (__r != -1 || errno != (err))				\
		printf("# got %ld, errno %d (%s), want errno %d (%s)\n",\
		       __r, errno, strerror(errno), (err), strerror(err)); \
	vt_report(__r == -1 && errno == (err), __VA_ARGS__);		\
} while (0)

/* Assert that @expr (a syscall) succeeds (returns >= 0). */
#define VT_SUCCESS(expr, ...) do {					\
	long __r;							\
	errno = 0;							\
	__r = (long)(expr);						\
	if (__r < 0)							\
		printf("# got %ld, errno %d (%s)\n", __r, errno,	\
		       strerror(errno));				\
	vt_report(__r >= 0, __VA_ARGS__);				\
} while (0)

/* Exit status of a test program: non-zero if anything failed. */
static inline int vt_exit(void)
{
	return vt_failed ? 1 : 0;
}

#endif /* MEMMON_TESTS_VM_VMTEST_H */
