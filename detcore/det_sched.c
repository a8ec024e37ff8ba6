/*
 * det_sched.c - the scheduler's choice (see det_sched.h for the rule).
 */
#include "det_sched.h"

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
