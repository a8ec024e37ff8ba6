/*
 * vsyscall.c - calls into the legacy [vsyscall] page (gettimeofday, time,
 * getcpu at 0xffffffffff600000/400/800). Under kvm the page is not mapped:
 * each call is a SIGSEGV at its address. Under ptrace the host kernel
 * would emulate them with the host's time; the stub's seccomp filter
 * traps them and hvrun gives the same SIGSEGV (tests/parity/run.sh
 * compares the bytes).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf back;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    printf("  signal %d code %d addr %p\n", sig, si->si_code, si->si_addr);
    siglongjmp(back, 1);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    static const unsigned long entries[] = {0xffffffffff600000UL,
                                            0xffffffffff600400UL,
                                            0xffffffffff600800UL};
    for (int i = 0; i < 3; i++) {
        printf("call %#lx\n", entries[i]);
        fflush(stdout);
        if (sigsetjmp(back, 1) == 0) {
            long (*fn)(void *, void *, void *) =
                (long (*)(void *, void *, void *))entries[i];
            long r = fn(NULL, NULL, NULL);
            printf("  returned %ld (the host's emulation)\n", r);
        }
    }
    return 0;
}
