/*
 * progress.c - counted progress without a PMU (`--progress software`): the
 * back edges of the guest's loops (cpuid_sites.c finds them: direct jcc/jmp
 * to an earlier instruction of the same function, decoded as the RDTSC
 * sites are) are rewritten so that each one taken decrements a counter in
 * guest memory; when it reaches zero the thread traps to hvrun, a point of
 * its own progress that is the same in every run. There the world loop
 * (kernel/world.c) may give the vCPU to another thread, and at every exit
 * logical time advances by DET_PROGRESS_UNIT_NS per counted unit, so a
 * thread that computes without syscalls moves time as it would natively,
 * at the same instruction in every run, instead of being cut by the
 * host-timed slice.
 *
 * The counter. Only one guest thread of the whole run executes at a time
 * (one vCPU, sequentialised): a counter per address space is enough if
 * hvrun sets it before each run of a thread (proxy_progress_enter: the
 * thread's budget) and reads what was spent after it
 * (proxy_progress_leave). The decrement must reach it without a register
 * (every register is the guest's, %fs and %gs too) from code anywhere:
 * `decq abs32`, the counter in an [hvrun-count] page (read-write, special)
 * at COUNTER_GVA, below 2 GiB. One counter for the whole space makes the
 * trap fall when the thread's units since its quantum began add up to it,
 * whatever exits came between (world.c keeps each thread's units left);
 * a counter per +-2 GiB reach would trap when any one of them ran out,
 * which depends on where the exits fell. A space where something else
 * holds that page is not rewritten.
 *
 * A site (a span: the back edge and the plain instructions before it that
 * make 5 bytes) becomes `jmp rel32` to its trampoline in a [hvrun-progress]
 * region (read and execute only, placed below the code as mmap would
 * place it):
 *     the span's instructions before the branch (RIP-relative ones with
 *     their displacement moved)
 *     jcc taken  (the branch's own condition, rel32; a jmp falls through)
 *     jmp site+span
 * taken:
 *     decq counter; jz trap; jmp target
 * trap:
 *     ud2; jmp target
 * The decrement clobbers OF SF ZF AF PF (DEC keeps CF), which the finder
 * proved dead at the target. At the UD2 hvrun takes the thread straight
 * to the target (the original code): a signal frame or a stop there never
 * names the trampoline. Nothing lands inside a span (the finder's checks,
 * as for the RDTSC stubs) and only fresh copies of a file are rewritten,
 * so no thread is inside one (each span checked against the file's bytes
 * there: the cache entry names the file's dev, inode, size and mtime). A
 * thread stopped inside a trampoline (a
 * fault of a relocated load, a host-timed cut) sees its address there, as
 * with the RDTSC stubs; mremap of rewritten code puts the spans back.
 */
#include "proxy.h"
#include "config.h"
#include "kernel.h"
#include "mm.h"
#include "internal.h"
#include "cpuid_patch.h"
#include "progress.h"
#include "progress_cache.h"
#include "progress_copy.h"
#include "det.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REGION_NAME "[hvrun-progress]"
/* The counter's page: below 2 GiB, so that `decq abs32` reaches it from
 * code anywhere (one counter for the whole address space), and above
 * where non-PIE executables and their brk heaps usually end. */
#define COUNTER_GVA 0x7fff0000ULL
#define COUNTER_NAME "[hvrun-count]"
#define TRAMP_BYTES 64 /* at most: a 24-byte span, 40 of ours */
/* Where each trampoline starts (a power of two, at most TRAMP_BYTES). */
#ifndef TRAMP_ALIGN
#define TRAMP_ALIGN 8
#endif
#define REACH ((1LL << 31) - 16 * (int64_t)VMM_PAGE_SIZE)
/* An image's counter slot, just below its trampolines (slot_map). */
#define SLOT_BYTES VMM_PAGE_SIZE
/* An unrolled group (build_group): GROUP_TURNS turns of a loop of at
 * most GROUP_BODY_MAX bytes, each way out of a turn given its own stub;
 * at most GROUP_BYTES_MAX bytes a loop. */
#define GROUP_TURNS 8
#define GROUP_BODY_MAX 48
#define GROUP_STUB_BYTES 38
#define GROUP_HEAD_BYTES 14 /* subq $K, slot(%rip); jle rel32 */
#define GROUP_BYTES_MAX                                                    \
    (GROUP_HEAD_BYTES + GROUP_TURNS * (GROUP_BODY_MAX + MAX_SPAN + 6) +    \
     5 + GROUP_TURNS * PROGRESS_COPY_EXITS * GROUP_STUB_BYTES + 8)
/* An image's groups take at most GROUP_BUDGET_SITE bytes a site of its
 * text, and GROUP_BUDGET_MOST in all (libc's 766 groups: ~450 KiB),
 * but GROUP_BUDGET_LEAST even to a small text. */
#define GROUP_BUDGET_SITE 64
#define GROUP_BUDGET_LEAST (8 * 1024)
#define GROUP_BUDGET_MOST (1024 * 1024)

/* A patched span, to be put back if its code moves (mremap). */
struct progress_site {
    gva_t gva;
    uint8_t span;
    uint8_t orig[MAX_SPAN]; /* as the file had it */
    uint8_t code[MAX_SPAN]; /* the jmp hvrun wrote */
    /* The bytes of the loop's body copied in front of its trampoline's
     * entry (progress_copy.c), 0 for none. (The record's size is part of
     * a cached image's key.) */
    uint16_t body;
    uint8_t jnz_at; /* with a body: its jnz's offset from the entry */
    /* With an unrolled group (build_group): the bytes from the group's
     * head to the body's copy, 0 for none. */
    uint16_t group;
    uint8_t turn; /* with a group: the bytes of one of its turns */
};

/* The patched spans of an address space, in patching order. A fork's copy
 * shares its parent's list until either patches more (a shell forks, and
 * its child execs: the list, ~60 bytes a site and 15,000 sites for libc
 * alone, was copied for nothing). */
struct progress_sites {
    unsigned refs;
    size_t nr, cap;
    struct progress_site v[];
};

struct progress_region {
    gva_t gva;
    uint64_t len, used;
};

struct progress_image;

/* A text mapping of this space backed by an image (its text's start). */
struct image_use {
    gva_t text;
    struct progress_image *img;
};

/* One per address space, shared as proxy_cpuid_patched is. */
struct proxy_progress {
    gva_t *counters;
    size_t nr_counters;
    struct progress_region *regions;
    size_t nr_regions;
    struct progress_sites *sites; /* NULL: none yet */
    struct image_use *uses;
    size_t nr_uses;
    /* The counter's page as a shared object (NULL: a private page), so
     * that a slot below each image's trampolines is the same memory
     * (slot_map). */
    struct vmm_shared *counter_obj;
    /* What the counters were set to at the last enter; whether they go
     * on from there (a host interruption of the same thread). */
    uint64_t budget;
    bool armed, goes_on;
};

static bool in_reach(gva_t a, gva_t b)
{
    return (a > b ? a - b : b - a) < (uint64_t)REACH;
}

static bool is_special(const struct proxy_process *p, gva_t gva,
                       const char *name)
{
    const struct vmm_vma *v = vmm_as_find_vma(p->as, gva);
    return v && (v->flags & VMM_VMA_SPECIAL) && v->name &&
           strcmp(v->name, name) == 0;
}

static struct proxy_progress *state(struct proxy_process *p, bool create)
{
    struct proxy_progress **slot = proxy_cpuid_progress_slot(p, create);
    if (!slot)
        return NULL;
    if (!*slot && create)
        *slot = calloc(1, sizeof(**slot));
    return *slot;
}

/* ---- the counters ----------------------------------------------------------- */

static bool read_word(const struct proxy_process *p, gva_t gva, uint64_t *out)
{
    struct iovec iov[2];
    size_t covered;
    int n = vmm_as_host_iov(p->as, gva, 8, 0, iov, 2, &covered);
    if (n != 1 || covered != 8)
        return false;
    memcpy(out, iov[0].iov_base, 8);
    return true;
}

void proxy_progress_enter(struct proxy_process *p, uint64_t budget)
{
    struct proxy_progress *s = state(p, false);
    if (!s || s->nr_counters == 0)
        return;
    if (s->goes_on && s->armed)
        return;
    if (budget == 0)
        budget = 1;
    for (size_t i = 0; i < s->nr_counters; i++)
        if (is_special(p, s->counters[i], COUNTER_NAME))
            (void)vmm_as_poke(p->as, s->counters[i], &budget, 8);
    s->budget = budget;
    s->armed = true;
}

/* What the counters lost since they were set: a value above the budget is
 * a guest's scribble (or a counter hvrun no longer owns) and counts 0. */
static uint64_t spent(struct proxy_process *p, const struct proxy_progress *s)
{
    uint64_t total = 0;
    for (size_t i = 0; s->armed && i < s->nr_counters; i++) {
        uint64_t v;
        if (is_special(p, s->counters[i], COUNTER_NAME) &&
            read_word(p, s->counters[i], &v) && v <= s->budget)
            total += s->budget - v;
    }
    return total;
}

uint64_t proxy_progress_unfolded(struct proxy_process *p)
{
    struct proxy_progress *s = state(p, false);
    return s ? spent(p, s) : 0;
}

uint64_t proxy_progress_leave(struct proxy_process *p, bool host_interruption)
{
    struct proxy_progress *s = state(p, false);
    if (!s || !s->armed)
        return 0;
    /* A stop the host caused is no point of the program's: the counters
     * go on, as the vDSO's count does, and nothing is folded there. */
    if (host_interruption) {
        s->goes_on = true;
        return 0;
    }
    uint64_t units = spent(p, s);
    s->armed = false;
    s->goes_on = false;
    if (p->totals)
        p->totals->progress_units += units;
    return units;
}

/* ---- the trap --------------------------------------------------------------- */

enum proxy_trap_kind proxy_progress_trap(struct proxy_process *p)
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    uint8_t b[7];
    struct iovec iov[2];
    size_t covered;
    if (!is_special(p, r->rip, REGION_NAME) ||
        vmm_as_host_iov(p->as, r->rip, sizeof(b), 0, iov, 2, &covered) < 1 ||
        covered != sizeof(b))
        return PROXY_TRAP_NONE;
    size_t done = 0;
    for (int i = 0; i < 2 && done < sizeof(b); i++) {
        size_t n = iov[i].iov_len < sizeof(b) - done ? iov[i].iov_len
                                                      : sizeof(b) - done;
        memcpy(b + done, iov[i].iov_base, n);
        done += n;
    }
    if (b[0] != 0x0f || b[1] != 0x0b || b[2] != 0xe9)
        return PROXY_TRAP_NONE;
    int32_t rel;
    memcpy(&rel, b + 3, 4);
    /* Straight to the loop's target in the original code. */
    r->rip = r->rip + 7 + (uint64_t)(int64_t)rel;
    vmm_vm_enter_user(p->vm);
    if (p->totals)
        p->totals->progress_traps++;
    return PROXY_TRAP_PROGRESS;
}

/* ---- rewriting ---------------------------------------------------------------- */

/* Whether this run's images copy short loops' bodies: not under --gdb,
 * whose breakpoints in a loop must be met at every turn (a copy would
 * run past them; the count, so the run, is the same either way). */
static bool loop_copies(const struct proxy_process *p)
{
    return p->cfg->debugger == NULL && !p->cfg->no_loop_copies;
}

/* The counter's page as one memfd page that slots can map too. */
static struct vmm_shared *counter_object(void)
{
    int fd = memfd_create("hvrun-count", MFD_CLOEXEC);
    struct vmm_shared *obj = NULL;
    if (fd >= 0 && ftruncate(fd, VMM_PAGE_SIZE) == 0)
        obj = vmm_shared_new(fd);
    if (fd >= 0)
        close(fd);
    return obj;
}

/* The address space's counter: its page at COUNTER_GVA, mapped when the
 * first file is rewritten; 0 when something else is there. Where images
 * give trampolines their slot (loop_copies), the page is a shared
 * object the slots map too. */
static gva_t counter_for(struct proxy_process *p, struct proxy_progress *s)
{
    if (s->nr_counters > 0)
        return is_special(p, s->counters[0], COUNTER_NAME) ? s->counters[0]
                                                           : 0;
    if (!vmm_as_range_free(p->as, COUNTER_GVA, VMM_PAGE_SIZE))
        return 0;
    s->counters = malloc(sizeof(gva_t));
    if (!s->counters)
        return 0;
    if (vmm_as_map(p->as, COUNTER_GVA, VMM_PAGE_SIZE, PROT_READ | PROT_WRITE,
                   VMM_VMA_SPECIAL, COUNTER_NAME) < 0)
        return 0;
    if (loop_copies(p) && (s->counter_obj = counter_object()) &&
        vmm_as_attach_shared(p->as, COUNTER_GVA, VMM_PAGE_SIZE,
                             s->counter_obj, 0) < 0) {
        vmm_shared_put(s->counter_obj);
        s->counter_obj = NULL;
        (void)vmm_as_map(p->as, COUNTER_GVA, VMM_PAGE_SIZE,
                         PROT_READ | PROT_WRITE, VMM_VMA_SPECIAL,
                         COUNTER_NAME);
    }
    s->counters[s->nr_counters++] = COUNTER_GVA;
    s->armed = false;
    return COUNTER_GVA;
}

/* A slot: the counter's page again at gva (free), within a RIP-relative
 * reach of an image's trampolines, whose `decq slot(%rip)` AMD's cores
 * run as fast as a register's decrement, where `decq abs32` of
 * COUNTER_GVA made a tight loop 1.7x slower (docs/PERFORMANCE.md). */
static bool slot_map(struct proxy_process *p, struct proxy_progress *s,
                     gva_t gva)
{
    if (vmm_as_map(p->as, gva, VMM_PAGE_SIZE, PROT_READ | PROT_WRITE,
                   VMM_VMA_SPECIAL, COUNTER_NAME) < 0)
        return false;
    /* --gdb: a page in its place, unused (the trampolines' decrement is
     * absolute there: build_image_tramp) */
    if (s->counter_obj && vmm_as_attach_shared(p->as, gva, VMM_PAGE_SIZE,
                                               s->counter_obj, 0) < 0) {
        (void)vmm_as_unmap(p->as, gva, VMM_PAGE_SIZE);
        return false;
    }
    return true;
}

/* Room for n trampolines within reach of [lo, hi). */
static struct progress_region *region_for(struct proxy_process *p,
                                          struct proxy_progress *s, gva_t lo,
                                          gva_t hi, size_t n)
{
    uint64_t need = (uint64_t)n * TRAMP_BYTES;
    for (size_t i = 0; i < s->nr_regions; i++) {
        struct progress_region *r = &s->regions[i];
        if (r->len - r->used >= need && in_reach(r->gva, lo) &&
            in_reach(r->gva + r->len, hi) && is_special(p, r->gva, REGION_NAME))
            return r;
    }
    uint64_t len = (need + VMM_PAGE_SIZE - 1) & VMM_PAGE_MASK;
    gva_t at;
    if (vmm_as_find_free(p->as, len, lo, &at) < 0 || !in_reach(at, lo) ||
        !in_reach(at + len, hi))
        return NULL;
    void *grown =
        realloc(s->regions, (s->nr_regions + 1) * sizeof(*s->regions));
    if (!grown)
        return NULL;
    s->regions = grown;
    if (vmm_as_map(p->as, at, len, PROT_READ | PROT_EXEC, VMM_VMA_SPECIAL,
                   REGION_NAME) < 0)
        return NULL;
    struct progress_region *r = &s->regions[s->nr_regions++];
    *r = (struct progress_region){at, len, 0};
    return r;
}

struct emitter {
    uint8_t b[TRAMP_BYTES + PROGRESS_COPY_MAX + GROUP_BYTES_MAX];
    size_t n;
    gva_t at;
    size_t entry; /* where the site's jmp leads: past a copied body */
    size_t jnz_at; /* with a body: the jnz back to it, from entry */
    size_t group; /* with a group: its bytes before the body's copy */
    size_t turn;  /* with a group: the bytes of one turn */
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

static void put_jmp(struct emitter *e, gva_t target)
{
    static const uint8_t jmp = 0xe9;
    put(e, &jmp, 1);
    put_rel32(e, target);
}

/* The back edge ending the span orig (at site): its target, whether it
 * is conditional and its condition code; 0 when it is no jcc/jmp. */
static gva_t branch_of(const struct proxy_cpuid_site *cs, gva_t site,
                       const uint8_t *orig, bool *cond, uint8_t *cc)
{
    size_t pre = (size_t)(cs->span - cs->len);
    const uint8_t *br = orig + pre;
    gva_t br_va = site + pre;
    int32_t rel;
    *cond = false;
    *cc = 0;
    if (cs->len == 2) {
        *cond = br[0] != 0xeb;
        *cc = br[0] & 0x0f;
        return br_va + 2 + (gva_t)(int64_t)(int8_t)br[1];
    }
    if (cs->len == 5 && br[0] == 0xe9) {
        memcpy(&rel, br + 1, 4);
        return br_va + 5 + (gva_t)(int64_t)rel;
    }
    if (cs->len == 6 && br[0] == 0x0f) {
        memcpy(&rel, br + 2, 4);
        *cond = true;
        *cc = br[1] & 0x0f;
        return br_va + 6 + (gva_t)(int64_t)rel;
    }
    return 0;
}

/* The span's instructions before its branch, their RIP-relative
 * displacements moved to where they now run; false when one does not
 * reach. */
static bool put_span_pre(struct emitter *e, const struct proxy_cpuid_site *cs,
                         gva_t site, const uint8_t *orig)
{
    size_t base = e->n;
    put(e, orig, (size_t)(cs->span - cs->len));
    for (int i = 0; i < MAX_RIP_FIXUPS && cs->rip_disp[i]; i++) {
        int32_t disp;
        uint8_t *at = e->b + base + cs->rip_disp[i];
        memcpy(&disp, at, 4);
        gva_t target = site + cs->rip_end[i] + (gva_t)(int64_t)disp;
        int64_t moved =
            (int64_t)(target - (e->at + base + cs->rip_end[i]));
        if (moved != (int32_t)moved)
            return false;
        disp = (int32_t)moved;
        memcpy(at, &disp, 4);
    }
    return true;
}

/* Where a trampoline's decrement reaches the counter: COUNTER_GVA as an
 * absolute disp32 (it lies below 2 GiB), or an image's slot RIP-relative
 * (slot_map). */
struct counter_ref {
    gva_t gva;
    bool rip_relative;
};

/* decq counter; its bytes: 8 absolute, 7 RIP-relative */
static size_t decq_bytes(struct counter_ref c)
{
    return c.rip_relative ? 7 : 8;
}

static void put_decq(struct emitter *e, struct counter_ref c)
{
    static const uint8_t abs[4] = {0x48, 0xff, 0x0c, 0x25},
                         rip[3] = {0x48, 0xff, 0x0d};
    if (c.rip_relative) {
        put(e, rip, 3);
        put_rel32(e, c.gva);
        return;
    }
    uint32_t abs32 = (uint32_t)c.gva;
    put(e, abs, 4);
    put(e, &abs32, 4);
}

/* The trap: hvrun takes the thread to target itself (proxy_progress_trap
 * reads these bytes). */
static void put_trap(struct emitter *e, gva_t target)
{
    static const uint8_t ud2[2] = {0x0f, 0x0b};
    put(e, ud2, 2);
    put_jmp(e, target);
}

/* An instruction on the counter's slot, RIP-relative, with an imm8 after
 * its disp32 (subq/addq $imm8, slot). */
static void put_slot_imm8(struct emitter *e, const uint8_t op[3],
                          struct counter_ref c, uint8_t imm)
{
    put(e, op, 3);
    int32_t rel = (int32_t)(int64_t)(c.gva - (e->at + e->n + 5));
    put(e, &rel, 4);
    put(e, &imm, 1);
}

static void patch_rel32(struct emitter *e, size_t at, size_t to)
{
    int32_t rel = (int32_t)(int64_t)(to - (at + 4));
    memcpy(e->b + at, &rel, 4);
}

/* A group's way out: adds `back` to the slot and jumps to target, all
 * without changing a flag (the code there may read them) or a register:
 * %rax is kept below the red zone. */
static void put_group_stub(struct emitter *e, struct counter_ref c,
                           uint8_t back, gva_t target)
{
    static const uint8_t below[5] = {0x48, 0x8d, 0x64, 0x24, 0x80},
                         push_rax = 0x50, load[3] = {0x48, 0x8b, 0x05},
                         store[3] = {0x48, 0x89, 0x05}, pop_rax = 0x58,
                         above[8] = {0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0};
    const uint8_t add[4] = {0x48, 0x8d, 0x40, back};
    put(e, below, 5);
    put(e, &push_rax, 1);
    put(e, load, 3);
    put_rel32(e, c.gva);
    put(e, add, 4);
    put(e, store, 3);
    put_rel32(e, c.gva);
    put(e, &pop_rax, 1);
    put(e, above, 8);
    put_jmp(e, target);
}

/*
 * An unrolled group in front of a copied loop (build_with_body), when the
 * body is short, has at most PROGRESS_COPY_EXITS ways out, no indirect
 * jump, and CF is dead at its head (progress_copy_unrollable). A counter
 * decremented in memory at every turn makes a loop of a few instructions
 * wait on the last turn's store (on AMD Zen 3, bzip2's move-to-front loop
 * runs 3.5x as long: docs/PERFORMANCE.md); the group takes GROUP_TURNS
 * turns for one update:
 *   head:  subq $K, slot; jle undo      (fewer than K+1 left: one by one)
 *   turn 1..K: the body, the span's instructions, j!cc way-out (a
 *          conditional back edge), each jump out of the body to a way-out
 *   jmp head
 *   way-outs: the turn's unfinished count added back (K - turns done),
 *          flags and registers kept; jmp where the code went
 *   undo:  addq $K, slot                (then the one-by-one copy)
 * The count stays exact wherever the program can see it: a way out
 * settles it, the trap falls in the one-by-one copy at the same turn as
 * without a group, and a fault inside a turn is taken home with the count
 * settled (proxy_progress_home). The head's subq and addq write CF too,
 * hence the check. Returns false (nothing emitted) when the loop does not
 * qualify or its RIP-relative operands do not reach.
 */
static bool build_group(struct emitter *e, const struct proxy_cpuid_site *cs,
                        gva_t site, const uint8_t *orig,
                        struct counter_ref counter, const uint8_t *body,
                        size_t body_len, bool cond, uint8_t cc)
{
    struct progress_copy_exits ex;
    gva_t target = site - body_len;
    if (!counter.rip_relative || body_len > GROUP_BODY_MAX ||
        !progress_copy_unrollable(body, body_len, target, &ex) ||
        ex.n + cond > PROGRESS_COPY_EXITS)
        return false;
    static const uint8_t subq[3] = {0x48, 0x83, 0x2d},
                         addq[3] = {0x48, 0x83, 0x05}, jle[2] = {0x0f, 0x8e};
    size_t start = e->n;
    e->turn = body_len + (size_t)(cs->span - cs->len) + (cond ? 6 : 0);
    put_slot_imm8(e, subq, counter, GROUP_TURNS);
    put(e, jle, 2);
    size_t jle_rel = e->n;
    put(e, "\0\0\0\0", 4);
    /* the rel32 fields to send to way-outs: [turn][exit], cond last */
    size_t out_rel[GROUP_TURNS][PROGRESS_COPY_EXITS];
    for (int t = 0; t < GROUP_TURNS; t++) {
        if (!progress_copy_body(body, body_len, target, e->at + e->n,
                                e->b + e->n))
            return false;
        for (size_t i = 0; i < ex.n; i++)
            out_rel[t][i] = e->n + ex.rel_at[i];
        e->n += body_len;
        if (!put_span_pre(e, cs, site, orig))
            return false;
        if (cond) {
            const uint8_t jncc[2] = {0x0f, (uint8_t)(0x80 | (cc ^ 1))};
            put(e, jncc, 2);
            out_rel[t][ex.n] = e->n;
            put(e, "\0\0\0\0", 4);
        }
    }
    put_jmp(e, e->at + start);
    for (int t = 0; t < GROUP_TURNS; t++)
        for (size_t i = 0; i < ex.n + cond; i++) {
            patch_rel32(e, out_rel[t][i], e->n);
            put_group_stub(e, counter, (uint8_t)(GROUP_TURNS - t),
                           i < ex.n ? ex.target[i] : site + cs->span);
        }
    patch_rel32(e, jle_rel, e->n);
    put_slot_imm8(e, addq, counter, GROUP_TURNS);
    e->group = e->n - start;
    return true;
}

/*
 * The trampoline with the loop's body [target, site) copied in front
 * (progress_copy.c), the copy's length in body_len, after an unrolled
 * group where one may be made (build_group) and group_ok:
 *   [group]
 *   copy:  the body
 *   entry: the span's instructions before the branch
 *          j!cc out        (a conditional back edge: the loop ends)
 *          decq counter; jnz group or copy
 *          ud2; jmp target (the trap)
 *   out:   jmp site+span
 * A turn of the loop is the copy and one taken jnz.
 */
static bool build_with_body(struct emitter *e,
                            const struct proxy_cpuid_site *cs, gva_t site,
                            const uint8_t *orig, struct counter_ref counter,
                            const uint8_t *body, size_t body_len,
                            bool group_ok)
{
    bool cond;
    uint8_t cc;
    gva_t target = branch_of(cs, site, orig, &cond, &cc);
    if (!target || target + body_len != site)
        return false;
    e->n = 0;
    e->group = 0;
    if (group_ok &&
        !build_group(e, cs, site, orig, counter, body, body_len, cond, cc)) {
        e->n = 0;
        e->group = 0;
    }
    size_t copy = e->n;
    if (!progress_copy_body(body, body_len, target, e->at + copy,
                            e->b + copy))
        return false;
    e->n = copy + body_len;
    e->entry = e->n;
    if (!put_span_pre(e, cs, site, orig))
        return false;
    if (cond) {
        /* past the decrement, the jnz (6) and the trap (7) */
        uint8_t jncc[2] = {(uint8_t)(0x70 | (cc ^ 1)),
                           (uint8_t)(decq_bytes(counter) + 13)};
        put(e, jncc, 2);
    }
    put_decq(e, counter);
    e->jnz_at = e->n - e->entry;
    static const uint8_t jnz[2] = {0x0f, 0x85};
    put(e, jnz, 2);
    put_rel32(e, e->at); /* the group's head, or the copy */
    put_trap(e, target);
    if (cond)
        put_jmp(e, site + cs->span);
    return true;
}

/* The plain trampoline of the span orig (at site) from e->at + e->n (its
 * entry); false when a RIP-relative displacement does not reach from
 * there:
 *   entry: the span's instructions before the branch
 *          jcc taken; jmp site+span   (a conditional back edge)
 *   taken: decq counter; jz trap; jmp target
 *   trap:  ud2; jmp target
 */
static bool build_plain(struct emitter *e, const struct proxy_cpuid_site *cs,
                        gva_t site, const uint8_t *orig,
                        struct counter_ref counter)
{
    e->entry = e->n;
    bool cond;
    uint8_t cc;
    gva_t target = branch_of(cs, site, orig, &cond, &cc);
    if (!target || !put_span_pre(e, cs, site, orig))
        return false;
    /* A loop back to the span's first byte comes straight here. */
    gva_t loop = target == site ? e->at + e->entry : target;
    if (cond) {
        uint8_t jcc[2] = {0x0f, (uint8_t)(0x80 | cc)};
        put(e, jcc, 2);
        /* taken: past the rel32 and the jmp below */
        int32_t skip = 5;
        put(e, &skip, 4);
        put_jmp(e, site + cs->span);
    }
    static const uint8_t jz[2] = {0x74, 0x05};
    put_decq(e, counter);
    put(e, jz, 2);
    put_jmp(e, loop);
    put_trap(e, target); /* the trap: hvrun goes to target itself */
    return true;
}

/* A process's own trampoline (patch_one): plain, the counter absolute. */
static bool build(struct emitter *e, const struct proxy_cpuid_site *cs,
                  gva_t site, const uint8_t *orig, gva_t counter)
{
    e->n = 0;
    return build_plain(e, cs, site, orig,
                       (struct counter_ref){counter, false});
}

/*
 * An image's trampoline of the span orig (at site) at e->at, the counter
 * in the slot below the trampolines. With copies, the loop's body (the
 * text's bytes, body_len of them before the span) is copied in front of
 * the entry where it may be (build_with_body), and the decrement reaches
 * the slot RIP-relative. Without (a --gdb run: its breakpoints and steps
 * meet the text's instructions, and its checkpoints copy no memory shared
 * with hvrun), the plain trampoline at the same entry, the counter
 * COUNTER_GVA absolute. Both are made and the longer's length taken, so
 * that the text's jmps, the trampolines' places and /proc/self/maps are
 * the same in either run.
 */
static bool build_image_tramp(struct emitter *e,
                              const struct proxy_cpuid_site *cs, gva_t site,
                              const uint8_t *orig, gva_t slot,
                              const uint8_t *body, size_t body_len,
                              bool copies, bool group_ok,
                              size_t *group_made)
{
    struct emitter fast = {.at = e->at}, plain = {.at = e->at};
    struct counter_ref rip = {slot, true}, abs = {COUNTER_GVA, false};
    bool copied = body && build_with_body(&fast, cs, site, orig, rip, body,
                                          body_len, group_ok);
    if (!copied) {
        fast.n = 0;
        fast.group = 0;
        if (!build_plain(&fast, cs, site, orig, rip))
            return false;
    }
    memset(plain.b, 0xcc, fast.entry); /* int3 where the copy would be */
    plain.n = fast.entry;
    if (!build_plain(&plain, cs, site, orig, abs))
        return false;
    size_t n = fast.n > plain.n ? fast.n : plain.n;
    *e = copies ? fast : plain;
    memset(e->b + e->n, 0xcc, n - e->n);
    e->n = n;
    e->jnz_at = copies && copied ? fast.jnz_at : 0;
    e->group = copies && copied ? fast.group : 0;
    e->turn = copies && copied ? fast.turn : 0;
    *group_made = copied ? fast.group : 0; /* the same either way */
    return true;
}

static size_t nr_sites(const struct proxy_progress *s)
{
    return s->sites ? s->sites->nr : 0;
}

/* The list, s's own (copied from a shared one) with room for n more. */
static struct progress_sites *own_sites(struct proxy_progress *s, size_t n)
{
    struct progress_sites *l = s->sites;
    size_t nr = l ? l->nr : 0, cap = l && l->refs == 1 ? l->cap : 0;
    if (nr + n <= cap)
        return l;
    size_t want = cap ? cap * 2 : 256;
    if (want < nr + n)
        want = nr + n;
    size_t bytes = sizeof(*l) + want * sizeof(l->v[0]);
    struct progress_sites *c;
    if (l && l->refs == 1) {
        if (!(c = realloc(l, bytes)))
            return NULL;
    } else {
        if (!(c = malloc(bytes)))
            return NULL;
        if (l) {
            memcpy(c->v, l->v, nr * sizeof(l->v[0]));
            l->refs--;
        }
    }
    c->refs = 1;
    c->nr = nr;
    c->cap = want;
    s->sites = c;
    return c;
}

/* Appended in patching order: only mremap looks them up, rarely, and
 * checks each against the bytes it wrote (a stale entry for code mapped
 * over since names another jmp). Room made by own_sites. */
static void remember(struct proxy_progress *s, gva_t gva, uint8_t span,
                     const uint8_t *orig, const uint8_t *code)
{
    struct progress_site *ps = &s->sites->v[s->sites->nr++];
    ps->gva = gva;
    ps->span = span;
    memcpy(ps->orig, orig, span);
    memcpy(ps->code, code, span);
}

/* A buffer of hvrun's kept from one rewrite to the next: fresh memory of
 * a megabyte (a batch of libc's trampolines, its code range) costs a
 * page fault a page at every exec. */
struct scratch {
    uint8_t *b;
    size_t cap;
};

static uint8_t *scratch_get(struct scratch *sc, size_t len)
{
    if (len > sc->cap) {
        void *b = realloc(sc->b, len);
        if (!b)
            return NULL;
        sc->b = b;
        sc->cap = len;
    }
    return sc->b;
}

static struct scratch tramp_scratch, code_scratch;

/* The trampoline of one site into batch (the bytes of r from batch_at),
 * the site remembered with the jmp to it; false when it is left alone. */
static bool patch_one(struct proxy_process *p, struct proxy_progress *s,
                      const struct vmm_vma *v, const struct proxy_cpuid_site *cs,
                      gva_t site, struct progress_region *r, gva_t counter,
                      uint8_t *batch, gva_t batch_at)
{
    gva_t func = site - (cs->file_off - cs->func_off);
    uint8_t orig[MAX_SPAN];
    if (cs->span < 5 || cs->span > MAX_SPAN || func > site ||
        r->len - r->used < TRAMP_BYTES ||
        !proxy_code_maps_file_at(p, func, v->dev, v->ino, cs->func_off) ||
        !proxy_code_read(p, site, orig, cs->span) ||
        fnv1a(FNV_INIT, orig, cs->span) != cs->hash)
        return false;
    struct emitter e = {.at = r->gva + r->used};
    if (!build(&e, cs, site, orig, counter) ||
        !in_reach(e.at, site))
        return false;
    memcpy(batch + (e.at - batch_at), e.b, e.n);
    /* As long as it is (about 40 bytes): every page the guest's copy
     * touches costs a fault of hvrun's own. */
    r->used += (e.n + TRAMP_ALIGN - 1) & ~(size_t)(TRAMP_ALIGN - 1);
    uint8_t code[MAX_SPAN];
    int32_t rel = (int32_t)(int64_t)(e.at - (site + 5));
    code[0] = 0xe9;
    memcpy(code + 1, &rel, 4);
    memset(code + 5, 0x90, (size_t)(cs->span - 5));
    remember(s, site, cs->span, orig, code);
    return true;
}

/* hvrun's pages of guest [gva, gva+len), faulted in at once (for writing
 * when write) before a rewrite touches most of them: a fault per page
 * costs far more (libc's back edges lie on ~400 code pages, their
 * trampolines fill ~150), most of all in a VM. Only a hint: before Linux
 * 5.14 the pages fault one by one as before. */
static void prefault(const struct proxy_process *p, gva_t gva, uint64_t len,
                     bool write)
{
    /* File pages still the file's own (VMM_VMA_DIRECT) are about to be
     * written at every site: made private in one copy, not one a block. */
    if (!write)
        (void)vmm_as_materialise(p->as, gva, len);
#if defined(MADV_POPULATE_READ) && defined(MADV_POPULATE_WRITE)
    struct iovec iov[4];
    size_t covered;
    int n = vmm_as_host_iov(p->as, gva, len, 0, iov, 4, &covered);
    for (int i = 0; i < n; i++) {
        uintptr_t lo = (uintptr_t)iov[i].iov_base & VMM_PAGE_MASK;
        uintptr_t hi = (uintptr_t)iov[i].iov_base + iov[i].iov_len;
        (void)madvise((void *)lo, hi - lo,
                      write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
    }
#else
    (void)p;
    (void)gva;
    (void)len;
    (void)write;
#endif
}

/* The trampolines of one file VMA into the guest at once, then the jmps
 * to them (never a jmp to a trampoline not yet there). */
static void patch_batch(struct proxy_process *p, struct proxy_progress *s,
                        const struct vmm_vma *v, const struct file_sites *fs,
                        size_t first, size_t n, uint64_t flo, gva_t lo,
                        struct progress_region *r, gva_t counter)
{
    gva_t batch_at = r->gva + r->used;
    uint8_t *batch = scratch_get(&tramp_scratch, n * TRAMP_BYTES);
    if (!batch || !own_sites(s, n))
        return;
    memset(batch, 0, n * TRAMP_BYTES);
    prefault(p, lo + (fs->v[first].file_off - flo),
             fs->v[first + n - 1].file_off - fs->v[first].file_off, false);
    struct progress_sites *l = s->sites;
    size_t before = l->nr;
    for (size_t i = first; i < first + n; i++)
        (void)patch_one(p, s, v, &fs->v[i], lo + (fs->v[i].file_off - flo),
                        r, counter, batch, batch_at);
    prefault(p, batch_at, r->gva + r->used - batch_at, true);
    bool placed = r->gva + r->used == batch_at ||
                  proxy_code_poke(p, batch_at, batch,
                            (size_t)(r->gva + r->used - batch_at));
    if (!placed) {
        l->nr = before;
        return;
    }
    if (l->nr == before)
        return;
    /* The jmps in one write over the code they lie in: each write makes a
     * read-only backing writable for a moment (an mprotect and a TLB
     * flush of hvrun's own), too dear once per site. */
    gva_t from = l->v[before].gva;
    const struct progress_site *last = &l->v[l->nr - 1];
    size_t len = (size_t)(last->gva + last->span - from);
    uint8_t *code = scratch_get(&code_scratch, len);
    bool ok = code && vmm_as_peek(p->as, code, from, len) == 0;
    for (size_t i = before; ok && i < l->nr; i++)
        memcpy(code + (l->v[i].gva - from), l->v[i].code, l->v[i].span);
    /* A fresh copy (its backing read-only again after a refill: the poke
     * writes it all the same). */
    ok = ok && vmm_as_poke(p->as, from, code, len) == 0;
    if (!ok) {
        l->nr = before;
        return;
    }
    if (p->totals)
        p->totals->progress_sites += l->nr - before;
}

/* ---- images: a file's text rewritten once per run ------------------------
 *
 * Rewriting a library's back edges into each process's private copy of
 * its text cost a process start as much again (libc's ~15,000 sites, its
 * text copied and its trampolines written at every exec). So the first
 * process of a run that maps a file's text (a whole VMA, still the file's
 * own pages: VMM_VMA_DIRECT) has it rewritten into an image, a sealed
 * memfd of hvrun's: [0, len) the text with its jmps, then the trampolines.
 * Every process maps the image where it maps that text, as it maps an
 * unwritten file (VMM_VMA_DIRECT: shared, copied only where written).
 *
 * What makes one image serve every process: its bytes depend only on the
 * file (dev, inode, size, mtime, ctime: the sites' cache entry and
 * image_key), the mapping's offset and length, and where the trampolines
 * lie relative to the text. Every displacement in them and in the jmps is
 * relative (the spans' RIP-relative ones moved with them, the jmps back
 * to the code), but for the counter, whose address (COUNTER_GVA) is the
 * same everywhere. So the trampolines are put at a fixed distance below
 * the text (tramp_below): in the first process just below the lowest
 * mapping of the same file next to the text (where ld.so reserved the
 * library's extent: mmap's next pick would lie there), and in every other
 * process at the same distance, when that range is free. When it is not
 * (or the text is not one direct VMA of the file: a CPUID/RDTSC site was
 * rewritten there first), the process has its own rewrite as before.
 * Either way, what the guest reads of its code and of /proc/self/maps is
 * what the per-process rewrite gave it: the same jmps, an
 * [hvrun-progress] mapping of the trampolines.
 */
struct progress_image {
    struct progress_image *next;
    /* Its text_above_base 0: the run's images are found without it. */
    struct progress_image_key key;
    uint64_t tramp_below, tramp_len;
    struct vmm_shared *obj; /* NULL: making it failed (not tried again) */
    uint64_t text_off; /* the text's offset in obj (a cache file's: past
                          its header) */
    struct progress_site *sites; /* gva: the offset in the text */
    size_t nr_sites;
    /* A cached image's sites, read from obj at the first mremap. */
    uint64_t sites_off;
};

static struct progress_image *images;

static uint64_t ns_of(struct timespec t)
{
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static struct progress_image_key image_key(const struct stat *st,
                                           bool cpuid_patching, bool copies,
                                           uint64_t file_off, uint64_t len)
{
    return (struct progress_image_key){
        .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
        .size = (uint64_t)st->st_size, .mtime_ns = ns_of(st->st_mtim),
        .ctime_ns = ns_of(st->st_ctim), .file_off = file_off, .len = len,
        .cpuid_patching = cpuid_patching, .loop_copies = copies,
        .counter_gva = COUNTER_GVA,
        .tramp_align = TRAMP_ALIGN,
        .site_bytes = sizeof(struct progress_site)};
}

static struct progress_image *image_find(const struct progress_image_key *k)
{
    for (struct progress_image *i = images; i; i = i->next)
        if (!memcmp(&i->key, k, sizeof(*k)))
            return i;
    return NULL;
}

static struct progress_image *image_new(const struct progress_image_key *k)
{
    struct progress_image *img = calloc(1, sizeof(*img));
    if (!img)
        return NULL;
    img->key = *k;
    img->next = images;
    images = img;
    return img;
}

/* The sites of img (a cached image's read now); NULL when they cannot
 * be read. */
static const struct progress_site *image_sites(struct progress_image *img)
{
    if (img->sites || !img->obj || !img->sites_off)
        return img->sites;
    size_t bytes = img->nr_sites * sizeof(*img->sites);
    struct progress_site *v = malloc(bytes);
    if (v && pread(img->obj->fd, v, bytes, (off_t)img->sites_off) ==
                 (ssize_t)bytes)
        return img->sites = v;
    free(v);
    return NULL;
}

/* The lowest start of the mappings of v's file just below lo, one after
 * another without a gap (the library's first segments). */
static gva_t file_base_below(const struct proxy_process *p,
                             const struct vmm_vma *v, gva_t lo)
{
    gva_t base = lo;
    const struct vmm_vma *w;
    while ((w = vmm_as_prev_vma(p->as, base)) && w->end == base &&
           (w->flags & VMM_VMA_FILE) && !w->shared && w->dev == v->dev &&
           w->ino == v->ino)
        base = w->start;
    return base;
}

/* Whether [off, off+len) of the file meets a CPUID/RDTSC site's bytes
 * (cpuid_patch.c rewrites those after the image is mapped, and today's
 * order gives them the bytes: a back edge over one is left alone). */
static bool overlaps_cpuid_site(const struct file_sites *cfs, uint64_t off,
                                uint64_t len)
{
    if (!cfs)
        return false;
    /* Sorted by file_off; a site's bytes lie within MAX_SPAN of it. */
    size_t a = 0, b = cfs->nr;
    uint64_t from = off > MAX_SPAN ? off - MAX_SPAN : 0;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (cfs->v[m].file_off < from)
            a = m + 1;
        else
            b = m;
    }
    for (size_t i = a; i < cfs->nr && cfs->v[i].file_off < off + len + MAX_SPAN;
         i++) {
        const struct proxy_cpuid_site *c = &cfs->v[i];
        uint64_t lo = c->file_off - c->pre;
        uint64_t hi = c->file_off + (c->span > c->len ? c->span : c->len);
        if (lo < off + len && off < hi)
            return true;
    }
    return false;
}

/* The bytes of the loop's body before the span of cs at site (the text
 * [lo, ...) in text), when they may be copied into its trampoline: the
 * body [target, site) short, in the site's function, none of its bytes
 * rewritten (a span before it, from pristine_from on, or a CPUID/RDTSC
 * site's); NULL otherwise. */
static const uint8_t *copyable_body(const struct proxy_cpuid_site *cs,
                                    const struct file_sites *cfs, gva_t site,
                                    gva_t func, gva_t lo, gva_t pristine_from,
                                    const uint8_t *text, size_t *body_len)
{
    bool cond;
    uint8_t cc;
    gva_t target = branch_of(cs, site, text + (site - lo), &cond, &cc);
    if (!target || target >= site || site - target > PROGRESS_COPY_MAX ||
        target < func || target < pristine_from ||
        overlaps_cpuid_site(cfs, cs->file_off - (site - target),
                            site - target))
        return NULL;
    *body_len = (size_t)(site - target);
    return text + (target - lo);
}

/* The bytes an image of n sites may give its groups (build_group). */
static uint64_t group_budget(size_t n)
{
    uint64_t b = (uint64_t)n * GROUP_BUDGET_SITE;
    b = b > GROUP_BUDGET_LEAST ? b : GROUP_BUDGET_LEAST;
    return b < GROUP_BUDGET_MOST ? b : GROUP_BUDGET_MOST;
}

/* The trampolines of the sites [first, first+n) of fs at tramp (written
 * from tramp_at), their jmps into text (the file's bytes of [lo, lo+len)),
 * the sites kept in img; the bytes of trampolines used. With copies, a
 * short loop's body is copied into its trampoline (progress_copy.c). */
static uint64_t image_build(struct progress_image *img,
                            const struct file_sites *fs,
                            const struct file_sites *cfs, size_t first,
                            size_t n, uint64_t flo, gva_t lo, uint8_t *text,
                            uint8_t *tramp, gva_t tramp_at, bool copies)
{
    uint64_t used = 0, group_bytes = 0;
    gva_t pristine_from = lo;
    /* the counter's slot just below the trampolines (image_map) */
    gva_t slot = tramp_at - VMM_PAGE_SIZE;
    img->nr_sites = 0;
    for (size_t i = first; i < first + n; i++) {
        const struct proxy_cpuid_site *cs = &fs->v[i];
        gva_t site = lo + (cs->file_off - flo);
        gva_t func = site - (cs->file_off - cs->func_off);
        uint8_t *orig = text + (site - lo);
        if (cs->span < 5 || cs->span > MAX_SPAN || func > site || func < lo ||
            site + cs->span > lo + img->key.len ||
            overlaps_cpuid_site(cfs, cs->file_off, cs->span) ||
            fnv1a(FNV_INIT, orig, cs->span) != cs->hash)
            continue;
        size_t body_len = 0;
        const uint8_t *body = copyable_body(cs, cfs, site, func, lo,
                                            pristine_from, text, &body_len);
        struct emitter e = {.at = tramp_at + used};
        bool group_ok = group_bytes + GROUP_BYTES_MAX <= group_budget(n);
        size_t group_made;
        if (!build_image_tramp(&e, cs, site, orig, slot, body, body_len,
                               copies, group_ok, &group_made) ||
            !in_reach(e.at, site))
            continue;
        group_bytes += group_made;
        pristine_from = site + cs->span;
        if (tramp)
            memcpy(tramp + used, e.b, e.n);
        used += (e.n + TRAMP_ALIGN - 1) & ~(uint64_t)(TRAMP_ALIGN - 1);
        if (!img->sites)
            continue; /* the sizing pass */
        struct progress_site *ps = &img->sites[img->nr_sites++];
        ps->gva = site - lo;
        ps->span = cs->span;
        ps->body = e.jnz_at ? (uint16_t)(e.entry - e.group) : 0;
        ps->jnz_at = (uint8_t)e.jnz_at;
        ps->group = e.jnz_at ? (uint16_t)e.group : 0;
        ps->turn = ps->group ? (uint8_t)e.turn : 0;
        memcpy(ps->orig, orig, cs->span);
        int32_t rel = (int32_t)(int64_t)(e.at + e.entry - (site + 5));
        ps->code[0] = 0xe9;
        memcpy(ps->code + 1, &rel, 4);
        memset(ps->code + 5, 0x90, (size_t)(cs->span - 5));
        memcpy(orig, ps->code, cs->span);
    }
    return used;
}

/* What build() makes of cs at most: its span's other instructions, the
 * taken test (a conditional branch's), the count and the trap, each kept
 * 8-aligned; never less than TRAMP_LEAST. */
#define TRAMP_LEAST 40
static uint64_t tramp_bytes_at_most(const struct proxy_cpuid_site *cs)
{
    /* an image's: at most a body, then the plain trampoline */
    uint64_t bytes =
        (uint64_t)(cs->span - cs->len) + 11 + 22 + PROGRESS_COPY_MAX;
    return (bytes + TRAMP_ALIGN - 1) & ~(uint64_t)(TRAMP_ALIGN - 1);
}

/* The image's memfd, sealed: its size set, no one writes it again (a
 * guest's write copies the page first). */
static struct vmm_shared *image_seal(int memfd, uint64_t size)
{
    bool ok = ftruncate(memfd, (off_t)size) == 0 &&
              fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
                                            F_SEAL_WRITE | F_SEAL_SEAL) == 0;
    return ok ? vmm_image_new(memfd) : NULL;
}

/* [0, len) of map: the file's bytes from flo (zeros past its end). */
static bool read_text(int fd, uint8_t *map, uint64_t len, uint64_t flo)
{
    for (uint64_t done = 0; done < len;) {
        ssize_t got = pread(fd, map + done, len - done, (off_t)(flo + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return false;
        if (got == 0)
            break; /* past the file's end: the memfd's zeros */
        done += (uint64_t)got;
    }
    return true;
}

/* The trampolines' room below the file's mappings (base: their lowest
 * start) for trampolines of `most` bytes at most: whether it is free. */
static bool room_below(const struct proxy_process *p, gva_t base,
                       uint64_t most)
{
    return base > most && vmm_as_range_free(p->as, base - most, most);
}

/* Where trampolines of tramp_len bytes lie for a text at lo in a file
 * whose mappings start at base; 0 when that range is not free. */
static gva_t tramp_at(const struct proxy_process *p, gva_t base,
                      uint64_t tramp_len, gva_t lo, uint64_t slot)
{
    gva_t at = base - tramp_len;
    return tramp_len && at > slot &&
                   vmm_as_range_free(p->as, at - slot, tramp_len + slot) &&
                   in_reach(at, lo)
               ? at
               : 0;
}



/* Keeps img, just made in the memfd's map, in hvrun's cache for later
 * runs (as hvrun, whoever the guest is). */
static void image_keep(const struct progress_image *img, uint64_t most,
                       uint64_t above_base, const uint8_t *map)
{
    struct progress_image_key k = img->key;
    k.text_above_base = above_base;
    struct progress_image_layout l = {.most = most,
                                      .tramp_len = img->tramp_len,
                                      .nr_sites = img->nr_sites};
    const struct proxy_process *as_guest = proxy_fscred_suspend();
    progress_image_cache_store(&k, &l, map, img->sites);
    proxy_fscred_resume(as_guest);
}

/* Makes img (its key set) from the file of v, whose [lo, lo+len) is the
 * text, in this process: trampolines placed just below the file's
 * mappings. Written in place in the memfd's pages (a text of megabytes:
 * no buffer of hvrun's to fault in, clear and copy again), then kept in
 * the cache. False when there is no room there or something failed. */
static bool image_make(struct proxy_process *p, struct progress_image *img,
                       const struct vmm_vma *v, const struct file_sites *fs,
                       const struct file_sites *cfs, size_t first, size_t n,
                       uint64_t flo, gva_t lo)
{
    /* No room below for the trampolines at their longest (a non-PIE
     * program's 20 MiB of text just above 4 MiB): nothing read. */
    gva_t base = file_base_below(p, v, lo);
    uint64_t most = 0;
    bool copies = img->key.loop_copies != 0;
    /* Each at least TRAMP_LEAST: a text too large fails here unwalked. */
    if (base <= (uint64_t)n * TRAMP_LEAST)
        return false;
    for (size_t i = first; i < first + n; i++)
        most += tramp_bytes_at_most(&fs->v[i]);
    most += group_budget(n); /* image_build stops making groups there */
    most = ((most + VMM_PAGE_SIZE - 1) & VMM_PAGE_MASK) + SLOT_BYTES;
    int fd = vmm_vma_file_fd(v);
    if (fd < 0 || !room_below(p, base, most))
        return false;
    uint64_t len = img->key.len;
    int memfd = memfd_create("hvrun-progress-image",
                             MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd < 0)
        return false;
    uint8_t *map = ftruncate(memfd, (off_t)(len + most)) == 0
                       ? mmap(NULL, len + most, PROT_READ | PROT_WRITE,
                              MAP_SHARED, memfd, 0)
                       : MAP_FAILED;
    bool ok = map != MAP_FAILED && read_text(fd, map, len, flo);
    img->sites = NULL;
    /* Sizes do not depend on where the trampolines lie: sized first. */
    uint64_t used = ok ? image_build(img, fs, cfs, first, n, flo, lo, map,
                                     NULL, base - most, copies)
                       : 0;
    uint64_t tramp_len = (used + VMM_PAGE_SIZE - 1) & VMM_PAGE_MASK;
    gva_t at = tramp_at(p, base, tramp_len, lo, SLOT_BYTES);
    ok = ok && at && (img->sites = calloc(n, sizeof(*img->sites)));
    if (ok)
        (void)image_build(img, fs, cfs, first, n, flo, lo, map, map + len,
                          at, copies);
    img->tramp_below = lo - at;
    img->tramp_len = tramp_len;
    if (ok && img->nr_sites)
        image_keep(img, most, lo - base, map);
    if (map != MAP_FAILED)
        munmap(map, len + most);
    img->obj = ok && img->nr_sites ? image_seal(memfd, len + tramp_len)
                                   : NULL;
    close(memfd);
    return img->obj != NULL;
}

/* img (its key set) from fd, the image an earlier run kept for v's
 * text at lo (layout l) in a file whose mappings start at base: the same
 * checks of room as image_make's, so that the run goes as when it makes
 * the image (img->obj stays NULL when they fail). */
static void image_load(struct proxy_process *p, const struct vmm_vma *v,
                       struct progress_image *img, gva_t lo, gva_t base,
                       int fd, const struct progress_image_layout *l)
{
    gva_t at = 0;
    if (vmm_vma_file_fd(v) >= 0 && room_below(p, base, l->most))
        at = tramp_at(p, base, l->tramp_len, lo, SLOT_BYTES);
    if (!at)
        return;
    img->tramp_below = lo - at;
    img->tramp_len = l->tramp_len;
    img->nr_sites = l->nr_sites;
    img->sites_off = l->sites_off;
    img->text_off = PROGRESS_IMAGE_TEXT_OFF;
    img->obj = vmm_image_new(fd);
}

/* This space maps img: its trampolines below lo (or the ones there,
 * img's already: a library mapped again where it was), its text at lo. */
static bool image_map(struct proxy_process *p, struct proxy_progress *s,
                      struct progress_image *img, gva_t lo)
{
    gva_t at = lo - img->tramp_below;
    const struct vmm_vma *t = vmm_as_find_vma(p->as, at);
    uint64_t tramp_off = img->text_off + img->key.len;
    bool there = t && t->start == at && t->end == at + img->tramp_len &&
                 t->image == img->obj && t->image_off == tramp_off;
    void *grown = realloc(s->uses, (s->nr_uses + 1) * sizeof(*s->uses));
    if (!grown)
        return false;
    s->uses = grown;
    uint64_t slot = SLOT_BYTES;
    if (there && slot && !is_special(p, at - slot, COUNTER_NAME))
        return false;
    if (!there &&
        (at >= lo || at <= slot ||
         !vmm_as_range_free(p->as, at - slot, img->tramp_len + slot) ||
         (slot && !slot_map(p, s, at - slot))))
        return false;
    if (!there && vmm_as_map_image(p->as, at, img->tramp_len,
                                   PROT_READ | PROT_EXEC, VMM_VMA_SPECIAL,
                                   REGION_NAME, img->obj, tramp_off) < 0) {
        (void)vmm_as_unmap(p->as, at - slot, slot);
        return false;
    }
    if (vmm_as_direct_image(p->as, lo, img->key.len, img->obj,
                            img->text_off) < 0) {
        if (!there)
            (void)vmm_as_unmap(p->as, at - slot, img->tramp_len + slot);
        return false;
    }
    s->uses[s->nr_uses++] = (struct image_use){lo, img};
    return true;
}

/* Whether v's [lo, hi) may be mapped from an image: the whole VMA,
 * still its file's own pages. */
static bool image_fits(const struct vmm_vma *v, gva_t lo, gva_t hi)
{
    return v->start == lo && v->end == hi && (v->flags & VMM_VMA_DIRECT) &&
           !v->image && v->file;
}

/* This space maps img (its obj made) at lo, or rewrites its own copy
 * later (false). */
static bool image_use(struct proxy_process *p, struct proxy_progress *s,
                      const struct vmm_vma *v, struct progress_image *img,
                      gva_t lo)
{
    if (!img->obj || !image_map(p, s, img, lo))
        return false;
    proxy_log(p, 2, "progress: %zu back edges of %s in [%#llx, %#llx) "
                    "from the run's image%s",
              img->nr_sites, v->name ? v->name : "?", (unsigned long long)lo,
              (unsigned long long)(lo + img->key.len),
              img->text_off ? " (the cache's)" : "");
    if (p->totals)
        p->totals->progress_sites += img->nr_sites;
    return true;
}

/* The sites [first, first+n) of fs in v, which is [lo, hi), from the
 * run's image of that text, made now (the run has none yet: image_known);
 * false when this process must rewrite its own copy. */
static bool patch_from_image(struct proxy_process *p, struct proxy_progress *s,
                             const struct vmm_vma *v,
                             const struct progress_image_key *k,
                             const struct file_sites *fs,
                             const struct file_sites *cfs, size_t first,
                             size_t n, gva_t lo)
{
    struct progress_image *img;
    if (!image_fits(v, lo, lo + k->len) || image_find(k) ||
        !(img = image_new(k)) ||
        !image_make(p, img, v, fs, cfs, first, n, k->file_off, lo))
        return false;
    return image_use(p, s, v, img, lo);
}


/*
 * The text [lo, hi) of v (a fresh copy of the file open as fd, whose
 * identity st is) from an image known without its sites: the run's (a
 * process before made it, or failed to), or one an earlier run kept in
 * the cache. True when that decided (the text mapped from it, or left to
 * the process's own rewrite as the run's first decided); false when the
 * image is to be made from the sites. *k: the run's key of the text.
 */
static bool image_known(struct proxy_process *p, int fd,
                        const struct vmm_vma *v, const struct stat *st,
                        gva_t lo, gva_t hi, struct progress_image_key *k)
{
    bool cpuid = proxy_cpuid_patching(p);
    *k = image_key(st, cpuid, loop_copies(p), v->file_off + (lo - v->start),
                   hi - lo);
    /* (what making it asks first: the CPUID sites are the file's) */
    if (!image_fits(v, lo, hi) || (cpuid && !proxy_cpuid_sites_of(fd)))
        return false;
    struct progress_image *img = image_find(k);
    struct progress_image_layout l;
    gva_t base = file_base_below(p, v, lo);
    int cached = -1;
    if (!img) {
        struct progress_image_key ck = *k;
        ck.text_above_base = lo - base;
        const struct proxy_process *as_guest = proxy_fscred_suspend();
        cached = progress_image_cache_open(&ck, &l);
        proxy_fscred_resume(as_guest);
        if (cached < 0)
            return false;
    }
    /* From here as when the sites were read: a counter, then the image. */
    struct proxy_progress *s = state(p, true);
    if (s && counter_for(p, s)) {
        if (!img && (img = image_new(k)))
            image_load(p, v, img, lo, base, cached, &l);
        if (img)
            (void)image_use(p, s, v, img, lo);
    }
    if (cached >= 0)
        close(cached);
    return true;
}

/* The sites of file VMA v in [lo, hi), a fresh copy of the file. */
static void patch_vma(struct proxy_process *p, int host_fd,
                      const struct vmm_vma *v, gva_t lo, gva_t hi,
                      bool from_image)
{
    int fd = host_fd;
    const struct proxy_process *as_guest = proxy_fscred_suspend();
    if (fd < 0 && v->name)
        fd = openat(p->fs.cwd_fd, v->name, O_RDONLY | O_CLOEXEC);
    proxy_fscred_resume(as_guest);
    if (fd < 0)
        return;
    struct stat st;
    struct progress_image_key key;
    const struct file_sites *fs = NULL, *cfs = NULL;
    bool known = fstat(fd, &st) == 0;
    if (known)
        proxy_hooks.file_tap_restat(p, &st); /* a replay's copy */
    known = known && st.st_dev == v->dev && st.st_ino == v->ino;
    /* An image the run has, or the cache: no sites to read (libc's list
     * alone is 1 MB). */
    if (known && from_image && image_known(p, fd, v, &st, lo, hi, &key))
        known = false;
    else if (known)
        fs = proxy_progress_sites_of(fd);
    /* The CPUID/RDTSC sites the image must leave to cpuid_patch.c */
    if (fs && from_image && proxy_cpuid_patching(p) &&
        !(cfs = proxy_cpuid_sites_of(fd)))
        fs = NULL;
    if (fd != host_fd)
        close(fd);
    if (!fs || fs->nr == 0)
        return;
    uint64_t flo = v->file_off + (lo - v->start), fhi = flo + (hi - lo);
    size_t first = 0, n = 0, past = fs->nr;
    while (first < past) { /* sorted by file_off: cc1 has 150,000 */
        size_t mid = first + (past - first) / 2;
        if (fs->v[mid].file_off < flo)
            first = mid + 1;
        else
            past = mid;
    }
    /* The sites from first on up to the first whose span does not end
     * by fhi. Found by a binary search too (walking cc1's was a tenth of
     * gcc -c's CPU time): those that start below fhi, then the first of
     * them to cross it among the last (a span is at most 255 bytes). */
    for (past = fs->nr; first + n < past;) {
        size_t mid = first + n + (past - first - n) / 2;
        if (fs->v[mid].file_off < fhi)
            n = mid + 1 - first;
        else
            past = mid;
    }
    size_t near = first + n;
    while (near > first && fs->v[near - 1].file_off + 255 > fhi)
        near--;
    for (; near < first + n; near++)
        if (fs->v[near].file_off + fs->v[near].span > fhi) {
            n = near - first;
            break;
        }
    struct proxy_progress *s = state(p, true);
    if (n == 0 || !s || !counter_for(p, s))
        return;
    if (from_image) {
        (void)patch_from_image(p, s, v, &key, fs, cfs, first, n, lo);
        return;
    }
    struct progress_region *r = region_for(p, s, lo, hi, n);
    /* region_for may have moved the array: r stays valid until the next */
    gva_t counter = r ? counter_for(p, s) : 0;
    if (!r || !counter)
        return;
    proxy_log(p, 2, "progress: %zu back edges of %s in [%#llx, %#llx)", n,
              v->name ? v->name : "?", (unsigned long long)lo,
              (unsigned long long)hi);
    patch_batch(p, s, v, fs, first, n, flo, lo, r, counter);
}

/* Whether gva lies in a text this space maps from an image (the image's
 * pages, or copies of them a write made: rewritten already). */
static bool in_image_text(struct proxy_process *p, gva_t gva)
{
    struct proxy_progress *s = state(p, false);
    for (size_t i = 0; s && i < s->nr_uses; i++)
        if (gva >= s->uses[i].text &&
            gva - s->uses[i].text < s->uses[i].img->key.len)
            return true;
    return false;
}

static void patch_fresh(struct proxy_process *p, int host_fd, uint64_t gva,
                        uint64_t len, bool from_image)
{
    if (!p->cfg->progress_count || len == 0)
        return;
    const struct vmm_vma *next;
    for (gva_t at = gva; at < gva + len &&
                         (next = vmm_as_next_vma(p->as, at)) &&
                         next->start < gva + len;) {
        struct vmm_vma v = *next;
        at = v.end;
        gva_t lo = v.start > gva ? v.start : gva;
        gva_t hi = v.end < gva + len ? v.end : gva + len;
        if (lo >= hi || !(v.flags & VMM_VMA_FILE) ||
            (v.flags & VMM_VMA_SHARED) || v.shared ||
            in_image_text(p, lo))
            continue;
        patch_vma(p, host_fd, &v, lo, hi, from_image);
    }
}

/* The uses whose text meets [gva, gva+len) go: mapped over (a library
 * closed and another, or the same again, opened there) or moved away. */
static void forget_uses(struct proxy_process *p, gva_t gva, uint64_t len)
{
    struct proxy_progress *s = state(p, false);
    size_t kept = 0;
    for (size_t i = 0; s && i < s->nr_uses; i++) {
        const struct image_use *u = &s->uses[i];
        if (u->text < gva + len && gva < u->text + u->img->key.len)
            continue;
        s->uses[kept++] = *u;
    }
    if (s)
        s->nr_uses = kept;
}

void proxy_progress_image_fresh(struct proxy_process *p, int host_fd,
                                uint64_t gva, uint64_t len)
{
    if (!p->cfg->progress_count || len == 0)
        return;
    forget_uses(p, gva, len); /* what was there is gone */
    patch_fresh(p, host_fd, gva, len, true);
}

void proxy_progress_patch_fresh(struct proxy_process *p, int host_fd,
                                uint64_t gva, uint64_t len)
{
    patch_fresh(p, host_fd, gva, len, false);
}

/* ---- mremap, fork, exec, exit ------------------------------------------------- */

/* ---- copied bodies and the text they stand for ------------------------------ */

/* The use of an image whose trampolines hold gva, or NULL. */
static const struct image_use *use_of_tramp(const struct proxy_progress *s,
                                            gva_t gva)
{
    for (size_t i = 0; i < s->nr_uses; i++) {
        const struct image_use *u = &s->uses[i];
        gva_t at = u->text - u->img->tramp_below;
        if (gva >= at && gva - at < u->img->tramp_len)
            return u;
    }
    return NULL;
}

/* Where the site's jmp leads in its trampoline. */
static gva_t entry_of(const struct image_use *u, const struct progress_site *ps)
{
    int32_t rel;
    memcpy(&rel, ps->code + 1, 4);
    return u->text + ps->gva + 5 + (gva_t)(int64_t)rel;
}

/* The site among v[0..nr) whose copied body holds gva ([entry - body,
 * entry]: the copy, and its end, which stands for the span's jmp), or
 * NULL. The trampolines lie in the sites' order. */
static const struct progress_site *copy_holding(const struct image_use *u,
                                                const struct progress_site *v,
                                                size_t nr, gva_t gva)
{
    size_t lo = 0, hi = nr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (entry_of(u, &v[mid]) < gva)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == nr || !v[lo].body)
        return NULL;
    return gva >= entry_of(u, &v[lo]) - v[lo].body - v[lo].group ? &v[lo]
                                                                  : NULL;
}

/* A thread at gva in ps's group: the text's address it stands for, the
 * count it has not settled yet added back to the slot (the head took
 * GROUP_TURNS for the whole group). false: gva is in no turn (the head,
 * a way-out, the undo), where the thread is left. */
static bool group_home(struct proxy_process *p, const struct image_use *u,
                       const struct progress_site *ps, gva_t gva,
                       gva_t *text_gva)
{
    gva_t first = entry_of(u, ps) - ps->body - ps->group + GROUP_HEAD_BYTES;
    size_t turn = ps->turn;
    if (!ps->group || !turn || gva < first || gva >= first + GROUP_TURNS * turn)
        return false;
    size_t t = (size_t)(gva - first) / turn, off = (size_t)(gva - first) % turn;
    gva_t slot = u->text - u->img->tramp_below - SLOT_BYTES;
    uint64_t left;
    if (!read_word(p, slot, &left))
        return false;
    left += GROUP_TURNS - t;
    (void)vmm_as_poke(p->as, slot, &left, 8);
    *text_gva = u->text + ps->gva - ps->body + off;
    return true;
}

bool proxy_progress_home(struct proxy_process *p)
{
    struct proxy_progress *s = state(p, false);
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    if (!s || s->nr_uses == 0 || !is_special(p, r->rip, REGION_NAME))
        return false;
    const struct image_use *u = use_of_tramp(s, r->rip);
    const struct progress_site *v = u ? image_sites(u->img) : NULL;
    const struct progress_site *ps =
        v ? copy_holding(u, v, u->img->nr_sites, r->rip) : NULL;
    if (!ps)
        return false;
    if (r->rip < entry_of(u, ps) - ps->body) {
        gva_t text_gva;
        if (!group_home(p, u, ps, r->rip, &text_gva))
            return false;
        r->rip = text_gva;
        return true;
    }
    /* the same offset from the span in the text as from the entry here */
    r->rip = u->text + ps->gva - (entry_of(u, ps) - r->rip);
    return true;
}

/* The copy of ps (a site of u) no longer taken: its jnz leads to the
 * loop's head in the text. */
static void copy_retire(struct proxy_process *p, const struct image_use *u,
                        const struct progress_site *ps)
{
    gva_t jnz = entry_of(u, ps) + ps->jnz_at;
    gva_t head = u->text + ps->gva - ps->body;
    int32_t rel = (int32_t)(int64_t)(head - (jnz + 6));
    uint8_t now[6];
    if (proxy_code_read(p, jnz, now, sizeof(now)) && now[0] == 0x0f &&
        now[1] == 0x85)
        (void)proxy_code_poke(p, jnz + 2, &rel, 4);
    /* A group's head is reached from its own last turn too: it becomes a
     * jmp to the text's head (its subq not yet run, nothing to settle). */
    gva_t group = entry_of(u, ps) - ps->body - ps->group;
    uint8_t jmp[5] = {0xe9};
    rel = (int32_t)(int64_t)(head - (group + 5));
    memcpy(jmp + 1, &rel, 4);
    if (ps->group && proxy_code_read(p, group, now, 3) && now[0] == 0x48 &&
        now[1] == 0x83 && now[2] == 0x2d)
        (void)proxy_code_poke(p, group, jmp, sizeof(jmp));
}

void proxy_progress_written(struct proxy_process *p, uint64_t gva,
                            uint64_t len)
{
    struct proxy_progress *s = state(p, false);
    for (size_t i = 0; s && len && i < s->nr_uses; i++) {
        const struct image_use *u = &s->uses[i];
        uint64_t tlen = u->img->key.len;
        if (gva >= u->text + tlen || gva + len <= u->text)
            continue;
        const struct progress_site *v = image_sites(u->img);
        size_t nr = v ? u->img->nr_sites : 0;
        /* a body lies within PROGRESS_COPY_MAX before its site */
        uint64_t from = gva > u->text ? gva - u->text : 0;
        uint64_t to = gva + len - u->text + PROGRESS_COPY_MAX;
        size_t lo = 0, hi = nr;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v[mid].gva < from)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < nr && v[lo].gva <= to; lo++) {
            gva_t site = u->text + v[lo].gva;
            if (v[lo].body && site > gva && site - v[lo].body < gva + len)
                copy_retire(p, u, &v[lo]);
        }
    }
}

/* Site ps (at base + ps->gva) moved with [old, old+old_len) to new_gva:
 * its span gets the file's bytes back where it still holds the jmp. */
static void put_back(struct proxy_process *p, const struct progress_site *ps,
                     gva_t base, gva_t old, uint64_t old_len, gva_t new_gva)
{
    gva_t at = base + ps->gva;
    if (at < old || at + ps->span > old + old_len)
        return;
    gva_t now = new_gva + (at - old);
    uint8_t b[MAX_SPAN];
    if (proxy_code_read(p, now, b, ps->span) &&
        memcmp(b, ps->code, ps->span) == 0)
        (void)proxy_code_poke(p, now, ps->orig, ps->span);
}

void proxy_progress_remapped(struct proxy_process *p, uint64_t old,
                             uint64_t old_len, uint64_t new_gva)
{
    struct proxy_progress *s = state(p, false);
    if (!s || old == new_gva)
        return;
    /* A jmp rel32 moved lands elsewhere: the moved spans get their own
     * bytes back, and count nothing. */
    for (size_t i = 0; i < nr_sites(s); i++)
        put_back(p, &s->sites->v[i], 0, old, old_len, new_gva);
    for (size_t u = 0; u < s->nr_uses; u++) {
        const struct image_use *use = &s->uses[u];
        if (use->text < old || use->text >= old + old_len)
            continue;
        const struct progress_site *sites = image_sites(use->img);
        for (size_t i = 0; sites && i < use->img->nr_sites; i++)
            put_back(p, &sites[i], use->text, old, old_len, new_gva);
    }
    forget_uses(p, old, old_len);
}

struct proxy_progress *proxy_progress_copy(const struct proxy_progress *s)
{
    if (!s)
        return NULL;
    struct proxy_progress *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    *c = *s;
    c->counters = NULL;
    c->regions = NULL;
    c->uses = NULL;
    /* the parent's until proxy_progress_forked gives the child its own */
    c->counter_obj = s->counter_obj ? vmm_shared_get(s->counter_obj) : NULL;
    c->armed = c->goes_on = false;
    if ((s->nr_counters &&
         !(c->counters = malloc(s->nr_counters * sizeof(gva_t)))) ||
        (s->nr_regions &&
         !(c->regions = malloc(s->nr_regions * sizeof(*s->regions)))) ||
        (s->nr_uses && !(c->uses = malloc(s->nr_uses * sizeof(*s->uses))))) {
        c->sites = NULL;
        proxy_progress_free(c);
        return NULL;
    }
    if (s->nr_counters)
        memcpy(c->counters, s->counters, s->nr_counters * sizeof(gva_t));
    if (s->nr_regions)
        memcpy(c->regions, s->regions, s->nr_regions * sizeof(*s->regions));
    if (s->nr_uses)
        memcpy(c->uses, s->uses, s->nr_uses * sizeof(*s->uses));
    if (c->sites) /* shared until one of the two patches more */
        c->sites->refs++;
    return c;
}

/* The child's counter pages (COUNTER_GVA and the slots) map the parent's
 * object after the fork's copy of its memory (MAP_SHARED memory stays
 * shared): each space counts on its own, so the child's get a fresh one
 * (hvrun sets its value before the child runs). */
int proxy_progress_forked(struct proxy_process *child)
{
    struct proxy_progress *s = state(child, false);
    if (!s || !s->counter_obj)
        return 0;
    struct vmm_shared *old = s->counter_obj, *obj = counter_object();
    if (!obj)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < child->as->nr_vmas; i++) {
        const struct vmm_vma *v = child->as->vmas[i];
        if (v->shared == old)
            rc = vmm_as_attach_shared(child->as, v->start, v->end - v->start,
                                      obj, 0);
    }
    s->counter_obj = obj;
    vmm_shared_put(old);
    return rc;
}

void proxy_progress_free(struct proxy_progress *s)
{
    if (!s)
        return;
    vmm_shared_put(s->counter_obj);
    free(s->counters);
    free(s->regions);
    free(s->uses);
    if (s->sites && --s->sites->refs == 0)
        free(s->sites);
    free(s);
}
