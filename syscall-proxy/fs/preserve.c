/*
 * preserve.c - --verify's journal of what a run does to existing files
 * and which names it makes (the format: journal.h), so that cli/undo.c
 * can put every file back as it was before the run.
 *
 * The hooks (fs.c, fsmeta.c) run around the host calls that change the
 * file tree:
 *   - before a call may change an existing object's content or mode (an
 *     open that can write, truncate, chmod), its content is copied into
 *     the journal once per object (keyed by device and inode, not by name,
 *     so hard links share one copy) and a SAVED record names it;
 *   - before a name of an existing object goes away (unlink, rmdir, a
 *     rename over it), a SAVED record says which object it named;
 *   - after a rename, a RENAMED record (both names, the object moved);
 *   - after a call made a name (open O_CREAT, mkdir, mknod, symlink, link,
 *     bind of an AF_UNIX path), a CREATED record with the object it names.
 * Objects the run itself made are remembered (by inode) and never saved.
 * Names inside the run's private /tmp are not journaled: it is removed
 * as a whole. Not handled (docs/DETERMINISM.md): files over
 * PRESERVE_MAX_FILE bytes (a warning says so), ownership, times and
 * extended attributes.
 */
#include "journal.h"
#include "proxy.h"
#include "kernel.h"
#include "fs.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define PRESERVE_MAX_FILE (256LL << 20)

/* What the journal knows about one object (device, inode). */
struct inode_slot {
    uint64_t dev, ino;
    uint32_t copy;      /* copy.N of its content before the run, or 0 */
    uint32_t mode;      /* its st_mode before the run */
    bool used, created, saved;
};

struct proxy_preserve {
    int dir_fd;         /* the journal directory */
    int log_fd;         /* its journal file, O_APPEND */
    uint32_t next_copy;
    struct inode_slot *slots; /* open addressing, power-of-two capacity */
    size_t cap, count;
};

/* ---- the inode table ------------------------------------------------------- */

static size_t slot_index(const struct proxy_preserve *pr, uint64_t dev,
                         uint64_t ino)
{
    uint64_t h = (ino * 0x9e3779b97f4a7c15ULL) ^ (dev * 0xc2b2ae3d27d4eb4fULL);
    return (size_t)(h >> 17) & (pr->cap - 1);
}

static struct inode_slot *slot_find(struct proxy_preserve *pr, uint64_t dev,
                                    uint64_t ino)
{
    if (pr->cap == 0)
        return NULL;
    for (size_t i = slot_index(pr, dev, ino);; i = (i + 1) & (pr->cap - 1)) {
        struct inode_slot *s = &pr->slots[i];
        if (!s->used)
            return NULL;
        if (s->dev == dev && s->ino == ino)
            return s;
    }
}

static int slots_grow(struct proxy_preserve *pr)
{
    size_t cap = pr->cap ? pr->cap * 2 : 256;
    struct inode_slot *slots = calloc(cap, sizeof(*slots)), *old = pr->slots;
    if (!slots)
        return -ENOMEM;
    size_t old_cap = pr->cap;
    pr->slots = slots;
    pr->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].used)
            continue;
        size_t j = slot_index(pr, old[i].dev, old[i].ino);
        while (slots[j].used)
            j = (j + 1) & (cap - 1);
        slots[j] = old[i];
    }
    free(old);
    return 0;
}

/* The object's slot, made (all flags clear) if it has none. */
static struct inode_slot *slot_get(struct proxy_preserve *pr, uint64_t dev,
                                   uint64_t ino)
{
    struct inode_slot *s = slot_find(pr, dev, ino);
    if (s)
        return s;
    if ((pr->count + 1) * 2 > pr->cap && slots_grow(pr) < 0)
        return NULL;
    size_t i = slot_index(pr, dev, ino);
    while (pr->slots[i].used)
        i = (i + 1) & (pr->cap - 1);
    s = &pr->slots[i];
    *s = (struct inode_slot){.dev = dev, .ino = ino, .used = true};
    pr->count++;
    return s;
}

/* ---- lifecycle -------------------------------------------------------------- */

struct proxy_preserve *proxy_preserve_open(const char *dir)
{
    struct proxy_preserve *pr = calloc(1, sizeof(*pr));
    if (!pr)
        return NULL;
    pr->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    pr->log_fd = pr->dir_fd < 0 ? -1
                                : openat(pr->dir_fd, JOURNAL_FILE,
                                         O_WRONLY | O_CREAT | O_EXCL |
                                             O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                                         0600);
    pr->next_copy = 1;
    if (pr->log_fd < 0) {
        if (pr->dir_fd >= 0)
            close(pr->dir_fd);
        free(pr);
        return NULL;
    }
    return pr;
}

void proxy_preserve_close(struct proxy_preserve *pr)
{
    if (!pr)
        return;
    close(pr->log_fd);
    close(pr->dir_fd);
    free(pr->slots);
    free(pr);
}

bool proxy_preserve_untouched(const struct proxy_preserve *pr)
{
    struct stat st;
    return !pr || (pr->count == 0 && pr->next_copy == 1 &&
                   fstat(pr->log_fd, &st) == 0 && st.st_size == 0);
}

int proxy_preserve_reopen(struct proxy_preserve *pr)
{
    int fd = openat(pr->dir_fd, JOURNAL_FILE,
                    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
                        O_CLOEXEC,
                    0600);
    if (fd < 0)
        return -errno;
    if (dup3(fd, pr->log_fd, O_CLOEXEC) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    close(fd);
    return 0;
}

/* ---- paths ------------------------------------------------------------------- */

int proxy_abs_path(int dirfd, const char *path_in, char *out, size_t len)
{
    /* "dir/" names dir (mkdir("a/b/") is common): drop trailing slashes. */
    char path[PROXY_PATH_MAX];
    size_t plen = strlen(path_in);
    while (plen > 1 && path_in[plen - 1] == '/')
        plen--;
    if (plen >= sizeof(path))
        return -ENAMETOOLONG;
    memcpy(path, path_in, plen);
    path[plen] = 0;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dir = dirfd;
    if (slash) {
        char parent[PROXY_PATH_MAX];
        size_t n = (size_t)(slash - path);
        memcpy(parent, path, n);
        parent[n] = 0;
        dir = openat(dirfd, n ? parent : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
            return -errno;
    } else if (dirfd == AT_FDCWD) { /* no fd to read the link of */
        dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
            return -errno;
    }
    char link[64], resolved[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", dir);
    ssize_t n = readlink(link, resolved, sizeof(resolved) - 1);
    if (dir != dirfd)
        close(dir);
    if (n <= 0 || resolved[0] != '/')
        return -ENOENT;
    resolved[n] = 0;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return -EINVAL; /* a directory by a relative name: not handled */
    int w = snprintf(out, len, "%s/%s", strcmp(resolved, "/") ? resolved : "",
                     base);
    return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

static struct proxy_preserve *journal_of(struct proxy_process *p)
{
    return p->totals ? p->totals->preserve : NULL;
}

/* Inside the private /tmp hvrun made for the run, which goes away with
 * it (a --tmp DIR stays, so what the run does there is journaled). */
static bool in_private_tmp(const struct proxy_process *p, const char *abs)
{
    size_t n = p->fs.tmp_top[0] ? strlen(p->fs.tmp_host) : 0;
    return n && strncmp(abs, p->fs.tmp_host, n) == 0 &&
           (abs[n] == '/' || abs[n] == '\0');
}

/* On a filesystem the kernel makes up (devpts, proc, sysfs and the like):
 * its objects come and go with what they describe (a pty's /dev/pts/N
 * with the pty), hold no content to keep and cannot be made again by
 * name, so there is nothing to journal or put back. */
static bool on_kernel_fs(const char *abs)
{
    int fd = open(abs, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct statfs sf;
    bool kernel = fd >= 0 && fstatfs(fd, &sf) == 0 &&
                  (sf.f_type == DEVPTS_SUPER_MAGIC ||
                   sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC ||
                   sf.f_type == CGROUP_SUPER_MAGIC ||
                   sf.f_type == CGROUP2_SUPER_MAGIC ||
                   sf.f_type == DEBUGFS_MAGIC || sf.f_type == TRACEFS_MAGIC ||
                   sf.f_type == SECURITYFS_MAGIC ||
                   sf.f_type == BPF_FS_MAGIC || sf.f_type == PSTOREFS_MAGIC ||
                   sf.f_type == EFIVARFS_MAGIC);
    if (fd >= 0)
        close(fd);
    return kernel;
}

/* abs of (dirfd, path) and what it names now (not followed); false when
 * it is not to be journaled or names nothing (*exists false). */
static bool name_of(struct proxy_process *p, int dirfd, const char *path,
                    char *abs, struct stat *st, bool *exists)
{
    *exists = false;
    if (proxy_abs_path(dirfd, path, abs, PROXY_PATH_MAX) < 0 ||
        in_private_tmp(p, abs))
        return false;
    *exists = lstat(abs, st) == 0;
    return !(*exists && on_kernel_fs(abs));
}

static void record(struct proxy_process *p, struct proxy_preserve *pr,
                   const struct journal_head *h, const char *path,
                   const char *path2)
{
    struct journal_head full = *h;
    full.magic = JOURNAL_MAGIC;
    full.len = (uint32_t)strlen(path);
    full.len2 = path2 ? (uint32_t)strlen(path2) : 0;
    int rc = journal_append(pr->log_fd, &full, path, path2);
    if (rc < 0)
        proxy_log(p, 1, "--verify: journal: %s", strerror(-rc));
}

/* ---- keeping content ------------------------------------------------------- */

static int copy_fd_into(int src, int dst, off_t size)
{
    off_t done = 0;
    while (done < size) {
        ssize_t n = sendfile(dst, src, NULL, (size_t)(size - done));
        if (n <= 0)
            break;
        done += n;
    }
    return done == size ? 0 : -EIO;
}

/* A new copy.N holding the content of the object st at abs (a regular
 * file's bytes, a symlink's target). Its number, or 0. */
static uint32_t keep_content(struct proxy_process *p,
                             struct proxy_preserve *pr, const char *abs,
                             const struct stat *st)
{
    char name[32];
    uint32_t n = pr->next_copy;
    snprintf(name, sizeof(name), "copy.%u", n);
    if (S_ISREG(st->st_mode) && st->st_size > PRESERVE_MAX_FILE) {
        proxy_log(p, 1, "--verify: %s is too big to keep; it is not put "
                        "back after the run", abs);
        return 0;
    }
    int dst = openat(pr->dir_fd, name,
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600);
    if (dst < 0)
        return 0;
    int rc = -EIO;
    if (S_ISLNK(st->st_mode)) {
        char target[PROXY_PATH_MAX];
        ssize_t len = readlink(abs, target, sizeof(target));
        rc = len >= 0 && write(dst, target, (size_t)len) == len ? 0 : -EIO;
    } else {
        int src = open(abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat now;
        if (src >= 0 && fstat(src, &now) == 0 && now.st_ino == st->st_ino &&
            now.st_dev == st->st_dev)
            rc = copy_fd_into(src, dst, now.st_size);
        if (src >= 0)
            close(src);
    }
    close(dst);
    if (rc < 0) {
        unlinkat(pr->dir_fd, name, 0);
        proxy_log(p, 1, "--verify: cannot keep %s; it is not put back after "
                        "the run", abs);
        return 0;
    }
    pr->next_copy++;
    return n;
}

/* The slot of an object that existed before the run, its content kept
 * (once); NULL for objects the run made. */
static struct inode_slot *existing(struct proxy_process *p,
                                   struct proxy_preserve *pr, const char *abs,
                                   const struct stat *st)
{
    struct inode_slot *s = slot_get(pr, st->st_dev, st->st_ino);
    if (!s || s->created)
        return NULL;
    if (!s->saved) {
        s->saved = true;
        s->mode = st->st_mode;
        if (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode))
            s->copy = keep_content(p, pr, abs, st);
    }
    return s;
}

static void record_saved(struct proxy_process *p, struct proxy_preserve *pr,
                         const char *abs, const struct inode_slot *s,
                         const struct stat *st, const char *other_name)
{
    struct journal_head h = {.kind = JOURNAL_SAVED, .mode = s->mode,
                             .copy = s->copy, .dev = s->dev, .ino = s->ino};
    if (S_ISREG(st->st_mode) && st->st_nlink > 1)
        h.flags = JOURNAL_F_LINKED;
    record(p, pr, &h, abs, other_name);
}

/*
 * Another name of the multiply-linked file st (whose name abs goes away)
 * in the same directory, into other; false if there is none. Undo links
 * the name back to it, so the file stays one file.
 */
static bool other_link(const char *abs, const struct stat *st, char *other)
{
    const char *slash = strrchr(abs, '/');
    char dir[PROXY_PATH_MAX];
    size_t n = (size_t)(slash - abs);
    memcpy(dir, abs, n);
    dir[n] = 0;
    int fd = open(n ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    bool found = false;
    struct dirent *e;
    struct stat est;
    while (!found && (e = readdir(d)))
        found = e->d_ino == st->st_ino && strcmp(e->d_name, slash + 1) &&
                fstatat(fd, e->d_name, &est, AT_SYMLINK_NOFOLLOW) == 0 &&
                est.st_dev == st->st_dev && est.st_ino == st->st_ino &&
                (size_t)snprintf(other, PROXY_PATH_MAX, "%s/%s", dir,
                                 e->d_name) < PROXY_PATH_MAX;
    closedir(d);
    return found;
}

/* ---- the hooks ---------------------------------------------------------------- */

static void preserve_before(struct proxy_process *p, int host_dirfd,
                            const char *host_path, bool follow)
{
    struct proxy_preserve *pr = journal_of(p);
    char abs[PROXY_PATH_MAX];
    struct stat st;
    bool exists;
    if (!pr || !name_of(p, host_dirfd, host_path, abs, &st, &exists) ||
        !exists)
        return;
    if (follow && S_ISLNK(st.st_mode)) { /* the call changes its target */
        char real[PATH_MAX];
        if (!realpath(abs, real) || strlen(real) >= sizeof(abs) ||
            in_private_tmp(p, real) || lstat(real, &st) < 0 ||
            on_kernel_fs(real))
            return;
        strcpy(abs, real);
    }
    struct inode_slot *s = slot_find(pr, st.st_dev, st.st_ino);
    if (s && (s->created || s->saved))
        return; /* made by the run, or its content already kept */
    if ((s = existing(p, pr, abs, &st)))
        record_saved(p, pr, abs, s, &st, NULL);
}

static void preserve_fd(struct proxy_process *p, int host_fd)
{
    if (!journal_of(p))
        return;
    char link[64], abs[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, abs, sizeof(abs) - 1);
    if (n <= 0 || abs[0] != '/')
        return;
    abs[n] = 0;
    struct stat by_fd, by_name;
    if (fstat(host_fd, &by_fd) < 0 || lstat(abs, &by_name) < 0 ||
        by_fd.st_dev != by_name.st_dev || by_fd.st_ino != by_name.st_ino)
        return; /* no name reaches it (unlinked): no name to put back */
    proxy_preserve_before(p, AT_FDCWD, abs, false);
}

static void preserve_name_gone(struct proxy_process *p, int host_dirfd,
                               const char *host_path)
{
    struct proxy_preserve *pr = journal_of(p);
    char abs[PROXY_PATH_MAX];
    struct stat st;
    bool exists;
    if (!pr || !name_of(p, host_dirfd, host_path, abs, &st, &exists) ||
        !exists)
        return;
    struct inode_slot *s = existing(p, pr, abs, &st);
    char other[PROXY_PATH_MAX];
    bool linked = S_ISREG(st.st_mode) && st.st_nlink > 1 &&
                  other_link(abs, &st, other);
    if (s)
        record_saved(p, pr, abs, s, &st, linked ? other : NULL);
}

static void record_created(struct proxy_process *p, struct proxy_preserve *pr,
                           const char *abs, const struct stat *st)
{
    struct inode_slot *s = slot_find(pr, st->st_dev, st->st_ino);
    /* A second name of an object that existed (link) is a new name, not a
     * new object; one with a single link (linkat of an O_TMPFILE file) or
     * one the run made is the run's. */
    bool existed = S_ISREG(st->st_mode) && st->st_nlink > 1 &&
                   !(s && s->created);
    if (!existed) {
        s = slot_get(pr, st->st_dev, st->st_ino);
        if (s) {
            s->created = true;
            s->saved = false;
            s->copy = 0;
        }
    }
    struct journal_head h = {.kind = JOURNAL_CREATED, .mode = st->st_mode,
                             .dev = st->st_dev, .ino = st->st_ino};
    record(p, pr, &h, abs, NULL);
}

static void preserve_created(struct proxy_process *p, int host_dirfd,
                             const char *host_path)
{
    struct proxy_preserve *pr = journal_of(p);
    char abs[PROXY_PATH_MAX];
    struct stat st;
    bool exists;
    if (pr && name_of(p, host_dirfd, host_path, abs, &st, &exists) && exists)
        record_created(p, pr, abs, &st);
}

static void preserve_created_fd(struct proxy_process *p, int host_fd)
{
    struct proxy_preserve *pr = journal_of(p);
    if (!pr)
        return;
    char link[64], abs[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, abs, sizeof(abs) - 1);
    struct stat st;
    if (n <= 0 || abs[0] != '/' || fstat(host_fd, &st) < 0)
        return;
    abs[n] = 0;
    if (!in_private_tmp(p, abs) && !on_kernel_fs(abs))
        record_created(p, pr, abs, &st);
}

/* One side of a rename: its absolute name, whether that lies in the
 * private /tmp, what it names now. False when it cannot be named. */
static bool rename_side(struct proxy_process *p, int dirfd, const char *path,
                        char *abs, bool *in_tmp, struct stat *st,
                        bool *exists)
{
    if (proxy_abs_path(dirfd, path, abs, PROXY_PATH_MAX) < 0)
        return false;
    *in_tmp = in_private_tmp(p, abs);
    *exists = lstat(abs, st) == 0;
    return !(*exists && on_kernel_fs(abs));
}

/*
 * A rename inside the journaled tree is a RENAMED record (undone by
 * renaming back, so the object keeps its identity). Across the private
 * /tmp's edge it is a name going away (into /tmp) or a name made (out of
 * it); with RENAME_EXCHANGE both at once.
 */
static void preserve_rename_before(struct proxy_process *p, int from_dirfd,
                                   const char *from, int to_dirfd,
                                   const char *to, unsigned int flags,
                                   struct proxy_preserve_rename *r)
{
    memset(r, 0, sizeof(*r));
    bool from_tmp, to_tmp, from_exists, to_exists;
    if (!journal_of(p) ||
        !rename_side(p, from_dirfd, from, r->from, &from_tmp, &r->from_st,
                     &from_exists) ||
        !rename_side(p, to_dirfd, to, r->to, &to_tmp, &r->to_st, &to_exists) ||
        !from_exists || (from_tmp && to_tmp))
        return;
    if (to_exists && r->to_st.st_dev == r->from_st.st_dev &&
        r->to_st.st_ino == r->from_st.st_ino)
        return; /* two names of one file: rename(2) does nothing */
    r->exchange = (flags & RENAME_EXCHANGE) != 0;
    if (r->exchange && !to_exists)
        return; /* fails with ENOENT */
    if (from_tmp || to_tmp) {
        if (!from_tmp)
            proxy_preserve_name_gone(p, AT_FDCWD, r->from);
        if (!to_tmp && to_exists)
            proxy_preserve_name_gone(p, AT_FDCWD, r->to);
        r->created_from = r->exchange && !from_tmp;
        r->created_to = !to_tmp;
        return;
    }
    if (to_exists && !r->exchange)
        proxy_preserve_name_gone(p, AT_FDCWD, r->to); /* replaced */
    r->renamed = true;
}

static void preserve_renamed(struct proxy_process *p,
                             const struct proxy_preserve_rename *r)
{
    struct proxy_preserve *pr = journal_of(p);
    if (!pr)
        return;
    if (r->created_from)
        proxy_preserve_created(p, AT_FDCWD, r->from);
    if (r->created_to)
        proxy_preserve_created(p, AT_FDCWD, r->to);
    if (!r->renamed)
        return;
    struct journal_head h = {.kind = JOURNAL_RENAMED,
                             .mode = r->from_st.st_mode,
                             .dev = r->from_st.st_dev,
                             .ino = r->from_st.st_ino};
    if (r->exchange) {
        h.flags = JOURNAL_F_EXCHANGE;
        h.dev2 = r->to_st.st_dev;
        h.ino2 = r->to_st.st_ino;
    }
    record(p, pr, &h, r->from, r->to);
}

/* The journal and the kept copies are hvrun's: written with its own ids
 * whatever the guest's (kernel/fscred.c). */
void proxy_preserve_before(struct proxy_process *p, int host_dirfd,
                           const char *host_path, bool follow)
{
    const struct proxy_process *was = proxy_fscred_suspend();
    preserve_before(p, host_dirfd, host_path, follow);
    proxy_fscred_resume(was);
}

void proxy_preserve_fd(struct proxy_process *p, int host_fd)
{
    const struct proxy_process *was = proxy_fscred_suspend();
    preserve_fd(p, host_fd);
    proxy_fscred_resume(was);
}

void proxy_preserve_name_gone(struct proxy_process *p, int host_dirfd,
                              const char *host_path)
{
    const struct proxy_process *was = proxy_fscred_suspend();
    preserve_name_gone(p, host_dirfd, host_path);
    proxy_fscred_resume(was);
}

void proxy_preserve_created(struct proxy_process *p, int host_dirfd,
                            const char *host_path)
{
    const struct proxy_process *was = proxy_fscred_suspend();
    preserve_created(p, host_dirfd, host_path);
    proxy_fscred_resume(was);
}

void proxy_preserve_created_fd(struct proxy_process *p, int host_fd)
{
    const struct proxy_process *was = proxy_fscred_suspend();
    preserve_created_fd(p, host_fd);
    proxy_fscred_resume(was);
}

void proxy_preserve_rename_before(struct proxy_process *p, int from_dirfd,
                                  const char *from, int to_dirfd,
                                  const char *to, unsigned int flags,
                                  struct proxy_preserve_rename *r)
{
    const struct proxy_process *was = proxy_fscred_suspend();
    preserve_rename_before(p, from_dirfd, from, to_dirfd, to, flags, r);
    proxy_fscred_resume(was);
}

void proxy_preserve_renamed(struct proxy_process *p,
                            const struct proxy_preserve_rename *r)
{
    const struct proxy_process *was = proxy_fscred_suspend();
    preserve_renamed(p, r);
    proxy_fscred_resume(was);
}
