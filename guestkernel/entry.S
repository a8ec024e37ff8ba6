/*
 * entry.S - the whole guest kernel: a SYSCALL entry stub and 32 exception
 * stubs. No policy lives here; every stub exits to the host with an OUT.
 *
 * SYSCALL entry: on kvm_pvm the CPU stays at CPL3 (so this page is U=1 and
 * must not use SYSRET/SWAPGS/HLT); on VMX it runs at CPL0. Either way the
 * stub touches no register and no stack: the host reads the registers,
 * writes RAX and resumes at RCX with RFLAGS=R11 in user mode.
 */
#include "gk_abi.h"

	.code64
	.section .text.entry, "ax"
	.globl gk_syscall_entry
gk_syscall_entry:
	outb %al, $GK_PORT_SYSCALL
	/* The host never resumes here; if it ever does, trap loudly. */
	ud2

	.section .text.exc, "ax"
/*
 * One 16-byte stub per vector. Vectors without a CPU error code push a 0 so
 * the frame has one shape: [vector][error][rip][cs][rflags][rsp][ss].
 */
.macro EXC_STUB vec, has_err
	.balign GK_EXC_STUB_STRIDE
	.if \has_err == 0
	pushq $0
	.endif
	pushq $\vec
	jmp exc_common
.endm

	.globl gk_exc_stubs
gk_exc_stubs:
	EXC_STUB 0, 0
	EXC_STUB 1, 0
	EXC_STUB 2, 0
	EXC_STUB 3, 0
	EXC_STUB 4, 0
	EXC_STUB 5, 0
	EXC_STUB 6, 0
	EXC_STUB 7, 0
	EXC_STUB 8, 1
	EXC_STUB 9, 0
	EXC_STUB 10, 1
	EXC_STUB 11, 1
	EXC_STUB 12, 1
	EXC_STUB 13, 1
	EXC_STUB 14, 1
	EXC_STUB 15, 0
	EXC_STUB 16, 0
	EXC_STUB 17, 1
	EXC_STUB 18, 0
	EXC_STUB 19, 0
	EXC_STUB 20, 0
	EXC_STUB 21, 1
	EXC_STUB 22, 0
	EXC_STUB 23, 0
	EXC_STUB 24, 0
	EXC_STUB 25, 0
	EXC_STUB 26, 0
	EXC_STUB 27, 0
	EXC_STUB 28, 0
	EXC_STUB 29, 1
	EXC_STUB 30, 1
	EXC_STUB 31, 0

	.balign GK_EXC_STUB_STRIDE
exc_common:
	outb %al, $GK_PORT_EXCEPTION
	ud2
