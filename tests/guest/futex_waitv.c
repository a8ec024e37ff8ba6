/*
 * futex_waitv: waiting on several futexes at once, as Linux 5.16+: the
 * argument checks in Linux's order (flags, count, clock, each waiter's
 * flags, alignment, value: EAGAIN), an absolute timeout, and a wake of
 * one of them returning its index (private and shared words).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef FUTEX2_SIZE_U32 /* Linux 6.7's names; 6.1's headers say FUTEX_32 */
#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_PRIVATE FUTEX_PRIVATE_FLAG
#endif

static uint32_t words[4];

static long waitv(struct futex_waitv *w, unsigned n, unsigned flags,
                  struct timespec *to, int clk)
{
    return syscall(SYS_futex_waitv, w, n, flags, to, clk);
}

static void show(const char *what, long r)
{
    if (r < 0)
        printf("%-36s -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%-36s %ld\n", what, r);
}

static void fill(struct futex_waitv *w, int n, uint32_t flags)
{
    for (int i = 0; i < n; i++)
        w[i] = (struct futex_waitv){words[i], (uintptr_t)&words[i], flags, 0};
}

static void *waiter(void *arg)
{
    struct futex_waitv w[3];
    fill(w, 3, FUTEX2_SIZE_U32 | (arg ? 0 : FUTEX2_PRIVATE));
    long r = waitv(w, 3, 0, NULL, 0);
    printf("waiter woken: %ld\n", r);
    return NULL;
}

static void wake_until_woken(uint32_t *word, int private_)
{
    int op = FUTEX_WAKE | (private_ ? FUTEX_PRIVATE_FLAG : 0);
    while (syscall(SYS_futex, word, op, 1, NULL, NULL, 0) == 0)
        usleep(1000);
}

int main(void)
{
    struct futex_waitv w[130];
    struct timespec to;
    fill(w, 3, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
    show("flags 1", waitv(w, 3, 1, NULL, 0));
    show("no waiters", waitv(w, 0, 0, NULL, 0));
    show("129 waiters", waitv(w, 129, 0, NULL, 0));
    show("NULL array", waitv(NULL, 3, 0, NULL, 0));
    clock_gettime(CLOCK_MONOTONIC, &to);
    show("bad clock", waitv(w, 3, 0, &to, CLOCK_BOOTTIME));
    w[1].flags = FUTEX2_PRIVATE;
    show("no size flag", waitv(w, 3, 0, NULL, 0));
    fill(w, 3, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
    w[2].__reserved = 1;
    show("reserved bits", waitv(w, 3, 0, NULL, 0));
    fill(w, 3, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
    w[0].uaddr += 1;
    show("unaligned", waitv(w, 3, 0, NULL, 0));
    fill(w, 3, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
    w[1].val = 5;
    show("value differs", waitv(w, 3, 0, NULL, 0));
    fill(w, 3, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
    w[2].uaddr = 8;
    show("bad address", waitv(w, 3, 0, NULL, 0));
    fill(w, 3, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
    clock_gettime(CLOCK_MONOTONIC, &to);
    to.tv_nsec += 10000000;
    if (to.tv_nsec >= 1000000000) {
        to.tv_sec++;
        to.tv_nsec -= 1000000000;
    }
    show("timeout (monotonic, absolute)", waitv(w, 3, 0, &to, CLOCK_MONOTONIC));
    clock_gettime(CLOCK_REALTIME, &to);
    show("timeout in the past (realtime)", waitv(w, 3, 0, &to, CLOCK_REALTIME));

    pthread_t t;
    fflush(stdout);
    pthread_create(&t, NULL, waiter, NULL);
    usleep(20000);
    wake_until_woken(&words[1], 1);
    pthread_join(t, NULL);
    fflush(stdout);
    pthread_create(&t, NULL, waiter, (void *)1);
    usleep(20000);
    wake_until_woken(&words[2], 0);
    pthread_join(t, NULL);
    return 0;
}
