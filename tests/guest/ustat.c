/*
 * ustat: ustat(2) on the device stat reports for a path (glibc has no
 * wrapper: syscall(SYS_ustat), as LTP's ustat01/02 call it) answers that
 * file system's free blocks and inodes as statfs gives them (f_tfree is
 * an int: statfs's f_bfree truncated), f_fname and f_fpack empty; a device
 * no file was seen on is EINVAL, a bad buffer EFAULT. The counts
 * themselves differ (hvrun's are canonical), so only their agreement with
 * statfs is printed; natively other processes may change them between
 * the two calls, hence the slack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

struct ustat_buf {
    int32_t f_tfree;
    uint64_t f_tinode;
    char f_fname[6];
    char f_fpack[6];
};

static long ustat_call(unsigned dev, void *buf)
{
    return syscall(SYS_ustat, dev, buf);
}

static int near(int64_t a, int64_t b)
{
    return a - b < 4096 && b - a < 4096;
}

static void ustat_of(const char *path)
{
    struct stat st;
    struct statfs sfs;
    CHECK(stat(path, &st) == 0);
    struct ustat_buf u;
    memset(&u, 0xa5, sizeof(u));
    long rc = ustat_call((unsigned)st.st_dev, &u);
    CHECK(statfs(path, &sfs) == 0);
    if (rc < 0) {
        printf("%s: %s\n", path, strerror(errno));
        return;
    }
    static const char zero[6];
    printf("%s: ok, tfree as statfs %d, tinode as statfs %d, names empty %d\n",
           path, near(u.f_tfree, (int32_t)(uint32_t)sfs.f_bfree),
           near((int64_t)u.f_tinode, (int64_t)sfs.f_ffree),
           !memcmp(u.f_fname, zero, 6) && !memcmp(u.f_fpack, zero, 6));
}

int main(void)
{
    ustat_of("/");
    ustat_of(".");
    ustat_of("/dev");
    ustat_of("/tmp");
    ustat_of("/proc");
    struct ustat_buf u;
    long rc = ustat_call((unsigned)-1, &u);
    printf("dev -1: %ld %s\n", rc, strerror(errno));
    struct stat st;
    CHECK(stat("/", &st) == 0);
    rc = ustat_call((unsigned)st.st_dev, (void *)-1);
    printf("bad buffer: %ld %s\n", rc, strerror(errno));
    return 0;
}
