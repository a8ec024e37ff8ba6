/*
 * int80.c - INT 0x80 (the 32-bit syscall entry) from 64-bit code. Linux
 * runs it as an i386 syscall; hvrun has no 32-bit ABI: under kvm the gate
 * is absent (#NP on VMX/SVM, #UD on kvm_pvm), and the ptrace backend turns
 * the host's i386 syscall stop into #GP, so the guest gets a signal, never
 * a host call (tests/parity/run.sh builds and compares it).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static void on_segv(int sig, siginfo_t *si, void *uc) { (void)uc; printf("SIGSEGV code %d addr %p\n", si->si_code, si->si_addr); exit(0); }
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_sigaction = on_segv; sa.sa_flags = SA_SIGINFO; sigaction(SIGSEGV, &sa, NULL);
    unsigned char *p = mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
    unsigned char code[] = {0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3}; /* mov $20,%eax (getpid on i386); int $0x80; ret */
    memcpy(p, code, sizeof code); mprotect(p, 4096, PROT_EXEC);
    long r = ((long (*)(void))p)();
    printf("int 0x80 returned %ld\n", r);
    return 0;
}
