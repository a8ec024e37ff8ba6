/*
 * cpu_x86_64.c - GDT/IDT/TSS layouts and the fixed CPUID model.
 *
 * The model is an x86-64-v3 class Intel-like CPU with one core: AVX2, BMI,
 * FMA, but no AVX-512, no RDRAND/RDSEED (they would read host entropy), no
 * TSX, no WAITPKG/PCONFIG. Cache and topology leaves are fixed numbers so
 * that glibc picks the same string functions and thresholds on every host.
 */
#include "cpu_x86_64.h"

#include <string.h>

#include "../guestkernel/gk_abi.h"

/* ---- descriptor tables --------------------------------------------------- */

/* A code/data descriptor: base 0, limit 4G, flags as named. */
static uint64_t seg_desc(unsigned type, unsigned dpl, int long_mode,
                         int db)
{
    uint64_t d = 0xffffULL;               /* limit 15:0 */
    d |= (uint64_t)(type & 0xf) << 40;    /* type */
    d |= 1ULL << 44;                      /* S: code/data */
    d |= (uint64_t)(dpl & 3) << 45;
    d |= 1ULL << 47;                      /* present */
    d |= 0xfULL << 48;                    /* limit 19:16 */
    d |= (uint64_t)(long_mode ? 1 : 0) << 53;
    d |= (uint64_t)(db ? 1 : 0) << 54;
    d |= 1ULL << 55;                      /* granularity 4K */
    return d;
}

void vmm_cpu_build_gdt(uint64_t *gdt, uint64_t tss_va, uint32_t tss_limit)
{
    memset(gdt, 0, 4096);
    gdt[GK_SEL_KERNEL_CS / 8] = seg_desc(0xb, 0, 1, 0);
    gdt[GK_SEL_KERNEL_DS / 8] = seg_desc(0x3, 0, 0, 1);
    gdt[GK_SEL_USER32_CS / 8] = seg_desc(0xb, 3, 0, 1);
    gdt[GK_SEL_USER_DS / 8] = seg_desc(0x3, 3, 0, 1);
    gdt[GK_SEL_USER_CS / 8] = seg_desc(0xb, 3, 1, 0);
    uint64_t lo = tss_limit & 0xffff;
    lo |= (tss_va & 0xffffff) << 16;
    lo |= 0x9ULL << 40; /* available 64-bit TSS */
    lo |= 1ULL << 47;
    lo |= (uint64_t)((tss_limit >> 16) & 0xf) << 48;
    lo |= ((tss_va >> 24) & 0xff) << 56;
    gdt[GK_SEL_TSS / 8] = lo;
    gdt[GK_SEL_TSS / 8 + 1] = tss_va >> 32;
}

void vmm_cpu_build_idt(void *idt, uint64_t stubs_va)
{
    uint64_t *gate = idt;
    memset(idt, 0, 256 * 16);
    for (unsigned v = 0; v < GK_NR_EXC_VECTORS; v++) {
        uint64_t off = stubs_va + v * GK_EXC_STUB_STRIDE;
        /* int3 and into may be raised from user mode, as on Linux. */
        unsigned dpl = (v == 3 || v == 4) ? 3 : 0;
        unsigned ist = (v == 2 || v == 8 || v == 18) ? 1 : 0;
        uint64_t lo = off & 0xffff;
        lo |= (uint64_t)GK_SEL_KERNEL_CS << 16;
        lo |= (uint64_t)ist << 32;
        lo |= 0xeULL << 40; /* 64-bit interrupt gate */
        lo |= (uint64_t)dpl << 45;
        lo |= 1ULL << 47;
        lo |= ((off >> 16) & 0xffff) << 48;
        gate[v * 2] = lo;
        gate[v * 2 + 1] = off >> 32;
    }
}

uint32_t vmm_cpu_build_tss(void *tss, uint64_t rsp0, uint64_t ist1)
{
    uint8_t *t = tss;
    memset(t, 0, 104);
    memcpy(t + 4, &rsp0, 8);
    memcpy(t + 36, &ist1, 8);
    /* An I/O bitmap for ports 0-255 that allows only the exit ports, so
     * the SYSCALL stub's OUT works at CPL3 (kvm_pvm) without IOPL. */
    uint16_t iomap_base = 104;
    memcpy(t + 102, &iomap_base, 2);
    memset(t + 104, 0xff, 33);
    t[104 + GK_PORT_SYSCALL / 8] &= (uint8_t)~(1u << (GK_PORT_SYSCALL % 8));
    t[104 + GK_PORT_EXCEPTION / 8] &=
        (uint8_t)~(1u << (GK_PORT_EXCEPTION % 8));
    return 104 + 33 - 1;
}

/* ---- the CPUID model ----------------------------------------------------- */

enum reg { EAX, EBX, ECX, EDX };

struct feature {
    uint32_t leaf, subleaf;
    enum reg reg;
    unsigned bit;
    const char *name;
    int required; /* refuse to run without it; else offered if host has it */
};

static const struct feature model_features[] = {
    {1, 0, EDX, 0, "fpu", 1},       {1, 0, EDX, 4, "tsc", 1},
    {1, 0, EDX, 5, "msr", 1},       {1, 0, EDX, 6, "pae", 1},
    {1, 0, EDX, 8, "cx8", 1},       {1, 0, EDX, 11, "sep", 0},
    {1, 0, EDX, 13, "pge", 0},      {1, 0, EDX, 15, "cmov", 1},
    {1, 0, EDX, 16, "pat", 0},      {1, 0, EDX, 19, "clflush", 1},
    {1, 0, EDX, 23, "mmx", 1},      {1, 0, EDX, 24, "fxsr", 1},
    {1, 0, EDX, 25, "sse", 1},      {1, 0, EDX, 26, "sse2", 1},
    {1, 0, ECX, 0, "sse3", 1},      {1, 0, ECX, 1, "pclmulqdq", 1},
    {1, 0, ECX, 9, "ssse3", 1},     {1, 0, ECX, 12, "fma", 1},
    {1, 0, ECX, 13, "cx16", 1},     {1, 0, ECX, 19, "sse4_1", 1},
    {1, 0, ECX, 20, "sse4_2", 1},   {1, 0, ECX, 22, "movbe", 1},
    {1, 0, ECX, 23, "popcnt", 1},   {1, 0, ECX, 25, "aes", 1},
    {1, 0, ECX, 26, "xsave", 1},    {1, 0, ECX, 28, "avx", 1},
    {1, 0, ECX, 29, "f16c", 1},
    {7, 0, EBX, 0, "fsgsbase", 0},  {7, 0, EBX, 3, "bmi1", 1},
    {7, 0, EBX, 5, "avx2", 1},      {7, 0, EBX, 8, "bmi2", 1},
    {7, 0, EBX, 9, "erms", 0},      {7, 0, EBX, 19, "adx", 0},
    {0x80000001, 0, ECX, 0, "lahf_lm", 1},
    {0x80000001, 0, ECX, 5, "abm", 1},
    {0x80000001, 0, ECX, 8, "3dnowprefetch", 0},
    {0x80000001, 0, EDX, 11, "syscall", 1},
    {0x80000001, 0, EDX, 20, "nx", 1},
    {0x80000001, 0, EDX, 27, "rdtscp", 0},
    {0x80000001, 0, EDX, 29, "lm", 1},
};

const struct vmm_cpuid_entry *vmm_cpuid_find(const struct vmm_cpuid_entry *t,
                                             int n, uint32_t function,
                                             uint32_t index)
{
    for (int i = 0; i < n; i++)
        if (t[i].function == function &&
            (!(t[i].flags & VMM_CPUID_INDEXED) || t[i].index == index))
            return &t[i];
    return NULL;
}

void vmm_cpu_model_cpuid(const struct vmm_cpuid_entry *model, int n,
                         uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
    const struct vmm_cpuid_entry *e = vmm_cpuid_find(model, n, leaf, subleaf);
    const struct vmm_cpuid_entry *basic = vmm_cpuid_find(model, n, 0, 0);
    if (!e && basic) {
        uint32_t class_leaf = leaf >= 0x80000000 ? 0x80000000 : 0;
        const struct vmm_cpuid_entry *cls =
            vmm_cpuid_find(model, n, class_leaf, 0);
        if (!cls || leaf > cls->eax) {
            leaf = basic->eax;
            e = vmm_cpuid_find(model, n, leaf, subleaf);
        }
    }
    memset(regs, 0, 4 * sizeof(regs[0]));
    if (e) {
        regs[0] = e->eax;
        regs[1] = e->ebx;
        regs[2] = e->ecx;
        regs[3] = e->edx;
    } else if (leaf == 0xb || leaf == 0x1f) {
        /* Undefined topology subleaves echo CL; EDX is the x2APIC id (0). */
        regs[2] = subleaf & 0xff;
    }
}

/*
 * The model has one CPU, APIC id 0; a host CPUID leaf's ids of the CPU it
 * ran on become that. Leaf 1 EBX[31:24] (initial APIC id); leaves 0xb and
 * 0x1f EDX (x2APIC id, in every subleaf); AMD's 0x8000001e: EAX the
 * extended APIC id, EBX[7:0] the compute unit (core) id, ECX[7:0] the
 * node id. What the leaves say of the topology (counts, shifts) is the
 * host's, the same on each of its CPUs.
 */
void vmm_cpu_model_apic_ids(uint32_t leaf, uint32_t regs[4])
{
    switch (leaf) {
    case 1:
        regs[1] &= 0x00ffffffu;
        break;
    case 0xb:
    case 0x1f:
        regs[3] = 0;
        break;
    case 0x8000001e:
        regs[0] = 0;
        regs[1] &= ~0xffu;
        regs[2] &= ~0xffu;
        break;
    default:
        break;
    }
}

static uint32_t *reg_of(struct vmm_cpuid_entry *e, enum reg r)
{
    switch (r) {
    case EAX: return &e->eax;
    case EBX: return &e->ebx;
    case ECX: return &e->ecx;
    default: return &e->edx;
    }
}

static struct vmm_cpuid_entry *add(struct vmm_cpuid_entry *out, int *n,
                                   int max, uint32_t fn, uint32_t idx,
                                   int indexed)
{
    if (*n >= max)
        return NULL;
    struct vmm_cpuid_entry *e = &out[(*n)++];
    memset(e, 0, sizeof(*e));
    e->function = fn;
    e->index = idx;
    e->flags = indexed ? VMM_CPUID_INDEXED : 0;
    return e;
}

static void put_string(uint32_t *regs, const char *s, size_t len)
{
    char buf[16] = {0};
    memcpy(buf, s, len > 16 ? 16 : len);
    memcpy(regs, buf, 16);
}

/* Leaf 4 cache descriptor: type 1 data, 2 instruction, 3 unified. */
static void cache_leaf(struct vmm_cpuid_entry *e, unsigned type,
                       unsigned level, unsigned kib, unsigned ways)
{
    unsigned line = 64, sets = kib * 1024 / (line * ways);
    e->eax = type | level << 5 | 1u << 8;
    e->ebx = (line - 1) | (ways - 1) << 22;
    e->ecx = sets - 1;
    e->edx = 0;
}

void vmm_cpu_xstate_layout(uint64_t xcr0, const struct vmm_cpuid_entry *n0xd,
                           int nr, struct vmm_xstate_layout *out)
{
    memset(out, 0, sizeof(*out));
    out->xcr0 = xcr0;
    out->bytes = 576; /* legacy area + XSAVE header */
    out->comp[0].size = 160;
    out->comp[1].offset = 160;
    out->comp[1].size = 256;
    for (unsigned i = 2; i < VMM_XSTATE_MAX_COMPONENTS; i++) {
        const struct vmm_cpuid_entry *e = vmm_cpuid_find(n0xd, nr, 0xd, i);
        if (!(xcr0 & (1ULL << i)) || !e || !e->eax)
            continue;
        out->comp[i].size = e->eax;
        out->comp[i].offset = e->ebx;
        if (e->ebx + e->eax > out->bytes)
            out->bytes = e->ebx + e->eax;
    }
}

static void add_xstate_leaves(struct vmm_cpuid_entry *out, int *n, int max,
                              const struct vmm_xstate_layout *xl)
{
    struct vmm_cpuid_entry *e = add(out, n, max, 0xd, 0, 1);
    if (!e)
        return;
    e->eax = (uint32_t)xl->xcr0;
    e->edx = (uint32_t)(xl->xcr0 >> 32);
    e->ebx = xl->bytes;
    e->ecx = xl->bytes;
    /* Leaf 0xd.1 stays 0: no XSAVEOPT/XSAVEC/XSAVES, so every libc saves
     * state with plain XSAVE, whatever the host has. */
    add(out, n, max, 0xd, 1, 1);
    for (unsigned i = 2; i < VMM_XSTATE_MAX_COMPONENTS; i++) {
        if (!xl->comp[i].size || !(e = add(out, n, max, 0xd, i, 1)))
            continue;
        e->eax = xl->comp[i].size;
        e->ebx = xl->comp[i].offset;
    }
}

int vmm_cpu_build_model(const struct vmm_cpuid_entry *host, int nr_host,
                        const struct vmm_xstate_layout *xl,
                        struct vmm_cpuid_entry *out, int max_out,
                        const char **missing)
{
    int n = 0;
    struct vmm_cpuid_entry *e;
    struct vmm_cpuid_entry *l0, *l1, *l7, *x1;
    /* Every leaf the model writes fits in this many entries. */
    if (max_out < VMM_CPUID_MAX_ENTRIES / 2) {
        *missing = "room for the CPUID model";
        return -1;
    }

    l0 = add(out, &n, max_out, 0, 0, 0);
    l0->eax = 0xd;
    /* "GenuineIntel" in ebx, edx, ecx order. */
    memcpy(&l0->ebx, "Genu", 4);
    memcpy(&l0->edx, "ineI", 4);
    memcpy(&l0->ecx, "ntel", 4);
    l1 = add(out, &n, max_out, 1, 0, 0);
    l1->eax = 0x000906ea; /* family 6, model 0x9e, stepping 10 */
    l1->ebx = 0x00010800; /* 1 logical CPU, clflush 64 bytes, APIC id 0 */
    /*
     * Leaf 2 names the caches with legacy descriptors (0x2c L1d 32 KiB
     * 8-way, 0x30 L1i 32 KiB 8-way, 0x87 L2 1 MiB 8-way, 0x4d L3 16 MiB
     * 16-way, 64-byte lines), the same caches leaf 4 lists. The usual 0xff
     * ("see leaf 4") makes glibc's start-up walk leaf 4 again for each of
     * its dozen cache queries: 68 CPUIDs per process start instead of
     * about 30, and a CPUID exits to the hypervisor (~35 us on kvm_pvm).
     */
    e = add(out, &n, max_out, 2, 0, 0);
    /* al = 1 (one round); bit 31 of a register would mark it invalid */
    e->eax = 0x302c8701;
    e->ebx = 0x0000004d;
    static const unsigned caches[][4] = {
        {1, 1, 32, 8}, {2, 1, 32, 8}, {3, 2, 1024, 8}, {3, 3, 16384, 16}};
    for (unsigned i = 0; i < 4; i++)
        cache_leaf(add(out, &n, max_out, 4, i, 1), caches[i][0],
                   caches[i][1], caches[i][2], caches[i][3]);
    add(out, &n, max_out, 4, 4, 1); /* type 0: end of list */
    l7 = add(out, &n, max_out, 7, 0, 1);
    e = add(out, &n, max_out, 0xb, 0, 1);
    e->ebx = 1;
    e->ecx = 0x100;
    e = add(out, &n, max_out, 0xb, 1, 1);
    e->ebx = 1;
    e->ecx = 0x201;
    e = add(out, &n, max_out, 0xb, 2, 1);
    e->ecx = 2;
    add_xstate_leaves(out, &n, max_out, xl);
    e = add(out, &n, max_out, 0x80000000, 0, 0);
    e->eax = 0x80000008;
    x1 = add(out, &n, max_out, 0x80000001, 0, 0);
    for (unsigned i = 0; i < 3; i++) {
        e = add(out, &n, max_out, 0x80000002 + i, 0, 0);
        const char *brand = VMM_MODEL_BRAND;
        size_t blen = strlen(brand);
        size_t off = i * 16;
        put_string(&e->eax, off < blen ? brand + off : "",
                   off < blen ? blen - off : 0);
    }
    e = add(out, &n, max_out, 0x80000006, 0, 0);
    e->ecx = 1024u << 16 | 0x6u << 12 | 64;
    e = add(out, &n, max_out, 0x80000008, 0, 0);
    e->eax = 0x3027; /* 39 physical, 48 virtual address bits */
    if (!e)
        return -1;

    for (size_t i = 0; i < sizeof(model_features) / sizeof(model_features[0]);
         i++) {
        const struct feature *f = &model_features[i];
        const struct vmm_cpuid_entry *he =
            vmm_cpuid_find(host, nr_host, f->leaf, f->subleaf);
        uint32_t hv = 0;
        if (he)
            hv = *reg_of((struct vmm_cpuid_entry *)he, f->reg);
        int has = (hv >> f->bit) & 1;
        if (!has) {
            if (f->required) {
                *missing = f->name;
                return -1;
            }
            continue;
        }
        struct vmm_cpuid_entry *dst = f->leaf == 1   ? l1
                                      : f->leaf == 7 ? l7
                                                     : x1;
        *reg_of(dst, f->reg) |= 1u << f->bit;
    }
    /* OSXSAVE mirrors CR4.OSXSAVE, which hvrun sets; KVM keeps it in sync. */
    l1->ecx |= 1u << 27;
    return n;
}

uint64_t vmm_cpu_model_hwcap(const struct vmm_cpuid_entry *model, int n)
{
    const struct vmm_cpuid_entry *l1 = vmm_cpuid_find(model, n, 1, 0);
    return l1 ? l1->edx : 0;
}

uint64_t vmm_cpu_model_hwcap2(const struct vmm_cpuid_entry *model, int n)
{
    const struct vmm_cpuid_entry *l7 = vmm_cpuid_find(model, n, 7, 0);
    /* HWCAP2_FSGSBASE is bit 1 on x86. */
    return (l7 && (l7->ebx & 1)) ? 2 : 0;
}
