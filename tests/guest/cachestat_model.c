/*
 * cachestat_model.c - cachestat (Linux 6.5) on shared memory, whose pages
 * are always in the page cache (or swapped: evicted): nr_cache + nr_evicted
 * is the number of pages of the file in the range (a len of 0: to the
 * end); a range past the end counts none; a pipe has no pages. Errors:
 * EBADF (a bad fd, an O_PATH one), EFAULT (the range, the result), EINVAL
 * (flags). hvrun said ENOSYS (LTP's cachestat02). A host kernel without
 * cachestat: the test says so and stops.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define NR_CACHESTAT 451

struct range {
    uint64_t off, len;
};

struct stat5 {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static long cachestat(int fd, void *r, void *cs, unsigned flags)
{
    return syscall(NR_CACHESTAT, fd, r, cs, flags);
}

static void show(const char *what, int fd, uint64_t off, uint64_t len)
{
    struct range r = {off, len};
    struct stat5 cs;
    long rc = cachestat(fd, &r, &cs, 0);
    if (rc < 0)
        printf("%s: %s\n", what, result_text(rc));
    else
        printf("%s: %llu pages\n", what,
               (unsigned long long)(cs.nr_cache + cs.nr_evicted));
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    int fd = memfd_create("cachestat", 0);
    CHECK(fd >= 0);
    static char buf[4096 * 8];
    CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
    struct range r = {0, 0};
    struct stat5 cs;
    if (cachestat(fd, &r, &cs, 0) < 0 && errno == ENOSYS) {
        printf("no cachestat on this kernel\n");
        return 0;
    }
    show("whole file (len 0)", fd, 0, 0);
    show("pages 2 to 4", fd, 2 * page, 3 * page);
    show("a byte into page 7, 2 pages asked", fd, 7 * page + 1, 2 * page);
    show("past the end", fd, 100 * page, page);
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    show("a pipe", pfd[0], 0, 0);
    printf("bad fd: %s\n", result_text(cachestat(-1, &r, &cs, 0)));
    int opath = open("/proc/self/exe", O_PATH);
    CHECK(opath >= 0);
    printf("O_PATH fd: %s\n", result_text(cachestat(opath, &r, &cs, 0)));
    printf("bad range pointer: %s\n", result_text(cachestat(fd, (void *)1, &cs, 0)));
    printf("bad result pointer: %s\n", result_text(cachestat(fd, &r, (void *)1, 0)));
    printf("flags 1: %s\n", result_text(cachestat(fd, &r, &cs, 1)));
    printf("flags 1, bad range: %s\n", result_text(cachestat(fd, (void *)1, &cs, 1)));
    return 0;
}
