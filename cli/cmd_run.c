/*
 * cmd_run.c - `hvrun run [options] -- PROGRAM [ARGS...]`: parse, validate,
 * set up the VM and the guest process, run it, report its exit status.
 */
#include <errno.h>
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
#include "det.h"
#include "proxy.h"

extern char **environ;

struct run_options {
    const char *backend;
    bool fail_closed;
    bool summary;
    int log_level;
    char **argv; /* the program and its arguments */
};

enum { OPT_BACKEND = 256, OPT_FAIL_CLOSED, OPT_SUMMARY, OPT_LOG };

static const struct option run_longopts[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"fail-closed", no_argument, NULL, OPT_FAIL_CLOSED},
    {"summary", no_argument, NULL, OPT_SUMMARY},
    {"log", required_argument, NULL, OPT_LOG},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

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

static int parse_run_options(int argc, char **argv, struct run_options *o)
{
    memset(o, 0, sizeof(*o));
    o->backend = "kvm";
    o->log_level = 1;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+h", run_longopts, NULL)) != -1) {
        switch (c) {
        case OPT_BACKEND: o->backend = optarg; break;
        case OPT_FAIL_CLOSED: o->fail_closed = true; break;
        case OPT_SUMMARY: o->summary = true; break;
        case OPT_LOG:
            o->log_level = parse_log_level(optarg);
            if (o->log_level < 0) {
                cli_error("--log: unknown level '%s' (error, warn, debug)",
                          optarg);
                return -1;
            }
            break;
        case 'h': cli_usage(stdout); exit(0);
        default:
            cli_error("run: bad option; see 'hvrun --help'");
            return -1;
        }
    }
    if (optind >= argc) {
        cli_error("run: no program given; usage: hvrun run [options] -- "
                  "PROGRAM [ARGS...]");
        return -1;
    }
    if (strcmp(o->backend, "kvm") != 0) {
        cli_error("--backend %s: not available in this build (only kvm)",
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

static void print_summary(struct proxy_process *p, struct vmm_vm *vm,
                          double wall)
{
    struct vmm_stats st;
    vmm_vm_get_stats(vm, &st);
    fprintf(stderr,
            "hvrun: summary: syscalls %llu, unsupported %llu, exits %llu "
            "(syscall %llu, exception %llu), exits/syscall %.3f, "
            "tlb flushes %llu, wall %.3f s\n",
            (unsigned long long)p->nr_syscalls,
            (unsigned long long)p->nr_unsupported,
            (unsigned long long)st.exits,
            (unsigned long long)st.syscall_exits,
            (unsigned long long)st.exception_exits,
            p->nr_syscalls ? (double)st.exits / (double)p->nr_syscalls : 0.0,
            (unsigned long long)st.tlb_flushes, wall);
}

static int exit_code_of(int status)
{
    if (status < 0)
        return CLI_EXIT_FAILURE;
    if ((status & 0x7f) == 0)
        return (status >> 8) & 0xff;
    return 128 + (status & 0x7f);
}

static int run_guest(const struct run_options *o, const char *path)
{
    char why[512];
    double t0 = now_seconds();
    struct vmm_host *host = NULL;
    struct vmm_vm *vm = NULL;
    struct proxy_process *p = NULL;
    int code = CLI_EXIT_FAILURE;
    if (vmm_host_open(&host, why, sizeof(why)) < 0) {
        cli_error("%s", why);
        return CLI_EXIT_FAILURE;
    }
    if (vmm_vm_create(host, &vm, why, sizeof(why)) < 0) {
        cli_error("creating the guest VM: %s", why);
        goto out;
    }
    struct det_config dc = {.seed = 0, .virtualize_time = false,
                            .virtualize_random = false};
    struct det_state det;
    det_init(&det, &dc);
    struct proxy_config pc = {.fail_closed = o->fail_closed,
                              .log_level = o->log_level, .log = stderr};
    int rc = proxy_process_create(&p, vm, &det, &pc);
    if (rc < 0) {
        cli_error("creating the guest process: %s", strerror(-rc));
        goto out;
    }
    p->hwcap = vmm_host_hwcap(host);
    p->hwcap2 = vmm_host_hwcap2(host);
    rc = proxy_exec_load(p, path, o->argv, environ, why, sizeof(why));
    if (rc < 0) {
        cli_error("%s", why);
        code = rc == -ENOENT ? CLI_EXIT_NOTFOUND : CLI_EXIT_NOEXEC;
        goto out;
    }
    code = exit_code_of(proxy_run(p));
    if (o->summary)
        print_summary(p, vm, now_seconds() - t0);
out:
    proxy_process_destroy(p);
    vmm_vm_destroy(vm);
    vmm_host_close(host);
    return code;
}

int cli_cmd_run(int argc, char **argv)
{
    struct run_options o;
    if (parse_run_options(argc, argv, &o) < 0)
        return CLI_EXIT_FAILURE;
    char path[4096];
    int rc = find_program(o.argv[0], path, sizeof(path));
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
    umask(0);
    return run_guest(&o, path);
}
