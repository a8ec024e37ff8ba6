/*
 * mm_state.h - mm/'s part of struct proxy_process (proxy.h): its memory
 * layout, the vDSO's call count, where the initial stack put argv and
 * envp, and set_mempolicy's policy. A field of it is added here, and only
 * here. Part of the core proxy.h builds on, so it includes nothing of
 * syscall-proxy but other part headers (tests/lint/include_graph.py).
 */
#ifndef PROXY_MM_STATE_H
#define PROXY_MM_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "aspace.h"

/* mbind ranges with a policy of their own a process may have (mm.c:
 * ENOMEM past it, as Linux's allocation failing). */
#define PROXY_RANGE_POLICIES 64

struct proxy_mm_state {
    gva_t brk_start, brk_end;   /* heap: [brk_start, brk_end) mapped */
    gva_t mmap_base;            /* top-down mmap starts below this */
    gva_t vvar_gva;             /* the vDSO's [vvar] page; 0: none */
    /* The vDSO's call count (vdso.c): how much of it detcore has, how much
     * of that the detlog has not, and whether the next run goes on with it
     * (the last stop was a host interruption). */
    uint64_t vdso_folded, vdso_unlogged;
    bool vdso_count_goes_on;
    /* The running thread's signal state is in the call count's page for
     * the stubs (vdso.c, publish_signals): its mask is taken back at the
     * exit. */
    bool sig_published;
    gva_t stack_top;
    /* the initial stack's argv and envp strings, [start, end) (loader.c),
     * for /proc/self/{stat,cmdline,environ} (procfs.c) */
    gva_t start_stack;          /* where argc is */
    gva_t arg_start, arg_end, env_start, env_end;
    /* set_mempolicy's mode and node mask (one node: 0 or 1), mm.c */
    int mempolicy_mode;
    uint64_t mempolicy_nodes;
    /* mbind's policies of address ranges (Linux keeps them in the VMAs),
     * what get_mempolicy(MPOL_F_ADDR) reads back: sorted, not
     * overlapping, never MPOL_DEFAULT; a range unmapped or mapped anew
     * loses its policy. Copied by fork, dropped by execve (mm.c). */
    struct proxy_range_policy {
        gva_t start, end;
        int mode; /* with its mode flags */
        uint64_t nodes;
    } range_policy[PROXY_RANGE_POLICIES];
    int nr_range_policy;
};

#endif
