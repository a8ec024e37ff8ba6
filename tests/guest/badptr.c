/*
 * badptr: system calls given bad user pointers fail with EFAULT instead of
 * crashing the process: write from an unmapped buffer, read into a
 * read-only buffer, stat with an unmapped path or result pointer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int failures;

static void expect_efault(const char *what, long rc, int err)
{
    if (rc == -1 && err == EFAULT) {
        printf("%s: EFAULT\n", what);
        return;
    }
    printf("FAIL %s: returned %ld, errno %d (%s), want -1 EFAULT\n", what, rc,
           err, strerror(err));
    failures++;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    long page = sysconf(_SC_PAGESIZE);
    /* volatile: the compiler must not see that the pointer is bogus. */
    const void *volatile bogus = (const void *)1;
    errno = 0;
    long rc = write(1, bogus, 10);
    expect_efault("write(1, (void *)1, 10)", rc, errno);

    int p[2];
    if (pipe(p) != 0) {
        perror("pipe");
        return 1;
    }
    if (write(p[1], "0123456789", 10) != 10) {
        perror("write pipe");
        return 1;
    }
    char *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ro == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    errno = 0;
    rc = read(p[0], ro, 10);
    expect_efault("read(pipe) into PROT_READ memory", rc, errno);

    int zfd = open("/dev/zero", O_RDONLY);
    if (zfd < 0) {
        perror("open /dev/zero");
        return 1;
    }
    errno = 0;
    rc = read(zfd, ro, 16);
    expect_efault("read(/dev/zero) into PROT_READ memory", rc, errno);

    struct stat st;
    errno = 0;
    rc = stat((const char *)1, &st);
    expect_efault("stat((char *)1)", rc, errno);
    errno = 0;
    rc = syscall(SYS_stat, "/", (struct stat *)16);
    expect_efault("stat(\"/\", (struct stat *)16)", rc, errno);
    errno = 0;
    rc = syscall(SYS_stat, "/", (struct stat *)ro);
    expect_efault("stat(\"/\", read-only buffer)", rc, errno);
    char *gone = mmap(NULL, page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (gone == MAP_FAILED || munmap(gone, page) != 0) {
        perror("mmap/munmap");
        return 1;
    }
    errno = 0;
    rc = open(gone, O_RDONLY);
    expect_efault("open(unmapped path)", rc, errno);
    /* A path that starts mapped and runs off the end of its mapping. */
    char *edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (edge == MAP_FAILED || munmap(edge + page, page) != 0) {
        perror("mmap/munmap");
        return 1;
    }
    memset(edge + page - 8, 'a', 8);
    errno = 0;
    rc = open(edge + page - 8, O_RDONLY);
    expect_efault("open(path without NUL before a hole)", rc, errno);

    /* After all that, the process and its fds still work normally. */
    if (write(1, "still alive\n", 12) != 12)
        failures++;
    return failures ? 1 : 0;
}
