/*
 * shm_fork: MAP_SHARED memory stays shared across fork (anonymous and file
 * mappings), MAP_PRIVATE memory does not, and MADV_DONTNEED keeps the data
 * of shared anonymous memory. Prints one line per step; exits 1 at the
 * first failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL

/* Forks a child that adds 1 to *counter (and writes a marker at the end of
 * the region), waits for it, checks it exited 0. */
static void child_increments(volatile int *counter, volatile char *last)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        (*counter)++;
        if (last)
            *last = 'c';
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void shared_anon(void)
{
    size_t len = 3 * PAGE;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    volatile int *counter = (volatile int *)m;
    child_increments(counter, m + len - 1);
    printf("shared anon counter %d last '%c'\n", *counter, m[len - 1]);
    CHECK(*counter == 1 && m[len - 1] == 'c');
    /* Again: the parent's own write and a second child both count. */
    (*counter)++;
    child_increments(counter, NULL);
    printf("shared anon counter %d\n", *counter);
    CHECK(*counter == 3);
    /* DONTNEED on shared anonymous memory keeps the data (shmem). */
    CHECK(madvise(m, len, MADV_DONTNEED) == 0);
    printf("shared anon after MADV_DONTNEED %d\n", *counter);
    CHECK(*counter == 3);
    /* A piece split off by mprotect/munmap stays shared. */
    CHECK(mprotect(m + PAGE, PAGE, PROT_READ) == 0);
    CHECK(munmap(m, PAGE) == 0);
    child_increments((volatile int *)(m + 2 * PAGE), NULL);
    printf("split piece counter %d\n", *(volatile int *)(m + 2 * PAGE));
    CHECK(*(volatile int *)(m + 2 * PAGE) == 1);
    CHECK(munmap(m + PAGE, 2 * PAGE) == 0);
}

static void shared_file(void)
{
    char path[64];
    snprintf(path, sizeof(path), "shm_fork.%d.tmp", (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(unlink(path) == 0);
    CHECK(ftruncate(fd, (off_t)(2 * PAGE)) == 0);
    char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    volatile int *counter = (volatile int *)(m + PAGE);
    child_increments(counter, m);
    printf("shared file counter %d first '%c'\n", *counter, m[0]);
    CHECK(*counter == 1 && m[0] == 'c');
    /* And the file itself holds the child's write. */
    int v = 0;
    CHECK(pread(fd, &v, sizeof(v), (off_t)PAGE) == (ssize_t)sizeof(v));
    printf("shared file pread %d\n", v);
    CHECK(v == 1);
    CHECK(munmap(m, 2 * PAGE) == 0);
    CHECK(close(fd) == 0);
}

static void private_anon(void)
{
    int *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    *m = 7;
    child_increments((volatile int *)m, NULL);
    printf("private anon counter %d\n", *(volatile int *)m);
    CHECK(*m == 7);
    CHECK(munmap(m, PAGE) == 0);
}

static void private_file(void)
{
    char path[64];
    snprintf(path, sizeof(path), "shm_fork.p%d.tmp", (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(unlink(path) == 0);
    int zero = 5;
    CHECK(pwrite(fd, &zero, sizeof(zero), 0) == (ssize_t)sizeof(zero));
    CHECK(ftruncate(fd, (off_t)PAGE) == 0);
    int *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(m != MAP_FAILED);
    child_increments((volatile int *)m, NULL);
    printf("private file counter %d\n", *(volatile int *)m);
    CHECK(*m == 5);
    CHECK(munmap(m, PAGE) == 0);
    CHECK(close(fd) == 0);
}

int main(void)
{
    shared_anon();
    shared_file();
    private_anon();
    private_file();
    printf("ok\n");
    return 0;
}
