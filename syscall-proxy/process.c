/*
 * process.c - the guest process object, the checked copy wrappers and
 * hvrun's diagnostics for one guest.
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "det.h"

/* Linux's defaults for a fresh login process on a typical Debian host. */
static void default_rlimits(struct rlimit *r)
{
    for (int i = 0; i < RLIM_NLIMITS; i++)
        r[i] = (struct rlimit){RLIM_INFINITY, RLIM_INFINITY};
    r[RLIMIT_STACK] = (struct rlimit){8ULL << 20, RLIM_INFINITY};
    r[RLIMIT_CORE] = (struct rlimit){0, RLIM_INFINITY};
    r[RLIMIT_NOFILE] = (struct rlimit){1024, 1048576};
    r[RLIMIT_NPROC] = (struct rlimit){63704, 63704};
    r[RLIMIT_MEMLOCK] = (struct rlimit){8ULL << 20, 8ULL << 20};
    r[RLIMIT_SIGPENDING] = (struct rlimit){63704, 63704};
    r[RLIMIT_MSGQUEUE] = (struct rlimit){819200, 819200};
    r[RLIMIT_NICE] = (struct rlimit){0, 0};
    r[RLIMIT_RTPRIO] = (struct rlimit){0, 0};
}

static int install_stdio(struct proxy_process *p)
{
    for (int fd = 0; fd < 3; fd++) {
        int host = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (host < 0)
            continue; /* a closed stdio fd stays closed in the guest */
        int rc = proxy_fd_install_at(&p->fds, fd, host, false);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int proxy_process_create(struct proxy_process **out, struct vmm_vm *vm,
                         struct det_state *det, const struct proxy_config *c)
{
    struct proxy_process *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->vm = vm;
    p->as = vmm_vm_aspace(vm);
    p->det = det;
    p->cfg = c;
    default_rlimits(p->rlimits);
    int rc = proxy_fdtable_init(&p->fds, (int)p->rlimits[RLIMIT_NOFILE].rlim_cur);
    if (rc < 0) {
        free(p);
        return rc;
    }
    p->fs.cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (p->fs.cwd_fd < 0) {
        rc = -errno;
        proxy_fdtable_destroy(&p->fds);
        free(p);
        return rc;
    }
    struct stat proc_st;
    if (stat("/proc", &proc_st) == 0) /* procfs makes inodes per lookup */
        det_meta_ephemeral_dev(det, proc_st.st_dev);
    p->fs.umask = 022;
    p->cred.ruid = p->cred.euid = p->cred.suid = p->cred.fsuid = det->cfg.uid;
    p->cred.rgid = p->cred.egid = p->cred.sgid = p->cred.fsgid = det->cfg.gid;
    /* As a shell's child: in the group and session of a virtual shell,
     * so the first process is no group leader and setsid succeeds, as
     * for `sh -c prog`; with --as-init, pid 1 with no parent. */
    p->pid = p->tid = c->as_init ? PROXY_INIT_PID : PROXY_FIRST_PID;
    p->ppid = c->as_init ? 0 : PROXY_SHELL_PID;
    p->pgid = p->sid = PROXY_OUTSIDE_PGID;
    p->sig.altstack.ss_flags = SS_DISABLE;
    p->prctl.dumpable = 1;
    p->prctl.timerslack_ns = 50000; /* Linux's default timer slack */
    p->cred.nr_groups = -1;
    rc = install_stdio(p);
    if (rc < 0) {
        proxy_process_destroy(p);
        return rc;
    }
    *out = p;
    return 0;
}

void proxy_process_destroy(struct proxy_process *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nr_threads; i++) {
        free(p->threads[i].xstate);
        free(p->threads[i].own_info);
        free(p->threads[i].futex_waitv_keys);
        proxy_thread_io_release(&p->threads[i]);
        proxy_seccomp_unref(p->threads[i].seccomp);
    }
    free(p->threads);
    free(p->sig.rt_queue);
    free(p->cred.groups);
    free(p->shm_attach); /* the world counts are gone with it, or done */
    proxy_sem_undo_drop(p);
    proxy_fdtable_destroy(&p->fds);
    proxy_aio_release(p);
    proxy_cpuid_release(p);
    if (p->fs.cwd_fd >= 0)
        close(p->fs.cwd_fd);
    proxy_tmp_cleanup(p); /* an owned private /tmp (hermetic.c) */
    free(p);
}

/* A copy that stopped at a page without a PTE runs again when Linux's
 * copy would have faulted the page in: a file grown over a page past its
 * end, or lazy memory (vmm_as_fault_in). */
int proxy_copy_in(struct proxy_process *p, void *dst, gva_t src, size_t len)
{
    int rc = vmm_as_copy_in(p->as, dst, src, len);
    if (rc == -EFAULT && vmm_as_fault_in(p->as, src, len, PROT_READ))
        rc = vmm_as_copy_in(p->as, dst, src, len);
    return rc;
}

int proxy_copy_in_tail_zero(struct proxy_process *p, gva_t src, size_t known,
                            size_t size)
{
    for (size_t at = known; at < size; at++) {
        uint8_t b;
        if (proxy_copy_in(p, &b, src + at, 1) < 0)
            return -EFAULT;
        if (b)
            return -E2BIG;
    }
    return 0;
}

int proxy_copy_out(struct proxy_process *p, gva_t dst, const void *src,
                   size_t len)
{
    int rc = vmm_as_copy_out(p->as, dst, src, len);
    if (rc == -EFAULT && vmm_as_fault_in(p->as, dst, len, PROT_WRITE))
        rc = vmm_as_copy_out(p->as, dst, src, len);
    return rc;
}

long proxy_path_in(struct proxy_process *p, char *dst, gva_t src)
{
    if (src == 0)
        return -EFAULT;
    return vmm_as_strncpy_in(p->as, dst, src, PROXY_PATH_MAX);
}

int proxy_host_dirfd(struct proxy_process *p, int guest_dirfd)
{
    if (guest_dirfd == AT_FDCWD)
        return p->fs.cwd_fd;
    return proxy_fd_host(&p->fds, guest_dirfd);
}

void proxy_log(const struct proxy_process *p, int level, const char *fmt, ...)
{
    if (!p->cfg || level > p->cfg->log_level)
        return;
    FILE *f = p->cfg->log ? p->cfg->log : stderr;
    va_list ap;
    va_start(ap, fmt);
    fputs("hvrun: ", f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
    fflush(f);
}

/* ---- exit_group (fork, exec, wait and the rest: procsys.c) --------------- */

static long sys_exit_group(struct proxy_process *p, const uint64_t a[6])
{
    p->exited = true;
    p->exit_status = (int)((a[0] & 0xff) << 8);
    return PROXY_RET_NORETURN;
}

const struct proxy_syscall proxy_process_syscalls[] = {
    {SYS_exit_group, "exit_group", sys_exit_group},
    {-1, NULL, NULL},
};
