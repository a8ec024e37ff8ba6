/*
 * site_cache.h - the entries hvrun keeps in its cache directory for a
 * guest file (cpuid_sites.c names them and keeps them bounded): the
 * CPUID/RDTSC sites and the back edges of a file (cpuid_sites.c), and
 * the progress images made from them (progress_cache.c). An entry's name
 * is PREFIX VERSIONS-DEV-INO-SIZE-MTIME: what made it and which file's
 * contents it describes.
 */
#ifndef PROXY_MM_SITE_CACHE_H
#define PROXY_MM_SITE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#ifndef HVRUN_VERSION
#define HVRUN_VERSION "dev"
#endif

/* Bump it when the finder changes what it reports. */
#define SITE_FINDER_VERSION "f15"
/* Bump it when progress.c's rewrite changes what an image holds (its
 * trampolines, its jmps, the sites' record, the image file's layout). */
#define PROGRESS_REWRITER_VERSION "r3"

#define SITE_VERSIONS SITE_FINDER_VERSION "-" HVRUN_VERSION
#define PROGRESS_IMAGE_VERSIONS PROGRESS_REWRITER_VERSION "-" SITE_VERSIONS
#define PROGRESS_IMAGE_PREFIX "progress-image-"

/* out: the entry's path for the file (dev, ino, size, mtime_ns) in the
 * cache directory (made if missing). 0, or -1: no cache (HVRUN_NO_CACHE,
 * no home) or the name too long. */
int proxy_site_cache_path(const char *prefix, const char *versions,
                          uint64_t dev, uint64_t ino, uint64_t size,
                          uint64_t mtime_ns, char *out, size_t len);
/* path, an entry of prefix and versions for the file (dev, ino), was just
 * written: the file's other entries of the same kind go as cpuid_sites.c's
 * "cache's growth" says. */
void proxy_site_cache_written(const char *prefix, const char *versions,
                              uint64_t dev, uint64_t ino, const char *path);
/* Once per process: this hvrun's versions are in use; once a day, the
 * sweep of the unused ones' entries. */
void proxy_site_cache_note_used(void);

#endif
