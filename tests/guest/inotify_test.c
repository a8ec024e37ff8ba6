/*
 * inotify_test: a watch on a scratch directory reports what the program
 * then does there (create, write, close, rename, delete), in order, with
 * the names; a watch on a file, IN_ONLYDIR's ENOTDIR, rm_watch's IN_IGNORED.
 * The rename cookie is only checked to pair the two events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_check.h"

static void show(const char *buf, ssize_t len, uint32_t *cookie)
{
    for (const char *p = buf; p < buf + len;) {
        const struct inotify_event *e = (const struct inotify_event *)p;
        const char *what = (e->mask & IN_CREATE)        ? "create"
                           : (e->mask & IN_MODIFY)      ? "modify"
                           : (e->mask & IN_CLOSE_WRITE) ? "close_write"
                           : (e->mask & IN_MOVED_FROM)  ? "moved_from"
                           : (e->mask & IN_MOVED_TO)    ? "moved_to"
                           : (e->mask & IN_DELETE)      ? "delete"
                           : (e->mask & IN_IGNORED)     ? "ignored"
                           : (e->mask & IN_ATTRIB)      ? "attrib"
                                                        : "other";
        int paired = 0;
        if (e->mask & IN_MOVED_FROM)
            *cookie = e->cookie;
        if (e->mask & IN_MOVED_TO)
            paired = e->cookie == *cookie && e->cookie != 0;
        printf("wd %d %s %s%s\n", e->wd, what, e->len ? e->name : "-",
               (e->mask & IN_MOVED_TO) ? (paired ? " (paired)" : " (unpaired)")
                                       : "");
        p += sizeof(*e) + e->len;
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char dir[] = "inotify_test.XXXXXX";
    CHECK(mkdtemp(dir));
    int in = inotify_init1(IN_CLOEXEC);
    CHECK(in >= 0);
    int wd = inotify_add_watch(in, dir, IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE |
                                            IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE);
    CHECK(wd == 1);
    char path[64], path2[64];
    snprintf(path, sizeof(path), "%s/a", dir);
    snprintf(path2, sizeof(path2), "%s/b", dir);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1 && close(fd) == 0);
    CHECK(rename(path, path2) == 0);
    CHECK(unlink(path2) == 0);
    char buf[4096] __attribute__((aligned(8)));
    uint32_t cookie = 0;
    ssize_t n = read(in, buf, sizeof(buf));
    CHECK(n > 0);
    show(buf, n, &cookie);

    errno = 0;
    CHECK(inotify_add_watch(in, "/etc/hostname", IN_ONLYDIR | IN_ATTRIB) == -1 &&
          errno == ENOTDIR);
    errno = 0;
    CHECK(inotify_add_watch(in, "no/such/path", IN_ATTRIB) == -1 && errno == ENOENT);
    CHECK(inotify_rm_watch(in, wd) == 0);
    n = read(in, buf, sizeof(buf));
    CHECK(n > 0);
    show(buf, n, &cookie);
    CHECK(rmdir(dir) == 0);
    printf("done\n");
    return 0;
}
