/*
 * ptrace_internal.h - shared between ptrace.c and ptrace_host.c only.
 */
#ifndef VMM_PTRACE_INTERNAL_H
#define VMM_PTRACE_INTERNAL_H

#include <linux/filter.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vmm_host;
struct vmm_backend_ops;

extern const struct vmm_backend_ops ptrace_backend_ops;

void ptrace_host_close(struct vmm_host *host);
void ptrace_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready);
const int *ptrace_host_run_syscalls(size_t *n);
void ptrace_host_confined(struct vmm_host *host);
int ptrace_host_fs_restricted(struct vmm_host *host, char *why,
                              size_t why_len);
/* Checkpoints (ptrace_snapshot.c): in a fork of hvrun, the spawner, a
 * prepared stub and the reaper are the original's (forgotten); a
 * spawner started by another process is taken (its socket). */
void ptrace_host_disown(struct vmm_host *host);
void ptrace_host_adopt_helper(struct vmm_host *host, int helper_fd);

/*
 * Spawns a stub process (stub/ptrace_stub.S) with memfd as its guest
 * memory, through the host's spawner, seizes it (PTRACE_O_EXITKILL) and
 * waits until it has built its region. Returns 0 with *pid and *pidfd
 * (kill it through that) set, or -errno with why filled in.
 */
int ptrace_host_spawn_stub(struct vmm_host *host, int memfd, pid_t *pid,
                           int *pidfd, char *why, size_t why_len);

/*
 * A stub asked for ahead, so that its spawn overlaps the guest's run
 * rather than the next fork's or exec's: ptrace_host_prepare_stub sends
 * the spawner the request for a fresh guest memory (memfd, hvrun's view
 * of it at view); ptrace_host_take_prepared then seizes that stub as
 * ptrace_host_spawn_stub would have (true, with the memory and the stub),
 * or says there is none (false; a prepared stub that failed is cleaned up
 * and why filled in). Only after the run's first VM (vm_pool set): a run
 * of one process spawns nothing it will not use.
 */
bool ptrace_host_wants_prepared(struct vmm_host *host);
void ptrace_host_prepare_stub(struct vmm_host *host, int memfd, void *view);
/* In two steps, so that a new VM can use its memory (its address space,
 * the exec's image) while its stub still starts: the memory now (false:
 * none prepared), the stub when the VM first needs it (0, or -errno
 * when it failed and was cleaned up: the caller spawns one). Until then
 * no other stub is asked for; pending_vm names that VM. */
bool ptrace_host_take_prepared_memory(struct vmm_host *host, int *memfd,
                                      void **view);
int ptrace_host_take_prepared_stub(struct vmm_host *host, pid_t *pid,
                                   int *pidfd);
void ptrace_host_set_pending_vm(struct vmm_host *host, void *vm);
/* The prepared stub killed unused (its memory stays with a VM that took
 * it). */
void ptrace_host_drop_prepared(struct vmm_host *host);
void *ptrace_host_pending_vm(struct vmm_host *host);

/* The first VM's stub asked for as the host opens (ptrace.c): its spawn
 * overlaps the rest of hvrun's set-up instead of waiting in the first
 * vm_create. The host's guests' thread must be pinned by then. */
void ptrace_vm_prepare_first(struct vmm_host *host);

/* The guest-physical reserve each stub's memfd is. hvrun's view of it
 * starts at PT_VIEW_FIRST bytes and grows with the memory in use, in place
 * (a guest process costs hvrun the address space it uses, not 256 GiB of
 * the host's 128 TiB: 1000 processes fit; vmm/ptrace.c, reserve_view). */
#define PT_GUEST_PHYS_RESERVE (256ULL << 30)
#define PT_VIEW_FIRST (4ULL << 30)

/* The process that starts stubs for a host (ptrace_spawner.c). */
struct ptrace_spawner {
    int sock;  /* hvrun's end of the socketpair */
    int unpin_sock; /* the reaper's (ptrace_spawner_unpin); -1: none */
    pid_t pid; /* the spawner */
};
int ptrace_spawner_start(struct ptrace_spawner *s, int exec_fd, char *why,
                         size_t why_len);
/* A stub spawned on hvrun's CPUs: its pid, a pidfd and its ready pipe.
 * The same in two steps: the request sent (the spawner starts at once),
 * then its reply read; one request outstanding at a time. */
int ptrace_spawner_spawn(struct ptrace_spawner *s, int memfd, pid_t *pid,
                         int *pidfd, int *ready_r);
int ptrace_spawner_request(struct ptrace_spawner *s, int memfd);
int ptrace_spawner_reply(struct ptrace_spawner *s, pid_t *pid, int *pidfd,
                         int *ready_r);
void ptrace_spawner_stop(struct ptrace_spawner *s);
/* Its sockets closed (it exits), not waited for; stop waits. */
void ptrace_spawner_close(struct ptrace_spawner *s);
/* A stub about to be killed moved off the guests' CPU to all of the
 * spawner's (its death's work then runs elsewhere); pidfd is the stub's.
 * Waits for the spawner's answer. 0, or -errno when it could not ask. */
int ptrace_spawner_unpin(int unpin_sock, pid_t pid, int pidfd);

/* What is left of a killed stub (ptrace_reaper.c): reaped, its fds
 * closed and hvrun's view of its guest memory unmapped, by a worker. */
struct ptrace_retired {
    pid_t pid;  /* 0: none */
    bool kill;  /* killed by the reaper (else killed already) */
    int pidfd, memfd; /* -1: none */
    void *view; /* NULL: none */
    size_t view_len;
};
struct ptrace_reaper {
    pthread_mutex_t lock;
    pthread_cond_t more;
    pthread_t worker;
    bool allowed; /* hvrun is confined: the worker may start */
    /* hvrun's CPUs before the guests' thread was pinned to one: the
     * worker's (its work need not wait for the guests' CPU) */
    cpu_set_t home;
    bool started, broken, stopping;
    /* The spawner's socket that moves a stub off the guests' CPU before
     * the worker kills it (-1: none; killed pinned). */
    int unpin_sock;
    struct ptrace_retired *queue;
    size_t n, cap;
    /* A prepared VM's view whose call-count and scratch pages the worker
     * touches before hvrun's guest thread first does (ptrace_reaper_warm):
     * queued, being touched (NULL: none), and told when done. */
    uint8_t *warm, *warming;
    pthread_cond_t warmed;
};
void ptrace_reaper_init(struct ptrace_reaper *rp);
/* r->kill: the stub is killed here, by the worker when there is one
 * (after it is moved off the guests' CPU), else at once. */
void ptrace_reaper_retire(struct ptrace_reaper *rp,
                          const struct ptrace_retired *r);
/* The spawner socket through which stubs are unpinned (-1: none). */
void ptrace_reaper_set_unpin(struct ptrace_reaper *rp, int unpin_sock);
/* The worker touches view's call-count and scratch pages, if it runs
 * (ptrace_reaper.c says why); until ptrace_reaper_unwarm the caller
 * neither uses nor unmaps view. */
void ptrace_reaper_warm(struct ptrace_reaper *rp, uint8_t *view);
/* view is the caller's again: a warm not begun is dropped, one under
 * way waited for. */
void ptrace_reaper_unwarm(struct ptrace_reaper *rp, const uint8_t *view);
/* Waits for every stub retired. */
void ptrace_reaper_stop(struct ptrace_reaper *rp);
/* The host's reaper. */
struct ptrace_reaper *ptrace_host_reaper(struct vmm_host *host);

/* What a stub has mapped, as far as hvrun knows it for sure
 * (ptrace_maps.c): [start, end) mapped from backing `key` (the guest
 * memfd: PT_MAPS_MEMFD plus the stub's fd of it; else a file's
 * vmm_shared id) at offset off (of start), with prot. */
#define PT_MAPS_MEMFD (1ULL << 63)
struct pt_stub_map {
    uint64_t start, end, key, off;
    int prot;
};
struct pt_stub_maps {
    struct pt_stub_map *e; /* sorted, non-overlapping */
    size_t n, cap;
};
/* [map->start, map->end) is now map (what was there forgotten). */
void pt_maps_set(struct pt_stub_maps *m, const struct pt_stub_map *map);
/* [lo, hi) no longer known (unmapped, or mapped in a way not recorded). */
void pt_maps_forget(struct pt_stub_maps *m, uint64_t lo, uint64_t hi);
/* The one entry that covers all of [lo, hi), or NULL. */
const struct pt_stub_map *pt_maps_covering(const struct pt_stub_maps *m,
                                           uint64_t lo, uint64_t hi);
void pt_maps_clear(struct pt_stub_maps *m);
void pt_maps_free(struct pt_stub_maps *m);

/* The stub's seccomp filter (ptrace_filter.c), as BPF to load. */
struct ptrace_stub_filter {
    struct sock_filter *insns;
    unsigned short len;
};
/* Room for it in the stub's scratch page, after its sock_fprog. */
#define PT_STUB_FILTER_MAX 3072

int ptrace_stub_filter_build(struct ptrace_stub_filter *out, char *why,
                             size_t why_len);
void ptrace_stub_filter_free(struct ptrace_stub_filter *f);

#endif
