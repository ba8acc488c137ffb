/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memmon: a lockless read of what a user address's page tables map, for
 * the fault hooks (hook_faults.c): fault_walk.c has the rules.
 */
#ifndef MEMMON_DRIVER_INSTR_FAULT_WALK_H
#define MEMMON_DRIVER_INSTR_FAULT_WALK_H

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
				      unsigned long *pfn, pte_t **ptep,
				      pmd_t **pmdp);

/*
 * Is the PTE table that @ptep (from memmon_pte_peek(), through the PMD slot
 * @pmdp) lies in still the one that PMD points to? Then @ptep may be read
 * until the end of the caller's RCU read-side section, which must be a new
 * one when the walk's has ended since (fault_walk.c, "Safety"); the caller
 * keeps the VMA in place, hence the PMD slot itself.
 */
static __always_inline bool memmon_pte_table_live(pmd_t *pmdp, pte_t *ptep)
{
	unsigned long table = (unsigned long)ptep & PAGE_MASK;
	pmd_t pmd = READ_ONCE(*pmdp);
	u64 val;

	if (memmon_pt_native()) {
		val = native_pmd_val(pmd);
		return (val & (_PAGE_PRESENT | _PAGE_PSE)) == _PAGE_PRESENT &&
		       (unsigned long)__va(val & PTE_PFN_MASK) == table;
	}
	return pmd_present(pmd) && !pmd_leaf(pmd) && !pmd_bad(pmd) &&
	       (unsigned long)pmd_page_vaddr(pmd) == table;
}

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

#endif /* MEMMON_DRIVER_INSTR_FAULT_WALK_H */
