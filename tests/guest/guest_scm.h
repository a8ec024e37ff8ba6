/*
 * guest_scm.h - one fd through a unix socket (SCM_RIGHTS), for the guest
 * tests that pass descriptors (include after guest_check.h).
 */
#ifndef GUEST_SCM_H
#define GUEST_SCM_H

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static inline void send_fd(int sock, int fd)
{
    char byte = 'x';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = ctl.space,
                         .msg_controllen = sizeof(ctl.space)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    CHECK(sendmsg(sock, &msg, 0) == 1);
}

static inline int recv_fd(int sock)
{
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = ctl.space,
                         .msg_controllen = sizeof(ctl.space)};
    CHECK(recvmsg(sock, &msg, 0) == 1);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    CHECK(c && c->cmsg_type == SCM_RIGHTS);
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

/* A child that runs receiver on its end of a new socket pair and exits;
 * *sender gets the parent's end. The child's pid. */
static inline pid_t fork_receiver(void (*receiver)(int sock), int *sender)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(sv[0]);
        receiver(sv[1]);
        _exit(0);
    }
    close(sv[1]);
    *sender = sv[0];
    return child;
}

#endif
