/* Embeds the assembled guest kernel blob into hvrun. */
	.section .rodata
	.balign 4096
	.globl gk_blob_start, gk_blob_end
gk_blob_start:
	.incbin GK_BLOB_PATH
gk_blob_end:
	.section .note.GNU-stack, "", @progbits
