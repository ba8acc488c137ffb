/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Addresses to names: a model of each watched process's address space,
 * fed from the record stream (EXEC + AUXV, mmap/munmap, FORK, EXIT) or a
 * /proc/PID/maps snapshot, and ELF symbol/line lookup through libdwfl.
 */
#ifndef MEMMON_TOOLS_SYMBOLIZE_H
#define MEMMON_TOOLS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/memmon.h>
#include <memmon/decode.h>

/*
 * Bounds against a hostile trace: every table the record stream grows is
 * capped; past a cap the symboliser stops learning (lookups then give
 * [unknown]) instead of growing without limit.
 */
#define SYM_MAX_PROCS		4096
#define SYM_MAX_MAPS		65536	/* per process, vm.max_map_count's default */
#define SYM_MAX_FILES		1024
#define SYM_MAX_FRAMES		256	/* frames read from one record */
#define SYM_BUILD_ID_MAX	64

enum sym_status {
	SYM_OK = 0,		/* sym (and maybe src:line) known */
	SYM_NO_SYMBOL,		/* in a file, no symbol covers it: [path+0xoff] */
	SYM_UNKNOWN,		/* in no known mapping: [unknown] */
	SYM_MISMATCH,		/* the file's build-id is not the recorded one */
	SYM_NOT_FOUND,		/* the file is gone or not a readable ELF file */
};

struct sym_frame {
	__u64 ip;
	enum sym_status status;
	const char *sym;	/* SYM_OK: the function (owned by the symboliser) */
	__u64 off;		/* SYM_OK: ip - sym's start; else offset in file */
	const char *file;	/* the mapped file, NULL when unknown */
	const char *src;	/* source file, NULL without debug info */
	int line;
};

struct symbolizer;

struct symbolizer *sym_new(void);
void sym_free(struct symbolizer *s);

/*
 * Learns from one record (any type; those that change no address space
 * are ignored). paths names the (dev, ino) of mmap records; the caller
 * feeds it PATH records first (memmon_paths__add_rec()).
 * Returns 0, or -ENOMEM / -ENOSPC (a cap reached: the model is partial).
 */
int sym_feed(struct symbolizer *s, const struct memmon_rec_header *rec,
	     const struct memmon_paths *paths);

/* Seeds tgid's space from a /proc/PID/maps format file (attach time). */
int sym_load_maps(struct symbolizer *s, __u32 tgid, const char *maps_path);
/* The same from text already read (a recording's snapshot). */
int sym_load_maps_text(struct symbolizer *s, __u32 tgid, const char *text,
		       size_t len);

/*
 * The build-id a recording saw for path: a file whose own build-id
 * differs gives SYM_MISMATCH frames, never names.
 */
int sym_expect_build_id(struct symbolizer *s, const char *path,
			const __u8 *id, size_t len);

/* path's GNU build-id into id[SYM_BUILD_ID_MAX]; its length, or -errno. */
int sym_read_build_id(const char *path, __u8 *id);

/*
 * The user stack a SYSCALL or FAULT record carries, validated against the
 * record's size; NULL when it has none.
 */
const struct memmon_user_stack *sym_rec_ustack(const struct memmon_rec_header *rec);

/*
 * The record's stack resolved into out[max], innermost first; ip[1] when
 * MEMMON_USTACK_SP is kept only if it lies in an executable file mapping
 * just after a call instruction. Returns the number of frames.
 */
size_t sym_stack(struct symbolizer *s, const struct memmon_rec_header *rec,
		 struct sym_frame *out, size_t max);

/* One address of tgid; ret_addr: a return address (looked up at ip - 1). */
void sym_resolve(struct symbolizer *s, __u32 tgid, __u64 ip, bool ret_addr,
		 struct sym_frame *out);

/* Whether ip (in tgid) follows a call instruction in an executable file. */
bool sym_after_call(struct symbolizer *s, __u32 tgid, __u64 ip);

/* Whether f is in libc or the dynamic loader (the call-site rule). */
bool sym_frame_is_libc(const struct sym_frame *f);

/* A frame's short name: sym+0xoff, [path+0xoff], [unknown], ... */
const char *sym_frame_name(char *buf, size_t len, const struct sym_frame *f);

/*
 * perf-script style: one line per frame, "\t%16llx sym+0xoff (file)";
 * raw: addresses only. Returns a negative value on a write error.
 */
int sym_fprint_stack(FILE *out, const struct sym_frame *f, size_t n, bool raw);
/* The JSON array [{ip, sym, off, file, line}, ...] of the frames. */
int sym_fprint_stack_json(FILE *out, const struct sym_frame *f, size_t n,
			  bool raw);

#endif /* MEMMON_TOOLS_SYMBOLIZE_H */
