/*
 * outside_accept.c - listeners of the run (TCP over IPv4 or IPv6, AF_UNIX
 * stream and seqpacket sockets with a name) and the clients from outside
 * they accept, under hvrun record and replay (the bytes of such a
 * connection move as outside.c moves a connect's; a seqpacket listener's
 * stand-in and relays are seqpacket sockets).
 *
 * When a client from outside connects, and what it sends, is input from
 * outside the deterministic model. So at the guest's listen() hvrun puts a
 * stand-in in the guest socket's place (the same host fd number, so every
 * process and fd of the run that has it has the stand-in): a listener on
 * loopback at a port the host picks (AF_UNIX: an autobound abstract name),
 * with the socket's file flags and the options a connection inherits.
 * hvrun keeps the socket the guest bound (the "outer" one). Recording, the
 * outer one listens, and at points of the run's own progress (before each
 * guest syscall, and when nothing in the run can go on: hvrun then waits
 * on it too) hvrun accepts what came there: each client is a `link` event
 * (its address and the connection's own name) at the run's event count,
 * and hvrun's relay connects to the stand-in, where the guest accepts it;
 * hvrun holds the real client and moves bytes as for connects. Replaying,
 * the outer socket stays bound but does not listen (a client from outside
 * is refused, nothing from outside is reachable), and the recorded
 * clients "connect" to the stand-in at the same counts.
 *
 * Both ways the guest's listener and what it accepts are real sockets of
 * their family (poll, epoll, options and errors are the kernel's); the
 * names are rewritten: getsockname of the listener gives the name the
 * guest bound, accept's address and getpeername of an accepted client the
 * client's, getsockname of it the name the connection had (recorded).
 * Connects from inside the run to the listener's name are connected to
 * the stand-in (not relayed: both ends are in the run), their getpeername
 * and the accepted end's getsockname giving the listener's name (its
 * address loopback when it was bound to any).
 *
 * Not covered: a listener that was never named (an AF_UNIX one autobound
 * by listen: nobody outside knows its name), a socket added to an epoll
 * set before its listen() (the set keeps the outer socket), an AF_INET
 * client of a dual-stack IPv6 listener from inside the run (connected to
 * the outer socket: recording, relayed as a client from outside; a replay
 * refuses it), an AF_UNIX client inside the run that names the listener's
 * socket file by another relative path than the one it was bound by.
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "kernel.h"
#include "outside.h"
#include "outside_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "det.h"

struct outside_shadow {
    uint32_t id;
    int family;
    int type;            /* a listener's: SOCK_STREAM or SOCK_SEQPACKET */
    bool dgram;          /* a UDP socket the run bound, not a listener */
    int inner_fd;        /* hvrun's fd of the stand-in when last seen */
    uint64_t inner_ino;  /* the stand-in (fstat) */
    int outer;           /* the socket the guest bound, or -1: retired */
    struct sockaddr_storage name, inner; /* the guest's name, the stand-in's */
    socklen_t name_len, inner_len;
};

static struct outside_shadow *shadow_by_ino(struct proxy_outside *o,
                                            uint64_t ino)
{
    for (size_t i = 0; o && ino && i < o->nr_shadows; i++)
        if (o->shadows[i]->outer >= 0 && o->shadows[i]->inner_ino == ino)
            return o->shadows[i];
    return NULL;
}

static struct outside_shadow *shadow_by_id(struct proxy_outside *o,
                                           uint32_t id)
{
    for (size_t i = 0; i < o->nr_shadows; i++)
        if (o->shadows[i]->id == id)
            return o->shadows[i];
    return NULL;
}

/* hvrun's fd of s's stand-in, or -1: the run has closed it. */
static int inner_fd_of(struct proxy_world *w, struct outside_shadow *s)
{
    if (s->inner_fd >= 0 && outside_sock_ino(s->inner_fd) == s->inner_ino)
        return s->inner_fd;
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++)
            if (t->fds[k].kind == PROXY_FD_HOST &&
                outside_sock_ino(t->fds[k].host_fd) == s->inner_ino)
                return s->inner_fd = t->fds[k].host_fd;
    }
    return s->inner_fd = -1;
}

static void shadow_retire(struct outside_shadow *s)
{
    if (s->outer >= 0)
        close(s->outer);
    s->outer = -1;
}

/* Listeners the run has closed let go of their names (a bind of the
 * same port or path again must not find the outer socket there). */
static void retire_gone(struct proxy_outside *o, struct proxy_world *w)
{
    for (size_t i = 0; o && i < o->nr_shadows; i++)
        if (o->shadows[i]->outer >= 0 && inner_fd_of(w, o->shadows[i]) < 0)
            shadow_retire(o->shadows[i]);
}

void proxy_outside_before_bind(struct proxy_process *p)
{
    retire_gone(p->world->outside, p->world);
}

static struct outside_shadow *shadow_add(struct proxy_outside *o, uint32_t id)
{
    if (o->nr_shadows == o->cap_shadows) {
        size_t cap = o->cap_shadows ? 2 * o->cap_shadows : 4;
        void *n = realloc(o->shadows, cap * sizeof(*o->shadows));
        if (!n)
            return NULL;
        o->shadows = n;
        o->cap_shadows = cap;
    }
    struct outside_shadow *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->id = id;
    s->outer = s->inner_fd = -1;
    o->shadows[o->nr_shadows++] = s;
    return s;
}

/* The options an accepted connection inherits from its listener. */
static void copy_options(int from, int to, int family)
{
    static const struct { int level, name; } opts[] = {
        {SOL_SOCKET, SO_KEEPALIVE}, {SOL_SOCKET, SO_OOBINLINE},
        {SOL_SOCKET, SO_LINGER},    {SOL_SOCKET, SO_RCVBUF},
        {SOL_SOCKET, SO_SNDBUF},    {SOL_SOCKET, SO_PASSCRED},
        {SOL_SOCKET, SO_BROADCAST}, {IPPROTO_TCP, TCP_NODELAY},
        {IPPROTO_TCP, TCP_KEEPIDLE},
    };
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        if ((opts[i].level == IPPROTO_TCP) == (family == AF_UNIX))
            continue;
        union { int i; struct linger l; } v;
        socklen_t l = sizeof(v);
        if (getsockopt(from, opts[i].level, opts[i].name, &v, &l) < 0)
            continue;
        /* the kernel doubles what it is given: halve what it reports */
        if (opts[i].name == SO_RCVBUF || opts[i].name == SO_SNDBUF)
            v.i /= 2;
        (void)setsockopt(to, opts[i].level, opts[i].name, &v, l);
    }
}

/* A listener of type on loopback (AF_UNIX: an abstract name the kernel
 * picks), or a UDP socket there (dgram). */
static int stand_in_socket(int family, int type, bool dgram, int backlog,
                           int like)
{
    int in = socket(family, (dgram ? SOCK_DGRAM : type) | SOCK_CLOEXEC, 0);
    if (in < 0)
        return -errno;
    struct sockaddr_storage a;
    socklen_t al;
    if (family == AF_UNIX) {
        memset(&a, 0, sizeof(a));
        a.ss_family = AF_UNIX;
        al = sizeof(sa_family_t);
    } else {
        outside_loopback_addr(family, &a, &al);
    }
    copy_options(like, in, family);
    int fl = fcntl(like, F_GETFL);
    if (bind(in, (struct sockaddr *)&a, al) < 0 ||
        (!dgram && listen(in, backlog) < 0) ||
        fl < 0 || fcntl(in, F_SETFL, fl) < 0) {
        int e = -errno;
        close(in);
        return e;
    }
    return in;
}

/* host_fd becomes the stand-in; s keeps the socket it was (0 or -errno:
 * then host_fd is as it was). */
static int stand_in(struct outside_shadow *s, int host_fd, int backlog)
{
    int in = stand_in_socket(s->family, s->type, s->dgram, backlog, host_fd);
    if (in < 0)
        return in;
    int fdfl = fcntl(host_fd, F_GETFD);
    int outer = fcntl(host_fd, F_DUPFD_CLOEXEC, 0);
    if (fdfl < 0 || outer < 0 ||
        dup3(in, host_fd, (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
        int e = -errno;
        if (outer >= 0)
            close(outer);
        close(in);
        return e;
    }
    close(in);
    int ofl = fcntl(outer, F_GETFL); /* hvrun's alone now */
    if (ofl >= 0)
        (void)fcntl(outer, F_SETFL, ofl | O_NONBLOCK);
    s->outer = outer;
    s->inner_fd = host_fd;
    s->inner_ino = outside_sock_ino(host_fd);
    s->inner_len = sizeof(s->inner);
    (void)getsockname(host_fd, (struct sockaddr *)&s->inner, &s->inner_len);
    return 0;
}

/* Replaying: the recorded result of listen id (false: none here). */
static bool recorded_listen(struct proxy_outside *o, uint32_t id, long *ret)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (!o->tap->link_next(o->tap->ctx, &e, &data, &n) || e.link != id ||
        e.kind != PROXY_LINK_LISTEN)
        return false;
    *ret = (long)e.value;
    o->tap->link_taken(o->tap->ctx);
    return true;
}

/* A socket that may become a listener with a stand-in: a stream socket
 * (or an AF_UNIX seqpacket one) with a name, not listening yet, not a
 * stand-in already. */
static bool may_stand_in(struct proxy_outside *o, int host_fd, int *family,
                         int *type, struct sockaddr_storage *name,
                         socklen_t *len)
{
    int on = 0;
    socklen_t ol = sizeof(on);
    *len = sizeof(*name);
    return outside_relayed_socket(host_fd, family, type) &&
           !shadow_by_ino(o, outside_sock_ino(host_fd)) &&
           getsockopt(host_fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) == 0 &&
           !on && getsockname(host_fd, (struct sockaddr *)name, len) == 0 &&
           *len > sizeof(sa_family_t);
}

bool proxy_outside_listen(struct proxy_process *p, int host_fd, int backlog,
                          long *ret)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    int family, type;
    struct sockaddr_storage name;
    socklen_t name_len;
    if (!outside_recording(t) && !outside_replaying(t))
        return false;
    struct proxy_outside *o = outside_of(p);
    if (!o || !may_stand_in(o, host_fd, &family, &type, &name, &name_len))
        return false;
    retire_gone(o, p->world);
    uint32_t id = o->next_id++;
    if (outside_recording(t)) {
        *ret = listen(host_fd, backlog) < 0 ? -errno : 0;
        outside_note(o, id, PROXY_LINK_LISTEN, *ret, &name, name_len);
    } else if (!recorded_listen(o, id, ret)) {
        proxy_log(p, 0, "replay: listener %u was not in the recording", id);
        return false;
    }
    if (*ret < 0)
        return true;
    struct outside_shadow *s = shadow_add(o, id);
    int r = -ENOMEM;
    if (s) {
        s->family = family;
        s->type = type;
        s->name = name;
        s->name_len = name_len;
        r = stand_in(s, host_fd, backlog);
    }
    if (r < 0) {
        proxy_log(p, 0, "listener %u: no stand-in (%s): clients from "
                  "outside are not relayed", id, strerror(-r));
        if (outside_replaying(t))
            *ret = listen(host_fd, backlog) < 0 ? -errno : 0;
    }
    return true;
}

/* A socket whose bind makes a server of datagrams from outside: UDP
 * (IPv4, IPv6), or AF_UNIX SOCK_DGRAM with a name (a path, an abstract
 * name, an autobound one); its family and name. */
static bool bound_dgram_socket(int fd, int *family,
                               struct sockaddr_storage *name, socklen_t *len)
{
    int type = 0, proto = 0;
    socklen_t l = sizeof(int);
    *len = sizeof(*name);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_DOMAIN, family, &l) < 0 ||
        type != SOCK_DGRAM ||
        getsockname(fd, (struct sockaddr *)name, len) < 0)
        return false;
    if (*family == AF_UNIX)
        return *len > offsetof(struct sockaddr_un, sun_path);
    return proto == IPPROTO_UDP && (*family == AF_INET || *family == AF_INET6);
}

/* Replaying an AF_UNIX datagram socket's bind: whether the recording has
 * its L event here (a recording made before these were relayed has none:
 * then the socket is left as it was, and id is given back, so the
 * numbers of the links after it stay the recorded ones). */
static bool unix_bind_recorded(struct proxy_outside *o, uint32_t id)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (o->tap->link_next(o->tap->ctx, &e, &data, &n) && e.link == id &&
        e.kind == PROXY_LINK_LISTEN && e.pos == o->det->events) {
        o->tap->link_taken(o->tap->ctx);
        return true;
    }
    o->next_id--;
    return false;
}

#ifndef IPV6_MULTICAST_ALL
#define IPV6_MULTICAST_ALL 29 /* linux/in6.h */
#endif

/*
 * The group datagrams a bound UDP socket joins come to the socket the
 * guest bound, which hvrun reads: the guest's IP_ADD_MEMBERSHIP or
 * IPV6_JOIN_GROUP is the stand-in's (on loopback, another port), and
 * joins the group on the host's interface; the bound socket takes every
 * group joined there at its port (IP_MULTICAST_ALL, Linux's default,
 * made sure here: a guest's 0 set before the bind would leave it none).
 */
static void multicast_all(int outer, int family)
{
    int on = 1;
    if (family == AF_INET)
        (void)setsockopt(outer, IPPROTO_IP, IP_MULTICAST_ALL, &on, sizeof(on));
    else
        (void)setsockopt(outer, IPPROTO_IPV6, IPV6_MULTICAST_ALL, &on,
                         sizeof(on));
}

void proxy_outside_bound(struct proxy_process *p, int host_fd)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    int family;
    struct sockaddr_storage name;
    socklen_t name_len;
    long ret = 0;
    if ((!outside_recording(t) && !outside_replaying(t)) ||
        !bound_dgram_socket(host_fd, &family, &name, &name_len))
        return;
    struct proxy_outside *o = outside_of(p);
    if (!o)
        return;
    uint32_t id = o->next_id++;
    if (outside_recording(t)) {
        outside_note(o, id, PROXY_LINK_LISTEN, 0, &name, name_len);
    } else if (family == AF_UNIX) {
        if (!unix_bind_recorded(o, id))
            return;
    } else if (!recorded_listen(o, id, &ret)) {
        proxy_log(p, 0, "replay: bound socket %u was not in the recording",
                  id);
        return;
    }
    struct outside_shadow *s = shadow_add(o, id);
    int r = -ENOMEM;
    if (s) {
        s->family = family;
        s->dgram = true;
        s->name = name;
        s->name_len = name_len;
        r = stand_in(s, host_fd, 0);
    }
    if (r < 0) {
        proxy_log(p, 0, "bound socket %u: no stand-in (%s): datagrams from "
                  "outside are not relayed", id, strerror(-r));
        return;
    }
    if (family != AF_UNIX)
        multicast_all(s->outer, family);
    /* Replaying, nothing from outside may come: an AF_UNIX sender to the
     * bound name is refused (EPIPE: the kernel's answer for a receiver
     * that shut its reading down) rather than queued; a UDP one is not
     * read (no answer). */
    else if (outside_replaying(t))
        (void)shutdown(s->outer, SHUT_RD);
}

/* What the flows of s's peers need of it. */
static void home_of(struct proxy_outside *o, struct outside_shadow *s,
                    int inner_fd, struct outside_dgram_home *h)
{
    h->family = s->family;
    h->ino = s->inner_ino;
    h->fd = inner_fd;
    h->addr = s->inner;
    h->len = s->inner_len;
    h->outer = outside_recording(o->tap) ? s->outer : -1;
}

/* Recording: the datagrams from outside that came to s. */
static void take_datagrams(struct proxy_outside *o, struct proxy_world *w,
                           struct outside_shadow *s)
{
    while (s->outer >= 0) {
        struct sockaddr_storage peer;
        socklen_t pl = sizeof(peer);
        size_t room;
        uint8_t *buf = outside_dgram_buffer(s->outer, s->family, &room);
        memset(&peer, 0, sizeof(peer));
        ssize_t n = recvfrom(s->outer, buf, room, MSG_DONTWAIT,
                             (struct sockaddr *)&peer, &pl);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0)
            continue; /* an error of a reply's (taken; Linux without
                         IP_RECVERR tells an unconnected socket nothing) */
        if (pl < sizeof(sa_family_t)) { /* an unnamed AF_UNIX sender: */
            peer.ss_family = (sa_family_t)s->family; /* no address, */
            pl = 0; /* as the guest's recvfrom gets natively */
        }
        int inner = inner_fd_of(w, s);
        if (inner < 0) {
            shadow_retire(s);
            return;
        }
        struct outside_dgram_home h;
        home_of(o, s, inner, &h);
        outside_udp_arrived(o, s->id, &h, &peer, pl, buf, (size_t)n);
    }
}

/* data of an accept event: u32 client address length, the address, the
 * connection's own name. */
static size_t accept_data(uint8_t *out, const struct sockaddr_storage *peer,
                          socklen_t pl, const struct sockaddr_storage *local,
                          socklen_t ll)
{
    uint32_t n = pl;
    memcpy(out, &n, 4);
    memcpy(out + 4, peer, pl);
    memcpy(out + 4 + pl, local, ll);
    return 4 + (size_t)pl + ll;
}

void outside_accept_take(struct proxy_outside *o, struct proxy_world *w)
{
    for (size_t i = 0; i < o->nr_shadows; i++) {
        struct outside_shadow *s = o->shadows[i];
        if (s->dgram)
            take_datagrams(o, w, s);
        while (!s->dgram && s->outer >= 0) {
            struct sockaddr_storage peer, local;
            socklen_t pl = sizeof(peer), ll = sizeof(local);
            int c = accept4(s->outer, (struct sockaddr *)&peer, &pl,
                            SOCK_CLOEXEC);
            if (c < 0 && (errno == EINTR || errno == ECONNABORTED))
                continue;
            if (c < 0)
                break;
            int inner = inner_fd_of(w, s);
            if (inner < 0 || getsockname(c, (struct sockaddr *)&local,
                                         &ll) < 0) {
                close(c); /* the run closed its listener: nobody takes it */
                if (inner < 0)
                    shadow_retire(s);
                continue;
            }
            uint8_t data[4 + 2 * sizeof(struct sockaddr_storage)];
            size_t n = accept_data(data, &peer, pl, &local, ll);
            uint32_t id = o->next_id++;
            outside_note(o, id, PROXY_LINK_ACCEPT, s->id, data, n);
            outside_link_accepted(o, id, s->family, s->type, c, &peer, pl,
                                  &local, ll, inner);
        }
    }
}

bool outside_accept_feed(struct proxy_outside *o, struct proxy_world *w,
                         const struct proxy_link_event *e, const void *data,
                         size_t len)
{
    if (e->kind == PROXY_LINK_DGRAM_IN) {
        struct sockaddr_storage peer;
        struct outside_shadow *s = shadow_by_id(o, (uint32_t)e->value);
        int inner = s && s->outer >= 0 ? inner_fd_of(w, s) : -1;
        if (e->link >= o->next_id)
            o->next_id = e->link + 1;
        if (inner < 0 || len > sizeof(peer))
            return true;
        struct outside_dgram_home h;
        home_of(o, s, inner, &h);
        memset(&peer, 0, sizeof(peer));
        peer.ss_family = (sa_family_t)s->family; /* len 0: unnamed */
        memcpy(&peer, data, len);
        outside_udp_inbound(o, e->link, &h, &peer, (socklen_t)len);
        return true;
    }
    if (e->kind != PROXY_LINK_ACCEPT)
        return false;
    struct sockaddr_storage peer, local;
    uint32_t pl;
    memset(&peer, 0, sizeof(peer));
    memset(&local, 0, sizeof(local));
    if (len < 4)
        return true;
    memcpy(&pl, data, 4);
    if (pl > sizeof(peer) || len - 4 < pl || len - 4 - pl > sizeof(local))
        return true;
    memcpy(&peer, (const uint8_t *)data + 4, pl);
    memcpy(&local, (const uint8_t *)data + 4 + pl, len - 4 - pl);
    if (e->link >= o->next_id)
        o->next_id = e->link + 1;
    struct outside_shadow *s = shadow_by_id(o, (uint32_t)e->value);
    int inner = s && s->outer >= 0 ? inner_fd_of(w, s) : -1;
    outside_link_accepted(o, e->link, s ? s->family : peer.ss_family,
                          s ? s->type : SOCK_STREAM, -1,
                          &peer, pl, &local, (socklen_t)(len - 4 - pl),
                          inner);
    return true;
}

int outside_accept_poll_fds(struct proxy_outside *o, struct proxy_world *w,
                            struct pollfd *fds, int room)
{
    int n = 0;
    if (!outside_recording(o->tap))
        return 0;
    retire_gone(o, w);
    for (size_t i = 0; i < o->nr_shadows && n < room; i++)
        if (o->shadows[i]->outer >= 0)
            fds[n++] = (struct pollfd){o->shadows[i]->outer, POLLIN, 0};
    return n;
}

static bool inet_any_addr(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               htonl(INADDR_ANY);
    return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

static bool inet_loopback_addr(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >>
                24) == 127;
    const struct in6_addr *a6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a6) ||
           (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

/* Whether a connect to dst reaches listener s (as it would natively). */
static bool reaches(const struct outside_shadow *s, bool dgram,
                    const struct sockaddr *dst, socklen_t dst_len)
{
    if (s->outer < 0 || s->dgram != dgram || dst->sa_family != s->family)
        return false;
    if (s->family == AF_UNIX)
        return outside_unix_same_listener((const struct sockaddr_un *)&s->name,
                                          s->name_len, dst, dst_len);
    struct sockaddr_storage d;
    memset(&d, 0, sizeof(d));
    memcpy(&d, dst, dst_len < sizeof(d) ? dst_len : sizeof(d));
    struct sockaddr_storage any = d; /* d with the listener's address */
    if (s->family == AF_INET)
        ((struct sockaddr_in *)&any)->sin_addr =
            ((const struct sockaddr_in *)&s->name)->sin_addr;
    else
        ((struct sockaddr_in6 *)&any)->sin6_addr =
            ((const struct sockaddr_in6 *)&s->name)->sin6_addr;
    if (!outside_addr_same(&any, dst_len, &s->name, s->name_len))
        return false; /* another port */
    return inet_any_addr(&s->name) ||
           outside_addr_same(&d, dst_len, &s->name, s->name_len) ||
           (inet_loopback_addr(&d) && inet_loopback_addr(&s->name));
}

bool outside_accept_redirect(struct proxy_outside *o, struct proxy_world *w,
                             bool dgram, const struct sockaddr *dst,
                             socklen_t dst_len, struct sockaddr_storage *via,
                             socklen_t *via_len)
{
    for (size_t i = 0; i < o->nr_shadows; i++) {
        struct outside_shadow *s = o->shadows[i];
        /* one the run has closed is not reached (retired or not yet:
         * when is hvrun's, whether is the run's) */
        if (!reaches(s, dgram, dst, dst_len) || inner_fd_of(w, s) < 0)
            continue;
        *via = s->inner;
        *via_len = s->inner_len;
        return true;
    }
    return false;
}

bool outside_accept_name(struct proxy_outside *o, struct sockaddr_storage *sa,
                         socklen_t *len, bool connection)
{
    for (size_t i = 0; i < o->nr_shadows; i++) {
        struct outside_shadow *s = o->shadows[i];
        if (!s->inner_len ||
            !outside_addr_same(&s->inner, s->inner_len, sa, *len))
            continue;
        *sa = s->name;
        *len = s->name_len;
        if (connection && s->family != AF_UNIX && inet_any_addr(sa)) {
            struct sockaddr_storage lo;
            socklen_t lol;
            outside_loopback_addr(s->family, &lo, &lol);
            if (s->family == AF_INET)
                ((struct sockaddr_in *)sa)->sin_addr =
                    ((struct sockaddr_in *)&lo)->sin_addr;
            else
                ((struct sockaddr_in6 *)sa)->sin6_addr =
                    ((struct sockaddr_in6 *)&lo)->sin6_addr;
        }
        return true;
    }
    return false;
}

bool proxy_outside_sockname(struct proxy_world *w, int host_fd,
                            struct sockaddr_storage *name, socklen_t *len)
{
    struct proxy_outside *o = w->outside;
    struct sockaddr_storage sa, pr, peer;
    socklen_t sl = sizeof(sa), prl = sizeof(pr), pel;
    if (!o || !o->nr_shadows ||
        getsockname(host_fd, (struct sockaddr *)&sa, &sl) < 0)
        return false;
    bool connection = getpeername(host_fd, (struct sockaddr *)&pr, &prl) == 0;
    if (connection &&
        outside_link_by_relay(o, &pr, prl, &peer, &pel, name, len))
        return true; /* a client from outside: the name it reached */
    if (!outside_accept_name(o, &sa, &sl, connection))
        return false;
    *name = sa;
    *len = sl;
    return true;
}

void proxy_outside_accepted_peer(struct proxy_world *w,
                                 struct sockaddr_storage *a, socklen_t *len)
{
    struct proxy_outside *o = w->outside;
    struct sockaddr_storage peer, local;
    socklen_t pl, ll;
    if (o && o->nr_shadows &&
        outside_link_by_relay(o, a, *len, &peer, &pl, &local, &ll)) {
        *a = peer;
        *len = pl;
    }
}

void outside_accept_free(struct proxy_outside *o)
{
    for (size_t i = 0; i < o->nr_shadows; i++) {
        shadow_retire(o->shadows[i]);
        free(o->shadows[i]);
    }
    free(o->shadows);
    o->shadows = NULL;
    o->nr_shadows = o->cap_shadows = 0;
}
