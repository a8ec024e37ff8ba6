/*
 * sysvshm.c - System V shared memory: shmget, shmat, shmdt, shmctl.
 *
 * A segment is a memfd of the run (one IPC namespace per run: the host's
 * segments are not seen, nor is the run's seen by the host), kept in the
 * world; shmat maps it MAP_SHARED into the caller's address space (as a
 * shared file mapping, so fork shares it and every process attached sees
 * the same bytes). Each process keeps its attachments, so fork counts the
 * child's, and exit and execve detach all of a process's; processes on
 * one address space (clone with CLONE_VM) attach into the one memory, so
 * shmdt finds an attachment whichever of them made it, and one leaving
 * that memory hands its attachments to another still on it. Ids are given
 * in order from 0, keys as the program chose; IPC_RMID makes the key
 * private and frees the segment at its last detach. Permissions are the
 * mode's bits against the caller's (virtual) ids, root passing all.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "det.h"

#define SHM_MIN 1ULL
/* Linux's SHMMAX and SHMALL (ULONG_MAX - 2^24 on 64 bits): what IPC_INFO
 * says, as /proc/sys/kernel/shmmax and shmall do (LTP's shmctl03). */
#define SHMMAX_LINUX (~0ULL - (1ULL << 24))
/* The largest segment made: past the 47-bit address space none could be
 * attached (Linux's own limit is SHMMAX, but a size that large fails its
 * memory accounting, ENOMEM). */
#define SHM_MAX_BYTES ((1ULL << 47) - (1ULL << 24))
#define SHM_MAX_SEGS 4096                            /* SHMMNI */
#define PAGE 4096ULL

struct proxy_shm_seg {
    int id;
    int32_t key;
    uint64_t size;
    int memfd;
    struct ipc_perm perm;
    int cpid, lpid;
    int nattch;
    int64_t atime, dtime, ctime;
    bool removed;
    bool locked; /* SHM_LOCK'ed: SHM_LOCKED in the mode IPC_STAT shows */
};

struct proxy_shm_attach {
    gva_t gva;
    uint64_t len;
    int id;
};

static struct proxy_shm_seg *seg_by_id(struct proxy_world *w, int id)
{
    for (int i = 0; i < w->nr_shm; i++)
        if (w->shm[i]->id == id)
            return w->shm[i];
    return NULL;
}

static void seg_free(struct proxy_world *w, struct proxy_shm_seg *s)
{
    for (int i = 0; i < w->nr_shm; i++)
        if (w->shm[i] == s) {
            memmove(&w->shm[i], &w->shm[i + 1],
                    (size_t)(w->nr_shm - i - 1) * sizeof(*w->shm));
            w->nr_shm--;
            break;
        }
    close(s->memfd);
    free(s);
}

static long seg_new(struct proxy_process *p, int32_t key, uint64_t size,
                    int flags)
{
    struct proxy_world *w = p->world;
    if (size < SHM_MIN || size > SHM_MAX_BYTES)
        return -EINVAL;
    if (w->nr_shm >= SHM_MAX_SEGS)
        return -ENOSPC;
    struct proxy_shm_seg **g =
        realloc(w->shm, (size_t)(w->nr_shm + 1) * sizeof(*g));
    if (!g)
        return -ENOMEM;
    w->shm = g;
    struct proxy_shm_seg *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    char name[32];
    snprintf(name, sizeof(name), "SYSV%08x", (unsigned)key);
    s->memfd = memfd_create(name, MFD_CLOEXEC);
    if (s->memfd < 0 || ftruncate(s->memfd, (off_t)size) < 0) {
        long rc = -errno;
        if (s->memfd >= 0)
            close(s->memfd);
        free(s);
        return rc == -EFBIG || rc == -ENOSPC ? -ENOMEM : rc;
    }
    s->id = w->next_shmid++;
    s->key = key;
    s->size = size;
    proxy_ipc_perm_init(&s->perm, p, key, flags);
    s->cpid = p->pid;
    s->ctime = proxy_ipc_now_s(p);
    w->shm[w->nr_shm++] = s;
    return s->id;
}

static long sys_shmget(struct proxy_process *p, const uint64_t a[6])
{
    int32_t key = (int32_t)a[0];
    uint64_t size = a[1];
    int flags = (int)a[2];
    struct proxy_world *w = p->world;
    if (key != IPC_PRIVATE) {
        for (int i = 0; i < w->nr_shm; i++) {
            struct proxy_shm_seg *s = w->shm[i];
            if (s->removed || s->key != key)
                continue;
            if ((flags & (IPC_CREAT | IPC_EXCL)) == (IPC_CREAT | IPC_EXCL))
                return -EEXIST;
            if (size > s->size)
                return -EINVAL;
            return proxy_ipc_permitted(p, &s->perm, proxy_ipc_wanted(flags))
                       ? s->id
                       : -EACCES;
        }
        if (!(flags & IPC_CREAT))
            return -ENOENT;
    }
    return seg_new(p, key, size, flags);
}

static int attach_note(struct proxy_process *p, gva_t gva, uint64_t len,
                       int id)
{
    struct proxy_shm_attach *g =
        realloc(p->shm_attach, (size_t)(p->nr_shm_attach + 1) * sizeof(*g));
    if (!g)
        return -ENOMEM;
    p->shm_attach = g;
    g[p->nr_shm_attach++] = (struct proxy_shm_attach){gva, len, id};
    return 0;
}

static long sys_shmat(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_shm_seg *s = seg_by_id(p->world, (int)a[0]);
    gva_t addr = a[1];
    int flags = (int)a[2];
    if (!s)
        return -EINVAL;
    if (addr) {
        if (flags & SHM_RND)
            addr &= ~(PAGE - 1);
        else if (addr & (PAGE - 1))
            return -EINVAL;
    }
    int prot = PROT_READ | ((flags & SHM_RDONLY) ? 0 : PROT_WRITE) |
               ((flags & SHM_EXEC) ? PROT_EXEC : 0);
    if (!proxy_ipc_permitted(p, &s->perm, (flags & SHM_RDONLY) ? 4 : 6))
        return -EACCES;
    uint64_t len = (s->size + PAGE - 1) & ~(PAGE - 1);
    gva_t at;
    if (addr) {
        if (addr < VMM_USER_MIN || len > VMM_USER_END - addr)
            return -EINVAL;
        if (!(flags & SHM_REMAP) && !vmm_as_range_free(p->as, addr, len))
            return -EINVAL; /* Linux: an overlap without SHM_REMAP */
        at = addr;
    } else if (vmm_as_find_free(p->as, len, p->mm.mmap_base, &at) < 0) {
        return -ENOMEM;
    }
    /* SHM_RDONLY opens the segment's file read-only in Linux: the VMA has
     * no VM_MAYWRITE (mprotect adding write is EACCES), and hvrun's host
     * mapping of it is read-only too. */
    int vflags = VMM_VMA_SHARED |
                 ((flags & SHM_RDONLY) ? VMM_VMA_NOMAYWRITE : 0);
    long rc = vmm_as_map(p->as, at, len, prot, vflags, NULL);
    if (rc == 0 && (rc = vmm_as_set_shared(p->as, at, len, s->memfd, 0)) < 0)
        vmm_as_unmap(p->as, at, len);
    if (rc == 0 && (rc = attach_note(p, at, len, s->id)) < 0)
        vmm_as_unmap(p->as, at, len);
    if (rc < 0)
        return rc;
    char name[48];
    snprintf(name, sizeof(name), "/SYSV%08x (deleted)", (unsigned)s->key);
    struct stat st;
    if (fstat(s->memfd, &st) == 0)
        vmm_as_set_file(p->as, at, len, 0, st.st_dev, st.st_ino, name);
    s->nattch++;
    s->lpid = p->pid;
    s->atime = proxy_ipc_now_s(p);
    return (long)at;
}

/* One attachment of p's gone: the segment's count, and the segment at
 * its last detach once removed. */
static void detached(struct proxy_process *p, int id)
{
    struct proxy_shm_seg *s = seg_by_id(p->world, id);
    if (!s)
        return;
    s->nattch--;
    s->lpid = p->pid;
    s->dtime = proxy_ipc_now_s(p);
    if (s->removed && s->nattch <= 0)
        seg_free(p->world, s);
}

/* Removes q's attachment at addr into *out; false when q has none. */
static bool take_attach(struct proxy_process *q, gva_t addr,
                        struct proxy_shm_attach *out)
{
    for (int i = 0; i < q->nr_shm_attach; i++) {
        if (q->shm_attach[i].gva != addr)
            continue;
        *out = q->shm_attach[i];
        memmove(&q->shm_attach[i], &q->shm_attach[i + 1],
                (size_t)(q->nr_shm_attach - i - 1) * sizeof(*out));
        q->nr_shm_attach--;
        return true;
    }
    return false;
}

static long sys_shmdt(struct proxy_process *p, const uint64_t a[6])
{
    gva_t addr = a[0];
    if (addr & (PAGE - 1))
        return -EINVAL;
    struct proxy_shm_attach at;
    bool found = take_attach(p, addr, &at);
    /* ... or one made by another process on the same memory */
    for (int i = 0; !found && p->world && i < p->world->nr_procs; i++) {
        struct proxy_process *q = p->world->procs[i];
        found = q != p && q->as == p->as && take_attach(q, addr, &at);
    }
    if (!found)
        return -EINVAL;
    vmm_as_unmap(p->as, at.gva, at.len);
    detached(p, at.id);
    return 0;
}

static long shm_stat(struct proxy_process *p, struct proxy_shm_seg *s,
                     gva_t buf)
{
    struct shmid_ds ds;
    memset(&ds, 0, sizeof(ds));
    ds.shm_perm = s->perm;
    proxy_ipc_perm_seen(p, &ds.shm_perm);
    if (s->removed)
        ds.shm_perm.mode |= SHM_DEST;
    if (s->locked)
        ds.shm_perm.mode |= SHM_LOCKED;
    ds.shm_segsz = s->size;
    ds.shm_atime = s->atime;
    ds.shm_dtime = s->dtime;
    ds.shm_ctime = s->ctime;
    ds.shm_cpid = s->cpid;
    ds.shm_lpid = s->lpid;
    ds.shm_nattch = (shmatt_t)s->nattch;
    return proxy_copy_out(p, buf, &ds, sizeof(ds)) < 0 ? -EFAULT : 0;
}

static long shm_info(struct proxy_process *p, int cmd, gva_t buf)
{
    struct proxy_world *w = p->world;
    if (cmd == IPC_INFO) {
        struct shminfo si = {.shmmax = SHMMAX_LINUX, .shmmin = SHM_MIN,
                             .shmmni = SHM_MAX_SEGS, .shmseg = SHM_MAX_SEGS,
                             .shmall = SHMMAX_LINUX};
        if (proxy_copy_out(p, buf, &si, sizeof(si)) < 0)
            return -EFAULT;
    } else {
        struct shm_info si;
        memset(&si, 0, sizeof(si));
        si.used_ids = w->nr_shm;
        for (int i = 0; i < w->nr_shm; i++)
            si.shm_tot += (w->shm[i]->size + PAGE - 1) / PAGE;
        si.shm_rss = si.shm_tot;
        if (proxy_copy_out(p, buf, &si, sizeof(si)) < 0)
            return -EFAULT;
    }
    int top = -1; /* the highest index in use */
    for (int i = 0; i < w->nr_shm; i++)
        top = i;
    return top < 0 ? 0 : top;
}

static long sys_shmctl(struct proxy_process *p, const uint64_t a[6])
{
    int cmd = (int)a[1] & ~0x100; /* IPC_64 */
    gva_t buf = a[2];
    if (cmd == IPC_INFO || cmd == SHM_INFO)
        return shm_info(p, cmd, buf);
    struct proxy_shm_seg *s = NULL;
    if (cmd == SHM_STAT || cmd == SHM_STAT_ANY) {
        if ((int)a[0] < 0 || (int)a[0] >= p->world->nr_shm)
            return -EINVAL;
        s = p->world->shm[(int)a[0]];
        /* SHM_STAT_ANY reads what /proc/sysvipc/shm shows anyone: no
         * read permission is checked (shmctl_stat) */
        bool may = cmd == SHM_STAT_ANY || proxy_ipc_permitted(p, &s->perm, 4);
        long rc = may ? 0 : -EACCES;
        if (rc == 0)
            rc = shm_stat(p, s, buf);
        return rc < 0 ? rc : s->id;
    }
    if (!(s = seg_by_id(p->world, (int)a[0])))
        return -EINVAL;
    bool owner = proxy_ipc_owner(p, &s->perm);
    switch (cmd) {
    case IPC_STAT:
        return proxy_ipc_permitted(p, &s->perm, 4) ? shm_stat(p, s, buf)
                                                   : -EACCES;
    case IPC_SET: {
        if (!owner)
            return -EPERM;
        struct shmid_ds ds;
        if (proxy_copy_in(p, &ds, buf, sizeof(ds)) < 0)
            return -EFAULT;
        if (proxy_ipc_perm_set(p, &s->perm, &ds.shm_perm) < 0)
            return -EINVAL;
        s->ctime = proxy_ipc_now_s(p);
        return 0;
    }
    case IPC_RMID:
        if (!owner)
            return -EPERM;
        s->removed = true;
        s->key = IPC_PRIVATE;
        s->perm.__key = IPC_PRIVATE;
        if (s->nattch <= 0)
            seg_free(p->world, s);
        return 0;
    case SHM_LOCK:
    case SHM_UNLOCK:
        /* nothing is swapped in a run, but the flag reads back */
        if (!owner)
            return -EPERM;
        s->locked = cmd == SHM_LOCK;
        return 0;
    default:
        return -EINVAL;
    }
}

int proxy_shm_proc_line(const struct proxy_process *viewer, int i,
                        char *line, size_t cap)
{
    const struct proxy_world *w = viewer->world;
    if (i >= w->nr_shm)
        return 0;
    const struct proxy_shm_seg *s = w->shm[i];
    struct ipc_perm perm = s->perm;
    proxy_ipc_perm_seen(viewer, &perm);
    /* ipc/shm.c's sysvipc_shm_proc_show; rss: the whole segment. */
    return snprintf(line, cap,
                    "%10d %10d  %4o %21llu %5d %5d  %5d %5u %5u %5u %5u "
                    "%10lld %10lld %10lld %21llu %21llu\n",
                    s->key, s->id, s->perm.mode & 0777,
                    (unsigned long long)s->size, s->cpid, s->lpid, s->nattch,
                    perm.uid, perm.gid, perm.cuid, perm.cgid,
                    (long long)s->atime, (long long)s->dtime,
                    (long long)s->ctime,
                    (unsigned long long)((s->size + PAGE - 1) & ~(PAGE - 1)),
                    0ULL);
}

void proxy_shm_fork(struct proxy_process *parent, struct proxy_process *child)
{
    child->shm_attach = NULL;
    child->nr_shm_attach = 0;
    for (int i = 0; i < parent->nr_shm_attach; i++) {
        const struct proxy_shm_attach *at = &parent->shm_attach[i];
        struct proxy_shm_seg *s = seg_by_id(parent->world, at->id);
        if (s && attach_note(child, at->gva, at->len, at->id) == 0)
            s->nattch++;
    }
}

void proxy_shm_detach_all(struct proxy_process *p)
{
    proxy_ns_ipc_enter(p); /* may run outside a syscall (a fatal signal) */
    while (p->nr_shm_attach > 0) {
        int id = p->shm_attach[--p->nr_shm_attach].id;
        if (p->world)
            detached(p, id);
    }
    free(p->shm_attach);
    p->shm_attach = NULL;
}

void proxy_shm_hand_over(struct proxy_process *p, struct proxy_process *to)
{
    for (int i = 0; i < p->nr_shm_attach; i++) {
        const struct proxy_shm_attach *at = &p->shm_attach[i];
        if (attach_note(to, at->gva, at->len, at->id) < 0)
            detached(p, at->id); /* no room to keep it: as a detach */
    }
    free(p->shm_attach);
    p->shm_attach = NULL;
    p->nr_shm_attach = 0;
}

void proxy_shm_world_free(struct proxy_world *w)
{
    while (w->nr_shm > 0)
        seg_free(w, w->shm[w->nr_shm - 1]);
    free(w->shm);
    w->shm = NULL;
}

const struct proxy_syscall proxy_sysvshm_syscalls[] = {
    {SYS_shmget, "shmget", sys_shmget},
    {SYS_shmat, "shmat", sys_shmat},
    {SYS_shmdt, "shmdt", sys_shmdt},
    {SYS_shmctl, "shmctl", sys_shmctl},
    {-1, NULL, NULL},
};

bool proxy_shm_attached(const struct proxy_world *w)
{
    for (int i = 0; i < w->nr_shm; i++)
        if (w->shm[i]->nattch > 0)
            return true;
    return false;
}

int proxy_shm_copy_segments(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_shm; i++) {
        struct proxy_shm_seg *s = w->shm[i];
        int fd = vmm_memfd_copy(s->memfd, NULL, s->size, "SYSV-copy");
        if (fd < 0)
            return fd;
        struct stat was, now;
        if (fstat(s->memfd, &was) == 0 && fstat(fd, &now) == 0 &&
            w->nr_procs > 0) /* (a later shmat shows the same inode) */
            det_meta_rekey(w->procs[0]->det, (uint64_t)was.st_dev,
                           (uint64_t)was.st_ino, (uint64_t)now.st_dev,
                           (uint64_t)now.st_ino);
        close(s->memfd);
        s->memfd = fd;
    }
    return 0;
}
