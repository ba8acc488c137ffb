// SPDX-License-Identifier: GPL-2.0
/*
 * memmon: what the page tables of a user address map, read without locks.
 * The fault hooks read the PTE before handle_mm_fault() and after it.
 *
 * Safety. The caller keeps the faulting VMA in place (mmap_lock for
 * reading, or the VMA's own read lock), which keeps the upper-level tables
 * (PGD to the PMD table): only free_pgtables() frees those, under the mmap
 * write lock and the VMAs' write locks. A PTE table may be freed under
 * mmap_lock for reading after an RCU grace period (6.6+: pte_free_defer()),
 * so the walk runs in an RCU read-side section (its callers have preemption
 * disabled) and a PTE slot it returns is valid only within that section: a
 * caller reading the slot again later, after handle_mm_fault() may have
 * slept, first checks in its new section that the PMD still points to that
 * table (memmon_pte_table_live()). Each level is read once (READ_ONCE); the
 * next level is found from the value read, never by reading the slot
 * again. No PTE lock: the answer is a snapshot.
 *
 * Two walks: the MMU's own rules where page-table values are physical
 * addresses (memmon_pt_native()), the kernel's accessors under Xen PV or
 * with hook_walk_generic=1. Both give the same slot and pfn on a native
 * kernel.
 *
 * Background: docs/driver-notes.md.
 */
#include "main.h"
#include "fault_walk.h"

#include <linux/moduleparam.h>

static bool hook_walk_generic;
module_param(hook_walk_generic, bool, 0644);
MODULE_PARM_DESC(hook_walk_generic,
		 "Walk page tables with the kernel's accessors, as under Xen PV (for tests; read at attach)");

DEFINE_STATIC_KEY_FALSE(memmon_walk_generic);

/**
 * memmon_walk_setup() - choose the walk for this attach (hook_walk_generic)
 *
 * Context: process context, may sleep; serialised by memmon_hooks_attach(),
 * before the fault hooks are attached.
 */
void memmon_walk_setup(void)
{
	if (READ_ONCE(hook_walk_generic))
		static_branch_enable(&memmon_walk_generic);
	else
		static_branch_disable(&memmon_walk_generic);
}

/**
 * memmon_walk_name() - the walk in use: "native" or "generic"
 *
 * Context: any.
 */
const char *memmon_walk_name(void)
{
	return memmon_pt_native() ? "native" : "generic";
}

/* A huge page at @addr mapped by a leaf entry whose pfn is @leaf_pfn. */
static __always_inline enum memmon_pte_state
memmon_pte_huge(unsigned long leaf_pfn, unsigned long addr,
		unsigned long size_mask, unsigned long *pfn)
{
	*pfn = leaf_pfn + ((addr & ~size_mask) >> PAGE_SHIFT);
	return MEMMON_PTE_PRESENT;
}

/*
 * Does the MMU follow the upper-level entry @val to a table? Then *@table
 * is where it points. (A bool, not a NULL pointer: the compiler cannot know
 * that __va() of a table is never NULL, and would test it again.)
 */
static __always_inline bool memmon_pt_table(u64 val, void **table)
{
	if ((val & (_PAGE_PRESENT | _PAGE_PSE)) != _PAGE_PRESENT)
		return false;
	*table = __va(val & PTE_PFN_MASK);
	return true;
}

static enum memmon_pte_state memmon_pte_walk_native(struct mm_struct *mm,
						    unsigned long addr,
						    unsigned long *pfn,
						    pte_t **ptep, pmd_t **pmdp)
{
	pgd_t *pgdp = pgd_offset(mm, addr);
	u64 val = native_pgd_val(READ_ONCE(*pgdp));
	void *table;

	if (!memmon_pt_table(val, &table))
		return MEMMON_PTE_NONE;
	if (pgtable_l5_enabled()) {
		val = native_p4d_val(READ_ONCE(*((p4d_t *)table + p4d_index(addr))));
		if (!memmon_pt_table(val, &table))
			return MEMMON_PTE_NONE;
	}

	val = native_pud_val(READ_ONCE(*((pud_t *)table + pud_index(addr))));
	if ((val & (_PAGE_PSE | _PAGE_PRESENT)) == (_PAGE_PSE | _PAGE_PRESENT))
		return memmon_pte_huge(pud_pfn(__pud(val)), addr, PUD_MASK, pfn);
	if (!memmon_pt_table(val, &table))
		return MEMMON_PTE_NONE;

	*pmdp = (pmd_t *)table + pmd_index(addr);
	val = native_pmd_val(READ_ONCE(**pmdp));
	if (!(val & ~_PAGE_KNL_ERRATUM_MASK))
		return MEMMON_PTE_NONE;
	if (!(val & (_PAGE_PRESENT | _PAGE_PROTNONE | _PAGE_PSE)))
		return MEMMON_PTE_OTHER;	/* THP migration entry */
	if (val & _PAGE_PSE)
		return memmon_pte_huge(pmd_pfn(__pmd(val)), addr, PMD_MASK, pfn);
	if (!memmon_pt_table(val, &table))
		return MEMMON_PTE_NONE;

	*ptep = (pte_t *)table + pte_index(addr);
	return memmon_pte_state(READ_ONCE(**ptep), pfn);
}

/* The same with the kernel's accessors (Xen PV). */
static enum memmon_pte_state memmon_pte_walk_generic(struct mm_struct *mm,
						     unsigned long addr,
						     unsigned long *pfn,
						     pte_t **ptep, pmd_t **pmdpp)
{
	pgd_t *pgdp, pgd;
	p4d_t *p4dp, p4d;
	pud_t *pudp, pud;
	pmd_t *pmdp, pmd;

	pgdp = pgd_offset(mm, addr);
	pgd = READ_ONCE(*pgdp);
	if (pgd_none(pgd) || pgd_bad(pgd))
		return MEMMON_PTE_NONE;
	p4dp = p4d_offset(pgdp, addr);
	p4d = READ_ONCE(*p4dp);
	if (p4d_none(p4d) || p4d_bad(p4d))
		return MEMMON_PTE_NONE;
	pudp = pud_offset(p4dp, addr);
	pud = READ_ONCE(*pudp);
	if (pud_none(pud))
		return MEMMON_PTE_NONE;
	if (pud_leaf(pud))
		return memmon_pte_huge(pud_pfn(pud), addr, PUD_MASK, pfn);
	if (pud_bad(pud))
		return MEMMON_PTE_NONE;
	pmdp = pmd_offset(pudp, addr);
	pmd = READ_ONCE(*pmdp);
	if (pmd_none(pmd))
		return MEMMON_PTE_NONE;
	if (!pmd_present(pmd))
		return MEMMON_PTE_OTHER;	/* THP migration entry */
	if (pmd_leaf(pmd))
		return memmon_pte_huge(pmd_pfn(pmd), addr, PMD_MASK, pfn);
	if (pmd_bad(pmd))
		return MEMMON_PTE_NONE;
	*pmdpp = pmdp;
	*ptep = (pte_t *)pmd_page_vaddr(pmd) + pte_index(addr);
	return memmon_pte_state(READ_ONCE(**ptep), pfn);
}

/**
 * memmon_pte_peek() - what the page tables of @mm map at @addr
 * @mm:   the address space
 * @addr: a user address
 * @pfn:  out: the page frame mapped there, set only for MEMMON_PTE_PRESENT
 *	  (of a huge page: the frame of @addr within it)
 * @ptep: out: the PTE's slot when the walk reached a page table, NULL when
 *	  a level above it is empty or maps a huge page
 * @pmdp: out: the PMD slot that pointed to that table, set with *@ptep
 *
 * Context: the VMA at @addr kept in place by the caller's lock, and an RCU
 * read-side section (preemption disabled will do) that *@ptep is valid in
 * (see the top of this file); never sleeps, takes no lock.
 * Return: enum memmon_pte_state.
 */
enum memmon_pte_state memmon_pte_peek(struct mm_struct *mm,
				      unsigned long addr,
				      unsigned long *pfn, pte_t **ptep,
				      pmd_t **pmdp)
{
	*ptep = NULL;
	if (memmon_pt_native())
		return memmon_pte_walk_native(mm, addr, pfn, ptep, pmdp);
	return memmon_pte_walk_generic(mm, addr, pfn, ptep, pmdp);
}

/**
 * memmon_pte_look() - memmon_pte_peek() without the slot, by value
 * @mm:   the address space
 * @addr: a user address
 *
 * Context: memmon_pte_peek()'s.
 * Return: the state, the pfn (0 unless MEMMON_PTE_PRESENT), and whether the
 * walk reached a page table.
 */
struct memmon_pte_look memmon_pte_look(struct mm_struct *mm,
				       unsigned long addr)
{
	struct memmon_pte_look look = { .pfn = 0 };
	pte_t *ptep;
	pmd_t *pmdp;

	look.state = memmon_pte_peek(mm, addr, &look.pfn, &ptep, &pmdp);
	look.pte_level = ptep;
	return look;
}
