/*
 * chroot_order: chroot's checks in Linux's order for a process without
 * CAP_SYS_CHROOT (the test drops root first, so its native run is one):
 * the path (ENOENT, ENOTDIR, EFAULT), search permission (EACCES), then
 * the capability (EPERM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, int r)
{
    printf("%-32s %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

static int checks(void)
{
    if (getuid() == 0 &&
        (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)) {
        perror("dropping root");
        return 1;
    }
    show("/", chroot("/"));
    show("/no/such/dir", chroot("/no/such/dir"));
    show("/etc/passwd", chroot("/etc/passwd"));
    show("/etc/passwd/x", chroot("/etc/passwd/x"));
    show("a directory not searchable", chroot("chroot_order.dir"));
    show("a bad pointer", chroot((const char *)8));
    show("empty path", chroot(""));
    return 0;
}

/* The directory is made and removed by the caller, before and after the
 * checks (a child that dropped root could not remove it). */
int main(void)
{
    if (mkdir("chroot_order.dir", 0700) < 0 && errno != EEXIST)
        return 1;
    fflush(stdout);
    pid_t c = fork();
    if (c == 0)
        _exit(checks());
    int status = 1;
    waitpid(c, &status, 0);
    rmdir("chroot_order.dir");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
