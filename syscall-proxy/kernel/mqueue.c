/*
 * mqueue.c - POSIX message queues: mq_open, mq_unlink, mq_timedsend,
 * mq_timedreceive, mq_notify, mq_getsetattr, in the run's own IPC
 * namespace (the world's list of names; nothing appears in the host's
 * /dev/mqueue), as Linux's ipc/mqueue.c.
 *
 * A queue descriptor is a guest fd over a host eventfd (as timerfd.c's):
 * its counter is kept at 0 while the queue is empty, 1 while it has
 * messages and room, and the eventfd's maximum while it is full, so
 * poll/select/epoll see POLLIN for "a message to receive" and POLLOUT for
 * "room to send" through the usual host paths. The description (access
 * mode, O_NONBLOCK on the host eventfd) is shared by dups and fork
 * children and ends with its last fd; a read of the fd gives Linux's
 * "QSIZE:... NOTIFY:... SIGNO:... NOTIFY_PID:..." line, a write is EINVAL.
 * Descriptors are always close-on-exec, as Linux makes them.
 *
 * Messages are kept highest priority first, FIFO within a priority. A
 * send to a full queue or a receive from an empty one waits as System V
 * messages do (sysvmsg.c): the call runs again every 1 ms of logical time
 * (or at its absolute CLOCK_REALTIME timeout, then ETIMEDOUT) until it can
 * go; a handler ends the wait with EINTR, or restarts it with SA_RESTART
 * (Linux's ERESTARTSYS). Waiters are not handed messages directly, so a
 * waiting receiver does not hold back the notification as Linux's
 * pipelined send does, and whichever waiter runs first is served.
 *
 * Limits as a Linux host's defaults (fs.mqueue: msg_max 10, msgsize_max
 * 8192, queues_max 256), which bind root too: no guest has
 * CAP_SYS_RESOURCE, as in an unprivileged container; RLIMIT_MSGQUEUE is
 * charged per run (one user). A queue's owner and mode checks take the
 * filesystem ids (setfsuid); root's CAP_DAC_OVERRIDE and CAP_FOWNER do
 * hold for a queue's mode and for mq_unlink while its fsuid is 0.
 * mq_notify: SIGEV_SIGNAL (si_code SI_MESGQ, the sender's pid and uid),
 * SIGEV_NONE and SIGEV_THREAD, one-shot, removed when the owner closes a
 * descriptor of the queue. SIGEV_THREAD is Linux's netlink delivery (what
 * glibc's mq_notify helper thread reads): a 32-byte cookie of the
 * caller's, its last byte NOTIFY_WOKENUP when a message arrives or
 * NOTIFY_REMOVED when the registration goes, written to a netlink socket
 * the caller names. Only the kernel can write to that socket (a netlink
 * unicast from a process needs CAP_NET_ADMIN), so hvrun has the host
 * kernel do it: the registration is mirrored on a private host queue of
 * hvrun's (one message deep, unlinked at once) with the guest's socket
 * and cookie; hvrun sends to it when the guest's queue fires and closes
 * it when the registration is removed, and the host writes the cookie
 * then, inside that guest call, so the guest's recv sees it in the same
 * place every run.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "det.h"

#define MQ_MSG_DEFAULT 10
#define MQ_MSGSIZE_DEFAULT 8192
#define MQ_MSG_MAX 10
#define MQ_MSGSIZE_MAX 8192
#define MQ_QUEUES_MAX 256
#define MQ_PRIO_LIMIT 32768 /* MQ_PRIO_MAX */
#define MQ_RETRY_NS 1000000ULL
#define MQ_EVENTFD_FULL 0xfffffffffffffffeULL
/* Linux charges each message its msg_msg and a tree node per priority. */
#define MQ_MSG_OVERHEAD 48
#define MQ_NODE_OVERHEAD 40

struct mq_msg {
    struct mq_msg *next;
    unsigned int prio;
    size_t len;
    char data[];
};

struct proxy_mqd;

struct proxy_mqueue {
    /* The world's queues, named or not: an unlinked queue that a
     * descriptor still holds stays here until its last reference goes,
     * so the end of the run can detach it from the world (the world does
     * not outlive the run, the first process's descriptors do). */
    struct proxy_mqueue *next;
    struct proxy_world *world; /* NULL once the run is over */
    char name[NAME_MAX + 1];
    bool linked;
    int refs;                  /* the name and every description */
    uid_t uid;
    gid_t gid;
    mode_t mode;
    long maxmsg, msgsize, curmsgs;
    size_t charged;            /* against RLIMIT_MSGQUEUE */
    struct mq_msg *msgs;
    /* mq_notify: the owner's pid (0: none) and fd table (its close of a
     * descriptor of this queue removes the registration) */
    int notify_pid;
    const struct proxy_fdtable *notify_fds;
    struct sigevent notify;
    /* SIGEV_THREAD: the host queue registered with the guest's netlink
     * socket and cookie (notify_thread says whether there is one). */
    bool notify_thread;
    mqd_t notify_host_mq;
    struct proxy_mqd **descs;
    int nr_descs;
};

struct proxy_mqd {
    int refs;
    struct proxy_mqueue *q;
    int accmode;     /* O_RDONLY, O_WRONLY, O_RDWR (or 3: neither) */
    int efd;         /* hvrun's reference to the guest's eventfd */
    size_t read_pos; /* the status line read so far */
};

struct world_mq {
    struct proxy_mqueue *head;
    int count;
    size_t bytes;
};

/* ---- the run's names --------------------------------------------------------- */

static struct proxy_mqueue *find_name(struct proxy_world *w, const char *name)
{
    for (struct proxy_mqueue *q = w->mqueues; q; q = q->next)
        if (q->linked && !strcmp(q->name, name))
            return q;
    return NULL;
}

/* The name goes; the queue stays on the world's list while it is open. */
static void unlink_name(struct proxy_world *w, struct proxy_mqueue *q)
{
    q->linked = false;
    w->nr_mqueues--;
}

static void world_forget(struct proxy_world *w, struct proxy_mqueue *q)
{
    for (struct proxy_mqueue **pp = &w->mqueues; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    w->mq_bytes -= q->charged;
}

static void queue_put(struct proxy_mqueue *q)
{
    if (--q->refs > 0)
        return;
    if (q->notify_thread) /* gone with its queue: the host closes it */
        mq_close(q->notify_host_mq);
    if (q->world)
        world_forget(q->world, q);
    while (q->msgs) {
        struct mq_msg *m = q->msgs;
        q->msgs = m->next;
        free(m);
    }
    free(q->descs);
    free(q);
}

/* The names' references go; a queue still open in the first process
 * (which outlives the world) is detached and freed by its last close. */
void proxy_mq_world_free(struct proxy_world *w)
{
    struct proxy_mqueue *q = w->mqueues;
    while (q) {
        struct proxy_mqueue *next = q->next;
        bool named = q->linked;
        q->linked = false;
        q->world = NULL;
        if (named)
            queue_put(q);
        q = next;
    }
    w->mqueues = NULL;
    w->nr_mqueues = 0;
}

/* ---- readiness ------------------------------------------------------------------ */

static void set_count(int efd, uint64_t want)
{
    struct pollfd pfd = {.fd = efd, .events = POLLIN};
    uint64_t v;
    if (poll(&pfd, 1, 0) > 0)
        (void)!read(efd, &v, sizeof(v)); /* the whole count: back to 0 */
    if (want)
        (void)!write(efd, &want, sizeof(want)); /* (void)!: see timerfd.c */
}

static void sync_ready(struct proxy_mqueue *q)
{
    uint64_t want = q->curmsgs == 0 ? 0
                    : q->curmsgs >= q->maxmsg ? MQ_EVENTFD_FULL
                                              : 1;
    for (int i = 0; i < q->nr_descs; i++)
        set_count(q->descs[i]->efd, want);
}

/* ---- descriptions ------------------------------------------------------------- */

/* Ends the registration; a SIGEV_THREAD one's host queue is closed, and
 * the host kernel writes the cookie with NOTIFY_REMOVED (if it has not
 * fired: fire_thread_notification) to the guest's socket. */
static void remove_notification(struct proxy_mqueue *q)
{
    q->notify_pid = 0;
    q->notify_fds = NULL;
    if (q->notify_thread)
        mq_close(q->notify_host_mq);
    q->notify_thread = false;
}

/* The host kernel writes the cookie with NOTIFY_WOKENUP (the host queue
 * went from empty to one message: __do_notify) and forgets the
 * registration, so the close that follows writes nothing more. */
static void fire_thread_notification(struct proxy_mqueue *q)
{
    if (q->notify_thread)
        (void)!mq_send(q->notify_host_mq, "", 0, 0);
}

#define NOTIFY_COOKIE_LEN 32

/* A host queue of hvrun's registered for SIGEV_THREAD to the netlink
 * socket host_sock with the guest's cookie: the host fd, or -errno. Its
 * name is gone before the guest runs again. */
static long thread_notification_host(int host_sock, const void *cookie)
{
    static unsigned long seq;
    char name[64];
    snprintf(name, sizeof(name), "/hvrun-notify-%d-%lu", (int)getpid(), ++seq);
    struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = 1};
    mqd_t m = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NONBLOCK,
                      0600, &attr);
    if (m == (mqd_t)-1)
        return -errno;
    mq_unlink(name);
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_signo = host_sock;
    ev.sigev_value.sival_ptr = (void *)cookie; /* copied by the kernel */
    if (syscall(SYS_mq_notify, m, &ev) < 0) {
        int err = errno;
        mq_close(m);
        return -err;
    }
    return m;
}

/* do_mq_notify's SIGEV_THREAD checks, before the queue's: the cookie
 * (EFAULT), then the socket: no fd (EBADF), not a socket (ENOTSOCK), not
 * a netlink one (EINVAL). The host fd of the socket, or -errno. */
static long thread_notification_socket(struct proxy_process *p,
                                       const struct sigevent *ev,
                                       char cookie[NOTIFY_COOKIE_LEN])
{
    if (proxy_copy_in(p, cookie, (gva_t)(uintptr_t)ev->sigev_value.sival_ptr,
                      NOTIFY_COOKIE_LEN) < 0)
        return -EFAULT;
    int host = proxy_fd_host(&p->fds, ev->sigev_signo);
    if (host < 0)
        return -EBADF;
    struct stat st;
    if (fstat(host, &st) < 0 || !S_ISSOCK(st.st_mode))
        return -ENOTSOCK;
    int domain = 0;
    socklen_t len = sizeof(domain);
    if (getsockopt(host, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
        domain != AF_NETLINK)
        return -EINVAL;
    return host;
}

void proxy_mqd_put(struct proxy_mqd *d, const struct proxy_fdtable *closer)
{
    if (!d)
        return;
    struct proxy_mqueue *q = d->q;
    /* mqueue_flush_file: the owner's close ends its registration. */
    if (closer && q->notify_pid && q->notify_fds == closer)
        remove_notification(q);
    if (--d->refs > 0)
        return;
    for (int i = 0; i < q->nr_descs; i++)
        if (q->descs[i] == d) {
            q->descs[i] = q->descs[--q->nr_descs];
            break;
        }
    close(d->efd);
    free(d);
    queue_put(q);
}

int proxy_mqd_efd(const struct proxy_mqd *d)
{
    return d->efd;
}

bool proxy_mqd_host_notify(const struct proxy_mqd *d)
{
    return d->q && d->q->notify_thread;
}

void proxy_mqd_share(struct proxy_fd *to, const struct proxy_fd *from)
{
    if (!from->mqd || to->mqd == from->mqd)
        return;
    proxy_mqd_put(to->mqd, NULL);
    from->mqd->refs++;
    to->mqd = from->mqd;
}

static struct proxy_mqd *mqd_of(struct proxy_process *p, int fd)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, fd);
    return f ? f->mqd : NULL;
}

static bool nonblocking(const struct proxy_mqd *d)
{
    int fl = fcntl(d->efd, F_GETFL);
    return fl >= 0 && (fl & O_NONBLOCK);
}

static long install(struct proxy_process *p, struct proxy_mqueue *q,
                    int oflag)
{
    struct proxy_mqd *d = calloc(1, sizeof(*d));
    void *v = realloc(q->descs, (size_t)(q->nr_descs + 1) * sizeof(*q->descs));
    if (!d || !v) {
        free(d);
        return -ENOMEM;
    }
    q->descs = v;
    d->refs = 1;
    d->q = q;
    d->accmode = oflag & O_ACCMODE;
    d->efd = eventfd(0, EFD_CLOEXEC |
                            ((oflag & O_NONBLOCK) ? EFD_NONBLOCK : 0));
    int guest_host_fd = d->efd < 0 ? -1 : fcntl(d->efd, F_DUPFD_CLOEXEC, 0);
    if (guest_host_fd < 0) {
        long err = -errno;
        if (d->efd >= 0)
            close(d->efd);
        free(d);
        return err;
    }
    q->refs++;
    q->descs[q->nr_descs++] = d;
    sync_ready(q);
    int fd = proxy_fd_install(&p->fds, guest_host_fd, true, 0);
    if (fd < 0) {
        proxy_mqd_put(d, NULL);
        return fd;
    }
    proxy_fd_get(&p->fds, fd)->mqd = d;
    return fd;
}

/* ---- mq_open, mq_unlink --------------------------------------------------------- */

/* The name as the mqueue fs's lookup takes it (glibc strips the '/'). */
static long read_name(struct proxy_process *p, gva_t u, char *name)
{
    char path[PROXY_PATH_MAX];
    long rc = proxy_path_in(p, path, u);
    if (rc < 0)
        return rc;
    size_t len = strlen(path);
    if (len == 0)
        return -ENOENT;
    if (!strcmp(path, ".") || !strcmp(path, "..") || strchr(path, '/'))
        return -EACCES;
    if (len > NAME_MAX)
        return -ENAMETOOLONG;
    memcpy(name, path, len + 1);
    return 0;
}

/* A queue is a file of the mqueue filesystem: its checks take the
 * filesystem ids, and root's CAP_DAC_OVERRIDE and CAP_FOWNER, which Linux
 * drops while the fsuid is not 0 (cap_task_fix_setuid). */
static bool privileged(const struct proxy_process *p)
{
    return p->cred.euid == 0 && p->cred.fsuid == 0;
}

/* No guest has CAP_SYS_RESOURCE (an unprivileged container's root has
 * not), so the sysctl limits hold for every one. */
static long attr_ok(const struct mq_attr *a)
{
    if (a->mq_maxmsg <= 0 || a->mq_msgsize <= 0)
        return -EINVAL;
    if (a->mq_maxmsg > MQ_MSG_MAX || a->mq_msgsize > MQ_MSGSIZE_MAX)
        return -EINVAL;
    return 0;
}

static bool may_access(const struct proxy_process *p,
                       const struct proxy_mqueue *q, int want)
{
    if (privileged(p))
        return true;
    mode_t m = p->cred.fsuid == q->uid ? (q->mode >> 6)
               : p->cred.fsgid == q->gid ? (q->mode >> 3)
                                   : q->mode;
    return (m & (mode_t)want) == (mode_t)want;
}

static long create(struct proxy_process *p, const char *name, int oflag,
                   mode_t mode, const struct mq_attr *attr)
{
    struct proxy_world *w = p->world;
    struct mq_attr a = {.mq_maxmsg = MQ_MSG_DEFAULT,
                        .mq_msgsize = MQ_MSGSIZE_DEFAULT};
    if (attr) {
        long rc = attr_ok(attr);
        if (rc < 0)
            return rc;
        a = *attr;
    }
    if (w->nr_mqueues >= MQ_QUEUES_MAX)
        return -ENOSPC;
    long nodes = a.mq_maxmsg < MQ_PRIO_LIMIT ? a.mq_maxmsg : MQ_PRIO_LIMIT;
    size_t charge = (size_t)a.mq_maxmsg * MQ_MSG_OVERHEAD +
                    (size_t)nodes * MQ_NODE_OVERHEAD +
                    (size_t)a.mq_maxmsg * (size_t)a.mq_msgsize;
    rlim_t lim = p->rlimits[RLIMIT_MSGQUEUE].rlim_cur;
    if (w->mq_bytes + charge < w->mq_bytes ||
        (lim != RLIM_INFINITY && w->mq_bytes + charge > lim))
        return -EMFILE;
    struct proxy_mqueue *q = calloc(1, sizeof(*q));
    if (!q)
        return -ENOMEM;
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->world = w;
    q->linked = true;
    q->refs = 1;
    q->uid = p->cred.fsuid;
    q->gid = p->cred.fsgid;
    q->mode = mode & ~p->fs.umask & 07777;
    q->maxmsg = a.mq_maxmsg;
    q->msgsize = a.mq_msgsize;
    q->charged = charge;
    w->mq_bytes += charge;
    q->next = w->mqueues;
    w->mqueues = q;
    w->nr_mqueues++;
    long fd = install(p, q, oflag);
    if (fd < 0) {
        unlink_name(w, q);
        queue_put(q);
    }
    return fd;
}

static long sys_mq_open(struct proxy_process *p, const uint64_t a[6])
{
    int oflag = (int)a[1];
    struct mq_attr attr, *pattr = NULL;
    if (a[3]) {
        if (proxy_copy_in(p, &attr, a[3], sizeof(attr)) < 0)
            return -EFAULT;
        pattr = &attr;
    }
    char name[NAME_MAX + 1];
    long rc = read_name(p, a[0], name);
    if (rc < 0)
        return rc;
    struct proxy_mqueue *q = find_name(p->world, name);
    if (!q) {
        if (!(oflag & O_CREAT))
            return -ENOENT;
        return create(p, name, oflag, (mode_t)a[2], pattr);
    }
    if ((oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return -EEXIST;
    if ((oflag & O_ACCMODE) == O_ACCMODE)
        return -EINVAL;
    static const int want[3] = {4, 2, 6};
    if (!may_access(p, q, want[oflag & O_ACCMODE]))
        return -EACCES;
    return install(p, q, oflag);
}

static long sys_mq_unlink(struct proxy_process *p, const uint64_t a[6])
{
    char name[NAME_MAX + 1];
    long rc = read_name(p, a[0], name);
    if (rc < 0)
        return rc;
    struct proxy_mqueue *q = find_name(p->world, name);
    if (!q)
        return -ENOENT;
    /* /dev/mqueue is sticky (1777): the owner or root removes it. */
    if (!privileged(p) && p->cred.fsuid != q->uid)
        return -EPERM;
    unlink_name(p->world, q);
    queue_put(q);
    return 0;
}

/* ---- sending and receiving ---------------------------------------------------- */

/* An absolute CLOCK_REALTIME timeout: EFAULT, EINVAL; *deadline in ns. */
static long read_timeout(struct proxy_process *p, gva_t u, int64_t *deadline)
{
    struct timespec ts;
    if (proxy_copy_in(p, &ts, u, sizeof(ts)) < 0)
        return -EFAULT;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
        return -EINVAL;
    *deadline = det_timespec_ns(&ts);
    return 0;
}

static int64_t realtime_ns(struct proxy_process *p)
{
    struct timespec ts;
    det_clock_gettime(p->det, CLOCK_REALTIME, &ts);
    return det_timespec_ns(&ts);
}

/* Waits (the call runs again) or times out. */
static long wait_or_timeout(struct proxy_process *p, bool timed,
                            int64_t deadline)
{
    uint64_t step = MQ_RETRY_NS;
    if (timed) {
        int64_t now = realtime_ns(p);
        if (now >= deadline)
            return -ETIMEDOUT;
        if ((uint64_t)(deadline - now) < step)
            step = (uint64_t)(deadline - now);
    }
    return proxy_thread_retry_after(p, step);
}

static void notify_owner(struct proxy_process *sender, struct proxy_mqueue *q)
{
    if (!q->notify_pid)
        return;
    struct proxy_process *owner =
        q->world ? proxy_world_find(q->world, q->notify_pid) : NULL;
    if (owner && !owner->zombie && q->notify.sigev_notify == SIGEV_SIGNAL &&
        q->notify.sigev_signo) {
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        si.si_signo = q->notify.sigev_signo;
        si.si_code = SI_MESGQ;
        si.si_value = q->notify.sigev_value;
        /* as the owner's pid and user namespaces see the sender */
        si.si_pid = proxy_ns_pid_of(owner, sender);
        si.si_uid = proxy_ns_uid_seen(owner, sender->cred.ruid);
        proxy_signal_raise(owner, q->notify.sigev_signo, &si);
    }
    fire_thread_notification(q);
    remove_notification(q);
}

static long sys_mq_timedsend(struct proxy_process *p, const uint64_t a[6])
{
    size_t len = (size_t)a[2];
    unsigned int prio = (unsigned int)a[3];
    int64_t deadline = 0;
    if (a[4]) {
        long rc = read_timeout(p, a[4], &deadline);
        if (rc < 0)
            return rc;
    }
    if (prio >= MQ_PRIO_LIMIT)
        return -EINVAL;
    struct proxy_mqd *d = mqd_of(p, (int)a[0]);
    if (!d || !(d->accmode == O_WRONLY || d->accmode == O_RDWR))
        return -EBADF;
    struct proxy_mqueue *q = d->q;
    if (len > (size_t)q->msgsize)
        return -EMSGSIZE;
    struct mq_msg *m = malloc(sizeof(*m) + (len ? len : 1));
    if (!m)
        return -ENOMEM;
    if (len && proxy_copy_in(p, m->data, a[1], len) < 0) {
        free(m);
        return -EFAULT;
    }
    if (q->curmsgs >= q->maxmsg) {
        free(m);
        if (nonblocking(d))
            return -EAGAIN;
        return wait_or_timeout(p, a[4] != 0, deadline);
    }
    m->prio = prio;
    m->len = len;
    struct mq_msg **pp = &q->msgs;
    while (*pp && (*pp)->prio >= prio)
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
    q->curmsgs++;
    if (q->curmsgs == 1)
        notify_owner(p, q);
    sync_ready(q);
    return 0;
}

static long sys_mq_timedreceive(struct proxy_process *p, const uint64_t a[6])
{
    size_t len = (size_t)a[2];
    int64_t deadline = 0;
    if (a[4]) {
        long rc = read_timeout(p, a[4], &deadline);
        if (rc < 0)
            return rc;
    }
    struct proxy_mqd *d = mqd_of(p, (int)a[0]);
    if (!d || !(d->accmode == O_RDONLY || d->accmode == O_RDWR))
        return -EBADF;
    struct proxy_mqueue *q = d->q;
    if (len < (size_t)q->msgsize)
        return -EMSGSIZE;
    if (q->curmsgs == 0) {
        if (nonblocking(d))
            return -EAGAIN;
        return wait_or_timeout(p, a[4] != 0, deadline);
    }
    struct mq_msg *m = q->msgs;
    q->msgs = m->next;
    q->curmsgs--;
    sync_ready(q);
    long rc = (long)m->len;
    unsigned int prio = m->prio;
    /* The message is gone even when it cannot be stored, as Linux. */
    if ((a[3] && proxy_copy_out(p, a[3], &prio, sizeof(prio)) < 0) ||
        (m->len && proxy_copy_out(p, a[1], m->data, m->len) < 0))
        rc = -EFAULT;
    free(m);
    return rc;
}

/* ---- mq_notify, mq_getsetattr ---------------------------------------------------- */

static long sys_mq_notify(struct proxy_process *p, const uint64_t a[6])
{
    struct sigevent ev;
    if (a[1]) {
        if (proxy_copy_in(p, &ev, a[1], sizeof(ev)) < 0)
            return -EFAULT;
        if (ev.sigev_notify != SIGEV_NONE && ev.sigev_notify != SIGEV_SIGNAL &&
            ev.sigev_notify != SIGEV_THREAD)
            return -EINVAL;
        if (ev.sigev_notify == SIGEV_SIGNAL &&
            (unsigned int)ev.sigev_signo > PROXY_NSIG - 1)
            return -EINVAL;
    }
    char cookie[NOTIFY_COOKIE_LEN];
    long host_sock = -1;
    if (a[1] && ev.sigev_notify == SIGEV_THREAD &&
        (host_sock = thread_notification_socket(p, &ev, cookie)) < 0)
        return host_sock;
    struct proxy_mqd *d = mqd_of(p, (int)a[0]);
    if (!d)
        return -EBADF;
    struct proxy_mqueue *q = d->q;
    /* An owner that died without closing is no owner. */
    if (q->notify_pid && q->world) {
        struct proxy_process *o = proxy_world_find(q->world, q->notify_pid);
        if (!o || o->zombie)
            remove_notification(q);
    }
    if (!a[1]) {
        if (q->notify_pid == p->pid)
            remove_notification(q);
        return 0;
    }
    if (q->notify_pid)
        return -EBUSY;
    if (ev.sigev_notify == SIGEV_THREAD) {
        long m = thread_notification_host((int)host_sock, cookie);
        if (m < 0)
            return m;
        q->notify_thread = true;
        q->notify_host_mq = (mqd_t)m;
    }
    q->notify = ev;
    q->notify_pid = p->pid;
    q->notify_fds = &p->fds;
    return 0;
}

static long sys_mq_getsetattr(struct proxy_process *p, const uint64_t a[6])
{
    struct mq_attr nw, old;
    if (a[1]) {
        if (proxy_copy_in(p, &nw, a[1], sizeof(nw)) < 0)
            return -EFAULT;
        if (nw.mq_flags & ~(long)O_NONBLOCK)
            return -EINVAL;
    }
    struct proxy_mqd *d = mqd_of(p, (int)a[0]);
    if (!d)
        return -EBADF;
    memset(&old, 0, sizeof(old));
    old.mq_flags = nonblocking(d) ? O_NONBLOCK : 0;
    old.mq_maxmsg = d->q->maxmsg;
    old.mq_msgsize = d->q->msgsize;
    old.mq_curmsgs = d->q->curmsgs;
    if (a[1]) {
        int fl = fcntl(d->efd, F_GETFL);
        fl = (nw.mq_flags & O_NONBLOCK) ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
        if (fcntl(d->efd, F_SETFL, fl) < 0)
            return -errno;
    }
    if (a[2] && proxy_copy_out(p, a[2], &old, sizeof(old)) < 0)
        return -EFAULT;
    return 0;
}

/* ---- read and write of the fd ------------------------------------------------------ */

/* iov: the host iovecs of the guest's buffer (io.c, already checked). */
long proxy_mq_xfer(struct proxy_process *p, int guest_fd, bool into_guest,
                   const struct iovec *iov, int n)
{
    struct proxy_mqd *d = mqd_of(p, guest_fd);
    if (!into_guest)
        return d->accmode == O_WRONLY || d->accmode == O_RDWR ? -EINVAL
                                                              : -EBADF;
    if (d->accmode == O_WRONLY || d->accmode == O_ACCMODE)
        return -EBADF;
    struct proxy_mqueue *q = d->q;
    char line[128];
    size_t bytes = 0;
    for (struct mq_msg *m = q->msgs; m; m = m->next)
        bytes += m->len;
    bool sig = q->notify_pid && q->notify.sigev_notify == SIGEV_SIGNAL;
    int len = snprintf(line, sizeof(line),
                       "QSIZE:%-10zu NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n",
                       bytes, q->notify_pid ? q->notify.sigev_notify : 0,
                       sig ? q->notify.sigev_signo : 0, q->notify_pid);
    size_t done = 0;
    for (int i = 0; i < n && d->read_pos < (size_t)len; i++) {
        size_t k = (size_t)len - d->read_pos;
        if (k > iov[i].iov_len)
            k = iov[i].iov_len;
        memcpy(iov[i].iov_base, line + d->read_pos, k);
        d->read_pos += k;
        done += k;
    }
    return (long)done;
}

const struct proxy_syscall proxy_mqueue_syscalls[] = {
    {SYS_mq_open, "mq_open", sys_mq_open},
    {SYS_mq_unlink, "mq_unlink", sys_mq_unlink},
    {SYS_mq_timedsend, "mq_timedsend", sys_mq_timedsend},
    {SYS_mq_timedreceive, "mq_timedreceive", sys_mq_timedreceive},
    {SYS_mq_notify, "mq_notify", sys_mq_notify},
    {SYS_mq_getsetattr, "mq_getsetattr", sys_mq_getsetattr},
    {-1, NULL, NULL},
};
