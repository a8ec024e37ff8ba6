/*
 * cpuid_span_mremap.c - mremap moves the part of a CPUID's span that
 * holds the CPUID and leaves its first bytes behind. hvrun answers such a
 * CPUID through a span that starts at `mov $leaf, %eax`, before it
 * (syscall-proxy/mm/cpuid_sites.c, "spans that start before the site"),
 * whose first bytes become a jmp: here the page boundary falls inside
 * the mov (not at an instruction: a page-aligned value is in the ELF
 * headers, which the finder takes for a pointer that may be jumped to),
 * and the page after it is moved. The moved code, entered at the xor
 * after the mov, must still run a CPUID (proxy_cpuid_remapped: the
 * file's bytes put back, the CPUID trapped), not what was the rest of the
 * jmp and its NOPs.
 *
 * Prints only what holds on any CPU, so the guest suite compares it with
 * a native run.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* split_cpuid(out[4]): the page boundary is 2 bytes into the mov of leaf
 * 7; the xor, the CPUID (then test; jz: no span after it) and the stores
 * are on the next page, alone there. No stack use, so that the next page
 * runs alone too (entered at the xor with %eax = 7 and %r8 = out). */
__asm__(".pushsection .text\n"
        ".p2align 12\n"
        ".globl split_cpuid\n"
        ".type split_cpuid, @function\n"
        "split_cpuid:\n"
        ".cfi_startproc\n"
        "    mov %rdi, %r8\n"
        "    .nops 4091\n"
        "    mov $7, %eax\n"
        "    xor %ecx, %ecx\n"
        "    cpuid\n"
        "    test %ebx, %ebx\n"
        "    jz 1f\n"
        "1:  mov %eax, (%r8)\n"
        "    mov %ebx, 4(%r8)\n"
        "    mov %ecx, 8(%r8)\n"
        "    mov %edx, 12(%r8)\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size split_cpuid, .-split_cpuid\n"
        ".p2align 12\n"
        ".popsection\n");

void split_cpuid(uint32_t out[4]);

/* Where the xor starts, past the page boundary. */
#define XOR_AFTER_BOUNDARY 3

/* Calls code at fn with %eax = 7, %rdi = %r8 = out, below the red zone. */
static void call_with_leaf(const void *fn, uint32_t out[4])
{
    __asm__ volatile("sub $128, %%rsp\n"
                     "mov $7, %%eax\n"
                     "mov %%rdi, %%r8\n"
                     "call *%[fn]\n"
                     "add $128, %%rsp\n"
                     :
                     : [fn] "r"(fn), "D"(out)
                     : "rax", "rbx", "rcx", "rdx", "r8", "memory", "cc");
}

int main(void)
{
    uint32_t in_place[4], moved[4];
    long page = sysconf(_SC_PAGESIZE);
    volatile uintptr_t offset = 4096; /* not a constant: no lea names it */
    char *boundary = (char *)split_cpuid + offset;
    if (page != 4096 || ((uintptr_t)boundary & 4095) != 0) {
        printf("layout: not as assembled\n");
        return 1;
    }
    memset(in_place, 0xa5, sizeof(in_place));
    memset(moved, 0x5a, sizeof(moved));
    call_with_leaf((const void *)split_cpuid, in_place);
    void *to = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *now = to == MAP_FAILED
                    ? MAP_FAILED
                    : mremap(boundary, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
                             to);
    if (now == MAP_FAILED) {
        perror("mremap");
        return 1;
    }
    call_with_leaf((char *)now + XOR_AFTER_BOUNDARY, moved);
    int same = memcmp(in_place, moved, sizeof(moved)) == 0;
    printf("the moved CPUID answers as in place: %s\n", same ? "yes" : "no");
    return !same;
}
