/*
 * no_host_block.c - calls that wait for another guest must wait in the
 * scheduler, never in the host (which would stop that other guest and
 * freeze the run): recv(MSG_WAITALL) whose data a sleeping child sends in
 * two parts, a 0-byte read of an inotify fd (Linux waits for an event,
 * then says EINVAL) whose event a child makes later, and an execve of a
 * FIFO (EACCES at once: not a regular file; the open must not wait for a
 * writer). Compared with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void reap(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
}

static void waitall(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        usleep(20000);
        CHECK(write(sv[1], "abcd", 4) == 4);
        usleep(20000);
        CHECK(write(sv[1], "efgh", 4) == 4);
        _exit(0);
    }
    char buf[9] = {0};
    CHECK(recv(sv[0], buf, 8, MSG_WAITALL) == 8);
    printf("MSG_WAITALL: %s\n", buf);
    reap(pid);
    close(sv[0]);
    close(sv[1]);
}

static void inotify_zero_read(const char *dir)
{
    int fd = inotify_init1(IN_CLOEXEC);
    CHECK(fd >= 0 && inotify_add_watch(fd, dir, IN_CREATE) >= 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char f[64];
        usleep(20000);
        snprintf(f, sizeof(f), "%s/new", dir);
        CHECK(close(open(f, O_CREAT | O_WRONLY, 0600)) == 0);
        _exit(0);
    }
    char buf[1];
    long n = read(fd, buf, 0);
    printf("inotify read of 0 bytes: %ld %s\n", n, n < 0 ? strerror(errno) : "");
    reap(pid);
    close(fd);
}

static void exec_fifo(const char *dir)
{
    char f[64];
    snprintf(f, sizeof(f), "%s/fifo", dir);
    CHECK(mkfifo(f, 0700) == 0);
    char *argv[] = {f, NULL};
    CHECK(execve(f, argv, NULL) == -1);
    printf("execve of a FIFO: %s\n", strerror(errno));
    CHECK(unlink(f) == 0);
}

int main(void)
{
    char dir[] = "no_host_block.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    waitall();
    inotify_zero_read(dir);
    exec_fifo(dir);
    char f[64];
    snprintf(f, sizeof(f), "%s/new", dir);
    unlink(f);
    CHECK(rmdir(dir) == 0);
    return 0;
}
