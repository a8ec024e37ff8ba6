/*
 * ptrace.c - the ptrace backend's VMs: each guest process runs in a stub
 * process (stub/ptrace_stub.S) that hvrun spawns, seizes
 * (PTRACE_O_EXITKILL: it dies with hvrun) and runs with PTRACE_SYSEMU, so
 * that no guest syscall ever reaches the host kernel: every one is a stop,
 * answered by the same syscall-proxy handlers as under kvm.
 *
 * Memory: guest-physical memory is a memfd (gpa X = offset X) that hvrun
 * maps at the VM's hva_base, as kvm's reservation; the stub maps the same
 * memfd at each VMA's gva (offset = the VMA's gpa) with the VMA's
 * protections, and a MAP_SHARED host file at its own offset. Before each
 * resume the stub's mappings are brought in line with the aspace's VMA list
 * (sync_mappings, skipped while the list's generation is unchanged) by
 * calls injected at the stub's `syscall; int3` gadget, over only the
 * address ranges the aspace logged as changed since this stub's last sync
 * (vmm_as_changes_since).
 *
 * Shared memory (clone with CLONE_VM, no CLONE_THREAD: vmm_vm_create_sharing):
 * the child's stub is spawned with its own memfd as every stub is (its
 * vDSO call count and scratch page stay its own), then opens the owner's
 * memfd through /proc/<hvrun>/fd (memory_fd) and maps every VMA of the
 * owner's VMA list from it. Both stubs then map the same pages; each
 * brings its mappings in line with the one list before it runs, by the
 * list's generation as always. Cost: one injected openat at the clone;
 * each change of the list costs the sync in every stub that runs after it.
 *
 * Events, as kvm.c gives them:
 *  - a SYSEMU stop is VMM_EVENT_SYSCALL: rax = orig_rax, rcx/r11 as the
 *    SYSCALL instruction left them (return rip, rflags);
 *  - a signal-delivery stop of a kernel-sent SIGSEGV/SIGBUS/SIGILL/SIGFPE/
 *    SIGTRAP is VMM_EVENT_EXCEPTION with the vector, error code and
 *    address derived from siginfo (map_fault: the #PF error code is
 *    approximated, the kernel's trapno/err are not visible to a tracer);
 *    the signal is suppressed. RDTSC/RDTSCP fault (PR_TSC_SIGSEGV in the
 *    stub) as the #GP that CR4.TSD gives;
 *  - the slice timer's PTRACE_INTERRUPT is VMM_EVENT_INTERRUPTED with
 *    slice_over (always in user code: there is no guest kernel);
 *  - INT 0x80 (the 32-bit entry, which SYSEMU would report as a syscall)
 *    is a #GP: the guest gets a signal, as under kvm (whose IDT has no such
 *    gate: #NP on VMX/SVM, #UD on kvm_pvm), never a host i386 call.
 */
#include "backend_impl.h"
#include "ptrace_internal.h"
#include "run_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>
#include <linux/ptrace.h>

#include "../guestkernel/gk_abi.h"
#include "ptrace_abi.h"

_Static_assert(PT_STUB_BASE == VMM_STUB_RANGE_START &&
                   PT_STUB_END == VMM_STUB_RANGE_END,
               "the aspace reserves the stub's range");
_Static_assert(PT_BATCH_CALL_SIZE == 64, "ptrace_stub.S's shift by 6");
_Static_assert(PT_BATCH_PATHS * PT_BATCH_PATH_SIZE <= PT_BATCH_SCRATCH_OFF &&
                   (PT_BATCH_PATHS & (PT_BATCH_PATHS - 1)) == 0,
               "the path slots lie before the batch, a power of two of them");
_Static_assert(PT_CALLS_GPA + 0x1000 <= GK_KERNEL_AREA_END &&
                   PT_SCRATCH_GPA + 0x1000 <= GK_KERNEL_AREA_END,
               "the stub's memfd pages are below the first allocatable gpa");

#define GUEST_PHYS_RESERVE PT_GUEST_PHYS_RESERVE
#define RFLAGS_USER_MASK 0x254dd5ULL
#define RFLAGS_FIXED 0x202ULL
#define XSTATE_MAX_KERNEL 16384 /* the kernel's XSAVE image, AMX included */
/* The files a stub keeps open for its direct VMAs; one more closes the
 * oldest (a program mapping many files reopens some). */
#define PT_STUB_FILES_MAX 32

struct pt_vm {
    struct vmm_vm base;
    pid_t pid;
    int pidfd; /* the stub's, to kill it by */
    bool dead;
    int death_signal; /* what killed the stub, 0 if it exited */
    /* Its stub is the host's prepared one, not taken yet (stub_ensure):
     * the VM's memory is in use meanwhile. */
    bool stub_pending;
    /* HVRUN_PTRACE_SELFTEST=cont: the guest is resumed with plain
     * PTRACE_CONT, its first syscall reaches the host kernel, and the
     * stub's filter must kill it (tests/parity/run.sh). */
    bool selftest_cont;
    uint8_t *phys_hva;
    struct user_regs_struct uregs; /* the stub's, as of its last stop */
    bool sig_pending_stop; /* stopped at a signal-delivery stop */
    /* The stub's CPU time as last read (UINT64_MAX: unreadable) and the
     * host time it was read at (0: never): a slice's start (stub_cpu_at). */
    uint64_t cpu_seen_ns, cpu_seen_at;
    /* The slice's timer on the stub's CPU clock (pt_vm_run_slice), made
     * at the stub's first sliced run for cpu_timer_pid (0: none made) and
     * left armed between runs; cpu_deadline: the stub CPU time it is
     * armed for (0: not armed). A vfork child's VM uses its lender's. */
    timer_t cpu_timer;
    pid_t cpu_timer_pid;
    bool cpu_timer_failed;
    uint64_t cpu_deadline;
    /* The VMA list's generation the stub's mappings are in line with;
     * maps_valid: the stub has been synced once. */
    uint64_t maps_generation;
    bool maps_valid;
    struct vmm_dirty_range changes[VMM_DIRTY_LOG]; /* sync_mappings' */
    /* The guest is about to see a syscall's result (pt_vm_syscall_return);
     * a VMA the stub could not map on the way there makes that result the
     * host's errno (sync_mappings drops the VMA; 0: none dropped). */
    bool returning_from_syscall;
    long dropped_errno;
    /* The stub's fd of the memfd its VMAs map: PT_STUB_MEMFD, or the
     * owner's memfd reopened when this VM shares another's memory. */
    int memory_fd;
    /* The mapping calls queued in the scratch page (batch_add), and for
     * each the VMA whose call it is (0: an unmap, whose failure is the
     * stub's) */
    unsigned batch_n;
    gva_t batch_vma[PT_BATCH_MAX];
    /* The stub's fds of the files its direct VMAs map (stub_file_fd); a
     * vfork child's VM uses its lender's (the same stub). */
    struct pt_stub_file {
        uint64_t id; /* vmm_shared.id */
        int fd;
    } stub_files[PT_STUB_FILES_MAX];
    unsigned nr_stub_files;
    /* What the stub has mapped for sure (ptrace_maps.c); a vfork child's
     * VM uses its lender's, as stub_files. */
    struct pt_stub_maps maps;
    /* The files the queued batch opens, in order: each its openat call
     * (k, which the mmaps of the file name: PT_BATCH_OPENED_FD) and path
     * slot (the index). */
    struct pt_batch_open {
        uint64_t id; /* vmm_shared.id */
        unsigned k;
    } batch_opens[PT_BATCH_PATHS];
    unsigned nr_batch_opens;
    /* A vfork child's VM runs on its parent's stub (pt_vm_borrow):
     * lender is the parent's VM, whose lent_to it is until it goes. The
     * parent's kernel XSAVE image is kept in lent_xstate meanwhile (its
     * own reads and writes go there), and its debug registers in dr_*
     * (dr_dirty: changed while lent; dr_touched: the borrower set its
     * own), all put back on the stub when the child's VM goes. */
    struct pt_vm *lender, *lent_to;
    uint8_t *lent_xstate;
    size_t lent_xstate_len;
    bool destroy_after_lend;
    uint64_t dr_addr[4], dr7;
    bool dr_dirty, dr_touched;
};

/* The VMA list the stub mirrors: its own, or the owner's. */
static const struct vmm_aspace *pt_as(const struct pt_vm *vm)
{
    return &vmm_vm_memory_owner_c(&vm->base)->as;
}

static struct pt_vm *pt_of(struct vmm_vm *v) { return (struct pt_vm *)v; }

/* The VM whose stub this is: a vfork child's runs on its lender's. */
static struct pt_vm *stub_owner(struct pt_vm *vm)
{
    return vm->lender ? vm->lender : vm;
}
static const struct pt_vm *pt_cof(const struct vmm_vm *v)
{
    return (const struct pt_vm *)v;
}

static int stub_ensure(struct pt_vm *vm, char *why, size_t why_len);
static int stub_ensure_quiet(struct pt_vm *vm);

/* ---- waiting for the stub ------------------------------------------------ */

/* Waits for the stub's next stop; -EINTR when a signal of hvrun's came
 * first, -ESRCH once the stub is gone, other -errno. */
static int wait_stop_intr(struct pt_vm *vm, int *status)
{
    for (;;) {
        pid_t w = waitpid(vm->pid, status, __WALL);
        if (w < 0)
            return -errno;
        if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
            vm->dead = true;
            vm->death_signal = WIFSIGNALED(*status) ? WTERMSIG(*status) : 0;
            return -ESRCH;
        }
        if (WIFSTOPPED(*status))
            return 0;
    }
}

/* The same, going on across hvrun's signals (short waits: injections). */
static int wait_stop(struct pt_vm *vm, int *status)
{
    int rc;
    while ((rc = wait_stop_intr(vm, status)) == -EINTR)
        ;
    return rc;
}

static bool is_interrupt_stop(int status)
{
    return (status >> 16) == PTRACE_EVENT_STOP;
}

/* ---- injected calls ------------------------------------------------------ */

/*
 * Runs the stub from r (a gadget's address, its registers) to the int3
 * that ends the gadget: PTRACE_CONT, the SIGTRAP taken (suppressed at the
 * next resume); r then holds the registers there, when regs_after (a
 * batch's results are in the scratch page: one ptrace call fewer).
 * inject: one host syscall at `syscall; int3`. The guest's registers are
 * set again before it runs.
 */
static long run_gadget(struct pt_vm *vm, struct user_regs_struct *r,
                       bool regs_after)
{
    r->orig_rax = (uint64_t)-1;
    /* Not the guest's single step (a tracer's, gdb's TF): a trap inside
     * the gadget would end it early, or as no SIGTRAP of its int3. */
    r->eflags &= ~0x100ULL;
    if (ptrace(PTRACE_SETREGS, vm->pid, NULL, r) < 0)
        return -errno;
    for (;;) {
        if (ptrace(PTRACE_CONT, vm->pid, NULL, NULL) < 0)
            return -errno;
        int st, rc = wait_stop(vm, &st);
        if (rc < 0)
            return rc;
        if (is_interrupt_stop(st))
            continue; /* a slice interrupt left pending: not ours */
        if (WSTOPSIG(st) != SIGTRAP)
            return -EIO;
        break;
    }
    if (!regs_after)
        return 0;
    return ptrace(PTRACE_GETREGS, vm->pid, NULL, r) < 0 ? -errno : 0;
}

static long inject(struct pt_vm *vm, long nr, uint64_t a0, uint64_t a1,
                   uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    struct user_regs_struct r = vm->uregs;
    r.rax = (uint64_t)nr;
    r.rdi = a0; r.rsi = a1; r.rdx = a2; r.r10 = a3; r.r8 = a4; r.r9 = a5;
    r.rip = PT_STUB_BASE + PT_STUB_GADGET_OFF;
    long rc = run_gadget(vm, &r, true);
    return rc < 0 ? rc : (long)r.rax;
}

/* ---- the stub's mappings ------------------------------------------------- */

/* A lazy VMA (no backing yet) is reserved in the stub without access:
 * its first touch faults to hvrun, which backs the stretch (aspace.h). */
#define PT_LAZY_OFF UINT64_MAX

/* The memfd (or shared object) offset of gva in v. */
static uint64_t backing_off_at(const struct vmm_vma *v, gva_t gva)
{
    return (v->shared ? v->shared_off : v->gpa) + (gva - v->start);
}

/*
 * The calls that bring the stub's mappings in line go in batches: each is
 * written into the scratch page (PT_BATCH_SCRATCH_OFF) and one resume at
 * the batch gadget runs them all, where one injection each would cost a
 * round trip each (a process start maps some 25 VMAs; docs/PERFORMANCE.md).
 * The calls of one sync touch disjoint ranges in address order, so a
 * failed one does not change what the later ones do; failures are taken
 * in order once the batch has run (batch_flush).
 */
struct pt_batch_call {
    uint64_t nr, args[6], result;
};
/* A result no call gives (an address below 2^47, or -errno): the batch
 * stopped before this call (a SIGTRAP that was not its int3). */
#define PT_BATCH_NOT_RUN (1ULL << 63)
_Static_assert(sizeof(struct pt_batch_call) == PT_BATCH_CALL_SIZE,
               "the batch gadget's stride");

static struct pt_batch_call *batch_calls(struct pt_vm *vm)
{
    return (struct pt_batch_call *)(void *)(vm->phys_hva + PT_SCRATCH_GPA +
                                            PT_BATCH_SCRATCH_OFF);
}

/* Queues a call for the VMA at vma (0: an unmap); room was made first
 * (batch_room). */
static void batch_add(struct pt_vm *vm, gva_t vma, long nr, uint64_t a0,
                      uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                      uint64_t a5)
{
    batch_calls(vm)[vm->batch_n] = (struct pt_batch_call){
        (uint64_t)nr, {a0, a1, a2, a3, a4, a5}, PT_BATCH_NOT_RUN};
    vm->batch_vma[vm->batch_n++] = vma;
}

/* The stub itself failed (gone, or an injection went wrong), not the
 * host's answer to a mapping call. */
static bool stub_failure(const struct pt_vm *vm, long rc)
{
    return vm->dead || rc == -ESRCH || rc == -EIO;
}

/*
 * A range the host will not map in the stub (EACCES for a file it cannot
 * write; ENOMEM past the host's vm.max_map_count, which the guest's
 * smaller limit keeps it from reaching but for splits the host makes
 * where the guest's list has none: vmm_max_map_count) leaves the VMA list
 * rather than ending the run: the call that made it fails with the host's
 * errno (pt_vm_run), and a later touch there is the guest's SIGSEGV. Only
 * the range the host refused goes: the VMA around it may hold older pages
 * the stub still maps (a stretch joined to its neighbours). Its removal is
 * a change the next pass of sync_mappings replays. False when it could not
 * even be dropped.
 */
static bool drop_unmappable(struct pt_vm *vm, gva_t at, uint64_t len,
                            long rc)
{
    struct vmm_aspace *as = &vmm_vm_memory_owner(&vm->base)->as;
    if (!vmm_as_find_vma(as, at))
        return true; /* an earlier call of the range's failed too */
    (void)vmm_as_unmap(as, at, len);
    vm->dropped_errno = rc;
    return !vmm_as_find_vma(as, at);
}

/* A direct VMA's file the host would not map in the stub is hvrun's
 * choice, not the guest's mapping: the range becomes a copy in guest
 * memory (a change the next pass of sync_mappings maps). */
static bool copied_instead(struct pt_vm *vm, gva_t at, uint64_t len)
{
    struct vmm_aspace *as = &vmm_vm_memory_owner(&vm->base)->as;
    const struct vmm_vma *v = vmm_as_find_vma(as, at);
    return v && (v->flags & VMM_VMA_DIRECT) &&
           vmm_as_materialise(as, at, len) == 0;
}

/* Runs the queued calls, then takes their failures: a mapping the host
 * refused drops its VMA; an unmap's failure, or the stub's, ends the
 * sync. */
static void note_batch_opens(struct pt_vm *vm);

/* Whether the queued batch's call k is one of its openat calls. */
static bool batch_opens_at(const struct pt_vm *vm, unsigned k)
{
    for (unsigned i = 0; i < vm->nr_batch_opens; i++)
        if (vm->batch_opens[i].k == k)
            return true;
    return false;
}

static long batch_flush(struct pt_vm *vm, struct vmm_event *ev)
{
    unsigned n = vm->batch_n;
    if (n == 0)
        return 0;
    vm->batch_n = 0;
    struct user_regs_struct r = vm->uregs;
    r.rip = PT_STUB_BASE + PT_STUB_BATCH_OFF;
    r.rbx = PT_STUB_SCRATCH_VA + PT_BATCH_SCRATCH_OFF;
    r.r12 = n;
    long rc = run_gadget(vm, &r, false);
    const struct pt_batch_call *c = batch_calls(vm);
    if (rc >= 0 && c[n - 1].result == PT_BATCH_NOT_RUN)
        rc = -EIO; /* every call before the last ran, if it did */
    for (unsigned k = 0; k < n; k++) /* what failed is not known */
        if (rc < 0 || ((long)c[k].result < 0 && (long)c[k].result >= -4095))
            pt_maps_clear(&stub_owner(vm)->maps);
    if (rc >= 0)
        note_batch_opens(vm);
    for (unsigned k = 0; k < n && rc >= 0; k++) {
        long res = (long)c[k].result;
        /* An open that failed: its mmaps failed too (EBADF), and they
         * are what is taken. */
        if (res >= 0 || res < -4095 || batch_opens_at(vm, k))
            continue;
        if (vm->batch_vma[k] && !stub_failure(vm, res) &&
            (copied_instead(vm, c[k].args[0], c[k].args[1]) ||
             drop_unmappable(vm, c[k].args[0], c[k].args[1], res)))
            continue;
        rc = res;
        if (vm->batch_vma[k])
            vmm_event_fail(ev, "ptrace stub: mapping %#llx-%#llx: %s",
                           (unsigned long long)c[k].args[0],
                           (unsigned long long)(c[k].args[0] + c[k].args[1]),
                           strerror((int)-res));
    }
    vm->nr_batch_opens = 0;
    if (rc < 0 && stub_failure(vm, rc) && ev->kind != VMM_EVENT_FAILED)
        vmm_event_fail(ev, "ptrace stub: mapping: %s", strerror((int)-rc));
    return rc;
}

/* Room for the four calls a step of sync_range queues at most. */
static long batch_room(struct pt_vm *vm, struct vmm_event *ev)
{
    return vm->batch_n + 4 > PT_BATCH_MAX ? batch_flush(vm, ev) : 0;
}


/* The stub's fd of file, cached by an earlier batch; -1: none. */
static long cached_stub_fd(const struct pt_vm *o, const struct vmm_shared *file)
{
    for (unsigned i = 0; i < o->nr_stub_files; i++)
        if (o->stub_files[i].id == file->id)
            return o->stub_files[i].fd;
    return -1;
}

/*
 * The stub's fd of a direct VMA's file (VMM_VMA_DIRECT), or of a shared
 * VMA's object (read-write when hvrun's is): opened in the stub once
 * (through /proc/<hvrun>/fd/N) and kept for its next mappings, the oldest
 * closed when PT_STUB_FILES_MAX would be open (queued before the open).
 * The open goes in the batch, before the mmaps that use it, each in its
 * own path slot, so a stub's first sync of a process's files (a fork
 * child's, an exec's: the program, its rewritten image, ld.so, the
 * counter's object, locale files) is one batch, not one a file. A file
 * the batch opens is *file_fd = -1 - k, its openat being the batch's call
 * k (fd_arg); a ninth file flushes first. 0 or the flush's -errno.
 */
static long stub_file_fd(struct pt_vm *vm, struct vmm_event *ev,
                         const struct vmm_shared *file, long *file_fd)
{
    struct pt_vm *o = stub_owner(vm);
    if ((*file_fd = cached_stub_fd(o, file)) >= 0)
        return 0;
    unsigned n = vm->nr_batch_opens;
    for (unsigned i = 0; i < n; i++)
        if (vm->batch_opens[i].id == file->id) {
            *file_fd = -1 - (long)vm->batch_opens[i].k;
            return 0;
        }
    if (n == PT_BATCH_PATHS) {
        long rc = batch_flush(vm, ev);
        if (rc < 0)
            return rc;
        n = 0;
    }
    while (o->nr_stub_files > 0 && o->nr_stub_files + n >= PT_STUB_FILES_MAX) {
        batch_add(vm, 0, SYS_close, (uint64_t)o->stub_files[0].fd, 0, 0, 0,
                  0, 0);
        memmove(o->stub_files, o->stub_files + 1,
                (PT_STUB_FILES_MAX - 1) * sizeof(o->stub_files[0]));
        o->nr_stub_files--;
    }
    char *path = (char *)vm->phys_hva + PT_SCRATCH_GPA + n * PT_BATCH_PATH_SIZE;
    snprintf(path, PT_BATCH_PATH_SIZE, "/proc/%d/fd/%d", (int)vmm_host_self_pid(),
             file->fd);
    *file_fd = -1 - (long)vm->batch_n;
    vm->batch_opens[n] = (struct pt_batch_open){file->id, vm->batch_n};
    vm->nr_batch_opens = n + 1;
    int mode = file->host_prot & PROT_WRITE ? O_RDWR : O_RDONLY;
    batch_add(vm, 0, SYS_openat,
              (uint64_t)AT_FDCWD,
              PT_STUB_SCRATCH_VA + n * PT_BATCH_PATH_SIZE,
              (uint64_t)(mode | O_CLOEXEC), 0, 0, 0);
    return 0;
}

/* An mmap of stub_file_fd's file_fd: the fd, or the index of the batch's
 * openat of it (-1 - file_fd), whose result the gadget puts there. */
static long mmap_nr(long file_fd)
{
    return file_fd < 0 ? (long)(SYS_mmap | PT_BATCH_OPENED_FD) : SYS_mmap;
}

static uint64_t fd_arg(long file_fd)
{
    return (uint64_t)(file_fd < 0 ? -1 - file_fd : file_fd);
}

/*
 * Whether the stub's mmap of [lo, hi) of v asks the host to fill its page
 * table at once (MAP_POPULATE): a one-page shared part only (the progress
 * counter's slots, written at the first back edge). A populate walks every
 * page, so it pays only where nearly all are touched, and the stub's
 * touches of a direct VMA (a text, its progress image, the page store's
 * pages, read-only data) are reads, which fault-around serves 16 pages a
 * fault. Measured on a kvm_pvm host (a microbenchmark over libc's 470
 * pages): populate 0.42 us a page, a read fault 4-7 us for its 16, every
 * page read 0.3-0.55 us a page; 100 `sh -c true` under ptrace, the stubs'
 * CPU 224 -> 200 ms and wall 0.51 -> 0.47 s (medians of 6) without the
 * direct VMAs' populate of up to 4 MiB of code and 512 KiB of data that an
 * earlier host's ~11 us faults had paid for. Guest memory's data extents
 * are populated (queue_memfd_part): those pages are written, and a write
 * fault is per page (~3 us against ~0.55 us populated).
 */
static int populate_flag(const struct vmm_vma *v, gva_t lo, gva_t hi)
{
    return v->shared && hi - lo <= VMM_PAGE_SIZE ? MAP_POPULATE : 0;
}

/* The batch just run opened files: their fds are the stub's from now on. */
static void note_batch_opens(struct pt_vm *vm)
{
    struct pt_vm *o = stub_owner(vm);
    for (unsigned i = 0; i < vm->nr_batch_opens; i++) {
        long fd = (long)batch_calls(vm)[vm->batch_opens[i].k].result;
        if (fd >= 0 && o->nr_stub_files < PT_STUB_FILES_MAX)
            o->stub_files[o->nr_stub_files++] =
                (struct pt_stub_file){vm->batch_opens[i].id, (int)fd};
    }
}

/* [lo, hi) (inside v) mapped in the stub as v says: a lazy VMA (no
 * backing yet) reserved without access (its first touch faults to hvrun,
 * which backs the stretch: aspace.h), a direct one from its file (the
 * stub's fd of it: file_fd), else the memfd; the pages of a file VMA past
 * its file's end then made inaccessible, so that they fault in the stub
 * (hvrun answers SIGBUS), as kvm's missing PTEs do. */
/* Whether v is not direct, or direct from a file or image object. */
static bool direct_source_known(const struct vmm_vma *v)
{
    uint64_t off;
    return !(v->flags & VMM_VMA_DIRECT) || vmm_vma_direct_source(v, &off);
}

/* What [lo, hi) of v is mapped from in the stub: its key and offset
 * (struct pt_stub_map), for a VMA that is neither lazy nor shared. */
static struct pt_stub_map backing_of(const struct pt_vm *vm,
                                     const struct vmm_vma *v, gva_t lo,
                                     gva_t hi)
{
    uint64_t src_off;
    const struct vmm_shared *src = vmm_vma_direct_source(v, &src_off);
    if (src) /* its file's pages, or its image's (progress.c) */
        return (struct pt_stub_map){lo, hi, src->id,
                                    src_off + (lo - v->start), v->prot};
    return (struct pt_stub_map){lo, hi,
                                PT_MAPS_MEMFD | (uint64_t)vm->memory_fd,
                                backing_off_at(v, lo), v->prot};
}

/*
 * [lo, hi) of v needs no new mapping in the stub: it is mapped from the
 * same backing already (pt_maps_covering), so the same protection needs
 * nothing and another one an mprotect, which keeps the pages the stub
 * has faulted in there (a new mmap drops them all). False when it must
 * be mapped afresh.
 */
static bool queue_vma_same_backing(struct pt_vm *vm, const struct vmm_vma *v,
                                   gva_t lo, gva_t hi)
{
    if ((v->flags & VMM_VMA_LAZY) || v->shared ||
        vmm_vma_valid_end(v) < hi || !direct_source_known(v))
        return false;
    struct pt_stub_maps *maps = &stub_owner(vm)->maps;
    struct pt_stub_map want = backing_of(vm, v, lo, hi);
    const struct pt_stub_map *had = pt_maps_covering(maps, lo, hi);
    if (!had || had->key != want.key ||
        had->off + (lo - had->start) != want.off)
        return false;
    if (had->prot != want.prot) {
        batch_add(vm, lo, SYS_mprotect, lo, hi - lo, (uint64_t)v->prot, 0, 0,
                  0);
        pt_maps_set(maps, &want);
    }
    return true;
}

/*
 * [lo, hi) of v from the guest-memory memfd, in pieces: the memfd's data
 * extents there (pages the loader filled, a fork copied, the guest
 * touched) of at most PT_POPULATE_RUN pages each are mapped with
 * MAP_POPULATE, the rest (holes: fresh zeros) without, so the guest does
 * not fault on what it had or was given (a fork child read-faulted every
 * page its parent had touched, and wrote many: a write fault is per page,
 * populate_flag) and no hole is allocated. At most PT_POPULATE_RUNS runs,
 * within the batch's room (sync_range's step keeps four calls free): a
 * flush here could drop v.
 */
#define PT_POPULATE_RUN 64
#define PT_POPULATE_RUNS 4

static void queue_memfd_map(struct pt_vm *vm, gva_t vma, gva_t lo, gva_t hi,
                            const struct vmm_vma *v, int populate)
{
    if (hi > lo)
        batch_add(vm, vma, SYS_mmap, lo, hi - lo, (uint64_t)v->prot,
                  MAP_SHARED | MAP_FIXED | populate,
                  (uint64_t)vm->memory_fd, backing_off_at(v, lo));
}

static void queue_memfd_part(struct pt_vm *vm, const struct vmm_vma *v,
                             gva_t lo, gva_t hi)
{
    int host_fd = vmm_vm_memory_owner(&vm->base)->pm.memfd;
    gva_t valid = vmm_vma_valid_end(v), from = lo;
    if (valid > hi)
        valid = hi;
    unsigned runs = 0;
    while (v->prot && host_fd >= 0 && from < valid && runs < PT_POPULATE_RUNS &&
           vm->batch_n + 2 * (runs + 1) + 4 <= PT_BATCH_MAX) {
        off_t base = (off_t)backing_off_at(v, lo) - (off_t)lo;
        off_t data = lseek(host_fd, base + (off_t)from, SEEK_DATA);
        if (data < 0 || data >= base + (off_t)valid)
            break;
        off_t hole = lseek(host_fd, data, SEEK_HOLE);
        if (hole < 0)
            break;
        gva_t run_lo = (gva_t)(data - base), run_hi = (gva_t)(hole - base);
        if (run_hi > valid)
            run_hi = valid;
        if (run_hi - run_lo > PT_POPULATE_RUN * VMM_PAGE_SIZE) {
            from = run_hi; /* too big to be worth it: mapped plainly */
            continue;
        }
        queue_memfd_map(vm, lo, lo, run_lo, v, 0);
        queue_memfd_map(vm, lo, run_lo, run_hi, v, MAP_POPULATE);
        lo = from = run_hi;
        runs++;
    }
    queue_memfd_map(vm, lo, lo, hi, v, 0);
}

static void queue_vma_part(struct pt_vm *vm, const struct vmm_vma *v,
                           gva_t lo, gva_t hi, long file_fd)
{
    struct pt_stub_maps *maps = &stub_owner(vm)->maps;
    if (v->flags & VMM_VMA_LAZY) {
        batch_add(vm, lo, SYS_mmap, lo, hi - lo, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                  (uint64_t)-1, 0);
        pt_maps_forget(maps, lo, hi);
        return;
    }
    uint64_t src_off;
    if (vmm_vma_direct_source(v, &src_off))
        batch_add(vm, lo, mmap_nr(file_fd), lo, hi - lo, (uint64_t)v->prot,
                  MAP_SHARED | MAP_FIXED | populate_flag(v, lo, hi),
                  fd_arg(file_fd), src_off + (lo - v->start));
    else
        queue_memfd_part(vm, v, lo, hi);
    gva_t valid = vmm_vma_valid_end(v);
    if (valid >= hi || !v->prot) {
        struct pt_stub_map now = backing_of(vm, v, lo, hi);
        if (direct_source_known(v))
            pt_maps_set(maps, &now);
        else
            pt_maps_forget(maps, lo, hi);
        return;
    }
    if (valid < lo)
        valid = lo;
    batch_add(vm, lo, SYS_mprotect, valid, hi - valid, PROT_NONE, 0, 0, 0);
    pt_maps_forget(maps, lo, hi); /* a tail: mapped afresh next time */
}

/* [lo, hi) unmapped in the stub, never the stub's own range (a merged
 * change range may span it). */
static void queue_unmap_gap(struct pt_vm *vm, gva_t lo, gva_t hi)
{
    pt_maps_forget(&stub_owner(vm)->maps, lo, hi);
    if (lo < VMM_STUB_RANGE_START)
        batch_add(vm, 0, SYS_munmap, lo,
                  (hi < VMM_STUB_RANGE_START ? hi : VMM_STUB_RANGE_START) -
                      lo,
                  0, 0, 0, 0);
    if (hi > VMM_STUB_RANGE_END) {
        gva_t from = lo > VMM_STUB_RANGE_END ? lo : VMM_STUB_RANGE_END;
        batch_add(vm, 0, SYS_munmap, from, hi - from, 0, 0, 0, 0);
    }
}

/* A shared VMA's part (a guest's MAP_SHARED memory, the progress
 * counter's pages) mapped from the stub's fd of its object (stub_file_fd,
 * kept for the next mapping as a direct VMA's file is), in the batch. Not
 * in the list of what the stub maps: mapped afresh next time. */
static void queue_shared_part(struct pt_vm *vm, const struct vmm_vma *v,
                              gva_t lo, gva_t hi, long file_fd)
{
    pt_maps_forget(&stub_owner(vm)->maps, lo, hi);
    batch_add(vm, lo, mmap_nr(file_fd), lo, hi - lo, (uint64_t)v->prot,
              MAP_SHARED | MAP_FIXED | populate_flag(v, lo, hi),
              fd_arg(file_fd), backing_off_at(v, lo));
}

/*
 * Brings [lo, hi) of the stub in line with the VMA list: its gaps
 * unmapped (unless `fresh`: a stub that never ran has nothing there),
 * each VMA's part in it mapped again: calls queued for sync_flush (a
 * full batch runs on the way). Each step looks the VMA
 * up by address, so a VMA dropped by a batch run on the way leaves the
 * walk valid (its range is a change the next pass unmaps).
 */
static long sync_range(struct pt_vm *vm, struct vmm_event *ev, gva_t lo,
                       gva_t hi, bool fresh)
{
    const struct vmm_aspace *as = pt_as(vm);
    long rc = 0;
    for (gva_t at = lo; at < hi && rc >= 0;) {
        if ((rc = batch_room(vm, ev)) < 0)
            break;
        const struct vmm_vma *v = vmm_as_next_vma(as, at);
        gva_t next = v && v->start < hi ? v->start : hi;
        if (next > at) { /* [at, next) has no VMA */
            if (!fresh)
                queue_unmap_gap(vm, at, next);
            at = next;
            continue;
        }
        gva_t part_end = v->end < hi ? v->end : hi;
        if (!fresh && queue_vma_same_backing(vm, v, at, part_end)) {
            at = part_end;
            continue;
        }
        long file_fd = -1;
        uint64_t src_off; /* a direct VMA's file, or its image */
        const struct vmm_shared *src = vmm_vma_direct_source(v, &src_off);
        if (v->shared)
            src = v->shared;
        if (src && (rc = stub_file_fd(vm, ev, src, &file_fd)) < 0)
            break;
        if (v != vmm_as_find_vma(as, at))
            continue; /* a flush on the way changed the list: look again */
        gva_t end = v->end < hi ? v->end : hi;
        if (v->shared)
            queue_shared_part(vm, v, at, end, file_fd);
        else
            queue_vma_part(vm, v, at, end, file_fd);
        at = end;
    }
    return rc;
}

/* The calls sync_range queued, run: one batch for every range a sync
 * brings in line (a library's text mapped and rewritten changes its
 * range and its stub page's), not one a range. The ranges are disjoint
 * and in address order (vmm_as_changes_since), as one range's steps
 * are. */
static long sync_flush(struct pt_vm *vm, struct vmm_event *ev, long rc)
{
    long flushed = batch_flush(vm, ev);
    return rc < 0 ? rc : flushed;
}

/*
 * Brings the stub's address space in line with the VMA list: only the
 * ranges that changed since this stub's last sync (vmm_as_changes_since),
 * so a change costs the calls for what it changed plus O(log n), not a
 * walk of every VMA. A stub that never ran maps every VMA.
 */
static int sync_mappings(struct pt_vm *vm, struct vmm_event *ev)
{
    struct vmm_aspace *as = &vmm_vm_memory_owner(&vm->base)->as;
    long rc = 0;
    if (!vm->maps_valid) {
        uint64_t gen = as->generation;
        (void)vmm_as_changes_since(as, gen, vm->changes); /* seals the log */
        pt_maps_clear(&stub_owner(vm)->maps); /* a stub that never ran */
        rc = sync_range(vm, ev, VMM_USER_MIN, VMM_USER_END, true);
        rc = sync_flush(vm, ev, rc);
        vm->maps_generation = gen;
        vm->maps_valid = rc >= 0;
    }
    while (rc >= 0 && as->generation != vm->maps_generation) {
        uint64_t gen = as->generation;
        size_t n = vmm_as_changes_since(as, vm->maps_generation, vm->changes);
        for (size_t k = 0; k < n && rc >= 0; k++)
            rc = sync_range(vm, ev, vm->changes[k].lo, vm->changes[k].hi,
                            false);
        rc = sync_flush(vm, ev, rc);
        vm->maps_generation = gen; /* a VMA dropped on the way is newer */
    }
    if (rc < 0 && ev->kind != VMM_EVENT_FAILED)
        vmm_event_fail(ev, "ptrace stub: unmapping: %s", strerror((int)-rc));
    return rc < 0 ? (int)rc : 0;
}

/* ---- registers ----------------------------------------------------------- */

static void regs_to_user(const struct vmm_regs *r, struct user_regs_struct *u)
{
    u->rax = r->rax; u->rbx = r->rbx; u->rcx = r->rcx; u->rdx = r->rdx;
    u->rsi = r->rsi; u->rdi = r->rdi; u->rsp = r->rsp; u->rbp = r->rbp;
    u->r8 = r->r8; u->r9 = r->r9; u->r10 = r->r10; u->r11 = r->r11;
    u->r12 = r->r12; u->r13 = r->r13; u->r14 = r->r14; u->r15 = r->r15;
    u->rip = r->rip; u->eflags = r->rflags;
}

static void regs_from_user(struct vmm_regs *r,
                           const struct user_regs_struct *u)
{
    r->rax = u->rax; r->rbx = u->rbx; r->rcx = u->rcx; r->rdx = u->rdx;
    r->rsi = u->rsi; r->rdi = u->rdi; r->rsp = u->rsp; r->rbp = u->rbp;
    r->r8 = u->r8; r->r9 = u->r9; r->r10 = u->r10; r->r11 = u->r11;
    r->r12 = u->r12; r->r13 = u->r13; r->r14 = u->r14; r->r15 = u->r15;
    r->rip = u->rip; r->rflags = u->eflags;
}

static uint64_t pt_vm_fs_base(struct vmm_vm *base)
{
    return pt_of(base)->uregs.fs_base;
}

static void pt_vm_set_fs_base(struct vmm_vm *base, uint64_t seg_base)
{
    pt_of(base)->uregs.fs_base = seg_base;
}

static uint64_t pt_vm_gs_base(struct vmm_vm *base)
{
    return pt_of(base)->uregs.gs_base;
}

static void pt_vm_set_gs_base(struct vmm_vm *base, uint64_t seg_base)
{
    pt_of(base)->uregs.gs_base = seg_base;
}

static void pt_vm_syscall_return(struct vmm_vm *base, long result)
{
    pt_of(base)->returning_from_syscall = true;
    struct vmm_regs *r = &base->regs;
    r->rax = (uint64_t)result;
    r->rip = r->rcx;
    r->rflags = (r->r11 & RFLAGS_USER_MASK) | RFLAGS_FIXED;
}

static void pt_vm_enter_user(struct vmm_vm *base)
{
    base->regs.rflags = (base->regs.rflags & RFLAGS_USER_MASK) | RFLAGS_FIXED;
}

/* ---- extended state ------------------------------------------------------ */

/* The kernel's image (user ABI: XSAVE standard format) into buf. */
static int get_kernel_xstate(struct pt_vm *vm, uint8_t *buf, size_t *len)
{
    struct iovec iov = {buf, XSTATE_MAX_KERNEL};
    memset(buf, 0, XSTATE_MAX_KERNEL);
    if (vm->lent_xstate) { /* its stub runs its vfork child */
        memcpy(buf, vm->lent_xstate, vm->lent_xstate_len);
        *len = vm->lent_xstate_len;
        return 0;
    }
    if (stub_ensure_quiet(vm) < 0)
        return -ESRCH;
    if (ptrace(PTRACE_GETREGSET, vm->pid, (void *)NT_X86_XSTATE, &iov) < 0)
        return -errno;
    *len = iov.iov_len;
    return 0;
}

static int pt_vm_get_xstate(struct vmm_vm *base, void *buf, size_t len)
{
    struct pt_vm *vm = pt_of(base);
    size_t bytes = vmm_vm_xsave_bytes(base), klen;
    if (len < bytes)
        return -EINVAL;
    uint8_t *k = malloc(XSTATE_MAX_KERNEL);
    if (!k)
        return -ENOMEM;
    int rc = get_kernel_xstate(vm, k, &klen);
    if (rc == 0) {
        memset(buf, 0, bytes);
        memcpy(buf, k, klen < bytes ? klen : bytes);
        /* The kernel's software-reserved bytes (its fx_sw_bytes) are not
         * part of the state: zero, as KVM_GET_XSAVE leaves them. */
        memset((uint8_t *)buf + 464, 0, 48);
    }
    free(k);
    return rc;
}

/* Writes an image of `bytes` over the kernel's (components past our
 * layout kept), the header sanitised like kvm.c's. */
static int put_xstate(struct pt_vm *vm, const uint8_t *img, size_t bytes)
{
    uint8_t *k = malloc(XSTATE_MAX_KERNEL);
    if (!k)
        return -ENOMEM;
    size_t klen;
    int rc = get_kernel_xstate(vm, k, &klen);
    if (rc == 0) {
        memcpy(k, img, bytes < klen ? bytes : klen);
        uint64_t bv;
        memcpy(&bv, k + 512, 8);
        bv &= vmm_vm_xcr0(&vm->base);
        memcpy(k + 512, &bv, 8);
        memset(k + 520, 0, 56); /* xcomp_bv + reserved */
        uint32_t mxcsr;
        memcpy(&mxcsr, k + 24, 4);
        mxcsr &= 0xffff;
        memcpy(k + 24, &mxcsr, 4);
        struct iovec iov = {k, klen};
        if (vm->lent_xstate)
            memcpy(vm->lent_xstate, k, klen);
        else if (ptrace(PTRACE_SETREGSET, vm->pid, (void *)NT_X86_XSTATE,
                        &iov) < 0)
            rc = -errno;
    }
    free(k);
    return rc;
}

static int pt_vm_set_xstate(struct vmm_vm *base, const void *buf, size_t len)
{
    size_t bytes = vmm_vm_xsave_bytes(base);
    if (len < bytes)
        return -EINVAL;
    return put_xstate(pt_of(base), buf, bytes);
}

static int pt_vm_reset_xstate(struct vmm_vm *base)
{
    uint8_t img[576];
    memset(img, 0, sizeof(img));
    uint16_t fcw = 0x37f;
    uint32_t mxcsr = 0x1f80;
    memcpy(img, &fcw, 2);
    memcpy(img + 24, &mxcsr, 4);
    return put_xstate(pt_of(base), img, sizeof(img));
}

/* ---- the vDSO's call count ----------------------------------------------- */

static uint64_t pt_vm_vdso_calls(const struct vmm_vm *base)
{
    uint64_t n;
    memcpy(&n, pt_cof(base)->phys_hva + PT_CALLS_GPA, sizeof(n));
    return n;
}

static void pt_vm_vdso_calls_reset(struct vmm_vm *base)
{
    memset(pt_of(base)->phys_hva + PT_CALLS_GPA, 0, sizeof(uint64_t));
}

static uint8_t *pt_vm_vdso_page(struct vmm_vm *base)
{
    return pt_of(base)->phys_hva + PT_CALLS_GPA;
}

static uint64_t pt_vm_vdso_calls_va(const struct vmm_vm *base)
{
    (void)base;
    return PT_STUB_CALLS_VA;
}

/* ---- faults -------------------------------------------------------------- */

/*
 * The x86 exception a kernel-sent fault signal stands for. The #PF error
 * code is not in siginfo: P from SEGV_ACCERR, W when the VMA is readable
 * (so the access that failed was a write), I when the address is the
 * instruction's; U is the proxy's. A write to an unmapped page is thus
 * reported without W (kvm has the CPU's bit).
 */
static bool map_fault(const struct pt_vm *vm, const siginfo_t *si,
                      struct vmm_event *ev)
{
    uint64_t addr = (uint64_t)(uintptr_t)si->si_addr;
    uint64_t rip = vm->base.regs.rip;
    ev->kind = VMM_EVENT_EXCEPTION;
    switch (si->si_signo) {
    case SIGSEGV:
        if (si->si_code == SI_KERNEL) { /* #GP: TSD's RDTSC among them */
            ev->vector = 13;
            return true;
        }
        ev->vector = 14;
        ev->fault_addr = addr;
        if (si->si_code == SEGV_ACCERR || si->si_code == SEGV_PKUERR) {
            const struct vmm_vma *v = vmm_as_find_vma(pt_as(vm), addr);
            ev->error_code = 1;
            if (addr == rip)
                ev->error_code |= 0x10;
            else if (v && (v->prot & PROT_READ) &&
                     !(v->flags & VMM_VMA_LAZY) &&
                     addr < vmm_vma_valid_end(v))
                ev->error_code |= 2; /* past a file's end: a read, say;
                                        a lazy VMA's stretch is backed for
                                        a read, then a write faults again */
        } else if (addr == rip) {
            ev->error_code = 0x10;
        }
        return true;
    case SIGBUS:
        if (si->si_code == BUS_ADRALN) {
            ev->vector = 17;
            return true;
        }
        ev->vector = 14; /* a page hvrun's backing cannot give */
        ev->fault_addr = addr;
        ev->error_code = 1;
        return true;
    case SIGILL:
        ev->vector = 6;
        return true;
    case SIGFPE:
        ev->vector = si->si_code == FPE_INTDIV   ? 0
                     : si->si_code == FPE_INTOVF ? 4
                                                 : 19;
        return true;
    case SIGTRAP:
        ev->vector = si->si_code == TRAP_TRACE || si->si_code == TRAP_HWBKPT
                         ? 1
                         : 3;
        return true;
    default:
        return false;
    }
}

#define VSYSCALL_PAGE 0xffffffffff600000ULL
#define SYS_SECCOMP_CODE 1 /* si_code of a seccomp SIGSYS */

/*
 * A call into the legacy [vsyscall] page, which the host kernel emulates
 * and the stub's filter traps (ptrace_filter.c): the kernel has already
 * "returned" to the caller, so the call is undone (rip back to the page,
 * the return address back on the stack) and reported as kvm reports it,
 * a fetch from a page that is not there. Any other seccomp SIGSYS is a
 * call that reached the host kernel: the net caught it.
 */
static int seccomp_trap(struct pt_vm *vm, const siginfo_t *si,
                        struct vmm_event *ev)
{
    uint64_t at = (uint64_t)(uintptr_t)si->si_call_addr;
    if ((at & ~0xfffULL) != VSYSCALL_PAGE) {
        vmm_event_fail(ev, "ptrace stub: syscall %d reached the host kernel outside "
                 "PTRACE_SYSEMU (its seccomp filter trapped it)",
             si->si_syscall);
        return -EIO;
    }
    vm->base.regs.rip = at;
    vm->base.regs.rsp -= 8;
    ev->kind = VMM_EVENT_EXCEPTION;
    ev->vector = 14;
    ev->fault_addr = at;
    ev->error_code = 0x14; /* user, instruction fetch, not present */
    vm->base.stats.exception_exits++;
    return 0;
}

/* A signal-delivery stop: a fault of the guest's, or a host signal. */
static int decode_signal_stop(struct pt_vm *vm, struct vmm_event *ev)
{
    siginfo_t si;
    if (ptrace(PTRACE_GETSIGINFO, vm->pid, NULL, &si) < 0) {
        vmm_event_fail(ev, "PTRACE_GETSIGINFO: %s", strerror(errno));
        return -errno;
    }
    memset(ev, 0, sizeof(*ev));
    if (si.si_signo == SIGSYS && si.si_code == SYS_SECCOMP_CODE)
        return seccomp_trap(vm, &si, ev);
    if (si.si_code > 0 && map_fault(vm, &si, ev)) {
        vm->base.stats.exception_exits++;
        return 0;
    }
    memset(ev, 0, sizeof(*ev));
    ev->kind = VMM_EVENT_INTERRUPTED; /* kill(2) of the stub: not a fault */
    return 0;
}

/* Guest code bytes whatever their protection (exec-only too). */
static bool code_bytes(const struct vmm_aspace *as, gva_t at, uint8_t *dst,
                       size_t len)
{
    struct iovec iov[2];
    size_t covered, done = 0;
    int n = vmm_as_host_iov(as, at, len, 0, iov, 2, &covered);
    if (covered != len)
        return false;
    for (int i = 0; i < n; i++) {
        memcpy(dst + done, iov[i].iov_base, iov[i].iov_len);
        done += iov[i].iov_len;
    }
    return true;
}

/* INT 0x80 enters the host kernel like SYSCALL: made a #GP with the
 * gate's error code (kvm's guest kernel has no such gate).
 *
 * SYSCALL leaves its return address in %rcx and the flags in %r11, and
 * the host saves those registers as they are, so at its stop rcx == rip
 * and r11 == eflags; INT 0x80 leaves both as the program had them. Only
 * a stop where they differ reads the code: the read is hvrun's first
 * touch of that text page in each process (a page fault, ~20-45 us on a
 * host with shadowed page tables, about six a process start). An INT
 * 0x80 made with rcx and r11 set to exactly those values is taken as the
 * SYSCALL it then looks like (Decision: hvrun serves it either way).
 */
static bool int80_stop(struct pt_vm *vm, struct vmm_event *ev)
{
    uint8_t insn[2];
    uint64_t rip = vm->base.regs.rip;
    if (vm->uregs.rcx == vm->uregs.rip && vm->uregs.r11 == vm->uregs.eflags)
        return false;
    if (rip < 2 || !code_bytes(pt_as(vm), rip - 2, insn, 2) ||
        insn[0] != 0xcd || insn[1] != 0x80)
        return false;
    vm->base.regs.rip = rip - 2;
    vm->base.regs.rax = vm->uregs.orig_rax;
    ev->kind = VMM_EVENT_EXCEPTION;
    ev->vector = 13;
    ev->error_code = 0x80 * 8 + 2;
    vm->base.stats.exception_exits++;
    return true;
}

/* ---- time slices --------------------------------------------------------- */


static volatile pid_t slice_pid;
static volatile sig_atomic_t slice_fired;

/* The interrupt is asked for from the handler, so a timer that fires
 * before the wait has begun still stops the stub. */
static void on_slice_signal(int sig)
{
    (void)sig;
    int saved = errno;
    slice_fired = 1;
    pid_t pid = slice_pid;
    if (pid > 0)
        (void)syscall(SYS_ptrace, PTRACE_INTERRUPT, pid, 0, 0);
    errno = saved;
}


/* ---- running ------------------------------------------------------------- */

static int resume(struct pt_vm *vm, struct vmm_event *ev)
{
    struct user_regs_struct u = vm->uregs;
    regs_to_user(&vm->base.regs, &u);
    u.orig_rax = (uint64_t)-1; /* no syscall restart on the way out */
    u.cs = GK_SEL_USER_CS;
    u.ss = GK_SEL_USER_DS;
    if (ptrace(PTRACE_SETREGS, vm->pid, NULL, &u) < 0) {
        int err = errno;
        vmm_event_fail(ev, "PTRACE_SETREGS: %s", strerror(err));
        return -err;
    }
    vm->uregs = u;
    /* The selftest's every resume: the stops before the first syscall
     * (a trapped CPUID, a fault) are the guest's all the same. */
    long req = vm->selftest_cont ? PTRACE_CONT : PTRACE_SYSEMU;
    if (ptrace((enum __ptrace_request)req, vm->pid, NULL, NULL) < 0) {
        int err = errno;
        vmm_event_fail(ev, "PTRACE_SYSEMU: %s", strerror(err));
        return -err;
    }
    return 0;
}

/* Before a run: the stub's mappings brought up to the address space's
 * (injected calls, the stub's own CPU time and host time, which is why a
 * slice starts after it). -ESRCH for a dead stub (no run at all), else
 * the sync's result, which the run reports. */
static int pt_vm_prepare(struct vmm_vm *base, struct vmm_event *ev)
{
    struct pt_vm *vm = pt_of(base);
    memset(ev, 0, sizeof(*ev));
    if (vm->dead) {
        vmm_event_fail(ev, "the ptrace stub process is gone");
        return -ESRCH;
    }
    if (vm->lent_to) { /* vmm_vm_create_vfork's caller's promise */
        vmm_event_fail(ev, "ptrace stub: run while its vfork child has it");
        return -EBUSY;
    }
    char why[160];
    if (stub_ensure(vm, why, sizeof(why)) < 0) {
        vmm_event_fail(ev, "%s", why);
        return -ESRCH;
    }
    vm->dropped_errno = 0;
    uint64_t sync_t = vmm_clock_now();
    int rc = sync_mappings(vm, ev);
    vmm_clock_add(VMM_CLOCK_MAP_SYNC, sync_t);
    if (rc == 0 && vm->dropped_errno && vm->returning_from_syscall)
        base->regs.rax = (uint64_t)vm->dropped_errno;
    vm->returning_from_syscall = false;
    return rc;
}

/* The run itself, after pt_vm_prepare gave rc. */
static int pt_vm_go(struct vmm_vm *base, struct vmm_event *ev, int rc)
{
    struct pt_vm *vm = pt_of(base);
    if (rc == 0)
        rc = resume(vm, ev);
    int st = 0;
    bool asked = false; /* a host signal: the stub is interrupted */
    while (rc == 0) {
        if ((rc = wait_stop_intr(vm, &st)) == -EINTR) {
            /* hvrun's own signal (a stop request, SIGCHLD of a host
             * child): the run returns, as KVM_RUN's EINTR does. */
            if (!asked && !slice_fired)
                (void)ptrace(PTRACE_INTERRUPT, vm->pid, NULL, NULL);
            asked = true;
            rc = 0;
            continue;
        }
        if (rc < 0) {
            if (rc == -ESRCH && vm->death_signal == SIGSYS)
                vmm_event_fail(ev, "ptrace stub: killed by its seccomp filter (a "
                         "syscall reached the host kernel outside "
                         "PTRACE_SYSEMU)");
            else
                vmm_event_fail(ev, "ptrace stub: %s",
                     rc == -ESRCH ? "died" : strerror(-rc));
            break;
        }
        if (!is_interrupt_stop(st) || slice_fired || asked)
            break;
        /* An interrupt a past slice left pending: go on. */
        if (ptrace(PTRACE_SYSEMU, vm->pid, NULL, NULL) < 0) {
            rc = -errno;
            vmm_event_fail(ev, "PTRACE_SYSEMU: %s", strerror(-rc));
        }
    }
    base->stats.exits++;
    if (rc < 0)
        return rc;
    if (ptrace(PTRACE_GETREGS, vm->pid, NULL, &vm->uregs) < 0) {
        rc = -errno;
        vmm_event_fail(ev, "PTRACE_GETREGS: %s", strerror(-rc));
        return rc;
    }
    regs_from_user(&base->regs, &vm->uregs);
    if (is_interrupt_stop(st)) {
        ev->kind = VMM_EVENT_INTERRUPTED;
        return 0;
    }
    if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
        if (int80_stop(vm, ev))
            return 0;
        base->regs.rax = vm->uregs.orig_rax;
        ev->kind = VMM_EVENT_SYSCALL;
        base->stats.syscall_exits++;
        return 0;
    }
    return decode_signal_stop(vm, ev);
}

static int pt_vm_run(struct vmm_vm *base, struct vmm_event *ev)
{
    int rc = pt_vm_prepare(base, ev);
    return rc == -ESRCH && pt_of(base)->dead ? rc : pt_vm_go(base, ev, rc);
}

/* The stub's CPU time: the guest runs there, not in hvrun's thread.
 * UINT64_MAX when it cannot be read (then no slice counts as stalled). */
static uint64_t stub_cpu_ns(const struct pt_vm *vm)
{
    /* The clock id clock_getcpuclockid gives (MAKE_PROCESS_CPUCLOCK(pid,
     * CPUCLOCK_SCHED)), without the clock_getres it makes to check the
     * pid: a second host call at every guest run. A stub gone is EINVAL. */
    clockid_t clk = (clockid_t)((~(unsigned)vm->pid << 3) | 2);
    struct timespec ts;
    if (vm->pid <= 0 || clock_gettime(clk, &ts) < 0)
        return UINT64_MAX;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A read of the stub's CPU time older than this serves no slice's start:
 * between runs a stub uses no more CPU than host time passes. */
#define PT_CPU_READ_STALE_NS 1000000ULL

/*
 * The stub's CPU time at a slice's start, for the stall test: read
 * afresh (a host call) at most once a millisecond. An older read is at
 * most that much CPU early, so a slice it calls run for an eighth ran for
 * an eighth less a millisecond at least: a stall is missed only within
 * that millisecond of the threshold. A guest that stops every few
 * microseconds (dd bs=1) so makes one read where it made hundreds.
 */
static uint64_t stub_cpu_at_start(struct pt_vm *vm)
{
    uint64_t now = vmm_clock_now();
    if (vm->cpu_seen_at == 0 ||
        now - vm->cpu_seen_at > PT_CPU_READ_STALE_NS) {
        vm->cpu_seen_ns = stub_cpu_ns(vm);
        vm->cpu_seen_at = now;
    }
    return vm->cpu_seen_ns;
}

/* The slice timed by host time (a timer on CLOCK_MONOTONIC armed and
 * disarmed around the run), where the stub's CPU clock has no timer. */
static int run_slice_host_time(struct pt_vm *vm, struct vmm_event *ev, int rc,
                               uint64_t slice_ns)
{
    if (!vmm_slice_timer_setup(on_slice_signal))
        return pt_vm_go(&vm->base, ev, rc);
    slice_pid = vm->pid;
    uint64_t cpu0 = stub_cpu_at_start(vm);
    vmm_slice_timer_arm(slice_ns);
    rc = pt_vm_go(&vm->base, ev, rc);
    vmm_slice_timer_arm(0);
    slice_pid = 0;
    /* As kvm.c's: a slice the host kept the stub off its CPU for (under
     * an eighth of it run) is the host's stall, not a cut. */
    uint64_t cpu1 = 0;
    if (slice_fired) {
        cpu1 = stub_cpu_ns(vm);
        vm->cpu_seen_ns = cpu1;
        vm->cpu_seen_at = vmm_clock_now();
    }
    bool stalled = cpu0 != UINT64_MAX && cpu1 != UINT64_MAX &&
                   cpu1 - cpu0 < slice_ns / 8;
    if (slice_fired && ev->kind == VMM_EVENT_INTERRUPTED && !stalled) {
        ev->slice_over = true;
        ev->in_user_code = true; /* no guest kernel: always user code */
    }
    return rc;
}

/* The stub's CPU-clock timer, made for its current stub; false: none
 * can be (then host time times the slice). */
static bool cpu_timer_ready(struct pt_vm *o)
{
    if (o->cpu_timer_pid == o->pid && o->pid > 0)
        return true;
    if (o->cpu_timer_failed || o->pid <= 0)
        return false;
    if (o->cpu_timer_pid > 0)
        vmm_cpu_timer_delete(o->cpu_timer);
    o->cpu_timer_pid = 0;
    o->cpu_deadline = 0;
    if (!vmm_cpu_timer_create(o->pid, on_slice_signal, &o->cpu_timer)) {
        o->cpu_timer_failed = true;
        return false;
    }
    o->cpu_timer_pid = o->pid;
    return true;
}

/*
 * A slice ends when the stub has run slice_ns of CPU since the run began.
 * The timer is on the stub's CPU clock, which stands still while hvrun
 * serves the guest, so it stays armed between runs and is moved only
 * when this run's end would come before it: no timer call at most stops
 * (two a stop, a third of hvrun's host calls under `dd bs=1`, when it was
 * armed and disarmed on host time around each run). A deadline an earlier
 * run set fires early, at most once a slice of CPU: that stop is no cut
 * (the stub has not run the slice yet), and the next run arms its own.
 * Nor is a host stall a cut any more: the stub's CPU does not pass while
 * the host keeps it waiting. Host time times the slice where the run asks
 * for it (vmm_host_slice_on_guest_cpu: host time reaches a deadline).
 */
/* The host checks a CPU-clock timer at its scheduler tick (4 ms at
 * HZ=250): a slice shorter than a few ticks (a 1 ms interval timer's
 * turn, interval_spin) is timed by host time. */
#define PT_CPU_SLICE_MIN_NS 20000000ULL

static int pt_vm_run_slice(struct vmm_vm *base, struct vmm_event *ev,
                           uint64_t slice_ns)
{
    struct pt_vm *vm = pt_of(base);
    slice_fired = 0;
    if (slice_ns == 0)
        return pt_vm_run(base, ev);
    /* The mapping sync is no part of the guest's slice: under load its
     * injected calls took long enough for the timer to cut the guest
     * before its first instruction, by host time (a --chaos --verify
     * pair then differed). */
    int rc = pt_vm_prepare(base, ev);
    if (rc == -ESRCH && vm->dead)
        return rc;
    struct pt_vm *o = stub_owner(vm);
    uint64_t cpu0 = stub_cpu_at_start(vm);
    if (!base->host->slice_on_guest_cpu || slice_ns < PT_CPU_SLICE_MIN_NS ||
        cpu0 == UINT64_MAX || !cpu_timer_ready(o)) {
        if (o->cpu_deadline) { /* it must not cut this run */
            vmm_cpu_timer_arm_at(o->cpu_timer, 0);
            o->cpu_deadline = 0;
        }
        rc = run_slice_host_time(vm, ev, rc, slice_ns);
        slice_fired = 0;
        return rc;
    }
    uint64_t end = cpu0 + slice_ns;
    if (o->cpu_deadline == 0 || o->cpu_deadline > end) {
        vmm_cpu_timer_arm_at(o->cpu_timer, end);
        o->cpu_deadline = end;
    }
    slice_pid = vm->pid;
    rc = pt_vm_go(base, ev, rc);
    slice_pid = 0;
    if (slice_fired) {
        o->cpu_deadline = 0; /* it fired: a one-shot timer is disarmed */
        uint64_t cpu1 = stub_cpu_ns(vm);
        vm->cpu_seen_ns = cpu1;
        vm->cpu_seen_at = vmm_clock_now();
        if (ev->kind == VMM_EVENT_INTERRUPTED && cpu1 != UINT64_MAX &&
            cpu1 >= end) {
            ev->slice_over = true;
            ev->in_user_code = true; /* no guest kernel: always user code */
        }
    }
    slice_fired = 0;
    return rc;
}

/* ---- lifecycle ----------------------------------------------------------- */

/* The memfd behind guest-physical memory, mapped 2 MiB-aligned. */
static int reserve_guest_memory(uint8_t **view_out, int *memfd_out)
{
    int fd = memfd_create("hvrun-guest-memory", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = ftruncate(fd, (off_t)GUEST_PHYS_RESERVE) < 0 ? -errno : 0;
    /* hvrun's view: what the memory in use needs (physview.c) */
    if (rc == 0)
        rc = vmm_phys_view_place(fd, GUEST_PHYS_RESERVE, PT_VIEW_FIRST,
                                 view_out);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    /* The call-count and scratch pages: hvrun writes both through the
     * view before every stub's first run (its filter, the first batch),
     * and a write fault on each costs several us where one populate of
     * both costs ~1 (ptrace.c: populate_flag). Nothing lost if it fails. */
    _Static_assert(PT_SCRATCH_GPA == PT_CALLS_GPA + VMM_PAGE_SIZE,
                   "the two pages populated at once");
    (void)madvise(*view_out + PT_CALLS_GPA, 2 * VMM_PAGE_SIZE,
                  MADV_POPULATE_WRITE);
    *memfd_out = fd;
    return 0;
}

/* The physical allocator's hook (vmm_physmem.grow): the view covers top. */
static int view_grow(void *ctx, gpa_t top)
{
    struct vmm_physmem *pm = ctx;
    int rc = vmm_phys_view_grow(pm, top);
    if (rc == 0)
        pm->covered_top = pm->view_bytes;
    return rc;
}

static void end_lend(struct pt_vm *b);

static void pt_vm_destroy(struct vmm_vm *base)
{
    struct pt_vm *vm = pt_of(base);
    if (vm->lent_to) { /* killed while its vfork child runs on its stub */
        vm->destroy_after_lend = true;
        return;
    }
    if (vm->lender) {
        end_lend(vm);
        free(vm);
        return;
    }
    if (vm->stub_pending) { /* never used: killed unseized, none next */
        vm->stub_pending = false;
        ptrace_host_set_pending_vm(base->host, NULL);
        ptrace_host_drop_prepared(base->host);
    }
    pt_maps_free(&vm->maps);
    if (vm->cpu_timer_pid > 0)
        vmm_cpu_timer_delete(vm->cpu_timer);
    if (vm->pid > 0) {
        uint64_t cpu = stub_cpu_ns(vm); /* for --summary's breakdown */
        if (cpu != UINT64_MAX) {
            vmm_run_clock.ns[VMM_CLOCK_GUEST_CPU] += cpu;
            vmm_run_clock.count[VMM_CLOCK_GUEST_CPU]++;
        }
    }
    vmm_as_release(&base->as);
    vmm_phys_destroy(&base->pm);
    /* The stub's kill, death and reaping and the freeing of its memory
     * wait for nothing hvrun does next (ptrace_reaper.c). */
    struct ptrace_retired r = {
        .pid = vm->pid > 0 ? vm->pid : 0, .kill = vm->pid > 0,
        .pidfd = vm->pidfd,
        .memfd = base->pm.memfd, .view = vm->phys_hva,
        .view_len = base->pm.view_bytes};
    ptrace_reaper_retire(ptrace_host_reaper(base->host), &r);
    free(vm);
}

/* A fresh stub that has never run: its VMAs come from the owner's memfd,
 * opened in the stub through /proc/<hvrun>/fd. */
static int pt_vm_share(struct vmm_vm *base, struct vmm_vm *owner)
{
    struct pt_vm *vm = pt_of(base);
    int rc = stub_ensure_quiet(vm);
    if (rc < 0)
        return rc;
    char *path = (char *)vm->phys_hva + PT_SCRATCH_GPA;
    snprintf(path, 64, "/proc/%d/fd/%d", (int)vmm_host_self_pid(), owner->pm.memfd);
    long fd = inject(vm, SYS_openat, (uint64_t)AT_FDCWD, PT_STUB_SCRATCH_VA,
                     (uint64_t)(O_RDWR | O_CLOEXEC), 0, 0, 0);
    if (fd < 0)
        return (int)fd;
    vm->memory_fd = (int)fd;
    vm->maps_valid = false;
    return 0;
}

/* The next VM's stub asked for now, its spawn overlapping the guest's
 * run (ptrace_host_prepare_stub). A stub is the spawner's child, so
 * which one a VM gets is not the guest's to see. */
static void prepare_next(struct vmm_host *host)
{
    uint8_t *view;
    int memfd;
    if (ptrace_host_wants_prepared(host) &&
        reserve_guest_memory(&view, &memfd) == 0)
        ptrace_host_prepare_stub(host, memfd, view);
}

void ptrace_vm_prepare_first(struct vmm_host *host)
{
    uint8_t *view;
    int memfd;
    if (reserve_guest_memory(&view, &memfd) == 0)
        ptrace_host_prepare_stub(host, memfd, view);
}

/* The stub spawned (or taken prepared: pid > 0) and stopped at its first
 * interrupt; 0 or -errno. */
static int start_stub(struct pt_vm *vm, pid_t pid, char *why, size_t why_len)
{
    int rc;
    if (pid <= 0 &&
        (rc = ptrace_host_spawn_stub(vm->base.host, vm->base.pm.memfd, &pid,
                                     &vm->pidfd, why, why_len)) < 0)
        return rc;
    vm->pid = pid;
    int st;
    if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) < 0 ||
        wait_stop(vm, &st) < 0 || !is_interrupt_stop(st) ||
        ptrace(PTRACE_GETREGS, pid, NULL, &vm->uregs) < 0) {
        snprintf(why, why_len, "ptrace stub: no first stop (status %#x)", st);
        return -EIO;
    }
    vm->uregs.fs_base = vm->uregs.gs_base = 0;
    return 0; /* its seccomp filter it loaded as it started (ptrace_host.c) */
}

/*
 * A VM whose stub was pending gets it now: the prepared stub taken (its
 * start overlapped what hvrun did with the VM meanwhile: the exec's
 * image, the first VM's set-up), or one spawned if that failed; then the
 * next one is asked for. The segment bases set meanwhile are kept.
 */
static int stub_ensure(struct pt_vm *vm, char *why, size_t why_len)
{
    if (!vm->stub_pending)
        return 0;
    struct vmm_host *host = vm->base.host;
    vm->stub_pending = false;
    ptrace_host_set_pending_vm(host, NULL);
    pid_t pid = 0;
    if (ptrace_host_take_prepared_stub(host, &pid, &vm->pidfd) < 0) {
        pid = 0;
        vm->pidfd = -1;
    }
    /* Its time is the phase's that needed it (--summary: the guest's
     * first run, usually): VM creation's is the VM's own. */
    uint64_t fs = vm->uregs.fs_base, gs = vm->uregs.gs_base;
    int rc = start_stub(vm, pid, why, why_len);
    vm->uregs.fs_base = fs;
    vm->uregs.gs_base = gs;
    if (rc < 0) {
        vm->dead = true; /* no stub: every later use fails */
        if (rc != -EIO && why)
            snprintf(why, why_len, "ptrace stub: %s", strerror(-rc));
        return rc;
    }
    prepare_next(host);
    return 0;
}

/* The same where no one is told why. */
static int stub_ensure_quiet(struct pt_vm *vm)
{
    char why[160];
    return stub_ensure(vm, why, sizeof(why));
}

static int pt_vm_create(struct vmm_host *host, struct vmm_vm **out,
                        char *why, size_t why_len)
{
    struct pt_vm *pending = ptrace_host_pending_vm(host);
    if (pending) /* one prepared stub at a time: that VM's first */
        (void)stub_ensure_quiet(pending);
    struct pt_vm *vm = calloc(1, sizeof(*vm));
    if (!vm)
        return -ENOMEM;
    vm->base.ops = &ptrace_backend_ops;
    vm->base.host = host;
    vm->base.pm.memfd = -1;
    vm->pidfd = -1;
    vm->memory_fd = PT_STUB_MEMFD;
    int memfd = -1, rc = 0;
    void *view = NULL;
    const char *selftest = getenv("HVRUN_PTRACE_SELFTEST");
    vm->selftest_cont = selftest && strcmp(selftest, "cont") == 0;
    if (ptrace_host_take_prepared_memory(host, &memfd, &view)) {
        vm->phys_hva = view;
        vm->stub_pending = true;
        ptrace_host_set_pending_vm(host, vm);
    } else {
        rc = reserve_guest_memory(&vm->phys_hva, &memfd);
    }
    if (rc < 0) {
        snprintf(why, why_len, "guest memory memfd: %s", strerror(-rc));
        free(vm);
        return rc;
    }
    vmm_phys_init(&vm->base.pm, vm->phys_hva, GUEST_PHYS_RESERVE,
                  GK_KERNEL_AREA_END);
    vm->base.pm.memfd = memfd;
    vm->base.pm.view_bytes = vm->base.pm.covered_top = PT_VIEW_FIRST;
    vm->base.pm.grow = view_grow;
    vm->base.pm.grow_ctx = &vm->base.pm;
    vm->base.pm.view_follows_guest = false; /* no shadow MMU reads it */
    vm->base.pm.tables_private = true;      /* nor walks its page tables */
    /* The page tables kvm's guest kernel area takes (one branch of three
     * tables): nothing runs there, but guest memory in use (getrusage's
     * maxrss, /proc's figures) must be the same under both backends. */
    if ((rc = vmm_as_init(&vm->base.as, &vm->base.pm)) < 0 ||
        (rc = vmm_pt_map(&vm->base.as, GK_KERNEL_VA + GK_VDSO_CALLS_GPA,
                         PT_CALLS_GPA, 1, VMM_PTE_P | VMM_PTE_NX)) < 0) {
        snprintf(why, why_len, "guest address space: %s", strerror(-rc));
        pt_vm_destroy(&vm->base);
        return rc;
    }
    /* A stub's FPU/SSE/AVX state is the reset state already: exec gives
     * it (FCW 0x37f, MXCSR 0x1f80, every component initial) and the stub
     * never touches it, so no pt_vm_reset_xstate (two ptrace calls). */
    if (vm->stub_pending) { /* taken at its first use (stub_ensure) */
        *out = &vm->base;
        return 0;
    }
    if ((rc = start_stub(vm, 0, why, why_len)) < 0) {
        if (rc != -EIO && why)
            snprintf(why, why_len, "ptrace stub: %s", strerror(-rc));
        pt_vm_destroy(&vm->base);
        return rc;
    }
    prepare_next(host);
    *out = &vm->base;
    return 0;
}

/* The stub is a host process: its debug registers are the host kernel's
 * ptrace user area's, and a hit is a SIGTRAP (TRAP_HWBKPT) of the stub. */
static int pt_vm_set_debugregs(struct vmm_vm *base, const uint64_t addr[4],
                               uint64_t dr7)
{
    struct pt_vm *vm = pt_of(base);
    memcpy(vm->dr_addr, addr, sizeof(vm->dr_addr));
    vm->dr7 = dr7;
    if (vm->lent_to) { /* put on the stub when the child's VM goes */
        vm->dr_dirty = true;
        return 0;
    }
    if (vm->lender)
        vm->dr_touched = true;
    if (stub_ensure_quiet(vm) < 0)
        return -ESRCH;
    size_t at = offsetof(struct user, u_debugreg);
    /* DR7 off first: an address change must not arm a half-made pair */
    if (ptrace(PTRACE_POKEUSER, vm->pid, (void *)(at + 7 * 8), NULL) < 0)
        return -errno;
    for (int i = 0; i < 4; i++)
        if (ptrace(PTRACE_POKEUSER, vm->pid, (void *)(at + (size_t)i * 8),
                   (void *)(uintptr_t)addr[i]) < 0)
            return -errno;
    if (dr7 && ptrace(PTRACE_POKEUSER, vm->pid, (void *)(at + 7 * 8),
                      (void *)(uintptr_t)dr7) < 0)
        return -errno;
    return 0;
}

static uint64_t pt_vm_take_dr6(struct vmm_vm *base)
{
    struct pt_vm *vm = pt_of(base);
    if (vm->lent_to || vm->stub_pending)
        return VMM_DR6_RESET; /* it has not run since, or never */
    size_t at = offsetof(struct user, u_debugreg) + 6 * 8;
    errno = 0;
    long dr6 = ptrace(PTRACE_PEEKUSER, vm->pid, (void *)at, NULL);
    if (errno)
        return VMM_DR6_RESET;
    (void)ptrace(PTRACE_POKEUSER, vm->pid, (void *)at, NULL);
    return (uint64_t)dr6 | VMM_DR6_RESET;
}

/*
 * A vfork child's VM on its parent's stub: the parent waits until the
 * child's VM goes (vmm_vm_create_vfork), so the child's runs need no stub
 * of their own, nor the sync of every VMA into a fresh one (a shell's or
 * posix_spawn's child execs after a few calls). Each run sets all the
 * general registers (resume); the parent's XSAVE state is read now and
 * written back at the end, so the child's use of the FPU and vector
 * registers is not the parent's.
 */
static int pt_vm_borrow(struct vmm_vm *parent_base, struct vmm_vm **out)
{
    struct pt_vm *p = pt_of(parent_base);
    if (stub_ensure_quiet(p) < 0 || p->lent_to || p->dead || p->pid <= 0 ||
        p->selftest_cont)
        return -EBUSY;
    struct pt_vm *b = calloc(1, sizeof(*b));
    uint8_t *k = malloc(XSTATE_MAX_KERNEL);
    size_t klen;
    if (!b || !k || get_kernel_xstate(p, k, &klen) < 0) {
        free(b);
        free(k);
        return -EBUSY;
    }
    b->base.ops = p->base.ops;
    b->base.host = p->base.host;
    b->base.pm.memfd = -1;
    b->base.regs = p->base.regs;
    b->pid = p->pid;
    b->pidfd = -1;
    b->phys_hva = p->phys_hva; /* the stub's own pages: scratch, calls */
    b->uregs = p->uregs;
    b->maps_generation = p->maps_generation;
    b->maps_valid = p->maps_valid;
    b->memory_fd = p->memory_fd;
    b->lender = p;
    p->lent_to = b;
    p->lent_xstate = k;
    p->lent_xstate_len = klen;
    *out = &b->base;
    return 0;
}

/* The child's VM goes: the stub is its parent's again, as it was. */
static void end_lend(struct pt_vm *b)
{
    struct pt_vm *p = b->lender;
    struct iovec iov = {p->lent_xstate, p->lent_xstate_len};
    if (!b->dead)
        (void)ptrace(PTRACE_SETREGSET, p->pid, (void *)NT_X86_XSTATE, &iov);
    free(p->lent_xstate);
    p->lent_xstate = NULL;
    p->lent_to = NULL;
    p->maps_generation = b->maps_generation;
    p->maps_valid = b->maps_valid;
    if (b->dead) {
        p->dead = true;
        p->death_signal = b->death_signal;
    } else if (b->dr_touched || p->dr_dirty) {
        p->dr_dirty = false;
        (void)pt_vm_set_debugregs(&p->base, p->dr_addr, p->dr7);
    }
    if (p->destroy_after_lend)
        pt_vm_destroy(&p->base);
}

/* ---- checkpoints (vmm/snapshot.c) ---------------------------------------- */

/* The CPU state of this VM not in hvrun's memory (the kernel's XSAVE
 * image), read while the stub is this process's, for a copy made by
 * fork; NULL (and *len 0) where there is none to copy: a vfork child on
 * its parent's stub, a parent lending it, a dead stub. */
static void *pt_vm_save_cpu(struct vmm_vm *base, size_t *len)
{
    struct pt_vm *vm = pt_of(base);
    *len = 0;
    if (vm->stub_pending || vm->lent_to || vm->lender || vm->dead ||
        vm->pid <= 0)
        return NULL;
    uint8_t *k = malloc(XSTATE_MAX_KERNEL);
    if (k && get_kernel_xstate(vm, k, len) == 0)
        return k;
    free(k);
    *len = 0;
    return NULL;
}

/* In a fork of hvrun: the stub is the original's; forgotten here. */
static void pt_vm_disown(struct vmm_vm *base)
{
    struct pt_vm *vm = pt_of(base);
    if (vm->pidfd >= 0)
        close(vm->pidfd);
    vm->pidfd = -1;
    vm->pid = 0;
    vm->stub_pending = false; /* the original takes its stub */
    vm->cpu_seen_at = 0;
    vm->cpu_timer_pid = 0; /* timers are not inherited: the original's */
    vm->cpu_timer_failed = false;
    vm->cpu_deadline = 0;
    vm->maps_valid = false;
    vm->nr_stub_files = 0; /* the files the original's stub opened */
    pt_maps_clear(&vm->maps);
    vm->batch_n = 0;
    vm->nr_batch_opens = 0;
}

/* A new stub on this VM's memory (pm.memfd, the copy's own by now) with
 * the saved CPU state: registers stay in base->regs and uregs' segment
 * bases, the XSAVE image is cpu, the debug registers dr_addr/dr7; the
 * stub's first run maps every VMA (maps_valid false). 0 or -errno. */
static int pt_vm_respawn(struct vmm_vm *base, const void *cpu, size_t cpu_len,
                         char *why, size_t why_len)
{
    struct pt_vm *vm = pt_of(base);
    struct user_regs_struct kept = vm->uregs;
    uint64_t calls = pt_vm_vdso_calls(base);
    vm->memory_fd = PT_STUB_MEMFD;
    int rc = start_stub(vm, 0, why, why_len);
    if (rc < 0)
        return rc;
    memcpy(vm->phys_hva + PT_CALLS_GPA, &calls, sizeof(calls));
    vm->uregs.fs_base = kept.fs_base;
    vm->uregs.gs_base = kept.gs_base;
    vm->maps_valid = false;
    if (base->memory_vm && (rc = pt_vm_share(base, base->memory_vm)) < 0)
        return rc;
    struct iovec iov = {(void *)cpu, cpu_len};
    if (cpu && ptrace(PTRACE_SETREGSET, vm->pid, (void *)NT_X86_XSTATE,
                      &iov) < 0)
        return -errno;
    if (vm->dr7 || vm->dr_addr[0] || vm->dr_addr[1] || vm->dr_addr[2] ||
        vm->dr_addr[3])
        return pt_vm_set_debugregs(base, vm->dr_addr, vm->dr7);
    return 0;
}

const struct vmm_backend_ops ptrace_backend_ops = {
    .name = "ptrace",
    .host_close = ptrace_host_close,
    .host_set_vm_pool = ptrace_host_set_vm_pool,
    .host_run_syscalls = ptrace_host_run_syscalls,
    .host_confined = ptrace_host_confined,
    .host_fs_restricted = ptrace_host_fs_restricted,
    .vm_create = pt_vm_create,
    .vm_destroy = pt_vm_destroy,
    .vm_share = pt_vm_share,
    .vm_borrow = pt_vm_borrow,
    .vm_vdso_calls = pt_vm_vdso_calls,
    .vm_vdso_calls_reset = pt_vm_vdso_calls_reset,
    .vm_vdso_calls_va = pt_vm_vdso_calls_va,
    .vm_vdso_page = pt_vm_vdso_page,
    .vm_fs_base = pt_vm_fs_base,
    .vm_set_fs_base = pt_vm_set_fs_base,
    .vm_gs_base = pt_vm_gs_base,
    .vm_set_gs_base = pt_vm_set_gs_base,
    .vm_get_xstate = pt_vm_get_xstate,
    .vm_set_xstate = pt_vm_set_xstate,
    .vm_reset_xstate = pt_vm_reset_xstate,
    .vm_set_debugregs = pt_vm_set_debugregs,
    .vm_take_dr6 = pt_vm_take_dr6,
    .vm_syscall_return = pt_vm_syscall_return,
    .vm_enter_user = pt_vm_enter_user,
    .vm_run = pt_vm_run,
    .vm_run_slice = pt_vm_run_slice,
    .vm_save_cpu = pt_vm_save_cpu,
    .vm_disown = pt_vm_disown,
    .vm_respawn = pt_vm_respawn,
    .host_disown = ptrace_host_disown,
    .host_adopt_helper = ptrace_host_adopt_helper,
};
