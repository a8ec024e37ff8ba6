/*
 * cmd_doctor.c - `hvrun doctor [--json]`: what this host offers hvrun,
 * checked by running a guest, not guessed: a VM is created and a syscall
 * loop timed. The report is lines of "label: text"; --json prints the
 * same lines as fields and what they say as typed values (the schema,
 * hvrun-doctor/1, is docs/DOCTOR.md's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backend.h"
#include "cli.h"

#define PROBE_CODE_GVA 0x400000ULL
#define PROBE_STACK_GVA 0x7ffffffde000ULL
#define PROBE_SYSCALLS 2000
#define DOCTOR_MAX_LEAKS 6

#ifndef HVRUN_COMMIT
#define HVRUN_COMMIT "unknown"
#endif

/* What doctor found of one backend, for --json (the text says it too). */
struct doctor_backend {
    bool opened, usable;
    char why[512];            /* not usable: why */
    struct vmm_host_info info;
    bool probed;              /* the syscall probe ran */
    double syscall_us;
    bool have_cpu;
    struct vmm_cpu_identity cpu;
    unsigned long long hwcap;
    const char *leaks[DOCTOR_MAX_LEAKS];
    int nr_leaks;
};

static void add_leak(struct doctor_backend *b, const char *what)
{
    if (b->nr_leaks < DOCTOR_MAX_LEAKS)
        b->leaks[b->nr_leaks++] = what;
}

static const char leak_unreached[] =
    "RDTSCP and RDPID in code the rewriter does not reach (JIT code, code "
    "without unwind info or symbols): the host CPU's number";

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

/* Runs `mov $39,%eax; syscall; jmp .-7` and times the round trips. */
static int probe_syscall_cost(FILE *out, struct vmm_host *host,
                              double *us_per_call)
{
    char why[256];
    struct vmm_vm *vm;
    if (vmm_vm_create(host, &vm, why, sizeof(why)) < 0) {
        fprintf(out, "guest VM:       cannot create: %s\n", why);
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
            fprintf(out, "guest VM:       syscall probe failed: %s\n",
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
static bool doctor_ptrace(FILE *out, struct doctor_backend *b)
{
    struct vmm_host *host;
    if (vmm_host_open_backend(VMM_BACKEND_PTRACE, &host, b->why,
                              sizeof(b->why)) < 0) {
        fprintf(out, "backend ptrace: unavailable: %s\n", b->why);
        return false;
    }
    b->opened = true;
    struct vmm_host_info i;
    vmm_host_get_info(host, &i);
    b->info = i;
    double us;
    bool ok = probe_syscall_cost(out, host, &us) == 0;
    if (ok)
        fprintf(out, "backend ptrace: usable (--backend ptrace); syscall stop "
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
    else
        snprintf(b->why, sizeof(b->why), "the syscall probe failed");
    b->usable = b->probed = ok;
    b->syscall_us = ok ? us : 0;
    add_leak(b, "RDPID in code the rewriter does not reach (JIT code, code "
                "without unwind info or symbols)");
    if (!i.cpuid_control)
        add_leak(b, "CPUID: the host CPU's identity and feature bits (its "
                    "APIC ids where sites are rewritten)");
    if (!i.rdtsc_trappable)
        add_leak(b, "RDTSC/RDTSCP in code the rewriter does not reach");
    vmm_host_close(host);
    return ok;
}

/*
 * What the guest reads of the CPU it is on under kvm, and the named host
 * leaks: the reads hvrun's rewriter does not reach give the number of the
 * host CPU the run's pin chose (vmm/host.c), which differs between
 * concurrent runs (docs/DETERMINISM.md, "Per-CPU values").
 */
static void print_cpu_number(FILE *out, const struct vmm_host_info *i)
{
    const char *apic =
        i->cpuid_control    ? "the model's"
        : i->cpuid_answered ? "the vCPU's, the model's: this host's "
                              "hypervisor answers CPUID"
                            : "rewritten sites: CPUID runs on the host CPU "
                              "here, so its sites answer with the model's "
                              "ids, as under ptrace";
    fprintf(out, "CPU number:     CPU 0 wherever a run is placed: getcpu (vDSO, "
           "syscall), /proc/self/stat, sched_getaffinity, CPUID's APIC ids "
           "(%s), RDTSCP's TSC_AUX (rewritten sites, virtual time) and "
           "RDPID (rewritten sites); host leaks (the host CPU's number): "
           "RDTSCP%s in code the rewriter does not reach (JIT "
           "code, code without unwind info or symbols), RDTSCP with "
           "--no-virtualize-time or --no-rdtsc-rewrite%s\n",
           apic,
           i->cpuid_control || i->cpuid_answered
               ? " and RDPID"
               : ", RDPID and CPUID's APIC ids",
           i->cpuid_control ? "" : ", under --cpuid-rewrite CPUID where the rewriter does not reach");
}

/* The kvm backend's lines, from an opened host. */
static void doctor_kvm(FILE *out, struct vmm_host *host,
                       struct doctor_backend *b)
{
    struct vmm_host_info i;
    vmm_host_get_info(host, &i);
    b->opened = true;
    b->info = i;
    bool pvm = strcmp(i.hypervisor, "kvm_pvm") == 0;
    fprintf(out, "backend kvm:    /dev/kvm usable (API %d)\n", i.api_version);
    fprintf(out, "hypervisor:     %s%s\n", i.hypervisor,
           pvm ? " (nested software hypervisor: SYSCALL stays at CPL3, "
                 "no SYSRET)"
               : "");
    fprintf(out, "sync regs:      %s\n", yes_no(i.sync_regs));
    fprintf(out, "memslots:       %d (hvrun adds 256 MiB slots on demand)\n",
           i.nr_memslots);
    struct vmm_cpu_identity cpu;
    vmm_host_cpu_identity(host, &cpu);
    b->have_cpu = true;
    b->cpu = cpu;
    b->hwcap = (unsigned long long)vmm_host_hwcap(host);
    if (i.cpuid_control)
        fprintf(out, "CPUID control:  yes (measured in a probe VM: the guest sees "
               "the fixed model, x86-64-v3 class, AVX2, no "
               "AVX-512/RDRAND/RDSEED/TSX; hwcap %#llx)\n", b->hwcap);
    else
        fprintf(out, "CPUID control:  no (measured in a probe VM: the guest's CPUID "
               "shows %s family %u model %u stepping %u \"%s\" with "
               "this host's feature bits (hwcap %#llx); /proc/cpuinfo "
               "describes it: a determinism gap on this host)\n",
               cpu.vendor, cpu.family, cpu.model, cpu.stepping, cpu.brand,
               b->hwcap);
    if (!i.cpuid_control)
        fprintf(out, "CPUID rewrite:  available: `hvrun run --cpuid-rewrite` turns "
               "the CPUID instructions of the guest's code (functions with "
               "unwind info or symbols) into traps answered from the fixed model, and "
               "/proc/cpuinfo describes the model; not covered: code "
               "with neither, JIT-generated code (java), code that "
               "reads its own text\n");
    fprintf(out, "PMU:            %s%s\n", yes_no(i.pmu),
           i.pmu ? "" : " (no instruction-counted preemption on this host)");
    fprintf(out, "RDTSC trap:     %s%s\n", yes_no(i.rdtsc_trappable),
           i.rdtsc_trappable
               ? " (CR4.TSD: RDTSC/RDTSCP can be answered by hvrun)"
               : " (guest RDTSC/RDTSCP read the host TSC)");
    if (!i.rdtsc_trappable)
        fprintf(out, "RDTSC rewrite:  on by default with virtual time: the "
               "RDTSC/RDTSCP of the guest's code (functions with unwind "
               "info or symbols) become traps answered from the logical "
               "clock; not covered: code with neither, JIT code "
               "(--no-rdtsc-rewrite turns it off)\n");
    print_cpu_number(out, &i);
    add_leak(b, leak_unreached);
    add_leak(b, "RDTSCP with --no-virtualize-time or --no-rdtsc-rewrite");
    if (!i.cpuid_control)
        add_leak(b, i.cpuid_answered
                        ? "CPUID: the host CPU's feature bits unless "
                          "--cpuid-rewrite (under it, where the rewriter "
                          "does not reach)"
                        : "CPUID: the host CPU's identity and feature bits "
                          "unless --cpuid-rewrite (under it, where the "
                          "rewriter does not reach), its APIC ids where "
                          "sites are not rewritten");
    if (!i.rdtsc_trappable)
        add_leak(b, "RDTSC/RDTSCP in code the rewriter does not reach");
    double us;
    if (probe_syscall_cost(out, host, &us) == 0) {
        fprintf(out, "guest VM:       ok; syscall round trip %.1f us (%d calls, "
               "1 exit each)\n",
               us, PROBE_SYSCALLS);
        b->probed = b->usable = true;
        b->syscall_us = us;
    } else {
        snprintf(b->why, sizeof(b->why), "the syscall probe failed");
    }
}

/*
 * Which progress counter a run with this environment uses (HVRUN_PROGRESS,
 * as `hvrun run` reads it, else the default, software): the software
 * counter (mm/progress.c), or none (the host-timed slice). A retired-branch PMU counter would drive the
 * same interface (proxy_progress_enter/leave and the trap); none is used
 * yet, and this host's kvm says whether it has one.
 */
static const char *progress_counter(void)
{
    const char *env = getenv("HVRUN_PROGRESS");
    return env && !strcmp(env, "none") ? "none" : "software";
}

static void print_progress(FILE *out, const struct doctor_backend *kvm)
{
    bool software = !strcmp(progress_counter(), "software");
    fprintf(out, "progress:       a run counts with: %s%s; PMU counter: "
                 "not used (%s)\n",
            progress_counter(),
            software ? " (the default: loop back edges count in guest "
                       "memory, both backends)"
                     : " (HVRUN_PROGRESS=none: the host-timed slice cuts "
                       "a computing thread; --progress software counts "
                       "loop back edges in guest memory)",
            kvm->opened && kvm->info.pmu ? "this host's kvm has a PMU"
                                         : "no PMU on this host");
}

/* ---- --json ---------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static const char *json_bool(bool b) { return b ? "true" : "false"; }

static void json_backend(FILE *f, const char *name,
                         const struct doctor_backend *b)
{
    const struct vmm_host_info *i = &b->info;
    fprintf(f, "    \"%s\": {\n      \"usable\": %s,\n      \"why\": ", name,
            json_bool(b->usable));
    if (b->usable)
        fputs("null", f);
    else
        json_str(f, b->why);
    if (!b->opened) {
        fputs(",\n      \"hypervisor\": null, \"api_version\": null, "
              "\"sync_regs\": null, \"memslots\": null, \"pmu\": null, "
              "\"rdtsc_trap\": null, \"cpuid_control\": null, \"cpu\": null, "
              "\"hwcap\": null, \"syscall_us\": null, \"probe_calls\": 0, "
              "\"controlled\": null, \"leaks\": []\n    }", f);
        return;
    }
    bool kvm = !strcmp(name, "kvm");
    fputs(",\n      \"hypervisor\": ", f);
    if (kvm)
        json_str(f, i->hypervisor);
    else
        fputs("null", f);
    if (kvm)
        fprintf(f, ", \"api_version\": %d, \"sync_regs\": %s, "
                   "\"memslots\": %d, \"pmu\": %s",
                i->api_version, json_bool(i->sync_regs), i->nr_memslots,
                json_bool(i->pmu));
    else
        fputs(", \"api_version\": null, \"sync_regs\": null, "
              "\"memslots\": null, \"pmu\": null", f);
    fprintf(f, ",\n      \"rdtsc_trap\": %s, \"cpuid_control\": %s",
            json_bool(i->rdtsc_trappable), json_bool(i->cpuid_control));
    if (b->have_cpu) {
        fputs(",\n      \"cpu\": {\"vendor\": ", f);
        json_str(f, b->cpu.vendor);
        fprintf(f, ", \"family\": %u, \"model\": %u, \"stepping\": %u, "
                   "\"brand\": ", b->cpu.family, b->cpu.model,
                b->cpu.stepping);
        json_str(f, b->cpu.brand);
        fprintf(f, "}, \"hwcap\": \"%#llx\"", b->hwcap);
    } else {
        fputs(",\n      \"cpu\": null, \"hwcap\": null", f);
    }
    if (b->probed)
        fprintf(f, ",\n      \"syscall_us\": %.3f, \"probe_calls\": %d",
                b->syscall_us, PROBE_SYSCALLS);
    else
        fputs(",\n      \"syscall_us\": null, \"probe_calls\": 0", f);
    fprintf(f, ",\n      \"controlled\": {\"cpuid\": \"%s\", \"rdtsc\": "
               "\"%s\", \"cpu_number\": \"model\"}",
            i->cpuid_control ? "model" : kvm ? "host" : "host",
            i->rdtsc_trappable ? "trapped" : "rewritten");
    fputs(",\n      \"leaks\": [", f);
    for (int k = 0; k < b->nr_leaks; k++) {
        fputs(k ? ", " : "", f);
        json_str(f, b->leaks[k]);
    }
    fputs("]\n    }", f);
}

/* Each "label: text" line of the text report as {"key", "text"}. */
static void json_lines(FILE *f, char *text)
{
    fputs("  \"lines\": [", f);
    bool first = true;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *val = colon + 1;
        while (*val == ' ')
            val++;
        fputs(first ? "\n    {\"key\": " : ",\n    {\"key\": ", f);
        json_str(f, line);
        fputs(", \"text\": ", f);
        json_str(f, val);
        fputc('}', f);
        first = false;
    }
    fputs("\n  ]\n", f);
}

static void print_json(FILE *f, const struct doctor_backend *kvm,
                       const struct doctor_backend *ptrace, char *text)
{
    fputs("{\n  \"schema\": \"hvrun-doctor/1\",\n  \"version\": ", f);
    json_str(f, HVRUN_VERSION);
    fputs(",\n  \"commit\": ", f);
    json_str(f, HVRUN_COMMIT);
    fprintf(f, ",\n  \"usable\": %s,\n  \"backends\": {\n",
            json_bool(kvm->usable || ptrace->usable));
    json_backend(f, "kvm", kvm);
    fputs(",\n", f);
    json_backend(f, "ptrace", ptrace);
    fputs("\n  },\n  \"progress\": {\"counter\": ", f);
    json_str(f, progress_counter());
    fprintf(f, ", \"pmu\": %s},\n",
            kvm->opened ? json_bool(kvm->info.pmu) : "null");
    json_lines(f, text);
    fputs("}\n", f);
}

int cli_cmd_doctor(int argc, char **argv)
{
    bool json = argc == 2 && !strcmp(argv[1], "--json");
    if (argc > 1 && !json) {
        bool help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
        cli_command_usage(help ? stdout : stderr, "doctor");
        return help ? 0 : 2;
    }
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = json ? open_memstream(&text, &text_len) : stdout;
    if (!out) {
        cli_error("doctor: open_memstream: out of memory");
        return CLI_EXIT_FAILURE;
    }
    struct doctor_backend kvm = {0}, ptrace = {0};
    struct vmm_host *host;
    if (vmm_host_open(&host, kvm.why, sizeof(kvm.why)) < 0) {
        fprintf(out, "backend kvm:    unavailable: %s\n", kvm.why);
    } else {
        doctor_kvm(out, host, &kvm);
        vmm_host_close(host);
    }
    doctor_ptrace(out, &ptrace);
    print_progress(out, &kvm);
    if (json) {
        fclose(out);
        print_json(stdout, &kvm, &ptrace, text);
        free(text);
    }
    return kvm.usable || ptrace.usable ? 0 : CLI_EXIT_FAILURE;
}
