// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Sessions: the fd of /dev/memmon and its ioctls. Mapping and consuming
 * the rings is ring.c.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "internal.h"

bool libmm_opts_valid(const void *opts, size_t user_sz, size_t known_sz)
{
	const char *p = opts;
	size_t i;

	if (user_sz < sizeof(size_t))
		return false;
	for (i = known_sz; i < user_sz; i++)
		if (p[i])
			return false;
	return true;
}

static __u64 libmm_clock_monotonic(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static struct memmon_session *session_alloc(void)
{
	struct memmon_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = -1;
	s->clock = libmm_clock_monotonic;
	return s;
}

static int libmm_ioctl(struct memmon_session *s, unsigned long cmd, void *arg)
{
	if (!s)
		return libmm_err(-EINVAL);
	if (s->fd < 0)
		return libmm_err(-EBADF);
	if (ioctl(s->fd, cmd, arg) < 0)
		return libmm_err(-errno);
	return 0;
}

static int session_get_info(struct memmon_session *s)
{
	struct memmon_info info;
	int err;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	err = libmm_ioctl(s, MEMMON_IOC_GET_INFO, &info);
	if (err)
		return err;
	/* A new major is an incompatible ABI: refuse rather than misread. */
	if (info.abi_major != MEMMON_ABI_MAJOR)
		return libmm_err(-EPROTONOSUPPORT);
	s->info = info;
	return 0;
}

struct memmon_session *memmon_session__open(const struct memmon_session_opts *opts)
{
	struct memmon_session *s;
	const char *path;
	int err;

	if (!OPTS_VALID(opts, memmon_session_opts))
		return libmm_err_ptr(-EINVAL);
	path = OPTS_GET(opts, path, NULL);
	if (!path)
		path = MEMMON_DEVICE_PATH;

	s = session_alloc();
	if (!s)
		return libmm_err_ptr(-ENOMEM);
	s->own_fd = true;
	s->own_maps = true;
	s->fd = open(path, O_RDWR | O_CLOEXEC);
	if (s->fd < 0) {
		err = -errno;
		goto err_free;
	}
	err = session_get_info(s);
	if (err)
		goto err_close;
	if (OPTS_GET(opts, ring_size, 0) || OPTS_GET(opts, full_policy, 0) ||
	    OPTS_GET(opts, wait_timeout_ms, 0)) {
		struct memmon_config cfg = {
			.size = sizeof(cfg),
			.full_policy = OPTS_GET(opts, full_policy, 0),
			.ring_size = OPTS_GET(opts, ring_size, 0),
			.wakeup_bytes = OPTS_GET(opts, wakeup_bytes, 0),
			.wait_timeout_ms = OPTS_GET(opts, wait_timeout_ms, 0),
		};

		err = libmm_ioctl(s, MEMMON_IOC_CONFIGURE, &cfg);
		if (err)
			goto err_close;
		err = session_get_info(s);
		if (err)
			goto err_close;
		s->overwrite = cfg.full_policy == MEMMON_FULL_OVERWRITE;
	}
	return s;

err_close:
	close(s->fd);
err_free:
	free(s);
	return libmm_err_ptr(err);
}

struct memmon_session *
memmon__session_from_mapping(const struct memmon_info *info, void *cons,
			     void *prod, int fd)
{
	struct memmon_session *s;
	int err;

	s = session_alloc();
	if (!s)
		return libmm_err_ptr(-ENOMEM);
	s->fd = fd;
	s->info = *info;
	err = libmm_session_attach(s, cons, info->consumer_size, prod,
				info->producer_size);
	if (err) {
		memmon_session__close(s);
		return libmm_err_ptr(err);
	}
	return s;
}

void memmon__session_set_clock(struct memmon_session *s,
			       __u64 (*clock)(void *ctx), void *ctx)
{
	s->clock = clock ? clock : libmm_clock_monotonic;
	s->clock_ctx = ctx;
}

void memmon_session__close(struct memmon_session *s)
{
	int saved = errno;

	if (!s)
		return;
	libmm_session_detach(s);
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	free(s);
	errno = saved;
}

int memmon_session__fd(const struct memmon_session *s)
{
	if (!s)
		return libmm_err(-EINVAL);
	return s->fd;
}

const struct memmon_info *memmon_session__info(const struct memmon_session *s)
{
	if (!s)
		return libmm_err_ptr(-EINVAL);
	return &s->info;
}

unsigned int memmon_session__nr_cpus(const struct memmon_session *s)
{
	return s ? s->info.nr_cpus : 0;
}

int memmon_session__configure(struct memmon_session *s, __u64 ring_size,
			      __u64 wakeup_bytes)
{
	struct memmon_config cfg = {
		.size = sizeof(cfg),
		.ring_size = ring_size,
		.wakeup_bytes = wakeup_bytes,
	};
	int err;

	if (s && s->mapped)
		return libmm_err(-EBUSY);
	err = libmm_ioctl(s, MEMMON_IOC_CONFIGURE, &cfg);
	if (err)
		return err;
	return session_get_info(s);
}

static int watch_ioctl(struct memmon_session *s, unsigned long cmd, pid_t pid,
		       __u32 flags)
{
	struct memmon_watch w = {
		.size = sizeof(w),
		.flags = flags,
		.pid = (__u32)pid,
	};

	if (pid < 0)
		return libmm_err(-EINVAL);
	return libmm_ioctl(s, cmd, &w);
}

int memmon_session__watch_add(struct memmon_session *s, pid_t pid, __u32 flags)
{
	return watch_ioctl(s, MEMMON_IOC_WATCH_ADD, pid, flags);
}

int memmon_session__watch_del(struct memmon_session *s, pid_t pid)
{
	return watch_ioctl(s, MEMMON_IOC_WATCH_DEL, pid, 0);
}

int memmon_session__watch_list(struct memmon_session *s,
			       struct memmon_watch_entry *entries,
			       unsigned int cap)
{
	struct memmon_watch_list wl = {
		.size = sizeof(wl),
		.count = entries ? cap : 0,
		.entries = (__u64)(uintptr_t)entries,
	};
	int err;

	err = libmm_ioctl(s, MEMMON_IOC_WATCH_LIST, &wl);
	if (err)
		return err;
	return wl.count > INT32_MAX ? INT32_MAX : (int)wl.count;
}

/*
 * SET_EVENTS with the stack settings of memmon_session__set_stack(). A
 * module older than ABI 1.5 takes the grown struct as long as they are 0.
 */
static int send_events(struct memmon_session *s, __u64 mask, __u64 syscalls)
{
	struct memmon_events ev = {
		.size = sizeof(ev),
		.mask = mask,
		.syscalls = syscalls,
		.stack_depth = s->stack_depth,
		.stack_flags = s->stack_flags,
	};
	int err;

	err = libmm_ioctl(s, MEMMON_IOC_SET_EVENTS, &ev);
	if (!err) {
		s->events_set = true;
		s->ev_mask = mask;
		s->ev_syscalls = syscalls;
	}
	return err;
}

int memmon_session__set_events(struct memmon_session *s, __u64 mask,
			       __u64 syscalls)
{
	if (!s)
		return libmm_err(-EINVAL);
	return send_events(s, mask, syscalls);
}

int memmon_session__set_stack(struct memmon_session *s, unsigned int depth,
			      unsigned int flags)
{
	__u32 old_depth, old_flags;
	int err;

	if (!s || depth > MEMMON_STACK_DEPTH_MAX || (flags & ~MEMMON_STACK_FLAGS_MASK))
		return libmm_err(-EINVAL);
	if ((depth || flags) && !(s->info.features & MEMMON_FEAT_USTACK))
		return libmm_err(-EOPNOTSUPP);
	old_depth = s->stack_depth;
	old_flags = s->stack_flags;
	s->stack_depth = depth;
	s->stack_flags = flags;
	if (!s->events_set)
		return 0;
	err = send_events(s, s->ev_mask, s->ev_syscalls);
	if (err) {
		s->stack_depth = old_depth;
		s->stack_flags = old_flags;
	}
	return err;
}

int memmon_session__enable(struct memmon_session *s)
{
	return libmm_ioctl(s, MEMMON_IOC_ENABLE, NULL);
}

int memmon_session__disable(struct memmon_session *s)
{
	return libmm_ioctl(s, MEMMON_IOC_DISABLE, NULL);
}

int memmon_session__stats(struct memmon_session *s,
			  struct memmon_cpu_stats *cpus, unsigned int cap)
{
	struct memmon_stats st = {
		.size = sizeof(st),
		.nr_cpus = cpus ? cap : 0,
		.cpus = (__u64)(uintptr_t)cpus,
		.cpu_stats_size = sizeof(struct memmon_cpu_stats),
	};
	int err;

	err = libmm_ioctl(s, MEMMON_IOC_GET_STATS, &st);
	if (err)
		return err;
	return (int)st.nr_cpus;
}

int memmon_session__mark(struct memmon_session *s, const void *data,
			 size_t len, __u32 flags)
{
	struct memmon_mark m = {
		.size = sizeof(m),
		.flags = flags,
		.data = (__u64)(uintptr_t)data,
		.len = (__u32)len,
	};

	if (len > UINT32_MAX || (len && !data))
		return libmm_err(-EINVAL);
	return libmm_ioctl(s, MEMMON_IOC_MARK, &m);
}

int memmon_session__map(struct memmon_session *s)
{
	void *cons, *prod;
	int err;

	if (!s)
		return libmm_err(-EINVAL);
	if (s->mapped)
		return 0;
	if (s->fd < 0)
		return libmm_err(-EBADF);
	/* The layout may have changed since open (CONFIGURE). */
	err = session_get_info(s);
	if (err)
		return err;
	if (s->info.consumer_size > SIZE_MAX || s->info.producer_size > SIZE_MAX)
		return libmm_err(-E2BIG);
	cons = mmap(NULL, s->info.consumer_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, s->fd, 0);
	if (cons == MAP_FAILED)
		return libmm_err(-errno);
	prod = mmap(NULL, s->info.producer_size, PROT_READ, MAP_SHARED, s->fd,
		    (off_t)s->info.producer_offset);
	if (prod == MAP_FAILED) {
		err = -errno;
		goto err_unmap_cons;
	}
	err = libmm_session_attach(s, cons, s->info.consumer_size, prod,
				s->info.producer_size);
	if (err)
		goto err_unmap_prod;
	return 0;

err_unmap_prod:
	munmap(prod, s->info.producer_size);
err_unmap_cons:
	munmap(cons, s->info.consumer_size);
	return libmm_err(err);
}
