/*
 * config.h - what the command line (cli/) gives a run: struct proxy_config,
 * and the file and connection tap of hvrun record and replay.
 */
#ifndef PROXY_CONFIG_H
#define PROXY_CONFIG_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

struct proxy_process;
struct proxy_world;

/* ---- the process --------------------------------------------------------- */
/*
 * One event of an exchange of the run with a peer outside it: a stream
 * connection's connect, and each piece of data or the end that came in
 * from the peer (net/outside.c); a datagram socket's first exchange with
 * a peer, each datagram that came back and each error (net/outside_udp.c);
 * a listener's listen and each client from outside it accepted
 * (net/outside_accept.c);
 * at the run's event count when the guest could first see it.
 */
enum proxy_link_kind {
    PROXY_LINK_CONNECT = 'C', /* value: the connect's result; data: the
                                 peer's address */
    PROXY_LINK_DATA = 'D',    /* data: the bytes */
    PROXY_LINK_END = 'E',     /* value: 0 (the peer closed) or -errno */
    PROXY_LINK_DGRAM_OPEN = 'U', /* value: 0, or the -errno of reaching
                                    the peer; data: the peer's address */
    PROXY_LINK_DGRAM = 'G',   /* data: one datagram from the peer */
    PROXY_LINK_DGRAM_ERR = 'R', /* value: -errno the peer's host reported
                                   (ECONNREFUSED: nothing there) */
    PROXY_LINK_LISTEN = 'L',  /* a listen() of the run's, or a bind of a
                                 UDP socket (outside_accept.c): value: its
                                 result; data: the socket's name */
    PROXY_LINK_ACCEPT = 'A',  /* a client from outside connected to it:
                                 value: the listener's link number; data:
                                 u32 length of the client's address, the
                                 address, then the connection's own name */
    PROXY_LINK_DGRAM_IN = 'I', /* a datagram from a new peer outside to a
                                  UDP socket the run bound: value: that
                                  socket's link number (its bind, an L
                                  event); data: the peer's address; its
                                  datagrams are G events of this link */
    PROXY_LINK_FIFO = 'F',    /* a FIFO opened to a process outside the
                                 run (net/outside_fifo.c): value: the
                                 open's result; data: its path; then D
                                 and E events of what came */
    PROXY_LINK_AWAITED = 'W', /* a timed wait of the run's for an fd ended
                                 before its deadline: something came from
                                 outside (its events follow, same count);
                                 link: 0 */
};
struct proxy_link_event {
    uint32_t link;  /* the run's n-th connection or flow to outside */
    uint8_t kind;   /* enum proxy_link_kind */
    uint64_t pos;   /* the run's guest event count then */
    int64_t value;
};

/*
 * hvrun record / replay's view of the files a run reads (cli/tap.c): a
 * regular file the guest opens read-only is keyed by the absolute path it
 * was opened by.
 */
struct proxy_file_tap {
    /* Recording: such a file was opened as host_fd. */
    void (*opened)(void *ctx, const char *key, int host_fd);
    /* Replaying: an fd holding the recorded copy of key (the guest gets
     * it instead of the host's file), or -1: not recorded. */
    int (*recorded)(void *ctx, const char *key);
    /* Replaying: *st is the host's stat of something; if that is such a
     * copy, or key (may be NULL) names a recorded file, *st becomes the
     * recorded file's stat and true is returned. */
    bool (*recorded_stat)(void *ctx, const char *key, struct stat *st);
    /* Directory listings (the host's getdents64 records, all of them),
     * key = the directory's path. Recording: each listing read. */
    void (*listed)(void *ctx, const char *key, const void *raw, size_t len);
    /* Replaying: the next recorded listing of key in a malloc'd copy
     * (true), or false: none recorded, the host's is read. */
    bool (*recorded_listing)(void *ctx, const char *key, char **raw,
                             size_t *len);
    /* The stat of a path (nofollow: of a last symlink itself): recording,
     * its result (0 with *st, or -errno); replaying, the next recorded
     * result for that path (true), or false: none left, the host's. */
    void (*stat_result)(void *ctx, const char *key, bool nofollow, int err,
                        const struct stat *st);
    bool (*recorded_stat_result)(void *ctx, const char *key, bool nofollow,
                                 int *err, struct stat *st);
    /* Other questions about a path (kind PROXY_QUERY_*, arg the call's
     * argument): recording, the result and the bytes it gave; replaying,
     * the next recorded answer for (key, kind, arg), *len bytes of it
     * copied to data (cap at most), or false: the host's. */
    void (*query_result)(void *ctx, const char *key, int kind, int arg,
                         long result, const void *data, size_t len);
    bool (*recorded_query)(void *ctx, const char *key, int kind, int arg,
                           long *result, void *data, size_t cap,
                           size_t *len);
    /* Connections to outside the run (net/outside.c): recording, each
     * event of one as it happens; replaying, the next recorded event
     * (false: none left) and, once used, taken. */
    void (*link_noted)(void *ctx, const struct proxy_link_event *e,
                       const void *data, size_t len);
    bool (*link_next)(void *ctx, struct proxy_link_event *e,
                      const void **data, size_t *len);
    void (*link_taken)(void *ctx);
    void *ctx;
};
enum { PROXY_QUERY_READLINK = 1, PROXY_QUERY_ACCESS = 2 };

/*
 * A debugger outside the run (`hvrun run --gdb`, cli/gdbserver.c): where
 * the world loop hands it control. Everything it does between these calls
 * (reading and writing registers and memory, inserting breakpoints) is
 * outside the guest's events: no detlog record, no logical time, no
 * schedule change. ctx is the debugger's.
 */
struct proxy_debugger {
    void *ctx;
    /* Before the world loop runs p's current thread: the debugger may stop
     * the run here (the first instruction, an interrupt from gdb). */
    void (*before_run)(void *ctx, struct proxy_process *p);
    /* Whether p's current thread runs one instruction only (TF), the
     * debugger's single step. */
    bool (*stepping)(void *ctx, struct proxy_process *p);
    /* Before p's current thread runs, after a guest tracer's debug
     * registers were loaded: the debugger's watchpoints and hardware
     * breakpoints onto the vCPU (vmm_vm_set_debugregs). */
    void (*load_debugregs)(void *ctx, struct proxy_process *p);
    /* Whether a #BP or #DB of p's current thread is the debugger's (a
     * breakpoint it inserted, its own step), not the guest's. */
    bool (*owns_trap)(void *ctx, struct proxy_process *p, unsigned vector);
    /* Such a trap: the thread stops for the debugger (or, a step it
     * keeps for itself, goes on). */
    void (*trap)(void *ctx, struct proxy_process *p, unsigned vector);
    /* A syscall of p's current thread is over (its result in the
     * registers); stepped: the thread ran it under the debugger's step
     * and is runnable. The debugger may stop it here (a fork or exec
     * event, the step's end). */
    void (*syscall_done)(void *ctx, struct proxy_process *p, bool stepped);
    /* child has joined the run (a fork, vfork or clone of a process,
     * during that process's syscall). */
    void (*new_process)(void *ctx, struct proxy_process *child);
    /* Signal sig is about to reach p's current thread: true when the
     * debugger discards it (it stopped there, and was told to). */
    bool (*signal)(void *ctx, struct proxy_process *p, int sig);
    /* p's memory is about to be read or changed by hvrun for the guest
     * (a syscall's dispatch: a copy, a fork, an exec), and then was
     * (after = true): breakpoints are taken out and put back around it,
     * so no guest sees them but by executing them. */
    void (*around_call)(void *ctx, struct proxy_process *p, bool after);
    /* Nothing can run and the world loop waits on host fds: the fd the
     * debugger wants watched too (its connection), or -1. */
    int (*idle_fd)(void *ctx);
    /* That fd became readable while nothing ran (deadlock false), or the
     * run is deadlocked and about to end (true): the debugger may stop
     * the run here, every thread where it waits. */
    void (*idle)(void *ctx, struct proxy_world *w, bool deadlock);
    /* p has exited (p->exit_status), or the run ended. */
    void (*exited)(void *ctx, struct proxy_process *p);
};

struct proxy_config {
    bool fail_closed;    /* unsupported syscall aborts the run */
    /* --linger: once the first process exits, the run goes on while
     * another guest process holds the run's stdout or stderr (world.c) */
    bool linger;
    /* --as-init: the first process is pid 1 and the run's init (orphans'
     * parent; signals it has no handler for are not delivered from
     * inside the run), not the virtual shell's child. */
    bool as_init;
    int log_level;       /* 0 quiet, 1 warnings (default), 2 debug trace */
    FILE *log;           /* hvrun's diagnostics */
    /* A thread that runs this long (host wall time) without a syscall
     * while another can run is preempted (world.c); 0: never. */
    uint64_t preempt_ns;
    /* --cpuid-rewrite on a host whose CPUID does not trap: CPUID sites of
     * the guest's code become traps answered from the model
     * (cpuid_patch.c). */
    bool cpuid_rewrite;
    /* Where the guest's CPUID is the host's and nothing else fixes its
     * APIC ids (the ptrace backend without CPUID faulting): CPUID sites
     * become traps answered with the host's leaf but the model's APIC
     * ids (CPU 0's), so runs on different host CPUs read the same
     * (cpuid_patch.c). Ignored under cpuid_rewrite, which gives the whole
     * model. */
    bool cpuid_topology;
    /* CPUID sites with a span become stubs that answer from the VM's own
     * answers in [vvar] (vmm_host_cpuid_answers), without the exit a
     * CPUID makes in a VM (cpuid_patch.c). Ignored under cpuid_rewrite. */
    bool cpuid_table;
    /* RDPID sites become traps answered with the model's CPU number (0)
     * instead of the host CPU's TSC_AUX (cpuid_patch.c). */
    bool rdpid_rewrite;
    /* Virtual time on a host that cannot trap RDTSC (every kvm host so
     * far): the guest's RDTSC/RDTSCP sites become traps answered from the
     * logical clock (cpuid_patch.c); --no-rdtsc-rewrite turns it off. */
    bool rdtsc_rewrite;
    /* Virtual time, either backend: RDTSC sites of the usual compiled
     * form read the logical clock in the guest, through a stub, without
     * an exit (cpuid_patch.c); --no-rdtsc-rewrite turns it off. */
    bool rdtsc_inline;
    /* --progress software: loops' back edges count the thread's progress
     * in guest memory (mm/progress.c); its trap is a preemption point and
     * logical time follows the count (kernel/world.c). */
    bool progress_count;
    /* Counted loops run from the text, not from copies in their
     * trampolines (mm/progress.c), as under --gdb: the count, so the run,
     * is the same either way. HVRUN_LOOP_COPIES=0, for the tests that
     * check that. */
    bool no_loop_copies;
    /* hvrun record / replay: the files read (NULL: neither). */
    const struct proxy_file_tap *file_tap;
    FILE *schedule_out; /* --schedule-out: every decided turn (world.c) */
    /* hvrun replay of a run a signal from outside stopped: the run stops
     * as by stop_signal once it has made stop_events events and its
     * detlog holds stop_detlog records (a host-timed cut logged after the
     * last event is in it: stopping at the count alone left it out), or
     * once it has gone past stop_events. */
    int stop_signal;
    uint64_t stop_events, stop_detlog;
    /* --verify, --repeat, record and replay: the files hvrun made the
     * run's stdin, stdout and stderr (NULL: not such a file). Their names
     * hold a directory of hvrun's own making, another for each hvrun and
     * for a replay: a guest reading the link of its fd 0, 1 or 2 sees
     * PROXY_CAPTURE_LINK_DIR "/stdin" and so on instead (fs/vfs.c). */
    const char *capture_files[3];
#define PROXY_CAPTURE_LINK_DIR "/tmp/hvrun-capture"
    /* --gdb: the debugger outside the run, or NULL. */
    const struct proxy_debugger *debugger;
};

#endif
