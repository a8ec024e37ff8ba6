/*
 * recording.c - writing and loading the file of a recorded run
 * (recording.h has the layout). The header is a flattened device tree
 * built with libfdt's sequential writer and checked with fdt_check_full;
 * the events are one zstd stream. Both ends of the file carry an FNV-1a
 * checksum of what they frame, so any changed bit is found before replay,
 * and every length is checked against what is there before it is used.
 */
#include "recording.h"

#include <errno.h>
#include <fcntl.h>
#include <libfdt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define REC_MAGIC "HVRUNREC"
#define REC_END_MAGIC "HVRUNEND"
#define REC_PREFIX_BYTES 24 /* magic, version, header bytes, checksum */
#define REC_TRAILER_BYTES 16
#define REC_EVENT_HEAD_BYTES 19 /* kind, tid, nr, value, len */
#define REC_MAX_FILE (1ULL << 34)
#define REC_MAX_BODY (1ULL << 36)
#define REC_ZSTD_LEVEL 3

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* ---- the header ------------------------------------------------------------ */

static size_t list_bytes(const char *const *l, int *count)
{
    size_t n = 0;
    int i = 0;
    for (; l && l[i] && i < DET_REC_MAX_STRINGS; i++)
        n += strlen(l[i]) + 1;
    *count = i;
    return n;
}

/* A string list property: the strings one after another, each with its
 * NUL, as device trees keep "compatible". */
static int put_list(void *fdt, const char *name, const char *const *l)
{
    int count;
    size_t len = list_bytes(l, &count);
    char *buf = malloc(len ? len : 1);
    if (!buf)
        return -FDT_ERR_NOSPACE;
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        size_t s = strlen(l[i]) + 1;
        memcpy(buf + at, l[i], s);
        at += s;
    }
    int rc = fdt_property(fdt, name, buf, (int)len);
    free(buf);
    return rc;
}

static int put_string(void *fdt, const char *name, const char *s)
{
    return fdt_property_string(fdt, name, s ? s : "");
}

static int build_fdt(void *buf, int size, const struct det_rec_header *h)
{
    int rc;
    if ((rc = fdt_create(buf, size)) < 0 ||
        (rc = fdt_finish_reservemap(buf)) < 0 ||
        (rc = fdt_begin_node(buf, "")) < 0 ||
        (rc = fdt_property_u32(buf, "format-version",
                               DET_REC_FORMAT_VERSION)) < 0 ||
        (rc = put_string(buf, "hvrun-version", h->hvrun_version)) < 0 ||
        (rc = put_string(buf, "backend", h->backend)) < 0 ||
        (rc = put_string(buf, "cpu", h->cpu)) < 0 ||
        (rc = put_string(buf, "cpu-seen", h->cpu_seen)) < 0 ||
        (rc = put_string(buf, "cwd", h->cwd)) < 0 ||
        (rc = put_list(buf, "argv", h->argv)) < 0 ||
        (rc = put_list(buf, "env", h->env)) < 0 ||
        (rc = put_list(buf, "options", h->options)) < 0 ||
        (rc = put_list(buf, "host-gaps", h->host_gaps)) < 0 ||
        (rc = fdt_end_node(buf)) < 0 || (rc = fdt_finish(buf)) < 0)
        return rc;
    return 0;
}

/* The header blob (malloc'd) and its size, or NULL. */
static void *make_fdt(const struct det_rec_header *h, size_t *len)
{
    int c;
    size_t need = 1024 + list_bytes(h->argv, &c) + list_bytes(h->env, &c) +
                  list_bytes(h->options, &c) + list_bytes(h->host_gaps, &c);
    for (int tries = 0; tries < 8 && need < (1u << 30); tries++, need *= 2) {
        void *buf = malloc(need);
        if (!buf)
            return NULL;
        int rc = build_fdt(buf, (int)need, h);
        if (rc == 0) {
            *len = fdt_totalsize(buf);
            return buf;
        }
        free(buf);
        if (rc != -FDT_ERR_NOSPACE)
            return NULL;
    }
    return NULL;
}

/* ---- writing ----------------------------------------------------------------- */

struct det_rec_writer {
    int fd;
    char *path, *tmp;
    ZSTD_CCtx *z;
    uint64_t body_fnv;
    uint64_t events;
    int error; /* the first -errno, sticky */
};

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Feeds bytes to the compressor (mode: ZSTD_e_continue or _end), writing
 * what comes out. */
static int compress(struct det_rec_writer *w, const void *p, size_t n,
                    ZSTD_EndDirective mode)
{
    uint8_t out[1 << 16];
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer o = {out, sizeof(out), 0};
        size_t left = ZSTD_compressStream2(w->z, &o, &in, mode);
        if (ZSTD_isError(left))
            return -EIO;
        if (o.pos) {
            w->body_fnv = fnv1a(w->body_fnv, out, o.pos);
            int rc = write_all(w->fd, out, o.pos);
            if (rc < 0)
                return rc;
        }
        if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
            return 0;
    }
}

static void writer_free(struct det_rec_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    ZSTD_freeCCtx(w->z);
    free(w->path);
    free(w->tmp);
    free(w);
}

int det_rec_create(struct det_rec_writer **out, const char *path,
                   const struct det_rec_header *h)
{
    struct det_rec_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->fd = -1;
    w->body_fnv = FNV_INIT;
    size_t plen = strlen(path);
    w->path = strdup(path);
    w->tmp = malloc(plen + 5);
    w->z = ZSTD_createCCtx();
    if (!w->path || !w->tmp || !w->z) {
        writer_free(w);
        return -ENOMEM;
    }
    memcpy(w->tmp, path, plen);
    memcpy(w->tmp + plen, ".tmp", 5);
    ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, REC_ZSTD_LEVEL);
    ZSTD_CCtx_setParameter(w->z, ZSTD_c_checksumFlag, 1);
    size_t hlen = 0;
    void *fdt = make_fdt(h, &hlen);
    if (!fdt) {
        writer_free(w);
        return -ENOMEM;
    }
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = w->fd < 0 ? -errno : 0;
    uint8_t prefix[REC_PREFIX_BYTES];
    memcpy(prefix, REC_MAGIC, 8);
    put_le(prefix + 8, DET_REC_FORMAT_VERSION, 4);
    put_le(prefix + 12, hlen, 4);
    put_le(prefix + 16, fnv1a(FNV_INIT, fdt, hlen), 8);
    if (rc == 0)
        rc = write_all(w->fd, prefix, sizeof(prefix));
    if (rc == 0)
        rc = write_all(w->fd, fdt, hlen);
    free(fdt);
    if (rc < 0) {
        det_rec_abandon(w);
        return rc;
    }
    *out = w;
    return 0;
}

int det_rec_append(struct det_rec_writer *w, const struct det_rec_event *ev)
{
    if (w->error)
        return w->error;
    uint8_t head[REC_EVENT_HEAD_BYTES];
    head[0] = ev->kind;
    put_le(head + 1, ev->tid, 4);
    put_le(head + 5, ev->nr, 2);
    put_le(head + 7, (uint64_t)ev->value, 8);
    put_le(head + 15, ev->len, 4);
    int rc = compress(w, head, sizeof(head), ZSTD_e_continue);
    if (rc == 0 && ev->len)
        rc = compress(w, ev->data, ev->len, ZSTD_e_continue);
    if (rc < 0)
        w->error = rc;
    else
        w->events++;
    return rc;
}

int det_rec_finish(struct det_rec_writer *w, int exit_status,
                   uint64_t detlog_digest)
{
    uint8_t tail[16];
    put_le(tail, detlog_digest, 8);
    put_le(tail + 8, w->events + 1, 8);
    struct det_rec_event end = {.kind = DET_REC_END, .nr = 0xffff,
                                .value = exit_status, .len = sizeof(tail),
                                .data = tail};
    int rc = det_rec_append(w, &end);
    if (rc == 0)
        rc = compress(w, NULL, 0, ZSTD_e_end);
    uint8_t trailer[REC_TRAILER_BYTES];
    memcpy(trailer, REC_END_MAGIC, 8);
    put_le(trailer + 8, w->body_fnv, 8);
    if (rc == 0)
        rc = write_all(w->fd, trailer, sizeof(trailer));
    if (rc == 0 && fsync(w->fd) < 0)
        rc = -errno;
    if (rc == 0 && rename(w->tmp, w->path) < 0)
        rc = -errno;
    if (rc < 0) {
        det_rec_abandon(w);
        return rc;
    }
    writer_free(w);
    return 0;
}

void det_rec_abandon(struct det_rec_writer *w)
{
    if (!w)
        return;
    unlink(w->tmp);
    writer_free(w);
}

/* ---- loading --------------------------------------------------------------- */

static int refuse(char *why, size_t len, int rc, const char *what)
{
    snprintf(why, len, "%s", what);
    return rc;
}

static int read_file(const char *path, struct det_recording *r, char *why,
                     size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, len, "%s", strerror(e));
        return -e;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode))
        rc = refuse(why, len, -EINVAL, "not a regular file");
    else if ((uint64_t)st.st_size > REC_MAX_FILE)
        rc = refuse(why, len, -EINVAL, "too large for a recording");
    else if (!(r->file = malloc((size_t)st.st_size + 1)))
        rc = -ENOMEM;
    size_t got = 0;
    while (rc == 0 && got < (size_t)st.st_size) {
        ssize_t n = read(fd, (uint8_t *)r->file + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : refuse(why, len, -EINVAL, "shorter than its size");
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    if (rc == -ENOMEM || (rc < 0 && !why[0]))
        snprintf(why, len, "%s", strerror(-rc));
    r->file_len = got;
    return rc;
}

/* The header: present, unchanged, a well-formed tree with what replay
 * needs. */
static int check_header(struct det_recording *r, uint64_t *hlen_out,
                        char *why, size_t len)
{
    const uint8_t *f = r->file;
    if (r->file_len < REC_PREFIX_BYTES + REC_TRAILER_BYTES ||
        memcmp(f, REC_MAGIC, 8) != 0)
        return refuse(why, len, -EINVAL,
                      r->file_len >= 8 && !memcmp(f, REC_MAGIC, 8)
                          ? "truncated (no room for its header)"
                          : "not an hvrun recording");
    uint32_t version = (uint32_t)get_le(f + 8, 4);
    if (version != DET_REC_FORMAT_VERSION) {
        snprintf(why, len,
                 "recording format version %u; this hvrun reads version %d",
                 version, DET_REC_FORMAT_VERSION);
        return -EPROTO;
    }
    uint64_t hlen = get_le(f + 12, 4);
    if (hlen > r->file_len - REC_PREFIX_BYTES - REC_TRAILER_BYTES)
        return refuse(why, len, -EINVAL, "truncated (inside its header)");
    const uint8_t *hdr = f + REC_PREFIX_BYTES;
    if (fnv1a(FNV_INIT, hdr, hlen) != get_le(f + 16, 8))
        return refuse(why, len, -EINVAL, "corrupt header (checksum)");
    if (fdt_check_full(hdr, hlen) != 0 || fdt_totalsize(hdr) != hlen)
        return refuse(why, len, -EINVAL, "corrupt header (not a valid tree)");
    r->fdt = hdr;
    if (!det_rec_string(r, "hvrun-version") || !det_rec_string(r, "backend") ||
        !det_rec_list(r, "argv", 0))
        return refuse(why, len, -EINVAL, "header lacks hvrun-version, "
                                         "backend or argv");
    *hlen_out = hlen;
    return 0;
}

/* Doubles the decompression buffer, up to REC_MAX_BODY. */
static bool grow(uint8_t **out, size_t *cap)
{
    uint8_t *g = *cap < REC_MAX_BODY ? realloc(*out, *cap * 2) : NULL;
    if (!g)
        return false;
    *out = g;
    *cap *= 2;
    return true;
}

static int decompress_body(struct det_recording *r, const uint8_t *p, size_t n,
                           char *why, size_t len)
{
    ZSTD_DCtx *z = ZSTD_createDCtx();
    size_t cap = n * 4 + 4096, used = 0;
    uint8_t *out = malloc(cap);
    if (!z || !out) {
        ZSTD_freeDCtx(z);
        free(out);
        return refuse(why, len, -ENOMEM, strerror(ENOMEM));
    }
    ZSTD_inBuffer in = {p, n, 0};
    size_t ret = 1;
    int rc = 0;
    while (rc == 0 && in.pos < in.size) {
        if (used == cap && !grow(&out, &cap)) {
            rc = refuse(why, len, -EINVAL, "events too large");
            break;
        }
        ZSTD_outBuffer o = {out, cap, used};
        ret = ZSTD_decompressStream(z, &o, &in);
        used = o.pos;
        if (ZSTD_isError(ret))
            rc = refuse(why, len, -EINVAL, "corrupt events (zstd)");
        else if (ret == 0 && in.pos < in.size)
            rc = refuse(why, len, -EINVAL, "corrupt events (data after them)");
    }
    /* Output the decoder still holds once all input is in. */
    while (rc == 0 && ret != 0) {
        if (used == cap && !grow(&out, &cap)) {
            rc = refuse(why, len, -EINVAL, "events too large");
            break;
        }
        ZSTD_outBuffer o = {out, cap, used};
        size_t before = used;
        ret = ZSTD_decompressStream(z, &o, &in);
        used = o.pos;
        if (ZSTD_isError(ret))
            rc = refuse(why, len, -EINVAL, "corrupt events (zstd)");
        else if (ret != 0 && used == before && used < cap)
            rc = refuse(why, len, -EINVAL, "truncated (inside its events)");
    }
    ZSTD_freeDCtx(z);
    if (rc < 0) {
        free(out);
        return rc;
    }
    r->body = out;
    r->body_len = used;
    return 0;
}

static int parse_events(struct det_recording *r, char *why, size_t len)
{
    size_t cap = 256, n = 0, at = 0;
    struct det_rec_event *ev = malloc(cap * sizeof(*ev));
    if (!ev)
        return refuse(why, len, -ENOMEM, strerror(ENOMEM));
    bool ended = false;
    while (at < r->body_len) {
        if (ended || r->body_len - at < REC_EVENT_HEAD_BYTES) {
            free(ev);
            return refuse(why, len, -EINVAL, ended ? "corrupt events (after "
                                                     "the end)"
                                                   : "corrupt events (a cut "
                                                     "record)");
        }
        const uint8_t *h = r->body + at;
        struct det_rec_event e = {
            .kind = h[0], .tid = (uint32_t)get_le(h + 1, 4),
            .nr = (uint16_t)get_le(h + 5, 2), .value = (int64_t)get_le(h + 7, 8),
            .len = (uint32_t)get_le(h + 15, 4)};
        at += REC_EVENT_HEAD_BYTES;
        if (e.kind < DET_REC_SYSCALL || e.kind > DET_REC_KIND_MAX ||
            e.len > r->body_len - at ||
            (e.kind == DET_REC_END && e.len != 16)) {
            free(ev);
            return refuse(why, len, -EINVAL, "corrupt events (a bad record)");
        }
        e.data = r->body + at;
        at += e.len;
        if (n == cap) {
            struct det_rec_event *g = realloc(ev, cap * 2 * sizeof(*ev));
            if (!g) {
                free(ev);
                return refuse(why, len, -ENOMEM, strerror(ENOMEM));
            }
            ev = g;
            cap *= 2;
        }
        ev[n++] = e;
        if (e.kind == DET_REC_END) {
            ended = true;
            r->exit_status = (int)e.value;
            r->detlog_digest = get_le(e.data, 8);
            if (get_le(e.data + 8, 8) != n) {
                free(ev);
                return refuse(why, len, -EINVAL,
                              "corrupt events (count at the end)");
            }
        }
    }
    if (!ended) {
        free(ev);
        return refuse(why, len, -EINVAL, "truncated (no end record)");
    }
    r->events = ev;
    r->nr_events = n;
    return 0;
}

int det_rec_load(const char *path, struct det_recording *r, char *why,
                 size_t why_len)
{
    memset(r, 0, sizeof(*r));
    why[0] = '\0';
    int rc = read_file(path, r, why, why_len);
    uint64_t hlen = 0;
    if (rc == 0)
        rc = check_header(r, &hlen, why, why_len);
    if (rc == 0) {
        const uint8_t *f = r->file;
        const uint8_t *body = f + REC_PREFIX_BYTES + hlen;
        const uint8_t *tr = f + r->file_len - REC_TRAILER_BYTES;
        size_t blen = (size_t)(tr - body);
        if (memcmp(tr, REC_END_MAGIC, 8) != 0)
            rc = refuse(why, why_len, -EINVAL, "truncated (no end mark)");
        else if (fnv1a(FNV_INIT, body, blen) != get_le(tr + 8, 8))
            rc = refuse(why, why_len, -EINVAL, "corrupt events (checksum)");
        else
            rc = decompress_body(r, body, blen, why, why_len);
    }
    if (rc == 0)
        rc = parse_events(r, why, why_len);
    if (rc < 0)
        det_rec_free(r);
    return rc;
}

void det_rec_free(struct det_recording *r)
{
    free(r->file);
    free(r->body);
    free(r->events);
    memset(r, 0, sizeof(*r));
}

const char *det_rec_string(const struct det_recording *r, const char *name)
{
    int len;
    const char *s = fdt_getprop(r->fdt, 0, name, &len);
    if (!s || len < 1 || s[len - 1] != '\0')
        return NULL;
    return s;
}

const char *det_rec_list(const struct det_recording *r, const char *name,
                         int i)
{
    return fdt_stringlist_get(r->fdt, 0, name, i, NULL);
}
