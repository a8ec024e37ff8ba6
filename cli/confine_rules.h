/*
 * confine_rules.h - the rules of hvrun's own seccomp filter
 * (cli/confine_rules.c), and the form in which the build keeps them
 * compiled (cli/filtergen.c, linked into hvrun as seccomp_prebuilt.o).
 */
#ifndef CONFINE_RULES_H
#define CONFINE_RULES_H

#include <linux/filter.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* hvrun's filter, not yet loaded: default action deny (also for another
 * architecture), every call of the allowlist, the backend's extra[] calls
 * and the argument rules (kill and tgkill only to self_pid); attributes
 * no-new-privs and TSYNC for seccomp_load. sanitizer: the calls an
 * ASan/LSan build makes too. NULL when libseccomp refuses a rule. */
scmp_filter_ctx confine_rules_filter(uint32_t deny, const int *extra,
                                     size_t n_extra, long self_pid,
                                     bool sanitizer);

/*
 * hvrun's filter as the build compiled it, for one backend's extra calls
 * and deny = SCMP_ACT_TRAP: the BPF libseccomp made with a stand-in pid,
 * and the instructions whose constant is that pid (the kill and tgkill
 * rules), for the loader to set to its own. The build checks that
 * compiling for a third pid gives exactly the program patched so.
 */
struct confine_prebuilt {
    const int *extra; /* the backend's calls it was compiled with */
    size_t n_extra;
    bool sanitizer;
    const struct sock_filter *insns;
    unsigned short len;
    const unsigned short *pid_slots; /* indices into insns */
    size_t n_pid_slots;
};

/* The programs cli/filtergen.c wrote (NULL-terminated); a build without
 * them (the unit tests' library) compiles at run time. */
extern const struct confine_prebuilt *const confine_prebuilt_filters[]
    __attribute__((weak));

#endif
