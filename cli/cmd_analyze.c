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
 * not be made, say).
 *
 * Then it shrinks: the failing run's switches (--schedule-out: "after
 * thread A's N-th event, B runs") are cut down with delta debugging
 * (ddmin) to a small set that, every other choice made by the default rule
 * (--schedule), still changes the outcome; the set is saved (-o FILE) and
 * each switch printed: which thread was cut (or waited) after which
 * syscall at which RIP (file, offset, function from the symbol table) and
 * which thread ran instead, where: the racing pair.
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
#include "symbolize.h"

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
    bool shrink;              /* --no-shrink turns it off */
    unsigned long shrink_runs;
    const char *schedule_file; /* -o: the shrunk schedule */
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

/* usage.c's analyze table, which lists what parse_args takes. */
static void usage(FILE *f) { cli_command_usage(f, "analyze"); }

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
                               .run_timeout_s = 120, .run_args = run_args,
                               .shrink = true, .shrink_runs = 500,
                               .schedule_file = "hvrun-analyze.schedule"};
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double num;
        bool takes = !strcmp(a, "--runs") || !strcmp(a, "--seed-from") ||
                     !strcmp(a, "-j") || !strcmp(a, "--timeout") ||
                     !strcmp(a, "--run-timeout") || !strcmp(a, "--fail-if") ||
                     !strcmp(a, "--shrink-runs") || !strcmp(a, "-o");
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (takes && !v) {
            cli_error("analyze: %s needs a value", a);
            return -1;
        } else if (!strcmp(a, "--fail-if")) {
            o->fail_if = v;
            i++;
        } else if (!strcmp(a, "-o")) {
            o->schedule_file = v;
            i++;
        } else if (!strcmp(a, "--no-shrink")) {
            o->shrink = false;
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
            else if (!strcmp(a, "--shrink-runs"))
                o->shrink_runs = (unsigned long)num;
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
        } else if (!strncmp(a, "--gdb", 5)) {
            cli_error("analyze: %s: debug the schedule it saves instead "
                      "(hvrun run --schedule FILE --gdb PORT)", a);
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

/* Starts `hvrun run [run options] EXTRA... -- PROG` with its stdout and
 * stderr in dir/TAG.out and dir/TAG.err. */
static pid_t start_run(const struct analyze_opts *o, const char *dir,
                       const char *tag, const char *const *extra,
                       struct outcome *out)
{
    snprintf(out->out, sizeof(out->out), "%s/%s.out", dir, tag);
    snprintf(out->err, sizeof(out->err), "%s/%s.err", dir, tag);
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
    char *args[ANALYZE_MAX_ARGS + 16];
    int n = 0;
    args[n++] = "hvrun";
    args[n++] = "run";
    for (int i = 0; i < o->nr_run_args; i++)
        args[n++] = o->run_args[i];
    for (int i = 0; extra && extra[i] && n < ANALYZE_MAX_ARGS + 8; i++)
        args[n++] = (char *)extra[i];
    args[n++] = "--";
    for (int i = 0; o->prog[i] && n < ANALYZE_MAX_ARGS + 15; i++)
        args[n++] = o->prog[i];
    args[n] = NULL;
    execv("/proc/self/exe", args);
    _exit(CLI_EXIT_FAILURE);
}

static pid_t start_chaos(const struct analyze_opts *o, const char *dir,
                         unsigned long long seed, struct outcome *out)
{
    char tag[32], seed_s[32];
    snprintf(tag, sizeof(tag), "s%llu", seed);
    snprintf(seed_s, sizeof(seed_s), "%llu", seed);
    const char *extra[] = {"--chaos", "--seed", seed_s, NULL};
    return start_run(o, dir, tag, extra, out);
}

/* One run to its end (SIGKILL after the run timeout); its status, -1 if
 * it could not be started. */
static int run_to_end(const struct analyze_opts *o, const char *dir,
                      const char *tag, const char *const *extra,
                      struct outcome *out)
{
    pid_t pid = start_run(o, dir, tag, extra, out);
    if (pid < 0)
        return -1;
    double t0 = now_s();
    int ws = 0;
    for (;;) {
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        if (analyze_stop ||
            (o->run_timeout_s > 0 && now_s() - t0 > o->run_timeout_s))
            kill(-pid, SIGKILL);
        usleep(5000);
    }
    out->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    return out->status;
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

/* ---- shrinking the failing schedule ---------------------------------------- */

struct schedule_lines {
    char **v;   /* "after TID N run TID2" */
    size_t n;
};

static void free_lines(struct schedule_lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (struct schedule_lines){0};
}

/* The switches of a --schedule-out file; with their comments when wanted
 * (the trace). */
static int read_lines(const char *path, bool keep_comment,
                      struct schedule_lines *l)
{
    *l = (struct schedule_lines){0};
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char buf[2048];
    size_t cap = 0;
    while (fgets(buf, sizeof(buf), f)) {
        if (strncmp(buf, "after ", 6) != 0)
            continue;
        buf[strcspn(buf, "\n")] = '\0';
        if (!keep_comment)
            buf[strcspn(buf, "#")] = '\0';
        if (l->n == cap) {
            cap = cap ? cap * 2 : 64;
            char **g = realloc(l->v, cap * sizeof(*g));
            if (!g)
                break;
            l->v = g;
        }
        if (!(l->v[l->n] = strdup(buf)))
            break;
        l->n++;
    }
    fclose(f);
    return 0;
}

static int write_subset(const char *path, const struct schedule_lines *l,
                        const size_t *idx, size_t n)
{
    FILE *f = fopen(path, "we");
    if (!f)
        return -1;
    fprintf(f, "# hvrun schedule (hvrun analyze): after thread TID's N-th "
               "event, thread TID2 runs\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", l->v[idx[i]]);
    return fclose(f);
}

struct shrink {
    const struct analyze_opts *o;
    const char *dir;
    const struct outcome *ref;
    const struct schedule_lines *turns;
    unsigned long runs;
};

/* Whether the turns idx[0..n) alone still change the outcome. */
static bool still_fails(struct shrink *sh, const size_t *idx, size_t n)
{
    char path[200];
    snprintf(path, sizeof(path), "%s/try.schedule", sh->dir);
    if (analyze_stop || sh->runs >= sh->o->shrink_runs ||
        write_subset(path, sh->turns, idx, n) < 0)
        return false;
    sh->runs++;
    struct outcome r;
    const char *extra[] = {"--schedule", path, NULL};
    if (run_to_end(sh->o, sh->dir, "try", extra, &r) < 0 ||
        r.status == CLI_EXIT_FAILURE)
        return false;
    return differs(sh->o, sh->ref, &r);
}

/* Zeller's ddmin over the switches: the smallest set found whose
 * switches alone (every other choice by the default rule) still change
 * the outcome. cur holds n indices; the result is left there, its size
 * returned. */
static size_t ddmin(struct shrink *sh, size_t *cur, size_t n)
{
    size_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    if (!tmp)
        return n;
    size_t parts = 2;
    while (n >= 2 && !analyze_stop && sh->runs < sh->o->shrink_runs) {
        size_t chunk = (n + parts - 1) / parts;
        bool reduced = false;
        for (size_t start = 0; start < n && !reduced; start += chunk) {
            size_t len = start + chunk > n ? n - start : chunk;
            if (still_fails(sh, cur + start, len)) { /* a part alone */
                memmove(cur, cur + start, len * sizeof(*cur));
                n = len;
                parts = 2;
                reduced = true;
            }
        }
        for (size_t start = 0; start < n && !reduced && parts > 2;
             start += chunk) {
            size_t len = start + chunk > n ? n - start : chunk, m = 0;
            for (size_t i = 0; i < n; i++)
                if (i < start || i >= start + len)
                    tmp[m++] = cur[i];
            if (still_fails(sh, tmp, m)) { /* everything but a part */
                memcpy(cur, tmp, m * sizeof(*cur));
                n = m;
                parts = parts > 3 ? parts - 1 : 2;
                reduced = true;
            }
        }
        if (!reduced) {
            if (parts >= n)
                break;
            parts = parts * 2 > n ? n : parts * 2;
        }
    }
    free(tmp);
    return n;
}

/* A trace comment's places ("/path+0xoff") with the function named. */
static void print_symbolized(FILE *f, const char *comment)
{
    const char *p = comment;
    while (*p) {
        const char *slash = strchr(p, '/');
        const char *plus = slash ? strstr(slash, "+0x") : NULL;
        if (!slash || !plus || memchr(slash, ' ', (size_t)(plus - slash))) {
            fputs(p, f);
            return;
        }
        const char *end = plus + 1;
        while (*end && *end != ' ')
            end++;
        char path[1024];
        snprintf(path, sizeof(path), "%.*s", (int)(plus - slash), slash);
        unsigned long long off = strtoull(plus + 1, NULL, 16);
        char sym[256];
        fwrite(p, 1, (size_t)(end - p), f);
        if (cli_symbolize(path, off, sym, sizeof(sym)))
            fprintf(f, " (%s)", sym);
        p = end;
    }
}

struct shrunk {
    bool done;
    size_t kept, full, preemptions;
    unsigned long runs;
};

/* Shrinks the failing seed's schedule, saves it to -o FILE and prints
 * its switches: who was cut where and who ran. */
static void shrink_and_explain(const struct analyze_opts *o, const char *dir,
                               const struct outcome *ref,
                               unsigned long long seed, struct shrunk *res)
{
    char full[200], trace[200];
    snprintf(full, sizeof(full), "%s/full.schedule", dir);
    snprintf(trace, sizeof(trace), "%s/min.trace", dir);
    char seed_s[32];
    snprintf(seed_s, sizeof(seed_s), "%llu", seed);
    const char *rec[] = {"--chaos", "--seed", seed_s, "--schedule-out", full,
                         NULL};
    struct outcome r;
    struct schedule_lines turns;
    if (run_to_end(o, dir, "full", rec, &r) < 0 || !differs(o, ref, &r) ||
        read_lines(full, false, &turns) < 0 || turns.n == 0) {
        fprintf(stderr, "analyze: the failing run's schedule could not be "
                        "recorded; not shrunk\n");
        return;
    }
    size_t *cur = malloc(turns.n * sizeof(*cur));
    if (!cur) {
        free_lines(&turns);
        return;
    }
    for (size_t i = 0; i < turns.n; i++)
        cur[i] = i;
    struct shrink sh = {o, dir, ref, &turns, 0};
    fprintf(stderr, "analyze: shrinking the schedule of seed %llu (%zu "
                    "switches)\n",
            seed, turns.n);
    size_t n = still_fails(&sh, cur, turns.n) ? ddmin(&sh, cur, turns.n)
                                              : turns.n;
    bool replays = write_subset(o->schedule_file, &turns, cur, n) == 0;
    char min_in[200];
    snprintf(min_in, sizeof(min_in), "%s/min.schedule", dir);
    write_subset(min_in, &turns, cur, n);
    const char *explain[] = {"--schedule", min_in, "--schedule-out", trace, NULL};
    struct outcome m;
    struct schedule_lines why;
    bool traced = run_to_end(o, dir, "min", explain, &m) >= 0 &&
                  differs(o, ref, &m) && read_lines(trace, true, &why) == 0;
    /* Preemptions: kept switches at which a thread that could go on was
     * cut for another (the rest are choices at a wait, or a thread kept
     * on). */
    size_t preempts = 0;
    for (size_t i = 0; traced && i < why.n; i++) {
        unsigned a, b;
        unsigned long long at;
        const char *hash = strchr(why.v[i], '#');
        if (sscanf(why.v[i], "after %u %llu run %u", &a, &at, &b) == 3 &&
            a != b && hash && strstr(hash, " cut after "))
            for (size_t k = 0; k < n; k++) {
                unsigned ka, kb;
                unsigned long long kat;
                if (sscanf(turns.v[cur[k]], "after %u %llu run %u", &ka, &kat,
                           &kb) == 3 && ka == a && kat == at && kb == b) {
                    preempts++;
                    break;
                }
            }
    }
    *res = (struct shrunk){true, n, turns.n, preempts, sh.runs};
    fprintf(stderr,
            "analyze: %zu of %zu switches still change the outcome, %zu of "
            "them preemptions (%lu runs spent shrinking)%s%s\n",
            n, turns.n, preempts, sh.runs, replays ? "; saved to " : "",
            replays ? o->schedule_file : "");
    /* The kept switches as the run made them: who was cut (or waited)
     * where, and who ran instead: the racing pair. */
    for (size_t i = 0; traced && i < why.n; i++) {
        const char *hash = strchr(why.v[i], '#');
        size_t head = hash ? (size_t)(hash - why.v[i]) : strlen(why.v[i]);
        bool kept = false;
        for (size_t k = 0; k < n && !kept; k++)
            kept = !strncmp(turns.v[cur[k]], why.v[i], head) &&
                   strspn(turns.v[cur[k]] + head, " ") ==
                       strlen(turns.v[cur[k]] + head);
        if (!kept)
            continue;
        fprintf(stderr, "  %.*s:", (int)head, why.v[i]);
        print_symbolized(stderr, hash ? hash + 1 : "");
        fputc('\n', stderr);
    }
    if (traced)
        free_lines(&why);
    if (replays)
        fprintf(stderr, "analyze: it reproduces with: hvrun run --schedule %s "
                        "-- %s%s\n",
                o->schedule_file, o->prog[0], o->prog[1] ? " ..." : "");
    free(cur);
    free_lines(&turns);
}

static void report_json(const struct analyze_opts *o,
                        const struct outcome *ref, const struct job *found,
                        unsigned long done, double secs,
                        const struct shrunk *sh)
{
    printf("{\"found\": %s, \"reference_status\": %d, \"runs\": %lu, "
           "\"seconds\": %.3f",
           found ? "true" : "false", ref->status, done, secs);
    if (found)
        printf(", \"seed\": %llu, \"status\": %d", found->seed,
               found->o.status);
    if (sh->done) {
        printf(", \"schedule\": \"");
        for (const char *c = o->schedule_file; *c; c++)
            printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
        printf("\", \"switches\": %zu, \"of\": %zu, \"preemptions\": %zu, "
               "\"shrink_runs\": %lu",
               sh->kept, sh->full, sh->preemptions, sh->runs);
    }
    printf("}\n");
}

static void report(const struct analyze_opts *o, const struct outcome *ref,
                   const struct job *found, unsigned long done, double secs)
{
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
    int ws = 0;
    if (run_to_end(&o, dir, "ref", NULL, &ref) < 0 || analyze_stop) {
        remove_dir(dir);
        return analyze_stop ? 128 + analyze_stop : CLI_EXIT_FAILURE;
    }
    if (ref.status == CLI_EXIT_FAILURE) {
        /* Its stderr goes with the scratch directory: say what it said. */
        char line[512] = "";
        FILE *f = fopen(ref.err, "r");
        while (f && fgets(line, sizeof(line), f) &&
               strncmp(line, "hvrun:", 6) != 0)
            line[0] = '\0';
        if (f)
            fclose(f);
        line[strcspn(line, "\n")] = '\0';
        cli_error("analyze: the reference run failed (hvrun exit 125)%s%s",
                  line[0] ? ": " : "", line[0] ? line + 7 : "");
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
            j->pid = start_chaos(&o, dir, j->seed, &j->o);
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
    double secs = now_s() - t0;
    report(&o, &ref, have_found ? &found : NULL, done, secs);
    struct shrunk sh = {0};
    if (have_found && o.shrink && !analyze_stop)
        shrink_and_explain(&o, dir, &ref, found.seed, &sh);
    if (o.json)
        report_json(&o, &ref, have_found ? &found : NULL, done, secs, &sh);
    remove_dir(dir);
    if (analyze_stop)
        return 128 + analyze_stop;
    return have_found ? 0 : 1;
}
