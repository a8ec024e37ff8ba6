/*
 * mm.h - what mm/ offers the other subsystems: the vDSO's clock fold,
 * file mappings, the memory limit, System V shared memory, memfd_secret
 * files, the ELF loader and CPUID/RDTSC rewriting.
 */
#ifndef PROXY_MM_MM_H
#define PROXY_MM_MM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Linux 5.18's advice; glibc 2.36's headers lack it. */
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif

#include "proxy.h"
#include "hooks.h"

struct proxy_cpuid_patched;
struct proxy_world;

/* ---- CPUID/RDTSC rewriting (mm/cpuid_patch.c) ---------------------------- */
/* The instructions the finder reports. */
enum proxy_site_kind {
    PROXY_SITE_CPUID,  /* 0f a2: --cpuid-rewrite */
    PROXY_SITE_RDTSC,  /* 0f 31: with virtual time, by default */
    PROXY_SITE_RDTSCP, /* 0f 01 f9: likewise */
    /* f3 [41] 0f c7 f8+r: RDPID, the host CPU's number (TSC_AUX); always
     * rewritten (proxy_config.rdpid_rewrite), answered with the model's
     * CPU number, 0 */
    PROXY_SITE_RDPID,
    /* a loop's back edge: a direct jcc/jmp to an earlier instruction of
     * its function, for the progress counter (progress.c); file_off and
     * vaddr are its span's first byte, len the branch's length, the last
     * bytes of the span */
    PROXY_SITE_BACKEDGE,
    /* 0f 05: a SYSCALL right after `mov $nr, %eax` (b8 imm32) whose nr is
     * one of the calls that only read the caller's ids (getpid, getppid,
     * get[e]uid, get[e]gid: glibc's wrappers), answered in the guest from
     * [vvar] through a stub (cpuid_patch.c, "identity calls"); its span
     * always starts at the mov (pre 5) */
    PROXY_SITE_IDCALL,
};

/* One such instruction of an ELF file, decoded inside a function whose
 * bounds an .eh_frame FDE gives. */
struct proxy_cpuid_site {
    uint64_t file_off; /* of the instruction */
    uint64_t vaddr;    /* its link-time address */
    uint64_t func_off; /* file offset of its function's first byte */
    uint64_t hash;     /* FNV-1a of the file bytes [func_off, file_off+span)
                        * (PROXY_SITE_BACKEDGE: of its span only) */
    uint8_t kind;      /* enum proxy_site_kind */
    uint8_t len;       /* of the instruction: 2, 3 (RDTSCP), 4 or 5 (RDPID) */
    /* RDTSC/RDTSCP/CPUID: len plus the instructions after it that a stub
     * can run in its place (cpuid_patch.c, "Reads in the guest"), at least
     * 5 bytes (a jmp rel32) with pre; len when there are none: the site
     * traps (unless pre). */
    uint8_t span;
    /* The span's RIP-relative instructions (at most two), which the stub
     * runs with their displacement adjusted: where the disp32 is and where
     * the instruction ends, as offsets from the span's first byte (the
     * site's, less pre); 0 when unused. */
    uint8_t rip_disp[2], rip_end[2];
    /* CPUID and IDCALL: the bytes of the instructions before the site that its
     * span starts with (a backward span: `mov $leaf, %eax` and the like,
     * which the stub runs before the CPUID), 0 for none. The span is
     * [file_off - pre, file_off + span). */
    uint8_t pre;
};

struct proxy_cpuid_scan {
    uint64_t inline_sites; /* RDTSC/RDTSCP/CPUID sites a stub can answer */
    uint64_t functions; /* FDEs whose range lies in executable file bytes */
    uint64_t skipped;   /* of those, ranges that did not decode cleanly */
    uint64_t bytes;     /* bytes decoded */
};

/* ---- the vDSO (mm/vdso.c) ------------------------------------------------ */
/* Before the guest runs: the logical clock into [vvar]. */
void proxy_vdso_enter(struct proxy_process *p);

/* After it stopped: the vDSO's clock reads into detcore; how many it
 * folded. host_interruption: the stop was the host's (a signal, a timer
 * that cut nothing), not a point of the guest's progress. */
uint64_t proxy_vdso_leave(struct proxy_process *p, bool host_interruption);
/* Right after a run: the mask and actions the signal calls' stubs set,
 * back into p's state; interrupted: a host interruption, which starts a
 * stub caught before its store over (cpuid_patch.c, "signal calls"). */
void proxy_vdso_signals_back(struct proxy_process *p, bool interrupted);

/* The vDSO's clock reads since the last fold (before leave folds them). */
uint64_t proxy_vdso_unfolded(struct proxy_process *p);

/* The reads folded at host interruptions and not yet in the detlog: events
 * counted at host-timed points, so how many there are is the host's. */
uint64_t proxy_vdso_unlogged(const struct proxy_process *p);

/* Whether the vDSO answered all the reads it may since the last exit, so
 * that its syscall now is the forced one (virtual time only). */
bool proxy_vdso_count_spent(struct proxy_process *p);

/* ---- the progress counter (mm/progress.c) ------------------------------- */
/* Before the current thread runs: every counter of its address space
 * holds budget units (>= 1) it may spend before the trap; after a host
 * interruption the counters go on instead. */
void proxy_progress_enter(struct proxy_process *p, uint64_t budget);
/* After it stopped: the units it spent since enter (0 at a host
 * interruption, whose units come with the next stop). */
uint64_t proxy_progress_leave(struct proxy_process *p, bool host_interruption);
/* The units spent so far, without folding them. */
uint64_t proxy_progress_unfolded(struct proxy_process *p);
/* A fault (or a #DB) in a loop's body copied into its trampoline
 * (progress_copy.c): the thread's rip moved to the same instruction in the
 * text, so that a signal frame names the program's code; false when rip
 * is in no copy. */
bool proxy_progress_home(struct proxy_process *p);
/* The guest writes [gva, gva+len) of its code (a breakpoint, a text made
 * writable): copies of loop bodies there are no longer taken. */
void proxy_progress_written(struct proxy_process *p, uint64_t gva,
                            uint64_t len);


/* ---- the memory family, file mappings (mm/mm.c) -------------------------- */
extern const struct proxy_syscall proxy_mm_syscalls[];

/* A guest changed the size of the host file behind host_fd (truncate,
 * ftruncate, O_TRUNC): the file mappings of every guest over it end where
 * it ends now. */
void proxy_mm_file_resized(struct proxy_process *p, int host_fd);

/* A fault below a MAP_GROWSDOWN mapping grows it as Linux would: 1 when
 * it grew (the access runs again), else 0. */
int proxy_mm_grow_down(struct proxy_process *p, gva_t addr);

/* ---- process_vm_readv/writev (mm/process_vm.c) --------------------------- */
extern const struct proxy_syscall proxy_process_vm_syscalls[];

/* madvise(2) of p's address space (mm.c), for process_madvise. */
long proxy_madvise(struct proxy_process *p, gva_t addr, uint64_t len,
                   int advice);

/* ---- modify_ldt (mm/ldt.c) ----------------------------------------------- */
extern const struct proxy_syscall proxy_ldt_syscalls[];

/* ---- memfd_secret files (mm/secretmem.c) --------------------------------- */
extern const struct proxy_syscall proxy_secretmem_syscalls[];

/* Whether guest_fd is a memfd_secret file: it has no read or write. */
bool proxy_secretmem_is(struct proxy_process *p, int guest_fd);
#define PROXY_SECRETMEM_NAME "/secretmem (deleted)"

/* Whether host_fd is the host fd of one of p's memfd_secret files. */
bool proxy_secretmem_host_fd(const struct proxy_process *p, int host_fd);

/* A stat of host_fd: a secret file's link count is 1, as on Linux. */
void proxy_secretmem_fix_stat(const struct proxy_process *p, int host_fd,
                              struct stat *st);

/* Whether gva lies in secret memory of q: reads and writes of it made for
 * another process (or through get_user_pages) find no page. */
bool proxy_secretmem_page(const struct proxy_process *q, gva_t gva);

/* ftruncate: -EINVAL once a secret file has a size, else 0. */
long proxy_secretmem_truncate(struct proxy_process *p, int guest_fd,
                              int host_fd);

/* ---- --memory and the OOM backstop (mm/memlimit.c) ----------------------- */
/* The OOM backstop, called by the world loop after each event: at most
 * every few ms of host time, measures hvrun's resident anonymous memory
 * and SIGKILLs the biggest guest when it is past the limit. */
void proxy_mem_check_oom(struct proxy_world *w);

/* ---- the ELF loader (mm/loader.c) ---------------------------------------- */
/* -errno when path surely cannot be run (ENOENT, ENOTDIR, ELOOP,
 * ENAMETOOLONG, EACCES of a directory on the way), as proxy_exec_load
 * would fail; 0 when it may be run or the loader must tell (a replay's
 * recorded files). */
int proxy_exec_missing(struct proxy_process *p, const char *path);

/*
 * Loads the program at host path `path` (and its PT_INTERP) into p, builds
 * the initial stack and sets the registers. On failure returns -errno and
 * writes a one-line reason naming the file into why; p is unchanged only up
 * to the point of no return (the caller discards p on failure). guest_path:
 * the name the guest gave execve, for AT_EXECFN (NULL: path).
 */
int proxy_exec_load(struct proxy_process *p, const char *path,
                    const char *guest_path, char *const argv[],
                    char *const envp[], char *why, size_t why_len);

/* ---- finding CPUID/RDTSC sites (mm/cpuid_sites.c) ------------------------ */
/*
 * Finds the CPUID instructions of an ELF image (the whole file in memory).
 * Returns 0 with *sites (malloc'd, sorted by file_off, possibly none) and
 * *nr set, or -errno (-ENOEXEC: not an x86-64 ELF). scan may be NULL.
 */
int proxy_cpuid_find_sites(const void *image, size_t size,
                           struct proxy_cpuid_site **sites, size_t *nr,
                           struct proxy_cpuid_scan *scan);
/* The same for the back edges of its loops (PROXY_SITE_BACKEDGE). */
int proxy_progress_find_sites(const void *image, size_t size,
                              struct proxy_cpuid_site **sites, size_t *nr,
                              struct proxy_cpuid_scan *scan);

/* ---- CPUID/RDTSC rewriting (mm/cpuid_patch.c) ---------------------------- */
/* A #UD at a site hvrun rewrote: answers the instruction and steps past
 * it. */
enum proxy_trap_kind proxy_cpuid_trap(struct proxy_process *p,
                                      const struct vmm_event *ev);

/* PR_SET_TSC(PR_TSC_SIGSEGV) on a thread of p: the sites read in the
 * guest trap again, for the whole address space and its forks. */
void proxy_cpuid_tsc_faulting(struct proxy_process *p);
/* A thread of p became traced by another guest (kernel/ptrace.c): the
 * identity calls rewritten in its memory get the file's code back. */
void proxy_cpuid_traced(struct proxy_process *p);
/* A syscall made at ret_ip - 2 from an identity call's stub (its
 * fallback, cpuid_patch.c): the address it returns to in the program
 * (the site's), as a user dispatch range names code; ret_ip otherwise. */
uint64_t proxy_cpuid_call_site(const struct proxy_process *p,
                               uint64_t ret_ip);
/* A fault of the guest's pointers inside a signal call's stub
 * (cpuid_patch.c, "signal calls"): the thread goes to the stub's call,
 * which gives EFAULT; true then (no signal), false for any other rip. */
bool proxy_cpuid_sig_stub_fault(struct proxy_process *p);
/* A host interruption inside a signal call's stub before its store: the
 * stub starts again (what it found pending may have changed). */
void proxy_cpuid_sig_stub_interrupted(struct proxy_process *p);

/* Before a fork copies p: each library text p maps in pieces (its
 * rewritten pages from the page store between its file's or image's) is
 * mapped whole from one run of the store, the same bytes, so p and every
 * child it forks hold one host mapping for it instead of a dozen or more
 * (each a lock KVM_CREATE_VM takes and a change every live VM's notifier
 * sees). Best effort: a text that is not in its memo's pieces stays. */
void proxy_cpuid_join_texts(struct proxy_process *p);

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

/* ---- memory locking (mm/mlock.c) ----------------------------------------- */
extern const struct proxy_syscall proxy_mlock_syscalls[];

/* ---- memory sealing (mm/mseal.c) ----------------------------------------- */
extern const struct proxy_syscall proxy_mseal_syscalls[];
/* Whether a VMA in [start, end) is sealed (can_modify_mm refuses). */
bool proxy_mm_sealed(const struct vmm_aspace *as, gva_t start, gva_t end);
/* Whether the seal refuses this madvise advice on [start, end)
 * (can_modify_mm_madv: discarding advice on sealed read-only anonymous
 * memory). */
bool proxy_mm_advice_sealed(const struct vmm_aspace *as, gva_t start,
                            gva_t end, int advice);

#endif
