/*
 * verify.c - `hvrun run --verify`: run the program twice, each in a fresh
 * VM and environment with the same stdin, and compare stdout, stderr, the
 * exit status and the detlog. Run 1's output is passed on; one stderr line
 * says whether the runs were identical and, if not, names the first event
 * that differed and which streams differed. `--repeat N` is the same with
 * N runs, each compared with run 1 (under --chaos each with its own
 * schedule seed, compared by output and status only); --report FILE
 * writes the verdicts (report.c).
 *
 * Both runs start from the same files: each run journals what it does to
 * them (syscall-proxy/fs/preserve.c) and undo.c puts them back from that
 * journal before run 2. Everything lives in one scratch directory
 * (scratch.c: 0700, ours, locked while we live, so a later hvrun can clean
 * it up if we are killed). SIGINT, SIGTERM or SIGHUP stop the run going
 * on (it gets the signal too), put the files back as they were before
 * --verify and exit 128+N saying so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "proxy.h"
#include "kernel.h"
#include "fs.h"

/* The runs going on (0: a free slot; -j runs several at once), for the
 * stop signal handler. */
static volatile sig_atomic_t verify_children[CLI_MAX_JOBS];

/* In hvrun and in its run alike: stop (world.c polls the flag); hvrun
 * passes the signal on to the runs, whichever of them got it. */
static void on_verify_signal(int sig)
{
    proxy_stop_signal = sig;
    for (int i = 0; i < CLI_MAX_JOBS; i++) {
        pid_t child = verify_children[i];
        if (child > 0)
            kill(child, sig);
    }
}

void cli_capture_handlers(void)
{
    cli_on_stop_signals(on_verify_signal);
}

static int copy_fd(int from, int to)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(from, buf, sizeof(buf));
        if (n < 0 && errno == EINTR && !proxy_stop_signal)
            continue;
        if (n <= 0)
            return (int)n;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return -1;
            off += w;
        }
    }
}

/* The same stdin for both runs: a copy of ours, or /dev/null for a tty. */
int cli_save_stdin(const char *dir, char *path, size_t len)
{
    if (isatty(0)) {
        snprintf(path, len, "/dev/null");
        return 0;
    }
    snprintf(path, len, "%s/stdin", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = copy_fd(0, fd);
    close(fd);
    return rc;
}

static int open_or_die(const char *path, int flags)
{
    int fd = open(path, flags, 0600);
    if (fd < 0) {
        cli_error("--verify: %s: %s", path, strerror(errno));
        _exit(CLI_EXIT_FAILURE);
    }
    return fd;
}

static void child_run(const struct run_options *o, const char *path,
                      const char *stdin_path, struct cli_captured_run *f)
{
    /* A run never outlives the hvrun that started it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int in = open_or_die(stdin_path, O_RDONLY);
    int out = open_or_die(f->live_out, O_WRONLY | O_CREAT | O_TRUNC);
    int err = open_or_die(f->live_err, O_WRONLY | O_CREAT | O_TRUNC);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    struct run_summary sum;
    memset(&sum, 0, sizeof(sum));
    struct run_options inner = *o; /* --detlog's files are the parent's */
    inner.detlog_fd = inner.detlog2_fd = -1;
    inner.capture_files[0] = stdin_path;
    inner.capture_files[1] = f->live_out;
    inner.capture_files[2] = f->live_err;
    int code = cli_run_once(&inner, path, f->detlog, f->journal, &sum);
    int s = open(f->summary, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (s >= 0) {
        if (write(s, &sum, sizeof(sum)) != (ssize_t)sizeof(sum))
            code = CLI_EXIT_FAILURE;
        close(s);
    }
    fflush(NULL);
    _exit(code);
}

/* Starts the run in a child, known to the stop handler as slot's; its
 * pid or -errno. */
static pid_t start_capture(const struct run_options *o, const char *path,
                           const char *stdin_path, struct cli_captured_run *f,
                           int slot)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0)
        child_run(o, path, stdin_path, f);
    verify_children[slot] = pid;
    if (proxy_stop_signal) /* came before the slot was set */
        kill(pid, proxy_stop_signal);
    return pid;
}

/* Waits for the run started in slot and collects what it left. */
static int finish_capture(pid_t pid, int slot, struct cli_captured_run *f)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            verify_children[slot] = 0;
            return -errno;
        }
    verify_children[slot] = 0;
    (void)rename(f->live_out, f->out);
    (void)rename(f->live_err, f->err);
    f->code = WIFEXITED(status) ? WEXITSTATUS(status)
                                : 128 + WTERMSIG(status);
    int s = open(f->summary, O_RDONLY | O_CLOEXEC);
    if (s >= 0) {
        if (read(s, &f->sum, sizeof(f->sum)) != (ssize_t)sizeof(f->sum))
            memset(&f->sum, 0, sizeof(f->sum));
        close(s);
    }
    return 0;
}

int cli_capture_run(const struct run_options *o, const char *path,
                    const char *stdin_path, struct cli_captured_run *f)
{
    pid_t pid = start_capture(o, path, stdin_path, f, 0);
    return pid < 0 ? (int)pid : finish_capture(pid, 0, f);
}

/* Byte offset of the first difference of two files, or -1 if equal. */
long long cli_first_diff(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    long long at = -1, off = 0;
    while (fa && fb) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) {
            at = off;
            break;
        }
        if (ca == EOF)
            break;
        off++;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return (fa && fb) ? at : 0;
}

__attribute__((format(printf, 3, 4)))
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t at = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
}

static void describe_record(char *buf, size_t len, const struct det_record *r)
{
    if (r->source == DET_SRC_SYSCALL)
        snprintf(buf, len, "result %lld", (long long)r->value);
    else
        snprintf(buf, len, "value %lld (hash %016llx)", (long long)r->value,
                 (unsigned long long)r->hash);
}

/* Appends the first detlog difference between run 1 (a) and run n (b)
 * to msg; false if the logs agree. */
static bool compare_detlogs(const struct cli_captured_run *a,
                            const struct cli_captured_run *b, int n,
                            char *msg, size_t len)
{
    struct det_record *ra = NULL, *rb = NULL;
    size_t na = 0, nb = 0;
    if (det_log_load(a->detlog, &ra, &na) < 0 ||
        det_log_load(b->detlog, &rb, &nb) < 0) {
        free(ra);
        free(rb);
        snprintf(msg, len, "detlog missing");
        return true;
    }
    size_t i = 0;
    while (i < na && i < nb && !memcmp(&ra[i], &rb[i], sizeof(ra[i])))
        i++;
    bool differ = i < na || i < nb;
    if (differ && i < na && i < nb) {
        char va[96], vb[160];
        describe_record(va, sizeof(va), &ra[i]);
        describe_record(vb, sizeof(vb), &rb[i]);
        /* Records of two kinds (a result where the other run drew a
         * value): name the other's kind and call too. */
        if (rb[i].source != ra[i].source || rb[i].nr != ra[i].nr)
            append(vb, sizeof(vb), " (%s, syscall %s)",
                   det_source_name((enum det_source)rb[i].source),
                   proxy_syscall_name(rb[i].nr));
        snprintf(msg, len,
                 "first difference at detlog event #%zu, syscall %s (%s): "
                 "run 1 %s, run %d %s",
                 i, proxy_syscall_name(ra[i].nr),
                 det_source_name((enum det_source)ra[i].source), va, n, vb);
    } else if (differ) {
        snprintf(msg, len, "detlog lengths differ: %zu vs %zu events "
                           "(first %zu agree)",
                 na, nb, i);
    }
    free(ra);
    free(rb);
    return differ;
}

/* Run n (1-based) against run 1: what differs (v->streams), the first
 * detlog difference (v->detail). A --chaos --repeat run has its own
 * schedule, so only its output and status count. */
static void judge(const struct run_options *o, const struct cli_captured_run *f,
                  int n, struct cli_run_verdict *v)
{
    const struct cli_captured_run *a = &f[0], *b = &f[n - 1];
    bool with_detlog = !(o->repeat && o->det.chaos);
    bool detlog_differs = with_detlog &&
                          compare_detlogs(a, b, n, v->detail, sizeof(v->detail));
    long long out_at = cli_first_diff(a->out, b->out);
    long long err_at = cli_first_diff(a->err, b->err);
    if (out_at >= 0)
        append(v->streams, sizeof(v->streams), " stdout (byte %lld)", out_at);
    if (err_at >= 0)
        append(v->streams, sizeof(v->streams), " stderr (byte %lld)", err_at);
    if (a->code != b->code)
        append(v->streams, sizeof(v->streams), " exit status (%d vs %d)",
               a->code, b->code);
    if (detlog_differs)
        append(v->streams, sizeof(v->streams), " detlog");
    v->same = !v->streams[0];
}

/* A run that hvrun could not start (no /dev/kvm, a program it cannot
 * load): it exited 125 and left no detlog, as no guest event happened. */
static bool never_started(const struct cli_captured_run *f)
{
    return f->code == CLI_EXIT_FAILURE && access(f->detlog, F_OK) < 0;
}

/* --verify's one line. */
static int report_two(const struct cli_captured_run *f,
                      const struct cli_run_verdict *v)
{
    if (v[1].same) {
        fprintf(stderr,
                "hvrun: verify: deterministic (%d runs identical: stdout, "
                "stderr, exit status %d, detlog of %llu events, digest "
                "%016llx)\n",
                2, f[0].code, (unsigned long long)f[0].sum.detlog_events,
                (unsigned long long)f[0].sum.digest);
        return f[0].code;
    }
    fprintf(stderr, "hvrun: verify: nondeterministic: differs in:%s%s%s\n",
            v[1].streams, v[1].detail[0] ? "; " : "", v[1].detail);
    return CLI_EXIT_NONDETERMINISTIC;
}

/* --repeat N's lines: each run that differs from run 1, then the count. */
static int report_repeat(const struct run_options *o,
                         const struct cli_captured_run *f,
                         const struct cli_run_verdict *v, int n)
{
    int differ = 0;
    char seeds[96] = "";
    if (o->det.chaos)
        snprintf(seeds, sizeof(seeds), ", %d schedules: --chaos seeds %llu-%llu",
                 n, (unsigned long long)v[0].seed,
                 (unsigned long long)v[n - 1].seed);
    for (int i = 1; i < n; i++) {
        if (v[i].same)
            continue;
        differ++;
        char seed[48] = "";
        if (o->det.chaos)
            snprintf(seed, sizeof(seed), " (--chaos seed %llu)",
                     (unsigned long long)v[i].seed);
        fprintf(stderr, "hvrun: repeat: run %d%s differs from run 1 in:%s%s%s\n",
                i + 1, seed, v[i].streams, v[i].detail[0] ? "; " : "",
                v[i].detail);
    }
    if (!differ) {
        fprintf(stderr,
                "hvrun: repeat: all %d runs gave the same bytes (stdout, "
                "stderr, exit status %d%s%s)\n",
                n, f[0].code, o->det.chaos ? "" : ", detlog", seeds);
        return f[0].code;
    }
    fprintf(stderr, "hvrun: repeat: %d of %d runs differ from run 1%s\n",
            differ, n, seeds);
    return CLI_EXIT_NONDETERMINISTIC;
}

/* Puts back the files run n (0-based) changed; says so if not all. */
void cli_undo_captured(const struct cli_captured_run *f, int n)
{
    int problems = cli_verify_undo(f->journal);
    if (problems)
        cli_error("%d change%s of run %d could not be undone (above)",
                  problems, problems == 1 ? "" : "s", n + 1);
}

static int interrupted(const struct run_options *o, int during_run, int n)
{
    int sig = proxy_stop_signal;
    fprintf(stderr,
            "hvrun: %s: interrupted by %s during run %d of %d; the "
            "files are as they were before it\n",
            o->repeat ? "repeat" : "verify",
            sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP",
            during_run, n);
    return 128 + sig;
}

void cli_captured_names(struct cli_captured_run *f, const char *dir, int n)
{
    snprintf(f->out, sizeof(f->out), "%s/out%d", dir, n);
    snprintf(f->err, sizeof(f->err), "%s/err%d", dir, n);
    snprintf(f->live_out, sizeof(f->live_out), "%s/stdout", dir);
    snprintf(f->live_err, sizeof(f->live_err), "%s/stderr", dir);
    snprintf(f->detlog, sizeof(f->detlog), "%s/detlog%d", dir, n);
    snprintf(f->summary, sizeof(f->summary), "%s/sum%d", dir, n);
    snprintf(f->journal, sizeof(f->journal), "%s/journal%d", dir, n);
}

/*
 * -j: the runs going on at once cannot write one stdout file; each slot
 * (run i's is i mod J) has its own directory, dir/jK/stdout. With -j 1
 * every run's are the same names, dir/stdout.
 */
static void live_names_per_slot(struct cli_captured_run *f, const char *dir,
                                int n, int jobs)
{
    for (int k = 0; k < jobs && k < n; k++) {
        char sub[96];
        snprintf(sub, sizeof(sub), "%s/j%d", dir, k + 1);
        (void)mkdir(sub, 0700);
    }
    for (int i = 0; i < n; i++) {
        snprintf(f[i].live_out, sizeof(f[i].live_out), "%s/j%d/stdout", dir,
                 i % jobs + 1);
        snprintf(f[i].live_err, sizeof(f[i].live_err), "%s/j%d/stderr", dir,
                 i % jobs + 1);
    }
}

void cli_pass_on(const char *file, int to)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        copy_fd(fd, to);
        close(fd);
    }
}

/* Run i's options: a --repeat --chaos run gets schedule seed v->seed. */
static struct run_options options_of_run(const struct run_options *o, int i,
                                         struct cli_run_verdict *v)
{
    struct run_options oi = *o;
    v->seed = o->det.seed + (uint64_t)i;
    if (o->repeat && o->det.chaos) {
        oi.det.chaos_seed_set = true;
        oi.det.chaos_seed = v->seed;
    }
    return oi;
}

/* Puts back what runs [from, to) did, the last started first. */
static void undo_runs(const struct cli_captured_run *f, int from, int to)
{
    for (int i = to - 1; i >= from; i--)
        cli_undo_captured(&f[i], i);
}

/* Whether the run journaled any change to the files (journal.h). */
static bool changed_files(const struct cli_captured_run *f)
{
    char path[160];
    struct stat st;
    snprintf(path, sizeof(path), "%s/journal", f->journal);
    return stat(path, &st) == 0 && st.st_size > 0;
}

/*
 * Runs [first, first+k) side by side (-j), each a child of its own, so
 * the pin (vmm/host.c) puts each on a CPU of its own; waited for in
 * order. They share the working tree: runs that change files may see one
 * another's changes, which a line says (-j 1 runs them one at a time).
 */
static int run_batch(const struct run_options *o, const char *path,
                     const char *in, struct cli_captured_run *f,
                     struct cli_run_verdict *v, int first, int k)
{
    pid_t pid[CLI_MAX_JOBS];
    int started = 0, err = 0;
    for (; started < k; started++) {
        int i = first + started;
        if (mkdir(f[i].journal, 0700) < 0) {
            err = errno;
            cli_error("--verify: %s: %s", f[i].journal, strerror(err));
            break;
        }
        struct run_options oi = options_of_run(o, i, &v[i]);
        if ((pid[started] = start_capture(&oi, path, in, &f[i], started)) <
            0) {
            err = (int)-pid[started];
            cli_error("--verify: fork: %s", strerror(err));
            break;
        }
    }
    bool changed = false;
    for (int j = 0; j < started; j++) {
        int rc = finish_capture(pid[j], j, &f[first + j]);
        if (rc < 0 && !err) {
            err = -rc;
            cli_error("--verify: waiting for run %d: %s", first + j + 1,
                      strerror(err));
        }
        changed |= changed_files(&f[first + j]);
    }
    if (changed && k > 1)
        fprintf(stderr,
                "hvrun: repeat: runs %d-%d changed files while they ran side "
                "by side (-j %d): each may have seen another's changes; "
                "-j 1 runs them one at a time\n",
                first + 1, first + k, o->jobs);
    if (err) {
        undo_runs(f, first, first + started);
        return CLI_EXIT_FAILURE;
    }
    return 0;
}

/* Runs all n (each from the files as they were before the first; a
 * --repeat --chaos run i with schedule seed v[i].seed), -j at a time;
 * 0, or the exit code when it must end now. The files are left as the
 * first run of the last batch left them (with -j 1: the last run). */
static int run_all(const struct run_options *o, const char *path,
                   const char *in, struct cli_captured_run *f,
                   struct cli_run_verdict *v, int n)
{
    int jobs = o->jobs > 1 ? o->jobs : 1;
    for (int i = 0; i < n; i += jobs) {
        if (i > 0)
            undo_runs(f, i - jobs, i);
        if (proxy_stop_signal)
            return interrupted(o, i, n);
        int k = n - i < jobs ? n - i : jobs;
        int rc = run_batch(o, path, in, f, v, i, k);
        if (rc)
            return rc;
        if (proxy_stop_signal) {
            undo_runs(f, i, i + k);
            return interrupted(o, i + k, n);
        }
    }
    undo_runs(f, n - (n - 1) % jobs, n);
    return 0;
}

/* Copies the file at from to fd; 0 or -errno. */
static int copy_to_fd(const char *from, int fd)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            break;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = -errno;
                goto out;
            }
            off += w;
        }
    }
out:
    close(in);
    return rc;
}

/* --detlog FILE: run 1's detlog there, run 2's in FILE.2. */
static void keep_detlogs(const struct run_options *o, const struct cli_captured_run *f)
{
    int fds[2] = {o->detlog_fd, o->detlog2_fd};
    for (int i = 0; i < 2; i++) {
        int rc = fds[i] >= 0 ? copy_to_fd(f[i].detlog, fds[i]) : 0;
        if (rc < 0)
            cli_error("--detlog %s%s: %s", o->detlog_path, i ? ".2" : "",
                      strerror(-rc));
    }
}

int cli_verify(const struct run_options *o, const char *path)
{
    cli_capture_handlers();
    char dir[] = "/tmp/hvrun-verify.XXXXXX";
    int lock;
    int rc = proxy_scratch_make(dir, &lock);
    if (rc < 0) {
        cli_error("--verify: %s: %s", dir, strerror(-rc));
        return CLI_EXIT_FAILURE;
    }
    int n = o->repeat ? o->repeat : 2;
    struct cli_captured_run *f = calloc((size_t)n, sizeof(*f));
    struct cli_run_verdict *v = calloc((size_t)n, sizeof(*v));
    int code;
    if (!f || !v) {
        cli_error("--repeat %d: out of memory", n);
        code = CLI_EXIT_FAILURE;
        goto out;
    }
    for (int i = 0; i < n; i++)
        cli_captured_names(&f[i], dir, i + 1);
    if (o->jobs > 1)
        live_names_per_slot(f, dir, n, o->jobs);
    char in[160];
    if (cli_save_stdin(dir, in, sizeof(in)) < 0) {
        if (proxy_stop_signal)
            code = interrupted(o, 1, n);
        else {
            cli_error("--verify: saving stdin: %s", strerror(errno));
            code = CLI_EXIT_FAILURE;
        }
    } else if (!(code = run_all(o, path, in, f, v, n))) {
        /* Pass run 1's output on, then judge. */
        cli_pass_on(f[0].out, 1);
        cli_pass_on(f[0].err, 2);
        if (never_started(&f[0])) { /* nothing ran: nothing to compare */
            cli_error("--verify: run 1 did not start (exit %d)", f[0].code);
            code = CLI_EXIT_FAILURE;
            goto out;
        }
        v[0].same = true;
        for (int i = 2; i <= n; i++)
            judge(o, f, i, &v[i - 1]);
        code = o->repeat ? report_repeat(o, f, v, n) : report_two(f, v);
        keep_detlogs(o, f);
        if (o->report_path &&
            (rc = cli_report_write(o->report_path, o, f, v, n)) < 0)
            cli_error("--report %s: %s", o->report_path, strerror(-rc));
        if (o->summary || o->summary_json)
            cli_print_summary(stderr, o, &f[0].sum);
    }
out:
    free(f);
    free(v);
    proxy_scratch_remove(dir, lock);
    return code;
}
