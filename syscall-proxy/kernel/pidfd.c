/*
 * pidfd.c - process file descriptors: pidfd_open, pidfd_send_signal,
 * pidfd_getfd, and waitid(P_PIDFD) through proxy_pidfd_target.
 *
 * A pidfd names one guest process (a thread-group leader) for as long as
 * it is open, by its run pid, which the run never reuses
 * (proxy_world_next_id), so a pidfd never reaches a later process. The
 * pid is kept in the fd slot (proxy_fd.pidfd_pid), copied to dups and
 * fork children like every open file's context; it is fixed when the fd
 * is made, so nothing is shared to keep in step.
 *
 * The guest fd's host fd is an eventfd, so close, dup, fcntl and
 * poll/select/epoll work on the host fd as on any other. It is made
 * readable when the process exits (becomes a zombie; Linux's pidfd_poll
 * says POLLIN then, and after the reap). Reads and writes are EINVAL, as
 * on a pidfd (it has no read or write file operation).
 *
 * clone's CLONE_PIDFD makes one too (procsys.c). The PIDFD_GET_INFO
 * ioctl (Linux 6.13, its exit status 6.15) is answered, though the model
 * reports 6.1: programs probe it by the ioctl, not by the version, and
 * its answer is all run state (ids, credentials, the wait status).
 *
 * Not modelled: PIDFD_THREAD (Linux 6.9: a pidfd of a single thread) and
 * the PIDFD_SIGNAL_* scopes of pidfd_send_signal are EINVAL, as on a
 * kernel before 6.9. As in Linux, pidfd_send_signal also takes a
 * /proc/<pid> directory fd (proxy_fd.procdir_pid, vfs.c) for its process;
 * pidfd_getfd, waitid and poll do not (EBADF, as there).
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"
#include "namespace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif

/* The pidfd slot behind guest fd, or NULL (not open, or not a pidfd). */
static struct proxy_fd *pidfd_slot(struct proxy_process *p, int guest_fd)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    return f && f->pidfd_pid > 0 ? f : NULL;
}

bool proxy_pidfd_is(struct proxy_process *p, int guest_fd)
{
    return pidfd_slot(p, guest_fd) != NULL;
}

/* The live (or zombie) process a pidfd names: -EBADF for an fd that is no
 * pidfd, -ESRCH once the process was reaped. */
long proxy_pidfd_process(struct proxy_process *p, int guest_fd,
                         struct proxy_process **out)
{
    struct proxy_fd *f = pidfd_slot(p, guest_fd);
    if (!f)
        return -EBADF;
    *out = proxy_world_find(p->world, f->pidfd_pid);
    return *out ? 0 : -ESRCH;
}

/* Makes the eventfd readable (it only ever goes from empty to readable)
 * and keeps the process's wait status for PIDFD_GET_INFO. */
static void mark_exited(struct proxy_fd *f, const struct proxy_process *dead)
{
    uint64_t one = 1;
    (void)!write(f->host_fd, &one, sizeof(one));
    f->pidfd_exit_known = true;
    f->pidfd_exit_status = dead->exit_status;
}

void proxy_pidfd_exited(struct proxy_process *dead)
{
    struct proxy_world *w = dead->world;
    /* Each exit of 1000 processes looked through 1000 fd tables. */
    if (!w->pidfds_made)
        return;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int fd = 0; fd < t->cap; fd++)
            if (t->fds[fd].kind != PROXY_FD_FREE &&
                t->fds[fd].pidfd_pid == dead->pid)
                mark_exited(&t->fds[fd], dead);
    }
}

long proxy_pidfd_target(struct proxy_process *p, int guest_fd, int *vpid,
                        bool *nonblock)
{
    struct proxy_fd *f = pidfd_slot(p, guest_fd);
    if (!f)
        return -EBADF;
    int fl = fcntl(f->host_fd, F_GETFL);
    *nonblock = fl >= 0 && (fl & O_NONBLOCK);
    struct proxy_process *q = proxy_world_find(p->world, f->pidfd_pid);
    /* reaped, or outside the caller's pid namespace: no child to wait for */
    *vpid = q ? proxy_ns_pid_of(p, q) : 0;
    return *vpid > 0 ? 0 : -ECHILD;
}

static long sys_pidfd_open(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0];
    unsigned int flags = (unsigned int)a[1];
    if (flags & ~(unsigned int)PIDFD_NONBLOCK)
        return -EINVAL;
    if (pid <= 0)
        return -EINVAL;
    struct proxy_process *q = proxy_ns_find(p, pid);
    if (!q) /* a thread's tid names no thread group: ENOENT (pidfd_prepare) */
        return proxy_world_find_tid(p->world, proxy_ns_global_nr(p, pid))
                   ? -ENOENT
                   : -ESRCH;
    return proxy_pidfd_install(p, q, flags & PIDFD_NONBLOCK);
}

int proxy_pidfd_install(struct proxy_process *p, struct proxy_process *q,
                        bool nonblock)
{
    int host_fd = eventfd(0, EFD_CLOEXEC | (nonblock ? EFD_NONBLOCK : 0));
    if (host_fd < 0)
        return -errno;
    int fd = proxy_fd_install(&p->fds, host_fd, true, 0); /* always cloexec */
    if (fd < 0)
        return fd;
    struct proxy_fd *f = proxy_fd_get(&p->fds, fd);
    p->world->pidfds_made = true;
    f->pidfd_pid = q->pid;
    f->pidfd_pidns = q->cred.pidns;
    if (q->zombie)
        mark_exited(f, q);
    return fd;
}

/* ---- PIDFD_GET_INFO ------------------------------------------------------ */

/* include/uapi/linux/pidfd.h (Linux 6.15: PIDFD_INFO_SIZE_VER0, the
 * struct before 6.16's coredump fields) */
#define PIDFS_IOCTL_MAGIC 0xFF
#define PIDFD_GET_INFO_NR 11
#define PIDFD_INFO_PID (1ULL << 0)
#define PIDFD_INFO_CREDS (1ULL << 1)
#define PIDFD_INFO_CGROUPID (1ULL << 2)
#define PIDFD_INFO_EXIT (1ULL << 3)
struct pidfd_info_v0 {
    uint64_t mask, cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid,
        fsgid;
    int32_t exit_code;
};
_Static_assert(sizeof(struct pidfd_info_v0) == 64, "PIDFD_INFO_SIZE_VER0");

/* The run's one cgroup is the root of a cgroup2 hierarchy (/proc/PID/
 * cgroup says 0::/), whose id is 1. */
#define ROOT_CGROUP_ID 1

/* pidfs's pidfd_info, as Linux 6.15 to 6.18.13 answer it: the exit
 * status only once the process was reaped (ESRCH before that if it was
 * all that was asked for and the process is gone); credentials and ids
 * always while it lives (a zombie too); a process outside the caller's
 * pid namespace is ESRCH. The struct is 64 bytes; a larger buffer gets
 * zeros past it (copy_struct_to_user), a smaller one is EINVAL. */
static long pidfd_get_info(struct proxy_process *p, const struct proxy_fd *f,
                           unsigned int req, gva_t arg)
{
    size_t usize = _IOC_SIZE(req);
    if (!arg || usize < sizeof(struct pidfd_info_v0))
        return -EINVAL;
    uint64_t mask;
    if (proxy_copy_in(p, &mask, arg, sizeof(mask)) < 0)
        return -EFAULT;
    if (!proxy_ns_pidns_visible(p, f->pidfd_pidns))
        return -ESRCH;
    struct pidfd_info_v0 k;
    memset(&k, 0, sizeof(k));
    struct proxy_process *q = proxy_world_find(p->world, f->pidfd_pid);
    if (!q && (mask & PIDFD_INFO_EXIT) && f->pidfd_exit_known) {
        k.mask = PIDFD_INFO_EXIT | PIDFD_INFO_CGROUPID;
        k.cgroupid = ROOT_CGROUP_ID;
        k.exit_code = f->pidfd_exit_status;
    }
    if (!q && !(mask & PIDFD_INFO_EXIT))
        return -ESRCH;
    if (q) {
        k.ruid = proxy_ns_uid_seen(p, q->cred.ruid);
        k.rgid = proxy_ns_gid_seen(p, q->cred.rgid);
        k.euid = proxy_ns_uid_seen(p, q->cred.euid);
        k.egid = proxy_ns_gid_seen(p, q->cred.egid);
        k.suid = proxy_ns_uid_seen(p, q->cred.suid);
        k.sgid = proxy_ns_gid_seen(p, q->cred.sgid);
        k.fsuid = proxy_ns_uid_seen(p, q->cred.fsuid);
        k.fsgid = proxy_ns_gid_seen(p, q->cred.fsgid);
        k.cgroupid = ROOT_CGROUP_ID;
        k.ppid = (uint32_t)proxy_ns_pid_nr(p, q->ppid);
        k.tgid = k.pid = (uint32_t)proxy_ns_pid_of(p, q);
        k.mask |= PIDFD_INFO_CREDS | PIDFD_INFO_CGROUPID | PIDFD_INFO_PID;
        if (k.pid == 0)
            return -ESRCH;
    }
    uint8_t out[256];
    size_t n = usize < sizeof(out) ? usize : sizeof(out);
    memset(out, 0, n);
    memcpy(out, &k, sizeof(k));
    if (usize > sizeof(out)) /* past anything a kernel knows: zeros */
        for (size_t off = sizeof(out); off < usize; off += sizeof(out)) {
            size_t m = usize - off < sizeof(out) ? usize - off : sizeof(out);
            uint8_t zero[sizeof(out)] = {0};
            if (proxy_copy_out(p, arg + off, zero, m) < 0)
                return -EFAULT;
        }
    return proxy_copy_out(p, arg, out, n) < 0 ? -EFAULT : 0;
}

long proxy_pidfd_ioctl(struct proxy_process *p, int guest_fd,
                       unsigned int req, gva_t arg)
{
    struct proxy_fd *f = pidfd_slot(p, guest_fd);
    if (!f)
        return 1;
    if (_IOC_TYPE(req) == PIDFS_IOCTL_MAGIC &&
        _IOC_NR(req) == PIDFD_GET_INFO_NR)
        return pidfd_get_info(p, f, req, arg);
    return -ENOTTY;
}

/* The caller's siginfo for a pidfd_send_signal to run pid target, checked
 * as rt_sigqueueinfo checks it. */
static long copy_signal_info(struct proxy_process *p, int target, int sig,
                             gva_t uinfo, siginfo_t *info)
{
    if (proxy_copy_in(p, info, uinfo, sizeof(*info)) < 0)
        return -EFAULT;
    if (info->si_signo != sig)
        return -EINVAL;
    /* only a process signalling itself may forge a kernel or tkill origin */
    if ((info->si_code >= 0 || info->si_code == SI_TKILL) && target != p->pid)
        return -EPERM;
    return 0;
}

/* The run pid a pidfd_send_signal fd names: a pidfd's, or a /proc/<pid>
 * directory's (Linux's pidfd_to_pid); 0 for any other fd. */
static int signal_target_pid(struct proxy_process *p, int guest_fd)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f)
        return 0;
    return f->pidfd_pid > 0 ? f->pidfd_pid : f->procdir_pid;
}

/* Linux's order: flags, the fd, the siginfo, the process, the signal. */
static long sys_pidfd_send_signal(struct proxy_process *p,
                                  const uint64_t a[6])
{
    int sig = (int)a[1];
    if (a[3] != 0) /* the PIDFD_SIGNAL_* scopes: Linux 6.9 */
        return -EINVAL;
    int target = signal_target_pid(p, (int)a[0]);
    if (target <= 0)
        return -EBADF;
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    if (a[2]) {
        long r = copy_signal_info(p, target, sig, a[2], &info);
        if (r < 0)
            return r;
    }
    struct proxy_process *q = proxy_world_find(p->world, target);
    if (!q && target == PROXY_INIT_PID && sig >= 0 && sig <= 64)
        /* the virtual init, root's: kill's permission check, then it
         * ignores what it has no handler for */
        return proxy_ns_capable(p) || p->cred.ruid == 0 || p->cred.euid == 0
                   ? 0
                   : -EPERM;
    if (!q)
        return -ESRCH;
    if (sig < 0 || sig > 64)
        return -EINVAL;
    if (!a[2]) { /* kill()'s origin */
        info.si_signo = sig;
        info.si_code = SI_USER;
        info.si_pid = proxy_ns_pid_of(q, p);
        info.si_uid = proxy_ns_uid_seen(q, p->cred.ruid);
    }
    /* a zombie is there until reaped: success, the signal is dropped */
    if (sig != 0 && !q->zombie)
        return proxy_signal_raise_thread(q, 0, sig, &info);
    return 0;
}

static long sys_pidfd_getfd(struct proxy_process *p, const uint64_t a[6])
{
    if (a[2] != 0)
        return -EINVAL;
    struct proxy_process *q;
    long r = proxy_pidfd_process(p, (int)a[0], &q);
    if (r < 0)
        return r;
    if (q->zombie) /* exiting or dead: Linux's __pidfd_fget says ESRCH */
        return -ESRCH;
    /* __pidfd_fget: ptrace access to the target (ATTACH_REALCREDS), before
     * its fd is looked up */
    if (!proxy_ptrace_may_access(p, q))
        return -EPERM;
    struct proxy_fd *from = proxy_fd_get(&q->fds, (int)a[1]);
    if (!from)
        return -EBADF;
    /* the new fd is the same open file, close-on-exec (pidfd_getfd(2)) */
    int fd = proxy_fd_install(&p->fds, proxy_host_fd_ref(from->host_fd), true,
                              0);
    if (fd >= 0)
        proxy_fd_share_context(proxy_fd_get(&p->fds, fd),
                               proxy_fd_get(&q->fds, (int)a[1]));
    return fd;
}

const struct proxy_syscall proxy_pidfd_syscalls[] = {
    {SYS_pidfd_open, "pidfd_open", sys_pidfd_open},
    {SYS_pidfd_send_signal, "pidfd_send_signal", sys_pidfd_send_signal},
    {SYS_pidfd_getfd, "pidfd_getfd", sys_pidfd_getfd},
    {-1, NULL, NULL},
};
