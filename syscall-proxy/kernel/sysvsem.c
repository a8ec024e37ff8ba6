/*
 * sysvsem.c - System V semaphores: semget, semop, semtimedop, semctl.
 *
 * The run's own IPC namespace, as for shared memory (kernel/sysvshm.c): sets
 * live in the world, ids from 0 in order. semop applies all its
 * operations or none (Linux's atomicity); one that would wait parks the
 * thread and tries again after 1 ms of logical time (deterministic: the
 * scheduler's clock, and when nothing else runs time jumps there), until
 * it can go, its semtimedop timeout passes (EAGAIN), the set is removed
 * (EIDRM) or a signal handler runs (EINTR: semop is never restarted).
 * SEM_UNDO adjustments are the process's, applied when it exits (not
 * inherited by fork, kept by execve), cleared by SETVAL/SETALL.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <time.h>

#include "det.h"

#define SEM_MAX_PER_SET 32000 /* SEMMSL */
#define SEM_MAX_OPS 500       /* SEMOPM */
#define SEM_MAX_VALUE 32767   /* SEMVMX */
#define SEM_MAX_SETS 32000    /* SEMMNI */
#define SEM_RETRY_NS 1000000ULL

struct proxy_sem_set {
    int id;
    int32_t key;
    int nsems;
    struct ipc_perm perm;
    int64_t otime, ctime;
    struct {
        uint16_t val;
        int pid;
    } sems[];
};

struct proxy_sem_undo {
    int id, num, adj;
};

/* Linux's sem_undo_list: the adjustments of the processes that share it
 * (a process, its threads, its CLONE_SYSVSEM children), counted. */
struct proxy_sem_undo_list {
    int refs;
    uint64_t id; /* world's last_sem_undo_id when made */
    struct proxy_sem_undo *v;
    int n;
};

/* get_undo_list: p's list, made if it has none (NULL: out of memory). */
static struct proxy_sem_undo_list *undo_list(struct proxy_process *p)
{
    if (p->sem_undo)
        return p->sem_undo;
    struct proxy_sem_undo_list *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->refs = 1;
    l->id = p->world ? ++p->world->last_sem_undo_id : 1;
    p->sem_undo = l;
    return l;
}

void proxy_sem_undo_share(struct proxy_process *p, struct proxy_process *c)
{
    struct proxy_sem_undo_list *l = undo_list(p);
    if (l && c) {
        l->refs++;
        c->sem_undo = l;
    }
}

uint64_t proxy_sem_undo_id(const struct proxy_process *p)
{
    return p->sem_undo ? p->sem_undo->id : 0;
}

/* Lets p's list go: the list when p held the last reference (then the
 * caller's to apply and free), else NULL. */
static struct proxy_sem_undo_list *undo_release(struct proxy_process *p)
{
    struct proxy_sem_undo_list *l = p->sem_undo;
    p->sem_undo = NULL;
    if (!l || --l->refs > 0)
        return NULL;
    return l;
}

void proxy_sem_undo_drop(struct proxy_process *p)
{
    struct proxy_sem_undo_list *l = undo_release(p);
    if (l) {
        free(l->v);
        free(l);
    }
}

static uint64_t now_ns(struct proxy_process *p)
{
    return (uint64_t)det_clock_peek_ns(p->det, CLOCK_MONOTONIC);
}

static struct proxy_sem_set *set_by_id(struct proxy_world *w, int id)
{
    for (int i = 0; i < w->nr_sem; i++)
        if (w->sem[i]->id == id)
            return w->sem[i];
    return NULL;
}

static long sys_semget(struct proxy_process *p, const uint64_t a[6])
{
    int32_t key = (int32_t)a[0];
    int nsems = (int)a[1], flags = (int)a[2];
    struct proxy_world *w = p->world;
    if (nsems < 0 || nsems > SEM_MAX_PER_SET)
        return -EINVAL;
    if (key != IPC_PRIVATE) {
        for (int i = 0; i < w->nr_sem; i++) {
            struct proxy_sem_set *s = w->sem[i];
            if (s->key != key)
                continue;
            if ((flags & (IPC_CREAT | IPC_EXCL)) == (IPC_CREAT | IPC_EXCL))
                return -EEXIST;
            if (nsems > s->nsems)
                return -EINVAL;
            return proxy_ipc_permitted(p, &s->perm, proxy_ipc_wanted(flags))
                       ? s->id
                       : -EACCES;
        }
        if (!(flags & IPC_CREAT))
            return -ENOENT;
    }
    if (nsems == 0)
        return -EINVAL;
    if (w->nr_sem >= SEM_MAX_SETS)
        return -ENOSPC;
    struct proxy_sem_set **g =
        realloc(w->sem, (size_t)(w->nr_sem + 1) * sizeof(*g));
    if (!g)
        return -ENOMEM;
    w->sem = g;
    struct proxy_sem_set *s =
        calloc(1, sizeof(*s) + (size_t)nsems * sizeof(s->sems[0]));
    if (!s)
        return -ENOMEM;
    s->id = w->next_semid++;
    s->key = key;
    s->nsems = nsems;
    proxy_ipc_perm_init(&s->perm, p, key, flags);
    s->ctime = proxy_ipc_now_s(p);
    w->sem[w->nr_sem++] = s;
    return s->id;
}

static void undo_add(struct proxy_process *p, int id, int num, int adj)
{
    struct proxy_sem_undo_list *l = undo_list(p);
    if (!l)
        return;
    for (int i = 0; i < l->n; i++)
        if (l->v[i].id == id && l->v[i].num == num) {
            l->v[i].adj += adj;
            return;
        }
    struct proxy_sem_undo *g = realloc(l->v, (size_t)(l->n + 1) * sizeof(*g));
    if (!g)
        return;
    l->v = g;
    g[l->n++] = (struct proxy_sem_undo){id, num, adj};
}

/* 0 when every operation could be applied (and they were), 1 when the
 * call must wait (*wait_num, *wait_zero say on what), or -errno. */
static int try_ops(struct proxy_process *p, struct proxy_sem_set *s,
                   const struct sembuf *ops, int n, int *wait_num,
                   bool *wait_zero)
{
    int vals[SEM_MAX_OPS];
    for (int i = 0; i < n; i++) {
        int v = s->sems[ops[i].sem_num].val;
        for (int k = 0; k < i; k++) /* earlier ops on the same semaphore */
            if (ops[k].sem_num == ops[i].sem_num)
                v = vals[k];
        int op = ops[i].sem_op;
        if (op == 0 ? v != 0 : v + op < 0) {
            if (ops[i].sem_flg & IPC_NOWAIT)
                return -EAGAIN;
            *wait_num = ops[i].sem_num;
            *wait_zero = op == 0;
            return 1;
        }
        if (v + op > SEM_MAX_VALUE)
            return -ERANGE;
        vals[i] = v + op;
    }
    for (int i = 0; i < n; i++) {
        s->sems[ops[i].sem_num].val = (uint16_t)vals[i];
        s->sems[ops[i].sem_num].pid = p->pid;
        if ((ops[i].sem_flg & SEM_UNDO) && ops[i].sem_op)
            undo_add(p, s->id, ops[i].sem_num, -ops[i].sem_op);
    }
    s->otime = proxy_ipc_now_s(p);
    return 0;
}

static long do_semtimedop(struct proxy_process *p, int id, gva_t sops, int n,
                       gva_t timeout)
{
    struct proxy_thread *t = &p->threads[p->cur];
    bool retry = t->sem_pending && t->sem_wait_id == id;
    t->sem_pending = false;
    if (n <= 0)
        return -EINVAL;
    if (n > SEM_MAX_OPS)
        return -E2BIG;
    struct sembuf ops[SEM_MAX_OPS];
    if (proxy_copy_in(p, ops, sops, (size_t)n * sizeof(ops[0])) < 0)
        return -EFAULT;
    /* find_alloc_undo: Linux makes the undo list before it looks for the
     * set, whatever the call's outcome (kcmp KCMP_SYSVSEM sees it) */
    for (int i = 0; id >= 0 && i < n; i++)
        if (ops[i].sem_flg & SEM_UNDO)
            (void)undo_list(p);
    struct proxy_sem_set *s = set_by_id(p->world, id);
    if (!s)
        return retry ? -EIDRM : -EINVAL;
    bool alters = false;
    for (int i = 0; i < n; i++) {
        if (ops[i].sem_num >= s->nsems)
            return -EFBIG;
        alters |= ops[i].sem_op != 0;
    }
    if (!proxy_ipc_permitted(p, &s->perm, alters ? 2 : 4))
        return -EACCES;
    uint64_t deadline = retry ? t->sem_deadline_ns : 0;
    if (!retry && timeout) {
        struct timespec ts;
        if (proxy_copy_in(p, &ts, timeout, sizeof(ts)) < 0)
            return -EFAULT;
        if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
            return -EINVAL;
        deadline = now_ns(p) + (uint64_t)ts.tv_sec * 1000000000ULL +
                   (uint64_t)ts.tv_nsec;
    }
    int wait_num;
    bool wait_zero;
    int rc = try_ops(p, s, ops, n, &wait_num, &wait_zero);
    if (rc <= 0)
        return rc;
    uint64_t now = now_ns(p);
    if (deadline && now >= deadline)
        return -EAGAIN;
    t->sem_pending = true;
    t->sem_wait_id = id;
    t->sem_wait_num = wait_num;
    t->sem_wait_zero = wait_zero;
    t->sem_deadline_ns = deadline;
    t->eintr_on_handler = true; /* semop is never restarted */
    uint64_t wait = SEM_RETRY_NS;
    if (deadline && deadline - now < wait)
        wait = deadline - now;
    return proxy_thread_retry_after(p, wait);
}

static long sys_semop(struct proxy_process *p, const uint64_t a[6])
{
    return do_semtimedop(p, (int)a[0], a[1], (int)a[2], 0);
}

static long sys_semtimedop(struct proxy_process *p, const uint64_t a[6])
{
    return do_semtimedop(p, (int)a[0], a[1], (int)a[2], a[3]);
}

/* Threads of the run waiting on semaphore num of set id for it to grow
 * (GETNCNT) or to be zero (GETZCNT). */
static int waiters(struct proxy_world *w, int id, int num, bool zero)
{
    int n = 0;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads; k++) {
            const struct proxy_thread *t = &q->threads[k];
            n += t->state == PROXY_THREAD_WAIT_RETRY && t->sem_pending &&
                 t->sem_wait_id == id && t->sem_wait_num == num &&
                 t->sem_wait_zero == zero;
        }
    }
    return n;
}

/* SETVAL/SETALL: the processes' adjustments for those semaphores go. */
static void undo_clear(struct proxy_world *w, int id, int num)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_sem_undo_list *l = w->procs[i]->sem_undo;
        for (int k = 0; l && k < l->n; k++)
            if (l->v[k].id == id && (num < 0 || l->v[k].num == num))
                l->v[k].adj = 0;
    }
}

static void set_free(struct proxy_world *w, struct proxy_sem_set *s)
{
    for (int i = 0; i < w->nr_sem; i++)
        if (w->sem[i] == s) {
            memmove(&w->sem[i], &w->sem[i + 1],
                    (size_t)(w->nr_sem - i - 1) * sizeof(*w->sem));
            w->nr_sem--;
            break;
        }
    undo_clear(w, s->id, -1);
    free(s);
}

static long sem_stat(struct proxy_process *p, struct proxy_sem_set *s,
                     gva_t buf)
{
    struct semid_ds ds;
    memset(&ds, 0, sizeof(ds));
    ds.sem_perm = s->perm;
    proxy_ipc_perm_seen(p, &ds.sem_perm);
    ds.sem_otime = s->otime;
    ds.sem_ctime = s->ctime;
    ds.sem_nsems = (unsigned long)s->nsems;
    return proxy_copy_out(p, buf, &ds, sizeof(ds)) < 0 ? -EFAULT : 0;
}

static long sem_info(struct proxy_process *p, int cmd, gva_t buf)
{
    struct proxy_world *w = p->world;
    struct seminfo si = {.semmap = SEM_MAX_SETS, .semmni = SEM_MAX_SETS,
                         .semmns = SEM_MAX_SETS * 32000,
                         .semmnu = SEM_MAX_SETS, .semmsl = SEM_MAX_PER_SET,
                         .semopm = SEM_MAX_OPS, .semume = SEM_MAX_OPS,
                         .semusz = 32, .semvmx = SEM_MAX_VALUE,
                         .semaem = SEM_MAX_VALUE};
    if (cmd == SEM_INFO) {
        si.semusz = w->nr_sem;
        si.semaem = 0;
        for (int i = 0; i < w->nr_sem; i++)
            si.semaem += w->sem[i]->nsems;
    }
    if (proxy_copy_out(p, buf, &si, sizeof(si)) < 0)
        return -EFAULT;
    return w->nr_sem ? w->nr_sem - 1 : 0;
}

static long sem_set_values(struct proxy_process *p, struct proxy_sem_set *s,
                           int num, int cmd, uint64_t arg)
{
    if (cmd == SETVAL) {
        int v = (int)arg;
        if (v < 0 || v > SEM_MAX_VALUE)
            return -ERANGE;
        s->sems[num].val = (uint16_t)v;
        s->sems[num].pid = p->pid;
        undo_clear(p->world, s->id, num);
    } else {
        uint16_t *vals = calloc((size_t)s->nsems, sizeof(*vals));
        if (!vals)
            return -ENOMEM;
        if (proxy_copy_in(p, vals, arg, (size_t)s->nsems * sizeof(*vals))) {
            free(vals);
            return -EFAULT;
        }
        for (int i = 0; i < s->nsems; i++)
            if (vals[i] > SEM_MAX_VALUE) {
                free(vals);
                return -ERANGE;
            }
        for (int i = 0; i < s->nsems; i++) {
            s->sems[i].val = vals[i];
            s->sems[i].pid = p->pid;
        }
        free(vals);
        undo_clear(p->world, s->id, -1);
    }
    s->ctime = proxy_ipc_now_s(p);
    return 0;
}

static long sys_semctl(struct proxy_process *p, const uint64_t a[6])
{
    int id = (int)a[0], num = (int)a[1], cmd = (int)a[2] & ~0x100;
    uint64_t arg = a[3];
    if (cmd == IPC_INFO || cmd == SEM_INFO)
        return sem_info(p, cmd, arg);
    struct proxy_sem_set *s;
    if (cmd == SEM_STAT || cmd == SEM_STAT_ANY) {
        if (id < 0 || id >= p->world->nr_sem)
            return -EINVAL;
        s = p->world->sem[id];
        if (cmd == SEM_STAT && !proxy_ipc_permitted(p, &s->perm, 4))
            return -EACCES;
        long rc = sem_stat(p, s, arg);
        return rc < 0 ? rc : s->id;
    }
    if (!(s = set_by_id(p->world, id)))
        return -EINVAL;
    bool owner = proxy_ipc_owner(p, &s->perm);
    bool readable = proxy_ipc_permitted(p, &s->perm, 4);
    bool one = cmd == GETVAL || cmd == SETVAL || cmd == GETPID ||
               cmd == GETNCNT || cmd == GETZCNT;
    if (one && (num < 0 || num >= s->nsems))
        return -EINVAL;
    switch (cmd) {
    case IPC_RMID:
        if (!owner)
            return -EPERM;
        set_free(p->world, s);
        return 0;
    case IPC_STAT:
        return readable ? sem_stat(p, s, arg) : -EACCES;
    case IPC_SET: {
        if (!owner)
            return -EPERM;
        struct semid_ds ds;
        if (proxy_copy_in(p, &ds, arg, sizeof(ds)) < 0)
            return -EFAULT;
        if (proxy_ipc_perm_set(p, &s->perm, &ds.sem_perm) < 0)
            return -EINVAL;
        s->ctime = proxy_ipc_now_s(p);
        return 0;
    }
    case GETVAL:
        return readable ? s->sems[num].val : -EACCES;
    case GETPID:
        return readable ? s->sems[num].pid : -EACCES;
    case GETNCNT:
    case GETZCNT:
        return readable ? waiters(p->world, id, num, cmd == GETZCNT)
                        : -EACCES;
    case GETALL: {
        if (!readable)
            return -EACCES;
        uint16_t *vals = calloc((size_t)s->nsems, sizeof(*vals));
        if (!vals)
            return -ENOMEM;
        for (int i = 0; i < s->nsems; i++)
            vals[i] = s->sems[i].val;
        long rc = proxy_copy_out(p, arg, vals,
                                 (size_t)s->nsems * sizeof(*vals))
                      ? -EFAULT
                      : 0;
        free(vals);
        return rc;
    }
    case SETVAL:
    case SETALL:
        return proxy_ipc_permitted(p, &s->perm, 2)
                   ? sem_set_values(p, s, num, cmd, arg)
                   : -EACCES;
    default:
        return -EINVAL;
    }
}

void proxy_sem_exit(struct proxy_process *p)
{
    proxy_ns_ipc_enter(p); /* may run outside a syscall (a fatal signal) */
    /* exit_sem: only the last process holding the list applies it */
    struct proxy_sem_undo_list *l = undo_release(p);
    for (int i = 0; l && p->world && i < l->n; i++) {
        const struct proxy_sem_undo *u = &l->v[i];
        struct proxy_sem_set *s = set_by_id(p->world, u->id);
        if (!s || !u->adj || u->num >= s->nsems)
            continue;
        int v = s->sems[u->num].val + u->adj; /* Linux clamps to [0, max] */
        s->sems[u->num].val =
            (uint16_t)(v < 0 ? 0 : v > SEM_MAX_VALUE ? SEM_MAX_VALUE : v);
        s->sems[u->num].pid = p->pid;
    }
    if (l) {
        free(l->v);
        free(l);
    }
}

int proxy_sem_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap)
{
    const struct proxy_world *w = viewer->world;
    if (i >= w->nr_sem)
        return 0;
    const struct proxy_sem_set *s = w->sem[i];
    struct ipc_perm perm = s->perm;
    proxy_ipc_perm_seen(viewer, &perm);
    return snprintf(line, cap,
                    "%10d %10d  %4o %10d %5u %5u %5u %5u %10lld %10lld\n",
                    s->key, s->id, s->perm.mode & 0777, s->nsems, perm.uid,
                    perm.gid, perm.cuid, perm.cgid,
                    (long long)s->otime, (long long)s->ctime);
}

void proxy_sem_world_free(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_sem; i++)
        free(w->sem[i]);
    free(w->sem);
    w->sem = NULL;
    w->nr_sem = 0;
}

const struct proxy_syscall proxy_sysvsem_syscalls[] = {
    {SYS_semget, "semget", sys_semget},
    {SYS_semop, "semop", sys_semop},
    {SYS_semtimedop, "semtimedop", sys_semtimedop},
    {SYS_semctl, "semctl", sys_semctl},
    {-1, NULL, NULL},
};
