/*
 * segv_handler: an SA_SIGINFO handler for SIGSEGV sees the faulting address
 * and the right si_code (SEGV_MAPERR for an unmapped page, SEGV_ACCERR for
 * a write to a read-only page), and siglongjmp leaves the handler. Pages
 * the program already wrote fault too once mprotect or munmap took the
 * permission away (the hypervisor must forget its cached translations),
 * in a small mapping and in the middle of a large one.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile sig_atomic_t hits;
static void *volatile seen_addr;
static volatile int seen_code, seen_signo;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    hits++;
    seen_signo = sig == si->si_signo ? sig : -1;
    seen_addr = si->si_addr;
    seen_code = si->si_code;
    siglongjmp(env, 1);
}

static int expect_fault(volatile char *addr, int want_code, const char *what)
{
    int before = hits;
    if (sigsetjmp(env, 1) == 0) {
        *addr = 1;
        printf("FAIL %s: the write did not fault\n", what);
        return 1;
    }
    if (hits != before + 1) {
        printf("FAIL %s: handler ran %d times\n", what, hits - before);
        return 1;
    }
    if (seen_signo != SIGSEGV) {
        printf("FAIL %s: signo %d\n", what, seen_signo);
        return 1;
    }
    if (seen_addr != (void *)addr) {
        printf("FAIL %s: si_addr %p, wrote to %p\n", what, seen_addr,
               (void *)addr);
        return 1;
    }
    if (seen_code != want_code) {
        printf("FAIL %s: si_code %d, want %d\n", what, seen_code, want_code);
        return 1;
    }
    printf("%s: si_addr exact, si_code %s\n", what,
           want_code == SEGV_MAPERR ? "SEGV_MAPERR" : "SEGV_ACCERR");
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    long page = sysconf(_SC_PAGESIZE);

    /* An address that was mapped and is not any more. */
    char *gone = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (gone == MAP_FAILED || munmap(gone, 2 * page) != 0) {
        perror("mmap/munmap");
        return 1;
    }
    int bad = expect_fault(gone + page + 123, SEGV_MAPERR, "unmapped write");

    /* A read-only page. */
    char *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ro == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    bad |= expect_fault(ro + 77, SEGV_ACCERR, "read-only write");

    /* The signal mask was restored by siglongjmp: a second fault works. */
    bad |= expect_fault(ro + page - 1, SEGV_ACCERR, "second read-only write");

    /* The handler is still installed and the page still readable. */
    if (ro[77] != 0) {
        printf("FAIL read-only page changed\n");
        return 1;
    }
    /* Touched first, then the permission goes. */
    size_t big = 8u << 20;
    char *t = mmap(NULL, big, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (size_t i = 0; i < big; i += (size_t)page)
        t[i] = 1;
    char *mid = t + big / 2 + 3 * page;
    if (mprotect(mid, (size_t)page, PROT_READ) != 0 ||
        mprotect(t, (size_t)page, PROT_NONE) != 0 ||
        munmap(t + big - 2 * page, (size_t)page) != 0) {
        perror("mprotect/munmap");
        return 1;
    }
    bad |= expect_fault(mid + 5, SEGV_ACCERR, "written, then read-only");
    bad |= expect_fault(t + 9, SEGV_ACCERR, "written, then PROT_NONE");
    bad |= expect_fault(t + big - 2 * page + 1, SEGV_MAPERR,
                        "written, then unmapped");
    if (mid[0] != 1 || mid[5] != 0 || mid[-1] != 0 || t[big - page] != 1) {
        printf("FAIL the rest of the large mapping changed\n");
        return 1;
    }
    mid[-1] = 2; /* its neighbours stay writable */

    printf("handler ran %d times\n", hits);
    return bad;
}
