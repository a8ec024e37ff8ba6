/*
 * mmap_flag_checks: the order of mmap's first refusals and
 * MAP_SHARED_VALIDATE's (LTP mmap08, mmap20): an unaligned offset is
 * EINVAL before a bad fd, a bad fd EBADF before a zero length; on a file
 * MAP_SHARED_VALIDATE with a flag outside the legacy set (an unknown bit,
 * MAP_SYNC on a filesystem without DAX) is EOPNOTSUPP where MAP_SHARED
 * ignores it, and with legacy flags it maps. Printed and compared with a
 * native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#define UNKNOWN_FLAG 0x400

static void try(const char *what, size_t len, int prot, int flags, int fd,
                off_t off)
{
    void *a = mmap(NULL, len, prot, flags, fd, off);
    printf("%s: %s\n", what, a == MAP_FAILED ? result_text(-1) : "mapped");
    if (a != MAP_FAILED)
        munmap(a, len);
}

int main(void)
{
    int fd = open("mmap_flag_checks.file", O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, 4096) == 0);
    unlink("mmap_flag_checks.file");
    int closed = dup(fd);
    close(closed);
    try("closed fd, length 0", 0, PROT_WRITE, MAP_SHARED, closed, 0);
    try("closed fd, unaligned offset", 4096, PROT_READ, MAP_SHARED, closed,
        1);
    try("closed fd, bad type", 4096, PROT_READ, 0, closed, 0);
    try("length 0", 0, PROT_READ, MAP_SHARED, fd, 0);
    try("validate unknown flag", 4096, PROT_READ | PROT_WRITE,
        MAP_SHARED_VALIDATE | UNKNOWN_FLAG, fd, 0);
    try("shared unknown flag", 4096, PROT_READ | PROT_WRITE,
        MAP_SHARED | UNKNOWN_FLAG, fd, 0);
    try("validate MAP_SYNC", 4096, PROT_READ | PROT_WRITE,
        MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
    try("validate legacy flags", 4096, PROT_READ | PROT_WRITE,
        MAP_SHARED_VALIDATE | MAP_NORESERVE | MAP_POPULATE, fd, 0);
    try("validate plain", 4096, PROT_READ, MAP_SHARED_VALIDATE, fd, 0);
    close(fd);
    return 0;
}
