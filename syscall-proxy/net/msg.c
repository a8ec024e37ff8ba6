/*
 * msg.c - sending and receiving on sockets: send, sendto, sendmsg,
 * sendmmsg, recv, recvfrom, recvmsg, recvmmsg (Linux's net/socket.c
 * __sys_sendmsg/__sys_recvmsg and the messages' copies), with their
 * ancillary data (SCM_RIGHTS as guest fds, SCM_CREDENTIALS in guest
 * terms: net/core/scm.c). Guest iovecs become host iovecs over guest
 * memory; a blocking call parks the guest thread (part way, a stream's
 * progress is kept: kernel/xfer_progress.c), SO_RCVTIMEO/SO_SNDTIMEO on
 * the logical clock.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "fs.h"
#include "io.h"
#include "net.h"
#include "internal.h"
#include "outside.h"
#include "det.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Linux's UIO_MAXIOV: the most segments a msghdr may have (-EMSGSIZE
 * above) and the most host iovecs one host call gets; also sendmmsg and
 * recvmmsg's cap on vlen. */
#define GUEST_IOV_MAX 1024

/* Linux's MAX_RW_COUNT: one transfer moves at most this much. */
#define RW_MAX_BYTES 0x7ffff000UL

#define CONTROL_MAX_BYTES 65536

#define NETLINK_SEND_MAX_BYTES 65536

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
            if (uc.uid == p->cred.euid || uc.uid == p->cred.ruid)
                uc.uid = geteuid();
            if (uc.gid == p->cred.egid || uc.gid == p->cred.rgid)
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
            proxy_fd_notes_sending(p, fds[i]);
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
            if (guest_fd < 0) {
                full = true; /* the install closed the host fd */
            } else {
                proxy_fd_notes_received(p, guest_fd);
                fds[installed++] = guest_fd;
            }
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
        proxy_net_bind_unbound_inet(p, host_fd);
    struct path_ctx c;
    r = proxy_net_path_ctx_enter(p, hm->msg.msg_name ? &hm->name : NULL, false, &c);
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
            proxy_net_path_ctx_leave(p, &c);
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
    proxy_net_path_ctx_leave(p, &c);
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
        proxy_net_addr_to_guest(p, &hm->name, &host_name, false);
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
        long w = proxy_net_sock_addr_out(p, a[4], a[5], &hm.name, false);
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

const struct proxy_syscall proxy_msg_syscalls[] = {
    {SYS_sendto, "sendto", sys_sendto},
    {SYS_recvfrom, "recvfrom", sys_recvfrom},
    {SYS_sendmsg, "sendmsg", sys_sendmsg},
    {SYS_recvmsg, "recvmsg", sys_recvmsg},
    {SYS_sendmmsg, "sendmmsg", sys_sendmmsg},
    {SYS_recvmmsg, "recvmmsg", sys_recvmmsg},
    {-1, NULL, NULL},
};
