/*
 * cpuid_probe.c - what the guest's CPUID instruction really returns,
 * measured by running it in a probe VM rather than assumed from what the
 * backend was asked to set. Where the hypervisor cannot intercept CPUID
 * (kvm_pvm on a host without CPUID faulting: the AMD EPYC machines), the
 * guest sees the host CPU whatever KVM_SET_CPUID2 said; hvrun then
 * describes that CPU (/proc/cpuinfo, AT_HWCAP) instead of the model, and
 * `hvrun doctor` says CPUID is not controlled.
 *
 * Uses only the backend interface, so every backend can run it.
 */
#include "cpuid_probe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "backend.h"

extern const unsigned char vmm_cpuid_probe_code[], vmm_cpuid_probe_code_end[];

#define PROBE_CODE_GVA 0x400000ULL
#define PROBE_DATA_GVA 0x600000ULL
#define PROBE_OUT_OFF 1024

static const uint32_t probe_leaves[VMM_CPUID_PROBE_LEAVES][2] = {
    {0, 0},          {1, 0},          {7, 0},          {0x80000000, 0},
    {0x80000001, 0}, {0x80000002, 0}, {0x80000003, 0}, {0x80000004, 0},
};

/* Runs CPUID in vm for each of the n pairs {leaf, subleaf} of leaves
 * (at most VMM_CPUID_PROBE_MAX); seen[i] gets pair i's answer. */
static int run_probe_pairs(struct vmm_vm *vm, const uint32_t (*leaves)[2],
                           int n, struct vmm_cpuid_entry *seen, char *why,
                           size_t why_len)
{
    struct vmm_aspace *as = vmm_vm_aspace(vm);
    size_t code_len = (size_t)(vmm_cpuid_probe_code_end - vmm_cpuid_probe_code);
    int rc = vmm_as_map(as, PROBE_CODE_GVA, 4096, PROT_READ | PROT_EXEC, 0,
                        NULL);
    if (rc == 0)
        rc = vmm_as_map(as, PROBE_DATA_GVA, 4096, PROT_READ | PROT_WRITE, 0,
                        NULL);
    if (rc == 0)
        rc = vmm_as_poke(as, PROBE_CODE_GVA, vmm_cpuid_probe_code, code_len);
    if (rc == 0)
        rc = vmm_as_copy_out(as, PROBE_DATA_GVA, leaves,
                             (size_t)n * sizeof(leaves[0]));
    if (rc < 0) {
        snprintf(why, why_len, "CPUID probe: mapping its pages: %s",
                 strerror(-rc));
        return rc;
    }
    struct vmm_regs *r = vmm_vm_regs(vm);
    memset(r, 0, sizeof(*r));
    r->rip = PROBE_CODE_GVA;
    r->rsp = PROBE_DATA_GVA + 4096;
    r->rsi = PROBE_DATA_GVA;
    r->rdi = PROBE_DATA_GVA + PROBE_OUT_OFF;
    r->rdx = (uint64_t)n;
    r->rflags = 0x202;
    vmm_vm_enter_user(vm);
    struct vmm_event ev;
    if (vmm_vm_run(vm, &ev) < 0 || ev.kind != VMM_EVENT_SYSCALL ||
        vmm_vm_regs(vm)->rax != 60) {
        snprintf(why, why_len, "CPUID probe: the guest did not finish (%s)",
                 ev.kind == VMM_EVENT_FAILED ? ev.what : "unexpected event");
        return -EIO;
    }
    uint32_t out[VMM_CPUID_PROBE_MAX][4];
    rc = vmm_as_copy_in(as, out, PROBE_DATA_GVA + PROBE_OUT_OFF,
                        (size_t)n * sizeof(out[0]));
    if (rc < 0) {
        snprintf(why, why_len, "CPUID probe: reading its results: %s",
                 strerror(-rc));
        return rc;
    }
    for (int i = 0; i < n; i++)
        seen[i] = (struct vmm_cpuid_entry){
            leaves[i][0], leaves[i][1], VMM_CPUID_INDEXED,
            out[i][0], out[i][1], out[i][2], out[i][3]};
    return 0;
}

static int probe_pairs(struct vmm_host *host, const uint32_t (*leaves)[2],
                       int n, struct vmm_cpuid_entry *seen, char *why,
                       size_t why_len)
{
    struct vmm_vm *vm;
    char vm_why[200];
    if (n <= 0 || n > VMM_CPUID_PROBE_MAX)
        return -EINVAL;
    if (vmm_vm_create(host, &vm, vm_why, sizeof(vm_why)) < 0) {
        snprintf(why, why_len, "CPUID probe: creating a VM: %s", vm_why);
        return -EIO;
    }
    int rc = run_probe_pairs(vm, leaves, n, seen, why, why_len);
    vmm_vm_destroy(vm);
    return rc;
}

int vmm_cpuid_probe(struct vmm_host *host, struct vmm_cpuid_entry *seen,
                    char *why, size_t why_len)
{
    return probe_pairs(host, probe_leaves, VMM_CPUID_PROBE_LEAVES, seen, why,
                       why_len);
}

int vmm_cpuid_probe_answers(struct vmm_host *host,
                            const struct vmm_cpuid_entry *model, int nr,
                            struct vmm_cpuid_entry *seen, char *why,
                            size_t why_len)
{
    uint32_t leaves[VMM_CPUID_PROBE_MAX][2];
    if (nr <= 0 || nr > VMM_CPUID_PROBE_MAX)
        return -EINVAL;
    for (int i = 0; i < nr; i++) {
        leaves[i][0] = model[i].function;
        leaves[i][1] = model[i].index;
    }
    int rc = probe_pairs(host, (const uint32_t (*)[2])leaves, nr, seen, why,
                         why_len);
    for (int i = 0; rc == 0 && i < nr; i++)
        seen[i].flags = model[i].flags & VMM_CPUID_INDEXED;
    return rc;
}

/* The leaves that say which CPU this is; APIC ids (leaf 1 EBX[31:24]) and
 * OSXSAVE follow the vCPU, not the model, so they are left out. */
/*
 * The feature words too: a host can apply the model's identity (leaf 0,
 * leaf 1 EAX, the brand) and still show its own feature bits (seen on an
 * Intel kvm_pvm host: leaf 1 EDX and leaf 7 EBX were the host's, AVX-512
 * included, under the model's name). Bits the CPU computes from its state
 * are left out: OSXSAVE (leaf 1 ECX 27, CR4), APIC (leaf 1 EDX 9, the
 * APIC's enable) and OSPKE (leaf 7 ECX 4, CR4).
 */
static bool features_match(const struct vmm_cpuid_entry *s,
                           const struct vmm_cpuid_entry *m)
{
    switch (s->function) {
    case 1:
        return ((s->ecx ^ m->ecx) & ~(1u << 27)) == 0 &&
               ((s->edx ^ m->edx) & ~(1u << 9)) == 0;
    case 7:
        return s->ebx == m->ebx && ((s->ecx ^ m->ecx) & ~(1u << 4)) == 0 &&
               s->edx == m->edx;
    case 0x80000001:
        return s->ecx == m->ecx && s->edx == m->edx;
    default:
        return true;
    }
}

bool vmm_cpuid_probe_matches(const struct vmm_cpuid_entry *seen,
                             const struct vmm_cpuid_entry *model, int nr)
{
    for (int i = 0; i < VMM_CPUID_PROBE_LEAVES; i++) {
        const struct vmm_cpuid_entry *s = &seen[i];
        const struct vmm_cpuid_entry *m =
            vmm_cpuid_find(model, nr, s->function, s->index);
        if (!m)
            continue;
        bool ident = s->function == 0 || s->function >= 0x80000002;
        if (ident && (s->eax != m->eax || s->ebx != m->ebx ||
                      s->ecx != m->ecx || s->edx != m->edx))
            return false;
        if (s->function == 1 && s->eax != m->eax)
            return false;
        if (!features_match(s, m))
            return false;
    }
    return true;
}

bool vmm_cpuid_probe_answered(const struct vmm_cpuid_entry *seen,
                              const struct vmm_cpuid_entry *model, int nr)
{
    for (int i = 0; i < VMM_CPUID_PROBE_LEAVES; i++) {
        const struct vmm_cpuid_entry *s = &seen[i];
        const struct vmm_cpuid_entry *m =
            vmm_cpuid_find(model, nr, s->function, s->index);
        if (!m)
            continue;
        bool vendor = s->function == 0 &&
                      (s->ebx != m->ebx || s->ecx != m->ecx || s->edx != m->edx);
        bool signature = s->function == 1 && s->eax != m->eax;
        bool brand = s->function >= 0x80000002 &&
                     (s->eax != m->eax || s->ebx != m->ebx ||
                      s->ecx != m->ecx || s->edx != m->edx);
        if (vendor || signature || brand)
            return false;
    }
    return true;
}

void vmm_cpuid_model_view(const struct vmm_cpuid_entry *model, int nr,
                          struct vmm_cpuid_entry *seen)
{
    for (int i = 0; i < VMM_CPUID_PROBE_LEAVES; i++) {
        uint32_t r[4];
        vmm_cpu_model_cpuid(model, nr, probe_leaves[i][0], probe_leaves[i][1],
                            r);
        seen[i] = (struct vmm_cpuid_entry){probe_leaves[i][0],
                                           probe_leaves[i][1],
                                           VMM_CPUID_INDEXED,
                                           r[0], r[1], r[2], r[3]};
    }
}

static void put_regs(char *dst, const struct vmm_cpuid_entry *e)
{
    memcpy(dst, &e->eax, 4);
    memcpy(dst + 4, &e->ebx, 4);
    memcpy(dst + 8, &e->ecx, 4);
    memcpy(dst + 12, &e->edx, 4);
}

void vmm_cpuid_identity_of(const struct vmm_cpuid_entry *seen,
                           struct vmm_cpu_identity *id)
{
    memset(id, 0, sizeof(*id));
    const struct vmm_cpuid_entry *l0 = vmm_cpuid_find(seen, VMM_CPUID_PROBE_LEAVES, 0, 0);
    const struct vmm_cpuid_entry *l1 = vmm_cpuid_find(seen, VMM_CPUID_PROBE_LEAVES, 1, 0);
    const struct vmm_cpuid_entry *l7 = vmm_cpuid_find(seen, VMM_CPUID_PROBE_LEAVES, 7, 0);
    const struct vmm_cpuid_entry *x0 =
        vmm_cpuid_find(seen, VMM_CPUID_PROBE_LEAVES, 0x80000000, 0);
    const struct vmm_cpuid_entry *x1 =
        vmm_cpuid_find(seen, VMM_CPUID_PROBE_LEAVES, 0x80000001, 0);
    id->max_leaf = l0->eax;
    memcpy(id->vendor, &l0->ebx, 4);
    memcpy(id->vendor + 4, &l0->edx, 4);
    memcpy(id->vendor + 8, &l0->ecx, 4);
    uint32_t eax = l1->eax;
    unsigned base_family = (eax >> 8) & 0xf, base_model = (eax >> 4) & 0xf;
    id->family = base_family == 0xf ? base_family + ((eax >> 20) & 0xff)
                                    : base_family;
    id->model = base_family == 0x6 || base_family == 0xf
                    ? base_model | ((eax >> 12) & 0xf0)
                    : base_model;
    id->stepping = eax & 0xf;
    id->leaf1_ecx = l1->ecx;
    id->leaf1_edx = l1->edx;
    if (id->max_leaf >= 7) {
        id->leaf7_ebx = l7->ebx;
        id->leaf7_ecx = l7->ecx;
        id->leaf7_edx = l7->edx;
    }
    if (x0->eax >= 0x80000001) {
        id->ext1_ecx = x1->ecx;
        id->ext1_edx = x1->edx;
    }
    if (x0->eax >= 0x80000004) {
        for (int i = 0; i < 3; i++)
            put_regs(id->brand + 16 * i,
                     vmm_cpuid_find(seen, VMM_CPUID_PROBE_LEAVES,
                                    0x80000002 + (uint32_t)i, 0));
    }
    /* Linux prints the brand without the leading blanks some CPUs pad
     * it with. */
    size_t lead = strspn(id->brand, " ");
    memmove(id->brand, id->brand + lead, sizeof(id->brand) - lead);
}
