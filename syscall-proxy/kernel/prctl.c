/*
 * prctl.c - prctl(2) (names, PR_SET_TSC, the process's flags: pdeathsig,
 * dumpable, no_new_privs, child_subreaper, THP, keepcaps, timer slack;
 * seccomp's and syscall user dispatch's options handed on) and
 * arch_prctl(2) (FS/GS base, CPUID faulting). The flags live in struct
 * proxy_process's prctl part (fork copies them; Linux clears pdeathsig in
 * the child).
 */
#include "proxy.h"
#include "config.h"
#include "hooks.h"
#include "kernel.h"
#include "internal.h"
#include "sys.h"

#include <asm/prctl.h>
#include <errno.h>
#include <linux/securebits.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* Linux's default timer slack for a normal task. */
#define TIMERSLACK_DEFAULT_NS 50000

/* ---- prctl --------------------------------------------------------------- */

/*
 * PR_SET_NAME takes at most 15 bytes up to a NUL; a longer name is cut, not
 * refused. Byte by byte so a name ending right before an unmapped page does
 * not fault, just as strncpy_from_user stops at the NUL.
 */
/* The calling thread's name: the process's comm for the main thread (what
 * /proc/PID/comm shows), the thread's own for the others. */
char *proxy_thread_comm(struct proxy_process *p)
{
    return p->tid == p->pid ? p->comm : p->threads[p->cur].comm;
}

char *proxy_thread_comm_of(struct proxy_process *q, int tid)
{
    for (int k = 0; tid && tid != q->pid && k < q->nr_threads; k++)
        if ((k == q->cur ? q->tid : q->threads[k].tid) == tid)
            return q->threads[k].comm;
    return q->comm;
}

static long prctl_set_name(struct proxy_process *p, gva_t name_gva)
{
    char name[sizeof(p->comm)];
    memset(name, 0, sizeof(name));
    for (size_t i = 0; i < sizeof(name) - 1; i++) {
        if (proxy_copy_in(p, &name[i], name_gva + i, 1) < 0)
            return -EFAULT;
        if (name[i] == '\0')
            break;
    }
    memcpy(proxy_thread_comm(p), name, sizeof(name));
    return 0;
}

/* PR_GET_NAME writes all 16 bytes, NUL padding included. */
static long prctl_get_name(struct proxy_process *p, gva_t name_gva)
{
    if (proxy_copy_out(p, name_gva, proxy_thread_comm(p), sizeof(p->comm)) < 0)
        return -EFAULT;
    return 0;
}

/* Whether hvrun sees this run's RDTSC/RDTSCP: a backend that traps them
 * (CR4.TSD's #GP; the ptrace stub's own PR_SET_TSC) or the sites it
 * rewrites (kvm_pvm, where only those in code it rewrote trap). */
static bool tsc_trappable(const struct proxy_process *p)
{
    struct vmm_host_info info;
    if (p->cfg->rdtsc_rewrite)
        return true;
    if (!p->world || !p->world->host)
        return false;
    vmm_host_get_info(p->world->host, &info);
    return info.rdtsc_trappable;
}

/* PR_SET_TSC/PR_GET_TSC (arch/x86 set_tsc_mode): where no RDTSC can be
 * made to fault, EINVAL, as a Linux without the option says. */
static long prctl_tsc(struct proxy_process *p, int option, uint64_t arg2)
{
    if (!tsc_trappable(p) || !p->threads)
        return -EINVAL;
    struct proxy_thread *t = &p->threads[p->cur]; /* per thread (TIF_NOTSC) */
    if (option == PR_GET_TSC)
        return put_int(p, arg2, t->tsc_sigsegv ? PR_TSC_SIGSEGV
                                               : PR_TSC_ENABLE);
    if (arg2 != PR_TSC_ENABLE && arg2 != PR_TSC_SIGSEGV)
        return -EINVAL;
    t->tsc_sigsegv = arg2 == PR_TSC_SIGSEGV;
    if (t->tsc_sigsegv)
        proxy_hooks.cpuid_tsc_faulting(p); /* no more reads without a trap */
    return 0;
}

/* The options that only read or write misc_state. */
static long prctl_flags(struct proxy_process *p, int option,
                        const uint64_t a[6])
{
    struct proxy_prctl_state *st = misc_state(p);
    uint64_t arg2 = a[1];
    bool extra_args = a[2] || a[3] || a[4];
    switch (option) {
    case PR_SET_PDEATHSIG:
        if (arg2 > PROXY_NSIG - 1)
            return -EINVAL;
        st->pdeathsig = (int)arg2;
        return 0;
    case PR_GET_PDEATHSIG:
        return put_int(p, arg2, st->pdeathsig);
    case PR_SET_DUMPABLE:
        if (arg2 > 1) /* SUID_DUMP_DISABLE or SUID_DUMP_USER only */
            return -EINVAL;
        st->dumpable = (int)arg2;
        return 0;
    case PR_GET_DUMPABLE:
        return st->dumpable;
    case PR_SET_NO_NEW_PRIVS: /* one way: it can never be cleared */
        if (arg2 != 1 || extra_args)
            return -EINVAL;
        st->no_new_privs = true;
        return 0;
    case PR_GET_NO_NEW_PRIVS:
        return arg2 || extra_args ? -EINVAL : st->no_new_privs;
    case PR_SET_CHILD_SUBREAPER:
        st->child_subreaper = arg2 != 0;
        if (st->child_subreaper && p->world)
            p->world->subreapers_made = true;
        return 0;
    case PR_GET_CHILD_SUBREAPER:
        return put_int(p, arg2, st->child_subreaper);
    case PR_SET_TIMERSLACK: /* 0 restores the default */
        st->timerslack_ns = arg2                      ? arg2
                            : st->timerslack_default_ns ? st->timerslack_default_ns
                                                        : TIMERSLACK_DEFAULT_NS;
        return 0;
    case PR_GET_TIMERSLACK:
        return (long)st->timerslack_ns;
    case PR_SET_THP_DISABLE:
        if (extra_args)
            return -EINVAL;
        st->thp_disabled = arg2 != 0;
        return 0;
    case PR_GET_THP_DISABLE:
        return arg2 || extra_args ? -EINVAL : st->thp_disabled;
    case PR_SET_KEEPCAPS:
        if (arg2 > 1)
            return -EINVAL;
        if (st->securebits & SECBIT_KEEP_CAPS_LOCKED)
            return -EPERM;
        st->keepcaps = arg2 != 0;
        return 0;
    case PR_GET_KEEPCAPS:
        return st->keepcaps;
    default:
        return -EINVAL;
    }
}

/* The securebits word: SECBIT_KEEP_CAPS is PR_SET_KEEPCAPS's flag (which
 * execve clears), the rest are kept as set. cap_task_prctl's refusals:
 * a locked bit changed, a lock cleared, an unknown bit, no CAP_SETPCAP. */
#define SECUREBITS_ALL 0x55u /* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE */
#define SECUREBITS_LOCKS (SECUREBITS_ALL << 1)

static long prctl_securebits(struct proxy_process *p, int option, uint64_t arg2)
{
    struct proxy_prctl_state *st = misc_state(p);
    unsigned int old = st->securebits | (st->keepcaps ? SECBIT_KEEP_CAPS : 0);
    if (option == PR_GET_SECUREBITS)
        return old;
    if ((((old & SECUREBITS_LOCKS) >> 1) & (old ^ arg2)) ||
        (old & SECUREBITS_LOCKS & ~arg2) ||
        (arg2 & ~(uint64_t)(SECUREBITS_LOCKS | SECUREBITS_ALL)) ||
        !proxy_ns_capable(p))
        return -EPERM;
    st->keepcaps = arg2 & SECBIT_KEEP_CAPS;
    st->securebits = (unsigned int)arg2 & ~(unsigned int)SECBIT_KEEP_CAPS;
    return 0;
}

/* PR_MCE_KILL, PR_MCE_KILL_GET: the machine-check kill policy, kept and
 * reported (no machine check reaches a guest). As Linux, a SET with an
 * unknown policy has set PF_MCE_PROCESS before its EINVAL. */
static long prctl_mce_kill(struct proxy_process *p, int option,
                           const uint64_t a[6])
{
    struct proxy_prctl_state *st = misc_state(p);
    if (option == PR_MCE_KILL_GET) {
        if (a[1] | a[2] | a[3] | a[4])
            return -EINVAL;
        return !st->mce_process ? PR_MCE_KILL_DEFAULT
               : st->mce_early  ? PR_MCE_KILL_EARLY
                                : PR_MCE_KILL_LATE;
    }
    if (a[3] | a[4])
        return -EINVAL;
    switch (a[1]) {
    case PR_MCE_KILL_CLEAR:
        if (a[2] != 0)
            return -EINVAL;
        st->mce_process = false;
        return 0;
    case PR_MCE_KILL_SET:
        st->mce_process = true;
        if (a[2] == PR_MCE_KILL_EARLY)
            st->mce_early = true;
        else if (a[2] == PR_MCE_KILL_LATE)
            st->mce_early = false;
        else if (a[2] == PR_MCE_KILL_DEFAULT)
            st->mce_process = st->mce_early = false;
        else
            return -EINVAL;
        return 0;
    default:
        return -EINVAL;
    }
}

static long sys_prctl(struct proxy_process *p, const uint64_t a[6])
{
    int option = (int)a[0];
    switch (option) {
    case PR_SET_NAME:
        return prctl_set_name(p, a[1]);
    case PR_GET_NAME:
        return prctl_get_name(p, a[1]);
    case PR_CAPBSET_READ:
    case PR_CAPBSET_DROP:
        return proxy_cred_capbset(p, option == PR_CAPBSET_DROP, a[1]);
    case PR_GET_SECCOMP:
    case PR_SET_SECCOMP:
        return proxy_seccomp_prctl(p, a); /* seccomp.c */
    case PR_SET_SYSCALL_USER_DISPATCH:
        return proxy_user_dispatch_prctl(p, a); /* user_dispatch.c */
    case PR_SET_VMA:
        /* Naming anonymous memory: Linux without CONFIG_ANON_VMA_NAME says
         * -EINVAL, and glibc (thread stack names) ignores the failure. */
        return -EINVAL;
    case PR_SET_TSC:
    case PR_GET_TSC:
        return prctl_tsc(p, option, a[1]);
    case PR_GET_SECUREBITS:
    case PR_SET_SECUREBITS:
        return prctl_securebits(p, option, a[1]);
    case PR_CAP_AMBIENT:
        return proxy_cred_ambient_prctl(
            p, a, misc_state(p)->securebits & SECBIT_NO_CAP_AMBIENT_RAISE);
    case PR_MCE_KILL:
    case PR_MCE_KILL_GET:
        return prctl_mce_kill(p, option, a);
    case PR_SET_MM:
        /* Rewriting the mm layout (CAP_SYS_RESOURCE) is refused: the
         * address space belongs to hvrun's loader and mm family. */
        return -EPERM;
    default:
        return prctl_flags(p, option, a);
    }
}

/* ---- arch_prctl ---------------------------------------------------------- */

/*
 * FS/GS bases must be below TASK_SIZE_MAX (VMM_USER_END), which also rules
 * out non-canonical addresses: Linux answers -EPERM for both.
 */
static long sys_arch_prctl(struct proxy_process *p, const uint64_t a[6])
{
    int code = (int)a[0];
    uint64_t arg = a[1];
    switch (code) {
    case ARCH_SET_FS:
        if (arg >= VMM_USER_END)
            return -EPERM;
        vmm_vm_set_fs_base(p->vm, arg);
        return 0;
    case ARCH_SET_GS:
        if (arg >= VMM_USER_END)
            return -EPERM;
        vmm_vm_set_gs_base(p->vm, arg);
        return 0;
    case ARCH_GET_FS:
        return put_u64(p, arg, vmm_vm_fs_base(p->vm));
    case ARCH_GET_GS:
        return put_u64(p, arg, vmm_vm_gs_base(p->vm));
    case ARCH_GET_CPUID:
        return 1; /* CPUID executes normally (it never faults) */
    case ARCH_SET_CPUID:
        return -ENODEV; /* no CPUID faulting: Linux's answer without it */
    default:
        /* XCOMP (AMX permissions) and vDSO mapping: not offered. */
        return -EINVAL;
    }
}

const struct proxy_syscall proxy_prctl_syscalls[] = {
    {SYS_arch_prctl, "arch_prctl", sys_arch_prctl},
    {SYS_prctl, "prctl", sys_prctl},
    {-1, NULL, NULL},
};
