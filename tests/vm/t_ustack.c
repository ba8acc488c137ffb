// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks on records (ABI 1.5, struct memmon_user_stack) and the AUXV
 * record. This program is built with frame pointers and -rdynamic
 * (tests/vm/vm.mk), so that dladdr() names its functions: the test is its
 * own workload, and every check compares a stack entry with where the code
 * really is.
 *
 *  - a raw `syscall` in inner(), called by outer(), called by main: ip[0]
 *    is the instruction after it, the walk gives outer's and main's call
 *    sites;
 *  - libc's mmap() (a wrapper that keeps no frame) from lib_caller(): ip[0]
 *    in libc, ip[1] (the stack pointer's word) in lib_caller;
 *  - stack_depth 0 gives the first entries only, a depth shorter than the
 *    recursion is cut and says so, two sessions with two depths each get
 *    their own;
 *  - fault records carry a stack only for a session with
 *    MEMMON_STACK_FAULTS, ip[0] the faulting instruction;
 *  - hostile frame pointers (a kernel address, unmapped memory, a frame
 *    that points at itself, one that points down the stack) end the walk;
 *  - AUXV equals getauxval() of the process: after an exec, and at the
 *    WATCH_ADD of a running process;
 *  - bad SET_EVENTS values are -EINVAL.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "mmtest.h"

#define MAGIC_LEN	(4096 * 7)	/* marks this test's own mmap() calls */

struct stack_rec {
	uint32_t type;
	uint32_t tgid;
	uint64_t len;			/* SYSCALL: args[1]; FAULT: addr */
	uint16_t nr, flags;
	uint64_t ip[2 + MEMMON_STACK_DEPTH_MAX];
	bool has;
};

struct seen {
	struct stack_rec recs[64];
	int n;
	struct memmon_rec_auxv auxv[4];
	uint32_t auxv_tgid[4];
	int nauxv;
};

static void collect(const struct memmon_rec_header *h, unsigned int cpu, void *arg)
{
	const struct memmon_user_stack *st = NULL;
	struct seen *s = arg;
	struct stack_rec *r;

	(void)cpu;
	if (h->type == MEMMON_REC_AUXV && s->nauxv < 4) {
		s->auxv_tgid[s->nauxv] = h->tgid;
		memcpy(&s->auxv[s->nauxv++], h, sizeof(s->auxv[0]));
		return;
	}
	if ((h->type != MEMMON_REC_SYSCALL && h->type != MEMMON_REC_FAULT) ||
	    s->n == 64)
		return;
	r = &s->recs[s->n++];
	memset(r, 0, sizeof(*r));
	r->type = h->type;
	r->tgid = h->tgid;
	if (h->type == MEMMON_REC_SYSCALL) {
		const struct memmon_rec_syscall *sc = (const void *)h;

		r->len = sc->args[1];
		if (sc->flags & MEMMON_SYSF_USTACK)
			st = (const void *)(sc + 1);
	} else {
		const struct memmon_rec_fault *f = (const void *)h;

		r->len = f->addr;
		if (f->flags & MEMMON_FAULTF_USTACK)
			st = (const void *)(f + 1);
	}
	if (!st)
		return;
	if (h->size < (const uint8_t *)st - (const uint8_t *)h + sizeof(*st) +
		      st->nr * sizeof(uint64_t) || st->nr > 2 + MEMMON_STACK_DEPTH_MAX) {
		printf("# a stack of %u entries overruns its %u-byte record\n",
		       st->nr, h->size);
		r->nr = 0xffff;
		return;
	}
	r->has = true;
	r->nr = st->nr;
	r->flags = st->flags;
	memcpy(r->ip, st->ip, st->nr * sizeof(uint64_t));
}

/* A session on this process: syscalls (mmap only) and faults. */
static int session(unsigned int depth, unsigned int flags)
{
	struct memmon_events ev = {
		.size = sizeof(ev),
		.mask = 1ULL << MEMMON_EV_SYSCALL | 1ULL << MEMMON_EV_FAULT |
			1ULL << MEMMON_EV_LIFECYCLE,
		.syscalls = 1ULL << MEMMON_SYS_MMAP,
		.stack_depth = depth,
		.stack_flags = flags,
	};
	int fd = mm_open();

	if (fd < 0)
		MM_DIE("open");
	if (ioctl(fd, MEMMON_IOC_SET_EVENTS, &ev))
		MM_DIE("SET_EVENTS depth %u", depth);
	return fd;
}

static void start(int fd, pid_t pid, uint32_t wflags)
{
	if (mm_watch(fd, MEMMON_IOC_WATCH_ADD, pid, wflags) ||
	    ioctl(fd, MEMMON_IOC_ENABLE))
		MM_DIE("watch and enable");
}

/* Everything the session holds, into @s (read(): whole records). */
static void drain(int fd, struct seen *s)
{
	static uint8_t buf[1 << 20];
	ssize_t n;

	memset(s, 0, sizeof(*s));
	ioctl(fd, MEMMON_IOC_DISABLE);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (mm_walk_buf(buf, n, collect, s) < 0)
			MM_DIE("malformed records");
}

static const struct stack_rec *find(const struct seen *s, uint32_t type,
				    uint64_t len)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->recs[i].type == type && s->recs[i].len == len)
			return &s->recs[i];
	return NULL;
}

/* The name of the function holding @ip ("" if none). */
static const char *fn_of(uint64_t ip)
{
	Dl_info di;

	if (!dladdr((void *)(uintptr_t)ip, &di) || !di.dli_sname)
		return "";
	return di.dli_sname;
}

static const char *file_of(uint64_t ip)
{
	Dl_info di;

	if (!dladdr((void *)(uintptr_t)ip, &di) || !di.dli_fname)
		return "";
	return di.dli_fname;
}

/* ip[base + i], where base counts ip[0] and the stack pointer's word. */
static uint64_t frame(const struct stack_rec *r, int i)
{
	int base = r->flags & MEMMON_USTACK_SP ? 2 : 1;

	return base + i < r->nr ? r->ip[base + i] : 0;
}

static int frames(const struct stack_rec *r)
{
	int base = r->flags & MEMMON_USTACK_SP ? 2 : 1;

	return r->nr > base ? r->nr - base : 0;
}

/* mmap(NULL, len, ...) by a raw syscall instruction; *after its address. */
static __attribute__((noinline)) long raw_mmap(size_t len, uint64_t *after)
{
	register long r10 asm("r10") = MAP_PRIVATE | MAP_ANONYMOUS;
	register long r8 asm("r8") = -1;
	register long r9 asm("r9") = 0;
	long ret;
	uint64_t at;

	asm volatile("lea 1f(%%rip), %1\n\t"
		     "syscall\n"
		     "1:"
		     : "=a"(ret), "=&r"(at)
		     : "0"((long)SYS_mmap), "D"(0L), "S"(len), "d"((long)PROT_READ),
		       "r"(r10), "r"(r8), "r"(r9)
		     : "rcx", "r11", "memory");
	*after = at;
	return ret;
}

static uint64_t raw_after;

__attribute__((noinline)) void inner(size_t len)
{
	raw_mmap(len, &raw_after);
	asm volatile("" ::: "memory");	/* not a tail call */
}

__attribute__((noinline)) void outer(size_t len)
{
	inner(len);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void lib_caller(size_t len)
{
	if (mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		MM_DIE("mmap");
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void recurse(int n, size_t len)
{
	if (n)
		recurse(n - 1, len);
	else
		lib_caller(len);
	asm volatile("" ::: "memory");
}

static volatile char *touch_page;

__attribute__((noinline)) void toucher(void)
{
	touch_page[0] = 1;
	asm volatile("" ::: "memory");
}

/* mmap(len) by a raw syscall with rbp = @fp: a broken frame chain. */
static void hostile_mmap(size_t len, unsigned long fp)
{
	register long r10 asm("r10") = MAP_PRIVATE | MAP_ANONYMOUS;
	register long r8 asm("r8") = -1;
	register long r9 asm("r9") = 0;
	long ret;

	asm volatile("push %%rbp\n\t"
		     "mov %[fp], %%rbp\n\t"
		     "syscall\n\t"
		     "pop %%rbp"
		     : "=a"(ret)
		     : "0"((long)SYS_mmap), "D"(0L), "S"(len), "d"((long)PROT_READ),
		       "r"(r10), "r"(r8), "r"(r9), [fp] "r"(fp)
		     : "rcx", "r11", "memory");
	(void)ret;
}

void test_calls(void);
void test_depths(void);
void test_faults(void);

void test_calls(void)
{
	const struct stack_rec *r;
	struct seen s;
	int fd = session(8, 0);

	start(fd, 0, 0);
	outer(MAGIC_LEN);
	lib_caller(MAGIC_LEN + 4096);
	drain(fd, &s);
	close(fd);

	r = find(&s, MEMMON_REC_SYSCALL, MAGIC_LEN);
	VT_OK(r && r->has, "a raw syscall's record carries a user stack");
	if (!r || !r->has)
		return;
	VT_OK(r->ip[0] == raw_after,
	      "ip[0] is the instruction after the syscall (%#llx, want %#llx)",
	      (unsigned long long)r->ip[0], (unsigned long long)raw_after);
	VT_OK(r->flags & MEMMON_USTACK_SP, "the stack pointer's word is there");
	VT_OK(!strcmp(fn_of(frame(r, 0)), "inner") &&
	      !strcmp(fn_of(frame(r, 1)), "outer") &&
	      !strcmp(fn_of(frame(r, 2)), "test_calls") &&
	      !strcmp(fn_of(frame(r, 3)), "main"),
	      "the frame walk gives inner, outer, test_calls, main (%s, %s, %s, %s)",
	      fn_of(frame(r, 0)), fn_of(frame(r, 1)), fn_of(frame(r, 2)),
	      fn_of(frame(r, 3)));
	VT_OK(!(r->flags & MEMMON_USTACK_TRUNCATED), "not truncated at depth 8");

	r = find(&s, MEMMON_REC_SYSCALL, MAGIC_LEN + 4096);
	VT_OK(r && r->has && strstr(file_of(r->ip[0]), "libc"),
	      "libc's mmap(): ip[0] is in libc (%s)", r ? file_of(r->ip[0]) : "-");
	VT_OK(r && r->has && (r->flags & MEMMON_USTACK_SP) &&
	      !strcmp(fn_of(r->ip[1]), "lib_caller"),
	      "the frameless wrapper's return address names its caller (%s)",
	      r ? fn_of(r->ip[1]) : "-");
	VT_OK(r && r->has && !strcmp(fn_of(frame(r, 0)), "test_calls"),
	      "then the walk goes on from the caller's frame (%s)",
	      r ? fn_of(frame(r, 0)) : "-");
}

void test_depths(void)
{
	const struct stack_rec *a, *b;
	struct seen sa, sb;
	int fa = session(0, 0), fb = session(3, 0);
	int fc;

	start(fa, 0, 0);
	start(fb, 0, 0);
	recurse(10, MAGIC_LEN + 2 * 4096);
	drain(fa, &sa);
	drain(fb, &sb);
	close(fa);
	close(fb);
	a = find(&sa, MEMMON_REC_SYSCALL, MAGIC_LEN + 2 * 4096);
	b = find(&sb, MEMMON_REC_SYSCALL, MAGIC_LEN + 2 * 4096);
	VT_OK(a && a->has && a->nr == 2 && frames(a) == 0 &&
	      !(a->flags & MEMMON_USTACK_TRUNCATED),
	      "depth 0: ip[0] and the stack pointer's word only (nr %d)", a ? a->nr : -1);
	VT_OK(b && b->has && frames(b) == 3 && (b->flags & MEMMON_USTACK_TRUNCATED),
	      "depth 3 in an 11-deep recursion: 3 frames, truncated (%d, flags %#x)",
	      b ? frames(b) : -1, b ? b->flags : 0);
	VT_OK(b && !strcmp(fn_of(b->ip[1]), "lib_caller") &&
	      !strcmp(fn_of(frame(b, 0)), "recurse"),
	      "the same call site in both sessions");

	/* A depth over the limit and an unknown flag are refused. */
	fc = mm_open();
	{
		struct memmon_events ev = {
			.size = sizeof(ev), .mask = 1ULL << MEMMON_EV_SYSCALL,
			.syscalls = 1ULL << MEMMON_SYS_MMAP,
			.stack_depth = MEMMON_STACK_DEPTH_MAX + 1,
		};

		VT_ERRNO(ioctl(fc, MEMMON_IOC_SET_EVENTS, &ev), EINVAL,
			 "stack_depth %d is -EINVAL", MEMMON_STACK_DEPTH_MAX + 1);
		ev.stack_depth = 1;
		ev.stack_flags = 1U << 31;
		VT_ERRNO(ioctl(fc, MEMMON_IOC_SET_EVENTS, &ev), EINVAL,
			 "an unknown stack flag is -EINVAL");
		ev.stack_flags = MEMMON_STACK_FAULTS;
		ev.stack_depth = MEMMON_STACK_DEPTH_MAX;
		VT_SUCCESS(ioctl(fc, MEMMON_IOC_SET_EVENTS, &ev),
			   "the largest depth with fault stacks is accepted");
	}
	close(fc);
}

void test_faults(void)
{
	const struct stack_rec *a, *b;
	struct seen sa, sb;
	int fa = session(4, MEMMON_STACK_FAULTS), fb = session(4, 0);
	uint64_t addr;

	touch_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (touch_page == MAP_FAILED)
		MM_DIE("mmap");
	addr = (uintptr_t)touch_page;
	start(fa, 0, 0);
	start(fb, 0, 0);
	toucher();
	drain(fa, &sa);
	drain(fb, &sb);
	close(fa);
	close(fb);
	a = find(&sa, MEMMON_REC_FAULT, addr);
	b = find(&sb, MEMMON_REC_FAULT, addr);
	/*
	 * toucher() is a leaf, built without a frame even here (GCC keeps
	 * none where nothing needs it): its return address is the stack
	 * pointer's word, then the walk goes on from test_faults's frame.
	 */
	VT_OK(a && a->has && !strcmp(fn_of(a->ip[0]), "toucher") &&
	      (a->flags & MEMMON_USTACK_SP) && !strcmp(fn_of(a->ip[1]), "test_faults") &&
	      !strcmp(fn_of(frame(a, 0)), "main"),
	      "MEMMON_STACK_FAULTS: the fault's stack is toucher <- test_faults <- main "
	      "(%s, %s, %s)", a ? fn_of(a->ip[0]) : "-", a ? fn_of(a->ip[1]) : "-",
	      a ? fn_of(frame(a, 0)) : "-");
	VT_OK(b && !b->has, "without it the same fault carries none");
}

static void test_hostile(void)
{
	static const struct {
		const char *what;
		unsigned long fp;
		int frames;	/* what the walk may give at most */
	} cases[] = {
		{ "a kernel address", 0xffffffff81000000UL, 0 },
		{ "unmapped memory", 0x10000UL, 0 },
		{ "a misaligned pointer", 0, 0 },	/* set below */
		{ "a frame pointing at itself", 0, 1 },
		{ "a frame pointing down the stack", 0, 1 },
	};
	unsigned long loop[2], down[2], below[2];
	const struct stack_rec *r;
	struct seen s;
	unsigned int i;
	int fd = session(MEMMON_STACK_DEPTH_MAX, 0);

	loop[0] = (unsigned long)loop;		/* [fp] = fp */
	loop[1] = (unsigned long)(uintptr_t)&test_hostile;
	below[0] = 0;
	below[1] = 0;
	down[0] = (unsigned long)below;		/* below < down on this stack? */
	down[1] = (unsigned long)(uintptr_t)&test_hostile;
	start(fd, 0, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned long fp = cases[i].fp;

		if (i == 2)
			fp = (unsigned long)loop + 3;
		else if (i == 3)
			fp = (unsigned long)loop;
		else if (i == 4)
			fp = (unsigned long)down;
		hostile_mmap(MAGIC_LEN + (8 + i) * 4096, fp);
	}
	drain(fd, &s);
	close(fd);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = find(&s, MEMMON_REC_SYSCALL, MAGIC_LEN + (8 + i) * 4096);
		VT_OK(r && r->has && frames(r) <= cases[i].frames,
		      "rbp at %s: the walk stops (%d frames)", cases[i].what,
		      r ? frames(r) : -1);
	}
}

static void test_auxv(const char *self)
{
	struct memmon_rec_auxv want;
	int p[2], go[2], fd, i, last, found = 0;
	struct seen s;
	pid_t pid;
	char b;

	/* At WATCH_ADD of a running process: this one. */
	fd = session(0, 0);
	start(fd, 0, 0);
	drain(fd, &s);
	close(fd);
	for (i = 0; i < s.nauxv; i++)
		if (s.auxv_tgid[i] == (uint32_t)getpid() &&
		    s.auxv[i].phdr == getauxval(AT_PHDR) &&
		    s.auxv[i].phnum == getauxval(AT_PHNUM) &&
		    s.auxv[i].entry == getauxval(AT_ENTRY) &&
		    s.auxv[i].base == getauxval(AT_BASE) &&
		    s.auxv[i].vdso == getauxval(AT_SYSINFO_EHDR))
			found++;
	VT_OK(found == 1, "WATCH_ADD of a running process: one AUXV, its getauxval()");

	/* After an exec: the child reports its own getauxval() on a pipe. */
	if (pipe(p) || pipe(go))
		MM_DIE("pipe");
	pid = fork();
	if (!pid) {
		char arg[16];

		close(p[0]);
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		snprintf(arg, sizeof(arg), "%d", p[1]);
		execl(self, self, "--auxv", arg, (char *)NULL);
		_exit(2);
	}
	close(p[1]);
	close(go[0]);
	fd = session(0, 0);
	start(fd, pid, 0);
	if (write(go[1], "g", 1) != 1 || read(p[0], &want, sizeof(want)) != sizeof(want))
		MM_DIE("the child's auxv");
	waitpid(pid, NULL, 0);
	drain(fd, &s);
	close(fd);
	/*
	 * One at the WATCH_ADD (the image before exec), one after the exec:
	 * the later by time (read() goes CPU by CPU, not in time order).
	 */
	found = 0;
	last = -1;
	for (i = 0; i < s.nauxv; i++) {
		if (s.auxv_tgid[i] != (uint32_t)pid)
			continue;
		found++;
		if (last < 0 || s.auxv[i].hdr.time_ns > s.auxv[last].hdr.time_ns)
			last = i;
	}
	i = last < 0 ? 0 : last;
	VT_OK(found == 2 && s.auxv_tgid[i] == (uint32_t)pid &&
	      s.auxv[i].phdr == want.phdr && s.auxv[i].phent == want.phent &&
	      s.auxv[i].phnum == want.phnum && s.auxv[i].entry == want.entry &&
	      s.auxv[i].base == want.base && s.auxv[i].vdso == want.vdso,
	      "watched, then exec'd: two AUXV, the last the new image's getauxval() "
	      "(%d of %d)", found, s.nauxv);
}

int main(int argc, char **argv)
{
	struct memmon_info info;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "--auxv")) {
		struct memmon_rec_auxv a = {
			.phdr = getauxval(AT_PHDR), .phent = getauxval(AT_PHENT),
			.phnum = getauxval(AT_PHNUM), .entry = getauxval(AT_ENTRY),
			.base = getauxval(AT_BASE), .vdso = getauxval(AT_SYSINFO_EHDR),
		};

		return write(atoi(argv[2]), &a, sizeof(a)) == sizeof(a) ? 0 : 1;
	}
	fd = mm_open();
	if (fd < 0)
		MM_DIE("open");
	mm_info(fd, &info);
	close(fd);
	VT_OK(info.features & MEMMON_FEAT_USTACK, "the module offers MEMMON_FEAT_USTACK");
	VT_OK(info.abi_major == MEMMON_ABI_MAJOR && info.abi_minor >= 5, "ABI >= 1.5");
	test_calls();
	test_depths();
	test_faults();
	test_hostile();
	test_auxv("/proc/self/exe");
	printf("# %d passed, %d failed\n", vt_count - vt_failed, vt_failed);
	return vt_failed ? 1 : 0;
}
