/* gdb_ckpt_fds.c - a periodic timerfd read turn by turn, a signalfd with
 * a queued real-time signal pending between the turns, and a POSIX
 * message queue holding one message between them: a checkpoint taken
 * then must bring back the timer (hvrun's) with its eventfd's count and
 * hvrun's own reference to it, the signalfd's eventfd kept readable while
 * the signal is pending, and the queue (hvrun's) with its descriptor's
 * eventfd (gdb/checkpoint-fds); the output is the same. */
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define TURNS 100

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int sig = SIGRTMIN;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return 1;
    int sfd = signalfd(-1, &set, 0);
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    /* every millisecond from 1 ms on */
    struct itimerspec its = {{0, 1000000}, {0, 1000000}};
    struct mq_attr attr = {.mq_maxmsg = 4, .mq_msgsize = 32};
    mqd_t mq = mq_open("/gdb_ckpt_fds", O_RDWR | O_CREAT | O_EXCL, 0600,
                       &attr);
    if (sfd < 0 || tfd < 0 || mq < 0 ||
        timerfd_settime(tfd, 0, &its, NULL) < 0)
        return 2;
    mq_unlink("/gdb_ckpt_fds");
    union sigval v = {.sival_int = 0};
    if (sigqueue(getpid(), sig, v) < 0 || mq_send(mq, "message 0", 10, 0) < 0)
        return 3;
    uint64_t total = 0;
    for (int i = 1; i <= TURNS; i++) {
        uint64_t n;
        if (read(tfd, &n, sizeof(n)) != sizeof(n))
            return 4;
        total += n;
        v.sival_int = i;
        struct signalfd_siginfo si;
        if (sigqueue(getpid(), sig, v) < 0 ||
            read(sfd, &si, sizeof(si)) != sizeof(si))
            return 5;
        char msg[32], got[32];
        int len = snprintf(msg, sizeof(msg), "message %d", i) + 1;
        if (mq_send(mq, msg, (size_t)len, 0) < 0 ||
            mq_receive(mq, got, sizeof(got), NULL) < 0)
            return 6;
        printf("turn %d: %llu expirations in all, signal with %d, %s\n", i,
               (unsigned long long)total, si.ssi_int, got);
    }
    return 0;
}
