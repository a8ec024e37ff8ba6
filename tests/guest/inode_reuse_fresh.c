/*
 * inode_reuse_fresh.c - a file made after another went away is a new file
 * whatever inode number the host gives it. An O_TMPFILE file closed
 * without a name is freed with no unlink to see, and the host may hand
 * its inode number to the next file made; hvrun once kept what it knew of
 * the old file under that number, so the new file showed the old one's
 * access time and inode number in some runs and not in others (LTP's
 * openat03 under --verify). Also: an unnamed O_TMPFILE's /proc/self/fd
 * link, "DIR/#N (deleted)", names the inode number fstat gives (the
 * host's under hvrun, once). Each check prints the same natively.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 40

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The number after '#' in the fd's link, or -1. */
static long long link_number(int fd)
{
    char path[64], target[4096];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0)
        return -1;
    target[n] = 0;
    char *hash = strrchr(target, '#');
    if (!hash || !strstr(hash, " (deleted)"))
        return -1;
    return strtoll(hash + 1, NULL, 10);
}

int main(void)
{
    static char buf[4096];
    memset(buf, 'x', sizeof(buf));
    int link_ok = 0, times_ok = 0;
    for (int i = 0; i < ROUNDS; i++) {
        /* An unnamed file, written after it was made, then freed. */
        int a = open(".", O_TMPFILE | O_RDWR, 0600);
        CHECK(a >= 0);
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
        CHECK(write(a, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
        struct stat sa, sb;
        CHECK(fstat(a, &sa) == 0);
        link_ok += link_number(a) == (long long)sa.st_ino;
        CHECK(close(a) == 0);
        /* The next file made: its times are its own, not before A's last
         * write. */
        int b = open("made_after", O_CREAT | O_EXCL | O_RDWR, 0600);
        CHECK(b >= 0);
        CHECK(fstat(b, &sb) == 0);
        times_ok += ns_of(sb.st_atim) >= ns_of(sa.st_mtim) &&
                    ns_of(sb.st_ctim) >= ns_of(sa.st_mtim);
        CHECK(close(b) == 0);
        CHECK(unlink("made_after") == 0);
    }
    printf("unnamed O_TMPFILE links name fstat's inode: %d of %d\n", link_ok,
           ROUNDS);
    printf("a file made after a freed one has times of its own: %d of %d\n",
           times_ok, ROUNDS);
    return 0;
}
