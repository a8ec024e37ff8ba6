/*
 * snapshot.c - a copy of a run made by fork (checkpoints for reverse
 * execution under gdb, cli/gdbserver_checkpoint.c), the part every
 * backend shares.
 *
 * A fork of hvrun copies hvrun's memory (the proxy's and detcore's state,
 * every thread's saved registers), not what a backend holds outside it:
 * under ptrace each guest process's memory is a memfd a fork would share
 * with the original, and its stub is a process the fork does not trace;
 * under kvm the guest memory is private (the fork's copy-on-write copy,
 * at the same host addresses, is its own), but a VM and its vCPU belong
 * to the original's mm (KVM refuses their ioctls from another). So,
 * before the fork, each VM's memory that is a memfd is copied into a
 * memfd of its own (only the extents that hold data: SEEK_DATA/SEEK_HOLE)
 * and the CPU state hvrun's memory lacks is saved (the XSAVE image; kvm:
 * the segment registers, pending events, the TSC too); after it, the
 * original drops the copy and the fork takes it as the VM's memory
 * (mapped over the same host addresses, so every pointer into guest
 * memory stays good) and forgets the stub or VM. The fork (a checkpoint)
 * never runs the guest: each restore forks it again, copies the memory
 * once more (a memfd; private memory the fork copies: the checkpoint
 * stays as it was, to serve again) and gives every VM a new stub (ptrace,
 * through a stub spawner another process started for it,
 * vmm_helper_start: hvrun's seccomp filter forbids the exec a spawner
 * needs) or a new VM and vCPU made through /dev/kvm (kvm: its memslots
 * over the same host addresses) with the saved state.
 *
 * What is refused (-EOPNOTSUPP with the reason): a backend without the
 * ops, memory shared with a host object the fork would share too
 * (MAP_SHARED anonymous memory, a file mapped shared and writable), a
 * vfork child running on its parent's stub (ptrace), a vCPU whose state
 * KVM does not give.
 */
#include "backend_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct vmm_vm_snapshot {
    int memfd;     /* the memory's copy, until settled (-1 after) */
    void *cpu;     /* the backend's saved CPU state */
    size_t cpu_len;
};

static bool can_snapshot(const struct vmm_vm *vm)
{
    const struct vmm_backend_ops *o = vm->ops;
    return o->vm_save_cpu && o->vm_disown && o->vm_respawn &&
           o->host_disown && o->host_adopt_helper;
}

/* Memory shared with a host object is the fork's too: refused. */
static const char *shared_memory(const struct vmm_aspace *as)
{
    for (size_t i = 0; i < as->nr_vmas; i++) {
        const struct vmm_vma *v = as->vmas[i];
        if (!v->shared)
            continue;
        if (v->shared->anon)
            return "MAP_SHARED anonymous memory";
        if (v->shared->host_prot & PROT_WRITE)
            return "a file mapped MAP_SHARED and writable";
    }
    return NULL;
}

/* One extent [o, hole) of from into fd at the same offsets: from view
 * (from's bytes mapped: no second copy through the kernel), else through
 * a buffer. */
static int copy_extent(int from, const uint8_t *view, int fd, off_t o,
                       off_t hole)
{
    static char buf[65536];
    while (o < hole) {
        size_t want = (size_t)(hole - o);
        ssize_t n;
        if (view) {
            n = pwrite(fd, view + o, want, o);
        } else {
            n = pread(from, buf, want < sizeof(buf) ? want : sizeof(buf), o);
            if (n > 0 && pwrite(fd, buf, (size_t)n, o) != n)
                return -EIO;
        }
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        o += n;
    }
    return 0;
}

int vmm_memfd_copy(int from, const uint8_t *view, uint64_t size,
                   const char *name)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = ftruncate(fd, (off_t)size) < 0 ? -errno : 0;
    for (off_t at = 0; rc == 0;) {
        off_t data = lseek(from, at, SEEK_DATA);
        if (data < 0) {
            rc = errno == ENXIO ? 0 : -errno;
            break;
        }
        off_t hole = lseek(from, data, SEEK_HOLE);
        rc = hole < 0 ? -errno : copy_extent(from, view, fd, data, hole);
        at = hole;
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

/* A new memfd holding pm's data (its extents with data, at the same
 * offsets; the rest holes): the fd or -errno. */
static int copy_memory(const struct vmm_physmem *pm)
{
    return vmm_memfd_copy(pm->memfd, pm->hva_base, pm->reserve_bytes,
                          "hvrun-guest-memory");
}

/* memfd becomes pm's memory, over the same host addresses. */
static int swap_memory(struct vmm_physmem *pm, int memfd)
{
    if (mmap(pm->hva_base, pm->view_bytes, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_FIXED | MAP_NORESERVE, memfd, 0) == MAP_FAILED)
        return -errno;
    close(pm->memfd);
    pm->memfd = memfd;
    return 0;
}

/* The VMs whose memory vms[0, n) run on: each VM and its memory owner
 * (a destroyed owner too, kept for its sharers), once each, in a new
 * array (the caller frees it), *k of them; NULL when out of memory. */
static struct vmm_vm **memory_holders(struct vmm_vm *const *vms, size_t n,
                                      size_t *k)
{
    struct vmm_vm **out = calloc(2 * n + 1, sizeof(*out));
    *k = 0;
    for (size_t i = 0; out && i < 2 * n; i++) {
        struct vmm_vm *v = i < n ? vms[i] : vms[i - n]->memory_vm;
        bool seen = !v;
        for (size_t j = 0; j < *k && !seen; j++)
            seen = out[j] == v;
        if (!seen)
            out[(*k)++] = v;
    }
    return out;
}

static void drop_snapshot(struct vmm_vm *vm)
{
    if (!vm->snapshot)
        return;
    if (vm->snapshot->memfd >= 0)
        close(vm->snapshot->memfd);
    free(vm->snapshot->cpu);
    free(vm->snapshot);
    vm->snapshot = NULL;
}

int vmm_vms_snapshot_take(struct vmm_vm *const *vms, size_t n, char *why,
                          size_t why_len)
{
    size_t k;
    struct vmm_vm **all = memory_holders(vms, n, &k);
    if (!all)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++) {
        struct vmm_vm *v = all[i];
        const char *bad = shared_memory(&v->as);
        if (!can_snapshot(v)) {
            snprintf(why, why_len, "the %s backend cannot copy a VM",
                     v->ops->name);
            rc = -EOPNOTSUPP;
        } else if (bad) {
            snprintf(why, why_len, "%s (a fork would share it)", bad);
            rc = -EOPNOTSUPP;
        }
        if (rc < 0)
            break;
        drop_snapshot(v);
        struct vmm_vm_snapshot *s = calloc(1, sizeof(*s));
        if (!s) {
            rc = -ENOMEM;
            break;
        }
        v->snapshot = s;
        /* (private memory, -1: the fork's copy is the fork's own) */
        s->memfd = v->pm.memfd >= 0 ? copy_memory(&v->pm) : -1;
        if (v->pm.memfd >= 0 && s->memfd < 0) {
            rc = s->memfd;
            snprintf(why, why_len, "copying guest memory: %s", strerror(-rc));
            break;
        }
        /* (a retired owner has no vCPU: memory only) */
        if (!v->retired && !(s->cpu = v->ops->vm_save_cpu(v, &s->cpu_len))) {
            snprintf(why, why_len,
                     "a guest's CPU state cannot be read (%s backend; "
                     "ptrace: a vfork child on its parent's stub?)",
                     v->ops->name);
            rc = -EOPNOTSUPP;
        }
    }
    if (rc < 0)
        for (size_t i = 0; i < k; i++)
            drop_snapshot(all[i]);
    free(all);
    return rc;
}

int vmm_vms_snapshot_settle(struct vmm_vm *const *vms, size_t n, bool in_fork)
{
    size_t k;
    struct vmm_vm **all = memory_holders(vms, n, &k);
    if (!all)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < k; i++) {
        struct vmm_vm *v = all[i];
        if (!v->snapshot)
            continue;
        if (!in_fork) {
            drop_snapshot(v);
            continue;
        }
        /* (a retired owner's too: what it still names is the
         * original's, and its destroy in a restored copy must not touch
         * it) */
        v->ops->vm_disown(v);
        if (v->snapshot->memfd < 0)
            continue; /* private memory: the fork's own already */
        if (rc == 0 && (rc = swap_memory(&v->pm, v->snapshot->memfd)) == 0)
            v->snapshot->memfd = -1;
        if (rc == 0)
            rc = vmm_as_rebind_direct(&v->as);
    }
    free(all);
    return rc;
}

void vmm_host_snapshot_disown(struct vmm_host *host)
{
    if (host->ops->host_disown)
        host->ops->host_disown(host);
}

void vmm_host_snapshot_adopt(struct vmm_host *host, int helper_fd)
{
    vmm_slice_timer_forget();
    if (host->ops->host_adopt_helper)
        host->ops->host_adopt_helper(host, helper_fd);
}

int vmm_vms_snapshot_restore(struct vmm_vm *const *vms, size_t n, char *why,
                             size_t why_len)
{
    size_t k;
    struct vmm_vm **all = memory_holders(vms, n, &k);
    if (!all)
        return -ENOMEM;
    int rc = 0;
    /* Every memory first: a sharer's stub opens its owner's memfd.
     * (Private memory, -1: this fork's copy is its own already.) */
    for (size_t i = 0; i < k && rc == 0; i++) {
        if (all[i]->pm.memfd < 0)
            continue;
        int fd = copy_memory(&all[i]->pm);
        rc = fd < 0 ? fd : swap_memory(&all[i]->pm, fd);
        /* a file's own pages (VMM_VMA_DIRECT) are not in the memfd */
        if (rc == 0)
            rc = vmm_as_rebind_direct(&all[i]->as);
        if (rc < 0)
            snprintf(why, why_len, "copying guest memory: %s", strerror(-rc));
    }
    for (size_t i = 0; i < k && rc == 0; i++) {
        struct vmm_vm *v = all[i];
        if (v->retired)
            continue;
        const struct vmm_vm_snapshot *s = v->snapshot;
        rc = v->ops->vm_respawn(v, s ? s->cpu : NULL, s ? s->cpu_len : 0,
                                why, why_len);
    }
    free(all);
    return rc;
}

int vmm_helper_start(enum vmm_backend_kind kind, int *fd, int *pid,
                     char *why, size_t why_len)
{
    if (kind == VMM_BACKEND_KVM)
        return kvm_helper_start(fd, pid, why, why_len);
    return ptrace_helper_start(fd, pid, why, why_len);
}
