/*
 * ptrace.h - a guest tracing another guest (strace, gdb inside a run):
 * the per-thread tracing state proxy_thread embeds, and the points where
 * the rest of the proxy hands a traced thread to kernel/ptrace.c.
 */
#ifndef PROXY_PTRACE_H
#define PROXY_PTRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "proxy.h"
#include "kernel.h"

struct proxy_process;
struct proxy_thread;

/* Whether p's current thread is traced; whether any of its threads is. */
bool proxy_ptrace_traced(const struct proxy_process *p);
bool proxy_ptrace_process_traced(const struct proxy_process *p);

/* Before p's current thread runs user code (world.c): a stop that is due
 * (an event, a syscall exit, a signal the tracer gave). true: it stopped
 * (or took a signal that ended it); do not run it now. */
bool proxy_ptrace_before_user(struct proxy_process *p);

/* Whether the current thread makes the call it is in again before any
 * signal is delivered: one its entry stop parked (Linux has it inside the
 * call), or a blocked one just woken, once (it may complete, as on Linux,
 * before the signal; blocked again, the signal interrupts it). */
bool proxy_ptrace_call_first(struct proxy_process *p);

/* At a syscall of a traced thread, before dispatch: true when it stopped
 * (the call re-runs when the tracer lets it go on). *skip_result set and
 * true returned through skip: the tracer cancelled the call. */
bool proxy_ptrace_syscall_entry(struct proxy_process *p, bool *skip,
                                long *skip_result);

/* After dispatch; ret as the handler returned it. */
void proxy_ptrace_syscall_done(struct proxy_process *p, long ret);

/* A signal about to be delivered to p's current thread (dequeued, or a
 * fault's): true when the thread stopped for its tracer instead. */
bool proxy_ptrace_signal_stop(struct proxy_process *p, int sig,
                              const siginfo_t *info, unsigned vector);

/* A stop signal's default action on a traced process: a group-stop the
 * tracer sees; true when so handled. */
bool proxy_ptrace_group_stop(struct proxy_process *p, int sig);

/* A #DB of p's current thread: true when it was only a step of the
 * breakpoints kept by single-stepping and nothing fired (it goes on). */
bool proxy_ptrace_stepped_dr_only(struct proxy_process *p);

/* Before p's current thread runs: its hardware breakpoints (the tracer's
 * DR0-DR3, DR7) on the VM's vCPU (world.c). */
void proxy_ptrace_load_debugregs(struct proxy_process *p);

/* SIGCONT sent to p: its seized group-stopped threads re-trap
 * (PTRACE_EVENT_STOP) now if listening, else at PTRACE_LISTEN. */
void proxy_ptrace_continued(struct proxy_process *p);

/* SIGKILL sent to p: its threads stopped for a tracer go on to die. */
void proxy_ptrace_kill_wakes(struct proxy_process *p);

/* fork/vfork/clone by p's current thread made child thread ct of c
 * (c == p for a thread): auto-attach and the event, per the options. */
void proxy_ptrace_on_clone(struct proxy_process *p, struct proxy_process *c,
                           struct proxy_thread *ct, uint64_t flags);

/* execve succeeded in p (its current thread is the new image's). */
void proxy_ptrace_on_exec(struct proxy_process *p, int old_tid);

/* p's current thread, now waiting for its vfork child, takes the
 * PTRACE_EVENT_VFORK stop first, as Linux's kernel_clone reports it before
 * wait_for_vfork_done: its tracer sees it while the child runs, and the
 * wait goes on when the tracer lets the thread go. */
void proxy_ptrace_vfork_started(struct proxy_process *p);

/* A vfork child released p's thread t. */
void proxy_ptrace_vfork_done(struct proxy_process *p, struct proxy_thread *t,
                             int child_pid);

/* SECCOMP_RET_TRACE with data for p's current thread's call: 1 when its
 * tracer (PTRACE_O_TRACESECCOMP) gets PTRACE_EVENT_SECCOMP now (the call
 * waits, then runs again), 0 when the tracer has seen it (the call goes
 * on), -1 when no such tracer (the call fails with ENOSYS). */
int proxy_ptrace_seccomp_trace(struct proxy_process *p, uint32_t data);

/* p's current thread exits alone (exit(2), others live on) with code:
 * traced and not the leader, it is its tracer's zombie to reap. */
void proxy_ptrace_thread_exit(struct proxy_process *p, int code);

/* p exits: its tracees are let go (EXITKILL: killed); and p, if traced
 * by another than its parent, is that tracer's to report first (true). */
bool proxy_ptrace_exit(struct proxy_process *p);

/* wait4, waitid: a stop or exit of a tracee of p matching pid (a run pid,
 * -1, or -pgid) that a wait with options may report. Returns 1 and fills
 * status, info and who (the tracee's id as p sees it), consuming it unless
 * nowait; 0 when p has tracees but none to report; -1 when it has none. */
int proxy_ptrace_wait(struct proxy_process *p, int pid, int options,
                      bool nowait, int *status, siginfo_t *info, int *who);

/* Whether a tracee of p has something for a wait with these options. */
bool proxy_ptrace_has_event(struct proxy_process *p, int options);

/* Whether p's parent must not see its exit yet (its tracer first). */
bool proxy_ptrace_exit_hidden(const struct proxy_process *p);

/* ---- what ptrace.c and ptrace_regs.c share ---------------------------------- */

#define SYSCALL_INSN_BYTES 2
#define RFLAGS_TF 0x100ULL
/* What a tracer may change in RFLAGS (Linux's FLAG_MASK). */
#define RFLAGS_TRACER_MASK 0x254dd5ULL
#define DR6_RESERVED 0xffff0ff0ULL
#define DR7_ENABLE_BITS 0xffULL
#define USER_SPACE_END 0x7ffffffff000ULL
/* The kernel-internal results a tracer sees at an interrupted call. */
#define ERESTARTSYS_NR 512
#define ERESTARTNOHAND_NR 514
#define ERESTART_RESTARTBLOCK_NR 516

/* The length DR7 gives debug register i's breakpoint. */
static inline uint64_t dr_bytes(uint64_t dr7, int i)
{
    unsigned len = (dr7 >> (18 + 4 * i)) & 3;
    return len == 0 ? 1 : len == 1 ? 2 : len == 3 ? 4 : 8;
}

/* Whether t is the thread on q's vCPU. */
static inline bool on_vcpu(const struct proxy_process *q, const struct proxy_thread *t)
{
    return t == &q->threads[q->cur];
}

/* A thread's registers: live on its VM's vCPU when it is the current one. */
static inline struct vmm_regs *regs_of(struct proxy_process *q, struct proxy_thread *t)
{
    return on_vcpu(q, t) ? vmm_vm_regs(q->vm) : &t->regs;
}

/* Whether a traced thread is stopped where its call runs again (ptrace.c:
 * syscall-enter, PTRACE_EVENT_EXIT or _SECCOMP). */
bool proxy_ptrace_parked(const struct proxy_thread *t);

/* A tracee's registers, XSAVE image and user area (ptrace_regs.c), for
 * ptrace.c's requests: read from or written to the vCPU when t is the
 * thread on it, else t's saved copy. */
struct user_regs_struct;
void proxy_ptrace_get_user_regs(struct proxy_process *q, struct proxy_thread *t,
                                struct user_regs_struct *u);
long proxy_ptrace_set_user_regs(struct proxy_process *q, struct proxy_thread *t,
                                const struct user_regs_struct *u);
int proxy_ptrace_get_xstate(struct proxy_process *q, struct proxy_thread *t,
                            uint8_t *buf);
long proxy_ptrace_put_xstate(struct proxy_process *q, struct proxy_thread *t,
                             const void *src, size_t at, size_t len);
long proxy_ptrace_peek_user(struct proxy_process *q, struct proxy_thread *t,
                            uint64_t off, uint64_t *val);
long proxy_ptrace_poke_user(struct proxy_process *q, struct proxy_thread *t,
                            uint64_t off, uint64_t val);

#endif
