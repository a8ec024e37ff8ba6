/*
 * fs.c - file-system syscalls: paths, opens, the stat family, inotify (names,
 * directories and links are in namei.c, modes, owners, times, sizes and
 * xattrs in attr.c).
 *
 * Every guest path goes through rewrite_path() (exported as
 * proxy_path_rewrite) so that names meaning "this process" (/proc/self/exe,
 * /proc/self/fd/N, /dev/stdin...) mean the guest, not hvrun. Every host call
 * is an *at() call: a relative guest path is resolved against the host fd
 * behind the guest dirfd, or p->cwd_fd for AT_FDCWD, never against hvrun's
 * own cwd. hvrun runs with host umask 0, so the guest umask is applied here
 * to every mode that creates an inode (open, creat, mkdir, mknod).
 *
 * Known divergence: when the parent directory has a default POSIX ACL,
 * Linux ignores the umask; here the guest umask is always applied.
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "hooks.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "internal.h"
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "det.h"

/* The guest sees the x86-64 kernel layouts; hvrun copies the host's structs
 * as they are, which is only right while they match. */
_Static_assert(sizeof(struct stat) == 144, "struct stat is not x86-64's");
_Static_assert(sizeof(struct statfs) == 120, "struct statfs is not x86-64's");
_Static_assert(sizeof(struct statx) == 256, "struct statx is not x86-64's");

/* ---- path rewriting ------------------------------------------------------ */

static int format_path(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int format_path(char *out, size_t outlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, outlen, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* A /proc name component as Linux parses it: decimal digits, no sign, no
 * leading zero, fits an int. Returns the number or -1; *end follows it. */
static int parse_proc_number(const char *s, const char **end)
{
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
        return -1;
    long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > INT_MAX)
            return -1;
    }
    *end = s;
    return (int)v;
}

/* s without `prefix` when s starts with it as whole components, else NULL. */
static const char *strip_dir_prefix(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0 || (s[n] != '/' && s[n] != '\0'))
        return NULL;
    return s + n;
}

/* A thread's own files under /proc/thread-self of a thread other than the
 * main one: vfs.c reads them as /proc/self/task/TID/, so not rewritten. */
static bool thread_own_file(const struct proxy_process *p, const char *tail)
{
    return p->tid != p->pid &&
           (strcmp(tail, "/comm") == 0 || strcmp(tail, "/stat") == 0 ||
            strcmp(tail, "/status") == 0 || strcmp(tail, "/syscall") == 0);
}

/* The rest of `path` after a name for the guest's own /proc directory
 * (/proc/self, /proc/thread-self, /proc/<guest pid>), or NULL. Its
 * thread-self is its self but for a thread's own files (above). */
static const char *proc_self_tail(const struct proxy_process *p,
                                  const char *path)
{
    const char *tail = strip_dir_prefix(path, "/proc/self");
    if (!tail) {
        tail = strip_dir_prefix(path, "/proc/thread-self");
        if (tail && thread_own_file(p, tail))
            return NULL;
    }
    if (tail || strncmp(path, "/proc/", 6) != 0)
        return tail;
    const char *end;
    int pid = parse_proc_number(path + 6, &end);
    if (pid < 0 || pid != p->pid || (*end != '/' && *end != '\0'))
        return NULL;
    return end;
}

/* A name /proc/<X>/task/<T>[/rest], X (self or a pid) a live guest
 * process: its parts (self: named as /proc/self), *live whether T is one
 * of X's live threads; false for any other name. */
struct task_name {
    bool self, live;
    int pid;
    const char *end; /* past T */
};

static bool parse_task_name(struct proxy_process *p, const char *in,
                            struct task_name *t)
{
    const char *rest;
    if (!p->world || strncmp(in, "/proc/", 6) != 0)
        return false;
    t->self = (rest = strip_dir_prefix(in, "/proc/self")) != NULL;
    t->pid = t->self ? p->pid : parse_proc_number(in + 6, &rest);
    if (t->pid <= 0 || strncmp(rest, "/task/", 6) != 0)
        return false;
    int tid = parse_proc_number(rest + 6, &t->end);
    struct proxy_process *q = proxy_world_find(p->world, t->pid);
    if (tid <= 0 || (*t->end && *t->end != '/') || !q || q->zombie)
        return false;
    t->live = proxy_world_find_tid(p->world, tid) == q;
    return true;
}

/*
 * /proc/<X>/task/<T>[/rest], T a live thread of guest process X (self or
 * a pid): the host has no directory for a guest tid (hvrun's task/ holds
 * its own), so it is named as X's own directory, as /proc/thread-self's
 * names are (/proc/X/ itself, then rest): opendir, a glob of task/<*>/,
 * its fd and ns. T's own comm, stat, status and syscall stay as they are:
 * vfs.c serves them as T's. Returns in, or the new name in buf.
 */
static const char *task_dir_as_process(struct proxy_process *p,
                                       const char *in, char *buf, size_t cap)
{
    struct task_name t;
    if (!parse_task_name(p, in, &t) || !t.live ||
        !strcmp(t.end, "/comm") || !strcmp(t.end, "/stat") ||
        !strcmp(t.end, "/status") || !strcmp(t.end, "/syscall"))
        return in;
    /* (/proc/self/ with its "/": the directory, not the link; /proc/N
     * without: vfs.c knows the directory by that name) */
    int n = t.self ? snprintf(buf, cap, "/proc/self%s", *t.end ? t.end : "/")
                   : snprintf(buf, cap, "/proc/%d%s", t.pid,
                              strcmp(t.end, "/") ? t.end : "");
    return n < 0 || (size_t)n >= cap ? in : buf;
}

/*
 * /proc/<X>/task/<T>[/rest], X a live guest process and T a well-formed
 * number that is none of X's live threads (one that exited, or another
 * process's): ENOENT, as on Linux. Passed on, the name would be hvrun's
 * own host /proc/self/task/T, which exists where a thread of hvrun has
 * that host tid (a pid namespace's small ones: LTP's tgkill03 waited for
 * its exited thread's directory to go).
 */
static bool task_gone(struct proxy_process *p, const char *in)
{
    struct task_name t;
    return parse_task_name(p, in, &t) && !t.live;
}

/* "<N>[/rest]" under /proc/self/<dir>/ becomes the host fd's entry. A
 * malformed N is left alone (the host lookup fails the same way); a well
 * formed N that is not an open guest fd is -ENOENT, as on Linux. */
static int rewrite_fd_entry(struct proxy_process *p, const char *dir,
                            const char *s, char *out, size_t outlen)
{
    const char *rest;
    int guest_fd = parse_proc_number(s, &rest);
    if (guest_fd < 0 || (*rest != '/' && *rest != '\0'))
        return format_path(out, outlen, "/proc/self/%s/%s", dir, s);
    int host_fd = proxy_fd_host(&p->fds, guest_fd);
    if (host_fd < 0)
        return -ENOENT;
    if (strcmp(dir, "fdinfo") == 0)
        p->fs.fdinfo_guest_fd = guest_fd;
    return format_path(out, outlen, "/proc/self/%s/%d%s", dir, host_fd, rest);
}

/*
 * /proc/<owner>/fd/<s>: rewrite_fd_entry, and when the fd is an O_PATH fd
 * of a guest's exe link itself (proxy_fd.exe_link_pid) its kind: followed
 * it leads to that link (PATH_GUEST_EXE: an O_PATH open of it is one
 * again), not followed readlink names it (PATH_EXE_LINK_FD).
 */
static int rewrite_fd_link(struct proxy_process *p,
                           struct proxy_process *owner, const char *s,
                           bool follow_last, char *out, size_t outlen,
                           enum path_kind *kind)
{
    int r = rewrite_fd_entry(owner, "fd", s, out, outlen);
    const char *rest;
    int guest_fd = parse_proc_number(s, &rest);
    const struct proxy_fd *f = r == 0 && guest_fd >= 0 && !*rest
                                   ? proxy_fd_get(&owner->fds, guest_fd)
                                   : NULL;
    if (f && f->exe_link_pid) {
        *kind = follow_last ? PATH_GUEST_EXE : PATH_EXE_LINK_FD;
        p->fs.exe_of_pid = f->exe_link_pid;
    }
    return r;
}

static int rewrite_path(struct proxy_process *p, const char *in,
                        bool follow_last, char *out, size_t outlen,
                        enum path_kind *kind);

/* proc_map_files_get_link: following a map_files link (opening or
 * stat'ing the file) takes CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE in the
 * initial user namespace (checkpoint_restore_ns_capable). */
static bool map_files_followable(const struct proxy_process *p)
{
    return proxy_ns_init_capable(p) &&
           (!proxy_cap_dropped(p, CAP_SYS_ADMIN) ||
            !proxy_cap_dropped(p, CAP_CHECKPOINT_RESTORE));
}

/*
 * /proc/<q>/map_files/<entry>[/rest]: one link per mapping of a file that
 * q's maps shows, named START-END as its first column, to that file. hvrun
 * serves it from q's mappings (the host's map_files is hvrun's own
 * memory). Followed, it is the file's name, rewritten as the guest's;
 * not followed, a host link stands for it (PATH_MAP_FILE_LINK).
 */
static int rewrite_map_file(struct proxy_process *p, struct proxy_process *q,
                            const char *entry, bool follow_last, char *out,
                            size_t outlen, enum path_kind *kind)
{
    char name[sizeof(p->fs.map_file_entry)];
    const char *rest = strchr(entry, '/');
    size_t len = rest ? (size_t)(rest - entry) : strlen(entry);
    struct proxy_mapping m;
    if (len >= sizeof(name))
        return -ENOENT;
    memcpy(name, entry, len);
    name[len] = '\0';
    if (!proxy_procfs_map_file(q, name, &m))
        return -ENOENT;
    if (follow_last || rest) {
        char file[PROXY_PATH_MAX];
        if (!map_files_followable(p))
            return -EPERM;
        if (format_path(file, sizeof(file), "%s%s", m.name, rest ? rest : "") <
            0)
            return -ENAMETOOLONG;
        return rewrite_path(p, file, follow_last, out, outlen, kind);
    }
    *kind = PATH_MAP_FILE_LINK;
    p->fs.map_file_pid = q->pid;
    memcpy(p->fs.map_file_entry, name, len + 1);
    return format_path(out, outlen, "/proc/self/exe");
}

/*
 * tail is what follows /proc/self. With follow_last false the last
 * component is not followed (lstat, readlink, O_NOFOLLOW), so exe stays the
 * host link /proc/self/exe and readlink answers it from p->exe_path.
 */
static int rewrite_proc_self(struct proxy_process *p, const char *tail,
                             bool follow_last, char *out, size_t outlen,
                             enum path_kind *kind)
{
    const char *rest;
    if (strcmp(tail, "/exe") == 0) {
        *kind = PATH_SELF_EXE;
        return format_path(out, outlen, "%s",
                           follow_last ? p->exe_path : "/proc/self/exe");
    }
    /* "exe/", "exe/x": the link followed (no directory: ENOTDIR) */
    if ((rest = strip_dir_prefix(tail, "/exe")) && *rest)
        return format_path(out, outlen, "%s%s", p->exe_path, rest);
    /* The guest's root is the host's: hvrun has no chroot. */
    if ((rest = strip_dir_prefix(tail, "/root")) && (*rest || follow_last))
        return format_path(out, outlen, "/%s", *rest ? rest + 1 : "");
    if ((rest = strip_dir_prefix(tail, "/cwd"))) {
        if (!*rest && !follow_last) {
            *kind = PATH_CWD_LINK;
            p->fs.cwd_link_pid = p->pid;
        }
        return format_path(out, outlen, "/proc/self/fd/%d%s", p->fs.cwd_fd,
                           rest);
    }
    if (strncmp(tail, "/fd/", 4) == 0)
        return rewrite_fd_link(p, p, tail + 4, follow_last, out, outlen, kind);
    if (strncmp(tail, "/fdinfo/", 8) == 0)
        return rewrite_fd_entry(p, "fdinfo", tail + 8, out, outlen);
    if (strncmp(tail, "/map_files/", 11) == 0 && tail[11])
        return rewrite_map_file(p, p, tail + 11, follow_last, out, outlen,
                                kind);
    return format_path(out, outlen, "/proc/self%s", tail);
}

/* /proc/<another guest's pid>/<entry>...: its tail from /<entry>.
 * /proc/N/ns/NAME becomes hvrun's own /proc/self/ns/NAME, which the host
 * has (stat, readlink: gdb asks whether its inferior shares its
 * namespaces), and p->fs.ns_of_pid names N, whose namespace the virtual
 * ns file then stands for: its number in stat and readlink, the fd an
 * open gives (vfs.c, proxy_vfs_ns_owner). */
static struct proxy_process *other_guest_entry(const struct proxy_process *p,
                                               const char *path,
                                               const char *entry,
                                               const char **tail)
{
    if (strncmp(path, "/proc/", 6) != 0 || !p->world)
        return NULL;
    const char *end;
    int pid = parse_proc_number(path + 6, &end);
    if (pid <= 0 || strncmp(end, entry, strlen(entry)) != 0)
        return NULL;
    struct proxy_process *q = proxy_world_find(p->world, pid);
    if (!q || q->zombie || q == p)
        return NULL;
    *tail = end;
    return q;
}

/* /dev/stdin, /dev/stdout, /dev/stderr: their guest fd, or -1. */
static int std_stream_fd(const char *path)
{
    static const char *const names[] = {"/dev/stdin", "/dev/stdout",
                                        "/dev/stderr"};
    for (int fd = 0; fd < 3; fd++) {
        if (strcmp(path, names[fd]) == 0)
            return fd;
    }
    return -1;
}

/*
 * The one place a guest path becomes a host path (see proxy_path_rewrite).
 * /dev/stdin and friends are host symlinks to /proc/self/fd/N, so when the
 * last component is not followed they stay as they are: lstat and readlink
 * then see the same link the guest would ("/proc/self/fd/0").
 */
static int rewrite_path(struct proxy_process *p, const char *in,
                        bool follow_last, char *out, size_t outlen,
                        enum path_kind *kind)
{
    *kind = PATH_PLAIN;
    p->fs.ns_of_pid = 0;
    if (in[0] != '/')
        return format_path(out, outlen, "%s", in);
    if (task_gone(p, in))
        return -ENOENT;
    char as_process[PROXY_PATH_MAX];
    in = task_dir_as_process(p, in, as_process, sizeof(as_process));
    if (!follow_last && strcmp(in, "/proc/self") == 0)
        *kind = PATH_SELF_LINK;
    else if (!follow_last && strcmp(in, "/proc/thread-self") == 0)
        *kind = PATH_THREAD_SELF_LINK;
    if (*kind != PATH_PLAIN)
        return format_path(out, outlen, "%s", in);
    const char *tail = proc_self_tail(p, in);
    if (tail)
        return rewrite_proc_self(p, tail, follow_last, out, outlen, kind);
    /* Its exe and cwd, followed: its program, its directory. */
    struct proxy_process *q;
    if ((q = other_guest_entry(p, in, "/ns/", &tail))) {
        p->fs.ns_of_pid = q->pid; /* whose namespace (vfs.c) */
        return format_path(out, outlen, "/proc/self%s", tail);
    }
    /* Its links, read or followed as Linux's proc_fd_access_allowed lets
     * the caller (ptrace_may_access): its program, its directory, its
     * root (the host's too: gdb opens libraries by it), its fds. */
    if ((q = other_guest_entry(p, in, "/exe", &tail)) &&
        (!tail[4] || tail[4] == '/')) {
        if (!proxy_ptrace_may_access(p, q))
            return -EACCES;
        if (follow_last || tail[4]) /* "exe/": followed (ENOTDIR) */
            return format_path(out, outlen, "%s%s", q->exe_path, tail + 4);
        *kind = PATH_GUEST_EXE;
        p->fs.exe_of_pid = q->pid;
        return format_path(out, outlen, "/proc/self/exe");
    }
    if ((q = other_guest_entry(p, in, "/cwd", &tail)) &&
        (tail[4] == '/' || !tail[4])) {
        if (!proxy_ptrace_may_access(p, q))
            return -EACCES;
        if (!tail[4] && !follow_last) {
            *kind = PATH_CWD_LINK;
            p->fs.cwd_link_pid = q->pid;
        }
        return format_path(out, outlen, "/proc/self/fd/%d%s", q->fs.cwd_fd,
                           tail + 4);
    }
    if ((q = other_guest_entry(p, in, "/root", &tail)) &&
        (tail[5] == '/' || tail[5] == '\0'))
        return !proxy_ptrace_may_access(p, q) ? -EACCES
               : tail[5] || follow_last
                   ? format_path(out, outlen, "/%s", tail[5] ? tail + 6 : "")
                   : format_path(out, outlen, "/proc/self/root");
    if ((q = other_guest_entry(p, in, "/map_files/", &tail)) && tail[11])
        return !proxy_ptrace_may_access(p, q)
                   ? -EACCES
                   : rewrite_map_file(p, q, tail + 11, follow_last, out, outlen,
                                      kind);
    if ((q = other_guest_entry(p, in, "/fd/", &tail)))
        return !proxy_ptrace_may_access(p, q)
                   ? -EACCES
                   : rewrite_fd_link(p, q, tail + 4, follow_last, out, outlen,
                                     kind);
    if (strncmp(in, "/dev/fd/", 8) == 0)
        return rewrite_fd_link(p, p, in + 8, follow_last, out, outlen, kind);
    int std_fd = follow_last ? std_stream_fd(in) : -1;
    if (std_fd >= 0) {
        char guest_link[16];
        snprintf(guest_link, sizeof(guest_link), "%d", std_fd);
        return rewrite_fd_link(p, p, guest_link, follow_last, out, outlen,
                               kind);
    }
    int tmp = proxy_tmp_map(p, in, out, outlen); /* the private /tmp */
    if (tmp != 0)
        return tmp < 0 ? tmp : 0;
    return format_path(out, outlen, "%s", in);
}

/*
 * rewrite_path, then the links inside the private /tmp resolved (hermetic.c's
 * proxy_tmp_walk): a link there to "/tmp/a" names the guest's /tmp/a, which
 * the host kernel would look for in its own /tmp. host_dirfd is where a
 * relative result is resolved; *made_absolute when the walk gave an
 * absolute host path for a relative one. in is rewritten when a link led
 * elsewhere (a guest path from "/").
 */
static int rewrite_walked(struct proxy_process *p, char in[PROXY_PATH_MAX],
                          int host_dirfd, bool follow_last, bool walk,
                          char *out, size_t outlen, enum path_kind *kind)
{
    int links = 0;
    for (;;) {
        int r = rewrite_path(p, in, follow_last, out, outlen, kind);
        if (r < 0 || *kind != PATH_PLAIN || !walk)
            return r;
        r = proxy_tmp_walk(p, host_dirfd, out, outlen, follow_last, &links);
        if (r < 0)
            return r;
        if (r != PROXY_TMP_WALK_AGAIN)
            return 0;
        if (strlen(out) >= PROXY_PATH_MAX)
            return -ENAMETOOLONG;
        memcpy(in, out, strlen(out) + 1);
    }
}

/* How many times the virtual init's cwd and root links may be followed
 * in one path: Linux's MAXSYMLINKS. */
#define INIT_LINK_HOPS_MAX 40

int proxy_path_rewrite(struct proxy_process *p, const char *in, char *out,
                       size_t outlen)
{
    enum path_kind kind;
    char guest[PROXY_PATH_MAX], routed[PROXY_PATH_MAX];
    if (snprintf(guest, sizeof(guest), "%s", in) >= (int)sizeof(guest))
        return -ENAMETOOLONG;
    for (int init_hops = 0;;) {
        int r = rewrite_walked(p, guest, p->fs.cwd_fd, true, true, out, outlen,
                               &kind);
        /* execve's program, a socket's path: an absolute name under the
         * virtual init's /proc/1 is its (vfs.c), never the host init's (a
         * relative one is left as it is: execveat resolves it against a
         * dirfd this does not know) */
        if (r < 0 || out[0] != '/')
            return r;
        r = proxy_vfs_init_route(p, AT_FDCWD, out, true, routed,
                                 sizeof(routed));
        if (r == PROXY_INIT_ROUTE_NONE)
            return 0;
        if (r < 0)
            return r;
        if (r == PROXY_INIT_ROUTE_HOST)
            return format_path(out, outlen, "%s", routed);
        if (++init_hops > INIT_LINK_HOPS_MAX)
            return -ELOOP;
        memcpy(guest, routed, strlen(routed) + 1);
    }
}

/* ---- decoding guest (dirfd, path) pairs ---------------------------------- */

/* A guest (dirfd, path) in host terms, ready for a host *at() call. */
/* The virtual init's /proc/1 (vfs.c), applied: for PROXY_INIT_ROUTE_HOST
 * hp is what the host call uses, for PROXY_INIT_ROUTE_AGAIN raw is the
 * guest path to rewrite; PROXY_INIT_ROUTE_NONE, or -errno. */
static int init_route(struct proxy_process *p, char raw[PROXY_PATH_MAX],
                      bool follow_last, struct host_path *hp)
{
    char routed[PROXY_PATH_MAX];
    int r = proxy_vfs_init_route(p, hp->dirfd, hp->path, follow_last, routed,
                                 sizeof(routed));
    if (r == PROXY_INIT_ROUTE_HOST) {
        memcpy(hp->path, routed, strlen(routed) + 1);
        hp->dirfd = AT_FDCWD;
    } else if (r == PROXY_INIT_ROUTE_AGAIN) {
        memcpy(raw, routed, strlen(routed) + 1);
    }
    return r;
}

/* The empty path on an O_PATH fd of a guest's exe link itself
 * (proxy_fd.exe_link_pid): that link, whichever guest's (PATH_GUEST_EXE),
 * so that readlinkat(fd, "") reads its program as Linux does. */
static bool exe_link_fd(struct proxy_process *p, uint64_t guest_dirfd,
                        struct host_path *hp)
{
    const struct proxy_fd *f = proxy_fd_get(&p->fds, (int)guest_dirfd);
    if (!f || !f->exe_link_pid)
        return false;
    hp->kind = PATH_GUEST_EXE;
    hp->dirfd = f->host_fd;
    hp->path[0] = '\0';
    p->fs.exe_of_pid = f->exe_link_pid;
    return true;
}

/* A relative name under a guest's fd of another guest's /proc/N (or its
 * task, fd or fdinfo directory): the host fd is hvrun's own /proc/self
 * (vfs.c), so the name becomes the absolute /proc/N/... it means, in
 * place (killall reads "stat" under each /proc/N fd: hvrun answered the
 * caller's own). 0, or -ENAMETOOLONG. */
static int other_proc_dir_name(struct proxy_process *p, uint64_t guest_dirfd,
                               char raw[PROXY_PATH_MAX])
{
    if (!raw[0] || raw[0] == '/')
        return 0;
    const struct proxy_fd *f = proxy_fd_get(&p->fds, (int)guest_dirfd);
    int of = !f ? 0 : f->procdir_pid ? f->procdir_pid : f->listing_pid;
    char full[PROXY_PATH_MAX];
    if (!of || of == p->pid || of == PROXY_INIT_PID ||
        !proxy_vfs_canonical_name(p, f->host_fd, raw, full, sizeof(full)) ||
        !strip_dir_prefix(full, "/proc/self"))
        return 0;
    return format_path(raw, PROXY_PATH_MAX, "/proc/%d%s", of, full + 10);
}

/* The guest path raw (rewritten in place when procguard renames it) in
 * host terms. Without walk the host resolves the links in the private
 * /tmp itself (openat2's RESOLVE_NO_SYMLINKS must see them to refuse). */
static long host_path_walk(struct proxy_process *p, uint64_t guest_dirfd,
                           char raw[PROXY_PATH_MAX], bool follow_last,
                           bool walk, struct host_path *hp)
{
    if (!raw[0] && exe_link_fd(p, guest_dirfd, hp))
        return 0;
    long named = other_proc_dir_name(p, guest_dirfd, raw);
    if (named < 0)
        return named;
    /* A route into procfs the rewrite did not see gets the guest name of
     * what it reached and is rewritten once more (procguard.c). */
    for (int renames = 0, init_hops = 0;;) {
        int host_dirfd = raw[0] == '/'
                             ? AT_FDCWD
                             : proxy_host_dirfd(p, (int)guest_dirfd);
        if (host_dirfd < 0 && host_dirfd != AT_FDCWD)
            return host_dirfd;
        int r = rewrite_walked(p, raw, host_dirfd, follow_last, walk,
                               hp->path, sizeof(hp->path), &hp->kind);
        if (r < 0)
            return r;
        hp->dirfd = hp->path[0] == '/' ? AT_FDCWD : host_dirfd;
        r = init_route(p, raw, follow_last, hp);
        if (r == PROXY_INIT_ROUTE_AGAIN) {
            if (++init_hops > INIT_LINK_HOPS_MAX)
                return -ELOOP;
            continue;
        }
        if (r != PROXY_INIT_ROUTE_NONE)
            return r < 0 ? r : 0; /* by /proc/1's rules, not a host walk */
        r = proxy_proc_confine(p, hp->dirfd, hp->path, follow_last, raw,
                               PROXY_PATH_MAX);
        if (r <= 0)
            return r;
        if (renames++ > 0)
            return -ELOOP;
    }
}

/*
 * Another guest's /proc/N and the entries under it the rewrite leaves as
 * /proc/N/... (stat, status, cmdline, task, fd, ...): vfs.c opens what is
 * virtual, but the host has no entry of N's: its /proc/N is some host
 * process, or none, so a stat, readlink, access or an open vfs.c does not
 * serve reached that one (its mode, its owner, whether it exists). hvrun's
 * own /proc/self entry of that name stands in: its type and mode are every
 * process's, and what describes the machine is the run's machine's;
 * procguard.c refuses what describes hvrun. An fdinfo entry is of N's fd.
 * Of a zombie (its mm, files and fs gone) the exe, cwd and root links are
 * there but lead nowhere (ENOENT but to lstat: link_itself) and its fd
 * directories are empty. Returns N's process (hp rewritten: a caller that
 * needs the guest's name keeps it before), NULL (hp as it was: not another
 * guest's), or NULL with *err < 0.
 */
struct proxy_process *proxy_fs_other_proc_stand_in(struct proxy_process *p,
                                                   struct host_path *hp,
                                                   bool link_itself,
                                                   long *err)
{
    *err = 0;
    const char *rest;
    int pid = hp->kind == PATH_PLAIN && p->world &&
                      strncmp(hp->path, "/proc/", 6) == 0
                  ? parse_proc_number(hp->path + 6, &rest)
                  : -1;
    if (pid <= 0 || pid == p->pid || (*rest != '/' && *rest != '\0'))
        return NULL;
    struct proxy_process *q = proxy_world_find(p->world, pid);
    if (!q || q->pid != pid)
        return NULL; /* no guest's: procguard.c's ENOENT, or the init's */
    char in[PROXY_PATH_MAX];
    memcpy(in, rest, strlen(rest) + 1);
    const char *after;
    bool link = strip_dir_prefix(in, "/exe") || strip_dir_prefix(in, "/cwd") ||
                strip_dir_prefix(in, "/root");
    int guest_fd = strncmp(in, "/fdinfo/", 8) == 0
                       ? parse_proc_number(in + 8, &after)
                       : -1;
    int host_fd = guest_fd < 0 || q->zombie ? -1
                                            : proxy_fd_host(&q->fds, guest_fd);
    long r;
    if (q->zombie && link) {
        r = link_itself && !strchr(in + 1, '/')
                ? format_path(hp->path, sizeof(hp->path), "/proc/self/root")
                : -ENOENT;
    } else if (q->zombie && (strncmp(in, "/fd/", 4) == 0 ||
                             strncmp(in, "/fdinfo/", 8) == 0 ||
                             strncmp(in, "/map_files/", 11) == 0)) {
        r = -ENOENT;
    } else if (guest_fd >= 0) {
        r = host_fd < 0 ? -ENOENT
            : *after    ? -ENOTDIR
                        : format_path(hp->path, sizeof(hp->path),
                                      "/proc/self/fdinfo/%d", host_fd);
    } else {
        r = format_path(hp->path, sizeof(hp->path), "/proc/self%s",
                        *in ? in : "/");
    }
    if (r < 0) {
        *err = r;
        return NULL;
    }
    hp->dirfd = AT_FDCWD;
    return q;
}

static long host_path_from(struct proxy_process *p, uint64_t guest_dirfd,
                           char raw[PROXY_PATH_MAX], bool follow_last,
                           struct host_path *hp)
{
    return host_path_walk(p, guest_dirfd, raw, follow_last, true, hp);
}

/*
 * Copies the guest path at gva, rewrites it and resolves the guest dirfd.
 * An absolute path ignores dirfd, even a bad one, as Linux does. With
 * null_is_empty, a NULL pointer is the empty path (AT_EMPTY_PATH callers
 * since Linux 6.11).
 */
static long host_path_at_ex(struct proxy_process *p, uint64_t guest_dirfd,
                            gva_t gva, bool follow_last, bool null_is_empty,
                            struct host_path *hp)
{
    char raw[PROXY_PATH_MAX];
    raw[0] = '\0';
    if (gva != 0 || !null_is_empty) {
        long n = proxy_path_in(p, raw, gva);
        if (n < 0)
            return n;
    }
    return host_path_from(p, guest_dirfd, raw, follow_last, hp);
}

long proxy_fs_host_path_str(struct proxy_process *p, const char *path,
                            bool follow_last, struct host_path *hp)
{
    char raw[PROXY_PATH_MAX];
    if (snprintf(raw, sizeof(raw), "%s", path) >= (int)sizeof(raw))
        return -ENAMETOOLONG;
    return host_path_from(p, (uint64_t)(int64_t)AT_FDCWD, raw, follow_last, hp);
}

long proxy_fs_host_path_at(struct proxy_process *p, uint64_t guest_dirfd,
                           gva_t gva, bool follow_last, struct host_path *hp)
{
    return host_path_at_ex(p, guest_dirfd, gva, follow_last, false, hp);
}

/* host_path_at, the links in the private /tmp left to the host when
 * unwalked (openat2's RESOLVE_NO_SYMLINKS refuses any it meets). */
static long host_path_unwalked_if(struct proxy_process *p,
                                  uint64_t guest_dirfd, gva_t gva,
                                  bool follow_last, bool unwalked,
                                  struct host_path *hp)
{
    char raw[PROXY_PATH_MAX];
    long n = proxy_path_in(p, raw, gva);
    if (n < 0)
        return n;
    return host_path_walk(p, guest_dirfd, raw, follow_last, !unwalked, hp);
}

#define RESOLVE_SCOPED (RESOLVE_BENEATH | RESOLVE_IN_ROOT)

/*
 * A scoped walk that crosses ".." fails with EAGAIN when any rename or
 * mount happened on the host during it (Linux's rename_lock and
 * mount_lock checks): host state, and hvrun walks a guest's path several
 * times (procguard.c, resolve_walk_check, the open), each a window for the
 * host's other work. openat2(2) lets the caller retry; hvrun does, so the
 * guest's result does not depend on what else the host is doing (seen:
 * tests/guest/openat2's IN_ROOT "up/up/f" failed once in a suite run with
 * other tests renaming files beside it).
 */
#define SCOPED_WALK_TRIES 1000

long proxy_host_openat2(int dirfd, const char *path, struct open_how *how)
{
    long fd;
    int tries = 0;
    do
        fd = syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
    while (fd < 0 && errno == EAGAIN && (how->resolve & RESOLVE_SCOPED) &&
           !(how->resolve & RESOLVE_CACHED) && ++tries < SCOPED_WALK_TRIES);
    return fd;
}

/* The host walks (dirfd, path) with the guest's resolve flags, as an
 * O_PATH open: 0 when openat2 would get past it, or its -errno. */
static long resolve_walk_check(const struct host_path *hp, bool follow_last,
                               uint64_t resolve)
{
    struct open_how how = {
        .flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW),
        .resolve = resolve};
    long fd = proxy_host_openat2(hp->dirfd, hp->path, &how);
    if (fd < 0)
        return -errno;
    close((int)fd);
    return 0;
}

/*
 * openat2's scoped walks (RESOLVE_BENEATH, RESOLVE_IN_ROOT) start at the
 * dirfd whatever the path, so the path is not rewritten (an absolute one
 * means the dirfd's tree, or EXDEV): the host walks it from the dirfd's
 * host fd with the guest's flags. A path that reaches procfs by a route
 * the rewrite must see (procguard.c) has its scoped walk judged on the
 * host once; then the guest name of what it reached is rewritten as any
 * path is, and *resolve loses the scoping that was already applied.
 */
static long host_path_scoped(struct proxy_process *p, uint64_t guest_dirfd,
                             gva_t gva, bool follow_last, uint64_t *resolve,
                             struct host_path *hp)
{
    char raw[PROXY_PATH_MAX];
    long r = proxy_path_in(p, raw, gva);
    if (r < 0)
        return r;
    hp->kind = PATH_PLAIN;
    hp->dirfd = proxy_host_dirfd(p, (int)guest_dirfd);
    if (hp->dirfd < 0 && hp->dirfd != AT_FDCWD)
        return hp->dirfd;
    if ((r = format_path(hp->path, sizeof(hp->path), "%s", raw)) < 0)
        return r;
    r = proxy_proc_confine_scoped(p, hp->dirfd, hp->path, follow_last,
                                  *resolve & RESOLVE_SCOPED, raw, sizeof(raw));
    if (r <= 0)
        return r;
    if ((r = resolve_walk_check(hp, follow_last, *resolve)) < 0)
        return r;
    *resolve &= ~(uint64_t)RESOLVE_SCOPED;
    return host_path_walk(p, guest_dirfd, raw, follow_last,
                          !(*resolve & RESOLVE_NO_SYMLINKS), hp);
}

/* For the calls without a dirfd: relative to the guest cwd. */
long proxy_fs_host_path(struct proxy_process *p, gva_t gva, bool follow_last,
                        struct host_path *hp)
{
    return proxy_fs_host_path_at(p, (uint64_t)(int64_t)AT_FDCWD, gva,
                                 follow_last, hp);
}

/* For calls with AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH flags. */
long proxy_fs_host_path_at_flags(struct proxy_process *p, uint64_t guest_dirfd,
                                 gva_t gva, int at_flags, bool null_is_empty,
                                 struct host_path *hp)
{
    bool follow_last = !(at_flags & AT_SYMLINK_NOFOLLOW);
    bool empty_ok = null_is_empty && (at_flags & AT_EMPTY_PATH);
    return host_path_at_ex(p, guest_dirfd, gva, follow_last, empty_ok, hp);
}

/* ---- the running programs' files ----------------------------------------- */

/*
 * A file some live guest process runs (its exe) cannot be opened for
 * writing or truncated: Linux denies write access to it for the life of
 * the image (deny_write_access at execve), ETXTBSY, after the permission
 * check (so a caller who may not write it gets EACCES). hvrun loads the
 * program itself, so the host kernel knows of no such denial.
 */
long proxy_fs_exe_busy(struct proxy_process *p, int dirfd, const char *path,
                       int at_flags)
{
    struct stat st;
    if (!p->world || fstatat(dirfd, path, &st, at_flags) < 0 ||
        !S_ISREG(st.st_mode))
        return 0;
    bool busy = false;
    for (int i = 0; i < p->world->nr_procs && !busy; i++) {
        const struct proxy_process *q = p->world->procs[i];
        busy = !q->zombie && !q->exited && q->exe_ino == st.st_ino &&
               q->exe_dev == st.st_dev;
    }
    if (!busy)
        return 0;
    if (faccessat(dirfd, path, W_OK, AT_EACCESS | (at_flags & AT_EMPTY_PATH)) < 0)
        return -errno;
    return -ETXTBSY;
}

/* ---- open ---------------------------------------------------------------- */

static bool open_creates(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/*
 * The host fd is always O_CLOEXEC (the guest's bit lives in the table) and
 * O_NOCTTY: the guest's session is virtual, so opening a terminal must not
 * make it hvrun's controlling terminal; it may become the guest session's
 * (io/tty.c), and /dev/tty is the guest's controlling terminal.
 * O_NOCTTY is invisible to F_GETFL, as Linux strips it from f_flags.
 */
/*
 * A blocking open of a FIFO waits on the host for the other end, which
 * may be a guest that cannot run meanwhile. When another guest thread
 * is alive the wait is the run's, re-tried every 1 ms of logical time
 * (deterministic; a signal interrupts it: EINTR, or a restart under
 * SA_RESTART): a writer tries without blocking until there is a reader;
 * a reader opens its host end without blocking at once, so the FIFO has
 * a reader as while Linux's open waits, and keeps it parked until a
 * writer of the run has opened the FIFO since, holds it open, or has
 * left data in it. A writer outside the run that has not written is not
 * seen. With no other guest alive the other end can only come from
 * outside the run, so the host open blocks.
 */
static bool blocking_fifo_open(int dirfd, const char *path, int flags)
{
    struct stat st;
    int acc = flags & O_ACCMODE;
    return !(flags & O_NONBLOCK) && (acc == O_RDONLY || acc == O_WRONLY) &&
           fstatat(dirfd, path, &st, 0) == 0 && S_ISFIFO(st.st_mode);
}

static bool fifo_open_would_block(struct proxy_process *p, int dirfd,
                                  const char *path, int flags)
{
    /* A reader parked while others were alive decides in fifo_open. */
    return (proxy_others_alive(p) || p->threads[p->cur].io.fifo_parked) &&
           blocking_fifo_open(dirfd, path, flags);
}

/* A replay (cmd_record.c) has no outside: the other end of a FIFO that
 * only a process outside the run could open never comes. The open fails
 * (ENXIO, as a non-blocking writer's) with a line saying why, rather than
 * wait for ever; the replay then reports where it parted. */
static bool replay_fifo_from_outside(struct proxy_process *p, int dirfd,
                                     const char *path, int flags)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    if (!t || !t->recorded || proxy_others_alive(p) ||
        !blocking_fifo_open(dirfd, path, flags))
        return false;
    proxy_log(p, 1, "replay: the other end of FIFO %s was outside the run; "
                    "a replay has none (not in the recording)", path);
    return true;
}

static bool fifo_has_data(int host_fd)
{
    int n = 0;
    return ioctl(host_fd, FIONREAD, &n) == 0 && n > 0;
}

/* The reader's host fd for this open: the parked one when it is this
 * FIFO's, else a new one (any other parked one is dropped); -errno. */
static int fifo_reader_end(struct proxy_thread *t, int dirfd,
                           const char *path, int flags)
{
    struct stat st;
    if (fstatat(dirfd, path, &st, 0) < 0)
        return -errno;
    struct proxy_thread_io *io = &t->io;
    if (io->fifo_parked && io->fifo_dev == st.st_dev &&
        io->fifo_ino == st.st_ino)
        return io->fifo_fd;
    proxy_fifo_unpark(t);
    int host_fd = openat(dirfd, path,
                         flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (host_fd < 0)
        return -errno;
    io->fifo_parked = true;
    io->fifo_fd = host_fd;
    io->fifo_dev = st.st_dev;
    io->fifo_ino = st.st_ino;
    return host_fd;
}

static long fifo_open_reader(struct proxy_process *p, int dirfd,
                             const char *path, int flags)
{
    struct proxy_thread *t = &p->threads[p->cur];
    int host_fd = fifo_reader_end(t, dirfd, path, flags);
    if (host_fd < 0)
        return host_fd;
    bool writer = t->io.fifo_partner || fifo_has_data(host_fd) ||
                  proxy_hooks.fifo_end_in_run(p, t->io.fifo_dev, t->io.fifo_ino,
                                        true);
    if (!writer && proxy_others_alive(p))
        return proxy_thread_retry_after(p, PROXY_LOCK_RETRY_NS);
    if (!writer) {
        /* Alone now: only a writer outside the run can come. */
        proxy_fifo_unpark(t);
        host_fd = openat(dirfd, path, flags | O_CLOEXEC | O_NOCTTY);
        return host_fd < 0 ? -errno : host_fd;
    }
    t->io.fifo_parked = t->io.fifo_partner = false; /* the fd is the guest's */
    return host_fd;
}

static long fifo_open_writer(struct proxy_process *p, int dirfd,
                             const char *path, int flags)
{
    int host_fd = openat(dirfd, path,
                         flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (host_fd < 0 && errno == ENXIO) /* no reader yet: try again */
        return proxy_thread_retry_after(p, PROXY_LOCK_RETRY_NS);
    if (host_fd < 0)
        return -errno;
    struct stat st;
    if (fstat(host_fd, &st) == 0)
        proxy_hooks.fifo_writer_opened(p, st.st_dev, st.st_ino);
    return host_fd;
}

static long fifo_open(struct proxy_process *p, int dirfd, const char *path,
                      int flags)
{
    long host_fd = (flags & O_ACCMODE) == O_RDONLY
                       ? fifo_open_reader(p, dirfd, path, flags)
                       : fifo_open_writer(p, dirfd, path, flags);
    if (host_fd < 0)
        return host_fd;
    int fl = fcntl((int)host_fd, F_GETFL);
    if (fl >= 0)
        fcntl((int)host_fd, F_SETFL, fl & ~O_NONBLOCK);
    proxy_meta_note_open(p, (int)host_fd, path, flags, false);
    return proxy_fd_install(&p->fds, (int)host_fd, (flags & O_CLOEXEC) != 0,
                            0);
}

/* What record / replay key a file by: the absolute path it was opened
 * by (the dirfd's path and the rest), not resolved further. */
bool proxy_fs_file_tap_key(const struct host_path *hp, char *key, size_t len)
{
    if (hp->path[0] == '/')
        return (size_t)snprintf(key, len, "%s", hp->path) < len;
    char dir[PROXY_PATH_MAX];
    if (hp->dirfd == AT_FDCWD) {
        if (!getcwd(dir, sizeof(dir)))
            return false;
    } else {
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", hp->dirfd);
        ssize_t n = readlink(link, dir, sizeof(dir) - 1);
        if (n <= 0)
            return false;
        dir[n] = '\0';
    }
    const char *rest = hp->path;
    while (rest[0] == '.' && rest[1] == '/')
        rest += 2;
    return (size_t)snprintf(key, len, "%s/%s", strcmp(dir, "/") ? dir : "",
                            rest) < len;
}

static bool opens_read_only(int flags)
{
    return (flags & O_ACCMODE) == O_RDONLY &&
           !(flags & (O_TRUNC | O_CREAT | O_PATH));
}

/* A replay's recorded copy of the file, if the run read it; -1 if not. */
int proxy_fs_replayed_file(struct proxy_process *p, const struct host_path *hp,
                           int flags)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    char key[PROXY_PATH_MAX];
    if (!t || !t->recorded || !opens_read_only(flags) ||
        !proxy_fs_file_tap_key(hp, key, sizeof(key)))
        return -1;
    return t->recorded(t->ctx, key);
}

static void record_file(struct proxy_process *p, const struct host_path *hp,
                        int flags, int host_fd)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    char key[PROXY_PATH_MAX];
    if (t && t->opened && opens_read_only(flags) &&
        proxy_fs_file_tap_key(hp, key, sizeof(key)))
        t->opened(t->ctx, key, host_fd);
}

/* A FIFO whose other end is outside the run, under record/replay
 * (net/outside_fifo.c): the guest gets a pipe of hvrun's. */
static bool outside_fifo(struct proxy_process *p, const struct host_path *hp,
                         int flags, long *r)
{
    char key[PROXY_PATH_MAX];
    const struct proxy_file_tap *t = p->cfg->file_tap;
    int acc = flags & O_ACCMODE;
    if (!t || !(t->link_noted || t->link_next) || (flags & O_NONBLOCK) ||
        (acc != O_RDONLY && acc != O_WRONLY) ||
        !proxy_hooks.outside_fifo_maybe(p, hp->dirfd, hp->path) ||
        !proxy_fs_file_tap_key(hp, key, sizeof(key)) ||
        !proxy_hooks.outside_fifo_open(p, key, hp->dirfd, hp->path, flags, r))
        return false;
    if (*r >= 0)
        *r = proxy_fd_install(&p->fds, (int)*r, (flags & O_CLOEXEC) != 0, 0);
    return true;
}

/* The host open: openat, or openat2 with the guest's resolve flags, so
 * the host's walk applies them. */
static int open_host(const struct host_path *hp, int flags, mode_t mode,
                     uint64_t resolve)
{
    if (!resolve)
        return openat(hp->dirfd, hp->path, flags | O_CLOEXEC | O_NOCTTY, mode);
    /* openat2 allows no O_NOCTTY with O_PATH (O_PATH_FLAGS) */
    int host_flags = flags | O_CLOEXEC | (flags & O_PATH ? 0 : O_NOCTTY);
    struct open_how how = {.flags = (uint64_t)(unsigned)host_flags,
                           .mode = mode, .resolve = resolve};
    return (int)proxy_host_openat2(hp->dirfd, hp->path, &how);
}

/* RESOLVE_NO_SYMLINKS and NO_MAGICLINKS on the path as the guest named
 * it: the rewrite resolves a link that leads into /proc (procguard.c)
 * before anything else sees it, so the host walks the guest's own path
 * first (ELOOP at a link); not one under /tmp, which is the run's private
 * directory and not the host's /tmp. */
static long raw_links_refused(struct proxy_process *p, uint64_t guest_dirfd,
                              gva_t gva, bool follow_last, uint64_t resolve)
{
    if (!(resolve & (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)))
        return 0;
    char raw[PROXY_PATH_MAX];
    if (proxy_path_in(p, raw, gva) < 0 || raw[0] == '\0' ||
        strncmp(raw, "/tmp", 4) == 0)
        return 0;
    int dirfd = raw[0] == '/' ? AT_FDCWD : proxy_host_dirfd(p, (int)guest_dirfd);
    if (dirfd < 0 && dirfd != AT_FDCWD)
        return 0;
    struct open_how how = {
        .flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW),
        .resolve = resolve & (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)};
    long fd = proxy_host_openat2(dirfd, raw, &how);
    if (fd >= 0)
        close((int)fd);
    return fd < 0 && errno == ELOOP ? -ELOOP : 0;
}

/* openat2's resolve flags on what hvrun opens itself: /proc/self/exe,
 * which the rewrite makes the program's path, is a magic link (ELOOP
 * under NO_MAGICLINKS or NO_SYMLINKS); a virtual file's walk is the
 * host's to judge, any error; another path's walk the host judges too, for
 * the refusals the flags add (a symlink to a virtual /proc file leads to
 * hvrun's file, not the host's open). */
static long resolve_refused(struct proxy_process *p, const struct host_path *hp,
                            bool follow_last, uint64_t resolve)
{
    if (hp->kind == PATH_SELF_EXE && follow_last &&
        (resolve & (RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)))
        return -ELOOP;
    long r = resolve_walk_check(hp, follow_last, resolve);
    if (proxy_vfs_is_virtual(p, hp->dirfd, hp->path))
        return r;
    return r == -ELOOP || r == -EXDEV || r == -EAGAIN ? r : 0;
}

/*
 * open, openat, creat and openat2 (openat2.c: resolve is its validated
 * resolve flags, 0 for the others). A virtual file's walk is judged by the
 * host first under resolve flags: hvrun serves the file, but the path to
 * it (/proc/self, a symlink; /proc, a mount) is the host's.
 */
/* Whether the open makes the file (fcntl's F_CREATED_QUERY, Linux's
 * FMODE_CREATED): O_CREAT where nothing was (created: fsmeta.c saw so
 * already; O_EXCL's success says so itself). Asked before the open. */
static bool open_makes_file(const struct host_path *hp, int flags,
                            bool created)
{
    if (!(flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
        return false;
    if (created || (flags & O_EXCL))
        return true;
    struct stat st;
    return fstatat(hp->dirfd, hp->path, &st, 0) < 0 && errno == ENOENT;
}

/*
 * An O_PATH open of a guest's /proc/N/exe link itself (O_NOFOLLOW, or
 * /proc/self/fd/M of such an fd followed): N's run pid, else 0. The host
 * fd is then hvrun's own /proc/self/exe link, which the rewrite chose
 * (procguard refuses hvrun's exe to any other route): the guest's fd is
 * marked, so that what it reads is N's (readlinkat(fd, "")).
 */
static int exe_link_opened(const struct proxy_process *p,
                           const struct host_path *hp, int flags)
{
    if (!(flags & O_PATH))
        return 0;
    if (hp->kind == PATH_SELF_EXE && (flags & O_NOFOLLOW))
        return p->pid;
    return hp->kind == PATH_GUEST_EXE ? p->fs.exe_of_pid : 0;
}

long proxy_fs_openat(struct proxy_process *p, uint64_t guest_dirfd,
                     gva_t path_gva, int flags, uint64_t mode,
                     uint64_t resolve)
{
    struct host_path hp;
    bool follow_last = !(flags & O_NOFOLLOW);
    long r = raw_links_refused(p, guest_dirfd, path_gva, follow_last, resolve);
    if (r < 0)
        return r;
    r = resolve & RESOLVE_SCOPED
                 ? host_path_scoped(p, guest_dirfd, path_gva, follow_last,
                                    &resolve, &hp)
                 : host_path_unwalked_if(p, guest_dirfd, path_gva, follow_last,
                                         resolve & RESOLVE_NO_SYMLINKS, &hp);
    if (r < 0)
        return r;
    if (resolve && (r = resolve_refused(p, &hp, follow_last, resolve)) < 0)
        return r;
    if (hp.kind == PATH_MAP_FILE_LINK)
        return -ELOOP; /* the link itself (O_NOFOLLOW); O_PATH: not kept */
    if (proxy_vfs_open(p, hp.dirfd, hp.path, flags, &r))
        return r; /* a virtual /proc, /sys or /etc file (vfs.c) */
    if (!proxy_fs_other_proc_stand_in(p, &hp, !follow_last, &r) && r < 0)
        return r;
    if (open_creates(flags) && proxy_meta_cache_write_blocked(p, hp.dirfd, hp.path, false))
        return -EACCES;
    if (outside_fifo(p, &hp, flags, &r))
        return r; /* record/replay: a FIFO to a process outside the run */
    if (fifo_open_would_block(p, hp.dirfd, hp.path, flags))
        return fifo_open(p, hp.dirfd, hp.path, flags);
    if (replay_fifo_from_outside(p, hp.dirfd, hp.path, flags))
        return -ENXIO;
    if ((r = proxy_hooks.lease_break(p, hp.dirfd, hp.path, flags)) != 0)
        return r; /* a lease of the run on it is being broken (fasync.c) */
    int replayed = proxy_fs_replayed_file(p, &hp, flags);
    if (replayed >= 0) {
        proxy_meta_note_open(p, replayed, hp.path, flags, false);
        r = proxy_fd_install(&p->fds, replayed, (flags & O_CLOEXEC) != 0, 0);
        if (r >= 0)
            proxy_meta_pyc_opened(p, (int)r, hp.dirfd, hp.path, flags);
        return r;
    }
    mode_t host_mode = open_creates(flags) ? umasked(p, mode) : 0;
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) {
        r = proxy_fs_exe_busy(p, hp.dirfd, hp.path,
                              (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0);
        if (r < 0)
            return r;
        proxy_preserve_before(p, hp.dirfd, hp.path, !(flags & O_NOFOLLOW));
    }
    bool created = proxy_meta_open_creates(p, hp.dirfd, hp.path, flags);
    bool makes_file = open_makes_file(&hp, flags, created);
    int host_fd;
    if (!proxy_hooks.tty_open_current(p, hp.dirfd, hp.path, flags, &host_fd)) {
        host_fd = open_host(&hp, flags, host_mode, resolve);
        if (host_fd < 0)
            return -errno;
        proxy_hooks.tty_opened(p, host_fd, flags);
    } else if (host_fd < 0) {
        return host_fd;
    }
    record_file(p, &hp, flags, host_fd);
    int exe_link_pid = exe_link_opened(p, &hp, flags);
    if (!exe_link_pid && (r = proxy_proc_open_check(p, host_fd, flags)) < 0) {
        close(host_fd);
        return r;
    }
    proxy_meta_note_open(p, host_fd, hp.path, flags, created);
    if ((flags & O_TRUNC) && !created)
        proxy_mm_file_resized(p, host_fd);
    r = proxy_fd_install(&p->fds, host_fd, (flags & O_CLOEXEC) != 0, 0);
    if (r >= 0) {
        proxy_fd_get(&p->fds, (int)r)->created = makes_file;
        proxy_fd_get(&p->fds, (int)r)->exe_link_pid = exe_link_pid;
        proxy_meta_pyc_opened(p, (int)r, hp.dirfd, hp.path, flags);
    }
    return r;
}

static long sys_open(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_fs_openat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], (int)a[1],
                           a[2], 0);
}

static long sys_openat(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_fs_openat(p, a[0], a[1], (int)a[2], a[3], 0);
}

static long sys_creat(struct proxy_process *p, const uint64_t a[6])
{
    return proxy_fs_openat(p, (uint64_t)(int64_t)AT_FDCWD, a[0],
                           O_CREAT | O_WRONLY | O_TRUNC, a[1], 0);
}

/* ---- stat family --------------------------------------------------------- */

/* The one place each metadata struct reaches the guest: detcore
 * canonicalises inode and device numbers, times and free counts here. */
static bool on_proc(uint64_t dev)
{
    static uint64_t proc_dev;
    struct stat ps;
    if (!proc_dev && stat("/proc", &ps) == 0)
        proc_dev = ps.st_dev;
    return dev == proc_dev;
}

/* Where a stat result came from, for the procfs fixes. */
struct stat_src {
    int host_fd, dirfd;
    const char *path;
    int at_flags;
    bool recorded; /* a replay's recorded result: as it is */
    /* another guest's /proc/N entry hvrun's own stood in for
     * (proxy_fs_other_proc_stand_in): N's process and the entry's name */
    const struct proxy_process *proc_of;
    const char *proc_name;
};

/* What stat shows of a procfs entry, where the host's differs. */
struct proc_fix {
    uint64_t ino, nlink;
    uint32_t uid, gid; /* kernel ids */
    uint32_t mode;     /* the host's, as Linux's */
};

/*
 * A procfs entry's stable inode number (procguard.c), and the owner and
 * link count of the virtual init's (vfs.c): from the fd, or an O_PATH
 * open of what (dirfd, path) named with the same flags.
 */
static void proc_entry_fix(struct proxy_process *p, const struct stat_src *src,
                           struct proc_fix *f)
{
    int fd = src->host_fd;
    if (fd < 0) {
        int fl = O_PATH | O_CLOEXEC |
                 (src->at_flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0);
        fd = (src->at_flags & AT_EMPTY_PATH) && !*src->path
                 ? src->dirfd
                 : openat(src->dirfd, src->path, fl);
    }
    if (fd < 0)
        return;
    if (src->proc_of) { /* N's entry, whose name the host's is not */
        const char *rest = strchr(src->proc_name + 6, '/');
        f->ino = proxy_proc_name_ino(src->proc_name);
        proxy_proc_owner_as(src->proc_of, rest ? rest : "", f->mode, &f->uid,
                            &f->gid);
    } else {
        f->ino = proxy_proc_stable_ino(p, fd, f->ino);
        proxy_proc_owner_fix(p, fd, f->mode, &f->uid, &f->gid);
    }
    proxy_vfs_init_stat_fix(p, fd, &f->nlink, &f->uid, &f->gid);
    if (fd != src->host_fd && fd != src->dirfd)
        close(fd);
}

/* The host fd a stat result is of (fstat, or AT_EMPTY_PATH), or -1. */
static int stat_src_fd(const struct stat_src *src)
{
    if (src->host_fd >= 0)
        return src->host_fd;
    return (src->at_flags & AT_EMPTY_PATH) && !src->path[0] ? src->dirfd : -1;
}

int proxy_file_tap_replayed(struct proxy_process *p, int dirfd,
                            const char *path, int flags)
{
    struct host_path hp = {.dirfd = dirfd};
    if ((size_t)snprintf(hp.path, sizeof(hp.path), "%s", path) >=
        sizeof(hp.path))
        return -1;
    return proxy_fs_replayed_file(p, &hp, flags);
}

void proxy_file_tap_note(struct proxy_process *p, int dirfd, const char *path,
                         int flags, int host_fd)
{
    struct host_path hp = {.dirfd = dirfd};
    if ((size_t)snprintf(hp.path, sizeof(hp.path), "%s", path) <
        sizeof(hp.path))
        record_file(p, &hp, flags, host_fd);
}

void proxy_file_tap_restat(struct proxy_process *p, struct stat *st)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    if (t && t->recorded_stat)
        (void)t->recorded_stat(t->ctx, NULL, st);
}

/* A replay's recorded stat for what was stat'ed (see proxy_file_tap). */
static bool replayed_stat(struct proxy_process *p, const struct stat_src *src,
                          struct stat *st)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    if (!t || !t->recorded_stat || src->recorded)
        return false;
    char key[PROXY_PATH_MAX];
    /* By the path too without following a last symlink: a recorded key
     * named a regular file (an lstat of a link replays the target's stat,
     * and the detlog shows it). */
    bool by_path = src->path && src->path[0] && src->host_fd < 0;
    struct host_path hp = {.dirfd = src->dirfd};
    if (by_path)
        snprintf(hp.path, sizeof(hp.path), "%s", src->path);
    return t->recorded_stat(t->ctx,
                            by_path && proxy_fs_file_tap_key(&hp, key, sizeof(key))
                                ? key
                                : NULL,
                            st);
}

/*
 * The stat of a path: the host's or, replaying, the recorded result of
 * the same stat of the same path (the n-th for the n-th); recording, the
 * result is kept. 0 or -errno; src->recorded says where it came from.
 */
static int path_stat(struct proxy_process *p, const struct host_path *hp,
                     int flags, struct stat *st, struct stat_src *src)
{
    const struct proxy_file_tap *t = p->cfg->file_tap;
    char key[PROXY_PATH_MAX];
    bool nofollow = flags & AT_SYMLINK_NOFOLLOW;
    bool keyed = t && hp->path[0] && proxy_fs_file_tap_key(hp, key, sizeof(key));
    int err;
    if (keyed && t->recorded_stat_result &&
        t->recorded_stat_result(t->ctx, key, nofollow, &err, st)) {
        src->recorded = true;
        return err;
    }
    err = fstatat(hp->dirfd, hp->path, st, flags) < 0 ? -errno : 0;
    if (keyed && t->stat_result)
        t->stat_result(t->ctx, key, nofollow, err, st);
    return err;
}

static void statx_from_stat(struct statx *x, const struct stat *st)
{
    x->stx_mask |= STATX_BASIC_STATS;
    x->stx_dev_major = major(st->st_dev);
    x->stx_dev_minor = minor(st->st_dev);
    x->stx_ino = st->st_ino;
    x->stx_mode = (uint16_t)st->st_mode;
    x->stx_nlink = (uint32_t)st->st_nlink;
    x->stx_uid = st->st_uid;
    x->stx_gid = st->st_gid;
    x->stx_size = (uint64_t)st->st_size;
    x->stx_blocks = (uint64_t)st->st_blocks;
    x->stx_blksize = (uint32_t)st->st_blksize;
    x->stx_atime = (struct statx_timestamp){st->st_atim.tv_sec,
                                            (uint32_t)st->st_atim.tv_nsec, 0};
    x->stx_mtime = (struct statx_timestamp){st->st_mtim.tv_sec,
                                            (uint32_t)st->st_mtim.tv_nsec, 0};
    x->stx_ctime = (struct statx_timestamp){st->st_ctim.tv_sec,
                                            (uint32_t)st->st_ctim.tv_nsec, 0};
}

static void stat_from_statx(struct stat *st, const struct statx *x)
{
    memset(st, 0, sizeof(*st));
    st->st_dev = makedev(x->stx_dev_major, x->stx_dev_minor);
    st->st_ino = x->stx_ino;
    st->st_mode = x->stx_mode;
    st->st_nlink = x->stx_nlink;
    st->st_uid = x->stx_uid;
    st->st_gid = x->stx_gid;
    st->st_rdev = makedev(x->stx_rdev_major, x->stx_rdev_minor);
    st->st_size = (off_t)x->stx_size;
    st->st_blocks = (blkcnt_t)x->stx_blocks;
    st->st_blksize = (blksize_t)x->stx_blksize;
    st->st_atim = (struct timespec){x->stx_atime.tv_sec, x->stx_atime.tv_nsec};
    st->st_mtim = (struct timespec){x->stx_mtime.tv_sec, x->stx_mtime.tv_nsec};
    st->st_ctim = (struct timespec){x->stx_ctime.tv_sec, x->stx_ctime.tv_nsec};
}

static long stat_out(struct proxy_process *p, gva_t gva, const struct stat *st,
                     const struct stat_src *src)
{
    struct stat canon = *st;
    (void)replayed_stat(p, src, &canon);
    proxy_secretmem_fix_stat(p, stat_src_fd(src), &canon);
    if (on_proc(st->st_dev)) {
        /* (another guest's entry, hvrun's own standing in: that guest's) */
        const struct proxy_process *whose = src->proc_of ? src->proc_of : p;
        if (S_ISDIR(st->st_mode)) {
            canon.st_size = proxy_vfs_dir_size_fixup(whose, st->st_dev,
                                                     st->st_ino, st->st_size);
            canon.st_nlink = proxy_vfs_dir_nlink_fixup(
                whose, st->st_dev, st->st_ino, canon.st_nlink);
        }
        struct proc_fix f = {st->st_ino, canon.st_nlink, canon.st_uid,
                             canon.st_gid, st->st_mode};
        proc_entry_fix(p, src, &f);
        canon.st_ino = f.ino;
        canon.st_nlink = f.nlink;
        canon.st_uid = f.uid;
        canon.st_gid = f.gid;
    }
    det_stat_canon(p->det, &canon);
    uint64_t ns_ino; /* a namespace file: its namespace's number */
    if (proxy_vfs_ns_inode(p, src->host_fd, src->dirfd, src->path,
                           src->at_flags, &ns_ino)) {
        canon.st_ino = ns_ino;
        canon.st_dev = makedev(0, 4);
    }
    /* owners as the caller's user namespace sees them */
    canon.st_uid = proxy_ns_uid_seen(p, canon.st_uid);
    canon.st_gid = proxy_ns_gid_seen(p, canon.st_gid);
    return proxy_copy_out(p, gva, &canon, sizeof(canon));
}

static long statx_out(struct proxy_process *p, gva_t gva,
                      const struct statx *stx, const struct stat_src *src)
{
    struct statx canon = *stx;
    struct stat rec = {.st_dev = makedev(stx->stx_dev_major,
                                         stx->stx_dev_minor),
                       .st_ino = stx->stx_ino};
    if (replayed_stat(p, src, &rec))
        statx_from_stat(&canon, &rec);
    struct stat links = {.st_mode = stx->stx_mode, .st_nlink = stx->stx_nlink};
    proxy_secretmem_fix_stat(p, stat_src_fd(src), &links);
    canon.stx_nlink = (uint32_t)links.st_nlink;
    uint64_t dev = makedev(stx->stx_dev_major, stx->stx_dev_minor);
    if (on_proc(dev)) {
        const struct proxy_process *whose = src->proc_of ? src->proc_of : p;
        if (S_ISDIR(stx->stx_mode)) {
            canon.stx_size = (uint64_t)proxy_vfs_dir_size_fixup(
                whose, dev, stx->stx_ino, (int64_t)stx->stx_size);
            canon.stx_nlink = (uint32_t)proxy_vfs_dir_nlink_fixup(
                whose, dev, stx->stx_ino, canon.stx_nlink);
        }
        struct proc_fix f = {stx->stx_ino, canon.stx_nlink, canon.stx_uid,
                             canon.stx_gid, stx->stx_mode};
        proc_entry_fix(p, src, &f);
        canon.stx_ino = f.ino;
        canon.stx_nlink = (uint32_t)f.nlink;
        canon.stx_uid = f.uid;
        canon.stx_gid = f.gid;
    }
    proxy_meta_statx_canon(p, &canon);
    uint64_t ns_ino; /* a namespace file: its namespace's number */
    if (proxy_vfs_ns_inode(p, src->host_fd, src->dirfd, src->path,
                           src->at_flags, &ns_ino)) {
        canon.stx_ino = ns_ino;
        canon.stx_dev_major = 0;
        canon.stx_dev_minor = 4;
    }
    canon.stx_uid = proxy_ns_uid_seen(p, canon.stx_uid);
    canon.stx_gid = proxy_ns_gid_seen(p, canon.stx_gid);
    return proxy_copy_out(p, gva, &canon, sizeof(canon));
}

static long statfs_out(struct proxy_process *p, gva_t gva,
                       const struct statfs *sfs)
{
    struct statfs canon = *sfs;
    proxy_meta_statfs_canon(p, &canon);
    return proxy_copy_out(p, gva, &canon, sizeof(canon));
}

/*
 * The map_files link the last path named (PATH_MAP_FILE_LINK): its
 * process, its name in name (for the inode number and the owner) and the
 * mode Linux gives it (proc_map_files_instantiate: the owner's read and
 * write bits as the mapped file was opened: write for a shared writable
 * mapping, which needs a file open for writing), or NULL.
 */
/* The process and mapping of the map_files link the last path named,
 * or NULL (its process or mapping gone since). */
static struct proxy_process *map_file_of(struct proxy_process *p,
                                         struct proxy_mapping *m)
{
    struct proxy_process *q =
        p->fs.map_file_pid == p->pid ? p
        : p->world ? proxy_world_find(p->world, p->fs.map_file_pid)
                   : NULL;
    return q && proxy_procfs_map_file(q, p->fs.map_file_entry, m) ? q : NULL;
}

static const struct proxy_process *map_file_link(struct proxy_process *p,
                                                 char name[PROXY_PATH_MAX],
                                                 mode_t *mode)
{
    struct proxy_mapping m;
    const struct proxy_process *q = map_file_of(p, &m);
    if (!q)
        return NULL;
    *mode = S_IFLNK | S_IRUSR |
            (m.shared && (m.prot & PROT_WRITE) ? S_IWUSR : 0);
    if (q == p)
        (void)format_path(name, PROXY_PATH_MAX, "/proc/self/map_files/%s",
                          p->fs.map_file_entry);
    else
        (void)format_path(name, PROXY_PATH_MAX, "/proc/%d/map_files/%s",
                          q->pid, p->fs.map_file_entry);
    return q;
}

long proxy_fs_map_file_target(struct proxy_process *p, char *out, size_t cap)
{
    struct proxy_mapping m;
    if (!map_file_of(p, &m))
        return -ENOENT;
    size_t n = strnlen(m.name, sizeof(m.name));
    if (n > cap)
        n = cap;
    memcpy(out, m.name, n);
    return (long)n;
}

/* The cwd link the last path named (PATH_CWD_LINK): its process, and its
 * name in name (the inode number stat shows comes from it), or NULL. */
static const struct proxy_process *cwd_link(struct proxy_process *p,
                                            char name[PROXY_PATH_MAX])
{
    if (p->fs.cwd_link_pid == p->pid) {
        (void)format_path(name, PROXY_PATH_MAX, "/proc/self/cwd");
        return p;
    }
    (void)format_path(name, PROXY_PATH_MAX, "/proc/%d/cwd", p->fs.cwd_link_pid);
    return p->world ? proxy_world_find(p->world, p->fs.cwd_link_pid) : NULL;
}

/* What lstat shows of a map_files link: its mode and a proc link's size. */
static void map_file_link_fix(mode_t link_mode, mode_t *mode, off_t *size)
{
    if (S_ISLNK(*mode)) {
        *mode = link_mode;
        *size = 64;
    }
}

/* What a stat of hp describes besides the host's answer (stat and
 * statx): the name the guest gave (name), the guest process it stands for
 * (*of: another's /proc/N entry, a map_files or cwd link) and a map_files
 * link's mode. 0 or -errno. */
static long stat_subject(struct proxy_process *p, struct host_path *hp,
                         int flags, char name[PROXY_PATH_MAX],
                         const struct proxy_process **of, mode_t *link_mode)
{
    long r;
    memcpy(name, hp->path, PROXY_PATH_MAX);
    *of = proxy_fs_other_proc_stand_in(p, hp, flags & AT_SYMLINK_NOFOLLOW,
                                       &r);
    if (r < 0)
        return r;
    *link_mode = 0;
    if (hp->kind == PATH_MAP_FILE_LINK &&
        !(*of = map_file_link(p, name, link_mode)))
        return -ENOENT;
    if (hp->kind == PATH_CWD_LINK)
        *of = cwd_link(p, name);
    return 0;
}

static long do_fstatat(struct proxy_process *p, uint64_t guest_dirfd,
                       gva_t path_gva, gva_t buf_gva, int flags)
{
    struct host_path hp;
    long r = proxy_fs_host_path_at_flags(p, guest_dirfd, path_gva, flags, true, &hp);
    if (r < 0)
        return r;
    char name[PROXY_PATH_MAX];
    const struct proxy_process *of;
    mode_t link_mode;
    if ((r = stat_subject(p, &hp, flags, name, &of, &link_mode)) < 0)
        return r;
    struct stat st;
    struct stat_src src = {-1, hp.dirfd, hp.path, flags, false, of, name};
    int err = path_stat(p, &hp, flags, &st, &src);
    if (err == 0 && hp.kind == PATH_CWD_LINK && S_ISLNK(st.st_mode))
        st.st_mode = S_IFLNK | 0777; /* proc_pid_get_link's, not an fd's */
    if (err == 0 && hp.kind == PATH_MAP_FILE_LINK)
        map_file_link_fix(link_mode, &st.st_mode, &st.st_size);
    if (err < 0) {
        memset(&st, 0, sizeof(st));
        if (src.recorded || !replayed_stat(p, &src, &st))
            return err; /* as recorded, or gone from the host since */
    }
    return stat_out(p, buf_gva, &st, &src);
}

static long sys_stat(struct proxy_process *p, const uint64_t a[6])
{
    return do_fstatat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1], 0);
}

static long sys_lstat(struct proxy_process *p, const uint64_t a[6])
{
    return do_fstatat(p, (uint64_t)(int64_t)AT_FDCWD, a[0], a[1],
                      AT_SYMLINK_NOFOLLOW);
}

static long sys_newfstatat(struct proxy_process *p, const uint64_t a[6])
{
    return do_fstatat(p, a[0], a[1], a[2], (int)a[3]);
}

static long sys_fstat(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    struct stat st;
    if (fstat(host_fd, &st) < 0)
        return -errno;
    struct stat_src src = {host_fd, -1, "", 0, false, NULL, NULL};
    return stat_out(p, a[1], &st, &src);
}

static long sys_statx(struct proxy_process *p, const uint64_t a[6])
{
    int flags = (int)a[2];
    struct host_path hp;
    long r = proxy_fs_host_path_at_flags(p, a[0], a[1], flags, true, &hp);
    if (r < 0)
        return r;
    char name[PROXY_PATH_MAX];
    const struct proxy_process *of;
    mode_t link_mode;
    if ((r = stat_subject(p, &hp, flags, name, &of, &link_mode)) < 0)
        return r;
    struct statx stx;
    struct stat_src src = {-1, hp.dirfd, hp.path, flags, false, of, name};
    const struct proxy_file_tap *t = p->cfg->file_tap;
    char key[PROXY_PATH_MAX];
    bool nofollow = flags & AT_SYMLINK_NOFOLLOW;
    bool keyed = t && hp.path[0] && proxy_fs_file_tap_key(&hp, key, sizeof(key));
    struct stat st = {0};
    int err;
    if (keyed && t->recorded_stat_result &&
        t->recorded_stat_result(t->ctx, key, nofollow, &err, &st)) {
        /* as the recorded run's statx saw it */
        src.recorded = true;
        if (err < 0)
            return err;
        memset(&stx, 0, sizeof(stx));
        statx_from_stat(&stx, &st);
        return statx_out(p, a[4], &stx, &src);
    }
    if (statx(hp.dirfd, hp.path, flags, (unsigned)a[3], &stx) < 0) {
        err = -errno;
        if (keyed && t->stat_result)
            t->stat_result(t->ctx, key, nofollow, err, &st);
        if (!replayed_stat(p, &src, &st)) /* gone from the host since */
            return err;
        memset(&stx, 0, sizeof(stx));
        statx_from_stat(&stx, &st);
        return statx_out(p, a[4], &stx, &src);
    }
    if (keyed && t->stat_result) {
        stat_from_statx(&st, &stx);
        t->stat_result(t->ctx, key, nofollow, 0, &st);
    }
    if (hp.kind == PATH_CWD_LINK && S_ISLNK(stx.stx_mode))
        stx.stx_mode = S_IFLNK | 0777; /* proc_pid_get_link's, not an fd's */
    if (hp.kind == PATH_MAP_FILE_LINK && S_ISLNK(stx.stx_mode)) {
        mode_t mode = stx.stx_mode;
        off_t size = (off_t)stx.stx_size;
        map_file_link_fix(link_mode, &mode, &size);
        stx.stx_mode = (uint16_t)mode;
        stx.stx_size = (uint64_t)size;
    }
    return statx_out(p, a[4], &stx, &src);
}

static long sys_statfs(struct proxy_process *p, const uint64_t a[6])
{
    struct host_path hp;
    long r = proxy_fs_host_path(p, a[0], true, &hp);
    if (r < 0)
        return r;
    int fd = open_o_path(&hp);
    if (fd < 0)
        return fd;
    struct statfs sfs;
    r = proxy_host_result(fstatfs(fd, &sfs));
    close(fd);
    return r < 0 ? r : statfs_out(p, a[1], &sfs);
}

/* An O_PATH host fd for a guest path (fs_internal.h). */
long proxy_fs_open_path(struct proxy_process *p, gva_t gva, bool follow_last)
{
    struct host_path hp;
    long r = proxy_fs_host_path(p, gva, follow_last, &hp);
    if (r < 0)
        return r;
    int fd = openat(hp.dirfd, hp.path,
                    O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW));
    return fd < 0 ? -errno : fd;
}

static long sys_fstatfs(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    struct statfs sfs;
    if (fstatfs(host_fd, &sfs) < 0)
        return -errno;
    return statfs_out(p, a[1], &sfs);
}

/* ---- inotify --------------------------------------------------------------- */

/*
 * inotify on the host: the events come from the file operations hvrun
 * makes for the guests, in their order, so a run sees the same events
 * every time (watch descriptors count from 1 per instance). The cookies
 * pairing IN_MOVED_FROM with IN_MOVED_TO come from a counter of the whole
 * host (every rename anywhere moves it): a read shows the run's own
 * instead (proxy_inotify_read_done). Not virtual: events of processes
 * outside the run on watched files.
 */
static long sys_inotify_init1(struct proxy_process *p, const uint64_t a[6])
{
    int flags = (int)a[0];
    if (flags & ~(IN_CLOEXEC | IN_NONBLOCK))
        return -EINVAL;
    int fd = inotify_init1(IN_CLOEXEC | (flags & IN_NONBLOCK));
    if (fd < 0)
        return -errno;
    long r = proxy_fd_install(&p->fds, fd, (flags & IN_CLOEXEC) != 0, 0);
    if (r >= 0)
        proxy_fd_get(&p->fds, (int)r)->inotify = true;
    return r;
}

/* The run's cookies: 1, 2, ... in the order the run's reads first meet
 * the host's, so both events of one rename keep one cookie. The last
 * COOKIES_KEPT are remembered (a rename's two events are queued
 * together). */
#define COOKIES_KEPT 64
static struct {
    uint32_t host, run;
} cookies[COOKIES_KEPT];
static unsigned cookie_slot;
static uint32_t cookies_given;

static uint32_t run_cookie(uint32_t host)
{
    if (!host)
        return 0;
    for (unsigned i = 0; i < COOKIES_KEPT; i++)
        if (cookies[i].run && cookies[i].host == host)
            return cookies[i].run;
    if (++cookies_given == 0)
        cookies_given = 1;
    unsigned slot = cookie_slot++ % COOKIES_KEPT;
    cookies[slot].host = host;
    cookies[slot].run = cookies_given;
    return cookies_given;
}

void proxy_inotify_read_done(const struct iovec *iov, int n, size_t got)
{
    uint8_t *events = malloc(got);
    if (!events)
        return;
    size_t at = 0;
    for (int i = 0; i < n && at < got; i++) {
        size_t take = iov[i].iov_len < got - at ? iov[i].iov_len : got - at;
        memcpy(events + at, iov[i].iov_base, take);
        at += take;
    }
    /* whole events only: what the kernel hands out */
    for (size_t off = 0; off + sizeof(struct inotify_event) <= got;) {
        struct inotify_event ev;
        memcpy(&ev, events + off, sizeof(ev));
        ev.cookie = run_cookie(ev.cookie);
        memcpy(events + off, &ev, sizeof(ev));
        off += sizeof(ev) + ev.len;
    }
    at = 0;
    for (int i = 0; i < n && at < got; i++) {
        size_t take = iov[i].iov_len < got - at ? iov[i].iov_len : got - at;
        memcpy(iov[i].iov_base, events + at, take);
        at += take;
    }
    free(events);
}

static long sys_inotify_init(struct proxy_process *p, const uint64_t a[6])
{
    (void)a;
    const uint64_t none[6] = {0};
    return sys_inotify_init1(p, none);
}

/* The host has no inotify_add_watchat: the path is opened O_PATH and
 * watched through its /proc/self/fd link, the same inode. */
static long sys_inotify_add_watch(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    uint32_t mask = (uint32_t)a[2];
    struct host_path hp;
    long r = proxy_fs_host_path(p, a[1], !(mask & IN_DONT_FOLLOW), &hp);
    if (r < 0)
        return r;
    int fd = open_o_path(&hp);
    if (fd < 0)
        return fd;
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    r = proxy_host_result(inotify_add_watch(host_fd, link, mask));
    close(fd);
    return r;
}

static long sys_inotify_rm_watch(struct proxy_process *p, const uint64_t a[6])
{
    int host_fd = guest_host_fd(p, a[0]);
    if (host_fd < 0)
        return host_fd;
    return proxy_host_result(inotify_rm_watch(host_fd, (int)a[1]));
}

/* ---- table --------------------------------------------------------------- */

const struct proxy_syscall proxy_fs_syscalls[] = {
    {SYS_open, "open", sys_open},
    {SYS_openat, "openat", sys_openat},
    {SYS_creat, "creat", sys_creat},
    {SYS_stat, "stat", sys_stat},
    {SYS_lstat, "lstat", sys_lstat},
    {SYS_fstat, "fstat", sys_fstat},
    {SYS_newfstatat, "newfstatat", sys_newfstatat},
    {SYS_statx, "statx", sys_statx},
    {SYS_statfs, "statfs", sys_statfs},
    {SYS_fstatfs, "fstatfs", sys_fstatfs},
    {SYS_inotify_init, "inotify_init", sys_inotify_init},
    {SYS_inotify_init1, "inotify_init1", sys_inotify_init1},
    {SYS_inotify_add_watch, "inotify_add_watch", sys_inotify_add_watch},
    {SYS_inotify_rm_watch, "inotify_rm_watch", sys_inotify_rm_watch},
    {-1, NULL, NULL},
};
