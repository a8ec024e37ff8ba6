/*
 * vdso_write.c - the vDSO's text written by the program (mprotect to
 * writable, a store, as gdb's breakpoints are written through ptrace).
 * Linux's vDSO is a private mapping: the write makes the writer's own
 * copy. hvrun maps every process's vDSO from the run's store of pages
 * that come out the same bytes (vmm/page_store.c), so a write must still
 * be the writer's own:
 * - a child forked before the write does not see it;
 * - a child forked after it does (its copy of the writer's memory);
 * - a fresh exec sees the vDSO's own bytes, and its clock still reads.
 * The byte written is the ELF header's last e_ident padding byte (0 in
 * every vDSO), which nothing reads.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAD_BYTE 15 /* e_ident[EI_NIDENT - 1] */

static volatile unsigned char *vdso(void)
{
    return (volatile unsigned char *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
}

/* The [vdso] mapping's length (/proc/self/maps): Linux refuses to split
 * a special mapping (EINVAL), so mprotect takes it whole. */
static size_t vdso_len(uintptr_t start)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    size_t len = 0;
    while (!len && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
            lo == start)
            len = hi - lo;
    }
    fclose(f);
    CHECK(len > 0);
    return len;
}

static int child_sees(unsigned char want)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(vdso()[PAD_BYTE] == want ? 0 : 1);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    return WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
    volatile unsigned char *v = vdso();
    CHECK(v != NULL);
    CHECK(v[0] == 0x7f && v[1] == 'E' && v[PAD_BYTE] == 0);
    struct timespec t;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &t) == 0);
    if (argc > 1) {
        printf("fresh exec: the vDSO's own bytes, the clock reads\n");
        return 0;
    }
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t early = fork();
    CHECK(early >= 0);
    if (early == 0) { /* forked before the write */
        char c;
        close(go[1]);
        CHECK(read(go[0], &c, 1) == 1);
        _exit(v[PAD_BYTE] == 0 ? 0 : 1);
    }
    close(go[0]);

    void *start = (void *)(uintptr_t)v;
    size_t len = vdso_len((uintptr_t)v);
    CHECK(mprotect(start, len, PROT_READ | PROT_WRITE | PROT_EXEC) == 0);
    v[PAD_BYTE] = 0x5a;
    CHECK(mprotect(start, len, PROT_READ | PROT_EXEC) == 0);
    CHECK(v[PAD_BYTE] == 0x5a);
    CHECK(clock_gettime(CLOCK_MONOTONIC, &t) == 0);
    printf("the writer sees its write, and its clock still reads\n");

    int st;
    CHECK(write(go[1], "x", 1) == 1);
    CHECK(waitpid(early, &st, 0) == early && WIFEXITED(st));
    printf("a child forked before the write sees %s\n",
           WEXITSTATUS(st) == 0 ? "the vDSO's bytes" : "the write");
    printf("a child forked after the write sees %s\n",
           child_sees(0x5a) ? "the write" : "the vDSO's bytes");

    fflush(stdout);
    pid_t fresh = fork();
    CHECK(fresh >= 0);
    if (fresh == 0) {
        execl("/proc/self/exe", argv[0], "fresh", (char *)NULL);
        _exit(127);
    }
    CHECK(waitpid(fresh, &st, 0) == fresh && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    CHECK(v[PAD_BYTE] == 0x5a);
    return 0;
}
