/*
 * cpu_number.c - what a program reads of the CPU it is on: CPUID's APIC
 * ids (leaf 1 EBX[31:24], leaves 0xb and 0x1f EDX, AMD's 0x8000001e EAX),
 * RDTSCP's TSC_AUX (ECX), RDPID, getcpu (the vDSO's, through
 * sched_getcpu, and the syscall), /proc/self/stat's processor field and
 * sched_getaffinity.
 *
 * With --values it prints them: under hvrun they are the model's (CPU 0),
 * so two runs on different host CPUs (taskset -c 0, -c 1) print the same
 * bytes (tests/determinism/run.sh, plaus/cpu-number-any-host-cpu). Without
 * arguments (the guest suite, which compares with a native run) it pins
 * itself to the CPU it is on and prints only what holds on any CPU: that
 * RDTSCP, RDPID, getcpu and /proc/self/stat agree on the CPU number.
 * RDPID runs where CPUID says it exists, or with --rdpid (kvm_pvm hides
 * the bit but runs the instruction).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include "guest_check.h"

struct cpu_reads {
    unsigned apic1, x2apic_b, x2apic_1f, ext_apic;
    int has_b, has_1f, has_ext, has_rdpid;
    unsigned aux, getcpu_sys, node_sys;
    unsigned long long rdpid;
    int sched_cpu, stat_cpu, affinity;
};

static unsigned max_leaf(unsigned base)
{
    unsigned a, b, c, d;
    __cpuid(base, a, b, c, d);
    return a;
}

static int has_rdpid(void)
{
    unsigned a, b, c, d;
    if (max_leaf(0) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (c >> 22) & 1;
}

static int is_amd(void)
{
    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    return b == 0x68747541; /* "Auth" of AuthenticAMD */
}

/* The 39th field of /proc/self/stat: the CPU the process last ran on. */
static int stat_processor(void)
{
    char buf[2048];
    FILE *f = fopen("/proc/self/stat", "r");
    CHECK(f);
    CHECK(fgets(buf, sizeof(buf), f));
    fclose(f);
    char *p = strrchr(buf, ')');
    CHECK(p);
    int field = 2, cpu = -1;
    for (char *tok = strtok(p + 2, " "); tok; tok = strtok(NULL, " "))
        if (++field == 39)
            sscanf(tok, "%d", &cpu);
    return cpu;
}

static void read_cpu(struct cpu_reads *r, int force_rdpid)
{
    unsigned a, b, c, d;
    memset(r, 0, sizeof(*r));
    __cpuid(1, a, b, c, d);
    r->apic1 = b >> 24;
    unsigned max = max_leaf(0);
    if ((r->has_b = max >= 0xb)) {
        __cpuid_count(0xb, 0, a, b, c, d);
        r->x2apic_b = d;
    }
    if ((r->has_1f = max >= 0x1f)) {
        __cpuid_count(0x1f, 0, a, b, c, d);
        r->x2apic_1f = d;
    }
    if ((r->has_ext = is_amd() && max_leaf(0x80000000) >= 0x8000001e)) {
        __cpuid(0x8000001e, a, b, c, d);
        r->ext_apic = a;
    }
    __rdtscp(&r->aux);
    if ((r->has_rdpid = force_rdpid || has_rdpid()))
        __asm__ volatile("rdpid %0" : "=r"(r->rdpid));
    r->sched_cpu = sched_getcpu();
    CHECK(syscall(SYS_getcpu, &r->getcpu_sys, &r->node_sys, NULL) == 0);
    r->stat_cpu = stat_processor();
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
    r->affinity = CPU_COUNT(&set);
}

static void print_values(const struct cpu_reads *r)
{
    printf("cpuid leaf 1 apic id: %u\n", r->apic1);
    if (r->has_b)
        printf("cpuid leaf 0xb x2apic id: %u\n", r->x2apic_b);
    if (r->has_1f)
        printf("cpuid leaf 0x1f x2apic id: %u\n", r->x2apic_1f);
    if (r->has_ext)
        printf("cpuid leaf 0x8000001e extended apic id: %u\n", r->ext_apic);
    printf("rdtscp aux: %u\n", r->aux);
    if (r->has_rdpid)
        printf("rdpid: %llu\n", r->rdpid);
    printf("sched_getcpu: %d\n", r->sched_cpu);
    printf("getcpu syscall: cpu %u node %u\n", r->getcpu_sys, r->node_sys);
    printf("/proc/self/stat processor: %d\n", r->stat_cpu);
    printf("sched_getaffinity: %d cpus\n", r->affinity);
}

/* Linux's TSC_AUX is cpu | node << 12, RDPID's too. */
static void print_agreement(const struct cpu_reads *r)
{
    unsigned cpu = (unsigned)r->sched_cpu;
    printf("rdtscp aux is getcpu's cpu: %s\n",
           (r->aux & 0xfff) == cpu ? "yes" : "no");
    printf("rdtscp aux is getcpu's node: %s\n",
           r->aux >> 12 == r->node_sys ? "yes" : "no");
    printf("rdpid is rdtscp aux: %s\n",
           !r->has_rdpid || r->rdpid == r->aux ? "yes" : "no");
    printf("getcpu syscall is sched_getcpu: %s\n",
           r->getcpu_sys == cpu ? "yes" : "no");
    printf("/proc/self/stat processor is sched_getcpu: %s\n",
           r->stat_cpu == r->sched_cpu ? "yes" : "no");
    printf("pinned: %s\n", r->affinity == 1 ? "yes" : "no");
}

int main(int argc, char **argv)
{
    int values = 0, force_rdpid = 0;
    for (int i = 1; i < argc; i++) {
        values |= !strcmp(argv[i], "--values");
        force_rdpid |= !strcmp(argv[i], "--rdpid");
    }
    struct cpu_reads r;
    if (values) {
        read_cpu(&r, force_rdpid);
        print_values(&r);
        return 0;
    }
    /* Stay on one CPU, so every read names the same one. */
    int cpu = sched_getcpu();
    CHECK(cpu >= 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
    read_cpu(&r, force_rdpid);
    print_agreement(&r);
    return 0;
}
