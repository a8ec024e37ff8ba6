/*
 * fdinfo_proc_ino - /proc/self/fdinfo/N's "ino:" is the number fstat gives
 * for N, a procfs directory's included (hvrun shows procfs entries by a
 * stable number; fdinfo showed the host's, which changes per lookup, so
 * stress-ng's open stressor differed under --verify).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_check.h"

/* fdinfo's ino: line for fd, or 0. */
static unsigned long long fdinfo_ino(int fd)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    int f = open(path, O_RDONLY);
    CHECK(f >= 0);
    ssize_t n = read(f, buf, sizeof(buf) - 1);
    close(f);
    CHECK(n > 0);
    buf[n] = '\0';
    const char *ino = strstr(buf, "ino:");
    unsigned long long v = 0;
    return ino && sscanf(ino, "ino: %llu", &v) == 1 ? v : 0;
}

static void check(const char *what, int fd)
{
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    printf("%s: fdinfo ino is fstat's: %d\n", what,
           fdinfo_ino(fd) == (unsigned long long)st.st_ino);
    close(fd);
}

int main(void)
{
    check("/proc/self/fd", open("/proc/self/fd", O_RDONLY | O_DIRECTORY));
    check("/proc/self", open("/proc/self", O_RDONLY | O_DIRECTORY));
    check("/proc", open("/proc", O_RDONLY | O_DIRECTORY));
    check("/dev/null", open("/dev/null", O_RDONLY));
    check(".", open(".", O_RDONLY | O_DIRECTORY));
    return 0;
}
