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

/* The kept file named `name` (the part after /proc/self/), or -1. */
int proxy_procfile_kept_index(const char *name);

/* Opens a kept file or the mem file of `of` for p; the guest fd or
 * -errno. A read-only kept file opened for writing is -EACCES. */
long proxy_procfile_open_kept(struct proxy_process *p, struct proxy_process *of,
                              int k, int flags);
long proxy_procfile_open_mem(struct proxy_process *p, struct proxy_process *of,
                             int flags);
/* /proc/PID/pagemap: an entry per page of q's address space (procfile.c). */
long proxy_procfile_open_pagemap(struct proxy_process *p,
                                 struct proxy_process *of, int flags);

/* /proc/PID/syscall of `of` for p, its text made at each read. */
long proxy_procfile_open_syscall(struct proxy_process *p,
                                 struct proxy_process *of, int flags);

/* /proc/PID/{uid_map,gid_map,setgroups} (which: PROXY_NSFILE_*) and
 * /proc/PID/ns/NAME (type: PROXY_NS_*) of `of`, opened for p. */
long proxy_procfile_open_nsfile(struct proxy_process *p,
                                struct proxy_process *of, int which,
                                int flags);
long proxy_procfile_open_ns(struct proxy_process *p, struct proxy_process *of,
                            int type, int flags);

#endif
