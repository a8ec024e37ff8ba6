/*
 * preserve.c - --verify's record of the files run 1 changed, so that run 2
 * starts from the files run 1 started from.
 *
 * verify.c removes what run 1 created (fsmeta.c's created log). This keeps
 * what run 1 was about to change or remove that existed before it: before
 * the first call that could change an existing file's content, mode or
 * name (an open that can write, truncate, chmod, unlink, rmdir, a rename
 * from or over it), the file is copied into the journal directory, and
 * verify.c (cli_preserve_restore) copies it back before run 2.
 *
 * The journal's index has one line per path: "F mode N path" (a regular
 * file, content in file N), "L 0 N path" (a symlink, target in file N) or
 * "D mode - path" (a directory that was removed). Paths are absolute host
 * paths with the directory part resolved, as the created log writes them.
 * A path is handled once: its state before run 1 is what counts. Paths
 * that run 1 created, or that lie below a directory it created, are
 * skipped. Not handled: renaming a directory that existed (its contents
 * would move), files over PRESERVE_MAX_FILE bytes (a warning says so).
 */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define PRESERVE_MAX_FILE (256LL << 20)

struct proxy_preserve {
    char dir[PROXY_PATH_MAX];
    FILE *index;
    unsigned next;     /* number of the next saved file */
    char **seen;       /* open-addressing set of handled paths */
    size_t cap, count;
};

/* ---- the set of handled paths ---------------------------------------------- */

static uint64_t path_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static bool seen_has(const struct proxy_preserve *pr, const char *s,
                     size_t len)
{
    if (pr->cap == 0)
        return false;
    for (size_t i = path_hash(s, len) & (pr->cap - 1);; i = (i + 1) & (pr->cap - 1)) {
        if (!pr->seen[i])
            return false;
        if (strlen(pr->seen[i]) == len && memcmp(pr->seen[i], s, len) == 0)
            return true;
    }
}

static void seen_put(struct proxy_preserve *pr, char *owned)
{
    for (size_t i = path_hash(owned, strlen(owned)) & (pr->cap - 1);;
         i = (i + 1) & (pr->cap - 1)) {
        if (!pr->seen[i]) {
            pr->seen[i] = owned;
            pr->count++;
            return;
        }
    }
}

static int seen_add(struct proxy_preserve *pr, const char *path)
{
    if (seen_has(pr, path, strlen(path)))
        return 0;
    if ((pr->count + 1) * 2 > pr->cap) {
        size_t cap = pr->cap ? pr->cap * 2 : 256;
        char **old = pr->seen;
        size_t old_cap = pr->cap;
        if (!(pr->seen = calloc(cap, sizeof(char *)))) {
            pr->seen = old;
            return -ENOMEM;
        }
        pr->cap = cap;
        pr->count = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i])
                seen_put(pr, old[i]);
        free(old);
    }
    char *copy = strdup(path);
    if (!copy)
        return -ENOMEM;
    seen_put(pr, copy);
    return 0;
}

/* The path itself or a directory above it was handled (created). */
static bool seen_or_below(const struct proxy_preserve *pr, const char *path)
{
    for (size_t len = strlen(path); len > 1;) {
        if (seen_has(pr, path, len))
            return true;
        while (len > 1 && path[len - 1] != '/')
            len--;
        if (len > 1)
            len--; /* drop the '/' too */
    }
    return false;
}

/* ---- lifecycle -------------------------------------------------------------- */

struct proxy_preserve *proxy_preserve_open(const char *dir)
{
    struct proxy_preserve *pr = calloc(1, sizeof(*pr));
    if (!pr)
        return NULL;
    char index[PROXY_PATH_MAX + 16];
    snprintf(pr->dir, sizeof(pr->dir), "%s", dir);
    snprintf(index, sizeof(index), "%s/index", dir);
    if (!(pr->index = fopen(index, "we"))) {
        free(pr);
        return NULL;
    }
    return pr;
}

void proxy_preserve_close(struct proxy_preserve *pr)
{
    if (!pr)
        return;
    fclose(pr->index);
    for (size_t i = 0; i < pr->cap; i++)
        free(pr->seen[i]);
    free(pr->seen);
    free(pr);
}

/* ---- recording -------------------------------------------------------------- */

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
        if (n >= sizeof(parent))
            return -ENAMETOOLONG;
        memcpy(parent, path, n);
        parent[n] = 0;
        dir = openat(dirfd, n ? parent : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
            return -errno;
    }
    char link[64], resolved[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", dir);
    ssize_t n = readlink(link, resolved, sizeof(resolved) - 1);
    if (dir != dirfd)
        close(dir);
    if (n <= 0)
        return -ENOENT;
    resolved[n] = 0;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return -EINVAL; /* a directory by a relative name: not handled */
    int w = snprintf(out, len, "%s/%s", strcmp(resolved, "/") ? resolved : "",
                     base);
    return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

static int copy_into(int src, const char *dst_path, off_t size)
{
    int dst = open(dst_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (dst < 0)
        return -errno;
    off_t done = 0;
    while (done < size) {
        ssize_t n = sendfile(dst, src, NULL, (size_t)(size - done));
        if (n <= 0)
            break;
        done += n;
    }
    close(dst);
    return done == size ? 0 : -EIO;
}

/* Saves the file at abs (not followed) into the journal. */
static void save(struct proxy_process *p, struct proxy_preserve *pr,
                 const char *abs)
{
    struct stat st;
    if (lstat(abs, &st) < 0)
        return; /* nothing there before run 1 changed it */
    char saved[PROXY_PATH_MAX + 16];
    snprintf(saved, sizeof(saved), "%s/%u", pr->dir, pr->next);
    if (S_ISREG(st.st_mode)) {
        if (st.st_size > PRESERVE_MAX_FILE) {
            proxy_log(p, 1, "--verify: %s is too big to keep for run 2; "
                            "run 2 starts from run 1's version", abs);
            return;
        }
        int src = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (src < 0 || copy_into(src, saved, st.st_size) < 0) {
            if (src >= 0)
                close(src);
            proxy_log(p, 1, "--verify: cannot keep %s for run 2", abs);
            return;
        }
        close(src);
        fprintf(pr->index, "F %o %u %s\n", (unsigned)(st.st_mode & 07777),
                pr->next++, abs);
    } else if (S_ISLNK(st.st_mode)) {
        char target[PROXY_PATH_MAX];
        ssize_t n = readlink(abs, target, sizeof(target));
        int fd = n < 0 ? -1 : open(saved, O_WRONLY | O_CREAT | O_EXCL |
                                              O_CLOEXEC, 0600);
        bool ok = fd >= 0 && write(fd, target, (size_t)n) == n;
        if (fd >= 0)
            close(fd);
        if (!ok)
            return;
        fprintf(pr->index, "L 0 %u %s\n", pr->next++, abs);
    } else if (S_ISDIR(st.st_mode)) {
        fprintf(pr->index, "D %o - %s\n", (unsigned)(st.st_mode & 07777), abs);
    }
    fflush(pr->index);
}

void proxy_preserve_before(struct proxy_process *p, int host_dirfd,
                           const char *host_path, bool follow)
{
    struct proxy_preserve *pr = p->totals ? p->totals->preserve : NULL;
    if (!pr)
        return;
    char abs[PROXY_PATH_MAX];
    if (proxy_abs_path(host_dirfd, host_path, abs, sizeof(abs)) < 0)
        return;
    if (follow) { /* the call changes what a symlink points to */
        char real[PATH_MAX];
        if (realpath(abs, real) && strlen(real) < sizeof(abs))
            strcpy(abs, real);
    }
    if (seen_or_below(pr, abs))
        return;
    save(p, pr, abs);
    (void)seen_add(pr, abs);
}

void proxy_preserve_fd(struct proxy_process *p, int host_fd)
{
    if (!p->totals || !p->totals->preserve)
        return;
    char link[64], abs[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, abs, sizeof(abs) - 1);
    if (n <= 0 || abs[0] != '/')
        return;
    abs[n] = 0;
    proxy_preserve_before(p, AT_FDCWD, abs, false);
}

void proxy_preserve_created(struct proxy_process *p, const char *abs)
{
    if (p->totals && p->totals->preserve)
        (void)seen_add(p->totals->preserve, abs);
}
