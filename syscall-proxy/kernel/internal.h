/*
 * internal.h - what the files of kernel/ share among themselves: the world
 * loop, process life (fork, exit, stop), signal delivery, timers, threads,
 * keys, pidfds and the other families' hooks.
 */
#ifndef PROXY_KERNEL_INTERNAL_H
#define PROXY_KERNEL_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"
#include "kernel.h"

struct proxy_seccomp_filter;
struct proxy_thread;
struct proxy_world;

/* ---- the world of processes and its loop (kernel/world.c) ---------------- */
/* --linger: whether a guest process other than the first still holds the
 * run's stdout or stderr (world.c). */
bool proxy_world_output_held(struct proxy_world *w);

int proxy_world_init(struct proxy_world *w, struct vmm_host *host,
                     struct proxy_process *first);
void proxy_world_destroy(struct proxy_world *w);

/* Runs every process until the first one exits; returns its wait status,
 * or -1 when hvrun failed. */
int proxy_world_run(struct proxy_world *w);

/* The next pid or tid of the run: one counter for processes and threads,
 * as Linux's pid allocator, so no thread's id is another task's. */
int proxy_world_next_id(struct proxy_world *w);

/* ---- processes: fork, exec, exit, wait, job control (kernel/procsys.c) --- */
/* Ends the run with the first process's status, every other process
 * with it (procsys.c). */
void proxy_world_end(struct proxy_world *w);

/* fork, vfork and clone without CLONE_THREAD: a new process in a new VM,
 * with a copy of the caller's memory, or (CLONE_VM) on the same memory. */
long proxy_fork(struct proxy_process *p, uint64_t flags, gva_t stack,
                gva_t ptid, gva_t ctid, uint64_t tls);

/* Destroys a VM, adding its exit counts to p's tree totals. */
void proxy_vm_retire(struct proxy_process *p, struct vmm_vm *vm);

/* Ends process p (exit_status already set): fds closed, VM freed, zombie
 * for its parent, children to the nearest subreaper or their pid
 * namespace's init (the virtual init, pid 1, in the run's own); the run
 * ends with the first. */
void proxy_world_exit(struct proxy_process *p);

/* Job control: a stop signal's default action, and SIGCONT. Both tell the
 * parent (SIGCHLD unless SA_NOCLDSTOP) and a waiting wait(). */
void proxy_process_stop(struct proxy_process *p, int sig);
void proxy_process_continue(struct proxy_process *p);

/* Whether a wait4/waitid of p for pid (as wait_target gives it) with
 * these options would end now: a child or tracee matching pid has an
 * event it reports, or there is none to wait for (ECHILD). */
bool proxy_wait_would_end(struct proxy_process *p, int pid, int options);

/* A zombie's exit told to its parent (SIGCHLD), or the zombie reaped when
 * the parent does not wait (ptrace.c: after its tracer was told). */
void proxy_process_notify_parent(struct proxy_process *c);

/* ---- the key retention service (kernel/keys.c) --------------------------- */
/* The key retention service (kernel/keys.c): a fork child's references
 * to its parent's keyrings (c is the child, a copy of the parent), a new
 * thread's, an exiting thread's, execve's and exit's drops; the run's keys
 * freed (its /proc lines: kernel.h). */
void proxy_keys_fork(struct proxy_process *c);
void proxy_keys_clone_thread(struct proxy_process *p, struct proxy_thread *t);
void proxy_keys_thread_exit(struct proxy_process *p, struct proxy_thread *t);
void proxy_keys_exec(struct proxy_process *p);
void proxy_keys_exit(struct proxy_process *p);
void proxy_keys_world_free(struct proxy_world *w);

/* ---- pidfds (kernel/pidfd.c) --------------------------------------------- */
/* dead exited: every pidfd naming it polls readable from now on. */
void proxy_pidfd_exited(struct proxy_process *dead);

/* waitid(P_PIDFD): the pid the caller sees of the process pidfd guest_fd
 * names (-EBADF: not a pidfd; -ECHILD: reaped), and whether the pidfd is
 * O_NONBLOCK. */
long proxy_pidfd_target(struct proxy_process *p, int guest_fd, int *vpid,
                        bool *nonblock);

/* ---- restartable sequences (kernel/rseq.c) ------------------------------- */
void proxy_rseq_fixup(struct proxy_process *p);

/* ---- POSIX message queues (kernel/mqueue.c) ------------------------------ */
void proxy_mq_world_free(struct proxy_world *w);

/* ---- System V message queues (kernel/sysvmsg.c) -------------------------- */
void proxy_msg_world_free(struct proxy_world *w);

/* ---- System V semaphores (kernel/sysvsem.c) ------------------------------ */
/* System V semaphores (kernel/sysvsem.c): a process's SEM_UNDO applied at
 * its exit; set i as a /proc/sysvipc/sem line (0 past the last); the
 * run's sets freed. */
void proxy_sem_exit(struct proxy_process *p);
/* copy_semundo: p's SEM_UNDO list (made if it has none: a pthread_create
 * makes one), and with child shared with c (clone's CLONE_SYSVSEM). */
void proxy_sem_undo_share(struct proxy_process *p, struct proxy_process *c);
/* The id of p's SEM_UNDO list (0: none), ordered as the lists were made. */
uint64_t proxy_sem_undo_id(const struct proxy_process *p);

void proxy_sem_world_free(struct proxy_world *w);

/* ---- the guest's seccomp filters (kernel/seccomp.c) ---------------------- */
void proxy_seccomp_ref(struct proxy_seccomp_filter *f);

/* prctl(PR_GET_SECCOMP / PR_SET_SECCOMP, ...). */
long proxy_seccomp_prctl(struct proxy_process *p, const uint64_t a[6]);

/* ---- syscall user dispatch (kernel/user_dispatch.c) ---------------------- */
/* prctl(PR_SET_SYSCALL_USER_DISPATCH, mode, offset, len, selector). */
long proxy_user_dispatch_prctl(struct proxy_process *p, const uint64_t a[6]);

/* ---- threads, futexes, sleeps (kernel/thread.c) -------------------------- */
/* Robust futex lists (set_robust_list) of a dying thread / every thread
 * of a dying process: owners marked dead, a waiter woken (thread.c). */
void proxy_robust_list_exit(struct proxy_process *p, gva_t head, int tid);
void proxy_robust_lists_exit(struct proxy_process *p);

/* Whether another live process runs on p's address space (clone with
 * CLONE_VM and without CLONE_THREAD: vfork, posix_spawn). */
bool proxy_as_shared(const struct proxy_process *p);

/* Such a process (the first in creation order), or NULL. */
struct proxy_process *proxy_as_other_user(const struct proxy_process *p);

/* Linux's mm_release for p leaving an address space that another process
 * still uses (its exit, or its execve with p->as still the old one):
 * each thread's CLONE_CHILD_CLEARTID word zeroed and its futex woken. */
void proxy_mm_release(struct proxy_process *p);

/* Ends the calling thread as exit(2) would (thread.c). */
long proxy_thread_exit_current(struct proxy_process *p);

/* Registers the initial thread (after the image is loaded). */
int proxy_thread_init(struct proxy_process *p);

/* Puts thread idx of p on p's vCPU (saving the current one). */
int proxy_thread_switch(struct proxy_process *p, int idx);

/* The earliest futex deadline of p's threads, or UINT64_MAX. */
uint64_t proxy_thread_earliest_deadline(struct proxy_process *p, int *idx);

/* Parks the current thread until logical CLOCK_MONOTONIC reaches
 * deadline_ns (nanosleep). It returns 0 then, or -EINTR with the time left
 * written to rem when a signal handler interrupts it. */
long proxy_thread_sleep(struct proxy_process *p, uint64_t deadline_ns,
                        gva_t rem);

/* A sleeping thread woken by a signal: -EINTR and the remainder. */
void proxy_thread_interrupt_sleep(struct proxy_process *p, int idx);
long proxy_thread_restart_syscall(struct proxy_process *p);

/* Expires thread idx's futex timeout (it returns -ETIMEDOUT). */
/* Whether thread idx waits with a deadline that logical time has passed
 * (while other threads ran): it is then expired like the earliest one. */
bool proxy_thread_deadline_passed(struct proxy_process *p, int idx);
void proxy_thread_expire(struct proxy_process *p, int idx);

/* ---- signals (kernel/signal.c) ------------------------------------------- */
/* Turns a guest CPU exception into a signal and delivers it. */
void proxy_signal_fault(struct proxy_process *p, const struct vmm_event *ev);

/* Delivers one pending unblocked signal if any (after a syscall). */
void proxy_signal_deliver_pending(struct proxy_process *p);

/* Delivers sig to the current thread now, mask or not (a signal a tracer
 * let through: ptrace.c). */
void proxy_signal_deliver_now(struct proxy_process *p, int sig,
                              const siginfo_t *info);

/* Queues a synchronous signal for thread tid as Linux's force_sig does:
 * blocked or ignored, its action becomes the default and it is
 * unblocked. */
void proxy_signal_force_thread(struct proxy_process *p, int tid,
                               const siginfo_t *info);

/* Ends the process by signal (default action terminate/core). */
void proxy_process_kill(struct proxy_process *p, int signo);

/* Whether a pending signal interrupts thread t's blocking call (a sleep,
 * a wait for an fd, a child or a futex): one it takes and acts on, not
 * blocked, not ignored; for a traced process any unblocked one (its
 * tracer sees it first). */
bool proxy_signal_interrupts(const struct proxy_process *p,
                             const struct proxy_thread *t);

/* Whether thread t, in PROXY_THREAD_WAIT_SIGNAL, may run: a signal it
 * would take (not ignored) or one of its sigwait_set is pending, or its
 * deadline passed. */
bool proxy_signal_wait_ready(struct proxy_process *p,
                             const struct proxy_thread *t);

/* ---- prctl (kernel/prctl.c) ---------------------------------------------- */
/* The calling thread's name (PR_SET_NAME): the process's comm for the
 * main thread, the thread's own for the others (prctl.c). */
char *proxy_thread_comm(struct proxy_process *p);

/* ---- perf events (kernel/perf_event.c) ----------------------------------- */
void proxy_perf_world_gone(struct proxy_world *w);

/* What the counters count, pushed by the world loop: one event (syscall,
 * trapped TSC read) of thread tid, its switch off the vCPU, its page
 * fault, its creation of child_tid, its execve. */
void proxy_perf_on_event(struct proxy_world *w, int tid);
void proxy_perf_on_switch(struct proxy_world *w, int tid);
void proxy_perf_on_fault(struct proxy_world *w, int tid);
void proxy_perf_on_clone(struct proxy_world *w, int parent_tid, int child_tid);
void proxy_perf_on_exec(struct proxy_world *w, int tid);

/* ---- alarm, itimers, POSIX timers (kernel/timer.c) ----------------------- */
/* Fires every due timer of every live process: raises its signal (or
 * counts an overrun) and reloads periodic ones. The world loop calls it
 * before each scheduling decision. */
void proxy_timer_fire_due(struct proxy_world *w);

/* Nothing can run: if a timer that would raise a signal expires no later
 * than futex_deadline_ns (CLOCK_MONOTONIC; UINT64_MAX for none), advances
 * logical time to the earliest such expiry and returns true (the next
 * proxy_timer_fire_due fires it); otherwise false and time is unchanged. */
bool proxy_timer_advance(struct proxy_world *w, uint64_t futex_deadline_ns);

/* Whether some timer (alarm, itimer, POSIX timer, timerfd) is armed and
 * could wake a thread when it fires. */
bool proxy_timer_could_fire(struct proxy_world *w);

/* Logical ns until the earliest timer (itimer, POSIX timer, timerfd) that
 * could wake a guest fires; INT64_MAX for none. */
int64_t proxy_timer_earliest_ns(struct proxy_world *w);

/* A fork child inherits no timer (man 2 fork); call on the new process. */
void proxy_timer_fork(struct proxy_process *child);

/* execve deletes the POSIX timers and keeps alarm and the itimers. */
void proxy_timer_exec(struct proxy_process *p);

/* ---- signalfd (kernel/signalfd.c) ---------------------------------------- */
/* Makes the signalfds of p poll readable exactly while a signal of their
 * mask is pending; signal.c calls it when p's pending set changes. */
void proxy_signalfd_sync(struct proxy_process *p);

/* ---- timerfd (kernel/timerfd.c) ------------------------------------------ */
/* The world ends: timerfds still open are no longer listed in it. */
void proxy_timerfd_world_gone(struct proxy_world *w);

/* Adds the expirations due on the logical clock to each timerfd. */
void proxy_timerfd_fire_due(struct proxy_world *w);

/* ns until the earliest expiry that could wake a reader; INT64_MAX: none. */
int64_t proxy_timerfd_earliest_ns(struct proxy_world *w);

/* ---- transfers parked part way (kernel/xfer_progress.c) ------------------ */
/* A signal ends thread t's parked transfer that had moved bytes: the
 * count becomes its result (RAX, past the SYSCALL instruction), as Linux
 * returns it instead of EINTR or a restart; the record is used up. False
 * if t is not parked in such a call. end_on_stop: every thread of p, as a
 * stop signal stops the process. */
bool proxy_xfer_end_parked(struct proxy_process *p, struct proxy_thread *t);
void proxy_xfer_end_on_stop(struct proxy_process *p);

/* ---- System V shared memory (kernel/sysvshm.c) --------------------------- */
/* System V shared memory (kernel/sysvshm.c): a fork child's attachments
 * counted, a process's all detached (exit, execve), the run's segments
 * freed. */
void proxy_shm_fork(struct proxy_process *parent, struct proxy_process *child);
void proxy_shm_detach_all(struct proxy_process *p);

/* p leaves an address space another process (to) still runs on: its
 * attachments stay in that memory, so they become to's. */
void proxy_shm_hand_over(struct proxy_process *p, struct proxy_process *to);
void proxy_shm_world_free(struct proxy_world *w);

#endif
