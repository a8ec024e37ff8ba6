/*
 * process_vm.c - process_vm_readv and process_vm_writev as Linux gives
 * them: a parent reads and writes a forked child's buffer (scattered on
 * both sides), the caller itself, a partial transfer that stops at the
 * first unmapped or unwritable page, EFAULT only when nothing moved,
 * ESRCH for a pid no process has, EINVAL for flags, IOV_MAX and negative
 * lengths, and 0 for empty sides before the pid is looked at. Run
 * natively and under hvrun, the output must match
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096

static char child_buf[64] = "the child's own bytes, before anything";
static int pipe_up[2], pipe_down[2];

static const char *res(ssize_t rc)
{
    static char buf[64];
    if (rc >= 0)
        snprintf(buf, sizeof(buf), "%zd", rc);
    else
        snprintf(buf, sizeof(buf), "%s", strerrorname_np(errno));
    return buf;
}

static void child(char *region)
{
    /* region: page 0 read-write, page 1 read-only, page 2 unmapped */
    memset(region, 'c', PAGE);
    CHECK(mprotect(region + PAGE, PAGE, PROT_READ) == 0);
    CHECK(munmap(region + 2 * PAGE, PAGE) == 0);
    char ok = 1;
    CHECK(write(pipe_up[1], &ok, 1) == 1);
    CHECK(read(pipe_down[0], &ok, 1) == 1); /* the parent is done */
    printf("child sees: %s\n", child_buf);
    printf("child page 0 tail: %.8s\n", region + PAGE - 8);
    _exit(0);
}

static void with_child(void)
{
    char *region = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED);
    CHECK(pipe(pipe_up) == 0 && pipe(pipe_down) == 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        child(region);
    char ok;
    CHECK(read(pipe_up[0], &ok, 1) == 1);

    char a[10] = {0}, b[40] = {0};
    struct iovec local[2] = {{a, 9}, {b, 30}};
    struct iovec remote[2] = {{child_buf, 4}, {child_buf + 4, 30}};
    ssize_t n = process_vm_readv(c, local, 2, remote, 2, 0);
    printf("readv scattered: %s\n", res(n));
    printf("  a=%.9s b=%.30s\n", a, b);

    char msg[] = "written by the parent";
    struct iovec wl[1] = {{msg, sizeof(msg)}};
    struct iovec wr[1] = {{child_buf, sizeof(msg)}};
    printf("writev: %s\n", res(process_vm_writev(c, wl, 1, wr, 1, 0)));

    /* remote: the last 8 bytes of page 0, then the read-only page */
    static char big[3 * PAGE];
    struct iovec bl[1] = {{big, sizeof(big)}};
    struct iovec br[1] = {{region + PAGE - 8, 2 * PAGE}};
    printf("readv into the unmapped page: %s\n",
           res(process_vm_readv(c, bl, 1, br, 1, 0)));
    memset(big, 'p', sizeof(big));
    printf("writev onto the read-only page: %s\n",
           res(process_vm_writev(c, bl, 1, br, 1, 0)));
    struct iovec gone[1] = {{region + 2 * PAGE, 16}};
    printf("readv of unmapped only: %s\n",
           res(process_vm_readv(c, bl, 1, gone, 1, 0)));
    struct iovec two[2] = {{region + 2 * PAGE, 16}, {region, 16}};
    printf("readv unmapped then mapped: %s\n",
           res(process_vm_readv(c, bl, 1, two, 2, 0)));
    struct iovec ro[1] = {{region + PAGE, 16}};
    printf("writev of read-only only: %s\n",
           res(process_vm_writev(c, bl, 1, ro, 1, 0)));
    printf("readv of read-only: %s\n", res(process_vm_readv(c, bl, 1, ro, 1, 0)));

    ok = 1;
    CHECK(write(pipe_down[1], &ok, 1) == 1);
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("child status %d\n", WEXITSTATUS(st));
    printf("reaped child: %s\n", res(process_vm_readv(c, local, 2, remote, 2, 0)));
    munmap(region, 3 * PAGE);
}

static void self_and_errors(void)
{
    pid_t me = getpid();
    char src[32] = "copied within the caller", dst[32] = {0};
    struct iovec l[1] = {{dst, sizeof(dst)}}, r[1] = {{src, sizeof(src)}};
    printf("self readv: %s", res(process_vm_readv(me, l, 1, r, 1, 0)));
    printf(" -> %s\n", dst);

    /* the local side unwritable: partial to the page end */
    char *two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED);
    memset(two, 's', 2 * PAGE);
    CHECK(mprotect(two + PAGE, PAGE, PROT_READ) == 0);
    static char from[PAGE];
    struct iovec ll[1] = {{two + PAGE - 100, 200}};
    struct iovec rr[1] = {{from, 200}};
    printf("self readv into read-only local: %s\n",
           res(process_vm_readv(me, ll, 1, rr, 1, 0)));
    struct iovec llro[1] = {{two + PAGE, 10}};
    printf("self readv into read-only only: %s\n",
           res(process_vm_readv(me, llro, 1, rr, 1, 0)));

    printf("flags 1: %s\n", res(process_vm_readv(me, l, 1, r, 1, 1)));
    printf("liovcnt 1025: %s\n", res(process_vm_readv(me, l, 1025, r, 1, 0)));
    printf("riovcnt 1025: %s\n", res(process_vm_readv(me, l, 1, r, 1025, 0)));
    printf("local iovec unreadable: %s\n",
           res(process_vm_readv(me, (struct iovec *)8, 1, r, 1, 0)));
    printf("remote iovec unreadable: %s\n",
           res(process_vm_readv(me, l, 1, (struct iovec *)8, 1, 0)));
    struct iovec neg[1] = {{dst, (size_t)-1}};
    printf("negative local length: %s\n",
           res(process_vm_readv(me, neg, 1, r, 1, 0)));
    printf("negative remote length: %s\n",
           res(process_vm_readv(me, l, 1, neg, 1, 0)));
    struct iovec kern[1] = {{(void *)0xffff800000000000ULL, 8}};
    printf("local kernel address: %s\n",
           res(process_vm_readv(me, kern, 1, r, 1, 0)));
    printf("remote kernel address: %s\n",
           res(process_vm_readv(me, l, 1, kern, 1, 0)));
    struct iovec empty[1] = {{dst, 0}};
    printf("empty local, no such pid: %s\n",
           res(process_vm_readv(0x3ffffff, empty, 1, r, 1, 0)));
    printf("empty remote, no such pid: %s\n",
           res(process_vm_readv(0x3ffffff, l, 1, empty, 1, 0)));
    printf("zero counts: %s\n", res(process_vm_readv(me, NULL, 0, NULL, 0, 0)));
    printf("no such pid: %s\n", res(process_vm_readv(0x3ffffff, l, 1, r, 1, 0)));
    printf("pid 0: %s\n", res(process_vm_readv(0, l, 1, r, 1, 0)));
    printf("pid -1: %s\n", res(process_vm_readv(-1, l, 1, r, 1, 0)));
    struct iovec ln[1] = {{NULL, 8}};
    printf("local NULL: %s\n", res(process_vm_readv(me, ln, 1, r, 1, 0)));
    munmap(two, 2 * PAGE);
}

/* A process that dropped to nobody may not read root's (PTRACE_MODE_ATTACH:
 * EPERM), but may read itself and another nobody process. */
static void dropped_ids(void)
{
    static char word[8] = "parent";
    pid_t parent = getpid();
    pid_t c = fork();
    if (c == 0) {
        char buf[8] = {0};
        struct iovec l[1] = {{buf, sizeof(buf)}}, r[1] = {{word, sizeof(word)}};
        if (setuid(65534) == 0) {
            printf("nobody reads root's process: %s\n",
                   res(process_vm_readv(parent, l, 1, r, 1, 0)));
            printf("nobody reads itself: %s\n",
                   res(process_vm_readv(getpid(), l, 1, r, 1, 0)));
        }
        _exit(0);
    }
    waitpid(c, NULL, 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    with_child();
    self_and_errors();
    if (getuid() == 0)
        dropped_ids();
    return 0;
}
