/*
 * attr.c - a file's attributes and contents' size (Linux's fs/attr.c,
 * open.c's chmod/chown/truncate, utimes.c, sync.c, xattr.c): umask,
 * chmod, chown, utime and utimensat, truncate and fallocate (RLIMIT_FSIZE,
 * file mappings told), the sync calls, and the extended attribute calls.
 * Paths are the guest's, mapped to host (dirfd, path) pairs by fs.c;
 * --verify keeps what each call changes (preserve.c).
 */
#include "proxy.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

/* ---- ownership and modes ------------------------------------------------- */

/* fchmodat2 (Linux 6.6, x86-64's 452): fchmodat with flags. Older
 * headers lack SYS_fchmodat2, and the host call is not needed: it is done
 * with fchmodat on the file the guest's path names. */
#define SYS_FCHMODAT2 452
#define FCHMODAT2_FLAGS (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)

/* chmod of (dirfd, path) as fchmodat2 does it: AT_EMPTY_PATH's "" names
 * dirfd's own file (an O_PATH one too, so through /proc/self/fd), and a
 * symlink AT_SYMLINK_NOFOLLOW leaves as the last component has no mode to
 * change (notify_change: EOPNOTSUPP). */
static long host_chmod(const struct host_path *hp, mode_t mode, int flags)
{
    if (!hp->path[0] && (flags & AT_EMPTY_PATH) && hp->dirfd >= 0) {
        char self[64];
        snprintf(self, sizeof(self), "/proc/self/fd/%d", hp->dirfd);
        return proxy_host_result(syscall(SYS_fchmodat, AT_FDCWD, self, mode));
    }
    struct stat st;
    if ((flags & AT_SYMLINK_NOFOLLOW) &&
        fstatat(hp->dirfd, hp->path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
        return -EOPNOTSUPP;
    /* fchmodat(2) takes no flags (glibc's wrapper emulates some): raw. */
    return proxy_host_result(syscall(SYS_fchmodat, hp->dirfd, hp->path, mode));
}

static long do_fchmodat(struct proxy_process *p, uint64_t guest_dirfd,
                        gva_t path_gva, uint64_t mode, int flags)
{
    if (flags & ~FCHMODAT2_FLAGS)
        return -EINVAL;
    struct host_path hp;
    long r = proxy_fs_host_path_at_flags(p, guest_dirfd, path_gva, flags,
                                         false, &hp);
    if (r < 0)
        return r;
    if (!hp.path[0] && (flags & AT_EMPTY_PATH))
        proxy_preserve_fd(p, hp.dirfd);
    else
        proxy_preserve_before(p, hp.dirfd, hp.path, true);
    r = host_chmod(&hp, (mode_t)mode, flags);
    if (r == 0)
        proxy_meta_note_at(p, hp.dirfd, hp.path, flags & AT_EMPTY_PATH,
                           PROXY_META_ATTRS);
    return r;
}

static long sys_chmod(struct proxy_process *p, const uint64_t a[6])
{
    return do_fchmodat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1], 0);
}

static long sys_fchmodat(struct proxy_process *p, const uint64_t a[6])
{
    return do_fchmodat(p, a[0], a[1], a[2], 0);
}

static long sys_fchmodat2(struct proxy_process *p, const uint64_t a[6])
{
    return do_fchmodat(p, a[0], a[1], a[2], (int)a[3]);
}

static long sys_fchmod(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    proxy_preserve_fd(p, host_fd);
    long r = proxy_host_result(fchmod(host_fd, (mode_t)a[1]));
    if (r == 0)
        proxy_meta_note_fd(p, (int)a[0], PROXY_META_ATTRS);
    return r;
}

/* uid/gid (uid_t)-1 mean "leave unchanged", which passes through as is. */
static long do_fchownat(struct proxy_process *p, uint64_t guest_dirfd,
                        gva_t path_gva, uint64_t uid, uint64_t gid, int flags)
{
    struct host_path hp;
    long r = proxy_fs_host_path_at_flags(p, guest_dirfd, path_gva, flags, false, &hp);
    if (r < 0)
        return r;
    r = proxy_host_result(
        fchownat(hp.dirfd, hp.path, (uid_t)uid, (gid_t)gid, flags));
    if (r == 0)
        proxy_meta_note_at(p, hp.dirfd, hp.path, flags, PROXY_META_ATTRS);
    return r;
}

static long sys_chown(struct proxy_process *p, const uint64_t a[6])
{
    return do_fchownat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1], a[2], 0);
}

static long sys_lchown(struct proxy_process *p, const uint64_t a[6])
{
    return do_fchownat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1], a[2],
                       AT_SYMLINK_NOFOLLOW);
}

static long sys_fchownat(struct proxy_process *p, const uint64_t a[6])
{
    return do_fchownat(p, a[0], a[1], a[2], a[3], (int)a[4]);
}

static long sys_fchown(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    long r = proxy_host_result(fchown(host_fd, (uid_t)a[1], (gid_t)a[2]));
    if (r == 0)
        proxy_meta_note_fd(p, (int)a[0], PROXY_META_ATTRS);
    return r;
}

/* ---- timestamps ---------------------------------------------------------- */

/*
 * The utime family. A NULL times pointer means "now" (host time on the
 * host file; the guest sees the logical time detcore notes, through
 * note_ts, the same pair as timespecs). A NULL path with a real dirfd acts
 * on that fd (Linux's futimens); with AT_FDCWD the host gets AT_FDCWD and
 * NULL too, so it answers as Linux does (-EFAULT).
 */
static long set_times_at(struct proxy_process *p, long nr, uint64_t guest_dirfd,
                         gva_t path_gva, const void *times, int flags,
                         const struct timespec *note_ts)
{
    long r;
    if (path_gva == 0) {
        int host_fd = AT_FDCWD;
        if ((int)guest_dirfd != AT_FDCWD) {
            host_fd = guest_host_fd(p, guest_dirfd);
            if (host_fd < 0)
                return host_fd;
        }
        r = proxy_host_result(syscall(nr, host_fd, NULL, times, flags));
        if (r == 0)
            proxy_meta_note_times(p, host_fd, NULL, flags, note_ts);
        return r;
    }
    struct host_path hp;
    r = proxy_fs_host_path_at(p, guest_dirfd, path_gva, !(flags & AT_SYMLINK_NOFOLLOW),
                     &hp);
    if (r < 0)
        return r;
    r = proxy_host_result(syscall(nr, hp.dirfd, hp.path, times, flags));
    if (r == 0)
        proxy_meta_note_times(p, hp.dirfd, hp.path, flags, note_ts);
    return r;
}

static long sys_utimensat(struct proxy_process *p, const uint64_t a[6])
{
    struct timespec ts[2];
    if (a[2] != 0 && proxy_copy_in(p, ts, a[2], sizeof(ts)) < 0)
        return -EFAULT;
    return set_times_at(p, SYS_utimensat, a[0], a[1], a[2] ? ts : NULL,
                        (int)a[3], a[2] ? ts : NULL);
}

/* futimesat/utimes take struct timeval[2]; microseconds outside
 * [0, 1000000) are -EINVAL before the path is looked at, as in Linux's
 * do_futimesat (the host would say so too, but only after the conversion
 * here would have overflowed). */
static long do_futimesat(struct proxy_process *p, uint64_t guest_dirfd,
                         gva_t path_gva, gva_t times_gva)
{
    struct timeval tv[2];
    struct timespec ts[2];
    if (times_gva != 0 && proxy_copy_in(p, tv, times_gva, sizeof(tv)) < 0)
        return -EFAULT;
    for (int i = 0; times_gva != 0 && i < 2; i++) {
        if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
            return -EINVAL;
        ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
    }
    return set_times_at(p, SYS_futimesat, guest_dirfd, path_gva,
                        times_gva ? tv : NULL, 0, times_gva ? ts : NULL);
}

static long sys_futimesat(struct proxy_process *p, const uint64_t a[6])
{
    return do_futimesat(p, a[0], a[1], a[2]);
}

/* utimes(NULL path) is -EFAULT on Linux; only futimesat takes a NULL path. */
static long sys_utimes(struct proxy_process *p, const uint64_t a[6])
{
    if (a[0] == 0)
        return -EFAULT;
    return do_futimesat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1]);
}

/* utime takes struct utimbuf (whole seconds), made a timespec pair. */
static long sys_utime(struct proxy_process *p, const uint64_t a[6])
{
    if (a[0] == 0)
        return -EFAULT;
    struct utimbuf ub;
    struct timespec ts[2];
    if (a[1] != 0) {
        if (proxy_copy_in(p, &ub, a[1], sizeof(ub)) < 0)
            return -EFAULT;
        ts[0] = (struct timespec){.tv_sec = ub.actime};
        ts[1] = (struct timespec){.tv_sec = ub.modtime};
    }
    return set_times_at(p, SYS_utimensat, (uint64_t)(int64_t)AT_FDCWD, a[0],
                        a[1] ? ts : NULL, 0, a[1] ? ts : NULL);
}

/* ---- sizes and syncing --------------------------------------------------- */

/* No truncateat on the host: truncate the O_PATH fd's magic link, which
 * follows to the same inode with the same permission checks. */
static long sys_truncate(struct proxy_process *p, const uint64_t a[6])
{
    struct host_path hp;
    long r = proxy_fs_host_path(p, a[0], true, &hp);
    if (r < 0)
        return r;
    int fd = open_o_path(&hp);
    if (fd < 0)
        return fd;
    proxy_preserve_fd(p, fd);
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    r = (int64_t)a[1] < 0 ? -EINVAL : proxy_fs_exe_busy(p, fd, "", AT_EMPTY_PATH);
    if (r == 0)
        r = proxy_fsize_check_size(p, fd, a[1]);
    if (r == 0)
        r = proxy_host_result(truncate(link, (off_t)a[1]));
    if (r == 0) {
        proxy_meta_note_at(p, fd, "", AT_EMPTY_PATH, PROXY_META_CONTENT);
        proxy_mm_file_resized(p, fd);
    }
    close(fd);
    return r;
}

/* The fd was opened for writing (else truncation and fallocate fail on
 * the host, before Linux looks at RLIMIT_FSIZE). */
static bool fd_writable(int host_fd)
{
    int fl = fcntl(host_fd, F_GETFL);
    return fl >= 0 && (fl & O_ACCMODE) != O_RDONLY;
}

static long sys_ftruncate(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    /* a read-only fd is the host's EINVAL before any size check */
    long r = (int64_t)a[1] < 0   ? -EINVAL
             : fd_writable(host_fd) ? proxy_fsize_check_size(p, host_fd, a[1])
                                    : 0;
    if (r == 0)
        r = proxy_secretmem_truncate(p, (int)a[0], host_fd);
    if (r == 0)
        r = proxy_host_result(ftruncate(host_fd, (off_t)a[1]));
    if (r == 0) {
        proxy_meta_note_fd(p, (int)a[0], PROXY_META_CONTENT);
        proxy_mm_file_resized(p, host_fd);
    }
    return r;
}

static long sys_fallocate(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    int64_t off = (int64_t)a[2], len = (int64_t)a[3];
    if (proxy_secretmem_is(p, (int)a[0]))
        return -EOPNOTSUPP; /* no fallocate file operation */
    long r = 0;
    /* a valid growing call meets RLIMIT_FSIZE; the host judges the rest */
    if (off >= 0 && len > 0 && off <= INT64_MAX - len &&
        !((int)a[1] & FALLOC_FL_KEEP_SIZE) && fd_writable(host_fd))
        r = proxy_fsize_check_size(p, host_fd, (uint64_t)(off + len));
    if (r == 0)
        r = proxy_host_result(fallocate(host_fd, (int)a[1], off, len));
    if (r == 0)
        proxy_meta_note_fd(p, (int)a[0], PROXY_META_CONTENT);
    /* COLLAPSE_RANGE shrinks the file: mappings past its new end are
     * SIGBUS now, as after a truncate (growth is found at the fault). */
    if (r == 0 && ((int)a[1] & FALLOC_FL_COLLAPSE_RANGE))
        proxy_mm_file_resized(p, host_fd);
    return r;
}

static long sys_fsync(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    return host_fd < 0 ? host_fd : proxy_host_result(fsync(host_fd));
}

static long sys_fdatasync(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    return host_fd < 0 ? host_fd : proxy_host_result(fdatasync(host_fd));
}

static long sys_syncfs(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    return host_fd < 0 ? host_fd : proxy_host_result(syncfs(host_fd));
}

/* sync(2) cannot fail. */
static long sys_sync(struct proxy_process *p, const uint64_t a[6])
{
    sync();
    return 0;
}

/* Only the permission bits count, as in Linux (mask & S_IRWXUGO). */
static long sys_umask(struct proxy_process *p, const uint64_t a[6])
{
    mode_t old = p->fs.umask;
    p->fs.umask = (mode_t)a[0] & 0777;
    proxy_fs_share_sync(p); /* clone(CLONE_FS)'s sharers */
    return old;
}

/* ---- extended attributes ------------------------------------------------- */

/* Linux's XATTR_NAME_MAX + 1 and XATTR_SIZE_MAX (= XATTR_LIST_MAX). */
#define XATTR_NAME_BYTES 256
#define XATTR_VALUE_MAX_BYTES 65536

/*
 * What an xattr call acts on. The host has no *at() xattr calls in glibc,
 * so a path is opened O_PATH (O_NOFOLLOW for the l* calls) and the host's
 * path-based call is given /proc/self/fd/<fd>: following that magic link
 * lands on exactly the opened inode, the symlink itself for the l* calls,
 * and is not followed further.
 */
struct xattr_target {
    int host_fd;
    bool owned;         /* an O_PATH fd of ours, closed after the call */
    char proc_path[64]; /* empty: use the f*xattr calls on host_fd */
};

static long xattr_target_path(struct proxy_process *p, gva_t path_gva,
                              bool follow_last, struct xattr_target *t)
{
    struct host_path hp;
    long r = proxy_fs_host_path(p, path_gva, follow_last, &hp);
    if (r < 0)
        return r;
    int flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW);
    t->host_fd = openat(hp.dirfd, hp.path, flags);
    if (t->host_fd < 0) {
        /* A replay's recorded file, gone from the host: its copy (with no
         * attributes, as a recorded file had none that mattered). */
        int err = errno;
        if (err != ENOENT || (t->host_fd = proxy_fs_replayed_file(p, &hp, 0)) < 0)
            return -err;
    }
    t->owned = true;
    snprintf(t->proc_path, sizeof(t->proc_path), "/proc/self/fd/%d",
             t->host_fd);
    return 0;
}

static long xattr_target_fd(struct proxy_process *p, uint64_t guest_fd,
                            struct xattr_target *t)
{
    t->host_fd = guest_host_fd(p, guest_fd);
    t->owned = false;
    t->proc_path[0] = '\0';
    return t->host_fd < 0 ? t->host_fd : 0;
}

static void xattr_target_done(struct xattr_target *t)
{
    if (t->owned)
        close(t->host_fd);
}

/* A name of 1..255 bytes; empty or longer is -ERANGE, as in Linux. */
static long xattr_name_in(struct proxy_process *p, gva_t gva,
                          char name[PROXY_PATH_MAX])
{
    long n = proxy_path_in(p, name, gva);
    if (n == -ENAMETOOLONG || n == 0 || n >= XATTR_NAME_BYTES)
        return -ERANGE;
    return n < 0 ? n : 0;
}

/* get and list: size 0 asks for the size; larger than the maximum is
 * clamped to it, as Linux does. The host fills a bounce buffer. */
static long xattr_read(struct proxy_process *p, const struct xattr_target *t,
                       const char *name, gva_t value_gva, uint64_t size)
{
    size_t len = size > XATTR_VALUE_MAX_BYTES ? XATTR_VALUE_MAX_BYTES : size;
    void *buf = len ? malloc(len) : NULL;
    if (len && !buf)
        return -ENOMEM;
    ssize_t n;
    if (name)
        n = t->proc_path[0] ? getxattr(t->proc_path, name, buf, len)
                            : fgetxattr(t->host_fd, name, buf, len);
    else
        n = t->proc_path[0] ? listxattr(t->proc_path, buf, len)
                            : flistxattr(t->host_fd, buf, len);
    long r = proxy_host_result(n);
    if (r > 0 && len > 0 && proxy_copy_out(p, value_gva, buf, (size_t)r) < 0)
        r = -EFAULT;
    free(buf);
    return r;
}

static long do_getxattr(struct proxy_process *p, struct xattr_target *t,
                        const uint64_t a[6])
{
    char name[PROXY_PATH_MAX];
    long r = xattr_name_in(p, a[1], name);
    if (r == 0)
        r = xattr_read(p, t, name, a[2], a[3]);
    xattr_target_done(t);
    return r;
}

static long do_listxattr(struct proxy_process *p, struct xattr_target *t,
                         const uint64_t a[6])
{
    long r = xattr_read(p, t, NULL, a[1], a[2]);
    xattr_target_done(t);
    return r;
}

/* setxattr(target, name, value, size, flags): flags are checked first,
 * a value over XATTR_SIZE_MAX is -E2BIG. */
static long do_setxattr(struct proxy_process *p, struct xattr_target *t,
                        const uint64_t a[6])
{
    char name[PROXY_PATH_MAX];
    int flags = (int)a[4];
    size_t size = (size_t)a[3];
    void *value = NULL;
    long r = 0;
    if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
        r = -EINVAL;
    if (r == 0)
        r = xattr_name_in(p, a[1], name);
    if (r == 0 && size > XATTR_VALUE_MAX_BYTES)
        r = -E2BIG;
    if (r == 0 && size > 0 && !(value = malloc(size)))
        r = -ENOMEM;
    if (r == 0 && size > 0 && proxy_copy_in(p, value, a[2], size) < 0)
        r = -EFAULT;
    if (r == 0)
        r = proxy_host_result(
            t->proc_path[0] ? setxattr(t->proc_path, name, value, size, flags)
                            : fsetxattr(t->host_fd, name, value, size, flags));
    free(value);
    xattr_target_done(t);
    return r;
}

static long do_removexattr(struct proxy_process *p, struct xattr_target *t,
                           const uint64_t a[6])
{
    char name[PROXY_PATH_MAX];
    long r = xattr_name_in(p, a[1], name);
    if (r == 0)
        r = proxy_host_result(t->proc_path[0] ? removexattr(t->proc_path, name)
                                              : fremovexattr(t->host_fd, name));
    xattr_target_done(t);
    return r;
}

/* How an xattr call names its target: a path, a path whose last symlink
 * is not followed (the l* calls), or an fd (the f* calls). */
enum xattr_via { XATTR_VIA_PATH, XATTR_VIA_LINK, XATTR_VIA_FD };

typedef long (*xattr_op_fn)(struct proxy_process *p, struct xattr_target *t,
                            const uint64_t a[6]);

/* Resolves the target from a[0], then runs op (which releases it). */
static long xattr_call(struct proxy_process *p, const uint64_t a[6],
                       enum xattr_via via, xattr_op_fn op)
{
    struct xattr_target t;
    long r = via == XATTR_VIA_FD
                 ? xattr_target_fd(p, a[0], &t)
                 : xattr_target_path(p, a[0], via == XATTR_VIA_PATH, &t);
    return r < 0 ? r : op(p, &t, a);
}

static long sys_getxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_PATH, do_getxattr);
}

static long sys_lgetxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_LINK, do_getxattr);
}

static long sys_fgetxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_FD, do_getxattr);
}

static long sys_listxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_PATH, do_listxattr);
}

static long sys_llistxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_LINK, do_listxattr);
}

static long sys_flistxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_FD, do_listxattr);
}

static long sys_setxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_PATH, do_setxattr);
}

static long sys_lsetxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_LINK, do_setxattr);
}

static long sys_fsetxattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_FD, do_setxattr);
}

static long sys_removexattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_PATH, do_removexattr);
}

static long sys_lremovexattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_LINK, do_removexattr);
}

static long sys_fremovexattr(struct proxy_process *p, const uint64_t a[6])
{
    return xattr_call(p, a, XATTR_VIA_FD, do_removexattr);
}

const struct proxy_syscall proxy_attr_syscalls[] = {
    {SYS_chmod, "chmod", sys_chmod},
    {SYS_fchmod, "fchmod", sys_fchmod},
    {SYS_fchmodat, "fchmodat", sys_fchmodat},
    {SYS_FCHMODAT2, "fchmodat2", sys_fchmodat2},
    {SYS_chown, "chown", sys_chown},
    {SYS_fchown, "fchown", sys_fchown},
    {SYS_lchown, "lchown", sys_lchown},
    {SYS_fchownat, "fchownat", sys_fchownat},
    {SYS_utimensat, "utimensat", sys_utimensat},
    {SYS_utimes, "utimes", sys_utimes},
    {SYS_utime, "utime", sys_utime},
    {SYS_futimesat, "futimesat", sys_futimesat},
    {SYS_truncate, "truncate", sys_truncate},
    {SYS_ftruncate, "ftruncate", sys_ftruncate},
    {SYS_fallocate, "fallocate", sys_fallocate},
    {SYS_fsync, "fsync", sys_fsync},
    {SYS_fdatasync, "fdatasync", sys_fdatasync},
    {SYS_sync, "sync", sys_sync},
    {SYS_syncfs, "syncfs", sys_syncfs},
    {SYS_umask, "umask", sys_umask},
    {SYS_getxattr, "getxattr", sys_getxattr},
    {SYS_lgetxattr, "lgetxattr", sys_lgetxattr},
    {SYS_fgetxattr, "fgetxattr", sys_fgetxattr},
    {SYS_listxattr, "listxattr", sys_listxattr},
    {SYS_llistxattr, "llistxattr", sys_llistxattr},
    {SYS_flistxattr, "flistxattr", sys_flistxattr},
    {SYS_setxattr, "setxattr", sys_setxattr},
    {SYS_lsetxattr, "lsetxattr", sys_lsetxattr},
    {SYS_fsetxattr, "fsetxattr", sys_fsetxattr},
    {SYS_removexattr, "removexattr", sys_removexattr},
    {SYS_lremovexattr, "lremovexattr", sys_lremovexattr},
    {SYS_fremovexattr, "fremovexattr", sys_fremovexattr},
    {-1, NULL, NULL},
};
