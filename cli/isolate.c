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
 * The namespace is a mount namespace, so this needs root (before hvrun
 * drops its capabilities); an unprivileged user namespace cannot do it
 * (overlayfs refuses "/" as a lower there: the mounts on it are locked).
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "det.h"

/* The overlays made, for detcore to see their files as the host's. */
struct layers {
    struct det_layered_dev *dev;
    int n, max;
};

struct mount_point {
    char *path;
    char fstype[32];
    bool read_only;
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

/* A mount namespace of our own, its mounts not shared with the host's.
 * Root only: an unprivileged user namespace cannot overlay "/" (its
 * mounts on it are locked, and overlayfs will not take such a lower). */
static int own_namespace(char *why, size_t len)
{
    if (geteuid() != 0) {
        snprintf(why, len, "not root: a private tree of overlays needs "
                           "CAP_SYS_ADMIN");
        return -EPERM;
    }
    if (unshare(CLONE_NEWNS) < 0) {
        snprintf(why, len, "unshare: %s", strerror(errno));
        return -errno;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        snprintf(why, len, "making the mounts private: %s", strerror(errno));
        return -errno;
    }
    return 0;
}

/* An overlay of lower (the host's) at target, its upper layer upper.N
 * and work.N in the tmpfs at base. */
static int overlay(const char *base, int n, const char *lower,
                   const char *target, struct layers *ly)
{
    struct stat under, over;
    if (stat(lower, &under) < 0)
        return -errno;
    char upper[4200], work[4200], opts[9000];
    snprintf(upper, sizeof(upper), "%s/upper.%d", base, n);
    snprintf(work, sizeof(work), "%s/work.%d", base, n);
    if (mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0)
        return -errno;
    /* Without redirect_dir a rename of a lower directory fails EXDEV
     * where it worked when recorded; xino: one st_dev for the overlay and
     * the host's inode numbers (det_layered_dev). */
    snprintf(opts, sizeof(opts),
             "lowerdir=%s,upperdir=%s,workdir=%s,xino=on,redirect_dir=on",
             lower, upper, work);
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

static bool plain_name(const char *p)
{
    return !strpbrk(p, ",:\\");
}

/* One host mount into the new tree at root. */
static int place(const char *base, int n, const struct mount_point *m,
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
        rc = mount(m->path, target, NULL, MS_BIND | MS_REC, NULL) < 0 ? -errno
                                                                    : 0;
        if (rc == 0 && !pseudo_fs(m->fstype) && !m->read_only &&
            mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
                  NULL) < 0)
            rc = -errno;
    } else {
        rc = overlay(base, n, m->path, target, ly);
    }
    if (rc < 0)
        snprintf(why, len, "%s (%s): %s", m->path, m->fstype, strerror(-rc));
    return rc;
}

int cli_isolate_writes(const char *keep, struct det_layered_dev *layered,
                       int max_layered, int *nr_layered, char *why,
                       size_t len)
{
    struct layers ly = {.dev = layered, .max = max_layered};
    int rc = own_namespace(why, len);
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
    struct mount_point *m = NULL;
    size_t n = 0;
    if ((rc = read_mounts(&m, &n)) < 0) {
        snprintf(why, len, "/proc/self/mountinfo: %s", strerror(-rc));
        free_mounts(m, n);
        return rc;
    }
    size_t base_len = strlen(base);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!strncmp(m[i].path, base, base_len) &&
            (!m[i].path[base_len] || m[i].path[base_len] == '/'))
            continue; /* ours */
        if (!strcmp(m[i].path, "/")) {
            rc = overlay(base, (int)i, "/", root, &ly);
            if (rc < 0)
                snprintf(why, len, "/ (%s): %s", m[i].fstype, strerror(-rc));
        } else {
            rc = place(base, (int)i, &m[i], root, &ly, why, len);
        }
    }
    free_mounts(m, n);
    if (rc < 0)
        return rc;
    char target[8400];
    snprintf(target, sizeof(target), "%s%s", root, keep);
    if (mount(keep, target, NULL, MS_BIND, NULL) < 0 || chdir(root) < 0 ||
        syscall(SYS_pivot_root, ".", ".") < 0 ||
        umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) {
        snprintf(why, len, "entering the overlaid tree: %s", strerror(errno));
        return -errno;
    }
    *nr_layered = ly.n;
    return 0;
}

int cli_isolate_probe(const char *keep, char *why, size_t len)
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
        static struct det_layered_dev l[64];
        char w[512] = "";
        int n;
        close(fds[0]);
        char probe_dir[4200];
        snprintf(probe_dir, sizeof(probe_dir), "%s/probe", keep);
        int rc = mkdir(probe_dir, 0700) < 0
                     ? -errno
                     : cli_isolate_writes(probe_dir, l, 64, &n, w, sizeof(w));
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
