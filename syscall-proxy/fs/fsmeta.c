/*
 * fsmeta.c - file metadata as the guest sees it, on top of detcore's
 * meta.c: canonical statx/statfs, directories listed in name order with
 * virtual inode numbers, and the notes that make a file's times follow the
 * logical clock when the guest changes it (fs.c and io.c call these after
 * a successful host call).
 *
 * Everything here does nothing unless detcore virtualises metadata; the
 * handlers then behave exactly as they did without it.
 *
 * The directory cache. Host directory order (and, for ext4, the d_off
 * cookies) differ between runs and machines, so the first getdents on a
 * directory fd, and the first after a seek to 0, reads the whole directory
 * from the host, sorts it by name (strcmp order, "." and ".." first) and
 * serves the guest from memory. An entry's d_off is the 1-based index of
 * the entry after it, so lseek(fd, d_off) (seekdir) and lseek(fd, 0)
 * (rewinddir) mean what they mean on Linux. The cache belongs to the open
 * file description: guest fds dup'd from one another share it (refcount),
 * as they share the offset on Linux. The listing is a snapshot: entries
 * added or removed after it was taken show up after the next rewind.
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "kernel.h"
#include "fs.h"
#include "internal.h"
#include "vfs.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "det.h"

/* Host getdents64 reads this much at a time while filling a cache. */
#define DIRCACHE_CHUNK_BYTES 32768
/* A getdents call hands out at most this much (fewer entries than fit is
 * always allowed). */
#define DIRENT_OUT_MAX_BYTES (1U << 20)
/* struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name. */
#define DIRENT64_NAME_OFF 19
#define DIRENT64_TYPE_OFF 18
/* The old struct linux_dirent: d_ino, d_off, d_reclen, d_name, ..., d_type
 * in the record's last byte. */
#define OLD_DIRENT_NAME_OFF 18
#define DIRENT_RECLEN_OFF 16

bool proxy_meta_on(const struct proxy_process *p)
{
    return p->det && p->det->cfg.virtualize_metadata;
}

/* ---- canonical stat results ---------------------------------------------- */

/* statx gets what stat gets: a struct stat view of its identity goes
 * through det_stat_canon. Birth time follows the ctime rule, and every
 * field filled here is in stx_mask, so the mask does not depend on whether
 * the host file system records birth times. */
void proxy_meta_statx_canon(struct proxy_process *p, struct statx *stx)
{
    if (!proxy_meta_on(p))
        return;
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_dev = makedev(stx->stx_dev_major, stx->stx_dev_minor);
    st.st_ino = stx->stx_ino;
    st.st_mode = stx->stx_mode;
    st.st_size = (off_t)stx->stx_size;
    st.st_blocks = (blkcnt_t)stx->stx_blocks;
    det_stat_canon(p->det, &st);
    if (stx->stx_mask & STATX_INO)
        stx->stx_ino = st.st_ino;
    if (stx->stx_mask & STATX_SIZE)
        stx->stx_size = (uint64_t)st.st_size;
    if (stx->stx_mask & STATX_BLOCKS)
        stx->stx_blocks = (uint64_t)st.st_blocks;
    stx->stx_dev_major = major(st.st_dev);
    stx->stx_dev_minor = minor(st.st_dev);
    stx->stx_atime = (struct statx_timestamp){
        .tv_sec = st.st_atim.tv_sec, .tv_nsec = (uint32_t)st.st_atim.tv_nsec};
    stx->stx_mtime = (struct statx_timestamp){
        .tv_sec = st.st_mtim.tv_sec, .tv_nsec = (uint32_t)st.st_mtim.tv_nsec};
    stx->stx_ctime = (struct statx_timestamp){
        .tv_sec = st.st_ctim.tv_sec, .tv_nsec = (uint32_t)st.st_ctim.tv_nsec};
    stx->stx_btime = stx->stx_ctime;
    stx->stx_mask |= STATX_ATIME | STATX_MTIME | STATX_CTIME | STATX_BTIME;
}

/* Free space and free inodes change with everything else on the host;
 * the guest sees a half-full file system of the host's size. */
void proxy_meta_statfs_canon(struct proxy_process *p, struct statfs *sfs)
{
    if (!proxy_meta_on(p))
        return;
    sfs->f_bfree = sfs->f_bavail = sfs->f_blocks / 2;
    sfs->f_ffree = sfs->f_files / 2;
    memset(&sfs->f_fsid, 0, sizeof(sfs->f_fsid));
}

/* ---- notes: what the guest changed --------------------------------------- */

/* The identity cached in the fd slot, fstat'ed on first need. */
static bool fd_meta_load(struct proxy_fd *f)
{
    return proxy_fd_identity(f);
}

static void note(struct proxy_process *p, uint64_t dev, uint64_t ino,
                 enum proxy_meta_change what)
{
    if (what == PROXY_META_CONTENT)
        det_note_write(p->det, dev, ino);
    else
        det_note_change(p->det, dev, ino);
}

/* Content notes on an fd are for regular files: pipes, sockets and
 * terminals have no times anyone reads, and skipping them keeps writes to
 * them cheap. */
void proxy_meta_note_fd(struct proxy_process *p, int guest_fd,
                        enum proxy_meta_change what)
{
    if (!proxy_meta_on(p))
        return;
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f || !fd_meta_load(f))
        return;
    if (what == PROXY_META_CONTENT && !S_ISREG(f->host_type))
        return;
    note(p, f->host_dev, f->host_ino, what);
}

void proxy_meta_note_at(struct proxy_process *p, int host_dirfd,
                        const char *host_path, int at_flags,
                        enum proxy_meta_change what)
{
    if (!proxy_meta_on(p))
        return;
    struct stat st;
    at_flags &= AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH;
    if (fstatat(host_dirfd, host_path, &st, at_flags) == 0)
        note(p, st.st_dev, st.st_ino, what);
}

/* The directory holding (dirfd, path), by the path's text: trailing
 * slashes dropped, then everything before the last slash ("." if none). */
static int parent_stat(int host_dirfd, const char *host_path, struct stat *st)
{
    char dir[PROXY_PATH_MAX];
    size_t n = strlen(host_path);
    if (n >= sizeof(dir))
        return -ENAMETOOLONG;
    memcpy(dir, host_path, n + 1);
    while (n > 1 && dir[n - 1] == '/')
        dir[--n] = '\0';
    char *slash = strrchr(dir, '/');
    const char *parent = dir;
    if (!slash)
        parent = ".";
    else if (slash == dir)
        parent = "/";
    else
        *slash = '\0';
    return fstatat(host_dirfd, parent, st, 0) < 0 ? -errno : 0;
}

void proxy_meta_note_parent(struct proxy_process *p, int host_dirfd,
                            const char *host_path)
{
    if (!proxy_meta_on(p))
        return;
    struct stat st;
    if (parent_stat(host_dirfd, host_path, &st) == 0)
        det_note_write(p->det, st.st_dev, st.st_ino);
}

/* --verify puts the files back after a run: the journal (preserve.c)
 * records each name the run makes. */
void proxy_meta_log_created(struct proxy_process *p, int host_dirfd,
                            const char *host_path)
{
    proxy_preserve_created(p, host_dirfd, host_path);
}

/* A file the run just made has an inode the host may have freed and given
 * again (an O_TMPFILE closed without a name, a file another process
 * removed): what was noted of that number belonged to the old file, and
 * keeping it would make the new file's inode number and times depend on
 * which number the host's allocator handed out. */
static void fresh_inode(struct proxy_process *p, uint64_t dev, uint64_t ino)
{
    det_forget_file(p->det, dev, ino);
}

void proxy_meta_note_created(struct proxy_process *p, int host_dirfd,
                             const char *host_path)
{
    struct stat st;
    if (proxy_meta_on(p) &&
        fstatat(host_dirfd, host_path, &st, AT_SYMLINK_NOFOLLOW) == 0)
        fresh_inode(p, st.st_dev, st.st_ino);
    proxy_meta_log_created(p, host_dirfd, host_path);
    proxy_meta_note_parent(p, host_dirfd, host_path);
    proxy_meta_note_at(p, host_dirfd, host_path, AT_SYMLINK_NOFOLLOW,
                       PROXY_META_CONTENT);
}

/*
 * One time of a utimensat-style pair: NULL for "now" (UTIME_NOW), the
 * guest's time, or for UTIME_OMIT the time the guest saw so far (the
 * canonical one in st_canon).
 */
static const struct timespec *time_arg(const struct timespec *given,
                                       const struct timespec *canon)
{
    if (given->tv_nsec == UTIME_NOW)
        return NULL;
    return given->tv_nsec == UTIME_OMIT ? canon : given;
}

void proxy_meta_note_times(struct proxy_process *p, int host_dirfd,
                           const char *host_path, int at_flags,
                           const struct timespec *ts)
{
    if (!proxy_meta_on(p))
        return;
    if (ts && ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT)
        return; /* Linux changes nothing, not even ctime */
    struct stat st;
    int r = host_path
                ? fstatat(host_dirfd, host_path, &st,
                          at_flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
                : fstat(host_dirfd, &st);
    if (r < 0)
        return;
    if (!ts) {
        det_note_times(p->det, st.st_dev, st.st_ino, NULL, NULL);
        return;
    }
    struct stat canon = st;
    det_stat_canon(p->det, &canon);
    det_note_times(p->det, st.st_dev, st.st_ino,
                   time_arg(&ts[0], &canon.st_atim),
                   time_arg(&ts[1], &canon.st_mtim));
}

/* ---- names that go away -------------------------------------------------- */

void proxy_meta_name_get(struct proxy_process *p, int host_dirfd,
                         const char *host_path, struct proxy_meta_name *n)
{
    memset(n, 0, sizeof(*n));
    n->host_dirfd = host_dirfd;
    n->host_path = host_path;
    if (!proxy_meta_on(p))
        return;
    struct stat st;
    if (fstatat(host_dirfd, host_path, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    n->exists = true;
    n->is_dir = S_ISDIR(st.st_mode);
    n->nlink = st.st_nlink;
    n->dev = st.st_dev;
    n->ino = st.st_ino;
}

/* The name n was removed (or replaced): a file whose last link it was is
 * forgotten, since the host may give its inode number to a new file; a
 * file with other links only had its link count (ctime) change. A removed
 * directory is gone whatever its link count says. */
static void name_gone(struct proxy_process *p, const struct proxy_meta_name *n)
{
    if (!n->exists)
        return;
    if (n->is_dir || n->nlink <= 1)
        det_forget_file(p->det, n->dev, n->ino);
    else
        det_note_change(p->det, n->dev, n->ino);
}

void proxy_meta_note_unlink(struct proxy_process *p,
                            const struct proxy_meta_name *victim)
{
    if (!proxy_meta_on(p))
        return;
    proxy_meta_note_parent(p, victim->host_dirfd, victim->host_path);
    name_gone(p, victim);
}

static bool same_file(const struct proxy_meta_name *a,
                      const struct proxy_meta_name *b)
{
    return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
}

/* rename(2) of two names for one file does nothing; otherwise both
 * directories change, the moved file's ctime moves, and a replaced file
 * loses a link. RENAME_EXCHANGE moves both files and replaces none. */
void proxy_meta_note_rename(struct proxy_process *p,
                            const struct proxy_meta_name *from,
                            const struct proxy_meta_name *to,
                            unsigned int flags)
{
    if (!proxy_meta_on(p) || same_file(from, to))
        return;
    proxy_meta_note_parent(p, from->host_dirfd, from->host_path);
    proxy_meta_note_parent(p, to->host_dirfd, to->host_path);
    if (flags & RENAME_EXCHANGE)
        proxy_meta_note_at(p, from->host_dirfd, from->host_path,
                           AT_SYMLINK_NOFOLLOW, PROXY_META_ATTRS);
    else
        name_gone(p, to);
    proxy_meta_note_at(p, to->host_dirfd, to->host_path, AT_SYMLINK_NOFOLLOW,
                       PROXY_META_ATTRS);
}

/* ---- open ---------------------------------------------------------------- */

bool proxy_meta_open_creates(struct proxy_process *p, int host_dirfd,
                             const char *host_path, int flags)
{
    bool journaled = p->totals && p->totals->preserve;
    if (!(proxy_meta_on(p) || journaled) || !(flags & O_CREAT) ||
        (flags & O_TMPFILE) == O_TMPFILE)
        return false;
    struct stat st;
    int at_flags = (flags & (O_NOFOLLOW | O_EXCL)) ? AT_SYMLINK_NOFOLLOW : 0;
    return fstatat(host_dirfd, host_path, &st, at_flags) < 0 && errno == ENOENT;
}

/* The directory the open file is linked in, found through the host fd
 * (exact even when a relative path or a symlink led there); a path that
 * is not a plain absolute one (an unlinked file, a pipe) has none. */
static int open_parent_stat(int host_fd, const char *path, struct stat *st)
{
    char link[64], real[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, real, sizeof(real) - 1);
    if (n > 0 && real[0] == '/') {
        real[n] = '\0';
        static const char deleted[] = " (deleted)";
        size_t dlen = sizeof(deleted) - 1;
        if ((size_t)n > dlen && strcmp(real + n - dlen, deleted) == 0)
            return -ENOENT;
        return parent_stat(AT_FDCWD, real, st);
    }
    return path && path[0] == '/' ? parent_stat(AT_FDCWD, path, st) : -ENOENT;
}

/*
 * After a successful open: a file it created or truncated (O_TRUNC always
 * sets the times on Linux, even of an empty file) was written now, and a
 * created name changed its directory. An O_TMPFILE file is new but has no
 * name yet.
 */
void proxy_meta_note_open(struct proxy_process *p, int host_fd,
                          const char *guest_path_after_rewrite, int flags,
                          bool created)
{
    if (created)
        proxy_preserve_created_fd(p, host_fd);
    if (!proxy_meta_on(p))
        return;
    bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
    if (!created && !tmpfile && !(flags & O_TRUNC))
        return;
    struct stat st;
    if (fstat(host_fd, &st) < 0 || !S_ISREG(st.st_mode))
        return;
    if (created || tmpfile)
        fresh_inode(p, st.st_dev, st.st_ino);
    det_note_write(p->det, st.st_dev, st.st_ino);
    if (created &&
        open_parent_stat(host_fd, guest_path_after_rewrite, &st) == 0)
        det_note_write(p->det, st.st_dev, st.st_ino);
}

/* ---- the directory cache ------------------------------------------------- */

struct dircache_entry {
    const char *name;   /* inside the cache's raw host records */
    uint64_t host_ino;
    uint64_t vino;      /* what d_ino says */
    uint16_t name_len;
    unsigned char type; /* DT_* */
};

struct proxy_dircache {
    int refs;
    bool loaded;
    uint64_t pos;                /* index of the next entry handed out */
    struct dircache_entry *ents; /* in name order */
    size_t n;
    char *raw;                   /* the host's getdents64 records */
};

static void dircache_unload(struct proxy_dircache *c)
{
    free(c->ents);
    free(c->raw);
    c->ents = NULL;
    c->raw = NULL;
    c->n = 0;
    c->loaded = false;
}

void proxy_dircache_put(struct proxy_dircache *c)
{
    if (!c || --c->refs > 0)
        return;
    dircache_unload(c);
    free(c);
}

/* The fd's cache, made (empty, unloaded) on first need. */
static struct proxy_dircache *fd_dircache(struct proxy_fd *f)
{
    if (!f->dircache) {
        f->dircache = calloc(1, sizeof(*f->dircache));
        if (f->dircache)
            f->dircache->refs = 1;
    }
    return f->dircache;
}

/* "." first, ".." second, then strcmp order (names are unique, so the
 * order is total and qsort's instability does not matter). */
static int name_rank(const char *s)
{
    if (s[0] == '.' && s[1] == '\0')
        return 0;
    if (s[0] == '.' && s[1] == '.' && s[2] == '\0')
        return 1;
    return 2;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct dircache_entry *x = a, *y = b;
    int rx = name_rank(x->name), ry = name_rank(y->name);
    if (rx != ry)
        return rx - ry;
    return strcmp(x->name, y->name);
}

/* Every host record of the directory, from its start, into *raw_out. */
static long read_all_records(int host_fd, char **raw_out, size_t *len_out)
{
    char *raw = NULL;
    size_t used = 0, cap = 0;
    (void)lseek(host_fd, 0, SEEK_SET);
    for (;;) {
        if (cap - used < DIRCACHE_CHUNK_BYTES) {
            size_t ncap = cap ? cap * 2 : DIRCACHE_CHUNK_BYTES;
            char *nraw = realloc(raw, ncap);
            if (!nraw) {
                free(raw);
                return -ENOMEM;
            }
            raw = nraw;
            cap = ncap;
        }
        long n = syscall(SYS_getdents64, host_fd, raw + used, cap - used);
        if (n < 0) {
            int err = errno;
            free(raw);
            return -err;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    *raw_out = raw;
    *len_out = used;
    return 0;
}

/* Virtual inode numbers, given in name order (so the same in every run).
 * ".." is the parent directory as a path lookup finds it. */
static void dircache_number(struct proxy_process *p, int host_fd,
                            struct proxy_dircache *c)
{
    struct stat dir, up;
    bool have_dir = fstat(host_fd, &dir) == 0;
    bool have_up = fstatat(host_fd, "..", &up, 0) == 0;
    for (size_t i = 0; i < c->n; i++) {
        struct dircache_entry *e = &c->ents[i];
        if (name_rank(e->name) == 1 && have_up)
            e->vino = det_ino(p->det, up.st_dev, up.st_ino);
        else if (have_dir)
            e->vino = det_ino(p->det, dir.st_dev, e->host_ino);
        else
            e->vino = e->host_ino;
    }
}

/* A directory's listing as the host gives it, or, recorded or replayed
 * (proxy_file_tap), as the recorded run read it. */
static long listing_of(struct proxy_process *p, int host_fd, char **raw,
                       size_t *len)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    char link[64], key[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t kn = t ? readlink(link, key, sizeof(key) - 1) : -1;
    if (kn > 0)
        key[kn] = '\0';
    if (kn > 0 && t->recorded_listing &&
        t->recorded_listing(t->ctx, key, raw, len))
        return 0;
    long r = read_all_records(host_fd, raw, len);
    if (r == 0 && kn > 0 && t->listed)
        t->listed(t->ctx, key, *raw, *len);
    return r;
}

/* lister: whose fds or threads a /proc listing shows (p's own, or the
 * guest whose /proc/<N>/task p opened). */
static long dircache_load(struct proxy_process *p,
                          struct proxy_process *lister, int host_fd,
                          struct proxy_dircache *c)
{
    char *raw = NULL;
    size_t len = 0;
    /* /proc/self/fd and friends list the guest's fds, in numeric order as
     * Linux lists them; real directories are read and sorted by name. */
    long r = proxy_vfs_dir_records(lister, host_fd, &raw, &len);
    bool synthetic = r >= 0;
    if (r == -ENOENT)
        r = listing_of(p, host_fd, &raw, &len);
    if (r < 0)
        return r;
    size_t n = 0;
    for (size_t off = 0; off + DIRENT64_NAME_OFF < len;) {
        uint16_t reclen;
        memcpy(&reclen, raw + off + DIRENT_RECLEN_OFF, sizeof(reclen));
        if (reclen == 0)
            break;
        n++;
        off += reclen;
    }
    struct dircache_entry *ents = calloc(n ? n : 1, sizeof(*ents));
    if (!ents) {
        free(raw);
        return -ENOMEM;
    }
    size_t i = 0;
    for (size_t off = 0; i < n; i++) {
        char *rec = raw + off;
        uint16_t reclen;
        memcpy(&reclen, rec + DIRENT_RECLEN_OFF, sizeof(reclen));
        memcpy(&ents[i].host_ino, rec, sizeof(uint64_t));
        ents[i].type = (unsigned char)rec[DIRENT64_TYPE_OFF];
        ents[i].name = rec + DIRENT64_NAME_OFF;
        ents[i].name_len =
            (uint16_t)strnlen(ents[i].name, reclen - DIRENT64_NAME_OFF);
        off += reclen;
    }
    if (!synthetic)
        qsort(ents, n, sizeof(*ents), entry_cmp);
    dircache_unload(c);
    c->ents = ents;
    c->raw = raw;
    c->n = n;
    c->loaded = true;
    dircache_number(p, host_fd, c);
    return 0;
}

bool proxy_meta_dir_sorted(struct proxy_process *p, int guest_fd)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f || !fd_meta_load(f) || !S_ISDIR(f->host_type))
        return false;
    /* With metadata passed through, the guest's own fd and task lists
     * still come from here: the host's would be hvrun's. */
    return proxy_meta_on(p) || proxy_vfs_guest_listing_dir(f->host_fd);
}

/* Both record layouts are ALIGN(20 + name length, 8) bytes long. */
static size_t dirent_reclen(const struct dircache_entry *e)
{
    return (DIRENT64_NAME_OFF + 1u + e->name_len + 7u) & ~(size_t)7;
}

static void dirent_put(char *rec, const struct dircache_entry *e,
                       uint64_t d_off, bool old_layout)
{
    size_t reclen = dirent_reclen(e);
    uint16_t reclen16 = (uint16_t)reclen;
    memset(rec, 0, reclen);
    memcpy(rec, &e->vino, sizeof(e->vino));
    memcpy(rec + 8, &d_off, sizeof(d_off));
    memcpy(rec + DIRENT_RECLEN_OFF, &reclen16, sizeof(reclen16));
    if (old_layout) {
        memcpy(rec + OLD_DIRENT_NAME_OFF, e->name, e->name_len);
        rec[reclen - 1] = (char)e->type;
    } else {
        rec[DIRENT64_TYPE_OFF] = (char)e->type;
        memcpy(rec + DIRENT64_NAME_OFF, e->name, e->name_len);
    }
}

/* How much of the guest buffer is writable from its start: an entry that
 * does not fit there would fault on Linux. */
static size_t writable_prefix(struct proxy_process *p, gva_t gva, size_t len)
{
    struct iovec iov[16];
    size_t covered;
    vmm_as_host_iov(p->as, gva, len, PROT_WRITE, iov, 16, &covered);
    return covered;
}

/*
 * getdents64 (or, old_layout, getdents) from the cache. As on Linux: 0 at
 * the end, -EINVAL when the buffer cannot hold the next entry, -EFAULT
 * when it could but that part of it is not writable, else as many entries
 * as fit; only the entries handed out advance the position.
 */
long proxy_meta_getdents(struct proxy_process *p, int guest_fd, gva_t gva,
                         uint64_t count, bool old_layout)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f)
        return -EBADF;
    struct proxy_dircache *c = fd_dircache(f);
    if (!c)
        return -ENOMEM;
    if (!c->loaded) {
        /* /proc/<N>/task of another guest lists N's threads, ENOENT once
         * N is gone (proc_task_readdir). */
        struct proxy_process *lister =
            f->listing_pid ? proxy_world_find(p->world, f->listing_pid) : p;
        if (!lister || lister->zombie)
            return -ENOENT;
        long r = dircache_load(p, lister, f->host_fd, c);
        if (r < 0)
            return r;
    }
    if (c->pos >= c->n)
        return 0;
    size_t want = (unsigned int)count;
    if (want > DIRENT_OUT_MAX_BYTES)
        want = DIRENT_OUT_MAX_BYTES;
    size_t first = dirent_reclen(&c->ents[c->pos]);
    if (first > want)
        return -EINVAL;
    size_t room = writable_prefix(p, gva, want);
    if (first > room)
        return -EFAULT;
    char *buf = malloc(room);
    if (!buf)
        return -ENOMEM;
    size_t used = 0;
    uint64_t i = c->pos;
    for (; i < c->n; i++) {
        size_t reclen = dirent_reclen(&c->ents[i]);
        if (used + reclen > room)
            break;
        dirent_put(buf + used, &c->ents[i], i + 1, old_layout);
        used += reclen;
    }
    long r = proxy_copy_out(p, gva, buf, used) < 0 ? -EFAULT : (long)used;
    free(buf);
    if (r > 0)
        c->pos = i;
    return r;
}

/*
 * lseek on a directory whose listing hvrun keeps: positions are indexes
 * into it. SEEK_SET and SEEK_CUR work as on tmpfs (dcache_dir_lseek);
 * anything else is -EINVAL there too (ext4 would accept SEEK_END with a
 * host-specific answer). A seek to 0 drops the listing, so the next read
 * sees the directory as it is now. The host fd seeks along (harmless: the
 * cache never reads at the host offset; its EBADF, for an O_PATH fd, is
 * the guest's answer too). Returns false when the fd is not
 * such a directory (the caller seeks the host fd as usual).
 */
bool proxy_meta_dir_seek(struct proxy_process *p, int guest_fd, int64_t off,
                         int whence, long *result)
{
    if (!proxy_meta_dir_sorted(p, guest_fd))
        return false;
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    struct proxy_dircache *c = fd_dircache(f);
    if (!c) {
        *result = -ENOMEM;
        return true;
    }
    int64_t target = -1;
    if (whence == SEEK_SET)
        target = off;
    else if (whence == SEEK_CUR &&
             __builtin_add_overflow((int64_t)c->pos, off, &target))
        target = -1;
    if (target < 0) {
        *result = -EINVAL;
        return true;
    }
    bool moves = whence == SEEK_SET || off != 0;
    off_t host = moves ? lseek(f->host_fd, (off_t)target, SEEK_SET)
                       : lseek(f->host_fd, 0, SEEK_CUR);
    if (host < 0 && errno == EBADF) { /* an O_PATH fd cannot seek */
        *result = -EBADF;
        return true;
    }
    if (moves) {
        if (target == 0)
            dircache_unload(c);
        c->pos = (uint64_t)target;
    }
    *result = (long)target;
    return true;
}

/* A dup shares the open file description, so it shares its identity and
 * its directory listing (made here if there is none yet, so that both fds
 * read one listing from then on). */
void proxy_meta_fd_dup(struct proxy_process *p, int old_guest_fd,
                       int new_guest_fd)
{
    if (!proxy_meta_on(p) || old_guest_fd == new_guest_fd)
        return;
    struct proxy_fd *from = proxy_fd_get(&p->fds, old_guest_fd);
    struct proxy_fd *to = proxy_fd_get(&p->fds, new_guest_fd);
    if (!from || !to || !fd_meta_load(from))
        return;
    to->meta_known = true;
    to->host_type = from->host_type;
    to->host_dev = from->host_dev;
    to->host_ino = from->host_ino;
    to->host_rdev = from->host_rdev;
    if (!S_ISDIR(from->host_type))
        return;
    struct proxy_dircache *c = fd_dircache(from);
    if (!c || to->dircache == c)
        return;
    proxy_dircache_put(to->dircache);
    c->refs++;
    to->dircache = c;
}

/* The last component (is_dir) or the parent directory's name (a file). */
static bool names_pycache(const char *path, bool is_dir)
{
    static const char cache[] = "__pycache__";
    size_t len = strlen(path);
    while (len > 0 && path[len - 1] == '/')
        len--;
    if (!is_dir) { /* drop the file name */
        while (len > 0 && path[len - 1] != '/')
            len--;
        while (len > 0 && path[len - 1] == '/')
            len--;
    }
    size_t start = len;
    while (start > 0 && path[start - 1] != '/')
        start--;
    return len - start == sizeof(cache) - 1 &&
           memcmp(path + start, cache, sizeof(cache) - 1) == 0;
}

/* path (host) is in the private /tmp hvrun made for this run: nothing in
 * it predates the run. proxy_tmp_walk made paths there absolute, so a
 * relative one is elsewhere. A --tmp DIR may hold caches of earlier runs,
 * so it does not count. */
static bool in_fresh_tmp(const struct proxy_process *p, const char *path)
{
    size_t hlen = strlen(p->fs.tmp_host);
    return p->fs.tmp_owned && hlen &&
           strncmp(path, p->fs.tmp_host, hlen) == 0 &&
           (path[hlen] == '/' || path[hlen] == '\0');
}

/* The directory holding path's last component was made by this run. */
static bool holder_made_by_run(struct proxy_process *p, int host_dirfd,
                               const char *path)
{
    char dir[PROXY_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else
        slash[slash == dir ? 1 : 0] = '\0';
    struct stat st;
    return fstatat(host_dirfd, dir, &st, 0) == 0 &&
           det_was_created(p->det, st.st_dev, st.st_ino);
}

bool proxy_meta_cache_write_blocked(struct proxy_process *p, int host_dirfd,
                                    const char *path, bool is_dir)
{
    return p->det->cfg.virtualize_metadata && names_pycache(path, is_dir) &&
           !in_fresh_tmp(p, path) &&
           !holder_made_by_run(p, host_dirfd, path);
}

void proxy_meta_note_mkdir(struct proxy_process *p, int host_dirfd,
                           const char *path)
{
    struct stat st;
    if (proxy_meta_on(p) &&
        fstatat(host_dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
        det_note_created(p->det, st.st_dev, st.st_ino);
}

/* ---- CPython's bytecode caches, read as the run would write them --------- */

/* The header's layout from 3.7 (magic 3390, PEP 552): magic (2 bytes and
 * "\r\n"), flags (0: checked by the source's mtime and size), the mtime's
 * low 32 bits, the size's. */
#define PYC_MAGIC_PEP552 3390
#define PYC_MAGIC_END 10000
#define PYC_MTIME_AT 8

/* What CPython compares: int() of st_mtime, the double sec + nsec * 1e-9
 * (which can round up to the next second), to 32 bits. */
static uint32_t py_mtime32(int64_t ns)
{
    int64_t sec = ns / 1000000000, nsec = ns % 1000000000;
    if (nsec < 0) {
        sec--;
        nsec += 1000000000;
    }
    return (uint32_t)(int64_t)((double)sec + (double)nsec * 1e-9);
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

/* importlib's source_from_cache: DIR/__pycache__/NAME.TAG[.opt-N].pyc ->
 * DIR/NAME.py; pytest's rewritten tests, NAME.TAG-pytest-X.Y.Z.pyc, name
 * their source the same way (a module name has no dot). */
static bool pyc_source_path(const char *pyc, char *out, size_t cap)
{
    if (!names_pycache(pyc, false))
        return false;
    const char *base = strrchr(pyc, '/') + 1; /* names_pycache: a parent */
    size_t blen = strlen(base), dots = 0;
    if (blen < 5 || strcmp(base + blen - 4, ".pyc") != 0)
        return false;
    for (const char *c = base; *c; c++)
        dots += *c == '.';
    if (dots < 2)
        return false;
    const char *end = base; /* back over the slashes and "__pycache__" */
    while (end > pyc && end[-1] == '/')
        end--;
    end -= sizeof("__pycache__") - 1;
    int n = snprintf(out, cap, "%.*s%.*s.py", (int)(end - pyc), pyc,
                     (int)(strchr(base, '.') - base), base);
    return n > 0 && (size_t)n < cap;
}

void proxy_meta_pyc_opened(struct proxy_process *p, int guest_fd,
                           int host_dirfd, const char *path, int flags)
{
    char src[PROXY_PATH_MAX];
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!proxy_meta_on(p) || !f || (flags & O_ACCMODE) != O_RDONLY ||
        (flags & O_PATH) || !pyc_source_path(path, src, sizeof(src)) ||
        !fd_meta_load(f) || !S_ISREG(f->host_type))
        return; /* a device or FIFO so named is read as it is */
    unsigned char h[16];
    if (pread(f->host_fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
        h[2] != '\r' || h[3] != '\n')
        return;
    unsigned magic = h[0] | (unsigned)h[1] << 8;
    if (magic < PYC_MAGIC_PEP552 || magic >= PYC_MAGIC_END || le32(h + 4))
        return; /* older layouts; hash-based caches need nothing */
    struct stat st;
    if (fstatat(host_dirfd, src, &st, 0) < 0 || !S_ISREG(st.st_mode))
        return;
    int64_t host_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    uint32_t recorded = le32(h + PYC_MTIME_AT);
    if (recorded != py_mtime32(host_ns) ||
        le32(h + PYC_MTIME_AT + 4) != (uint32_t)st.st_size)
        return; /* stale natively too */
    uint32_t seen = py_mtime32(
        det_mtime_seen_ns(p->det, st.st_dev, st.st_ino, host_ns));
    if (seen == recorded)
        return;
    f->pyc_fix = true;
    f->pyc_mtime_host = recorded;
    f->pyc_mtime_seen = seen;
}

void proxy_meta_pyc_read(const struct proxy_fd *f, int64_t start,
                         const struct iovec *iov, int n, size_t got)
{
    if (!f->pyc_fix || start > PYC_MTIME_AT + 3 ||
        start + (int64_t)got <= PYC_MTIME_AT)
        return;
    unsigned char *at[4] = {0}; /* where each header byte landed */
    int64_t pos = start;
    for (int i = 0; i < n && pos < start + (int64_t)got; i++) {
        int64_t len = (int64_t)iov[i].iov_len;
        if (len > start + (int64_t)got - pos)
            len = start + (int64_t)got - pos;
        for (int k = 0; k < 4; k++) {
            int64_t o = PYC_MTIME_AT + k;
            if (o >= pos && o < pos + len)
                at[k] = (unsigned char *)iov[i].iov_base + (o - pos);
        }
        pos += len;
    }
    /* Only over the bytes the header had at the open: a file rewritten
     * since reads as it is. */
    for (int k = 0; k < 4; k++)
        if (at[k] && *at[k] != (unsigned char)(f->pyc_mtime_host >> (8 * k)))
            return;
    for (int k = 0; k < 4; k++)
        if (at[k])
            *at[k] = (unsigned char)(f->pyc_mtime_seen >> (8 * k));
}
