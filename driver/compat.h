/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: kernel API differences, decided at build time.
 *
 * Kbuild compiles each driver/compat/NAME.c against the target kernel's
 * headers with the module's own flags, and defines MEMMON_HAVE_<NAME> when
 * it compiles (STYLE rule 2: the headers are asked, not LINUX_VERSION_CODE,
 * because stable and distribution kernels backport APIs). Each wrapper
 * below has the newest kernel's semantics; the fallback is what older
 * kernels did.
 */
#ifndef _MEMMON_COMPAT_H
#define _MEMMON_COMPAT_H

#include <linux/mm.h>

/*
 * 6.3 made vma->vm_flags read-only for per-VMA locking: changes go through
 * vm_flags_set()/vm_flags_clear(), which also mark the VMA write-locked.
 * Before, the mmap_lock held for writing was all a change needed.
 *
 * Context: mmap_lock held for writing (e.g. an mmap file operation).
 */
static inline void memmon_vm_flags_set(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
#ifdef MEMMON_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void memmon_vm_flags_clear(struct vm_area_struct *vma,
					 vm_flags_t flags)
{
#ifdef MEMMON_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

#endif /* _MEMMON_COMPAT_H */
