/*
 * fifo_open.c - opening a FIFO waits for the other end as on Linux: a
 * blocking O_RDONLY open returns only once a writer has opened (and an
 * O_WRONLY one once a reader has), O_RDONLY|O_NONBLOCK succeeds at once,
 * O_WRONLY|O_NONBLOCK without a reader is ENXIO (with a reader waiting in
 * open it succeeds), and a signal interrupts a waiting open: EINTR
 * without SA_RESTART, the open goes on with it. The order of the lines
 * is the order of events; compared with a native run
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static char fifo[64];

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void say(const char *s)
{
    printf("%s\n", s);
    fflush(stdout);
}

/* The parent opens one end; a child opens the other after a pause. */
static void waits_for(int parent_mode, int child_mode, const char *name)
{
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        nap_ms(50);
        printf("%s: child opens\n", name);
        fflush(stdout);
        int fd = open(fifo, child_mode);
        CHECK(fd >= 0);
        if (child_mode == O_WRONLY)
            CHECK(write(fd, "x", 1) == 1);
        close(fd);
        _exit(0);
    }
    int fd = open(fifo, parent_mode);
    CHECK(fd >= 0);
    printf("%s: parent's open returned\n", name);
    fflush(stdout);
    if (parent_mode == O_RDONLY) {
        char ch = 0;
        printf("%s: read %zd\n", name, read(fd, &ch, 1));
    }
    close(fd);
    CHECK(waitpid(c, NULL, 0) == c);
}

static void on_alarm(int sig) { (void)sig; }

static void interrupted(int restart)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sa.sa_flags = restart ? SA_RESTART : 0;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    pid_t parent = getpid();
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        nap_ms(30);
        kill(parent, SIGUSR1);
        if (restart) {
            nap_ms(30);
            int fd = open(fifo, O_WRONLY);
            CHECK(fd >= 0);
            close(fd);
        }
        _exit(0);
    }
    int fd = open(fifo, O_RDONLY);
    printf("signal %s: open %s\n", restart ? "SA_RESTART" : "no restart",
           fd >= 0 ? "succeeded" : strerrorname_np(errno));
    fflush(stdout);
    if (fd >= 0)
        close(fd);
    CHECK(waitpid(c, NULL, 0) == c);
}

int main(void)
{
    snprintf(fifo, sizeof(fifo), "fifo_open.%d", (int)getpid());
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);

    int fd = open(fifo, O_WRONLY | O_NONBLOCK);
    printf("nonblocking writer, no reader: %s\n",
           fd >= 0 ? "opened" : strerrorname_np(errno));
    fd = open(fifo, O_RDONLY | O_NONBLOCK);
    printf("nonblocking reader: %s\n", fd >= 0 ? "opened" : strerrorname_np(errno));
    int w = open(fifo, O_WRONLY | O_NONBLOCK);
    printf("nonblocking writer with a reader: %s\n",
           w >= 0 ? "opened" : strerrorname_np(errno));
    close(w);
    close(fd);

    waits_for(O_RDONLY, O_WRONLY, "reader first");
    waits_for(O_WRONLY, O_RDONLY, "writer first");

    /* A reader waiting in open is a reader: a non-blocking writer opens. */
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        int r = open(fifo, O_RDONLY);
        CHECK(r >= 0);
        say("waiting reader's open returned");
        _exit(0);
    }
    int tries = 0;
    while ((w = open(fifo, O_WRONLY | O_NONBLOCK)) < 0 && errno == ENXIO &&
           tries++ < 1000)
        nap_ms(1);
    /* The reader's line first: it is printed once this open let it go. */
    CHECK(waitpid(c, NULL, 0) == c);
    say(w >= 0 ? "nonblocking writer beside a waiting reader: opened"
               : "nonblocking writer beside a waiting reader: failed");
    close(w);

    interrupted(0);
    interrupted(1);
    unlink(fifo);
    say("done");
    return 0;
}
