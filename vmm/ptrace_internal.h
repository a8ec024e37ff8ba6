/*
 * ptrace_internal.h - shared between ptrace.c and ptrace_host.c only.
 */
#ifndef VMM_PTRACE_INTERNAL_H
#define VMM_PTRACE_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

struct vmm_host;
struct vmm_backend_ops;

extern const struct vmm_backend_ops ptrace_backend_ops;

void ptrace_host_close(struct vmm_host *host);
void ptrace_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready);

/*
 * Spawns a stub process (stub/ptrace_stub.S) with memfd as its guest
 * memory, seizes it (PTRACE_O_EXITKILL) and waits until it has built its
 * region. Returns 0 with *pid set, or -errno with why filled in.
 */
int ptrace_host_spawn_stub(struct vmm_host *host, int memfd, pid_t *pid,
                           char *why, size_t why_len);

#endif
