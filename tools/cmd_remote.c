// SPDX-License-Identifier: GPL-2.0
/*
 * memmon remote: the client of memmon serve (libcurl). Starts, lists, stops,
 * fetches (resuming with a Range request, checking Repr-Digest), reports
 * and deletes recordings on another host.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <curl/curl.h>
#include <jansson.h>
#include "builtin.h"
#include "serve.h"

static const char remote_usage[] =
"usage: memmon remote [options] HOST[:PORT] COMMAND [ARGS]\n"
"\n"
"  start [--name NAME] [-p PID[,PID]] [-G CGROUP] [-f] [-e EVENTS] [-m RING] [-z]\n"
"        [--max-size SIZE [--rotate N]] [--duration SEC] [--until-mark TEXT]\n"
"        [-- CMD [ARGS]]        start a recording; prints its name\n"
"  list [--json]                recordings with their progress\n"
"  stop NAME                    stop (returns once the file is complete)\n"
"  fetch NAME [-o FILE] [--part N]\n"
"                               download (resumes FILE; checks the digest)\n"
"  report NAME                  memmon report --json of the file, run there\n"
"  timeline NAME -o FILE.html   memmon timeline of the file, drawn there\n"
"  delete NAME                  remove the recording's files\n"
"\n"
"  --token-file FILE   the server's token (else $MEMMON_TOKEN)\n"
"  --tls               use HTTPS (also: HOST given as https://...)\n"
"  --cacert FILE       trust this CA / self-signed certificate\n"
"  --timeout SEC       give up on a silent server (default 60)\n";

struct remote {
	char base[512];
	char auth[300];
	const char *cacert;
	long timeout;
	const char *host;
};

struct resp {
	long status;
	char *body;
	size_t len;
	char digest[128];
	char content_range[128];
	FILE *out;		/* 200/206 bodies go here */
	__u64 written;
	__u64 resume_from;
	bool progress;
};

int remote_base_url(const char *hostport, bool tls, char *out, size_t size)
{
	const char *p;
	int n;

	if (!*hostport || strpbrk(hostport, " \t\r\n/?#@"))
		if (strncmp(hostport, "http://", 7) && strncmp(hostport, "https://", 8))
			return -EINVAL;
	if (!strncmp(hostport, "http://", 7) || !strncmp(hostport, "https://", 8)) {
		n = snprintf(out, size, "%s", hostport);
		while (n > 0 && out[n - 1] == '/')
			out[--n] = 0;
		return n > 0 && (size_t)n < size ? 0 : -EINVAL;
	}
	/* a port given: after "]" for [v6], else after the only ':' */
	p = hostport[0] == '[' ? strstr(hostport, "]:") : strchr(hostport, ':');
	if (hostport[0] != '[' && p && strchr(p + 1, ':'))
		return -EINVAL;	/* a bare IPv6 address: brackets needed */
	n = snprintf(out, size, "%s://%s%s", tls ? "https" : "http", hostport,
		     p ? "" : ":" "7420");
	return n > 0 && (size_t)n < size ? 0 : -EINVAL;
}

static size_t on_header(char *buf, size_t sz, size_t nm, void *ctx)
{
	struct resp *rs = ctx;
	size_t n = sz * nm;
	char line[256];

	snprintf(line, sizeof(line), "%.*s", (int)(n < 255 ? n : 255), buf);
	line[strcspn(line, "\r\n")] = 0;
	if (!strncmp(line, "HTTP/", 5)) {
		const char *sp = strchr(line, ' ');

		rs->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		rs->digest[0] = rs->content_range[0] = 0;
	} else if (!strncasecmp(line, "Repr-Digest:", 12)) {
		snprintf(rs->digest, sizeof(rs->digest), "%s", line + 12 + strspn(line + 12, " "));
	} else if (!strncasecmp(line, "Content-Range:", 14)) {
		snprintf(rs->content_range, sizeof(rs->content_range), "%s",
			 line + 14 + strspn(line + 14, " "));
	}
	return n;
}

static size_t on_body(char *buf, size_t sz, size_t nm, void *ctx)
{
	struct resp *rs = ctx;
	size_t n = sz * nm;
	char *b;

	if (rs->out && (rs->status == 200 || rs->status == 206)) {
		if (fwrite(buf, 1, n, rs->out) != n)
			return 0;
		rs->written += n;
		return n;
	}
	if (rs->len + n > (64 << 20))
		return 0;
	b = realloc(rs->body, rs->len + n + 1);
	if (!b)
		return 0;
	memcpy(b + rs->len, buf, n);
	rs->body = b;
	rs->len += n;
	b[rs->len] = 0;
	return n;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct resp *rs = ctx;

	(void)ultotal;
	(void)ulnow;
	if (rs->progress && dltotal > 0 && (rs->status == 200 || rs->status == 206))
		fprintf(stderr, "\rmemmon remote: %.1f of %.1f MB (%3.0f%%)   ",
			(rs->resume_from + dlnow) / 1e6, (rs->resume_from + dltotal) / 1e6,
			100.0 * (rs->resume_from + dlnow) / (rs->resume_from + dltotal));
	return 0;
}

/* The server's {"error": "..."} if there is one, else the body. */
static const char *server_msg(struct resp *rs, char *buf, size_t size)
{
	json_t *o = rs->body ? json_loads(rs->body, 0, NULL) : NULL;
	const char *e = json_string_value(json_object_get(o, "error"));

	snprintf(buf, size, "%s", e ? e : rs->body && *rs->body ? rs->body : "");
	json_decref(o);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* Returns 0 with rs->status set, or 1 with the reason printed. */
static int request(struct remote *rm, const char *method, const char *path,
		   const char *body, const char *range, struct resp *rs)
{
	char url[1024], errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();
	CURLcode cc;

	if (!c)
		return tool_err("remote", "cannot start libcurl");
	snprintf(url, sizeof(url), "%s%s", rm->base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, rs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, rs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 15L);
	/* no total time-out (big files); a server silent this long is gone */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, rm->timeout);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (rm->cacert)
		curl_easy_setopt(c, CURLOPT_CAINFO, rm->cacert);
	h = curl_slist_append(h, rm->auth);
	if (body) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	if (range)
		curl_easy_setopt(c, CURLOPT_RANGE, range);
	if (rs->progress) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, rs);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	cc = curl_easy_perform(c);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (rs->progress)
		fprintf(stderr, "\n");
	switch (cc) {
	case CURLE_OK:
		return 0;
	case CURLE_COULDNT_CONNECT:
		return tool_err("remote", "cannot connect to %s: %s (is memmon serve "
				"running there, on that port?)", rm->base,
				*errbuf ? errbuf : "connection refused");
	case CURLE_COULDNT_RESOLVE_HOST:
		return tool_err("remote", "%s: unknown host", rm->host);
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
		return tool_err("remote", "TLS failure talking to %s: %s (is it "
				"HTTPS? give its certificate with --cacert FILE)",
				rm->base, errbuf);
	case CURLE_GOT_NOTHING:
		return tool_err("remote", "%s closed the connection without an "
				"answer (HTTP to an HTTPS server? use --tls)", rm->base);
	default:
		return tool_err("remote", "%s: %s", url, *errbuf ? errbuf :
				curl_easy_strerror(cc));
	}
}

/* An HTTP status the command did not expect: say what it means. */
static int http_err(struct resp *rs, const char *what)
{
	char msg[600];

	server_msg(rs, msg, sizeof(msg));
	switch (rs->status) {
	case 401:
		return tool_err("remote", "the server refused the token (401): check "
				"--token-file or MEMMON_TOKEN");
	case 404:
		return tool_err("remote", "%s: not found (404)%s%s", what,
				*msg ? ": " : "", msg);
	case 507:
		return tool_err("remote", "the server is out of disk quota (507): %s", msg);
	case 429:
		return tool_err("remote", "too many recordings running (429): %s", msg);
	default:
		return tool_err("remote", "%s: the server answered %ld%s%s", what,
				rs->status, *msg ? ": " : "", msg);
	}
}

static int read_token(const char *file, char *out, size_t size)
{
	const char *env = getenv("MEMMON_TOKEN");
	FILE *f;

	if (!file) {
		if (!env || !*env)
			return tool_usage_err("remote", "no token: give --token-file FILE "
					      "or set MEMMON_TOKEN");
		snprintf(out, size, "%s", env);
		return 0;
	}
	f = fopen(file, "re");
	if (!f)
		return tool_err("remote", "%s: %s", file, strerror(errno));
	if (!fgets(out, size, f))
		out[0] = 0;
	fclose(f);
	out[strcspn(out, "\r\n")] = 0;
	if (!*out)
		return tool_err("remote", "%s: empty token", file);
	return 0;
}

static int do_start(struct remote *rm, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "follow", no_argument, NULL, 'f' },
		{ "events", required_argument, NULL, 'e' },
		{ "ring-size", required_argument, NULL, 'm' },
		{ "compress", no_argument, NULL, 'z' },
		{ "max-size", required_argument, NULL, 'S' },
		{ "rotate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'D' },
		{ "until-mark", required_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 },
	};
	json_t *req = json_object(), *o;
	struct resp rs = { 0 };
	char *body, *end, *tok, *save = NULL;
	int opt, ret;
	long v;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+n:p:G:fe:m:z", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			json_object_set_new(req, "name", json_string(optarg));
			break;
		case 'p':
			o = json_array();
			/* what pidof prints, too: blanks or commas */
			for (tok = strtok_r(optarg, ", \t\n", &save); tok;
			     tok = strtok_r(NULL, ", \t\n", &save)) {
				v = strtol(tok, &end, 10);
				if (*end || v <= 0) {
					json_decref(o);
					json_decref(req);
					return tool_usage_err("remote", "bad pid '%s'", tok);
				}
				json_array_append_new(o, json_integer(v));
			}
			json_object_set_new(req, "pids", o);
			break;
		case 'G':
			json_object_set_new(req, "cgroup", json_string(optarg));
			break;
		case 'f':
			json_object_set_new(req, "follow", json_true());
			break;
		case 'e':
			json_object_set_new(req, "events", json_string(optarg));
			break;
		case 'm':
			json_object_set_new(req, "ring_size", json_string(optarg));
			break;
		case 'z':
			json_object_set_new(req, "compress", json_true());
			break;
		case 'S':
			json_object_set_new(req, "max_size", json_string(optarg));
			break;
		case 'r':
		case 'D':
			v = strtol(optarg, &end, 10);
			if (*end || v <= 0) {
				json_decref(req);
				return tool_usage_err("remote", "bad number '%s'", optarg);
			}
			json_object_set_new(req, opt == 'r' ? "rotate" : "duration",
					    json_integer(v));
			break;
		case 'U':
			json_object_set_new(req, "until_mark", json_string(optarg));
			break;
		default:
			json_decref(req);
			return tool_usage_err("remote", "start: unknown option '%s'",
					      argv[optind - 1]);
		}
	}
	if (optind < argc) {
		o = json_array();
		for (; optind < argc; optind++)
			json_array_append_new(o, json_string(argv[optind]));
		json_object_set_new(req, "cmd", o);
	}
	body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	ret = request(rm, "POST", "/recordings", body, NULL, &rs);
	free(body);
	if (!ret && rs.status != 201)
		ret = http_err(&rs, "start");
	if (!ret) {
		o = json_loads(rs.body, 0, NULL);
		printf("%s\n", json_string_value(json_object_get(o, "name")) ?: "?");
		json_decref(o);
	}
	free(rs.body);
	return ret;
}

static int do_list(struct remote *rm, bool as_json)
{
	struct resp rs = { 0 };
	json_t *arr, *o;
	size_t i, j;
	int ret;

	ret = request(rm, "GET", "/recordings", NULL, NULL, &rs);
	if (!ret && rs.status != 200)
		ret = http_err(&rs, "list");
	if (ret) {
		free(rs.body);
		return ret;
	}
	if (as_json) {
		fputs(rs.body, stdout);
		free(rs.body);
		return 0;
	}
	arr = json_loads(rs.body, 0, NULL);
	printf("%-32s %-9s %12s %12s %10s\n", "NAME", "STATE", "EVENTS", "BYTES", "LOST");
	json_array_foreach(arr, i, o) {
		json_t *l = json_object_get(o, "lost_per_cpu"), *x;
		long long lost = 0;

		json_array_foreach(l, j, x)
			lost += json_integer_value(x);
		printf("%-32s %-9s %12lld %12lld %10lld\n",
		       json_string_value(json_object_get(o, "name")) ?: "?",
		       json_string_value(json_object_get(o, "state")) ?: "?",
		       (long long)json_integer_value(json_object_get(o, "events")),
		       (long long)json_integer_value(json_object_get(o, "bytes")), lost);
		if (json_is_string(json_object_get(o, "error")))
			printf("    error: %s\n", json_string_value(json_object_get(o, "error")));
	}
	json_decref(arr);
	free(rs.body);
	return 0;
}

static int simple(struct remote *rm, const char *method, const char *name,
		  const char *action, long want, bool print)
{
	struct resp rs = { 0 };
	char path[256];
	int ret;

	if (!serve_name_valid(name))
		return tool_usage_err("remote", "bad recording name '%s'", name);
	snprintf(path, sizeof(path), "/recordings/%s%s%s", name, *action ? "/" : "", action);
	ret = request(rm, method, path, NULL, NULL, &rs);
	if (!ret && rs.status != want)
		ret = http_err(&rs, name);
	if (!ret && print && rs.body)
		fputs(rs.body, stdout);
	free(rs.body);
	return ret;
}

static int local_digest(const char *file, char *out, size_t size)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return -errno;
	e = serve_file_digest(fd, out, size);
	close(fd);
	return e;
}

static int do_fetch(struct remote *rm, const char *name, const char *file,
		    unsigned int part)
{
	struct resp rs = { .progress = isatty(2) };
	char path[256], range[64], dg[80];
	struct stat st;
	int ret;

	if (!serve_name_valid(name))
		return tool_usage_err("remote", "bad recording name '%s'", name);
	if (part)
		snprintf(path, sizeof(path), "/recordings/%s/files/%u", name, part);
	else
		snprintf(path, sizeof(path), "/recordings/%s/file", name);
	if (!stat(file, &st) && st.st_size > 0) {
		rs.resume_from = st.st_size;
		snprintf(range, sizeof(range), "%lld-", (long long)st.st_size);
	}
	rs.out = fopen(file, rs.resume_from ? "ae" : "we");
	if (!rs.out)
		return tool_err("remote", "%s: %s", file, strerror(errno));
	ret = request(rm, "GET", path, NULL, rs.resume_from ? range : NULL, &rs);
	if (!ret && rs.status == 200 && rs.resume_from) {
		/* The server sent it all: start the file over. */
		if (fflush(rs.out) || ftruncate(fileno(rs.out), 0)) {
			ret = tool_err("remote", "%s: %s", file, strerror(errno));
		} else {
			fclose(rs.out);
			rs.out = fopen(file, "we");
			rs.resume_from = 0;
			rs.written = 0;
			ret = rs.out ? request(rm, "GET", path, NULL, NULL, &rs) :
				tool_err("remote", "%s: %s", file, strerror(errno));
		}
	}
	if (rs.out && fclose(rs.out) && !ret)
		ret = tool_err("remote", "%s: %s", file, strerror(errno));
	if (ret) {
		free(rs.body);
		return ret;
	}
	if (rs.status == 416 && rs.resume_from) {
		/* Nothing past our end: complete already, if the digest agrees. */
		struct resp hd = { 0 };

		free(rs.body);
		ret = request(rm, "GET", path, NULL, "0-0", &hd);
		free(hd.body);
		if (ret)
			return ret;
		if (hd.status != 206 && hd.status != 200)
			return http_err(&hd, name);
		snprintf(rs.digest, sizeof(rs.digest), "%s", hd.digest);
		rs.status = 206;
		rs.body = NULL;
	}
	if (rs.status != 200 && rs.status != 206) {
		ret = http_err(&rs, name);
		free(rs.body);
		return ret;
	}
	free(rs.body);
	if (!rs.digest[0])
		return tool_err("remote", "the server sent no Repr-Digest: cannot check %s",
				file);
	ret = local_digest(file, dg, sizeof(dg));
	if (ret)
		return tool_err("remote", "%s: %s", file, strerror(-ret));
	if (strcmp(dg, rs.digest))
		return tool_err("remote", "%s: digest mismatch (%s here, %s on the "
				"server): remove it and fetch again", file, dg, rs.digest);
	fprintf(stderr, "memmon remote: %s: %llu bytes%s, digest verified\n", file,
		(unsigned long long)(rs.resume_from + rs.written),
		rs.resume_from ? " (resumed)" : "");
	return 0;
}

static int do_timeline(struct remote *rm, const char *name, const char *file)
{
	struct resp rs = { 0 };
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "/recordings/%s/timeline", name);
	rs.out = fopen(file, "we");
	if (!rs.out)
		return tool_err("remote", "%s: %s", file, strerror(errno));
	ret = request(rm, "GET", path, NULL, NULL, &rs);
	if (fclose(rs.out) && !ret)
		ret = tool_err("remote", "%s: %s", file, strerror(errno));
	if (!ret && rs.status != 200) {
		unlink(file);
		ret = http_err(&rs, name);
	}
	free(rs.body);
	return ret;
}

int cmd_remote(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "token-file", required_argument, NULL, 'T' },
		{ "tls", no_argument, NULL, 'S' },
		{ "cacert", required_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct remote rm = { .timeout = 60 };
	const char *token_file = NULL, *sub, *out = NULL;
	char token[256];
	bool tls = false;
	unsigned int part = 0;
	int opt, ret, i;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'T':
			token_file = optarg;
			break;
		case 'S':
			tls = true;
			break;
		case 'C':
			rm.cacert = optarg;
			break;
		case 't':
			rm.timeout = strtol(optarg, NULL, 10);
			if (rm.timeout <= 0)
				return tool_usage_err("remote", "bad --timeout '%s'", optarg);
			break;
		case 'h':
			fputs(remote_usage, stdout);
			return tool_close_stdout("remote");
		default:
			return tool_usage_err("remote", "unknown option '%s'",
					      argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		return tool_usage_err("remote", "give HOST[:PORT] and a command "
				      "(memmon remote --help)");
	rm.host = argv[optind];
	if (remote_base_url(rm.host, tls || rm.cacert, rm.base, sizeof(rm.base)))
		return tool_usage_err("remote", "bad host '%s': HOST[:PORT], "
				      "[IPV6]:PORT or an http(s):// URL", rm.host);
	sub = argv[optind + 1];
	ret = read_token(token_file, token, sizeof(token));
	if (ret)
		return ret;
	snprintf(rm.auth, sizeof(rm.auth), "Authorization: Bearer %s", token);
	argc -= optind + 1;
	argv += optind + 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!strcmp(sub, "start")) {
		ret = do_start(&rm, argc, argv);
	} else if (!strcmp(sub, "list")) {
		ret = do_list(&rm, argc > 1 && !strcmp(argv[1], "--json"));
	} else if (argc < 2) {
		ret = tool_usage_err("remote", "%s: which recording?", sub);
	} else if (!strcmp(sub, "stop")) {
		ret = simple(&rm, "POST", argv[1], "stop", 200, false);
	} else if (!strcmp(sub, "delete")) {
		ret = simple(&rm, "DELETE", argv[1], "", 200, false);
	} else if (!strcmp(sub, "report")) {
		ret = simple(&rm, "GET", argv[1], "report", 200, true);
	} else if (!strcmp(sub, "fetch") || !strcmp(sub, "timeline")) {
		char def[128];

		for (i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "-o") && i + 1 < argc) {
				out = argv[++i];
			} else if (!strcmp(argv[i], "--part") && i + 1 < argc) {
				part = strtoul(argv[++i], NULL, 10);
			} else {
				curl_global_cleanup();
				return tool_usage_err("remote", "%s: unexpected '%s'", sub,
						      argv[i]);
			}
		}
		if (!serve_name_valid(argv[1])) {
			ret = tool_usage_err("remote", "bad recording name '%s'", argv[1]);
		} else if (!strcmp(sub, "fetch")) {
			snprintf(def, sizeof(def), "%s.memmon", argv[1]);
			ret = do_fetch(&rm, argv[1], out ? out : def, part);
		} else if (!out) {
			ret = tool_usage_err("remote", "timeline: give -o FILE.html");
		} else {
			ret = do_timeline(&rm, argv[1], out);
		}
	} else {
		ret = tool_usage_err("remote", "unknown command '%s'", sub);
	}
	curl_global_cleanup();
	if (!ret)
		ret = tool_close_stdout("remote");
	return ret;
}
