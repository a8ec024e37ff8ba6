/*
 * ptrace_filter.h - the stub's seccomp filter (ptrace_filter.c) compiled
 * by libseccomp, at run time or, ahead of time, by the build
 * (cli/filtergen.c writes ptrace_stub_prebuilt into hvrun).
 */
#ifndef PTRACE_FILTER_H
#define PTRACE_FILTER_H

#include "ptrace_internal.h"

/* Compiles the filter with libseccomp: out->insns (malloc'd) and
 * out->len, or -errno with why filled. */
int ptrace_stub_filter_compile(struct ptrace_stub_filter *out, char *why,
                               size_t why_len);

/* The program the build compiled; absent (address NULL) in a build
 * without it (the unit tests' library), where ptrace_stub_filter_build
 * compiles instead. */
struct ptrace_stub_prebuilt {
    const struct sock_filter *insns;
    unsigned short len;
};
extern const struct ptrace_stub_prebuilt ptrace_stub_prebuilt
    __attribute__((weak));

#endif
