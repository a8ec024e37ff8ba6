/*
 * vfs.h - what the guest sees of the machine through files: synthesised
 * /proc and /sys files (vfs.c), deterministic /dev/urandom reads (vfs.c),
 * and the hermetic environment: a private /tmp per run and name-service
 * lookups confined to /etc files (hermetic.c).
 *
 * Virtual files are made when the guest opens them: the content is written
 * into a host memfd, which is reopened read-only and installed as an
 * ordinary host fd, so read, lseek, pread, mmap and fstat need nothing
 * special. Each machine file is virtual only while its detcore source is
 * (virtualize_host for the machine, virtualize_random for uuid/boot_id,
 * virtualize_time for uptime); otherwise the host's file is opened as
 * before. /proc/self/{stat,status,maps,cmdline,environ} are always
 * virtual: the host's would describe hvrun, not the guest.
 */
#ifndef PROXY_VFS_H
#define PROXY_VFS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "proxy.h"
#include "det.h"


/*
 * The open hook. host_path is the guest path after proxy_path_rewrite
 * (so /proc/<guest pid>/x and /proc/thread-self/x arrive as /proc/self/x),
 * relative to host_dirfd when it is relative. When it names a virtual file,
 * returns true and sets *result to the new guest fd (installed with the
 * guest's O_CLOEXEC) or -errno: a virtual file opened for writing is
 * -EACCES, with O_DIRECTORY -ENOTDIR. Returns false for every other path
 * (the caller opens the host file). O_PATH opens are never virtual.
 */
/* Learns, from fds of hvrun's own, the host mount ids a pidfd's and an
 * anonymous inode's fdinfo show (vfs.c); at start, before the seccomp
 * filter. */
void proxy_vfs_learn_host_mounts(void);

bool proxy_vfs_open(struct proxy_process *p, int host_dirfd,
                    const char *host_path, int flags, long *result);

/* readlink of /proc/PID/ns/NAME of a guest: the length of "type:[inum]"
 * written to out; 0 when (dirfd, path) is no such link, -ENOENT for a
 * pid that is no guest's. */
long proxy_vfs_ns_link(struct proxy_process *p, int host_dirfd,
                       const char *host_path, char *out, size_t cap);

/* A namespace file's identity (stat of /proc/PID/ns/NAME followed, or
 * fstat of its fd): true with the namespace's inode number in *ino (nsfs:
 * device 0:4). */
bool proxy_vfs_ns_inode(struct proxy_process *p, int host_fd, int dirfd,
                        const char *path, int at_flags, uint64_t *ino);

/* True when (dirfd, path), as proxy_vfs_open would see it, is a virtual
 * file: hvrun serves it and never looks it up on the host. */
bool proxy_vfs_is_virtual(struct proxy_process *p, int dirfd, const char *path);
/* A virtual file's guest path (its memfd's name), for a host fd of one;
 * false for any other. */
bool proxy_vfs_virtual_path(int host_fd, char *out, size_t cap);

/* The canonical name proxy_vfs_open matches: absolute, normalised, with
 * /proc/<own pid> and /proc/thread-self as /proc/self. False when it
 * cannot be made (a relative path whose directory has no name). */
bool proxy_vfs_canonical_name(const struct proxy_process *p, int dirfd,
                              const char *path, char *out, size_t cap);

/*
 * Outside --as-init, where pid 1 is the virtual init (proxy_virtual_process)
 * and hvrun is not the host's pid 1, /proc/1 is a directory of a few
 * entries hvrun makes: comm, cmdline, stat, statm, status (a container's init,
 * the same in every run), the links exe (reads and leads to /sbin/init),
 * cwd and root (read and lead to "/"), EACCES read or followed by a
 * caller that may not ptrace root's init, task/ (1, the same
 * entries but task) and fd/ (root's, empty). Everything else there is
 * ENOENT.
 */

/*
 * Every (dirfd, path) the guest names goes through here after
 * proxy_path_rewrite, before any host lookup. Returns
 * PROXY_INIT_ROUTE_NONE when the name is not under the virtual init's
 * /proc/1 (out untouched); PROXY_INIT_ROUTE_HOST with the absolute host
 * name to use as it is in out (the host's /proc/1 entry of the same name,
 * only ever stat'ed or opened O_PATH by the host call: proxy_vfs_open
 * serves the rest); PROXY_INIT_ROUTE_AGAIN with a guest path in out, to
 * be rewritten again (a cwd or root link followed); or -errno: ENOENT,
 * EACCES (a link followed by a caller that may not ptrace init; fd's
 * entries for a non-root caller), ENOTDIR,
 * ENAMETOOLONG.
 */
enum { PROXY_INIT_ROUTE_NONE, PROXY_INIT_ROUTE_HOST, PROXY_INIT_ROUTE_AGAIN };
int proxy_vfs_init_route(struct proxy_process *p, int dirfd, const char *path,
                         bool follow_last, char *out, size_t cap);

/* readlink of (dirfd, path), a link of the virtual init (the empty path:
 * dirfd is an O_PATH fd of one): the length of its target written to out
 * (truncated to cap, no NUL), -EACCES to a caller that may not ptrace
 * init; 0 for any other. */
long proxy_vfs_init_link(struct proxy_process *p, int dirfd, const char *path,
                         char *out, size_t cap);

/* stat of the virtual init's entries: the host's /proc/1 ones but for
 * their owner (kernel uid and gid 0) and task's link count (one thread).
 * True when host_fd is such an entry (an fd on it). */
bool proxy_vfs_init_stat_fix(const struct proxy_process *p, int host_fd,
                             uint64_t *nlink, uint32_t *uid, uint32_t *gid);

/* Whether host_name (a host procfs name, /proc/1/...) is an entry of the
 * virtual init p may reach: procguard lets the guest hold it. */
bool proxy_vfs_init_host_entry(const struct proxy_process *p,
                               const char *host_name);

/*
 * Where a rewritten (dirfd, path) really leads on the host (see
 * procguard.c). Returns 0 when it may be used as it is; 1 when it reaches
 * procfs by a route the rewrite did not see: out then holds the guest name
 * of what it reached, to be rewritten again; -ENOENT for a host process's
 * /proc entry, -ELOOP, -ENAMETOOLONG.
 */
int proxy_proc_confine(struct proxy_process *p, int dirfd, const char *path,
                       bool follow_last, char *out, size_t cap);

/* The same for openat2's scoped walks: the host walk is made with scope
 * (RESOLVE_BENEATH or RESOLVE_IN_ROOT), as the guest's call makes it. */
int proxy_proc_confine_scoped(struct proxy_process *p, int dirfd,
                              const char *path, bool follow_last,
                              uint64_t scope, char *out, size_t cap);

/* After a host open: 0 when host_fd may go to the guest; -EACCES for an
 * entry of hvrun's own /proc/<pid> that is hvrun (mem, environ, ...),
 * -ENOENT for a host process's. The caller closes host_fd on error. */
long proxy_proc_open_check(struct proxy_process *p, int host_fd, int flags);

/* The inode number a procfs entry (an fd on it) shows: from its guest
 * name, stable across runs, where the host's changes per lookup. */
uint64_t proxy_proc_stable_ino(struct proxy_process *p, int host_fd,
                               uint64_t host_ino);

/* The same number for a guest name (/proc/self/fd/<host fd>, /proc/x). */
uint64_t proxy_proc_name_ino(const char *name);
/* The owner stat shows of a guest's /proc/PID entry (procguard.c): its
 * effective ids, root's when it is not dumpable; unchanged for others. */
void proxy_proc_owner_fix(struct proxy_process *p, int host_fd, uint32_t mode,
                          uint32_t *uid, uint32_t *gid);
/* The same for q's entry rest ("", "/stat", "/task/T") of host mode. */
void proxy_proc_owner_as(const struct proxy_process *q, const char *rest,
                         uint32_t mode, uint32_t *uid, uint32_t *gid);

/*
 * Directory listings the host cannot give: for /proc/self/fd and
 * /proc/self/fdinfo (also /proc/thread-self/..., /proc/<guest pid>/...,
 * /dev/fd, with or without a trailing '/') the names of the guest's open
 * fds in ascending order, without "." and "..". Under fd every entry is a
 * symlink (DT_LNK), under fdinfo a regular file (DT_REG). On success *names
 * is a malloc'ed array of *n malloc'ed strings (free with
 * proxy_vfs_names_free) and the return is 0; -ENOENT for any other
 * directory, -ENOMEM.
 */
int proxy_vfs_list_dir(struct proxy_process *p, const char *guest_path,
                       char ***names, size_t *n);

/* The same for an open host directory fd (getdents has only the fd): the
 * directory is recognised by its inode, however the guest named it. */
int proxy_vfs_list_dir_fd(struct proxy_process *p, int host_fd, char ***names,
                          size_t *n);
void proxy_vfs_names_free(char **names, size_t n);

/* The size a directory of (dev, ino) shows the guest: the number of its
 * fds for its /proc/self/fd (the host's counts hvrun's), else size. */
int64_t proxy_vfs_dir_size_fixup(const struct proxy_process *p, uint64_t dev,
                                 uint64_t ino, int64_t size);
/* The link count a directory of (dev, ino) shows the guest: 2 and one per
 * thread of p for its /proc/self/task (the host's counts hvrun's threads,
 * which come and go with hvrun's work), else nlink. */
uint64_t proxy_vfs_dir_nlink_fixup(const struct proxy_process *p, uint64_t dev,
                                   uint64_t ino, uint64_t nlink);

/*
 * The same listing as host getdents64 records, a drop-in for reading the
 * host directory: ".", "..", then the guest fds ascending, with d_type
 * (DT_DIR, DT_LNK or DT_REG), d_off the record's ordinal and d_ino the
 * host inode of the matching host entry (so a later lstat of the entry
 * agrees). On success *raw (malloc'ed) holds *len bytes and the return is
 * 0; -ENOENT when host_fd is not a /proc/self/fd or fdinfo directory.
 */
/* Whether host_fd is one of the guest's /proc/self/{fd,fdinfo,task}
 * directories, whose listing is always the guest's. */
bool proxy_vfs_guest_listing_dir(int host_fd);
int proxy_vfs_dir_records(struct proxy_process *p, int host_fd, char **raw,
                          size_t *len);

/*
 * Symlinks inside the private /tmp, resolved hvrun-side: the host kernel
 * would read an absolute link target such as "/tmp/a" as the host's /tmp.
 * path is a host path (after proxy_tmp_map), relative ones under the host
 * dirfd; only a walk that starts in the private /tmp is done here. Returns
 * PROXY_TMP_WALK_HOST (not in the private /tmp: path untouched),
 * PROXY_TMP_WALK_RESOLVED (path: an absolute host path, its links inside
 * the private /tmp resolved, the last one kept unless follow_last),
 * PROXY_TMP_WALK_AGAIN (path: a guest path a link or ".." led to, to be
 * rewritten and walked again), or -errno (-ELOOP past 40 links in *links).
 */
enum { PROXY_TMP_WALK_HOST, PROXY_TMP_WALK_RESOLVED, PROXY_TMP_WALK_AGAIN };
int proxy_tmp_walk(const struct proxy_process *p, int dirfd, char *path,
                   size_t cap, bool follow_last, int *links);

/* An /etc/hosts text (len bytes; NULL: none) has a line naming name (as
 * its canonical name or an alias; case-insensitive, as glibc compares). */
bool proxy_hosts_names(const char *hosts, size_t len, const char *name);

/* ---- content buffers (vfs.c, procfs.c) ------------------------------------ */

struct vbuf {
    char *s;
    size_t len, cap;
    bool failed;
};

static inline void vb_put(struct vbuf *b, const void *src, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, src, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static inline void vb_printf(struct vbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline void vb_printf(struct vbuf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        vb_put(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    vb_put(b, big, (size_t)n);
    free(big);
}

/* ---- what vfs.c and procfs.c share ----------------------------------------- */

/* Which detcore switch makes a file virtual. */
enum vfs_gate { GATE_ALWAYS, GATE_HOST, GATE_RANDOM, GATE_TIME };

struct vfile {
    const char *path; /* /proc/self/... for the process's own files */
    enum vfs_gate gate;
    enum det_source src;
    int (*gen)(struct proxy_process *p, struct vbuf *b);
    /* Files that are more than content made at open (procfile.c). */
    long (*open)(struct proxy_process *p, struct proxy_process *of,
                 const char *name, int flags);
};

struct init_entry {
    const char *name;
    unsigned char type; /* DT_DIR, DT_REG or DT_LNK, as listed */
    int (*gen)(struct proxy_process *reader, struct vbuf *b); /* files */
    const char *link; /* links: what readlink says */
};

/* Where a canonical name is, for the virtual init's /proc/1. */
enum init_place {
    INIT_OUTSIDE, /* not under /proc/1 */
    INIT_MISSING, /* under it, but no entry: ENOENT */
    INIT_PID_DIR, /* /proc/1 or /proc/1/task/1 */
    INIT_TASK_DIR,
    INIT_ENTRY,
};

/* The process whose namespaces a /proc/self/ns/NAME name stands for: the
 * one a /proc/N/ns/NAME path named (fs.c's rewrite), else of. */
struct proxy_process *proxy_vfs_ns_owner(struct proxy_process *p,
                                         struct proxy_process *of);

struct init_name {
    enum init_place place;
    const struct init_entry *entry; /* INIT_ENTRY */
    const char *rest;               /* after the entry: "", "/" or "/..." */
    bool in_task;                   /* under /proc/1/task/1 */
};

/* One mapping as /proc/PID/maps shows it (procfs.c), for PROCMAP_QUERY
 * (procmap_query.c). */
struct proxy_mapping {
    uint64_t start, end;
    int prot;
    bool shared, is_file;
    uint64_t file_off, ino;
    unsigned int dev_major, dev_minor;
    char name[PROXY_PATH_MAX]; /* "" when the line names nothing */
    uint64_t backed; /* bytes of it backed (resident) */
};
/* The mapping that starts at VMA index i of p (0 for the first); returns
 * the index of the next one, 0 past the last. */
size_t proxy_procfs_mapping(struct proxy_process *p, size_t i,
                            struct proxy_mapping *m);
/* /proc/PID/map_files: whether mapping m has an entry there (a file's, by
 * the name maps shows), and the mapping whose entry is entry
 * ("START-END"), false for none (procfs.c). */
bool proxy_procfs_map_file_shown(const struct proxy_mapping *m);
bool proxy_procfs_map_file(struct proxy_process *q, const char *entry,
                           struct proxy_mapping *m);

/* The virtual files (procfs.c), in the table's order. */
extern const struct vfile proxy_vfs_files[];
extern const size_t proxy_vfs_nr_files;
/* The virtual init's /proc/1 entries, in the order Linux lists them. */
extern const struct init_entry proxy_vfs_init_entries[];
extern const size_t proxy_vfs_nr_init_entries;

/* procfs.c's: whether g's detcore switch makes a file virtual for p, a
 * name may be one of the table's, /proc/self/ns/NAME opened, and the
 * virtual init's /proc/1 names parsed and shown. */
bool proxy_vfs_gate_open(const struct proxy_process *p, enum vfs_gate g);
bool proxy_vfs_maybe_virtual_name(const char *path);
long proxy_vfs_open_ns(struct proxy_process *p, struct proxy_process *of,
                       const char *name, int flags);
bool proxy_vfs_ends_dir(const char *s);
bool proxy_vfs_host_pid1_is_hvrun(void);
bool proxy_vfs_init_fd_dir_readable(const struct proxy_process *p);
bool proxy_vfs_init_name_of(const struct proxy_process *p, int dirfd,
                            const char *path, char *name, size_t cap,
                            struct init_name *in);
bool proxy_vfs_init_shown(const struct proxy_process *p);
void proxy_vfs_parse_init_name(const char *name, struct init_name *in);

/* procfs.c's figures for procmachine.c: meminfo's model figure called
 * name in kB (0 for none), and the last pid the run handed out. */
unsigned long long proxy_procfs_model_kb(const struct proxy_process *p,
                                         const char *name);
int proxy_procfs_last_pid(const struct proxy_process *p);
/* The pages p has resident (status's VmRSS in pages). */
uint64_t proxy_procfs_rss_pages(const struct proxy_process *p);

/* procmachine.c's machine counter files (procfs.c's table). */
int proxy_procfs_gen_vmstat(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_buddyinfo(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_zoneinfo(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_interrupts(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_softirqs(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_slabinfo(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_pagetypeinfo(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_diskstats(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_file_nr(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_inode_nr(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_inode_state(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_ns_last_pid(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_dentry_state(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_pressure(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_timer_list(struct proxy_process *p, struct vbuf *b);
int proxy_sysfs_gen_block_stat(struct proxy_process *p, struct vbuf *b);
int proxy_sysfs_gen_block_inflight(struct proxy_process *p, struct vbuf *b);
/* /proc/locks from plock.c's model; /proc/sys/fs/aio-nr and aio-max-nr
 * from aio.c's contexts. */
int proxy_plock_gen_locks(struct proxy_process *p, struct vbuf *b);
int proxy_aio_gen_nr(struct proxy_process *p, struct vbuf *b);
int proxy_aio_gen_max_nr(struct proxy_process *p, struct vbuf *b);

/* Whether reader may open v, of's file (procfs.c: root-only 0400 files,
 * /proc/PID/stack's capability and ptrace access): 0 or -EACCES. */
int proxy_vfs_may_open(const struct proxy_process *reader,
                       const struct proxy_process *of, const struct vfile *v);
int proxy_procfs_root_only(const struct proxy_process *reader,
                           const struct proxy_process *of);
int proxy_procfs_stack_access(const struct proxy_process *reader,
                              const struct proxy_process *of);
int proxy_procfs_owner_only(const struct proxy_process *reader,
                            const struct proxy_process *of);

/* procself.c's rarer /proc/PID files (procfs.c's table). */
int proxy_procfs_gen_sched(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_stack(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_numa_maps(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_timers(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_cpuset(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_arch_status(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_projid_map(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_ksm_stat(struct proxy_process *p, struct vbuf *b);
int proxy_procfs_gen_ksm_merging_pages(struct proxy_process *p,
                                       struct vbuf *b);
int proxy_procfs_gen_timens_offsets(struct proxy_process *p, struct vbuf *b);

/* vfs.c's: a canonical name of (dirfd, path) as p would see it. */
bool proxy_vfs_full_name(const struct proxy_process *p, int dirfd,
                         const char *path, char *out, size_t cap);

#endif
