/*
 * userns.c - user namespaces as Linux makes them, compared with a native
 * run (as root, like the suite; the unprivileged part in a child that
 * drops to 65534:65534 with no groups): unshare(CLONE_NEWUSER) and the
 * full capabilities it gives, the uid_map/gid_map/setgroups write rules
 * (one write, the own euid only, "deny" before an unprivileged gid map),
 * ids and file owners through the map (unmapped: 65534), set*id of an
 * unmapped id, nesting, clone(CLONE_NEWUSER) with the parent writing the
 * child's map, setns back refused, and the argument checks.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

/* write(2) of s to path: 0 or the errno. */
static int put(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return errno;
    ssize_t n = write(fd, s, strlen(s));
    int err = n < 0 ? errno : 0;
    close(fd);
    return err;
}

static void show(const char *path)
{
    char buf[256];
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    CHECK(n >= 0);
    buf[n] = '\0';
    printf("%s: %s", path, buf);
    close(fd);
}

static int cap_effective_full(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    CHECK(syscall(SYS_capget, &h, d) == 0);
    return d[0].effective == 0xffffffffu && (d[1].effective & 0xff) == 0xff;
}

/* An allow-everything filter without no_new_privs: 0 or the errno. */
static int filter_allowed(void)
{
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {1, &allow};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ? errno : 0;
}

static void link_of(const char *path, char *out, size_t cap)
{
    ssize_t n = readlink(path, out, cap - 1);
    CHECK(n > 0);
    out[n] = '\0';
}

static void drop_to_nobody(void)
{
    CHECK(setgroups(0, NULL) == 0);
    CHECK(setresgid(65534, 65534, 65534) == 0);
    CHECK(setresuid(65534, 65534, 65534) == 0);
    /* changing ids made it undumpable: /proc/self would be root's */
    CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
}

static void unprivileged(void)
{
    drop_to_nobody();
    char outer[64], inner[64];
    link_of("/proc/self/ns/user", outer, sizeof(outer));
    int outer_fd = open("/proc/self/ns/user", O_RDONLY);
    CHECK(outer_fd >= 0);
    printf("uts unprivileged: %d\n", unshare(CLONE_NEWUTS) < 0 ? errno : 0);
    printf("caps before: %d\n", cap_effective_full());
    printf("seccomp before: %d\n", filter_allowed());
    CHECK(unshare(CLONE_NEWUSER) == 0);
    CHECK(prctl(PR_SET_DUMPABLE, 1) == 0); /* new capabilities reset it */
    link_of("/proc/self/ns/user", inner, sizeof(inner));
    printf("new user ns: %s\n", strcmp(outer, inner) ? "yes" : "no");
    struct stat by_name, by_fd, old_fd;
    int inner_fd = open("/proc/self/ns/user", O_RDONLY);
    CHECK(inner_fd >= 0 && stat("/proc/self/ns/user", &by_name) == 0 &&
          fstat(inner_fd, &by_fd) == 0 && fstat(outer_fd, &old_fd) == 0);
    printf("ns inode: by name = by fd %d, new != old %d, link names it %d\n",
           by_name.st_ino == by_fd.st_ino && by_name.st_dev == by_fd.st_dev,
           by_fd.st_ino != old_fd.st_ino,
           (unsigned long)by_name.st_ino == strtoul(inner + 6, NULL, 10));
    close(inner_fd);
    printf("ids unmapped: %d %d %d %d\n", (int)getuid(), (int)geteuid(),
           (int)getgid(), (int)getegid());
    printf("caps after: %d\n", cap_effective_full());
    printf("seccomp after: %d\n", filter_allowed());
    show("/proc/self/uid_map");
    show("/proc/self/setgroups");
    printf("map other uid: %d\n", put("/proc/self/uid_map", "0 1000 1\n"));
    printf("map garbage: %d\n", put("/proc/self/uid_map", "0 x 1\n"));
    printf("map zero count: %d\n", put("/proc/self/uid_map", "0 65534 0\n"));
    printf("map own uid: %d\n", put("/proc/self/uid_map", "0 65534 1\n"));
    printf("map again: %d\n", put("/proc/self/uid_map", "0 65534 1\n"));
    printf("gid map before deny: %d\n",
           put("/proc/self/gid_map", "0 65534 1\n"));
    printf("setgroups junk: %d\n", put("/proc/self/setgroups", "maybe"));
    printf("deny: %d\n", put("/proc/self/setgroups", "deny\n"));
    printf("gid map: %d\n", put("/proc/self/gid_map", "0 65534 1\n"));
    printf("allow again: %d\n", put("/proc/self/setgroups", "allow"));
    show("/proc/self/uid_map");
    show("/proc/self/gid_map");
    show("/proc/self/setgroups");
    printf("ids mapped: %d %d %d %d\n", (int)getuid(), (int)geteuid(),
           (int)getgid(), (int)getegid());
    printf("setgroups denied: %d\n", setgroups(0, NULL) < 0 ? errno : 0);
    printf("setuid unmapped: %d\n", setuid(5) < 0 ? errno : 0);
    printf("setuid mapped: %d\n", setuid(0) < 0 ? errno : 0);
    struct stat st;
    CHECK(stat("/", &st) == 0);
    printf("owner of /: %d %d\n", (int)st.st_uid, (int)st.st_gid);
    printf("uts now: %d\n", unshare(CLONE_NEWUTS) < 0 ? errno : 0);
    printf("sethostname: %d\n",
           sethostname("inner", 5) < 0 ? errno : 0);
    printf("setns outer: %d\n",
           setns(outer_fd, CLONE_NEWUSER) < 0 ? errno : 0);
    printf("setns wrong type: %d\n",
           setns(outer_fd, CLONE_NEWUTS) < 0 ? errno : 0);
    printf("setns not ns: %d\n", setns(1, 0) < 0 ? errno : 0);
    /* nested: its creator's euid is 0 in this namespace */
    CHECK(unshare(CLONE_NEWUSER) == 0);
    printf("nested ids: %d %d\n", (int)getuid(), (int)getgid());
    printf("nested map: %d\n", put("/proc/self/uid_map", "7 0 1\n"));
    show("/proc/self/uid_map");
    printf("nested uid: %d\n", (int)getuid());
}

/* clone(CLONE_NEWUSER): the parent writes the child's maps. */
static void cloned(void)
{
    int go[2], ready[2];
    CHECK(pipe(go) == 0 && pipe(ready) == 0);
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    CHECK(pid >= 0);
    if (pid == 0) {
        char c;
        close(go[1]);
        printf("clone child before: %d\n", (int)getuid());
        CHECK(write(ready[1], "r", 1) == 1);
        CHECK(read(go[0], &c, 1) == 1);
        printf("clone child after: %d %d\n", (int)getuid(), (int)getgid());
        fflush(stdout);
        _exit(0);
    }
    close(go[0]);
    char path[64], c;
    CHECK(read(ready[0], &c, 1) == 1);
    snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
    printf("parent maps child uid: %d\n", put(path, "0 0 1\n"));
    snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
    printf("parent maps child gid: %d\n", put(path, "0 0 1\n"));
    CHECK(write(go[1], "x", 1) == 1);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && status == 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("bad flags: %d\n", unshare(1) < 0 ? errno : 0);
    printf("clone user|fs: %ld\n",
           syscall(SYS_clone, CLONE_NEWUSER | CLONE_FS | SIGCHLD, 0, 0, 0,
                   0) < 0 ? (long)errno : -1L);
    show("/proc/self/uid_map");
    show("/proc/self/setgroups");
    printf("write init map: %d\n", put("/proc/self/uid_map", "0 0 1\n"));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        unprivileged();
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("child status: %d\n", status);
    cloned();
    printf("root ids: %d %d\n", (int)getuid(), (int)getgid());
    return 0;
}
