/*
 * progress_cache.c - progress.c's images across runs. Rewriting a file's
 * text into an image costs the first process of every run that maps it
 * (python3 -c pass took twice the CPU time with counted progress as
 * without: docs/PERFORMANCE.md). So an image made in one run is kept in
 * hvrun's cache directory, and a later run maps that file (read-only,
 * MAP_SHARED in hvrun's view of the guest and in a ptrace stub, as the
 * run's memfd image is: a guest's write copies the page first, never
 * writes the file) instead of rewriting.
 *
 * The file: a header page (magic, the versions, the key, the layout, the
 * file's size), the text from PROGRESS_IMAGE_TEXT_OFF, the trampolines
 * after it, then the sites' record (put_back's, read only when a text
 * moves). Its name is the site lists' (site_cache.h: prefix, the
 * rewriter's, finder's and hvrun's versions, the file's dev, inode, size
 * and mtime), so cpuid_sites.c bounds and sweeps these entries as it does
 * the lists: one per file and version. What the name does not say (the
 * text's range, the trampolines' distance, whether CPUID sites were left
 * alone, ctime, the rewriter's constants) the header does; any mismatch
 * is a miss, and the run then makes the image and replaces the entry.
 * A reader checks the header and the size only: the file is written
 * whole to a temporary, put on disk (fdatasync: an entry renamed before
 * its data reached the disk would survive a power loss as text the guest
 * runs) and renamed (a crash or a concurrent run leaves a whole entry or
 * none), made read-only, and never written again.
 */
#include "progress_cache.h"
#include "site_cache.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define IMAGE_MAGIC 0x6567616d69677270ULL /* "prgimage" */

struct image_header {
    uint64_t magic;
    char versions[64];
    struct progress_image_key key;
    struct progress_image_layout layout;
    uint64_t file_bytes;
};

_Static_assert(sizeof(struct image_header) <= PROGRESS_IMAGE_TEXT_OFF,
               "the header fits before the text");

static int image_path(const struct progress_image_key *k, char *out,
                      size_t len)
{
    return proxy_site_cache_path(PROGRESS_IMAGE_PREFIX,
                                 PROGRESS_IMAGE_VERSIONS, k->dev, k->ino,
                                 k->size, k->mtime_ns, out, len);
}

/* The versions as a header holds them (zero-padded). */
static void versions_field(char out[64])
{
    memset(out, 0, 64);
    snprintf(out, 64, "%s", PROGRESS_IMAGE_VERSIONS);
}

/* Whether the layout h says fits the file's size and the key's text. */
static bool layout_fits(const struct image_header *h)
{
    const struct progress_image_layout *l = &h->layout;
    uint64_t body_end = PROGRESS_IMAGE_TEXT_OFF + h->key.len + l->tramp_len;
    return l->tramp_len > 0 && l->nr_sites > 0 &&
           l->nr_sites <= h->key.len && l->sites_off >= body_end &&
           l->sites_off + l->nr_sites * h->key.site_bytes == h->file_bytes;
}

/* Whether fd's filesystem lets a mapping of it execute. */
static bool may_execute(int fd)
{
    struct statvfs sv;
    return fstatvfs(fd, &sv) == 0 && !(sv.f_flag & ST_NOEXEC);
}

int progress_image_cache_open(const struct progress_image_key *k,
                              struct progress_image_layout *out)
{
    char path[768], versions[64];
    if (image_path(k, path, sizeof(path)) < 0)
        return -1;
    int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct image_header h;
    struct stat st;
    versions_field(versions);
    bool ok = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
              h.magic == IMAGE_MAGIC &&
              !memcmp(h.versions, versions, sizeof(versions)) &&
              !memcmp(&h.key, k, sizeof(*k)) && layout_fits(&h) &&
              fstat(fd, &st) == 0 &&
              (uint64_t)st.st_size == h.file_bytes && may_execute(fd);
    if (!ok) {
        close(fd);
        return -1;
    }
    *out = h.layout;
    return fd;
}

static bool pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const uint8_t *b = buf;
    while (len) {
        ssize_t n = pwrite(fd, b, len, (off_t)off);
        if (n <= 0)
            return false; /* ENOSPC, EIO: the entry is not kept */
        b += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return true;
}

void progress_image_cache_store(const struct progress_image_key *k,
                                struct progress_image_layout *l,
                                const void *body, const void *sites)
{
    char path[768], tmp[800];
    if (image_path(k, path, sizeof(path)) < 0)
        return;
    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return; /* an unwritable directory: this run's image only */
    l->sites_off = PROGRESS_IMAGE_TEXT_OFF + k->len + l->tramp_len;
    struct image_header h = {.magic = IMAGE_MAGIC, .key = *k, .layout = *l};
    versions_field(h.versions);
    h.file_bytes = l->sites_off + l->nr_sites * k->site_bytes;
    /* The header last: a file cut short by a full disk is removed, and
     * one renamed is whole. */
    bool ok = may_execute(fd) &&
              pwrite_all(fd, body, k->len + l->tramp_len,
                         PROGRESS_IMAGE_TEXT_OFF) &&
              pwrite_all(fd, sites, l->nr_sites * k->site_bytes,
                         l->sites_off) &&
              pwrite_all(fd, &h, sizeof(h), 0) && fchmod(fd, 0444) == 0 &&
              fdatasync(fd) == 0;
    close(fd);
    /* the *at forms: the calls hvrun's seccomp filter allows */
    if (!ok || renameat(AT_FDCWD, tmp, AT_FDCWD, path) < 0)
        (void)unlinkat(AT_FDCWD, tmp, 0);
    else
        proxy_site_cache_written(PROGRESS_IMAGE_PREFIX,
                                 PROGRESS_IMAGE_VERSIONS, k->dev, k->ino,
                                 path);
}
