// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: /proc/memmon, a text interface for shells and quick looks.
 *
 *   /proc/memmon/watch-pids  write "PID" to watch a process, "-PID" to stop
 *                            (several, blank-separated, per write); read the
 *                            list, one PID per line
 *   /proc/memmon/events      one line per event: time, PID/TID, the event
 *                            and its decoded fields; read() blocks until
 *                            there is one, unless O_NONBLOCK (-EAGAIN)
 *   /proc/memmon/stats       hook state, events lost for want of kretprobe
 *                            instances, the gates (hooks.c), and this
 *                            interface's ring counters
 *
 * All three are root's only (0600). Behind them is one ordinary session
 * (session.c), created on first use and kept until the module goes: it is
 * enabled while it watches something, so an idle /proc/memmon costs no
 * hook. PIDs are read and written in the PID namespace of the task that
 * first used /proc/memmon; other namespaces get -EPERM.
 *
 * A client of the session API (transport/session.h) and of the hooks'
 * statistics (instr.h), nothing more. events reads the session's records
 * in the kernel through memmon_session_visit(), ring by ring (lines of one
 * CPU in order, CPUs not merged: sort on the first column), each made a
 * line by procfs_text.c. A line that does not fit the caller's buffer is
 * kept for the next read(), so no event is cut.
 *
 * Unload: proc files do not pin the module; remove_proc_subtree() waits
 * for read()s in progress, so memmon_procfs_exit() first wakes the blocked
 * ones (memmon_proc_dying).
 */
#include "main.h"
#include "instr.h"
#include "procfs_text.h"
#include "transport/session.h"
#include "transport/watch.h"

#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/kdev_t.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

static bool procfs = true;
/* On by default: root's shell gets a look without a tool; off leaves only
 * /dev/memmon (no session slot ever taken by /proc/memmon).
 */
module_param(procfs, bool, 0444);
MODULE_PARM_DESC(procfs,
		 "Create /proc/memmon (watch-pids, events, stats); 0: /dev/memmon only");

#define MEMMON_PROC_WRITE_MAX	256	/* bytes of one write to watch-pids */
/* A line: the longest is an EXEC or PATH line with a PATH_MAX path. */
#define MEMMON_PROC_BUF		(PATH_MAX + 256)

/*
 * memmon_proc_lock protects memmon_proc_sess (created once, freed at exit)
 * and the enable/disable decisions. memmon_proc_dying is set once at exit,
 * before the readers are woken.
 */
static DEFINE_MUTEX(memmon_proc_lock);
static struct memmon_ksession *memmon_proc_sess;
static bool memmon_proc_dying;
static struct proc_dir_entry *memmon_proc_dir;

/* The session, created on first use. */
static struct memmon_ksession *memmon_proc_session(void)
{
	struct memmon_ksession *s;

	mutex_lock(&memmon_proc_lock);
	s = memmon_proc_sess;
	if (!s) {
		s = memmon_session_create();
		if (!IS_ERR(s))
			memmon_proc_sess = s;
	}
	mutex_unlock(&memmon_proc_lock);
	if (!IS_ERR(s) && s->pid_ns != task_active_pid_ns(current))
		return ERR_PTR(-EPERM);
	return s;
}

/* Enabled exactly while something is watched. memmon_proc_lock held. */
static int __memmon_proc_update(struct memmon_ksession *s)
{
	u32 n = memmon_watch_list(s->id, s->pid_ns, NULL, 0);

	if (n)
		return memmon_session_enable(s);
	memmon_session_disable(s);
	return 0;
}

/* ------------------------------------------------------------------
 * watch-pids
 */

static int memmon_pids_show(struct seq_file *m, void *v)
{
	struct memmon_ksession *s = m->private;
	struct memmon_watch_entry *e;
	u32 cap = memmon_watch_max(), n, i;

	e = kvmalloc_array(cap, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	n = min(memmon_watch_list(s->id, s->pid_ns, e, cap), cap);
	for (i = 0; i < n; i++)
		seq_printf(m, "%u\n", e[i].pid);
	kvfree(e);
	return 0;
}

static int memmon_pids_open(struct inode *inode, struct file *file)
{
	struct memmon_ksession *s = memmon_proc_session();

	if (IS_ERR(s))
		return PTR_ERR(s);
	return single_open(file, memmon_pids_show, s);
}

/* One token: "PID" or "-PID", decimal, > 0. */
static int memmon_pids_one(struct memmon_ksession *s, char *tok)
{
	struct memmon_watch w = { .size = sizeof(w) };
	bool add = *tok != '-';
	int err;

	if (!add)
		tok++;
	err = kstrtou32(tok, 10, &w.pid);
	if (err)
		return err;
	/* 0 means "the caller" in the ioctl; here it is just not a PID. */
	if (!w.pid)
		return -EINVAL;
	return memmon_session_watch(s, &w, add);
}

static ssize_t memmon_pids_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	struct memmon_ksession *s = m->private;
	char *buf, *p, *tok;
	int err = 0, uerr;

	if (!count)
		return 0;
	if (count > MEMMON_PROC_WRITE_MAX)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	mutex_lock(&memmon_proc_lock);
	p = buf;
	while (!err && (tok = strsep(&p, " \t\n"))) {
		if (*tok)
			err = memmon_pids_one(s, tok);
	}
	/* Whatever was done stays done; the state follows the list. */
	uerr = __memmon_proc_update(s);
	mutex_unlock(&memmon_proc_lock);
	kfree(buf);
	return err ?: uerr ?: count;
}

static const struct proc_ops memmon_pids_ops = {
	.proc_open	= memmon_pids_open,
	.proc_read	= seq_read,
	.proc_write	= memmon_pids_write,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
};

/* ------------------------------------------------------------------
 * events
 */

struct memmon_proc_reader {
	struct memmon_ksession *s;
	struct mutex lock;	/* serialises read()s of one open file */
	size_t len;		/* text in buf */
	size_t off;		/* of which this much was read */
	char buf[MEMMON_PROC_BUF];
};

/*
 * memmon_session_visit()'s function: format one record at the end of
 * rd->buf, or leave it there (false) when its line does not fit.
 */
static bool memmon_proc_take(void *ctx, const struct memmon_rec_header *h,
			     u32 size)
{
	struct memmon_proc_reader *rd = ctx;
	size_t line;

	line = memmon_proc_line(h, size, rd->buf + rd->len,
				sizeof(rd->buf) - rd->len);
	rd->len += line;
	return line;
}

static int memmon_events_open(struct inode *inode, struct file *file)
{
	struct memmon_proc_reader *rd;
	struct memmon_ksession *s = memmon_proc_session();

	if (IS_ERR(s))
		return PTR_ERR(s);
	rd = kvzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd)
		return -ENOMEM;
	rd->s = s;
	mutex_init(&rd->lock);
	file->private_data = rd;
	return nonseekable_open(inode, file);
}

static ssize_t memmon_events_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct memmon_proc_reader *rd = file->private_data;
	ssize_t ret = 0;
	size_t n;

	if (!count)
		return 0;
	if (mutex_lock_interruptible(&rd->lock))
		return -ERESTARTSYS;
	while (!ret) {
		if (rd->off < rd->len) {
			n = min(count, rd->len - rd->off);
			if (copy_to_user(ubuf, rd->buf + rd->off, n)) {
				ret = -EFAULT;
				break;
			}
			rd->off += n;
			ret = n;
			break;
		}
		rd->len = 0;
		rd->off = 0;
		ret = memmon_session_visit(rd->s, memmon_proc_take, rd,
					   file->f_flags & O_NONBLOCK,
					   &memmon_proc_dying);
		if (ret <= 0)
			break;	/* an error, or 0: end of file */
		ret = 0;
	}
	mutex_unlock(&rd->lock);
	return ret;
}

static int memmon_events_release(struct inode *inode, struct file *file)
{
	kvfree(file->private_data);
	return 0;
}

static const struct proc_ops memmon_events_ops = {
	.proc_open	= memmon_events_open,
	.proc_read	= memmon_events_read,
#ifdef MEMMON_HAVE_NO_LLSEEK
	/* Since 6.12 nonseekable_open() alone makes lseek() -ESPIPE. */
	.proc_lseek	= no_llseek,
#endif
	.proc_release	= memmon_events_release,
};

/* ------------------------------------------------------------------
 * stats
 */

static int memmon_stats_show(struct seq_file *m, void *v)
{
	struct memmon_cpu_stats st;
	struct memmon_ksession *s;
	unsigned int cpu;

	memmon_hooks_show(m);

	mutex_lock(&memmon_proc_lock);
	s = memmon_proc_sess;
	mutex_unlock(&memmon_proc_lock);
	if (!s)
		return 0;
	for_each_possible_cpu(cpu) {
		memmon_session_stats(s, cpu, &st);
		seq_printf(m, "cpu%u produced %llu delivered %llu lost %llu bytes %llu\n",
			   cpu, st.produced, st.delivered, st.lost, st.bytes);
	}
	return 0;
}

static int memmon_sessions_file_show(struct seq_file *m, void *v)
{
	memmon_sessions_show(m);
	return 0;
}

/* ------------------------------------------------------------------
 * Init and exit
 */

/**
 * memmon_procfs_init() - create /proc/memmon (module parameter procfs).
 *
 * Context: module init, after the session and watch tables are up.
 * Return: 0, or -ENOMEM.
 */
int memmon_procfs_init(void)
{
	if (!procfs)
		return 0;
	memmon_proc_dir = proc_mkdir_mode("memmon", 0500, NULL);
	if (!memmon_proc_dir)
		return -ENOMEM;
	if (!proc_create("watch-pids", 0600, memmon_proc_dir, &memmon_pids_ops) ||
	    !proc_create("events", 0400, memmon_proc_dir, &memmon_events_ops) ||
	    !proc_create_single("stats", 0400, memmon_proc_dir,
				memmon_stats_show) ||
	    !proc_create_single("sessions", 0400, memmon_proc_dir,
				memmon_sessions_file_show)) {
		proc_remove(memmon_proc_dir);
		memmon_proc_dir = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * memmon_procfs_exit() - remove /proc/memmon and its session.
 *
 * Context: module exit; no other user of the module is left but readers of
 * /proc/memmon, whom this wakes and waits for.
 */
void memmon_procfs_exit(void)
{
	if (!memmon_proc_dir)
		return;
	WRITE_ONCE(memmon_proc_dying, true);
	mutex_lock(&memmon_proc_lock);
	if (memmon_proc_sess)
		memmon_session_wake_readers(memmon_proc_sess);
	mutex_unlock(&memmon_proc_lock);
	/* Waits for read()s in progress; they see memmon_proc_dying. */
	proc_remove(memmon_proc_dir);
	memmon_proc_dir = NULL;
	if (memmon_proc_sess) {
		memmon_session_put(memmon_proc_sess);
		memmon_proc_sess = NULL;
	}
}
