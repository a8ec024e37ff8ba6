/*
 * wake_spinner.c - the liveness reproducer: thread A parks in ppoll on an
 * eventfd (5 s timeout); thread B writes the eventfd, then spins, without
 * a syscall, on a flag A sets once ppoll has returned. Natively a few ms.
 * Under hvrun A must get the vCPU at B's write (a readiness change a guest
 * made wakes its waiters at once, deterministically), not never; and the
 * run verifies.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static int efd;
static atomic_int woken;

static void *poller(void *arg)
{
    (void)arg;
    struct pollfd pfd = {.fd = efd, .events = POLLIN};
    struct timespec ts = {5, 0};
    int r = ppoll(&pfd, 1, &ts, NULL);
    CHECK(r == 1 && (pfd.revents & POLLIN));
    atomic_store(&woken, 1);
    return NULL;
}

int main(void)
{
    efd = eventfd(0, EFD_CLOEXEC);
    CHECK(efd >= 0);
    pthread_t a;
    CHECK(pthread_create(&a, NULL, poller, NULL) == 0);
    usleep(10000); /* let A park (under hvrun: A runs while B sleeps) */
    uint64_t one = 1;
    CHECK(write(efd, &one, sizeof(one)) == sizeof(one));
    while (!atomic_load(&woken))
        ; /* no syscall: only A can end this */
    CHECK(pthread_join(a, NULL) == 0);
    printf("woken\n");
    return 0;
}
