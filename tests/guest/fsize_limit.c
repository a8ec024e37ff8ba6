/*
 * fsize_limit.c - RLIMIT_FSIZE as Linux applies it (stress-ng's fsize
 * stressor): a write that crosses the limit is cut there; one at the limit
 * is EFBIG with SIGXFSZ; pwrite and writev likewise; ftruncate and
 * fallocate growing past it are EFBIG with SIGXFSZ, within it or shrinking
 * succeed, FALLOC_FL_KEEP_SIZE past it succeeds; a read-only fd's
 * ftruncate is EINVAL; a pipe is not limited; with SIGXFSZ at its default
 * a child dies of it.
 * Prints one line per check; run natively and under hvrun, the output
 * must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define LIMIT 4096

static volatile sig_atomic_t xfsz;

static void on_xfsz(int sig)
{
    (void)sig;
    xfsz++;
}

static void show(const char *what, long rc)
{
    const char *e = rc < 0 ? strerrorname_np(errno) : "";
    printf("%s: %ld %s SIGXFSZ %d\n", what, rc, e, (int)xfsz);
    xfsz = 0;
}

static void write_checks(int fd, char *buf)
{
    show("write within", write(fd, buf, 1000));
    CHECK(lseek(fd, LIMIT - 100, SEEK_SET) == LIMIT - 100);
    show("write across", write(fd, buf, 1000));
    show("write at limit", write(fd, buf, 10));
    show("write of 0 at limit", write(fd, buf, 0));
    show("pwrite across", pwrite(fd, buf, 500, LIMIT - 50));
    show("pwrite past", pwrite(fd, buf, 5, LIMIT + 100));
    struct iovec iov[3] = {{buf, 30}, {buf, 30}, {buf, 30}};
    CHECK(lseek(fd, LIMIT - 40, SEEK_SET) == LIMIT - 40);
    show("writev across", writev(fd, iov, 3));
    show("size", lseek(fd, 0, SEEK_END));
}

static void size_checks(int fd)
{
    show("ftruncate past", ftruncate(fd, LIMIT + 1));
    show("ftruncate to limit", ftruncate(fd, LIMIT));
    show("ftruncate shrink", ftruncate(fd, 100));
    show("fallocate past", fallocate(fd, 0, 0, LIMIT + 1));
    show("fallocate within", fallocate(fd, 0, 0, LIMIT));
    show("fallocate keep size past", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 2 * LIMIT));
    show("fallocate bad length", fallocate(fd, 0, 0, 0));
}

int main(void)
{
    char path[] = "/tmp/fsizeXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    int ro = open(path, O_RDONLY);
    unlink(path);
    signal(SIGXFSZ, on_xfsz);
    struct rlimit lim = {LIMIT, RLIM_INFINITY};
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    static char buf[2000];
    memset(buf, 'x', sizeof(buf));
    write_checks(fd, buf);
    size_checks(fd);
    show("read-only ftruncate past", ftruncate(ro, LIMIT * 2));
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    show("pipe write", write(pfd[1], buf, 2000));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        (void)!pwrite(fd, buf, 1, LIMIT);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("child: signaled %d sig %d\n", WIFSIGNALED(st),
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
}
