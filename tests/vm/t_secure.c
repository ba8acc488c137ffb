// SPDX-License-Identifier: GPL-2.0
/*
 * vmtest: no-module
 *
 * The permission model of docs/security.md, as an unprivileged user
 * (nobody, the module loaded with require_cap=0 and the node 0666):
 *
 *  - a watched process that execs a setuid or a file-capability image, or
 *    a followed child that does, is no longer watched by a session whose
 *    opener lacked CAP_SYS_PTRACE: an EXIT record flagged REVOKED, then
 *    nothing of it (no EXEC record, no fault); a root session watching the
 *    same process goes on; a plain image changes nothing;
 *  - FAULT records carry a pfn only for a CAP_SYS_ADMIN session;
 *  - in a PID namespace the FORK record's child ids are the namespace's,
 *    and /proc/memmon belongs to the namespace that used it first;
 *  - a user holds max_user_sessions sessions (mappings included) and ring
 *    memory within user_ring_kb x CPUs plus RLIMIT_MEMLOCK: EMFILE, EDQUOT;
 *  - a blocking read() whose consumer positions another process scribbles
 *    on through a MADV_DOFORK mapping keeps sleeping and dies on SIGKILL.
 *
 * The images are copies of this program (--image) on a tmpfs of our own,
 * mounted without nosuid: each reports the euid and capabilities it runs
 * with, so a test that setuid did not take cannot pass by accident.
 */
#include <linux/capability.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "mmtest.h"

#define NOBODY		65534
#define IMAGE_PAGES	32

static const char *ko;
static char self[4096];
static char dir[] = "/tmp/memmon-secure-XXXXXX";
static char img_suid[4200], img_fcap[4200], img_plain[4200];

/* What an image says about itself: fd 3 of the exec, then its faults. */
struct image_report {
	uint32_t euid;
	uint32_t net_raw;	/* CAP_NET_RAW in the effective set */
};

static int load(const char *params)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		MM_DIE("open %s", ko);
	r = (int)syscall(SYS_finit_module, fd, params, 0);
	close(fd);
	return r;
}

static int unload(void)
{
	return (int)syscall(SYS_delete_module, "memmon", O_NONBLOCK);
}

static int become_nobody(void)
{
	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	/* A uid change makes a process non-dumpable: be a normal one. */
	return prctl(PR_SET_DUMPABLE, 1);
}

/* --image: report, then take IMAGE_PAGES faults and exit. */
static int image_main(int fd)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	struct image_report r = { .euid = (uint32_t)geteuid() };
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	if (!syscall(SYS_capget, &h, d))
		r.net_raw = !!(d[0].effective & (1U << CAP_NET_RAW));
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		return 1;
	close(fd);
	p = mmap(NULL, IMAGE_PAGES * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (int i = 0; i < IMAGE_PAGES; i++)
		p[i * page] = 1;
	munmap(p, IMAGE_PAGES * page);
	return 0;
}

/* Copy this program to @to. */
static void copy_self(const char *to)
{
	int in = open(self, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	char buf[65536];
	ssize_t n;

	if (in < 0 || out < 0)
		MM_DIE("copy %s to %s", self, to);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			MM_DIE("write %s", to);
	if (n < 0 || close(out))
		MM_DIE("copy %s", to);
	close(in);
}

/* The three images, on a tmpfs without nosuid. */
static void make_images(void)
{
	struct vfs_cap_data cap = {
		.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
		.data = { { .permitted = 1U << CAP_NET_RAW } },
	};

	if (!mkdtemp(dir) || mount("memmon-secure", dir, "tmpfs", 0, "mode=0755"))
		MM_DIE("tmpfs at %s", dir);
	snprintf(img_suid, sizeof(img_suid), "%s/suid", dir);
	snprintf(img_fcap, sizeof(img_fcap), "%s/fcap", dir);
	snprintf(img_plain, sizeof(img_plain), "%s/plain", dir);
	copy_self(img_suid);
	copy_self(img_fcap);
	copy_self(img_plain);
	if (chown(img_suid, 0, 0) || chmod(img_suid, 04755) ||
	    chmod(img_fcap, 0755) || chmod(img_plain, 0755))
		MM_DIE("image modes");
	if (setxattr(img_fcap, "security.capability", &cap, sizeof(cap), 0))
		MM_DIE("security.capability on %s", img_fcap);
}

static void remove_images(void)
{
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

/* ------------------------------------------------------------------
 * A session and what it recorded of some processes.
 */

struct sess {
	int fd;
	struct mm_map m;
};

static void sess_open(struct sess *s, uint64_t ring_size)
{
	s->fd = mm_open();
	if (ring_size && mm_configure(s->fd, ring_size, 0))
		MM_DIE("CONFIGURE");
	mm_map(s->fd, &s->m);
	if (ioctl(s->fd, MEMMON_IOC_ENABLE))
		MM_DIE("ENABLE");
}

static void sess_close(struct sess *s)
{
	mm_unmap(&s->m);
	close(s->fd);
}

/* What a drain found about one process (tgid). */
struct seen {
	uint32_t tgid;
	uint64_t revoked_ns;	/* time of the EXIT REVOKED record, 0: none */
	uint64_t exec_ns;	/* time of the EXEC record, 0: none */
	long faults;		/* FAULT records of tgid */
	long faults_after_exec;
	long after_revoke;	/* records of tgid after the revoke */
	long pfn_faults;	/* FAULT records of tgid with a pfn */
	long nopfn_bad;		/* ... with pfn != 0 but no PFN flag */
	uint32_t fork_child;	/* child_tgid of tgid's last FORK record */
	uint32_t fork_child_tid;
	long exits_group;	/* ordinary group EXIT records of tgid */
};

static void seen_one(const struct memmon_rec_header *h, struct seen *s)
{
	if (!s || h->tgid != s->tgid)
		return;
	switch (h->type) {
	case MEMMON_REC_FAULT: {
		const struct memmon_rec_fault *f = (const void *)h;

		s->faults++;
		if (f->flags & MEMMON_FAULTF_PFN)
			s->pfn_faults++;
		else if (f->pfn)
			s->nopfn_bad++;
		break;
	}
	case MEMMON_REC_EXIT: {
		const struct memmon_rec_exit *x = (const void *)h;

		if (x->flags & MEMMON_EXITF_REVOKED)
			s->revoked_ns = h->time_ns;
		else if (x->flags & MEMMON_EXITF_GROUP)
			s->exits_group++;
		break;
	}
	case MEMMON_REC_EXEC:
		s->exec_ns = h->time_ns;
		break;
	case MEMMON_REC_FORK: {
		const struct memmon_rec_fork *k = (const void *)h;

		if (!(k->flags & MEMMON_FORKF_THREAD)) {
			s->fork_child = k->child_tgid;
			s->fork_child_tid = k->child_tid;
		}
		break;
	}
	default:
		break;
	}
}

/* Second pass, once the first found the times. */
static void seen_one_after(const struct memmon_rec_header *h, struct seen *s)
{
	if (!s || h->tgid != s->tgid)
		return;
	if (s->revoked_ns && h->time_ns > s->revoked_ns)
		s->after_revoke++;
	if (s->exec_ns && h->time_ns > s->exec_ns && h->type == MEMMON_REC_FAULT)
		s->faults_after_exec++;
}

struct seen2 {
	struct seen *a, *b;
};

static void seen_rec(const struct memmon_rec_header *h, unsigned int cpu, void *arg)
{
	struct seen2 *p = arg;

	(void)cpu;
	seen_one(h, p->a);
	seen_one(h, p->b);
}

static void seen_rec_after(const struct memmon_rec_header *h, unsigned int cpu,
			   void *arg)
{
	struct seen2 *p = arg;

	(void)cpu;
	seen_one_after(h, p->a);
	seen_one_after(h, p->b);
}

/*
 * What the session recorded of @a's and @b's processes (@b may be NULL):
 * each ring is copied out and walked, then drained (consumed) in a second
 * walk that counts what came after the times the first one found.
 */
static void sess_scan(struct sess *s, struct seen *a, struct seen *b)
{
	unsigned int ncpu = s->m.info.nr_cpus;
	uint64_t mask = s->m.info.ring_size - 1;
	struct seen2 p = { a, b };

	for (unsigned int cpu = 0; cpu < ncpu; cpu++) {
		struct memmon_ring_page *pg = mm_ring_page(&s->m, cpu);
		uint64_t prod = __atomic_load_n(&pg->producer_pos, __ATOMIC_ACQUIRE);
		uint64_t cons = __atomic_load_n(mm_cons_pos(&s->m, cpu), __ATOMIC_RELAXED);
		uint64_t len = prod - cons;
		uint8_t *buf = malloc(len ? len : 1);

		if (!buf)
			MM_DIE("malloc");
		for (uint64_t i = 0; i < len; i++)
			buf[i] = mm_ring_data(&s->m, cpu)[(cons + i) & mask];
		if (mm_walk_buf(buf, len, seen_rec, &p) < 0)
			MM_DIE("a malformed record");
		free(buf);
	}
	for (unsigned int cpu = 0; cpu < ncpu; cpu++)
		if (mm_drain_cpu(&s->m, cpu, seen_rec_after, &p) < 0)
			MM_DIE("a malformed record");
}

/* ------------------------------------------------------------------
 * Privileged exec
 */

/* What the nobody watcher found, sent to the parent. */
struct watcher_result {
	struct image_report img;
	struct seen target;	/* the process that exec'd */
	struct seen parent;	/* its parent (followed case) */
	uint32_t listed;	/* WATCH_LIST entries after the run */
	uint64_t flags;		/* session_flags */
	int err;		/* a setup step failed: its errno */
};

/* Exec @image with its report on @fd; never returns. */
static void exec_image(const char *image, int fd)
{
	char fdarg[16];

	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	execl(image, image, "--image", fdarg, (char *)NULL);
	_exit(127);
}

/*
 * As nobody: a session watching a nobody process T that execs @image, or
 * with @followed, that forks a child C which execs it (T watched with
 * FOLLOW_CHILDREN; C's pid comes back on a pipe of its own). The root
 * session @root_fd (or -1) watches T too. Runs in a child of the test and
 * writes a struct watcher_result to @out.
 */
static void watcher(int out, const char *image, bool followed, int root_fd)
{
	struct watcher_result r = { 0 };
	struct memmon_watch_list l = { .size = sizeof(l) };
	struct memmon_watch w = { .size = sizeof(w) };
	int rep[2], go[2], cpid[2], st;
	struct memmon_info info;
	struct sess s;
	pid_t t, c = 0;
	char ch;

	if (become_nobody() || pipe(rep) || pipe(go) || pipe(cpid)) {
		r.err = errno;
		goto out;
	}
	t = fork();
	if (!t) {
		if (read(go[0], &ch, 1) != 1)
			_exit(1);
		if (!followed)
			exec_image(image, rep[1]);
		c = fork();
		if (!c)
			exec_image(image, rep[1]);
		if (write(cpid[1], &c, sizeof(c)) != sizeof(c))
			_exit(1);
		waitpid(c, &st, 0);
		_exit(0);
	}
	close(rep[1]);
	close(cpid[1]);
	sess_open(&s, 0);
	mm_info(s.fd, &info);
	r.flags = info.session_flags;
	if (mm_watch(s.fd, MEMMON_IOC_WATCH_ADD, (uint32_t)t,
		     followed ? MEMMON_WATCH_FOLLOW_CHILDREN : 0)) {
		r.err = errno;
		kill(t, SIGKILL);
		goto out;
	}
	w.pid = (uint32_t)t;
	w.flags = MEMMON_WATCH_FOLLOW_CHILDREN;
	if (root_fd >= 0 && ioctl(root_fd, MEMMON_IOC_WATCH_ADD, &w))
		r.err = errno;
	if (write(go[1], "g", 1) != 1)
		MM_DIE("go");
	if (read(rep[0], &r.img, sizeof(r.img)) != sizeof(r.img))
		r.img.euid = ~0U;
	if (followed && read(cpid[0], &c, sizeof(c)) != sizeof(c))
		c = 0;
	waitpid(t, &st, 0);
	ioctl(s.fd, MEMMON_IOC_WATCH_LIST, &l);
	r.listed = l.count;
	r.target.tgid = (uint32_t)(followed ? c : t);
	r.parent.tgid = (uint32_t)t;
	sess_scan(&s, &r.target, &r.parent);
	sess_close(&s);
out:
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

static struct watcher_result run_watcher(const char *image, bool followed,
					 struct sess *root)
{
	struct watcher_result r = { .err = -1 };
	pid_t w;
	int p[2], st;

	if (pipe(p))
		MM_DIE("pipe");
	w = fork();
	if (!w) {
		close(p[0]);
		watcher(p[1], image, followed, root ? root->fd : -1);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.err = -1;
	close(p[0]);
	waitpid(w, &st, 0);
	return r;
}

static void test_privileged_exec(void)
{
	struct watcher_result r;
	struct sess root;
	struct seen rs = { 0 };

	/* A setuid-root image, directly watched. */
	sess_open(&root, 0);
	r = run_watcher(img_suid, false, &root);
	VT_OK(!r.err && r.img.euid == 0, "the setuid image ran as root (euid %u, err %d)",
	      r.img.euid, r.err);
	VT_OK(!(r.flags & (MEMMON_SESSF_PFN | MEMMON_SESSF_PTRACE)),
	      "nobody's session has neither PFN nor PTRACE rights");
	VT_OK(r.target.revoked_ns, "setuid exec: the nobody session got EXIT REVOKED");
	VT_OK(!r.target.exec_ns, "setuid exec: no EXEC record reached the nobody session");
	VT_OK(r.target.after_revoke == 0,
	      "setuid exec: nothing of the process after the revoke (%ld records)",
	      r.target.after_revoke);
	VT_OK(r.listed == 0, "setuid exec: WATCH_LIST no longer lists it (%u)", r.listed);
	VT_OK(r.target.faults > 0 && r.target.pfn_faults == 0 && r.target.nopfn_bad == 0,
	      "nobody's session: %ld FAULT records, none with a pfn", r.target.faults);
	rs.tgid = r.target.tgid;
	sess_scan(&root, &rs, NULL);
	VT_OK(!rs.revoked_ns && rs.exec_ns && rs.faults_after_exec >= IMAGE_PAGES,
	      "setuid exec: the root session goes on (exec seen, %ld faults after)",
	      rs.faults_after_exec);
	VT_OK(rs.pfn_faults > 0 && rs.nopfn_bad == 0,
	      "root's session: FAULT records carry pfns (%ld)", rs.pfn_faults);
	sess_close(&root);

	/* A file-capability image. */
	r = run_watcher(img_fcap, false, NULL);
	VT_OK(!r.err && r.img.net_raw && r.img.euid == NOBODY,
	      "the file-capability image ran with CAP_NET_RAW as nobody");
	VT_OK(r.target.revoked_ns && !r.target.exec_ns && r.target.after_revoke == 0,
	      "file capabilities: revoked, no EXEC, nothing after (%ld)",
	      r.target.after_revoke);

	/* A plain image: the watch goes on (and the checks above can fail). */
	r = run_watcher(img_plain, false, NULL);
	VT_OK(!r.err && r.img.euid == NOBODY, "the plain image ran as nobody");
	VT_OK(!r.target.revoked_ns && r.target.exec_ns &&
	      r.target.faults_after_exec >= IMAGE_PAGES,
	      "plain exec: watched on (exec seen, %ld faults after)",
	      r.target.faults_after_exec);

	/* A followed child that execs the setuid image. */
	r = run_watcher(img_suid, true, NULL);
	VT_OK(!r.err && r.img.euid == 0 && r.target.tgid,
	      "followed child %u ran the setuid image as root", r.target.tgid);
	VT_OK(r.parent.fork_child == r.target.tgid,
	      "followed child: its parent's FORK record names it");
	VT_OK(r.target.revoked_ns && !r.target.exec_ns && r.target.after_revoke == 0,
	      "followed child's setuid exec: revoked, no EXEC, nothing after (%ld)",
	      r.target.after_revoke);
	VT_OK(r.parent.exits_group == 1 && !r.parent.revoked_ns,
	      "followed child: its parent stays watched to its exit");
}

/* ------------------------------------------------------------------
 * PID namespaces
 */

/* What the namespace's init found, sent out through a pipe. */
struct ns_result {
	int err;		/* a step failed: its line */
	pid_t forked;		/* fork()'s answer inside the namespace */
	struct seen self;	/* records of the namespace's pid 1 */
	char pids[32];		/* /proc/memmon/watch-pids as read inside */
};

/* pid 1 of a new PID namespace: a session watching itself, one fork. */
static int ns_init(int out)
{
	struct ns_result r = { 0 };
	struct sess s;
	pid_t c;
	int st, fd;
	ssize_t n;

	sess_open(&s, 0);
	if (mm_watch(s.fd, MEMMON_IOC_WATCH_ADD, 0, 0))
		r.err = __LINE__;
	c = fork();
	if (!c)
		_exit(0);
	waitpid(c, &st, 0);
	r.forked = c;
	r.self.tgid = 1;
	sess_scan(&s, &r.self, NULL);
	sess_close(&s);
	/* /proc/memmon, first used from here: PIDs in this namespace. */
	fd = open("/proc/memmon/watch-pids", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		r.err = __LINE__;
	close(fd);
	fd = open("/proc/memmon/watch-pids", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, r.pids, sizeof(r.pids) - 1);
	if (n < 0)
		r.err = __LINE__;
	close(fd);
	fd = open("/proc/memmon/watch-pids", O_WRONLY);
	if (fd < 0 || write(fd, "-1", 2) != 2)
		r.err = __LINE__;
	close(fd);
	if (write(out, &r, sizeof(r)) != sizeof(r))
		return 1;
	return 0;
}

static void test_namespaces(void)
{
	struct ns_result r = { .err = -1 };
	int p[2], st, fd;
	pid_t x;

	if (pipe(p))
		MM_DIE("pipe");
	x = fork();
	if (!x) {
		pid_t y;

		close(p[0]);
		if (unshare(CLONE_NEWPID))
			_exit(2);
		y = fork();
		if (!y)
			_exit(ns_init(p[1]));
		waitpid(y, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 3);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.err = -1;
	close(p[0]);
	waitpid(x, &st, 0);
	VT_OK(r.err == 0, "namespace: every step worked (failed at line %d)", r.err);
	VT_OK(r.self.fork_child == (uint32_t)r.forked &&
	      r.self.fork_child_tid == (uint32_t)r.forked,
	      "namespace: FORK child ids are the namespace's (%u/%u, fork() said %d)",
	      r.self.fork_child, r.self.fork_child_tid, r.forked);
	VT_OK(!strcmp(r.pids, "1\n"), "namespace: /proc/memmon/watch-pids lists pid 1 (%s)",
	      r.pids);
	/* The interface belongs to that namespace now: EPERM from ours. */
	fd = open("/proc/memmon/watch-pids", O_RDONLY);
	VT_OK(fd < 0 && errno == EPERM, "/proc/memmon from another namespace: EPERM");
	if (fd >= 0)
		close(fd);
}

/* ------------------------------------------------------------------
 * Per-user limits (the module is loaded with max_user_sessions=3)
 */

struct limits_result {
	int line;		/* a step that went wrong */
	int emfile;		/* errno of the 4th open */
	int emfile_mapped;	/* errno of an open while a closed fd's mapping lives */
	int reopen;		/* errno of an open after munmap, 0: opened */
	int edquot;		/* errno of the big ring's mmap under memlock 0 */
	int big_ok;		/* errno of the same with RLIMIT_MEMLOCK raised */
	uint32_t sessions, sessions_max;
	uint64_t avail0, avail1, budget;
};

static int limits_child(int out)
{
	struct limits_result r = { 0 };
	struct rlimit rl = { 0, 64 << 20 };
	struct memmon_info info;
	int fd[3], f, i;
	void *m;

	if (become_nobody())
		r.line = __LINE__;
	/* Soft RLIMIT_MEMLOCK 0: only the user_ring_kb allowance. */
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		r.line = __LINE__;
	for (i = 0; i < 3; i++) {
		fd[i] = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd[i] < 0 || mm_configure(fd[i], 16384, 0))
			r.line = __LINE__;
	}
	mm_info(fd[0], &info);
	r.sessions = info.user_sessions;
	r.sessions_max = info.user_sessions_max;
	r.budget = info.user_ring_budget;
	r.avail0 = info.user_ring_avail;
	f = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	r.emfile = f < 0 ? errno : 0;
	if (f >= 0)
		close(f);
	/* A mapping keeps its session, and its count, after close(). */
	m = mmap(NULL, info.consumer_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd[2], 0);
	if (m == MAP_FAILED)
		r.line = __LINE__;
	mm_info(fd[0], &info);
	r.avail1 = info.user_ring_avail;
	close(fd[2]);
	f = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	r.emfile_mapped = f < 0 ? errno : 0;
	if (f >= 0)
		close(f);
	munmap(m, info.consumer_size);
	f = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	r.reopen = f < 0 ? errno : 0;
	/* Rings far past the allowance, with no RLIMIT_MEMLOCK: EDQUOT. */
	if (f >= 0 && mm_configure(f, 4 << 20, 0))
		r.line = __LINE__;
	m = f < 0 ? MAP_FAILED : mmap(NULL, info.consumer_size, PROT_READ | PROT_WRITE,
				      MAP_SHARED, f, 0);
	r.edquot = m == MAP_FAILED ? errno : 0;
	if (m != MAP_FAILED)
		munmap(m, info.consumer_size);
	/* With the soft limit raised to the hard one, the same fits. */
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		r.line = __LINE__;
	m = f < 0 ? MAP_FAILED : mmap(NULL, info.consumer_size, PROT_READ | PROT_WRITE,
				      MAP_SHARED, f, 0);
	r.big_ok = m == MAP_FAILED ? errno : 0;
	if (write(out, &r, sizeof(r)) != sizeof(r))
		return 1;
	return 0;
}

static void test_limits(void)
{
	struct limits_result r = { .line = -1 };
	struct rlimit old;
	int p[2], st, fds[4], i, n = 0;
	pid_t c;

	if (pipe(p) || getrlimit(RLIMIT_MEMLOCK, &old))
		MM_DIE("pipe");
	c = fork();
	if (!c) {
		struct rlimit hard = { 0, 64 << 20 };

		close(p[0]);
		/* The hard limit nobody may raise its soft one to. */
		if (setrlimit(RLIMIT_MEMLOCK, &hard))
			_exit(2);
		_exit(limits_child(p[1]));
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.line = -1;
	close(p[0]);
	waitpid(c, &st, 0);
	VT_OK(r.line == 0, "limits: every step worked (failed at line %d)", r.line);
	VT_OK(r.sessions == 3 && r.sessions_max == 3,
	      "GET_INFO: the user holds 3 of 3 sessions (%u of %u)", r.sessions, r.sessions_max);
	VT_OK(r.emfile == EMFILE, "a 4th session of the same user: EMFILE (%d)", r.emfile);
	VT_OK(r.emfile_mapped == EMFILE,
	      "a closed session whose mapping lives still counts: EMFILE (%d)", r.emfile_mapped);
	VT_OK(r.reopen == 0, "after munmap the user may open again (%d)", r.reopen);
	VT_OK(r.avail1 < r.avail0 && r.avail0 <= r.budget,
	      "GET_INFO: user_ring_avail shrinks as rings are made (%llu -> %llu of %llu)",
	      (unsigned long long)r.avail0, (unsigned long long)r.avail1,
	      (unsigned long long)r.budget);
	VT_OK(r.edquot == EDQUOT, "rings past the allowance, RLIMIT_MEMLOCK 0: EDQUOT (%d)",
	      r.edquot);
	VT_OK(r.big_ok == 0, "the same rings within RLIMIT_MEMLOCK: mapped (%d)", r.big_ok);
	/* root (CAP_SYS_ADMIN) is not held to max_user_sessions. */
	for (i = 0; i < 4; i++) {
		fds[i] = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		n += fds[i] >= 0;
	}
	VT_OK(n == 4, "root opens 4 sessions past max_user_sessions=3 (%d)", n);
	for (i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* ------------------------------------------------------------------
 * A blocking read() against a scribbler
 */

static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

static void test_killable_read(void)
{
	int ready[2], st, sleeping = 0;
	pid_t reader, scribbler;
	struct sess s;

	if (pipe(ready))
		MM_DIE("pipe");
	reader = fork();
	if (!reader) {
		char buf[4096];

		/* Its own group, so that one kill ends the scribbler too. */
		if (setpgid(0, 0) || become_nobody())
			_exit(2);
		sess_open(&s, 16384);
		/* The consumer area goes to the child too. */
		if (madvise(s.m.cons, s.m.info.consumer_size, MADV_DOFORK))
			_exit(3);
		scribbler = fork();
		if (!scribbler) {
			uint64_t v = 0x9e3779b97f4a7c15ULL;

			close(ready[0]);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			for (;;) {
				for (unsigned int c = 0; c < s.m.info.nr_cpus; c++)
					__atomic_store_n(mm_cons_pos(&s.m, c), v,
							 __ATOMIC_RELEASE);
				v = v * 6364136223846793005ULL + 1442695040888963407ULL;
			}
		}
		/* Nothing is watched: read() must sleep, whatever the positions say. */
		read(s.fd, buf, sizeof(buf));
		_exit(4);
	}
	close(ready[1]);
	VT_OK(read(ready[0], &st, 1) == 1, "the scribbler runs");
	close(ready[0]);
	/* Sleeping in read(), sampled while the scribbler runs. */
	for (int i = 0; i < 20; i++) {
		usleep(50000);
		sleeping += proc_state(reader) == 'S';
	}
	VT_OK(sleeping == 20, "read() sleeps while the positions are scribbled on (%d of 20)",
	      sleeping);
	kill(reader, SIGKILL);
	VT_OK(waitpid(reader, &st, 0) == reader && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "SIGKILL ends the blocked read()");
	/* The scribbler is the reader's child: it goes with a kill of its group. */
	kill(-reader, SIGKILL);
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 3 && !strcmp(argv[1], "--image"))
		return image_main(atoi(argv[2]));
	ko = getenv("MEMMON_KO");
	if (!ko)
		MM_DIE("MEMMON_KO is not set");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		MM_DIE("/proc/self/exe");
	self[n] = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);

	make_images();
	VT_SUCCESS(load("require_cap=0 max_user_sessions=3 user_ring_kb=64"),
		   "load with require_cap=0 max_user_sessions=3 user_ring_kb=64");
	chmod(MEMMON_DEVICE_PATH, 0666);
	test_privileged_exec();
	test_limits();
	test_killable_read();
	test_namespaces();
	VT_SUCCESS(unload(), "unload");
	remove_images();
	return vt_exit();
}
