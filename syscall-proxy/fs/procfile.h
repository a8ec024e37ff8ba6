/*
 * procfile.h - /proc/<pid> files that act on a process: mem and the small
 * settings files (comm, oom_score_adj, coredump_filter, ...), kept per
 * guest process instead of reaching hvrun's own (procfile.c).
 */
#ifndef PROXY_PROCFILE_H
#define PROXY_PROCFILE_H

#include <stdbool.h>
#include <stdint.h>

struct proxy_process;
struct proxy_fd;
struct proxy_vfd;
struct iovec;

/* Which kept file: an index into proxy_process.kept (COMM is p->comm). */
enum proxy_kept {
    PROXY_KEPT_OOM_SCORE_ADJ,
    PROXY_KEPT_OOM_ADJ,
    PROXY_KEPT_COREDUMP_FILTER,
    PROXY_KEPT_TIMERSLACK,
    PROXY_KEPT_LOGINUID,
    PROXY_KEPT_CLEAR_REFS,
    PROXY_KEPT_SESSIONID,
    PROXY_KEPT_OOM_SCORE,
    PROXY_KEPT_PERSONALITY,
    PROXY_KEPT_CGROUP,
    PROXY_KEPT_AUTOGROUP,
    PROXY_NR_KEPT,
    PROXY_KEPT_COMM = PROXY_NR_KEPT,
};
#define PROXY_KEPT_VALUE_MAX 24

/* The kept file named `name` (the part after /proc/self/), or -1. */
int proxy_procfile_kept_index(const char *name);
/* Opens a kept file or the mem file of `of` for p; the guest fd or
 * -errno. A read-only kept file opened for writing is -EACCES. */
long proxy_procfile_open_kept(struct proxy_process *p, struct proxy_process *of,
                              int k, int flags);
long proxy_procfile_open_mem(struct proxy_process *p, struct proxy_process *of,
                             int flags);
/* /proc/PID/{uid_map,gid_map,setgroups} (which: PROXY_NSFILE_*) and
 * /proc/PID/ns/NAME (type: PROXY_NS_*) of `of`, opened for p. */
long proxy_procfile_open_nsfile(struct proxy_process *p,
                                struct proxy_process *of, int which,
                                int flags);
long proxy_procfile_open_ns(struct proxy_process *p, struct proxy_process *of,
                            int type, int flags);
/* The namespace an fd of /proc/PID/ns/NAME holds: true with its type and
 * namespace (NULL: the initial one); false for any other fd. */
struct proxy_ns;
bool proxy_procfile_ns(const struct proxy_fd *f, int *type,
                       struct proxy_ns **ns);
/* A transfer on such an fd (its slot has a vfd context): at the fd's
 * position, or at offset with at_offset. Returns bytes or -errno. */
long proxy_procfile_xfer(struct proxy_process *p, int guest_fd, bool into_guest,
                         bool at_offset, int64_t offset,
                         const struct iovec *iov, int n);
/* The fd table's hooks, as for signalfd and timerfd contexts. */
void proxy_procfile_share(struct proxy_fd *to, const struct proxy_fd *from);
void proxy_procfile_put(struct proxy_vfd *v);

#endif
