/*
 * filtergen.c - a build tool, not part of hvrun: compiles hvrun's two
 * seccomp filters with libseccomp when hvrun is built and writes them as
 * C (build/cli/seccomp_prebuilt.c), so that a run loads BPF instead of
 * compiling the same rules again (libseccomp's rule adding and code
 * generation were ~7% of a `hvrun run -- /bin/true`'s CPU,
 * docs/PERFORMANCE.md).
 *
 * Why at build time rather than in a cache file: the rules depend only
 * on hvrun's code (the allowlist, the backend's calls, the sanitizer
 * build, the stub's fixed addresses), never on the host, save hvrun's own
 * pid; so the program is fixed per build, nothing can corrupt or swap
 * it, and a run reads no file for it.
 *
 * The pid: hvrun's filter lets kill and tgkill reach only hvrun itself.
 * The tool compiles each program twice, with two stand-in pids; the
 * instructions in which the two differ, only in their constant, are the
 * pid's slots, which hvrun sets to its pid when it loads the program
 * (cli/confine.c). A third compile, with another pid, must equal the
 * program patched so; else the build stops.
 *
 *   filtergen OUT.c
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "confine_rules.h"
#include "ptrace_filter.h"

#if defined(__SANITIZE_ADDRESS__)
#define FILTERGEN_SANITIZER 1
#else
#define FILTERGEN_SANITIZER 0
#endif

/* Stand-in pids: above pid_max's limit (2^22), so no run has them. */
#define PID_A 0x2bad0001L
#define PID_B 0x2bad0002L
#define PID_CHECK 0x00012345L

struct program {
    struct sock_filter *insns;
    size_t len;
};

static void die(const char *what)
{
    fprintf(stderr, "filtergen: %s\n", what);
    exit(1);
}

/* libseccomp 2.5 exports to an fd only: a memfd, read back. */
static struct program export_program(scmp_filter_ctx f)
{
    struct program p = {NULL, 0};
    int fd = memfd_create("filtergen", MFD_CLOEXEC);
    if (fd < 0 || seccomp_export_bpf(f, fd) != 0)
        die("seccomp_export_bpf failed");
    off_t bytes = lseek(fd, 0, SEEK_END);
    if (bytes <= 0 || bytes % (off_t)sizeof(struct sock_filter) != 0 ||
        bytes / (off_t)sizeof(struct sock_filter) > 0xffff)
        die("libseccomp's program has an odd size");
    if (!(p.insns = malloc((size_t)bytes)) ||
        pread(fd, p.insns, (size_t)bytes, 0) != bytes)
        die("reading libseccomp's program back");
    close(fd);
    p.len = (size_t)bytes / sizeof(struct sock_filter);
    return p;
}

static struct program compile_hvrun(const int *extra, size_t n, long pid)
{
    scmp_filter_ctx f = confine_rules_filter(SCMP_ACT_TRAP, extra, n, pid,
                                             FILTERGEN_SANITIZER);
    if (!f)
        die("libseccomp refused hvrun's rules");
    struct program p = export_program(f);
    seccomp_release(f);
    return p;
}

static bool same_insn(const struct sock_filter *a, const struct sock_filter *b)
{
    return a->code == b->code && a->jt == b->jt && a->jf == b->jf &&
           a->k == b->k;
}

/* The instructions that hold the pid; the build stops if the two
 * programs differ in anything else. */
static size_t pid_slots(const struct program *a, const struct program *b,
                        unsigned short *slots)
{
    if (a->len != b->len)
        die("the pid changed the program's length");
    size_t n = 0;
    for (size_t i = 0; i < a->len; i++) {
        const struct sock_filter *x = &a->insns[i], *y = &b->insns[i];
        if (same_insn(x, y))
            continue;
        if (x->code != y->code || x->jt != y->jt || x->jf != y->jf ||
            x->k != (uint32_t)PID_A || y->k != (uint32_t)PID_B)
            die("the pid changed more than its constants");
        slots[n++] = (unsigned short)i;
    }
    return n;
}

static void check_patched(const struct program *tmpl,
                          const unsigned short *slots, size_t n_slots,
                          const int *extra, size_t n_extra)
{
    struct program c = compile_hvrun(extra, n_extra, PID_CHECK);
    if (c.len != tmpl->len)
        die("a third pid changed the program's length");
    for (size_t i = 0; i < c.len; i++) {
        struct sock_filter want = tmpl->insns[i];
        for (size_t s = 0; s < n_slots; s++)
            if (slots[s] == i)
                want.k = (uint32_t)PID_CHECK;
        if (!same_insn(&want, &c.insns[i]))
            die("the patched program differs from a compiled one");
    }
    free(c.insns);
}

static void emit_insns(FILE *out, const char *name,
                       const struct sock_filter *insns, size_t len)
{
    fprintf(out, "static const struct sock_filter %s[%zu] = {\n", name, len);
    for (size_t i = 0; i < len; i++)
        fprintf(out, "    {0x%04x, %u, %u, 0x%08x},\n", insns[i].code,
                insns[i].jt, insns[i].jf, insns[i].k);
    fprintf(out, "};\n");
}

static void emit_hvrun(FILE *out, int kind)
{
    size_t n_extra;
    const int *extra =
        vmm_backend_run_syscalls((enum vmm_backend_kind)kind, &n_extra);
    struct program a = compile_hvrun(extra, n_extra, PID_A);
    struct program b = compile_hvrun(extra, n_extra, PID_B);
    unsigned short *slots = calloc(a.len, sizeof(*slots));
    if (!slots)
        die("out of memory");
    size_t n_slots = pid_slots(&a, &b, slots);
    check_patched(&a, slots, n_slots, extra, n_extra);

    fprintf(out, "\n/* hvrun, %s backend */\n",
            vmm_backend_name((enum vmm_backend_kind)kind));
    fprintf(out, "static const int extra_%d[] = {", kind);
    for (size_t i = 0; i < n_extra; i++)
        fprintf(out, "%d, ", extra[i]);
    fprintf(out, "0};\n");
    fprintf(out, "static const unsigned short pid_slots_%d[] = {", kind);
    for (size_t i = 0; i < n_slots; i++)
        fprintf(out, "%u, ", slots[i]);
    fprintf(out, "0};\n");
    char name[32];
    snprintf(name, sizeof(name), "insns_%d", kind);
    emit_insns(out, name, a.insns, a.len);
    fprintf(out,
            "static const struct confine_prebuilt hvrun_%d = {\n"
            "    extra_%d, %zu, %d, insns_%d, %zu, pid_slots_%d, %zu};\n",
            kind, kind, n_extra, FILTERGEN_SANITIZER, kind, a.len, kind,
            n_slots);
    free(slots);
    free(a.insns);
    free(b.insns);
}

static void emit_stub(FILE *out)
{
    struct ptrace_stub_filter f;
    char why[256];
    if (ptrace_stub_filter_compile(&f, why, sizeof(why)) < 0)
        die(why);
    fprintf(out, "\n/* the ptrace stub's (vmm/ptrace_filter.c) */\n");
    emit_insns(out, "stub_insns", f.insns, f.len);
    fprintf(out,
            "const struct ptrace_stub_prebuilt ptrace_stub_prebuilt = "
            "{stub_insns, %u};\n",
            f.len);
    ptrace_stub_filter_free(&f);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: filtergen OUT.c");
    FILE *out = fopen(argv[1], "w");
    if (!out)
        die(strerror(errno));
    fprintf(out, "/* Written by cli/filtergen.c when hvrun was built: the "
                 "seccomp programs\n * libseccomp compiled from "
                 "cli/confine_rules.c and vmm/ptrace_filter.c. */\n"
                 "#include \"confine_rules.h\"\n"
                 "#include \"ptrace_filter.h\"\n");
    emit_stub(out);
    emit_hvrun(out, VMM_BACKEND_KVM);
    emit_hvrun(out, VMM_BACKEND_PTRACE);
    fprintf(out, "\nconst struct confine_prebuilt *const "
                 "confine_prebuilt_filters[] = {&hvrun_%d, &hvrun_%d, "
                 "NULL};\n",
            VMM_BACKEND_KVM, VMM_BACKEND_PTRACE);
    if (fclose(out) != 0)
        die(strerror(errno));
    return 0;
}
