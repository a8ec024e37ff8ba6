/*
 * mqueue.c - POSIX message queues as Linux gives them: name rules, attribute
 * limits, O_CREAT|O_EXCL, priorities (highest first, FIFO within one),
 * O_NONBLOCK (EAGAIN), EMSGSIZE, EBADF for the wrong direction, absolute
 * timeouts, poll/epoll readiness, a fork child on the inherited
 * descriptor with blocking sends and receives both ways, mq_notify
 * (SIGEV_SIGNAL with its siginfo, SIGEV_NONE, EBUSY), the status line a
 * read gives, unlink while open. Run natively and under hvrun, the output
 * must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

#define QNAME "/hvrun-guest-test-mq"
#define QNAME2 "/hvrun-guest-test-mq2"

static long raw_open(const char *name, int oflag, mode_t mode,
                     struct mq_attr *attr)
{
    return syscall(SYS_mq_open, name, oflag, mode, attr);
}

static struct timespec after_ms(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    return ts;
}

static const char *ready(mqd_t q)
{
    struct pollfd pfd = {.fd = q, .events = POLLIN | POLLOUT};
    int n = poll(&pfd, 1, 0);
    return n == 0 ? "none"
           : (pfd.revents & (POLLIN | POLLOUT)) == (POLLIN | POLLOUT) ? "in|out"
           : (pfd.revents & POLLIN) ? "in"
           : (pfd.revents & POLLOUT) ? "out"
                                     : "other";
}

static void names_and_attrs(void)
{
    char longname[300];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = 0;
    printf("raw empty name: %s\n", result_text(raw_open("", O_RDONLY | O_CREAT, 0600, NULL)));
    printf("raw name with slash: %s\n", result_text(raw_open("a/b", O_RDONLY | O_CREAT, 0600, NULL)));
    printf("raw name dot: %s\n", result_text(raw_open(".", O_RDONLY | O_CREAT, 0600, NULL)));
    printf("raw name dotdot: %s\n", result_text(raw_open("..", O_RDONLY, 0600, NULL)));
    printf("raw long name: %s\n", result_text(raw_open(longname, O_RDONLY | O_CREAT, 0600, NULL)));
    printf("raw bad name pointer: %s\n", result_text(raw_open((char *)8, O_RDONLY, 0600, NULL)));
    printf("glibc name without slash: %s\n", result_text(mq_open("noslash", O_RDONLY)));
    printf("open missing: %s\n", result_text(mq_open(QNAME, O_RDONLY)));
    printf("unlink missing: %s\n", result_text(mq_unlink(QNAME)));

    struct mq_attr a = {.mq_maxmsg = 0, .mq_msgsize = 16};
    printf("maxmsg 0: %s\n", result_text(mq_open(QNAME, O_RDWR | O_CREAT, 0600, &a)));
    a = (struct mq_attr){.mq_maxmsg = 4, .mq_msgsize = -1};
    printf("msgsize -1: %s\n", result_text(mq_open(QNAME, O_RDWR | O_CREAT, 0600, &a)));
    a = (struct mq_attr){.mq_maxmsg = 100000, .mq_msgsize = 16};
    printf("maxmsg 100000: %s\n", result_text(mq_open(QNAME, O_RDWR | O_CREAT, 0600, &a)));
    a = (struct mq_attr){.mq_maxmsg = 4, .mq_msgsize = 32 * 1024 * 1024};
    printf("msgsize 32M: %s\n", result_text(mq_open(QNAME, O_RDWR | O_CREAT, 0600, &a)));
    a = (struct mq_attr){.mq_maxmsg = 1000, .mq_msgsize = 8192};
    printf("maxmsg 1000: %s\n", result_text(mq_open(QNAME, O_RDWR | O_CREAT, 0600, &a)));
    printf("bad attr pointer: %s\n",
           result_text(mq_open(QNAME, O_RDWR | O_CREAT, 0600, (struct mq_attr *)8)));
    printf("attr not looked at without O_CREAT: %s\n",
           result_text(raw_open(QNAME + 1, O_RDWR, 0600, &(struct mq_attr){0})));

    mqd_t q = mq_open(QNAME, O_RDWR | O_CREAT, 0600, NULL);
    CHECK(q >= 0);
    struct mq_attr got;
    CHECK(mq_getattr(q, &got) == 0);
    printf("defaults: maxmsg %ld msgsize %ld curmsgs %ld flags %ld\n",
           got.mq_maxmsg, got.mq_msgsize, got.mq_curmsgs, got.mq_flags);
    printf("close-on-exec: %d\n", (fcntl(q, F_GETFD) & FD_CLOEXEC) != 0);
    printf("create again, excl: %s\n",
           result_text(mq_open(QNAME, O_RDWR | O_CREAT | O_EXCL, 0600, NULL)));
    printf("open accmode 3: %s\n", result_text(raw_open(QNAME + 1, O_WRONLY | O_RDWR, 0, NULL)));
    mqd_t q2 = mq_open(QNAME, O_RDWR | O_CREAT, 0600, &a);
    printf("create again, attr ignored: %s\n", q2 >= 0 ? "ok" : result_text(-1));
    mq_close(q2);
    printf("unlink: %s\n", result_text(mq_unlink(QNAME)));
    printf("open after unlink: %s\n", result_text(mq_open(QNAME, O_RDWR)));
    printf("send on unlinked: %s\n", result_text(mq_send(q, "x", 1, 0)));
    char buf[8192];
    printf("receive on unlinked: %s\n", result_text(mq_receive(q, buf, sizeof(buf), NULL)));
    mq_close(q);
}

static void priorities_and_errors(void)
{
    struct mq_attr a = {.mq_maxmsg = 5, .mq_msgsize = 16};
    mqd_t q = mq_open(QNAME, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
    CHECK(q >= 0);
    printf("ready empty: %s\n", ready(q));
    const char *text[] = {"a1", "b5", "c1", "d5", "e0"};
    unsigned prio[] = {1, 5, 1, 5, 0};
    for (int i = 0; i < 5; i++)
        CHECK(mq_send(q, text[i], strlen(text[i]), prio[i]) == 0);
    printf("ready full: %s\n", ready(q));
    CHECK(mq_getattr(q, &a) == 0);
    printf("curmsgs %ld\n", a.mq_curmsgs);

    char status[128] = {0};
    ssize_t n = read(q, status, sizeof(status) - 1);
    printf("read status (%zd): %s", n, status);
    printf("read again: %zd\n", read(q, status, sizeof(status)));
    printf("write: %s\n", result_text(write(q, "x", 1)));

    struct mq_attr nb = {.mq_flags = O_NONBLOCK}, old;
    CHECK(mq_setattr(q, &nb, &old) == 0);
    printf("setattr old flags %ld\n", old.mq_flags);
    printf("send full nonblock: %s\n", result_text(mq_send(q, "f", 1, 0)));
    struct timespec soon = after_ms(20);
    printf("timedsend full nonblock: %s\n", result_text(mq_timedsend(q, "f", 1, 0, &soon)));
    CHECK(mq_getattr(q, &a) == 0);
    printf("getattr flags %ld\n", a.mq_flags);
    nb.mq_flags = 0;
    CHECK(mq_setattr(q, &nb, NULL) == 0);
    soon = after_ms(20);
    printf("timedsend full: %s\n", result_text(mq_timedsend(q, "f", 1, 0, &soon)));
    nb.mq_flags = O_NONBLOCK | O_APPEND;
    printf("setattr bad flags: %s\n", result_text(mq_setattr(q, &nb, NULL)));

    char buf[64];
    printf("receive small buffer: %s\n", result_text(mq_receive(q, buf, 15, NULL)));
    for (int i = 0; i < 5; i++) {
        unsigned p;
        n = mq_receive(q, buf, sizeof(buf), &p);
        CHECK(n >= 0);
        printf("got %.*s prio %u\n", (int)n, buf, p);
    }
    printf("ready drained: %s\n", ready(q));
    soon = after_ms(20);
    printf("timedreceive empty: %s\n", result_text(mq_timedreceive(q, buf, sizeof(buf), NULL, &soon)));
    struct timespec past = {1, 0}, bad = {0, 1000000000L};
    printf("timedreceive past: %s\n", result_text(mq_timedreceive(q, buf, sizeof(buf), NULL, &past)));
    printf("timedreceive bad timeout: %s\n",
           result_text(mq_timedreceive(q, buf, sizeof(buf), NULL, &bad)));
    printf("timedsend bad timeout pointer: %s\n",
           result_text(syscall(SYS_mq_timedsend, q, "x", 1, 0, (void *)8)));
    printf("send too long: %s\n", result_text(mq_send(q, buf, 17, 0)));
    printf("send prio 32768: %s\n", result_text(mq_send(q, "x", 1, 32768)));
    printf("send bad buffer: %s\n", result_text(mq_send(q, (char *)8, 4, 0)));
    printf("send empty message: %s\n", result_text(mq_send(q, "", 0, 3)));
    printf("ready one: %s\n", ready(q));
    n = mq_receive(q, buf, sizeof(buf), NULL);
    printf("received empty message: %zd\n", n);
    printf("send on fd 0: %s\n", result_text(mq_send(0, "x", 1, 0)));
    printf("getattr on fd 0: %s\n", result_text(mq_getattr(0, &a)));
    printf("getattr bad fd: %s\n", result_text(mq_getattr(99, &a)));

    mqd_t ro = mq_open(QNAME, O_RDONLY), wo = mq_open(QNAME, O_WRONLY);
    CHECK(ro >= 0 && wo >= 0);
    printf("send on read-only: %s\n", result_text(mq_send(ro, "x", 1, 0)));
    printf("receive on write-only: %s\n", result_text(mq_receive(wo, buf, sizeof(buf), NULL)));
    printf("read on write-only: %s\n", result_text(read(wo, buf, sizeof(buf))));
    printf("write on read-only: %s\n", result_text(write(ro, "x", 1)));
    CHECK(mq_send(wo, "via wo", 6, 2) == 0);
    printf("other descriptor ready: %s\n", ready(ro));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN}, out;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, ro, &ev) == 0);
    printf("epoll: %d\n", epoll_wait(ep, &out, 1, 0));
    n = mq_receive(ro, buf, sizeof(buf), NULL);
    printf("got %.*s\n", (int)n, buf);
    printf("epoll drained: %d\n", epoll_wait(ep, &out, 1, 0));
    close(ep);
    mq_close(ro);
    mq_close(wo);
    mq_close(q);
    mq_unlink(QNAME);
}

static volatile sig_atomic_t got_sig, got_code, got_value, got_pid;

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    got_sig = sig;
    got_code = si->si_code;
    got_value = si->si_value.sival_int;
    got_pid = si->si_pid;
}

static void with_child(void)
{
    struct mq_attr a = {.mq_maxmsg = 2, .mq_msgsize = 32};
    mqd_t q = mq_open(QNAME, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
    mqd_t back = mq_open(QNAME2, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
    CHECK(q >= 0 && back >= 0);

    struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
    sigaction(SIGUSR1, &sa, NULL);
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1,
                           .sigev_value.sival_int = 42};
    printf("notify: %s\n", result_text(mq_notify(q, &sev)));
    printf("notify again: %s\n", result_text(mq_notify(q, &sev)));
    struct sigevent badev = {.sigev_notify = 99};
    printf("notify bad kind: %s\n", result_text(mq_notify(q, &badev)));
    badev = (struct sigevent){.sigev_notify = SIGEV_SIGNAL, .sigev_signo = 65};
    printf("notify bad signal: %s\n", result_text(mq_notify(q, &badev)));
    printf("notify bad fd: %s\n", result_text(mq_notify(0, &sev)));

    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        char buf[32];
        int busy = mq_notify(q, &sev) < 0 ? errno : 0;
        /* the parent waits in a blocking receive on back */
        usleep(20000);
        CHECK(mq_send(q, "first", 5, 0) == 0); /* the parent is notified */
        ssize_t n = mq_receive(back, buf, sizeof(buf), NULL);
        CHECK(n == 3);
        /* fill q: the parent's third send waits until this receive */
        CHECK(mq_send(q, "x", 1, 0) == 0);
        usleep(20000);
        n = mq_receive(q, buf, sizeof(buf), NULL);
        CHECK(n > 0);
        _exit(busy == EBUSY ? 7 : 1);
    }
    char buf[32];
    ssize_t n = mq_receive(back, buf, sizeof(buf), NULL);
    printf("blocking receive, the notification's handler ran: %s\n", result_text(n));
    n = mq_receive(q, buf, sizeof(buf), NULL);
    printf("child sent: %.*s\n", n > 0 ? (int)n : 0, buf);
    printf("signal %d code SI_MESGQ %d value %d from the child %d\n", got_sig,
           got_code == SI_MESGQ, got_value, got_pid == c);
    CHECK(mq_send(back, "ack", 3, 0) == 0);
    while (1) { /* wait for the child's filler */
        struct mq_attr cur;
        CHECK(mq_getattr(q, &cur) == 0);
        if (cur.mq_curmsgs == 1)
            break;
        usleep(1000);
    }
    CHECK(mq_send(q, "y", 1, 0) == 0);
    printf("blocking send on full: %s\n", result_text(mq_send(q, "z", 1, 0)));
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("child: notify while registered gave EBUSY: %d\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 7);
    while (mq_receive(q, buf, sizeof(buf), NULL) >= 0) {
        struct mq_attr cur;
        mq_getattr(q, &cur);
        if (cur.mq_curmsgs == 0)
            break;
    }

    got_sig = 0;
    printf("notify none: %s\n",
           result_text(mq_notify(q, &(struct sigevent){.sigev_notify = SIGEV_NONE})));
    char status[128] = {0};
    mqd_t rd = mq_open(QNAME, O_RDONLY);
    CHECK(read(rd, status, sizeof(status) - 1) > 0);
    printf("status NOTIFY field: %.20s\n", strstr(status, "NOTIFY:"));
    mq_close(rd);
    printf("notify while none registered: %s\n", result_text(mq_notify(q, &sev)));
    printf("unregister: %s\n", result_text(mq_notify(q, NULL)));
    printf("unregister again: %s\n", result_text(mq_notify(q, NULL)));
    CHECK(mq_notify(q, &(struct sigevent){.sigev_notify = SIGEV_NONE}) == 0);
    CHECK(mq_send(q, "n", 1, 0) == 0); /* fires the SIGEV_NONE one */
    printf("after SIGEV_NONE fired: notify %s, signal %d\n",
           result_text(mq_notify(q, &sev)), got_sig);
    CHECK(mq_receive(q, buf, sizeof(buf), NULL) == 1);
    mqd_t dup_q = mq_open(QNAME, O_RDWR);
    mq_close(dup_q); /* the owner's close ends its registration */
    printf("after the owner closed a descriptor: notify %s\n",
           result_text(mq_notify(q, &sev)));
    mq_notify(q, NULL);
    mq_close(q);
    mq_close(back);
    mq_unlink(QNAME);
    mq_unlink(QNAME2);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    mq_unlink(QNAME);
    mq_unlink(QNAME2);
    names_and_attrs();
    priorities_and_errors();
    with_child();
    return 0;
}
