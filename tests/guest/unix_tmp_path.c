/*
 * unix_tmp_path.c - AF_UNIX socket files under /tmp are the guest's /tmp
 * (hvrun's private one): bind creates the file there (stat sees it, a
 * second bind says EADDRINUSE, unlink removes it), connect and sendto
 * reach it, and getsockname, getpeername and recvfrom name it as the guest
 * did. (hvrun once bound such a path in the host's /tmp, where the guest
 * could not even unlink it.) With the argument "keep" the socket file of
 * the listener is left in place (tests/processes checks that the host's
 * /tmp has no such file). Prints what it sees.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "guest_check.h"

static struct sockaddr_un addr_of(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    return a;
}

static const char *result(int rc)
{
    return rc < 0 ? strerror(errno) : "ok";
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    bool keep = argc > 1 && !strcmp(argv[1], "keep");
    const char *stream = "/tmp/unix-tmp-path.stream";
    const char *dgram = "/tmp/unix-tmp-path.dgram";
    const char *src = "/tmp/unix-tmp-path.src";
    unlink(stream);
    unlink(dgram);
    unlink(src);

    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(l >= 0);
    struct sockaddr_un a = addr_of(stream);
    printf("bind: %s\n", result(bind(l, (struct sockaddr *)&a, sizeof(a))));
    struct stat st;
    printf("stat sees a socket: %d\n",
           stat(stream, &st) == 0 && S_ISSOCK(st.st_mode));
    int again = socket(AF_UNIX, SOCK_STREAM, 0);
    printf("a second bind: %s\n",
           result(bind(again, (struct sockaddr *)&a, sizeof(a))));
    close(again);
    struct sockaddr_un g;
    socklen_t gl = sizeof(g);
    CHECK(getsockname(l, (struct sockaddr *)&g, &gl) == 0);
    printf("getsockname: %s, len %d\n", g.sun_path, (int)gl);
    CHECK(listen(l, 1) == 0);
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    printf("connect: %s\n", result(connect(c, (struct sockaddr *)&a,
                                           sizeof(a))));
    gl = sizeof(g);
    CHECK(getpeername(c, (struct sockaddr *)&g, &gl) == 0);
    printf("getpeername: %s, len %d\n", g.sun_path, (int)gl);
    int s = accept(l, NULL, NULL);
    CHECK(s >= 0);
    CHECK(write(c, "over", 4) == 4);
    char buf[8] = {0};
    CHECK(read(s, buf, sizeof(buf)) == 4);
    printf("stream: %s\n", buf);

    int d = socket(AF_UNIX, SOCK_DGRAM, 0), e = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un da = addr_of(dgram), ea = addr_of(src);
    CHECK(bind(d, (struct sockaddr *)&da, sizeof(da)) == 0);
    CHECK(bind(e, (struct sockaddr *)&ea, sizeof(ea)) == 0);
    printf("sendto: %zd\n",
           sendto(e, "dg", 2, 0, (struct sockaddr *)&da, sizeof(da)));
    struct sockaddr_un from;
    socklen_t fl = sizeof(from);
    ssize_t n = recvfrom(d, buf, sizeof(buf), 0, (struct sockaddr *)&from,
                         &fl);
    printf("recvfrom: %zd from %s, len %d\n", n, from.sun_path, (int)fl);
    printf("unlink: %s %s\n", result(unlink(dgram)), result(unlink(src)));
    if (!keep)
        printf("unlink the listener's: %s\n", result(unlink(stream)));
    return 0;
}
