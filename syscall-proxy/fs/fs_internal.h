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
 *   /tmp, /tmp/...                         -> p->tmp_host, ... (hermetic.c)
 *   /proc/1/... of the virtual init        -> proxy_vfs_init_route's answer
 * Returns 0, -ENOENT for a guest fd N that is not open (as Linux's lookup
 * in /proc/self/fd fails) or a name under /proc/1 that is not there,
 * -EACCES for /proc/1/exe, or -ENAMETOOLONG when out is too small.
 */
int proxy_path_rewrite(struct proxy_process *p, const char *in, char *out,
                       size_t outlen);

/* open, openat, creat and openat2 (fs.c): guest path at path_gva under
 * guest_dirfd; resolve is openat2's RESOLVE_* (0: none), the host's walk
 * applies them. Returns the new guest fd or -errno. */
long proxy_fs_openat(struct proxy_process *p, uint64_t guest_dirfd,
                     gva_t path_gva, int flags, uint64_t mode,
                     uint64_t resolve);

/* A host call's result as a handler returns it: the value, or -errno read
 * right after the call (the argument is evaluated first). */
/* An O_PATH host fd (O_CLOEXEC) for the guest path at gva, through the
 * guest's view of the filesystem (fs.c), or a negative errno. */
long proxy_fs_open_path(struct proxy_process *p, gva_t gva, bool follow_last);
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

/*
 * The signal mask of ppoll, pselect6, epoll_pwait(2): it replaces the
 * caller's while the call waits (a handler's frame saves the caller's);
 * _end puts the caller's back once the call is over (not parked) and
 * passes r through (io.c).
 */
long proxy_call_mask_apply(struct proxy_process *p, gva_t mask_gva,
                           uint64_t size);
long proxy_call_mask_end(struct proxy_process *p, long r);

/* ---- file metadata as the guest sees it (fsmeta.c) ----------------------- */

/*
 * All of these do nothing unless detcore virtualises metadata
 * (proxy_meta_on), so the handlers behave as before without it. The note
 * calls follow a successful host call; host (dirfd, path) pairs are the
 * ones the call itself used.
 */
struct statx;
struct statfs;
struct timespec;

bool proxy_meta_on(const struct proxy_process *p);

/* Canonical statx/statfs results (stat results go to det_stat_canon). */
void proxy_meta_statx_canon(struct proxy_process *p, struct statx *stx);
void proxy_meta_statfs_canon(struct proxy_process *p, struct statfs *sfs);

/* What a call changed in a file. */
enum proxy_meta_change {
    PROXY_META_CONTENT, /* data or directory entries: mtime and ctime */
    PROXY_META_ATTRS,   /* mode, owner, link count: ctime only */
};

/* The file behind a guest fd changed (CONTENT counts for regular files
 * only: pipes, sockets and terminals are skipped). */
void proxy_meta_note_fd(struct proxy_process *p, int guest_fd,
                        enum proxy_meta_change what);
/* The file (dirfd, path) names changed; at_flags may hold
 * AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH. */
void proxy_meta_note_at(struct proxy_process *p, int host_dirfd,
                        const char *host_path, int at_flags,
                        enum proxy_meta_change what);
/* The directory holding (dirfd, path) gained or lost an entry. */
void proxy_meta_note_parent(struct proxy_process *p, int host_dirfd,
                            const char *host_path);
/* (dirfd, path) was just created (mkdir, mknod, symlink, link): it and its
 * directory changed now. */
void proxy_meta_note_created(struct proxy_process *p, int host_dirfd,
                             const char *host_path);
/* --verify: (dirfd, path) is a new name (link), to remove before run 2. */
void proxy_meta_log_created(struct proxy_process *p, int host_dirfd,
                            const char *host_path);
/* utimensat and friends: ts is the guest's pair as timespecs (NULL: both
 * now; UTIME_NOW and UTIME_OMIT honoured). A NULL host_path means the file
 * is host_dirfd itself (futimens). */
void proxy_meta_note_times(struct proxy_process *p, int host_dirfd,
                           const char *host_path, int at_flags,
                           const struct timespec *ts);

/* What a name pointed to before a call that removes or replaces it
 * (unlink, rmdir, rename); the path must outlive the note call. */
struct proxy_meta_name {
    int host_dirfd;
    const char *host_path;
    bool exists, is_dir;
    uint64_t nlink, dev, ino;
};
void proxy_meta_name_get(struct proxy_process *p, int host_dirfd,
                         const char *host_path, struct proxy_meta_name *n);
/* After a successful unlink/rmdir of victim. */
void proxy_meta_note_unlink(struct proxy_process *p,
                            const struct proxy_meta_name *victim);
/* After a successful renameat2(from, to, flags). */
void proxy_meta_note_rename(struct proxy_process *p,
                            const struct proxy_meta_name *from,
                            const struct proxy_meta_name *to,
                            unsigned int flags);

/*
 * open, openat, creat. Before the host open: whether it will create the
 * file (O_CREAT and no such name now). After a successful one:
 *     proxy_meta_note_open(p, host_fd, hp.path, flags, created);
 * notes a created or truncated file, and a created file's directory.
 */
bool proxy_meta_open_creates(struct proxy_process *p, int host_dirfd,
                             const char *host_path, int flags);
void proxy_meta_note_open(struct proxy_process *p, int host_fd,
                          const char *guest_path_after_rewrite, int flags,
                          bool created);

/* Directories in name order: true when guest_fd is a directory whose
 * getdents hvrun serves from its sorted listing (proxy_meta_getdents). */
bool proxy_meta_dir_sorted(struct proxy_process *p, int guest_fd);
/* getdents64, or with old_layout getdents; the result for the guest. */
long proxy_meta_getdents(struct proxy_process *p, int guest_fd, gva_t gva,
                         uint64_t count, bool old_layout);
/* lseek on such a directory: true (and *result set) when it handled it. */
bool proxy_meta_dir_seek(struct proxy_process *p, int guest_fd, int64_t off,
                         int whence, long *result);
/* new_guest_fd was dup'd from old_guest_fd: it shares the listing. */
void proxy_meta_fd_dup(struct proxy_process *p, int old_guest_fd,
                       int new_guest_fd);

/*
 * CPython keys its bytecode caches (__pycache__ directories of .pyc files) by the source's
 * mtime, which hvrun shows as the epoch for files the guest did not write:
 * every cache made outside hvrun looks stale, and a run would rewrite the
 * host's caches and so change the next run's input. With metadata
 * virtualised, creating __pycache__ or a file in one is refused with
 * EACCES, which CPython treats as "do not cache". Where no cache can
 * predate the run it is allowed: in the private /tmp hvrun made, and in a
 * directory the run made (for __pycache__ itself, its parent; for a file,
 * the __pycache__ it goes in). is_dir: path (host, under host_dirfd) is
 * the directory being made, else a file being created.
 */
bool proxy_meta_cache_write_blocked(struct proxy_process *p, int host_dirfd,
                                    const char *path, bool is_dir);
/* mkdir made path: a directory of the run's own (det_note_created). */
void proxy_meta_note_mkdir(struct proxy_process *p, int host_dirfd,
                           const char *path);

#endif
