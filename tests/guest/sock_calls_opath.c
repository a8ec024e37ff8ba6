/*
 * sock_calls_opath.c - a socket call on an O_PATH fd is EBADF (the fd is
 * no file to sockfd_lookup), on any other fd that is no socket ENOTSOCK
 * (LTP's accept03). hvrun said ENOTSOCK for both.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *res(long rc)
{
    return rc >= 0 ? "ok" : strerrorname_np(errno);
}

static void calls(const char *what, int fd)
{
    int v = 0;
    socklen_t len = sizeof(v);
    struct sockaddr sa = {.sa_family = AF_UNIX};
    printf("%s: accept %s, listen %s, shutdown %s, getsockopt %s, "
           "connect %s, send %s\n",
           what, res(accept(fd, NULL, NULL)), res(listen(fd, 1)),
           res(shutdown(fd, SHUT_RDWR)),
           res(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len)),
           res(connect(fd, &sa, sizeof(sa))), res(send(fd, "x", 1, 0)));
}

int main(void)
{
    calls("O_PATH directory", open(".", O_PATH | O_DIRECTORY));
    calls("O_PATH file", open("/dev/null", O_PATH));
    calls("plain file", open("/dev/null", O_RDWR));
    int p[2];
    if (pipe(p) == 0)
        calls("pipe", p[1]);
    return 0;
}
