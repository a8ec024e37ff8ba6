/*
 * mprotect's PROT_GROWSDOWN/PROT_GROWSUP as Linux on x86-64: both at once
 * EINVAL, GROWSDOWN on a mapping that does not grow down EINVAL, on a
 * MAP_GROWSDOWN one the change reaching down to its start, GROWSUP always
 * EINVAL (no mapping grows up), and nothing mapped ENOMEM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static void show(const char *what, int r)
{
    printf("%-40s %d %s\n", what, r, r < 0 ? strerrorname_np(errno) : "");
}

int main(void)
{
    char *plain = mmap(NULL, 4 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    char *down = mmap(NULL, 4 * 4096, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
    show("both bits", mprotect(plain, 4096, PROT_READ | PROT_GROWSDOWN | PROT_GROWSUP));
    show("GROWSDOWN, plain mapping", mprotect(plain, 4096, PROT_READ | PROT_GROWSDOWN));
    show("GROWSUP, plain mapping", mprotect(plain, 4096, PROT_READ | PROT_GROWSUP));
    show("GROWSDOWN, growsdown mapping top page",
         mprotect(down + 3 * 4096, 4096, PROT_READ | PROT_WRITE | PROT_GROWSDOWN));
    /* the whole mapping became writable: its first page takes a write */
    down[0] = 1;
    down[4096] = 2;
    printf("written below the range: %d %d\n", down[0], down[4096]);
    munmap(plain, 4 * 4096);
    show("GROWSDOWN, nothing mapped", mprotect(plain, 4096, PROT_READ | PROT_GROWSDOWN));
    show("GROWSUP, nothing mapped", mprotect(plain, 4096, PROT_READ | PROT_GROWSUP));
    show("plain mprotect, nothing mapped", mprotect(plain, 4096, PROT_READ));
    return 0;
}
