/*
 * vmsplice_partial.c - vmsplice into a pipe waits only for room, then
 * moves what fits and returns that count (Linux's iter_to_pipe), where a
 * write waits until all of it went: a 128 KiB vmsplice into an empty
 * 64 KiB pipe returns 64 KiB, with no reader. hvrun moved it as writev
 * does and the only thread, the reader too, waited for ever (LTP
 * vmsplice01). The buffer is page-aligned, so each pipe buffer holds a
 * whole page natively. Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guest_check.h"

#define BLOCK (128 * 1024)

static char buffer[BLOCK] __attribute__((aligned(4096)));
static char back[BLOCK];

int main(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    for (int i = 0; i < BLOCK; i++)
        buffer[i] = (char)i;
    printf("pipe size: %d\n", fcntl(fds[1], F_GETPIPE_SZ));
    struct iovec v = {buffer, BLOCK};
    long n = vmsplice(fds[1], &v, 1, 0);
    printf("vmsplice 128 KiB: %s\n", result_text(n));
    printf("vmsplice, full, NONBLOCK: %s\n",
           result_text(vmsplice(fds[1], &v, 1, SPLICE_F_NONBLOCK)));
    long got = read(fds[0], back, BLOCK);
    printf("read: %s\n", result_text(got));
    if (n > 0) {
        v.iov_base = buffer + n;
        v.iov_len = (size_t)(BLOCK - n);
        long m = vmsplice(fds[1], &v, 1, 0);
        printf("vmsplice the rest: %s\n", result_text(m));
        long r = m > 0 ? read(fds[0], back + got, (size_t)m) : 0;
        printf("read: %s\n", result_text(r));
        printf("bytes as written: %d\n",
               got + r == BLOCK && !memcmp(back, buffer, BLOCK));
    }
    return 0;
}
