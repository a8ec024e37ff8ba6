/*
 * tap.c - what hvrun record and replay keep of the host, inside the run:
 *
 * - detcore's tap (det.h): each value the host gave detcore (its time, its
 *   randomness) appended to PREFIX.values (a source byte, a u32 length,
 *   the bytes); replaying, handed out in order;
 * - the files the guest opens read-only (proxy_file_tap, fs.c): a copy of
 *   each regular file at its first open, by the path it was opened by,
 *   appended to PREFIX.files (u32 key length, the key, u32 mode, u64
 *   length, its struct stat then, the bytes); replaying, such an open gets
 *   a memfd holding the recorded bytes, and a stat of it (or of the path)
 *   the recorded stat, whatever the host's file is now (or whether it is).
 *
 * cmd_record.c moves both into and out of the recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "config.h"

/* Files larger than this are not copied (a replay reads the host's). */
#define FILE_COPY_MAX (64u << 20)
/* The memfd name vfs.c shows as the path after it (MEMFD_PREFIX). */
#define COPY_NAME_PREFIX "hvrun-vfs:"

/*
 * One file record in PREFIX.files: u64 payload length, then the payload:
 * u32 key length, the key (the path it was opened by), u32 name length,
 * the name (what /proc/self/fd showed for it: the resolved path), its
 * struct stat at the first open, the bytes.
 */
struct recorded_file {
    char *key, *name;
    struct stat st;          /* as it was at its first open */
    const uint8_t *bytes;    /* inside files */
    uint64_t len;
    int copy;                /* replaying: the memfd holding it, or -1 */
    dev_t copy_dev;
    ino_t copy_ino;
};

/* One listing in PREFIX.dirs: u64 payload length, then u32 key length,
 * the key, the records. A directory listed again has a record each time. */
struct recorded_listing {
    char *key;
    const uint8_t *raw; /* inside dirs */
    size_t len;
    bool used;          /* replaying: handed out already */
};

/* One path stat in PREFIX.stats: u64 payload length, then u32 key
 * length, the key, u8 nofollow, i32 result (0 or -errno), its struct stat. */
struct recorded_stat {
    char *key;
    bool nofollow, used;
    int err;
    struct stat st;
};

/* One answer in PREFIX.queries: u64 payload length, then u32 key length,
 * the key, i32 kind, i32 arg, i64 result, the bytes (the rest). */
struct recorded_query {
    char *key;
    int kind, arg;
    long result;
    const uint8_t *data; /* inside queries */
    size_t len;
    bool used;
};

struct file_tap {
    struct det_tap tap;
    struct proxy_file_tap files_tap;
    int fd;              /* recording: where values go */
    uint8_t *data;       /* replaying: the values */
    size_t len, at;
    int files_fd;        /* recording: where file copies go */
    char **seen;         /* recording: keys copied already */
    size_t nr_seen, cap_seen;
    uint8_t *files;      /* replaying: PREFIX.files */
    size_t files_len;
    struct recorded_file *index;
    size_t nr_index;
    int dirs_fd;         /* recording: where listings go */
    uint8_t *dirs;       /* replaying: PREFIX.dirs */
    size_t dirs_len;
    struct recorded_listing *listings;
    size_t nr_listings;
    int stats_fd;        /* recording: where path stats go */
    uint8_t *stats;      /* replaying: PREFIX.stats */
    size_t stats_len;
    struct recorded_stat *stat_results;
    size_t nr_stat_results;
    int queries_fd;      /* recording: where answers go */
    uint8_t *queries;    /* replaying: PREFIX.queries */
    size_t queries_len;
    struct recorded_query *answers;
    size_t nr_answers;
    int links_fd;        /* recording: where outside connections' events go */
    uint8_t *links;      /* replaying: PREFIX.links */
    size_t links_len, links_at;
    bool layered;        /* replaying in a tree of overlays (isolate.c) */
    char **touched;      /* ... and these paths the run changed */
    size_t nr_touched;
};

static void put_value(void *ctx, enum det_source src, const void *buf,
                      size_t len)
{
    struct file_tap *t = ctx;
    uint8_t head[5] = {(uint8_t)src, (uint8_t)len, (uint8_t)(len >> 8),
                       (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    struct iovec iov[2] = {{head, sizeof(head)}, {(void *)buf, len}};
    size_t want = sizeof(head) + len;
    ssize_t n;
    while ((n = writev(t->fd, iov, 2)) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)want) /* the replay will say where it parts */
        cli_error("record: a host value could not be saved: %s",
                  n < 0 ? strerror(errno) : "short write");
}

static bool get_value(void *ctx, enum det_source src, void *buf, size_t len)
{
    struct file_tap *t = ctx;
    if (t->len - t->at < 5)
        return false;
    const uint8_t *h = t->data + t->at;
    size_t got = (size_t)h[1] | (size_t)h[2] << 8 | (size_t)h[3] << 16 |
                 (size_t)h[4] << 24;
    if (h[0] != (uint8_t)src || got != len || t->len - t->at - 5 < got)
        return false;
    memcpy(buf, h + 5, len);
    t->at += 5 + len;
    return true;
}

static int read_all(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t cap = 65536, n = 0;
    uint8_t *buf = malloc(cap);
    int rc = buf ? 0 : -ENOMEM;
    while (rc == 0) {
        if (n == cap) {
            uint8_t *g = realloc(buf, cap * 2);
            if (!g) {
                rc = -ENOMEM;
                break;
            }
            buf = g;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : 0;
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

/* ---- files ---------------------------------------------------------------- */

static bool skipped_key(const char *key)
{
    return !strncmp(key, "/proc/", 6) || !strncmp(key, "/sys/", 5) ||
           !strncmp(key, "/dev/", 5);
}

static bool seen_before(struct file_tap *t, const char *key)
{
    for (size_t i = 0; i < t->nr_seen; i++)
        if (!strcmp(t->seen[i], key))
            return true;
    if (t->nr_seen == t->cap_seen) {
        size_t cap = t->cap_seen ? t->cap_seen * 2 : 64;
        char **g = realloc(t->seen, cap * sizeof(*g));
        if (!g)
            return true; /* out of memory: not copied */
        t->seen = g;
        t->cap_seen = cap;
    }
    t->seen[t->nr_seen] = strdup(key);
    if (!t->seen[t->nr_seen])
        return true;
    t->nr_seen++;
    return false;
}

int cli_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *b = buf;
    while (len > 0) {
        ssize_t n = write(fd, b, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Recording: the file's bytes as they are at its first open. */
static void file_opened(void *ctx, const char *key, int host_fd)
{
    struct file_tap *t = ctx;
    struct stat st;
    if (skipped_key(key) || fstat(host_fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size > FILE_COPY_MAX || seen_before(t, key))
        return;
    char link[64], name[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t nl = readlink(link, name, sizeof(name));
    if (nl < 0 || nl >= (ssize_t)sizeof(name))
        nl = 0;
    uint8_t *bytes = malloc(st.st_size ? (size_t)st.st_size : 1);
    if (!bytes)
        return;
    uint64_t got = 0;
    while (got < (uint64_t)st.st_size) {
        ssize_t n = pread(host_fd, bytes + got, (size_t)st.st_size - got,
                          (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* shorter than fstat said: what was there */
        got += (uint64_t)n;
    }
    uint32_t klen = (uint32_t)strlen(key), nlen = (uint32_t)nl;
    uint64_t payload = 8 + (uint64_t)klen + nlen + sizeof(st) + got;
    if (cli_write_all(t->files_fd, &payload, 8) < 0 ||
        cli_write_all(t->files_fd, &klen, 4) < 0 ||
        cli_write_all(t->files_fd, key, klen) < 0 ||
        cli_write_all(t->files_fd, &nlen, 4) < 0 ||
        cli_write_all(t->files_fd, name, nlen) < 0 ||
        cli_write_all(t->files_fd, &st, sizeof(st)) < 0 ||
        cli_write_all(t->files_fd, bytes, (size_t)got) < 0)
        cli_error("record: a copy of %s could not be saved", key);
    free(bytes);
}

static struct recorded_file *find_key(struct file_tap *t, const char *key)
{
    for (size_t i = 0; i < t->nr_index; i++)
        if (!strcmp(t->index[i].key, key))
            return &t->index[i];
    return NULL;
}

/* The memfd holding a recorded file, made at its first replayed open and
 * named so that /proc/self/fd and /proc/self/maps show its recorded name
 * (vfs.c strips the prefix). */
static int copy_of(struct recorded_file *f)
{
    if (f->copy >= 0)
        return f->copy;
    char name[250];
    snprintf(name, sizeof(name), COPY_NAME_PREFIX "%.200s",
             f->name[0] ? f->name : f->key);
    int fd = memfd_create(name, MFD_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (cli_write_all(fd, f->bytes, (size_t)f->len) < 0 ||
        fchmod(fd, f->st.st_mode & 07777) < 0 || fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    f->copy = fd;
    f->copy_dev = st.st_dev;
    f->copy_ino = st.st_ino;
    return fd;
}

/* Replaying: an open of the recorded copy of key (its own offset), read
 * only, or -1 if key was not recorded. */
static int file_recorded(void *ctx, const char *key)
{
    struct recorded_file *f = find_key(ctx, key);
    int copy = f ? copy_of(f) : -1;
    if (copy < 0)
        return -1;
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", copy);
    return open(link, O_RDONLY | O_CLOEXEC);
}

static bool file_recorded_stat(void *ctx, const char *key, struct stat *st)
{
    struct file_tap *t = ctx;
    struct recorded_file *f = key ? find_key(t, key) : NULL;
    for (size_t i = 0; !f && i < t->nr_index; i++) {
        struct recorded_file *g = &t->index[i];
        if (g->copy >= 0 && g->copy_dev == st->st_dev &&
            g->copy_ino == st->st_ino)
            f = g;
    }
    if (f)
        *st = f->st;
    return f != NULL;
}

/* Recording: a listing, in the order the run read them. */
static void dir_listed(void *ctx, const char *key, const void *raw,
                       size_t len)
{
    struct file_tap *t = ctx;
    uint32_t klen = (uint32_t)strlen(key);
    uint64_t payload = 4 + (uint64_t)klen + len;
    if (skipped_key(key) || !strncmp(key, "/proc", 5))
        return;
    if (cli_write_all(t->dirs_fd, &payload, 8) < 0 ||
        cli_write_all(t->dirs_fd, &klen, 4) < 0 ||
        cli_write_all(t->dirs_fd, key, klen) < 0 ||
        cli_write_all(t->dirs_fd, raw, len) < 0)
        cli_error("record: a listing of %s could not be saved", key);
}

/* Replaying: the next listing of key not handed out yet. */
/*
 * A replay in its own tree (isolate.c) lists a directory of one of its
 * overlays: the recorded (host) inode numbers as the overlay gives them,
 * and for what the run changed (made, replaced) the number of what is
 * there now, so that they match what a stat of the entries gives.
 */
static bool touched(const struct file_tap *t, const char *path);

static void as_layered(const struct file_tap *t, const char *key, char *raw,
                       size_t len)
{
    struct statfs sf;
    if (statfs(key, &sf) < 0 || (unsigned long)sf.f_type != 0x794c7630)
        return;
    for (size_t at = 0; at + 19 <= len;) {
        uint64_t ino;
        uint16_t reclen;
        memcpy(&ino, raw + at, 8);
        memcpy(&reclen, raw + at + 16, 2);
        if (reclen < 19 || reclen > len - at)
            break;
        const char *name = raw + at + 19;
        char path[4096];
        if (!strcmp(name, "."))
            snprintf(path, sizeof(path), "%s", key);
        else if (!strcmp(name, ".."))
            snprintf(path, sizeof(path), "%s/..", key);
        else
            snprintf(path, sizeof(path), "%s%s%.*s", key,
                     strcmp(key, "/") ? "/" : "", (int)(reclen - 19), name);
        struct stat st;
        if (touched(t, path) && lstat(path, &st) == 0)
            ino = st.st_ino;
        else
            ino |= DET_LAYER_LOWER_BIT;
        memcpy(raw + at, &ino, 8);
        at += reclen;
    }
}

static bool dir_recorded(void *ctx, const char *key, char **raw, size_t *len)
{
    struct file_tap *t = ctx;
    for (size_t i = 0; i < t->nr_listings; i++) {
        struct recorded_listing *l = &t->listings[i];
        if (l->used || strcmp(l->key, key))
            continue;
        char *copy = malloc(l->len ? l->len : 1);
        if (!copy)
            return false;
        memcpy(copy, l->raw, l->len);
        if (t->layered)
            as_layered(t, key, copy, l->len);
        l->used = true;
        *raw = copy;
        *len = l->len;
        return true;
    }
    return false;
}

/* Recording: a stat of a path and what it gave. */
static void stat_noted(void *ctx, const char *key, bool nofollow, int err,
                       const struct stat *st)
{
    struct file_tap *t = ctx;
    if (skipped_key(key) || !strncmp(key, "/proc", 5))
        return;
    uint32_t klen = (uint32_t)strlen(key);
    uint8_t nf = nofollow;
    int32_t e = err;
    struct stat zero;
    memset(&zero, 0, sizeof(zero));
    uint64_t payload = 4 + (uint64_t)klen + 1 + 4 + sizeof(*st);
    if (cli_write_all(t->stats_fd, &payload, 8) < 0 ||
        cli_write_all(t->stats_fd, &klen, 4) < 0 ||
        cli_write_all(t->stats_fd, key, klen) < 0 ||
        cli_write_all(t->stats_fd, &nf, 1) < 0 ||
        cli_write_all(t->stats_fd, &e, 4) < 0 ||
        cli_write_all(t->stats_fd, err ? &zero : st, sizeof(*st)) < 0)
        cli_error("record: a stat of %s could not be saved", key);
}

/* Replaying: the next recorded stat of key not handed out yet. */
static bool stat_recorded(void *ctx, const char *key, bool nofollow,
                          int *err, struct stat *st)
{
    struct file_tap *t = ctx;
    for (size_t i = 0; i < t->nr_stat_results; i++) {
        struct recorded_stat *r = &t->stat_results[i];
        if (r->used || r->nofollow != nofollow || strcmp(r->key, key))
            continue;
        r->used = true;
        *err = r->err;
        *st = r->st;
        return true;
    }
    return false;
}

/* Recording: a readlink's or an access check's answer. */
static void query_noted(void *ctx, const char *key, int kind, int arg,
                        long result, const void *data, size_t len)
{
    struct file_tap *t = ctx;
    if (skipped_key(key) || !strncmp(key, "/proc", 5))
        return;
    uint32_t klen = (uint32_t)strlen(key);
    int32_t k = kind, a = arg;
    int64_t r = result;
    uint64_t payload = 4 + (uint64_t)klen + 4 + 4 + 8 + len;
    if (cli_write_all(t->queries_fd, &payload, 8) < 0 ||
        cli_write_all(t->queries_fd, &klen, 4) < 0 ||
        cli_write_all(t->queries_fd, key, klen) < 0 ||
        cli_write_all(t->queries_fd, &k, 4) < 0 ||
        cli_write_all(t->queries_fd, &a, 4) < 0 ||
        cli_write_all(t->queries_fd, &r, 8) < 0 ||
        cli_write_all(t->queries_fd, data, len) < 0)
        cli_error("record: an answer about %s could not be saved", key);
}

/* Replaying: the next recorded answer to the same question. */
static bool query_recorded(void *ctx, const char *key, int kind, int arg,
                           long *result, void *data, size_t cap, size_t *len)
{
    struct file_tap *t = ctx;
    for (size_t i = 0; i < t->nr_answers; i++) {
        struct recorded_query *q = &t->answers[i];
        if (q->used || q->kind != kind || q->arg != arg || strcmp(q->key, key))
            continue;
        if (q->len > cap)
            return false;
        q->used = true;
        *result = q->result;
        if (q->len)
            memcpy(data, q->data, q->len);
        *len = q->len;
        return true;
    }
    return false;
}

static char *dup_bytes(const uint8_t *b, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, b, n);
        s[n] = '\0';
    }
    return s;
}

/* Room for one more element of *arr (n of size each); false if none. */
static bool grow(void *arr, size_t n, size_t size)
{
    void **a = arr;
    void *g = realloc(*a, (n + 1) * size);
    if (!g)
        return false;
    *a = g;
    return true;
}

typedef int (*keyed_fn)(struct file_tap *t, char *key, const uint8_t *rest,
                        size_t rest_len);

/*
 * Walks PREFIX.files, .dirs, .stats or .queries: records of u64 payload
 * length, then u32 key length, the key, the rest; fn gets each key (its
 * own copy, to keep or free) and rest. -EINVAL if a record does not parse.
 */
static int walk_keyed(struct file_tap *t, const uint8_t *buf, size_t len,
                      keyed_fn fn)
{
    size_t at = 0, left;
    while ((left = len - at) > 0) {
        uint64_t payload;
        uint32_t klen;
        if (left < 12)
            return -EINVAL;
        memcpy(&payload, buf + at, 8);
        memcpy(&klen, buf + at + 8, 4);
        if (payload > left - 8 || payload < 4 || klen > payload - 4)
            return -EINVAL;
        char *key = dup_bytes(buf + at + 12, klen);
        if (!key)
            return -ENOMEM;
        int rc = fn(t, key, buf + at + 12 + klen,
                    (size_t)(payload - 4 - klen));
        if (rc < 0)
            return rc;
        at += 8 + (size_t)payload;
    }
    return 0;
}

/* A file's rest: u32 name length, the name, its stat, the bytes. */
static int index_file(struct file_tap *t, char *key, const uint8_t *q,
                      size_t n)
{
    uint32_t nlen = 0;
    struct recorded_file f = {.key = key, .copy = -1};
    if (n >= 4)
        memcpy(&nlen, q, 4);
    if (n < 4 || n - 4 < (uint64_t)nlen + sizeof(f.st)) {
        free(key);
        return -EINVAL;
    }
    if (!(f.name = dup_bytes(q + 4, nlen)) ||
        !grow(&t->index, t->nr_index, sizeof(f))) {
        free(key);
        free(f.name);
        return -ENOMEM;
    }
    memcpy(&f.st, q + 4 + nlen, sizeof(f.st));
    f.bytes = q + 4 + nlen + sizeof(f.st);
    f.len = n - 4 - nlen - sizeof(f.st);
    t->index[t->nr_index++] = f;
    return 0;
}

/* A listing's rest: the records. */
static int index_listing(struct file_tap *t, char *key, const uint8_t *q,
                         size_t n)
{
    if (!grow(&t->listings, t->nr_listings, sizeof(*t->listings))) {
        free(key);
        return -ENOMEM;
    }
    t->listings[t->nr_listings++] =
        (struct recorded_listing){.key = key, .raw = q, .len = n};
    return 0;
}

/* A stat's rest: u8 nofollow, i32 result, the struct stat. */
static int index_stat(struct file_tap *t, char *key, const uint8_t *q,
                      size_t n)
{
    struct recorded_stat r = {.key = key};
    int32_t e;
    if (n != 1 + 4 + sizeof(r.st) ||
        !grow(&t->stat_results, t->nr_stat_results, sizeof(r))) {
        free(key);
        return n != 1 + 4 + sizeof(r.st) ? -EINVAL : -ENOMEM;
    }
    r.nofollow = q[0] != 0;
    memcpy(&e, q + 1, 4);
    r.err = e;
    memcpy(&r.st, q + 5, sizeof(r.st));
    t->stat_results[t->nr_stat_results++] = r;
    return 0;
}

/* A query's rest: i32 kind, i32 arg, i64 result, the bytes. */
static int index_query(struct file_tap *t, char *key, const uint8_t *q,
                       size_t n)
{
    int32_t k, a;
    int64_t r;
    if (n < 16 || !grow(&t->answers, t->nr_answers, sizeof(*t->answers))) {
        free(key);
        return n < 16 ? -EINVAL : -ENOMEM;
    }
    memcpy(&k, q, 4);
    memcpy(&a, q + 4, 4);
    memcpy(&r, q + 8, 8);
    t->answers[t->nr_answers++] = (struct recorded_query){
        .key = key, .kind = k, .arg = a, .result = (long)r, .data = q + 16,
        .len = n - 16};
    return 0;
}

/*
 * A replay in its own tree starts from the recorded state of the paths the
 * run changed (prestate.c): everything about those paths comes from that
 * tree, where the replay's own changes land, not from the recording (a
 * copy made at a first open, a stat of before or after a change, a
 * listing of a directory the run changed).
 */
static bool grow(void *arr, size_t n, size_t size);

/* key (as the proxy names what it asks about) names path: "P/." too. */
static bool key_is(const char *key, const char *path)
{
    size_t n = strlen(path);
    return !strncmp(key, path, n) &&
           (!key[n] || !strcmp(key + n, n == 1 ? "." : "/."));
}

static void unserve(void *ctx, const char *path)
{
    struct file_tap *t = ctx;
    for (size_t i = 0; i < t->nr_index; i++)
        if (!strcmp(t->index[i].key, path) ||
            (t->index[i].name && !strcmp(t->index[i].name, path)))
            t->index[i].key[0] = 0;
    for (size_t i = 0; i < t->nr_stat_results; i++)
        if (key_is(t->stat_results[i].key, path))
            t->stat_results[i].used = true;
    for (size_t i = 0; i < t->nr_answers; i++)
        if (key_is(t->answers[i].key, path))
            t->answers[i].used = true;
    char *copy = strdup(path);
    if (copy && grow(&t->touched, t->nr_touched, sizeof(char *)))
        t->touched[t->nr_touched++] = copy;
    else
        free(copy);
}

static bool touched(const struct file_tap *t, const char *path)
{
    for (size_t i = 0; i < t->nr_touched; i++)
        if (!strcmp(t->touched[i], path))
            return true;
    return false;
}

/*
 * One event of a connection to outside the run in PREFIX.links: u64
 * payload length, then u32 link, u8 kind, u64 position, i64 value, the
 * bytes. They are replayed in the order they came.
 */
#define LINK_HEAD (4 + 1 + 8 + 8)

static void link_noted(void *ctx, const struct proxy_link_event *e,
                       const void *data, size_t len)
{
    struct file_tap *t = ctx;
    uint8_t head[8 + LINK_HEAD];
    uint64_t payload = LINK_HEAD + (uint64_t)len;
    memcpy(head, &payload, 8);
    memcpy(head + 8, &e->link, 4);
    head[12] = e->kind;
    memcpy(head + 13, &e->pos, 8);
    memcpy(head + 21, &e->value, 8);
    if (cli_write_all(t->links_fd, head, sizeof(head)) < 0 ||
        cli_write_all(t->links_fd, data, len) < 0)
        cli_error("record: data from outside the run could not be saved");
}

static bool link_next(void *ctx, struct proxy_link_event *e,
                      const void **data, size_t *len)
{
    struct file_tap *t = ctx;
    uint64_t payload;
    size_t left = t->links_len - t->links_at;
    const uint8_t *q = t->links + t->links_at;
    if (left < 8 + LINK_HEAD)
        return false;
    memcpy(&payload, q, 8);
    if (payload < LINK_HEAD || payload > left - 8)
        return false;
    memcpy(&e->link, q + 8, 4);
    e->kind = q[12];
    memcpy(&e->pos, q + 13, 8);
    memcpy(&e->value, q + 21, 8);
    *data = q + 8 + LINK_HEAD;
    *len = (size_t)payload - LINK_HEAD;
    return true;
}

static void link_taken(void *ctx)
{
    struct file_tap *t = ctx;
    uint64_t payload;
    memcpy(&payload, t->links + t->links_at, 8);
    t->links_at += 8 + (size_t)payload;
}

struct det_tap *cli_tap_open(const char *record_to, const char *replay_from,
                             char *why, size_t why_len)
{
    struct file_tap *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->fd = t->files_fd = t->dirs_fd = t->stats_fd = t->queries_fd = -1;
    t->links_fd = -1;
    t->tap.ctx = t->files_tap.ctx = t;
    const char *prefix = record_to ? record_to : replay_from;
    char values[4096], files[4096], dirs[4096], stats[4096], queries[4096],
        links[4096];
    snprintf(values, sizeof(values), "%s.values", prefix);
    snprintf(files, sizeof(files), "%s.files", prefix);
    snprintf(dirs, sizeof(dirs), "%s.dirs", prefix);
    snprintf(stats, sizeof(stats), "%s.stats", prefix);
    snprintf(queries, sizeof(queries), "%s.queries", prefix);
    snprintf(links, sizeof(links), "%s.links", prefix);
    const char *bad = values;
    int rc = 0;
    int fl = O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC;
    if (record_to) {
        t->tap.put = put_value;
        t->files_tap.opened = file_opened;
        t->files_tap.listed = dir_listed;
        t->files_tap.stat_result = stat_noted;
        t->files_tap.query_result = query_noted;
        t->files_tap.link_noted = link_noted;
        if ((t->fd = open(values, fl, 0600)) < 0 ||
            (bad = files, t->files_fd = open(files, fl, 0600)) < 0 ||
            (bad = dirs, t->dirs_fd = open(dirs, fl, 0600)) < 0 ||
            (bad = stats, t->stats_fd = open(stats, fl, 0600)) < 0 ||
            (bad = queries, t->queries_fd = open(queries, fl, 0600)) < 0 ||
            (bad = links, t->links_fd = open(links, fl, 0600)) < 0)
            rc = -errno;
    } else {
        t->tap.get = get_value;
        t->files_tap.recorded = file_recorded;
        t->files_tap.recorded_stat = file_recorded_stat;
        t->files_tap.recorded_listing = dir_recorded;
        t->files_tap.recorded_stat_result = stat_recorded;
        t->files_tap.recorded_query = query_recorded;
        t->files_tap.link_next = link_next;
        t->files_tap.link_taken = link_taken;
        if ((rc = read_all(values, &t->data, &t->len)) == 0 &&
            (bad = files, rc = read_all(files, &t->files, &t->files_len)) == 0 &&
            (rc = walk_keyed(t, t->files, t->files_len, index_file)) == 0 &&
            (bad = dirs, rc = read_all(dirs, &t->dirs, &t->dirs_len)) == 0 &&
            (rc = walk_keyed(t, t->dirs, t->dirs_len, index_listing)) == 0 &&
            (bad = stats, rc = read_all(stats, &t->stats, &t->stats_len)) == 0 &&
            (rc = walk_keyed(t, t->stats, t->stats_len, index_stat)) == 0 &&
            (bad = queries,
             rc = read_all(queries, &t->queries, &t->queries_len)) == 0)
            rc = walk_keyed(t, t->queries, t->queries_len, index_query);
        if (rc == 0) {
            bad = links;
            rc = read_all(links, &t->links, &t->links_len);
        }
        char prestate[4096];
        snprintf(prestate, sizeof(prestate), "%s.prestate", prefix);
        t->layered = rc == 0 && access(prestate, F_OK) == 0;
        if (rc == 0)
            cli_prestate_each(prestate, unserve, t);
    }
    if (rc < 0) {
        snprintf(why, why_len, "%s: %s", bad, strerror(-rc));
        cli_tap_close(&t->tap);
        return NULL;
    }
    return &t->tap;
}

const struct proxy_file_tap *cli_tap_files(const struct det_tap *tap)
{
    return tap ? &((const struct file_tap *)tap->ctx)->files_tap : NULL;
}

void cli_tap_close(struct det_tap *tap)
{
    if (!tap)
        return;
    struct file_tap *t = tap->ctx;
    if (t->fd >= 0)
        close(t->fd);
    if (t->files_fd >= 0)
        close(t->files_fd);
    if (t->dirs_fd >= 0)
        close(t->dirs_fd);
    if (t->stats_fd >= 0)
        close(t->stats_fd);
    if (t->queries_fd >= 0)
        close(t->queries_fd);
    if (t->links_fd >= 0)
        close(t->links_fd);
    free(t->links);
    for (size_t i = 0; i < t->nr_answers; i++)
        free(t->answers[i].key);
    free(t->answers);
    for (size_t i = 0; i < t->nr_touched; i++)
        free(t->touched[i]);
    free(t->touched);
    free(t->queries);
    for (size_t i = 0; i < t->nr_stat_results; i++)
        free(t->stat_results[i].key);
    free(t->stat_results);
    free(t->stats);
    for (size_t i = 0; i < t->nr_listings; i++)
        free(t->listings[i].key);
    free(t->listings);
    free(t->dirs);
    for (size_t i = 0; i < t->nr_seen; i++)
        free(t->seen[i]);
    free(t->seen);
    for (size_t i = 0; i < t->nr_index; i++) {
        free(t->index[i].key);
        free(t->index[i].name);
        if (t->index[i].copy >= 0)
            close(t->index[i].copy);
    }
    free(t->index);
    free(t->files);
    free(t->data);
    free(t);
}
