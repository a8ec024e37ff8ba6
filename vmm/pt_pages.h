/*
 * pt_pages.h - page-table pages kept in hvrun's own memory (aspace.c).
 *
 * An address space whose page tables no vCPU walks (the ptrace backend's:
 * vmm_physmem.tables_private) keeps them here rather than in its guest
 * memory: each page-table page still has its guest-physical page, so the
 * memory in use reads the same under both backends, but its entries live
 * in a page of hvrun's heap found by that address. A fresh memfd page's
 * first write from hvrun is a host page fault (~20-45 us on a host whose
 * page tables are shadowed, a dozen a process start); these pages come
 * from a pool that outlives each address space, so after the first
 * processes of a run they are faulted in already.
 */
#ifndef VMM_PT_PAGES_H
#define VMM_PT_PAGES_H

#include <stdint.h>

struct vmm_pt_pages;

struct vmm_pt_pages *vmm_pt_pages_new(void);
/* A zeroed page for the table at gpa; NULL when there is no memory. */
uint64_t *vmm_pt_pages_add(struct vmm_pt_pages *t, uint64_t gpa);
/* The page of the table at gpa (one added before), else NULL. */
uint64_t *vmm_pt_pages_find(const struct vmm_pt_pages *t, uint64_t gpa);
/* Gives every page back to the pool. NULL is no set. */
void vmm_pt_pages_free(struct vmm_pt_pages *t);

#endif
