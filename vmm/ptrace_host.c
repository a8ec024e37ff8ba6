/*
 * ptrace_host.c - the ptrace backend's host (not built yet).
 */
#include "backend_impl.h"

#include <errno.h>
#include <stdio.h>

int ptrace_host_open(struct vmm_host **out, char *why, size_t why_len)
{
    (void)out;
    snprintf(why, why_len, "--backend ptrace: not built yet");
    return -ENOSYS;
}
