/*
 * exe_link_passed.c - an O_PATH|O_NOFOLLOW descriptor of /proc/PID/exe
 * is that process's link wherever the descriptor goes: passed over
 * SCM_RIGHTS to another process (a child forked before the open, so it
 * did not inherit it), readlinkat(fd, "") still reads the sender's
 * program, fstatat(fd, "", AT_EMPTY_PATH) describes a link, and the
 * receiver's /proc/self/fd entry names /proc/<sender>/exe, as Linux's
 * descriptor keeps its path. hvrun's descriptor of a guest's exe link is
 * its own exe link, which the receiver read as hvrun's program (a host
 * path) and named as hvrun's /proc entry. Prints no path: it compares.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_scm.h"

/* What the receiver sees of the passed descriptor of sender's link. */
static void receiver_checks(const char *who, int fd, pid_t sender)
{
    char want[PATH_MAX], got[PATH_MAX], proc[64], entry[64];
    snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)sender);
    ssize_t wn = readlink(proc, want, sizeof(want) - 1);
    CHECK(wn > 0);
    want[wn] = '\0';
    ssize_t n = readlinkat(fd, "", got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    printf("%s: readlinkat(fd, \"\"): %s\n", who,
           n > 0 && strcmp(got, want) == 0 ? "the sender's program"
                                           : result_text(n));
    struct stat st;
    int rc = fstatat(fd, "", &st, AT_EMPTY_PATH);
    printf("%s: fstatat(fd, \"\", AT_EMPTY_PATH): %s link %d\n", who,
           result_text(rc), rc == 0 && S_ISLNK(st.st_mode));
    snprintf(entry, sizeof(entry), "/proc/self/fd/%d", fd);
    n = readlink(entry, got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    printf("%s: its fd entry reads /proc/<sender>/exe: %s\n", who,
           n > 0 && strcmp(got, proc) == 0 ? "yes" : got);
    int again = open(entry, O_PATH);
    n = again < 0 ? -1 : readlinkat(again, "", got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    printf("%s: O_PATH open of its fd entry reads: %s\n", who,
           n > 0 && strcmp(got, want) == 0 ? "the sender's program"
                                           : result_text(n));
    if (again >= 0)
        close(again);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t parent = getpid();
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(sv[0]);
        int fd = recv_fd(sv[1]);
        receiver_checks("child, the parent's link", fd, parent);
        /* and back: the child's own link, to the parent */
        int own = open("/proc/self/exe", O_PATH | O_NOFOLLOW);
        CHECK(own >= 0);
        send_fd(sv[1], own);
        char byte;
        CHECK(read(sv[1], &byte, 1) == 1); /* the parent has read it */
        _exit(0);
    }
    close(sv[1]);
    int fd = open("/proc/self/exe", O_PATH | O_NOFOLLOW);
    CHECK(fd >= 0);
    send_fd(sv[0], fd);
    close(fd); /* the child's copy stays the parent's link */
    int back = recv_fd(sv[0]);
    receiver_checks("parent, the child's link", back, child);
    CHECK(write(sv[0], "k", 1) == 1);
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return 0;
}
