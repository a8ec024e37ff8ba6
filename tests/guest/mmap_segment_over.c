/*
 * mmap_segment_over.c - ld.so's way of mapping a library: the file whole
 * PROT_READ, then segments MAP_FIXED over it at the same offsets. hvrun
 * keeps the reservation's pages for a segment when they still hold the
 * file's bytes (syscall-proxy/mm/mm.c, reuse_file_pages); each segment
 * must show the file as it is now, whatever the reservation's pages went
 * through: a writable segment's writes stay private, a file changed
 * since shows its new bytes, a page written through a mprotect'd window
 * shows the file again, the tail past the file's end reads zero.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096
#define NPAGES 5
#define FILE_LEN (4 * PAGE + 100)

static unsigned sum(const uint8_t *p, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31 + p[i];
    return s;
}

static uint8_t *overlay(uint8_t *base, int page, int npages, int prot, int fd)
{
    void *m = mmap(base + page * PAGE, (size_t)npages * PAGE, prot,
                   MAP_PRIVATE | MAP_FIXED, fd, (off_t)page * PAGE);
    CHECK(m == base + page * PAGE);
    return m;
}

int main(void)
{
    char path[] = "/tmp/mmap_segment_over.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    static uint8_t data[FILE_LEN];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7 + i / PAGE);
    CHECK(write(fd, data, sizeof(data)) == (ssize_t)sizeof(data));

    uint8_t *base = mmap(NULL, NPAGES * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(base != MAP_FAILED);
    printf("reservation: %08x\n", sum(base, FILE_LEN));

    /* A writable segment: the file's bytes, its writes its own. */
    uint8_t *rw = overlay(base, 1, 2, PROT_READ | PROT_WRITE, fd);
    printf("rw segment: %08x\n", sum(rw, 2 * PAGE));
    rw[10] ^= 0xff;
    uint8_t back[2 * PAGE];
    CHECK(pread(fd, back, sizeof(back), PAGE) == (ssize_t)sizeof(back));
    printf("file after a private write: %s\n",
           memcmp(back, data + PAGE, sizeof(back)) == 0 ? "unchanged"
                                                        : "changed");

    /* The file changes under the reservation: the segment is the new. */
    uint8_t changed[64];
    memset(changed, 0x5a, sizeof(changed));
    CHECK(pwrite(fd, changed, sizeof(changed), 3 * PAGE + 8) ==
          (ssize_t)sizeof(changed));
    uint8_t *ro = overlay(base, 3, 1, PROT_READ, fd);
    printf("segment after the file changed: %02x %02x %08x\n", ro[7], ro[8],
           sum(ro, PAGE));

    /* A reservation page written through a writable window, then made
     * read-only again: a segment over it shows the file. */
    CHECK(mprotect(base, PAGE, PROT_READ | PROT_WRITE) == 0);
    base[5] = 0xee;
    CHECK(mprotect(base, PAGE, PROT_READ) == 0);
    uint8_t *first = overlay(base, 0, 1, PROT_READ, fd);
    printf("segment over a written page: %02x (file %02x)\n", first[5],
           data[5]);

    /* The last page: the file's 100 bytes, then zeros. */
    uint8_t *tail = overlay(base, 4, 1, PROT_READ, fd);
    int zeros = 1;
    for (int i = 100; i < PAGE; i++)
        zeros &= tail[i] == 0;
    printf("tail: %08x, zero past the end: %d\n", sum(tail, 100), zeros);

    /* The same segment over itself once more, then writable pages. */
    uint8_t *again = overlay(base, 3, 1, PROT_READ, fd);
    printf("again: %08x\n", sum(again, PAGE));
    uint8_t *data_seg = overlay(base, 2, 1, PROT_READ | PROT_WRITE, fd);
    printf("data segment over a written one: %08x (file %08x)\n",
           sum(data_seg, PAGE), sum(data + 2 * PAGE, PAGE));
    CHECK(munmap(base, NPAGES * PAGE) == 0);

    /* Segments mapped before anything reads the reservation (ld.so's
     * order): hvrun fills only what is left of it, at the next call. */
    uint8_t *res = mmap(NULL, NPAGES * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(res != MAP_FAILED);
    uint8_t *seg = overlay(res, 1, 1, PROT_READ | PROT_WRITE, fd);
    void *bss = mmap(res + 2 * PAGE, PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
    CHECK(bss == res + 2 * PAGE);
    printf("fresh: head %08x seg %08x bss %08x page3 %08x tail %08x\n",
           sum(res, PAGE), sum(seg, PAGE), sum(bss, PAGE),
           sum(res + 3 * PAGE, PAGE), sum(res + 4 * PAGE, 100));
    CHECK(munmap(res, NPAGES * PAGE) == 0);
    close(fd);
    return 0;
}
