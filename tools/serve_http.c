// SPDX-License-Identifier: GPL-2.0
/*
 * memmon serve: the HTTP side (libmicrohttpd, a thread per connection so a
 * stalled client holds only its own thread; MHD's idle time-out ends it).
 * Every path but /healthz needs the bearer token. Recording names are
 * checked before a path is formed from them.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gnutls/crypto.h>
#include <microhttpd.h>
#include "serve.h"

struct conn {
	char *body;
	size_t len;
	bool too_big;
	bool answered;		/* a response was queued on the first call */
};

void serve_base64(const unsigned char *in, size_t len, char *out)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < len; i += 3) {
		*out++ = tab[in[i] >> 2];
		*out++ = tab[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		*out++ = tab[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
		*out++ = tab[in[i + 2] & 63];
	}
	if (i < len) {
		*out++ = tab[in[i] >> 2];
		if (i + 1 < len) {
			*out++ = tab[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
			*out++ = tab[(in[i + 1] & 15) << 2];
		} else {
			*out++ = tab[(in[i] & 3) << 4];
			*out++ = '=';
		}
		*out++ = '=';
	}
	*out = 0;
}

int serve_file_digest(int fd, char *out, size_t size)
{
	unsigned char md[32];
	char b64[48];
	gnutls_hash_hd_t h;
	char *buf = malloc(1 << 16);
	off_t off = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0) {
		free(buf);
		return -EIO;
	}
	while ((n = pread(fd, buf, 1 << 16, off)) > 0) {
		gnutls_hash(h, buf, n);
		off += n;
	}
	gnutls_hash_deinit(h, md);
	free(buf);
	if (n < 0)
		return -errno;
	serve_base64(md, sizeof(md), b64);
	snprintf(out, size, "sha-256=:%s:", b64);
	return 0;
}

/* Digits only, no sign, no overflow; *end past them. */
static bool parse_u64(const char **p, __u64 *v)
{
	const char *s = *p;

	*v = 0;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9') {
		if (*v > (~0ULL - 9) / 10)
			return false;
		*v = *v * 10 + (*s++ - '0');
	}
	*p = s;
	return true;
}

int serve_parse_range(const char *hdr, __u64 size, __u64 *start, __u64 *end)
{
	const char *p;
	__u64 a, b;
	bool has_b;

	if (!hdr || strncmp(hdr, "bytes=", 6))
		return 0;
	p = hdr + 6;
	while (*p == ' ')
		p++;
	if (strchr(p, ','))
		return 0;	/* several ranges: RFC 9110 lets us send it all */
	if (*p == '-') {
		p++;
		if (!parse_u64(&p, &a) || p[strspn(p, " ")])
			return 0;
		if (!a || !size)
			return -1;
		*start = a >= size ? 0 : size - a;
		*end = size - 1;
		return 1;
	}
	if (!parse_u64(&p, &a) || *p++ != '-')
		return 0;
	has_b = parse_u64(&p, &b);
	if (p[strspn(p, " ")] || (has_b && b < a))
		return 0;
	if (a >= size)
		return -1;
	*start = a;
	*end = has_b && b < size - 1 ? b : size - 1;
	return 1;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     const char *type, char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned int status,
				  json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(1));
	size_t n;

	json_decref(o);
	if (!s)
		return MHD_NO;
	n = strlen(s);
	s = realloc(s, n + 2);
	if (!s)
		return MHD_NO;
	s[n] = '\n';
	s[n + 1] = 0;
	return reply(c, status, "application/json", s, n + 1);
}

static enum MHD_Result reply_err(struct MHD_Connection *c, unsigned int status,
				 const char *msg)
{
	json_t *o = json_object();

	json_object_set_new(o, "error", json_string(msg));
	return reply_json(c, status, o);
}

/* 401 says nothing else: no body, no hint which part was wrong. */
static enum MHD_Result reply_401(struct MHD_Connection *c)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, "",
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	ret = MHD_queue_response(c, MHD_HTTP_UNAUTHORIZED, r);
	MHD_destroy_response(r);
	return ret;
}

static bool is_running(struct serve *sv, const char *name)
{
	struct rec *r;
	bool run;

	pthread_mutex_lock(&sv->lock);
	r = serve_rec_find(sv, name);
	run = r && r->state == REC_RUNNING;
	pthread_mutex_unlock(&sv->lock);
	return run;
}

static bool exists(struct serve *sv, const char *name)
{
	bool e;

	pthread_mutex_lock(&sv->lock);
	e = serve_rec_find(sv, name) != NULL;
	pthread_mutex_unlock(&sv->lock);
	return e;
}

/*
 * Digests of finished files, so that a resumed or ranged fetch does not
 * hash the whole file again. An entry holds for the file it was computed
 * from while the file's identity, size and change time are the same; a
 * recording is fetched only once it is no longer written. digest_lock
 * guards the table; the hashing itself runs without it.
 */
#define DIGEST_CACHE	16

struct digest_entry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char digest[80];
};

static struct digest_entry digest_cache[DIGEST_CACHE];
static unsigned int digest_next;
static pthread_mutex_t digest_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_file(const struct digest_entry *e, const struct stat *st)
{
	return e->digest[0] && e->dev == st->st_dev && e->ino == st->st_ino &&
	       e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec &&
	       e->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       e->ctime.tv_sec == st->st_ctim.tv_sec &&
	       e->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static int cached_digest(int fd, const struct stat *st, char *out, size_t size)
{
	struct digest_entry *e;
	unsigned int i;
	int ret;

	pthread_mutex_lock(&digest_lock);
	for (i = 0; i < DIGEST_CACHE; i++) {
		if (same_file(&digest_cache[i], st)) {
			snprintf(out, size, "%s", digest_cache[i].digest);
			pthread_mutex_unlock(&digest_lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&digest_lock);
	ret = serve_file_digest(fd, out, size);
	if (ret)
		return ret;
	pthread_mutex_lock(&digest_lock);
	e = &digest_cache[digest_next++ % DIGEST_CACHE];
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime = st->st_mtim;
	e->ctime = st->st_ctim;
	snprintf(e->digest, sizeof(e->digest), "%s", out);
	pthread_mutex_unlock(&digest_lock);
	return 0;
}

static enum MHD_Result serve_file(struct serve *sv, struct MHD_Connection *c,
				  const char *name, unsigned int part)
{
	char path[4200], digest[80], cr[96];
	const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_RANGE);
	struct MHD_Response *r;
	enum MHD_Result ret;
	__u64 start = 0, end = 0, size;
	struct stat st;
	int fd, rr;

	if (is_running(sv, name))
		return reply_err(c, MHD_HTTP_CONFLICT, "the recording is still "
				 "running: stop it first, then fetch its file");
	serve_rec_path(sv, name, part, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return reply_err(c, MHD_HTTP_NOT_FOUND, part ? "no such part of "
				 "that recording" : "that recording has no file");
	}
	size = st.st_size;
	if (cached_digest(fd, &st, digest, sizeof(digest))) {
		close(fd);
		return reply_err(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the file");
	}
	rr = serve_parse_range(range, size, &start, &end);
	if (rr < 0) {
		close(fd);
		r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)size);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
		ret = MHD_queue_response(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (rr == 0) {
		start = 0;
		end = size ? size - 1 : 0;
	}
	r = MHD_create_response_from_fd_at_offset64(size ? end - start + 1 : 0, fd, start);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	MHD_add_response_header(r, "Repr-Digest", digest);
	if (rr == 1) {
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu", (unsigned long long)start,
			 (unsigned long long)end, (unsigned long long)size);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
	}
	ret = MHD_queue_response(c, rr == 1 ? MHD_HTTP_PARTIAL_CONTENT : MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static int cmp_part(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "part"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "part"));

	return (x > y) - (x < y);
}

/* NAME.memmon (part 0) and the NAME.memmon.N that --rotate leaves. */
static enum MHD_Result serve_parts(struct serve *sv, struct MHD_Connection *c,
				   const char *name)
{
	json_t *arr = json_array(), *v[1024];
	size_t nl = strlen(name), i, n = 0;
	struct dirent *e;
	DIR *d = opendir(sv->cfg.dir);

	while (d && (e = readdir(d)) && n < 1024) {
		const char *s = e->d_name + nl;
		struct stat st;
		json_t *o;

		if (strncmp(e->d_name, name, nl) || strncmp(s, ".memmon", 7) ||
		    (s[7] && (s[7] != '.' || !s[8] || strlen(s + 8) > 9 ||
			      strspn(s + 8, "0123456789") != strlen(s + 8))) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		o = json_object();
		json_object_set_new(o, "part", json_integer(s[7] ? atol(s + 8) : 0));
		json_object_set_new(o, "bytes", json_integer((json_int_t)st.st_size));
		v[n++] = o;
	}
	if (d)
		closedir(d);
	qsort(v, n, sizeof(v[0]), cmp_part);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	return reply_json(c, MHD_HTTP_OK, arr);
}

static enum MHD_Result serve_tool(struct serve *sv, struct MHD_Connection *c,
				  const char *name, bool timeline)
{
	char path[4200], dir[] = "/tmp/memmon-serve.XXXXXX", out[64];
	char *args[6], *buf = NULL;
	size_t len = 0;
	int rc, fd;

	serve_rec_path(sv, name, 0, path, sizeof(path));
	if (access(path, R_OK))
		return reply_err(c, MHD_HTTP_NOT_FOUND, "that recording has no file");
	if (!timeline) {
		args[0] = "report";
		args[1] = "--json";
		args[2] = path;
		args[3] = NULL;
		rc = serve_run_tool(sv, args, &buf, &len);
		if (rc)
			free(buf);
		if (rc == -EFBIG || rc == 128 + SIGXCPU)
			return reply_err(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
					 "memmon report passed the server's limits on a request");
		if (rc < 0)
			return reply_err(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
					 "cannot run memmon report");
		if (rc)
			return reply_err(c, 422,
					 "memmon report cannot read the file");
		return reply(c, MHD_HTTP_OK, "application/json", buf, len);
	}
	if (!mkdtemp(dir))
		return reply_err(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "no temporary directory");
	snprintf(out, sizeof(out), "%s/t.html", dir);
	args[0] = "timeline";
	args[1] = path;
	args[2] = "-o";
	args[3] = out;
	args[4] = NULL;
	rc = serve_run_tool(sv, args, &buf, &len);
	free(buf);
	fd = open(out, O_RDONLY | O_CLOEXEC);
	unlink(out);
	rmdir(dir);
	if (rc || fd < 0) {
		if (fd >= 0)
			close(fd);
		if (rc == -EFBIG || rc == 128 + SIGXCPU || rc == 128 + SIGXFSZ)
			return reply_err(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
					 "memmon timeline passed the server's limits on a request");
		return reply_err(c, 422,
				 "memmon timeline cannot draw the file");
	} else {
		struct stat st;
		struct MHD_Response *r;
		enum MHD_Result ret;

		if (fstat(fd, &st)) {
			close(fd);
			return reply_err(c, 500, "cannot read the page");
		}
		r = MHD_create_response_from_fd(st.st_size, fd);
		if (!r) {
			close(fd);
			return MHD_NO;
		}
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/html; charset=utf-8");
		ret = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
}

static enum MHD_Result route_recording(struct serve *sv, struct MHD_Connection *c,
				       const char *method, const char *rest)
{
	char name[SERVE_NAME_MAX + 1], err[512], action[32] = "", part[32] = "";
	const char *slash = strchr(rest, '/');
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
	json_t *list;
	size_t i;
	int st;

	/* The name first: nothing below sees a name that is not valid. */
	if (n > SERVE_NAME_MAX) {
		return reply_err(c, MHD_HTTP_BAD_REQUEST, "bad recording name");
	}
	memcpy(name, rest, n);
	name[n] = 0;
	if (!serve_name_valid(name))
		return reply_err(c, MHD_HTTP_BAD_REQUEST, "bad recording name");
	if (slash) {
		const char *s2 = strchr(slash + 1, '/');
		size_t an = s2 ? (size_t)(s2 - slash - 1) : strlen(slash + 1);

		if (an >= sizeof(action) || (s2 && strlen(s2 + 1) >= sizeof(part)))
			return reply_err(c, MHD_HTTP_NOT_FOUND, "no such resource");
		memcpy(action, slash + 1, an);
		action[an] = 0;
		if (s2)
			snprintf(part, sizeof(part), "%s", s2 + 1);
	}
	if (!exists(sv, name))
		return reply_err(c, MHD_HTTP_NOT_FOUND, "no such recording");
	if (!*action && !strcmp(method, "DELETE")) {
		st = serve_rec_delete(sv, name, err, sizeof(err));
		if (st != 200)
			return reply_err(c, st, err);
		list = json_object();
		json_object_set_new(list, "deleted", json_string(name));
		return reply_json(c, MHD_HTTP_OK, list);
	}
	if (!*action && !strcmp(method, "GET")) {
		list = serve_rec_list(sv);
		for (i = 0; i < json_array_size(list); i++) {
			json_t *o = json_array_get(list, i);

			if (!strcmp(json_string_value(json_object_get(o, "name")), name)) {
				json_incref(o);
				json_decref(list);
				return reply_json(c, MHD_HTTP_OK, o);
			}
		}
		json_decref(list);
		return reply_err(c, MHD_HTTP_NOT_FOUND, "no such recording");
	}
	if (!strcmp(action, "stop") && !*part) {
		if (strcmp(method, "POST"))
			return reply_err(c, MHD_HTTP_METHOD_NOT_ALLOWED, "use POST");
		st = serve_rec_stop(sv, name, err, sizeof(err));
		if (st != 200)
			return reply_err(c, st, err);
		list = json_object();
		json_object_set_new(list, "stopped", json_string(name));
		return reply_json(c, MHD_HTTP_OK, list);
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_err(c, MHD_HTTP_METHOD_NOT_ALLOWED, "use GET");
	if (!strcmp(action, "file") && !*part)
		return serve_file(sv, c, name, 0);
	if (!strcmp(action, "files") && !*part)
		return serve_parts(sv, c, name);
	if (!strcmp(action, "files")) {
		char *end;
		unsigned long p = strtoul(part, &end, 10);

		if (*end || part[0] < '0' || part[0] > '9' || p > 1000000)
			return reply_err(c, MHD_HTTP_BAD_REQUEST, "a part is a number");
		return serve_file(sv, c, name, p);
	}
	if (!strcmp(action, "report") && !*part)
		return serve_tool(sv, c, name, false);
	if (!strcmp(action, "timeline") && !*part)
		return serve_tool(sv, c, name, true);
	return reply_err(c, MHD_HTTP_NOT_FOUND, "no such resource");
}

static enum MHD_Result route(struct serve *sv, struct MHD_Connection *c,
			     const char *url, const char *method, struct conn *cn)
{
	char name[SERVE_NAME_MAX + 1], err[512];
	json_error_t je;
	json_t *req, *o;
	int st;

	/* No segment starts with a dot: neither names nor actions do. */
	if (strstr(url, "/."))
		return reply_err(c, MHD_HTTP_BAD_REQUEST, "bad path");
	if (!strcmp(url, "/metrics")) {
		char *text;

		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return reply_err(c, MHD_HTTP_METHOD_NOT_ALLOWED, "use GET");
		text = serve_metrics(sv);
		if (!text)
			return reply_err(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			     text, strlen(text));
	}
	if (!strcmp(url, "/recordings") || !strcmp(url, "/recordings/")) {
		if (!strcmp(method, "GET"))
			return reply_json(c, MHD_HTTP_OK, serve_rec_list(sv));
		if (strcmp(method, "POST"))
			return reply_err(c, MHD_HTTP_METHOD_NOT_ALLOWED, "use GET or POST");
		req = json_loadb(cn->body ? cn->body : "", cn->len, JSON_REJECT_DUPLICATES, &je);
		if (!req) {
			snprintf(err, sizeof(err), "malformed JSON: %s (line %d, column %d)",
				 je.text, je.line, je.column);
			return reply_err(c, MHD_HTTP_BAD_REQUEST, err);
		}
		st = serve_rec_start(sv, req, name, err, sizeof(err));
		json_decref(req);
		if (st != 201)
			return reply_err(c, st, err);
		o = json_object();
		json_object_set_new(o, "name", json_string(name));
		json_object_set_new(o, "state", json_string("running"));
		return reply_json(c, MHD_HTTP_CREATED, o);
	}
	if (!strncmp(url, "/recordings/", 12))
		return route_recording(sv, c, method, url + 12);
	return reply_err(c, MHD_HTTP_NOT_FOUND, "no such resource");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version,
			       const char *upload_data, size_t *upload_size,
			       void **con_cls)
{
	struct serve *sv = cls;
	struct conn *cn = *con_cls;

	(void)version;
	if (!cn) {
		const char *cl;

		cn = calloc(1, sizeof(*cn));
		if (!cn)
			return MHD_NO;
		*con_cls = cn;
		__atomic_add_fetch(&sv->requests, 1, __ATOMIC_RELAXED);
		if (!strcmp(url, "/healthz")) {
			cn->answered = true;
			return reply(c, MHD_HTTP_OK, "text/plain", strdup("ok\n"), 3);
		}
		if (!serve_auth_ok(sv->token, MHD_lookup_connection_value(c,
				MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION))) {
			__atomic_add_fetch(&sv->rejected, 1, __ATOMIC_RELAXED);
			cn->answered = true;
			return reply_401(c);
		}
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > sv->cfg.max_body) {
			cn->answered = true;
			return reply_err(c, MHD_HTTP_CONTENT_TOO_LARGE,
					 "the request body is larger than the server takes");
		}
		return MHD_YES;
	}
	if (cn->answered) {
		*upload_size = 0;	/* discarded; MHD closes the connection */
		return MHD_YES;
	}
	if (*upload_size) {
		if (!cn->too_big && cn->len + *upload_size > sv->cfg.max_body) {
			cn->too_big = true;
			free(cn->body);
			cn->body = NULL;
		}
		if (!cn->too_big) {
			char *b = realloc(cn->body, cn->len + *upload_size + 1);

			if (!b)
				return MHD_NO;
			memcpy(b + cn->len, upload_data, *upload_size);
			cn->body = b;
			cn->len += *upload_size;
			b[cn->len] = 0;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	cn->answered = true;
	if (cn->too_big)
		return reply_err(c, MHD_HTTP_CONTENT_TOO_LARGE,
				 "the request body is larger than the server takes");
	return route(sv, c, url, method, cn);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct conn *cn = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (cn) {
		free(cn->body);
		free(cn);
		*con_cls = NULL;
	}
}

static char *slurp(const char *path, char *err, size_t errsize)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;
	long n;

	if (!f) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && n < (1 << 20) &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc(n + 1))) {
		len = fread(buf, 1, n, f);
		buf[len] = 0;
	}
	fclose(f);
	if (!buf)
		snprintf(err, errsize, "%s: cannot read", path);
	return buf;
}

struct MHD_Daemon *serve_http_start(struct serve *sv, char *err, size_t errsize)
{
	const struct serve_cfg *cfg = &sv->cfg;
	const char *addr = cfg->listen ? cfg->listen : cfg->public_ ? "::" : "127.0.0.1";
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	struct sockaddr *sa;
	struct MHD_Daemon *d;
	char *cert = NULL, *key = NULL;

	if (inet_pton(AF_INET, addr, &a4.sin_addr) == 1) {
		a4.sin_port = htons(cfg->port);
		sa = (struct sockaddr *)&a4;
	} else if (inet_pton(AF_INET6, addr, &a6.sin6_addr) == 1) {
		a6.sin6_port = htons(cfg->port);
		sa = (struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
		if (!strcmp(addr, "::"))
			flags |= MHD_USE_DUAL_STACK;
	} else {
		snprintf(err, errsize, "'%s' is not an IPv4 or IPv6 address", addr);
		return NULL;
	}
	if (cfg->tls_cert) {
		cert = slurp(cfg->tls_cert, err, errsize);
		key = cert ? slurp(cfg->tls_key, err, errsize) : NULL;
		if (!key) {
			free(cert);
			return NULL;
		}
		flags |= MHD_USE_TLS;
	}
	d = MHD_start_daemon(flags, cfg->port, NULL, NULL, handler, sv,
			     MHD_OPTION_SOCK_ADDR, sa,
			     MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout,
			     MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, sv,
			     cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, cert,
			     MHD_OPTION_HTTPS_MEM_KEY, key,
			     MHD_OPTION_END);
	if (!d)
		snprintf(err, errsize, "cannot listen on %s port %u%s: %s", addr, cfg->port,
			 cert ? " with TLS (check the certificate and key)" : "",
			 strerror(errno));
	/* MHD copies nothing: the key and certificate live as long as the daemon. */
	if (!d) {
		free(cert);
		free(key);
	}
	return d;
}
