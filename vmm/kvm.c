/*
 * kvm.c - the KVM backend: /dev/kvm, one VM with one vCPU per guest process,
 * memslots grown on demand, exits decoded into vmm_events.
 *
 * The only file (with kvm_host.c) that includes <linux/kvm.h>. It works on
 * kvm_pvm, where SYSCALL stays at CPL3 and SYSRET cannot be used, and on
 * VMX/SVM, where SYSCALL enters CPL0: in both cases the entry stub exits with
 * an OUT and the host writes RIP/RFLAGS/CS/SS to return to user mode.
 *
 * Shared memory (clone with CLONE_VM, no CLONE_THREAD: vmm_vm_create_sharing):
 * the child's VM keeps its own guest kernel area (GDT, IDT, TSS, the
 * kernel stacks, the vDSO's call count: gpa 0 to GK_KERNEL_AREA_END of its
 * own reservation, memslot 0), and every memslot above maps the owner's
 * reservation at the same gpa; CR3 is the owner's PML4. The page tables
 * are thus one set in one memory, the kernel area's entries in them naming
 * gpas that each VM resolves to its own pages. Memslots the owner adds
 * later are added before the sharer's next KVM_RUN (share_new_slots), and
 * a PTE that lost permissions is flushed from every vCPU by comparing the
 * space's tlb_flushes_asked with the count each last flushed at. Host
 * changes of the backing (mprotect, the fresh mapping of a freed extent)
 * reach every VM through the host's MMU notifier, which all VMs of the
 * process share. Cost: one KVM_SET_USER_MEMORY_REGION per 256 MiB of the
 * owner's memory at the clone (and at growth), nothing per access.
 */
#include "backend.h"
#include "backend_impl.h"
#include "kvm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <signal.h>

#include "../guestkernel/gk_abi.h"
#include "cpu_x86_64.h"

#define GUEST_PHYS_RESERVE (256ULL << 30) /* guest-physical space per VM */
/* hvrun's view of it at first; it grows with the memslots (physview.c) */
#define VIEW_FIRST (4ULL << 30)
#define MEMSLOT_BYTES (256ULL << 20)      /* modest slots, added on demand */

#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_CSTAR 0xc0000083
#define MSR_SFMASK 0xc0000084
#define MSR_KERNEL_GS_BASE 0xc0000102

#define CR0_PE 0x1ULL
#define CR0_MP 0x2ULL
#define CR0_ET 0x10ULL
#define CR0_NE 0x20ULL
#define CR0_WP 0x10000ULL
#define CR0_AM 0x40000ULL
#define CR0_PG 0x80000000ULL
#define CR4_PAE 0x20ULL
#define CR4_OSFXSR 0x200ULL
#define CR4_OSXMMEXCPT 0x400ULL
#define CR4_FSGSBASE 0x10000ULL
#define CR4_OSXSAVE 0x40000ULL
#define EFER_SCE 0x1ULL
#define EFER_LME 0x100ULL
#define EFER_LMA 0x400ULL
#define EFER_NXE 0x800ULL
#define CR3_PWT 0x8ULL

/* User-changeable RFLAGS bits (Linux FLAG_MASK), plus IF which is forced. */
#define RFLAGS_USER_MASK 0x254dd5ULL
#define RFLAGS_FIXED 0x202ULL

extern const uint8_t gk_blob_start[], gk_blob_end[];

struct kvm_vm {
    struct vmm_vm base; /* host, pm, as, regs, stats */
    int vm_fd, vcpu_fd;
    struct kvm_run *run;
    size_t run_size;
    uint8_t *phys_hva;
    int nr_slots;
    /* Running on another VM's memory: the gpa up to which memslots map
     * it, and the owner's tlb_flushes_asked as of this vCPU's last flush. */
    gpa_t shared_top;
    uint64_t tlb_flushes_seen;
    bool sregs_dirty;
    uint32_t tss_limit;
    uint64_t last_dr6; /* of the last KVM_EXIT_DEBUG (vmm_vm_take_dr6) */
    /* The debug registers KVM_SET_GUEST_DEBUG was last given (dr7 0:
     * none), for a checkpoint's new vCPU (kvm_vm_respawn). */
    uint64_t dr_addr[4], dr7;
};

static void set_why(char *why, size_t len, const char *step, int err)
{
    if (why && len)
        snprintf(why, len, "%s: %s", step, strerror(err));
}

/* ---- memory -------------------------------------------------------------- */

static int grow_memslots(void *ctx, gpa_t new_top)
{
    struct kvm_vm *vm = ctx;
    while (vm->base.pm.covered_top < new_top) {
        struct kvm_userspace_memory_region r = {
            .slot = (uint32_t)vm->nr_slots,
            .guest_phys_addr = vm->base.pm.covered_top,
            .memory_size = MEMSLOT_BYTES,
            .userspace_addr = (uint64_t)(uintptr_t)(vm->phys_hva +
                                                    vm->base.pm.covered_top),
        };
        if (vm->base.pm.covered_top + MEMSLOT_BYTES > vm->base.pm.reserve_bytes)
            return -ENOMEM;
        int rc = vmm_phys_view_grow(&vm->base.pm,
                                    vm->base.pm.covered_top + MEMSLOT_BYTES);
        if (rc < 0)
            return rc;
        if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
            return -errno;
        vm->nr_slots++;
        vm->base.pm.covered_top += MEMSLOT_BYTES;
    }
    return 0;
}

static int set_memslot(struct kvm_vm *vm, uint32_t slot, gpa_t gpa,
                       uint64_t bytes, uint8_t *hva)
{
    struct kvm_userspace_memory_region r = {
        .slot = slot,
        .guest_phys_addr = gpa,
        .memory_size = bytes,
        .userspace_addr = (uint64_t)(uintptr_t)hva,
    };
    return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0 ? -errno : 0;
}

/* The memslots of owner's memory added since the last look, each up to
 * the owner's next slot boundary (its slots are MEMSLOT_BYTES). */
static int share_new_slots(struct kvm_vm *vm, const struct kvm_vm *owner)
{
    while (vm->shared_top < owner->base.pm.covered_top) {
        gpa_t end = (vm->shared_top / MEMSLOT_BYTES + 1) * MEMSLOT_BYTES;
        int rc = set_memslot(vm, (uint32_t)vm->nr_slots, vm->shared_top,
                             end - vm->shared_top,
                             owner->phys_hva + vm->shared_top);
        if (rc < 0)
            return rc;
        vm->nr_slots++;
        vm->shared_top = end;
    }
    return 0;
}

/* The memslots of a VM that has none (KVM_CREATE_VM's, or all deleted)
 * running on owner's memory: its own kernel area, then owner's memory
 * above it. */
static int share_slots(struct kvm_vm *vm, const struct kvm_vm *owner)
{
    int rc = set_memslot(vm, 0, 0, GK_KERNEL_AREA_END, vm->phys_hva);
    if (rc < 0)
        return rc;
    vm->nr_slots = 1;
    vm->shared_top = GK_KERNEL_AREA_END;
    return share_new_slots(vm, owner);
}

/* A fresh VM that has never run: its memslots become its own kernel area
 * and the owner's memory above it, its CR3 the owner's PML4. */
static int kvm_vm_share(struct vmm_vm *base, struct vmm_vm *owner_base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    int rc = 0;
    for (int slot = 0; slot < vm->nr_slots && rc == 0; slot++)
        rc = set_memslot(vm, (uint32_t)slot, 0, 0, NULL); /* deleted */
    if (rc == 0)
        rc = share_slots(vm, (const struct kvm_vm *)owner_base);
    if (rc < 0)
        return rc;
    vm->run->s.regs.sregs.cr3 = owner_base->as.pml4_gpa;
    vm->tlb_flushes_seen = owner_base->as.tlb_flushes_asked;
    vm->sregs_dirty = true;
    return 0;
}

/* Accessed+dirty preset, as for user pages (see aspace.c). */
#define GK_PTE_AD (VMM_PTE_A | VMM_PTE_D)

/* Writes the GDT, IDT, TSS and stub blob and maps them high. */
static int setup_kernel_area(struct kvm_vm *vm)
{
    uint8_t *base = vm->phys_hva;
    size_t blob_len = (size_t)(gk_blob_end - gk_blob_start);
    if (blob_len > GK_STACK0_GPA - GK_BLOB_GPA)
        return -E2BIG;
    vm->tss_limit = vmm_cpu_build_tss(base + GK_TSS_GPA,
                                           GK_KERNEL_VA + GK_STACK0_TOP,
                                           GK_KERNEL_VA + GK_IST1_TOP);
    vmm_cpu_build_gdt((uint64_t *)(base + GK_GDT_GPA),
                      GK_KERNEL_VA + GK_TSS_GPA, vm->tss_limit);
    vmm_cpu_build_idt(base + GK_IDT_GPA, GK_KERNEL_VA + GK_EXC_GPA);
    memcpy(base + GK_BLOB_GPA, gk_blob_start, blob_len);

    struct {
        gpa_t gpa;
        uint64_t pages, flags;
    } maps[] = {
        {GK_GDT_GPA, 3, VMM_PTE_P | VMM_PTE_W | VMM_PTE_NX | GK_PTE_AD},
        /* The entry stub runs at CPL3 on kvm_pvm, so it must be U=1. */
        {GK_ENTRY_GPA, 1, VMM_PTE_P | VMM_PTE_U | GK_PTE_AD},
        {GK_EXC_GPA, 1, VMM_PTE_P | GK_PTE_AD},
        {GK_STACK0_GPA, (GK_IST1_TOP - GK_STACK0_GPA) / VMM_PAGE_SIZE,
         VMM_PTE_P | VMM_PTE_W | VMM_PTE_NX | GK_PTE_AD},
        /* The vDSO's call count: written by user code, this VM's own. */
        {GK_VDSO_CALLS_GPA, 1,
         VMM_PTE_P | VMM_PTE_W | VMM_PTE_U | VMM_PTE_NX | GK_PTE_AD},
    };
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
        int rc = vmm_pt_map(&vm->base.as, GK_KERNEL_VA + maps[i].gpa, maps[i].gpa,
                            maps[i].pages, maps[i].flags);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- vCPU state ---------------------------------------------------------- */

static void user_segments(struct kvm_sregs *s)
{
    struct kvm_segment code = {.base = 0, .limit = 0xffffffff,
                               .selector = GK_SEL_USER_CS, .type = 11,
                               .present = 1, .dpl = 3, .db = 0, .s = 1,
                               .l = 1, .g = 1};
    struct kvm_segment data = {.base = 0, .limit = 0xffffffff,
                               .selector = GK_SEL_USER_DS, .type = 3,
                               .present = 1, .dpl = 3, .db = 1, .s = 1,
                               .l = 0, .g = 1};
    s->cs = code;
    s->ss = data;
}

static int setup_sregs(struct kvm_vm *vm, uint32_t tss_limit)
{
    struct kvm_sregs s;
    if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &s) < 0)
        return -errno;
    s.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_AM | CR0_PG;
    s.cr3 = vm->base.as.pml4_gpa;
    s.cr4 = CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT | CR4_OSXSAVE;
    if (vmm_host_hwcap2(vm->base.host) & 2)
        s.cr4 |= CR4_FSGSBASE;
    s.efer = EFER_SCE | EFER_LME | EFER_LMA | EFER_NXE;
    s.gdt.base = GK_KERNEL_VA + GK_GDT_GPA;
    s.gdt.limit = 4095;
    s.idt.base = GK_KERNEL_VA + GK_IDT_GPA;
    s.idt.limit = 256 * 16 - 1;
    struct kvm_segment tr = {.base = GK_KERNEL_VA + GK_TSS_GPA, .limit = tss_limit,
                             .selector = GK_SEL_TSS, .type = 11,
                             .present = 1, .s = 0};
    s.tr = tr;
    struct kvm_segment ldt = {.selector = 0, .type = 2, .present = 1,
                              .limit = 0xffff};
    s.ldt = ldt;
    user_segments(&s);
    struct kvm_segment nul = s.ss;
    nul.selector = 0;
    s.ds = s.es = s.fs = s.gs = nul;
    if (ioctl(vm->vcpu_fd, KVM_SET_SREGS, &s) < 0)
        return -errno;
    return 0;
}

static int setup_msrs(struct kvm_vm *vm)
{
    struct {
        struct kvm_msrs hdr;
        struct kvm_msr_entry e[5];
    } m;
    memset(&m, 0, sizeof(m));
    uint64_t entry = GK_KERNEL_VA + GK_ENTRY_GPA;
    struct kvm_msr_entry list[] = {
        {.index = MSR_STAR,
         .data = (uint64_t)GK_SEL_USER32_CS << 48 |
                 (uint64_t)GK_SEL_KERNEL_CS << 32},
        {.index = MSR_LSTAR, .data = entry},
        {.index = MSR_CSTAR, .data = entry},
        /* TF, DF, IF, IOPL, NT, AC cleared on entry, as Linux does. */
        {.index = MSR_SFMASK, .data = 0x47700},
        {.index = MSR_KERNEL_GS_BASE, .data = 0},
    };
    memcpy(m.e, list, sizeof(list));
    m.hdr.nmsrs = 5;
    int rc = ioctl(vm->vcpu_fd, KVM_SET_MSRS, &m);
    if (rc != 5)
        return rc < 0 ? -errno : -EINVAL;
    return 0;
}

static int setup_xcr0(struct kvm_vm *vm)
{
    struct kvm_xcrs x;
    memset(&x, 0, sizeof(x));
    x.nr_xcrs = 1;
    x.xcrs[0].xcr = 0;
    x.xcrs[0].value = kvm_host_xstate(vm->base.host)->xcr0;
    return ioctl(vm->vcpu_fd, KVM_SET_XCRS, &x) < 0 ? -errno : 0;
}

static int kvm_vm_reset_xstate(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    struct kvm_xsave *xs = calloc(1, sizeof(*xs));
    if (!xs)
        return -ENOMEM;
    uint16_t fcw = 0x37f;
    uint32_t mxcsr = 0x1f80;
    memcpy((uint8_t *)xs->region, &fcw, 2);
    memcpy((uint8_t *)xs->region + 24, &mxcsr, 4);
    int rc = ioctl(vm->vcpu_fd, KVM_SET_XSAVE, xs) < 0 ? -errno : 0;
    free(xs);
    return rc;
}

static int kvm_vm_get_xstate(struct vmm_vm *base, void *buf, size_t len)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    size_t bytes = vmm_vm_xsave_bytes(&vm->base);
    if (len < bytes || bytes > sizeof(struct kvm_xsave))
        return -EINVAL;
    struct kvm_xsave *xs = calloc(1, sizeof(*xs));
    if (!xs)
        return -ENOMEM;
    int rc = ioctl(vm->vcpu_fd, KVM_GET_XSAVE, xs) < 0 ? -errno : 0;
    if (rc == 0)
        memcpy(buf, xs->region, bytes);
    free(xs);
    return rc;
}

static int kvm_vm_set_xstate(struct vmm_vm *base, const void *buf, size_t len)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    size_t bytes = vmm_vm_xsave_bytes(&vm->base);
    if (len < bytes || bytes > sizeof(struct kvm_xsave))
        return -EINVAL;
    struct kvm_xsave *xs = calloc(1, sizeof(*xs));
    if (!xs)
        return -ENOMEM;
    memcpy(xs->region, buf, bytes);
    /* Only the states the model enables; reserved MXCSR bits would make
     * XRSTOR fault, so they are cleared like Linux's fpu__restore_sig. */
    uint64_t bv;
    memcpy(&bv, (uint8_t *)xs->region + 512, 8);
    bv &= vmm_vm_xcr0(&vm->base);
    memcpy((uint8_t *)xs->region + 512, &bv, 8);
    memset((uint8_t *)xs->region + 520, 0, 56); /* xcomp_bv + reserved */
    uint32_t mxcsr;
    memcpy(&mxcsr, (uint8_t *)xs->region + 24, 4);
    mxcsr &= 0xffff;
    memcpy((uint8_t *)xs->region + 24, &mxcsr, 4);
    int rc = ioctl(vm->vcpu_fd, KVM_SET_XSAVE, xs) < 0 ? -errno : 0;
    free(xs);
    return rc;
}

/* ---- lifecycle ----------------------------------------------------------- */

static int create_vcpu(struct kvm_vm *vm, char *why, size_t why_len)
{
    vm->vcpu_fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, 0);
    if (vm->vcpu_fd < 0) {
        set_why(why, why_len, "KVM_CREATE_VCPU", errno);
        return -errno;
    }
    int size = kvm_host_run_size(vm->base.host);
    vm->run = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED,
                   vm->vcpu_fd, 0);
    if (vm->run == MAP_FAILED) {
        vm->run = NULL;
        set_why(why, why_len, "mmap kvm_run", errno);
        return -errno;
    }
    vm->run_size = (size_t)size;
    int rc = kvm_host_set_cpuid(vm->base.host, vm->vcpu_fd);
    const char *step = "KVM_SET_CPUID2";
    if (rc == 0 && (rc = setup_sregs(vm, vm->tss_limit)) < 0)
        step = "KVM_SET_SREGS";
    if (rc == 0 && (rc = setup_msrs(vm)) < 0)
        step = "KVM_SET_MSRS";
    if (rc == 0 && (rc = setup_xcr0(vm)) < 0)
        step = "KVM_SET_XCRS";
    if (rc == 0 && (rc = kvm_vm_reset_xstate(&vm->base)) < 0)
        step = "KVM_SET_XSAVE";
    if (rc < 0) {
        set_why(why, why_len, step, -rc);
        return rc;
    }
    vm->run->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
    /* The synced copy is only filled by KVM_RUN; seed it so edits before
     * the first run (fs base, segments) start from the real state. */
    if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &vm->run->s.regs.sregs) < 0) {
        set_why(why, why_len, "KVM_GET_SREGS", errno);
        return -errno;
    }
    return 0;
}

/* The host memory behind guest-physical memory, 2 MiB-aligned so that a
 * 2 MiB-aligned guest extent is a 2 MiB-aligned host range (the host can
 * back it with one huge page): private anonymous, VIEW_FIRST bytes, grown
 * in place as memslots are added (physview.c). */
static int reserve_guest_memory(struct kvm_vm *vm)
{
    return vmm_phys_view_place(-1, GUEST_PHYS_RESERVE, VIEW_FIRST,
                               &vm->phys_hva);
}

/* Builds a fresh VM (the pool's worker calls this too). */
int kvm_vm_build(struct vmm_host *host, struct vmm_vm **out, char *why,
                 size_t why_len)
{
    struct kvm_vm *vm = calloc(1, sizeof(*vm));
    if (!vm)
        return -ENOMEM;
    vm->base.ops = &kvm_backend_ops;
    vm->base.host = host;
    vm->vcpu_fd = -1;
    vm->vm_fd = ioctl(kvm_host_fd(host), KVM_CREATE_VM, 0);
    if (vm->vm_fd < 0) {
        int err = errno;
        set_why(why, why_len, "KVM_CREATE_VM", err);
        free(vm);
        return -err;
    }
    int rc = reserve_guest_memory(vm);
    if (rc < 0) {
        set_why(why, why_len, "reserving guest memory", -rc);
        goto fail;
    }
    vmm_phys_init(&vm->base.pm, vm->phys_hva, GUEST_PHYS_RESERVE,
                  GK_KERNEL_AREA_END);
    vm->base.pm.view_bytes = VIEW_FIRST;
    vm->base.pm.grow = grow_memslots;
    vm->base.pm.grow_ctx = vm;
    rc = grow_memslots(vm, GK_KERNEL_AREA_END);
    if (rc < 0) {
        set_why(why, why_len, "KVM_SET_USER_MEMORY_REGION", -rc);
        goto fail;
    }
    if ((rc = vmm_as_init(&vm->base.as, &vm->base.pm)) < 0 ||
        (rc = setup_kernel_area(vm)) < 0) {
        set_why(why, why_len, "guest kernel area", -rc);
        goto fail;
    }
    if ((rc = create_vcpu(vm, why, why_len)) < 0)
        goto fail;
    *out = &vm->base;
    return 0;
fail:
    kvm_vm_teardown(&vm->base);
    return rc;
}

static int kvm_vm_create(struct vmm_host *host, struct vmm_vm **out, char *why,
                  size_t why_len)
{
    struct vmm_vm *vm = kvm_pool_take(kvm_host_pool(host));
    if (vm) {
        *out = vm;
        return 0;
    }
    return kvm_vm_build(host, out, why, why_len);
}

static void kvm_vm_destroy(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    if (!vm)
        return;
    /* The main thread's share: VMA bookkeeping holds references to shared
     * memory objects that other VMs use too. */
    vmm_as_release(&vm->base.as);
    vmm_phys_destroy(&vm->base.pm);
    if (!kvm_pool_retire(kvm_host_pool(vm->base.host), base))
        kvm_vm_teardown(base);
}

/* Unmaps kvm_run and closes the vCPU's and the VM's fds (-1 after). */
static void close_kvm_objects(struct kvm_vm *vm)
{
    if (vm->run)
        munmap(vm->run, vm->run_size);
    vm->run = NULL;
    if (vm->vcpu_fd >= 0)
        close(vm->vcpu_fd);
    if (vm->vm_fd >= 0)
        close(vm->vm_fd);
    vm->vcpu_fd = vm->vm_fd = -1;
}

/* Frees a VM's host resources; safe on the pool's worker thread. */
void kvm_vm_teardown(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    close_kvm_objects(vm);
    /* The whole reservation goes at once below; only the bookkeeping
     * (names, references to shared memory objects) needs freeing here. */
    vmm_as_release(&vm->base.as);
    vmm_phys_destroy(&vm->base.pm);
    if (vm->phys_hva)
        munmap(vm->phys_hva, vm->base.pm.view_bytes);
    free(vm);
}

static uint64_t kvm_vm_vdso_calls_va(const struct vmm_vm *base)
{
    (void)base;
    return GK_KERNEL_VA + GK_VDSO_CALLS_GPA;
}

static uint64_t kvm_vm_vdso_calls(const struct vmm_vm *base)
{
    const struct kvm_vm *vm = (const struct kvm_vm *)base;
    uint64_t n;
    memcpy(&n, vm->phys_hva + GK_VDSO_CALLS_GPA, sizeof(n));
    return n;
}

static uint8_t *kvm_vm_vdso_page(struct vmm_vm *base)
{
    return ((struct kvm_vm *)base)->phys_hva + GK_VDSO_CALLS_GPA;
}

static void kvm_vm_vdso_calls_reset(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    memset(vm->phys_hva + GK_VDSO_CALLS_GPA, 0, sizeof(uint64_t));
}

static uint64_t kvm_vm_fs_base(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    return vm->run->s.regs.sregs.fs.base;
}

static void kvm_vm_set_fs_base(struct vmm_vm *base, uint64_t seg_base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    vm->run->s.regs.sregs.fs.base = seg_base;
    vm->sregs_dirty = true;
}

static uint64_t kvm_vm_gs_base(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    return vm->run->s.regs.sregs.gs.base;
}

static void kvm_vm_set_gs_base(struct vmm_vm *base, uint64_t seg_base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    vm->run->s.regs.sregs.gs.base = seg_base;
    vm->sregs_dirty = true;
}

/* ---- running ------------------------------------------------------------- */

static void ensure_user_mode(struct kvm_vm *vm)
{
    struct kvm_sregs *s = &vm->run->s.regs.sregs;
    if (s->cs.selector == GK_SEL_USER_CS && s->ss.selector == GK_SEL_USER_DS &&
        s->cs.dpl == 3)
        return;
    user_segments(s);
    vm->sregs_dirty = true;
}

static void kvm_vm_syscall_return(struct vmm_vm *base, long result)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    struct vmm_regs *r = &vm->base.regs;
    r->rax = (uint64_t)result;
    r->rip = r->rcx;
    r->rflags = (r->r11 & RFLAGS_USER_MASK) | RFLAGS_FIXED;
    ensure_user_mode(vm);
}

static void kvm_vm_enter_user(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    vm->base.regs.rflags = (vm->base.regs.rflags & RFLAGS_USER_MASK) | RFLAGS_FIXED;
    ensure_user_mode(vm);
}

static void regs_to_kvm(const struct vmm_regs *r, struct kvm_regs *k)
{
    k->rax = r->rax; k->rbx = r->rbx; k->rcx = r->rcx; k->rdx = r->rdx;
    k->rsi = r->rsi; k->rdi = r->rdi; k->rsp = r->rsp; k->rbp = r->rbp;
    k->r8 = r->r8; k->r9 = r->r9; k->r10 = r->r10; k->r11 = r->r11;
    k->r12 = r->r12; k->r13 = r->r13; k->r14 = r->r14; k->r15 = r->r15;
    k->rip = r->rip; k->rflags = r->rflags;
}

static void regs_from_kvm(struct vmm_regs *r, const struct kvm_regs *k)
{
    r->rax = k->rax; r->rbx = k->rbx; r->rcx = k->rcx; r->rdx = k->rdx;
    r->rsi = k->rsi; r->rdi = k->rdi; r->rsp = k->rsp; r->rbp = k->rbp;
    r->r8 = k->r8; r->r9 = k->r9; r->r10 = k->r10; r->r11 = k->r11;
    r->r12 = k->r12; r->r13 = k->r13; r->r14 = k->r14; r->r15 = k->r15;
    r->rip = k->rip; r->rflags = k->rflags;
}

/* Whether frame f is a single-step trap taken inside the exception stubs
 * themselves. kvm_pvm now and then enters a stub with the user's TF still
 * set (seen while hvrun single-steps a guest debugger's tracee to keep its
 * watchpoints, at a host interrupt around the delivery): the stub then
 * traps after an instruction, before its port exit, and that #DB's frame
 * sits on the first exception's, which is whole at the trap's saved rsp
 * (the stubs change nothing else). */
static bool trap_in_stub(const uint64_t f[GK_EXC_FRAME_WORDS])
{
    gva_t page = GK_KERNEL_VA + GK_EXC_GPA;
    return f[0] == 1 && (f[3] & 3) != 3 && f[2] >= page &&
           f[2] < page + 0x1000;
}

/* Reads the exception frame the stub left and restores user registers. */
static void decode_exception(struct kvm_vm *vm, struct vmm_event *ev)
{
    uint64_t rsp = vm->base.regs.rsp;
    gva_t lo = GK_KERNEL_VA + GK_STACK0_GPA, hi = GK_KERNEL_VA + GK_IST1_TOP;
    uint64_t f[GK_EXC_FRAME_WORDS];
    for (int depth = 0;; depth++) {
        if (rsp < lo || rsp + GK_EXC_FRAME_WORDS * 8 > hi) {
            vmm_event_fail(ev, "exception exit with kernel rsp %#llx outside its stacks",
                 (unsigned long long)rsp);
            return;
        }
        memcpy(f, vm->phys_hva + (rsp - GK_KERNEL_VA), sizeof(f));
        if (depth == 4 || !trap_in_stub(f))
            break;
        rsp = f[5];
    }
    if ((f[3] & 3) != 3) {
        vmm_event_fail(ev, "exception %llu inside the guest kernel at rip %#llx",
             (unsigned long long)f[0], (unsigned long long)f[2]);
        return;
    }
    ev->kind = VMM_EVENT_EXCEPTION;
    ev->vector = (unsigned)f[0];
    ev->error_code = f[1];
    ev->fault_addr = vm->run->s.regs.sregs.cr2;
    vm->base.regs.rip = f[2];
    vm->base.regs.rflags = f[4];
    vm->base.regs.rsp = f[5];
    vm->base.stats.exception_exits++;
    kvm_vm_enter_user(&vm->base);
}

/* An exit port counts only from the guest kernel's own stubs: the SYSCALL
 * entry page, or the exception page. */
static bool io_from_stub(const struct kvm_vm *vm, unsigned port)
{
    uint64_t page = port == GK_PORT_SYSCALL ? GK_ENTRY_GPA : GK_EXC_GPA;
    uint64_t rip = vm->base.regs.rip;
    return (port == GK_PORT_SYSCALL || port == GK_PORT_EXCEPTION) &&
           rip >= GK_KERNEL_VA + page && rip < GK_KERNEL_VA + page + 0x1000;
}

static bool is_io_insn(const struct kvm_vm *vm, uint64_t at, size_t len)
{
    uint8_t op;
    if (vmm_as_copy_in(&vmm_vm_memory_owner_c(&vm->base)->as, &op, at, 1) <
        0)
        return false;
    /* in/out with imm8 (e4-e7, 2 bytes) or with %dx (ec-ef, 1 byte) */
    return len == 2 ? op >= 0xe4 && op <= 0xe7 : op >= 0xec && op <= 0xef;
}

/*
 * IN or OUT in user code: a process without I/O permission (every guest:
 * ioperm and iopl are refused) gets #GP at the instruction, as Linux gives
 * it, so the guest's SIGSEGV handler runs or the process dies; the run
 * goes on. RIP may already be past the instruction.
 */
static void user_port_io(struct kvm_vm *vm, struct vmm_event *ev)
{
    uint64_t rip = vm->base.regs.rip, at = rip;
    if (!is_io_insn(vm, rip, 1) && !is_io_insn(vm, rip, 2)) {
        if (rip >= 1 && is_io_insn(vm, rip - 1, 1))
            at = rip - 1;
        else if (rip >= 2 && is_io_insn(vm, rip - 2, 2))
            at = rip - 2;
    }
    ev->kind = VMM_EVENT_EXCEPTION;
    ev->vector = 13;
    ev->error_code = 0;
    ev->fault_addr = 0;
    vm->base.regs.rip = at;
    vm->base.stats.exception_exits++;
}

static void decode_exit(struct kvm_vm *vm, struct vmm_event *ev)
{
    struct kvm_run *run = vm->run;
    switch (run->exit_reason) {
    case KVM_EXIT_IO:
        if (!io_from_stub(vm, run->io.port)) {
            user_port_io(vm, ev);
            return;
        }
        if (run->io.port == GK_PORT_SYSCALL) {
            ev->kind = VMM_EVENT_SYSCALL;
            vm->base.stats.syscall_exits++;
            return;
        }
        if (run->io.port == GK_PORT_EXCEPTION) {
            decode_exception(vm, ev);
            return;
        }
        user_port_io(vm, ev);
        return;
    case KVM_EXIT_DEBUG: /* a breakpoint of kvm_vm_set_debugregs' */
        ev->kind = VMM_EVENT_EXCEPTION;
        ev->vector = 1;
        vm->last_dr6 = run->debug.arch.dr6;
        vm->base.stats.exception_exits++;
        return;
    case KVM_EXIT_MMIO:
        vmm_event_fail(ev, "access to unbacked guest-physical %#llx at rip %#llx",
             (unsigned long long)run->mmio.phys_addr,
             (unsigned long long)vm->base.regs.rip);
        return;
    case KVM_EXIT_SHUTDOWN:
        vmm_event_fail(ev, "vCPU shutdown (triple fault) at rip %#llx",
             (unsigned long long)vm->base.regs.rip);
        return;
    case KVM_EXIT_FAIL_ENTRY:
        vmm_event_fail(ev, "VM entry failed, hardware reason %#llx",
             (unsigned long long)
                 run->fail_entry.hardware_entry_failure_reason);
        return;
    case KVM_EXIT_INTERNAL_ERROR:
        vmm_event_fail(ev, "KVM internal error, suberror %u at rip %#llx",
             run->internal.suberror, (unsigned long long)vm->base.regs.rip);
        return;
    case KVM_EXIT_HLT:
        vmm_event_fail(ev, "guest halted at rip %#llx",
             (unsigned long long)vm->base.regs.rip);
        return;
    default:
        vmm_event_fail(ev, "unhandled KVM exit reason %u at rip %#llx",
             run->exit_reason, (unsigned long long)vm->base.regs.rip);
    }
}

/* ---- time slices ------------------------------------------------------------
 *
 * One host timer per process (slice_timer.c), delivering VMM_SLICE_SIGNAL
 * to the thread that runs vCPUs. Its handler sets immediate_exit on the
 * vCPU being run, so a signal that lands just before KVM_RUN still ends
 * the run at once.
 */

static struct kvm_run *volatile slice_run;
static volatile sig_atomic_t slice_fired;

static void on_slice_signal(int sig)
{
    (void)sig;
    slice_fired = 1;
    struct kvm_run *run = slice_run;
    if (run)
        run->immediate_exit = 1;
}


static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A slice the guest did not get to run: the host kept this thread off its
 * CPU (a loaded host) for most of it. kvm_pvm accounts about 40% of a
 * spinning guest's wall time to the thread, a descheduled one nearly
 * none; an eighth tells them apart. Such a slice is no cut: the guest may
 * have been between two syscalls of a loop. */
static bool slice_was_stalled(uint64_t cpu_ns, uint64_t slice_ns)
{
    return cpu_ns < slice_ns / 8;
}

static int kvm_vm_run(struct vmm_vm *base, struct vmm_event *ev);

static int kvm_vm_run_slice(struct vmm_vm *base, struct vmm_event *ev,
                     uint64_t slice_ns)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    if (slice_ns == 0 || !vmm_slice_timer_setup(on_slice_signal))
        return kvm_vm_run(base, ev);
    slice_fired = 0;
    slice_run = vm->run;
    uint64_t cpu0 = thread_cpu_ns();
    vmm_slice_timer_arm(slice_ns);
    int rc = kvm_vm_run(base, ev);
    vmm_slice_timer_arm(0);
    slice_run = NULL;
    vm->run->immediate_exit = 0;
    if (slice_fired && ev->kind == VMM_EVENT_INTERRUPTED &&
        !slice_was_stalled(thread_cpu_ns() - cpu0, slice_ns)) {
        ev->slice_over = true;
        /* Safe to hand the vCPU to another thread only in user code: the
         * guest kernel's stubs use the one kernel stack of the VM. */
        ev->in_user_code = (vm->run->s.regs.sregs.cs.selector & 3) == 3 &&
                           vm->base.regs.rip < GK_KERNEL_VA;
    }
    return rc;
}

static int kvm_vm_run(struct vmm_vm *base, struct vmm_event *ev)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    struct kvm_run *run = vm->run;
    memset(ev, 0, sizeof(*ev));
    struct vmm_aspace *as = &vmm_vm_memory_owner(base)->as;
    int efault_retries = 0;
again:
    if (vm->base.memory_vm &&
        share_new_slots(vm, (const struct kvm_vm *)vm->base.memory_vm) < 0) {
        vmm_event_fail(ev, "memslots of the shared memory: %s",
                       strerror(errno));
        return -EIO;
    }
    if (as->tlb_flushes_asked != vm->tlb_flushes_seen) {
        /* A host-side PTE change must reach the vCPU's cached (shadow or
         * TLB) translations: a CR3 write with a different value makes KVM
         * drop them. Toggling PWT keeps the same page tables. */
        run->s.regs.sregs.cr3 = as->pml4_gpa |
                                ((run->s.regs.sregs.cr3 & CR3_PWT) ^ CR3_PWT);
        vm->sregs_dirty = true;
        vm->tlb_flushes_seen = as->tlb_flushes_asked;
        vm->base.stats.tlb_flushes++;
    }
    regs_to_kvm(&vm->base.regs, &run->s.regs.regs);
    run->kvm_dirty_regs = KVM_SYNC_X86_REGS;
    if (vm->sregs_dirty)
        run->kvm_dirty_regs |= KVM_SYNC_X86_SREGS;
    vm->sregs_dirty = false;
    int rc = ioctl(vm->vcpu_fd, KVM_RUN, 0);
    int err = errno;
    vm->base.stats.exits++;
    regs_from_kvm(&vm->base.regs, &run->s.regs.regs);
    if (rc < 0) {
        if (err == EINTR || err == EAGAIN) {
            ev->kind = VMM_EVENT_INTERRUPTED;
            return 0;
        }
        /* KVM could not get the host page of a guest access: a shared
         * file page the file no longer covers (SIGBUS in the host). Once
         * those pages have lost their PTEs the access is the guest's
         * fault (SIGBUS BUS_ADRERR), as Linux's. A bounded number of
         * tries: each needs a file to have shrunk again. */
        if (err == EFAULT && efault_retries++ < 4 &&
            vmm_as_recheck_shared_eof(as) > 0)
            goto again;
        vmm_event_fail(ev, "KVM_RUN failed: %s", strerror(err));
        return -err;
    }
    decode_exit(vm, ev);
    return 0;
}

/* A guest tracer's hardware breakpoints, through KVM's guest debugging
 * (KVM_GUESTDBG_USE_HW_BP); not on kvm_pvm, which gives no debug exit and
 * loads no guest DR7 (measured: neither fired). With it on, every #DB
 * of the vCPU (a breakpoint, and a TF single step too) is a KVM_EXIT_DEBUG
 * at the user instruction, turned into the same exception event. */
static int kvm_vm_set_debugregs(struct vmm_vm *base, const uint64_t addr[4],
                                uint64_t dr7)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    /* KVM-HOST-NOTES: kvm_pvm ignores guest debugging (no debug exit; a
     * guest DR7 is not loaded either): nothing would ever fire. */
    if (dr7 && strcmp(base->host->info.hypervisor, "kvm_pvm") == 0)
        return -EOPNOTSUPP;
    struct kvm_guest_debug d;
    memset(&d, 0, sizeof(d));
    if (dr7) {
        d.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
        memcpy(d.arch.debugreg, addr, 4 * sizeof(uint64_t));
        d.arch.debugreg[7] = dr7 | VMM_DR7_FIXED;
    }
    if (ioctl(vm->vcpu_fd, KVM_SET_GUEST_DEBUG, &d) < 0)
        return -errno;
    memcpy(vm->dr_addr, d.arch.debugreg, sizeof(vm->dr_addr));
    vm->dr7 = dr7;
    return 0;
}

static uint64_t kvm_vm_take_dr6(struct vmm_vm *base)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    uint64_t dr6 = vm->last_dr6 ? vm->last_dr6 : VMM_DR6_RESET;
    vm->last_dr6 = 0;
    return dr6;
}

/* ---- checkpoints (vmm/snapshot.c) ----------------------------------------
 *
 * A fork of hvrun cannot use the original's VM and vCPU: KVM refuses
 * their ioctls from another mm. The guest memory is no concern: it is
 * private anonymous memory (pm.memfd -1), which the fork copies (copy on
 * write) at the same host addresses, page tables, the guest kernel area
 * and the vDSO's page included; what a view maps MAP_SHARED (a file's or
 * an image's pages, the page store's) is read-only, the same bytes for
 * both (snapshot.c refuses writable shared memory). So the fork drops
 * the original's KVM objects (kvm_host_disown, then kvm_vm_disown) and a
 * restore builds each VM again: a new VM from /dev/kvm (bound to the
 * restore's mm), memslots over the same host addresses, a vCPU made as
 * kvm_vm_build makes one, then the state a checkpoint saved of the old
 * one (kvm_vm_save_cpu).
 */

#define MSR_IA32_TSC 0x10

/* What a checkpoint keeps of a vCPU: the state KVM holds and hvrun's
 * memory lacks. The general registers are hvrun's (base.regs, loaded at
 * every KVM_RUN); CPUID, XCR0 and the MSRs setup_msrs sets are fixed,
 * and no guest instruction changes them (the guest kernel has no WRMSR,
 * SWAPGS or XSETBV; user code cannot): a new vCPU gets them again. The
 * guest's debug registers are never loaded (KVM's guest debugging is
 * hvrun's: dr_addr/dr7, in hvrun's memory). */
struct kvm_saved_cpu {
    /* kvm_run's copy, with hvrun's edits not yet loaded (sregs_dirty):
     * segments and their bases (fs, gs), CR3's flush bit, CR2 */
    struct kvm_sregs sregs;
    /* a pending or injected exception, an interrupt shadow */
    struct kvm_vcpu_events events;
    /* IA32_TSC: a raw RDTSC (one left unrewritten) goes on from here,
     * not from a new vCPU's 0 (VMX/SVM; kvm_pvm's reads the host TSC) */
    uint64_t tsc;
    uint32_t xsave_bytes;
    uint8_t xsave[]; /* the XSAVE image (FPU, SSE, AVX) */
};

/* IA32_TSC read (KVM_GET_MSRS) or written (KVM_SET_MSRS). 0 or -errno. */
static int tsc_msr(struct kvm_vm *vm, unsigned long request, uint64_t *tsc)
{
    struct {
        struct kvm_msrs hdr;
        struct kvm_msr_entry e[1];
    } m;
    memset(&m, 0, sizeof(m));
    m.hdr.nmsrs = 1;
    m.e[0].index = MSR_IA32_TSC;
    m.e[0].data = *tsc;
    int rc = ioctl(vm->vcpu_fd, request, &m);
    if (rc != 1)
        return rc < 0 ? -errno : -EIO;
    *tsc = m.e[0].data;
    return 0;
}

static void *kvm_vm_save_cpu(struct vmm_vm *base, size_t *len)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    uint32_t bytes = vmm_vm_xsave_bytes(base);
    struct kvm_saved_cpu *s = calloc(1, sizeof(*s) + bytes);
    *len = 0;
    if (!s || !vm->run)
        goto fail;
    s->sregs = vm->run->s.regs.sregs;
    s->xsave_bytes = bytes;
    if (ioctl(vm->vcpu_fd, KVM_GET_VCPU_EVENTS, &s->events) < 0 ||
        tsc_msr(vm, KVM_GET_MSRS, &s->tsc) < 0 ||
        kvm_vm_get_xstate(base, s->xsave, bytes) < 0)
        goto fail;
    *len = sizeof(*s) + bytes;
    return s;
fail:
    free(s);
    return NULL;
}

/* In a fork of hvrun: the VM and vCPU are the original's; their fds and
 * kvm_run are placeholders by now (kvm_host_disown comes first), closed
 * and unmapped here. A retired VM too (never respawned: it has no vCPU
 * to run, only memory its sharers run on). */
static void kvm_vm_disown(struct vmm_vm *base)
{
    close_kvm_objects((struct kvm_vm *)base);
}

/* The memslots of the VM this was, on a VM that has none: a sharer's as
 * kvm_vm_share made them, else its own memory's up to covered_top. */
static int map_memslots_again(struct kvm_vm *vm)
{
    vm->nr_slots = 0;
    if (vm->base.memory_vm)
        return share_slots(vm, (const struct kvm_vm *)vm->base.memory_vm);
    gpa_t top = vm->base.pm.covered_top;
    vm->base.pm.covered_top = 0;
    return grow_memslots(vm, top);
}

/* A saved vCPU state (kvm_vm_save_cpu) into a vCPU create_vcpu made. */
static int load_saved_cpu(struct kvm_vm *vm, const struct kvm_saved_cpu *s,
                          char *why, size_t why_len)
{
    const char *step = "KVM_SET_SREGS";
    int rc = ioctl(vm->vcpu_fd, KVM_SET_SREGS, &s->sregs) < 0 ? -errno : 0;
    if (rc == 0) {
        vm->run->s.regs.sregs = s->sregs;
        vm->sregs_dirty = false;
        step = "KVM_SET_XSAVE";
        rc = kvm_vm_set_xstate(&vm->base, s->xsave, s->xsave_bytes);
    }
    if (rc == 0) {
        step = "KVM_SET_VCPU_EVENTS";
        rc = ioctl(vm->vcpu_fd, KVM_SET_VCPU_EVENTS, &s->events) < 0 ? -errno
                                                                     : 0;
    }
    uint64_t tsc = s->tsc;
    if (rc == 0 && (rc = tsc_msr(vm, KVM_SET_MSRS, &tsc)) < 0)
        step = "KVM_SET_MSRS (IA32_TSC)";
    if (rc == 0 && vm->dr7 &&
        (rc = kvm_vm_set_debugregs(&vm->base, vm->dr_addr, vm->dr7)) < 0)
        step = "KVM_SET_GUEST_DEBUG";
    if (rc < 0)
        set_why(why, why_len, step, -rc);
    return rc;
}

/* In a restore's fork: a new VM and vCPU for this VM, on its memory (the
 * fork's copy, at the same host addresses), with the saved state. */
static int kvm_vm_respawn(struct vmm_vm *base, const void *cpu,
                          size_t cpu_len, char *why, size_t why_len)
{
    struct kvm_vm *vm = (struct kvm_vm *)base;
    const struct kvm_saved_cpu *s = cpu;
    if (!s || cpu_len < sizeof(*s) ||
        cpu_len != sizeof(*s) + s->xsave_bytes ||
        s->xsave_bytes != vmm_vm_xsave_bytes(base)) {
        snprintf(why, why_len, "kvm: no saved vCPU state for a VM");
        return -EOPNOTSUPP;
    }
    vm->vm_fd = ioctl(kvm_host_fd(base->host), KVM_CREATE_VM, 0);
    if (vm->vm_fd < 0) {
        int err = errno;
        set_why(why, why_len, "KVM_CREATE_VM", err);
        return -err;
    }
    int rc = map_memslots_again(vm);
    if (rc < 0) {
        set_why(why, why_len, "KVM_SET_USER_MEMORY_REGION", -rc);
        return rc;
    }
    if ((rc = create_vcpu(vm, why, why_len)) < 0)
        return rc;
    return load_saved_cpu(vm, s, why, why_len);
}

const struct vmm_backend_ops kvm_backend_ops = {
    .name = "kvm",
    .host_close = kvm_host_close,
    .host_set_vm_pool = kvm_host_set_vm_pool,
    .vm_create = kvm_vm_create,
    .vm_destroy = kvm_vm_destroy,
    .vm_share = kvm_vm_share,
    .vm_vdso_calls = kvm_vm_vdso_calls,
    .vm_vdso_calls_reset = kvm_vm_vdso_calls_reset,
    .vm_vdso_calls_va = kvm_vm_vdso_calls_va,
    .vm_vdso_page = kvm_vm_vdso_page,
    .vm_fs_base = kvm_vm_fs_base,
    .vm_set_fs_base = kvm_vm_set_fs_base,
    .vm_gs_base = kvm_vm_gs_base,
    .vm_set_gs_base = kvm_vm_set_gs_base,
    .vm_get_xstate = kvm_vm_get_xstate,
    .vm_set_xstate = kvm_vm_set_xstate,
    .vm_reset_xstate = kvm_vm_reset_xstate,
    .vm_set_debugregs = kvm_vm_set_debugregs,
    .vm_take_dr6 = kvm_vm_take_dr6,
    .vm_syscall_return = kvm_vm_syscall_return,
    .vm_enter_user = kvm_vm_enter_user,
    .vm_run = kvm_vm_run,
    .vm_run_slice = kvm_vm_run_slice,
    .vm_save_cpu = kvm_vm_save_cpu,
    .vm_disown = kvm_vm_disown,
    .vm_respawn = kvm_vm_respawn,
    .host_disown = kvm_host_disown,
    .host_adopt_helper = kvm_host_adopt_helper,
};
