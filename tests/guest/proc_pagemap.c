/*
 * proc_pagemap.c - /proc/self/pagemap: a 64-bit entry per page at offset
 * 8 * (address / page size); bit 63 says the page is present, bit 61 that
 * it is a file's or shared memory's. A MAP_POPULATE file mapping is all
 * present, as is anonymous memory once written; an unmapped page is 0;
 * reads at an unaligned offset or of a length not a multiple of 8 are
 * EINVAL, and past the user address space give nothing. hvrun refused the
 * file (EACCES: LTP's mmap12).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

#define PRESENT (1ULL << 63)
#define FILE_PAGE (1ULL << 61)

static int pm;
static long page;

static uint64_t entry(const void *addr)
{
    uint64_t e;
    off_t at = (off_t)((uintptr_t)addr / (uintptr_t)page * 8);
    CHECK(pread(pm, &e, 8, at) == 8);
    return e;
}

/* How many of n pages from addr have all of bits. */
static int count(const char *addr, int n, uint64_t bits)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += (entry(addr + (long)i * page) & bits) == bits;
    return c;
}

int main(void)
{
    page = sysconf(_SC_PAGESIZE);
    pm = open("/proc/self/pagemap", O_RDONLY);
    CHECK(pm >= 0);

    char path[] = "/tmp/pagemapXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && ftruncate(fd, 16 * page) == 0);
    char *file = mmap(NULL, 16 * page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_POPULATE, fd, 0);
    CHECK(file != MAP_FAILED);
    printf("populated file mapping: %d of 16 present\n", count(file, 16, PRESENT));
    char *shared = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    CHECK(shared != MAP_FAILED);
    printf("populated shared memory: %d of 4 present and shared\n",
           count(shared, 4, PRESENT | FILE_PAGE));
    char *anon = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(anon != MAP_FAILED);
    for (int i = 0; i < 4; i++)
        anon[(long)i * page] = 1;
    printf("written anonymous memory: %d of 4 present, %d a file's\n",
           count(anon, 4, PRESENT), count(anon, 4, FILE_PAGE));
    CHECK(munmap(anon + page, page) == 0);
    printf("an unmapped page's entry: %llu\n",
           (unsigned long long)entry(anon + page));

    uint64_t e[2];
    printf("unaligned offset: %s\n", result_text(pread(pm, e, 8, 4)));
    printf("length 12: %s\n", result_text(pread(pm, e, 12, 0)));
    printf("length 0: %s\n", result_text(pread(pm, e, 0, 0)));
    off_t end = (off_t)(0x7ffffffff000ULL / (uint64_t)page * 8);
    printf("past the user address space: %s\n", result_text(pread(pm, e, 16, end)));
    printf("lseek then read: %d\n",
           lseek(pm, (off_t)((uintptr_t)file / (uintptr_t)page * 8), SEEK_SET) >= 0 &&
               read(pm, e, 16) == 16 && (e[0] & PRESENT) && (e[1] & PRESENT));
    printf("write: %s\n", result_text(write(open("/proc/self/pagemap", O_RDONLY), e, 8)));
    unlink(path);
    return 0;
}
