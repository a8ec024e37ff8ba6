/*
 * sysvmsg.c - System V message queues: msgget, msgsnd, msgrcv, msgctl.
 *
 * The run's own IPC namespace, as for semaphores (sysvsem.c): queues live
 * in the world, ids from 0. A send to a full queue or a receive with
 * nothing that matches waits as a semop does: the thread tries again
 * every 1 ms of logical time until it can go, the queue is removed
 * (EIDRM) or a signal handler runs (EINTR: never restarted); IPC_NOWAIT
 * makes those EAGAIN and ENOMSG. Selection by type as Linux: 0 the first,
 * > 0 the first of that type (MSG_EXCEPT: of another), < 0 the lowest
 * type up to its magnitude; MSG_NOERROR truncates, else E2BIG. MSG_COPY
 * (a checkpoint/restore interface, with IPC_NOWAIT) copies the message
 * of that index out and leaves the queue as it was.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/syscall.h>
#include <time.h>

#include "det.h"

#define MSG_MAX_BYTES 8192  /* MSGMAX */
#define MSG_QUEUE_BYTES 16384 /* MSGMNB */
#define MSG_MAX_QUEUES 32000 /* MSGMNI */
#define MSG_RETRY_NS 1000000ULL
#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

struct msg {
    long type;
    size_t len;
    struct msg *next;
    char text[];
};

struct proxy_msg_queue {
    int id;
    int32_t key;
    struct ipc_perm perm;
    struct msg *head, *tail;
    size_t bytes, count, max_bytes;
    int lspid, lrpid;
    int64_t stime, rtime, ctime;
};

static struct proxy_msg_queue *queue_by_id(struct proxy_world *w, int id)
{
    for (int i = 0; i < w->nr_msg; i++)
        if (w->msg[i]->id == id)
            return w->msg[i];
    return NULL;
}

static long sys_msgget(struct proxy_process *p, const uint64_t a[6])
{
    int32_t key = (int32_t)a[0];
    int flags = (int)a[1];
    struct proxy_world *w = p->world;
    if (key != IPC_PRIVATE) {
        for (int i = 0; i < w->nr_msg; i++) {
            struct proxy_msg_queue *q = w->msg[i];
            if (q->key != key)
                continue;
            if ((flags & (IPC_CREAT | IPC_EXCL)) == (IPC_CREAT | IPC_EXCL))
                return -EEXIST;
            return proxy_ipc_permitted(p, &q->perm, proxy_ipc_wanted(flags))
                       ? q->id
                       : -EACCES;
        }
        if (!(flags & IPC_CREAT))
            return -ENOENT;
    }
    if (w->nr_msg >= MSG_MAX_QUEUES)
        return -ENOSPC;
    struct proxy_msg_queue **g =
        realloc(w->msg, (size_t)(w->nr_msg + 1) * sizeof(*g));
    if (!g)
        return -ENOMEM;
    w->msg = g;
    struct proxy_msg_queue *q = calloc(1, sizeof(*q));
    if (!q)
        return -ENOMEM;
    q->id = w->next_msgid++;
    q->key = key;
    proxy_ipc_perm_init(&q->perm, p, key, flags);
    q->max_bytes = MSG_QUEUE_BYTES;
    q->ctime = proxy_ipc_now_s(p);
    w->msg[w->nr_msg++] = q;
    return q->id;
}

/* The thread waits for the queue to change (as semop, sysvsem.c). */
static long wait_on(struct proxy_process *p, int id)
{
    struct proxy_thread *t = &p->threads[p->cur];
    t->msg_pending = true;
    t->msg_wait_id = id;
    t->eintr_on_handler = true; /* msgsnd/msgrcv are never restarted */
    return proxy_thread_retry_after(p, MSG_RETRY_NS);
}

/* Whether this call is the same one trying again after a wait. */
static bool was_waiting(struct proxy_process *p, int id)
{
    struct proxy_thread *t = &p->threads[p->cur];
    bool again = t->msg_pending && t->msg_wait_id == id;
    t->msg_pending = false;
    return again;
}

static long sys_msgsnd(struct proxy_process *p, const uint64_t a[6])
{
    int id = (int)a[0];
    gva_t msgp = a[1];
    size_t len = (size_t)a[2];
    int flags = (int)a[3];
    bool again = was_waiting(p, id);
    if ((long)a[2] < 0 || len > MSG_MAX_BYTES)
        return -EINVAL;
    struct proxy_msg_queue *q = queue_by_id(p->world, id);
    if (!q)
        return again ? -EIDRM : -EINVAL;
    long type;
    if (proxy_copy_in(p, &type, msgp, sizeof(type)) < 0)
        return -EFAULT;
    if (type < 1)
        return -EINVAL;
    if (!proxy_ipc_permitted(p, &q->perm, 2))
        return -EACCES;
    if (q->bytes + len > q->max_bytes || q->count + 1 > q->max_bytes) {
        if (flags & IPC_NOWAIT)
            return -EAGAIN;
        return wait_on(p, id);
    }
    struct msg *m = malloc(sizeof(*m) + len);
    if (!m)
        return -ENOMEM;
    if (proxy_copy_in(p, m->text, msgp + sizeof(long), len) < 0) {
        free(m);
        return -EFAULT;
    }
    m->type = type;
    m->len = len;
    m->next = NULL;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->bytes += len;
    q->count++;
    q->lspid = p->pid;
    q->stime = proxy_ipc_now_s(p);
    return 0;
}

/* The message msgrcv's type and flags pick, and the one before it. */
static struct msg *pick(struct proxy_msg_queue *q, long type, int flags,
                        struct msg **prev)
{
    struct msg *best = NULL, *best_prev = NULL, *before = NULL;
    for (struct msg *m = q->head; m; before = m, m = m->next) {
        bool ok = type == 0                ? true
                  : type > 0 && (flags & MSG_EXCEPT) ? m->type != type
                  : type > 0                         ? m->type == type
                                                     : m->type <= -type;
        if (!ok)
            continue;
        if (type >= 0) {
            *prev = before;
            return m;
        }
        if (!best || m->type < best->type) {
            best = m;
            best_prev = before;
        }
    }
    *prev = best_prev;
    return best;
}

static long sys_msgrcv(struct proxy_process *p, const uint64_t a[6])
{
    int id = (int)a[0];
    gva_t msgp = a[1];
    size_t cap = (size_t)a[2];
    long type = (long)a[3];
    int flags = (int)a[4];
    bool again = was_waiting(p, id);
    if (id < 0 || (long)a[2] < 0)
        return -EINVAL;
    /* MSG_COPY (CONFIG_CHECKPOINT_RESTORE): only with IPC_NOWAIT and
     * without MSG_EXCEPT; type is then the index of the message */
    bool copy = flags & MSG_COPY;
    if (copy && ((flags & MSG_EXCEPT) || !(flags & IPC_NOWAIT)))
        return -EINVAL;
    struct proxy_msg_queue *q = queue_by_id(p->world, id);
    if (!q)
        return again ? -EIDRM : -EINVAL;
    if (!proxy_ipc_permitted(p, &q->perm, 4))
        return -EACCES;
    struct msg *prev = NULL, *m = copy ? NULL : pick(q, type, flags, &prev);
    for (struct msg *c = q->head; copy && c && type >= 0; c = c->next, type--)
        if (type == 0)
            m = c;
    if (!m)
        return (flags & IPC_NOWAIT) ? -ENOMSG : wait_on(p, id);
    if (m->len > cap && !(flags & MSG_NOERROR))
        return -E2BIG;
    /* copy_msg: the copy is the size of the buffer (at most MSGMAX), and
     * a message larger than it is EINVAL even with MSG_NOERROR */
    if (copy && m->len > (cap < MSG_MAX_BYTES ? cap : MSG_MAX_BYTES))
        return -EINVAL;
    size_t n = m->len < cap ? m->len : cap;
    if (proxy_copy_out(p, msgp, &m->type, sizeof(m->type)) < 0 ||
        proxy_copy_out(p, msgp + sizeof(long), m->text, n) < 0)
        return -EFAULT;
    if (copy) /* the message stays, and the queue's times and pids too */
        return (long)n;
    if (prev)
        prev->next = m->next;
    else
        q->head = m->next;
    if (q->tail == m)
        q->tail = prev;
    q->bytes -= m->len;
    q->count--;
    q->lrpid = p->pid;
    q->rtime = proxy_ipc_now_s(p);
    free(m);
    return (long)n;
}

static void queue_free(struct proxy_world *w, struct proxy_msg_queue *q)
{
    for (int i = 0; i < w->nr_msg; i++)
        if (w->msg[i] == q) {
            memmove(&w->msg[i], &w->msg[i + 1],
                    (size_t)(w->nr_msg - i - 1) * sizeof(*w->msg));
            w->nr_msg--;
            break;
        }
    while (q->head) {
        struct msg *m = q->head;
        q->head = m->next;
        free(m);
    }
    free(q);
}

static long msg_stat(struct proxy_process *p, struct proxy_msg_queue *q,
                     gva_t buf)
{
    struct msqid_ds ds;
    memset(&ds, 0, sizeof(ds));
    ds.msg_perm = q->perm;
    proxy_ipc_perm_seen(p, &ds.msg_perm);
    ds.msg_stime = q->stime;
    ds.msg_rtime = q->rtime;
    ds.msg_ctime = q->ctime;
    ds.__msg_cbytes = q->bytes;
    ds.msg_qnum = q->count;
    ds.msg_qbytes = q->max_bytes;
    ds.msg_lspid = q->lspid;
    ds.msg_lrpid = q->lrpid;
    return proxy_copy_out(p, buf, &ds, sizeof(ds)) < 0 ? -EFAULT : 0;
}

static long msg_info(struct proxy_process *p, int cmd, gva_t buf)
{
    struct proxy_world *w = p->world;
    struct msginfo mi = {.msgpool = MSG_MAX_QUEUES * MSG_QUEUE_BYTES / 1024,
                         .msgmap = MSG_QUEUE_BYTES, .msgmax = MSG_MAX_BYTES,
                         .msgmnb = MSG_QUEUE_BYTES, .msgmni = MSG_MAX_QUEUES,
                         .msgssz = 16, .msgtql = MSG_QUEUE_BYTES,
                         .msgseg = 0xffff};
    if (cmd == MSG_INFO) {
        mi.msgpool = w->nr_msg;
        mi.msgmap = mi.msgtql = 0;
        for (int i = 0; i < w->nr_msg; i++) {
            mi.msgmap += (int)w->msg[i]->count;
            mi.msgtql += (int)w->msg[i]->bytes;
        }
    }
    if (proxy_copy_out(p, buf, &mi, sizeof(mi)) < 0)
        return -EFAULT;
    return w->nr_msg ? w->nr_msg - 1 : 0;
}

static long sys_msgctl(struct proxy_process *p, const uint64_t a[6])
{
    int id = (int)a[0], cmd = (int)a[1] & ~0x100;
    gva_t buf = a[2];
    if (cmd == IPC_INFO || cmd == MSG_INFO)
        return msg_info(p, cmd, buf);
    struct proxy_msg_queue *q;
    if (cmd == MSG_STAT || cmd == MSG_STAT_ANY) {
        if (id < 0 || id >= p->world->nr_msg)
            return -EINVAL;
        q = p->world->msg[id];
        if (cmd == MSG_STAT && !proxy_ipc_permitted(p, &q->perm, 4))
            return -EACCES;
        long rc = msg_stat(p, q, buf);
        return rc < 0 ? rc : q->id;
    }
    if (!(q = queue_by_id(p->world, id)))
        return -EINVAL;
    bool owner = proxy_ipc_owner(p, &q->perm);
    switch (cmd) {
    case IPC_STAT:
        return proxy_ipc_permitted(p, &q->perm, 4) ? msg_stat(p, q, buf)
                                                   : -EACCES;
    case IPC_SET: {
        if (!owner)
            return -EPERM;
        struct msqid_ds ds;
        if (proxy_copy_in(p, &ds, buf, sizeof(ds)) < 0)
            return -EFAULT;
        if (ds.msg_qbytes > MSG_QUEUE_BYTES && p->cred.euid != 0)
            return -EPERM;
        if (proxy_ipc_perm_set(p, &q->perm, &ds.msg_perm) < 0)
            return -EINVAL;
        q->max_bytes = ds.msg_qbytes;
        q->ctime = proxy_ipc_now_s(p);
        return 0;
    }
    case IPC_RMID:
        if (!owner)
            return -EPERM;
        queue_free(p->world, q);
        return 0;
    default:
        return -EINVAL;
    }
}

int proxy_msg_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap)
{
    const struct proxy_world *w = viewer->world;
    if (i >= w->nr_msg)
        return 0;
    const struct proxy_msg_queue *q = w->msg[i];
    struct ipc_perm perm = q->perm;
    proxy_ipc_perm_seen(viewer, &perm);
    return snprintf(line, cap,
                    "%10d %10d  %4o  %10zu %10zu %5d %5d %5u %5u %5u %5u "
                    "%10lld %10lld %10lld\n",
                    q->key, q->id, q->perm.mode & 0777, q->bytes, q->count,
                    q->lspid, q->lrpid, perm.uid, perm.gid,
                    perm.cuid, perm.cgid, (long long)q->stime,
                    (long long)q->rtime, (long long)q->ctime);
}

void proxy_msg_world_free(struct proxy_world *w)
{
    while (w->nr_msg > 0)
        queue_free(w, w->msg[w->nr_msg - 1]);
    free(w->msg);
    w->msg = NULL;
}

const struct proxy_syscall proxy_sysvmsg_syscalls[] = {
    {SYS_msgget, "msgget", sys_msgget},
    {SYS_msgsnd, "msgsnd", sys_msgsnd},
    {SYS_msgrcv, "msgrcv", sys_msgrcv},
    {SYS_msgctl, "msgctl", sys_msgctl},
    {-1, NULL, NULL},
};
