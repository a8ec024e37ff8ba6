/*
 * user_port_io.c - port I/O in user code is #GP for a process without I/O
 * permission: SIGSEGV (si_code SI_KERNEL, si_addr 0) at the instruction,
 * which a handler can step over. Under hvrun the ports its guest kernel
 * uses to exit (0xe0, 0xe1) are no different: the process gets its
 * signal and the run goes on. Compared with a native run.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "guest_check.h"

static sigjmp_buf back;
static volatile int code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    code = si->si_code;
    CHECK(si->si_addr == NULL);
    siglongjmp(back, 1);
}

#define TRY(label, insn)                                                   \
    do {                                                                   \
        code = -1;                                                         \
        if (sigsetjmp(back, 1) == 0) {                                     \
            __asm__ volatile(insn ::: "memory", "rax", "rdx");             \
            printf("%s: no fault\n", label);                               \
        } else {                                                           \
            printf("%s: SIGSEGV si_code %d\n", label, code);               \
        }                                                                  \
    } while (0)

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
    TRY("out 0xe0", "outb %%al, $0xe0");
    TRY("out 0xe1", "outb %%al, $0xe1");
    TRY("out 0x80", "outb %%al, $0x80");
    TRY("in 0x60", "inb $0x60, %%al");
    TRY("out dx", "mov $0xe1, %%edx; outb %%al, %%dx");
    printf("still running\n");
    return 0;
}
