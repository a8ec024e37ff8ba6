/*
 * adjtime_query.c - adjtimex and clock_adjtime as a read-only query: the
 * kernel clock's NTP state within the bounds Linux keeps it in (the
 * values themselves are the host's clock discipline, see show()),
 * fields the kernel does not set left as passed, the time field the
 * realtime clock, and the errors that come before any privilege check
 * (EFAULT, EINVAL for a clock that does not exist or ADJ_ADJTIME without
 * the single-shot bit, EOPNOTSUPP for a clock that cannot be adjusted).
 * Changes are asked only by a child that gave up root, and with it
 * CAP_SYS_TIME (EPERM), and only ones that would change nothing even if
 * let through. Run
 * natively and under hvrun, the output must match
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#ifndef ADJ_ADJTIME
#define ADJ_ADJTIME 0x8000 /* linux/timex.h */
#endif

/*
 * The kernel's NTP state is the host's: an NTP daemon, or any adjtimex
 * user, moves offset, freq, maxerror, esterror, status, constant, tick and
 * tai (and the TIME_* state returned), while hvrun answers its model's
 * fixed values. Those fields are printed only as the ranges and relations
 * Linux keeps them in, true of any host state and of hvrun's; the ones no
 * adjtimex call can change (precision, tolerance, the PPS fields without
 * a PPS source) are printed as they are.
 */
static void show(const char *what, long rc, const struct timex *t)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long skew = (long)now.tv_sec - (long)t->time.tv_sec;
    printf("%s: %s\n", what, rc < 0 ? result_text(rc) : "a state");
    printf("  modes %#x precision %ld tolerance %ld\n", t->modes,
           t->precision, t->tolerance);
    printf("  state in TIME_OK..TIME_ERROR: %d, unsynced is TIME_ERROR: %d\n",
           rc >= TIME_OK && rc <= TIME_ERROR,
           !(t->status & STA_UNSYNC) || rc == TIME_ERROR);
    /* MAXTC; NTP_PHASE_LIMIT; MAXFREQ_SCALED; the tick within 10% of
     * USER_HZ's; a tai offset never negative */
    printf("  constant 0..10: %d, maxerror/esterror 0..16000000: %d %d\n",
           t->constant >= 0 && t->constant <= 10,
           t->maxerror >= 0 && t->maxerror <= 16000000,
           t->esterror >= 0 && t->esterror <= 16000000);
    printf("  freq within 500 ppm: %d, tick 9000..11000: %d, tai >= 0: %d\n",
           t->freq >= -32768000 && t->freq <= 32768000,
           t->tick >= 9000 && t->tick <= 11000, t->tai >= 0);
    printf("  ppsfreq %ld jitter %ld shift %d stabil %ld jitcnt %ld calcnt %ld "
           "errcnt %ld stbcnt %ld\n",
           t->ppsfreq, t->jitter, t->shift, t->stabil, t->jitcnt, t->calcnt,
           t->errcnt, t->stbcnt);
    /* with STA_NANO, time's tv_usec holds nanoseconds */
    long sub_second = t->status & STA_NANO ? 1000000000L : 1000000L;
    printf("  time is now: %d, usec in range: %d\n", skew >= 0 && skew <= 1,
           t->time.tv_usec >= 0 && t->time.tv_usec < sub_second);
}

/* In a child that gave up root (and with it CAP_SYS_TIME). */
static void refused_unprivileged(void)
{
    int dropped = setuid(65534) == 0 && geteuid() == 65534;
    printf("as uid 65534: %d\n", dropped);
    if (!dropped)
        return;
    /* each would change nothing if it went through */
    struct timex t;
    memset(&t, 0, sizeof(t));
    t.modes = ADJ_OFFSET_SINGLESHOT; /* adjtime(0): no slew */
    printf("single-shot offset 0: %s\n", result_text(adjtimex(&t)));
    memset(&t, 0, sizeof(t));
    t.modes = ADJ_TICK; /* out of range: EINVAL if it were allowed */
    t.tick = 1;
    printf("tick 1: %s\n", result_text(adjtimex(&t)));
    memset(&t, 0, sizeof(t));
    t.modes = ADJ_SETOFFSET; /* a negative usec: EINVAL if allowed */
    t.time.tv_usec = -1;
    printf("set offset, bad usec: %s\n", result_text(adjtimex(&t)));
    memset(&t, 0, sizeof(t));
    t.modes = 0x40000000; /* no such mode: a query if allowed */
    printf("unknown mode bit: %s\n",
           result_text(syscall(SYS_clock_adjtime, CLOCK_REALTIME, &t)));
    memset(&t, 0, sizeof(t));
    t.modes = ADJ_OFFSET_SS_READ;
    long rc = adjtimex(&t);
    printf("read-only single-shot still allowed: %s\n",
           rc >= 0 ? "a state" : result_text(rc));
}

static void changes_refused(void)
{
    pid_t c = fork();
    if (c == 0) {
        refused_unprivileged();
        _exit(0);
    }
    waitpid(c, NULL, 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct timex t;
    memset(&t, 0, sizeof(t));
    show("adjtimex query", adjtimex(&t), &t);
    memset(&t, 0, sizeof(t));
    show("clock_adjtime CLOCK_REALTIME query",
         syscall(SYS_clock_adjtime, CLOCK_REALTIME, &t), &t);
    memset(&t, 0, sizeof(t));
    t.modes = ADJ_OFFSET_SS_READ;
    show("adjtime read (ADJ_OFFSET_SS_READ)", adjtimex(&t), &t);
    int ntp = ntp_gettime(&(struct ntptimeval){0});
    printf("ntp_gettime in TIME_OK..TIME_ERROR: %d\n",
           ntp >= TIME_OK && ntp <= TIME_ERROR);

    /* fields Linux does not set come back as they went in */
    memset(&t, 0x55, sizeof(t));
    t.modes = 0;
    adjtimex(&t);
    int pad[11];
    memcpy(pad, (char *)&t + sizeof(t) - sizeof(pad), sizeof(pad));
    printf("padding kept: %d\n", pad[0] == 0x55555555 && pad[10] == 0x55555555);

    for (int id = -10; id < 26; id++) {
        memset(&t, 0, sizeof(t));
        long rc = syscall(SYS_clock_adjtime, id, &t);
        printf("clock %d: %s\n", id, rc >= 0 ? "a state" : result_text(rc));
    }
    memset(&t, 0, sizeof(t));
    t.modes = ADJ_OFFSET; /* refused for the clock before the mode */
    printf("set on CLOCK_MONOTONIC: %s\n",
           result_text(syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, &t)));
    printf("set on clock 99: %s\n", result_text(syscall(SYS_clock_adjtime, 99, &t)));
    memset(&t, 0, sizeof(t));
    t.modes = ADJ_ADJTIME; /* without the single-shot bit */
    printf("ADJ_ADJTIME alone: %s\n", result_text(adjtimex(&t)));
    printf("adjtimex bad pointer: %s\n", result_text(syscall(SYS_adjtimex, (void *)8)));
    printf("clock_adjtime bad pointer: %s\n",
           result_text(syscall(SYS_clock_adjtime, CLOCK_REALTIME, (void *)8)));
    printf("clock_adjtime bad clock, bad pointer: %s\n",
           result_text(syscall(SYS_clock_adjtime, 99, (void *)8)));
    changes_refused();
    return 0;
}
