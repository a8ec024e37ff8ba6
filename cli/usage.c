/*
 * usage.c - hvrun's user documentation, per command (usage.h says how it
 * is used). Help strings are single paragraphs: help.c wraps them for
 * --help and escapes them for roff, so write plain text (no roff, no
 * manual line breaks).
 */
#include <string.h>

#include "usage.h"

#define HELP_OPT                                                            \
    {0, 'h', "help", NULL, CLI_ARG_NONE, NULL,                              \
     "Print this help and exit."}
#define END_OPTS {0, 0, NULL, NULL, CLI_ARG_NONE, NULL, NULL}
#define END_ITEMS {NULL, NULL}

/* ---- shared pieces ------------------------------------------------------- */

static const char backend_help[] =
    "The execution backend: kvm (one KVM micro-VM per guest process; needs "
    "/dev/kvm) or ptrace (a stub process per guest process traced with "
    "PTRACE_SYSEMU; needs no virtualisation). Default kvm, or "
    "$HVRUN_BACKEND where it is set.";

#define ENV_BACKEND                                                         \
    {"HVRUN_BACKEND",                                                       \
     "The default backend (kvm or ptrace) where --backend is not given: "   \
     "set HVRUN_BACKEND=ptrace once on a host without /dev/kvm (a VM "      \
     "without nested virtualisation, most CI runners)."}
#define ENV_CACHE                                                           \
    {"XDG_CACHE_HOME, HOME",                                                \
     "Where the per-boot CPUID cache lives: $XDG_CACHE_HOME/hvrun, else "   \
     "$HOME/.cache/hvrun."},                                                \
    {"HVRUN_NO_CACHE", "Set to 1: no per-boot cache is read or written."},  \
    {"XDG_RUNTIME_DIR",                                                     \
     "$XDG_RUNTIME_DIR/hvrun holds the lock files with which concurrent "   \
     "runs pick different host CPUs (else the cache directory)."}
#define ENV_RECORDINGS                                                      \
    {"XDG_DATA_HOME, HOME",                                                 \
     "Where recordings live: $XDG_DATA_HOME/hvrun/recordings, else "        \
     "$HOME/.local/share/hvrun/recordings."}
#define FILE_CACHE                                                          \
    {"~/.cache/hvrun/",                                                     \
     "Per-boot caches (the host's supported CPUID and the CPUID probe's "   \
     "result, one file per kernel release and boot id; any file there may " \
     "be removed at any time)."}
#define FILE_RECORDINGS                                                     \
    {"~/.local/share/hvrun/recordings/ID.hvrec",                            \
     "The recordings of hvrun record, by id (hvrun record list)."}
#define EXIT_FAILURE_ITEM                                                   \
    {"125", "hvrun itself failed (a bad option, a host without what it "    \
            "needs); the message names why."}

/* ---- hvrun --------------------------------------------------------------- */

static const char *const hvrun_synopsis[] = {
    "COMMAND [options] [ARGS...]",
    "run [options] -- PROGRAM [ARGS...]",
    "help [--man|--complete] [COMMAND]",
    "--help | --version",
    NULL,
};
static const char *const hvrun_description[] = {
    "hvrun runs unmodified Linux x86-64 programs (static or dynamic, PIE or "
    "not, straight from the host's filesystem) deterministically: every "
    "system call of the program traps to hvrun, which emulates it or "
    "carries it out on the host, and every value that could differ between "
    "runs (clocks, randomness, ids, file metadata, directory order, /proc, "
    "the machine) comes from a deterministic model, so every run of the "
    "same command gives the same bytes. Process trees (shells, pipelines, "
    "make, compilers, Python multiprocessing) run too, one scheduler "
    "running exactly one guest thread at a time.",
    "Each guest process runs in a KVM micro-VM (the kvm backend, the "
    "default) or in a stub process traced with PTRACE_SYSEMU (the ptrace "
    "backend: the same policy and the same bytes, no virtualisation "
    "needed). hvrun doctor says what this host offers.",
    "The kvm backend needs read and write access to /dev/kvm. As root that "
    "is given; a non-root user gets it through the kvm group (Debian's "
    "udev rules make /dev/kvm root:kvm, mode 0660): sudo adduser USER kvm, "
    "then log in again. The package changes no groups. Without /dev/kvm, "
    "use the ptrace backend (HVRUN_BACKEND=ptrace).",
    "Each command has its own page: hvrun-run(1), hvrun-analyze(1), "
    "hvrun-record(1), hvrun-replay(1), hvrun-doctor(1), hvrun-detlog(1), "
    "hvrun-syscalls(1).",
    NULL,
};
static const struct cli_opt hvrun_opts[] = {
    HELP_OPT,
    {0, 0, "version", NULL, CLI_ARG_NONE, NULL,
     "Print the version and the commit hvrun was built from, and exit."},
    END_OPTS,
};
static const struct cli_item hvrun_exit[] = {
    {"0", "Success; for hvrun run, the program's own status (see "
          "hvrun-run(1))."},
    EXIT_FAILURE_ITEM,
    END_ITEMS,
};
static const struct cli_item hvrun_env[] = {
    ENV_BACKEND,
    ENV_CACHE,
    ENV_RECORDINGS,
    END_ITEMS,
};
static const struct cli_item hvrun_files[] = {
    {"/dev/kvm", "The KVM device the kvm backend opens (group kvm)."},
    FILE_CACHE,
    FILE_RECORDINGS,
    END_ITEMS,
};
static const struct cli_item hvrun_examples[] = {
    {"hvrun doctor", "What this host offers: backends, costs, what is "
                     "controlled and what leaks."},
    {"hvrun run --verify -- python3 -c 'print(1)'",
     "Run a program twice in fresh environments and check that both runs "
     "gave the same bytes."},
    {"HVRUN_BACKEND=ptrace hvrun run -- make",
     "The same without /dev/kvm."},
    END_ITEMS,
};
static const struct cli_doc doc_hvrun = {
    .name = "",
    .summary = "run Linux x86-64 programs deterministically",
    .synopsis = hvrun_synopsis,
    .description = hvrun_description,
    .opts = hvrun_opts,
    .exit_status = hvrun_exit,
    .environment = hvrun_env,
    .files = hvrun_files,
    .examples = hvrun_examples,
};

/* ---- run ----------------------------------------------------------------- */

static const char *const run_synopsis[] = {
    "run [options] -- PROGRAM [ARGS...]",
    NULL,
};
static const char *const run_description[] = {
    "Runs PROGRAM (looked up in PATH when it has no '/') with its "
    "arguments, one guest process per process it starts, every value that "
    "could differ between runs taken from a deterministic model: the "
    "clocks start at --epoch and advance logically, randomness comes from "
    "--seed, pids, ids, file metadata, directory order, /proc and the "
    "machine are virtual. The program's stdin, stdout and stderr are "
    "hvrun's.",
    "--verify runs the program twice in fresh environments (the files run "
    "1 created removed, those it changed put back) and says whether "
    "stdout, stderr, the exit status and the event log were identical. "
    "--chaos makes the schedule a seeded adversary, one interleaving per "
    "--seed.",
    NULL,
};
static const struct cli_opt run_opts[] = {
    {CLI_RUN_OPT_BACKEND, 0, "backend", "kvm|ptrace", CLI_ARG_CHOICE,
     "kvm ptrace", backend_help},
    {CLI_RUN_OPT_VERIFY, 0, "verify", NULL, CLI_ARG_NONE, NULL,
     "Run twice in fresh environments; compare stdout, stderr, exit status "
     "and the detlog (exit 120 if they differ)."},
    {CLI_RUN_OPT_REPEAT, 0, "repeat", "N", CLI_ARG_WORD, NULL,
     "Run N times (as --verify), each compared with run 1; with --chaos "
     "each run gets its own schedule seed (--seed + i) and only output and "
     "status are compared (exit 120 if any differs)."},
    {'j', 'j', "jobs", "J", CLI_ARG_WORD, NULL,
     "With --verify/--repeat: J runs at a time, each on its own CPU; "
     "reported in run order, as with -j 1."},
    {CLI_RUN_OPT_REPORT, 0, "report", "FILE", CLI_ARG_FILE, NULL,
     "With --verify/--repeat: each run's outcome as JSON, or as JUnit XML "
     "when FILE ends in .xml."},
    {CLI_RUN_OPT_SEED, 0, "seed", "N", CLI_ARG_WORD, NULL,
     "Seed of the guest's randomness (default 0)."},
    {CLI_RUN_OPT_CHAOS, 0, "chaos", NULL, CLI_ARG_NONE, NULL,
     "A seeded adversarial schedule (with --seed N: the same interleaving "
     "every run, another for another N)."},
    {CLI_RUN_OPT_SCHEDULE, 0, "schedule", "FILE", CLI_ARG_FILE, NULL,
     "The switches FILE names ('after TID N run TID2': after thread TID's "
     "N-th event TID2 runs), the rest by default."},
    {CLI_RUN_OPT_SCHEDULE_OUT, 0, "schedule-out", "FILE", CLI_ARG_FILE, NULL,
     "Write the run's switches to FILE (for --schedule)."},
    {CLI_RUN_OPT_GDB, 0, "gdb", "PORT|HOST:PORT|unix:PATH", CLI_ARG_WORD, NULL,
     "Stop before the program's first instruction and serve gdb's remote "
     "protocol there (target extended-remote); the run prints the same "
     "bytes and detlog as without gdb; gdb can go back (reverse-continue, "
     "reverse-stepi: the run is run again to the point, from the nearest "
     "checkpoint: monitor checkpoint, monitor restart N; "
     "docs/DEBUGGING.md)."},
    {CLI_RUN_OPT_GDB_START, 0, "gdb-start", "EVENT", CLI_ARG_WORD, NULL,
     "With --gdb: stop for gdb at that event (monitor when names events) "
     "instead of the first instruction."},
    {CLI_RUN_OPT_EPOCH, 0, "epoch", "TIME", CLI_ARG_WORD, NULL,
     "CLOCK_REALTIME at the start: 2021-12-31T23:59:59Z (default) or "
     "@SECONDS."},
    {CLI_RUN_OPT_NO_TIME, 0, "no-virtualize-time", NULL, CLI_ARG_NONE, NULL,
     "Pass the host's clocks through."},
    {CLI_RUN_OPT_NO_RANDOM, 0, "no-virtualize-random", NULL, CLI_ARG_NONE,
     NULL, "Pass the host's randomness through."},
    {CLI_RUN_OPT_NO_METADATA, 0, "no-virtualize-metadata", NULL,
     CLI_ARG_NONE, NULL,
     "Pass the host's file metadata (inodes, times, directory order) "
     "through."},
    {CLI_RUN_OPT_NO_HOST, 0, "no-virtualize-host", NULL, CLI_ARG_NONE, NULL,
     "Pass the host's identity (uname, machine) through."},
    {CLI_RUN_OPT_TMP, 0, "tmp", "DIR", CLI_ARG_DIR, NULL,
     "The guest's /tmp (default: a fresh private directory)."},
    {CLI_RUN_OPT_BASE_ENV, 0, "base-env", "MODE", CLI_ARG_CHOICE,
     "empty minimal host",
     "empty, minimal or host (default): the starting environment (minimal: "
     "PATH, HOME=/, LANG=C.UTF-8, TZ=UTC, TMPDIR=/tmp)."},
    {'e', 'e', "env", "NAME[=VAL]", CLI_ARG_WORD, NULL,
     "Set NAME (or copy it from the host)."},
    {CLI_RUN_OPT_CWD, 0, "cwd", "DIR", CLI_ARG_DIR, NULL,
     "The guest's working directory."},
    {CLI_RUN_OPT_HOSTNAME, 0, "hostname", "NAME", CLI_ARG_WORD, NULL,
     "uname nodename (default hvrun)."},
    {CLI_RUN_OPT_UID, 0, "uid", "N", CLI_ARG_WORD, NULL,
     "The user id the guest sees (default: hvrun's own)."},
    {CLI_RUN_OPT_GID, 0, "gid", "N", CLI_ARG_WORD, NULL,
     "The group id the guest sees (default: hvrun's own)."},
    {CLI_RUN_OPT_FAIL_CLOSED, 0, "fail-closed", NULL, CLI_ARG_NONE, NULL,
     "Stop the run at the first unsupported syscall."},
    {CLI_RUN_OPT_LINGER, 0, "linger", NULL, CLI_ARG_NONE, NULL,
     "After the first process exits, go on while another guest process "
     "holds the run's stdout or stderr (a daemon, a background server), as "
     "a shell's $(...) waits."},
    {CLI_RUN_OPT_AS_INIT, 0, "as-init", NULL, CLI_ARG_NONE, NULL,
     "The program is pid 1, the run's init (orphans' parent, no default "
     "action for signals from inside the run), as a container's entry "
     "point; default: pid 2, a child of a virtual shell (pid 32767) under a "
     "virtual init (pid 1)."},
    {CLI_RUN_OPT_NO_SECCOMP, 0, "no-seccomp", NULL, CLI_ARG_NONE, NULL,
     "Do not install hvrun's seccomp filter (to debug hvrun: strace, gdb; "
     "capabilities are still dropped)."},
    {CLI_RUN_OPT_FS_POLICY, 0, "fs-policy", NULL, CLI_ARG_NONE, NULL,
     "Landlock: the host read-only, writable only the working directory, "
     "the guest's /tmp and /dev (off by default)."},
    {CLI_RUN_OPT_PREEMPT_MS, 0, "preempt-ms", "N", CLI_ARG_WORD, NULL,
     "Preempt a thread that makes no syscall for N ms of host time while "
     "another can run; 30*N while the others only wait or a timer is "
     "armed, counted as logical time (default 100; 0: never, fully "
     "deterministic, but spin-waits hang)."},
    {CLI_RUN_OPT_CPUID_REWRITE, 0, "cpuid-rewrite", NULL, CLI_ARG_NONE, NULL,
     "Where the host cannot trap CPUID (doctor: \"CPUID control: no\"), "
     "rewrite the CPUID instructions of the guest's code into traps "
     "answered from the fixed model."},
    {CLI_RUN_OPT_NO_RDTSC_REWRITE, 0, "no-rdtsc-rewrite", NULL, CLI_ARG_NONE,
     NULL,
     "Leave the guest's RDTSC/RDTSCP instructions alone (by default, with "
     "virtual time, they read the logical clock: in the guest where "
     "compiled in the usual form, else by a trap)."},
    {CLI_RUN_OPT_PROGRESS, 0, "progress", "MODE", CLI_ARG_WORD, NULL,
     "How a thread's progress between syscalls is counted: 'software' "
     "rewrites the back edges of the guest's loops to count in guest "
     "memory, so compute is preempted and timed the same way every run "
     "(docs/DETERMINISM.md, \"Counted progress\"); 'none' leaves it to "
     "the host-timed slice (default software; HVRUN_PROGRESS sets it)."},
    {CLI_RUN_OPT_MEMORY, 0, "memory", "SIZE", CLI_ARG_WORD, NULL,
     "The guest machine's RAM, e.g. 512M, 2G (default 8G): what sysinfo "
     "and /proc/meminfo say, and the limit of the run's guest memory "
     "(ENOMEM past it, or an OOM kill)."},
    {CLI_RUN_OPT_SUMMARY, 0, "summary", NULL, CLI_ARG_NONE, NULL,
     "Counts, virtualised reads and the detlog digest on stderr, and where "
     "hvrun's host time went: set-up, the run (in the guest, the ptrace "
     "stub's mapping sync, the proxy's emulation, VM/stub creation and "
     "teardown, fork copies, exec images), teardown, the stubs' CPU time "
     "(host time, never seen by the guest nor in the detlog)."},
    {CLI_RUN_OPT_SUMMARY_JSON, 0, "summary-json", NULL, CLI_ARG_NONE, NULL,
     "The same as one JSON object (host_time_ms)."},
    {CLI_RUN_OPT_DETLOG, 0, "detlog", "FILE", CLI_ARG_FILE, NULL,
     "The run's event log to FILE (with --verify, run 2's to FILE.2): "
     "hvrun detlog FILE [FILE.2]."},
    {CLI_RUN_OPT_LOG, 0, "log", "LEVEL", CLI_ARG_CHOICE, "error warn debug",
     "hvrun diagnostics: error, warn (default), debug (debug traces every "
     "syscall)."},
    HELP_OPT,
    END_OPTS,
};
static const struct cli_item run_exit[] = {
    {"N", "The program's own exit status."},
    {"128+N", "The program died of signal N (or, under --verify, the "
              "comparison was interrupted by signal N: the files are put "
              "back as they were before it)."},
    {"120", "--verify or --repeat found the runs different."},
    EXIT_FAILURE_ITEM,
    {"126", "The program is not executable or not an x86-64 ELF."},
    {"127", "The program was not found."},
    END_ITEMS,
};
static const struct cli_item run_env[] = {
    ENV_BACKEND,
    {"HVRUN_PROGRESS", "--progress's default (software, the default, or "
                       "none): HVRUN_PROGRESS=none leaves every run to the "
                       "host-timed slice (hvrun record keeps the mode in "
                       "the recording)."},
    {"PATH", "Where a PROGRAM without '/' is looked up (and the guest's "
             "PATH with --base-env host)."},
    ENV_CACHE,
    {"HVRUN_SECCOMP_LOG", "Set to 1: hvrun's seccomp filter lets every "
                          "call through and the kernel logs those outside "
                          "its list (to debug hvrun)."},
    {"HVRUN_GDB_CHECKPOINT_EVENTS",
     "With --gdb: an automatic checkpoint every that many events of a "
     "continue (default 100000; 0: none), so going back is a restore and "
     "a short run (docs/DEBUGGING.md, Checkpoints)."},
    {"HVRUN_GDB_CHECKPOINTS",
     "With --gdb: how many automatic checkpoints are kept (default 16; "
     "past that every other one goes and the spacing doubles)."},
    {"HVRUN_GDB_CHECKPOINT_STALL_MS",
     "With --gdb: each checkpoint's copy waits that long before it lets "
     "go of the run's pipes and sockets, as on a loaded host (to test "
     "hvrun: the run waits for it)."},
    {"HVRUN_GDB_CHECKPOINT_FAIL",
     "With --gdb: each checkpoint's copy fails once it has let go of the "
     "run (to test hvrun: the run goes on, the copy is reaped)."},
    END_ITEMS,
};
static const struct cli_item run_files[] = {
    {"/dev/kvm", "The KVM device of the kvm backend (group kvm)."},
    FILE_CACHE,
    {"/tmp/hvrun-*", "Each run's scratch directory (the guest's private "
                     "/tmp, --verify's captured runs), removed at the end."},
    END_ITEMS,
};
static const struct cli_item run_examples[] = {
    {"hvrun run -- python3 -c 'import time; print(time.time())'",
     "Prints the same time on every run."},
    {"hvrun run --verify -- make -j4", "Builds twice and compares."},
    {"hvrun run --chaos --seed 7 --verify -- ./racy",
     "One adversarial schedule, the same on both runs."},
    {"hvrun run --backend ptrace --summary -- /bin/true",
     "Without /dev/kvm, with counts and costs on stderr."},
    END_ITEMS,
};
static const struct cli_doc doc_run = {
    .name = "run",
    .summary = "run a program deterministically, one micro-VM per process",
    .synopsis = run_synopsis,
    .description = run_description,
    .opts = run_opts,
    .exit_status = run_exit,
    .environment = run_env,
    .files = run_files,
    .examples = run_examples,
};

/* ---- analyze ------------------------------------------------------------- */

static const char *const analyze_synopsis[] = {
    "analyze [options] [run options] -- PROGRAM [ARGS...]",
    NULL,
};
static const char *const analyze_description[] = {
    "Searches for a schedule that changes a program's outcome: a reference "
    "run under the default schedule, then runs under --chaos --seed S, "
    "S+1, ... (-j at a time) until one's exit status differs (or its "
    "output, --compare-output, or a predicate, --fail-if). It prints the "
    "lowest such seed and the hvrun run command that reproduces it.",
    "Then it shrinks that run's schedule by delta debugging to the few "
    "switches that still change the outcome, saves them (-o FILE, replayed "
    "by hvrun run --schedule FILE) and prints each: which thread was cut "
    "after which syscall, at which function of which file, and which "
    "thread ran instead.",
    NULL,
};
static const struct cli_opt analyze_opts[] = {
    {0, 0, "runs", "N", CLI_ARG_WORD, NULL, "Chaos runs at most (default "
                                            "100)."},
    {0, 0, "seed-from", "S", CLI_ARG_WORD, NULL,
     "The first chaos seed (default 1)."},
    {0, 'j', NULL, "N", CLI_ARG_WORD, NULL,
     "Runs at a time (default: the host's cores)."},
    {0, 0, "timeout", "SECS", CLI_ARG_WORD, NULL,
     "Give up after SECS of searching."},
    {0, 0, "run-timeout", "SECS", CLI_ARG_WORD, NULL,
     "The time one run may take (default 120)."},
    {0, 0, "compare-output", NULL, CLI_ARG_NONE, NULL,
     "A different stdout or stderr also counts."},
    {0, 0, "fail-if", "CMD", CLI_ARG_COMMAND, NULL,
     "A run failed if the shell command CMD exits 0 ($HVRUN_STDOUT, "
     "$HVRUN_STDERR: its files; $HVRUN_STATUS: its exit status)."},
    {0, 0, "json", NULL, CLI_ARG_NONE, NULL,
     "The result as one JSON object on stdout."},
    {0, 0, "no-shrink", NULL, CLI_ARG_NONE, NULL, "Report the seed only."},
    {0, 0, "shrink-runs", "N", CLI_ARG_WORD, NULL,
     "Runs spent shrinking the schedule (default 500)."},
    {0, 'o', NULL, "FILE", CLI_ARG_FILE, NULL,
     "The shrunk schedule (default hvrun-analyze.schedule)."},
    HELP_OPT,
    END_OPTS,
};
static const struct cli_item analyze_exit[] = {
    {"0", "A schedule with another outcome was found."},
    {"1", "None was, within --runs and --timeout."},
    EXIT_FAILURE_ITEM,
    END_ITEMS,
};
static const struct cli_item analyze_env[] = {
    ENV_BACKEND,
    {"HVRUN_STDOUT, HVRUN_STDERR, HVRUN_STATUS",
     "Set for --fail-if's command: the run's output files and its exit "
     "status."},
    END_ITEMS,
};
static const struct cli_item analyze_files[] = {
    {"hvrun-analyze.schedule", "The shrunk schedule (-o FILE), in the "
                               "working directory."},
    END_ITEMS,
};
static const struct cli_item analyze_examples[] = {
    {"hvrun analyze -j 2 -- ./lost_update --racy",
     "Finds a seed whose schedule loses an update, and the one switch "
     "that does it."},
    {"hvrun run --schedule hvrun-analyze.schedule -- ./lost_update --racy",
     "Replays the shrunk schedule."},
    END_ITEMS,
};
static const struct cli_doc doc_analyze = {
    .name = "analyze",
    .summary = "search --chaos seeds for a schedule that changes the outcome",
    .synopsis = analyze_synopsis,
    .description = analyze_description,
    .opts = analyze_opts,
    .opts_note = "Other options before -- are hvrun run's (not --seed, "
                 "--chaos or --verify): see hvrun-run(1).",
    .exit_status = analyze_exit,
    .environment = analyze_env,
    .files = analyze_files,
    .examples = analyze_examples,
};

/* ---- record -------------------------------------------------------------- */

static const char *const record_synopsis[] = {
    "record [run options] [-o FILE] -- PROGRAM [ARGS...]",
    "record --verify [run options] -- PROGRAM [ARGS...]",
    "record list | rm ID | clean",
    NULL,
};
static const char *const record_description[] = {
    "Runs a program as hvrun run does and keeps the run in one checked "
    "file: what ran, its environment and stdin, its output, every event, "
    "and what it took from the host (the files it read, listings, stats, "
    "the host's time and randomness when not virtualised, the data of "
    "TCP, UDP and unix-socket exchanges with outside the run). hvrun "
    "replay runs it again from the recording, without the host's files or "
    "servers.",
    "record list prints each recording's id, exit status, backend and "
    "command line; record rm ID removes one; record clean removes them all "
    "(and what an interrupted recorder left).",
    NULL,
};
static const struct cli_opt record_opts[] = {
    {0, 'o', "output", "FILE", CLI_ARG_FILE, NULL,
     "Write the recording to FILE instead of the recordings directory."},
    {0, 0, "verify", NULL, CLI_ARG_NONE, NULL,
     "Record, then replay the recording at once and compare (exit 121 if "
     "the replay diverged)."},
    HELP_OPT,
    END_OPTS,
};
static const struct cli_item record_exit[] = {
    {"N", "The recorded program's exit status (as hvrun run)."},
    {"121", "With --verify: the replay differed from the recording."},
    {"2", "A usage error (record list, rm or clean with wrong arguments)."},
    EXIT_FAILURE_ITEM,
    END_ITEMS,
};
static const struct cli_item record_env[] = {
    ENV_BACKEND,
    ENV_RECORDINGS,
    END_ITEMS,
};
static const struct cli_item record_files[] = {
    FILE_RECORDINGS,
    END_ITEMS,
};
static const struct cli_item record_examples[] = {
    {"hvrun record -- curl -s http://localhost:8080/",
     "Records a run, the server's answers included."},
    {"hvrun record list", "The recordings, by id."},
    {"hvrun record -o build.hvrec --verify -- make",
     "Records into a file of one's choosing and checks that it replays."},
    END_ITEMS,
};
static const struct cli_doc doc_record = {
    .name = "record",
    .summary = "run and record (record list|rm ID|clean; record --verify)",
    .synopsis = record_synopsis,
    .description = record_description,
    .opts = record_opts,
    .opts_note = "Other options before -- are hvrun run's (see hvrun-run(1)), "
                 "but for --detlog, --schedule-out and --summary-json, "
                 "which a replay would write again.",
    .exit_status = record_exit,
    .environment = record_env,
    .files = record_files,
    .examples = record_examples,
};

/* ---- replay -------------------------------------------------------------- */

static const char *const replay_synopsis[] = {
    "replay [--backend kvm|ptrace] [--gdb PORT|unix:PATH [--gdb-at EVENT]] "
    "ID|FILE",
    NULL,
};
static const char *const replay_description[] = {
    "Runs a recording (an id from hvrun record list, or a file) again from "
    "what it recorded: the recorded environment, stdin, files and host "
    "values, not the caller's. As root it runs in a private tree of "
    "overlays, so it writes nothing to the host. It checks the replay "
    "event by event against the recorded detlog; the first event that "
    "differs stops it with one line naming that event.",
    NULL,
};
static const struct cli_opt replay_opts[] = {
    {0, 0, "backend", "kvm|ptrace", CLI_ARG_CHOICE, "kvm ptrace",
     "The backend of the replay (default: the recorded one)."},
    {0, 0, "gdb", "PORT|HOST:PORT|unix:PATH", CLI_ARG_WORD, NULL,
     "Serve gdb's remote protocol over the replay, stopped before the "
     "program's first instruction; gdb can go back (reverse-continue, "
     "reverse-stepi; docs/DEBUGGING.md)."},
    {0, 0, "gdb-at", "EVENT", CLI_ARG_WORD, NULL,
     "With --gdb: stop for gdb at that event instead."},
    HELP_OPT,
    END_OPTS,
};
static const struct cli_item replay_exit[] = {
    {"N", "Identical to the recording: the program's exit status."},
    {"121", "The replay diverged from the recording."},
    {"2", "A usage error."},
    EXIT_FAILURE_ITEM,
    END_ITEMS,
};
static const struct cli_item replay_env[] = {
    ENV_RECORDINGS,
    END_ITEMS,
};
static const struct cli_item replay_examples[] = {
    {"hvrun replay 20261205-041500-1234", "Replays a recording by id."},
    {"hvrun replay --backend ptrace build.hvrec",
     "Replays a recorded file on the ptrace backend."},
    END_ITEMS,
};
static const struct cli_doc doc_replay = {
    .name = "replay",
    .summary = "run a recording again, checked event by event",
    .synopsis = replay_synopsis,
    .description = replay_description,
    .opts = replay_opts,
    .exit_status = replay_exit,
    .environment = replay_env,
    .files = record_files,
    .examples = replay_examples,
};

/* ---- doctor -------------------------------------------------------------- */

static const char *const doctor_synopsis[] = {
    "doctor [--json]",
    NULL,
};
static const char *const doctor_description[] = {
    "Reports what this host offers hvrun, measured rather than guessed: it "
    "opens each backend, runs a probe guest and times its syscall round "
    "trips, and says per backend whether it is usable (or why not), the "
    "hypervisor kind, PMU, RDTSC trapping, CPUID control, what is "
    "controlled on this host and what leaks.",
    "--json prints the same report as one JSON object (its schema is in "
    "docs/DOCTOR.md of hvrun's documentation) so that CI can gate on it.",
    NULL,
};
static const struct cli_opt doctor_opts[] = {
    {0, 0, "json", NULL, CLI_ARG_NONE, NULL,
     "The report as one JSON object on stdout (schema hvrun-doctor/1)."},
    HELP_OPT,
    END_OPTS,
};
static const struct cli_item doctor_exit[] = {
    {"0", "A backend is usable."},
    {"125", "Neither backend is usable here."},
    END_ITEMS,
};
static const struct cli_item doctor_env[] = {
    ENV_CACHE,
    END_ITEMS,
};
static const struct cli_item doctor_files[] = {
    {"/dev/kvm", "The KVM device (group kvm)."},
    FILE_CACHE,
    END_ITEMS,
};
static const struct cli_item doctor_examples[] = {
    {"hvrun doctor", "The report, one line per item."},
    {"hvrun doctor --json | python3 -c 'import json,sys; "
     "sys.exit(not json.load(sys.stdin)[\"backends\"][\"kvm\"][\"usable\"])'",
     "Fails where the kvm backend is not usable."},
    END_ITEMS,
};
static const struct cli_doc doc_doctor = {
    .name = "doctor",
    .summary = "report what this host offers hvrun",
    .synopsis = doctor_synopsis,
    .description = doctor_description,
    .opts = doctor_opts,
    .exit_status = doctor_exit,
    .environment = doctor_env,
    .files = doctor_files,
    .examples = doctor_examples,
};

/* ---- detlog -------------------------------------------------------------- */

static const char *const detlog_synopsis[] = {
    "detlog FILE",
    "detlog FILE1 FILE2",
    NULL,
};
static const char *const detlog_description[] = {
    "Prints a run's event log (written by hvrun run --detlog FILE; with "
    "--verify, FILE and FILE.2), one event a line, or, given two, where "
    "the two runs part: the events before, and the first that differ.",
    NULL,
};
static const struct cli_opt detlog_opts[] = {
    HELP_OPT,
    END_OPTS,
};
static const struct cli_item detlog_exit[] = {
    {"0", "Printed; or the two logs are the same."},
    {"1", "The two logs part."},
    {"2", "A usage error."},
    {"125", "A file could not be read."},
    END_ITEMS,
};
static const struct cli_item detlog_env[] = {
    END_ITEMS,
};
static const struct cli_item detlog_files[] = {
    {"FILE, FILE.2", "Event logs written by hvrun run --detlog FILE."},
    END_ITEMS,
};
static const struct cli_item detlog_examples[] = {
    {"hvrun run --verify --detlog run.log -- ./prog; "
     "hvrun detlog run.log run.log.2",
     "Where --verify's two runs part."},
    END_ITEMS,
};
static const struct cli_doc doc_detlog = {
    .name = "detlog",
    .summary = "print a run's detlog (--detlog FILE), or where two part",
    .synopsis = detlog_synopsis,
    .description = detlog_description,
    .opts = detlog_opts,
    .exit_status = detlog_exit,
    .environment = detlog_env,
    .files = detlog_files,
    .examples = detlog_examples,
};

/* ---- syscalls ------------------------------------------------------------ */

static const char *const syscalls_synopsis[] = {
    "syscalls",
    NULL,
};
static const char *const syscalls_description[] = {
    "Prints every x86-64 Linux system call and how hvrun handles it "
    "(emulated, passed to the host, refused, with what determinism "
    "policy), as a markdown table; hvrun's documentation keeps it as "
    "docs/SYSCALLS.md.",
    NULL,
};
static const struct cli_opt syscalls_opts[] = {
    HELP_OPT,
    END_OPTS,
};
static const struct cli_item syscalls_exit[] = {
    {"0", "Printed."},
    {"2", "A usage error."},
    END_ITEMS,
};
static const struct cli_item syscalls_examples[] = {
    {"hvrun syscalls | grep -w openat", "How openat is handled."},
    END_ITEMS,
};
static const struct cli_doc doc_syscalls = {
    .name = "syscalls",
    .summary = "list every syscall and how hvrun handles it (markdown)",
    .synopsis = syscalls_synopsis,
    .description = syscalls_description,
    .opts = syscalls_opts,
    .exit_status = syscalls_exit,
    .environment = detlog_env,
    .files = detlog_env,
    .examples = syscalls_examples,
};

const struct cli_doc *const cli_docs[] = {
    &doc_hvrun,   &doc_run,    &doc_doctor, &doc_syscalls,
    &doc_analyze, &doc_detlog, &doc_record, &doc_replay,
};
const size_t cli_nr_docs = sizeof(cli_docs) / sizeof(cli_docs[0]);

const struct cli_doc *cli_doc_find(const char *name)
{
    for (size_t i = 0; i < cli_nr_docs; i++)
        if (!strcmp(cli_docs[i]->name, name))
            return cli_docs[i];
    return NULL;
}

size_t cli_doc_nr_opts(const struct cli_doc *doc)
{
    size_t n = 0;
    while (doc->opts[n].name || doc->opts[n].short_name)
        n++;
    return n;
}
