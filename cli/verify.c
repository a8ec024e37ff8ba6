/*
 * verify.c - `hvrun run --verify`: run the program twice, each in a fresh
 * VM and environment with the same stdin, and compare stdout, stderr, the
 * exit status and the detlog. Run 1's output is passed on; one stderr line
 * says whether the runs were identical and, if not, names the first event
 * that differed and which streams differed.
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "proxy.h"

#define NR_RUNS 2

/* The run going on (0: none), for the stop signal handler. */
static volatile sig_atomic_t verify_child;

/* In hvrun and in its run alike: stop (world.c polls the flag); hvrun
 * passes the signal on to the run, whichever of them got it. */
static void on_verify_signal(int sig)
{
    proxy_stop_signal = sig;
    pid_t child = verify_child;
    if (child > 0)
        kill(child, sig);
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

int cli_capture_run(const struct run_options *o, const char *path,
                    const char *stdin_path, struct cli_captured_run *f)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0)
        child_run(o, path, stdin_path, f);
    verify_child = pid;
    if (proxy_stop_signal) /* came before verify_child was set */
        kill(pid, proxy_stop_signal);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            verify_child = 0;
            return -errno;
        }
    verify_child = 0;
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

static void describe_record(char *buf, size_t len, const struct det_record *r)
{
    if (r->source == DET_SRC_SYSCALL)
        snprintf(buf, len, "result %lld", (long long)r->value);
    else
        snprintf(buf, len, "value %lld (hash %016llx)", (long long)r->value,
                 (unsigned long long)r->hash);
}

/* Appends the first detlog difference to msg; false if the logs agree. */
static bool compare_detlogs(const struct cli_captured_run *f, char *msg, size_t len)
{
    struct det_record *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (det_log_load(f[0].detlog, &a, &na) < 0 ||
        det_log_load(f[1].detlog, &b, &nb) < 0) {
        free(a);
        free(b);
        snprintf(msg, len, "detlog missing");
        return true;
    }
    size_t i = 0;
    while (i < na && i < nb && !memcmp(&a[i], &b[i], sizeof(a[i])))
        i++;
    bool differ = i < na || i < nb;
    if (differ && i < na && i < nb) {
        char va[96], vb[96];
        describe_record(va, sizeof(va), &a[i]);
        describe_record(vb, sizeof(vb), &b[i]);
        snprintf(msg, len,
                 "first difference at detlog event #%zu, syscall %s (%s): "
                 "run 1 %s, run 2 %s",
                 i, proxy_syscall_name(a[i].nr),
                 det_source_name((enum det_source)a[i].source), va, vb);
    } else if (differ) {
        snprintf(msg, len, "detlog lengths differ: %zu vs %zu events "
                           "(first %zu agree)",
                 na, nb, i);
    }
    free(a);
    free(b);
    return differ;
}

static int report(const struct run_options *o, struct cli_captured_run *f)
{
    char detail[512] = "";
    char streams[128] = "";
    bool detlog_differs = compare_detlogs(f, detail, sizeof(detail));
    long long out_at = cli_first_diff(f[0].out, f[1].out);
    long long err_at = cli_first_diff(f[0].err, f[1].err);
    if (out_at >= 0)
        snprintf(streams + strlen(streams), sizeof(streams) - strlen(streams),
                 " stdout (byte %lld)", out_at);
    if (err_at >= 0)
        snprintf(streams + strlen(streams), sizeof(streams) - strlen(streams),
                 " stderr (byte %lld)", err_at);
    if (f[0].code != f[1].code)
        snprintf(streams + strlen(streams), sizeof(streams) - strlen(streams),
                 " exit status (%d vs %d)", f[0].code, f[1].code);
    if (detlog_differs)
        snprintf(streams + strlen(streams), sizeof(streams) - strlen(streams),
                 " detlog");
    if (!streams[0]) {
        fprintf(stderr,
                "hvrun: verify: deterministic (%d runs identical: stdout, "
                "stderr, exit status %d, detlog of %llu events, digest "
                "%016llx)\n",
                NR_RUNS, f[0].code, (unsigned long long)f[0].sum.detlog_events,
                (unsigned long long)f[0].sum.digest);
        return f[0].code;
    }
    fprintf(stderr, "hvrun: verify: nondeterministic: differs in:%s%s%s\n",
            streams, detail[0] ? "; " : "", detail);
    (void)o;
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

static int interrupted(int during_run)
{
    int sig = proxy_stop_signal;
    fprintf(stderr,
            "hvrun: verify: interrupted by %s during run %d of %d; the "
            "files are as they were before it\n",
            sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP",
            during_run, NR_RUNS);
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

void cli_pass_on(const char *file, int to)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        copy_fd(fd, to);
        close(fd);
    }
}

/* Runs both (each from the files as they were before the first); 0, or
 * the exit code when it must end now. */
static int run_both(const struct run_options *o, const char *path,
                    const char *in, struct cli_captured_run *f)
{
    for (int i = 0; i < NR_RUNS; i++) {
        if (i > 0)
            cli_undo_captured(&f[i - 1], i - 1);
        if (proxy_stop_signal)
            return interrupted(i);
        if (mkdir(f[i].journal, 0700) < 0) {
            cli_error("--verify: %s: %s", f[i].journal, strerror(errno));
            return CLI_EXIT_FAILURE;
        }
        if (cli_capture_run(o, path, in, &f[i]) < 0) {
            cli_error("--verify: fork: %s", strerror(errno));
            return CLI_EXIT_FAILURE;
        }
        if (proxy_stop_signal) {
            cli_undo_captured(&f[i], i);
            return interrupted(i + 1);
        }
    }
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
    int fds[NR_RUNS] = {o->detlog_fd, o->detlog2_fd};
    for (int i = 0; i < NR_RUNS; i++) {
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
    struct cli_captured_run f[NR_RUNS];
    memset(f, 0, sizeof(f));
    for (int i = 0; i < NR_RUNS; i++)
        cli_captured_names(&f[i], dir, i + 1);
    char in[160];
    int code;
    if (cli_save_stdin(dir, in, sizeof(in)) < 0) {
        if (proxy_stop_signal)
            code = interrupted(1);
        else {
            cli_error("--verify: saving stdin: %s", strerror(errno));
            code = CLI_EXIT_FAILURE;
        }
    } else if (!(code = run_both(o, path, in, f))) {
        /* Pass run 1's output on, then judge. */
        cli_pass_on(f[0].out, 1);
        cli_pass_on(f[0].err, 2);
        code = report(o, f);
        keep_detlogs(o, f);
        if (o->summary || o->summary_json)
            cli_print_summary(stderr, o, &f[0].sum);
    }
    proxy_scratch_remove(dir, lock);
    return code;
}
