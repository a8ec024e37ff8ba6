/* Embeds the guest vDSO image (guestkernel/vdso.c) into hvrun. */
	.section .rodata
	.balign 4096
	.globl gk_vdso_start, gk_vdso_end
gk_vdso_start:
	.incbin GK_VDSO_PATH
gk_vdso_end:
	.section .note.GNU-stack, "", @progbits
