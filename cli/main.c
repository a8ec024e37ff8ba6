/*
 * main.c - subcommand dispatch, --help and --version.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_run.h"

#ifndef HVRUN_VERSION
#define HVRUN_VERSION "0.0.0"
#endif

struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static const struct cli_command commands[] = {
    {"run", cli_cmd_run, "run a program in a KVM micro-VM"},
    {"doctor", cli_cmd_doctor, "report what this host offers hvrun"},
    {"syscalls", cli_cmd_syscalls,
     "list every syscall and how hvrun handles it (markdown)"},
    {"analyze", cli_cmd_analyze,
     "search --chaos seeds for a schedule that changes the outcome"},
    {"detlog", cli_cmd_detlog,
     "print a run's detlog (--detlog FILE), or where two part"},
    {"record", cli_cmd_record,
     "run and record (record list|rm ID|clean; record --verify)"},
    {"replay", cli_cmd_replay,
     "run a recording again, checked event by event"},
};

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hvrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_usage(FILE *f)
{
    fprintf(f,
            "usage: hvrun <command> [options]\n"
            "       hvrun run [options] -- PROGRAM [ARGS...]\n\n"
            "Runs unmodified Linux x86-64 programs, one KVM micro-VM per "
            "process.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(f,
            "\nrun options:\n"
            "  --verify             run twice in fresh environments; compare "
            "stdout,\n"
            "                       stderr, exit status and the detlog "
            "(exit 120 if they differ)\n"
            "  --repeat N           run N times (as --verify), each "
            "compared with run 1; with\n"
            "                       --chaos each run gets its own schedule "
            "seed (--seed + i)\n"
            "                       and only output and status are compared "
            "(exit 120 if any differs)\n"
            "  -j, --jobs J         with --verify/--repeat: J runs at a "
            "time, each on its own\n"
            "                       CPU; reported in run order, as with -j 1\n"
            "  --report FILE        with --verify/--repeat: each run's "
            "outcome as JSON, or as\n"
            "                       JUnit XML when FILE ends in .xml\n"
            "  --seed N             seed of the guest's randomness "
            "(default 0)\n"
            "  --chaos              a seeded adversarial schedule (with "
            "--seed N: the same\n"
            "                       interleaving every run, another for "
            "another N)\n"
            "  --schedule FILE      the switches FILE names ('after TID N run "
            "TID2': after\n"
            "                       thread TID's N-th event TID2 runs), the "
            "rest by default;\n"
            "                       --schedule-out FILE writes a run's "
            "switches\n"
            "  --gdb PORT|unix:PATH stop before the first instruction and "
            "serve gdb there\n"
            "                       (target extended-remote); docs/"
            "DEBUGGING.md;\n"
            "                       --gdb-start EVENT: at that event instead "
            "(TCP only)\n"
            "  --epoch TIME         CLOCK_REALTIME at the start: "
            "2021-12-31T23:59:59Z (default)\n"
            "                       or @SECONDS\n"
            "  --no-virtualize-time, --no-virtualize-random,\n"
            "  --no-virtualize-metadata, --no-virtualize-host\n"
            "                       pass that source through from the host\n"
            "  --tmp DIR            the guest's /tmp (default: a fresh "
            "private directory)\n"
            "  --base-env MODE      empty, minimal or host (default): the "
            "starting environment\n"
            "                       (minimal: PATH, HOME=/, LANG=C.UTF-8, "
            "TZ=UTC, TMPDIR=/tmp)\n"
            "  -e, --env NAME[=VAL] set NAME (or copy it from the host)\n"
            "  --cwd DIR            the guest's working directory\n"
            "  --hostname NAME      uname nodename (default hvrun)\n"
            "  --uid N, --gid N     the ids the guest sees (default: "
            "hvrun's own)\n"
            "  --backend kvm|ptrace execution backend (default kvm, or\n"
            "                       $HVRUN_BACKEND where it is set)\n"
            "  --fail-closed        stop the run at the first unsupported "
            "syscall\n"
            "  --linger             after the first process exits, go on "
            "while another guest\n"
            "                       process holds the run's stdout or "
            "stderr (a daemon,\n"
            "                       a background server), as a shell's "
            "$(...) waits\n"
            "  --as-init            the program is pid 1, the run's init "
            "(orphans' parent,\n"
            "                       no default action for signals from "
            "inside the run), as\n"
            "                       a container's entry point; default: "
            "pid 2, a child of a\n"
            "                       virtual shell (pid 32767) under a "
            "virtual init (pid 1)\n"
            "  --no-seccomp         do not install hvrun's seccomp filter "
            "(to debug hvrun:\n"
            "                       strace, gdb; capabilities are still "
            "dropped)\n"
            "  --fs-policy          Landlock: the host read-only, writable "
            "only the working\n"
            "                       directory, the guest's /tmp and /dev "
            "(off by default)\n"
            "  --preempt-ms N       preempt a thread that makes no syscall for "
            "N ms of host\n"
            "                       time while another can run; 30*N while the "
            "others only wait\n"
            "                       or a timer is armed, counted as logical time "
            "(default 100;\n"
            "                       0: never, fully deterministic, but "
            "spin-waits hang)\n"
            "  --cpuid-rewrite      where the host cannot trap CPUID (doctor: "
            "\"CPUID control: no\"),\n"
            "                       rewrite the CPUID instructions of the "
            "guest's code into\n"
            "                       traps answered from the fixed model "
            "(docs/DETERMINISM.md)\n"
            "  --no-rdtsc-rewrite   leave the guest's RDTSC/RDTSCP instructions "
            "alone (by default,\n"
            "                       with virtual time, they read the logical "
            "clock: in the guest\n"
            "                       where compiled in the usual form, else by "
            "a trap)\n"
            "  --memory SIZE        the guest machine's RAM, e.g. 512M, 2G "
            "(default 8G): what\n"
            "                       sysinfo and /proc/meminfo say, and the "
            "limit of the run's\n"
            "                       guest memory (ENOMEM past it, or an "
            "OOM kill)\n"
            "  --summary            counts, virtualised reads and the detlog "
            "digest on stderr,\n"
            "                       and where hvrun's host time went: set-up, "
            "the run (in the\n"
            "                       guest over N runs, the ptrace stub's "
            "mapping sync, the\n"
            "                       proxy's emulation, VM/stub creation and "
            "teardown, fork\n"
            "                       copies, exec images), teardown, the "
            "stubs' CPU time\n"
            "                       (host time, never seen by the guest nor "
            "in the detlog)\n"
            "  --summary-json       the same as one JSON object "
            "(host_time_ms)\n"
            "  --detlog FILE        the run's event log to FILE (with --verify, "
            "run 2's\n"
            "                       to FILE.2): hvrun detlog FILE [FILE.2]\n"
            "  --log LEVEL          hvrun diagnostics: error, warn (default), "
            "debug\n"
            "                       (debug traces every syscall)\n"
            "\nexit status: the program's own; 128+N if it died of signal "
            "N; 120 --verify differs;\n"
            "  125 hvrun failed, 126 not executable or not an x86-64 ELF, "
            "127 not found.\n"
            "\nother: hvrun --help, hvrun --version\n");
}

uint64_t cli_started_ns;

int main(int argc, char **argv)
{
    cli_started_ns = vmm_clock_now();
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_EXIT_FAILURE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        cli_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("hvrun %s\n", HVRUN_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    cli_error("unknown command '%s'; see 'hvrun --help'", argv[1]);
    return CLI_EXIT_FAILURE;
}
