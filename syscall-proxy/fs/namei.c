/*
 * namei.c - the calls that work on names (Linux's fs/namei.c, readdir.c,
 * d_path): directories (mkdir, rmdir, chdir, fchdir, chroot, getcwd,
 * getdents with canonical order and metadata), mknod, access and
 * faccessat2 (with the real ids), links and symlinks, readlink (the
 * rewritten /proc links), rename and unlink (file handles: handle.c). Paths
 * are the guest's, mapped to host (dirfd, path) pairs by fs.c; --verify
 * keeps what each call changes (preserve.c), metadata notes go to
 * fsmeta.c.
 */
#include "proxy.h"
#include "config.h"
#include "kernel.h"
#include "fs.h"
#include "internal.h"
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- directories --------------------------------------------------------- */

/* A getdents call never asks the host for more than this; returning fewer
 * entries than fit is always allowed. */
#define DIRENT_BUF_MAX_BYTES (1U << 20)
/* Where d_name starts in struct linux_dirent64 and struct linux_dirent. */
#define DIRENT64_NAME_OFF 19
#define OLD_DIRENT_NAME_OFF 18
#define DIRENT_RECLEN_OFF 16
#define DIRENT64_TYPE_OFF 18

/* Host directory entries in host order (metadata not virtualised; else
 * proxy_meta_getdents serves them sorted, fsmeta.c). */
static long dirents64_read(struct proxy_process *p, int host_fd, void *buf,
                           size_t len)
{
    return proxy_host_result(syscall(SYS_getdents64, host_fd, buf, len));
}

/* How much of the guest buffer is writable from its start: entries are
 * read only into that much, so none is consumed and then lost to -EFAULT. */
static size_t writable_prefix(struct proxy_process *p, gva_t gva, size_t len)
{
    struct iovec iov[16];
    size_t covered;
    vmm_as_host_iov(p->as, gva, len, PROT_WRITE, iov, 16, &covered);
    return covered;
}

/*
 * Reads entries for a guest buffer of count bytes into a fresh host buffer
 * (*buf_out, freed by the caller). Returns the bytes read or -errno. When
 * the writable part is too small for the next entry the host says -EINVAL;
 * Linux would have faulted on the unwritable part, so that is -EFAULT.
 */
static long dirents_fill(struct proxy_process *p, uint64_t guest_fd, gva_t gva,
                         uint64_t count, char **buf_out)
{
    *buf_out = NULL;
    int host_fd = guest_host_fd(p, guest_fd);
    if (host_fd < 0)
        return host_fd;
    size_t want = (unsigned int)count;
    if (want > DIRENT_BUF_MAX_BYTES)
        want = DIRENT_BUF_MAX_BYTES;
    size_t room = writable_prefix(p, gva, want);
    if (want > 0 && room == 0)
        return -EFAULT;
    char *buf = malloc(room > 0 ? room : 1);
    if (!buf)
        return -ENOMEM;
    long n = dirents64_read(p, host_fd, buf, room);
    if (n == -EINVAL && room < want)
        n = -EFAULT;
    if (n < 0) {
        free(buf);
        return n;
    }
    *buf_out = buf;
    return n;
}

static long sys_getdents64(struct proxy_process *p, const uint64_t a[6])
{
    if (proxy_meta_dir_sorted(p, (int)a[0]))
        return proxy_meta_getdents(p, (int)a[0], a[1], a[2], false);
    char *buf;
    long n = dirents_fill(p, a[0], a[1], a[2], &buf);
    if (n > 0 && proxy_copy_out(p, a[1], buf, (size_t)n) < 0)
        n = -EFAULT;
    free(buf);
    return n;
}

/*
 * linux_dirent64 -> the old linux_dirent, in place. Both records have the
 * same length for the same name (ALIGN(20 + namelen, 8)), so the buffer
 * size and d_reclen carry over: the name moves down one byte over d_type,
 * and d_type goes to the record's last byte, where old getdents keeps it.
 */
static void dirents64_to_old(char *buf, size_t len)
{
    size_t off = 0;
    while (off + DIRENT64_NAME_OFF <= len) {
        char *rec = buf + off;
        unsigned short reclen;
        memcpy(&reclen, rec + DIRENT_RECLEN_OFF, sizeof(reclen));
        if (reclen == 0 || off + reclen > len)
            break;
        char type = rec[DIRENT64_TYPE_OFF];
        size_t name_bytes =
            strnlen(rec + DIRENT64_NAME_OFF, reclen - DIRENT64_NAME_OFF) + 1;
        memmove(rec + OLD_DIRENT_NAME_OFF, rec + DIRENT64_NAME_OFF, name_bytes);
        memset(rec + OLD_DIRENT_NAME_OFF + name_bytes, 0,
               reclen - OLD_DIRENT_NAME_OFF - name_bytes);
        rec[reclen - 1] = type;
        off += reclen;
    }
}

static long sys_getdents(struct proxy_process *p, const uint64_t a[6])
{
    if (proxy_meta_dir_sorted(p, (int)a[0]))
        return proxy_meta_getdents(p, (int)a[0], a[1], a[2], true);
    char *buf;
    long n = dirents_fill(p, a[0], a[1], a[2], &buf);
    if (n > 0) {
        dirents64_to_old(buf, (size_t)n);
        if (proxy_copy_out(p, a[1], buf, (size_t)n) < 0)
            n = -EFAULT;
    }
    free(buf);
    return n;
}

/* readlink of /proc/self/fd/<cwd_fd>: the guest cwd's host path. */
static long cwd_path(struct proxy_process *p, char *out, size_t outlen)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", p->fs.cwd_fd);
    ssize_t n = readlink(link, out, outlen);
    if (n < 0)
        return -errno;
    if ((size_t)n >= outlen)
        return -ENAMETOOLONG;
    out[n] = '\0';
    /* A removed cwd reads as "<path> (deleted)"; Linux getcwd says ENOENT. */
    static const char deleted[] = " (deleted)";
    size_t dlen = sizeof(deleted) - 1;
    struct stat st;
    if ((size_t)n > dlen && strcmp(out + n - dlen, deleted) == 0 &&
        fstat(p->fs.cwd_fd, &st) == 0 && st.st_nlink == 0)
        return -ENOENT;
    return n;
}

/* Linux getcwd returns the length including the NUL, -ERANGE if the buffer
 * cannot hold it. */
static long sys_getcwd(struct proxy_process *p, const uint64_t a[6])
{
    char path[PROXY_PATH_MAX];
    long n = cwd_path(p, path, sizeof(path));
    if (n < 0)
        return n;
    n = (long)proxy_tmp_unmap(p, path, (size_t)n, sizeof(path) - 1);
    path[n] = '\0'; /* the private /tmp reads as /tmp */
    size_t len = (size_t)n + 1;
    if (a[1] < len)
        return -ERANGE;
    if (proxy_copy_out(p, a[0], path, len) < 0)
        return -EFAULT;
    return (long)len;
}

/*
 * Replaces the guest cwd with the directory dirfd/path names. O_PATH does
 * not check search permission, which chdir requires, so it is checked on
 * the new fd (AT_EACCESS: with the effective ids, as chdir does).
 */
/* An O_PATH fd of the directory (dirfd, path) the caller may search
 * (chdir's and chroot's checks: ENOENT, ENOTDIR, EACCES), or -errno. */
static int searchable_dir(int dirfd, const char *path)
{
    int fd = openat(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (syscall(SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    return fd;
}

static long set_cwd(struct proxy_process *p, int dirfd, const char *path)
{
    int fd = searchable_dir(dirfd, path);
    if (fd < 0)
        return fd;
    close(p->fs.cwd_fd);
    p->fs.cwd_fd = fd;
    proxy_fs_share_sync(p); /* clone(CLONE_FS)'s sharers */
    return 0;
}

static long sys_chdir(struct proxy_process *p, const uint64_t a[6])
{
    struct host_path hp;
    long r = proxy_fs_host_path(p, a[0], true, &hp);
    return r < 0 ? r : set_cwd(p, hp.dirfd, hp.path);
}

static long sys_fchdir(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    return host_fd < 0 ? host_fd : set_cwd(p, host_fd, ".");
}

/* ksys_chroot's order: the path (ENOENT, ENOTDIR, ...), its search
 * permission (EACCES), then CAP_SYS_CHROOT: EPERM here for every guest,
 * as in a container without it: hvrun does not virtualise the root, and a
 * host chroot would move hvrun itself. */
static long sys_chroot(struct proxy_process *p, const uint64_t a[6])
{
    struct host_path hp;
    long r = proxy_fs_host_path(p, a[0], true, &hp);
    if (r < 0)
        return r;
    int fd = searchable_dir(hp.dirfd, hp.path);
    if (fd < 0)
        return fd;
    close(fd);
    return -EPERM;
}

static long do_mkdirat(struct proxy_process *p, uint64_t guest_dirfd,
                       gva_t path_gva, uint64_t mode)
{
    struct host_path hp;
    long r = proxy_fs_host_path_at(p, guest_dirfd, path_gva, false, &hp);
    if (r < 0)
        return r;
    if (proxy_meta_cache_write_blocked(p, hp.dirfd, hp.path, true))
        return -EACCES;
    r = proxy_host_result(mkdirat(hp.dirfd, hp.path, umasked(p, mode)));
    if (r == 0) {
        proxy_meta_note_created(p, hp.dirfd, hp.path);
        proxy_meta_note_mkdir(p, hp.dirfd, hp.path);
    }
    return r;
}

static long sys_mkdir(struct proxy_process *p, const uint64_t a[6])
{
    return do_mkdirat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1]);
}

static long sys_mkdirat(struct proxy_process *p, const uint64_t a[6])
{
    return do_mkdirat(p, a[0], a[1], a[2]);
}

/* unlinkat's flags are checked by the host (only AT_REMOVEDIR is valid). */
static long do_unlinkat(struct proxy_process *p, uint64_t guest_dirfd,
                        gva_t path_gva, int flags)
{
    struct host_path hp;
    long r = proxy_fs_host_path_at(p, guest_dirfd, path_gva, false, &hp);
    if (r < 0)
        return r;
    struct proxy_meta_name victim;
    proxy_meta_name_get(p, hp.dirfd, hp.path, &victim);
    proxy_preserve_name_gone(p, hp.dirfd, hp.path);
    r = proxy_host_result(unlinkat(hp.dirfd, hp.path, flags));
    if (r == 0)
        proxy_meta_note_unlink(p, &victim);
    return r;
}

static long sys_rmdir(struct proxy_process *p, const uint64_t a[6])
{
    return do_unlinkat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], AT_REMOVEDIR);
}

static long sys_unlink(struct proxy_process *p, const uint64_t a[6])
{
    return do_unlinkat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], 0);
}

static long sys_unlinkat(struct proxy_process *p, const uint64_t a[6])
{
    return do_unlinkat(p, a[0], a[1], (int)a[2]);
}

/* The device number is the kernel's 32-bit encoding, so the raw syscall is
 * used (glibc's mknodat takes a dev_t and re-encodes it). */
static long do_mknodat(struct proxy_process *p, uint64_t guest_dirfd,
                       gva_t path_gva, uint64_t mode, uint64_t dev)
{
    struct host_path hp;
    long r = proxy_fs_host_path_at(p, guest_dirfd, path_gva, false, &hp);
    if (r < 0)
        return r;
    mode_t host_mode = ((mode_t)mode & S_IFMT) | umasked(p, mode);
    r = proxy_host_result(
        syscall(SYS_mknodat, hp.dirfd, hp.path, host_mode, (unsigned int)dev));
    if (r == 0)
        proxy_meta_note_created(p, hp.dirfd, hp.path);
    return r;
}

static long sys_mknod(struct proxy_process *p, const uint64_t a[6])
{
    return do_mknodat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1], a[2]);
}

static long sys_mknodat(struct proxy_process *p, const uint64_t a[6])
{
    return do_mknodat(p, a[0], a[1], a[2], a[3]);
}

/* ---- names: access, links, rename ---------------------------------------- */

/* A question about a path the file tap records and replays: answered
 * from the recording (true, *result set, *len bytes in data), else false. */
static bool replayed_query(struct proxy_process *p, const struct host_path *hp,
                           int kind, int arg, long *result, void *data,
                           size_t cap, size_t *len)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    char key[PROXY_PATH_MAX];
    return t && t->recorded_query && hp->path[0] &&
           proxy_fs_file_tap_key(hp, key, sizeof(key)) &&
           t->recorded_query(t->ctx, key, kind, arg, result, data, cap, len);
}

static void record_query(struct proxy_process *p, const struct host_path *hp,
                         int kind, int arg, long result, const void *data,
                         size_t len)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    char key[PROXY_PATH_MAX];
    if (t && t->query_result && hp->path[0] &&
        proxy_fs_file_tap_key(hp, key, sizeof(key)))
        t->query_result(t->ctx, key, kind, arg, result, data, len);
}

static long do_faccessat(struct proxy_process *p, uint64_t guest_dirfd,
                         gva_t path_gva, int mode, int flags)
{
    /* do_faccessat checks the words before it looks the path up. */
    if (mode & ~S_IRWXO)
        return -EINVAL;
    if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    struct host_path hp;
    long r = proxy_fs_host_path_at_flags(p, guest_dirfd, path_gva, flags, false, &hp);
    if (r < 0)
        return r;
    if (!proxy_fs_other_proc_stand_in(p, &hp, flags & AT_SYMLINK_NOFOLLOW,
                                       &r) &&
        r < 0)
        return r;
    int arg = mode | (flags << 8); /* both small and non-negative now */
    size_t len;
    if (replayed_query(p, &hp, PROXY_QUERY_ACCESS, arg, &r, NULL, 0, &len))
        return r;
    /* The raw syscalls: glibc's faccessat emulates flags in user space.
     * Without AT_EACCESS the check is the real ids' (kernel/fscred.c). */
    bool real = !(flags & AT_EACCESS) && proxy_fscred_real_begin(p);
    int host_flags = real ? flags | AT_EACCESS : flags;
    if (host_flags == 0)
        r = proxy_host_result(syscall(SYS_faccessat, hp.dirfd, hp.path, mode));
    else
        r = proxy_host_result(
            syscall(SYS_faccessat2, hp.dirfd, hp.path, mode, host_flags));
    if (real)
        proxy_fscred_real_end();
    /* The run's /proc/sys is read-only, as a container's: no write opens
     * (procguard.c, vfs.c), and access says so, as on a read-only mount. */
    if (r == 0 && (mode & W_OK) && strncmp(hp.path, "/proc/sys/", 10) == 0)
        r = -EROFS;
    record_query(p, &hp, PROXY_QUERY_ACCESS, arg, r, NULL, 0);
    return r;
}

static long sys_access(struct proxy_process *p, const uint64_t a[6])
{
    return do_faccessat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], (int)a[1], 0);
}

/* faccessat(2) has no flags argument; only faccessat2 does. */
static long sys_faccessat(struct proxy_process *p, const uint64_t a[6])
{
    return do_faccessat(p, a[0], a[1], (int)a[2], 0);
}

static long sys_faccessat2(struct proxy_process *p, const uint64_t a[6])
{
    return do_faccessat(p, a[0], a[1], (int)a[2], (int)a[3]);
}

/*
 * The link itself is read (last component not followed). /proc/self/exe
 * answers with the guest program's path; /proc/self/fd/N reads the host
 * link of the host fd, which names the same file. Linux truncates to
 * bufsiz without a NUL.
 */
static long do_readlinkat(struct proxy_process *p, uint64_t guest_dirfd,
                          gva_t path_gva, gva_t buf_gva, int bufsiz)
{
    if (bufsiz <= 0)
        return -EINVAL;
    struct host_path hp;
    long r = proxy_fs_host_path_at(p, guest_dirfd, path_gva, false, &hp);
    if (r < 0)
        return r;
    /* (a zombie's links lead nowhere: ENOENT, as followed) */
    if (!proxy_fs_other_proc_stand_in(p, &hp, false, &r) && r < 0)
        return r;
    char target[PROXY_PATH_MAX];
    long n;
    const struct proxy_process *exe_of =
        hp.kind == PATH_SELF_EXE ? p
        : hp.kind == PATH_GUEST_EXE && p->world
            ? proxy_world_find(p->world, p->fs.exe_of_pid)
            : NULL;
    /* gone since the walk, or since an O_PATH fd of the link was opened:
     * a process that exited has no program (Linux: ENOENT) */
    if (hp.kind == PATH_GUEST_EXE && (!exe_of || exe_of->zombie))
        return -ENOENT;
    if (hp.kind == PATH_GUEST_EXE && !proxy_ptrace_may_access(p, exe_of))
        return -EACCES;
    if (hp.kind == PATH_EXE_LINK_FD) {
        n = snprintf(target, sizeof(target), "/proc/%d/exe", p->fs.exe_of_pid);
    } else if (hp.kind == PATH_MAP_FILE_LINK) {
        if ((n = proxy_fs_map_file_target(p, target, sizeof(target))) < 0)
            return n;
    } else if (hp.kind == PATH_SELF_LINK) {
        n = snprintf(target, sizeof(target), "%d", p->pid);
    } else if (hp.kind == PATH_THREAD_SELF_LINK) {
        n = snprintf(target, sizeof(target), "%d/task/%d", p->pid, p->tid);
    } else if (exe_of) {
        n = (long)strnlen(exe_of->exe_path, sizeof(exe_of->exe_path));
        memcpy(target, exe_of->exe_path, (size_t)n);
    } else if ((n = proxy_vfs_ns_link(p, hp.dirfd, hp.path, target,
                                      sizeof(target))) != 0) {
        if (n < 0) /* the guest's namespaces, not hvrun's */
            return n;
    } else if ((n = proxy_vfs_init_link(p, hp.dirfd, hp.path, target,
                                        sizeof(target))) != 0) {
        /* the virtual init's exe, cwd or root: not the host init's */
        if (n < 0)
            return n;
    } else {
        size_t got;
        if (replayed_query(p, &hp, PROXY_QUERY_READLINK, 0, &n, target,
                           sizeof(target), &got)) {
            n = n < 0 ? n : (long)got;
        } else {
            n = proxy_host_result(
                readlinkat(hp.dirfd, hp.path, target, sizeof(target)));
            record_query(p, &hp, PROXY_QUERY_READLINK, 0, n, target,
                         n > 0 ? (size_t)n : 0);
        }
        if (n < 0)
            return n;
        /* fd and cwd links in guest terms: /tmp, virtual files (vfs.c) */
        n = proxy_vfs_link_fixup(p, hp.path, target, n, sizeof(target));
    }
    if (n > bufsiz)
        n = bufsiz;
    return proxy_copy_out(p, buf_gva, target, (size_t)n) < 0 ? -EFAULT : n;
}

static long sys_readlink(struct proxy_process *p, const uint64_t a[6])
{
    return do_readlinkat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1], (int)a[2]);
}

static long sys_readlinkat(struct proxy_process *p, const uint64_t a[6])
{
    return do_readlinkat(p, a[0], a[1], a[2], (int)a[3]);
}

static long do_renameat2(struct proxy_process *p, uint64_t old_dirfd,
                         gva_t old_gva, uint64_t new_dirfd, gva_t new_gva,
                         unsigned int flags)
{
    struct host_path from, to;
    long r = proxy_fs_host_path_at(p, old_dirfd, old_gva, false, &from);
    if (r < 0)
        return r;
    r = proxy_fs_host_path_at(p, new_dirfd, new_gva, false, &to);
    if (r < 0)
        return r;
    struct proxy_meta_name src, victim;
    proxy_meta_name_get(p, from.dirfd, from.path, &src);
    proxy_meta_name_get(p, to.dirfd, to.path, &victim);
    struct proxy_preserve_rename journal;
    proxy_preserve_rename_before(p, from.dirfd, from.path, to.dirfd, to.path,
                                 flags, &journal);
    r = proxy_host_result(syscall(SYS_renameat2, from.dirfd, from.path,
                                  to.dirfd, to.path, flags));
    if (r == 0) {
        proxy_preserve_renamed(p, &journal);
        proxy_meta_note_rename(p, &src, &victim, flags);
    }
    return r;
}

static long sys_rename(struct proxy_process *p, const uint64_t a[6])
{
    return do_renameat2(p, (uint64_t)(int64_t)AT_FDCWD, a[0],
                        (uint64_t)(int64_t)AT_FDCWD, a[1], 0);
}

static long sys_renameat(struct proxy_process *p, const uint64_t a[6])
{
    return do_renameat2(p, a[0], a[1], a[2], a[3], 0);
}

static long sys_renameat2(struct proxy_process *p, const uint64_t a[6])
{
    return do_renameat2(p, a[0], a[1], a[2], a[3], (unsigned int)a[4]);
}

/* link(2) does not follow a symlink as oldpath; linkat follows only with
 * AT_SYMLINK_FOLLOW. "/proc/self/fd/N" + AT_SYMLINK_FOLLOW (naming an
 * O_TMPFILE file) works through the rewrite to the host fd. */
static long do_linkat(struct proxy_process *p, uint64_t old_dirfd,
                      gva_t old_gva, uint64_t new_dirfd, gva_t new_gva,
                      int flags)
{
    struct host_path from, to;
    long r = proxy_fs_host_path_at(p, old_dirfd, old_gva,
                          (flags & AT_SYMLINK_FOLLOW) != 0, &from);
    if (r < 0)
        return r;
    r = proxy_fs_host_path_at(p, new_dirfd, new_gva, false, &to);
    if (r < 0)
        return r;
    r = proxy_host_result(
        linkat(from.dirfd, from.path, to.dirfd, to.path, flags));
    if (r == 0) {
        proxy_meta_log_created(p, to.dirfd, to.path);
        proxy_meta_note_parent(p, to.dirfd, to.path);
        proxy_meta_note_at(p, to.dirfd, to.path, AT_SYMLINK_NOFOLLOW,
                           PROXY_META_ATTRS);
    }
    return r;
}

static long sys_link(struct proxy_process *p, const uint64_t a[6])
{
    return do_linkat(p, (uint64_t)(int64_t)AT_FDCWD, a[0],
                     (uint64_t)(int64_t)AT_FDCWD, a[1], 0);
}

static long sys_linkat(struct proxy_process *p, const uint64_t a[6])
{
    return do_linkat(p, a[0], a[1], a[2], a[3], (int)a[4]);
}

/* The target is stored verbatim, so it is copied but never rewritten: a
 * link to /proc/self/exe must mean the guest reading it later. */
static long do_symlinkat(struct proxy_process *p, gva_t target_gva,
                         uint64_t new_dirfd, gva_t new_gva)
{
    char target[PROXY_PATH_MAX];
    long r = proxy_path_in(p, target, target_gva);
    if (r < 0)
        return r;
    struct host_path hp;
    r = proxy_fs_host_path_at(p, new_dirfd, new_gva, false, &hp);
    if (r < 0)
        return r;
    r = proxy_host_result(symlinkat(target, hp.dirfd, hp.path));
    if (r == 0)
        proxy_meta_note_created(p, hp.dirfd, hp.path);
    return r;
}

static long sys_symlink(struct proxy_process *p, const uint64_t a[6])
{
    return do_symlinkat(p, a[0], (uint64_t)(int64_t)AT_FDCWD, a[1]);
}

static long sys_symlinkat(struct proxy_process *p, const uint64_t a[6])
{
    return do_symlinkat(p, a[0], a[1], a[2]);
}

const struct proxy_syscall proxy_namei_syscalls[] = {
    {SYS_getdents64, "getdents64", sys_getdents64},
    {SYS_getdents, "getdents", sys_getdents},
    {SYS_access, "access", sys_access},
    {SYS_faccessat, "faccessat", sys_faccessat},
    {SYS_faccessat2, "faccessat2", sys_faccessat2},
    {SYS_readlink, "readlink", sys_readlink},
    {SYS_readlinkat, "readlinkat", sys_readlinkat},
    {SYS_getcwd, "getcwd", sys_getcwd},
    {SYS_chdir, "chdir", sys_chdir},
    {SYS_fchdir, "fchdir", sys_fchdir},
    {SYS_mkdir, "mkdir", sys_mkdir},
    {SYS_mkdirat, "mkdirat", sys_mkdirat},
    {SYS_rmdir, "rmdir", sys_rmdir},
    {SYS_unlink, "unlink", sys_unlink},
    {SYS_unlinkat, "unlinkat", sys_unlinkat},
    {SYS_rename, "rename", sys_rename},
    {SYS_renameat, "renameat", sys_renameat},
    {SYS_renameat2, "renameat2", sys_renameat2},
    {SYS_link, "link", sys_link},
    {SYS_linkat, "linkat", sys_linkat},
    {SYS_symlink, "symlink", sys_symlink},
    {SYS_symlinkat, "symlinkat", sys_symlinkat},
    {SYS_mknod, "mknod", sys_mknod},
    {SYS_mknodat, "mknodat", sys_mknodat},
    {SYS_chroot, "chroot", sys_chroot},
    {-1, NULL, NULL},
};
