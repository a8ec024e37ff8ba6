/*
 * cpuid_patch.c - `--cpuid-rewrite`: CPUID instructions of the guest's code
 * become UD2 traps that hvrun answers from the fixed model. With virtual
 * time, RDTSC (0f 31) and RDTSCP (0f 01 f9) likewise, answered from the
 * logical clock: kvm_pvm cannot trap them (CR4.TSD is ignored), and a
 * program that times itself with the TSC (QEMU-TCG's guest TSC is the
 * host's) would otherwise read the host. UD2 is two bytes: RDTSCP's third
 * byte stays and is stepped over with the instruction. An RDTSC followed
 * by the usual compiled tail is read in the guest instead, through a stub
 * that reads the logical clock as the vDSO does ("the stubs", below).
 *
 * Finding them soundly. A byte scan for 0f a2 would also hit immediates,
 * displacements and data (`mov $0xa20f, %eax` holds those bytes), and
 * rewriting one of those corrupts the program. So an instruction is
 * patched only where a real disassembler (Capstone) decoded it: the
 * decoding starts at a known instruction boundary, a function's first byte
 * as its .eh_frame FDE gives it (with the function's length), and sweeps
 * the function linearly (in a file without unwind info, as Go's binaries
 * are, a sized function symbol of its symbol table instead). A function
 * whose bytes do not all decode, to exactly its end, may hold data and is
 * left alone; so is code with neither. Each site keeps a hash of its function's bytes up to the
 * instruction, and the guest's copy is rewritten only if its bytes there
 * still hash the same: a stale cache, a mapping at another offset, or code
 * the guest changed is never patched. Functions whose bytes hold none of
 * the instructions' encodings are not decoded at all.
 *
 * Where. Private file mappings only, which are hvrun's copies of the file
 * (the loader and mmap's fill_from_file read the file into guest memory):
 * the file itself is never written. MAP_SHARED executable mappings are the
 * host file's pages and are left alone.
 *
 * Cost. Decoding libc takes tens of milliseconds, so the sites of a file
 * are kept per run in memory and across runs in hvrun's cache directory,
 * keyed by the file's dev, inode, size and mtime and by hvrun's version.
 */
#include "proxy.h"
#include "config.h"
#include "hooks.h"
#include "kernel.h"
#include "mm.h"
#include "cpuid_patch.h"
#include "det.h"
#include "vdso_abi.h"

#include <capstone/capstone.h>
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef HVRUN_VERSION
#define HVRUN_VERSION "dev"
#endif

#define SITE_CACHE_MAGIC 0x7469737064697063ULL /* "cpidpsit" */
/* Part of the cache name: bump it when the finder changes what it reports. */
#define SITE_FINDER_VERSION "f6"
/* Larger files are not decoded (libjvm.so, among the largest, is 20 MB). */
#define MAX_DECODED_FILE (512ULL << 20)
#define MAX_FUNCTION_BYTES (16ULL << 20)
#define MAX_SITES (1u << 20)

static const uint8_t insn_cpuid[2] = {0x0f, 0xa2};
static const uint8_t insn_rdtsc[2] = {0x0f, 0x31};
static const uint8_t insn_rdtscp[3] = {0x0f, 0x01, 0xf9};
static const uint8_t insn_ud2[2] = {0x0f, 0x0b};
/* RDPID r64: f3 0f c7 f8+r, and f3 41 0f c7 f8+r for r8-r15 (what
 * assemblers emit; Capstone 4 names it RDSEED, ignoring the f3). */
static const uint8_t insn_rdpid[3] = {0xf3, 0x0f, 0xc7};
static const uint8_t insn_rdpid_rex[4] = {0xf3, 0x41, 0x0f, 0xc7};

/* ---- the ELF image ------------------------------------------------------- */

struct image {
    const uint8_t *bytes;
    size_t size;
    GElf_Phdr loads[64];
    size_t nr_loads;
};

/* File offset of [va, va+len) when one PT_LOAD holds it in file bytes. */
static bool file_off_of(const struct image *im, uint64_t va, uint64_t len,
                        bool exec, uint64_t *off)
{
    for (size_t i = 0; i < im->nr_loads; i++) {
        const GElf_Phdr *ph = &im->loads[i];
        if (exec && !(ph->p_flags & PF_X))
            continue;
        if (va < ph->p_vaddr || va - ph->p_vaddr > ph->p_filesz ||
            len > ph->p_filesz - (va - ph->p_vaddr))
            continue;
        uint64_t o = ph->p_offset + (va - ph->p_vaddr);
        if (o > im->size || len > im->size - o)
            return false;
        *off = o;
        return true;
    }
    return false;
}

/* ---- .eh_frame ----------------------------------------------------------- */

struct cursor {
    const uint8_t *p, *end;
    uint64_t va; /* link-time address of p */
};

static bool take(struct cursor *c, void *dst, size_t n)
{
    if ((size_t)(c->end - c->p) < n)
        return false;
    memcpy(dst, c->p, n);
    c->p += n;
    c->va += n;
    return true;
}

static bool leb(struct cursor *c, bool is_signed, uint64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        if (!take(c, &b, 1) || shift > 63)
            return false;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (is_signed && shift < 64 && (b & 0x40))
        v |= ~0ULL << shift;
    *out = v;
    return true;
}

/* A DW_EH_PE-encoded pointer: absolute or pc-relative (what gcc, clang
 * and glibc emit); other applications are refused (the FDE is skipped). */
static bool encoded(struct cursor *c, uint8_t enc, bool apply, uint64_t *out)
{
    uint64_t field_va = c->va, v = 0;
    uint16_t u16;
    uint32_t u32;
    bool ok;
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: ok = take(c, &v, 8); break;
    case 0x01: ok = leb(c, false, &v); break;
    case 0x09: ok = leb(c, true, &v); break;
    case 0x02: ok = take(c, &u16, 2); v = u16; break;
    case 0x0a: ok = take(c, &u16, 2); v = (uint64_t)(int64_t)(int16_t)u16; break;
    case 0x03: ok = take(c, &u32, 4); v = u32; break;
    case 0x0b: ok = take(c, &u32, 4); v = (uint64_t)(int64_t)(int32_t)u32; break;
    default: return false;
    }
    if (!ok)
        return false;
    if (apply) {
        switch (enc & 0x70) {
        case 0x00: break;
        case 0x10: v += field_va; break;
        default: return false;
        }
    }
    *out = v;
    return true;
}

/* The FDE pointer encoding of the CIE at cie (its 'R' augmentation). */
static bool cie_fde_encoding(struct cursor cie, uint8_t *fde_enc)
{
    uint8_t version, b;
    uint64_t skip;
    char aug[16];
    size_t n = 0;
    *fde_enc = 0; /* DW_EH_PE_absptr */
    if (!take(&cie, &version, 1))
        return false;
    do {
        if (!take(&cie, &b, 1) || n >= sizeof(aug))
            return false;
        aug[n++] = (char)b;
    } while (b);
    if (strstr(aug, "eh"))
        return false; /* an old gcc's extra pointer: not worth decoding */
    if (!leb(&cie, false, &skip) || !leb(&cie, true, &skip))
        return false;
    if (version == 1 ? !take(&cie, &b, 1) : !leb(&cie, false, &skip))
        return false;
    if (aug[0] != 'z')
        return true;
    if (!leb(&cie, false, &skip))
        return false;
    for (const char *a = aug + 1; *a; a++) {
        if (*a == 'R')
            return take(&cie, fde_enc, 1);
        if (*a == 'L') {
            if (!take(&cie, &b, 1))
                return false;
        } else if (*a == 'P') {
            uint64_t ignored;
            if (!take(&cie, &b, 1) || !encoded(&cie, b & 0x7f, false, &ignored))
                return false;
        } else if (*a != 'S' && *a != 'B' && *a != 'G') {
            return false;
        }
    }
    return true;
}

/* An instruction boundary inside a site's span: no branch may land there. */
struct inner_boundary {
    uint64_t va;
    size_t site; /* index into finder.sites */
};

struct finder {
    const struct image *im;
    csh cs, cs_detail; /* cs_detail: with operands, for the tails */
    cs_insn *insn, *tail_insn;
    struct proxy_cpuid_site *sites;
    size_t nr, cap;
    struct inner_boundary *inner;
    size_t nr_inner, cap_inner;
    struct proxy_cpuid_scan scan;
};

static uint64_t fnv1a(uint64_t h, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

static int add_site(struct finder *f, uint64_t off, uint64_t va,
                    uint64_t func_off, uint8_t kind, uint8_t len)
{
    if (f->nr == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        if (cap > MAX_SITES)
            return -E2BIG;
        void *v = realloc(f->sites, cap * sizeof(*f->sites));
        if (!v)
            return -ENOMEM;
        f->sites = v;
        f->cap = cap;
    }
    /* The hash is taken once the span is known (find_sites). */
    f->sites[f->nr++] = (struct proxy_cpuid_site){
        off, va, func_off, 0, kind, len, len, {0, 0}, {0, 0}, {0}};
    return 0;
}

/* The kind of a decoded instruction hvrun may rewrite, or -1. A prefixed
 * one (never compiler output) is left as it is. */
static int site_kind(const cs_insn *in)
{
    if (in->id == X86_INS_CPUID && in->size == 2 &&
        !memcmp(in->bytes, insn_cpuid, 2))
        return PROXY_SITE_CPUID;
    if (in->id == X86_INS_RDTSC && in->size == 2 &&
        !memcmp(in->bytes, insn_rdtsc, 2))
        return PROXY_SITE_RDTSC;
    if (in->id == X86_INS_RDTSCP && in->size == 3 &&
        !memcmp(in->bytes, insn_rdtscp, 3))
        return PROXY_SITE_RDTSCP;
    if (in->id == X86_INS_RDSEED && in->bytes[in->size - 1] >= 0xf8 &&
        ((in->size == 4 && !memcmp(in->bytes, insn_rdpid, 3)) ||
         (in->size == 5 && !memcmp(in->bytes, insn_rdpid_rex, 4))))
        return PROXY_SITE_RDPID;
    return -1;
}

/* Sites that always trap unless a stub takes them (no backend traps them
 * itself): CPUID and RDPID. */
static bool traps_always(uint8_t kind)
{
    return kind == PROXY_SITE_CPUID || kind == PROXY_SITE_RDPID;
}

/* Whether the bytes could hold one of the instructions at all: most
 * functions cannot, and are not decoded (a byte search is far cheaper). */
static bool may_hold_site(const uint8_t *code, size_t len)
{
    return memmem(code, len, insn_cpuid, 2) ||
           memmem(code, len, insn_rdtsc, 2) ||
           memmem(code, len, insn_rdtscp, 3) ||
           memmem(code, len, insn_rdpid, 3) ||
           memmem(code, len, insn_rdpid_rex, 4);
}

/* ---- reads in the guest: the span a stub takes over ------------------------
 *
 * An RDTSC the guest reads without an exit: the site and the instructions
 * after it (its span, at least 5 bytes) become a jmp rel32 to a stub that
 * reads the logical clock from [vvar] as the vDSO does, runs those
 * instructions as they were and jumps back past the span (cpuid_patch.c,
 * "the stubs"). Compiled __rdtsc() is `rdtsc; shl $32, %rdx; or %rdx,
 * %rax` or close: so a span is kept only when, here, every instruction
 * after the RDTSC in it
 *  - is one of a few plain ones (mov, movzx/movsx, lea, shifts by an
 *    immediate, or/and/xor/add/sub/cmp/test): no branch; at most two of
 *    them RIP-relative, which the stub runs with the displacement
 *    adjusted (ld.so's `rdtsc; lea _rtld_global(%rip), %r13`);
 *  - and, for RDTSC, the span ends after one that writes every status
 *    flag (the stub's own tests clobber them; the tail, run as it was,
 *    sets them again as the original did). A CPUID stub saves the flags
 *    (pushfq, below the red zone), so any 5 bytes do;
 * and nothing could land inside the span (drop_landing_inside): no direct
 * branch of the file (every byte that could be a rel8/rel32 branch is
 * checked, a conservative byte scan), no jump table's entry, no address
 * the code takes (lea of RIP), no pointer in the file's bytes or
 * relocations, no symbol. Functions with a switch (a jump through a
 * register) qualify so: ld.so's CPUID and RDTSC sites are in such
 * functions. Anything else keeps the trap (span = len).
 */

#define MAX_SPAN 24
#define MAX_TAIL_INSNS 4
#define MAX_RIP_FIXUPS 2

/* Whether a decoded instruction runs the same in a stub as in place
 * (*rip_disp: where its RIP-relative disp32 is, which the stub adjusts;
 * 0 when it has none), and whether it writes every status flag (OF SF ZF
 * AF PF CF; AF may be undefined, as after or/and/xor and shifts). */
static bool relocatable(const cs_insn *in, bool *sets_flags,
                        uint8_t *rip_disp)
{
    const cs_x86 *x = &in->detail->x86;
    *sets_flags = false;
    *rip_disp = 0;
    for (int i = 0; i < x->op_count; i++) {
        const cs_x86_op *op = &x->operands[i];
        if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
            continue;
        if (op->mem.index != X86_REG_INVALID || *rip_disp ||
            x->encoding.disp_size != 4 || x->encoding.disp_offset == 0 ||
            x->encoding.disp_offset + 4 > in->size)
            return false;
        *rip_disp = x->encoding.disp_offset;
    }
    switch (in->id) {
    case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSX:
    case X86_INS_MOVSXD: case X86_INS_LEA:
        return true;
    case X86_INS_OR: case X86_INS_AND: case X86_INS_XOR: case X86_INS_ADD:
    case X86_INS_SUB: case X86_INS_CMP: case X86_INS_TEST:
        *sets_flags = true;
        return true;
    case X86_INS_SHL: case X86_INS_SAL: case X86_INS_SHR: case X86_INS_SAR: {
        /* A count of 0 (after masking) leaves the flags alone; by %cl the
         * count is not known. */
        if (x->op_count != 2 || x->operands[1].type != X86_OP_IMM)
            return true;
        unsigned mask = x->operands[0].size == 8 ? 63 : 31;
        *sets_flags = (x->operands[1].imm & mask) != 0;
        return true;
    }
    default:
        return false;
    }
}

static int add_inner(struct finder *f, uint64_t va, size_t site)
{
    if (f->nr_inner == f->cap_inner) {
        size_t cap = f->cap_inner ? f->cap_inner * 2 : 16;
        void *v = realloc(f->inner, cap * sizeof(*f->inner));
        if (!v)
            return -ENOMEM;
        f->inner = v;
        f->cap_inner = cap;
    }
    f->inner[f->nr_inner++] = (struct inner_boundary){va, site};
    return 0;
}

/* Sets s->span when the instructions after the RDTSC at s make one. */
static int find_span(struct finder *f, struct proxy_cpuid_site *s,
                     size_t idx, uint64_t func_end)
{
    if (s->kind == PROXY_SITE_RDPID)
        return 0;
    /* The CPUID stub keeps the flags itself. */
    bool flags_set = s->kind == PROXY_SITE_CPUID;
    uint64_t va = s->vaddr + s->len, off = s->file_off + s->len;
    size_t left = func_end - va, kept = f->nr_inner;
    const uint8_t *code = f->im->bytes + off;
    uint8_t span = s->len, rip_disp[MAX_RIP_FIXUPS] = {0},
            rip_end[MAX_RIP_FIXUPS] = {0};
    int fixups = 0;
    for (int n = 0; n < MAX_TAIL_INSNS && (span < 5 || !flags_set); n++) {
        uint64_t at = va;
        bool sets;
        uint8_t disp;
        if (left == 0 ||
            !cs_disasm_iter(f->cs_detail, &code, &left, &va, f->tail_insn) ||
            !relocatable(f->tail_insn, &sets, &disp) ||
            span + f->tail_insn->size > MAX_SPAN ||
            (disp && fixups == MAX_RIP_FIXUPS))
            break;
        int rc = add_inner(f, at, idx);
        if (rc < 0)
            return rc;
        if (disp) {
            rip_disp[fixups] = (uint8_t)(span + disp);
            rip_end[fixups++] = (uint8_t)(span + f->tail_insn->size);
        }
        span = (uint8_t)(span + f->tail_insn->size);
        flags_set |= sets;
    }
    if (span >= 5 && flags_set) {
        s->span = span;
        memcpy(s->rip_disp, rip_disp, sizeof(rip_disp));
        memcpy(s->rip_end, rip_end, sizeof(rip_end));
        return 0;
    }
    f->nr_inner = kept;
    return 0;
}

static int cmp_inner(const void *a, const void *b)
{
    const struct inner_boundary *x = a, *y = b;
    return x->va < y->va ? -1 : x->va > y->va;
}

/* The inner boundary at va, or NULL (f->inner sorted by va). */
static const struct inner_boundary *inner_at(const struct finder *f,
                                             uint64_t va)
{
    size_t lo = 0, hi = f->nr_inner;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->inner[mid].va < va)
            lo = mid + 1;
        else if (f->inner[mid].va > va)
            hi = mid;
        else
            return &f->inner[mid];
    }
    return NULL;
}

/* The target of what the bytes at b (link address va) would be as a
 * direct branch (e8/e9 rel32, 0f 8x rel32, eb/7x/e0-e3 rel8), or 0. */
static uint64_t branch_target(const uint8_t *b, size_t left, uint64_t va)
{
    int32_t rel32;
    if ((b[0] == 0xe8 || b[0] == 0xe9) && left >= 5) {
        memcpy(&rel32, b + 1, 4);
        return va + 5 + (uint64_t)(int64_t)rel32;
    }
    if (b[0] == 0x0f && left >= 6 && (b[1] & 0xf0) == 0x80) {
        memcpy(&rel32, b + 2, 4);
        return va + 6 + (uint64_t)(int64_t)rel32;
    }
    if ((b[0] == 0xeb || (b[0] & 0xf0) == 0x70 ||
         (b[0] >= 0xe0 && b[0] <= 0xe3)) && left >= 2)
        return va + 2 + (uint64_t)(int64_t)(int8_t)b[1];
    return 0;
}

/* Whether va lies in an executable PT_LOAD. */
static bool in_exec(const struct image *im, uint64_t va)
{
    for (size_t i = 0; i < im->nr_loads; i++) {
        const GElf_Phdr *ph = &im->loads[i];
        if ((ph->p_flags & PF_X) && va >= ph->p_vaddr &&
            va - ph->p_vaddr < ph->p_memsz)
            return true;
    }
    return false;
}

/* Something at code address from (0: in data) could land at t: the span
 * t is inside of (if any) keeps its trap. Bytes inside the span itself
 * are its own instructions' (a displacement that reads as a jle), never
 * a branch: the span holds none. */
static void drop_from(struct finder *f, uint64_t t, uint64_t from)
{
    if (t < f->inner[0].va || t > f->inner[f->nr_inner - 1].va)
        return;
    const struct inner_boundary *hit = inner_at(f, t);
    if (!hit)
        return;
    struct proxy_cpuid_site *s = &f->sites[hit->site];
    if (from >= s->vaddr && from < s->vaddr + s->span)
        return;
    s->span = s->len;
    memset(s->rip_disp, 0, sizeof(s->rip_disp));
    memset(s->rip_end, 0, sizeof(s->rip_end));
}

static void drop_at(struct finder *f, uint64_t t)
{
    drop_from(f, t, 0);
}

/* The bytes of PT_LOAD i that are in the file: *n of them. */
static const uint8_t *load_bytes(const struct image *im, size_t i,
                                 uint64_t *n)
{
    const GElf_Phdr *ph = &im->loads[i];
    if (ph->p_offset > im->size)
        return NULL;
    *n = ph->p_filesz < im->size - ph->p_offset ? ph->p_filesz
                                                : im->size - ph->p_offset;
    return im->bytes + ph->p_offset;
}

/* What `lea disp32(%rip), reg` at b (link address va) would compute, or 0:
 * the address of a jump table, or of a label (a computed goto). */
static uint64_t lea_rip_target(const uint8_t *b, size_t left, uint64_t va)
{
    int32_t rel32;
    if (left >= 7 && (b[0] & 0xf0) == 0x40 && b[1] == 0x8d &&
        (b[2] & 0xc7) == 0x05) {
        memcpy(&rel32, b + 3, 4);
        return va + 7 + (uint64_t)(int64_t)rel32;
    }
    if (left >= 6 && b[0] == 0x8d && (b[1] & 0xc7) == 0x05) {
        memcpy(&rel32, b + 2, 4);
        return va + 6 + (uint64_t)(int64_t)rel32;
    }
    return 0;
}

/* A position-independent jump table at base: int32 entries, each the
 * target's distance from base (gcc's and clang's form), as long as they
 * land in executable bytes. */
#define MAX_TABLE_ENTRIES 65536
static void drop_table_targets(struct finder *f, uint64_t base)
{
    uint64_t off;
    for (uint64_t k = 0; k < MAX_TABLE_ENTRIES; k++) {
        int32_t e;
        if (!file_off_of(f->im, base + 4 * k, 4, false, &off))
            return;
        memcpy(&e, f->im->bytes + off, 4);
        uint64_t t = base + (uint64_t)(int64_t)e;
        if (!in_exec(f->im, t))
            return;
        drop_at(f, t);
    }
}

/* Every byte of the executable segments read as a direct branch, and as
 * a lea of RIP whose target may be a jump table or a label. */
static void drop_code_targets(struct finder *f)
{
    for (size_t i = 0; i < f->im->nr_loads; i++) {
        const GElf_Phdr *ph = &f->im->loads[i];
        uint64_t n;
        const uint8_t *b = load_bytes(f->im, i, &n);
        if (!(ph->p_flags & PF_X) || !b)
            continue;
        for (uint64_t q = 0; q < n; q++) {
            uint64_t va = ph->p_vaddr + q;
            uint64_t t = branch_target(b + q, n - q, va);
            if (t)
                drop_from(f, t, va);
            if ((t = lea_rip_target(b + q, n - q, va))) {
                drop_from(f, t, va);
                drop_table_targets(f, t);
            }
        }
    }
}

/* Every 8-byte value in the file's loaded bytes (a pointer, a packed
 * relocation's addend, a non-PIC jump table's entry), and in a
 * position-dependent file every 4-byte one (an absolute address as an
 * immediate), at any alignment. */
static void drop_pointed_at(struct finder *f, bool position_dependent)
{
    for (size_t i = 0; i < f->im->nr_loads; i++) {
        uint64_t n, v8;
        uint32_t v4;
        const uint8_t *b = load_bytes(f->im, i, &n);
        for (uint64_t q = 0; b && q + 4 <= n; q++) {
            if (q + 8 <= n) {
                memcpy(&v8, b + q, 8);
                drop_at(f, v8);
            }
            if (position_dependent) {
                memcpy(&v4, b + q, 4);
                drop_at(f, v4);
            }
        }
    }
}

/* Every RELA addend (a PIE's or library's pointers: R_X86_64_RELATIVE)
 * and every symbol's value (an entry point another file may call). */
static void drop_relocated_and_named(struct finder *f, Elf *elf)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
            (sh.sh_type != SHT_RELA && sh.sh_type != SHT_SYMTAB &&
             sh.sh_type != SHT_DYNSYM) ||
            !(d = elf_getdata(scn, NULL)))
            continue;
        size_t n = d->d_size / sh.sh_entsize;
        for (size_t k = 0; k < n; k++) {
            GElf_Rela r;
            GElf_Sym sym;
            if (sh.sh_type == SHT_RELA && gelf_getrela(d, (int)k, &r))
                drop_at(f, (uint64_t)r.r_addend);
            else if (sh.sh_type != SHT_RELA && gelf_getsym(d, (int)k, &sym))
                drop_at(f, sym.st_value);
        }
    }
}

/* Every span something could land inside keeps its trap: the stub's jmp
 * would be entered in its middle. */
static void drop_landing_inside(struct finder *f, Elf *elf)
{
    if (f->nr_inner == 0)
        return;
    qsort(f->inner, f->nr_inner, sizeof(*f->inner), cmp_inner);
    GElf_Ehdr eh;
    drop_code_targets(f);
    drop_pointed_at(f, gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC);
    drop_relocated_and_named(f, elf);
}

/*
 * Sweeps [start, start+len) from its first byte. Sites are kept only if
 * every byte of the range decoded into instructions ending exactly at its
 * end: a range that does not may hold data, and is left alone.
 */
static int sweep_function(struct finder *f, uint64_t start, uint64_t len)
{
    uint64_t off;
    if (len == 0 || len > MAX_FUNCTION_BYTES ||
        !file_off_of(f->im, start, len, true, &off))
        return 0;
    f->scan.functions++;
    const uint8_t *code = f->im->bytes + off;
    if (!may_hold_site(code, len))
        return 0;
    size_t left = len, kept = f->nr, kept_inner = f->nr_inner;
    uint64_t addr = start;
    while (left > 0 && cs_disasm_iter(f->cs, &code, &left, &addr, f->insn)) {
        int kind = site_kind(f->insn);
        if (kind < 0)
            continue;
        int rc = add_site(f, off + (f->insn->address - start),
                          f->insn->address, off, (uint8_t)kind,
                          (uint8_t)f->insn->size);
        if (rc < 0)
            return rc;
    }
    f->scan.bytes += len - left;
    if (left != 0) {
        f->scan.skipped++;
        f->nr = kept;
        return 0;
    }
    /* Where a jump through a register may land (a switch's table, a
     * computed goto) is checked once the whole file is swept
     * (drop_landing_inside). */
    for (size_t i = kept; i < f->nr; i++) {
        int rc = find_span(f, &f->sites[i], i, start + len);
        if (rc < 0) {
            f->nr_inner = kept_inner;
            return rc;
        }
    }
    return 0;
}

/* Every FDE of the .eh_frame bytes [c.p, c.end) at link address c.va. */
static int walk_eh_frame(struct finder *f, struct cursor c)
{
    const uint8_t *base = c.p;
    uint64_t base_va = c.va;
    while (c.end - c.p >= 4) {
        uint32_t len32;
        uint64_t len;
        take(&c, &len32, 4);
        if (len32 == 0)
            break; /* the terminator */
        if (len32 == 0xffffffff) {
            if (!take(&c, &len, 8))
                break;
        } else {
            len = len32;
        }
        if (len < 4 || len > (uint64_t)(c.end - c.p))
            break;
        struct cursor entry = {c.p, c.p + len, c.va};
        c.p += len;
        c.va += len;
        uint32_t id;
        take(&entry, &id, 4);
        if (id == 0)
            continue; /* a CIE */
        uint64_t cie_pos = (uint64_t)(entry.p - 4 - base);
        if (id > cie_pos)
            continue;
        struct cursor cie = {base + cie_pos - id, c.end,
                             base_va + cie_pos - id};
        uint32_t cie_len, cie_id;
        uint8_t enc;
        uint64_t pc, range;
        if (!take(&cie, &cie_len, 4) || cie_len == 0xffffffff ||
            cie_len > (uint64_t)(cie.end - cie.p))
            continue;
        cie.end = cie.p + cie_len;
        if (!take(&cie, &cie_id, 4) || cie_id != 0 ||
            !cie_fde_encoding(cie, &enc))
            continue;
        if (!encoded(&entry, enc, true, &pc) ||
            !encoded(&entry, enc & 0x0f, false, &range))
            continue;
        int rc = sweep_function(f, pc, range);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* .eh_frame by its section header, else through PT_GNU_EH_FRAME's
 * eh_frame_ptr (a stripped-of-sections file), up to its segment's end. */
static bool find_eh_frame(Elf *elf, const struct image *im, uint64_t hdr_va,
                          struct cursor *out)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
        while ((scn = elf_nextscn(elf, scn))) {
            GElf_Shdr sh;
            const char *name;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
                !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
                strcmp(name, ".eh_frame") != 0)
                continue;
            if (sh.sh_offset > im->size || sh.sh_size > im->size - sh.sh_offset)
                return false;
            *out = (struct cursor){im->bytes + sh.sh_offset,
                                   im->bytes + sh.sh_offset + sh.sh_size,
                                   sh.sh_addr};
            return true;
        }
    }
    uint64_t off;
    if (!hdr_va || !file_off_of(im, hdr_va, 4, false, &off))
        return false;
    struct cursor h = {im->bytes + off, im->bytes + im->size, hdr_va};
    uint8_t head[4];
    uint64_t eh_va;
    if (!take(&h, head, 4) || head[0] != 1 || !encoded(&h, head[1], true, &eh_va))
        return false;
    for (size_t i = 0; i < im->nr_loads; i++) {
        const GElf_Phdr *ph = &im->loads[i];
        if (eh_va < ph->p_vaddr || eh_va - ph->p_vaddr >= ph->p_filesz)
            continue;
        uint64_t o = ph->p_offset + (eh_va - ph->p_vaddr);
        uint64_t end = ph->p_offset + ph->p_filesz;
        if (end > im->size)
            return false;
        *out = (struct cursor){im->bytes + o, im->bytes + end, eh_va};
        return true;
    }
    return false;
}

/* ---- .symtab --------------------------------------------------------------- */

/* Every sized function symbol of the file's symbol table (.symtab, else
 * .dynsym): the function bounds of a file without unwind info (Go's
 * binaries, hand-written assembly), where a symbol's value is the first
 * instruction and its size the function's length, as an FDE would say. */
static int walk_symbols(struct finder *f, Elf *elf)
{
    Elf_Scn *scn = NULL, *table = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)))
        if (gelf_getshdr(scn, &sh) &&
            (sh.sh_type == SHT_SYMTAB ||
             (sh.sh_type == SHT_DYNSYM && !table)))
            table = scn;
    Elf_Data *d;
    if (!table || !gelf_getshdr(table, &sh) || !sh.sh_entsize ||
        !(d = elf_getdata(table, NULL)))
        return 0;
    size_t n = d->d_size / sh.sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym) ||
            GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0 ||
            sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
            continue;
        int rc = sweep_function(f, sym.st_value, sym.st_size);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int cmp_site(const void *a, const void *b)
{
    const struct proxy_cpuid_site *x = a, *y = b;
    return x->file_off < y->file_off ? -1 : x->file_off > y->file_off;
}

static int read_image(Elf *elf, struct image *im, uint64_t *hdr_va)
{
    GElf_Ehdr eh;
    size_t phnum;
    if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
        !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
        elf_getphdrnum(elf, &phnum) != 0)
        return -ENOEXEC;
    *hdr_va = 0;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            continue;
        if (ph.p_type == PT_GNU_EH_FRAME)
            *hdr_va = ph.p_vaddr;
        if (ph.p_type == PT_LOAD && im->nr_loads < 64)
            im->loads[im->nr_loads++] = ph;
    }
    return 0;
}

int proxy_cpuid_find_sites(const void *image, size_t size,
                           struct proxy_cpuid_site **sites, size_t *nr,
                           struct proxy_cpuid_scan *scan)
{
    struct image im = {.bytes = image, .size = size};
    struct finder f = {.im = &im};
    *sites = NULL;
    *nr = 0;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -ENOEXEC;
    Elf *elf = elf_memory((char *)image, size);
    if (!elf)
        return -ENOEXEC;
    uint64_t hdr_va;
    int rc = read_image(elf, &im, &hdr_va);
    struct cursor eh = {0};
    bool unwind_info = rc == 0 && find_eh_frame(elf, &im, hdr_va, &eh);
    if (rc == 0 && cs_open(CS_ARCH_X86, CS_MODE_64, &f.cs) != CS_ERR_OK)
        rc = -ENOMEM;
    if (rc == 0 &&
        cs_open(CS_ARCH_X86, CS_MODE_64, &f.cs_detail) != CS_ERR_OK) {
        cs_close(&f.cs);
        rc = -ENOMEM;
    }
    if (rc == 0) {
        cs_option(f.cs_detail, CS_OPT_DETAIL, CS_OPT_ON);
        /* Without unwind info the symbol table says where functions are;
         * a file with neither has nothing known to be code. */
        if (!(f.insn = cs_malloc(f.cs)) ||
            !(f.tail_insn = cs_malloc(f.cs_detail)))
            rc = -ENOMEM;
        else if (unwind_info)
            rc = walk_eh_frame(&f, eh);
        else
            rc = walk_symbols(&f, elf);
        if (f.insn)
            cs_free(f.insn, 1);
        if (f.tail_insn)
            cs_free(f.tail_insn, 1);
        cs_close(&f.cs);
        cs_close(&f.cs_detail);
    }
    if (rc == 0)
        drop_landing_inside(&f, elf);
    elf_end(elf);
    free(f.inner);
    if (rc < 0) {
        free(f.sites);
        return rc;
    }

    /* Overlapping FDEs may name one instruction twice. */
    if (f.nr > 1)
        qsort(f.sites, f.nr, sizeof(*f.sites), cmp_site);
    size_t n = 0;
    for (size_t i = 0; i < f.nr; i++) {
        struct proxy_cpuid_site *kept = n ? &f.sites[n - 1] : NULL;
        if (!kept || kept->file_off != f.sites[i].file_off)
            f.sites[n++] = f.sites[i];
        else if (f.sites[i].span < kept->span)
            *kept = f.sites[i]; /* the one whose span fewer trust */
    }
    for (size_t i = 0; i < n; i++) {
        struct proxy_cpuid_site *s = &f.sites[i];
        s->hash = fnv1a(FNV_INIT, im.bytes + s->func_off,
                        s->file_off + s->span - s->func_off);
        f.scan.inline_sites += s->span > s->len;
    }
    *sites = f.sites;
    *nr = n;
    if (scan)
        *scan = f.scan;
    return 0;
}

/* ---- the sites of a file: per run in memory, across runs on disk ---------- */

struct file_sites {
    struct file_sites *next;
    uint64_t dev, ino, size, mtime_ns;
    struct proxy_cpuid_site *v;
    size_t nr;
};

static struct file_sites *known_files; /* this hvrun process's */

static int cache_path(const struct file_sites *fs, char *out, size_t len)
{
    char dir[512];
    if (vmm_host_cache_dir(dir, sizeof(dir)) < 0)
        return -1;
    int n = snprintf(out, len, "%s/cpuid-sites-%s-%s-%llx-%llx-%llx-%llx", dir,
                     SITE_FINDER_VERSION, HVRUN_VERSION,
                     (unsigned long long)fs->dev,
                     (unsigned long long)fs->ino,
                     (unsigned long long)fs->size,
                     (unsigned long long)fs->mtime_ns);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* A cache file that is missing or malformed is a miss; what it says is
 * checked again (the function hash) before any byte is rewritten. */
static bool cache_load(struct file_sites *fs)
{
    char path[768];
    if (cache_path(fs, path, sizeof(path)) < 0)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    uint64_t head[2];
    struct stat st;
    bool ok = read(fd, head, sizeof(head)) == (ssize_t)sizeof(head) &&
              head[0] == SITE_CACHE_MAGIC && head[1] <= MAX_SITES &&
              fstat(fd, &st) == 0 &&
              (uint64_t)st.st_size == sizeof(head) + head[1] * sizeof(*fs->v);
    if (ok && head[1] > 0) {
        size_t bytes = head[1] * sizeof(*fs->v);
        ok = (fs->v = malloc(bytes)) && read(fd, fs->v, bytes) == (ssize_t)bytes;
    }
    close(fd);
    if (!ok) {
        free(fs->v);
        fs->v = NULL;
        return false;
    }
    fs->nr = head[1];
    return true;
}

/* The entries of earlier versions of the same file (dev, inode) are
 * dropped when a new one is written: rebuilt binaries would pile up. At
 * worst a wrong match deletes a valid entry: a miss. */
static void cache_prune(const struct file_sites *fs, const char *keep)
{
    char dir[512], infix[64];
    if (vmm_host_cache_dir(dir, sizeof(dir)) < 0)
        return;
    snprintf(infix, sizeof(infix), "-%llx-%llx-", (unsigned long long)fs->dev,
             (unsigned long long)fs->ino);
    DIR *d = opendir(dir);
    if (!d)
        return;
    const char *keep_name = strrchr(keep, '/') + 1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "cpuid-sites-", 12) &&
            strstr(e->d_name, infix) && strcmp(e->d_name, keep_name) != 0 &&
            !strchr(strrchr(e->d_name, '-'), '.')) /* not a temporary */
            (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* Written to a temporary name and renamed, so a reader sees all or none. */
static void cache_store(const struct file_sites *fs)
{
    char path[768], tmp[800];
    if (cache_path(fs, path, sizeof(path)) < 0)
        return;
    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return;
    uint64_t head[2] = {SITE_CACHE_MAGIC, fs->nr};
    size_t bytes = fs->nr * sizeof(*fs->v);
    bool ok = write(fd, head, sizeof(head)) == (ssize_t)sizeof(head) &&
              (bytes == 0 || write(fd, fs->v, bytes) == (ssize_t)bytes);
    close(fd);
    /* the *at forms: the calls hvrun's seccomp filter allows (confine.c) */
    if (!ok || renameat(AT_FDCWD, tmp, AT_FDCWD, path) < 0)
        unlinkat(AT_FDCWD, tmp, 0);
    else
        cache_prune(fs, path);
}

static int decode_file(int fd, struct file_sites *fs)
{
    if (fs->size == 0 || fs->size > MAX_DECODED_FILE)
        return 0;
    /* Private and writable only so that libelf may touch its copy. */
    void *img = mmap(NULL, fs->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                     0);
    if (img == MAP_FAILED)
        return -errno;
    int rc = proxy_cpuid_find_sites(img, fs->size, &fs->v, &fs->nr, NULL);
    munmap(img, fs->size);
    return rc == -ENOEXEC ? 0 : rc;
}

static const struct file_sites *sites_of(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
                     (uint64_t)st.st_mtim.tv_nsec;
    for (struct file_sites *fs = known_files; fs; fs = fs->next)
        if (fs->dev == st.st_dev && fs->ino == st.st_ino &&
            fs->size == (uint64_t)st.st_size && fs->mtime_ns == mtime)
            return fs;
    struct file_sites *fs = calloc(1, sizeof(*fs));
    if (!fs)
        return NULL;
    *fs = (struct file_sites){NULL, st.st_dev, st.st_ino,
                              (uint64_t)st.st_size, mtime, NULL, 0};
    /* The cache is hvrun's, whoever the guest is (kernel/fscred.c). */
    const struct proxy_process *as_guest = proxy_fscred_suspend();
    if (!cache_load(fs)) {
        if (decode_file(fd, fs) < 0) {
            proxy_fscred_resume(as_guest);
            free(fs->v);
            free(fs);
            return NULL;
        }
        cache_store(fs);
    }
    proxy_fscred_resume(as_guest);
    fs->next = known_files;
    known_files = fs;
    return fs;
}

/* ---- the sites rewritten in one address space ---------------------------- */

/* What a site became. */
enum patch_how {
    PATCH_TRAP,      /* UD2: the trap answers it */
    PATCH_JMP,       /* a jmp to its stub: read in the guest */
    PATCH_STUB_TRAP, /* the UD2 of a stub: its fallback, trapped */
    PATCH_NONE,      /* as the file has it; its stub's room kept */
};

struct patched_site {
    gva_t gva;
    uint64_t dev, ino, file_off; /* PATCH_STUB_TRAP: 0 (not a file's) */
    uint8_t kind, len, span, how;
    uint8_t orig[MAX_SPAN]; /* PATCH_JMP: the span as the file had it */
    gva_t stub;             /* its stub's room (a site with a span), or 0 */
    /* The span's RIP-relative instructions (proxy_cpuid_site) */
    uint8_t rip_disp[MAX_RIP_FIXUPS], rip_end[MAX_RIP_FIXUPS];
};

/* A page of stubs ([hvrun-tsc]): its first word is [vvar]'s address. */
struct stub_page {
    gva_t gva;
    uint32_t used;
};

/* One per address space: processes on one memory (clone with CLONE_VM)
 * hold a reference each. */
struct proxy_cpuid_patched {
    struct patched_site *v; /* sorted by gva */
    size_t nr, cap;
    struct stub_page *pages;
    size_t nr_pages;
    /* A thread of it asked for PR_TSC_SIGSEGV: no more reads in the guest
     * here (the stubs would answer what must fault); kept by fork. */
    bool no_inline;
    unsigned refs;
};

static struct proxy_cpuid_patched *new_patched(void)
{
    struct proxy_cpuid_patched *s = calloc(1, sizeof(*s));
    if (s)
        s->refs = 1;
    return s;
}

/* Index of the first site at or above gva. */
static size_t lower_bound(const struct proxy_cpuid_patched *s, gva_t gva)
{
    size_t lo = 0, hi = s ? s->nr : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].gva < gva)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const struct patched_site *find_patched(const struct proxy_process *p,
                                               gva_t gva)
{
    const struct proxy_cpuid_patched *s = p->cpuid_patched;
    size_t i = lower_bound(s, gva);
    return s && i < s->nr && s->v[i].gva == gva ? &s->v[i] : NULL;
}

static int remember(struct proxy_process *p, const struct patched_site *ps)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    if (!s && !(s = p->cpuid_patched = new_patched()))
        return -ENOMEM;
    size_t i = lower_bound(s, ps->gva);
    if (i < s->nr && s->v[i].gva == ps->gva) {
        s->v[i] = *ps; /* the same address, mapped again */
        return 0;
    }
    if (s->nr == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        void *v = realloc(s->v, cap * sizeof(*s->v));
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    memmove(&s->v[i + 1], &s->v[i], (s->nr - i) * sizeof(*s->v));
    s->v[i] = *ps;
    s->nr++;
    return 0;
}

/* True when gva is a private copy of byte off of file (dev, ino). */
static bool maps_file_at(const struct proxy_process *p, gva_t gva,
                         uint64_t dev, uint64_t ino, uint64_t off)
{
    const struct vmm_vma *v = vmm_as_find_vma(p->as, gva);
    return v && (v->flags & VMM_VMA_FILE) && !(v->flags & VMM_VMA_SHARED) &&
           !v->shared && v->dev == dev && v->ino == ino &&
           v->file_off + (gva - v->start) == off;
}

/* FNV-1a over guest bytes [gva, gva+len), continuing from h. */
static bool hash_guest(const struct proxy_process *p, gva_t gva, size_t len,
                       uint64_t *h)
{
    while (len > 0) {
        struct iovec iov[4];
        size_t covered;
        int n = vmm_as_host_iov(p->as, gva, len, 0, iov, 4, &covered);
        if (n == 0)
            return false;
        for (int i = 0; i < n; i++)
            *h = fnv1a(*h, iov[i].iov_base, iov[i].iov_len);
        gva += covered;
        len -= covered;
    }
    return true;
}

/* Reads guest code bytes, whatever their protection (exec-only too). */
static bool guest_bytes(const struct proxy_process *p, gva_t gva, uint8_t *dst,
                        size_t len)
{
    struct iovec iov[2];
    size_t covered, done = 0;
    int n = vmm_as_host_iov(p->as, gva, len, 0, iov, 2, &covered);
    if (covered != len)
        return false;
    for (int i = 0; i < n; i++) {
        memcpy(dst + done, iov[i].iov_base, iov[i].iov_len);
        done += iov[i].iov_len;
    }
    return true;
}

/* A running hash over one function's guest bytes, so that its sites,
 * which come in order, cost one pass over the function. */
struct func_hash {
    gva_t func, upto;
    uint64_t h;
};

static bool site_intact(const struct proxy_process *p, struct func_hash *fh,
                        gva_t func, gva_t site_end, uint64_t want)
{
    if (fh->func != func || fh->upto > site_end) {
        *fh = (struct func_hash){func, func, FNV_INIT};
    }
    if (!hash_guest(p, fh->upto, site_end - fh->upto, &fh->h)) {
        fh->func = 0;
        return false;
    }
    fh->upto = site_end;
    return fh->h == want;
}

static bool kind_rewritten(const struct proxy_process *p, uint8_t kind)
{
    switch (kind) {
    case PROXY_SITE_CPUID:
        return p->cfg->cpuid_rewrite || p->cfg->cpuid_topology;
    case PROXY_SITE_RDPID:
        return p->cfg->rdpid_rewrite;
    default:
        return p->cfg->rdtsc_rewrite || p->cfg->rdtsc_inline;
    }
}

/* PR_TSC_SIGSEGV on the thread on the vCPU (prctl.c). */
static bool tsc_faults(const struct proxy_process *p)
{
    return p->threads && p->threads[p->cur].tsc_sigsegv;
}

/* ---- the stubs: RDTSC read in the guest ------------------------------------
 *
 * A site whose span (find_span) allows it becomes `jmp rel32` to a stub of
 * its own (the rest of the span NOPs, never run), in a page of stubs hvrun
 * maps within reach (+-2 GiB) of it ([hvrun-tsc]: read and execute only,
 * a special mapping the guest cannot make writable). The stub uses only
 * the registers RDTSC (RDTSCP) writes: it reads [vvar] and the vDSO's call
 * count as the vDSO's event_elapsed() does (vdso.c: one count for both, so
 * a read is an event folded into detcore at the next exit, exactly as a
 * clock_gettime the vDSO answers), makes EDX:EAX (and ECX = TSC_AUX 0) what
 * the trap would have given, runs the span's other instructions as they
 * were (they set the flags again) and jumps back past the span. When the
 * count is spent (GK_VDSO_MAX_CALLS reads since the exit), time is not
 * virtual, or [vvar] is not known, it runs a UD2 hvrun knows
 * (PATCH_STUB_TRAP), answered as a rewritten site is, and resumes at the
 * span's other instructions.
 *
 * Only fresh copies of a file's code are rewritten so (the loader's, mmap's,
 * a refill's): no thread can be inside a span there, nor have a signal
 * frame returning into one.
 */

#define STUB_PAGE_NAME "[hvrun-tsc]"
#define STUB_FIRST 16   /* after the page's [vvar] address word */
#define STUB_BYTES 128  /* at most: 86 of code, the tail, the jmp back */
#define STUB_REACH ((1LL << 31) - 4 * (int64_t)VMM_PAGE_SIZE)

static bool inline_allowed(const struct proxy_process *p)
{
    return p->cfg->rdtsc_inline && p->det->cfg.virtualize_time &&
           !tsc_faults(p) &&
           !(p->cpuid_patched && p->cpuid_patched->no_inline);
}

/* A CPUID stub gives the host's leaf with the model's APIC ids, which is
 * what cpuid_topology answers; the fixed model (--cpuid-rewrite) traps. */
static bool cpuid_inline_allowed(const struct proxy_process *p)
{
    return p->cfg->cpuid_topology && !p->cfg->cpuid_rewrite;
}

static bool in_reach(gva_t a, gva_t b)
{
    return (a > b ? a - b : b - a) < (uint64_t)STUB_REACH;
}

/* True when gva lies in one of the address space's stub pages, as mapped. */
static bool in_stub_page(const struct proxy_process *p, gva_t gva)
{
    const struct vmm_vma *v = vmm_as_find_vma(p->as, gva);
    return v && (v->flags & VMM_VMA_SPECIAL) && v->name &&
           strcmp(v->name, STUB_PAGE_NAME) == 0;
}

/* Guest code bytes written whatever the host backing's protection (a
 * VMA that lost a permission has a read-only one; both pokes make it
 * writable for the copy), page by page (vmm_as_poke_text writes within
 * one). */
static bool poke_code(struct proxy_process *p, gva_t gva, const void *src,
                      size_t len)
{
    const uint8_t *b = src;
    while (len > 0) {
        size_t room = VMM_PAGE_SIZE - (gva & (VMM_PAGE_SIZE - 1));
        size_t n = len < room ? len : room;
        if (vmm_as_poke_text(p->as, gva, b, n) < 0)
            return false;
        gva += n;
        b += n;
        len -= n;
    }
    return true;
}

/* A new stub page in the first free gap below the VMA holding site (top
 * down, as mmap would place it), if that is within reach. */
static struct stub_page *new_stub_page(struct proxy_process *p, gva_t site)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    const struct vmm_vma *v = vmm_as_find_vma(p->as, site);
    gva_t gva;
    if (!v || vmm_as_find_free(p->as, VMM_PAGE_SIZE, v->start, &gva) < 0 ||
        !in_reach(gva, site))
        return NULL;
    void *grown = realloc(s->pages, (s->nr_pages + 1) * sizeof(*s->pages));
    if (!grown)
        return NULL;
    s->pages = grown;
    if (vmm_as_map(p->as, gva, VMM_PAGE_SIZE, PROT_READ | PROT_EXEC,
                   VMM_VMA_SPECIAL, STUB_PAGE_NAME) < 0)
        return NULL;
    uint64_t vvar = p->vvar_gva; /* 0 until the vDSO is mapped */
    (void)poke_code(p, gva, &vvar, sizeof(vvar));
    struct stub_page *pg = &s->pages[s->nr_pages++];
    *pg = (struct stub_page){gva, STUB_FIRST};
    return pg;
}

/* Room for one stub within reach of site: a page's next bytes. */
static gva_t stub_room(struct proxy_process *p, gva_t site)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    struct stub_page *pg = NULL;
    for (size_t i = 0; i < s->nr_pages && !pg; i++)
        if (s->pages[i].used + STUB_BYTES <= VMM_PAGE_SIZE &&
            in_reach(s->pages[i].gva, site) && in_stub_page(p, s->pages[i].gva))
            pg = &s->pages[i];
    if (!pg && !(pg = new_stub_page(p, site)))
        return 0;
    gva_t at = pg->gva + pg->used;
    pg->used += STUB_BYTES;
    return at;
}

struct emitter {
    uint8_t b[STUB_BYTES];
    size_t n;
    gva_t at; /* where b[0] will be */
};

static void put(struct emitter *e, const void *bytes, size_t len)
{
    memcpy(e->b + e->n, bytes, len);
    e->n += len;
}

static void put_rel32(struct emitter *e, gva_t target)
{
    int32_t rel = (int32_t)(int64_t)(target - (e->at + e->n + 4));
    put(e, &rel, 4);
}

/* A short forward branch to be aimed later (aim): its rel8's offset. */
static size_t put_jcc8(struct emitter *e, uint8_t opcode)
{
    uint8_t insn[2] = {opcode, 0};
    put(e, insn, 2);
    return e->n - 1;
}

static void aim(struct emitter *e, size_t rel8_at)
{
    e->b[rel8_at] = (uint8_t)(e->n - (rel8_at + 1));
}

/* mov rdx, [rip + page's first word] (the [vvar] address). */
static void put_load_vvar(struct emitter *e, gva_t page)
{
    static const uint8_t mov_rdx_rip[3] = {0x48, 0x8b, 0x15};
    put(e, mov_rdx_rip, 3);
    put_rel32(e, page);
}

/*
 * The span's instructions after the site as the file had them, each
 * RIP-relative displacement moved so that it names the same address from
 * the stub, then jmp site+span. False when one does not reach from there.
 */
static bool put_tail(struct emitter *e, const struct patched_site *ps)
{
    size_t tail_at = e->n;
    put(e, ps->orig + ps->len, (size_t)(ps->span - ps->len));
    for (int i = 0; i < MAX_RIP_FIXUPS && ps->rip_disp[i]; i++) {
        int32_t disp;
        uint8_t *at = e->b + tail_at + (ps->rip_disp[i] - ps->len);
        memcpy(&disp, at, 4);
        gva_t target = ps->gva + ps->rip_end[i] + (gva_t)(int64_t)disp;
        gva_t next = e->at + tail_at + (ps->rip_end[i] - ps->len);
        int64_t moved = (int64_t)(target - next);
        if (moved != (int32_t)moved)
            return false;
        disp = (int32_t)moved;
        memcpy(at, &disp, 4);
    }
    static const uint8_t jmp = 0xe9;
    put(e, &jmp, 1);
    put_rel32(e, ps->gva + ps->span);
    return true;
}

/*
 * The CPUID stub of ps at e->at: the host's CPUID run in place, then the
 * APIC ids of the leaf made the model's as vmm_cpu_model_apic_ids does
 * for a trapped one (keep the two alike), the flags and the red zone kept:
 *     lea rsp, [rsp-128]; pushfq; push rax; cpuid
 *     cmp dword [rsp], 1; jne 1f; and ebx, 0x00ffffff; jmp done
 * 1:  cmp dword [rsp], 0xb; je 2f; cmp dword [rsp], 0x1f; jne 3f
 * 2:  xor edx, edx; jmp done
 * 3:  cmp dword [rsp], 0x8000001e; jne done
 *     xor eax, eax; and ebx, ~0xff; and ecx, ~0xff
 * done: lea rsp, [rsp+8]; popfq; lea rsp, [rsp+128]
 *     the span's instructions after the CPUID; jmp site+span
 * No exit: CPUID is no event, and what it shows of the host CPU is the
 * same on each of its CPUs once the APIC ids are the model's.
 */
static bool build_cpuid_stub(struct emitter *e, const struct patched_site *ps)
{
    static const uint8_t enter[9] = {0x48, 0x8d, 0x64, 0x24, 0x80,
                                     0x9c, 0x50, 0x0f, 0xa2},
                         leaf1[4] = {0x83, 0x3c, 0x24, 0x01},
                         leaf_b[4] = {0x83, 0x3c, 0x24, 0x0b},
                         leaf_1f[4] = {0x83, 0x3c, 0x24, 0x1f},
                         leaf_amd[7] = {0x81, 0x3c, 0x24, 0x1e,
                                        0x00, 0x00, 0x80},
                         ebx_low24[6] = {0x81, 0xe3, 0xff, 0xff, 0xff, 0x00},
                         zero_edx[2] = {0x31, 0xd2},
                         zero_eax[2] = {0x31, 0xc0},
                         ebx_high[6] = {0x81, 0xe3, 0x00, 0xff, 0xff, 0xff},
                         ecx_high[6] = {0x81, 0xe1, 0x00, 0xff, 0xff, 0xff},
                         leave[14] = {0x48, 0x8d, 0x64, 0x24, 0x08, 0x9d,
                                      0x48, 0x8d, 0xa4, 0x24,
                                      0x80, 0x00, 0x00, 0x00};
    size_t to_done[3];
    put(e, enter, sizeof(enter));
    put(e, leaf1, 4);
    size_t not1 = put_jcc8(e, 0x75); /* jne */
    put(e, ebx_low24, 6);
    to_done[0] = put_jcc8(e, 0xeb);
    aim(e, not1);
    put(e, leaf_b, 4);
    size_t is_b = put_jcc8(e, 0x74); /* je */
    put(e, leaf_1f, 4);
    size_t not_1f = put_jcc8(e, 0x75);
    aim(e, is_b);
    put(e, zero_edx, 2);
    to_done[1] = put_jcc8(e, 0xeb);
    aim(e, not_1f);
    put(e, leaf_amd, 7);
    to_done[2] = put_jcc8(e, 0x75);
    put(e, zero_eax, 2);
    put(e, ebx_high, 6);
    put(e, ecx_high, 6);
    for (int i = 0; i < 3; i++)
        aim(e, to_done[i]);
    put(e, leave, sizeof(leave));
    return put_tail(e, ps);
}

/*
 * The stub of ps at e->at (see above; offsets are struct gk_vvar's):
 *     mov rdx, [rip+vvar_slot]; test rdx, rdx; jz trap
 *     mov rax, GK_VDSO_MAGIC; cmp [rdx], rax; jne trap
 *     cmp qword [rdx+virtual_time], 0; je trap
 *     mov rdx, [rdx+calls_va]; mov rax, [rdx]; add rax, 1
 *     cmp rax, GK_VDSO_MAX_CALLS; ja trap; mov [rdx], rax
 *     mov rdx, [rip+vvar_slot]; imul rax, [rdx+event_ns]
 *     add rax, [rdx+now_ns]; add rax, [rdx+boot_ns]
 *     mov rdx, rax; shr rdx, 32; mov eax, eax; (RDTSCP: xor ecx, ecx)
 *     jmp tail
 * trap: ud2 (RDTSCP: and a byte, the trap steps 3)
 * tail: the span's instructions after the RDTSC; jmp site+span
 * Returns the offset of the UD2 (never 0), or 0 when the tail cannot be
 * placed (put_tail).
 */
static size_t build_stub(struct emitter *e, gva_t page,
                         const struct patched_site *ps)
{
    static const uint8_t test_rdx[3] = {0x48, 0x85, 0xd2},
                         cmp_magic[3] = {0x48, 0x39, 0x02},
                         cmp_virtual[5] = {0x48, 0x83, 0x7a, 0x08, 0x00},
                         load_count[7] = {0x48, 0x8b, 0x52, 0x38,
                                          0x48, 0x8b, 0x02},
                         add_one[4] = {0x48, 0x83, 0xc0, 0x01},
                         store_count[3] = {0x48, 0x89, 0x02},
                         compute[13] = {0x48, 0x0f, 0xaf, 0x42, 0x28,
                                        0x48, 0x03, 0x42, 0x10,
                                        0x48, 0x03, 0x42, 0x20},
                         split[9] = {0x48, 0x89, 0xc2, 0x48, 0xc1,
                                     0xea, 0x20, 0x89, 0xc0},
                         zero_ecx[2] = {0x31, 0xc9};
    uint8_t mov_magic[10] = {0x48, 0xb8}, cmp_max[6] = {0x48, 0x3d};
    uint64_t magic = GK_VDSO_MAGIC;
    uint32_t max = (uint32_t)GK_VDSO_MAX_CALLS;
    memcpy(mov_magic + 2, &magic, 8);
    memcpy(cmp_max + 2, &max, 4);
    bool tscp = ps->kind == PROXY_SITE_RDTSCP;
    size_t to_trap[4];
    put_load_vvar(e, page);
    put(e, test_rdx, 3);
    to_trap[0] = put_jcc8(e, 0x74); /* jz */
    put(e, mov_magic, 10);
    put(e, cmp_magic, 3);
    to_trap[1] = put_jcc8(e, 0x75); /* jne */
    put(e, cmp_virtual, 5);
    to_trap[2] = put_jcc8(e, 0x74); /* je */
    put(e, load_count, 7);
    put(e, add_one, 4);
    put(e, cmp_max, 6);
    to_trap[3] = put_jcc8(e, 0x77); /* ja */
    put(e, store_count, 3);
    put_load_vvar(e, page);
    put(e, compute, 13);
    put(e, split, 9);
    if (tscp)
        put(e, zero_ecx, 2);
    size_t to_tail = put_jcc8(e, 0xeb); /* jmp */
    for (int i = 0; i < 4; i++)
        aim(e, to_trap[i]);
    size_t ud2_at = e->n;
    put(e, insn_ud2, 2);
    if (tscp) {
        static const uint8_t nop = 0x90;
        put(e, &nop, 1);
    }
    aim(e, to_tail);
    return put_tail(e, ps) ? ud2_at : 0;
}

/* The span's bytes when it jumps to stub: jmp rel32, then NOPs. */
static void jmp_bytes(uint8_t *out, gva_t site, uint8_t span, gva_t stub)
{
    int32_t rel = (int32_t)(int64_t)(stub - (site + 5));
    out[0] = 0xe9;
    memcpy(out + 1, &rel, 4);
    memset(out + 5, 0x90, (size_t)(span - 5));
}

/*
 * The room of the stub of a site with a span: the one it had at this
 * address (mapped again), else a new one; 0 when none is within reach.
 * Every such site gets its room whether a stub then takes it or not (the
 * kind not read in the guest here: CPUID under kvm, RDTSC with host
 * time), so that the [hvrun-tsc] pages, which take their place in the
 * address space as mmap's do, are the same under every backend and the
 * guests' layouts with them.
 */
static gva_t stub_for(struct proxy_process *p, const struct patched_site *ps)
{
    if (!p->cpuid_patched && !(p->cpuid_patched = new_patched()))
        return 0;
    const struct patched_site *was = find_patched(p, ps->gva);
    if (was && was->stub && was->file_off == ps->file_off &&
        was->dev == ps->dev && was->ino == ps->ino &&
        in_stub_page(p, was->stub) && in_reach(was->stub, ps->gva))
        return was->stub;
    return stub_room(p, ps->gva);
}

/* The span of ps as a jmp to its stub (built at ps->stub): false (the
 * site's bytes unchanged) when the stub could not be built. */
static bool patch_inline(struct proxy_process *p, struct patched_site *ps)
{
    if (!guest_bytes(p, ps->gva, ps->orig, ps->span))
        return false;
    gva_t page_of = ps->stub & VMM_PAGE_MASK;
    struct emitter e = {.at = ps->stub};
    if (ps->kind == PROXY_SITE_CPUID) {
        if (!build_cpuid_stub(&e, ps) || !poke_code(p, ps->stub, e.b, e.n))
            return false;
    } else {
        size_t ud2_at = build_stub(&e, page_of, ps);
        struct patched_site trap = {ps->stub + ud2_at, 0, 0, 0, ps->kind,
                                    ps->len, ps->len, PATCH_STUB_TRAP,
                                    {0}, 0, {0}, {0}};
        if (!ud2_at || remember(p, &trap) < 0 ||
            !poke_code(p, ps->stub, e.b, e.n))
            return false;
    }
    uint8_t code[MAX_SPAN];
    jmp_bytes(code, ps->gva, ps->span, ps->stub);
    ps->how = PATCH_JMP;
    if (remember(p, ps) < 0)
        return false;
    /* A fresh copy (its backing read-only again after a refill: the poke
     * writes it all the same). */
    if (vmm_as_poke(p->as, ps->gva, code, ps->span) < 0) {
        ps->how = PATCH_TRAP; /* the bytes are the file's still */
        return false;
    }
    return true;
}

/* A PATCH_JMP site back to the trap: UD2 (RDTSCP: and its third byte),
 * then the span's own instructions as the file had them. False when its
 * bytes are not the jmp hvrun wrote (the guest changed them). */
static bool demote(struct proxy_process *p, struct patched_site *ps)
{
    uint8_t now[MAX_SPAN], code[MAX_SPAN];
    if (!guest_bytes(p, ps->gva, now, ps->span) || now[0] != 0xe9)
        return false;
    memcpy(code, ps->orig, ps->span);
    memcpy(code, insn_ud2, 2);
    if (!poke_code(p, ps->gva, code, ps->span))
        return false;
    ps->how = PATCH_TRAP;
    return true;
}

void proxy_cpuid_tsc_faulting(struct proxy_process *p)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    if (!p->cfg->rdtsc_inline)
        return;
    if (!s && !(s = p->cpuid_patched = new_patched()))
        return;
    s->no_inline = true;
    for (size_t i = 0; i < s->nr; i++)
        if (s->v[i].how == PATCH_JMP && s->v[i].kind != PROXY_SITE_CPUID &&
            maps_file_at(p, s->v[i].gva, s->v[i].dev, s->v[i].ino,
                         s->v[i].file_off))
            (void)demote(p, &s->v[i]);
}

void proxy_cpuid_vvar_mapped(struct proxy_process *p)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    uint64_t vvar = p->vvar_gva;
    for (size_t i = 0; s && i < s->nr_pages; i++)
        if (in_stub_page(p, s->pages[i].gva))
            (void)poke_code(p, s->pages[i].gva, &vvar, sizeof(vvar));
}

/*
 * A site already rewritten is not rewritten again: its bytes no longer
 * hash as the file's (site_intact), so only a fresh copy of the file's
 * bytes (mapped again, MADV_DONTNEED's refill) is.
 */
static void patch_site(struct proxy_process *p, const struct vmm_vma *v,
                       const struct proxy_cpuid_site *s, gva_t site,
                       struct func_hash *fh, bool fresh)
{
    gva_t func = site - (s->file_off - s->func_off);
    bool spanned = fresh && s->span > s->len;
    if ((!kind_rewritten(p, s->kind) && !spanned) || func > site ||
        !maps_file_at(p, func, v->dev, v->ino, s->func_off) ||
        !site_intact(p, fh, func, site + s->span, s->hash))
        return;
    struct patched_site ps = {site, v->dev, v->ino, s->file_off, s->kind,
                              s->len, s->span, PATCH_TRAP, {0}, 0, {0}, {0}};
    memcpy(ps.rip_disp, s->rip_disp, sizeof(ps.rip_disp));
    memcpy(ps.rip_end, s->rip_end, sizeof(ps.rip_end));
    bool cpuid = s->kind == PROXY_SITE_CPUID;
    if (spanned && (ps.stub = stub_for(p, &ps)) &&
        (cpuid ? cpuid_inline_allowed(p) : inline_allowed(p)) &&
        patch_inline(p, &ps)) {
        if (p->totals && cpuid)
            p->totals->cpuid_inline_sites++;
        else if (p->totals)
            p->totals->tsc_inline_sites++;
        return;
    }
    /* Under a backend that traps RDTSC itself (ptrace), the rest stays;
     * so does a kind not rewritten here, its stub's room kept. */
    if (!kind_rewritten(p, s->kind) ||
        (!traps_always(s->kind) && !p->cfg->rdtsc_rewrite)) {
        ps.how = PATCH_NONE;
        if (ps.stub)
            (void)remember(p, &ps);
        return;
    }
    /* Remembered first: a UD2 hvrun could not answer would be a SIGILL.
     * Either poke writes a read-only backing (a refilled page, one that
     * mprotect made executable). */
    if (remember(p, &ps) < 0)
        return;
    int rc = fresh ? vmm_as_poke(p->as, site, insn_ud2, 2)
                   : vmm_as_poke_text(p->as, site, insn_ud2, 2);
    if (rc < 0)
        return;
    if (p->totals && traps_always(s->kind))
        p->totals->cpuid_sites++;
    else if (p->totals)
        p->totals->tsc_sites++;
}

static void patch_vma(struct proxy_process *p, int host_fd,
                      const struct vmm_vma *v, gva_t lo, gva_t hi, bool fresh)
{
    int fd = host_fd;
    const struct proxy_process *as_guest = proxy_fscred_suspend();
    if (fd < 0 && v->name)
        fd = openat(p->cwd_fd, v->name, O_RDONLY | O_CLOEXEC);
    proxy_fscred_resume(as_guest);
    if (fd < 0)
        return;
    struct stat st;
    const struct file_sites *fs = NULL;
    bool known = fstat(fd, &st) == 0;
    if (known)
        /* a replay's copy: as recorded */
        proxy_hooks.file_tap_restat(p, &st);
    if (known && st.st_dev == v->dev && st.st_ino == v->ino)
        fs = sites_of(fd);
    if (fd != host_fd)
        close(fd);
    if (!fs || fs->nr == 0)
        return;
    uint64_t flo = v->file_off + (lo - v->start), fhi = flo + (hi - lo);
    struct func_hash fh = {0, 0, 0};
    size_t i = 0, n = fs->nr;
    while (i < n && fs->v[i].file_off < flo) /* sites are few: linear */
        i++;
    for (; i < n && fs->v[i].file_off + fs->v[i].len <= fhi; i++)
        patch_site(p, v, &fs->v[i], lo + (fs->v[i].file_off - flo), &fh,
                   fresh);
}

static void patch_range(struct proxy_process *p, int host_fd, gva_t gva,
                        uint64_t len, bool fresh)
{
    if (!(p->cfg->cpuid_rewrite || p->cfg->cpuid_topology ||
          p->cfg->rdpid_rewrite || p->cfg->rdtsc_rewrite ||
          p->cfg->rdtsc_inline) || len == 0)
        return;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* By address, on a copy of each VMA: a stub page mapped on the way
     * changes the VMA array. */
    const struct vmm_vma *next;
    for (gva_t at = gva; at < gva + len &&
                         (next = vmm_as_next_vma(p->as, at)) &&
                         next->start < gva + len;) {
        struct vmm_vma v = *next;
        at = v.end;
        gva_t lo = v.start > gva ? v.start : gva;
        gva_t hi = v.end < gva + len ? v.end : gva + len;
        if (lo >= hi || (!fresh && !(v.prot & PROT_EXEC)) ||
            !(v.flags & VMM_VMA_FILE) || (v.flags & VMM_VMA_SHARED) ||
            v.shared)
            continue;
        patch_vma(p, host_fd, &v, lo, hi, fresh);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (p->totals)
        p->totals->cpuid_patch_ns +=
            (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
                       (t1.tv_nsec - t0.tv_nsec));
}

void proxy_cpuid_patch_fresh(struct proxy_process *p, int host_fd,
                             uint64_t gva, uint64_t len)
{
    patch_range(p, host_fd, gva, len, true);
}

void proxy_cpuid_patch_protect(struct proxy_process *p, uint64_t gva,
                               uint64_t len)
{
    patch_range(p, -1, gva, len, false);
}

/* RDTSC/RDTSCP: the logical clock's TSC in EDX:EAX (RDTSCP: and TSC_AUX,
 * Linux's cpu and node numbers, 0 0 on the one vCPU, in ECX). */
static void answer_tsc(struct proxy_process *p, struct vmm_regs *r,
                       uint8_t kind)
{
    uint64_t tsc = det_clock_tsc(p->det);
    r->rax = (uint32_t)tsc;
    r->rdx = (uint32_t)(tsc >> 32);
    if (kind == PROXY_SITE_RDTSCP)
        r->rcx = 0;
    if (p->totals)
        p->totals->tsc_traps++;
}

/*
 * The model's leaf under --cpuid-rewrite; otherwise (cpuid_topology) the
 * host's, as the instruction would have given it, with the APIC ids the
 * model's: the guest's CPUID shows the host CPU either way, but never
 * which of its cores this run landed on.
 */
static void answer_cpuid(struct proxy_process *p, struct vmm_regs *r)
{
    uint32_t out[4];
    uint32_t leaf = (uint32_t)r->rax, sub = (uint32_t)r->rcx;
    if (p->cfg->cpuid_rewrite) {
        vmm_host_cpuid_model(p->world->host, leaf, sub, out);
    } else {
        __cpuid_count(leaf, sub, out[0], out[1], out[2], out[3]);
        vmm_cpu_model_apic_ids(leaf, out);
    }
    r->rax = out[0]; /* CPUID zero-extends into the 64-bit registers */
    r->rbx = out[1];
    r->rcx = out[2];
    r->rdx = out[3];
    if (p->totals)
        p->totals->cpuid_traps++;
}

/*
 * A #GP at an RDTSC or RDTSCP the backend made fault (ptrace: PR_SET_TSC in
 * its stub, as CR4.TSD would): the same answer as a rewritten site, from
 * the logical clock; with host time, the host's TSC, no event (what the
 * instruction gives under a backend that cannot trap it).
 */
static enum proxy_trap_kind tsc_fault(struct proxy_process *p)
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    uint8_t insn[3] = {0};
    if (!guest_bytes(p, r->rip, insn, 2) || insn[0] != 0x0f)
        return PROXY_TRAP_NONE;
    uint8_t kind, len;
    if (insn[1] == 0x31) {
        kind = PROXY_SITE_RDTSC;
        len = 2;
    } else if (insn[1] == 0x01 && guest_bytes(p, r->rip, insn, 3) &&
               insn[2] == 0xf9) {
        kind = PROXY_SITE_RDTSCP;
        len = 3;
    } else {
        return PROXY_TRAP_NONE;
    }
    if (tsc_faults(p))
        return PROXY_TRAP_TSC_GP;
    if (p->det->cfg.virtualize_time) {
        answer_tsc(p, r, kind);
    } else {
        uint64_t tsc = __builtin_ia32_rdtsc();
        r->rax = (uint32_t)tsc;
        r->rdx = (uint32_t)(tsc >> 32);
        if (kind == PROXY_SITE_RDTSCP)
            r->rcx = 0;
    }
    r->rip += len;
    vmm_vm_enter_user(p->vm);
    return p->det->cfg.virtualize_time ? PROXY_TRAP_TSC : PROXY_TRAP_HOST_TSC;
}

/* RDPID: the destination register (ModRM.rm, REX.B in the 5-byte form)
 * gets TSC_AUX as Linux sets it for the one vCPU: cpu 0, node 0. */
static void answer_rdpid(struct proxy_process *p, struct vmm_regs *r,
                         const struct patched_site *ps)
{
    uint8_t modrm;
    if (!guest_bytes(p, r->rip + ps->len - 1, &modrm, 1))
        modrm = 0xf8; /* cannot be: the bytes were just read */
    uint64_t *gpr[16] = {&r->rax, &r->rcx, &r->rdx, &r->rbx,
                         &r->rsp, &r->rbp, &r->rsi, &r->rdi,
                         &r->r8,  &r->r9,  &r->r10, &r->r11,
                         &r->r12, &r->r13, &r->r14, &r->r15};
    *gpr[(modrm & 7) + (ps->len == 5 ? 8 : 0)] = 0;
    if (p->totals)
        p->totals->cpuid_traps++;
}

enum proxy_trap_kind proxy_cpuid_trap(struct proxy_process *p,
                                      const struct vmm_event *ev)
{
    if (ev->vector == 13 && ev->error_code == 0)
        return tsc_fault(p);
    if (ev->vector != 6 || !p->cpuid_patched)
        return PROXY_TRAP_NONE;
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    const struct patched_site *ps = find_patched(p, r->rip);
    uint8_t now[2];
    /* The guest may have unmapped, remapped or rewritten it since. */
    if (!ps || ps->how == PATCH_JMP || ps->how == PATCH_NONE ||
        !(ps->how == PATCH_STUB_TRAP
              ? in_stub_page(p, r->rip)
              : maps_file_at(p, r->rip, ps->dev, ps->ino, ps->file_off)) ||
        !guest_bytes(p, r->rip, now, 2) || memcmp(now, insn_ud2, 2) != 0)
        return PROXY_TRAP_NONE;
    if (!traps_always(ps->kind) && tsc_faults(p))
        return PROXY_TRAP_TSC_GP;
    if (ps->kind == PROXY_SITE_CPUID)
        answer_cpuid(p, r);
    else if (ps->kind == PROXY_SITE_RDPID)
        answer_rdpid(p, r, ps);
    else
        answer_tsc(p, r, ps->kind);
    r->rip += ps->len;
    vmm_vm_enter_user(p->vm);
    if (ps->kind == PROXY_SITE_CPUID)
        return PROXY_TRAP_CPUID;
    if (ps->kind == PROXY_SITE_RDPID)
        return PROXY_TRAP_RDPID;
    return ps->how == PATCH_STUB_TRAP ? PROXY_TRAP_TSC_FORCED : PROXY_TRAP_TSC;
}

/* ---- mremap, fork, exec, exit -------------------------------------------- */

void proxy_cpuid_remapped(struct proxy_process *p, uint64_t old,
                          uint64_t old_len, uint64_t new_len,
                          uint64_t new_gva)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    if (!s || (old == new_gva && new_len >= old_len))
        return;
    size_t lo = lower_bound(s, old), hi = lower_bound(s, old + old_len);
    size_t n = hi - lo;
    struct patched_site *moved = n ? malloc(n * sizeof(*moved)) : NULL;
    if (!moved)
        return; /* none, or they SIGILL: never a wrong answer */
    memcpy(moved, &s->v[lo], n * sizeof(*moved));
    memmove(&s->v[lo], &s->v[hi], (s->nr - hi) * sizeof(*s->v));
    s->nr -= n;
    for (size_t i = 0; i < n; i++) {
        moved[i].gva = new_gva + (moved[i].gva - old);
        if (moved[i].gva + moved[i].span > new_gva + new_len)
            continue;
        /* A jmp rel32 moved lands elsewhere: the site traps instead. */
        if (moved[i].how == PATCH_JMP && !demote(p, &moved[i]))
            continue;
        (void)remember(p, &moved[i]);
    }
    free(moved);
}

int proxy_cpuid_fork(struct proxy_process *child,
                     const struct proxy_process *parent)
{
    const struct proxy_cpuid_patched *s = parent->cpuid_patched;
    child->cpuid_patched = NULL;
    if (!s || (s->nr == 0 && s->nr_pages == 0 && !s->no_inline))
        return 0;
    /* The child's memory is a copy: the stub pages are at the same
     * addresses, and so is its [vvar]. */
    struct proxy_cpuid_patched *c = new_patched();
    if (!c || (s->nr && !(c->v = malloc(s->nr * sizeof(*s->v)))) ||
        (s->nr_pages &&
         !(c->pages = malloc(s->nr_pages * sizeof(*s->pages))))) {
        if (c)
            free(c->v);
        free(c);
        return -ENOMEM;
    }
    if (s->nr)
        memcpy(c->v, s->v, s->nr * sizeof(*s->v));
    if (s->nr_pages)
        memcpy(c->pages, s->pages, s->nr_pages * sizeof(*s->pages));
    c->nr = c->cap = s->nr;
    c->nr_pages = s->nr_pages;
    c->no_inline = s->no_inline;
    child->cpuid_patched = c;
    return 0;
}

int proxy_cpuid_share(struct proxy_process *child,
                      struct proxy_process *parent)
{
    if (!parent->cpuid_patched && !(parent->cpuid_patched = new_patched()))
        return -ENOMEM;
    child->cpuid_patched = parent->cpuid_patched;
    child->cpuid_patched->refs++;
    return 0;
}

/* Drops a reference; the last frees the list. */
static void free_patched(struct proxy_cpuid_patched *s)
{
    if (!s || --s->refs > 0)
        return;
    free(s->v);
    free(s->pages);
    free(s);
}

struct proxy_cpuid_patched *proxy_cpuid_exec_begin(struct proxy_process *p)
{
    struct proxy_cpuid_patched *old = p->cpuid_patched;
    p->cpuid_patched = NULL;
    return old;
}

void proxy_cpuid_exec_end(struct proxy_process *p,
                          struct proxy_cpuid_patched *old, bool ok)
{
    if (ok) {
        free_patched(old);
        return;
    }
    free_patched(p->cpuid_patched);
    p->cpuid_patched = old;
}

void proxy_cpuid_release(struct proxy_process *p)
{
    free_patched(p->cpuid_patched);
    p->cpuid_patched = NULL;
}
