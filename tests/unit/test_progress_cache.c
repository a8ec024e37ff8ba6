/*
 * test_progress_cache.c - progress.c's images kept in the cache directory
 * (syscall-proxy/mm/progress_cache.c): an entry stored is found again with
 * the same key only, holds the body at its offset and is read-only; one
 * cut short is a miss; another key for the same file replaces it; an
 * unwritable directory is silent; the daily sweep removes the images of
 * versions no longer used, as it does the site lists.
 *
 * Each test runs in its own process (Criterion): the once-per-process
 * sweep starts afresh.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "progress_cache.h"
#include "site_cache.h"

static char work[] = "/tmp/hvrun-image-cache.XXXXXX";
static char cache[256];

static void make_work(void)
{
    cache_fixture_make(work, cache, sizeof(cache));
}

static void remove_work(void) { cache_fixture_remove(work); }

static struct progress_image_key key(uint64_t above_base)
{
    return (struct progress_image_key){
        .dev = 0xfe00, .ino = 1234, .size = 99999, .mtime_ns = 5555,
        .ctime_ns = 6666, .file_off = 0x1000, .len = 2 * 4096,
        .text_above_base = above_base, .cpuid_patching = 0,
        .counter_gva = 0x7fff0000, .tramp_align = 8, .site_bytes = 64};
}

static uint8_t body[3 * 4096];
static uint8_t sites[2 * 64];

static void store(uint64_t above_base)
{
    struct progress_image_key k = key(above_base);
    struct progress_image_layout l = {.most = 8192, .tramp_len = 4096,
                                      .nr_sites = 2};
    for (size_t i = 0; i < sizeof(body); i++)
        body[i] = (uint8_t)(i * 7 + above_base);
    memset(sites, 0xab, sizeof(sites));
    progress_image_cache_store(&k, &l, body, sites);
}

/* The number of entries in the cache whose name starts with prefix; the
 * last one's path in path. */
static int entries(const char *prefix, char *path, size_t len)
{
    DIR *d = opendir(cache);
    cr_assert_not_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            n++;
            if (path)
                snprintf(path, len, "%s/%s", cache, e->d_name);
        }
    closedir(d);
    return n;
}

Test(image_cache, stored_entry_found_with_its_key_only, .init = make_work,
     .fini = remove_work)
{
    store(0x3000);
    struct progress_image_key k = key(0x3000);
    struct progress_image_layout l;
    int fd = progress_image_cache_open(&k, &l);
    cr_assert_geq(fd, 0, "the entry just stored is found");
    cr_expect_eq(l.tramp_len, 4096);
    cr_expect_eq(l.nr_sites, 2);
    cr_expect_eq(l.most, 8192);
    cr_expect_eq(l.sites_off, PROGRESS_IMAGE_TEXT_OFF + 3 * 4096,
                 "the sites' record after the trampolines");
    uint8_t got[sizeof(body)];
    cr_expect_eq(pread(fd, got, sizeof(got), PROGRESS_IMAGE_TEXT_OFF),
                 (ssize_t)sizeof(got));
    cr_expect(!memcmp(got, body, sizeof(body)), "the text and trampolines");
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0444, "read-only");
    close(fd);
    struct progress_image_key other = key(0x4000);
    cr_expect_lt(progress_image_cache_open(&other, &l), 0,
                 "another distance above the base is a miss");
    other = key(0x3000);
    other.cpuid_patching = 1;
    cr_expect_lt(progress_image_cache_open(&other, &l), 0,
                 "CPUID sites left alone or not: a miss");
    other = key(0x3000);
    other.ctime_ns++;
    cr_expect_lt(progress_image_cache_open(&other, &l), 0,
                 "another ctime is a miss");
}

Test(image_cache, entry_cut_short_is_a_miss, .init = make_work,
     .fini = remove_work)
{
    store(0x3000);
    char path[600];
    cr_assert_eq(entries(PROGRESS_IMAGE_PREFIX, path, sizeof(path)), 1);
    cr_assert_eq(truncate(path, PROGRESS_IMAGE_TEXT_OFF + 4096), 0);
    struct progress_image_key k = key(0x3000);
    struct progress_image_layout l;
    cr_expect_lt(progress_image_cache_open(&k, &l), 0);
}

Test(image_cache, another_key_replaces_the_entry, .init = make_work,
     .fini = remove_work)
{
    store(0x3000);
    store(0x5000);
    cr_expect_eq(entries(PROGRESS_IMAGE_PREFIX, NULL, 0), 1,
                 "one entry per file and version");
    struct progress_image_key k = key(0x5000);
    struct progress_image_layout l;
    int fd = progress_image_cache_open(&k, &l);
    cr_expect_geq(fd, 0, "the last stored is found");
    if (fd >= 0)
        close(fd);
}

Test(image_cache, unwritable_directory_is_silent, .init = make_work,
     .fini = remove_work)
{
    char file[300];
    snprintf(file, sizeof(file), "%s/file", work);
    int fd = open(file, O_WRONLY | O_CREAT, 0600);
    cr_assert_geq(fd, 0);
    close(fd);
    setenv("XDG_CACHE_HOME", file, 1); /* its "hvrun" cannot be made */
    store(0x3000);
    struct progress_image_key k = key(0x3000);
    struct progress_image_layout l;
    cr_expect_lt(progress_image_cache_open(&k, &l), 0);
}

Test(image_cache, unused_versions_images_swept, .init = make_work,
     .fini = remove_work)
{
    store(0x3000);
    char old[400];
    snprintf(old, sizeof(old), "%s/" PROGRESS_IMAGE_PREFIX "r0-f1-old-1-2-3-4",
             cache);
    int fd = open(old, O_WRONLY | O_CREAT, 0600);
    cr_assert_geq(fd, 0);
    close(fd);
    proxy_site_cache_note_used(); /* no marker yet: the sweep runs */
    cr_expect_neq(access(old, F_OK), 0, "an unused version's image swept");
    cr_expect_eq(entries(PROGRESS_IMAGE_PREFIX, NULL, 0), 1,
                 "this version's image kept");
}
