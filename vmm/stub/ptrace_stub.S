/*
 * ptrace_stub.S - the process a ptrace-backend VM runs its guest in: a
 * static, libc-free program linked at PT_STUB_BASE (ptrace_abi.h). It
 * arranges to die with hvrun, makes RDTSC/RDTSCP fault, builds its
 * region (stack, the memfd's call-count and scratch pages), unmaps every
 * other page it has (its exec stack, [vdso], [vvar]; [vsyscall] is no
 * VMA and stays), tells hvrun it is ready and waits to be interrupted.
 * From then on hvrun owns its registers: nothing here runs again but the
 * gadget at PT_STUB_GADGET_OFF, for the calls hvrun injects, and the batch
 * at PT_STUB_BATCH_OFF, for several of them in one resume.
 * Any failure exits 127 (hvrun reports the spawn as failed).
 */
#include "ptrace_abi.h"

#define SYS_write 1
#define SYS_close 3
#define SYS_mmap 9
#define SYS_munmap 11
#define SYS_pause 34
#define SYS_prctl 157
#define SYS_seccomp 317
#define SYS_exit_group 231

#define PR_SET_PDEATHSIG 1
#define PR_SET_NAME 15
#define PR_SET_TSC 26
#define PR_SET_NO_NEW_PRIVS 38
#define SECCOMP_SET_MODE_FILTER 1
#define PR_TSC_SIGSEGV 2

    .text
    .globl _start
_start:
    mov $SYS_prctl, %eax
    mov $PR_SET_PDEATHSIG, %edi
    mov $9, %esi                    /* SIGKILL */
    syscall
    test %rax, %rax
    jnz fail
    mov $SYS_prctl, %eax
    mov $PR_SET_NAME, %edi
    lea name(%rip), %rsi            /* what ps shows: not "5" (the fd) */
    syscall
    mov $SYS_prctl, %eax
    mov $PR_SET_TSC, %edi
    mov $PR_TSC_SIGSEGV, %esi
    syscall
    test %rax, %rax
    jnz fail

    /* the stack: private anonymous */
    mov $PT_STUB_STACK_LO, %rdi
    mov $(PT_STUB_STACK_TOP - PT_STUB_STACK_LO), %esi
    mov $3, %edx                    /* PROT_READ|PROT_WRITE */
    mov $0x32, %r10d                /* MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED */
    mov $-1, %r8
    xor %r9d, %r9d
    call do_mmap
    mov $PT_STUB_STACK_TOP, %rsp

    /* the memfd's pages */
    mov $PT_STUB_CALLS_VA, %rdi
    mov $PT_CALLS_GPA, %r9d
    call map_memfd_page
    mov $PT_STUB_SCRATCH_VA, %rdi
    mov $PT_SCRATCH_GPA, %r9d
    call map_memfd_page

    /* its seccomp filter, which hvrun wrote at the scratch page's start
     * (a sock_fprog, then the program: ptrace_host.c) before asking for
     * this stub: loaded here, not injected after the first stop (two
     * round trips a process). What follows is in the filter too. */
    mov $SYS_prctl, %eax
    mov $PR_SET_NO_NEW_PRIVS, %edi
    mov $1, %esi
    xor %edx, %edx
    xor %r10d, %r10d
    xor %r8d, %r8d
    syscall
    test %rax, %rax
    jnz fail
    mov $SYS_seccomp, %eax
    mov $SECCOMP_SET_MODE_FILTER, %edi
    xor %esi, %esi
    mov $PT_STUB_SCRATCH_VA, %rdx
    syscall
    test %rax, %rax
    jnz fail

    /* nothing else: below the region, and above it up to TASK_SIZE */
    mov $SYS_munmap, %eax
    xor %edi, %edi
    mov $PT_STUB_BASE, %rsi
    syscall
    test %rax, %rax
    jnz fail
    mov $SYS_munmap, %eax
    mov $PT_STUB_END, %rdi
    mov $PT_TASK_SIZE, %rsi
    sub %rdi, %rsi
    syscall
    test %rax, %rax
    jnz fail

    /* ready: one byte to hvrun, then wait for its PTRACE_INTERRUPT */
    push $0x21
    mov $SYS_write, %eax
    mov $PT_STUB_READY_FD, %edi
    mov %rsp, %rsi
    mov $1, %edx
    syscall
    cmp $1, %rax
    jne fail
    mov $SYS_close, %eax
    mov $PT_STUB_READY_FD, %edi
    syscall
    mov $SYS_close, %eax
    mov $PT_STUB_EXEC_FD, %edi
    syscall
1:  mov $SYS_pause, %eax
    syscall
    jmp 1b

/* rdi = address, r9 = memfd offset: one shared read-write page */
map_memfd_page:
    mov $4096, %esi
    mov $3, %edx
    mov $0x11, %r10d                /* MAP_SHARED|MAP_FIXED */
    mov $PT_STUB_MEMFD, %r8d
do_mmap:
    mov $SYS_mmap, %eax
    syscall
    cmp $-4095, %rax
    jae fail
    ret

name:
    .asciz "hvrun-stub"

fail:
    mov $SYS_exit_group, %eax
    mov $127, %edi
    syscall
    hlt

    .org PT_STUB_GADGET_OFF
    .globl pt_stub_gadget
pt_stub_gadget:
    syscall
    int3

    .org PT_STUB_BATCH_OFF
    .globl pt_stub_batch
pt_stub_batch:
    mov %rbx, %r13                  /* the first call: what indexes name */
4:  test %r12, %r12
    jz 2f
    mov (%rbx), %rax
    mov 8(%rbx), %rdi
    mov 16(%rbx), %rsi
    mov 24(%rbx), %rdx
    mov 32(%rbx), %r10
    mov 40(%rbx), %r8
    mov 48(%rbx), %r9
    btr $62, %rax                   /* PT_BATCH_OPENED_FD */
    jnc 1f
    shl $6, %r8                     /* PT_BATCH_CALL_SIZE */
    mov 56(%r13,%r8), %r8           /* that call's result */
1:  syscall
    mov %rax, 56(%rbx)
    add $PT_BATCH_CALL_SIZE, %rbx
    dec %r12
    jmp 4b
2:  int3
    .section .note.GNU-stack, "", @progbits
