/*
 * ptrace_filter.c - the stub's seccomp filter, a safety net under the
 * ptrace backend. Guests run under PTRACE_SYSEMU: the host kernel stops a
 * guest syscall for hvrun at its entry and then skips it, before seccomp
 * would look at it, so the filter never sees a guest call that went the
 * intended way. What it sees is what runs outside SYSEMU: the calls hvrun
 * injects at the stub's gadget (ptrace.c: mmap of the guest-memory memfd
 * or a reopened host file, an inaccessible reservation of a lazy VMA, munmap, mprotect, and the openat + close of
 * that file, whose path is always in the stub's scratch page). Anything
 * else reaching the host kernel (a resume with the wrong request, a bug
 * that let the guest run its own syscall) kills the stub with SIGSYS
 * before the call runs, and hvrun reports it; the three calls of the
 * [vsyscall] page trap instead (below).
 *
 * Compiled with libseccomp and exported as BPF when hvrun is built
 * (cli/filtergen.c: the rules depend on nothing but this file and
 * ptrace_abi.h, and compiling them at every run cost ~1% of a /bin/true
 * run's CPU); hvrun writes it into each stub's scratch page before the
 * stub is spawned, and the stub loads it itself as it starts
 * (ptrace_stub.S), before its ready byte: so before any call hvrun injects.
 */
#include "ptrace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrace_abi.h"
#include "ptrace_filter.h"

static int add_rules(scmp_filter_ctx f)
{
    int rc;
    /* Every mmap hvrun injects maps a shared object at a fixed address,
     * its page table filled at once or not (ptrace.c: populate_flag). */
    const int shared_flags[] = {MAP_SHARED | MAP_FIXED,
                                MAP_SHARED | MAP_FIXED | MAP_POPULATE};
    for (size_t i = 0; i < sizeof(shared_flags) / sizeof(shared_flags[0]);
         i++)
        if ((rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                   SCMP_A3(SCMP_CMP_EQ,
                                           shared_flags[i]))) < 0)
            return rc;
    /* A lazy VMA's reservation: inaccessible private memory (ptrace.c). */
    if ((rc = seccomp_rule_add(
             f, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 2,
             SCMP_A2(SCMP_CMP_EQ, PROT_NONE),
             SCMP_A3(SCMP_CMP_EQ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
                                      MAP_NORESERVE))) < 0)
        return rc;
    /* The only paths it opens are the ones hvrun wrote in the scratch
     * page's path slots (PT_BATCH_PATHS of PT_BATCH_PATH_SIZE bytes at
     * its start: the address masked of the slot bits is the page's). */
    if ((rc = seccomp_rule_add(
             f, SCMP_ACT_ALLOW, SCMP_SYS(openat), 2,
             SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)(uint64_t)(int64_t)AT_FDCWD),
             SCMP_A1(SCMP_CMP_MASKED_EQ,
                     ~(scmp_datum_t)((PT_BATCH_PATHS - 1) *
                                     PT_BATCH_PATH_SIZE),
                     PT_STUB_SCRATCH_VA))) < 0)
        return rc;
    /* The stub's own start after it loads the filter (ptrace_stub.S):
     * its ready byte, and pause until hvrun's first interrupt. */
    if ((rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                               SCMP_A0(SCMP_CMP_EQ, PT_STUB_READY_FD))) < 0)
        return rc;
    const int plain[] = {SCMP_SYS(munmap), SCMP_SYS(mprotect),
                         SCMP_SYS(close), SCMP_SYS(pause)};
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        if ((rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, plain[i], 0)) < 0)
            return rc;
    /* The host kernel emulates the legacy [vsyscall] page (it cannot be
     * unmapped) and runs the emulated call through seccomp, not through
     * SYSEMU: a SIGSYS, that ptrace.c turns into the page fault kvm
     * gives there (no such page), not the host's time. */
    const int vsyscalls[] = {SCMP_SYS(gettimeofday), SCMP_SYS(time),
                             SCMP_SYS(getcpu)};
    for (size_t i = 0; i < sizeof(vsyscalls) / sizeof(vsyscalls[0]); i++)
        if ((rc = seccomp_rule_add(f, SCMP_ACT_TRAP, vsyscalls[i], 0)) < 0)
            return rc;
    return 0;
}

/* libseccomp 2.5 exports to an fd only: a memfd, read back. */
static int export_bpf(scmp_filter_ctx f, struct ptrace_stub_filter *out)
{
    int fd = memfd_create("hvrun-stub-filter", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = seccomp_export_bpf(f, fd);
    off_t len = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (rc == 0 && (len <= 0 || len > PT_STUB_FILTER_MAX ||
                    len % (off_t)sizeof(struct sock_filter) != 0))
        rc = -E2BIG;
    if (rc == 0 && !(out->insns = malloc((size_t)len)))
        rc = -ENOMEM;
    if (rc == 0 && pread(fd, out->insns, (size_t)len, 0) != len)
        rc = -EIO;
    if (rc == 0)
        out->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
    close(fd);
    return rc;
}

int ptrace_stub_filter_compile(struct ptrace_stub_filter *out, char *why,
                               size_t why_len)
{
    memset(out, 0, sizeof(*out));
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!f) {
        snprintf(why, why_len, "the stub's seccomp filter: cannot create it");
        return -ENOMEM;
    }
    int rc = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH,
                              SCMP_ACT_KILL_PROCESS);
    if (rc == 0)
        rc = add_rules(f);
    if (rc == 0)
        rc = export_bpf(f, out);
    seccomp_release(f);
    if (rc < 0) {
        free(out->insns);
        out->insns = NULL;
        snprintf(why, why_len, "the stub's seccomp filter: %s",
                 strerror(-rc));
    }
    return rc;
}

int ptrace_stub_filter_build(struct ptrace_stub_filter *out, char *why,
                             size_t why_len)
{
    if (!&ptrace_stub_prebuilt || ptrace_stub_prebuilt.len == 0)
        return ptrace_stub_filter_compile(out, why, why_len);
    size_t bytes = ptrace_stub_prebuilt.len * sizeof(struct sock_filter);
    if (!(out->insns = malloc(bytes))) {
        snprintf(why, why_len, "the stub's seccomp filter: %s",
                 strerror(ENOMEM));
        return -ENOMEM;
    }
    memcpy(out->insns, ptrace_stub_prebuilt.insns, bytes);
    out->len = ptrace_stub_prebuilt.len;
    return 0;
}

void ptrace_stub_filter_free(struct ptrace_stub_filter *f)
{
    free(f->insns);
    f->insns = NULL;
    f->len = 0;
}
