/* A static `true`: glibc's static start-up (a handful of syscalls: brk,
 * arch_prctl, set_tid_address, ...) and nothing else. Built with -static so
 * that, next to /bin/true, it separates ld.so's dynamic loading from the
 * fixed cost of creating the VM and loading one ELF. */
int main(void)
{
	return 0;
}
