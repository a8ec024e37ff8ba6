/*
 * mount_api.c - the new mount API (fsopen, fsconfig, fsmount, fspick,
 * move_mount, open_tree, mount_setattr) as in a container without
 * CAP_SYS_ADMIN over its mount namespace, the model mount(2) follows
 * (kernel/namespace.c: there is no mount table of the guest's). Each call
 * refuses where Linux's may_mount() refuses (EPERM), after the checks Linux
 * makes before it, so a caller sees what it sees in such a container, not
 * a kernel without the calls (ENOSYS). What needs no privilege works:
 * open_tree without OPEN_TREE_CLONE is an O_PATH open of the path, and
 * fsconfig's argument checks come before its fd is looked at (no guest fd
 * is an fs_context: EINVAL, or EBADF for none).
 */
#include "proxy.h"
#include "fdtable.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

#define NR_OPEN_TREE 428
#define NR_MOVE_MOUNT 429
#define NR_FSOPEN 430
#define NR_FSCONFIG 431
#define NR_FSMOUNT 432
#define NR_FSPICK 433
#define NR_MOUNT_SETATTR 442

#define K_OPEN_TREE_CLONE 1
#define K_AT_RECURSIVE 0x8000
#define K_AT_NO_AUTOMOUNT 0x800
#define K_MOUNT_ATTR_SIZE_VER0 32

/* fsconfig's commands (include/uapi/linux/mount.h, Linux 6.1) */
enum {
    K_FSCONFIG_SET_FLAG,
    K_FSCONFIG_SET_STRING,
    K_FSCONFIG_SET_BINARY,
    K_FSCONFIG_SET_PATH,
    K_FSCONFIG_SET_PATH_EMPTY,
    K_FSCONFIG_SET_FD,
    K_FSCONFIG_CMD_CREATE,
    K_FSCONFIG_CMD_RECONFIGURE,
};

/* fsopen, fspick, fsmount and move_mount check may_mount() first. */
static long sys_refused(struct proxy_process *p, const uint64_t a[6])
{
    (void)p;
    (void)a;
    return -EPERM;
}

/* fsconfig's argument checks, in its order, then its fd's. */
static long sys_fsconfig(struct proxy_process *p, const uint64_t a[6])
{
    int fd = (int)a[0], aux = (int)a[4];
    bool key = a[2] != 0, value = a[3] != 0;
    if (fd < 0)
        return -EINVAL;
    bool bad;
    switch ((unsigned int)a[1]) {
    case K_FSCONFIG_SET_FLAG:
        bad = !key || value || aux;
        break;
    case K_FSCONFIG_SET_STRING:
        bad = !key || !value || aux;
        break;
    case K_FSCONFIG_SET_BINARY:
        bad = !key || !value || aux <= 0 || aux > 1024 * 1024;
        break;
    case K_FSCONFIG_SET_PATH:
    case K_FSCONFIG_SET_PATH_EMPTY:
        bad = !key || !value || (aux != AT_FDCWD && aux < 0);
        break;
    case K_FSCONFIG_SET_FD:
        bad = !key || value || aux < 0;
        break;
    case K_FSCONFIG_CMD_CREATE:
    case K_FSCONFIG_CMD_RECONFIGURE:
        bad = key || value || aux;
        break;
    default:
        return -EOPNOTSUPP;
    }
    if (bad)
        return -EINVAL;
    return guest_host_fd(p, (uint64_t)fd) < 0 ? -EBADF : -EINVAL;
}

/* An O_PATH host fd of what hp names: the directory fd itself for an
 * empty path (AT_EMPTY_PATH). */
static int open_path_fd(const struct host_path *hp, bool follow_last)
{
    if (!hp->path[0]) {
        char self[64];
        snprintf(self, sizeof(self), "/proc/self/fd/%d", hp->dirfd);
        return open(self, O_PATH | O_CLOEXEC);
    }
    return openat(hp->dirfd, hp->path,
                  O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW));
}

static long sys_open_tree(struct proxy_process *p, const uint64_t a[6])
{
    unsigned int flags = (unsigned int)a[2];
    unsigned int valid = AT_EMPTY_PATH | K_AT_NO_AUTOMOUNT | K_AT_RECURSIVE |
                         AT_SYMLINK_NOFOLLOW | K_OPEN_TREE_CLONE | O_CLOEXEC;
    if (flags & ~valid)
        return -EINVAL;
    if ((flags & (K_AT_RECURSIVE | K_OPEN_TREE_CLONE)) == K_AT_RECURSIVE)
        return -EINVAL;
    if (flags & K_OPEN_TREE_CLONE) /* a detached copy of a mount tree */
        return -EPERM;
    struct host_path hp;
    int at_flags = (int)(flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
    long r = proxy_fs_host_path_at_flags(p, a[0], a[1], at_flags, false, &hp);
    if (r < 0)
        return r;
    if (!hp.path[0] && !(flags & AT_EMPTY_PATH))
        return -ENOENT;
    int host_fd = open_path_fd(&hp, !(flags & AT_SYMLINK_NOFOLLOW));
    if (host_fd < 0)
        return -errno;
    return proxy_fd_install(&p->fds, host_fd, (flags & O_CLOEXEC) != 0, 0);
}

static long sys_mount_setattr(struct proxy_process *p, const uint64_t a[6])
{
    (void)p;
    unsigned int valid = AT_EMPTY_PATH | K_AT_RECURSIVE | AT_SYMLINK_NOFOLLOW |
                         K_AT_NO_AUTOMOUNT;
    if ((unsigned int)a[2] & ~valid)
        return -EINVAL;
    if (a[4] > VMM_PAGE_SIZE)
        return -E2BIG;
    if (a[4] < K_MOUNT_ATTR_SIZE_VER0)
        return -EINVAL;
    return -EPERM;
}

const struct proxy_syscall proxy_mount_api_syscalls[] = {
    {NR_OPEN_TREE, "open_tree", sys_open_tree},
    {NR_MOVE_MOUNT, "move_mount", sys_refused},
    {NR_FSOPEN, "fsopen", sys_refused},
    {NR_FSCONFIG, "fsconfig", sys_fsconfig},
    {NR_FSMOUNT, "fsmount", sys_refused},
    {NR_FSPICK, "fspick", sys_refused},
    {NR_MOUNT_SETATTR, "mount_setattr", sys_mount_setattr},
    {-1, NULL, NULL},
};
