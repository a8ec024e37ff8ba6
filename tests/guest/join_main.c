/*
 * join_main.c - a thread joins the main thread after the main thread's
 * pthread_exit: the join waits on the main thread's tid word, which the
 * kernel clears and wakes at that thread's end because ld.so gave its
 * address to set_tid_address at the program's start. hvrun answers that
 * call in the guest (mm/cpuid_patch.c, "signal calls": set_tid_address)
 * and takes the address back: without it the join waits forever. Also:
 * set_tid_address's answer is the caller's thread id.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_t main_thread;

static void *joiner(void *arg)
{
    (void)arg;
    void *ret = NULL;
    CHECK(pthread_join(main_thread, &ret) == 0);
    printf("joined the main thread: it returned %ld\n", (long)(intptr_t)ret);
    fflush(stdout);
    _exit(0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    /* the raw call's answer (no stub takes it) is the caller's tid; in a
     * child, whose end then clears a word of its own */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        static int word;
        _exit(syscall(SYS_set_tid_address, &word) == syscall(SYS_gettid) ? 0
                                                                         : 1);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("set_tid_address answers the caller's tid: %d\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0);
    main_thread = pthread_self();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, joiner, NULL) == 0);
    pthread_exit((void *)42);
}
