/*
 * ptrace.c - ptrace(2) between guests: a tracer in the run (strace, gdb,
 * a test harness) tracing other guest threads, over hvrun's own process
 * model. Nothing of the host's ptrace is used: a tracee's stops are
 * states of its proxy_thread (PROXY_THREAD_PTRACE_STOP), its registers and
 * memory are the ones hvrun keeps, and the tracer's wait4/waitid sees the
 * stops through procsys.c. Every stop happens at a point of the program's
 * own progress, so tracing stays deterministic.
 *
 * Where a traced thread stops, as Linux's ptrace(2) says:
 *   - syscall-enter-stop: before dispatch (world.c). The thread is parked
 *     back at its SYSCALL instruction, as a blocked call is; the tracer
 *     sees it as Linux shows it (rip after the instruction, rax -ENOSYS,
 *     orig_rax the number) and may change the call or cancel it
 *     (orig_rax -1); when let go, the thread makes the call again and
 *     that second entry does not stop.
 *   - PTRACE_EVENT_FORK/VFORK/CLONE/EXEC/VFORK_DONE: after the call did
 *     its work, before it returns to user code; then the syscall-exit-stop
 *     if the last resume was PTRACE_SYSCALL. PTRACE_EVENT_EXIT: before an
 *     exit or exit_group does its work (parked like an entry stop).
 *   - signal-delivery-stop: when a signal is about to be delivered
 *     (signal.c), a CPU exception's too (int3, a single step, a fault):
 *     the tracer's resume says which signal, if any, is delivered.
 *   - group-stop: a stop signal's default action, reported to the tracer.
 * Children of a traced fork/clone are attached per PTRACE_O_TRACE*; a
 * tracee that exits is reported to its tracer before its parent.
 *
 * Hardware breakpoints and watchpoints (POKEUSER of DR0-DR3, DR7) are the
 * backend's where it gives the guest debug registers (ptrace: the stub's
 * own); where it does not (kvm_pvm), hvrun keeps them by single-stepping
 * the tracee while any is enabled: an instruction breakpoint fires at its
 * address, a data one when its bytes changed (a write of the same value
 * and reads are not seen; TF shows to the tracee's own pushf).
 *
 * PTRACE_EVENT_SECCOMP: a guest filter's SECCOMP_RET_TRACE stops the call
 * (seccomp.c asks proxy_ptrace_seccomp_trace) after its entry stop; the
 * call runs again after, the filters too, RET_TRACE then allowed.
 * A traced thread that exits is its tracer's zombie to reap (WIFEXITED),
 * before the group's leader.
 *
 * PTRACE_SYSEMU and SYSEMU_SINGLESTEP (User-mode Linux, gVisor's ptrace
 * platform): the call stops at its entry as under PTRACE_SYSCALL and is
 * then skipped, its result the rax the tracer left (-ENOSYS if none);
 * no exit stop follows unless the tracer resumed with PTRACE_SYSCALL, and
 * under SYSEMU_SINGLESTEP no single-step trap for the SYSCALL instruction
 * itself (Linux's report_single_step).
 *
 * Not modelled (docs/DETERMINISM.md): PEEKSIGINFO, a tracer other than
 * the tracee's process' threads' own (every thread of the tracing process
 * is its tracer).
 */
#include "proxy.h"
#include "hooks.h"
#include "kernel.h"
#include "internal.h"
#include "ptrace.h"

#include <errno.h>
#include <linux/elf.h>
#include <linux/ptrace.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "cpu_x86_64.h"

#define SIGBIT(s) (1ULL << ((s) - 1))
#define DR6_BS 0x4000ULL
#define AUDIT_ARCH_X86_64_ID 0xc000003eU
#define PT_OPTIONS_VALID                                                       \
    (PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |       \
     PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEVFORKDONE |     \
     PTRACE_O_TRACEEXIT | PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL |         \
     PTRACE_O_SUSPEND_SECCOMP)
/* ptrace_message at syscall stops (PTRACE_GET_SYSCALL_INFO's op). */
#define EVENTMSG_SYSCALL_ENTRY 1
#define EVENTMSG_SYSCALL_EXIT 2

/* ---- the traced thread ---------------------------------------------------- */

/* The bytes breakpoint i of DR7 covers (its LEN field). */
static struct proxy_thread *current_thread(struct proxy_process *p)
{
    return p->threads ? &p->threads[p->cur] : NULL;
}

static int tid_of(const struct proxy_process *q, const struct proxy_thread *t)
{
    return on_vcpu(q, t) ? q->tid : t->tid;
}

/* A thread's id as viewer sees it (a main thread's is its pid). */
static int seen_id(const struct proxy_process *viewer,
                   const struct proxy_process *q, const struct proxy_thread *t)
{
    int tid = tid_of(q, t);
    return tid == q->pid ? proxy_ns_pid_of(viewer, q) : tid;
}

bool proxy_ptrace_traced(const struct proxy_process *p)
{
    return p->threads && p->cur < p->nr_threads &&
           p->threads[p->cur].pt.tracer != 0;
}

bool proxy_ptrace_process_traced(const struct proxy_process *p)
{
    for (int k = 0; p->threads && k < p->nr_threads; k++)
        if (p->threads[k].pt.tracer)
            return true;
    return false;
}

static bool dying(struct proxy_process *p)
{
    return p->exited ||
           (proxy_signal_pending_for(p, p->tid) & SIGBIT(SIGKILL));
}

static void untrace(struct proxy_process *q, struct proxy_thread *t)
{
    if (t->pt.step_tf)
        regs_of(q, t)->rflags &= ~RFLAGS_TF;
    bool in_place = t->pt.in_place;
    int saved = t->pt.saved_state;
    memset(&t->pt, 0, sizeof(t->pt));
    t->pt.orig_rax = -1;
    if (t->state == PROXY_THREAD_PTRACE_STOP)
        t->state = in_place ? saved : PROXY_THREAD_RUNNABLE;
}

/* An SI_USER siginfo of sig, sent by from (NULL: by the kernel) to q: from's
 * pid as q sees it. */
static siginfo_t user_info(int sig, const struct proxy_process *from,
                           const struct proxy_process *q)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = sig;
    info.si_code = SI_USER;
    if (from) {
        info.si_pid = proxy_ns_pid_of(q, from);
        info.si_uid = from->cred.ruid;
    }
    return info;
}

/* ---- stops ----------------------------------------------------------------- */

/* SIGCHLD to the tracer, CLD_TRAPPED (do_notify_parent_cldstop). */
static void notify_tracer(struct proxy_process *q, struct proxy_thread *t,
                          int code, int status)
{
    struct proxy_process *tr = proxy_world_find(q->world, t->pt.tracer);
    if (!tr || tr->zombie)
        return;
    const struct proxy_sigaction *sa = &tr->sig.sigactions[SIGCHLD];
    if (sa->handler == (uint64_t)(uintptr_t)SIG_IGN ||
        (code != CLD_EXITED && code != CLD_KILLED &&
         (sa->flags & SA_NOCLDSTOP)))
        return;
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = SIGCHLD;
    info.si_code = code;
    info.si_pid = seen_id(tr, q, t);
    info.si_uid = q->cred.ruid;
    info.si_status = status;
    proxy_signal_raise(tr, SIGCHLD, &info);
}

/* The thread stops, its tracer to be told: sig (SIGTRAP, or with
 * TRACESYSGOOD SIGTRAP|0x80) and an event in the status's third byte. */
static void enter_stop(struct proxy_process *q, struct proxy_thread *t,
                       enum proxy_pt_stop stop, int sig, int event)
{
    t->pt.stop = stop;
    t->pt.status = ((sig | event << 8) << 8) | 0x7f;
    t->pt.reported = false;
    t->state = PROXY_THREAD_PTRACE_STOP;
    if (on_vcpu(q, t))
        q->resched = true;
    proxy_log(q, 2, "[%d] ptrace stop %d, status %#x, call %lld",
              tid_of(q, t), (int)stop, t->pt.status,
              (long long)t->pt.orig_rax);
    notify_tracer(q, t, CLD_TRAPPED, sig & 0x7f);
}

/* A stop of ptrace's own (syscall, event): its siginfo as ptrace_notify
 * makes it. */
static void trap_info(struct proxy_process *q, struct proxy_thread *t,
                      int code)
{
    memset(&t->pt.info, 0, sizeof(t->pt.info));
    t->pt.info.si_signo = SIGTRAP;
    t->pt.info.si_code = code;
    t->pt.info.si_pid = proxy_ns_pid_of(q, q);
    t->pt.info.si_uid = q->cred.ruid;
}

static void event_stop(struct proxy_process *q, struct proxy_thread *t,
                       int event, uint64_t msg)
{
    t->pt.msg = msg;
    trap_info(q, t, SIGTRAP | event << 8);
    enter_stop(q, t, PROXY_PT_EVENT, SIGTRAP, event);
}

static int syscall_trap_sig(const struct proxy_thread *t)
{
    return SIGTRAP | ((t->pt.options & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0);
}

/* Back to the SYSCALL instruction with the number in RAX: the call is
 * made again when the tracer lets the thread go on. */
static void park_at_syscall(struct proxy_process *p)
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    vmm_vm_syscall_return(p->vm, (long)r->rax);
    r->rip -= SYSCALL_INSN_BYTES;
    p->threads[p->cur].pt.entry_done = true;
}

bool proxy_ptrace_parked(const struct proxy_thread *t)
{
    return t->pt.stop == PROXY_PT_SYSCALL_ENTER ||
           (t->pt.stop == PROXY_PT_EVENT &&
            ((t->pt.status >> 16) == PTRACE_EVENT_EXIT ||
             (t->pt.status >> 16) == PTRACE_EVENT_SECCOMP));
}

int proxy_ptrace_seccomp_trace(struct proxy_process *p, uint32_t data)
{
    struct proxy_thread *t = current_thread(p);
    if (t->pt.seccomp_done)
        return 0;
    if (!t->pt.tracer || !(t->pt.options & PTRACE_O_TRACESECCOMP) ||
        dying(p))
        return -1;
    t->pt.seccomp_done = true;
    event_stop(p, t, PTRACE_EVENT_SECCOMP, data);
    return 1;
}

static bool stops_at_entry(enum proxy_pt_resume how)
{
    return how == PROXY_PT_SYSCALL || how == PROXY_PT_SYSEMU ||
           how == PROXY_PT_SYSEMU_STEP;
}

bool proxy_ptrace_syscall_entry(struct proxy_process *p, bool *skip,
                                long *skip_result)
{
    *skip = false;
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer || dying(p))
        return false;
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    if (t->pt.entry_done) {
        /* The call again after its entry stop (or a blocked one re-run). */
        t->pt.entry_done = false;
        if (t->pt.skip_call) {
            t->pt.skip_call = t->pt.emulated = false;
            *skip = true;
            *skip_result = (long)t->pt.skip_result;
            return false;
        }
    } else {
        t->pt.orig_rax = (int64_t)r->rax;
        t->pt.exit_event_done = false;
        if (stops_at_entry(t->pt.resume)) {
            park_at_syscall(p);
            t->pt.emulated = t->pt.resume != PROXY_PT_SYSCALL;
            t->pt.skip_call = t->pt.emulated;
            t->pt.skip_result = -ENOSYS;
            t->pt.msg = EVENTMSG_SYSCALL_ENTRY;
            trap_info(p, t, syscall_trap_sig(t));
            enter_stop(p, t, PROXY_PT_SYSCALL_ENTER, syscall_trap_sig(t), 0);
            return true;
        }
    }
    long nr = (long)r->rax;
    if ((nr == SYS_exit || nr == SYS_exit_group) && !t->pt.exit_event_done &&
        (t->pt.options & PTRACE_O_TRACEEXIT)) {
        t->pt.exit_event_done = true;
        uint64_t status = (r->rdi & 0xff) << 8;
        park_at_syscall(p);
        event_stop(p, t, PTRACE_EVENT_EXIT, status);
        return true;
    }
    return false;
}

void proxy_ptrace_syscall_done(struct proxy_process *p, long ret)
{
    struct proxy_thread *t = current_thread(p);
    if (t && ret != PROXY_RET_BLOCK)
        t->pt.seccomp_done = false; /* the call is over */
    if (!t || !t->pt.tracer || ret == PROXY_RET_NORETURN)
        return;
    if (ret == PROXY_RET_BLOCK) {
        t->pt.entry_done = true; /* its re-run makes no second entry stop */
        return;
    }
    t->pt.rerun_tried = false;
    t->pt.in_syscall = true;
    /* restore_sigcontext: orig_ax -1, so nothing restarts after it */
    if (t->pt.orig_rax == SYS_rt_sigreturn)
        t->pt.orig_rax = -1;
}

/* A single step ended at an instruction: the trap, TF taken back. */
static void step_trapped(struct proxy_process *q, struct proxy_thread *t)
{
    regs_of(q, t)->rflags &= ~RFLAGS_TF;
    t->pt.step_tf = false;
    t->pt.dr[6] = DR6_RESERVED | DR6_BS;
}

/* A #DB with breakpoints armed: which fired (DR6's B0-B3), as
 * ptrace_triggered reports it: TRAP_HWBKPT, si_addr the user rip. */
static void hw_breakpoint_hit(struct proxy_process *p, struct proxy_thread *t,
                              siginfo_t *si)
{
    uint64_t dr6 = t->pt.sw_tf ? t->pt.dr6_stepped : vmm_vm_take_dr6(p->vm);
    t->pt.dr6_stepped = 0;
    t->pt.dr[6] = dr6 | DR6_RESERVED;
    for (int i = 0; i < 4; i++)
        if (dr6 & (1ULL << i)) {
            si->si_code = TRAP_HWBKPT;
            si->si_addr = (void *)(uintptr_t)vmm_vm_regs(p->vm)->rip;
            return;
        }
}

/* Which stepped breakpoint fired at this step, as DR6 bits: an
 * instruction one when the thread is at it, a data one when its bytes
 * changed (a write of the same value, and reads, go unseen). */
static uint64_t stepped_hits(struct proxy_process *p, struct proxy_thread *t)
{
    uint64_t hits = 0, rip = vmm_vm_regs(p->vm)->rip;
    for (int i = 0; i < 4; i++) {
        if (!((t->pt.dr[7] >> (2 * i)) & 3))
            continue;
        unsigned rw = (t->pt.dr[7] >> (16 + 4 * i)) & 3;
        if (rw == 0) {
            hits |= rip == t->pt.dr[i] ? 1ULL << i : 0;
            continue;
        }
        uint64_t now = 0;
        (void)vmm_as_copy_in(p->as, &now, t->pt.dr[i],
                             dr_bytes(t->pt.dr[7], i));
        if (now != t->pt.dr_seen[i])
            hits |= 1ULL << i;
        t->pt.dr_seen[i] = now;
    }
    return hits;
}

bool proxy_ptrace_stepped_dr_only(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer || !t->pt.sw_tf)
        return false;
    uint64_t hits = stepped_hits(p, t);
    if (hits) {
        t->pt.dr6_stepped = hits;
        return false; /* a SIGTRAP TRAP_HWBKPT stop (signal_stop) */
    }
    return !t->pt.step_tf; /* the tracer's own single step stops */
}

/* The current thread's breakpoints on its VM's vCPU before it runs: a
 * switch between threads (or processes on one VM) changes them. */
void proxy_ptrace_load_debugregs(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    if (!t)
        return;
    bool step = t->pt.tracer && t->pt.dr_stepped &&
                (t->pt.dr[7] & DR7_ENABLE_BITS);
    if (step || t->pt.sw_tf) {
        struct vmm_regs *r = vmm_vm_regs(p->vm);
        if (step)
            r->rflags |= RFLAGS_TF;
        else if (!t->pt.step_tf)
            r->rflags &= ~RFLAGS_TF;
        t->pt.sw_tf = step;
        if (step)
            return;
    }
    uint64_t dr7 = t->pt.tracer ? t->pt.dr[7] : 0;
    bool armed = p->dr_loaded_vm == p->vm && p->dr_loaded[4] != 0;
    if (dr7 == 0 && !armed) /* a fresh VM has none armed */
        return;
    if (armed && p->dr_loaded[4] == dr7 &&
        memcmp(p->dr_loaded, t->pt.dr, 32) == 0)
        return;
    static const uint64_t none[4];
    /* A backend without them armed nothing (POKEUSER said EIO). */
    (void)vmm_vm_set_debugregs(p->vm, dr7 ? t->pt.dr : none, dr7);
    memcpy(p->dr_loaded, dr7 ? t->pt.dr : none, 32);
    p->dr_loaded[4] = dr7;
    p->dr_loaded_vm = p->vm;
}

bool proxy_ptrace_signal_stop(struct proxy_process *p, int sig,
                              const siginfo_t *info, unsigned vector)
{
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer || sig == SIGKILL || dying(p))
        return false;
    siginfo_t si = *info;
    if (vector == 1 && (t->pt.dr[7] & DR7_ENABLE_BITS))
        hw_breakpoint_hit(p, t, &si);
    if (vector == 1 && t->pt.step_tf)
        step_trapped(p, t);
    if (vector)
        t->pt.orig_rax = -1; /* an exception is no syscall */
    /* A transfer parked part way returns its count before the stop,
     * whatever the tracer does with the signal: its exit stop first. */
    if (proxy_xfer_end_parked(p, t) && t->pt.entry_done) {
        t->pt.entry_done = t->pt.rerun_tried = false;
        if (t->pt.resume == PROXY_PT_SYSCALL) {
            proxy_signal_raise_thread(p, p->tid, sig, info);
            t->pt.msg = EVENTMSG_SYSCALL_EXIT;
            trap_info(p, t, syscall_trap_sig(t));
            enter_stop(p, t, PROXY_PT_SYSCALL_EXIT, syscall_trap_sig(t), 0);
            return true;
        }
    }
    /* A blocked call the signal interrupts ends first: its exit stop
     * (-ERESTARTSYS, -ERESTARTNOHAND), then this signal's stop; delivered,
     * the signal makes it EINTR or restarts it (a new entry stop). */
    if (t->restartable && t->pt.entry_done) {
        t->pt.entry_done = t->pt.rerun_tried = false;
        if (t->pt.resume == PROXY_PT_SYSCALL) {
            proxy_signal_raise_thread(p, p->tid, sig, info);
            t->pt.interrupted = true;
            t->pt.msg = EVENTMSG_SYSCALL_EXIT;
            trap_info(p, t, syscall_trap_sig(t));
            enter_stop(p, t, PROXY_PT_SYSCALL_EXIT, syscall_trap_sig(t), 0);
            return true;
        }
    }
    t->pt.info = si;
    enter_stop(p, t, PROXY_PT_SIGNAL, sig, 0);
    return true;
}

bool proxy_ptrace_group_stop(struct proxy_process *p, int sig)
{
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer)
        return false;
    /* A group-stop has no siginfo (GETSIGINFO: EINVAL). */
    memset(&t->pt.info, 0, sizeof(t->pt.info));
    enter_stop(p, t, PROXY_PT_GROUP, sig,
               t->pt.seized ? PTRACE_EVENT_STOP : 0);
    return true;
}

bool proxy_ptrace_before_user(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer || dying(p))
        return false;
    if (t->pt.event_pending) {
        int ev = t->pt.event_pending;
        t->pt.event_pending = 0;
        if (ev == PTRACE_EVENT_STOP) {
            trap_info(p, t, SIGTRAP | ev << 8);
            enter_stop(p, t, PROXY_PT_GROUP, SIGTRAP, ev);
        } else {
            event_stop(p, t, ev, t->pt.event_msg);
        }
        return true;
    }
    if (t->pt.in_syscall) {
        t->pt.in_syscall = false;
        if (t->pt.resume == PROXY_PT_SYSCALL) {
            t->pt.msg = EVENTMSG_SYSCALL_EXIT;
            trap_info(p, t, syscall_trap_sig(t));
            enter_stop(p, t, PROXY_PT_SYSCALL_EXIT, syscall_trap_sig(t), 0);
            return true;
        }
        if (t->pt.step_tf && t->pt.resume != PROXY_PT_SYSEMU_STEP) {
            /* A single step over a SYSCALL instruction traps after it
             * (user_single_step_report: TRAP_BRKPT); under
             * SYSEMU_SINGLESTEP its entry stop was the report. */
            step_trapped(p, t);
            t->pt.info = user_info(SIGTRAP, NULL, p);
            t->pt.info.si_code = TRAP_BRKPT;
            enter_stop(p, t, PROXY_PT_SIGNAL, SIGTRAP, 0);
            return true;
        }
    }
    if (t->pt.inject) {
        int sig = t->pt.inject;
        siginfo_t info = t->pt.inject_info;
        t->pt.inject = 0;
        proxy_signal_deliver_now(p, sig, &info);
        /* It stopped (a stop signal's group-stop) or died. */
        return p->exited || p->threads[p->cur].state != PROXY_THREAD_RUNNABLE;
    }
    return false;
}

bool proxy_ptrace_call_first(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer || !t->pt.entry_done || dying(p))
        return false;
    if (!t->restartable)
        return true; /* parked by its entry stop */
    if (t->pt.rerun_tried)
        return false;
    t->pt.rerun_tried = true;
    return true;
}

/* The group-stop a seized tracee is in ended (SIGCONT): it reports a
 * PTRACE_EVENT_STOP with SIGTRAP (do_jobctl_trap). */
static void retrap_continued(struct proxy_process *q, struct proxy_thread *t)
{
    t->pt.listening = t->pt.cont_notify = false;
    trap_info(q, t, SIGTRAP | PTRACE_EVENT_STOP << 8);
    enter_stop(q, t, PROXY_PT_GROUP, SIGTRAP, PTRACE_EVENT_STOP);
}

void proxy_ptrace_continued(struct proxy_process *p)
{
    for (int k = 0; p->threads && k < p->nr_threads; k++) {
        struct proxy_thread *t = &p->threads[k];
        if (t->state != PROXY_THREAD_PTRACE_STOP ||
            t->pt.stop != PROXY_PT_GROUP || !t->pt.seized)
            continue;
        if (t->pt.listening)
            retrap_continued(p, t);
        else
            t->pt.cont_notify = true;
    }
}

void proxy_ptrace_kill_wakes(struct proxy_process *p)
{
    for (int k = 0; p->threads && k < p->nr_threads; k++) {
        struct proxy_thread *t = &p->threads[k];
        if (t->state == PROXY_THREAD_PTRACE_STOP) {
            /* back to its wait, if stopped in one: SIGKILL ends that */
            t->state = t->pt.in_place ? t->pt.saved_state
                                      : PROXY_THREAD_RUNNABLE;
            t->pt.in_place = false;
            t->pt.stop = PROXY_PT_NONE;
            t->pt.inject = 0;
        }
    }
}

/* ---- processes coming and going -------------------------------------------- */

void proxy_ptrace_on_clone(struct proxy_process *p, struct proxy_process *c,
                           struct proxy_thread *ct, uint64_t flags)
{
    memset(&ct->pt, 0, sizeof(ct->pt));
    ct->pt.orig_rax = -1;
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer || (flags & CLONE_UNTRACED))
        return;
    int event;
    uint32_t option;
    if (flags & CLONE_VFORK) {
        event = PTRACE_EVENT_VFORK;
        option = PTRACE_O_TRACEVFORK;
    } else if ((flags & CSIGNAL) == SIGCHLD && !(flags & CLONE_THREAD)) {
        event = PTRACE_EVENT_FORK;
        option = PTRACE_O_TRACEFORK;
    } else {
        event = PTRACE_EVENT_CLONE;
        option = PTRACE_O_TRACECLONE;
    }
    if (!(t->pt.options & option))
        return;
    ct->pt.tracer = t->pt.tracer;
    ct->pt.seized = t->pt.seized;
    ct->pt.options = t->pt.options;
    /* The child's first stop: PTRACE_EVENT_STOP when seized, else a
     * SIGSTOP (ptrace_init_task). */
    if (ct->pt.seized) {
        ct->pt.event_pending = PTRACE_EVENT_STOP;
    } else {
        siginfo_t info = user_info(SIGSTOP, NULL, c);
        int ctid = c == p ? ct->tid : c->pid;
        proxy_signal_raise_thread(c, ctid, SIGSTOP, &info);
    }
    struct proxy_process *tr = proxy_world_find(p->world, t->pt.tracer);
    t->pt.event_pending = event;
    t->pt.event_msg = tr ? (uint64_t)seen_id(tr, c, ct) : 0;
}

void proxy_ptrace_on_exec(struct proxy_process *p, int old_tid)
{
    struct proxy_thread *t = current_thread(p);
    if (!t || !t->pt.tracer)
        return;
    memset(t->pt.dr, 0, sizeof(t->pt.dr)); /* flush_ptrace_hw_breakpoint */
    t->pt.step_tf = false;
    if (t->pt.options & PTRACE_O_TRACEEXEC) {
        struct proxy_process *tr = proxy_world_find(p->world, t->pt.tracer);
        t->pt.event_pending = PTRACE_EVENT_EXEC;
        t->pt.event_msg = old_tid == p->pid && tr
                              ? (uint64_t)proxy_ns_pid_of(tr, p)
                              : (uint64_t)old_tid;
        return;
    }
    /* The legacy SIGTRAP after a traced execve. */
    siginfo_t info = user_info(SIGTRAP, NULL, p);
    proxy_signal_raise_thread(p, p->tid, SIGTRAP, &info);
}

void proxy_ptrace_vfork_started(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    /* Left for before_user, the event would wait for the child's exec or
     * exit, and be overwritten by VFORK_DONE: the tracer's wait for it
     * never returned. */
    if (!t || t->pt.event_pending != PTRACE_EVENT_VFORK)
        return;
    t->pt.event_pending = 0;
    t->pt.saved_state = t->state; /* PROXY_THREAD_WAIT_VFORK */
    t->pt.in_place = true;
    event_stop(p, t, PTRACE_EVENT_VFORK, t->pt.event_msg);
}

void proxy_ptrace_vfork_done(struct proxy_process *p, struct proxy_thread *t,
                             int child_pid)
{
    if (!t->pt.tracer || !(t->pt.options & PTRACE_O_TRACEVFORKDONE))
        return;
    struct proxy_process *tr = proxy_world_find(p->world, t->pt.tracer);
    struct proxy_process *c = proxy_world_find(p->world, child_pid);
    t->pt.event_pending = PTRACE_EVENT_VFORK_DONE;
    t->pt.event_msg = tr && c ? (uint64_t)proxy_ns_pid_of(tr, c)
                              : (uint64_t)child_pid;
}

/* The thread whose exit a tracer is told: the main one. */
static struct proxy_thread *main_thread(struct proxy_process *p)
{
    for (int k = 0; p->threads && k < p->nr_threads; k++)
        if (tid_of(p, &p->threads[k]) == p->pid)
            return &p->threads[k];
    return current_thread(p);
}

/* A traced zombie thread for its tracer's wait to reap (status: a wait
 * status), its tracer told with SIGCHLD. */
static void make_thread_zombie(struct proxy_process *p, struct proxy_thread *t,
                               int status)
{
    int tracer = t->pt.tracer;
    t->tid = tid_of(p, t); /* what its tracer's wait names after it is gone */
    untrace(p, t);
    t->pt.tracer = tracer;
    t->pt.exit_unreaped = true;
    t->pt.status = status;
    bool signaled = (status & 0x7f) != 0;
    notify_tracer(p, t, signaled ? CLD_KILLED : CLD_EXITED,
                  signaled ? (status & 0x7f) : ((status >> 8) & 0xff));
}

/* exit_group or a fatal signal: each traced thread but the leader dies
 * with the group and is its tracer's to reap, before the leader is
 * reported (Linux's delay_group_leader). */
static void threads_exit_with_group(struct proxy_process *p,
                                    struct proxy_thread *leader)
{
    for (int k = 0; p->threads && k < p->nr_threads; k++) {
        struct proxy_thread *t = &p->threads[k];
        if (t != leader && t->pt.tracer && !t->pt.exit_unreaped &&
            t->state != PROXY_THREAD_EXITED)
            make_thread_zombie(p, t, p->exit_status);
    }
}

bool proxy_ptrace_exit(struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    /* Its tracees are let go; EXITKILL ones killed. Zombies it had still
     * to be told of go to their parents. */
    struct proxy_process *released[64];
    int nr_released = 0;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (q == p)
            continue;
        if (q->zombie) {
            if (q->ptrace_exit_tracer == p->pid && nr_released < 64) {
                q->ptrace_exit_tracer = 0;
                released[nr_released++] = q;
            }
            continue;
        }
        for (int k = 0; q->threads && k < q->nr_threads; k++) {
            struct proxy_thread *t = &q->threads[k];
            if (t->pt.tracer != p->pid)
                continue;
            bool kill = t->pt.options & PTRACE_O_EXITKILL;
            untrace(q, t);
            if (kill) {
                siginfo_t info = user_info(SIGKILL, NULL, q);
                proxy_signal_raise(q, SIGKILL, &info);
            }
        }
    }
    for (int i = 0; i < nr_released; i++)
        proxy_process_notify_parent(released[i]);
    struct proxy_thread *t = main_thread(p);
    threads_exit_with_group(p, t);
    if (!t || !t->pt.tracer)
        return false;
    int tracer = t->pt.tracer;
    struct proxy_process *tr = proxy_world_find(w, tracer);
    bool to_tracer = tr && !tr->zombie && tracer != p->ppid;
    if (to_tracer) {
        p->ptrace_exit_tracer = tracer;
        bool signaled = (p->exit_status & 0x7f) != 0;
        notify_tracer(p, t, signaled ? CLD_KILLED : CLD_EXITED,
                      signaled ? (p->exit_status & 0x7f)
                               : ((p->exit_status >> 8) & 0xff));
    }
    for (int k = 0; k < p->nr_threads; k++)
        if (!p->threads[k].pt.exit_unreaped)
            memset(&p->threads[k].pt, 0, sizeof(p->threads[k].pt));
    return to_tracer;
}

void proxy_ptrace_thread_exit(struct proxy_process *p, int code)
{
    struct proxy_thread *t = current_thread(p);
    if (!t->pt.tracer)
        return;
    if (p->tid == p->pid)
        return; /* a leader's exit is its group's (delay_group_leader):
                   proxy_ptrace_exit reports it, the tracer kept */
    make_thread_zombie(p, t, (code & 0xff) << 8);
}

bool proxy_ptrace_exit_hidden(const struct proxy_process *p)
{
    return p->ptrace_exit_tracer != 0;
}

/* ---- wait ------------------------------------------------------------------ */

/* A wait's pid (a run pid, -1, 0 or -pgid as wait_target made it). */
static bool wait_matches(const struct proxy_process *p,
                         const struct proxy_process *q, int tid, int pid)
{
    if (pid > 0)
        return tid == pid;
    if (pid == 0)
        return q->pgid == p->pgid;
    if (pid < -1)
        return q->pgid == -pid;
    return true;
}

/* __WCLONE waits for clone children only, neither for the others; __WALL
 * for both (eligible_child). A non-main thread counts as a clone child. */
static bool wait_kind_matches(int options, bool is_thread)
{
    if (options & __WALL)
        return true;
    return is_thread == ((options & __WCLONE) != 0);
}

static void exit_info(siginfo_t *info, const struct proxy_process *viewer,
                      const struct proxy_process *q)
{
    bool signaled = (q->exit_status & 0x7f) != 0;
    memset(info, 0, sizeof(*info));
    info->si_signo = SIGCHLD;
    info->si_pid = proxy_ns_pid_of(viewer, q);
    info->si_uid = q->cred.ruid;
    info->si_code = !signaled                   ? CLD_EXITED
                    : (q->exit_status & 0x80) ? CLD_DUMPED
                                              : CLD_KILLED;
    info->si_status = signaled ? (q->exit_status & 0x7f)
                               : ((q->exit_status >> 8) & 0xff);
}

/* A zombie thread of q traced by p (proxy_thread_exit, a group's exit)
 * that a wait for pid with options may reap, or NULL; *any when q has one
 * for p whatever the options. */
static struct proxy_thread *zombie_thread(const struct proxy_process *p,
                                          struct proxy_process *q, int pid,
                                          int options, bool *any)
{
    for (int k = 0; q->threads && k < q->nr_threads; k++) {
        struct proxy_thread *t = &q->threads[k];
        if (!t->pt.exit_unreaped || t->pt.tracer != p->pid ||
            !wait_matches(p, q, t->tid, pid) ||
            !wait_kind_matches(options, t->tid != q->pid))
            continue;
        *any = true;
        if (options & WEXITED)
            return t;
    }
    return NULL;
}

static void reap_thread(struct proxy_process *p, struct proxy_process *q,
                        struct proxy_thread *t, bool nowait, int *status,
                        siginfo_t *info, int *who)
{
    bool signaled = (t->pt.status & 0x7f) != 0;
    if (status)
        *status = t->pt.status;
    if (info) {
        memset(info, 0, sizeof(*info));
        info->si_signo = SIGCHLD;
        info->si_code = signaled ? CLD_KILLED : CLD_EXITED;
        info->si_pid = t->tid;
        info->si_uid = q->cred.ruid;
        info->si_status = signaled ? (t->pt.status & 0x7f)
                                   : ((t->pt.status >> 8) & 0xff);
    }
    if (who)
        *who = t->tid;
    if (!nowait)
        memset(&t->pt, 0, sizeof(t->pt)); /* reaped */
}

int proxy_ptrace_wait(struct proxy_process *p, int pid, int options,
                      bool nowait, int *status, siginfo_t *info, int *who)
{
    struct proxy_world *w = p->world;
    bool any = false;
    for (int i = 0; w && i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        struct proxy_thread *zt = zombie_thread(p, q, pid, options, &any);
        if (zt) {
            reap_thread(p, q, zt, nowait, status, info, who);
            return 1;
        }
        if (q->zombie) {
            if (q->ptrace_exit_tracer != p->pid ||
                !wait_matches(p, q, q->pid, pid) ||
                !wait_kind_matches(options, false))
                continue;
            any = true;
            if (!(options & WEXITED))
                continue;
            if (status)
                *status = q->exit_status;
            if (info)
                exit_info(info, p, q);
            if (who)
                *who = proxy_ns_pid_of(p, q);
            if (!nowait) {
                q->ptrace_exit_tracer = 0;
                proxy_process_notify_parent(q); /* now its parent's */
            }
            return 1;
        }
        for (int k = 0; q->threads && k < q->nr_threads; k++) {
            struct proxy_thread *t = &q->threads[k];
            int tid = tid_of(q, t);
            if (t->pt.tracer != p->pid || t->state == PROXY_THREAD_EXITED ||
                t->pt.exit_unreaped || !wait_matches(p, q, tid, pid) ||
                !wait_kind_matches(options, tid != q->pid))
                continue;
            any = true;
            /* A tracer is told of stops whatever WUNTRACED says. */
            if (t->state != PROXY_THREAD_PTRACE_STOP || t->pt.reported)
                continue;
            if (status)
                *status = t->pt.status;
            if (info) {
                memset(info, 0, sizeof(*info));
                info->si_signo = SIGCHLD;
                info->si_code = CLD_TRAPPED;
                info->si_pid = seen_id(p, q, t);
                info->si_uid = q->cred.ruid;
                info->si_status = (t->pt.status >> 8) & 0x7f;
            }
            if (who)
                *who = seen_id(p, q, t);
            if (!nowait)
                t->pt.reported = true;
            return 1;
        }
    }
    return any ? 0 : -1;
}

bool proxy_ptrace_has_event(struct proxy_process *p, int options)
{
    return proxy_ptrace_wait(p, -1, options | WEXITED, true, NULL, NULL,
                             NULL) == 1;
}

/* ---- tracee memory ----------------------------------------------------------- */

/* A word of tracee memory (FOLL_FORCE: read-only text too). */
static long peek_word(struct proxy_process *q, gva_t addr, uint64_t *val)
{
    return proxy_mem_read_forced(q, addr, val, 8) < 0 ? -EIO : 0;
}

/* Reads tracee memory as FOLL_FORCE does: a mapping the tracee may not
 * read (PROT_NONE) too, but a special one ([vvar]) only as it may read
 * it. Page by page; 0 or -EFAULT. */
int proxy_mem_read_forced(struct proxy_process *q, gva_t addr, void *dst,
                          size_t len)
{
    uint8_t *d = dst;
    while (len > 0) {
        size_t in_page = VMM_PAGE_SIZE - (addr & (VMM_PAGE_SIZE - 1));
        size_t n = len < in_page ? len : in_page;
        struct vmm_vma *v = vmm_as_find_vma(q->as, addr);
        if (!v || (v->flags & VMM_VMA_SECRET)) /* no page to get */
            return -EFAULT;
        int rc = v->flags & VMM_VMA_SPECIAL ? vmm_as_copy_in(q->as, d, addr, n)
                                             : vmm_as_peek(q->as, d, addr, n);
        if (rc < 0)
            return -EFAULT;
        addr += n;
        d += n;
        len -= n;
    }
    return 0;
}

/* Writes bytes into tracee memory as FOLL_FORCE does (check_vma_flags):
 * a writable mapping as it is; one the tracee may not write only when it
 * is a private (COW) mapping, PROT_NONE too (a breakpoint into text: the
 * tracee's copy changes, never the file); a shared one or a special one
 * ([vvar], hvrun's [hvrun-tsc] pages) is -EFAULT. Page by page. */
int proxy_mem_write_forced(struct proxy_process *q, gva_t addr,
                           const void *src, size_t len)
{
    const uint8_t *s = src;
    /* a breakpoint in a loop whose body runs from a copy (mm/progress.c) */
    proxy_hooks.progress_written(q, addr, len);
    while (len > 0) {
        size_t in_page = VMM_PAGE_SIZE - (addr & (VMM_PAGE_SIZE - 1));
        size_t n = len < in_page ? len : in_page;
        struct vmm_vma *v = vmm_as_find_vma(q->as, addr);
        if (!v || (v->flags & VMM_VMA_SECRET))
            return -EFAULT;
        int rc;
        if (v->prot & PROT_WRITE)
            rc = vmm_as_copy_out(q->as, addr, s, n);
        else if (!v->shared && !(v->flags & VMM_VMA_SPECIAL))
            rc = vmm_as_poke(q->as, addr, s, n);
        else
            rc = -EFAULT;
        if (rc < 0)
            return -EFAULT;
        addr += n;
        s += n;
        len -= n;
    }
    return 0;
}

/* ---- resuming ------------------------------------------------------------------ */

static void resume(struct proxy_process *p, struct proxy_process *q,
                   struct proxy_thread *t, enum proxy_pt_resume how, int sig)
{
    struct vmm_regs *r = regs_of(q, t);
    t->pt.resume = how;
    if (how == PROXY_PT_STEP || how == PROXY_PT_SYSEMU_STEP) {
        r->rflags |= RFLAGS_TF;
        t->pt.step_tf = true;
    } else if (t->pt.step_tf) {
        r->rflags &= ~RFLAGS_TF;
        t->pt.step_tf = false;
    }
    if (sig) {
        siginfo_t info = t->pt.info;
        if (t->pt.stop != PROXY_PT_SIGNAL || info.si_signo != sig)
            info = user_info(sig, p, q);
        if (t->pt.stop == PROXY_PT_SIGNAL) {
            t->pt.inject = sig;
            t->pt.inject_info = info;
        } else if (t->pt.stop == PROXY_PT_SYSCALL_ENTER ||
                   t->pt.stop == PROXY_PT_SYSCALL_EXIT) {
            /* Sent as a new signal (ptrace_report_syscall). */
            proxy_signal_raise_thread(q, tid_of(q, t), sig, &info);
        } /* at an event or group-stop it is ignored */
    }
    t->pt.stop = PROXY_PT_NONE;
    t->pt.listening = t->pt.cont_notify = false;
    t->pt.interrupted = false;
    t->state = PROXY_THREAD_RUNNABLE;
    if (t->pt.in_place) {
        /* Back to the wait it was stopped in; a signal the tracer gave
         * is sent to it, and wakes it as any would. */
        t->pt.in_place = false;
        t->state = t->pt.saved_state;
        if (t->pt.inject) {
            proxy_signal_raise_thread(q, tid_of(q, t), t->pt.inject,
                                      &t->pt.inject_info);
            t->pt.inject = 0;
        }
    }
}

/* A tracee that waits in a call stops where it is (Linux wakes it into the
 * stop; the call goes on after). */
static bool waits_in_call(const struct proxy_thread *t)
{
    return t->state != PROXY_THREAD_RUNNABLE &&
           t->state != PROXY_THREAD_EXITED &&
           t->state != PROXY_THREAD_PTRACE_STOP;
}

static void stop_in_place(struct proxy_process *q, struct proxy_thread *t,
                          enum proxy_pt_stop stop, int sig, int event)
{
    t->pt.saved_state = t->state;
    t->pt.in_place = true;
    enter_stop(q, t, stop, sig, event);
}

/* ---- requests ------------------------------------------------------------------ */

static long traceme(struct proxy_process *p)
{
    struct proxy_thread *t = current_thread(p);
    struct proxy_process *parent = proxy_world_find(p->world, p->ppid);
    if (t->pt.tracer || !parent || parent->zombie)
        return -EPERM;
    memset(&t->pt, 0, sizeof(t->pt));
    t->pt.orig_rax = SYS_ptrace;
    t->pt.tracer = parent->pid;
    proxy_hooks.cpuid_traced(p);
    return 0;
}

/* The live thread with this id in p's view, and its process. */
static struct proxy_thread *find_thread(struct proxy_process *p, int id,
                                        struct proxy_process **qp)
{
    struct proxy_world *w = p->world;
    for (int i = 0; id > 0 && i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (q->zombie || q->exited)
            continue;
        for (int k = 0; k < q->nr_threads; k++) {
            struct proxy_thread *t = &q->threads[k];
            if (t->state != PROXY_THREAD_EXITED && seen_id(p, q, t) == id) {
                *qp = q;
                return t;
            }
        }
    }
    return NULL;
}

bool proxy_ptrace_may_access(const struct proxy_process *p,
                             const struct proxy_process *q)
{
    if (p == q || p->cred.euid == 0)
        return true;
    return q->prctl.dumpable && q->cred.ruid == p->cred.ruid &&
           q->cred.euid == p->cred.ruid && q->cred.suid == p->cred.ruid &&
           q->cred.rgid == p->cred.rgid && q->cred.egid == p->cred.rgid &&
           q->cred.sgid == p->cred.rgid;
}

static bool may_attach(const struct proxy_process *p,
                       const struct proxy_process *q)
{
    return proxy_ptrace_may_access(p, q);
}

static long attach(struct proxy_process *p, long req, int id, uint64_t addr,
                   uint64_t data)
{
    bool seize = req == PTRACE_SEIZE;
    if (seize && (addr != 0 || (data & ~(uint64_t)PT_OPTIONS_VALID)))
        return -EIO;
    struct proxy_process *q;
    struct proxy_thread *t = find_thread(p, id, &q);
    if (!t)
        return -ESRCH;
    if (q == p || t->pt.tracer || !may_attach(p, q))
        return -EPERM;
    memset(&t->pt, 0, sizeof(t->pt));
    t->pt.orig_rax = -1;
    t->pt.tracer = p->pid;
    proxy_hooks.cpuid_traced(q);
    t->pt.seized = seize;
    t->pt.options = seize ? (uint32_t)data : 0;
    if (q->stopped) {
        /* Already in a group-stop: it is reported to the tracer as one
         * (JOBCTL_TRAP_STOP), and it is the tracer's to resume. */
        q->stopped = false;
        memset(&t->pt.info, 0, sizeof(t->pt.info));
        enter_stop(q, t, PROXY_PT_GROUP, q->stop_sig,
                   seize ? PTRACE_EVENT_STOP : 0);
        return 0;
    }
    if (!seize) {
        siginfo_t info = user_info(SIGSTOP, p, q);
        if (waits_in_call(t)) { /* its SIGSTOP's delivery, where it waits */
            t->pt.info = info;
            stop_in_place(q, t, PROXY_PT_SIGNAL, SIGSTOP, 0);
        } else {
            proxy_signal_raise_thread(q, tid_of(q, t), SIGSTOP, &info);
        }
    }
    return 0;
}

struct syscall_info_abi {
    uint8_t op;
    uint8_t pad[3];
    uint32_t arch;
    uint64_t instruction_pointer, stack_pointer;
    union {
        struct { uint64_t nr, args[6]; } entry;
        struct { int64_t rval; uint8_t is_error; } exit;
        struct { uint64_t nr, args[6]; uint32_t ret_data; } seccomp;
    };
};

static long get_syscall_info(struct proxy_process *p, struct proxy_process *q,
                             struct proxy_thread *t, uint64_t size, gva_t out)
{
    struct syscall_info_abi si;
    memset(&si, 0, sizeof(si));
    struct user_regs_struct u;
    proxy_ptrace_get_user_regs(q, t, &u);
    si.arch = AUDIT_ARCH_X86_64_ID;
    si.instruction_pointer = u.rip;
    si.stack_pointer = u.rsp;
    size_t actual = offsetof(struct syscall_info_abi, entry);
    uint64_t args[6] = {u.rdi, u.rsi, u.rdx, u.r10, u.r8, u.r9};
    if (t->pt.stop == PROXY_PT_SYSCALL_ENTER) {
        si.op = PTRACE_SYSCALL_INFO_ENTRY;
        si.entry.nr = u.orig_rax;
        memcpy(si.entry.args, args, sizeof(args));
        actual = offsetof(struct syscall_info_abi, entry.args) + sizeof(args);
    } else if (t->pt.stop == PROXY_PT_EVENT &&
               (t->pt.status >> 16) == PTRACE_EVENT_SECCOMP) {
        si.op = PTRACE_SYSCALL_INFO_SECCOMP;
        si.seccomp.nr = u.orig_rax;
        memcpy(si.seccomp.args, args, sizeof(args));
        si.seccomp.ret_data = (uint32_t)t->pt.msg;
        actual = offsetof(struct syscall_info_abi, seccomp.ret_data) +
                 sizeof(si.seccomp.ret_data);
    } else if (t->pt.stop == PROXY_PT_SYSCALL_EXIT) {
        si.op = PTRACE_SYSCALL_INFO_EXIT;
        si.exit.rval = (int64_t)u.rax;
        si.exit.is_error = si.exit.rval < 0 && si.exit.rval >= -4095;
        actual = offsetof(struct syscall_info_abi, exit.is_error) + 1;
    }
    size_t n = size < actual ? (size_t)size : actual;
    if (n && proxy_copy_out(p, out, &si, n) < 0)
        return -EFAULT;
    return (long)actual;
}

/* PTRACE_GETREGSET / SETREGSET: NT_PRSTATUS, NT_PRFPREG, NT_X86_XSTATE. */
static long regset(struct proxy_process *p, struct proxy_process *q,
                   struct proxy_thread *t, bool set, uint64_t type,
                   gva_t iov_gva)
{
    struct iovec iov;
    if (proxy_copy_in(p, &iov, iov_gva, sizeof(iov)) < 0)
        return -EFAULT;
    uint8_t buf[VMM_XSAVE_MAX_BYTES];
    size_t size;
    switch (type) {
    case NT_PRSTATUS: size = sizeof(struct user_regs_struct); break;
    case NT_PRFPREG: size = sizeof(struct user_fpregs_struct); break;
    case NT_X86_XSTATE: size = vmm_vm_xsave_bytes(q->vm); break;
    default: return -EINVAL;
    }
    size_t n = iov.iov_len < size ? iov.iov_len : size;
    long rc;
    if (!set) {
        if (type == NT_PRSTATUS)
            proxy_ptrace_get_user_regs(q, t, (struct user_regs_struct *)(void *)buf);
        else if ((rc = proxy_ptrace_get_xstate(q, t, buf)) < 0)
            return rc;
        if (proxy_copy_out(p, (gva_t)(uintptr_t)iov.iov_base, buf, n) < 0)
            return -EFAULT;
    } else {
        /* A short write of the general registers keeps the rest. */
        if (type == NT_PRSTATUS)
            proxy_ptrace_get_user_regs(q, t, (struct user_regs_struct *)(void *)buf);
        if (proxy_copy_in(p, buf, (gva_t)(uintptr_t)iov.iov_base, n) < 0)
            return -EFAULT;
        rc = type == NT_PRSTATUS
                 ? proxy_ptrace_set_user_regs(q, t, (struct user_regs_struct *)(void *)buf)
                 : proxy_ptrace_put_xstate(q, t, buf, 0, n);
        if (rc < 0)
            return rc;
    }
    iov.iov_len = n;
    return proxy_copy_out(p, iov_gva, &iov, sizeof(iov)) < 0 ? -EFAULT : 0;
}

static long regs_request(struct proxy_process *p, struct proxy_process *q,
                         struct proxy_thread *t, long req, gva_t data)
{
    uint8_t buf[VMM_XSAVE_MAX_BYTES];
    long rc;
    switch (req) {
    case PTRACE_GETREGS:
        proxy_ptrace_get_user_regs(q, t, (struct user_regs_struct *)(void *)buf);
        return proxy_copy_out(p, data, buf, sizeof(struct user_regs_struct));
    case PTRACE_SETREGS:
        if (proxy_copy_in(p, buf, data, sizeof(struct user_regs_struct)) < 0)
            return -EFAULT;
        return proxy_ptrace_set_user_regs(q, t, (struct user_regs_struct *)(void *)buf);
    case PTRACE_GETFPREGS:
        if ((rc = proxy_ptrace_get_xstate(q, t, buf)) < 0)
            return rc;
        return proxy_copy_out(p, data, buf, sizeof(struct user_fpregs_struct));
    case PTRACE_SETFPREGS:
        if (proxy_copy_in(p, buf, data, sizeof(struct user_fpregs_struct)) < 0)
            return -EFAULT;
        /* The legacy area only; xstate_bv's x87/SSE bits then say it is
         * in use, as fxsave's image would. */
        return proxy_ptrace_put_xstate(q, t, buf, 0, sizeof(struct user_fpregs_struct));
    }
    return -EIO;
}

static long info_request(struct proxy_process *p, struct proxy_thread *t,
                         long req, gva_t data)
{
    switch (req) {
    case PTRACE_GETSIGINFO:
        if (!t->pt.info.si_signo)
            return -EINVAL; /* a group-stop has none */
        return proxy_copy_out(p, data, &t->pt.info, sizeof(siginfo_t));
    case PTRACE_SETSIGINFO:
        if (!t->pt.info.si_signo)
            return -EINVAL;
        return proxy_copy_in(p, &t->pt.info, data, sizeof(siginfo_t));
    case PTRACE_GETEVENTMSG:
        return proxy_copy_out(p, data, &t->pt.msg, sizeof(t->pt.msg));
    case PTRACE_SETOPTIONS:
        if (data & ~(uint64_t)PT_OPTIONS_VALID)
            return -EINVAL;
        t->pt.options = (uint32_t)data;
        return 0;
    case PTRACE_GETSIGMASK:
    case PTRACE_SETSIGMASK:
        return -EINVAL; /* sized requests: see sigmask_request */
    }
    return -EIO;
}

static long sigmask_request(struct proxy_process *p, struct proxy_process *q,
                            struct proxy_thread *t, long req, uint64_t size,
                            gva_t data)
{
    if (size != 8)
        return -EINVAL;
    uint64_t *mask = on_vcpu(q, t) ? &q->sig.sigmask : &t->sigmask;
    if (req == PTRACE_GETSIGMASK)
        return proxy_copy_out(p, data, mask, 8);
    uint64_t m;
    if (proxy_copy_in(p, &m, data, 8) < 0)
        return -EFAULT;
    *mask = m & ~(SIGBIT(SIGKILL) | SIGBIT(SIGSTOP));
    return 0;
}

static long arch_prctl_request(struct proxy_process *p, struct proxy_process *q,
                               struct proxy_thread *t, uint64_t code,
                               gva_t data)
{
    struct user_regs_struct u;
    proxy_ptrace_get_user_regs(q, t, &u);
    switch (code) {
    case 0x1001: u.gs_base = data; return proxy_ptrace_set_user_regs(q, t, &u);
    case 0x1002: u.fs_base = data; return proxy_ptrace_set_user_regs(q, t, &u);
    case 0x1003: return proxy_copy_out(p, data, &u.fs_base, 8);
    case 0x1004: return proxy_copy_out(p, data, &u.gs_base, 8);
    }
    return -EINVAL;
}

static enum proxy_pt_resume resume_kind(long req)
{
    switch (req) {
    case PTRACE_SYSCALL: return PROXY_PT_SYSCALL;
    case PTRACE_SINGLESTEP: return PROXY_PT_STEP;
    case PTRACE_SYSEMU: return PROXY_PT_SYSEMU;
    case PTRACE_SYSEMU_SINGLESTEP: return PROXY_PT_SYSEMU_STEP;
    }
    return PROXY_PT_CONT;
}

/* Requests on a tracee in a ptrace-stop. */
static long stopped_request(struct proxy_process *p, struct proxy_process *q,
                            struct proxy_thread *t, long req, uint64_t addr,
                            uint64_t data)
{
    uint64_t word;
    long rc;
    switch (req) {
    case PTRACE_PEEKTEXT:
    case PTRACE_PEEKDATA:
        if ((rc = peek_word(q, addr, &word)) < 0)
            return rc;
        return proxy_copy_out(p, data, &word, 8);
    case PTRACE_POKETEXT:
    case PTRACE_POKEDATA:
        return proxy_mem_write_forced(q, addr, &data, 8) < 0 ? -EIO : 0;
    case PTRACE_PEEKUSR:
        if ((rc = proxy_ptrace_peek_user(q, t, addr, &word)) < 0)
            return rc;
        return proxy_copy_out(p, data, &word, 8);
    case PTRACE_POKEUSR:
        return proxy_ptrace_poke_user(q, t, addr, data);
    case PTRACE_GETREGS: case PTRACE_SETREGS:
    case PTRACE_GETFPREGS: case PTRACE_SETFPREGS:
        return regs_request(p, q, t, req, data);
    case PTRACE_GETREGSET:
    case PTRACE_SETREGSET:
        return regset(p, q, t, req == PTRACE_SETREGSET, addr, data);
    case PTRACE_GET_SYSCALL_INFO:
        return get_syscall_info(p, q, t, addr, data);
    case PTRACE_GETSIGMASK:
    case PTRACE_SETSIGMASK:
        return sigmask_request(p, q, t, req, addr, data);
    case PTRACE_ARCH_PRCTL:
        return arch_prctl_request(p, q, t, data, addr);
    case PTRACE_CONT:
    case PTRACE_SYSCALL:
    case PTRACE_SINGLESTEP:
    case PTRACE_SYSEMU:
    case PTRACE_SYSEMU_SINGLESTEP:
    case PTRACE_DETACH:
        if (data > 64)
            return -EIO;
        resume(p, q, t, resume_kind(req), (int)data);
        if (req == PTRACE_DETACH) {
            int inject = t->pt.inject;
            siginfo_t info = t->pt.inject_info;
            untrace(q, t);
            if (inject) /* still delivered, untraced */
                proxy_signal_raise_thread(q, tid_of(q, t), inject, &info);
        }
        return 0;
    case PTRACE_LISTEN:
        if (!t->pt.seized || t->pt.stop != PROXY_PT_GROUP)
            return -EIO;
        /* It stays stopped, and re-traps once the group-stop ends. */
        t->pt.listening = true;
        if (t->pt.cont_notify)
            retrap_continued(q, t);
        return 0;
    }
    return info_request(p, t, req, data);
}

static long sys_ptrace(struct proxy_process *p, const uint64_t a[6])
{
    long req = (long)a[0];
    int id = (int)a[1];
    proxy_log(p, 2, "[%d] ptrace request %#lx to %d, addr %#llx, data %#llx",
              p->tid, req, id, (unsigned long long)a[2],
              (unsigned long long)a[3]);
    if (req == PTRACE_TRACEME)
        return traceme(p);
    if (req == PTRACE_ATTACH || req == PTRACE_SEIZE)
        return attach(p, req, id, a[2], a[3]);
    struct proxy_process *q;
    struct proxy_thread *t = find_thread(p, id, &q);
    if (!t || t->pt.tracer != p->pid)
        return -ESRCH;
    if (req == PTRACE_KILL) {
        siginfo_t info = user_info(SIGKILL, p, q);
        proxy_signal_raise(q, SIGKILL, &info);
        return 0;
    }
    if (req == PTRACE_INTERRUPT) {
        if (!t->pt.seized)
            return -EIO;
        if (waits_in_call(t)) {
            trap_info(q, t, SIGTRAP | PTRACE_EVENT_STOP << 8);
            stop_in_place(q, t, PROXY_PT_GROUP, SIGTRAP, PTRACE_EVENT_STOP);
        } else if (t->state != PROXY_THREAD_PTRACE_STOP &&
                   !t->pt.event_pending) {
            t->pt.event_pending = PTRACE_EVENT_STOP;
        }
        return 0;
    }
    if (t->state != PROXY_THREAD_PTRACE_STOP)
        return -ESRCH;
    return stopped_request(p, q, t, req, a[2], a[3]);
}

const struct proxy_syscall proxy_ptrace_syscalls[] = {
    {SYS_ptrace, "ptrace", sys_ptrace},
    {-1, NULL, NULL},
};

