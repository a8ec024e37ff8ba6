/*
 * futex_fault.c - a futex wait on memory that cannot hold a futex fails
 * as on Linux instead of waiting: a shared (not FUTEX_PRIVATE_FLAG) wait
 * on an anonymous page the process may not write is EFAULT (Linux keys a
 * shared futex by a page it could write), a wait on PROT_NONE memory is
 * EFAULT (the word cannot be read). hvrun used to park the thread and,
 * with nothing to wake it, end the whole run as a deadlock (exit 125).
 * Also the requeue operations' EINVAL for a negative count (LTP
 * futex_cmp_requeue02). Compared with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static void try_wait(const char *what, int *word, int op)
{
    long r = syscall(SYS_futex, word, op, 0, NULL, NULL, 0);
    printf("%s: %ld %s\n", what, r, r < 0 ? strerror(errno) : "");
}

/* FUTEX_REQUEUE and FUTEX_CMP_REQUEUE: a negative count (nr_requeue is
 * the timeout argument's low 32 bits) is EINVAL before the value is
 * compared (EAGAIN) or any futex is looked at. */
static void requeue_counts(void)
{
    static int f[2];
    const struct {
        const char *what;
        int op, nr_wake;
        long nr_requeue;
        int cmpval;
    } cases[] = {
        {"cmp_requeue wake -1", FUTEX_CMP_REQUEUE_PRIVATE, -1, 1, 0},
        {"cmp_requeue requeue -1", FUTEX_CMP_REQUEUE_PRIVATE, 1, -1, 0},
        {"cmp_requeue requeue 2^32-1", FUTEX_CMP_REQUEUE_PRIVATE, 1,
         0xffffffffL, 0},
        {"cmp_requeue -1, value differs", FUTEX_CMP_REQUEUE_PRIVATE, 1, -1,
         5},
        {"cmp_requeue value differs", FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, 5},
        {"cmp_requeue none waiting", FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, 0},
        {"requeue requeue -1", FUTEX_REQUEUE_PRIVATE, 1, -1, 0},
        {"requeue none waiting", FUTEX_REQUEUE_PRIVATE, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long r = syscall(SYS_futex, &f[0], cases[i].op, cases[i].nr_wake,
                         (void *)cases[i].nr_requeue, &f[1], cases[i].cmpval);
        printf("%s: %ld %s\n", cases[i].what, r, r < 0 ? strerror(errno) : "");
    }
}

int main(void)
{
    int *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(ro != MAP_FAILED && none != MAP_FAILED);
    try_wait("shared wait, read-only anonymous", ro, FUTEX_WAIT);
    try_wait("private wait, PROT_NONE", none, FUTEX_WAIT_PRIVATE);
    try_wait("shared wait, PROT_NONE", none, FUTEX_WAIT);
    /* a value that differs: EAGAIN before any wait */
    long r = syscall(SYS_futex, ro, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
    printf("private wait, read-only, value differs: %ld %s\n", r,
           r < 0 ? strerror(errno) : "");
    requeue_counts();
    return 0;
}
