/*
 * dnotify_lease.c - directory notification (fcntl F_NOTIFY) and file
 * leases (F_SETLEASE, F_GETLEASE), compared with native: which changes
 * signal a watcher, one-shot and DN_MULTISHOT registrations, F_SETSIG's
 * siginfo (POLL_MSG, the band, the fd), a change made by another process,
 * the lease rules (EAGAIN with other opens, a read lease only on a
 * read-only fd, EINVAL on a directory), and a break: the holder is
 * signalled, F_GETLEASE shows the type it goes to, a non-blocking opener
 * gets EWOULDBLOCK and a blocking one waits until the lease is given up.
 * The signals are blocked and collected with sigtimedwait, so the output
 * does not depend on when they arrive. Prints facts, not ids.
 */
#define _GNU_SOURCE
#include <dirent.h>
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

#define RT_SIG (SIGRTMIN + 2)

/* The signals of set now pending, counted; the last one's siginfo. */
static int collect(int sig, siginfo_t *last)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    struct timespec zero = {0, 0};
    int n = 0;
    siginfo_t si;
    while (sigtimedwait(&set, &si, &zero) == sig) {
        n++;
        if (last)
            *last = si;
    }
    return n;
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(close(fd) == 0);
}

static void dnotify_cases(void)
{
    CHECK(mkdir("d", 0755) == 0);
    int d = open("d", O_RDONLY | O_DIRECTORY);
    CHECK(d >= 0);
    touch("plain");
    int f = open("plain", O_RDONLY);
    printf("F_NOTIFY on a file: %s\n",
           fcntl(f, F_NOTIFY, DN_CREATE) < 0 ? strerror(errno) : "ok");
    close(f);

    CHECK(fcntl(d, F_NOTIFY, DN_CREATE) == 0);
    touch("d/one");
    printf("one-shot create: %d signal(s)\n", collect(SIGIO, NULL));
    touch("d/two");
    printf("after it fired: %d signal(s)\n", collect(SIGIO, NULL));

    CHECK(fcntl(d, F_SETSIG, RT_SIG) == 0);
    printf("F_GETSIG: %d\n", fcntl(d, F_GETSIG) == RT_SIG);
    CHECK(fcntl(d, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT) == 0);
    touch("d/three");
    CHECK(unlink("d/one") == 0);
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    int n = collect(RT_SIG, &si);
    printf("multishot create + delete: %d signal(s), code POLL_MSG %d, "
           "fd %d, band %#lx\n",
           n, si.si_code == POLL_MSG, si.si_fd == d, (long)si.si_band);
    int fd = open("d/three", O_WRONLY);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1);
    close(fd);
    printf("a write, not watched: %d signal(s)\n", collect(RT_SIG, NULL));
    CHECK(fcntl(d, F_NOTIFY, DN_MODIFY | DN_ATTRIB | DN_MULTISHOT) == 0);
    fd = open("d/three", O_WRONLY);
    CHECK(fd >= 0 && write(fd, "y", 1) == 1);
    close(fd);
    printf("a write, watched: %d signal(s)\n", collect(RT_SIG, NULL) > 0);
    CHECK(chmod("d/three", 0600) == 0);
    printf("chmod: %d signal(s)\n", collect(RT_SIG, NULL));
    CHECK(fcntl(d, F_NOTIFY, DN_RENAME | DN_MULTISHOT) == 0);
    CHECK(rename("d/three", "d/four") == 0);
    printf("rename, masks added up: %d signal(s)\n", collect(RT_SIG, NULL));
    /* DN_RENAME alone: a rename within the directory, not one out of it */
    CHECK(fcntl(d, F_NOTIFY, 0) == 0);
    CHECK(mkdir("d/sub", 0755) == 0);
    collect(RT_SIG, NULL);
    CHECK(fcntl(d, F_NOTIFY, DN_RENAME | DN_MULTISHOT) == 0);
    CHECK(rename("d/four", "d/sub/four") == 0);
    printf("DN_RENAME, a rename into a subdirectory: %d signal(s)\n",
           collect(RT_SIG, NULL));
    CHECK(rename("d/sub", "d/sub2") == 0);
    printf("DN_RENAME, a rename within: %d signal(s)\n", collect(RT_SIG, NULL));
    CHECK(rename("d/sub2/four", "d/four") == 0);
    CHECK(rmdir("d/sub2") == 0);
    collect(RT_SIG, NULL);
    CHECK(fcntl(d, F_NOTIFY, DN_MODIFY | DN_ATTRIB | DN_CREATE | DN_DELETE |
                                 DN_RENAME | DN_MULTISHOT) == 0);

    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        touch("d/from-child");
        _exit(0);
    }
    CHECK(waitpid(c, NULL, 0) == c);
    printf("a child's create: %d signal(s)\n", collect(RT_SIG, NULL));
    CHECK(fcntl(d, F_NOTIFY, 0) == 0);
    touch("d/after-removal");
    printf("after F_NOTIFY 0: %d signal(s)\n", collect(RT_SIG, NULL));
    close(d);
}

static const char *lease_name(int l)
{
    return l == F_RDLCK ? "F_RDLCK" : l == F_WRLCK ? "F_WRLCK"
                        : l == F_UNLCK ? "F_UNLCK" : "?";
}

static const char *result(int rc)
{
    return rc < 0 ? strerror(errno) : "ok";
}

static void lease_cases(void)
{
    touch("leased");
    int r = open("leased", O_RDONLY);
    CHECK(r >= 0);
    printf("F_GETLEASE without one: %s\n", lease_name(fcntl(r, F_GETLEASE)));
    printf("read lease: %s\n", result(fcntl(r, F_SETLEASE, F_RDLCK)));
    printf("F_GETLEASE: %s\n", lease_name(fcntl(r, F_GETLEASE)));
    printf("write lease on the same fd: %s\n",
           result(fcntl(r, F_SETLEASE, F_WRLCK)));
    CHECK(fcntl(r, F_SETLEASE, F_UNLCK) == 0);
    int other = open("leased", O_RDONLY);
    printf("write lease with another open: %s\n",
           result(fcntl(r, F_SETLEASE, F_WRLCK)));
    close(other);
    int rw = open("leased", O_RDWR);
    printf("read lease on a read-write fd: %s\n",
           result(fcntl(rw, F_SETLEASE, F_RDLCK)));
    close(rw);
    int dir = open(".", O_RDONLY | O_DIRECTORY);
    printf("lease on a directory: %s\n",
           result(fcntl(dir, F_SETLEASE, F_RDLCK)));
    close(dir);

    CHECK(fcntl(r, F_SETSIG, RT_SIG) == 0);
    CHECK(fcntl(r, F_SETLEASE, F_WRLCK) == 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        int fd = open("leased", O_RDONLY | O_NONBLOCK);
        _exit(fd < 0 && errno == EWOULDBLOCK ? 0 : 1);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("a non-blocking reader: EWOULDBLOCK %d\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0);
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    int breaks = collect(RT_SIG, &si);
    printf("holder signalled: %d, fd %d, code POLL_MSG %d\n", breaks,
           si.si_fd == r, si.si_code == POLL_MSG);
    printf("F_GETLEASE during the break: %s\n",
           lease_name(fcntl(r, F_GETLEASE)));

    /* A blocking writer waits until the holder gives the lease up. */
    c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        int fd = open("leased", O_WRONLY);
        if (fd < 0)
            _exit(2);
        CHECK(write(fd, "w", 1) == 1);
        _exit(0);
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, RT_SIG);
    struct timespec five = {5, 0};
    (void)sigtimedwait(&set, &si, &five); /* its break, or the earlier */
    usleep(20000);
    struct stat sb;
    CHECK(stat("leased", &sb) == 0);
    printf("the writer waits: size %lld\n", (long long)sb.st_size);
    printf("given up: %s\n", result(fcntl(r, F_SETLEASE, F_UNLCK)));
    CHECK(waitpid(c, &st, 0) == c);
    CHECK(stat("leased", &sb) == 0);
    printf("the writer went on: exit %d, size %lld\n",
           WIFEXITED(st) ? WEXITSTATUS(st) : -1, (long long)sb.st_size);
    collect(RT_SIG, NULL);
    close(r);

    /* Two read leases (two opens) and a writer: both holders told. */
    int r1 = open("leased", O_RDONLY), r2 = open("leased", O_RDONLY);
    CHECK(r1 >= 0 && r2 >= 0);
    CHECK(fcntl(r1, F_SETSIG, RT_SIG) == 0 && fcntl(r2, F_SETSIG, RT_SIG) == 0);
    printf("two read leases: %s %s\n", result(fcntl(r1, F_SETLEASE, F_RDLCK)),
           result(fcntl(r2, F_SETLEASE, F_RDLCK)));
    c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        int fd = open("leased", O_WRONLY | O_NONBLOCK);
        _exit(fd < 0 && errno == EWOULDBLOCK ? 0 : 1);
    }
    CHECK(waitpid(c, &st, 0) == c);
    printf("a non-blocking writer: EWOULDBLOCK %d\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("holders signalled: %d\n", collect(RT_SIG, NULL));
    printf("both breaking to: %s %s\n", lease_name(fcntl(r1, F_GETLEASE)),
           lease_name(fcntl(r2, F_GETLEASE)));
    CHECK(fcntl(r1, F_SETLEASE, F_UNLCK) == 0);
    CHECK(fcntl(r2, F_SETLEASE, F_UNLCK) == 0);
    int w = open("leased", O_WRONLY | O_NONBLOCK);
    printf("after both gave up: %s\n", w >= 0 ? "opened" : strerror(errno));
    close(w);
    close(r1);
    close(r2);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char dir[] = "/tmp/dnotify-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chdir(dir) == 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGIO);
    sigaddset(&set, RT_SIG);
    CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    dnotify_cases();
    lease_cases();
    /* Nothing left in the host's /tmp (a native run's is the host's). */
    DIR *in = opendir("d");
    for (struct dirent *e; in && (e = readdir(in)) != NULL;)
        (void)unlinkat(dirfd(in), e->d_name, 0);
    if (in)
        closedir(in);
    (void)unlink("leased");
    (void)unlink("plain");
    (void)rmdir("d");
    CHECK(chdir("/") == 0);
    (void)rmdir(dir);
    return 0;
}
