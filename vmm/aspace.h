/*
 * aspace.h - guest physical memory, host-built page tables and the VMA list
 * of one guest address space. Pure code: no KVM, testable without /dev/kvm.
 *
 * Invariants:
 *  - Guest-physical memory is one host reservation (hva_base); gpa X lives at
 *    hva_base + X. Extents come from a first-fit free list, then a bump top.
 *  - Every VMA but a lazy one is backed by ONE contiguous physical extent:
 *    gpa(gva) = vma->gpa + (gva - vma->start). Splitting a VMA keeps this
 *    true.
 *  - A lazy VMA (VMM_VMA_LAZY: a large private anonymous mapping, such as a
 *    sanitizer's terabytes of MAP_NORESERVE shadow) has no backing and no
 *    PTEs at all; the first touch of one of its pages (a guest fault, or
 *    hvrun's copy path through vmm_as_fault_in) makes the 2 MiB-aligned
 *    stretch around it an ordinary VMA of its own with an extent, so every
 *    other rule here holds for it from then on.
 *  - Every page of a VMA whose prot is not PROT_NONE has a present PTE before
 *    the guest can touch it, except a file VMA's pages past its file's end
 *    (eof_at) and a lazy VMA's; a guest page fault is a real SIGSEGV, or
 *    there SIGBUS, or a lazy stretch to back.
 *  - Guest memory is reached by hvrun only through the vmm_as_copy_* family,
 *    which checks ranges and protections and returns -EFAULT.
 *  - Every change of what a VMA shows a mirror (its range, backing,
 *    protection, lazy state, file end) goes through vma_changed with its
 *    range: generation counts it and the dirty log keeps where it was,
 *    so a mirror (the ptrace stub) that replays the logged ranges is in
 *    line with the list. A split or join logs nothing (the same pages
 *    map the same backing).
 *  - vmm_as_find_free's hint never changes an answer: the walk it skips
 *    has no fit for that length (see free_hint_removed).
 *  - One address space may be run by several VMs at once (clone with
 *    CLONE_VM and without CLONE_THREAD: vmm_vm_create_sharing in
 *    backend.h); nothing here knows which, so whatever a vCPU caches of
 *    it is asked for through counters (generation, tlb_flushes_asked)
 *    that each VM compares with its own last look.
 */
#ifndef VMM_ASPACE_H
#define VMM_ASPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef uint64_t gva_t; /* guest virtual address */
typedef uint64_t gpa_t; /* guest physical address */

#define VMM_PAGE_SIZE 4096ULL
#define VMM_PAGE_MASK (~(VMM_PAGE_SIZE - 1))
#define VMM_PAGE_ALIGN_UP(x) (((x) + VMM_PAGE_SIZE - 1) & VMM_PAGE_MASK)
/* A 2 MiB page: a stretch of a VMA this size and alignment, backed by an
 * equally aligned extent, is mapped by one page-directory entry. */
#define VMM_HUGE_SIZE (2ULL << 20)

/* Lowest and one-past-highest user address (Linux x86-64, 4-level paging). */
#define VMM_USER_MIN 0x10000ULL
#define VMM_USER_END 0x7ffffffff000ULL
/*
 * A range no guest mapping may take, under every backend: the ptrace
 * backend's stub process lives there (vmm/ptrace_abi.h), and the kvm
 * backend refuses it too so that guests are laid out alike. It lies
 * between the top-down mmap base and the main stack; a MAP_FIXED there is
 * -ENOMEM, and searches for free space pass it by.
 */
#define VMM_STUB_RANGE_START 0x7ffff8000000ULL
#define VMM_STUB_RANGE_END 0x7ffff8010000ULL
static inline bool vmm_in_stub_range(uint64_t gva, uint64_t len)
{
    return gva < VMM_STUB_RANGE_END && gva + len > VMM_STUB_RANGE_START;
}

struct vmm_phys_extent {
    gpa_t gpa;
    uint64_t pages;
};

#define VMM_MEMFD_SEEN_SLOTS 256

struct vmm_physmem {
    uint8_t *hva_base;       /* host mapping of gpa 0 */
    uint64_t reserve_bytes;  /* size of the host reservation */
    gpa_t bump;              /* first never-allocated gpa */
    struct vmm_phys_extent *free_list; /* sorted by gpa, coalesced */
    size_t nr_free, cap_free;
    uint64_t used_pages;
    /* The bytes of hvrun's view mapped at hva_base: reserve_bytes, or
     * less while the view grows with the memory in use (the ptrace
     * backend's, its grow hook: vmm/ptrace.c). */
    uint64_t view_bytes;
    /* Called when bump grows past covered_top; registers memslots (kvm)
     * or maps more of the view (ptrace). */
    int (*grow)(void *ctx, gpa_t new_top);
    void *grow_ctx;
    gpa_t covered_top;
    /* -1: the reservation is private anonymous memory. Else a memfd whose
     * offset X is gpa X, mapped MAP_SHARED at hva_base (the ptrace backend
     * maps it into its stub process too); freed pages get a hole punched. */
    int memfd;
    /* hvrun's view of private memory follows the guest's write permission
     * (read-only where the guest may not write; host_protect_backing in
     * aspace.c): kvm's shadow MMU needs it. The ptrace backend's stub maps
     * the memory with its own protection, so its view stays writable and
     * a protection change or one of hvrun's own writes costs no host
     * mprotect. */
    bool view_follows_guest;
    /* Page tables in hvrun's own memory, not in this memory (pt_pages.h):
     * no vCPU walks them (the ptrace backend's stub has the host's). Set
     * before vmm_as_init. */
    bool tables_private;
    /* The pages hvrun has read or written through the memfd rather than
     * through its view: gpa page + 1 (0: none) above a count of those
     * accesses, direct-mapped; a page met often is taken through the view
     * (aspace.c, through_memfd). */
    uint64_t memfd_seen[VMM_MEMFD_SEEN_SLOTS];
};

/* vma flags */
#define VMM_VMA_SHARED 0x1   /* MAP_SHARED (anonymous or file) */
#define VMM_VMA_FILE 0x2     /* has a file identity for /proc/self/maps */
#define VMM_VMA_STACK 0x4
#define VMM_VMA_HEAP 0x8
#define VMM_VMA_GROWSDOWN 0x10
/* A special mapping ([vvar]): like Linux's VM_PFNMAP|VM_IO pages without
 * VM_MAYWRITE/VM_MAYEXEC. hvrun writes it (vmm_as_poke); the guest may
 * only read it, and the mm calls refuse what Linux refuses there. */
#define VMM_VMA_SPECIAL 0x20
/* MAP_NORESERVE: never charged (below), as under Linux's heuristic
 * overcommit, even when made writable later. */
#define VMM_VMA_NORESERVE 0x40
/* Charged to the address space's committed memory (account_bytes): what
 * Linux marks VM_ACCOUNT. Set when a private VMA is created writable (and
 * not NORESERVE/SPECIAL), when one becomes writable (mprotect), and for
 * shared anonymous memory; kept when write is taken away again. */
#define VMM_VMA_ACCOUNT 0x80
/* mlock'd (Linux's VM_LOCKED): nothing is paged out either way, but
 * madvise refuses to drop such pages, as Linux does. Not inherited by a
 * forked child. */
#define VMM_VMA_LOCKED 0x100
/* MADV_DONTFORK (VM_DONTCOPY): a forked child gets no mapping here. */
#define VMM_VMA_DONTFORK 0x200
/* MADV_WIPEONFORK (VM_WIPEONFORK): a forked child gets zeros here. */
#define VMM_VMA_WIPEONFORK 0x400
/* Not backed yet (see the invariants above); vmm_as_map makes a VMA lazy
 * when asked with this flag. Only private anonymous memory is lazy. */
#define VMM_VMA_LAZY 0x800
/* A backed stretch of a lazy VMA: /proc/self/maps shows it and its lazy
 * neighbours as the one mapping Linux has. */
#define VMM_VMA_FROM_LAZY 0x1000
/* A file mapping that can never gain write (Linux's VMA without
 * VM_MAYWRITE: MAP_SHARED from an fd not open for writing) or exec
 * (without VM_MAYEXEC: a file on a noexec mount); mprotect asking for it
 * is EACCES. */
#define VMM_VMA_NOMAYWRITE 0x2000
#define VMM_VMA_NOMAYEXEC 0x4000
/* memfd_secret memory (Linux's secretmem VMA): the proxy's readers of
 * another process's memory find no page here. */
#define VMM_VMA_SECRET 0x8000
/* mseal'd (Linux 6.10's VM_SEALED): the mm calls refuse to unmap, move,
 * remap over or reprotect it (EPERM), and madvise's discarding advice on
 * it when it is read-only anonymous memory. A forked child keeps it. */
#define VMM_VMA_SEALED 0x20000
/* A private file VMA whose pages are its file's own (Linux's page-cache
 * pages of a private mapping no one has written): the backing is a host
 * MAP_SHARED read-only mapping of vmm_vma.file at file_off, in hvrun's
 * view and (ptrace) in the stub, not a copy in guest memory. Only while
 * the guest may not write it: before anything is written there (the
 * guest gaining PROT_WRITE, hvrun's own forced writes: code rewriting,
 * a FOLL_FORCE write) the written part becomes an ordinary private copy
 * (vmm_as_materialise), as Linux's copy-on-write makes one. Set by
 * vmm_as_map_direct; hvrun's bookkeeping, not Linux's (the two kinds of
 * pages of one file mapping are one VMA to the guest). */
#define VMM_VMA_DIRECT 0x40000
/* Private anonymous mappings from this size up are made lazy by the mm
 * calls: the guest-physical reservation (256 GiB) cannot back a
 * sanitizer's 15 TiB shadow, and an extent this large is rarely touched
 * all over. Smaller ones keep eager backing, which costs no fault exits. */
#define VMM_LAZY_MIN (4ULL << 30)

/*
 * The host file object behind a MAP_SHARED mapping: a memfd for shared
 * anonymous memory, a dup of the guest's file otherwise. The VMA's backing
 * hva is a host MAP_SHARED mapping of it, so a forked child that maps the
 * same object at the same offset sees the same pages (Linux fork semantics).
 * Refcounted by the VMAs (of any address space) that use it.
 */
struct vmm_shared {
    int fd;         /* O_CLOEXEC host fd, owned */
    int host_prot;  /* PROT_READ, plus PROT_WRITE when fd is writable */
    bool anon;      /* memfd of MAP_SHARED|MAP_ANONYMOUS (its size: the
                       mapping's at mmap, as Linux's shmem object) */
    unsigned refs;
    /* A private mapping's file (vmm_as_keep_file): one object serves
     * every mapping of the same file. */
    bool private_file;
    uint64_t dev, ino; /* the host file's identity */
    /* Unique for the run's life (a backend's cache of what it opened for
     * this object is keyed by it: an address may be reused). */
    uint64_t id;
    /* Under kvm, an image mapped often enough gets a copy in a memfd that
     * direct mappings of it share, writable in hvrun's view (aspace.c:
     * image_view_fd); view_fd is that copy once view_made, or -errno when
     * it could not be made. */
    bool view_made;
    int view_fd;
    unsigned view_maps;       /* address spaces that mapped it so far */
    const void *view_last_as; /* the last of them */
};

struct vmm_vma {
    gva_t start, end;   /* page aligned, end exclusive */
    gpa_t gpa;          /* backing of start */
    int prot;           /* PROT_* */
    int flags;          /* VMM_VMA_* */
    uint64_t file_off;  /* offset of start in the file */
    uint64_t dev, ino;  /* file identity */
    char *name;         /* owned; NULL for anonymous */
    struct vmm_shared *shared; /* one reference; NULL when not shared */
    uint64_t shared_off;       /* offset of start in shared->fd */
    /* The file of a private file mapping (one reference, or NULL): what
     * its pages are re-read from (MADV_DONTNEED, mremap growing it) and
     * whose size says where it ends (SIGBUS past the end). */
    struct vmm_shared *file;
    /* A file mapping reaching past its file's end: the first page wholly
     * past it (clamped to [start, end] by vmm_vma_valid_end), 0 when the
     * file covers the VMA. Those pages have no PTE (kvm) or are PROT_NONE
     * in the stub (ptrace), the copy path refuses them (-EFAULT), and a
     * guest access there is Linux's SIGBUS (vmm_as_file_fault). */
    gva_t eof_at;
    /* A direct VMA (VMM_VMA_DIRECT) whose pages are not its file's own
     * but an image hvrun made of them, shared by every process of the run
     * (code rewritten once per run: syscall-proxy/mm/progress.c), at
     * image_off; NULL: the file's pages at file_off. One reference. */
    struct vmm_shared *image;
    uint64_t image_off;
};

/* The ranges vmm_aspace.dirty remembers (a mirror that falls further
 * behind replays wider ones). */
#define VMM_DIRTY_LOG 32

struct vmm_aspace {
    struct vmm_physmem *pm;
    gpa_t pml4_gpa;
    /* The tables' pages when pm->tables_private, else NULL (they are in
     * guest memory at their gpa). */
    struct vmm_pt_pages *pt_pages;
    /* Sorted by start, non-overlapping: nr_vmas pointers from vmas, which
     * points into vma_buf (cap_vmas entries) with room kept on both
     * sides, so an insertion or removal moves the shorter side of an
     * array of pointers (new mappings go at the low end of the mmap area,
     * a few entries from the front; a removal in the middle moves 8 bytes
     * a VMA). Each VMA is allocated on its own: a pointer to one stays
     * valid until it is removed. */
    struct vmm_vma **vmas;
    size_t nr_vmas, cap_vmas;
    struct vmm_vma **vma_buf;
    /* Bumped whenever a PTE loses permissions: every vCPU running on this
     * space (more than one when VMs share it, vmm_vm_create_sharing)
     * flushes its cached translations when the count differs from the
     * one it last flushed at. */
    uint64_t tlb_flushes_asked;
    uint64_t account_bytes; /* sum of the VMM_VMA_ACCOUNT VMAs' sizes */
    /* Bumped by every change of the VMA list (a VMA added, removed, split,
     * given new protections or a shared object): a backend that mirrors
     * the list elsewhere (ptrace's stub) compares it with the one it saw. */
    uint64_t generation;
    /* Where the changes counted by generation happened, newest last: a
     * backend that mirrors the list replays only these ranges
     * (vmm_as_changes_since). An entry's gen is that of its newest
     * change; when the log is full its two oldest entries become one
     * covering both, so it always covers every change since the space
     * was made, in ranges that only grow when the log overflows. */
    struct vmm_dirty_range {
        uint64_t gen;
        gva_t lo, hi;
    } dirty[VMM_DIRTY_LOG];
    size_t nr_dirty;
    /* Entries up to this generation have been read: a later change
     * starts an entry of its own rather than widening one of them. */
    uint64_t dirty_sealed;
    /* vmm_as_find_free's memory of its last search (see there). */
    struct vmm_free_hint {
        gva_t below, floor;
        uint64_t len; /* 0: no hint */
    } free_hint;
    /* mlockall(MCL_FUTURE): every VMA made from now on is VMM_VMA_LOCKED
     * (Linux's mm->def_flags; a fork's fresh address space starts
     * without it). */
    bool lock_future;
    /* vmm_as_map_count's last count and the generation it was for. */
    size_t map_count;
    uint64_t map_count_gen;
    bool map_count_known;
    /* The last pass of a count over the run's processes that counted this
     * space (syscall-proxy/mm/memlimit.c): a space several processes share
     * (CLONE_VM) counts once, found in one step, not by a look at every
     * earlier process. */
    uint64_t counted_pass;
    /* vmm_as_stage_begin's pages, NULL when not staging. */
    struct vmm_stage *stage;
    /* Where vmm_as_stage_end says what it mapped from the page store
     * (vmm_as_stage_log), NULL: nowhere. */
    struct vmm_stored_log *stored_log;
};

/* Physical allocator. hva_base must cover reserve_bytes; first_gpa is the
 * first allocatable address (below it lives the guest kernel area). */
int vmm_phys_init(struct vmm_physmem *pm, uint8_t *hva_base,
                  uint64_t reserve_bytes, gpa_t first_gpa);
void vmm_phys_destroy(struct vmm_physmem *pm);
/* hvrun's view of guest-physical memory that grows with its use
 * (physview.c): `first` bytes of fd (-1: private anonymous memory) mapped
 * at a 2 MiB-aligned *view_out with room for `reserve` above it where the
 * address space allows; 0 or -errno. */
int vmm_phys_view_place(int fd, uint64_t reserve, uint64_t first,
                        uint8_t **view_out);
/* pm's view (of pm->memfd) made to cover gpa top, in place: view_bytes
 * grows; -ENOMEM when another mapping is in the way or top is past the
 * reserve. */
int vmm_phys_view_grow(struct vmm_physmem *pm, gpa_t top);
/* Allocates npages contiguous zeroed pages. Returns 0 or -ENOMEM. */
int vmm_phys_alloc(struct vmm_physmem *pm, uint64_t npages, gpa_t *gpa_out);
/* The same for the backing of a VMA at gva: an extent big enough for a
 * 2 MiB page is placed at gva's offset modulo 2 MiB, so its aligned
 * stretches can be mapped by 2 MiB entries. */
int vmm_phys_alloc_for(struct vmm_physmem *pm, uint64_t npages, gva_t gva,
                       gpa_t *gpa_out);
/* Bytes of the allocated guest-physical memory the host has resident. */
uint64_t vmm_phys_resident_bytes(const struct vmm_physmem *pm);
/* Returns pages to the allocator; their contents become zero. */
void vmm_phys_free(struct vmm_physmem *pm, gpa_t gpa, uint64_t npages);
/* The same for pages whose host view is still the plain, writable backing
 * vmm_phys_alloc gave (no host file, image or move over it, no
 * protection taken away): their contents dropped in place, without a
 * fresh host mapping. */
void vmm_phys_free_plain(struct vmm_physmem *pm, gpa_t gpa, uint64_t npages);
/* Bytes the host holds in the memfd behind guest-physical memory (0 for
 * private anonymous memory, which counts as the process's own). */
uint64_t vmm_phys_memfd_bytes(const struct vmm_physmem *pm);
/* Drops the contents of private guest pages at hva (MADV_DONTNEED's
 * zero fill): a hole punched in the memfd when there is one. */
void vmm_phys_discard(const struct vmm_physmem *pm, void *hva, uint64_t len);
static inline void *vmm_phys_hva(const struct vmm_physmem *pm, gpa_t gpa)
{
    return pm->hva_base + gpa;
}

/* Address space: allocates the PML4. */
/*
 * Linux's view of the VMA list. hvrun's VMAs are units of backing: a
 * mapping grown by brk, a run of adjacent anonymous mmaps or a lazy
 * mapping's backed stretches are several VMAs here where Linux, which
 * merges compatible neighbours (vma_merge), has one. What the guest can
 * see of the list (/proc/self/maps, the vm.max_map_count limit) follows
 * Linux's view.
 */
/* Whether w, right after v, is part of the same Linux VMA. */
bool vmm_vma_linux_joins(const struct vmm_vma *v, const struct vmm_vma *w);
/* Linux's mm->map_count: the list's VMAs with joined neighbours as one;
 * exact when it could be near vmm_max_map_count (within 2), else an
 * upper bound that is not. */
size_t vmm_as_map_count(struct vmm_aspace *as);
/* The Linux VMA around gva as [*lo, *hi); NULL (and nothing set) when no
 * VMA holds gva. */
const struct vmm_vma *vmm_as_linux_vma(const struct vmm_aspace *as, gva_t gva,
                                       gva_t *lo, gva_t *hi);
/* The guest's vm.max_map_count: Linux's default (65530), less what the
 * ptrace backend's stub maps of its own and the pieces its host mappings
 * have beyond the guest's (VMM_MAP_COUNT_RESERVE: a library's text is the
 * file's pages, the run's rewritten pages and its progress image's, a
 * dozen host mappings for one of Linux's; 16 ended a run at the limit on
 * a host at Linux's default 65530); lower when the
 * host's limit is, because the ptrace stub holds every guest mapping in
 * a host process. The same on both backends, so a run near the limit
 * behaves the same on either. */
#define VMM_MAP_COUNT_LINUX 65530
#define VMM_MAP_COUNT_RESERVE 512
size_t vmm_max_map_count(void);

int vmm_as_init(struct vmm_aspace *as, struct vmm_physmem *pm);
/* Frees every VMA's backing (not the page-table pages, which die with pm). */
void vmm_as_destroy(struct vmm_aspace *as);
/* Frees only the VMA bookkeeping (names, shared references), for a caller
 * that drops the whole host reservation itself. */
void vmm_as_release(struct vmm_aspace *as);

/* Maps raw gpa -> gva pages without a VMA (the guest kernel area). */
int vmm_pt_map(struct vmm_aspace *as, gva_t gva, gpa_t gpa, uint64_t npages,
               uint64_t pte_flags);
/* Looks up the leaf PTE of gva; returns 0 when not mapped. */
uint64_t vmm_pt_lookup(const struct vmm_aspace *as, gva_t gva);

#define VMM_PTE_P 0x1ULL
#define VMM_PTE_W 0x2ULL
#define VMM_PTE_U 0x4ULL
#define VMM_PTE_A 0x20ULL  /* accessed */
#define VMM_PTE_D 0x40ULL  /* dirty */
#define VMM_PTE_PS 0x80ULL /* in a page-directory entry: a 2 MiB page */
#define VMM_PTE_NX (1ULL << 63)
#define VMM_PTE_ADDR 0x000ffffffffff000ULL

/*
 * Maps [gva, gva+len) with fresh zeroed backing, replacing anything there
 * (MAP_FIXED semantics). len is rounded up to pages. name may be NULL.
 * A range reaching past VMM_USER_END is -ENOMEM: nothing is ever mapped
 * over the guest kernel area, whatever a caller checked.
 */
int vmm_as_map(struct vmm_aspace *as, gva_t gva, uint64_t len, int prot,
               int flags, const char *name);
/* The bytes of [gva, gva+len) already charged (VMM_VMA_ACCOUNT). */
uint64_t vmm_as_charged_in(const struct vmm_aspace *as, gva_t gva,
                           uint64_t len);
/* The bytes of [gva, gva+len) in VMM_VMA_LOCKED VMAs (Linux's
 * locked_vm over the whole space: 0, UINT64_MAX). */
uint64_t vmm_as_locked_in(const struct vmm_aspace *as, gva_t gva,
                          uint64_t len);
/* The bytes vmm_as_protect(gva, len, prot) would newly charge. */
uint64_t vmm_as_protect_charge(const struct vmm_aspace *as, gva_t gva,
                               uint64_t len, int prot);
/* Removes mappings in [gva, gva+len); unmapped holes are fine. */
int vmm_as_unmap(struct vmm_aspace *as, gva_t gva, uint64_t len);
/* Changes protection; -ENOMEM if any page in the range is unmapped. */
int vmm_as_protect(struct vmm_aspace *as, gva_t gva, uint64_t len, int prot);
/* Moves/resizes a mapping per mremap; *new_gva is in (hint) and out. A
 * fixed target outside user space is -EINVAL. */
int vmm_as_remap(struct vmm_aspace *as, gva_t old_gva, uint64_t old_len,
                 uint64_t new_len, bool may_move, bool fixed, gva_t *new_gva);
/* Finds a free range of len bytes, top-down from below `below`: the
 * highest one, always (placement is deterministic). */
int vmm_as_find_free(struct vmm_aspace *as, uint64_t len, gva_t below,
                     gva_t *out);
/* The ranges where the VMA list changed after generation `gen` (at most
 * VMM_DIRTY_LOG, copied to out, sorted by lo and merged where they
 * overlap or touch); later changes are logged apart from them. A mirror
 * that brings [lo, hi) of each in line with the list is in line. */
size_t vmm_as_changes_since(struct vmm_aspace *as, uint64_t gen,
                            struct vmm_dirty_range *out);
bool vmm_as_range_free(const struct vmm_aspace *as, gva_t gva, uint64_t len);
/* True when [gva, gva+len) is covered by VMAs without a hole. */
bool vmm_as_range_mapped(const struct vmm_aspace *as, gva_t gva,
                         uint64_t len);
/* The first VMA that ends above gva (it may start above it), or NULL. */
struct vmm_vma *vmm_as_next_vma(const struct vmm_aspace *as, gva_t gva);
/* The last VMA that ends at or below gva, or NULL. */
struct vmm_vma *vmm_as_prev_vma(const struct vmm_aspace *as, gva_t gva);
/* True when a VMA overlapping [gva, gva+len) has all of flags. */
bool vmm_as_range_has_flags(const struct vmm_aspace *as, gva_t gva,
                            uint64_t len, int flags);
/* The VMA containing gva, or NULL. */
struct vmm_vma *vmm_as_find_vma(const struct vmm_aspace *as, gva_t gva);
/* Sets, then clears, VMA flags over the mapped parts of [gva, gva+len),
 * splitting VMAs at its edges as Linux's madvise/mlock do. 0 or -ENOMEM
 * (out of memory for a split). */
int vmm_as_set_flags(struct vmm_aspace *as, gva_t gva, uint64_t len,
                     int set, int clear);
/* Keeps the host file fd (its dup, one per distinct file) on the private
 * VMAs exactly covering [gva, gva+len) (vmm_vma.file). 0 or -errno. */
int vmm_as_keep_file(struct vmm_aspace *as, gva_t gva, uint64_t len, int fd);
/*
 * Backs the private file VMAs exactly covering [gva, gva+len) with their
 * file itself (VMM_VMA_DIRECT): for those that keep a file
 * (vmm_as_keep_file), are not writable and hold nothing of their own yet
 * (a fresh mapping: what their backing held is dropped). Others in the
 * range are left as they are. 0 or -errno (nothing changed for the VMA
 * that failed: it keeps its backing).
 */
int vmm_as_map_direct(struct vmm_aspace *as, gva_t gva, uint64_t len);
/* An image object over a copy of host fd (a sealed memfd hvrun wrote):
 * what vmm_as_direct_image and vmm_as_map_image map. One reference;
 * NULL when out of fds or memory. */
struct vmm_shared *vmm_image_new(int fd);
void vmm_image_put(struct vmm_shared *img);
/* The direct VMA exactly covering [gva, gva+len), still its file's own
 * pages, takes its pages from img at off instead (the same bytes but
 * where hvrun rewrote code). 0, or -EINVAL when no such VMA, or -errno
 * (the VMA is then as it was). */
int vmm_as_direct_image(struct vmm_aspace *as, gva_t gva, uint64_t len,
                        struct vmm_shared *img, uint64_t off);
/* A new VMA [gva, gva+len) (prot, flags, name as vmm_as_map) whose pages
 * are img's from off (VMM_VMA_DIRECT), copied only where written. 0 or
 * -errno (nothing mapped). */
int vmm_as_map_image(struct vmm_aspace *as, gva_t gva, uint64_t len,
                     int prot, int flags, const char *name,
                     struct vmm_shared *img, uint64_t off);
/* Where a direct VMA's pages come from: its image's or its file's object
 * (NULL for a VMA that is not direct), *off that of v->start there. */
static inline struct vmm_shared *vmm_vma_direct_source(const struct vmm_vma *v,
                                                       uint64_t *off)
{
    if (!(v->flags & VMM_VMA_DIRECT))
        return NULL;
    *off = v->image ? v->image_off : v->file_off;
    return v->image ? v->image : v->file;
}
/* Every direct VMA's backing mapped from its file again, after the whole
 * view was mapped from another memfd (a checkpoint's copy: vmm/snapshot.c).
 * 0 or -errno. */
int vmm_as_rebind_direct(struct vmm_aspace *as);
/* The direct VMAs' pages in [gva, gva+len) become private copies in guest
 * memory (split off at page edges), holding the same bytes. 0 or -errno. */
int vmm_as_materialise(struct vmm_aspace *as, gva_t gva, uint64_t len);
/* Whether all of [gva, gva+len) is direct VMAs' file pages (their bytes
 * are their file's, unwritten; an image's are not). */
bool vmm_as_range_direct(const struct vmm_aspace *as, gva_t gva,
                         uint64_t len);
/* The host fd a file VMA's pages come from (the shared object's or the
 * private mapping's file), or -1 for anonymous memory. */
int vmm_vma_file_fd(const struct vmm_vma *v);
/*
 * Gives the private pages of [gva, gva+len) (inside one VMA) the
 * contents they had when mapped: zeros, then the VMA's file from its
 * offset up to the file's end (MADV_DONTNEED on private memory, the
 * grown part of an mremap). The host backing is made writable for it and
 * given back the VMA's protection. 0 or -errno.
 */
int vmm_as_refill(struct vmm_aspace *as, gva_t gva, uint64_t len);
/* The end of what v's file backs: v->end, or where its file ends. */
static inline gva_t vmm_vma_valid_end(const struct vmm_vma *v)
{
    if (!v->eof_at || v->eof_at >= v->end)
        return v->end;
    return v->eof_at > v->start ? v->eof_at : v->start;
}
/* Looks at the file size of the file VMAs overlapping [gva, gva+len)
 * again (vmm_vma.eof_at): pages the file now covers get their PTEs (a
 * private VMA's are read from the file first), pages it no longer covers
 * lose them. 0 or -errno. */
int vmm_as_update_eof(struct vmm_aspace *as, gva_t gva, uint64_t len);
/* For a system call's access to [gva, gva+len) that stopped at a page
 * without a PTE, what Linux's fault in a copy would do: the sizes of the
 * files whose end it met are looked at again, and the lazy VMAs it meets
 * whose protection allows `need` (PROT_READ, PROT_WRITE, or 0 for hvrun's
 * own writes) are backed. True when some page became valid (copy again). */
bool vmm_as_fault_in(struct vmm_aspace *as, gva_t gva, uint64_t len, int need);
/* The host file (dev, ino) changed size (a guest's truncate): every file
 * VMA over it looks at its end again (pages past a shrunk end lose their
 * PTEs: SIGBUS, never a host SIGBUS in hvrun's copy path). */
void vmm_as_file_resized(struct vmm_aspace *as, uint64_t dev, uint64_t ino);
/* Every shared file VMA looks at its file's end again, for a guest access
 * the host could not back (KVM_RUN's EFAULT: a shared page past an end
 * hvrun was not told of, a file shrunk by a host process or by a call
 * that does not say it shrinks). The number of VMAs whose valid part
 * shrank: their pages past the end lost their PTEs, so the access runs
 * again into the guest's SIGBUS. */
int vmm_as_recheck_shared_eof(struct vmm_aspace *as);
/* A guest page fault at gva (write: a write access): 1 when the page is
 * mapped now (a lazy VMA's stretch backed, or a file VMA's file grown
 * over a page past its end: run the access again), 0 when it is past a
 * file's end (Linux's SIGBUS, BUS_ADRERR; also a page the VMA had whose
 * file shrank without hvrun being told), -1 when it is neither (the
 * fault is the guest's SIGSEGV). */
int vmm_as_guest_fault(struct vmm_aspace *as, gva_t gva, bool write);
/* Sets file identity on the VMAs exactly covering [gva, gva+len). */
void vmm_as_set_file(struct vmm_aspace *as, gva_t gva, uint64_t len,
                     uint64_t off, uint64_t dev, uint64_t ino,
                     const char *name);

/*
 * Makes the VMAs exactly covering [gva, gva+len) shared with host file
 * object fd at offset off: maps fd MAP_SHARED over their backing and keeps
 * a dup of it. The prior contents of the backing are dropped. 0 or -errno.
 */
int vmm_as_set_shared(struct vmm_aspace *as, gva_t gva, uint64_t len, int fd,
                      uint64_t off);
/* A writable shared object over host fd (its dup: a memfd hvrun made),
 * one reference, for vmm_as_attach_shared; NULL when out of fds or
 * memory. vmm_shared_get takes a reference, vmm_shared_put drops one. */
struct vmm_shared *vmm_shared_new(int fd);
struct vmm_shared *vmm_shared_get(struct vmm_shared *s);
void vmm_shared_put(struct vmm_shared *s);
/* The VMAs exactly covering [gva, gva+len) share s from off, as
 * vmm_as_set_shared's do a file (several ranges may map one object: the
 * same memory at several addresses). 0 or -errno. */
int vmm_as_attach_shared(struct vmm_aspace *as, gva_t gva, uint64_t len,
                         struct vmm_shared *s, uint64_t off);
/* Shared anonymous memory: backs [gva, gva+len) with a fresh memfd. */
int vmm_as_share_anon(struct vmm_aspace *as, gva_t gva, uint64_t len);

/*
 * fork: gives dst (empty) the same VMAs as src with a copy of their
 * contents. Only pages the host has ever made resident are copied, so the
 * cost follows the memory the parent really used, not what it mapped.
 * MAP_SHARED mappings (VMAs with a shared object) are not copied: dst maps
 * the same host object at the same offset, so both see the same pages.
 */
int vmm_as_clone(struct vmm_aspace *dst, const struct vmm_aspace *src);

/*
 * The one checked path to guest memory. Each checks that the whole range is
 * mapped with the needed protection (read for copy_in, write for copy_out)
 * and returns 0 or -EFAULT without a partial copy being reported as success.
 */
int vmm_as_copy_in(const struct vmm_aspace *as, void *dst, gva_t src,
                   size_t len);
int vmm_as_copy_out(const struct vmm_aspace *as, gva_t dst, const void *src,
                    size_t len);
/* Copies a NUL-terminated string of at most max bytes including the NUL.
 * Returns its length, -EFAULT, or -ENAMETOOLONG. */
long vmm_as_strncpy_in(const struct vmm_aspace *as, char *dst, gva_t src,
                       size_t max);
/*
 * Fills host iovecs covering [gva, gva+len) for a direct host read/write
 * into guest memory. Stops at the first page lacking prot; returns the
 * number of iovecs and sets *covered to the bytes they cover (may be less
 * than len: the caller treats a short cover like Linux, a partial transfer
 * or -EFAULT when nothing is covered).
 */
int vmm_as_host_iov(const struct vmm_aspace *as, gva_t gva, size_t len,
                    int prot, struct iovec *iov, int max_iov, size_t *covered);
/* Zeroes guest memory (for the ELF loader's bss) as vmm_as_poke writes
 * (the loader writes read-only segments too). */
int vmm_as_fill_zero(const struct vmm_aspace *as, gva_t dst, size_t len);
/* Reads guest memory ignoring the guest's protection (a FOLL_FORCE read:
 * PROT_NONE too); stops as copy_in does at lazy stretches and past a
 * file's end (-EFAULT). */
int vmm_as_peek(const struct vmm_aspace *as, void *dst, gva_t src,
                size_t len);
/* Writes guest memory ignoring PROT_WRITE (loader, vDSO, code rewriting,
 * FOLL_FORCE writes; signal frames use copy_out), whatever the host
 * backing's protection: a private VMA's read-only backing is made
 * writable for the copy and read-only again. A shared object hvrun maps
 * read-only, a lazy VMA's unbacked stretch and a page past a file's end
 * are -EFAULT: hvrun never faults writing guest memory. */
int vmm_as_poke(const struct vmm_aspace *as, gva_t dst, const void *src,
                size_t len);
/* The same for a few bytes of one page of a private VMA whose backing
 * vmm_as_protect made read-only (hvrun rewriting guest code): the page is
 * made writable on the host for the copy and read-only again (two host
 * mprotects). -EFAULT for a shared VMA or a range crossing a page. */
int vmm_as_poke_text(struct vmm_aspace *as, gva_t dst, const void *src,
                     size_t len);

/*
 * Code rewriting in one go (syscall-proxy/mm/cpuid_patch.c). Between
 * begin and end, pokes into pages a private VMA maps straight from its
 * file or image (VMM_VMA_DIRECT, wholly before the file's end) gather in
 * memory, and peeks see them there; end puts each such page in the run's
 * page store (page_store.c), where every process whose page came out the
 * same bytes finds it, and maps the page from there, read-only and
 * direct, in place of the private copy a poke makes otherwise. Nests.
 * end is 0 or the first -errno of a page that then got its bytes the
 * ordinary way (a private copy).
 */
void vmm_as_stage_begin(struct vmm_aspace *as);
int vmm_as_stage_end(struct vmm_aspace *as);
/* A page of hvrun's code for the guest (prot, flags and name as
 * vmm_as_map's), mapped direct from the page store's page of zeros, so
 * that what is staged into it is stored and shared like rewritten text;
 * 0 or -errno (the caller may map it the ordinary way). */
int vmm_as_map_stored(struct vmm_aspace *as, gva_t gva, int prot, int flags,
                      const char *name);

/* What a stage's end mapped from the page store: pages [gva, gva+len)
 * from the store's offset off onwards, one entry a run, in the order it
 * mapped them; partial when a page got a private copy instead (the log
 * then does not say everything the stage did). */
struct vmm_stored_run {
    gva_t gva;
    uint64_t len, off;
};
struct vmm_stored_log {
    struct vmm_stored_run *runs;
    size_t n, cap;
    bool partial;
};
/* The next vmm_as_stage_end that ends the outermost stage logs into log
 * (NULL: stops logging). */
void vmm_as_stage_log(struct vmm_aspace *as, struct vmm_stored_log *log);
/* Maps the store's pages at off onwards at [gva, gva+len), inside one
 * VMA that may be staged, as a stage's end does (a private copy of the
 * stored bytes where the store's own mapping fails). 0 or -errno. */
int vmm_as_map_stored_run(struct vmm_aspace *as, gva_t gva, uint64_t len,
                          uint64_t off);
/* Whether the page at gva is mapped from the page store, and from which
 * offset. */
bool vmm_as_stored_at(const struct vmm_aspace *as, gva_t gva, uint64_t *off);
/* [lo, hi), the pieces of one direct VMA that rewriting mapped apart (the
 * store's pages between its file's or image's), mapped whole from the
 * store's run at off, which the caller has given the same bytes: one VMA
 * and one host mapping where there were a dozen or more, so a fork copies
 * one and every live VM's mmu notifier sees one change. -EINVAL when the
 * range is not such pieces. */
int vmm_as_join_stored(struct vmm_aspace *as, gva_t lo, gva_t hi,
                       uint64_t off);

/* The run's store of rewritten code pages (page_store.c): page's offset
 * there, the page added if no stored page has its bytes; -ENOSPC when the
 * store is full. The store's fd, -1 before the first page. */
int vmm_page_store_put(const uint8_t *page, uint64_t *off);
/* Room for n pages as one run at the store's end, its offset in off:
 * the caller writes their bytes there (vmm_page_store_fd) before any
 * mapping of them, and never again (a run that a text maps whole,
 * cpuid_patch.c's memo; never found by its bytes). -ENOSPC past
 * PAGE_STORE_MAX pages in all. */
int vmm_page_store_reserve(size_t n, uint64_t *off);
int vmm_page_store_fd(void);

#endif
