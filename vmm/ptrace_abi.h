/*
 * ptrace_abi.h - what hvrun's ptrace backend (ptrace.c) and its stub
 * process (stub/ptrace_stub.S) share. Included by C and by the assembler.
 *
 * The stub owns one small range of the guest's address space, [PT_STUB_BASE,
 * PT_STUB_END): its code (the entry and a `syscall; int3` gadget for the
 * calls hvrun injects), two pages of the guest-physical memfd (the vDSO's
 * call count, and a scratch page for the injected calls' arguments) and its
 * stack. The range lies between the top-down mmap base and the main stack
 * (syscall-proxy/mm/loader.h), where no layout of hvrun's puts anything,
 * and the address space refuses it to every guest mapping under both
 * backends (vmm_as_map: -ENOMEM), so the two backends lay guests out alike.
 */
#ifndef VMM_PTRACE_ABI_H
#define VMM_PTRACE_ABI_H

#define PT_STUB_BASE 0x7ffff8000000
#define PT_STUB_SIZE 0x10000
#define PT_STUB_END (PT_STUB_BASE + PT_STUB_SIZE)
#define PT_STUB_GADGET_OFF 0x800 /* syscall; int3 */
/* A batch: the calls at %rbx (PT_BATCH_CALL_SIZE bytes each: the number,
 * six arguments, the result written back), %r12 of them, in turn; int3.
 * A number with PT_BATCH_OPENED_FD set has the index of an earlier call
 * of the batch as its fifth argument and takes that call's result there
 * instead (an mmap of the file an openat of the same batch opened). */
#define PT_BATCH_OPENED_FD (1ULL << 62)
#define PT_STUB_BATCH_OFF 0x840
#define PT_BATCH_SCRATCH_OFF 0x100 /* where in the scratch page */
/* The paths a batch's openat calls open ("/proc/<hvrun>/fd/<n>"), one
 * slot each from the scratch page's start: a batch opens up to
 * PT_BATCH_PATHS files (the stub's filter allows exactly these
 * addresses), so a stub's first sync of a process's files is one batch. */
#define PT_BATCH_PATH_SIZE 0x20
#define PT_BATCH_PATHS 8
#define PT_BATCH_CALL_SIZE 64
#define PT_BATCH_MAX ((0x1000 - PT_BATCH_SCRATCH_OFF) / PT_BATCH_CALL_SIZE)
#define PT_STUB_CALLS_VA (PT_STUB_BASE + 0x1000)
#define PT_STUB_SCRATCH_VA (PT_STUB_BASE + 0x2000)
#define PT_STUB_STACK_LO (PT_STUB_BASE + 0x4000)
#define PT_STUB_STACK_TOP (PT_STUB_BASE + 0x8000)

/* Memfd pages (guest-physical, inside the guest kernel area that the
 * ptrace backend leaves unused) behind the two shared stub pages. */
#define PT_CALLS_GPA 0xc000   /* = GK_VDSO_CALLS_GPA */
#define PT_SCRATCH_GPA 0xd000

/* The stub's file descriptors, set up by the spawn. */
#define PT_STUB_MEMFD 3
#define PT_STUB_READY_FD 4
#define PT_STUB_EXEC_FD 5 /* the program itself, as exec'd */

/* One past the highest user address (TASK_SIZE). */
#define PT_TASK_SIZE 0x7ffffffff000

#endif
