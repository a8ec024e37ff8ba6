/*
 * scoped_walk_renames: openat2 walks scoped by RESOLVE_IN_ROOT and
 * RESOLVE_BENEATH that cross ".." (through a symlink "up" -> ".."), many
 * times, and none may fail. Linux fails such a walk with EAGAIN when any
 * rename or mount happens on the machine during it (rename_lock and
 * mount_lock), so natively a program can see it under a busy host;
 * hvrun walks a guest's path on the host several times per call, and
 * retries the host's EAGAIN (fs/fs.c, proxy_host_openat2) so that what
 * the guest sees does not depend on the host's other work.
 *
 * Self-checking, under hvrun only (tests/run-guest-tests.sh,
 * HVRUN_ONLY_PROGRAMS): exits 1 with a FAIL line at the first failure.
 * With `--rename DIR SECONDS` it is the host-side load instead: renames
 * DIR/a to DIR/b and back for SECONDS, run natively beside a run by
 * tests/determinism/run.sh (host/scoped-walk-renames), which makes the
 * race likely (seen: 11 EAGAIN in 20,000 native walks, 21 under hvrun
 * before the retry, 0 after).
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static long scoped_open(int dirfd, const char *path, uint64_t resolve)
{
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .resolve = resolve};
    return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static int rename_for(const char *dir, int seconds)
{
    char a[4096], b[4096];
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    int fd = open(a, O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0);
    close(fd);
    time_t end = time(NULL) + seconds;
    while (time(NULL) < end) {
        CHECK(rename(a, b) == 0);
        CHECK(rename(b, a) == 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--rename") == 0)
        return rename_for(argv[2], atoi(argv[3]));
    int walks = argc == 2 ? atoi(argv[1]) : 2000;
    char dir[] = "/tmp/scoped_walk.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int d = open(dir, O_PATH | O_DIRECTORY);
    CHECK(d >= 0);
    int f = openat(d, "f", O_CREAT | O_WRONLY, 0644);
    CHECK(f >= 0);
    close(f);
    CHECK(mkdirat(d, "s", 0755) == 0);
    CHECK(symlinkat("..", d, "up") == 0);
    for (int i = 0; i < walks; i++) {
        long fd = scoped_open(d, "up/up/f", RESOLVE_IN_ROOT);
        CHECK(fd >= 0);
        close((int)fd);
        fd = scoped_open(d, "s/../f", RESOLVE_BENEATH);
        CHECK(fd >= 0);
        close((int)fd);
    }
    printf("%d scoped walks through \"..\": none failed\n", 2 * walks);
    unlinkat(d, "f", 0);
    unlinkat(d, "up", 0);
    unlinkat(d, "s", AT_REMOVEDIR);
    close(d);
    CHECK(rmdir(dir) == 0);
    return 0;
}
