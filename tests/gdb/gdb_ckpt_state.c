/*
 * gdb_ckpt_state.c - what a restored checkpoint must give a guest besides
 * the memory hvrun's own memory holds (tests/gdb/run.sh,
 * gdb/checkpoint-state). The first process forks P; P maps 320 MiB (its
 * backing reaches past the first 256 MiB of guest-physical memory: a
 * second KVM memslot), clones C with CLONE_VM (a process of its own on
 * P's memory, not a thread) and exits: P's memory stays for C (a retired
 * owner). C sets MXCSR's rounding mode and keeps a running sum in xmm8
 * across syscalls (the XSAVE image, which the vCPU holds, not
 * hvrun), reads its fs base's first word, bumps a word at the end of the
 * 320 MiB, and writes one line a turn into a pipe the first process
 * copies to stdout. A checkpoint that lost any of it gives other lines
 * than a run without checkpoints.
 *
 * Between its asm statements C calls nothing but glibc's syscall(), an
 * assembly stub, and its formatting is integer code (built -O0): nothing
 * else uses xmm8/xmm9.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TURNS 150
#define MAP_BYTES (320UL << 20)

static int pipe_fds[2];
static volatile uint64_t *far_word; /* the last word of the 320 MiB */
static char child_stack[65536] __attribute__((aligned(16)));

/* v as `digits` hex digits at out; returns out past them. */
static char *hex(char *out, uint64_t v, int digits)
{
    for (int i = digits - 1; i >= 0; i--) {
        out[i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    }
    return out + digits;
}

static char *text(char *out, const char *s)
{
    while (*s)
        *out++ = *s++;
    return out;
}

static int child(void *arg)
{
    (void)arg;
    uint64_t fs0;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(fs0));
    uint32_t csr = 0x1f80 | (3u << 13); /* round toward zero */
    __asm__ volatile("ldmxcsr %0" : : "m"(csr));
    double one = 1.0, third = 1.0 / 3.0;
    __asm__ volatile("movsd %0, %%xmm8\n\tmovsd %1, %%xmm9"
                     :
                     : "m"(one), "m"(third)
                     : "xmm8", "xmm9");
    for (int i = 0; i < TURNS; i++) {
        uint64_t bits, fs_now;
        uint32_t csr_now;
        __asm__ volatile("addsd %%xmm9, %%xmm8\n\tmovq %%xmm8, %0"
                         : "=r"(bits)
                         :
                         : "xmm8");
        __asm__ volatile("stmxcsr %0" : "=m"(csr_now));
        __asm__ volatile("mov %%fs:0, %0" : "=r"(fs_now));
        *far_word += 1;
        char line[96], *p = line;
        p = text(p, "turn ");
        p = hex(p, (uint64_t)i, 4);
        p = text(p, " sum ");
        p = hex(p, bits, 16);
        p = text(p, " mxcsr ");
        p = hex(p, csr_now, 4);
        p = text(p, fs_now == fs0 ? " fs same" : " fs CHANGED");
        p = text(p, " far ");
        p = hex(p, *far_word, 8);
        *p++ = '\n';
        syscall(SYS_getppid);
        syscall(SYS_write, pipe_fds[1], line, p - line);
    }
    syscall(SYS_exit, 0);
    return 0;
}

/* P: the memory's owner, gone once C runs. */
static void owner(void)
{
    close(pipe_fds[0]);
    char *m = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        _exit(2);
    far_word = (volatile uint64_t *)(m + MAP_BYTES - sizeof(uint64_t));
    *far_word = 0x1000;
    if (clone(child, child_stack + sizeof(child_stack), CLONE_VM | SIGCHLD,
              NULL) < 0)
        _exit(3);
    _exit(0);
}

int main(void)
{
    if (pipe(pipe_fds) < 0)
        return 1;
    pid_t p = fork();
    if (p < 0)
        return 1;
    if (p == 0)
        owner();
    close(pipe_fds[1]);
    char buf[512];
    ssize_t n;
    while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0)
        if (write(1, buf, (size_t)n) != n)
            return 1;
    int status;
    waitpid(p, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
