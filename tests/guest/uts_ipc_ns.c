/*
 * uts_ipc_ns.c - UTS and IPC namespaces compared with a native run (as
 * root): a child's sethostname/setdomainname in a new UTS namespace is
 * seen by it (uname, /proc/sys/kernel/hostname) and not by its parent;
 * a new IPC namespace starts empty (a key of the parent's is ENOENT, ids
 * start again, /proc/sysvipc/shm lists only its own), its objects go with
 * it, and the parent's are untouched; setns back into the parent's UTS
 * namespace through /proc/PID/ns/uts; clone(CLONE_NEWUTS|CLONE_NEWIPC);
 * a cgroup namespace.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define KEY 0x4e5301

static const char *nodename(void)
{
    static struct utsname u;
    CHECK(uname(&u) == 0);
    return u.nodename;
}

static void show_file(const char *path)
{
    char buf[4096];
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    CHECK(n >= 0);
    buf[n] = '\0';
    printf("%s: %s", path, buf);
    close(fd);
}

/* Lines of /proc/sysvipc/shm after its header. */
static int shm_lines(void)
{
    char buf[8192];
    int fd = open("/proc/sysvipc/shm", O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    CHECK(n > 0);
    buf[n] = '\0';
    close(fd);
    int lines = 0;
    for (char *c = buf; *c; c++)
        lines += *c == '\n';
    return lines - 1;
}

static void wait_ok(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("child status: %d\n", status);
}

static void uts_child(void)
{
    int outer = open("/proc/self/ns/uts", O_RDONLY);
    CHECK(outer >= 0);
    CHECK(unshare(CLONE_NEWUTS) == 0);
    printf("inner before: %s\n", strcmp(nodename(), "inner") ? "old" : "new");
    CHECK(sethostname("inner", 5) == 0);
    CHECK(setdomainname("dom.example", 11) == 0);
    printf("inner uname: %s\n", nodename());
    show_file("/proc/sys/kernel/hostname");
    show_file("/proc/sys/kernel/domainname");
    static const char long_name[65] = "x";
    printf("too long: %d\n", sethostname(long_name, 65) < 0 ? errno : 0);
    CHECK(setns(outer, CLONE_NEWUTS) == 0);
    printf("after setns: %s\n", strcmp(nodename(), "inner") ? "outer" : "inner");
    _exit(0);
}

static void ipc_child(int parent_id)
{
    CHECK(unshare(CLONE_NEWIPC) == 0);
    printf("parent key: %d\n", shmget(KEY, 0, 0) < 0 ? errno : 0);
    printf("parent id stat: %d\n",
           shmctl(parent_id, IPC_STAT, &(struct shmid_ds){0}) < 0 ? errno : 0);
    printf("lines in new ns: %d\n", shm_lines());
    int id = shmget(KEY, 4096, IPC_CREAT | 0600);
    CHECK(id >= 0);
    printf("own id is the first: %d\n", id == 0);
    printf("lines with own: %d\n", shm_lines());
    _exit(0);
}

static int clone_child(void *arg)
{
    (void)arg;
    printf("cloned key: %d\n", shmget(KEY, 0, 0) < 0 ? errno : 0);
    CHECK(sethostname("cloned", 6) == 0);
    printf("cloned uname: %s\n", nodename());
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char before[65];
    snprintf(before, sizeof(before), "%s", nodename());
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        uts_child();
    wait_ok(pid);
    printf("parent unchanged: %d\n", strcmp(before, nodename()) == 0);

    int id = shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0600);
    CHECK(id >= 0);
    int lines = shm_lines();
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        ipc_child(id);
    wait_ok(pid);
    printf("parent key after: %d\n", shmget(KEY, 0, 0) == id);
    printf("parent lines after: %d\n", shm_lines() == lines);

    static char stack[65536];
    pid = clone(clone_child, stack + sizeof(stack),
                CLONE_NEWUTS | CLONE_NEWIPC | SIGCHLD, NULL);
    CHECK(pid >= 0);
    wait_ok(pid);
    printf("parent unchanged again: %d\n", strcmp(before, nodename()) == 0);
    printf("clone ipc|sysvsem: %d\n",
           clone(clone_child, stack + sizeof(stack),
                 CLONE_NEWIPC | CLONE_SYSVSEM | SIGCHLD, NULL) < 0 ? errno
                                                                  : 0);
    CHECK(shmctl(id, IPC_RMID, NULL) == 0);

    /* a cgroup namespace (its /proc/self/cgroup is the host's hierarchy
     * natively, hvrun's cgroup2 root "0::/" in every one) */
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char before_ns[64], after_ns[64];
        ssize_t n = readlink("/proc/self/ns/cgroup", before_ns, 63);
        CHECK(n > 0);
        before_ns[n] = '\0';
        CHECK(unshare(CLONE_NEWCGROUP) == 0);
        n = readlink("/proc/self/ns/cgroup", after_ns, 63);
        CHECK(n > 0);
        after_ns[n] = '\0';
        printf("new cgroup ns: %d\n", strcmp(before_ns, after_ns) != 0);
        _exit(0);
    }
    wait_ok(pid);
    return 0;
}
