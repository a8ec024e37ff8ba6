/*
 * mq_notify_thread: mq_notify with SIGEV_THREAD (LTP mq_notify03),
 * compared with a native run. Raw: the kernel writes the caller's 32-byte
 * cookie to the netlink socket named by sigev_signo, its last byte
 * NOTIFY_REMOVED (2) when the registration is removed and
 * NOTIFY_WOKENUP (1) when a message arrives; the refusals come before
 * the queue's own checks: a bad cookie pointer EFAULT, no fd EBADF, a
 * file ENOTSOCK, a socket that is not netlink EINVAL. Then glibc's
 * mq_notify, whose helper thread reads that socket and runs the function
 * in a new thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static mqd_t mq;

static long notify_raw(mqd_t q, int sock, void *cookie)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_signo = sock;
    ev.sigev_value.sival_ptr = cookie;
    return syscall(SYS_mq_notify, q, &ev);
}

static void show_cookie(const char *what, int sock)
{
    unsigned char buf[64];
    ssize_t n = recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0)
        printf("%s: %s\n", what, strerrorname_np(errno));
    else
        printf("%s: %zd bytes, '%.8s', last %u\n", what, n, (char *)buf,
               n > 0 ? buf[n - 1] : 0);
}

static void raw_cases(void)
{
    int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    CHECK(nl >= 0);
    char cookie[32] = "cookie-1";
    int file = open("/dev/null", O_RDONLY);
    int unix_sock = socket(AF_UNIX, SOCK_DGRAM, 0);
    printf("bad cookie: %s\n", result_text(notify_raw(mq, nl, (void *)8)));
    printf("no fd: %s\n", result_text(notify_raw(mq, 999, cookie)));
    printf("a file: %s\n", result_text(notify_raw(mq, file, cookie)));
    printf("a unix socket: %s\n",
           result_text(notify_raw(mq, unix_sock, cookie)));
    printf("bad queue, bad socket: %s\n",
           result_text(notify_raw((mqd_t)999, 999, cookie)));
    printf("bad queue: %s\n", result_text(notify_raw((mqd_t)999, nl, cookie)));
    printf("register: %s\n", result_text(notify_raw(mq, nl, cookie)));
    show_cookie("nothing yet", nl);
    printf("again: %s\n", result_text(notify_raw(mq, nl, cookie)));
    printf("remove: %s\n", result_text(syscall(SYS_mq_notify, mq, NULL)));
    show_cookie("after remove", nl);
    memcpy(cookie, "cookie-2", 8);
    printf("register: %s\n", result_text(notify_raw(mq, nl, cookie)));
    CHECK(mq_send(mq, "m", 1, 0) == 0);
    show_cookie("after a message", nl);
    show_cookie("then", nl);
    char buf[16];
    CHECK(mq_receive(mq, buf, sizeof(buf), NULL) == 1);
    close(file);
    close(unix_sock);
    close(nl);
}

static void callback(union sigval sv)
{
    char buf[16];
    ssize_t n = mq_receive(mq, buf, sizeof(buf), NULL);
    printf("callback: value %d, received %zd '%.*s'\n", sv.sival_int, n,
           (int)n, buf);
    fflush(stdout);
    _exit(0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 8};
    mq_unlink("/mq_notify_thread");
    mq = mq_open("/mq_notify_thread", O_RDWR | O_CREAT | O_EXCL, 0600, &a);
    CHECK(mq != (mqd_t)-1);
    mq_unlink("/mq_notify_thread");
    raw_cases();
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = callback;
    ev.sigev_value.sival_int = 42;
    printf("glibc register: %s\n", result_text(mq_notify(mq, &ev)));
    printf("glibc remove: %s\n", result_text(mq_notify(mq, NULL)));
    printf("glibc register: %s\n", result_text(mq_notify(mq, &ev)));
    CHECK(mq_send(mq, "hello", 5, 1) == 0);
    for (;;)
        pause(); /* the callback ends the program */
}
