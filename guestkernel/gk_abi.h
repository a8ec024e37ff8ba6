/*
 * gk_abi.h - the contract between the guest kernel blob and the host.
 *
 * Included by the guest kernel assembly and by vmm/. Needs nothing but <stdint.h>.
 * The guest kernel is a few pages: a SYSCALL entry stub and 32 exception
 * stubs. Every stub ends in an OUT to a reserved port, which exits to the
 * host; the host then resumes the thread itself (SYSRET is not usable on
 * kvm_pvm, where SYSCALL stays at CPL3).
 */
#ifndef GK_ABI_H
#define GK_ABI_H

#define GK_ABI_VERSION 1

/* Guest-physical layout of the kernel area (all below GK_KERNEL_AREA_END). */
#define GK_GDT_GPA 0x1000
#define GK_IDT_GPA 0x2000
#define GK_TSS_GPA 0x3000
#define GK_BLOB_GPA 0x4000        /* the assembled blob starts here */
#define GK_ENTRY_GPA 0x4000       /* SYSCALL entry page, user-accessible */
#define GK_EXC_GPA 0x5000         /* exception stubs, supervisor only */
#define GK_STACK0_GPA 0x8000      /* RSP0 stack, grows down from ..._TOP */
#define GK_STACK0_TOP 0xa000
#define GK_IST1_GPA 0xa000        /* IST1 stack (#DF, #NMI, #MC) */
#define GK_IST1_TOP 0xc000
#define GK_VDSO_CALLS_GPA 0xc000  /* the vDSO's call count (vdso_abi.h), U=1 W=1 */
#define GK_KERNEL_AREA_END 0x10000

/*
 * The kernel area is mapped at GK_KERNEL_VA + gpa. This range was probed to
 * work on kvm_pvm (part of the upper half faults there); vmm checks it at
 * start-up by running the first syscall through it.
 */
#define GK_KERNEL_VA 0xffffffff80000000

#define GK_EXC_STUB_STRIDE 16     /* bytes between exception stubs */
#define GK_NR_EXC_VECTORS 32

/* Exit ports: OUT %al to these; OUT changes no register. */
#define GK_PORT_SYSCALL 0xe0
#define GK_PORT_EXCEPTION 0xe1

/*
 * At GK_PORT_EXCEPTION the RSP0 stack (or IST1 stack) holds, from RSP up:
 * vector, error code, then the CPU's frame: RIP, CS, RFLAGS, RSP, SS.
 */
#define GK_EXC_FRAME_WORDS 7

/* Segment selectors (Linux's layout, so a program sees familiar values). */
#define GK_SEL_KERNEL_CS 0x10
#define GK_SEL_KERNEL_DS 0x18
#define GK_SEL_USER32_CS 0x23
#define GK_SEL_USER_DS 0x2b
#define GK_SEL_USER_CS 0x33
#define GK_SEL_TSS 0x40

#endif
