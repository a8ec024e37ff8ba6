/*
 * robust_list_get: get_robust_list of the caller (0, its pid, its tid),
 * of another thread (that thread's own head), of a child (readable by a
 * root parent), of no such task (ESRCH), and of pid 1 by a process that
 * dropped root (EPERM: no read access to init).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct robust_list_head heads[2];
static pid_t other_tid;
static int stage;

static void show(const char *what, long r, void *head)
{
    if (r < 0)
        printf("%-32s -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%-32s ok, head %s\n", what,
               head == &heads[0] ? "main's" : head == &heads[1] ? "thread's"
               : head ? "another" : "none");
}

static long get(int pid, void **head)
{
    size_t len;
    *head = NULL;
    return syscall(SYS_get_robust_list, pid, head, &len);
}

static void *thread_main(void *arg)
{
    (void)arg;
    syscall(SYS_set_robust_list, &heads[1], sizeof(heads[1]));
    __atomic_store_n(&other_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&stage, __ATOMIC_SEQ_CST) == 0)
        usleep(1000);
    return NULL;
}

int main(void)
{
    void *head;
    syscall(SYS_set_robust_list, &heads[0], sizeof(heads[0]));
    long r = get(0, &head);
    show("pid 0", r, head);
    r = get(getpid(), &head);
    show("own pid", r, head);
    pthread_t t;
    pthread_create(&t, NULL, thread_main, NULL);
    while (!__atomic_load_n(&other_tid, __ATOMIC_SEQ_CST))
        usleep(1000);
    r = get(other_tid, &head);
    show("the other thread's tid", r, head);
    __atomic_store_n(&stage, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    r = get(999999, &head);
    show("no such task", r, head);
    int go[2], ready[2];
    if (pipe(go) < 0 || pipe(ready) < 0)
        return 1;
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        char k;
        if (write(ready[1], "r", 1) < 0 || read(go[0], &k, 1) < 0)
            _exit(1);
        _exit(0);
    }
    /* once the child runs: glibc's fork has set its own list head there
     * (a fork starts with none; read before, it is a race natively) */
    char k;
    if (read(ready[0], &k, 1) < 0)
        return 1;
    r = get(c, &head);
    show("a child (glibc's own head)", r, head);
    if (write(go[1], "x", 1) < 0)
        return 1;
    waitpid(c, NULL, 0);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        if (setuid(65534) == 0) {
            r = get(1, &head);
            show("pid 1 as nobody", r, head);
        }
        fflush(stdout);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    return 0;
}
