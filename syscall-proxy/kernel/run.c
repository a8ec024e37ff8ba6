/*
 * run.c - running a guest program: the first process and, through the
 * world (world.c), every process it creates, until the first one exits.
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

int proxy_run(struct proxy_process *p, struct vmm_host *host)
{
    struct proxy_world w;
    if (proxy_world_init(&w, host, p) < 0) {
        proxy_log(p, 0, "cannot set up the initial thread");
        return -1;
    }
    int status = proxy_world_run(&w);
    proxy_world_destroy(&w);
    p->world = NULL;
    return status;
}
