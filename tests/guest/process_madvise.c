/*
 * process_madvise: advice for another process's memory through a pidfd
 * (and the caller's own), as Linux checks it: flags, iovecs, the pidfd,
 * the advice (COLD, PAGEOUT, WILLNEED: Linux 6.1 takes no other; 6.13
 * also DONTNEED, not tested here), the ranges (the
 * bytes advised before a range that fails, or its error). The memory
 * keeps its contents.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r)
{
    if (r < 0)
        printf("%-36s -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%-36s %ld\n", what, r);
}

static long pmadvise(int pidfd, const struct iovec *v, size_t n, int advice,
                     unsigned flags)
{
    return syscall(SYS_process_madvise, pidfd, v, n, advice, flags);
}

int main(void)
{
    char *m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 'x', 4 * 4096);
    munmap(m + 2 * 4096, 4096); /* a hole */
    int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
    struct iovec one = {m, 4096}, two[2] = {{m, 4096}, {m + 4096, 4096}};
    struct iovec hole[2] = {{m, 4096}, {m + 2 * 4096, 4096}};
    struct iovec unaligned = {m + 1, 4096};
    show("self COLD", pmadvise(self, &one, 1, MADV_COLD, 0));
    show("self PAGEOUT two ranges", pmadvise(self, two, 2, MADV_PAGEOUT, 0));
    show("self WILLNEED", pmadvise(self, &one, 1, MADV_WILLNEED, 0));
    show("flags", pmadvise(self, &one, 1, MADV_COLD, 1));
    show("not a pidfd", pmadvise(0, &one, 1, MADV_COLD, 0));
    show("second range a hole", pmadvise(self, hole, 2, MADV_COLD, 0));
    show("first range a hole", pmadvise(self, hole + 1, 1, MADV_COLD, 0));
    show("unaligned", pmadvise(self, &unaligned, 1, MADV_COLD, 0));
    show("no ranges", pmadvise(self, &one, 0, MADV_COLD, 0));
    printf("contents kept: %d\n", m[0] == 'x' && m[4096] == 'x');
    int ready[2], done[2];
    pipe(ready);
    pipe(done);
    pid_t c = fork();
    if (c == 0) {
        char k;
        write(ready[1], "r", 1);
        read(done[0], &k, 1);
        printf("child contents kept: %d\n", m[0] == 'x' && m[4096] == 'x');
        _exit(0);
    }
    char k;
    read(ready[0], &k, 1);
    int child = (int)syscall(SYS_pidfd_open, c, 0);
    show("child PAGEOUT", pmadvise(child, two, 2, MADV_PAGEOUT, 0));
    fflush(stdout);
    write(done[1], "d", 1);
    waitpid(c, NULL, 0);
    show("reaped child COLD", pmadvise(child, &one, 1, MADV_COLD, 0));
    return 0;
}
