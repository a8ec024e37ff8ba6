/*
 * test_sched.c - detcore's scheduling rule over a fake process model.
 */
#include <criterion/criterion.h>

#include "det_sched.h"

#define MAX_PROCS 4
#define MAX_THREADS 4

struct model {
    int nr_threads[MAX_PROCS];  /* 0: exited or stopped */
    int cur[MAX_PROCS];
    bool runnable[MAX_PROCS][MAX_THREADS];
    int asked;                  /* runnable() calls */
};

static int m_nr_threads(void *ctx, int p) { return ((struct model *)ctx)->nr_threads[p]; }
static int m_cur_thread(void *ctx, int p) { return ((struct model *)ctx)->cur[p]; }
static bool m_runnable(void *ctx, int p, int t)
{
    struct model *m = ctx;
    m->asked++;
    return m->runnable[p][t];
}

static const struct det_sched_ops ops = {m_nr_threads, m_cur_thread,
                                         m_runnable};

static void expect_pick(struct model *m, int nr, int cur, bool keep,
                        int want_p, int want_t)
{
    int p = -1, t = -1;
    cr_assert(det_sched_pick(&ops, m, nr, cur, keep, &p, &t));
    cr_assert_eq(p, want_p, "process %d, want %d", p, want_p);
    cr_assert_eq(t, want_t, "thread %d, want %d", t, want_t);
}

Test(sched, current_keeps_its_turn)
{
    struct model m = {.nr_threads = {2, 1}, .runnable = {{true, true}, {true}}};
    expect_pick(&m, 2, 0, true, 0, 0);
    cr_assert_eq(m.asked, 1, "asks only about the current thread");
}

Test(sched, end_of_turn_goes_to_the_next_thread_of_the_process)
{
    struct model m = {.nr_threads = {3, 1}, .cur = {1, 0},
                      .runnable = {{true, true, true}, {true}}};
    expect_pick(&m, 2, 0, false, 0, 2);
    m.cur[0] = 2; /* the last thread: the next process comes first */
    expect_pick(&m, 2, 0, false, 1, 0);
    m.runnable[1][0] = false; /* then the process's threads before it */
    expect_pick(&m, 2, 0, false, 0, 0);
}

/* Two threads handing a lock back and forth (python's GIL) must not keep
 * another process's runnable thread waiting: every thread gets a turn
 * within one round. */
Test(sched, no_process_starves_behind_two_alternating_threads)
{
    struct model m = {.nr_threads = {2, 1}, .cur = {0, 0},
                      .runnable = {{true, true}, {true}}};
    bool other_ran = false;
    int cur_p = 0;
    for (int turn = 0; turn < 3 && !other_ran; turn++) {
        int p = -1, t = -1;
        cr_assert(det_sched_pick(&ops, &m, 2, cur_p, false, &p, &t));
        m.cur[p] = t;
        cur_p = p;
        other_ran = p == 1;
    }
    cr_assert(other_ran, "process 1 never ran");
}

Test(sched, then_the_next_process_from_its_own_current_thread)
{
    struct model m = {.nr_threads = {1, 3, 1}, .cur = {0, 2, 0},
                      .runnable = {{true}, {true, false, true}, {true}}};
    expect_pick(&m, 3, 0, false, 1, 2);
    m.runnable[1][2] = false;
    expect_pick(&m, 3, 0, false, 1, 0);
}

Test(sched, exited_or_stopped_processes_are_skipped)
{
    struct model m = {.nr_threads = {1, 0, 1}, .runnable = {{true}, {true}, {true}}};
    expect_pick(&m, 3, 0, false, 2, 0);
}

Test(sched, the_current_thread_runs_again_last)
{
    struct model m = {.nr_threads = {2, 1}, .runnable = {{true, false}, {false}}};
    expect_pick(&m, 2, 0, false, 0, 0);
}

Test(sched, a_blocked_current_thread_is_not_kept)
{
    struct model m = {.nr_threads = {1, 1}, .runnable = {{false}, {true}}};
    expect_pick(&m, 2, 0, true, 1, 0);
}

Test(sched, nothing_runnable)
{
    struct model m = {.nr_threads = {2, 1}};
    int p, t;
    cr_assert_not(det_sched_pick(&ops, &m, 2, 0, false, &p, &t));
    cr_assert_not(det_sched_pick(&ops, &m, 0, 0, false, &p, &t));
}

/* ---- --chaos ------------------------------------------------------------------ */

#include "det.h"

static void chaos_state(struct det_state *d, uint64_t seed)
{
    struct det_config c;
    det_config_defaults(&c);
    c.seed = seed;
    c.chaos = true;
    cr_assert_eq(det_init(d, &c), 0);
}

/* The picks of 200 turns over three runnable threads and one that is not. */
static void chaos_picks(uint64_t seed, int out[200])
{
    struct det_state d;
    chaos_state(&d, seed);
    struct model m = {.nr_threads = {2, 2},
                      .runnable = {{true, false}, {true, true}}};
    for (int i = 0; i < 200; i++) {
        int p = -1, t = -1;
        cr_assert(det_sched_pick_chaos(&ops, &m, 2, 0, false, &d, &p, &t));
        cr_assert(m.runnable[p][t], "only a runnable thread is picked");
        out[i] = p * 2 + t;
    }
    det_destroy(&d);
}

Test(sched, chaos_is_a_function_of_the_seed)
{
    int a[200], b[200], c[200];
    chaos_picks(7, a);
    chaos_picks(7, b);
    chaos_picks(8, c);
    cr_assert_arr_eq(a, b, sizeof(a), "the same seed, the same schedule");
    cr_assert_arr_neq(a, c, sizeof(a), "another seed, another schedule");
    int seen[4] = {0};
    for (int i = 0; i < 200; i++)
        seen[a[i]]++;
    cr_assert(seen[0] && seen[2] && seen[3], "every runnable thread runs");
    cr_assert_eq(seen[1], 0);
}

Test(sched, chaos_keeps_a_turn_that_is_not_over)
{
    struct det_state d;
    chaos_state(&d, 1);
    struct model m = {.nr_threads = {2}, .cur = {1}, .runnable = {{true, true}}};
    int p = -1, t = -1;
    cr_assert(det_sched_pick_chaos(&ops, &m, 1, 0, true, &d, &p, &t));
    cr_assert(p == 0 && t == 1);
    det_destroy(&d);
}

Test(sched, chaos_quanta_are_short_and_drawn)
{
    struct det_state d;
    chaos_state(&d, 3);
    uint64_t lo = ~0ULL, hi = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t q = det_sched_quantum(&d);
        lo = q < lo ? q : lo;
        hi = q > hi ? q : hi;
    }
    cr_assert_eq(lo, 1);
    cr_assert_leq(hi, DET_CHAOS_MAX_QUANTUM);
    cr_assert_geq(hi, DET_CHAOS_MAX_QUANTUM / 2);
    d.cfg.chaos = false;
    cr_assert_eq(det_sched_quantum(&d), DET_SCHED_QUANTUM);
    det_destroy(&d);
}
