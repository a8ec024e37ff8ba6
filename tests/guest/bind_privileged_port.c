/*
 * bind_privileged_port.c - binding a TCP or UDP port below 1024
 * (net.ipv4.ip_unprivileged_port_start) needs CAP_NET_BIND_SERVICE: an
 * effective uid other than root gets EACCES, after the address's length
 * and family are checked (EINVAL, EAFNOSUPPORT first); port 0 and ports
 * from 1024 are free to bind. hvrun's host side keeps the capability, so
 * the bind went through (LTP bind02). Run natively and under hvrun (as
 * root, which drops to uid 65534 for the checks), the output must match.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest_check.h"

static void try_bind(const char *label, int domain, int type, int port,
                     socklen_t len)
{
    int fd = socket(domain, type, 0);
    CHECK(fd >= 0);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
                              .sin6_port = htons(port)};
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
    void *a = domain == AF_INET6 ? (void *)&a6 : (void *)&a4;
    if (!len)
        len = domain == AF_INET6 ? sizeof(a6) : sizeof(a4);
    printf("%s: %s\n", label, result_text(bind(fd, a, len)));
    close(fd);
}

int main(void)
{
    if (geteuid() != 0 || setegid(65534) != 0 || seteuid(65534) != 0) {
        printf("not root: nothing to check\n");
        return 0;
    }
    try_bind("TCP port 463", AF_INET, SOCK_STREAM, 463, 0);
    try_bind("UDP port 1023", AF_INET, SOCK_DGRAM, 1023, 0);
    try_bind("TCP6 port 80", AF_INET6, SOCK_STREAM, 80, 0);
    try_bind("TCP port 463, short address", AF_INET, SOCK_STREAM, 463, 8);
    try_bind("TCP port 0", AF_INET, SOCK_STREAM, 0, 0);
    return 0;
}
