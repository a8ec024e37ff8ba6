/*
 * acct.c - acct(2), BSD process accounting: refused with EPERM.
 *
 * Linux checks CAP_SYS_PACCT before it looks at the name, and no guest
 * has it (an unprivileged container's answer, whatever the guest's uid):
 * switching accounting on or off is a host-wide setting, and records
 * written by the host kernel would carry the host's pids and times. A
 * model that writes acct_v3 records of the run's own processes at their
 * exit is not built; every call, NULL included, is EPERM.
 */
#include "proxy.h"
#include "kernel.h"

#include <errno.h>
#include <sys/syscall.h>

static long sys_acct(struct proxy_process *p, const uint64_t a[6])
{
    (void)p;
    (void)a;
    return -EPERM;
}

const struct proxy_syscall proxy_acct_syscalls[] = {
    {SYS_acct, "acct", sys_acct},
    {-1, NULL, NULL},
};
