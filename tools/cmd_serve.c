// SPDX-License-Identifier: GPL-2.0
/*
 * memmon serve: the daemon that records on this host for remote clients.
 * This file owns the process: options, the token, privileges, signals and
 * the main loop (it alone forks recordings and reaps them).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <microhttpd.h>
#include "builtin.h"
#include "serve.h"

static const char serve_usage[] =
"usage: memmon serve --dir DIR [options]\n"
"\n"
"Record on this host for memmon remote clients (HTTP, JSON; see memmon(1)).\n"
"\n"
"  -d, --dir DIR            recordings directory (created 0700 if missing)\n"
"  -l, --listen ADDR        address to listen on (default 127.0.0.1)\n"
"      --public             listen on every address\n"
"  -P, --port PORT          TCP port (default 7420)\n"
"      --token-file FILE    bearer token (default DIR/token, created 0600)\n"
"      --tls-cert FILE      PEM certificate: serve HTTPS (with --tls-key)\n"
"      --tls-key FILE       PEM private key\n"
"      --max-recordings N   running at once (default 4); more: 429\n"
"      --quota SIZE         bytes DIR may hold (K/M/G); beyond: 507, and\n"
"                           running recordings are stopped\n"
"      --max-body SIZE      request body limit (default 64K); beyond: 413\n"
"      --idle-timeout SEC   close connections idle this long (default 30)\n"
"      --max-connections N  at once (default 64)\n"
"      --metrics-top N      processes with labels of their own in /metrics\n"
"                           (default 10; the rest are pid=\"other\")\n";

/*
 * Kept: CAP_SYS_PTRACE (memmon record watching other users' processes),
 * CAP_PERFMON and CAP_SYS_ADMIN (opening /dev/memmon: the module asks for
 * one of them unless loaded with require_cap=0). Everything else goes,
 * CAP_NET_BIND_SERVICE too (the socket is bound by now), and from the
 * bounding set as well, so the children cannot get it back by exec.
 */
static int drop_caps(void)
{
	static const int keep[] = { CAP_PERFMON, CAP_SYS_ADMIN, CAP_SYS_PTRACE };
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	__u32 mask[2] = { 0, 0 };
	unsigned int i;
	int cap;

	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		mask[keep[i] / 32] |= 1U << (keep[i] % 32);
	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (cap = 0; cap <= 63; cap++) {
		if (mask[cap / 32] & (1U << (cap % 32)))
			continue;
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL &&
		    errno != EPERM)
			return -errno;
	}
	for (i = 0; i < 2; i++) {
		d[i].effective &= mask[i];
		d[i].permitted &= mask[i];
		d[i].inheritable &= mask[i];
	}
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return 0;
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || n < lo || n > hi)
		return -EINVAL;
	*v = n;
	return 0;
}

static struct MHD_Daemon *daemon_;

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "public", no_argument, NULL, 'A' },
		{ "port", required_argument, NULL, 'P' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "max-recordings", required_argument, NULL, 'R' },
		{ "quota", required_argument, NULL, 'Q' },
		{ "max-body", required_argument, NULL, 'B' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "max-connections", required_argument, NULL, 'N' },
		{ "metrics-top", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "serve";
	static struct serve sv;
	char tokpath[4200], err[600];
	struct stat dst;
	struct pollfd pfd[2];
	sigset_t sigs;
	__u64 v;
	ssize_t n;
	int opt, sfd, ret = 1, e;
	time_t last_quota = 0;
	bool stopping = false;

	memset(&sv, 0, sizeof(sv));
	sv.cfg.port = SERVE_DEFAULT_PORT;
	sv.cfg.max_recordings = 4;
	sv.cfg.max_body = 64 << 10;
	sv.cfg.idle_timeout = 30;
	sv.cfg.max_connections = 64;
	sv.cfg.metrics_top = 10;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "d:l:P:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			sv.cfg.dir = optarg;
			break;
		case 'l':
			sv.cfg.listen = optarg;
			break;
		case 'A':
			sv.cfg.public_ = true;
			break;
		case 'P':
			if (parse_uint(optarg, 1, 65535, &sv.cfg.port))
				return tool_usage_err(cmd, "bad port '%s'", optarg);
			break;
		case 'T':
			sv.cfg.token_file = optarg;
			break;
		case 'C':
			sv.cfg.tls_cert = optarg;
			break;
		case 'K':
			sv.cfg.tls_key = optarg;
			break;
		case 'R':
			if (parse_uint(optarg, 1, 64, &sv.cfg.max_recordings))
				return tool_usage_err(cmd, "bad --max-recordings '%s': "
						      "1 to 64", optarg);
			break;
		case 'Q':
			if (tool_parse_size(optarg, &v) || !v)
				return tool_usage_err(cmd, "bad --quota '%s'", optarg);
			sv.cfg.quota = v;
			break;
		case 'B':
			if (tool_parse_size(optarg, &v) || !v || v > (64 << 20))
				return tool_usage_err(cmd, "bad --max-body '%s': up to 64M",
						      optarg);
			sv.cfg.max_body = v;
			break;
		case 'I':
			if (parse_uint(optarg, 1, 86400, &sv.cfg.idle_timeout))
				return tool_usage_err(cmd, "bad --idle-timeout '%s'", optarg);
			break;
		case 'N':
			if (parse_uint(optarg, 1, 10000, &sv.cfg.max_connections))
				return tool_usage_err(cmd, "bad --max-connections '%s'",
						      optarg);
			break;
		case 'M':
			if (parse_uint(optarg, 1, 1000, &sv.cfg.metrics_top))
				return tool_usage_err(cmd, "bad --metrics-top '%s'", optarg);
			break;
		case 'h':
			fputs(serve_usage, stdout);
			return tool_close_stdout(cmd);
		default:
			return tool_usage_err(cmd, "unknown or incomplete option '%s'",
					      argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tool_usage_err(cmd, "unexpected argument '%s'", argv[optind]);
	if (!sv.cfg.dir)
		return tool_usage_err(cmd, "give --dir DIR, where recordings go");
	if (!sv.cfg.tls_cert != !sv.cfg.tls_key)
		return tool_usage_err(cmd, "--tls-cert and --tls-key go together");
	if (sv.cfg.listen && sv.cfg.public_)
		return tool_usage_err(cmd, "--listen and --public: give one");
	n = readlink("/proc/self/exe", sv.cfg.exe, sizeof(sv.cfg.exe) - 1);
	if (n <= 0)
		return tool_err(cmd, "cannot find this program: %s", strerror(errno));
	sv.cfg.exe[n] = 0;
	if (mkdir(sv.cfg.dir, 0700) && errno != EEXIST)
		return tool_err(cmd, "%s: %s", sv.cfg.dir, strerror(errno));
	/*
	 * The directory holds the token and the recordings' logs: another
	 * user who could write in it could plant either.
	 */
	if (stat(sv.cfg.dir, &dst))
		return tool_err(cmd, "%s: %s", sv.cfg.dir, strerror(errno));
	if (!S_ISDIR(dst.st_mode) || dst.st_uid != geteuid() ||
	    (dst.st_mode & 022))
		return tool_err(cmd, "%s: must be a directory of this user (uid %u) "
				"that no one else may write (chmod 700)", sv.cfg.dir,
				(unsigned int)geteuid());
	if (!sv.cfg.token_file) {
		snprintf(tokpath, sizeof(tokpath), "%s/token", sv.cfg.dir);
		sv.cfg.token_file = tokpath;
	}
	if (serve_token_load(sv.cfg.token_file, sv.token, sizeof(sv.token), err,
			     sizeof(err)))
		return tool_err(cmd, "%s", err);
	serve_rec_init(&sv);
	e = serve_rec_scan(&sv);
	if (e < 0)
		return tool_err(cmd, "%s: %s", sv.cfg.dir, strerror(-e));
	if (pipe2(sv.wake_pipe, O_CLOEXEC | O_NONBLOCK))
		return tool_err(cmd, "pipe: %s", strerror(errno));

	/* Blocked before MHD's threads exist: they inherit the mask, and the
	 * signals come to the signalfd of this thread.
	 */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return tool_err(cmd, "signalfd: %s", strerror(errno));
	daemon_ = serve_http_start(&sv, err, sizeof(err));
	if (!daemon_) {
		close(sfd);
		return tool_err(cmd, "%s", err);
	}
	if (geteuid() == 0 && (e = drop_caps()))
		fprintf(stderr, "memmon serve: cannot drop capabilities: %s\n",
			strerror(-e));
	fprintf(stderr, "memmon serve: listening on %s port %u%s, recordings in %s\n",
		sv.cfg.listen ? sv.cfg.listen : sv.cfg.public_ ? "every address" :
		"127.0.0.1", sv.cfg.port, sv.cfg.tls_cert ? " (TLS)" : "", sv.cfg.dir);

	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sv.wake_pipe[0];
	pfd[1].events = POLLIN;
	for (;;) {
		struct signalfd_siginfo si;
		char drain[64];

		if (poll(pfd, 2, 1000) < 0 && errno != EINTR)
			break;
		while (read(sv.wake_pipe[0], drain, sizeof(drain)) > 0)
			;
		serve_rec_spawn_pending(&sv);
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo != SIGCHLD && !stopping) {
				/* Complete files: SIGINT to each recording, then wait. */
				stopping = true;
				fprintf(stderr, "memmon serve: stopping the recordings\n");
				MHD_quiesce_daemon(daemon_);
				serve_rec_stop_all(&sv, "server stopped");
			}
		}
		serve_rec_reap(&sv);
		if (stopping) {
			unsigned int left;

			pthread_mutex_lock(&sv.lock);
			left = sv.running;
			pthread_mutex_unlock(&sv.lock);
			if (!left)
				break;
		}
		if (time(NULL) != last_quota) {
			last_quota = time(NULL);
			serve_rec_check_quota(&sv);
		}
	}
	MHD_stop_daemon(daemon_);
	close(sfd);
	fprintf(stderr, "memmon serve: stopped\n");
	ret = 0;
	return ret;
}
