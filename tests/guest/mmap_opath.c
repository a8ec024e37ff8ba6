/*
 * mmap_opath.c - mmap of a descriptor by its open mode: an O_PATH fd is
 * no file to mmap (EBADF, private or shared, whatever the protection); an
 * O_WRONLY one is EACCES; a private read-only mapping of an O_RDONLY one
 * reads the file. hvrun once took an O_PATH fd for a private PROT_READ
 * mapping and gave zero pages (its deferred fill failed with EBADF).
 * One line per case, compared with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_check.h"

static const char *outcome(void *m)
{
    return m == MAP_FAILED ? strerror(errno) : "mapped";
}

int main(void)
{
    static const struct { const char *name; int flags; } modes[] = {
        {"O_RDONLY", O_RDONLY}, {"O_WRONLY", O_WRONLY},
        {"O_RDWR", O_RDWR}, {"O_PATH", O_PATH},
        {"O_PATH|O_RDWR", O_PATH | O_RDWR},
    };
    char want[16];
    int ref = open("/etc/passwd", O_RDONLY);
    CHECK(ref >= 0 && read(ref, want, sizeof(want)) == (ssize_t)sizeof(want));
    close(ref);
    /* A file of our own with those bytes: O_WRONLY/O_RDWR need no root. */
    int own = open("mmap_opath.tmp", O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(own >= 0 && write(own, want, sizeof(want)) == (ssize_t)sizeof(want));
    close(own);
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        int fd = open("mmap_opath.tmp", modes[i].flags);
        CHECK(fd >= 0);
        for (int shared = 0; shared < 2; shared++)
            for (int w = 0; w < 2; w++) {
                int prot = PROT_READ | (w ? PROT_WRITE : 0);
                void *m = mmap(NULL, 4096, prot,
                               shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
                printf("%s %s %s: %s", modes[i].name,
                       shared ? "shared" : "private", w ? "rw" : "r",
                       outcome(m));
                if (m != MAP_FAILED) {
                    printf(", %s", memcmp(m, want, sizeof(want)) == 0
                                       ? "the file's bytes"
                                       : "OTHER BYTES");
                    munmap(m, 4096);
                }
                printf("\n");
            }
        close(fd);
    }
    unlink("mmap_opath.tmp");
    return 0;
}
