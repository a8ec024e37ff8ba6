/*
 * verify.c - `hvrun run --verify`: run the program twice, each in a fresh
 * VM and environment with the same stdin, and compare stdout, stderr, the
 * exit status and the detlog. Run 1's output is passed on; one stderr line
 * says whether the runs were identical and, if not, names the first event
 * that differed and which streams differed.
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

struct run_files {
    char out[128], err[128], detlog[128], summary[128], created[128];
    char kept[128]; /* run 1 only: the files it changed, as they were */
    int code;
    struct run_summary sum;
};

static int copy_fd(int from, int to)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(from, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
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
static int save_stdin(const char *dir, char *path, size_t len)
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
                      const char *stdin_path, struct run_files *f)
{
    /* A run never outlives the hvrun that started it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int in = open_or_die(stdin_path, O_RDONLY);
    int out = open_or_die(f->out, O_WRONLY | O_CREAT | O_TRUNC);
    int err = open_or_die(f->err, O_WRONLY | O_CREAT | O_TRUNC);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    struct run_summary sum;
    memset(&sum, 0, sizeof(sum));
    int code = cli_run_once(o, path, f->detlog, f->created,
                            f->kept[0] ? f->kept : NULL, &sum);
    int s = open(f->summary, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (s >= 0) {
        if (write(s, &sum, sizeof(sum)) != (ssize_t)sizeof(sum))
            code = CLI_EXIT_FAILURE;
        close(s);
    }
    fflush(NULL);
    _exit(code);
}

static int run_in_child(const struct run_options *o, const char *path,
                        const char *stdin_path, struct run_files *f)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0)
        child_run(o, path, stdin_path, f);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
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
static long long first_diff(const char *a, const char *b)
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
static bool compare_detlogs(const struct run_files *f, char *msg, size_t len)
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

static int report(const struct run_options *o, struct run_files *f)
{
    char detail[512] = "";
    char streams[128] = "";
    bool detlog_differs = compare_detlogs(f, detail, sizeof(detail));
    long long out_at = first_diff(f[0].out, f[1].out);
    long long err_at = first_diff(f[0].err, f[1].err);
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

/*
 * Both runs must start from the same files: what run 1 created (outside
 * its private /tmp, which is fresh anyway) is removed before run 2, newest
 * first so directories are empty when their turn comes; what it changed
 * or removed is put back then (restore_kept).
 */
static void undo_creations(const char *list)
{
    FILE *f = fopen(list, "re");
    if (!f)
        return;
    size_t n = 0, cap = 64;
    char **paths = malloc(cap * sizeof(char *));
    char line[4200];
    while (paths && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        if (n == cap) {
            char **g = realloc(paths, cap * 2 * sizeof(char *));
            if (!g)
                break;
            paths = g;
            cap *= 2;
        }
        if (!(paths[n] = strdup(line)))
            break;
        n++;
    }
    fclose(f);
    for (size_t i = n; i-- > 0;) {
        if (unlink(paths[i]) < 0 && errno == EISDIR)
            rmdir(paths[i]);
        free(paths[i]);
    }
    free(paths);
}

/* ---- putting back what run 1 changed (syscall-proxy/preserve.c) ---------- */

struct kept_entry {
    char kind;      /* F file, L symlink, D directory */
    unsigned mode;
    char saved[16]; /* the number of the saved copy, or "-" */
    char *path;
};

static int read_kept(const char *kept, struct kept_entry **out, size_t *n)
{
    char index[160];
    snprintf(index, sizeof(index), "%s/index", kept);
    FILE *f = fopen(index, "re");
    *out = NULL;
    *n = 0;
    if (!f)
        return errno == ENOENT ? 0 : -errno;
    size_t cap = 0;
    char line[4200];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        struct kept_entry e = {0};
        int at = 0;
        if (sscanf(line, "%c %o %15s %n", &e.kind, &e.mode, e.saved, &at) < 3 ||
            at == 0 || line[at] != '/')
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            struct kept_entry *g = realloc(*out, cap * sizeof(*g));
            if (!g)
                break;
            *out = g;
        }
        if (!(e.path = strdup(line + at)))
            break;
        (*out)[(*n)++] = e;
    }
    fclose(f);
    return 0;
}

static int by_path_length(const void *a, const void *b)
{
    size_t la = strlen(((const struct kept_entry *)a)->path);
    size_t lb = strlen(((const struct kept_entry *)b)->path);
    return la < lb ? -1 : la > lb;
}

static void put_back(const char *kept, const struct kept_entry *e)
{
    char saved[160];
    snprintf(saved, sizeof(saved), "%s/%s", kept, e->saved);
    struct stat st;
    if (lstat(e->path, &st) == 0 && !S_ISDIR(st.st_mode))
        unlink(e->path);
    if (e->kind == 'L') {
        char target[4096];
        int fd = open(saved, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, target, sizeof(target) - 1);
        if (fd >= 0)
            close(fd);
        if (n >= 0) {
            target[n] = 0;
            if (symlink(target, e->path) < 0)
                cli_error("--verify: cannot put back %s: %s", e->path,
                          strerror(errno));
        }
        return;
    }
    int src = open(saved, O_RDONLY | O_CLOEXEC);
    int dst = open(e->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (src < 0 || dst < 0 || copy_fd(src, dst) < 0 ||
        fchmod(dst, (mode_t)e->mode) < 0)
        cli_error("--verify: cannot put back %s: %s", e->path,
                  strerror(errno));
    if (src >= 0)
        close(src);
    if (dst >= 0)
        close(dst);
}

/*
 * Before run 2: the files run 1 changed or removed go back as they were
 * (content and mode; the metadata that run 2 sees is virtualised anyway).
 * Directories first, outermost first, so that files have a place again.
 */
static void restore_kept(const char *kept)
{
    struct kept_entry *e;
    size_t n;
    if (read_kept(kept, &e, &n) < 0 || n == 0) {
        free(e);
        return;
    }
    qsort(e, n, sizeof(*e), by_path_length);
    for (size_t i = 0; i < n; i++)
        if (e[i].kind == 'D' && mkdir(e[i].path, (mode_t)e[i].mode) < 0 &&
            errno != EEXIST)
            cli_error("--verify: cannot put back %s: %s", e[i].path,
                      strerror(errno));
    for (size_t i = 0; i < n; i++)
        if (e[i].kind == 'F' || e[i].kind == 'L')
            put_back(kept, &e[i]);
    for (size_t i = 0; i < n; i++)
        free(e[i].path);
    free(e);
}

static void remove_kept(const char *kept)
{
    DIR *d = opendir(kept);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
    rmdir(kept);
}

static void cleanup(const char *dir, struct run_files *f, const char *in)
{
    remove_kept(f[0].kept);
    for (int i = 0; i < NR_RUNS; i++) {
        unlink(f[i].created);
        unlink(f[i].out);
        unlink(f[i].err);
        unlink(f[i].detlog);
        unlink(f[i].summary);
    }
    if (strcmp(in, "/dev/null") != 0)
        unlink(in);
    rmdir(dir);
}

int cli_verify(const struct run_options *o, const char *path)
{
    char dir[] = "/tmp/hvrun-verify.XXXXXX";
    if (!mkdtemp(dir)) {
        cli_error("--verify: mkdtemp: %s", strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    struct run_files f[NR_RUNS];
    memset(f, 0, sizeof(f));
    for (int i = 0; i < NR_RUNS; i++) {
        snprintf(f[i].out, sizeof(f[i].out), "%s/out%d", dir, i + 1);
        snprintf(f[i].err, sizeof(f[i].err), "%s/err%d", dir, i + 1);
        snprintf(f[i].detlog, sizeof(f[i].detlog), "%s/detlog%d", dir, i + 1);
        snprintf(f[i].summary, sizeof(f[i].summary), "%s/sum%d", dir, i + 1);
        snprintf(f[i].created, sizeof(f[i].created), "%s/created%d", dir,
                 i + 1);
    }
    snprintf(f[0].kept, sizeof(f[0].kept), "%s/kept", dir);
    if (mkdir(f[0].kept, 0700) < 0) {
        cli_error("--verify: %s: %s", f[0].kept, strerror(errno));
        f[0].kept[0] = 0;
    }
    char in[160];
    int code = CLI_EXIT_FAILURE;
    if (save_stdin(dir, in, sizeof(in)) < 0) {
        cli_error("--verify: saving stdin: %s", strerror(errno));
        goto out;
    }
    for (int i = 0; i < NR_RUNS; i++) {
        if (i > 0) {
            undo_creations(f[i - 1].created);
            restore_kept(f[0].kept);
        }
        if (run_in_child(o, path, in, &f[i]) < 0) {
            cli_error("--verify: fork: %s", strerror(errno));
            goto out;
        }
    }
    /* Pass run 1's output on, then judge. */
    int fd = open(f[0].out, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        copy_fd(fd, 1);
        close(fd);
    }
    fd = open(f[0].err, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        copy_fd(fd, 2);
        close(fd);
    }
    code = report(o, f);
    if (o->summary || o->summary_json)
        cli_print_summary(stderr, o, &f[0].sum);
out:
    cleanup(dir, f, in);
    return code;
}
