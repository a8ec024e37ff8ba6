/*
 * procmap_query.c - the PROCMAP_QUERY ioctl of /proc/PID/maps (Linux
 * 6.11, fs/proc/task_mmu.c do_procmap_query): the mapping covering an
 * address (or the next one, PROCMAP_QUERY_COVERING_OR_NEXT_VMA) among
 * those with the permissions asked, answered from the process's mappings
 * now (not the file's text as of its open), each as its maps line shows
 * it (procfs.c proxy_procfs_mapping: canonical device and inode numbers,
 * the same name). Build ids are not read: build_id_size comes back 0,
 * as Linux gives for a file without one.
 */
#include "proxy.h"
#include "kernel.h"
#include "fs.h"
#include "internal.h"
#include "vfs.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define QUERY_VMA_READABLE 0x01ULL
#define QUERY_VMA_WRITABLE 0x02ULL
#define QUERY_VMA_EXECUTABLE 0x04ULL
#define QUERY_VMA_SHARED 0x08ULL
#define QUERY_COVERING_OR_NEXT_VMA 0x10ULL
#define QUERY_FILE_BACKED_VMA 0x20ULL
#define QUERY_VALID_FLAGS 0x3fULL
#define QUERY_PAGE_BYTES 4096ULL
#define QUERY_USIZE_MAX 4096ULL /* PAGE_SIZE */

/* struct procmap_query, Linux 6.11's (104 bytes). */
struct procmap_query {
    uint64_t size;
    uint64_t query_flags;
    uint64_t query_addr;
    uint64_t vma_start;
    uint64_t vma_end;
    uint64_t vma_flags;
    uint64_t vma_page_size;
    uint64_t vma_offset;
    uint64_t inode;
    uint32_t dev_major;
    uint32_t dev_minor;
    uint32_t vma_name_size;
    uint32_t build_id_size;
    uint64_t vma_name_addr;
    uint64_t build_id_addr;
};
_Static_assert(sizeof(struct procmap_query) == 104,
               "struct procmap_query is not Linux 6.11's");

/* copy_struct_from_user with its size read first, as the kernel does. */
static long query_in(struct proxy_process *p, gva_t arg, struct procmap_query *q)
{
    uint64_t usize;
    if (proxy_copy_in(p, &usize, arg, sizeof(usize)) < 0)
        return -EFAULT;
    if (usize < offsetof(struct procmap_query, vma_start))
        return -EINVAL;
    if (usize > QUERY_USIZE_MAX)
        return -E2BIG;
    int rc = proxy_copy_in_tail_zero(p, arg, sizeof(*q), (size_t)usize);
    if (rc < 0)
        return rc;
    memset(q, 0, sizeof(*q));
    size_t n = usize < sizeof(*q) ? (size_t)usize : sizeof(*q);
    return proxy_copy_in(p, q, arg, n) < 0 ? -EFAULT : 0;
}

static uint64_t mapping_flags(const struct proxy_mapping *m)
{
    return (m->prot & PROT_READ ? QUERY_VMA_READABLE : 0) |
           (m->prot & PROT_WRITE ? QUERY_VMA_WRITABLE : 0) |
           (m->prot & PROT_EXEC ? QUERY_VMA_EXECUTABLE : 0) |
           (m->shared ? QUERY_VMA_SHARED : 0);
}

/* query_matching_vma: the first mapping ending past addr that has the
 * asked permissions (and a file, if asked), if it covers addr or the
 * caller takes the next one. 0 or -ENOENT. */
static long matching_mapping(struct proxy_process *of, uint64_t addr,
                             uint64_t flags, struct proxy_mapping *m)
{
    uint64_t want = flags & (QUERY_VMA_READABLE | QUERY_VMA_WRITABLE |
                             QUERY_VMA_EXECUTABLE | QUERY_VMA_SHARED);
    size_t i = 0;
    do {
        size_t next = proxy_procfs_mapping(of, i, m);
        if (!next)
            break;
        i = next;
        if (m->end <= addr)
            continue;
        bool fits = (mapping_flags(m) & want) == want &&
                    (!(flags & QUERY_FILE_BACKED_VMA) || m->is_file);
        if (fits && ((flags & QUERY_COVERING_OR_NEXT_VMA) || m->start <= addr))
            return 0;
        if (!(flags & QUERY_COVERING_OR_NEXT_VMA))
            return -ENOENT; /* the covering or next one does not fit */
        addr = m->end;
    } while (i);
    return -ENOENT;
}

long proxy_procmap_query(struct proxy_process *p, int maps_pid, gva_t arg)
{
    struct procmap_query q;
    long r = query_in(p, arg, &q);
    if (r < 0)
        return r;
    if (q.query_flags & ~QUERY_VALID_FLAGS)
        return -EINVAL;
    if (!!q.vma_name_size != !!q.vma_name_addr ||
        !!q.build_id_size != !!q.build_id_addr)
        return -EINVAL;
    struct proxy_process *of = proxy_world_find(p->world, maps_pid);
    if (!of || of->zombie || of->exited)
        return -ESRCH;
    struct proxy_mapping m;
    r = matching_mapping(of, q.query_addr, q.query_flags, &m);
    if (r < 0)
        return r;
    q.vma_start = m.start;
    q.vma_end = m.end;
    q.vma_flags = mapping_flags(&m);
    q.vma_page_size = QUERY_PAGE_BYTES;
    q.vma_offset = m.file_off;
    q.dev_major = m.dev_major;
    q.dev_minor = m.dev_minor;
    q.inode = m.ino;
    q.build_id_size = 0;
    if (q.vma_name_size) {
        size_t room = q.vma_name_size < PROXY_PATH_MAX ? q.vma_name_size
                                                       : PROXY_PATH_MAX;
        size_t need = m.name[0] ? strlen(m.name) + 1 : 0;
        if (need > room)
            return -ENAMETOOLONG;
        q.vma_name_size = (uint32_t)need;
        if (need && proxy_copy_out(p, q.vma_name_addr, m.name, need) < 0)
            return -EFAULT;
    }
    size_t n = q.size < sizeof(q) ? (size_t)q.size : sizeof(q);
    return proxy_copy_out(p, arg, &q, n) < 0 ? -EFAULT : 0;
}
