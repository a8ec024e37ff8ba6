/*
 * proc_stat_leader.c - /proc/PID/stat's state is the main thread's: a
 * second thread that reads its process's stat while the main thread waits
 * in futex sees S, then wakes it. hvrun showed the reading thread's R, so
 * the thread never saw S (LTP futex_wait03, futex_cmp_requeue01 wait so
 * and were ended by LTP's timeout). Run natively and under hvrun, the
 * output must match.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static int futex_word;

static char process_state(void)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", getpid());
    FILE *f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof(buf), f)) {
        if (f)
            fclose(f);
        return '?';
    }
    fclose(f);
    char *end = strrchr(buf, ')');
    return end && end[1] == ' ' ? end[2] : '?';
}

static void *waker(void *arg)
{
    (void)arg;
    int tries = 0;
    while (process_state() != 'S' && tries < 20000) {
        tries++;
        sched_yield();
    }
    printf("thread saw the main thread sleeping: %d\n", tries < 20000);
    fflush(stdout);
    __atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waker, NULL) == 0);
    while (__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST) == 0)
        syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    CHECK(pthread_join(t, NULL) == 0);
    printf("main thread woken\n");
    return 0;
}
