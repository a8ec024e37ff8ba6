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

/* Linux's overflowuid/overflowgid: what an unmapped id reads as. */
#define PROXY_OVERFLOW_ID 65534u

int64_t proxy_ns_uid_kernel(const struct proxy_process *p, uint32_t uid);
int64_t proxy_ns_gid_kernel(const struct proxy_process *p, uint32_t gid);

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

/* sethostname/setdomainname in p's UTS namespace: 0, -EPERM, -EINVAL. */
long proxy_ns_set_uts_name(struct proxy_process *p, bool host,
                           const char *name, size_t len);

/* Whether p may change its UTS namespace (CAP_SYS_ADMIN over it). */
bool proxy_ns_uts_admin(const struct proxy_process *p);

/* p's IPC namespace as a number System V objects are tagged with (0: the
 * run's initial one); whether p is privileged over it (CAP_IPC_OWNER). */
uint32_t proxy_ns_ipc_id(const struct proxy_process *p);
bool proxy_ns_ipc_owner_capable(const struct proxy_process *p);

/* clone/fork with CLONE_NEW* flags: checked before the child exists
 * (-EINVAL, -EPERM, -ENOSPC as Linux's copy_process), then applied to
 * the child (which is a copy of p). */
long proxy_ns_clone_check(struct proxy_process *p, uint64_t flags);
long proxy_ns_clone_apply(struct proxy_process *p, struct proxy_process *c,
                          uint64_t flags);

/* fork: the child c gets its pids in parent's namespace for children
 * (-ENOMEM once that namespace's init died). */
long proxy_ns_fork_pids(struct proxy_process *parent, struct proxy_process *c);

/* The run pid of the init of p's pid namespace (0: the run's own). */
int proxy_ns_reaper(const struct proxy_process *p);

/* Whether a process of pid namespace ns (NULL: the run's) has a pid in
 * p's (pid_in_current_pidns): ns is p's own or below it. */
bool proxy_ns_pidns_visible(const struct proxy_process *p,
                            const struct proxy_ns *ns);

/* p is the init of a pid namespace; it died (forks there fail from now);
 * q lives in init's namespace or below it (init's death kills q). */
bool proxy_ns_is_ns_init(const struct proxy_process *p);
void proxy_ns_init_gone(struct proxy_process *p);
bool proxy_ns_pid_below(const struct proxy_process *init,
                        const struct proxy_process *q);

void proxy_ns_world_free(struct proxy_world *w);

#endif
