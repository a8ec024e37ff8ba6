/*
 * table.c - merges the per-family tables into one array indexed by syscall
 * number and dispatches. An empty slot is an unsupported syscall: -ENOSYS
 * and one log line naming it (or the end of the run under --fail-closed).
 */
#include "proxy.h"
#include "config.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "io.h"
#include "net.h"

#include <errno.h>
#include <sys/syscall.h>
#include <stdlib.h>

#include "det.h"

static const struct proxy_syscall *const families[] = {
    proxy_fs_syscalls, proxy_namei_syscalls, proxy_attr_syscalls,
    proxy_io_syscalls, proxy_poll_syscalls, proxy_fcntl_syscalls,
    proxy_mm_syscalls, proxy_process_syscalls, proxy_signal_syscalls,
    proxy_time_syscalls, proxy_sys_syscalls, proxy_cred_syscalls,
    proxy_sched_syscalls, proxy_prctl_syscalls, proxy_mlock_syscalls,
    proxy_seccomp_syscalls, proxy_sysvshm_syscalls, proxy_sysvsem_syscalls,
    proxy_sysvmsg_syscalls, proxy_ns_syscalls, proxy_thread_syscalls,
    proxy_procsys_syscalls, proxy_net_syscalls, proxy_msg_syscalls,
    proxy_timer_syscalls, proxy_signalfd_syscalls, proxy_epoll_syscalls,
    proxy_timerfd_syscalls, proxy_process_vm_syscalls, proxy_mqueue_syscalls,
    proxy_adjtime_syscalls, proxy_ldt_syscalls, proxy_acct_syscalls,
    proxy_quota_syscalls, proxy_keys_syscalls, proxy_ptrace_syscalls,
    proxy_rseq_syscalls, proxy_perf_syscalls, proxy_pidfd_syscalls,
    proxy_aio_syscalls, proxy_secretmem_syscalls, proxy_openat2_syscalls,
    proxy_mount_api_syscalls,
    proxy_filesystems_syscalls, proxy_kcmp_syscalls,
};

static proxy_handler_fn handlers[PROXY_NR_SYSCALLS];
static bool handlers_ready;

static void build_table(void)
{
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
        for (const struct proxy_syscall *s = families[f]; s->nr >= 0; s++)
            if (s->nr < PROXY_NR_SYSCALLS)
                handlers[s->nr] = s->fn;
    handlers_ready = true;
}

const char *proxy_syscall_name(uint64_t nr)
{
    if (nr < PROXY_NR_SYSCALLS && proxy_syscall_names[nr])
        return proxy_syscall_names[nr];
    return "unknown";
}

bool proxy_syscall_supported(uint64_t nr)
{
    if (!handlers_ready)
        build_table();
    return nr < PROXY_NR_SYSCALLS && handlers[nr];
}

static long unsupported(struct proxy_process *p, uint64_t nr)
{
    p->nr_unsupported++;
    if (p->totals)
        p->totals->unsupported++;
    if (p->cfg->fail_closed) {
        proxy_log(p, 0,
                  "unsupported syscall %s (nr %llu); stopping the run "
                  "(--fail-closed)",
                  proxy_syscall_name(nr), (unsigned long long)nr);
        p->exited = true;
        p->exit_status = -1;
        return PROXY_RET_NORETURN;
    }
    if (nr < PROXY_NR_SYSCALLS && !p->unsupported_seen[nr]) {
        p->unsupported_seen[nr] = true;
        proxy_log(p, 1, "unsupported syscall %s (nr %llu): returning ENOSYS",
                  proxy_syscall_name(nr), (unsigned long long)nr);
    }
    return -ENOSYS;
}

long proxy_dispatch(struct proxy_process *p)
{
    if (!handlers_ready)
        build_table();
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    uint64_t nr = r->rax;
    const uint64_t args[6] = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9};
    p->nr_syscalls++;
    if (p->totals)
        p->totals->syscalls++;
    det_event(p->det, (uint32_t)p->tid, (uint16_t)(nr < 0xffff ? nr : 0xffff));
    long ret;
    if (nr != SYS_mmap) /* no one sees a deferred fill's pages unfilled */
        proxy_mm_fill_deferred();
    proxy_ns_ipc_enter(p); /* System V objects of its IPC namespace */
    /* Syscall user dispatch, then the guest's own seccomp filters, as
     * Linux's syscall_trace_enter orders them; rcx: where the call
     * returns. */
    if (!proxy_user_dispatch_blocks(p, nr, r->rcx, &ret) &&
        !proxy_seccomp_blocks(p, nr, args, r->rcx, &ret)) {
        proxy_fscred_enter(p); /* its file access checked as its own */
        ret = nr < PROXY_NR_SYSCALLS && handlers[nr] ? handlers[nr](p, args)
                                                     : unsupported(p, nr);
        proxy_fscred_leave();
    }
    proxy_fasync_after_syscall(p); /* dnotify signals it caused */
    det_log_syscall(p->det, ret == PROXY_RET_REGS_SET ? 0 : ret);
    if (p->cfg->log_level >= 2 && ret != PROXY_RET_REGS_SET &&
        ret != PROXY_RET_NORETURN)
        proxy_log(p, 2, "[%d] %s(%#llx, %#llx, %#llx) = %ld", p->tid,
                  proxy_syscall_name(nr), (unsigned long long)args[0],
                  (unsigned long long)args[1], (unsigned long long)args[2],
                  ret);
    /* A transfer's kept progress lives only while its call is parked:
     * the call ended (whatever the way), so it is gone. */
    if (ret != PROXY_RET_BLOCK && ret != PROXY_RET_NORETURN && !p->exited)
        proxy_xfer_forget(p);
    return ret;
}
