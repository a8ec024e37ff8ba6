/*
 * test_site_cache.c - the on-disk cache of a file's sites
 * (syscall-proxy/mm/cpuid_sites.c, cache_prune and the daily sweep): each
 * finder/hvrun version keeps its own entry for a file, an entry written
 * replaces this version's entries for the file's older contents, a file
 * keeps at most four entries per list, and the entries of versions unused
 * for 30 days, and every entry written 30 days ago, go.
 *
 * Each test runs in its own process (Criterion), so the finder's
 * per-process memory and its once-per-process sweep start afresh.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "cpuid_patch.h"

#define DAY_S 86400

static char work[] = "/tmp/hvrun-site-cache.XXXXXX";
static char cache[256];

static void copy_file(const char *from, const char *to)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void make_work(void)
{
    cache_fixture_make(work, cache, sizeof(cache));
    char a[300], b[300];
    snprintf(a, sizeof(a), "%s/a", work);
    snprintf(b, sizeof(b), "%s/b", work);
    copy_file("/bin/true", a);
    copy_file("/bin/true", b);
}

static void remove_work(void) { cache_fixture_remove(work); }

/* Creates cache/NAME, its mtime days_old days ago. */
static void touch_old(const char *name, int days_old)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", cache, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0, "%s", path);
    struct timespec t[2] = {{time(NULL) - (time_t)days_old * DAY_S, 0},
                            {time(NULL) - (time_t)days_old * DAY_S, 0}};
    cr_assert_eq(futimens(fd, t), 0);
    close(fd);
}

static bool cached(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", cache, name);
    return access(path, F_OK) == 0;
}

/* The name of a cpuid-sites entry of versions for the file at path. */
static void entry_name(char *out, size_t len, const char *versions,
                       const char *path, unsigned long long size)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    unsigned long long mtime = (unsigned long long)st.st_mtim.tv_sec *
                                   1000000000ULL +
                               (unsigned long long)st.st_mtim.tv_nsec;
    snprintf(out, len, "cpuid-sites-%s-%llx-%llx-%llx-%llx", versions,
             (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
             size ? size : (unsigned long long)st.st_size, mtime);
}

static const struct file_sites *sites_of_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    const struct file_sites *fs = proxy_cpuid_sites_of(fd);
    close(fd);
    cr_assert_not_null(fs);
    return fs;
}

/* This build's "FINDER-VERSION", read off the entry it writes for a. */
static void our_versions(char *out, size_t len)
{
    char a[300];
    snprintf(a, sizeof(a), "%s/a", work);
    sites_of_path(a);
    struct stat st;
    cr_assert_eq(stat(a, &st), 0);
    char tail[128];
    snprintf(tail, sizeof(tail), "-%llx-%llx-", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    DIR *d = opendir(cache);
    cr_assert_not_null(d);
    struct dirent *e;
    out[0] = 0;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "cpuid-sites-", 12) && strstr(e->d_name, tail))
            snprintf(out, len, "%.*s",
                     (int)(strstr(e->d_name, tail) - e->d_name - 12),
                     e->d_name + 12);
    closedir(d);
    cr_assert_neq(out[0], 0, "no entry written for %s", a);
}

Test(site_cache, other_versions_entries_kept_own_older_contents_replaced,
     .init = make_work, .fini = remove_work)
{
    char ours[128], b[300], name[400];
    snprintf(b, sizeof(b), "%s/b", work);
    our_versions(ours, sizeof(ours));
    /* Before b is decoded: another version's entry for it (in use), and
     * this version's entry for b's older contents (another size). */
    touch_old("sites-used-f0-other", 0);
    char other[400], stale[400];
    entry_name(other, sizeof(other), "f0-other", b, 0);
    entry_name(stale, sizeof(stale), ours, b, 1);
    touch_old(other, 0);
    touch_old(stale, 0);
    sites_of_path(b);
    entry_name(name, sizeof(name), ours, b, 0);
    cr_expect(cached(name), "this version's entry %s written", name);
    cr_expect(cached(other), "another version's entry %s deleted", other);
    cr_expect(!cached(stale), "the older contents' entry %s kept", stale);
}

Test(site_cache, at_most_four_entries_per_file, .init = make_work,
     .fini = remove_work)
{
    char ours[128], b[300], names[4][400];
    snprintf(b, sizeof(b), "%s/b", work);
    our_versions(ours, sizeof(ours));
    static const char *const versions[4] = {"f1-x", "f2-x", "f3-x", "f4-x"};
    for (int i = 0; i < 4; i++) {
        char marker[64];
        snprintf(marker, sizeof(marker), "sites-used-%s", versions[i]);
        touch_old(marker, 0);
        entry_name(names[i], sizeof(names[i]), versions[i], b, 0);
        touch_old(names[i], 4 - i); /* f1-x the least recently written */
    }
    sites_of_path(b);
    cr_expect(!cached(names[0]), "the oldest entry %s kept past four",
              names[0]);
    for (int i = 1; i < 4; i++)
        cr_expect(cached(names[i]), "entry %s deleted", names[i]);
}

/* This build's versions from the marker its lookups touch. */
static void versions_from_marker(char *out, size_t len)
{
    DIR *d = opendir(cache);
    cr_assert_not_null(d);
    struct dirent *e;
    out[0] = 0;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "sites-used-", 11))
            snprintf(out, len, "%s", e->d_name + 11);
    closedir(d);
    cr_assert_neq(out[0], 0, "no sites-used- marker in %s", cache);
}

Test(site_cache, unused_versions_and_old_entries_swept, .init = make_work,
     .fini = remove_work)
{
    char ours[128], b[300], marker[200];
    snprintf(b, sizeof(b), "%s/b", work);
    /* A child's lookup writes this version's marker; made two days old,
     * the next lookup (this process's first) sweeps. */
    pid_t child = fork();
    if (child == 0) {
        char a[300];
        snprintf(a, sizeof(a), "%s/a", work);
        sites_of_path(a);
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert_eq(status, 0);
    versions_from_marker(ours, sizeof(ours));
    snprintf(marker, sizeof(marker), "sites-used-%s", ours);
    touch_old(marker, 2);
    /* Entries of a version last used 31 days ago, of one used 29 days
     * ago (written 20 days ago) and of one without a marker (older
     * hvruns); this version's written 31 days ago and today. */
    char gone[400], recent[400], unmarked[400], ours_old[400], ours_new[400];
    touch_old("sites-used-f0-gone", 31);
    touch_old("sites-used-f0-recent", 29);
    entry_name(gone, sizeof(gone), "f0-gone", b, 0);
    entry_name(recent, sizeof(recent), "f0-recent", b, 0);
    entry_name(unmarked, sizeof(unmarked), "f0-unmarked", b, 0);
    entry_name(ours_old, sizeof(ours_old), ours, b, 7);
    entry_name(ours_new, sizeof(ours_new), ours, b, 8);
    touch_old(gone, 40);
    touch_old(recent, 20);
    touch_old(unmarked, 0);
    touch_old(ours_old, 31);
    touch_old(ours_new, 0);
    char c[300];
    snprintf(c, sizeof(c), "%s/c", work);
    copy_file("/bin/true", c);
    sites_of_path(c);
    cr_expect(!cached(gone), "%s kept", gone);
    cr_expect(!cached("sites-used-f0-gone"), "the unused marker kept");
    cr_expect(cached(recent), "%s deleted", recent);
    cr_expect(!cached(unmarked), "%s kept", unmarked);
    cr_expect(!cached(ours_old), "%s (31 days old) kept", ours_old);
    cr_expect(cached(ours_new), "%s deleted", ours_new);
}
