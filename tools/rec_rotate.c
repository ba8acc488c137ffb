// SPDX-License-Identifier: GPL-2.0
/*
 * rec_rotate: parsing of memmon record's --duration, --max-size and
 * --rotate, and the naming of parts (PATH.1, PATH.2, ...: numbers only
 * grow, so a removed part's name is never reused and a reader that lists
 * the parts sorts them by number).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"
#include "rec_rotate.h"

#define NSEC_PER_SEC	1000000000ULL
#define DURATION_MAX_S	(1000ULL * 24 * 3600)

int rec_parse_duration(const char *s, __u64 *ns)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	switch (*end) {
	case '\0':
	case 's':
		break;
	case 'm':
		mult = 60;
		break;
	case 'h':
		mult = 3600;
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1])
		return -EINVAL;
	if (!v)
		return -EINVAL;
	if (v > DURATION_MAX_S / mult)
		return -ERANGE;
	*ns = v * mult * NSEC_PER_SEC;
	return 0;
}

int rec_parse_max_size(const char *s, __u64 *bytes)
{
	__u64 v;
	int err = tool_parse_size(s, &v);

	if (err)
		return err;
	if (v < REC_MAX_SIZE_MIN)
		return -ERANGE;
	*bytes = v;
	return 0;
}

int rec_parse_rotate(const char *s, unsigned int *keep)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (!v || v > REC_ROTATE_MAX)
		return -ERANGE;
	*keep = (unsigned int)v;
	return 0;
}

char *rec_part_path(const char *base, unsigned long n)
{
	char *p;

	if (asprintf(&p, "%s.%lu", base, n) < 0)
		return NULL;
	return p;
}

unsigned long rec_part_to_remove(unsigned long n, unsigned int keep)
{
	return keep && n > keep ? n - keep : 0;
}
