/*
 * tsc_prctl.c - PR_SET_TSC/PR_GET_TSC: PR_TSC_SIGSEGV makes RDTSC and
 * RDTSCP raise SIGSEGV (si_code SI_KERNEL, no address: CR4.TSD's #GP),
 * kept by fork and clone, per thread; PR_TSC_ENABLE gives the counter back; other modes are
 * EINVAL. One line per check, compared with a native run
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "guest_check.h"

static sigjmp_buf back;
static volatile int seen_code = -1;
static void *volatile seen_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    seen_code = si->si_code;
    seen_addr = si->si_addr;
    siglongjmp(back, 1);
}

static int mode(void)
{
    int m = -1;
    CHECK(prctl(PR_GET_TSC, &m, 0, 0, 0) == 0);
    return m;
}

/* 1 when the read faulted (and how), 0 when it gave a value. */
static void try_read(const char *what, int rdtscp)
{
    seen_code = -1;
    if (sigsetjmp(back, 1) == 0) {
        unsigned aux;
        volatile unsigned long long v = rdtscp ? __rdtscp(&aux) : __rdtsc();
        (void)v;
        printf("%s: read\n", what);
    } else {
        printf("%s: SIGSEGV code %d addr %p\n", what, seen_code, seen_addr);
    }
    fflush(stdout);
}

/* A thread starts with its creator's mode; its own change is its own. */
static void *thread_enables(void *arg)
{
    (void)arg;
    printf("thread mode: %d\n", mode());
    printf("thread set enable: %s\n",
           result_text(prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0)));
    printf("thread mode: %d\n", mode());
    fflush(stdout);
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

    printf("initial mode: %d\n", mode());
    printf("set 0: %s\n", result_text(prctl(PR_SET_TSC, 0, 0, 0, 0)));
    printf("set 3: %s\n", result_text(prctl(PR_SET_TSC, 3, 0, 0, 0)));
    printf("get to a bad pointer: %s\n",
           result_text(prctl(PR_GET_TSC, (void *)8, 0, 0, 0)));
    try_read("rdtsc enabled", 0);
    printf("set sigsegv: %s\n", result_text(prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0)));
    printf("mode: %d\n", mode());
    try_read("rdtsc", 0);
    try_read("rdtscp", 1);
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        printf("child mode: %d\n", mode());
        try_read("child rdtsc", 0);
        _exit(0);
    }
    CHECK(waitpid(c, NULL, 0) == c);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_enables, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    printf("main's mode after the thread's: %d\n", mode());
    printf("set enable: %s\n", result_text(prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0)));
    printf("mode: %d\n", mode());
    try_read("rdtsc again", 0);
    try_read("rdtscp again", 1);
    return 0;
}
