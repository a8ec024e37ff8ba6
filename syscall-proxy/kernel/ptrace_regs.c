/*
 * ptrace_regs.c - a tracee's registers as ptrace(2) shows them: struct
 * user_regs_struct from the vCPU (the thread on it) or the saved thread,
 * the XSAVE image (PTRACE_GETREGSET NT_X86_XSTATE, GETFPREGS), and the
 * user area PEEKUSER/POKEUSER reach (registers, debug registers). What a
 * tracer may change is checked as Linux's putreg and ptrace_write_dr7 do.
 */
#include "proxy.h"
#include "kernel.h"
#include "ptrace.h"
#include "cpu_x86_64.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

/* ---- the tracee's registers as ptrace shows them ---------------------------- */

static uint64_t fs_base_of(struct proxy_process *q, struct proxy_thread *t)
{
    return on_vcpu(q, t) ? vmm_vm_fs_base(q->vm) : t->fs_base;
}

static uint64_t gs_base_of(struct proxy_process *q, struct proxy_thread *t)
{
    return on_vcpu(q, t) ? vmm_vm_gs_base(q->vm) : t->gs_base;
}

void proxy_ptrace_get_user_regs(struct proxy_process *q, struct proxy_thread *t,
                                struct user_regs_struct *u)
{
    const struct vmm_regs *r = regs_of(q, t);
    memset(u, 0, sizeof(*u));
    u->r15 = r->r15; u->r14 = r->r14; u->r13 = r->r13; u->r12 = r->r12;
    u->rbp = r->rbp; u->rbx = r->rbx; u->r11 = r->r11; u->r10 = r->r10;
    u->r9 = r->r9; u->r8 = r->r8; u->rax = r->rax; u->rcx = r->rcx;
    u->rdx = r->rdx; u->rsi = r->rsi; u->rdi = r->rdi;
    u->orig_rax = (uint64_t)t->pt.orig_rax;
    u->rip = r->rip;
    u->cs = 0x33;
    u->eflags = r->rflags;
    u->rsp = r->rsp;
    u->ss = 0x2b;
    u->fs_base = fs_base_of(q, t);
    u->gs_base = gs_base_of(q, t);
    if (proxy_ptrace_parked(t)) { /* inside the call, as Linux's pt_regs are */
        u->rip += SYSCALL_INSN_BYTES;
        u->rax = (uint64_t)-ENOSYS;
    } else if (t->pt.interrupted) { /* to be restarted, or EINTR */
        u->rip += SYSCALL_INSN_BYTES;
        u->rax = (uint64_t)(t->restart_sleep ? -ERESTART_RESTARTBLOCK_NR
                            : t->eintr_on_handler ? -ERESTARTNOHAND_NR
                                                  : -ERESTARTSYS_NR);
    }
    if (t->pt.step_tf || t->pt.sw_tf)
        u->eflags &= ~RFLAGS_TF;
}

long proxy_ptrace_set_user_regs(struct proxy_process *q, struct proxy_thread *t,
                                const struct user_regs_struct *u)
{
    if ((u->cs & 3) != 3 || (u->ss & 3) != 3 ||
        u->fs_base >= USER_SPACE_END || u->gs_base >= USER_SPACE_END)
        return -EIO;
    struct vmm_regs *r = regs_of(q, t);
    r->r15 = u->r15; r->r14 = u->r14; r->r13 = u->r13; r->r12 = u->r12;
    r->rbp = u->rbp; r->rbx = u->rbx; r->r11 = u->r11; r->r10 = u->r10;
    r->r9 = u->r9; r->r8 = u->r8; r->rcx = u->rcx;
    r->rdx = u->rdx; r->rsi = u->rsi; r->rdi = u->rdi;
    r->rsp = u->rsp;
    r->rflags = (r->rflags & ~RFLAGS_TRACER_MASK) |
                (u->eflags & RFLAGS_TRACER_MASK);
    if (t->pt.step_tf)
        r->rflags |= RFLAGS_TF;
    t->pt.orig_rax = (int64_t)u->orig_rax;
    if (proxy_ptrace_parked(t)) {
        /* The call it makes when let go: the number in orig_rax (-1:
         * none, the result is rax), at the instruction before rip. */
        r->rip = u->rip - SYSCALL_INSN_BYTES;
        r->rax = u->orig_rax;
        t->pt.skip_call = t->pt.emulated || (int64_t)u->orig_rax == -1;
        t->pt.skip_result = (int64_t)u->rax;
    } else if (t->pt.interrupted) {
        r->rip = u->rip - SYSCALL_INSN_BYTES; /* still to restart */
        r->rax = u->orig_rax;
    } else {
        r->rip = u->rip;
        r->rax = u->rax;
    }
    if (on_vcpu(q, t)) {
        vmm_vm_set_fs_base(q->vm, u->fs_base);
        vmm_vm_set_gs_base(q->vm, u->gs_base);
        vmm_vm_enter_user(q->vm);
    } else {
        t->fs_base = u->fs_base;
        t->gs_base = u->gs_base;
    }
    return 0;
}

/* The XSAVE image (standard format) of a thread, with the user ABI's
 * xcr0 word at byte 464 (xstate_fx_sw_bytes). */
int proxy_ptrace_get_xstate(struct proxy_process *q, struct proxy_thread *t,
                            uint8_t *buf)
{
    memset(buf, 0, VMM_XSAVE_MAX_BYTES);
    int rc = 0;
    if (on_vcpu(q, t))
        rc = vmm_vm_get_xstate(q->vm, buf, VMM_XSAVE_MAX_BYTES);
    else if (t->xstate)
        memcpy(buf, t->xstate, VMM_XSAVE_MAX_BYTES);
    if (rc < 0)
        return rc;
    uint64_t xcr0 = vmm_vm_xcr0(q->vm);
    memset(buf + 464, 0, 48);
    memcpy(buf + 464, &xcr0, sizeof(xcr0));
    return 0;
}

static int set_xstate(struct proxy_process *q, struct proxy_thread *t,
                      const uint8_t *buf)
{
    if (on_vcpu(q, t))
        return vmm_vm_set_xstate(q->vm, buf, VMM_XSAVE_MAX_BYTES);
    if (!t->xstate && !(t->xstate = malloc(VMM_XSAVE_MAX_BYTES)))
        return -ENOMEM;
    memcpy(t->xstate, buf, VMM_XSAVE_MAX_BYTES);
    return 0;
}

/* Writes len bytes of src at [at, at+len) of the image, then checks the
 * XSAVE header (xstate_bv within xcr0) before it is used. */
long proxy_ptrace_put_xstate(struct proxy_process *q, struct proxy_thread *t,
                             const void *src, size_t at, size_t len)
{
    uint8_t img[VMM_XSAVE_MAX_BYTES];
    int rc = proxy_ptrace_get_xstate(q, t, img);
    if (rc < 0)
        return rc;
    memcpy(img + at, src, len);
    uint64_t xstate_bv;
    memcpy(&xstate_bv, img + 512, sizeof(xstate_bv));
    if (xstate_bv & ~vmm_vm_xcr0(q->vm))
        return -EINVAL;
    memset(img + 464, 0, 48);
    return set_xstate(q, t, img);
}

/* ---- the user area (PEEKUSER/POKEUSER) ----------------------------------- */

#define USER_DEBUGREG_AT offsetof(struct user, u_debugreg)

long proxy_ptrace_peek_user(struct proxy_process *q, struct proxy_thread *t,
                            uint64_t off, uint64_t *val)
{
    if ((off & 7) || off >= sizeof(struct user))
        return -EIO;
    *val = 0;
    if (off < sizeof(struct user_regs_struct)) {
        struct user_regs_struct u;
        proxy_ptrace_get_user_regs(q, t, &u);
        memcpy(val, (uint8_t *)&u + off, 8);
    } else if (off >= USER_DEBUGREG_AT && off < USER_DEBUGREG_AT + 64) {
        int n = (int)((off - USER_DEBUGREG_AT) / 8);
        *val = n == 6 ? (t->pt.dr[6] | DR6_RESERVED) : t->pt.dr[n];
    }
    return 0;
}

/* The bytes each enabled data breakpoint watches, as they are now. */
static void note_watched(struct proxy_process *q, struct proxy_thread *t)
{
    for (int i = 0; i < 4; i++) {
        t->pt.dr_seen[i] = 0;
        if ((t->pt.dr[7] >> (2 * i)) & 3)
            (void)vmm_as_copy_in(q->as, &t->pt.dr_seen[i], t->pt.dr[i],
                                 dr_bytes(t->pt.dr[7], i));
    }
}

/* DR7 as Linux's ptrace_write_dr7 takes it: per enabled breakpoint, an
 * instruction breakpoint is one byte; I/O (RW 10) is refused; a data one
 * covers 1, 2, 4 or 8 bytes at an address aligned to that. */
static long check_dr7(const struct proxy_thread *t, uint64_t dr7)
{
    for (int i = 0; i < 4; i++) {
        if (!((dr7 >> (2 * i)) & 3))
            continue;
        unsigned rw = (dr7 >> (16 + 4 * i)) & 3;
        unsigned len = (dr7 >> (18 + 4 * i)) & 3;
        uint64_t bytes = dr_bytes(dr7, i);
        if (rw == 2 || (rw == 0 && len != 0) || (t->pt.dr[i] & (bytes - 1)))
            return -EINVAL;
    }
    return 0;
}

long proxy_ptrace_poke_user(struct proxy_process *q, struct proxy_thread *t,
                            uint64_t off, uint64_t val)
{
    if ((off & 7) || off >= sizeof(struct user))
        return -EIO;
    if (off < sizeof(struct user_regs_struct)) {
        struct user_regs_struct u;
        proxy_ptrace_get_user_regs(q, t, &u);
        memcpy((uint8_t *)&u + off, &val, 8);
        return proxy_ptrace_set_user_regs(q, t, &u);
    }
    if (off >= USER_DEBUGREG_AT && off < USER_DEBUGREG_AT + 64) {
        int n = (int)((off - USER_DEBUGREG_AT) / 8);
        if (n == 4 || n == 5)
            return -EIO;
        /* A user breakpoint at a kernel address: hw_breakpoint_parse's
         * EINVAL (exclude_kernel). */
        if (n < 4 && val >= USER_SPACE_END)
            return -EINVAL;
        if (n == 7) {
            long rc = check_dr7(t, val);
            if (rc < 0)
                return rc;
            /* Armed on the tracee's VM now; a backend without debug
             * registers has hvrun keep them by single-stepping. */
            t->pt.dr_stepped = (val & DR7_ENABLE_BITS) &&
                               vmm_vm_set_debugregs(q->vm, t->pt.dr, val) < 0;
        }
        t->pt.dr[n] = val;
        if (t->pt.dr_stepped)
            note_watched(q, t);
    }
    return 0;
}
