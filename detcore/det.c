/*
 * det.c - detcore's state: configuration defaults, set-up, the event count.
 */
#include "det.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void det_config_defaults(struct det_config *c)
{
    memset(c, 0, sizeof(*c));
    c->seed = 0;
    c->epoch_ns = DET_DEFAULT_EPOCH_NS;
    c->virtualize_time = true;
    c->virtualize_random = true;
    c->virtualize_metadata = true;
    c->virtualize_host = true;
    c->hostname = "hvrun";
    c->domainname = "(none)";
    c->uid = (uint32_t)getuid();
    c->gid = (uint32_t)getgid();
    c->mem_total_bytes = DET_MEM_TOTAL_BYTES;
}

void det_rng_init(struct det_state *d);
int det_meta_init(struct det_state *d);
void det_meta_destroy(struct det_state *d);

uint16_t det_port(struct det_state *d)
{
    uint16_t port = (uint16_t)(DET_PORT_FIRST + d->ports_handed % DET_PORT_COUNT);
    d->ports_handed++;
    d->reads[DET_SRC_IDS]++;
    det_log_value(d, DET_SRC_IDS, &port, sizeof(port));
    return port;
}

uint32_t det_unix_name(struct det_state *d)
{
    uint32_t n = d->unix_names_handed++;
    d->reads[DET_SRC_IDS]++;
    det_log_value(d, DET_SRC_IDS, &n, sizeof(n));
    return n;
}

bool det_tap_get(struct det_state *d, enum det_source src, void *buf,
                 size_t len)
{
    return d->tap && d->tap->get && d->tap->get(d->tap->ctx, src, buf, len);
}

void det_tap_put(struct det_state *d, enum det_source src, const void *buf,
                 size_t len)
{
    if (d->tap && d->tap->put)
        d->tap->put(d->tap->ctx, src, buf, len);
}

int det_init(struct det_state *d, const struct det_config *cfg)
{
    memset(d, 0, sizeof(*d));
    d->cfg = *cfg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    d->host_start_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    snprintf(d->hostname, sizeof(d->hostname), "%s",
             cfg->hostname ? cfg->hostname : "hvrun");
    snprintf(d->domainname, sizeof(d->domainname), "%s",
             cfg->domainname ? cfg->domainname : "(none)");
    d->log.keep = true;
    d->log.digest = 0xcbf29ce484222325ULL; /* FNV-1a offset basis */
    d->chaos_low = (1ULL << 40) - 1;      /* below det_sched.c's high band */
    det_rng_init(d);
    /* The boot id is fixed for the run and comes from the misc stream, so
     * it is the same for every run with the same seed. */
    char id[37];
    det_uuid(d, id);
    memcpy(d->boot_id, id, sizeof(id));
    return det_meta_init(d);
}

void det_destroy(struct det_state *d)
{
    det_meta_destroy(d);
    free(d->log.recs);
    d->log.recs = NULL;
}

void det_event(struct det_state *d, uint32_t tid, uint16_t nr)
{
    d->cur_tid = tid;
    d->cur_nr = nr;
    d->events++;
    d->now_ns += DET_EVENT_NS;
}
