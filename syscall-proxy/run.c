/*
 * run.c - the loop that runs one guest process: run the vCPU, serve the
 * event (syscall or exception), deliver signals, repeat until it ends.
 */
#include "proxy.h"

#include <errno.h>
#include <string.h>

static bool serve_syscall(struct proxy_process *p)
{
    long ret = proxy_dispatch(p);
    if (ret == PROXY_RET_NORETURN)
        return false;
    if (ret != PROXY_RET_REGS_SET)
        vmm_vm_syscall_return(p->vm, ret);
    if (!proxy_thread_schedule(p))
        return false;
    proxy_signal_deliver_pending(p);
    return !p->exited;
}

int proxy_run(struct proxy_process *p)
{
    struct vmm_event ev;
    if (!p->threads && proxy_thread_init(p) < 0) {
        proxy_log(p, 0, "cannot set up the initial thread");
        return -1;
    }
    while (!p->exited) {
        int rc = vmm_vm_run(p->vm, &ev);
        if (rc < 0 && ev.kind != VMM_EVENT_FAILED) {
            proxy_log(p, 0, "KVM_RUN: %s", strerror(-rc));
            return -1;
        }
        switch (ev.kind) {
        case VMM_EVENT_SYSCALL:
            serve_syscall(p);
            break;
        case VMM_EVENT_EXCEPTION:
            proxy_signal_fault(p, &ev);
            break;
        case VMM_EVENT_INTERRUPTED:
            break;
        case VMM_EVENT_FAILED:
            proxy_log(p, 0, "guest VM failed: %s", ev.what);
            return -1;
        }
    }
    return p->exit_status;
}
