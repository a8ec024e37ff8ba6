/*
 * gdbserver_target.c - guest state in gdb's terms: the x86-64 target
 * description (general, x87, SSE, AVX upper halves, orig_rax, fs/gs base),
 * the 'g' block made from and written back to a thread's registers and
 * XSAVE image through the paths guest ptrace uses (kernel/ptrace_regs.c),
 * and the auxiliary vector.
 *
 * The 'g' block follows the description's register order:
 *   0-15 rax rbx rcx rdx rsi rdi rbp rsp r8-r15 (8 bytes), 16 rip (8),
 *   17 eflags, 18-23 cs ss ds es fs gs (4), 24-31 st0-st7 (10),
 *   32-39 fctrl fstat ftag fiseg fioff foseg fooff fop (4),
 *   40-55 xmm0-15 (16), 56 mxcsr (4), 57 orig_rax, 58 fs_base,
 *   59 gs_base (8), 60-75 ymm0h-ymm15h (16).
 */
#include "gdbserver.h"

#include <errno.h>
#include <string.h>
#include <sys/user.h>

#include "proxy.h"
#include "kernel.h"
#include "ptrace.h"
#include "cpu_x86_64.h" /* VMM_XSAVE_MAX_BYTES, as ptrace_regs.c */

/* Offsets in the XSAVE standard format (Intel SDM vol. 1, 13.4). */
#define FX_FCW 0
#define FX_FSW 2
#define FX_FTW 4 /* the abridged tag: one bit per register, 1 = valid */
#define FX_FOP 6
#define FX_FIP 8
#define FX_FDP 16
#define FX_MXCSR 24
#define FX_ST0 32
#define FX_XMM0 160
#define XSAVE_BV 512
#define XSAVE_AVX 576
#define XCR0_AVX 4ULL

#define REG_GP(name) "<reg name=\"" name "\" bitsize=\"64\" type=\"int64\"/>"
#define REG_SEG(name) "<reg name=\"" name "\" bitsize=\"32\" type=\"int32\"/>"
#define REG_ST(n) "<reg name=\"st" n "\" bitsize=\"80\" type=\"i387_ext\"/>"
#define REG_F(name)                                                          \
    "<reg name=\"" name "\" bitsize=\"32\" type=\"int\" group=\"float\"/>"
#define REG_XMM(n) "<reg name=\"xmm" n "\" bitsize=\"128\" type=\"vec128\"/>"
#define REG_YMMH(n)                                                          \
    "<reg name=\"ymm" n "h\" bitsize=\"128\" type=\"uint128\"/>"

const char cli_gdb_target_xml[] =
    "<?xml version=\"1.0\"?>"
    "<!DOCTYPE target SYSTEM \"gdb-target.dtd\">"
    "<target><architecture>i386:x86-64</architecture><osabi>GNU/Linux"
    "</osabi>"
    "<feature name=\"org.gnu.gdb.i386.core\">"
    "<flags id=\"i386_eflags\" size=\"4\">"
    "<field name=\"CF\" start=\"0\" end=\"0\"/>"
    "<field name=\"\" start=\"1\" end=\"1\"/>"
    "<field name=\"PF\" start=\"2\" end=\"2\"/>"
    "<field name=\"AF\" start=\"4\" end=\"4\"/>"
    "<field name=\"ZF\" start=\"6\" end=\"6\"/>"
    "<field name=\"SF\" start=\"7\" end=\"7\"/>"
    "<field name=\"TF\" start=\"8\" end=\"8\"/>"
    "<field name=\"IF\" start=\"9\" end=\"9\"/>"
    "<field name=\"DF\" start=\"10\" end=\"10\"/>"
    "<field name=\"OF\" start=\"11\" end=\"11\"/>"
    "<field name=\"NT\" start=\"14\" end=\"14\"/>"
    "<field name=\"RF\" start=\"16\" end=\"16\"/>"
    "<field name=\"VM\" start=\"17\" end=\"17\"/>"
    "<field name=\"AC\" start=\"18\" end=\"18\"/>"
    "<field name=\"VIF\" start=\"19\" end=\"19\"/>"
    "<field name=\"VIP\" start=\"20\" end=\"20\"/>"
    "<field name=\"ID\" start=\"21\" end=\"21\"/>"
    "</flags>"
    REG_GP("rax") REG_GP("rbx") REG_GP("rcx") REG_GP("rdx")
    REG_GP("rsi") REG_GP("rdi")
    "<reg name=\"rbp\" bitsize=\"64\" type=\"data_ptr\"/>"
    "<reg name=\"rsp\" bitsize=\"64\" type=\"data_ptr\"/>"
    REG_GP("r8") REG_GP("r9") REG_GP("r10") REG_GP("r11")
    REG_GP("r12") REG_GP("r13") REG_GP("r14") REG_GP("r15")
    "<reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\"/>"
    "<reg name=\"eflags\" bitsize=\"32\" type=\"i386_eflags\"/>"
    REG_SEG("cs") REG_SEG("ss") REG_SEG("ds") REG_SEG("es")
    REG_SEG("fs") REG_SEG("gs")
    REG_ST("0") REG_ST("1") REG_ST("2") REG_ST("3")
    REG_ST("4") REG_ST("5") REG_ST("6") REG_ST("7")
    REG_F("fctrl") REG_F("fstat") REG_F("ftag") REG_F("fiseg")
    REG_F("fioff") REG_F("foseg") REG_F("fooff") REG_F("fop")
    "</feature>"
    "<feature name=\"org.gnu.gdb.i386.sse\">"
    "<vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>"
    "<vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>"
    "<vector id=\"v16i8\" type=\"int8\" count=\"16\"/>"
    "<vector id=\"v8i16\" type=\"int16\" count=\"8\"/>"
    "<vector id=\"v4i32\" type=\"int32\" count=\"4\"/>"
    "<vector id=\"v2i64\" type=\"int64\" count=\"2\"/>"
    "<union id=\"vec128\">"
    "<field name=\"v4_float\" type=\"v4f\"/>"
    "<field name=\"v2_double\" type=\"v2d\"/>"
    "<field name=\"v16_int8\" type=\"v16i8\"/>"
    "<field name=\"v8_int16\" type=\"v8i16\"/>"
    "<field name=\"v4_int32\" type=\"v4i32\"/>"
    "<field name=\"v2_int64\" type=\"v2i64\"/>"
    "<field name=\"uint128\" type=\"uint128\"/>"
    "</union>"
    REG_XMM("0") REG_XMM("1") REG_XMM("2") REG_XMM("3")
    REG_XMM("4") REG_XMM("5") REG_XMM("6") REG_XMM("7")
    REG_XMM("8") REG_XMM("9") REG_XMM("10") REG_XMM("11")
    REG_XMM("12") REG_XMM("13") REG_XMM("14") REG_XMM("15")
    "<reg name=\"mxcsr\" bitsize=\"32\" type=\"int\" group=\"vector\"/>"
    "</feature>"
    "<feature name=\"org.gnu.gdb.i386.linux\">"
    "<reg name=\"orig_rax\" bitsize=\"64\" type=\"int\" regnum=\"57\"/>"
    "</feature>"
    "<feature name=\"org.gnu.gdb.i386.segments\">"
    "<reg name=\"fs_base\" bitsize=\"64\" type=\"int\"/>"
    "<reg name=\"gs_base\" bitsize=\"64\" type=\"int\"/>"
    "</feature>"
    "<feature name=\"org.gnu.gdb.i386.avx\">"
    REG_YMMH("0") REG_YMMH("1") REG_YMMH("2") REG_YMMH("3")
    REG_YMMH("4") REG_YMMH("5") REG_YMMH("6") REG_YMMH("7")
    REG_YMMH("8") REG_YMMH("9") REG_YMMH("10") REG_YMMH("11")
    REG_YMMH("12") REG_YMMH("13") REG_YMMH("14") REG_YMMH("15")
    "</feature>"
    "</target>";

/* Where each run of registers of one size starts in the 'g' block. */
#define AT_RIP 128
#define AT_EFLAGS 136
#define AT_SEG 140
#define AT_ST 164
#define AT_FCTRL 244
#define AT_XMM 276
#define AT_MXCSR 532
#define AT_ORIG_RAX 536
#define AT_FS_BASE 544
#define AT_GS_BASE 552
#define AT_YMMH 560

int cli_gdb_reg_at(int n, size_t *bytes)
{
    static const struct { int first, last, at, bytes; } runs[] = {
        {0, 16, 0, 8},         {17, 17, AT_EFLAGS, 4}, {18, 23, AT_SEG, 4},
        {24, 31, AT_ST, 10},   {32, 39, AT_FCTRL, 4},  {40, 55, AT_XMM, 16},
        {56, 56, AT_MXCSR, 4}, {57, 59, AT_ORIG_RAX, 8},
        {60, 75, AT_YMMH, 16},
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
        if (n >= runs[i].first && n <= runs[i].last) {
            *bytes = (size_t)runs[i].bytes;
            return runs[i].at + (n - runs[i].first) * runs[i].bytes;
        }
    return -1;
}

/* The general registers in gdb's order, as user_regs_struct names them. */
static unsigned long long *gp_slot(struct user_regs_struct *u, int n)
{
    unsigned long long *order[17] = {&u->rax, &u->rbx, &u->rcx, &u->rdx, &u->rsi,
                           &u->rdi, &u->rbp, &u->rsp, &u->r8,  &u->r9,
                           &u->r10, &u->r11, &u->r12, &u->r13, &u->r14,
                           &u->r15, &u->rip};
    return order[n];
}

static struct proxy_thread *thread_of(struct proxy_process *q, int tid)
{
    for (int k = 0; k < q->nr_threads; k++) {
        struct proxy_thread *t = &q->threads[k];
        int id = k == q->cur ? q->tid : t->tid;
        if (t->state != PROXY_THREAD_EXITED && id == tid)
            return t;
    }
    return NULL;
}

/* ftag from FXSAVE's abridged tag: valid (0) or empty (3) per register. */
static uint32_t full_tag(uint8_t abridged)
{
    uint32_t tag = 0;
    for (int i = 0; i < 8; i++)
        tag |= (abridged & (1u << i) ? 0u : 3u) << (2 * i);
    return tag;
}

static uint8_t abridged_tag(uint32_t full)
{
    uint8_t tag = 0;
    for (int i = 0; i < 8; i++)
        if (((full >> (2 * i)) & 3) != 3)
            tag |= (uint8_t)(1u << i);
    return tag;
}

static void put32(uint8_t *at, uint32_t v) { memcpy(at, &v, 4); }
static uint32_t get32(const uint8_t *at)
{
    uint32_t v;
    memcpy(&v, at, 4);
    return v;
}
static uint16_t get16(const uint8_t *at)
{
    uint16_t v;
    memcpy(&v, at, 2);
    return v;
}

int cli_gdb_regs_get(struct proxy_process *q, int tid,
                     uint8_t out[GDB_REGS_BYTES])
{
    struct proxy_thread *t = thread_of(q, tid);
    if (!t)
        return -ESRCH;
    struct user_regs_struct u;
    proxy_ptrace_get_user_regs(q, t, &u);
    memset(out, 0, GDB_REGS_BYTES);
    for (int n = 0; n < 17; n++)
        memcpy(out + 8 * n, gp_slot(&u, n), 8);
    put32(out + AT_EFLAGS, (uint32_t)u.eflags);
    uint64_t seg[6] = {u.cs, u.ss, u.ds, u.es, u.fs, u.gs};
    for (int i = 0; i < 6; i++)
        put32(out + AT_SEG + 4 * i, (uint32_t)seg[i]);
    memcpy(out + AT_ORIG_RAX, &u.orig_rax, 8);
    memcpy(out + AT_FS_BASE, &u.fs_base, 8);
    memcpy(out + AT_GS_BASE, &u.gs_base, 8);
    static uint8_t img[VMM_XSAVE_MAX_BYTES];
    int rc = proxy_ptrace_get_xstate(q, t, img);
    if (rc < 0)
        return rc;
    for (int i = 0; i < 8; i++)
        memcpy(out + AT_ST + 10 * i, img + FX_ST0 + 16 * i, 10);
    uint64_t fip, fdp;
    memcpy(&fip, img + FX_FIP, 8);
    memcpy(&fdp, img + FX_FDP, 8);
    uint32_t fctl[8] = {get16(img + FX_FCW), get16(img + FX_FSW),
                        full_tag(img[FX_FTW]), 0, (uint32_t)fip, 0,
                        (uint32_t)fdp, get16(img + FX_FOP)};
    for (int i = 0; i < 8; i++)
        put32(out + AT_FCTRL + 4 * i, fctl[i]);
    memcpy(out + AT_XMM, img + FX_XMM0, 16 * 16);
    memcpy(out + AT_MXCSR, img + FX_MXCSR, 4);
    uint64_t bv;
    memcpy(&bv, img + XSAVE_BV, 8);
    if ((vmm_vm_xcr0(q->vm) & XCR0_AVX) && (bv & XCR0_AVX))
        memcpy(out + AT_YMMH, img + XSAVE_AVX, 16 * 16);
    return 0;
}

int cli_gdb_regs_set(struct proxy_process *q, int tid,
                     const uint8_t in[GDB_REGS_BYTES])
{
    struct proxy_thread *t = thread_of(q, tid);
    if (!t)
        return -ESRCH;
    struct user_regs_struct u;
    proxy_ptrace_get_user_regs(q, t, &u);
    for (int n = 0; n < 17; n++)
        memcpy(gp_slot(&u, n), in + 8 * n, 8);
    u.eflags = get32(in + AT_EFLAGS);
    memcpy(&u.orig_rax, in + AT_ORIG_RAX, 8);
    memcpy(&u.fs_base, in + AT_FS_BASE, 8);
    memcpy(&u.gs_base, in + AT_GS_BASE, 8);
    long rc = proxy_ptrace_set_user_regs(q, t, &u);
    if (rc < 0)
        return (int)rc;
    static uint8_t img[VMM_XSAVE_MAX_BYTES];
    if ((rc = proxy_ptrace_get_xstate(q, t, img)) < 0)
        return (int)rc;
    for (int i = 0; i < 8; i++)
        memcpy(img + FX_ST0 + 16 * i, in + AT_ST + 10 * i, 10);
    uint16_t fcw = (uint16_t)get32(in + AT_FCTRL),
             fsw = (uint16_t)get32(in + AT_FCTRL + 4),
             fop = (uint16_t)get32(in + AT_FCTRL + 28);
    memcpy(img + FX_FCW, &fcw, 2);
    memcpy(img + FX_FSW, &fsw, 2);
    img[FX_FTW] = abridged_tag(get32(in + AT_FCTRL + 8));
    memcpy(img + FX_FOP, &fop, 2);
    memcpy(img + FX_XMM0, in + AT_XMM, 16 * 16);
    memcpy(img + FX_MXCSR, in + AT_MXCSR, 4);
    uint64_t bv, xcr0 = vmm_vm_xcr0(q->vm);
    memcpy(&bv, img + XSAVE_BV, 8);
    bv |= 3; /* x87 and SSE as written, not their initial state */
    if (xcr0 & XCR0_AVX) {
        memcpy(img + XSAVE_AVX, in + AT_YMMH, 16 * 16);
        bv |= XCR0_AVX;
    }
    memcpy(img + XSAVE_BV, &bv, 8);
    rc = proxy_ptrace_put_xstate(q, t, img, 0, VMM_XSAVE_MAX_BYTES);
    return rc < 0 ? (int)rc : 0;
}

/* As /proc/PID/auxv (fs/procfs.c): the vector the loader put above envp. */
size_t cli_gdb_auxv(struct proxy_process *q, uint8_t *out, size_t cap)
{
    uint64_t argc, w;
    if (!q->mm.start_stack ||
        proxy_mem_read_forced(q, q->mm.start_stack, &argc, 8) < 0)
        return 0;
    gva_t at = q->mm.start_stack + 8 * (argc + 2); /* past argv, NULL */
    for (int i = 0; i < 4096; i++, at += 8) {          /* past envp */
        if (proxy_mem_read_forced(q, at, &w, 8) < 0)
            return 0;
        if (w == 0)
            break;
    }
    at += 8;
    size_t n = 0;
    for (int i = 0; i < 64 && n + 16 <= cap; i++, at += 16) {
        uint64_t pair[2];
        if (proxy_mem_read_forced(q, at, pair, sizeof(pair)) < 0)
            break;
        memcpy(out + n, pair, sizeof(pair));
        n += sizeof(pair);
        if (pair[0] == 0)
            break;
    }
    return n;
}
