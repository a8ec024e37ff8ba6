/*
 * accept_dgram.c - accept on a socket kind that has none (UDP, AF_UNIX
 * datagram: Linux's sock_no_accept) is EOPNOTSUPP, blocking or not, where
 * a stream socket that does not listen is EINVAL; hvrun said EINVAL for a
 * blocking datagram socket (LTP accept01). Run natively and under hvrun,
 * the output must match.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest_check.h"

static void try_accept(const char *label, int domain, int type)
{
    int fd = socket(domain, type, 0);
    CHECK(fd >= 0);
    if (domain == AF_INET) {
        struct sockaddr_in sin = {.sin_family = AF_INET};
        CHECK(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
    }
    struct sockaddr_in peer;
    socklen_t len = sizeof(peer);
    printf("%s: %s\n", label,
           result_text(accept(fd, (struct sockaddr *)&peer, &len)));
    close(fd);
}

int main(void)
{
    try_accept("UDP, blocking", AF_INET, SOCK_DGRAM);
    try_accept("UDP, nonblocking", AF_INET, SOCK_DGRAM | SOCK_NONBLOCK);
    try_accept("unix datagram", AF_UNIX, SOCK_DGRAM);
    try_accept("TCP, bound, not listening", AF_INET, SOCK_STREAM);
    try_accept("unix stream, not listening", AF_UNIX, SOCK_STREAM);
    try_accept("unix seqpacket, not listening", AF_UNIX, SOCK_SEQPACKET);
    return 0;
}
