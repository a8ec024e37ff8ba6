/*
 * sysvipc.c - the permission rules and clock System V IPC objects share
 * (sysvipc.h).
 */
#include "proxy.h"
#include "kernel.h"
#include "namespace.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "det.h"

void proxy_ipc_perm_init(struct ipc_perm *perm, const struct proxy_process *p,
                         int32_t key, int flags)
{
    memset(perm, 0, sizeof(*perm));
    perm->__key = key;
    perm->uid = perm->cuid = p->cred.euid;
    perm->gid = perm->cgid = p->cred.egid;
    perm->mode = (unsigned short)(flags & 0777);
}

bool proxy_ipc_permitted(const struct proxy_process *p,
                         const struct ipc_perm *perm, int want)
{
    /* CAP_IPC_OWNER over the IPC namespace (kernel/namespace.c) */
    if (proxy_ns_ipc_owner_capable(p))
        return true;
    int bits = (int)perm->mode;
    if (p->cred.euid == perm->cuid || p->cred.euid == perm->uid)
        bits >>= 6;
    else if (p->cred.egid == perm->cgid || p->cred.egid == perm->gid)
        bits >>= 3;
    return (bits & want) == want;
}

int proxy_ipc_wanted(int flags)
{
    return (flags & 0444 ? 4 : 0) | (flags & 0222 ? 2 : 0);
}

bool proxy_ipc_owner(const struct proxy_process *p,
                     const struct ipc_perm *perm)
{
    return proxy_ns_ipc_owner_capable(p) || p->cred.euid == perm->uid ||
           p->cred.euid == perm->cuid;
}

long proxy_ipc_perm_set(const struct proxy_process *p, struct ipc_perm *perm,
                        const struct ipc_perm *to)
{
    int64_t uid = proxy_ns_uid_kernel(p, to->uid);
    int64_t gid = proxy_ns_gid_kernel(p, to->gid);
    if (uid < 0 || gid < 0)
        return -EINVAL;
    perm->uid = (uid_t)uid;
    perm->gid = (gid_t)gid;
    perm->mode = (unsigned short)((perm->mode & ~0777) | (to->mode & 0777));
    return 0;
}

void proxy_ipc_perm_seen(const struct proxy_process *p, struct ipc_perm *perm)
{
    perm->uid = proxy_ns_uid_seen(p, perm->uid);
    perm->cuid = proxy_ns_uid_seen(p, perm->cuid);
    perm->gid = proxy_ns_gid_seen(p, perm->gid);
    perm->cgid = proxy_ns_gid_seen(p, perm->cgid);
}

int64_t proxy_ipc_now_s(struct proxy_process *p)
{
    return det_clock_peek_ns(p->det, CLOCK_REALTIME) / 1000000000LL;
}
