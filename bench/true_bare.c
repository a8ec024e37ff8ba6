/* The smallest possible guest: no libc, one syscall (exit_group). Under
 * hvrun its wall time is VM creation + ELF load + one exit + teardown.
 * Built with -static -nostdlib. */
void _start(void);
void _start(void)
{
	__asm__ volatile("mov $231, %%eax\n\t" /* exit_group */
			 "xor %%edi, %%edi\n\t"
			 "syscall"
			 :
			 :
			 : "rax", "rdi", "rcx", "r11", "memory");
	__builtin_unreachable();
}
