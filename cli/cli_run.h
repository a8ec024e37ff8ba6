/*
 * cli_run.h - what `hvrun run` shares between its files: the parsed
 * options, one run, --verify, and the summary.
 */
#ifndef CLI_RUN_H
#define CLI_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "det.h"
#include "det_sched.h"
#include "run_clock.h"

#define CLI_MAX_ENV_OVERRIDES 256
/* --verify found the two runs different (--repeat: some run differs). */
#define CLI_EXIT_NONDETERMINISTIC 120
#define CLI_MAX_REPEAT 10000
#define CLI_MAX_JOBS 64

struct proxy_file_tap;
struct det_tap;

struct run_options {
    const char *backend;
    bool verify;
    /* --repeat N: the run N times (verify's machinery), each compared with
     * the first; 0: --verify's two. */
    int repeat;
    /* -j J: --verify's/--repeat's runs J at a time (verify.c); 1: one
     * after another. */
    int jobs;
    const char *report_path;  /* --report FILE: JSON, or JUnit XML (.xml) */
    bool fail_closed;
    bool linger;           /* --linger (proxy_config.linger) */
    bool as_init;          /* --as-init (proxy_config.as_init) */
    bool no_seccomp;          /* --no-seccomp: no filter (cli/confine.c) */
    bool fs_policy;           /* --fs-policy: Landlock, host read-only */
    bool summary, summary_json;
    bool cpuid_rewrite;       /* --cpuid-rewrite */
    bool no_rdtsc_rewrite;    /* --no-rdtsc-rewrite */
    bool progress_count;      /* --progress software */
    uint64_t preempt_ms;      /* --preempt-ms; 0: never preempt */
    int log_level;
    struct det_config det;
    const char *tmp_dir;      /* --tmp; NULL: a fresh private /tmp */
    const char *base_env;     /* empty, minimal, host */
    const char *env_overrides[CLI_MAX_ENV_OVERRIDES];
    int nr_env_overrides;
    const char *cwd;
    const char *detlog_path;  /* --detlog FILE (with --verify: and FILE.2) */
    const char *schedule_path;     /* --schedule FILE */
    const char *schedule_out_path; /* --schedule-out FILE */
    const struct det_schedule *schedule; /* FILE's turns, loaded */
    FILE *schedule_out;            /* opened before the run */
    int detlog_fd, detlog2_fd; /* FILE (FILE.2) opened before the run, or -1 */
    char **argv;              /* the program and its arguments */
    char *const *env_exact;   /* a replay's recorded environment, or NULL */
    /* hvrun record: what it keeps of the host goes to files with this
     * prefix (tap.c); hvrun replay: it comes from them. NULL: neither. */
    const char *tap_record, *tap_replay;
    /* hvrun replay of a run stopped by a signal from outside: the run
     * stops the same way when it has made as many events (0: never). */
    int replay_stop_signal;
    uint64_t replay_stop_events, replay_stop_detlog;
    /* --verify, --repeat, record and replay: the files the run's stdin,
     * stdout and stderr are (verify.c), or NULL. */
    const char *capture_files[3];
    /* --gdb PORT|HOST:PORT|unix:PATH: serve gdb's remote protocol over
     * the run (cli/gdbserver.c); NULL: no debugger. */
    const char *gdb_spec;
    bool gdb_quiet; /* no "waiting for gdb" line (a replay says it) */
    uint64_t gdb_start_event; /* --gdb-start EVENT: gdb let in there */
    /* A run driven by --gdb's front end (gdbserver_reverse.c): its
     * gdbserver speaks on gdb_instance_fd, a connection already made. */
    bool gdb_instance;
    int gdb_instance_fd;
};

struct run_summary {
    int exit_code;
    uint64_t syscalls, unsupported;
    uint64_t exits, syscall_exits, exception_exits;
    uint64_t preemptions;
    uint64_t tasks; /* guest processes and threads, the first included */
    uint64_t reads[DET_SRC_COUNT];
    uint64_t detlog_events;
    uint64_t digest;
    double wall_s;
    bool rdtsc_trappable;     /* false: guest RDTSC reads the host TSC */
    bool cpuid_controlled;    /* false: guest CPUID shows the host CPU */
    /* "model" (the backend controls CPUID), "rewritten" (--cpuid-rewrite
     * on a host that cannot) or "host" (the guest sees the host's CPU). */
    char cpuid[16];
    /* The CPU the guest's CPUID showed: vendor, family/model/stepping and
     * feature words (a recording's "cpu-seen": code such as glibc's
     * string functions picks its loops by them). */
    char cpu_seen[160];
    uint64_t cpuid_sites, cpuid_traps, cpuid_patch_ns;
    bool rdtsc_rewritten;     /* the guest's RDTSC sites answered by hvrun */
    uint64_t tsc_sites, tsc_traps;
    uint64_t tsc_inline_sites; /* of them, read in the guest (no exit) */
    /* CPUID sites answered in the guest (host's leaf, model's APIC ids) */
    uint64_t cpuid_inline_sites;
    /* glibc's identity-call wrappers answered in the guest (getpid...) */
    uint64_t idcall_sites;
    /* --progress software: back edges rewritten, counter traps, units */
    bool progress_count;
    uint64_t progress_sites, progress_traps, progress_units;
    /* A signal from outside (SIGINT, SIGTERM, SIGHUP) stopped the run,
     * after this many guest events; 0: it was not stopped. */
    int stop_signal;
    uint64_t stop_events, stop_detlog;
    /* Host time (run_clock.h): from hvrun's start to the guest's first
     * instruction, the run loop, and the teardown after it; the phases. */
    uint64_t setup_ns, run_ns, teardown_ns;
    struct vmm_run_clock clock;  /* at the end */
    struct vmm_run_clock before; /* when the run loop began */
};

/* CLOCK_MONOTONIC when main() began (--summary's set-up time). */
extern uint64_t cli_started_ns;

/* Parses `hvrun run`'s options (argv[0] is the command's name) and sets
 * hvrun up as `run` does: capabilities, --detlog, --schedule, --cwd, the
 * program's path (path), signals, umask. 0, or the exit code to end
 * with (an error was printed). */
int cli_run_setup(int argc, char **argv, struct run_options *o, char *path,
                  size_t path_len);
/* What record keeps of the host (tap.c): detcore's tap and the files'
 * tap, writing to the files record_to.values and .files, or (record_to
 * NULL) handing out those of replay_from.values and .files. NULL with why
 * filled on failure. */
struct det_tap *cli_tap_open(const char *record_to, const char *replay_from,
                             char *why, size_t why_len);
/* Writes all of buf (EINTR and short writes gone on with); 0 or -1. */
int cli_write_all(int fd, const void *buf, size_t len);
/* The files' half of it, for proxy_config.file_tap. */
const struct proxy_file_tap *cli_tap_files(const struct det_tap *tap);
void cli_tap_close(struct det_tap *tap);
/* The guest's environment for o (free the array, not the strings). */
char **cli_build_env(const struct run_options *o);

/* Runs the program once in a fresh VM and environment. Returns hvrun's
 * exit code; fills sum; writes the detlog to detlog_path if given, and
 * with journal_dir journals there what the run does to the files
 * (syscall-proxy/fs/preserve.c), for cli_verify_undo. */
int cli_run_once(const struct run_options *o, const char *path,
                 const char *detlog_path, const char *journal_dir,
                 struct run_summary *sum);
/* Puts the files back as they were before the run journaled in
 * journal_dir (undo.c). Returns how many things it could not put back
 * (each named on stderr). */
int cli_verify_undo(const char *journal_dir);
/* One run in a child process with its streams captured, as --verify's
 * runs and `hvrun record`'s: stdin from a file, stdout, stderr, the
 * detlog and the summary into files of a scratch directory, and what it
 * does to files journaled (undo.c) in journal. */
struct cli_captured_run {
    char out[128], err[128], detlog[128], summary[128];
    /* Where the run writes stdout and stderr: the same names in every run
     * (a guest that stats or reads the link of its fd 1 sees the same
     * thing), moved to out and err once the run is over. */
    char live_out[128], live_err[128];
    char journal[128];
    int code;
    struct run_summary sum;
};
/* Run n of --verify or --repeat against run 1 (verify.c). */
struct cli_run_verdict {
    bool same;
    char streams[160];  /* what differs: " stdout (byte 5) exit status ..." */
    char detail[512];   /* the first detlog difference, or "" */
    uint64_t seed;      /* --seed + n - 1: the run's --chaos schedule seed */
};
/* --report FILE: the runs' verdicts as JSON, or JUnit XML for a name
 * ending in .xml (report.c); 0 or -errno. */
int cli_report_write(const char *path, const struct run_options *o,
                     const struct cli_captured_run *f,
                     const struct cli_run_verdict *v, int n);
/* The file names of run n (1-based) in dir. */
void cli_captured_names(struct cli_captured_run *f, const char *dir, int n);
/* Runs it (f->journal must exist as a directory); 0, or -errno if the
 * child could not be started. f->code is hvrun's exit code for it. */
int cli_capture_run(const struct run_options *o, const char *path,
                    const char *stdin_path, struct cli_captured_run *f);
/* SIGINT, SIGTERM and SIGHUP passed on to the captured run going on. */
void cli_capture_handlers(void);
/* Puts back what run n (0-based, for messages) did to the files. */
void cli_undo_captured(const struct cli_captured_run *f, int n);
/* A copy of hvrun's stdin in dir (path set), or /dev/null for a tty. */
int cli_save_stdin(const char *dir, char *path, size_t len);
/* Byte offset of the first difference of two files, -1 if they are the
 * same (0 if one cannot be read). */
long long cli_first_diff(const char *a, const char *b);
/* Copies a file's bytes to fd. */
void cli_pass_on(const char *file, int to);

/* A private tree for the rest of this process's life in which every
 * filesystem holding files is overlaid by a tmpfs, keep (a directory)
 * bound in from the host (isolate.c); the overlays in layered. Not root,
 * in a user namespace, the directories above cwd and each path of the
 * state file prestate (either may be NULL) writable there. 0, or -errno
 * with why. */
struct det_layered_dev;
#define CLI_MAX_LAYERS 512
int cli_isolate_writes(const char *keep, const char *prestate,
                       const char *cwd, struct det_layered_dev *layered,
                       int max_layered, int *nr_layered, char *why,
                       size_t len);
/* Whether that works here, tried in a child: 0, or -errno with why. */
int cli_isolate_probe(const char *keep, const char *prestate,
                      const char *cwd, char *why, size_t len);
/* The state before the run of each path the run's journal names, into
 * out_path (prestate.c); 0 or -errno. */
int cli_prestate_save(const char *journal_dir, const char *out_path);
/* Puts that state in place (only where the tree is overlaid); 0, or
 * -errno with why. */
int cli_prestate_apply(const char *frames_path, char *why, size_t len);
/* fn for each path named in the state file. */
void cli_prestate_each(const char *frames_path,
                       void (*fn)(void *ctx, const char *path), void *ctx);
/* Each directory with a recorded listing (tap.c's .dirs file), and cwd,
 * made where it is gone (only where the tree is overlaid), each noted in
 * the state file as one the run found. */
void cli_prestate_make_dirs(const char *frames_path, const char *dirs_path,
                            const char *cwd);
/* Each recorded file (tap.c's .files) gone from the host made there with
 * its recorded bytes and mode (only where the tree is overlaid), but for
 * what the run changed; after cli_prestate_make_dirs. */
void cli_prestate_make_files(const char *files_path);

/* Runs twice and compares (--verify). */
int cli_verify(const struct run_options *o, const char *path);
void cli_print_summary(FILE *f, const struct run_options *o,
                       const struct run_summary *s);

/* The one handler for SIGINT, SIGTERM and SIGHUP (the run's, or --verify's
 * that passes them on to the run going on). */
void cli_on_stop_signals(void (*handler)(int));

#endif
