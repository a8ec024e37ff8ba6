/*
 * world.c - every guest process of a run and the one loop that runs them.
 *
 * Exactly one guest thread runs at a time. After each event the loop keeps
 * the current thread while it is runnable and its quantum lasts; otherwise
 * the next is the first runnable thread after it: the other threads of the
 * same process in creation order, then the following processes in creation
 * order. Waiting threads become runnable by deterministic conditions (a
 * futex wake, a child's exit, a vfork child's exec) or by host fd
 * readiness, which is an external event. When nothing can run the loop
 * expires the earliest futex deadline (logical time) or, failing that,
 * waits on the host fds; with neither, the run is deadlocked.
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "hooks.h"
#include "kernel.h"
#include "internal.h"
#include "namespace.h"
#include "ptrace.h"

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "det.h"
#include "det_sched.h"

#define SIGBIT(s) (1ULL << ((s) - 1))

volatile sig_atomic_t proxy_stop_signal;
uint64_t proxy_stop_detlog, proxy_stop_events;
#define SYSCALL_INSN_BYTES 2
#define FIRST_PID 1
/* The least of a slice an interrupted KVM_RUN goes on with. */
#define SLICE_MIN_LEFT_NS 1000000LL
/* How often an idle run looks again at a peek waiting for more data. */
#define PEEK_WAIT_POLL_MS 10
/* Waiters whose fds one poll looks at, after a call that may have made
 * one ready: a poll each made 1000 children blocked on a pipe cost
 * 500 000 polls as each of them closed its write end. */
#define WAITERS_PER_POLL 64

static int64_t host_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The slice while the other threads only wait, in short slices: long, so
 * that a computation between two events (QEMU-TCG running guest code) is
 * not cut even on a loaded host. */
#define WAIT_SLICE_FACTOR 30
/* The least slice of a thread alone with a timer armed, once it was cut
 * as a spinner: a timer due sooner still waits this much host time of
 * computing (a 1 ms interval timer fires about as often as natively, not
 * every 100 ms). */
#define ALONE_SLICE_MIN_NS 1000000LL

int proxy_world_init(struct proxy_world *w, struct vmm_host *host,
                     struct proxy_process *first)
{
    memset(w, 0, sizeof(*w));
    w->host = host;
    w->cap_procs = 8;
    w->procs = calloc((size_t)w->cap_procs, sizeof(*w->procs));
    if (!w->procs)
        return -ENOMEM;
    w->procs[0] = first;
    w->nr_procs = 1;
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (fstat(1 + i, &st) == 0) {
            w->out_id[i][0] = st.st_dev;
            w->out_id[i][1] = st.st_ino;
        }
    }
    w->next_pid = first->pid + 1;
    first->world = w;
    proxy_hooks.tty_world_init(w, first);
    /* The OOM backstop's baseline (and its /proc/self/statm fd, opened
     * now, during set-up). */
    proxy_hooks.mem_check_oom(w);
    return first->threads ? 0 : proxy_thread_init(first);
}

/* Frees every process but the first (the caller owns that one). */
void proxy_world_destroy(struct proxy_world *w)
{
    for (int i = 1; i < w->nr_procs; i++) {
        vmm_vm_destroy(w->procs[i]->vm);
        proxy_process_destroy(w->procs[i]);
    }
    free(w->procs);
    w->procs = NULL;
    proxy_shm_world_free(w);
    proxy_sem_world_free(w);
    proxy_msg_world_free(w);
    proxy_hooks.outside_free(w);
    proxy_hooks.inet_ports_free(w);
    proxy_mq_world_free(w);
    proxy_ns_world_free(w);
    proxy_hooks.tty_world_free(w);
    proxy_keys_world_free(w);
    proxy_handles_world_free(w);
    /* Timerfds still open in the first process outlive the world. */
    proxy_timerfd_world_gone(w);
    proxy_perf_world_gone(w);
}

/* procs is in creation order, and pids are handed out in increasing
 * order (proxy_world_next_id): a binary search finds one. A look at every
 * process was the most of hvrun's time with thousands of them: the
 * scheduler looks up each vfork waiter's child (stress-ng's vforkmany, a
 * chain of 3000), an exit each ancestor. */
struct proxy_process *proxy_world_find(struct proxy_world *w, int pid)
{
    int lo = 0, hi = w->nr_procs;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (w->procs[mid]->pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < w->nr_procs && w->procs[lo]->pid == pid ? w->procs[lo]
                                                         : NULL;
}

struct proxy_process *proxy_world_find_tid(struct proxy_world *w, int id)
{
    struct proxy_process *q = proxy_world_find(w, id);
    if (q)
        return q;
    for (int i = 0; i < w->nr_procs; i++) {
        q = w->procs[i];
        for (int k = 0; k < q->nr_threads; k++)
            if (q->threads[k].state != PROXY_THREAD_EXITED &&
                (k == q->cur ? q->tid : q->threads[k].tid) == id)
                return q;
    }
    return NULL;
}

int proxy_world_next_id(struct proxy_world *w)
{
    if (w->next_pid == PROXY_OUTSIDE_PGID) /* the virtual shell's */
        w->next_pid++;
    return w->next_pid++;
}

int proxy_world_add(struct proxy_world *w, struct proxy_process *p);
int proxy_world_add(struct proxy_world *w, struct proxy_process *p)
{
    if (w->nr_procs == w->cap_procs) {
        int cap = w->cap_procs * 2;
        void *n = realloc(w->procs, (size_t)cap * sizeof(*w->procs));
        if (!n)
            return -ENOMEM;
        w->procs = n;
        w->cap_procs = cap;
    }
    /* proxy_world_find's order: a new process has the highest pid */
    if (p->pid <= w->procs[w->nr_procs - 1]->pid)
        return -EINVAL;
    w->procs[w->nr_procs++] = p;
    p->world = w;
    if (p->cfg->debugger)
        p->cfg->debugger->new_process(p->cfg->debugger->ctx, p);
    return 0;
}

void proxy_world_remove(struct proxy_world *w, struct proxy_process *p);
void proxy_world_remove(struct proxy_world *w, struct proxy_process *p)
{
    for (int i = 0; i < w->nr_procs; i++) {
        if (w->procs[i] != p)
            continue;
        memmove(&w->procs[i], &w->procs[i + 1],
                (size_t)(w->nr_procs - i - 1) * sizeof(*w->procs));
        w->nr_procs--;
        if (w->cur > i || w->cur >= w->nr_procs)
            w->cur = w->cur > 0 ? w->cur - 1 : 0;
        return;
    }
}

/* ---- waiting ------------------------------------------------------------- */

long proxy_block_on_fd(struct proxy_process *p, int host_fd, short events)
{
    struct proxy_thread *t = &p->threads[p->cur];
    t->state = PROXY_THREAD_WAIT_FD;
    t->wait_host_fd = host_fd;
    t->wait_events = events;
    t->wait_queued_above = -1;
    return PROXY_RET_BLOCK;
}

long proxy_block_on_fd_more(struct proxy_process *p, int host_fd,
                            int queued_above, uint64_t timeout_ns)
{
    long ret = proxy_block_on_fd_for(p, host_fd, POLLIN, timeout_ns);
    if (ret == PROXY_RET_BLOCK)
        p->threads[p->cur].wait_queued_above = queued_above;
    return ret;
}

/* What a WAIT_FD thread's fd is polled for. */
static struct pollfd wait_pollfd(const struct proxy_thread *t)
{
    short events = t->wait_events;
    if (t->wait_queued_above >= 0)
        events |= POLLRDHUP;
    return (struct pollfd){.fd = t->wait_host_fd, .events = events};
}

/* Whether a WAIT_FD thread whose fd polled `revents` (not 0) has what it
 * waits for: any of them, or more queued than it saw. */
static bool wait_ready_from(const struct proxy_thread *t, short revents)
{
    if (t->wait_queued_above < 0 ||
        (revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL)))
        return true;
    int queued;
    return ioctl(t->wait_host_fd, FIONREAD, &queued) < 0 ||
           queued > t->wait_queued_above;
}

/* Whether a WAIT_FD thread's fd is ready for what it waits for. */
static bool fd_wait_ready(const struct proxy_thread *t)
{
    struct pollfd pfd = wait_pollfd(t);
    return poll(&pfd, 1, 0) > 0 && wait_ready_from(t, pfd.revents);
}

/* fd_wait_ready of any of n threads, in order, with one poll for them all. */
static bool any_fd_wait_ready(const struct proxy_thread *const *ts, int n)
{
    struct pollfd pfds[WAITERS_PER_POLL];
    for (int i = 0; i < n; i++)
        pfds[i] = wait_pollfd(ts[i]);
    if (poll(pfds, (nfds_t)n, 0) <= 0)
        return false;
    for (int i = 0; i < n; i++)
        if (pfds[i].revents && wait_ready_from(ts[i], pfds[i].revents))
            return true;
    return false;
}

long proxy_block_on_fd_for(struct proxy_process *p, int host_fd,
                           short events, uint64_t timeout_ns)
{
    if (timeout_ns) {
        uint64_t left;
        if (!proxy_thread_poll_deadline(p, timeout_ns, &left)) {
            proxy_thread_poll_done(p);
            return -EAGAIN;
        }
    }
    return proxy_block_on_fd(p, host_fd, events);
}

/* An ignored signal (a child's SIGCHLD at its default action) wakes no
 * one: the call goes on, as on Linux, which never queues it. */
static bool signal_wakes(struct proxy_process *p, struct proxy_thread *t)
{
    return proxy_signal_interrupts(p, t);
}

/* Re-evaluates one waiting thread; true if it may run now. A deadline
 * that logical time passed while others ran ends the wait, as it would
 * when nothing else could run. */
static bool refresh(struct proxy_process *p, struct proxy_thread *t)
{
    if (proxy_thread_deadline_passed(p, (int)(t - p->threads)))
        proxy_thread_expire(p, (int)(t - p->threads));
    switch (t->state) {
    case PROXY_THREAD_RUNNABLE:
        return true;
    case PROXY_THREAD_EXITED:
        return false;
    case PROXY_THREAD_WAIT_FD:
        if (fd_wait_ready(t) || signal_wakes(p, t))
            t->state = PROXY_THREAD_RUNNABLE;
        break;
    case PROXY_THREAD_WAIT_CHILD:
        /* Only an event the wait reports: one of another child (a
         * tracee's stop while the wait names a pid) would have it re-run
         * and park again at every look, spinning. */
        if (proxy_wait_would_end(p, t->wait_pid, t->wait_options) ||
            signal_wakes(p, t))
            t->state = PROXY_THREAD_RUNNABLE;
        break;
    case PROXY_THREAD_WAIT_VFORK: {
        struct proxy_process *c = proxy_world_find(p->world, t->wait_vfork_pid);
        if (!c || c->zombie || c->vfork_released) {
            t->state = PROXY_THREAD_RUNNABLE;
            proxy_ptrace_vfork_done(p, t, t->wait_vfork_pid);
        } else if (proxy_signal_pending_for(p, t->tid) & SIGBIT(SIGKILL)) {
            /* wait_for_vfork_done waits TASK_KILLABLE: a SIGKILL ends
             * it, and the parent dies while the child runs on (a chain of
             * vforks killed as a group came apart one link at a time) */
            t->state = PROXY_THREAD_RUNNABLE;
        }
        break;
    }
    case PROXY_THREAD_FUTEX_WAIT:
        if (signal_wakes(p, t)) {
            /* Back to the futex call, as a parked syscall that re-runs:
             * the handler's delivery (signal.c) makes it EINTR without
             * SA_RESTART, and always for a timed wait (Linux's
             * ERESTARTSYS and ERESTART_RESTARTBLOCK); with SA_RESTART, or
             * after a stop, the wait starts again. The current thread's
             * registers are live on the vCPU. */
            struct vmm_regs *r = t == &p->threads[p->cur] ? vmm_vm_regs(p->vm)
                                                          : &t->regs;
            t->state = PROXY_THREAD_RUNNABLE;
            if (t->futex_requeued) {
                /* A requeue-PI waiter already on the PI futex: Linux
                 * returns EWOULDBLOCK rather than restart. */
                t->futex_requeued = t->has_deadline = false;
                r->rax = (uint64_t)-EAGAIN;
                break;
            }
            r->rax = SYS_futex;
            r->rip -= SYSCALL_INSN_BYTES;
            /* A PI wait restarts even across a handler without
             * SA_RESTART (ERESTARTNOINTR): not marked restartable, the
             * delivery leaves it to run again. */
            t->restartable = t->futex_kind == PROXY_FUTEX_PLAIN;
            t->eintr_on_handler = t->has_deadline;
        }
        break;
    case PROXY_THREAD_WAIT_RETRY:
        if (signal_wakes(p, t)) {
            t->state = PROXY_THREAD_RUNNABLE;
            t->has_deadline = false;
            t->sem_pending = false; /* a semop's wait ends here */
            t->msg_pending = false;
        }
        break;
    case PROXY_THREAD_WAIT_SLEEP:
        if (signal_wakes(p, t))
            proxy_thread_interrupt_sleep(p, (int)(t - p->threads));
        break;
    case PROXY_THREAD_WAIT_SIGNAL:
        if (proxy_signal_wait_ready(p, t))
            t->state = PROXY_THREAD_RUNNABLE;
        break;
    case PROXY_THREAD_PTRACE_STOP: /* its tracer lets it go (ptrace.c) */
        break;
    }
    return t->state == PROXY_THREAD_RUNNABLE;
}

bool proxy_others_alive(const struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    for (int i = 0; w && i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads; k++)
            if ((q != p || k != p->cur) &&
                q->threads[k].state != PROXY_THREAD_EXITED)
                return true;
    }
    return false;
}

bool proxy_others_runnable(const struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    for (int i = 0; w && i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads; k++)
            if ((q != p || k != p->cur) &&
                q->threads[k].state == PROXY_THREAD_RUNNABLE)
                return true;
    }
    return false;
}

/* ---- choosing the next thread --------------------------------------------- */

/* The process model as detcore's scheduler sees it (det_sched.h). */
static int sched_nr_threads(void *ctx, int i)
{
    const struct proxy_process *q = ((struct proxy_world *)ctx)->procs[i];
    return q->zombie || q->stopped ? 0 : q->nr_threads;
}

static int sched_cur_thread(void *ctx, int i)
{
    return ((struct proxy_world *)ctx)->procs[i]->cur;
}

static bool sched_runnable(void *ctx, int i, int k)
{
    struct proxy_process *q = ((struct proxy_world *)ctx)->procs[i];
    return refresh(q, &q->threads[k]);
}

static uint64_t *sched_slot(void *ctx, int i, int k)
{
    return &((struct proxy_world *)ctx)->procs[i]->threads[k].sched_slot;
}

static const struct det_sched_ops sched_ops = {
    .nr_threads = sched_nr_threads,
    .cur_thread = sched_cur_thread,
    .runnable = sched_runnable,
    .slot = sched_slot,
};

/* An address, and the file and offset of its executable mapping. */
static void describe_addr(FILE *f, struct proxy_process *q, const char *what,
                          uint64_t addr)
{
    const struct vmm_vma *v = vmm_as_find_vma(q->as, addr);
    fprintf(f, "%s %#llx", what, (unsigned long long)addr);
    if (v && v->name && v->name[0] == '/' && (v->prot & PROT_EXEC))
        fprintf(f, " %s+%#llx", v->name,
                (unsigned long long)(addr - v->start + v->file_off));
}

/* Where a thread is: its RIP and, when the word at its stack pointer is
 * a code address (a syscall wrapper's return address), that too. */
static void describe_place(FILE *f, struct proxy_process *q, int idx)
{
    const struct vmm_regs *r = q->cur == idx ? vmm_vm_regs(q->vm)
                                             : &q->threads[idx].regs;
    describe_addr(f, q, "rip", r->rip);
    uint64_t ret;
    const struct vmm_vma *v;
    if (proxy_copy_in(q, &ret, r->rsp, sizeof(ret)) == 0 &&
        (v = vmm_as_find_vma(q->as, ret)) && (v->prot & PROT_EXEC) &&
        v->name && v->name[0] == '/')
        describe_addr(f, q, " called from", ret);
}

/* --schedule-out: the switch as a schedule line, and as a comment where
 * the thread that gave up the vCPU was and where the next one resumes,
 * for `hvrun analyze`'s report. */
static void trace_switch(FILE *f, struct proxy_process *from,
                         struct proxy_process *to, int to_idx)
{
    const struct proxy_thread *t = &from->threads[from->cur];
    bool same = from == to && from->cur == to_idx;
    fprintf(f, "after %d %llu run %d # thread %d %s after %s ", t->tid,
            (unsigned long long)t->events, to->threads[to_idx].tid, t->tid,
            same ? "runs on"
            : t->state == PROXY_THREAD_RUNNABLE ? "cut"
                                                : "waits",
            proxy_syscall_name(from->det->cur_nr));
    describe_place(f, from, from->cur);
    fprintf(f, " -> thread %d ", to->threads[to_idx].tid);
    describe_place(f, to, to_idx);
    /* A thread kept on: the one it kept waiting, the other of the pair. */
    struct proxy_world *w = from->world;
    for (int i = 0; same && i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads; k++)
            if ((q != from || k != from->cur) &&
                q->threads[k].state == PROXY_THREAD_RUNNABLE) {
                fprintf(f, " over thread %d ", q->threads[k].tid);
                describe_place(f, q, k);
                same = false;
                break;
            }
    }
    fputc('\n', f);
}

/* --schedule: the thread an entry names, if it can run. */
static bool find_forced(struct proxy_world *w, int *proc, int *idx)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && !q->stopped && k < q->nr_threads; k++)
            if (q->threads[k].tid == w->forced_tid &&
                refresh(q, &q->threads[k])) {
                *proc = i;
                *idx = k;
                return true;
            }
    }
    return false;
}

/* One more event of the current thread; under --schedule, the switch an
 * entry names for it. */
static void count_event(struct proxy_process *p)
{
    struct proxy_thread *t = &p->threads[p->cur];
    t->events++;
    proxy_cpu_charge(p, DET_EVENT_NS);
    if (p->world->nr_perfs)
        proxy_perf_on_event(p->world, t->tid);
    const struct det_sched_switch *e =
        det_schedule_at(p->det->schedule, (uint32_t)t->tid, t->events);
    if (e) {
        p->world->forced_tid = (int)e->to;
        p->resched = true;
    }
}

/* Whether thread t waits in a call that a pending signal ends now (what
 * refresh() tests for its state). */
static bool signal_ends_wait(struct proxy_process *q, struct proxy_thread *t)
{
    if (!q->sig.pending_mask && !t->own_pending) /* the common case, cheaply */
        return false;
    switch (t->state) {
    case PROXY_THREAD_WAIT_FD: case PROXY_THREAD_WAIT_CHILD:
    case PROXY_THREAD_FUTEX_WAIT: case PROXY_THREAD_WAIT_RETRY:
    case PROXY_THREAD_WAIT_SLEEP:
        return signal_wakes(q, t);
    case PROXY_THREAD_WAIT_SIGNAL:
        return proxy_signal_wait_ready(q, t);
    default:
        return false;
    }
}

/*
 * Whether a thread other than p's current one waits in a call that a
 * signal pending for it now ends (a timer fired for it, another thread
 * sent it one). It gets the vCPU at once, as a woken waiter does: left to
 * the end of the running thread's quantum (10 000 calls) a SIGALRM handler
 * waited for seconds behind a thread in a syscall loop. The signal became
 * pending at an event of the run (a call, or a timer fired at the
 * clock's reading before this decision), so under virtual time the switch
 * falls at the same point in every run.
 */
static bool signal_wakes_other(struct proxy_world *w, struct proxy_process *p)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (q->zombie || q->stopped)
            continue;
        for (int k = 0; k < q->nr_threads; k++)
            if ((q != p || k != p->cur) &&
                signal_ends_wait(q, &q->threads[k]))
                return true;
    }
    return false;
}

/* perf's context switches: the thread that had the vCPU is cut for
 * another (a thread that waits was counted as it began to wait). */
static void note_switch(struct proxy_world *w, struct proxy_process *p,
                        struct proxy_process *q, int idx)
{
    if (p->zombie || p->exited || p->cur >= p->nr_threads)
        return;
    const struct proxy_thread *t = &p->threads[p->cur];
    if ((q != p || idx != p->cur) && !t->waited)
        proxy_perf_on_switch(w, t->tid);
}

/* Whether thread k of q was woken and has not run since, or waits with a
 * deadline that logical time has passed. */
static bool wants_vcpu(struct proxy_process *q, int k)
{
    const struct proxy_thread *t = &q->threads[k];
    return (t->state == PROXY_THREAD_RUNNABLE && t->waited) ||
           (t->state != PROXY_THREAD_EXITED && proxy_thread_deadline_passed(q, k));
}

/*
 * p's current thread has just begun to wait for its vfork child: the first
 * thread after it, in round-robin order, that was woken, whose deadline
 * passed (wants_vcpu) or whose wait a pending signal ends (signal_ends_wait)
 * runs before the child. The round looks for the next runnable thread
 * after the current one, and a new child is always after it: in a chain
 * of vforks (stress-ng's vforkmany) the round never came back to a sleeper
 * whose deadline had passed, whose SIGALRM was to stop the chain (hung,
 * 13 000 processes deep), nor to a parent in wait4 with that SIGALRM
 * pending (kvm, --no-virtualize-time: 5 000 deep after 60 s). The child
 * runs in its turn.
 */
static bool find_wanting_after_vfork(struct proxy_world *w,
                                     struct proxy_process *p, int *proc,
                                     int *idx)
{
    if (p->zombie || p->cur >= p->nr_threads ||
        p->threads[p->cur].state != PROXY_THREAD_WAIT_VFORK)
        return false;
    for (int off = 1; off <= w->nr_procs; off++) {
        int i = (w->cur + off) % w->nr_procs;
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && !q->stopped && k < q->nr_threads; k++)
            if ((q != p || k != p->cur) &&
                (wants_vcpu(q, k) || signal_ends_wait(q, &q->threads[k])) &&
                refresh(q, &q->threads[k])) {
                *proc = i;
                *idx = k;
                return true;
            }
    }
    return false;
}

/* The next thread, switched onto its VM's vCPU; NULL when none can run. */
static struct proxy_process *pick(struct proxy_world *w)
{
    struct proxy_process *p = w->procs[w->cur];
    bool keep_turn = !p->resched && p->quantum_left > 0 &&
                     !signal_wakes_other(w, p);
    int i, idx;
    struct det_sched_turn turn = {0};
    bool found = false;
    if (w->forced_tid && !keep_turn)
        found = find_forced(w, &i, &idx);
    w->forced_tid = 0;
    if (!found && !keep_turn)
        found = find_wanting_after_vfork(w, p, &i, &idx);
    if (!found)
        found = p->det->cfg.chaos
                    ? det_sched_pick_chaos(&sched_ops, w, w->nr_procs, w->cur,
                                           keep_turn, p->det, &i, &idx, &turn)
                    : det_sched_pick(&sched_ops, w, w->nr_procs, w->cur,
                                     keep_turn, &i, &idx);
    if (found && keep_turn && i == w->cur && idx == p->cur)
        return p;
    p->resched = false;
    p->quantum_left = DET_SCHED_QUANTUM;
    if (!found)
        return NULL;
    struct proxy_process *q = w->procs[i];
    if (w->nr_perfs)
        note_switch(w, p, q, idx);
    if (p->cfg->schedule_out && !p->zombie && p->cur < p->nr_threads)
        trace_switch(p->cfg->schedule_out, p, q, idx);
    if (proxy_thread_switch(q, idx) < 0)
        return NULL;
    if (turn.decided)
        q->quantum_left = turn.quantum;
    q->threads[idx].waited = false;
    q->slice_spent_ns = 0;
    q->slice_events = 0;
    /* the count is the VM's, not a thread's */
    q->mm.vdso_count_goes_on = false;
    if (q != p)
        det_log_value(q->det, DET_SRC_SCHED, &q->pid, sizeof(q->pid));
    w->cur = i;
    return q;
}

/* Nothing can run: expire a deadline, or wait for a host fd. */
static bool wait_for_something(struct proxy_world *w)
{
    struct proxy_process *best_p = NULL;
    int best_t = -1;
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        int idx = -1;
        uint64_t d = q->zombie ? UINT64_MAX
                               : proxy_thread_earliest_deadline(q, &idx);
        if (d < best) {
            best = d;
            best_p = q;
            best_t = idx;
        }
    }
    if (proxy_timer_advance(w, best)) /* a timer comes first */
        return true;
    if (best_p) {
        /* record/replay: a peer outside the run may answer first */
        if (best_p->threads[best_t].state == PROXY_THREAD_WAIT_FD &&
            proxy_hooks.outside_await(w, best_p, best))
            return true;
        proxy_thread_expire(best_p, best_t);
        return true;
    }
    /* A replay's recorded data from outside comes now (outside.c). */
    if (proxy_hooks.outside_idle_feed(w))
        return true;
    struct pollfd fds[256];
    nfds_t n = 0;
    /* A wait for more data than is queued cannot be a poll: it is looked
     * at again every PEEK_WAIT_POLL_MS (new data from outside the run). */
    int timeout_ms = -1;
    for (int i = 0; i < w->nr_procs && n < 256; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads && n < 256; k++) {
            const struct proxy_thread *t = &q->threads[k];
            if (t->state != PROXY_THREAD_WAIT_FD)
                continue;
            short events = t->wait_events;
            if (t->wait_queued_above >= 0) {
                events = POLLRDHUP;
                timeout_ms = PEEK_WAIT_POLL_MS;
            }
            fds[n++] = (struct pollfd){t->wait_host_fd, events, 0};
        }
    }
    const struct proxy_debugger *dbg = w->procs[0]->cfg->debugger;
    if (n == 0) {
        if (dbg) /* gdb sees the deadlock before the run ends */
            dbg->idle(dbg->ctx, w, true);
        return false;
    }
    /* Recording, hvrun's relays to outside are waited on too: what comes
     * in is the recording's (outside.c), not an event of the detlog. */
    nfds_t guests = n;
    n += (nfds_t)proxy_hooks.outside_poll_fds(w, fds + n, (int)(256 - n));
    /* --gdb's connection last: its ^C while every thread waits. */
    int dbg_fd = dbg && n < 256 ? dbg->idle_fd(dbg->ctx) : -1;
    nfds_t outside_end = n;
    if (dbg_fd >= 0)
        fds[n++] = (struct pollfd){dbg_fd, POLLIN, 0};
    /* An external event: only something outside the run can wake us.
     * Which fds became ready goes into the detlog, so --verify can name
     * a difference that came from outside. */
    int polled;
    while ((polled = poll(fds, n, timeout_ms)) < 0 && errno == EINTR &&
           !proxy_stop_signal)
        ;
    if (polled == 0)
        return true; /* a peek's look again: no event unless it ends */
    uint64_t ready = 0;
    for (nfds_t i = 0; i < guests && i < 64; i++)
        if (fds[i].revents)
            ready |= 1ULL << i;
    bool dbg_ready = dbg_fd >= 0 && fds[outside_end].revents;
    if (outside_end > guests)
        proxy_hooks.outside_pump(w);
    if (dbg_ready)
        dbg->idle(dbg->ctx, w, false); /* no event of the run */
    if (!ready && (outside_end > guests || dbg_ready))
        return true;
    det_log_value(w->procs[0]->det, DET_SRC_EXTERNAL, &ready, sizeof(ready));
    w->procs[0]->det->reads[DET_SRC_EXTERNAL]++;
    return true;
}

/* ---- running ------------------------------------------------------------- */

static void finish_syscall(struct proxy_process *p, long ret)
{
    struct proxy_thread *t = &p->threads[p->cur];
    if (ret == PROXY_RET_BLOCK) {
        /* Return to the SYSCALL instruction with the number in RAX: the
         * thread makes the same call again when it is woken. */
        struct vmm_regs *r = vmm_vm_regs(p->vm);
        vmm_vm_syscall_return(p->vm, (long)r->rax);
        r->rip -= SYSCALL_INSN_BYTES;
        t->restartable = true;
        t->waited = true;
        p->resched = true;
        if (p->world->nr_perfs) /* Linux schedules away in the wait */
            proxy_perf_on_switch(p->world, t->tid);
        return;
    }
    t->restartable = false;
    t->eintr_on_handler = false;
    /* A timed wait (a socket timeout) that ended some other way. */
    if (t->poll_deadline)
        proxy_thread_poll_done(p);
    if (ret != PROXY_RET_REGS_SET)
        vmm_vm_syscall_return(p->vm, ret);
    if (t->state != PROXY_THREAD_RUNNABLE) {
        t->waited = true;
        p->resched = true;
        if (p->world->nr_perfs)
            proxy_perf_on_switch(p->world, t->tid);
    }
}

/*
 * The thread ran a whole time slice without a syscall while another could
 * run (a spin-wait, or a long computation): the next runnable thread gets
 * the vCPU. Alone with a timer armed (a loop until SIGALRM sets a flag),
 * the slice counts as time: logical time, which otherwise moves only with
 * syscalls, advances by the slice, so the timer fires after as much
 * computing as natively (and a far watchdog alarm does not). Without a PMU to
 * count instructions (kvm_pvm) the cut point is host time, so the
 * preemption is logged as an external event, naming the thread: a run
 * whose preemptions differ in number or order differs in its detlog. Where
 * in the loop the cut fell (RIP) is left out, so that a spin-wait, cut at
 * a different instruction each run but with the same outcome, still
 * verifies; a cut that changes what the program does shows in its output
 * or its later syscalls.
 */
/* Logical ns until the run's earliest deadline (a waiting thread's, a
 * timer's), INT64_MAX for none, 0 when one has passed. */
static int64_t next_deadline_in(struct proxy_world *w)
{
    int64_t best = proxy_timer_earliest_ns(w);
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        int idx;
        uint64_t d = q->zombie ? UINT64_MAX
                               : proxy_thread_earliest_deadline(q, &idx);
        if (d == UINT64_MAX)
            continue;
        int64_t now = det_clock_peek_ns(q->det, CLOCK_MONOTONIC);
        int64_t in = (int64_t)d > now ? (int64_t)d - now : 0;
        best = in < best ? in : best;
    }
    return best;
}

static void preempt(struct proxy_process *p, bool others, uint64_t slice)
{
    /* The slice was computing time: logical time moves by it, so deadlines
     * (a sleeper's, a timer's, a poll timeout) pass as they would natively
     * while this thread computes; then any other thread may have its turn.
     * A long slice moves it no further than the next deadline: a sleeper
     * beside a spinner wakes at its own time, not up to 3 s late. */
    if (slice > p->cfg->preempt_ns) {
        int64_t in = next_deadline_in(p->world);
        if (in >= 0 && (uint64_t)in < slice)
            slice = (uint64_t)in;
    }
    /* Alone, the first cut since the thread's last call only marks it a
     * spinner (its next slices are short and count): one host stall
     * between two calls of a thread that waits on a timer (read of a
     * timerfd, say) must not move its clock by a whole slice. */
    struct proxy_thread *t = &p->threads[p->cur];
    if (others || t->spinning) {
        det_clock_computed(p->det, slice);
        proxy_cpu_charge(p, slice);
    }
    t->spinning = true;
    if (others)
        p->resched = true;
    if (p->totals)
        p->totals->preemptions++;
    det_log_value(p->det, DET_SRC_EXTERNAL, &p->tid, sizeof(p->tid));
    p->det->reads[DET_SRC_EXTERNAL]++;
    proxy_log(p, 2, "thread %d preempted at rip %#llx after its time slice",
              p->tid, (unsigned long long)vmm_vm_regs(p->vm)->rip);
}

/* Calls by which a guest makes an fd of the run readable or writable for
 * another: data, end of file, a freed buffer. */
static bool may_wake_waiters(long nr)
{
    switch (nr) {
    case SYS_write: case SYS_writev: case SYS_pwrite64: case SYS_pwritev:
    case SYS_pwritev2: case SYS_sendto: case SYS_sendmsg: case SYS_sendmmsg:
    case SYS_read: case SYS_readv: case SYS_recvfrom: case SYS_recvmsg:
    case SYS_close: case SYS_shutdown: case SYS_splice: case SYS_tee:
    case SYS_vmsplice: case SYS_sendfile: case SYS_timerfd_settime:
        return true;
    default:
        return false;
    }
}

/* Whether a thread other than p's current one waits on an fd that is now
 * ready. Checked right after the running thread's call made it so, the
 * switch falls at the same call in every run. */
static bool waiter_ready(struct proxy_world *w, struct proxy_process *p)
{
    const struct proxy_thread *batch[WAITERS_PER_POLL];
    int n = 0;
    for (int i = 0; w && i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && k < q->nr_threads; k++) {
            const struct proxy_thread *t = &q->threads[k];
            if ((q == p && k == p->cur) || t->state != PROXY_THREAD_WAIT_FD)
                continue;
            batch[n++] = t;
            if (n == WAITERS_PER_POLL) {
                if (any_fd_wait_ready(batch, n))
                    return true;
                n = 0;
            }
        }
    }
    return n > 0 && any_fd_wait_ready(batch, n);
}

/* Whether a thread other than p's current one was woken and has not run
 * since, or waits with a deadline that logical time has passed. Not a
 * thread that is runnable because it was cut off the vCPU (a spinner):
 * giving it the vCPU at every trap would, when the trap is inside a
 * spinlock (QEMU reads the TSC holding vm_clock_lock), let it find the
 * lock held every time, forever. */
static bool other_wants_vcpu(struct proxy_world *w, struct proxy_process *p)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; !q->zombie && !q->stopped && k < q->nr_threads; k++)
            if ((q != p || k != p->cur) && wants_vcpu(q, k))
                return true;
    }
    return false;
}

/*
 * The vDSO makes a real syscall once GK_VDSO_MAX_CALLS clock reads were
 * answered since the last exit: a point in the program's progress that is
 * the same in every run. There a thread that only reads the clock (a
 * timed spin-wait, QEMU's TCG loop, a JVM's) gives the others their turn
 * deterministically, long before the host-timed slice would cut it. Only
 * that one: a read the vDSO cannot answer (host time, --no-virtualize-time,
 * or a clock the page lacks) is an ordinary syscall. Handing the vCPU over
 * at each of those put the switch inside any handler that reads the
 * clock: a sender's next signal was pending before the handler returned,
 * so a pause()d child under a kill loop took handler after handler and
 * never left pause (stress-ng's syscall stressor never stopped;
 * tests/guest/pause_signal_storm.c).
 */
static bool vdso_forced_call(struct proxy_process *p, uint64_t ret_rip)
{
    if (!proxy_hooks.vdso_count_spent(p))
        return false;
    const struct vmm_vma *v = vmm_as_find_vma(p->as, ret_rip);
    return v && v->name && strcmp(v->name, "[vdso]") == 0;
}

/*
 * How long (host time) the current thread may run without an exit. Alone,
 * a thread runs until it makes a syscall, deterministically. With another
 * thread runnable, the short slice: that one must not starve (a spin-wait
 * on it, a lock holder cut off the vCPU). With others only waiting (for an
 * fd, a deadline, a signal), thirty times as long (3 s by default): the slice
 * then only keeps logical time moving for a thread that computes or spins
 * without events (its end counts as computing time), and a computation
 * that makes its next event within it (QEMU-TCG running a guest kernel's
 * boot code) is never cut, so its run stays deterministic.
 */
static uint64_t time_slice(struct proxy_process *p, bool others_alive,
                           bool others_runnable)
{
    if (p->cfg->preempt_ns == 0) /* --preempt-ms 0: never */
        return 0;
    if (others_runnable)
        return p->cfg->preempt_ns;
    uint64_t longest = p->cfg->preempt_ns * WAIT_SLICE_FACTOR;
    if (others_alive && !p->det->cfg.virtualize_time) {
        /* Host time: nothing to keep deterministic, and a waiter's host
         * deadline passes whether or not this thread computes: its turn
         * comes at that deadline (no sooner than the short slice), not up
         * to the long slice later. */
        int64_t in = next_deadline_in(p->world);
        if (in >= 0 && (uint64_t)in < longest)
            return (uint64_t)in > p->cfg->preempt_ns ? (uint64_t)in
                                                      : p->cfg->preempt_ns;
    }
    if (others_alive)
        return longest;
    if (!proxy_timer_could_fire(p->world))
        return 0;
    /* Alone with a timer armed (a loop until SIGALRM sets a flag): nothing
     * else can see where the cut falls, so it falls when the timer is due,
     * no sooner than the short slice, or ALONE_SLICE_MIN_NS once the thread
     * was cut as a spinner: a thread in a syscall loop moves logical time
     * itself and must not be cut by a host hiccup of a millisecond. */
    int64_t in = next_deadline_in(p->world);
    int64_t least = p->threads[p->cur].spinning ? ALONE_SLICE_MIN_NS
                                                : (int64_t)p->cfg->preempt_ns;
    if (in < least)
        return (uint64_t)least;
    return (uint64_t)in < longest ? (uint64_t)in : longest;
}

/* The units the current thread may count before its counter traps: what
 * is left of its quantum (kept across exits, so the trap falls at the
 * same unit whatever exits came between; a thread alone in the run, the
 * longer quantum), or as many as reach the run's
 * next deadline, so a timer of a computing thread fires at about its
 * time. That too is the same unit at any exit: logical time there is the
 * units so far. A deadline already passed that is still there (a stopped
 * process's sleep) limits nothing: it would trap at every unit. */
static uint64_t progress_budget(struct proxy_process *p)
{
    struct proxy_thread *t = &p->threads[p->cur];
    if (t->progress_left == 0)
        t->progress_left = DET_PROGRESS_QUANTUM;
    uint64_t budget = t->progress_left;
    if (!proxy_others_alive(p)) /* no one to give the vCPU to */
        budget = DET_PROGRESS_QUANTUM_ALONE;
    int64_t in = next_deadline_in(p->world);
    if (in > 0 && (uint64_t)in / DET_PROGRESS_UNIT_NS < budget)
        budget = (uint64_t)in / DET_PROGRESS_UNIT_NS + 1;
    return budget;
}

/* Time follows counted progress: DET_PROGRESS_UNIT_NS per unit, as a
 * computing thread's CPU time too. */
static void progress_fold(struct proxy_process *p, uint64_t units)
{
    if (units == 0)
        return;
    struct proxy_thread *t = &p->threads[p->cur];
    t->progress_left = units < t->progress_left ? t->progress_left - units
                                                : 0;
    det_clock_computed(p->det, units * DET_PROGRESS_UNIT_NS);
    proxy_cpu_charge(p, units * DET_PROGRESS_UNIT_NS);
}

/* The run of a thread --gdb single-steps is over: TF goes, from RFLAGS
 * and, at a syscall, from the R11 the SYSCALL saved it in, so neither the
 * guest (R11 after the call, a signal frame, a clone's registers) nor the
 * next run sees it. */
static void debugger_step_ran(struct proxy_process *p,
                              const struct vmm_event *ev)
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    r->rflags &= ~RFLAGS_TF;
    if (ev->kind == VMM_EVENT_SYSCALL)
        r->r11 &= ~RFLAGS_TF;
}

/* A replay of a run a signal stopped stops where it was recorded: once it
 * has the recorded settled events and detlog records, at the top of the
 * world loop or just before a thread runs (the turn's pick logs a record:
 * a signal that came before the picked thread made an event stopped the
 * recorded run there). The raw event count would not do: a computing
 * thread's clock reads folded when a signal or slice cut it are as many
 * as the host's timing gave, and a replay's thread, cut elsewhere,
 * reached the next record before its count did and went on past. */
static bool at_recorded_stop(const struct proxy_world *w)
{
    const struct proxy_config *cfg = w->procs[0]->cfg;
    const struct det_state *det = w->procs[0]->det;
    if (!cfg->stop_signal)
        return false;
    uint64_t settled = proxy_world_settled_events(w);
    return settled > cfg->stop_events ||
           (settled == cfg->stop_events && det->log.n >= cfg->stop_detlog);
}

/* Runs p's current thread to its next event. false: hvrun failed. */
static bool run_one(struct proxy_process *p)
{
    struct vmm_event ev;
    /* A traced thread's stops due before user code (ptrace.c); a call its
     * entry stop parked goes on before any signal. */
    if (proxy_ptrace_before_user(p))
        return true;
    if (!proxy_ptrace_call_first(p))
        proxy_signal_deliver_pending(p);
    if (at_recorded_stop(p->world))
        proxy_stop_signal = p->cfg->stop_signal;
    /* A stop the delivery made (SIGSTOP's, a tracee's) holds at once:
     * not one more instruction (kill(getpid(), SIGSTOP) then execve). */
    if (p->exited || p->stopped || proxy_stop_signal ||
        p->threads[p->cur].state == PROXY_THREAD_PTRACE_STOP)
        return true;
    bool others = proxy_others_alive(p);
    bool contended = others && proxy_others_runnable(p);
    if (contended && p->quantum_left > DET_SCHED_QUANTUM_CONTENDED)
        p->quantum_left = DET_SCHED_QUANTUM_CONTENDED;
    uint64_t slice = time_slice(p, others, contended);
    uint64_t run_for = slice;
    if (slice && p->slice_spent_ns)
        run_for = p->slice_spent_ns + SLICE_MIN_LEFT_NS >= slice
                      ? SLICE_MIN_LEFT_NS
                      : slice - p->slice_spent_ns;
    proxy_ptrace_load_debugregs(p);
    /* --gdb's single step: one instruction, TF set only for this run. */
    const struct proxy_debugger *dbg = p->cfg->debugger;
    bool dbg_step = dbg && dbg->stepping(dbg->ctx, p);
    if (dbg)
        dbg->load_debugregs(dbg->ctx, p);
    if (dbg_step)
        vmm_vm_regs(p->vm)->rflags |= RFLAGS_TF;
    int64_t started = host_monotonic_ns();
    proxy_hooks.vdso_enter(p);
    if (p->cfg->progress_count)
        proxy_hooks.progress_enter(p, progress_budget(p));
    int rc = vmm_vm_run_slice(p->vm, &ev, run_for);
    proxy_hooks.vdso_signals_back(p, ev.kind == VMM_EVENT_INTERRUPTED);
    /* A guest's file ids stay on from its last call (fscred.c) only for
     * its next one: anything else is hvrun's own work (a fault's core
     * dump, a signal's end of a process). */
    if (ev.kind != VMM_EVENT_SYSCALL)
        proxy_fscred_own();
    if (dbg_step)
        debugger_step_ran(p, &ev);
    /* A trap of the debugger's is no point of the guest's progress: as a
     * host interruption, it folds no vDSO reads into the detlog and ends
     * no slice, so the run goes on as it would have without it. */
    bool dbg_trap = dbg && ev.kind == VMM_EVENT_EXCEPTION &&
                    (ev.vector == 1 || ev.vector == 3) &&
                    dbg->owns_trap(dbg->ctx, p, ev.vector);
    /* The slice ran out. A thread that made events in it (clock reads
     * answered by the vDSO, trapped TSC reads) is not cut: its events
     * bring the points where it gives up the vCPU, the same in every run
     * (the vDSO's forced syscall, the end of its quantum, a deadline its
     * reads pass), where a host-timed cut would fall wherever a slow or
     * loaded host had it (QEMU's vCPU thread runs a guest kernel for
     * seconds reading the clock, with no syscall). Only a thread without
     * any event for a whole slice is cut. */
    bool slice_over = ev.kind == VMM_EVENT_INTERRUPTED && ev.slice_over &&
                      ev.in_user_code;
    /* Counted progress in this slice is such an event too: the counter's
     * trap will come. (Not units of an earlier slice: a thread that went
     * on into a loop nothing counts is cut as before.) */
    bool counted = false;
    if (p->cfg->progress_count) {
        uint64_t units = proxy_hooks.progress_unfolded(p);
        counted = units > p->slice_units_seen;
        p->slice_units_seen = units;
    }
    bool made_events = p->slice_events > 0 ||
                       proxy_hooks.vdso_unfolded(p) > 0 || counted;
    bool cut = slice_over && !made_events;
    bool host_stop = (ev.kind == VMM_EVENT_INTERRUPTED && !cut) || dbg_trap;
    p->slice_events += proxy_hooks.vdso_leave(p, host_stop);
    /* Units fold into logical time only at points of the program's own
     * that every run has: a syscall, an answered trap (#UD, #GP: the
     * counter's, a TSC or CPUID site). Not at a page fault, which under
     * ptrace may come where the host had the stub's memory in a state of
     * its own: a clock read in the guest (vDSO, RDTSC stub) sees logical
     * time as of the last fold, so a fold there would show. */
    bool fold_point = ev.kind == VMM_EVENT_SYSCALL ||
                      (ev.kind == VMM_EVENT_EXCEPTION &&
                       (ev.vector == 6 || ev.vector == 13));
    if (p->cfg->progress_count && !host_stop && fold_point) {
        progress_fold(p, proxy_hooks.progress_leave(p, false));
        p->slice_units_seen = 0;
    } else if (p->cfg->progress_count) {
        (void)proxy_hooks.progress_leave(p, true);
    }
    /* Only a syscall or the slice's end starts a new slice: a fault hvrun
     * resolves (or turns into a signal), a trapped RDTSC/CPUID, or a host
     * interruption, does not, and a spinner that faults now and then must
     * still be cut. */
    bool spent_cut = false;
    /* A debugger's trap (a step, a breakpoint) costs host time natively
     * nothing: not counted, so stepping never brings a cut. */
    if (ev.kind != VMM_EVENT_SYSCALL && !slice_over && !dbg_trap) {
        p->slice_spent_ns += (uint64_t)(host_monotonic_ns() - started);
        /* A spinner whose every turn is such an exit (a loop on a CPUID
         * hvrun answers) would have the timer re-armed at each one and
         * never fire: the slice ends when the exits' run time adds up to
         * it, and the thread is cut after hvrun has answered the exit. */
        spent_cut = slice && ev.kind == VMM_EVENT_EXCEPTION && !made_events &&
                    !dbg_trap && p->slice_spent_ns >= slice;
    }
    if (ev.kind == VMM_EVENT_SYSCALL || slice_over) {
        p->slice_spent_ns = 0;
        p->slice_events = 0;
    }
    if (rc < 0 && ev.kind != VMM_EVENT_FAILED) {
        proxy_log(p, 0, "KVM_RUN: %s", strerror(-rc));
        return false;
    }
    switch (ev.kind) {
    case VMM_EVENT_SYSCALL: {
        long nr = (long)vmm_vm_regs(p->vm)->rax;
        /* A spinner's signal handler returns through rt_sigreturn: still
         * the spinner. Any other call ends the spin. */
        if (nr != SYS_rt_sigreturn)
            p->threads[p->cur].spinning = false;
        bool forced_by_vdso =
            vdso_forced_call(p, vmm_vm_regs(p->vm)->rcx);
        /* A traced thread's syscall-enter-stop parks it here; a call its
         * tracer cancelled returns what the tracer set. */
        bool skip = false;
        long skip_ret = 0;
        if (proxy_ptrace_syscall_entry(p, &skip, &skip_ret))
            break;
        /* record/replay: data from outside */
        proxy_hooks.outside_pump(p->world);
        if (dbg)
            dbg->around_call(dbg->ctx, p, false);
        long ret = skip ? skip_ret : proxy_dispatch(p);
        if (dbg)
            dbg->around_call(dbg->ctx, p, true);
        proxy_ptrace_syscall_done(p, ret);
        if (ret != PROXY_RET_NORETURN && !p->exited)
            finish_syscall(p, ret);
        /* A thread this call woke (a futex wake, data on an fd it polls)
         * or whose deadline passed runs at once, at the same call in every
         * run; left to a slice, it would wait for host time. */
        if (ret != PROXY_RET_BLOCK && !p->exited &&
            ((may_wake_waiters(nr) && waiter_ready(p->world, p)) ||
             other_wants_vcpu(p->world, p)))
            p->resched = true;
        if (ret != PROXY_RET_BLOCK && !p->exited && forced_by_vdso &&
            proxy_others_alive(p))
            p->resched = true;
        if (p->quantum_left > 0)
            p->quantum_left--;
        if (!p->exited)
            count_event(p);
        /* gdb's step over a SYSCALL ends at the instruction after it, as
         * on Linux; a call that blocked ends the step when it completes. */
        if (dbg && !p->exited)
            dbg->syscall_done(dbg->ctx, p,
                              dbg_step && ret != PROXY_RET_BLOCK &&
                                  p->threads[p->cur].state ==
                                      PROXY_THREAD_RUNNABLE);
        break;
    }
    case VMM_EVENT_EXCEPTION:
        if (dbg_trap) {
            dbg->trap(dbg->ctx, p, ev.vector);
            break;
        }
        switch (proxy_hooks.cpuid_trap(p, &ev)) {
        case PROXY_TRAP_NONE:
            proxy_signal_fault(p, &ev);
            break;
        case PROXY_TRAP_CPUID:
        case PROXY_TRAP_RDPID:
            break;
        case PROXY_TRAP_TSC_GP: {
            /* At a rewritten site the exit was the UD2's #UD. */
            struct vmm_event gp = ev;
            gp.vector = 13;
            gp.error_code = 0;
            gp.fault_addr = 0;
            proxy_signal_fault(p, &gp);
            break;
        }
        case PROXY_TRAP_HOST_TSC:
            /* Host time: a thread whose host deadline passed runs at the
             * next read, as it would at the next syscall. */
            if (other_wants_vcpu(p->world, p))
                p->resched = true;
            break;
        case PROXY_TRAP_PROGRESS:
            /* The counter ran out: the thread's own progress brought it
             * here, the same instruction in every run. Another thread
             * may have its turn; a deadline the units passed is due. */
            if (proxy_others_alive(p) || other_wants_vcpu(p->world, p))
                p->resched = true;
            p->slice_events++;
            count_event(p);
            break;
        case PROXY_TRAP_TSC_FORCED:
            /* The stubs' reads spent their count: as at the vDSO's
             * forced syscall, another thread may have its turn here. */
            if (proxy_others_alive(p))
                p->resched = true;
            /* fall through */
        case PROXY_TRAP_TSC:
            /* A clock read and an exit: the point where a thread that
             * times itself with the TSC (a delay loop) gives the vCPU to
             * one that can run, or whose deadline that read passed, as at
             * a syscall. Each trap ends the KVM_RUN, so the host-timed
             * slice never would. */
            if (other_wants_vcpu(p->world, p))
                p->resched = true;
            if (p->quantum_left > 0)
                p->quantum_left--;
            p->slice_events++;
            count_event(p);
            break;
        }
        /* A trapped TSC read is an event (counted above): no cut there. */
        if (spent_cut && !p->exited && p->slice_events == 0) {
            p->slice_spent_ns = 0;
            preempt(p, others, slice);
        }
        break;
    case VMM_EVENT_INTERRUPTED:
        if (cut)
            preempt(p, others, slice);
        break;
    case VMM_EVENT_FAILED:
        proxy_log(p, 0, "guest VM failed: %s", ev.what);
        return false;
    }
    return true;
}

/* ---- what every thread waits on, when a run is stopped ------------------- */

static const char *const thread_state_names[] = {
    [PROXY_THREAD_RUNNABLE] = "runnable",
    [PROXY_THREAD_FUTEX_WAIT] = "futex wait",
    [PROXY_THREAD_EXITED] = "exited",
    [PROXY_THREAD_WAIT_FD] = "waits for an fd",
    [PROXY_THREAD_WAIT_CHILD] = "waits for a child",
    [PROXY_THREAD_WAIT_VFORK] = "waits for its vfork child",
    [PROXY_THREAD_WAIT_SLEEP] = "sleeps",
    [PROXY_THREAD_WAIT_RETRY] = "retries at a deadline",
    [PROXY_THREAD_WAIT_SIGNAL] = "waits for a signal",
    [PROXY_THREAD_PTRACE_STOP] = "stopped for its tracer",
};

/* One line per live thread at --log warn: a run stopped by a signal (a
 * timeout that killed a hung test) says where each thread was. */
static void log_thread_states(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (q->zombie)
            continue;
        int64_t now = det_clock_peek_ns(q->det, CLOCK_MONOTONIC);
        for (int k = 0; k < q->nr_threads; k++) {
            struct proxy_thread *t = &q->threads[k];
            if (t->state == PROXY_THREAD_EXITED)
                continue;
            char deadline[48] = "none", rip[32];
            /* Where a runnable thread was stopped, and which one had the
             * vCPU, is host-timed when the stop came after the last event
             * (a thread computing, cut by the signal or by a slice): a
             * recorded or replayed stop, which falls at the recorded
             * event, does not say them, so both print the same. A parked
             * thread's is at its syscall. */
            bool tap = q->cfg->file_tap != NULL;
            bool on_vcpu = i == w->cur && k == q->cur && !tap;
            if (tap && t->state == PROXY_THREAD_RUNNABLE)
                snprintf(rip, sizeof(rip), "(computing)");
            else
                snprintf(rip, sizeof(rip), "%#llx",
                         (unsigned long long)(k == q->cur
                                                  ? vmm_vm_regs(q->vm)->rip
                                                  : t->regs.rip));
            if (t->has_deadline)
                snprintf(deadline, sizeof(deadline), "in %lld ns",
                         (long long)((int64_t)t->deadline_ns - now));
            /* A host fd's number depends on what hvrun itself opened
             * (a replay reads its recording through more fds than the
             * recorded run had), and a recorded or replayed run's
             * stderr is compared: there it is not said. */
            char host_fd[24] = "-1";
            if (t->state == PROXY_THREAD_WAIT_FD)
                snprintf(host_fd, sizeof(host_fd), "%d", t->wait_host_fd);
            if (t->state == PROXY_THREAD_WAIT_FD && q->cfg->file_tap)
                snprintf(host_fd, sizeof(host_fd), "(open)");
            proxy_log(
                q, 1,
                "  process %d thread %d%s: %s (host fd %s events %#x, "
                "futex %#llx, deadline %s), pending %#llx mask %#llx, "
                "%llu syscalls, rip %s",
                q->pid, k == q->cur ? q->tid : t->tid,
                on_vcpu ? " on the vCPU" : "",
                thread_state_names[t->state], host_fd,
                (unsigned)t->wait_events, (unsigned long long)t->futex_uaddr,
                deadline, (unsigned long long)q->sig.pending_mask,
                (unsigned long long)(k == q->cur ? q->sig.sigmask : t->sigmask),
                (unsigned long long)q->nr_syscalls, rip);
        }
    }
}

static bool is_run_output(const struct proxy_world *w, uint64_t dev,
                          uint64_t ino)
{
    for (int i = 0; i < 2; i++)
        if (w->out_id[i][0] == dev && w->out_id[i][1] == ino &&
            (dev || ino))
            return true;
    return false;
}

bool proxy_world_output_held(struct proxy_world *w)
{
    for (int i = 1; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (q->zombie || q->exited)
            continue;
        for (int fd = 0; fd < q->fds.cap; fd++) {
            const struct proxy_fd *f = &q->fds.fds[fd];
            if (f->kind != PROXY_FD_HOST)
                continue;
            struct stat st;
            uint64_t dev = f->host_dev, ino = f->host_ino;
            if (!f->meta_known) {
                if (fstat(f->host_fd, &st) < 0)
                    continue;
                dev = st.st_dev;
                ino = st.st_ino;
            }
            if (is_run_output(w, dev, ino))
                return true;
        }
    }
    return false;
}

uint64_t proxy_world_settled_events(const struct proxy_world *w)
{
    uint64_t events = w->procs[0]->det->events;
    for (int i = 0; i < w->nr_procs; i++)
        events -= proxy_hooks.vdso_unlogged(w->procs[i]);
    return events;
}

static int world_loop(struct proxy_world *w);

int proxy_world_run(struct proxy_world *w)
{
    int rc = world_loop(w);
    proxy_fscred_own(); /* hvrun's ids for what follows the run */
    return rc;
}

static int world_loop(struct proxy_world *w)
{
    const struct proxy_config *cfg = w->procs[0]->cfg;
    const struct det_state *det = w->procs[0]->det;
    while (!w->ended) {
        if (at_recorded_stop(w))
            proxy_stop_signal = cfg->stop_signal; /* as it was recorded */
        if (proxy_stop_signal) {
            proxy_stop_detlog = det->log.n;
            proxy_stop_events = proxy_world_settled_events(w);
            log_thread_states(w);
            return (int)proxy_stop_signal; /* as if killed by it */
        }
        proxy_timer_fire_due(w);
        struct proxy_process *p = pick(w);
        if (!p) {
            if (wait_for_something(w))
                continue;
            proxy_log(w->procs[0], 0,
                      "deadlock: every guest thread waits and nothing can "
                      "wake one; ending the run");
            return -1;
        }
        if (cfg->debugger) {
            cfg->debugger->before_run(cfg->debugger->ctx, p);
            if (proxy_stop_signal) /* gdb's kill */
                continue;
        }
        if (!run_one(p))
            return -1;
        if (p->exited && !p->zombie && cfg->debugger)
            cfg->debugger->exited(cfg->debugger->ctx, p);
        if (p->exited && !p->zombie)
            proxy_world_exit(p);
        /* --linger: the run ends once no one holds its output. */
        if (w->first_done && !w->ended && !proxy_world_output_held(w))
            proxy_world_end(w);
        proxy_hooks.mem_check_oom(w);
    }
    return w->end_status;
}
