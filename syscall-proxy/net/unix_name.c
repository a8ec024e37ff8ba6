/*
 * unix_name.c - AF_UNIX autobind names (a bind of just the family, e.g.
 * Python's bind("")) in the run's terms.
 *
 * Linux names such a socket "\0" and five hex digits of its own choosing
 * (random since Linux 5.19), different in every run: a program that shows
 * or formats its getsockname (Python's socket repr does, for the
 * ResourceWarning of a socket it collects) printed, or counted under
 * --progress software, a host value. hvrun binds the host socket to a name
 * of its own instead, unique on the host (hvrun's pid and its run's start,
 * so runs side by side never meet), and the guest sees "\0%05x" of the
 * run's n-th autobind (det_unix_name): the same in every run. The two
 * directions:
 *  - host to guest (getsockname, getpeername, accept, a datagram's source):
 *    a host name of this run's form becomes the guest's;
 *  - guest to host (bind, connect, a send's address): a guest name of
 *    Linux's autobind form whose number the run has handed out becomes
 *    the host's, so peers inside the run reach each other by what
 *    getsockname showed them.
 * Not covered: a socket the kernel autobinds itself (a send or connect on
 * an unbound socket with SO_PASSCRED) shows the kernel's name, and a guest
 * that binds a name of the autobind form the run has not handed out yet
 * may later be handed the same one.
 */
#include "proxy.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "det.h"

/* Linux's autobind name: a NUL and five lowercase hex digits. */
#define GUEST_NAME_DIGITS 5
#define GUEST_NAME_LEN (1 + GUEST_NAME_DIGITS)

static size_t path_off(void)
{
    return offsetof(struct sockaddr_un, sun_path);
}

/* This run's host names start "\0hvrun-autobind-<pid>-<start>-"; the
 * prefix's length without its leading NUL. */
static size_t host_prefix(const struct proxy_process *p, char *buf, size_t size)
{
    int n = snprintf(buf, size, "hvrun-autobind-%d-%llx-", (int)getpid(),
                     (unsigned long long)p->det->host_start_ns);
    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

static void host_name(const struct proxy_process *p, uint32_t n,
                      struct sock_addr *sa)
{
    char prefix[64];
    size_t plen = host_prefix(p, prefix, sizeof(prefix));
    memset(sa, 0, sizeof(*sa));
    sa->u.un.sun_family = AF_UNIX;
    int len = snprintf(sa->u.un.sun_path + 1, sizeof(sa->u.un.sun_path) - 1,
                       "%.*s%x", (int)plen, prefix, n);
    sa->len = (socklen_t)(path_off() + 1 + (size_t)len);
}

static void guest_name(uint32_t n, struct sock_addr *sa)
{
    char digits[GUEST_NAME_DIGITS + 1];
    snprintf(digits, sizeof(digits), "%05x", n & 0xfffff);
    memset(sa, 0, sizeof(*sa));
    sa->u.un.sun_family = AF_UNIX;
    memcpy(sa->u.un.sun_path + 1, digits, GUEST_NAME_DIGITS);
    sa->len = (socklen_t)(path_off() + GUEST_NAME_LEN);
}

long proxy_net_unix_autobind(struct proxy_process *p, int host_fd)
{
    struct sock_addr sa;
    host_name(p, det_unix_name(p->det), &sa);
    long r = proxy_host_result(bind(host_fd, &sa.u.sa, sa.len));
    if (r != -EADDRINUSE)
        return r;
    /* Someone on the host holds hvrun's name (it cannot be another run's):
     * the kernel's choice, which shows. */
    sa.len = sizeof(sa_family_t);
    return proxy_host_result(bind(host_fd, &sa.u.sa, sa.len));
}

static bool parse_hex(const char *s, size_t len, uint32_t *out)
{
    uint32_t v = 0;
    if (len == 0 || len > 8)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else
            return false;
        v = v << 4 | d;
    }
    *out = v;
    return true;
}

/* The abstract name of sa (after its NUL), and its length; false when sa
 * is no abstract AF_UNIX name. */
static bool abstract_name(const struct sock_addr *sa, const char **name,
                          size_t *len)
{
    if (sa->len <= path_off() + 1 || sa->u.un.sun_family != AF_UNIX ||
        sa->u.un.sun_path[0] != '\0')
        return false;
    *name = sa->u.un.sun_path + 1;
    *len = sa->len - path_off() - 1;
    return true;
}

bool proxy_net_unix_name_to_guest(const struct proxy_process *p,
                                  struct sock_addr *sa)
{
    const char *name;
    size_t len;
    char prefix[64];
    size_t plen = host_prefix(p, prefix, sizeof(prefix));
    uint32_t n;
    if (!abstract_name(sa, &name, &len) || plen == 0 || len <= plen ||
        memcmp(name, prefix, plen) != 0 ||
        !parse_hex(name + plen, len - plen, &n) ||
        n >= p->det->unix_names_handed)
        return false;
    guest_name(n, sa);
    return true;
}

bool proxy_net_unix_name_to_host(const struct proxy_process *p,
                                 struct sock_addr *sa)
{
    const char *name;
    size_t len;
    uint32_t n;
    if (!abstract_name(sa, &name, &len) || len != GUEST_NAME_DIGITS ||
        !parse_hex(name, len, &n) || n >= p->det->unix_names_handed)
        return false;
    host_name(p, n, sa);
    return true;
}
