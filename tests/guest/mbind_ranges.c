/*
 * mbind_ranges: mbind's policy of a range is read back by
 * get_mempolicy(MPOL_F_ADDR) (LTP mbind01) on a machine of one node:
 * MPOL_BIND and MPOL_INTERLEAVE with node 0, MPOL_PREFERRED without
 * nodes (local), MPOL_DEFAULT clearing it; a policy on the middle pages
 * leaves the ends default; munmap and a new mapping over a range drop
 * it; a fork child keeps it. Refusals in Linux's order: an unknown mode
 * or flags, both node-mode flags, MPOL_DEFAULT or MPOL_LOCAL with nodes,
 * BIND without, a bad node mask (EFAULT), a hole (EFAULT); and
 * get_mempolicy's: MPOL_F_ADDR outside any mapping (EFAULT), an address
 * without it (EINVAL), MPOL_F_NODE without MPOL_F_ADDR (EINVAL).
 * Compared with a native run (a one-node host).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PG 4096UL

static long mbind_raw(void *addr, unsigned long len, int mode,
                      const unsigned long *mask, unsigned long maxnode,
                      unsigned flags)
{
    return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

static void show(const char *what, void *addr)
{
    int mode = -1;
    unsigned long mask[2] = {0, 0};
    long rc = syscall(SYS_get_mempolicy, &mode, mask, 128, addr,
                      MPOL_F_ADDR);
    if (rc < 0)
        printf("%s: %s\n", what, strerrorname_np(errno));
    else
        printf("%s: mode %d nodes %lx\n", what, mode, mask[0]);
}

int main(void)
{
    unsigned long node0 = 1, node5 = 1UL << 5;
    char *m = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    show("fresh", m);
    printf("bind: %s\n",
           result_text(mbind_raw(m + 2 * PG, 4 * PG, MPOL_BIND, &node0, 64, 0)));
    show("first page", m);
    show("bound page", m + 3 * PG);
    show("last page", m + 7 * PG);
    printf("interleave: %s\n",
           result_text(mbind_raw(m + 3 * PG, PG, MPOL_INTERLEAVE, &node0, 64,
                                 0)));
    show("interleaved page", m + 3 * PG);
    show("bound page after", m + 4 * PG);
    printf("preferred, no nodes: %s\n",
           result_text(mbind_raw(m, PG, MPOL_PREFERRED, NULL, 0, 0)));
    show("preferred page", m);
    printf("default: %s\n",
           result_text(mbind_raw(m + 4 * PG, PG, MPOL_DEFAULT, NULL, 0, 0)));
    show("defaulted page", m + 4 * PG);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        show("child, bound page", m + 5 * PG);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(munmap(m + 5 * PG, PG) == 0);
    show("unmapped page", m + 5 * PG);
    CHECK(mmap(m + 5 * PG, PG, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m + 5 * PG);
    show("mapped again", m + 5 * PG);
    CHECK(mmap(m + 2 * PG, PG, PROT_READ,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m + 2 * PG);
    show("mapped over", m + 2 * PG);
    printf("refusals:\n");
    printf(" unknown mode: %s\n",
           result_text(mbind_raw(m, PG, 99, &node0, 64, 0)));
    printf(" static and relative: %s\n",
           result_text(mbind_raw(m, PG,
                                 MPOL_BIND | MPOL_F_STATIC_NODES |
                                     MPOL_F_RELATIVE_NODES,
                                 &node0, 64, 0)));
    printf(" unknown flags: %s\n",
           result_text(mbind_raw(m, PG, MPOL_BIND, &node0, 64, 0x80)));
    printf(" default with nodes: %s\n",
           result_text(mbind_raw(m, PG, MPOL_DEFAULT, &node0, 64, 0)));
    printf(" local with nodes: %s\n",
           result_text(mbind_raw(m, PG, MPOL_LOCAL, &node0, 64, 0)));
    printf(" bind without nodes: %s\n",
           result_text(mbind_raw(m, PG, MPOL_BIND, NULL, 0, 0)));
    printf(" a node there is not: %s\n",
           result_text(mbind_raw(m, PG, MPOL_BIND, &node5, 64, 0)));
    printf(" bad mask: %s\n",
           result_text(mbind_raw(m, PG, MPOL_BIND, (void *)8, 64, 0)));
    CHECK(munmap(m + 6 * PG, PG) == 0);
    printf(" a hole: %s\n",
           result_text(mbind_raw(m + 5 * PG, 3 * PG, MPOL_BIND, &node0, 64, 0)));
    printf(" unaligned: %s\n",
           result_text(mbind_raw(m + 1, PG, MPOL_BIND, &node0, 64, 0)));
    printf(" empty range: %s\n",
           result_text(mbind_raw(m, 0, MPOL_BIND, NULL, 0, 0)));
    show(" get, unmapped", m + 6 * PG);
    int mode;
    printf(" get, address without MPOL_F_ADDR: %s\n",
           result_text(syscall(SYS_get_mempolicy, &mode, NULL, 0, m, 0)));
    printf(" get, MPOL_F_NODE alone: %s\n",
           result_text(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL,
                               MPOL_F_NODE)));
    printf(" get, MPOL_F_NODE|MPOL_F_ADDR: %s",
           result_text(syscall(SYS_get_mempolicy, &mode, NULL, 0, m,
                               MPOL_F_NODE | MPOL_F_ADDR)));
    printf(", node %d\n", mode);
    return 0;
}
