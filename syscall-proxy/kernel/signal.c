/*
 * signal.c - dispositions, masks, pending signals, and delivery through a
 * real x86-64 rt_sigframe, built exactly as Linux's get_sigframe() and
 * x64_setup_rt_frame() build it:
 *
 *   sp = user rsp - 128 (red zone), or the top of the alternate stack
 *   xsave area (832 bytes + FP_XSTATE_MAGIC2) rounded down to 64 bytes
 *   struct rt_sigframe { pretcode; ucontext; siginfo } aligned so that
 *   (sp + 8) is 16-byte aligned at the handler's first instruction
 *
 * rt_sigreturn reads the ucontext back, including the xsave image.
 *
 * Pending signals are per process (one slot per signal: standard and
 * real-time signals alike coalesce) and any thread whose mask allows one
 * takes it, after its syscall. Waiting for a signal (pause, rt_sigsuspend,
 * rt_sigtimedwait, a signalfd read) parks the thread in
 * PROXY_THREAD_WAIT_SIGNAL with its sigwait_kind: pause and sigsuspend
 * return a pre-set -EINTR once a handler frame is built on top of them;
 * sigtimedwait and signalfd reads re-run from the start when a signal of
 * their set arrives. A signal the process ignores wakes nobody and is
 * dropped when a thread would take it, as Linux never queues it.
 */
#include "proxy.h"
#include "config.h"
#include "hooks.h"
#include "kernel.h"
#include "internal.h"
#include "ptrace.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "cpu_x86_64.h"
#include "det.h"

#define SIGBIT(s) (1ULL << ((s) - 1))
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))
#define KERNEL_SA_RESTORER 0x04000000ULL
#define UC_FP_XSTATE 0x1ULL
#define UC_SIGCONTEXT_SS 0x2ULL
#define UC_STRICT_RESTORE_SS 0x4ULL
#define FP_XSTATE_MAGIC1 0x46505853U
#define FP_XSTATE_MAGIC2 0x46505845U
#define REDZONE_BYTES 128
#define SS_AUTODISARM_FLAG ((int)(1U << 31))
#define KERNEL_MINSIGSTKSZ 2048ULL

/* The kernel's stack_t and sigcontext as the guest sees them. */
struct kstack {
    uint64_t ss_sp;
    int32_t ss_flags;
    int32_t pad;
    uint64_t ss_size;
};

struct ksigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2;
    uint64_t fpstate;
    uint64_t reserved1[8];
};

struct kucontext {
    uint64_t uc_flags;
    uint64_t uc_link;
    struct kstack uc_stack;
    struct ksigcontext uc_mcontext;
    uint64_t uc_sigmask;
};

struct krt_sigframe {
    uint64_t pretcode;
    struct kucontext uc;
    siginfo_t info;
};

_Static_assert(sizeof(struct ksigcontext) == 256, "sigcontext ABI");
_Static_assert(offsetof(struct krt_sigframe, info) == 312, "rt_sigframe ABI");
_Static_assert(sizeof(struct krt_sigframe) == 440, "rt_sigframe ABI");

static bool sig_valid(uint64_t s) { return s >= 1 && s <= 64; }

/* ---- default actions ----------------------------------------------------- */

enum default_action { ACT_TERM, ACT_CORE, ACT_IGNORE, ACT_STOP };

static enum default_action default_action_of(int sig)
{
    switch (sig) {
    case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS:
    case SIGFPE: case SIGSEGV: case SIGXCPU: case SIGXFSZ: case SIGSYS:
        return ACT_CORE;
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
        return ACT_IGNORE;
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return ACT_STOP;
    default:
        return ACT_TERM;
    }
}

/* Whether sig would do nothing now: ignored, or a stop (job control is not
 * modelled; a stopped-and-continued pause goes on waiting, as on Linux). */
static bool sig_inert(const struct proxy_process *p, int sig)
{
    const struct proxy_sigaction *sa = &p->sig.sigactions[sig];
    if (sa->handler == (uint64_t)(uintptr_t)SIG_IGN)
        return true;
    enum default_action act = default_action_of(sig);
    return sa->handler == (uint64_t)(uintptr_t)SIG_DFL &&
           (act == ACT_IGNORE || act == ACT_STOP);
}

void proxy_process_kill(struct proxy_process *p, int signo)
{
    /* Wait status: the signal number, plus the core flag (0x80) when the
     * default action dumps core and a core file was written (coredump.c:
     * RLIMIT_CORE, which starts at 0, allowing). */
    bool dumped = default_action_of(signo) == ACT_CORE &&
                  proxy_hooks.core_dump(p, signo);
    p->exited = true;
    p->exit_status = signo | (dumped ? 0x80 : 0);
}

/* ---- delivery ------------------------------------------------------------ */

static bool on_altstack(const struct proxy_process *p, uint64_t sp)
{
    return !(p->sig.altstack.ss_flags & SS_DISABLE) &&
           sp > (uint64_t)(uintptr_t)p->sig.altstack.ss_sp &&
           sp <= (uint64_t)(uintptr_t)p->sig.altstack.ss_sp +
                     p->sig.altstack.ss_size;
}

static void fill_sigcontext(struct ksigcontext *sc, const struct vmm_regs *r)
{
    sc->r8 = r->r8; sc->r9 = r->r9; sc->r10 = r->r10; sc->r11 = r->r11;
    sc->r12 = r->r12; sc->r13 = r->r13; sc->r14 = r->r14; sc->r15 = r->r15;
    sc->rdi = r->rdi; sc->rsi = r->rsi; sc->rbp = r->rbp; sc->rbx = r->rbx;
    sc->rdx = r->rdx; sc->rax = r->rax; sc->rcx = r->rcx; sc->rsp = r->rsp;
    sc->rip = r->rip; sc->eflags = r->rflags;
    sc->cs = 0x33;
    sc->ss = 0x2b;
}

/* Writes the xsave image plus the software-reserved bytes Linux adds. */
static int write_fpstate(struct proxy_process *p, gva_t buf_fx)
{
    uint8_t xs[VMM_XSAVE_MAX_BYTES];
    uint32_t bytes = vmm_vm_xsave_bytes(p->vm);
    uint64_t xcr0 = vmm_vm_xcr0(p->vm);
    int rc = vmm_vm_get_xstate(p->vm, xs, sizeof(xs));
    if (rc < 0)
        return rc;
    /* struct _fpx_sw_bytes in the FXSAVE area's software-reserved bytes. */
    uint32_t sw[12] = {FP_XSTATE_MAGIC1, bytes + 4, (uint32_t)xcr0,
                       (uint32_t)(xcr0 >> 32), bytes};
    memcpy(xs + 464, sw, sizeof(sw));
    uint32_t magic2 = FP_XSTATE_MAGIC2;
    rc = proxy_copy_out(p, buf_fx, xs, bytes);
    if (rc == 0)
        rc = proxy_copy_out(p, buf_fx + bytes, &magic2, 4);
    return rc;
}

/* Builds the frame and points the thread at the handler; 0 or -EFAULT. */
static int setup_frame(struct proxy_process *p, int sig,
                       const siginfo_t *info, uint64_t trapno, uint64_t err,
                       uint64_t cr2)
{
    const struct proxy_sigaction *sa = &p->sig.sigactions[sig];
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    uint64_t sp = r->rsp - REDZONE_BYTES;
    bool onstack = on_altstack(p, r->rsp);
    bool entering = (sa->flags & SA_ONSTACK) && !onstack &&
                    !(p->sig.altstack.ss_flags & SS_DISABLE);
    if (entering)
        sp = (uint64_t)(uintptr_t)p->sig.altstack.ss_sp +
             p->sig.altstack.ss_size;
    gva_t buf_fx = (sp - (vmm_vm_xsave_bytes(p->vm) + 4)) & ~63ULL;
    gva_t frame_at = ((buf_fx - sizeof(struct krt_sigframe) + 8) & ~15ULL) - 8;
    /* get_sigframe: a frame that would overflow the alternate stack (one
     * entered now, or the one the thread is on) is refused, never written
     * below it: the caller forces SIGSEGV. */
    uint64_t ss_sp = (uint64_t)(uintptr_t)p->sig.altstack.ss_sp;
    if ((entering || onstack) &&
        !(frame_at > ss_sp && frame_at - ss_sp <= p->sig.altstack.ss_size))
        return -EFAULT;

    struct krt_sigframe f;
    memset(&f, 0, sizeof(f));
    f.pretcode = sa->restorer;
    f.uc.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
    f.uc.uc_stack.ss_sp = (uint64_t)(uintptr_t)p->sig.altstack.ss_sp;
    f.uc.uc_stack.ss_size = p->sig.altstack.ss_size;
    f.uc.uc_stack.ss_flags = (p->sig.altstack.ss_flags & SS_DISABLE)
                                 ? SS_DISABLE
                                 : (onstack ? SS_ONSTACK : 0);
    fill_sigcontext(&f.uc.uc_mcontext, r);
    f.uc.uc_mcontext.trapno = trapno;
    f.uc.uc_mcontext.err = err;
    f.uc.uc_mcontext.cr2 = cr2;
    /* After rt_sigsuspend the frame saves the caller's mask, not the
     * temporary one (Linux's sigmask_to_save). */
    struct proxy_thread *t = p->threads ? &p->threads[p->cur] : NULL;
    uint64_t to_save =
        t && t->saved_sigmask_valid ? t->saved_sigmask : p->sig.sigmask;
    f.uc.uc_mcontext.oldmask = to_save & 0xffffffffULL;
    f.uc.uc_mcontext.fpstate = buf_fx;
    f.uc.uc_sigmask = to_save;
    f.info = *info;
    int rc = write_fpstate(p, buf_fx);
    if (rc == 0)
        rc = proxy_copy_out(p, frame_at, &f, sizeof(f));
    if (rc < 0)
        return rc;
    if (t)
        t->saved_sigmask_valid = false;

    r->rsp = frame_at;
    r->rip = sa->handler;
    r->rdi = (uint64_t)sig;
    r->rsi = frame_at + offsetof(struct krt_sigframe, info);
    r->rdx = frame_at + offsetof(struct krt_sigframe, uc);
    r->rax = 0;
    r->rflags &= ~0x40500ULL; /* TF, DF, AC cleared for the handler */
    vmm_vm_enter_user(p->vm);
    /* Handlers start with a clean FPU state, as on Linux. */
    vmm_vm_reset_xstate(p->vm);
    return 0;
}

static void deliver(struct proxy_process *p, int sig, const siginfo_t *info,
                    uint64_t trapno, uint64_t err, uint64_t cr2);

/* force_sig_info's rule for a signal the kernel sends itself: blocked or
 * ignored, it is unblocked and takes its default action. */
static void force_default_if_unwanted(struct proxy_process *p, int sig)
{
    struct proxy_sigaction *sa = &p->sig.sigactions[sig];
    if ((p->sig.sigmask & SIGBIT(sig)) ||
        sa->handler == (uint64_t)(uintptr_t)SIG_IGN) {
        sa->handler = (uint64_t)(uintptr_t)SIG_DFL;
        p->sig.sigmask &= ~SIGBIT(sig);
    }
}

/*
 * Linux's signal_setup_done -> force_sigsegv(sig) after a handler frame for
 * sig could not be written: the failed signal is consumed (no mask change);
 * if it was SIGSEGV the process dies of SIGSEGV; otherwise a SIGSEGV
 * (SI_KERNEL, no address) is forced and its own handler may still run, on
 * a usable alternate stack. The sigcontext keeps the first fault's trap
 * number, error code and cr2, as the thread's trap state is unchanged.
 */
static void force_sigsegv(struct proxy_process *p, int failed_sig,
                          uint64_t trapno, uint64_t err, uint64_t cr2)
{
    if (failed_sig == SIGSEGV) {
        proxy_process_kill(p, SIGSEGV);
        return;
    }
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = SIGSEGV;
    info.si_code = SI_KERNEL;
    force_default_if_unwanted(p, SIGSEGV);
    if (proxy_ptrace_signal_stop(p, SIGSEGV, &info, 0))
        return;
    deliver(p, SIGSEGV, &info, trapno, err, cr2);
}

/* get_signal: a stop other than SIGSTOP is dropped when the process's
 * group is orphaned (no one in the session could continue it). */
static bool orphaned_stop(struct proxy_process *p, int sig)
{
    return sig != SIGSTOP && proxy_pgrp_orphaned(p->world, p->pgid);
}

static void deliver(struct proxy_process *p, int sig, const siginfo_t *info,
                    uint64_t trapno, uint64_t err, uint64_t cr2)
{
    struct proxy_sigaction *sa = &p->sig.sigactions[sig];
    struct proxy_thread *t = p->threads ? &p->threads[p->cur] : NULL;
    /* A transfer parked part way returns what it moved whatever the
     * signal does, SA_RESTART or not, as Linux does (xfer_progress.c). */
    if (t)
        proxy_xfer_end_parked(p, t);
    if (sa->handler == (uint64_t)(uintptr_t)SIG_IGN)
        return;
    if (sa->handler == (uint64_t)(uintptr_t)SIG_DFL) {
        enum default_action act = default_action_of(sig);
        if (act == ACT_TERM || act == ACT_CORE)
            proxy_process_kill(p, sig);
        else if (act == ACT_STOP && p->world && !orphaned_stop(p, sig) &&
                 !proxy_ptrace_group_stop(p, sig))
            proxy_process_stop(p, sig);
        return;
    }
    if (t && t->restartable &&
        (!(sa->flags & SA_RESTART) || t->sigwait_kind == PROXY_SIGWAIT_TIMED ||
         t->eintr_on_handler)) {
        /* The thread was parked on a syscall that re-runs: without
         * SA_RESTART it returns EINTR instead, as Linux does; so does
         * sigtimedwait always (signal(7)). */
        struct vmm_regs *r = vmm_vm_regs(p->vm);
        r->rax = (uint64_t)-EINTR;
        r->rip += 2;
        proxy_fifo_unpark(t); /* an interrupted FIFO open's reader end */
    }
    if (t) {
        t->restartable = false;
        t->eintr_on_handler = false;
        t->restart_sleep = false; /* a handler ends the restart block */
        t->sigwait_kind = PROXY_SIGWAIT_NONE;
        t->has_deadline = false;
        /* A poll/select interrupted here starts a new deadline if run
         * again (Linux restarts it with the time left). */
        t->poll_deadline = t->poll_timed_out = false;
    }
    proxy_rseq_fixup(p); /* rseq_signal_deliver: out of a critical section */
    if (setup_frame(p, sig, info, trapno, err, cr2) < 0) {
        force_sigsegv(p, sig, trapno, err, cr2);
        return;
    }
    p->sig.sigmask |= sa->mask;
    if (!(sa->flags & SA_NODEFER))
        p->sig.sigmask |= SIGBIT(sig);
    p->sig.sigmask &= ~UNBLOCKABLE;
    /* get_signal resets the handler alone: the flags stay as they were
     * (sigaction reads SA_SIGINFO and SA_RESETHAND back). */
    if (sa->flags & SA_RESETHAND)
        sa->handler = (uint64_t)(uintptr_t)SIG_DFL;
}

#define STOP_SIGNALS                                                           \
    (SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU))

/*
 * What Linux does at send time (prepare_signal): SIGCONT resumes a stopped
 * process and discards pending stops; a stop discards a pending SIGCONT and,
 * when its action is the default one, stops a process that is not running
 * at once (a sleeping process stops too); SIGKILL wakes a stopped process
 * so that it can die. Returns true when the signal is used up.
 */
static bool job_control(struct proxy_process *p, int signo)
{
    if (!p->world)
        return false;
    if (signo == SIGCONT) {
        p->sig.pending_mask &= ~STOP_SIGNALS;
        proxy_process_continue(p);
        proxy_ptrace_continued(p);
        return false; /* a SIGCONT handler still runs */
    }
    if (signo == SIGKILL) {
        p->stopped = false;
        proxy_ptrace_kill_wakes(p);
        return false;
    }
    if (!(SIGBIT(signo) & STOP_SIGNALS))
        return false;
    p->sig.pending_mask &= ~SIGBIT(SIGCONT);
    bool dfl = p->sig.sigactions[signo].handler == (uint64_t)(uintptr_t)SIG_DFL;
    bool blocked = signo != SIGSTOP && (p->sig.sigmask & SIGBIT(signo));
    struct proxy_world *w = p->world;
    bool running = w->procs[w->cur] == p;
    /* A traced process stops at the signal's delivery, for its tracer. */
    if (dfl && !blocked && !running && !proxy_ptrace_process_traced(p)) {
        if (!orphaned_stop(p, signo)) /* else dropped, as at delivery */
            proxy_process_stop(p, signo);
        return true;
    }
    return false;
}

static struct proxy_thread *thread_of(const struct proxy_process *p, int tid)
{
    for (int i = 0; p->threads && i < p->nr_threads; i++)
        if (p->threads[i].tid == tid ||
            (i == p->cur && p->tid == tid))
            return &p->threads[i];
    return NULL;
}

uint64_t proxy_signal_pending_for(const struct proxy_process *p, int tid)
{
    struct proxy_thread *t = thread_of(p, tid);
    return p->sig.pending_mask | (t ? t->own_pending : 0);
}

#define SIGRT_FIRST 32

/* Queues an instance of a real-time signal behind the pending one, for
 * the process (tid 0) or one thread. */
static void rt_enqueue(struct proxy_process *p, int signo, int tid,
                       const siginfo_t *info)
{
    if ((uint64_t)p->sig.nr_rt_queue >= p->rlimits[RLIMIT_SIGPENDING].rlim_cur)
        return;
    if (p->sig.nr_rt_queue == p->sig.cap_rt_queue) {
        int cap = p->sig.cap_rt_queue ? p->sig.cap_rt_queue * 2 : 16;
        void *q =
            realloc(p->sig.rt_queue, (size_t)cap * sizeof(*p->sig.rt_queue));
        if (!q)
            return;
        p->sig.rt_queue = q;
        p->sig.cap_rt_queue = cap;
    }
    p->sig.rt_queue[p->sig.nr_rt_queue++] = (struct proxy_pending_signal){
        .signo = signo, .tid = tid, .info = *info};
}

/* After the pending instance of a real-time signal is taken, the next
 * queued one for the same owner (oldest first) becomes pending. */
static void rt_refill(struct proxy_process *p, int signo,
                      struct proxy_thread *t)
{
    int tid = t ? t->tid : 0;
    for (int i = 0; i < p->sig.nr_rt_queue; i++) {
        if (p->sig.rt_queue[i].signo != signo || p->sig.rt_queue[i].tid != tid)
            continue;
        if (t) {
            t->own_info[signo] = p->sig.rt_queue[i].info;
            t->own_pending |= SIGBIT(signo);
        } else {
            p->sig.pending[signo] = p->sig.rt_queue[i];
            p->sig.pending_mask |= SIGBIT(signo);
        }
        memmove(&p->sig.rt_queue[i], &p->sig.rt_queue[i + 1],
                (size_t)(p->sig.nr_rt_queue - i - 1) *
                    sizeof(*p->sig.rt_queue));
        p->sig.nr_rt_queue--;
        return;
    }
}

/* Drops every pending and queued instance of signo, the process's and the
 * threads' (it became ignored). */
static void discard_signal(struct proxy_process *p, int signo)
{
    p->sig.pending_mask &= ~SIGBIT(signo);
    for (int i = 0; p->threads && i < p->nr_threads; i++)
        p->threads[i].own_pending &= ~SIGBIT(signo);
    int n = 0;
    for (int i = 0; i < p->sig.nr_rt_queue; i++)
        if (p->sig.rt_queue[i].signo != signo)
            p->sig.rt_queue[n++] = p->sig.rt_queue[i];
    p->sig.nr_rt_queue = n;
}

void proxy_signal_force_thread(struct proxy_process *p, int tid,
                               const siginfo_t *info)
{
    int signo = info->si_signo;
    struct proxy_sigaction *sa = &p->sig.sigactions[signo];
    if ((p->sig.sigmask & SIGBIT(signo)) ||
        sa->handler == (uint64_t)(uintptr_t)SIG_IGN) {
        sa->handler = (uint64_t)(uintptr_t)SIG_DFL;
        p->sig.sigmask &= ~SIGBIT(signo);
    }
    proxy_signal_raise_thread(p, tid, signo, info);
}

/* Thread t's mask: the thread on the vCPU keeps it in the process. */
static uint64_t mask_of(const struct proxy_process *p,
                        const struct proxy_thread *t)
{
    return t == &p->threads[p->cur] ? p->sig.sigmask : t->sigmask;
}

/* Linux's sig_handler_ignored: SIG_IGN, or SIG_DFL of a signal whose
 * default action is to ignore it (SIGCHLD, SIGCONT, SIGURG, SIGWINCH). */
static bool sig_ignored(const struct proxy_process *p, int sig)
{
    uint64_t handler = p->sig.sigactions[sig].handler;
    return handler == (uint64_t)(uintptr_t)SIG_IGN ||
           (handler == (uint64_t)(uintptr_t)SIG_DFL &&
            default_action_of(sig) == ACT_IGNORE);
}

/* Whether a thread of p blocks sig (t: that thread only). */
static bool sig_blocked(const struct proxy_process *p,
                        const struct proxy_thread *t, int sig)
{
    if (!p->threads)
        return (p->sig.sigmask & SIGBIT(sig)) != 0;
    if (t)
        return (mask_of(p, t) & SIGBIT(sig)) != 0;
    for (int k = 0; k < p->nr_threads; k++)
        if (p->threads[k].state != PROXY_THREAD_EXITED &&
            (mask_of(p, &p->threads[k]) & SIGBIT(sig)))
            return true;
    return false;
}

/*
 * prepare_signal's sig_ignored: a signal the process ignores is dropped
 * when it is sent, never queued, so it interrupts no blocking call (a
 * child's SIGCHLD does not end its parent's nanosleep). Kept when blocked
 * (the handler may change before it is unblocked; sigtimedwait and
 * signalfd take it) and when the process is traced (its tracer sees it at
 * a signal-delivery-stop). For a process-directed signal, blocked by any
 * thread keeps it, where Linux asks the thread it was sent to.
 */
static bool dropped_at_send(const struct proxy_process *p,
                            const struct proxy_thread *t, int sig)
{
    return sig_ignored(p, sig) && !sig_blocked(p, t, sig) &&
           !proxy_ptrace_process_traced(p);
}

/* Signals queued for p (the instances Linux charges to RLIMIT_SIGPENDING:
 * the process's and its threads' pending ones and those queued behind). */
static uint64_t sigpending_count(const struct proxy_process *p)
{
    uint64_t n = (uint64_t)__builtin_popcountll(p->sig.pending_mask) +
                 (uint64_t)p->sig.nr_rt_queue;
    for (int i = 0; i < p->nr_threads; i++)
        n += (uint64_t)__builtin_popcountll(p->threads[i].own_pending);
    return n;
}

/* A real-time signal a process sends with its siginfo (sigqueue, tgkill,
 * rt_sigqueueinfo) fails when one more would pass RLIMIT_SIGPENDING;
 * kill()'s and the kernel's (timers keep a preallocated one) are sent
 * regardless. */
static int sigpending_refused(const struct proxy_process *p, int signo,
                              const siginfo_t *info)
{
    return signo >= SIGRT_FIRST &&
                   (info->si_code == SI_QUEUE || info->si_code == SI_TKILL) &&
                   sigpending_count(p) + 1 > p->rlimits[RLIMIT_SIGPENDING].rlim_cur
               ? -EAGAIN
               : 0;
}

int proxy_signal_raise_thread(struct proxy_process *p, int tid, int signo,
                              const siginfo_t *info)
{
    struct proxy_thread *t = tid ? thread_of(p, tid) : NULL;
    if (!t)
        return proxy_signal_raise(p, signo, info);
    if (!sig_valid((uint64_t)signo) || job_control(p, signo) ||
        dropped_at_send(p, t, signo))
        return 0;
    int refused = sigpending_refused(p, signo, info);
    if (refused)
        return refused;
    if (!t->own_info && !(t->own_info = calloc(PROXY_NSIG, sizeof(siginfo_t))))
        return 0;
    /* As for the process: standard signals coalesce, real-time ones queue
     * every instance. */
    if (t->own_pending & SIGBIT(signo)) {
        if (signo >= SIGRT_FIRST)
            rt_enqueue(p, signo, t->tid, info);
        return 0;
    }
    t->own_info[signo] = *info;
    t->own_pending |= SIGBIT(signo);
    proxy_signalfd_sync(p);
    return 0;
}

int proxy_signal_raise(struct proxy_process *p, int signo,
                       const siginfo_t *info)
{
    if (!sig_valid((uint64_t)signo))
        return 0;
    if (job_control(p, signo) || dropped_at_send(p, NULL, signo))
        return 0;
    int refused = sigpending_refused(p, signo, info);
    if (refused)
        return refused;
    /* Standard signals coalesce; the first siginfo wins, as in Linux.
     * Real-time signals queue every instance (up to RLIMIT_SIGPENDING). */
    if (p->sig.pending_mask & SIGBIT(signo)) {
        if (signo >= SIGRT_FIRST)
            rt_enqueue(p, signo, 0, info);
        return 0;
    }
    p->sig.pending[signo].signo = signo;
    p->sig.pending[signo].info = *info;
    p->sig.pending_mask |= SIGBIT(signo);
    proxy_signalfd_sync(p);
    return 0;
}

int proxy_signal_dequeue(struct proxy_process *p, uint64_t set,
                         siginfo_t *info)
{
    /* The thread's own queue first, as Linux's dequeue_signal. */
    struct proxy_thread *t = thread_of(p, p->tid);
    uint64_t own = t ? t->own_pending & set : 0;
    if (own) {
        int sig = __builtin_ctzll(own) + 1;
        *info = t->own_info[sig];
        t->own_pending &= ~SIGBIT(sig);
        if (sig >= SIGRT_FIRST)
            rt_refill(p, sig, t);
        proxy_signalfd_sync(p);
        return sig;
    }
    uint64_t ready = proxy_signal_pending_for(p, p->tid) & set;
    if (!ready)
        return 0;
    int sig = __builtin_ctzll(ready) + 1;
    *info = p->sig.pending[sig].info;
    p->sig.pending_mask &= ~SIGBIT(sig);
    if (sig >= SIGRT_FIRST)
        rt_refill(p, sig, NULL);
    proxy_signalfd_sync(p);
    return sig;
}

void proxy_signal_deliver_pending(struct proxy_process *p)
{
    struct proxy_thread *t = p->threads ? &p->threads[p->cur] : NULL;
    /* A re-run sigtimedwait or signalfd read takes a signal of its set
     * first; a handler for another one runs when it returns, as on Linux
     * (the wait dequeues before the return path delivers). */
    if (t && t->restartable && t->sigwait_kind != PROXY_SIGWAIT_NONE &&
        (proxy_signal_pending_for(p, p->tid) & t->sigwait_set))
        return;
    for (;;) {
        uint64_t ready = proxy_signal_pending_for(p, p->tid) &
                         ~(p->sig.sigmask & ~UNBLOCKABLE);
        if (!ready)
            break;
        int sig = __builtin_ctzll(ready) + 1;
        siginfo_t info;
        proxy_signal_dequeue(p, SIGBIT(sig), &info);
        /* --gdb sees it first and may discard it. */
        const struct proxy_debugger *dbg = p->cfg->debugger;
        if (dbg && dbg->signal(dbg->ctx, p, sig))
            continue;
        /* A tracee stops for its tracer first, ignored signal or not. */
        if (proxy_ptrace_signal_stop(p, sig, &info, 0))
            return;
        bool inert = sig_inert(p, sig);
        deliver(p, sig, &info, 0, 0, 0);
        if (!inert)
            return;
    }
    /* Woken from rt_sigsuspend, but another thread took the signal: the
     * call returns EINTR with the caller's mask back. */
    if (t && t->saved_sigmask_valid) {
        p->sig.sigmask = t->saved_sigmask;
        t->saved_sigmask_valid = false;
    }
}

void proxy_signal_deliver_now(struct proxy_process *p, int sig,
                              const siginfo_t *info)
{
    /* Blocked by now: it goes back to pending (ptrace_signal). */
    if ((p->sig.sigmask & ~UNBLOCKABLE) & SIGBIT(sig)) {
        proxy_signal_raise_thread(p, p->tid, sig, info);
        return;
    }
    deliver(p, sig, info, 0, 0, 0);
}

/* Of the signals in `pending`, those a thread with `mask` would act on:
 * not blocked, and not inert (ignored, or a stop job control took care
 * of), which Linux discards at delivery without waking anyone. */
static uint64_t signals_acted_on(const struct proxy_process *p,
                                 uint64_t pending, uint64_t mask)
{
    uint64_t takes = pending & ~(mask & ~UNBLOCKABLE);
    for (uint64_t m = takes; m; m &= m - 1)
        if (sig_inert(p, __builtin_ctzll(m) + 1))
            takes &= ~(m & -m);
    return takes;
}

/* Thread t's pending signals (its own and the process's). */
static uint64_t pending_of(const struct proxy_process *p,
                           const struct proxy_thread *t)
{
    return proxy_signal_pending_for(
        p, t == &p->threads[p->cur] ? p->tid : t->tid);
}

bool proxy_signal_wait_ready(struct proxy_process *p,
                             const struct proxy_thread *t)
{
    uint64_t pending = pending_of(p, t);
    return signals_acted_on(p, pending, mask_of(p, t)) ||
           (pending & t->sigwait_set) || t->sigwait_timed_out;
}

bool proxy_signal_interrupts(const struct proxy_process *p,
                             const struct proxy_thread *t)
{
    uint64_t pending = pending_of(p, t);
    uint64_t mask = mask_of(p, t);
    /* A tracee stops for its tracer at every signal's delivery, an
     * ignored one's too (ptrace_signal runs before the ignore test). */
    if (proxy_ptrace_process_traced(p))
        return (pending & ~(mask & ~UNBLOCKABLE)) != 0;
    return signals_acted_on(p, pending, mask) != 0;
}

bool proxy_signal_would_take(struct proxy_process *p)
{
    if (!p->threads)
        return false;
    return signals_acted_on(p, proxy_signal_pending_for(p, p->tid),
                            p->sig.sigmask) != 0;
}

/* ---- CPU exceptions ------------------------------------------------------ */

struct fault_map {
    int signo, code;
    bool addr_is_rip;
};

static struct fault_map map_vector(struct proxy_process *p,
                                   const struct vmm_event *ev, bool past_eof)
{
    switch (ev->vector) {
    case 0: return (struct fault_map){SIGFPE, FPE_INTDIV, true};
    case 1: return (struct fault_map){SIGTRAP, TRAP_TRACE, true};
    case 3: return (struct fault_map){SIGTRAP, SI_KERNEL, false};
    case 4: case 5: return (struct fault_map){SIGSEGV, SI_KERNEL, false};
    case 6: return (struct fault_map){SIGILL, ILL_ILLOPN, true};
    case 16: return (struct fault_map){SIGFPE, FPE_FLTINV, true};
    case 17: return (struct fault_map){SIGBUS, BUS_ADRALN, false};
    case 19: return (struct fault_map){SIGFPE, FPE_FLTINV, true};
    case 12: return (struct fault_map){SIGBUS, SI_KERNEL, false};
    case 14: {
        if (past_eof) /* of a file mapping: Linux's VM_FAULT_SIGBUS */
            return (struct fault_map){SIGBUS, BUS_ADRERR, false};
        struct vmm_vma *v = vmm_as_find_vma(p->as, ev->fault_addr);
        return (struct fault_map){SIGSEGV, v ? SEGV_ACCERR : SEGV_MAPERR,
                                  false};
    }
    default: /* #GP, #NP, #TS and the rest */
        return (struct fault_map){SIGSEGV, SI_KERNEL, false};
    }
}

void proxy_signal_fault(struct proxy_process *p, const struct vmm_event *ev)
{
    /* a step of a tracer's breakpoints hvrun keeps by stepping (ptrace.c) */
    if (ev->vector == 1 && proxy_ptrace_stepped_dr_only(p))
        return;
    /* A page past a file's end that the file has grown over since, or a
     * lazy stretch backed now, is mapped: the access runs again, as after
     * Linux's fault. */
    if (ev->vector == 14 && p->world && p->world->nr_perfs)
        proxy_perf_on_fault(p->world, p->threads[p->cur].tid);
    int file_fault = ev->vector == 14 ? vmm_as_guest_fault(
                         p->as, ev->fault_addr, ev->error_code & 2) : -1;
    if (file_fault == 1)
        return;
    if (ev->vector == 14 && file_fault < 0 &&
        proxy_hooks.mm_grow_down(p, ev->fault_addr))
        return; /* a MAP_GROWSDOWN mapping grew over it */
    /* A bad pointer given to a signal call answered in the guest: the
     * call's EFAULT, not a signal. */
    if (proxy_hooks.cpuid_sig_stub_fault(p))
        return;
    /* A signal's frame names the program's instruction, never a loop
     * body's copy in hvrun's trampolines (mm/progress_copy.c). */
    (void)proxy_hooks.progress_home(p);
    struct fault_map m = map_vector(p, ev, file_fault == 0);
    /* --gdb sees a fault first; discarded, the instruction runs again. */
    const struct proxy_debugger *dbg = p->cfg->debugger;
    if (dbg && dbg->signal(dbg->ctx, p, m.signo))
        return;
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = m.signo;
    info.si_code = m.code;
    if (ev->vector == 14)
        info.si_addr = (void *)(uintptr_t)ev->fault_addr;
    else if (m.addr_is_rip)
        info.si_addr = (void *)(uintptr_t)vmm_vm_regs(p->vm)->rip;
    proxy_log(p, 2, "exception %u at rip %#llx (addr %#llx): signal %d",
              ev->vector, (unsigned long long)vmm_vm_regs(p->vm)->rip,
              (unsigned long long)ev->fault_addr, m.signo);
    /* force_sig_fault: a blocked or ignored fault signal kills. */
    force_default_if_unwanted(p, m.signo);
    /* A tracee's fault is its tracer's first (signal-delivery-stop). */
    if (proxy_ptrace_signal_stop(p, m.signo, &info, ev->vector))
        return;
    uint64_t err = ev->vector == 14 ? (ev->error_code | 4) : ev->error_code;
    deliver(p, m.signo, &info, ev->vector, err,
            ev->vector == 14 ? ev->fault_addr : 0);
}

/* ---- syscalls ------------------------------------------------------------ */

/* Linux's order: the new action read (EFAULT), then the signal checked
 * (EINVAL), the action set, and only then the old one written (EFAULT
 * with the new one in place). */
static long sys_rt_sigaction(struct proxy_process *p, const uint64_t a[6])
{
    int sig = (int)a[0];
    if (a[3] != 8)
        return -EINVAL;
    struct proxy_sigaction act;
    if (a[1]) {
        int rc = proxy_copy_in(p, &act, a[1], sizeof(act));
        if (rc < 0)
            return rc;
    }
    if (!sig_valid(a[0]) || (a[1] && (sig == SIGKILL || sig == SIGSTOP)))
        return -EINVAL;
    struct proxy_sigaction old = p->sig.sigactions[sig];
    if (a[1]) {
        act.mask &= ~UNBLOCKABLE;
        p->sig.sigactions[sig] = act;
        /* Setting SIG_IGN (or SIG_DFL of an ignore-by-default signal)
         * discards a pending instance. */
        if (act.handler == (uint64_t)(uintptr_t)SIG_IGN ||
            (act.handler == (uint64_t)(uintptr_t)SIG_DFL &&
             default_action_of(sig) == ACT_IGNORE)) {
            discard_signal(p, sig);
            proxy_signalfd_sync(p);
        }
    }
    return a[2] ? proxy_copy_out(p, a[2], &old, sizeof(old)) : 0;
}

/* Linux's order: the set read (EFAULT), how checked (EINVAL, an int),
 * the mask changed, and only then the old one written (EFAULT with the
 * new mask in place). */
static long sys_rt_sigprocmask(struct proxy_process *p, const uint64_t a[6])
{
    if (a[3] != 8)
        return -EINVAL;
    uint64_t set = 0, old = p->sig.sigmask;
    if (a[1]) {
        int rc = proxy_copy_in(p, &set, a[1], 8);
        if (rc < 0)
            return rc;
        int how = (int)a[0];
        if (how == SIG_BLOCK)
            p->sig.sigmask |= set;
        else if (how == SIG_UNBLOCK)
            p->sig.sigmask &= ~set;
        else if (how == SIG_SETMASK)
            p->sig.sigmask = set;
        else
            return -EINVAL;
        p->sig.sigmask &= ~UNBLOCKABLE;
    }
    return a[2] ? proxy_copy_out(p, a[2], &old, 8) : 0;
}

static long sys_rt_sigpending(struct proxy_process *p, const uint64_t a[6])
{
    if (a[1] > 8)
        return -EINVAL;
    uint64_t set = proxy_signal_pending_for(p, p->tid) & p->sig.sigmask;
    return proxy_copy_out(p, a[0], &set, a[1]);
}

static long sys_sigaltstack(struct proxy_process *p, const uint64_t a[6])
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    bool onstack = on_altstack(p, r->rsp);
    if (a[1]) {
        struct kstack old = {(uint64_t)(uintptr_t)p->sig.altstack.ss_sp,
                             onstack ? SS_ONSTACK : p->sig.altstack.ss_flags, 0,
                             p->sig.altstack.ss_size};
        if (p->sig.altstack.ss_flags & SS_DISABLE)
            old = (struct kstack){0, SS_DISABLE, 0, 0};
        int rc = proxy_copy_out(p, a[1], &old, sizeof(old));
        if (rc < 0)
            return rc;
    }
    if (!a[0])
        return 0;
    struct kstack ss;
    int rc = proxy_copy_in(p, &ss, a[0], sizeof(ss));
    if (rc < 0)
        return rc;
    if (onstack)
        return -EPERM;
    int mode = ss.ss_flags & ~SS_AUTODISARM_FLAG;
    if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
        return -EINVAL;
    if (mode == SS_DISABLE) {
        p->sig.altstack.ss_sp = NULL;
        p->sig.altstack.ss_size = 0;
        p->sig.altstack.ss_flags = SS_DISABLE;
        return 0;
    }
    if (ss.ss_size < KERNEL_MINSIGSTKSZ)
        return -ENOMEM;
    p->sig.altstack.ss_sp = (void *)(uintptr_t)ss.ss_sp;
    p->sig.altstack.ss_size = ss.ss_size;
    p->sig.altstack.ss_flags = ss.ss_flags & SS_AUTODISARM_FLAG;
    return 0;
}

static void restore_sigcontext(struct vmm_regs *r,
                               const struct ksigcontext *sc)
{
    r->r8 = sc->r8; r->r9 = sc->r9; r->r10 = sc->r10; r->r11 = sc->r11;
    r->r12 = sc->r12; r->r13 = sc->r13; r->r14 = sc->r14; r->r15 = sc->r15;
    r->rdi = sc->rdi; r->rsi = sc->rsi; r->rbp = sc->rbp; r->rbx = sc->rbx;
    r->rdx = sc->rdx; r->rax = sc->rax; r->rcx = sc->rcx; r->rsp = sc->rsp;
    r->rip = sc->rip; r->rflags = sc->eflags;
}

static long sys_rt_sigreturn(struct proxy_process *p, const uint64_t a[6])
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    gva_t frame_at = r->rsp - 8;
    struct krt_sigframe f;
    if (proxy_copy_in(p, &f, frame_at, sizeof(f)) < 0) {
        proxy_process_kill(p, SIGSEGV);
        return PROXY_RET_NORETURN;
    }
    uint8_t xs[VMM_XSAVE_MAX_BYTES];
    uint32_t bytes = vmm_vm_xsave_bytes(p->vm);
    if (f.uc.uc_mcontext.fpstate) {
        uint32_t magic1;
        if (proxy_copy_in(p, xs, f.uc.uc_mcontext.fpstate, bytes) < 0) {
            proxy_process_kill(p, SIGSEGV);
            return PROXY_RET_NORETURN;
        }
        memcpy(&magic1, xs + 464, 4);
        /* Without MAGIC1 the frame holds only the legacy FXSAVE part:
         * restore x87/SSE and put AVX in its initial state. */
        if (magic1 != FP_XSTATE_MAGIC1) {
            uint64_t bv = 0x3;
            memcpy(xs + 512, &bv, 8);
            memset(xs + 576, 0, bytes - 576);
        }
        vmm_vm_set_xstate(p->vm, xs, sizeof(xs));
    } else {
        vmm_vm_reset_xstate(p->vm);
    }
    restore_sigcontext(r, &f.uc.uc_mcontext);
    p->sig.sigmask = f.uc.uc_sigmask & ~UNBLOCKABLE;
    if (!on_altstack(p, r->rsp)) {
        p->sig.altstack.ss_sp = (void *)(uintptr_t)f.uc.uc_stack.ss_sp;
        p->sig.altstack.ss_size = f.uc.uc_stack.ss_size;
        p->sig.altstack.ss_flags = f.uc.uc_stack.ss_flags & SS_DISABLE;
    }
    vmm_vm_enter_user(p->vm);
    return PROXY_RET_REGS_SET;
}

/* ---- waiting for signals ------------------------------------------------- */

static struct proxy_thread *current_thread(struct proxy_process *p)
{
    return &p->threads[p->cur];
}

/* Parks the current thread until proxy_signal_wait_ready. */
static void wait_signal(struct proxy_process *p, enum proxy_sigwait_kind kind,
                        uint64_t set)
{
    struct proxy_thread *t = current_thread(p);
    t->state = PROXY_THREAD_WAIT_SIGNAL;
    t->sigwait_kind = kind;
    t->sigwait_set = set;
    p->resched = true;
}

/* pause and rt_sigsuspend: the -EINTR returned here goes into RAX now and
 * is what the caller sees once the handler returns (never restarted). A
 * signal the thread would take right away means no wait at all. */
static long suspend(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    t->has_deadline = false;
    t->sigwait_timed_out = false;
    t->sigwait_set = 0;
    if (!proxy_signal_wait_ready(p, t))
        wait_signal(p, PROXY_SIGWAIT_SUSPEND, 0);
    return -EINTR;
}

static long sys_pause(struct proxy_process *p, const uint64_t a[6])
{
    return suspend(p);
}

long proxy_signal_suspend(struct proxy_process *p)
{
    return suspend(p);
}

static uint64_t monotonic_now_ns(struct proxy_process *p);

long proxy_signal_suspend_for(struct proxy_process *p, uint64_t ns)
{
    struct proxy_thread *t = current_thread(p);
    t->sigwait_timed_out = false;
    t->sigwait_set = 0;
    if (proxy_signal_wait_ready(p, t))
        return -EINTR;
    t->has_deadline = true;
    t->deadline_ns = monotonic_now_ns(p) + ns;
    wait_signal(p, PROXY_SIGWAIT_POLL, 0);
    return -EINTR; /* what a signal's handler leaves; the deadline: 0 */
}

static long sys_rt_sigsuspend(struct proxy_process *p, const uint64_t a[6])
{
    uint64_t mask;
    if (a[1] != 8)
        return -EINVAL;
    if (proxy_copy_in(p, &mask, a[0], 8) < 0)
        return -EFAULT;
    struct proxy_thread *t = current_thread(p);
    t->saved_sigmask = p->sig.sigmask;
    t->saved_sigmask_valid = true;
    p->sig.sigmask = mask & ~UNBLOCKABLE;
    return suspend(p);
}

static uint64_t monotonic_now_ns(struct proxy_process *p)
{
    struct timespec ts;
    det_clock_gettime(p->det, CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * rt_sigtimedwait(set, info, timeout, sigsetsize). The first call reads the
 * timeout and, with nothing of set pending, parks with the deadline in the
 * thread (sigwait_kind TIMED marks the re-runs of the same call, which keep
 * that deadline); the world expires it like a futex timeout (logical time
 * advances to it) and the re-run answers EAGAIN. Signals of set wake the
 * thread although they are blocked, as Linux unblocks them for the wait.
 */
static long do_sigtimedwait(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_thread *t = current_thread(p);
    bool rerun = t->sigwait_kind == PROXY_SIGWAIT_TIMED;
    uint64_t set;
    if (a[3] != 8)
        return -EINVAL;
    if (proxy_copy_in(p, &set, a[0], 8) < 0)
        return -EFAULT;
    set &= ~UNBLOCKABLE;
    struct timespec ts = {0, 0};
    if (a[2] && !rerun) {
        if (proxy_copy_in(p, &ts, a[2], sizeof(ts)) < 0)
            return -EFAULT;
        if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
            return -EINVAL;
    }
    siginfo_t info;
    int sig = proxy_signal_dequeue(p, set, &info);
    if (sig) {
        if (a[1] && proxy_copy_out(p, a[1], &info, sizeof(info)) < 0)
            return -EFAULT;
        return sig;
    }
    if (rerun ? t->sigwait_timed_out : (a[2] && !ts.tv_sec && !ts.tv_nsec))
        return -EAGAIN;
    if (!rerun) {
        t->has_deadline = a[2] != 0;
        if (a[2])
            t->deadline_ns = monotonic_now_ns(p) +
                             (uint64_t)ts.tv_sec * 1000000000ULL +
                             (uint64_t)ts.tv_nsec;
    }
    wait_signal(p, PROXY_SIGWAIT_TIMED, set);
    return PROXY_RET_BLOCK;
}

static long sys_rt_sigtimedwait(struct proxy_process *p, const uint64_t a[6])
{
    long r = do_sigtimedwait(p, a);
    if (r != PROXY_RET_BLOCK) {
        struct proxy_thread *t = current_thread(p);
        t->sigwait_kind = PROXY_SIGWAIT_NONE;
        t->sigwait_timed_out = false;
        t->has_deadline = false;
    }
    return r;
}

/* ---- queueing signals with data ------------------------------------------ */

/*
 * rt_sigqueueinfo and rt_tgsigqueueinfo send the caller's siginfo, with
 * si_signo set to sig. As Linux does, only a thread signalling its own
 * process may forge a kernel (si_code >= 0) or tkill (SI_TKILL) origin.
 */
static long queue_info(struct proxy_process *p, int tgid, int tid, int sig,
                       gva_t uinfo)
{
    siginfo_t info;
    if (proxy_copy_in(p, &info, uinfo, sizeof(info)) < 0)
        return -EFAULT;
    info.si_signo = sig;
    /* Linux compares the caller's tid with the pid argument: the process
     * for rt_sigqueueinfo, the thread for rt_tgsigqueueinfo. */
    if ((info.si_code >= 0 || info.si_code == SI_TKILL) &&
        p->tid != (tid > 0 ? tid : tgid))
        return -EPERM;
    struct proxy_process *q = proxy_world_find(p->world, tgid);
    /* rt_sigqueueinfo's pid may be any thread's tid: kill_pid_info finds
     * that task and signals its whole process, as kill() does */
    if (!q && tid <= 0)
        q = proxy_world_find_tid(p->world, tgid);
    if (!q)
        return -ESRCH;
    if (q->zombie && tid <= 0) /* there until reaped: nothing delivered */
        return sig < 0 || sig > 64 ? -EINVAL : 0;
    if (tid > 0) {
        bool found = false;
        for (int i = 0; i < q->nr_threads; i++)
            found |= q->threads[i].tid == tid &&
                     q->threads[i].state != PROXY_THREAD_EXITED;
        if (!found)
            return -ESRCH;
    }
    if (sig < 0 || sig > 64)
        return -EINVAL;
    return sig != 0 ? proxy_signal_raise_thread(q, tid > 0 ? tid : 0, sig, &info)
                    : 0;
}

static long sys_rt_sigqueueinfo(struct proxy_process *p, const uint64_t a[6])
{
    return queue_info(p, (int)a[0], 0, (int)a[1], a[2]);
}

static long sys_rt_tgsigqueueinfo(struct proxy_process *p,
                                  const uint64_t a[6])
{
    if ((int)a[0] <= 0 || (int)a[1] <= 0)
        return -EINVAL;
    return queue_info(p, (int)a[0], (int)a[1], (int)a[2], a[3]);
}

const struct proxy_syscall proxy_signal_syscalls[] = {
    {SYS_rt_sigaction, "rt_sigaction", sys_rt_sigaction},
    {SYS_rt_sigprocmask, "rt_sigprocmask", sys_rt_sigprocmask},
    {SYS_rt_sigpending, "rt_sigpending", sys_rt_sigpending},
    {SYS_sigaltstack, "sigaltstack", sys_sigaltstack},
    {SYS_rt_sigreturn, "rt_sigreturn", sys_rt_sigreturn},
    {SYS_pause, "pause", sys_pause},
    {SYS_rt_sigsuspend, "rt_sigsuspend", sys_rt_sigsuspend},
    {SYS_rt_sigtimedwait, "rt_sigtimedwait", sys_rt_sigtimedwait},
    {SYS_rt_sigqueueinfo, "rt_sigqueueinfo", sys_rt_sigqueueinfo},
    {SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", sys_rt_tgsigqueueinfo},
    {-1, NULL, NULL},
};
