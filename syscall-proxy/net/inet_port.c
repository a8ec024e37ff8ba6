/*
 * inet_port.c - the ports a run's binds to port 0 get, in the run's terms.
 *
 * A bind to port 0 (and a listen, connect or send on an unbound socket,
 * which Linux binds itself) gets the run's next port from detcore:
 * 32768, 32769, ... in the order of the run's binds, one det_port a
 * bind. The host socket is bound to that same port when the host has it
 * free, and to a port of the host's choosing when not: another hvrun
 * beside this one holds it (a test suite's -j, analyze -j), or a
 * TIME_WAIT of an earlier run, or any host program. What the host chose
 * never shows: the run keeps which host port stands for which of its
 * ports, and
 *  - host to guest (getsockname of the socket itself; getpeername,
 *    accept, a datagram's source when the peer is on this host, i.e.
 *    loopback or unspecified): a host port of the run's becomes its
 *    guest port;
 *  - guest to host (bind to a given port; connect and send towards this
 *    host): a guest port the run handed out becomes its host port, so
 *    peers inside the run reach each other by what getsockname showed.
 * So how many ports other runs took never changes what a run sees
 * (before, a port held elsewhere was skipped, and the guest saw the next).
 * A port in the range that the guest binds itself is never handed out
 * later (Linux would not hand out a port in use); which ones, is the
 * guest's doing, so the same in every run.
 * Not covered: a guest port whose socket is closed still stands for its
 * host port, which the host may give to another socket of the run's
 * later; a remote connect's port is the host's (no bind first: a
 * TIME_WAIT reuse towards a remote peer would fail); `hvrun record` keeps
 * the host's ports of connections to outside.
 */
#include "proxy.h"
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "det.h"
#include "fs.h"

struct proxy_inet_ports {
    uint16_t host_of[DET_PORT_COUNT]; /* guest port - first: host port, 0 */
    uint16_t guest_of[65536];         /* host port: guest port, or 0 */
    uint8_t guest_bound[(DET_PORT_COUNT + 7) / 8]; /* bound by the guest */
};

static struct proxy_inet_ports *ports_of(struct proxy_world *w)
{
    if (!w->inet_ports)
        w->inet_ports = calloc(1, sizeof(*w->inet_ports));
    return w->inet_ports;
}

void proxy_net_inet_ports_free(struct proxy_world *w)
{
    free(w->inet_ports);
    w->inet_ports = NULL;
}

static bool in_range(uint16_t port)
{
    return port >= DET_PORT_FIRST && port - DET_PORT_FIRST < DET_PORT_COUNT;
}

/* The port of an AF_INET/AF_INET6 address; false for any other. */
static bool get_port(const struct sock_addr *sa, uint16_t *port)
{
    if (sa->u.sa.sa_family == AF_INET && sa->len >= sizeof(struct sockaddr_in)) {
        *port = ntohs(((const struct sockaddr_in *)&sa->u.ss)->sin_port);
        return true;
    }
    if (sa->u.sa.sa_family == AF_INET6 &&
        sa->len >= sizeof(struct sockaddr_in6)) {
        *port = ntohs(((const struct sockaddr_in6 *)&sa->u.ss)->sin6_port);
        return true;
    }
    return false;
}

static void set_port(struct sock_addr *sa, uint16_t port)
{
    if (sa->u.sa.sa_family == AF_INET)
        ((struct sockaddr_in *)&sa->u.ss)->sin_port = htons(port);
    else
        ((struct sockaddr_in6 *)&sa->u.ss)->sin6_port = htons(port);
}

bool proxy_net_inet_any_port(const struct sock_addr *sa)
{
    uint16_t port;
    return get_port(sa, &port) && port == 0;
}

/* inet_port_requires_bind_service: a TCP or UDP port below
 * net.ipv4.ip_unprivileged_port_start (1024, Linux's default; the run
 * models no other) is bound only with CAP_NET_BIND_SERVICE. hvrun's host
 * side keeps that capability, so the guest's is checked here; the check
 * comes after the address's length and family, as in inet_bind. */
#define UNPRIVILEGED_PORT_START 1024
long proxy_net_bind_port_allowed(const struct proxy_process *p, int host_fd,
                                 const struct sock_addr *sa)
{
    uint16_t port;
    int domain = 0, proto = 0;
    socklen_t dl = sizeof(domain), pl = sizeof(proto);
    if (!get_port(sa, &port) || port == 0 || port >= UNPRIVILEGED_PORT_START)
        return 0;
    if (getsockopt(host_fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0 ||
        domain != sa->u.sa.sa_family ||
        getsockopt(host_fd, SOL_SOCKET, SO_PROTOCOL, &proto, &pl) < 0 ||
        (proto != IPPROTO_TCP && proto != IPPROTO_UDP &&
         proto != IPPROTO_UDPLITE))
        return 0;
    return proxy_ns_capable_cap(p, CAP_NET_BIND_SERVICE) ? 0 : -EACCES;
}

bool proxy_net_loopback_addr(const struct sock_addr *sa)
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

/* An address on this host: loopback, or the unspecified address (a
 * connect to it reaches this host; a socket bound to it shows it). */
static bool this_host_addr(const struct sock_addr *sa)
{
    if (proxy_net_loopback_addr(sa))
        return true;
    if (sa->u.sa.sa_family == AF_INET)
        return ((const struct sockaddr_in *)&sa->u.ss)->sin_addr.s_addr ==
               htonl(INADDR_ANY);
    const struct in6_addr *a6 =
        &((const struct sockaddr_in6 *)&sa->u.ss)->sin6_addr;
    static const uint8_t v4_any[16] = {[10] = 0xff, [11] = 0xff};
    return IN6_IS_ADDR_UNSPECIFIED(a6) || memcmp(a6, v4_any, 16) == 0;
}

void proxy_net_inet_port_to_guest(struct proxy_world *w, struct sock_addr *sa,
                                  bool own)
{
    uint16_t host_port;
    if (!w->inet_ports || !get_port(sa, &host_port) || host_port == 0 ||
        (!own && !this_host_addr(sa)))
        return;
    uint16_t guest_port = w->inet_ports->guest_of[host_port];
    if (guest_port)
        set_port(sa, guest_port);
}

void proxy_net_inet_port_to_host(struct proxy_world *w, struct sock_addr *sa,
                                 bool bind_)
{
    uint16_t guest_port;
    if (!get_port(sa, &guest_port) || !in_range(guest_port))
        return;
    unsigned i = guest_port - DET_PORT_FIRST;
    if (bind_) {
        struct proxy_inet_ports *ports = ports_of(w);
        if (ports)
            ports->guest_bound[i / 8] |= (uint8_t)(1u << (i % 8));
    } else if (!this_host_addr(sa)) {
        return;
    }
    if (w->inet_ports && w->inet_ports->host_of[i])
        set_port(sa, w->inet_ports->host_of[i]);
}

/* The run's next port that the guest has not bound itself. */
static uint16_t next_guest_port(struct proxy_process *p)
{
    const struct proxy_inet_ports *ports = p->world->inet_ports;
    uint16_t port = det_port(p->det);
    for (unsigned tries = 0; ports && tries < DET_PORT_COUNT; tries++) {
        unsigned i = port - DET_PORT_FIRST;
        if (!(ports->guest_bound[i / 8] & (1u << (i % 8))))
            break;
        port = det_port(p->det);
    }
    return port;
}

/*
 * SO_REUSEADDR hides a concurrent run's socket: two runs bind the same
 * port (neither listens yet), and the second's listen fails, or its
 * connect from that port to the same peer (EADDRNOTAVAIL); runs side by
 * side (a test suite's -j, analyze -j) met so at once. So the TCP ports
 * hvrun binds are claimed host-wide, one byte each of a lock file in
 * hvrun's cache directory (open file description locks: held while this
 * hvrun lives, dropped when it ends, however it ends); a port another
 * hvrun holds is not bound. Without the file, no claim.
 */
static int port_claims_fd = -2;

static bool port_claimed_elsewhere(uint16_t port)
{
    if (port_claims_fd == -2) {
        char path[512];
        const struct proxy_process *as_guest = proxy_fscred_suspend();
        port_claims_fd = -1;
        if (vmm_host_cache_dir(path, sizeof(path) - 16) == 0) {
            strcat(path, "/tcp-ports.lock");
            port_claims_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC |
                                            O_NOFOLLOW, 0600);
        }
        proxy_fscred_resume(as_guest);
    }
    if (port_claims_fd < 0)
        return false;
    struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                      .l_start = port, .l_len = 1};
    return fcntl(port_claims_fd, F_OFD_SETLK, &l) < 0 &&
           (errno == EAGAIN || errno == EACCES);
}

/* Binds host_fd to the guest's port when the host has it free, else to
 * the host's choice. The kernel's choice avoids ports bound by any socket
 * (SO_REUSEADDR is relaxed only when none is left); a TCP port is
 * claimed either way, so that another hvrun's guest port does not land
 * on it. */
static long bind_host_port(int host_fd, struct sock_addr *sa, bool tcp,
                           uint16_t want)
{
    if (!(tcp && port_claimed_elsewhere(want))) {
        set_port(sa, want);
        long r = proxy_host_result(bind(host_fd, &sa->u.sa, sa->len));
        if (r != -EADDRINUSE && r != -EACCES)
            return r;
    }
    set_port(sa, 0);
    long r = proxy_host_result(bind(host_fd, &sa->u.sa, sa->len));
    struct sock_addr got = {.len = sizeof(got.u)};
    uint16_t port;
    if (r == 0 && tcp && getsockname(host_fd, &got.u.sa, &got.len) == 0 &&
        get_port(&got, &port))
        (void)port_claimed_elsewhere(port); /* claims it */
    return r;
}

long proxy_net_bind_det_port(struct proxy_process *p, int host_fd,
                             struct sock_addr *sa)
{
    int type = 0, on = 1;
    socklen_t tl = sizeof(type);
    bool tcp = getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
               type == SOCK_STREAM;
    /* The TIME_WAIT connections a previous run left on the port do not
     * keep this run from it (for TCP that allows nothing else: two
     * listeners on one port stay refused). */
    if (tcp)
        (void)setsockopt(host_fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    uint16_t guest_port = next_guest_port(p);
    long r = bind_host_port(host_fd, sa, tcp, guest_port);
    struct sock_addr got = {.len = sizeof(got.u)};
    uint16_t host_port;
    struct proxy_inet_ports *ports;
    if (r == 0 && getsockname(host_fd, &got.u.sa, &got.len) == 0 &&
        get_port(&got, &host_port) && (ports = ports_of(p->world))) {
        unsigned i = guest_port - DET_PORT_FIRST;
        ports->host_of[i] = host_port;
        ports->guest_of[host_port] = guest_port;
    }
    return r;
}

void proxy_net_bind_unbound_inet(struct proxy_process *p, int host_fd)
{
    struct sock_addr sa;
    memset(&sa, 0, sizeof(sa));
    sa.len = sizeof(sa.u.ss);
    if (getsockname(host_fd, &sa.u.sa, &sa.len) < 0 ||
        !proxy_net_inet_any_port(&sa))
        return;
    (void)proxy_net_bind_det_port(p, host_fd, &sa);
}
