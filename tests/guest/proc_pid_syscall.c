/*
 * proc_pid_syscall.c - /proc/PID/syscall says what Linux's says (under
 * hvrun its open was EACCES: hvrun's own file):
 * - the reader's own: its read call, the fd and count it passed, the pc
 *   its read returns to;
 * - a child blocked in read on a pipe: the same call and pc, its own fd
 *   and count; one in clock_nanosleep: 230 and its clock; one in pause:
 *   34; a thread blocked in FUTEX_WAIT (task/TID/syscall): 202 and the
 *   word's address; a child that computes: "running";
 * - the file is 0400 and its owner's: another user's open is EACCES, so
 *   is a non-dumpable process's of its own (root's then); its own is
 *   read once dumpable.
 * Prints what holds, no address.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

struct call {
    long long nr;
    unsigned long long args[6], sp, pc;
    int fields;
    char text[512];
};

static void read_call(const char *path, struct call *c)
{
    memset(c, 0, sizeof(*c));
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, c->text, sizeof(c->text) - 1);
    CHECK(n > 0);
    close(fd);
    c->fields = sscanf(c->text,
                       "%lld %llx %llx %llx %llx %llx %llx %llx %llx", &c->nr,
                       &c->args[0], &c->args[1], &c->args[2], &c->args[3],
                       &c->args[4], &c->args[5], &c->sp, &c->pc);
}

static void of_pid(pid_t pid, struct call *c)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
    read_call(path, c);
}

/* A child that sits in fn until killed. */
static pid_t child_in(void (*fn)(void))
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        fn();
        _exit(0);
    }
    usleep(200000);
    return c;
}

static void end(pid_t c)
{
    kill(c, SIGKILL);
    CHECK(waitpid(c, NULL, 0) == c);
}

static int pipe_fds[2];
static void in_read(void)
{
    char x[7];
    (void)!read(pipe_fds[0], x, sizeof(x));
}
static void in_sleep(void)
{
    struct timespec ts = {30, 0};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}
static void in_pause(void) { pause(); }
static void spinning(void)
{
    for (volatile unsigned long i = 0;; i++)
        ;
}

static int futex_word;
static pid_t waiter_tid;
static void *futex_waiter(void *arg)
{
    (void)arg;
    __atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct call self;
    read_call("/proc/self/syscall", &self);
    printf("self: nr %lld, %d fields, count %llu\n", self.nr, self.fields,
           self.args[2]);

    CHECK(pipe(pipe_fds) == 0);
    pid_t c = child_in(in_read);
    struct call blocked;
    of_pid(c, &blocked);
    printf("reader child: nr %lld, fd is the pipe's %d, count %llu, "
           "same pc as ours %d\n",
           blocked.nr, blocked.args[0] == (unsigned long long)pipe_fds[0],
           blocked.args[2], blocked.pc == self.pc);
    end(c);

    c = child_in(in_sleep);
    struct call s;
    of_pid(c, &s);
    printf("sleeper: nr %lld, clock %llu, flags %llu\n", s.nr, s.args[0],
           s.args[1]);
    end(c);

    c = child_in(in_pause);
    of_pid(c, &s);
    printf("pause: nr %lld, %d fields\n", s.nr, s.fields);
    end(c);

    c = child_in(spinning);
    of_pid(c, &s);
    printf("spinner: %s", s.text);
    end(c);

    pthread_t th;
    CHECK(pthread_create(&th, NULL, futex_waiter, NULL) == 0);
    while (!__atomic_load_n(&waiter_tid, __ATOMIC_SEQ_CST))
        usleep(1000);
    usleep(200000);
    char path[96];
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)waiter_tid);
    read_call(path, &s);
    printf("futex waiter: nr %lld, word %d, op %llu\n", s.nr,
           s.args[0] == (unsigned long long)(unsigned long)&futex_word,
           s.args[1]);
    __atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    CHECK(pthread_join(th, NULL) == 0);

    struct stat st;
    CHECK(stat("/proc/self/syscall", &st) == 0);
    printf("mode %o\n", (unsigned)(st.st_mode & 07777));
    if (getuid() == 0) {
        pid_t parent = getpid();
        c = fork();
        CHECK(c >= 0);
        if (c == 0) {
            CHECK(setuid(65534) == 0);
            char p[64];
            snprintf(p, sizeof(p), "/proc/%d/syscall", (int)parent);
            int fd = open(p, O_RDONLY);
            printf("nobody opens root's: %s\n",
                   fd < 0 ? strerror(errno) : "opened");
            /* non-dumpable since its setuid: its own file is root's */
            fd = open("/proc/self/syscall", O_RDONLY);
            printf("nobody opens its own, not dumpable: %s\n",
                   fd < 0 ? strerror(errno) : "opened");
            CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
            struct call own;
            read_call("/proc/self/syscall", &own);
            printf("nobody reads its own, dumpable: nr %lld\n", own.nr);
            _exit(0);
        }
        CHECK(waitpid(c, NULL, 0) == c);
    }
    return 0;
}
