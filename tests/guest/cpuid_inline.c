/*
 * cpuid_inline.c - CPUID and RDTSC sites that hvrun answers in the guest
 * through a stub (syscall-proxy/mm/cpuid_patch.c, "the stubs") behave as
 * the instruction (under kvm a CPUID stub answers from the VM's own
 * answers in [vvar]: every leaf and subleaf is compared): the stub keeps the flags and the red zone, runs the
 * span's RIP-relative instructions at their own addresses, and gives what
 * a trapped site gives. The sites are in functions with a jump table (a
 * switch), as ld.so's are, and take RIP-relative tails, as ld.so's do.
 * Others have no room after the CPUID (a branch lands just after it, or
 * a jcc follows it) and are answered by a span that starts at the
 * instructions setting the leaf (`mov $leaf, %eax; xor %ecx, %ecx`),
 * as ld.so's last trapping sites were: the stub runs those first, and
 * the flags they set are the ones the code after the CPUID sees.
 *
 * Prints only what holds on any CPU, so the guest suite compares it with
 * a native run; `cpuid_inline N` makes N CPUIDs through the stub, and
 * `cpuid_inline back N` N through the stubs of the spans that start
 * before the CPUID (the processes suite checks that under ptrace they
 * cost no exit).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_check.h"

/* span_cpuid(leaf, subleaf, out[4]): cpuid; two stores (the span), then
 * a switch on the leaf through a jump table; returns the case's value. */
__asm__(".pushsection .text\n"
        ".globl span_cpuid\n"
        ".type span_cpuid, @function\n"
        "span_cpuid:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    mov %edi, %eax\n"
        "    mov %esi, %ecx\n"
        "    mov %rdx, %r8\n"
        "    cpuid\n"
        "    mov %eax, (%r8)\n"
        "    mov %ebx, 4(%r8)\n"
        "    mov %ecx, 8(%r8)\n"
        "    mov %edx, 12(%r8)\n"
        "    mov %edi, %eax\n"
        "    and $3, %eax\n"
        "    lea span_cpuid_table(%rip), %rdx\n"
        "    movslq (%rdx,%rax,4), %rax\n"
        "    add %rdx, %rax\n"
        "    jmp *%rax\n"
        "span_cpuid_c0: mov $10, %eax\n"
        "    jmp span_cpuid_out\n"
        "span_cpuid_c1: mov $11, %eax\n"
        "    jmp span_cpuid_out\n"
        "span_cpuid_c2: mov $12, %eax\n"
        "    jmp span_cpuid_out\n"
        "span_cpuid_c3: mov $13, %eax\n"
        "span_cpuid_out:\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size span_cpuid, .-span_cpuid\n"
        /* trap_cpuid: the same leaf where no span fits (cpuid; ret) */
        ".globl trap_cpuid\n"
        ".type trap_cpuid, @function\n"
        "trap_cpuid:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    mov %edi, %eax\n"
        "    mov %esi, %ecx\n"
        "    mov %rdx, %r8\n"
        "    call trap_cpuid_insn\n"
        "    mov %eax, (%r8)\n"
        "    mov %ebx, 4(%r8)\n"
        "    mov %ecx, 8(%r8)\n"
        "    mov %edx, 12(%r8)\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size trap_cpuid, .-trap_cpuid\n"
        ".type trap_cpuid_insn, @function\n"
        "trap_cpuid_insn:\n"
        ".cfi_startproc\n"
        "    cpuid\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size trap_cpuid_insn, .-trap_cpuid_insn\n"
        /* flags_cpuid(): stc; cpuid; a RIP-relative store (the span);
         * setc: 1 when the carry survived the stub */
        ".globl flags_cpuid\n"
        ".type flags_cpuid, @function\n"
        "flags_cpuid:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    xor %eax, %eax\n"
        "    xor %ecx, %ecx\n"
        "    stc\n"
        "    cpuid\n"
        "    mov %eax, cpuid_inline_store(%rip)\n"
        "    setc %al\n"
        "    movzbl %al, %eax\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size flags_cpuid, .-flags_cpuid\n"
        /* redzone_cpuid(): a leaf that keeps data below %rsp (the red
         * zone, which no one may touch), CPUID through the stub, and
         * returns the number of red-zone words that changed */
        ".globl redzone_cpuid\n"
        ".type redzone_cpuid, @function\n"
        "redzone_cpuid:\n"
        ".cfi_startproc\n"
        "    mov %rbx, %r9\n"
        "    mov $-16, %r10\n"
        "1:  mov %r10, (%rsp,%r10,8)\n"
        "    inc %r10\n"
        "    jnz 1b\n"
        "    xor %eax, %eax\n"
        "    xor %ecx, %ecx\n"
        "    cpuid\n"
        "    mov %eax, %r11d\n"
        "    mov %ebx, %r11d\n"
        "    xor %eax, %eax\n"
        "    mov $-16, %r10\n"
        "2:  cmp %r10, (%rsp,%r10,8)\n"
        "    setne %cl\n"
        "    movzbl %cl, %ecx\n"
        "    add %ecx, %eax\n"
        "    inc %r10\n"
        "    jnz 2b\n"
        "    mov %r9, %rbx\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size redzone_cpuid, .-redzone_cpuid\n"
        /* back_cpuid_7(skip, out[5]): mov $7, %eax; xor %ecx, %ecx;
         * cpuid, unless skip; a jnz lands just after the CPUID (ld.so's
         * cache-size switch), so no span follows it. out[4]: ZF there
         * (the xor's 1 after the CPUID, the test's 0 when skipped) */
        ".globl back_cpuid_7\n"
        ".type back_cpuid_7, @function\n"
        "back_cpuid_7:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    mov %rsi, %r8\n"
        "    xor %eax, %eax\n"
        "    xor %ebx, %ebx\n"
        "    xor %edx, %edx\n"
        "    xor %ecx, %ecx\n"
        "    test %edi, %edi\n"
        "    jnz 1f\n"
        "    mov $7, %eax\n"
        "    xor %ecx, %ecx\n"
        "    cpuid\n"
        "1:  mov %eax, (%r8)\n"
        "    setz %al\n"
        "    movzbl %al, %eax\n"
        "    mov %eax, 16(%r8)\n"
        "    mov %ebx, 4(%r8)\n"
        "    mov %ecx, 8(%r8)\n"
        "    mov %edx, 12(%r8)\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_cpuid_7, .-back_cpuid_7\n"
        /* back_cpuid_d(out[4]): ld.so's XSAVE-size read, mov $0xd, %eax;
         * xor %ecx, %ecx; cpuid; test %ebx, %ebx; je: too few bytes a
         * stub can run after it */
        ".globl back_cpuid_d\n"
        ".type back_cpuid_d, @function\n"
        "back_cpuid_d:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    mov %rdi, %r8\n"
        "    mov $0xd, %eax\n"
        "    xor %ecx, %ecx\n"
        "    cpuid\n"
        "    test %ebx, %ebx\n"
        "    je 1f\n"
        "    mov %eax, (%r8)\n"
        "1:  mov %ebx, 4(%r8)\n"
        "    mov %ecx, 8(%r8)\n"
        "    mov %edx, 12(%r8)\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_cpuid_d, .-back_cpuid_d\n"
        /* back_cpuid_rip(out[4]): the leaf read RIP-relative
         * (cpuid_inline_leaf), then a jmp: the moved mov's displacement
         * is adjusted in the stub */
        ".globl back_cpuid_rip\n"
        ".type back_cpuid_rip, @function\n"
        "back_cpuid_rip:\n"
        ".cfi_startproc\n"
        "    push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    mov %rdi, %r8\n"
        "    xor %ecx, %ecx\n"
        "    mov cpuid_inline_leaf(%rip), %eax\n"
        "    cpuid\n"
        "    jmp 1f\n"
        "1:  mov %eax, (%r8)\n"
        "    mov %ebx, 4(%r8)\n"
        "    mov %ecx, 8(%r8)\n"
        "    mov %edx, 12(%r8)\n"
        "    pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size back_cpuid_rip, .-back_cpuid_rip\n"
        /* rip_tsc(): rdtsc; lea (RIP-relative); shl; or: a read in the
         * guest with a RIP-relative tail; returns the TSC, and the lea's
         * address in *where */
        ".globl rip_tsc\n"
        ".type rip_tsc, @function\n"
        "rip_tsc:\n"
        ".cfi_startproc\n"
        "    rdtsc\n"
        "    lea cpuid_inline_store(%rip), %rcx\n"
        "    shl $32, %rdx\n"
        "    or %rdx, %rax\n"
        "    mov %rcx, (%rdi)\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size rip_tsc, .-rip_tsc\n"
        ".popsection\n"
        ".pushsection .rodata\n"
        ".p2align 2\n"
        "span_cpuid_table:\n"
        "    .long span_cpuid_c0 - span_cpuid_table\n"
        "    .long span_cpuid_c1 - span_cpuid_table\n"
        "    .long span_cpuid_c2 - span_cpuid_table\n"
        "    .long span_cpuid_c3 - span_cpuid_table\n"
        ".popsection\n");

int span_cpuid(unsigned leaf, unsigned sub, uint32_t out[4]);
void trap_cpuid(unsigned leaf, unsigned sub, uint32_t out[4]);
int flags_cpuid(void);
int redzone_cpuid(void);
uint64_t rip_tsc(void **where);
void back_cpuid_7(int skip, uint32_t out[5]);
void back_cpuid_d(uint32_t out[4]);
void back_cpuid_rip(uint32_t out[4]);
uint32_t cpuid_inline_store, cpuid_inline_leaf;

/* What differs between the host's CPUs: the APIC ids (as hvrun's model
 * replaces them). */
static void mask_cpu(unsigned leaf, uint32_t r[4])
{
    if (leaf == 1)
        r[1] &= 0x00ffffffu;
    if (leaf == 0xb || leaf == 0x1f)
        r[3] = 0;
    if (leaf == 0x8000001eu) {
        r[0] = 0;
        r[1] &= ~0xffu;
        r[2] &= ~0xffu;
    }
}

/* Every leaf up to the CPU's highest, basic and extended, with subleaves
 * 0-3, 0xd's up to 19, and one no leaf selects by (the stubs that answer
 * from the VM's table under kvm match the subleaf only where the leaf is
 * indexed), and leaves past the highest: the stub's answer is the
 * instruction's. */
static int check_every_leaf(void)
{
    uint32_t max[4], xmax[4];
    trap_cpuid(0, 0, max);
    trap_cpuid(0x80000000u, 0, xmax);
    int bad = 0;
    for (int range = 0; range < 2; range++) {
        unsigned lo = range ? 0x80000000u : 0, hi = range ? xmax[0] : max[0];
        if (hi - lo > 0x40)
            hi = lo + 0x40;
        for (unsigned leaf = lo; leaf <= hi + 2; leaf++) {
            static const unsigned subs[] = {0, 1, 2, 3, 5, 19, 0xdeadbeef};
            for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
                uint32_t a[4], b[4];
                span_cpuid(leaf, subs[k], a);
                trap_cpuid(leaf, subs[k], b);
                mask_cpu(leaf, a);
                mask_cpu(leaf, b);
                if (memcmp(a, b, sizeof(a)) != 0 && bad++ < 8)
                    printf("leaf %#x.%#x: stub %08x %08x %08x %08x, trap "
                           "%08x %08x %08x %08x\n", leaf, subs[k], a[0],
                           a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
            }
        }
    }
    printf("every leaf: the stub and the trap agree: %s\n",
           bad ? "no" : "yes");
    return bad;
}

static int check_paths_agree(void)
{
    static const unsigned leaves[][2] = {{0, 0}, {1, 0}, {7, 0}, {0xb, 0},
                                         {0xb, 1}, {0xd, 0}, {0xd, 1},
                                         {0x80000000u, 0}};
    uint32_t max[4];
    trap_cpuid(0, 0, max);
    int bad = 0;
    for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
        unsigned leaf = leaves[i][0], sub = leaves[i][1];
        if (leaf < 0x80000000u && leaf > max[0])
            continue;
        uint32_t a[4], b[4];
        int got = span_cpuid(leaf, sub, a);
        trap_cpuid(leaf, sub, b);
        mask_cpu(leaf, a);
        mask_cpu(leaf, b);
        if (got != 10 + (int)(leaf & 3) || memcmp(a, b, sizeof(a)) != 0) {
            printf("leaf %#x.%u: stub %08x %08x %08x %08x, trap %08x %08x "
                   "%08x %08x (case %d)\n", leaf, sub, a[0], a[1], a[2], a[3],
                   b[0], b[1], b[2], b[3], got);
            bad++;
        }
    }
    printf("the stub and the trap agree: %s\n", bad ? "no" : "yes");
    return bad;
}

/* The spans that start before the CPUID give what the trap gives, with
 * the flags their moved instructions set. */
static int check_backward_spans(void)
{
    uint32_t a[5], b[4], skipped[5];
    int bad = 0;
    back_cpuid_7(0, a);
    trap_cpuid(7, 0, b);
    mask_cpu(7, a);
    mask_cpu(7, b);
    back_cpuid_7(1, skipped);
    bad += memcmp(a, b, sizeof(b)) != 0 || a[4] != 1 || skipped[0] != 0 ||
           skipped[4] != 0;
    back_cpuid_d(a);
    trap_cpuid(0xd, 0, b);
    a[0] = b[1] ? a[0] : b[0]; /* the je skips the store */
    bad += memcmp(a, b, sizeof(b)) != 0;
    cpuid_inline_leaf = 1;
    back_cpuid_rip(a);
    trap_cpuid(1, 0, b);
    mask_cpu(1, a);
    mask_cpu(1, b);
    bad += memcmp(a, b, sizeof(b)) != 0;
    printf("spans before the CPUID agree with the trap: %s\n",
           bad ? "no" : "yes");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "back") == 0) {
        long n = atol(argv[2]);
        uint32_t r[5];
        unsigned sum = 0;
        cpuid_inline_leaf = 0;
        for (long i = 0; i < n; i++) {
            back_cpuid_7(0, r);
            back_cpuid_rip(r);
            sum += r[0];
        }
        printf("%ld cpuids\n", sum ? 2 * n : 0);
        return 0;
    }
    if (argc > 1) {
        long n = atol(argv[1]);
        uint32_t r[4];
        unsigned sum = 0;
        for (long i = 0; i < n; i++) {
            span_cpuid(0, 0, r);
            sum += r[0];
        }
        printf("%ld cpuids\n", sum ? n : 0);
        return 0;
    }
    int bad = check_paths_agree() + check_backward_spans() +
              check_every_leaf();
    uint32_t vendor[4];
    span_cpuid(0, 0, vendor);
    int carry = flags_cpuid();
    printf("flags kept across the stub: %s\n", carry ? "yes" : "no");
    printf("RIP-relative store in the span: %s\n",
           cpuid_inline_store == vendor[0] ? "yes" : "no");
    int changed = redzone_cpuid();
    printf("red-zone words changed: %d\n", changed);
    void *where = NULL;
    uint64_t t1 = rip_tsc(&where), t2 = rip_tsc(&where);
    printf("RIP-relative lea in a TSC span: %s; the TSC goes forward: %s\n",
           where == (void *)&cpuid_inline_store ? "yes" : "no",
           t2 > t1 ? "yes" : "no");
    return bad || !carry || changed || cpuid_inline_store != vendor[0] ||
           where != (void *)&cpuid_inline_store || t2 <= t1;
}
