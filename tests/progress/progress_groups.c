/*
 * progress_groups.c - short counted loops that hvrun runs as unrolled
 * groups (mm/progress.c, build_group): the loop's count updated once per
 * eight turns, every way out settling it. Each case prints what it
 * computed, the same as natively; tests/progress/run.sh also checks that
 * the run's detlog digest is the one of a run without loop copies
 * (HVRUN_LOOP_COPIES=0), where every turn decrements the counter: the
 * count is exact wherever the program can see it. With the argument
 * "groups" it says whether its trampolines hold any group (they must
 * under hvrun, or the cases test nothing). Its last line is the time the
 * cases took (the logical clock under hvrun, which follows the count).
 *
 *   ways out   a byte scan leaving from every turn of a group (lengths
 *              0-40), by a jump out of the body whose target reads ZF
 *              (sete), and by the back edge not taken, whose code reads
 *              CF (setae): the way-outs keep the flags;
 *   fault      the scan running into a page it may not read: the signal
 *              frame names the loop's own instruction (between the
 *              function's labels), and the count goes on exactly;
 *   carry      a multi-word add whose loop keeps CF live at its head
 *              (adc, inc/dec for the index): never a group, still right.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* Scans p[0..n) for want: the index found (or n), *zf the ZF the found
 * path saw (1), *cf the CF the loop's end left (index >= n). The labels
 * bound the code for the fault case. */
extern char scan_begin[], scan_end[];
__attribute__((noinline)) static long scan(const unsigned char *p,
                                           unsigned char want, long n,
                                           int *zf, int *cf)
{
    long i;
    unsigned char z = 0, c = 0;
    __asm__ volatile("scan_begin:\n\t"
                     "xor %[i], %[i]\n\t"
                     "test %[n], %[n]\n\t"
                     "jle 3f\n"
                     "1:\n\t"
                     "movzbl (%[p],%[i]), %%ecx\n\t"
                     "cmp %[w], %%cl\n\t"
                     "%{disp32%} je 2f\n\t"
                     "add $1, %[i]\n\t"
                     "nop\n\t"
                     "cmp %[n], %[i]\n\t"
                     "jb 1b\n\t"
                     "setae %[c]\n\t"
                     "jmp 3f\n"
                     "2:\n\t"
                     "sete %[z]\n"
                     "3:\n"
                     "scan_end:\n\t"
                     : [i] "=&r"(i), [z] "+r"(z), [c] "+r"(c)
                     : [p] "r"(p), [w] "r"(want), [n] "r"(n)
                     : "rcx", "cc", "memory");
    *zf = z;
    *cf = c;
    return i;
}

/* dst += src over n words, the carry through the loop. */
__attribute__((noinline)) static unsigned add_words(uint64_t *dst,
                                                    const uint64_t *src,
                                                    long n)
{
    unsigned char carry = 0;
    long i = 0;
    if (n <= 0)
        return 0;
    __asm__ volatile("clc\n"
                     "1:\n\t"
                     "mov (%[s],%[i],8), %%rax\n\t"
                     "adc %%rax, (%[d],%[i],8)\n\t"
                     "lea 1(%[i]), %[i]\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b\n\t"
                     "setc %[c]\n\t"
                     : [i] "+r"(i), [n] "+r"(n), [c] "=r"(carry)
                     : [s] "r"(src), [d] "r"(dst)
                     : "rax", "cc", "memory");
    return carry;
}

static sigjmp_buf back;
static volatile uintptr_t fault_rip;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    fault_rip = (uintptr_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
    siglongjmp(back, 1);
}

/* The unrolled groups' heads in the process's [hvrun-progress] regions
 * (subq $8, slot(%rip); jle): hvrun's trampolines, readable as any of the
 * program's memory. */
static long group_heads(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    long heads = 0;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (!strstr(line, "[hvrun-progress]") ||
            sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            continue;
        const unsigned char *b = (const unsigned char *)lo;
        for (unsigned long i = 0; i + 10 <= hi - lo; i++)
            heads += b[i] == 0x48 && b[i + 1] == 0x83 && b[i + 2] == 0x2d &&
                     b[i + 7] == 8 && b[i + 8] == 0x0f && b[i + 9] == 0x8e;
    }
    if (f)
        fclose(f);
    return heads;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "groups")) {
        printf("group heads: %s\n", group_heads() > 0 ? "some" : "none");
        return 0;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned char buf[64];
    long sum = 0;
    int zf_sum = 0, cf_sum = 0;
    for (int round = 0; round < 2000; round++)
        for (long len = 0; len <= 40; len++) {
            memset(buf, 'a', sizeof(buf));
            if (len < 40)
                buf[len] = 'b'; /* found at len, or the end (40) */
            int zf, cf;
            long at = scan(buf, 'b', 40, &zf, &cf);
            sum += at;
            zf_sum += zf;
            cf_sum += cf;
        }
    printf("ways out: found at %ld in all, ZF seen %d times, CF %d times\n",
           sum, zf_sum, cf_sum);
    fflush(stdout);

    long page = sysconf(_SC_PAGESIZE);
    unsigned char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + page, page, PROT_NONE) != 0)
        return 1;
    memset(m, 'a', page);
    struct sigaction sa = {.sa_sigaction = on_segv,
                           .sa_flags = SA_SIGINFO | SA_NODEFER};
    sigaction(SIGSEGV, &sa, NULL);
    int inside = 0, faults = 0;
    for (long start = 0; start < 24; start++) {
        int zf, cf;
        if (sigsetjmp(back, 1) == 0) {
            (void)scan(m + page - 8 - start, 'b', 64, &zf, &cf);
        } else {
            faults++;
            inside += fault_rip >= (uintptr_t)scan_begin &&
                      fault_rip < (uintptr_t)scan_end;
        }
    }
    printf("fault: %d of 24 scans faulted, %d at the loop's own "
           "instruction\n",
           faults, inside);
    fflush(stdout); /* a syscall: the count so far folds into the clock */

    uint64_t a[37], b[37];
    unsigned carries = 0;
    for (int round = 0; round < 500; round++) {
        for (int i = 0; i < 37; i++) {
            a[i] = UINT64_MAX - (uint64_t)(i % 3) * (uint64_t)round;
            b[i] = (uint64_t)(i % 2) + (uint64_t)round;
        }
        carries += add_words(a, b, 1 + round % 37);
    }
    uint64_t mix = 0;
    for (int i = 0; i < 37; i++)
        mix = mix * 31 + a[i];
    printf("carry: %u carries out, words %016llx\n", carries,
           (unsigned long long)mix);
    fflush(stdout);
    /* Under hvrun the clock follows the count: the same with groups as
     * without only if every way out settled it exactly. */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("elapsed %lld ns\n",
           (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
               (t1.tv_nsec - t0.tv_nsec));
    return 0;
}
