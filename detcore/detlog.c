/*
 * detlog.c - the ordered record of events whose results matter, its digest,
 * and its file form for --verify (a header line then fixed-size records).
 */
#include "det.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FNV_PRIME 0x100000001b3ULL
#define DETLOG_MAGIC "hvrun-detlog-1\n"

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV_PRIME;
    }
    return h;
}

static void append(struct det_state *d, const struct det_record *r)
{
    struct det_log *l = &d->log;
    l->digest = fnv1a(l->digest, r, sizeof(*r));
    if (!l->keep)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        void *p = realloc(l->recs, cap * sizeof(*l->recs));
        if (!p) {
            /* Out of memory: keep the digest, stop keeping records. */
            l->keep = false;
            return;
        }
        l->recs = p;
        l->cap = cap;
    }
    l->recs[l->n++] = *r;
}

void det_log_syscall(struct det_state *d, int64_t result)
{
    struct det_record r = {.nr = d->cur_nr, .source = DET_SRC_SYSCALL,
                           .tid = d->cur_tid, .value = result};
    append(d, &r);
}

void det_log_value(struct det_state *d, enum det_source src,
                   const void *bytes, size_t len)
{
    struct det_record r = {.nr = d->cur_nr, .source = (uint8_t)src,
                           .tid = d->cur_tid};
    if (src == DET_SRC_TIME && len == sizeof(struct timespec)) {
        /* A clock reading: keep it whole, in ns, so --verify shows it. */
        const struct timespec *ts = bytes;
        r.value = det_timespec_ns(ts);
    } else {
        memcpy(&r.value, bytes, len < 8 ? len : 8);
    }
    r.hash = fnv1a(0xcbf29ce484222325ULL, bytes, len);
    append(d, &r);
}

uint64_t det_log_digest(const struct det_state *d) { return d->log.digest; }

const char *det_source_name(enum det_source s)
{
    static const char *const names[DET_SRC_COUNT] = {
        "syscall", "time", "random", "ids", "metadata", "host", "sched",
        "external"};
    return (unsigned)s < DET_SRC_COUNT ? names[s] : "?";
}

int det_log_write(const struct det_state *d, int fd)
{
    size_t bytes = d->log.n * sizeof(struct det_record);
    const uint8_t *p = (const uint8_t *)d->log.recs;
    if (write(fd, DETLOG_MAGIC, strlen(DETLOG_MAGIC)) < 0)
        return -errno;
    while (bytes > 0) {
        ssize_t n = write(fd, p, bytes);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        bytes -= (size_t)n;
    }
    return 0;
}

int det_log_save(const struct det_state *d, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = det_log_write(d, fd);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    return rc;
}

int det_log_load(const char *path, struct det_record **recs, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -errno;
    char magic[sizeof(DETLOG_MAGIC)];
    size_t mlen = strlen(DETLOG_MAGIC);
    if (fread(magic, 1, mlen, f) != mlen || memcmp(magic, DETLOG_MAGIC, mlen)) {
        fclose(f);
        return -EINVAL;
    }
    size_t cap = 4096, count = 0;
    struct det_record *r = malloc(cap * sizeof(*r));
    while (r) {
        if (count == cap) {
            struct det_record *g = realloc(r, cap * 2 * sizeof(*r));
            if (!g) {
                free(r);
                r = NULL;
                break;
            }
            r = g;
            cap *= 2;
        }
        size_t got = fread(&r[count], sizeof(*r), cap - count, f);
        count += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (!r)
        return -ENOMEM;
    *recs = r;
    *n = count;
    return 0;
}
