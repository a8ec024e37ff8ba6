/*
 * futex_key_fault.c - a shared futex (no FUTEX_PRIVATE_FLAG) is keyed by
 * its page, which Linux looks up for a wake and a requeue as for a wait:
 * an address with no page to read there (unmapped, PROT_NONE, past the end
 * of a truncated file) or a read-only anonymous page is EFAULT, for either
 * address of FUTEX_CMP_REQUEUE and FUTEX_WAKE_OP. A private futex's key is
 * its address alone: a wake there finds no waiter (0). LTP's futex_wake05
 * and futex_cmp_requeue03.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static long futex(uint32_t *uaddr, int op, uint32_t val, unsigned long val2,
                  uint32_t *uaddr2, uint32_t val3)
{
    return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

static void *map(int prot, int flags, int fd)
{
    void *m = mmap(NULL, 4096, prot, flags, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return m;
}

int main(void)
{
    uint32_t *unmapped = map(PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1);
    munmap(unmapped, 4096);
    uint32_t *none = map(PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    uint32_t *read_only = map(PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    char name[] = "/tmp/futex_key_fault.XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0 || ftruncate(fd, 4096) < 0) {
        perror("file");
        return 1;
    }
    unlink(name);
    uint32_t *truncated = map(PROT_READ | PROT_WRITE, MAP_SHARED, fd);
    if (ftruncate(fd, 0) < 0)
        return 1;
    uint32_t good = 0;
    struct {
        const char *name;
        uint32_t *addr;
    } cases[] = {{"unmapped", unmapped},
                 {"PROT_NONE", none},
                 {"read-only anonymous", read_only},
                 {"file truncated", truncated},
                 {"writable", &good}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t *a = cases[i].addr;
        printf("%s: wake %s", cases[i].name, result_text(futex(a, FUTEX_WAKE, 1, 0,
                                                       NULL, 0)));
        printf(", private wake %s",
               result_text(futex(a, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0)));
        printf(", wake_bitset %s",
               result_text(futex(a, FUTEX_WAKE_BITSET, 1, 0, NULL, ~0u)));
        printf(", requeue from %s",
               result_text(futex(a, FUTEX_REQUEUE, 1, 1, &good, 0)));
        printf(", cmp_requeue to %s",
               result_text(futex(&good, FUTEX_CMP_REQUEUE, 1, 1, a, 0)));
        printf(", wake_op on %s\n",
               result_text(futex(&good, FUTEX_WAKE_OP, 1, 1, a,
                         FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0))));
    }
    return 0;
}
