/*
 * seccomp.c - a guest's own seccomp filters: seccomp(2) and
 * prctl(PR_SET_SECCOMP/PR_GET_SECCOMP), evaluated by hvrun on every
 * syscall of the thread before it is dispatched (table.c), as Linux's
 * __secure_computing does.
 *
 * A filter is a classic BPF program over struct seccomp_data (nr, arch,
 * instruction_pointer, args), checked on load as seccomp_check_filter
 * does (length 1..4096, only the instructions seccomp allows, loads of
 * aligned words inside seccomp_data, jumps inside the program, a return
 * at the end) and run by the interpreter below. A thread's filters form
 * a chain (newest first) shared by reference with the threads and
 * processes it makes; execve keeps them; TSYNC gives the caller's chain
 * to every thread of the process. Each call runs every filter of the
 * chain and takes the action of highest precedence (KILL_PROCESS,
 * KILL_THREAD, TRAP, ERRNO, USER_NOTIF, TRACE, LOG, ALLOW):
 *
 *   ALLOW, LOG      the call is made (LOG: one debug line)
 *   ERRNO           not made; returns -(data), at most 4095
 *   TRAP            not made; SIGSYS with si_code SYS_SECCOMP, the call
 *                   number, arch and data (si_errno), forced as Linux's
 *                   force_sig_seccomp does (blocked or ignored: the
 *                   default action, which kills)
 *   TRACE           no tracer can be attached to a guest: ENOSYS, as
 *                   Linux says when none is
 *   USER_NOTIF      no listener (SECCOMP_FILTER_FLAG_NEW_LISTENER is
 *                   refused): ENOSYS
 *   KILL_THREAD     the thread ends (the last one: the process, by SIGSYS)
 *   KILL_PROCESS    the process ends by SIGSYS
 *
 * Strict mode (SECCOMP_SET_MODE_STRICT) allows read, write, exit and
 * rt_sigreturn; anything else kills with SIGKILL. A filter needs
 * no_new_privs or CAP_SYS_ADMIN (EACCES). hvrun's vDSO clock calls are
 * not syscalls, as Linux's vDSO's are not.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"
#include "ptrace.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define MAX_INSNS 4096 /* BPF_MAXINSNS */
#define MAX_TOTAL_INSNS (256 * 1024 / 8) /* MAX_INSNS_PER_PATH */
#define MEM_WORDS 16   /* BPF_MEMWORDS */

struct proxy_seccomp_filter {
    int refs;
    bool log;
    struct proxy_seccomp_filter *prev;
    uint32_t len, total; /* this filter's and the chain's instructions */
    struct sock_filter insns[];
};

void proxy_seccomp_ref(struct proxy_seccomp_filter *f)
{
    if (f)
        f->refs++;
}

void proxy_seccomp_unref(struct proxy_seccomp_filter *f)
{
    while (f && --f->refs == 0) {
        struct proxy_seccomp_filter *prev = f->prev;
        free(f);
        f = prev;
    }
}

/* ---- loading ------------------------------------------------------------- */

/* seccomp_check_filter: what a seccomp program may do. */
static bool insn_allowed(struct sock_filter *in, uint32_t pc, uint32_t len)
{
    uint16_t code = in->code;
    switch (code) {
    case BPF_LD | BPF_W | BPF_ABS:
        return in->k < sizeof(struct seccomp_data) && (in->k & 3) == 0;
    case BPF_LD | BPF_W | BPF_LEN:
    case BPF_LDX | BPF_W | BPF_LEN:
    case BPF_LD | BPF_IMM:
    case BPF_LDX | BPF_IMM:
    case BPF_MISC | BPF_TAX:
    case BPF_MISC | BPF_TXA:
    case BPF_RET | BPF_K:
    case BPF_RET | BPF_A:
        return true;
    case BPF_LD | BPF_MEM:
    case BPF_LDX | BPF_MEM:
    case BPF_ST:
    case BPF_STX:
        return in->k < MEM_WORDS;
    case BPF_ALU | BPF_ADD | BPF_K: case BPF_ALU | BPF_ADD | BPF_X:
    case BPF_ALU | BPF_SUB | BPF_K: case BPF_ALU | BPF_SUB | BPF_X:
    case BPF_ALU | BPF_MUL | BPF_K: case BPF_ALU | BPF_MUL | BPF_X:
    case BPF_ALU | BPF_DIV | BPF_X: case BPF_ALU | BPF_MOD | BPF_X:
    case BPF_ALU | BPF_AND | BPF_K: case BPF_ALU | BPF_AND | BPF_X:
    case BPF_ALU | BPF_OR | BPF_K:  case BPF_ALU | BPF_OR | BPF_X:
    case BPF_ALU | BPF_XOR | BPF_K: case BPF_ALU | BPF_XOR | BPF_X:
    case BPF_ALU | BPF_LSH | BPF_X: case BPF_ALU | BPF_RSH | BPF_X:
    case BPF_ALU | BPF_NEG:
        return true;
    case BPF_ALU | BPF_DIV | BPF_K:
    case BPF_ALU | BPF_MOD | BPF_K:
        return in->k != 0;
    case BPF_ALU | BPF_LSH | BPF_K:
    case BPF_ALU | BPF_RSH | BPF_K:
        return in->k < 32;
    case BPF_JMP | BPF_JA:
        return in->k < len - pc - 1;
    case BPF_JMP | BPF_JEQ | BPF_K: case BPF_JMP | BPF_JEQ | BPF_X:
    case BPF_JMP | BPF_JGE | BPF_K: case BPF_JMP | BPF_JGE | BPF_X:
    case BPF_JMP | BPF_JGT | BPF_K: case BPF_JMP | BPF_JGT | BPF_X:
    case BPF_JMP | BPF_JSET | BPF_K: case BPF_JMP | BPF_JSET | BPF_X:
        return (uint32_t)in->jt < len - pc - 1 &&
               (uint32_t)in->jf < len - pc - 1;
    default:
        return false;
    }
}

static long filter_in(struct proxy_process *p, gva_t prog_gva,
                      struct proxy_seccomp_filter **out)
{
    struct sock_fprog prog;
    if (proxy_copy_in(p, &prog, prog_gva, sizeof(prog)) < 0)
        return -EFAULT;
    if (prog.len == 0 || prog.len > MAX_INSNS)
        return -EINVAL;
    struct proxy_seccomp_filter *f =
        malloc(sizeof(*f) + prog.len * sizeof(struct sock_filter));
    if (!f)
        return -ENOMEM;
    if (proxy_copy_in(p, f->insns, (gva_t)(uintptr_t)prog.filter,
                      prog.len * sizeof(struct sock_filter)) < 0) {
        free(f);
        return -EFAULT;
    }
    uint16_t last = f->insns[prog.len - 1].code;
    bool ok = last == (BPF_RET | BPF_K) || last == (BPF_RET | BPF_A);
    for (uint32_t pc = 0; ok && pc < prog.len; pc++)
        ok = insn_allowed(&f->insns[pc], pc, prog.len);
    if (!ok) {
        free(f);
        return -EINVAL;
    }
    f->len = prog.len;
    f->refs = 1;
    f->log = false;
    f->prev = NULL;
    *out = f;
    return 0;
}

/* ---- running ------------------------------------------------------------- */

static uint32_t data_word(const struct seccomp_data *d, uint32_t off)
{
    uint32_t w;
    memcpy(&w, (const char *)d + off, 4);
    return w;
}

static uint32_t run_filter(const struct proxy_seccomp_filter *f,
                           const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[MEM_WORDS] = {0};
    for (uint32_t pc = 0; pc < f->len; pc++) {
        const struct sock_filter *in = &f->insns[pc];
        uint32_t src = BPF_SRC(in->code) == BPF_X ? x : in->k;
        switch (BPF_CLASS(in->code)) {
        case BPF_LD:
            a = BPF_MODE(in->code) == BPF_ABS   ? data_word(d, in->k)
                : BPF_MODE(in->code) == BPF_LEN ? sizeof(*d)
                : BPF_MODE(in->code) == BPF_MEM ? mem[in->k]
                                                : in->k;
            break;
        case BPF_LDX:
            x = BPF_MODE(in->code) == BPF_LEN   ? sizeof(*d)
                : BPF_MODE(in->code) == BPF_MEM ? mem[in->k]
                                                : in->k;
            break;
        case BPF_ST:
            mem[in->k] = a;
            break;
        case BPF_STX:
            mem[in->k] = x;
            break;
        case BPF_ALU:
            switch (BPF_OP(in->code)) {
            case BPF_ADD: a += src; break;
            case BPF_SUB: a -= src; break;
            case BPF_MUL: a *= src; break;
            case BPF_DIV: if (!src) return 0; a /= src; break;
            case BPF_MOD: if (!src) return 0; a %= src; break;
            case BPF_AND: a &= src; break;
            case BPF_OR: a |= src; break;
            case BPF_XOR: a ^= src; break;
            case BPF_LSH: a = src < 32 ? a << src : 0; break;
            case BPF_RSH: a = src < 32 ? a >> src : 0; break;
            case BPF_NEG: a = -a; break;
            }
            break;
        case BPF_JMP: {
            if (BPF_OP(in->code) == BPF_JA) {
                pc += in->k;
                break;
            }
            bool t = BPF_OP(in->code) == BPF_JEQ   ? a == src
                     : BPF_OP(in->code) == BPF_JGT ? a > src
                     : BPF_OP(in->code) == BPF_JGE ? a >= src
                                                   : (a & src) != 0;
            pc += t ? in->jt : in->jf;
            break;
        }
        case BPF_RET:
            return BPF_RVAL(in->code) == BPF_A ? a : in->k;
        case BPF_MISC:
            if (BPF_MISCOP(in->code) == BPF_TAX)
                x = a;
            else
                a = x;
            break;
        }
    }
    return 0; /* not reached: the last instruction returns */
}

/* Linux's precedence of actions: lower full action values lose. */
static int precedence(uint32_t action_full)
{
    switch (action_full) {
    case SECCOMP_RET_KILL_PROCESS: return 7;
    case SECCOMP_RET_KILL_THREAD: return 6;
    case SECCOMP_RET_TRAP: return 5;
    case SECCOMP_RET_ERRNO: return 4;
    case SECCOMP_RET_USER_NOTIF: return 3;
    case SECCOMP_RET_TRACE: return 2;
    case SECCOMP_RET_LOG: return 1;
    case SECCOMP_RET_ALLOW: return 0;
    default: return 7; /* an unknown action kills the process */
    }
}

static struct proxy_thread *calling_thread(struct proxy_process *p)
{
    return &p->threads[p->cur];
}

/* The thread ends by seccomp: the process when it is the last one. */
static long kill_thread(struct proxy_process *p, bool whole_process)
{
    int live = 0;
    for (int i = 0; i < p->nr_threads; i++)
        live += p->threads[i].state != PROXY_THREAD_EXITED;
    if (whole_process || live <= 1) {
        proxy_process_kill(p, SIGSYS);
        return PROXY_RET_NORETURN;
    }
    return proxy_thread_exit_current(p);
}

static long trap(struct proxy_process *p, uint64_t nr, uint32_t data,
                 uint64_t ip)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = SIGSYS;
    info.si_code = 1; /* SYS_SECCOMP */
    info.si_errno = (int)(data & SECCOMP_RET_DATA);
    info.si_call_addr = (void *)(uintptr_t)ip;
    info.si_syscall = (int)nr;
    info.si_arch = AUDIT_ARCH_X86_64;
    proxy_signal_force_thread(p, p->tid, &info);
    return (long)nr; /* Linux leaves rax the call's number (rollback) */
}

bool proxy_seccomp_blocks(struct proxy_process *p, uint64_t nr,
                          const uint64_t args[6], uint64_t ip, long *ret)
{
    struct proxy_thread *t = calling_thread(p);
    if (t->seccomp_strict) {
        if (nr == SYS_read || nr == SYS_write || nr == SYS_exit ||
            nr == SYS_rt_sigreturn)
            return false;
        proxy_process_kill(p, SIGKILL);
        *ret = PROXY_RET_NORETURN;
        return true;
    }
    if (!t->seccomp)
        return false;
    struct seccomp_data d = {.nr = (int)nr, .arch = AUDIT_ARCH_X86_64,
                             .instruction_pointer = ip};
    memcpy(d.args, args, sizeof(d.args));
    uint32_t best = SECCOMP_RET_ALLOW;
    bool log = false;
    for (const struct proxy_seccomp_filter *f = t->seccomp; f; f = f->prev) {
        uint32_t r = run_filter(f, &d);
        if (precedence(r & SECCOMP_RET_ACTION_FULL) >
            precedence(best & SECCOMP_RET_ACTION_FULL))
            best = r;
        log |= f->log;
    }
    uint32_t action = best & SECCOMP_RET_ACTION_FULL;
    uint32_t data = best & SECCOMP_RET_DATA;
    switch (action) {
    case SECCOMP_RET_ALLOW:
        return false;
    case SECCOMP_RET_LOG:
        proxy_log(p, 2, "seccomp: logged %s", proxy_syscall_name(nr));
        return false;
    case SECCOMP_RET_ERRNO:
        *ret = -(long)(data > 4095 ? 4095 : data);
        break;
    case SECCOMP_RET_TRAP:
        *ret = trap(p, nr, data, ip);
        break;
    case SECCOMP_RET_TRACE: {
        int traced = proxy_ptrace_seccomp_trace(p, data);
        if (traced == 0)
            return false; /* its tracer has seen it: the call goes on */
        *ret = traced > 0 ? PROXY_RET_BLOCK : -ENOSYS;
        break;
    }
    case SECCOMP_RET_USER_NOTIF:
        *ret = -ENOSYS;
        break;
    case SECCOMP_RET_KILL_THREAD:
        *ret = kill_thread(p, false);
        break;
    default: /* KILL_PROCESS and unknown actions */
        *ret = kill_thread(p, true);
        break;
    }
    if (log && action != SECCOMP_RET_ALLOW)
        proxy_log(p, 2, "seccomp: %s stopped (action %#x)",
                  proxy_syscall_name(nr), action);
    return true;
}

/* ---- the calls ----------------------------------------------------------- */

/* no_new_privs, or CAP_SYS_ADMIN in its own user namespace (Linux's
 * seccomp_prepare_filter: ns_capable_noaudit(current_user_ns())). */
static bool may_filter(struct proxy_process *p)
{
    return p->prctl.no_new_privs || proxy_ns_capable(p);
}

#define KNOWN_FLAGS                                                         \
    (SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG |                  \
     SECCOMP_FILTER_FLAG_SPEC_ALLOW | SECCOMP_FILTER_FLAG_NEW_LISTENER |    \
     SECCOMP_FILTER_FLAG_TSYNC_ESRCH | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)

static long set_filter(struct proxy_process *p, uint64_t flags, gva_t prog)
{
    if (flags & ~(uint64_t)KNOWN_FLAGS)
        return -EINVAL;
    /* No listener fd can be offered (the guest has no seccomp unotify
     * supervisor side); Linux's EINVAL for what it cannot do. */
    if (flags & (SECCOMP_FILTER_FLAG_NEW_LISTENER |
                 SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV))
        return -EINVAL;
    if (!may_filter(p))
        return -EACCES;
    struct proxy_thread *t = calling_thread(p);
    if (t->seccomp_strict)
        return -EINVAL;
    struct proxy_seccomp_filter *f;
    long rc = filter_in(p, prog, &f);
    if (rc < 0)
        return rc;
    f->total = f->len + (t->seccomp ? t->seccomp->total + 4 : 0);
    if (f->total > MAX_TOTAL_INSNS) {
        free(f);
        return -ENOMEM;
    }
    f->log = (flags & SECCOMP_FILTER_FLAG_LOG) != 0;
    f->prev = t->seccomp; /* the caller's reference moves into f */
    t->seccomp = f;
    if (flags & SECCOMP_FILTER_FLAG_TSYNC) {
        for (int i = 0; i < p->nr_threads; i++) {
            struct proxy_thread *o = &p->threads[i];
            if (o == t || o->state == PROXY_THREAD_EXITED)
                continue;
            proxy_seccomp_unref(o->seccomp);
            proxy_seccomp_ref(f);
            o->seccomp = f;
        }
    }
    return 0;
}

static long set_strict(struct proxy_process *p)
{
    struct proxy_thread *t = calling_thread(p);
    if (t->seccomp)
        return -EINVAL; /* Linux: a filtered thread cannot go strict */
    t->seccomp_strict = true;
    return 0;
}

static long action_avail(struct proxy_process *p, gva_t action_gva)
{
    uint32_t action;
    if (proxy_copy_in(p, &action, action_gva, sizeof(action)) < 0)
        return -EFAULT;
    switch (action) {
    case SECCOMP_RET_KILL_PROCESS: case SECCOMP_RET_KILL_THREAD:
    case SECCOMP_RET_TRAP: case SECCOMP_RET_ERRNO:
    case SECCOMP_RET_TRACE: case SECCOMP_RET_LOG: case SECCOMP_RET_ALLOW:
        return 0;
    default: /* USER_NOTIF: no listener can be had (above) */
        return -EOPNOTSUPP;
    }
}

static long sys_seccomp(struct proxy_process *p, const uint64_t a[6])
{
    switch (a[0]) {
    case SECCOMP_SET_MODE_STRICT:
        return a[1] || a[2] ? -EINVAL : set_strict(p);
    case SECCOMP_SET_MODE_FILTER:
        return set_filter(p, a[1], a[2]);
    case SECCOMP_GET_ACTION_AVAIL:
        return a[1] ? -EINVAL : action_avail(p, a[2]);
    case SECCOMP_GET_NOTIF_SIZES: {
        if (a[1])
            return -EINVAL;
        struct seccomp_notif_sizes s = {
            .seccomp_notif = sizeof(struct seccomp_notif),
            .seccomp_notif_resp = sizeof(struct seccomp_notif_resp),
            .seccomp_data = sizeof(struct seccomp_data)};
        return proxy_copy_out(p, a[2], &s, sizeof(s)) < 0 ? -EFAULT : 0;
    }
    default:
        return -EINVAL;
    }
}

long proxy_seccomp_prctl(struct proxy_process *p, const uint64_t a[6])
{
    struct proxy_thread *t = calling_thread(p);
    if (a[0] == PR_GET_SECCOMP)
        return t->seccomp_strict ? SECCOMP_MODE_STRICT
               : t->seccomp      ? SECCOMP_MODE_FILTER
                                 : SECCOMP_MODE_DISABLED;
    switch (a[1]) {
    case SECCOMP_MODE_STRICT:
        return set_strict(p);
    case SECCOMP_MODE_FILTER:
        return set_filter(p, 0, a[2]);
    default:
        return -EINVAL;
    }
}

int proxy_seccomp_filters(const struct proxy_thread *t)
{
    int n = 0;
    for (const struct proxy_seccomp_filter *f = t->seccomp; f; f = f->prev)
        n++;
    return n;
}

const struct proxy_syscall proxy_seccomp_syscalls[] = {
    {SYS_seccomp, "seccomp", sys_seccomp},
    {-1, NULL, NULL},
};
