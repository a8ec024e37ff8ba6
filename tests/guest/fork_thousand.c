/*
 * fork_thousand: 1000 child processes alive at once (LTP's
 * futex_cmp_requeue01 forks 1000 waiters), each released through a pipe
 * and reaped; and a process whose guest-physical memory grows past 20 GiB
 * (six 3 GiB PROT_NONE reservations, then written pages above them) forks
 * a child that reads those pages and writes its own copy; a pipe moves
 * bytes out of and into those pages (hvrun reads and writes them).
 *
 * Under the ptrace backend each guest process's memory is a 256 GiB memfd
 * that hvrun maps; mapped whole, ~510 such views filled the host's 128 TiB
 * of user address space and the 511th fork was EAGAIN. hvrun now maps
 * what the guest uses and grows the view in place (vmm/ptrace.c,
 * map_view and view_grow): the second part checks memory reached that
 * way, in a process and in its fork.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_CHILDREN 1000
#define NR_RESERVATIONS 6
#define RESERVATION (3UL << 30)
#define PATTERN_LEN (64UL << 20)

static int thousand_children(void)
{
    int pfd[2];
    if (pipe(pfd) < 0)
        return -1;
    int made = 0, err = 0;
    for (int i = 0; i < NR_CHILDREN; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            char c;
            close(pfd[1]);
            _exit(read(pfd[0], &c, 1) == 0 ? 0 : 1);
        }
        if (pid < 0) {
            err = errno;
            break;
        }
        made++;
    }
    close(pfd[1]); /* every child reads EOF and exits */
    close(pfd[0]);
    int reaped = 0, clean = 0, st;
    while (wait(&st) > 0) {
        reaped++;
        clean += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    printf("children: made %d of %d (%s), reaped %d, exited 0: %d\n", made,
           NR_CHILDREN, err ? strerrorname_np(err) : "ok", reaped, clean);
    return made == NR_CHILDREN && clean == NR_CHILDREN ? 0 : -1;
}

/* Each page's first word: its index and a tag. */
static int pattern_ok(const uint64_t *mem, uint64_t tag)
{
    for (size_t i = 0; i < PATTERN_LEN / 4096; i++)
        if (mem[i * 512] != (i << 8 | tag))
            return 0;
    return 1;
}

static void write_pattern(uint64_t *mem, uint64_t tag)
{
    for (size_t i = 0; i < PATTERN_LEN / 4096; i++)
        mem[i * 512] = i << 8 | tag;
}

static int grown_memory(void)
{
    for (int i = 0; i < NR_RESERVATIONS; i++)
        if (mmap(NULL, RESERVATION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0) == MAP_FAILED) {
            printf("reservation %d: %s\n", i, strerrorname_np(errno));
            return -1;
        }
    uint64_t *mem = mmap(NULL, PATTERN_LEN, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        printf("pattern mapping: %s\n", strerrorname_np(errno));
        return -1;
    }
    write_pattern(mem, 0xaa);
    /* A syscall's buffers there: hvrun's own view of them. */
    int pfd[2];
    uint64_t *last = mem + (PATTERN_LEN - 4096) / 8;
    if (pipe(pfd) < 0 || write(pfd[1], mem + 512, 8) != 8 ||
        read(pfd[0], last + 1, 8) != 8)
        return -1;
    printf("grown: a pipe moved %s\n",
           last[1] == (1 << 8 | 0xaa) ? "the word" : "something else");
    close(pfd[0]);
    close(pfd[1]);
    pid_t pid = fork();
    if (pid == 0) {
        int seen = pattern_ok(mem, 0xaa);
        write_pattern(mem, 0xbb);
        _exit(seen && pattern_ok(mem, 0xbb) ? 0 : 1);
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    printf("grown: child read and wrote its copy: %s, parent's kept: %s\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no",
           pattern_ok(mem, 0xaa) ? "yes" : "no");
    return 0;
}

int main(void)
{
    int rc = thousand_children();
    if (grown_memory() < 0)
        rc = -1;
    return rc < 0 ? 1 : 0;
}
