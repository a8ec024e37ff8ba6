/*
 * exec_denied: the refusals of execve and execveat that come from the
 * flags and from the file's state rather than from its contents
 * (fs/exec.c do_open_execat, Linux 6.1), compared with a native run:
 *
 *   flags:   execveat with a flag other than AT_SYMLINK_NOFOLLOW and
 *            AT_EMPTY_PATH is EINVAL; AT_SYMLINK_NOFOLLOW on
 *            a trailing symlink is ELOOP whether the link dangles or not,
 *            on a plain file it runs it, and AT_EMPTY_PATH with "" runs
 *            the fd's file (a fexecve)
 *   writers: a file open for writing (by the caller itself, or by its
 *            child) is ETXTBSY (deny_write_access), and runs once the
 *            writer has closed it; open read-only, or O_PATH, it runs
 *
 * Each case runs in a child and prints how it ended: an errno name, or
 * the exit status of the program it ran (hello_static beside this
 * program, copied into the working directory).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PROG "exec_denied.prog"
#define LINK "exec_denied.link"
#define DANGLING "exec_denied.dangling"

static char *const prog_argv[] = {"hello_static", NULL};
static char *const no_env[] = {NULL};

static long execveat_raw(int dirfd, const char *path, char *const *argv,
                         int flags)
{
    return syscall(SYS_execveat, dirfd, path, argv, no_env, flags);
}

/* Runs call in a child and prints "NAME: ERRNO" or "NAME: exit N". */
static void report(const char *name, int dirfd, const char *path,
                   char *const *argv, int flags)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        long rc = execveat_raw(dirfd, path, argv, flags);
        printf("%s: %s\n", name, result_text(rc));
        fflush(stdout);
        _exit(99);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 99)
        printf("%s: exit %d\n", name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void copy_program(const char *dir)
{
    char src[4200];
    snprintf(src, sizeof(src), "%s/hello_static", dir);
    int in = open(src, O_RDONLY);
    CHECK(in >= 0);
    int out = open(PROG, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(out >= 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0)
        CHECK(write(out, buf, (size_t)n) == n);
    CHECK(n == 0);
    close(in);
    close(out);
}

static void flag_cases(void)
{
    report("flags-invalid", AT_FDCWD, PROG, prog_argv, 0x8000);
    report("flags-minus-one", AT_FDCWD, PROG, prog_argv, -1);
    report("nofollow-link", AT_FDCWD, LINK, prog_argv, AT_SYMLINK_NOFOLLOW);
    report("nofollow-dangling", AT_FDCWD, DANGLING, prog_argv,
           AT_SYMLINK_NOFOLLOW);
    report("follow-dangling", AT_FDCWD, DANGLING, prog_argv, 0);
    report("nofollow-plain", AT_FDCWD, PROG, prog_argv, AT_SYMLINK_NOFOLLOW);
    report("follow-link", AT_FDCWD, LINK, prog_argv, 0);
    int fd = open(PROG, O_PATH);
    CHECK(fd >= 0);
    report("empty-path-fd", fd, "", prog_argv, AT_EMPTY_PATH);
    report("empty-path-nofollow", fd, "", prog_argv,
           AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    close(fd);
}

static void writer_cases(void)
{
    int w = open(PROG, O_WRONLY);
    CHECK(w >= 0);
    report("own-writer", AT_FDCWD, PROG, prog_argv, 0);
    report("own-writer-via-link", AT_FDCWD, LINK, prog_argv, 0);
    close(w);
    report("writer-closed", AT_FDCWD, PROG, prog_argv, 0);

    int rw = open(PROG, O_RDWR);
    CHECK(rw >= 0);
    report("own-rdwr", AT_FDCWD, PROG, prog_argv, 0);
    close(rw);

    int ro = open(PROG, O_RDONLY);
    CHECK(ro >= 0);
    report("own-reader", AT_FDCWD, PROG, prog_argv, 0);
    close(ro);

    /* A child holds it open for writing while the parent execs it. */
    int ready[2], done[2];
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    pid_t holder = fork();
    CHECK(holder >= 0);
    if (holder == 0) {
        int fd = open(PROG, O_WRONLY);
        char c = fd >= 0 ? 'y' : 'n';
        CHECK(write(ready[1], &c, 1) == 1);
        CHECK(read(done[0], &c, 1) == 1);
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1 && c == 'y');
    report("child-writer", AT_FDCWD, PROG, prog_argv, 0);
    CHECK(write(done[1], "x", 1) == 1);
    int st;
    CHECK(waitpid(holder, &st, 0) == holder);
    report("child-writer-gone", AT_FDCWD, PROG, prog_argv, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    char *copy = strdup(argv[0]);
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", dirname(copy));
    free(copy);
    unlink(PROG);
    unlink(LINK);
    unlink(DANGLING);
    copy_program(dir);
    CHECK(symlink(PROG, LINK) == 0);
    CHECK(symlink("exec_denied.none", DANGLING) == 0);
    flag_cases();
    writer_cases();
    unlink(PROG);
    unlink(LINK);
    unlink(DANGLING);
    return 0;
}
