/*
 * det_sched.c - the scheduler's choice (see det_sched.h for the rule).
 */
#include "det_sched.h"

#include "det.h"

/* The first runnable thread of proc, trying `count` threads from `from`
 * on (wrapping); -1 when none. */
static int first_runnable(const struct det_sched_ops *ops, void *ctx,
                          int proc, int from, int count)
{
    int n = ops->nr_threads(ctx, proc);
    for (int k = 0; k < count && k < n; k++) {
        int idx = (from + k) % n;
        if (ops->runnable(ctx, proc, idx))
            return idx;
    }
    return -1;
}

bool det_sched_pick(const struct det_sched_ops *ops, void *ctx, int nr_procs,
                    int cur_proc, bool keep_turn, int *proc, int *thread)
{
    if (nr_procs <= 0)
        return false;
    int cur_thread = ops->cur_thread(ctx, cur_proc);
    if (keep_turn && ops->nr_threads(ctx, cur_proc) > 0 &&
        ops->runnable(ctx, cur_proc, cur_thread)) {
        *proc = cur_proc;
        *thread = cur_thread;
        return true;
    }
    /* One round over every thread, the current one last: the threads of
     * its process after it, the other processes, then its process's
     * threads before it. Wrapping inside the process first would let two
     * threads that hand a lock back and forth (a GIL) keep the vCPU from
     * every other process for good. */
    for (int off = 0; off <= nr_procs; off++) {
        int i = (cur_proc + off) % nr_procs;
        int n = ops->nr_threads(ctx, i);
        if (n == 0)
            continue;
        int at = ops->cur_thread(ctx, i), idx;
        if (off == 0)
            idx = first_runnable(ops, ctx, i, at + 1, n - 1 - at);
        else if (off == nr_procs)
            idx = first_runnable(ops, ctx, i, 0, at + 1);
        else
            idx = first_runnable(ops, ctx, i, at, n);
        if (idx >= 0) {
            *proc = i;
            *thread = idx;
            return true;
        }
    }
    return false;
}

#define DET_CHAOS_MAX_CANDIDATES 1024

/* A draw from the scheduler's stream in [0, n), logged. */
static uint32_t chaos_draw(struct det_state *d, uint32_t n)
{
    uint64_t x;
    det_stream_fill(d, DET_STREAM_SCHED, &x, sizeof(x));
    uint32_t v = (uint32_t)(x % n);
    det_log_value(d, DET_SRC_SCHED, &v, sizeof(v));
    return v;
}

bool det_sched_pick_chaos(const struct det_sched_ops *ops, void *ctx,
                          int nr_procs, int cur_proc, bool keep_turn,
                          struct det_state *d, int *proc, int *thread)
{
    if (nr_procs <= 0)
        return false;
    int cur_thread = ops->cur_thread(ctx, cur_proc);
    if (keep_turn && ops->nr_threads(ctx, cur_proc) > 0 &&
        ops->runnable(ctx, cur_proc, cur_thread)) {
        *proc = cur_proc;
        *thread = cur_thread;
        return true;
    }
    /* Every runnable thread, each asked once (asking may wake it), in
     * process order; the drawn one runs. A run with more runnable threads
     * than the table holds draws among the first DET_CHAOS_MAX_CANDIDATES. */
    struct { int proc, thread; } cand[DET_CHAOS_MAX_CANDIDATES];
    uint32_t count = 0;
    for (int i = 0; i < nr_procs; i++)
        for (int k = 0; k < ops->nr_threads(ctx, i); k++)
            if (count < DET_CHAOS_MAX_CANDIDATES && ops->runnable(ctx, i, k)) {
                cand[count].proc = i;
                cand[count].thread = k;
                count++;
            }
    if (count == 0)
        return false;
    uint32_t pick = count > 1 ? chaos_draw(d, count) : 0;
    *proc = cand[pick].proc;
    *thread = cand[pick].thread;
    return true;
}

uint64_t det_sched_quantum(struct det_state *d)
{
    if (!d->cfg.chaos)
        return DET_SCHED_QUANTUM;
    /* Log-uniform over [1, DET_CHAOS_MAX_QUANTUM]: as many turns of 1-2
     * events as of 32-64, so short races are hit as often as long ones. */
    uint32_t span = 1u << chaos_draw(d, DET_CHAOS_QUANTUM_BITS + 1);
    return 1 + chaos_draw(d, span);
}
