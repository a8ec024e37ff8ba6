/*
 * det_sched.h - the scheduler's choice: which guest thread runs next. A pure
 * function of the run's deterministic state (which threads can run, who
 * ran last, how long it has run), so every run makes the same choices.
 * syscall-proxy owns the threads and their wake-up conditions and asks
 * here; a different policy (chaos scheduling, a replayed schedule) would
 * replace this file and nothing else.
 *
 * The rule: the current thread keeps the vCPU until it blocks, yields, or
 * has made DET_SCHED_QUANTUM syscalls (DET_SCHED_QUANTUM_CONTENDED when
 * another thread is runnable); then the next runnable thread in
 * round-robin order over every thread runs: the threads of the current
 * process after the current one, then the other processes in creation
 * order (each from its own current thread), then the current process's
 * threads before the current one, and last the current thread itself. So
 * every runnable thread of the run gets a turn within one round.
 */
#ifndef DET_SCHED_H
#define DET_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Syscalls a thread may make before others get a turn. */
#define DET_SCHED_QUANTUM 10000
/* The same while another thread is runnable (one woken or cut off the
 * vCPU, waiting for its turn rather than for something to happen): it
 * gets the vCPU after this many of the current thread's events, the same
 * point in every run, long before a host-timed slice would cut the current
 * thread (QEMU's vCPU thread with -icount computes for seconds with a
 * syscall every few hundred microseconds and no clock read). */
#define DET_SCHED_QUANTUM_CONTENDED 100

/* --progress software (syscall-proxy/mm/progress.c): a thread's own
 * progress, counted in units of one taken loop back edge. The counter's
 * trap comes after DET_PROGRESS_QUANTUM units (fewer when a deadline is
 * nearer): a preemption point the same in every run, where another
 * runnable thread gets the vCPU. Logical time advances DET_PROGRESS_UNIT_NS
 * per unit, about what one iteration of a compiled loop takes natively
 * (docs/DETERMINISM.md, "Counted progress", has the calibration), so a
 * timer in a computing thread fires after about as much computing as
 * natively. */
#define DET_PROGRESS_QUANTUM (1u << 20)
/* The same for a thread alone in the run (no other thread or process
 * alive, so none to give the vCPU to): its trap only folds the units into
 * logical time, which a deadline limits anyway (the budget reaches the
 * next one), so it comes 64 times less often: bzip2 alone made ~500 traps
 * in 2 s, each a stop of ~50 us under ptrace. */
#define DET_PROGRESS_QUANTUM_ALONE (1u << 26)
#define DET_PROGRESS_UNIT_NS 4

/* What the scheduler may ask of the process model. */
struct det_sched_ops {
    /* Threads of process `proc`; 0 when it cannot run at all (exited,
     * stopped). */
    int (*nr_threads)(void *ctx, int proc);
    /* The thread index that ran last in process `proc`. */
    int (*cur_thread)(void *ctx, int proc);
    /* Whether the thread can run now; may wake it (a wait that is over). */
    bool (*runnable)(void *ctx, int proc, int thread);
    /* A word the process model keeps per thread for the scheduler (0 for
     * a new thread): --chaos keeps the thread's priority there. NULL when
     * chaos is never used. */
    uint64_t *(*slot)(void *ctx, int proc, int thread);
};

/*
 * Chooses the next thread: *proc and *thread, or false when none can run.
 * cur_proc ran last; keep_turn says its turn is not over (it did not block
 * or yield, and its quantum is not used up), in which case it runs again
 * if it still can.
 */
bool det_sched_pick(const struct det_sched_ops *ops, void *ctx, int nr_procs,
                    int cur_proc, bool keep_turn, int *proc, int *thread);

/*
 * --chaos: the same choice made by a seeded adversary, so that one seed
 * gives one interleaving (every run of it the same) and other seeds give
 * others, in the manner of PCT (probabilistic concurrency testing): each
 * thread gets a random priority when first seen; when a turn ends, the
 * runnable thread of highest priority runs, and at one turn end in
 * DET_CHAOS_CHANGE_ODDS the thread whose turn ended drops below every
 * other (a change point), so one thread can run far ahead of another (an
 * order violation) or stop in the middle of anything. Each turn gets a
 * quantum drawn log-uniformly from [1, DET_CHAOS_MAX_QUANTUM] events, so
 * threads are preempted at syscall boundaries they never would be
 * otherwise. The draws come from the run's scheduler stream (the seed's,
 * not the guest's randomness) and each is a detlog record.
 *
 * --schedule FILE: switches keyed by a thread's own progress: "after
 * thread A's N-th event, thread B runs" (B if it can, else the default
 * choice; A is cut there if it could go on). Every other choice is the
 * default rule's. A thread's event count is its own syscalls and trapped
 * TSC reads, so an entry keeps its meaning when other entries are dropped:
 * a chaos run's switches written out (--schedule-out) replay it, and
 * `hvrun analyze` shrinks such a file to the one or two switches that
 * still change the outcome.
 */
#define DET_CHAOS_QUANTUM_BITS 6
#define DET_CHAOS_CHANGE_ODDS 4
#define DET_CHAOS_MAX_QUANTUM (1u << DET_CHAOS_QUANTUM_BITS)

/* After thread `tid`'s `after`-th event, thread `to` runs. */
struct det_sched_switch {
    uint32_t tid;
    uint64_t after;
    uint32_t to;
};

/* A --schedule file's switches, sorted by (tid, after). */
struct det_schedule {
    struct det_sched_switch *v;
    size_t n;
};

/* Parses a schedule file's text ("after TID N run TID2" lines; '#' starts
 * a comment). 0, or -EINVAL with the line at fault in why. */
int det_schedule_parse(const char *text, struct det_schedule *out, char *why,
                       size_t why_len);
void det_schedule_free(struct det_schedule *s);
/* The entry for thread tid's n-th event, or NULL. */
const struct det_sched_switch *det_schedule_at(const struct det_schedule *s,
                                               uint32_t tid, uint64_t n);

/* What det_sched_pick_chaos decided. */
struct det_sched_turn {
    bool decided;        /* a new turn was drawn (not the same turn kept) */
    uint32_t pick, candidates;
    uint64_t quantum;
};

struct det_state;
/* The choice under --chaos. */
bool det_sched_pick_chaos(const struct det_sched_ops *ops, void *ctx,
                          int nr_procs, int cur_proc, bool keep_turn,
                          struct det_state *d, int *proc, int *thread,
                          struct det_sched_turn *turn);

#endif
