/*
 * outside_udp.c - UDP and AF_UNIX datagrams between the run and peers
 * outside it, under hvrun record and replay (the stream connections are
 * outside.c's).
 *
 * A datagram that comes back from outside, and the point of the run where
 * the guest can first see it, is input from outside the deterministic
 * model. So under record and replay a guest's UDP datagram to an address
 * no socket of the run is bound to goes to a relay of hvrun's instead: a
 * UDP socket on loopback (127.0.0.1 or ::1, as the guest's socket) that
 * stands for that one peer and that one guest socket, a "flow". sendto,
 * sendmsg and sendmmsg with such an address are redirected to the flow's
 * relay; a connect() connects the guest's socket to the relay, so send,
 * write and a connected socket's filtering work as on Linux. Recording,
 * hvrun sends what reaches the relay to the peer from a socket of its own
 * connected to it, and each datagram that comes back (and each error the
 * peer's host reports, ECONNREFUSED for nothing there) is a `link` event
 * with the run's guest event count when it was taken in; replaying, the
 * guest's datagrams are read and dropped and the recorded ones given back
 * at the same counts. Datagrams move only at points of the run's own
 * progress (before each guest syscall, and when nothing in the run can go
 * on), one relay send per datagram, so boundaries are kept; after one
 * hvrun waits (up to 200 ms) until the guest's receive queue holds it.
 *
 * Why a relay per (guest socket, peer): the guest's datagram goes to the
 * relay, not to the peer, so the relay's address is what says which peer
 * it was for; and a reply from the peer must go to the guest socket that
 * asked. A relay per peer shared by the run's sockets would not know
 * which socket a reply is for, one per guest socket not which peer a
 * datagram is for. It also makes the way back exact: the source address a
 * receive reports is the relay's, which net.c turns back into the peer's
 * (proxy_outside_dgram_source), so recvfrom/recvmsg show the peer.
 *
 * The guest's socket stays a real host socket (poll and epoll readiness,
 * SO_RCVTIMEO, MSG_DONTWAIT, MSG_PEEK, truncation are the kernel's). An
 * error from the peer's side reaches a connected guest socket the way
 * Linux's would: hvrun closes the relay, sends an empty datagram from the
 * guest's socket to its port, so the kernel's own ICMP port unreachable
 * sets the socket's error (ECONNREFUSED at its next call, POLLERR), and
 * binds the relay again. An unconnected socket gets no such error, as on
 * Linux without IP_RECVERR; IP_RECVERR's error queue, IP_PKTINFO and
 * IP_RECVORIGDSTADDR are not rewritten (they show loopback). The peer
 * sees hvrun's port, not the guest's. A flow lives until its guest socket
 * is gone (looked at when a new flow is made).
 *
 * AF_UNIX datagram sockets (syslog's /dev/log, logger, a user's server)
 * are flows the same way, to a path or an abstract name no datagram
 * socket of the run is bound to: the relay is an AF_UNIX datagram socket
 * with an autobound abstract name. hvrun's socket to the peer connects to
 * the name from the guest's cwd (net.c routes inside the path's context),
 * so ENOENT, ECONNREFUSED and EPROTOTYPE are the host's, and takes the
 * name the peer's socket has for the guest's getpeername and sources.
 * It is named (autobound) once the guest's socket is, so the peer can
 * answer a named guest and not an unnamed one, as natively; it sees
 * hvrun's name. An AF_UNIX send is on the receiver's queue when it
 * returns (and charged to the sender), so hvrun does not wait after one;
 * a peer's full queue is waited on up to 200 ms. A peer that went away
 * is an error of the flow's: a connected guest socket is connected to
 * the relay hvrun then closes, so the kernel gives its next send
 * ECONNREFUSED (one send later than natively).
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "kernel.h"
#include "outside.h"
#include "outside_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <poll.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "det.h"

/* A datagram (or an error) from the peer not yet given to the guest. */
struct dgram_pending {
    uint8_t *data;
    size_t len;
    int err; /* -errno: an error to give instead */
};

struct outside_flow {
    uint32_t id;
    uint64_t guest_ino;   /* the guest's socket (fstat) */
    int guest_fd;         /* hvrun's fd for it when last seen, or -1 */
    bool connected;       /* the guest's socket is connected to the relay */
    bool dead;            /* the guest's socket is gone: fds closed */
    int family;
    int relay;            /* what the guest's datagrams reach */
    int remote;           /* recording: connected to the peer, or -1 */
    int outer;            /* recording, a peer that came to a socket the
                             run bound: that socket (a dup), whose port
                             the replies go out from; else -1 */
    struct sockaddr_storage peer, relay_addr, guest_addr;
    socklen_t peer_len, relay_len, guest_len; /* guest_len 0: not known */
    struct sockaddr_storage name; /* the peer as the guest sees it (source,
                                     getpeername): AF_UNIX: the name its
                                     socket has; else peer */
    socklen_t name_len;
    int cwd_fd;           /* AF_UNIX: the guest's cwd at the first send (a
                             relative name of its own is looked up there
                             for the way back), or -1 */
    bool remote_named;    /* AF_UNIX, recording: hvrun's socket to the
                             peer has a name (autobound) */
    struct dgram_pending *q;
    size_t q_len, q_cap;
};

/* A UDP socket (IPv4, IPv6) or an AF_UNIX datagram socket; its family. */
static bool dgram_socket(int fd, int *family)
{
    int type = 0, proto = 0, dom = 0;
    socklen_t l = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) < 0)
        return false;
    *family = dom;
    return type == SOCK_DGRAM &&
           ((proto == IPPROTO_UDP && (dom == AF_INET || dom == AF_INET6)) ||
            dom == AF_UNIX);
}

/* An AF_UNIX name with a path or an abstract name (not unnamed). */
static bool unix_named(const struct sockaddr_storage *a, socklen_t len)
{
    return a->ss_family == AF_UNIX &&
           len > offsetof(struct sockaddr_un, sun_path);
}

static uint16_t inet_port(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)a)->sin_port);
    return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
}

/* The same family, address and port (what a datagram's source is). */
static bool inet_same(const struct sockaddr_storage *a,
                      const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family || inet_port(a) != inet_port(b))
        return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                   &((const struct sockaddr_in6 *)b)->sin6_addr,
                   sizeof(struct in6_addr));
}

/* 127/8, ::1, ::ffff:127.x (with any: or the wildcard address). */
static bool inet_loopback(const struct sockaddr_storage *a, bool or_any)
{
    if (a->ss_family == AF_INET) {
        uint32_t h = ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);
        return (or_any && h == INADDR_ANY) || (h >> 24) == 127;
    }
    const struct in6_addr *a6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
    return (or_any && IN6_IS_ADDR_UNSPECIFIED(a6)) ||
           IN6_IS_ADDR_LOOPBACK(a6) ||
           (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

static bool inet_any(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == INADDR_ANY;
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
    return IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
}

/* Whether a datagram socket of the run is what dst reaches: bound to
 * dst's port, and dst is this host's loopback, or the socket is bound to
 * dst's address or to any; AF_UNIX: bound to the same name or socket file
 * (a relative dst looked up from hvrun's cwd: the sender's). Then nothing
 * comes from outside. */
static bool run_binds(struct proxy_world *w, const struct sockaddr_storage *dst,
                      socklen_t dst_len)
{
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++) {
            if (t->fds[k].kind != PROXY_FD_HOST)
                continue;
            int fd = t->fds[k].host_fd, type = 0;
            socklen_t tl = sizeof(type);
            struct sockaddr_storage ss;
            socklen_t sl = sizeof(ss);
            if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
                type != SOCK_DGRAM ||
                getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
                continue;
            if (dst->ss_family == AF_UNIX) {
                if (unix_named(&ss, sl) &&
                    outside_unix_same_listener((struct sockaddr_un *)&ss, sl,
                                               (const struct sockaddr *)dst,
                                               dst_len))
                    return true;
                continue;
            }
            if ((ss.ss_family != AF_INET && ss.ss_family != AF_INET6) ||
                inet_port(&ss) == 0 || inet_port(&ss) != inet_port(dst))
                continue;
            if (inet_loopback(dst, true) || inet_any(&ss) ||
                inet_same(&ss, dst))
                return true;
        }
    }
    return false;
}

/* hvrun's fd for the flow's guest socket, or -1: it is gone. */
static int guest_fd_of(struct proxy_world *w, struct outside_flow *f)
{
    if (f->guest_fd >= 0 && outside_sock_ino(f->guest_fd) == f->guest_ino)
        return f->guest_fd;
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++)
            if (t->fds[k].kind == PROXY_FD_HOST &&
                outside_sock_ino(t->fds[k].host_fd) == f->guest_ino)
                return f->guest_fd = t->fds[k].host_fd;
    }
    return f->guest_fd = -1;
}

static void flow_close(struct outside_flow *f)
{
    if (f->relay >= 0)
        close(f->relay);
    if (f->remote >= 0)
        close(f->remote);
    if (f->outer >= 0)
        close(f->outer);
    if (f->cwd_fd >= 0)
        close(f->cwd_fd);
    f->relay = f->remote = f->outer = f->cwd_fd = -1;
    for (size_t i = 0; i < f->q_len; i++)
        free(f->q[i].data);
    f->q_len = 0;
    f->dead = true;
}

/* Flows whose guest socket was closed: their relays go. */
void outside_udp_retire_gone(struct proxy_outside *o, struct proxy_world *w)
{
    for (size_t i = 0; i < o->nr_flows; i++)
        if (!o->flows[i]->dead && guest_fd_of(w, o->flows[i]) < 0)
            flow_close(o->flows[i]);
}

static struct outside_flow *flow_find(struct proxy_outside *o, uint64_t ino,
                                      const struct sockaddr_storage *peer,
                                      socklen_t peer_len)
{
    for (size_t i = 0; o && i < o->nr_flows; i++) {
        struct outside_flow *f = o->flows[i];
        if (!f->dead && f->guest_ino == ino &&
            outside_addr_same(&f->peer, f->peer_len, peer, peer_len))
            return f;
    }
    return NULL;
}

static struct outside_flow *flow_by_id(struct proxy_outside *o, uint32_t id)
{
    for (size_t i = 0; i < o->nr_flows; i++)
        if (o->flows[i]->id == id)
            return o->flows[i];
    return NULL;
}

/* A relay socket on loopback in family, at *addr if its port is set (a
 * relay bound again), else at a port the host picks (into *addr); AF_UNIX:
 * at the abstract name *addr has, else one the kernel picks (autobind:
 * nothing appears in the filesystem). */
static int relay_socket(int family, struct sockaddr_storage *addr,
                        socklen_t *len)
{
    int s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return -errno;
    if (family == AF_UNIX && !unix_named(addr, *len)) {
        memset(addr, 0, sizeof(*addr));
        addr->ss_family = AF_UNIX;
        *len = sizeof(sa_family_t);
    } else if (family != AF_UNIX && inet_port(addr) == 0) {
        outside_loopback_addr(family, addr, len);
    }
    socklen_t room = sizeof(*addr);
    if (bind(s, (struct sockaddr *)addr, *len) < 0 ||
        getsockname(s, (struct sockaddr *)addr, &room) < 0) {
        int e = -errno;
        close(s);
        return e;
    }
    *len = room;
    return s;
}

/* Recording: hvrun's own socket to the peer (its result: a peer no route
 * reaches fails here, as the guest's send or connect would; AF_UNIX: a
 * missing path ENOENT, a socket file nobody has bound ECONNREFUSED, a
 * stream socket's EPROTOTYPE, looked up from the sender's cwd). *name: the
 * peer as the guest sees it (AF_UNIX: the name the peer's socket has, not
 * always the one given: a relative path, a symlink). */
static long remote_socket(int family, const struct sockaddr_storage *peer,
                          socklen_t len, int *remote,
                          struct sockaddr_storage *name, socklen_t *name_len)
{
    *name = *peer;
    *name_len = len;
    int s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return -errno;
    if (connect(s, (const struct sockaddr *)peer, len) < 0) {
        long e = -errno;
        close(s);
        return e;
    }
    socklen_t n = sizeof(*name);
    if (family == AF_UNIX &&
        getpeername(s, (struct sockaddr *)name, &n) == 0)
        *name_len = n;
    *remote = s;
    return 0;
}

/* Replaying: the recorded result of reaching the peer, flow id's first
 * event, and the peer's name (*name, if the event has one); false: the
 * recording has none here. */
static bool recorded_open(struct proxy_outside *o, uint32_t id, long *ret,
                          struct sockaddr_storage *name, socklen_t *name_len)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (!o->tap->link_next(o->tap->ctx, &e, &data, &n) || e.link != id ||
        e.kind != PROXY_LINK_DGRAM_OPEN)
        return false;
    *ret = (long)e.value;
    if (n >= sizeof(sa_family_t) && n <= sizeof(*name)) {
        memset(name, 0, sizeof(*name));
        memcpy(name, data, n);
        *name_len = (socklen_t)n;
    }
    o->tap->link_taken(o->tap->ctx);
    return true;
}

static bool flows_room(struct proxy_outside *o)
{
    if (o->nr_flows < o->cap_flows)
        return true;
    size_t cap = o->cap_flows ? 2 * o->cap_flows : 4;
    void *n = realloc(o->flows, cap * sizeof(*o->flows));
    if (!n)
        return false;
    o->flows = n;
    o->cap_flows = cap;
    return true;
}

/* A new flow from host_fd's socket to peer: NULL with *ret < 0 when the
 * peer cannot be reached (recorded so), or hvrun is out of room. */
static struct outside_flow *flow_open(struct proxy_process *p,
                                      struct proxy_outside *o, int host_fd,
                                      int family,
                                      const struct sockaddr_storage *peer,
                                      socklen_t peer_len, long *ret)
{
    uint32_t id = o->next_id++;
    int remote = -1;
    struct sockaddr_storage name = *peer;
    socklen_t name_len = peer_len;
    *ret = 0;
    if (outside_recording(o->tap)) {
        *ret = remote_socket(family, peer, peer_len, &remote, &name,
                             &name_len);
        outside_note(o, id, PROXY_LINK_DGRAM_OPEN, *ret, &name, name_len);
    } else if (!recorded_open(o, id, ret, &name, &name_len)) {
        proxy_log(p, 0, "replay: datagrams %u to outside the run were not "
                  "in the recording (dropped)", id);
    }
    if (*ret < 0)
        return NULL;
    outside_udp_retire_gone(o, p->world);
    struct outside_flow *f = calloc(1, sizeof(*f));
    if (!f || !flows_room(o)) {
        free(f);
        if (remote >= 0)
            close(remote);
        *ret = -ENOMEM;
        return NULL;
    }
    f->id = id;
    f->guest_ino = outside_sock_ino(host_fd);
    f->guest_fd = host_fd;
    f->family = family;
    f->remote = remote;
    f->outer = -1;
    f->peer = *peer;
    f->peer_len = peer_len;
    f->name = name;
    f->name_len = name_len;
    f->cwd_fd =
        family == AF_UNIX ? fcntl(p->fs.cwd_fd, F_DUPFD_CLOEXEC, 0) : -1;
    f->relay = relay_socket(family, &f->relay_addr, &f->relay_len);
    if (f->relay < 0) {
        *ret = f->relay;
        f->relay = -1;
        flow_close(f);
    }
    o->flows[o->nr_flows++] = f; /* kept: its id is in the recording */
    return f->dead ? NULL : f;
}

/* How much of dst names a peer a datagram socket of family may have
 * outside (0: none): a whole inet address with a port, an AF_UNIX path or
 * abstract name (an unnamed one is the kernel's error). */
static socklen_t peer_len_of(int family, const struct sockaddr *dst,
                             socklen_t dst_len)
{
    if (dst_len < sizeof(sa_family_t) || dst->sa_family != family)
        return 0;
    if (family == AF_UNIX) {
        if (dst_len <= offsetof(struct sockaddr_un, sun_path))
            return 0;
        return dst_len < sizeof(struct sockaddr_un)
                   ? dst_len
                   : (socklen_t)sizeof(struct sockaddr_un);
    }
    socklen_t need = family == AF_INET ? sizeof(struct sockaddr_in)
                                       : sizeof(struct sockaddr_in6);
    if (dst_len < need)
        return 0;
    return inet_port((const struct sockaddr_storage *)dst) ? need : 0;
}

/*
 * The flow of host_fd's datagrams to *dst, made if new; false: not one
 * (not under record/replay, not UDP or AF_UNIX datagrams, dst in the run
 * or not a whole address of the socket's family, a relay's own address).
 */
static bool route(struct proxy_process *p, int host_fd,
                  const struct sockaddr *dst, socklen_t dst_len,
                  struct outside_flow **flow, long *ret)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    int family;
    if (!outside_recording(t) && !outside_replaying(t))
        return false;
    socklen_t need;
    if (!dgram_socket(host_fd, &family) ||
        !(need = peer_len_of(family, dst, dst_len)))
        return false;
    struct sockaddr_storage peer;
    memset(&peer, 0, sizeof(peer));
    memcpy(&peer, dst, need);
    struct proxy_outside *o = outside_of(p);
    if (!o)
        return false;
    for (size_t i = 0; i < o->nr_flows; i++)
        if (!o->flows[i]->dead &&
            outside_addr_same(&o->flows[i]->relay_addr,
                              o->flows[i]->relay_len, &peer, need))
            return false;
    *flow = flow_find(o, outside_sock_ino(host_fd), &peer, need);
    /* A loopback port (or a name) a socket of the run bound since: in the
     * run now. */
    bool local = family == AF_UNIX || inet_loopback(&peer, false);
    if (*flow && !(local && run_binds(p->world, &peer, need))) {
        /* a reply to a sender outside with a relative name: looked up
         * from the guest's cwd (at its first reply), as natively */
        if (family == AF_UNIX && (*flow)->cwd_fd < 0)
            (*flow)->cwd_fd = fcntl(p->fs.cwd_fd, F_DUPFD_CLOEXEC, 0);
        *ret = 0;
        return true;
    }
    if (run_binds(p->world, &peer, need))
        return false;
    *flow = flow_open(p, o, host_fd, family, &peer, need, ret);
    return true;
}

/* A datagram or connect of a UDP or AF_UNIX datagram socket to a socket
 * the run bound that has a stand-in: to the stand-in (*via). */
static bool redirected(struct proxy_process *p, int host_fd,
                       const struct sockaddr *dst, socklen_t dst_len,
                       struct sockaddr_storage *via, socklen_t *via_len)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    int family;
    struct proxy_outside *o = p->world->outside;
    return o && o->nr_shadows &&
           (outside_recording(t) || outside_replaying(t)) &&
           dgram_socket(host_fd, &family) && dst_len >= sizeof(sa_family_t) &&
           dst->sa_family == family &&
           outside_accept_redirect(o, p->world, true, dst, dst_len, via,
                                   via_len);
}

bool proxy_outside_dgram_route(struct proxy_process *p, int host_fd,
                               struct sockaddr_storage *dst,
                               socklen_t *dst_len, long *ret)
{
    struct outside_flow *f = NULL;
    struct sockaddr_storage via;
    socklen_t via_len;
    if (redirected(p, host_fd, (struct sockaddr *)dst, *dst_len, &via,
                   &via_len)) {
        *dst = via;
        *dst_len = via_len;
        *ret = 0;
        return true;
    }
    if (!route(p, host_fd, (struct sockaddr *)dst, *dst_len, &f, ret))
        return false;
    if (f) {
        *dst = f->relay_addr;
        *dst_len = f->relay_len;
    }
    return true;
}

/* The guest's socket is connected to f now, to none of its other flows. */
static void mark_connected(struct proxy_outside *o, uint64_t ino,
                           struct outside_flow *f)
{
    for (size_t i = 0; o && i < o->nr_flows; i++)
        if (o->flows[i]->guest_ino == ino)
            o->flows[i]->connected = o->flows[i] == f;
}

bool outside_udp_connect(struct proxy_process *p, int host_fd,
                         const struct sockaddr *dst, socklen_t dst_len,
                         struct sockaddr_storage *via, socklen_t *via_len,
                         long *ret)
{
    struct outside_flow *f = NULL;
    if (redirected(p, host_fd, dst, dst_len, via, via_len)) {
        mark_connected(p->world->outside, outside_sock_ino(host_fd), NULL);
        *ret = 0;
        return true;
    }
    bool routed = route(p, host_fd, dst, dst_len, &f, ret);
    if (!routed || f) /* elsewhere, AF_UNSPEC, or to this flow */
        mark_connected(p->world->outside, outside_sock_ino(host_fd), f);
    if (routed && f) {
        *via = f->relay_addr;
        *via_len = f->relay_len;
    }
    return routed;
}

void proxy_outside_dgram_source(struct proxy_world *w,
                                struct sockaddr_storage *src,
                                socklen_t *src_len)
{
    struct proxy_outside *o = w->outside;
    if (!o || (src->ss_family != AF_INET && src->ss_family != AF_INET6 &&
               !unix_named(src, *src_len)))
        return;
    if (outside_accept_name(o, src, src_len, true))
        return; /* from a stand-in: the socket the run bound */
    for (size_t i = 0; i < o->nr_flows; i++) {
        struct outside_flow *f = o->flows[i];
        if (!f->dead &&
            outside_addr_same(&f->relay_addr, f->relay_len, src, *src_len)) {
            *src = f->name;
            *src_len = f->name_len;
            return;
        }
    }
}

bool outside_udp_peer(struct proxy_outside *o, uint64_t ino,
                      struct sockaddr_storage *peer, socklen_t *len)
{
    for (size_t i = 0; ino && i < o->nr_flows; i++) {
        struct outside_flow *f = o->flows[i];
        if (!f->dead && f->connected && f->guest_ino == ino) {
            *peer = f->name;
            *len = f->name_len;
            return true;
        }
    }
    return false;
}

/* ---- moving datagrams ---------------------------------------------------- */

static void enqueue(struct outside_flow *f, const void *data, size_t len,
                    int err)
{
    if (f->q_len == f->q_cap) {
        size_t cap = f->q_cap ? 2 * f->q_cap : 8;
        void *n = realloc(f->q, cap * sizeof(*f->q));
        if (!n)
            return;
        f->q = n;
        f->q_cap = cap;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return;
    if (len)
        memcpy(copy, data, len);
    f->q[f->q_len++] = (struct dgram_pending){copy, len, err};
}

static void dequeue(struct outside_flow *f)
{
    free(f->q[0].data);
    memmove(f->q, f->q + 1, (f->q_len - 1) * sizeof(*f->q));
    f->q_len--;
}

/* Recording: an error of the peer's side, when the guest's socket is
 * connected (Linux tells an unconnected one nothing). */
static void remote_error(struct proxy_outside *o, struct outside_flow *f,
                         int err)
{
    if (!f->connected)
        return;
    outside_note(o, f->id, PROXY_LINK_DGRAM_ERR, -err, NULL, 0);
    enqueue(f, NULL, 0, -err);
}

/* Room for the next datagram on fd whole: a UDP one fits the chunk;
 * an AF_UNIX one may be larger, up to its sender's buffer, and gets
 * hvrun's one buffer, grown as needed (out of memory: the chunk, and the
 * datagram is cut); its size in *room. The size is peeked for AF_UNIX
 * only: a peek takes a UDP socket's pending error (ICMP), which the read
 * after it must see. */
uint8_t *outside_dgram_buffer(int fd, int family, size_t *room)
{
    static uint8_t chunk[OUTSIDE_PUMP_CHUNK];
    static uint8_t *big;
    static size_t big_size;
    ssize_t next = family != AF_UNIX
                       ? 0
                       : recv(fd, NULL, 0,
                              MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC);
    if (next <= (ssize_t)sizeof(chunk) && !big) {
        *room = sizeof(chunk);
        return chunk;
    }
    if (next > (ssize_t)big_size) {
        uint8_t *g = realloc(big, (size_t)next);
        if (g) {
            big = g;
            big_size = (size_t)next;
        }
    }
    if (!big) {
        *room = sizeof(chunk);
        return chunk;
    }
    *room = big_size;
    return big;
}

/* Recording: what the peer sent since the last look, as events. */
static void take_remote(struct proxy_outside *o, struct outside_flow *f)
{
    while (f->remote >= 0) {
        size_t room;
        uint8_t *buf = outside_dgram_buffer(f->remote, f->family, &room);
        ssize_t n = recv(f->remote, buf, room, MSG_DONTWAIT);
        if (n >= 0) {
            outside_note(o, f->id, PROXY_LINK_DGRAM, 0, buf, (size_t)n);
            enqueue(f, buf, (size_t)n, 0);
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return;
        } else if (errno != EINTR) {
            remote_error(o, f, errno);
        }
    }
}

/* One datagram from sock to (to, to_len); a relative AF_UNIX name is
 * looked up from cwd_fd (the guest's cwd at its first send), if set. */
static ssize_t sendto_from(int sock, int cwd_fd, const void *data,
                           size_t len, const struct sockaddr_storage *to,
                           socklen_t to_len)
{
    const struct sockaddr_un *u = (const struct sockaddr_un *)to;
    int back = -1;
    if (unix_named(to, to_len) && u->sun_path[0] != '\0' &&
        u->sun_path[0] != '/' && cwd_fd >= 0) {
        back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (back < 0 || fchdir(cwd_fd) < 0) {
            if (back >= 0)
                close(back);
            errno = ENOENT;
            return -1;
        }
    }
    ssize_t n = sendto(sock, data, len, MSG_DONTWAIT,
                       (const struct sockaddr *)to, to_len);
    int e = errno;
    if (back >= 0) {
        (void)!fchdir(back); /* hvrun resolves nothing against its own cwd */
        close(back);
    }
    errno = e;
    return n;
}

/*
 * AF_UNIX, recording: hvrun's socket to the peer gets a name (autobound)
 * once the guest's has one, so the peer can answer, as it could answer
 * the guest natively; an unnamed guest's datagrams go out unnamed too
 * (the peer sees no name, natively as here). The peer sees hvrun's
 * abstract name, not the guest's.
 */
static void name_remote(struct outside_flow *f)
{
    struct sockaddr_un any = {.sun_family = AF_UNIX};
    if (f->remote < 0 || f->remote_named ||
        !unix_named(&f->guest_addr, f->guest_len))
        return;
    f->remote_named = bind(f->remote, (struct sockaddr *)&any,
                           sizeof(sa_family_t)) == 0;
}

/* AF_UNIX: the peer's queue is full (Linux's sender would wait for room):
 * waits a while for room; true: there is some now. */
static bool unix_room(struct outside_flow *f)
{
    struct pollfd pfd = {.fd = f->remote, .events = POLLOUT};
    return f->family == AF_UNIX &&
           poll(&pfd, 1, OUTSIDE_DELIVERY_WAIT_NS / 1000000) > 0 &&
           (pfd.revents & POLLOUT);
}

/* What the guest sent: to the peer (recording) or dropped (replaying);
 * the guest's address is learnt from it, for the way back. */
static void take_relay(struct proxy_outside *o, struct outside_flow *f)
{
    while (f->relay >= 0) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof(from);
        size_t room;
        uint8_t *buf = outside_dgram_buffer(f->relay, f->family, &room);
        ssize_t n = recvfrom(f->relay, buf, room, MSG_DONTWAIT,
                             (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0)
            continue; /* an error of the relay's own: nothing to take */
        f->guest_addr = from;
        f->guest_len = fl;
        if (f->family == AF_UNIX)
            name_remote(f);
        if (f->outer >= 0) { /* a reply from the name the run bound; */
            (void)sendto_from(f->outer, f->cwd_fd, buf, (size_t)n, &f->peer,
                              f->peer_len); /* a full queue drops it */
            continue;
        }
        while (f->remote >= 0 &&
               send(f->remote, buf, (size_t)n, MSG_DONTWAIT) < 0) {
            if (errno == EINTR || (errno == EAGAIN && unix_room(f)))
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)
                remote_error(o, f, errno);
            break; /* a full buffer drops it, as the network may */
        }
    }
}

static uint32_t rmem_of(int fd)
{
    uint32_t mi[SK_MEMINFO_VARS];
    socklen_t l = sizeof(mi);
    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &l) < 0)
        return UINT32_MAX;
    return mi[SK_MEMINFO_RMEM_ALLOC];
}

/* Until the guest socket's receive memory changed from before (the
 * datagram is on its queue: hvrun alone runs the run, so nothing else
 * moves it), or a short while passed (a full queue drops it). */
static void wait_delivered(int guest_fd, uint32_t before)
{
    if (before == UINT32_MAX)
        return;
    int64_t until = outside_now_ns() + OUTSIDE_DELIVERY_WAIT_NS;
    while (rmem_of(guest_fd) == before && outside_now_ns() < until) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

static short revents_now(int fd, short events)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    return poll(&pfd, 1, 0) > 0 ? pfd.revents : 0;
}

/*
 * An error from the peer's side to the guest's connected socket, made by
 * the kernel: with the relay closed, an empty datagram from the guest's
 * socket to the relay's port comes back as ICMP port unreachable, which
 * sets the socket's error as the peer's did natively; then the relay is
 * bound again at the same port. An error already pending is left alone.
 */
static void give_error(struct proxy_world *w, struct outside_flow *f)
{
    int gfd = guest_fd_of(w, f);
    if (gfd < 0 || !f->connected || (revents_now(gfd, 0) & POLLERR))
        return;
    close(f->relay);
    f->relay = -1;
    /* AF_UNIX: the guest's socket is connected to the closed relay, so
     * the kernel gives its next send ECONNREFUSED and disconnects it, as
     * when the peer's socket went natively. */
    if (f->family != AF_UNIX &&
        send(gfd, "", 0, MSG_DONTWAIT | MSG_NOSIGNAL) == 0) {
        int64_t until = outside_now_ns() + OUTSIDE_DELIVERY_WAIT_NS;
        while (!(revents_now(gfd, 0) & POLLERR) && outside_now_ns() < until) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    int r = relay_socket(f->family, &f->relay_addr, &f->relay_len);
    f->relay = r < 0 ? -1 : r;
    if (r < 0 && w->nr_procs > 0)
        proxy_log(w->procs[0], 0, "outside datagrams %u: the relay could "
                  "not be bound again: %s", f->id, strerror(-r));
}

/* One datagram from the relay to the guest's socket. */
static ssize_t to_guest(struct outside_flow *f, const void *data, size_t len)
{
    return sendto_from(f->relay, f->cwd_fd, data, len, &f->guest_addr,
                       f->guest_len);
}

/* What came from the peer, in order, to the guest's socket. */
static void give_guest(struct proxy_world *w, struct outside_flow *f)
{
    while (f->q_len > 0 && f->relay >= 0) {
        struct dgram_pending *d = &f->q[0];
        if (d->err) {
            give_error(w, f);
            dequeue(f);
            continue;
        }
        if (!f->guest_len)
            return; /* the guest has sent nothing yet: kept */
        if (f->family == AF_UNIX && !unix_named(&f->guest_addr, f->guest_len)) {
            dequeue(f); /* an unnamed guest socket: no way back */
            continue;
        }
        int gfd = guest_fd_of(w, f);
        uint32_t before = rmem_of(gfd);
        ssize_t n = to_guest(f, d->data, d->len);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        /* An AF_UNIX datagram is on the guest's queue when sendto returns
         * (and charged to the sender's memory, not the guest's). */
        if (n >= 0 && f->family != AF_UNIX)
            wait_delivered(gfd, before);
        dequeue(f);
    }
}

void outside_udp_pump(struct proxy_outside *o, struct proxy_world *w,
                      bool both)
{
    for (size_t i = 0; i < o->nr_flows; i++) {
        struct outside_flow *f = o->flows[i];
        if (f->dead)
            continue;
        take_relay(o, f);
        if (both && outside_recording(o->tap))
            take_remote(o, f);
        if (both)
            give_guest(w, f);
    }
}

bool outside_udp_feed(struct proxy_outside *o, const struct proxy_link_event *e,
                      const void *data, size_t len)
{
    if (e->kind != PROXY_LINK_DGRAM && e->kind != PROXY_LINK_DGRAM_ERR)
        return false;
    struct outside_flow *f = flow_by_id(o, e->link);
    if (f && !f->dead)
        enqueue(f, data, e->kind == PROXY_LINK_DGRAM ? len : 0,
                e->kind == PROXY_LINK_DGRAM ? 0 : (int)e->value);
    return true;
}

int outside_udp_poll_fds(struct proxy_outside *o, struct pollfd *fds, int room,
                         bool remotes_only)
{
    int n = 0;
    for (size_t i = 0; i < o->nr_flows && n + 2 <= room; i++) {
        struct outside_flow *f = o->flows[i];
        if (f->remote >= 0)
            fds[n++] = (struct pollfd){f->remote, POLLIN, 0};
        if (f->relay >= 0 && !remotes_only)
            fds[n++] = (struct pollfd){f->relay, POLLIN, 0};
    }
    return n;
}

/* A flow of a peer that came to a socket the run bound (home). */
static struct outside_flow *inbound_flow(struct proxy_outside *o, uint32_t id,
                                         const struct outside_dgram_home *home,
                                         const struct sockaddr_storage *peer,
                                         socklen_t peer_len)
{
    struct outside_flow *f = calloc(1, sizeof(*f));
    if (!f || !flows_room(o)) {
        free(f);
        return NULL;
    }
    f->id = id;
    f->guest_ino = home->ino;
    f->guest_fd = home->fd;
    f->family = home->family;
    f->remote = -1;
    f->outer = home->outer >= 0 ? fcntl(home->outer, F_DUPFD_CLOEXEC, 0) : -1;
    f->peer = *peer;
    f->peer_len = peer_len;
    f->name = *peer;
    f->name_len = peer_len;
    f->cwd_fd = -1;
    f->guest_addr = home->addr;
    f->guest_len = home->len;
    f->relay = relay_socket(home->family, &f->relay_addr, &f->relay_len);
    if (f->relay < 0) {
        f->relay = -1;
        flow_close(f);
    }
    o->flows[o->nr_flows++] = f; /* kept: its id is in the recording */
    return f->dead ? NULL : f;
}

void outside_udp_arrived(struct proxy_outside *o, uint32_t home_id,
                         const struct outside_dgram_home *home,
                         const struct sockaddr_storage *peer,
                         socklen_t peer_len, const void *data, size_t len)
{
    struct outside_flow *f = flow_find(o, home->ino, peer, peer_len);
    if (!f) {
        uint32_t id = o->next_id++;
        outside_note(o, id, PROXY_LINK_DGRAM_IN, home_id, peer, peer_len);
        f = inbound_flow(o, id, home, peer, peer_len);
    }
    if (!f)
        return;
    outside_note(o, f->id, PROXY_LINK_DGRAM, 0, data, len);
    enqueue(f, data, len, 0);
}

void outside_udp_inbound(struct proxy_outside *o, uint32_t id,
                         const struct outside_dgram_home *home,
                         const struct sockaddr_storage *peer,
                         socklen_t peer_len)
{
    (void)inbound_flow(o, id, home, peer, peer_len);
}

void outside_udp_free(struct proxy_outside *o)
{
    for (size_t i = 0; i < o->nr_flows; i++) {
        flow_close(o->flows[i]);
        free(o->flows[i]->q);
        free(o->flows[i]);
    }
    free(o->flows);
    o->flows = NULL;
    o->nr_flows = o->cap_flows = 0;
}
