/*
 * outside.c - stream connections from the run to a peer outside it (TCP
 * over IPv4 or IPv6, and AF_UNIX stream and seqpacket sockets to a path
 * or an abstract name where no listener of the run is), under hvrun
 * record and replay; the datagram sockets' peers are outside_udp.c's.
 * A seqpacket connection keeps its boundaries: its relay and hvrun's
 * socket to the peer are seqpacket ones, each message is read whole and
 * is one event, given as one message (read_message says how an empty
 * message is told from the end).
 *
 * What such a peer sends, and when the guest can first see it, is input
 * from outside the deterministic model. So under record and replay the
 * guest's socket does not reach the peer itself: hvrun connects it to a
 * relay of its own (a listener made for that one connect: on loopback
 * for TCP, an autobound abstract name for AF_UNIX), keeps the relay's
 * end, and moves bytes between the relay and the peer only at points of
 * the run's own progress: before each guest syscall, and when nothing in
 * the run can go on. Recording, each piece of data (and the end) that
 * came in is an event with the run's event count at that point;
 * replaying, there is no peer: the recorded events are given to the
 * relay at the same counts, and what the guest sends is dropped. Both
 * ways the guest's socket is a real socket of its family (its options,
 * its poll bits, its errors are the kernel's), with getpeername showing
 * the peer (TCP: the address it asked for; AF_UNIX: the name the peer's
 * listener has, as getpeername on hvrun's own connection said when
 * recording). After writing to a TCP relay hvrun waits (briefly) until
 * the guest's end has taken the bytes, so a guest call after the pump
 * sees them whether or not the host was loaded; an AF_UNIX send is on the
 * guest's queue when it returns. A timed wait of the run's for an fd
 * (poll with a timeout, SO_RCVTIMEO) waits for the peers before its
 * deadline passes (proxy_outside_await), recording; the replay follows.
 *
 * File descriptors an outside peer passes (SCM_RIGHTS) are not relayed:
 * hvrun closes them at once and says so (once per connection); the bytes
 * that came with them are. Those the guest passes to it are dropped with
 * the relay's read, as its credentials (SO_PEERCRED shows hvrun).
 *
 * A client from outside that a listener of the run accepts is a link
 * too (outside_accept.c takes it; its relay connects to the listener's
 * stand-in, and the guest accepts that): its bytes move the same way.
 *
 * Not relayed (connected as before, the host's answer): a connect to a
 * listener of the run itself (both ends are in the run; for AF_UNIX a
 * listener bound to the same name, or to the same file; one that has a
 * stand-in is connected to that), other socket types and families.
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "kernel.h"
#include "net.h"
#include "outside.h"
#include "outside_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "det.h"

/* A message of a seqpacket connection's peer not yet given to the relay
 * (its bytes whole: a message may be empty). */
struct outside_message {
    uint8_t *data;
    size_t len;
};

struct outside_link {
    uint32_t id;
    int family;           /* AF_INET, AF_INET6 or AF_UNIX */
    int type;             /* SOCK_STREAM, or SOCK_SEQPACKET (AF_UNIX) */
    uint64_t guest_ino;   /* the guest's socket (fstat), for getpeername */
    int listener;         /* the relay's listener until the connect, or -1 */
    int relay;            /* hvrun's end of the guest's connection, or -1 */
    int remote;           /* recording: the connection to the peer, or -1 */
    struct sockaddr_storage peer, via; /* via: the relay's listener */
    socklen_t peer_len, via_len;
    uint8_t *in;          /* bytes from the peer not yet given to the relay */
    size_t in_len, in_off;
    struct outside_message *msgs; /* seqpacket: what came in, instead */
    size_t nr_msgs, msgs_head, msgs_cap;
    bool in_end;          /* the peer closed or failed: in_err 0 / -errno */
    int in_err;
    bool end_passed;      /* ... and the guest's end was told */
    bool out_end;         /* the guest will send nothing more */
    bool rights_said;     /* the peer's SCM_RIGHTS were refused, and said */
    bool accepted;        /* a client from outside of a listener of the run */
    bool fifo;            /* a FIFO to a process outside (outside_fifo.c):
                             relay and remote are pipe and FIFO ends */
    struct sockaddr_storage relay_name, local; /* accepted: the relay's own
                             name (the guest's end's peer), the name the
                             connection had at the listener's host */
    socklen_t relay_name_len, local_len;
};

bool outside_recording(const struct proxy_file_tap *t)
{
    return t && t->link_noted;
}

bool outside_replaying(const struct proxy_file_tap *t)
{
    return t && t->link_next;
}

int64_t outside_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t outside_sock_ino(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static uint16_t addr_port(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
}

/* An AF_UNIX name's path as a C string (sun_path need not end in NUL). */
static void unix_path(const struct sockaddr_un *a, socklen_t len,
                      char out[sizeof(a->sun_path) + 1])
{
    size_t n = len > offsetof(struct sockaddr_un, sun_path)
                   ? len - offsetof(struct sockaddr_un, sun_path)
                   : 0;
    if (n > sizeof(a->sun_path))
        n = sizeof(a->sun_path);
    memcpy(out, a->sun_path, n);
    out[n] = '\0';
}

/* Whether the listener named (name, name_len) is what a connect to dst
 * reaches: the same abstract name, or the same path or socket file (a
 * relative name is looked up from hvrun's cwd: the connecting guest's
 * for a relative dst). */
bool outside_unix_same_listener(const struct sockaddr_un *name,
                                socklen_t name_len, const struct sockaddr *dst,
                                socklen_t dst_len)
{
    const struct sockaddr_un *d = (const struct sockaddr_un *)dst;
    if (d->sun_path[0] == '\0' || name->sun_path[0] == '\0')
        return d->sun_path[0] == name->sun_path[0] && name_len == dst_len &&
               !memcmp(d->sun_path, name->sun_path,
                       dst_len - offsetof(struct sockaddr_un, sun_path));
    char a[sizeof(d->sun_path) + 1], b[sizeof(d->sun_path) + 1];
    unix_path(d, dst_len, a);
    unix_path(name, name_len, b);
    struct stat sa, sb;
    return !strcmp(a, b) || (stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
                             sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/* Whether a listening socket of the run is what dst reaches (for TCP:
 * serves dst's port): then both ends are in the run and nothing comes
 * from outside. */
static bool run_listens_on(struct proxy_world *w, const struct sockaddr *dst,
                           socklen_t dst_len)
{
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++) {
            if (t->fds[k].kind != PROXY_FD_HOST)
                continue;
            int fd = t->fds[k].host_fd, on = 0;
            socklen_t ol = sizeof(on);
            struct sockaddr_storage ss;
            socklen_t sl = sizeof(ss);
            if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) < 0 ||
                !on || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
                continue;
            if (dst->sa_family == AF_UNIX && ss.ss_family == AF_UNIX &&
                outside_unix_same_listener((struct sockaddr_un *)&ss, sl, dst,
                                           dst_len))
                return true;
            if (dst->sa_family != AF_UNIX &&
                (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) &&
                addr_port((struct sockaddr *)&ss) == addr_port(dst))
                return true;
        }
    }
    return false;
}

bool outside_stream_socket(int fd, int *family)
{
    int type = 0, proto = 0, dom = 0;
    socklen_t l = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) < 0)
        return false;
    *family = dom;
    return type == SOCK_STREAM &&
           (dom == AF_UNIX ||
            (proto == IPPROTO_TCP && (dom == AF_INET || dom == AF_INET6)));
}

bool outside_relayed_socket(int fd, int *family, int *type)
{
    socklen_t l = sizeof(*type);
    if (outside_stream_socket(fd, family)) {
        *type = SOCK_STREAM;
        return true;
    }
    return *family == AF_UNIX &&
           getsockopt(fd, SOL_SOCKET, SO_TYPE, type, &l) == 0 &&
           *type == SOCK_SEQPACKET;
}

struct proxy_outside *outside_of(struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    if (!w->outside) {
        w->outside = calloc(1, sizeof(*w->outside));
        if (w->outside) {
            w->outside->det = p->det;
            w->outside->tap = p->cfg->file_tap;
        }
    }
    return w->outside;
}

static struct outside_link *link_by_ino(struct proxy_outside *o, uint64_t ino)
{
    for (size_t i = 0; o && ino && i < o->nr; i++)
        if (o->links[i].guest_ino == ino)
            return &o->links[i];
    return NULL;
}

static struct outside_link *link_by_id(struct proxy_outside *o, uint32_t id)
{
    for (size_t i = 0; o && i < o->nr; i++)
        if (o->links[i].id == id)
            return &o->links[i];
    return NULL;
}

void outside_note(struct proxy_outside *o, uint32_t id, uint8_t kind,
                  int64_t value, const void *data, size_t len)
{
    struct proxy_link_event e = {.link = id, .kind = kind,
                                 .pos = o->det->events, .value = value};
    o->tap->link_noted(o->tap->ctx, &e, data, len);
}

void outside_loopback_addr(int family, struct sockaddr_storage *a,
                           socklen_t *len)
{
    memset(a, 0, sizeof(*a));
    if (family == AF_INET) {
        struct sockaddr_in *a4 = (struct sockaddr_in *)a;
        a4->sin_family = AF_INET;
        a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        *len = sizeof(*a4);
    } else {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)a;
        a6->sin6_family = AF_INET6;
        a6->sin6_addr = in6addr_loopback;
        *len = sizeof(*a6);
    }
}

/* A listener for the guest's socket to connect to, its address in *via:
 * on loopback in dst's family, or (AF_UNIX) an abstract name the kernel
 * picks (autobind), so nothing appears in the filesystem. */
static int relay_listener(int family, int type, struct sockaddr_storage *via,
                          socklen_t *via_len)
{
    int l = socket(family, type | SOCK_CLOEXEC, 0);
    if (l < 0)
        return -errno;
    if (family == AF_UNIX) {
        memset(via, 0, sizeof(*via));
        via->ss_family = AF_UNIX;
        *via_len = sizeof(sa_family_t);
    } else {
        outside_loopback_addr(family, via, via_len);
    }
    socklen_t room = sizeof(*via);
    if (bind(l, (struct sockaddr *)via, *via_len) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)via, &room) < 0) {
        int e = -errno;
        close(l);
        return e;
    }
    *via_len = room;
    return l;
}

static struct outside_link *link_add(struct proxy_outside *o, uint32_t id)
{
    if (o->nr == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 4;
        void *n = realloc(o->links, cap * sizeof(*o->links));
        if (!n)
            return NULL;
        o->links = n;
        o->cap = cap;
    }
    struct outside_link *l = &o->links[o->nr++];
    memset(l, 0, sizeof(*l));
    l->id = id;
    l->type = SOCK_STREAM;
    l->listener = l->relay = l->remote = -1;
    return l;
}

/* Recording: the connect to the peer itself, blocking (the run waits
 * for it, as a blocking guest would). */
static long connect_remote(const struct sockaddr *dst, socklen_t len,
                           int family, int type, int *remote)
{
    int r = socket(family, type | SOCK_CLOEXEC, 0);
    if (r < 0)
        return -errno;
    while (connect(r, dst, len) < 0) {
        if (errno == EINTR)
            continue;
        long e = -errno;
        close(r);
        return e;
    }
    *remote = r;
    return 0;
}

/* Replaying: the recorded result of the connect, link id's first event. */
static bool recorded_connect(struct proxy_outside *o, uint32_t id, long *ret,
                             struct sockaddr_storage *peer, socklen_t *len)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (!o->tap->link_next(o->tap->ctx, &e, &data, &n) || e.link != id ||
        e.kind != PROXY_LINK_CONNECT || n > sizeof(*peer))
        return false;
    *ret = (long)e.value;
    memcpy(peer, data, n);
    *len = (socklen_t)n;
    o->tap->link_taken(o->tap->ctx);
    return true;
}

/* The shortest dst a connect of family may be relayed for (0: none): a
 * whole inet address, an AF_UNIX name of one byte or more. */
static socklen_t dst_len_needed(const struct sockaddr *dst, socklen_t len)
{
    if (len < sizeof(sa_family_t))
        return 0;
    switch (dst->sa_family) {
    case AF_INET:
        return sizeof(struct sockaddr_in);
    case AF_INET6:
        return sizeof(struct sockaddr_in6);
    case AF_UNIX:
        return offsetof(struct sockaddr_un, sun_path) + 1;
    default:
        return 0;
    }
}

/* Recording: the peer as the guest's getpeername is to show it. TCP:
 * the address connected to; AF_UNIX: the name the peer's listener has
 * (not always the one the guest gave: a relative path, a symlink). */
static void remote_peer_name(int remote, const struct sockaddr *dst,
                             socklen_t dst_len, struct sockaddr_storage *peer,
                             socklen_t *peer_len)
{
    socklen_t n = sizeof(*peer);
    if (dst->sa_family == AF_UNIX && remote >= 0 &&
        getpeername(remote, (struct sockaddr *)peer, &n) == 0) {
        *peer_len = n;
        return;
    }
    memcpy(peer, dst, dst_len);
    *peer_len = dst_len;
}

bool proxy_outside_connect(struct proxy_process *p, int host_fd,
                           const struct sockaddr *dst, socklen_t dst_len,
                           struct sockaddr_storage *via, socklen_t *via_len,
                           long *ret)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    int family, type;
    if (!outside_recording(t) && !outside_replaying(t))
        return false;
    if (outside_udp_connect(p, host_fd, dst, dst_len, via, via_len, ret))
        return true; /* a UDP socket's, to outside */
    socklen_t need = dst_len_needed(dst, dst_len);
    if (!need || dst_len < need || dst_len > sizeof(*via) ||
        !outside_relayed_socket(host_fd, &family, &type) ||
        family != dst->sa_family)
        return false;
    struct proxy_outside *o = outside_of(p);
    if (!o)
        return false;
    if (outside_accept_redirect(o, p->world, false, dst, dst_len, via,
                                via_len)) {
        *ret = 0; /* to a listener of the run: its stand-in */
        return true;
    }
    struct outside_link *l = link_by_ino(o, outside_sock_ino(host_fd));
    if (l) { /* the call runs again (it waited): the same relay */
        *via = l->via;
        *via_len = l->via_len;
        *ret = 0;
        return true;
    }
    if (run_listens_on(p->world, dst, dst_len))
        return false;
    uint32_t id = o->next_id;
    int remote = -1;
    struct sockaddr_storage peer;
    socklen_t peer_len = dst_len;
    memcpy(&peer, dst, dst_len);
    if (outside_recording(t)) {
        *ret = connect_remote(dst, dst_len, family, type, &remote);
        remote_peer_name(remote, dst, dst_len, &peer, &peer_len);
        outside_note(o, id, PROXY_LINK_CONNECT, *ret, &peer, peer_len);
    } else if (!recorded_connect(o, id, ret, &peer, &peer_len)) {
        proxy_log(p, 0, "replay: connection %u to outside the run was not "
                  "in the recording", id);
        *ret = -ECONNREFUSED;
        o->next_id++;
        return true;
    }
    o->next_id++;
    if (*ret < 0)
        return true;
    int lfd = relay_listener(family, type, via, via_len);
    if (lfd < 0 || !(l = link_add(o, id))) {
        if (lfd >= 0)
            close(lfd);
        if (remote >= 0)
            close(remote);
        *ret = lfd < 0 ? lfd : -ENOMEM;
        return true;
    }
    l->guest_ino = outside_sock_ino(host_fd);
    l->family = family;
    l->type = type;
    l->listener = lfd;
    l->remote = remote;
    l->peer = peer;
    l->peer_len = peer_len;
    l->via = *via;
    l->via_len = *via_len;
    return true;
}

void proxy_outside_connected(struct proxy_process *p, int host_fd)
{
    struct outside_link *l =
        link_by_ino(p->world->outside, outside_sock_ino(host_fd));
    if (!l || l->listener < 0)
        return;
    /* The handshake is the kernel's, on loopback: it is done or about to
     * be whatever the guest's connect returned. */
    struct pollfd pfd = {.fd = l->listener, .events = POLLIN};
    if (poll(&pfd, 1, 2000) > 0)
        l->relay = accept4(l->listener, NULL, NULL,
                           SOCK_CLOEXEC | SOCK_NONBLOCK);
    close(l->listener);
    l->listener = -1;
    if (l->relay < 0) {
        proxy_log(p, 0, "outside connection %u: the relay got no connection",
                  l->id);
        return;
    }
    int one = 1;
    if (l->family != AF_UNIX)
        (void)setsockopt(l->relay, IPPROTO_TCP, TCP_NODELAY, &one,
                         sizeof(one));
    /* Each message the guest sends then comes with its credentials, an
     * empty one too, and its end without: so they can be told apart. */
    if (l->type == SOCK_SEQPACKET)
        (void)setsockopt(l->relay, SOL_SOCKET, SO_PASSCRED, &one,
                         sizeof(one));
}

bool outside_addr_same(const struct sockaddr_storage *a, socklen_t alen,
                       const struct sockaddr_storage *b, socklen_t blen)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_UNIX)
        return alen == blen && !memcmp(a, b, alen);
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port &&
               x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
        return x->sin6_port == y->sin6_port &&
               !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
    }
    return false;
}

bool outside_link_by_relay(struct proxy_outside *o,
                           const struct sockaddr_storage *relay,
                           socklen_t relay_len, struct sockaddr_storage *peer,
                           socklen_t *peer_len, struct sockaddr_storage *local,
                           socklen_t *local_len)
{
    for (size_t i = 0; o && i < o->nr; i++) {
        struct outside_link *l = &o->links[i];
        if (!l->accepted || !l->relay_name_len ||
            !outside_addr_same(&l->relay_name, l->relay_name_len, relay,
                               relay_len))
            continue;
        *peer = l->peer;
        *peer_len = l->peer_len;
        *local = l->local;
        *local_len = l->local_len;
        return true;
    }
    return false;
}

/* A connection to a listener of the run that has a stand-in: the end of
 * an accepted client's relay (its client), or a connection made inside
 * the run to the stand-in (the listener's name). */
static bool stand_in_peer(struct proxy_outside *o, int host_fd,
                          struct sockaddr_storage *peer, socklen_t *len)
{
    struct sockaddr_storage pr, local;
    socklen_t prl = sizeof(pr), ll;
    if (!o || !o->nr_shadows ||
        getpeername(host_fd, (struct sockaddr *)&pr, &prl) < 0)
        return false;
    if (outside_link_by_relay(o, &pr, prl, peer, len, &local, &ll))
        return true;
    if (!outside_accept_name(o, &pr, &prl, true))
        return false;
    *peer = pr;
    *len = prl;
    return true;
}

bool proxy_outside_peer(struct proxy_world *w, int host_fd,
                        struct sockaddr_storage *peer, socklen_t *len)
{
    uint64_t ino = outside_sock_ino(host_fd);
    struct outside_link *l = link_by_ino(w->outside, ino);
    if (!l)
        return w->outside && (outside_udp_peer(w->outside, ino, peer, len) ||
                              stand_in_peer(w->outside, host_fd, peer, len));
    *peer = l->peer;
    *len = l->peer_len;
    return true;
}

/* How many connections the TCP listener fd has queued (its accept
 * queue: TCP_INFO's unacked for a listener), or -1. */
static int tcp_queued(int fd)
{
    struct tcp_info ti;
    socklen_t l = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
        return -1;
    return (int)ti.tcpi_unacked;
}

/* The relay's connect to the guest's listener (its stand-in, inner_fd):
 * done when the listener has it queued, so the guest's next accept and
 * poll see it whatever the host's load (AF_UNIX: queued by the connect). */
static int relay_connect(int family, int type, int inner_fd)
{
    struct sockaddr_storage in;
    socklen_t il = sizeof(in);
    if (getsockname(inner_fd, (struct sockaddr *)&in, &il) < 0)
        return -errno;
    int r = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (r < 0)
        return -errno;
    struct sockaddr_un autobind = {.sun_family = AF_UNIX};
    if (family == AF_UNIX && /* named, so the guest's end can be told */
        bind(r, (struct sockaddr *)&autobind, sizeof(sa_family_t)) < 0) {
        int e = -errno;
        close(r);
        return e;
    }
    int before = family == AF_UNIX ? -1 : tcp_queued(inner_fd);
    if (connect(r, (struct sockaddr *)&in, il) < 0 && errno != EINPROGRESS) {
        int e = -errno;
        close(r);
        return e;
    }
    int64_t until = outside_now_ns() + OUTSIDE_DELIVERY_WAIT_NS;
    while (before >= 0 && tcp_queued(inner_fd) <= before &&
           outside_now_ns() < until) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    return r;
}

void outside_link_fifo(struct proxy_outside *o, uint32_t id, bool reader,
                       int remote, int relay)
{
    struct outside_link *l = link_add(o, id);
    if (!l) {
        if (remote >= 0)
            close(remote);
        close(relay);
        return;
    }
    l->fifo = true;
    l->family = AF_UNSPEC;
    l->remote = remote;
    l->relay = relay;
    if (reader) {
        l->out_end = true; /* the guest sends nothing */
    } else {
        l->in_end = l->end_passed = true; /* nothing comes in */
    }
}

void outside_link_accepted(struct proxy_outside *o, uint32_t id, int family,
                           int type, int remote,
                           const struct sockaddr_storage *peer,
                           socklen_t peer_len,
                           const struct sockaddr_storage *local,
                           socklen_t local_len, int inner_fd)
{
    struct outside_link *l = link_add(o, id);
    if (!l) {
        if (remote >= 0)
            close(remote);
        return;
    }
    l->accepted = true;
    l->family = family;
    l->type = type;
    l->remote = remote;
    int one = 1;
    /* The client outside need not be named: its messages are told from
     * its end by their credentials (see read_message). */
    if (type == SOCK_SEQPACKET && remote >= 0)
        (void)setsockopt(remote, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
    l->peer = *peer;
    l->peer_len = peer_len;
    l->local = *local;
    l->local_len = local_len;
    if (inner_fd < 0)
        return; /* the listener is gone: nobody to give it to */
    int r = relay_connect(family, type, inner_fd);
    socklen_t rl = sizeof(l->relay_name);
    if (r < 0 || getsockname(r, (struct sockaddr *)&l->relay_name, &rl) < 0) {
        if (r >= 0)
            close(r);
        return;
    }
    l->relay_name_len = rl;
    l->relay = r;
    if (family != AF_UNIX)
        (void)setsockopt(r, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (type == SOCK_SEQPACKET) /* named already: no autobind by it */
        (void)setsockopt(r, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
}

/* ---- moving bytes -------------------------------------------------------- */

/* Until the guest's end has taken all the relay sent (the relay's send
 * queue is empty: on loopback that is the guest's receive queue having
 * it), or a short while passed (the guest's buffer is full). */
static void wait_delivered(int relay)
{
    int64_t until = outside_now_ns() + OUTSIDE_DELIVERY_WAIT_NS;
    int queued = 0;
    while (ioctl(relay, SIOCOUTQ, &queued) == 0 && queued > 0 &&
           outside_now_ns() < until) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

static void in_append(struct outside_link *l, const void *data, size_t n)
{
    if (l->in_off == l->in_len) {
        l->in_off = l->in_len = 0;
    }
    uint8_t *g = realloc(l->in, l->in_len + n);
    if (!g)
        return;
    memcpy(g + l->in_len, data, n);
    l->in = g;
    l->in_len += n;
}

/* Said once per connection, recording and replaying alike (the line is
 * part of the run's stderr a replay compares). */
static void say_rights_refused(struct proxy_world *w, struct outside_link *l)
{
    if (l->rights_said || w->nr_procs == 0)
        return;
    l->rights_said = true;
    proxy_log(w->procs[0], 0,
              "outside connection %u: the peer passed file descriptors "
              "(SCM_RIGHTS); not relayed (closed), its bytes are", l->id);
}

/* File descriptors an outside peer passed: not relayed (a replay could
 * not give them), closed at once. True if there were any. */
static bool refuse_rights(struct msghdr *m)
{
    bool any = false;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfds; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
            close(fd);
        }
        any = true;
    }
    return any || (m->msg_flags & MSG_CTRUNC);
}

/* One read of the peer's bytes; an AF_UNIX peer's passed fds refused
 * (*refused). */
static ssize_t remote_read(struct outside_link *l, void *buf, size_t len,
                           bool *refused)
{
    *refused = false;
    if (l->family != AF_UNIX && !l->fifo)
        return recv(l->remote, buf, len, MSG_DONTWAIT);
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(64 * sizeof(int))];
    } ctl;
    struct iovec iov = {buf, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = ctl.bytes,
                       .msg_controllen = sizeof(ctl.bytes)};
    if (l->fifo)
        return read(l->remote, buf, len);
    ssize_t n = recvmsg(l->remote, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n >= 0)
        *refused = refuse_rights(&m);
    return n;
}

/* A seqpacket peer's message, to be given to the relay whole. */
static void msg_append(struct outside_link *l, const void *data, size_t n)
{
    if (l->msgs_head == l->nr_msgs)
        l->msgs_head = l->nr_msgs = 0;
    if (l->nr_msgs == l->msgs_cap) {
        size_t cap = l->msgs_cap ? 2 * l->msgs_cap : 8;
        void *g = realloc(l->msgs, cap * sizeof(*l->msgs));
        if (!g)
            return;
        l->msgs = g;
        l->msgs_cap = cap;
    }
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy)
        return;
    memcpy(copy, data, n);
    l->msgs[l->nr_msgs++] = (struct outside_message){copy, n};
}

/* What came in, to give the guest: bytes, or a seqpacket's messages. */
static void in_add(struct outside_link *l, const void *data, size_t n)
{
    if (l->type == SOCK_SEQPACKET)
        msg_append(l, data, n);
    else
        in_append(l, data, n);
}

/* The size of the next message queued on seqpacket socket fd (MSG_TRUNC
 * gives its whole length), or -1 (errno; EAGAIN: none). */
static ssize_t next_message_size(int fd)
{
    char byte;
    ssize_t n;
    while ((n = recv(fd, &byte, 1, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT)) < 0 &&
           errno == EINTR)
        ;
    return n;
}

/*
 * One message of a seqpacket socket, whole, in a buffer of its own (*buf,
 * to free). Linux's recv returns 0 both for an empty message and for the
 * end (the peer closed or shut down its sending): *end tells them apart.
 * From a listener's peer (by_name): a message has the sender's name (the
 * accepted socket shares its listener's, which the connect reached), the
 * end has none; hvrun's connecting socket gets no SO_PASSCRED, which
 * would autobind it at its first send, so the peer would see a name the
 * guest's socket does not have. From an unnamed sender (the guest, a
 * client from outside: hvrun's end has SO_PASSCRED, and is named
 * already): a message has SCM_CREDENTIALS, the end has none. File
 * descriptors that came with it are closed (*refused). -1: errno.
 */
static ssize_t read_message(int fd, bool by_name, uint8_t **buf, bool *end,
                            bool *refused)
{
    *buf = NULL;
    *end = *refused = false;
    ssize_t size = next_message_size(fd);
    if (size < 0)
        return -1;
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(struct ucred)) +
                   CMSG_SPACE(64 * sizeof(int))];
    } ctl;
    struct sockaddr_un from;
    *buf = malloc(size ? (size_t)size : 1);
    if (!*buf) {
        errno = ENOMEM;
        return -1;
    }
    struct iovec iov = {*buf, (size_t)size};
    struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof(from),
                       .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = ctl.bytes,
                       .msg_controllen = sizeof(ctl.bytes)};
    ssize_t n;
    while ((n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 &&
           errno == EINTR)
        ;
    if (n < 0) {
        int e = errno;
        free(*buf);
        *buf = NULL;
        errno = e;
        return -1;
    }
    bool creds = false;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
            creds = true;
    *refused = refuse_rights(&m);
    *end = n == 0 && (by_name ? m.msg_namelen == 0 : !creds);
    return n;
}

/* Recording: the messages a seqpacket peer sent since the last look, each
 * one event. */
static void take_remote_messages(struct proxy_world *w,
                                 struct proxy_outside *o,
                                 struct outside_link *l)
{
    while (l->remote >= 0 && !l->in_end) {
        uint8_t *buf;
        bool end, refused;
        ssize_t n = read_message(l->remote, !l->accepted, &buf, &end,
                                 &refused);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n >= 0 && !end) {
            if (refused)
                say_rights_refused(w, l);
            outside_note(o, l->id, PROXY_LINK_DATA, refused, buf, (size_t)n);
            msg_append(l, buf, (size_t)n);
            free(buf);
            continue;
        }
        free(buf);
        l->in_end = true;
        l->in_err = n == 0 ? 0 : -errno;
        outside_note(o, l->id, PROXY_LINK_END, l->in_err, NULL, 0);
    }
}

/* Recording: what the peer sent since the last look, as events. */
static void take_remote(struct proxy_world *w, struct proxy_outside *o,
                        struct outside_link *l)
{
    static uint8_t buf[OUTSIDE_PUMP_CHUNK];
    if (l->type == SOCK_SEQPACKET) {
        take_remote_messages(w, o, l);
        return;
    }
    while (l->remote >= 0 && !l->in_end) {
        bool refused;
        ssize_t n = remote_read(l, buf, sizeof(buf), &refused);
        if (n > 0 && refused)
            say_rights_refused(w, l);
        if (n > 0) { /* value 1: fds came with them, refused */
            outside_note(o, l->id, PROXY_LINK_DATA, refused, buf, (size_t)n);
            in_append(l, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        l->in_end = true;
        l->in_err = n == 0 ? 0 : -errno;
        outside_note(o, l->id, PROXY_LINK_END, l->in_err, NULL, 0);
    }
}

/* A message the relay's send buffer is too small for (EMSGSIZE: the
 * peer's was larger) gets a larger one, as far as the host allows. */
static bool grow_send_buffer(int relay, size_t len)
{
    int have = 0, want = len > INT_MAX / 2 - 4096 ? INT_MAX / 2
                                                  : (int)len + 4096;
    socklen_t hl = sizeof(have);
    if (getsockopt(relay, SOL_SOCKET, SO_SNDBUF, &have, &hl) < 0 ||
        have / 2 >= want) /* the kernel reports twice what was set */
        return false;
    (void)setsockopt(relay, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
    int now = 0;
    return getsockopt(relay, SOL_SOCKET, SO_SNDBUF, &now, &hl) == 0 &&
           now > have;
}

/* The messages that came in, each whole, to the guest's end (as many as
 * its queue takes now). */
static void give_messages(struct proxy_world *w, struct outside_link *l)
{
    while (l->relay >= 0 && l->msgs_head < l->nr_msgs) {
        struct outside_message *m = &l->msgs[l->msgs_head];
        ssize_t n = send(l->relay, m->data, m->len,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EMSGSIZE && grow_send_buffer(l->relay, m->len))
            continue;
        if (n < 0 && errno == EMSGSIZE && w->nr_procs)
            proxy_log(w->procs[0], 0, "outside connection %u: a %zu-byte "
                      "message is larger than the host lets hvrun send; "
                      "dropped", l->id, m->len);
        else if (n < 0)
            return; /* its queue is full (or it is gone: its end comes) */
        free(m->data);
        l->msgs_head++;
    }
}

/* The bytes that came in, then their end, to the guest's end. */
static void give_relay(struct proxy_world *w, struct outside_link *l)
{
    if (l->relay < 0)
        return;
    bool sent = false;
    if (l->type == SOCK_SEQPACKET) {
        give_messages(w, l);
        if (l->msgs_head < l->nr_msgs)
            return;
    }
    while (l->in_off < l->in_len) {
        ssize_t n = l->fifo ? write(l->relay, l->in + l->in_off,
                                    l->in_len - l->in_off)
                            : send(l->relay, l->in + l->in_off,
                                   l->in_len - l->in_off,
                                   MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n <= 0)
            break;
        l->in_off += (size_t)n;
        sent = true;
    }
    if (l->in_off == l->in_len && l->in_end && !l->end_passed) {
        l->end_passed = true;
        if (l->in_err || l->fifo) { /* a pipe's end is its close */ /* the peer reset: so does the relay */
            struct linger lg = {1, 0};
            (void)setsockopt(l->relay, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
            close(l->relay);
            l->relay = -1;
            return;
        }
        (void)shutdown(l->relay, SHUT_WR);
        sent = true;
    }
    if (sent && l->family != AF_UNIX && !l->fifo) /* queued by the send */
        wait_delivered(l->relay);
}

/* The guest's end is done sending: so is hvrun's to the peer. */
static void out_ended(struct outside_link *l)
{
    l->out_end = true;
    if (l->remote >= 0 && l->fifo) { /* the outside reader's EOF */
        close(l->remote);
        l->remote = -1;
    } else if (l->remote >= 0) {
        (void)shutdown(l->remote, SHUT_WR);
    }
}

/* The messages a seqpacket guest sent, each whole: to the peer
 * (recording) or dropped (replaying). Its fds and credentials are not
 * passed on (SO_PEERCRED and SCM_CREDENTIALS show hvrun). */
static void take_relay_messages(struct outside_link *l)
{
    while (l->relay >= 0 && !l->out_end) {
        uint8_t *buf;
        bool end, refused;
        ssize_t n = read_message(l->relay, false, &buf, &end, &refused);
        if (n < 0)
            return; /* nothing more now (or a reset: the end comes) */
        if (end) {
            free(buf);
            out_ended(l);
            return;
        }
        while (l->remote >= 0 && send(l->remote, buf, (size_t)n,
                                      MSG_NOSIGNAL) < 0 && errno == EINTR)
            ; /* failing: the peer is gone, its end will say so */
        free(buf);
    }
}

/* What the guest sent: to the peer (recording) or dropped (replaying). */
static void take_relay(struct outside_link *l)
{
    static uint8_t buf[OUTSIDE_PUMP_CHUNK];
    if (l->type == SOCK_SEQPACKET) {
        take_relay_messages(l);
        return;
    }
    while (l->relay >= 0 && !l->out_end) {
        ssize_t n = l->fifo ? read(l->relay, buf, sizeof(buf))
                            : recv(l->relay, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return; /* nothing more now (or a reset: the end comes) */
        if (n == 0) {
            out_ended(l);
            return;
        }
        for (ssize_t off = 0; l->remote >= 0 && off < n;) {
            ssize_t m = l->fifo ? write(l->remote, buf + off, (size_t)(n - off))
                                : send(l->remote, buf + off,
                                       (size_t)(n - off), MSG_NOSIGNAL);
            if (m < 0 && errno == EINTR)
                continue;
            if (m <= 0)
                break; /* the peer is gone: its end will say so */
            off += m;
        }
    }
}

/* Once both ways are over, hvrun's ends go (the entry stays, for
 * getpeername of a guest socket still open). */
static void retire(struct outside_link *l)
{
    if (!l->end_passed || !l->out_end)
        return;
    if (l->relay >= 0)
        close(l->relay);
    if (l->remote >= 0)
        close(l->remote);
    l->relay = l->remote = -1;
}

/* Replaying: one recorded data or end event to its relay. False when the
 * next event is not one (none left, or a connect still to come). */
static bool feed_one(struct proxy_world *w, struct proxy_outside *o,
                     bool any_pos)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (!o->tap->link_next(o->tap->ctx, &e, &data, &n) ||
        e.kind == PROXY_LINK_CONNECT || e.kind == PROXY_LINK_DGRAM_OPEN ||
        e.kind == PROXY_LINK_LISTEN || e.kind == PROXY_LINK_FIFO ||
        (!any_pos && e.pos > o->det->events))
        return false;
    /* Only proxy_outside_await takes an awaited mark; past it only a run
     * that went another way is fed (so it cannot hang on the mark). */
    if (e.kind == PROXY_LINK_AWAITED && !any_pos)
        return false;
    o->tap->link_taken(o->tap->ctx);
    if (e.kind == PROXY_LINK_AWAITED)
        return true;
    if (outside_udp_feed(o, &e, data, n) ||
        outside_accept_feed(o, w, &e, data, n))
        return true;
    struct outside_link *l = link_by_id(o, e.link);
    if (!l)
        return true;
    if (e.kind == PROXY_LINK_DATA && e.value == 1)
        say_rights_refused(w, l);
    if (e.kind == PROXY_LINK_DATA)
        in_add(l, data, n);
    else {
        l->in_end = true;
        l->in_err = (int)e.value;
    }
    return true;
}

/* both: also what came in, to the guest; else only what the guest sent
 * (see proxy_outside_idle_feed). */
static void pump_all(struct proxy_world *w, struct proxy_outside *o,
                     bool both)
{
    if (both && outside_recording(o->tap))
        outside_accept_take(o, w);
    for (size_t i = 0; i < o->nr; i++) {
        struct outside_link *l = &o->links[i];
        if (both && outside_recording(o->tap))
            take_remote(w, o, l);
        if (both)
            give_relay(w, l);
        take_relay(l);
        retire(l);
    }
    outside_udp_pump(o, w, both);
}

static bool outside_in_use(const struct proxy_outside *o)
{
    return o && (o->nr || o->nr_flows || o->nr_shadows);
}

void proxy_outside_pump(struct proxy_world *w)
{
    struct proxy_outside *o = w->outside;
    if (!outside_in_use(o))
        return;
    if (outside_replaying(o->tap))
        while (feed_one(w, o, false))
            ;
    pump_all(w, o, true);
}

bool proxy_outside_idle_feed(struct proxy_world *w)
{
    struct proxy_outside *o = w->outside;
    if (!outside_in_use(o))
        return false;
    /* What the guest sent, first. Nothing is taken in or given here:
     * recording, what came in since the last syscall's pump would make a
     * guest fd ready before world.c's poll, a host wait a replay (which
     * gives it here) does not make; so it is taken after that poll. */
    pump_all(w, o, false);
    if (!outside_replaying(o->tap) || !feed_one(w, o, true))
        return false;
    pump_all(w, o, true);
    return true;
}

/* Recording: what hvrun waits on for its relays (remotes_only: only its
 * connections to the peers). */
static int collect_fds(struct proxy_world *w, struct proxy_outside *o,
                       struct pollfd *fds, int room, bool remotes_only)
{
    int n = 0;
    if (!o || !outside_recording(o->tap))
        return 0;
    for (size_t i = 0; i < o->nr && n < room; i++) {
        struct outside_link *l = &o->links[i];
        if (l->remote >= 0 && !l->in_end && n < room)
            fds[n++] = (struct pollfd){l->remote, POLLIN, 0};
        if (l->relay >= 0 && !l->out_end && n < room && !remotes_only)
            fds[n++] = (struct pollfd){l->relay, POLLIN, 0};
    }
    n += outside_accept_poll_fds(o, w, fds + n, room - n);
    return n + outside_udp_poll_fds(o, fds + n, room - n, remotes_only);
}

int proxy_outside_poll_fds(struct proxy_world *w, struct pollfd *fds,
                           int room)
{
    return collect_fds(w, w->outside, fds, room, false);
}

#define AWAIT_FDS 256

/* Replaying: the recording's awaited mark, if it is next and due, and
 * what came with it. */
static bool replay_await(struct proxy_world *w, struct proxy_outside *o)
{
    struct proxy_link_event e;
    const void *data;
    size_t n;
    if (!o->tap->link_next(o->tap->ctx, &e, &data, &n) ||
        e.kind != PROXY_LINK_AWAITED || e.pos > o->det->events)
        return false;
    o->tap->link_taken(o->tap->ctx);
    while (feed_one(w, o, false))
        ;
    pump_all(w, o, true);
    return true;
}

/*
 * Without this a timed wait for a peer outside the run would time out at
 * once (logical time jumps to a deadline when nothing can run), so a
 * query with a timeout, as a DNS lookup makes, never saw its reply. The
 * host time waited is not logical time: the run's clock does not move.
 */
bool proxy_outside_await(struct proxy_world *w, struct proxy_process *p,
                         uint64_t deadline_ns)
{
    struct proxy_outside *o = w->outside;
    if (!outside_in_use(o))
        return false;
    /* Looked at both ways: under host time the look is in the recording. */
    int64_t now = det_clock_peek_ns(p->det, CLOCK_MONOTONIC);
    if (outside_replaying(o->tap))
        return replay_await(w, o);
    pump_all(w, o, false);
    outside_udp_retire_gone(o, w); /* a closed socket's peer is not awaited */
    struct pollfd fds[AWAIT_FDS];
    int n = collect_fds(w, o, fds, AWAIT_FDS, true);
    if (n == 0)
        return false;
    uint64_t left = (int64_t)deadline_ns > now ? deadline_ns - (uint64_t)now
                                               : 0;
    uint64_t ms = (left + 999999) / 1000000;
    int r;
    while ((r = poll(fds, (nfds_t)n, ms > INT_MAX ? INT_MAX : (int)ms)) < 0 &&
           errno == EINTR && !proxy_stop_signal)
        ;
    if (r <= 0)
        return false;
    outside_note(o, 0, PROXY_LINK_AWAITED, 0, NULL, 0);
    pump_all(w, o, true);
    return true;
}

void proxy_outside_free(struct proxy_world *w)
{
    struct proxy_outside *o = w->outside;
    if (!o)
        return;
    for (size_t i = 0; i < o->nr; i++) {
        struct outside_link *l = &o->links[i];
        if (l->listener >= 0)
            close(l->listener);
        if (l->relay >= 0)
            close(l->relay);
        if (l->remote >= 0)
            close(l->remote);
        free(l->in);
        for (size_t k = l->msgs_head; k < l->nr_msgs; k++)
            free(l->msgs[k].data);
        free(l->msgs);
    }
    free(o->links);
    outside_udp_free(o);
    outside_accept_free(o);
    free(o);
    w->outside = NULL;
}
