// SPDX-License-Identifier: GPL-2.0
/*
 * memmon serve: recording names, the bearer token (its file and its
 * comparison).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "serve.h"

/*
 * A name becomes a file name in DIR: letters, digits, '_', '-', '.', not
 * starting with '.', no "..": no '/', no hidden file, no way out of DIR.
 * Checked before any path is formed (URLs arrive decoded: "..%2F" is "../").
 */
bool serve_name_valid(const char *name)
{
	size_t i, n = strlen(name);

	if (!n || n > SERVE_NAME_MAX || name[0] == '.' || strstr(name, ".."))
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/*
 * Every byte of the longer string is looked at whatever differs, so the
 * time taken says nothing about where a guess went wrong; only the length
 * of what the client sent (which it knows) shows.
 */
bool serve_token_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb, i;
	volatile unsigned char d = la != lb;

	for (i = 0; i < n; i++) {
		unsigned char x = i < la ? (unsigned char)a[i] : 0;
		unsigned char y = i < lb ? (unsigned char)b[i] : 0;

		d |= x ^ y;
	}
	return d == 0;
}

bool serve_auth_ok(const char *token, const char *header)
{
	static const char pfx[] = "Bearer ";

	if (!header || !*token || strncmp(header, pfx, sizeof(pfx) - 1))
		return false;
	return serve_token_equal(header + sizeof(pfx) - 1, token);
}

static int create_token(const char *path, char *token, size_t size)
{
	unsigned char raw[SERVE_TOKEN_BYTES];
	size_t i, got = 0;
	int fd;

	if (size < 2 * sizeof(raw) + 1)
		return -EINVAL;
	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += n;
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(token + 2 * i, 3, "%02x", raw[i]);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%s\n", token) < 0 || fsync(fd) < 0) {
		int e = -errno;

		close(fd);
		unlink(path);
		return e;
	}
	close(fd);
	return 0;
}

int serve_token_load(const char *path, char *token, size_t size, char *err,
		     size_t errsize)
{
	struct stat st;
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT) {
		e = create_token(path, token, size);
		if (e)
			snprintf(err, errsize, "%s: cannot create the token: %s",
				 path, strerror(-e));
		return e;
	}
	if (fd < 0) {
		e = -errno;
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 077) ||
	    st.st_uid != geteuid()) {
		snprintf(err, errsize, "%s: the token file must be a regular file "
			 "of this user that only its owner may read (chmod 600)", path);
		close(fd);
		return -EPERM;
	}
	n = read(fd, token, size - 1);
	e = errno;
	close(fd);
	if (n < 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(e));
		return -e;
	}
	token[n] = 0;
	token[strcspn(token, "\r\n")] = 0;
	if (strlen(token) < 16) {
		snprintf(err, errsize, "%s: the token is shorter than 16 characters",
			 path);
		return -EINVAL;
	}
	return 0;
}
