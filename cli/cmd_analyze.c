/*
 * cmd_analyze.c - `hvrun analyze [options] [run options] -- PROG ARGS`:
 * search for a schedule that changes a program's outcome.
 *
 * It runs the program once under the default schedule (the reference),
 * then under `--chaos --seed S`, S+1, ... (-j of them at a time, each its
 * own `hvrun run` with its own VMs) until a run's outcome differs from the
 * reference: its exit status, or its stdout/stderr with --compare-output,
 * or a user predicate (--fail-if CMD: a shell command run with the run's
 * files in $HVRUN_STDOUT, $HVRUN_STDERR and its status in $HVRUN_STATUS;
 * exit 0 means "this run failed"). Every chaos run is deterministic, so
 * the seed it prints reproduces the failure: `hvrun run --chaos --seed S`.
 *
 * Exit status: 0 a differing schedule was found, 1 none within the budget
 * (--runs, --timeout), 125 hvrun's own failure (the reference run could
 * not be made, say). Shrinking the schedule and naming the racing pair
 * (issue 12, items 2) are not built yet.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define ANALYZE_MAX_JOBS 64
#define ANALYZE_MAX_ARGS 512

struct analyze_opts {
    unsigned long runs;       /* chaos runs at most */
    unsigned long long seed_from;
    unsigned jobs;
    double timeout_s;         /* the whole search; 0: none */
    double run_timeout_s;     /* one run */
    bool compare_output;
    bool json;
    const char *fail_if;
    char **run_args;          /* hvrun run options, up to and with "--" */
    int nr_run_args;
    char **prog;              /* PROG ARGS, NULL-terminated */
};

struct outcome {
    int status;               /* exit status, 128+N for a signal, -1 timeout */
    char out[160], err[160];  /* the files */
};

struct job {
    pid_t pid;
    unsigned long long seed;
    double started;
    struct outcome o;
};

static volatile sig_atomic_t analyze_stop;
static void on_stop(int sig) { analyze_stop = sig; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hvrun analyze [options] [run options] -- PROGRAM [ARGS...]\n"
            "  --runs N           chaos runs at most (default 100)\n"
            "  --seed-from S      the first chaos seed (default 1)\n"
            "  -j N               runs at a time (default: the host's cores)\n"
            "  --timeout SECS     give up after SECS of searching\n"
            "  --run-timeout SECS one run (default 120)\n"
            "  --compare-output   a different stdout or stderr also counts\n"
            "  --fail-if CMD      a run failed if the shell command CMD exits 0\n"
            "                     ($HVRUN_STDOUT, $HVRUN_STDERR: its files;\n"
            "                     $HVRUN_STATUS: its exit status)\n"
            "  --json             the result as one JSON object on stdout\n"
            "Other options before -- are hvrun run's (not --seed, --chaos or "
            "--verify).\n"
            "Exit: 0 a schedule with another outcome was found, 1 none "
            "was, 125 error.\n");
}

static int parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v < 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct analyze_opts *o)
{
    static char *run_args[ANALYZE_MAX_ARGS];
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (struct analyze_opts){.runs = 100, .seed_from = 1,
                               .jobs = n > 0 ? (unsigned)n : 1,
                               .run_timeout_s = 120, .run_args = run_args};
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double num;
        bool takes = !strcmp(a, "--runs") || !strcmp(a, "--seed-from") ||
                     !strcmp(a, "-j") || !strcmp(a, "--timeout") ||
                     !strcmp(a, "--run-timeout") || !strcmp(a, "--fail-if");
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (takes && !v) {
            cli_error("analyze: %s needs a value", a);
            return -1;
        } else if (!strcmp(a, "--fail-if")) {
            o->fail_if = v;
            i++;
        } else if (takes) {
            if (parse_number(v, &num) < 0 || (strcmp(a, "--timeout") &&
                                              strcmp(a, "--run-timeout") &&
                                              num != (double)(long long)num)) {
                cli_error("analyze: %s '%s': expected a number", a, v);
                return -1;
            }
            if (!strcmp(a, "--runs"))
                o->runs = (unsigned long)num;
            else if (!strcmp(a, "--seed-from"))
                o->seed_from = (unsigned long long)num;
            else if (!strcmp(a, "-j"))
                o->jobs = num < 1 ? 1 : num > ANALYZE_MAX_JOBS
                                            ? ANALYZE_MAX_JOBS
                                            : (unsigned)num;
            else if (!strcmp(a, "--timeout"))
                o->timeout_s = num;
            else
                o->run_timeout_s = num;
            i++;
        } else if (!strcmp(a, "--compare-output")) {
            o->compare_output = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--seed") || !strcmp(a, "--chaos") ||
                   !strcmp(a, "--verify")) {
            cli_error("analyze: %s is analyze's to choose", a);
            return -1;
        } else if (o->nr_run_args < ANALYZE_MAX_ARGS - 8) {
            o->run_args[o->nr_run_args++] = argv[i];
        }
    }
    if (i + 1 >= argc) {
        cli_error("analyze: no program given; usage: hvrun analyze [options] "
                  "-- PROGRAM [ARGS...]");
        return -1;
    }
    o->prog = argv + i + 1;
    return 0;
}

/* Starts `hvrun run [run options] [--chaos --seed S] -- PROG` with its
 * stdout and stderr in files under dir. */
static pid_t start_run(const struct analyze_opts *o, const char *dir,
                       bool chaos, unsigned long long seed, struct outcome *out)
{
    snprintf(out->out, sizeof(out->out), "%s/%s%llu.out", dir,
             chaos ? "s" : "ref", chaos ? seed : 0ULL);
    snprintf(out->err, sizeof(out->err), "%s/%s%llu.err", dir,
             chaos ? "s" : "ref", chaos ? seed : 0ULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    int fo = open(out->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int fe = open(out->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int fi = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fo < 0 || fe < 0 || fi < 0 || dup2(fi, 0) < 0 || dup2(fo, 1) < 0 ||
        dup2(fe, 2) < 0)
        _exit(CLI_EXIT_FAILURE);
    char seed_s[32];
    snprintf(seed_s, sizeof(seed_s), "%llu", seed);
    char *args[ANALYZE_MAX_ARGS + 16];
    int n = 0;
    args[n++] = "hvrun";
    args[n++] = "run";
    for (int i = 0; i < o->nr_run_args; i++)
        args[n++] = o->run_args[i];
    if (chaos) {
        args[n++] = "--chaos";
        args[n++] = "--seed";
        args[n++] = seed_s;
    }
    args[n++] = "--";
    for (int i = 0; o->prog[i] && n < ANALYZE_MAX_ARGS + 15; i++)
        args[n++] = o->prog[i];
    args[n] = NULL;
    execv("/proc/self/exe", args);
    _exit(CLI_EXIT_FAILURE);
}

static int status_of(int ws)
{
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static bool same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb)
            same = false;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* Whether the run's outcome is a failure next to the reference's. */
static bool differs(const struct analyze_opts *o, const struct outcome *ref,
                    const struct outcome *r)
{
    if (o->fail_if) {
        pid_t pid = fork();
        if (pid == 0) {
            char st[16];
            snprintf(st, sizeof(st), "%d", r->status);
            setenv("HVRUN_STDOUT", r->out, 1);
            setenv("HVRUN_STDERR", r->err, 1);
            setenv("HVRUN_STATUS", st, 1);
            execl("/bin/sh", "sh", "-c", o->fail_if, (char *)NULL);
            _exit(127);
        }
        int ws;
        while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
            ;
        return pid > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
    }
    if (r->status != ref->status)
        return true;
    return o->compare_output &&
           (!same_file(r->out, ref->out) || !same_file(r->err, ref->err));
}

static void progress(const struct analyze_opts *o, unsigned long done,
                     double t0, bool final)
{
    if (o->json && !isatty(2))
        return;
    bool tty = isatty(2);
    if (!tty && !final && done % 10 != 0)
        return;
    fprintf(stderr, "%sanalyze: %lu of %lu chaos runs, seeds %llu-%llu, %.1f s%s",
            tty ? "\r" : "", done, o->runs, o->seed_from,
            o->seed_from + (done ? done - 1 : 0), now_s() - t0,
            tty && !final ? "" : "\n");
}

static void remove_dir(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    int ws;
    while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
}

static void report(const struct analyze_opts *o, const struct outcome *ref,
                   const struct job *found, unsigned long done, double secs)
{
    if (o->json) {
        printf("{\"found\": %s, \"reference_status\": %d, \"runs\": %lu, "
               "\"seconds\": %.3f",
               found ? "true" : "false", ref->status, done, secs);
        if (found)
            printf(", \"seed\": %llu, \"status\": %d", found->seed,
                   found->o.status);
        printf("}\n");
        return;
    }
    if (!found) {
        fprintf(stderr,
                "analyze: no schedule changed the outcome in %lu chaos runs "
                "(seeds %llu-%llu, %.1f s); reference exit status %d\n",
                done, o->seed_from, o->seed_from + (done ? done - 1 : 0), secs,
                ref->status);
        return;
    }
    fprintf(stderr,
            "analyze: the outcome changes under --chaos --seed %llu: exit "
            "status %d%s (the default schedule: %d), after %lu runs, %.1f s\n"
            "analyze: it reproduces with: hvrun run --chaos --seed %llu -- %s%s\n",
            found->seed, found->o.status,
            found->o.status == ref->status ? ", other output" : "",
            ref->status, done, secs, found->seed, o->prog[0],
            o->prog[1] ? " ..." : "");
}

int cli_cmd_analyze(int argc, char **argv)
{
    struct analyze_opts o;
    if (parse_args(argc, argv, &o) < 0)
        return CLI_EXIT_FAILURE;
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char dir[] = "/tmp/hvrun-analyze.XXXXXX";
    if (!mkdtemp(dir)) {
        cli_error("analyze: %s: %s", dir, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    double t0 = now_s();
    struct outcome ref;
    pid_t rp = start_run(&o, dir, false, 0, &ref);
    int ws = 0;
    while (rp > 0 && waitpid(rp, &ws, 0) < 0 && errno == EINTR)
        if (analyze_stop)
            kill(-rp, SIGTERM);
    if (rp < 0 || analyze_stop) {
        remove_dir(dir);
        return rp < 0 ? CLI_EXIT_FAILURE : 128 + analyze_stop;
    }
    ref.status = status_of(ws);
    if (ref.status == CLI_EXIT_FAILURE) {
        cli_error("analyze: the reference run failed (hvrun exit 125): %s", ref.err);
        remove_dir(dir);
        return CLI_EXIT_FAILURE;
    }
    struct job jobs[ANALYZE_MAX_JOBS];
    unsigned running = 0;
    unsigned long started = 0, done = 0;
    struct job found = {0};
    bool have_found = false;
    while (!analyze_stop) {
        bool out_of_time = o.timeout_s > 0 && now_s() - t0 > o.timeout_s;
        /* Once a seed fails, only the lower seeds still running matter:
         * the seed reported is the lowest that fails, whatever -j is. */
        for (unsigned k = 0; have_found && k < running; k++)
            if (jobs[k].seed > found.seed)
                kill(-jobs[k].pid, SIGKILL);
        while (!have_found && !out_of_time && running < o.jobs &&
               started < o.runs) {
            struct job *j = &jobs[running];
            j->seed = o.seed_from + started;
            j->started = now_s();
            j->pid = start_run(&o, dir, true, j->seed, &j->o);
            if (j->pid < 0)
                break;
            running++;
            started++;
        }
        if (running == 0)
            break;
        pid_t pid = waitpid(-1, &ws, WNOHANG);
        if (pid == 0) {
            for (unsigned k = 0; k < running; k++)
                if (o.run_timeout_s > 0 &&
                    now_s() - jobs[k].started > o.run_timeout_s)
                    kill(-jobs[k].pid, SIGKILL);
            usleep(20000);
            continue;
        }
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        for (unsigned k = 0; k < running; k++) {
            if (jobs[k].pid != pid)
                continue;
            struct job j = jobs[k];
            jobs[k] = jobs[--running];
            j.o.status = status_of(ws);
            if (have_found && j.seed > found.seed)
                break; /* killed above */
            done++;
            progress(&o, done, t0, false);
            if (j.o.status != CLI_EXIT_FAILURE && differs(&o, &ref, &j.o) &&
                (!have_found || j.seed < found.seed)) {
                found = j;
                have_found = true;
            }
            break;
        }
    }
    for (unsigned k = 0; k < running; k++)
        kill(-jobs[k].pid, SIGKILL);
    while (running > 0 && waitpid(-1, &ws, 0) > 0)
        running--;
    progress(&o, done, t0, true);
    report(&o, &ref, have_found ? &found : NULL, done, now_s() - t0);
    remove_dir(dir);
    if (analyze_stop)
        return 128 + analyze_stop;
    return have_found ? 0 : 1;
}
