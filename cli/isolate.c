/*
 * isolate.c - a replay's writes kept off the host's files.
 *
 * `hvrun replay` runs the program in a private mount namespace whose
 * tree is the host's seen through overlays: every filesystem that holds
 * files (the root, tmpfs, ext4, ...) is the lower layer of an overlay
 * whose upper layer is a tmpfs private to the replay, so what the program
 * writes, creates, renames or removes lands there and is gone when the
 * replay ends. Pseudo filesystems (/proc, /sys, /dev and the like),
 * read-only mounts and mounts of a single file are bound in as they are
 * (a file mount read-only: a write to it fails rather than reach the
 * host). The replay's scratch directory (where hvrun writes the captured
 * stdout, stderr and detlog for the comparison) is bound in from the
 * host at its own path.
 *
 * As root the namespace is a mount namespace (made before hvrun drops its
 * capabilities). Not root, it is a user namespace mapping the caller's
 * uid and gid to themselves (no privilege gained: the capabilities the
 * new namespace gives are all dropped once the tree is entered) and a
 * mount namespace in it. There overlayfs will not take "/" as a lower
 * (the mounts on it are locked) and has no trusted.* xattrs, so the tree
 * is made per directory (cover below): a directory with no mount under it
 * is one overlay (userxattr); one with mounts under it is a tmpfs whose
 * entries are made the same way, its symlinks copied, its other files
 * bound in read-only. An overlay in a user namespace refuses to copy up
 * a file whose owner is not mapped (EOVERFLOW), so the directories above
 * the paths the replay is to write (the recorded working directory and
 * what the recorded run changed) are made in the upper layer first, each
 * with the access the caller has to the host's directory.
 * Nothing outside the process changes, and a failure half-way leaves the
 * host's tree in effect (the caller then falls back to undoing the
 * writes); cli_isolate_probe tries it in a child first.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <linux/capability.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "det.h"
#include "kernel.h"

struct mount_point {
    char *path;
    char fstype[32];
    bool read_only;
};

/* The overlays made, for detcore to see their files as the host's. */
struct layers {
    struct det_layered_dev *dev;
    int n, max;
    int made;          /* upper.N / work.N names used */
    bool user_ns;      /* not root: the tree of per-directory overlays */
    char **writable;   /* paths the replay is to write (user_ns) */
    size_t nr_writable;
    const struct mount_point *mounts; /* the host's, for cover */
    size_t nr_mounts;
    const char *ours;  /* the tmpfs of the tree, at its host path */
};

/* Filesystems that hold no files of the host's to protect, or that an
 * overlay cannot stack on: bound in as they are. */
static bool pseudo_fs(const char *t)
{
    static const char *const names[] = {
        "proc",      "sysfs",    "devtmpfs",  "devpts",   "cgroup",
        "cgroup2",   "mqueue",   "debugfs",   "tracefs",  "securityfs",
        "pstore",    "bpf",      "fusectl",   "configfs", "hugetlbfs",
        "binfmt_misc", "autofs", "efivarfs",  "nsfs",     "rpc_pipefs",
        "selinuxfs", "ramfs",    NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(t, names[i]))
            return true;
    return !strncmp(t, "fuse", 4);
}

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

static int by_length(const void *a, const void *b)
{
    size_t la = strlen(((const struct mount_point *)a)->path);
    size_t lb = strlen(((const struct mount_point *)b)->path);
    return la < lb ? -1 : la > lb;
}

/* The visible mounts (the last one mounted at each path), parents first. */
static int read_mounts(struct mount_point **out, size_t *n)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -errno;
    struct mount_point *m = NULL;
    size_t count = 0, cap = 0;
    char *line = NULL;
    size_t line_cap = 0;
    int rc = 0;
    while (getline(&line, &line_cap, f) > 0) {
        char point[4096], opts[512], type[32];
        char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s %511s", point,
                            opts) != 2 ||
            sscanf(dash + 3, "%31s", type) != 1)
            continue;
        unescape(point);
        size_t i = 0;
        while (i < count && strcmp(m[i].path, point))
            i++;
        if (i == count) {
            if (count == cap) {
                cap = cap ? cap * 2 : 32;
                struct mount_point *g = realloc(m, cap * sizeof(*m));
                if (!g) {
                    rc = -ENOMEM;
                    break;
                }
                m = g;
            }
            if (!(m[count].path = strdup(point))) {
                rc = -ENOMEM;
                break;
            }
            count++;
        }
        snprintf(m[i].fstype, sizeof(m[i].fstype), "%s", type);
        m[i].read_only =
            !strncmp(opts, "ro", 2) && (!opts[2] || opts[2] == ',');
    }
    free(line);
    fclose(f);
    if (rc == 0)
        qsort(m, count, sizeof(*m), by_length);
    *out = m;
    *n = count;
    return rc;
}

static void free_mounts(struct mount_point *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(m[i].path);
    free(m);
}

/* Writes s to the file at path (a /proc/self map). */
static int write_proc(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, s, strlen(s));
    int rc = n == (ssize_t)strlen(s) ? 0 : n < 0 ? -errno : -EIO;
    close(fd);
    return rc;
}

/* Not root: a user namespace in which the caller's uid and gid are
 * themselves (not root: the replay gains nothing), and a mount namespace
 * owned by it. */
static int own_user_namespace(char *why, size_t len)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    proxy_keep_host_groups(); /* unmapped there: the overflow gid */
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
        int e = errno;
        snprintf(why, len, "not root, and a user namespace: %s",
                 strerror(e));
        return -e;
    }
    char map[64];
    int rc = write_proc("/proc/self/setgroups", "deny");
    if (rc == 0) {
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        rc = write_proc("/proc/self/uid_map", map);
    }
    if (rc == 0) {
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        rc = write_proc("/proc/self/gid_map", map);
    }
    if (rc < 0)
        snprintf(why, len, "mapping the ids in a user namespace: %s",
                 strerror(-rc));
    return rc;
}

/* A mount namespace of our own, its mounts not shared with the host's
 * (as root; else in a user namespace of our own). */
static int own_namespace(bool *user_ns, char *why, size_t len)
{
    *user_ns = geteuid() != 0;
    if (*user_ns) {
        int rc = own_user_namespace(why, len);
        if (rc < 0)
            return rc;
    } else if (unshare(CLONE_NEWNS) < 0) {
        snprintf(why, len, "unshare: %s", strerror(errno));
        return -errno;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        snprintf(why, len, "making the mounts private: %s", strerror(errno));
        return -errno;
    }
    return 0;
}

/* The flags a remount must keep: in a user namespace those of a mount
 * made in a more privileged one are locked (EPERM if dropped). */
static unsigned long kept_flags(const char *target)
{
    struct statvfs sv;
    if (statvfs(target, &sv) < 0)
        return 0;
    unsigned long f = 0;
    if (sv.f_flag & ST_NOSUID)
        f |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV)
        f |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC)
        f |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME)
        f |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME)
        f |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME)
        f |= MS_RELATIME;
    return f;
}

/* source bound at target (with what is mounted under it when rec), made
 * read-only unless it is a pseudo filesystem's. */
static int bind_in(const char *source, const char *target, bool rec,
                   bool read_only)
{
    if (mount(source, target, NULL, MS_BIND | (rec ? MS_REC : 0), NULL) < 0)
        return -errno;
    if (read_only && mount(NULL, target, NULL,
                           MS_REMOUNT | MS_BIND | MS_RDONLY |
                               kept_flags(target),
                           NULL) < 0)
        return -errno;
    return 0;
}

/* st_mode as the caller may use it when it owns the copy: the owner's
 * bits are those the caller has to the host's (its own, its group's or
 * everyone's), so a directory it could not write stays so. */
static mode_t access_mode(const struct stat *st)
{
    unsigned bits = st->st_mode & 7;
    if (st->st_uid == geteuid()) {
        bits = (st->st_mode >> 6) & 7;
    } else {
        gid_t groups[256];
        int n = getgroups(256, groups);
        bool in = st->st_gid == getegid();
        for (int i = 0; !in && i < n; i++)
            in = groups[i] == st->st_gid;
        if (in)
            bits = (st->st_mode >> 3) & 7;
    }
    return (st->st_mode & 07077) | (mode_t)(bits << 6);
}

/* The upper layer's copy of a host directory, with its mode (and owner,
 * as root; else the caller's access to it: access_mode). */
static int upper_dir(const char *path, const struct stat *host, bool user_ns)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return -errno;
    if (!user_ns && chown(path, host->st_uid, host->st_gid) < 0)
        return -errno;
    return chmod(path, user_ns ? access_mode(host) : host->st_mode & 07777) < 0
               ? -errno
               : 0;
}

/* In a user namespace: the directories of lower on the way to each path
 * the replay is to write made in upper (copying them up would be
 * EOVERFLOW where their owner is not mapped). */
static void upper_ancestors(const char *lower, const char *upper,
                            const struct layers *ly)
{
    size_t ll = strcmp(lower, "/") ? strlen(lower) : 0;
    for (size_t i = 0; i < ly->nr_writable; i++) {
        const char *p = ly->writable[i];
        if (strncmp(p, lower, ll) || p[ll] != '/')
            continue;
        char host[4096], made[8400];
        snprintf(host, sizeof(host), "%s", p);
        size_t pl = strlen(host);
        for (size_t at = ll + 1; at <= pl; at++) {
            if (host[at] != '/' && host[at])
                continue;
            char was = host[at];
            host[at] = 0;
            struct stat st;
            snprintf(made, sizeof(made), "%s%s", upper, host + ll);
            if (lstat(host, &st) < 0 || !S_ISDIR(st.st_mode) ||
                upper_dir(made, &st, true) < 0)
                break;
            host[at] = was;
        }
    }
}

/* An overlay of lower (the host's) at target, its upper layer upper.N
 * and work.N in the tmpfs at base. */
static int overlay(const char *base, const char *lower, const char *target,
                   struct layers *ly)
{
    struct stat under, over;
    if (stat(lower, &under) < 0)
        return -errno;
    char upper[4200], work[4200], opts[9000];
    int n = ly->made++;
    snprintf(upper, sizeof(upper), "%s/upper.%d", base, n);
    snprintf(work, sizeof(work), "%s/work.%d", base, n);
    int rc;
    if ((rc = upper_dir(upper, &under, ly->user_ns)) < 0)
        return rc;
    if (mkdir(work, 0700) < 0)
        return -errno;
    if (ly->user_ns)
        upper_ancestors(lower, upper, ly);
    /* Without redirect_dir a rename of a lower directory fails EXDEV
     * where it worked when recorded; xino: one st_dev for the overlay and
     * the host's inode numbers (det_layered_dev). In a user namespace
     * overlayfs keeps its xattrs in user.overlay.* (userxattr), which
     * rules redirect_dir out: there that rename is EXDEV. */
    snprintf(opts, sizeof(opts),
             "lowerdir=%s,upperdir=%s,workdir=%s,xino=on,%s", lower, upper,
             work, ly->user_ns ? "userxattr" : "redirect_dir=on");
    if (mount("overlay", target, "overlay", 0, opts) < 0 ||
        stat(target, &over) < 0)
        return -errno;
    if (ly->n == ly->max)
        return -ENOSPC;
    ly->dev[ly->n++] = (struct det_layered_dev){
        .dev = over.st_dev, .lower_dev = under.st_dev,
        .root_ino = over.st_ino, .lower_root_ino = under.st_ino};
    return 0;
}

/* Whether path is at (or, strictly, under) one of the host's mounts other
 * than the tree's own. */
static bool mount_at(const struct layers *ly, const char *path, bool under)
{
    size_t pl = strcmp(path, "/") ? strlen(path) : 0;
    size_t ol = strlen(ly->ours);
    for (size_t i = 0; i < ly->nr_mounts; i++) {
        const char *m = ly->mounts[i].path;
        if (!strncmp(m, ly->ours, ol) && (!m[ol] || m[ol] == '/'))
            continue;
        if (under ? !strncmp(m, path, pl) && m[pl] == '/'
                  : !strcmp(m, path))
            return true;
    }
    return false;
}

static int cover(const char *base, const char *host, const char *target,
                 bool mount_root, struct layers *ly, int depth);

/* One entry of a directory with mounts under it (cover). */
static int cover_entry(const char *base, const char *host,
                       const char *target, struct layers *ly, int depth)
{
    struct stat st;
    if (lstat(host, &st) < 0)
        return 0; /* gone meanwhile */
    if (S_ISLNK(st.st_mode)) {
        char to[4097];
        ssize_t n = readlink(host, to, sizeof(to) - 1);
        if (n < 0)
            return -errno;
        to[n] = 0;
        return symlink(to, target) < 0 ? -errno : 0;
    }
    if (S_ISDIR(st.st_mode)) {
        if (mkdir(target, 0700) < 0 && errno != EEXIST)
            return -errno;
        int rc = mount_at(ly, host, false)
                     ? 0 /* placed with the mounts */
                     : cover(base, host, target, false, ly, depth + 1);
        if (rc == 0 && chmod(target, access_mode(&st)) < 0)
            rc = -errno;
        return rc;
    }
    /* A file (or fifo, socket, device node) beside mounts: the host's,
     * read-only (a write fails EROFS: it would have reached the host). */
    int fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    return bind_in(host, target, false, true);
}

/*
 * In a user namespace, host (a directory holding files) at target: an
 * overlay where nothing is mounted under it; else a tmpfs (at target if
 * host is a mount's root) whose entries are made the same way.
 */
static int cover(const char *base, const char *host, const char *target,
                 bool mount_root, struct layers *ly, int depth)
{
    if (!mount_at(ly, host, true))
        return overlay(base, host, target, ly);
    if (depth > 64)
        return -ELOOP;
    struct stat st;
    if (stat(host, &st) < 0)
        return -errno;
    if (mount_root &&
        (mount("hvrun-replay", target, "tmpfs", MS_NOSUID, "mode=0700") < 0 ||
         chmod(target, access_mode(&st)) < 0))
        return -errno;
    DIR *d = opendir(host);
    if (!d)
        return -errno;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char h[4096], t[8400];
        snprintf(h, sizeof(h), "%s/%s", strcmp(host, "/") ? host : "",
                 e->d_name);
        snprintf(t, sizeof(t), "%s/%s", target, e->d_name);
        rc = cover_entry(base, h, t, ly, depth);
    }
    closedir(d);
    return rc;
}

static bool plain_name(const char *p)
{
    return !strpbrk(p, ",:\\");
}

/* One host mount into the new tree at root. */
static int place(const char *base, const struct mount_point *m,
                 const char *root, struct layers *ly, char *why, size_t len)
{
    char target[8192];
    snprintf(target, sizeof(target), "%s%s", root, m->path);
    struct stat st;
    if (lstat(target, &st) < 0 || lstat(m->path, &st) < 0)
        return 0; /* under a mount placed read-only, or gone: not there */
    int rc;
    if (!S_ISDIR(st.st_mode) || pseudo_fs(m->fstype) || m->read_only ||
        !plain_name(m->path)) {
        /* Recursively: the mounts on it that hold files are overlaid
         * after, over these. */
        rc = bind_in(m->path, target, true,
                     !pseudo_fs(m->fstype) && !m->read_only);
    } else if (ly->user_ns) {
        rc = cover(base, m->path, target, true, ly, 0);
    } else {
        rc = overlay(base, m->path, target, ly);
    }
    if (rc < 0)
        snprintf(why, len, "%s (%s): %s", m->path, m->fstype, strerror(-rc));
    return rc;
}

/* The paths a replay is to write: cwd and each the recorded run changed. */
static void note_writable(void *ctx, const char *path)
{
    struct layers *ly = ctx;
    char **g = realloc(ly->writable, (ly->nr_writable + 1) * sizeof(*g));
    if (!g || !(g[ly->nr_writable] = strdup(path))) {
        if (g)
            ly->writable = g;
        return;
    }
    ly->writable = g;
    ly->nr_writable++;
}

static void free_writable(struct layers *ly)
{
    for (size_t i = 0; i < ly->nr_writable; i++)
        free(ly->writable[i]);
    free(ly->writable);
}

/* Not root, once in the tree: every capability the user namespace gave
 * dropped (the caller had none; NO_NEW_PRIVS follows in confine.c). */
static int drop_namespace_capabilities(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof(d));
    return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static int make_tree(const char *keep, const char *base, const char *root,
                     struct layers *ly, char *why, size_t len)
{
    struct mount_point *m = NULL;
    size_t n = 0;
    int rc;
    if ((rc = read_mounts(&m, &n)) < 0) {
        snprintf(why, len, "/proc/self/mountinfo: %s", strerror(-rc));
        free_mounts(m, n);
        return rc;
    }
    ly->mounts = m;
    ly->nr_mounts = n;
    ly->ours = base;
    size_t base_len = strlen(base);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!strncmp(m[i].path, base, base_len) &&
            (!m[i].path[base_len] || m[i].path[base_len] == '/'))
            continue; /* ours */
        if (!strcmp(m[i].path, "/")) {
            rc = ly->user_ns ? cover(base, "/", root, true, ly, 0)
                             : overlay(base, "/", root, ly);
            if (rc < 0)
                snprintf(why, len, "/ (%s): %s", m[i].fstype, strerror(-rc));
        } else {
            rc = place(base, &m[i], root, ly, why, len);
        }
    }
    free_mounts(m, n);
    ly->mounts = NULL;
    if (rc < 0)
        return rc;
    char target[8400];
    snprintf(target, sizeof(target), "%s%s", root, keep);
    if (mount(keep, target, NULL, MS_BIND, NULL) < 0 || chdir(root) < 0 ||
        syscall(SYS_pivot_root, ".", ".") < 0 ||
        umount2(".", MNT_DETACH) < 0 || chdir("/") < 0 ||
        (ly->user_ns && drop_namespace_capabilities() < 0)) {
        snprintf(why, len, "entering the overlaid tree: %s", strerror(errno));
        return -errno;
    }
    return 0;
}

int cli_isolate_writes(const char *keep, const char *prestate,
                       const char *cwd, struct det_layered_dev *layered,
                       int max_layered, int *nr_layered, char *why,
                       size_t len)
{
    struct layers ly = {.dev = layered, .max = max_layered};
    int rc = own_namespace(&ly.user_ns, why, len);
    if (rc < 0)
        return rc;
    char base[4096], root[4200];
    snprintf(base, sizeof(base), "%s/isolated", keep);
    snprintf(root, sizeof(root), "%s/root", base);
    if ((mkdir(base, 0700) < 0 && errno != EEXIST) ||
        mount("hvrun-replay", base, "tmpfs", MS_NOSUID, "mode=0700") < 0 ||
        mkdir(root, 0755) < 0) {
        snprintf(why, len, "a tmpfs at %s: %s", base, strerror(errno));
        return -errno;
    }
    if (cwd && cwd[0] == '/')
        note_writable(&ly, cwd);
    if (prestate)
        cli_prestate_each(prestate, note_writable, &ly);
    rc = make_tree(keep, base, root, &ly, why, len);
    free_writable(&ly);
    if (rc == 0)
        *nr_layered = ly.n;
    return rc;
}

int cli_isolate_probe(const char *keep, const char *prestate,
                      const char *cwd, char *why, size_t len)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        return -errno;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        snprintf(why, len, "fork: %s", strerror(errno));
        return -EAGAIN;
    }
    if (pid == 0) {
        static struct det_layered_dev l[CLI_MAX_LAYERS];
        char w[512] = "";
        int n;
        close(fds[0]);
        char probe_dir[4200];
        snprintf(probe_dir, sizeof(probe_dir), "%s/probe", keep);
        int rc = mkdir(probe_dir, 0700) < 0
                     ? -errno
                     : cli_isolate_writes(probe_dir, prestate, cwd, l,
                                          CLI_MAX_LAYERS, &n, w, sizeof(w));
        if (rc < 0 && write(fds[1], w, strlen(w)) < 0)
            rc = -EIO;
        _exit(rc < 0 ? 1 : 0);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], why, len - 1);
    why[got > 0 ? got : 0] = 0;
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    char probe_dir[4200];
    snprintf(probe_dir, sizeof(probe_dir), "%s/probe", keep);
    (void)rmdir(probe_dir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (!why[0])
        snprintf(why, len, "the trial in a child failed");
    return -EPERM;
}
