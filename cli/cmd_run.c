/*
 * cmd_run.c - `hvrun run [options] -- PROGRAM [ARGS...]`: parse, validate,
 * build the guest's environment, run it once (or twice under --verify),
 * report its exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cli_run.h"
#include "confine.h"
#include "gdbserver.h"
#include "det.h"
#include "proxy.h"
#include "config.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "vfs.h"
#include "usage.h"

/* The default time slice of a thread that makes no syscall while another
 * thread could run (see --preempt-ms and docs/DETERMINISM.md). */
#define RUN_PREEMPT_MS 100

/* Fresh VMs kept ready in the background once a run forks or execs. */
#define RUN_VM_POOL 2

extern char **environ;

/* Option ids: usage.h's run table names them (CLI_RUN_OPT_*); shorter
 * here. */
enum {
    OPT_BACKEND = CLI_RUN_OPT_BACKEND, OPT_FAIL_CLOSED = CLI_RUN_OPT_FAIL_CLOSED,
    OPT_SUMMARY = CLI_RUN_OPT_SUMMARY, OPT_SUMMARY_JSON = CLI_RUN_OPT_SUMMARY_JSON,
    OPT_LOG = CLI_RUN_OPT_LOG, OPT_VERIFY = CLI_RUN_OPT_VERIFY,
    OPT_SEED = CLI_RUN_OPT_SEED, OPT_EPOCH = CLI_RUN_OPT_EPOCH,
    OPT_NO_TIME = CLI_RUN_OPT_NO_TIME, OPT_NO_RANDOM = CLI_RUN_OPT_NO_RANDOM,
    OPT_NO_METADATA = CLI_RUN_OPT_NO_METADATA, OPT_NO_HOST = CLI_RUN_OPT_NO_HOST,
    OPT_TMP = CLI_RUN_OPT_TMP, OPT_BASE_ENV = CLI_RUN_OPT_BASE_ENV,
    OPT_CWD = CLI_RUN_OPT_CWD, OPT_HOSTNAME = CLI_RUN_OPT_HOSTNAME,
    OPT_UID = CLI_RUN_OPT_UID, OPT_GID = CLI_RUN_OPT_GID,
    OPT_PREEMPT_MS = CLI_RUN_OPT_PREEMPT_MS, OPT_MEMORY = CLI_RUN_OPT_MEMORY,
    OPT_NO_SECCOMP = CLI_RUN_OPT_NO_SECCOMP, OPT_FS_POLICY = CLI_RUN_OPT_FS_POLICY,
    OPT_CPUID_REWRITE = CLI_RUN_OPT_CPUID_REWRITE,
    OPT_NO_RDTSC_REWRITE = CLI_RUN_OPT_NO_RDTSC_REWRITE,
    OPT_PROGRESS = CLI_RUN_OPT_PROGRESS,
    OPT_DETLOG = CLI_RUN_OPT_DETLOG, OPT_CHAOS = CLI_RUN_OPT_CHAOS,
    OPT_SCHEDULE = CLI_RUN_OPT_SCHEDULE,
    OPT_SCHEDULE_OUT = CLI_RUN_OPT_SCHEDULE_OUT, OPT_LINGER = CLI_RUN_OPT_LINGER,
    OPT_AS_INIT = CLI_RUN_OPT_AS_INIT, OPT_REPEAT = CLI_RUN_OPT_REPEAT,
    OPT_REPORT = CLI_RUN_OPT_REPORT, OPT_GDB = CLI_RUN_OPT_GDB,
    OPT_GDB_START = CLI_RUN_OPT_GDB_START,
};

#define RUN_MAX_OPTS 96

/* getopt_long's tables from usage.c's run table (the one list of run's
 * options, which --help and the man page print too): longopts ends with
 * a zero entry, shortopts is "+" and each one-letter option. */
static void run_getopt_tables(struct option *longopts, size_t max_long,
                              char *shortopts, size_t max_short)
{
    const struct cli_doc *doc = cli_doc_find("run");
    size_t nl = 0, ns = 0;
    shortopts[ns++] = '+';
    for (const struct cli_opt *o = doc->opts; o->name || o->short_name;
         o++) {
        int has_arg = o->arg ? required_argument : no_argument;
        if (o->name && nl + 1 < max_long)
            longopts[nl++] = (struct option){o->name, has_arg, NULL,
                                             o->id ? o->id : o->short_name};
        if (o->short_name && ns + 2 < max_short) {
            shortopts[ns++] = o->short_name;
            if (o->arg)
                shortopts[ns++] = ':';
        }
    }
    longopts[nl] = (struct option){NULL, 0, NULL, 0};
    shortopts[ns] = '\0';
}

static int parse_log_level(const char *s)
{
    if (!strcmp(s, "error") || !strcmp(s, "quiet"))
        return 0;
    if (!strcmp(s, "warn") || !strcmp(s, "info"))
        return 1;
    if (!strcmp(s, "debug") || !strcmp(s, "trace"))
        return 2;
    return -1;
}

/* --epoch: 2030-01-01T00:00:00Z (UTC; the Z is optional) or @SECONDS. */
static int parse_epoch(const char *s, int64_t *ns)
{
    char *end;
    if (s[0] == '@') {
        errno = 0;
        long long secs = strtoll(s + 1, &end, 10);
        if (errno || *end || end == s + 1)
            return -1;
        *ns = secs * 1000000000LL;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || (*end && strcmp(end, "Z") != 0))
        return -1;
    *ns = (int64_t)timegm(&tm) * 1000000000LL;
    return 0;
}

/* --memory: bytes with an optional K, M, G or T (powers of 1024; a
 * trailing "iB" or "B" is fine), between DET_MEM_MIN_BYTES and
 * DET_MEM_MAX_BYTES, a whole number of pages. */
static int parse_memory(const char *s, uint64_t *bytes)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
        end += strlen(end);
    if (*end || v > (DET_MEM_MAX_BYTES >> shift))
        return -1;
    v <<= shift;
    if (v < DET_MEM_MIN_BYTES || v % 4096)
        return -1;
    *bytes = v;
    return 0;
}

static int parse_seed(const char *s, uint64_t *seed)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || end == s || s[0] == '-')
        return -1;
    *seed = v;
    return 0;
}

static int add_env_override(struct run_options *o, const char *kv)
{
    if (o->nr_env_overrides >= CLI_MAX_ENV_OVERRIDES) {
        cli_error("-e: at most %d overrides", CLI_MAX_ENV_OVERRIDES);
        return -1;
    }
    if (!*kv || kv[0] == '=') {
        cli_error("-e '%s': expected NAME=VALUE or NAME", kv);
        return -1;
    }
    o->env_overrides[o->nr_env_overrides++] = kv;
    return 0;
}

/* Applies one option; -1 on a bad value (already reported). */
/* --progress's and HVRUN_PROGRESS's MODE. */
static int parse_progress(const char *mode, bool *on)
{
    if (strcmp(mode, "software") == 0)
        *on = true;
    else if (strcmp(mode, "none") == 0)
        *on = false;
    else
        return -1;
    return 0;
}

static int apply_option(struct run_options *o, int c, const char *arg)
{
    struct det_config *d = &o->det;
    switch (c) {
    case OPT_BACKEND: o->backend = arg; return 0;
    case OPT_VERIFY: o->verify = true; return 0;
    case OPT_SEED:
        if (parse_seed(arg, &d->seed) == 0)
            return 0;
        cli_error("--seed '%s': expected a non-negative integer", arg);
        return -1;
    case OPT_EPOCH:
        if (parse_epoch(arg, &d->epoch_ns) == 0)
            return 0;
        cli_error("--epoch '%s': expected YYYY-MM-DDTHH:MM:SSZ or @SECONDS",
                  arg);
        return -1;
    case OPT_NO_TIME: d->virtualize_time = false; return 0;
    case OPT_NO_RANDOM: d->virtualize_random = false; return 0;
    case OPT_NO_METADATA: d->virtualize_metadata = false; return 0;
    case OPT_NO_HOST: d->virtualize_host = false; return 0;
    case OPT_TMP: o->tmp_dir = arg; return 0;
    case OPT_CWD: o->cwd = arg; return 0;
    case OPT_HOSTNAME: d->hostname = arg; return 0;
    case OPT_UID:
    case OPT_GID: {
        uint64_t id;
        if (parse_seed(arg, &id) < 0 || id > 0xfffffffeULL) {
            cli_error("--%s '%s': expected a numeric id",
                      c == OPT_UID ? "uid" : "gid", arg);
            return -1;
        }
        *(c == OPT_UID ? &d->uid : &d->gid) = (uint32_t)id;
        return 0;
    }
    case 'e': return add_env_override(o, arg);
    case OPT_BASE_ENV:
        if (!strcmp(arg, "empty") || !strcmp(arg, "minimal") ||
            !strcmp(arg, "host")) {
            o->base_env = arg;
            return 0;
        }
        cli_error("--base-env '%s': expected empty, minimal or host", arg);
        return -1;
    case OPT_FAIL_CLOSED: o->fail_closed = true; return 0;
    case OPT_LINGER: o->linger = true; return 0;
    case OPT_AS_INIT: o->as_init = true; return 0;
    case OPT_REPEAT: {
        uint64_t n;
        if (parse_seed(arg, &n) == 0 && n >= 2 && n <= CLI_MAX_REPEAT) {
            o->repeat = (int)n;
            o->verify = true;
            return 0;
        }
        cli_error("--repeat '%s': expected a number of runs from 2 to %d", arg,
                  CLI_MAX_REPEAT);
        return -1;
    }
    case 'j': {
        uint64_t n;
        if (parse_seed(arg, &n) == 0 && n >= 1 && n <= CLI_MAX_JOBS) {
            o->jobs = (int)n;
            return 0;
        }
        cli_error("-j '%s': expected a number of runs at a time from 1 to "
                  "%d", arg, CLI_MAX_JOBS);
        return -1;
    }
    case OPT_REPORT: o->report_path = arg; return 0;
    case OPT_NO_SECCOMP: o->no_seccomp = true; return 0;
    case OPT_FS_POLICY: o->fs_policy = true; return 0;
    case OPT_PREEMPT_MS: {
        char *end;
        errno = 0;
        unsigned long long ms = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-' || ms > 3600000) {
            cli_error("--preempt-ms '%s': expected milliseconds, 0 to 3600000",
                      arg);
            return -1;
        }
        o->preempt_ms = ms;
        return 0;
    }
    case OPT_CPUID_REWRITE: o->cpuid_rewrite = true; return 0;
    case OPT_NO_RDTSC_REWRITE: o->no_rdtsc_rewrite = true; return 0;
    case OPT_PROGRESS:
        if (parse_progress(arg, &o->progress_count) == 0)
            return 0;
        cli_error("--progress '%s': expected software or none", arg);
        return -1;
    case OPT_MEMORY:
        if (parse_memory(arg, &d->mem_total_bytes) == 0)
            return 0;
        cli_error("--memory '%s': expected a size such as 512M or 2G, "
                  "64M to 256G", arg);
        return -1;
    case OPT_SUMMARY: o->summary = true; return 0;
    case OPT_SUMMARY_JSON: o->summary_json = true; return 0;
    case OPT_DETLOG: o->detlog_path = arg; return 0;
    case OPT_CHAOS: d->chaos = true; return 0;
    case OPT_SCHEDULE: o->schedule_path = arg; return 0;
    case OPT_SCHEDULE_OUT: o->schedule_out_path = arg; return 0;
    case OPT_GDB: o->gdb_spec = arg; return 0;
    case OPT_GDB_START: {
        char *end;
        errno = 0;
        o->gdb_start_event = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-') {
            cli_error("--gdb-start '%s': expected an event number (gdb's "
                      "`monitor when`)", arg);
            return -1;
        }
        return 0;
    }
    case OPT_LOG:
        o->log_level = parse_log_level(arg);
        if (o->log_level >= 0)
            return 0;
        cli_error("--log: unknown level '%s' (error, warn, debug)", arg);
        return -1;
    default:
        cli_error("run: bad option; see 'hvrun run --help'");
        return -1;
    }
}

static int parse_run_options(int argc, char **argv, struct run_options *o)
{
    memset(o, 0, sizeof(*o));
    /* HVRUN_BACKEND: the default for a host without /dev/kvm, set once
     * (a CI runner that is itself a VM); --backend still decides. */
    const char *env_backend = getenv("HVRUN_BACKEND");
    o->backend = env_backend && env_backend[0] ? env_backend : "kvm";
    o->base_env = "host";
    o->log_level = 1;
    o->jobs = 1;
    o->preempt_ms = RUN_PREEMPT_MS;
    /* Progress is counted in software by default: without a counter a
     * thread computing between syscalls is cut by a host-timed slice,
     * and under load ordinary multithreaded programs did not verify.
     * (No host's PMU drives the counter yet: where one does, it is to
     * be the default there.) HVRUN_PROGRESS sets it for a whole suite. */
    o->progress_count = true;
    const char *env_progress = getenv("HVRUN_PROGRESS");
    if (env_progress && env_progress[0] &&
        parse_progress(env_progress, &o->progress_count) < 0) {
        cli_error("HVRUN_PROGRESS '%s': expected software or none",
                  env_progress);
        return -1;
    }
    o->detlog_fd = o->detlog2_fd = -1;
    det_config_defaults(&o->det);
    struct option longopts[RUN_MAX_OPTS];
    char shortopts[32];
    run_getopt_tables(longopts, RUN_MAX_OPTS, shortopts, sizeof(shortopts));
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (c == 'h') {
            cli_command_usage(stdout, "run");
            exit(0);
        }
        if (apply_option(o, c, optarg) < 0)
            return -1;
    }
    if (optind >= argc) {
        cli_error("run: no program given; usage: hvrun run [options] -- "
                  "PROGRAM [ARGS...]");
        return -1;
    }
    if (o->jobs > 1 && !o->verify) {
        cli_error("-j: with --verify or --repeat N (the runs it runs side "
                  "by side)");
        return -1;
    }
    if (o->gdb_start_event && !o->gdb_spec) {
        cli_error("--gdb-start: with --gdb PORT");
        return -1;
    }
    if (o->gdb_spec && o->verify) {
        cli_error("--gdb: not with --verify or --repeat (one run is "
                  "debugged; run it again with --verify after)");
        return -1;
    }
    if (o->report_path && !o->verify) {
        cli_error("--report: with --verify or --repeat N (a report compares "
                  "runs)");
        return -1;
    }
    enum vmm_backend_kind kind;
    if (vmm_backend_parse(o->backend, &kind) < 0) {
        cli_error("%s%s: unknown backend (kvm or ptrace)",
                  o->backend == env_backend ? "HVRUN_BACKEND=" : "--backend ",
                  o->backend);
        return -1;
    }
    o->argv = argv + optind;
    return 0;
}

/* execvp's search: a name without '/' is looked up in PATH. */
static int find_program(const char *name, char *out, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(out, len, "%s", name);
        return access(name, F_OK) == 0 ? 0 : -errno;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int err = -ENOENT;
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", name);
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            err = -EACCES;
        }
        p = e ? e + 1 : p + n;
    }
    return err;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int exit_code_of(int status)
{
    if (status < 0)
        return CLI_EXIT_FAILURE;
    if ((status & 0x7f) == 0)
        return (status >> 8) & 0xff;
    return 128 + (status & 0x7f);
}

/* Counts of the whole process tree: the first process's VM, plus the
 * totals of every VM already gone. */
static void collect_summary(struct run_summary *s, struct proxy_process *p,
                            struct vmm_vm *vm, struct det_state *det,
                            const struct proxy_totals *t)
{
    struct vmm_stats st;
    vmm_vm_get_stats(vm, &st);
    s->syscalls = t->syscalls;
    s->unsupported = t->unsupported;
    s->exits = st.exits + t->exits;
    s->syscall_exits = st.syscall_exits + t->syscall_exits;
    s->exception_exits = st.exception_exits + t->exception_exits;
    s->preemptions = t->preemptions;
    s->tasks = 1 + t->tasks_made;
    s->cpuid_sites = t->cpuid_sites;
    s->cpuid_traps = t->cpuid_traps;
    s->cpuid_patch_ns = t->cpuid_patch_ns;
    s->tsc_sites = t->tsc_sites;
    s->tsc_inline_sites = t->tsc_inline_sites;
    s->cpuid_inline_sites = t->cpuid_inline_sites;
    s->idcall_sites = t->idcall_sites;
    s->tsc_traps = t->tsc_traps;
    s->progress_sites = t->progress_sites;
    s->progress_traps = t->progress_traps;
    s->progress_units = t->progress_units;
    s->detlog_events = det->log.n;
    s->stop_signal = proxy_stop_signal;
    s->stop_events = proxy_stop_events;
    s->stop_detlog = proxy_stop_detlog;
    s->digest = det_log_digest(det);
    for (int i = 0; i < DET_SRC_COUNT; i++)
        s->reads[i] = det->reads[i];
}

/* The host's "NAME=VALUE" entry for NAME, or NULL (for `-e NAME`). */
static const char *host_env_entry(const char *name, size_t len)
{
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e;
    return NULL;
}

/* The guest's environment: the base (--base-env), then each -e; a
 * replay's is the recorded one, as it was. */
char **cli_build_env(const struct run_options *o)
{
    if (o->env_exact) {
        size_t n = 0;
        while (o->env_exact[n])
            n++;
        char **env = calloc(n + 1, sizeof(char *));
        for (size_t i = 0; env && i < n; i++)
            env[i] = o->env_exact[i];
        return env;
    }
    /* What a test needs and nothing of the host's: a fixed home, locale,
     * timezone (else /etc/localtime decides) and the run's private /tmp. */
    static const char *const minimal[] = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME=/", "LANG=C.UTF-8", "TZ=UTC", "TMPDIR=/tmp", NULL};
    size_t n = 0;
    char *const *base = !strcmp(o->base_env, "host")      ? environ
                        : !strcmp(o->base_env, "minimal") ? (char **)minimal
                                                          : NULL;
    while (base && base[n])
        n++;
    char **env = calloc(n + (size_t)o->nr_env_overrides + 1, sizeof(char *));
    if (!env)
        return NULL;
    for (size_t i = 0; i < n; i++)
        env[i] = base[i];
    for (int k = 0; k < o->nr_env_overrides; k++) {
        const char *kv = o->env_overrides[k];
        const char *eq = strchr(kv, '=');
        size_t name_len = eq ? (size_t)(eq - kv) : strlen(kv);
        size_t i = 0;
        while (i < n && !(strncmp(env[i], kv, name_len) == 0 &&
                          env[i][name_len] == '='))
            i++;
        const char *val = eq ? kv : host_env_entry(kv, name_len);
        if (i < n && !val) {
            env[i] = env[--n];
        } else if (val) {
            env[i] = (char *)val;
            if (i == n)
                n++;
        }
        env[n] = NULL;
    }
    return env;
}

/* --fs-policy's writable places: the working directory, the private /tmp
 * (or --tmp DIR), and --verify's scratch directory (the detlog, the
 * summary and the journal of what the run did to files live there). */
static int apply_fs_policy(const struct proxy_process *p,
                           const char *detlog_path, const char *journal_dir,
                           char *why, size_t len)
{
    char scratch[4096] = "";
    if (detlog_path) {
        snprintf(scratch, sizeof(scratch), "%s", detlog_path);
        char *slash = strrchr(scratch, '/');
        if (slash)
            *slash = '\0';
    }
    /* An owned private /tmp lives in a scratch directory with its lock
     * (syscall-proxy/fs/scratch.c), removed whole at the end; made now,
     * not at the guest's first use, since the rules name it. */
    int rc = proxy_tmp_make_now();
    if (rc < 0) {
        snprintf(why, len, "--fs-policy: making the private /tmp %.200s: %s",
                 p->fs.tmp_top, strerror(-rc));
        return -1;
    }
    const char *tmp = p->fs.tmp_owned ? p->fs.tmp_top : p->fs.tmp_host;
    const char *writable[] = {".", tmp, scratch, journal_dir};
    return confine_fs_policy(writable, sizeof(writable) / sizeof(writable[0]),
                             p->fs.tmp_owned ? p->fs.tmp_top : NULL, why, len);
}

/*
 * What the guest is told its CPU is (/proc/cpuinfo, AT_HWCAP): the CPU its
 * CPUID instruction shows, which is the model where the backend controls
 * CPUID or where hvrun rewrites CPUID into traps, the host's otherwise.
 */
static void set_cpu_view(struct proxy_process *p, struct vmm_host *host,
                         bool cpuid_rewrite)
{
    if (cpuid_rewrite) {
        vmm_host_model_identity(host, &p->cpu, &p->hwcap, &p->hwcap2);
        return;
    }
    p->hwcap = vmm_host_hwcap(host);
    p->hwcap2 = vmm_host_hwcap2(host);
    vmm_host_cpu_identity(host, &p->cpu);
}

static void describe_cpu_seen(char *buf, size_t len,
                              const struct vmm_cpu_identity *c)
{
    snprintf(buf, len,
             "%s %u/%u/%u leaf1 %08x:%08x leaf7 %08x:%08x:%08x ext %08x:%08x",
             c->vendor, c->family, c->model, c->stepping, c->leaf1_ecx,
             c->leaf1_edx, c->leaf7_ebx, c->leaf7_ecx, c->leaf7_edx,
             c->ext1_ecx, c->ext1_edx);
}


/* HVRUN_LOOP_COPIES=0: counted loops turn in the text, as under --gdb
 * (tests/progress compares the two). */
static bool no_loop_copies(void)
{
    const char *v = getenv("HVRUN_LOOP_COPIES");
    return v && !strcmp(v, "0");
}

int cli_run_once(const struct run_options *o, const char *path,
                 const char *detlog_path, const char *journal_dir,
                 struct run_summary *sum)
{
    /* --gdb: the front end owns gdb's connection and runs the program in
     * instances it can start again (reverse execution). */
    if (o->gdb_spec && !o->gdb_instance)
        return cli_gdb_front_end(o, path, detlog_path, journal_dir, sum);
    char why[512];
    double t0 = now_seconds();
    struct vmm_host *host = NULL;
    struct vmm_vm *vm = NULL;
    struct proxy_process *p = NULL;
    struct det_state det;
    struct proxy_totals totals = {0};
    bool det_ready = false;
    struct det_tap *tap = NULL;
    char **env = NULL;
    struct gdb_server *gdb = NULL;
    int code = CLI_EXIT_FAILURE;
    enum vmm_backend_kind kind = VMM_BACKEND_KVM;
    (void)vmm_backend_parse(o->backend, &kind); /* checked by the parser */
    if (vmm_host_open_backend(kind, &host, why, sizeof(why)) < 0) {
        cli_error("%s", why);
        return CLI_EXIT_FAILURE;
    }
    /* One VM for a fork and one for the exec that usually follows. */
    vmm_host_set_vm_pool(host, RUN_VM_POOL);
    /* With logical time a slice only bounds a thread's turn: timed on its
     * own CPU, a loaded host does not cut it sooner (fewer host-timed
     * cuts under load, and no timer call at each stop under ptrace). */
    vmm_host_slice_on_guest_cpu(host, o->det.virtualize_time);
    if (vmm_vm_create(host, &vm, why, sizeof(why)) < 0) {
        cli_error("creating the guest VM: %s", why);
        goto out;
    }
    if (det_init(&det, &o->det) < 0) {
        cli_error("detcore: out of memory");
        goto out;
    }
    det_ready = true;
    det.schedule = o->schedule;
    if ((o->tap_record || o->tap_replay) &&
        !(tap = cli_tap_open(o->tap_record, o->tap_replay, why,
                             sizeof(why)))) {
        cli_error("host values: %s", why);
        goto out;
    }
    det.tap = tap;
    struct vmm_host_info hi;
    vmm_host_get_info(host, &hi);
    struct proxy_config pc = {.preempt_ns = o->preempt_ms * 1000000ULL,
                              .fail_closed = o->fail_closed,
                              .linger = o->linger,
                              .as_init = o->as_init,
                              .log_level = o->log_level, .log = stderr,
                              .cpuid_rewrite =
                                  o->cpuid_rewrite && !hi.cpuid_control,
                              /* Where CPUID runs on the host CPU (the
                               * ptrace stub, a host process; AMD
                               * kvm_pvm, without CPUID faulting) it names
                               * the APIC id of whichever CPU the pin
                               * chose. (Intel kvm_pvm answers CPUID: the
                               * vCPU's ids, with the host's features.) */
                              .cpuid_topology = !hi.cpuid_control &&
                                                !o->cpuid_rewrite &&
                                                !hi.cpuid_answered,
                              /* A CPUID in a VM exits (~19 us on the
                               * AMD kvm_pvm host) to be answered from
                               * the VM's entries: a stub reads the same
                               * answers from [vvar] instead. Not the
                               * ptrace stub's (a host process). */
                              .cpuid_table = kind != VMM_BACKEND_PTRACE &&
                                             (hi.cpuid_control ||
                                              hi.cpuid_answered) &&
                                             !o->cpuid_rewrite,
                              /* No backend traps RDPID. */
                              .rdpid_rewrite = true,
                              /* ptrace's stubs make RDTSC fault (no
                               * rewriting needed) where the host honours
                               * PR_SET_TSC; kvm's cannot (CR4.TSD on
                               * VMX/SVM is not wired): rewrite there. */
                              .rdtsc_rewrite = o->det.virtualize_time &&
                                               !o->no_rdtsc_rewrite &&
                                               (kind != VMM_BACKEND_PTRACE ||
                                                !hi.rdtsc_trappable),
                              /* Either backend: the usual form of a
                               * read costs no exit. */
                              .rdtsc_inline = o->det.virtualize_time &&
                                              !o->no_rdtsc_rewrite,
                              .progress_count = o->progress_count,
                              .no_loop_copies = no_loop_copies(),
                              .schedule_out = o->schedule_out,
                              .stop_signal = o->replay_stop_signal,
                              .stop_events = o->replay_stop_events,
                              .stop_detlog = o->replay_stop_detlog,
                              .capture_files = {o->capture_files[0],
                                                o->capture_files[1],
                                                o->capture_files[2]},
                              .file_tap = cli_tap_files(tap)};
    /* --gdb: gdb connects before the program is loaded, and gets it at
     * its first instruction (world.c's first turn). */
    if (o->gdb_instance) {
        if (cli_gdb_open_fd(o->gdb_instance_fd, o->gdb_start_event, &gdb) <
            0) {
            cli_error("--gdb: out of memory");
            goto out;
        }
        pc.debugger = cli_gdb_debugger(gdb);
    } else if (o->gdb_spec) {
        if (cli_gdb_open(o->gdb_spec, o->gdb_quiet, o->gdb_start_event,
                         &gdb, why, sizeof(why)) < 0) {
            cli_error("%s", why);
            goto out;
        }
        pc.debugger = cli_gdb_debugger(gdb);
    }
    int rc = proxy_process_create(&p, vm, &det, &pc);
    if (rc < 0) {
        cli_error("creating the guest process: %s", strerror(-rc));
        goto out;
    }
    set_cpu_view(p, host, pc.cpuid_rewrite);
    p->totals = &totals;
    if (journal_dir && !(totals.preserve = proxy_preserve_open(journal_dir))) {
        cli_error("--verify: %s: cannot journal the run's file changes",
                  journal_dir);
        goto out;
    }
    rc = proxy_tmp_setup(p, o->tmp_dir, why, sizeof(why));
    if (rc < 0) {
        cli_error("%s", why);
        goto out;
    }
    if ((rc = proxy_tmp_expose(p, ".")) < 0) {
        cli_error("the working directory is the host's /tmp, which the "
                  "guest sees as a private /tmp; run from another directory, "
                  "use --cwd DIR, or share the host's with --tmp /tmp");
        goto out;
    }
    proxy_tmp_expose(p, path);
    if (!(env = cli_build_env(o))) {
        cli_error("building the environment: out of memory");
        goto out;
    }
    rc = proxy_exec_load(p, path, NULL, o->argv, env, why, sizeof(why));
    if (rc < 0) {
        cli_error("%s", why);
        code = rc == -ENOENT ? CLI_EXIT_NOTFOUND : CLI_EXIT_NOEXEC;
        goto out;
    }
    proxy_vfs_learn_host_mounts(); /* its calls are not the filter's */
    /* Set up: from here on hvrun only serves the guest (cli/confine.c). */
    if (o->fs_policy &&
        (apply_fs_policy(p, detlog_path, journal_dir, why, sizeof(why)) < 0 ||
         vmm_host_fs_restricted(host, why, sizeof(why)) < 0)) {
        cli_error("%s", why);
        goto out;
    }
    /* The backend's own host calls join the list (the ptrace backend's
     * tracing: its stubs are started by a process it forked before). */
    size_t n_backend;
    const int *backend_calls = vmm_host_run_syscalls(host, &n_backend);
    if (!o->no_seccomp &&
        confine_install_seccomp(backend_calls, n_backend, why,
                                sizeof(why)) < 0) {
        cli_error("%s (--no-seccomp runs without it)", why);
        goto out;
    }
    vmm_host_confined(host);
    struct vmm_run_clock before = vmm_run_clock;
    uint64_t run_t = vmm_clock_now();
    int status = proxy_run(p, host);
    code = exit_code_of(status);
    cli_gdb_close(gdb, status < 0 ? SIGKILL : status);
    gdb = NULL;
    uint64_t run_end = vmm_clock_now();
    if (sum) {
        sum->before = before;
        sum->setup_ns = run_t - cli_started_ns;
        sum->run_ns = run_end - run_t;
    }
    vm = p->vm; /* execve replaces the first process's VM */
    if (sum) {
        sum->rdtsc_trappable = hi.rdtsc_trappable;
        sum->rdtsc_rewritten = pc.rdtsc_rewrite;
        sum->progress_count = pc.progress_count;
        sum->cpuid_controlled = hi.cpuid_control;
        snprintf(sum->cpuid, sizeof(sum->cpuid), "%s",
                 hi.cpuid_control ? "model"
                 : pc.cpuid_rewrite ? "rewritten"
                                    : "host");
        describe_cpu_seen(sum->cpu_seen, sizeof(sum->cpu_seen), &p->cpu);
        collect_summary(sum, p, vm, &det, &totals);
        sum->wall_s = now_seconds() - t0;
        sum->exit_code = code;
    }
    if (detlog_path && det_log_save(&det, detlog_path) < 0)
        cli_error("%s: cannot write the detlog", detlog_path);
    /* --detlog FILE, opened before the run: the guest's confinement
     * (--fs-policy) need not let anything write where FILE is. */
    int rc_log;
    if (o->detlog_fd >= 0 && (rc_log = det_log_write(&det, o->detlog_fd)) < 0)
        cli_error("--detlog %s: %s", o->detlog_path, strerror(-rc_log));
out:
    cli_gdb_close(gdb, CLI_EXIT_FAILURE << 8);
    proxy_preserve_close(totals.preserve);
    free(env);
    proxy_process_destroy(p);
    if (det_ready)
        det_destroy(&det);
    cli_tap_close(tap);
    vmm_vm_destroy(vm);
    vmm_host_close(host);
    if (sum && sum->run_ns) {
        sum->teardown_ns = vmm_clock_now() - (cli_started_ns + sum->setup_ns +
                                              sum->run_ns);
        sum->clock = vmm_run_clock;
    }
    return code;
}

static void on_stop_signal(int sig) { proxy_stop_signal = sig; }

void cli_on_stop_signals(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* SIGINT/SIGTERM/SIGHUP end the run cleanly: KVM_RUN and the scheduler's
 * waits return EINTR, every guest is dropped, the private /tmp removed. */
static void install_stop_handlers(void)
{
    cli_on_stop_signals(on_stop_signal);
}

/* --schedule FILE, read and checked before the run. */
static int load_schedule(const char *path, struct det_schedule *s)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        cli_error("--schedule %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 65536, len = 0;
    char *text = malloc(cap);
    while (text) {
        size_t n = fread(text + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
        if (len + 1 == cap) {
            char *g = cap < (64u << 20) ? realloc(text, cap * 2) : NULL;
            if (!g) {
                free(text);
                text = NULL;
                break;
            }
            text = g;
            cap *= 2;
        }
    }
    fclose(f);
    if (!text) {
        cli_error("--schedule %s: too large", path);
        return -1;
    }
    text[len] = '\0';
    char why[160];
    int rc = det_schedule_parse(text, s, why, sizeof(why));
    free(text);
    if (rc < 0)
        cli_error("--schedule %s: %s", path, why);
    return rc;
}

/* --detlog FILE (and FILE.2 for --verify's second run), opened where the
 * user named them, before --cwd and before any confinement. */
static int open_detlogs(struct run_options *o)
{
    char second[4096];
    int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    o->detlog_fd = open(o->detlog_path, flags, 0644);
    if (o->detlog_fd < 0) {
        cli_error("--detlog %s: %s", o->detlog_path, strerror(errno));
        return -1;
    }
    if (!o->verify)
        return 0;
    snprintf(second, sizeof(second), "%s.2", o->detlog_path);
    o->detlog2_fd = open(second, flags, 0644);
    if (o->detlog2_fd < 0) {
        cli_error("--detlog %s: %s", second, strerror(errno));
        return -1;
    }
    return 0;
}

int cli_run_setup(int argc, char **argv, struct run_options *op,
                  char *path, size_t path_len)
{
    struct run_options o;
    if (parse_run_options(argc, argv, &o) < 0)
        return CLI_EXIT_FAILURE;
    char why[256];
    if (confine_drop_capabilities(why, sizeof(why)) < 0) {
        cli_error("%s", why);
        return CLI_EXIT_FAILURE;
    }
    if (o.detlog_path && open_detlogs(&o) < 0)
        return CLI_EXIT_FAILURE;
    static struct det_schedule schedule;
    if (o.schedule_path && load_schedule(o.schedule_path, &schedule) < 0)
        return CLI_EXIT_FAILURE;
    if (o.schedule_path)
        o.schedule = &schedule;
    if (o.schedule_out_path) {
        if (o.verify) {
            cli_error("--schedule-out: not with --verify (write it from one "
                      "run; --schedule FILE --verify checks it)");
            return CLI_EXIT_FAILURE;
        }
        o.schedule_out = fopen(o.schedule_out_path, "we");
        if (!o.schedule_out) {
            cli_error("--schedule-out %s: %s", o.schedule_out_path,
                      strerror(errno));
            return CLI_EXIT_FAILURE;
        }
        fprintf(o.schedule_out, "# hvrun schedule: after thread TID's N-th "
                                "event (syscall or TSC read), TID2 runs\n");
    }
    if (o.cwd && chdir(o.cwd) < 0) {
        cli_error("--cwd %s: %s", o.cwd, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    int rc = find_program(o.argv[0], path, path_len);
    if (rc < 0) {
        cli_error("%s: %s", o.argv[0],
                  rc == -ENOENT ? (strchr(o.argv[0], '/')
                                       ? "no such file"
                                       : "command not found in PATH")
                                : strerror(-rc));
        return rc == -ENOENT ? CLI_EXIT_NOTFOUND : CLI_EXIT_NOEXEC;
    }
    /* A guest writing to a closed pipe must get EPIPE (and its SIGPIPE),
     * not kill hvrun. Guest modes come from the guest umask alone. */
    signal(SIGPIPE, SIG_IGN);
    install_stop_handlers();
    proxy_scratch_sweep(); /* what runs killed by SIGKILL left in /tmp */
    umask(0);
    *op = o;
    return 0;
}

int cli_cmd_run(int argc, char **argv)
{
    struct run_options o;
    char path[4096];
    int rc = cli_run_setup(argc, argv, &o, path, sizeof(path));
    if (rc)
        return rc;
    if (o.verify)
        return cli_verify(&o, path);
    struct run_summary sum;
    memset(&sum, 0, sizeof(sum));
    int code = cli_run_once(&o, path, NULL, NULL, &sum);
    if (o.summary || o.summary_json)
        cli_print_summary(stderr, &o, &sum);
    return code;
}
