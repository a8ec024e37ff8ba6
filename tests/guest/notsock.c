/*
 * notsock: found by the syscall fuzzer (tests/fuzz/sysfuzz.c). A socket
 * call on a file that is no socket is -ENOTSOCK before its other
 * arguments are looked at; hvrun read recvmsg's msghdr first and said
 * -EMSGSIZE. Prints each answer so the runner compares it with Linux.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest_check.h"

static void report(const char *what, long r)
{
    printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

int main(void)
{
    int fd = open("/dev/null", O_RDWR);
    CHECK(fd >= 0);
    char junk[256];
    memset(junk, 0x41, sizeof(junk));
    struct msghdr *m = (struct msghdr *)(void *)junk;
    report("recvmsg", recvmsg(fd, m, 0x2d));
    report("sendmsg", sendmsg(fd, m, MSG_DONTWAIT));
    report("recvfrom", recvfrom(fd, junk, 16, MSG_DONTWAIT, NULL, NULL));
    report("sendto", sendto(fd, junk, 16, MSG_DONTWAIT, NULL, 0));
    socklen_t len = 4;
    report("getsockopt", getsockopt(fd, SOL_SOCKET, SO_TYPE, junk, &len));
    report("setsockopt", setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, junk, 4));
    report("getsockname", getsockname(fd, (struct sockaddr *)junk, &len));
    report("shutdown", shutdown(fd, SHUT_RDWR));
    report("listen", listen(fd, 1));
    report("bad fd", recvmsg(1000, m, 0));
    return 0;
}
