/*
 * lsm.c - the LSM syscalls of Linux 6.8 (security/lsm_syscalls.c,
 * security.c): lsm_list_modules, lsm_get_self_attr, lsm_set_self_attr,
 * answered as a kernel whose only security module is "capability" (the
 * one hvrun models: a guest's capabilities, kernel/cred.c), the same on
 * every host. The host's own modules (AppArmor, SELinux, Landlock, ...)
 * and their labels are the host's business and never shown; the run has
 * no securityfs either, so /sys/kernel/security/lsm is missing, as in a
 * container that does not mount it. The capability module keeps no
 * process attributes: get and set are EOPNOTSUPP after Linux's argument
 * checks, in its order.
 */
#include "proxy.h"
#include "kernel.h"

#include <errno.h>
#include <stdint.h>

#define NR_LSM_GET_SELF_ATTR 459 /* x86-64; older headers lack them */
#define NR_LSM_SET_SELF_ATTR 460
#define NR_LSM_LIST_MODULES 461
#define LSM_ID_CAPABILITY 100
#define LSM_ATTR_UNDEF 0
#define LSM_ID_UNDEF 0
#define LSM_FLAG_SINGLE 1
#define LSM_CTX_HEADER_BYTES 32 /* struct lsm_ctx: id, flags, len, ctx_len */
#define LSM_SET_SIZE_MAX 4096   /* PAGE_SIZE */

static const uint64_t active_lsms[] = {LSM_ID_CAPABILITY};
#define NR_ACTIVE_LSMS (sizeof(active_lsms) / sizeof(active_lsms[0]))

/* lsm_list_modules(ids, size, flags): the total size is written back
 * before E2BIG, as Linux does, then the ids; returns their count. */
static long sys_lsm_list_modules(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t total = (uint32_t)sizeof(active_lsms), usize;
    if ((uint32_t)a[2])
        return -EINVAL;
    if (proxy_copy_in(p, &usize, a[1], sizeof(usize)) < 0 ||
        proxy_copy_out(p, a[1], &total, sizeof(total)) < 0)
        return -EFAULT;
    if (usize < total)
        return -E2BIG;
    if (proxy_copy_out(p, a[0], active_lsms, sizeof(active_lsms)) < 0)
        return -EFAULT;
    return (long)NR_ACTIVE_LSMS;
}

/* lsm_get_self_attr(attr, ctx, size, flags): no module has attributes,
 * so a total of 0 bytes is written back and the answer is EOPNOTSUPP
 * (LSM_RET_DEFAULT). */
static long sys_lsm_get_self_attr(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t attr = (uint32_t)a[0], flags = (uint32_t)a[3], left;
    if (attr == LSM_ATTR_UNDEF || !a[2])
        return -EINVAL;
    if (proxy_copy_in(p, &left, a[2], sizeof(left)) < 0)
        return -EFAULT;
    if (flags) {
        if (flags != LSM_FLAG_SINGLE || !a[1])
            return -EINVAL;
        uint64_t id;
        if (proxy_copy_in(p, &id, a[1], sizeof(id)) < 0)
            return -EFAULT;
        if (id == LSM_ID_UNDEF)
            return -EINVAL;
    }
    uint32_t total = 0;
    if (proxy_copy_out(p, a[2], &total, sizeof(total)) < 0)
        return -EFAULT;
    return -EOPNOTSUPP;
}

/* lsm_set_self_attr(attr, ctx, size, flags): the context is read and
 * checked as security_setselfattr does; no module takes it. */
static long sys_lsm_set_self_attr(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t size = (uint32_t)a[2];
    if ((uint32_t)a[3])
        return -EINVAL;
    if (size < LSM_CTX_HEADER_BYTES)
        return -EINVAL;
    if (size > LSM_SET_SIZE_MAX)
        return -E2BIG;
    uint8_t ctx[LSM_SET_SIZE_MAX];
    if (proxy_copy_in(p, ctx, a[1], size) < 0)
        return -EFAULT;
    uint64_t len = ((const uint64_t *)ctx)[2], ctx_len = ((const uint64_t *)ctx)[3];
    uint64_t required = ctx_len + LSM_CTX_HEADER_BYTES;
    if (ctx_len >= UINT32_MAX || required >= UINT32_MAX || size < len ||
        size < required || len < required)
        return -EINVAL;
    return -EOPNOTSUPP;
}

const struct proxy_syscall proxy_lsm_syscalls[] = {
    {NR_LSM_GET_SELF_ATTR, "lsm_get_self_attr", sys_lsm_get_self_attr},
    {NR_LSM_SET_SELF_ATTR, "lsm_set_self_attr", sys_lsm_set_self_attr},
    {NR_LSM_LIST_MODULES, "lsm_list_modules", sys_lsm_list_modules},
    {-1, NULL, NULL},
};
