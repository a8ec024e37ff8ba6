/*
 * internal.h - what the files of fs/ share among themselves (formerly
 * fs_internal.h): opens by guest path, metadata notes, --verify's hooks.
 */
#ifndef PROXY_FS_INTERNAL_H
#define PROXY_FS_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"
#include "fdtable.h"
#include "fs.h"

struct statfs;
struct statx;

/* A host call's result as a handler returns it: the value, or -errno read
 * right after the call (the argument is evaluated first). */

/*
 * All of these do nothing unless detcore virtualises metadata
 * (proxy_meta_on), so the handlers behave as before without it. The note
 * calls follow a successful host call; host (dirfd, path) pairs are the
 * ones the call itself used.
 */

/* A guest path as the host call takes it: relative to dirfd (a host fd
 * of hvrun's, or AT_FDCWD for an absolute path), rewritten (fs.c). */
enum path_kind {
    PATH_PLAIN,
    PATH_SELF_EXE, /* the guest's /proc/self/exe (readlink answers it) */
    /* another guest's /proc/N/exe, not followed: readlink answers it from
     * that guest's program (fs.exe_of_pid), the path stays the host link
     * /proc/self/exe (lstat: a symlink, as Linux's) */
    PATH_GUEST_EXE,
    /* /proc/N/fd/M of an O_PATH fd of a guest's exe link itself
     * (proxy_fd.exe_link_pid), not followed: readlink answers
     * "/proc/<that guest>/exe" (fs.exe_of_pid), as Linux names the link
     * the fd holds; the host's would name hvrun's own. Followed, such an
     * fd entry is PATH_GUEST_EXE: it leads to the link itself. */
    PATH_EXE_LINK_FD,
    /* /proc/self and /proc/thread-self themselves, not followed: readlink
     * answers the guest's "<pid>" and "<pid>/task/<tid>" (the host's
     * would name hvrun's own pid) */
    PATH_SELF_LINK,
    PATH_THREAD_SELF_LINK,
    /* a guest's /proc/N/cwd (its own too), not followed: the host link of
     * its cwd fd (readlink names the directory), whose mode is an fd's;
     * lstat shows Linux's cwd link's, 0777 */
    PATH_CWD_LINK,
    /* a guest's /proc/N/map_files/START-END, not followed: the path is a
     * host link standing for it (/proc/self/exe), readlink answers the
     * mapped file (fs.map_file_pid, fs.map_file_entry), lstat shows the
     * link Linux makes */
    PATH_MAP_FILE_LINK,
};

struct host_path {
    int dirfd;
    enum path_kind kind;
    char path[PROXY_PATH_MAX];
};

static inline int guest_host_fd(struct proxy_process *p, uint64_t guest_fd)
{
    return proxy_fd_host(&p->fds, (int)guest_fd);
}

/* The mode a new inode gets: Linux keeps permission bits and sticky/setid
 * bits and clears what the umask says (the host umask is 0). */
static inline mode_t umasked(const struct proxy_process *p, uint64_t mode)
{
    return (mode_t)mode & 07777 & ~(p->fs.umask & 0777);
}

/*
 * An O_PATH fd for a path, for the calls that have no *at() form on the
 * host (truncate, statfs): the host then acts on /proc/self/fd/<fd> or the
 * fd itself, which checks permissions on the same inode the path names.
 */
static inline int open_o_path(const struct host_path *hp)
{
    int fd = openat(hp->dirfd, hp->path, O_PATH | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* ---- RLIMIT_FSIZE (fs/fsize.c) ------------------------------------------- */
/* A truncate or fallocate of host_fd's file to new_size: -EFBIG (and
 * SIGXFSZ to the caller) when it grows a regular file past the limit. */
long proxy_fsize_check_size(struct proxy_process *p, int host_fd,
                            uint64_t new_size);

/* ---- --verify's journal of changed files (fs/preserve.c) ----------------- */
/* Before a call that may change the content or mode of (dirfd, path), or
 * with follow of what it points to: keeps the object's content before the
 * run, once per object. */
void proxy_preserve_before(struct proxy_process *p, int host_dirfd,
                           const char *host_path, bool follow);

/* The same for the file behind a host fd (fchmod, ftruncate). */
void proxy_preserve_fd(struct proxy_process *p, int host_fd);

/* Before unlink/rmdir of (dirfd, path): the name of an existing object
 * goes away. */
void proxy_preserve_name_gone(struct proxy_process *p, int host_dirfd,
                              const char *host_path);

void proxy_preserve_created_fd(struct proxy_process *p, int host_fd);

/* A rename: _before (which also keeps a file it replaces), then, if the
 * host call succeeded, _renamed. */
struct proxy_preserve_rename {
    bool renamed, exchange, created_from, created_to;
    char from[PROXY_PATH_MAX], to[PROXY_PATH_MAX];
    struct stat from_st, to_st;
};
void proxy_preserve_rename_before(struct proxy_process *p, int from_dirfd,
                                  const char *from, int to_dirfd,
                                  const char *to, unsigned int flags,
                                  struct proxy_preserve_rename *r);
void proxy_preserve_renamed(struct proxy_process *p,
                            const struct proxy_preserve_rename *r);

/* The absolute host path of (dirfd, path), the directory part resolved
 * and the last component as named. 0 or -errno. */
int proxy_abs_path(int dirfd, const char *path, char *out, size_t len);

/* ---- hvrun's scratch directories in /tmp (fs/scratch.c) ------------------ */
/* Removes everything inside the directory dirfd, following no symlink. */
void proxy_remove_contents(int dirfd);

/* ---- paths, opens, stat (fs/fs.c) ---------------------------------------- */
/* open, openat, creat and openat2 (fs.c): guest path at path_gva under
 * guest_dirfd; resolve is openat2's RESOLVE_* (0: none), the host's walk
 * applies them. Returns the new guest fd or -errno. */
long proxy_fs_openat(struct proxy_process *p, uint64_t guest_dirfd,
                     gva_t path_gva, int flags, uint64_t mode,
                     uint64_t resolve);

/* The process's auxiliary vector as /proc/self/auxv gives it, at most
 * len bytes (procfs.c); 0 when there is none. */
size_t proxy_fs_saved_auxv(struct proxy_process *p, void *out, size_t len);

/* A guest path given as a string (not in guest memory) resolved as
 * proxy_fs_host_path does (fs.c). */
long proxy_fs_host_path_str(struct proxy_process *p, const char *path,
                            bool follow_last, struct host_path *hp);

/* -ETXTBSY when (dirfd, path) is the program a live guest runs and the
 * caller may write it (its permission error when not), else 0 (fs.c). */
long proxy_fs_exe_busy(struct proxy_process *p, int dirfd, const char *path,
                       int at_flags);

/* An O_PATH host fd (O_CLOEXEC) for the guest path at gva, through the
 * guest's view of the filesystem (fs.c), or a negative errno. */
long proxy_fs_open_path(struct proxy_process *p, gva_t gva, bool follow_last);

/* fs.c's guest (dirfd, path) decoding: the guest path at gva resolved
 * through the guest's view to a host (dirfd, path), or -errno; relative to
 * the guest cwd (host_path), a guest dirfd (_at), or with AT_* flags
 * (_at_flags). And record/replay's key of a path and a replay's copy of
 * the file opened with flags (-1: none). */
long proxy_fs_host_path(struct proxy_process *p, gva_t gva, bool follow_last,
                        struct host_path *hp);
long proxy_fs_host_path_at(struct proxy_process *p, uint64_t guest_dirfd,
                           gva_t gva, bool follow_last, struct host_path *hp);
long proxy_fs_host_path_at_flags(struct proxy_process *p, uint64_t guest_dirfd,
                                 gva_t gva, int at_flags, bool null_is_empty,
                                 struct host_path *hp);
bool proxy_fs_file_tap_key(const struct host_path *hp, char *key, size_t len);
/* The file the map_files link the last path named (PATH_MAP_FILE_LINK)
 * leads to, as readlink reads it: its length, or -ENOENT (fs.c). */
long proxy_fs_map_file_target(struct proxy_process *p, char *out, size_t cap);
/* Another guest's /proc/N/... (not virtual) as hvrun's own /proc/self/...
 * entry that stands in for it (fs.c): N's process, or NULL (*err < 0:
 * the call fails so). link_itself: the last component is not followed
 * (lstat, O_NOFOLLOW). */
struct proxy_process *proxy_fs_other_proc_stand_in(struct proxy_process *p,
                                                   struct host_path *hp,
                                                   bool link_itself,
                                                   long *err);
int proxy_fs_replayed_file(struct proxy_process *p, const struct host_path *hp,
                           int flags);

/* ---- canonical metadata (fs/fsmeta.c) ------------------------------------ */
bool proxy_meta_on(const struct proxy_process *p);

/* Canonical statx/statfs results (stat results go to det_stat_canon). */
void proxy_meta_statx_canon(struct proxy_process *p, struct statx *stx);
void proxy_meta_statfs_canon(struct proxy_process *p, struct statfs *sfs);

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

/* The host's openat2, again while a scoped walk (RESOLVE_BENEATH,
 * RESOLVE_IN_ROOT) fails with EAGAIN: the fd, or -1 with errno set. */
struct open_how;
long proxy_host_openat2(int dirfd, const char *path, struct open_how *how);

#endif
