/* touch: static, no libc. Touches each of the first N 4 KiB pages of a
 * 64 MiB bss array once, then exits.
 *
 *   touch N [w|r|rw]     w (default): write one byte per page;
 *                        r: read one byte; rw: read it, then write it.
 *
 * No system call but the final exit_group, so under hvrun the difference
 * between N pages and 0 pages is the cost of the guest's first touches of
 * fresh memory (hvrun builds the guest page tables up front; what is left
 * is the hypervisor's own work: on kvm_pvm, shadow page-table fills and the
 * host's page faults on hvrun's anonymous guest memory). */
static char arena[64 << 20] __attribute__((aligned(4096)));

__attribute__((noreturn, used)) void cmain(long *sp);
__attribute__((noreturn, used)) void cmain(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	unsigned long n = 0;
	int rd = 0, wr = 1;
	if (argc > 1)
		for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
			n = n * 10 + (unsigned long)(*p - '0');
	if (argc > 2) {
		const char *m = argv[2];
		rd = m[0] == 'r';
		wr = m[0] == 'w' || (m[0] == 'r' && m[1] == 'w');
	}
	if (n > sizeof arena / 4096)
		n = sizeof arena / 4096;
	volatile char *a = arena;
	for (unsigned long i = 0; i < n; i++) {
		if (rd)
			(void)a[i * 4096];
		if (wr)
			a[i * 4096] = 1;
	}
	__asm__ volatile("mov $231, %%eax\n\tsyscall"
			 :
			 : "D"(0)
			 : "rax", "rcx", "r11", "memory");
	__builtin_unreachable();
}

/* The entry point: hand the initial stack (argc, argv...) to cmain. */
__asm__(".globl _start\n_start:\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall cmain\n");
