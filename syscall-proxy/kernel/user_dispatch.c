/*
 * user_dispatch.c - syscall user dispatch: prctl(PR_SET_SYSCALL_USER_DISPATCH)
 * (Linux's kernel/entry/syscall_user_dispatch.c).
 *
 * While it is on, a syscall whose return address (the IP after the
 * `syscall` instruction) lies outside [offset, offset + len) looks at the
 * byte at the selector first: ALLOW runs the call, BLOCK does not make it
 * and forces SIGSYS (si_code SYS_USER_DISPATCH, the call's number, address
 * and arch; rax rolled back to the number, as syscall_rollback leaves it),
 * any other value ends the process by SIGSYS, an unreadable selector by
 * SIGSEGV (force_exit_sig). No selector: every call outside the range is
 * dispatched. It is the thread's: a new thread or a fork child starts with
 * it off (dup_task_struct clears it) and execve turns it off.
 *
 * hvrun sees every guest syscall, so the check runs before dispatch, ahead
 * of the guest's seccomp filters as on Linux. The calls of hvrun's vDSO are
 * never dispatched: Linux's vDSO answers those reads without a syscall, so
 * a program's dispatcher would otherwise see calls it never made. (hvrun's
 * other guest-side code, the RDTSC stubs, makes no syscall: its fallback
 * is a trapped UD2.)
 */
#include "proxy.h"
#include "kernel.h"
#include "hooks.h"
#include "internal.h"

#include <errno.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/prctl.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#endif
#define DISPATCH_OFF 0         /* PR_SYS_DISPATCH_OFF */
#define DISPATCH_EXCLUSIVE_ON 1 /* PR_SYS_DISPATCH_ON: the range runs */
#define DISPATCH_INCLUSIVE_ON 2 /* the range is what is dispatched */
#define SELECTOR_ALLOW 0       /* SYSCALL_DISPATCH_FILTER_ALLOW */
#define SELECTOR_BLOCK 1       /* SYSCALL_DISPATCH_FILTER_BLOCK */
#define SYS_USER_DISPATCH_CODE 2 /* si_code SYS_USER_DISPATCH */
#define SYSCALL_INSN_LEN 2     /* 0f 05 */

static struct proxy_thread *calling_thread(struct proxy_process *p)
{
    return &p->threads[p->cur];
}

/* set_syscall_user_dispatch's checks: OFF takes no arguments, ON a range
 * that does not wrap and a selector inside user space (access_ok; it is
 * read at each call, so an unmapped one only fails then). */
long proxy_user_dispatch_prctl(struct proxy_process *p, const uint64_t a[6])
{
    uint64_t mode = a[1], offset = a[2], len = a[3];
    gva_t selector = a[4];
    switch (mode) {
    case DISPATCH_OFF:
        if (offset || len || selector)
            return -EINVAL;
        break;
    case DISPATCH_EXCLUSIVE_ON:
        if (offset && offset + len <= offset)
            return -EINVAL;
        break;
    case DISPATCH_INCLUSIVE_ON:
        if (len == 0 || offset + len <= offset)
            return -EINVAL;
        /* Dispatch everything but the complement: [offset + len, offset)
         * modulo 2^64 is what runs. */
        offset += len;
        len = -len;
        break;
    default:
        return -EINVAL;
    }
    if (selector && (selector >= VMM_USER_END))
        return -EFAULT;
    struct proxy_thread *t = calling_thread(p);
    t->dispatch_on = mode != DISPATCH_OFF;
    t->dispatch_offset = offset;
    t->dispatch_len = len;
    t->dispatch_selector = selector;
    return 0;
}

/* The [vdso] page (vdso.c maps it right above [vvar]). */
static bool from_vdso(const struct proxy_process *p, uint64_t ret_ip)
{
    gva_t insn = ret_ip - SYSCALL_INSN_LEN;
    return p->mm.vvar_gva && insn >= p->mm.vvar_gva + VMM_PAGE_SIZE &&
           insn < p->mm.vvar_gva + 2 * VMM_PAGE_SIZE;
}

static long trigger_sigsys(struct proxy_process *p, uint64_t nr,
                           uint64_t ret_ip)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = SIGSYS;
    info.si_code = SYS_USER_DISPATCH_CODE;
    info.si_call_addr = (void *)(uintptr_t)ret_ip;
    info.si_syscall = (int)nr;
    info.si_arch = AUDIT_ARCH_X86_64;
    proxy_signal_force_thread(p, p->tid, &info);
    return (long)nr; /* syscall_rollback: rax is the number again */
}

bool proxy_user_dispatch_blocks(struct proxy_process *p, uint64_t nr,
                                uint64_t ret_ip, long *ret)
{
    const struct proxy_thread *t = calling_thread(p);
    if (!t->dispatch_on)
        return false;
    /* A call an identity call's stub made (mm/cpuid_patch.c) is the
     * program's, at its site. */
    ret_ip = proxy_hooks.cpuid_call_site(p, ret_ip);
    if (ret_ip - t->dispatch_offset < t->dispatch_len || from_vdso(p, ret_ip))
        return false;
    if (t->dispatch_selector) {
        uint8_t state;
        if (proxy_copy_in(p, &state, t->dispatch_selector, 1) < 0) {
            proxy_process_kill(p, SIGSEGV);
            *ret = PROXY_RET_NORETURN;
            return true;
        }
        if (state == SELECTOR_ALLOW)
            return false;
        if (state != SELECTOR_BLOCK) {
            proxy_process_kill(p, SIGSYS);
            *ret = PROXY_RET_NORETURN;
            return true;
        }
    }
    *ret = trigger_sigsys(p, nr, ret_ip);
    return true;
}
