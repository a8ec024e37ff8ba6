/*
 * fd_dup_share: what guest fds of one open file description share and
 * what they do not. Shared: the offset and the status flags; closing one
 * leaves the others working; an epoll entry lives while any fd of the
 * file is open. Per fd: close-on-exec (checked across an exec), and epoll
 * keys an entry by (file, fd number), so a dup can be added beside the
 * original and deleted alone. Under hvrun dups share one host fd, which
 * is what these pin down.
 */
#include "guest_check.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

/* fdinfo's flags line of fd shows the fd's own close-on-exec bit. */
static int fdinfo_cloexec(int fd)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    unsigned long flags = 0;
    while (fgets(buf, sizeof(buf), f))
        if (sscanf(buf, "flags: %lo", &flags) == 1)
            break;
    fclose(f);
    return (flags & O_CLOEXEC) != 0;
}

static void shared_offset_and_flags(void)
{
    char path[] = "/tmp/fd_dup_share.XXXXXX";
    int a = mkstemp(path);
    CHECK(a >= 0);
    CHECK(unlink(path) == 0);
    CHECK(write(a, "abcdef", 6) == 6);
    int b = dup(a);
    CHECK(b >= 0);
    CHECK(lseek(b, 2, SEEK_SET) == 2);
    char c;
    CHECK(read(a, &c, 1) == 1);
    printf("offset shared: read '%c', b at %ld\n", c, (long)lseek(b, 0, SEEK_CUR));
    CHECK(fcntl(b, F_SETFL, O_APPEND) == 0);
    printf("O_APPEND through the dup: %s\n",
           (fcntl(a, F_GETFL) & O_APPEND) ? "shared" : "not shared");
    CHECK(fcntl(b, F_SETFD, FD_CLOEXEC) == 0);
    printf("FD_CLOEXEC: a %d, b %d\n", fcntl(a, F_GETFD), fcntl(b, F_GETFD));
    printf("fdinfo O_CLOEXEC: a %d, b %d\n", fdinfo_cloexec(a),
           fdinfo_cloexec(b));
    int d = dup2(a, b); /* onto a dup of the same file: nothing closes */
    CHECK(d == b);
    CHECK(close(a) == 0);
    CHECK(lseek(b, 0, SEEK_SET) == 0);
    char buf[8] = {0};
    CHECK(read(b, buf, 6) == 6);
    printf("after dup2 onto the dup and closing a: %s\n", buf);
    CHECK(close(b) == 0);
}

static void close_one_dup(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    int w2 = fcntl(p[1], F_DUPFD, 10);
    CHECK(w2 >= 10);
    CHECK(close(p[1]) == 0);
    CHECK(write(w2, "x", 1) == 1);
    char c = 0;
    CHECK(read(p[0], &c, 1) == 1);
    printf("write through the dup after closing the original: '%c'\n", c);
    CHECK(close(w2) == 0);
    printf("read after the last writer closed: %zd\n", read(p[0], &c, 1));
    CHECK(close(p[0]) == 0);
}

static int wait_data(int ep, uint64_t *data, int max)
{
    struct epoll_event ev[4];
    int n = epoll_wait(ep, ev, max, 0);
    for (int i = 0; i < n; i++)
        data[i] = ev[i].data.u64;
    return n;
}

static void epoll_entries(void)
{
    int ep = epoll_create1(0), p[2];
    CHECK(ep >= 0);
    CHECK(pipe(p) == 0);
    int r2 = dup(p[0]);
    CHECK(r2 >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
    ev.data.u64 = 2;
    printf("add the dup beside it: %d\n", epoll_ctl(ep, EPOLL_CTL_ADD, r2, &ev));
    int rc = epoll_ctl(ep, EPOLL_CTL_ADD, r2, &ev);
    printf("add the dup again: %d %s\n", rc, strerror(errno));
    CHECK(write(p[1], "y", 1) == 1);
    uint64_t data[4] = {0};
    int n = wait_data(ep, data, 4);
    /* both turn ready at one write: their order is not looked at */
    printf("ready: %d entries (data sum %llu)\n", n,
           (unsigned long long)(data[0] + data[1]));
    printf("delete the dup: %d\n", epoll_ctl(ep, EPOLL_CTL_DEL, r2, NULL));
    rc = epoll_ctl(ep, EPOLL_CTL_DEL, r2, NULL);
    printf("delete the dup again: %d %s\n", rc, strerror(errno));
    int r3 = dup(r2);
    CHECK(r3 >= 0);
    rc = epoll_ctl(ep, EPOLL_CTL_DEL, r3, NULL);
    printf("delete a fresh dup: %d %s\n", rc, strerror(errno));
    ev.data.u64 = 1;
    CHECK(close(p[0]) == 0); /* r2, r3 keep the file: the entry stays */
    n = wait_data(ep, data, 4);
    printf("after closing the added fd: %d entries (data %llu)\n", n,
           (unsigned long long)data[0]);
    CHECK(close(r2) == 0);
    CHECK(close(r3) == 0); /* the last fd: the entry goes */
    printf("after closing every fd: %d entries\n", wait_data(ep, data, 4));
    CHECK(close(p[1]) == 0);
    CHECK(close(ep) == 0);
}

/* A fork's copy of a watched fd is the same (file, number): the child
 * deleting it deletes the parent's entry, as both name one entry. */
static void epoll_entry_across_fork(void)
{
    int ep = epoll_create1(0), p[2];
    CHECK(ep >= 0);
    CHECK(pipe(p) == 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL) == 0 ? 0 : 6);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    int rc = epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
    printf("child deleted the entry: exited %d; parent's MOD: %d %s\n",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, rc, strerror(errno));
    CHECK(close(p[0]) == 0 && close(p[1]) == 0 && close(ep) == 0);
}

/* In the exec'd child: argv[2] had close-on-exec, argv[3] did not. */
static int exec_child(char **argv)
{
    int gone = atoi(argv[2]), kept = atoi(argv[3]);
    int r = fcntl(gone, F_GETFD);
    printf("after exec: close-on-exec fd %s, other %s\n",
           r < 0 && errno == EBADF ? "closed" : "open",
           fcntl(kept, F_GETFD) == 0 ? "open" : "closed");
    fflush(stdout);
    return write(kept, "z", 1) == 1 ? 0 : 4;
}

static void cloexec_across_exec(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    int gone = fcntl(p[1], F_DUPFD_CLOEXEC, 20), kept = dup(p[1]);
    CHECK(gone >= 20 && kept >= 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char g[16], k[16];
        snprintf(g, sizeof(g), "%d", gone);
        snprintf(k, sizeof(k), "%d", kept);
        execl("/proc/self/exe", "fd_dup_share", "--exec-child", g, k,
              (char *)NULL);
        _exit(5);
    }
    CHECK(close(p[1]) == 0 && close(gone) == 0 && close(kept) == 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    char c = 0;
    CHECK(read(p[0], &c, 1) == 1);
    printf("child exited %d, wrote '%c'\n",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, c);
    CHECK(close(p[0]) == 0);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--exec-child") == 0)
        return exec_child(argv);
    shared_offset_and_flags();
    close_one_dup();
    epoll_entries();
    epoll_entry_across_fork();
    cloexec_across_exec();
    return 0;
}
