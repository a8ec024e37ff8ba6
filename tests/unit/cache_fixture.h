/*
 * cache_fixture.h - a cache directory of its own for the tests of hvrun's
 * cache (test_site_cache.c, test_progress_cache.c): WORK (a mkdtemp
 * template) made, XDG_CACHE_HOME at WORK/xdg, its hvrun directory in
 * CACHE; removed whole after.
 */
#ifndef TESTS_UNIT_CACHE_FIXTURE_H
#define TESTS_UNIT_CACHE_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static void cache_fixture_make(char *work, char *cache, size_t cache_len)
{
    cr_assert_not_null(mkdtemp(work));
    char xdg[200];
    snprintf(xdg, sizeof(xdg), "%s/xdg", work);
    cr_assert_eq(mkdir(xdg, 0700), 0);
    setenv("XDG_CACHE_HOME", xdg, 1);
    unsetenv("HVRUN_NO_CACHE");
    snprintf(cache, cache_len, "%s/hvrun", xdg);
    cr_assert_eq(mkdir(cache, 0700), 0);
}

static void cache_fixture_remove(const char *work)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
    (void)system(cmd);
}

#endif
