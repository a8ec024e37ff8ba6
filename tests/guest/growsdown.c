/*
 * growsdown: a MAP_GROWSDOWN mapping grows down to a fault below it
 * (Linux's expand_downwards, any access on x86), unless it would come
 * within stack_guard_gap (256 pages) of an accessible mapping below, or
 * past RLIMIT_STACK. Each case runs in a child; the output (how the child
 * ended, how far down the mapping reaches) is compared with native. LTP mmap18 does the same through
 * a thread's stack.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL
#define GAP (256 * PAGE)

static char *base; /* a reservation: GAP + 64 pages, the top 4 mapped */

static void reserve(void)
{
    size_t len = GAP + 64 * PAGE;
    base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(base != MAP_FAILED);
    CHECK(munmap(base, len) == 0);
    char *top = base + len;
    CHECK(mmap(top - 4 * PAGE, 4 * PAGE, PROT_READ | PROT_WRITE,
               MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1,
               0) == top - 4 * PAGE);
}

/* How far the mapping reaches below the reservation's end, in pages:
 * mincore fails (ENOMEM) on the first page below it that is unmapped.
 * (/proc/self/maps shows hvrun's grown part as a mapping of its own,
 * where Linux merges it into one line: docs/LTP.md.) */
static long mapped_pages(void)
{
    char *top = base + GAP + 64 * PAGE;
    unsigned char vec;
    long pages = 0;
    while (pages < 64 && mincore(top - (size_t)(pages + 1) * PAGE, PAGE,
                                 &vec) == 0)
        pages++;
    return pages;
}

static void run(const char *label, long touch_pages, int blocker_at,
                rlim_t stack_limit)
{
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        reserve();
        if (stack_limit) {
            struct rlimit r = {stack_limit, stack_limit};
            CHECK(setrlimit(RLIMIT_STACK, &r) == 0);
        }
        if (blocker_at >= 0) /* a page blocker_at pages above base */
            CHECK(mmap(base + (size_t)blocker_at * PAGE, PAGE,
                       PROT_READ | PROT_WRITE,
                       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
                       0) != MAP_FAILED);
        char *top = base + GAP + 64 * PAGE;
        volatile char *at = top - (size_t)touch_pages * PAGE;
        *at = 1;
        printf("%s: grew to %ld pages, value %d\n", label, mapped_pages(),
               *at);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    if (WIFSIGNALED(st))
        printf("%s: signal %d\n", label, WTERMSIG(st));
}

int main(void)
{
    run("one-page-below", 5, -1, 0);
    run("far-below", 60, -1, 0);
    run("blocker-far", 40, 0, 0);
    run("blocker-within-gap", 40, 200, 0);
    run("past-rlimit-stack", 40, -1, 16 * PAGE);
    run("within-rlimit-stack", 12, -1, 16 * PAGE);
    return 0;
}
