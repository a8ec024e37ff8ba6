/*
 * cmd_doctor.c - `hvrun doctor`: what this host offers hvrun, checked by
 * running a guest, not guessed: a VM is created and a syscall loop timed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backend.h"
#include "cli.h"

#define PROBE_CODE_GVA 0x400000ULL
#define PROBE_STACK_GVA 0x7ffffffde000ULL
#define PROBE_SYSCALLS 2000

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

/* Runs `mov $39,%eax; syscall; jmp .-7` and times the round trips. */
static int probe_syscall_cost(struct vmm_host *host, double *us_per_call)
{
    char why[256];
    struct vmm_vm *vm;
    if (vmm_vm_create(host, &vm, why, sizeof(why)) < 0) {
        printf("guest VM:       cannot create: %s\n", why);
        return -1;
    }
    struct vmm_aspace *as = vmm_vm_aspace(vm);
    static const unsigned char loop[] = {0xb8, 39, 0, 0, 0, 0x0f, 0x05,
                                         0xeb, 0xf7};
    int rc = vmm_as_map(as, PROBE_CODE_GVA, 4096, PROT_READ | PROT_EXEC, 0,
                        NULL);
    if (rc == 0)
        rc = vmm_as_map(as, PROBE_STACK_GVA, 4096, PROT_READ | PROT_WRITE, 0,
                        NULL);
    if (rc == 0)
        rc = vmm_as_poke(as, PROBE_CODE_GVA, loop, sizeof(loop));
    struct vmm_regs *r = vmm_vm_regs(vm);
    memset(r, 0, sizeof(*r));
    r->rip = PROBE_CODE_GVA;
    r->rsp = PROBE_STACK_GVA + 4096;
    r->rflags = 0x202;
    vmm_vm_enter_user(vm);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int n = 0;
    for (; rc == 0 && n < PROBE_SYSCALLS; n++) {
        struct vmm_event ev;
        if (vmm_vm_run(vm, &ev) < 0 || ev.kind != VMM_EVENT_SYSCALL) {
            printf("guest VM:       syscall probe failed: %s\n",
                   ev.kind == VMM_EVENT_FAILED ? ev.what : "unexpected event");
            rc = -1;
            break;
        }
        vmm_vm_syscall_return(vm, 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    vmm_vm_destroy(vm);
    if (rc < 0)
        return -1;
    *us_per_call = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
                    (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / n;
    return 0;
}

/*
 * The ptrace backend in one line: usable or why not, the cost of a
 * syscall stop (the same loop as kvm's, answered by hvrun), and what it
 * controls here: RDTSC/RDTSCP fault in its stubs (PR_SET_TSC), CPUID is
 * the host's (no CPUID faulting is used).
 */
static bool doctor_ptrace(void)
{
    char why[512];
    struct vmm_host *host;
    if (vmm_host_open_backend(VMM_BACKEND_PTRACE, &host, why, sizeof(why)) <
        0) {
        printf("backend ptrace: unavailable: %s\n", why);
        return false;
    }
    struct vmm_host_info i;
    vmm_host_get_info(host, &i);
    double us;
    bool ok = probe_syscall_cost(host, &us) == 0;
    if (ok)
        printf("backend ptrace: usable (--backend ptrace); syscall stop "
               "%.1f us (%d calls, stub on hvrun's CPU); RDTSC trap: %s; "
               "CPUID control: %s; CPU number: CPU 0 (%s, RDTSCP %s, "
               "RDPID sites rewritten); host leaks: RDPID%s%s in code the "
               "rewriter does not reach (JIT code, code without unwind "
               "info or symbols)\n",
               us, PROBE_SYSCALLS,
               i.rdtsc_trappable
                   ? "yes"
                   : "no (the host takes PR_SET_TSC but RDTSC still "
                     "reads: with virtual time the RDTSC/RDTSCP sites are "
                     "rewritten into traps, as on kvm_pvm)",
               i.cpuid_control ? "yes" : "no (the host's CPU shows)",
               i.cpuid_control ? "the model's APIC ids"
                               : "CPUID sites trap for the model's APIC ids",
               i.rdtsc_trappable ? "trapped" : "sites rewritten",
               i.cpuid_control ? "" : " and CPUID's APIC ids",
               i.rdtsc_trappable ? "" : ", RDTSC/RDTSCP");
    vmm_host_close(host);
    return ok;
}

/*
 * What the guest reads of the CPU it is on under kvm, and the named host
 * leaks: the reads hvrun's rewriter does not reach give the number of the
 * host CPU the run's pin chose (vmm/host.c), which differs between
 * concurrent runs (docs/DETERMINISM.md, "Per-CPU values").
 */
static void print_cpu_number(bool cpuid_control)
{
    printf("CPU number:     CPU 0 wherever a run is placed: getcpu (vDSO, "
           "syscall), /proc/self/stat, sched_getaffinity, CPUID's APIC ids "
           "(%s), RDTSCP's TSC_AUX (rewritten sites, virtual time) and "
           "RDPID (rewritten sites); host leaks (the host CPU's number): "
           "RDTSCP and RDPID in code the rewriter does not reach (JIT "
           "code, code without unwind info or symbols), RDTSCP with "
           "--no-virtualize-time or --no-rdtsc-rewrite%s\n",
           cpuid_control ? "the model's"
                         : "the vCPU's: the model's ids on an Intel "
                           "kvm_pvm host, the host CPU's on an AMD one "
                           "unless --cpuid-rewrite",
           cpuid_control ? "" : ", under --cpuid-rewrite CPUID where the rewriter does not reach");
}

int cli_cmd_doctor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char why[512];
    struct vmm_host *host;
    if (vmm_host_open(&host, why, sizeof(why)) < 0) {
        printf("backend kvm:    unavailable: %s\n", why);
        return doctor_ptrace() ? 0 : CLI_EXIT_FAILURE;
    }
    struct vmm_host_info i;
    vmm_host_get_info(host, &i);
    bool pvm = strcmp(i.hypervisor, "kvm_pvm") == 0;
    printf("backend kvm:    /dev/kvm usable (API %d)\n", i.api_version);
    printf("hypervisor:     %s%s\n", i.hypervisor,
           pvm ? " (nested software hypervisor: SYSCALL stays at CPL3, "
                 "no SYSRET)"
               : "");
    printf("sync regs:      %s\n", yes_no(i.sync_regs));
    printf("memslots:       %d (hvrun adds 256 MiB slots on demand)\n",
           i.nr_memslots);
    struct vmm_cpu_identity cpu;
    vmm_host_cpu_identity(host, &cpu);
    if (i.cpuid_control)
        printf("CPUID control:  yes (measured in a probe VM: the guest sees "
               "the fixed model, x86-64-v3 class, AVX2, no "
               "AVX-512/RDRAND/RDSEED/TSX; hwcap %#llx)\n",
               (unsigned long long)vmm_host_hwcap(host));
    else
        printf("CPUID control:  no (measured in a probe VM: the guest's CPUID "
               "shows %s family %u model %u stepping %u \"%s\" with "
               "this host's feature bits (hwcap %#llx); /proc/cpuinfo "
               "describes it: a determinism gap on this host)\n",
               cpu.vendor, cpu.family, cpu.model, cpu.stepping, cpu.brand,
               (unsigned long long)vmm_host_hwcap(host));
    if (!i.cpuid_control)
        printf("CPUID rewrite:  available: `hvrun run --cpuid-rewrite` turns "
               "the CPUID instructions of the guest's code (functions with "
               "unwind info or symbols) into traps answered from the fixed model, and "
               "/proc/cpuinfo describes the model; not covered: code "
               "with neither, JIT-generated code (java), code that "
               "reads its own text\n");
    printf("PMU:            %s%s\n", yes_no(i.pmu),
           i.pmu ? "" : " (no instruction-counted preemption on this host)");
    printf("RDTSC trap:     %s%s\n", yes_no(i.rdtsc_trappable),
           i.rdtsc_trappable
               ? " (CR4.TSD: RDTSC/RDTSCP can be answered by hvrun)"
               : " (guest RDTSC/RDTSCP read the host TSC)");
    if (!i.rdtsc_trappable)
        printf("RDTSC rewrite:  on by default with virtual time: the "
               "RDTSC/RDTSCP of the guest's code (functions with unwind "
               "info or symbols) become traps answered from the logical "
               "clock; not covered: code with neither, JIT code "
               "(--no-rdtsc-rewrite turns it off)\n");
    print_cpu_number(i.cpuid_control);
    double us;
    if (probe_syscall_cost(host, &us) == 0)
        printf("guest VM:       ok; syscall round trip %.1f us (%d calls, "
               "1 exit each)\n",
               us, PROBE_SYSCALLS);
    vmm_host_close(host);
    doctor_ptrace();
    return 0;
}
