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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

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

    pid_t parent = getpid();
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)parent);
        probe("parent's /proc/PID/exe", proc);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return 0;
}
