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
    proxy_filesystems_syscalls, proxy_kcmp_syscalls, proxy_mseal_syscalls,
    proxy_ustat_syscalls, proxy_file_attr_syscalls, proxy_handle_syscalls,
    proxy_lsm_syscalls,
};

/* Calls that look at no path and no file and move no file's I/O: they
 * need neither the guest's file ids taken for them nor a look at the
 * O_ASYNC files and dnotify watches after them (nothing they do changes
 * what those report; a change from outside the run is host-timed and is
 * seen after the next call that may move I/O). A fuzzer's or a polling
 * loop's getpid otherwise cost 4 host calls for the ids and 2 for each
 * O_ASYNC file (trinity sets O_ASYNC on hundreds: the look was half of
 * hvrun's CPU in a perf profile of a trinity run). */
static const int file_inert_calls[] = {
    SYS_getpid,          SYS_getppid,      SYS_gettid,
    SYS_getuid,          SYS_geteuid,      SYS_getgid,
    SYS_getegid,         SYS_getresuid,    SYS_getresgid,
    SYS_getgroups,       SYS_getpgid,      SYS_getpgrp,
    SYS_getsid,          SYS_uname,        SYS_sched_yield,
    SYS_clock_gettime,   SYS_clock_getres, SYS_gettimeofday,
    SYS_time,            SYS_getrusage,    SYS_times,
    SYS_getcpu,          SYS_sched_getaffinity, SYS_rt_sigprocmask,
    SYS_sigaltstack,     SYS_brk,          SYS_mprotect,
    SYS_madvise,         SYS_set_robust_list, SYS_set_tid_address,
    SYS_arch_prctl,      SYS_rseq,
};

/* Calls that look at paths or files but move no file's I/O and make no
 * fsnotify event (a stat, a mapping): taken as the guest, no look after. */
static const int io_inert_calls[] = {
    SYS_stat,     SYS_lstat,      SYS_fstat,      SYS_newfstatat,
    SYS_statx,    SYS_access,     SYS_faccessat,  SYS_faccessat2,
    SYS_readlink, SYS_readlinkat, SYS_getcwd,     SYS_mmap,
    SYS_munmap,
};

static proxy_handler_fn handlers[PROXY_NR_SYSCALLS];
static bool file_inert[PROXY_NR_SYSCALLS], io_inert[PROXY_NR_SYSCALLS];
static bool handlers_ready;

static void build_table(void)
{
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
        for (const struct proxy_syscall *s = families[f]; s->nr >= 0; s++)
            if (s->nr < PROXY_NR_SYSCALLS)
                handlers[s->nr] = s->fn;
    for (size_t i = 0; i < sizeof(file_inert_calls) / sizeof(int); i++)
        file_inert[file_inert_calls[i]] = io_inert[file_inert_calls[i]] =
            true;
    for (size_t i = 0; i < sizeof(io_inert_calls) / sizeof(int); i++)
        io_inert[io_inert_calls[i]] = true;
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
    p->threads[p->cur].call = (struct proxy_thread_call){
        nr, {args[0], args[1], args[2], args[3], args[4], args[5]}, r->rsp,
        r->rcx};
    p->nr_syscalls++;
    if (p->totals)
        p->totals->syscalls++;
    det_event(p->det, (uint32_t)p->tid, (uint16_t)(nr < 0xffff ? nr : 0xffff));
    long ret;
    proxy_ns_ipc_enter(p); /* System V objects of its IPC namespace */
    /* Syscall user dispatch, then the guest's own seccomp filters, as
     * Linux's syscall_trace_enter orders them; rcx: where the call
     * returns. */
    if (!proxy_user_dispatch_blocks(p, nr, r->rcx, &ret) &&
        !proxy_seccomp_blocks(p, nr, args, r->rcx, &ret)) {
        bool inert = nr < PROXY_NR_SYSCALLS && file_inert[nr];
        if (!inert)
            proxy_fscred_enter(p); /* its file access checked as its own */
        ret = nr < PROXY_NR_SYSCALLS && handlers[nr] ? handlers[nr](p, args)
                                                     : unsupported(p, nr);
        if (!inert)
            proxy_fscred_leave();
    }
    if (nr >= PROXY_NR_SYSCALLS || !io_inert[nr])
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
