/*
 * ptrace_internal.h - shared between ptrace.c and ptrace_host.c only.
 */
#ifndef VMM_PTRACE_INTERNAL_H
#define VMM_PTRACE_INTERNAL_H

#include <linux/filter.h>
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
/* The host's filter (built at ptrace_host_open). */
const struct ptrace_stub_filter *ptrace_host_stub_filter(
    const struct vmm_host *host);

#endif
