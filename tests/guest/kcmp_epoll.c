/*
 * kcmp_epoll.c - kcmp(2)'s KCMP_EPOLL_TFD: a file against the one an epoll
 * instance watches under a fd number (struct kcmp_epoll_slot: efd, tfd,
 * toff), as stress-ng's kcmp stressor asks it (hvrun answered EOPNOTSUPP,
 * which failed the stressor):
 *  - equal for the watched file itself, a dup of it, and the file a dup'd
 *    number was added under; different for another file;
 *  - a fork child asks about its parent's instance (pid2 the parent);
 *  - ENOENT for a number the instance does not watch and for a toff past
 *    the entries of that number; EINVAL for an efd that is not an epoll
 *    instance; EBADF for a closed idx1 or efd; EFAULT for a bad slot.
 * Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static int pipe_fds[2], dup_fd, epfd;

static const char *target_of(pid_t pid2, int idx1, int efd, int tfd, int toff)
{
    struct kcmp_epoll_slot slot = {(__u32)efd, (__u32)tfd, (__u32)toff};
    long rc = syscall(SYS_kcmp, getpid(), pid2, KCMP_EPOLL_TFD, idx1, &slot);
    if (rc < 0)
        return strerrorname_np(errno);
    return rc == 0 ? "equal" : "different";
}

static void watch(int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0);
}

int main(void)
{
    CHECK(pipe(pipe_fds) == 0);
    dup_fd = dup(pipe_fds[0]);
    CHECK(dup_fd >= 0);
    epfd = epoll_create1(0);
    CHECK(epfd >= 0);
    watch(pipe_fds[0]);
    watch(dup_fd);
    pid_t me = getpid();
    printf("read end, its entry: %s\n", target_of(me, pipe_fds[0], epfd, pipe_fds[0], 0));
    printf("dup, the read end's entry: %s\n", target_of(me, dup_fd, epfd, pipe_fds[0], 0));
    printf("read end, the dup's entry: %s\n", target_of(me, pipe_fds[0], epfd, dup_fd, 0));
    printf("write end, the read end's entry: %s\n", target_of(me, pipe_fds[1], epfd, pipe_fds[0], 0));
    printf("toff 1: %s\n", target_of(me, pipe_fds[0], epfd, pipe_fds[0], 1));
    printf("unwatched number: %s\n", target_of(me, pipe_fds[1], epfd, pipe_fds[1], 0));
    printf("efd not an epoll: %s\n", target_of(me, pipe_fds[0], pipe_fds[0], pipe_fds[0], 0));
    printf("efd closed: %s\n", target_of(me, pipe_fds[0], 900, pipe_fds[0], 0));
    printf("idx1 closed: %s\n", target_of(me, 900, epfd, pipe_fds[0], 0));
    errno = 0;
    long rc = syscall(SYS_kcmp, me, me, KCMP_EPOLL_TFD, pipe_fds[0], NULL);
    printf("slot NULL: %s\n", rc < 0 ? strerrorname_np(errno) : "no error");
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        printf("child, the parent's instance: %s\n",
               target_of(getppid(), pipe_fds[0], epfd, pipe_fds[0], 0));
        printf("child's write end, the parent's instance: %s\n",
               target_of(getppid(), pipe_fds[1], epfd, dup_fd, 0));
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return 0;
}
