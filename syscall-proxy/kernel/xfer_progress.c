/*
 * xfer_progress.c - a blocking transfer that parks part way.
 *
 * A blocking write to a pipe or socket, a stream send and a MSG_WAITALL
 * receive move what they can without waiting (the host call is made
 * non-blocking), then park the thread until the fd is ready and run again
 * from the start of the syscall (proxy_block_on_fd). What they moved
 * before parking is kept with the thread, so the call run again continues
 * after it instead of moving the same bytes twice.
 *
 * The record names the call by its syscall number and first three
 * arguments (fd; buffer, iovec array or msghdr; length or segment count),
 * read from the registers of the call being served: the same call run
 * again matches it, any other call does not (and forgets it).
 *
 * Linux returns the count moved so far, never an error, when such a wait
 * ends after part of the transfer: a signal (with or without SA_RESTART:
 * pipe_write, tcp_sendmsg and tcp_recvmsg give the copied bytes before
 * -ERESTARTSYS) or the socket's SO_SNDTIMEO/SO_RCVTIMEO. So does hvrun:
 * proxy_xfer_park returns the count when the timeout has passed, and
 * proxy_xfer_end_parked makes the count the result of a call a signal
 * ends: signal.c at delivery (a handler, an ignored signal, a default
 * stop) before it makes a parked call EINTR or restarts it, ptrace.c at a
 * tracee's signal-delivery-stop (whatever the tracer does with the
 * signal, the call has returned), and a stop at send time for every
 * thread of the stopped process (do_signal_stop wakes them all: the
 * waits see signal_pending and return what they moved; continued, the
 * count is what userspace sees, never a restart).
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"
#include <limits.h>

#define SYSCALL_INSN_BYTES 2

static struct proxy_xfer_progress *progress_of(struct proxy_process *p)
{
    return p->threads ? &p->threads[p->cur].xfer : NULL;
}

/* Whether the record names the call in regs (at its SYSCALL instruction
 * or being served: RAX holds the number either way). */
static bool names_call(const struct proxy_xfer_progress *x,
                       const struct vmm_regs *r)
{
    return x->active && x->nr == r->rax && x->args[0] == r->rdi &&
           x->args[1] == r->rsi && x->args[2] == r->rdx;
}

uint64_t proxy_xfer_done_before(struct proxy_process *p)
{
    struct proxy_xfer_progress *x = progress_of(p);
    return x && names_call(x, vmm_vm_regs(p->vm)) ? x->done_bytes : 0;
}

uint64_t proxy_xfer_resume(struct proxy_process *p)
{
    uint64_t done = proxy_xfer_done_before(p);
    proxy_xfer_forget(p);
    return done;
}

void proxy_xfer_forget(struct proxy_process *p)
{
    struct proxy_xfer_progress *x = progress_of(p);
    if (x)
        x->active = false;
}

bool proxy_xfer_can_keep(const struct proxy_process *p)
{
    return p->threads != NULL;
}

void proxy_xfer_keep(struct proxy_process *p, uint64_t done)
{
    struct proxy_xfer_progress *x = progress_of(p);
    if (!x || done == 0)
        return;
    const struct vmm_regs *r = vmm_vm_regs(p->vm);
    *x = (struct proxy_xfer_progress){
        .active = true,
        .nr = r->rax,
        .args = {r->rdi, r->rsi, r->rdx},
        .done_bytes = done,
    };
}

long proxy_xfer_park(struct proxy_process *p, uint64_t done, int host_fd,
                     short events, uint64_t timeout_ns)
{
    proxy_xfer_keep(p, done);
    long ret = proxy_block_on_fd_for(p, host_fd, events, timeout_ns);
    if (ret == PROXY_RET_BLOCK || done == 0)
        return ret;
    /* The socket timeout passed: Linux returns what moved. */
    proxy_xfer_forget(p);
    return (long)done;
}

long proxy_xfer_park_peek(struct proxy_process *p, uint64_t done, int host_fd,
                          uint64_t timeout_ns)
{
    proxy_xfer_keep(p, done);
    int above = done > INT_MAX ? INT_MAX : (int)done;
    long ret = proxy_block_on_fd_more(p, host_fd, above, timeout_ns);
    if (ret == PROXY_RET_BLOCK || done == 0)
        return ret;
    proxy_xfer_forget(p);
    return (long)done;
}

/* Thread t's registers: the current thread's are live on the vCPU. */
static struct vmm_regs *regs_of(struct proxy_process *p, struct proxy_thread *t)
{
    return t == &p->threads[p->cur] ? vmm_vm_regs(p->vm) : &t->regs;
}

bool proxy_xfer_end_parked(struct proxy_process *p, struct proxy_thread *t)
{
    if (!p->threads || !t->restartable)
        return false;
    struct proxy_xfer_progress *x = &t->xfer;
    struct vmm_regs *r = regs_of(p, t);
    if (!names_call(x, r) || x->done_bytes == 0)
        return false;
    /* Past the SYSCALL instruction, the count as its result. */
    r->rax = x->done_bytes;
    r->rip += SYSCALL_INSN_BYTES;
    x->active = false;
    t->restartable = t->eintr_on_handler = false;
    if (t->poll_deadline) /* a socket timeout's wait ends with it */
        t->has_deadline = false;
    t->poll_deadline = t->poll_timed_out = false;
    if (t->state == PROXY_THREAD_WAIT_FD)
        t->state = PROXY_THREAD_RUNNABLE;
    return true;
}

void proxy_xfer_end_on_stop(struct proxy_process *p)
{
    for (int i = 0; p->threads && i < p->nr_threads; i++)
        proxy_xfer_end_parked(p, &p->threads[i]);
}
