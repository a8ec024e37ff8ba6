/*
 * peercred.c - peer credentials (SO_PEERCRED, SCM_CREDENTIALS) in guest
 * terms. The host kernel names hvrun's host pid (and host ids) for every
 * guest: for a peer inside the run the credentials become the guest
 * process that holds the peer socket, in pid order (for a socketpair made
 * before a fork: the parent, as Linux keeps the creator's), with its
 * virtual pid and effective ids. A peer outside the run (a host daemon)
 * keeps what the host says; a peer that is gone reads as pid 0.
 *
 * The peer socket is found with sock_diag (UNIX_DIAG_PEER), then among the
 * guests' fds by inode.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

bool proxy_unix_diag(uint64_t ino, bool *has_peer, uint64_t *peer_ino,
                     unsigned *shutdown)
{
    *has_peer = false;
    *peer_ino = 0;
    *shutdown = 0;
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0)
        return false;
    struct {
        struct nlmsghdr nh;
        struct unix_diag_req req;
    } q;
    memset(&q, 0, sizeof(q));
    q.nh.nlmsg_len = sizeof(q);
    q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    q.nh.nlmsg_flags = NLM_F_REQUEST;
    q.req.sdiag_family = AF_UNIX;
    q.req.udiag_states = ~0U;
    q.req.udiag_ino = (uint32_t)ino;
    q.req.udiag_show = UDIAG_SHOW_PEER;
    q.req.udiag_cookie[0] = q.req.udiag_cookie[1] = ~0U;
    bool found = false;
    char buf[1024];
    ssize_t n = -1;
    if (send(nl, &q, sizeof(q), 0) == (ssize_t)sizeof(q))
        n = recv(nl, buf, sizeof(buf), 0);
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf;
         n > 0 && NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
            break;
        struct unix_diag_msg *m = NLMSG_DATA(h);
        int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
        for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, alen);
             a = RTA_NEXT(a, alen)) {
            if (a->rta_type == UNIX_DIAG_PEER) {
                *has_peer = true;
                *peer_ino = *(uint32_t *)RTA_DATA(a);
            } else if (a->rta_type == UNIX_DIAG_SHUTDOWN)
                *shutdown = *(uint8_t *)RTA_DATA(a);
        }
        found = true;
        break;
    }
    close(nl);
    return found;
}

/* The inode of the AF_UNIX socket connected to the one with inode ino, or
 * 0 when there is none (or sock_diag cannot say). */
static uint64_t unix_peer_ino(uint64_t ino)
{
    uint64_t peer;
    unsigned shutdown;
    bool has_peer;
    (void)proxy_unix_diag(ino, &has_peer, &peer, &shutdown);
    return peer;
}

/* The first guest process (in pid order) with an fd on socket inode ino. */
static struct proxy_process *holder_of(struct proxy_process *p, uint64_t ino)
{
    struct proxy_world *w = p->world;
    struct proxy_process *best = NULL;
    for (int i = 0; w && i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (q->zombie || (best && best->pid < q->pid))
            continue;
        for (int fd = 0; fd < q->fds.cap; fd++) {
            struct stat st;
            if (q->fds.fds[fd].kind == PROXY_FD_FREE ||
                fstat(q->fds.fds[fd].host_fd, &st) < 0 ||
                !S_ISSOCK(st.st_mode) || st.st_ino != ino)
                continue;
            best = q;
            break;
        }
    }
    return best;
}

void proxy_peercred_to_guest(struct proxy_process *p, int host_fd,
                             struct ucred *uc)
{
    if (uc->pid != getpid())
        return; /* a peer outside the run */
    struct stat st;
    uint64_t peer = fstat(host_fd, &st) == 0 ? unix_peer_ino(st.st_ino) : 0;
    struct proxy_process *q = peer ? holder_of(p, peer) : NULL;
    if (!q) {
        uc->pid = 0;
        return;
    }
    /* as the reader's pid and user namespaces see the peer */
    uc->pid = proxy_ns_pid_of(p, q);
    uc->uid = proxy_ns_uid_seen(p, q->cred.euid);
    uc->gid = proxy_ns_gid_seen(p, q->cred.egid);
}
