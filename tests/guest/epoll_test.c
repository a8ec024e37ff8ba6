/*
 * epoll_test.c - epoll and eventfd: readiness of a pipe and an eventfd in
 * one set, the data field handed back verbatim, EPOLL_CTL_DEL, a wait
 * without timeout woken by a forked child, the error cases, and eventfd
 * semaphore reads. Its output must be the same natively and under hvrun.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PIPE_DATA 0x1111222233334444ULL
#define EFD_DATA 0x5555666677778888ULL

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", what, ok ? "ok" : "FAIL");
    if (!ok)
        failures++;
}

static void check_errno(long r, int want, const char *what)
{
    int ok = r == -1 && errno == want;
    printf("%s: %s (errno %s)\n", what, ok ? "ok" : "FAIL",
           r == -1 ? strerror(errno) : "none");
    if (!ok)
        failures++;
}

static int cmp_event(const void *a, const void *b)
{
    const struct epoll_event *x = a, *y = b;
    return x->data.u64 < y->data.u64 ? -1 : x->data.u64 > y->data.u64;
}

static void print_events(const char *what, struct epoll_event *ev, int n)
{
    qsort(ev, (size_t)n, sizeof(*ev), cmp_event);
    printf("%s: %d event(s)\n", what, n);
    for (int i = 0; i < n; i++)
        printf("  data=%#llx events=%#x\n", (unsigned long long)ev[i].data.u64,
               ev[i].events);
}

/* epoll_wait without the libc wrapper, whose access attribute rejects the
 * deliberately wrong arguments at compile time. */
static long raw_wait(int ep, uintptr_t events, int maxevents)
{
    return syscall(SYS_epoll_wait, ep, events, maxevents, 0);
}

static int add(int ep, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev = {.events = events, .data.u64 = data};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void test_ready_set(int ep, int pfd[2], int efd)
{
    struct epoll_event ev[8];
    int n = epoll_wait(ep, ev, 8, 0);
    print_events("wait before writes", ev, n);

    uint64_t one = 1;
    check(write(pfd[1], "x", 1) == 1, "write pipe");
    check(write(efd, &one, sizeof(one)) == sizeof(one), "write eventfd");
    n = epoll_wait(ep, ev, 8, 0);
    print_events("wait after writes", ev, n);

    n = epoll_pwait(ep, ev, 8, 100, NULL);
    print_events("pwait (level-triggered, still ready)", ev, n);
    check(epoll_wait(ep, ev, 1, 0) == 1, "maxevents 1 gives one event");

    char c;
    uint64_t v;
    check(read(pfd[0], &c, 1) == 1 && c == 'x', "read pipe");
    check(read(efd, &v, sizeof(v)) == sizeof(v) && v == 1, "read eventfd");
    n = epoll_wait(ep, ev, 8, 10);
    print_events("wait after reads (finite timeout)", ev, n);
}

static void test_del(int ep, int efd)
{
    struct epoll_event ev[8];
    uint64_t one = 1, v;
    check(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL) == 0, "EPOLL_CTL_DEL");
    check(write(efd, &one, sizeof(one)) == sizeof(one), "write eventfd");
    int n = epoll_wait(ep, ev, 8, 0);
    print_events("wait after DEL", ev, n);
    check(read(efd, &v, sizeof(v)) == sizeof(v), "drain eventfd");
    struct epoll_event mod = {.events = EPOLLIN, .data.u64 = 7};
    check_errno(epoll_ctl(ep, EPOLL_CTL_MOD, efd, &mod), ENOENT,
                "MOD after DEL");
}

/* The parent waits without timeout; the child writes after a pause. */
static void test_fork_wakes(int ep, int pfd[2])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        usleep(50000);
        _exit(write(pfd[1], "y", 1) == 1 ? 0 : 1);
    }
    struct epoll_event ev[4];
    int n = epoll_wait(ep, ev, 4, -1);
    print_events("infinite wait woken by child", ev, n);
    char c;
    check(read(pfd[0], &c, 1) == 1 && c == 'y', "read child's byte");
    int status;
    check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0,
          "child exited 0");

    /* epoll_pwait2 with a NULL timeout waits too, woken by a child. */
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        usleep(20000);
        _exit(write(pfd[1], "z", 1) == 1 ? 0 : 1);
    }
    n = (int)syscall(SYS_epoll_pwait2, ep, ev, 4, NULL, NULL, 8);
    print_events("pwait2 woken by child", ev, n);
    check(read(pfd[0], &c, 1) == 1 && c == 'z', "read child's byte");
    check(waitpid(pid, &status, 0) == pid, "child reaped");
}

static void test_errors(int ep, int pfd[2], int efd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1}, out[2];
    check_errno(add(ep, pfd[0], EPOLLIN, 1), EEXIST, "ADD twice");
    check_errno(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL), ENOENT,
                "DEL of an fd not in the set");
    check_errno(add(ep, 999, EPOLLIN, 1), EBADF, "ADD of a closed fd");
    check_errno(add(999, pfd[0], EPOLLIN, 1), EBADF, "ADD to a closed epfd");
    check_errno(add(ep, ep, EPOLLIN, 1), EINVAL, "ADD epfd to itself");
    check_errno(add(efd, pfd[0], EPOLLIN, 1), EINVAL, "epfd not an epoll fd");
    check_errno(epoll_ctl(ep, 99, pfd[0], &ev), EINVAL, "bad op");
    char name[] = "/tmp/epoll_test.XXXXXX";
    int file = mkstemp(name);
    check(file >= 0, "open a regular file");
    check_errno(add(ep, file, EPOLLIN, 1), EPERM, "ADD of a regular file");
    close(file);
    unlink(name);
    check_errno(epoll_wait(ep, out, 0, 0), EINVAL, "maxevents 0");
    check_errno(raw_wait(ep, (uintptr_t)out, -1), EINVAL, "maxevents -1");
    check_errno(raw_wait(ep, (uintptr_t)out, INT32_MAX), EINVAL, "maxevents huge");
    check_errno(epoll_wait(999, out, 2, 0), EBADF, "wait on a closed fd");
    check_errno(epoll_wait(efd, out, 2, 0), EINVAL, "wait on a non-epoll fd");
    check(epoll_pwait(ep, out, 2, 0, NULL) == 0, "pwait NULL mask");
    check_errno(epoll_create(0), EINVAL, "epoll_create(0)");
    check_errno(epoll_create1(0x1234), EINVAL, "epoll_create1 bad flags");
    check_errno(eventfd(0, 0x1234), EINVAL, "eventfd bad flags");

    /* Events ready but nowhere to put them. */
    check(write(pfd[1], "e", 1) == 1, "write pipe");
    check_errno(raw_wait(ep, 8, 2), EFAULT,
                "wait into a bad buffer");
    check_errno(raw_wait(ep, (uintptr_t)-4096L, 2), EFAULT,
                "wait into a kernel address");
    uint64_t mask = 0;
    check_errno(syscall(SYS_epoll_pwait, ep, out, 2, 0, &mask, 4), EINVAL,
                "pwait sigsetsize 4");
    check(syscall(SYS_epoll_pwait, ep, out, 2, 0, &mask, 8) == 1,
          "pwait sigsetsize 8");
    char c;
    check(read(pfd[0], &c, 1) == 1, "drain pipe");
}

static void test_semaphore(void)
{
    int efd = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
    check(efd >= 0, "eventfd semaphore");
    check((fcntl(efd, F_GETFD) & FD_CLOEXEC) != 0, "EFD_CLOEXEC");
    check((fcntl(efd, F_GETFL) & O_NONBLOCK) != 0, "EFD_NONBLOCK");
    uint64_t v;
    for (int i = 0; i < 3; i++) {
        v = 0;
        check(read(efd, &v, sizeof(v)) == sizeof(v) && v == 1,
              "semaphore read gives 1");
    }
    check_errno(read(efd, &v, sizeof(v)), EAGAIN, "empty semaphore read");
    check_errno(read(efd, &v, 4), EINVAL, "short read");
    close(efd);

    /* A blocking eventfd read at 0 waits for a child's write. */
    efd = eventfd(0, 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        usleep(20000);
        uint64_t five = 5;
        _exit(write(efd, &five, sizeof(five)) == sizeof(five) ? 0 : 1);
    }
    v = 0;
    check(read(efd, &v, sizeof(v)) == sizeof(v) && v == 5,
          "blocking eventfd read woken by child");
    int status;
    check(waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 0,
          "child exited 0");
    close(efd);
}

int main(void)
{
    int pfd[2];
    if (pipe(pfd) < 0) {
        perror("pipe");
        return 1;
    }
    int efd = eventfd(0, 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    check(efd >= 0 && ep >= 0, "eventfd and epoll_create1");
    check((fcntl(ep, F_GETFD) & FD_CLOEXEC) != 0, "EPOLL_CLOEXEC");
    check(add(ep, pfd[0], EPOLLIN, PIPE_DATA) == 0, "ADD pipe");
    check(add(ep, efd, EPOLLIN, EFD_DATA) == 0, "ADD eventfd");

    test_ready_set(ep, pfd, efd);
    test_del(ep, efd);
    test_fork_wakes(ep, pfd);
    test_errors(ep, pfd, efd);
    test_semaphore();

    close(ep);
    close(efd);
    close(pfd[0]);
    close(pfd[1]);
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
