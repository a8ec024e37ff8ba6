/*
 * host_calls.c - exercises the guest calls that hvrun serves with host
 * calls the rest of the suite rarely reaches (vectored I/O with flags,
 * splice/tee/sendfile/copy_file_range, xattrs, the utime family, renameat2,
 * locks, inotify, shared file mappings, sockets of each family, event
 * fds), so that hvrun's seccomp allowlist (cli/confine.c) is checked on
 * them: a host call missing from it stops hvrun with exit 125. Each call
 * must return (success or the errno Linux gives here); results that are
 * the same natively and under hvrun are checked.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "guest_check.h"

static void file_io(void)
{
    int fd = open("hc.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    char a[] = "hello ", b[] = "world\n", buf[32];
    struct iovec w[2] = {{a, 6}, {b, 6}}, r[1] = {{buf, sizeof(buf)}};
    CHECK(pwritev(fd, w, 2, 0) == 12);
    CHECK(pwritev2(fd, w, 2, 12, RWF_DSYNC) == 12);
    CHECK(preadv(fd, r, 1, 0) == 24);
    CHECK(preadv2(fd, r, 1, 6, RWF_HIPRI) >= 0 || errno == EOPNOTSUPP);
    CHECK(readahead(fd, 0, 4096) == 0);
    CHECK(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0);
    CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL) == 0);
    (void)fallocate(fd, 0, 0, 8192); /* EOPNOTSUPP on some filesystems */
    CHECK(fsync(fd) == 0 && fdatasync(fd) == 0 && syncfs(fd) == 0);
    sync();
    struct statfs sfs;
    CHECK(fstatfs(fd, &sfs) == 0 && statfs(".", &sfs) == 0);
    int flags;
    (void)ioctl(fd, FS_IOC_GETFLAGS, &flags);
    CHECK(ftruncate(fd, 24) == 0 && truncate("hc.dat", 24) == 0);
    int out = open("hc.copy", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(out >= 0);
    loff_t in_off = 0;
    CHECK(copy_file_range(fd, &in_off, out, NULL, 12, 0) == 12);
    off_t off = 12;
    CHECK(sendfile(out, fd, &off, 12) == 12);
    int p[2], q[2];
    CHECK(pipe2(p, O_CLOEXEC) == 0 && pipe(q) == 0);
    loff_t from = 0;
    CHECK(splice(fd, &from, p[1], NULL, 24, 0) == 24);
    CHECK(tee(p[0], q[1], 24, 0) == 24);
    CHECK(splice(p[0], NULL, out, NULL, 24, 0) == 24);
    CHECK(fcntl(p[1], F_SETPIPE_SZ, 65536) >= 4096);
    int n = -1;
    CHECK(ioctl(q[0], FIONREAD, &n) == 0 && n == 24);
    CHECK(dup3(q[0], 100, O_CLOEXEC) == 100 && close(100) == 0);
    close(p[0]), close(p[1]), close(q[0]), close(q[1]);
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
    CHECK(fcntl(out, F_SETLK, &lk) == 0);
    CHECK(fcntl(out, F_OFD_SETLK, &lk) == 0 || errno == EAGAIN);
    CHECK(flock(out, LOCK_EX) == 0 && flock(out, LOCK_UN) == 0);
    close(out);
    close(fd);
}

static void paths(void)
{
    char v[16];
    /* xattrs: ENOTSUP where the filesystem has none; each call returns. */
    (void)setxattr("hc.dat", "user.hc", "1", 1, 0);
    (void)getxattr("hc.dat", "user.hc", v, sizeof(v));
    (void)listxattr("hc.dat", v, sizeof(v));
    (void)lgetxattr("hc.dat", "user.hc", v, sizeof(v));
    (void)llistxattr("hc.dat", v, sizeof(v));
    (void)removexattr("hc.dat", "user.hc");
    (void)lremovexattr("hc.dat", "user.hc");
    (void)lsetxattr("hc.dat", "user.hc", "1", 1, 0);
    int fd = open("hc.dat", O_RDONLY);
    CHECK(fd >= 0);
    (void)fsetxattr(fd, "user.hc2", "2", 1, 0);
    (void)fgetxattr(fd, "user.hc2", v, sizeof(v));
    (void)flistxattr(fd, v, sizeof(v));
    (void)fremovexattr(fd, "user.hc2");
    struct timeval tv[2] = {{1000000000, 0}, {1000000000, 0}};
    struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
    struct utimbuf ub = {1000000000, 1000000000};
    CHECK(utimes("hc.dat", tv) == 0 && utime("hc.dat", &ub) == 0);
    CHECK(futimesat(AT_FDCWD, "hc.dat", tv) == 0);
    CHECK(utimensat(AT_FDCWD, "hc.dat", ts, 0) == 0 && futimens(fd, ts) == 0);
    CHECK(fchmod(fd, 0640) == 0 && chmod("hc.dat", 0644) == 0);
    CHECK(fchmodat(AT_FDCWD, "hc.dat", 0644, 0) == 0);
    CHECK(fchown(fd, getuid(), getgid()) == 0);
    CHECK(chown("hc.dat", getuid(), getgid()) == 0);
    CHECK(lchown("hc.dat", getuid(), getgid()) == 0);
    CHECK(fchownat(AT_FDCWD, "hc.dat", getuid(), getgid(), 0) == 0);
    struct statx stx;
    CHECK(statx(AT_FDCWD, "hc.dat", 0, STATX_BASIC_STATS, &stx) == 0);
    CHECK(faccessat(AT_FDCWD, "hc.dat", R_OK, AT_EACCESS) == 0);
    CHECK(link("hc.dat", "hc.link") == 0 && symlink("hc.dat", "hc.sym") == 0);
    CHECK(readlink("hc.sym", v, sizeof(v)) == 6);
    CHECK(rename("hc.link", "hc.link2") == 0);
    CHECK(renameat2(AT_FDCWD, "hc.link2", AT_FDCWD, "hc.copy",
                    RENAME_EXCHANGE) == 0);
    CHECK(renameat2(AT_FDCWD, "hc.copy", AT_FDCWD, "hc.link2",
                    RENAME_NOREPLACE) == -1 && errno == EEXIST);
    CHECK(mkfifo("hc.fifo", 0600) == 0 && mknod("hc.fifo2", S_IFIFO | 0600, 0) == 0);
    CHECK(mkdir("hc.d", 0755) == 0 && chdir("hc.d") == 0 && chdir("..") == 0);
    int dfd = open("hc.d", O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0 && fchdir(dfd) == 0 && chdir("..") == 0);
    close(dfd);
    int in = inotify_init1(IN_NONBLOCK);
    CHECK(in >= 0);
    int wd = inotify_add_watch(in, ".", IN_CREATE);
    CHECK(wd >= 0 && inotify_rm_watch(in, wd) == 0);
    close(in);
    const char *gone[] = {"hc.fifo", "hc.fifo2", "hc.sym", "hc.link2",
                          "hc.copy", "hc.dat"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        CHECK(unlink(gone[i]) == 0);
    CHECK(rmdir("hc.d") == 0);
    close(fd);
}

static void memory(void)
{
    int fd = open("hc.map", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 8192) == 0 && unlink("hc.map") == 0);
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    m[0] = 'x';
    CHECK(msync(m, 4096, MS_SYNC) == 0);
    unsigned char vec[2];
    CHECK(mincore(m, 8192, vec) == 0);
    CHECK(madvise(m, 4096, MADV_DONTNEED) == 0);
    m = mremap(m, 8192, 16384, MREMAP_MAYMOVE);
    CHECK(m != MAP_FAILED);
    CHECK(mprotect(m, 4096, PROT_READ | PROT_EXEC) == 0);
    CHECK(munmap(m, 16384) == 0);
    close(fd);
    (void)mlock(&fd, sizeof(fd));
    (void)munlock(&fd, sizeof(fd));
}

static void sockets(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    int pass = open("/dev/null", O_RDONLY);
    char c = 'x', cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&c, 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &pass, sizeof(int));
    CHECK(sendmsg(sv[0], &mh, 0) == 1 && recvmsg(sv[1], &mh, 0) == 1);
    CHECK(shutdown(sv[0], SHUT_WR) == 0);
    close(sv[0]), close(sv[1]), close(pass);

    int u = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    CHECK(u >= 0 && bind(u, (struct sockaddr *)&a, sizeof(a)) == 0);
    CHECK(getsockname(u, (struct sockaddr *)&a, &al) == 0);
    CHECK(sendto(u, "d", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1);
    char d;
    CHECK(recvfrom(u, &d, 1, 0, NULL, NULL) == 1 && d == 'd');
    struct mmsghdr mm = {.msg_hdr = {.msg_name = &a, .msg_namelen = sizeof(a),
                                     .msg_iov = &iov, .msg_iovlen = 1}};
    (void)sendmmsg(u, &mm, 1, 0);
    (void)recvmmsg(u, &mm, 1, MSG_DONTWAIT, NULL);
    int rcv = 0;
    socklen_t rl = sizeof(rcv);
    CHECK(getsockopt(u, SOL_SOCKET, SO_RCVBUF, &rcv, &rl) == 0);
    CHECK(setsockopt(u, SOL_SOCKET, SO_RCVBUF, &rcv, rl) == 0);
    close(u);

    int l = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
    socklen_t a6l = sizeof(a6);
    CHECK(l >= 0 && bind(l, (struct sockaddr *)&a6, sizeof(a6)) == 0);
    CHECK(listen(l, 1) == 0 && getsockname(l, (struct sockaddr *)&a6, &a6l) == 0);
    int cl = socket(AF_INET6, SOCK_STREAM, 0);
    CHECK(connect(cl, (struct sockaddr *)&a6, sizeof(a6)) == 0);
    int ac = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    CHECK(ac >= 0 && getpeername(ac, (struct sockaddr *)&a6, &a6l) == 0);
    close(ac), close(cl), close(l);

    int nl = socket(AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */);
    CHECK(nl >= 0);
    close(nl);
    /* Families hvrun does not serve fail inside hvrun (EAFNOSUPPORT,
     * EPROTONOSUPPORT), never on the host; as root they work natively. */
    int s1 = socket(AF_PACKET, SOCK_RAW, 0);
    int s2 = socket(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */);
    if (s1 >= 0)
        close(s1);
    if (s2 >= 0)
        close(s2);
}

static void events(void)
{
    int ep = epoll_create1(EPOLL_CLOEXEC), ev = eventfd(1, EFD_NONBLOCK);
    CHECK(ep >= 0 && ev >= 0);
    struct epoll_event e = {.events = EPOLLIN}, got;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) == 0);
    CHECK(epoll_wait(ep, &got, 1, 0) == 1);
    CHECK(epoll_pwait(ep, &got, 1, 0, NULL) == 1);
    struct pollfd pf = {.fd = ev, .events = POLLIN};
    CHECK(poll(&pf, 1, 0) == 1);
    struct timespec zero = {0, 0};
    CHECK(ppoll(&pf, 1, &zero, NULL) == 1);
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(ev, &rs);
    struct timeval tv0 = {0, 0};
    CHECK(select(ev + 1, &rs, NULL, NULL, &tv0) == 1);
    CHECK(pselect(ev + 1, &rs, NULL, NULL, &zero, NULL) == 1);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    int sf = signalfd(-1, &m, SFD_CLOEXEC);
    int tf = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec its = {.it_value = {0, 1000}};
    CHECK(sf >= 0 && tf >= 0 && timerfd_settime(tf, 0, &its, NULL) == 0);
    close(sf), close(tf), close(ev), close(ep);
}

static void facts(void)
{
    struct rusage ru;
    struct sysinfo si;
    struct utsname un;
    struct rlimit rl;
    cpu_set_t cs;
    char r[8];
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0 && sysinfo(&si) == 0);
    CHECK(uname(&un) == 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0);
    CHECK(prlimit(0, RLIMIT_NOFILE, &rl, NULL) == 0);
    CHECK(sched_getaffinity(0, sizeof(cs), &cs) == 0);
    CHECK(getrandom(r, sizeof(r), 0) == sizeof(r));
    struct timespec ts;
    CHECK(clock_getres(CLOCK_MONOTONIC, &ts) == 0);
    CHECK(getpgrp() > 0 && getppid() >= 0);
    gid_t g[64];
    CHECK(getgroups(64, g) >= 0);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    /* A child that execs: fork and execve are guest calls served with new
     * VMs, never host forks. */
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
}

int main(void)
{
    file_io();
    paths();
    memory();
    sockets();
    events();
    facts();
    printf("host calls ok\n");
    return 0;
}
