/*
 * file_attr.c - file_getattr and file_setattr (Linux 6.17): a file's
 * extended attributes flags (FS_IOC_FSGETXATTR's struct fsxattr), by path.
 * The arguments are checked in Linux's order, the guest's path resolved
 * as for any *at call (so a dirfd that is no directory is ENOTDIR), and
 * the host's own calls read or set the attributes: they exist from Linux
 * 6.17, so on an older host these calls are ENOSYS, as that kernel gives.
 */
#include "proxy.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NR_FILE_GETATTR 468 /* x86-64; older headers lack them */
#define NR_FILE_SETATTR 469
#define FILE_ATTR_SIZE_VER0 24
#define FILE_ATTR_USIZE_MAX 4096 /* PAGE_SIZE */

/* struct file_attr, as of Linux 6.17 (FILE_ATTR_SIZE_LATEST). */
struct file_attr_v0 {
    uint64_t fa_xflags;
    uint32_t fa_extsize;
    uint32_t fa_nextents;
    uint32_t fa_projid;
    uint32_t fa_cowextsize;
};
_Static_assert(sizeof(struct file_attr_v0) == FILE_ATTR_SIZE_VER0,
               "struct file_attr is not Linux 6.17's");

/* The checks both calls make before anything else. */
static long attr_args(uint64_t at_flags, uint64_t usize)
{
    if (at_flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    if (usize > FILE_ATTR_USIZE_MAX)
        return -E2BIG;
    if (usize < FILE_ATTR_SIZE_VER0)
        return -EINVAL;
    return 0;
}

static long sys_file_getattr(struct proxy_process *p, const uint64_t a[6])
{
    long r = attr_args(a[4], a[3]);
    if (r < 0)
        return r;
    struct host_path hp;
    r = proxy_fs_host_path_at_flags(p, a[0], a[1], (int)a[4], true, &hp);
    if (r < 0)
        return r;
    struct file_attr_v0 fa;
    if (syscall(NR_FILE_GETATTR, hp.dirfd, hp.path, &fa, sizeof(fa),
                (unsigned)a[4]) < 0)
        return -errno;
    /* copy_struct_to_user: a larger buffer's tail is zeroed. */
    static const char zeros[FILE_ATTR_USIZE_MAX];
    r = proxy_copy_out(p, a[2], &fa, sizeof(fa));
    if (r == 0 && a[3] > sizeof(fa))
        r = proxy_copy_out(p, a[2] + sizeof(fa), zeros, a[3] - sizeof(fa));
    return r;
}

static long sys_file_setattr(struct proxy_process *p, const uint64_t a[6])
{
    long r = attr_args(a[4], a[3]);
    if (r < 0)
        return r;
    /* copy_struct_from_user: what a larger buffer holds past the struct
     * must be zero. */
    char buf[FILE_ATTR_USIZE_MAX];
    if (proxy_copy_in(p, buf, a[2], a[3]) < 0)
        return -EFAULT;
    for (uint64_t i = sizeof(struct file_attr_v0); i < a[3]; i++)
        if (buf[i])
            return -E2BIG;
    struct file_attr_v0 fa;
    memcpy(&fa, buf, sizeof(fa));
    struct host_path hp;
    r = proxy_fs_host_path_at_flags(p, a[0], a[1], (int)a[4], true, &hp);
    if (r < 0)
        return r;
    if (syscall(NR_FILE_SETATTR, hp.dirfd, hp.path, &fa, sizeof(fa),
                (unsigned)a[4]) < 0)
        return -errno;
    proxy_meta_note_at(p, hp.dirfd, hp.path, (int)a[4], PROXY_META_ATTRS);
    return 0;
}

const struct proxy_syscall proxy_file_attr_syscalls[] = {
    {NR_FILE_GETATTR, "file_getattr", sys_file_getattr},
    {NR_FILE_SETATTR, "file_setattr", sys_file_setattr},
    {-1, NULL, NULL},
};
