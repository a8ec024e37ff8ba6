/*
 * file_attr: file_getattr and file_setattr (Linux 6.17, 468 and 469): the
 * argument checks in Linux's order (unknown flags EINVAL, a size past a
 * page E2BIG, one below the first struct EINVAL, a non-zero tail of a
 * larger struct E2BIG), a relative path from a dirfd that is no directory
 * ENOTDIR (LTP's file_attr04), a bad buffer EFAULT, and what getattr reads
 * of "/" with a larger buffer's tail zeroed. A host older than 6.17 has
 * neither call natively: the test then says so and checks nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define NR_FILE_GETATTR 468
#define NR_FILE_SETATTR 469

struct attr {
    uint64_t xflags;
    uint32_t extsize, nextents, projid, cowextsize;
};

static long getattr(int dfd, const char *path, void *buf, size_t size,
                    unsigned flags)
{
    return syscall(NR_FILE_GETATTR, dfd, path, buf, size, flags);
}

static long setattr(int dfd, const char *path, void *buf, size_t size,
                    unsigned flags)
{
    return syscall(NR_FILE_SETATTR, dfd, path, buf, size, flags);
}

static void show(const char *what, long rc)
{
    printf("%s: %s\n", what, rc < 0 ? strerror(errno) : "ok");
}

int main(void)
{
    struct attr a;
    if (getattr(AT_FDCWD, "/", &a, sizeof(a), 0) < 0 && errno == ENOSYS) {
        printf("not checked here: this kernel has no file_getattr\n");
        return 0;
    }
    char big[64];
    memset(big, 0xa5, sizeof(big));
    show("get /", getattr(AT_FDCWD, "/", big, sizeof(big), 0));
    memcpy(&a, big, sizeof(a));
    int tail_zero = 1;
    for (size_t i = sizeof(a); i < sizeof(big); i++)
        tail_zero &= big[i] == 0;
    printf("/ xflags %#llx projid %u tail zero %d\n",
           (unsigned long long)a.xflags, a.projid, tail_zero);
    show("get flags", getattr(AT_FDCWD, "/", &a, sizeof(a), 0x1));
    show("get size past a page", getattr(AT_FDCWD, "/", &a, 4097, 0));
    show("get size small", getattr(AT_FDCWD, "/", &a, 16, 0));
    show("get bad buffer", getattr(AT_FDCWD, "/", (void *)-1, sizeof(a), 0));
    show("get missing", getattr(AT_FDCWD, "/nonexistent-file_attr", &a,
                                sizeof(a), 0));
    int fd = open("/proc/self/exe", O_RDONLY);
    int pipefd[2];
    CHECK(fd >= 0 && pipe(pipefd) == 0);
    show("get from a file fd", getattr(fd, "name", &a, sizeof(a), 0));
    show("set from a file fd", setattr(fd, "name", &a, sizeof(a), 0));
    show("get from a pipe fd", getattr(pipefd[0], "name", &a, sizeof(a), 0));
    show("set from a pipe fd", setattr(pipefd[1], "name", &a, sizeof(a), 0));
    memset(big, 0, sizeof(big));
    big[sizeof(a)] = 1;
    show("set non-zero tail", setattr(fd, "name", big, sizeof(big), 0));
    show("set flags", setattr(fd, "name", &a, sizeof(a), 0x1));
    show("set bad buffer", setattr(fd, "name", (void *)-1, sizeof(a), 0));
    return 0;
}
