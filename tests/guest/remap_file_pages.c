/*
 * remap_file_pages.c - remap_file_pages(2) as Linux (4.0 and later)
 * emulates it, a new shared mapping of the VMA's file: a 4-page file whose
 * pages hold distinct bytes, mapped MAP_SHARED; page 0 remapped to show
 * file page 3 (the other pages unchanged, a write through the new page
 * reaching the file there); a range over two pieces of that one mapping;
 * an unaligned start rounded down; and EINVAL for prot != 0, an empty
 * range, an address in no mapping, an anonymous and a private file
 * mapping, and a range that crosses the mapping's end (into an anonymous
 * neighbour, and into a hole). Run natively and under hvrun, the output
 * must match (tests/run-guest-tests.sh).
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

#define PAGE 4096
#define FILE_PAGES 4

static const char *res(int rc)
{
    return rc == 0 ? "0" : strerrorname_np(errno);
}

/* Which file page each page of the mapping shows: the file's page k is
 * filled with 'A' + k. */
static void show(const char *what, const char *map, int pages)
{
    printf("%s:", what);
    for (int i = 0; i < pages; i++) {
        char c = map[(size_t)i * PAGE];
        int same = 1;
        for (size_t j = 0; j < PAGE; j++)
            same &= map[(size_t)i * PAGE + j] == c;
        printf(" %c%s", c, same ? "" : "(mixed)");
    }
    printf("\n");
}

static int make_file(void)
{
    char path[] = "/tmp/hvrun-rfp-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(unlink(path) == 0);
    char page[PAGE];
    for (int k = 0; k < FILE_PAGES; k++) {
        memset(page, 'A' + k, sizeof(page));
        CHECK(write(fd, page, sizeof(page)) == PAGE);
    }
    return fd;
}

/* A file mapping of FILE_PAGES pages with an anonymous page after it,
 * so nothing of the file follows its end. */
static char *map_file(int fd, int flags)
{
    char *area = mmap(NULL, (FILE_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(area != MAP_FAILED);
    char *map = mmap(area, FILE_PAGES * PAGE, PROT_READ | PROT_WRITE,
                     flags | MAP_FIXED, fd, 0);
    CHECK(map == area);
    return map;
}

static void remaps(int fd)
{
    char *map = map_file(fd, MAP_SHARED);
    show("mapped", map, FILE_PAGES);
    printf("page 0 -> file page 3: %s\n",
           res(remap_file_pages(map, PAGE, 0, 3, 0)));
    show("now", map, FILE_PAGES);

    /* the new page is the file's page 3: a write shows in the file */
    map[0] = 'z';
    char c = 0;
    CHECK(pread(fd, &c, 1, 3 * PAGE) == 1);
    printf("file page 3 after a write through page 0: %c\n", c);
    map[0] = 'D';

    /* pages 0 and 1 are two VMAs now, both of the one file */
    printf("pages 0-1 -> file pages 1-2: %s\n",
           res(remap_file_pages(map, 2 * PAGE, 0, 1, 0)));
    show("now", map, FILE_PAGES);
    printf("unaligned start in page 2 -> file page 0: %s\n",
           res(remap_file_pages(map + 2 * PAGE + 100, PAGE, 0, 0, 0)));
    show("now", map, FILE_PAGES);
    printf("whole mapping back in order: %s\n",
           res(remap_file_pages(map, FILE_PAGES * PAGE, 0, 0, 0)));
    show("now", map, FILE_PAGES);

    printf("prot PROT_READ: %s\n",
           res(remap_file_pages(map, PAGE, PROT_READ, 1, 0)));
    printf("size 0: %s\n", res(remap_file_pages(map, 0, 0, 1, 0)));
    printf("size below a page: %s\n",
           res(remap_file_pages(map, 100, 0, 1, 0)));
    printf("crossing into the anonymous page after it: %s\n",
           res(remap_file_pages(map + 2 * PAGE, 3 * PAGE, 0, 0, 0)));
    CHECK(munmap(map + FILE_PAGES * PAGE, PAGE) == 0);
    printf("crossing into a hole: %s\n",
           res(remap_file_pages(map + 2 * PAGE, 3 * PAGE, 0, 0, 0)));
    printf("in the hole: %s\n",
           res(remap_file_pages(map + FILE_PAGES * PAGE, PAGE, 0, 0, 0)));
    show("unchanged", map, FILE_PAGES);
    CHECK(munmap(map, FILE_PAGES * PAGE) == 0);
}

static void refusals(int fd)
{
    char *anon = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(anon != MAP_FAILED);
    printf("anonymous private: %s\n",
           res(remap_file_pages(anon, PAGE, 0, 1, 0)));
    CHECK(munmap(anon, 2 * PAGE) == 0);

    char *priv = map_file(fd, MAP_PRIVATE);
    printf("private file mapping: %s\n",
           res(remap_file_pages(priv, PAGE, 0, 3, 0)));
    show("private unchanged", priv, FILE_PAGES);
    CHECK(munmap(priv, (FILE_PAGES + 1) * PAGE) == 0);
}

int main(void)
{
    int fd = make_file();
    remaps(fd);
    refusals(fd);
    CHECK(close(fd) == 0);
    return 0;
}
