/*
 * ns_ioctl: the nsfs ioctls on /proc/PID/ns fds: NS_GET_NSTYPE, and
 * NS_GET_PARENT / NS_GET_USERNS / NS_GET_OWNER_UID with their EPERM
 * (a namespace's relative outside the caller's), EINVAL (a type without
 * parent or owner uid) and ENOTTY (an unknown request); and for a child
 * in a new pid or user namespace, the parent (or owner) fd it gives is
 * the caller's own namespace, /proc/CHILD/ns/NAME being the child's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char stack[65536];
static int hold[2];

static void show(const char *what, long r)
{
    if (r < 0)
        printf("%-32s -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%-32s %ld\n", what, r);
}

static int child(void *arg)
{
    char c;
    (void)arg;
    return read(hold[0], &c, 1) < 0;
}

static void related(int flag, const char *name, unsigned long req)
{
    if (pipe(hold) < 0)
        return;
    pid_t pid = clone(child, stack + sizeof(stack), flag | SIGCHLD, NULL);
    if (pid < 0) {
        show("clone", -1);
        return;
    }
    char path[64], mine[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
    snprintf(mine, sizeof(mine), "/proc/self/ns/%s", name);
    int my = open(mine, O_RDONLY), of_child = open(path, O_RDONLY);
    int rel = ioctl(of_child, req);
    struct stat a, b, c;
    fstat(my, &a);
    fstat(of_child, &b);
    if (rel >= 0 && fstat(rel, &c) == 0)
        printf("%s of a child: the child's differs from mine %d, the related "
               "one is mine %d, close-on-exec %d\n",
               name, b.st_ino != a.st_ino, c.st_ino == a.st_ino,
               (fcntl(rel, F_GETFD) & FD_CLOEXEC) != 0);
    else
        show(name, -1);
    if (write(hold[1], "x", 1) < 0)
        return;
    waitpid(pid, NULL, 0);
    close(hold[0]);
    close(hold[1]);
}

int main(void)
{
    int user = open("/proc/self/ns/user", O_RDONLY);
    int uts = open("/proc/self/ns/uts", O_RDONLY);
    int pid = open("/proc/self/ns/pid", O_RDONLY);
    show("NSTYPE user is CLONE_NEWUSER", ioctl(user, NS_GET_NSTYPE) == CLONE_NEWUSER);
    show("NSTYPE uts is CLONE_NEWUTS", ioctl(uts, NS_GET_NSTYPE) == CLONE_NEWUTS);
    show("NSTYPE pid is CLONE_NEWPID", ioctl(pid, NS_GET_NSTYPE) == CLONE_NEWPID);
    show("USERNS of my user namespace", ioctl(user, NS_GET_USERNS));
    show("PARENT of my user namespace", ioctl(user, NS_GET_PARENT));
    show("PARENT of my pid namespace", ioctl(pid, NS_GET_PARENT));
    show("PARENT of uts", ioctl(uts, NS_GET_PARENT));
    uid_t owner = 12345;
    show("OWNER_UID of uts", ioctl(uts, NS_GET_OWNER_UID, &owner));
    show("unknown nsfs request", ioctl(user, _IO(NSIO, 0x55)));
    int owner_fd = ioctl(uts, NS_GET_USERNS);
    struct stat a, b;
    if (owner_fd >= 0 && fstat(owner_fd, &a) == 0 && fstat(user, &b) == 0)
        printf("USERNS of my uts is my user namespace: %d\n",
               a.st_ino == b.st_ino);
    else
        show("USERNS of my uts", -1);
    fflush(stdout);
    related(CLONE_NEWPID, "pid", NS_GET_PARENT);
    related(CLONE_NEWUSER, "user", NS_GET_USERNS);
    related(CLONE_NEWUSER, "user", NS_GET_PARENT);
    return 0;
}
