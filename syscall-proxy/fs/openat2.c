/*
 * openat2.c - openat2(2): struct open_how read as Linux's openat2 reads it
 * (copy_struct_from_user), its flags, mode and resolve checked as
 * build_open_flags checks them, then the open is openat's (fs.c,
 * proxy_fs_openat), whose host walk is the host's openat2 with the
 * guest's resolve flags: RESOLVE_NO_XDEV, NO_MAGICLINKS, NO_SYMLINKS
 * (ELOOP), BENEATH and IN_ROOT (EXDEV for an escape; IN_ROOT's dirfd is
 * the root) are applied by the host kernel to the path the guest names.
 *
 * RESOLVE_CACHED is answered by a full lookup: whether the host's dentry
 * cache holds a path is host state, and Linux allows a cached lookup to
 * succeed whenever the walk needs nothing from disk. Only its static
 * refusal (O_CREAT, O_TRUNC, O_TMPFILE: EAGAIN) stays.
 */
#include "proxy.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* The kernel's octal values: glibc's O_LARGEFILE is 0 on x86-64, its
 * O_TMPFILE carries O_DIRECTORY. */
#define K_O_LARGEFILE 0100000ULL
#define K_O_TMPFILE 020000000ULL /* __O_TMPFILE */
#define K_O_SYNC 04000000ULL     /* __O_SYNC */
#define VALID_OPEN_FLAGS                                                    \
    ((uint64_t)(O_RDONLY | O_WRONLY | O_RDWR | O_CREAT | O_EXCL | O_NOCTTY | \
                O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC | O_ASYNC |        \
                O_DIRECT | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |            \
                O_CLOEXEC | O_PATH) |                                        \
     K_O_SYNC | K_O_LARGEFILE | K_O_TMPFILE)
#define O_PATH_FLAGS ((uint64_t)(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC))
#define VALID_RESOLVE_FLAGS                                                 \
    (RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |         \
     RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED)
#define OPEN_HOW_VER0 24 /* OPEN_HOW_SIZE_VER0 */
#define S_IALLUGO 07777ULL

/* copy_struct_from_user: a shorter struct is zero-extended; a longer one
 * must be zero past ours (E2BIG). */
static long open_how_in(struct proxy_process *p, gva_t how_gva, uint64_t size,
                        struct open_how *how)
{
    if (size < OPEN_HOW_VER0)
        return -EINVAL;
    if (size > VMM_PAGE_SIZE)
        return -E2BIG;
    memset(how, 0, sizeof(*how));
    int rc = proxy_copy_in_tail_zero(p, how_gva, sizeof(*how), (size_t)size);
    if (rc < 0)
        return rc;
    size_t n = size < sizeof(*how) ? (size_t)size : sizeof(*how);
    return proxy_copy_in(p, how, how_gva, n) < 0 ? -EFAULT : 0;
}

/* build_open_flags's refusals of the mode for the flags. */
static long check_mode(uint64_t flags, uint64_t mode)
{
    bool will_create = flags & (O_CREAT | K_O_TMPFILE);
    if (will_create ? (mode & ~S_IALLUGO) != 0 : mode != 0)
        return -EINVAL;
    return 0;
}

/* build_open_flags's checks, in its order. */
static long check_open_how(const struct open_how *how)
{
    uint64_t flags = how->flags & ~(uint64_t)O_CLOEXEC;
    if ((flags & ~VALID_OPEN_FLAGS) || (how->resolve & ~VALID_RESOLVE_FLAGS))
        return -EINVAL;
    if ((how->resolve & RESOLVE_BENEATH) && (how->resolve & RESOLVE_IN_ROOT))
        return -EINVAL; /* the scoping flags exclude each other */
    if (check_mode(flags, how->mode) < 0)
        return -EINVAL;
    if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT))
        return -EINVAL;
    /* O_TMPFILE: with O_DIRECTORY (old kernels' guard) and for writing */
    if ((flags & K_O_TMPFILE) &&
        (!(flags & O_DIRECTORY) || (flags & O_ACCMODE) == O_RDONLY))
        return -EINVAL;
    if ((flags & O_PATH) && (flags & ~O_PATH_FLAGS))
        return -EINVAL;
    if ((how->resolve & RESOLVE_CACHED) &&
        (flags & (O_TRUNC | O_CREAT | K_O_TMPFILE)))
        return -EAGAIN;
    return 0;
}

static long sys_openat2(struct proxy_process *p, const uint64_t a[6])
{
    struct open_how how;
    long r = open_how_in(p, a[2], a[3], &how);
    if (r == 0)
        r = check_open_how(&how);
    if (r < 0)
        return r;
    uint64_t resolve = how.resolve & ~(uint64_t)RESOLVE_CACHED;
    return proxy_fs_openat(p, a[0], a[1], (int)how.flags, how.mode, resolve);
}

const struct proxy_syscall proxy_openat2_syscalls[] = {
    {SYS_openat2, "openat2", sys_openat2},
    {-1, NULL, NULL},
};
