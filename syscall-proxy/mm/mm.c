/*
 * mm.c - the memory family, emulated on the guest address space: mmap
 * (anonymous, file private = a copy of the file range, file shared = the
 * host file mapped over the backing pages), munmap, mprotect, mremap, brk,
 * madvise, msync, mincore, and remap_file_pages (a new mmap of the VMA's
 * file, as Linux emulates it since 4.0).
 *
 * Ranges are checked as Linux checks them, in Linux's order: user space
 * ends at TASK_SIZE (VMM_USER_END), and a range past it, or one whose
 * length wraps, gets the errno each call gives there (tests/guest/
 * mm_ranges.c compares every case with a native run). The guest kernel
 * area lives above it, so no call can map over it. Holes are skipped a VMA
 * at a time, never a page at a time (a huge range costs nothing).
 *
 * [vvar] is a special mapping (VMM_VMA_SPECIAL), as Linux's VM_PFNMAP vvar
 * without VM_MAYWRITE/VM_MAYEXEC: mprotect adding write or exec is EACCES,
 * madvise that drops, pages, populates or re-enables fork/dump is EINVAL, mremap cannot
 * grow it (EFAULT); reading, PROT_NONE, moving and munmap work.
 *
 * Committed memory is charged as Linux charges it (vmm_as VMM_VMA_ACCOUNT)
 * and limited to --memory for the run (memlimit.c): mmap, brk, mremap
 * growing and mprotect adding write fail with ENOMEM past it.
 */
#include "proxy.h"
#include "fdtable.h"
#include "hooks.h"
#include "kernel.h"
#include "mm.h"
#include "internal.h"
#include "cpuid_patch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#define PROT_SEM_X86 0x8
#define PROT_VALID (PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM_X86)
#define MAP_TYPE_MASK 0x0f

static bool page_aligned(uint64_t x) { return (x & ~VMM_PAGE_MASK) == 0; }

/* Host pointer of a gva inside one VMA (the backing is contiguous). */
static void *backing_hva(struct proxy_process *p, gva_t gva, size_t len)
{
    struct iovec iov;
    size_t covered;
    if (vmm_as_host_iov(p->as, gva, len, 0, &iov, 1, &covered) != 1 ||
        covered != len)
        return NULL;
    return iov.iov_base;
}

/* MAP_32BIT (x86-64) goes to the bottom-up arch_get_unmapped_area with
 * find_start_end's legacy window [0x40000000, 0x80000000) (its start not
 * randomised, as hvrun's layout is not): a free hint is taken if it ends
 * below the window's top, else the lowest gap in the window; -ENOMEM
 * when full. */
#define MAP_32BIT_LOW 0x40000000ULL
#define MAP_32BIT_HIGH 0x80000000ULL
static int find_free_32bit(struct proxy_process *p, gva_t hint, uint64_t len,
                           gva_t *out)
{
    if (len > MAP_32BIT_HIGH)
        return -ENOMEM;
    if (hint && hint <= MAP_32BIT_HIGH - len &&
        vmm_as_range_free(p->as, hint, len)) {
        *out = hint;
        return 0;
    }
    for (gva_t at = MAP_32BIT_LOW; len <= MAP_32BIT_HIGH - at;) {
        struct vmm_vma *v = vmm_as_next_vma(p->as, at);
        if (!v || v->start >= at + len) {
            *out = at;
            return 0;
        }
        at = v->end;
        if (at >= MAP_32BIT_HIGH)
            break;
    }
    return -ENOMEM;
}

static int choose_address(struct proxy_process *p, gva_t hint, uint64_t len,
                          int flags, gva_t *out)
{
    if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
        /* get_unmapped_area: the range before the alignment. */
        if (len > VMM_USER_END || hint > VMM_USER_END - len)
            return -ENOMEM;
        if (!page_aligned(hint))
            return -EINVAL;
        if (hint < VMM_USER_MIN)
            return -ENOMEM;
        if ((flags & MAP_FIXED_NOREPLACE) && !(flags & MAP_FIXED) &&
            !vmm_as_range_free(p->as, hint, len))
            return -EEXIST;
        *out = hint;
        return 0;
    }
    hint &= VMM_PAGE_MASK;
    if (flags & MAP_32BIT)
        return find_free_32bit(p, hint, len, out);
    if (hint && vmm_as_range_free(p->as, hint, len)) {
        *out = hint;
        return 0;
    }
    return vmm_as_find_free(p->as, len, p->mm.mmap_base, out);
}

/* mlock_future_ok: bytes more of locked memory (a VMA made locked by
 * MAP_LOCKED or mlockall(MCL_FUTURE), a locked one grown) must fit
 * RLIMIT_MEMLOCK with what is locked already, unless privileged. */
static bool lock_future_ok(struct proxy_process *p, bool locked,
                           uint64_t bytes)
{
    if (!locked || proxy_ns_init_capable(p))
        return true;
    uint64_t limit = p->rlimits[RLIMIT_MEMLOCK].rlim_cur;
    if (limit == RLIM_INFINITY)
        return true;
    uint64_t now = vmm_as_locked_in(p->as, 0, UINT64_MAX);
    return bytes <= limit && now <= limit - bytes;
}

/* Guest memory in a memfd (the ptrace backend's): the file's bytes are
 * written into the memfd's pages without hvrun mapping them. Reading
 * into hvrun's view instead faults every page into hvrun's page tables
 * (under kvm_pvm a shadow-paging exit each: ~1 ms for libc), though the
 * guest touches a fraction of them and hvrun none. The memfd's file
 * position is hvrun's alone (the stub only maps it). */
static ssize_t read_through_memfd(const struct vmm_aspace *as, int fd,
                                  const struct iovec *iov, uint64_t off)
{
    const struct vmm_physmem *pm = as->pm;
    uint64_t gpa = (uint64_t)((uint8_t *)iov->iov_base - pm->hva_base);
    if (lseek(pm->memfd, (off_t)gpa, SEEK_SET) < 0)
        return -1;
    off_t in = (off_t)off;
    ssize_t got;
    while ((got = sendfile(pm->memfd, fd, &in, iov->iov_len)) < 0 &&
           errno == EINTR)
        ;
    return got;
}

ssize_t proxy_mm_read_file_into(const struct vmm_aspace *as, int fd,
                                bool regular, const struct iovec *iov, int n,
                                uint64_t off)
{
    if (regular && as->pm->memfd >= 0 && n > 0) {
        ssize_t got = read_through_memfd(as, fd, iov, off);
        if (got >= 0)
            return got;
    }
    return preadv(fd, iov, n, (off_t)off);
}

static int fill_from_file(struct proxy_process *p, int host_fd, gva_t gva,
                          uint64_t len, uint64_t off)
{
    struct stat st;
    if (fstat(host_fd, &st) < 0)
        return -errno;
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size <= off)
        return 0;
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size - off < len)
        len = (uint64_t)st.st_size - off;
    while (len > 0) {
        struct iovec iov[4];
        size_t covered;
        int n = vmm_as_host_iov(p->as, gva, len, 0, iov, 4, &covered);
        if (n == 0)
            return -EFAULT;
        ssize_t got = proxy_mm_read_file_into(p->as, host_fd,
                                              S_ISREG(st.st_mode), iov, n,
                                              off);
        if (got < 0)
            return -errno;
        if (got == 0)
            break;
        gva += (uint64_t)got;
        off += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return 0;
}

static void name_file_mapping(struct proxy_process *p, int host_fd,
                              gva_t gva, uint64_t len, uint64_t off)
{
    char link[64], target[PROXY_PATH_MAX];
    struct stat st;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = 0;
    if (fstat(host_fd, &st) < 0)
        return;
    /* a replay's copy: the recorded file */
    proxy_hooks.file_tap_restat(p, &st);
    vmm_as_set_file(p->as, gva, len, off, st.st_dev, st.st_ino,
                    n > 0 ? target : NULL);
}

/* memfd_check_seals_mmap, from the object's mmap after do_mmap's checks:
 * a shared mapping of a memfd sealed F_SEAL_WRITE or F_SEAL_FUTURE_WRITE
 * is EPERM writable, and read-only it loses VM_MAYWRITE. */
static int check_write_seals(int host_fd, int flags, int prot, int *vflags)
{
    if ((flags & MAP_TYPE_MASK) == MAP_PRIVATE)
        return 0; /* seals never refuse a private mapping */
    int seals = fcntl(host_fd, F_GET_SEALS);
    if (seals < 0 || !(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
        return 0;
    if (prot & PROT_WRITE)
        return -EPERM;
    *vflags |= VMM_VMA_NOMAYWRITE;
    return 0;
}

/* What mmap's checks ask of the file behind an fd, asked of the host once
 * per mmap (they were a dozen host calls): its open flags, its inode and
 * its filesystem. */
struct file_facts {
    int fl;
    struct stat st;
    bool have_sf;
    struct statfs sf;
};

/* An O_PATH fd is no file to mmap's fget: EBADF, whatever else. */
static int file_facts_of(int host_fd, struct file_facts *ff)
{
    ff->fl = fcntl(host_fd, F_GETFL);
    if (ff->fl < 0 || (ff->fl & O_PATH) || fstat(host_fd, &ff->st) < 0)
        return -EBADF;
    ff->have_sf = fstatfs(host_fd, &ff->sf) == 0;
    return 0;
}

/* Filesystems whose files may have no mmap of their own, or one that
 * fails (kernfs attributes: ENODEV; /proc's seq files: EIO): hvrun's
 * private mappings read the file instead, so it asks the host's mmap of
 * such a file first. A disk or tmpfs file always maps. */
static bool pseudo_fs(long f_type)
{
    static const long magics[] = {
        0x9fa0,     /* PROC_SUPER_MAGIC */
        0x62656572, /* SYSFS_MAGIC */
        0x64626720, /* DEBUGFS_MAGIC */
        0x74726163, /* TRACEFS_MAGIC */
        0x73636673, /* SECURITYFS_MAGIC */
        0x27e0eb,   /* CGROUP_SUPER_MAGIC */
        0x63677270, /* CGROUP2_SUPER_MAGIC */
        0x62656570, /* CONFIGFS_MAGIC */
        0xcafe4a11, /* BPF_FS_MAGIC */
        0x6165676c, /* PSTOREFS_MAGIC */
        0xde5e81e4, /* EFIVARFS_MAGIC */
    };
    for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
        if ((unsigned long)f_type == (unsigned long)magics[i])
            return true;
    return false;
}

#define TMPFS_F_TYPE 0x01021994L /* shmem: memfds, hvrun's /proc snapshots */

/* hvrun's own /proc and /sys files (snapshots in memfds) answer as their
 * Linux counterparts: a kernfs attribute or a process's /proc entry has
 * no mmap (ENODEV), /proc's top-level seq files refuse it in
 * proc_reg_mmap (EIO). 1 when host_fd is no such file. */
static int virtual_file_mmap(int host_fd)
{
    char path[256];
    if (!proxy_hooks.vfs_virtual_path(host_fd, path, sizeof(path)))
        return 1;
    if (strncmp(path, "/sys/", 5) == 0)
        return -ENODEV;
    if (strncmp(path, "/proc/", 6) != 0)
        return 0;
    const char *c = path + 6;
    bool pid_entry = (*c >= '0' && *c <= '9') ||
                     strncmp(c, "self/", 5) == 0 ||
                     strncmp(c, "thread-self/", 12) == 0;
    return pid_entry ? -ENODEV : -EIO;
}

/* The host's own answer to mapping the file (its f_op->mmap) where that
 * can fail: a character device (its driver's: /dev/null has none), a
 * file of a pseudo filesystem (kernfs attributes: ENODEV; /proc's seq
 * files: EIO), hvrun's own /proc files. 0, or the -errno. A disk or
 * tmpfs file always maps, so it costs an fstat and an fstatfs. */
static int host_mmap_refused(int host_fd, const struct file_facts *ff,
                             int flags, uint64_t off)
{
    bool probe = S_ISCHR(ff->st.st_mode);
    if (!probe && ff->have_sf) {
        const struct statfs sf = ff->sf;
        if (sf.f_type == TMPFS_F_TYPE) {
            int rc = virtual_file_mmap(host_fd);
            return rc == 1 ? 0 : rc;
        }
        probe = pseudo_fs(sf.f_type);
    }
    if (!probe)
        return 0;
    int type = (flags & MAP_TYPE_MASK) == MAP_PRIVATE ? MAP_PRIVATE
                                                      : MAP_SHARED;
    void *h = mmap(NULL, VMM_PAGE_SIZE, PROT_READ, type, host_fd, (off_t)off);
    if (h == MAP_FAILED)
        return errno == EACCES || errno == EPERM ? 0 : -errno;
    munmap(h, VMM_PAGE_SIZE);
    return 0;
}

/* do_mmap's file checks, in its order; *vflags gets what the mapping
 * may never become: a shared mapping of an fd not open for writing loses
 * VM_MAYWRITE, one of a noexec mount's file VM_MAYEXEC (exec asked for
 * there is EPERM). */
static int check_file_access(int host_fd, const struct file_facts *ff,
                             int flags, int prot, int *vflags)
{
    int fl = ff->fl;
    if (S_ISDIR(ff->st.st_mode))
        return -ENODEV;
    if ((fl & O_ACCMODE) == O_WRONLY)
        return -EACCES;
    bool writable_fd = (fl & O_ACCMODE) == O_RDWR;
    if ((flags & MAP_TYPE_MASK) != MAP_PRIVATE) {
        if ((prot & PROT_WRITE) && !writable_fd)
            return -EACCES;
        if (!writable_fd)
            *vflags |= VMM_VMA_NOMAYWRITE;
    }
    if (ff->have_sf && (ff->sf.f_flags & ST_NOEXEC)) {
        if (prot & PROT_EXEC)
            return -EPERM;
        *vflags |= VMM_VMA_NOMAYEXEC;
    }
    return check_write_seals(host_fd, flags, prot, vflags);
}

/* The host file is mapped over the backing pages and kept (dup'd) by the
 * VMA, so guest writes land in the host page cache, as with Linux, and a
 * forked child maps the same pages. */
static int map_shared_file(struct proxy_process *p, int host_fd, gva_t gva,
                           uint64_t len, uint64_t off)
{
    return vmm_as_set_shared(p->as, gva, len, host_fd, off);
}

static bool file_is_regular(int host_fd)
{
    struct stat st;
    return fstat(host_fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* One mmap whose arguments passed its checks (the file's too): where (the
 * guest's address and flags), what (host_fd from byte off; -1: anonymous
 * memory) and how (prot; vflags, what the checks gave the VMA). sys_mmap
 * and remap_file_pages (a new mmap of the VMA's file) both map this way. */
struct mmap_req {
    gva_t addr;
    uint64_t len, off;
    int prot, flags, host_fd, vflags;
    const struct file_facts *ff; /* the file's, when asked already */
};

/* The file's part of a mapping made at at: its pages (a private one's
 * read, now or at the next call; a shared one's the host file's), its
 * name, where the file ends. 0 or -errno (the caller unmaps). */
static int map_file_pages(struct proxy_process *p, const struct mmap_req *m,
                          gva_t at)
{
    int type = m->flags & MAP_TYPE_MASK;
    /* A private mapping the guest may not write maps its file itself
     * (VMM_VMA_DIRECT: nothing copied until something is written). */
    bool direct = type == MAP_PRIVATE && !(m->prot & PROT_WRITE) &&
                  !(m->vflags & VMM_VMA_SECRET) &&
                  (m->ff ? S_ISREG(m->ff->st.st_mode)
                         : file_is_regular(m->host_fd));
    int rc = direct ? 0
             : type == MAP_PRIVATE
                 ? fill_from_file(p, m->host_fd, at, m->len, m->off)
                 : map_shared_file(p, m->host_fd, at, m->len, m->off);
    /* A private mapping remembers its file: madvise and mremap read its
     * pages again. */
    if (rc == 0 && type == MAP_PRIVATE)
        rc = vmm_as_keep_file(p->as, at, m->len, m->host_fd);
    if (rc < 0)
        return rc;
    name_file_mapping(p, m->host_fd, at, m->len, m->off);
    if (m->vflags & VMM_VMA_SECRET)
        proxy_secretmem_name_mapping(p, m->host_fd, at, m->len, m->off);
    /* Pages wholly past the file's end are Linux's SIGBUS. */
    if ((rc = vmm_as_update_eof(p->as, at, m->len)) < 0)
        return rc;
    /* A file hvrun's view cannot map is read into guest memory. */
    if (direct && vmm_as_map_direct(p->as, at, m->len) < 0 &&
        (rc = fill_from_file(p, m->host_fd, at, m->len, m->off)) < 0)
        return rc;
    if (m->prot & PROT_EXEC)
        proxy_cpuid_patch_fresh(p, m->host_fd, at, m->len);
    return 0;
}

/* ---- mbind's range policies (mm_state.h) ------------------------------------ */

/* Removes [start, end) from the ranges with a policy, cutting those that
 * overlap it (one split in two needs a slot; without one its upper part
 * loses the policy too). */
static void policy_forget(struct proxy_process *p, gva_t start, gva_t end)
{
    struct proxy_mm_state *mm = &p->mm;
    for (int i = 0; i < mm->nr_range_policy; i++) {
        struct proxy_range_policy *r = &mm->range_policy[i];
        if (r->end <= start || r->start >= end)
            continue;
        if (r->start < start && r->end > end &&
            mm->nr_range_policy < PROXY_RANGE_POLICIES) {
            memmove(r + 2, r + 1,
                    (size_t)(mm->nr_range_policy - i - 1) * sizeof(*r));
            r[1] = *r;
            r[1].start = end;
            r->end = start;
            mm->nr_range_policy++;
            return;
        }
        if (r->start < start) {
            r->end = start;
            continue;
        }
        if (r->end > end) {
            r->start = end;
            continue;
        }
        memmove(r, r + 1, (size_t)(mm->nr_range_policy - i - 1) * sizeof(*r));
        mm->nr_range_policy--;
        i--;
    }
}

/* mbind_range: [start, end) gets the policy (MPOL_DEFAULT: none). */
static long policy_set(struct proxy_process *p, gva_t start, gva_t end,
                       int mode, uint64_t nodes)
{
    struct proxy_mm_state *mm = &p->mm;
    policy_forget(p, start, end);
    if ((mode & 0xff) == 0)
        return 0;
    if (mm->nr_range_policy >= PROXY_RANGE_POLICIES)
        return -ENOMEM;
    int i = 0;
    while (i < mm->nr_range_policy && mm->range_policy[i].start < start)
        i++;
    memmove(&mm->range_policy[i + 1], &mm->range_policy[i],
            (size_t)(mm->nr_range_policy - i) * sizeof(mm->range_policy[0]));
    mm->range_policy[i] = (struct proxy_range_policy){start, end, mode, nodes};
    mm->nr_range_policy++;
    return 0;
}

static const struct proxy_range_policy *policy_at(const struct proxy_process *p,
                                                  gva_t addr)
{
    for (int i = 0; i < p->mm.nr_range_policy; i++)
        if (p->mm.range_policy[i].start <= addr &&
            addr < p->mm.range_policy[i].end)
            return &p->mm.range_policy[i];
    return NULL;
}

/*
 * vm.max_map_count, checked where Linux checks it and counted in Linux's
 * view of the VMA list (vmm_as_map_count). do_mmap and do_brk_flags
 * refuse a new mapping once the count is past the limit, so it may reach
 * limit + 1; a split (munmap or mprotect of a VMA's middle) is refused at
 * the limit: munmap's only when both ends fall inside one VMA (the one
 * case where unmapping adds one), mprotect's for each end inside a VMA
 * whose protection changes.
 */
static bool map_count_full(struct proxy_process *p)
{
    return vmm_as_map_count(p->as) > vmm_max_map_count();
}

static bool split_refused(struct proxy_process *p, gva_t start, gva_t end,
                          int prot)
{
    size_t limit = vmm_max_map_count();
    if (p->as->nr_vmas + 2 < limit)
        return false; /* Linux's count is at most nr_vmas */
    size_t count = vmm_as_map_count(p->as);
    gva_t lo, hi, lo_end, hi_end;
    const struct vmm_vma *first = vmm_as_linux_vma(p->as, start, &lo, &hi);
    if (prot < 0) /* an unmap */
        return first && lo < start && end < hi && count >= limit;
    const struct vmm_vma *last =
        vmm_as_linux_vma(p->as, end - 1, &lo_end, &hi_end);
    size_t splits = (first && lo < start && first->prot != prot) +
                    (last && end < hi_end && last->prot != prot);
    return splits && count + splits - 1 >= limit;
}

static long map_checked(struct proxy_process *p, const struct mmap_req *m)
{
    int type = m->flags & MAP_TYPE_MASK, flags = m->flags;
    int vflags = m->vflags;
    bool anon = m->host_fd < 0;
    uint64_t len = m->len;
    gva_t at;
    if (map_count_full(p))
        return -ENOMEM;
    int rc = choose_address(p, m->addr, len, flags, &at);
    if (rc < 0)
        return rc;
    if (proxy_mm_sealed(p->as, at, at + len))
        return -EPERM; /* MAP_FIXED over a sealed VMA */
    if (split_refused(p, at, at + len, -1))
        return -ENOMEM; /* MAP_FIXED into a VMA's middle */
    if (flags & MAP_GROWSDOWN)
        vflags |= VMM_VMA_GROWSDOWN;
    if (flags & MAP_NORESERVE)
        vflags |= VMM_VMA_NORESERVE;
    /* A sanitizer's shadow or a sparse array: backed as it is touched. */
    if (anon && type == MAP_PRIVATE && len >= VMM_LAZY_MIN)
        vflags |= VMM_VMA_LAZY;
    if (flags & MAP_LOCKED) /* VM_LOCKED, as mlock would set it */
        vflags |= VMM_VMA_LOCKED;
    if ((flags & MAP_LOCKED) && p->rlimits[RLIMIT_MEMLOCK].rlim_cur == 0 &&
        !proxy_ns_init_capable(p))
        return -EPERM; /* can_do_mlock */
    if (!lock_future_ok(p, (vflags & VMM_VMA_LOCKED) || p->as->lock_future,
                        len))
        return -EAGAIN;
    /* accountable_mapping(), or shmem for shared anonymous memory; what a
     * MAP_FIXED mapping replaces is uncharged first. */
    bool charged = !(flags & MAP_NORESERVE) &&
                   (type == MAP_PRIVATE ? (m->prot & PROT_WRITE) != 0 : anon);
    if (charged &&
        (rc = proxy_mem_charge(p, len - vmm_as_charged_in(p->as, at, len))) < 0)
        return rc;
    rc = vmm_as_map(p->as, at, len, m->prot, vflags, NULL);
    if (rc < 0)
        return rc;
    policy_forget(p, at, at + len); /* a new VMA: the default policy */
    /* Shared anonymous memory is a memfd, like Linux's shmem object: fork
     * shares it and MADV_DONTNEED keeps its contents. */
    if (anon && type != MAP_PRIVATE)
        rc = vmm_as_share_anon(p->as, at, len);
    if (!anon) {
        struct mmap_req file = *m;
        file.vflags = vflags;
        rc = map_file_pages(p, &file, at);
    }
    if (rc < 0) {
        vmm_as_unmap(p->as, at, len);
        return rc;
    }
    return (long)at;
}

#define STACK_GUARD_GAP (256 * VMM_PAGE_SIZE) /* Linux's stack_guard_gap */

/*
 * A fault at addr where no VMA is, below a MAP_GROWSDOWN mapping: Linux
 * extends that mapping down to addr's page (expand_downwards), unless it
 * would come within stack_guard_gap of an accessible mapping below that
 * does not grow down, or grow past RLIMIT_STACK (acct_stack_growth); the
 * access then runs again. 1 when it grew, 0 when the fault stands.
 */
int proxy_mm_grow_down(struct proxy_process *p, gva_t addr)
{
    if (vmm_as_find_vma(p->as, addr))
        return 0;
    const struct vmm_vma *v = vmm_as_next_vma(p->as, addr);
    if (!v || !(v->flags & VMM_VMA_GROWSDOWN) || v->shared || v->file)
        return 0;
    gva_t start = addr & ~(gva_t)(VMM_PAGE_SIZE - 1), end = v->start;
    if (start < 65536) /* mmap_min_addr */
        return 0;
    const struct vmm_vma *prev = vmm_as_prev_vma(p->as, start);
    if (prev && !(prev->flags & VMM_VMA_GROWSDOWN) &&
        (prev->prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) &&
        start - prev->end < STACK_GUARD_GAP)
        return 0;
    if (v->end - start > p->rlimits[RLIMIT_STACK].rlim_cur)
        return 0;
    struct mmap_req m = {.addr = start, .len = end - start, .prot = v->prot,
                         .flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
                                  MAP_GROWSDOWN,
                         .host_fd = -1,
                         .vflags = v->flags & (VMM_VMA_LOCKED |
                                               VMM_VMA_NORESERVE)};
    return map_checked(p, &m) == (long)start ? 1 : 0;
}

#ifndef MAP_UNINITIALIZED
#define MAP_UNINITIALIZED 0x4000000
#endif

/* do_mmap's flags_mask: what MAP_SHARED_VALIDATE accepts of any file
 * (LEGACY_MAP_MASK), more only where the file's f_op->mmap_supported_flags
 * says (MAP_SYNC on a DAX filesystem). */
#define LEGACY_MAP_MASK                                                        \
    (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_DENYWRITE |    \
     MAP_EXECUTABLE | MAP_UNINITIALIZED | MAP_GROWSDOWN | MAP_LOCKED |         \
     MAP_NORESERVE | MAP_POPULATE | MAP_NONBLOCK | MAP_STACK | MAP_HUGETLB)

/* MAP_SHARED_VALIDATE with a flag beyond the legacy ones: EOPNOTSUPP
 * unless the host's filesystem supports it for this file, which a probe
 * mapping with the same flags (but MAP_FIXED) asks it. */
static int shared_validate_refused(int host_fd, int flags, uint64_t off)
{
    if ((flags & MAP_TYPE_MASK) != MAP_SHARED_VALIDATE ||
        !(flags & ~LEGACY_MAP_MASK & ~MAP_TYPE_MASK))
        return 0;
    void *h = mmap(NULL, VMM_PAGE_SIZE, PROT_READ, flags & ~MAP_FIXED,
                   host_fd, (off_t)off);
    if (h == MAP_FAILED)
        return errno == EOPNOTSUPP ? -EOPNOTSUPP : 0;
    munmap(h, VMM_PAGE_SIZE);
    return 0;
}

static long sys_mmap(struct proxy_process *p, const uint64_t a[6])
{
    struct mmap_req m = {.addr = a[0], .len = a[1], .off = a[5],
                         .prot = (int)a[2], .flags = (int)a[3],
                         .host_fd = -1};
    int guest_fd = (int)a[4];
    int type = m.flags & MAP_TYPE_MASK;
    /* Linux's order: the offset (the arch's sys_mmap), the fd (fget in
     * ksys_mmap_pgoff), then do_mmap's checks. */
    if (!page_aligned(m.off))
        return -EINVAL;
    if (!(m.flags & MAP_ANONYMOUS) &&
        (m.host_fd = proxy_fd_host(&p->fds, guest_fd)) < 0)
        return -EBADF;
    if (m.len == 0 || (m.prot & ~PROT_VALID))
        return -EINVAL;
    if (type != MAP_PRIVATE && type != MAP_SHARED &&
        type != MAP_SHARED_VALIDATE)
        return -EINVAL;
    if (VMM_PAGE_ALIGN_UP(m.len) < m.len ||
        VMM_PAGE_ALIGN_UP(m.len) > VMM_USER_END)
        return -ENOMEM;
    m.len = VMM_PAGE_ALIGN_UP(m.len);
    m.vflags = type != MAP_PRIVATE ? VMM_VMA_SHARED : 0;
    struct file_facts ff;
    if (!(m.flags & MAP_ANONYMOUS)) {
        int rc = shared_validate_refused(m.host_fd, m.flags, m.off);
        if (rc < 0)
            return rc;
        if ((rc = file_facts_of(m.host_fd, &ff)) < 0)
            return rc;
        rc = check_file_access(m.host_fd, &ff, m.flags, m.prot, &m.vflags);
        if (rc < 0)
            return rc;
        if ((rc = proxy_secretmem_mmap(p, guest_fd, type, &m.vflags)) < 0)
            return rc;
        if ((rc = host_mmap_refused(m.host_fd, &ff, m.flags, m.off)) < 0)
            return rc;
        m.ff = &ff;
    }
    return map_checked(p, &m);
}

/* ---- remap_file_pages ------------------------------------------------------
 *
 * Deprecated, and since Linux 4.0 an emulation (mm/mmap.c): a new mmap of
 * the VMA's own file over the range, MAP_SHARED | MAP_FIXED at pgoff with
 * the VMA's protection, through map_checked as any mmap (so do_mmap's file
 * checks, MAP_LOCKED's limits and the pages' mapping are mmap's). Linux's
 * order: prot must be 0; start and size are rounded down to pages; an
 * empty or wrapping range or pgoff is EINVAL; start must be in a VM_SHARED
 * VMA, and the range may go on into the VMAs right after it if they map
 * the same file with the same flags (pieces of one mapping an earlier call
 * split); anything else is EINVAL. Where Linux asks for the same open
 * file, hvrun compares the file's identity (dev, ino): two opens of one
 * file pass here. Shared anonymous memory is EINVAL, where Linux remaps
 * its shmem file: hvrun's memfd for it is charged (--memory) and shown
 * as anonymous per VMA, which a file mapping of that memfd would not be.
 */

/* Whether v and the VMAs after it cover [v->start, end) without a hole,
 * each mapping v's file with v's protection and flags. */
static bool file_vmas_cover(struct proxy_process *p, const struct vmm_vma *v,
                            gva_t end)
{
    for (const struct vmm_vma *prev = v; prev->end < end;) {
        const struct vmm_vma *next = vmm_as_next_vma(p->as, prev->end);
        if (!next || next->start != prev->end || !next->shared ||
            next->dev != v->dev || next->ino != v->ino ||
            next->flags != v->flags || next->prot != v->prot)
            return false;
        prev = next;
    }
    return true;
}

/* The mapping's new pages, then the name and identity the old VMA had
 * (the same file's: a System V segment's, a memfd_secret's). */
static long remap_range(struct proxy_process *p, const struct vmm_vma *v,
                        gva_t start, uint64_t size, uint64_t off)
{
    struct mmap_req m = {
        .addr = start, .len = size, .off = off, .prot = v->prot,
        .flags = MAP_SHARED | MAP_FIXED |
                 (v->flags & VMM_VMA_LOCKED ? MAP_LOCKED : 0),
        .vflags = VMM_VMA_SHARED | (v->flags & VMM_VMA_SECRET)};
    bool named = v->flags & VMM_VMA_FILE;
    uint64_t dev = v->dev, ino = v->ino;
    char *name = v->name ? strdup(v->name) : NULL;
    /* The VMA's object goes with the VMAs the new mapping replaces. */
    m.host_fd = fcntl(v->shared->fd, F_DUPFD_CLOEXEC, 3);
    long rc = m.host_fd < 0 ? -errno : 0;
    struct file_facts ff;
    if (rc == 0)
        rc = file_facts_of(m.host_fd, &ff);
    if (rc == 0)
        rc = check_file_access(m.host_fd, &ff, m.flags, m.prot, &m.vflags);
    if (rc == 0)
        rc = map_checked(p, &m);
    if (rc >= 0 && named)
        vmm_as_set_file(p->as, start, size, off, dev, ino, name);
    if (m.host_fd >= 0)
        close(m.host_fd);
    free(name);
    return rc < 0 ? rc : 0;
}

static long sys_remap_file_pages(struct proxy_process *p, const uint64_t a[6])
{
    gva_t start = a[0] & VMM_PAGE_MASK;
    uint64_t size = a[1] & VMM_PAGE_MASK, prot = a[2], pgoff = a[3];
    /* a[4], the flags: only MAP_NONBLOCK is kept, which changes nothing */
    if (prot != 0 || start + size <= start ||
        pgoff + size / VMM_PAGE_SIZE < pgoff)
        return -EINVAL;
    const struct vmm_vma *v = vmm_as_find_vma(p->as, start);
    if (!v || !(v->flags & VMM_VMA_SHARED) || !v->shared ||
        v->shared->anon || !file_vmas_cover(p, v, start + size))
        return -EINVAL;
    /* do_mmap's file_mmap_ok: the range must end below MAX_LFS_FILESIZE */
    if (pgoff > ((uint64_t)INT64_MAX - size) / VMM_PAGE_SIZE)
        return -EOVERFLOW;
    return remap_range(p, v, start, size, pgoff * VMM_PAGE_SIZE);
}

static long sys_munmap(struct proxy_process *p, const uint64_t a[6])
{
    gva_t start = a[0];
    uint64_t len = a[1];
    if (!page_aligned(start) || start > VMM_USER_END ||
        len > VMM_USER_END - start || VMM_PAGE_ALIGN_UP(len) == 0)
        return -EINVAL;
    if (proxy_mm_sealed(p->as, start, start + VMM_PAGE_ALIGN_UP(len)))
        return -EPERM;
    if (split_refused(p, start, start + VMM_PAGE_ALIGN_UP(len), -1))
        return -ENOMEM;
    long rc = vmm_as_unmap(p->as, start, len);
    if (rc == 0)
        policy_forget(p, start, start + VMM_PAGE_ALIGN_UP(len));
    return rc;
}

/* Linux's VM_MAY* check of mprotect: a special mapping gains neither
 * write nor exec, a NOMAYWRITE/NOMAYEXEC file mapping not that one. */
static bool may_become(const struct vmm_vma *v, int prot)
{
    int never = v->flags & VMM_VMA_SPECIAL ? PROT_WRITE | PROT_EXEC : 0;
    if (v->flags & VMM_VMA_NOMAYWRITE)
        never |= PROT_WRITE;
    if (v->flags & VMM_VMA_NOMAYEXEC)
        never |= PROT_EXEC;
    return (prot & never) == 0;
}

/* PROT_GROWSDOWN: the change reaches down to the start of the first
 * mapping in the range, which must grow down (EINVAL); PROT_GROWSUP needs
 * a VM_GROWSUP mapping, which x86 never has. */
static long mprotect_grows(struct proxy_process *p, gva_t *start, gva_t end,
                           int grows)
{
    struct vmm_vma *v = vmm_as_find_vma(p->as, *start);
    if (!v && grows == PROT_GROWSDOWN)
        v = vmm_as_next_vma(p->as, *start);
    if (!v || v->start >= end)
        return -ENOMEM;
    if (grows == PROT_GROWSUP || !(v->flags & VMM_VMA_GROWSDOWN))
        return -EINVAL;
    *start = v->start;
    return 0;
}

/* do_mprotect_pkey's order: alignment, an empty range (success, whatever
 * the rest), a wrapping range, the protection, the key, then the VMAs. */
static long mprotect_pkey(struct proxy_process *p, gva_t start, uint64_t len,
                          int prot, int pkey)
{
    int grows = prot & (PROT_GROWSDOWN | PROT_GROWSUP);
    prot &= ~(PROT_GROWSDOWN | PROT_GROWSUP);
    if (grows == (PROT_GROWSDOWN | PROT_GROWSUP))
        return -EINVAL; /* not both */
    if (!page_aligned(start))
        return -EINVAL;
    if (len == 0)
        return 0;
    len = VMM_PAGE_ALIGN_UP(len);
    if (len == 0 || start + len <= start)
        return -ENOMEM;
    if (prot & ~PROT_VALID)
        return -EINVAL;
    if (pkey != -1)
        return -EINVAL; /* no key is ever allocated (sys_pkey_alloc) */
    if (proxy_mm_sealed(p->as, start, start + len))
        return -EPERM;
    if (start + len > VMM_USER_END)
        return -ENOMEM;
    if (grows) {
        gva_t grows_end = start + len;
        long r = mprotect_grows(p, &start, grows_end, grows);
        if (r < 0)
            return r;
        len = grows_end - start;
    }
    /* A VMA at a time, as Linux's loop: what precedes a hole, a special
     * mapping or a charge that fails keeps its new protection. */
    gva_t end = start + len;
    if (split_refused(p, start, end, prot))
        return -ENOMEM;
    for (gva_t g = start; g < end;) {
        struct vmm_vma *v = vmm_as_find_vma(p->as, g);
        if (!v)
            return -ENOMEM;
        gva_t stop = v->end < end ? v->end : end;
        if (!may_become(v, prot))
            return -EACCES;
        int rc = proxy_mem_charge(
            p, vmm_as_protect_charge(p->as, g, stop - g, prot));
        if (rc == 0)
            rc = vmm_as_protect(p->as, g, stop - g, prot);
        if (rc < 0)
            return rc;
        if (prot & PROT_EXEC)
            proxy_cpuid_patch_protect(p, g, stop - g);
        /* code about to be written: loop bodies copied from it retire */
        if (prot & PROT_WRITE)
            proxy_progress_written(p, g, stop - g);
        g = stop;
    }
    return 0;
}

static long sys_mprotect(struct proxy_process *p, const uint64_t a[6])
{
    return mprotect_pkey(p, a[0], a[1], (int)a[2], -1);
}

/*
 * MREMAP_DONTUNMAP (Linux 5.7, any mapping but a special one since 5.13):
 * the pages move as with MREMAP_MAYMOVE, and the old range keeps its VMA,
 * unlocked and without pages: private anonymous memory reads zeros there
 * again, a private file mapping its file's pages, a shared one the same
 * object's. Here the old range is mapped afresh as it was (kept_vma)
 * after the move.
 */
struct kept_vma {
    struct mmap_req m; /* the old range's mapping, m.host_fd a dup or -1 */
    uint64_t file_off, dev, ino;
    char *name;
    bool named, shared_anon;
};

/* What the VMA v is at old, to map it again there; 0 or -errno. */
static int keep_vma(const struct vmm_vma *v, gva_t old, uint64_t len,
                    struct kept_vma *k)
{
    memset(k, 0, sizeof(*k));
    const struct vmm_shared *obj = v->shared ? v->shared : v->file;
    k->m = (struct mmap_req){
        .addr = old, .len = len, .prot = v->prot, .host_fd = -1,
        .flags = MAP_FIXED | (v->shared ? MAP_SHARED : MAP_PRIVATE) |
                 (v->flags & VMM_VMA_NORESERVE ? MAP_NORESERVE : 0) |
                 (v->flags & VMM_VMA_GROWSDOWN ? MAP_GROWSDOWN : 0),
        .vflags = (v->shared ? VMM_VMA_SHARED : 0) |
                  (v->flags & (VMM_VMA_SECRET | VMM_VMA_DONTFORK |
                               VMM_VMA_WIPEONFORK))};
    k->shared_anon = v->shared && v->shared->anon;
    k->named = v->flags & VMM_VMA_FILE;
    k->file_off = v->file_off + (old - v->start);
    k->dev = v->dev;
    k->ino = v->ino;
    if (!obj)
        return 0;
    k->m.off = (v->shared ? v->shared_off : v->file_off) + (old - v->start);
    k->name = v->name ? strdup(v->name) : NULL;
    k->m.host_fd = fcntl(obj->fd, F_DUPFD_CLOEXEC, 3);
    if (k->m.host_fd < 0)
        return -errno;
    struct file_facts ff;
    int rc = file_facts_of(k->m.host_fd, &ff);
    return rc < 0 ? rc
                  : check_file_access(k->m.host_fd, &ff, k->m.flags,
                                      k->m.prot, &k->m.vflags);
}

static void kept_vma_free(struct kept_vma *k)
{
    if (k->m.host_fd >= 0)
        close(k->m.host_fd);
    free(k->name);
}

/* The old range mapped again as k says, with the identity it had (a
 * System V segment's, a shared anonymous mapping's). */
static long map_kept(struct proxy_process *p, const struct kept_vma *k)
{
    long rc = map_checked(p, &k->m);
    if (rc < 0)
        return rc;
    rc = 0;
    if (k->named)
        vmm_as_set_file(p->as, k->m.addr, k->m.len, k->file_off, k->dev,
                        k->ino, k->name);
    else if (k->m.host_fd >= 0)
        rc = vmm_as_set_flags(p->as, k->m.addr, k->m.len, 0, VMM_VMA_FILE);
    struct vmm_vma *v = vmm_as_find_vma(p->as, k->m.addr);
    if (rc == 0 && k->shared_anon && v && v->shared)
        v->shared->anon = true;
    return rc;
}

/* mremap_to's checks for MREMAP_DONTUNMAP, whose new_addr is checked even
 * as a hint (without MREMAP_FIXED), then vma_to_resize's. */
static long dontunmap_refused(struct proxy_process *p, gva_t old,
                              uint64_t len, gva_t new_addr)
{
    if (!page_aligned(new_addr) || new_addr > VMM_USER_END - len)
        return -EINVAL;
    if (old + len > new_addr && new_addr + len > old)
        return -EINVAL; /* the ranges overlap */
    if (map_count_full(p))
        return -ENOMEM;
    gva_t lo, hi;
    const struct vmm_vma *v = vmm_as_linux_vma(p->as, old, &lo, &hi);
    if (v->flags & VMM_VMA_SPECIAL) /* VM_DONTEXPAND | VM_PFNMAP */
        return -EINVAL;
    if (len > hi - old)
        return -EFAULT; /* not across VMAs */
    return 0;
}

static long mremap_dontunmap(struct proxy_process *p, gva_t old, uint64_t len,
                             gva_t new_addr, bool fixed)
{
    long rc = dontunmap_refused(p, old, len, new_addr);
    gva_t to = new_addr;
    if (rc == 0 && !fixed)
        rc = choose_address(p, new_addr, len, 0, &to);
    struct kept_vma k;
    int krc = keep_vma(vmm_as_find_vma(p->as, old), old, len, &k);
    if (rc == 0)
        rc = krc;
    if (rc == 0)
        rc = vmm_as_remap(p->as, old, len, len, true, true, &to);
    if (rc == 0) {
        /* The moved pages' records, before the old range's new ones. */
        proxy_cpuid_remapped(p, old, len, len, to);
        policy_forget(p, to, to + len);
        if ((rc = map_kept(p, &k)) < 0) {
            /* Not mapped again (a charge refused): the move is undone. */
            gva_t back = old;
            vmm_as_unmap(p->as, old, len);
            vmm_as_remap(p->as, to, len, len, true, true, &back);
            proxy_cpuid_remapped(p, to, len, len, old);
        }
    }
    kept_vma_free(&k);
    return rc < 0 ? rc : (long)to;
}

static long sys_mremap(struct proxy_process *p, const uint64_t a[6])
{
    gva_t old = a[0], new_addr = a[4];
    uint64_t old_len = VMM_PAGE_ALIGN_UP(a[1]), new_len = a[2];
    int flags = (int)a[3];
    if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
        return -EINVAL;
    if (!page_aligned(old) || ((flags & MREMAP_FIXED) &&
                               !(flags & MREMAP_MAYMOVE)))
        return -EINVAL;
    /* DONTUNMAP always moves and never resizes. */
    if ((flags & MREMAP_DONTUNMAP) &&
        (!(flags & MREMAP_MAYMOVE) || a[1] != a[2]))
        return -EINVAL;
    new_len = VMM_PAGE_ALIGN_UP(new_len);
    /* old_len == 0 (duplicating a shared mapping) is not emulated; Linux
     * itself refuses it for most mappings. */
    if (old_len == 0 || new_len == 0)
        return -EINVAL;
    if (new_len > VMM_USER_END)
        return -EINVAL;
    if ((flags & MREMAP_FIXED) &&
        (!page_aligned(new_addr) || new_addr > VMM_USER_END - new_len))
        return -EINVAL;
    /* No VMA at old is -EFAULT before old_len is looked at (a wrapping
     * old range there too: tests/guest/mremap_edges.c). */
    struct vmm_vma *v = vmm_as_find_vma(p->as, old);
    if (!v)
        return -EFAULT;
    if (old_len > VMM_USER_END || old > VMM_USER_END - old_len)
        return -EINVAL;
    /* A sealed source neither moves nor changes size; a sealed
     * destination is not unmapped for it (mremap_to's do_munmap). */
    if (proxy_mm_sealed(p->as, old, old + old_len) ||
        ((flags & MREMAP_FIXED) &&
         proxy_mm_sealed(p->as, new_addr, new_addr + new_len)))
        return -EPERM;
    /* A special mapping cannot grow (VM_DONTEXPAND|VM_PFNMAP). */
    if (new_len > old_len && (v->flags & VMM_VMA_SPECIAL))
        return -EFAULT;
    if (new_len > old_len &&
        !lock_future_ok(p, v->flags & VMM_VMA_LOCKED, new_len - old_len))
        return -EAGAIN;
    if (flags & MREMAP_DONTUNMAP)
        return mremap_dontunmap(p, old, old_len, new_addr,
                                flags & MREMAP_FIXED);
    if (new_len > old_len && (v->flags & VMM_VMA_ACCOUNT)) {
        int rc = proxy_mem_charge(p, new_len - old_len);
        if (rc < 0)
            return rc;
    }
    gva_t out = new_addr;
    int rc = vmm_as_remap(p->as, old, old_len, new_len,
                          flags & MREMAP_MAYMOVE, flags & MREMAP_FIXED, &out);
    /* A private file mapping grows into more of its file (a shared one
     * maps its object there already). */
    if (rc == 0 && new_len > old_len) {
        struct vmm_vma *grown = vmm_as_find_vma(p->as, out + old_len);
        if (grown && grown->file && !grown->shared)
            rc = vmm_as_refill(p->as, out + old_len, new_len - old_len);
    }
    if (rc == 0)
        rc = vmm_as_update_eof(p->as, out, new_len);
    if (rc == 0)
        proxy_cpuid_remapped(p, old, old_len, new_len, out);
    if (rc == 0 && (out != old || new_len < old_len)) {
        /* Linux moves a VMA's policy with it; here the moved range starts
         * again from the default */
        policy_forget(p, old, old + old_len);
        policy_forget(p, out, out + new_len);
    }
    return rc < 0 ? rc : (long)out;
}

void proxy_mm_file_resized(struct proxy_process *p, int host_fd)
{
    struct stat st;
    if (fstat(host_fd, &st) < 0 || !S_ISREG(st.st_mode))
        return;
    if (!p->world) {
        vmm_as_file_resized(p->as, st.st_dev, st.st_ino);
        return;
    }
    /* A zombie has no address space left (proxy_world_exit). */
    for (int i = 0; i < p->world->nr_procs; i++)
        if (p->world->procs[i]->as)
            vmm_as_file_resized(p->world->procs[i]->as, st.st_dev, st.st_ino);
}

/* One address space has one heap: the processes that share p's (clone
 * with CLONE_VM) see its new end, as they share Linux's mm->brk. */
static void brk_share(const struct proxy_process *p)
{
    for (int i = 0; p->world && i < p->world->nr_procs; i++) {
        struct proxy_process *q = p->world->procs[i];
        if (q != p && q->as == p->as)
            q->mm.brk_end = p->mm.brk_end;
    }
}

static long sys_brk(struct proxy_process *p, const uint64_t a[6])
{
    gva_t want = a[0];
    if (want < p->mm.brk_start)
        return (long)p->mm.brk_end;
    gva_t cur_top = VMM_PAGE_ALIGN_UP(p->mm.brk_end);
    gva_t new_top = VMM_PAGE_ALIGN_UP(want);
    /* Past user space (or wrapping when rounded up) is refused; it must
     * never read as a shrink. Linux also keeps a page free above the heap. */
    if (new_top < want || new_top > VMM_USER_END - VMM_PAGE_SIZE)
        return (long)p->mm.brk_end;
    if (new_top > cur_top) {
        uint64_t limit = p->rlimits[RLIMIT_DATA].rlim_cur;
        if (limit != RLIM_INFINITY && new_top - p->mm.brk_start > limit)
            return (long)p->mm.brk_end;
        if (!lock_future_ok(p, p->as->lock_future, new_top - cur_top) ||
            map_count_full(p) ||
            !vmm_as_range_free(p->as, cur_top,
                               new_top - cur_top + VMM_PAGE_SIZE) ||
            proxy_mem_charge(p, new_top - cur_top) < 0)
            return (long)p->mm.brk_end;
        if (vmm_as_map(p->as, cur_top, new_top - cur_top,
                       PROT_READ | PROT_WRITE, VMM_VMA_HEAP, "[heap]") < 0)
            return (long)p->mm.brk_end;
    } else if (new_top < cur_top) {
        if (proxy_mm_sealed(p->as, new_top, cur_top))
            return (long)p->mm.brk_end; /* a sealed heap does not shrink */
        vmm_as_unmap(p->as, new_top, cur_top - new_top);
        policy_forget(p, new_top, cur_top);
    }
    p->mm.brk_end = want;
    brk_share(p);
    return (long)want;
}

static bool advice_known(int advice)
{
    switch (advice) {
    case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL:
    case MADV_WILLNEED: case MADV_DONTNEED: case MADV_FREE:
    case MADV_REMOVE: case MADV_DONTFORK: case MADV_DOFORK:
    case MADV_MERGEABLE: case MADV_UNMERGEABLE: case MADV_HUGEPAGE:
    case MADV_NOHUGEPAGE: case MADV_DONTDUMP: case MADV_DODUMP:
    case MADV_WIPEONFORK: case MADV_KEEPONFORK: case MADV_COLD:
    case MADV_PAGEOUT: case MADV_POPULATE_READ: case MADV_POPULATE_WRITE:
    case MADV_DONTNEED_LOCKED:
        return true;
    default:
        return false;
    }
}

/* Advice Linux refuses on a VM_PFNMAP|VM_IO mapping ([vvar]). */
static bool advice_refused_on_special(int advice)
{
    switch (advice) {
    case MADV_DONTNEED: case MADV_DONTNEED_LOCKED: case MADV_FREE:
    case MADV_REMOVE: case MADV_DOFORK:
    case MADV_COLD: case MADV_PAGEOUT: case MADV_POPULATE_READ:
    case MADV_POPULATE_WRITE: case MADV_DODUMP:
        return true;
    default:
        return false;
    }
}

/* Linux's vma_is_anonymous: private memory with no file behind it. */
static bool vma_anonymous(const struct vmm_vma *v)
{
    return !v->shared && !(v->flags & VMM_VMA_FILE);
}

/* MADV_REMOVE (madvise_remove): a hole punched in the file of a shared
 * writable mapping; the host madvise does it on the object's mapping. */
static long advise_remove(const struct vmm_vma *v, void *hva, uint64_t len)
{
    if (v->flags & VMM_VMA_LOCKED)
        return -EINVAL;
    if (vma_anonymous(v))
        return -EINVAL;
    if (!v->shared || !(v->shared->host_prot & PROT_WRITE))
        return -EACCES;
    return hva && madvise(hva, len, MADV_REMOVE) < 0 ? -errno : 0;
}

/* MADV_POPULATE_READ/WRITE (madvise_populate): guest pages are always
 * present, so only faultin_page_range's errors remain: a VMA without the
 * access is -EINVAL, a page past a file's end (SIGBUS) -EFAULT. */
static long advise_populate(struct proxy_process *p, struct vmm_vma *v,
                            gva_t g, gva_t stop, bool write)
{
    if (!(v->prot & (write ? PROT_WRITE : PROT_READ)))
        return -EINVAL;
    if (stop > vmm_vma_valid_end(v) &&
        !vmm_as_fault_in(p->as, g, stop - g, 0))
        return -EFAULT;
    v = vmm_as_find_vma(p->as, g);
    return v && stop > vmm_vma_valid_end(v) ? -EFAULT : 0;
}

/*
 * One advice on [g, stop) inside v (madvise_vma_behavior's checks, in its
 * order). DONTNEED gives private memory its mapped contents again (zeros,
 * or its file's pages: the private copy is gone); on shared memory the
 * host madvise keeps the object's data, as Linux does. MADV_FREE keeps
 * the contents (Linux may or may not drop them: keeping them does not
 * depend on the host's memory pressure). The fork flags are VMA flags
 * that vmm_as_clone reads.
 */
static long advise_vma(struct proxy_process *p, struct vmm_vma *v, gva_t g,
                       gva_t stop, int advice)
{
    if ((v->flags & VMM_VMA_SPECIAL) && advice_refused_on_special(advice))
        return -EINVAL;
    bool locked = v->flags & VMM_VMA_LOCKED;
    switch (advice) {
    case MADV_DONTNEED:
    case MADV_DONTNEED_LOCKED: /* the same, on mlock'd memory too (5.18) */
        if (locked && advice == MADV_DONTNEED)
            return -EINVAL;
        if (v->shared) {
            void *hva = backing_hva(p, g, stop - g);
            if (hva)
                (void)madvise(hva, stop - g, MADV_DONTNEED);
            return 0;
        }
        /* The vDSO's pages come back as they were on Linux (a special
         * mapping's fault): hvrun's image is kept. */
        if (v->name && strcmp(v->name, "[vdso]") == 0)
            return 0;
        bool exec = v->prot & PROT_EXEC;
        int fd = vmm_vma_file_fd(v);
        long rc = vmm_as_refill(p->as, g, stop - g);
        if (rc == 0 && exec && fd >= 0)
            proxy_cpuid_patch_fresh(p, fd, g, stop - g);
        return rc;
    case MADV_FREE:
        return locked || !vma_anonymous(v) ? -EINVAL : 0;
    case MADV_COLD: case MADV_PAGEOUT:
        return locked ? -EINVAL : 0;
    case MADV_REMOVE:
        return advise_remove(v, backing_hva(p, g, stop - g), stop - g);
    case MADV_WIPEONFORK:
        if (!vma_anonymous(v))
            return -EINVAL;
        return vmm_as_set_flags(p->as, g, stop - g, VMM_VMA_WIPEONFORK, 0);
    case MADV_KEEPONFORK:
        return vmm_as_set_flags(p->as, g, stop - g, 0, VMM_VMA_WIPEONFORK);
    case MADV_POPULATE_READ: case MADV_POPULATE_WRITE:
        return advise_populate(p, v, g, stop, advice == MADV_POPULATE_WRITE);
    case MADV_DONTFORK:
        return vmm_as_set_flags(p->as, g, stop - g, VMM_VMA_DONTFORK, 0);
    case MADV_DOFORK:
        return vmm_as_set_flags(p->as, g, stop - g, 0, VMM_VMA_DONTFORK);
    default:
        return 0;
    }
}

static long sys_madvise(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_madvise(p, a[0], a[1], (int)a[2]);
}

long proxy_madvise(struct proxy_process *p, gva_t addr, uint64_t len_in,
                   int advice)
{
    uint64_t len = VMM_PAGE_ALIGN_UP(len_in);
    if (!advice_known(advice) || !page_aligned(addr) || (len_in && !len) ||
        addr + len < addr)
        return -EINVAL;
    if (len == 0)
        return 0;
    gva_t end = addr + len;
    if (proxy_mm_advice_sealed(p->as, addr, end, advice))
        return -EPERM;
    /* madvise_walk_vmas: the advice goes to the mapped parts in order; a
     * VMA's error ends the walk, a hole is -ENOMEM once the rest is done.
     * Each VMA is looked up again (the fork flags split them). */
    long unmapped = 0;
    for (gva_t g = addr; g < end;) {
        struct vmm_vma *v = vmm_as_next_vma(p->as, g);
        if (!v || v->start >= end)
            return -ENOMEM;
        if (v->start > g) {
            unmapped = -ENOMEM;
            g = v->start;
        }
        gva_t stop = v->end < end ? v->end : end;
        long rc = advise_vma(p, v, g, stop, advice);
        if (rc < 0)
            return rc;
        g = stop;
    }
    return unmapped;
}

static long sys_msync(struct proxy_process *p, const uint64_t a[6])
{
    int flags = (int)a[2];
    if ((flags & ~(MS_ASYNC | MS_SYNC | MS_INVALIDATE)) || !page_aligned(a[0]) ||
        ((flags & MS_ASYNC) && (flags & MS_SYNC)))
        return -EINVAL;
    gva_t start = a[0], end = start + ((a[1] + VMM_PAGE_SIZE - 1) & VMM_PAGE_MASK);
    if (end < start)
        return -ENOMEM;
    int rc = 0;
    for (gva_t g = start; g < end;) {
        struct vmm_vma *v = vmm_as_next_vma(p->as, g);
        if (!v || v->start >= end)
            return -ENOMEM;
        if (v->start > g) {
            if (flags == MS_ASYNC)
                return -ENOMEM;
            rc = -ENOMEM;
            g = v->start;
        }
        if ((flags & MS_INVALIDATE) && (v->flags & VMM_VMA_LOCKED))
            return -EBUSY; /* locked pages cannot be invalidated */
        gva_t stop = v->end < end ? v->end : end;
        void *hva = backing_hva(p, g, stop - g);
        if (hva && (v->flags & VMM_VMA_SHARED) && msync(hva, stop - g, flags))
            return -errno;
        g = stop;
    }
    return rc;
}

static long sys_mincore(struct proxy_process *p, const uint64_t a[6])
{
    gva_t start = a[0];
    uint64_t len = a[1];
    if (!page_aligned(start))
        return -EINVAL;
    /* access_ok(start, len): inside user space, not wrapping. */
    if (start >= VMM_USER_END || len > VMM_USER_END - start)
        return -ENOMEM;
    uint64_t pages = VMM_PAGE_ALIGN_UP(len) / VMM_PAGE_SIZE;
    if (a[2] >= VMM_USER_END || pages > VMM_USER_END - a[2])
        return -EFAULT; /* access_ok(vec, pages), before the walk */
    if (!vmm_as_range_mapped(p->as, start, pages * VMM_PAGE_SIZE))
        return -ENOMEM;
    /* Guest memory is resident once backed: all of it but the stretches
     * of lazy VMAs never touched (aspace.h). */
    static const uint8_t one[256] = {[0 ... 255] = 1}, zero[256];
    for (uint64_t done = 0; done < pages;) {
        const struct vmm_vma *v =
            vmm_as_find_vma(p->as, start + done * VMM_PAGE_SIZE);
        uint64_t left = (v->end - start) / VMM_PAGE_SIZE - done;
        uint64_t n = pages - done < sizeof(one) ? pages - done : sizeof(one);
        n = n < left ? n : left;
        int rc = proxy_copy_out(p, a[2] + done,
                                v->flags & VMM_VMA_LAZY ? zero : one, n);
        if (rc < 0)
            return rc;
        done += n;
    }
    return 0;
}

/*
 * Memory protection keys: the CPU model has no PKU, so as on such a CPU
 * no key can be allocated (ENOSPC) and pkey_mprotect takes only key -1.
 */
static long sys_pkey_alloc(struct proxy_process *p, const uint64_t a[6])
{
    return a[0] || a[1] ? -EINVAL : -ENOSPC;
}

static long sys_pkey_free(struct proxy_process *p, const uint64_t a[6])
{
    return -EINVAL;
}

static long sys_pkey_mprotect(struct proxy_process *p, const uint64_t a[6])
{
    return mprotect_pkey(p, a[0], a[1], (int)a[2], (int)a[3]);
}

/*
 * NUMA policy: the virtual machine has one node (0). set_mempolicy keeps
 * the process's mode and node mask, which get_mempolicy gives back (and
 * children inherit); mbind keeps a range's (mm_state.h), which
 * get_mempolicy(MPOL_F_ADDR) gives back; the memory is the same whatever
 * they say.
 */
#define MPOL_DEFAULT_MODE 0
#define MPOL_PREFERRED_MODE 1
#define MPOL_INTERLEAVE_MODE 3
#define MPOL_LOCAL_MODE 4
#define MPOL_MAX_MODE 6
#define MPOL_F_STATIC 0x8000u
#define MPOL_F_RELATIVE 0x4000u
#define MPOL_F_BALANCING 0x2000u
#define MPOL_MODE_FLAGS 0xe000u  /* STATIC_NODES, RELATIVE_NODES, BALANCING */
#define MPOL_BIND_MODE 2
#define MPOL_F_NODE_BIT 1
#define MPOL_F_ADDR_BIT 2
#define MPOL_F_MEMS_ALLOWED_BIT 4
#define MPOL_MAX_MASK_WORDS 16   /* 1024 nodes: as far as a mask is read */

/* The node mask of maxnode bits at gva (NULL/0: empty): its first word,
 * or -EINVAL for a node past the one there is. */
static long nodemask_in(struct proxy_process *p, gva_t gva, uint64_t maxnode,
                        uint64_t *nodes)
{
    *nodes = 0;
    if (!gva || maxnode <= 1)
        return 0; /* Linux drops the last bit of maxnode */
    uint64_t bits = maxnode - 1;
    size_t words = (size_t)((bits + 63) / 64);
    if (words > MPOL_MAX_MASK_WORDS)
        words = MPOL_MAX_MASK_WORDS;
    uint64_t w[MPOL_MAX_MASK_WORDS];
    if (proxy_copy_in(p, w, gva, words * 8) < 0)
        return -EFAULT;
    if (bits % 64 && words * 64 > bits && words <= MPOL_MAX_MASK_WORDS)
        w[words - 1] &= (1ULL << (bits % 64)) - 1;
    for (size_t i = 0; i < words; i++)
        if ((i == 0 ? w[i] & ~1ULL : w[i]) != 0)
            return -EINVAL;
    *nodes = w[0] & 1;
    return 0;
}

/* sanitize_mpol_flags: a known mode, not both STATIC_NODES and
 * RELATIVE_NODES, NUMA_BALANCING only with MPOL_BIND. */
static long mpol_mode_check(int arg)
{
    unsigned mode = (unsigned)arg & ~MPOL_MODE_FLAGS;
    unsigned fl = (unsigned)arg & MPOL_MODE_FLAGS;
    if (mode > MPOL_MAX_MODE || ((unsigned)arg >> 16))
        return -EINVAL;
    if ((fl & MPOL_F_STATIC) && (fl & MPOL_F_RELATIVE))
        return -EINVAL;
    if ((fl & MPOL_F_BALANCING) && mode != MPOL_BIND_MODE)
        return -EINVAL;
    return 0;
}

/* mpol_new's rules: the mode a policy of these nodes becomes (default and
 * local take no nodes, bind, interleave and the many-node modes need
 * some, preferred without any is local), or -EINVAL. */
static long mpol_mode_of(int arg, uint64_t nodes)
{
    unsigned mode = (unsigned)arg & ~MPOL_MODE_FLAGS;
    unsigned fl = (unsigned)arg & MPOL_MODE_FLAGS;
    if (mode == MPOL_DEFAULT_MODE)
        return nodes ? -EINVAL : 0;
    if (!nodes && mode == MPOL_PREFERRED_MODE)
        return fl & (MPOL_F_STATIC | MPOL_F_RELATIVE) ? -EINVAL
                                                      : MPOL_LOCAL_MODE;
    if (mode == MPOL_LOCAL_MODE)
        return nodes || (fl & (MPOL_F_STATIC | MPOL_F_RELATIVE)) ? -EINVAL
                                                                 : (long)mode;
    return nodes ? (long)(mode | fl) : -EINVAL;
}

/* do_get_mempolicy's answer: *mode, *nodes, or -errno. */
static long mempolicy_of(struct proxy_process *p, uint64_t flags, gva_t addr,
                         int *mode, uint64_t *nodes)
{
    *mode = MPOL_DEFAULT_MODE;
    *nodes = 0;
    if (flags & MPOL_F_MEMS_ALLOWED_BIT) {
        if (flags & (MPOL_F_NODE_BIT | MPOL_F_ADDR_BIT))
            return -EINVAL;
        *nodes = 1;
        return 0;
    }
    int pmode = p->mm.mempolicy_mode;
    uint64_t pnodes = p->mm.mempolicy_nodes;
    if (flags & MPOL_F_ADDR_BIT) {
        if (!vmm_as_find_vma(p->as, addr))
            return -EFAULT;
        const struct proxy_range_policy *r = policy_at(p, addr);
        pmode = r ? r->mode : MPOL_DEFAULT_MODE;
        pnodes = r ? r->nodes : 0;
    } else if (addr) {
        return -EINVAL;
    }
    if (flags & MPOL_F_NODE_BIT) {
        /* the node of the page at addr, or the process's next interleave
         * node: 0 either way */
        if (!(flags & MPOL_F_ADDR_BIT) &&
            (p->mm.mempolicy_mode & 0xff) != MPOL_INTERLEAVE_MODE)
            return -EINVAL;
    } else {
        *mode = pmode;
    }
    *nodes = pnodes;
    return 0;
}

static long sys_get_mempolicy(struct proxy_process *p, const uint64_t a[6])
{
    uint64_t flags = a[4], maxnode = a[2];
    if (a[1] && maxnode < 1)
        return -EINVAL; /* fewer bits than nodes */
    if (flags & ~(uint64_t)(MPOL_F_NODE_BIT | MPOL_F_ADDR_BIT |
                            MPOL_F_MEMS_ALLOWED_BIT))
        return -EINVAL;
    int mode;
    uint64_t nodes;
    long rc = mempolicy_of(p, flags, a[3], &mode, &nodes);
    if (rc < 0)
        return rc;
    if (a[0] && proxy_copy_out(p, a[0], &mode, sizeof(mode)) < 0)
        return -EFAULT;
    if (a[1]) {
        size_t words = (size_t)((maxnode + 63) / 64);
        uint64_t w[MPOL_MAX_MASK_WORDS] = {nodes};
        if (words > MPOL_MAX_MASK_WORDS)
            words = MPOL_MAX_MASK_WORDS;
        if (proxy_copy_out(p, a[1], w, words * 8) < 0)
            return -EFAULT;
    }
    return 0;
}

static long sys_set_mempolicy(struct proxy_process *p, const uint64_t a[6])
{
    long rc = mpol_mode_check((int)a[0]);
    if (rc < 0)
        return rc;
    uint64_t nodes;
    if ((rc = nodemask_in(p, a[1], a[2], &nodes)) < 0)
        return rc;
    unsigned mode = (unsigned)a[0] & ~MPOL_MODE_FLAGS;
    /* mpol_new's rules: default and local take no nodes; bind,
     * interleave and the many-node modes need some; preferred either. */
    bool empty = nodes == 0;
    if (((mode == 0 || mode == 4) && !empty) ||
        ((mode == 2 || mode == 3 || mode == 5 || mode == 6) && empty))
        return -EINVAL;
    p->mm.mempolicy_mode = (int)(a[0] & 0xffff);
    p->mm.mempolicy_nodes = mode == 0 || mode == 4 ? 0 : nodes;
    if (mode == 0)
        p->mm.mempolicy_mode = 0;
    return 0;
}

#define MPOL_MF_STRICT 0x1
#define MPOL_MF_MOVE_ALL 0x4
#define MPOL_MF_VALID_FLAGS 0x7 /* STRICT | MOVE | MOVE_ALL */

/* kernel_mbind and do_mbind, in their order: the mode and its flags,
 * the node mask (EFAULT, EINVAL), mbind's flags (EINVAL; MOVE_ALL needs
 * CAP_SYS_NICE: EPERM), alignment, a wrapping range (EINVAL), an empty
 * one (success), mpol_new's rules (EINVAL), then a hole in the range
 * (EFAULT); the range then has the policy (MPOL_DEFAULT: none). */
static long sys_mbind(struct proxy_process *p, const uint64_t a[6])
{
    gva_t start = a[0];
    long rc = mpol_mode_check((int)a[2]);
    uint64_t nodes = 0;
    if (rc == 0)
        rc = nodemask_in(p, a[3], a[4], &nodes);
    if (rc < 0)
        return rc;
    if (a[5] & ~(uint64_t)MPOL_MF_VALID_FLAGS)
        return -EINVAL;
    if ((a[5] & MPOL_MF_MOVE_ALL) && !proxy_ns_init_capable(p))
        return -EPERM;
    if (!page_aligned(start))
        return -EINVAL;
    uint64_t len = VMM_PAGE_ALIGN_UP(a[1]);
    if (start + len < start)
        return -EINVAL;
    if (len == 0)
        return 0;
    long mode = mpol_mode_of((int)a[2], nodes);
    if (mode < 0)
        return mode;
    if (start + len > VMM_USER_END || !vmm_as_range_mapped(p->as, start, len))
        return -EFAULT;
    return policy_set(p, start, start + len, (int)mode,
                      mode == MPOL_LOCAL_MODE ? 0 : nodes);
}

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#define MFD_NAME_MAX 249 /* Linux's MFD_NAME_MAX_LEN */

/*
 * memfd_create: a host memfd under the guest's name, the guest's flags
 * (close-on-exec kept in the guest's table: the host fd is always
 * O_CLOEXEC). MAP_SHARED mappings of it are shared memory like any file's
 * (fork children see the same pages); its pages are host memory, charged
 * to --memory only while mapped. MFD_HUGETLB is EINVAL, as on a kernel
 * without hugetlbfs pages: the guest's memory model has none.
 */
static long sys_memfd_create(struct proxy_process *p, const uint64_t a[6])
{
    char name[MFD_NAME_MAX + 1];
    long n = vmm_as_strncpy_in(p->as, name, a[0], sizeof(name));
    if (n == -ENAMETOOLONG)
        return -EINVAL;
    if (n < 0)
        return n;
    unsigned flags = (unsigned)a[1];
    if (flags & ~(MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL |
                  MFD_EXEC))
        return -EINVAL;
    if ((flags & MFD_NOEXEC_SEAL) && (flags & MFD_EXEC))
        return -EINVAL;
    int fd = memfd_create(name, flags | MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    return proxy_fd_install(&p->fds, fd, (flags & MFD_CLOEXEC) != 0, 0);
}

const struct proxy_syscall proxy_mm_syscalls[] = {
    {SYS_memfd_create, "memfd_create", sys_memfd_create},
    {SYS_pkey_alloc, "pkey_alloc", sys_pkey_alloc},
    {SYS_pkey_free, "pkey_free", sys_pkey_free},
    {SYS_pkey_mprotect, "pkey_mprotect", sys_pkey_mprotect},
    {SYS_get_mempolicy, "get_mempolicy", sys_get_mempolicy},
    {SYS_set_mempolicy, "set_mempolicy", sys_set_mempolicy},
    {SYS_mbind, "mbind", sys_mbind},
    {SYS_mmap, "mmap", sys_mmap},
    {SYS_munmap, "munmap", sys_munmap},
    {SYS_mprotect, "mprotect", sys_mprotect},
    {SYS_mremap, "mremap", sys_mremap},
    {SYS_remap_file_pages, "remap_file_pages", sys_remap_file_pages},
    {SYS_brk, "brk", sys_brk},
    {SYS_madvise, "madvise", sys_madvise},
    {SYS_msync, "msync", sys_msync},
    {SYS_mincore, "mincore", sys_mincore},
    {-1, NULL, NULL},
};
