/*
 * sysvipc.h - what System V shared memory, semaphores and message queues
 * (mm/sysvshm.c, kernel/sysvsem.c, kernel/sysvmsg.c) share: an object's
 * ipc_perm made, checked (ipcperms) and changed (IPC_SET), and the
 * logical wall clock their times come from.
 */
#ifndef HVRUN_SYSVIPC_H
#define HVRUN_SYSVIPC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/ipc.h>

struct proxy_process;

/* A new object's permissions: the caller's ids, the mode bits of flags. */
void proxy_ipc_perm_init(struct ipc_perm *perm, const struct proxy_process *p,
                         int32_t key, int flags);
/* ipcperms: want (4 read, 2 write) in the owner's, group's or others'
 * bits; root passes. */
bool proxy_ipc_permitted(const struct proxy_process *p,
                         const struct ipc_perm *perm, int want);
/* What a *get of an existing object with flags asks for. */
int proxy_ipc_wanted(int flags);
/* IPC_SET and IPC_RMID: the owner, creator or root. */
bool proxy_ipc_owner(const struct proxy_process *p,
                     const struct ipc_perm *perm);
/* IPC_SET's change: owner ids (the caller's user namespace's, -EINVAL
 * when it does not map them) and the mode's permission bits; 0 or
 * -EINVAL. */
long proxy_ipc_perm_set(const struct proxy_process *p, struct ipc_perm *perm,
                        const struct ipc_perm *to);
/* IPC_STAT's ids as the caller's user namespace sees them. */
void proxy_ipc_perm_seen(const struct proxy_process *p, struct ipc_perm *perm);
/* Seconds of the run's CLOCK_REALTIME (the objects' times). */
int64_t proxy_ipc_now_s(struct proxy_process *p);

#endif
