/*
 * secretmem.c - memfd_secret(2) (Linux's mm/secretmem.c).
 *
 * Linux's secret memory is a file whose pages leave the kernel's direct
 * map: only the owning process's own mappings reach them. hvrun models
 * what a program can observe of that with a host memfd (the pages, shared
 * by fork and MAP_SHARED as any memfd's) whose guest fd is marked secret:
 *   - the file has mmap and nothing else: read, write and their vector and
 *     positioned forms are EINVAL (no read/write file operation), lseek is
 *     ESPIPE, fallocate EOPNOTSUPP; its size is set once (ftruncate on a
 *     non-empty one is EINVAL); pread and the other positioned calls are
 *     ESPIPE (no FMODE_PREAD); fstat shows a regular file, mode 0600;
 *   - mmap must be shared (EINVAL otherwise), and the mapping is locked
 *     (VM_LOCKED): it counts against RLIMIT_MEMLOCK (EAGAIN past it);
 *   - another process's reads and writes of it, which Linux makes through
 *     get_user_pages (process_vm_readv/writev, /proc/PID/mem, ptrace
 *     PEEK/POKE), find no page: EFAULT or EIO, even for the owner itself
 *     through those calls. The process's own syscalls on buffers there
 *     (copy_from_user) work as on Linux.
 * Its name (readlink of /proc/self/fd/N, /proc/self/maps) is Linux's
 * "/secretmem (deleted)", its link count 1 (the host memfd's is 0).
 */
#include "proxy.h"
#include "fdtable.h"
#include "mm.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif

bool proxy_secretmem_is(struct proxy_process *p, int guest_fd)
{
    const struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    return f && f->secretmem;
}

bool proxy_secretmem_host_fd(const struct proxy_process *p, int host_fd)
{
    for (int fd = 0; host_fd >= 0 && fd < p->fds.cap; fd++)
        if (p->fds.fds[fd].kind != PROXY_FD_FREE &&
            p->fds.fds[fd].host_fd == host_fd && p->fds.fds[fd].secretmem)
            return true;
    return false;
}

void proxy_secretmem_fix_stat(const struct proxy_process *p, int host_fd,
                              struct stat *st)
{
    /* a memfd's inode has no link; secretmem's anonymous inode has one */
    if (S_ISREG(st->st_mode) && st->st_nlink == 0 &&
        proxy_secretmem_host_fd(p, host_fd))
        st->st_nlink = 1;
}

void proxy_secretmem_name_mapping(struct proxy_process *p, int host_fd,
                                  gva_t gva, uint64_t len, uint64_t off)
{
    struct stat st;
    if (fstat(host_fd, &st) == 0)
        vmm_as_set_file(p->as, gva, len, off, st.st_dev, st.st_ino,
                        PROXY_SECRETMEM_NAME);
}

bool proxy_secretmem_page(const struct proxy_process *q, gva_t gva)
{
    const struct vmm_vma *v = vmm_as_find_vma(q->as, gva);
    return v && (v->flags & VMM_VMA_SECRET);
}

int proxy_secretmem_mmap(struct proxy_process *p, int guest_fd, int map_type,
                         int *vflags)
{
    if (!proxy_secretmem_is(p, guest_fd))
        return 0;
    if (map_type == MAP_PRIVATE) /* secretmem_mmap: VM_SHARED or nothing */
        return -EINVAL;
    *vflags |= VMM_VMA_SECRET | VMM_VMA_LOCKED;
    return 1;
}

long proxy_secretmem_truncate(struct proxy_process *p, int guest_fd,
                              int host_fd)
{
    if (!proxy_secretmem_is(p, guest_fd))
        return 0;
    /* secretmem_setattr: a size once set never changes */
    struct stat st;
    if (fstat(host_fd, &st) < 0)
        return -errno;
    return st.st_size != 0 ? -EINVAL : 0;
}

/* The only flag is O_CLOEXEC (SECRETMEM_FLAGS_MASK has no bits). */
static long sys_memfd_secret(struct proxy_process *p, const uint64_t a[6])
{
    unsigned flags = (unsigned)a[0];
    if (flags & ~(unsigned)O_CLOEXEC)
        return -EINVAL;
    int fd = memfd_create("hvrun-secretmem", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* alloc_anon_inode's mode, so every stat path shows it */
    if (fchmod(fd, S_IRUSR | S_IWUSR) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    int guest_fd = proxy_fd_install(&p->fds, fd, (flags & O_CLOEXEC) != 0, 0);
    if (guest_fd >= 0)
        proxy_fd_get(&p->fds, guest_fd)->secretmem = true;
    return guest_fd;
}

const struct proxy_syscall proxy_secretmem_syscalls[] = {
    {SYS_memfd_secret, "memfd_secret", sys_memfd_secret},
    {-1, NULL, NULL},
};
