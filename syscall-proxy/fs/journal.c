/*
 * journal.c - --verify's binary journal (journal.h): appending a record,
 * loading them all back. The reader trusts nothing: every length is
 * checked, a path must be absolute and hold no NUL, and a record that
 * does not fit what is left of the file ends the journal.
 */
#include "journal.h"
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int journal_append(int fd, const struct journal_head *h, const char *path,
                   const char *path2)
{
    size_t total = sizeof(*h) + h->len + h->len2;
    char *buf = malloc(total);
    if (!buf)
        return -ENOMEM;
    memcpy(buf, h, sizeof(*h));
    memcpy(buf + sizeof(*h), path, h->len);
    if (h->len2)
        memcpy(buf + sizeof(*h) + h->len, path2, h->len2);
    ssize_t w;
    do
        w = write(fd, buf, total);
    while (w < 0 && errno == EINTR);
    int err = errno;
    free(buf);
    if (w < 0)
        return -err;
    return (size_t)w == total ? 0 : -EIO;
}

static char *path_dup(const char *bytes, uint32_t len)
{
    if (len == 0 || len >= PROXY_PATH_MAX || bytes[0] != '/' ||
        memchr(bytes, 0, len))
        return NULL;
    return strndup(bytes, len);
}

static int read_all(int fd, char **out, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    size_t cap = (size_t)st.st_size + 1, used = 0;
    char *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    for (;;) {
        if (used == cap) {
            char *g = realloc(buf, cap * 2);
            if (!g) {
                free(buf);
                return -ENOMEM;
            }
            buf = g;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + used, cap - used);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = -errno;
            free(buf);
            return err;
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    *out = buf;
    *len = used;
    return 0;
}

static bool entry_parse(const char *at, size_t left, struct journal_entry *e,
                        size_t *used)
{
    if (left < sizeof(e->h))
        return false;
    memcpy(&e->h, at, sizeof(e->h));
    if (e->h.magic != JOURNAL_MAGIC || e->h.len > left - sizeof(e->h) ||
        e->h.len2 > left - sizeof(e->h) - e->h.len)
        return false;
    e->path = path_dup(at + sizeof(e->h), e->h.len);
    e->path2 = e->h.kind == JOURNAL_RENAMED || e->h.len2
                   ? path_dup(at + sizeof(e->h) + e->h.len, e->h.len2)
                   : strdup("");
    if (!e->path || !e->path2) {
        free(e->path);
        free(e->path2);
        return false;
    }
    *used = sizeof(e->h) + e->h.len + e->h.len2;
    return true;
}

int journal_load(int dir_fd, struct journal_entry **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int fd = openat(dir_fd, JOURNAL_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    char *buf = NULL;
    size_t len = 0;
    int rc = read_all(fd, &buf, &len);
    close(fd);
    if (rc < 0)
        return rc;
    size_t cap = 0, off = 0;
    struct journal_entry e, *all = NULL;
    size_t used;
    while (off < len && entry_parse(buf + off, len - off, &e, &used)) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            struct journal_entry *g = realloc(all, cap * sizeof(*g));
            if (!g) {
                free(e.path);
                free(e.path2);
                rc = -ENOMEM;
                break;
            }
            all = g;
        }
        all[(*n)++] = e;
        off += used;
    }
    free(buf);
    *out = all;
    return rc;
}

void journal_free(struct journal_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].path);
        free(e[i].path2);
    }
    free(e);
}
