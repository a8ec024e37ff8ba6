/*
 * namespace.h - Linux namespaces as an unprivileged container sees them,
 * over hvrun's process model (namespace.c): user namespaces with uid/gid
 * maps and the capabilities they give, UTS, IPC and cgroup namespaces;
 * pid namespaces over the virtual pids; mount, network and time
 * namespaces are refused with EPERM. A process's namespaces are pointers
 * into objects the world owns (freed with it); NULL is the run's initial
 * namespace of that kind, so a process that never unshares carries
 * nothing new.
 *
 * Ids: proxy_process keeps its uids and gids as kernel ids (the run's
 * initial user namespace, where --uid/--gid live); what the guest sees is
 * them mapped through its user namespace (unmapped: the overflow id
 * 65534), as Linux's from_kuid_munged.
 */
#ifndef HVRUN_NAMESPACE_H
#define HVRUN_NAMESPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proxy_process;
struct proxy_world;
struct proxy_ns;

enum proxy_ns_type {
    PROXY_NS_USER,
    PROXY_NS_UTS,
    PROXY_NS_IPC,
    PROXY_NS_PID,
    PROXY_NS_MNT,
    PROXY_NS_NET,
    PROXY_NS_CGROUP,
    PROXY_NS_TIME,
    PROXY_NR_NS,
};

/* Linux's overflowuid/overflowgid: what an unmapped id reads as. */
#define PROXY_OVERFLOW_ID 65534u

/* Kernel id -> the id p sees (munged); guest id -> kernel id, or -1 when
 * p's user namespace does not map it. */
uint32_t proxy_ns_uid_seen(const struct proxy_process *p, uint32_t kuid);
uint32_t proxy_ns_gid_seen(const struct proxy_process *p, uint32_t kgid);
int64_t proxy_ns_uid_kernel(const struct proxy_process *p, uint32_t uid);
int64_t proxy_ns_gid_kernel(const struct proxy_process *p, uint32_t gid);

/* Whether p has its capabilities in its own user namespace (all of them
 * for its root, or for the creator of the namespace until it execs), and
 * in the run's initial one (what capable() checks: host-wide limits). */
bool proxy_ns_capable(const struct proxy_process *p);
bool proxy_ns_init_capable(const struct proxy_process *p);
/* Whether p has its capabilities in q's user namespace (ns_capable over
 * q's credentials, as ptrace_has_cap asks). */
bool proxy_ns_capable_over(const struct proxy_process *p,
                           const struct proxy_process *q);
/* setgroups(2) is allowed in p's user namespace (its gid map written and
 * /proc/PID/setgroups not "deny"). */
bool proxy_ns_setgroups_allowed(const struct proxy_process *p);
/* execve: capabilities are recomputed from the euid; a set*uid call
 * that left p's namespace root loses them. */
void proxy_ns_exec(struct proxy_process *p);
void proxy_ns_uids_changed(struct proxy_process *p);

/* The UTS namespace's names when p has one of its own (NULL: detcore's
 * names, the run's initial namespace). */
const char *proxy_ns_nodename(const struct proxy_process *p);
const char *proxy_ns_domainname(const struct proxy_process *p);
/* sethostname/setdomainname in p's UTS namespace: 0, -EPERM, -EINVAL. */
long proxy_ns_set_uts_name(struct proxy_process *p, bool host,
                           const char *name, size_t len);
/* Whether p may change its UTS namespace (CAP_SYS_ADMIN over it). */
bool proxy_ns_uts_admin(const struct proxy_process *p);

/* p's IPC namespace as a number System V objects are tagged with (0: the
 * run's initial one); whether p is privileged over it (CAP_IPC_OWNER). */
uint32_t proxy_ns_ipc_id(const struct proxy_process *p);
bool proxy_ns_ipc_owner_capable(const struct proxy_process *p);
/* The world holds one IPC namespace's System V objects at a time: this
 * makes them p's (table.c before each call, and the exit paths). */
void proxy_ns_ipc_enter(struct proxy_process *p);

/* clone/fork with CLONE_NEW* flags: checked before the child exists
 * (-EINVAL, -EPERM, -ENOSPC as Linux's copy_process), then applied to
 * the child (which is a copy of p). */
long proxy_ns_clone_check(struct proxy_process *p, uint64_t flags);
long proxy_ns_clone_apply(struct proxy_process *p, struct proxy_process *c,
                          uint64_t flags);

/* /proc/PID/{uid_map,gid_map,setgroups} of process of: the content a
 * read shows p, and a write by p (Linux's map_write and
 * proc_setgroups_write rules). which: 0 uid_map, 1 gid_map, 2 setgroups. */
enum { PROXY_NSFILE_UID_MAP, PROXY_NSFILE_GID_MAP, PROXY_NSFILE_SETGROUPS };
int proxy_ns_file_content(const struct proxy_process *p,
                          const struct proxy_process *of, int which,
                          char *out, size_t cap);
long proxy_ns_file_write(struct proxy_process *p, struct proxy_process *of,
                         int which, const char *buf, size_t len);
/* /proc/PID/ns/NAME: the type it names (-1: none); its link text
 * "user:[4026531837]" for process of. */
int proxy_ns_type_of_name(const char *name);
int proxy_ns_link(const struct proxy_process *of, int type, char *out,
                  size_t cap);
/* The inode number of a namespace of that type (NULL: the initial). */
uint32_t proxy_ns_inum(int type, const struct proxy_ns *ns);
/* The namespace a /proc/PID/ns fd holds (procfile.c keeps it). */
struct proxy_ns *proxy_ns_of(const struct proxy_process *of, int type);

/* The deepest pid namespace (Linux's MAX_PID_NS_LEVEL). */
#define PROXY_PID_LEVELS 32
/* What viewer sees as q's pid (0: q is outside its pid namespace); a
 * pid number of the run (a pgid, a sid) as viewer sees it; the process
 * viewer calls vpid (NULL: none); viewer's vpid as a pid of the run (-1:
 * none). In the run's own pid namespace all four are the identity. */
int proxy_ns_pid_of(const struct proxy_process *viewer,
                    const struct proxy_process *q);
int proxy_ns_pid_nr(const struct proxy_process *viewer, int global);
struct proxy_process *proxy_ns_find(struct proxy_process *viewer, int vpid);
int proxy_ns_global_nr(struct proxy_process *viewer, int vpid);
/* fork: the child c gets its pids in parent's namespace for children
 * (-ENOMEM once that namespace's init died). */
long proxy_ns_fork_pids(struct proxy_process *parent, struct proxy_process *c);
/* How deep p's pid namespace is (0: the run's). */
int proxy_ns_pid_level(const struct proxy_process *p);
/* The run pid of the init of p's pid namespace (0: the run's own). */
int proxy_ns_reaper(const struct proxy_process *p);
/* p is the init of a pid namespace; it died (forks there fail from now);
 * q lives in init's namespace or below it (init's death kills q). */
bool proxy_ns_is_ns_init(const struct proxy_process *p);
void proxy_ns_init_gone(struct proxy_process *p);
bool proxy_ns_pid_below(const struct proxy_process *init,
                        const struct proxy_process *q);
/* /proc/PID/ns/NAME's link by its name (pid_for_children and the
 * others), -1 for no such name. */
int proxy_ns_link_named(const struct proxy_process *of, const char *name,
                        char *out, size_t cap);

void proxy_ns_world_free(struct proxy_world *w);

#endif
