/*
 * confine.h - hvrun confines itself (cli/confine.c): the capabilities it
 * does not need go when `hvrun run` starts, and a seccomp filter that allows
 * only the host calls hvrun's own code makes goes on once the run is set up,
 * before the first guest instruction.
 */
#ifndef CONFINE_H
#define CONFINE_H

#include <stddef.h>

/* Sets PR_SET_NO_NEW_PRIVS and drops every capability outside the set the
 * proxy needs to serve a root guest with root's file access (bounding,
 * effective, permitted, inheritable and ambient sets). A no-op for an
 * unprivileged hvrun. -1 with why filled when a drop failed. */
int confine_drop_capabilities(char *why, size_t len);

/* Installs the seccomp filter on every thread of the process (once; later
 * calls return 0). A call outside the allowlist prints one line naming the
 * syscall and exits 125. With HVRUN_SECCOMP_SELFTEST=1 (or a call's name,
 * cli/confine.c) in the environment hvrun then makes one call the filter
 * denies, so the tests can see the diagnostic. -1 with why filled when the filter cannot be built
 * or loaded. extra[] are the syscalls the backend makes as well
 * (vmm_host_run_syscalls). */
int confine_install_seccomp(const int *extra, size_t n_extra, char *why,
                            size_t len);


/* --fs-policy: Landlock rules for this thread and the threads it starts
 * later: the host read-only (no execute anywhere), the directories in
 * writable[] (NULL or empty entries skipped) and /dev fully usable, and
 * removable_dir (if not NULL) removable from its parent. Call before
 * confine_install_seccomp and while hvrun has one thread. -1 with why
 * filled when the kernel has no Landlock or a rule cannot be made. */
int confine_fs_policy(const char *const writable[], size_t n,
                      const char *removable_dir, char *why, size_t len);

#endif
