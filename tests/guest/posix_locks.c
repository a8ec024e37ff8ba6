/*
 * posix_locks: classic fcntl record locks between processes. A lock the
 * parent holds conflicts in a forked child (which does not inherit it),
 * F_GETLK names the parent, the owner's own locks merge and convert without
 * conflict, F_SETLKW waits until the parent releases by closing another fd
 * of the same file, OFD locks and POSIX locks conflict, and the errnos of
 * bad requests. Prints one line per step; exits 1 at the first failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static int lock(int fd, int cmd, short type, off_t start, off_t len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET,
                       .l_start = start, .l_len = len};
    return fcntl(fd, cmd, &fl);
}

/* F_GETLK for a write lock on [start, start+len): the conflicting lock. */
static struct flock probe(int fd, off_t start, off_t len)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                       .l_start = start, .l_len = len};
    CHECK(fcntl(fd, F_GETLK, &fl) == 0);
    return fl;
}

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void child(const char *path, pid_t parent, int ready_fd)
{
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    errno = 0;
    CHECK(lock(fd, F_SETLK, F_WRLCK, 0, 10) == -1);
    CHECK(errno == EAGAIN || errno == EACCES);
    printf("child: [0,10) is held\n");
    struct flock fl = probe(fd, 5, 1);
    CHECK(fl.l_type == F_WRLCK && fl.l_start == 0 && fl.l_len == 10);
    printf("child: F_GETLK names the parent: %s\n",
           fl.l_pid == parent ? "yes" : "no");
    fl = probe(fd, 100, 0);
    CHECK(fl.l_type == F_RDLCK && fl.l_start == 100 && fl.l_len == 0);
    printf("child: read lock [100,EOF) seen\n");
    CHECK(lock(fd, F_SETLK, F_RDLCK, 200, 5) == 0);
    printf("child: shares the read lock\n");
    CHECK(lock(fd, F_SETLK, F_WRLCK, 10, 10) == 0);
    printf("child: [10,20) is free\n");
    /* An OFD lock conflicts with the parent's POSIX lock as well. */
    int ofd = open(path, O_RDWR);
    CHECK(ofd >= 0);
    errno = 0;
    CHECK(lock(ofd, F_OFD_SETLK, F_WRLCK, 0, 1) == -1 && errno == EAGAIN);
    printf("child: OFD lock conflicts\n");
    close(ofd); /* closes a fd of the file: drops the child's locks too */
    fl = probe(open(path, O_RDONLY), 10, 10);
    printf("child: own locks dropped by close: %s\n",
           fl.l_type == F_UNLCK ? "yes" : "no");
    CHECK(write(ready_fd, "r", 1) == 1);
    CHECK(lock(fd, F_SETLKW, F_WRLCK, 5, 1) == 0);
    printf("child: F_SETLKW got [5,6) after the release\n");
    _exit(0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char path[64];
    snprintf(path, sizeof(path), "posix_locks.%d.tmp", (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, "0123456789abcdefghij", 20) == 20);

    /* The owner's own locks never conflict: they merge and convert. */
    CHECK(lock(fd, F_SETLK, F_WRLCK, 0, 10) == 0);
    CHECK(lock(fd, F_SETLK, F_RDLCK, 5, 3) == 0);
    CHECK(lock(fd, F_SETLK, F_WRLCK, 0, 10) == 0);
    CHECK(lock(fd, F_SETLK, F_RDLCK, 100, 0) == 0);
    CHECK(probe(fd, 0, 0).l_type == F_UNLCK);
    printf("parent: own locks never conflict\n");

    errno = 0;
    int ro = open(path, O_RDONLY);
    CHECK(ro >= 0);
    CHECK(lock(ro, F_SETLK, F_WRLCK, 50, 1) == -1 && errno == EBADF);
    errno = 0;
    CHECK(lock(fd, F_SETLK, 42, 0, 1) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(lock(fd, F_GETLK, F_UNLCK, 0, 1) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(lock(fd, F_SETLK, F_WRLCK, -5, 1) == -1 && errno == EINVAL);
    printf("parent: EBADF and EINVAL as Linux\n");

    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t me = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        child(path, me, ready[1]);
    }
    close(ready[1]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    nap_ms(30);
    printf("parent: releasing by closing another fd of the file\n");
    close(ro);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The parent's locks went with the close, the child's with its exit. */
    CHECK(probe(open(path, O_RDONLY), 0, 0).l_type == F_UNLCK);
    printf("parent: nothing held after the child's exit\n");
    unlink(path);
    return 0;
}
