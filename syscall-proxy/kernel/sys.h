/*
 * sys.h - what the identity and process-control files of kernel/ (sys.c,
 * cred.c, sched.c, prctl.c; once all misc.c) share: the privilege checks, the
 * "this process" test of a pid argument, the out-parameter stores and the
 * prctl state.
 */
#ifndef PROXY_KERNEL_SYS_H
#define PROXY_KERNEL_SYS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "proxy.h"
#include "kernel.h"

/* prctl flags and the nice value live in the process (fork copies them;
 * Linux clears pdeathsig in the child). */
static inline struct proxy_prctl_state *misc_state(struct proxy_process *p)
{
    return &p->prctl;
}

/* capable(): the run's initial user namespace (host-wide limits, nice,
 * memory locking). The set*id calls need their capability only in the
 * caller's own user namespace (id_privileged). */
static inline bool privileged(const struct proxy_process *p)
{
    return proxy_ns_init_capable(p);
}

static inline bool id_privileged(const struct proxy_process *p)
{
    return proxy_ns_capable(p);
}

/* A pid argument naming this process: 0 ("self"), its pid or its tid. */
static inline bool is_self(const struct proxy_process *p, int pid)
{
    return pid == 0 || pid == p->pid || pid == p->tid ||
           pid == proxy_ns_pid_of(p, p);
}

static inline long put_u32(struct proxy_process *p, gva_t dst, uint32_t v)
{
    return proxy_copy_out(p, dst, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

static inline long put_int(struct proxy_process *p, gva_t dst, int v)
{
    return proxy_copy_out(p, dst, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

static inline long put_u64(struct proxy_process *p, gva_t dst, uint64_t v)
{
    return proxy_copy_out(p, dst, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

#endif
