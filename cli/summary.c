/*
 * summary.c - `--summary` (one line) and `--summary-json` (one JSON object)
 * on stderr at the end of a run.
 */
#include <stdio.h>
#include <string.h>

#include "cli_run.h"

static const char *const read_names[DET_SRC_COUNT] = {
    "syscall", "time", "random", "ids", "metadata", "host", "sched",
    "external"};

/* ---- host time (run_clock.h) ---------------------------------------------- */

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* A phase's time and count inside the run loop. */
static uint64_t in_run_ns(const struct run_summary *s, enum vmm_clock_phase k)
{
    return s->clock.ns[k] - s->before.ns[k];
}

static uint64_t in_run_count(const struct run_summary *s,
                             enum vmm_clock_phase k)
{
    return s->clock.count[k] - s->before.count[k];
}

/* The run loop's time outside the guest, new VMs, fork's copies and exec's
 * images: the proxy's emulation of the calls and its bookkeeping. */
static uint64_t emulation_ns(const struct run_summary *s)
{
    uint64_t other = in_run_ns(s, VMM_CLOCK_GUEST) +
                     in_run_ns(s, VMM_CLOCK_VM_CREATE) +
                     in_run_ns(s, VMM_CLOCK_VM_DESTROY) +
                     in_run_ns(s, VMM_CLOCK_FORK_COPY) +
                     in_run_ns(s, VMM_CLOCK_EXEC_LOAD);
    return s->run_ns > other ? s->run_ns - other : 0;
}

static void print_host_time(FILE *f, const struct run_summary *s)
{
    fprintf(f,
            "host time: set-up %.2f ms, run %.2f ms (in the guest %.2f ms "
            "over %llu runs",
            ms(s->setup_ns), ms(s->run_ns), ms(in_run_ns(s, VMM_CLOCK_GUEST)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_GUEST));
    if (s->clock.count[VMM_CLOCK_MAP_SYNC])
        fprintf(f, " of which stub mapping sync %.2f ms",
                ms(in_run_ns(s, VMM_CLOCK_MAP_SYNC)));
    fprintf(f,
            ", emulation %.2f ms, VM creation %.2f ms (%llu), VM teardown "
            "%.2f ms (%llu), fork copies %.2f ms (%llu), exec images %.2f ms "
            "(%llu)), teardown %.2f ms",
            ms(emulation_ns(s)), ms(in_run_ns(s, VMM_CLOCK_VM_CREATE)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_VM_CREATE),
            ms(in_run_ns(s, VMM_CLOCK_VM_DESTROY)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_VM_DESTROY),
            ms(in_run_ns(s, VMM_CLOCK_FORK_COPY)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_FORK_COPY),
            ms(in_run_ns(s, VMM_CLOCK_EXEC_LOAD)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_EXEC_LOAD),
            ms(s->teardown_ns));
    if (s->clock.count[VMM_CLOCK_GUEST_CPU])
        fprintf(f, "; the stubs' CPU time %.2f ms (%llu stubs)",
                ms(s->clock.ns[VMM_CLOCK_GUEST_CPU]),
                (unsigned long long)s->clock.count[VMM_CLOCK_GUEST_CPU]);
    fprintf(f, "; ");
}

static void print_host_time_json(FILE *f, const struct run_summary *s)
{
    fprintf(f,
            "\"host_time_ms\": {\"setup\": %.3f, \"run\": %.3f, "
            "\"guest\": %.3f, \"guest_runs\": %llu, \"map_sync\": %.3f, "
            "\"emulation\": %.3f, \"vm_create\": %.3f, \"vm_creates\": %llu, "
            "\"vm_destroy\": %.3f, \"fork_copy\": %.3f, \"forks\": %llu, "
            "\"exec_load\": %.3f, \"execs\": %llu, \"teardown\": %.3f, "
            "\"stub_cpu\": %.3f}, ",
            ms(s->setup_ns), ms(s->run_ns), ms(in_run_ns(s, VMM_CLOCK_GUEST)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_GUEST),
            ms(in_run_ns(s, VMM_CLOCK_MAP_SYNC)), ms(emulation_ns(s)),
            ms(in_run_ns(s, VMM_CLOCK_VM_CREATE)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_VM_CREATE),
            ms(in_run_ns(s, VMM_CLOCK_VM_DESTROY)),
            ms(in_run_ns(s, VMM_CLOCK_FORK_COPY)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_FORK_COPY),
            ms(in_run_ns(s, VMM_CLOCK_EXEC_LOAD)),
            (unsigned long long)in_run_count(s, VMM_CLOCK_EXEC_LOAD),
            ms(s->teardown_ns), ms(s->clock.ns[VMM_CLOCK_GUEST_CPU]));
}

static void print_json(FILE *f, const struct run_summary *s)
{
    fprintf(f,
            "{\"exit_code\": %d, \"syscalls\": %llu, \"unsupported\": %llu, "
            "\"exits\": %llu, \"syscall_exits\": %llu, "
            "\"exception_exits\": %llu, \"preemptions\": %llu, "
            "\"exits_per_syscall\": %.3f, \"virtualized_reads\": {",
            s->exit_code, (unsigned long long)s->syscalls,
            (unsigned long long)s->unsupported, (unsigned long long)s->exits,
            (unsigned long long)s->syscall_exits,
            (unsigned long long)s->exception_exits,
            (unsigned long long)s->preemptions,
            s->syscalls ? (double)s->exits / (double)s->syscalls : 0.0);
    for (int i = DET_SRC_TIME; i < DET_SRC_COUNT; i++)
        fprintf(f, "%s\"%s\": %llu", i == DET_SRC_TIME ? "" : ", ",
                read_names[i], (unsigned long long)s->reads[i]);
    fprintf(f,
            "}, \"tasks\": %llu, "
            "\"detlog_events\": %llu, \"detlog_digest\": \"%016llx\", "
            "\"rdtsc_trappable\": %s, \"cpuid_controlled\": %s, "
            "\"cpuid\": \"%s\", \"cpu_seen\": \"%s\", "
            "\"cpuid_sites_rewritten\": %llu, "
            "\"cpuid_traps\": %llu, \"cpuid_sites_in_guest\": %llu, "
            "\"cpuid_rewrite_seconds\": %.6f, "
            "\"rdtsc\": \"%s\", \"rdtsc_sites_rewritten\": %llu, "
            "\"rdtsc_sites_in_guest\": %llu, "
            "\"rdtsc_traps\": %llu, \"idcall_sites_in_guest\": %llu, "
            "\"progress\": \"%s\", "
            "\"progress_sites\": %llu, \"progress_traps\": %llu, "
            "\"progress_units\": %llu, ",
            (unsigned long long)s->tasks,
            (unsigned long long)s->detlog_events,
            (unsigned long long)s->digest,
            s->rdtsc_trappable ? "true" : "false",
            s->cpuid_controlled ? "true" : "false", s->cpuid, s->cpu_seen,
            (unsigned long long)s->cpuid_sites,
            (unsigned long long)s->cpuid_traps,
            (unsigned long long)s->cpuid_inline_sites,
            (double)s->cpuid_patch_ns / 1e9,
            s->rdtsc_rewritten ? "rewritten"
            : s->rdtsc_trappable ? "trapped"
                                 : "host",
            (unsigned long long)s->tsc_sites,
            (unsigned long long)s->tsc_inline_sites,
            (unsigned long long)s->tsc_traps,
            (unsigned long long)s->idcall_sites,
            s->progress_count ? "software" : "none",
            (unsigned long long)s->progress_sites,
            (unsigned long long)s->progress_traps,
            (unsigned long long)s->progress_units);
    print_host_time_json(f, s);
    fprintf(f, "\"wall_seconds\": %.3f}\n", s->wall_s);
}

/* Nothing where the backend controls CPUID (the model is there). */
static void print_cpuid(FILE *f, const struct run_summary *s)
{
    if (!strcmp(s->cpuid, "rewritten"))
        fprintf(f,
                "CPUID the fixed model by rewriting (%llu sites in %.1f ms, "
                "%llu traps; not covered: code without unwind info or symbols, JIT "
                "code, code reading its own text); ",
                (unsigned long long)s->cpuid_sites,
                (double)s->cpuid_patch_ns / 1e6,
                (unsigned long long)s->cpuid_traps);
    else if (!s->cpuid_controlled && (s->cpuid_sites || s->cpuid_inline_sites))
        fprintf(f, "CPUID not controlled on this host (the guest sees the "
                   "host CPU with the model's APIC ids: %llu sites answered "
                   "in the guest, %llu trapping, %llu traps; --cpuid-rewrite "
                   "gives the model); ",
                (unsigned long long)s->cpuid_inline_sites,
                (unsigned long long)s->cpuid_sites,
                (unsigned long long)s->cpuid_traps);
    else if (!s->cpuid_controlled)
        fprintf(f, "CPUID not controlled on this host (the guest sees the "
                   "host CPU; measured; --cpuid-rewrite gives the model); ");
}

void cli_print_summary(FILE *f, const struct run_options *o,
                       const struct run_summary *s)
{
    if (o->summary_json) {
        print_json(f, s);
        return;
    }
    fprintf(f,
            "hvrun: summary: syscalls %llu, unsupported %llu, exits %llu "
            "(syscall %llu, exception %llu, preemption %llu), "
            "exits/syscall %.3f; "
            "virtualised reads: time %llu, random %llu, ids %llu, "
            "metadata %llu, host %llu; detlog %llu events, digest %016llx; ",
            (unsigned long long)s->syscalls,
            (unsigned long long)s->unsupported, (unsigned long long)s->exits,
            (unsigned long long)s->syscall_exits,
            (unsigned long long)s->exception_exits,
            (unsigned long long)s->preemptions,
            s->syscalls ? (double)s->exits / (double)s->syscalls : 0.0,
            (unsigned long long)s->reads[DET_SRC_TIME],
            (unsigned long long)s->reads[DET_SRC_RANDOM],
            (unsigned long long)s->reads[DET_SRC_IDS],
            (unsigned long long)s->reads[DET_SRC_METADATA],
            (unsigned long long)s->reads[DET_SRC_HOST],
            (unsigned long long)s->detlog_events,
            (unsigned long long)s->digest);
    if (s->rdtsc_rewritten)
        fprintf(f,
                "RDTSC the logical clock by rewriting (%llu sites read in "
                "the guest, %llu trapping, %llu traps; not covered: code "
                "without unwind info or symbols, JIT code); ",
                (unsigned long long)s->tsc_inline_sites,
                (unsigned long long)s->tsc_sites,
                (unsigned long long)s->tsc_traps);
    else if (s->rdtsc_trappable && o->det.virtualize_time)
        fprintf(f, "RDTSC the logical clock by trapping (%llu sites read "
                   "in the guest, %llu traps); ",
                (unsigned long long)s->tsc_inline_sites,
                (unsigned long long)s->tsc_traps);
    else if (s->rdtsc_trappable)
        fprintf(f, "RDTSC trapped, answered with the host TSC (time is not "
                   "virtual); ");
    else
        fprintf(f, "RDTSC reads the host TSC (uses cannot be seen); ");
    print_cpuid(f, s);
    if (s->idcall_sites)
        fprintf(f, "identity and signal calls answered in the guest (%llu "
                   "getpid, getppid, get[e]uid, get[e]gid, sigprocmask, "
                   "sigaction, set_tid_address and rseq sites); ",
                (unsigned long long)s->idcall_sites);
    if (s->progress_count)
        fprintf(f, "progress counted in software (%llu loop back edges "
                   "rewritten, %llu counter traps, %llu units; host-timed "
                   "cuts %llu); ",
                (unsigned long long)s->progress_sites,
                (unsigned long long)s->progress_traps,
                (unsigned long long)s->progress_units,
                (unsigned long long)s->preemptions);
    else
        fprintf(f, "progress not counted (--progress none: computing "
                   "threads are cut by host time, %llu host-timed cuts); ",
                (unsigned long long)s->preemptions);
    print_host_time(f, s);
    fprintf(f, "wall %.3f s\n", s->wall_s);
}
