/*
 * mprotect_lose_read.c - a page made read-only, read (so the vCPU's
 * translation of it is cached), then made PROT_NONE with its neighbour
 * must fault. Under kvm the read-only backing's host mprotect to the same
 * read-only protection fired no MMU notifier, and kvm_pvm's shadow entry
 * kept the page readable (vmm/aspace.c host_protect_backing).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

#include "guest_check.h"

#define PAGE 4096

static sigjmp_buf fault_jmp;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(fault_jmp, 1);
}

static int faults(volatile char *p)
{
    if (sigsetjmp(fault_jmp, 1))
        return 1;
    (void)*p;
    return 0;
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_segv, .sa_flags = SA_NODEFER};
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
    for (int variant = 0; variant < 4; variant++) {
        char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(p != MAP_FAILED);
        p[0] = 1;
        p[PAGE] = 1;
        if (variant & 1)
            CHECK(mprotect(p + PAGE, PAGE, PROT_READ) == 0);
        if (variant & 2)
            (void)*(volatile char *)(p + PAGE);
        CHECK(mprotect(p, 2 * PAGE, PROT_NONE) == 0);
        printf("variant %d: page 0 faults %d, page 1 faults %d\n", variant,
               faults(p), faults(p + PAGE));
        /* Read-only again: readable, with what was written. */
        CHECK(mprotect(p, 2 * PAGE, PROT_READ) == 0);
        printf("  read-only again: %d %d\n", p[0], p[PAGE]);
        CHECK(munmap(p, 2 * PAGE) == 0);
    }
    return 0;
}
