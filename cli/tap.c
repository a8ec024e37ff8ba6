/*
 * tap.c - detcore's tap (det.h) as hvrun record and replay use it inside
 * the run: recording, each value the host gave is appended to a file of
 * the run's scratch directory (a source byte, a u32 length, the bytes);
 * replaying, that file (rebuilt from the recording) is read whole and
 * handed out in order. cmd_record.c moves the file into and out of the
 * recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"

struct file_tap {
    struct det_tap tap;
    int fd;              /* recording: where values go */
    uint8_t *data;       /* replaying: the values */
    size_t len, at;
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

struct det_tap *cli_tap_open(const char *record_to, const char *replay_from,
                             char *why, size_t why_len)
{
    struct file_tap *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->fd = -1;
    t->tap.ctx = t;
    int rc = 0;
    if (record_to) {
        t->fd = open(record_to, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
                                    O_CLOEXEC, 0600);
        rc = t->fd < 0 ? -errno : 0;
        t->tap.put = put_value;
    } else {
        rc = read_all(replay_from, &t->data, &t->len);
        t->tap.get = get_value;
    }
    if (rc < 0) {
        snprintf(why, why_len, "%s: %s", record_to ? record_to : replay_from,
                 strerror(-rc));
        free(t);
        return NULL;
    }
    return &t->tap;
}

void cli_tap_close(struct det_tap *tap)
{
    if (!tap)
        return;
    struct file_tap *t = tap->ctx;
    if (t->fd >= 0)
        close(t->fd);
    free(t->data);
    free(t);
}
