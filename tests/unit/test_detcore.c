/*
 * test_detcore.c - detcore's logical clock and the values it hands out:
 * what each clock reads, that a vDSO call counts as the event a syscall
 * is, time slices of computing, and the ephemeral port sequence.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
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

/* utimensat accepts any tv_sec: what ns cannot hold saturates (the debug
 * build's UBSan stops at a signed overflow), and times before 1970 read
 * back with tv_nsec in [0, 1e9) as stat gives them. */
static struct stat stat_after_times(time_t asec, long ansec, time_t msec,
                                    long mnsec)
{
    d.cfg.virtualize_metadata = true;
    struct timespec at = {asec, ansec}, mt = {msec, mnsec};
    det_note_times(&d, 1, 42, &at, &mt);
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_dev = 1;
    st.st_ino = 42;
    det_stat_canon(&d, &st);
    return st;
}

Test(detcore, file_times_saturate_past_what_ns_hold)
{
    struct stat st = stat_after_times(INT64_MAX, 999999999, INT64_MIN, 0);
    cr_assert_eq(st.st_atim.tv_sec, INT64_MAX / 1000000000LL);
    cr_assert_eq(st.st_atim.tv_nsec, INT64_MAX % 1000000000LL);
    cr_assert_eq(st.st_mtim.tv_sec, INT64_MIN / 1000000000LL - 1);
    cr_assert(st.st_mtim.tv_nsec >= 0 && st.st_mtim.tv_nsec < 1000000000);
}

Test(detcore, file_times_before_1970_keep_nsec_positive)
{
    struct stat st = stat_after_times(-2, 500000000, 1234567890, 5);
    cr_assert_eq(st.st_atim.tv_sec, -2);
    cr_assert_eq(st.st_atim.tv_nsec, 500000000);
    cr_assert_eq(st.st_mtim.tv_sec, 1234567890);
    cr_assert_eq(st.st_mtim.tv_nsec, 5);
}

Test(detcore, timespec_ns_saturates_both_ways)
{
    struct timespec big = {INT64_MAX / 1000000000LL, 999999999};
    cr_assert_eq(det_timespec_ns(&big), INT64_MAX);
    struct timespec small = {INT64_MIN / 1000000000LL - 1, 0};
    cr_assert_eq(det_timespec_ns(&small), INT64_MIN);
    struct timespec one = {1, 1};
    cr_assert_eq(det_timespec_ns(&one), 1000000001LL);
}
