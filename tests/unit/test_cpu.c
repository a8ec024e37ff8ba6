/*
 * test_cpu.c - vmm/cpu_x86_64.c: GDT, IDT and TSS bit layouts (checked
 * against the Intel SDM encodings) and the fixed CPUID model.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>

#include "cpu_x86_64.h"
#include "gk_abi.h"

static uint64_t bits(uint64_t v, unsigned lo, unsigned n)
{
    return (v >> lo) & ((1ULL << n) - 1);
}

/* ---- GDT ------------------------------------------------------------------ */

#define TSS_VA 0xfedcba9876543210ULL
#define TSS_LIMIT 0x10067u

static uint64_t gdt[512];

static void build_gdt(void)
{
    memset(gdt, 0xcc, sizeof(gdt));
    vmm_cpu_build_gdt(gdt, TSS_VA, TSS_LIMIT);
}

struct seg {
    uint64_t type, s, dpl, p, l, db, g, base, limit;
};

static struct seg decode(uint64_t d)
{
    struct seg s = {
        .type = bits(d, 40, 4), .s = bits(d, 44, 1), .dpl = bits(d, 45, 2),
        .p = bits(d, 47, 1),    .l = bits(d, 53, 1), .db = bits(d, 54, 1),
        .g = bits(d, 55, 1),
        .base = bits(d, 16, 24) | bits(d, 56, 8) << 24,
        .limit = bits(d, 0, 16) | bits(d, 48, 4) << 16,
    };
    return s;
}

Test(gdt, null_descriptor_and_rest_zero)
{
    build_gdt();
    cr_assert_eq(gdt[0], 0);
    /* Nothing beyond the TSS descriptor (slots 8 and 9). */
    for (int i = 10; i < 512; i++)
        cr_assert_eq(gdt[i], 0, "gdt[%d] = %#llx", i,
                     (unsigned long long)gdt[i]);
    cr_assert_eq(gdt[1], 0);
}

Test(gdt, user_code_is_64bit_dpl3_at_0x33)
{
    build_gdt();
    cr_assert_eq(GK_SEL_USER_CS, 0x33, "Linux's __USER_CS");
    struct seg s = decode(gdt[0x33 >> 3]);
    cr_assert_eq(s.p, 1);
    cr_assert_eq(s.s, 1, "code/data, not system");
    cr_assert(s.type & 0x8, "code segment");
    cr_assert_eq(s.dpl, 3);
    cr_assert_eq(s.l, 1, "L=1: 64-bit code");
    cr_assert_eq(s.db, 0, "D must be 0 when L=1");
}

Test(gdt, kernel_code_is_64bit_dpl0_at_0x10)
{
    build_gdt();
    struct seg s = decode(gdt[0x10 >> 3]);
    cr_assert_eq(s.p, 1);
    cr_assert(s.type & 0x8);
    cr_assert_eq(s.dpl, 0);
    cr_assert_eq(s.l, 1);
    cr_assert_eq(s.db, 0);
}

Test(gdt, data_segments)
{
    build_gdt();
    cr_assert_eq(GK_SEL_USER_DS, 0x2b, "Linux's __USER_DS");
    struct seg u = decode(gdt[0x2b >> 3]);
    cr_assert_eq(u.p, 1);
    cr_assert_eq(u.s, 1);
    cr_assert_eq(u.type & 0x8, 0, "data segment");
    cr_assert(u.type & 0x2, "writable");
    cr_assert_eq(u.dpl, 3);
    struct seg k = decode(gdt[0x18 >> 3]);
    cr_assert_eq(k.p, 1);
    cr_assert_eq(k.type & 0x8, 0);
    cr_assert(k.type & 0x2);
    cr_assert_eq(k.dpl, 0);
}

Test(gdt, user32_code_is_compat_mode)
{
    build_gdt();
    struct seg s = decode(gdt[0x23 >> 3]);
    cr_assert_eq(s.p, 1);
    cr_assert(s.type & 0x8);
    cr_assert_eq(s.dpl, 3);
    cr_assert_eq(s.l, 0);
    cr_assert_eq(s.db, 1);
}

Test(gdt, tss_descriptor_type9_base_split)
{
    build_gdt();
    unsigned idx = GK_SEL_TSS >> 3;
    uint64_t lo = gdt[idx], hi = gdt[idx + 1];
    struct seg s = decode(lo);
    cr_assert_eq(s.type, 0x9, "available 64-bit TSS");
    cr_assert_eq(s.s, 0, "system descriptor");
    cr_assert_eq(s.p, 1);
    cr_assert_eq(s.dpl, 0);
    cr_assert_eq(bits(lo, 16, 16), TSS_VA & 0xffff, "base 15:0");
    cr_assert_eq(bits(lo, 32, 8), (TSS_VA >> 16) & 0xff, "base 23:16");
    cr_assert_eq(bits(lo, 56, 8), (TSS_VA >> 24) & 0xff, "base 31:24");
    cr_assert_eq(hi & 0xffffffffULL, TSS_VA >> 32, "base 63:32");
    cr_assert_eq(hi >> 32, 0, "reserved upper half of the second word");
    cr_assert_eq(s.limit, TSS_LIMIT);
    cr_assert_eq(s.base | (hi & 0xffffffffULL) << 32, TSS_VA);
}

/* ---- IDT ------------------------------------------------------------------ */

#define STUBS_VA 0xffffffff80005000ULL

Test(idt, exception_gates)
{
    static uint64_t idt[512];
    memset(idt, 0xcc, sizeof(idt));
    vmm_cpu_build_idt(idt, STUBS_VA);
    for (unsigned v = 0; v < 32; v++) {
        uint64_t lo = idt[v * 2], hi = idt[v * 2 + 1];
        uint64_t off = bits(lo, 0, 16) | bits(lo, 48, 16) << 16 |
                       (hi & 0xffffffffULL) << 32;
        cr_assert_eq(off, STUBS_VA + v * 16, "vector %u offset %#llx", v,
                     (unsigned long long)off);
        cr_assert_eq(bits(lo, 16, 16), 0x10, "vector %u selector", v);
        cr_assert_eq(bits(lo, 40, 4), 0xe, "vector %u: interrupt gate", v);
        cr_assert_eq(bits(lo, 44, 1), 0, "vector %u: S must be 0", v);
        cr_assert_eq(bits(lo, 47, 1), 1, "vector %u: present", v);
        unsigned want_dpl = (v == 3 || v == 4) ? 3 : 0;
        cr_assert_eq(bits(lo, 45, 2), want_dpl, "vector %u DPL", v);
        unsigned want_ist = (v == 2 || v == 8 || v == 18) ? 1 : 0;
        cr_assert_eq(bits(lo, 32, 3), want_ist, "vector %u IST", v);
        cr_assert_eq(bits(lo, 35, 5), 0, "vector %u reserved bits", v);
        cr_assert_eq(hi >> 32, 0, "vector %u reserved high dword", v);
    }
    for (unsigned v = 32; v < 256; v++)
        cr_assert_eq(idt[v * 2] & (1ULL << 47), 0,
                     "vector %u must not be present", v);
}

Test(idt, stub_stride_matches_the_abi)
{
    cr_assert_eq(GK_EXC_STUB_STRIDE, 16);
    cr_assert_eq(GK_NR_EXC_VECTORS, 32);
}

/* ---- TSS ------------------------------------------------------------------ */

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

Test(tss, stacks_and_io_bitmap)
{
    static uint8_t tss[4096];
    memset(tss, 0xcc, sizeof(tss));
    uint64_t rsp0 = 0xffffffff8000a000ULL, ist1 = 0xffffffff8000c000ULL;
    uint32_t limit = vmm_cpu_build_tss(tss, rsp0, ist1);
    cr_assert_eq(rd64(tss + 4), rsp0, "RSP0 at offset 4");
    cr_assert_eq(rd64(tss + 36), ist1, "IST1 at offset 36");
    cr_assert_eq(rd64(tss + 12), 0, "RSP1");
    cr_assert_eq(rd64(tss + 20), 0, "RSP2");
    for (int i = 2; i <= 7; i++)
        cr_assert_eq(rd64(tss + 36 + (i - 1) * 8), 0, "IST%d", i);
    uint16_t iomap;
    memcpy(&iomap, tss + 102, 2);
    cr_assert_geq(iomap, 104, "I/O map base inside the 104-byte TSS");
    /* The map must cover ports 0..255 plus Intel's trailing 0xff byte. */
    cr_assert_geq(limit, (uint32_t)iomap + 32, "limit %u, map at %u", limit,
                  iomap);
    for (unsigned port = 0; port < 256; port++) {
        int denied = (tss[iomap + port / 8] >> (port % 8)) & 1;
        int want_allowed = port == GK_PORT_SYSCALL || port == GK_PORT_EXCEPTION;
        cr_assert_eq(denied, !want_allowed, "port %#x", port);
    }
    cr_assert_eq(tss[iomap + 32], 0xff, "terminating byte");
    cr_assert_eq(GK_PORT_SYSCALL, 0xe0);
    cr_assert_eq(GK_PORT_EXCEPTION, 0xe1);
}

/* ---- CPUID model ---------------------------------------------------------- */

/* A host table offering every bit in every feature register. */
static int full_host(struct vmm_cpuid_entry *h)
{
    int n = 0;
    h[n++] = (struct vmm_cpuid_entry){0, 0, 0, 0x1f, 0x68747541, 0x444d4163,
                                      0x69746e65};
    h[n++] = (struct vmm_cpuid_entry){1, 0, 0, 0x00a20f12, 0x12345678,
                                      0xffffffff, 0xffffffff};
    h[n++] = (struct vmm_cpuid_entry){7, 0, VMM_CPUID_INDEXED, 1, 0xffffffff,
                                      0xffffffff, 0xffffffff};
    h[n++] = (struct vmm_cpuid_entry){7, 1, VMM_CPUID_INDEXED, 0, 0xffffffff,
                                      0xffffffff, 0xffffffff};
    h[n++] = (struct vmm_cpuid_entry){0xd, 2, VMM_CPUID_INDEXED, 256, 576, 0,
                                      0};
    h[n++] = (struct vmm_cpuid_entry){0x80000000, 0, 0, 0x80000021, 0, 0, 0};
    h[n++] = (struct vmm_cpuid_entry){0x80000001, 0, 0, 0, 0, 0xffffffff,
                                      0xffffffff};
    return n;
}

/* The layout hvrun uses when the guest can have the model's XCR0. */
static struct vmm_xstate_layout model_layout(const struct vmm_cpuid_entry *h,
                                             int nh)
{
    struct vmm_xstate_layout xl;
    vmm_cpu_xstate_layout(VMM_MODEL_XCR0, h, nh, &xl);
    return xl;
}

static int build(const struct vmm_cpuid_entry *h, int nh,
                 struct vmm_cpuid_entry *out, int max, const char **missing)
{
    struct vmm_xstate_layout xl = model_layout(h, nh);
    return vmm_cpu_build_model(h, nh, &xl, out, max, missing);
}

static struct vmm_cpuid_entry model[VMM_CPUID_MAX_ENTRIES];
static int nmodel;

static void build_full(void)
{
    struct vmm_cpuid_entry host[16];
    int nh = full_host(host);
    const char *missing = NULL;
    nmodel = build(host, nh, model, VMM_CPUID_MAX_ENTRIES,
                                 &missing);
    cr_assert_gt(nmodel, 0, "model refused: missing %s",
                 missing ? missing : "(null)");
    cr_assert_leq(nmodel, VMM_CPUID_MAX_ENTRIES);
}

static const struct vmm_cpuid_entry *leaf(uint32_t fn, uint32_t idx)
{
    const struct vmm_cpuid_entry *e = vmm_cpuid_find(model, nmodel, fn, idx);
    cr_assert_not_null(e, "leaf %#x.%u missing from the model", fn, idx);
    return e;
}

Test(cpuid, vendor_is_genuine_intel)
{
    build_full();
    const struct vmm_cpuid_entry *l0 = leaf(0, 0);
    char vendor[13] = {0};
    memcpy(vendor, &l0->ebx, 4);
    memcpy(vendor + 4, &l0->edx, 4);
    memcpy(vendor + 8, &l0->ecx, 4);
    cr_assert_str_eq(vendor, "GenuineIntel");
    cr_assert_geq(l0->eax, 0xd, "max basic leaf covers 7 and 0xd");
}

Test(cpuid, leaf7_has_no_avx512_tsx)
{
    build_full();
    const struct vmm_cpuid_entry *l7 = leaf(7, 0);
    static const struct {
        unsigned bit;
        const char *name;
    } absent_ebx[] = {{4, "hle"},        {11, "rtm"},       {16, "avx512f"},
                      {17, "avx512dq"},  {18, "rdseed"},    {21, "avx512ifma"},
                      {26, "avx512pf"},  {27, "avx512er"},  {28, "avx512cd"},
                      {30, "avx512bw"},  {31, "avx512vl"}};
    for (size_t i = 0; i < sizeof(absent_ebx) / sizeof(absent_ebx[0]); i++)
        cr_assert_eq((l7->ebx >> absent_ebx[i].bit) & 1, 0,
                     "leaf 7 EBX offers %s", absent_ebx[i].name);
    static const struct {
        unsigned bit;
        const char *name;
    } absent_ecx[] = {{1, "avx512_vbmi"},  {5, "waitpkg"},
                      {6, "avx512_vbmi2"}, {11, "avx512_vnni"},
                      {12, "avx512_bitalg"}, {14, "avx512_vpopcntdq"}};
    for (size_t i = 0; i < sizeof(absent_ecx) / sizeof(absent_ecx[0]); i++)
        cr_assert_eq((l7->ecx >> absent_ecx[i].bit) & 1, 0,
                     "leaf 7 ECX offers %s", absent_ecx[i].name);
    /* EDX: avx512_4vnniw/4fmaps, vp2intersect, fp16, tsxldtrk, amx, pconfig */
    static const unsigned absent_edx[] = {2, 3, 8, 16, 18, 22, 23, 24};
    for (size_t i = 0; i < sizeof(absent_edx) / sizeof(absent_edx[0]); i++)
        cr_assert_eq((l7->edx >> absent_edx[i]) & 1, 0,
                     "leaf 7 EDX bit %u offered", absent_edx[i]);
    /* What the baseline does offer. */
    cr_assert(l7->ebx & (1u << 5), "avx2");
    cr_assert(l7->ebx & (1u << 3), "bmi1");
    cr_assert(l7->ebx & (1u << 8), "bmi2");
}

Test(cpuid, leaf1_has_no_rdrand_nor_hypervisor)
{
    build_full();
    const struct vmm_cpuid_entry *l1 = leaf(1, 0);
    cr_assert_eq((l1->ecx >> 30) & 1, 0, "RDRAND offered");
    cr_assert_eq((l1->ecx >> 31) & 1, 0, "hypervisor bit set");
    cr_assert(l1->ecx & (1u << 28), "avx");
    cr_assert(l1->ecx & (1u << 26), "xsave");
    cr_assert(l1->ecx & (1u << 27), "osxsave");
    cr_assert(l1->edx & (1u << 26), "sse2");
    /* Not the host's signature: the fixed model's. */
    cr_assert_neq(l1->eax, 0x00a20f12);
    cr_assert_neq(l1->ebx, 0x12345678);
}

Test(cpuid, brand_string_spells_the_model)
{
    build_full();
    const struct vmm_cpuid_entry *x0 = leaf(0x80000000, 0);
    cr_assert_geq(x0->eax, 0x80000004);
    char brand[49] = {0};
    for (unsigned i = 0; i < 3; i++) {
        const struct vmm_cpuid_entry *e = leaf(0x80000002 + i, 0);
        memcpy(brand + i * 16, &e->eax, 4);
        memcpy(brand + i * 16 + 4, &e->ebx, 4);
        memcpy(brand + i * 16 + 8, &e->ecx, 4);
        memcpy(brand + i * 16 + 12, &e->edx, 4);
    }
    cr_assert_str_eq(brand, VMM_MODEL_BRAND);
}

Test(cpuid, xsave_leaf_matches_the_model)
{
    build_full();
    const struct vmm_cpuid_entry *d0 = leaf(0xd, 0);
    cr_assert_eq(d0->eax, (uint32_t)VMM_MODEL_XCR0);
    cr_assert_eq(d0->ecx, VMM_MODEL_XSAVE_BYTES);
    cr_assert_eq(d0->ebx, VMM_MODEL_XSAVE_BYTES);
    const struct vmm_cpuid_entry *d2 = leaf(0xd, 2);
    cr_assert_eq(d2->eax, 256, "AVX state size");
    cr_assert_eq(d2->ebx, 576, "AVX state offset");
    cr_assert_eq(576 + 256, VMM_MODEL_XSAVE_BYTES);
}

Test(cpuid, missing_required_feature_refuses)
{
    struct vmm_cpuid_entry host[16];
    int nh = full_host(host);
    host[2].ebx &= ~(1u << 5); /* clear AVX2 */
    struct vmm_cpuid_entry out[VMM_CPUID_MAX_ENTRIES];
    const char *missing = NULL;
    int n = build(host, nh, out, VMM_CPUID_MAX_ENTRIES,
                                &missing);
    cr_assert_eq(n, -1);
    cr_assert_not_null(missing);
    cr_assert_str_eq(missing, "avx2");
}

Test(cpuid, missing_leaf_refuses)
{
    struct vmm_cpuid_entry host[16];
    int nh = full_host(host);
    host[6].function = 0x80000008; /* drop 0x80000001 */
    struct vmm_cpuid_entry out[VMM_CPUID_MAX_ENTRIES];
    const char *missing = NULL;
    cr_assert_eq(build(host, nh, out, VMM_CPUID_MAX_ENTRIES,
                                     &missing),
                 -1);
    cr_assert_str_eq(missing, "lahf_lm");
}

Test(cpuid, same_model_whatever_extra_host_bits)
{
    /* Two hosts that differ only in features outside the model. */
    struct vmm_cpuid_entry h1[16], h2[16];
    int n1 = full_host(h1);
    int n2 = full_host(h2);
    h2[1].ecx &= ~((1u << 30) | (1u << 31)); /* no rdrand, no hypervisor */
    h2[2].ebx &= ~((1u << 16) | (1u << 11) | (1u << 4)); /* no avx512f, tsx */
    h2[2].ecx = 0;
    h2[2].edx = 0;
    struct vmm_cpuid_entry m1[VMM_CPUID_MAX_ENTRIES], m2[VMM_CPUID_MAX_ENTRIES];
    const char *missing = NULL;
    int k1 = build(h1, n1, m1, VMM_CPUID_MAX_ENTRIES, &missing);
    int k2 = build(h2, n2, m2, VMM_CPUID_MAX_ENTRIES, &missing);
    cr_assert_gt(k1, 0);
    cr_assert_eq(k1, k2);
    cr_assert_eq(memcmp(m1, m2, (size_t)k1 * sizeof(m1[0])), 0,
                 "the model leaked host-only bits");
}

Test(cpuid, too_small_output_fails_cleanly)
{
    struct vmm_cpuid_entry host[16];
    int nh = full_host(host);
    struct vmm_cpuid_entry out[VMM_CPUID_MAX_ENTRIES];
    const char *missing = NULL;
    for (int max = 0; max < 8; max++) {
        int n = build(host, nh, out, max, &missing);
        cr_assert(n == -1 || (n >= 0 && n <= max),
                  "max_out %d gave %d entries", max, n);
    }
}

Test(cpuid, hwcap_comes_from_the_model)
{
    build_full();
    cr_assert_eq(vmm_cpu_model_hwcap(model, nmodel), leaf(1, 0)->edx);
    /* fsgsbase was offered by the host, so HWCAP2_FSGSBASE (bit 1). */
    cr_assert_eq(vmm_cpu_model_hwcap2(model, nmodel), 2);
}

Test(cpuid, find_respects_indexed_leaves)
{
    struct vmm_cpuid_entry t[3] = {
        {4, 0, VMM_CPUID_INDEXED, 10, 0, 0, 0},
        {4, 1, VMM_CPUID_INDEXED, 11, 0, 0, 0},
        {1, 0, 0, 12, 0, 0, 0},
    };
    cr_assert_eq(vmm_cpuid_find(t, 3, 4, 1)->eax, 11);
    cr_assert_null(vmm_cpuid_find(t, 3, 4, 2));
    /* A non-indexed leaf answers any subleaf. */
    cr_assert_eq(vmm_cpuid_find(t, 3, 1, 5)->eax, 12);
    cr_assert_null(vmm_cpuid_find(t, 3, 0x80000000, 0));
}

/* ---- XSAVE layout ---------------------------------------------------------- */

Test(xstate, model_xcr0_layout_is_832_bytes)
{
    struct vmm_cpuid_entry host[16];
    int nh = full_host(host);
    struct vmm_xstate_layout xl = model_layout(host, nh);
    cr_assert_eq(xl.xcr0, VMM_MODEL_XCR0);
    cr_assert_eq(xl.bytes, VMM_MODEL_XSAVE_BYTES);
    cr_assert_eq(xl.comp[2].size, 256);
    cr_assert_eq(xl.comp[2].offset, 576);
}

Test(xstate, host_xcr0_with_avx512_components)
{
    /* kvm_pvm: the guest runs with the host's XCR0 (x87|SSE|AVX|opmask|
     * ZMM_Hi256|Hi16_ZMM); sizes and offsets as on a Skylake-X. */
    struct vmm_cpuid_entry n0xd[] = {
        {0xd, 2, VMM_CPUID_INDEXED, 256, 576, 0, 0},
        {0xd, 3, VMM_CPUID_INDEXED, 64, 960, 0, 0}, /* MPX: not in xcr0 */
        {0xd, 5, VMM_CPUID_INDEXED, 64, 1088, 0, 0},
        {0xd, 6, VMM_CPUID_INDEXED, 512, 1152, 0, 0},
        {0xd, 7, VMM_CPUID_INDEXED, 1024, 1664, 0, 0},
    };
    struct vmm_xstate_layout xl;
    vmm_cpu_xstate_layout(0xe7, n0xd, 5, &xl);
    cr_assert_eq(xl.bytes, 2688);
    cr_assert_eq(xl.comp[3].size, 0, "component outside xcr0 counted");
    cr_assert_eq(xl.comp[7].offset, 1664);
    /* The model then describes what the guest really has. */
    struct vmm_cpuid_entry host[16];
    int nh = full_host(host);
    struct vmm_cpuid_entry out[VMM_CPUID_MAX_ENTRIES];
    const char *missing = NULL;
    int n = vmm_cpu_build_model(host, nh, &xl, out, VMM_CPUID_MAX_ENTRIES,
                                &missing);
    cr_assert_gt(n, 0);
    const struct vmm_cpuid_entry *d0 = vmm_cpuid_find(out, n, 0xd, 0);
    cr_assert_not_null(d0);
    cr_assert_eq(d0->eax, 0xe7);
    cr_assert_eq(d0->ebx, 2688);
    const struct vmm_cpuid_entry *d6 = vmm_cpuid_find(out, n, 0xd, 6);
    cr_assert_not_null(d6);
    cr_assert_eq(d6->eax, 512);
    cr_assert_eq(d6->ebx, 1152);
    cr_assert_null(vmm_cpuid_find(out, n, 0xd, 3));
}

/* Leaf 2's legacy descriptors name the same caches as leaf 4 (glibc reads
 * leaf 2 when it holds no 0xff), in registers without bit 31 (invalid). */
Test(cpuid, leaf2_descriptors_match_leaf4)
{
    build_full();
    const struct vmm_cpuid_entry *l2 = leaf(2, 0);
    const uint32_t regs[4] = {l2->eax & ~0xffu, l2->ebx, l2->ecx, l2->edx};
    cr_assert_eq(l2->eax & 0xff, 1, "one round of leaf 2");
    /* descriptor -> {type, level, KiB, ways} (Intel SDM table 3-12) */
    static const struct { uint8_t d; unsigned type, level, kib, ways; } known[] = {
        {0x2c, 1, 1, 32, 8}, {0x30, 2, 1, 32, 8},
        {0x87, 3, 2, 1024, 8}, {0x4d, 3, 3, 16384, 16}};
    unsigned found = 0;
    for (int r = 0; r < 4; r++) {
        cr_assert_eq(regs[r] & 0x80000000u, 0, "register %d marked invalid", r);
        for (uint32_t v = regs[r]; v; v >>= 8) {
            uint8_t d = v & 0xff;
            if (d == 0)
                continue;
            cr_assert_neq(d, 0xff, "0xff sends glibc to leaf 4 each time");
            size_t k = 0;
            while (k < 4 && known[k].d != d)
                k++;
            cr_assert_lt(k, 4, "unknown descriptor %#x", d);
            const struct vmm_cpuid_entry *c = leaf(4, (uint32_t)k);
            unsigned line = (c->ebx & 0xfff) + 1, ways = (c->ebx >> 22) + 1;
            unsigned kib = ways * line * (c->ecx + 1) / 1024;
            cr_assert_eq(c->eax & 0x1f, known[k].type);
            cr_assert_eq((c->eax >> 5) & 7, known[k].level);
            cr_assert_eq(kib, known[k].kib, "leaf 4.%zu: %u KiB", k, kib);
            cr_assert_eq(ways, known[k].ways);
            found |= 1u << k;
        }
    }
    cr_assert_eq(found, 0xf, "every cache of leaf 4 is in leaf 2");
}

/* A host's CPUID leaf answered for a trap (ptrace without CPUID faulting):
 * the APIC ids become the model's CPU 0, everything else stays. */
Test(cpuid_model, apic_ids_of_host_leaves_become_cpu_0)
{
    uint32_t l1[4] = {0x000906ea, 0x05100800, 0x7ffafbff, 0xbfebfbff};
    vmm_cpu_model_apic_ids(1, l1);
    cr_assert_eq(l1[1], 0x00100800, "leaf 1 EBX[31:24] only");
    cr_assert_eq(l1[0], 0x000906ea);
    uint32_t lb[4] = {1, 2, 0x100, 5};
    vmm_cpu_model_apic_ids(0xb, lb);
    cr_assert(lb[0] == 1 && lb[1] == 2 && lb[2] == 0x100 && lb[3] == 0);
    uint32_t l1f[4] = {1, 2, 0x201, 7};
    vmm_cpu_model_apic_ids(0x1f, l1f);
    cr_assert(l1f[2] == 0x201 && l1f[3] == 0);
    uint32_t amd[4] = {0x13, 0x0109, 0x0302, 0};
    vmm_cpu_model_apic_ids(0x8000001e, amd);
    cr_assert(amd[0] == 0 && amd[1] == 0x0100 && amd[2] == 0x0300);
    uint32_t other[4] = {1, 2, 3, 4};
    vmm_cpu_model_apic_ids(4, other);
    cr_assert(other[0] == 1 && other[1] == 2 && other[2] == 3 && other[3] == 4);
}
