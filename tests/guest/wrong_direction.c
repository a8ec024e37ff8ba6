/*
 * wrong_direction.c - a blocking transfer on an fd that cannot make it
 * fails at once, as on Linux, instead of waiting for the fd to become
 * ready (which it never does): the wrong end of a pipe or FIFO, an O_PATH
 * fd, a socket that is not connected, listening or shut down, an epoll or
 * inotify fd, accept on a connected socket, splice and sendfile onto the
 * wrong end. Each line: the call, its result and errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static char buf[64];

static void show(const char *what, long r)
{
    if (r < 0)
        printf("%-36s -1 %s\n", what, strerror(errno));
    else
        printf("%-36s %ld\n", what, r);
}

static void pipe_ends(void)
{
    int p[2];
    if (pipe(p) < 0)
        return;
    struct iovec v = {buf, sizeof(buf)};
    show("write(pipe read end)", write(p[0], "x", 1));
    show("read(pipe write end)", read(p[1], buf, sizeof(buf)));
    show("writev(pipe read end)", writev(p[0], &v, 1));
    show("readv(pipe write end)", readv(p[1], &v, 1));
    int q[2];
    if (pipe(q) == 0) {
        show("splice(from pipe write end)",
             splice(p[1], NULL, q[1], NULL, 16, 0));
        show("splice(into pipe read end)",
             splice(q[0], NULL, p[0], NULL, 16, 0));
        show("sendfile(into pipe read end)", sendfile(p[0], q[0], NULL, 16));
        close(q[0]);
        close(q[1]);
    }
    close(p[0]);
    close(p[1]);
}

static void fifo_ends(void)
{
    char dir[] = "/tmp/wrongdirXXXXXX", path[64];
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof(path), "%s/fifo", dir);
    if (mkfifo(path, 0600) == 0) {
        /* a reader end without waiting for a writer, then blocking */
        int r = open(path, O_RDONLY | O_NONBLOCK);
        int w = open(path, O_WRONLY);
        fcntl(r, F_SETFL, 0);
        show("write(FIFO O_RDONLY)", write(r, "x", 1));
        show("read(FIFO O_WRONLY)", read(w, buf, sizeof(buf)));
        int op = open(path, O_PATH);
        show("read(FIFO O_PATH)", read(op, buf, sizeof(buf)));
        show("write(FIFO O_PATH)", write(op, "x", 1));
        close(op);
        close(w);
        close(r);
        unlink(path);
    }
    rmdir(dir);
}

static int tcp_socket(void)
{
    return socket(AF_INET, SOCK_STREAM, 0);
}

static void tcp_unconnected(void)
{
    int s = tcp_socket();
    show("write(TCP unconnected)", write(s, "x", 1));
    show("read(TCP unconnected)", read(s, buf, sizeof(buf)));
    show("send(TCP unconnected)", send(s, "x", 1, 0));
    show("recv(TCP unconnected)", recv(s, buf, sizeof(buf), 0));
    close(s);
}

static void tcp_listening(void)
{
    int l = tcp_socket();
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) < 0)
        return;
    show("write(TCP listening)", write(l, "x", 1));
    show("read(TCP listening)", read(l, buf, sizeof(buf)));
    show("recv(TCP listening)", recv(l, buf, sizeof(buf), 0));
    show("recv WAITALL(TCP listening)",
         recv(l, buf, sizeof(buf), MSG_WAITALL));
    int c = tcp_socket();
    if (connect(c, (struct sockaddr *)&a, sizeof(a)) == 0) {
        int s = accept(l, NULL, NULL);
        show("accept(TCP connected)", accept(c, NULL, NULL));
        shutdown(c, SHUT_WR);
        show("write(TCP after SHUT_WR)", write(c, "x", 1));
        show("send(TCP after SHUT_WR)", send(c, "x", 1, 0));
        shutdown(c, SHUT_RD);
        show("read(TCP after SHUT_RD)", read(c, buf, sizeof(buf)));
        close(s);
    }
    close(c);
    close(l);
}

static void unix_unconnected(void)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    show("write(AF_UNIX unconnected)", write(s, "x", 1));
    show("read(AF_UNIX unconnected)", read(s, buf, sizeof(buf)));
    show("send(AF_UNIX unconnected)", send(s, "x", 1, 0));
    show("recv(AF_UNIX unconnected)", recv(s, buf, sizeof(buf), 0));
    close(s);
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0) {
        shutdown(sp[0], SHUT_WR);
        show("write(AF_UNIX after SHUT_WR)", write(sp[0], "x", 1));
        close(sp[0]);
        close(sp[1]);
    }
}

static void anon_fds(void)
{
    int e = epoll_create1(0);
    show("read(epoll)", read(e, buf, sizeof(buf)));
    show("write(epoll)", write(e, buf, 8));
    close(e);
    int in = inotify_init1(0);
    show("write(inotify)", write(in, buf, 8));
    close(in);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each line out before the next call */
    signal(SIGPIPE, SIG_IGN);
    pipe_ends();
    fifo_ends();
    tcp_unconnected();
    tcp_listening();
    unix_unconnected();
    anon_fds();
    return 0;
}
