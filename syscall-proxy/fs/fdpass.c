/*
 * fdpass.c - a descriptor a guest passes in SCM_RIGHTS keeps what hvrun
 * notes of its open file description.
 *
 * Some guest fds are more than their host fd, and the guest fd slot says
 * what: an O_PATH fd of a guest's /proc/N/exe link holds hvrun's own exe
 * link on the host (exe_link_pid says whose link it stands for), a
 * /proc/N/mem or a settings file (comm, oom_score_adj, ...) holds a memfd
 * with a context of procfile.c (vfd) naming N, /proc/N and its listings
 * hold hvrun's own directories (procdir_pid, listing_pid), /proc/N/maps
 * answers PROCMAP_QUERY for N (maps_pid). Dups and fork keep those notes;
 * a descriptor passed in SCM_RIGHTS arrives as a fresh host fd of the same
 * description, without them: the receiver read hvrun's own program from
 * an exe link (a host path), nothing from a mem fd, wrote a comm fd's
 * memfd instead of N's name, where Linux's description is the file it
 * opened. So each description a guest sends with such notes is noted here
 * (a host fd of it and a copy of the notes) and a received host fd is
 * matched against them by description (kcmp KCMP_FILE of hvrun with
 * itself, which cli/confine_rules.c allows). The notes are kept for the
 * run, the last FD_NOTES of them: a description sent after FD_NOTES others
 * were and received only then (never seen) arrives without its note.
 * Other contexts (timerfd, signalfd, perf, pidfd, ...) are not carried.
 */
#include "proxy.h"
#include "fdtable.h"
#include "fs.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FD_NOTES 16

static struct fd_note {
    bool used;
    int host_fd;        /* hvrun's own fd of the description */
    int in_flight;      /* sendings not yet received */
    struct proxy_fd fd; /* the notes: exe_link_pid, vfd, timerfd (each a
                         * reference) ... */
} notes[FD_NOTES];
static int next_note; /* the slot the next note takes (the oldest) */
static bool any_noted;

static bool same_description(int a, int b)
{
    pid_t self = getpid();
    return syscall(SYS_kcmp, self, self, KCMP_FILE, a, b) == 0;
}

static struct fd_note *note_of(int host_fd)
{
    for (int i = 0; i < FD_NOTES; i++) {
        if (notes[i].used && same_description(notes[i].host_fd, host_fd))
            return &notes[i];
    }
    return NULL;
}

static bool has_notes(const struct proxy_fd *f)
{
    return f->exe_link_pid || f->vfd || f->procdir_pid || f->listing_pid ||
           f->maps_pid || f->timerfd || f->signalfd || f->perf || f->mqd ||
           f->pidfd_pid || f->owner || f->secretmem || f->created ||
           f->eventfd || f->lockdesc || f->pyc_fix || f->inotify;
}

/* The references a note holds (as slot_release drops a slot's). */
static void note_drop(struct fd_note *n)
{
    if (!n->used)
        return;
    close(n->host_fd);
    proxy_fd_context_release(&n->fd);
    *n = (struct fd_note){.used = false, .host_fd = -1};
}

/* The notes of from copied into to (to's own references taken), as a
 * dup shares them. */
static void copy_notes(struct proxy_fd *to, struct proxy_fd *from)
{
    proxy_fd_share_context(to, from);
}

void proxy_fd_notes_sending(struct proxy_process *p, int guest_fd)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    if (!f || !has_notes(f))
        return;
    struct fd_note *n = note_of(f->host_fd);
    if (n) {
        n->in_flight++;
        return;
    }
    int kept = fcntl(f->host_fd, F_DUPFD_CLOEXEC, 0);
    if (kept < 0)
        return; /* the receiver gets the bare description: as before */
    n = &notes[next_note];
    next_note = (next_note + 1) % FD_NOTES;
    note_drop(n);
    *n = (struct fd_note){.used = true, .host_fd = kept, .in_flight = 1};
    copy_notes(&n->fd, f);
    any_noted = true;
}

void proxy_fd_notes_received(struct proxy_process *p, int guest_fd)
{
    if (!any_noted)
        return; /* most runs */
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    struct fd_note *n = f ? note_of(f->host_fd) : NULL;
    if (!n)
        return;
    copy_notes(f, &n->fd);
    if (--n->in_flight <= 0)
        note_drop(n);
}
