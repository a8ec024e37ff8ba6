/*
 * opath_symlink_fd.c - an O_PATH|O_NOFOLLOW descriptor of a symbolic link
 * (an ordinary one in a scratch directory, /proc/self/exe, and another
 * process's /proc/PID/exe) refers to the link itself: readlinkat(fd, "")
 * reads it (Linux 2.6.39; hvrun answered EBADF), fstatat(fd, "",
 * AT_EMPTY_PATH) and fstat describe the link, and as a directory or a
 * file it fails as Linux fails it (fchdir, openat: ENOTDIR; read: EBADF).
 * Prints no path: it compares what the descriptor reads with readlink.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void reopened(const char *label, int fd, const char *want);

/* Every call on an O_PATH descriptor of the link at PATH, printed under
 * LABEL: the text readlinkat reads must be readlink(PATH)'s. */
static void probe(const char *label, const char *path)
{
    char want[PATH_MAX], got[PATH_MAX];
    ssize_t wn = readlink(path, want, sizeof(want) - 1);
    CHECK(wn > 0);
    want[wn] = '\0';

    int fd = open(path, O_PATH | O_NOFOLLOW);
    CHECK(fd >= 0);
    errno = 0;
    ssize_t n = readlinkat(fd, "", got, sizeof(got) - 1);
    printf("%s: readlinkat(fd, \"\"): %s", label, result_text(n));
    if (n >= 0) {
        got[n] = '\0';
        printf(" %s", strcmp(got, want) == 0 ? "same as readlink" : "DIFFERENT");
    }
    printf("\n");
    /* A short buffer: the text truncated, no terminating NUL. */
    char two[2] = {'x', 'x'};
    n = readlinkat(fd, "", two, 1);
    printf("%s: readlinkat(fd, \"\", 1 byte): %s first %s\n", label,
           result_text(n), n == 1 && two[0] == want[0] && two[1] == 'x' ? "ok" : "-");

    struct stat st, lst;
    CHECK(lstat(path, &lst) == 0);
    int rc = fstatat(fd, "", &st, AT_EMPTY_PATH);
    printf("%s: fstatat(fd, \"\", AT_EMPTY_PATH): %s", label, result_text(rc));
    if (rc == 0)
        printf(" link %d mode %o same inode as lstat %d", S_ISLNK(st.st_mode),
               (unsigned)(st.st_mode & 07777),
               st.st_ino == lst.st_ino && st.st_dev == lst.st_dev);
    printf("\n");
    rc = fstat(fd, &st);
    printf("%s: fstat: %s", label, result_text(rc));
    if (rc == 0)
        printf(" link %d", S_ISLNK(st.st_mode));
    printf("\n");
    rc = fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    printf("%s: fstatat(fd, \"\", AT_EMPTY_PATH|AT_SYMLINK_NOFOLLOW): %s\n",
           label, result_text(rc));

    printf("%s: readlinkat(fd, \"x\"): %s\n", label,
           result_text(readlinkat(fd, "x", got, sizeof(got))));
    printf("%s: fchdir: %s\n", label, result_text(fchdir(fd)));
    printf("%s: openat(fd, \"x\"): %s\n", label,
           result_text(openat(fd, "x", O_RDONLY)));
    printf("%s: fstatat(fd, \"x\"): %s\n", label,
           result_text(fstatat(fd, "x", &st, 0)));
    printf("%s: read: %s\n", label, result_text(read(fd, got, 1)));
    printf("%s: fcntl(F_GETFL) O_PATH: %d\n", label,
           (fcntl(fd, F_GETFL) & O_PATH) != 0);
    reopened(label, fd, want);
    close(fd);
}

/* The fd's /proc/self/fd entry: a magic link to the link itself, which
 * an O_PATH open follows to the link again (any other open: ELOOP). */
static void reopened(const char *label, int fd, const char *want)
{
    char entry[64], got[PATH_MAX];
    snprintf(entry, sizeof(entry), "/proc/self/fd/%d", fd);
    struct stat st;
    int rc = stat(entry, &st);
    printf("%s: stat of its fd entry: %s link %d\n", label, result_text(rc),
           rc == 0 && S_ISLNK(st.st_mode));
    printf("%s: open of its fd entry: %s\n", label,
           result_text(open(entry, O_RDONLY)));
    int again = open(entry, O_PATH);
    printf("%s: O_PATH open of its fd entry: %s\n", label,
           result_text(again < 0 ? -1 : 0));
    if (again < 0)
        return;
    ssize_t n = readlinkat(again, "", got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    printf("%s: readlinkat(that fd, \"\"): %s\n", label,
           n > 0 && strcmp(got, want) == 0 ? "same as readlink" : result_text(n));
    close(again);
}

/* What /proc/self/fd/<fd> of an O_PATH fd of /proc/<pid>/exe reads: that
 * name, with the pid of the process whose link it is. */
static void names_exe_of(const char *label, int fd, pid_t pid)
{
    char entry[64], got[PATH_MAX], want[64];
    snprintf(entry, sizeof(entry), "/proc/self/fd/%d", fd);
    snprintf(want, sizeof(want), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(entry, got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    printf("%s: its fd entry reads /proc/PID/exe of that process: %s\n",
           label, n > 0 && strcmp(got, want) == 0 ? "yes" : got);
}

/* Names relative to a /proc/self directory fd (and cwd) are the caller's
 * own entries (hvrun read its own exe and fds so). */
static void relative_names(void)
{
    char want[PATH_MAX], got[PATH_MAX];
    ssize_t wn = readlink("/proc/self/exe", want, sizeof(want) - 1);
    CHECK(wn > 0);
    want[wn] = '\0';
    int dir = open("/proc/self", O_PATH | O_DIRECTORY);
    CHECK(dir >= 0);
    ssize_t n = readlinkat(dir, "exe", got, sizeof(got) - 1);
    printf("readlinkat(/proc/self fd, \"exe\"): %s\n",
           n == wn && memcmp(got, want, (size_t)n) == 0 ? "the program"
                                                        : result_text(n));
    int fd = open("/proc/self", O_PATH | O_DIRECTORY);
    char name[32], entry[64];
    snprintf(name, sizeof(name), "fd/%d", fd);
    n = readlinkat(dir, name, got, sizeof(got) - 1);
    snprintf(entry, sizeof(entry), "/proc/%d", (int)getpid());
    printf("readlinkat(/proc/self fd, \"fd/N\"): %s\n",
           n == (ssize_t)strlen(entry) && memcmp(got, entry, (size_t)n) == 0
               ? "its own fd N"
               : result_text(n));
    int link = openat(dir, "exe", O_PATH | O_NOFOLLOW);
    n = link < 0 ? -1 : readlinkat(link, "", got, sizeof(got) - 1);
    printf("openat(/proc/self fd, \"exe\", O_PATH|O_NOFOLLOW), read: %s\n",
           n == wn && memcmp(got, want, (size_t)n) == 0 ? "the program"
                                                        : result_text(n));
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK(fchdir(dir) == 0);
    n = readlink("exe", got, sizeof(got) - 1);
    printf("readlink(\"exe\") with cwd /proc/self: %s\n",
           n == wn && memcmp(got, want, (size_t)n) == 0 ? "the program"
                                                        : result_text(n));
    CHECK(chdir(cwd) == 0);
    close(link);
    close(fd);
    close(dir);
}

/* An O_PATH fd of a child's exe link, read while the child runs, once it
 * is a zombie, and after the reap. */
static void child_exits(void)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    char proc[64], got[PATH_MAX];
    snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)pid);
    int fd = open(proc, O_PATH | O_NOFOLLOW);
    CHECK(fd >= 0);
    names_exe_of("a child's exe", fd, pid);
    printf("a child's exe: readlinkat(fd, \"\") while it runs: %s\n",
           readlinkat(fd, "", got, sizeof(got)) > 0 ? "read" : "-");
    CHECK(kill(pid, SIGKILL) == 0);
    siginfo_t si;
    CHECK(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0);
    printf("a child's exe: readlinkat(fd, \"\") of the zombie: %s\n",
           result_text(readlinkat(fd, "", got, sizeof(got))));
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("a child's exe: readlinkat(fd, \"\") after the reap: %s\n",
           result_text(readlinkat(fd, "", got, sizeof(got))));
    close(fd);
}

int main(void)
{
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    char dir[PATH_MAX + 32], link[PATH_MAX + 64];
    snprintf(dir, sizeof(dir), "%s/opath_symlink_fd.d", cwd);
    mkdir(dir, 0755);
    snprintf(link, sizeof(link), "%s/link", dir);
    unlink(link);
    CHECK(symlink("target-of-the-link", link) == 0);
    probe("scratch link", link);
    unlink(link);
    rmdir(dir);

    probe("/proc/self/exe", "/proc/self/exe");
    int self_fd = open("/proc/self/exe", O_PATH | O_NOFOLLOW);
    CHECK(self_fd >= 0);
    names_exe_of("/proc/self/exe", self_fd, getpid());
    relative_names();
    child_exits();

    pid_t parent = getpid();
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)parent);
        probe("parent's /proc/PID/exe", proc);
        int fd = open(proc, O_PATH | O_NOFOLLOW);
        CHECK(fd >= 0);
        names_exe_of("parent's /proc/PID/exe", fd, parent);
        /* the parent's fd, inherited: still the parent's link */
        names_exe_of("inherited /proc/self/exe fd", self_fd, parent);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return 0;
}
