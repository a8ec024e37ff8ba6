/*
 * internal.h - what the files of net/ share among themselves.
 */
#ifndef PROXY_NET_INTERNAL_H
#define PROXY_NET_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "io.h"
#include "net.h"

struct ucred;

/* A socket address in host memory and its length (as the guest gave it, or
 * as the host reported it). */
struct sock_addr {
    union {
        struct sockaddr sa;
        struct sockaddr_storage ss;
        struct sockaddr_un un;
    } u;
    socklen_t len;
};

/* hvrun's host state changed around one host call naming an AF_UNIX path. */
struct path_ctx {
    int saved_cwd_fd; /* hvrun's cwd while the guest's is in place, or -1 */
    mode_t saved_umask;
    bool umask_set;
};

/* The host fd of a guest socket: -EBADF, or -ENOTSOCK for another file,
 * before any argument is looked at (sockfd_lookup comes first in Linux). */
static inline int sock_host_fd(struct proxy_process *p, uint64_t guest_fd)
{
    int host_fd = proxy_fd_host(&p->fds, (int)guest_fd);
    struct stat st;
    if (host_fd >= 0 && fstat(host_fd, &st) == 0 && !S_ISSOCK(st.st_mode)) {
        /* An O_PATH fd is no file to sockfd_lookup's fdget: EBADF (one
         * of a socket is refused by the host's call alike). */
        int fl = fcntl(host_fd, F_GETFL);
        return fl >= 0 && (fl & O_PATH) ? -EBADF : -ENOTSOCK;
    }
    return host_fd;
}

/*
 * Whether a call on a socket may wait: neither the socket (O_NONBLOCK) nor
 * the call (MSG_DONTWAIT) says not to. *status_flags gets F_GETFL's flags.
 */
static inline bool sock_may_wait(int host_fd, int flags, int *status_flags)
{
    if (flags & MSG_DONTWAIT)
        return false;
    *status_flags = fcntl(host_fd, F_GETFL);
    return *status_flags >= 0 && !(*status_flags & O_NONBLOCK);
}

/* The socket's poll bits for events right now (a failed look counts as
 * ready, leaving the answer to the call). */
static inline short sock_revents(int host_fd, short events)
{
    struct pollfd pfd = {.fd = host_fd, .events = events};
    return poll(&pfd, 1, 0) < 0 ? events : pfd.revents;
}

/* Linux's move_addr_to_kernel: 0 to sizeof(sockaddr_storage) bytes, the
 * length taken as an int. */
static inline long sock_addr_in(struct proxy_process *p, gva_t gva, uint64_t len_arg,
                         struct sock_addr *sa)
{
    int len = (int)len_arg;
    if (len < 0 || (size_t)len > sizeof(sa->u))
        return -EINVAL;
    sa->len = (socklen_t)len;
    if (len > 0 && proxy_copy_in(p, &sa->u, gva, (size_t)len) < 0)
        return -EFAULT;
    return 0;
}

/* Parks on a socket; SO_RCVTIMEO / SO_SNDTIMEO become a deadline on the
 * logical clock, after which the call fails with EAGAIN as on Linux. */
static inline long park_sock(struct proxy_process *p, int host_fd, short events)
{
    return proxy_block_on_fd_for(p, host_fd, events,
                                 proxy_sock_timeout_ns(host_fd, events));
}

/* ---- peer credentials (net/peercred.c) ----------------------------------- */
/* Host credentials of the peer of host socket host_fd (SO_PEERCRED, an
 * SCM_CREDENTIALS message) rewritten in guest terms, in place. */
void proxy_peercred_to_guest(struct proxy_process *p, int host_fd,
                             struct ucred *uc);

/* ---- sockets (net/net.c) ------------------------------------------------- */
/* net.c's address and AF_UNIX path handling, for msg.c's sends and
 * receives with an address. */
long proxy_net_sock_addr_out(struct proxy_process *p, gva_t addr_gva,
                          gva_t addrlen_gva, const struct sock_addr *host_sa,
                          bool own);
void proxy_net_addr_to_guest(const struct proxy_process *p,
                             struct sock_addr *g, const struct sock_addr *h,
                             bool own);
long proxy_net_path_ctx_enter(struct proxy_process *p, struct sock_addr *sa,
                           bool creates, struct path_ctx *c);
void proxy_net_path_ctx_leave(struct proxy_process *p, const struct path_ctx *c);

/* ---- ports of binds to port 0 (net/inet_port.c) -------------------------- */
/* Whether sa is an AF_INET/AF_INET6 address with port 0 (the host would
 * pick one), or a loopback address. */
bool proxy_net_inet_any_port(const struct sock_addr *sa);
bool proxy_net_loopback_addr(const struct sock_addr *sa);
/* 0 when p may bind host_fd to sa's port, -EACCES for a privileged TCP or
 * UDP port without CAP_NET_BIND_SERVICE (Linux's check, in guest terms). */
long proxy_net_bind_port_allowed(const struct proxy_process *p, int host_fd,
                                 const struct sock_addr *sa);
/* Binds host_fd to the run's next port (sa: the address, its port 0): 0
 * or -errno, as bind. */
long proxy_net_bind_det_port(struct proxy_process *p, int host_fd,
                             struct sock_addr *sa);
/* listen(), connect() or a send to an address on a socket never bound:
 * Linux would bind it to a port of its choosing; bind it to the run's
 * next port first (any address), so the peer sees the same port every
 * run. */
void proxy_net_bind_unbound_inet(struct proxy_process *p, int host_fd);
/* An address's port in place: a host port of the run's becomes its guest
 * port (own: the socket's own name; else only a peer on this host), a
 * guest port the run handed out its host port (bind_: a bind, which also
 * keeps the port from being handed out; else only towards this host). */
void proxy_net_inet_port_to_guest(struct proxy_world *w, struct sock_addr *sa,
                                  bool own);
void proxy_net_inet_port_to_host(struct proxy_world *w, struct sock_addr *sa,
                                 bool bind_);

/* ---- AF_UNIX autobind names (net/unix_name.c) ---------------------------- */
/* Binds AF_UNIX socket host_fd to the run's next autobind name (a guest's
 * bind of just the family): 0 or -errno, as bind. */
long proxy_net_unix_autobind(struct proxy_process *p, int host_fd);
/* An abstract name in place: a host name the run gave becomes the guest's
 * "\0%05x" (to_guest), a guest name the run handed out becomes the host's
 * (to_host); false (sa unchanged) for any other address. */
bool proxy_net_unix_name_to_guest(const struct proxy_process *p,
                                  struct sock_addr *sa);
bool proxy_net_unix_name_to_host(const struct proxy_process *p,
                                 struct sock_addr *sa);

#endif
