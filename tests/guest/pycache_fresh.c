/*
 * pycache_fresh.c - a __pycache__ directory, and a file in it, can be made
 * where no stale cache can exist: in /tmp (hvrun's private /tmp is made
 * for the run) and in a directory the run made itself. hvrun refuses them
 * elsewhere with metadata virtualised (a host source's mtime shows the
 * epoch there, fs_internal.h); it once refused these too, which the
 * default mode shows (this suite runs with host metadata, where nothing
 * is refused: run it by hand under `hvrun run` to see the rule).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_check.h"

static void cache_in(const char *label, const char *dir)
{
    char cache[PATH_MAX], pyc[PATH_MAX];
    snprintf(cache, sizeof(cache), "%s/__pycache__", dir);
    snprintf(pyc, sizeof(pyc), "%s/mod.cpython-311.pyc", cache);
    int rc = mkdir(cache, 0755);
    printf("%s: mkdir __pycache__: %s\n", label, result_text(rc));
    int fd = open(pyc, O_WRONLY | O_CREAT | O_EXCL, 0644);
    printf("%s: create a .pyc in it: %s\n", label, fd < 0 ? result_text(fd) : "0");
    if (fd >= 0)
        close(fd);
    /* a subdirectory made by the run, then a cache in it */
    char sub[PATH_MAX];
    snprintf(sub, sizeof(sub), "%s/pkg", dir);
    CHECK(mkdir(sub, 0755) == 0);
    snprintf(cache, sizeof(cache), "%s/pkg/__pycache__", dir);
    printf("%s: mkdir pkg/__pycache__: %s\n", label,
           result_text(mkdir(cache, 0755)));
}

static void remove_tree(const char *dir)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    char tmp[] = "/tmp/pycache_fresh.XXXXXX";
    CHECK(mkdtemp(tmp));
    cache_in("in /tmp", tmp);
    remove_tree(tmp);
    /* Outside /tmp: a directory made here, under the working directory. */
    char here[] = "pycache_fresh.XXXXXX";
    if (!mkdtemp(here)) {
        printf("no writable working directory\n");
        return 0;
    }
    cache_in("made by the run", here);
    remove_tree(here);
    return 0;
}
