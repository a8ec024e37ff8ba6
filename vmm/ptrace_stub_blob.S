/* Embeds the ptrace backend's stub program (vmm/stub/ptrace_stub.S). */
	.section .rodata
	.balign 16
	.globl pt_stub_elf_start, pt_stub_elf_end
pt_stub_elf_start:
	.incbin PT_STUB_PATH
pt_stub_elf_end:
	.section .note.GNU-stack, "", @progbits
