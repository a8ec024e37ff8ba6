/*
 * vfork_regs: a vfork child shares its parent's memory, not its
 * registers. The parent fills the vector registers, MXCSR and the x87
 * control word with known values, vforks, and the child overwrites them
 * all before it execs (or exits); the parent then reads its own back.
 * hvrun may run such a child on the parent's own vCPU (the ptrace
 * backend's stub): what the child did to the FPU must not be the
 * parent's. Also a chain (the child vforks again before it execs) and a
 * posix_spawn, which vforks inside libc. Output compared with native.
 */
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

extern char **environ;

struct fpu_regs {
    uint8_t xmm[16][16];
    uint32_t mxcsr;
    uint16_t fcw;
};

static void load_regs(const struct fpu_regs *r)
{
    __asm__ volatile("movdqu 0(%0), %%xmm0\n\tmovdqu 16(%0), %%xmm1\n\t"
                     "movdqu 32(%0), %%xmm2\n\tmovdqu 48(%0), %%xmm3\n\t"
                     "movdqu 64(%0), %%xmm4\n\tmovdqu 80(%0), %%xmm5\n\t"
                     "movdqu 96(%0), %%xmm6\n\tmovdqu 112(%0), %%xmm7\n\t"
                     "movdqu 128(%0), %%xmm8\n\tmovdqu 144(%0), %%xmm9\n\t"
                     "movdqu 160(%0), %%xmm10\n\tmovdqu 176(%0), %%xmm11\n\t"
                     "movdqu 192(%0), %%xmm12\n\tmovdqu 208(%0), %%xmm13\n\t"
                     "movdqu 224(%0), %%xmm14\n\tmovdqu 240(%0), %%xmm15\n\t"
                     "ldmxcsr 256(%0)\n\tfldcw 260(%0)"
                     :
                     : "r"(r)
                     : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
                       "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                       "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

/* The registers as they are now, read without a call in between. */
static void store_regs(struct fpu_regs *r)
{
    __asm__ volatile("movdqu %%xmm0, 0(%0)\n\tmovdqu %%xmm1, 16(%0)\n\t"
                     "movdqu %%xmm2, 32(%0)\n\tmovdqu %%xmm3, 48(%0)\n\t"
                     "movdqu %%xmm4, 64(%0)\n\tmovdqu %%xmm5, 80(%0)\n\t"
                     "movdqu %%xmm6, 96(%0)\n\tmovdqu %%xmm7, 112(%0)\n\t"
                     "movdqu %%xmm8, 128(%0)\n\tmovdqu %%xmm9, 144(%0)\n\t"
                     "movdqu %%xmm10, 160(%0)\n\tmovdqu %%xmm11, 176(%0)\n\t"
                     "movdqu %%xmm12, 192(%0)\n\tmovdqu %%xmm13, 208(%0)\n\t"
                     "movdqu %%xmm14, 224(%0)\n\tmovdqu %%xmm15, 240(%0)\n\t"
                     "stmxcsr 256(%0)\n\tfnstcw 260(%0)"
                     :
                     : "r"(r)
                     : "memory");
}

static void pattern(struct fpu_regs *r, uint8_t seed, uint32_t mxcsr,
                    uint16_t fcw)
{
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            r->xmm[i][j] = (uint8_t)(seed + i * 16 + j);
    r->mxcsr = mxcsr;
    r->fcw = fcw;
}

static struct fpu_regs mine, theirs, seen;

/* vfork, the child clobbers every register and execs true (or exits);
 * the parent's registers are read right after vfork returns to it. */
static void vfork_case(const char *label, int how)
{
    pattern(&mine, 0x11, 0x1f80 | 0x6000, 0x27f); /* round toward zero */
    pattern(&theirs, 0xa0, 0x1f80 | 0x2000, 0x37f);
    load_regs(&mine);
    pid_t c = vfork();
    if (c == 0) {
        load_regs(&theirs);
        if (how == 0)
            _exit(7);
        if (how == 2 && vfork() == 0) { /* a grandchild on the same path */
            load_regs(&mine);
            _exit(9);
        }
        char *argv[] = {"true", NULL};
        execve("/bin/true", argv, environ);
        _exit(127);
    }
    store_regs(&seen);
    CHECK(c > 0);
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("%s: child %d, xmm %s, mxcsr %#x, fcw %#x\n", label,
           WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           memcmp(seen.xmm, mine.xmm, sizeof(mine.xmm)) ? "changed" : "kept",
           seen.mxcsr, seen.fcw);
}

int main(void)
{
    vfork_case("vfork-exit", 0);
    vfork_case("vfork-exec", 1);
    vfork_case("vfork-vfork-exec", 2);
    /* posix_spawn vforks (CLONE_VM|CLONE_VFORK) inside glibc, whose
     * child runs libc code (memset, sigaction) before it execs. */
    pattern(&mine, 0x33, 0x1f80 | 0x4000, 0x7f);
    load_regs(&mine);
    pid_t c;
    char *argv[] = {"true", NULL};
    int rc = posix_spawn(&c, "/bin/true", NULL, NULL, argv, environ);
    store_regs(&seen);
    CHECK(rc == 0);
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("posix_spawn: child %d, mxcsr %#x, fcw %#x\n",
           WIFEXITED(st) ? WEXITSTATUS(st) : -1, seen.mxcsr, seen.fcw);
    return 0;
}
