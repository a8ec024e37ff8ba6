/*
 * fpu_signal: a signal handler that clobbers every vector register (full
 * ymm when AVX is available), the x87 stack, MXCSR and the x87 control word
 * must not change what the interrupted code sees: rt_sigreturn restores the
 * whole FPU state from the signal frame.
 *
 * The signal is raised with a raw SYSCALL from inside one asm block that
 * holds known values in ymm0-15, two x87 registers and non-default rounding
 * modes, so no compiler-generated code can save or reload them around it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ITERATIONS 64

static int have_avx;
static volatile int handled;

static uint8_t vin[16][32] __attribute__((aligned(32)));
static uint8_t vout[16][32] __attribute__((aligned(32)));
static uint8_t junk[16][32] __attribute__((aligned(32)));
static long double xin[2], xout[2];

#define LOAD16(insn, reg)                                                    \
    insn " 0(%" reg "), %%xmm0\n\t" insn " 32(%" reg "), %%xmm1\n\t" insn   \
         " 64(%" reg "), %%xmm2\n\t" insn " 96(%" reg "), %%xmm3\n\t" insn  \
         " 128(%" reg "), %%xmm4\n\t" insn " 160(%" reg "), %%xmm5\n\t"     \
         insn " 192(%" reg "), %%xmm6\n\t" insn " 224(%" reg "), %%xmm7\n\t" \
         insn " 256(%" reg "), %%xmm8\n\t" insn " 288(%" reg "), %%xmm9\n\t" \
         insn " 320(%" reg "), %%xmm10\n\t" insn " 352(%" reg              \
         "), %%xmm11\n\t" insn " 384(%" reg "), %%xmm12\n\t" insn " 416(%"  \
         reg "), %%xmm13\n\t" insn " 448(%" reg "), %%xmm14\n\t" insn      \
         " 480(%" reg "), %%xmm15\n\t"

#define YLOAD16(reg)                                                         \
    "vmovdqu 0(%" reg "), %%ymm0\n\tvmovdqu 32(%" reg "), %%ymm1\n\t"        \
    "vmovdqu 64(%" reg "), %%ymm2\n\tvmovdqu 96(%" reg "), %%ymm3\n\t"       \
    "vmovdqu 128(%" reg "), %%ymm4\n\tvmovdqu 160(%" reg "), %%ymm5\n\t"     \
    "vmovdqu 192(%" reg "), %%ymm6\n\tvmovdqu 224(%" reg "), %%ymm7\n\t"     \
    "vmovdqu 256(%" reg "), %%ymm8\n\tvmovdqu 288(%" reg "), %%ymm9\n\t"     \
    "vmovdqu 320(%" reg "), %%ymm10\n\tvmovdqu 352(%" reg "), %%ymm11\n\t"   \
    "vmovdqu 384(%" reg "), %%ymm12\n\tvmovdqu 416(%" reg "), %%ymm13\n\t"   \
    "vmovdqu 448(%" reg "), %%ymm14\n\tvmovdqu 480(%" reg "), %%ymm15\n\t"

#define YSTORE16(reg)                                                        \
    "vmovdqu %%ymm0, 0(%" reg ")\n\tvmovdqu %%ymm1, 32(%" reg ")\n\t"        \
    "vmovdqu %%ymm2, 64(%" reg ")\n\tvmovdqu %%ymm3, 96(%" reg ")\n\t"       \
    "vmovdqu %%ymm4, 128(%" reg ")\n\tvmovdqu %%ymm5, 160(%" reg ")\n\t"     \
    "vmovdqu %%ymm6, 192(%" reg ")\n\tvmovdqu %%ymm7, 224(%" reg ")\n\t"     \
    "vmovdqu %%ymm8, 256(%" reg ")\n\tvmovdqu %%ymm9, 288(%" reg ")\n\t"     \
    "vmovdqu %%ymm10, 320(%" reg ")\n\tvmovdqu %%ymm11, 352(%" reg ")\n\t"   \
    "vmovdqu %%ymm12, 384(%" reg ")\n\tvmovdqu %%ymm13, 416(%" reg ")\n\t"   \
    "vmovdqu %%ymm14, 448(%" reg ")\n\tvmovdqu %%ymm15, 480(%" reg ")\n\t"

#define XSTORE16(reg)                                                        \
    "movdqu %%xmm0, 0(%" reg ")\n\tmovdqu %%xmm1, 32(%" reg ")\n\t"          \
    "movdqu %%xmm2, 64(%" reg ")\n\tmovdqu %%xmm3, 96(%" reg ")\n\t"         \
    "movdqu %%xmm4, 128(%" reg ")\n\tmovdqu %%xmm5, 160(%" reg ")\n\t"       \
    "movdqu %%xmm6, 192(%" reg ")\n\tmovdqu %%xmm7, 224(%" reg ")\n\t"       \
    "movdqu %%xmm8, 256(%" reg ")\n\tmovdqu %%xmm9, 288(%" reg ")\n\t"       \
    "movdqu %%xmm10, 320(%" reg ")\n\tmovdqu %%xmm11, 352(%" reg ")\n\t"     \
    "movdqu %%xmm12, 384(%" reg ")\n\tmovdqu %%xmm13, 416(%" reg ")\n\t"     \
    "movdqu %%xmm14, 448(%" reg ")\n\tmovdqu %%xmm15, 480(%" reg ")\n\t"

#define VCLOBBERS                                                            \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",   \
        "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

/* Round toward zero in both units, different from what main sets. */
static const uint32_t handler_mxcsr = 0x7f80;
static const uint16_t handler_cw = 0x0f7f;
/* Round up (MXCSR RC=10, x87 RC=10), all exceptions masked. */
static const uint32_t main_mxcsr = 0x5f80;
static const uint16_t main_cw = 0x0b7f;
static const uint32_t default_mxcsr = 0x1f80;
static const uint16_t default_cw = 0x037f;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
    memset(junk, 0xa5 ^ handled, sizeof(junk));
    if (have_avx)
        __asm__ volatile(YLOAD16("0")::"r"(junk) : VCLOBBERS);
    else
        __asm__ volatile(LOAD16("movdqu", "0")::"r"(junk) : VCLOBBERS);
    /* Fill the x87 registers with other values, then empty the stack. */
    __asm__ volatile("fninit\n\tfldpi\n\tfldln2\n\tfldlg2\n\t"
                     "fstp %%st(0)\n\tfstp %%st(0)\n\tfstp %%st(0)\n\t"
                     "ldmxcsr %0\n\tfldcw %1\n\t" ::"m"(handler_mxcsr),
                     "m"(handler_cw));
}

static int run_once(int iter, long pid, long tid)
{
    for (int r = 0; r < 16; r++)
        for (int b = 0; b < 32; b++)
            vin[r][b] = (uint8_t)(iter * 37 + r * 17 + b * 3 + 1);
    xin[0] = 1.0L / 3.0L + iter;
    xin[1] = -2.718281828459045235L * (iter + 1);
    memset(vout, 0, sizeof(vout));
    memset(xout, 0, sizeof(xout));
    uint32_t mx_after = 0;
    uint16_t cw_after = 0;
    long ret;
    int before = handled;
    if (have_avx) {
        __asm__ volatile(YLOAD16("[in]")
                         "fldt %[x0]\n\tfldt %[x1]\n\t"
                         "ldmxcsr %[mx]\n\tfldcw %[cw]\n\t"
                         "syscall\n\t"
                         YSTORE16("[out]")
                         "fstpt %[y1]\n\tfstpt %[y0]\n\t"
                         "stmxcsr %[mxa]\n\tfnstcw %[cwa]\n\t"
                         "ldmxcsr %[mxd]\n\tfldcw %[cwd]\n\t"
                         "vzeroupper\n\t"
                         : "=a"(ret), [y0] "=m"(xout[0]), [y1] "=m"(xout[1]),
                           [mxa] "=m"(mx_after), [cwa] "=m"(cw_after)
                         : "a"((long)SYS_tgkill), "D"(pid), "S"(tid),
                           "d"((long)SIGUSR1), [in] "r"(vin), [out] "r"(vout),
                           [x0] "m"(xin[0]), [x1] "m"(xin[1]),
                           [mx] "m"(main_mxcsr), [cw] "m"(main_cw),
                           [mxd] "m"(default_mxcsr), [cwd] "m"(default_cw)
                         : "rcx", "r11", "memory", VCLOBBERS);
    } else {
        __asm__ volatile(LOAD16("movdqu", "[in]")
                         "fldt %[x0]\n\tfldt %[x1]\n\t"
                         "ldmxcsr %[mx]\n\tfldcw %[cw]\n\t"
                         "syscall\n\t"
                         XSTORE16("[out]")
                         "fstpt %[y1]\n\tfstpt %[y0]\n\t"
                         "stmxcsr %[mxa]\n\tfnstcw %[cwa]\n\t"
                         "ldmxcsr %[mxd]\n\tfldcw %[cwd]\n\t"
                         : "=a"(ret), [y0] "=m"(xout[0]), [y1] "=m"(xout[1]),
                           [mxa] "=m"(mx_after), [cwa] "=m"(cw_after)
                         : "a"((long)SYS_tgkill), "D"(pid), "S"(tid),
                           "d"((long)SIGUSR1), [in] "r"(vin), [out] "r"(vout),
                           [x0] "m"(xin[0]), [x1] "m"(xin[1]),
                           [mx] "m"(main_mxcsr), [cw] "m"(main_cw),
                           [mxd] "m"(default_mxcsr), [cwd] "m"(default_cw)
                         : "rcx", "r11", "memory", VCLOBBERS);
    }
    if (ret != 0) {
        printf("FAIL iteration %d: tgkill returned %ld\n", iter, ret);
        return 1;
    }
    if (handled != before + 1) {
        printf("FAIL iteration %d: handler ran %d times\n", iter,
               handled - before);
        return 1;
    }
    int width = have_avx ? 32 : 16;
    for (int r = 0; r < 16; r++) {
        if (memcmp(vin[r], vout[r], (size_t)width) != 0) {
            int b = 0;
            while (vin[r][b] == vout[r][b])
                b++;
            printf("FAIL iteration %d: %smm%d byte %d is %#x, was %#x\n",
                   iter, have_avx ? "y" : "x", r, b, vout[r][b], vin[r][b]);
            return 1;
        }
    }
    if (memcmp(&xin[0], &xout[0], 10) || memcmp(&xin[1], &xout[1], 10)) {
        printf("FAIL iteration %d: x87 registers changed\n", iter);
        return 1;
    }
    if (mx_after != main_mxcsr) {
        printf("FAIL iteration %d: MXCSR %#x, was %#x\n", iter, mx_after,
               main_mxcsr);
        return 1;
    }
    if (cw_after != main_cw) {
        printf("FAIL iteration %d: x87 control word %#x, was %#x\n", iter,
               cw_after, main_cw);
        return 1;
    }
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    __builtin_cpu_init();
    have_avx = __builtin_cpu_supports("avx");
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    long pid = getpid(), tid = syscall(SYS_gettid);
    for (int i = 0; i < ITERATIONS; i++)
        if (run_once(i, pid, tid))
            return 1;
    printf("fpu state preserved across %d signals\n", ITERATIONS);
    return 0;
}
