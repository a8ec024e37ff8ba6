/*
 * cpuid_probe_code.S - guest code for the CPUID probe (cpuid_probe.c): runs
 * CPUID for each {leaf, subleaf} pair of a table and stores the four
 * registers, then exits with a syscall. Position independent: copied into
 * a probe VM's page as bytes, never executed by hvrun itself.
 *
 *   rsi = table of u32 {leaf, subleaf}, rdi = out (u32[4] per pair),
 *   rdx = number of pairs (> 0)
 */
    .section .rodata
    .globl vmm_cpuid_probe_code
    .globl vmm_cpuid_probe_code_end
vmm_cpuid_probe_code:
1:  mov (%rsi), %eax
    mov 4(%rsi), %ecx
    mov %rdx, %r8
    cpuid
    mov %eax, (%rdi)
    mov %ebx, 4(%rdi)
    mov %ecx, 8(%rdi)
    mov %edx, 12(%rdi)
    mov %r8, %rdx
    add $8, %rsi
    add $16, %rdi
    dec %rdx
    jnz 1b
    mov $60, %eax
    syscall
vmm_cpuid_probe_code_end:
    .section .note.GNU-stack, "", @progbits
