/*
 * mremap_dontunmap.c - MREMAP_DONTUNMAP (Linux 5.7; any mapping but a
 * special one since 5.13) moves the pages and keeps the old range mapped:
 * private anonymous memory reads zeros there again, a private file
 * mapping its file's pages, a shared mapping (of a file or anonymous) the
 * same object as the new range. The argument checks: MREMAP_MAYMOVE
 * needed, no resizing, new_addr aligned and not overlapping the old range
 * even as a hint (EINVAL), the old range within one VMA (EFAULT). LTP's
 * mremap07 takes EINVAL for a kernel without it (TCONF).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

static long page;

static const char *err(void *r)
{
    return r == MAP_FAILED ? strerrorname_np(errno) : "ok";
}

static void *dontunmap(void *old, size_t old_len, size_t new_len, int flags,
                       void *hint)
{
    return mremap(old, old_len, new_len, flags | MREMAP_DONTUNMAP, hint);
}

static void *map(int prot, int flags, int fd, size_t len)
{
    void *m = mmap(NULL, len, prot, flags, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return m;
}

/* Whether [a, a+len) is mapped (mprotect is ENOMEM over a hole). */
static const char *mapped(void *a, size_t len)
{
    return mprotect(a, len, PROT_READ | PROT_WRITE) == 0 ? "mapped"
                                                          : "not mapped";
}

static void check_errors(void)
{
    char *a = map(PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                  4 * page);
    printf("errors: no MAYMOVE %s", err(dontunmap(a, page, page, 0, NULL)));
    printf(", resize %s",
           err(dontunmap(a, page, 2 * page, MREMAP_MAYMOVE, NULL)));
    printf(", hint overlapping %s",
           err(dontunmap(a, page, page, MREMAP_MAYMOVE, a)));
    printf(", hint unaligned %s",
           err(dontunmap(a, page, page, MREMAP_MAYMOVE, a + 5 * page + 1)));
    munmap(a + 3 * page, page); /* a hole */
    printf(", unmapped %s",
           err(dontunmap(a + 3 * page, page, page, MREMAP_MAYMOVE, NULL)));
    /* Two VMAs: the range may not span them. */
    mprotect(a + page, page, PROT_READ);
    printf(", across VMAs %s\n",
           err(dontunmap(a, 2 * page, 2 * page, MREMAP_MAYMOVE, NULL)));
    munmap(a, 3 * page);
}

static void check_private_anon(void)
{
    size_t len = 3 * page;
    char *old = map(PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                    len);
    memset(old, 'a', len);
    char *moved = dontunmap(old, len, len, MREMAP_MAYMOVE, NULL);
    if (moved == MAP_FAILED) {
        printf("private anon: %s\n", err(moved));
        return;
    }
    printf("private anon: moved %s, new %c%c, old %d%d, old %s", 
           moved != old ? "elsewhere" : "in place", moved[0], moved[len - 1],
           old[0], old[len - 1], mapped(old, len));
    old[page] = 'b'; /* the old range takes writes again */
    printf(", old written %c new %c\n", old[page], moved[page]);
    munmap(moved, len);
    munmap(old, len);
}

/* A sparse one (hvrun backs it as it is touched above 4 GiB). */
static void check_sparse_anon(void)
{
    size_t len = (4UL << 30) + 16 * page, mid = len / 2;
    char *old = map(PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, len);
    old[0] = 's';
    old[mid] = 't';
    char *moved = dontunmap(old, len, len, MREMAP_MAYMOVE, NULL);
    if (moved == MAP_FAILED) {
        printf("sparse anon: %s\n", err(moved));
        return;
    }
    printf("sparse anon: new %c%c%d, old %d%d, old %s\n", moved[0],
           moved[mid], moved[len - 1], old[0], old[mid], mapped(old, len));
    munmap(moved, len);
    munmap(old, len);
}

static void check_fixed(void)
{
    char *old = map(PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                    page);
    char *dst = map(PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, page);
    old[0] = 'f';
    char *moved = dontunmap(old, page, page, MREMAP_MAYMOVE | MREMAP_FIXED,
                            dst);
    if (moved == MAP_FAILED) {
        printf("fixed: %s\n", err(moved));
        return;
    }
    printf("fixed: at dst %d, new %c (writable: ", moved == dst, moved[0]);
    moved[1] = 'g';
    printf("%c), old %d\n", moved[1], old[0]);
    munmap(moved, page);
    munmap(old, page);
}

static int temp_file(const char *content)
{
    char name[] = "/tmp/mremap_dontunmap.XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0) {
        perror("mkstemp");
        exit(1);
    }
    unlink(name);
    char buf[4096];
    memset(buf, 0, sizeof(buf));
    strcpy(buf, content);
    for (int i = 0; i < 2; i++)
        if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
            perror("write");
            exit(1);
        }
    return fd;
}

static void check_file(const char *what, int flags)
{
    size_t len = 2 * page;
    int fd = temp_file("file");
    char *old = map(PROT_READ | PROT_WRITE, flags, fd, len);
    memcpy(old, "mine", 4);
    char *moved = dontunmap(old, len, len, MREMAP_MAYMOVE, NULL);
    if (moved == MAP_FAILED) {
        printf("%s: %s\n", what, err(moved));
        return;
    }
    printf("%s: new %.4s, old %.4s", what, moved, old);
    memcpy(moved + page, "next", 4);
    printf(", after a write to new: old %.4s", old + page);
    char buf[5] = {0};
    pread(fd, buf, 4, page);
    printf(", file %s\n", buf[0] ? buf : "(zeros)");
    munmap(moved, len);
    munmap(old, len);
    close(fd);
}

static void check_shared_anon(void)
{
    size_t len = 2 * page;
    char *old = map(PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                    len);
    strcpy(old, "shm");
    char *moved = dontunmap(old, len, len, MREMAP_MAYMOVE, NULL);
    if (moved == MAP_FAILED) {
        printf("shared anon: %s\n", err(moved));
        return;
    }
    printf("shared anon: new %s, old %s", moved, old);
    strcpy(moved + page, "both");
    printf(", after a write to new: old %s\n", old + page);
    munmap(moved, len);
    munmap(old, len);
}

int main(void)
{
    page = sysconf(_SC_PAGESIZE);
    check_errors();
    check_private_anon();
    check_sparse_anon();
    check_fixed();
    check_file("private file", MAP_PRIVATE);
    check_file("shared file", MAP_SHARED);
    check_shared_anon();
    return 0;
}
