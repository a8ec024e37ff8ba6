/*
 * mm_lock_limits.c - RLIMIT_MEMLOCK as Linux counts it for an
 * unprivileged process: mlock counts what is locked already (not the part
 * of its own range that is), MAP_LOCKED, mmap and brk under
 * mlockall(MCL_FUTURE) fail with EAGAIN / leave the break when they would
 * pass the limit. Run as root, it drops to uid 65534 first (root has
 * CAP_IPC_LOCK and no limit). Each answer is printed; the runner compares
 * the output with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL

static void report(const char *what, int failed)
{
    printf("%s: %s\n", what, failed ? strerrorname_np(errno) : "ok");
}

static void *map(size_t pages, int flags)
{
    return mmap(NULL, pages * PAGE, PROT_READ,
                MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
}

int main(void)
{
    struct rlimit rl = {16 * PAGE, 16 * PAGE};
    CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
    if (getuid() == 0)
        CHECK(setuid(65534) == 0);
    char *b = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    report("lock 8 pages", mlock(b, 8 * PAGE));
    report("lock 8 more", mlock(b + 8 * PAGE, 8 * PAGE));
    report("lock 1 more", mlock(b + 16 * PAGE, PAGE));
    report("lock the first 8 again", mlock(b, 8 * PAGE));
    report("lock 12 of which 8 are", mlock(b + 4 * PAGE, 12 * PAGE));
    report("unlock 4", munlock(b, 4 * PAGE));
    report("lock 4 elsewhere", mlock(b + 32 * PAGE, 4 * PAGE));
    report("lock 1 elsewhere", mlock(b + 40 * PAGE, PAGE));
    report("MAP_LOCKED past the limit", map(2, MAP_LOCKED) == MAP_FAILED);
    report("mremap growing a locked mapping past it",
           mremap(b + 32 * PAGE, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE) ==
               MAP_FAILED);
    report("munlockall", munlockall());
    report("MAP_LOCKED within it", map(2, MAP_LOCKED) == MAP_FAILED);
    report("mlockall future", mlockall(MCL_FUTURE));
    report("mmap past it under MCL_FUTURE", map(20, 0) == MAP_FAILED);
    report("mmap within it under MCL_FUTURE", map(2, 0) == MAP_FAILED);
    char *cur = sbrk(0);
    report("brk past it under MCL_FUTURE", brk(cur + 64 * PAGE));
    report("munlockall again", munlockall());
    report("brk then", brk(cur + 64 * PAGE));
    rl.rlim_cur = 0;
    CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
    report("MAP_LOCKED with a zero limit", map(1, MAP_LOCKED) == MAP_FAILED);
    report("mlock with a zero limit", mlock(b, PAGE));
    return 0;
}
