/*
 * cpuid_sites.c - the CPUID, RDTSC, RDTSCP and RDPID sites of an ELF
 * file, for cpuid_patch.c to rewrite (its comment says why they are found
 * this way): Capstone sweeps each function of .eh_frame (or, without
 * unwind info, each sized function of .symtab) from its first byte to its
 * end; a site keeps a hash of its function's bytes up to the instruction
 * and, for an RDTSC or CPUID, the span a stub may take over (the reads in
 * the guest).
 * A file's sites are kept per run in memory and across runs in hvrun's
 * cache directory, keyed by the file's dev, inode, size and mtime and by
 * the finder's and hvrun's versions (an entry per version:
 * proxy_site_cache_written).
 */
#include "proxy.h"
#include "kernel.h"
#include "mm.h"
#include "cpuid_patch.h"
#include "site_cache.h"
#include "vdso_abi.h"

#include <capstone/capstone.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SITE_CACHE_MAGIC 0x7469737064697063ULL /* "cpidpsit" */
/* Larger files are not decoded (libjvm.so, among the largest, is 20 MB). */
#define MAX_DECODED_FILE (512ULL << 20)
#define MAX_FUNCTION_BYTES (16ULL << 20)
#define MAX_SITES (1u << 20)

static const uint8_t insn_cpuid[2] = {0x0f, 0xa2};
static const uint8_t insn_rdtsc[2] = {0x0f, 0x31};
static const uint8_t insn_rdtscp[3] = {0x0f, 0x01, 0xf9};
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

/* One decoded instruction of the function being swept (backedges). */
struct insn_rec {
    uint64_t va;
    uint32_t id; /* Capstone's x86_insn */
    uint8_t size;
};

/* An instruction boundary inside a site's span: no branch may land there. */
struct inner_boundary {
    uint64_t va;
    size_t site; /* index into finder.sites */
    bool back;   /* of the site's backward span (back_span), not its own */
};

/* A CPUID site's other candidate (find_back_span): the span that starts
 * pre bytes before it and ends after it, taken when the forward one is
 * dropped and nothing lands inside this one. pre 0: none. */
struct back_span {
    uint8_t pre;
    uint8_t rip_disp[MAX_RIP_FIXUPS], rip_end[MAX_RIP_FIXUPS];
};

struct finder {
    const struct image *im;
    csh cs, cs_detail; /* cs_detail: with operands, for the tails */
    cs_insn *insn, *tail_insn;
    struct proxy_cpuid_site *sites;
    size_t nr, cap;
    struct inner_boundary *inner;
    size_t nr_inner, cap_inner;
    struct back_span *back; /* by index into sites; cap_back entries */
    size_t cap_back;
    struct proxy_cpuid_scan scan;
    /* proxy_progress_find_sites: backward branches, not CPUID/RDTSC */
    bool backedges;
    struct insn_rec *recs; /* the function being swept, in order */
    size_t nr_recs, cap_recs;
};

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
        off, va, func_off, 0, kind, len, len, {0, 0}, {0, 0}, 0};
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

/* `mov $nr, %eax; syscall` at code (7 bytes readable) for a call a stub
 * answers (guest_answered_call). */
static bool idcall_at(const uint8_t *code)
{
    return code[0] == 0xb8 && !code[3] && !code[4] && code[5] == 0x0f &&
           code[6] == 0x05 &&
           guest_answered_call(code[1] | (uint32_t)code[2] << 8);
}

static bool may_hold_idcall(const uint8_t *code, size_t len)
{
    for (const uint8_t *at = code; len >= 7;) {
        const uint8_t *b8 = memchr(at, 0xb8, len - 6);
        if (!b8)
            return false;
        if (idcall_at(b8))
            return true;
        len -= (size_t)(b8 + 1 - at);
        at = b8 + 1;
    }
    return false;
}

/* Whether the bytes could hold one of the instructions at all: most
 * functions cannot, and are not decoded (a byte search is far cheaper). */
static bool may_hold_site(const uint8_t *code, size_t len)
{
    return may_hold_idcall(code, len) || memmem(code, len, insn_cpuid, 2) ||
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
 * functions. Anything else keeps the trap (span = len), but for a CPUID
 * whose span may start before it ("spans that start before the site").
 */

#define MAX_TAIL_INSNS 4

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
    f->inner[f->nr_inner++] = (struct inner_boundary){va, site, false};
    return 0;
}

/* Sets s->span when the instructions after the RDTSC at s make one. */
static int find_span(struct finder *f, struct proxy_cpuid_site *s,
                     size_t idx, uint64_t func_end)
{
    if (s->kind == PROXY_SITE_RDPID || s->kind == PROXY_SITE_IDCALL)
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

/* The index of the first inner boundary at or above va (f->inner sorted
 * by va): several spans may share one (a CPUID site's two candidates,
 * overlapping FDEs naming one site twice). */
static size_t inner_from(const struct finder *f, uint64_t va)
{
    size_t lo = 0, hi = f->nr_inner;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->inner[mid].va < va)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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

/* Something at code address from (0: in data) could land at t: each span
 * t is inside of keeps its trap (a backward span: is not taken). Bytes
 * inside the span itself are its own instructions' (a displacement that
 * reads as a jle), never a branch: the span holds none. */
static void drop_from(struct finder *f, uint64_t t, uint64_t from)
{
    if (t < f->inner[0].va || t > f->inner[f->nr_inner - 1].va)
        return;
    for (size_t i = inner_from(f, t); i < f->nr_inner && f->inner[i].va == t;
         i++) {
        struct proxy_cpuid_site *s = &f->sites[f->inner[i].site];
        if (f->inner[i].back) {
            struct back_span *b = &f->back[f->inner[i].site];
            if (!(from >= s->vaddr - b->pre && from < s->vaddr + s->len))
                *b = (struct back_span){0, {0}, {0}};
            continue;
        }
        if (from >= s->vaddr && from < s->vaddr + s->span)
            continue;
        s->span = s->kind == PROXY_SITE_BACKEDGE ? 0 : s->len;
        memset(s->rip_disp, 0, sizeof(s->rip_disp));
        memset(s->rip_end, 0, sizeof(s->rip_end));
    }
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

/* ---- backward branches: where the progress counter counts ------------------
 *
 * For proxy_progress_find_sites (progress.c rewrites them): a direct jcc or
 * jmp of a function whose target lies at or before it, in the same
 * function, at an instruction boundary of the sweep (a loop's back edge:
 * every loop of the function's own code takes one per iteration, so the
 * instructions run between two counted points are bounded by the
 * function's straight-line code, plus what its calls run, which is
 * counted in the callee). The site is its span: the branch and as many
 * plain instructions before it as make 5 bytes (a jmp rel32), none of
 * them a branch, at most two RIP-relative; the span is dropped when
 * anything could land inside it (drop_landing_inside, as for the RDTSC
 * spans) or when the branch's own target is inside it (a loop shorter
 * than 5 bytes). The counter's decrement (decq, which keeps CF) runs on
 * the taken path, before the target: so the target must not read OF, SF,
 * ZF, AF or PF before an instruction writes them all again
 * (flags_dead_at, a short straight-line look, by instruction kind).
 */

#define MAX_BACK_INSNS 6  /* span instructions before the branch */
#define FLAG_LOOKAHEAD 32 /* memcpy's loops open with 16 prefetches */

static int add_rec(struct finder *f, const cs_insn *in)
{
    if (f->nr_recs == f->cap_recs) {
        size_t cap = f->cap_recs ? f->cap_recs * 2 : 256;
        void *v = realloc(f->recs, cap * sizeof(*f->recs));
        if (!v)
            return -ENOMEM;
        f->recs = v;
        f->cap_recs = cap;
    }
    f->recs[f->nr_recs++] =
        (struct insn_rec){in->address, in->id, (uint8_t)in->size};
    return 0;
}

/* The index of the instruction starting at va, or -1. */
static long rec_at(const struct finder *f, uint64_t va)
{
    size_t lo = 0, hi = f->nr_recs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->recs[mid].va < va)
            lo = mid + 1;
        else if (f->recs[mid].va > va)
            hi = mid;
        else
            return (long)mid;
    }
    return -1;
}

/* The target of a direct jcc/jmp of exactly this encoding (no prefix), or
 * 0 for any other instruction. */
static uint64_t jump_target(const uint8_t *b, uint8_t size, uint64_t va)
{
    int32_t rel32;
    if (size == 2 && (b[0] == 0xeb || (b[0] & 0xf0) == 0x70))
        return va + 2 + (uint64_t)(int64_t)(int8_t)b[1];
    if (size == 5 && b[0] == 0xe9) {
        memcpy(&rel32, b + 1, 4);
        return va + 5 + (uint64_t)(int64_t)rel32;
    }
    if (size == 6 && b[0] == 0x0f && (b[1] & 0xf0) == 0x80) {
        memcpy(&rel32, b + 2, 4);
        return va + 6 + (uint64_t)(int64_t)rel32;
    }
    return 0;
}

/* Writes OF SF ZF AF PF (undefined counts: nothing may read it). CF may
 * be read (ADC, SBB): the decrement keeps it. */
static bool writes_status_flags(uint32_t id)
{
    switch (id) {
    case X86_INS_ADD: case X86_INS_SUB: case X86_INS_CMP: case X86_INS_TEST:
    case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR: case X86_INS_INC:
    case X86_INS_DEC: case X86_INS_NEG: case X86_INS_ADC: case X86_INS_SBB:
    case X86_INS_IMUL: case X86_INS_MUL: case X86_INS_XADD:
    case X86_INS_POPCNT:
        return true;
    default:
        return false;
    }
}

/* Neither reads nor writes a status flag, and goes on to the next one. */
static bool flag_neutral(uint32_t id)
{
    switch (id) {
    case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSX:
    case X86_INS_MOVSXD: case X86_INS_MOVABS: case X86_INS_LEA:
    case X86_INS_NOP: case X86_INS_PUSH: case X86_INS_POP:
    case X86_INS_MOVAPS: case X86_INS_MOVUPS: case X86_INS_MOVDQA:
    case X86_INS_MOVDQU: case X86_INS_MOVSD: case X86_INS_MOVSS:
    case X86_INS_MOVQ: case X86_INS_MOVD:
        return true;
    default:
        return false;
    }
}

/* A vector (SSE, AVX, AVX-512, ...) instruction, or a prefetch: none of
 * them reads a status flag (memcpy's and memset's loops begin with
 * them). Not CMOV, ADX (ADOX reads OF) or x87 (FCMOV reads flags). */
static bool vector_or_prefetch(struct finder *f, const struct insn_rec *r,
                               uint64_t start, uint64_t off)
{
    if (r->id >= X86_INS_PREFETCH && r->id <= X86_INS_PREFETCHT2)
        return true;
    const uint8_t *code = f->im->bytes + off + (r->va - start);
    size_t left = r->size;
    uint64_t va = r->va;
    if (!cs_disasm_iter(f->cs_detail, &code, &left, &va, f->tail_insn))
        return false;
    const cs_detail *d = f->tail_insn->detail;
    bool vector = false;
    for (int g = 0; g < d->groups_count; g++)
        switch (d->groups[g]) {
        case X86_GRP_AVX: case X86_GRP_AVX2: case X86_GRP_AVX512:
        case X86_GRP_FMA: case X86_GRP_FMA4: case X86_GRP_F16C:
        case X86_GRP_SSE1: case X86_GRP_SSE2: case X86_GRP_SSE3:
        case X86_GRP_SSE41: case X86_GRP_SSE42: case X86_GRP_SSE4A:
        case X86_GRP_SSSE3: case X86_GRP_PCLMUL: case X86_GRP_AES:
        case X86_GRP_SHA: case X86_GRP_CDI: case X86_GRP_DQI:
        case X86_GRP_BWI: case X86_GRP_VLX: case X86_GRP_NOVLX:
            vector = true;
            break;
        case X86_GRP_MODE64: case X86_GRP_NOT64BITMODE: case X86_GRP_MODE32:
            break;
        default: /* a branch, CMOV, ADX, x87, ...: not known to be safe */
            return false;
        }
    return vector;
}

/* Whether the status flags but CF are dead at instruction idx. */
static bool flags_dead_at(struct finder *f, size_t idx, uint64_t start,
                          uint64_t off)
{
    for (size_t i = idx; i < f->nr_recs && i < idx + FLAG_LOOKAHEAD; i++) {
        if (writes_status_flags(f->recs[i].id))
            return true;
        if (!flag_neutral(f->recs[i].id) &&
            !vector_or_prefetch(f, &f->recs[i], start, off))
            return false;
    }
    return false;
}

/* Whether the instruction at rec i runs the same anywhere (no branch, no
 * call, nothing that stops); *rip_disp: its RIP-relative disp32's offset,
 * 0 for none. */
static bool movable(struct finder *f, const struct insn_rec *r, uint64_t off,
                    uint64_t start, uint8_t *rip_disp)
{
    const uint8_t *code = f->im->bytes + off + (r->va - start);
    size_t left = r->size;
    uint64_t va = r->va;
    *rip_disp = 0;
    if (!cs_disasm_iter(f->cs_detail, &code, &left, &va, f->tail_insn))
        return false;
    const cs_detail *d = f->tail_insn->detail;
    for (int g = 0; g < d->groups_count; g++)
        switch (d->groups[g]) {
        case X86_GRP_JUMP: case X86_GRP_CALL: case X86_GRP_RET:
        case X86_GRP_INT: case X86_GRP_IRET: case X86_GRP_BRANCH_RELATIVE:
        case X86_GRP_PRIVILEGE:
            return false;
        default:
            break;
        }
    switch (r->id) {
    case X86_INS_SYSCALL: case X86_INS_UD2: case X86_INS_HLT:
    case X86_INS_INVALID:
        return false;
    default:
        break;
    }
    const cs_x86 *x = &d->x86;
    for (int i = 0; i < x->op_count; i++) {
        const cs_x86_op *op = &x->operands[i];
        if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
            continue;
        if (op->mem.index != X86_REG_INVALID || *rip_disp ||
            x->encoding.disp_size != 4 || x->encoding.disp_offset == 0 ||
            x->encoding.disp_offset + 4 > r->size)
            return false;
        *rip_disp = x->encoding.disp_offset;
    }
    return true;
}

/* The span ending with the back edge at rec k, as a site; none when it
 * cannot be made. */
static int add_backedge(struct finder *f, size_t k, uint64_t start,
                        uint64_t off)
{
    const struct insn_rec *b = &f->recs[k];
    uint64_t target = jump_target(f->im->bytes + off + (b->va - start),
                                  b->size, b->va);
    long t;
    if (!target || target < start || target > b->va ||
        (t = rec_at(f, target)) < 0 ||
        !flags_dead_at(f, (size_t)t, start, off))
        return 0;
    size_t first = k;
    unsigned span = b->size;
    int fixups = 0;
    while (span < 5) {
        uint8_t disp;
        if (first == 0 || k - first >= MAX_BACK_INSNS ||
            !movable(f, &f->recs[first - 1], off, start, &disp) ||
            span + f->recs[first - 1].size > MAX_SPAN ||
            (disp && fixups == MAX_RIP_FIXUPS))
            return 0;
        first--;
        span += f->recs[first].size;
        fixups += disp != 0;
    }
    uint64_t s_va = f->recs[first].va;
    if (target > s_va) /* the loop is inside the span */
        return 0;
    size_t idx = f->nr;
    int rc = add_site(f, off + (s_va - start), s_va, off, PROXY_SITE_BACKEDGE,
                      b->size);
    if (rc < 0)
        return rc;
    struct proxy_cpuid_site *s = &f->sites[idx];
    s->span = (uint8_t)span;
    /* Fixups named by their instruction: found again from the records. */
    int n = 0;
    for (size_t i = first; i < k; i++) {
        uint8_t disp;
        if (!movable(f, &f->recs[i], off, start, &disp))
            return 0; /* cannot be: it was just decoded */
        if (disp && n < MAX_RIP_FIXUPS) {
            s->rip_disp[n] = (uint8_t)(f->recs[i].va - s_va + disp);
            s->rip_end[n++] = (uint8_t)(f->recs[i].va - s_va + f->recs[i].size);
        }
    }
    for (size_t i = first + 1; i <= k; i++)
        if ((rc = add_inner(f, f->recs[i].va, idx)) < 0)
            return rc;
    return 0;
}

/* Every back edge of the function just swept (f->recs). */
static int find_backedges(struct finder *f, uint64_t start, uint64_t off)
{
    for (size_t k = 0; k < f->nr_recs; k++) {
        int rc = add_backedge(f, k, start, off);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- CPUID: spans that start before the site -------------------------------
 *
 * A CPUID whose forward span cannot be had (a branch lands just after it,
 * as in ld.so's cache-size switch, or too few bytes a stub can run follow
 * it) is nearly always preceded by the moves that set its leaf and
 * subleaf (`mov $leaf, %eax`, `xor %ecx, %ecx`: glibc's __cpuid_count).
 * Its second candidate span starts at those: the jmp replaces them and the
 * CPUID, and the stub runs them as they were before the CPUID, then jumps
 * back just after it (cpuid_patch.c, build_cpuid_stub). The rules are the
 * forward span's: at most MAX_PRE_INSNS instructions, each relocatable
 * (no branch, at most two RIP-relative, adjusted); whatever flags they
 * set are the flags the CPUID stub keeps with pushfq/popfq, as the CPUID
 * leaves them; and nothing may land inside the span (its instructions
 * after the first, the CPUID among them, become inner boundaries that
 * drop_landing_inside checks against every direct branch, jump table,
 * taken address, pointer, relocation and symbol of the file). Its first
 * byte may be a target (a call's return, a branch to the leaf's mov), as
 * a forward span's site may. Indirect jumps to addresses none of those
 * name are the risk forward spans take, the same. pick_back_spans takes
 * this span only where the forward one was dropped (or never was), and
 * find_sites never lets two spans overlap.
 */

#define MAX_PRE_INSNS 3

/* Room in f->back for every site so far (new entries: none). */
static int reserve_back(struct finder *f)
{
    if (f->cap_back >= f->nr)
        return 0;
    void *v = realloc(f->back, f->cap * sizeof(*f->back));
    if (!v)
        return -ENOMEM;
    f->back = v;
    memset(&f->back[f->cap_back], 0,
           (f->cap - f->cap_back) * sizeof(*f->back));
    f->cap_back = f->cap;
    return 0;
}

/* The instruction of rec r, decoded with details into f->tail_insn. */
static bool decode_rec(struct finder *f, const struct insn_rec *r,
                       uint64_t start, uint64_t off)
{
    const uint8_t *code = f->im->bytes + off + (r->va - start);
    size_t left = r->size;
    uint64_t va = r->va;
    return cs_disasm_iter(f->cs_detail, &code, &left, &va, f->tail_insn);
}

/* f->back[idx]: the backward span of the CPUID site idx of the function
 * just swept (f->recs, from start at file offset off), when its
 * instructions before it make one. */
static int find_back_span(struct finder *f, size_t idx, uint64_t start,
                          uint64_t off)
{
    const struct proxy_cpuid_site *s = &f->sites[idx];
    long k = s->kind == PROXY_SITE_CPUID || s->kind == PROXY_SITE_IDCALL
                 ? rec_at(f, s->vaddr)
                 : -1;
    if (k < 0)
        return 0;
    size_t first = (size_t)k;
    unsigned bytes = s->len;
    int fixups = 0;
    uint64_t disp_va[MAX_RIP_FIXUPS], end_va[MAX_RIP_FIXUPS];
    while (bytes < 5) {
        const struct insn_rec *r = first > 0 ? &f->recs[first - 1] : NULL;
        bool sets_flags;
        uint8_t disp;
        if (!r || (size_t)k - first >= MAX_PRE_INSNS ||
            !decode_rec(f, r, start, off) ||
            !relocatable(f->tail_insn, &sets_flags, &disp) ||
            bytes + r->size > MAX_SPAN ||
            (disp && fixups == MAX_RIP_FIXUPS))
            return 0;
        if (disp) {
            disp_va[fixups] = r->va + disp;
            end_va[fixups++] = r->va + r->size;
        }
        first--;
        bytes += r->size;
    }
    int rc = reserve_back(f);
    if (rc < 0)
        return rc;
    uint64_t span_va = f->recs[first].va;
    struct back_span b = {(uint8_t)(s->vaddr - span_va), {0}, {0}};
    for (int i = 0; i < fixups; i++) {
        b.rip_disp[i] = (uint8_t)(disp_va[i] - span_va);
        b.rip_end[i] = (uint8_t)(end_va[i] - span_va);
    }
    for (size_t i = first + 1; i <= (size_t)k; i++) {
        if ((rc = add_inner(f, f->recs[i].va, idx)) < 0)
            return rc;
        f->inner[f->nr_inner - 1].back = true;
    }
    f->back[idx] = b;
    return 0;
}

/* Once drop_landing_inside has run: a CPUID site whose forward span was
 * dropped (or never was) takes its backward one, if that survived. */
static void pick_back_spans(struct finder *f)
{
    for (size_t i = 0; i < f->nr && i < f->cap_back; i++) {
        struct proxy_cpuid_site *s = &f->sites[i];
        const struct back_span *b = &f->back[i];
        if (!b->pre || s->span > s->len)
            continue;
        s->pre = b->pre;
        memcpy(s->rip_disp, b->rip_disp, sizeof(s->rip_disp));
        memcpy(s->rip_end, b->rip_end, sizeof(s->rip_end));
    }
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
    if (!f->backedges && !may_hold_site(code, len))
        return 0;
    size_t left = len, kept = f->nr, kept_inner = f->nr_inner;
    uint64_t addr = start;
    f->nr_recs = 0;
    while (left > 0 && cs_disasm_iter(f->cs, &code, &left, &addr, f->insn)) {
        /* the back edges', and a CPUID's instructions before it */
        int rc = add_rec(f, f->insn);
        if (rc < 0)
            return rc;
        if (f->backedges)
            continue;
        int kind = site_kind(f->insn);
        /* An identity call's SYSCALL: the mov of its number is the
         * instruction just before (its backward span, find_back_span). */
        if (kind < 0 && f->insn->id == X86_INS_SYSCALL &&
            f->insn->address >= start + 5 && f->nr_recs >= 2 &&
            f->recs[f->nr_recs - 2].va == f->insn->address - 5 &&
            idcall_at(f->im->bytes + off + (f->insn->address - 5 - start)))
            kind = PROXY_SITE_IDCALL;
        if (kind < 0)
            continue;
        rc = add_site(f, off + (f->insn->address - start), f->insn->address,
                      off, (uint8_t)kind, (uint8_t)f->insn->size);
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
    if (f->backedges)
        return find_backedges(f, start, off);
    for (size_t i = kept; i < f->nr; i++) {
        int rc = find_span(f, &f->sites[i], i, start + len);
        if (rc == 0)
            rc = find_back_span(f, i, start, off);
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

static int find_sites(const void *image, size_t size, bool backedges,
                      struct proxy_cpuid_site **sites, size_t *nr,
                      struct proxy_cpuid_scan *scan)
{
    struct image im = {.bytes = image, .size = size};
    struct finder f = {.im = &im, .backedges = backedges};
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
    if (rc == 0) {
        drop_landing_inside(&f, elf);
        pick_back_spans(&f);
    }
    elf_end(elf);
    free(f.inner);
    free(f.back);
    free(f.recs);
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
        if (f.sites[i].kind == PROXY_SITE_BACKEDGE && f.sites[i].span == 0)
            continue; /* something may land inside it */
        if (!kept || kept->file_off != f.sites[i].file_off)
            f.sites[n++] = f.sites[i];
        else if (f.sites[i].pre + f.sites[i].span < kept->pre + kept->span)
            *kept = f.sites[i]; /* the one whose span fewer trust */
    }
    /* Two spans never share a byte (one jmp would overwrite the other):
     * a backward span that starts inside the one before it is not taken. */
    for (size_t i = 1; i < n; i++) {
        struct proxy_cpuid_site *s = &f.sites[i], *prev = &f.sites[i - 1];
        if (s->pre && s->file_off - s->pre < prev->file_off + prev->span) {
            s->pre = 0;
            memset(s->rip_disp, 0, sizeof(s->rip_disp));
            memset(s->rip_end, 0, sizeof(s->rip_end));
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct proxy_cpuid_site *s = &f.sites[i];
        /* A back edge's: its span's bytes only. The file's (dev, inode,
         * size, mtime) named the cache entry, and only a fresh copy of it
         * at the same offset is rewritten (progress.c), so the function's
         * bytes are the file's; hashing all of them at every exec cost
         * more than the rest of the rewrite (libc: 1.4 MB). */
        if (s->kind == PROXY_SITE_BACKEDGE)
            s->hash = fnv1a(FNV_INIT, im.bytes + s->file_off, s->span);
        else
            s->hash = fnv1a(FNV_INIT, im.bytes + s->func_off,
                            s->file_off + s->span - s->func_off);
        f.scan.inline_sites += s->span > s->len || s->pre;
    }
    *sites = f.sites;
    *nr = n;
    if (scan)
        *scan = f.scan;
    return 0;
}

int proxy_cpuid_find_sites(const void *image, size_t size,
                           struct proxy_cpuid_site **sites, size_t *nr,
                           struct proxy_cpuid_scan *scan)
{
    return find_sites(image, size, false, sites, nr, scan);
}

int proxy_progress_find_sites(const void *image, size_t size,
                              struct proxy_cpuid_site **sites, size_t *nr,
                              struct proxy_cpuid_scan *scan)
{
    return find_sites(image, size, true, sites, nr, scan);
}

/* ---- the sites of a file: per run in memory, across runs on disk ---------- */

/* What a list holds: the CPUID/RDTSC sites, or the back edges. */
struct site_list_kind {
    const char *prefix; /* of its cache files' names */
    bool backedges;
    struct file_sites *known; /* this hvrun process's */
};

static struct site_list_kind cpuid_list = {"cpuid-sites-", false, NULL};
static struct site_list_kind progress_list = {"progress-sites-", true, NULL};

int proxy_site_cache_path(const char *prefix, const char *versions,
                          uint64_t dev, uint64_t ino, uint64_t size,
                          uint64_t mtime_ns, char *out, size_t len)
{
    char dir[512];
    if (vmm_host_cache_dir(dir, sizeof(dir)) < 0)
        return -1;
    int n = snprintf(out, len, "%s/%s%s-%llx-%llx-%llx-%llx", dir, prefix,
                     versions, (unsigned long long)dev,
                     (unsigned long long)ino, (unsigned long long)size,
                     (unsigned long long)mtime_ns);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int cache_path(const struct site_list_kind *k,
                      const struct file_sites *fs, char *out, size_t len)
{
    return proxy_site_cache_path(k->prefix, SITE_VERSIONS, fs->dev, fs->ino,
                                 fs->size, fs->mtime_ns, out, len);
}

/* A cache file that is missing or malformed is a miss; what it says is
 * checked again (the function hash) before any byte is rewritten. The
 * list is mapped, not read: a text too large for counting (cc1's 20 MiB,
 * 150,000 back edges) touches a few of its pages, and reading all of it
 * cost gcc -c a tenth of its CPU time. The entry is only ever replaced
 * (renamed over) or removed, never written, so the mapping stays whole. */
static bool cache_load(const struct site_list_kind *k, struct file_sites *fs)
{
    char path[768];
    if (cache_path(k, fs, path, sizeof(path)) < 0)
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
        uint8_t *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
                            fd, 0);
        ok = map != MAP_FAILED;
        if (ok) /* read-only: nothing writes a list once found */
            fs->v = (struct proxy_cpuid_site *)(map + sizeof(head));
    }
    close(fd);
    if (!ok)
        return false;
    fs->nr = head[1];
    return true;
}

/*
 * The cache's growth. An entry's name carries the finder's and hvrun's
 * versions, so two builds on one machine (an installed hvrun and a
 * checkout) each keep their own entry for a file; they used to delete
 * each other's, and each run of either decoded again (3.6% of a run's
 * CPU). What bounds the directory instead:
 * - an entry written replaces this version's entries for the same file
 *   (dev, inode) with other contents (a rebuilt binary);
 * - at most SITE_CACHE_PER_FILE entries per file and list, whatever the
 *   versions: the least recently written go;
 * - each version touches a marker, sites-used-VERSIONS, at most once a
 *   day (the first lookup of a process checks its age); when it does, it
 *   removes the entries and markers of versions whose marker is missing
 *   or SITE_CACHE_UNUSED_DAYS old, every entry written that long ago (of
 *   files long gone, mostly: a file still run is decoded again once a
 *   month), and temporaries a day old (a writer that died).
 * At worst a wrong removal is a miss. The host clock read here decides
 * only what is kept on disk, never what a guest sees.
 */
#define SITE_CACHE_PER_FILE 4
#define SITE_CACHE_UNUSED_DAYS 30
#define SITE_CACHE_DAY_S 86400
#define SITE_MARKER_PREFIX "sites-used-"

/* An entry's name: PREFIX VERSIONS-DEV-INO-SIZE-MTIME[.XXXXXX]. */
struct entry_name {
    const char *versions; /* not terminated: versions_len bytes */
    size_t versions_len;
    uint64_t dev, ino;
    bool temporary;
};

static bool parse_entry(const char *name, const char *prefix,
                        struct entry_name *out)
{
    size_t plen = strlen(prefix);
    if (strncmp(name, prefix, plen) != 0)
        return false;
    const char *s = name + plen, *dash[4];
    const char *end = s + strlen(s);
    int found = 0;
    for (const char *c = end; c > s && found < 4;)
        if (*--c == '-')
            dash[found++] = c; /* dash[0] is the last one */
    if (found < 4 || dash[3] == s)
        return false;
    char *stop;
    out->versions = s;
    out->versions_len = (size_t)(dash[3] - s);
    out->dev = strtoull(dash[3] + 1, &stop, 16);
    if (stop != dash[2])
        return false;
    out->ino = strtoull(dash[2] + 1, &stop, 16);
    if (stop != dash[1])
        return false;
    out->temporary = strchr(dash[0], '.') != NULL;
    return true;
}

static bool is_versions(const struct entry_name *e, const char *versions)
{
    return e->versions_len == strlen(versions) &&
           !memcmp(e->versions, versions, e->versions_len);
}

/* The kinds of entry, each with this hvrun's versions. */
static const struct {
    const char *prefix, *versions;
} entry_kinds[] = {
    {"cpuid-sites-", SITE_VERSIONS},
    {"progress-sites-", SITE_VERSIONS},
    {PROGRESS_IMAGE_PREFIX, PROGRESS_IMAGE_VERSIONS},
};
#define NR_ENTRY_KINDS (sizeof(entry_kinds) / sizeof(entry_kinds[0]))

/* Whether the versions' marker was touched within SITE_CACHE_UNUSED_DAYS
 * (the last few answers remembered: a directory holds few versions). */
static bool versions_in_use(int dir_fd, const struct entry_name *e,
                            time_t now)
{
    static struct {
        char versions[96];
        bool in_use;
    } seen[8];
    static unsigned n_seen;
    char marker[128];
    if (e->versions_len >= sizeof(seen[0].versions))
        return false;
    for (unsigned i = 0; i < n_seen && i < 8; i++)
        if (strlen(seen[i].versions) == e->versions_len &&
            !memcmp(seen[i].versions, e->versions, e->versions_len))
            return seen[i].in_use;
    snprintf(marker, sizeof(marker), SITE_MARKER_PREFIX "%.*s",
             (int)e->versions_len, e->versions);
    struct stat st;
    bool in_use =
        fstatat(dir_fd, marker, &st, 0) == 0 &&
        st.st_mtime > now - (time_t)SITE_CACHE_UNUSED_DAYS * SITE_CACHE_DAY_S;
    unsigned slot = n_seen++ % 8;
    memcpy(seen[slot].versions, e->versions, e->versions_len);
    seen[slot].versions[e->versions_len] = 0;
    seen[slot].in_use = in_use;
    return in_use;
}

/* Whether name (a marker, an entry or a temporary of either list) is to
 * go in the daily sweep. */
static bool sweep_removes(int dir_fd, const char *name, time_t now)
{
    struct stat st;
    if (!strncmp(name, SITE_MARKER_PREFIX, strlen(SITE_MARKER_PREFIX)))
        return fstatat(dir_fd, name, &st, 0) == 0 &&
               st.st_mtime <=
                   now - (time_t)SITE_CACHE_UNUSED_DAYS * SITE_CACHE_DAY_S;
    for (size_t i = 0; i < NR_ENTRY_KINDS; i++) {
        struct entry_name e;
        if (!parse_entry(name, entry_kinds[i].prefix, &e))
            continue;
        if (fstatat(dir_fd, name, &st, 0) < 0)
            return false;
        if (e.temporary)
            return st.st_mtime <= now - SITE_CACHE_DAY_S;
        return st.st_mtime <=
                   now - (time_t)SITE_CACHE_UNUSED_DAYS * SITE_CACHE_DAY_S ||
               (!is_versions(&e, entry_kinds[i].versions) &&
                !versions_in_use(dir_fd, &e, now));
    }
    return false;
}

static void sweep_unused_versions(const char *dir, time_t now)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (sweep_removes(dirfd(d), e->d_name, now))
            (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* Touches versions' marker; whether it was a day old or missing. */
static bool touch_marker(const char *dir, const char *versions, time_t now)
{
    char marker[768];
    snprintf(marker, sizeof(marker), "%s/" SITE_MARKER_PREFIX "%s", dir,
             versions);
    struct stat st;
    if (stat(marker, &st) == 0 && st.st_mtime > now - SITE_CACHE_DAY_S &&
        st.st_mtime <= now)
        return false;
    int fd = openat(AT_FDCWD, marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    (void)futimens(fd, NULL);
    close(fd);
    return true;
}

void proxy_site_cache_note_used(void)
{
    static bool noted;
    char dir[512];
    if (noted || vmm_host_cache_dir(dir, sizeof(dir)) < 0)
        return;
    noted = true;
    time_t now = time(NULL);
    bool stale = touch_marker(dir, SITE_VERSIONS, now);
    stale |= touch_marker(dir, PROGRESS_IMAGE_VERSIONS, now);
    if (stale)
        sweep_unused_versions(dir, now);
}

struct other_entry {
    char name[256];
    time_t mtime;
};

static int older_first(const void *a, const void *b)
{
    const struct other_entry *x = a, *y = b;
    return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* After keep (this version's entry for the file dev, ino) is written:
 * this version's entries for the file's other contents go, and the
 * oldest of the other versions' past SITE_CACHE_PER_FILE. */
void proxy_site_cache_written(const char *prefix, const char *versions,
                              uint64_t dev, uint64_t ino, const char *keep)
{
    char dir[512];
    if (vmm_host_cache_dir(dir, sizeof(dir)) < 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    const char *keep_name = strrchr(keep, '/') + 1;
    struct other_entry others[16];
    size_t n_others = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct entry_name e;
        struct stat st;
        if (!parse_entry(de->d_name, prefix, &e) || e.temporary ||
            e.dev != dev || e.ino != ino || !strcmp(de->d_name, keep_name))
            continue;
        if (is_versions(&e, versions))
            (void)unlinkat(dirfd(d), de->d_name, 0);
        else if (n_others < sizeof(others) / sizeof(others[0]) &&
                 strlen(de->d_name) < sizeof(others[0].name) &&
                 fstatat(dirfd(d), de->d_name, &st, 0) == 0) {
            strcpy(others[n_others].name, de->d_name);
            others[n_others++].mtime = st.st_mtime;
        }
    }
    qsort(others, n_others, sizeof(others[0]), older_first);
    for (size_t i = 0; i + SITE_CACHE_PER_FILE < n_others + 1; i++)
        (void)unlinkat(dirfd(d), others[i].name, 0);
    closedir(d);
}

/* Written to a temporary name and renamed, so a reader sees all or none. */
static void cache_store(const struct site_list_kind *k,
                        const struct file_sites *fs)
{
    char path[768], tmp[800];
    if (cache_path(k, fs, path, sizeof(path)) < 0)
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
        proxy_site_cache_written(k->prefix, SITE_VERSIONS, fs->dev, fs->ino,
                                 path);
}

static int decode_file(const struct site_list_kind *k, int fd,
                       struct file_sites *fs)
{
    if (fs->size == 0 || fs->size > MAX_DECODED_FILE)
        return 0;
    /* Private and writable only so that libelf may touch its copy. */
    void *img = mmap(NULL, fs->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                     0);
    if (img == MAP_FAILED)
        return -errno;
    int rc = find_sites(img, fs->size, k->backedges, &fs->v, &fs->nr, NULL);
    munmap(img, fs->size);
    return rc == -ENOEXEC ? 0 : rc;
}

static const struct file_sites *sites_of(struct site_list_kind *k, int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
                     (uint64_t)st.st_mtim.tv_nsec;
    for (struct file_sites *fs = k->known; fs; fs = fs->next)
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
    proxy_site_cache_note_used();
    if (!cache_load(k, fs)) {
        if (decode_file(k, fd, fs) < 0) {
            proxy_fscred_resume(as_guest);
            free(fs->v);
            free(fs);
            return NULL;
        }
        cache_store(k, fs);
    }
    proxy_fscred_resume(as_guest);
    fs->next = k->known;
    k->known = fs;
    return fs;
}

const struct file_sites *proxy_cpuid_sites_of(int fd)
{
    return sites_of(&cpuid_list, fd);
}

const struct file_sites *proxy_progress_sites_of(int fd)
{
    return sites_of(&progress_list, fd);
}
