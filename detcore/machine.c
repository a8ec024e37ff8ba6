/*
 * machine.c - the virtual machine a guest sees: uname and the host names.
 * With --no-virtualize-host the host's uname passes through.
 */
#include "det.h"

#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

/* A fixed kernel identity: what Debian 12's kernel reports, so programs
 * that parse it find a plausible Linux. */
#define DET_UNAME_RELEASE "6.12.0-hvrun"
#define DET_UNAME_VERSION "#1 SMP PREEMPT_DYNAMIC Debian 6.12.0 (2021-12-31)"

void det_get_uname(struct det_state *d, struct det_uname *u)
{
    memset(u, 0, sizeof(*u));
    if (!d->cfg.virtualize_host) {
        struct utsname h;
        uname(&h);
        snprintf(u->sysname, 65, "%s", h.sysname);
        snprintf(u->nodename, 65, "%s", h.nodename);
        snprintf(u->release, 65, "%s", h.release);
        snprintf(u->version, 65, "%s", h.version);
        snprintf(u->machine, 65, "%s", h.machine);
        snprintf(u->domainname, 65, "%s", h.domainname);
        det_log_value(d, DET_SRC_HOST, u, sizeof(*u));
        return;
    }
    d->reads[DET_SRC_HOST]++;
    snprintf(u->sysname, 65, "Linux");
    snprintf(u->nodename, 65, "%s", d->hostname);
    snprintf(u->release, 65, DET_UNAME_RELEASE);
    snprintf(u->version, 65, DET_UNAME_VERSION);
    snprintf(u->machine, 65, "x86_64");
    snprintf(u->domainname, 65, "%s", d->domainname);
    det_log_value(d, DET_SRC_HOST, u, sizeof(*u));
}

static int set_name(char dst[65], const char *name, size_t len)
{
    if (len > 64)
        return -EINVAL;
    memcpy(dst, name, len);
    dst[len] = 0;
    return 0;
}

/* sethostname changes only the guest's view, never the host's. */
int det_set_hostname(struct det_state *d, const char *name, size_t len)
{
    return set_name(d->hostname, name, len);
}

int det_set_domainname(struct det_state *d, const char *name, size_t len)
{
    return set_name(d->domainname, name, len);
}
