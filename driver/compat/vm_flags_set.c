// SPDX-License-Identifier: GPL-2.0
/*
 * memmon build-time probe (Kbuild), not part of the module: compiles iff
 * the kernel has vm_flags_set() and vm_flags_clear() (6.3, where
 * vma->vm_flags became read-only; or a backport of them).
 */
#include <linux/mm.h>

void memmon_probe(struct vm_area_struct *vma);

void memmon_probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTCOPY);
	vm_flags_clear(vma, VM_MAYWRITE);
}
