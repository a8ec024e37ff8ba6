/*
 * text_write_tsc.c - a page of the program's text that holds a rewritten
 * RDTSC, then written by the program (mprotect to writable, a store).
 * Under virtual time hvrun rewrites the RDTSC into a jmp to a stub that
 * reads the logical clock, and maps that rewritten page from the run's
 * store of rewritten pages (vmm/page_store.c), shared by every process
 * whose page came out the same. A write must still be the writer's own,
 * as a private mapping's copy-on-write is on Linux:
 * - a child forked before the write does not see it;
 * - a fresh exec of the program sees the file's bytes;
 * - the written page still reads the clock (the rewrite is kept).
 * Run with virtual time kept (VIRTUAL_TIME_PROGRAMS); prints no clock.
 */
#include "guest_check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* A page of its own: an RDTSC in the compiled form the rewriter reads in
 * the guest, and four bytes of data after it. */
__asm__(".text\n"
        ".p2align 12\n"
        ".globl tsc_page\n"
        "tsc_page:\n"
        ".globl read_tsc_asm\n"
        ".type read_tsc_asm, @function\n"
        "read_tsc_asm:\n"
        ".cfi_startproc\n"
        "rdtsc\n"
        "shl $32, %rdx\n"
        "or %rdx, %rax\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size read_tsc_asm, .-read_tsc_asm\n"
        ".globl text_tag\n"
        "text_tag: .byte 0x11, 0x22, 0x33, 0x44\n"
        ".p2align 12\n");

extern char tsc_page[];
extern volatile unsigned char text_tag[4];
uint64_t read_tsc_asm(void);

static const unsigned char file_tag[4] = {0x11, 0x22, 0x33, 0x44};

static int tag_is_file(void)
{
    for (int i = 0; i < 4; i++)
        if (text_tag[i] != file_tag[i])
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    uint64_t t0 = read_tsc_asm();
    CHECK(read_tsc_asm() > t0);
    CHECK(tag_is_file());
    if (argc > 1) {
        printf("fresh exec: the text is the file's, the clock reads\n");
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
        CHECK(tag_is_file());
        CHECK(read_tsc_asm() > t0);
        _exit(0);
    }
    close(go[0]);

    CHECK(mprotect(tsc_page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == 0);
    text_tag[0] = 0x99;
    CHECK(text_tag[0] == 0x99 && text_tag[1] == 0x22);
    uint64_t t1 = read_tsc_asm();
    CHECK(t1 > t0);
    CHECK(mprotect(tsc_page, 4096, PROT_READ | PROT_EXEC) == 0);
    CHECK(read_tsc_asm() > t1);
    printf("the writer sees its write, and its clock still reads\n");

    int st;
    CHECK(write(go[1], "x", 1) == 1);
    CHECK(waitpid(early, &st, 0) == early && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    printf("a child forked before the write does not see it\n");

    fflush(stdout);
    pid_t fresh = fork();
    CHECK(fresh >= 0);
    if (fresh == 0) {
        execl("/proc/self/exe", argv[0], "fresh", (char *)NULL);
        _exit(127);
    }
    CHECK(waitpid(fresh, &st, 0) == fresh && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    CHECK(text_tag[0] == 0x99);
    return 0;
}
