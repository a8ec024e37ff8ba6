/*
 * mem: the memory-management syscalls as a program sees them - malloc of
 * many sizes, anonymous mmap, mremap (grow in place, move, shrink), mprotect,
 * munmap, brk, MAP_FIXED, private and shared file mappings and
 * madvise(MADV_DONTNEED). Prints one line per step; exits 1 at the first
 * failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL

static void fill(void *p, size_t n, unsigned seed)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(seed + i * 31 + (i >> 12));
}

static int same(const void *p, size_t n, unsigned seed)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != (uint8_t)(seed + i * 31 + (i >> 12)))
            return 0;
    return 1;
}

static int zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

/* True when [p, p+len) is entirely unmapped: msync fails with ENOMEM. */
static int unmapped(void *p, size_t len)
{
    return msync(p, len, MS_ASYNC) == -1 && errno == ENOMEM;
}

static void test_malloc(void)
{
    static const size_t sizes[] = {1,      7,       16,      100,     1000,
                                   4095,   4096,    4097,    65536,   131071,
                                   131072, 200000,  1 << 20, 3 << 20, 9 << 20};
    enum { N = sizeof(sizes) / sizeof(sizes[0]) };
    void *p[N];
    for (unsigned i = 0; i < N; i++) {
        p[i] = malloc(sizes[i]);
        CHECK(p[i] != NULL);
        CHECK(((uintptr_t)p[i] & 15) == 0);
        fill(p[i], sizes[i], i);
    }
    for (unsigned i = 0; i < N; i++) {
        CHECK(same(p[i], sizes[i], i));
        free(p[i]);
    }
    void *c = calloc(1000, 1000);
    CHECK(c != NULL && zero(c, 1000 * 1000));
    free(c);
    char *r = malloc(10);
    CHECK(r != NULL);
    memcpy(r, "0123456789", 10);
    r = realloc(r, 5 << 20);
    CHECK(r != NULL && memcmp(r, "0123456789", 10) == 0);
    free(r);
    printf("malloc: %u sizes ok\n", (unsigned)N);
}

static void test_mmap_anon(void)
{
    size_t len = 64 * PAGE;
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK(((uintptr_t)p & (PAGE - 1)) == 0);
    CHECK(zero(p, len));
    fill(p, len, 5);
    CHECK(same(p, len, 5));
    CHECK(munmap(p, len) == 0);
    CHECK(unmapped(p, len));
    errno = 0;
    CHECK(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
              MAP_FAILED &&
          errno == EINVAL);
    printf("mmap anonymous: ok\n");
}

static void test_mremap(void)
{
    /* All inside our own reservation, so MAP_FIXED clobbers nothing. */
    uint8_t *r = mmap(NULL, 16 * PAGE, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);

    /* Grow in place: the two pages after the mapping are free. */
    uint8_t *p = mmap(r, 2 * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(p == r);
    CHECK(munmap(r + 2 * PAGE, 2 * PAGE) == 0);
    fill(p, 2 * PAGE, 11);
    uint8_t *q = mremap(p, 2 * PAGE, 4 * PAGE, 0);
    CHECK(q == p);
    CHECK(same(q, 2 * PAGE, 11));
    CHECK(zero(q + 2 * PAGE, 2 * PAGE));
    q[4 * PAGE - 1] = 1;
    printf("mremap grow in place: ok\n");

    /* Move: the rest of the reservation right after it blocks growth. */
    uint8_t *blocker = r + 4 * PAGE;
    CHECK(mprotect(blocker, PAGE, PROT_READ) == 0);
    fill(q, 4 * PAGE, 12);
    errno = 0;
    CHECK(mremap(q, 4 * PAGE, 8 * PAGE, 0) == MAP_FAILED && errno == ENOMEM);
    CHECK(same(q, 4 * PAGE, 12));
    uint8_t *m = mremap(q, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE);
    CHECK(m != MAP_FAILED);
    CHECK(m != q);
    CHECK(same(m, 4 * PAGE, 12));
    CHECK(zero(m + 4 * PAGE, 4 * PAGE));
    CHECK(unmapped(q, 4 * PAGE));
    CHECK(blocker[0] == 0);
    m[8 * PAGE - 1] = 2;
    printf("mremap move: ok\n");

    /* Shrink: the tail goes away. */
    uint8_t *s = mremap(m, 8 * PAGE, 3 * PAGE, 0);
    CHECK(s == m);
    CHECK(same(s, 3 * PAGE, 12));
    CHECK(unmapped(s + 3 * PAGE, 5 * PAGE));
    printf("mremap shrink: ok\n");

    /* MREMAP_FIXED onto part of the reservation. */
    uint8_t *target = r + 8 * PAGE;
    uint8_t *f = mremap(s, 3 * PAGE, 3 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                        target);
    CHECK(f == target);
    CHECK(same(f, 3 * PAGE, 12));
    CHECK(unmapped(s, 3 * PAGE));
    f[0] = 3; /* writable, as the source was */
    CHECK(munmap(r, 16 * PAGE) == 0);
    CHECK(unmapped(r, 16 * PAGE));
    printf("mremap fixed: ok\n");
}

static void test_mprotect(void)
{
    uint8_t *p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    fill(p, 3 * PAGE, 21);
    CHECK(mprotect(p + PAGE, PAGE, PROT_READ) == 0);
    CHECK(same(p, 3 * PAGE, 21));
    CHECK(mprotect(p + PAGE, PAGE, PROT_NONE) == 0);
    CHECK(mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE) == 0);
    CHECK(same(p, 3 * PAGE, 21));
    p[PAGE + 5] = 0x77;
    CHECK(p[PAGE + 5] == 0x77);
    /* A range with a hole is ENOMEM. */
    CHECK(munmap(p + 2 * PAGE, PAGE) == 0);
    errno = 0;
    CHECK(mprotect(p, 3 * PAGE, PROT_READ) == -1 && errno == ENOMEM);
    errno = 0;
    CHECK(mprotect(p + 1, PAGE, PROT_READ) == -1 && errno == EINVAL);
    CHECK(munmap(p, 2 * PAGE) == 0);
    printf("mprotect: ok\n");
}

static void test_munmap_partial(void)
{
    uint8_t *p = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    fill(p, 5 * PAGE, 31);
    CHECK(munmap(p + 2 * PAGE, PAGE) == 0);
    CHECK(unmapped(p + 2 * PAGE, PAGE));
    CHECK(same(p, 2 * PAGE, 31));
    CHECK(p[3 * PAGE] == (uint8_t)(31 + 3 * PAGE * 31 + 3));
    CHECK(munmap(p, 5 * PAGE) == 0); /* holes inside are fine */
    CHECK(unmapped(p, 5 * PAGE));
    errno = 0;
    CHECK(munmap(p + 1, PAGE) == -1 && errno == EINVAL);
    printf("munmap: ok\n");
}

static void test_brk(void)
{
    char *cur = sbrk(0);
    CHECK(cur != (char *)-1);
    char *old = sbrk(65536);
    CHECK(old == cur);
    CHECK(sbrk(0) == cur + 65536);
    CHECK(zero(cur, 65536));
    memset(cur, 0x5c, 65536);
    CHECK(cur[65535] == 0x5c);
    CHECK(sbrk(-65536) == cur + 65536);
    CHECK(sbrk(0) == cur);
    /* Grown again, the memory is fresh. */
    CHECK(sbrk(4096) == cur);
    CHECK(zero(cur, 4096));
    CHECK(sbrk(-4096) != (void *)-1);
    printf("brk: ok\n");
}

static void test_map_fixed(void)
{
    uint8_t *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    fill(p, 4 * PAGE, 41);
    uint8_t *q = mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(q == p + PAGE);
    CHECK(zero(q, PAGE));
    CHECK(same(p, PAGE, 41));
    CHECK(p[2 * PAGE] == (uint8_t)(41 + 2 * PAGE * 31 + 2));
    errno = 0;
    CHECK(mmap(p + 1, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
               -1, 0) == MAP_FAILED &&
          errno == EINVAL);
    CHECK(munmap(p, 4 * PAGE) == 0);
    printf("MAP_FIXED: ok\n");
}

static void test_file_mappings(void)
{
    char path[] = "./mem-file-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(unlink(path) == 0);
    size_t len = 3 * PAGE;
    uint8_t *buf = malloc(len);
    CHECK(buf != NULL);
    fill(buf, len, 51);
    CHECK(write(fd, buf, len) == (ssize_t)len);

    /* Private: reads the file, writes stay private. */
    uint8_t *pv = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(pv != MAP_FAILED);
    CHECK(same(pv, len, 51));
    pv[10] = 0xee;
    uint8_t b = 0;
    CHECK(pread(fd, &b, 1, 10) == 1);
    CHECK(b == (uint8_t)(51 + 10 * 31));
    CHECK(munmap(pv, len) == 0);
    /* At an offset. */
    uint8_t *po = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, PAGE);
    CHECK(po != MAP_FAILED);
    CHECK(po[0] == buf[PAGE] && po[PAGE - 1] == buf[2 * PAGE - 1]);
    CHECK(munmap(po, PAGE) == 0);
    printf("file mmap private: ok\n");

    /* Shared: a write through the mapping reaches the file. */
    uint8_t *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(sh != MAP_FAILED);
    CHECK(same(sh, len, 51));
    memcpy(sh + PAGE + 100, "shared-write", 12);
    CHECK(msync(sh, len, MS_SYNC) == 0);
    char back[12];
    CHECK(pread(fd, back, 12, PAGE + 100) == 12);
    CHECK(memcmp(back, "shared-write", 12) == 0);
    CHECK(munmap(sh, len) == 0);
    /* Still there after unmapping, through a fresh read. */
    CHECK(pread(fd, back, 12, PAGE + 100) == 12);
    CHECK(memcmp(back, "shared-write", 12) == 0);
    printf("file mmap shared: ok\n");

    /* Past the end of the file within the last page reads zero. */
    CHECK(ftruncate(fd, PAGE + 10) == 0);
    uint8_t *tail = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(tail != MAP_FAILED);
    CHECK(tail[PAGE + 9] == buf[PAGE + 9]);
    CHECK(zero(tail + PAGE + 10, PAGE - 10));
    CHECK(munmap(tail, 2 * PAGE) == 0);
    printf("file mmap tail: ok\n");
    free(buf);
    close(fd);
}

static void test_madvise(void)
{
    uint8_t *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    memset(p, 0xab, 4 * PAGE);
    CHECK(madvise(p + PAGE, 2 * PAGE, MADV_DONTNEED) == 0);
    CHECK(p[0] == 0xab && p[PAGE - 1] == 0xab);
    CHECK(zero(p + PAGE, 2 * PAGE));
    CHECK(p[3 * PAGE] == 0xab);
    CHECK(madvise(p, 4 * PAGE, MADV_WILLNEED) == 0);
    CHECK(munmap(p, 4 * PAGE) == 0);
    printf("madvise DONTNEED: ok\n");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_malloc();
    test_mmap_anon();
    test_mremap();
    test_mprotect();
    test_munmap_partial();
    test_brk();
    test_map_fixed();
    test_file_mappings();
    test_madvise();
    printf("mem: all ok\n");
    return 0;
}
