/*
 * fs_internal.h - helpers shared by the file-family handlers (fs.c, io.c)
 * and any other proxy file that hands guest paths to the host.
 */
#ifndef PROXY_FS_INTERNAL_H
#define PROXY_FS_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proxy.h"

/*
 * Maps a guest path to the host path that means the same thing to the
 * guest; everything not listed is copied unchanged (relative paths always):
 *   /proc/self/exe, /proc/thread-self/exe  -> p->exe_path
 *   /proc/self/fd/N[/...], /dev/fd/N[/...] -> /proc/self/fd/<host fd of N>
 *   /proc/self/fdinfo/N                    -> /proc/self/fdinfo/<host fd>
 *   /dev/stdin, /dev/stdout, /dev/stderr   -> as /proc/self/fd/0, 1, 2
 *   /proc/self/cwd[/...]                   -> the guest cwd (p->cwd_fd)
 *   /proc/<guest pid>/...                  -> treated as /proc/self/...
 * Returns 0, -ENOENT for a guest fd N that is not open (as Linux's lookup
 * in /proc/self/fd fails), or -ENAMETOOLONG when out is too small.
 */
int proxy_path_rewrite(struct proxy_process *p, const char *in, char *out,
                       size_t outlen);

/* A host call's result as a handler returns it: the value, or -errno read
 * right after the call (the argument is evaluated first). */
static inline long proxy_host_result(long r) { return r < 0 ? -errno : r; }

/*
 * Linux sends SIGPIPE to a writer that gets EPIPE (pipes; sockets unless
 * MSG_NOSIGNAL), as if by kill() from itself. hvrun ignores the host's
 * SIGPIPE; the guest gets its own here. Returns r, so a result can be
 * passed through it.
 */
static inline long proxy_epipe_signal(struct proxy_process *p, long r)
{
    if (r == -EPIPE) {
        siginfo_t info;
        memset(&info, 0, sizeof(info));
        info.si_signo = SIGPIPE;
        info.si_code = SI_USER;
        info.si_pid = p->pid;
        info.si_uid = p->ruid;
        proxy_signal_raise(p, SIGPIPE, &info);
    }
    return r;
}

#endif
