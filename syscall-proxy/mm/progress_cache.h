/*
 * progress_cache.h - progress.c's images kept across runs in hvrun's
 * cache directory (progress_cache.c).
 */
#ifndef PROXY_MM_PROGRESS_CACHE_H
#define PROXY_MM_PROGRESS_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Where the text starts in a cached image's file (its header before):
 * the trampolines follow it, then the sites' record. */
#define PROGRESS_IMAGE_TEXT_OFF 4096ULL

/* What an image's bytes depend on besides the versions in its name: all
 * of it must match for a cached image to be used (no padding: compared
 * as bytes). */
struct progress_image_key {
    uint64_t dev, ino, size, mtime_ns, ctime_ns; /* the file's contents */
    uint64_t file_off, len;                      /* the text's range */
    /* The text's distance above the file's lowest mapping next to it,
     * which places the trampolines (0 in the run's in-memory key). */
    uint64_t text_above_base;
    uint64_t cpuid_patching; /* 1: its CPUID/RDTSC sites left alone */
    uint64_t loop_copies;    /* 1: short loops' bodies copied */
    uint64_t counter_gva, tramp_align, site_bytes; /* the rewriter's */
};

/* What an image holds past its text. */
struct progress_image_layout {
    uint64_t most;      /* the room below the file's base it was made in */
    uint64_t tramp_len; /* the trampolines' bytes (whole pages) */
    uint64_t nr_sites;  /* the sites' record: nr_sites * site_bytes */
    uint64_t sites_off; /* at this offset of the file */
};

/* An fd (read-only) of the cached image for k, its header and size
 * checked and its layout in *out; -1 when there is none (or it is on a
 * filesystem that cannot map code). Silent. */
int progress_image_cache_open(const struct progress_image_key *k,
                              struct progress_image_layout *out);
/* Keeps an image made in this run: body the text (k->len bytes) and the
 * trampolines (l->tramp_len), sites l->nr_sites records; l->sites_off is
 * set. Written to a temporary and renamed; silent when that fails (an
 * unwritable or full cache directory). */
void progress_image_cache_store(const struct progress_image_key *k,
                                struct progress_image_layout *l,
                                const void *body, const void *sites);

#endif
