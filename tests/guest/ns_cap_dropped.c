/*
 * ns_cap_dropped: making a namespace needs CAP_SYS_ADMIN in the caller's
 * effective set (copy_namespaces, unshare_nsproxy_namespaces), not merely
 * euid 0: a root process that cleared it with capset (LTP's
 * TST_CAP_DROP, libcap's cap_set_proc) gets EPERM from unshare and clone
 * with CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWCGROUP; with
 * CLONE_NEWUSER too it has the new namespace's full set and may; and once
 * it puts the capability back (still permitted) it may again. Each result
 * is printed and compared with a native run (as root; as another user
 * every line is EPERM both ways).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static int set_effective_admin(int on)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) < 0)
        return -1;
    if (on)
        d[CAP_SYS_ADMIN / 32].effective |= 1u << (CAP_SYS_ADMIN % 32);
    else
        d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
    return (int)syscall(SYS_capset, &h, d);
}

/* unshare(flags) in a child, so the parent's namespaces stay. */
static void try_unshare(const char *name, int flags)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        printf("unshare %s: %s\n", name, result_text(unshare(flags)));
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
}

/* clone(flags) straight, the child exiting at once. */
static void try_clone(const char *name, unsigned long flags)
{
    fflush(stdout);
    long rc = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    if (rc == 0)
        _exit(7);
    int saved = errno;
    int st = 0;
    if (rc > 0)
        CHECK(waitpid((pid_t)rc, &st, 0) == rc);
    errno = saved;
    printf("clone %s: %s\n", name, rc > 0 ? "made" : result_text(rc));
}

static void all_kinds(const char *when)
{
    printf("-- %s\n", when);
    try_unshare("uts", CLONE_NEWUTS);
    try_unshare("ipc", CLONE_NEWIPC);
    try_unshare("pid", CLONE_NEWPID);
    try_unshare("cgroup", CLONE_NEWCGROUP);
    try_unshare("user+uts", CLONE_NEWUSER | CLONE_NEWUTS);
    try_clone("uts", CLONE_NEWUTS);
    try_clone("ipc", CLONE_NEWIPC);
    try_clone("pid", CLONE_NEWPID);
}

int main(void)
{
    all_kinds("as started");
    printf("drop: %s\n", result_text(set_effective_admin(0)));
    all_kinds("CAP_SYS_ADMIN not effective");
    printf("raise: %s\n", result_text(set_effective_admin(1)));
    all_kinds("CAP_SYS_ADMIN effective again");
    return 0;
}
