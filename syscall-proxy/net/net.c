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
 * and an implicit one towards this host, take detcore's next port,
 * shown whatever host port stands for it: inet_port.c), netlink port ids (hvrun's host pid), and the
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
#include "fs.h"
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

/* Bounded host copies of option values and ancillary data. */
#define OPTVAL_MAX_BYTES 4096

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

/* ---- waiting without blocking the host ----------------------------------- */

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

/* An address the host reports (getsockname, getpeername, accept,
 * recvfrom) in the guest's terms (own: the socket's own name, else a
 * peer's): a port the run gave is the guest's (inet_port.c), an autobind
 * name the run's (unix_name.c); an AF_UNIX path inside the private /tmp
 * is /tmp/... again, its length following the path (its NUL kept if it
 * had one). */
void proxy_net_addr_to_guest(const struct proxy_process *p,
                             struct sock_addr *g, const struct sock_addr *h,
                             bool own)
{
    *g = *h;
    proxy_net_inet_port_to_guest(p->world, g, own);
    if (proxy_net_unix_name_to_guest(p, g))
        return;
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
long proxy_net_sock_addr_out(struct proxy_process *p, gva_t addr_gva,
                          gva_t addrlen_gva, const struct sock_addr *host_sa,
                          bool own)
{
    struct sock_addr guest_sa;
    proxy_net_addr_to_guest(p, &guest_sa, host_sa, own);
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
long proxy_net_path_ctx_enter(struct proxy_process *p, struct sock_addr *sa,
                           bool creates, struct path_ctx *c)
{
    c->saved_cwd_fd = -1;
    c->umask_set = false;
    if (sa)
        proxy_net_inet_port_to_host(p->world, sa, creates);
    if (sa && proxy_net_unix_name_to_host(p, sa))
        return 0;
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
        int to = dir_fd >= 0 ? dir_fd : p->fs.cwd_fd;
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
        c->saved_umask = umask(p->fs.umask);
        c->umask_set = true;
    }
    return 0;
}

void proxy_net_path_ctx_leave(struct proxy_process *p, const struct path_ctx *c)
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

/* A bind of just the family on an AF_UNIX socket: Linux picks an abstract
 * name (autobind); hvrun names it for the run (unix_name.c). */
static bool unix_autobind_addr(int host_fd, const struct sock_addr *sa)
{
    int domain = 0;
    socklen_t dl = sizeof(domain);
    return sa->len == sizeof(sa_family_t) && sa->u.sa.sa_family == AF_UNIX &&
           getsockopt(host_fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) == 0 &&
           domain == AF_UNIX;
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
    if (bind_ && (r = proxy_net_bind_port_allowed(p, host_fd, &sa)) < 0)
        return r;
    /* nscd and systemd-userdb stay out of reach: lookups use /etc files */
    if (!bind_ && unix_path_addr(&sa) &&
        proxy_hermetic_socket_blocked(p, sa.u.un.sun_path,
                                      sa.len - offsetof(struct sockaddr_un,
                                                        sun_path)))
        return -ENOENT;
    struct path_ctx c;
    r = proxy_net_path_ctx_enter(p, &sa, bind_, &c);
    if (r < 0)
        return r;
    if (bind_)
        proxy_outside_before_bind(p);
    if (bind_ && proxy_net_inet_any_port(&sa)) {
        r = proxy_net_bind_det_port(p, host_fd, &sa);
    } else if (bind_ && unix_autobind_addr(host_fd, &sa)) {
        r = proxy_net_unix_autobind(p, host_fd);
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
        if (proxy_net_loopback_addr(&sa))
            proxy_net_bind_unbound_inet(p, host_fd);
        r = connect_nowait(p, host_fd, &sa);
        if (relayed)
            proxy_outside_connected(p, host_fd);
    }
leave:
    proxy_net_path_ctx_leave(p, &c);
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
    proxy_net_bind_unbound_inet(p, host_fd);
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
 * connected socket never becomes acceptable), or EOPNOTSUPP for a kind of
 * socket that has no accept (datagram, raw: sock_no_accept). */
static long park_accept(struct proxy_process *p, int host_fd)
{
    int listening = 1, type = SOCK_STREAM;
    socklen_t len = sizeof(listening), tl = sizeof(type);
    if (getsockopt(host_fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) ==
            0 && !listening) {
        if (getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
            type != SOCK_STREAM && type != SOCK_SEQPACKET)
            return -EOPNOTSUPP;
        return -EINVAL;
    }
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
    long r = proxy_net_sock_addr_out(p, addr, a[2], &sa, false);
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
        return proxy_net_sock_addr_out(p, a[1], a[2], &sa, !peer);
    int r = peer ? getpeername(host_fd, &sa.u.sa, &sa.len)
                 : getsockname(host_fd, &sa.u.sa, &sa.len);
    if (r < 0)
        return -errno;
    return proxy_net_sock_addr_out(p, a[1], a[2], &sa, !peer);
}

static long sys_getsockname(struct proxy_process *p, const uint64_t a[6])
{
    return sock_name(p, a, false);
}

static long sys_getpeername(struct proxy_process *p, const uint64_t a[6])
{
    return sock_name(p, a, true);
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
    {SYS_shutdown, "shutdown", sys_shutdown},
    {SYS_setsockopt, "setsockopt", sys_setsockopt},
    {SYS_getsockopt, "getsockopt", sys_getsockopt},
    {-1, NULL, NULL},
};
