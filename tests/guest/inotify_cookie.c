/*
 * inotify_cookie.c - the cookie that pairs a rename's IN_MOVED_FROM with
 * its IN_MOVED_TO: nonzero, the same on both events, a different one for
 * the next rename, 0 on other events. The host takes cookies from one
 * counter of the whole machine; hvrun shows the run's own, so with the
 * argument "raw" (tests/determinism: two runs print the same bytes) the
 * values themselves are printed. Without it the output is the same
 * natively.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <fcntl.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define RENAMES 3

int main(int argc, char **argv)
{
    int raw = argc > 1 && strcmp(argv[1], "raw") == 0;
    CHECK(mkdir("ino_dir", 0700) == 0);
    int in = inotify_init1(IN_NONBLOCK);
    CHECK(in >= 0);
    CHECK(inotify_add_watch(in, "ino_dir", IN_MOVE | IN_CREATE) == 1);
    int fd = open("ino_dir/a", O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0);
    close(fd);
    for (int i = 0; i < RENAMES; i++)
        CHECK(rename(i % 2 ? "ino_dir/b" : "ino_dir/a",
                     i % 2 ? "ino_dir/a" : "ino_dir/b") == 0);
    /* Read in small pieces: one event a read where the buffer holds one. */
    uint32_t from[RENAMES], to[RENAMES];
    int nfrom = 0, nto = 0, created = 0, create_cookie_zero = 1;
    char buf[sizeof(struct inotify_event) + 16];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        struct inotify_event ev;
        memcpy(&ev, buf, sizeof(ev));
        if (ev.mask & IN_CREATE) {
            created++;
            create_cookie_zero &= ev.cookie == 0;
        } else if ((ev.mask & IN_MOVED_FROM) && nfrom < RENAMES) {
            from[nfrom++] = ev.cookie;
        } else if ((ev.mask & IN_MOVED_TO) && nto < RENAMES) {
            to[nto++] = ev.cookie;
        }
    }
    printf("events: %d created, %d moved from, %d moved to\n", created, nfrom,
           nto);
    printf("create's cookie 0: %s\n", create_cookie_zero ? "yes" : "no");
    for (int i = 0; i < nfrom && i < nto; i++) {
        printf("rename %d: cookie nonzero %s, pair matches %s, new %s\n", i,
               from[i] ? "yes" : "no", from[i] == to[i] ? "yes" : "no",
               i == 0 || from[i] != from[i - 1] ? "yes" : "no");
        if (raw)
            printf("rename %d: cookie %u\n", i, from[i]);
    }
    unlink("ino_dir/a");
    unlink("ino_dir/b");
    rmdir("ino_dir");
    return 0;
}
