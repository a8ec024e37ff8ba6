/*
 * kcmp.c - kcmp(2): whether two guest processes (or threads) share a
 * kernel object, answered as Linux's kernel/kcmp.c answers: 0 for the
 * same object, 1 or 2 for an order of two different ones (never 3).
 *
 * What each type compares in hvrun's model:
 *  - KCMP_FILE: two guest fds' open file descriptions, by the id the fd
 *    table gives each one (fdtable.c): guest fds that share one (dup,
 *    fork's copies, pidfd_getfd) compare equal, two opens of a file do not.
 *  - KCMP_VM: the address space, by proxy_process mm_id: a process's own,
 *    its threads', and its CLONE_VM children's (vfork, posix_spawn).
 *  - KCMP_FS: the cwd and umask, by proxy_fs_state fs_id: a process's
 *    own, its threads', and its clone(CLONE_FS) children's.
 *  - KCMP_FILES, KCMP_SIGHAND: the fd table, the signal handlers. hvrun
 *    keeps them in the process, shared by its threads alone (a clone
 *    without CLONE_THREAD copies them whatever its CLONE_FILES or
 *    CLONE_SIGHAND say), so they are the process's, by its run pid.
 *  - KCMP_SYSVSEM: the SEM_UNDO list, which Linux makes at a task's first
 *    semop with SEM_UNDO or its first clone with CLONE_SYSVSEM (every
 *    pthread_create), shares with its threads and its CLONE_SYSVSEM
 *    children and not with a fork child (proxy_process sem_undo). Two
 *    processes without one compare equal, as Linux's two NULL pointers do.
 *  - KCMP_IO: the I/O context, which no guest has (ioprio_set keeps only
 *    the priority: kernel/sched.c), as a Linux task that never set a priority
 *    under a scheduler without contexts has none: every pair is equal.
 *  - KCMP_EPOLL_TFD: idx1's description against the one an epoll
 *    instance of pid2 watches under a guest fd number (the slot's efd, tfd,
 *    toff): the entries are the host instance's, keyed by the host fds the
 *    fd table gave those numbers (proxy_fd_epoll_target asks the host
 *    which of them it has); the toff-th in description order. (It was
 *    EOPNOTSUPP, Linux's answer without CONFIG_EPOLL, which failed
 *    stress-ng's kcmp stressor.)
 * A zombie's objects are gone but its signal handlers (exit_mm,
 * exit_files, exit_fs, exit_sem, exit_io_context): its VM, FILES, FS,
 * SYSVSEM and IO are NULL, its fds EBADF.
 *
 * Linux orders two objects by their kernel pointers, obfuscated with a
 * boot-time random key; hvrun by ids that follow the run's own events
 * (never host pointers or host fd numbers), so the order is a total one
 * for as long as the objects live and the same in every run.
 *
 * Checks in Linux's order: both ids (ESRCH when either names no guest
 * process or live thread in the caller's pid namespace: the virtual init
 * and shell are none), ptrace access to both (EPERM), then the type
 * (EINVAL) and its own errors.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"
#include "namespace.h"

#include <errno.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>

/* find_task_by_vpid: a process by its pid in p's pid namespace, or the one
 * a live thread of that tid belongs to (pidfd.c looks threads up so too). */
static struct proxy_process *find_task(struct proxy_process *p, int id)
{
    if (id <= 0)
        return NULL;
    struct proxy_process *q = proxy_ns_find(p, id);
    return q ? q : proxy_world_find_tid(p->world, proxy_ns_global_nr(p, id));
}

/* __ptrace_may_access in PTRACE_MODE_READ_REALCREDS: the caller's own
 * process; else a target whose real, effective and saved ids are all the
 * caller's real ones, or one over whose user namespace the caller has its
 * capabilities; and then a dumpable target, unless capable (a zombie has
 * no mm to be undumpable). Yama's ptrace_scope restricts attaching only. */
static bool may_read(const struct proxy_process *p,
                     const struct proxy_process *q)
{
    if (q == p)
        return true;
    bool capable = proxy_ns_capable_over(p, q);
    bool same_ids =
        q->cred.ruid == p->cred.ruid && q->cred.euid == p->cred.ruid &&
        q->cred.suid == p->cred.ruid && q->cred.rgid == p->cred.rgid &&
        q->cred.egid == p->cred.rgid && q->cred.sgid == p->cred.rgid;
    if (!same_ids && !capable)
        return false;
    return q->zombie || q->prctl.dumpable == 1 /* SUID_DUMP_USER */ ||
           capable;
}

/* The id of q's object of a type that is not KCMP_FILE; 0 where Linux's
 * pointer is NULL. */
static uint64_t object_id(const struct proxy_process *q, int type)
{
    if (q->zombie && type != KCMP_SIGHAND)
        return 0;
    switch (type) {
    case KCMP_VM:
        return q->mm_id + 1;
    case KCMP_FS:
        return q->fs.fs_id + 1;
    case KCMP_FILES:
    case KCMP_SIGHAND:
        return (uint64_t)q->pid;
    case KCMP_SYSVSEM:
        return proxy_sem_undo_id(q);
    default: /* KCMP_IO */
        return 0;
    }
}

/* kcmp_ptr's answer: 0 equal, 1 when the first is below, 2 above. */
static long order(uint64_t id1, uint64_t id2)
{
    return (id1 < id2) | ((id1 > id2) << 1);
}

/* get_file_raw_ptr takes the index as an unsigned int. */
static long compare_files(struct proxy_process *q1, unsigned int fd1,
                          struct proxy_process *q2, unsigned int fd2)
{
    uint64_t f1 = q1->zombie ? 0 : proxy_fd_file_id(&q1->fds, (int)fd1);
    uint64_t f2 = q2->zombie ? 0 : proxy_fd_file_id(&q2->fds, (int)fd2);
    return f1 && f2 ? order(f1, f2) : -EBADF;
}

/* kcmp_epoll_target, in its order: idx1's file (EBADF), the slot (EFAULT),
 * the epoll fd in q2 (EBADF), then the target (EINVAL: not an epoll
 * instance; ENOENT: no such entry). */
static long compare_epoll_target(struct proxy_process *p,
                                 struct proxy_process *q1, unsigned int fd1,
                                 struct proxy_process *q2, gva_t slot_gva)
{
    uint64_t f1 = q1->zombie ? 0 : proxy_fd_file_id(&q1->fds, (int)fd1);
    if (!f1)
        return -EBADF;
    struct kcmp_epoll_slot slot;
    if (proxy_copy_in(p, &slot, slot_gva, sizeof(slot)) < 0)
        return -EFAULT;
    int host_epfd = q2->zombie ? -EBADF : proxy_fd_host(&q2->fds, (int)slot.efd);
    if (host_epfd < 0)
        return -EBADF;
    uint64_t target;
    long rc = proxy_fd_epoll_target(host_epfd, (int)slot.tfd, slot.toff, &target);
    return rc < 0 ? rc : order(f1, target);
}

static long sys_kcmp(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_process *q1 = find_task(p, (int)a[0]);
    struct proxy_process *q2 = find_task(p, (int)a[1]);
    if (!q1 || !q2)
        return -ESRCH;
    if (!may_read(p, q1) || !may_read(p, q2))
        return -EPERM;
    int type = (int)a[2];
    switch (type) {
    case KCMP_FILE:
        return compare_files(q1, (unsigned int)a[3], q2, (unsigned int)a[4]);
    case KCMP_VM:
    case KCMP_FILES:
    case KCMP_FS:
    case KCMP_SIGHAND:
    case KCMP_IO:
    case KCMP_SYSVSEM:
        return order(object_id(q1, type), object_id(q2, type));
    case KCMP_EPOLL_TFD:
        return compare_epoll_target(p, q1, (unsigned int)a[3], q2, (gva_t)a[4]);
    default:
        return -EINVAL;
    }
}

const struct proxy_syscall proxy_kcmp_syscalls[] = {
    {SYS_kcmp, "kcmp", sys_kcmp},
    {-1, NULL, NULL},
};
