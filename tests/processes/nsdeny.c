/*
 * nsdeny.c - runs a command as in an unprivileged container: a seccomp
 * filter like Docker's default profile refuses namespaces (unshare,
 * setns, clone with a CLONE_NEW* flag, mount, umount2, pivot_root: EPERM;
 * clone3 and the new mount API: ENOSYS, so callers fall back to clone and
 * mount(2)). tests/processes/run.sh compares bwrap under it
 * natively with bwrap and mount under hvrun, which refuses mount
 * namespaces and mounts so.
 *
 *     nsdeny PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <unistd.h>

static const unsigned long ns_flags[] = {
    CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
    CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: nsdeny PROGRAM [ARGS...]\n");
        return 2;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc = ctx ? 0 : -1;
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* mounts: EPERM without CAP_SYS_ADMIN; the new mount API absent (as
     * under hvrun, so libmount takes mount(2)) */
    static const int mount_calls[] = {SCMP_SYS(mount), SCMP_SYS(umount2),
                                      SCMP_SYS(pivot_root)};
    static const int new_api[] = {SCMP_SYS(fsopen),     SCMP_SYS(fsmount),
                                  SCMP_SYS(fspick),     SCMP_SYS(open_tree),
                                  SCMP_SYS(move_mount), SCMP_SYS(mount_setattr)};
    for (size_t i = 0; rc == 0 && i < 3; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), mount_calls[i], 0);
    for (size_t i = 0; rc == 0 && i < 6; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), new_api[i], 0);
    for (size_t i = 0; rc == 0 && i < sizeof(ns_flags) / sizeof(ns_flags[0]);
         i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i],
                                      ns_flags[i]));
    if (rc == 0)
        rc = seccomp_load(ctx);
    if (rc != 0) {
        fprintf(stderr, "nsdeny: seccomp filter: %d\n", rc);
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
