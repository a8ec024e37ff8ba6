/*
 * progress_copy.c - a counted loop's body run from its trampoline.
 *
 * A rewritten back edge (progress.c) costs the loop three taken jumps a
 * turn: the jmp into the trampoline, the branch's own test there and the
 * jmp back to the loop's head, far away in the text. For a loop of a few
 * instructions that doubles the turn (bench/progressloop: 1.7x of CPU).
 * When the body from the loop's head to the span can run anywhere, the
 * trampoline holds a copy of it just before the span's instructions, and
 * the back edge there leads to the copy: after the first turn the loop
 * turns inside the trampoline with one taken jump, the decrement beside
 * it. What is counted does not change (one unit per back edge taken, in
 * the copy as in the text), so a run makes the same events with copies or
 * without.
 *
 * The copy is the body's bytes at the same offsets (only displacements
 * change), so an address in it stands for one address of the text
 * (progress.c maps a fault's rip back with it: a signal frame, a
 * backtrace or a handler's return never names the copy). What a body may
 * hold, decoded here (Capstone, as the finder decodes):
 *   - instructions that run the same anywhere: no call, return, interrupt,
 *     system or privileged instruction, no SYSCALL, no RDTSC/RDTSCP/
 *     CPUID/RDRAND/RDSEED (cpuid_patch.c answers those in the text; RDPID
 *     Capstone 4 does not decode: refused as any unknown bytes),
 *     no transaction, no UD2/HLT/INT3;
 *   - RIP-relative operands (disp32), their displacement moved;
 *   - direct jumps forward within the body, kept as they are (the same
 *     offsets), and forward jumps out of it in rel32 form, moved to the
 *     text's target; a jump backward (another loop, uncounted in a copy)
 *     or a rel8 jump out of the body makes it stay in the text;
 *   - indirect jumps (to the text's addresses: a jump table's targets).
 * Guest writes to a copied body's text (a debugger's breakpoint, a text
 * made writable) send its back edge to the text again (progress.c,
 * proxy_progress_written).
 */
#include "progress_copy.h"

#include <capstone/capstone.h>
#include <string.h>

static csh copy_cs;
static cs_insn *copy_insn;
static int copy_ready; /* 0: not tried, 1: open, -1: cannot be */

static bool open_decoder(void)
{
    if (copy_ready == 0) {
        copy_ready = -1;
        if (cs_open(CS_ARCH_X86, CS_MODE_64, &copy_cs) == CS_ERR_OK) {
            cs_option(copy_cs, CS_OPT_DETAIL, CS_OPT_ON);
            copy_insn = cs_malloc(copy_cs);
            if (copy_insn)
                copy_ready = 1;
            else
                cs_close(&copy_cs);
        }
    }
    return copy_ready == 1;
}

/* Whether the instruction runs the same from anywhere but for its
 * displacements (checked apart). */
static bool runs_anywhere(const cs_insn *in)
{
    const cs_detail *d = in->detail;
    for (int g = 0; g < d->groups_count; g++)
        switch (d->groups[g]) {
        case X86_GRP_CALL: case X86_GRP_RET: case X86_GRP_INT:
        case X86_GRP_IRET: case X86_GRP_PRIVILEGE:
            return false;
        default:
            break;
        }
    switch (in->id) {
    case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_UD2:
    case X86_INS_HLT: case X86_INS_INT3: case X86_INS_INT:
    case X86_INS_INTO: case X86_INS_INT1: case X86_INS_INVALID:
    case X86_INS_RDTSC: case X86_INS_RDTSCP: case X86_INS_CPUID:
    case X86_INS_UD0: case X86_INS_RDRAND: case X86_INS_RDSEED:
    case X86_INS_XBEGIN: case X86_INS_XABORT: case X86_INS_XEND:
    case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
    case X86_INS_JRCXZ: case X86_INS_JECXZ: case X86_INS_JCXZ:
        return false;
    default:
        return true;
    }
}

static bool is_direct_branch(const cs_insn *in)
{
    const cs_detail *d = in->detail;
    for (int g = 0; g < d->groups_count; g++)
        if (d->groups[g] == X86_GRP_BRANCH_RELATIVE)
            return true;
    return false;
}

static bool fits_rel32(int64_t v)
{
    return v == (int32_t)v;
}

/* The instruction in (at offset off of the body, copied to out) moved to
 * run at `at + off`; false when it cannot be. */
static bool relocate(const cs_insn *in, size_t off, gva_t va, size_t len,
                     gva_t at, uint8_t *out)
{
    const cs_x86 *x = &in->detail->x86;
    gva_t end = in->address + in->size, copy_end = at + off + in->size;
    if (is_direct_branch(in)) {
        if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
            return false;
        gva_t target = (gva_t)x->operands[0].imm;
        if (target <= in->address)
            return false; /* backward: a loop the copy would not count */
        if (target <= va + len)
            return true; /* forward within the body (or to the span):
                          * the same offset in the copy */
        if (x->encoding.imm_size != 4 || x->encoding.imm_offset == 0)
            return false; /* a rel8 out of the body cannot reach */
        int64_t rel = (int64_t)(target - copy_end);
        if (!fits_rel32(rel))
            return false;
        int32_t r32 = (int32_t)rel;
        memcpy(out + off + x->encoding.imm_offset, &r32, 4);
        return true;
    }
    for (int i = 0; i < x->op_count; i++) {
        const cs_x86_op *op = &x->operands[i];
        if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
            continue;
        if (op->mem.index != X86_REG_INVALID || x->encoding.disp_size != 4 ||
            x->encoding.disp_offset == 0)
            return false;
        int32_t disp;
        memcpy(&disp, out + off + x->encoding.disp_offset, 4);
        gva_t target = end + (gva_t)(int64_t)disp;
        int64_t moved = (int64_t)(target - copy_end);
        if (!fits_rel32(moved))
            return false;
        disp = (int32_t)moved;
        memcpy(out + off + x->encoding.disp_offset, &disp, 4);
    }
    return true;
}

bool progress_copy_body(const uint8_t *body, size_t len, gva_t va, gva_t at,
                        uint8_t *out)
{
    if (len == 0 || len > PROGRESS_COPY_MAX || !open_decoder())
        return false;
    memcpy(out, body, len);
    const uint8_t *code = body;
    size_t left = len;
    uint64_t addr = va;
    while (left > 0) {
        size_t off = (size_t)(addr - va);
        if (!cs_disasm_iter(copy_cs, &code, &left, &addr, copy_insn) ||
            !runs_anywhere(copy_insn) ||
            !relocate(copy_insn, off, va, len, at, out))
            return false;
    }
    return addr == va + len;
}

/* Whether in decides CF for the code after it: 1 written without being
 * read, -1 read (or a branch, whose paths are not followed), 0 neither.
 * By instruction: Capstone 4's flag detail misses readers (ADC, SBB, RCL,
 * CMC, PUSHF, LAHF say nothing of reading CF), and a shift by a count of
 * zero writes nothing, so only the plain ALU ops below decide it. */
static int cf_decided(const cs_insn *in)
{
    if (is_direct_branch(in) || cs_insn_group(copy_cs, in, X86_GRP_JUMP) ||
        (in->detail->x86.eflags & X86_EFLAGS_TEST_CF))
        return -1;
    switch (in->id) {
    case X86_INS_ADC: case X86_INS_ADCX: case X86_INS_SBB:
    case X86_INS_RCL: case X86_INS_RCR: case X86_INS_CMC:
    case X86_INS_PUSHF: case X86_INS_PUSHFD: case X86_INS_PUSHFQ:
    case X86_INS_LAHF: case X86_INS_SALC:
        return -1;
    case X86_INS_CMP: case X86_INS_TEST: case X86_INS_ADD:
    case X86_INS_SUB: case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR:
        return 1;
    default:
        return 0;
    }
}

bool progress_copy_unrollable(const uint8_t *body, size_t len, gva_t va,
                              struct progress_copy_exits *out)
{
    out->n = 0;
    if (len == 0 || len > PROGRESS_COPY_MAX || !open_decoder())
        return false;
    const uint8_t *code = body;
    size_t left = len;
    uint64_t addr = va;
    bool cf_dead = false;
    while (left > 0) {
        size_t off = (size_t)(addr - va);
        if (!cs_disasm_iter(copy_cs, &code, &left, &addr, copy_insn))
            return false;
        if (!cf_dead) {
            int d = cf_decided(copy_insn);
            if (d < 0)
                return false;
            cf_dead = d > 0;
        }
        if (cs_insn_group(copy_cs, copy_insn, X86_GRP_JUMP) &&
            !is_direct_branch(copy_insn))
            return false; /* indirect */
        if (!is_direct_branch(copy_insn))
            continue;
        const cs_x86 *x = &copy_insn->detail->x86;
        gva_t target = (gva_t)x->operands[0].imm;
        if (target <= va + len)
            continue; /* within the body, or to the span: the same turn */
        if (out->n == PROGRESS_COPY_EXITS)
            return false;
        out->rel_at[out->n] = off + x->encoding.imm_offset;
        out->target[out->n] = target;
        out->n++;
    }
    return cf_dead && addr == va + len;
}
