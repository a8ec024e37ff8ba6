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

/* The current thread goes on with its turn if it still can. */
static bool turn_goes_on(const struct det_sched_ops *ops, void *ctx,
                         int cur_proc, int *proc, int *thread)
{
    int cur_thread = ops->cur_thread(ctx, cur_proc);
    if (ops->nr_threads(ctx, cur_proc) <= 0 ||
        !ops->runnable(ctx, cur_proc, cur_thread))
        return false;
    *proc = cur_proc;
    *thread = cur_thread;
    return true;
}

bool det_sched_pick(const struct det_sched_ops *ops, void *ctx, int nr_procs,
                    int cur_proc, bool keep_turn, int *proc, int *thread)
{
    if (nr_procs <= 0)
        return false;
    if (keep_turn && turn_goes_on(ops, ctx, cur_proc, proc, thread))
        return true;
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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DET_CHAOS_MAX_CANDIDATES 1024
/* Priorities: first-seen threads get one in [HIGH_BAND, HIGH_BAND + 2^31);
 * a lowered thread gets d->chaos_low, which counts down from below it. */
#define DET_CHAOS_HIGH_BAND (1ULL << 40)

/* A draw from the scheduler's stream in [0, n), logged. */
static uint32_t chaos_draw(struct det_state *d, uint32_t n)
{
    uint64_t x;
    det_stream_fill(d, DET_STREAM_SCHED, &x, sizeof(x));
    uint32_t v = (uint32_t)(x % n);
    det_log_value(d, DET_SRC_SCHED, &v, sizeof(v));
    return v;
}

/* Log-uniform over [1, DET_CHAOS_MAX_QUANTUM]: as many turns of 1-2
 * events as of 32-64, so short races are hit as often as long ones. */
static uint32_t chaos_quantum(struct det_state *d)
{
    uint32_t span = 1u << chaos_draw(d, DET_CHAOS_QUANTUM_BITS + 1);
    return 1 + chaos_draw(d, span);
}

bool det_sched_pick_chaos(const struct det_sched_ops *ops, void *ctx,
                          int nr_procs, int cur_proc, bool keep_turn,
                          struct det_state *d, int *proc, int *thread,
                          struct det_sched_turn *turn)
{
    *turn = (struct det_sched_turn){0};
    if (nr_procs <= 0)
        return false;
    if (keep_turn && turn_goes_on(ops, ctx, cur_proc, proc, thread))
        return true;
    /* Every runnable thread, each asked once (asking may wake it), in
     * process order. A run with more runnable threads than the table
     * holds chooses among the first DET_CHAOS_MAX_CANDIDATES. */
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
    turn->decided = true;
    turn->candidates = count;
    /* A change point: the thread whose turn ended goes below all others
     * (the later a thread was lowered, the lower it is). */
    uint64_t *mine = ops->slot ? ops->slot(ctx, cur_proc,
                                           ops->cur_thread(ctx, cur_proc))
                               : NULL;
    if (mine && chaos_draw(d, DET_CHAOS_CHANGE_ODDS) == 0)
        *mine = d->chaos_low--;
    uint64_t best = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t *prio = ops->slot ? ops->slot(ctx, cand[i].proc,
                                              cand[i].thread)
                                   : NULL;
        if (prio && *prio == 0) /* first seen: a place in the high band */
            *prio = DET_CHAOS_HIGH_BAND + chaos_draw(d, 1u << 31);
        uint64_t v = prio ? *prio : 1;
        if (v > best) {
            best = v;
            turn->pick = i;
        }
    }
    if (!ops->slot)
        turn->pick = count > 1 ? chaos_draw(d, count) : 0;
    turn->quantum = chaos_quantum(d);
    *proc = cand[turn->pick].proc;
    *thread = cand[turn->pick].thread;
    return true;
}

static int cmp_switch(const void *a, const void *b)
{
    const struct det_sched_switch *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->after < y->after ? -1 : x->after > y->after;
}

int det_schedule_parse(const char *text, struct det_schedule *out, char *why,
                       size_t why_len)
{
    *out = (struct det_schedule){0};
    size_t cap = 0;
    int line = 0;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        line++;
        char buf[256];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < 255 ? len : 255U), p);
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        unsigned long long tid, after, to;
        char extra;
        int got = sscanf(buf, " after %llu %llu run %llu %c", &tid, &after,
                         &to, &extra);
        if (got == 3 && tid >= 1 && tid <= UINT32_MAX && to >= 1 &&
            to <= UINT32_MAX) {
            if (out->n == cap) {
                cap = cap ? cap * 2 : 64;
                void *g = realloc(out->v, cap * sizeof(*out->v));
                if (!g) {
                    det_schedule_free(out);
                    snprintf(why, why_len, "out of memory");
                    return -ENOMEM;
                }
                out->v = g;
            }
            out->v[out->n++] = (struct det_sched_switch){
                (uint32_t)tid, after, (uint32_t)to};
        } else {
            char dummy;
            if (sscanf(buf, " %c", &dummy) == 1) {
                snprintf(why, why_len,
                         "line %d: expected 'after TID N run TID'", line);
                det_schedule_free(out);
                return -EINVAL;
            }
        }
        p += len + (eol ? 1 : 0);
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(*out->v), cmp_switch);
    for (size_t i = 1; i < out->n; i++)
        if (!cmp_switch(&out->v[i], &out->v[i - 1])) {
            snprintf(why, why_len, "thread %u's event %llu is named twice",
                     out->v[i].tid, (unsigned long long)out->v[i].after);
            det_schedule_free(out);
            return -EINVAL;
        }
    return 0;
}

const struct det_sched_switch *det_schedule_at(const struct det_schedule *s,
                                               uint32_t tid, uint64_t n)
{
    struct det_sched_switch key = {tid, n, 0};
    size_t lo = 0, hi = s ? s->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_switch(&s->v[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return s && lo < s->n && !cmp_switch(&s->v[lo], &key) ? &s->v[lo] : NULL;
}

void det_schedule_free(struct det_schedule *s)
{
    free(s->v);
    *s = (struct det_schedule){0};
}
