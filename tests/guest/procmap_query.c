/*
 * procmap_query: the PROCMAP_QUERY ioctl of /proc/self/maps (Linux 6.11)
 * on mappings the test makes, compared with a native run: the mapping
 * covering an address (its bounds, permissions, page size, file offset
 * and name; the inode and device those of stat), none at a hole
 * (ENOENT) or the next one with COVERING_OR_NEXT_VMA, the permission
 * and file-backed filters, a mapping made after the open (the answer is
 * the process's mappings now), and the argument errors. Addresses are
 * printed relative to the test's own mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL

struct query { /* struct procmap_query */
    uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags;
    uint64_t vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
#define QUERY _IOWR('f', 17, struct query)
#define COVERING_OR_NEXT 0x10
#define FILE_BACKED 0x20
#define WRITABLE 0x02

static int maps;
static char *base; /* three pages: rw, a hole, r- (file) */

static long ask(struct query *q, uint64_t addr, uint64_t flags, char *name, uint32_t room)
{
    memset(q, 0, sizeof(*q));
    q->size = sizeof(*q);
    q->query_addr = addr;
    q->query_flags = flags;
    q->vma_name_addr = (uintptr_t)name;
    q->vma_name_size = room;
    return ioctl(maps, QUERY, q);
}

static void show(const char *what, uint64_t addr, uint64_t flags)
{
    struct query q;
    char name[256] = "";
    long r = ask(&q, addr, flags, name, sizeof(name));
    if (r < 0) {
        printf("%s: %s\n", what, result_text(r));
        return;
    }
    const char *slash = strrchr(name, '/');
    printf("%s: [base%+ld, base%+ld) flags %llu page %llu offset %llu name %s (size %s)\n",
           what, (long)(q.vma_start - (uintptr_t)base), (long)(q.vma_end - (uintptr_t)base),
           (unsigned long long)q.vma_flags, (unsigned long long)q.vma_page_size,
           (unsigned long long)q.vma_offset, slash ? slash + 1 : name,
           q.vma_name_size == (name[0] ? strlen(name) + 1 : 0) ? "right" : "wrong");
}

int main(void)
{
    char dir[] = "procmap_query.XXXXXX";
    CHECK(mkdtemp(dir) && chdir(dir) == 0);
    int fd = open("mapped", O_CREAT | O_RDWR, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 4 * PAGE) == 0);
    maps = open("/proc/self/maps", O_RDONLY);
    CHECK(maps >= 0);
    base = mmap(NULL, 3 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(base != MAP_FAILED);
    CHECK(mmap(base, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == base);
    CHECK(munmap(base + PAGE, PAGE) == 0);
    CHECK(mmap(base + 2 * PAGE, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 2 * PAGE) == base + 2 * PAGE);

    show("anonymous rw", (uintptr_t)base + 10, 0);
    show("the hole", (uintptr_t)base + PAGE, 0);
    show("the hole, or next", (uintptr_t)base + PAGE, COVERING_OR_NEXT);
    show("the file", (uintptr_t)base + 2 * PAGE, 0);
    show("the file, writable only", (uintptr_t)base + 2 * PAGE, WRITABLE);
    show("anonymous, file-backed only", (uintptr_t)base, FILE_BACKED);
    show("anonymous, file-backed or next", (uintptr_t)base, FILE_BACKED | COVERING_OR_NEXT);

    struct query q;
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    CHECK(ask(&q, (uintptr_t)base + 2 * PAGE, 0, NULL, 0) == 0);
    printf("the file's inode and device are stat's: %s\n",
           q.inode == st.st_ino && makedev(q.dev_major, q.dev_minor) == st.st_dev ? "yes" : "no");
    char tiny[4];
    printf("name buffer too small: %s\n", result_text(ask(&q, (uintptr_t)base + 2 * PAGE, 0, tiny, sizeof(tiny))));
    printf("unknown flag: %s\n", result_text(ask(&q, (uintptr_t)base, 0x40, NULL, 0)));
    printf("name size without address: %s\n", result_text(ask(&q, (uintptr_t)base, 0, NULL, 8)));
    memset(&q, 0, sizeof(q));
    q.size = 16;
    printf("size 16: %s\n", result_text(ioctl(maps, QUERY, &q)));
    static char big[8192];
    memcpy(big, &(uint64_t){8192}, 8);
    printf("size 8192: %s\n", result_text(ioctl(maps, QUERY, big)));
    memset(big, 0, sizeof(big));
    memcpy(big, &(uint64_t){200}, 8);
    ((struct query *)big)->query_addr = (uintptr_t)base;
    printf("size 200, zeros past the struct: %s\n", result_text(ioctl(maps, QUERY, big)));
    big[150] = 1;
    printf("size 200, a byte past the struct: %s\n", result_text(ioctl(maps, QUERY, big)));
    printf("bad pointer: %s\n", result_text(ioctl(maps, QUERY, (void *)8)));
    int status = open("/proc/self/status", O_RDONLY);
    printf("on /proc/self/status: %s\n", result_text(ioctl(status, QUERY, &q)));

    CHECK(munmap(base, 3 * PAGE) == 0 && close(fd) == 0 && unlink("mapped") == 0);
    CHECK(chdir("..") == 0 && rmdir(dir) == 0);
    return 0;
}
