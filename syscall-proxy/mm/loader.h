/*
 * loader.h - the pure parts of program loading, tested without KVM: the
 * Linux-identical initial stack (strings, argv, envp, auxv) and the fixed,
 * non-randomised address-space layout.
 */
#ifndef PROXY_LOADER_H
#define PROXY_LOADER_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aspace.h"

/* The deterministic layout (what Linux gives with randomisation off). */
#define PROXY_STACK_TOP 0x7ffffffff000ULL   /* top of the main stack */
#define PROXY_MMAP_BASE 0x7ffff7fff000ULL   /* top-down mmap starts here */
#define PROXY_PIE_BASE 0x555555554000ULL    /* ELF_ET_DYN_BASE */
/* AT_MINSIGSTKSZ: the largest frame hvrun's signal delivery builds: the
 * rt_sigframe (440) and its alignment, the XSAVE image and MAGIC2 with
 * its 64-byte alignment, rounded to 16 (Linux's init_sigframe_size()). */
#define PROXY_MINSIGSTKSZ(xsave_bytes) \
    ((440 + 15 + (xsave_bytes) + 4 + 63 + 15) & ~15ULL)
/* argv+envp may use at most a quarter of the stack limit, as in Linux. */
#define PROXY_MAX_ARG_STRLEN (32 * 4096)

struct proxy_auxv_input {
    uint64_t phdr, phent, phnum, entry, base;
    uint64_t sysinfo_ehdr; /* the vDSO; 0: none (no AT_SYSINFO_EHDR) */
    uint64_t hwcap, hwcap2, minsigstksz;
    uint64_t uid, euid, gid, egid, secure;
    uint8_t random[16];
    const char *platform; /* "x86_64" */
    const char *execfn;   /* the path given to execve */
};

/*
 * Builds the initial stack into buf, which stands for guest addresses
 * [stack_top - buf_len, stack_top). On success returns 0 and sets *sp_out;
 * the bytes to copy are [*sp_out, stack_top). Returns -E2BIG when the
 * strings do not fit, like execve.
 */
int proxy_stack_build(uint8_t *buf, size_t buf_len, gva_t stack_top,
                      char *const argv[], char *const envp[],
                      const struct proxy_auxv_input *ai, gva_t *sp_out);

/* One ELF image loaded into an address space (proxy_elf_load). */
struct proxy_elf_image {
    gva_t bias;
    gva_t entry;
    gva_t phdr;              /* AT_PHDR */
    uint64_t phnum, phent;   /* AT_PHNUM, AT_PHENT */
    gva_t end;               /* highest mapped address (page aligned) */
    bool exec_stack;
    Elf64_Phdr *ph;          /* the program headers (malloc'd) */
    char interp[4096];       /* the main program's PT_INTERP, or "" */
};

/*
 * Loads the ELF image in fd into as, with binfmt_elf's checks (-ENOEXEC
 * for a bad header, e_phentsize, e_phnum, PT_INTERP; -EIO for a PT_INTERP
 * past the end): maps its PT_LOADs (in any order, overlapping ones as
 * Linux's successive MAP_FIXED maps leave them), at the fixed layout's
 * bias; an interpreter (is_interp) or a PIE without one goes below
 * mmap_base. For the main program im->interp is its PT_INTERP path (not
 * opened here). Needs only the address space, no VM (the fuzz target
 * tests/fuzz/fuzz_elf.c drives it, with p NULL); p, when given, gets its
 * executable segments' CPUID sites rewritten (--cpuid-rewrite). On error
 * why says what; call proxy_elf_image_free in every case.
 */
struct proxy_process;
int proxy_elf_load(struct vmm_aspace *as, struct proxy_process *p,
                   gva_t mmap_base, int fd, const char *path, bool is_interp,
                   struct proxy_elf_image *im, char *why, size_t why_len);
void proxy_elf_image_free(struct proxy_elf_image *im);

#endif
