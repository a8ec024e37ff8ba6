/*
 * mount_api: the new mount API as a process without CAP_SYS_ADMIN sees it
 * (the test drops root first, so the native run is such a process too):
 * fsopen, fspick, fsmount, move_mount and a cloning open_tree are EPERM,
 * mount_setattr after its argument checks; fsconfig's argument checks;
 * open_tree without OPEN_TREE_CLONE is an O_PATH open.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_OPEN_TREE 428
#define NR_MOVE_MOUNT 429
#define NR_FSOPEN 430
#define NR_FSCONFIG 431
#define NR_FSMOUNT 432
#define NR_FSPICK 433
#define NR_MOUNT_SETATTR 442

static void show(const char *what, long r)
{
    if (r < 0)
        printf("%-44s -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%-44s ok\n", what);
}

static void open_tree_case(const char *what, int dfd, const char *path,
                           unsigned int flags)
{
    long fd = syscall(NR_OPEN_TREE, dfd, path, flags);
    show(what, fd);
    if (fd < 0)
        return;
    struct stat st;
    int fl = fcntl((int)fd, F_GETFL), fdfl = fcntl((int)fd, F_GETFD);
    if (fstat((int)fd, &st) == 0)
        printf("  %s, O_PATH %d, cloexec %d\n",
               S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file"
                                           : S_ISLNK(st.st_mode) ? "symlink"
                                                                 : "other",
               (fl & O_PATH) != 0, (fdfl & FD_CLOEXEC) != 0);
    close((int)fd);
}

int main(void)
{
    if (getuid() == 0 &&
        (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)) {
        perror("dropping root");
        return 1;
    }
    char attr[64] = {0};
    show("fsopen tmpfs", syscall(NR_FSOPEN, "tmpfs", 0));
    show("fsopen bad flags", syscall(NR_FSOPEN, "tmpfs", 0x40));
    show("fspick /", syscall(NR_FSPICK, AT_FDCWD, "/", 0));
    show("fsmount 0", syscall(NR_FSMOUNT, 0, 0, 0));
    show("move_mount", syscall(NR_MOVE_MOUNT, AT_FDCWD, "/tmp", AT_FDCWD,
                               "/mnt", 0));
    show("fsconfig fd -1", syscall(NR_FSCONFIG, -1, 6, NULL, NULL, 0));
    show("fsconfig stdin create", syscall(NR_FSCONFIG, 0, 6, NULL, NULL, 0));
    show("fsconfig closed fd create", syscall(NR_FSCONFIG, 999, 6, NULL, NULL, 0));
    show("fsconfig unknown command", syscall(NR_FSCONFIG, 0, 99, NULL, NULL, 0));
    show("fsconfig set flag without key", syscall(NR_FSCONFIG, 0, 0, NULL, NULL, 0));
    show("fsconfig set string", syscall(NR_FSCONFIG, 0, 1, "source", "x", 0));
    show("fsconfig set binary aux 0", syscall(NR_FSCONFIG, 0, 2, "k", "v", 0));
    show("mount_setattr bad flags", syscall(NR_MOUNT_SETATTR, AT_FDCWD, "/", 0x1, attr, 32));
    show("mount_setattr size 0", syscall(NR_MOUNT_SETATTR, AT_FDCWD, "/", 0, attr, 0));
    show("mount_setattr size 8192", syscall(NR_MOUNT_SETATTR, AT_FDCWD, "/", 0, attr, 8192));
    show("mount_setattr /", syscall(NR_MOUNT_SETATTR, AT_FDCWD, "/", 0, attr, 32));
    show("open_tree bad flags", syscall(NR_OPEN_TREE, AT_FDCWD, "/", 0x2));
    show("open_tree AT_RECURSIVE alone", syscall(NR_OPEN_TREE, AT_FDCWD, "/", 0x8000));
    show("open_tree clone", syscall(NR_OPEN_TREE, AT_FDCWD, "/", 1));
    open_tree_case("open_tree /", AT_FDCWD, "/", 0);
    open_tree_case("open_tree /etc/passwd cloexec", AT_FDCWD, "/etc/passwd",
                   O_CLOEXEC);
    open_tree_case("open_tree missing", AT_FDCWD, "/no/such/path", 0);
    open_tree_case("open_tree empty", AT_FDCWD, "", 0);
    int dir = open("/etc", O_RDONLY | O_DIRECTORY);
    open_tree_case("open_tree passwd under /etc fd", dir, "passwd", 0);
    open_tree_case("open_tree empty AT_EMPTY_PATH", dir, "", AT_EMPTY_PATH);
    close(dir);
    if (symlink("/etc/passwd", "mount_api.link") == 0) {
        open_tree_case("open_tree symlink nofollow", AT_FDCWD, "mount_api.link",
                       AT_SYMLINK_NOFOLLOW);
        open_tree_case("open_tree symlink followed", AT_FDCWD, "mount_api.link", 0);
        unlink("mount_api.link");
    }
    return 0;
}
