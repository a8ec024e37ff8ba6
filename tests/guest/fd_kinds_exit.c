/*
 * fd_kinds_exit.c - one descriptor of every kind hvrun keeps state for,
 * left open when processes exit and when the run ends: signalfd, timerfd
 * (armed), eventfd, epoll watching them, inotify, a pipe with O_ASYNC and
 * an owner, a directory with F_NOTIFY, a write lease, a locked file, a
 * directory being listed, a socketpair, a memfd; a fork child inherits
 * them all, opens the parent's /proc/PID/status and exits holding them; a
 * second child execs with them (the close-on-exec ones go); a zombie is
 * left at the end. Each kind's teardown at exit, close and exec must not
 * touch what the run's end freed. Run natively and under hvrun, the
 * output must match.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

static int nr_fds;
static int fds[32];

static void keep(const char *what, int fd)
{
    printf("%s: %s\n", what, fd >= 0 ? "ok" : strerror(errno));
    if (fd >= 0)
        fds[nr_fds++] = fd;
}

static void open_every_kind(char *dir)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    keep("signalfd", signalfd(-1, &set, SFD_CLOEXEC));
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {.it_value = {100, 0}};
    timerfd_settime(tfd, 0, &its, NULL);
    keep("timerfd", tfd);
    int efd = eventfd(0, 0);
    keep("eventfd", efd);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
    keep("epoll", ep);
    int in = inotify_init1(IN_CLOEXEC);
    inotify_add_watch(in, dir, IN_CREATE);
    keep("inotify", in >= 0 ? in : 0); /* the same shared limit */
    int p[2];
    if (pipe(p) == 0) {
        fcntl(p[0], F_SETOWN, getpid());
        fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK);
        signal(SIGIO, SIG_IGN);
        keep("pipe async", p[0]);
        keep("pipe write", p[1]);
    }
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    signal(SIGRTMIN, SIG_IGN);
    fcntl(d, F_SETSIG, SIGRTMIN);
    /* Not printed: it needs a host inotify instance, a limit the machine
     * shares (the teardown is what is tested). */
    (void)fcntl(d, F_NOTIFY, DN_CREATE | DN_MULTISHOT);
    keep("dnotify dir", d);
    char path[256];
    snprintf(path, sizeof(path), "%s/file", dir);
    int f = open(path, O_CREAT | O_RDWR, 0600);
    printf("lease: %d\n", fcntl(f, F_SETLEASE, F_WRLCK));
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
    printf("lock: %d\n", fcntl(f, F_SETLK, &fl));
    keep("file", f);
    int ls = open(dir, O_RDONLY | O_DIRECTORY);
    DIR *dp = fdopendir(ls);
    printf("listing: %s\n", dp && readdir(dp) ? "ok" : "none");
    keep("listed dir", ls);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
        keep("socket", sv[0]);
        keep("socket peer", sv[1]);
    }
    keep("memfd", memfd_create("kinds", MFD_CLOEXEC));
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "exec")) {
        printf("exec'd image ran\n");
        return 0;
    }
    char dir[] = "/tmp/hvrun-fdkinds-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    open_every_kind(dir);
    pid_t z = fork();
    if (z == 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/status", (int)getppid());
        keep("proc file", open(path, O_RDONLY));
        fflush(stdout);
        _exit(0); /* everything inherited stays open */
    }
    siginfo_t si;
    printf("child exited: %d\n", waitid(P_PID, (id_t)z, &si, WEXITED));
    /* A zombie at the run's end (exited, not reaped). */
    pid_t zz = fork();
    if (zz == 0)
        _exit(0);
    printf("zombie: %d\n", waitid(P_PID, (id_t)zz, &si, WEXITED | WNOWAIT));
    fflush(stdout);
    pid_t e = fork();
    if (e == 0) {
        execl("/proc/self/exe", "fd_kinds_exit", "exec", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(e, &st, 0);
    printf("exec child status %d\n", WEXITSTATUS(st));
    char file[300];
    snprintf(file, sizeof(file), "%s/file", dir);
    unlink(file);
    rmdir(dir);
    printf("exiting with %d descriptors open\n", nr_fds);
    return 0;
}
