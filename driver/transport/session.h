/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: sessions, the state behind each open file of /dev/memmon.
 */
#ifndef MEMMON_DRIVER_TRANSPORT_SESSION_H
#define MEMMON_DRIVER_TRANSPORT_SESSION_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/memmon.h>

#include "ring_alloc.h"

/**
 * struct memmon_ksession - one open file of /dev/memmon (the kernel's side
 * of a session; libmemmon's struct memmon_session is a process's handle on
 * one)
 * @ref: references: the file, and every VMA of its mappings
 * @id: bit number in session masks; memmon_sessions[@id] == this
 * @pid_ns: the opener's PID namespace (a reference is held): record
 *	tgid/tid and WATCH_LIST pids are numbers in it
 * @lock: serialises enable/disable and event changes
 * @rings_lock: serialises ring configuration and creation (a leaf: taken
 *	under mmap_lock by mmap(), so nothing else is taken inside it)
 * @read_lock: serialises read() callers
 * @wq: poll() and blocking read() wait here; the rings' irq_work wakes it
 * @rings: NULL until created; then fixed until the session is freed
 * @ring_size: configured data bytes per CPU
 * @wakeup_bytes: configured poll watermark
 * @full_wait: MEMMON_FULL_WAIT configured
 * @overwrite: MEMMON_FULL_OVERWRITE configured
 * @wait_timeout_ms: its bound on one wait
 * @wait_wq: where tasks wait for room (full_wait.c)
 * @events: mask of 1 << enum memmon_event
 * @syscalls: mask of 1 << enum memmon_sys
 * @enabled: between ENABLE and DISABLE
 * @read_cpu: the ring read() starts with next (round robin)
 * @flags: MEMMON_SESSF_*, what the opener could do at open()
 * @user: the opener's user (real uid), a reference held (user_limits.c)
 * @ring_bytes: the rings' bytes charged to @user (user_limits.c)
 * @locked_pages: of which pages charged to @user->locked_vm (user_limits.c)
 * @opener: the process that opened the session (a reference held) and
 * @opener_comm: its name then: what /proc/memmon/sessions shows
 *
 * Synchronisation:
 *
 *   field          written                       read
 *   -------------  ----------------------------  ----------------------------
 *   ref            kref ops                      -
 *   id, pid_ns,    at creation                   anyone holding a ref
 *     flags, user,
 *     opener,
 *     opener_comm
 *   ring_bytes,    user_limits.c's lock, with    user_limits.c's lock;
 *     locked_pages   @rings_lock, while !rings     the last put
 *   rings          @rings_lock, once;            producers (load-acquire,
 *                  store-release                 RCU), holders of @rings_lock
 *                                                or of a ref after it was
 *                                                seen set (load-acquire)
 *   ring_size,     @rings_lock, only while       @rings_lock; lockless once
 *     wakeup_bytes,  !rings                      rings was seen set
 *     full_wait,
 *     overwrite,
 *     wait_timeout_ms
 *   events,        @lock and memmon_sessions_lock  either lock; producers
 *     syscalls,                                    read stack_depth and
 *     stack_depth,                                 stack_faults racily
 *     stack_faults                                 (READ_ONCE)
 *   enabled        @lock and memmon_sessions_lock  either lock; racily by
 *                                                full_wait.c's waiters
 *   read_cpu       @read_lock                    @read_lock
 *
 * Producers never look at the fields above except @rings, @pid_ns and
 * @flags: they learn which sessions want what from the global masks
 * (session.c).
 * Lock order: @read_lock, then @lock, then @rings_lock (released before
 * anything else is taken) or memmon_sessions_lock, then the watch table's
 * lock. mmap() takes @rings_lock under mmap_lock: nothing is copied from or
 * to userspace under it, and it never nests the locks that attaching the
 * hooks takes (cpu hotplug, text_mutex).
 */
struct memmon_ksession {
	struct kref ref;
	unsigned int id;
	struct pid_namespace *pid_ns;
	struct mutex lock;		/* enabled, events */
	struct mutex rings_lock;	/* config and rings creation */
	struct mutex read_lock;		/* one read() at a time */
	wait_queue_head_t wq;
	/*
	 * Prompt delivery (memmon_session_wait_prepare()): while anyone waits
	 * on @wq, @flush_timer ticks every wakeup_ms and wakes them if a ring
	 * holds anything; @flush_due (set by the tick, cleared by poll() when
	 * the rings are empty) makes poll() report records below the
	 * watermark. Stopped in release before the rings go.
	 */
	struct timer_list flush_timer;
	bool flush_due;
	struct memmon_rings *rings;
	u64 ring_size;
	u64 wakeup_bytes;
	/*
	 * MEMMON_FULL_WAIT (full_wait.c): set by CONFIGURE before the rings
	 * exist, so a producer that found the rings sees them. Tasks wait on
	 * @wait_wq; poll(), read(), DISABLE and the file's release wake them.
	 */
	bool full_wait;
	/* MEMMON_FULL_OVERWRITE: set by CONFIGURE before the rings exist. */
	bool overwrite;
	u32 wait_timeout_ms;
	wait_queue_head_t wait_wq;
	u64 events;
	u64 syscalls;
	u32 stack_depth;
	bool stack_faults;
	bool enabled;
	/*
	 * 1: names went unrecorded while the session was not enabled (a
	 * WATCH_ADD before the ENABLE, renames after a DISABLE); whoever
	 * xchg()s it back to 0 while enabled records every watched process's
	 * (memmon_session_comms_pending()).
	 */
	int comm_pending;
	unsigned int read_cpu;
	u64 flags;
	struct user_struct *user;
	u64 ring_bytes;
	unsigned long locked_pages;
	struct pid *opener;
	char opener_comm[TASK_COMM_LEN];
};

int memmon_session_init(void);
void memmon_session_cleanup(void);

struct memmon_ksession *memmon_session_create(void);
void memmon_session_get(struct memmon_ksession *s);
void memmon_session_put(struct memmon_ksession *s);

struct memmon_rings *memmon_session_rings(struct memmon_ksession *s);
void memmon_session_close(struct memmon_ksession *s);

/* MEMMON_FULL_WAIT's defaults and bound on one wait (uapi). */
#define MEMMON_WAIT_TIMEOUT_DEFAULT	1000
#define MEMMON_WAIT_TIMEOUT_MAX		60000

/*
 * The consumer is in poll() or read(), so it has taken what it could: tasks
 * waiting for room look again now (MEMMON_FULL_WAIT, full_wait.c). The
 * barrier of wq_has_sleeper() pairs with the one in the waiter's
 * prepare_to_wait(): either we see it queued, or it sees the consumer
 * position the consumer stored before its syscall.
 */
static inline void memmon_session_room_made(struct memmon_ksession *s)
{
	if (s->full_wait && wq_has_sleeper(&s->wait_wq))
		wake_up_all(&s->wait_wq);
}

void memmon_session_info(struct memmon_ksession *s, struct memmon_info *info);
int memmon_session_configure(struct memmon_ksession *s,
			     const struct memmon_config *cfg);
int memmon_session_set_events(struct memmon_ksession *s,
			      const struct memmon_events *ev);
int memmon_session_enable(struct memmon_ksession *s);
void memmon_session_disable(struct memmon_ksession *s);
int memmon_session_watch(struct memmon_ksession *s, const struct memmon_watch *w,
			 bool add);
int memmon_session_mark(struct memmon_ksession *s, u32 flags,
			const void *data, u32 len);
int memmon_session_mmap(struct memmon_ksession *s, struct vm_area_struct *vma);
void memmon_session_wait_prepare(struct memmon_ksession *s);
bool memmon_session_poll_readable(struct memmon_ksession *s);
ssize_t memmon_session_read(struct memmon_ksession *s, char __user *buf,
			    size_t count, bool nonblock);
void memmon_session_stats(struct memmon_ksession *s, u32 cpu,
			  struct memmon_cpu_stats *st);

struct seq_file;
void memmon_sessions_show(struct seq_file *m);

/* An in-kernel reader's function (memmon_session_visit()). */
typedef bool (*memmon_visit_t)(void *ctx, const struct memmon_rec_header *rec,
			       u32 size);
ssize_t memmon_session_visit(struct memmon_ksession *s, memmon_visit_t fn,
			     void *ctx, bool nonblock, const bool *cancel);
void memmon_session_wake_readers(struct memmon_ksession *s);

/*
 * Shared by session*.c only: the rings, created if need be (s->rings_lock
 * held); the tick of prompt delivery (session_read.c); the names a session
 * did not record while disabled (session_watch.c).
 */
struct memmon_rings *__memmon_session_rings(struct memmon_ksession *s);
void memmon_session_flush_tick(struct timer_list *t);
void memmon_session_comms_pending(struct memmon_ksession *s);

#endif /* MEMMON_DRIVER_TRANSPORT_SESSION_H */
