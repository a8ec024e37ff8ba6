/*
 * vfs.c - virtual files: /proc and /sys files that describe the machine
 * and the process, made from detcore's answers and the guest's own state
 * when the guest opens them, and deterministic reads from /dev/urandom.
 * This file opens them and lists the directories; what each one says,
 * the table of them and the virtual init's /proc/1 are procfs.c's.
 *
 * A virtual file is a snapshot: its content is generated at open into a
 * host memfd (named "hvrun-vfs:<path>", which readlink of the fd turns
 * back into <path>), reopened read-only so the guest cannot write it, and
 * installed as an ordinary guest fd. Linux generates /proc files at read
 * time; a snapshot at open is what a program that reads the file once sees
 * either way. fstat shows a 0444 regular file whose size is the content's
 * (Linux says 0); stat by name still reaches the host's file. The names
 * are matched after proxy_path_rewrite, so /proc/self, /proc/thread-self
 * and /proc/<guest pid> all arrive as /proc/self; a relative name is joined
 * to its directory's host path (readlink of the dirfd).
 *
 * Layouts follow Linux 6.1 (fs/proc/array.c, task_mmu.c, meminfo.c, stat.c,
 * arch/x86/kernel/cpu/proc.c). Where the guest's state has no value for a
 * field (context switches, page faults, tty), the field is a fixed number.
 */
#include "proxy.h"
#include "fdtable.h"
#include "config.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "internal.h"
#include "vfs.h"

#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/statfs.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cpu_x86_64.h"
#include "det.h"

#define MEMFD_PREFIX "hvrun-vfs:"
#define MEMFD_LINK_PREFIX "/memfd:" MEMFD_PREFIX
#define DELETED_SUFFIX " (deleted)"

/* ---- names --------------------------------------------------------------- */

/* Copies path with empty and "." components dropped and ".." applied by
 * name (/proc and /sys hold no symlinks hvrun has not rewritten already).
 * A trailing '/' is kept: it makes a file name ENOTDIR, as on the host. */
static void normalise(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    out[o++] = '/';
    const char *s = in;
    while (*s) {
        while (*s == '/')
            s++;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 0)
            break;
        if (len == 1 && s[0] == '.') {
            /* skip */
        } else if (len == 2 && s[0] == '.' && s[1] == '.') {
            while (o > 1 && out[o - 1] != '/')
                o--;
            if (o > 1)
                o--;
            while (o > 1 && out[o - 1] != '/')
                o--;
        } else if (o + len + 1 < cap) {
            memcpy(out + o, s, len);
            o += len;
            out[o++] = '/';
        }
        s += len;
    }
    if (o > 1 && !(s > in && s[-1] == '/'))
        o--; /* the separator after the last component */
    out[o] = '\0';
}

/* A /proc/<n>/ component that means this process: the guest's pid, or,
 * in a name read back from a directory fd the rewrite opened (host_pid),
 * hvrun's own. Only there: in a name the guest gave, hvrun's host pid is
 * just a number, which may well be one of the guest's pids or tids (in a
 * container hvrun's pid is small); taken for "self" there, a thread's
 * /proc/PID/task/TID/stat read hvrun's own state (LTP's futex_wake02 then
 * waited forever for a thread to sleep). */
static bool self_pid_component(const struct proxy_process *p, const char *s,
                               size_t len, bool host_pid)
{
    if (len == 4 && memcmp(s, "self", 4) == 0)
        return true;
    if (len == 11 && memcmp(s, "thread-self", 11) == 0)
        return true;
    char num[16];
    if (len == 0 || len >= sizeof(num))
        return false;
    memcpy(num, s, len);
    num[len] = '\0';
    char *end;
    long v = strtol(num, &end, 10);
    return *end == '\0' && num[0] != '0' &&
           (v == p->pid || (host_pid && v == vmm_host_self_pid()));
}

/* /proc/<self-ish>/[task/<n>/]rest -> /proc/self/rest, in place (host_pid:
 * a name read back from a host fd, self_pid_component). */
static void canon_proc_self(const struct proxy_process *p, char *path,
                            size_t cap, bool host_pid)
{
    if (strncmp(path, "/proc/", 6) != 0)
        return;
    char *comp = path + 6;
    char *slash = strchr(comp, '/');
    if (!slash ||
        !self_pid_component(p, comp, (size_t)(slash - comp), host_pid))
        return;
    char *rest = slash;
    if (strncmp(comp, "thread-self/", 12) == 0 && p->tid != p->pid) {
        /* the calling thread's own directory, /proc/self/task/TID */
        char tail[PROXY_PATH_MAX];
        snprintf(tail, sizeof(tail), "%s", rest);
        if (snprintf(path, cap, "/proc/self/task/%d%s", p->tid, tail) >=
            (int)cap)
            path[0] = '\0'; /* too long to be a /proc file */
        return;
    }
    if (strncmp(rest, "/task/", 6) == 0) {
        char *t = rest + 6, *ts = strchr(t, '/');
        if (ts && self_pid_component(p, t, (size_t)(ts - t), host_pid))
            rest = ts;
    }
    memmove(path + 10, rest, strlen(rest) + 1);
    memcpy(path, "/proc/self", 10);
}

/* The full canonical name of (dirfd, path), or false when it cannot be a
 * virtual file. */
bool proxy_vfs_full_name(const struct proxy_process *p, int dirfd,
                         const char *path, char *out, size_t cap)
{
    char joined[PROXY_PATH_MAX];
    if (path[0] == '/') {
        snprintf(joined, sizeof(joined), "%s", path);
    } else {
        char link[64], raw[PROXY_PATH_MAX], dir[PROXY_PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, raw, sizeof(raw) - 1);
        if (n <= 0 || raw[0] != '/')
            return false;
        raw[n] = '\0';
        /* the host's name of the directory, "/" ended so that a bare
         * /proc/<pid> is canonical too: hvrun's pid there is "self" */
        char slashed[PROXY_PATH_MAX + 1];
        snprintf(slashed, sizeof(slashed), "%s/", raw);
        normalise(slashed, dir, sizeof(dir));
        canon_proc_self(p, dir, sizeof(dir), true);
        if (snprintf(joined, sizeof(joined), "%s%s", dir, path) >=
            (int)sizeof(joined))
            return false;
    }
    normalise(joined, out, cap);
    canon_proc_self(p, out, cap, false);
    return true;
}

/* The full name of (dirfd, path) as a directory: without a trailing "/"
 * ("/proc/N/task/" is /proc/N/task; LeakSanitizer opens it so). */
static bool dir_full_name(const struct proxy_process *p, int dirfd,
                          const char *path, char *out, size_t cap)
{
    if (!proxy_vfs_full_name(p, dirfd, path, out, cap))
        return false;
    size_t len = strlen(out);
    if (len > 1 && out[len - 1] == '/')
        out[len - 1] = '\0';
    return true;
}

/* The name readlink shows for the virtual file (Linux's /proc/<pid>/x). */
static void display_name(const struct proxy_process *p, const char *path,
                         char *out, size_t cap)
{
    if (strncmp(path, "/proc/self/", 11) == 0)
        snprintf(out, cap, "/proc/%d/%s", p->pid, path + 11);
    else
        snprintf(out, cap, "%s", path);
}

/* ---- opening ------------------------------------------------------------- */

static int write_all(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, s, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        s += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A virtual file's guest path ("/proc/2/status"): what its memfd's name
 * holds after MEMFD_PREFIX. false for any other host fd. */
bool proxy_vfs_virtual_path(int host_fd, char *out, size_t cap)
{
    char link[64], target[300];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    size_t pre = sizeof(MEMFD_LINK_PREFIX) - 1;
    if (n <= (ssize_t)pre || memcmp(target, MEMFD_LINK_PREFIX, pre) != 0)
        return false;
    target[n] = 0;
    char *deleted = strstr(target + pre, DELETED_SUFFIX);
    if (deleted)
        *deleted = 0;
    snprintf(out, cap, "%s", target + pre);
    return true;
}

/* The content in a memfd, reopened read-only at offset 0. */
static int content_fd(const char *name, const struct vbuf *b, int flags)
{
    char memfd_name[250];
    snprintf(memfd_name, sizeof(memfd_name), MEMFD_PREFIX "%.200s", name);
    int mfd = memfd_create(memfd_name, MFD_CLOEXEC);
    if (mfd < 0)
        return -errno;
    int rc = write_all(mfd, b->s ? b->s : "", b->len);
    if (rc == 0 && fchmod(mfd, 0444) < 0)
        rc = -errno;
    if (rc < 0) {
        close(mfd);
        return rc;
    }
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", mfd);
    int fd = open(link, O_RDONLY | O_CLOEXEC | O_NOCTTY | (flags & O_NONBLOCK));
    rc = fd < 0 ? -errno : fd;
    close(mfd);
    return rc;
}

/* What a virtual file's open refuses (it is a read-only snapshot), or 0. */
static long vfile_flags_refused(int flags)
{
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return -EEXIST;
    if ((flags & O_ACCMODE) != O_RDONLY)
        return -EACCES;
    if (flags & O_DIRECTORY)
        return -ENOTDIR;
    return 0;
}

/* The content gen makes for `of`, logged as a read of src and installed
 * in p as a read-only fd whose link reads `display`. */
static long install_generated(struct proxy_process *p, struct proxy_process *of,
                              int (*gen)(struct proxy_process *, struct vbuf *),
                              enum det_source src, const char *display,
                              int flags)
{
    struct vbuf b = {0};
    int rc = gen(of, &b);
    if (rc == 0 && b.failed)
        rc = -ENOMEM;
    if (rc < 0) {
        free(b.s);
        return rc;
    }
    p->det->reads[src]++;
    det_log_value(p->det, src, b.s ? b.s : "", b.len);
    int host_fd = content_fd(display, &b, flags);
    free(b.s);
    if (host_fd < 0)
        return host_fd;
    return proxy_fd_install(&p->fds, host_fd, (flags & O_CLOEXEC) != 0, 0);
}

/* The content is generated for `of` (the process named in the path) and
 * the fd installed in p (the caller). */
static long open_vfile(struct proxy_process *p, struct proxy_process *of,
                       const struct vfile *v, int flags)
{
    /* The run's /proc/sys is read-only, as a container's, hvrun's
     * answers and the host's files alike (procguard.c). */
    if (strncmp(v->path, "/proc/sys/", 10) == 0 &&
        (flags & O_ACCMODE) != O_RDONLY)
        return -EROFS;
    long rc = vfile_flags_refused(flags);
    if (rc < 0)
        return rc;
    if ((rc = proxy_vfs_may_open(p, of, v)) < 0)
        return rc;
    char name[PROXY_PATH_MAX];
    display_name(of, v->path, name, sizeof(name));
    rc = install_generated(p, of, v->gen, v->src, name, flags);
    /* its PROCMAP_QUERY ioctl asks of's mappings (procmap_query.c) */
    if (rc >= 0 && strcmp(v->path, "/proc/self/maps") == 0)
        proxy_fd_get(&p->fds, (int)rc)->maps_pid = of->pid;
    return rc;
}

/* /proc/1's directories: the host's, opened by hvrun and never listed
 * from the host (proxy_vfs_dir_records). The fd directory is opened
 * O_PATH: the host init's fds are not hvrun's to read. */
static long open_init_dir(struct proxy_process *p, const char *name,
                          bool fd_dir, int flags)
{
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT))
        return -EISDIR;
    int how = fd_dir ? O_PATH : O_RDONLY | (flags & O_NONBLOCK);
    int fd = open(name, how | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    return proxy_fd_install(&p->fds, fd, (flags & O_CLOEXEC) != 0, 0);
}

/* An open of a name under the virtual init's /proc/1 (as the route left
 * it: its links were followed there, or refused). */
static long open_init_entry(struct proxy_process *p, const struct init_name *in,
                            const char *name, int flags)
{
    if (in->place == INIT_PID_DIR) { /* a pidfd of the init, as any /proc/<N> */
        long fd = open_init_dir(p, name, false, flags);
        if (fd >= 0)
            proxy_fd_get(&p->fds, (int)fd)->procdir_pid = PROXY_INIT_PID;
        return fd;
    }
    if (in->place == INIT_TASK_DIR)
        return open_init_dir(p, name, false, flags);
    if (in->place != INIT_ENTRY)
        return -ENOENT;
    const struct init_entry *e = in->entry;
    long rc;
    switch (e->type) {
    case DT_REG:
        if (in->rest[0])
            return -ENOTDIR;
        if ((rc = vfile_flags_refused(flags)) < 0)
            return rc;
        return install_generated(p, p, e->gen, DET_SRC_IDS, name, flags);
    case DT_LNK:
        return -ELOOP; /* O_NOFOLLOW on the link itself */
    default:
        if (!proxy_vfs_init_fd_dir_readable(p))
            return -EACCES;
        return proxy_vfs_ends_dir(in->rest) ? open_init_dir(p, name, true, flags)
                                  : -ENOENT;
    }
}

/*
 * /proc/<N>/... names another process. For another guest process the name
 * becomes /proc/self/... and *of that process; for a number that is no
 * guest's (a host process) the guest gets ENOENT: host processes are not
 * part of the run. Returns false for names that are not /proc/<N>/...
 */
static bool has_thread(const struct proxy_process *q, int tid)
{
    for (int k = 0; k < q->nr_threads; k++)
        if (q->threads[k].state != PROXY_THREAD_EXITED &&
            (k == q->cur ? q->tid : q->threads[k].tid) == tid)
            return true;
    return false;
}

/* What Linux still shows of a zombie (its mm, files and fs gone, its
 * task until the reap): stat and status (state Z) and an empty cmdline.
 * hvrun keeps no more of it, so its other files stay hidden. */
static bool zombie_shown(const char *rest)
{
    return strcmp(rest, "/stat") == 0 || strcmp(rest, "/status") == 0 ||
           strcmp(rest, "/cmdline") == 0;
}

static bool proc_pid_name(struct proxy_process *p, char *name,
                          struct proxy_process **of, bool *hidden)
{
    *of = p;
    *hidden = false;
    if (strncmp(name, "/proc/", 6) != 0 || !p->world)
        return false;
    char *end;
    long n = strtol(name + 6, &end, 10);
    if (end == name + 6 || *end != '/' || n <= 0 || name[6] == '0')
        return false;
    struct proxy_process *q = proxy_world_find_tid(p->world, (int)n);
    bool shown = q && (q->zombie ? q->pid == n && zombie_shown(end)
                                 : q->as != NULL);
    if (!shown) {
        /* the virtual init's names are proxy_vfs_init_route's */
        *hidden = !(n == PROXY_INIT_PID && proxy_vfs_init_shown(p));
        return true;
    }
    *of = q;
    if (q->pid != n) {
        /* A thread that is not its process's leader: /proc/<tid>/ is
         * reachable (not listed) and is that thread's /proc/PID/task/TID. */
        char rest[PROXY_PATH_MAX];
        snprintf(rest, sizeof(rest), "%s", end);
        if (snprintf(name, PROXY_PATH_MAX, "/proc/self/task/%ld%s", n, rest) >=
            PROXY_PATH_MAX)
            *hidden = true;
        return true;
    }
    memmove(name + 10, end, strlen(end) + 1);
    memcpy(name, "/proc/self", 10);
    return true;
}

/* /proc/self/task/T/rest, T a thread of q's: /proc/self/rest, returning T
 * (q's files, gdb opens /proc/PID/task/TID/mem; comm, stat and status
 * then describe thread T); else 0 and the name unchanged. */
static int strip_task(struct proxy_process *q, char *name)
{
    const char *prefix = "/proc/self/task/";
    size_t plen = strlen(prefix);
    if (strncmp(name, prefix, plen) != 0)
        return 0;
    char *tend;
    long t = strtol(name + plen, &tend, 10);
    if (tend == name + plen || *tend != '/' || !has_thread(q, (int)t))
        return 0;
    memmove(name + 10, tend, strlen(tend) + 1);
    return (int)t;
}

static bool fdinfo_name(const char *name)
{
    return strncmp(name, "/proc/self/fdinfo/", 18) == 0 && name[18] >= '0' &&
           name[18] <= '9';
}

bool proxy_vfs_canonical_name(const struct proxy_process *p, int dirfd,
                              const char *path, char *out, size_t cap)
{
    return proxy_vfs_full_name(p, dirfd, path, out, cap);
}

/* What (dirfd, path) names among the virtual files. */
enum vfile_lookup { VFILE_NONE, VFILE_HIDDEN, VFILE_FOUND };

/* VFILE_FOUND sets *v and *of (whose file it is); VFILE_HIDDEN is a /proc
 * pid that is no guest's. */
static enum vfile_lookup lookup_vfile(struct proxy_process *p, int dirfd,
                                      const char *path, const struct vfile **v,
                                      struct proxy_process **of)
{
    if (!proxy_vfs_maybe_virtual_name(path))
        return VFILE_NONE;
    char name[PROXY_PATH_MAX];
    if (!proxy_vfs_full_name(p, dirfd, path, name, sizeof(name)))
        return VFILE_NONE;
    bool hidden;
    if (proc_pid_name(p, name, of, &hidden) && hidden)
        return VFILE_HIDDEN;
    (*of)->proc_tid = strip_task(*of, name);
    for (size_t i = 0; i < proxy_vfs_nr_files; i++) {
        if (strcmp(name, proxy_vfs_files[i].path) != 0)
            continue;
        if (!proxy_vfs_gate_open(p, proxy_vfs_files[i].gate))
            return VFILE_NONE;
        *v = &proxy_vfs_files[i];
        return VFILE_FOUND;
    }
    return VFILE_NONE;
}

/* The guest process whose /proc directory the canonical name is
 * (/proc/self or /proc/<N>, N a thread-group leader of the caller's pid
 * namespace, a zombie too: Linux keeps its directory until the reap), or
 * NULL. */
static struct proxy_process *proc_dir_process(struct proxy_process *p,
                                              const char *name)
{
    if (strcmp(name, "/proc/self") == 0)
        return p;
    if (strncmp(name, "/proc/", 6) != 0 || name[6] < '1' || name[6] > '9')
        return NULL;
    char *end;
    long n = strtol(name + 6, &end, 10);
    if (*end || n > INT_MAX || !p->world)
        return NULL;
    struct proxy_process *q = proxy_ns_find(p, (int)n);
    return q && proxy_ns_pid_of(p, q) == n ? q : NULL;
}

/* /proc/<N> itself of another guest process N: opened by hvrun
 * (open_guest_proc_dir), never looked up on the host, where /proc/<N> is
 * some host process, hvrun itself when N happens to be hvrun's host pid. */
static bool other_guest_proc_dir(struct proxy_process *p, int dirfd,
                                 const char *path)
{
    char name[PROXY_PATH_MAX];
    struct proxy_process *of;
    return dir_full_name(p, dirfd, path, name, sizeof(name)) &&
           (of = proc_dir_process(p, name)) && of != p;
}

bool proxy_vfs_is_virtual(struct proxy_process *p, int dirfd, const char *path)
{
    const struct vfile *v;
    struct proxy_process *of;
    return fdinfo_name(path) || other_guest_proc_dir(p, dirfd, path) ||
           lookup_vfile(p, dirfd, path, &v, &of) == VFILE_FOUND;
}

/* The inode number of an fd's object as fstat shows it to the guest
 * (detcore's canonical numbering), or 0. */
static uint64_t guest_ino_of_host_fd(const struct proxy_process *p, int host_fd)
{
    struct stat st;
    if (host_fd < 0 || fstat(host_fd, &st) < 0)
        return 0;
    det_stat_canon(p->det, &st);
    return st.st_ino;
}

/* fdinfo's ino: what fstat gives the guest, a procfs entry's stable
 * number included (its host number changes per lookup; fs.c stat_out). */
static uint64_t fdinfo_ino(struct proxy_process *p, int host_fd)
{
    struct stat st;
    struct statfs sf;
    if (fstatfs(host_fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC ||
        fstat(host_fd, &st) < 0)
        return guest_ino_of_host_fd(p, host_fd);
    st.st_ino = proxy_proc_stable_ino(p, host_fd, st.st_ino);
    det_stat_canon(p->det, &st);
    return st.st_ino;
}

/* The guest fd whose host fd is host_fd, or -1. */
static int guest_fd_of_host(const struct proxy_process *p, int host_fd)
{
    for (int fd = 0; fd < p->fds.cap; fd++) {
        if (p->fds.fds[fd].kind != PROXY_FD_FREE &&
            p->fds.fds[fd].host_fd == host_fd)
            return fd;
    }
    return -1;
}

/*
 * /proc/self/fdinfo/N (the rewrite made N the host fd): the host's lines,
 * with the guest's close-on-exec bit in flags (hvrun's host fds all have
 * it) and the inode number fstat gives the guest; a plain eventfd's id is
 * the run's (io/epoll.c), a perf event's and a pidfd's flags and mount id
 * those of the file Linux makes. Other lines (eventfd counts, epoll and
 * inotify entries) are the host's.
 */
/*
 * The lines Linux's show_fdinfo adds for the kinds whose host fd is an
 * eventfd of hvrun's: a timerfd's (timerfd_show: the timer, ticks the
 * unread expirations), a signalfd's mask (signalfd_show_fdinfo), a
 * pidfd's process (pidfd_show_fdinfo: its pid as the reader sees it, -1
 * once reaped; NSpid its pid at the reader's level only). A POSIX message
 * queue descriptor adds none.
 */
static void kind_fdinfo(struct proxy_process *p, const struct proxy_fd *f,
                        unsigned long long count, struct vbuf *b)
{
    char timer[256];
    if (f->timerfd &&
        proxy_timerfd_fdinfo(f->timerfd, count, timer, sizeof(timer)) > 0)
        vb_printf(b, "%s", timer);
    if (f->signalfd)
        vb_printf(b, "sigmask:\t%016llx\n",
                  (unsigned long long)proxy_signalfd_mask(f->signalfd));
    if (f->pidfd_pid > 0) {
        struct proxy_process *q =
            p->world ? proxy_world_find(p->world, f->pidfd_pid) : NULL;
        int nr = q ? proxy_ns_pid_of(p, q) : -1;
        if (nr == 0)
            nr = -1; /* not in the reader's pid namespace */
        vb_printf(b, "Pid:\t%d\nNSpid:\t%d\n", nr, nr);
    }
}

/*
 * The mount ids fdinfo shows for the kinds whose host fd is another
 * kind's: a perf event's (a pipe here) is an anonymous inode's, a pidfd's
 * (an eventfd here) a pidfd's (pidfs since Linux 6.9, anon_inodefs
 * before). The host's own ids, as every fdinfo of the run shows them (an
 * eventfd's mnt_id is the host's anon_inodefs'), learnt from fds of
 * hvrun's own at start (proxy_vfs_learn_host_mounts: pidfd_open is not
 * among the calls its seccomp filter allows); -1: not learnt, the host
 * fd's line stays.
 */
static int anon_mnt_id = -1, pidfd_mnt_id = -1;

static int mnt_id_of(int fd)
{
    char path[64], raw[512];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    int info = fd < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = info < 0 ? -1 : read(info, raw, sizeof(raw) - 1);
    if (info >= 0)
        close(info);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    raw[n] = '\0';
    const char *line = strstr(raw, "mnt_id:");
    int id;
    return line && sscanf(line, "mnt_id: %d", &id) == 1 ? id : -1;
}

void proxy_vfs_learn_host_mounts(void)
{
    if (anon_mnt_id < 0)
        anon_mnt_id = mnt_id_of(eventfd(0, EFD_CLOEXEC));
    if (pidfd_mnt_id < 0)
        pidfd_mnt_id = mnt_id_of((int)syscall(SYS_pidfd_open, getpid(), 0));
}

/* The mnt_id line's value for slot's kind, or -1: the host fd's. */
static int own_kind_mnt_id(const struct proxy_fd *slot)
{
    return slot->pidfd_pid > 0 ? pidfd_mnt_id
           : slot->perf        ? anon_mnt_id
                               : -1;
}

static long open_fdinfo(struct proxy_process *p, const char *name, int flags)
{
    char *end;
    long host_fd = strtol(name + strlen("/proc/self/fdinfo/"), &end, 10);
    int gfd = -1;
    if (*end == '\0')
        gfd = proxy_fd_host(&p->fds, p->fs.fdinfo_guest_fd) == host_fd
                  ? p->fs.fdinfo_guest_fd
                  : guest_fd_of_host(p, (int)host_fd);
    if (gfd < 0)
        return -ENOENT;
    if ((flags & O_ACCMODE) != O_RDONLY)
        return -EACCES;
    char path[64], raw[4096];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%ld", host_fd);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, raw, sizeof(raw) - 1);
    if (fd >= 0)
        close(fd);
    if (n < 0)
        return -ENOENT;
    raw[n] = '\0';
    struct vbuf b = {0};
    const struct proxy_fd *slot = &p->fds.fds[gfd];
    bool own_kind = slot->timerfd || slot->signalfd || slot->pidfd_pid > 0 ||
                    slot->mqd;
    unsigned long long count = 0;
    for (char *line = raw, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            nl = line + strlen(line) - 1;
        unsigned long fl;
        if (own_kind && strncmp(line, "eventfd-", 8) == 0) {
            /* the eventfd behind it is hvrun's: not the guest's file */
            (void)sscanf(line, "eventfd-count: %llx", &count);
        } else if (slot->eventfd && strncmp(line, "eventfd-id:", 11) == 0) {
            vb_printf(&b, "eventfd-id: %d\n", proxy_eventfd_id(slot->eventfd));
        } else if (sscanf(line, "flags: %lo", &fl) == 1) {
            fl &= ~(unsigned long)O_CLOEXEC;
            if (p->fds.fds[gfd].cloexec)
                fl |= O_CLOEXEC;
            if (slot->perf) /* perf_event_open's file is O_RDWR */
                fl = (fl & ~(unsigned long)O_ACCMODE) | O_RDWR;
            vb_printf(&b, "flags:\t0%lo\n", fl);
        } else if (strncmp(line, "mnt_id:", 7) == 0 &&
                   own_kind_mnt_id(slot) >= 0) {
            vb_printf(&b, "mnt_id:\t%d\n", own_kind_mnt_id(slot));
        } else if (strncmp(line, "ino:", 4) == 0) {
            vb_printf(&b, "ino:\t%llu\n", (unsigned long long)
                      fdinfo_ino(p, (int)host_fd));
        } else {
            vb_put(&b, line, (size_t)(nl - line + 1));
        }
        if (!nl[0] || !nl[1])
            break;
    }
    kind_fdinfo(p, slot, count, &b);
    if (b.failed) {
        free(b.s);
        return -ENOMEM;
    }
    int host = content_fd(name, &b, flags);
    free(b.s);
    return host < 0 ? host
                    : proxy_fd_install(&p->fds, host, (flags & O_CLOEXEC) != 0, 0);
}

/* How hvrun opens the directory that stands for another guest's /proc/N
 * (or its task, fd, fdinfo): as the guest asked, O_PATH too. */
static int proc_dir_open_flags(int flags)
{
    return ((flags & O_PATH) ? O_PATH : O_RDONLY | (flags & O_NONBLOCK)) |
           O_DIRECTORY | O_CLOEXEC;
}

/* /proc/<N>/task, fd and fdinfo of another guest N: hvrun's own
 * /proc/self/task (fd, fdinfo) opened as the directory and listed as N's
 * threads (fds) (proxy_fd.listing_pid). LeakSanitizer's tracer lists its
 * parent's threads so; lsof and ls list another process's fds. The fd
 * directories are Linux's only to whom ptrace_may_access lets in. */
static bool open_other_task_dir(struct proxy_process *p, int host_dirfd,
                                const char *host_path, int flags,
                                long *result)
{
    char name[PROXY_PATH_MAX];
    struct proxy_process *of;
    bool hidden;
    if (!dir_full_name(p, host_dirfd, host_path, name, sizeof(name)) ||
        !proc_pid_name(p, name, &of, &hidden) || hidden || of == p ||
        (strcmp(name, "/proc/self/task") != 0 &&
         strcmp(name, "/proc/self/fd") != 0 &&
         strcmp(name, "/proc/self/fdinfo") != 0))
        return false;
    if (strcmp(name, "/proc/self/task") != 0 &&
        !proxy_ptrace_may_access(p, of)) {
        *result = -EACCES;
        return true;
    }
    if (!(flags & O_PATH) &&
        ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT))) {
        *result = -EISDIR;
        return true;
    }
    int fd = open(name, proc_dir_open_flags(flags));
    if (fd < 0) {
        *result = -errno;
        return true;
    }
    *result = proxy_fd_install(&p->fds, fd, (flags & O_CLOEXEC) != 0, 0);
    if (*result >= 0)
        proxy_fd_get(&p->fds, (int)*result)->listing_pid = of->pid;
    return true;
}

/*
 * /proc/<N>/map_files, N the caller or another guest: hvrun's own
 * map_files directory (0500 and root's: opened with hvrun's ids, a
 * non-root guest's fsuid could not), listed as N's mappings
 * (proxy_vfs_dir_records, proxy_fd.listing_pid for another's); another's
 * only to whom ptrace_may_access lets in (proc_map_files_readdir).
 */
static bool open_map_files_dir(struct proxy_process *p, int host_dirfd,
                               const char *host_path, int flags, long *result)
{
    char name[PROXY_PATH_MAX];
    struct proxy_process *of;
    bool hidden;
    if (!dir_full_name(p, host_dirfd, host_path, name, sizeof(name)) ||
        (proc_pid_name(p, name, &of, &hidden) && hidden) ||
        strcmp(name, "/proc/self/map_files") != 0)
        return false;
    if (of != p && !proxy_ptrace_may_access(p, of)) {
        *result = -EACCES;
        return true;
    }
    if (!(flags & O_PATH) &&
        ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT))) {
        *result = -EISDIR;
        return true;
    }
    const struct proxy_process *was = proxy_fscred_suspend();
    int fd = open(name, proc_dir_open_flags(flags));
    int err = errno;
    proxy_fscred_resume(was);
    if (fd < 0) {
        *result = -err;
        return true;
    }
    *result = proxy_fd_install(&p->fds, fd, (flags & O_CLOEXEC) != 0, 0);
    if (*result >= 0 && of != p)
        proxy_fd_get(&p->fds, (int)*result)->listing_pid = of->pid;
    return true;
}

/*
 * /proc/<N> itself, of a guest process N (the caller's own too): hvrun's
 * /proc/self opened as the directory, the fd remembering N
 * (proxy_fd.procdir_pid), because Linux takes such an fd as a pidfd in
 * pidfd_send_signal (stress-ng's pidfd stressor signals so). Without this
 * the name would reach the host's /proc/<N>, some host process or none.
 * Names under it (openat of "stat" on the fd) are N's: fs.c makes them
 * /proc/N/... before the rewrite (other_proc_dir_name). O_PATH opens it
 * too (but the caller's own /proc/self, which may be the link itself).
 */
static bool open_guest_proc_dir(struct proxy_process *p, int host_dirfd,
                                const char *host_path, int flags,
                                long *result)
{
    char name[PROXY_PATH_MAX];
    struct proxy_process *of;
    if (!dir_full_name(p, host_dirfd, host_path, name, sizeof(name)) ||
        !(of = proc_dir_process(p, name)) || ((flags & O_PATH) && of == p))
        return false; /* (O_PATH of its own: the host's does, the link too) */
    if (!(flags & O_PATH) &&
        ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT))) {
        *result = -EISDIR;
        return true;
    }
    int fd = open("/proc/self", proc_dir_open_flags(flags));
    if (fd < 0) {
        *result = -errno;
        return true;
    }
    *result = proxy_fd_install(&p->fds, fd, (flags & O_CLOEXEC) != 0, 0);
    if (*result >= 0)
        proxy_fd_get(&p->fds, (int)*result)->procdir_pid = of->pid;
    return true;
}

/*
 * A block device's or partition's counter file in sysfs
 * (/sys/devices/.../block/DISK[/PART]/{stat,inflight}, by whatever name
 * the guest reaches it: /sys/block/DISK/stat, /sys/class/block/...): the
 * generator of the run's machine, which counts no I/O (procmachine.c);
 * NULL for anything else. Its canonical host name in name.
 */
static int (*block_counter_gen(struct proxy_process *p, int dirfd,
                               const char *path, char *name, size_t cap))(
    struct proxy_process *, struct vbuf *)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    bool stat_file = strcmp(base, "stat") == 0;
    if ((!stat_file && strcmp(base, "inflight") != 0) ||
        !proxy_vfs_gate_open(p, GATE_HOST))
        return NULL;
    int fd = openat(dirfd, path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct statfs sfs;
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = fstatfs(fd, &sfs) == 0 && sfs.f_type == SYSFS_MAGIC
                    ? readlink(link, name, cap - 1)
                    : -1;
    close(fd);
    if (n <= 0)
        return NULL;
    name[n] = '\0';
    const char *block = strstr(name, "/block/");
    if (strncmp(name, "/sys/devices/", 13) != 0 || !block)
        return NULL;
    /* DISK/file or DISK/PART/file, whose directory is a device's (has dev) */
    int depth = 0;
    for (const char *c = block + 7; *c; c++)
        depth += *c == '/';
    char dev[PROXY_PATH_MAX];
    snprintf(dev, sizeof(dev), "%.*s/dev", (int)(base - path), path);
    if ((depth != 1 && depth != 2) || strchr(block + 7, '/') == NULL ||
        faccessat(dirfd, base == path ? "dev" : dev, F_OK, 0) != 0)
        return NULL;
    return stat_file ? proxy_sysfs_gen_block_stat
                     : proxy_sysfs_gen_block_inflight;
}

static bool open_block_counter(struct proxy_process *p, int dirfd,
                               const char *path, int flags, long *result)
{
    char name[PROXY_PATH_MAX];
    int (*gen)(struct proxy_process *, struct vbuf *) =
        block_counter_gen(p, dirfd, path, name, sizeof(name));
    if (!gen)
        return false;
    *result = vfile_flags_refused(flags);
    if (*result == 0)
        *result = install_generated(p, p, gen, DET_SRC_HOST, name, flags);
    return true;
}

bool proxy_vfs_open(struct proxy_process *p, int host_dirfd,
                    const char *host_path, int flags, long *result)
{
    /* O_PATH: another guest's /proc/N and its listings are hvrun's to
     * open (the host's /proc/N is some host process); the rest the host's */
    if (flags & O_PATH)
        return open_map_files_dir(p, host_dirfd, host_path, flags, result) ||
               open_other_task_dir(p, host_dirfd, host_path, flags, result) ||
               open_guest_proc_dir(p, host_dirfd, host_path, flags, result);
    char name[PROXY_PATH_MAX];
    struct init_name in;
    if (proxy_vfs_init_name_of(p, host_dirfd, host_path, name, sizeof(name), &in)) {
        *result = open_init_entry(p, &in, name, flags);
        return true;
    }
    if (open_map_files_dir(p, host_dirfd, host_path, flags, result) ||
        open_other_task_dir(p, host_dirfd, host_path, flags, result) ||
        open_guest_proc_dir(p, host_dirfd, host_path, flags, result))
        return true;
    if (fdinfo_name(host_path)) {
        *result = open_fdinfo(p, host_path, flags);
        return true;
    }
    const struct vfile *v;
    struct proxy_process *of;
    switch (lookup_vfile(p, host_dirfd, host_path, &v, &of)) {
    case VFILE_HIDDEN:
        *result = -ENOENT;
        return true;
    case VFILE_FOUND:
        *result = v->open ? v->open(p, of, v->path, flags)
                          : open_vfile(p, of, v, flags);
        return true;
    default:
        return open_block_counter(p, host_dirfd, host_path, flags, result);
    }
}

struct proxy_process *proxy_vfs_ns_owner(struct proxy_process *p,
                                         struct proxy_process *of)
{
    struct proxy_process *q = p->fs.ns_of_pid && p->world
                                  ? proxy_world_find(p->world, p->fs.ns_of_pid)
                                  : NULL;
    return q && !q->zombie ? q : of;
}

long proxy_vfs_ns_link(struct proxy_process *p, int host_dirfd,
                       const char *host_path, char *out, size_t cap)
{
    const struct vfile *v;
    struct proxy_process *of;
    enum vfile_lookup l = lookup_vfile(p, host_dirfd, host_path, &v, &of);
    if (l == VFILE_HIDDEN)
        return -ENOENT;
    if (l != VFILE_FOUND || v->open != proxy_vfs_open_ns)
        return 0;
    int n = proxy_ns_link_named(proxy_vfs_ns_owner(p, of),
                                v->path + strlen("/proc/self/ns/"), out, cap);
    return n < 0 ? -EIO : n;
}

/* The number in "type:[N]". */
static bool link_inum(const char *link, uint64_t *ino)
{
    const char *open_br = strchr(link, '[');
    char *end;
    if (!open_br)
        return false;
    unsigned long long v = strtoull(open_br + 1, &end, 10);
    if (*end != ']')
        return false;
    *ino = v;
    return true;
}

bool proxy_vfs_ns_inode(struct proxy_process *p, int host_fd, int dirfd,
                        const char *path, int at_flags, uint64_t *ino)
{
    if (host_fd < 0 && (!path || !path[0])) /* AT_EMPTY_PATH: the fd */
        host_fd = dirfd;
    if (host_fd >= 0) { /* fstat: an fd proxy_procfile_open_ns made */
        for (int fd = 0; fd < p->fds.cap; fd++) {
            const struct proxy_fd *f = &p->fds.fds[fd];
            int type;
            struct proxy_ns *ns;
            if (f->kind != PROXY_FD_FREE && f->host_fd == host_fd)
                return proxy_procfile_ns(f, &type, &ns) &&
                       (*ino = proxy_ns_inum(type, ns), true);
        }
        return false;
    }
    char link[PROXY_PATH_MAX];
    if (at_flags & AT_SYMLINK_NOFOLLOW)
        return false;
    return proxy_vfs_ns_link(p, dirfd, path, link, sizeof(link)) > 0 &&
           link_inum(link, ino);
}

/* ---- /dev/urandom -------------------------------------------------------- */

/* /dev/random is char 1:8 and /dev/urandom 1:9 on every Linux. */
static bool is_random_device(int host_fd)
{
    struct stat st;
    return fstat(host_fd, &st) == 0 && S_ISCHR(st.st_mode) &&
           major(st.st_rdev) == 1 &&
           (minor(st.st_rdev) == 8 || minor(st.st_rdev) == 9);
}

bool proxy_vfs_fd_det_random(struct proxy_process *p, int guest_fd)
{
    /* Not virtualised, the device is read from the host; but recorded or
     * replayed, its bytes go through detcore's tap (the same kernel
     * CSPRNG, by getrandom). */
    if (!p->det->cfg.virtualize_random && !p->det->tap)
        return false;
    struct proxy_fd *slot = proxy_fd_get(&p->fds, guest_fd);
    if (!slot)
        return false;
    if (!slot->rand_checked) {
        slot->det_random = is_random_device(slot->host_fd);
        slot->rand_checked = true;
    }
    return slot->det_random;
}

long proxy_vfs_random_read(struct proxy_process *p, const struct iovec *iov,
                           int n)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        det_random_fill(p->det, iov[i].iov_base, iov[i].iov_len);
        total += (long)iov[i].iov_len;
    }
    return total;
}

/* ---- /proc/self/fd listings ---------------------------------------------- */

/* Directories of hvrun's own /proc that list the guest instead: its fds,
 * and its threads (/proc/self/task, by virtual tid). */
enum fd_dir { FD_DIR_NONE, FD_DIR_FD, FD_DIR_FDINFO, FD_DIR_TASK,
              FD_DIR_MAP_FILES };

static enum fd_dir fd_dir_of_name(const struct proxy_process *p,
                                  const char *guest_path)
{
    char name[PROXY_PATH_MAX];
    normalise(guest_path, name, sizeof(name));
    size_t len = strlen(name);
    if (len > 1 && name[len - 1] == '/')
        name[len - 1] = '\0';
    if (strcmp(name, "/dev/fd") == 0)
        return FD_DIR_FD;
    canon_proc_self(p, name, sizeof(name), false);
    if (strcmp(name, "/proc/self/fd") == 0)
        return FD_DIR_FD;
    if (strcmp(name, "/proc/self/fdinfo") == 0)
        return FD_DIR_FDINFO;
    return FD_DIR_NONE;
}

static int list_guest_fds(struct proxy_process *p, char ***names, size_t *n)
{
    size_t count = 0;
    for (int fd = 0; fd < p->fds.cap; fd++)
        count += p->fds.fds[fd].kind != PROXY_FD_FREE;
    char **v = calloc(count ? count : 1, sizeof(*v));
    if (!v)
        return -ENOMEM;
    size_t k = 0;
    for (int fd = 0; fd < p->fds.cap && k < count; fd++) {
        if (p->fds.fds[fd].kind == PROXY_FD_FREE)
            continue;
        char num[16];
        snprintf(num, sizeof(num), "%d", fd);
        if (!(v[k] = strdup(num))) {
            proxy_vfs_names_free(v, k);
            return -ENOMEM;
        }
        k++;
    }
    *names = v;
    *n = k;
    return 0;
}

int proxy_vfs_list_dir(struct proxy_process *p, const char *guest_path,
                       char ***names, size_t *n)
{
    if (fd_dir_of_name(p, guest_path) == FD_DIR_NONE)
        return -ENOENT;
    return list_guest_fds(p, names, n);
}

/* Which of hvrun's fd directories host_fd is, by inode: the guest's
 * opens of /proc/self/fd reach hvrun's (proxy_path_rewrite). */
static enum fd_dir fd_dir_of_fd(int host_fd)
{
    static const struct {
        const char *path;
        enum fd_dir kind;
    } dirs[] = {{"/proc/self/fd", FD_DIR_FD},
                {"/proc/self/fdinfo", FD_DIR_FDINFO},
                {"/proc/self/task", FD_DIR_TASK},
                {"/proc/self/map_files", FD_DIR_MAP_FILES},
                {"/proc/thread-self/fd", FD_DIR_FD},
                {"/proc/thread-self/fdinfo", FD_DIR_FDINFO}};
    struct stat st, d;
    if (fstat(host_fd, &st) < 0 || !S_ISDIR(st.st_mode))
        return FD_DIR_NONE;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        if (stat(dirs[i].path, &d) == 0 && d.st_dev == st.st_dev &&
            d.st_ino == st.st_ino)
            return dirs[i].kind;
    }
    return FD_DIR_NONE;
}

static int nr_guest_fds(const struct proxy_process *p)
{
    int n = 0;
    for (int fd = 0; fd < p->fds.cap; fd++)
        n += p->fds.fds[fd].kind != PROXY_FD_FREE;
    return n;
}

/* Linux gives /proc/<pid>/fd the number of open fds as its size: the
 * host's directory would count hvrun's. */
int64_t proxy_vfs_dir_size_fixup(const struct proxy_process *p, uint64_t dev,
                                 uint64_t ino, int64_t size)
{
    static const char *const fd_dirs[] = {"/proc/self/fd",
                                          "/proc/thread-self/fd"};
    for (size_t i = 0; i < 2; i++) {
        struct stat d;
        if (stat(fd_dirs[i], &d) == 0 && d.st_dev == dev && d.st_ino == ino)
            return nr_guest_fds(p);
    }
    return size;
}

uint64_t proxy_vfs_dir_nlink_fixup(const struct proxy_process *p, uint64_t dev,
                                   uint64_t ino, uint64_t nlink)
{
    struct stat d;
    if (stat("/proc/self/task", &d) < 0 || d.st_dev != dev || d.st_ino != ino)
        return nlink;
    uint64_t threads = 0; /* proc_task_getattr: 2 + get_nr_threads */
    for (int i = 0; p->threads && i < p->nr_threads; i++)
        threads += p->threads[i].state != PROXY_THREAD_EXITED;
    return 2 + (threads ? threads : 1);
}

int proxy_vfs_list_dir_fd(struct proxy_process *p, int host_fd, char ***names,
                          size_t *n)
{
    enum fd_dir kind = fd_dir_of_fd(host_fd);
    if (kind == FD_DIR_NONE || kind == FD_DIR_MAP_FILES)
        return -ENOENT;
    return list_guest_fds(p, names, n);
}

/* struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name. */
static void put_dirent64(struct vbuf *b, uint64_t ino, uint64_t off,
                         unsigned char type, const char *name)
{
    size_t name_len = strlen(name);
    size_t reclen = (19 + name_len + 1 + 7) & ~(size_t)7;
    char rec[64] = {0};
    if (reclen > sizeof(rec))
        return;
    uint16_t reclen16 = (uint16_t)reclen;
    memcpy(rec, &ino, 8);
    memcpy(rec + 8, &off, 8);
    memcpy(rec + 16, &reclen16, 2);
    rec[18] = (char)type;
    memcpy(rec + 19, name, name_len);
    vb_put(b, rec, reclen);
}

static bool is_proc_root(int host_fd)
{
    struct statfs sf;
    struct stat st;
    return fstatfs(host_fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC &&
           fstat(host_fd, &st) == 0 && st.st_ino == 1;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/*
 * The /proc directory as the run sees it: the host's named entries (self,
 * cpuinfo, ...) in the kernel's order, then one directory per guest
 * process in pid order, the virtual init's 1 first; host processes are
 * not listed.
 */
static int proc_root_records(struct proxy_process *p, int host_fd,
                             struct vbuf *b)
{
    char buf[8192];
    uint64_t off = 0;
    lseek(host_fd, 0, SEEK_SET);
    for (;;) {
        long n = syscall(SYS_getdents64, host_fd, buf, sizeof(buf));
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        for (long at = 0; at < n;) {
            struct dirent64 *d = (struct dirent64 *)(void *)(buf + at);
            char entry[300];
            snprintf(entry, sizeof(entry), "/proc/%s", d->d_name);
            if (!all_digits(d->d_name))
                put_dirent64(b, proxy_proc_name_ino(entry), ++off, d->d_type,
                             d->d_name);
            at += d->d_reclen;
        }
    }
    struct proxy_world *w = p->world;
    for (int pid = 1; w && pid < w->next_pid; pid++) {
        if (!proxy_world_find(w, pid) &&
            !(pid == PROXY_INIT_PID && proxy_vfs_init_shown(p)))
            continue;
        char name[16];
        snprintf(name, sizeof(name), "%d", pid);
        put_dirent64(b, 0x10000 + (uint64_t)pid, ++off, DT_DIR, name);
    }
    return 0;
}

/* Whether host_fd is one of the virtual init's directories (open_init_dir
 * opened it): its name, and where that is, in *in. */
static bool init_dir_of_fd(int host_fd, char *name, size_t cap,
                           struct init_name *in)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = proxy_vfs_host_pid1_is_hvrun() ? -1 : readlink(link, name, cap - 1);
    if (n <= 0)
        return false;
    name[n] = '\0';
    proxy_vfs_parse_init_name(name, in);
    return in->place == INIT_PID_DIR || in->place == INIT_TASK_DIR ||
           (in->place == INIT_ENTRY && in->entry->type == DT_DIR &&
            proxy_vfs_ends_dir(in->rest));
}

static uint64_t init_entry_ino(const char *dir, const char *entry)
{
    char name[PROXY_PATH_MAX];
    int n = snprintf(name, sizeof(name), "%s/%s", dir, entry);
    return n > 0 && (size_t)n < sizeof(name) ? proxy_proc_name_ino(name) : 0;
}

/* A virtual init directory's listing: ".", "..", then its entries in
 * Linux's order (the fd directory has none). */
static int init_dir_records(const char *name, const struct init_name *in,
                            char **raw, size_t *len)
{
    struct vbuf b = {0};
    uint64_t off = 0;
    put_dirent64(&b, proxy_proc_name_ino(name), ++off, DT_DIR, ".");
    put_dirent64(&b, init_entry_ino(name, ".."), ++off, DT_DIR, "..");
    if (in->place == INIT_TASK_DIR)
        put_dirent64(&b, init_entry_ino(name, "1"), ++off, DT_DIR, "1");
    for (size_t i = in->in_task ? 1 : 0;
         in->place == INIT_PID_DIR && i < proxy_vfs_nr_init_entries; i++)
        put_dirent64(&b, init_entry_ino(name, proxy_vfs_init_entries[i].name), ++off,
                     proxy_vfs_init_entries[i].type, proxy_vfs_init_entries[i].name);
    if (b.failed) {
        free(b.s);
        return -ENOMEM;
    }
    *raw = b.s;
    *len = b.len;
    return 0;
}

bool proxy_vfs_guest_listing_dir(int host_fd)
{
    char name[PROXY_PATH_MAX];
    struct init_name in;
    return fd_dir_of_fd(host_fd) != FD_DIR_NONE ||
           init_dir_of_fd(host_fd, name, sizeof(name), &in);
}

int proxy_vfs_dir_records(struct proxy_process *p, int host_fd, char **raw,
                          size_t *len)
{
    char init_name[PROXY_PATH_MAX];
    struct init_name in;
    if (init_dir_of_fd(host_fd, init_name, sizeof(init_name), &in))
        return init_dir_records(init_name, &in, raw, len);
    enum fd_dir kind = fd_dir_of_fd(host_fd);
    if (kind == FD_DIR_NONE && is_proc_root(host_fd)) {
        struct vbuf pb = {0};
        int rc = proc_root_records(p, host_fd, &pb);
        if (rc == 0 && pb.failed)
            rc = -ENOMEM;
        if (rc < 0) {
            free(pb.s);
            return rc;
        }
        *raw = pb.s;
        *len = pb.len;
        return 0;
    }
    if (kind == FD_DIR_NONE)
        return -ENOENT;
    struct vbuf b = {0};
    struct stat st;
    uint64_t off = 0;
    put_dirent64(&b, fstat(host_fd, &st) == 0 ? st.st_ino : 0, ++off, DT_DIR,
                 ".");
    put_dirent64(&b, fstatat(host_fd, "..", &st, 0) == 0 ? st.st_ino : 0, ++off,
                 DT_DIR, "..");
    if (kind == FD_DIR_MAP_FILES) {
        /* one link per mapping of a file, as maps shows them (the host's
         * would be hvrun's own) */
        struct proxy_mapping m;
        for (size_t i = 0; p->as && (i = proxy_procfs_mapping(p, i, &m));) {
            if (!proxy_procfs_map_file_shown(&m))
                continue;
            char name[40], entry[80];
            snprintf(name, sizeof(name), "%llx-%llx",
                     (unsigned long long)m.start, (unsigned long long)m.end);
            snprintf(entry, sizeof(entry), "/proc/self/map_files/%s", name);
            put_dirent64(&b, proxy_proc_name_ino(entry), ++off, DT_LNK, name);
        }
        kind = FD_DIR_NONE;
    }
    if (kind == FD_DIR_TASK) {
        /* The guest's live threads by virtual tid, in creation order (the
         * host's would be hvrun's own threads). */
        for (int i = 0; p->threads && i < p->nr_threads; i++) {
            const struct proxy_thread *t = &p->threads[i];
            if (t->state == PROXY_THREAD_EXITED)
                continue;
            int tid = i == p->cur ? p->tid : t->tid;
            char name[16];
            snprintf(name, sizeof(name), "%d", tid);
            put_dirent64(&b, 0x20000 + (uint64_t)tid, ++off, DT_DIR, name);
        }
        kind = FD_DIR_NONE;
    }
    for (int fd = 0; kind != FD_DIR_NONE && fd < p->fds.cap; fd++) {
        if (p->fds.fds[fd].kind == PROXY_FD_FREE)
            continue;
        char guest_name[16], host_name[16];
        snprintf(guest_name, sizeof(guest_name), "%d", fd);
        snprintf(host_name, sizeof(host_name), "%d", p->fds.fds[fd].host_fd);
        /* the number stat gives the entry (procguard.c) */
        char entry[64];
        snprintf(entry, sizeof(entry), "/proc/self/%s/%s",
                 kind == FD_DIR_FD ? "fd" : "fdinfo", guest_name);
        uint64_t ino =
            fstatat(host_fd, host_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                ? proxy_proc_name_ino(entry)
                : 0;
        put_dirent64(&b, ino, ++off, kind == FD_DIR_FD ? DT_LNK : DT_REG,
                     guest_name);
    }
    if (b.failed) {
        free(b.s);
        return -ENOMEM;
    }
    *raw = b.s;
    *len = b.len;
    return 0;
}

void proxy_vfs_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* ---- links --------------------------------------------------------------- */

/* A number of the form /proc shows, in place of the component at s
 * (len bytes) when it equals v. */
static bool component_is(const char *s, size_t len, long v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%ld", v);
    return n > 0 && (size_t)n == len && memcmp(s, num, len) == 0;
}

/* "/proc/<hvrun's pid>[/task/<hvrun's tid>]..." (a guest fd on a /proc/self
 * directory reads so) becomes "/proc/<guest pid>[/task/<guest tid>]...". */
static size_t unmap_own_proc(const struct proxy_process *p, char *t, size_t len,
                             size_t cap)
{
    if (len < 7 || memcmp(t, "/proc/", 6) != 0)
        return len;
    const char *comp = t + 6, *end = t + len;
    const char *slash = memchr(comp, '/', (size_t)(end - comp));
    const char *comp_end = slash ? slash : end;
    if (!component_is(comp, (size_t)(comp_end - comp), (long)vmm_host_self_pid()))
        return len;
    char fixed[PROXY_PATH_MAX];
    int n = snprintf(fixed, sizeof(fixed), "/proc/%d", p->pid);
    const char *rest = comp_end;
    if (slash && (size_t)(end - slash) > 6 && memcmp(slash, "/task/", 6) == 0) {
        const char *t2 = slash + 6;
        const char *s2 = memchr(t2, '/', (size_t)(end - t2));
        const char *t2_end = s2 ? s2 : end;
        if (component_is(t2, (size_t)(t2_end - t2), (long)gettid())) {
            n += snprintf(fixed + n, sizeof(fixed) - (size_t)n, "/task/%d",
                          p->tid);
            rest = t2_end;
        }
    }
    size_t rest_len = (size_t)(end - rest);
    if ((size_t)n + rest_len > cap || (size_t)n + rest_len > sizeof(fixed))
        return len;
    memcpy(fixed + n, rest, rest_len);
    memcpy(t, fixed, (size_t)n + rest_len);
    return (size_t)n + rest_len;
}

/* "pipe:[N]" and "socket:[N]" name the host inode: the guest's number is
 * the one fstat gives it, so ls -l /proc/self/fd and ss agree between runs. */
static long fix_anon_link(const struct proxy_process *p, int host_fd,
                          char *target, size_t len, size_t cap)
{
    static const char *const kinds[] = {"pipe:[", "socket:["};
    for (size_t i = 0; i < 2; i++) {
        size_t k = strlen(kinds[i]);
        if (len <= k || strncmp(target, kinds[i], k) != 0 ||
            target[len - 1] != ']')
            continue;
        uint64_t ino = guest_ino_of_host_fd(p, host_fd);
        int n = snprintf(target, cap, "%.*s%llu]", (int)k, kinds[i],
                         (unsigned long long)ino);
        return n > 0 && (size_t)n < cap ? n : (long)len;
    }
    return (long)len;
}

/* An O_TMPFILE file not linked yet reads "DIR/#N (deleted)", N its
 * inode number: the guest's, the one fstat gives it, as for a pipe. */
static long fix_tmpfile_link(const struct proxy_process *p, int host_fd,
                             char *target, size_t len, size_t cap)
{
    size_t suf = sizeof(DELETED_SUFFIX) - 1;
    if (len <= suf || memcmp(target + len - suf, DELETED_SUFFIX, suf) != 0)
        return (long)len;
    size_t digits_end = len - suf, hash = digits_end;
    while (hash > 0 && target[hash - 1] >= '0' && target[hash - 1] <= '9')
        hash--;
    struct stat st;
    if (hash == digits_end || hash < 2 || target[hash - 1] != '#' ||
        target[hash - 2] != '/' || fstat(host_fd, &st) < 0 ||
        strtoull(target + hash, NULL, 10) != (unsigned long long)st.st_ino)
        return (long)len; /* a file itself named "#N" */
    char tail[32];
    int n = snprintf(tail, sizeof(tail), "%llu" DELETED_SUFFIX,
                     (unsigned long long)guest_ino_of_host_fd(p, host_fd));
    if (n <= 0 || hash + (size_t)n > cap)
        return (long)len;
    memcpy(target + hash, tail, (size_t)n);
    return (long)(hash + (size_t)n);
}

/* One of the files hvrun made the run's stdio (config.h capture_files):
 * the same name in every run and every replay. */
static long fix_capture_link(const struct proxy_process *p, char *target,
                             size_t len, size_t cap)
{
    static const char *const names[3] = {"stdin", "stdout", "stderr"};
    for (int i = 0; i < 3; i++) {
        const char *f = p->cfg ? p->cfg->capture_files[i] : NULL;
        if (!f || strlen(f) != len || memcmp(f, target, len) != 0)
            continue;
        int n = snprintf(target, cap, "%s/%s", PROXY_CAPTURE_LINK_DIR,
                         names[i]);
        return n > 0 && (size_t)n < cap ? n : (long)len;
    }
    return (long)len;
}

long proxy_vfs_link_fixup(const struct proxy_process *p, const char *host_link,
                          char *target, long n, size_t cap)
{
    if (strncmp(host_link, "/proc/self/fd/", 14) != 0 || n <= 0)
        return n;
    size_t len = (size_t)fix_capture_link(p, target, (size_t)n, cap);
    char *end;
    long host_fd = strtol(host_link + 14, &end, 10);
    if (end != host_link + 14 && *end == '\0' && p->det) {
        len = (size_t)fix_anon_link(p, (int)host_fd, target, len, cap);
        len = (size_t)fix_tmpfile_link(p, (int)host_fd, target, len, cap);
    }
    if (end != host_link + 14 && *end == '\0' &&
        proxy_secretmem_host_fd(p, (int)host_fd) &&
        cap > sizeof(PROXY_SECRETMEM_NAME) - 1) {
        memcpy(target, PROXY_SECRETMEM_NAME, sizeof(PROXY_SECRETMEM_NAME) - 1);
        return (long)sizeof(PROXY_SECRETMEM_NAME) - 1;
    }
    size_t pre = sizeof(MEMFD_LINK_PREFIX) - 1;
    size_t suf = sizeof(DELETED_SUFFIX) - 1;
    if (len > pre + suf && memcmp(target, MEMFD_LINK_PREFIX, pre) == 0 &&
        memcmp(target + len - suf, DELETED_SUFFIX, suf) == 0) {
        len -= pre + suf;
        memmove(target, target + pre, len);
        return (long)len;
    }
    len = unmap_own_proc(p, target, len, cap);
    return (long)proxy_tmp_unmap(p, target, len, cap);
}
