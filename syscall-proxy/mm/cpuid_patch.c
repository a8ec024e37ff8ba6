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
 * This file rewrites the sites and answers their traps; cpuid_sites.c
 * finds them, as follows.
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
#include "internal.h"
#include "cpuid_patch.h"
#include "progress.h"
#include "det.h"
#include "vdso_abi.h"

#include <capstone/capstone.h>
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const uint8_t insn_ud2[2] = {0x0f, 0x0b};

/* ---- the sites rewritten in one address space ---------------------------- */

/* What a site became. */
enum patch_how {
    PATCH_TRAP,      /* UD2: the trap answers it */
    PATCH_JMP,       /* a jmp to its stub: read in the guest */
    PATCH_STUB_TRAP, /* the UD2 of a stub: its fallback, trapped */
    PATCH_NONE,      /* as the file has it; its stub's room kept */
};

struct patched_site {
    gva_t gva; /* the instruction's */
    uint64_t dev, ino, file_off; /* PATCH_STUB_TRAP: 0 (not a file's) */
    uint8_t kind, len, span, how;
    /* PATCH_JMP: the span as the file had it, [gva - pre, gva + span) */
    uint8_t orig[MAX_SPAN];
    gva_t stub;             /* its stub's room (a site with a span), or 0 */
    /* The span's RIP-relative instructions (proxy_cpuid_site) */
    uint8_t rip_disp[MAX_RIP_FIXUPS], rip_end[MAX_RIP_FIXUPS];
    /* A CPUID's backward span: its bytes before gva (proxy_cpuid_site) */
    uint8_t pre;
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
    /* A thread of it is traced by another guest: its identity calls are
     * the file's code again (a tracer that single-steps them sees the
     * mov and the syscall), and no more are rewritten; kept by fork. */
    bool no_idcall;
    struct proxy_progress *progress; /* progress.c's, or NULL */
    unsigned refs;
    /* The rewriting of a text being recorded for the memo, or NULL. */
    struct memo_recording *recording;
};

static void memo_note_site(struct memo_recording *r,
                           const struct patched_site *ps, bool replaced);
static void memo_note_new_page(struct memo_recording *r, gva_t gva);

static struct proxy_cpuid_patched *new_patched(void)
{
    struct proxy_cpuid_patched *s = calloc(1, sizeof(*s));
    if (s)
        s->refs = 1;
    return s;
}

struct proxy_progress **proxy_cpuid_progress_slot(struct proxy_process *p,
                                                  bool create)
{
    if (!p->cpuid_patched && create)
        p->cpuid_patched = new_patched();
    return p->cpuid_patched ? &p->cpuid_patched->progress : NULL;
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
    bool replaced = i < s->nr && s->v[i].gva == ps->gva;
    if (s->recording)
        memo_note_site(s->recording, ps, replaced);
    if (replaced) {
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

/* FNV-1a over guest bytes [gva, gva+len), continuing from h. */
static bool hash_guest(const struct proxy_process *p, gva_t gva, size_t len,
                       uint64_t *h)
{
    /* Through proxy_code_read: a file's own pages (VMM_VMA_DIRECT) are
     * read from the file, not faulted into hvrun's view. */
    uint8_t buf[4096];
    while (len > 0) {
        size_t n = len < sizeof(buf) ? len : sizeof(buf);
        if (!proxy_code_read(p, gva, buf, n))
            return false;
        *h = fnv1a(*h, buf, n);
        gva += n;
        len -= n;
    }
    return true;
}

/* A running hash over one function's guest bytes, so that its sites,
 * which come in order, cost one pass over the function. */
struct func_hash {
    gva_t func, upto;
    uint64_t h;
    /* A fresh text mapped from the run's image of its back edges
     * (progress.c): its bytes are the file's but for back edges, which
     * the image leaves alone where they meet a site of ours, so a
     * function there is as the file has it for our sites (0 0: none). */
    gva_t image_lo, image_hi;
};

static bool site_intact(const struct proxy_process *p, struct func_hash *fh,
                        gva_t func, gva_t site_end, uint64_t want)
{
    if (fh->func != func || fh->upto > site_end) {
        *fh = (struct func_hash){func, func, FNV_INIT, fh->image_lo,
                                 fh->image_hi};
    }
    if (func >= fh->image_lo && site_end <= fh->image_hi) {
        fh->func = 0; /* not a hash of the bytes there */
        return true;
    }
    /* Pages that are still their file's (VMM_VMA_DIRECT) hold the bytes
     * the hash was taken of: not read (hvrun's reads there would give
     * its view host PTEs to shoot down when the process goes). */
    if (vmm_as_range_direct(p->as, func, site_end - func)) {
        *fh = (struct func_hash){func, site_end, want, fh->image_lo,
                                 fh->image_hi};
        return true;
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
    case PROXY_SITE_IDCALL:
        return false; /* a stub or the file's bytes, never a trap */
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
#define STUB_BYTES_SIGACTION 192 /* rt_sigaction's stub: 184 */
#define STUB_REACH ((1LL << 31) - 4 * (int64_t)VMM_PAGE_SIZE)

static bool inline_allowed(const struct proxy_process *p)
{
    return p->cfg->rdtsc_inline && p->det->cfg.virtualize_time &&
           !tsc_faults(p) &&
           !(p->cpuid_patched && p->cpuid_patched->no_inline);
}

/* A CPUID stub gives the host's leaf with the model's APIC ids, which is
 * what cpuid_topology answers, or under cpuid_table the VM's own answer
 * (build_cpuid_table_stub); the fixed model (--cpuid-rewrite) traps. */
static bool cpuid_inline_allowed(const struct proxy_process *p)
{
    return (p->cfg->cpuid_topology || p->cfg->cpuid_table) &&
           !p->cfg->cpuid_rewrite;
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
    /* From the page store: what the stubs and the [vvar] pointer make of
     * it is the same page in every process of the run (vmm/page_store.c). */
    if (vmm_as_map_stored(p->as, gva, PROT_READ | PROT_EXEC, VMM_VMA_SPECIAL,
                          STUB_PAGE_NAME) < 0 &&
        vmm_as_map(p->as, gva, VMM_PAGE_SIZE, PROT_READ | PROT_EXEC,
                   VMM_VMA_SPECIAL, STUB_PAGE_NAME) < 0)
        return NULL;
    uint64_t vvar = p->mm.vvar_gva; /* 0 until the vDSO is mapped */
    (void)proxy_code_poke(p, gva, &vvar, sizeof(vvar));
    struct stub_page *pg = &s->pages[s->nr_pages++];
    *pg = (struct stub_page){gva, STUB_FIRST};
    if (s->recording)
        memo_note_new_page(s->recording, gva);
    return pg;
}

/* Room for one stub within reach of site: a page's next bytes. */
static gva_t stub_room(struct proxy_process *p, gva_t site, uint32_t size)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    struct stub_page *pg = NULL;
    for (size_t i = 0; i < s->nr_pages && !pg; i++)
        if (s->pages[i].used + size <= VMM_PAGE_SIZE &&
            in_reach(s->pages[i].gva, site) && in_stub_page(p, s->pages[i].gva))
            pg = &s->pages[i];
    if (!pg && !(pg = new_stub_page(p, site)))
        return 0;
    gva_t at = pg->gva + pg->used;
    pg->used += size;
    return at;
}

struct emitter {
    uint8_t b[STUB_BYTES_SIGACTION];
    size_t n;
    gva_t at; /* where b[0] will be */
    bool too_far; /* a short branch aimed out of rel8's reach */
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
    long rel = (long)e->n - (long)(rel8_at + 1);
    e->too_far |= rel < -128 || rel > 127;
    e->b[rel8_at] = (uint8_t)(int8_t)rel;
}

/* mov rdx, [rip + page's first word] (the [vvar] address). */
static void put_load_vvar(struct emitter *e, gva_t page)
{
    static const uint8_t mov_rdx_rip[3] = {0x48, 0x8b, 0x15};
    put(e, mov_rdx_rip, 3);
    put_rel32(e, page);
}

/*
 * The span's bytes [from, to) (offsets from its first byte, whole
 * instructions) as the file had them, each RIP-relative displacement
 * among them moved so that it names the same address from the stub.
 * False when one does not reach from there.
 */
static bool put_moved(struct emitter *e, const struct patched_site *ps,
                      size_t from, size_t to)
{
    size_t part_at = e->n;
    gva_t span_gva = ps->gva - ps->pre;
    put(e, ps->orig + from, to - from);
    for (int i = 0; i < MAX_RIP_FIXUPS && ps->rip_disp[i]; i++) {
        if (ps->rip_disp[i] < from || ps->rip_disp[i] >= to)
            continue;
        int32_t disp;
        uint8_t *at = e->b + part_at + (ps->rip_disp[i] - from);
        memcpy(&disp, at, 4);
        gva_t target = span_gva + ps->rip_end[i] + (gva_t)(int64_t)disp;
        gva_t next = e->at + part_at + (ps->rip_end[i] - from);
        int64_t moved = (int64_t)(target - next);
        if (moved != (int32_t)moved)
            return false;
        disp = (int32_t)moved;
        memcpy(at, &disp, 4);
    }
    return true;
}

/* A backward span's instructions before the site (none for the others). */
static bool put_head(struct emitter *e, const struct patched_site *ps)
{
    return put_moved(e, ps, 0, ps->pre);
}

/* The span's instructions after the site, then jmp site+span. */
static bool put_tail(struct emitter *e, const struct patched_site *ps)
{
    size_t site_at = ps->pre;
    if (!put_moved(e, ps, site_at + ps->len, site_at + ps->span))
        return false;
    static const uint8_t jmp = 0xe9;
    put(e, &jmp, 1);
    put_rel32(e, ps->gva + ps->span);
    return true;
}

/*
 * The CPUID stub of ps at e->at: the host's CPUID run in place, then the
 * APIC ids of the leaf made the model's as vmm_cpu_model_apic_ids does
 * for a trapped one (keep the two alike), the flags and the red zone kept:
 *     a backward span's instructions before the CPUID (the leaf's mov)
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
    if (!put_head(e, ps))
        return false;
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
 * The CPUID stub of ps at e->at under a backend whose CPUID exits to the
 * hypervisor (proxy_config.cpuid_table): the VM's own answer looked up in
 * [vvar]'s table (vdso_abi.h, gk_cpuid_answer; filled from
 * vmm_host_cpuid_answers, what CPUID returned in a probe VM), CPUID run
 * only for a leaf or subleaf not there or where [vvar] is not mapped:
 *     a backward span's instructions before the CPUID (the leaf's mov)
 *     lea rsp, [rsp-128]; pushfq; push rsi
 *     mov rsi, [rip+page's first word]; test rsi, rsi; jz miss
 *     cmp dword [rsi], low 32 bits of GK_VDSO_MAGIC; jne miss
 *     lea rsi, [rsi+GK_VVAR_CPUID_OFF]
 * loop: test byte [rsi+flags], GK_CPUID_END; jnz miss
 *     cmp eax, [rsi]; jne next
 *     test byte [rsi+flags], GK_CPUID_INDEXED; jz hit
 *     cmp ecx, [rsi+4]; je hit
 * next: add rsi, 32; jmp loop
 * hit: mov eax, [rsi+16]; mov ebx, [rsi+20]; mov ecx, [rsi+24];
 *     mov edx, [rsi+28]; jmp done
 * miss: cpuid
 * done: pop rsi; popfq; lea rsp, [rsp+128]
 *     the span's instructions after the CPUID; jmp site+span
 * The answers are the instruction's, as the VM gives them: no exit, and
 * nothing the guest sees changes. False when it does not fit a stub.
 */
static bool build_cpuid_table_stub(struct emitter *e, gva_t page,
                                   const struct patched_site *ps)
{
    static const uint8_t enter[7] = {0x48, 0x8d, 0x64, 0x24, 0x80,
                                     0x9c, 0x56},
                         load[3] = {0x48, 0x8b, 0x35}, /* mov rsi, [rip] */
                         test_rsi[3] = {0x48, 0x85, 0xf6},
                         cmp_magic[2] = {0x81, 0x3e},
                         to_table[7] = {0x48, 0x8d, 0xb6,
                                        GK_VVAR_CPUID_OFF & 0xff,
                                        (GK_VVAR_CPUID_OFF >> 8) & 0xff, 0,
                                        0},
                         test_end[4] = {0xf6, 0x46, GK_CPUID_FLAGS,
                                        GK_CPUID_END},
                         cmp_leaf[2] = {0x3b, 0x06},
                         test_indexed[4] = {0xf6, 0x46, GK_CPUID_FLAGS,
                                            GK_CPUID_INDEXED},
                         cmp_subleaf[3] = {0x3b, 0x4e, 0x04},
                         next[4] = {0x48, 0x83, 0xc6, GK_CPUID_ANSWER_SIZE},
                         hit[12] = {0x8b, 0x46, GK_CPUID_EAX,
                                    0x8b, 0x5e, GK_CPUID_EAX + 4,
                                    0x8b, 0x4e, GK_CPUID_EAX + 8,
                                    0x8b, 0x56, GK_CPUID_EAX + 12},
                         cpuid[2] = {0x0f, 0xa2},
                         leave[10] = {0x5e, 0x9d, 0x48, 0x8d, 0xa4, 0x24,
                                      0x80, 0x00, 0x00, 0x00};
    uint32_t magic = (uint32_t)GK_VDSO_MAGIC;
    size_t to_miss[3], to_hit[2];
    if (!put_head(e, ps))
        return false;
    put(e, enter, sizeof(enter));
    put(e, load, sizeof(load));
    put_rel32(e, page);
    put(e, test_rsi, sizeof(test_rsi));
    to_miss[0] = put_jcc8(e, 0x74); /* jz */
    put(e, cmp_magic, sizeof(cmp_magic));
    put(e, &magic, 4);
    to_miss[1] = put_jcc8(e, 0x75); /* jne */
    put(e, to_table, sizeof(to_table));
    size_t loop = e->n;
    put(e, test_end, sizeof(test_end));
    to_miss[2] = put_jcc8(e, 0x75); /* jnz */
    put(e, cmp_leaf, sizeof(cmp_leaf));
    size_t to_next = put_jcc8(e, 0x75); /* jne */
    put(e, test_indexed, sizeof(test_indexed));
    to_hit[0] = put_jcc8(e, 0x74); /* jz */
    put(e, cmp_subleaf, sizeof(cmp_subleaf));
    to_hit[1] = put_jcc8(e, 0x74); /* je */
    aim(e, to_next);
    put(e, next, sizeof(next));
    uint8_t back[2] = {0xeb, (uint8_t)(int8_t)((long)loop - (long)(e->n + 2))};
    put(e, back, 2);
    aim(e, to_hit[0]);
    aim(e, to_hit[1]);
    put(e, hit, sizeof(hit));
    size_t to_done = put_jcc8(e, 0xeb);
    for (int i = 0; i < 3; i++)
        aim(e, to_miss[i]);
    put(e, cpuid, sizeof(cpuid));
    aim(e, to_done);
    put(e, leave, sizeof(leave));
    return put_tail(e, ps) && e->n <= STUB_BYTES;
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

/* ---- identity calls answered in the guest ----------------------------------
 *
 * glibc's getpid, getppid, get[e]uid and get[e]gid are `mov $nr, %eax;
 * syscall; ret`, and a shell makes seven such calls at each start: each a
 * whole exit for an answer hvrun knows before the thread runs. The span
 * `mov $nr, %eax; syscall` (cpuid_sites.c: nothing lands on the syscall)
 * becomes a jmp to a stub that reads the answer hvrun put in [vvar] for
 * the thread about to run (vdso.c: proxy_vdso_enter, at every run of a
 * thread, so a fork, an exec, a setuid, a reparenting or another thread
 * of the same memory is seen at once):
 *     mov rcx, [rip+vvar_slot]; jrcxz call
 *     mov rcx, [rcx+ids+8*index]; jrcxz call
 *     mov eax, ecx; jmp site+span
 * call: mov $nr, %eax; syscall; jmp site+span
 * Only rax and rcx change, which the syscall clobbers too, and no flag
 * (mov, jrcxz and jmp leave them). An answer is 0 (the call is made, so
 * a seccomp filter sees it) while the thread has a seccomp filter or
 * dispatches its syscalls to user space; the call then comes from the
 * stub (proxy_cpuid_call_site names the site for a dispatch range). A
 * process traced by another guest has the file's code back
 * (proxy_cpuid_traced: a tracer may single-step it). Under --gdb the
 * stubs stay: a debugged run must be the run it debugs, event for event
 * (gdb's `catch syscall` does not see these calls, as it sees no vDSO
 * clock read).
 */
#define IDCALL_CALL_RET 29 /* the fallback's syscall ends there */

static bool build_idcall_stub(struct emitter *e, gva_t page,
                              const struct patched_site *ps)
{
    static const uint8_t mov_rcx_rip[3] = {0x48, 0x8b, 0x0d},
                         mov_rcx_id[3] = {0x48, 0x8b, 0x49},
                         eax_ecx[2] = {0x89, 0xc8};
    int index = idcall_index(ps->orig[1]);
    size_t ids = offsetof(struct gk_vvar, ids);
    if (index < 0 || ps->pre != 5 || ps->span != 2 ||
        ids + 8 * (size_t)index > 127)
        return false;
    put(e, mov_rcx_rip, 3);
    put_rel32(e, page);
    size_t no_vvar = put_jcc8(e, 0xe3); /* jrcxz */
    put(e, mov_rcx_id, 3);
    uint8_t disp = (uint8_t)(ids + 8 * (size_t)index);
    put(e, &disp, 1);
    size_t no_answer = put_jcc8(e, 0xe3);
    put(e, eax_ecx, 2);
    if (!put_tail(e, ps))
        return false;
    aim(e, no_vvar);
    aim(e, no_answer);
    put(e, ps->orig, 7); /* mov $nr, %eax; syscall */
    _Static_assert(IDCALL_CALL_RET == 7 + 2 + 4 + 2 + 2 + 5 + 7,
                   "the fallback's offset");
    return e->n == IDCALL_CALL_RET && put_tail(e, ps);
}

/* ---- signal calls answered in the guest ------------------------------------
 *
 * glibc's pthread_sigmask (sigprocmask) and sigaction end in `mov $14
 * (or $13), %eax; syscall` as the identity calls do, and a shell makes
 * nine of them a process, python's start some 1,300 (and ld.so's
 * set_tid_address and glibc's rseq registration, one a program: below).
 * The stubs answer from the thread's signal state that hvrun puts in the
 * call count's page before every run (vdso.c: publish_signals;
 * vdso_abi.h: gk_sigstate, whose address [vvar]'s sig_va gives, 0 where
 * the call must be made as for ids) and takes back right after it
 * (proxy_vdso_signals_back: the mask and the marked actions):
 *   rt_sigprocmask(how, set, oset, 8): the new mask (SIGKILL and SIGSTOP
 *     never blocked) unless it unblocks a signal pending for the thread:
 *     then, or for a bad how or size, the call is made (hvrun delivers
 *     at its return, as Linux does);
 *   rt_sigaction(sig, act, oact, 8): the old action copied out of the
 *     table and the new one into it, marked in acts_set for hvrun to take
 *     back at the exit; the call for a bad sig or size, for SIGKILL or
 *     SIGSTOP, where the signal is pending (a new SIG_IGN discards it:
 *     hvrun does that) and where act and oact overlap (Linux reads act
 *     before it writes oact; the stub writes oact first).
 * Only rax, rcx and r11 change, as the syscall changes them, and the
 * flags, which glibc's wrappers (every compiler's inline asm on x86)
 * take as clobbered. A fault on the guest's pointers (set, oset, oact)
 * does not become the guest's signal: hvrun moves the thread to the
 * stub's call (proxy_cpuid_sig_stub_fault), which returns EFAULT as
 * Linux would (a new action half copied into the page is not marked, and
 * the next run's page is written afresh). A host interruption inside a
 * stub before its first store into the state starts it again
 * (proxy_cpuid_sig_stub_interrupted), so what was pending when it
 * checked is what is pending when it stores.
 */
#define SIGMASK_STORE 87     /* the mask stub's store of the new mask */
#define SIGMASK_CALL 102     /* its fallback: mov $14, %eax; syscall */
#define SIGACTION_CALL 26     /* the action stub's fallback, its jmp back */
#define SIGACTION_BODY 38     /* its tests and copies */
#define SIGACTION_STORE 134   /* its first store to the table */

/* mov rcx, [rip+page] ([vvar]); jrcxz call; mov rcx, [rcx+sig_va];
 * jrcxz call: the thread's state in rcx, or the call. */
static void put_thread_state(struct emitter *e, gva_t page, size_t to_call[2])
{
    static const uint8_t mov_rcx_rip[3] = {0x48, 0x8b, 0x0d},
                         mov_rcx_disp32[3] = {0x48, 0x8b, 0x89};
    uint32_t sig_va = offsetof(struct gk_vvar, sig_va);
    put(e, mov_rcx_rip, 3);
    put_rel32(e, page);
    to_call[0] = put_jcc8(e, 0xe3);
    put(e, mov_rcx_disp32, 3);
    put(e, &sig_va, 4);
    to_call[1] = put_jcc8(e, 0xe3);
}

/* The state, then cmp r10, 8; jne call: a sigset's size checked. */
static void put_sig_prologue(struct emitter *e, gva_t page, size_t to_call[3])
{
    static const uint8_t cmp_r10_8[4] = {0x49, 0x83, 0xfa, 0x08};
    put_thread_state(e, page, to_call);
    put(e, cmp_r10_8, 4);
    to_call[2] = put_jcc8(e, 0x75);
}

/* A short conditional branch back to offset `to` of the stub. */
static void put_back_jcc8(struct emitter *e, uint8_t opcode, size_t to)
{
    size_t at = put_jcc8(e, opcode);
    long rel = (long)to - (long)e->n;
    e->too_far |= rel < -128;
    e->b[at] = (uint8_t)(int8_t)rel;
}

/* The fallback (the site's own mov and syscall) and the jmp back. */
static bool put_sig_call(struct emitter *e, const struct patched_site *ps,
                         const size_t *to_call, size_t n, size_t call_at)
{
    if (e->n != call_at)
        return false;
    for (size_t i = 0; i < n; i++)
        aim(e, to_call[i]);
    put(e, ps->orig, 7);
    return put_tail(e, ps);
}

static bool build_sigmask_stub(struct emitter *e, gva_t page,
                               const struct patched_site *ps)
{
    /* gk_sigstate: blocked at [rcx], pending at [rcx+8] */
    static const uint8_t old_and_set[8] = {
        0x48, 0x8b, 0x01,             /* mov rax, [rcx] */
        0x48, 0x85, 0xf6,             /* test rsi, rsi */
        0x74, 0x00},                  /* jz noset */
        how_ok[3] = {0x83, 0xff, 0x02}, /* cmp edi, 2 (then ja call) */
        new_mask[40] = {
        0x4c, 0x8b, 0x1e,             /* mov r11, [rsi]: may fault */
        0x83, 0xff, 0x01,             /* cmp edi, 1 */
        0x72, 0x04, 0x74, 0x07,       /* jb block; je unblock */
        0xeb, 0x0b,                   /* jmp done (SIG_SETMASK) */
        0x49, 0x09, 0xc3, 0xeb, 0x06, /* block: or r11, rax; jmp done */
        0x49, 0xf7, 0xd3,             /* unblock: not r11 */
        0x49, 0x21, 0xc3,             /* and r11, rax */
        0x49, 0x81, 0xe3, 0xff, 0xfe, 0xfb, 0xff, /* done: kill, stop */
        0x49, 0xf7, 0xd3,             /* not r11 */
        0x4c, 0x85, 0x59, 0x08,       /* test [rcx+8], r11 */
        0x49, 0xf7, 0xd3},            /* not r11 (jnz call) */
        write_old[13] = {
        0x48, 0x85, 0xd2, 0x74, 0x03, /* wr: test rdx, rdx; jz store */
        0x48, 0x89, 0x02,             /* mov [rdx], rax: may fault */
        0x4c, 0x89, 0x19,             /* store: mov [rcx], r11 */
        0x31, 0xc0},                  /* xor eax, eax */
        noset[5] = {0x49, 0x89, 0xc3, 0xeb, 0x00}; /* mov r11, rax; jmp wr */
    size_t to_call[5];
    put_sig_prologue(e, page, to_call);
    put(e, old_and_set, 8);
    size_t to_noset = e->n - 1;
    put(e, how_ok, 3);
    to_call[3] = put_jcc8(e, 0x77);
    put(e, new_mask, 40);
    to_call[4] = put_jcc8(e, 0x75);
    size_t wr = e->n;
    put(e, write_old, 13);
    if (e->n != SIGMASK_STORE + 5 || !put_tail(e, ps))
        return false;
    aim(e, to_noset);
    put(e, noset, 5);
    e->b[e->n - 1] = (uint8_t)(int8_t)((long)wr - (long)e->n);
    return put_sig_call(e, ps, to_call, 5, SIGMASK_CALL) && !e->too_far;
}

static bool build_sigaction_stub(struct emitter *e, gva_t page,
                                 const struct patched_site *ps)
{
    static const uint8_t sig_ok[6] = {0x8d, 0x47, 0xff, /* lea eax, [rdi-1] */
                                      0x83, 0xf8, 0x3f}, /* cmp eax, 63 */
        apart[14] = {0x49, 0x89, 0xf3,             /* mov r11, rsi */
                     0x49, 0x29, 0xd3,             /* sub r11, rdx */
                     0x49, 0x83, 0xc3, 0x1f,       /* add r11, 31 */
                     0x49, 0x83, 0xfb, 0x3e},      /* cmp r11, 62 (jbe) */
        a_set[3] = {0x48, 0x85, 0xf6},             /* test rsi, rsi */
        not_kill[3] = {0x83, 0xf8, SIGKILL - 1},   /* cmp eax, 8 (je) */
        not_stop[3] = {0x83, 0xf8, SIGSTOP - 1},   /* cmp eax, 18 (je) */
        not_pending[5] = {0x48, 0x0f, 0xa3, 0x41,  /* bt [rcx+pending_any], */
                          GK_SIGSTATE_PENDING_ANY}, /* rax (jc) */
        entry[9] = {0xc1, 0xe0, 0x05,              /* query: shl eax, 5 */
                    0x48, 0x01, 0xc8,              /* add rax, rcx */
                    0x48, 0x85, 0xd2},             /* test rdx, rdx (jz) */
        old_out[31] = {                            /* may fault */
        0x4c, 0x8b, 0x58, GK_SIGSTATE_ACTS, 0x4c, 0x89, 0x1a,
        0x4c, 0x8b, 0x58, GK_SIGSTATE_ACTS + 8, 0x4c, 0x89, 0x5a, 0x08,
        0x4c, 0x8b, 0x58, GK_SIGSTATE_ACTS + 16, 0x4c, 0x89, 0x5a, 0x10,
        0x4c, 0x8b, 0x58, GK_SIGSTATE_ACTS + 24, 0x4c, 0x89, 0x5a, 0x18},
        new_in[31] = {                             /* may fault */
        0x4c, 0x8b, 0x1e, 0x4c, 0x89, 0x58, GK_SIGSTATE_ACTS,
        0x4c, 0x8b, 0x5e, 0x08, 0x4c, 0x89, 0x58, GK_SIGSTATE_ACTS + 8,
        0x4c, 0x8b, 0x5e, 0x10, 0x4c, 0x89, 0x58, GK_SIGSTATE_ACTS + 16,
        0x4c, 0x8b, 0x5e, 0x18, 0x4c, 0x89, 0x58, GK_SIGSTATE_ACTS + 24},
        marked[17] = {
        0x48, 0x81, 0x60, GK_SIGSTATE_ACTS + 24,   /* and [rax+mask], */
        0xff, 0xfe, 0xfb, 0xff,                    /* ~(KILL | STOP) */
        0x44, 0x8d, 0x5f, 0xff,                    /* lea r11d, [rdi-1] */
        0x4c, 0x0f, 0xab, 0x59,                    /* bts [rcx+acts_set], */
        GK_SIGSTATE_ACTS_SET},                     /* r11 */
        done[2] = {0x31, 0xc0};                    /* xor eax, eax */
    size_t to_call[3];
    put_sig_prologue(e, page, to_call);
    /* the call here, within a short branch of every test */
    size_t to_body = put_jcc8(e, 0xeb);
    if (!put_sig_call(e, ps, to_call, 3, SIGACTION_CALL))
        return false;
    aim(e, to_body);
    if (e->n != SIGACTION_BODY)
        return false;
    put(e, sig_ok, 6);
    put_back_jcc8(e, 0x77, SIGACTION_CALL);
    put(e, apart, 14);
    put_back_jcc8(e, 0x76, SIGACTION_CALL);
    put(e, a_set, 3);
    size_t to_query = put_jcc8(e, 0x74);
    put(e, not_kill, 3);
    put_back_jcc8(e, 0x74, SIGACTION_CALL);
    put(e, not_stop, 3);
    put_back_jcc8(e, 0x74, SIGACTION_CALL);
    put(e, not_pending, 5);
    put_back_jcc8(e, 0x72, SIGACTION_CALL);
    aim(e, to_query);
    put(e, entry, 9);
    size_t to_new = put_jcc8(e, 0x74);
    put(e, old_out, 31);
    aim(e, to_new);
    put(e, a_set, 3);
    size_t to_done = put_jcc8(e, 0x74);
    if (e->n + 3 != SIGACTION_STORE)
        return false;
    put(e, new_in, 31);
    put(e, marked, 17);
    aim(e, to_done);
    put(e, done, 2);
    return put_tail(e, ps) && !e->too_far;
}

/*
 * set_tid_address(tidptr), once at every program's start (ld.so): the
 * address stored in the thread's state and marked (hvrun takes it back
 * as clear_child_tid), the thread's id answered; nothing of the guest's
 * is read or written, so nothing faults and nothing need start over.
 */
#define TIDADDR_CALL 38

static bool build_tidaddr_stub(struct emitter *e, gva_t page,
                               const struct patched_site *ps)
{
    static const uint8_t taken[15] = {
        0x48, 0x89, 0x79, GK_SIGSTATE_TID_ADDRESS,  /* mov [rcx+a], rdi */
        0x48, 0xc7, 0x41, GK_SIGSTATE_TID_ADDRESS_SET, 1, 0, 0, 0,
                                                    /* mov [rcx+set], 1 */
        0x8b, 0x41, GK_SIGSTATE_TID};               /* mov eax, [rcx+tid] */
    size_t to_call[2];
    put_thread_state(e, page, to_call);
    put(e, taken, 15);
    return put_tail(e, ps) && put_sig_call(e, ps, to_call, 2, TIDADDR_CALL) &&
           !e->too_far;
}

/*
 * rseq(area, len, flags, sig), once at every thread's start (glibc's
 * registration): where the thread has none, flags are 0, len is 32 and
 * the area 32-aligned, the stub writes cpu_id_start and cpu_id (0: the
 * one vCPU, as kernel/rseq.c's write_cpu; a fault there goes to the
 * call) and marks the area and signature for hvrun to take back as the
 * thread's registration. Anything else is the call.
 */
#define RSEQ_CALL 70

static bool build_rseq_stub(struct emitter *e, gva_t page,
                            const struct patched_site *ps)
{
    static const uint8_t flags_0[2] = {0x85, 0xd2}, /* test edx, edx */
        unregistered[5] = {0x48, 0x83, 0x79, GK_SIGSTATE_RSEQ_STATE, 0},
                                                    /* cmp [rcx+state], 0 */
        len_32[3] = {0x83, 0xfe, 0x20},             /* cmp esi, 32 */
        aligned[4] = {0x40, 0xf6, 0xc7, 0x1f},      /* test dil, 31 */
        taken[25] = {
        0x48, 0xc7, 0x07, 0, 0, 0, 0,               /* mov [rdi], 0: faults */
        0x48, 0x89, 0x79, GK_SIGSTATE_RSEQ_AREA,    /* mov [rcx+area], rdi */
        0x4c, 0x89, 0x51, GK_SIGSTATE_RSEQ_SIG,     /* mov [rcx+sig], r10 */
        0x48, 0xc7, 0x41, GK_SIGSTATE_RSEQ_STATE, 1, 0, 0, 0,
                                                    /* mov [rcx+state], 1 */
        0x31, 0xc0};                                /* xor eax, eax */
    size_t to_call[6];
    put_thread_state(e, page, to_call);
    put(e, flags_0, 2);
    to_call[2] = put_jcc8(e, 0x75);
    put(e, unregistered, 5);
    to_call[3] = put_jcc8(e, 0x75);
    put(e, len_32, 3);
    to_call[4] = put_jcc8(e, 0x75);
    put(e, aligned, 4);
    to_call[5] = put_jcc8(e, 0x75);
    put(e, taken, 25);
    return put_tail(e, ps) && put_sig_call(e, ps, to_call, 6, RSEQ_CALL) &&
           !e->too_far;
}

/* The call a stub of ps makes (its `mov $nr, %eax`). */
static uint32_t stub_call_nr(const struct patched_site *ps)
{
    return ps->orig[1] | (uint32_t)ps->orig[2] << 8;
}

/* The call a stub that may fault makes its fallback for (13, 14, 334),
 * or 0. */
static int sig_call_nr(const struct patched_site *ps)
{
    if (ps->kind != PROXY_SITE_IDCALL || ps->how != PATCH_JMP)
        return 0;
    uint32_t nr = stub_call_nr(ps);
    return nr == 13 || nr == 14 || nr == 334 ? (int)nr : 0;
}

/* Where a stub's fallback syscall returns to (its offset). */
static size_t stub_call_ret(const struct patched_site *ps)
{
    switch (stub_call_nr(ps)) {
    case 13: return SIGACTION_CALL + 7;
    case 14: return SIGMASK_CALL + 7;
    case 218: return TIDADDR_CALL + 7;
    case 334: return RSEQ_CALL + 7;
    default: return IDCALL_CALL_RET;
    }
}

uint64_t proxy_cpuid_call_site(const struct proxy_process *p,
                               uint64_t ret_ip)
{
    const struct proxy_cpuid_patched *s = p->cpuid_patched;
    for (size_t i = 0; s && i < s->nr; i++)
        if (s->v[i].kind == PROXY_SITE_IDCALL && s->v[i].how == PATCH_JMP &&
            s->v[i].stub + stub_call_ret(&s->v[i]) == ret_ip)
            return s->v[i].gva + s->v[i].span;
    return ret_ip;
}

/* Whether offset `at` of a signal call's stub (nr 13 or 14) may take the
 * guest's pointers (fault: where a fault goes to the call), or lies
 * before its first store into the state with the call not yet made
 * (!fault: where the stub may start over). */
static bool sig_stub_part(int nr, size_t at, bool fault)
{
    if (nr == 334) /* nothing to start over: its marks come last */
        return fault && at < RSEQ_CALL;
    if (nr == 14)
        return fault ? at < SIGMASK_CALL : at <= SIGMASK_STORE;
    if (fault)
        return at >= SIGACTION_BODY && at < STUB_BYTES_SIGACTION;
    return at < SIGACTION_CALL + 7 ||
           (at >= SIGACTION_BODY && at <= SIGACTION_STORE);
}

/* The signal call's stub rip is in, at a part sig_stub_part names. */
static const struct patched_site *sig_stub_at(const struct proxy_process *p,
                                              uint64_t rip, bool fault)
{
    const struct proxy_cpuid_patched *s = p->cpuid_patched;
    for (size_t i = 0; s && i < s->nr; i++) {
        int nr = sig_call_nr(&s->v[i]);
        if (nr && rip >= s->v[i].stub &&
            rip < s->v[i].stub + STUB_BYTES_SIGACTION &&
            sig_stub_part(nr, (size_t)(rip - s->v[i].stub), fault))
            return &s->v[i];
    }
    return NULL;
}

bool proxy_cpuid_sig_stub_fault(struct proxy_process *p)
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    const struct patched_site *ps = sig_stub_at(p, r->rip, true);
    if (!ps)
        return false;
    uint32_t nr = stub_call_nr(ps);
    r->rip = ps->stub + (nr == 13    ? SIGACTION_CALL
                         : nr == 14  ? SIGMASK_CALL
                                     : RSEQ_CALL);
    return true;
}

void proxy_cpuid_sig_stub_interrupted(struct proxy_process *p)
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    const struct patched_site *ps = sig_stub_at(p, r->rip, false);
    if (ps)
        r->rip = ps->stub;
}

/* The span's bytes when it jumps to stub: jmp rel32 at its first byte
 * (at), then NOPs (len bytes in all). */
static void jmp_bytes(uint8_t *out, gva_t at, size_t len, gva_t stub)
{
    int32_t rel = (int32_t)(int64_t)(stub - (at + 5));
    out[0] = 0xe9;
    memcpy(out + 1, &rel, 4);
    memset(out + 5, 0x90, len - 5);
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
    /* rt_sigaction's stub is the one longer than STUB_BYTES */
    uint8_t nr[2] = {0, 0};
    uint32_t size = STUB_BYTES;
    if (ps->kind == PROXY_SITE_IDCALL && ps->pre &&
        proxy_code_read(p, ps->gva - ps->pre + 1, nr, 2) && nr[0] == 13 &&
        nr[1] == 0)
        size = STUB_BYTES_SIGACTION;
    return stub_room(p, ps->gva, size);
}

/* The span of ps as a jmp to its stub (built at ps->stub): false (the
 * site's bytes unchanged) when the stub could not be built. */
static bool patch_inline(struct proxy_process *p, struct patched_site *ps)
{
    gva_t span_gva = ps->gva - ps->pre;
    size_t span_len = (size_t)ps->pre + ps->span;
    if (!proxy_code_read(p, span_gva, ps->orig, span_len))
        return false;
    gva_t page_of = ps->stub & VMM_PAGE_MASK;
    struct emitter e = {.at = ps->stub};
    if (ps->kind == PROXY_SITE_CPUID) {
        bool built = p->cfg->cpuid_table
                         ? build_cpuid_table_stub(&e, page_of, ps)
                         : build_cpuid_stub(&e, ps);
        if (!built || e.too_far ||
            !proxy_code_poke(p, ps->stub, e.b, e.n))
            return false;
    } else if (ps->kind == PROXY_SITE_IDCALL) {
        uint32_t nr = stub_call_nr(ps);
        bool built = nr == 14    ? build_sigmask_stub(&e, page_of, ps)
                     : nr == 13  ? build_sigaction_stub(&e, page_of, ps)
                     : nr == 218 ? build_tidaddr_stub(&e, page_of, ps)
                     : nr == 334 ? build_rseq_stub(&e, page_of, ps)
                                 : build_idcall_stub(&e, page_of, ps);
        if (!built || e.too_far || !proxy_code_poke(p, ps->stub, e.b, e.n))
            return false;
    } else {
        size_t ud2_at = build_stub(&e, page_of, ps);
        struct patched_site trap = {ps->stub + ud2_at, 0, 0, 0, ps->kind,
                                    ps->len, ps->len, PATCH_STUB_TRAP,
                                    {0}, 0, {0}, {0}, 0};
        if (!ud2_at || e.too_far || remember(p, &trap) < 0 ||
            !proxy_code_poke(p, ps->stub, e.b, e.n))
            return false;
    }
    uint8_t code[MAX_SPAN];
    jmp_bytes(code, span_gva, span_len, ps->stub);
    ps->how = PATCH_JMP;
    if (remember(p, ps) < 0)
        return false;
    /* A fresh copy (its backing read-only again after a refill: the poke
     * writes it all the same). */
    if (vmm_as_poke(p->as, span_gva, code, span_len) < 0) {
        ps->how = PATCH_TRAP; /* the bytes are the file's still */
        return false;
    }
    return true;
}

/* A PATCH_JMP site back to the trap: the span's instructions as the file
 * had them, the site's UD2 (RDTSCP: and its third byte). False when its
 * bytes are not the jmp hvrun wrote (the guest changed them). */
/* Whether a stubbed site whose jmp can no longer stand goes back to the
 * file's bytes (the instruction as it was: an identity call, a CPUID
 * whose trap this run does not answer, as under kvm's table, where the
 * VM answers the instruction itself) rather than to a trap. */
static bool back_as_was(const struct proxy_process *p, uint8_t kind)
{
    return kind == PROXY_SITE_IDCALL ||
           (kind == PROXY_SITE_CPUID && !kind_rewritten(p, kind));
}

static bool demote(struct proxy_process *p, struct patched_site *ps)
{
    uint8_t now[MAX_SPAN], code[MAX_SPAN];
    gva_t span_gva = ps->gva - ps->pre;
    size_t span_len = (size_t)ps->pre + ps->span;
    if (!proxy_code_read(p, span_gva, now, span_len) || now[0] != 0xe9)
        return false;
    memcpy(code, ps->orig, span_len);
    bool as_was = back_as_was(p, ps->kind);
    if (!as_was)
        memcpy(code + ps->pre, insn_ud2, 2);
    if (!proxy_code_poke(p, span_gva, code, span_len))
        return false;
    ps->how = as_was ? PATCH_NONE : PATCH_TRAP;
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
            s->v[i].kind != PROXY_SITE_IDCALL &&
            proxy_code_maps_file_at(p, s->v[i].gva, s->v[i].dev, s->v[i].ino,
                         s->v[i].file_off))
            (void)demote(p, &s->v[i]);
}

void proxy_cpuid_traced(struct proxy_process *p)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    if (!s && !(s = p->cpuid_patched = new_patched()))
        return;
    s->no_idcall = true;
    for (size_t i = 0; i < s->nr; i++)
        if (s->v[i].how == PATCH_JMP && s->v[i].kind == PROXY_SITE_IDCALL &&
            proxy_code_maps_file_at(p, s->v[i].gva, s->v[i].dev, s->v[i].ino,
                                    s->v[i].file_off))
            (void)demote(p, &s->v[i]);
}

/* Whether identity calls are rewritten in p now (cpuid_patch's patch_site). */
static bool idcall_allowed(const struct proxy_process *p)
{
    return !(p->cpuid_patched && p->cpuid_patched->no_idcall) &&
           !(p->threads && p->threads[p->cur].pt.tracer);
}

void proxy_cpuid_vvar_mapped(struct proxy_process *p)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    uint64_t vvar = p->mm.vvar_gva;
    vmm_as_stage_begin(p->as); /* the stub pages stay the store's */
    for (size_t i = 0; s && i < s->nr_pages; i++)
        if (in_stub_page(p, s->pages[i].gva))
            (void)proxy_code_poke(p, s->pages[i].gva, &vvar, sizeof(vvar));
    (void)vmm_as_stage_end(p->as);
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
    bool spanned = fresh && (s->span > s->len || s->pre);
    /* A record that does not fit its own rules (a damaged cache entry)
     * is left alone: the site's hash would not name the bytes patched. */
    if (s->pre > s->file_off - s->func_off || s->len > s->span ||
        (size_t)s->pre + s->span > MAX_SPAN ||
        (s->pre && s->kind != PROXY_SITE_CPUID &&
         s->kind != PROXY_SITE_IDCALL))
        return;
    if ((!kind_rewritten(p, s->kind) && !spanned) || func > site ||
        !proxy_code_maps_file_at(p, func, v->dev, v->ino, s->func_off) ||
        !site_intact(p, fh, func, site + s->span, s->hash))
        return;
    struct patched_site ps = {site, v->dev, v->ino, s->file_off, s->kind,
                              s->len, s->span, PATCH_TRAP, {0}, 0, {0}, {0},
                              s->pre};
    memcpy(ps.rip_disp, s->rip_disp, sizeof(ps.rip_disp));
    memcpy(ps.rip_end, s->rip_end, sizeof(ps.rip_end));
    bool cpuid = s->kind == PROXY_SITE_CPUID,
         idcall = s->kind == PROXY_SITE_IDCALL;
    if (spanned && (ps.stub = stub_for(p, &ps)) &&
        (cpuid ? cpuid_inline_allowed(p)
               : idcall ? idcall_allowed(p) : inline_allowed(p)) &&
        patch_inline(p, &ps)) {
        if (p->totals && cpuid)
            p->totals->cpuid_inline_sites++;
        else if (p->totals && idcall)
            p->totals->idcall_sites++;
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
        fd = openat(p->fs.cwd_fd, v->name, O_RDONLY | O_CLOEXEC);
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
        fs = proxy_cpuid_sites_of(fd);
    if (fd != host_fd)
        close(fd);
    if (!fs || fs->nr == 0)
        return;
    uint64_t flo = v->file_off + (lo - v->start), fhi = flo + (hi - lo);
    struct func_hash fh = {0, 0, 0, 0, 0};
    if (fresh && v->image) /* v: as it was before any site here */
        fh = (struct func_hash){0, 0, 0, v->start, v->end};
    size_t i = 0, n = fs->nr;
    while (i < n && fs->v[i].file_off < flo) /* sites are few: linear */
        i++;
    for (; i < n && fs->v[i].file_off + fs->v[i].len <= fhi; i++)
        patch_site(p, v, &fs->v[i], lo + (fs->v[i].file_off - flo), &fh,
                   fresh);
}

/* ---- a text's rewriting, replayed -----------------------------------------
 *
 * Every process of a run that maps a library's text at the same address,
 * beside the same stub pages, rewrites it to the same result: the same
 * sites remembered, the same stubs, the same pages from the page store.
 * Working it out again (reading each site, building its stub, copying and
 * hashing the pages) was ~14% of hvrun's guest thread in a run of 50 `sh
 * -c true` (docs/PERFORMANCE.md). So a fresh text's first rewriting
 * records what it did, and a later one whose every input is the same
 * does that again directly:
 *  - the inputs: the VMA (its file's identity, size and mtime, its offset,
 *    its image, its flags and range), the range rewritten, every
 *    predicate patch_site asks of the process (allow_bits), the [vvar]
 *    address the stub pages hold, and the stub pages as they are (where,
 *    how full, which stored page each is); and, for each stub page the
 *    first one made, that the free gap it took is the one new_stub_page
 *    takes now;
 *  - what it did: the sites it remembered (none may be there already),
 *    the stub pages after it, the runs of pages its stage's end mapped
 *    from the page store (which only grows, so an offset keeps its
 *    bytes), and its counts for --summary.
 * Only a range inside one direct VMA whose sites' functions and spans lie
 * inside it is recorded (site_intact then trusts the VMA's own bytes, and
 * proxy_code_maps_file_at asks only of it), and only when nothing of its
 * rewriting was a private copy or replaced an earlier record.
 */
#define MEMO_MAX 64   /* a run's libraries' texts, at their addresses */
#define MEMO_PAGES 8  /* stub pages an address space has when recorded */
#define MEMO_COUNTS 5

struct memo_key {
    uint64_t dev, ino, size, mtime_ns, file_off, image_id, image_off;
    gva_t start, end, lo, hi, vvar;
    uint32_t vflags, allow;
};

struct memo_pages {
    struct stub_page page[MEMO_PAGES];
    uint64_t stored_off[MEMO_PAGES];
    size_t n;
};

struct patch_memo {
    struct memo_key key;
    struct memo_pages before;
    gva_t new_pages[MEMO_PAGES]; /* the stub pages it made, in order */
    size_t nr_new;
    struct stub_page after[MEMO_PAGES];
    size_t nr_after;
    struct patched_site *sites;
    size_t nr_sites;
    struct vmm_stored_run *runs;
    size_t nr_runs;
    /* The text's runs before memo_join made them one (what a process that
     * rewrote or replayed the text before the join maps), or NULL. */
    struct vmm_stored_run *pieces;
    size_t nr_pieces;
    uint64_t counts[MEMO_COUNTS];
    bool join_tried; /* memo_join */
};

struct memo_recording {
    struct patch_memo m;
    struct vmm_stored_log log;
    size_t sites_cap;
    uint64_t counts_before[MEMO_COUNTS];
    bool bad, staged;
};

static struct patch_memo memos[MEMO_MAX];
static size_t nr_memos;

static uint32_t allow_bits(const struct proxy_process *p)
{
    return (uint32_t)kind_rewritten(p, PROXY_SITE_CPUID) |
           (uint32_t)kind_rewritten(p, PROXY_SITE_RDPID) << 1 |
           (uint32_t)kind_rewritten(p, PROXY_SITE_RDTSC) << 2 |
           (uint32_t)inline_allowed(p) << 3 |
           (uint32_t)cpuid_inline_allowed(p) << 4 |
           (uint32_t)idcall_allowed(p) << 5 |
           (uint32_t)p->cfg->rdtsc_rewrite << 6 |
           (uint32_t)p->cfg->cpuid_table << 7;
}

/* The one VMA [gva, gva+len) lies in, if patch_range would rewrite it
 * and it is direct; NULL otherwise. */
static const struct vmm_vma *memo_vma(const struct proxy_process *p,
                                      gva_t gva, uint64_t len)
{
    const struct vmm_vma *v = vmm_as_find_vma(p->as, gva);
    if (!v || v->end < gva + len || !(v->flags & VMM_VMA_FILE) ||
        (v->flags & VMM_VMA_SHARED) || v->shared ||
        !(v->flags & VMM_VMA_DIRECT))
        return NULL;
    return v;
}

static bool memo_key_of(struct proxy_process *p, int host_fd, gva_t gva,
                        uint64_t len, struct memo_key *k)
{
    const struct vmm_vma *v = memo_vma(p, gva, len);
    struct stat st;
    if (!v || host_fd < 0 || fstat(host_fd, &st) < 0)
        return false;
    proxy_hooks.file_tap_restat(p, &st);
    if (st.st_dev != v->dev || st.st_ino != v->ino)
        return false;
    memset(k, 0, sizeof(*k)); /* compared with memcmp */
    *k = (struct memo_key){
        .dev = v->dev, .ino = v->ino, .size = (uint64_t)st.st_size,
        .mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
                    (uint64_t)st.st_mtim.tv_nsec,
        .file_off = v->file_off, .image_id = v->image ? v->image->id : 0,
        .image_off = v->image ? v->image_off : 0, .start = v->start,
        .end = v->end, .lo = gva, .hi = gva + len, .vvar = p->mm.vvar_gva,
        .vflags = v->flags, .allow = allow_bits(p)};
    return true;
}

/* The stub pages as they are (zeroed first: compared whole): false when there are too many, or one is
 * not a stub page mapped from the page store. */
static bool memo_pages_of(const struct proxy_process *p, struct memo_pages *mp)
{
    const struct proxy_cpuid_patched *s = p->cpuid_patched;
    memset(mp, 0, sizeof(*mp));
    size_t n = s ? s->nr_pages : 0;
    if (n > MEMO_PAGES)
        return false;
    for (size_t i = 0; i < n; i++) {
        mp->page[i].gva = s->pages[i].gva; /* fields: memcmp'd with padding */
        mp->page[i].used = s->pages[i].used;
        if (!in_stub_page(p, s->pages[i].gva) ||
            !vmm_as_stored_at(p->as, s->pages[i].gva, &mp->stored_off[i]))
            return false;
    }
    mp->n = n;
    return true;
}

static void counts_of(const struct proxy_process *p, uint64_t out[])
{
    const struct proxy_totals *t = p->totals;
    uint64_t c[MEMO_COUNTS] = {0};
    if (t) {
        c[0] = t->cpuid_sites;
        c[1] = t->tsc_sites;
        c[2] = t->tsc_inline_sites;
        c[3] = t->cpuid_inline_sites;
        c[4] = t->idcall_sites;
    }
    memcpy(out, c, sizeof(c));
}

static void counts_add(struct proxy_process *p, const uint64_t d[])
{
    struct proxy_totals *t = p->totals;
    if (!t)
        return;
    t->cpuid_sites += d[0];
    t->tsc_sites += d[1];
    t->tsc_inline_sites += d[2];
    t->cpuid_inline_sites += d[3];
    t->idcall_sites += d[4];
}

static struct patch_memo *memo_find(const struct memo_key *k,
                                    const struct memo_pages *mp)
{
    for (size_t i = 0; i < nr_memos; i++)
        if (!memcmp(&memos[i].key, k, sizeof(*k)) &&
            !memcmp(&memos[i].before, mp, sizeof(*mp)))
            return &memos[i];
    return NULL;
}

/* Whether none of m's sites is there yet. */
static bool memo_fits(const struct proxy_process *p, const struct patch_memo *m)
{
    for (size_t i = 0; i < m->nr_sites; i++)
        if (find_patched(p, m->sites[i].gva))
            return false;
    return true;
}

/* m's stub pages mapped where new_stub_page puts them, each in the free
 * gap it takes now: false (none left mapped) when one is not m's. */
static bool memo_new_pages(struct proxy_process *p, const struct patch_memo *m)
{
    for (size_t i = 0; i < m->nr_new; i++) {
        gva_t gap;
        if (vmm_as_find_free(p->as, VMM_PAGE_SIZE, m->key.start, &gap) < 0 ||
            gap != m->new_pages[i] ||
            (vmm_as_map_stored(p->as, gap, PROT_READ | PROT_EXEC,
                               VMM_VMA_SPECIAL, STUB_PAGE_NAME) < 0 &&
             vmm_as_map(p->as, gap, VMM_PAGE_SIZE, PROT_READ | PROT_EXEC,
                        VMM_VMA_SPECIAL, STUB_PAGE_NAME) < 0)) {
            while (i-- > 0)
                (void)vmm_as_unmap(p->as, m->new_pages[i], VMM_PAGE_SIZE);
            return false;
        }
    }
    return true;
}

/*
 * A text the memo maps in pieces (its rewritten pages from the store, the
 * rest from its file or image: a VMA each, in hvrun's view and in a ptrace
 * stub, 21 for libc's text here) is joined at its second use into one run
 * of the store holding every whole page of the range, rewritten or not,
 * the same bytes, so that every later process maps it in one piece. Once
 * a text and run: libc's 1.4 MB read and stored, paid by runs that map it
 * three times or more.
 */
#define MEMO_JOIN_MAX (16u << 20)

static bool memo_run_in_text(const struct memo_key *k,
                             const struct vmm_stored_run *r)
{
    return r->gva >= k->lo && r->gva < k->hi;
}

/* The run of m holding gva, or NULL. */
static const struct vmm_stored_run *memo_run_at(const struct patch_memo *m,
                                                gva_t gva)
{
    for (size_t i = 0; i < m->nr_runs; i++)
        if (gva >= m->runs[i].gva && gva < m->runs[i].gva + m->runs[i].len)
            return &m->runs[i];
    return NULL;
}

/* len bytes from in_fd at in_off to the page store at out_off, inside
 * the kernel: a buffer of hvrun's would fault in page by page (25-190 us
 * each on a host with shadowed page tables: libc's text is 350 pages). */
static bool store_copy_in(int in_fd, uint64_t in_off, uint64_t out_off,
                          uint64_t len)
{
    int store = vmm_page_store_fd();
    off_t from = (off_t)in_off;
    if (lseek(store, (off_t)out_off, SEEK_SET) < 0)
        return false;
    while (len > 0) {
        ssize_t n = sendfile(store, in_fd, &from, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        len -= (uint64_t)n;
    }
    return true;
}

/* A stored run's pages to another place in the store (a few pages: the
 * rewritten ones), through one page of hvrun's. */
static bool store_copy_within(uint64_t from, uint64_t to, uint64_t len)
{
    static uint8_t page[VMM_PAGE_SIZE];
    int store = vmm_page_store_fd();
    for (uint64_t k = 0; k < len; k += VMM_PAGE_SIZE)
        if (pread(store, page, VMM_PAGE_SIZE, (off_t)(from + k)) !=
                VMM_PAGE_SIZE ||
            pwrite(store, page, VMM_PAGE_SIZE, (off_t)(to + k)) !=
                VMM_PAGE_SIZE)
            return false;
    return true;
}

/* The bytes the replay gives [first, end) of v's text, into the store at
 * off onwards: a run's from its stored pages, each stretch between runs
 * from v's file or image (what is there before the runs are mapped). */
static bool memo_text_bytes(const struct vmm_vma *v, const struct patch_memo *m,
                            gva_t first, gva_t end, uint64_t off)
{
    uint64_t src_off;
    const struct vmm_shared *src = vmm_vma_direct_source(v, &src_off);
    if (!src)
        return false;
    for (gva_t at = first; at < end;) {
        const struct vmm_stored_run *r = memo_run_at(m, at);
        gva_t upto = at;
        bool ok;
        if (r) {
            upto = r->gva + r->len < end ? r->gva + r->len : end;
            ok = store_copy_within(r->off + (at - r->gva), off + (at - first),
                                   upto - at);
        } else {
            while (upto < end && !memo_run_at(m, upto))
                upto += VMM_PAGE_SIZE;
            ok = store_copy_in(src->fd, src_off + (at - v->start),
                               off + (at - first), upto - at);
        }
        if (!ok)
            return false;
        at = upto;
    }
    return true;
}

/* A VMA of p in [first, end) mapped from the text's own file or image,
 * not from the store: the source memo_text_bytes reads the stretches
 * between runs from (in a process that mapped the text in pieces, the
 * one at key.lo may be a stored page). */
static const struct vmm_vma *memo_source_vma(const struct proxy_process *p,
                                             gva_t first, gva_t end)
{
    uint64_t off;
    for (gva_t at = first; at < end;) {
        const struct vmm_vma *v = vmm_as_find_vma(p->as, at);
        if (!v || !(v->flags & VMM_VMA_DIRECT))
            return NULL;
        if (!vmm_as_stored_at(p->as, v->start, &off))
            return v;
        at = v->end;
    }
    return NULL;
}

/* The page-aligned text range [*first, *end) memo m joins in p. */
static bool memo_text_range(const struct proxy_process *p,
                            const struct patch_memo *m, gva_t *first,
                            gva_t *end)
{
    /* The VMA holding the range's last byte: in a process that maps the
     * text in pieces, the last piece. */
    gva_t hi = m->key.hi < m->key.end ? m->key.hi : m->key.end;
    const struct vmm_vma *v = hi > m->key.lo
                                  ? vmm_as_find_vma(p->as, hi - 1)
                                  : NULL;
    if (!v)
        return false;
    *first = VMM_PAGE_ALIGN_UP(m->key.lo);
    *end = (hi < vmm_vma_valid_end(v) ? hi : vmm_vma_valid_end(v)) &
           VMM_PAGE_MASK;
    return *first < *end;
}

static void memo_join(struct proxy_process *p, struct patch_memo *m)
{
    m->join_tried = true;
    gva_t first, end;
    if (!memo_text_range(p, m, &first, &end))
        return;
    const struct vmm_vma *v = memo_source_vma(p, first, end);
    if (!v)
        return;
    size_t text_runs = 0;
    for (size_t i = 0; i < m->nr_runs; i++) {
        const struct vmm_stored_run *r = &m->runs[i];
        if (!memo_run_in_text(&m->key, r))
            continue;
        if (r->gva < first || r->gva + r->len > end)
            return;
        text_runs++;
    }
    if (text_runs < 2 || end <= first || end - first > MEMO_JOIN_MAX)
        return;
    struct vmm_stored_run *pieces = malloc(text_runs * sizeof(*pieces));
    uint64_t off;
    if (!pieces ||
        vmm_page_store_reserve((end - first) / VMM_PAGE_SIZE, &off) < 0 ||
        !memo_text_bytes(v, m, first, end, off)) {
        free(pieces);
        return; /* the room stays unused */
    }
    size_t kept = 0;
    m->nr_pieces = 0;
    for (size_t i = 0; i < m->nr_runs; i++)
        if (!memo_run_in_text(&m->key, &m->runs[i]))
            m->runs[kept++] = m->runs[i];
        else
            pieces[m->nr_pieces++] = m->runs[i];
    m->pieces = pieces;
    m->runs[kept++] = (struct vmm_stored_run){first, end - first, off};
    m->nr_runs = kept;
}

/* The run m's join made, or NULL. */
static const struct vmm_stored_run *memo_joined_run(const struct patch_memo *m)
{
    return m->pieces && m->nr_runs > 0 ? &m->runs[m->nr_runs - 1] : NULL;
}

/* Whether p maps [first, end) as m's text in pieces: the pages of each of
 * runs[0..n) from the store at the run's offset, every other page direct
 * from the text's own file or image at its place. */
static bool memo_mapped_in_pieces(const struct proxy_process *p,
                                  const struct patch_memo *m, gva_t first,
                                  gva_t end, const struct vmm_stored_run *runs,
                                  size_t n)
{
    const struct memo_key *k = &m->key;
    for (gva_t at = first; at < end; at += VMM_PAGE_SIZE) {
        const struct vmm_stored_run *r = NULL;
        for (size_t i = 0; i < n && !r; i++)
            if (at >= runs[i].gva && at < runs[i].gva + runs[i].len)
                r = &runs[i];
        uint64_t off;
        bool stored = vmm_as_stored_at(p->as, at, &off);
        if (r) {
            if (!stored || off != r->off + (at - r->gva))
                return false;
            continue;
        }
        const struct vmm_vma *v = vmm_as_find_vma(p->as, at);
        uint64_t src_off;
        const struct vmm_shared *src = v ? vmm_vma_direct_source(v, &src_off)
                                         : NULL;
        if (stored || !src || v->dev != k->dev || v->ino != k->ino ||
            (v->image ? v->image->id : 0) != k->image_id)
            return false;
        uint64_t want = (k->image_id ? k->image_off : k->file_off) +
                        (at - k->start);
        if (src_off + (at - v->start) != want)
            return false;
    }
    return true;
}

void proxy_cpuid_join_texts(struct proxy_process *p)
{
    for (size_t i = 0; i < nr_memos; i++) {
        struct patch_memo *m = &memos[i];
        gva_t first, end;
        const struct vmm_vma *v = vmm_as_find_vma(p->as, m->key.lo);
        if (!v || v->dev != m->key.dev || v->ino != m->key.ino ||
            !memo_text_range(p, m, &first, &end))
            continue;
        const struct vmm_stored_run *joined = memo_joined_run(m);
        uint64_t at_first;
        if (joined && vmm_as_stored_at(p->as, first, &at_first) &&
            at_first == joined->off)
            continue; /* joined before (this process or its parent) */
        if (joined ? !memo_mapped_in_pieces(p, m, first, end, m->pieces,
                                            m->nr_pieces)
                   : m->join_tried || !memo_mapped_in_pieces(p, m, first, end,
                                                             m->runs,
                                                             m->nr_runs))
            continue;
        if (!joined) {
            memo_join(p, m);
            if (!(joined = memo_joined_run(m)))
                continue;
        }
        if (joined->gva == first && joined->len == end - first)
            (void)vmm_as_join_stored(p->as, first, end, joined->off);
    }
}

static bool memo_replay(struct proxy_process *p, int host_fd, gva_t gva,
                        uint64_t len)
{
    struct memo_key k;
    struct memo_pages mp;
    struct patch_memo *m;
    if (nr_memos == 0 || p->as->stage ||
        !memo_key_of(p, host_fd, gva, len, &k) || !memo_pages_of(p, &mp) ||
        !(m = memo_find(&k, &mp)) || !memo_fits(p, m))
        return false;
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    if (!s && !(s = p->cpuid_patched = new_patched()))
        return false;
    void *pages = realloc(s->pages, MEMO_PAGES * sizeof(*s->pages));
    if (!pages)
        return false;
    s->pages = pages;
    if (!m->join_tried)
        memo_join(p, m);
    if (!memo_new_pages(p, m))
        return false; /* nothing done: rewritten the long way */
    for (size_t i = 0; i < m->nr_after; i++)
        s->pages[i] = m->after[i];
    s->nr_pages = m->nr_after;
    /* The records first, as patch_site remembers a site before its UD2
     * is written: a trap hvrun could not answer would be a SIGILL. A run
     * that cannot be the store's is a private copy of its bytes; one that
     * fails even so leaves its sites the file's bytes, which every answer
     * to a trap checks before it trusts a record. */
    for (size_t i = 0; i < m->nr_sites; i++)
        (void)remember(p, &m->sites[i]);
    for (size_t i = 0; i < m->nr_runs; i++)
        (void)vmm_as_map_stored_run(p->as, m->runs[i].gva, m->runs[i].len,
                                    m->runs[i].off);
    counts_add(p, m->counts);
    return true;
}

/* Whether the sites patch_vma meets in [lo, hi) of v have their
 * functions and spans inside v (so nothing outside it is read). */
static bool memo_sites_inside(const struct file_sites *fs,
                              const struct vmm_vma *v, gva_t lo, gva_t hi)
{
    uint64_t vlo = v->file_off, vhi = v->file_off + (v->end - v->start);
    uint64_t flo = v->file_off + (lo - v->start), fhi = flo + (hi - lo);
    for (size_t i = 0; fs && i < fs->nr; i++) {
        const struct proxy_cpuid_site *c = &fs->v[i];
        if (c->file_off < flo || c->file_off + c->len > fhi)
            continue;
        if (c->func_off < vlo || c->file_off + c->span > vhi ||
            c->file_off - c->pre < vlo)
            return false;
    }
    return true;
}

static struct memo_recording *memo_record_begin(struct proxy_process *p,
                                                int host_fd, gva_t gva,
                                                uint64_t len)
{
    struct memo_recording *r;
    const struct vmm_vma *v = memo_vma(p, gva, len);
    if (nr_memos == MEMO_MAX || p->as->stage || !v ||
        !(r = calloc(1, sizeof(*r))))
        return NULL;
    if (!memo_key_of(p, host_fd, gva, len, &r->m.key) ||
        !memo_pages_of(p, &r->m.before) ||
        memo_find(&r->m.key, &r->m.before) ||
        !memo_sites_inside(proxy_cpuid_sites_of(host_fd), v, gva, gva + len) ||
        (!p->cpuid_patched && !(p->cpuid_patched = new_patched()))) {
        free(r);
        return NULL;
    }
    counts_of(p, r->counts_before);
    p->cpuid_patched->recording = r;
    return r;
}

static void memo_note_site(struct memo_recording *r,
                           const struct patched_site *ps, bool replaced)
{
    if (replaced || r->bad) {
        r->bad = true;
        return;
    }
    if (r->m.nr_sites == r->sites_cap) {
        size_t cap = r->sites_cap ? r->sites_cap * 2 : 16;
        void *grown = realloc(r->m.sites, cap * sizeof(*r->m.sites));
        if (!grown) {
            r->bad = true;
            return;
        }
        r->m.sites = grown;
        r->sites_cap = cap;
    }
    r->m.sites[r->m.nr_sites++] = *ps;
}

static void memo_note_new_page(struct memo_recording *r, gva_t gva)
{
    if (r->m.nr_new == MEMO_PAGES)
        r->bad = true;
    else
        r->m.new_pages[r->m.nr_new++] = gva;
}

static void memo_record_end(struct proxy_process *p, struct memo_recording *r)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    s->recording = NULL;
    vmm_as_stage_log(p->as, NULL);
    uint64_t counts[MEMO_COUNTS];
    counts_of(p, counts);
    if (!r->bad && r->staged && !r->log.partial &&
        s->nr_pages <= MEMO_PAGES) {
        struct patch_memo *m = &memos[nr_memos++];
        *m = r->m;
        for (size_t i = 0; i < s->nr_pages; i++)
            m->after[i] = s->pages[i];
        m->nr_after = s->nr_pages;
        m->runs = r->log.runs;
        m->nr_runs = r->log.n;
        for (size_t i = 0; i < MEMO_COUNTS; i++)
            m->counts[i] = counts[i] - r->counts_before[i];
    } else {
        free(r->m.sites);
        free(r->log.runs);
    }
    free(r);
}

bool proxy_cpuid_patching(const struct proxy_process *p)
{
    return p->cfg->cpuid_rewrite || p->cfg->cpuid_topology ||
           p->cfg->rdpid_rewrite || p->cfg->rdtsc_rewrite ||
           p->cfg->rdtsc_inline;
}

static void patch_range_now(struct proxy_process *p, int host_fd, gva_t gva,
                            uint64_t len, bool fresh);

static void patch_range(struct proxy_process *p, int host_fd, gva_t gva,
                        uint64_t len, bool fresh)
{
    if (!proxy_cpuid_patching(p) || len == 0)
        return;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!fresh || !memo_replay(p, host_fd, gva, len))
        patch_range_now(p, host_fd, gva, len, fresh);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (p->totals)
        p->totals->cpuid_patch_ns +=
            (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
                       (t1.tv_nsec - t0.tv_nsec));
}

/* patch_range's work, recorded for the memo when it is a fresh text. */
static void patch_range_now(struct proxy_process *p, int host_fd, gva_t gva,
                            uint64_t len, bool fresh)
{
    struct memo_recording *rec =
        fresh ? memo_record_begin(p, host_fd, gva, len) : NULL;
    /* The rewritten pages of a file's text come out the same in every
     * process of the run: stored once and mapped from there, not copied
     * into each process (vmm/page_store.c). */
    vmm_as_stage_begin(p->as);
    if (rec) {
        rec->staged = p->as->stage != NULL;
        vmm_as_stage_log(p->as, &rec->log);
    }
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
    (void)vmm_as_stage_end(p->as);
    if (rec)
        memo_record_end(p, rec);
}

void proxy_cpuid_patch_fresh(struct proxy_process *p, int host_fd,
                             uint64_t gva, uint64_t len)
{
    /* Texts the run's image of their back edges serves first: their
     * pages are then the image's, which leaves our sites' bytes as the
     * file has them (site_intact trusts them). */
    proxy_progress_image_fresh(p, host_fd, gva, len);
    patch_range(p, host_fd, gva, len, true);
    /* After: a back edge's span hash is checked on the bytes as the
     * RDTSC sites left them (a site of ours keeps its bytes). */
    proxy_progress_patch_fresh(p, host_fd, gva, len);
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
    if (!proxy_code_read(p, r->rip, insn, 2) || insn[0] != 0x0f)
        return PROXY_TRAP_NONE;
    uint8_t kind, len;
    if (insn[1] == 0x31) {
        kind = PROXY_SITE_RDTSC;
        len = 2;
    } else if (insn[1] == 0x01 && proxy_code_read(p, r->rip, insn, 3) &&
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
    if (!proxy_code_read(p, r->rip + ps->len - 1, &modrm, 1))
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
    if (p->cpuid_patched->progress) {
        enum proxy_trap_kind k = proxy_progress_trap(p);
        if (k != PROXY_TRAP_NONE)
            return k;
    }
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    const struct patched_site *ps = find_patched(p, r->rip);
    uint8_t now[2];
    /* The guest may have unmapped, remapped or rewritten it since. */
    if (!ps || ps->how == PATCH_JMP || ps->how == PATCH_NONE ||
        ps->kind == PROXY_SITE_IDCALL ||
        !(ps->how == PATCH_STUB_TRAP
              ? in_stub_page(p, r->rip)
              : proxy_code_maps_file_at(p, r->rip, ps->dev, ps->ino, ps->file_off)) ||
        !proxy_code_read(p, r->rip, now, 2) || memcmp(now, insn_ud2, 2) != 0)
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

/*
 * A backward span whose first bytes stayed below old (mremap moved the
 * rest to new_gva): its jmp stayed behind, so the part that moved, the
 * CPUID among it, gets the file's bytes back with the site's UD2 (a trap,
 * never the NOPs after a jmp). False when those bytes are not the ones
 * hvrun wrote.
 */
static bool trap_moved_part(struct proxy_process *p, struct patched_site *ps,
                            gva_t old, gva_t new_gva)
{
    gva_t span_gva = ps->gva - ps->pre;
    size_t span_len = (size_t)ps->pre + ps->span, stayed = old - span_gva;
    uint8_t was[MAX_SPAN], now[MAX_SPAN], code[MAX_SPAN];
    jmp_bytes(was, span_gva, span_len, ps->stub);
    if (!proxy_code_read(p, new_gva, now, span_len - stayed) ||
        memcmp(now, was + stayed, span_len - stayed) != 0)
        return false;
    memcpy(code, ps->orig, span_len);
    bool as_was = back_as_was(p, ps->kind);
    if (!as_was)
        memcpy(code + ps->pre, insn_ud2, 2);
    if (!proxy_code_poke(p, new_gva, code + stayed, span_len - stayed))
        return false;
    ps->how = as_was ? PATCH_NONE : PATCH_TRAP;
    ps->pre = 0;
    return true;
}

void proxy_cpuid_remapped(struct proxy_process *p, uint64_t old,
                          uint64_t old_len, uint64_t new_len,
                          uint64_t new_gva)
{
    struct proxy_cpuid_patched *s = p->cpuid_patched;
    if (!s || (old == new_gva && new_len >= old_len))
        return;
    proxy_progress_remapped(p, old, old_len, new_gva);
    size_t lo = lower_bound(s, old), hi = lower_bound(s, old + old_len);
    size_t n = hi - lo;
    struct patched_site *moved = n ? malloc(n * sizeof(*moved)) : NULL;
    if (!moved)
        return; /* none, or they SIGILL: never a wrong answer */
    memcpy(moved, &s->v[lo], n * sizeof(*moved));
    memmove(&s->v[lo], &s->v[hi], (s->nr - hi) * sizeof(*s->v));
    s->nr -= n;
    for (size_t i = 0; i < n; i++) {
        if (moved[i].gva - moved[i].pre < old) {
            if (moved[i].how == PATCH_JMP &&
                !trap_moved_part(p, &moved[i], old, new_gva))
                continue;
            moved[i].pre = 0; /* a trap's UD2 is at the site: it moved */
        }
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
    if (!s || (s->nr == 0 && s->nr_pages == 0 && !s->no_inline &&
               !s->no_idcall &&
               !s->progress))
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
    c->no_idcall = s->no_idcall;
    if (s->progress && !(c->progress = proxy_progress_copy(s->progress))) {
        free(c->v);
        free(c->pages);
        free(c);
        return -ENOMEM;
    }
    child->cpuid_patched = c;
    return c->progress ? proxy_progress_forked(child) : 0;
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
    proxy_progress_free(s->progress);
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
