/*
 * pidfd_info: clone's CLONE_PIDFD and the PIDFD_GET_INFO ioctl (LTP
 * ioctl_pidfd01-06), compared with a native run: clone(CLONE_PIDFD)
 * writes an O_CLOEXEC pidfd of the child to parent_tid (EINVAL with
 * CLONE_PARENT_SETTID too); PIDFD_GET_INFO of a live child gives its pid,
 * its parent and its credentials; once the child is reaped it gives its
 * wait status when PIDFD_INFO_EXIT is asked for, and ESRCH when it is not;
 * a NULL argument is EINVAL, the request on a file that is no pidfd
 * ENOTTY; a generic ioctl (FIONBIO) still works on a pidfd. (The cgroup id and the not-yet-reaped zombie are left out: the
 * first is the host's, the second differs between kernel versions.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

struct info {
    uint64_t mask, cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid,
        fsgid;
    int32_t exit_code;
    uint32_t coredump_mask, spare;
};
#define GET_INFO _IOWR(0xFF, 11, struct info)
#define INFO_PID 1ULL
#define INFO_CREDS 2ULL
#define INFO_EXIT 8ULL

static long get_info(int fd, struct info *i, uint64_t mask)
{
    *i = (struct info){.mask = mask};
    return ioctl(fd, GET_INFO, i);
}

int main(void)
{
    int ready[2];
    CHECK(pipe(ready) == 0);
    int pidfd = -1;
    long child = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
    CHECK(child >= 0);
    if (child == 0) {
        char c;
        (void)!read(ready[0], &c, 1);
        _exit(42);
    }
    printf("pidfd made: %d, cloexec %d\n", pidfd >= 0,
           (fcntl(pidfd, F_GETFD) & FD_CLOEXEC) != 0);
    struct info i;
    long rc = get_info(pidfd, &i, INFO_EXIT);
    printf("live: %s, pid ok %d, tgid ok %d, ppid ok %d, uid ok %d, "
           "mask pid %d creds %d exit %d\n",
           result_text(rc), i.pid == (uint32_t)child,
           i.tgid == (uint32_t)child, i.ppid == (uint32_t)getpid(),
           i.euid == geteuid() && i.fsgid == getegid(),
           (i.mask & INFO_PID) != 0, (i.mask & INFO_CREDS) != 0,
           (i.mask & INFO_EXIT) != 0);
    printf("NULL argument: %s\n", result_text(ioctl(pidfd, GET_INFO, NULL)));
    int on = 1;
    printf("FIONBIO (a generic ioctl): %s", result_text(ioctl(pidfd, FIONBIO, &on)));
    printf(", O_NONBLOCK %d\n", (fcntl(pidfd, F_GETFL) & O_NONBLOCK) != 0);
    printf("not a pidfd: %s\n", result_text(ioctl(ready[0], GET_INFO, &i)));
    CHECK(write(ready[1], "x", 1) == 1);
    int st;
    CHECK(waitpid((pid_t)child, &st, 0) == child);
    rc = get_info(pidfd, &i, INFO_EXIT);
    printf("reaped, exit asked: %s, exit %d, status ok %d, pid %u\n",
           result_text(rc), (i.mask & INFO_EXIT) != 0, i.exit_code == st,
           i.pid);
    rc = get_info(pidfd, &i, 0);
    printf("reaped, exit not asked: %s\n", result_text(rc));
    /* pidfd_getfd needs ptrace access: not from a child that dropped to
     * another user (LTP pidfd_getfd02) */
    int self_fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    fflush(stdout);
    pid_t dropper = fork();
    CHECK(dropper >= 0);
    if (dropper == 0) {
        if (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0)
            _exit(1);
        printf("pidfd_getfd as another user: %s\n",
               result_text(syscall(SYS_pidfd_getfd, self_fd, 1, 0)));
        printf("pidfd_getfd as another user, no such fd: %s\n",
               result_text(syscall(SYS_pidfd_getfd, self_fd, 999, 0)));
        fflush(stdout);
        _exit(0);
    }
    CHECK(waitpid(dropper, &st, 0) == dropper);
    int other = -1;
    rc = syscall(SYS_clone, CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD, 0,
                 &other, 0, 0);
    if (rc == 0)
        _exit(0);
    printf("with CLONE_PARENT_SETTID: %s\n", result_text(rc));
    return 0;
}
