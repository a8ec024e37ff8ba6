/*
 * ustat.c - ustat(2), the old per-device free-space call (glibc dropped
 * its wrapper in 2.28; programs and LTP make it with syscall()). The
 * device is one the guest was shown by stat (a virtual st_dev, detcore's
 * det_dev); hvrun finds a mount point of the host device behind it and
 * answers from that file system's statfs, canonical as statfs itself is
 * (docs/DETERMINISM.md): f_tfree and f_tinode are its free blocks and
 * free inodes, as Linux's ustat fills them, f_fname and f_fpack zero.
 */
#include "proxy.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "det.h"

/* Linux's struct ustat on x86-64 (include/linux/types.h). */
struct guest_ustat {
    int32_t f_tfree;   /* __kernel_daddr_t */
    uint64_t f_tinode; /* __kernel_ino_t */
    char f_fname[6];
    char f_fpack[6];
};
_Static_assert(sizeof(struct guest_ustat) == 32, "struct ustat is not x86-64's");

/* new_decode_dev: the 32-bit device number the call takes. */
static uint64_t decode_dev(uint32_t dev)
{
    unsigned major = (dev & 0xfff00) >> 8;
    unsigned minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
    return makedev(major, minor);
}

/* statfs of a mount point of host_dev in hvrun's own mount table (Linux
 * looks up the device's superblock and asks its root). Mount points are
 * not automounted by the look. */
static int statfs_of_dev(uint64_t host_dev, struct statfs *sfs)
{
    FILE *mounts = setmntent("/proc/self/mounts", "r");
    if (!mounts)
        return -EINVAL;
    int rc = -EINVAL;
    struct mntent *m;
    while (rc < 0 && (m = getmntent(mounts))) {
        struct stat st;
        if (fstatat(AT_FDCWD, m->mnt_dir, &st, AT_NO_AUTOMOUNT) < 0 ||
            st.st_dev != host_dev)
            continue;
        if (statfs(m->mnt_dir, sfs) == 0)
            rc = 0;
    }
    endmntent(mounts);
    return rc;
}

static long sys_ustat(struct proxy_process *p, const uint64_t a[6])
{
    uint64_t host_dev = decode_dev((uint32_t)a[0]);
    if (p->det && !det_host_dev(p->det, host_dev, &host_dev))
        return -EINVAL; /* user_get_super: no such file system */
    struct statfs sfs;
    int rc = statfs_of_dev(host_dev, &sfs);
    if (rc < 0)
        return rc;
    proxy_meta_statfs_canon(p, &sfs);
    struct guest_ustat u;
    memset(&u, 0, sizeof(u));
    u.f_tfree = (int32_t)(uint32_t)sfs.f_bfree; /* truncated, as Linux */
    u.f_tinode = sfs.f_ffree;
    return proxy_copy_out(p, a[1], &u, sizeof(u));
}

const struct proxy_syscall proxy_ustat_syscalls[] = {
    {136, "ustat", sys_ustat},
    {-1, NULL, NULL},
};
