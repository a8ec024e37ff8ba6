/*
 * proc_routes.c - every route to /proc/self reaches this process: its mem
 * file reads and writes its own memory however it is named (directly,
 * thread-self, task/<tid>, a symlink, a symlink to /proc, chdir("/proc"),
 * openat on a /proc dirfd, /dev/fd/.., /proc/self/root/proc/self), and the
 * settings files it writes (comm, coredump_filter, oom_score_adj) read
 * back what Linux reads back. The runner compares the output with a native
 * run: under hvrun the same names must mean the guest, never hvrun.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_check.h"

static char secret[32] = "guest-memory-0";

/* Reads 14 bytes at &secret through the mem file at (dirfd, path), then
 * writes a new last digit there and checks the variable changed. */
static void mem_route(int dirfd, const char *path, char digit,
                      const char *label)
{
    int fd = openat(dirfd, path, O_RDWR);
    CHECK(fd >= 0);
    char got[15] = {0};
    CHECK(pread(fd, got, 14, (off_t)(uintptr_t)secret) == 14);
    CHECK(memcmp(got, "guest-memory-", 13) == 0);
    CHECK(pwrite(fd, &digit, 1, (off_t)(uintptr_t)secret + 13) == 1);
    CHECK(secret[13] == digit);
    /* the position is the address: lseek then read */
    CHECK(lseek(fd, (off_t)(uintptr_t)secret, SEEK_SET) ==
          (off_t)(uintptr_t)secret);
    CHECK(read(fd, got, 14) == 14 && got[13] == digit);
    close(fd);
    printf("%-24s %s\n", label, secret);
}

static void read_back(const char *name, const char *value)
{
    char path[64], buf[64] = {0};
    snprintf(path, sizeof(path), "/proc/self/%s", name);
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0);
    CHECK(write(fd, value, strlen(value)) == (ssize_t)strlen(value));
    close(fd);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
    close(fd);
    printf("%s: %s", name, buf);
}

int main(void)
{
    char path[128];
    mem_route(AT_FDCWD, "/proc/self/mem", '1', "self");
    mem_route(AT_FDCWD, "/proc/thread-self/mem", '2', "thread-self");
    snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", getpid(), gettid());
    mem_route(AT_FDCWD, path, '3', "pid/task/tid");
    mem_route(AT_FDCWD, "/proc/self/root/proc/self/mem", '4', "root/proc/self");
    mem_route(AT_FDCWD, "/dev/fd/../mem", '5', "/dev/fd/..");

    char dir[] = "proc_routes.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char l1[64], l2[64], l3[64];
    snprintf(l1, sizeof(l1), "%s/mem", dir);
    snprintf(l2, sizeof(l2), "%s/proc", dir);
    snprintf(l3, sizeof(l3), "%s/proc/self/mem", dir);
    CHECK(symlink("/proc/self/mem", l1) == 0);
    CHECK(symlink("/proc", l2) == 0);
    mem_route(AT_FDCWD, l1, '6', "symlink to mem");
    mem_route(AT_FDCWD, l3, '7', "symlink to /proc");
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY);
    CHECK(procfd >= 0);
    mem_route(procfd, "self/mem", '8', "openat(/proc fd)");
    int cwd = open(".", O_RDONLY | O_DIRECTORY);
    CHECK(cwd >= 0 && chdir("/proc") == 0);
    mem_route(AT_FDCWD, "self/mem", '9', "after chdir(/proc)");
    CHECK(fchdir(cwd) == 0);
    /* an unmapped address: EIO, as Linux */
    int fd = open("/proc/self/mem", O_RDONLY);
    char c;
    CHECK(fd >= 0 && pread(fd, &c, 1, 4096) == -1 && errno == EIO);
    close(fd);

    read_back("comm", "renamed-by-the-guest\n");
    char name[17] = {0};
    CHECK(prctl(PR_GET_NAME, name) == 0);
    printf("PR_GET_NAME: %s\n", name);
    read_back("coredump_filter", "0x3f\n");
    read_back("oom_score_adj", "250\n");
    fd = open("/proc/self/oom_score_adj", O_WRONLY);
    CHECK(fd >= 0 && write(fd, "5000", 4) == -1 && errno == EINVAL);
    close(fd);

    unlink(l1);
    unlink(l2);
    CHECK(rmdir(dir) == 0);
    printf("ok\n");
    return 0;
}
