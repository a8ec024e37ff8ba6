/*
 * fdinfo_own_kinds.c - /proc/self/fdinfo of an eventfd, a perf event and
 * a pidfd says what Linux's does. Under hvrun an eventfd's eventfd-id was
 * the host's (a host-wide count: every eventfd of every host program and
 * of hvrun's own stand-ins), a perf event's flags had no access mode (00
 * where Linux's file is O_RDWR) and its mnt_id was a pipe's, a pidfd's
 * mnt_id an eventfd's (Linux 6.9 and later: pidfs's).
 * - eventfd: the lines count (16 columns of hex), id (a decimal), semaphore
 *   in Linux's order; the id is the lowest free one (a closed eventfd's id
 *   is the next one's), the description's (a dup, a fork child's copy and
 *   one received in SCM_RIGHTS show it); a timerfd or a signalfd made
 *   meanwhile takes none;
 * - perf event (task-clock): flags O_RDWR with O_CLOEXEC, mnt_id an
 *   anonymous inode's (an eventfd's);
 * - pidfd: mnt_id that of another pidfd, and whether it is an anonymous
 *   inode's (a kernel before pidfs) or not.
 * Prints what holds, no id or mount number: those are the host's (native)
 * or the run's (tests/determinism's fdinfo-eventfd reads them twice).
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_scm.h"
#include "guest_slurp.h"

static char buf[8192];

static void read_fdinfo(int fd)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    CHECK(slurp_into(path, buf, sizeof(buf)) > 0);
}

/* The value of fdinfo's line "key\t..." or "key ..." of fd, or -1. */
static long field(int fd, const char *key, int base)
{
    read_fdinfo(fd);
    const char *at = strstr(buf, key);
    return at ? strtol(at + strlen(key), NULL, base) : -1;
}

static long eventfd_id(int fd) { return field(fd, "eventfd-id:", 10); }

/* The eventfd lines with the id's digits as "N". */
static void print_eventfd_lines(int fd)
{
    read_fdinfo(fd);
    for (char *line = strstr(buf, "eventfd-"); line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, "eventfd-id: ", 12) == 0) {
            const char *d = line + 12;
            size_t n = strspn(d, "0123456789");
            printf("  eventfd-id: %s\n", n > 0 && !d[n] ? "N" : d);
        } else {
            printf("  %s\n", line);
        }
        line = nl ? nl + 1 : NULL;
    }
}

static void eventfd_ids(void)
{
    int e1 = eventfd(5, EFD_SEMAPHORE);
    int e2 = eventfd(0, 0);
    CHECK(e1 >= 0 && e2 >= 0);
    printf("eventfd lines (count 5, semaphore):\n");
    print_eventfd_lines(e1);
    printf("eventfd lines (count 0):\n");
    print_eventfd_lines(e2);
    long id1 = eventfd_id(e1), id2 = eventfd_id(e2);
    printf("two eventfds' ids differ: %d\n", id1 >= 0 && id1 != id2);
    close(e1);
    int e3 = eventfd(0, 0);
    CHECK(e3 >= 0);
    printf("the next eventfd takes the closed one's id: %d\n",
           eventfd_id(e3) == id1);
    int d = dup(e2);
    printf("a dup shows the same id: %d\n", eventfd_id(d) == id2);
    close(d);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        printf("a fork child's copy shows the same id: %d\n",
               eventfd_id(e2) == id2);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    send_fd(sv[0], e2);
    int got = recv_fd(sv[1]);
    printf("one received in SCM_RIGHTS shows the same id: %d\n",
           eventfd_id(got) == id2);
    close(got);
    close(sv[0]);
    close(sv[1]);
    close(e2);
    close(e3);
}

/* A timerfd, a signalfd and a POSIX message queue are no eventfds: they
 * take no eventfd id (hvrun's stand-ins for them are host eventfds). */
static void other_kinds_take_no_id(void)
{
    int e1 = eventfd(0, 0);
    CHECK(e1 >= 0);
    long id1 = eventfd_id(e1);
    close(e1);
    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    int s = signalfd(-1, &set, 0);
    CHECK(t >= 0 && s >= 0);
    int e2 = eventfd(0, 0);
    CHECK(e2 >= 0);
    printf("after a timerfd and a signalfd the closed id is the next: %d\n",
           eventfd_id(e2) == id1);
    close(e2);
    close(t);
    close(s);
}

static long perf_task_clock(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.disabled = 1;
    return syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void perf_and_pidfd(void)
{
    int e = eventfd(0, 0);
    CHECK(e >= 0);
    long anon_mnt = field(e, "mnt_id:", 10);
    int pf = (int)perf_task_clock();
    if (pf < 0) {
        printf("perf_event_open: unavailable\n");
    } else {
        printf("perf event flags: 0%lo\n", field(pf, "flags:", 8));
        printf("perf event mnt_id an anonymous inode's: %d\n",
               field(pf, "mnt_id:", 10) == anon_mnt);
        close(pf);
    }
    int p1 = (int)syscall(SYS_pidfd_open, getpid(), 0);
    int p2 = (int)syscall(SYS_pidfd_open, getpid(), 0);
    CHECK(p1 >= 0 && p2 >= 0);
    long pid_mnt = field(p1, "mnt_id:", 10);
    printf("pidfd flags: 0%lo\n", field(p1, "flags:", 8));
    printf("two pidfds' mnt_id agree: %d\n",
           pid_mnt >= 0 && pid_mnt == field(p2, "mnt_id:", 10));
    printf("pidfd mnt_id an anonymous inode's (no pidfs): %d\n",
           pid_mnt == anon_mnt);
    close(p1);
    close(p2);
    close(e);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    eventfd_ids();
    other_kinds_take_no_id();
    perf_and_pidfd();
    return 0;
}
