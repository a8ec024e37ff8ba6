/*
 * hooks.h - the one place the direction of syscall-proxy's layers turns.
 *
 * The folders are layered (docs/ARCHITECTURE.md, checked by make lint):
 * proxy.h, fdtable.h, config.h, hooks.h < kernel/ < mm/ < fs/ < io/ <
 * net/ < the top-level .c files; a file includes only headers of its own
 * folder and of those below. Where a lower folder has to call a function
 * of a higher one (the world loop and process life in kernel/ drive the
 * vDSO, the terminals and the exchanges with outside; an open in fs/ asks
 * io/ about FIFOs and terminals; ...), it calls it through this table:
 * proxy_hooks.NAME is proxy_NAME of the higher folder, whose header
 * documents it. hooks.c (top level, above every folder) fills the table
 * when hvrun is linked, so it is complete before anything runs and never
 * changes; a call through it is the same call, in the same order, as a
 * direct one. A new upward call is a new member here, not an include.
 */
#ifndef PROXY_HOOKS_H
#define PROXY_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proxy.h"

struct pollfd;
struct proxy_cpuid_patched;
struct proxy_fd;
struct proxy_ns;
struct proxy_world;
struct stat;

/* What a #UD (or, where the backend traps RDTSC, a #GP) was: what
 * mm/cpuid_patch.c's proxy_cpuid_trap tells the world loop (kernel/
 * world.c, through proxy_hooks.cpuid_trap). */
enum proxy_trap_kind {
    PROXY_TRAP_NONE,       /* not a site hvrun rewrote: a SIGILL as before */
    PROXY_TRAP_CPUID,      /* answered from the model (or the host's leaf
                            * with the model's APIC ids: cpuid_topology) */
    PROXY_TRAP_RDPID,      /* answered with the model's CPU number */
    PROXY_TRAP_TSC,        /* RDTSC/RDTSCP answered from the logical clock */
    PROXY_TRAP_TSC_FORCED, /* the same at a stub's fallback: the reads in
                            * the guest spent their count (the vDSO's
                            * forced syscall) */
    PROXY_TRAP_HOST_TSC,   /* a trapped RDTSC given the host's TSC (time not
                            * virtualized) */
    PROXY_TRAP_TSC_GP,     /* a trapped RDTSC under PR_TSC_SIGSEGV: the #GP
                            * Linux's CR4.TSD gives (SIGSEGV), unanswered */
    PROXY_TRAP_PROGRESS,   /* the progress counter ran out (progress.c): a
                            * preemption point of the thread's own */
};

struct proxy_hooks {
    /* kernel/ -> mm/: the world loop (kernel/world.c) and process life
     * (kernel/procsys.c, prctl.c) into mm/: the vDSO's clock fold, CPUID/RDTSC
     * rewriting, the ELF loader, the memory limit */
    void (*vdso_enter)(struct proxy_process *p);
    uint64_t (*vdso_leave)(struct proxy_process *p, bool host_interruption);
    uint64_t (*vdso_unfolded)(struct proxy_process *p);
    uint64_t (*vdso_unlogged)(const struct proxy_process *p);
    bool (*vdso_count_spent)(struct proxy_process *p);
    /* the progress counter (mm/progress.c): set before a run, folded
     * after it */
    void (*progress_enter)(struct proxy_process *p, uint64_t budget);
    uint64_t (*progress_leave)(struct proxy_process *p,
                               bool host_interruption);
    uint64_t (*progress_unfolded)(struct proxy_process *p);
    /* a signal for a fault in a loop body's copy names the text's
     * instruction; the guest's writes to its code retire copies there */
    bool (*progress_home)(struct proxy_process *p);
    void (*progress_written)(struct proxy_process *p, uint64_t gva,
                             uint64_t len);
    enum proxy_trap_kind (*cpuid_trap)(struct proxy_process *p,
                                       const struct vmm_event *ev);
    void (*cpuid_tsc_faulting)(struct proxy_process *p);
    /* A thread of p became traced by another guest (kernel/ptrace.c). */
    void (*cpuid_traced)(struct proxy_process *p);
    /* A syscall returning to ret_ip from an identity call's stub: the
     * site's return address (kernel/user_dispatch.c). */
    uint64_t (*cpuid_call_site)(const struct proxy_process *p,
                                uint64_t ret_ip);
    /* A fault about to be the guest's signal in a signal call's stub
     * (kernel/signal.c). */
    bool (*cpuid_sig_stub_fault)(struct proxy_process *p);
    /* Right after a run (world.c): the signal state the stubs changed. */
    void (*vdso_signals_back)(struct proxy_process *p, bool interrupted);
    void (*cpuid_join_texts)(struct proxy_process *p);
    int (*cpuid_fork)(struct proxy_process *child,
                      const struct proxy_process *parent);
    int (*cpuid_share)(struct proxy_process *child,
                       struct proxy_process *parent);
    struct proxy_cpuid_patched *(*cpuid_exec_begin)(struct proxy_process *p);
    void (*cpuid_exec_end)(struct proxy_process *p,
                           struct proxy_cpuid_patched *old, bool ok);
    int (*exec_missing)(struct proxy_process *p, const char *path);
    int (*mm_grow_down)(struct proxy_process *p, gva_t addr);
    bool (*vfs_virtual_path)(int host_fd, char *out, size_t cap);
    int (*exec_load)(struct proxy_process *p, const char *path,
                     const char *guest_path, char *const argv[],
                     char *const envp[], char *why, size_t why_len);
    void (*mem_check_oom)(struct proxy_world *w);

    /* kernel/ -> fs/: a core-dumping signal's core file (fs/coredump.c);
     * true when one was written */
    bool (*core_dump)(struct proxy_process *p, int signo);

    /* kernel/ -> io/: process life and the world into io/: native AIO contexts,
     * the sessions' terminals */
    void (*aio_release)(struct proxy_process *p);
    void (*tty_world_init)(struct proxy_world *w, struct proxy_process *first);
    void (*tty_world_free)(struct proxy_world *w);
    void (*tty_setsid)(struct proxy_process *p);
    void (*tty_exit)(struct proxy_process *p);

    /* kernel/ -> net/: the world loop into net/: exchanges with peers outside
     * the run (record/replay) */
    void (*outside_pump)(struct proxy_world *w);
    bool (*outside_idle_feed)(struct proxy_world *w);
    int (*outside_poll_fds)(struct proxy_world *w, struct pollfd *fds,
                            int room);
    bool (*outside_await)(struct proxy_world *w, struct proxy_process *p,
                          uint64_t deadline_ns);
    void (*outside_free)(struct proxy_world *w);
    void (*inet_ports_free)(struct proxy_world *w);

    /* kernel/, mm/ -> fs/: execve and the loader (kernel/procsys.c, mm/), setns
     * (kernel/namespace.c) into fs/: the guest path rewrite, record/replay's
     * file tap, /proc/PID/ns files */
    int (*path_rewrite)(struct proxy_process *p, const char *in, char *out,
                        size_t outlen);
    bool (*procfile_ns)(const struct proxy_fd *f, int *type,
                        struct proxy_ns **ns);
    int (*file_tap_replayed)(struct proxy_process *p, int dirfd,
                             const char *path, int flags);
    void (*file_tap_note)(struct proxy_process *p, int dirfd, const char *path,
                          int flags, int host_fd);
    void (*file_tap_restat)(struct proxy_process *p, struct stat *st);

    /* fs/ -> io/: opens and /proc/PID/stat (fs/fs.c, vfs.c) into io/: FIFO
     * opens waiting for a partner, leases, the sessions' terminals */
    bool (*fifo_end_in_run)(struct proxy_process *p, dev_t dev, ino_t ino,
                            bool writer);
    void (*fifo_writer_opened)(struct proxy_process *p, dev_t dev, ino_t ino);
    long (*lease_break)(struct proxy_process *p, int dirfd, const char *path,
                        int flags);
    void (*tty_opened)(struct proxy_process *p, int host_fd, int flags);
    bool (*tty_open_current)(struct proxy_process *p, int dirfd,
                             const char *path, int flags, int *fd_or_err);
    unsigned int (*tty_nr)(const struct proxy_process *p);
    int (*tty_fg_pgrp)(struct proxy_process *p);

    /* fs/ -> net/: FIFO opens (fs/fs.c) into net/: a FIFO whose other end is
     * outside the run */
    bool (*outside_fifo_maybe)(struct proxy_process *p, int dirfd,
                               const char *path);
    bool (*outside_fifo_open)(struct proxy_process *p, const char *key,
                              int dirfd, const char *path, int flags,
                              long *ret);

    /* io/ -> net/: ioctl (io/io.c) into net/: a socket's network-device queries
     */
    bool (*netdev_ioctl_is)(unsigned int req);
    long (*netdev_ioctl)(struct proxy_process *p, int host_fd, unsigned int req,
                         gva_t arg);
};

extern const struct proxy_hooks proxy_hooks;

#endif
