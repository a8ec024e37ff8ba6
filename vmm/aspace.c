/*
 * aspace.c - physical allocator, page tables, VMA list and the checked copy
 * path. See aspace.h for the invariants.
 */
#include "aspace.h"
#include "pt_pages.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- physical allocator ------------------------------------------------ */

int vmm_phys_init(struct vmm_physmem *pm, uint8_t *hva_base,
                  uint64_t reserve_bytes, gpa_t first_gpa)
{
    memset(pm, 0, sizeof(*pm));
    pm->hva_base = hva_base;
    pm->reserve_bytes = reserve_bytes;
    pm->view_bytes = reserve_bytes;
    pm->bump = first_gpa;
    pm->memfd = -1;
    pm->view_follows_guest = true;
    return 0;
}

void vmm_phys_destroy(struct vmm_physmem *pm)
{
    free(pm->free_list);
    pm->free_list = NULL;
    pm->nr_free = pm->cap_free = 0;
}

static int phys_ensure_covered(struct vmm_physmem *pm, gpa_t top)
{
    if (top <= pm->covered_top)
        return 0;
    if (pm->grow) {
        int rc = pm->grow(pm->grow_ctx, top);
        if (rc < 0)
            return rc;
    } else {
        pm->covered_top = top;
    }
    return 0;
}

int vmm_phys_alloc(struct vmm_physmem *pm, uint64_t npages, gpa_t *gpa_out)
{
    if (npages == 0)
        return -EINVAL;
    /* First fit: keeps low memory dense, which keeps memslots few. */
    for (size_t i = 0; i < pm->nr_free; i++) {
        struct vmm_phys_extent *e = &pm->free_list[i];
        if (e->pages < npages)
            continue;
        *gpa_out = e->gpa;
        e->gpa += npages * VMM_PAGE_SIZE;
        e->pages -= npages;
        if (e->pages == 0) {
            memmove(e, e + 1, (pm->nr_free - i - 1) * sizeof(*e));
            pm->nr_free--;
        }
        pm->used_pages += npages;
        return 0;
    }
    uint64_t bytes = npages * VMM_PAGE_SIZE;
    if (bytes / VMM_PAGE_SIZE != npages || pm->bump + bytes > pm->reserve_bytes)
        return -ENOMEM;
    int rc = phys_ensure_covered(pm, pm->bump + bytes);
    if (rc < 0)
        return rc;
    *gpa_out = pm->bump;
    pm->bump += bytes;
    pm->used_pages += npages;
    return 0;
}

static int free_list_insert(struct vmm_physmem *pm, gpa_t gpa, uint64_t npages)
{
    size_t i = 0, hi = pm->nr_free; /* the first extent at or above gpa */
    while (i < hi) {
        size_t mid = i + (hi - i) / 2;
        if (pm->free_list[mid].gpa < gpa)
            i = mid + 1;
        else
            hi = mid;
    }
    gpa_t end = gpa + npages * VMM_PAGE_SIZE;
    bool merge_prev = i > 0 && pm->free_list[i - 1].gpa +
                                   pm->free_list[i - 1].pages * VMM_PAGE_SIZE ==
                                   gpa;
    bool merge_next = i < pm->nr_free && pm->free_list[i].gpa == end;
    if (merge_prev && merge_next) {
        pm->free_list[i - 1].pages += npages + pm->free_list[i].pages;
        memmove(&pm->free_list[i], &pm->free_list[i + 1],
                (pm->nr_free - i - 1) * sizeof(pm->free_list[0]));
        pm->nr_free--;
        return 0;
    }
    if (merge_prev) {
        pm->free_list[i - 1].pages += npages;
        return 0;
    }
    if (merge_next) {
        pm->free_list[i].gpa = gpa;
        pm->free_list[i].pages += npages;
        return 0;
    }
    if (pm->nr_free == pm->cap_free) {
        size_t cap = pm->cap_free ? pm->cap_free * 2 : 64;
        void *p = realloc(pm->free_list, cap * sizeof(pm->free_list[0]));
        if (!p)
            return -ENOMEM;
        pm->free_list = p;
        pm->cap_free = cap;
    }
    memmove(&pm->free_list[i + 1], &pm->free_list[i],
            (pm->nr_free - i) * sizeof(pm->free_list[0]));
    pm->free_list[i] = (struct vmm_phys_extent){gpa, npages};
    pm->nr_free++;
    return 0;
}

/* Asks the host for 2 MiB pages behind the 2 MiB-aligned part of an
 * extent (only a guest 2 MiB entry backed by one lets KVM map 2 MiB at
 * once). A fresh mapping from vmm_phys_free drops the advice again. */
static void advise_huge(struct vmm_physmem *pm, gpa_t gpa, uint64_t bytes)
{
    gpa_t lo = (gpa + VMM_HUGE_SIZE - 1) & ~(VMM_HUGE_SIZE - 1);
    gpa_t hi = (gpa + bytes) & ~(VMM_HUGE_SIZE - 1);
    if (hi > lo)
        (void)madvise(vmm_phys_hva(pm, lo), hi - lo, MADV_HUGEPAGE);
}

/* The first gpa >= from that is congruent to phase modulo 2 MiB. */
static gpa_t huge_phase_at(gpa_t from, uint64_t phase)
{
    return from + ((phase - from) & (VMM_HUGE_SIZE - 1));
}

int vmm_phys_alloc_for(struct vmm_physmem *pm, uint64_t npages, gva_t gva,
                       gpa_t *gpa_out)
{
    uint64_t bytes = npages * VMM_PAGE_SIZE;
    if (npages == 0 || bytes / VMM_PAGE_SIZE != npages ||
        bytes < VMM_HUGE_SIZE)
        return vmm_phys_alloc(pm, npages, gpa_out);
    uint64_t phase = gva & (VMM_HUGE_SIZE - 1);
    for (size_t i = 0; i < pm->nr_free; i++) {
        struct vmm_phys_extent e = pm->free_list[i];
        gpa_t at = huge_phase_at(e.gpa, phase), e_end = e.gpa + e.pages *
                                                                 VMM_PAGE_SIZE;
        if (at + bytes > e_end)
            continue;
        /* Take [at, at+bytes): the extent keeps its head, the tail goes
         * back as its own extent. */
        memmove(&pm->free_list[i], &pm->free_list[i + 1],
                (pm->nr_free - i - 1) * sizeof(e));
        pm->nr_free--;
        if (at > e.gpa)
            (void)free_list_insert(pm, e.gpa, (at - e.gpa) / VMM_PAGE_SIZE);
        if (e_end > at + bytes)
            (void)free_list_insert(pm, at + bytes,
                                   (e_end - at - bytes) / VMM_PAGE_SIZE);
        pm->used_pages += npages;
        advise_huge(pm, at, bytes);
        *gpa_out = at;
        return 0;
    }
    gpa_t at = huge_phase_at(pm->bump, phase);
    if (at + bytes > pm->reserve_bytes || at + bytes < at)
        return -ENOMEM;
    int rc = phys_ensure_covered(pm, at + bytes);
    if (rc < 0)
        return rc;
    if (at > pm->bump) /* never used, so zero: free for smaller extents */
        (void)free_list_insert(pm, pm->bump, (at - pm->bump) / VMM_PAGE_SIZE);
    pm->bump = at + bytes;
    pm->used_pages += npages;
    advise_huge(pm, at, bytes);
    *gpa_out = at;
    return 0;
}

uint64_t vmm_phys_resident_bytes(const struct vmm_physmem *pm)
{
    unsigned char vec[4096];
    uint64_t pages = pm->bump / VMM_PAGE_SIZE, resident = 0;
    for (uint64_t done = 0; done < pages;) {
        uint64_t n = pages - done < sizeof(vec) ? pages - done : sizeof(vec);
        if (mincore(pm->hva_base + done * VMM_PAGE_SIZE, n * VMM_PAGE_SIZE,
                    vec) == 0)
            for (uint64_t i = 0; i < n; i++)
                resident += vec[i] & 1;
        done += n;
    }
    return resident * VMM_PAGE_SIZE;
}

uint64_t vmm_phys_memfd_bytes(const struct vmm_physmem *pm)
{
    struct stat st;
    if (pm->memfd < 0 || fstat(pm->memfd, &st) < 0)
        return 0;
    return (uint64_t)st.st_blocks * 512;
}

void vmm_phys_discard(const struct vmm_physmem *pm, void *hva, uint64_t len)
{
    (void)madvise(hva, len, pm->memfd >= 0 ? MADV_REMOVE : MADV_DONTNEED);
}

/* Pages back in the free list. If the list cannot grow the pages leak
 * from the allocator, which is safe (they stay zeroed and unused). */
static void phys_return(struct vmm_physmem *pm, gpa_t gpa, uint64_t npages)
{
    pm->used_pages -= npages;
    (void)free_list_insert(pm, gpa, npages);
}

void vmm_phys_free(struct vmm_physmem *pm, gpa_t gpa, uint64_t npages)
{
    if (npages == 0)
        return;
    /* A fresh mapping of the backing both zeroes the pages and detaches
     * any host file that a MAP_SHARED guest mapping had put there: private
     * anonymous memory, or the memfd's own pages with a hole punched in
     * them (a stub process maps the memfd too, so it must stay the same
     * object). */
    void *hva = vmm_phys_hva(pm, gpa);
    uint64_t bytes = npages * VMM_PAGE_SIZE;
    if (pm->memfd >= 0) {
        mmap(hva, bytes, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_NORESERVE | MAP_FIXED, pm->memfd, (off_t)gpa);
        (void)fallocate(pm->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        (off_t)gpa, (off_t)bytes);
    } else {
        mmap(hva, bytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    }
    phys_return(pm, gpa, npages);
}

void vmm_phys_free_plain(struct vmm_physmem *pm, gpa_t gpa, uint64_t npages)
{
    if (npages == 0)
        return;
    /* Dropping the pages zeroes them (and KVM's mmu notifier drops the
     * guest's entries for them) but keeps the host VMA: a fresh mapping
     * over part of the backing splits it and merges it back, each step
     * calling every live VM's notifier (a guest mmap+munmap pair under
     * kvm: docs/PERFORMANCE.md). */
    vmm_phys_discard(pm, vmm_phys_hva(pm, gpa), npages * VMM_PAGE_SIZE);
    phys_return(pm, gpa, npages);
}

/* ---- page tables --------------------------------------------------------- */

/*
 * Accessed and dirty are set up front in every entry hvrun writes: nothing
 * reads them back, and a shadow MMU (kvm_pvm) prefetches neighbouring
 * entries on a fault only when they are already marked accessed, and maps a
 * page writable at once only when it is already dirty. Measured here: a
 * guest's first touches of resident pages cost ~4 us a page instead of ~28.
 */
#define PT_INTERMEDIATE (VMM_PTE_P | VMM_PTE_W | VMM_PTE_U | VMM_PTE_A)

static uint64_t *pt_table(const struct vmm_aspace *as, gpa_t gpa)
{
    if (as->pt_pages)
        return vmm_pt_pages_find(as->pt_pages, gpa);
    return (uint64_t *)vmm_phys_hva(as->pm, gpa);
}

/*
 * A fresh page-table page. Its first access from hvrun is a write: read
 * first, a fresh host page maps the shared zero page, and the write that
 * follows is a copy-on-write fault whose TLB flush interrupts every CPU
 * the process runs on (the VM pool's worker makes that two).
 */
static int pt_alloc_table(const struct vmm_aspace *as, gpa_t *out)
{
    if (vmm_phys_alloc(as->pm, 1, out) < 0)
        return -ENOMEM;
    if (as->pt_pages) {
        if (vmm_pt_pages_add(as->pt_pages, *out))
            return 0;
        vmm_phys_free(as->pm, *out, 1);
        return -ENOMEM;
    }
    *(volatile uint64_t *)pt_table(as, *out) = 0;
    return 0;
}

/* Returns the page-directory entry (level 2) for gva, allocating the
 * tables above it if `create`; NULL when absent (or out of memory). */
static uint64_t *pt_pde(const struct vmm_aspace *as, gva_t gva, bool create)
{
    gpa_t table = as->pml4_gpa;
    for (int level = 3; level > 1; level--) {
        unsigned idx = (gva >> (12 + 9 * level)) & 511;
        uint64_t *entry = &pt_table(as, table)[idx];
        if (!(*entry & VMM_PTE_P)) {
            if (!create)
                return NULL;
            gpa_t fresh;
            if (pt_alloc_table(as, &fresh) < 0)
                return NULL;
            *entry = fresh | PT_INTERMEDIATE;
        }
        table = *entry & VMM_PTE_ADDR;
    }
    return &pt_table(as, table)[(gva >> 21) & 511];
}

static bool pde_is_huge(uint64_t pde)
{
    return (pde & (VMM_PTE_P | VMM_PTE_PS)) == (VMM_PTE_P | VMM_PTE_PS);
}

/* Replaces a 2 MiB entry by a table of 512 entries with the same
 * translations and flags, so one page of it can change. The translations
 * are the same, so nothing cached needs to go. */
static int pde_split(const struct vmm_aspace *as, uint64_t *pde)
{
    gpa_t fresh;
    if (pt_alloc_table(as, &fresh) < 0)
        return -ENOMEM;
    uint64_t *t = pt_table(as, fresh);
    uint64_t base = *pde & VMM_PTE_ADDR & ~(VMM_HUGE_SIZE - 1);
    uint64_t flags = *pde & ~VMM_PTE_ADDR & ~VMM_PTE_PS;
    for (uint64_t k = 0; k < 512; k++)
        t[k] = (base + k * VMM_PAGE_SIZE) | flags;
    *pde = fresh | PT_INTERMEDIATE;
    return 0;
}

/* Returns the leaf PTE slot for gva. With `create`, tables are allocated
 * and a 2 MiB entry over gva is split; without, NULL for either. */
static uint64_t *pt_slot(const struct vmm_aspace *as, gva_t gva, bool create)
{
    uint64_t *pde = pt_pde(as, gva, create);
    if (!pde)
        return NULL;
    if (!(*pde & VMM_PTE_P) || pde_is_huge(*pde)) {
        if (!create)
            return NULL;
        if (pde_is_huge(*pde)) {
            if (pde_split(as, pde) < 0)
                return NULL;
        } else {
            gpa_t fresh;
            if (pt_alloc_table(as, &fresh) < 0)
                return NULL;
            *pde = fresh | PT_INTERMEDIATE;
        }
    }
    return &pt_table(as, *pde & VMM_PTE_ADDR)[(gva >> 12) & 511];
}

/*
 * Maps [gva, gva + npages pages) to gpa onwards. With huge_ok, every
 * 2 MiB-aligned stretch whose gpa is 2 MiB-aligned too gets one 2 MiB
 * entry, unless a page table is already there (its page would be lost:
 * page-table pages are never reused, see pt_slot).
 */
static int pt_map_range(struct vmm_aspace *as, gva_t gva, gpa_t gpa,
                        uint64_t npages, uint64_t flags, bool huge_ok)
{
    gva_t end = gva + npages * VMM_PAGE_SIZE;
    for (gva_t g = gva; g < end;) {
        gpa_t p = gpa + (g - gva);
        if (huge_ok && !(g & (VMM_HUGE_SIZE - 1)) &&
            !(p & (VMM_HUGE_SIZE - 1)) && end - g >= VMM_HUGE_SIZE) {
            uint64_t *pde = pt_pde(as, g, true);
            if (!pde)
                return -ENOMEM;
            if (!(*pde & VMM_PTE_P) || pde_is_huge(*pde)) {
                *pde = p | flags | VMM_PTE_PS;
                g += VMM_HUGE_SIZE;
                continue;
            }
        }
        uint64_t *slot = pt_slot(as, g, true);
        if (!slot)
            return -ENOMEM;
        *slot = p | flags;
        g += VMM_PAGE_SIZE;
    }
    return 0;
}

int vmm_pt_map(struct vmm_aspace *as, gva_t gva, gpa_t gpa, uint64_t npages,
               uint64_t pte_flags)
{
    return pt_map_range(as, gva, gpa, npages, pte_flags, false);
}

uint64_t vmm_pt_lookup(const struct vmm_aspace *as, gva_t gva)
{
    uint64_t *pde = pt_pde(as, gva, false);
    if (pde && pde_is_huge(*pde)) /* as the 4 KiB entry it stands for */
        return ((*pde & VMM_PTE_ADDR) + (gva & (VMM_HUGE_SIZE - 1) &
                                         VMM_PAGE_MASK)) |
               (*pde & ~VMM_PTE_ADDR & ~VMM_PTE_PS);
    uint64_t *slot = pt_slot(as, gva, false);
    return slot ? *slot : 0;
}

static uint64_t prot_to_pte(int prot)
{
    if (!(prot & (PROT_READ | PROT_WRITE | PROT_EXEC)))
        return 0;
    uint64_t pte = VMM_PTE_P | VMM_PTE_U | VMM_PTE_A | VMM_PTE_D;
    if (prot & PROT_WRITE)
        pte |= VMM_PTE_W;
    if (!(prot & PROT_EXEC))
        pte |= VMM_PTE_NX;
    return pte;
}

/* Clears the entries of [start, end): whole 2 MiB entries inside it go at
 * once, one straddling an edge is split first. If a split has no memory
 * the whole 2 MiB entry goes (the guest then faults on its neighbours:
 * wrong, but never a mapping that should not exist). */
static void pt_clear(struct vmm_aspace *as, gva_t start, gva_t end)
{
    for (gva_t g = start; g < end;) {
        gva_t next_2m = (g | (VMM_HUGE_SIZE - 1)) + 1;
        uint64_t *pde = pt_pde(as, g, false);
        if (!pde || !(*pde & VMM_PTE_P)) {
            g = next_2m;
            continue;
        }
        if (pde_is_huge(*pde)) {
            if ((!(g & (VMM_HUGE_SIZE - 1)) && next_2m <= end) ||
                pde_split(as, pde) < 0) {
                *pde = 0;
                g = next_2m;
                continue;
            }
        }
        pt_table(as, *pde & VMM_PTE_ADDR)[(g >> 12) & 511] = 0;
        g += VMM_PAGE_SIZE;
    }
    as->tlb_flushes_asked++;
}

/* Writes the PTEs of a whole VMA from its prot; pages past its file's
 * end get none. */
static int pt_apply_vma(struct vmm_aspace *as, const struct vmm_vma *v)
{
    if (v->flags & VMM_VMA_LAZY)
        return 0; /* never had any: backed stretches are VMAs of their own */
    gva_t valid = vmm_vma_valid_end(v);
    uint64_t npages = (valid - v->start) / VMM_PAGE_SIZE;
    uint64_t flags = prot_to_pte(v->prot);
    if (!flags) {
        pt_clear(as, v->start, v->end);
        return 0;
    }
    if (valid < v->end)
        pt_clear(as, valid, v->end);
    if (npages == 0)
        return 0;
    return pt_map_range(as, v->start, v->gpa, npages, flags, true);
}

/* ---- shared objects ------------------------------------------------------ */

/* Unique for the run's life: what a backend keys its cache of opened
 * objects by (an address may be reused). */
static uint64_t new_object_id(void)
{
    static uint64_t last_id;
    return ++last_id;
}

static struct vmm_shared *shared_get(struct vmm_shared *s)
{
    if (s)
        s->refs++;
    return s;
}

/* The live private-file objects, one per (dev, ino): a process maps each
 * library several times, and a run holds many processes. */
static struct vmm_shared **file_cache;
static size_t nr_file_cache, cap_file_cache;

static void file_cache_drop(const struct vmm_shared *s)
{
    for (size_t i = 0; i < nr_file_cache; i++)
        if (file_cache[i] == s) {
            file_cache[i] = file_cache[--nr_file_cache];
            return;
        }
}

static void shared_put(struct vmm_shared *s)
{
    if (s && --s->refs == 0) {
        if (s->private_file)
            file_cache_drop(s);
        if (s->view_made && s->view_fd >= 0)
            close(s->view_fd);
        close(s->fd);
        free(s);
    }
}

/* The private-file object of fd's file: a cached one, or a new one (a dup
 * of fd) entered in the cache. NULL when out of fds or memory. */
static struct vmm_shared *file_object(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return NULL;
    for (size_t i = 0; i < nr_file_cache; i++)
        if (file_cache[i]->dev == (uint64_t)st.st_dev &&
            file_cache[i]->ino == (uint64_t)st.st_ino)
            return shared_get(file_cache[i]);
    if (nr_file_cache == cap_file_cache) {
        size_t cap = cap_file_cache ? cap_file_cache * 2 : 16;
        void *p = realloc(file_cache, cap * sizeof(*file_cache));
        if (!p)
            return NULL;
        file_cache = p;
        cap_file_cache = cap;
    }
    struct vmm_shared *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (s->fd < 0) {
        free(s);
        return NULL;
    }
    s->host_prot = PROT_READ;
    s->refs = 1;
    s->private_file = true;
    s->id = new_object_id();
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    file_cache[nr_file_cache++] = s;
    return s;
}

/* Maps the VMA's shared object over its whole backing. The object keeps
 * its size: a mapping grown past it (mremap) is past its end, SIGBUS, as
 * Linux's shmem object of MAP_SHARED|MAP_ANONYMOUS memory is. */
static int shared_map_vma(const struct vmm_aspace *as, const struct vmm_vma *v)
{
    uint64_t len = v->end - v->start;
    if (mmap(vmm_phys_hva(as->pm, v->gpa), len, v->shared->host_prot,
             MAP_SHARED | MAP_FIXED, v->shared->fd,
             (off_t)v->shared_off) == MAP_FAILED)
        return -errno;
    return 0;
}

/* ---- staged code pages (vmm_as_stage_begin) ------------------------------ */

struct vmm_stage {
    unsigned depth;
    size_t n, cap;
    struct staged_page {
        gva_t gva;
        uint8_t *bytes;
    } *pages;
};

static void stage_free(struct vmm_stage *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        free(st->pages[i].bytes);
    free(st->pages);
    free(st);
}

static bool read_direct(const struct vmm_aspace *as, uint8_t *dst, gva_t gva,
                        size_t n);
static int stage_write(const struct vmm_aspace *as, const struct vmm_vma *v,
                       gva_t gva, const uint8_t *src, size_t n);

static struct vmm_shared *page_store_object(void);
static int unstore_page(struct vmm_aspace *as, struct vmm_vma *v);

/* The staged bytes of the page at gva, or NULL. */
static uint8_t *staged_bytes(const struct vmm_stage *st, gva_t gva)
{
    gva &= VMM_PAGE_MASK;
    for (size_t i = 0; st && i < st->n; i++) /* a few pages a session */
        if (st->pages[i].gva == gva)
            return st->pages[i].bytes;
    return NULL;
}


/* Whether v's backing in hvrun's view is still plain guest memory as
 * vmm_phys_alloc gave it: nothing mapped over it (a shared object, an
 * image, a file: direct), not a special mapping, writable where the view
 * follows the guest's protection (host_protect_backing), and under 2 MiB
 * (a larger extent may carry the huge-page advice, which only a fresh
 * mapping drops). */
static bool backing_is_plain(const struct vmm_aspace *as,
                             const struct vmm_vma *v)
{
    if (v->shared || v->image ||
        (v->flags & (VMM_VMA_DIRECT | VMM_VMA_SPECIAL)))
        return false;
    if (as->pm->view_follows_guest &&
        (v->prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE))
        return false;
    return v->end - v->start < VMM_HUGE_SIZE;
}

/* A backed VMA's pages back to the allocator, zeroed. */
static void vma_free_backing(struct vmm_aspace *as, const struct vmm_vma *v)
{
    uint64_t npages = (v->end - v->start) / VMM_PAGE_SIZE;
    if (backing_is_plain(as, v))
        vmm_phys_free_plain(as->pm, v->gpa, npages);
    else
        vmm_phys_free(as->pm, v->gpa, npages);
}

int vmm_as_init(struct vmm_aspace *as, struct vmm_physmem *pm)
{
    memset(as, 0, sizeof(*as));
    as->pm = pm;
    (void)vmm_max_map_count(); /* read while hvrun may still open it */
    if (pm->tables_private && !(as->pt_pages = vmm_pt_pages_new()))
        return -ENOMEM;
    return pt_alloc_table(as, &as->pml4_gpa);
}

void vmm_as_destroy(struct vmm_aspace *as)
{
    for (size_t i = 0; i < as->nr_vmas; i++) {
        struct vmm_vma *v = as->vmas[i];
        if (!(v->flags & VMM_VMA_LAZY))
            vma_free_backing(as, v);
    }
    vmm_as_release(as);
}

void vmm_as_release(struct vmm_aspace *as)
{
    for (size_t i = 0; i < as->nr_vmas; i++) {
        free(as->vmas[i]->name);
        shared_put(as->vmas[i]->shared);
        shared_put(as->vmas[i]->file);
        shared_put(as->vmas[i]->image);
        free(as->vmas[i]);
    }
    free(as->vma_buf);
    as->vmas = as->vma_buf = NULL;
    as->nr_vmas = as->cap_vmas = 0;
    as->free_hint.len = 0;
    vmm_pt_pages_free(as->pt_pages);
    as->pt_pages = NULL;
    stage_free(as->stage);
    as->stage = NULL;
}

/* Index of the first VMA with end > gva (binary search). */
static size_t vma_index_after(const struct vmm_aspace *as, gva_t gva)
{
    size_t lo = 0, hi = as->nr_vmas;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (as->vmas[mid]->end <= gva)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct vmm_vma *vmm_as_next_vma(const struct vmm_aspace *as, gva_t gva)
{
    size_t i = vma_index_after(as, gva);
    return i < as->nr_vmas ? as->vmas[i] : NULL;
}

struct vmm_vma *vmm_as_prev_vma(const struct vmm_aspace *as, gva_t gva)
{
    size_t i = vma_index_after(as, gva);
    return i > 0 ? as->vmas[i - 1] : NULL;
}

struct vmm_vma *vmm_as_find_vma(const struct vmm_aspace *as, gva_t gva)
{
    size_t i = vma_index_after(as, gva);
    if (i < as->nr_vmas && as->vmas[i]->start <= gva)
        return as->vmas[i];
    return NULL;
}

/* ---- change log and free-space hint -------------------------------------- */

static bool ranges_meet(gva_t alo, gva_t ahi, gva_t blo, gva_t bhi)
{
    return alo <= bhi && blo <= ahi;
}

/* Counts a change of the VMA list (generation) and logs where it was:
 * widening the newest entry when nobody has read it yet and the ranges
 * meet (mmap's unmap-then-insert is one range), else a new entry, the two
 * oldest made one when the log is full. An empty range changes nothing a
 * mirror shows (a split, flags only hvrun reads). */
static void vma_changed(struct vmm_aspace *as, gva_t lo, gva_t hi)
{
    uint64_t gen = ++as->generation;
    if (lo >= hi)
        return;
    if (as->nr_dirty > 0) {
        struct vmm_dirty_range *last = &as->dirty[as->nr_dirty - 1];
        if (last->gen > as->dirty_sealed &&
            ranges_meet(last->lo, last->hi, lo, hi)) {
            last->lo = lo < last->lo ? lo : last->lo;
            last->hi = hi > last->hi ? hi : last->hi;
            last->gen = gen;
            return;
        }
    }
    if (as->nr_dirty == VMM_DIRTY_LOG) {
        struct vmm_dirty_range *a = &as->dirty[0], *b = &as->dirty[1];
        b->lo = a->lo < b->lo ? a->lo : b->lo; /* b->gen is the newer */
        b->hi = a->hi > b->hi ? a->hi : b->hi;
        memmove(a, b, (VMM_DIRTY_LOG - 1) * sizeof(*a));
        as->nr_dirty--;
    }
    as->dirty[as->nr_dirty++] = (struct vmm_dirty_range){gen, lo, hi};
}

static int dirty_by_lo(const void *a, const void *b)
{
    const struct vmm_dirty_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

size_t vmm_as_changes_since(struct vmm_aspace *as, uint64_t gen,
                            struct vmm_dirty_range *out)
{
    size_t n = 0;
    for (size_t k = 0; k < as->nr_dirty; k++)
        if (as->dirty[k].gen > gen)
            out[n++] = as->dirty[k];
    as->dirty_sealed = as->generation;
    qsort(out, n, sizeof(*out), dirty_by_lo);
    size_t merged = 0;
    for (size_t k = 0; k < n; k++) {
        if (merged > 0 && ranges_meet(out[merged - 1].lo, out[merged - 1].hi,
                                      out[k].lo, out[k].hi)) {
            if (out[k].hi > out[merged - 1].hi)
                out[merged - 1].hi = out[k].hi;
            continue;
        }
        out[merged++] = out[k];
    }
    return merged;
}

/*
 * The free-space hint: for every length from free_hint.len up, a search
 * from free_hint.below (vmm_as_find_free) meets only gaps that do not fit
 * above free_hint.floor, the start of a VMA at or below `below`; it may
 * start at floor's VMA, and finds what the whole walk finds. Inserting a
 * VMA only shrinks gaps; a removal that can widen a gap above floor
 * raises floor to the VMA above what was removed (next: its index now).
 */
static void free_hint_removed(struct vmm_aspace *as, gva_t start, gva_t end,
                              size_t next)
{
    struct vmm_free_hint *h = &as->free_hint;
    if (!h->len || start >= h->below || end <= h->floor)
        return;
    if (next < as->nr_vmas && as->vmas[next]->start <= h->below)
        h->floor = as->vmas[next]->start;
    else
        h->len = 0;
}

/* ---- the VMA array -------------------------------------------------------- */

/* Makes room for one more VMA on the side of index i that is shorter to
 * move; false when out of memory. The entries are re-centred in a buffer
 * twice the size when that side is full. */
static bool vma_room(struct vmm_aspace *as, size_t i)
{
    size_t front = as->vma_buf ? (size_t)(as->vmas - as->vma_buf) : 0;
    size_t back = as->cap_vmas - front - as->nr_vmas;
    if (i < as->nr_vmas / 2 ? front > 0 : back > 0)
        return true;
    size_t cap = as->cap_vmas ? as->cap_vmas * 2 : 32;
    struct vmm_vma **buf = malloc(cap * sizeof(*buf));
    if (!buf)
        return false;
    struct vmm_vma **at = buf + (cap - as->nr_vmas) / 2;
    if (as->nr_vmas)
        memcpy(at, as->vmas, as->nr_vmas * sizeof(*at));
    free(as->vma_buf);
    as->vma_buf = buf;
    as->vmas = at;
    as->cap_vmas = cap;
    return true;
}

/* Inserts v at index i, moving the shorter side; no change logged. */
static int vma_insert_raw(struct vmm_aspace *as, size_t i,
                          const struct vmm_vma *v)
{
    struct vmm_vma *copy = malloc(sizeof(*copy));
    if (!copy || !vma_room(as, i)) {
        free(copy);
        return -ENOMEM;
    }
    *copy = *v;
    size_t front = (size_t)(as->vmas - as->vma_buf);
    if (i < as->nr_vmas / 2 && front > 0) {
        memmove(as->vmas - 1, as->vmas, i * sizeof(*as->vmas));
        as->vmas--;
    } else {
        memmove(as->vmas + i + 1, as->vmas + i,
                (as->nr_vmas - i) * sizeof(*as->vmas));
    }
    as->vmas[i] = copy;
    as->nr_vmas++;
    if (v->flags & VMM_VMA_ACCOUNT)
        as->account_bytes += v->end - v->start;
    return 0;
}

static int vma_insert_at(struct vmm_aspace *as, size_t i,
                         const struct vmm_vma *v)
{
    int rc = vma_insert_raw(as, i, v);
    if (rc == 0)
        vma_changed(as, v->start, v->end);
    return rc;
}

/* Removes VMA i, moving the shorter side; no change logged. */
static void vma_remove_raw(struct vmm_aspace *as, size_t i)
{
    struct vmm_vma *v = as->vmas[i];
    gva_t start = v->start, end = v->end;
    free(v->name);
    shared_put(v->shared);
    shared_put(v->file);
    shared_put(v->image);
    if (v->flags & VMM_VMA_ACCOUNT)
        as->account_bytes -= end - start;
    free(v);
    if (i < as->nr_vmas / 2) {
        memmove(as->vmas + 1, as->vmas, i * sizeof(*as->vmas));
        as->vmas++;
    } else {
        memmove(as->vmas + i, as->vmas + i + 1,
                (as->nr_vmas - i - 1) * sizeof(*as->vmas));
    }
    as->nr_vmas--;
    /* Index i now holds the VMA that followed; with the front moved, the
     * ones before i moved up one and i still names the follower. */
    free_hint_removed(as, start, end, i);
}

static void vma_remove_at(struct vmm_aspace *as, size_t i)
{
    gva_t start = as->vmas[i]->start, end = as->vmas[i]->end;
    vma_remove_raw(as, i);
    vma_changed(as, start, end);
}

/* Splits the VMA that strictly contains gva into [start,gva) [gva,end). */
static int vma_split_at(struct vmm_aspace *as, gva_t gva)
{
    size_t i = vma_index_after(as, gva);
    if (i >= as->nr_vmas || as->vmas[i]->start >= gva)
        return 0;
    struct vmm_vma tail = *as->vmas[i];
    uint64_t delta = gva - tail.start;
    tail.start = gva;
    tail.gpa += delta;
    tail.file_off += delta;
    tail.shared_off += delta;
    tail.image_off += delta;
    if (tail.name && !(tail.name = strdup(tail.name)))
        return -ENOMEM;
    shared_get(tail.shared);
    shared_get(tail.file);
    shared_get(tail.image);
    /* The two halves map what the one did: nothing for a mirror. */
    int rc = vma_insert_raw(as, i + 1, &tail);
    if (rc < 0) {
        free(tail.name);
        shared_put(tail.shared);
        shared_put(tail.file);
        shared_put(tail.image);
        return rc;
    }
    as->vmas[i]->end = gva;
    vma_changed(as, 0, 0);
    if (tail.flags & VMM_VMA_ACCOUNT)
        as->account_bytes -= tail.end - tail.start; /* counted twice */
    return 0;
}

/* Unmaps [gva, gva+len). moved: its backing's host pages were moved
 * away (mremap), which leaves holes in hvrun's view that only a fresh
 * mapping fills again. */
static int unmap_range(struct vmm_aspace *as, gva_t gva, uint64_t len,
                       bool moved)
{
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    int rc = vma_split_at(as, gva);
    if (rc == 0)
        rc = vma_split_at(as, end);
    if (rc < 0)
        return rc;
    size_t i = vma_index_after(as, gva);
    while (i < as->nr_vmas && as->vmas[i]->start < end) {
        struct vmm_vma *v = as->vmas[i];
        if (!(v->flags & VMM_VMA_LAZY)) {
            pt_clear(as, v->start, v->end);
            if (moved)
                vmm_phys_free(as->pm, v->gpa,
                              (v->end - v->start) / VMM_PAGE_SIZE);
            else
                vma_free_backing(as, v);
        }
        vma_remove_at(as, i);
    }
    return 0;
}

int vmm_as_unmap(struct vmm_aspace *as, gva_t gva, uint64_t len)
{
    return unmap_range(as, gva, len, false);
}

int vmm_as_map(struct vmm_aspace *as, gva_t gva, uint64_t len, int prot,
               int flags, const char *name)
{
    len = VMM_PAGE_ALIGN_UP(len);
    if (len == 0 || gva & ~VMM_PAGE_MASK || gva + len < gva)
        return -EINVAL;
    if (gva + len > VMM_USER_END || vmm_in_stub_range(gva, len))
        return -ENOMEM;
    int rc = vmm_as_unmap(as, gva, len);
    if (rc < 0)
        return rc;
    if (!(flags & (VMM_VMA_SHARED | VMM_VMA_NORESERVE | VMM_VMA_SPECIAL)) &&
        (prot & PROT_WRITE))
        flags |= VMM_VMA_ACCOUNT;
    if (as->lock_future)
        flags |= VMM_VMA_LOCKED;
    if (flags & (VMM_VMA_SHARED | VMM_VMA_SPECIAL))
        flags &= ~VMM_VMA_LAZY; /* only private anonymous memory waits */
    struct vmm_vma v = {.start = gva, .end = gva + len, .prot = prot,
                        .flags = flags};
    if (!(flags & VMM_VMA_LAZY) &&
        (rc = vmm_phys_alloc_for(as->pm, len / VMM_PAGE_SIZE, gva, &v.gpa)) <
            0)
        return rc;
    if (name && !(v.name = strdup(name))) {
        if (!(flags & VMM_VMA_LAZY))
            vmm_phys_free(as->pm, v.gpa, len / VMM_PAGE_SIZE);
        return -ENOMEM;
    }
    rc = vma_insert_at(as, vma_index_after(as, gva), &v);
    if (rc == 0)
        rc = pt_apply_vma(as, &v);
    if (rc < 0) {
        vmm_as_unmap(as, gva, len);
        return rc;
    }
    return 0;
}

/* True when [gva, end) is covered by VMAs without holes. */
static bool range_fully_mapped(const struct vmm_aspace *as, gva_t gva,
                               gva_t end)
{
    if (end < gva) /* a range that wraps is never mapped */
        return false;
    size_t i = vma_index_after(as, gva);
    gva_t at = gva;
    for (; i < as->nr_vmas && at < end; i++) {
        if (as->vmas[i]->start > at)
            return false;
        at = as->vmas[i]->end;
    }
    return at >= end;
}

/*
 * The host protection of a private VMA's backing follows the guest's write
 * permission. A host PTE change plus a CR3 reload is not enough on kvm_pvm:
 * its shadow MMU keeps a stale writable (or present) entry for a page the
 * guest already touched. A host mprotect of the backing fires the MMU
 * notifier, which zaps every KVM entry mapping those pages (shadow or
 * EPT). Each host mprotect costs about 60 us here, so the backing stays
 * read-only while the guest may not write (the copy path writes only
 * where the guest may: it checks PROT_WRITE; hvrun's forced writes make
 * such a page writable for the copy: forced_write) and turns writable again
 * when the guest regains the permission. Shared mappings keep the host
 * protection of their object and go there and back; so does a private
 * backing that loses a permission while its host protection stays
 * read-only (read-only to PROT_NONE, or losing exec): an mprotect to the
 * same protection changes no host PTE and fires no notifier, and the
 * shadow MMU kept the page readable (tests/guest/vma_churn). Unmapping
 * needs none of this: vmm_phys_free replaces the backing, which fires the
 * notifier. old_prot: the VMA's guest protection before the change.
 */
static void host_protect_backing(const struct vmm_aspace *as,
                                 const struct vmm_vma *v, bool zap,
                                 int old_prot)
{
    if ((v->flags & VMM_VMA_LAZY) || !as->pm->view_follows_guest)
        return; /* no backing, no PTE, nothing cached */
    uint8_t *hva = vmm_phys_hva(as->pm, v->gpa);
    size_t len = v->end - v->start;
    if (v->shared || (v->flags & VMM_VMA_SPECIAL)) {
        /* A special mapping stays writable for hvrun, which fills it. */
        if (zap) {
            (void)mprotect(hva, len, PROT_NONE);
            (void)mprotect(hva, len, v->shared ? v->shared->host_prot
                                               : PROT_READ | PROT_WRITE);
        }
        return;
    }
    if (zap && !((old_prot | v->prot) & PROT_WRITE))
        (void)mprotect(hva, len, PROT_NONE);
    (void)mprotect(hva, len, v->prot & PROT_WRITE ? PROT_READ | PROT_WRITE
                                                  : PROT_READ);
}

/* mprotect_fixup: a private VMA that becomes writable is charged. */
static bool charged_by_protect(const struct vmm_vma *v, int prot)
{
    return (prot & PROT_WRITE) &&
           !(v->flags & (VMM_VMA_ACCOUNT | VMM_VMA_SHARED |
                         VMM_VMA_NORESERVE | VMM_VMA_SPECIAL));
}

/* Bytes of the VMAs overlapping [gva, end) that match (with the overlap
 * only). */
static uint64_t overlap_bytes(const struct vmm_aspace *as, gva_t gva,
                              gva_t end, int prot,
                              bool (*match)(const struct vmm_vma *, int))
{
    uint64_t n = 0;
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        const struct vmm_vma *v = as->vmas[i];
        if (!match(v, prot))
            continue;
        gva_t lo = v->start > gva ? v->start : gva;
        gva_t hi = v->end < end ? v->end : end;
        n += hi - lo;
    }
    return n;
}

static bool is_charged(const struct vmm_vma *v, int prot)
{
    (void)prot;
    return v->flags & VMM_VMA_ACCOUNT;
}

uint64_t vmm_as_charged_in(const struct vmm_aspace *as, gva_t gva,
                           uint64_t len)
{
    gva_t end;
    if (__builtin_add_overflow(gva, VMM_PAGE_ALIGN_UP(len), &end))
        end = UINT64_MAX;
    return overlap_bytes(as, gva, end, 0, is_charged);
}

static bool is_locked(const struct vmm_vma *v, int prot)
{
    (void)prot;
    return v->flags & VMM_VMA_LOCKED;
}

uint64_t vmm_as_locked_in(const struct vmm_aspace *as, gva_t gva,
                          uint64_t len)
{
    gva_t end;
    if (__builtin_add_overflow(gva, VMM_PAGE_ALIGN_UP(len), &end) ||
        VMM_PAGE_ALIGN_UP(len) < len)
        end = UINT64_MAX;
    return overlap_bytes(as, gva, end, 0, is_locked);
}

uint64_t vmm_as_protect_charge(const struct vmm_aspace *as, gva_t gva,
                               uint64_t len, int prot)
{
    gva_t end;
    if (__builtin_add_overflow(gva, VMM_PAGE_ALIGN_UP(len), &end))
        end = UINT64_MAX;
    return overlap_bytes(as, gva, end, prot, charged_by_protect);
}

/* A shared VMA over a host mapping that is read-only (its object's fd is
 * not writable, or sealed) never gets a writable PTE: the guest's write
 * would reach a host page KVM cannot write, and KVM_RUN fails (EFAULT)
 * instead of the guest getting its SIGSEGV. mm.c refuses this already as
 * Linux's VM_MAYWRITE rule; this keeps it true for every caller. */
static bool write_over_read_only_host(const struct vmm_aspace *as, gva_t gva,
                                      gva_t end, int prot)
{
    if (!(prot & PROT_WRITE))
        return false;
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        const struct vmm_vma *v = as->vmas[i];
        if (v->shared && !(v->shared->host_prot & PROT_WRITE))
            return true;
    }
    return false;
}

int vmm_as_protect(struct vmm_aspace *as, gva_t gva, uint64_t len, int prot)
{
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    if (!range_fully_mapped(as, gva, end))
        return -ENOMEM;
    if (write_over_read_only_host(as, gva, end, prot))
        return -EACCES;
    /* The file's pages are not written: a copy is, from now on. */
    int rc = prot & PROT_WRITE ? vmm_as_materialise(as, gva, end - gva) : 0;
    if (rc == 0)
        rc = vma_split_at(as, gva);
    if (rc == 0)
        rc = vma_split_at(as, end);
    if (rc < 0)
        return rc;
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        struct vmm_vma *v = as->vmas[i];
        /* Losing a permission must reach the vCPU's cached translations;
         * regaining write needs a writable host backing. */
        bool loses = (v->prot & ~prot) != 0;
        bool host_change = loses || ((prot & ~v->prot) & PROT_WRITE);
        int old_prot = v->prot;
        if (charged_by_protect(v, prot)) {
            v->flags |= VMM_VMA_ACCOUNT;
            as->account_bytes += v->end - v->start;
        }
        v->prot = prot;
        vma_changed(as, v->start, v->end);
        rc = pt_apply_vma(as, v);
        if (rc < 0)
            return rc;
        if (host_change)
            host_protect_backing(as, v, loses, old_prot);
        if (loses)
            as->tlb_flushes_asked++;
    }
    return 0;
}

bool vmm_as_range_mapped(const struct vmm_aspace *as, gva_t gva,
                         uint64_t len)
{
    gva_t end;
    if (__builtin_add_overflow(gva, len, &end))
        return false;
    return range_fully_mapped(as, gva, end);
}

bool vmm_as_range_has_flags(const struct vmm_aspace *as, gva_t gva,
                            uint64_t len, int flags)
{
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas &&
         (as->vmas[i]->start <= gva || as->vmas[i]->start - gva < len);
         i++)
        if ((as->vmas[i]->flags & flags) == flags)
            return true;
    return false;
}

bool vmm_as_range_free(const struct vmm_aspace *as, gva_t gva, uint64_t len)
{
    if (gva < VMM_USER_MIN || gva + len > VMM_USER_END || gva + len < gva ||
        vmm_in_stub_range(gva, len))
        return false;
    size_t i = vma_index_after(as, gva);
    return i >= as->nr_vmas || as->vmas[i]->start >= gva + len;
}

/* The walk of vmm_as_find_free from VMA i down, top (at most below) the
 * highest address a fit may end at; *at_vma is the index of the VMA just
 * above the gap found (nr_vmas: none). */
static int find_free_walk(const struct vmm_aspace *as, uint64_t len,
                          size_t i, gva_t top, gva_t *out, size_t *at_vma)
{
    /* Walk gaps from the top down, like Linux's top-down mmap layout. */
    for (;;) {
        gva_t gap_start = VMM_USER_MIN;
        if (i > 0)
            gap_start = as->vmas[i - 1]->end;
        if (i < as->nr_vmas && as->vmas[i]->start < top)
            top = as->vmas[i]->start;
        if (top >= gap_start + len && vmm_in_stub_range(top - len, len))
            top = VMM_STUB_RANGE_START > gap_start ? VMM_STUB_RANGE_START
                                                   : gap_start;
        if (top >= gap_start + len && top - len >= VMM_USER_MIN) {
            *out = top - len;
            *at_vma = i;
            return 0;
        }
        if (i == 0)
            return -ENOMEM;
        i--;
        top = as->vmas[i]->start;
    }
}

/*
 * The highest fit below `below`, which the whole walk from `below` finds;
 * the free-space hint (free_hint_removed) lets a search for at least the
 * hint's length start at its floor, so mapping after mapping at the low
 * end of the mmap area costs a binary search, not a walk of every VMA.
 */
int vmm_as_find_free(struct vmm_aspace *as, uint64_t len, gva_t below,
                     gva_t *out)
{
    len = VMM_PAGE_ALIGN_UP(len);
    if (len == 0 || len > below)
        return -ENOMEM;
    struct vmm_free_hint *h = &as->free_hint;
    gva_t top = below;
    if (h->len && h->below == below && len >= h->len)
        top = h->floor;
    size_t at_vma;
    int rc = find_free_walk(as, len, vma_index_after(as, top), top, out,
                            &at_vma);
    if (rc < 0)
        return rc;
    /* Every gap above the found one fails for len, and (when the hint
     * was used) the ones above its floor for a length not above len. */
    if (at_vma < as->nr_vmas && as->vmas[at_vma]->start <= below)
        *h = (struct vmm_free_hint){.below = below,
                                    .floor = as->vmas[at_vma]->start,
                                    .len = len};
    else
        h->len = 0;
    return 0;
}

void vmm_as_set_file(struct vmm_aspace *as, gva_t gva, uint64_t len,
                     uint64_t off, uint64_t dev, uint64_t ino,
                     const char *name)
{
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        struct vmm_vma *v = as->vmas[i];
        v->flags |= VMM_VMA_FILE;
        v->file_off = off + (v->start - gva);
        v->dev = dev;
        v->ino = ino;
        free(v->name);
        v->name = name ? strdup(name) : NULL;
    }
}

int vmm_as_set_flags(struct vmm_aspace *as, gva_t gva, uint64_t len,
                     int set, int clear)
{
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    int rc = vma_split_at(as, gva);
    if (rc == 0)
        rc = vma_split_at(as, end);
    if (rc < 0)
        return rc;
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        struct vmm_vma *v = as->vmas[i];
        v->flags = (v->flags | set) & ~clear;
        if ((set | clear) & VMM_VMA_LAZY) /* the stub maps lazy ones apart */
            vma_changed(as, v->start, v->end);
        else
            vma_changed(as, 0, 0);
    }
    return 0;
}

int vmm_as_keep_file(struct vmm_aspace *as, gva_t gva, uint64_t len, int fd)
{
    struct vmm_shared *f = file_object(fd);
    if (!f)
        return -ENOMEM;
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        struct vmm_vma *v = as->vmas[i];
        shared_put(v->file);
        v->file = shared_get(f);
    }
    shared_put(f);
    return 0;
}

int vmm_vma_file_fd(const struct vmm_vma *v)
{
    if (v->shared)
        return v->shared->fd;
    return v->file ? v->file->fd : -1;
}

/* Reads [off, off+len) of fd into host memory at dst, stopping at the
 * file's end (the rest stays as it is: zero). */
static int read_file_range(int fd, uint8_t *dst, uint64_t len, uint64_t off)
{
    while (len > 0) {
        ssize_t got = pread(fd, dst, len, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            break;
        dst += got;
        off += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return 0;
}

int vmm_as_refill(struct vmm_aspace *as, gva_t gva, uint64_t len)
{
    struct vmm_vma *v = vmm_as_find_vma(as, gva);
    len = VMM_PAGE_ALIGN_UP(len);
    if (!v || v->shared || gva & ~VMM_PAGE_MASK || len > v->end - gva)
        return -EINVAL;
    if ((v->flags & VMM_VMA_DIRECT) && v->file && v->image &&
        v->image == page_store_object()) {
        /* rewritten pages: the file's again, only those asked */
        int rc = vma_split_at(as, gva);
        if (rc == 0)
            rc = vma_split_at(as, gva + len);
        return rc < 0 ? rc : unstore_page(as, vmm_as_find_vma(as, gva));
    }
    if (v->flags & (VMM_VMA_LAZY | VMM_VMA_DIRECT))
        return 0; /* never backed (zeros), or its file's pages: as mapped */
    uint8_t *hva = vmm_phys_hva(as->pm, v->gpa + (gva - v->start));
    int rc = 0;
    bool read_only = !(v->prot & PROT_WRITE) &&
                     !(v->flags & VMM_VMA_SPECIAL) &&
                     as->pm->view_follows_guest;
    if (read_only && mprotect(hva, len, PROT_READ | PROT_WRITE) < 0)
        return -errno;
    vmm_phys_discard(as->pm, hva, len);
    if (v->file)
        rc = read_file_range(v->file->fd, hva, len,
                             v->file_off + (gva - v->start));
    if (read_only) {
        /* The pages' new contents must reach a vCPU that cached the old
         * ones read-only: the host mprotect fires KVM's notifier. */
        (void)mprotect(hva, len, PROT_READ);
        as->tlb_flushes_asked++;
    }
    return rc;
}

/* Pages [lo, hi) of v lost their PTEs: a host mprotect there and back
 * fires KVM's notifier, which drops what a shadow MMU (kvm_pvm) kept of
 * them (the cleared PTE and a CR3 reload are not enough there). */
static void zap_backing(const struct vmm_aspace *as, const struct vmm_vma *v,
                        gva_t lo, gva_t hi)
{
    if ((v->flags & VMM_VMA_LAZY) || !as->pm->view_follows_guest)
        return;
    uint8_t *hva = vmm_phys_hva(as->pm, v->gpa + (lo - v->start));
    int back = v->shared ? v->shared->host_prot
               : v->prot & PROT_WRITE ? PROT_READ | PROT_WRITE
                                      : PROT_READ;
    (void)mprotect(hva, hi - lo, PROT_NONE);
    (void)mprotect(hva, hi - lo, back);
}

/* The fd and offset of v's start in its file, for a VMA whose size the
 * file bounds: private with a file, or shared (over a file, or the memfd
 * of shared anonymous memory). -1 for anything else. */
static int vma_bounding_file(const struct vmm_vma *v, uint64_t *off)
{
    if (v->shared) {
        *off = v->shared_off;
        return v->shared->fd;
    }
    if ((v->flags & VMM_VMA_FILE) && v->file) {
        *off = v->file_off;
        return v->file->fd;
    }
    return -1;
}

/* Where v's file ends in v (0: past v's end), from the file's size now. */
static gva_t eof_of(const struct vmm_vma *v, int fd, uint64_t off)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    uint64_t size_end = VMM_PAGE_ALIGN_UP((uint64_t)st.st_size);
    if (size_end <= off)
        return v->start;
    if (size_end - off >= v->end - v->start)
        return 0;
    return v->start + (size_end - off);
}

/* Gives v the eof of its file now: the pages between the old and the new
 * end gain or lose their PTEs (a private VMA's gained pages, never
 * written by the guest, are read from the file). */
static int vma_update_eof(struct vmm_aspace *as, struct vmm_vma *v)
{
    uint64_t off;
    int fd = vma_bounding_file(v, &off);
    if (fd < 0)
        return 0;
    gva_t before = vmm_vma_valid_end(v);
    gva_t eof = eof_of(v, fd, off);
    if (eof == v->eof_at)
        return 0;
    v->eof_at = eof;
    gva_t after = vmm_vma_valid_end(v);
    vma_changed(as, v->start, v->end);
    if (after > before && !v->shared && !(v->flags & VMM_VMA_DIRECT)) {
        int rc = vmm_as_refill(as, before, after - before);
        if (rc < 0)
            return rc;
    }
    int rc = pt_apply_vma(as, v);
    if (after < before)
        zap_backing(as, v, after, before);
    return rc;
}

int vmm_as_update_eof(struct vmm_aspace *as, gva_t gva, uint64_t len)
{
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        int rc = vma_update_eof(as, as->vmas[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void vmm_as_file_resized(struct vmm_aspace *as, uint64_t dev, uint64_t ino)
{
    for (size_t i = 0; i < as->nr_vmas; i++) {
        struct vmm_vma *v = as->vmas[i];
        uint64_t off;
        if (vma_bounding_file(v, &off) < 0)
            continue;
        const struct vmm_shared *o = v->shared ? v->shared : v->file;
        if (o->dev == dev && o->ino == ino)
            (void)vma_update_eof(as, v);
    }
}

int vmm_as_recheck_shared_eof(struct vmm_aspace *as)
{
    int moved = 0;
    for (size_t i = 0; i < as->nr_vmas; i++) {
        struct vmm_vma *v = as->vmas[i];
        if (!v->shared || v->shared->anon)
            continue;
        gva_t before = vmm_vma_valid_end(v);
        if (vma_update_eof(as, v) == 0 && vmm_vma_valid_end(v) < before)
            moved++;
    }
    if (moved)
        as->tlb_flushes_asked++;
    return moved;
}

/* ---- direct file pages (VMM_VMA_DIRECT) ----------------------------------- */

/*
 * A process maps its program and each library privately and writes
 * little of them: ld.so's segments and hvrun's loader's read-only ones
 * were copied into guest memory at every exec (1.9 MB of libc for a
 * `sh -c true`), and those pages allocated and freed again with the
 * process. A direct VMA maps its file instead, as Linux's page cache does
 * for pages no one wrote: shared by every process of the run (and with
 * the host's page cache), copied only where something is written.
 */

/* Pages the rewriter writes become private by blocks, so that a
 * function's rewritten sites do not split its VMA at every page (its
 * other pages stop showing later writes to the file: code is not
 * rewritten while it runs). Other forced writes copy only their pages,
 * as Linux's copy-on-write. */
#define DIRECT_COPY_BLOCK (16 * VMM_PAGE_SIZE)

static bool direct_eligible(const struct vmm_vma *v)
{
    return v->file && !v->shared && (v->flags & VMM_VMA_FILE) &&
           !(v->prot & PROT_WRITE) &&
           !(v->flags & (VMM_VMA_LAZY | VMM_VMA_SPECIAL | VMM_VMA_SECRET |
                         VMM_VMA_SHARED | VMM_VMA_DIRECT));
}

/* v's backing is its file from file_off (or its image from image_off),
 * read-only (hvrun never writes there; a stub maps the file itself:
 * ptrace.c). Private: a shared mapping of a file hvrun holds open for
 * writing (a guest's memfd) counts as a writable one, and the guest's
 * F_SEAL_WRITE then fails with EBUSY where Linux lets a private mapping
 * be (LTP memfd_create01); a private one that is never written shows
 * the file's pages all the same. */
static struct vmm_shared *page_store_object(void);

/* The address spaces an image is mapped into before it gets its shared
 * copy: a run of one or two processes (a program, `sh -c prog`) maps most
 * images into one or two, and would pay the copy without using it. */
#define IMAGE_VIEW_AFTER 2

/* Copies all of src's bytes into a new memfd: its fd, or -errno. */
static int memfd_copy_of(int src)
{
    struct stat st;
    if (fstat(src, &st) < 0)
        return -errno;
    int fd = memfd_create("hvrun-image-view", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = ftruncate(fd, st.st_size) < 0 ? -errno : 0;
    for (off_t at = 0; rc == 0 && at < st.st_size;) {
        ssize_t n = sendfile(fd, src, &at, (size_t)(st.st_size - at));
        if (n < 0 && errno != EINTR)
            rc = -errno;
        else if (n == 0)
            rc = -EIO; /* an image does not shrink: sealed or the cache's */
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

/*
 * The fd direct mappings of img share under kvm, or -1 for img's own.
 * kvm_pvm's shadow MMU fills a faulting entry's neighbours only from host
 * pages it can take for writing: not from img's own pages (a sealed
 * memfd, a read-only file of the cache), so every page of a text a
 * process runs used to fault by itself, ~20 us each. An image mapped
 * into more than IMAGE_VIEW_AFTER address spaces (a run of many
 * processes) is copied once into a memfd of hvrun's, which its direct
 * mappings then share, writable in hvrun's view only: a `sh -c true`'s
 * shadow faults 256 -> 206 (docs/PERFORMANCE.md). Its bytes are img's,
 * never written again, as the page store's (direct_map_backing's
 * comment; a guest mprotect that adds PROT_WRITE materialises first).
 */
static int image_view_fd(struct vmm_shared *img, const struct vmm_aspace *as)
{
    if (!img->view_made && img->view_last_as != as) {
        img->view_last_as = as;
        img->view_maps++;
    }
    if (!img->view_made && img->view_maps > IMAGE_VIEW_AFTER) {
        img->view_made = true;
        img->view_fd = memfd_copy_of(img->fd);
    }
    return img->view_made ? img->view_fd : -1;
}

/*
 * A direct VMA's host pages: its file's or image's, read-only and private
 * (a write would make hvrun's own copy, never reach the file). The run's
 * page store, and an image's shared copy (image_view_fd), are the
 * exceptions where no vCPU walks a stub's tables (kvm: pm->memfd < 0):
 * their memfds are mapped shared and writable, because
 * kvm_pvm's shadow MMU fills a faulting entry's neighbours only over host
 * pages it can take for writing, and the store holds the texts every
 * process runs (a library's, once joined): each fault there then fills up
 * to eight entries. The guest still cannot write them (its PTEs say
 * read-only, and the shadow entry is no more than the guest's), and
 * hvrun never writes through a direct VMA's view: a poke stages or
 * materialises first (vmm_as_poke), the copy path writes only where the
 * guest may.
 */
static int direct_map_backing(const struct vmm_aspace *as,
                              const struct vmm_vma *v)
{
    /* (before VMM_VMA_DIRECT is set: vmm_vma_direct_source asks it) */
    const struct vmm_shared *src = v->image ? v->image : v->file;
    uint64_t off = v->image ? v->image_off : v->file_off;
    int fd = src->fd;
    bool prefetched = false;
    if (as->pm->memfd < 0 && src == page_store_object())
        prefetched = true;
    else if (as->pm->memfd < 0 && v->image &&
             image_view_fd(v->image, as) >= 0) {
        prefetched = true;
        fd = v->image->view_fd;
    }
    if (mmap(vmm_phys_hva(as->pm, v->gpa), v->end - v->start,
             prefetched ? PROT_READ | PROT_WRITE : PROT_READ,
             (prefetched ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED,
             fd, (off_t)off) == MAP_FAILED)
        return -errno;
    return 0;
}

/* Gives v (not direct, or no longer) an ordinary backing holding its
 * file's bytes: guest memory at its gpa, read from the file (never
 * through a host mapping of it, which a file shrunk meanwhile would turn
 * into hvrun's SIGBUS), zeros past the file's end. */
static int direct_copy_back(struct vmm_aspace *as, struct vmm_vma *v)
{
    uint64_t src_off = v->file_off;
    const struct vmm_shared *src = v->image ? v->image : v->file;
    if (v->image)
        src_off = v->image_off;
    uint8_t *hva = vmm_phys_hva(as->pm, v->gpa);
    uint64_t bytes = v->end - v->start;
    gva_t valid = vmm_vma_valid_end(v);
    uint64_t in_file = valid > v->start ? valid - v->start : 0;
    /* Into the memfd through a buffer: written through hvrun's view, the
     * pages would get host PTEs there, and every PTE hvrun's view holds
     * costs a TLB shootdown of hvrun's threads when the view goes. */
    uint8_t *buf = in_file && as->pm->memfd >= 0 ? malloc(in_file) : NULL;
    int rc = 0;
    if (buf && (rc = read_file_range(src->fd, buf, in_file, src_off)) == 0) {
        for (uint64_t done = 0; done < in_file && rc == 0;) {
            ssize_t n = pwrite(as->pm->memfd, buf + done, in_file - done,
                               (off_t)(v->gpa + done));
            if (n < 0 && errno != EINTR)
                rc = -errno;
            else if (n > 0)
                done += (uint64_t)n;
        }
    }
    free(buf);
    if (rc < 0)
        return rc;
    void *at = as->pm->memfd >= 0
                   ? mmap(hva, bytes, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_NORESERVE | MAP_FIXED,
                          as->pm->memfd, (off_t)v->gpa)
                   : mmap(hva, bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                              MAP_FIXED,
                          -1, 0);
    if (at == MAP_FAILED)
        return -errno;
    if (in_file && !buf)
        rc = read_file_range(src->fd, hva, in_file, src_off);
    /* As host_protect_backing leaves it: read-only where the guest may
     * not write, but a special mapping's stays writable for hvrun (a
     * rewritten trampoline page hvrun patches again, say). */
    if (as->pm->view_follows_guest && !(v->prot & PROT_WRITE) &&
        !(v->flags & VMM_VMA_SPECIAL))
        (void)mprotect(hva, bytes, PROT_READ);
    return rc;
}

bool vmm_as_range_direct(const struct vmm_aspace *as, gva_t gva,
                         uint64_t len)
{
    gva_t end;
    if (__builtin_add_overflow(gva, len, &end))
        return false;
    for (gva_t at = gva; at < end;) {
        const struct vmm_vma *v = vmm_as_find_vma(as, at);
        if (!v || !(v->flags & VMM_VMA_DIRECT) || v->image ||
            vmm_vma_valid_end(v) < (v->end < end ? v->end : end))
            return false;
        at = v->end;
    }
    return true;
}

int vmm_as_map_direct(struct vmm_aspace *as, gva_t gva, uint64_t len)
{
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end; i++) {
        struct vmm_vma *v = as->vmas[i];
        if (!direct_eligible(v) || v->start < gva || v->end > end)
            continue;
        /* The pages a fresh mapping may have had in guest memory go (the
         * hole punched through the memfd: through the host mapping, once
         * it is the file's, MADV_REMOVE would punch the file). */
        if (as->pm->memfd >= 0)
            (void)fallocate(as->pm->memfd,
                            FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                            (off_t)v->gpa, (off_t)(v->end - v->start));
        int rc = direct_map_backing(as, v);
        if (rc < 0) {
            (void)direct_copy_back(as, v);
            return rc;
        }
        v->flags |= VMM_VMA_DIRECT;
        vma_changed(as, v->start, v->end);
    }
    return 0;
}

int vmm_as_rebind_direct(struct vmm_aspace *as)
{
    for (size_t i = 0; i < as->nr_vmas; i++) {
        const struct vmm_vma *v = as->vmas[i];
        int rc = v->flags & VMM_VMA_DIRECT ? direct_map_backing(as, v) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

struct vmm_shared *vmm_image_new(int fd)
{
    struct vmm_shared *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if ((s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
        free(s);
        return NULL;
    }
    s->host_prot = PROT_READ;
    s->refs = 1;
    s->id = new_object_id();
    return s;
}

void vmm_image_put(struct vmm_shared *img)
{
    shared_put(img);
}

/* v, made to end at end (over its followers' pages), mapped from the
 * image img (a cached image, the page store) at off; on failure v as it
 * was, its own backing mapped again. */
static int map_from_image(struct vmm_aspace *as, struct vmm_vma *v, gva_t end,
                          struct vmm_shared *img, uint64_t off)
{
    struct vmm_shared *was = v->image;
    uint64_t was_off = v->image_off;
    gva_t was_end = v->end;
    v->end = end;
    v->image = shared_get(img);
    v->image_off = off;
    int rc = direct_map_backing(as, v);
    if (rc < 0) {
        shared_put(v->image);
        v->image = was;
        v->image_off = was_off;
        v->end = was_end;
        (void)direct_map_backing(as, v);
        return rc;
    }
    shared_put(was);
    return 0;
}

int vmm_as_direct_image(struct vmm_aspace *as, gva_t gva, uint64_t len,
                        struct vmm_shared *img, uint64_t off)
{
    struct vmm_vma *v = vmm_as_find_vma(as, gva);
    if (!v || v->start != gva || v->end != gva + VMM_PAGE_ALIGN_UP(len) ||
        !(v->flags & VMM_VMA_DIRECT) || v->image)
        return -EINVAL;
    int rc = map_from_image(as, v, v->end, img, off);
    if (rc < 0)
        return rc;
    vma_changed(as, v->start, v->end);
    as->tlb_flushes_asked++; /* other host pages behind the same gpa */
    return 0;
}

int vmm_as_map_image(struct vmm_aspace *as, gva_t gva, uint64_t len,
                     int prot, int flags, const char *name,
                     struct vmm_shared *img, uint64_t off)
{
    len = VMM_PAGE_ALIGN_UP(len);
    int rc = vmm_as_map(as, gva, len, prot, flags & ~VMM_VMA_LAZY, name);
    if (rc < 0)
        return rc;
    struct vmm_vma *v = vmm_as_find_vma(as, gva);
    if (as->pm->memfd >= 0) /* the fresh backing's pages are not used */
        (void)fallocate(as->pm->memfd,
                        FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        (off_t)v->gpa, (off_t)len);
    v->image = shared_get(img);
    v->image_off = off;
    v->flags |= VMM_VMA_DIRECT;
    if ((rc = direct_map_backing(as, v)) < 0) {
        (void)vmm_as_unmap(as, gva, len);
        return rc;
    }
    vma_changed(as, v->start, v->end);
    return 0;
}

/* [lo, hi) of a direct VMA, split off, made private. */
static int materialise_part(struct vmm_aspace *as, gva_t lo, gva_t hi)
{
    int rc = vma_split_at(as, lo);
    if (rc == 0)
        rc = vma_split_at(as, hi);
    if (rc < 0)
        return rc;
    struct vmm_vma *v = vmm_as_find_vma(as, lo);
    if ((rc = direct_copy_back(as, v)) < 0)
        return rc;
    v->flags &= ~VMM_VMA_DIRECT;
    shared_put(v->image);
    v->image = NULL;
    vma_changed(as, v->start, v->end);
    as->tlb_flushes_asked++; /* other host pages behind the same gpa */
    return 0;
}

int vmm_as_materialise(struct vmm_aspace *as, gva_t gva, uint64_t len)
{
    gva_t end;
    if (__builtin_add_overflow(gva, len, &end) || end > VMM_USER_END)
        end = VMM_USER_END;
    end = VMM_PAGE_ALIGN_UP(end);
    gva &= VMM_PAGE_MASK;
    for (gva_t at = gva; at < end;) {
        const struct vmm_vma *v = vmm_as_next_vma(as, at);
        if (!v || v->start >= end)
            break;
        gva_t lo = v->start > at ? v->start : at;
        gva_t hi = v->end < end ? v->end : end;
        if (v->flags & VMM_VMA_DIRECT) {
            int rc = materialise_part(as, lo, hi);
            if (rc < 0)
                return rc;
        }
        at = hi;
    }
    return 0;
}

/* The block-aligned part of v around [gva, gva+len) made private, for a
 * write of hvrun's there (block: a power of two, pages). */
static int materialise_around(struct vmm_aspace *as, const struct vmm_vma *v,
                              gva_t gva, size_t len, uint64_t block)
{
    gva_t lo = gva & ~(gva_t)(block - 1);
    gva_t last = gva + (len ? len : 1) - 1;
    gva_t hi = (last | (block - 1)) + 1;
    if (lo < v->start)
        lo = v->start;
    if (hi > v->end || hi < lo)
        hi = v->end;
    return vmm_as_materialise(as, lo, hi - lo);
}

/* ---- Linux's view of the list ---------------------------------------------- */

/* Flags of hvrun's own bookkeeping, which Linux's vm_flags do not have. */
#define VMA_FLAGS_INTERNAL                                                     \
    (VMM_VMA_LAZY | VMM_VMA_FROM_LAZY | VMM_VMA_DIRECT)

static bool same_name(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* is_mergeable_vma and the pgoff rule of vma_merge: the same flags and
 * protection, and the same object continued at the next offset (private
 * anonymous memory: no object). A special mapping never joins. */
bool vmm_vma_linux_joins(const struct vmm_vma *v, const struct vmm_vma *w)
{
    if (v->end != w->start || v->prot != w->prot ||
        (v->flags & ~VMA_FLAGS_INTERNAL) != (w->flags & ~VMA_FLAGS_INTERNAL) ||
        (v->flags & (VMM_VMA_SPECIAL | VMM_VMA_SECRET)) ||
        !same_name(v->name, w->name))
        return false;
    uint64_t len = v->end - v->start;
    if (v->shared || w->shared)
        return v->shared && w->shared &&
               (v->shared == w->shared ||
                (!v->shared->anon && !w->shared->anon && v->shared->ino &&
                 v->shared->dev == w->shared->dev &&
                 v->shared->ino == w->shared->ino)) &&
               w->shared_off == v->shared_off + len;
    if (v->flags & VMM_VMA_FILE)
        return v->dev == w->dev && v->ino == w->ino &&
               w->file_off == v->file_off + len;
    return true;
}

const struct vmm_vma *vmm_as_linux_vma(const struct vmm_aspace *as, gva_t gva,
                                       gva_t *lo, gva_t *hi)
{
    size_t i = vma_index_after(as, gva);
    if (i >= as->nr_vmas || as->vmas[i]->start > gva)
        return NULL;
    size_t first = i, last = i;
    while (first > 0 &&
           vmm_vma_linux_joins(as->vmas[first - 1], as->vmas[first]))
        first--;
    while (last + 1 < as->nr_vmas &&
           vmm_vma_linux_joins(as->vmas[last], as->vmas[last + 1]))
        last++;
    *lo = as->vmas[first]->start;
    *hi = as->vmas[last]->end;
    return as->vmas[i];
}

/*
 * Exact only near the limit: counting walks the whole list, and a list of
 * many VMAs Linux would have merged (a heap grown a page at a time) would
 * pay that walk at every brk. Far from the limit an upper bound does:
 * nr_vmas, or the last count plus two for each change since (one VMA
 * changed, added or removed splits one of Linux's in three at most).
 */
size_t vmm_as_map_count(struct vmm_aspace *as)
{
    size_t limit = vmm_max_map_count(), bound = as->nr_vmas;
    uint64_t since = as->generation - as->map_count_gen;
    if (as->map_count_known && since < limit &&
        as->map_count + 2 * since < bound)
        bound = as->map_count + 2 * since;
    if (bound + 2 < limit)
        return bound;
    size_t n = as->nr_vmas;
    for (size_t i = 0; i + 1 < as->nr_vmas; i++)
        n -= vmm_vma_linux_joins(as->vmas[i], as->vmas[i + 1]);
    as->map_count = n;
    as->map_count_gen = as->generation;
    as->map_count_known = true;
    return n;
}

size_t vmm_max_map_count(void)
{
    static size_t limit;
    if (limit)
        return limit;
    size_t host = VMM_MAP_COUNT_LINUX;
    char buf[32] = {0};
    int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, buf, sizeof(buf) - 1) > 0) {
            unsigned long v = strtoul(buf, NULL, 10);
            if (v > 2 * VMM_MAP_COUNT_RESERVE && v < host)
                host = v;
        }
        close(fd);
    }
    limit = host - VMM_MAP_COUNT_RESERVE;
    return limit;
}

/* ---- lazily backed VMAs ---------------------------------------------------- */

/* True when w, right after v, can be one VMA with it again: two backed
 * stretches of one lazy mapping whose extents follow each other (the
 * allocator's bump gives consecutive stretches consecutive extents), so
 * a mapping touched all over ends as one VMA, as Linux shows it. */
static bool stretches_join(const struct vmm_vma *v, const struct vmm_vma *w)
{
    return v->end == w->start && v->flags == w->flags &&
           v->prot == w->prot && !(v->flags & (VMM_VMA_LAZY | VMM_VMA_FILE)) &&
           !v->name && !w->name && !v->shared && !w->shared && !v->file &&
           !w->file && !v->eof_at && !w->eof_at &&
           v->gpa + (v->end - v->start) == w->gpa;
}

/* Makes VMA i + 1 part of VMA i (stretches_join holds). */
static void join_next(struct vmm_aspace *as, size_t i)
{
    gva_t end = as->vmas[i + 1]->end;
    uint64_t len = end - as->vmas[i + 1]->start;
    /* uncharges it: VMA i takes the charge; nothing a mirror shows
     * changes (stretches_join: the backing continues) */
    vma_remove_raw(as, i + 1);
    as->vmas[i]->end = end;
    if (as->vmas[i]->flags & VMM_VMA_ACCOUNT)
        as->account_bytes += len;
}

/* Backs the 2 MiB-aligned stretch around gva of the lazy VMA holding it:
 * an extent (2 MiB-aligned like the stretch, so one huge entry maps it),
 * PTEs from the VMA's protection, a VMA of its own joined with backed
 * neighbours. 1 when backed, 0 when gva is in no lazy VMA, -ENOMEM. */
static int lazy_back(struct vmm_aspace *as, gva_t gva)
{
    struct vmm_vma *v = vmm_as_find_vma(as, gva);
    if (!v || !(v->flags & VMM_VMA_LAZY))
        return 0;
    gva_t lo = gva & ~(VMM_HUGE_SIZE - 1), hi = lo + VMM_HUGE_SIZE;
    lo = lo < v->start ? v->start : lo;
    hi = hi > v->end ? v->end : hi;
    uint64_t npages = (hi - lo) / VMM_PAGE_SIZE;
    gpa_t gpa;
    int rc = vmm_phys_alloc_for(as->pm, npages, lo, &gpa);
    if (rc < 0)
        return rc;
    if ((rc = vma_split_at(as, lo)) < 0 || (rc = vma_split_at(as, hi)) < 0) {
        vmm_phys_free(as->pm, gpa, npages);
        return rc;
    }
    size_t i = vma_index_after(as, lo);
    as->vmas[i]->gpa = gpa;
    as->vmas[i]->flags = (as->vmas[i]->flags & ~VMM_VMA_LAZY) | VMM_VMA_FROM_LAZY;
    vma_changed(as, lo, hi);
    if ((rc = pt_apply_vma(as, as->vmas[i])) < 0)
        return rc;
    if (i + 1 < as->nr_vmas && stretches_join(as->vmas[i], as->vmas[i + 1]))
        join_next(as, i);
    if (i > 0 && stretches_join(as->vmas[i - 1], as->vmas[i]))
        join_next(as, i - 1);
    return 1;
}

static bool prot_allows(int prot, int need);

bool vmm_as_fault_in(struct vmm_aspace *as, gva_t gva, uint64_t len, int need)
{
    gva_t end;
    if (__builtin_add_overflow(gva, len, &end))
        end = UINT64_MAX;
    bool grew = false;
    for (gva_t at = gva; at < end;) {
        struct vmm_vma *v = vmm_as_next_vma(as, at);
        if (!v || v->start >= end)
            break;
        at = v->start > at ? v->start : at;
        if (v->flags & VMM_VMA_LAZY) {
            if (need && !prot_allows(v->prot, need))
                break; /* the copy stops here whatever follows */
            if (lazy_back(as, at) <= 0)
                break;
            grew = true;
            continue; /* at is in a backed VMA now */
        }
        gva_t before = vmm_vma_valid_end(v);
        if (before < v->end && vma_update_eof(as, v) == 0 &&
            vmm_vma_valid_end(v) > before)
            grew = true;
        at = v->end;
    }
    return grew;
}

int vmm_as_guest_fault(struct vmm_aspace *as, gva_t gva, bool write)
{
    struct vmm_vma *v = vmm_as_find_vma(as, gva);
    if (v && (v->flags & VMM_VMA_LAZY))
        return prot_allows(v->prot, write ? PROT_WRITE : PROT_READ) &&
                       lazy_back(as, gva) > 0
                   ? 1
                   : -1;
    if (!v || !(v->prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) ||
        (write && !(v->prot & PROT_WRITE)))
        return -1;
    bool was_valid = gva < vmm_vma_valid_end(v);
    if (vma_update_eof(as, v) < 0)
        return was_valid ? -1 : 0;
    if (was_valid)
        /* An access the VMA allows faulted in a page it had: its file
         * may have shrunk without hvrun being told (a host process; the
         * ptrace stub's SIGBUS there): SIGBUS when it no longer covers
         * it, else the fault is what it was. */
        return gva < vmm_vma_valid_end(v) ? -1 : 0;
    return gva < vmm_vma_valid_end(v) ? 1 : 0;
}

/* Whether hvrun's host mapping of a shared object may be writable: its fd
 * is open for writing and no write seal forbids it (a host MAP_SHARED
 * PROT_WRITE mapping of a write-sealed memfd is EPERM). A read-only one
 * is what keeps a guest write there from ever reaching the object: the
 * guest PTE is never writable over it (vmm_as_protect). */
static bool host_may_write(int fd, int fl)
{
    if ((fl & O_ACCMODE) != O_RDWR)
        return false;
    int seals = fcntl(fd, F_GET_SEALS);
    return seals < 0 || !(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE));
}

/* The VMAs of [gva, end) map s from off (their earlier object dropped). */
static int attach_shared(struct vmm_aspace *as, gva_t gva, gva_t end,
                         struct vmm_shared *s, uint64_t off)
{
    int rc = 0;
    for (size_t i = vma_index_after(as, gva);
         i < as->nr_vmas && as->vmas[i]->start < end && rc == 0; i++) {
        struct vmm_vma *v = as->vmas[i];
        if ((v->prot & PROT_WRITE) && !(s->host_prot & PROT_WRITE)) {
            rc = -EACCES; /* write_over_read_only_host: never */
            break;
        }
        shared_put(v->shared);
        v->shared = shared_get(s);
        v->shared_off = off + (v->start - gva);
        vma_changed(as, v->start, v->end);
        /* The guest writes land in the host object (page cache or memfd),
         * as with Linux. */
        rc = shared_map_vma(as, v);
    }
    return rc;
}

int vmm_as_set_shared(struct vmm_aspace *as, gva_t gva, uint64_t len, int fd,
                      uint64_t off)
{
    gva_t end = gva + VMM_PAGE_ALIGN_UP(len);
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        return -errno;
    struct vmm_shared *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (s->fd < 0) {
        int err = errno;
        free(s);
        return -err;
    }
    struct vmm_vma *first = vmm_as_find_vma(as, gva);
    s->host_prot = PROT_READ;
    if (host_may_write(s->fd, fl) && first &&
        !(first->flags & VMM_VMA_NOMAYWRITE))
        s->host_prot |= PROT_WRITE;
    s->anon = false;
    s->refs = 1;
    s->id = new_object_id(); /* what a backend keys its fd of it by */
    struct stat st;
    if (fstat(s->fd, &st) == 0) {
        s->dev = st.st_dev;
        s->ino = st.st_ino;
    }
    int rc = attach_shared(as, gva, end, s, off);
    shared_put(s);
    return rc;
}

struct vmm_shared *vmm_shared_new(int fd)
{
    struct vmm_shared *s = vmm_image_new(fd);
    if (s)
        s->host_prot = PROT_READ | PROT_WRITE;
    return s;
}

struct vmm_shared *vmm_shared_get(struct vmm_shared *s)
{
    return shared_get(s);
}

void vmm_shared_put(struct vmm_shared *s)
{
    shared_put(s);
}

int vmm_as_attach_shared(struct vmm_aspace *as, gva_t gva, uint64_t len,
                         struct vmm_shared *s, uint64_t off)
{
    return attach_shared(as, gva, gva + VMM_PAGE_ALIGN_UP(len), s, off);
}

int vmm_as_share_anon(struct vmm_aspace *as, gva_t gva, uint64_t len)
{
    len = VMM_PAGE_ALIGN_UP(len);
    int fd = memfd_create("hvrun-shm", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (ftruncate(fd, (off_t)len) < 0)
        rc = -errno;
    if (rc == 0)
        rc = vmm_as_set_shared(as, gva, len, fd, 0);
    if (rc == 0) {
        /* vmm_as_set_shared made the VMAs' shared object; mark it a memfd. */
        struct vmm_vma *v = vmm_as_find_vma(as, gva);
        if (v && v->shared)
            v->shared->anon = true;
        /* Linux charges shmem at its creation (shmem_acct_size), once,
         * however many processes map it later (fork does not charge it). */
        if (v && !(v->flags & (VMM_VMA_ACCOUNT | VMM_VMA_NORESERVE))) {
            v->flags |= VMM_VMA_ACCOUNT;
            as->account_bytes += v->end - v->start;
        }
    }
    close(fd);
    return rc;
}

static void copy_resident(uint8_t *dst, uint8_t *src, uint64_t len);
static uint8_t *span_of(const struct vmm_aspace *as, gva_t gva, int need,
                        size_t *avail);

/* Moves the host pages of [old_gva, old_gva + len) (inside one or more
 * VMAs, starting anywhere in the first) to gpa new_gpa onwards; the caller
 * then returns the old extent(s) to the allocator. */
static void move_backing(struct vmm_aspace *as, size_t first, gva_t old_gva,
                         gpa_t new_gpa, uint64_t len)
{
    gva_t old_end = old_gva + len;
    for (size_t i = first; i < as->nr_vmas && as->vmas[i]->start < old_end;
         i++) {
        const struct vmm_vma *v = as->vmas[i];
        gva_t s = v->start > old_gva ? v->start : old_gva;
        gva_t e = v->end < old_end ? v->end : old_end;
        if (e <= s)
            continue;
        void *src = vmm_phys_hva(as->pm, v->gpa + (s - v->start));
        void *dst = vmm_phys_hva(as->pm, new_gpa + (s - old_gva));
        /* Memfd-backed memory stays at its own offset (gpa X is memfd
         * offset X, which a stub process maps too): copied, not moved. */
        if (as->pm->memfd >= 0 && !v->shared) {
            copy_resident(dst, src, e - s);
            continue;
        }
        /* Host mremap moves pages (anonymous or file-backed) without a
         * copy; phys_free then re-reserves the vacated range. */
        if (mremap(src, e - s, e - s, MREMAP_MAYMOVE | MREMAP_FIXED, dst) ==
            MAP_FAILED)
            memcpy(dst, src, e - s);
    }
}

/* Copies the host pages of [src, src + len) that were ever touched to
 * the guest pages at dst onwards, backing lazy ones as it goes. */
static int copy_touched_to(struct vmm_aspace *as, gva_t dst, uint8_t *src,
                           uint64_t len)
{
    (void)vmm_as_fault_in(as, dst, len, 0);
    for (uint64_t done = 0; done < len;) {
        size_t avail;
        uint8_t *p = span_of(as, dst + done, 0, &avail);
        if (!p)
            return -ENOMEM; /* a stretch the allocator could not back */
        uint64_t n = len - done < avail ? len - done : avail;
        copy_resident(p, src + done, n);
        done += n;
    }
    return 0;
}

/* mremap of anonymous memory that is lazy (or becomes so: new_len is
 * VMM_LAZY_MIN or more): the new range is one lazy VMA, the backed
 * stretches of the old range are copied over (backing the new stretches
 * they land in), then the old range goes. Takes name. */
static int remap_lazily(struct vmm_aspace *as, gva_t old_gva,
                        uint64_t old_len, gva_t new_gva, uint64_t new_len,
                        int prot, int flags, char *name)
{
    struct vmm_vma v = {.start = new_gva, .end = new_gva + new_len,
                        .prot = prot, .flags = flags | VMM_VMA_LAZY,
                        .name = name};
    int rc = vma_insert_at(as, vma_index_after(as, new_gva), &v);
    if (rc < 0) {
        free(name);
        return rc;
    }
    uint64_t keep = old_len < new_len ? old_len : new_len;
    for (gva_t at = old_gva; at < old_gva + keep && rc == 0;) {
        const struct vmm_vma *o = vmm_as_find_vma(as, at);
        gva_t e = o->end < old_gva + keep ? o->end : old_gva + keep;
        if (!(o->flags & VMM_VMA_LAZY))
            rc = copy_touched_to(as, new_gva + (at - old_gva),
                                 vmm_phys_hva(as->pm,
                                              o->gpa + (at - o->start)),
                                 e - at);
        at = e;
    }
    if (rc < 0) {
        vmm_as_unmap(as, new_gva, new_len);
        return rc;
    }
    return vmm_as_unmap(as, old_gva, old_len);
}

int vmm_as_remap(struct vmm_aspace *as, gva_t old_gva, uint64_t old_len,
                 uint64_t new_len, bool may_move, bool fixed, gva_t *new_gva)
{
    old_len = VMM_PAGE_ALIGN_UP(old_len);
    new_len = VMM_PAGE_ALIGN_UP(new_len);
    if (old_gva & ~VMM_PAGE_MASK || new_len == 0)
        return -EINVAL;
    if (!range_fully_mapped(as, old_gva, old_gva + old_len))
        return -EFAULT;
    /* Moved or grown, a mapping is made of guest memory (a direct VMA's
     * backing is its file's at its own offset). */
    int mrc = vmm_as_materialise(as, old_gva, old_len);
    if (mrc < 0)
        return mrc;
    struct vmm_vma *first = vmm_as_find_vma(as, old_gva);
    if (!fixed) {
        if (new_len <= old_len) {
            int rc = vmm_as_unmap(as, old_gva + new_len, old_len - new_len);
            *new_gva = old_gva;
            return rc;
        }
        gva_t ext = old_gva + old_len;
        if (vmm_as_range_free(as, ext, new_len - old_len)) {
            /* Grow in place: the extension is its own extent and VMA, of
             * the same file at the offsets that follow. */
            struct vmm_vma *last = vmm_as_find_vma(as, ext - 1);
            struct vmm_vma like = *last;
            like.name = last->name ? strdup(last->name) : NULL;
            struct vmm_shared *sh = shared_get(last->shared);
            struct vmm_shared *file = shared_get(last->file);
            uint64_t sh_off = last->shared_off + (ext - last->start);
            int ext_flags = like.flags & ~VMM_VMA_FILE;
            if (!like.shared && !like.file && !(like.flags & VMM_VMA_FILE) &&
                new_len - old_len >= VMM_LAZY_MIN)
                ext_flags |= VMM_VMA_LAZY;
            int rc = vmm_as_map(as, ext, new_len - old_len, like.prot,
                                ext_flags, NULL);
            if (rc == 0 && (like.flags & VMM_VMA_FILE))
                vmm_as_set_file(as, ext, new_len - old_len,
                                like.file_off + (ext - like.start), like.dev,
                                like.ino, like.name);
            free(like.name);
            if (rc == 0 && file)
                vmm_as_find_vma(as, ext)->file = shared_get(file);
            shared_put(file);
            if (rc == 0 && sh) {
                /* A shared mapping grows into more of its object. */
                struct vmm_vma *x = vmm_as_find_vma(as, ext);
                x->shared = shared_get(sh);
                x->shared_off = sh_off;
                vma_changed(as, x->start, x->end);
                if ((rc = shared_map_vma(as, x)) < 0)
                    vmm_as_unmap(as, ext, new_len - old_len);
            }
            shared_put(sh);
            *new_gva = old_gva;
            return rc;
        }
        if (!may_move)
            return -ENOMEM;
        int rc = vmm_as_find_free(as, new_len, VMM_USER_END - (128ULL << 20),
                                  new_gva);
        if (rc < 0)
            return rc;
    }
    if (*new_gva & ~VMM_PAGE_MASK || new_len > VMM_USER_END ||
        *new_gva > VMM_USER_END - new_len || *new_gva < VMM_USER_MIN)
        return -EINVAL;
    if (*new_gva < old_gva + old_len && old_gva < *new_gva + new_len)
        return -EINVAL;
    if (vmm_in_stub_range(*new_gva, new_len))
        return -ENOMEM;
    int prot = first->prot, flags = first->flags;
    char *name = first->name ? strdup(first->name) : NULL;
    uint64_t delta = old_gva - first->start;
    uint64_t off = first->file_off + delta, dev = first->dev, ino = first->ino;
    struct vmm_shared *sh = shared_get(first->shared);
    struct vmm_shared *file = shared_get(first->file);
    uint64_t sh_off = first->shared_off + delta;
    int rc = vmm_as_unmap(as, *new_gva, new_len);
    if (rc == 0 && !sh && !file && !(flags & VMM_VMA_FILE) &&
        (new_len >= VMM_LAZY_MIN ||
         vmm_as_range_has_flags(as, old_gva, old_len, VMM_VMA_LAZY))) {
        shared_put(sh); /* NULL both: anonymous memory */
        shared_put(file);
        return remap_lazily(as, old_gva, old_len, *new_gva, new_len, prot,
                            flags, name);
    }
    gpa_t new_gpa;
    if (rc == 0)
        rc = vmm_phys_alloc_for(as->pm, new_len / VMM_PAGE_SIZE, *new_gva,
                                &new_gpa);
    if (rc < 0) {
        free(name);
        shared_put(sh);
        shared_put(file);
        return rc;
    }
    size_t idx = vma_index_after(as, old_gva);
    uint64_t keep = old_len < new_len ? old_len : new_len;
    move_backing(as, idx, old_gva, new_gpa, keep);
    unmap_range(as, old_gva, old_len, true);
    struct vmm_vma v = {.start = *new_gva, .end = *new_gva + new_len,
                        .gpa = new_gpa, .prot = prot, .flags = flags,
                        .file_off = off, .dev = dev, .ino = ino,
                        .name = name, .shared = sh, .shared_off = sh_off,
                        .file = file};
    rc = vma_insert_at(as, vma_index_after(as, v.start), &v);
    if (rc < 0) {
        free(name);
        shared_put(sh);
        shared_put(file);
        vmm_phys_free(as->pm, new_gpa, new_len / VMM_PAGE_SIZE);
        return rc;
    }
    /* The moved host pages are the object's already; a grown tail must be
     * the object too, not private memory. */
    if (sh && new_len > old_len && (rc = shared_map_vma(as, &v)) < 0) {
        vmm_as_unmap(as, v.start, new_len);
        return rc;
    }
    return pt_apply_vma(as, &v);
}

/* ---- fork ----------------------------------------------------------------- */

static void copy_resident(uint8_t *dst, uint8_t *src, uint64_t len)
{
    uint64_t pages = len / VMM_PAGE_SIZE;
    unsigned char vec[256];
    for (uint64_t done = 0; done < pages;) {
        uint64_t n = pages - done < sizeof(vec) ? pages - done : sizeof(vec);
        uint8_t *at = src + done * VMM_PAGE_SIZE;
        if (mincore(at, n * VMM_PAGE_SIZE, vec) < 0) {
            memcpy(dst + done * VMM_PAGE_SIZE, at, n * VMM_PAGE_SIZE);
        } else {
            for (uint64_t i = 0; i < n; i++)
                if (vec[i] & 1)
                    memcpy(dst + (done + i) * VMM_PAGE_SIZE,
                           at + i * VMM_PAGE_SIZE, VMM_PAGE_SIZE);
        }
        done += n;
    }
}

/* Copies the allocated pages of src's [src_gpa, +len) to dst's dst_gpa
 * onwards inside the kernel (copy_file_range between the two memfds, over
 * the source's data extents only): no page of either is mapped into hvrun
 * on the way. A user-space copy faulted each page in twice (source and
 * destination views), ~2/3 of a fork's copy in a nested VM where a page
 * fault exits to the host. false when either side has no memfd or the
 * kernel refuses; the caller then copies by hand (idempotently). */
static bool copy_by_memfd(const struct vmm_physmem *dst, gpa_t dst_gpa,
                          const struct vmm_physmem *src, gpa_t src_gpa,
                          uint64_t len)
{
    if (dst->memfd < 0 || src->memfd < 0)
        return false;
    off_t end = (off_t)(src_gpa + len);
    for (off_t at = (off_t)src_gpa; at < end;) {
        off_t data = lseek(src->memfd, at, SEEK_DATA);
        if (data < 0)
            return errno == ENXIO; /* no data past at: done */
        if (data >= end)
            return true;
        off_t hole = lseek(src->memfd, data, SEEK_HOLE);
        if (hole < 0)
            return false;
        off_t stop = hole < end ? hole : end;
        loff_t in = data, out = (loff_t)(dst_gpa + (uint64_t)(data -
                                                             (off_t)src_gpa));
        while (in < stop) {
            ssize_t n = copy_file_range(src->memfd, &in, dst->memfd, &out,
                                        (size_t)(stop - in), 0);
            if (n <= 0)
                return false;
        }
        at = stop;
    }
    return true;
}

int vmm_as_clone(struct vmm_aspace *dst, const struct vmm_aspace *src)
{
    for (size_t i = 0; i < src->nr_vmas; i++) {
        const struct vmm_vma *v = src->vmas[i];
        uint64_t len = v->end - v->start;
        if (v->flags & VMM_VMA_DONTFORK)
            continue;
        /* Shared memory stays charged to the process that made it; memory
         * locks are not inherited (Linux clears VM_LOCKED in the child). */
        int flags = (v->shared ? v->flags & ~VMM_VMA_ACCOUNT : v->flags) &
                    ~VMM_VMA_LOCKED;
        int rc = vmm_as_map(dst, v->start, len, v->prot, flags, v->name);
        if (rc < 0)
            return rc;
        struct vmm_vma *d = vmm_as_find_vma(dst, v->start);
        d->file_off = v->file_off;
        d->dev = v->dev;
        d->ino = v->ino;
        d->file = shared_get(v->file);
        d->eof_at = v->eof_at;
        d->image = shared_get(v->image);
        d->image_off = v->image_off;
        vma_changed(dst, d->start, d->end);
        if (d->eof_at && (rc = pt_apply_vma(dst, d)) < 0)
            return rc;
        if (v->flags & (VMM_VMA_WIPEONFORK | VMM_VMA_LAZY))
            continue; /* the fresh backing's zeros, or none yet */
        if (v->flags & VMM_VMA_DIRECT) {
            /* The child's pages are the same file's. */
            if ((rc = direct_map_backing(dst, d)) < 0)
                return rc;
            continue;
        }
        if (v->shared) {
            /* The child maps the same host object: shared, not copied. */
            d->shared = shared_get(v->shared);
            d->shared_off = v->shared_off;
            vma_changed(dst, d->start, d->end);
            if ((rc = shared_map_vma(dst, d)) < 0)
                return rc;
            continue;
        }
        if (!copy_by_memfd(dst->pm, d->gpa, src->pm, v->gpa, len))
            copy_resident(vmm_phys_hva(dst->pm, d->gpa),
                          vmm_phys_hva(src->pm, v->gpa), len);
    }
    return 0;
}

/* ---- the checked copy path ---------------------------------------------- */

static bool prot_allows(int prot, int need)
{
    if (need & PROT_WRITE)
        return prot & PROT_WRITE;
    /* x86 cannot map write- or exec-only: any access right implies read. */
    return prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
}

/* Host pointer for gva and how many bytes stay in the same VMA, or NULL. */
static uint8_t *span_of(const struct vmm_aspace *as, gva_t gva, int need,
                        size_t *avail)
{
    struct vmm_vma *v = vmm_as_find_vma(as, gva);
    if (!v || (need && !prot_allows(v->prot, need)) ||
        (v->flags & VMM_VMA_LAZY)) /* backed by vmm_as_fault_in first */
        return NULL;
    /* A guest-writable shared VMA has a writable host mapping (never one
     * over a read-only one: vmm_as_protect); checked all the same, as a
     * write there would be hvrun's own SIGSEGV. */
    if ((need & PROT_WRITE) && v->shared &&
        !(v->shared->host_prot & PROT_WRITE))
        return NULL;
    /* Past a file's end there is no page: Linux's SIGBUS is -EFAULT to a
     * copy (and a shared mapping's host page would be hvrun's SIGBUS). */
    gva_t valid = vmm_vma_valid_end(v);
    if (gva >= valid)
        return NULL;
    *avail = valid - gva;
    return vmm_phys_hva(as->pm, v->gpa + (gva - v->start));
}

/* A read of a direct VMA's pages (inside one VMA, before its file's
 * end) from the file: not through hvrun's view, which would take host
 * PTEs there (direct_copy_back). False when gva is not direct or the
 * file no longer holds those bytes (then the view is read, and a file
 * shrunk meanwhile fails the same way as before). */
static bool read_direct(const struct vmm_aspace *as, uint8_t *dst, gva_t gva,
                        size_t n)
{
    const struct vmm_vma *v = vmm_as_find_vma(as, gva);
    uint64_t src_off;
    const struct vmm_shared *src = v ? vmm_vma_direct_source(v, &src_off)
                                     : NULL;
    if (!src)
        return false;
    off_t off = (off_t)(src_off + (gva - v->start));
    ssize_t got;
    while ((got = pread(src->fd, dst, n, off)) < 0 && errno == EINTR)
        ;
    if (got == (ssize_t)n)
        return true;
    if (got < 0)
        return false;
    /* Past the file's end in the last page: zeros, as the mapping. */
    struct stat st;
    if (fstat(src->fd, &st) < 0 ||
        (uint64_t)st.st_size > (uint64_t)off + (uint64_t)got)
        return false;
    memset(dst + got, 0, n - (size_t)got);
    return true;
}

/*
 * hvrun's own first touch of a page of guest memory through its view is
 * a page fault of hvrun's, and where the view's 2 MiB around the page had
 * no page-table page yet, a new one: ~24 us and ~80 us on a host whose
 * page tables are shadowed (kvm_pvm; docs/PERFORMANCE.md), where a pread
 * or pwrite of the memfd behind the view costs ~2.5 us. Most pages hvrun
 * reads or writes for a process it meets a few times only (the initial
 * stack, a stat buffer, rseq's area, the random bytes at start), each in
 * a view that is new for every process. So the first accesses to a page
 * (MEMFD_SEEN_COUNT_MAX) go through the memfd, and a page met more often
 * (a loop's buffer) through the view, where its later accesses cost
 * nothing. Only where the view is the memfd's own pages at gpa (a private
 * VMA neither direct nor lazy nor shared) and does not follow the guest's
 * protection (the ptrace backend: kvm's shadow MMU wants writes through
 * the view). A page the direct-mapped set forgets is one more pread later,
 * never another byte: the memfd and the view are the same pages.
 */
#define MEMFD_SEEN_COUNT_BITS 4
#define MEMFD_SEEN_COUNT_MAX 7 /* accesses through the memfd, then the view */

static bool through_memfd(const struct vmm_aspace *as, const struct vmm_vma *v,
                          gva_t gva)
{
    struct vmm_physmem *pm = as->pm;
    if (pm->memfd < 0 || pm->view_follows_guest || v->shared ||
        (v->flags & (VMM_VMA_DIRECT | VMM_VMA_LAZY)))
        return false;
    uint64_t page = (v->gpa + (gva - v->start)) / VMM_PAGE_SIZE + 1;
    uint64_t *slot = &pm->memfd_seen[(page * 0x9e3779b97f4a7c15ULL) >> 56 &
                                     (VMM_MEMFD_SEEN_SLOTS - 1)];
    if (*slot >> MEMFD_SEEN_COUNT_BITS != page)
        *slot = page << MEMFD_SEEN_COUNT_BITS;
    if ((*slot & MEMFD_SEEN_COUNT_MAX) == MEMFD_SEEN_COUNT_MAX)
        return false;
    (*slot)++;
    return true;
}

/* n bytes (within one page) between host and the memfd at gva's gpa in
 * v; false when the call did not move them all (the view then does). */
static bool memfd_copy(const struct vmm_aspace *as, const struct vmm_vma *v,
                       gva_t gva, void *host, size_t n, bool to_guest)
{
    static const uint8_t zeros[VMM_PAGE_SIZE];
    off_t off = (off_t)(v->gpa + (gva - v->start));
    ssize_t done;
    do {
        done = to_guest ? pwrite(as->pm->memfd, host ? host : zeros, n, off)
                        : pread(as->pm->memfd, host, n, off);
    } while (done < 0 && errno == EINTR);
    return done == (ssize_t)n;
}

/* The bytes from gva to its page's end, at most n. */
static size_t to_page_end(gva_t gva, size_t n)
{
    size_t room = VMM_PAGE_SIZE - (gva & ~VMM_PAGE_MASK);
    return n < room ? n : room;
}

static int copy_range(const struct vmm_aspace *as, gva_t gva, void *host,
                      size_t len, int need, bool to_guest)
{
    gva_t end;
    if (__builtin_add_overflow(gva, len, &end) || end > VMM_USER_END)
        return -EFAULT;
    uint8_t *h = host;
    while (len > 0) {
        size_t avail;
        uint8_t *p = span_of(as, gva, need, &avail);
        if (!p)
            return -EFAULT;
        const struct vmm_vma *v = vmm_as_find_vma(as, gva);
        size_t n = len < avail ? len : avail;
        const uint8_t *staged = to_guest ? NULL : staged_bytes(as->stage, gva);
        if (staged) {
            size_t room = VMM_PAGE_SIZE - (gva & ~VMM_PAGE_MASK);
            n = n < room ? n : room;
            memcpy(h, staged + (gva & ~VMM_PAGE_MASK), n);
        } else if (!to_guest && as->stage &&
                   n > VMM_PAGE_SIZE - (gva & ~VMM_PAGE_MASK)) {
            /* page by page while staging: the next one may be staged */
            n = VMM_PAGE_SIZE - (gva & ~VMM_PAGE_MASK);
            if (!read_direct(as, h, gva, n))
                memcpy(h, p, n);
        } else if (!to_guest && read_direct(as, h, gva, n)) {
            /* a direct VMA's pages, from its file */
        } else if (through_memfd(as, v, gva) &&
                   (n = to_page_end(gva, n),
                    memfd_copy(as, v, gva, h, n, to_guest))) {
            /* a page hvrun had not met: the memfd, not the view */
        } else if (to_guest)
            memcpy(p, h, n);
        else
            memcpy(h, p, n);
        h += n;
        gva += n;
        len -= n;
    }
    return 0;
}

int vmm_as_copy_in(const struct vmm_aspace *as, void *dst, gva_t src,
                   size_t len)
{
    return copy_range(as, src, dst, len, PROT_READ, false);
}

int vmm_as_copy_out(const struct vmm_aspace *as, gva_t dst, const void *src,
                    size_t len)
{
    return copy_range(as, dst, (void *)src, len, PROT_WRITE, true);
}

/* Whether hvrun may write v's host backing as it is: a shared object's
 * host mapping is read-only when its fd is (vmm_as_set_shared), a private
 * VMA's backing while the guest may not write it (host_protect_backing;
 * a special mapping's stays writable). */
static bool backing_writable(const struct vmm_aspace *as,
                             const struct vmm_vma *v)
{
    if (v->shared)
        return v->shared->host_prot & PROT_WRITE;
    return (v->prot & PROT_WRITE) || (v->flags & VMM_VMA_SPECIAL) ||
           !as->pm->view_follows_guest;
}

/* Writes n bytes (zeros when src is NULL) at p, the backing of a private
 * VMA the guest may not write: its host pages are made writable for the
 * copy and read-only again (the mprotect also fires KVM's notifier, so a
 * vCPU that cached the old page sees the new bytes). */
static int write_read_only_private(uint8_t *p, const void *src, size_t n)
{
    uint8_t *lo = (uint8_t *)((uintptr_t)p & VMM_PAGE_MASK);
    size_t span = VMM_PAGE_ALIGN_UP((uintptr_t)(p + n)) - (uintptr_t)lo;
    if (mprotect(lo, span, PROT_READ | PROT_WRITE) < 0)
        return -errno;
    if (src)
        memcpy(p, src, n);
    else
        memset(p, 0, n);
    (void)mprotect(lo, span, PROT_READ);
    return 0;
}

/* hvrun's own write whatever the guest's protection (the loader, the
 * vDSO, code rewriting, a FOLL_FORCE write): never through a host page
 * that would fault hvrun. A shared object hvrun maps read-only is not
 * written (-EFAULT), nor is a lazy VMA's unbacked stretch or a page past
 * a file's end. */
static int forced_write(const struct vmm_aspace *as, gva_t gva,
                        const void *src, size_t len, uint64_t copy_block)
{
    gva_t end;
    if (__builtin_add_overflow(gva, len, &end) || end > VMM_USER_END)
        return -EFAULT;
    const uint8_t *s = src;
    while (len > 0) {
        size_t avail;
        uint8_t *p = span_of(as, gva, 0, &avail);
        struct vmm_vma *v = vmm_as_find_vma(as, gva);
        if (!p || (v->shared && !backing_writable(as, v)))
            return -EFAULT;
        if (as->stage && s) {
            size_t room = VMM_PAGE_SIZE - (gva & ~VMM_PAGE_MASK);
            size_t n = len < room ? len : room;
            if (stage_write(as, v, gva, s, n)) {
                s += n;
                gva += n;
                len -= n;
                continue;
            }
        }
        if (v->flags & VMM_VMA_DIRECT) {
            /* A copy first, as the kernel's FOLL_FORCE write makes one.
             * The list changes under a const view: which host pages back
             * the guest's, never what the guest or a caller sees. */
            int rc = materialise_around((struct vmm_aspace *)as, v, gva, len,
                                        copy_block);
            if (rc < 0)
                return rc;
            continue; /* the same bytes, now in guest memory */
        }
        size_t n = len < avail ? len : avail;
        if (through_memfd(as, v, gva) &&
            memfd_copy(as, v, gva, (void *)s, to_page_end(gva, n), true)) {
            n = to_page_end(gva, n); /* the memfd: see through_memfd */
        } else if (!backing_writable(as, v)) {
            int rc = write_read_only_private(p, s, n);
            if (rc < 0)
                return rc;
        } else if (s) {
            memcpy(p, s, n);
        } else {
            memset(p, 0, n);
        }
        if (s)
            s += n;
        gva += n;
        len -= n;
    }
    return 0;
}

int vmm_as_peek(const struct vmm_aspace *as, void *dst, gva_t src,
                size_t len)
{
    return copy_range(as, src, dst, len, 0, false);
}

int vmm_as_poke(const struct vmm_aspace *as, gva_t dst, const void *src,
                size_t len)
{
    return forced_write(as, dst, src, len, VMM_PAGE_SIZE);
}

int vmm_as_poke_text(struct vmm_aspace *as, gva_t dst, const void *src,
                     size_t len)
{
    struct vmm_vma *v = vmm_as_find_vma(as, dst);
    if (!v || v->shared || (v->flags & VMM_VMA_LAZY) || len == 0 ||
        len > VMM_PAGE_SIZE ||
        (dst & VMM_PAGE_MASK) != ((dst + len - 1) & VMM_PAGE_MASK))
        return -EFAULT;
    /* A special page's backing stays writable (a read-only one would
     * fault hvrun's next plain write there). */
    return forced_write(as, dst, src, len, DIRECT_COPY_BLOCK);
}

int vmm_as_fill_zero(const struct vmm_aspace *as, gva_t dst, size_t len)
{
    return forced_write(as, dst, NULL, len, VMM_PAGE_SIZE);
}

long vmm_as_strncpy_in(const struct vmm_aspace *as, char *dst, gva_t src,
                       size_t max)
{
    size_t done = 0;
    while (done < max) {
        size_t avail;
        if (src + done >= VMM_USER_END)
            return -EFAULT;
        uint8_t *p = span_of(as, src + done, PROT_READ, &avail);
        if (!p)
            return -EFAULT;
        size_t n = max - done < avail ? max - done : avail;
        const struct vmm_vma *v = vmm_as_find_vma(as, src + done);
        if (read_direct(as, (uint8_t *)dst + done, src + done, n))
            p = (uint8_t *)dst + done; /* a path in a file's own page */
        else if (through_memfd(as, v, src + done) &&
                 memfd_copy(as, v, src + done, dst + done,
                            (n = to_page_end(src + done, n)), false))
            p = (uint8_t *)dst + done; /* a page hvrun had not met */
        uint8_t *nul = memchr(p, 0, n);
        size_t take = nul ? (size_t)(nul - p) + 1 : n;
        if (p != (uint8_t *)dst + done)
            memcpy(dst + done, p, take);
        if (nul)
            return (long)(done + take - 1);
        done += n;
    }
    return -ENAMETOOLONG;
}

int vmm_as_host_iov(const struct vmm_aspace *as, gva_t gva, size_t len,
                    int prot, struct iovec *iov, int max_iov, size_t *covered)
{
    int n = 0;
    *covered = 0;
    gva_t end;
    if (__builtin_add_overflow(gva, len, &end) || end > VMM_USER_END)
        len = gva < VMM_USER_END ? VMM_USER_END - gva : 0;
    while (len > 0 && n < max_iov) {
        size_t avail;
        uint8_t *p = span_of(as, gva, prot, &avail);
        if (!p)
            break;
        size_t take = len < avail ? len : avail;
        iov[n].iov_base = p;
        iov[n].iov_len = take;
        n++;
        *covered += take;
        gva += take;
        len -= take;
    }
    return n;
}

/* ---- staged code pages: writes, and their end in the page store ---------- */

void vmm_as_stage_begin(struct vmm_aspace *as)
{
    if (!as->stage)
        as->stage = calloc(1, sizeof(*as->stage));
    if (as->stage) /* else: no staging, every poke copies as before */
        as->stage->depth++;
}

/* Whether the page at gva of v may be staged: mapped straight from its
 * file or image, private, the whole page inside v and the file. */
static bool stage_eligible(const struct vmm_vma *v, gva_t page)
{
    return (v->flags & VMM_VMA_DIRECT) && !v->shared &&
           !(v->flags & VMM_VMA_LAZY) && page >= v->start &&
           page + VMM_PAGE_SIZE <= v->end &&
           vmm_vma_valid_end(v) >= page + VMM_PAGE_SIZE;
}

/* n bytes (inside one page) at gva into the stage: 1 when staged, 0 when
 * the page is not for staging (the caller writes it the ordinary way). */
static int stage_write(const struct vmm_aspace *as, const struct vmm_vma *v,
                       gva_t gva, const uint8_t *src, size_t n)
{
    struct vmm_stage *st = as->stage;
    gva_t page = gva & VMM_PAGE_MASK;
    uint8_t *b = staged_bytes(st, page);
    if (!b) {
        if (!stage_eligible(v, page))
            return 0;
        if (st->n == st->cap) {
            size_t cap = st->cap ? st->cap * 2 : 8;
            void *grown = realloc(st->pages, cap * sizeof(*st->pages));
            if (!grown)
                return 0;
            st->pages = grown;
            st->cap = cap;
        }
        if (!(b = malloc(VMM_PAGE_SIZE)))
            return 0;
        if (!read_direct(as, b, page, VMM_PAGE_SIZE)) {
            free(b);
            return 0;
        }
        st->pages[st->n++] = (struct staged_page){page, b};
    }
    memcpy(b + (gva - page), src, n);
    return 1;
}

static struct vmm_shared *page_store_object(void)
{
    static struct vmm_shared *obj; /* one reference kept for the run */
    if (!obj && vmm_page_store_fd() >= 0)
        obj = vmm_image_new(vmm_page_store_fd());
    return obj;
}

int vmm_as_map_stored(struct vmm_aspace *as, gva_t gva, int prot, int flags,
                      const char *name)
{
    static const uint8_t zeros[VMM_PAGE_SIZE];
    uint64_t off;
    int rc = vmm_page_store_put(zeros, &off);
    struct vmm_shared *store = rc == 0 ? page_store_object() : NULL;
    if (!store)
        return rc < 0 ? rc : -ENOMEM;
    return vmm_as_map_image(as, gva, VMM_PAGE_SIZE, prot, flags, name, store,
                            off);
}

/* The pages [gva, gva+len) of one VMA mapped from the store's pages at
 * off: one VMA, so one mapping in hvrun's view and one in the stub
 * however many pages the run has. */
static int map_stored_run(struct vmm_aspace *as, gva_t gva, uint64_t len,
                          uint64_t off)
{
    struct vmm_vma *v = vmm_as_find_vma(as, gva);
    struct vmm_shared *store = page_store_object();
    if (!store || !v || !stage_eligible(v, gva) ||
        !stage_eligible(v, gva + len - VMM_PAGE_SIZE))
        return -EINVAL;
    if (v->image == store && v->image_off + (gva - v->start) == off &&
        gva + len <= v->end)
        return 0;
    int rc = vma_split_at(as, gva);
    if (rc == 0)
        rc = vma_split_at(as, gva + len);
    if (rc < 0)
        return rc;
    v = vmm_as_find_vma(as, gva);
    if ((rc = map_from_image(as, v, v->end, store, off)) < 0)
        return rc;
    vma_changed(as, v->start, v->end);
    as->tlb_flushes_asked++; /* other host pages behind the same gpa */
    return 0;
}

/* Pages of the store (map_stored_run: v exactly) given their file's
 * bytes again, as a refill gives a private copy (MADV_DONTNEED): what
 * rewrites them next reads the file's instructions, not its own. */
static int unstore_page(struct vmm_aspace *as, struct vmm_vma *v)
{
    struct vmm_shared *was = v->image;
    uint64_t was_off = v->image_off;
    v->image = NULL;
    int rc = direct_map_backing(as, v);
    if (rc < 0) {
        v->image = was;
        v->image_off = was_off;
        return rc;
    }
    shared_put(was);
    vma_changed(as, v->start, v->end);
    as->tlb_flushes_asked++;
    return 0;
}

static int staged_by_address(const void *a, const void *b)
{
    gva_t x = ((const struct staged_page *)a)->gva;
    gva_t y = ((const struct staged_page *)b)->gva;
    return x < y ? -1 : x > y;
}

/* How many of the n staged pages from page i on are one run: adjacent
 * in the guest, adjacent in the store (pages new to the store are added
 * in address order, so a process that rewrites a library's pages as the
 * first one did finds them adjacent again), in the VMA of page i. */
static size_t stored_run(const struct vmm_aspace *as,
                         const struct staged_page *pages, const uint64_t *off,
                         const int *rc, size_t i, size_t n)
{
    const struct vmm_vma *v = vmm_as_find_vma(as, pages[i].gva);
    size_t j = i + 1;
    while (j < n && rc[j] == 0 && v &&
           pages[j].gva == pages[j - 1].gva + VMM_PAGE_SIZE &&
           off[j] == off[j - 1] + VMM_PAGE_SIZE &&
           pages[j].gva + VMM_PAGE_SIZE <= v->end)
        j++;
    return j - i;
}

void vmm_as_stage_log(struct vmm_aspace *as, struct vmm_stored_log *log)
{
    as->stored_log = log;
}

static void log_stored(struct vmm_aspace *as, gva_t gva, uint64_t len,
                       uint64_t off)
{
    struct vmm_stored_log *log = as->stored_log;
    if (!log)
        return;
    if (log->n == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 8;
        void *grown = realloc(log->runs, cap * sizeof(*log->runs));
        if (!grown) {
            log->partial = true;
            return;
        }
        log->runs = grown;
        log->cap = cap;
    }
    log->runs[log->n++] = (struct vmm_stored_run){gva, len, off};
}

int vmm_as_map_stored_run(struct vmm_aspace *as, gva_t gva, uint64_t len,
                          uint64_t off)
{
    int rc = map_stored_run(as, gva, len, off);
    if (rc == 0)
        return 0;
    uint8_t page[VMM_PAGE_SIZE]; /* a private copy, as a stage's end */
    for (uint64_t k = 0; k < len; k += VMM_PAGE_SIZE) {
        if (pread(vmm_page_store_fd(), page, VMM_PAGE_SIZE,
                  (off_t)(off + k)) != VMM_PAGE_SIZE)
            return -EIO;
        int wrc = vmm_as_poke(as, gva + k, page, VMM_PAGE_SIZE);
        if (wrc < 0)
            return wrc;
    }
    return 0;
}

bool vmm_as_stored_at(const struct vmm_aspace *as, gva_t gva, uint64_t *off)
{
    const struct vmm_vma *v = vmm_as_find_vma(as, gva);
    if (!v || !v->image || v->image != page_store_object() ||
        !(v->flags & VMM_VMA_DIRECT))
        return false;
    *off = v->image_off + ((gva & VMM_PAGE_MASK) - v->start);
    return true;
}

/* Whether w continues v as a piece of the same direct VMA would: the
 * same file at the next offset and guest-physical page, the same rights. */
static bool piece_follows(const struct vmm_vma *v, const struct vmm_vma *w)
{
    uint64_t len = v->end - v->start;
    return w->start == v->end && w->gpa == v->gpa + len &&
           w->file_off == v->file_off + len && w->file == v->file &&
           w->dev == v->dev && w->ino == v->ino && w->prot == v->prot &&
           w->flags == v->flags && !w->shared && !w->eof_at &&
           (v->name == w->name ||
            (v->name && w->name && strcmp(v->name, w->name) == 0));
}

int vmm_as_join_stored(struct vmm_aspace *as, gva_t lo, gva_t hi,
                       uint64_t off)
{
    struct vmm_shared *store = page_store_object();
    size_t i = vma_index_after(as, lo), n = 0;
    if (!store || lo >= hi || i >= as->nr_vmas)
        return -EINVAL;
    struct vmm_vma *first = as->vmas[i];
    if (first->start > lo || !stage_eligible(first, lo))
        return -EINVAL;
    for (size_t k = i;; k++, n++) {
        const struct vmm_vma *v = as->vmas[k];
        if (!(v->flags & VMM_VMA_DIRECT) || v->shared || v->eof_at ||
            (v->flags & VMM_VMA_LAZY) || (k > i && !piece_follows(as->vmas[k - 1], v)))
            return -EINVAL;
        if (v->end >= hi)
            break;
        if (k + 1 >= as->nr_vmas)
            return -EINVAL;
    }
    if (n == 0 && first->image == store &&
        first->image_off + (lo - first->start) == off)
        return 0; /* one piece already */
    int rc = vma_split_at(as, lo);
    if (rc == 0)
        rc = vma_split_at(as, hi);
    if (rc < 0)
        return rc;
    i = vma_index_after(as, lo);
    if ((rc = map_from_image(as, as->vmas[i], hi, store, off)) < 0)
        return rc;
    while (i + 1 < as->nr_vmas && as->vmas[i + 1]->start < hi) {
        if (as->vmas[i + 1]->flags & VMM_VMA_ACCOUNT)
            as->account_bytes += as->vmas[i + 1]->end - as->vmas[i + 1]->start;
        vma_remove_raw(as, i + 1);
    }
    vma_changed(as, lo, hi);
    as->tlb_flushes_asked++; /* other host pages behind the same gpa */
    return 0;
}

int vmm_as_stage_end(struct vmm_aspace *as)
{
    struct vmm_stage *st = as->stage;
    if (!st || --st->depth > 0)
        return 0;
    as->stage = NULL;
    size_t n = st->n;
    uint64_t *off = calloc(n ? n : 1, sizeof(*off));
    int *rc = calloc(n ? n : 1, sizeof(*rc));
    int first_rc = 0;
    if ((!off || !rc) && as->stored_log && n > 0)
        as->stored_log->partial = true;
    if (!off || !rc) { /* every page a private copy, as without the stage */
        for (size_t i = 0; i < n; i++) {
            int wrc = vmm_as_poke(as, st->pages[i].gva, st->pages[i].bytes,
                                  VMM_PAGE_SIZE);
            if (!first_rc)
                first_rc = wrc < 0 ? wrc : -ENOMEM;
        }
        n = 0;
    }
    if (n > 1)
        qsort(st->pages, n, sizeof(*st->pages), staged_by_address);
    for (size_t i = 0; i < n; i++)
        rc[i] = vmm_page_store_put(st->pages[i].bytes, &off[i]);
    for (size_t i = 0; i < n;) {
        size_t run = 1;
        if (rc[i] == 0) {
            run = stored_run(as, st->pages, off, rc, i, n);
            rc[i] = map_stored_run(as, st->pages[i].gva, run * VMM_PAGE_SIZE,
                                   off[i]);
        }
        if (rc[i] == 0)
            log_stored(as, st->pages[i].gva, run * VMM_PAGE_SIZE, off[i]);
        else if (as->stored_log)
            as->stored_log->partial = true;
        for (size_t k = i; k < i + run && rc[i] < 0; k++) {
            /* a private copy, as without the stage */
            const struct staged_page *sp = &st->pages[k];
            int wrc = vmm_as_poke(as, sp->gva, sp->bytes, VMM_PAGE_SIZE);
            if (!first_rc)
                first_rc = wrc < 0 ? wrc : rc[i];
        }
        i += run;
    }
    free(off);
    free(rc);
    stage_free(st);
    return first_rc;
}
