/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: a lockless read of what a user address's page tables map, for
 * the fault hooks (hook_faults.c): fault_walk.c has the rules.
 */
#ifndef _MEMMON_FAULT_WALK_H
#define _MEMMON_FAULT_WALK_H

#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <asm/cpufeature.h>

/* What the PTE of an address held. */
enum memmon_pte_state {
	MEMMON_PTE_NONE,	/* nothing mapped, no swap entry */
	MEMMON_PTE_PRESENT,	/* mapped: pfn valid (PROT_NONE/NUMA too) */
	MEMMON_PTE_SWAP,	/* a swap entry */
	MEMMON_PTE_OTHER,	/* migration, hwpoison, device entry */
};

/* fault_walk.c: hook_walk_generic=1 at the last attach (tests). */
DECLARE_STATIC_KEY_FALSE(memmon_walk_generic);

/*
 * Where the page-table values are physical addresses (every x86 kernel but
 * a Xen PV guest, whose entries hold machine frames that only the
 * paravirt accessors translate), they are read as the MMU reads them:
 * native_*_val(), no paravirt call, masks of our own. Two patched
 * branches: the second lets the tests run Xen PV's walk on any kernel.
 */
static __always_inline bool memmon_pt_native(void)
{
	return !cpu_feature_enabled(X86_FEATURE_XENPV) &&
	       !static_branch_unlikely(&memmon_walk_generic);
}

/* pte_pfn() of a native value: the L1TF inversion of PROT_NONE undone. */
static __always_inline unsigned long memmon_pte_pfn(pte_t pte)
{
	u64 val;

	if (!memmon_pt_native())
		return pte_pfn(pte);
	val = native_pte_val(pte);
	val ^= protnone_mask(val);
	return (val & PTE_PFN_MASK) >> PAGE_SHIFT;
}

/* What one PTE value says; *pfn is set when it maps a page. */
static __always_inline enum memmon_pte_state memmon_pte_state(pte_t pte,
							      unsigned long *pfn)
{
	if (pte_none(pte))
		return MEMMON_PTE_NONE;
	if (pte_present(pte)) {
		*pfn = memmon_pte_pfn(pte);
		return MEMMON_PTE_PRESENT;
	}
	return non_swap_entry(pte_to_swp_entry(pte)) ? MEMMON_PTE_OTHER :
						       MEMMON_PTE_SWAP;
}

enum memmon_pte_state memmon_pte_peek(struct mm_struct *mm,
				      unsigned long addr,
				      unsigned long *pfn, pte_t **ptep);

/*
 * memmon_pte_peek()'s answer by value, for a caller that keeps no slot:
 * sixteen bytes come back in two registers, and the caller has no local
 * whose address is taken (which would cost it a stack canary).
 */
struct memmon_pte_look {
	unsigned long pfn;	/* valid for MEMMON_PTE_PRESENT */
	u32 state;		/* enum memmon_pte_state */
	bool pte_level;		/* state is a PTE's, not a huge page's */
};

struct memmon_pte_look memmon_pte_look(struct mm_struct *mm,
				       unsigned long addr);

void memmon_walk_setup(void);
const char *memmon_walk_name(void);

#endif /* _MEMMON_FAULT_WALK_H */
