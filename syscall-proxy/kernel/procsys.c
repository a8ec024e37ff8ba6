/*
 * procsys.c - the process family across VMs: fork/vfork/clone of a
 * process, execve, exit into a zombie, wait4/waitid, and kill between
 * processes.
 *
 * A child is a new VM with a copy of the parent's address space (only
 * pages the parent really touched are copied), a dup of every fd (so open
 * file descriptions are shared as in Linux), and a copy of the rest of the
 * process. pids are handed out in fork order. With CLONE_VM (vfork,
 * posix_spawn, clone(CLONE_VM)) the child's VM runs on the parent's memory
 * instead (vmm_vm_create_sharing): one address space, one brk, private
 * futexes keyed by it, until the child execs or exits (then its
 * CLONE_CHILD_CLEARTID word is cleared there, proxy_mm_release). Not yet:
 * copy-on-write.
 */
#include "proxy.h"
#include "config.h"
#include "fdtable.h"
#include "hooks.h"
#include "kernel.h"
#include "internal.h"
#include "namespace.h"
#include "ptrace.h"
#include "det_sched.h"
#include "run_clock.h"

#include <errno.h>
#include <linux/auxvec.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_x86_64.h"
#include "det.h"

#define SIGBIT(s) (1ULL << ((s) - 1))

int proxy_world_add(struct proxy_world *w, struct proxy_process *p);
void proxy_world_remove(struct proxy_world *w, struct proxy_process *p);

void proxy_vm_retire(struct proxy_process *p, struct vmm_vm *vm)
{
    if (!vm)
        return;
    if (p->totals) {
        struct vmm_stats st;
        vmm_vm_get_stats(vm, &st);
        p->totals->exits += st.exits;
        p->totals->syscall_exits += st.syscall_exits;
        p->totals->exception_exits += st.exception_exits;
    }
    vmm_vm_destroy(vm);
}

/* ---- fork ---------------------------------------------------------------- */

static int clone_fds(struct proxy_process *c, const struct proxy_process *p)
{
    int rc = proxy_fdtable_init(&c->fds, p->fds.max_fds);
    for (int fd = 0; rc == 0 && fd < p->fds.cap; fd++) {
        struct proxy_fd *f = &p->fds.fds[fd]; /* its contexts are shared */
        if (f->kind == PROXY_FD_FREE)
            continue;
        /* the same description: the host fd is shared, not duplicated */
        rc = proxy_fd_install_at(&c->fds, fd, proxy_host_fd_ref(f->host_fd),
                                 f->cloexec);
        struct proxy_fd *cf = proxy_fd_get(&c->fds, fd);
        if (rc >= 0 && cf) {
            cf->det_random = f->det_random;
            cf->rand_checked = f->rand_checked;
            proxy_fd_share_context(cf, f);
        }
        rc = rc < 0 ? rc : 0;
    }
    return rc;
}

/* The child's only thread: the caller's registers, returning 0. */
static int child_thread(struct proxy_process *c, struct proxy_process *p,
                        gva_t stack, uint64_t flags, uint64_t tls)
{
    c->threads = calloc(4, sizeof(*c->threads));
    if (!c->threads)
        return -ENOMEM;
    c->cap_threads = 4;
    c->nr_threads = 1;
    c->cur = 0;
    struct vmm_regs *r = vmm_vm_regs(c->vm);
    *r = *vmm_vm_regs(p->vm);
    r->rax = 0;
    r->rip = r->rcx;
    r->rflags = r->r11;
    if (stack)
        r->rsp = stack;
    vmm_vm_set_fs_base(c->vm, (flags & CLONE_SETTLS) ? tls
                                                     : vmm_vm_fs_base(p->vm));
    vmm_vm_set_gs_base(c->vm, vmm_vm_gs_base(p->vm));
    vmm_vm_enter_user(c->vm);
    uint8_t *xs = malloc(VMM_XSAVE_MAX_BYTES);
    if (!xs)
        return -ENOMEM;
    int rc = vmm_vm_get_xstate(p->vm, xs, VMM_XSAVE_MAX_BYTES);
    if (rc == 0)
        rc = vmm_vm_set_xstate(c->vm, xs, VMM_XSAVE_MAX_BYTES);
    free(xs);
    c->threads[0].tid = c->pid;
    /* The forking thread's seccomp filters (a reference each). */
    c->threads[0].seccomp = p->threads[p->cur].seccomp;
    proxy_seccomp_ref(c->threads[0].seccomp);
    c->threads[0].seccomp_strict = p->threads[p->cur].seccomp_strict;
    /* rseq_fork: a fork keeps the registration, a CLONE_VM child has none */
    if (!(flags & CLONE_VM)) {
        c->threads[0].rseq = p->threads[p->cur].rseq;
        c->threads[0].rseq_len = p->threads[p->cur].rseq_len;
        c->threads[0].rseq_sig = p->threads[p->cur].rseq_sig;
    }
    c->threads[0].tsc_sigsegv = p->threads[p->cur].tsc_sigsegv;
    c->threads[0].state = PROXY_THREAD_RUNNABLE;
    /* A vfork child runs in its waiting parent's place, on what is left of
     * the parent's turn (Linux splits the parent's slice with a child
     * too). With a fresh turn each, a chain of vforks (stress-ng's
     * vforkmany) kept the vCPU for good: the next runnable thread is
     * looked for after the current one, where each new child is. */
    c->quantum_left = (flags & CLONE_VFORK) ? p->quantum_left
                                            : DET_SCHED_QUANTUM;
    return rc;
}

/* Everything but memory, fds and threads is copied from the parent;
 * System V attachments only with a copy of the memory (a CLONE_VM child
 * makes no new mappings, so it attaches nothing). */
static struct proxy_process *new_child(struct proxy_process *p,
                                       bool share_mm)
{
    struct proxy_process *c = malloc(sizeof(*c));
    if (!c)
        return NULL;
    memcpy(c, p, sizeof(*c));
    c->vm = NULL;
    c->as = NULL;
    c->threads = NULL;
    c->nr_threads = c->cap_threads = 0;
    memset(&c->fds, 0, sizeof(c->fds));
    c->fs.cwd_fd = fcntl(p->fs.cwd_fd, F_DUPFD_CLOEXEC, 3);
    c->pid = c->tid = proxy_world_next_id(p->world);
    if (p->totals)
        p->totals->tasks_made++;
    c->ppid = p->pid;
    c->sig.pending_mask = 0;
    c->sig.rt_queue = NULL; /* a child starts with no pending signals */
    c->aio = NULL;      /* nor AIO contexts (Linux does not copy them) */
    c->sig.nr_rt_queue = c->sig.cap_rt_queue = 0;
    c->exited = c->zombie = c->vfork_released = c->did_exec = false;
    c->stopped = c->report_stop = c->report_cont = false;
    c->ptrace_exit_tracer = 0;
    c->fs.tmp_owned = false; /* the first process owns the private /tmp */
    c->nr_syscalls = c->nr_unsupported = 0;
    c->clear_child_tid = 0;
    c->robust_list = 0; /* copy_process: a new task has no robust list */
    c->prctl.pdeathsig = 0;
    /* copy_signal: a new signal_struct is not a subreaper (the search for
     * one walks the ancestors, so it still finds the parent's) */
    c->prctl.child_subreaper = false;
    /* copy_process: the child's default slack is the parent's current one */
    c->prctl.timerslack_default_ns = p->prctl.timerslack_ns;
    if (c->prctl.sched_reset_on_fork) { /* SCHED_RESET_ON_FORK */
        c->prctl.sched_reset_on_fork = false;
        if (c->prctl.sched_policy != SCHED_NORMAL &&
            c->prctl.sched_policy != SCHED_BATCH &&
            c->prctl.sched_policy != SCHED_IDLE) {
            c->prctl.sched_policy = SCHED_NORMAL;
            c->prctl.sched_priority = 0;
        }
        if (c->prctl.nice < 0)
            c->prctl.nice = 0;
    }
    /* The forking thread's name, the groups (a copy of their own). */
    memcpy(c->comm, proxy_thread_comm(p), sizeof(c->comm));
    c->cred.groups = NULL;
    if (p->cred.nr_groups > 0 &&
        !(c->cred.groups =
              malloc((size_t)p->cred.nr_groups * sizeof(*c->cred.groups)))) {
        if (c->fs.cwd_fd >= 0)
            close(c->fs.cwd_fd);
        free(c);
        return NULL;
    }
    if (p->cred.nr_groups > 0)
        memcpy(c->cred.groups, p->cred.groups,
               (size_t)p->cred.nr_groups * sizeof(*c->cred.groups));
    c->resched = false;
    c->cpuid_patched = NULL; /* proxy_fork copies it */
    if (share_mm) {
        c->shm_attach = NULL;
        c->nr_shm_attach = 0;
    } else {
        c->mm_id = ++p->world->last_mm_id; /* a space of its own */
        proxy_shm_fork(p, c);
    }
    /* fork does not inherit the SEM_UNDO list; CLONE_SYSVSEM shares it
     * (proxy_fork) */
    c->sem_undo = NULL;
    proxy_timer_fork(c);
    return c;
}

/* ---- CLONE_FS ------------------------------------------------------------ */

/* Whether q is another live process on p's fs_struct. */
static bool shares_fs(const struct proxy_process *p,
                      const struct proxy_process *q)
{
    return q != p && !q->zombie && !q->exited && q->fs.fs_id == p->fs.fs_id;
}

/* Each process keeps its own host O_PATH fd of the cwd, so a chdir is
 * passed on as a dup of the new one. */
void proxy_fs_share_sync(struct proxy_process *p)
{
    for (int i = 0; p->world && i < p->world->nr_procs; i++) {
        struct proxy_process *q = p->world->procs[i];
        if (!shares_fs(p, q))
            continue;
        int fd = fcntl(p->fs.cwd_fd, F_DUPFD_CLOEXEC, 3);
        if (fd >= 0) {
            close(q->fs.cwd_fd);
            q->fs.cwd_fd = fd;
        }
        q->fs.umask = p->fs.umask;
    }
}

void proxy_fs_unshare(struct proxy_process *p)
{
    for (int i = 0; p->world && i < p->world->nr_procs; i++)
        if (shares_fs(p, p->world->procs[i])) {
            p->fs.fs_id = ++p->world->last_fs_id;
            return;
        }
}

/* A vfork by the only thread of its process: nothing runs on the
 * process's VM until the child execs or exits (WAIT_VFORK), so the child
 * may run on it (vmm_vm_create_vfork). */
static bool vfork_alone(const struct proxy_process *p, uint64_t flags)
{
    if (!(flags & CLONE_VFORK))
        return false;
    for (int i = 0; i < p->nr_threads; i++)
        if (i != p->cur && p->threads[i].state != PROXY_THREAD_EXITED)
            return false;
    return true;
}

long proxy_fork(struct proxy_process *p, uint64_t flags, gva_t stack,
                gva_t ptid, gva_t ctid, uint64_t tls)
{
    if (flags & CLONE_THREAD)
        return -EINVAL;
    long ns_rc = proxy_ns_clone_check(p, flags); /* CLONE_NEW* */
    if (ns_rc < 0)
        return ns_rc;
    /* CLONE_PIDFD: the pidfd goes where CLONE_PARENT_SETTID's pid would
     * (clone's parent_tid), so not both; the int must be writable, or no
     * child is made (copy_process puts it before the child runs). */
    if (flags & CLONE_PIDFD) {
        int32_t none = -1;
        if (flags & (CLONE_DETACHED | CLONE_PARENT_SETTID))
            return -EINVAL;
        if (proxy_copy_out(p, ptid, &none, sizeof(none)) < 0)
            return -EFAULT;
    }
    /* An init (of the run or of a pid namespace: SIGNAL_UNKILLABLE) has
     * no parent to give its child. */
    if ((flags & CLONE_PARENT) &&
        (p->ppid == 0 || proxy_ns_is_ns_init(p)))
        return -EINVAL;
    bool share_mm = flags & CLONE_VM;
    struct proxy_process *c = new_child(p, share_mm);
    if (!c)
        return -ENOMEM;
    if (flags & CLONE_PARENT) /* a sibling: its parent is p's parent */
        c->ppid = p->ppid;
    if (!(flags & CLONE_FS)) /* copy_fs: a copy of its own */
        c->fs.fs_id = ++p->world->last_fs_id;
    char why[256];
    /* A VM is hvrun's: made with its own ids (a ptrace stub opens the
     * shared memory through /proc/<hvrun>/fd; kernel/fscred.c). */
    const struct proxy_process *as_guest = proxy_fscred_suspend();
    int rc = share_mm && vfork_alone(p, flags)
                 ? vmm_vm_create_vfork(p->world->host, p->vm, &c->vm, why,
                                       sizeof(why))
             : share_mm ? vmm_vm_create_sharing(p->world->host, p->vm,
                                                &c->vm, why, sizeof(why))
                        : vmm_vm_create(p->world->host, &c->vm, why,
                                        sizeof(why));
    proxy_fscred_resume(as_guest);
    if (rc < 0) {
        proxy_log(p, 1, "fork: %s", why);
        free(c);
        return -EAGAIN;
    }
    c->as = vmm_vm_aspace(c->vm);
    uint64_t copy_t = vmm_clock_now();
    if (!share_mm)
        proxy_hooks.cpuid_join_texts(p);
    rc = share_mm ? 0 : vmm_as_clone(c->as, p->as);
    if (!share_mm)
        vmm_clock_add(VMM_CLOCK_FORK_COPY, copy_t);
    if (rc == 0 &&
        (rc = share_mm ? proxy_hooks.cpuid_share(c, p)
                       : proxy_hooks.cpuid_fork(c, p)) == 0 &&
        (rc = clone_fds(c, p)) == 0 &&
        (rc = child_thread(c, p, stack, flags, tls)) == 0 &&
        (rc = (int)proxy_ns_clone_apply(p, c, flags)) == 0 &&
        (rc = (int)proxy_ns_fork_pids(c, c)) == 0)
        rc = proxy_world_add(p->world, c);
    if (rc == 0) {
        proxy_keys_fork(c);
        proxy_perf_on_clone(p->world, p->threads[p->cur].tid, c->pid);
        if (flags & CLONE_SYSVSEM) /* copy_semundo: made if none, shared */
            proxy_sem_undo_share(p, c);
    }
    if (rc < 0) {
        vmm_vm_destroy(c->vm);
        proxy_process_destroy(c);
        return rc == -ENOMEM ? -ENOMEM : -EAGAIN;
    }
    /* its pid in the parent's pid namespace, and in its own */
    int32_t pid32 = proxy_ns_pid_of(p, c), own32 = proxy_ns_pid_of(c, c);
    if (flags & CLONE_PARENT_SETTID)
        proxy_copy_out(p, ptid, &pid32, 4);
    if (flags & CLONE_PIDFD) {
        int32_t pidfd = proxy_pidfd_install(p, c, false);
        proxy_copy_out(p, ptid, &pidfd, sizeof(pidfd));
    }
    if (flags & CLONE_CHILD_SETTID)
        vmm_as_copy_out(c->as, ctid, &own32, 4);
    if (flags & CLONE_CHILD_CLEARTID)
        c->clear_child_tid = ctid;
    proxy_ptrace_on_clone(p, c, &c->threads[0], flags);
    if (flags & CLONE_VFORK) {
        /* The parent sleeps until the child execs or exits; its syscall
         * has already returned the child's pid. */
        struct proxy_thread *t = &p->threads[p->cur];
        t->state = PROXY_THREAD_WAIT_VFORK;
        t->wait_vfork_pid = c->pid;
        p->resched = true;
        proxy_ptrace_vfork_started(p);
    }
    return pid32;
}

static long sys_fork(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_fork(p, SIGCHLD, 0, 0, 0, 0);
}

static long sys_vfork(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_fork(p, CLONE_VFORK | CLONE_VM | SIGCHLD, 0, 0, 0, 0);
}

/* ---- exit and wait ------------------------------------------------------- */

enum child_event { EV_NONE, EV_EXITED, EV_STOPPED, EV_CONTINUED };
static void fill_child_info(siginfo_t *info, const struct proxy_process *to,
                            const struct proxy_process *c,
                            enum child_event ev);

static bool ignores_sigchld(const struct proxy_process *p)
{
    const struct proxy_sigaction *sa = &p->sig.sigactions[SIGCHLD];
    return sa->handler == (uint64_t)(uintptr_t)SIG_IGN ||
           (sa->flags & SA_NOCLDWAIT);
}

static void reap(struct proxy_process *c)
{
    proxy_world_remove(c->world, c);
    proxy_process_destroy(c);
}

static void notify_parent(struct proxy_process *c)
{
    struct proxy_process *parent = proxy_world_find(c->world, c->ppid);
    if (!parent || parent->zombie) {
        reap(c);
        return;
    }
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    fill_child_info(&info, parent, c, EV_EXITED);
    if (ignores_sigchld(parent)) {
        reap(c);
        return;
    }
    proxy_signal_raise(parent, SIGCHLD, &info);
}

void proxy_process_notify_parent(struct proxy_process *c)
{
    notify_parent(c);
}

/* SIGCHLD with CLD_STOPPED/CLD_CONTINUED, unless the parent asked not. */
static void notify_job_change(struct proxy_process *c, int code, int status)
{
    struct proxy_process *parent = proxy_world_find(c->world, c->ppid);
    if (!parent || parent->zombie ||
        (parent->sig.sigactions[SIGCHLD].flags & SA_NOCLDSTOP) ||
        parent->sig.sigactions[SIGCHLD].handler == (uint64_t)(uintptr_t)SIG_IGN)
        return;
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = SIGCHLD;
    info.si_code = code;
    info.si_pid = proxy_ns_pid_of(parent, c);
    info.si_uid = c->cred.ruid;
    info.si_status = status;
    proxy_signal_raise(parent, SIGCHLD, &info);
}

void proxy_process_stop(struct proxy_process *p, int sig)
{
    if (p->stopped || p->zombie)
        return;
    p->stopped = true;
    p->stop_sig = sig;
    proxy_xfer_end_on_stop(p);
    p->report_stop = true;
    p->report_cont = false;
    p->resched = true;
    notify_job_change(p, CLD_STOPPED, sig);
}

void proxy_process_continue(struct proxy_process *p)
{
    if (!p->stopped)
        return;
    p->stopped = false;
    p->report_cont = true;
    p->report_stop = false;
    notify_job_change(p, CLD_CONTINUED, SIGCONT);
}

static void end_run(struct proxy_world *w, struct proxy_process *first);

void proxy_world_end(struct proxy_world *w)
{
    end_run(w, w->procs[0]);
}

static void end_run(struct proxy_world *w, struct proxy_process *first)
{
    w->ended = true;
    w->end_status = first->exit_status;
    /* As the init of a pid namespace: everything else dies with it. */
    for (int i = w->nr_procs - 1; i >= 1; i--) {
        struct proxy_process *q = w->procs[i];
        proxy_vm_retire(q, q->vm);
        q->vm = NULL;
        proxy_world_remove(w, q);
        proxy_process_destroy(q);
    }
}

/* Orphans go to the nearest living ancestor that set
 * PR_SET_CHILD_SUBREAPER, else to the run's init: the virtual one (pid 1,
 * which reaps them: notify_parent finds no process), or the first
 * process under --as-init. */
static int new_parent_of_orphans(struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    /* A chain of 3000 vforks exits link by link: no walk up each one's
     * ancestors where none can be a subreaper. */
    struct proxy_process *a =
        w->subreapers_made ? proxy_world_find(w, p->ppid) : NULL;
    for (int depth = 0; a && depth < w->nr_procs; depth++) {
        if (!a->zombie && a->prctl.child_subreaper &&
            a->cred.pidns ==
                p->cred.pidns) /* a subreaper of its own pid namespace */
            return a->pid;
        a = proxy_world_find(w, a->ppid);
    }
    /* the init of its pid namespace, if that is not p itself */
    struct proxy_process *init = proxy_world_find(w, proxy_ns_reaper(p));
    if (init && init != p && !init->zombie)
        return init->pid;
    return p->cfg->as_init ? w->procs[0]->pid : PROXY_INIT_PID;
}

/* forget_original_parent: p's children go to their new parent; one that
 * is already a zombie is told to it (and so reaped by the virtual init,
 * or by a parent that ignores SIGCHLD), as reparent_leader does. */
static void reparent_children(struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    int reaper = new_parent_of_orphans(p);
    struct proxy_process **zombies = calloc((size_t)w->nr_procs,
                                            sizeof(*zombies));
    int nr_zombies = 0;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *c = w->procs[i];
        if (c->ppid != p->pid || c == p)
            continue;
        c->ppid = reaper;
        if (zombies && c->zombie && !proxy_ptrace_exit_hidden(c))
            zombies[nr_zombies++] = c;
    }
    /* After the loop: notify_parent may reap, which reorders the list. */
    for (int i = 0; i < nr_zombies; i++)
        notify_parent(zombies[i]);
    free(zombies);
}

static void send(struct proxy_process *from, struct proxy_process *to,
                 int sig, int code);

/* The init of a pid namespace died: every other process in it (and
 * below) gets SIGKILL, and it takes no new process (zap_pid_ns_processes). */
static void zap_pid_namespace(struct proxy_process *init)
{
    if (!proxy_ns_is_ns_init(init))
        return;
    proxy_ns_init_gone(init);
    struct proxy_world *w = init->world;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (!q->zombie && proxy_ns_pid_below(init, q))
            send(init, q, SIGKILL, SI_KERNEL);
    }
}

/* PR_SET_PDEATHSIG: each child that asked gets its signal when its
 * parent dies, from the parent (SI_USER), as Linux sends it. */
static void send_death_signals(struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *c = w->procs[i];
        if (c != p && c->ppid == p->pid && !c->zombie &&
            c->prctl.pdeathsig)
            send(p, c, c->prctl.pdeathsig, SI_USER);
    }
}

void proxy_world_exit(struct proxy_process *p)
{
    struct proxy_world *w = p->world;
    bool first = p == w->procs[0] &&
                 p->ppid == (p->cfg->as_init ? 0 : PROXY_SHELL_PID);
    /* Its threads' robust futexes, while its memory is still there; the
     * CLONE_CHILD_CLEARTID words where another process shares it. */
    proxy_robust_lists_exit(p);
    proxy_mm_release(p);
    struct proxy_process *sharer = proxy_as_other_user(p);
    if (sharer)
        proxy_shm_hand_over(p, sharer);
    else
        proxy_shm_detach_all(p);
    proxy_sem_exit(p);
    proxy_keys_exit(p);
    if (first && !(p->cfg->linger && proxy_world_output_held(w))) {
        end_run(w, p);
        return;
    }
    p->zombie = true;
    proxy_pidfd_exited(p); /* its pidfds poll readable */
    proxy_hooks.tty_exit(p); /* a session leader hangs its terminal up */
    /* Closing every fd now gives the readers of its pipes their EOF. */
    proxy_fdtable_destroy(&p->fds);
    send_death_signals(p);
    zap_pid_namespace(p);
    if (first) {
        /* --linger: a zombie for the virtual shell, its VM the caller's to
         * count and free; the run ends when its output is let go. Under
         * --as-init it stays the run's init (its orphans' parent). */
        w->first_done = true;
        if (!p->cfg->as_init)
            reparent_children(p);
        return;
    }
    proxy_vm_retire(p, p->vm);
    p->vm = NULL;
    p->as = NULL;
    reparent_children(p);
    /* Its tracees let go; a tracer not its parent is told first. */
    if (!proxy_ptrace_exit(p))
        notify_parent(p);
}

static bool child_matches(const struct proxy_process *p,
                          const struct proxy_process *c, int pid)
{
    if (c->ppid != p->pid || c == p)
        return false;
    if (pid > 0)
        return c->pid == pid;
    if (pid == 0)
        return c->pgid == p->pgid;
    if (pid < -1)
        return c->pgid == -pid;
    return true;
}

/* The first child matching pid with something for a wait with these
 * options to report; *any says whether any child matched at all. */
static struct proxy_process *find_event(struct proxy_process *p, int pid,
                                        int options, bool *any,
                                        enum child_event *ev)
{
    *any = false;
    *ev = EV_NONE;
    for (int i = 0; i < p->world->nr_procs; i++) {
        struct proxy_process *c = p->world->procs[i];
        if (!child_matches(p, c, pid))
            continue;
        *any = true;
        if (c->zombie && proxy_ptrace_exit_hidden(c))
            continue; /* its tracer is told first */
        if (c->zombie && (options & WEXITED))
            *ev = EV_EXITED;
        else if (c->report_stop && (options & WUNTRACED))
            *ev = EV_STOPPED;
        else if (c->report_cont && (options & WCONTINUED))
            *ev = EV_CONTINUED;
        if (*ev != EV_NONE)
            return c;
    }
    return NULL;
}

/* The wait status word of an event (wait4's *wstatus). */
static int status_of(const struct proxy_process *c, enum child_event ev)
{
    if (ev == EV_STOPPED)
        return (c->stop_sig << 8) | 0x7f;
    if (ev == EV_CONTINUED)
        return 0xffff;
    return c->exit_status;
}

/* After reporting: an exit reaps (unless WNOWAIT), a stop/continue is
 * told once. */
static void consume(struct proxy_process *c, enum child_event ev,
                    bool nowait)
{
    if (nowait)
        return;
    if (ev == EV_EXITED)
        reap(c);
    else if (ev == EV_STOPPED)
        c->report_stop = false;
    else if (ev == EV_CONTINUED)
        c->report_cont = false;
}

/* A wait's pid argument in the caller's pid namespace, as a pid of the
 * run: a pid, or minus a process group (INT_MAX: matches nothing). */
static int wait_target(struct proxy_process *p, int pid)
{
    if (pid == -1 || pid == 0)
        return pid;
    int g = proxy_ns_global_nr(p, pid > 0 ? pid : -pid);
    if (g < 0)
        return pid > 0 ? INT_MAX : -INT_MAX;
    return pid > 0 ? g : -g;
}

static long park_for_child(struct proxy_process *p, int pid, int options)
{
    struct proxy_thread *t = &p->threads[p->cur];
    t->state = PROXY_THREAD_WAIT_CHILD;
    t->wait_pid = pid;
    t->wait_options = options;
    return PROXY_RET_BLOCK;
}

bool proxy_wait_would_end(struct proxy_process *p, int pid, int options)
{
    int traced = proxy_ptrace_wait(p, pid, options, true, NULL, NULL, NULL);
    if (traced == 1)
        return true;
    bool any;
    enum child_event ev;
    if (find_event(p, pid, options, &any, &ev))
        return true;
    return !any && traced < 0; /* ECHILD now */
}

/* wait4's status and rusage out; returns the pid reported. */
static long report_wait4(struct proxy_process *p, const uint64_t a[6],
                         int status, int who)
{
    if (a[1] && proxy_copy_out(p, a[1], &status, sizeof(status)) < 0)
        return -EFAULT;
    if (a[3]) {
        struct rusage ru;
        memset(&ru, 0, sizeof(ru));
        if (proxy_copy_out(p, a[3], &ru, sizeof(ru)) < 0)
            return -EFAULT;
    }
    return who;
}

static long sys_wait4(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0], options = (int)a[2];
    if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WALL | __WCLONE |
                    __WNOTHREAD))
        return -EINVAL;
    if (pid == INT_MIN) /* no process group -INT_MIN (kernel_wait4) */
        return -ESRCH;
    pid = wait_target(p, pid);
    options |= WEXITED;
    int status, who;
    int traced = proxy_ptrace_wait(p, pid, options, false, &status, NULL,
                                   &who);
    if (traced == 1)
        return report_wait4(p, a, status, who);
    bool any;
    enum child_event ev;
    struct proxy_process *c = find_event(p, pid, options, &any, &ev);
    if (!any && traced < 0)
        return -ECHILD;
    if (!c)
        return (options & WNOHANG) ? 0 : park_for_child(p, pid, options);
    long rc = report_wait4(p, a, status_of(c, ev), proxy_ns_pid_of(p, c));
    if (rc >= 0)
        consume(c, ev, false);
    return rc;
}

static void fill_child_info(siginfo_t *info, const struct proxy_process *to,
                            const struct proxy_process *c,
                            enum child_event ev)
{
    bool signaled = (c->exit_status & 0x7f) != 0;
    info->si_signo = SIGCHLD;
    info->si_pid = proxy_ns_pid_of(to, c);
    info->si_uid = c->cred.ruid;
    if (ev == EV_STOPPED) {
        info->si_code = CLD_STOPPED;
        info->si_status = c->stop_sig;
    } else if (ev == EV_CONTINUED) {
        info->si_code = CLD_CONTINUED;
        info->si_status = SIGCONT;
    } else {
        info->si_code = !signaled                   ? CLD_EXITED
                        : (c->exit_status & 0x80) ? CLD_DUMPED
                                                  : CLD_KILLED;
        info->si_status = signaled ? (c->exit_status & 0x7f)
                                   : ((c->exit_status >> 8) & 0xff);
    }
}

static long sys_waitid(struct proxy_process *p, const uint64_t a[6])
{
    int idtype = (int)a[0], id = (int)a[1], options = (int)a[3];
    if (!(options & (WEXITED | WSTOPPED | WCONTINUED)) ||
        (options & ~(WNOHANG | WEXITED | WSTOPPED | WCONTINUED | WNOWAIT |
                     __WALL | __WCLONE | __WNOTHREAD)))
        return -EINVAL;
    /* P_PIDFD: the process the pidfd names; an O_NONBLOCK pidfd makes a
     * wait that would block EAGAIN (Linux 5.10) */
    bool pidfd_nonblock = false;
    if (idtype == P_PIDFD) {
        long r = id < 0 ? -EINVAL
                        : proxy_pidfd_target(p, id, &id, &pidfd_nonblock);
        if (r < 0)
            return r;
        idtype = P_PID;
    }
    if (idtype != P_PID && idtype != P_PGID && idtype != P_ALL)
        return -EINVAL;
    if ((idtype == P_PID && id <= 0) || (idtype == P_PGID && id < 0))
        return -EINVAL;
    /* P_PGID 0 is the caller's own group (Linux 5.4). */
    int pid = idtype == P_PID    ? wait_target(p, id)
              : idtype == P_PGID ? (id ? wait_target(p, -id) : -p->pgid)
                                 : -1;
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    int status, who;
    int traced = proxy_ptrace_wait(p, pid, options, true, &status, &info,
                                   &who);
    if (traced == 1) {
        if (a[2] && proxy_copy_out(p, a[2], &info, sizeof(info)) < 0)
            return -EFAULT;
        if (!(options & WNOWAIT))
            proxy_ptrace_wait(p, pid, options, false, &status, &info, &who);
        return 0;
    }
    memset(&info, 0, sizeof(info));
    bool any;
    enum child_event ev;
    struct proxy_process *c = find_event(p, pid, options, &any, &ev);
    if (!any && traced < 0)
        return -ECHILD;
    if (!c && !(options & WNOHANG))
        return pidfd_nonblock ? -EAGAIN : park_for_child(p, pid, options);
    if (c)
        fill_child_info(&info, p, c, ev);
    if (a[2] && proxy_copy_out(p, a[2], &info, sizeof(info)) < 0)
        return -EFAULT;
    if (c)
        consume(c, ev, options & WNOWAIT);
    return 0;
}

/* ---- execve -------------------------------------------------------------- */

/*
 * What argv and envp may take (bprm_stack_limits): a quarter of the stack
 * rlimit, at least ARG_MAX (128 KiB) and at most 2 MiB (the initial stack
 * hvrun builds; Linux allows up to 6 MiB with a stack rlimit past 8 MiB),
 * for the strings with their NULs and a pointer each. There is no limit
 * on the count itself; each string is at most MAX_ARG_STRLEN.
 */
static int64_t exec_arg_budget(const struct proxy_process *p)
{
    uint64_t quarter = p->rlimits[RLIMIT_STACK].rlim_cur / 4;
    if (quarter < (128ULL << 10))
        quarter = 128ULL << 10;
    if (quarter > (2ULL << 20))
        quarter = 2ULL << 20;
    return (int64_t)quarter;
}

static void free_strings(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* Copies a NULL-terminated guest array of strings, each taking its
 * bytes and a pointer from *budget (-E2BIG when it runs out). */
static long strings_in(struct proxy_process *p, gva_t vec, int64_t *budget,
                       char ***out)
{
    size_t cap = 16, n = 0;
    char **v = calloc(cap, sizeof(char *));
    long rc = v ? 0 : -ENOMEM;
    for (; rc == 0 && vec; n++) {
        uint64_t ptr;
        if ((rc = proxy_copy_in(p, &ptr, vec + n * 8, 8)) < 0 || !ptr)
            break;
        if (n + 2 >= cap) {
            char **g = realloc(v, cap * 2 * sizeof(char *));
            if (!g) {
                rc = -ENOMEM;
                break;
            }
            v = g;
            memset(v + cap, 0, cap * sizeof(char *));
            cap *= 2;
        }
        char buf[131072]; /* MAX_ARG_STRLEN, the NUL included */
        long len = vmm_as_strncpy_in(p->as, buf, ptr, sizeof(buf));
        if (len < 0) {
            rc = len == -ENAMETOOLONG ? -E2BIG : len;
            break;
        }
        *budget -= len + 1 + 8;
        if (*budget < 0) {
            rc = -E2BIG;
            break;
        }
        if (!(v[n] = strdup(buf)))
            rc = -ENOMEM;
    }
    if (rc < 0) {
        free_strings(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* The program's stat and whether its mount is nosuid (0: none found). */
struct exec_file {
    bool known, nosuid;
    struct stat st;
};

static void exec_file_of(struct proxy_process *p, const char *path,
                         struct exec_file *f)
{
    memset(f, 0, sizeof(*f));
    int fd = openat(p->fs.cwd_fd, path, O_PATH | O_CLOEXEC);
    struct statvfs vfs;
    if (fd < 0)
        return;
    f->known = fstat(fd, &f->st) == 0 && fstatvfs(fd, &vfs) == 0;
    f->nosuid = f->known && (vfs.f_flag & ST_NOSUID);
    close(fd);
    /* a #! script runs as its interpreter's file: its own set-ID bits
     * are not honoured (binfmt_script replaces bprm->file) */
    char magic[2];
    fd = f->known && S_ISREG(f->st.st_mode) &&
                 (f->st.st_mode & (S_ISUID | S_ISGID))
             ? openat(p->fs.cwd_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
             : -1;
    if (fd >= 0 && pread(fd, magic, 2, 0) == 2 && magic[0] == '#' &&
        magic[1] == '!')
        f->st.st_mode &= ~(mode_t)(S_ISUID | S_ISGID);
    if (fd >= 0)
        close(fd);
}

/* Whether a tracer without CAP_SYS_PTRACE (not root) traces p's caller. */
static bool traced_unprivileged(struct proxy_process *p)
{
    int tracer = p->threads[p->cur].pt.tracer;
    struct proxy_process *t = tracer ? proxy_world_find(p->world, tracer) : NULL;
    return t && t->cred.euid != 0;
}

/*
 * The new image's auxv after a set-ID exec (its effective ids not its
 * real ones): AT_SECURE 1 (bprm->secureexec: ld.so then ignores
 * LD_PRELOAD, LD_LIBRARY_PATH and the like, as for any set-ID program),
 * AT_EUID and AT_EGID the new ids. The loader built the vector with the
 * caller's ids, before exec_reset gave the file's.
 */
static void exec_secure_auxv(struct proxy_process *p)
{
    if (p->cred.euid == p->cred.ruid && p->cred.egid == p->cred.rgid)
        return;
    uint64_t argc, w;
    gva_t at = p->mm.start_stack;
    if (!at || proxy_copy_in(p, &argc, at, 8) < 0)
        return;
    at += 8 * (argc + 2); /* past argc, argv and its NULL */
    for (int i = 0; i < 65536; i++, at += 8) /* past envp and its NULL */
        if (proxy_copy_in(p, &w, at, 8) < 0 || w == 0)
            break;
    at += 8;
    for (int i = 0; i < 64; i++, at += 16) {
        uint64_t pair[2];
        if (proxy_copy_in(p, pair, at, sizeof(pair)) < 0 || pair[0] == AT_NULL)
            return;
        uint64_t v = pair[0] == AT_SECURE ? 1
                     : pair[0] == AT_EUID ? (uint64_t)proxy_ns_uid_seen(p, p->cred.euid)
                     : pair[0] == AT_EGID ? (uint64_t)proxy_ns_gid_seen(p, p->cred.egid)
                                          : pair[1];
        if (v != pair[1])
            (void)proxy_copy_out(p, at + 8, &v, sizeof(v));
    }
}

/* After a successful exec: what Linux resets. */
static void exec_reset(struct proxy_process *p, const struct exec_file *file)
{
    proxy_cred_exec(p, file->known ? &file->st : NULL, file->nosuid,
                    traced_unprivileged(p));
    proxy_shm_detach_all(p); /* the old address space is gone */
    p->mm.nr_range_policy = 0; /* and its VMAs' mbind policies */
    p->prctl.keepcaps = false; /* Linux clears it at every execve */
    p->prctl.membarrier_registered = 0; /* a new mm (membarrier_exec_mmap) */
    proxy_ns_exec(p); /* capabilities from the euid again */
    p->cred.fsuid = p->cred.euid; /* cap_bprm_creds_from_file */
    p->cred.fsgid = p->cred.egid;
    proxy_keys_exec(p); /* thread and process keyrings go */
    proxy_perf_on_exec(p->world, p->threads[p->cur].tid);
    for (int s = 1; s < PROXY_NSIG; s++) {
        struct proxy_sigaction *sa = &p->sig.sigactions[s];
        if (sa->handler != (uint64_t)(uintptr_t)SIG_IGN)
            sa->handler = (uint64_t)(uintptr_t)SIG_DFL;
        sa->flags = 0;
        sa->mask = 0;
        sa->restorer = 0;
    }
    p->sig.altstack.ss_flags = SS_DISABLE;
    p->sig.altstack.ss_sp = NULL;
    p->sig.altstack.ss_size = 0;
    p->clear_child_tid = 0;
    p->robust_list = 0;
    proxy_fd_close_on_exec(&p->fds);
    proxy_hooks.aio_release(p); /* the old memory's contexts (exit_aio) */
    /* The new image's thread goes on counting events from where the
     * process's threads were, so "thread TID's N-th event" (--schedule)
     * names one moment only. */
    uint64_t events = 0, cpu_ns = p->threads[p->cur].cpu_ns;
    for (int i = 0; i < p->nr_threads; i++) {
        events = p->threads[i].events > events ? p->threads[i].events : events;
        if (i != p->cur) /* the process's CPU time keeps theirs */
            p->gone_threads_cpu_ns += p->threads[i].cpu_ns;
    }
    /* execve keeps the caller's seccomp filters; the other threads go. */
    struct proxy_seccomp_filter *filters = p->threads[p->cur].seccomp;
    bool strict = p->threads[p->cur].seccomp_strict;
    bool no_tsc = p->threads[p->cur].tsc_sigsegv;
    struct proxy_ptrace traced = p->threads[p->cur].pt; /* stays traced */
    for (int i = 0; i < p->nr_threads; i++) {
        free(p->threads[i].xstate);
        free(p->threads[i].own_info);
        free(p->threads[i].futex_waitv_keys);
        proxy_thread_io_release(&p->threads[i]);
        if (i != p->cur)
            proxy_seccomp_unref(p->threads[i].seccomp);
    }
    memset(p->threads, 0, sizeof(*p->threads) * (size_t)p->cap_threads);
    p->threads[0].seccomp = filters;
    p->threads[0].seccomp_strict = strict;
    p->threads[0].tsc_sigsegv = no_tsc;
    p->threads[0].pt = traced;
    p->nr_threads = 1;
    p->cur = 0;
    p->tid = p->pid;
    p->threads[0].tid = p->pid;
    p->threads[0].state = PROXY_THREAD_RUNNABLE;
    p->threads[0].events = events;
    p->threads[0].cpu_ns = cpu_ns;
    p->vfork_released = true;
    proxy_timer_exec(p);
}

static long do_execve(struct proxy_process *p, int dirfd, gva_t path_gva,
                      gva_t argv_gva, gva_t envp_gva, int flags)
{
    char guest_path[PROXY_PATH_MAX], path[PROXY_PATH_MAX];
    long rc = proxy_path_in(p, guest_path, path_gva);
    if (rc < 0)
        return rc;
    if (!guest_path[0] && !(flags & AT_EMPTY_PATH))
        return -ENOENT;
    if ((rc = proxy_hooks.path_rewrite(p, guest_path, path, sizeof(path))) < 0)
        return rc;
    char **argv = NULL, **envp = NULL;
    int64_t budget = exec_arg_budget(p) - (int64_t)strlen(guest_path) - 1;
    if ((rc = strings_in(p, argv_gva, &budget, &argv)) < 0 ||
        (rc = strings_in(p, envp_gva, &budget, &envp)) < 0) {
        free_strings(argv);
        return rc;
    }
    /* do_execveat_common (5.18 on): an empty argv gets "" as argv[0], so
     * a program that starts at argv[1] does not walk into envp. */
    if (!argv[0] && !(argv[0] = strdup(""))) {
        free_strings(argv);
        free_strings(envp);
        return -ENOMEM;
    }
    /* do_open_execat's checks, after the strings are copied (Linux 6.1):
     * flags beyond the two it knows are EINVAL. */
    if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
        free_strings(argv);
        free_strings(envp);
        return -EINVAL;
    }
    /* Relative to dirfd: the loader resolves against the guest cwd. */
    if (dirfd != AT_FDCWD && path[0] != '/') {
        int host = proxy_fd_host(&p->fds, dirfd);
        if (host < 0) {
            free_strings(argv);
            free_strings(envp);
            return host;
        }
        char tmp[PROXY_PATH_MAX + 32];
        /* fexecve: execveat(fd, "", AT_EMPTY_PATH) runs the fd's file. */
        int n = path[0] ? snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d/%s",
                                   host, path)
                        : snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", host);
        if (n < 0 || (size_t)n >= sizeof(path)) {
            free_strings(argv);
            free_strings(envp);
            return -ENAMETOOLONG;
        }
        memcpy(path, tmp, (size_t)n + 1);
    }
    /* AT_SYMLINK_NOFOLLOW: a trailing symlink is not followed, and the
     * open of a symlink for exec is ELOOP (may_open). An empty path names
     * the fd's own file, never a link. */
    struct stat link_st;
    if ((flags & AT_SYMLINK_NOFOLLOW) && guest_path[0] &&
        fstatat(p->fs.cwd_fd, path, &link_st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(link_st.st_mode)) {
        rc = -ELOOP;
        goto out;
    }
    /* A PATH search (execvp, env, a #! line through env) tries each
     * directory in turn, most failing ENOENT: known before a VM is made
     * (a VM costs ~1 ms under ptrace). */
    if ((rc = proxy_hooks.exec_missing(p, path)) < 0)
        goto out;
    struct exec_file file;
    exec_file_of(p, path, &file);
    struct vmm_vm *old_vm = p->vm, *vm;
    char why[512];
    const struct proxy_process *as_guest = proxy_fscred_suspend();
    rc = vmm_vm_create(p->world->host, &vm, why, sizeof(why));
    proxy_fscred_resume(as_guest);
    if (rc < 0) {
        proxy_log(p, 1, "execve: %s", why);
        rc = -ENOMEM;
        goto out;
    }
    p->vm = vm;
    p->as = vmm_vm_aspace(vm);
    struct proxy_cpuid_patched *old_sites = proxy_hooks.cpuid_exec_begin(p);
    rc = proxy_hooks.exec_load(p, path, guest_path, argv, envp, why,
                               sizeof(why));
    proxy_hooks.cpuid_exec_end(p, old_sites, rc == 0);
    if (rc < 0) {
        /* A failed exec leaves the caller as it was. */
        vmm_vm_destroy(vm);
        p->vm = old_vm;
        p->as = vmm_vm_aspace(old_vm);
        goto out;
    }
    /* Leaving memory another process still runs on (a vfork child's
     * exec): the robust lists and CLONE_CHILD_CLEARTID words there. */
    struct vmm_aspace *new_as = p->as;
    p->as = vmm_vm_aspace(old_vm);
    struct proxy_process *sharer = proxy_as_other_user(p);
    if (sharer) {
        proxy_robust_lists_exit(p);
        proxy_mm_release(p);
        proxy_shm_hand_over(p, sharer);
    }
    p->as = new_as;
    p->mm_id = ++p->world->last_mm_id;
    proxy_vm_retire(p, old_vm);
    int old_tid = p->tid;
    exec_reset(p, &file);
    exec_secure_auxv(p);
    p->did_exec = true; /* PF_FORKNOEXEC cleared: setpgid's EACCES */
    proxy_ptrace_on_exec(p, old_tid);
    rc = PROXY_RET_REGS_SET;
out:
    free_strings(argv);
    free_strings(envp);
    return rc;
}

static long sys_execve(struct proxy_process *p, const uint64_t a[6])
{
    return do_execve(p, AT_FDCWD, a[0], a[1], a[2], 0);
}

static long sys_execveat(struct proxy_process *p, const uint64_t a[6])
{
    return do_execve(p, (int)a[0], a[1], a[2], a[3], (int)a[4]);
}

/* ---- kill ---------------------------------------------------------------- */

static int send_to(struct proxy_process *from, struct proxy_process *to,
                   int tid, int sig, int code);

static void send(struct proxy_process *from, struct proxy_process *to,
                 int sig, int code)
{
    (void)send_to(from, to, 0, sig, code); /* kill()'s: never refused */
}

/* Whether an init (SIGNAL_UNKILLABLE: a pid namespace's, or the first
 * process under --as-init) ignores sig from `from`: one it has no handler
 * for, unless SIGKILL or SIGSTOP from outside its namespace
 * (sig_task_ignored). */
static bool init_ignores(const struct proxy_process *from,
                         const struct proxy_process *to, int sig)
{
    bool run_init = to->cfg->as_init && to == to->world->procs[0];
    if (!run_init && !proxy_ns_is_ns_init(to))
        return false;
    if (to->sig.sigactions[sig].handler != (uint64_t)(uintptr_t)SIG_DFL)
        return false;
    bool from_outside = !run_init && from != to &&
                        !proxy_ns_pid_below(to, from);
    return !(from_outside && (sig == SIGKILL || sig == SIGSTOP));
}

/* tid 0: to the process (any thread that does not block it). */
static int send_to(struct proxy_process *from, struct proxy_process *to,
                    int tid, int sig, int code)
{
    if (sig == 0 || to->zombie)
        return 0;
    if (code != SI_KERNEL && init_ignores(from, to, sig))
        return 0;
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = sig;
    info.si_code = code;
    info.si_pid = code == SI_KERNEL ? 0 : proxy_ns_pid_of(to, from);
    info.si_uid =
        code == SI_KERNEL ? 0 : proxy_ns_uid_seen(to, from->cred.ruid);
    return proxy_signal_raise_thread(to, tid, sig, &info);
}

/*
 * Whom kill(pid) reaches (kill_something_info): pid > 0 that process, 0 the
 * caller's group, -1 every process but init (pid 1) and the caller itself,
 * < -1 the group -pid.
 */
static bool kill_matches(const struct proxy_process *p,
                         const struct proxy_process *q, int pid)
{
    if (pid > 0)
        return q->pid == pid;
    if (pid == 0)
        return q->pgid == p->pgid;
    if (pid == -1) /* every process it sees but its init */
        return proxy_ns_pid_of(p, q) > 1 && q != p;
    return q->pgid == -pid;
}

/* check_kill_permission for the virtual init, root's (the shell is the
 * run's own user's): the sender's real or effective uid is its uid, or the
 * sender has CAP_KILL. */
static bool virtual_kill_permitted(const struct proxy_process *p, int pid)
{
    if (pid != PROXY_INIT_PID || proxy_ns_capable(p))
        return true;
    return p->cred.ruid == 0 || p->cred.euid == 0;
}

/* check_kill_permission between guest processes (kill_ok_by_cred): the
 * sender's real or effective uid is the target's real or saved uid, or
 * the sender has CAP_KILL over the target; SIGCONT within a session. */
static bool kill_permitted(const struct proxy_process *from,
                           const struct proxy_process *to, int sig)
{
    const struct proxy_cred_state *f = &from->cred, *t = &to->cred;
    if (from == to || f->euid == t->suid || f->euid == t->ruid ||
        f->ruid == t->suid || f->ruid == t->ruid)
        return true;
    if (sig == SIGCONT && from->sid == to->sid)
        return true;
    return proxy_ns_capable_over(from, to) &&
           !proxy_cap_dropped(from, CAP_KILL);
}

static long sys_kill(struct proxy_process *p, const uint64_t a[6])
{
    int pid = (int)a[0], sig = (int)a[1];
    if (sig < 0 || sig > 64)
        return -EINVAL;
    if (pid == INT_MIN) /* -INT_MIN is no group (Linux: -ESRCH) */
        return -ESRCH;
    /* The virtual init and shell take any signal and act on none: init
     * ignores what it has no handler for, and the shell is not modelled
     * past its ids. (The shell's group holds the first process.) */
    if (pid > 0 && proxy_virtual_process(p, pid, NULL, NULL))
        return virtual_kill_permitted(p, pid) ? 0 : -EPERM;
    if (pid > 0 || pid < -1) { /* a pid or group of its pid namespace */
        int g = proxy_ns_global_nr(p, pid > 0 ? pid : -pid);
        if (g < 0)
            return -ESRCH;
        pid = pid > 0 ? g : -g;
    }
    struct proxy_world *w = p->world;
    if (pid > 0 && !proxy_world_find(w, pid)) {
        /* A thread's tid: Linux signals the thread's whole process
         * (kill_pid_info finds the task, group_send_sig_info its group). */
        struct proxy_process *owner = proxy_world_find_tid(w, pid);
        if (owner)
            pid = owner->pid;
    }
    int hits = 0, refused = 0;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (!kill_matches(p, q, pid))
            continue;
        if (!kill_permitted(p, q, sig)) {
            refused++;
            continue;
        }
        /* A zombie is still there until reaped: the call succeeds, the
         * signal is dropped (send_to), as on Linux. */
        hits++;
        send(p, q, sig, SI_USER);
    }
    /* kill_something_info: kill(-1) ignores EPERM; a pid or a group
     * is EPERM when no target let it through. */
    if (pid == -1)
        return hits || refused ? 0 : -ESRCH;
    return hits ? 0 : refused ? -EPERM : -ESRCH;
}

static long sys_tgkill(struct proxy_process *p, const uint64_t a[6])
{
    if ((int)a[0] <= 0 || (int)a[1] <= 0 || a[2] > 64)
        return -EINVAL;
    struct proxy_process *q = proxy_ns_find(p, (int)a[0]);
    if (!q || q->zombie)
        return -ESRCH;
    /* the main thread's tid is its pid, as the caller sees that */
    int tid = (int)a[1] == proxy_ns_pid_of(p, q) ? q->pid : (int)a[1];
    for (int i = 0; i < q->nr_threads; i++)
        if (q->threads[i].state != PROXY_THREAD_EXITED &&
            (i == q->cur ? q->tid : q->threads[i].tid) == tid) {
            if (!kill_permitted(p, q, (int)a[2]))
                return -EPERM;
            return send_to(p, q, tid, (int)a[2], SI_TKILL);
        }
    return -ESRCH;
}

static long sys_tkill(struct proxy_process *p, const uint64_t a[6])
{
    uint64_t b[6] = {0, a[0], a[1], 0, 0, 0};
    struct proxy_world *w = p->world;
    struct proxy_process *main_of = proxy_ns_find(p, (int)a[0]);
    if (main_of && (int)a[0] > 0) { /* a main thread: its tid is its pid */
        b[0] = a[0];
        return sys_tgkill(p, b);
    }
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        for (int k = 0; k < q->nr_threads; k++)
            if (q->threads[k].state != PROXY_THREAD_EXITED &&
                q->threads[k].tid == (int)a[0]) {
                b[0] = (uint64_t)q->pid;
                return sys_tgkill(p, b);
            }
    }
    return (int)a[0] <= 0 ? -EINVAL : -ESRCH;
}

const struct proxy_syscall proxy_procsys_syscalls[] = {
    {SYS_fork, "fork", sys_fork},
    {SYS_vfork, "vfork", sys_vfork},
    {SYS_execve, "execve", sys_execve},
    {SYS_execveat, "execveat", sys_execveat},
    {SYS_wait4, "wait4", sys_wait4},
    {SYS_waitid, "waitid", sys_waitid},
    {SYS_kill, "kill", sys_kill},
    {SYS_tgkill, "tgkill", sys_tgkill},
    {SYS_tkill, "tkill", sys_tkill},
    {-1, NULL, NULL},
};

