/*
 * handle.c - name_to_handle_at and open_by_handle_at (Linux's
 * fs/fhandle.c) with file handles hvrun mints itself.
 *
 * A host handle would hand the guest the host's inode numbers and
 * generations (different on every host and every copy of a tree), and
 * opening one needs open_by_handle_at on the host, which hvrun's seccomp
 * filter does not allow. So a handle is 12 bytes of what the guest
 * already sees: the file's inode number as stat shows it (detcore's
 * canonical one) and a generation, the serial of the run's handle table
 * entry for that file (1, 2, ... in the order the run first asked for a
 * handle of each file), type FILEID_INO64_GEN. The entry keeps an O_PATH
 * host fd of the file, so its host inode cannot be reused while the run
 * lasts, and open_by_handle_at reopens that fd:
 *
 * - only handles the run minted resolve (both fields must match an entry:
 *   a forged handle is ESTALE), so a guest opens by handle only files some
 *   guest process of the run named by path, and the open itself checks
 *   the file's permissions with the caller's ids as an open by path does;
 * - a file whose last link is gone is ESTALE, as on Linux once its inode
 *   is evicted, and its entry is dropped;
 * - the mount fd must be on the file's file system (Linux decodes the
 *   handle on the mount fd's super block: ESTALE elsewhere);
 * - only file systems whose Linux driver has export operations give
 *   handles (ext2/3/4, xfs, btrfs, tmpfs, f2fs, squashfs, iso9660, nfs,
 *   by statfs magic); others are EOPNOTSUPP as Linux's, except for
 *   AT_HANDLE_FID, which any file system encodes (such a handle never
 *   opens: ESTALE).
 *
 * The table holds HANDLE_TABLE_MAX files; past that a deleted file's
 * entry, else the oldest, is reused, and handles of the entry it held are
 * ESTALE from then on. A device, FIFO or socket opens by handle only
 * O_PATH (EOPNOTSUPP otherwise: hvrun serves those opens by path). The
 * mount id is the host's, as /proc/self/mountinfo
 * and statx show it under hvrun. Errors come in Linux's order (6.12).
 */
#include "proxy.h"
#include "kernel.h"
#include "fs.h"
#include "internal.h"
#include "vfs.h"
#include "mm.h"
#include "det.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif
#ifndef AT_HANDLE_MNT_ID_UNIQUE
#define AT_HANDLE_MNT_ID_UNIQUE 0x001
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#define MAX_HANDLE_BYTES 128      /* MAX_HANDLE_SZ */
#define FILEID_INO64_GEN 0x81     /* 64-bit inode number, 32-bit generation */
#define HANDLE_BYTES 12           /* our handles' f_handle */
#define HANDLE_HEADER_BYTES 8     /* handle_bytes, handle_type */
#define HANDLE_TABLE_MAX 4096
#define K_O_TMPFILE 020000000     /* __O_TMPFILE without O_DIRECTORY */

#ifndef EXT4_SUPER_MAGIC
#define EXT4_SUPER_MAGIC 0xEF53
#endif
#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif
#ifndef F2FS_SUPER_MAGIC
#define F2FS_SUPER_MAGIC 0xF2F52010
#endif
#ifndef ISOFS_SUPER_MAGIC
#define ISOFS_SUPER_MAGIC 0x9660
#endif

struct handle_entry {
    uint64_t host_dev, host_ino;
    uint64_t vino;   /* the inode number stat shows the guest */
    uint32_t gen;    /* the entry's serial: 0 is a free slot */
    int host_fd;     /* O_PATH; -1 for an AT_HANDLE_FID-only file */
};

struct proxy_handles {
    struct handle_entry e[HANDLE_TABLE_MAX];
    int nr;
    int next_evict; /* the oldest entry, when none is free */
    uint32_t last_gen;
};

void proxy_handles_world_free(struct proxy_world *w)
{
    struct proxy_handles *h = w->handles;
    if (!h)
        return;
    for (int i = 0; i < h->nr; i++)
        if (h->e[i].gen && h->e[i].host_fd >= 0)
            close(h->e[i].host_fd);
    free(h);
    w->handles = NULL;
}

/* Whether Linux's driver for the file system has export operations. */
static bool fs_exports_handles(int host_fd)
{
    struct statfs sfs;
    if (fstatfs(host_fd, &sfs) < 0)
        return false;
    switch ((unsigned long)sfs.f_type) {
    case EXT4_SUPER_MAGIC: /* ext2 and ext3 share it */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case F2FS_SUPER_MAGIC:
    case SQUASHFS_MAGIC:
    case ISOFS_SUPER_MAGIC:
    case NFS_SUPER_MAGIC:
        return true;
    default:
        return false;
    }
}

static void entry_drop(struct handle_entry *e)
{
    if (e->host_fd >= 0)
        close(e->host_fd);
    e->host_fd = -1;
    e->gen = 0;
}

/* A file whose last link is gone: its handles are stale. */
static bool entry_deleted(const struct handle_entry *e)
{
    struct stat st;
    return e->host_fd >= 0 && (fstat(e->host_fd, &st) < 0 || st.st_nlink == 0);
}

/* The slot a new entry takes: a free one, a deleted file's, else the
 * oldest. */
static struct handle_entry *entry_slot(struct proxy_handles *h)
{
    for (int i = 0; i < h->nr; i++)
        if (!h->e[i].gen || entry_deleted(&h->e[i])) {
            entry_drop(&h->e[i]);
            return &h->e[i];
        }
    if (h->nr < HANDLE_TABLE_MAX)
        return &h->e[h->nr++];
    struct handle_entry *e = &h->e[h->next_evict];
    h->next_evict = (h->next_evict + 1) % HANDLE_TABLE_MAX;
    entry_drop(e);
    return e;
}

/* The entry for the file (an O_PATH fd of hvrun's, which it takes), made
 * on first use; NULL when out of memory. */
static struct handle_entry *entry_for(struct proxy_process *p, int path_fd,
                                      const struct stat *st, bool keep_fd)
{
    struct proxy_world *w = p->world;
    if (!w->handles && !(w->handles = calloc(1, sizeof(*w->handles)))) {
        close(path_fd);
        return NULL;
    }
    struct proxy_handles *h = w->handles;
    for (int i = 0; i < h->nr; i++) {
        struct handle_entry *e = &h->e[i];
        if (e->gen && e->host_dev == st->st_dev && e->host_ino == st->st_ino &&
            !entry_deleted(e)) {
            if (e->host_fd < 0 && keep_fd) { /* a FID entry, now openable */
                e->host_fd = path_fd;
                return e;
            }
            close(path_fd);
            return e;
        }
    }
    struct handle_entry *e = entry_slot(h);
    e->host_dev = st->st_dev;
    e->host_ino = st->st_ino;
    e->vino = det_ino(p->det, st->st_dev, st->st_ino);
    e->gen = ++h->last_gen;
    if (!e->gen) /* 2^32 handles made: 0 marks a free slot */
        e->gen = ++h->last_gen;
    e->host_fd = keep_fd ? path_fd : -1;
    if (!keep_fd)
        close(path_fd);
    return e;
}

/* The host's mount id of the file, as statx shows it under hvrun. */
static uint64_t host_mount_id(int host_fd, bool unique)
{
    struct statx stx;
    unsigned mask = unique ? STATX_MNT_ID_UNIQUE : STATX_MNT_ID;
    if (statx(host_fd, "", AT_EMPTY_PATH, mask, &stx) < 0)
        return 0;
    return stx.stx_mnt_id;
}

/* Copies the handle (header and bytes: only the header when it did not
 * fit) and the mount id out, as do_sys_name_to_handle: both are written
 * whatever the result, and either failing is EFAULT. */
static long handle_out(struct proxy_process *p, const uint64_t a[6],
                       const struct handle_entry *e, uint64_t mount_id,
                       bool fits)
{
    unsigned char out[HANDLE_HEADER_BYTES + HANDLE_BYTES];
    uint32_t bytes = HANDLE_BYTES;
    int32_t type = FILEID_INO64_GEN;
    memcpy(out, &bytes, 4);
    memcpy(out + 4, &type, 4);
    memcpy(out + 8, &e->vino, 8);
    memcpy(out + 16, &e->gen, 4);
    long r = fits ? 0 : -EOVERFLOW;
    bool unique = a[4] & AT_HANDLE_MNT_ID_UNIQUE;
    int mount_id32 = (int)mount_id;
    if (proxy_copy_out(p, a[3], unique ? (void *)&mount_id : (void *)&mount_id32,
                       unique ? 8 : 4) < 0)
        r = -EFAULT;
    if (proxy_copy_out(p, a[2], out, fits ? sizeof(out) : HANDLE_HEADER_BYTES) < 0)
        r = -EFAULT;
    return r;
}

/* name_to_handle_at(dfd, path, handle, mount_id, flags). */
static long sys_name_to_handle_at(struct proxy_process *p, const uint64_t a[6])
{
    int flags = (int)a[4];
    if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH | AT_HANDLE_FID |
                  AT_HANDLE_MNT_ID_UNIQUE))
        return -EINVAL;
    int at_flags = (flags & AT_SYMLINK_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW) |
                   (flags & AT_EMPTY_PATH);
    struct host_path hp;
    long r = proxy_fs_host_path_at_flags(p, a[0], a[1], at_flags, false, &hp);
    if (r < 0)
        return r;
    struct stat st;
    if (fstatat(hp.dirfd, hp.path, &st, at_flags) < 0)
        return -errno; /* ENOENT for "" without AT_EMPTY_PATH */
    int fd = hp.path[0] ? openat(hp.dirfd, hp.path,
                                 O_PATH | O_CLOEXEC |
                                     (flags & AT_SYMLINK_FOLLOW ? 0 : O_NOFOLLOW))
                        : fcntl(hp.dirfd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -errno;
    }
    /* hvrun's own view of a /proc, /sys or /etc file (by name, or an fd
     * of one: a memfd of its content) is no host file's */
    char shown[PROXY_PATH_MAX];
    bool exportable = fs_exports_handles(fd) &&
                      !(hp.path[0] ? proxy_vfs_is_virtual(p, hp.dirfd, hp.path)
                                   : proxy_vfs_virtual_path(fd, shown, sizeof(shown)));
    if (!exportable && !(flags & AT_HANDLE_FID)) {
        close(fd);
        return -EOPNOTSUPP;
    }
    uint32_t want;
    if (proxy_copy_in(p, &want, a[2], sizeof(want)) < 0) {
        close(fd);
        return -EFAULT;
    }
    if (want > MAX_HANDLE_BYTES) {
        close(fd);
        return -EINVAL;
    }
    uint64_t mount_id = host_mount_id(fd, flags & AT_HANDLE_MNT_ID_UNIQUE);
    struct handle_entry *e = entry_for(p, fd, &st, exportable);
    if (!e)
        return -ENOMEM;
    return handle_out(p, a, e, mount_id, want >= HANDLE_BYTES);
}

/* The entry a guest handle names, or NULL (a handle hvrun did not make,
 * or of a file since deleted or evicted: ESTALE). */
static struct handle_entry *entry_of(struct proxy_process *p, uint32_t type,
                                     const unsigned char *bytes, uint32_t len)
{
    struct proxy_handles *h = p->world->handles;
    if (!h || type != FILEID_INO64_GEN || len != HANDLE_BYTES)
        return NULL;
    uint64_t vino;
    uint32_t gen;
    memcpy(&vino, bytes, 8);
    memcpy(&gen, bytes + 8, 4);
    for (int i = 0; gen && i < h->nr; i++) {
        struct handle_entry *e = &h->e[i];
        if (e->gen != gen)
            continue;
        if (e->vino != vino || e->host_fd < 0)
            return NULL;
        if (entry_deleted(e)) {
            entry_drop(e);
            return NULL;
        }
        return e;
    }
    return NULL;
}

/* The host fd of open_by_handle_at's mount fd (AT_FDCWD: the cwd). */
static int mount_fd_host(struct proxy_process *p, int guest_fd)
{
    if (guest_fd == AT_FDCWD)
        return p->fs.cwd_fd;
    if (guest_fd < 0)
        return -EBADF;
    return guest_host_fd(p, (uint64_t)guest_fd);
}

/* Opens the entry's file as file_open_root(path, "", flags) does: a
 * symlink is ELOOP unless O_PATH, O_CREAT opens what is there (EEXIST
 * with O_EXCL, EISDIR on a directory). The reopen through hvrun's O_PATH
 * fd checks the file's permissions with the caller's ids. */
static long reopen(struct proxy_process *p, const struct handle_entry *e,
                   int flags)
{
    struct stat st;
    if (fstat(e->host_fd, &st) < 0)
        return -errno;
    if ((flags & O_PATH) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        int fd = fcntl(e->host_fd, F_DUPFD_CLOEXEC, 0);
        return fd < 0 ? -errno : proxy_fd_install(&p->fds, fd,
                                                  (flags & O_CLOEXEC) != 0, 0);
    }
    if (S_ISLNK(st.st_mode))
        return -ELOOP;
    /* A device, FIFO or socket opens only by path, where hvrun serves it
     * (detcore's /dev/urandom, the session's terminal, a FIFO's wait
     * parked on the logical clock): a host open here would bypass that,
     * or block hvrun itself. */
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !(flags & O_PATH))
        return -EOPNOTSUPP;
    if ((flags & K_O_TMPFILE) == K_O_TMPFILE)
        return -EOPNOTSUPP; /* a nameless file made through a handle: not modelled */
    if ((flags & O_CREAT) && (flags & O_EXCL))
        return -EEXIST;
    if ((flags & O_CREAT) && S_ISDIR(st.st_mode))
        return -EISDIR;
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", e->host_fd);
    bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    if (writes && !(flags & O_PATH) && S_ISREG(st.st_mode)) {
        long r = proxy_fs_exe_busy(p, AT_FDCWD, link, 0);
        if (r < 0)
            return r;
        proxy_preserve_fd(p, e->host_fd);
    }
    int host_flags = (flags & ~(O_CREAT | O_EXCL | O_NOCTTY)) | O_CLOEXEC;
    int fd = openat(AT_FDCWD, link, host_flags);
    if (fd < 0)
        return -errno;
    proxy_meta_note_open(p, fd, link, flags & ~O_CREAT, false);
    if ((flags & O_TRUNC) && S_ISREG(st.st_mode))
        proxy_mm_file_resized(p, fd);
    return proxy_fd_install(&p->fds, fd, (flags & O_CLOEXEC) != 0, 0);
}

/* open_by_handle_at(mount_fd, handle, flags), in handle_to_path's order:
 * the mount fd (EBADF), the capability (EPERM), the handle's header
 * (EFAULT, EINVAL for a size of 0 or over MAX_HANDLE_SZ) and bytes
 * (EFAULT), then the decode (ESTALE). */
static long sys_open_by_handle_at(struct proxy_process *p, const uint64_t a[6])
{
    int mount_host = mount_fd_host(p, (int)a[0]);
    if (mount_host < 0)
        return mount_host;
    if (!proxy_ns_init_capable(p) || proxy_cap_dropped(p, CAP_DAC_READ_SEARCH))
        return -EPERM;
    uint32_t header[2];
    if (proxy_copy_in(p, header, a[1], sizeof(header)) < 0)
        return -EFAULT;
    if (header[0] == 0 || header[0] > MAX_HANDLE_BYTES || (int32_t)header[1] < 0)
        return -EINVAL;
    unsigned char bytes[MAX_HANDLE_BYTES];
    if (proxy_copy_in(p, bytes, a[1] + HANDLE_HEADER_BYTES, header[0]) < 0)
        return -EFAULT;
    struct handle_entry *e = entry_of(p, header[1], bytes, header[0]);
    struct stat mnt, file;
    if (!e || fstat(mount_host, &mnt) < 0 || fstat(e->host_fd, &file) < 0 ||
        mnt.st_dev != file.st_dev)
        return -ESTALE;
    return reopen(p, e, (int)a[2]);
}

const struct proxy_syscall proxy_handle_syscalls[] = {
    {SYS_name_to_handle_at, "name_to_handle_at", sys_name_to_handle_at},
    {SYS_open_by_handle_at, "open_by_handle_at", sys_open_by_handle_at},
    {-1, NULL, NULL},
};
