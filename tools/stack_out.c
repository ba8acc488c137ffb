// SPDX-License-Identifier: GPL-2.0
/*
 * Call stacks in trace/script output: option parsing, the session's
 * stack settings, and a record's stack in text and JSON.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"
#include "stack_out.h"

int stack_parse_call_graph(const char *cmd, const char *arg, struct stack_opts *o)
{
	unsigned long v;
	char *end;

	o->call_graph = true;
	o->depth = STACK_DEPTH_DEFAULT;
	if (!arg)
		return 0;
	/* perf's spelling: only the frame-pointer walk exists here */
	if (!strncmp(arg, "fp", 2) && (!arg[2] || arg[2] == ',')) {
		if (!arg[2])
			return 0;
		arg += 3;
	}
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || v > MEMMON_STACK_DEPTH_MAX)
		return tool_usage_err(cmd, "--call-graph: '%s' is not fp[,DEPTH] or "
				      "a DEPTH of 0..%u", arg, MEMMON_STACK_DEPTH_MAX);
	o->depth = (unsigned int)v;
	return 0;
}

int stack_session_setup(const char *cmd, struct memmon_session *s,
			const struct stack_opts *o)
{
	unsigned int flags = o->fault_stacks ? MEMMON_STACK_FAULTS : 0;
	int ret;

	if (!o->call_graph && !o->fault_stacks)
		return 0;	/* ip[0..1] come with every syscall record */
	ret = memmon_session__set_stack(s, o->call_graph ? o->depth : 0, flags);
	if (ret < 0)
		return tool_err(cmd, "call stacks: %s%s", strerror(-ret),
				ret == -EOPNOTSUPP || ret == -EINVAL ?
				" (the module predates ABI 1.5?)" : "");
	return 0;
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

void stack_load_meta(struct symbolizer *sym, const char *meta_text)
{
	json_t *m = json_loads(meta_text, 0, NULL), *v;
	const char *key;

	if (!m)
		return;
	json_object_foreach(json_object_get(m, "build_ids"), key, v) {
		const char *hex = json_string_value(v);
		__u8 id[SYM_BUILD_ID_MAX];
		size_t n, i;

		if (!hex)
			continue;	/* the recorder could not read one */
		n = strlen(hex);
		if (!n || n % 2 || n / 2 > sizeof(id))
			continue;
		for (i = 0; i < n / 2; i++) {
			int hi = hex_val(hex[2 * i]), lo = hex_val(hex[2 * i + 1]);

			if (hi < 0 || lo < 0)
				break;
			id[i] = (__u8)(hi << 4 | lo);
		}
		if (i == n / 2)
			sym_expect_build_id(sym, key, id, i);
	}
	json_object_foreach(json_object_get(m, "maps"), key, v) {
		unsigned long pid;
		char *end;

		pid = strtoul(key, &end, 10);
		if (json_string_value(v) && !*end && pid && pid <= 0xffffffffUL)
			sym_load_maps_text(sym, (__u32)pid, json_string_value(v),
					   json_string_length(v));
	}
	json_decref(m);
}

int stack_fprint_text(FILE *out, struct symbolizer *sym,
		      const struct memmon_rec_header *rec, bool raw)
{
	struct sym_frame f[MEMMON_STACK_DEPTH_MAX + 2];
	size_t n;

	if (!sym_rec_ustack(rec))
		return 0;
	n = sym_stack(sym, rec, f, sizeof(f) / sizeof(f[0]));
	return sym_fprint_stack(out, f, n, raw);
}

int stack_fprint_json(FILE *out, struct symbolizer *sym,
		      const struct memmon_rec_header *rec,
		      const struct memmon_format_opts *fo, bool raw)
{
	struct sym_frame f[MEMMON_STACK_DEPTH_MAX + 2];
	char *buf = NULL;
	size_t len = 0, n;
	FILE *m;
	int ret;

	if (!sym_rec_ustack(rec))
		return memmon_rec__fprint_json(out, rec, fo);
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	ret = memmon_rec__fprint_json(m, rec, fo);
	if (fclose(m) && ret >= 0)
		ret = -ENOMEM;
	/* the object ends "}\n": the stack goes in before the brace */
	if (ret < 0 || len < 2 || buf[len - 2] != '}' || buf[len - 1] != '\n') {
		if (ret >= 0 && fwrite(buf, 1, len, out) != len)
			ret = -EIO;
		goto out;
	}
	n = sym_stack(sym, rec, f, sizeof(f) / sizeof(f[0]));
	if (fwrite(buf, 1, len - 2, out) != len - 2 || fputs(",\"stack\":", out) < 0 ||
	    sym_fprint_stack_json(out, f, n, raw) || fputs("}\n", out) < 0)
		ret = -EIO;
out:
	free(buf);
	return ret;
}
