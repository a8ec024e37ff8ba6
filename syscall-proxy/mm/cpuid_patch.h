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

#include "mm.h"
#include "vdso_abi.h"

struct proxy_process;

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

/* Whether this run rewrites CPUID/RDTSC/RDPID sites at all. */
bool proxy_cpuid_patching(const struct proxy_process *p);

/* The vDSO's [vvar] was mapped (p->vvar_gva): the stubs read it. */
void proxy_cpuid_vvar_mapped(struct proxy_process *p);

/* mremap moved [old, old+old_len) to new_gva (new_len bytes): the
 * rewritten sites there move with it. */
void proxy_cpuid_remapped(struct proxy_process *p, uint64_t old,
                          uint64_t old_len, uint64_t new_len,
                          uint64_t new_gva);

/* ---- what cpuid_sites.c and cpuid_patch.c share ------------------------- */

/* The longest span (bytes from a site) a stub takes over, and the most
 * RIP-relative instructions in it the stub adjusts (cpuid_sites.c finds
 * them, cpuid_patch.c builds the stub). */
#define MAX_SPAN 24
#define MAX_RIP_FIXUPS 2

/* FNV-1a over bytes: a site's function hash. */
static inline uint64_t fnv1a(uint64_t h, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

/* An identity call's number (PROXY_SITE_IDCALL): its answer's index in
 * [vvar]'s ids (vdso_abi.h, GK_VVAR_ID_*), or -1 for another call. */
static inline int idcall_index(uint32_t nr)
{
    switch (nr) {
    case 39: return GK_VVAR_ID_PID;    /* getpid */
    case 110: return GK_VVAR_ID_PPID;  /* getppid */
    case 102: return GK_VVAR_ID_UID;   /* getuid */
    case 107: return GK_VVAR_ID_EUID;  /* geteuid */
    case 104: return GK_VVAR_ID_GID;   /* getgid */
    case 108: return GK_VVAR_ID_EGID;  /* getegid */
    default: return -1;
    }
}

/* A call glibc makes as `mov $nr, %eax; syscall` that a stub answers in
 * the guest (PROXY_SITE_IDCALL): an identity call, or rt_sigaction (13),
 * rt_sigprocmask (14), set_tid_address (218) and rseq (334),
 * cpuid_patch.c's "signal calls". */
static inline bool guest_answered_call(uint32_t nr)
{
    return idcall_index(nr) >= 0 || nr == 13 || nr == 14 || nr == 218 ||
           nr == 334;
}

/* Sites that always trap unless a stub takes them (no backend traps them
 * itself): CPUID and RDPID. */
static inline bool traps_always(uint8_t kind)
{
    return kind == PROXY_SITE_CPUID || kind == PROXY_SITE_RDPID;
}

/* A regular file's sites (cpuid_sites.c): proxy_cpuid_sites_of finds them
 * once per run (or reads them from hvrun's cache) and keeps them for the
 * run; NULL for another kind of file or when finding them failed. */
struct file_sites {
    struct file_sites *next;
    uint64_t dev, ino, size, mtime_ns;
    struct proxy_cpuid_site *v;
    size_t nr;
};
const struct file_sites *proxy_cpuid_sites_of(int fd);
/* The same for the back edges (progress.c), cached apart. */
const struct file_sites *proxy_progress_sites_of(int fd);

#endif
