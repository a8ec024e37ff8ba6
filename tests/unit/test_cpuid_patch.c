/*
 * test_cpuid_patch.c - --cpuid-rewrite's site finder (only CPUID
 * instructions a disassembler decoded inside a function with unwind info,
 * or a sized function symbol in a file without any, never bytes 0f a2
 * elsewhere) and the model's answers to a trapped CPUID.
 *
 * The functions below are assembled into this test binary; the finder
 * reads the binary itself (/proc/self/exe).
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_x86_64.h"
#include "cpuid_patch.h"
#include "mm.h"

/* mov $0xa20f, %eax holds the bytes 0f a2 in its immediate: not a CPUID. */
__asm__(".pushsection .text.cpuid_test, \"ax\", @progbits\n"
        ".globl cpuid_fn\n"
        ".type cpuid_fn, @function\n"
        "cpuid_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "cpuid_fn_imm:\n"
        "    mov $0xa20f, %eax\n"
        "cpuid_fn_real:\n"
        "    cpuid\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n"
        "cpuid_fn_end:\n"
        ".size cpuid_fn, .-cpuid_fn\n"
        /* no .cfi directives: no FDE, nothing known to be code */
        ".globl cpuid_no_unwind\n"
        ".type cpuid_no_unwind, @function\n"
        "cpuid_no_unwind:\n"
        "    cpuid\n"
        "    ret\n"
        "cpuid_no_unwind_end:\n"
        ".size cpuid_no_unwind, .-cpuid_no_unwind\n"
        /* data after the ret (0x06 is invalid in 64-bit mode): the range
         * does not decode to its end, so none of it is trusted */
        /* RDTSC and RDTSCP are found too; the bytes 0f 31 of an
         * immediate are not an instruction */
        ".globl tsc_fn\n"
        ".type tsc_fn, @function\n"
        "tsc_fn:\n"
        ".cfi_startproc\n"
        "tsc_fn_imm:\n"
        "    mov $0x310f, %eax\n"
        "tsc_fn_rdtsc:\n"
        "    rdtsc\n"
        "tsc_fn_rdtscp:\n"
        "    rdtscp\n"
        "    ret\n"
        ".cfi_endproc\n"
        "tsc_fn_end:\n"
        ".size tsc_fn, .-tsc_fn\n"
        /* RDPID r64 (f3 0f c7 f8+r, f3 41 for r8-r15) is a site; RDSEED
         * (the same without f3) is not */
        ".globl rdpid_fn\n"
        ".type rdpid_fn, @function\n"
        "rdpid_fn:\n"
        ".cfi_startproc\n"
        "rdpid_fn_rax:\n"
        "    rdpid %rax\n"
        "rdpid_fn_r9:\n"
        "    rdpid %r9\n"
        "    rdseed %eax\n"
        "    ret\n"
        ".cfi_endproc\n"
        "rdpid_fn_end:\n"
        ".size rdpid_fn, .-rdpid_fn\n"
        ".globl cpuid_with_data\n"
        ".type cpuid_with_data, @function\n"
        "cpuid_with_data:\n"
        ".cfi_startproc\n"
        "    cpuid\n"
        "    ret\n"
        "    .byte 0x06, 0x0f, 0xa2\n"
        ".cfi_endproc\n"
        "cpuid_with_data_end:\n"
        ".size cpuid_with_data, .-cpuid_with_data\n"
        /* The spans a stub may take over (reads in the guest): the
         * usual tails; a branch into one, a jump through a register in
         * the function, or a tail that sets no flags keeps the trap. */
        ".globl tsc_span_fn\n"
        ".type tsc_span_fn, @function\n"
        "tsc_span_fn:\n"
        ".cfi_startproc\n"
        "tsc_span_rdtsc:\n"
        "    rdtsc\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "tsc_span_rdtscp:\n"
        "    rdtscp\n"
        "    mov %ecx, (%rdi)\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "tsc_span_no_flags:\n"
        "    rdtsc\n"
        "    mov %eax, (%rdi)\n"
        "    mov %edx, 4(%rdi)\n"
        "    ret\n"
        ".cfi_endproc\n"
        "tsc_span_fn_end:\n"
        ".size tsc_span_fn, .-tsc_span_fn\n"
        ".globl tsc_branched_fn\n"
        ".type tsc_branched_fn, @function\n"
        "tsc_branched_fn:\n"
        ".cfi_startproc\n"
        "    rdtsc\n"
        "tsc_branched_in:\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "    test %rax, %rax\n"
        "    jz tsc_branched_in\n"
        "    ret\n"
        ".cfi_endproc\n"
        "tsc_branched_fn_end:\n"
        ".size tsc_branched_fn, .-tsc_branched_fn\n"
        ".globl tsc_indirect_fn\n"
        ".type tsc_indirect_fn, @function\n"
        "tsc_indirect_fn:\n"
        ".cfi_startproc\n"
        "    rdtsc\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "    jmp *%rax\n"
        ".cfi_endproc\n"
        "tsc_indirect_fn_end:\n"
        ".size tsc_indirect_fn, .-tsc_indirect_fn\n"
        /* a jump table whose entry lands after the rdtsc */
        ".type tsc_table_fn, @function\n"
        "tsc_table_fn:\n"
        ".cfi_startproc\n"
        "    rdtsc\n"
        "tsc_table_in:\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "    lea tsc_table(%rip), %rcx\n"
        "    movslq (%rcx,%rdi,4), %rdx\n"
        "    add %rcx, %rdx\n"
        "    jmp *%rdx\n"
        ".cfi_endproc\n"
        ".size tsc_table_fn, .-tsc_table_fn\n"
        /* a pointer in data to the instruction after the rdtsc */
        ".type tsc_pointer_fn, @function\n"
        "tsc_pointer_fn:\n"
        ".cfi_startproc\n"
        "    rdtsc\n"
        "tsc_pointer_in:\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size tsc_pointer_fn, .-tsc_pointer_fn\n"
        /* its address taken by a lea (a computed goto) */
        ".type tsc_lea_fn, @function\n"
        "tsc_lea_fn:\n"
        ".cfi_startproc\n"
        "    rdtsc\n"
        "tsc_lea_in:\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "    lea tsc_lea_in(%rip), %rcx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size tsc_lea_fn, .-tsc_lea_fn\n"
        /* RIP-relative tails: ld.so's forms */
        ".globl tsc_rip_fn\n"
        ".type tsc_rip_fn, @function\n"
        "tsc_rip_fn:\n"
        ".cfi_startproc\n"
        "    rdtsc\n"
        "    lea tsc_rip_fn(%rip), %r13\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size tsc_rip_fn, .-tsc_rip_fn\n"
        ".globl cpuid_span_fn\n"
        ".type cpuid_span_fn, @function\n"
        "cpuid_span_fn:\n"
        ".cfi_startproc\n"
        "    cpuid\n"
        "    mov %edx, cpuid_span_word(%rip)\n"
        "    ret\n"
        "cpuid_span_ret:\n"
        "    cpuid\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size cpuid_span_fn, .-cpuid_span_fn\n"
        ".popsection\n"
        ".pushsection .rodata\n"
        ".p2align 2\n"
        "tsc_table:\n"
        "    .long tsc_table_in - tsc_table\n"
        ".popsection\n"
        ".pushsection .data\n"
        ".p2align 3\n"
        "tsc_pointer_word:\n"
        "    .quad tsc_pointer_in\n"
        "cpuid_span_word:\n"
        "    .long 0\n"
        ".popsection\n");

extern const char tsc_span_fn[], tsc_span_rdtsc[], tsc_span_rdtscp[],
    tsc_span_no_flags[], tsc_span_fn_end[];
extern const char tsc_branched_fn[], tsc_branched_fn_end[];
extern const char tsc_indirect_fn[], tsc_indirect_fn_end[];
extern const char tsc_table_fn[], tsc_pointer_fn[], tsc_lea_fn[],
    tsc_rip_fn[], cpuid_span_fn[], cpuid_span_ret[];
extern const char cpuid_fn[], cpuid_fn_imm[], cpuid_fn_real[], cpuid_fn_end[];
extern const char cpuid_no_unwind[], cpuid_no_unwind_end[];
extern const char cpuid_with_data[], cpuid_with_data_end[];
extern const char rdpid_fn[], rdpid_fn_rax[], rdpid_fn_r9[], rdpid_fn_end[];
extern const char tsc_fn[], tsc_fn_imm[], tsc_fn_rdtsc[], tsc_fn_rdtscp[],
    tsc_fn_end[];

static int main_bias(struct dl_phdr_info *info, size_t size, void *out)
{
    *(uintptr_t *)out = info->dlpi_addr; /* the first one: the program */
    return 1;
}

static struct proxy_cpuid_site *sites;
static size_t nr_sites;
static struct proxy_cpuid_scan scan;
static uintptr_t bias;

/* This test binary's bytes, in a private writable copy. */
static uint8_t *map_self(size_t *size)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    void *img = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE, fd, 0);
    cr_assert_neq(img, MAP_FAILED);
    close(fd);
    *size = (size_t)st.st_size;
    return img;
}

/* The sites the finder reports in img, then img unmapped. */
static void find_sites_in(uint8_t *img, size_t size)
{
    cr_assert_eq(proxy_cpuid_find_sites(img, size, &sites, &nr_sites, &scan),
                 0);
    munmap(img, size);
    dl_iterate_phdr(main_bias, &bias);
}

static void find_own_sites(void)
{
    size_t size;
    uint8_t *img = map_self(&size);
    find_sites_in(img, size);
}

static size_t sites_in(const char *lo, const char *hi, uint64_t *first)
{
    size_t n = 0;
    for (size_t i = 0; i < nr_sites; i++) {
        uint64_t at = sites[i].vaddr + bias;
        if (at >= (uintptr_t)lo && at < (uintptr_t)hi && n++ == 0)
            *first = at;
    }
    return n;
}

Test(cpuid_sites, real_cpuid_found_immediate_ignored, .init = find_own_sites)
{
    uint64_t at = 0;
    cr_assert_eq(sites_in(cpuid_fn, cpuid_fn_end, &at), 1,
                 "one CPUID in cpuid_fn");
    cr_assert_eq(at, (uintptr_t)cpuid_fn_real);
    cr_assert_neq(at, (uintptr_t)cpuid_fn_imm + 1,
                  "the bytes 0f a2 of the immediate are not an instruction");
    cr_assert_eq((unsigned char)cpuid_fn_imm[1], 0x0f);
    cr_assert_eq((unsigned char)cpuid_fn_imm[2], 0xa2);
    free(sites);
}

Test(cpuid_sites, rdtsc_and_rdtscp_found_immediate_ignored,
     .init = find_own_sites)
{
    uint64_t at = 0;
    cr_assert_eq(sites_in(tsc_fn, tsc_fn_end, &at), 2, "rdtsc and rdtscp");
    cr_assert_eq(at, (uintptr_t)tsc_fn_rdtsc);
    for (size_t i = 0; i < nr_sites; i++) {
        uint64_t a = sites[i].vaddr + bias;
        if (a == (uintptr_t)tsc_fn_rdtsc)
            cr_assert(sites[i].kind == PROXY_SITE_RDTSC && sites[i].len == 2);
        if (a == (uintptr_t)tsc_fn_rdtscp)
            cr_assert(sites[i].kind == PROXY_SITE_RDTSCP && sites[i].len == 3);
        if (a == (uintptr_t)cpuid_fn_real)
            cr_assert(sites[i].kind == PROXY_SITE_CPUID && sites[i].len == 2);
    }
    free(sites);
}

Test(cpuid_sites, rdpid_found_rdseed_ignored, .init = find_own_sites)
{
    uint64_t at = 0;
    cr_assert_eq(sites_in(rdpid_fn, rdpid_fn_end, &at), 2,
                 "rdpid %%rax and %%r9, not rdseed");
    cr_assert_eq(at, (uintptr_t)rdpid_fn_rax);
    for (size_t i = 0; i < nr_sites; i++) {
        uint64_t a = sites[i].vaddr + bias;
        if (a == (uintptr_t)rdpid_fn_rax)
            cr_assert(sites[i].kind == PROXY_SITE_RDPID && sites[i].len == 4 &&
                      sites[i].span == 4);
        if (a == (uintptr_t)rdpid_fn_r9)
            cr_assert(sites[i].kind == PROXY_SITE_RDPID && sites[i].len == 5);
    }
    free(sites);
}

Test(cpuid_sites, code_without_unwind_info_left_alone, .init = find_own_sites)
{
    uint64_t at;
    cr_assert_eq(sites_in(cpuid_no_unwind, cpuid_no_unwind_end, &at), 0);
    free(sites);
}

Test(cpuid_sites, range_that_does_not_decode_left_alone,
     .init = find_own_sites)
{
    uint64_t at;
    cr_assert_eq(sites_in(cpuid_with_data, cpuid_with_data_end, &at), 0);
    cr_assert_geq(scan.skipped, 1);
    free(sites);
}

Test(cpuid_sites, site_records_function_and_hash, .init = find_own_sites)
{
    for (size_t i = 0; i < nr_sites; i++) {
        if (sites[i].vaddr + bias != (uintptr_t)cpuid_fn_real)
            continue;
        cr_assert_eq(sites[i].file_off - sites[i].func_off,
                     (uint64_t)(cpuid_fn_real - cpuid_fn));
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *b = cpuid_fn; b < cpuid_fn_real + 2; b++)
            h = (h ^ (unsigned char)*b) * 0x100000001b3ULL;
        cr_assert_eq(sites[i].hash, h);
    }
    free(sites);
}

/* This binary with its unwind info hidden (the .eh_frame section renamed,
 * PT_GNU_EH_FRAME turned into PT_NULL), as a Go binary has none: the
 * finder then takes the functions from the symbol table. */
static void find_own_sites_without_unwind_info(void)
{
    size_t size;
    uint8_t *img = map_self(&size);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_GNU_EH_FRAME)
            ph[i].p_type = PT_NULL;
    Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
    char *names = (char *)img + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; i++)
        if (!strcmp(names + sh[i].sh_name, ".eh_frame"))
            names[sh[i].sh_name + 1] = 'X';
    find_sites_in(img, size);
}

Test(cpuid_sites, without_unwind_info_symbols_bound_the_functions,
     .init = find_own_sites_without_unwind_info)
{
    uint64_t at = 0;
    cr_assert_eq(sites_in(cpuid_no_unwind, cpuid_no_unwind_end, &at), 1,
                 "a sized function symbol is a function");
    cr_assert_eq(at, (uintptr_t)cpuid_no_unwind);
    cr_assert_eq(sites_in(tsc_fn, tsc_fn_end, &at), 2, "rdtsc and rdtscp");
    cr_assert_eq(sites_in(cpuid_with_data, cpuid_with_data_end, &at), 0,
                 "a symbol's range that does not decode is left alone");
    free(sites);
}

Test(cpuid_sites, not_an_elf)
{
    static char junk[64] = "not an ELF file";
    struct proxy_cpuid_site *s;
    size_t n;
    cr_assert_eq(proxy_cpuid_find_sites(junk, sizeof(junk), &s, &n, NULL),
                 -ENOEXEC);
}

/* ---- what a trapped CPUID returns (KVM's rules) -------------------------- */

static const struct vmm_cpuid_entry table[] = {
    {0, 0, 0, 0xd, 1, 2, 3},
    {1, 0, 0, 0x906ea, 0x10800, 0x80000000, 0x178bfbff},
    {4, 0, VMM_CPUID_INDEXED, 0x121, 0x1c0003f, 0x3f, 0},
    {0xb, 0, VMM_CPUID_INDEXED, 0, 1, 0x100, 0},
    {0xd, 0, VMM_CPUID_INDEXED, 7, 832, 832, 0},
    {0x80000000, 0, 0, 0x80000008, 0, 0, 0},
};
#define NR_TABLE ((int)(sizeof(table) / sizeof(table[0])))

static void ask(uint32_t leaf, uint32_t sub, uint32_t a, uint32_t b,
                uint32_t c, uint32_t d)
{
    uint32_t r[4];
    vmm_cpu_model_cpuid(table, NR_TABLE, leaf, sub, r);
    cr_assert(r[0] == a && r[1] == b && r[2] == c && r[3] == d,
              "leaf %#x.%u: %08x %08x %08x %08x, want %08x %08x %08x %08x",
              leaf, sub, r[0], r[1], r[2], r[3], a, b, c, d);
}

Test(cpuid_model, answers)
{
    ask(1, 7, 0x906ea, 0x10800, 0x80000000, 0x178bfbff); /* not indexed */
    ask(4, 0, 0x121, 0x1c0003f, 0x3f, 0);
    ask(4, 9, 0, 0, 0, 0);          /* indexed, absent, in range: zeros */
    ask(3, 0, 0, 0, 0, 0);          /* absent, in range: zeros */
    ask(0x20, 0, 7, 832, 832, 0);   /* past leaf 0's max: leaf 0xd */
    ask(0x80000009, 0, 7, 832, 832, 0);
    ask(0x40000000, 0, 7, 832, 832, 0); /* no hypervisor leaves */
    ask(0xb, 5, 0, 0, 5, 0);        /* undefined topology subleaf: CL */
}

/* The span of the site at addr (0: no site there). */
static unsigned span_at(const char *addr)
{
    for (size_t i = 0; i < nr_sites; i++)
        if (sites[i].vaddr + bias == (uintptr_t)addr)
            return sites[i].span;
    return 0;
}

Test(cpuid_sites, usual_rdtsc_tails_make_spans, .init = find_own_sites)
{
    /* rdtsc; shl (which sets every flag): 6 bytes, the or stays */
    cr_assert_eq(span_at(tsc_span_rdtsc), 6);
    /* rdtscp; mov %ecx,(%rdi); shl */
    cr_assert_eq(span_at(tsc_span_rdtscp), 9);
    /* no instruction of the tail sets the flags: the trap */
    cr_assert_eq(span_at(tsc_span_no_flags), 2);
    cr_assert_geq(scan.inline_sites, 2);
    free(sites);
}

Test(cpuid_sites, span_not_taken_where_a_branch_may_land,
     .init = find_own_sites)
{
    cr_assert_eq(span_at(tsc_branched_fn), 2, "a jz lands after the rdtsc");
    cr_assert_eq(span_at(tsc_table_fn), 2, "a jump table's entry lands there");
    cr_assert_eq(span_at(tsc_pointer_fn), 2, "a pointer in data names it");
    cr_assert_eq(span_at(tsc_lea_fn), 2, "its address is taken");
    /* A jump through a register lands only where a table or a pointer
     * says, and none names the inside of this span. */
    cr_assert_eq(span_at(tsc_indirect_fn), 6);
    free(sites);
}

/* The site's record at addr. */
static const struct proxy_cpuid_site *site_at(const char *addr)
{
    for (size_t i = 0; i < nr_sites; i++)
        if (sites[i].vaddr + bias == (uintptr_t)addr)
            return &sites[i];
    return NULL;
}

Test(cpuid_sites, rip_relative_tails_make_spans, .init = find_own_sites)
{
    /* rdtsc; lea tsc_rip_fn(%rip), %r13 (4c 8d 2d disp32); shl */
    const struct proxy_cpuid_site *s = site_at(tsc_rip_fn);
    cr_assert(s);
    cr_assert_eq(s->span, 13);
    cr_assert_eq(s->rip_disp[0], 5);
    cr_assert_eq(s->rip_end[0], 9);
    cr_assert_eq(s->rip_disp[1], 0);
    /* cpuid; mov %edx, cpuid_span_word(%rip) (89 15 disp32): a CPUID
     * stub keeps the flags, so no tail need set them */
    s = site_at(cpuid_span_fn);
    cr_assert(s);
    cr_assert_eq(s->span, 8);
    cr_assert_eq(s->rip_disp[0], 4);
    cr_assert_eq(s->rip_end[0], 8);
    /* cpuid; ret: nothing a stub can run, the trap */
    s = site_at(cpuid_span_ret);
    cr_assert(s);
    cr_assert_eq(s->span, 2);
    free(sites);
}

Test(cpuid_sites, hash_covers_the_span, .init = find_own_sites)
{
    for (size_t i = 0; i < nr_sites; i++) {
        if (sites[i].vaddr + bias != (uintptr_t)tsc_span_rdtscp)
            continue;
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *b = tsc_span_fn; b < tsc_span_rdtscp + 9; b++)
            h = (h ^ (unsigned char)*b) * 0x100000001b3ULL;
        cr_assert_eq(sites[i].hash, h);
    }
    free(sites);
}

/* ---- CPUID spans that start before the site ---------------------------------
 *
 * A CPUID without a forward span takes the instructions before it (the
 * leaf's mov) when they make 5 bytes. No label may sit inside a span (a
 * symbol there is an address something may jump to), so each site is
 * named by its span's first byte plus the bytes before it.
 *
 * back_landed_after_fn: ld.so's 0x14643 (a branch lands just after the
 * CPUID). back_short_fn: ld.so's 0x15387 (test; je after it: too short).
 * back_inside_fn, back_at_site_fn: a branch lands on the xor, on the
 * CPUID: no span. back_pushed_fn: a push before it: no span.
 * back_rip_fn: a RIP-relative mov sets the leaf. back_forward_fn: the
 * forward span is kept where it is possible. back_overlap_fn: the second
 * CPUID's backward span would share the first one's forward bytes. */
__asm__(".pushsection .text.cpuid_back_test, \"ax\", @progbits\n"
        ".type back_landed_after_fn, @function\n"
        "back_landed_after_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "    test %edi, %edi\n"
        "    jnz 1f\n"
        "back_landed_after_span:\n"
        "    mov $0x80000006, %eax\n"
        "    cpuid\n"
        "1:  pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_landed_after_fn, .-back_landed_after_fn\n"
        ".type back_short_fn, @function\n"
        "back_short_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "back_short_span:\n"
        "    mov $0xd, %eax\n"
        "    xor %ecx, %ecx\n"
        "    cpuid\n"
        "    test %ebx, %ebx\n"
        "    je 2f\n"
        "    add $0x7f, %ebx\n"
        "2:  pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_short_fn, .-back_short_fn\n"
        ".type back_inside_fn, @function\n"
        "back_inside_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "    test %edi, %edi\n"
        "    jnz 1f\n"
        "back_inside_span:\n"
        "    mov $7, %eax\n"
        "1:  xor %ecx, %ecx\n"
        "    cpuid\n"
        "    pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_inside_fn, .-back_inside_fn\n"
        ".type back_at_site_fn, @function\n"
        "back_at_site_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "    test %edi, %edi\n"
        "    jnz 1f\n"
        "back_at_site_span:\n"
        "    mov $7, %eax\n"
        "1:  cpuid\n"
        "    pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_at_site_fn, .-back_at_site_fn\n"
        ".type back_pushed_fn, @function\n"
        "back_pushed_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "    xor %ecx, %ecx\n"
        "    cpuid\n"
        "    pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_pushed_fn, .-back_pushed_fn\n"
        ".type back_rip_fn, @function\n"
        "back_rip_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "back_rip_span:\n"
        "    mov cpuid_span_word(%rip), %eax\n"
        "    cpuid\n"
        "    pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_rip_fn, .-back_rip_fn\n"
        ".type back_forward_fn, @function\n"
        "back_forward_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "back_forward_span:\n"
        "    mov $1, %eax\n"
        "    cpuid\n"
        "    mov %edx, cpuid_span_word(%rip)\n"
        "    pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_forward_fn, .-back_forward_fn\n"
        ".type back_overlap_fn, @function\n"
        "back_overlap_fn:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        "back_overlap_first:\n"
        "    cpuid\n"
        "    mov $1, %eax\n"
        "    cpuid\n"
        "    pop %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_overlap_fn, .-back_overlap_fn\n"
        ".popsection\n");

extern const char back_landed_after_span[], back_short_fn[],
    back_short_span[], back_inside_span[], back_at_site_span[],
    back_pushed_fn[], back_rip_span[], back_forward_span[],
    back_overlap_first[];

/* The site bytes after label: the sum made at run time, or this test's
 * own code would hold its address (a lea of RIP), which no span may
 * contain. */
static const struct proxy_cpuid_site *site_after(const char *label,
                                                 size_t bytes)
{
    volatile size_t n = bytes;
    return site_at(label + n);
}

Test(cpuid_sites, backward_spans_where_forward_ones_cannot_be,
     .init = find_own_sites)
{
    /* mov $0x80000006, %eax (5 bytes); cpuid, a jnz landing after it */
    const struct proxy_cpuid_site *s = site_after(back_landed_after_span, 5);
    cr_assert(s);
    cr_assert_eq(s->pre, 5);
    cr_assert_eq(s->span, 2, "nothing after the CPUID is taken");
    /* mov $0xd, %eax (5); xor %ecx, %ecx (2); cpuid; test; je */
    s = site_after(back_short_span, 7);
    cr_assert(s);
    cr_assert_eq(s->pre, 7);
    cr_assert_eq(s->span, 2);
    cr_assert_eq(s->rip_disp[0], 0);
    /* the hash covers the function's bytes up to the span's end, the
     * moved instructions among them */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *b = back_short_fn; b < back_short_span + 9; b++)
        h = (h ^ (unsigned char)*b) * 0x100000001b3ULL;
    cr_assert_eq(s->hash, h);
    /* mov cpuid_span_word(%rip), %eax (8b 05 disp32): adjusted */
    s = site_after(back_rip_span, 6);
    cr_assert(s);
    cr_assert_eq(s->pre, 6);
    cr_assert_eq(s->rip_disp[0], 2, "from the span's first byte");
    cr_assert_eq(s->rip_end[0], 6);
    cr_assert_eq(s->rip_disp[1], 0);
    free(sites);
}

Test(cpuid_sites, backward_span_refused_where_a_branch_may_land_inside,
     .init = find_own_sites)
{
    /* a jnz lands on the xor between the leaf's mov and the CPUID */
    const struct proxy_cpuid_site *s = site_after(back_inside_span, 7);
    cr_assert(s);
    cr_assert_eq(s->pre, 0);
    cr_assert_eq(s->span, 2, "the trap");
    /* a jnz lands on the CPUID itself */
    s = site_after(back_at_site_span, 5);
    cr_assert(s);
    cr_assert_eq(s->pre, 0);
    cr_assert_eq(s->span, 2);
    /* push %rbx; xor %ecx, %ecx; cpuid: a push is not moved */
    s = site_after(back_pushed_fn, 3);
    cr_assert(s);
    cr_assert_eq(s->pre, 0);
    cr_assert_eq(s->span, 2);
    free(sites);
}

Test(cpuid_sites, forward_span_preferred_and_spans_never_overlap,
     .init = find_own_sites)
{
    /* mov $1, %eax; cpuid; mov %edx, word(%rip): the forward span */
    const struct proxy_cpuid_site *s = site_after(back_forward_span, 5);
    cr_assert(s);
    cr_assert_eq(s->pre, 0);
    cr_assert_eq(s->span, 8);
    /* cpuid; mov $1, %eax; cpuid: the first takes the mov forward, so the
     * second cannot take it backward */
    s = site_at(back_overlap_first);
    cr_assert(s);
    cr_assert_eq(s->pre, 0);
    cr_assert_eq(s->span, 7);
    s = site_after(back_overlap_first, 7);
    cr_assert(s);
    cr_assert_eq(s->pre, 0);
    cr_assert_eq(s->span, 2);
    free(sites);
}

/* ---- back edges: --progress software's sites (proxy_progress_find_sites) --
 *
 * loop_fn: a counted loop, its back edge after a cmp (span cmp+jne, 6
 * bytes). flags_live_fn: the loop's target reads ZF (sete), which the
 * counter's decrement would clobber: no site. tiny_fn: a loop shorter
 * than the 5 bytes a jmp takes: no site. landed_fn: another branch lands
 * on the jne inside the span: no site. */
__asm__(".pushsection .text.progress_test, \"ax\", @progbits\n"
        ".globl loop_fn\n"
        ".type loop_fn, @function\n"
        "loop_fn:\n"
        ".cfi_startproc\n"
        "    xor %eax, %eax\n"
        "1:  add $3, %rax\n"
        "loop_fn_span:\n"
        "    cmp $300, %rax\n"
        "    jne 1b\n"
        "    ret\n"
        ".cfi_endproc\n"
        "loop_fn_end:\n"
        ".size loop_fn, .-loop_fn\n"
        ".globl flags_live_fn\n"
        ".type flags_live_fn, @function\n"
        "flags_live_fn:\n"
        ".cfi_startproc\n"
        "    xor %eax, %eax\n"
        "1:  sete %cl\n"
        "    add $3, %rax\n"
        "    cmp $300, %rax\n"
        "    jne 1b\n"
        "    ret\n"
        ".cfi_endproc\n"
        "flags_live_fn_end:\n"
        ".size flags_live_fn, .-flags_live_fn\n"
        ".globl tiny_fn\n"
        ".type tiny_fn, @function\n"
        "tiny_fn:\n"
        ".cfi_startproc\n"
        "    mov $10, %ecx\n"
        "1:  dec %ecx\n"
        "    jnz 1b\n"
        "    ret\n"
        ".cfi_endproc\n"
        "tiny_fn_end:\n"
        ".size tiny_fn, .-tiny_fn\n"
        ".globl landed_fn\n"
        ".type landed_fn, @function\n"
        "landed_fn:\n"
        ".cfi_startproc\n"
        "    xor %eax, %eax\n"
        "    test %edi, %edi\n"
        "    jz 2f\n"
        "1:  add $3, %rax\n"
        "    cmp $300, %rax\n"
        "2:  jne 1b\n"
        "    ret\n"
        ".cfi_endproc\n"
        "landed_fn_end:\n"
        ".size landed_fn, .-landed_fn\n"
        ".popsection\n");

extern const char loop_fn[], loop_fn_span[], loop_fn_end[];
extern const char flags_live_fn[], flags_live_fn_end[];
extern const char tiny_fn[], tiny_fn_end[];
extern const char landed_fn[], landed_fn_end[];

static void find_own_backedges(void)
{
    size_t size;
    uint8_t *img = map_self(&size);
    cr_assert_eq(
        proxy_progress_find_sites(img, size, &sites, &nr_sites, &scan), 0);
    munmap(img, size);
    dl_iterate_phdr(main_bias, &bias);
}

Test(progress_sites, loop_back_edge_found, .init = find_own_backedges)
{
    uint64_t at = 0;
    cr_assert_eq(sites_in(loop_fn, loop_fn_end, &at), 1);
    cr_assert_eq(at, (uintptr_t)loop_fn_span, "the span starts at the cmp");
    for (size_t i = 0; i < nr_sites; i++) {
        if (sites[i].vaddr + bias != at)
            continue;
        cr_assert_eq(sites[i].kind, PROXY_SITE_BACKEDGE);
        cr_assert_eq(sites[i].len, 2, "jne rel8");
        cr_assert_eq(sites[i].span, 8, "cmp $300, %%rax (6) and jne (2)");
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *b = loop_fn_span; b < loop_fn_span + 8; b++)
            h = (h ^ (unsigned char)*b) * 0x100000001b3ULL;
        cr_assert_eq(sites[i].hash, h, "the hash covers the span only");
    }
    free(sites);
}

Test(progress_sites, live_flags_tiny_loops_and_landings_left_alone,
     .init = find_own_backedges)
{
    uint64_t at = 0;
    cr_assert_eq(sites_in(flags_live_fn, flags_live_fn_end, &at), 0,
                 "the target reads ZF");
    cr_assert_eq(sites_in(tiny_fn, tiny_fn_end, &at), 0,
                 "the loop is shorter than a jmp");
    cr_assert_eq(sites_in(landed_fn, landed_fn_end, &at), 0,
                 "a branch lands on the jne inside the span");
    free(sites);
}

Test(progress_sites, cpuid_finder_reports_no_back_edges,
     .init = find_own_sites)
{
    for (size_t i = 0; i < nr_sites; i++)
        cr_assert_neq(sites[i].kind, PROXY_SITE_BACKEDGE);
    free(sites);
}
