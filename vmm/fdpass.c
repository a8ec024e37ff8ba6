/*
 * fdpass.c - one message with file descriptors over a unix socket.
 */
#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int vmm_send_fds(int sock, const void *buf, size_t len, const int *fds,
                 int nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * VMM_FDPASS_MAX)];
        struct cmsghdr align;
    } ctl;
    if (nfds < 0 || nfds > VMM_FDPASS_MAX)
        return -1;
    memset(&ctl, 0, sizeof(ctl));
    struct iovec iov = {(void *)buf, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        m.msg_control = ctl.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)len ? 0 : -1;
}

ssize_t vmm_recv_fds(int sock, void *buf, size_t len, int *fds, int max_fds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * VMM_FDPASS_MAX)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = ctl.buf,
                       .msg_controllen = sizeof(ctl.buf)};
    for (int i = 0; i < max_fds; i++)
        fds[i] = -1;
    ssize_t n;
    while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (n <= 0)
        return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < got; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + (size_t)i * sizeof(int), sizeof(int));
            if (i < max_fds)
                fds[i] = fd;
            else
                close(fd);
        }
    }
    return n;
}
