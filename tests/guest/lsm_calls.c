/*
 * lsm_calls: the LSM syscalls (Linux 6.8) where any kernel answers the
 * same, compared with a native run: the argument errors of
 * lsm_list_modules, lsm_get_self_attr and lsm_set_self_attr in Linux's
 * order, and that the module list holds LSM ids (100 capability to 113
 * ipe) and writes its size back. Which modules a kernel has is the
 * host's (hvrun's model has capability alone: kernel/lsm.c; this test's
 * host listed lockdown first, without capability), so none is printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define NR_GET 459
#define NR_SET 460
#define NR_LIST 461
#define LSM_ATTR_CURRENT 100

static void show(const char *what, long r) { printf("%s: %s\n", what, result_text(r)); }

int main(void)
{
    uint64_t ids[32];
    uint32_t size = sizeof(ids);
    long n = syscall(NR_LIST, ids, &size, 0);
    CHECK(n >= 1);
    bool known = true;
    for (long i = 0; i < n; i++)
        known = known && ids[i] >= 100 && ids[i] <= 113;
    printf("list: LSM ids %s, size written %s\n", known ? "yes" : "no",
           size == n * sizeof(uint64_t) ? "right" : "wrong");
    size = sizeof(ids);
    show("list, flags 1", syscall(NR_LIST, ids, &size, 1));
    show("list, ids NULL", syscall(NR_LIST, NULL, &size, 0));
    show("list, size NULL", syscall(NR_LIST, ids, NULL, 0));
    size = 0;
    show("list, size 0", syscall(NR_LIST, ids, &size, 0));
    printf("list, size 0 wrote the size: %s\n", size >= sizeof(uint64_t) ? "yes" : "no");

    unsigned char ctx[64] = {0};
    uint32_t room = sizeof(ctx);
    show("get, attr 0", syscall(NR_GET, 0, ctx, &room, 0));
    show("get, size NULL", syscall(NR_GET, LSM_ATTR_CURRENT, ctx, NULL, 0));
    show("get, bad size pointer", syscall(NR_GET, LSM_ATTR_CURRENT, ctx, (void *)8, 0));
    show("get, flags 2", syscall(NR_GET, LSM_ATTR_CURRENT, ctx, &room, 2));
    show("get, single without ctx", syscall(NR_GET, LSM_ATTR_CURRENT, NULL, &room, 1));
    show("get, single of module 0", syscall(NR_GET, LSM_ATTR_CURRENT, ctx, &room, 1));

    show("set, flags 1", syscall(NR_SET, LSM_ATTR_CURRENT, ctx, sizeof(ctx), 1));
    show("set, size 16", syscall(NR_SET, LSM_ATTR_CURRENT, ctx, 16, 0));
    show("set, size 8192", syscall(NR_SET, LSM_ATTR_CURRENT, ctx, 8192, 0));
    show("set, bad pointer", syscall(NR_SET, LSM_ATTR_CURRENT, (void *)8, 64, 0));
    uint64_t bad_len[8] = {100, 0, 16, 0}; /* len shorter than its header */
    show("set, len under the header", syscall(NR_SET, LSM_ATTR_CURRENT, bad_len, sizeof(bad_len), 0));
    return 0;
}
