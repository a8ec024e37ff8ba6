/*
 * test_sched.c - detcore's scheduling rule over a fake process model.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "det_sched.h"

#define MAX_PROCS 4
#define MAX_THREADS 4

struct model {
    uint64_t slot[MAX_PROCS][MAX_THREADS]; /* the scheduler's words */
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

static uint64_t *m_slot(void *ctx, int p, int t)
{
    return &((struct model *)ctx)->slot[p][t];
}

static const struct det_sched_ops ops = {m_nr_threads, m_cur_thread,
                                         m_runnable, m_slot};

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
static int quanta[DET_CHAOS_MAX_QUANTUM + 1];

static void chaos_picks(uint64_t seed, int out[200])
{
    struct det_state d;
    chaos_state(&d, seed);
    struct model m = {.nr_threads = {2, 2},
                      .runnable = {{true, false}, {true, true}}};
    int cur = 0;
    for (int i = 0; i < 200; i++) {
        int p = -1, t = -1;
        struct det_sched_turn turn;
        cr_assert(det_sched_pick_chaos(&ops, &m, 2, cur, false, &d, &p, &t,
                                       &turn));
        cur = p; /* the picked thread is the one whose turn ends next */
        m.cur[p] = t;
        cr_assert(m.runnable[p][t], "only a runnable thread is picked");
        cr_assert(turn.decided);
        cr_assert(turn.quantum >= 1 && turn.quantum <= DET_CHAOS_MAX_QUANTUM);
        quanta[turn.quantum]++;
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
    struct det_sched_turn turn;
    cr_assert(det_sched_pick_chaos(&ops, &m, 1, 0, true, &d, &p, &t, &turn));
    cr_assert(p == 0 && t == 1);
    cr_assert_not(turn.decided);
    det_destroy(&d);
}

Test(sched, chaos_quanta_are_short_and_spread)
{
    int picks[200];
    memset(quanta, 0, sizeof(quanta));
    chaos_picks(3, picks);
    cr_assert_gt(quanta[1] + quanta[2], 10, "many turns of 1-2 events");
    int long_ones = 0;
    for (int q = 33; q <= (int)DET_CHAOS_MAX_QUANTUM; q++)
        long_ones += quanta[q];
    cr_assert_gt(long_ones, 0, "and some long ones");
}

/* --schedule: switches keyed by a thread's own event count. */
Test(sched, schedule_parses_and_finds_switches)
{
    struct det_schedule sch;
    char why[160];
    cr_assert_eq(det_schedule_parse("# a comment\nafter 3 131 run 2\n"
                                    "after 2 7 run 3 # why\n\n",
                                    &sch, why, sizeof(why)),
                 0, "%s", why);
    cr_assert_eq(sch.n, 2);
    const struct det_sched_switch *e = det_schedule_at(&sch, 3, 131);
    cr_assert(e && e->to == 2);
    e = det_schedule_at(&sch, 2, 7);
    cr_assert(e && e->to == 3);
    cr_assert_null(det_schedule_at(&sch, 3, 130));
    cr_assert_null(det_schedule_at(&sch, 1, 131));
    cr_assert_null(det_schedule_at(NULL, 3, 131));
    det_schedule_free(&sch);
}

Test(sched, schedule_errors_name_the_line)
{
    struct det_schedule sch;
    char why[160];
    cr_assert_eq(det_schedule_parse("after 1 2 run 3\nturn x\n", &sch, why,
                                    sizeof(why)),
                 -EINVAL);
    cr_assert(strstr(why, "line 2"), "%s", why);
    cr_assert_eq(det_schedule_parse("after 0 2 run 3\n", &sch, why,
                                    sizeof(why)),
                 -EINVAL, "no thread 0");
    cr_assert_eq(det_schedule_parse("after 4 2 run 1\nafter 4 2 run 3\n",
                                    &sch, why, sizeof(why)),
                 -EINVAL, "one event named twice");
}
