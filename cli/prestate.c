/*
 * prestate.c - what the paths a recorded run changed were before it ran,
 * kept in the recording and put in place (in the replay's private tree,
 * isolate.c) before a replay starts, so the replay begins where the
 * recorded run began: a file the run opened read-write has its old bytes,
 * a file or directory the run made is not there yet, one it removed or
 * renamed away is back, wherever the host's files have got to since.
 *
 * The state comes from the run's journal (syscall-proxy/fs/journal.h,
 * the one --verify undoes), read forwards: the first record naming a
 * path says what it was. A name the run made (CREATED, or the target of
 * a rename that replaced nothing) was absent; a name of an existing
 * object (SAVED, or the source of a rename) held that object, whose
 * content is the journal's kept copy, or, for a rename's source never
 * changed in place, the object as it is at its name at the end of the run.
 * A renamed directory comes back empty (what was in it is the host's).
 *
 * The file hvrun keeps between record and replay: one frame per path,
 * u64 length then: u8 kind (A absent, F file, L symlink, D directory),
 * u32 st_mode, u32 path length, the path, the bytes (a file's content,
 * a symlink's target).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "journal.h"

#define OVERLAYFS_MAGIC 0x794c7630
#define MAX_KEPT (256LL << 20)

enum { PRE_ABSENT = 'A', PRE_FILE = 'F', PRE_LINK = 'L', PRE_DIR = 'D' };

static bool decided_already(char **seen, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(seen[i], path))
            return true;
    return false;
}

static int read_whole(int dirfd, const char *name, char **out, size_t *len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size > MAX_KEPT) {
        if (fd >= 0)
            close(fd);
        return -EIO;
    }
    char *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!b || got != (size_t)st.st_size) {
        free(b);
        return -EIO;
    }
    *out = b;
    *len = got;
    return 0;
}

static int put_frame(int fd, char kind, uint32_t mode, const char *path,
                     const char *data, size_t len)
{
    uint32_t plen = (uint32_t)strlen(path);
    uint64_t total = 1 + 4 + 4 + plen + len;
    char head[17];
    memcpy(head, &total, 8);
    head[8] = kind;
    memcpy(head + 9, &mode, 4);
    memcpy(head + 13, &plen, 4);
    if (cli_write_all(fd, head, sizeof(head)) < 0 ||
        cli_write_all(fd, path, plen) < 0 ||
        (len && cli_write_all(fd, data, len) < 0))
        return -EIO;
    return 0;
}

/* The content of the object (dev, ino) before the run: its first kept
 * copy, else the object where the renames in e from index i on took it. */
static int content_of(const struct journal_entry *e, size_t n, size_t i,
                      int journal_fd, char **data, size_t *len)
{
    uint64_t dev = e[i].h.dev, ino = e[i].h.ino;
    for (size_t k = 0; k < n; k++)
        if (e[k].h.kind == JOURNAL_SAVED && e[k].h.dev == dev &&
            e[k].h.ino == ino && e[k].h.copy) {
            char name[32];
            snprintf(name, sizeof(name), "copy.%u", e[k].h.copy);
            return read_whole(journal_fd, name, data, len);
        }
    const char *at = e[i].path2;
    for (size_t k = i + 1; k < n; k++)
        if (e[k].h.kind == JOURNAL_RENAMED && e[k].h.dev == dev &&
            e[k].h.ino == ino)
            at = e[k].path2;
    struct stat st;
    if (lstat(at, &st) < 0 || st.st_dev != dev || st.st_ino != ino)
        return -ENOENT;
    if (S_ISLNK(st.st_mode)) {
        char *b = malloc(4096);
        ssize_t l = b ? readlink(at, b, 4096) : -1;
        if (l < 0) {
            free(b);
            return -EIO;
        }
        *data = b;
        *len = (size_t)l;
        return 0;
    }
    return read_whole(AT_FDCWD, at, data, len);
}

/* What one existing object named path was (mode m, copy c in e[i]). */
static int put_existing(int out, const struct journal_entry *e, size_t n,
                        size_t i, int journal_fd, const char *path,
                        uint32_t mode, bool from_copy)
{
    if (S_ISDIR(mode))
        return put_frame(out, PRE_DIR, mode, path, NULL, 0);
    if (!S_ISREG(mode) && !S_ISLNK(mode))
        return 0; /* a device, FIFO or socket: the host's */
    char *data = NULL;
    size_t len = 0;
    int rc;
    if (from_copy) {
        char name[32];
        snprintf(name, sizeof(name), "copy.%u", e[i].h.copy);
        rc = e[i].h.copy ? read_whole(journal_fd, name, &data, &len) : -EIO;
    } else {
        rc = content_of(e, n, i, journal_fd, &data, &len);
    }
    if (rc < 0)
        return 0; /* not kept (too big): the host's, as the run left it */
    rc = put_frame(out, S_ISLNK(mode) ? PRE_LINK : PRE_FILE, mode, path,
                   data, len);
    free(data);
    return rc;
}

int cli_prestate_save(const char *journal_dir, const char *out_path)
{
    int jfd = open(journal_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (jfd < 0)
        return -errno;
    struct journal_entry *e = NULL;
    size_t n = 0;
    int rc = journal_load(jfd, &e, &n);
    int out = rc < 0 ? -1
                     : open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                            0600);
    char **seen = calloc(2 * n + 1, sizeof(char *));
    size_t nseen = 0;
    if (rc == 0 && (out < 0 || !seen))
        rc = out < 0 ? -errno : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct journal_entry *x = &e[i];
        bool exchange = x->h.flags & JOURNAL_F_EXCHANGE;
        if (!decided_already(seen, nseen, x->path)) {
            seen[nseen++] = x->path;
            if (x->h.kind == JOURNAL_CREATED)
                rc = put_frame(out, PRE_ABSENT, 0, x->path, NULL, 0);
            else
                rc = put_existing(out, e, n, i, jfd, x->path, x->h.mode,
                                  x->h.kind == JOURNAL_SAVED);
        }
        if (rc == 0 && x->h.kind == JOURNAL_RENAMED && x->path2[0] &&
            !decided_already(seen, nseen, x->path2)) {
            seen[nseen++] = x->path2;
            if (!exchange) {
                rc = put_frame(out, PRE_ABSENT, 0, x->path2, NULL, 0);
            } else { /* the object that came back from path2 */
                struct journal_entry other = *x;
                other.h.dev = x->h.dev2;
                other.h.ino = x->h.ino2;
                other.path2 = x->path;
                struct stat st;
                uint32_t mode = lstat(x->path, &st) == 0 ? st.st_mode : 0;
                rc = put_existing(out, &other, 1, 0, jfd, x->path2, mode,
                                  false);
            }
        }
    }
    free(seen);
    journal_free(e, n);
    if (out >= 0)
        close(out);
    close(jfd);
    return rc;
}

/* ---- putting it in place ------------------------------------------------- */

static int remove_one(const char *p, const struct stat *st, int flag,
                      struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(p) : unlink(p)) < 0 && errno != ENOENT
               ? -1
               : 0;
}

/* Whatever is at path, gone (only inside the replay's overlays). */
static int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISDIR(st.st_mode))
        return unlink(path) < 0 ? -errno : 0;
    return nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}

/* The directory holding path is on one of the replay's overlays (what
 * is done there never reaches the host): made if missing, then true. */
/* Where the directories made for a replay are noted, as present before
 * the run (so that what the replay knows of them is that tree's), or -1. */
static int made_log = -1;

static void made(const char *dir)
{
    if (made_log >= 0)
        (void)put_frame(made_log, PRE_DIR, S_IFDIR | 0755, dir, NULL, 0);
}

static bool overlaid_parent(const char *path, bool make)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || dir[0] != '/')
        return false;
    slash[slash == dir] = 0; /* "/x": "/" */
    char probe[4096];
    snprintf(probe, sizeof(probe), "%s", dir);
    struct stat st;
    while (lstat(probe, &st) < 0) { /* the nearest that exists */
        char *up = strrchr(probe, '/');
        if (!up)
            return false;
        up[up == probe] = 0;
    }
    struct statfs sf;
    if (statfs(probe, &sf) < 0 || (unsigned long)sf.f_type != OVERLAYFS_MAGIC)
        return false;
    if (!make)
        return true;
    for (char *c = dir + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = 0;
        if (mkdir(dir, 0755) == 0)
            made(dir);
        *c = '/';
    }
    if (mkdir(dir, 0755) == 0)
        made(dir);
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static int put_in_place(char kind, uint32_t mode, const char *path,
                        const char *data, size_t len)
{
    if (!overlaid_parent(path, kind != PRE_ABSENT))
        return 0;
    struct stat st;
    if (kind == PRE_DIR) {
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        (void)remove_tree(path);
        return mkdir(path, mode & 07777) < 0 ? -errno : 0;
    }
    int rc = remove_tree(path);
    if (rc < 0 || kind == PRE_ABSENT)
        return rc;
    if (kind == PRE_LINK) {
        char target[4097];
        snprintf(target, sizeof(target), "%.*s", (int)len, data);
        return symlink(target, path) < 0 ? -errno : 0;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0)
        return -errno;
    rc = cli_write_all(fd, data, len) < 0 || fchmod(fd, mode & 07777) < 0
             ? -EIO
             : 0;
    close(fd);
    return rc;
}

struct frame {
    char kind;
    uint32_t mode;
    char *path;
    const char *data;
    size_t len;
};

static int by_path_length(const void *a, const void *b)
{
    size_t la = strlen(((const struct frame *)a)->path);
    size_t lb = strlen(((const struct frame *)b)->path);
    return la < lb ? -1 : la > lb;
}

int cli_prestate_apply(const char *frames_path, char *why, size_t why_len)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = read_whole(AT_FDCWD, frames_path, &buf, &len);
    if (rc < 0)
        return rc == -EIO && access(frames_path, F_OK) < 0 ? 0 : rc;
    struct frame *f = NULL;
    size_t n = 0, cap = 0;
    for (size_t at = 0; at + 8 <= len;) {
        uint64_t flen;
        memcpy(&flen, buf + at, 8);
        if (flen < 9 || flen > len - at - 8)
            break;
        char *q = buf + at + 8;
        uint32_t plen;
        memcpy(&plen, q + 5, 4);
        if (plen == 0 || plen > flen - 9)
            break;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct frame *g = realloc(f, cap * sizeof(*f));
            if (!g)
                break;
            f = g;
        }
        f[n].kind = q[0];
        memcpy(&f[n].mode, q + 1, 4);
        f[n].path = strndup(q + 9, plen);
        f[n].data = q + 9 + plen;
        f[n].len = flen - 9 - plen;
        if (f[n].path)
            n++;
        at += 8 + flen;
    }
    /* What was absent first (deepest names are inside what goes), then
     * what was there, parents before what is in them. */
    made_log = open(frames_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (f[i].kind == PRE_ABSENT &&
            (rc = put_in_place(f[i].kind, 0, f[i].path, NULL, 0)) < 0)
            snprintf(why, why_len, "%s: %s", f[i].path, strerror(-rc));
    if (f)
        qsort(f, n, sizeof(*f), by_path_length);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (f[i].kind != PRE_ABSENT &&
            (rc = put_in_place(f[i].kind, f[i].mode, f[i].path, f[i].data,
                               f[i].len)) < 0)
            snprintf(why, why_len, "%s: %s", f[i].path, strerror(-rc));
    if (made_log >= 0)
        close(made_log);
    made_log = -1;
    for (size_t i = 0; i < n; i++)
        free(f[i].path);
    free(f);
    free(buf);
    return rc;
}

/* Calls fn for each path of a frames file (u64 length, then the frame)
 * whose name sits at name_at (a u32 length, then the bytes). */
static void each_name(const char *frames_path, size_t name_at,
                      void (*fn)(void *ctx, const char *path), void *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    if (read_whole(AT_FDCWD, frames_path, &buf, &len) < 0)
        return;
    for (size_t at = 0; at + 8 + name_at + 4 <= len;) {
        uint64_t flen;
        uint32_t plen;
        memcpy(&flen, buf + at, 8);
        memcpy(&plen, buf + at + 8 + name_at, 4);
        if (flen < name_at + 4 || flen > len - at - 8 ||
            plen > flen - name_at - 4)
            break;
        char *path = strndup(buf + at + 8 + name_at + 4, plen);
        if (path)
            fn(ctx, path);
        free(path);
        at += 8 + flen;
    }
    free(buf);
}

void cli_prestate_each(const char *frames_path,
                       void (*fn)(void *ctx, const char *path), void *ctx)
{
    each_name(frames_path, 5, fn, ctx);
}

/* The paths the run changed (the state file's, before anything is made
 * for the replay): what is at or under one is the run's, not made. */
static char **changed;
static size_t nr_changed;

static void note_changed(void *ctx, const char *path)
{
    (void)ctx;
    char **g = realloc(changed, (nr_changed + 1) * sizeof(*g));
    if (g && (g[nr_changed] = strdup(path)))
        nr_changed++;
    if (g)
        changed = g;
}

static bool run_changed(const char *path)
{
    for (size_t i = 0; i < nr_changed; i++) {
        size_t n = strlen(changed[i]);
        if (!strncmp(path, changed[i], n) && (!path[n] || path[n] == '/'))
            return true;
    }
    return false;
}

static void forget_changed(void)
{
    for (size_t i = 0; i < nr_changed; i++)
        free(changed[i]);
    free(changed);
    changed = NULL;
    nr_changed = 0;
}

static void make_listed(void *ctx, const char *path)
{
    (void)ctx;
    if (run_changed(path))
        return;
    char child[4200];
    snprintf(child, sizeof(child), "%s/.", path);
    struct stat st;
    if (path[0] == '/' && lstat(path, &st) < 0 && errno == ENOENT &&
        overlaid_parent(child, true))
        (void)mkdir(path, 0755);
}

void cli_prestate_make_dirs(const char *frames_path, const char *dirs_path,
                            const char *cwd)
{
    forget_changed();
    cli_prestate_each(frames_path, note_changed, NULL);
    made_log = open(frames_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    each_name(dirs_path, 0, make_listed, NULL);
    if (cwd)
        make_listed(NULL, cwd);
    if (made_log >= 0)
        close(made_log);
    made_log = -1;
}

/* A recorded file (tap.c's .files frame: u32 key length, the key, u32
 * name length, the name, its struct stat, the bytes) that is gone from
 * the host, made in the tree with its recorded bytes and mode: opens of
 * it are served from the recording anyway, but hvrun's own look-up of
 * the program to run and anything else that only checks it is there
 * find it. */
static void make_recorded_file(const uint8_t *q, size_t n)
{
    uint32_t klen, nlen;
    struct stat st;
    if (n < 4)
        return;
    memcpy(&klen, q, 4);
    if (klen == 0 || klen >= 4096 || n - 4 < (size_t)klen + 4)
        return;
    char path[4096];
    memcpy(path, q + 4, klen);
    path[klen] = 0;
    memcpy(&nlen, q + 4 + klen, 4);
    size_t head = 4 + (size_t)klen + 4 + nlen + sizeof(st);
    if (nlen > n || head > n || path[0] != '/')
        return;
    memcpy(&st, q + 8 + klen + nlen, sizeof(st));
    struct stat now;
    if (!S_ISREG(st.st_mode) || run_changed(path) || lstat(path, &now) == 0 ||
        errno != ENOENT || !overlaid_parent(path, true))
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0)
        return;
    if (cli_write_all(fd, q + head, n - head) < 0 ||
        fchmod(fd, st.st_mode & 07777) < 0)
        (void)unlinkat(AT_FDCWD, path, 0);
    close(fd);
}

void cli_prestate_make_files(const char *files_path)
{
    int fd = open(files_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) < 0 || st.st_size == 0) {
        close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    const uint8_t *buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (buf == MAP_FAILED)
        return;
    for (size_t at = 0; len - at >= 8;) {
        uint64_t payload;
        memcpy(&payload, buf + at, 8);
        if (payload > len - at - 8)
            break;
        make_recorded_file(buf + at + 8, (size_t)payload);
        at += 8 + (size_t)payload;
    }
    munmap((void *)buf, len);
    forget_changed();
}
