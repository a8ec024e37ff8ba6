/*
 * vmsplice: user memory into a pipe and out of one, as Linux: the fd's
 * open mode picks the direction, SPLICE_F_NONBLOCK gives EAGAIN on a full
 * or empty pipe, a closed read end EPIPE (SIGPIPE ignored here), a
 * non-pipe EBADF (but an empty transfer is 0 on any fd), unknown flags
 * EINVAL, and the bytes arrive intact and in order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static void show(const char *what, ssize_t r)
{
    if (r < 0)
        printf("%-40s -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%-40s %zd\n", what, r);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    int p[2];
    if (pipe(p) < 0)
        return 1;
    char a[] = "hello ", b[] = "vmsplice\n";
    struct iovec in[2] = {{a, 6}, {b, 9}};
    show("into the write end", vmsplice(p[1], in, 2, 0));
    char out[64] = {0};
    struct iovec o = {out, sizeof(out)};
    show("out of the read end", vmsplice(p[0], &o, 1, 0));
    printf("read: %s", out);
    show("empty pipe, SPLICE_F_NONBLOCK", vmsplice(p[0], &o, 1, SPLICE_F_NONBLOCK));
    show("unknown flags", vmsplice(p[1], in, 2, 0x100));
    show("bad fd", vmsplice(99, in, 2, 0));
    int f = open("/dev/null", O_WRONLY);
    show("not a pipe", vmsplice(f, in, 2, 0));
    struct iovec none = {a, 0};
    show("empty transfer, not a pipe", vmsplice(f, &none, 1, 0));
    show("too many iovecs", vmsplice(p[1], in, 2000, 0));
    /* fill the pipe, then a nonblocking vmsplice */
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    static char big[4096];
    struct iovec bi = {big, sizeof(big)};
    long total = 0;
    ssize_t r;
    while ((r = write(p[1], big, sizeof(big))) > 0)
        total += r;
    printf("pipe holds %ld\n", total);
    fcntl(p[1], F_SETFL, 0);
    show("full pipe, SPLICE_F_NONBLOCK", vmsplice(p[1], &bi, 1, SPLICE_F_NONBLOCK));
    close(p[0]);
    show("no reader", vmsplice(p[1], in, 2, 0));
    close(p[1]);
    close(f);
    return 0;
}
