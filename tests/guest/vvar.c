/*
 * vvar.c - the [vvar] page is read-only, as Linux maps it, and a process
 * that scribbles on what its vDSO reads or writes changes no other
 * process's clock. Compared with a native run:
 *  - mprotect adding write or exec is EACCES, PROT_READ works, madvise
 *    DONTNEED/DOFORK/POPULATE_WRITE is EINVAL, mremap cannot grow it (EFAULT);
 *  - a write to it dies of SIGSEGV;
 *  - a child that tries every way to write it, and writes hvrun's vDSO
 *    call count (GK_VDSO_CALLS_VA; natively a kernel address, so the write
 *    faults and is skipped), then reads its clock: the parent's clocks
 *    move on by no more than a moment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define VDSO_CALLS_VA 0xffffffff8000c000UL /* guestkernel/vdso_abi.h */

static uintptr_t vvar_start, vvar_end;

static void find_vvar(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f);
    char line[512];
    while (fgets(line, sizeof(line), f))
        if (strstr(line, "[vvar]"))
            CHECK(sscanf(line, "%lx-%lx", &vvar_start, &vvar_end) == 2);
    fclose(f);
    CHECK(vvar_start && vvar_end > vvar_start);
}

static sigjmp_buf fault_jmp;
static void on_fault(int sig)
{
    (void)sig;
    siglongjmp(fault_jmp, 1);
}

/* Writes v at addr unless that faults; true when the write happened. */
static int try_write(uintptr_t addr, uint64_t v)
{
    struct sigaction sa = {.sa_handler = on_fault}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old);
    int wrote = 0;
    if (sigsetjmp(fault_jmp, 1) == 0) {
        *(volatile uint64_t *)addr = v;
        wrote = 1;
    }
    sigaction(SIGSEGV, &old, NULL);
    return wrote;
}

static int64_t now_ns(clockid_t c)
{
    struct timespec ts;
    CHECK(clock_gettime(c, &ts) == 0);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void check_calls(void)
{
    size_t len = vvar_end - vvar_start;
    void *v = (void *)vvar_start;
    errno = 0;
    CHECK(mprotect(v, len, PROT_READ | PROT_WRITE) == -1 && errno == EACCES);
    CHECK(mprotect(v, len, PROT_READ | PROT_EXEC) == -1 && errno == EACCES);
    CHECK(pkey_mprotect(v, len, PROT_READ | PROT_WRITE, -1) == -1 &&
          errno == EACCES);
    CHECK(mprotect(v, len, PROT_READ) == 0);
    CHECK(madvise(v, len, MADV_DONTNEED) == -1 && errno == EINVAL);
    CHECK(madvise(v, len, MADV_DOFORK) == -1 && errno == EINVAL);
    CHECK(madvise(v, len, MADV_POPULATE_WRITE) == -1 && errno == EINVAL);
    CHECK(madvise(v, len, MADV_WILLNEED) == 0);
    CHECK(mremap(v, len, len + 4096, 0) == MAP_FAILED && errno == EFAULT);
    CHECK(mremap(v, len, len + 4096, MREMAP_MAYMOVE) == MAP_FAILED &&
          errno == EFAULT);
    /* Still a working clock after all of that. */
    int64_t a = now_ns(CLOCK_MONOTONIC), b = now_ns(CLOCK_MONOTONIC);
    CHECK(b >= a);
    printf("vvar calls: as Linux\n");
}

static void check_write_faults(void)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        *(volatile char *)vvar_start = 1;
        _exit(0);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    printf("vvar write: SIGSEGV\n");
}

static void scribbler(void)
{
    for (uintptr_t a = vvar_start; a < vvar_end; a += 8)
        (void)try_write(a, 0x7fffffffffffffffULL);
    (void)mprotect((void *)vvar_start, vvar_end - vvar_start,
                   PROT_READ | PROT_WRITE);
    (void)try_write(vvar_start, 1);
    /* The count, at values the vDSO never writes and at the largest one
     * it does, each followed by clock reads and an exit to fold them. */
    uint64_t values[] = {~0ULL, 1ULL << 63, 1ULL << 40, 4096, 4095};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        (void)try_write(VDSO_CALLS_VA, values[i]);
        (void)now_ns(CLOCK_REALTIME);
        (void)syscall(SYS_getppid);
    }
    _exit(0);
}

static void check_scribbler_child(void)
{
    int64_t rt0 = now_ns(CLOCK_REALTIME), mono0 = now_ns(CLOCK_MONOTONIC);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0)
        scribbler();
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    int64_t rt1 = now_ns(CLOCK_REALTIME), mono1 = now_ns(CLOCK_MONOTONIC);
    /* hvrun: the largest count the vDSO can write moves the run's clock by
     * 65 ms; natively the fork and wait take well under a second. */
    CHECK(rt1 >= rt0 && rt1 - rt0 < 1000000000);
    CHECK(mono1 >= mono0 && mono1 - mono0 < 1000000000);
    printf("scribbling child: parent's clock unchanged\n");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    find_vvar();
    check_calls();
    check_write_faults();
    check_scribbler_child();
    return 0;
}
