/*
 * trunc_zombie.c - a mapped file truncated (ftruncate, truncate, open
 * O_TRUNC) and grown again while the run holds an unreaped child (a
 * zombie, which has no address space) and a live child that inherited
 * the mapping: both mappings see the file's new size. hvrun once walked
 * every process's address space on a resize and reached the zombie's
 * (SIGSEGV). Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static long size_of(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (long)st.st_size : -1;
}

int main(void)
{
    char path[] = "/tmp/hvrun-trunc-zombie-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, "hello world", 11) != 11)
        return 1;
    char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return 1;
    pid_t z = fork();
    if (z == 0)
        _exit(7);
    siginfo_t si;
    printf("zombie: %d\n", waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT));
    int go[2];
    if (pipe(go))
        return 1;
    fflush(stdout);
    pid_t live = fork();
    if (live == 0) {
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        printf("live child sees \"%.3s\"\n", m); /* after the resizes */
        fflush(stdout);
        _exit(0);
    }
    int rc = ftruncate(fd, 3);
    printf("ftruncate 3: %d size %ld\n", rc, size_of(fd));
    rc = truncate(path, 1);
    printf("truncate 1: %d size %ld\n", rc, size_of(fd));
    int f2 = open(path, O_WRONLY | O_TRUNC);
    printf("O_TRUNC: %s size %ld\n", f2 >= 0 ? "ok" : "failed", size_of(fd));
    if (f2 >= 0)
        close(f2);
    printf("pwrite: %zd\n", pwrite(fd, "abc", 3, 0));
    rc = ftruncate(fd, 4096);
    printf("ftruncate 4096: %d size %ld\n", rc, size_of(fd));
    printf("parent sees \"%.3s\", byte 100 is %d\n", m, m[100]);
    fflush(stdout);
    if (write(go[1], "x", 1) != 1)
        return 1;
    int st;
    waitpid(live, &st, 0);
    printf("live child status %d\n", WEXITSTATUS(st));
    waitpid(z, &st, 0);
    printf("zombie status %d\n", WEXITSTATUS(st));
    unlink(path);
    return 0;
}
