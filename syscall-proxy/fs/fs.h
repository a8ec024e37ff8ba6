/*
 * fs.h - what fs/ (paths, metadata, synthesised /proc and /sys, the
 * private /tmp, --verify's journal, scratch directories, locks) offers the
 * other subsystems. Only fs/'s own files include fs/internal.h.
 */
#ifndef PROXY_FS_FS_H
#define PROXY_FS_FS_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "proxy.h"
#include "kernel.h"

struct flock;
struct iovec;
struct proxy_dircache;
struct proxy_fd;
struct proxy_ns;
struct proxy_preserve;
struct proxy_vfd;

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
        info.si_uid = p->cred.ruid;
        proxy_signal_raise(p, SIGPIPE, &info);
    }
    return r;
}

/* ---- canonical metadata (fs/fsmeta.c) ------------------------------------ */
/* What a call changed in a file. */
enum proxy_meta_change {
    PROXY_META_CONTENT, /* data or directory entries: mtime and ctime */
    PROXY_META_ATTRS,   /* mode, owner, link count: ctime only */
};

/*
 * Gives the guest its own /tmp. With dir NULL a fresh host directory
 * /tmp/hvrun-tmp.XXXXXX (mode 1777, like /tmp) is made and deleted with
 * everything in it by proxy_process_destroy; with a directory (--tmp DIR)
 * that directory is used as it is and never deleted. Guest paths "/tmp"
 * and "/tmp/..." then name it. Returns 0, or -errno with a one-line reason
 * naming the directory in why.
 */

/* Drops one reference to a directory cache (NULL is fine); the fd table
 * calls it when a slot is closed or replaced. */
void proxy_dircache_put(struct proxy_dircache *c);

/* The file behind a guest fd changed (CONTENT counts for regular files
 * only: pipes, sockets and terminals are skipped). */
void proxy_meta_note_fd(struct proxy_process *p, int guest_fd,
                        enum proxy_meta_change what);

/*
 * CPython's bytecode caches made outside the run (fsmeta.c). A .pyc in a
 * __pycache__ directory records its source's mtime and size; the guest
 * sees an unwritten source's mtime as the epoch, so every cache made
 * natively would look stale and CPython would compile each module it
 * imports in every run. When a .pyc opened read-only records its source's
 * host mtime and size, the run reads the header as the source's mtime the
 * guest sees: the cache CPython would have written for that source inside
 * the run. Only read, pread and their vector forms show it (mmap,
 * sendfile, splice and copy_file_range show the file's own bytes).
 */
void proxy_meta_pyc_opened(struct proxy_process *p, int guest_fd,
                           int host_dirfd, const char *path, int flags);
/* got bytes of f's file from offset start were read into iov[0..n). */
struct iovec;
void proxy_meta_pyc_read(const struct proxy_fd *f, int64_t start,
                         const struct iovec *iov, int n, size_t got);

/* got bytes of inotify events were read into iov[0..n): their rename
 * cookies become the run's own (fs.c). */
void proxy_inotify_read_done(const struct iovec *iov, int n, size_t got);

/* lseek on such a directory: true (and *result set) when it handled it. */
bool proxy_meta_dir_seek(struct proxy_process *p, int guest_fd, int64_t off,
                         int whence, long *result);

/* new_guest_fd was dup'd from old_guest_fd: it shares the listing. */
void proxy_meta_fd_dup(struct proxy_process *p, int old_guest_fd,
                       int new_guest_fd);

/* ---- POSIX record locks (fs/plock.c) ------------------------------------- */
/* POSIX record locks (plock.c). A guest fd of host_fd's file is being
 * closed: the process's locks on that file go. */
void proxy_plocks_file_closed(struct proxy_fdtable *t, int host_fd);
void proxy_plocks_destroy(struct proxy_fdtable *t);
/* Whether the process holds a POSIX record lock (a gdb checkpoint's copy
 * would not: refused there). */
bool proxy_plocks_held(const struct proxy_fdtable *t);

/* flock and OFD locks the host granted on guest_fd (op: flock's; fl:
 * F_OFD_SETLK's), noted for /proc/locks in a context of the open file
 * description, shared and dropped as the description's guest fds are
 * (plock.c). */
struct proxy_lockdesc;
void proxy_plock_noted_flock(struct proxy_process *p, int guest_fd, int op);
void proxy_plock_noted_ofd(struct proxy_process *p, int guest_fd,
                           const struct flock *fl);
void proxy_lockdesc_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_lockdesc_put(struct proxy_lockdesc *d);

/* F_GETLK/F_SETLK/F_SETLKW on guest process p (plock.c); *copy_out says
 * that fl was updated for the guest. */
long proxy_plock_fcntl(struct proxy_process *p, int host_fd, int cmd,
                       struct flock *fl, bool *copy_out);

/* ---- paths, opens, stat (fs/fs.c) ---------------------------------------- */
/* A replay's recorded stat in *st when st is the host's stat of a
 * recorded file's copy (fs.c); else *st as it was. */
void proxy_file_tap_restat(struct proxy_process *p, struct stat *st);

/* For opens outside open(2) (the ELF loader's): a replay's copy of
 * (dirfd, path) or -1; and, recording, the file opened as host_fd. */
int proxy_file_tap_replayed(struct proxy_process *p, int dirfd,
                            const char *path, int flags);
void proxy_file_tap_note(struct proxy_process *p, int dirfd, const char *path,
                         int flags, int host_fd);

/* Each family file exports its table, ending with {-1, NULL, NULL}. */
extern const struct proxy_syscall proxy_fs_syscalls[];

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
 * -EACCES for /proc/1's links to a caller that may not ptrace init, or
 * -ENAMETOOLONG when out is too small.
 */
int proxy_path_rewrite(struct proxy_process *p, const char *in, char *out,
                       size_t outlen);

/* ---- names, directories, links (fs/namei.c) ------------------------------ */
/* directories, links, renames (namei.c); modes, owners, times, sizes,
 * syncs, xattrs (attr.c). */
extern const struct proxy_syscall proxy_namei_syscalls[];

/* ---- attributes (fs/attr.c) ---------------------------------------------- */
extern const struct proxy_syscall proxy_attr_syscalls[];

/* ---- RLIMIT_FSIZE (fs/fsize.c) ------------------------------------------- */
/* A write of iov[0..*n) at pos (-1: the fd's position): cut at the limit
 * (iov and *n shortened), or -EFBIG (and SIGXFSZ) when it starts there. */
long proxy_fsize_clip_write(struct proxy_process *p, int host_fd, int64_t pos,
                            struct iovec *iov, int *n);

/* ---- --verify's journal of changed files (fs/preserve.c) ----------------- */
/* A journal in dir (which exists, mode 0700): journal.h's records and
 * copies go there. */
struct proxy_preserve *proxy_preserve_open(const char *dir);
void proxy_preserve_close(struct proxy_preserve *pr);
/* Whether the journal is still empty (the run has changed no file). */
bool proxy_preserve_untouched(const struct proxy_preserve *pr);
/* A checkpoint's copy of the run, restored after its journal directory
 * was emptied: a fresh journal file there (the old one is gone, and the
 * copy's changes must be undone as the original's were). 0 or -errno. */
int proxy_preserve_reopen(struct proxy_preserve *pr);

/* After a call made the name (dirfd, path), or the file behind host_fd
 * (open O_CREAT). */
void proxy_preserve_created(struct proxy_process *p, int host_dirfd,
                            const char *host_path);

/* ---- hvrun's scratch directories in /tmp (fs/scratch.c) ------------------ */
/* mkdtemp(template) (rewritten in place), checked to be ours and 0700,
 * with a lock inside held through *lock_fd while the caller lives.
 * 0 or -errno. */
int proxy_scratch_make(char *template_path, int *lock_fd);
/* The same at a name chosen before (proxy_scratch_name); -EEXIST when
 * something is there. */
int proxy_scratch_make_named(const char *path, int *lock_fd);
/* Fills the template's trailing XXXXXX with random letters and digits,
 * as mkdtemp would, without making anything. 0 or -errno. */
int proxy_scratch_name(char *template_path);

/* Removes the directory and all in it (nothing followed), drops the lock. */
void proxy_scratch_remove(const char *path, int lock_fd);

/* Removes the scratch directories of runs that are gone (SIGKILL);
 * returns how many. */
int proxy_scratch_sweep(void);

/* ---- openat2 (fs/openat2.c) ---------------------------------------------- */
extern const struct proxy_syscall proxy_openat2_syscalls[];

/* ---- file handles (fs/handle.c) ------------------------------------------ */
/* name_to_handle_at and open_by_handle_at with handles hvrun mints. */
extern const struct proxy_syscall proxy_handle_syscalls[];
extern const struct proxy_syscall proxy_mount_api_syscalls[];

/* The core file of p, killed by signo whose default action dumps core
 * (fs/coredump.c): true when one was written. */
bool proxy_core_dump(struct proxy_process *p, int signo);

/* ---- quotactl (fs/quota.c) ----------------------------------------------- */
extern const struct proxy_syscall proxy_quota_syscalls[];

/* ---- sysfs(2) (fs/filesystems.c) ----------------------------------------- */
/* sysfs(2) from the host's /proc/filesystems list (fs/filesystems.c). */
extern const struct proxy_syscall proxy_filesystems_syscalls[];

/* ---- ustat(2) (fs/ustat.c) ----------------------------------------------- */
extern const struct proxy_syscall proxy_ustat_syscalls[];

/* ---- file_getattr, file_setattr (fs/file_attr.c) ------------------------- */
extern const struct proxy_syscall proxy_file_attr_syscalls[];

/* ---- synthesised /proc and /sys files (fs/vfs.c) ------------------------- */
/*
 * True when reads from guest_fd must come from detcore's random stream:
 * the fd is the host's /dev/urandom or /dev/random (char 1:9 or 1:8, by
 * whatever name or dup it was reached) and virtualize_random is on. The
 * device is looked at once per guest fd (one fstat) and remembered in the
 * slot. Never blocks, whatever the host's /dev/random would do.
 */
bool proxy_vfs_fd_det_random(struct proxy_process *p, int guest_fd);

/* Fills the host iovecs (guest memory, from vmm_as_host_iov) with random
 * bytes from detcore; returns the bytes filled (read's result). */
long proxy_vfs_random_read(struct proxy_process *p, const struct iovec *iov,
                           int n);

/*
 * What readlink of a guest fd or cwd link says, in guest terms: host_link
 * is the rewritten path readlink read (only /proc/self/fd/N links are
 * changed), target[0..n) its answer, cap target's size. A private /tmp
 * reads as /tmp again and a virtual file as its /proc name. Returns the new
 * length (no NUL is added).
 */
long proxy_vfs_link_fixup(const struct proxy_process *p, const char *host_link,
                          char *target, long n, size_t cap);

/* ---- the private /tmp, hermetic NSS (fs/hermetic.c) ---------------------- */
/* Makes a host path under /tmp (the run's cwd or program) reachable at
 * the same absolute path inside the private /tmp. Returns 0 or -errno. */
int proxy_tmp_expose(struct proxy_process *p, const char *host_path);
int proxy_tmp_setup(struct proxy_process *p, const char *dir, char *why,
                    size_t why_len);

/* Deletes an owned private /tmp (proxy_process_destroy calls it). */
void proxy_tmp_cleanup(struct proxy_process *p);
/* An owned private /tmp is made when the guest first names /tmp (most
 * programs never do; making and removing it cost ~4 ms a run on an ext4
 * whose block frees are slow); this makes it now (--fs-policy's Landlock
 * rules need it to exist). 0 or -errno. */
int proxy_tmp_make_now(void);
/* Whether the owned private /tmp has been made (a checkpoint's copy of
 * the run would share its files with the original: refused). */
bool proxy_tmp_made(void);

/*
 * The forward mapping, for absolute guest paths: returns 1 with the host
 * path in out when path names the guest's /tmp or something under it, 0
 * when it does not (out untouched) or no private /tmp is set up,
 * -ENAMETOOLONG. ".." leaving /tmp is resolved by name, as the guest
 * expects /tmp/.. to be /.
 */
int proxy_tmp_map(const struct proxy_process *p, const char *path, char *out,
                  size_t outlen);

/* The reverse mapping, in place: a host path inside the private /tmp
 * becomes /tmp/...; returns the new length of path[0..n) (unchanged when
 * the result would not fit in cap bytes). No NUL is added. */
size_t proxy_tmp_unmap(const struct proxy_process *p, char *path, size_t n,
                       size_t cap);

/*
 * /etc/nsswitch.conf as the guest reads it: every database's sources cut
 * to "files" (comments and blank lines kept), so passwd, group and hosts
 * lookups read only /etc files and never reach sssd, systemd-userdb, LDAP
 * or DNS. in is the host's file (NULL: it has none, and glibc's databases
 * are listed). Returns a malloc'ed string and its length, or NULL.
 */
char *proxy_nsswitch_files_only(const char *in, size_t len, size_t *out_len);

/*
 * True when connect() to the AF_UNIX path (len bytes, not necessarily
 * NUL-terminated) must fail with -ENOENT: nscd's socket and systemd-userdb
 * services, so glibc falls back to /etc files. Only while the host is
 * virtualised (virtualize_host).
 */
bool proxy_hermetic_socket_blocked(const struct proxy_process *p,
                                   const char *path, size_t len);

/* ---- /proc/<pid> files that act on a process (fs/procfile.c) ------------- */
/* The namespace an fd of /proc/PID/ns/NAME holds: true with its type and
 * namespace (NULL: the initial one); false for any other fd. */
bool proxy_procfile_ns(const struct proxy_fd *f, int *type,
                       struct proxy_ns **ns);

/* A transfer on such an fd (its slot has a vfd context): at the fd's
 * position, or at offset with at_offset. Returns bytes or -errno. */
/* NS_GET_USERNS, NS_GET_PARENT, NS_GET_NSTYPE, NS_GET_OWNER_UID on a
 * namespace fd (procfile.c; -ENOTTY for another fd or request). */
/* The PROCMAP_QUERY ioctl of a /proc/N/maps fd (procmap_query.c):
 * maps_pid is N's run pid. */
long proxy_procmap_query(struct proxy_process *p, int maps_pid, gva_t arg);
#define PROXY_PROCMAP_QUERY 0xC0686611U /* _IOWR('f', 17, 104 bytes) */

long proxy_procfile_ns_ioctl(struct proxy_process *p, const struct proxy_fd *f,
                             unsigned int req, gva_t arg);
long proxy_procfile_xfer(struct proxy_process *p, int guest_fd, bool into_guest,
                         bool at_offset, int64_t offset,
                         const struct iovec *iov, int n);

/* The fd table's hooks, as for signalfd and timerfd contexts. */
void proxy_procfile_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_procfile_put(struct proxy_vfd *v);

/* ---- descriptors passed in SCM_RIGHTS (fs/fdpass.c) ------------------------ */
/* p sends its guest fd: the notes of its slot (an exe link's, a procfile
 * context, /proc/N's) are kept for the description. */
void proxy_fd_notes_sending(struct proxy_process *p, int guest_fd);
/* guest_fd was installed from a received host fd: the notes its
 * description was sent with, if any, are copied to its slot. */
void proxy_fd_notes_received(struct proxy_process *p, int guest_fd);

#endif
