// SPDX-License-Identifier: GPL-2.0
/* What the sub-commands share: messages, sessions, parsing, signals. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "builtin.h"

volatile sig_atomic_t tool_stop;

static void on_signal(int sig)
{
	(void)sig;
	tool_stop = 1;
}

void tool_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll() must return EINTR so loops see the flag. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* EPIPE from write, reported */
}

static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "memmon%s%s: ", cmd && strcmp(cmd, "memmon") ? " " : "",
		cmd && strcmp(cmd, "memmon") ? cmd : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int tool_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
	return 1;
}

int tool_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'memmon %s --help'.\n", cmd);
	return EXIT_USAGE;
}

const char *tool_device(void)
{
	const char *d = getenv("MEMMON_DEVICE");

	return d && *d ? d : MEMMON_DEVICE_PATH;
}

/* Whether the caller's real or supplementary groups hold @gid. */
static bool in_group(gid_t gid)
{
	gid_t groups[256];
	int i, n;

	if (getegid() == gid)
		return true;
	n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * The module's require_cap parameter from sysfs (0444): 1 yes, 0 no, -1 not
 * known (module not loaded, or no sysfs).
 */
static int module_requires_cap(void)
{
	char v[8] = "";
	FILE *f = fopen("/sys/module/memmon/parameters/require_cap", "re");

	if (!f)
		return -1;
	if (!fgets(v, sizeof(v), f))
		v[0] = 0;
	fclose(f);
	return v[0] == 'Y' || v[0] == '1' ? 1 : v[0] == 'N' || v[0] == '0' ? 0 : -1;
}

/*
 * Opening the device was refused: say which of the two gates refused and
 * every way through it. The device node's mode and group decide EACCES
 * (the udev rule gives it to the "memmon" group); the module decides EPERM
 * (require_cap=Y wants CAP_PERFMON or CAP_SYS_ADMIN, N lets the node's
 * permissions alone decide).
 */
static int explain_open_denied(const char *cmd, int err, const char *dev)
{
	int req = module_requires_cap();
	const char *gname = NULL;
	struct group *gr;
	struct stat st;

	if (err == EACCES && stat(dev, &st) == 0) {
		gr = getgrgid(st.st_gid);
		gname = gr ? gr->gr_name : NULL;
		tool_err(cmd, "%s: %s: the device is mode %04o, owner uid %u, "
			 "group %s; this user (uid %u) %s", dev, strerror(err),
			 (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid,
			 gname ? gname : "(unnamed)", (unsigned int)getuid(),
			 in_group(st.st_gid) ?
			 "is in that group, but the mode gives the group no access" :
			 "is neither its owner nor in its group");
		if ((st.st_mode & 0060) == 0060 && gname && st.st_gid != 0) {
			fprintf(stderr, "  Join the device's group: 'sudo usermod "
				"-aG %s $USER', then log in again (or 'newgrp "
				"%s').\n", gname, gname);
		} else {
			fprintf(stderr, "  The memmon udev rule (60-memmon.rules, "
				"installed by the memmon package or 'make "
				"install') gives the device to the group memmon, "
				"mode 0660; with it, join that group: 'sudo usermod "
				"-aG memmon $USER' and log in again.\n");
		}
	} else if (err == EPERM) {
		tool_err(cmd, "%s: %s: the memmon module requires CAP_PERFMON "
			 "(or CAP_SYS_ADMIN) to open it%s", dev, strerror(err),
			 req == 1 ? " (its parameter require_cap=Y)" : "");
	} else {
		tool_err(cmd, "%s: %s", dev, strerror(err));
	}
	if (req != 0)
		fprintf(stderr, "  %s needs CAP_PERFMON (or CAP_SYS_ADMIN): run "
			"as root, or 'sudo setcap cap_perfmon+ep %s'; or let the "
			"device's group alone decide: load the module with "
			"require_cap=0 ('options memmon require_cap=0' in "
			"/etc/modprobe.d/memmon.conf).\n",
			req == 1 ? "The module (require_cap=Y) also" :
				   "If the module has require_cap=Y, it also",
			"$(command -v memmon)");
	return 1;
}

int tool_explain_errno(const char *cmd, int err, const char *what)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return tool_err(cmd, "%s: %s. memmon needs CAP_PERFMON (or "
				"CAP_SYS_ADMIN): run it as root, or grant it with "
				"'setcap cap_perfmon+ep memmon'", what, strerror(err));
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return tool_err(cmd, "%s: %s. Is the memmon kernel module "
				"loaded? Try 'modprobe memmon'", what, strerror(err));
	case ENOTTY:
		return tool_err(cmd, "%s is not a memmon device (set "
				"MEMMON_DEVICE or use %s)", what,
				MEMMON_DEVICE_PATH);
	case EPROTONOSUPPORT:
		return tool_err(cmd, "%s: the loaded memmon module speaks another "
				"ABI major version than this memmon (%d); install "
				"matching versions", what, MEMMON_ABI_MAJOR);
	case EMFILE:
	case ENOSPC:
	case EBUSY:
		return tool_err(cmd, "%s: %s (too many memmon sessions open, "
				"system-wide or by this user? see 'memmon info' "
				"for max_sessions and user_sessions)", what,
				strerror(err));
	case EDQUOT:
		return tool_err(cmd, "%s: the rings would take this user's "
				"memmon memory past its limit; see 'memmon info' "
				"(user_ring_avail), use a smaller --ring-size, or "
				"raise RLIMIT_MEMLOCK (ulimit -l)", what);
	default:
		return tool_err(cmd, "%s: %s", what, strerror(err));
	}
}

struct memmon_session *tool_open_session(const char *cmd, __u64 ring_size,
					 unsigned int wait_ms)
{
	return tool_open_session_policy(cmd, ring_size, wait_ms ?
					MEMMON_FULL_WAIT : MEMMON_FULL_DROP_NEW,
					wait_ms);
}

struct memmon_session *tool_open_session_policy(const char *cmd,
						__u64 ring_size, __u32 policy,
						unsigned int wait_ms)
{
	LIBMEMMON_OPTS(memmon_session_opts, o, .path = tool_device(),
		       .ring_size = ring_size,
		       .full_policy = policy,
		       .wait_timeout_ms = wait_ms);
	struct memmon_session *s;

	s = memmon_session__open(&o);
	if (!s) {
		int err = errno;

		if (err == EINVAL && policy == MEMMON_FULL_OVERWRITE)
			tool_err(cmd, "--overwrite rejected by the module (it needs "
				 "memmon.ko of ABI 1.3 or later)");
		else if (err == EINVAL && wait_ms)
			tool_err(cmd, "--no-loss rejected by the module (it needs "
				 "memmon.ko of ABI 1.2 or later; a timeout of "
				 "1..60000 ms)");
		else if (err == EINVAL && ring_size)
			tool_err(cmd, "ring size %llu rejected by the module "
				 "(see 'memmon info' for ring_size_min/max)",
				 (unsigned long long)ring_size);
		else if (err == EPERM || err == EACCES)
			explain_open_denied(cmd, err, tool_device());
		else
			tool_explain_errno(cmd, err, tool_device());
	}
	return s;
}

/* --no-loss[=MS]: the wait's bound, 1000 ms unless given. */
int tool_parse_no_loss(const char *cmd, const char *arg, unsigned int *wait_ms)
{
	unsigned long v = 1000;
	char *end;

	if (arg) {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || !v || v > 60000)
			return tool_usage_err(cmd, "bad --no-loss timeout '%s': "
					      "milliseconds, 1..60000", arg);
	}
	*wait_ms = (unsigned int)v;
	return 0;
}

int tool_parse_size(const char *s, __u64 *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	default:
		break;
	}
	if (shift)
		end++;
	if ((*end == 'i' || *end == 'I') && shift)
		end++;
	if ((*end == 'b' || *end == 'B'))
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (~0ULL >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

void tool_print_event_names(FILE *f)
{
	unsigned int i;

	fprintf(f, "Valid events: all");
	for (i = 0; i < MEMMON_EV__COUNT; i++)
		fprintf(f, ", %s", memmon_event__name(i));
	fprintf(f, "; or syscall names:");
	for (i = 0; i < MEMMON_SYS__COUNT; i++)
		fprintf(f, "%s %s", i ? "," : "", memmon_sys__name(i));
	fprintf(f, "\n");
}

int tool_parse_events(const char *cmd, const char *s, __u64 *mask,
		      __u64 *syscalls)
{
	char *dup = strdup(s), *tok, *save = NULL;
	__u64 m = 0, sc = 0;
	int n;

	if (!dup)
		return tool_err(cmd, "out of memory");
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			m |= (1ULL << MEMMON_EV__COUNT) - 1;
			sc |= (1ULL << MEMMON_SYS__COUNT) - 1;
		} else if (!strcmp(tok, "syscall") || !strcmp(tok, "syscalls")) {
			m |= 1ULL << MEMMON_EV_SYSCALL;
			sc |= (1ULL << MEMMON_SYS__COUNT) - 1;
		} else if (!strcmp(tok, "fault")) {
			m |= 1ULL << MEMMON_EV_FAULT;
		} else if (memmon_event__from_name(tok) >= 0) {
			n = memmon_event__from_name(tok);
			m |= 1ULL << n;
		} else if (memmon_sys__from_name(tok) >= 0) {
			n = memmon_sys__from_name(tok);
			m |= 1ULL << MEMMON_EV_SYSCALL;
			sc |= 1ULL << n;
		} else {
			tool_err(cmd, "unknown event '%s'", tok);
			tool_print_event_names(stderr);
			free(dup);
			return EXIT_USAGE;
		}
	}
	free(dup);
	if (!m)
		return tool_usage_err(cmd, "empty event list");
	*mask = m;
	*syscalls = sc;
	return 0;
}

int tool_close_stdout(const char *cmd)
{
	bool bad = ferror(stdout);

	if (fclose(stdout) != 0 || bad)
		return tool_err(cmd, "write error on standard output: %s",
				errno ? strerror(errno) : "I/O error");
	return 0;
}
