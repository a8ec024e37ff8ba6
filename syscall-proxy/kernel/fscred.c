/*
 * fscred.c - a guest's file access is checked with its own ids.
 *
 * hvrun makes every host call a guest's file operations need itself, with
 * its own credentials. As root it keeps root's file capabilities
 * (cli/confine.c) so that a root guest has root's access; but a guest that
 * dropped root (setuid(65534) after its set-up, as a daemon does before it
 * reads untrusted input) would then still open /etc/shadow through hvrun,
 * where natively the kernel says EACCES. So while a guest's handler runs,
 * the thread hvrun serves it on takes the guest's filesystem ids:
 * setfsgid, its supplementary groups (setgroups, the raw call: per thread)
 * and setfsuid, which also drops the thread's file capabilities
 * (CAP_DAC_OVERRIDE and the rest) from its effective set while the fsuid is
 * not 0, exactly as for the native process (Linux's cap_task_fix_setuid);
 * hvrun's own come back before hvrun works for itself (they stay from one
 * call of a guest to the next: below). The host kernel then decides every
 * permission as it would for the guest: modes, ACLs, ownership, sticky
 * directories.
 *
 * Only where hvrun may change ids (root with CAP_SETUID and CAP_SETGID); a
 * non-root hvrun's guests have its uid anyway. hvrun's own files inside a
 * handler (the site cache, --verify's journal, a recording's copies) are
 * written with hvrun's ids (proxy_fscred_suspend). Not modelled: a guest
 * that keeps uid 0 but drops CAP_DAC_OVERRIDE with capset keeps root's
 * access.
 */
#include "proxy.h"
#include "kernel.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_HOST_GROUPS 256

static struct {
    bool known, can_switch, probed;
    int pdeath_signal; /* PR_SET_PDEATHSIG's, which a changed fsuid clears */
    uid_t uid;
    gid_t gid;
    gid_t groups[MAX_HOST_GROUPS];
    int nr_groups;
} host;

/* The guest whose ids the thread has now, NULL: hvrun's own. */
static const struct proxy_process *applied;

static void learn_host(void)
{
    host.known = true;
    host.uid = geteuid();
    host.gid = getegid();
    host.nr_groups = getgroups(MAX_HOST_GROUPS, host.groups);
    host.can_switch = host.uid == 0 && host.nr_groups >= 0;
    if (prctl(PR_GET_PDEATHSIG, &host.pdeath_signal, 0, 0, 0) < 0)
        host.pdeath_signal = 0;
}

/* What a changed fsuid undoes (Linux's commit_creds): the process is no
 * longer dumpable (a ptrace stub reopens hvrun's fds through
 * /proc/<hvrun>/fd) and its parent-death signal is gone (--verify's run
 * must still die with its parent). Both put back. */
static void after_fsuid_change(void)
{
    (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    if (host.pdeath_signal)
        (void)prctl(PR_SET_PDEATHSIG, host.pdeath_signal, 0, 0, 0);
}

/* setfsuid says the old fsuid whether or not it changed: asking for an id
 * no one has, and back, shows whether the change is allowed. Only once a
 * guest needs it. */
static bool may_switch(void)
{
    if (!host.can_switch || host.probed)
        return host.can_switch;
    host.probed = true;
    (void)setfsuid(65534);
    host.can_switch = setfsuid(0) == 65534;
    (void)setfsuid(0);
    after_fsuid_change();
    return host.can_switch;
}

static bool same_as_host(const struct proxy_process *p)
{
    return p->cred.fsuid == host.uid && p->cred.fsgid == host.gid &&
           p->cred.nr_groups < 0;
}

/*
 * The supplementary groups the thread has now: n -1 is hvrun's own. A
 * setgroups is the dearest call of the switch (a new credential each
 * time), so a guest's list stays after its call: hvrun's own access comes
 * back with its fsuid (root's file capabilities decide it, not groups),
 * and the list is set again only when another one is wanted (a guest with
 * other groups, or one with hvrun's).
 */
static gid_t cur_groups[MAX_HOST_GROUPS];
static int nr_cur_groups = -1;

static void put_groups(int n, const gid_t *g)
{
    if (n == nr_cur_groups &&
        (n <= 0 || memcmp(g, cur_groups, (size_t)n * sizeof(*g)) == 0))
        return;
    if (syscall(SYS_setgroups, (size_t)(n < 0 ? host.nr_groups : n),
                n < 0 ? host.groups : g) < 0)
        return;
    nr_cur_groups = n;
    if (n > 0)
        memcpy(cur_groups, g, (size_t)n * sizeof(*g));
}

/*
 * The ids a guest's call took stay on the thread after it (kept), so that
 * the next call of a guest with the same ids takes none: under --uid, the
 * switch there and back was 6 host calls a guest call (a fuzzer's run as
 * nobody spent a sixth of hvrun's time in them). hvrun's own ids come back
 * where its own work may need them: proxy_fscred_own, at an event that is
 * not a syscall, at suspend (hvrun's files inside a handler), and at the
 * run's end. While a guest's ids are kept the process stays dumpable, and
 * its parent-death signal stays set (after_fsuid_change).
 */
static bool kept;
static uid_t kept_fsuid;
static gid_t kept_fsgid;

void proxy_fscred_own(void)
{
    applied = NULL;
    if (!kept)
        return;
    (void)setfsuid(host.uid); /* hvrun's file capabilities back */
    (void)setfsgid(host.gid);
    after_fsuid_change(); /* the guest's groups stay (put_groups) */
    kept = false;
}

void proxy_fscred_enter(const struct proxy_process *p)
{
    if (!host.known)
        learn_host();
    if (same_as_host(p)) {
        proxy_fscred_own();
        if (nr_cur_groups >= 0) /* a guest's list was left: hvrun's now */
            put_groups(-1, NULL);
        return;
    }
    if (!may_switch())
        return;
    /* The groups and the gid first, the uid last: setfsuid is what drops
     * the file capabilities. */
    if (p->cred.nr_groups >= 0) {
        gid_t g[MAX_HOST_GROUPS];
        int n = p->cred.nr_groups < MAX_HOST_GROUPS ? p->cred.nr_groups
                                               : MAX_HOST_GROUPS;
        for (int i = 0; i < n; i++)
            g[i] = (gid_t)p->cred.groups[i];
        put_groups(n, g);
    } else {
        put_groups(-1, NULL); /* hvrun's own list is the guest's */
    }
    if (!kept || kept_fsuid != p->cred.fsuid || kept_fsgid != p->cred.fsgid) {
        (void)setfsgid(p->cred.fsgid);
        (void)setfsuid(p->cred.fsuid);
        after_fsuid_change();
        kept = true;
        kept_fsuid = p->cred.fsuid;
        kept_fsgid = p->cred.fsgid;
    }
    applied = p;
}

void proxy_fscred_leave(void)
{
    applied = NULL; /* the ids are kept */
}

const struct proxy_process *proxy_fscred_suspend(void)
{
    const struct proxy_process *was = applied;
    proxy_fscred_own();
    return was;
}

void proxy_fscred_resume(const struct proxy_process *was)
{
    if (was)
        proxy_fscred_enter(was);
    else
        proxy_fscred_own();
}

/* access(2) and faccessat without AT_EACCESS check with the real ids:
 * the thread takes them for that one call (true: the caller then asks
 * with AT_EACCESS and ends it with proxy_fscred_real_end). */
bool proxy_fscred_real_begin(const struct proxy_process *p)
{
    if (!host.known)
        learn_host();
    /* Without AT_EACCESS the host checks hvrun's real ids, root's. */
    if ((!applied && p->cred.ruid == host.uid && p->cred.rgid == host.gid) ||
        !may_switch())
        return false;
    (void)setfsgid(p->cred.rgid);
    (void)setfsuid(p->cred.ruid);
    return true;
}

void proxy_fscred_real_end(void)
{
    (void)setfsuid(applied ? applied->cred.fsuid : host.uid);
    (void)setfsgid(applied ? applied->cred.fsgid : host.gid);
    after_fsuid_change();
    if (!applied)
        kept = false;
}
