/*
 * cpuid_model.c - what the CPUID instruction says and what /proc/cpuinfo
 * and AT_HWCAP say agree (vendor, family, model, stepping, leaf 1 EDX),
 * natively and under hvrun. With --expect-model the CPU must be hvrun's
 * fixed model (GenuineIntel, leaf 1 eax 000906ea): `hvrun run
 * --cpuid-rewrite` gives it on every host, in a forked child too. Prints
 * what it saw only then (the native run's CPU differs from hvrun's).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void cpu_of_cpuinfo(char *vendor, size_t len, unsigned *family,
                           unsigned *model, unsigned *stepping)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    CHECK(f != NULL);
    char line[512];
    int seen = 0;
    while (fgets(line, sizeof(line), f) && seen < 4) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *val = colon + 2;
        val[strcspn(val, "\n")] = 0;
        if (!strncmp(line, "vendor_id", 9) && ++seen)
            snprintf(vendor, len, "%s", val);
        else if (!strncmp(line, "cpu family", 10) && ++seen)
            *family = (unsigned)atoi(val);
        else if (!strncmp(line, "model\t", 6) && ++seen)
            *model = (unsigned)atoi(val);
        else if (!strncmp(line, "stepping", 8) && ++seen)
            *stepping = (unsigned)atoi(val);
    }
    fclose(f);
    CHECK(seen == 4);
}

/* A leaf function without relocations, so a copy of its page runs too. */
__attribute__((noinline)) static unsigned leaf1_eax(void)
{
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    return a;
}

struct where {
    uintptr_t addr;
    off_t file_off;
};

static int find_file_off(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct where *w = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t va = w->addr - info->dlpi_addr;
        if (ph->p_type == PT_LOAD && va >= ph->p_vaddr &&
            va < ph->p_vaddr + ph->p_filesz) {
            w->file_off = (off_t)(ph->p_offset + (va - ph->p_vaddr));
            return 1;
        }
    }
    return 1; /* only the program itself */
}

/*
 * The program's own code mapped again from its file (writable, then
 * read-only, then made executable with mprotect, as some loaders do) and
 * moved with mremap: the CPUID in the copy answers as the original does.
 */
static void check_mapped_copy(const char *self, unsigned want)
{
    struct where w = {(uintptr_t)leaf1_eax, -1};
    dl_iterate_phdr(find_file_off, &w);
    CHECK(w.file_off >= 0);
    off_t page = w.file_off & ~(off_t)4095;
    size_t in_page = (size_t)(w.file_off - page);
    int fd = open(self, O_RDONLY);
    CHECK(fd >= 0);
    uint8_t *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                      page);
    CHECK(m != MAP_FAILED);
    close(fd);
    CHECK(mprotect(m, 2 * 4096, PROT_READ) == 0);
    CHECK(mprotect(m, 2 * 4096, PROT_READ | PROT_EXEC) == 0);
    unsigned (*copy)(void) = (unsigned (*)(void))(m + in_page);
    CHECK(copy() == want);
    uint8_t *to = mmap(NULL, 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0); /* a place of its own to move to */
    CHECK(to != MAP_FAILED);
    uint8_t *moved = mremap(m, 2 * 4096, 2 * 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
                            to);
    CHECK(moved == to);
    CHECK(moved != MAP_FAILED);
    copy = (unsigned (*)(void))(moved + in_page);
    CHECK(copy() == want);
    munmap(moved, 2 * 4096);
}

static sigjmp_buf ill_jump;

static void on_sigill(int sig) { siglongjmp(ill_jump, 1); }

/* A program's own UD2 is still a SIGILL. */
static void check_ud2_still_sigill(void)
{
    struct sigaction sa = {.sa_handler = on_sigill}, old;
    CHECK(sigaction(SIGILL, &sa, &old) == 0);
    volatile int trapped = 0;
    if (sigsetjmp(ill_jump, 1) == 0)
        __asm__ volatile("ud2");
    else
        trapped = 1;
    CHECK(trapped == 1);
    CHECK(sigaction(SIGILL, &old, NULL) == 0);
}

/* AT_HWCAP as the kernel passed it: the auxv follows envp's NULL on the
 * initial stack (/proc/self/auxv is not served under hvrun). */
static uint64_t auxv_hwcap(char **envp)
{
    while (*envp)
        envp++;
    for (uint64_t *kv = (uint64_t *)(envp + 1); kv[0] != AT_NULL; kv += 2)
        if (kv[0] == AT_HWCAP)
            return kv[1];
    return ~0ULL;
}

int main(int argc, char **argv, char **envp)
{
    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    unsigned eax1, ebx1, ecx1, edx1;
    __cpuid(1, eax1, ebx1, ecx1, edx1);
    bool expect_model = argc > 1 && !strcmp(argv[1], "--expect-model");
    CHECK(leaf1_eax() == eax1);
    check_mapped_copy(argv[0], eax1);
    check_ud2_still_sigill();
    if (expect_model)
        printf("cpuid: vendor=%s leaf1.eax=%08x\n", vendor, eax1);

    unsigned base_family = (eax1 >> 8) & 0xf, base_model = (eax1 >> 4) & 0xf;
    unsigned family = base_family == 0xf ? base_family + ((eax1 >> 20) & 0xff)
                                         : base_family;
    unsigned model = base_family == 6 || base_family == 0xf
                         ? base_model | ((eax1 >> 12) & 0xf0)
                         : base_model;
    char ci_vendor[64] = "";
    unsigned ci_family = 0, ci_model = 0, ci_stepping = 0;
    cpu_of_cpuinfo(ci_vendor, sizeof(ci_vendor), &ci_family, &ci_model,
                   &ci_stepping);
    if (expect_model)
        printf("cpuinfo: vendor=%s family=%u model=%u stepping=%u\n",
               ci_vendor, ci_family, ci_model, ci_stepping);
    CHECK(strcmp(ci_vendor, vendor) == 0);
    CHECK(ci_family == family);
    CHECK(ci_model == model);
    CHECK(ci_stepping == (eax1 & 0xf));
    if (expect_model) {
        /* AT_HWCAP on x86 is leaf 1 EDX (Linux may mask bits of its own,
         * and glibc's getauxval(AT_HWCAP) answers its own word). */
        CHECK(auxv_hwcap(envp) == edx1);
        CHECK(strcmp(vendor, "GenuineIntel") == 0);
        CHECK(eax1 == 0x000906ea);
        CHECK(((ecx1 >> 31) & 1) == 0); /* no hypervisor bit */
        /* A forked child runs the same rewritten code. */
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            __cpuid(1, eax1, ebx1, ecx1, edx1);
            _exit(eax1 == 0x000906ea ? 0 : 3);
        }
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return 0;
}
