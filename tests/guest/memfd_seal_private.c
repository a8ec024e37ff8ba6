/*
 * memfd_seal_private: a memfd's write seal is refused while a shared
 * writable mapping of it exists and granted once it is gone, with a
 * private read-only mapping of it in place (LTP memfd_create01's
 * test_share_mmap): under ptrace hvrun's own view of the private mapping
 * was a shared one of its writable fd, and the seal failed with EBUSY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE (8 * 4096)

static void seal(int fd, int seals, const char *when)
{
    int r = fcntl(fd, F_ADD_SEALS, seals);
    printf("%s: %s\n", when, r == 0 ? "ok" : strerror(errno));
}

int main(void)
{
    int fd = memfd_create("seal", MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, SIZE) < 0)
        return 1;
    char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return 2;
    p[0] = 'x';
    seal(fd, F_SEAL_WRITE, "write seal, shared writable map");
    seal(fd, F_SEAL_SHRINK, "shrink seal, shared writable map");
    munmap(p, SIZE);
    p = mmap(NULL, SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return 3;
    printf("private map reads '%c'\n", p[0]);
    seal(fd, F_SEAL_WRITE, "write seal, private read-only map");
    printf("seals %#x\n", fcntl(fd, F_GET_SEALS));
    printf("private map still reads '%c'\n", p[0]);
    munmap(p, SIZE);
    p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("shared writable map after the seal: %s\n",
           p == MAP_FAILED ? strerror(errno) : "mapped");
    return 0;
}
