/*
 * thread.c - the thread family. With one guest thread per process (threads
 * on the shared vCPU arrive later), a futex has no other waiter or waker:
 * WAKE wakes nobody, WAIT either fails its value check, times out on the
 * logical clock, or can never return, which hvrun reports as a deadlock
 * instead of hanging.
 */
#include "proxy.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "det.h"

static long futex_wait(struct proxy_process *p, const uint64_t a[6],
                       bool absolute)
{
    uint32_t cur;
    int rc = proxy_copy_in(p, &cur, a[0], sizeof(cur));
    if (rc < 0)
        return rc;
    if (cur != (uint32_t)a[2])
        return -EAGAIN;
    if (a[3]) {
        struct timespec ts;
        rc = proxy_copy_in(p, &ts, a[3], sizeof(ts));
        if (rc < 0)
            return rc;
        if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
            return -EINVAL;
        uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ULL +
                      (uint64_t)ts.tv_nsec;
        if (absolute) {
            struct timespec now;
            int clk = ((int)a[1] & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME
                                                         : CLOCK_MONOTONIC;
            det_clock_gettime(p->det, clk, &now);
            uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ULL +
                              (uint64_t)now.tv_nsec;
            ns = ns > now_ns ? ns - now_ns : 0;
        }
        det_sleep(p->det, ns);
        return -ETIMEDOUT;
    }
    proxy_log(p, 0,
              "deadlock: futex wait on %#llx with no other thread to wake "
              "it; ending the run",
              (unsigned long long)a[0]);
    p->exited = true;
    p->exit_status = -1;
    return PROXY_RET_NORETURN;
}

/* FUTEX_WAKE_OP: *uaddr2 = op(*uaddr2); wakes nobody (no waiters). */
static long futex_wake_op(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t val3 = (uint32_t)a[5], old, arg = (val3 >> 12) & 0xfff;
    int op = (val3 >> 28) & 0x7;
    if ((val3 >> 31) & 1)
        arg = arg < 32 ? 1u << arg : 0;
    int rc = proxy_copy_in(p, &old, a[4], sizeof(old));
    if (rc < 0)
        return rc;
    uint32_t next = op == FUTEX_OP_SET    ? arg
                    : op == FUTEX_OP_ADD  ? old + arg
                    : op == FUTEX_OP_OR   ? old | arg
                    : op == FUTEX_OP_ANDN ? old & ~arg
                    : op == FUTEX_OP_XOR  ? old ^ arg
                                          : old;
    if (op > FUTEX_OP_XOR)
        return -ENOSYS;
    rc = proxy_copy_out(p, a[4], &next, sizeof(next));
    return rc < 0 ? rc : 0;
}

static long sys_futex(struct proxy_process *p, const uint64_t a[6])
{
    int cmd = (int)a[1] & FUTEX_CMD_MASK;
    if (a[0] & 3)
        return -EINVAL;
    switch (cmd) {
    case FUTEX_WAIT:
        return futex_wait(p, a, false);
    case FUTEX_WAIT_BITSET:
        if ((uint32_t)a[5] == 0)
            return -EINVAL;
        return futex_wait(p, a, true);
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
        return 0;
    case FUTEX_REQUEUE:
        return 0;
    case FUTEX_CMP_REQUEUE: {
        uint32_t cur;
        int rc = proxy_copy_in(p, &cur, a[0], sizeof(cur));
        if (rc < 0)
            return rc;
        return cur == (uint32_t)a[5] ? 0 : -EAGAIN;
    }
    case FUTEX_WAKE_OP:
        return futex_wake_op(p, a);
    default:
        /* PI futexes need owner tracking across threads; none yet. */
        return -ENOSYS;
    }
}

const struct proxy_syscall proxy_thread_syscalls[] = {
    {SYS_futex, "futex", sys_futex},
    {-1, NULL, NULL},
};
