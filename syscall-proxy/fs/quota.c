/*
 * quota.c - quotactl and quotactl_fd: the host filesystems' answers to
 * queries, EPERM for a change.
 *
 * A query open to the caller (Q_GETFMT, Q_GETINFO, Q_XGETQSTAT(V), its
 * own user or group's Q_GETQUOTA / Q_XGETQUOTA) and a sync are asked of
 * the host about the block device
 * the guest names (through its view of the filesystem), so each
 * filesystem answers as it does: ESRCH where it supports quotas but none
 * are on (ext4 on this host), ENOSYS where it has no quota support,
 * ENOTBLK for a path that is no block device, ENODEV for a device nothing
 * is mounted from, ENOENT and the other path errors. A change
 * (Q_QUOTAON/OFF, Q_SETINFO, Q_SETQUOTA, the XFS set and remove forms, an
 * unknown command) would alter the host's quota state, which needs
 * CAP_SYS_ADMIN no guest has (an unprivileged container's answer): it gets
 * the same device and filesystem errors, found by asking the host the
 * harmless Q_GETFMT, and else EPERM, in Linux's order (type EINVAL, a NULL
 * device ENODEV but for Q_SYNC, the device, the filesystem, then the
 * permission).
 */
#include "proxy.h"
#include "fdtable.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/dqblk_xfs.h>
#include <linux/quota.h>
#include <stdio.h>
#include <string.h>
#include <sys/quota.h>
#include <sys/syscall.h>
#include <unistd.h>

#define QUOTA_TYPES 3 /* MAXQUOTAS: user, group, project */
#define QUOTA_BUF_BYTES 512
/* QCMD without its int overflow */
#define QUOTA_CMD(sub, type) (((unsigned int)(sub) << SUBCMDSHIFT) | (type))

/* The bytes a query writes to addr, or 0 for a command that is no query
 * (-1: a sync, which writes nothing and may go to the host). */
static long query_bytes(unsigned int cmds)
{
    switch (cmds) {
    case Q_GETFMT:
        return sizeof(uint32_t);
    case Q_GETINFO:
        return sizeof(struct if_dqinfo);
    case Q_GETQUOTA:
        return sizeof(struct if_dqblk);
    case Q_GETNEXTQUOTA:
        return sizeof(struct if_nextdqblk);
    case Q_XGETQUOTA:
    case Q_XGETNEXTQUOTA:
        return sizeof(struct fs_disk_quota);
    case Q_XGETQSTAT:
        return sizeof(struct fs_quota_stat);
    case Q_XGETQSTATV:
        return sizeof(struct fs_quota_statv);
    case Q_SYNC:
    case Q_XQUOTASYNC:
        return -1;
    default:
        return 0;
    }
}

/* Linux's check_quotactl_permission: a query of one's own user or group
 * quota and the general queries are open to all; the rest needs
 * CAP_SYS_ADMIN over the filesystem, which no guest has. */
static bool needs_admin(const struct proxy_process *p, unsigned int cmds,
                        unsigned int type, uint32_t id)
{
    switch (cmds) {
    case Q_GETFMT:
    case Q_SYNC:
    case Q_GETINFO:
    case Q_XGETQSTAT:
    case Q_XGETQSTATV:
    case Q_XQUOTASYNC:
        return false;
    case Q_GETQUOTA:
    case Q_XGETQUOTA:
        if (type == USRQUOTA && id == p->cred.euid)
            return false;
        if (type == GRPQUOTA && id == p->cred.egid)
            return false;
        for (int i = 0; type == GRPQUOTA && i < p->cred.nr_groups; i++)
            if (p->cred.groups[i] == id)
                return false;
        return true;
    default:
        return true;
    }
}

/* The host's answer for the block device at the O_PATH fd (quotactl) or
 * for the filesystem of the fd (quotactl_fd). */
static long host_quotactl(int fd, bool by_fd, unsigned int cmd, int id,
                          void *addr)
{
    if (by_fd)
        return syscall(SYS_quotactl_fd, fd, cmd, id, addr) < 0 ? -errno : 0;
    char special[64];
    snprintf(special, sizeof(special), "/proc/self/fd/%d", fd);
    return quotactl((int)cmd, special, id, addr) < 0 ? -errno : 0;
}

/* cmd on the device or filesystem of the host fd: a query's result
 * copied to the guest's addr, a change refused after the host's own
 * checks. */
static long quota_cmd(struct proxy_process *p, int fd, bool by_fd,
                      unsigned int cmd, int id, gva_t addr)
{
    unsigned int cmds = cmd >> SUBCMDSHIFT, type = cmd & SUBCMDMASK;
    long bytes = needs_admin(p, cmds, type, (uint32_t)id) ? 0
                                                          : query_bytes(cmds);
    if (bytes < 0)
        return host_quotactl(fd, by_fd, cmd, id, NULL);
    if (bytes == 0) {
        long rc = host_quotactl(fd, by_fd, QUOTA_CMD(Q_GETFMT, type), id,
                                NULL);
        return rc == -EFAULT || rc == -ESRCH || rc == 0 ? -EPERM : rc;
    }
    uint8_t buf[QUOTA_BUF_BYTES];
    memset(buf, 0, sizeof(buf));
    /* Q_XGETQSTATV reads the caller's version byte first. */
    if (cmds == Q_XGETQSTATV && proxy_copy_in(p, buf, addr, 1) < 0)
        return host_quotactl(fd, by_fd, cmd, id, NULL);
    /* The host answers hvrun (its own quota) only: another id's is asked
     * as hvrun's, which gives the same errors, and its numbers are not
     * hvrun's to tell. */
    int host_id = id;
    bool own_quota = cmds == Q_GETQUOTA || cmds == Q_XGETQUOTA;
    if (own_quota && type == USRQUOTA)
        host_id = (int)geteuid();
    else if (own_quota && type == GRPQUOTA)
        host_id = (int)getegid();
    long rc = host_quotactl(fd, by_fd, cmd, host_id, buf);
    if (rc == 0 && host_id != id)
        return -EPERM;
    if (rc == 0 && proxy_copy_out(p, addr, buf, (size_t)bytes) < 0)
        return -EFAULT;
    return rc;
}

static long sys_quotactl(struct proxy_process *p, const uint64_t a[6])
{
    unsigned int cmd = (unsigned int)a[0];
    if ((cmd & SUBCMDMASK) >= QUOTA_TYPES)
        return -EINVAL;
    if (!a[1])
        return (cmd >> SUBCMDSHIFT) == Q_SYNC ? 0 : -ENODEV;
    long fd = proxy_fs_open_path(p, a[1], true);
    if (fd < 0)
        return fd;
    long rc = quota_cmd(p, (int)fd, false, cmd, (int)a[2], a[3]);
    close((int)fd);
    return rc;
}

/* quotactl_fd(fd, cmd, id, addr): the filesystem of an open file. */
static long sys_quotactl_fd(struct proxy_process *p, const uint64_t a[6])
{
    unsigned int cmd = (unsigned int)a[1];
    int host_fd = proxy_fd_host(&p->fds, (int)a[0]);
    if (host_fd < 0)
        return host_fd;
    if ((cmd & SUBCMDMASK) >= QUOTA_TYPES)
        return -EINVAL;
    return quota_cmd(p, host_fd, true, cmd, (int)a[2], a[3]);
}

const struct proxy_syscall proxy_quota_syscalls[] = {
    {SYS_quotactl, "quotactl", sys_quotactl},
    {SYS_quotactl_fd, "quotactl_fd", sys_quotactl_fd},
    {-1, NULL, NULL},
};
