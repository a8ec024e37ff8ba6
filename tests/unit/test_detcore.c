/*
 * test_detcore.c - detcore's logical clock and the values it hands out:
 * what each clock reads, that a vDSO call counts as the event a syscall
 * is, time slices of computing, and the ephemeral port sequence.
 */
#include <criterion/criterion.h>

#include <time.h>

#include "det.h"

static struct det_state d;

static void setup(void)
{
    struct det_config c;
    det_config_defaults(&c);
    cr_assert_eq(det_init(&d, &c), 0);
}

static void teardown(void) { det_destroy(&d); }

TestSuite(detcore, .init = setup, .fini = teardown);

static int64_t read_ns(int clockid)
{
    struct timespec ts;
    cr_assert_eq(det_clock_gettime(&d, clockid, &ts), 0);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

Test(detcore, clocks_start_at_epoch_and_boot_offset)
{
    cr_assert_eq(read_ns(CLOCK_REALTIME), DET_DEFAULT_EPOCH_NS);
    cr_assert_eq(read_ns(CLOCK_MONOTONIC), DET_BOOT_OFFSET_NS);
    cr_assert_eq(read_ns(CLOCK_BOOTTIME), DET_BOOT_OFFSET_NS);
    cr_assert_eq(read_ns(CLOCK_PROCESS_CPUTIME_ID), 0);
}

Test(detcore, each_event_advances_one_microsecond)
{
    det_event(&d, 1, 39);
    det_event(&d, 1, 39);
    cr_assert_eq(read_ns(CLOCK_MONOTONIC), DET_BOOT_OFFSET_NS + 2 * DET_EVENT_NS);
    cr_assert_eq(d.events, 2);
}

Test(detcore, coarse_clocks_tick_at_4ms)
{
    det_sleep(&d, 5000000); /* 5 ms */
    cr_assert_eq(read_ns(CLOCK_MONOTONIC_COARSE) % DET_COARSE_NS, 0);
    cr_assert_eq(read_ns(CLOCK_MONOTONIC_COARSE), DET_BOOT_OFFSET_NS + 4000000);
}

/* The vDSO computes now_ns + calls * event_ns; folding the calls must leave
 * detcore where the same calls as syscalls would have. */
Test(detcore, vdso_calls_fold_like_syscalls)
{
    struct det_clock_page pg;
    det_clock_page(&d, &pg);
    cr_assert(pg.virtual_time);
    cr_assert_eq(pg.epoch_ns, DET_DEFAULT_EPOCH_NS);
    cr_assert_eq(pg.boot_ns, DET_BOOT_OFFSET_NS);
    cr_assert_eq(pg.event_ns, DET_EVENT_NS);
    cr_assert_eq(pg.coarse_ns, DET_COARSE_NS);
    int64_t third_call_sees = pg.boot_ns + pg.now_ns + 3 * pg.event_ns;
    det_clock_fold(&d, 3);
    cr_assert_eq(read_ns(CLOCK_MONOTONIC), third_call_sees);
    cr_assert_eq(d.events, 3);
    cr_assert_eq(d.reads[DET_SRC_TIME], 3 + 1, "the folded calls count as reads");
}

Test(detcore, computing_slices_count_as_time)
{
    det_clock_computed(&d, 100000000);
    cr_assert_eq(read_ns(CLOCK_MONOTONIC), DET_BOOT_OFFSET_NS + 100000000);
}

Test(detcore, ports_follow_the_runs_binds)
{
    cr_assert_eq(det_port(&d), 32768);
    cr_assert_eq(det_port(&d), 32769);
    d.ports_handed = 60999 - 32768; /* the last of the range, then wrap */
    cr_assert_eq(det_port(&d), 60999);
    cr_assert_eq(det_port(&d), 32768);
}

Test(detcore, host_time_when_not_virtualised)
{
    d.cfg.virtualize_time = false;
    det_clock_fold(&d, 5);
    det_clock_computed(&d, 1000000000);
    cr_assert_eq(d.now_ns, 0, "host time passes by itself");
    struct det_clock_page pg;
    det_clock_page(&d, &pg);
    cr_assert_not(pg.virtual_time, "the vDSO then asks the kernel");
}
