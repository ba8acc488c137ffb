// SPDX-License-Identifier: GPL-2.0
/*
 * The symboliser: per-process mapping tables fed from records, an ELF file
 * cache (one libdwfl session per file) and the stack printers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include "symbolize.h"

#define SYM_MAX_LOADS	32	/* PT_LOADs kept per file */
#define SYM_PATH_MAX	4096

struct sym_load {
	__u64 vaddr, memsz, offset, filesz;
	bool exec;
};

/* One ELF file, opened once; ok false: unusable (status says why). */
struct sym_file {
	char *path;
	enum sym_status status;	/* SYM_OK or SYM_MISMATCH / SYM_NOT_FOUND */
	int fd;
	Elf *elf;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	__u8 build_id[SYM_BUILD_ID_MAX];
	int build_id_len;
	bool has_expect;
	__u8 expect[SYM_BUILD_ID_MAX];
	int expect_len;
	struct sym_load load[SYM_MAX_LOADS];
	unsigned int nload;
	__u64 phdr_vaddr;	/* PT_PHDR's p_vaddr, or that of e_phoff */
	bool has_phdr;
	char *interp;		/* PT_INTERP */
	bool opened;
};

/*
 * A mapping [start, end): a file mapped at pgoff (file-offset based
 * lookup through the PT_LOADs), or an image placed whole at bias (the
 * program and interpreter: vaddr = ip - bias). file NULL: anonymous.
 */
struct sym_map {
	__u64 start, end, pgoff, bias;
	struct sym_file *file;
	bool by_bias, exec;
};

struct sym_proc {
	__u32 tgid;
	struct sym_map *map;	/* sorted by start, disjoint */
	size_t nmap, cap;
	struct sym_file *exe;	/* EXEC'd program, waiting for its AUXV */
	/*
	 * The program, if its file could not be read: the kernel placed it
	 * where no record says, so an address in no known mapping is most
	 * likely its, and is reported as not found rather than unknown.
	 */
	struct sym_file *lost_exe;
};

struct symbolizer {
	struct sym_proc *proc;
	size_t nproc, cap;
	struct sym_file **file;
	size_t nfile;
	char *debuginfo_path;
};

/* memmove() that accepts the NULL arrays of empty tables. */
static void sym_move(void *dst, const void *src, size_t n)
{
	if (n)
		memmove(dst, src, n);
}

/*
 * Separate debug info from /usr/lib/debug/.build-id only (what -dbgsym
 * packages install); libdwfl falls back to the file's own. Not elfutils'
 * standard search: that one asks debuginfod servers when DEBUGINFOD_URLS
 * is set, and a trace must not make the symboliser fetch from the network.
 */
static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name,
			      const char *debuglink_file, GElf_Word debuglink_crc,
			      char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char path[sizeof("/usr/lib/debug/.build-id/") + 2 * SYM_BUILD_ID_MAX + 8];
	int len = dwfl_module_build_id(mod, &bits, &vaddr), i, n, fd;

	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	if (len < 2 || len > SYM_BUILD_ID_MAX)
		return -1;
	n = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", bits[0]);
	for (i = 1; i < len; i++)
		n += snprintf(path + n, sizeof(path) - n, "%02x", bits[i]);
	snprintf(path + n, sizeof(path) - n, ".debug");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		*debuginfo_file_name = strdup(path);
		if (!*debuginfo_file_name) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static const Dwfl_Callbacks sym_dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = sym_find_debuginfo,
};

struct symbolizer *sym_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	return s;
}

static void sym_file_free(struct sym_file *f)
{
	if (!f)
		return;
	if (f->dwfl)
		dwfl_end(f->dwfl);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->interp);
	free(f->path);
	free(f);
}

void sym_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nproc; i++)
		free(s->proc[i].map);
	free(s->proc);
	for (i = 0; i < s->nfile; i++)
		sym_file_free(s->file[i]);
	free(s->file);
	free(s);
}

int sym_read_build_id(const char *path, __u8 *id)
{
	const void *p;
	ssize_t n;
	Elf *elf;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto out;
	}
	n = dwelf_elf_gnu_build_id(elf, &p);
	if (n <= 0 || n > SYM_BUILD_ID_MAX) {
		ret = -ENODATA;
		goto out;
	}
	memcpy(id, p, n);
	ret = (int)n;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* Reads the ELF headers; leaves status SYM_NOT_FOUND on any failure. */
static void sym_file_open(struct sym_file *f)
{
	const void *bid;
	GElf_Ehdr eh;
	size_t phnum, i;
	ssize_t n;

	f->opened = true;
	f->status = SYM_NOT_FOUND;
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
	    elf_getphdrnum(f->elf, &phnum))
		return;
	n = dwelf_elf_gnu_build_id(f->elf, &bid);
	if (n > 0 && n <= SYM_BUILD_ID_MAX) {
		memcpy(f->build_id, bid, n);
		f->build_id_len = (int)n;
	}
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return;
		if (ph.p_type == PT_LOAD && f->nload < SYM_MAX_LOADS) {
			f->load[f->nload++] = (struct sym_load){
				.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
				.offset = ph.p_offset, .filesz = ph.p_filesz,
				.exec = ph.p_flags & PF_X,
			};
		} else if (ph.p_type == PT_PHDR) {
			f->phdr_vaddr = ph.p_vaddr;
			f->has_phdr = true;
		} else if (ph.p_type == PT_INTERP && !f->interp &&
			   ph.p_filesz > 1 && ph.p_filesz < SYM_PATH_MAX) {
			char *buf = calloc(1, ph.p_filesz + 1);

			if (buf && pread(f->fd, buf, ph.p_filesz, ph.p_offset) ==
				   (ssize_t)ph.p_filesz && buf[0] == '/')
				f->interp = buf;
			else
				free(buf);
		}
	}
	if (!f->has_phdr) {
		/* the PT_LOAD that holds the program headers' file bytes */
		for (i = 0; i < f->nload; i++) {
			const struct sym_load *l = &f->load[i];

			if (eh.e_phoff >= l->offset &&
			    eh.e_phoff - l->offset < l->filesz) {
				f->phdr_vaddr = eh.e_phoff - l->offset + l->vaddr;
				f->has_phdr = true;
				break;
			}
		}
	}
	f->status = SYM_OK;
	if (f->has_expect && (f->expect_len != f->build_id_len ||
			      memcmp(f->expect, f->build_id, f->expect_len)))
		f->status = SYM_MISMATCH;
}

/* The file for path, opened on first use (status set), NULL on ENOMEM. */
static struct sym_file *sym_file_get(struct symbolizer *s, const char *path,
				     bool open_now)
{
	struct sym_file *f, **nf;
	size_t i;

	for (i = 0; i < s->nfile; i++) {
		if (!strcmp(s->file[i]->path, path)) {
			f = s->file[i];
			goto found;
		}
	}
	if (s->nfile >= SYM_MAX_FILES || strnlen(path, SYM_PATH_MAX) >= SYM_PATH_MAX)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->fd = -1;
	f->path = strdup(path);
	nf = realloc(s->file, (s->nfile + 1) * sizeof(*nf));
	if (!f->path || !nf) {
		if (nf)
			s->file = nf;
		sym_file_free(f);
		return NULL;
	}
	s->file = nf;
	s->file[s->nfile++] = f;
found:
	if (open_now && !f->opened)
		sym_file_open(f);
	return f;
}

int sym_expect_build_id(struct symbolizer *s, const char *path,
			const __u8 *id, size_t len)
{
	struct sym_file *f;

	if (len > SYM_BUILD_ID_MAX)
		return -EINVAL;
	f = sym_file_get(s, path, false);
	if (!f)
		return -ENOMEM;
	f->has_expect = true;
	memcpy(f->expect, id, len);
	f->expect_len = (int)len;
	if (f->opened && f->status == SYM_OK &&
	    (f->expect_len != f->build_id_len || memcmp(f->expect, f->build_id, len)))
		f->status = SYM_MISMATCH;
	return 0;
}

static struct sym_proc *sym_proc_find(struct symbolizer *s, __u32 tgid)
{
	size_t lo = 0, hi = s->nproc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->proc[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nproc && s->proc[lo].tgid == tgid)
		return &s->proc[lo];
	return NULL;
}

static struct sym_proc *sym_proc_get(struct symbolizer *s, __u32 tgid)
{
	struct sym_proc *p = sym_proc_find(s, tgid);
	size_t lo = 0;

	if (p)
		return p;
	if (s->nproc >= SYM_MAX_PROCS)
		return NULL;
	if (s->nproc == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct sym_proc *np = realloc(s->proc, cap * sizeof(*np));

		if (!np)
			return NULL;
		s->proc = np;
		s->cap = cap;
	}
	while (lo < s->nproc && s->proc[lo].tgid < tgid)
		lo++;
	sym_move(&s->proc[lo + 1], &s->proc[lo], (s->nproc - lo) * sizeof(*p));
	s->nproc++;
	s->proc[lo] = (struct sym_proc){ .tgid = tgid };
	return &s->proc[lo];
}

static void sym_proc_drop(struct symbolizer *s, __u32 tgid)
{
	struct sym_proc *p = sym_proc_find(s, tgid);
	size_t i;

	if (!p)
		return;
	i = p - s->proc;
	free(p->map);
	sym_move(p, p + 1, (s->nproc - i - 1) * sizeof(*p));
	s->nproc--;
}

/* First mapping that ends above addr. */
static size_t sym_map_lower(const struct sym_proc *p, __u64 addr)
{
	size_t lo = 0, hi = p->nmap;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->map[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Removes [start, end) from p's mappings, splitting those that straddle it. */
static int sym_unmap(struct sym_proc *p, __u64 start, __u64 end)
{
	size_t i = sym_map_lower(p, start), j;

	if (i < p->nmap && p->map[i].start < start && p->map[i].end > end) {
		/* a hole inside one mapping: split it in two */
		if (p->nmap >= SYM_MAX_MAPS)
			return -ENOSPC;
		if (p->nmap == p->cap) {
			size_t cap = p->cap * 2;
			struct sym_map *nm = realloc(p->map, cap * sizeof(*nm));

			if (!nm)
				return -ENOMEM;
			p->map = nm;
			p->cap = cap;
		}
		sym_move(&p->map[i + 1], &p->map[i], (p->nmap - i) * sizeof(*p->map));
		p->nmap++;
		p->map[i].end = start;
		if (!p->map[i + 1].by_bias)
			p->map[i + 1].pgoff += end - p->map[i + 1].start;
		p->map[i + 1].start = end;
		return 0;
	}
	if (i < p->nmap && p->map[i].start < start) {
		p->map[i].end = start;
		i++;
	}
	for (j = i; j < p->nmap && p->map[j].end <= end; j++)
		;
	if (j < p->nmap && p->map[j].start < end) {
		if (!p->map[j].by_bias)
			p->map[j].pgoff += end - p->map[j].start;
		p->map[j].start = end;
	}
	sym_move(&p->map[i], &p->map[j], (p->nmap - j) * sizeof(*p->map));
	p->nmap -= j - i;
	return 0;
}

static int sym_map_add(struct sym_proc *p, const struct sym_map *m)
{
	size_t i;
	int ret;

	if (m->end <= m->start)
		return 0;
	ret = sym_unmap(p, m->start, m->end);
	if (ret)
		return ret;
	if (p->nmap >= SYM_MAX_MAPS)
		return -ENOSPC;
	if (p->nmap == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct sym_map *nm = realloc(p->map, cap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		p->map = nm;
		p->cap = cap;
	}
	i = sym_map_lower(p, m->start);
	sym_move(&p->map[i + 1], &p->map[i], (p->nmap - i) * sizeof(*p->map));
	p->map[i] = *m;
	p->nmap++;
	return 0;
}

static const struct sym_map *sym_map_find(const struct sym_proc *p, __u64 ip)
{
	size_t i = sym_map_lower(p, ip);

	if (i < p->nmap && p->map[i].start <= ip)
		return &p->map[i];
	return NULL;
}

/* Places an ELF image whole at bias: one mapping over its PT_LOADs' span. */
static int sym_map_image(struct sym_proc *p, struct sym_file *f, __u64 bias)
{
	__u64 lo = ~0ULL, hi = 0;
	unsigned int i;

	if (f->status == SYM_NOT_FOUND || !f->nload)
		return 0;
	for (i = 0; i < f->nload; i++) {
		const struct sym_load *l = &f->load[i];

		if (l->vaddr < lo)
			lo = l->vaddr;
		if (l->vaddr + l->memsz > hi && l->vaddr + l->memsz >= l->vaddr)
			hi = l->vaddr + l->memsz;
	}
	if (lo >= hi || bias + lo < bias || bias + hi < bias + lo)
		return 0;
	return sym_map_add(p, &(struct sym_map){
		.start = bias + lo, .end = bias + hi, .bias = bias,
		.file = f, .by_bias = true, .exec = true,
	});
}

static int sym_feed_auxv(struct symbolizer *s, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_auxv *a = (const void *)rec;
	struct sym_proc *p = sym_proc_find(s, rec->tgid);
	struct sym_file *exe, *interp;
	int ret;

	if (rec->size < sizeof(*a) || !p || !p->exe)
		return 0;
	exe = p->exe;
	p->exe = NULL;
	if (exe->status == SYM_NOT_FOUND)
		p->lost_exe = exe;
	if (exe->status == SYM_NOT_FOUND || !exe->has_phdr || !a->phdr)
		return 0;
	ret = sym_map_image(p, exe, a->phdr - exe->phdr_vaddr);
	if (ret || !exe->interp || !a->base)
		return ret;
	interp = sym_file_get(s, exe->interp, true);
	if (!interp)
		return -ENOMEM;
	return sym_map_image(p, interp, a->base);
}

static int sym_feed_exec(struct symbolizer *s, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_exec *e = (const void *)rec;
	size_t room = rec->size - sizeof(*e);
	struct sym_proc *p;
	char path[SYM_PATH_MAX];

	if (rec->size < sizeof(*e) || e->path_len >= room ||
	    e->path_len >= sizeof(path))
		return 0;
	memcpy(path, e->path, e->path_len);
	path[e->path_len] = '\0';
	p = sym_proc_get(s, rec->tgid);
	if (!p)
		return -ENOSPC;
	p->nmap = 0;	/* the old image is gone */
	p->lost_exe = NULL;
	p->exe = sym_file_get(s, path, true);
	return p->exe ? 0 : -ENOMEM;
}

static int sym_feed_fork(struct symbolizer *s, const struct memmon_rec_header *rec)
{
	const struct memmon_rec_fork *fk = (const void *)rec;
	struct sym_proc *parent, *child;
	size_t n;

	if (rec->size < sizeof(*fk) || fk->child_tgid == rec->tgid ||
	    !fk->child_tgid)
		return 0;	/* a thread shares its process's space */
	child = sym_proc_get(s, fk->child_tgid);
	if (!child)
		return -ENOSPC;
	/* child may have moved parent: look it up after the insert */
	parent = sym_proc_find(s, rec->tgid);
	child->nmap = 0;
	child->exe = NULL;
	child->lost_exe = parent ? parent->lost_exe : NULL;
	if (!parent || !parent->nmap)
		return 0;
	n = parent->nmap;
	if (child->cap < n) {
		struct sym_map *nm = realloc(child->map, n * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		child->map = nm;
		child->cap = n;
	}
	parent = sym_proc_find(s, rec->tgid);
	memcpy(child->map, parent->map, n * sizeof(struct sym_map));
	child->nmap = n;
	return 0;
}

static int sym_feed_syscall(struct symbolizer *s, const struct memmon_rec_header *rec,
			    const struct memmon_paths *paths)
{
	const struct memmon_rec_syscall *sc = (const void *)rec;
	struct sym_proc *p;
	const char *path;
	__u64 len, off;

	if (rec->size < sizeof(*sc) || sc->ret < 0 || (sc->flags & MEMMON_SYSF_COMPAT))
		return 0;
	switch (sc->sys) {
	case MEMMON_SYS_MUNMAP:
		p = sym_proc_find(s, rec->tgid);
		len = (sc->args[1] + 4095) & ~4095ULL;
		if (!p || sc->args[0] + len < sc->args[0])
			return 0;
		return sym_unmap(p, sc->args[0], sc->args[0] + len);
	case MEMMON_SYS_MMAP:
		break;
	default:
		return 0;
	}
	len = (sc->args[1] + 4095) & ~4095ULL;
	off = sc->args[5];
	if (!len || (__u64)sc->ret + len < (__u64)sc->ret)
		return 0;
	p = sym_proc_get(s, rec->tgid);
	if (!p)
		return -ENOSPC;
	if (!(sc->flags & MEMMON_SYSF_FILE))
		/* anonymous memory over a library forgets that part of it */
		return sym_unmap(p, sc->ret, sc->ret + len);
	path = paths ? memmon_paths__lookup(paths, sc->aux[0], sc->aux[1]) : NULL;
	if (!path)
		return sym_unmap(p, sc->ret, sc->ret + len);
	return sym_map_add(p, &(struct sym_map){
		.start = sc->ret, .end = sc->ret + len, .pgoff = off,
		.file = sym_file_get(s, path, false),
		.exec = sc->args[2] & PROT_EXEC,
	});
}

int sym_feed(struct symbolizer *s, const struct memmon_rec_header *rec,
	     const struct memmon_paths *paths)
{
	const struct memmon_rec_exit *ex = (const void *)rec;

	if (rec->size < sizeof(*rec) || !rec->tgid)
		return 0;
	switch (rec->type) {
	case MEMMON_REC_EXEC:
		return sym_feed_exec(s, rec);
	case MEMMON_REC_AUXV:
		return sym_feed_auxv(s, rec);
	case MEMMON_REC_FORK:
		return sym_feed_fork(s, rec);
	case MEMMON_REC_SYSCALL:
		return sym_feed_syscall(s, rec, paths);
	case MEMMON_REC_EXIT:
		/* the process is gone, unless only revoked (it lives on) */
		if (rec->size >= sizeof(*ex) && (ex->flags & MEMMON_EXITF_GROUP))
			sym_proc_drop(s, rec->tgid);
		return 0;
	default:
		return 0;
	}
}

/* One /proc/PID/maps line: "start-end perms offset dev inode   path". */
static int sym_maps_line(struct symbolizer *s, struct sym_proc *p, const char *line)
{
	unsigned long long start, end, off;
	char perms[8], path[SYM_PATH_MAX];
	int n = 0;

	path[0] = '\0';
	if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %n", &start, &end, perms,
		   &off, &n) < 4 || !n)
		return 0;
	if (sscanf(line + n, "%4095[^\n]", path) != 1 || path[0] != '/')
		return 0;
	return sym_map_add(p, &(struct sym_map){
		.start = start, .end = end, .pgoff = off,
		.file = sym_file_get(s, path, false),
		.exec = perms[2] == 'x',
	});
}

int sym_load_maps_text(struct symbolizer *s, __u32 tgid, const char *text,
		       size_t len)
{
	struct sym_proc *p = sym_proc_get(s, tgid);
	const char *end = text + len;
	char line[SYM_PATH_MAX + 128];
	int ret;

	if (!p)
		return -ENOSPC;
	p->nmap = 0;
	while (text < end) {
		const char *nl = memchr(text, '\n', end - text);
		size_t n = (nl ? nl : end) - text;

		if (n < sizeof(line)) {
			memcpy(line, text, n);
			line[n] = '\0';
			ret = sym_maps_line(s, p, line);
			if (ret)
				return ret;
			/* p stays valid: no process is added meanwhile */
		}
		text += n + 1;
	}
	return 0;
}

int sym_load_maps(struct symbolizer *s, __u32 tgid, const char *maps_path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f, *m;
	char chunk[4096];
	size_t n;
	int ret;

	f = fopen(maps_path, "re");
	if (!f)
		return -errno;
	m = open_memstream(&buf, &len);
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	if (fclose(m))
		ret = -ENOMEM;
	if (!ret)
		ret = sym_load_maps_text(s, tgid, buf, len);
	free(buf);
	return ret;
}

/* The file vaddr of ip in m, false when it is in no PT_LOAD. */
static bool sym_map_vaddr(const struct sym_map *m, __u64 ip, __u64 *vaddr,
			  bool *exec)
{
	const struct sym_file *f = m->file;
	__u64 foff;
	unsigned int i;

	if (m->by_bias) {
		*vaddr = ip - m->bias;
		for (i = 0; i < f->nload; i++) {
			const struct sym_load *l = &f->load[i];

			if (*vaddr >= l->vaddr && *vaddr - l->vaddr < l->memsz) {
				*exec = l->exec;
				return true;
			}
		}
		return false;
	}
	foff = ip - m->start + m->pgoff;
	for (i = 0; i < f->nload; i++) {
		const struct sym_load *l = &f->load[i];

		if (foff >= l->offset && foff - l->offset < l->filesz) {
			*vaddr = foff - l->offset + l->vaddr;
			*exec = l->exec;
			return true;
		}
	}
	return false;
}

static Dwfl_Module *sym_file_dwfl(struct sym_file *f)
{
	if (f->mod || f->dwfl)
		return f->mod;
	f->dwfl = dwfl_begin(&sym_dwfl_cb);
	if (!f->dwfl)
		return NULL;
	dwfl_report_begin(f->dwfl);
	/* base 0: module addresses are the file's own vaddrs */
	f->mod = dwfl_report_elf(f->dwfl, f->path, f->path, -1, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	return f->mod;
}

static const struct sym_map *sym_lookup(struct symbolizer *s, __u32 tgid, __u64 ip,
					struct sym_frame *out)
{
	struct sym_proc *p = sym_proc_find(s, tgid);
	const struct sym_map *m = p ? sym_map_find(p, ip) : NULL;

	*out = (struct sym_frame){ .ip = ip, .status = SYM_UNKNOWN };
	if (!m && p && p->lost_exe) {
		out->file = p->lost_exe->path;
		out->status = SYM_NOT_FOUND;
		return NULL;
	}
	if (!m || !m->file)
		return NULL;
	if (!m->file->opened)
		sym_file_open(m->file);
	out->file = m->file->path;
	out->off = m->by_bias ? ip - m->bias : ip - m->start + m->pgoff;
	out->status = m->file->status == SYM_OK ? SYM_NO_SYMBOL : m->file->status;
	return m;
}

void sym_resolve(struct symbolizer *s, __u32 tgid, __u64 ip, bool ret_addr,
		 struct sym_frame *out)
{
	const struct sym_map *m = sym_lookup(s, tgid, ip, out);
	__u64 vaddr, look;
	GElf_Off symoff;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	const char *name;
	GElf_Sym sym;
	bool exec;

	if (!m || out->status != SYM_NO_SYMBOL || !sym_map_vaddr(m, ip, &vaddr, &exec))
		return;
	out->off = vaddr;
	mod = sym_file_dwfl(m->file);
	if (!mod)
		return;
	/* a return address belongs to the call just before it */
	look = ret_addr && vaddr ? vaddr - 1 : vaddr;
	name = dwfl_module_addrinfo(mod, look, &symoff, &sym, NULL, NULL, NULL);
	if (!name || !*name)
		return;
	out->status = SYM_OK;
	out->sym = name;
	out->off = symoff + (look != vaddr);
	line = dwfl_module_getsrc(mod, look);
	if (line) {
		int lineno = 0;
		const char *src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (src && lineno > 0) {
			out->src = src;
			out->line = lineno;
		}
	}
}

/*
 * x86-64 call forms ending at the return address: e8 rel32 (5 bytes); ff /2
 * with a ModRM (and optional REX, SIB, disp8/disp32), 2 to 8 bytes.
 */
static bool sym_is_call(const __u8 *b, size_t n)
{
	size_t len;

	if (n >= 5 && b[n - 5] == 0xe8)
		return true;
	for (len = 2; len <= 8 && len <= n; len++) {
		const __u8 *c = &b[n - len];
		size_t need;
		__u8 modrm;

		if (c[0] == 0x41 || c[0] == 0x40 || c[0] == 0x48 || c[0] == 0x49) {
			if (len < 3)
				continue;
			c++;
		}
		if (c[0] != 0xff)
			continue;
		modrm = c[1];
		if (((modrm >> 3) & 7) != 2)
			continue;
		need = 2 + (c != &b[n - len]);
		if ((modrm >> 6) != 3 && (modrm & 7) == 4)
			need++;				/* SIB */
		if ((modrm >> 6) == 1)
			need += 1;
		else if ((modrm >> 6) == 2 || ((modrm >> 6) == 0 && (modrm & 7) == 5))
			need += 4;
		if (need == len)
			return true;
	}
	return false;
}

bool sym_after_call(struct symbolizer *s, __u32 tgid, __u64 ip)
{
	struct sym_frame fr;
	const struct sym_map *m = sym_lookup(s, tgid, ip, &fr);
	const struct sym_file *f;
	__u8 buf[8];
	__u64 vaddr;
	unsigned int i;
	bool exec;

	/*
	 * A changed file cannot tell where its calls were: an address in a
	 * code mapping of it is kept, to be shown as a mismatch.
	 */
	if (m && fr.status == SYM_MISMATCH)
		return m->by_bias || m->exec;
	if (!m || fr.status != SYM_NO_SYMBOL || !sym_map_vaddr(m, ip, &vaddr, &exec) ||
	    !exec || (!m->by_bias && !m->exec) || vaddr < sizeof(buf))
		return false;
	f = m->file;
	for (i = 0; i < f->nload; i++) {
		const struct sym_load *l = &f->load[i];
		__u64 rel = vaddr - sizeof(buf) - l->vaddr;

		if (vaddr - sizeof(buf) < l->vaddr || vaddr > l->vaddr + l->filesz)
			continue;
		if (pread(f->fd, buf, sizeof(buf), l->offset + rel) != sizeof(buf))
			return false;
		return sym_is_call(buf, sizeof(buf));
	}
	return false;
}

/* libmemmon's view: the stack, checked to fit, or NULL. */
const struct memmon_user_stack *sym_rec_ustack(const struct memmon_rec_header *rec)
{
	return memmon_rec__ustack(rec);
}

size_t sym_stack(struct symbolizer *s, const struct memmon_rec_header *rec,
		 struct sym_frame *out, size_t max)
{
	const struct memmon_user_stack *st = sym_rec_ustack(rec);
	bool fault = rec->type == MEMMON_REC_FAULT;
	size_t i, n = 0;

	if (!st)
		return 0;
	for (i = 0; i < st->nr && n < max && n < SYM_MAX_FRAMES; i++) {
		__u64 ip = st->ip[i];

		if (i == 1 && (st->flags & MEMMON_USTACK_SP) &&
		    !sym_after_call(s, rec->tgid, ip))
			continue;	/* the word at sp was data */
		if (!ip)
			break;
		/* ip[0] of a fault is the faulting instruction itself */
		sym_resolve(s, rec->tgid, ip, !(i == 0 && fault), &out[n++]);
	}
	return n;
}

static const char *sym_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

bool sym_frame_is_libc(const struct sym_frame *f)
{
	const char *b;

	if (!f->file)
		return false;
	b = sym_base(f->file);
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
	       !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld-2.", 5) ||
	       !strncmp(b, "ld64.so", 7) || !strncmp(b, "ld-musl", 7) ||
	       !strncmp(b, "libpthread.so", 13);
}

const char *sym_frame_name(char *buf, size_t len, const struct sym_frame *f)
{
	switch (f->status) {
	case SYM_OK:
		snprintf(buf, len, "%s+0x%llx", f->sym, (unsigned long long)f->off);
		break;
	case SYM_NO_SYMBOL:
		snprintf(buf, len, "[%s+0x%llx]", f->file, (unsigned long long)f->off);
		break;
	case SYM_MISMATCH:
		snprintf(buf, len, "[build-id mismatch: %s]", f->file);
		break;
	case SYM_NOT_FOUND:
		snprintf(buf, len, "[not found: %s]", f->file);
		break;
	default:
		snprintf(buf, len, "[unknown]");
		break;
	}
	return buf;
}

int sym_fprint_stack(FILE *out, const struct sym_frame *f, size_t n, bool raw)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < n && ret >= 0; i++) {
		const struct sym_frame *fr = &f[i];

		if (raw) {
			ret = fprintf(out, "\t%16llx\n", (unsigned long long)fr->ip);
			continue;
		}
		switch (fr->status) {
		case SYM_OK:
			ret = fprintf(out, "\t%16llx %s+0x%llx (%s)", (unsigned long long)fr->ip,
				      fr->sym, (unsigned long long)fr->off, fr->file);
			if (ret >= 0 && fr->src)
				ret = fprintf(out, " %s:%d", fr->src, fr->line);
			if (ret >= 0)
				ret = fputc('\n', out);
			break;
		case SYM_NO_SYMBOL:
			ret = fprintf(out, "\t%16llx [%s+0x%llx]\n", (unsigned long long)fr->ip,
				      fr->file, (unsigned long long)fr->off);
			break;
		case SYM_MISMATCH:
			ret = fprintf(out, "\t%16llx [build-id mismatch: %s]\n",
				      (unsigned long long)fr->ip, fr->file);
			break;
		case SYM_NOT_FOUND:
			ret = fprintf(out, "\t%16llx [not found: %s]\n",
				      (unsigned long long)fr->ip, fr->file);
			break;
		default:
			ret = fprintf(out, "\t%16llx [unknown]\n", (unsigned long long)fr->ip);
			break;
		}
	}
	return ret < 0 ? -1 : 0;
}

static int sym_json_str(FILE *out, const char *s)
{
	int ret = fputc('"', out);

	for (; ret >= 0 && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			ret = fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			ret = fprintf(out, "\\u%04x", c);
		else
			ret = fputc(c, out);
	}
	return ret < 0 ? ret : fputc('"', out);
}

int sym_fprint_stack_json(FILE *out, const struct sym_frame *f, size_t n, bool raw)
{
	size_t i;
	int ret = fputc('[', out);

	for (i = 0; i < n && ret >= 0; i++) {
		const struct sym_frame *fr = &f[i];

		ret = fprintf(out, "%s{\"ip\":%llu", i ? "," : "", (unsigned long long)fr->ip);
		if (ret < 0 || raw)
			goto close;
		if (fr->status == SYM_OK) {
			ret = fputs(",\"sym\":", out);
			if (ret >= 0)
				ret = sym_json_str(out, fr->sym);
		}
		if (ret >= 0 && (fr->status == SYM_OK || fr->status == SYM_NO_SYMBOL))
			ret = fprintf(out, ",\"off\":%llu", (unsigned long long)fr->off);
		if (ret >= 0 && fr->file) {
			ret = fputs(",\"file\":", out);
			if (ret >= 0)
				ret = sym_json_str(out, fr->file);
		}
		if (ret >= 0 && fr->status == SYM_MISMATCH)
			ret = fputs(",\"error\":\"build-id mismatch\"", out);
		if (ret >= 0 && fr->status == SYM_NOT_FOUND)
			ret = fputs(",\"error\":\"not found\"", out);
		if (ret >= 0 && fr->src) {
			ret = fputs(",\"src\":", out);
			if (ret >= 0)
				ret = sym_json_str(out, fr->src);
			if (ret >= 0)
				ret = fprintf(out, ",\"line\":%d", fr->line);
		}
close:
		if (ret >= 0)
			ret = fputc('}', out);
	}
	if (ret >= 0)
		ret = fputc(']', out);
	return ret < 0 ? -1 : 0;
}
