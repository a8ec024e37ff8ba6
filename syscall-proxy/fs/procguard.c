/*
 * procguard.c - /proc is the guest's, by every route.
 *
 * The rewrite (fs.c) gives literal names their guest meaning: /proc/self,
 * /proc/<guest pid>, /dev/fd/N. But a guest reaches the host's procfs by
 * names the rewrite never sees: a symlink it made (/tmp/l -> /proc/self), a
 * relative name under a /proc directory fd or cwd ("self/mem" after
 * chdir("/proc")), /proc/self/root/proc/..., a symlink to /proc/self/fd/N.
 * On the host each of those means hvrun's own process (its memory, its fds)
 * or another host process. So every rewritten path is resolved once on the
 * host, as an O_PATH open that follows no procfs magic link
 * (RESOLVE_NO_MAGICLINKS), and:
 *  - a path that lands in procfs is named canonically (readlink of the
 *    O_PATH fd): hvrun's /proc/<pid>[/task/<tid>] is the guest's /proc/self,
 *    /proc/<n> is the guest's pid n. When that name is not what the rewrite
 *    saw, the caller rewrites it again from that name, so the /proc rules
 *    (virtual files, mem, fds in guest numbers) apply;
 *  - a path that crosses a magic link the rewrite did not make is walked
 *    to the link, which is named the same way, and the rest follows it;
 *  - a host process's entry is ENOENT, as Linux hides a pid; the host's
 *    /proc/1 holds the virtual init's entries (vfs.c), by their names.
 * The rewrite's own /proc/self/fd/<host fd> names are trusted: they come
 * from the guest's fd table.
 *
 * Opens are checked once more on the fd they give (proxy_proc_open_check),
 * whatever route led there: of hvrun's own /proc/<pid> the guest gets only
 * entries that describe the machine or its own fds, never mem, environ,
 * map_files or a file that changes hvrun; and no host procfs or sysfs file
 * is opened for writing (EROFS): the kernel's knobs are the host's.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool on_procfs(int fd)
{
    struct statfs sfs;
    return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

static int host_name_of(int fd, char *out, size_t cap)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, cap - 1);
    if (n <= 0)
        return -ENOENT;
    out[n] = '\0';
    return 0;
}

/* A decimal /proc component at s: its value, or -1; *end follows it. */
static long pid_component(const char *s, const char **end)
{
    if (*s < '1' || *s > '9')
        return -1;
    long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > 0x7fffffffL)
            return -1;
    }
    if (*s != '/' && *s != '\0')
        return -1;
    *end = s;
    return v;
}

/*
 * A host procfs name as the guest means it: hvrun's /proc/<pid> and its
 * threads are /proc/self; /proc/<n> is the guest's n; the rest (/proc,
 * /proc/sys/..., /proc/meminfo) is what it says. -ENOENT for a host pid.
 */
static int guest_name_of(struct proxy_process *p, const char *host,
                         char *out, size_t cap)
{
    const char *rest;
    long pid = strncmp(host, "/proc/", 6) == 0 ? pid_component(host + 6, &rest)
                                               : -1;
    int n;
    if (pid < 0) {
        n = snprintf(out, cap, "%s", host);
    } else if (pid == vmm_host_self_pid()) {
        const char *t = rest;
        if (strncmp(rest, "/task/", 6) == 0 && pid_component(rest + 6, &t) >= 0)
            rest = t;
        n = snprintf(out, cap, "/proc/self%s", rest);
    } else if ((p->world && proxy_world_find(p->world, (int)pid)) ||
               (pid == PROXY_INIT_PID && proxy_vfs_init_host_entry(p, host))) {
        n = snprintf(out, cap, "%s", host);
    } else {
        return -ENOENT;
    }
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* An O_PATH open following no magic link, within scope (openat2's
 * RESOLVE_BENEATH or RESOLVE_IN_ROOT of the guest's call, or 0). */
static int open_path(int dirfd, const char *path, bool follow, uint64_t scope)
{
    struct open_how how = {
        .flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
        .resolve = RESOLVE_NO_MAGICLINKS | scope,
    };
    long fd = proxy_host_openat2(dirfd, path, &how);
    return fd < 0 ? -errno : (int)fd;
}

/* The renamed result: name, then "/" and rest when rest is not empty; a
 * trailing "/" of path kept (it makes the last component followed and a
 * directory: "/proc/self/" is the directory, not the link). */
static int renamed_to(const char *name, const char *rest, const char *path,
                      char *out, size_t cap)
{
    size_t len = strlen(path);
    const char *slash = len && path[len - 1] == '/' &&
                                (*rest ? rest[strlen(rest) - 1] != '/'
                                       : strcmp(name, "/") != 0)
                            ? "/"
                            : "";
    int n = *rest ? snprintf(out, cap, "%s/%s%s", name, rest, slash)
                  : snprintf(out, cap, "%s%s", name, slash);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 1;
}

/*
 * (dirfd, path) crosses a magic link: finds the first component that is
 * one, names it for the guest and appends what follows. -ELOOP when none
 * is (a real symlink loop).
 */
static int walk_to_magic_link(struct proxy_process *p, int dirfd,
                              const char *path, uint64_t scope, char *out,
                              size_t cap)
{
    char prefix[PROXY_PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof(prefix))
        return -ENAMETOOLONG;
    for (size_t i = 0; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        if (i == 0 || path[i - 1] == '/')
            continue;
        memcpy(prefix, path, i);
        prefix[i] = '\0';
        int fd = open_path(dirfd, prefix, true, scope);
        if (fd >= 0) {
            close(fd);
            continue;
        }
        if (fd != -ELOOP)
            return 0; /* the lookup fails before any magic link */
        fd = open_path(dirfd, prefix, false, scope);
        if (fd < 0)
            return fd;
        char host[PROXY_PATH_MAX], guest[PROXY_PATH_MAX];
        int rc = on_procfs(fd) ? host_name_of(fd, host, sizeof(host)) : -ELOOP;
        close(fd);
        if (rc == 0)
            rc = guest_name_of(p, host, guest, sizeof(guest));
        if (rc < 0)
            return rc;
        const char *rest = path + i;
        while (*rest == '/')
            rest++;
        return renamed_to(guest, rest, path, out, cap);
    }
    return -ELOOP;
}

/* "/proc/self/fd/<n>[/rest]" as the rewrite makes it: n, and rest. */
static bool rewritten_fd_entry(const char *path, int *fd, const char **rest)
{
    if (strncmp(path, "/proc/self/fd/", 14) != 0)
        return false;
    long n = pid_component(path + 14, rest);
    if (n < 0 && strncmp(path + 14, "0", 1) == 0 &&
        (path[15] == '/' || path[15] == '\0')) {
        n = 0;
        *rest = path + 15;
    }
    if (n < 0)
        return false;
    *fd = (int)n;
    while (**rest == '/')
        (*rest)++;
    return true;
}

/* a and b name the same, b without a's trailing "/" ("/proc/self/" and
 * the host's name of what it reached, "/proc/self"). */
static bool same_but_trailing_slash(const char *a, const char *b)
{
    size_t n = strlen(a);
    if (n > 1 && a[n - 1] == '/')
        n--;
    return strlen(b) == n && strncmp(a, b, n) == 0;
}

int proxy_proc_confine(struct proxy_process *p, int dirfd, const char *path,
                       bool follow_last, char *out, size_t cap)
{
    return proxy_proc_confine_scoped(p, dirfd, path, follow_last, 0, out, cap);
}

int proxy_proc_confine_scoped(struct proxy_process *p, int dirfd,
                              const char *path, bool follow_last,
                              uint64_t scope, char *out, size_t cap)
{
    int dir = dirfd;
    const char *rel = path;
    int entry_fd;
    const char *rest;
    if (rewritten_fd_entry(path, &entry_fd, &rest)) {
        if (*rest == '\0')
            return 0; /* the guest's own fd, from its table */
        dir = entry_fd;
        rel = rest;
    }
    if (proxy_vfs_is_virtual(p, dir, rel))
        return 0; /* served by hvrun, never looked up on the host */
    int fd = open_path(dir, rel, follow_last, scope);
    if (fd == -ELOOP)
        return walk_to_magic_link(p, dir, rel, scope, out, cap);
    if (fd < 0)
        return 0; /* nothing there: the call fails (or creates) on its own */
    char host[PROXY_PATH_MAX], guest[PROXY_PATH_MAX], literal[PROXY_PATH_MAX];
    int rc = on_procfs(fd) ? host_name_of(fd, host, sizeof(host)) : 1;
    close(fd);
    if (rc != 0)
        return rc > 0 ? 0 : rc;
    if ((rc = guest_name_of(p, host, guest, sizeof(guest))) < 0)
        return rc;
    /* An absolute name the rewrite saw as it is needs nothing more; a
     * relative one under a /proc directory fd or cwd ("exe", "fd/3" under
     * /proc/self) the rewrite never saw: hvrun's own exe and fds. */
    if (rel[0] == '/' &&
        proxy_vfs_canonical_name(p, dir, rel, literal, sizeof(literal)) &&
        same_but_trailing_slash(literal, guest))
        return 0;
    return renamed_to(guest, "", rel, out, cap);
}

/*
 * What the guest may hold of hvrun's own /proc/<pid>: the directory and
 * the listings the proxy translates (fd, fdinfo, task), and entries that
 * describe the machine, not hvrun (mounts, namespaces, the network).
 * Everything else there is hvrun (mem, environ, map_files, comm, ...):
 * the guest's own versions are virtual (vfs.c, procfile.c).
 */
static bool own_entry_allowed(const char *rest, bool o_path)
{
    static const char *const dirs[] = {"/fd", "/fdinfo", "/task", "/ns",
                                       "/net", "/attr"};
    static const char *const files[] = {"/mounts", "/mountinfo",
                                        "/mountstats", "/limits"};
    if (*rest == '\0')
        return true;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        size_t n = strlen(dirs[i]);
        if (strncmp(rest, dirs[i], n) == 0 && rest[n] == '\0')
            return true;
        /* entries under fdinfo, ns, net and attr (the LSM's labels,
         * which the guest's would be: read only, as every host procfs
         * open); fd links only as O_PATH */
        if (strncmp(rest, dirs[i], n) == 0 && rest[n] == '/' &&
            (i == 1 || i == 3 || i == 4 || i == 5 || (i == 0 && o_path)))
            return true;
    }
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        if (strcmp(rest, files[i]) == 0)
            return true;
    }
    return false;
}

static bool opens_for_write(int flags)
{
    return !(flags & O_PATH) &&
           ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC));
}

long proxy_proc_open_check(struct proxy_process *p, int host_fd, int flags)
{
    struct statfs sfs;
    if (fstatfs(host_fd, &sfs) < 0)
        return 0;
    /* /proc/sys, /sys and the rest of the kernel's knobs are the host
     * machine's: a run reads them, never changes them (as a container
     * with read-only /proc/sys and /sys). */
    bool kernel_fs = sfs.f_type == PROC_SUPER_MAGIC ||
                     sfs.f_type == SYSFS_MAGIC;
    if (kernel_fs && opens_for_write(flags))
        return -EROFS;
    if (sfs.f_type != PROC_SUPER_MAGIC)
        return 0;
    char host[PROXY_PATH_MAX];
    if (host_name_of(host_fd, host, sizeof(host)) < 0)
        return -ENOENT;
    const char *rest;
    long pid = strncmp(host, "/proc/", 6) == 0 ? pid_component(host + 6, &rest)
                                               : -1;
    if (pid < 0)
        return 0; /* /proc itself, /proc/sys, machine files */
    if (pid != vmm_host_self_pid() && pid == PROXY_INIT_PID &&
        proxy_vfs_init_host_entry(p, host))
        return 0; /* the virtual init's (vfs.c), opened O_PATH */
    if (pid != vmm_host_self_pid())
        return -ENOENT; /* a host process */
    const char *t = rest;
    if (strncmp(rest, "/task/", 6) == 0 && pid_component(rest + 6, &t) >= 0)
        rest = t;
    if (own_entry_allowed(rest, (flags & O_PATH) != 0))
        return 0;
    proxy_log(p, 2, "refused hvrun's own %s to the guest", host);
    return -EACCES;
}

/*
 * procfs makes a fresh inode for an entry at each lookup it does not keep
 * cached, so the host numbers of /proc entries change within one run. The
 * guest sees a number made from the entry's guest name instead (detcore
 * then numbers those in the order the run meets them): the same entry has
 * the same number in every run. host_fd is an fd on the entry.
 */
/* "/proc/self/fd/<host fd>" (and fdinfo) as the guest numbers the fd, in
 * place: hvrun's host fd numbers differ between runs. */
static void guest_fd_entry(const struct proxy_process *p, char *name,
                           size_t cap)
{
    static const char *const dirs[] = {"/proc/self/fd/", "/proc/self/fdinfo/"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(dirs[i]);
        const char *end;
        long host_fd = strncmp(name, dirs[i], n) == 0
                           ? pid_component(name + n, &end)
                           : -1;
        if (host_fd < 0 && strncmp(name, dirs[i], n) == 0 && name[n] == '0' &&
            (name[n + 1] == '\0' || name[n + 1] == '/')) {
            host_fd = 0;
            end = name + n + 1;
        }
        if (host_fd < 0)
            continue;
        for (int fd = 0; fd < p->fds.cap; fd++) {
            if (p->fds.fds[fd].kind != PROXY_FD_FREE &&
                p->fds.fds[fd].host_fd == host_fd) {
                char fixed[PROXY_PATH_MAX];
                int k = snprintf(fixed, sizeof(fixed), "%s%d", dirs[i], fd);
                if (k > 0 && (size_t)k + strlen(end) < cap &&
                    (size_t)k + strlen(end) < sizeof(fixed)) {
                    memcpy(fixed + k, end, strlen(end) + 1);
                    memcpy(name, fixed, strlen(fixed) + 1);
                }
                return;
            }
        }
    }
}

uint64_t proxy_proc_stable_ino(struct proxy_process *p, int host_fd,
                               uint64_t host_ino)
{
    char host[PROXY_PATH_MAX], guest[PROXY_PATH_MAX];
    if (host_name_of(host_fd, host, sizeof(host)) < 0 ||
        guest_name_of(p, host, guest, sizeof(guest)) < 0)
        return host_ino;
    guest_fd_entry(p, guest, sizeof(guest));
    return proxy_proc_name_ino(guest);
}

uint64_t proxy_proc_name_ino(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
    return 0x10000000ULL + (h & 0x0fffffffULL);
}

/*
 * task_dump_owner (fs/proc/base.c): a guest's /proc/PID entries belong to
 * its effective ids while it is dumpable and to root once it is not (a
 * setuid to another user, an exec of a set-ID file); its /proc/PID and
 * task/TID directories (mode 0555) always to its effective ids. The
 * host's entries (hvrun's own /proc/<pid>, or the host pid standing in
 * for a guest's) are hvrun's. host_fd is the entry, mode its host mode.
 */
void proxy_proc_owner_fix(struct proxy_process *p, int host_fd, uint32_t mode,
                          uint32_t *uid, uint32_t *gid)
{
    char host[PROXY_PATH_MAX], guest[PROXY_PATH_MAX];
    if (host_name_of(host_fd, host, sizeof(host)) < 0 ||
        guest_name_of(p, host, guest, sizeof(guest)) < 0 ||
        strncmp(guest, "/proc/", 6) != 0)
        return;
    const char *rest = guest + 6;
    struct proxy_process *q = NULL;
    if (strncmp(rest, "self", 4) == 0 && (rest[4] == '/' || !rest[4])) {
        q = p;
        rest += 4;
    } else {
        long pid = pid_component(rest, &rest);
        if (pid > 0 && pid != PROXY_INIT_PID && p->world)
            q = proxy_world_find(p->world, (int)pid);
    }
    if (q)
        proxy_proc_owner_as(q, rest, mode, uid, gid);
}

void proxy_proc_owner_as(const struct proxy_process *q, const char *rest,
                         uint32_t mode, uint32_t *uid, uint32_t *gid)
{
    const char *t = rest;
    bool pid_dir = !*rest || !strcmp(rest, "/") ||
                   (strncmp(rest, "/task/", 6) == 0 &&
                    pid_component(rest + 6, &t) >= 0 && (!*t || !strcmp(t, "/")));
    if ((pid_dir && mode == (S_IFDIR | 0555)) || q->prctl.dumpable == 1) {
        *uid = q->cred.euid;
        *gid = q->cred.egid;
    } else {
        *uid = *gid = 0; /* root's (the kernel's root id) */
    }
}
