/* touch: static, no libc. Writes one byte to each of the first N 4 KiB
 * pages of a 64 MiB bss array, then exits: argv[1] = N (default 0). Under
 * hvrun the difference between N and 0 is the cost of the guest's first
 * touches of fresh pages (no exits: hvrun pre-builds the guest page tables). */
static char arena[64 << 20] __attribute__((aligned(4096)));

__attribute__((noreturn, used)) void cmain(long *sp);
__attribute__((noreturn, used)) void cmain(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	unsigned long n = 0;
	if (argc > 1)
		for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
			n = n * 10 + (unsigned long)(*p - '0');
	if (n > sizeof arena / 4096)
		n = sizeof arena / 4096;
	for (unsigned long i = 0; i < n; i++)
		((volatile char *)arena)[i * 4096] = 1;
	__asm__ volatile("mov $231, %%eax\n\tsyscall" : : "D"(0) : "rax", "rcx", "r11", "memory");
	__builtin_unreachable();
}

__asm__(".globl _start\n_start:\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall cmain\n");
