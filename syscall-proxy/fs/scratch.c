/*
 * scratch.c - hvrun's own directories in the host's /tmp (the private
 * /tmp of a run, hermetic.c; --verify's outputs and journals, cli/verify.c)
 * and the cleaning of those a killed hvrun left behind.
 *
 * Each is made by mkdtemp (mode 0700, checked to be ours) under a fixed
 * name pattern and holds a file "lock" that the run keeps flock'ed for as
 * long as it lives: the kernel drops the lock when the run dies, SIGKILL
 * included, so a lock that can be taken means nobody uses the directory.
 * The lock is taken before it gets its name ("lock.new" renamed to
 * "lock"), so a directory never shows a free lock while its run starts.
 * At start every `hvrun run` removes the directories of the pattern that
 * are ours, 0700, and whose lock it can take; one without a lock (a run
 * killed between mkdtemp and the rename, or an older hvrun's) only when
 * nothing changed in it for SCRATCH_LOCKLESS_AGE seconds.
 *
 * Removal never follows a symlink: everything is removed relative to an
 * fd of its directory, opened O_NOFOLLOW.
 */
#include "fs.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCRATCH_PARENT "/tmp"
#define SCRATCH_LOCK "lock"
#define SCRATCH_LOCKLESS_AGE (24 * 3600)
/* Removal holds one fd per directory level; deeper subtrees are moved up
 * to the top directory and removed on a later pass. */
#define RM_MAX_DEPTH 64
#define RM_MAX_PASSES 100000

static const char *const scratch_prefixes[] = {"hvrun-tmp.", "hvrun-verify."};

/* ---- removing a tree --------------------------------------------------------- */

static bool is_dot_name(const char *n)
{
    return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/*
 * Removes what is inside dirfd. The guest may have left directories
 * without search or write permission, so each is made 0700 before it is
 * entered. At RM_MAX_DEPTH a subdirectory is renamed into top_fd instead
 * and *again is set: the caller repeats until nothing moves.
 */
static void rm_contents(int dirfd, int top_fd, int depth, bool *again)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d); /* the dup shares dirfd's offset, left at the end by an
                     earlier pass */
    static unsigned long moved_seq;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (is_dot_name(e->d_name))
            continue;
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) {
            unlinkat(dirfd, e->d_name, 0);
            continue;
        }
        if (unlinkat(dirfd, e->d_name, 0) == 0)
            continue; /* DT_UNKNOWN that was not a directory */
        if (depth >= RM_MAX_DEPTH) {
            char name[64];
            snprintf(name, sizeof(name), ".hvrun-rm.%lu", ++moved_seq);
            if (renameat(dirfd, e->d_name, top_fd, name) == 0)
                *again = true;
            continue;
        }
        /* A failure shows as the openat below failing. */
        (void)!fchmodat(dirfd, e->d_name, 0700, 0);
        int sub = openat(dirfd, e->d_name,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            continue;
        rm_contents(sub, top_fd, depth + 1, again);
        close(sub);
        unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

void proxy_remove_contents(int dirfd)
{
    bool again = true;
    for (int pass = 0; again && pass < RM_MAX_PASSES; pass++) {
        again = false;
        rm_contents(dirfd, dirfd, 0, &again);
    }
}

/* ---- making one ---------------------------------------------------------------- */

/* Ours and private: a directory, our uid, mode 0700 (or 0711: the
 * private /tmp's, searchable by a guest that dropped root). */
static bool ours(const struct stat *st)
{
    return S_ISDIR(st->st_mode) && st->st_uid == geteuid() &&
           ((st->st_mode & 07777) == 0700 || (st->st_mode & 07777) == 0711);
}

/* The directory at path was just made (0700): checked to be ours, its
 * lock taken and named. 0, or -errno with the directory removed. */
static int scratch_finish(const char *template_path, int *lock_fd)
{
    int dir = open(template_path,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    int rc = 0;
    if (dir < 0 || fstat(dir, &st) < 0)
        rc = -errno;
    else if (!ours(&st))
        rc = -EPERM;
    int lock = rc < 0 ? -1
                      : openat(dir, SCRATCH_LOCK ".new",
                               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
                                   O_CLOEXEC,
                               0600);
    if (rc == 0 && lock < 0)
        rc = -errno;
    if (rc == 0 && flock(lock, LOCK_EX | LOCK_NB) < 0)
        rc = -errno;
    if (rc == 0) {
        char pid[32];
        int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
        if (write(lock, pid, (size_t)n) != n ||
            renameat(dir, SCRATCH_LOCK ".new", dir, SCRATCH_LOCK) < 0)
            rc = -EIO;
    }
    if (rc < 0) {
        if (lock >= 0)
            close(lock);
        if (dir >= 0) {
            proxy_remove_contents(dir);
            close(dir);
        }
        rmdir(template_path);
        return rc;
    }
    close(dir);
    *lock_fd = lock;
    return 0;
}

int proxy_scratch_make(char *template_path, int *lock_fd)
{
    *lock_fd = -1;
    if (!mkdtemp(template_path))
        return -errno;
    return scratch_finish(template_path, lock_fd);
}

/* mkdirat: the call hvrun's seccomp filter allows (cli/confine.c), for a
 * private /tmp made once the run is confined (hermetic.c). */
int proxy_scratch_make_named(const char *path, int *lock_fd)
{
    *lock_fd = -1;
    if (mkdirat(AT_FDCWD, path, 0700) < 0)
        return -errno;
    return scratch_finish(path, lock_fd);
}

int proxy_scratch_name(char *template_path)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t len = strlen(template_path);
    unsigned char r[6];
    if (len < 6 || strcmp(template_path + len - 6, "XXXXXX") != 0)
        return -EINVAL;
    if (getentropy(r, sizeof(r)) < 0)
        return -errno;
    for (size_t i = 0; i < 6; i++)
        template_path[len - 6 + i] = chars[r[i] % (sizeof(chars) - 1)];
    return 0;
}

void proxy_scratch_remove(const char *path, int lock_fd)
{
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir >= 0) {
        proxy_remove_contents(dir);
        close(dir);
    }
    rmdir(path);
    if (lock_fd >= 0)
        close(lock_fd);
}

/* ---- cleaning what killed runs left ------------------------------------------- */

static bool scratch_name(const char *name)
{
    for (size_t i = 0; i < sizeof(scratch_prefixes) / sizeof(*scratch_prefixes);
         i++) {
        size_t n = strlen(scratch_prefixes[i]);
        if (strncmp(name, scratch_prefixes[i], n) == 0 &&
            strlen(name + n) == 6 && !strchr(name + n, '/'))
            return true;
    }
    return false;
}

/* No run holds dir (an fd of it): its lock can be taken, or it has none
 * and has not changed for a long time. */
static bool abandoned(int dir, const struct stat *st)
{
    int lock = openat(dir, SCRATCH_LOCK, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (lock < 0)
        return errno == ENOENT &&
               time(NULL) - st->st_ctime > SCRATCH_LOCKLESS_AGE;
    struct stat lst;
    bool free_lock = fstat(lock, &lst) == 0 && S_ISREG(lst.st_mode) &&
                     flock(lock, LOCK_EX | LOCK_NB) == 0;
    close(lock); /* the lock (if taken) goes: the directory goes next */
    return free_lock;
}

int proxy_scratch_sweep(void)
{
    int parent = open(SCRATCH_PARENT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = parent < 0 ? NULL : fdopendir(dup(parent));
    int removed = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        struct stat st, fst;
        if (!scratch_name(e->d_name) ||
            fstatat(parent, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !ours(&st))
            continue;
        int dir = openat(parent, e->d_name,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0)
            continue;
        if (fstat(dir, &fst) == 0 && fst.st_dev == st.st_dev &&
            fst.st_ino == st.st_ino && abandoned(dir, &fst)) {
            proxy_remove_contents(dir);
            if (unlinkat(parent, e->d_name, AT_REMOVEDIR) == 0)
                removed++;
        }
        close(dir);
    }
    if (d)
        closedir(d);
    if (parent >= 0)
        close(parent);
    return removed;
}
