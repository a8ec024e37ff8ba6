/*
 * undo.c - `--verify` puts the files back as they were before a run, by
 * replaying the run's journal (syscall-proxy/fs/journal.h) backwards.
 *
 * Replayed from its last record to its first, each record is undone in
 * the tree as it was right after the change it records, so its names mean
 * what they meant then: a name the run made is removed (only if it still
 * names the object the run made there), a rename is renamed back (a
 * directory that existed goes back to its old name, with what is in it),
 * and an existing object the run changed gets its content and mode back
 * in place (the same inode: other hard links see it too), or, if its name
 * went away, the name comes back, as a link to a name of the object that
 * still holds it when one is known, else as a new object made from the
 * kept copy.
 *
 * Nothing is reached by re-resolving a path: every name is looked up
 * from "/" one component at a time with O_NOFOLLOW (a symlink the guest
 * planted where a directory was stops the walk), and removal, renaming
 * and writing use the directory fd found that way. An object is
 * identified by (device, inode) before anything is done to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "journal.h"
#include "proxy.h"

/* A copy of s fit to print on one line (control bytes as \ooo). */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    for (; *s && o + 5 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f || c == '\\')
            o += (size_t)snprintf(buf + o, len - o, "\\%03o", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = 0;
    return buf;
}

static void problem(int *problems, const char *what, const char *path,
                    int err)
{
    char buf[1024];
    cli_error("--verify: %s %s%s%s", what, shown(path, buf, sizeof(buf)),
              err ? ": " : "", err ? strerror(err) : "");
    (*problems)++;
}

/*
 * The directory holding abs, reached from "/" without following any
 * symlink; *base is abs's last component. An fd, or -errno.
 */
static int open_parent(const char *abs, char *buf, size_t len,
                       const char **base)
{
    size_t n = strlen(abs);
    if (abs[0] != '/' || n >= len)
        return -EINVAL;
    memcpy(buf, abs, n + 1);
    char *last = strrchr(buf, '/');
    *last = 0;
    *base = last + 1;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
        return -EINVAL;
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (last == buf)
        return fd; /* a name in "/" */
    char *save = NULL;
    for (char *c = strtok_r(buf + 1, "/", &save); fd >= 0 && c;
         c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, ".") || !strcmp(c, "..")) {
            close(fd);
            return -EINVAL;
        }
        int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        close(fd);
        fd = next < 0 ? -err : next;
    }
    return fd;
}

/* What (dir, name) names, not followed: 1 that object, 0 nothing, -errno. */
static int name_stat(int dir, const char *name, struct stat *st)
{
    if (fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW) == 0)
        return 1;
    return errno == ENOENT ? 0 : -errno;
}

static bool is_object(const struct stat *st, uint64_t dev, uint64_t ino)
{
    return st->st_dev == dev && st->st_ino == ino;
}

/* ---- the replay's memory --------------------------------------------------- */

/* An object that existed: where a name of it is now, after the replay
 * put it back (its device and inode there: new if it was made anew). */
struct known {
    uint64_t dev, ino;         /* as the journal names it */
    uint64_t now_dev, now_ino;
    char *path;
    bool content_back;         /* content and mode put back */
};

struct replay {
    int journal_fd;
    struct known *known;
    size_t n_known, cap_known;
    const struct journal_entry *e; /* the whole journal */
    size_t n;
    int problems;
};

static struct known *known_find(struct replay *r, uint64_t dev, uint64_t ino)
{
    for (size_t i = 0; i < r->n_known; i++)
        if (r->known[i].dev == dev && r->known[i].ino == ino)
            return &r->known[i];
    return NULL;
}

static struct known *known_put(struct replay *r, uint64_t dev, uint64_t ino,
                               const char *path, const struct stat *now)
{
    struct known *k = known_find(r, dev, ino);
    if (!k) {
        if (r->n_known == r->cap_known) {
            size_t cap = r->cap_known ? r->cap_known * 2 : 32;
            struct known *g = realloc(r->known, cap * sizeof(*g));
            if (!g)
                return NULL;
            r->known = g;
            r->cap_known = cap;
        }
        k = &r->known[r->n_known++];
        *k = (struct known){.dev = dev, .ino = ino};
    }
    char *copy = strdup(path);
    if (copy) {
        free(k->path);
        k->path = copy;
    }
    k->now_dev = now->st_dev;
    k->now_ino = now->st_ino;
    return k;
}

/* A directory the run made (it may have taken away its own write
 * permission, which removing what is in it needs). */
static bool made_by_run(const struct replay *r, const struct stat *st)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].h.kind == JOURNAL_CREATED &&
            is_object(st, r->e[i].h.dev, r->e[i].h.ino))
            return true;
    return false;
}

/* ---- CREATED: remove the name the run made --------------------------------- */

static void undo_created(struct replay *r, const struct journal_entry *e)
{
    char buf[PROXY_PATH_MAX];
    const char *base;
    int dir = open_parent(e->path, buf, sizeof(buf), &base);
    if (dir < 0)
        return; /* its directory is gone or moved: nothing of it is left */
    struct stat st, dst;
    if (name_stat(dir, base, &st) == 1 && is_object(&st, e->h.dev, e->h.ino)) {
        int flags = S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0;
        int rc = unlinkat(dir, base, flags);
        if (rc < 0 && (errno == EACCES || errno == EPERM) &&
            fstat(dir, &dst) == 0 && made_by_run(r, &dst)) {
            char self[64];
            snprintf(self, sizeof(self), "/proc/self/fd/%d", dir);
            if (chmod(self, (dst.st_mode & 07777) | S_IRWXU) == 0)
                rc = unlinkat(dir, base, flags);
        }
        if (rc < 0 && errno == ENOTEMPTY)
            problem(&r->problems,
                    "left (it holds files the run did not make):", e->path, 0);
        else if (rc < 0)
            problem(&r->problems, "cannot remove", e->path, errno);
    }
    close(dir);
}

/* ---- RENAMED: rename back ------------------------------------------------------ */

static void undo_renamed(struct replay *r, const struct journal_entry *e)
{
    char fbuf[PROXY_PATH_MAX], tbuf[PROXY_PATH_MAX];
    const char *fbase, *tbase;
    int fdir = open_parent(e->path, fbuf, sizeof(fbuf), &fbase);
    int tdir = open_parent(e->path2, tbuf, sizeof(tbuf), &tbase);
    struct stat at_to, at_from;
    if (fdir < 0 || tdir < 0 || name_stat(tdir, tbase, &at_to) != 1 ||
        !is_object(&at_to, e->h.dev, e->h.ino))
        goto out; /* moved or removed later, and put back by its own record */
    int has_from = name_stat(fdir, fbase, &at_from);
    if (e->h.flags & JOURNAL_F_EXCHANGE) {
        if (has_from == 1 && is_object(&at_from, e->h.dev2, e->h.ino2) &&
            renameat2(tdir, tbase, fdir, fbase, RENAME_EXCHANGE) < 0)
            problem(&r->problems, "cannot exchange back", e->path, errno);
        goto out;
    }
    if (has_from != 0) {
        problem(&r->problems, "cannot rename back (the name is taken)",
                e->path, 0);
        goto out;
    }
    if (renameat2(tdir, tbase, fdir, fbase, RENAME_NOREPLACE) < 0 &&
        (errno != EINVAL || renameat(tdir, tbase, fdir, fbase) < 0))
        problem(&r->problems, "cannot rename back", e->path, errno);
out:
    if (fdir >= 0)
        close(fdir);
    if (tdir >= 0)
        close(tdir);
}

/* ---- SAVED: the object's content, or its name, back ------------------------ */

static int open_copy(struct replay *r, uint32_t copy)
{
    char name[32];
    snprintf(name, sizeof(name), "copy.%u", copy);
    int fd = openat(r->journal_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

static int copy_all(int from, int to)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(from, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return -errno;
            off += w;
        }
    }
}

/* The kept content into the open regular file fd (truncated first) and
 * its mode. 0 or -errno. */
static int fill(struct replay *r, int fd, const struct journal_entry *e)
{
    int rc = 0;
    if (e->h.copy) {
        int src = open_copy(r, e->h.copy);
        rc = src;
        if (src >= 0) {
            rc = ftruncate(fd, 0) < 0 ? -errno : copy_all(src, fd);
            close(src);
        }
    }
    if (rc == 0 && fchmod(fd, e->h.mode & 07777) < 0)
        rc = -errno;
    return rc;
}

/* The object is still at its name: content and mode back, in place. */
static void put_back_in_place(struct replay *r, int dir, const char *base,
                              const struct journal_entry *e,
                              const struct stat *st)
{
    struct known *k = known_put(r, e->h.dev, e->h.ino, e->path, st);
    if (k && k->content_back)
        return;
    int rc = 0;
    if (S_ISDIR(st->st_mode)) {
        if (fchmodat(dir, base, e->h.mode & 07777, 0) < 0)
            rc = -errno;
    } else if (S_ISREG(st->st_mode)) {
        int fd = openat(dir, base, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
                                       O_CLOEXEC);
        if (fd < 0 && errno == EACCES &&
            fchmodat(dir, base, (st->st_mode & 07777) | S_IWUSR, 0) == 0)
            fd = openat(dir, base, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
                                       O_CLOEXEC);
        struct stat now;
        if (fd < 0)
            rc = -errno;
        else if (fstat(fd, &now) < 0 || !is_object(&now, st->st_dev,
                                                    st->st_ino))
            rc = -ESTALE;
        else
            rc = fill(r, fd, e);
        if (fd >= 0)
            close(fd);
    }
    if (rc < 0)
        problem(&r->problems, "cannot put back", e->path, -rc);
    else if (k)
        k->content_back = true;
}

/* A link from (dir, base) to the object (dev, ino) at path, if it is
 * there. */
static bool link_from(const char *path, uint64_t dev, uint64_t ino, int dir,
                      const char *base)
{
    char buf[PROXY_PATH_MAX];
    const char *kbase;
    int kdir = open_parent(path, buf, sizeof(buf), &kbase);
    struct stat st;
    bool ok = kdir >= 0 && name_stat(kdir, kbase, &st) == 1 &&
              is_object(&st, dev, ino) &&
              linkat(kdir, kbase, dir, base, 0) == 0;
    if (kdir >= 0)
        close(kdir);
    return ok;
}

/* A link to where the object is known to be now (put back earlier in the
 * replay, or the other name the journal gives); false if it is nowhere. */
static bool relink(struct replay *r, int dir, const char *base,
                   const struct journal_entry *e)
{
    if (!S_ISREG(e->h.mode))
        return false;
    struct known *k = known_find(r, e->h.dev, e->h.ino);
    if (k && k->path && link_from(k->path, k->now_dev, k->now_ino, dir, base))
        return true;
    const char *from = e->path2[0] && link_from(e->path2, e->h.dev, e->h.ino,
                                                dir, base)
                           ? e->path2
                           : NULL;
    /* Still linked elsewhere: some name in the journal may hold it now. */
    for (size_t i = 0; !from && (e->h.flags & JOURNAL_F_LINKED) && i < r->n;
         i++) {
        const struct journal_entry *o = &r->e[i];
        if (o != e && o->h.dev == e->h.dev && o->h.ino == e->h.ino &&
            link_from(o->path, e->h.dev, e->h.ino, dir, base))
            from = o->path;
        else if (o->h.kind == JOURNAL_RENAMED && o->h.dev == e->h.dev &&
                 o->h.ino == e->h.ino &&
                 link_from(o->path2, e->h.dev, e->h.ino, dir, base))
            from = o->path2;
    }
    if (!from)
        return false;
    struct stat st;
    if (name_stat(dir, base, &st) == 1 &&
        (k = known_put(r, e->h.dev, e->h.ino, e->path, &st)) &&
        !k->content_back) {
        put_back_in_place(r, dir, base, e, &st); /* the object's content */
    }
    return true;
}

/* The name is gone: make the object anew from what was kept. 0/-errno. */
static int remake(struct replay *r, int dir, const char *base,
                  const struct journal_entry *e)
{
    mode_t perm = e->h.mode & 07777;
    if (S_ISDIR(e->h.mode))
        return mkdirat(dir, base, perm) < 0 ? -errno : 0;
    if (S_ISFIFO(e->h.mode))
        return mkfifoat(dir, base, perm) < 0 ? -errno : 0;
    if (!e->h.copy || !(S_ISREG(e->h.mode) || S_ISLNK(e->h.mode)))
        return -ENODATA; /* not kept */
    if (S_ISLNK(e->h.mode)) {
        char target[PROXY_PATH_MAX];
        int src = open_copy(r, e->h.copy);
        ssize_t n = src < 0 ? -1 : read(src, target, sizeof(target) - 1);
        if (src >= 0)
            close(src);
        if (n < 0)
            return -EIO;
        target[n] = 0;
        return symlinkat(target, dir, base) < 0 ? -errno : 0;
    }
    int fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                   O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = fill(r, fd, e);
    close(fd);
    return rc;
}

static void undo_saved(struct replay *r, const struct journal_entry *e)
{
    char buf[PROXY_PATH_MAX];
    const char *base;
    int dir = open_parent(e->path, buf, sizeof(buf), &base);
    if (dir < 0) {
        problem(&r->problems, "cannot put back", e->path, -dir);
        return;
    }
    struct stat st;
    int has = name_stat(dir, base, &st);
    struct known *k = known_find(r, e->h.dev, e->h.ino);
    if (has == 1 && (is_object(&st, e->h.dev, e->h.ino) ||
                     (k && is_object(&st, k->now_dev, k->now_ino)))) {
        put_back_in_place(r, dir, base, e, &st);
    } else if (has == 1) {
        problem(&r->problems, "cannot put back (something else is there)",
                e->path, 0);
    } else if (has < 0) {
        problem(&r->problems, "cannot put back", e->path, -has);
    } else if (relink(r, dir, base, e)) {
        /* one more name of a file already back: its link count again */
    } else {
        int rc = remake(r, dir, base, e);
        if (rc < 0)
            problem(&r->problems, "cannot put back", e->path, -rc);
        else if (name_stat(dir, base, &st) == 1) {
            k = known_put(r, e->h.dev, e->h.ino, e->path, &st);
            if (k)
                k->content_back = true;
        }
    }
    close(dir);
}

int cli_verify_undo(const char *journal_dir)
{
    struct replay r = {0};
    r.journal_fd =
        open(journal_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (r.journal_fd < 0) {
        problem(&r.problems, "cannot read the journal", journal_dir, errno);
        return r.problems;
    }
    struct journal_entry *e;
    size_t n;
    int rc = journal_load(r.journal_fd, &e, &n);
    if (rc < 0)
        problem(&r.problems, "cannot read the journal", journal_dir, -rc);
    r.e = e;
    r.n = n;
    for (size_t i = n; i-- > 0;) {
        if (e[i].h.kind == JOURNAL_CREATED)
            undo_created(&r, &e[i]);
        else if (e[i].h.kind == JOURNAL_RENAMED)
            undo_renamed(&r, &e[i]);
        else if (e[i].h.kind == JOURNAL_SAVED)
            undo_saved(&r, &e[i]);
    }
    for (size_t i = 0; i < r.n_known; i++)
        free(r.known[i].path);
    free(r.known);
    journal_free(e, n);
    close(r.journal_fd);
    return r.problems;
}
