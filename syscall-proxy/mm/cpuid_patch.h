/*
 * cpuid_patch.h - `hvrun run --cpuid-rewrite`: where the backend cannot make
 * the guest's CPUID instruction trap (kvm_pvm without CPUID faulting), the
 * CPUID instructions of the guest's file-backed code are rewritten, in the
 * guest's private copy of the pages, into UD2 (same length); the #UD they
 * raise is answered from the fixed model (vmm_host_cpuid_model) and the
 * guest resumes after the instruction. RDTSC and RDTSCP, which kvm_pvm
 * cannot trap either (CR4.TSD is ignored), are rewritten the same way
 * whenever time is virtual (proxy_config.rdtsc_rewrite) and answered from
 * the logical clock (det_clock_tsc); those followed by the usual compiled
 * tail read it in the guest through a stub, without an exit
 * (proxy_config.rdtsc_inline, both backends). See cpuid_patch.c for how sites are
 * found (a disassembler over the functions unwind info names, never a byte
 * scan) and docs/DETERMINISM.md for what it does not cover.
 */
#ifndef PROXY_CPUID_PATCH_H
#define PROXY_CPUID_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proxy_process;
struct proxy_cpuid_patched;
struct vmm_event;

/* The instructions the finder reports. */
enum proxy_site_kind {
    PROXY_SITE_CPUID,  /* 0f a2: --cpuid-rewrite */
    PROXY_SITE_RDTSC,  /* 0f 31: with virtual time, by default */
    PROXY_SITE_RDTSCP, /* 0f 01 f9: likewise */
    /* f3 [41] 0f c7 f8+r: RDPID, the host CPU's number (TSC_AUX); always
     * rewritten (proxy_config.rdpid_rewrite), answered with the model's
     * CPU number, 0 */
    PROXY_SITE_RDPID,
};

/* One such instruction of an ELF file, decoded inside a function whose
 * bounds an .eh_frame FDE gives. */
struct proxy_cpuid_site {
    uint64_t file_off; /* of the instruction */
    uint64_t vaddr;    /* its link-time address */
    uint64_t func_off; /* file offset of its function's first byte */
    uint64_t hash;     /* FNV-1a of the file bytes [func_off, file_off+span) */
    uint8_t kind;      /* enum proxy_site_kind */
    uint8_t len;       /* of the instruction: 2, 3 (RDTSCP), 4 or 5 (RDPID) */
    /* RDTSC/RDTSCP/CPUID: len plus the instructions after it that a stub
     * can run in its place (cpuid_patch.c, "Reads in the guest"), at least
     * 5 bytes (a jmp rel32); len when there are none: the site traps. */
    uint8_t span;
    /* The span's RIP-relative instructions (at most two), which the stub
     * runs with their displacement adjusted: where the disp32 is and where
     * the instruction ends, as offsets from the site; 0 when unused. */
    uint8_t rip_disp[2], rip_end[2];
    uint8_t pad[1];
};

struct proxy_cpuid_scan {
    uint64_t inline_sites; /* RDTSC/RDTSCP/CPUID sites a stub can answer */
    uint64_t functions; /* FDEs whose range lies in executable file bytes */
    uint64_t skipped;   /* of those, ranges that did not decode cleanly */
    uint64_t bytes;     /* bytes decoded */
};

/*
 * Finds the CPUID instructions of an ELF image (the whole file in memory).
 * Returns 0 with *sites (malloc'd, sorted by file_off, possibly none) and
 * *nr set, or -errno (-ENOEXEC: not an x86-64 ELF). scan may be NULL.
 */
int proxy_cpuid_find_sites(const void *image, size_t size,
                           struct proxy_cpuid_site **sites, size_t *nr,
                           struct proxy_cpuid_scan *scan);

/*
 * The hooks; no-ops unless the run rewrites CPUID (proxy_config.cpuid_rewrite)
 * or RDTSC (proxy_config.rdtsc_rewrite).
 * proxy_cpuid_patch_fresh: [gva, gva+len) was just filled from host_fd and
 * will be executable (the loader's PF_X segments before they are
 * protected, mmap with PROT_EXEC): rewrites the CPUID sites of the private
 * file-backed VMAs there. proxy_cpuid_patch_protect: [gva, gva+len) was
 * made executable by mprotect: the same for its private, executable,
 * file-backed VMAs, the file opened by the VMA's name.
 */
void proxy_cpuid_patch_fresh(struct proxy_process *p, int host_fd,
                             uint64_t gva, uint64_t len);
void proxy_cpuid_patch_protect(struct proxy_process *p, uint64_t gva,
                               uint64_t len);
/* What a #UD (or, where the backend traps RDTSC, a #GP) was. */
enum proxy_trap_kind {
    PROXY_TRAP_NONE,     /* not a site hvrun rewrote: a SIGILL as before */
    PROXY_TRAP_CPUID,    /* answered from the model (or the host's leaf
                          * with the model's APIC ids: cpuid_topology) */
    PROXY_TRAP_RDPID,    /* answered with the model's CPU number */
    PROXY_TRAP_TSC,      /* RDTSC/RDTSCP answered from the logical clock */
    PROXY_TRAP_TSC_FORCED, /* the same at a stub's fallback: the reads in
                            * the guest spent their count (the vDSO's
                            * forced syscall) */
    PROXY_TRAP_HOST_TSC, /* a trapped RDTSC given the host's TSC (time not
                          * virtualized) */
    PROXY_TRAP_TSC_GP,   /* a trapped RDTSC under PR_TSC_SIGSEGV: the #GP
                          * Linux's CR4.TSD gives (SIGSEGV), unanswered */
};

/* A #UD at a site hvrun rewrote: answers the instruction and steps past
 * it. */
enum proxy_trap_kind proxy_cpuid_trap(struct proxy_process *p,
                                      const struct vmm_event *ev);

/* PR_SET_TSC(PR_TSC_SIGSEGV) on a thread of p: the sites read in the
 * guest trap again, for the whole address space and its forks. */
void proxy_cpuid_tsc_faulting(struct proxy_process *p);
/* The vDSO's [vvar] was mapped (p->vvar_gva): the stubs read it. */
void proxy_cpuid_vvar_mapped(struct proxy_process *p);

/* mremap moved [old, old+old_len) to new_gva (new_len bytes): the
 * rewritten sites there move with it. */
void proxy_cpuid_remapped(struct proxy_process *p, uint64_t old,
                          uint64_t old_len, uint64_t new_len,
                          uint64_t new_gva);

/* fork: the child gets a copy of the parent's rewritten sites. 0/-ENOMEM. */
int proxy_cpuid_fork(struct proxy_process *child,
                     const struct proxy_process *parent);
/* clone with CLONE_VM: the child runs on the parent's memory, so the
 * sites are one list both use (a reference each), whichever of them
 * rewrites a site later. 0/-ENOMEM. */
int proxy_cpuid_share(struct proxy_process *child,
                      struct proxy_process *parent);
/* execve: the new image starts with no sites; a failed exec puts the old
 * ones back (ok false), a successful one frees them. */
struct proxy_cpuid_patched *proxy_cpuid_exec_begin(struct proxy_process *p);
void proxy_cpuid_exec_end(struct proxy_process *p,
                          struct proxy_cpuid_patched *old, bool ok);
void proxy_cpuid_release(struct proxy_process *p);

#endif
