/*
 * exelink.c - an O_PATH descriptor of a guest's /proc/N/exe link passed
 * in SCM_RIGHTS stays N's link.
 *
 * Such a guest fd holds hvrun's own exe link on the host (fs.c opens it;
 * procguard refuses that link to any other route) and proxy_fd's
 * exe_link_pid says whose link it stands for. Dups and fork keep that
 * note; a descriptor passed in SCM_RIGHTS arrives as a fresh host fd of
 * the same description, without it, so the receiver read hvrun's own
 * program (a host path) and named its own /proc entry, where Linux's
 * descriptor keeps its path, /proc/N/exe. So the sender's descriptions
 * are noted here (a host fd of each, with N) and a received host fd is
 * matched against them by description (kcmp KCMP_FILE of hvrun with
 * itself, which cli/confine_rules.c allows). The notes are kept for the
 * run, the last EXE_LINK_NOTES of them: a description passed around
 * more links than that at once (never seen) loses its note, the oldest
 * first.
 */
#include "proxy.h"
#include "fdtable.h"
#include "fs.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdbool.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/magic.h>

#define EXE_LINK_NOTES 16

static struct exe_link_note {
    bool used;
    int host_fd; /* hvrun's own fd of the description */
    int pid;
} notes[EXE_LINK_NOTES];
static int next_note; /* the slot the next note takes (the oldest) */
static bool any_noted;

static bool same_description(int a, int b)
{
    pid_t self = getpid();
    return syscall(SYS_kcmp, self, self, KCMP_FILE, a, b) == 0;
}

static struct exe_link_note *note_of(int host_fd)
{
    for (int i = 0; i < EXE_LINK_NOTES; i++) {
        if (notes[i].used && same_description(notes[i].host_fd, host_fd))
            return &notes[i];
    }
    return NULL;
}

void proxy_exe_link_sending(struct proxy_process *p, int guest_fd)
{
    const struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f || !f->exe_link_pid || note_of(f->host_fd))
        return;
    int kept = fcntl(f->host_fd, F_DUPFD_CLOEXEC, 0);
    if (kept < 0)
        return; /* the receiver reads it untagged: as before */
    struct exe_link_note *n = &notes[next_note];
    next_note = (next_note + 1) % EXE_LINK_NOTES;
    if (n->used)
        close(n->host_fd);
    *n = (struct exe_link_note){.used = true, .host_fd = kept,
                                .pid = f->exe_link_pid};
    any_noted = true;
}

int proxy_exe_link_received(int host_fd)
{
    if (!any_noted)
        return 0; /* most runs */
    struct statfs sfs;
    if (fstatfs(host_fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
        return 0;
    const struct exe_link_note *n = note_of(host_fd);
    return n ? n->pid : 0;
}
