/*
 * meta.c - canonical file metadata. Host inode and device numbers, and
 * host timestamps, differ between runs and machines; the guest sees:
 *
 *   st_dev   a small sequence per host device, in order of first sight
 *   st_ino   a sequence per host (dev, ino), in order of first sight
 *            (hard links share it; a file whose last link the guest
 *            removed is forgotten, since the host may reuse its number)
 *   times    for a file the guest wrote: the logical time of its last
 *            write (or the times it set with utimensat); else the epoch
 *
 * The order of first sight is the guest's own order of stat/getdents
 * calls, so it is the same in every run.
 */
#include "det.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#define DET_FIRST_INO 2           /* the first file seen gets ino 2 */
#define DET_DEV_MAJOR 8           /* a "disk" major number */

struct file_entry {
    uint64_t dev, ino;    /* host identity; ino 0 = empty slot */
    uint64_t vino;
    bool written;
    bool created; /* made by the run (mkdir): no host state in it */
    int64_t atime_ns, mtime_ns, ctime_ns;
    bool tombstone;
};

struct det_meta {
    struct file_entry *tab;
    size_t cap, used;     /* open addressing, power-of-two capacity */
    uint64_t next_ino;
    uint64_t devs[64];
    int nr_devs;
    /* Filesystems whose inode numbers are made afresh on each lookup
     * (procfs): their numbers are a function of the key the proxy gives
     * (a hash of the guest name, procguard.c), never of how many of them
     * the run met, so however often procfs renumbers an entry the numbers
     * of files and pipes stay put. */
    uint64_t ephemeral_devs[4];
    int nr_ephemeral;
};

int det_meta_init(struct det_state *d);
void det_meta_destroy(struct det_state *d);

int det_meta_init(struct det_state *d)
{
    struct det_meta *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    /* Small, and doubled as files are seen (grow): a 1024-slot table
     * was 64 KiB of calloc, 15 page faults of ~22 us each on a kvm_pvm
     * host at every run, where /bin/true sees three files. The slots'
     * order is never observable (virtual inodes come from next_ino). */
    m->cap = 64;
    m->tab = calloc(m->cap, sizeof(*m->tab));
    if (!m->tab) {
        free(m);
        return -ENOMEM;
    }
    m->next_ino = DET_FIRST_INO;
    d->meta = m;
    return 0;
}

void det_meta_destroy(struct det_state *d)
{
    if (!d->meta)
        return;
    free(d->meta->tab);
    free(d->meta);
    d->meta = NULL;
}

static size_t slot_hash(uint64_t dev, uint64_t ino, size_t cap)
{
    uint64_t h = (dev * 0x9e3779b97f4a7c15ULL) ^ (ino * 0xc2b2ae3d27d4eb4fULL);
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static int grow(struct det_meta *m)
{
    size_t cap = m->cap * 2;
    struct file_entry *t = calloc(cap, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        struct file_entry *e = &m->tab[i];
        if (!e->ino || e->tombstone)
            continue;
        size_t j = slot_hash(e->dev, e->ino, cap);
        while (t[j].ino)
            j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(m->tab);
    m->tab = t;
    m->cap = cap;
    return 0;
}

/* Finds (or with create, adds) the entry for a host file. */
static bool is_ephemeral(const struct det_meta *m, uint64_t dev)
{
    for (int i = 0; i < m->nr_ephemeral; i++)
        if (m->ephemeral_devs[i] == dev)
            return true;
    return false;
}

static struct file_entry *lookup(struct det_meta *m, uint64_t dev,
                                 uint64_t ino, bool create)
{
    if (ino == 0)
        ino = ~0ULL; /* 0 marks empty slots */
    if (create && (m->used + 1) * 4 > m->cap * 3 && grow(m) < 0)
        return NULL;
    size_t j = slot_hash(dev, ino, m->cap);
    struct file_entry *free_slot = NULL;
    for (;; j = (j + 1) & (m->cap - 1)) {
        struct file_entry *e = &m->tab[j];
        if (!e->ino)
            break;
        if (e->tombstone) {
            if (!free_slot)
                free_slot = e;
            continue;
        }
        if (e->dev == dev && e->ino == ino)
            return e;
    }
    if (!create)
        return NULL;
    struct file_entry *e = free_slot ? free_slot : &m->tab[j];
    if (!free_slot)
        m->used++;
    memset(e, 0, sizeof(*e));
    e->dev = dev;
    e->ino = ino;
    e->vino = is_ephemeral(m, dev)
                  ? DET_FIRST_EPHEMERAL_INO + (ino & 0x0fffffffULL)
                  : m->next_ino++;
    return e;
}

/* (dev, ino) of a file seen through a layered filesystem as the host's. */
static void unlayer(const struct det_state *d, uint64_t *dev, uint64_t *ino)
{
    for (int i = 0; i < d->cfg.nr_layered; i++) {
        const struct det_layered_dev *l = &d->cfg.layered[i];
        if (l->dev != *dev)
            continue;
        *dev = l->lower_dev;
        if (!ino)
            return;
        if (*ino & DET_LAYER_LOWER_BIT)
            *ino &= ~DET_LAYER_LOWER_BIT;
        else if (*ino == l->root_ino)
            *ino = l->lower_root_ino;
        else
            *ino |= DET_LAYER_UPPER_TAG;
        return;
    }
}

/* The entry of a host file (unlayered), or with create a new one. */
static struct file_entry *find(struct det_state *d, uint64_t dev,
                               uint64_t ino, bool create)
{
    unlayer(d, &dev, &ino);
    return lookup(d->meta, dev, ino, create);
}

void det_meta_ephemeral_dev(struct det_state *d, uint64_t host_dev)
{
    unlayer(d, &host_dev, NULL);
    struct det_meta *m = d->meta;
    if (!is_ephemeral(m, host_dev) &&
        m->nr_ephemeral < (int)(sizeof(m->ephemeral_devs) /
                                sizeof(m->ephemeral_devs[0])))
        m->ephemeral_devs[m->nr_ephemeral++] = host_dev;
}

uint64_t det_dev(struct det_state *d, uint64_t host_dev)
{
    struct det_meta *m = d->meta;
    unlayer(d, &host_dev, NULL);
    int i = 0;
    for (; i < m->nr_devs; i++)
        if (m->devs[i] == host_dev)
            break;
    if (i == m->nr_devs && m->nr_devs < 64)
        m->devs[m->nr_devs++] = host_dev;
    return makedev(DET_DEV_MAJOR, (unsigned)i + 1);
}

bool det_host_dev(const struct det_state *d, uint64_t dev, uint64_t *host_dev)
{
    if (!d->cfg.virtualize_metadata) {
        *host_dev = dev;
        return true;
    }
    const struct det_meta *m = d->meta;
    unsigned minor = minor(dev);
    if (major(dev) != DET_DEV_MAJOR || minor == 0 || minor > (unsigned)m->nr_devs)
        return false;
    *host_dev = m->devs[minor - 1];
    return true;
}

uint64_t det_ino(struct det_state *d, uint64_t host_dev, uint64_t host_ino)
{
    if (!d->cfg.virtualize_metadata)
        return host_ino;
    struct file_entry *e = find(d, host_dev, host_ino, true);
    return e ? e->vino : host_ino;
}

void det_note_write(struct det_state *d, uint64_t host_dev, uint64_t ino)
{
    struct file_entry *e = find(d, host_dev, ino, true);
    if (!e)
        return;
    int64_t now = det_realtime_ns(d);
    e->written = true;
    e->atime_ns = e->atime_ns ? e->atime_ns : now;
    e->mtime_ns = e->ctime_ns = now;
}

void det_note_change(struct det_state *d, uint64_t host_dev, uint64_t ino)
{
    struct file_entry *e = find(d, host_dev, ino, true);
    if (!e)
        return;
    if (!e->written) /* the times it showed so far: the epoch */
        e->atime_ns = e->mtime_ns = d->cfg.epoch_ns;
    e->written = true;
    e->ctime_ns = det_realtime_ns(d);
}

void det_note_times(struct det_state *d, uint64_t host_dev, uint64_t ino,
                    const struct timespec *atime,
                    const struct timespec *mtime)
{
    struct file_entry *e = find(d, host_dev, ino, true);
    if (!e)
        return;
    int64_t now = det_realtime_ns(d);
    e->written = true;
    /* Times past what ns hold (before 1677, after 2262) saturate. */
    e->atime_ns = atime ? det_timespec_ns(atime) : now;
    e->mtime_ns = mtime ? det_timespec_ns(mtime) : now;
    e->ctime_ns = now;
}

void det_note_created(struct det_state *d, uint64_t host_dev, uint64_t ino)
{
    struct file_entry *e = find(d, host_dev, ino, true);
    if (e)
        e->created = true;
}

bool det_was_created(struct det_state *d, uint64_t host_dev, uint64_t ino)
{
    struct file_entry *e = find(d, host_dev, ino, false);
    return e && e->created;
}

void det_forget_file(struct det_state *d, uint64_t host_dev, uint64_t ino)
{
    struct file_entry *e = find(d, host_dev, ino, false);
    if (e)
        e->tombstone = true;
}

void det_meta_rekey(struct det_state *d, uint64_t host_dev, uint64_t ino,
                    uint64_t new_dev, uint64_t new_ino)
{
    struct file_entry *old = find(d, host_dev, ino, false);
    if (!old || (host_dev == new_dev && ino == new_ino))
        return;
    struct file_entry kept = *old;
    old->tombstone = true;
    uint64_t next = d->meta->next_ino;
    struct file_entry *e = find(d, new_dev, new_ino, true);
    d->meta->next_ino = next; /* (no number of its own: the old one's) */
    if (!e)
        return;
    uint64_t dev = e->dev, key = e->ino;
    *e = kept;
    e->dev = dev;
    e->ino = key;
    e->tombstone = false;
}

/* Before 1970 too, tv_nsec is in [0, 1e9) as stat gives it (-0.5 s is
 * tv_sec -1, tv_nsec 5e8). */
static void set_ts(struct timespec *ts, int64_t ns)
{
    int64_t sec = ns / 1000000000LL, rem = ns % 1000000000LL;
    if (rem < 0) {
        sec--;
        rem += 1000000000LL;
    }
    ts->tv_sec = (time_t)sec;
    ts->tv_nsec = (long)rem;
}

static void log_stat(struct det_state *d, const struct stat *st)
{
    uint64_t v[6] = {st->st_dev, st->st_ino, (uint64_t)st->st_size,
                     (uint64_t)st->st_mtim.tv_sec,
                     (uint64_t)st->st_mtim.tv_nsec, st->st_mode};
    det_log_value(d, DET_SRC_METADATA, v, sizeof(v));
}

int64_t det_mtime_seen_ns(struct det_state *d, uint64_t dev, uint64_t ino,
                          int64_t host_mtime_ns)
{
    if (!d->cfg.virtualize_metadata)
        return host_mtime_ns;
    struct file_entry *e = find(d, dev, ino, false);
    return e && e->written ? e->mtime_ns : d->cfg.epoch_ns;
}

void det_stat_canon(struct det_state *d, struct stat *st)
{
    if (!d->cfg.virtualize_metadata) {
        log_stat(d, st);
        return;
    }
    d->reads[DET_SRC_METADATA]++;
    struct file_entry *e = find(d, st->st_dev, st->st_ino, true);
    st->st_ino = e ? e->vino : st->st_ino;
    st->st_dev = det_dev(d, st->st_dev);
    if (S_ISDIR(st->st_mode)) {
        /* What a directory's size is depends on the filesystem (ext4 a
         * block per 4 KiB of names, tmpfs 20 bytes an entry, btrfs the
         * names' bytes): one block, as a small ext4 or xfs one. */
        st->st_size = DET_DIR_SIZE;
        st->st_blocks = DET_DIR_SIZE / 512;
    }
    bool written = e && e->written;
    int64_t epoch = d->cfg.epoch_ns;
    set_ts(&st->st_atim, written ? e->atime_ns : epoch);
    set_ts(&st->st_mtim, written ? e->mtime_ns : epoch);
    set_ts(&st->st_ctim, written ? e->ctime_ns : epoch);
    log_stat(d, st);
}
