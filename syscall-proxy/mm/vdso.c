/*
 * vdso.c - the guest's vDSO (guestkernel/vdso.c) and its [vvar] page: the
 * clock reads glibc makes through the vDSO are answered inside the guest,
 * from the logical clock, with no exit (an exit costs ~105 us on kvm_pvm;
 * a JVM makes tens of thousands of clock reads).
 *
 * Before the guest runs, hvrun writes detcore's clock into [vvar] (mapped
 * read-only to the guest, a special mapping as on Linux) and zeroes the
 * vDSO's call count (a word of the VM's own that the backend places,
 * vmm_vm_vdso_calls_va, the only thing the vDSO writes); when the run stops it folds the reads the vDSO counted
 * into detcore: each one is an event, as the syscall it replaces would
 * have been, so every clock value is the one the syscall path gives. A
 * stop the host caused (a signal, a timer) is not a point of the program's
 * own: there the count goes on and no detlog record is made. A
 * count above what the vDSO can reach is a guest's scribble and folds as
 * nothing (vdso_abi.h).
 */
#include "proxy.h"
#include "config.h"
#include "kernel.h"
#include "mm.h"
#include "internal.h"
#include "cpuid_patch.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu_x86_64.h"
#include "det.h"
#include "vdso_abi.h"

extern const uint8_t gk_vdso_start[], gk_vdso_end[];

/*
 * The vDSO's text: the same bytes in every process, so the page store's
 * page (vmm/page_store.c), mapped direct as rewritten code is, rather
 * than a copy of the image into each process's fresh memory (a page
 * fault of hvrun's and one of the guest's an exec). A guest's write
 * (gdb's breakpoint) still makes its own private copy. The ordinary way
 * when the store cannot have it.
 */
static int map_vdso_text(struct proxy_process *p, gva_t vdso, size_t image)
{
    if (vmm_as_map_stored(p->as, vdso, PROT_READ | PROT_EXEC, 0,
                          "[vdso]") == 0) {
        vmm_as_stage_begin(p->as);
        int rc = vmm_as_poke(p->as, vdso, gk_vdso_start, image);
        int stored = vmm_as_stage_end(p->as);
        return rc < 0 ? rc : stored < 0 ? stored : 0;
    }
    int rc = vmm_as_map(p->as, vdso, VMM_PAGE_SIZE, PROT_READ | PROT_EXEC, 0,
                        "[vdso]");
    return rc < 0 ? rc : vmm_as_poke(p->as, vdso, gk_vdso_start, image);
}

/*
 * The VM's CPUID answers for the stubs at rewritten CPUID sites
 * (cpuid_patch.c), at GK_VVAR_CPUID_OFF of a fresh [vvar]: built once a
 * run from vmm_host_cpuid_answers; none (an end entry only) where there
 * are none, and every CPUID is then run.
 */
static int put_cpuid_answers(struct proxy_process *p, gva_t vvar)
{
    _Static_assert(sizeof(struct gk_vvar) <= GK_VVAR_CPUID_OFF &&
                       GK_VVAR_CPUID_OFF + (GK_VVAR_CPUID_MAX + 1) *
                               sizeof(struct gk_cpuid_answer) <=
                           VMM_PAGE_SIZE &&
                       sizeof(struct gk_cpuid_answer) ==
                           GK_CPUID_ANSWER_SIZE &&
                       offsetof(struct gk_cpuid_answer, flags) ==
                           GK_CPUID_FLAGS &&
                       offsetof(struct gk_cpuid_answer, eax) == GK_CPUID_EAX,
                   "[vvar]'s CPUID answers");
    static struct gk_cpuid_answer table[GK_VVAR_CPUID_MAX + 1];
    static size_t nr = (size_t)-1;
    if (!p->cfg->cpuid_table)
        return 0;
    if (nr == (size_t)-1) {
        const struct vmm_cpuid_entry *e;
        int n = vmm_host_cpuid_answers(vmm_vm_host(p->vm), &e);
        nr = 0;
        for (int i = 0; i < n && nr < GK_VVAR_CPUID_MAX; i++)
            table[nr++] = (struct gk_cpuid_answer){
                e[i].function, e[i].index,
                e[i].flags & VMM_CPUID_INDEXED ? GK_CPUID_INDEXED : 0, 0,
                e[i].eax, e[i].ebx, e[i].ecx, e[i].edx};
        if (n < 0)
            proxy_log(p, 1, "CPUID answers for the guest: %s: every CPUID "
                      "exits", strerror(-n));
        table[nr] = (struct gk_cpuid_answer){.flags = GK_CPUID_END};
    }
    return vmm_as_poke(p->as, vvar + GK_VVAR_CPUID_OFF, table,
                       (nr + 1) * sizeof(table[0]));
}

int proxy_vdso_map(struct proxy_process *p, gva_t *ehdr_out)
{
    size_t image = (size_t)(gk_vdso_end - gk_vdso_start);
    if (image == 0 || image > VMM_PAGE_SIZE)
        return -ENOEXEC;
    gva_t vvar;
    int rc = vmm_as_find_free(p->as, 2 * VMM_PAGE_SIZE, p->mm.mmap_base, &vvar);
    if (rc < 0)
        return rc;
    gva_t vdso = vvar + VMM_PAGE_SIZE;
    if ((rc = vmm_as_map(p->as, vvar, VMM_PAGE_SIZE, PROT_READ,
                         VMM_VMA_SPECIAL, "[vvar]")) < 0 ||
        (rc = put_cpuid_answers(p, vvar)) < 0 ||
        (rc = map_vdso_text(p, vdso, image)) < 0)
        return rc;
    p->mm.vvar_gva = vvar;
    proxy_cpuid_vvar_mapped(p); /* the RDTSC stubs read it too */
    *ehdr_out = vdso;
    return 0;
}

/*
 * The identity calls' answers for the thread about to run (cpuid_patch.c,
 * "identity calls"): what sys_getpid and the others return, or 0 (the
 * call is made) where it must be seen: a seccomp filter (which may refuse
 * it), a tracer (its syscall stops), syscall user dispatch.
 */
static void put_ids(struct proxy_process *p, uint64_t ids[6])
{
    const struct proxy_thread *t = &p->threads[p->cur];
    if (t->seccomp || t->seccomp_strict || t->pt.tracer || t->dispatch_on)
        return;
    uint32_t v[6];
    v[GK_VVAR_ID_PID] = (uint32_t)proxy_ns_pid_of(p, p);
    v[GK_VVAR_ID_PPID] = (uint32_t)proxy_ns_pid_nr(p, p->ppid);
    v[GK_VVAR_ID_UID] = (uint32_t)proxy_ns_uid_seen(p, p->cred.ruid);
    v[GK_VVAR_ID_EUID] = (uint32_t)proxy_ns_uid_seen(p, p->cred.euid);
    v[GK_VVAR_ID_GID] = (uint32_t)proxy_ns_gid_seen(p, p->cred.rgid);
    v[GK_VVAR_ID_EGID] = (uint32_t)proxy_ns_gid_seen(p, p->cred.egid);
    for (int i = 0; i < 6; i++)
        ids[i] = GK_VVAR_ID_VALID | v[i];
}

/*
 * rt_sigprocmask and rt_sigaction answered in the guest (cpuid_patch.c,
 * "signal calls"): the running thread's mask, what is pending for it and
 * anywhere in its process, and its process's dispositions, in the call
 * count's page (vdso_abi.h: gk_sigstate), or 0 in [vvar]'s sig_va (the
 * calls are made) where ids are not answered either. A 2.3 KB write a
 * run, against an exit of ~25 us saved a call.
 */
static uint64_t publish_signals(struct proxy_process *p, const uint64_t *ids)
{
    p->mm.sig_published = false;
    uint8_t *page = vmm_vm_vdso_page(p->vm);
    if (!ids[GK_VVAR_ID_PID] || !page)
        return 0;
    struct gk_sigstate *s = (struct gk_sigstate *)(void *)(page +
                                                        GK_SIGSTATE_OFF);
    _Static_assert(GK_SIGSTATE_OFF + sizeof(*s) <= VMM_PAGE_SIZE &&
                       offsetof(struct gk_sigstate, acts) ==
                           GK_SIGSTATE_ACTS &&
                       sizeof(s->acts[0]) == sizeof(struct proxy_sigaction),
                   "the stubs' view of gk_sigstate");
    s->blocked = p->sig.sigmask;
    s->pending = proxy_signal_pending_for(p, p->tid);
    s->pending_any = p->sig.pending_mask;
    for (int i = 0; i < p->nr_threads; i++)
        s->pending_any |= p->threads[i].own_pending;
    s->acts_set = 0;
    memcpy(s->acts, &p->sig.sigactions[1], sizeof(s->acts));
    s->tid = (uint64_t)(uint32_t)p->tid; /* sys_set_tid_address's answer */
    s->tid_address_set = 0;
    s->rseq_state = p->threads[p->cur].rseq ? 2 : 0;
    p->mm.sig_published = true;
    return vmm_vm_vdso_calls_va(p->vm) + GK_SIGSTATE_OFF;
}

/* The mask and the actions the stubs may have changed, back into the
 * thread's and its process's state, before anything of the exit is
 * looked at (world.c); a stub interrupted before its store starts over. */
void proxy_vdso_signals_back(struct proxy_process *p, bool interrupted)
{
    if (!p->mm.sig_published)
        return;
    p->mm.sig_published = false;
    const uint64_t unblockable = (1ULL << (SIGKILL - 1)) |
                                 (1ULL << (SIGSTOP - 1));
    const struct gk_sigstate *s =
        (const struct gk_sigstate *)(const void *)(vmm_vm_vdso_page(p->vm) +
                                                   GK_SIGSTATE_OFF);
    p->sig.sigmask = s->blocked & ~unblockable;
    for (uint64_t set = s->acts_set; set; set &= set - 1) {
        int sig = __builtin_ctzll(set) + 1;
        if (sig == SIGKILL || sig == SIGSTOP) /* the guest's own write */
            continue;
        memcpy(&p->sig.sigactions[sig], &s->acts[sig - 1],
               sizeof(p->sig.sigactions[sig]));
        p->sig.sigactions[sig].mask &= ~unblockable;
    }
    if (s->tid_address_set) /* as sys_set_tid_address */
        p->clear_child_tid = s->tid_address;
    struct proxy_thread *t = &p->threads[p->cur];
    if (s->rseq_state == 1 && !t->rseq && s->rseq_area &&
        !(s->rseq_area & 31)) { /* as kernel/rseq.c's sys_rseq */
        t->rseq = s->rseq_area;
        t->rseq_len = 32;
        t->rseq_sig = (uint32_t)s->rseq_sig;
    }
    if (interrupted)
        proxy_cpuid_sig_stub_interrupted(p);
}

void proxy_vdso_enter(struct proxy_process *p)
{
    p->mm.sig_published = false;
    if (!p->mm.vvar_gva)
        return;
    /* After a host interruption the count goes on: the vDSO's forced
     * syscall then falls after the same number of reads in every run,
     * wherever the host's signals or timers cut the KVM_RUNs. */
    if (!p->mm.vdso_count_goes_on) {
        vmm_vm_vdso_calls_reset(p->vm);
        p->mm.vdso_folded = 0;
    }
    /* A guest that unmapped or moved the page only loses the fast path
     * (the vDSO checks the magic) or faults, as Linux's vDSO would. */
    struct vmm_vma *v = vmm_as_find_vma(p->as, p->mm.vvar_gva);
    if (!v || !(v->flags & VMM_VMA_SPECIAL)) {
        /* Gone: the stubs that read it are told so (their fallback, a
         * trap or the call: an identity call must not fault where its
         * syscall would not), and it is written no more. */
        p->mm.vvar_gva = 0;
        proxy_cpuid_vvar_mapped(p);
        return;
    }
    struct det_clock_page c;
    det_clock_page(p->det, &c);
    /* Call n of the count sees now_ns + n * event_ns: the reads already
     * folded are in detcore's clock, so they come off the base. */
    struct gk_vvar page = {.magic = GK_VDSO_MAGIC,
                           .virtual_time = c.virtual_time,
                           .now_ns = c.now_ns -
                                     (int64_t)p->mm.vdso_folded * c.event_ns,
                           .epoch_ns = c.epoch_ns,
                           .boot_ns = c.boot_ns, .event_ns = c.event_ns,
                           .coarse_ns = c.coarse_ns,
                           .calls_va = vmm_vm_vdso_calls_va(p->vm)};
    /* The folded reads are in the thread's cpu_ns: they come off too. */
    int64_t folded_ns = (int64_t)p->mm.vdso_folded * c.event_ns;
    page.thread_cpu_ns =
        (int64_t)proxy_cpu_clock_base(p, CLOCK_THREAD_CPUTIME_ID) - folded_ns;
    page.process_cpu_ns =
        (int64_t)proxy_cpu_clock_base(p, CLOCK_PROCESS_CPUTIME_ID) -
        folded_ns;
    put_ids(p, page.ids);
    page.sig_va = publish_signals(p, page.ids);
    (void)vmm_as_poke(p->as, p->mm.vvar_gva, &page, sizeof(page));
}

/* The reads folded since the last record go into the detlog as one. */
static void log_folded(struct proxy_process *p)
{
    det_clock_log_folded(p->det, p->mm.vdso_unlogged);
    p->mm.vdso_unlogged = 0;
}

uint64_t proxy_vdso_unfolded(struct proxy_process *p)
{
    if (!p->mm.vvar_gva)
        return 0;
    uint64_t calls = vmm_vm_vdso_calls(p->vm);
    if (calls > GK_VDSO_MAX_CALLS || calls < p->mm.vdso_folded)
        return 0;
    return calls - p->mm.vdso_folded;
}

uint64_t proxy_vdso_unlogged(const struct proxy_process *p)
{
    return p->mm.vdso_unlogged;
}

bool proxy_vdso_count_spent(struct proxy_process *p)
{
    return p->mm.vvar_gva && vmm_vm_vdso_calls(p->vm) == GK_VDSO_MAX_CALLS;
}

uint64_t proxy_vdso_leave(struct proxy_process *p, bool host_interruption)
{
    if (!p->mm.vvar_gva)
        return 0;
    uint64_t calls = vmm_vm_vdso_calls(p->vm);
    if (calls > GK_VDSO_MAX_CALLS || calls < p->mm.vdso_folded) {
        proxy_log(p, 2, "vDSO call count %llu is not one the vDSO writes: "
                  "not folded", (unsigned long long)calls);
        p->mm.vdso_count_goes_on = false;
        log_folded(p);
        return 0;
    }
    uint64_t fresh = calls - p->mm.vdso_folded;
    det_clock_fold(p->det, fresh);
    proxy_cpu_charge(p, fresh * DET_EVENT_NS);
    p->mm.vdso_unlogged += fresh;
    p->mm.vdso_folded = calls;
    p->mm.vdso_count_goes_on = host_interruption;
    if (!host_interruption)
        log_folded(p);
    return fresh;
}
