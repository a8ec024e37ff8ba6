/*
 * net.c - sockets: creation, addresses, connections, data with addresses
 * and ancillary data, options.
 *
 * A guest socket is a host socket held by hvrun in the guest fd table, as a
 * pipe is (host side always SOCK_CLOEXEC, the guest's bit in the table); the
 * host kernel does all the protocol work. What is translated here:
 *  - addresses move through bounded host buffers with Linux's addrlen rules
 *    (move_addr_to_kernel, move_addr_to_user);
 *  - an AF_UNIX path means what it means to the guest: a relative one is
 *    resolved against the guest cwd by switching hvrun's cwd to it for the
 *    one host call (hvrun is a single host thread), and a bind creates its
 *    inode under the guest umask (hvrun's own is 0);
 *  - SCM_RIGHTS carries host fds: guest fds become host fds on send, and
 *    received host fds are installed in the guest table;
 *  - option values holding a pointer or an fd are translated or refused;
 *  - netlink is NETLINK_ROUTE only and read-only (RTM_GET* requests).
 * Data moves between the host socket and guest memory directly
 * (vmm_as_host_iov), as io.c does for files.
 *
 * Waiting: one host thread runs every guest thread of the run, so a host
 * call that blocks stops them all. accept, connect, send* and recv* on a
 * blocking socket that is not ready park the guest thread on the socket
 * (proxy_block_on_fd) instead; the whole syscall runs again from the start
 * once it is ready, so nothing happens before the thread parks. With no
 * other guest thread, the scheduler then waits on the socket: the blocking
 * call Linux makes. Each call below says how it finds out "not ready"
 * and what it does differently from a blocking Linux call. SO_RCVTIMEO
 * and SO_SNDTIMEO become deadlines on detcore's clock (park_sock): when
 * one passes, the call fails with EAGAIN (connect: EINPROGRESS), or
 * returns the count so far when part moved (xfer_progress.c).
 *
 * Not yet behind detcore, so they can differ between runs: the source
 * port the host picks for a connect() to another host (a bind to port 0,
 * and an implicit one towards this host, take detcore's next port:
 * bind_det_port), netlink port ids (hvrun's host pid), and the
 * credentials of a peer outside the run. Peers inside
 * the run are guests (peercred.c).
 *
 * Under hvrun record and replay, a listen, a connect, a datagram send
 * with an address, a received datagram's source, accept's address,
 * getsockname and getpeername ask outside.c first: exchanges with peers
 * outside the run go through hvrun's relays (outside.c for TCP and
 * AF_UNIX streams, outside_udp.c for UDP, outside_accept.c for the
 * clients from outside a listener of the run accepts).
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "fs.h"
#include "io.h"
#include "net.h"
#include "internal.h"
#include "outside.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "det.h"

/* Linux's UIO_MAXIOV: the most segments a msghdr may have (-EMSGSIZE
 * above) and the most host iovecs one host call gets; also sendmmsg and
 * recvmmsg's cap on vlen. */
#define GUEST_IOV_MAX 1024
/* Linux's MAX_RW_COUNT: one transfer moves at most this much. */
#define RW_MAX_BYTES 0x7ffff000UL
/* Bounded host copies of option values and ancillary data. */
#define OPTVAL_MAX_BYTES 4096
#define CONTROL_MAX_BYTES 65536
#define NETLINK_SEND_MAX_BYTES 65536

/* Kernel constants without a userspace header. */
#define SOCK_TYPE_MASK 0xf
#define SOCK_TYPE_MAX (SOCK_PACKET + 1)
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76
#endif
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef TCP_ZEROCOPY_RECEIVE
#define TCP_ZEROCOPY_RECEIVE 35
#endif

/* The guest's struct iovec, msghdr and mmsghdr (x86-64 layouts). */
struct guest_iovec {
    uint64_t base;
    uint64_t len;
};

struct guest_msghdr {
    uint64_t name;
    int32_t namelen;
    uint32_t pad0;
    uint64_t iov;
    uint64_t iovlen;
    uint64_t control;
    uint64_t controllen;
    uint32_t flags;
    uint32_t pad1;
};

struct guest_mmsghdr {
    struct guest_msghdr hdr;
    uint32_t len;
    uint32_t pad;
};

_Static_assert(sizeof(struct guest_msghdr) == 56, "msghdr is not x86-64's");
_Static_assert(sizeof(struct guest_mmsghdr) == 64, "mmsghdr is not x86-64's");
_Static_assert(sizeof(struct cmsghdr) == 16, "cmsghdr is not x86-64's");

/* The host fd of a guest socket: -EBADF, or -ENOTSOCK for another file,
 * before any argument is looked at (sockfd_lookup comes first in Linux). */
static int sock_host_fd(struct proxy_process *p, uint64_t guest_fd)
{
    int host_fd = proxy_fd_host(&p->fds, (int)guest_fd);
    struct stat st;
    if (host_fd >= 0 && fstat(host_fd, &st) == 0 && !S_ISSOCK(st.st_mode))
        return -ENOTSOCK;
    return host_fd;
}

/* ---- waiting without blocking the host ----------------------------------- */

/*
 * Whether a call on a socket may wait: neither the socket (O_NONBLOCK) nor
 * the call (MSG_DONTWAIT) says not to. *status_flags gets F_GETFL's flags.
 */
static bool sock_may_wait(int host_fd, int flags, int *status_flags)
{
    if (flags & MSG_DONTWAIT)
        return false;
    *status_flags = fcntl(host_fd, F_GETFL);
    return *status_flags >= 0 && !(*status_flags & O_NONBLOCK);
}

/* The socket's poll bits for events right now (a failed look counts as
 * ready, leaving the answer to the call). */
static short sock_revents(int host_fd, short events)
{
    struct pollfd pfd = {.fd = host_fd, .events = events};
    return poll(&pfd, 1, 0) < 0 ? events : pfd.revents;
}

/* ---- creation ------------------------------------------------------------ */

static bool family_supported(int domain)
{
    return domain == AF_UNIX || domain == AF_INET || domain == AF_INET6 ||
           domain == AF_NETLINK;
}

/* socket() and socketpair() checks in Linux's order: flags, family range,
 * type range, then whether the family exists (here: is supported). */
static long socket_args_check(int domain, int type, int protocol)
{
    if (type & ~(SOCK_TYPE_MASK | SOCK_CLOEXEC | SOCK_NONBLOCK))
        return -EINVAL;
    if (domain < 0 || domain >= AF_MAX)
        return -EAFNOSUPPORT;
    if ((type & SOCK_TYPE_MASK) >= SOCK_TYPE_MAX)
        return -EINVAL;
    if (!family_supported(domain))
        return -EAFNOSUPPORT;
    if (domain == AF_NETLINK && protocol != NETLINK_ROUTE)
        return -EPROTONOSUPPORT;
    return 0;
}

static long sys_socket(struct proxy_process *p, const uint64_t a[6])
{
    int domain = (int)a[0], type = (int)a[1], protocol = (int)a[2];
    long r = socket_args_check(domain, type, protocol);
    if (r < 0)
        return r;
    int host_fd = socket(domain, type | SOCK_CLOEXEC, protocol);
    if (host_fd < 0)
        return -errno;
    return proxy_fd_install(&p->fds, host_fd, (type & SOCK_CLOEXEC) != 0, 0);
}

/* As pipe2: both fds exist only once sv is written, else both are undone. */
static long sys_socketpair(struct proxy_process *p, const uint64_t a[6])
{
    int domain = (int)a[0], type = (int)a[1], protocol = (int)a[2];
    long r = socket_args_check(domain, type, protocol);
    if (r < 0)
        return r;
    int host_fds[2];
    if (socketpair(domain, type | SOCK_CLOEXEC, protocol, host_fds) < 0)
        return -errno;
    bool cloexec = (type & SOCK_CLOEXEC) != 0;
    int fd0 = proxy_fd_install(&p->fds, host_fds[0], cloexec, 0);
    if (fd0 < 0) {
        close(host_fds[1]);
        return fd0;
    }
    int fd1 = proxy_fd_install(&p->fds, host_fds[1], cloexec, 0);
    if (fd1 < 0) {
        proxy_fd_close(&p->fds, fd0);
        return fd1;
    }
    int guest_fds[2] = {fd0, fd1};
    if (proxy_copy_out(p, a[3], guest_fds, sizeof(guest_fds)) < 0) {
        proxy_fd_close(&p->fds, fd0);
        proxy_fd_close(&p->fds, fd1);
        return -EFAULT;
    }
    return 0;
}

/* ---- addresses ----------------------------------------------------------- */

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

/* Linux's move_addr_to_kernel: 0 to sizeof(sockaddr_storage) bytes, the
 * length taken as an int. */
static long sock_addr_in(struct proxy_process *p, gva_t gva, uint64_t len_arg,
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

/* An AF_UNIX path the host reports (getsockname, getpeername, accept,
 * recvfrom) in the guest's terms: inside the private /tmp it is /tmp/...
 * again. The length follows the path (its NUL kept if it had one). */
static void unix_addr_to_guest(const struct proxy_process *p,
                               struct sock_addr *g, const struct sock_addr *h)
{
    *g = *h;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    if (h->len <= off || h->u.un.sun_family != AF_UNIX ||
        h->u.un.sun_path[0] != '/')
        return;
    size_t n = strnlen(h->u.un.sun_path, h->len - off);
    size_t m = proxy_tmp_unmap(p, g->u.un.sun_path, n,
                               sizeof(g->u.un.sun_path) - 1);
    if (m == n)
        return;
    g->u.un.sun_path[m] = '\0';
    g->len = (socklen_t)(off + m + (h->len > off + n ? 1 : 0));
}

/* Linux's move_addr_to_user: the guest's *addrlen is read after the call,
 * min(it, actual) bytes are copied and the actual length written back. */
static long sock_addr_out(struct proxy_process *p, gva_t addr_gva,
                          gva_t addrlen_gva, const struct sock_addr *host_sa)
{
    struct sock_addr guest_sa;
    unix_addr_to_guest(p, &guest_sa, host_sa);
    const struct sock_addr *sa = &guest_sa;
    int given;
    if (proxy_copy_in(p, &given, addrlen_gva, sizeof(given)) < 0)
        return -EFAULT;
    if (given < 0)
        return -EINVAL;
    size_t n = (size_t)given < sa->len ? (size_t)given : sa->len;
    if (n > 0 && proxy_copy_out(p, addr_gva, &sa->u, n) < 0)
        return -EFAULT;
    int actual = (int)sa->len;
    return proxy_copy_out(p, addrlen_gva, &actual, sizeof(actual)) < 0 ? -EFAULT
                                                                       : 0;
}

/* hvrun's host state changed around one host call naming an AF_UNIX path. */
struct path_ctx {
    int saved_cwd_fd; /* hvrun's cwd while the guest's is in place, or -1 */
    mode_t saved_umask;
    bool umask_set;
};

/* A filesystem AF_UNIX address (abstract names start with a NUL byte and
 * an address of just the family is an autobind: neither is a path). */
static bool unix_path_addr(const struct sock_addr *sa)
{
    return sa->len > offsetof(struct sockaddr_un, sun_path) &&
           sa->u.un.sun_family == AF_UNIX && sa->u.un.sun_path[0] != '\0';
}

/*
 * An absolute AF_UNIX path becomes the host's, as every guest path does
 * (proxy_path_rewrite: the private /tmp above all; a socket bound there
 * went to the host's /tmp, where the guest could not even unlink it). A
 * host path too long for sun_path is named from its directory: *dir_fd
 * gets an O_PATH fd on it and sun_path its last component.
 */
static long unix_path_to_host(struct proxy_process *p, struct sock_addr *sa,
                              int *dir_fd)
{
    *dir_fd = -1;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    char guest[sizeof(sa->u.un.sun_path) + 1], host[PROXY_PATH_MAX];
    size_t n = strnlen(sa->u.un.sun_path, sa->len - off);
    memcpy(guest, sa->u.un.sun_path, n);
    guest[n] = '\0';
    long r = proxy_path_rewrite(p, guest, host, sizeof(host));
    if (r < 0)
        return r;
    if (strcmp(host, guest) == 0)
        return 0;
    const char *name = host;
    size_t hn = strlen(host);
    if (hn >= sizeof(sa->u.un.sun_path)) {
        char *slash = strrchr(host, '/');
        *slash = '\0';
        *dir_fd = open(host[0] ? host : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (*dir_fd < 0)
            return -errno;
        name = slash + 1;
        hn = strlen(name);
    }
    memcpy(sa->u.un.sun_path, name, hn + 1);
    sa->len = (socklen_t)(off + hn + 1);
    return 0;
}

/*
 * Puts the guest's view in place for a host call on sa (NULL: no address):
 * an absolute path becomes the host's (unix_path_to_host); a relative one
 * needs the guest cwd as hvrun's cwd; a bind (creates) needs the guest
 * umask. path_ctx_leave undoes it.
 */
static long path_ctx_enter(struct proxy_process *p, struct sock_addr *sa,
                           bool creates, struct path_ctx *c)
{
    c->saved_cwd_fd = -1;
    c->umask_set = false;
    if (!sa || !unix_path_addr(sa))
        return 0;
    int dir_fd = -1;
    if (sa->u.un.sun_path[0] == '/') {
        long r = unix_path_to_host(p, sa, &dir_fd);
        if (r < 0)
            return r;
    }
    if (sa->u.un.sun_path[0] != '/') {
        c->saved_cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (c->saved_cwd_fd < 0) {
            long r = -errno;
            if (dir_fd >= 0)
                close(dir_fd);
            return r;
        }
        /* Needs search permission on the guest cwd, as the lookup would. */
        int to = dir_fd >= 0 ? dir_fd : p->cwd_fd;
        int moved = fchdir(to);
        if (dir_fd >= 0)
            close(dir_fd);
        if (moved < 0) {
            long r = -errno;
            close(c->saved_cwd_fd);
            c->saved_cwd_fd = -1;
            return r;
        }
    }
    if (creates) {
        c->saved_umask = umask(p->umask);
        c->umask_set = true;
    }
    return 0;
}

static void path_ctx_leave(struct proxy_process *p, const struct path_ctx *c)
{
    if (c->umask_set)
        umask(c->saved_umask);
    if (c->saved_cwd_fd < 0)
        return;
    /* hvrun resolves nothing against its own cwd, so a failure here (its
     * old cwd lost search permission) leaves it harmlessly elsewhere. */
    if (fchdir(c->saved_cwd_fd) < 0)
        proxy_log(p, 1, "net: restoring hvrun's cwd failed: %s",
                  strerror(errno));
    close(c->saved_cwd_fd);
}

/*
 * connect on a blocking socket without waiting in the host: the host
 * connect runs with O_NONBLOCK for the one call. A connection not made at
 * once (EINPROGRESS; EALREADY when the call runs again and it still is
 * not) parks the thread until the socket is writable. The call then runs
 * again, and on a socket that was connecting Linux's connect returns 0
 * once the connection is made, or its error. A Unix listener with a full
 * backlog says EAGAIN: the thread parks on its own socket (writable), so
 * it tries again on its next turn, until the listener accepts.
 */
/* Parks on a socket; SO_RCVTIMEO / SO_SNDTIMEO become a deadline on the
 * logical clock, after which the call fails with EAGAIN as on Linux. */
static long park_sock(struct proxy_process *p, int host_fd, short events)
{
    return proxy_block_on_fd_for(p, host_fd, events,
                                 proxy_sock_timeout_ns(host_fd, events));
}

static long connect_nowait(struct proxy_process *p, int host_fd,
                           const struct sock_addr *sa)
{
    int fl;
    if (!sock_may_wait(host_fd, 0, &fl))
        return proxy_host_result(connect(host_fd, &sa->u.sa, sa->len));
    bool nowait = fcntl(host_fd, F_SETFL, fl | O_NONBLOCK) == 0;
    long r = proxy_host_result(connect(host_fd, &sa->u.sa, sa->len));
    if (nowait)
        (void)fcntl(host_fd, F_SETFL, fl);
    if (nowait && (r == -EINPROGRESS || r == -EALREADY || r == -EAGAIN)) {
        r = park_sock(p, host_fd, POLLOUT);
        return r == -EAGAIN ? -EINPROGRESS : r; /* SO_SNDTIMEO passed */
    }
    return r;
}

/* bind and connect: fd, then address, then the host call. */
/* An AF_INET/AF_INET6 address with port 0 (the host would pick one). */
static bool inet_any_port(const struct sock_addr *sa)
{
    if (sa->u.sa.sa_family == AF_INET && sa->len >= sizeof(struct sockaddr_in))
        return ((const struct sockaddr_in *)&sa->u.ss)->sin_port == 0;
    if (sa->u.sa.sa_family == AF_INET6 &&
        sa->len >= sizeof(struct sockaddr_in6))
        return ((const struct sockaddr_in6 *)&sa->u.ss)->sin6_port == 0;
    return false;
}

static void set_port(struct sock_addr *sa, uint16_t port)
{
    if (sa->u.sa.sa_family == AF_INET)
        ((struct sockaddr_in *)&sa->u.ss)->sin_port = htons(port);
    else
        ((struct sockaddr_in6 *)&sa->u.ss)->sin6_port = htons(port);
}

/*
 * bind to port 0: the port comes from detcore (32768, 32769, ... in the
 * order of the run's binds) instead of the host's choice, which differs
 * between runs. A TCP socket gets SO_REUSEADDR for it (and keeps it: listen
 * checks again), so that the TIME_WAIT connections a previous run left on
 * the same port do not push this run to the next one; for TCP that allows
 * nothing else (two listeners on one port stay refused). A port the host
 * really has in use is skipped; after 64 such the host picks.
 */
#define PORT_TRIES 64

static long bind_det_port(struct proxy_process *p, int host_fd,
                          struct sock_addr *sa)
{
    int type = 0, on = 1;
    socklen_t tl = sizeof(type);
    if (getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
        type == SOCK_STREAM)
        (void)setsockopt(host_fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    for (int i = 0; i < PORT_TRIES; i++) {
        set_port(sa, det_port(p->det));
        long r = proxy_host_result(bind(host_fd, &sa->u.sa, sa->len));
        if (r != -EADDRINUSE && r != -EACCES)
            return r;
    }
    set_port(sa, 0);
    return proxy_host_result(bind(host_fd, &sa->u.sa, sa->len));
}

/* listen(), connect() or a send to an address on a socket never bound:
 * Linux would bind it to a port of its choosing; bind it to the run's next
 * port first (any address), so the peer sees the same port every run. */
static void bind_unbound_inet(struct proxy_process *p, int host_fd)
{
    struct sock_addr sa;
    memset(&sa, 0, sizeof(sa));
    sa.len = sizeof(sa.u.ss);
    if (getsockname(host_fd, &sa.u.sa, &sa.len) < 0 || !inet_any_port(&sa))
        return;
    (void)bind_det_port(p, host_fd, &sa);
}

/* 127.0.0.0/8, ::1 or ::ffff:127.x: a peer on this host (in the run, or
 * a local service). */
static bool loopback_addr(const struct sock_addr *sa)
{
    if (sa->u.sa.sa_family == AF_INET && sa->len >= sizeof(struct sockaddr_in))
        return (ntohl(((const struct sockaddr_in *)&sa->u.ss)->sin_addr.s_addr) >>
                24) == 127;
    if (sa->u.sa.sa_family == AF_INET6 &&
        sa->len >= sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a6 =
            &((const struct sockaddr_in6 *)&sa->u.ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a6) ||
               (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
    }
    return false;
}

/* The socket file a bind made, for --verify's undo (preserve.c); hvrun's
 * cwd is the guest's here, as the bind's was. */
static void journal_socket_file(struct proxy_process *p,
                                const struct sock_addr *sa)
{
    char path[sizeof(sa->u.un.sun_path) + 1];
    size_t n = sa->len - offsetof(struct sockaddr_un, sun_path);
    if (n > sizeof(sa->u.un.sun_path))
        n = sizeof(sa->u.un.sun_path);
    memcpy(path, sa->u.un.sun_path, n);
    path[n] = '\0';
    proxy_preserve_created(p, AT_FDCWD, path);
}

static long addr_call(struct proxy_process *p, const uint64_t a[6], bool bind_)
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    struct sock_addr sa;
    long r = sock_addr_in(p, a[1], a[2], &sa);
    if (r < 0)
        return r;
    /* nscd and systemd-userdb stay out of reach: lookups use /etc files */
    if (!bind_ && unix_path_addr(&sa) &&
        proxy_hermetic_socket_blocked(p, sa.u.un.sun_path,
                                      sa.len - offsetof(struct sockaddr_un,
                                                        sun_path)))
        return -ENOENT;
    struct path_ctx c;
    r = path_ctx_enter(p, &sa, bind_, &c);
    if (r < 0)
        return r;
    if (bind_)
        proxy_outside_before_bind(p);
    if (bind_ && inet_any_port(&sa)) {
        r = bind_det_port(p, host_fd, &sa);
    } else if (bind_) {
        r = proxy_host_result(bind(host_fd, &sa.u.sa, sa.len));
        if (r == 0 && unix_path_addr(&sa))
            journal_socket_file(p, &sa);
    }
    if (bind_ && r == 0) {
        proxy_outside_bound(p, host_fd); /* record/replay: a datagram server */
    } else if (!bind_) {
        struct sock_addr via;
        bool relayed = proxy_outside_connect(p, host_fd, &sa.u.sa, sa.len,
                                             &via.u.ss, &via.len, &r);
        if (relayed && r < 0)
            goto leave;
        if (relayed)
            sa = via; /* to hvrun's relay, which reaches the peer */
        /* Only towards this host: there a TIME_WAIT left by an earlier run
         * on the same ports may be reused (tcp_tw_reuse); towards a remote
         * peer it would make connect fail, and the host's choice is kept. */
        if (loopback_addr(&sa))
            bind_unbound_inet(p, host_fd);
        r = connect_nowait(p, host_fd, &sa);
        if (relayed)
            proxy_outside_connected(p, host_fd);
    }
leave:
    path_ctx_leave(p, &c);
    return r;
}

static long sys_bind(struct proxy_process *p, const uint64_t a[6])
{
    return addr_call(p, a, true);
}

static long sys_connect(struct proxy_process *p, const uint64_t a[6])
{
    return addr_call(p, a, false);
}

static long sys_listen(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    bind_unbound_inet(p, host_fd);
    long r;
    if (proxy_outside_listen(p, host_fd, (int)a[1], &r))
        return r; /* record/replay: clients from outside are relayed */
    return proxy_host_result(listen(host_fd, (int)a[1]));
}

static long sys_shutdown(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    return proxy_host_result(shutdown(host_fd, (int)a[1]));
}

/* Like Linux, a fault writing the peer address drops the new connection
 * (it was already taken off the queue) and returns -EFAULT. A blocking
 * socket with no connection queued (not readable) parks the thread,
 * unless it is not listening: Linux's accept says EINVAL at once (a
 * connected socket never becomes acceptable). */
static long park_accept(struct proxy_process *p, int host_fd)
{
    int listening = 1;
    socklen_t len = sizeof(listening);
    if (getsockopt(host_fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) ==
            0 && !listening)
        return -EINVAL;
    return park_sock(p, host_fd, POLLIN);
}

static long do_accept(struct proxy_process *p, const uint64_t a[6], int flags)
{
    if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
        return -EINVAL;
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    int fl;
    if (sock_may_wait(host_fd, 0, &fl) && sock_revents(host_fd, POLLIN) == 0)
        return park_accept(p, host_fd);
    gva_t addr = a[1];
    struct sock_addr sa = {.len = sizeof(sa.u)};
    int new_host_fd =
        accept4(host_fd, addr ? &sa.u.sa : NULL, addr ? &sa.len : NULL,
                (flags & SOCK_NONBLOCK) | SOCK_CLOEXEC);
    if (new_host_fd < 0)
        return -errno;
    int guest_fd =
        proxy_fd_install(&p->fds, new_host_fd, (flags & SOCK_CLOEXEC) != 0, 0);
    if (guest_fd < 0 || !addr)
        return guest_fd;
    proxy_outside_accepted_peer(p->world, &sa.u.ss, &sa.len);
    long r = sock_addr_out(p, addr, a[2], &sa);
    if (r < 0) {
        proxy_fd_close(&p->fds, guest_fd);
        return r;
    }
    return guest_fd;
}

static long sys_accept(struct proxy_process *p, const uint64_t a[6])
{
    return do_accept(p, a, 0);
}

static long sys_accept4(struct proxy_process *p, const uint64_t a[6])
{
    return do_accept(p, a, (int)a[3]);
}

static long sock_name(struct proxy_process *p, const uint64_t a[6], bool peer)
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    struct sock_addr sa = {.len = sizeof(sa.u)};
    if (peer ? proxy_outside_peer(p->world, host_fd, &sa.u.ss, &sa.len)
             : proxy_outside_sockname(p->world, host_fd, &sa.u.ss, &sa.len))
        return sock_addr_out(p, a[1], a[2], &sa);
    int r = peer ? getpeername(host_fd, &sa.u.sa, &sa.len)
                 : getsockname(host_fd, &sa.u.sa, &sa.len);
    if (r < 0)
        return -errno;
    return sock_addr_out(p, a[1], a[2], &sa);
}

static long sys_getsockname(struct proxy_process *p, const uint64_t a[6])
{
    return sock_name(p, a, false);
}

static long sys_getpeername(struct proxy_process *p, const uint64_t a[6])
{
    return sock_name(p, a, true);
}

/* ---- messages: the host side of one guest message ------------------------ */

/* One guest message as a host sendmsg/recvmsg takes it. */
struct host_msg {
    struct msghdr msg;
    struct sock_addr name;
    struct iovec *iov;      /* GUEST_IOV_MAX entries */
    unsigned char *control; /* msg.msg_controllen bytes, or NULL */
    size_t wanted_bytes;    /* what the guest's segments ask to move */
    size_t covered_bytes;   /* how much of that is mapped with the access */
};

static void host_msg_init(struct host_msg *hm) { memset(hm, 0, sizeof(*hm)); }

static void host_msg_free(struct host_msg *hm)
{
    free(hm->iov);
    free(hm->control);
}

/* Host iovecs for the guest segments in order, up to RW_MAX_BYTES in all
 * (Linux clamps there), stopping at the first byte not mapped with prot. */
static long segments_map(struct proxy_process *p,
                         const struct guest_iovec *giov, size_t cnt, int prot,
                         struct host_msg *hm)
{
    hm->iov = malloc(GUEST_IOV_MAX * sizeof(*hm->iov));
    if (!hm->iov)
        return -ENOMEM;
    int n = 0;
    size_t left = RW_MAX_BYTES;
    for (size_t i = 0; i < cnt && left > 0 && n < GUEST_IOV_MAX; i++) {
        size_t len = giov[i].len < left ? giov[i].len : left;
        if (len == 0)
            continue;
        size_t covered;
        n += vmm_as_host_iov(p->as, giov[i].base, len, prot, hm->iov + n,
                             GUEST_IOV_MAX - n, &covered);
        hm->wanted_bytes += len;
        hm->covered_bytes += covered;
        left -= len;
        if (covered < len)
            break;
    }
    hm->msg.msg_iov = hm->iov;
    hm->msg.msg_iovlen = (size_t)n;
    return 0;
}

/* The guest's msg_iov array: more than UIO_MAXIOV segments is -EMSGSIZE,
 * a length negative as ssize_t -EINVAL (Linux's import_iovec). */
static long msg_iov_in(struct proxy_process *p, gva_t vec, uint64_t cnt,
                       int prot, struct host_msg *hm)
{
    if (cnt > GUEST_IOV_MAX)
        return -EMSGSIZE;
    struct guest_iovec *giov = malloc((cnt ? cnt : 1) * sizeof(*giov));
    if (!giov)
        return -ENOMEM;
    long r = 0;
    if (cnt > 0 && proxy_copy_in(p, giov, vec, cnt * sizeof(*giov)) < 0)
        r = -EFAULT;
    for (uint64_t i = 0; r == 0 && i < cnt; i++) {
        if ((int64_t)giov[i].len < 0)
            r = -EINVAL;
    }
    if (r == 0)
        r = segments_map(p, giov, (size_t)cnt, prot, hm);
    free(giov);
    return r;
}

/*
 * Guest buffers only partly mapped. A send is -EFAULT: Linux copies the
 * data into a packet (or a stream chunk) before queueing it, and a fault
 * there fails it whole. A receive fills the mapped prefix, as Linux copies
 * up to the first fault: only when the data did not fit there (see
 * recv_fault) does it fail; with nothing mapped it fails at once.
 */
static long send_cover_check(const struct host_msg *hm)
{
    return hm->covered_bytes < hm->wanted_bytes ? -EFAULT : 0;
}

static long recv_cover_check(const struct host_msg *hm)
{
    return hm->wanted_bytes > 0 && hm->covered_bytes == 0 ? -EFAULT : 0;
}

/* After a receive into a shortened buffer: a datagram cut at the unmapped
 * byte is one Linux would have faulted on (and dropped). */
static bool recv_fault(const struct host_msg *hm)
{
    return hm->covered_bytes < hm->wanted_bytes &&
           (hm->msg.msg_flags & MSG_TRUNC);
}

/* ---- ancillary data ------------------------------------------------------ */

/* The cmsg header at off in buf[0..len), walked as Linux's
 * for_each_cmsghdr does, or NULL past the end. */
static struct cmsghdr *cmsg_at(unsigned char *buf, size_t len, size_t off)
{
    if (off > len || len - off < sizeof(struct cmsghdr))
        return NULL;
    return (struct cmsghdr *)(buf + off);
}

/* Linux's CMSG_OK: the whole cmsg lies within the room left. */
static bool cmsg_fits(const struct cmsghdr *c, size_t room)
{
    return c->cmsg_len >= sizeof(*c) && c->cmsg_len <= room;
}

static bool cmsg_is_rights(const struct cmsghdr *c)
{
    return c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS;
}

static size_t cmsg_rights_count(const struct cmsghdr *c)
{
    return (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
}

/* Sending: SCM_RIGHTS names guest fds; the host needs hvrun's fds for
 * them. A cmsg that does not fit is -EINVAL, an fd not open -EBADF. */
static long rights_to_host(struct proxy_process *p, struct host_msg *hm)
{
    size_t len = hm->msg.msg_controllen;
    struct cmsghdr *c;
    for (size_t off = 0; (c = cmsg_at(hm->control, len, off));
         off += CMSG_ALIGN(c->cmsg_len)) {
        if (!cmsg_fits(c, len - off))
            return -EINVAL;
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            /* The guest's own credentials are hvrun's on the host (the
             * kernel checks them); the receiver maps them back. */
            struct ucred uc;
            memcpy(&uc, CMSG_DATA(c), sizeof(uc));
            if (uc.pid == p->pid)
                uc.pid = getpid();
            if (uc.uid == p->euid || uc.uid == p->ruid)
                uc.uid = geteuid();
            if (uc.gid == p->egid || uc.gid == p->rgid)
                uc.gid = getegid();
            memcpy(CMSG_DATA(c), &uc, sizeof(uc));
            continue;
        }
        if (!cmsg_is_rights(c))
            continue;
        int *fds = (int *)CMSG_DATA(c);
        for (size_t i = 0; i < cmsg_rights_count(c); i++) {
            int host_fd = proxy_fd_host(&p->fds, fds[i]);
            if (host_fd < 0)
                return -EBADF;
            fds[i] = host_fd;
        }
    }
    return 0;
}

/*
 * Receiving: the host put the passed fds in hvrun's table (close-on-exec,
 * MSG_CMSG_CLOEXEC is always asked); each is installed in the guest table
 * and its guest number written in place. As Linux's scm_detach_fds, the
 * first fd that cannot be installed (EMFILE) ends the list: the rest are
 * closed, the cmsg shrinks to the installed ones (or goes, with none) and
 * MSG_CTRUNC is set.
 */
static void rights_to_guest(struct proxy_process *p, struct host_msg *hm,
                            bool cloexec)
{
    size_t len = hm->msg.msg_controllen, new_len = len;
    bool full = false, truncated = false;
    struct cmsghdr *c;
    for (size_t off = 0, next;
         (c = cmsg_at(hm->control, len, off)) && cmsg_fits(c, len - off);
         off = next) {
        next = off + CMSG_ALIGN(c->cmsg_len);
        if (!cmsg_is_rights(c))
            continue;
        int *fds = (int *)CMSG_DATA(c);
        size_t n = cmsg_rights_count(c), installed = 0;
        for (size_t i = 0; i < n; i++) {
            if (full) {
                close(fds[i]);
                continue;
            }
            int guest_fd = proxy_fd_install(&p->fds, fds[i], cloexec, 0);
            if (guest_fd < 0)
                full = true; /* the install closed the host fd */
            else
                fds[installed++] = guest_fd;
        }
        if (installed == n || truncated)
            continue;
        truncated = true;
        if (installed == 0) {
            new_len = off;
        } else {
            c->cmsg_len = CMSG_LEN(installed * sizeof(int));
            size_t end = off + CMSG_SPACE(installed * sizeof(int));
            new_len = end < len ? end : len;
        }
    }
    if (truncated) {
        hm->msg.msg_controllen = new_len;
        hm->msg.msg_flags |= MSG_CTRUNC;
    }
}

/* SCM_CREDENTIALS received: a sender inside the run is a guest. */
static void creds_to_guest(struct proxy_process *p, int host_fd,
                           struct host_msg *hm)
{
    size_t len = hm->msg.msg_controllen;
    struct cmsghdr *c;
    for (size_t off = 0;
         (c = cmsg_at(hm->control, len, off)) && cmsg_fits(c, len - off);
         off += CMSG_ALIGN(c->cmsg_len)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS ||
            c->cmsg_len < CMSG_LEN(sizeof(struct ucred)))
            continue;
        struct ucred uc;
        memcpy(&uc, CMSG_DATA(c), sizeof(uc));
        proxy_peercred_to_guest(p, host_fd, &uc);
        memcpy(CMSG_DATA(c), &uc, sizeof(uc));
    }
}

/* Closes the guest fds rights_to_guest installed (the guest never saw
 * them: writing the message back failed). */
static void rights_undo(struct proxy_process *p, struct host_msg *hm)
{
    size_t len = hm->msg.msg_controllen;
    struct cmsghdr *c;
    for (size_t off = 0;
         (c = cmsg_at(hm->control, len, off)) && cmsg_fits(c, len - off);
         off += CMSG_ALIGN(c->cmsg_len)) {
        if (!cmsg_is_rights(c))
            continue;
        const int *fds = (const int *)CMSG_DATA(c);
        for (size_t i = 0; i < cmsg_rights_count(c); i++)
            proxy_fd_close(&p->fds, fds[i]);
    }
}

/* ---- sending ------------------------------------------------------------- */

/*
 * Netlink sockets are read-only: every message a send carries must be an
 * RTM_GET* request. This is what Linux tells a process without
 * CAP_NET_ADMIN (rtnetlink_rcv_msg: kind != 2 is EPERM), here as the
 * send's result instead of an NLMSG_ERROR reply. Messages are walked as
 * netlink_rcv_skb walks them; control types (< RTM_BASE) are ignored there.
 */
static long netlink_send_check(int host_fd, const struct host_msg *hm)
{
    int domain;
    socklen_t optlen = sizeof(domain);
    if (getsockopt(host_fd, SOL_SOCKET, SO_DOMAIN, &domain, &optlen) < 0 ||
        domain != AF_NETLINK)
        return 0;
    size_t len = hm->covered_bytes;
    if (len > NETLINK_SEND_MAX_BYTES)
        return -EMSGSIZE;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf)
        return -ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < hm->msg.msg_iovlen && at < len; i++) {
        size_t n =
            hm->iov[i].iov_len < len - at ? hm->iov[i].iov_len : len - at;
        memcpy(buf + at, hm->iov[i].iov_base, n);
        at += n;
    }
    long r = 0;
    for (size_t off = 0; len - off >= NLMSG_HDRLEN;) {
        struct nlmsghdr h;
        memcpy(&h, buf + off, sizeof(h));
        if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - off)
            break;
        if (h.nlmsg_type >= RTM_BASE && ((h.nlmsg_type - RTM_BASE) & 3) != 2) {
            r = -EPERM;
            break;
        }
        size_t step = NLMSG_ALIGN(h.nlmsg_len);
        off += step < len - off ? step : len - off;
    }
    free(buf);
    return r;
}

/*
 * The host send of a prepared message. The host never raises SIGPIPE
 * (MSG_NOSIGNAL always); the guest gets its own unless it asked not to.
 * On a blocking socket the host send has MSG_DONTWAIT, and EAGAIN (nothing
 * sent) parks the thread until the socket is writable. Simplification: a
 * send larger than the room in the socket buffer is short on a stream
 * socket; sendto and sendmsg then carry on (send_completing), sendmmsg
 * returns the short count. A later sendmmsg entry (may_park false)
 * cannot park, since the call would run again whole: while another guest
 * thread can run it gets -EAGAIN (the batch ends there), else it waits in
 * the host as before.
 */
static long send_host(struct proxy_process *p, int host_fd, struct host_msg *hm,
                      int flags, bool may_park)
{
    long r = send_cover_check(hm);
    if (r == 0)
        r = netlink_send_check(host_fd, hm);
    if (r < 0)
        return r;
    sa_family_t to = hm->msg.msg_name ? hm->name.u.sa.sa_family : AF_UNSPEC;
    if (to == AF_INET || to == AF_INET6)
        bind_unbound_inet(p, host_fd);
    struct path_ctx c;
    r = path_ctx_enter(p, hm->msg.msg_name ? &hm->name : NULL, false, &c);
    if (r < 0)
        return r;
    if (hm->msg.msg_name)
        hm->msg.msg_namelen = hm->name.len; /* the host's name for it */
    /* record/replay: a datagram to outside goes by hvrun's relay (an
     * AF_UNIX name is looked up from the guest's cwd, so this is inside
     * the path's context) */
    if ((to == AF_INET || to == AF_INET6 || to == AF_UNIX) &&
        proxy_outside_dgram_route(p, host_fd, &hm->name.u.ss, &hm->name.len,
                                  &r)) {
        if (r < 0) {
            path_ctx_leave(p, &c);
            return r;
        }
        hm->msg.msg_namelen = hm->name.len;
    }
    int host_flags = flags | MSG_NOSIGNAL, fl;
    bool nowait = sock_may_wait(host_fd, flags, &fl) &&
                  (may_park || proxy_others_runnable(p));
    if (nowait)
        host_flags |= MSG_DONTWAIT;
    r = proxy_host_result(sendmsg(host_fd, &hm->msg, host_flags));
    path_ctx_leave(p, &c);
    if (nowait && may_park && r == -EAGAIN)
        return park_sock(p, host_fd, POLLOUT);
    return (flags & MSG_NOSIGNAL) ? r : proxy_epipe_signal(p, r);
}

/* Ancillary data to send: over INT_MAX is -ENOBUFS as in Linux, and so is
 * more than hvrun's bound (Linux's own is optmem_max, 20 KiB to 128 KiB). */
static long control_send_in(struct proxy_process *p,
                            const struct guest_msghdr *gm, struct host_msg *hm)
{
    if (gm->controllen == 0)
        return 0;
    if (gm->controllen > CONTROL_MAX_BYTES)
        return -ENOBUFS;
    hm->control = malloc(gm->controllen);
    if (!hm->control)
        return -ENOMEM;
    if (proxy_copy_in(p, hm->control, gm->control, gm->controllen) < 0)
        return -EFAULT;
    hm->msg.msg_control = hm->control;
    hm->msg.msg_controllen = gm->controllen;
    return rights_to_host(p, hm);
}

/* Linux's msg_namelen: 0 without msg_name (checked after that), negative
 * -EINVAL, oversized clamped. */
static long msg_namelen(const struct guest_msghdr *gm)
{
    if (!gm->name)
        return 0;
    if (gm->namelen < 0)
        return -EINVAL;
    return (size_t)gm->namelen < sizeof(struct sockaddr_storage)
               ? gm->namelen
               : (long)sizeof(struct sockaddr_storage);
}

/* A guest msghdr to send, in Linux's order: name, segments, ancillary
 * data. */
static long msg_send_in(struct proxy_process *p, const struct guest_msghdr *gm,
                        struct host_msg *hm)
{
    long namelen = msg_namelen(gm);
    if (namelen < 0)
        return namelen;
    if (namelen > 0) {
        long r = sock_addr_in(p, gm->name, (uint64_t)namelen, &hm->name);
        if (r < 0)
            return r;
        hm->msg.msg_name = &hm->name.u;
        hm->msg.msg_namelen = hm->name.len;
    }
    long r = msg_iov_in(p, gm->iov, gm->iovlen, PROT_READ, hm);
    return r < 0 ? r : control_send_in(p, gm, hm);
}

/* Drops the first `skip` bytes of a prepared message (the part of a
 * stream send that went before the thread parked). Ancillary data went
 * with the first part, so it is not sent again. */
static void host_msg_skip(struct host_msg *hm, size_t skip)
{
    if (skip == 0)
        return;
    hm->msg.msg_control = NULL;
    hm->msg.msg_controllen = 0;
    while (skip > 0 && hm->msg.msg_iovlen > 0) {
        struct iovec *v = hm->msg.msg_iov;
        if (v->iov_len > skip) {
            v->iov_base = (char *)v->iov_base + skip;
            v->iov_len -= skip;
            return;
        }
        skip -= v->iov_len;
        hm->msg.msg_iov++;
        hm->msg.msg_iovlen--;
    }
}

/* sendmsg for the guest msghdr at msg_gva, from byte `skip` on; also each
 * sendmmsg entry (skip 0). *total is what the whole message asks to send. */
static long send_one(struct proxy_process *p, int host_fd, gva_t msg_gva,
                     int flags, bool may_park, uint64_t skip, uint64_t *total)
{
    struct guest_msghdr gm;
    if (proxy_copy_in(p, &gm, msg_gva, sizeof(gm)) < 0)
        return -EFAULT;
    struct host_msg hm;
    host_msg_init(&hm);
    long r = msg_send_in(p, &gm, &hm);
    *total = hm.wanted_bytes;
    if (r == 0 && skip > hm.wanted_bytes)
        r = -EFAULT; /* the message changed under a parked send */
    if (r == 0) {
        host_msg_skip(&hm, skip);
        r = send_host(p, host_fd, &hm, flags, may_park);
    }
    host_msg_free(&hm);
    return r;
}

/* sendto(fd, buf, len, flags, addr, addrlen): addrlen is checked only with
 * an address, and strictly (no clamping, unlike msg_namelen). */
/* One host send of [buf+skip, buf+len) with sendto's address and flags. */
static long sendto_once(struct proxy_process *p, int host_fd,
                        const uint64_t a[6], uint64_t skip, uint64_t *total)
{
    struct host_msg hm;
    host_msg_init(&hm);
    long r = 0;
    *total = a[2];
    if (a[4] != 0) {
        r = sock_addr_in(p, a[4], a[5], &hm.name);
        hm.msg.msg_name = &hm.name.u;
        hm.msg.msg_namelen = hm.name.len;
    }
    struct guest_iovec seg = {a[1] + skip, a[2] - skip};
    if (r == 0)
        r = segments_map(p, &seg, 1, PROT_READ, &hm);
    if (r == 0)
        r = send_host(p, host_fd, &hm, (int)a[3], true);
    host_msg_free(&hm);
    return r;
}

static long sendmsg_once(struct proxy_process *p, int host_fd,
                         const uint64_t a[6], uint64_t skip, uint64_t *total)
{
    return send_one(p, host_fd, a[1], (int)a[2], true, skip, total);
}

/* Whether a send on host_fd should go on until all is sent, as a blocking
 * stream send does on Linux. */
static bool send_completes(int host_fd, int flags)
{
    int type = 0;
    socklen_t tl = sizeof(type);
    int fl = fcntl(host_fd, F_GETFL);
    return !(flags & MSG_DONTWAIT) && fl >= 0 && !(fl & O_NONBLOCK) &&
           getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
           type == SOCK_STREAM;
}

/*
 * A blocking stream send (send, sendto, sendmsg) returns only when
 * everything is sent (or on an error, with the count so far). When the
 * peer's buffer fills, the thread parks until the socket is writable and
 * the call runs again from where it stopped (the progress is kept with the
 * thread: xfer_progress.c), so a guest peer can read meanwhile; a signal
 * or SO_SNDTIMEO that ends the wait makes the count so far the result.
 * `once` sends from a byte offset and says the whole length.
 */
typedef long (*send_once_fn)(struct proxy_process *p, int host_fd,
                             const uint64_t a[6], uint64_t skip,
                             uint64_t *total);

static long send_completing(struct proxy_process *p, const uint64_t a[6],
                            int flags, send_once_fn once)
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    uint64_t done = proxy_xfer_resume(p), total = 0;
    long r = once(p, host_fd, a, done, &total);
    if (r == PROXY_RET_BLOCK) {
        proxy_xfer_keep(p, done); /* what was sent before this wait */
        return r;
    }
    if (r < 0)
        return done ? (long)done : r;
    done += (uint64_t)r;
    if (proxy_xfer_can_keep(p) && done < total && r > 0 &&
        send_completes(host_fd, flags))
        return proxy_xfer_park(p, done, host_fd, POLLOUT,
                               proxy_sock_timeout_ns(host_fd, POLLOUT));
    return (long)done;
}

static long sys_sendto(struct proxy_process *p, const uint64_t a[6])
{
    return send_completing(p, a, (int)a[3], sendto_once);
}

static long sys_sendmsg(struct proxy_process *p, const uint64_t a[6])
{
    return send_completing(p, a, (int)a[2], sendmsg_once);
}

/* Linux caps vlen at UIO_MAXIOV; after a failure the count sent so far is
 * the result, if any was. Only the first entry may park the thread (the
 * call runs again whole): see send_host for a later one. */
static long sys_sendmmsg(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    unsigned int vlen = (unsigned int)a[2];
    if (vlen > GUEST_IOV_MAX)
        vlen = GUEST_IOV_MAX;
    long r = 0;
    unsigned int done = 0;
    while (done < vlen) {
        gva_t entry = a[1] + (uint64_t)done * sizeof(struct guest_mmsghdr);
        uint64_t total;
        r = send_one(p, host_fd, entry, (int)a[3], done == 0, 0, &total);
        if (r < 0)
            break;
        uint32_t sent = (uint32_t)r;
        if (proxy_copy_out(p, entry + offsetof(struct guest_mmsghdr, len),
                           &sent, sizeof(sent)) < 0) {
            r = -EFAULT;
            break;
        }
        done++;
    }
    return done > 0 ? (long)done : r;
}

/* ---- receiving ----------------------------------------------------------- */

/* A guest msghdr to receive into. The name buffer is used only when the
 * guest gave one with a length; the control buffer is bounded (what the
 * kernel produces is far smaller). */
static long msg_recv_in(struct proxy_process *p, const struct guest_msghdr *gm,
                        struct host_msg *hm)
{
    long namelen = msg_namelen(gm);
    if (namelen < 0)
        return namelen;
    if (namelen > 0) {
        hm->msg.msg_name = &hm->name.u;
        hm->msg.msg_namelen = sizeof(hm->name.u);
    }
    long r = msg_iov_in(p, gm->iov, gm->iovlen, PROT_WRITE, hm);
    if (r < 0)
        return r;
    size_t ctl =
        gm->controllen < CONTROL_MAX_BYTES ? gm->controllen : CONTROL_MAX_BYTES;
    if (ctl > 0) {
        hm->control = calloc(1, ctl);
        if (!hm->control)
            return -ENOMEM;
        hm->msg.msg_control = hm->control;
        hm->msg.msg_controllen = ctl;
    }
    return 0;
}

/*
 * Writes a received message back as Linux does: the ancillary data, the
 * name (min(given, actual) bytes, the actual length into msg_namelen, only
 * when msg_name is set), msg_flags and the used msg_controllen. A fault
 * closes the fds just passed in and is -EFAULT (the data is gone, as in
 * Linux).
 */
static long msg_recv_out(struct proxy_process *p, gva_t msg_gva,
                         const struct guest_msghdr *gm, struct host_msg *hm,
                         int flags)
{
    rights_to_guest(p, hm, (flags & MSG_CMSG_CLOEXEC) != 0);
    /* The host saw MSG_CMSG_CLOEXEC always; the guest sees its own. */
    uint32_t out_flags = ((uint32_t)hm->msg.msg_flags & ~MSG_CMSG_CLOEXEC) |
                         ((uint32_t)flags & MSG_CMSG_CLOEXEC);
    uint64_t controllen = hm->msg.msg_controllen;
    bool ok = controllen == 0 ||
              proxy_copy_out(p, gm->control, hm->control, controllen) == 0;
    if (ok && gm->name) {
        hm->name.len = hm->msg.msg_name ? hm->msg.msg_namelen : 0;
        struct sock_addr host_name = hm->name;
        unix_addr_to_guest(p, &hm->name, &host_name);
        size_t given = (size_t)msg_namelen(gm);
        size_t n = given < hm->name.len ? given : hm->name.len;
        int32_t actual = (int32_t)hm->name.len;
        ok = (n == 0 || proxy_copy_out(p, gm->name, &hm->name.u, n) == 0) &&
             proxy_copy_out(p, msg_gva + offsetof(struct guest_msghdr, namelen),
                            &actual, sizeof(actual)) == 0;
    }
    ok = ok &&
         proxy_copy_out(p, msg_gva + offsetof(struct guest_msghdr, flags),
                        &out_flags, sizeof(out_flags)) == 0 &&
         proxy_copy_out(p, msg_gva + offsetof(struct guest_msghdr, controllen),
                        &controllen, sizeof(controllen)) == 0;
    if (!ok) {
        rights_undo(p, hm);
        return -EFAULT;
    }
    return 0;
}

/*
 * MSG_WAITALL on a blocking socket waits for the whole length, which
 * MSG_DONTWAIT would cut short, so the host receive is made without it
 * once it will not wait: when the socket is readable and, while another
 * guest thread lives (running or waiting: a sleeping sender too), a stream
 * socket holds wanted_bytes (or its peer is done sending). With no other
 * guest thread alive only the outside can send the rest, and a readable
 * socket is received from at once, the rest waited for in the host.
 */
static bool waitall_ready(struct proxy_process *p, int host_fd,
                          size_t wanted_bytes)
{
    short rev = sock_revents(host_fd, POLLIN | POLLRDHUP);
    if (rev == 0)
        return false;
    if ((rev & (POLLRDHUP | POLLHUP | POLLERR)) || !proxy_others_alive(p))
        return true;
    int type, queued;
    socklen_t len = sizeof(type);
    if (getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
        type != SOCK_STREAM) /* waits only on stream sockets */
        return true;
    return ioctl(host_fd, FIONREAD, &queued) < 0 || queued < 0 ||
           (size_t)queued >= wanted_bytes;
}

/* Drops the first skip bytes of msg's segments (the host iovecs, which
 * the caller owns). */
static void msg_iov_skip(struct msghdr *msg, size_t skip)
{
    while (skip > 0 && msg->msg_iovlen > 0) {
        struct iovec *v = msg->msg_iov;
        if (v->iov_len > skip) {
            v->iov_base = (char *)v->iov_base + skip;
            v->iov_len -= skip;
            return;
        }
        skip -= v->iov_len;
        msg->msg_iov++;
        msg->msg_iovlen--;
    }
}

/* Whether a MSG_WAITALL receive can be made in parts (recv_waitall): on a
 * stream socket, without a peek or ancillary data to receive (which a
 * part would take and a later part not give back). */
static bool waitall_in_parts(int host_fd, const struct msghdr *msg, int flags)
{
    int type;
    socklen_t len = sizeof(type);
    return !(flags & MSG_PEEK) && msg->msg_controllen == 0 &&
           getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
           type == SOCK_STREAM;
}

/*
 * MSG_WAITALL on a blocking stream socket, in parts: what is there is
 * received without waiting, and the thread parks with the count kept
 * (xfer_progress.c) until more arrives, so the sender (a guest too, whose
 * data may not fit the socket's buffer at once) can run. As in Linux's
 * tcp_recvmsg, end of file, an error, a signal or SO_RCVTIMEO ends the
 * call with the count so far, if any.
 */
static long recv_waitall(struct proxy_process *p, int host_fd,
                         struct msghdr *msg, int flags, size_t wanted_bytes)
{
    uint64_t done = proxy_xfer_resume(p);
    if (done >= wanted_bytes)
        done = 0; /* the call changed under the parked one */
    msg_iov_skip(msg, done);
    long r = proxy_host_result(
        recvmsg(host_fd, msg, (flags & ~MSG_WAITALL) | MSG_DONTWAIT));
    if (r > 0)
        done += (uint64_t)r;
    if (r == 0 || done == wanted_bytes || (r < 0 && r != -EAGAIN) ||
        (!proxy_xfer_can_keep(p) && done > 0))
        return done > 0 ? (long)done : r;
    return proxy_xfer_park(p, done, host_fd, POLLIN,
                           proxy_sock_timeout_ns(host_fd, POLLIN));
}

/* A MSG_WAITALL | MSG_PEEK receive on a stream socket without ancillary
 * data: peeked bytes stay queued, so each run peeks from the start what
 * is there and parks with that count kept, which a signal or SO_RCVTIMEO
 * makes the result (the bytes are in the buffers): Linux's tcp_recvmsg
 * and unix_stream_read_generic return what they peeked so far. */
static bool waitall_peek_in_parts(int host_fd, const struct msghdr *msg,
                                  int flags)
{
    int type;
    socklen_t len = sizeof(type);
    return (flags & MSG_PEEK) && msg->msg_controllen == 0 &&
           getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
           type == SOCK_STREAM;
}

static long recv_waitall_peek(struct proxy_process *p, int host_fd,
                              struct msghdr *msg, int flags,
                              size_t wanted_bytes)
{
    proxy_xfer_forget(p); /* nothing was taken: peek again from the start */
    long r = proxy_host_result(
        recvmsg(host_fd, msg, (flags & ~MSG_WAITALL) | MSG_DONTWAIT));
    /* unix_stream_read_generic's peek stops at the end of the queue: it
     * waits only while nothing is there, whatever MSG_WAITALL asks. */
    int domain;
    socklen_t len = sizeof(domain);
    if (r > 0 && getsockopt(host_fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
        domain == AF_UNIX)
        return r;
    if (r == 0 || (r > 0 && (size_t)r >= wanted_bytes) ||
        (r < 0 && r != -EAGAIN) || (r > 0 && !proxy_xfer_can_keep(p)))
        return r;
    /* What was peeked stays readable: wait for more, not for POLLIN. */
    return proxy_xfer_park_peek(p, r > 0 ? (uint64_t)r : 0, host_fd,
                                proxy_sock_timeout_ns(host_fd, POLLIN));
}

/*
 * The host receive. On a blocking socket it has MSG_DONTWAIT, and EAGAIN
 * (nothing there) parks the thread until the socket is readable. As in
 * send_host, a later recvmmsg entry (may_park false) gets -EAGAIN while
 * another thread can run, else waits in the host. MSG_OOB and MSG_ERRQUEUE
 * never wait. wanted_bytes: what the buffers can take (for MSG_WAITALL).
 */
static long recv_host(struct proxy_process *p, int host_fd, struct msghdr *msg,
                      int flags, size_t wanted_bytes, bool may_park)
{
    int fl;
    if ((flags & (MSG_OOB | MSG_ERRQUEUE)) ||
        !sock_may_wait(host_fd, flags, &fl) ||
        (!may_park && !proxy_others_runnable(p)))
        return proxy_host_result(recvmsg(host_fd, msg, flags));
    if ((flags & MSG_WAITALL) && may_park &&
        waitall_in_parts(host_fd, msg, flags))
        return recv_waitall(p, host_fd, msg, flags, wanted_bytes);
    if ((flags & MSG_WAITALL) && may_park &&
        waitall_peek_in_parts(host_fd, msg, flags))
        return recv_waitall_peek(p, host_fd, msg, flags, wanted_bytes);
    if (flags & MSG_WAITALL) {
        if (waitall_ready(p, host_fd, wanted_bytes))
            return proxy_host_result(recvmsg(host_fd, msg, flags));
        return may_park ? park_sock(p, host_fd, POLLIN) : -EAGAIN;
    }
    long r = proxy_host_result(recvmsg(host_fd, msg, flags | MSG_DONTWAIT));
    if (r == -EAGAIN && may_park)
        return park_sock(p, host_fd, POLLIN);
    return r;
}

/* recvmsg for the guest msghdr at msg_gva; also each recvmmsg entry. The
 * received msg_flags go to *out_flags. */
static long recv_one(struct proxy_process *p, int host_fd, gva_t msg_gva,
                     int flags, bool may_park, int *out_flags)
{
    struct guest_msghdr gm;
    if (proxy_copy_in(p, &gm, msg_gva, sizeof(gm)) < 0)
        return -EFAULT;
    struct host_msg hm;
    host_msg_init(&hm);
    long r = msg_recv_in(p, &gm, &hm);
    if (r == 0)
        r = recv_cover_check(&hm);
    if (r == 0)
        r = recv_host(p, host_fd, &hm.msg, flags | MSG_CMSG_CLOEXEC,
                      hm.covered_bytes, may_park);
    if (r >= 0 && recv_fault(&hm)) {
        /* Passed fds go too: into the table and straight out again. */
        rights_to_guest(p, &hm, true);
        rights_undo(p, &hm);
        r = -EFAULT;
    }
    if (r >= 0) {
        creds_to_guest(p, host_fd, &hm);
        if (hm.msg.msg_name)
            proxy_outside_dgram_source(p->world, &hm.name.u.ss,
                                       &hm.msg.msg_namelen);
        long w = msg_recv_out(p, msg_gva, &gm, &hm, flags);
        r = w < 0 ? w : r;
        *out_flags = hm.msg.msg_flags;
    }
    host_msg_free(&hm);
    return r;
}

/* recvfrom(fd, buf, len, flags, addr, addrlen): the address is written
 * only when addr is set, after the data. */
static long sys_recvfrom(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    struct host_msg hm;
    host_msg_init(&hm);
    if (a[4] != 0) {
        hm.msg.msg_name = &hm.name.u;
        hm.msg.msg_namelen = sizeof(hm.name.u);
    }
    struct guest_iovec seg = {a[1], a[2]};
    long r = segments_map(p, &seg, 1, PROT_WRITE, &hm);
    if (r == 0)
        r = recv_cover_check(&hm);
    if (r == 0)
        r = recv_host(p, host_fd, &hm.msg, (int)a[3], hm.covered_bytes, true);
    if (r >= 0 && recv_fault(&hm))
        r = -EFAULT;
    if (r >= 0 && a[4] != 0) {
        hm.name.len = hm.msg.msg_namelen;
        proxy_outside_dgram_source(p->world, &hm.name.u.ss, &hm.name.len);
        long w = sock_addr_out(p, a[4], a[5], &hm.name);
        r = w < 0 ? w : r;
    }
    host_msg_free(&hm);
    return r;
}

static long sys_recvmsg(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    int out_flags;
    return recv_one(p, host_fd, a[1], (int)a[2], true, &out_flags);
}

static uint64_t timespec_ns_sat(const struct timespec *ts)
{
    uint64_t ns;
    if (__builtin_mul_overflow((uint64_t)ts->tv_sec, 1000000000ULL, &ns) ||
        __builtin_add_overflow(ns, (uint64_t)ts->tv_nsec, &ns))
        return UINT64_MAX;
    return ns;
}

/* Time left until deadline_ns on the guest's (detcore's) monotonic clock,
 * into *left; false once it has passed. */
static bool recvmmsg_time_left(struct proxy_process *p, uint64_t deadline_ns,
                               struct timespec *left)
{
    struct timespec now;
    det_clock_gettime(p->det, CLOCK_MONOTONIC, &now);
    uint64_t now_ns = timespec_ns_sat(&now);
    uint64_t left_ns = deadline_ns > now_ns ? deadline_ns - now_ns : 0;
    left->tv_sec = (time_t)(left_ns / 1000000000ULL);
    left->tv_nsec = (long)(left_ns % 1000000000ULL);
    return left_ns > 0;
}

/*
 * recvmmsg(fd, vec, vlen, flags, timeout) as Linux's do_recvmmsg: vlen
 * capped at UIO_MAXIOV; MSG_WAITFORONE turns on MSG_DONTWAIT after the
 * first datagram; the timeout is only looked at between datagrams (Linux's
 * documented quirk) and the time left is written back when any arrived;
 * out-of-band data ends the batch. After a failure the count so far is the
 * result, if any. The clock is detcore's, so the batch ends the same way
 * on every run. As in sendmmsg, only the first datagram may park the
 * thread (see recv_host for a later one).
 */
static long sys_recvmmsg(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    unsigned int vlen = (unsigned int)a[2];
    if (vlen > GUEST_IOV_MAX)
        vlen = GUEST_IOV_MAX;
    int flags = (int)a[3];
    gva_t timeout_gva = a[4];
    struct timespec left = {0, 0};
    uint64_t deadline_ns = 0;
    if (timeout_gva != 0) {
        if (proxy_copy_in(p, &left, timeout_gva, sizeof(left)) < 0)
            return -EFAULT;
        if (left.tv_sec < 0 || left.tv_nsec < 0 || left.tv_nsec >= 1000000000L)
            return -EINVAL;
        struct timespec now;
        det_clock_gettime(p->det, CLOCK_MONOTONIC, &now);
        uint64_t start_ns = timespec_ns_sat(&now);
        uint64_t span_ns = timespec_ns_sat(&left);
        deadline_ns =
            start_ns + span_ns < start_ns ? UINT64_MAX : start_ns + span_ns;
    }
    long r = 0;
    unsigned int done = 0;
    while (done < vlen) {
        gva_t entry = a[1] + (uint64_t)done * sizeof(struct guest_mmsghdr);
        int out_flags = 0;
        r = recv_one(p, host_fd, entry, flags & ~MSG_WAITFORONE, done == 0,
                     &out_flags);
        if (r < 0)
            break;
        uint32_t got = (uint32_t)r;
        if (proxy_copy_out(p, entry + offsetof(struct guest_mmsghdr, len), &got,
                           sizeof(got)) < 0) {
            r = -EFAULT;
            break;
        }
        done++;
        if (flags & MSG_WAITFORONE)
            flags |= MSG_DONTWAIT;
        if (timeout_gva != 0 && !recvmmsg_time_left(p, deadline_ns, &left))
            break;
        if (out_flags & MSG_OOB)
            break;
    }
    if (done == 0)
        return r;
    if (timeout_gva != 0 &&
        proxy_copy_out(p, timeout_gva, &left, sizeof(left)) < 0)
        return -EFAULT;
    return done;
}

/* ---- options ------------------------------------------------------------- */

/*
 * Options refused as on a kernel without them (-ENOPROTOOPT): their value
 * would be a pidfd the host installs in hvrun's table (SO_PEERPIDFD, and
 * SCM_PIDFD messages after SO_PASSPIDFD), or a guest address the host
 * would map pages at in hvrun (TCP_ZEROCOPY_RECEIVE).
 */
static bool sockopt_refused(int level, int name)
{
    if (level == SOL_SOCKET)
        return name == SO_PEERPIDFD || name == SO_PASSPIDFD;
    return level == IPPROTO_TCP && name == TCP_ZEROCOPY_RECEIVE;
}

/* Classic BPF filters: struct sock_fprog points at the program, which is
 * guest memory; the host gets a copy. */
static long setsockopt_cbpf(struct proxy_process *p, int host_fd, int name,
                            gva_t optval, int optlen)
{
    struct {
        uint16_t len;
        uint16_t pad[3];
        uint64_t filter;
    } gprog;
    _Static_assert(sizeof(gprog) == sizeof(struct sock_fprog),
                   "sock_fprog is not x86-64's");
    if ((size_t)optlen != sizeof(gprog))
        return -EINVAL;
    if (proxy_copy_in(p, &gprog, optval, sizeof(gprog)) < 0)
        return -EFAULT;
    if (gprog.len == 0 || gprog.len > BPF_MAXINSNS)
        return -EINVAL;
    struct sock_filter *insns = malloc(gprog.len * sizeof(*insns));
    if (!insns)
        return -ENOMEM;
    long r = -EFAULT;
    if (proxy_copy_in(p, insns, gprog.filter, gprog.len * sizeof(*insns)) ==
        0) {
        struct sock_fprog prog = {.len = gprog.len, .filter = insns};
        r = proxy_host_result(
            setsockopt(host_fd, SOL_SOCKET, name, &prog, sizeof(prog)));
    }
    free(insns);
    return r;
}

/* eBPF programs are named by fd: a guest fd becomes hvrun's. */
static long optval_bpf_fd(struct proxy_process *p, unsigned char *buf,
                          size_t len)
{
    int guest_fd, host_fd;
    if (len < sizeof(int))
        return 0; /* the host refuses the short value */
    memcpy(&guest_fd, buf, sizeof(guest_fd));
    host_fd = proxy_fd_host(&p->fds, guest_fd);
    if (host_fd < 0)
        return -EBADF;
    memcpy(buf, &host_fd, sizeof(host_fd));
    return 0;
}

/* The value is copied in, up to OPTVAL_MAX_BYTES (every option the
 * supported families read fits; a longer one gets its first bytes). */
static long sys_setsockopt(struct proxy_process *p, const uint64_t a[6])
{
    int level = (int)a[1], name = (int)a[2], optlen = (int)a[4];
    gva_t optval = a[3];
    if (optlen < 0)
        return -EINVAL;
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    if (sockopt_refused(level, name))
        return -ENOPROTOOPT;
    if (level == SOL_SOCKET &&
        (name == SO_ATTACH_FILTER || name == SO_ATTACH_REUSEPORT_CBPF))
        return setsockopt_cbpf(p, host_fd, name, optval, optlen);
    unsigned char buf[OPTVAL_MAX_BYTES];
    size_t len = (size_t)optlen < sizeof(buf) ? (size_t)optlen : sizeof(buf);
    if (len > 0 && proxy_copy_in(p, buf, optval, len) < 0)
        return -EFAULT;
    if (level == SOL_SOCKET &&
        (name == SO_ATTACH_BPF || name == SO_ATTACH_REUSEPORT_EBPF)) {
        long r = optval_bpf_fd(p, buf, len);
        if (r < 0)
            return r;
    }
    return proxy_host_result(
        setsockopt(host_fd, level, name, optval ? buf : NULL, (socklen_t)len));
}

/*
 * The guest's bytes are copied in first when readable: a few options read
 * their buffer as input (multicast source filters, netfilter's table
 * names). The kernel's final length comes back (it writes one for -ERANGE
 * too: SO_PEERGROUPS/SO_PEERSEC say how much they need).
 */
static long sys_getsockopt(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = sock_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    int level = (int)a[1], name = (int)a[2];
    gva_t optval = a[3], optlen_gva = a[4];
    int given;
    if (proxy_copy_in(p, &given, optlen_gva, sizeof(given)) < 0)
        return -EFAULT;
    if (given < 0)
        return -EINVAL;
    if (sockopt_refused(level, name))
        return -ENOPROTOOPT;
    unsigned char buf[OPTVAL_MAX_BYTES];
    socklen_t len =
        (size_t)given < sizeof(buf) ? (socklen_t)given : (socklen_t)sizeof(buf);
    if (len > 0 && proxy_copy_in(p, buf, optval, len) < 0)
        memset(buf, 0, len);
    long r = proxy_host_result(getsockopt(host_fd, level, name, buf, &len));
    if (r < 0 && r != -ERANGE)
        return r;
    size_t n = len < sizeof(buf) ? len : sizeof(buf);
    if (r == 0 && level == SOL_SOCKET && name == SO_PEERCRED &&
        n >= sizeof(struct ucred)) {
        struct ucred uc;
        memcpy(&uc, buf, sizeof(uc));
        proxy_peercred_to_guest(p, host_fd, &uc);
        memcpy(buf, &uc, sizeof(uc));
    }
    if (r == 0 && n > 0 && proxy_copy_out(p, optval, buf, n) < 0)
        return -EFAULT;
    int out_len = (int)len;
    if (proxy_copy_out(p, optlen_gva, &out_len, sizeof(out_len)) < 0)
        return -EFAULT;
    return r;
}

/* ---- table --------------------------------------------------------------- */

const struct proxy_syscall proxy_net_syscalls[] = {
    {SYS_socket, "socket", sys_socket},
    {SYS_socketpair, "socketpair", sys_socketpair},
    {SYS_bind, "bind", sys_bind},
    {SYS_listen, "listen", sys_listen},
    {SYS_accept, "accept", sys_accept},
    {SYS_accept4, "accept4", sys_accept4},
    {SYS_connect, "connect", sys_connect},
    {SYS_getsockname, "getsockname", sys_getsockname},
    {SYS_getpeername, "getpeername", sys_getpeername},
    {SYS_sendto, "sendto", sys_sendto},
    {SYS_recvfrom, "recvfrom", sys_recvfrom},
    {SYS_sendmsg, "sendmsg", sys_sendmsg},
    {SYS_recvmsg, "recvmsg", sys_recvmsg},
    {SYS_sendmmsg, "sendmmsg", sys_sendmmsg},
    {SYS_recvmmsg, "recvmmsg", sys_recvmmsg},
    {SYS_shutdown, "shutdown", sys_shutdown},
    {SYS_setsockopt, "setsockopt", sys_setsockopt},
    {SYS_getsockopt, "getsockopt", sys_getsockopt},
    {-1, NULL, NULL},
};
