/*
 * cmd_record.c - `hvrun record` and `hvrun replay` (docs/RECORDING.md).
 *
 *   hvrun record [run options] [-o FILE] -- PROG [ARGS...]
 *   hvrun record --verify [run options] -- PROG [ARGS...]
 *   hvrun record list | rm ID | clean
 *   hvrun replay [--backend kvm|ptrace] ID|FILE  (default: the recorded one)
 *
 * What this stage records: what ran (argv, the environment the guest got,
 * the working directory, the run's options, backend, CPU, what the host
 * did not let hvrun control), the stdin the run read, the bytes it wrote
 * to stdout and stderr, a copy of each file it opened read-only or
 * execve loaded, the directory listings, stats, symlink targets and
 * access checks of paths it made, the
 * host's time and randomness where they were not virtualised (tap.c),
 * every event of its detlog and its exit status, and what each path the
 * run changed was before it (prestate.c). A replay runs the program
 * again from the recording (the recorded environment, stdin, files and
 * host values, not the caller's), as root in a private tree of overlays
 * that keeps its writes off the host's files and starts from the
 * recorded state of what the run changed (isolate.c; elsewhere against
 * the host's files, its changes undone afterwards, undo.c), and checks
 * it event by event against the recorded detlog: the first event that
 * differs stops the check with one line naming it (its number, thread,
 * syscall, and what differed), and the replay exits 121. What TCP,
 * AF_UNIX stream and UDP peers outside the run sent is (net/outside.c,
 * outside_udp.c); data from connections accepted from outside, pipes and
 * FIFOs to outside the run is not in the recording yet: a replay that
 * needed it is reported as diverged, never passed as a good one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "det.h"
#include "proxy.h"
#include "kernel.h"
#include "fs.h"
#include "recording.h"

#ifndef HVRUN_VERSION
#define HVRUN_VERSION "0.0.0"
#endif

/* A replay's events differ from the recording's. */
#define CLI_EXIT_REPLAY_DIVERGED 121
#define REC_SUFFIX ".hvrec"
#define CHUNK 65536

/* How the files of a run's scratch directory frame each event's data in the file it writes. */
enum framing {
    RAW,         /* the bytes only (stdin, stdout, stderr) */
    VALUE_FRAME, /* tap.c's values: source byte, u32 length, bytes */
    FILE_FRAME,  /* tap.c's files: u64 length, bytes */
    DIR_FRAME,   /* tap.c's listings: u64 length, bytes */
    STAT_FRAME,  /* tap.c's path stats: u64 length, bytes */
    QUERY_FRAME, /* tap.c's readlink/access answers: u64 length, bytes */
    PRESTATE_FRAME, /* prestate.c's: u64 length, bytes */
    LINK_FRAME,  /* tap.c's outside connections: u64 length, bytes */
};

/* The file of the run's scratch directory each framing is read from and
 * the recording's event kind for it. */
static const struct {
    const char *suffix;
    enum det_rec_kind kind;
} framed_files[] = {
    [VALUE_FRAME] = {".values", DET_REC_VALUE},
    [FILE_FRAME] = {".files", DET_REC_FILE},
    [DIR_FRAME] = {".dirs", DET_REC_DIR},
    [STAT_FRAME] = {".stats", DET_REC_STAT},
    [QUERY_FRAME] = {".queries", DET_REC_QUERY},
    [PRESTATE_FRAME] = {".prestate", DET_REC_PRESTATE},
    [LINK_FRAME] = {".links", DET_REC_LINK},
};

/* ---- where recordings live ----------------------------------------------- */

static int mkdir_p(char *path)
{
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        int rc = mkdir(path, 0755);
        *s = '/';
        if (rc < 0 && errno != EEXIST)
            return -errno;
    }
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* $XDG_DATA_HOME/hvrun/recordings, else ~/.local/share/hvrun/recordings. */
static int recordings_dir(char *out, size_t len, bool create)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(out, len, "%s/hvrun/recordings", xdg);
    else if (home && home[0] == '/')
        snprintf(out, len, "%s/.local/share/hvrun/recordings", home);
    else {
        cli_error("record: neither XDG_DATA_HOME nor HOME is set (use -o "
                  "FILE)");
        return -1;
    }
    int rc = create ? mkdir_p(out) : 0;
    if (rc < 0) {
        cli_error("record: %s: %s", out, strerror(-rc));
        return -1;
    }
    return 0;
}

/* A new id: the host's date and time and hvrun's pid. */
static void new_id(char *id, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
    snprintf(id, len, "%s-%d", when, (int)getpid());
}

/* An id names DIR/ID.hvrec; anything with a '/' or the suffix is a path,
 * and so is a plain name that is no id but a file here (`record -o x`
 * then `replay x`). */
static int resolve(const char *arg, char *path, size_t len)
{
    size_t n = strlen(arg);
    if (strchr(arg, '/') ||
        (n > strlen(REC_SUFFIX) &&
         !strcmp(arg + n - strlen(REC_SUFFIX), REC_SUFFIX))) {
        snprintf(path, len, "%s", arg);
        return 0;
    }
    char dir[4096];
    if (recordings_dir(dir, sizeof(dir), false) < 0)
        return -1;
    if ((size_t)snprintf(path, len, "%s/%s%s", dir, arg, REC_SUFFIX) >= len) {
        cli_error("%s: name too long", arg);
        return -1;
    }
    if (access(path, F_OK) < 0 && access(arg, F_OK) == 0)
        snprintf(path, len, "%s", arg);
    return 0;
}

/* ---- the command line ---------------------------------------------------- */

struct record_args {
    const char *out;    /* -o FILE */
    bool verify;        /* --verify: record, replay, compare */
    int nr_options;     /* the run options, as given */
    char **options;
    char **run_argv;    /* {"record", options..., "--", PROG, ARGS...} */
    int run_argc;
};

/* Options a replay could not honour as recorded: they name files the
 * recorded run wrote. */
static bool refused_option(const char *a)
{
    static const char *const refused[] = {"--detlog", "--schedule-out",
                                          "--summary-json"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        size_t n = strlen(refused[i]);
        if (!strncmp(a, refused[i], n) && (a[n] == '\0' || a[n] == '='))
            return true;
    }
    return false;
}

/* Splits record's own -o/--verify from the run's options. */
static int parse_record_args(int argc, char **argv, struct record_args *ra)
{
    memset(ra, 0, sizeof(*ra));
    ra->options = calloc((size_t)argc + 3, sizeof(char *));
    ra->run_argv = calloc((size_t)argc + 4, sizeof(char *));
    if (!ra->options || !ra->run_argv)
        return -1;
    ra->run_argv[ra->run_argc++] = "record";
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) {
                cli_error("record: %s needs a file name", argv[i]);
                return -1;
            }
            ra->out = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--verify")) {
            ra->verify = true;
            continue;
        }
        if (!strncmp(argv[i], "--gdb", 5)) {
            cli_error("record: %s: debug the replay instead (hvrun replay "
                      "--gdb PORT ID): gdb's session is no part of the "
                      "recording", argv[i]);
            return -1;
        }
        if (refused_option(argv[i])) {
            cli_error("record: %s is not recorded (a replay would write it "
                      "again)", argv[i]);
            return -1;
        }
        ra->options[ra->nr_options++] = argv[i];
        ra->run_argv[ra->run_argc++] = argv[i];
    }
    if (i >= argc || i + 1 >= argc) {
        cli_error("record: usage: hvrun record [run options] [-o FILE] -- "
                  "PROGRAM [ARGS...] (the -- is needed)");
        return -1;
    }
    /* How progress is counted (HVRUN_PROGRESS, else the default,
     * software): the recording says so, so that its replay counts the
     * same whatever the replayer's environment and version (replay starts
     * from --progress none: a recording older than the default's switch
     * was made with it). */
    const char *env_progress = getenv("HVRUN_PROGRESS");
    bool given = false;
    for (int k = 0; k < ra->nr_options; k++)
        given |= !strncmp(ra->options[k], "--progress", 10);
    if (!env_progress || !env_progress[0])
        env_progress = "software";
    if (!given) {
        ra->options[ra->nr_options++] = "--progress";
        ra->options[ra->nr_options++] = (char *)env_progress;
        ra->run_argv[ra->run_argc++] = "--progress";
        ra->run_argv[ra->run_argc++] = (char *)env_progress;
    }
    for (; i < argc; i++)
        ra->run_argv[ra->run_argc++] = argv[i];
    return 0;
}

/* ---- writing a recording ------------------------------------------------- */

static int append_file(struct det_rec_writer *w, const char *path,
                       uint8_t kind, int64_t value)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    uint8_t *buf = malloc(CHUNK);
    int rc = buf ? 0 : -ENOMEM;
    while (rc == 0) {
        ssize_t n = read(fd, buf, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : 0;
            break;
        }
        struct det_rec_event ev = {.kind = kind, .nr = 0xffff, .value = value,
                                   .len = (uint32_t)n, .data = buf};
        rc = det_rec_append(w, &ev);
    }
    free(buf);
    close(fd);
    return rc;
}

static int read_full(int fd, void *buf, size_t len)
{
    uint8_t *b = buf;
    while (len > 0) {
        ssize_t n = read(fd, b, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -EIO;
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The tap's files (tap.c) PREFIX.values (source byte, u32 length, bytes)
 * and PREFIX.files (u64 length, bytes): one event per record. */
static int append_framed(struct det_rec_writer *w, const char *prefix,
                         enum framing framing)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s%s", prefix, framed_files[framing].suffix);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    size_t hl = framing == VALUE_FRAME ? 5 : 8;
    uint8_t head[8], *buf = NULL;
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, head, hl);
        if (n == 0)
            break;
        uint64_t len = 0;
        if (framing == VALUE_FRAME) {
            uint32_t l32;
            memcpy(&l32, head + 1, 4);
            len = l32;
        } else {
            memcpy(&len, head, 8);
        }
        uint8_t *g = n == (ssize_t)hl && len <= (1ULL << 30)
                         ? realloc(buf, len ? len : 1)
                         : NULL;
        if (!g || read_full(fd, g, (size_t)len) < 0) {
            rc = -EIO;
            buf = g ? g : buf;
            break;
        }
        buf = g;
        struct det_rec_event ev = {
            .kind = (uint8_t)framed_files[framing].kind,
            .nr = 0xffff, .value = framing == VALUE_FRAME ? head[0] : 0,
            .len = (uint32_t)len, .data = buf};
        if ((rc = det_rec_append(w, &ev)) < 0)
            break;
    }
    free(buf);
    close(fd);
    return rc;
}

/* A signal from outside that stopped the run: value = the signal, data =
 * u64 the guest events made before it, u64 the detlog's records then
 * (recordings before these have only the first). */
static int append_stop(struct det_rec_writer *w, const struct run_summary *s)
{
    if (!s->stop_signal)
        return 0;
    uint64_t at[2] = {s->stop_events, s->stop_detlog};
    struct det_rec_event ev = {.kind = DET_REC_SIGNAL, .nr = 0xffff,
                               .value = s->stop_signal, .len = sizeof(at),
                               .data = (const uint8_t *)at};
    return det_rec_append(w, &ev);
}

/* Replaying: where the recorded run was stopped, if it was. */
static void recorded_stop(const struct det_recording *r, struct run_options *o)
{
    for (size_t i = 0; i < r->nr_events; i++) {
        const struct det_rec_event *e = &r->events[i];
        if (e->kind != DET_REC_SIGNAL || (e->len != 8 && e->len != 16) ||
            e->value <= 0 || e->value >= 65)
            continue;
        o->replay_stop_signal = (int)e->value;
        memcpy(&o->replay_stop_events, e->data, 8);
        o->replay_stop_detlog = 0;
        if (e->len == 16)
            memcpy(&o->replay_stop_detlog, e->data + 8, 8);
    }
}

static int append_detlog(struct det_rec_writer *w, const char *path)
{
    struct det_record *recs = NULL;
    size_t n = 0;
    int rc = det_log_load(path, &recs, &n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct det_rec_event ev = {.kind = DET_REC_DETLOG, .tid = recs[i].tid,
                                   .nr = recs[i].nr, .value = recs[i].value,
                                   .len = sizeof(recs[i]),
                                   .data = (const uint8_t *)&recs[i]};
        rc = det_rec_append(w, &ev);
    }
    free(recs);
    return rc;
}

/* What of the host the guest saw uncontrolled (summary.c's words). */
static void host_gaps(const struct run_summary *s, const char **gaps)
{
    int n = 0;
    if (strcmp(s->cpuid, "model") != 0)
        gaps[n++] = "cpuid";
    if (!s->rdtsc_trappable && !s->rdtsc_rewritten)
        gaps[n++] = "rdtsc";
    gaps[n] = NULL;
}

static int write_recording(const char *path, const struct record_args *ra,
                           const struct run_options *o, const char *cwd,
                           const char *stdin_path,
                           const struct cli_captured_run *run,
                           const char *host)
{
    char **env = cli_build_env(o);
    if (!env)
        return -ENOMEM;
    const char *gaps[4];
    host_gaps(&run->sum, gaps);
    struct det_rec_header h = {
        .hvrun_version = HVRUN_VERSION,
        .backend = o->backend,
        .cpu = run->sum.cpuid,
        .cpu_seen = run->sum.cpu_seen,
        .cwd = cwd,
        .argv = (const char *const *)o->argv,
        .env = (const char *const *)env,
        .options = (const char *const *)ra->options,
        .host_gaps = gaps,
    };
    struct det_rec_writer *w;
    int rc = det_rec_create(&w, path, &h);
    free(env);
    if (rc < 0)
        return rc;
    if ((rc = append_file(w, stdin_path, DET_REC_INPUT, 0)) == 0 &&
        (rc = append_file(w, run->out, DET_REC_OUTPUT, 1)) == 0 &&
        (rc = append_file(w, run->err, DET_REC_OUTPUT, 2)) == 0 &&
        (rc = append_framed(w, host, VALUE_FRAME)) == 0 &&
        (rc = append_framed(w, host, FILE_FRAME)) == 0 &&
        (rc = append_framed(w, host, DIR_FRAME)) == 0 &&
        (rc = append_framed(w, host, STAT_FRAME)) == 0 &&
        (rc = append_framed(w, host, QUERY_FRAME)) == 0 &&
        (rc = append_framed(w, host, PRESTATE_FRAME)) == 0 &&
        (rc = append_framed(w, host, LINK_FRAME)) == 0 &&
        (rc = append_stop(w, &run->sum)) == 0 &&
        (rc = append_detlog(w, run->detlog)) == 0)
        return det_rec_finish(w, run->code, run->sum.digest);
    det_rec_abandon(w);
    return rc;
}

/* ---- replaying ----------------------------------------------------------- */

/* The recorded events of one kind (and, RAW, one value) into a file. */
static int extract(const struct det_recording *r, uint8_t kind, int64_t value,
                   enum framing framing, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->nr_events; i++) {
        const struct det_rec_event *e = &r->events[i];
        if (e->kind != kind || (framing == RAW && e->value != value))
            continue;
        uint8_t head[8];
        size_t hl = 0;
        if (framing == VALUE_FRAME) {
            head[0] = (uint8_t)e->value;
            memcpy(head + 1, &e->len, 4);
            hl = 5;
        } else if (framing != RAW) {
            uint64_t len = e->len;
            memcpy(head, &len, 8);
            hl = 8;
        }
        if (cli_write_all(fd, head, hl) < 0 ||
            cli_write_all(fd, e->data, e->len) < 0)
            rc = -EIO;
    }
    close(fd);
    return rc;
}

static void describe(char *buf, size_t len, const struct det_record *e)
{
    if (e->source == DET_SRC_SYSCALL)
        snprintf(buf, len, "result %lld", (long long)e->value);
    else
        snprintf(buf, len, "%s value %lld (hash %016llx)",
                 det_source_name((enum det_source)e->source),
                 (long long)e->value, (unsigned long long)e->hash);
}

/* The replay's detlog against the recorded one: true if they agree, else
 * msg names the first event that differs. */
static bool same_events(const struct det_recording *r, const char *detlog,
                        size_t *count, char *msg, size_t len)
{
    struct det_record *got = NULL;
    size_t ng = 0, k = 0;
    if (det_log_load(detlog, &got, &ng) < 0) {
        snprintf(msg, len, "the replay left no detlog");
        return false;
    }
    bool same = true;
    for (size_t i = 0; same && i < r->nr_events; i++) {
        const struct det_rec_event *e = &r->events[i];
        if (e->kind != DET_REC_DETLOG)
            continue;
        struct det_record want;
        memcpy(&want, e->data, sizeof(want));
        if (k >= ng) {
            snprintf(msg, len, "the replay ended after %zu events; the "
                               "recording has more", ng);
            same = false;
        } else if (memcmp(&want, &got[k], sizeof(want)) != 0) {
            char a[128], b[128];
            describe(a, sizeof(a), &want);
            describe(b, sizeof(b), &got[k]);
            snprintf(msg, len,
                     "event #%zu, thread %u, syscall %s%s: recorded %s, "
                     "replayed %s%s",
                     k, want.tid,
                     want.nr == 0xffff ? "-" : proxy_syscall_name(want.nr),
                     want.tid != got[k].tid ? " (thread differs)" : "", a, b,
                     want.source == DET_SRC_EXTERNAL ||
                             got[k].source == DET_SRC_EXTERNAL
                         ? " (a host-timed preemption or host wait fell "
                           "elsewhere)"
                         : "");
            same = false;
        } else {
            k++;
        }
    }
    if (same && k < ng) {
        snprintf(msg, len, "the replay went on past the recording's %zu "
                           "events",
                 k);
        same = false;
    }
    *count = k;
    free(got);
    return same;
}

/* The run options a recording was made with, parsed as `run` parses them
 * (hvrun set up as for it), from the recorded working directory. */
static const char *replay_backend; /* replay --backend B, or NULL */
static const char *replay_gdb;     /* replay --gdb SPEC, or NULL */
static const char *replay_gdb_at;  /* replay --gdb-at EVENT, or NULL */

static int setup_from(const struct det_recording *r, struct run_options *o,
                      char *path, size_t path_len, char ***argv_out)
{
    int n_opt = 0, n_arg = 0;
    while (det_rec_list(r, "options", n_opt))
        n_opt++;
    while (det_rec_list(r, "argv", n_arg))
        n_arg++;
    int n_env = 0;
    while (det_rec_list(r, "env", n_env))
        n_env++;
    char **argv = calloc((size_t)(n_opt + n_arg + 7), sizeof(char *));
    char **env = calloc((size_t)n_env + 1, sizeof(char *));
    if (!argv || !env || n_arg == 0) {
        free(argv);
        free(env);
        cli_error("replay: %s", n_arg ? "out of memory" : "no program");
        return CLI_EXIT_FAILURE;
    }
    int k = 0;
    argv[k++] = "replay";
    /* As recorded: the recording's own --progress, if any, comes after
     * (and not the replayer's HVRUN_PROGRESS). */
    argv[k++] = "--progress";
    argv[k++] = "none";
    for (int i = 0; i < n_opt; i++)
        argv[k++] = (char *)det_rec_list(r, "options", i);
    if (replay_backend) { /* the last --backend is the one that counts */
        argv[k++] = "--backend";
        argv[k++] = (char *)replay_backend;
    }
    argv[k++] = "--";
    for (int i = 0; i < n_arg; i++)
        argv[k++] = (char *)det_rec_list(r, "argv", i);
    for (int i = 0; i < n_env; i++)
        env[i] = (char *)det_rec_list(r, "env", i);
    const char *cwd = det_rec_string(r, "cwd");
    if (!cwd || chdir(cwd) < 0) {
        cli_error("replay: the recorded working directory %s: %s",
                  cwd ? cwd : "(none)", cwd ? strerror(errno) : "missing");
        free(argv);
        free(env);
        return CLI_EXIT_FAILURE;
    }
    int rc = cli_run_setup(k, argv, o, path, path_len);
    if (rc) {
        free(argv);
        free(env);
        return rc;
    }
    o->env_exact = env;
    *argv_out = argv;
    return 0;
}

/*
 * A replay that writes nothing to the host's files: this process (and
 * the run it starts) in a private tree (isolate.c) set to the recorded
 * state of what the run changed (prestate.c). False (with one line)
 * where that cannot be: the replay's writes are then undone after it,
 * and the files it opens for writing are the host's.
 */
static struct det_layered_dev replay_layers[CLI_MAX_LAYERS];
static int nr_replay_layers;

static bool isolate_replay(const char *dir, const char *prestate,
                           const char *dirs, const char *files,
                           const char *cwd)
{
    char why[512] = "";
    if (cli_isolate_probe(dir, prestate, cwd, why, sizeof(why)) < 0 ||
        cli_isolate_writes(dir, prestate, cwd, replay_layers, CLI_MAX_LAYERS,
                           &nr_replay_layers, why, sizeof(why)) < 0) {
        cli_error("replay: the replay's writes cannot be kept off the "
                  "host's files (%s); they are undone after it", why);
        (void)unlink(prestate); /* the host's files are what it reads */
        return false;
    }
    if (cli_prestate_apply(prestate, why, sizeof(why)) < 0)
        cli_error("replay: the recorded files could not all be put in place "
                  "(%s): the replay may diverge", why);
    cli_prestate_make_dirs(prestate, dirs, cwd); /* gone from the host */
    cli_prestate_make_files(files);
    return true;
}

/*
 * After a divergence: whether the guest's CPU was another than the
 * recording's (replayed under the other backend on a host where neither
 * controls CPUID the same way: kvm_pvm shows the model's identity with
 * the host's features, ptrace the host's CPU). Code that reads CPUID
 * picks other loops (glibc's string functions), so counted progress and
 * the logical time it moves differ from the first such loop on.
 */
static void say_cpu_differs(const struct det_recording *r,
                            const struct run_summary *replayed)
{
    const char *seen = det_rec_string(r, "cpu-seen");
    if (!seen || !seen[0] || !strcmp(seen, replayed->cpu_seen))
        return;
    fprintf(stderr,
            "hvrun: replay: the guest's CPU differed from the recording's "
            "(recorded under %s: %s; replayed: %s): code that reads CPUID "
            "may have run other code; a recording made with --cpuid-rewrite "
            "shows the guest the same model under either backend\n",
            det_rec_string(r, "backend"), seen, replayed->cpu_seen);
}

/*
 * Replays a loaded recording in dir; its file changes are undone after
 * unless keep (record --verify: the replay's stand for the recorded
 * run's, as --verify's second run's do). Passes the replay's stdout and
 * stderr on when pass_on, and returns the program's exit status, or
 * CLI_EXIT_REPLAY_DIVERGED with one line.
 */
static int replay_loaded(const struct det_recording *r, const char *dir,
                         bool pass_on, bool keep)
{
    struct run_options o;
    memset(&o, 0, sizeof(o));
    char path[4096], **argv = NULL;
    int code = 0;
    char in[160], rec_out[160], rec_err[160], host[160], values[200],
        files[200], dirs[200], stats[200], queries[200], prestate[200],
        links[200];
    snprintf(in, sizeof(in), "%s/replay-stdin", dir);
    snprintf(host, sizeof(host), "%s/replay-host", dir);
    snprintf(values, sizeof(values), "%s.values", host);
    snprintf(files, sizeof(files), "%s.files", host);
    snprintf(dirs, sizeof(dirs), "%s.dirs", host);
    snprintf(stats, sizeof(stats), "%s.stats", host);
    snprintf(queries, sizeof(queries), "%s.queries", host);
    snprintf(prestate, sizeof(prestate), "%s.prestate", host);
    snprintf(links, sizeof(links), "%s.links", host);
    snprintf(rec_out, sizeof(rec_out), "%s/recorded-stdout", dir);
    snprintf(rec_err, sizeof(rec_err), "%s/recorded-stderr", dir);
    struct cli_captured_run run;
    memset(&run, 0, sizeof(run));
    cli_captured_names(&run, dir, 9);
    int rc;
    if ((rc = extract(r, DET_REC_INPUT, 0, RAW, in)) < 0 ||
        (rc = extract(r, DET_REC_OUTPUT, 1, RAW, rec_out)) < 0 ||
        (rc = extract(r, DET_REC_OUTPUT, 2, RAW, rec_err)) < 0 ||
        (rc = extract(r, DET_REC_VALUE, 0, VALUE_FRAME, values)) < 0 ||
        (rc = extract(r, DET_REC_FILE, 0, FILE_FRAME, files)) < 0 ||
        (rc = extract(r, DET_REC_DIR, 0, DIR_FRAME, dirs)) < 0 ||
        (rc = extract(r, DET_REC_STAT, 0, STAT_FRAME, stats)) < 0 ||
        (rc = extract(r, DET_REC_QUERY, 0, QUERY_FRAME, queries)) < 0 ||
        (rc = extract(r, DET_REC_PRESTATE, 0, PRESTATE_FRAME, prestate)) < 0 ||
        (rc = extract(r, DET_REC_LINK, 0, LINK_FRAME, links)) < 0) {
        cli_error("replay: %s: %s", dir, strerror(-rc));
        code = CLI_EXIT_FAILURE;
        goto out;
    }
    /* Before the run is set up: that drops what making the tree needs. */
    bool isolated = !keep && isolate_replay(dir, prestate, dirs, files,
                                            det_rec_string(r, "cwd"));
    if ((code = setup_from(r, &o, path, sizeof(path), &argv)) != 0)
        goto out;
    o.tap_record = NULL;
    o.tap_replay = host;
    /* --gdb: served from the replay's own process; its "waiting" line
     * is said here, since the replay's stderr is compared. */
    if (replay_gdb) {
        o.gdb_spec = replay_gdb;
        o.gdb_quiet = true;
        o.gdb_start_event =
            replay_gdb_at ? strtoull(replay_gdb_at, NULL, 10) : 0;
        fprintf(stderr, "hvrun: replay: waiting for gdb on %s (target "
                        "extended-remote)%s%s\n", replay_gdb,
                replay_gdb_at ? " at event " : "",
                replay_gdb_at ? replay_gdb_at : "");
    }
    recorded_stop(r, &o);
    if (isolated) {
        o.det.layered = replay_layers;
        o.det.nr_layered = nr_replay_layers;
    }
    if (mkdir(run.journal, 0700) < 0 ||
        cli_capture_run(&o, path, in, &run) < 0) {
        cli_error("replay: %s", strerror(errno));
        code = CLI_EXIT_FAILURE;
        goto out;
    }
    if (!keep && !isolated)
        cli_undo_captured(&run, 0);
    if (pass_on) {
        cli_pass_on(run.out, 1);
        cli_pass_on(run.err, 2);
    }
    char msg[512] = "";
    size_t events = 0;
    bool same = same_events(r, run.detlog, &events, msg, sizeof(msg));
    long long out_at = cli_first_diff(rec_out, run.out);
    long long err_at = cli_first_diff(rec_err, run.err);
    if (same && out_at >= 0)
        snprintf(msg, sizeof(msg), "stdout differs at byte %lld", out_at);
    else if (same && err_at >= 0)
        snprintf(msg, sizeof(msg), "stderr differs at byte %lld", err_at);
    else if (same && run.code != r->exit_status)
        snprintf(msg, sizeof(msg), "exit status %d, recorded %d", run.code,
                 r->exit_status);
    if (msg[0]) {
        fprintf(stderr, "hvrun: replay: diverged from the recording: %s\n",
                msg);
        say_cpu_differs(r, &run.sum);
        code = CLI_EXIT_REPLAY_DIVERGED;
    } else {
        fprintf(stderr,
                "hvrun: replay: identical to the recording (%zu events, "
                "stdout, stderr, exit status %d)\n",
                events, run.code);
        code = run.code;
    }
out:
    free(argv);
    free((void *)o.env_exact);
    return code;
}

static int load_or_say(const char *path, struct det_recording *r)
{
    char why[256];
    if (det_rec_load(path, r, why, sizeof(why)) < 0) {
        cli_error("replay: %s: %s", path, why);
        return CLI_EXIT_FAILURE;
    }
    return 0;
}

/* ---- the subcommands ----------------------------------------------------- */

static int record_parsed(struct record_args *ra)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd))) {
        cli_error("record: the working directory: %s", strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    char file[4096], id[64] = "";
    if (ra->out) {
        snprintf(file, sizeof(file), "%s", ra->out);
        if (ra->out[0] != '/' && !getcwd(file, sizeof(file)))
            return CLI_EXIT_FAILURE;
        if (ra->out[0] != '/')
            snprintf(file + strlen(file), sizeof(file) - strlen(file), "/%s",
                     ra->out);
    } else {
        char dir[3900];
        if (recordings_dir(dir, sizeof(dir), true) < 0)
            return CLI_EXIT_FAILURE;
        new_id(id, sizeof(id));
        snprintf(file, sizeof(file), "%s/%s%s", dir, id, REC_SUFFIX);
    }
    struct run_options o;
    char path[4096];
    int code = cli_run_setup(ra->run_argc, ra->run_argv, &o, path, sizeof(path));
    if (code)
        return code;
    cli_capture_handlers();
    char dir[] = "/tmp/hvrun-record.XXXXXX";
    int lock;
    int rc = proxy_scratch_make(dir, &lock);
    if (rc < 0) {
        cli_error("record: %s: %s", dir, strerror(-rc));
        return CLI_EXIT_FAILURE;
    }
    struct cli_captured_run run;
    memset(&run, 0, sizeof(run));
    cli_captured_names(&run, dir, 1);
    char in[160], host[160];
    snprintf(host, sizeof(host), "%s/host", dir);
    o.tap_record = host;
    if (cli_save_stdin(dir, in, sizeof(in)) < 0 ||
        mkdir(run.journal, 0700) < 0 ||
        cli_capture_run(&o, path, in, &run) < 0) {
        if (proxy_stop_signal)
            goto interrupted;
        cli_error("record: %s", strerror(errno));
        code = CLI_EXIT_FAILURE;
        goto out;
    }
    cli_pass_on(run.out, 1);
    cli_pass_on(run.err, 2);
    code = run.code;
    /* Stopped by a signal from outside once the run had started: that is
     * recorded too, and a replay stops at the same point. */
    if (proxy_stop_signal && !run.sum.stop_signal)
        goto interrupted;
    if (access(run.detlog, F_OK) < 0) {
        cli_error("record: the run did not start; nothing recorded");
        goto out;
    }
    char prestate[200];
    snprintf(prestate, sizeof(prestate), "%s.prestate", host);
    if ((rc = cli_prestate_save(run.journal, prestate)) < 0)
        cli_error("record: what the run changed was before it: %s; a "
                  "replay starts from the files as they are then",
                  strerror(-rc));
    rc = write_recording(file, ra, &o, cwd, in, &run, host);
    if (rc < 0) {
        cli_error("record: %s: %s", file, strerror(-rc));
        code = CLI_EXIT_FAILURE;
        goto out;
    }
    fprintf(stderr, "hvrun: record: %s%s%s\n", id[0] ? id : "",
            id[0] ? " " : "", file);
    if (run.sum.stop_signal)
        fprintf(stderr, "hvrun: record: the run was stopped by signal %d "
                "after %llu events; a replay stops there too\n",
                run.sum.stop_signal,
                (unsigned long long)run.sum.stop_events);
    if (ra->verify && !run.sum.stop_signal) {
        /* The replay starts from the files as the recorded run found
         * them; its changes stay, as --verify's second run's do. */
        struct det_recording r;
        cli_undo_captured(&run, 0);
        if ((code = load_or_say(file, &r)) == 0) {
            int got = replay_loaded(&r, dir, false, true);
            det_rec_free(&r);
            code = got == CLI_EXIT_REPLAY_DIVERGED ? got : run.code;
        }
    }
out:
    proxy_scratch_remove(dir, lock);
    return code;
interrupted:
    cli_error("record: interrupted by signal %d; nothing recorded",
              (int)proxy_stop_signal);
    code = 128 + proxy_stop_signal;
    goto out;
}

static int record_run(int argc, char **argv)
{
    struct record_args ra;
    int code = parse_record_args(argc, argv, &ra) < 0 ? CLI_EXIT_FAILURE
                                                       : record_parsed(&ra);
    free(ra.options); /* every way out, a run that did not start too */
    free(ra.run_argv);
    return code;
}

static int record_list(void)
{
    char dir[4096];
    if (recordings_dir(dir, sizeof(dir), false) < 0)
        return CLI_EXIT_FAILURE;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : (cli_error("record list: %s: %s", dir,
                                                strerror(errno)),
                                      CLI_EXIT_FAILURE);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name), s = strlen(REC_SUFFIX);
        if (n <= s || strcmp(e->d_name + n - s, REC_SUFFIX))
            continue;
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct det_recording r;
        char why[256];
        printf("%.*s", (int)(n - s), e->d_name);
        if (det_rec_load(path, &r, why, sizeof(why)) < 0) {
            printf("  (unreadable: %s)\n", why);
            continue;
        }
        printf("  exit %d  %s ", r.exit_status, det_rec_string(&r, "backend"));
        for (int i = 0; det_rec_list(&r, "argv", i); i++)
            printf(" %s", det_rec_list(&r, "argv", i));
        printf("\n");
        det_rec_free(&r);
    }
    closedir(d);
    return 0;
}

static int record_rm(const char *id)
{
    char path[4096];
    if (strchr(id, '/')) {
        cli_error("record rm: %s: an id from 'hvrun record list'", id);
        return CLI_EXIT_FAILURE;
    }
    if (resolve(id, path, sizeof(path)) < 0)
        return CLI_EXIT_FAILURE;
    if (unlink(path) < 0) {
        cli_error("record rm: %s: %s", id,
                  errno == ENOENT ? "no such recording" : strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    return 0;
}

/* Every recording, and what an interrupted recorder left (.tmp). */
static int record_clean(void)
{
    char dir[4096];
    if (recordings_dir(dir, sizeof(dir), false) < 0)
        return CLI_EXIT_FAILURE;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : CLI_EXIT_FAILURE;
    int removed = 0, code = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *suffixes[] = {REC_SUFFIX, REC_SUFFIX ".tmp"};
        size_t n = strlen(e->d_name);
        for (int k = 0; k < 2; k++) {
            size_t s = strlen(suffixes[k]);
            if (n <= s || strcmp(e->d_name + n - s, suffixes[k]))
                continue;
            if (unlinkat(dirfd(d), e->d_name, 0) == 0)
                removed++;
            else
                code = CLI_EXIT_FAILURE;
            break;
        }
    }
    closedir(d);
    printf("removed %d recording file%s\n", removed, removed == 1 ? "" : "s");
    return code;
}

static void record_usage(FILE *f) { cli_command_usage(f, "record"); }

int cli_cmd_record(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        record_usage(stdout);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "list"))
        return record_list();
    if (argc == 3 && !strcmp(argv[1], "rm"))
        return record_rm(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "clean"))
        return record_clean();
    if (argc < 2 || !strcmp(argv[1], "list") || !strcmp(argv[1], "rm") ||
        !strcmp(argv[1], "clean")) {
        record_usage(stderr);
        return 2;
    }
    return record_run(argc, argv);
}

int cli_cmd_replay(int argc, char **argv)
{
    while (argc >= 4 && (!strcmp(argv[1], "--backend") ||
                         !strcmp(argv[1], "--gdb") ||
                         !strcmp(argv[1], "--gdb-at"))) {
        if (!strcmp(argv[1], "--backend"))
            replay_backend = argv[2];
        else if (!strcmp(argv[1], "--gdb"))
            replay_gdb = argv[2];
        else
            replay_gdb_at = argv[2];
        argv[2] = argv[0];
        argv += 2;
        argc -= 2;
    }
    if (argc != 2 || argv[1][0] == '-') {
        bool help = argc == 2 && (!strcmp(argv[1], "-h") ||
                                  !strcmp(argv[1], "--help"));
        cli_command_usage(help ? stdout : stderr, "replay");
        return help ? 0 : 2;
    }
    char file[4096];
    if (resolve(argv[1], file, sizeof(file)) < 0)
        return CLI_EXIT_FAILURE;
    struct det_recording r;
    int code = load_or_say(file, &r);
    if (code)
        return code;
    char dir[] = "/tmp/hvrun-replay.XXXXXX";
    int lock;
    int rc = proxy_scratch_make(dir, &lock);
    cli_capture_handlers();
    if (rc < 0) {
        cli_error("replay: %s: %s", dir, strerror(-rc));
        det_rec_free(&r);
        return CLI_EXIT_FAILURE;
    }
    /* In the replay's private tree dir is a mount point (bound in from
     * the host), so its rmdir there is EBUSY: the host's /tmp, held from
     * before, removes it. */
    int host_tmp = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
    code = replay_loaded(&r, dir, true, false);
    proxy_scratch_remove(dir, lock);
    if (host_tmp >= 0) {
        (void)unlinkat(host_tmp, dir + strlen("/tmp/"), AT_REMOVEDIR);
        close(host_tmp);
    }
    det_rec_free(&r);
    return code;
}
