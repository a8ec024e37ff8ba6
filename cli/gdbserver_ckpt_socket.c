/*
 * gdbserver_ckpt_socket.c - socket pairs in a checkpoint (see the header).
 *
 * A receive queue is read without taking it out with MSG_PEEK from a peek
 * offset (SO_PEEK_OFF, which a peek moves on): a stream's bytes, or one
 * datagram after another, until the queue has no more; the guest's own
 * peek offset is put back after. A restore writes each queue through the
 * new pair's other end, the datagrams one by one, then applies the
 * shutdowns the pair had. Refused: sockets with a name (bound or
 * listening), other families, a queue holding passed file descriptors, a
 * peer outside the guests.
 *
 * Not exact: a stream's bytes come back as one write, so the queue's
 * memory (what a writer's SO_SNDBUF counts) may be less than it was, and
 * a writer may fill it later than it did; the front end's check of each
 * replayed stop (the detlog digest) catches a run that went otherwise.
 */
#include "gdbserver_ckpt_socket.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "net.h"

#define PEEK_CHUNK (256 * 1024)
#define MAX_MSGS 100000

static int sockopt_int(int fd, int level, int name)
{
    int v = 0;
    socklen_t len = sizeof(v);
    return getsockopt(fd, level, name, &v, &len) == 0 ? v : -1;
}

const char *ckpt_socket_refusal(int fd, bool (*peer_held)(uint64_t ino,
                                                          void *ctx),
                                void *ctx)
{
    int type = sockopt_int(fd, SOL_SOCKET, SO_TYPE);
    if (sockopt_int(fd, SOL_SOCKET, SO_DOMAIN) != AF_UNIX ||
        (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_SEQPACKET))
        return "a socket other than a unix socket pair";
    struct sockaddr_un name;
    socklen_t len = sizeof(name);
    if (sockopt_int(fd, SOL_SOCKET, SO_ACCEPTCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&name, &len) < 0 ||
        len > sizeof(sa_family_t))
        return "a unix socket with a name (bound, or listening)";
    struct stat st;
    bool has_peer;
    uint64_t peer;
    unsigned shutdown;
    if (fstat(fd, &st) < 0 ||
        !proxy_unix_diag(st.st_ino, &has_peer, &peer, &shutdown))
        return "a unix socket sock_diag cannot describe";
    if (has_peer && peer == 0 && type == SOCK_DGRAM)
        return "a datagram socket whose peer is gone";
    if (has_peer && peer != 0 && !peer_held(peer, ctx))
        return "a unix socket connected to one outside the guests";
    return NULL;
}

/* The control messages a peek brought: passed fds (closed at once here)
 * refuse the copy. */
static bool control_passes_fds(struct msghdr *m)
{
    bool fds = false;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        fds = true;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *v = (int *)CMSG_DATA(c);
        for (size_t i = 0; i < n; i++)
            close(v[i]);
    }
    return fds || (m->msg_flags & MSG_CTRUNC);
}

/* One peek at the offset: its length (the datagram's whole; 0: an empty
 * datagram, or a stream's end of file), PEEK_NO_MORE when the queue has no
 * more, -1 with *why. */
#define PEEK_NO_MORE (-2)
static ssize_t peek_once(int fd, const struct ckpt_socket *s, char *buf,
                         const char **why)
{
    char control[CMSG_SPACE(64 * sizeof(int)) + CMSG_SPACE(64)];
    struct iovec iov = {.iov_base = buf, .iov_len = PEEK_CHUNK};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = control,
                       .msg_controllen = sizeof(control)};
    int flags = MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC |
                (s->type == SOCK_STREAM ? 0 : MSG_TRUNC);
    ssize_t n = recvmsg(fd, &m, flags);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return PEEK_NO_MORE;
    if (n < 0) {
        *why = "a unix socket's queue cannot be read";
        return -1;
    }
    if (m.msg_controllen && control_passes_fds(&m)) {
        *why = "a unix socket holding passed file descriptors";
        return -1;
    }
    if (n > PEEK_CHUNK) {
        *why = "a datagram larger than a checkpoint copies";
        return -1;
    }
    return n;
}

/* The queue into s->data (and s->msg_len). 0 or -1 with *why. */
static int peek_queue(int fd, struct ckpt_socket *s, const char **why)
{
    char *buf = malloc(PEEK_CHUNK);
    if (!buf) {
        *why = "out of memory";
        return -1;
    }
    int zero = 0, rc = 0;
    (void)setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero));
    for (size_t turns = 0; rc == 0; turns++) {
        ssize_t n = peek_once(fd, s, buf, why);
        if (n == PEEK_NO_MORE || (n == 0 && s->type == SOCK_STREAM))
            break;
        if (n < 0 || turns == MAX_MSGS) {
            *why = n < 0 ? *why : "a unix socket holding too many messages";
            rc = -1;
            break;
        }
        char *data = realloc(s->data, s->len + (size_t)n + 1);
        size_t *lens = s->type == SOCK_STREAM
                           ? s->msg_len
                           : realloc(s->msg_len,
                                     (s->nr_msgs + 1) * sizeof(*lens));
        if (data)
            s->data = data;
        if (lens)
            s->msg_len = lens;
        /* a stream keeps no lengths: its msg_len stays NULL */
        if (!data || (!lens && s->type != SOCK_STREAM)) {
            *why = "out of memory";
            rc = -1;
            break;
        }
        memcpy(s->data + s->len, buf, (size_t)n);
        s->len += (size_t)n;
        if (s->type != SOCK_STREAM)
            s->msg_len[s->nr_msgs++] = (size_t)n;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &s->peek_off,
                     sizeof(s->peek_off));
    free(buf);
    return rc;
}

int ckpt_socket_save(int fd, struct ckpt_socket *s, const char **why)
{
    memset(s, 0, sizeof(*s));
    struct stat st;
    if (fstat(fd, &st) < 0 ||
        !proxy_unix_diag(st.st_ino, &s->connected, &s->peer_ino,
                         &s->shutdown)) {
        *why = "a unix socket sock_diag cannot describe";
        return -1;
    }
    s->ino = st.st_ino;
    s->type = sockopt_int(fd, SOL_SOCKET, SO_TYPE);
    s->peek_off = sockopt_int(fd, SOL_SOCKET, SO_PEEK_OFF);
    s->sndbuf = sockopt_int(fd, SOL_SOCKET, SO_SNDBUF);
    s->rcvbuf = sockopt_int(fd, SOL_SOCKET, SO_RCVBUF);
    s->passcred = sockopt_int(fd, SOL_SOCKET, SO_PASSCRED) > 0;
    return peek_queue(fd, s, why);
}

/* The saved options on a new socket (the buffer sizes as the guest set
 * them: the kernel doubles what it is given). */
static void put_options(int fd, const struct ckpt_socket *s)
{
    int snd = s->sndbuf / 2, rcv = s->rcvbuf / 2, cred = s->passcred;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
    (void)setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &cred, sizeof(cred));
    (void)setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &s->peek_off,
                     sizeof(s->peek_off));
}

/* What q's queue held, sent through from (the other end). 0 or -1. */
static int refill(int from, const struct ckpt_socket *q)
{
    int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
    if (q->type == SOCK_STREAM) {
        for (size_t done = 0; done < q->len;) {
            ssize_t n = send(from, q->data + done, q->len - done, flags);
            if (n <= 0)
                return -1;
            done += (size_t)n;
        }
        return 0;
    }
    size_t at = 0;
    for (size_t i = 0; i < q->nr_msgs; i++) {
        if (send(from, q->data + at, q->msg_len[i], flags) !=
            (ssize_t)q->msg_len[i])
            return -1;
        at += q->msg_len[i];
    }
    return 0;
}

/* Shutdowns as s had them: its SEND_SHUTDOWN (a pair's peer gets its
 * RCV_SHUTDOWN from it), and a datagram socket's own RCV_SHUTDOWN. */
static void put_shutdown(int fd, const struct ckpt_socket *s)
{
    bool rd = (s->shutdown & 1) && s->type == SOCK_DGRAM;
    bool wr = (s->shutdown & 2) != 0;
    if (rd || wr)
        (void)shutdown(fd, rd && wr ? SHUT_RDWR : rd ? SHUT_RD : SHUT_WR);
}

int ckpt_socket_restore(const struct ckpt_socket *a,
                        const struct ckpt_socket *b, int ends[2])
{
    ends[0] = ends[1] = -1;
    if (!a->connected) { /* never connected: nothing queued, no peer */
        ends[0] = socket(AF_UNIX, a->type | SOCK_CLOEXEC, 0);
        if (ends[0] < 0)
            return -1;
        put_options(ends[0], a);
        put_shutdown(ends[0], a);
        return 0;
    }
    if (socketpair(AF_UNIX, a->type | SOCK_CLOEXEC, 0, ends) < 0)
        return -1;
    put_options(ends[0], a);
    if (b)
        put_options(ends[1], b);
    if (refill(ends[1], a) < 0 || (b && refill(ends[0], b) < 0)) {
        int err = errno ? errno : EIO;
        close(ends[0]);
        close(ends[1]);
        ends[0] = ends[1] = -1;
        errno = err;
        return -1;
    }
    if (!b) { /* the peer was gone: its end goes, as it went */
        close(ends[1]);
        ends[1] = -1;
        return 0;
    }
    put_shutdown(ends[0], a);
    put_shutdown(ends[1], b);
    return 0;
}

void ckpt_socket_free(struct ckpt_socket *s)
{
    free(s->data);
    free(s->msg_len);
    s->data = NULL;
    s->msg_len = NULL;
}
