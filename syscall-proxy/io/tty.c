/*
 * tty.c - controlling terminals over the run's virtual sessions.
 *
 * Sessions and process groups are virtual (sys.c: setsid, setpgid), so
 * the terminal side of them is too: hvrun opens every host fd O_NOCTTY
 * and never passes TIOCSCTTY, TIOCNOTTY or TIOCSPGRP's group to the host.
 * Instead the world keeps, for each terminal that is some session's
 * controlling tty, that session and its foreground group (run pids), and
 * each process its controlling tty (proxy_process.ctty, its st_rdev; 0:
 * none), inherited by fork and kept by execve, as Linux's signal->tty.
 *
 * A terminal is named by its device number, as the host's TIOCGDEV gives
 * it: a pty slave's 136:N for the slave and for its master too (Linux's
 * "real tty" of a master fd, which TIOCSCTTY, TIOCGPGRP and TIOCGSID act
 * on). One devpts instance (the host's /dev/pts) is assumed.
 *
 * The run's first process starts, as a shell's child, in the session of
 * the virtual shell (PROXY_OUTSIDE_PGID); when hvrun itself has a
 * controlling terminal, that terminal is the virtual shell's session's,
 * and the first process's ("outside" below). Its foreground group is the
 * virtual shell's group while hvrun is in the host's foreground; when
 * hvrun is not, TIOCGPGRP shows the host's foreground group as it is (as
 * before this model: the guest learns it is not in the foreground), and
 * TIOCSPGRP also makes hvrun's group the host's foreground one.
 *
 * Modelled as Linux: TIOCSCTTY (tiocsctty's EPERM cases, arg 1 stealing
 * with CAP_SYS_ADMIN), the ctty gained at open() of a terminal without
 * O_NOCTTY by a session leader without one (never for a pty master),
 * TIOCNOTTY, TIOCGSID, TIOCGPGRP/TIOCSPGRP (ENOTTY when not the caller's
 * ctty, ESRCH, EPERM for a group of another session), open("/dev/tty")
 * (the caller's ctty reopened; ENXIO without one, EIO for none to reopen),
 * setsid dropping the ctty, and a session leader's exit or TIOCNOTTY:
 * SIGHUP (and for TIOCNOTTY SIGCONT) to the foreground group, the session
 * losing the terminal.
 *
 * Job control as Linux's: a process of a background group that reads its
 * ctty gets SIGTTIN for its group (EIO with SIGTTIN ignored or the group
 * orphaned), one that changes it (tcsetpgrp, tcsetattr, tcflush, and
 * writes under TOSTOP) SIGTTOU unless ignored, and the call runs again
 * when the group is continued.
 *
 * The line discipline's signals: the host's has no session to send them
 * to, so a write to a pty master of the run that holds the slave's VINTR,
 * VQUIT or VSUSP character under ISIG sends SIGINT, SIGQUIT or SIGTSTP to
 * the slave's foreground group here, at the write (Linux: when the input
 * is processed, soon after); the host's discipline still flushes and
 * echoes. A character quoted by VLNEXT is taken as a signal all the same.
 *
 * Not modelled (docs/DETERMINISM.md): the hangup when a pty's master is
 * closed (the host gives the slave's readers EIO, but no SIGHUP is sent
 * and the session keeps the terminal).
 */
#include "proxy.h"
#include "kernel.h"
#include "io.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

/* Linux's device numbers: /dev/tty, /dev/ptmx, the first pty slaves' major. */
#define TTY_AUX_MAJOR 5
#define DEV_TTY_MINOR 0
#define DEV_PTMX_MINOR 2
#define PTY_SLAVE_MAJOR 136

struct proxy_tty {
    dev_t rdev;
    int sid, pgrp;            /* run pids; pgrp 0: no foreground group */
    bool outside;             /* hvrun's own controlling terminal */
    char path[PROXY_PATH_MAX]; /* the host's name for it (/dev/tty reopens) */
};

/* ---- the world's table --------------------------------------------------- */

static struct proxy_tty *tty_find(struct proxy_world *w, dev_t rdev)
{
    for (int i = 0; w && i < w->nr_ttys; i++)
        if (w->ttys[i].rdev == rdev)
            return &w->ttys[i];
    return NULL;
}

static struct proxy_tty *tty_add(struct proxy_world *w, dev_t rdev)
{
    struct proxy_tty *t = tty_find(w, rdev);
    if (t)
        return t;
    struct proxy_tty *n = realloc(w->ttys, (size_t)(w->nr_ttys + 1) * sizeof(*n));
    if (!n)
        return NULL;
    w->ttys = n;
    t = &w->ttys[w->nr_ttys++];
    memset(t, 0, sizeof(*t));
    t->rdev = rdev;
    return t;
}

/* A terminal no session holds is not listed (Linux: session NULL). */
static void tty_remove(struct proxy_world *w, struct proxy_tty *t)
{
    *t = w->ttys[--w->nr_ttys];
}

/* Every process of session sid loses its controlling terminal
 * (session_clear_tty). */
static void session_clear_tty(struct proxy_world *w, int sid)
{
    for (int i = 0; i < w->nr_procs; i++)
        if (w->procs[i]->sid == sid)
            w->procs[i]->ctty = 0;
}

/* A signal the kernel sends a process group (kill_pgrp, SEND_SIG_PRIV). */
static void kill_pgrp(struct proxy_world *w, int pgrp, int sig)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = sig;
    info.si_code = SI_KERNEL;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (!q->zombie && q->pgid == pgrp)
            proxy_signal_raise(q, sig, &info);
    }
}

/* The session leader p gives up its terminal (disassociate_ctty): the
 * foreground group gets SIGHUP (and SIGCONT unless p is exiting), the
 * terminal is no session's and no process of the session has it. */
static void disassociate_ctty(struct proxy_process *p, bool on_exit)
{
    struct proxy_world *w = p->world;
    struct proxy_tty *t = tty_find(w, p->ctty);
    if (t) {
        if (t->pgrp) {
            kill_pgrp(w, t->pgrp, SIGHUP);
            if (!on_exit)
                kill_pgrp(w, t->pgrp, SIGCONT);
        }
        tty_remove(w, t);
    }
    session_clear_tty(w, p->sid);
}

static void tty_name_of(int host_fd, char *out, size_t cap)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
}

/* p becomes the controlling process of t, with its group in the
 * foreground (__proc_set_tty). */
static void proc_set_tty(struct proxy_process *p, struct proxy_tty *t)
{
    t->sid = p->sid;
    t->pgrp = p->pgid;
    p->ctty = t->rdev;
}

/* ---- what a guest fd is -------------------------------------------------- */

struct tty_of_fd {
    dev_t rdev;  /* the terminal (a master's: its slave) */
    bool master; /* a pty master: TIOCNOTTY's tty is never a ctty */
};

static bool is_pty_master(const struct stat *st)
{
    return major(st->st_rdev) == TTY_AUX_MAJOR &&
           minor(st->st_rdev) == DEV_PTMX_MINOR;
}

/* The terminal's own device number (TIOCGDEV: a master's slave; the
 * terminal behind an fd of /dev/tty, whose inode is 5:0), decoded from
 * new_encode_dev's form. */
static int real_tty_rdev(int host_fd, dev_t *out)
{
    unsigned int enc;
    if (ioctl(host_fd, TIOCGDEV, &enc) < 0)
        return -ENOTTY;
    *out = makedev((enc & 0xfff00) >> 8, (enc & 0xff) | ((enc >> 12) & 0xfff00));
    return 0;
}

/* -ENOTTY for anything but a terminal, as tty_ioctl's absence says. */
static int tty_of_host_fd(int host_fd, struct tty_of_fd *out)
{
    struct stat st;
    if (fstat(host_fd, &st) < 0 || !S_ISCHR(st.st_mode) || !isatty(host_fd))
        return -ENOTTY;
    out->master = is_pty_master(&st);
    return real_tty_rdev(host_fd, &out->rdev);
}

void proxy_tty_world_init(struct proxy_world *w, struct proxy_process *first)
{
    /* hvrun's own controlling terminal, if it has one: the probe opens
     * it O_NOCTTY and closes it at once (ENXIO: none). */
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    dev_t rdev;
    struct proxy_tty *t;
    if (real_tty_rdev(fd, &rdev) == 0 && (t = tty_add(w, rdev)) != NULL) {
        t->sid = t->pgrp = PROXY_OUTSIDE_PGID;
        t->outside = true;
        snprintf(t->path, sizeof(t->path), "/dev/tty");
        if (first->sid == PROXY_OUTSIDE_PGID)
            first->ctty = t->rdev;
    }
    close(fd);
}

void proxy_tty_world_free(struct proxy_world *w)
{
    free(w->ttys);
    w->ttys = NULL;
    w->nr_ttys = 0;
}

/* ---- the ioctls ---------------------------------------------------------- */

/* Whether the ioctl's own tty (not a master's slave) is not p's ctty: the
 * ENOTTY tiocgpgrp and tiocgsid give ("tty == real_tty" in Linux). */
static bool not_own_ctty(const struct proxy_process *p,
                         const struct tty_of_fd *tf)
{
    return !tf->master && p->ctty != tf->rdev;
}

static long put_pid_out(struct proxy_process *p, gva_t arg, int run_pid)
{
    pid_t v = run_pid ? proxy_ns_pid_nr(p, run_pid) : 0;
    return proxy_copy_out(p, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

static long tiocgpgrp(struct proxy_process *p, int host_fd,
                      const struct tty_of_fd *tf, gva_t arg)
{
    if (not_own_ctty(p, tf))
        return -ENOTTY;
    struct proxy_tty *t = tty_find(p->world, tf->rdev);
    if (t && t->outside) {
        /* hvrun's group stands for the foreground group it holds; when
         * hvrun is not the host's foreground, the host's group as it is
         * (compared, never shown, hvrun's own group id). */
        pid_t host_pgrp;
        if (ioctl(host_fd, TIOCGPGRP, &host_pgrp) < 0)
            return -errno;
        if (host_pgrp != getpgrp())
            return proxy_copy_out(p, arg, &host_pgrp, sizeof(host_pgrp)) < 0
                       ? -EFAULT
                       : 0;
    }
    return put_pid_out(p, arg, t ? t->pgrp : 0);
}

static long tiocgsid(struct proxy_process *p, const struct tty_of_fd *tf,
                     gva_t arg)
{
    if (not_own_ctty(p, tf))
        return -ENOTTY;
    struct proxy_tty *t = tty_find(p->world, tf->rdev);
    if (!t || !t->sid)
        return -ENOTTY;
    return put_pid_out(p, arg, t->sid);
}

/* Whether process group pgrp (a run pid) has a live member, and in which
 * session (0: none). */
static int session_of_pgrp(struct proxy_world *w, int pgrp)
{
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (!q->zombie && q->pgid == pgrp)
            return q->sid;
    }
    /* the virtual shell's group, whose shell is outside the run */
    return pgrp == PROXY_OUTSIDE_PGID ? PROXY_OUTSIDE_PGID : 0;
}

/* ---- job control --------------------------------------------------------- */

/* is_ignored: the calling thread blocks sig or its action is SIG_IGN. */
static bool sig_ignored(const struct proxy_process *p, int sig)
{
    return (p->sig.sigmask & (1ULL << (sig - 1))) ||
           p->sig.sigactions[sig].handler == (uint64_t)(uintptr_t)SIG_IGN;
}

/*
 * __tty_check_change: p, whose ctty t is, is not in its foreground group.
 * Its group gets sig and the call runs again once it may go on
 * (ERESTARTSYS: PROXY_RET_BLOCK with the thread runnable re-runs it, or
 * gives EINTR after a handler without SA_RESTART); with sig ignored a
 * change goes ahead and a read is EIO; an orphaned group gets EIO.
 */
static long check_change(struct proxy_process *p, const struct proxy_tty *t,
                         int sig)
{
    if (!t || p->ctty != t->rdev || !t->pgrp || t->pgrp == p->pgid)
        return 0;
    if (sig_ignored(p, sig))
        return sig == SIGTTIN ? -EIO : 0;
    if (proxy_pgrp_orphaned(p->world, p->pgid))
        return -EIO;
    kill_pgrp(p->world, p->pgid, sig);
    return PROXY_RET_BLOCK;
}

long proxy_tty_job_control(struct proxy_process *p, int host_fd,
                           enum proxy_tty_access how)
{
    /* The common case costs a look-up: no ctty, or in its foreground. */
    struct proxy_tty *t = p->ctty ? tty_find(p->world, p->ctty) : NULL;
    if (!t || !t->pgrp || t->pgrp == p->pgid)
        return 0;
    struct tty_of_fd tf;
    if (tty_of_host_fd(host_fd, &tf) < 0 || tf.rdev != t->rdev)
        return 0;
    /* A master's reads and writes are its own tty's, never a ctty. */
    if (tf.master && how != PROXY_TTY_CHANGE)
        return 0;
    if (how == PROXY_TTY_READ)
        return check_change(p, t, SIGTTIN);
    if (how == PROXY_TTY_WRITE) { /* n_tty_write: only under TOSTOP */
        struct termios tio;
        if (tcgetattr(host_fd, &tio) < 0 || !(tio.c_lflag & TOSTOP))
            return 0;
    }
    return check_change(p, t, SIGTTOU);
}

static long tiocspgrp(struct proxy_process *p, int host_fd,
                      const struct tty_of_fd *tf, gva_t arg)
{
    struct proxy_tty *t = tty_find(p->world, tf->rdev);
    long r = check_change(p, t, SIGTTOU);
    if (r == -EIO)
        return -ENOTTY; /* tiocspgrp's answer for an orphaned group */
    if (r)
        return r;
    pid_t nr;
    if (proxy_copy_in(p, &nr, arg, sizeof(nr)) < 0)
        return -EFAULT;
    if (nr < 0)
        return -EINVAL;
    if (!t || p->ctty != tf->rdev || t->sid != p->sid)
        return -ENOTTY;
    int pgrp = nr == PROXY_OUTSIDE_PGID ? nr : proxy_ns_global_nr(p, nr);
    int sid = pgrp > 0 ? session_of_pgrp(p->world, pgrp) : 0;
    if (!sid)
        return -ESRCH;
    if (sid != p->sid)
        return -EPERM;
    if (t->outside) {
        /* hvrun's group on the host stands for whichever guest group is
         * in the foreground (as before this model). */
        pid_t host_pgrp = getpgrp();
        if (ioctl(host_fd, TIOCSPGRP, &host_pgrp) < 0)
            return -errno;
    }
    t->pgrp = pgrp;
    return 0;
}

/* FMODE_READ of an open file with these flags. */
static bool readable(int flags)
{
    int acc = flags & O_ACCMODE;
    return acc == O_RDONLY || acc == O_RDWR;
}

/* tiocsctty: p must lead its session and have no ctty; a terminal that is
 * another session's is taken only with arg 1 and CAP_SYS_ADMIN; one open
 * without read access only with CAP_SYS_ADMIN. */
static long tiocsctty(struct proxy_process *p, int host_fd,
                      const struct tty_of_fd *tf, uint64_t arg)
{
    struct proxy_world *w = p->world;
    if (!w)
        return -EPERM;
    struct proxy_tty *t = tty_find(w, tf->rdev);
    bool leader = p->sid == p->pid;
    if (leader && t && t->sid == p->sid)
        return 0;
    if (!leader || p->ctty)
        return -EPERM;
    bool admin = proxy_ns_init_capable(p);
    if (t && t->sid) {
        if ((int)arg != 1 || !admin)
            return -EPERM;
    }
    int fl = fcntl(host_fd, F_GETFL);
    if (fl < 0 || (!readable(fl) && !admin))
        return -EPERM;
    if (t && t->sid) /* stolen: the old session loses it */
        session_clear_tty(w, t->sid);
    if (!t && !(t = tty_add(w, tf->rdev)))
        return -ENOMEM;
    if (!t->outside) {
        if (tf->master)
            snprintf(t->path, sizeof(t->path), "/dev/pts/%u",
                     (major(tf->rdev) - PTY_SLAVE_MAJOR) * 256 +
                         minor(tf->rdev));
        else
            tty_name_of(host_fd, t->path, sizeof(t->path));
    }
    proc_set_tty(p, t);
    return 0;
}

/* TIOCNOTTY: only on the caller's ctty itself; a session leader hangs
 * the session up (no_tty). */
static long tiocnotty(struct proxy_process *p, const struct tty_of_fd *tf)
{
    if (tf->master || p->ctty != tf->rdev)
        return -ENOTTY;
    if (p->world && p->sid == p->pid)
        disassociate_ctty(p, false);
    p->ctty = 0;
    return 0;
}

bool proxy_tty_ioctl_is(unsigned int req)
{
    return req == TIOCSCTTY || req == TIOCNOTTY || req == TIOCGSID ||
           req == TIOCGPGRP || req == TIOCSPGRP;
}

long proxy_tty_ioctl(struct proxy_process *p, int host_fd, unsigned int req,
                     uint64_t arg)
{
    struct tty_of_fd tf;
    int r = tty_of_host_fd(host_fd, &tf);
    if (r < 0)
        return r;
    switch (req) {
    case TIOCSCTTY:
        return tiocsctty(p, host_fd, &tf, arg);
    case TIOCNOTTY:
        return tiocnotty(p, &tf);
    case TIOCGSID:
        return tiocgsid(p, &tf, arg);
    case TIOCGPGRP:
        return tiocgpgrp(p, host_fd, &tf, arg);
    case TIOCSPGRP:
        return tiocspgrp(p, host_fd, &tf, arg);
    }
    return -ENOTTY;
}

/* ---- the line discipline's signals ------------------------------------- */

/* Whether some terminal of the run's own (a pty) has a foreground group:
 * until then a write costs no look-up. */
static bool pty_sessions(const struct proxy_world *w)
{
    for (int i = 0; w && i < w->nr_ttys; i++)
        if (!w->ttys[i].outside && w->ttys[i].pgrp)
            return true;
    return false;
}

static int isig_signal(const struct termios *tio, unsigned char c)
{
    if (c == _POSIX_VDISABLE)
        return 0;
    if (c == tio->c_cc[VINTR])
        return SIGINT;
    if (c == tio->c_cc[VQUIT])
        return SIGQUIT;
    if (c == tio->c_cc[VSUSP])
        return SIGTSTP;
    return 0;
}

/* ---- pty data in flight ---------------------------------------------------- */

/*
 * What one end of a pty is written reaches the other end's line
 * discipline in a host kernel work item (tty_flip_buffer_push), and an
 * echo comes back the same way: a look at a pty just after a write can
 * find nothing there yet, or only the first of two writes, and when the
 * rest is there is the host's timing (a chaos schedule that read at once
 * saw a read block in one run and return in the other). So a look at a
 * pty end after the pty was written waits for the host's work first.
 *
 * How long is counted, not timed where it can be: hvrun sees every byte a
 * guest writes into either end and reads from it, so for each direction
 * it keeps how many bytes the other end's line discipline will hold at
 * least (a write's bytes after the writer's output processing, OPOST and
 * ONLCR, and the slave's echo of what the master wrote; under ICANON only
 * finished lines, which is what FIONREAD and a read see there), less what
 * guests read. A look waits until that many are there (PTY_COUNT_MS of
 * host time at most: past it the work is not coming). Only what a write
 * makes from bytes whose handling is this simple is counted (printable
 * characters and newlines, no character the termios makes special); a
 * write with anything else (a control character, tab expansion, ONOCR, a
 * line past the canonical buffer) marks its direction "uncounted", and a
 * look there also waits until the bytes queued stop growing (stable for
 * 1 ms, within PTY_SETTLE_MS): a heuristic that a loaded host can beat.
 */
#define PTY_COUNT_MS 2000
#define PTY_SETTLE_MS 20
#define PTY_STABLE_STEPS 10
#define SETTLE_FDS 1024
#define NR_PTY_SEQ 64
/* n_tty's buffer holds N_TTY_BUF_SIZE - 1 bytes; the rest waits upstream */
#define PTY_LDISC_HOLDS 4095
#define PTY_CANON_LINE_MAX 4000

/* One direction of a pty: into the master (what the slave side writes,
 * and its echoes) or into the slave (what the master writes). */
struct pty_queue {
    uint64_t arrives;  /* bytes known to reach the reader's discipline */
    uint64_t taken;    /* bytes guests read from that end */
    uint64_t line;     /* ICANON: bytes of the unfinished line */
    bool uncounted;    /* some write here could not be counted */
};

/* Per pty (its slave's device number): writes made to either end. */
static struct pty_flow {
    dev_t rdev;
    uint64_t writes;
    struct pty_queue to_master, to_slave;
} pty_seq[NR_PTY_SEQ];
static int nr_pty_seq;
/* Per host fd: its pty's write count at its last settling look. */
static uint64_t settled[SETTLE_FDS];

static struct pty_flow *pty_flow_of(dev_t rdev, bool add)
{
    for (int i = 0; i < nr_pty_seq; i++)
        if (pty_seq[i].rdev == rdev)
            return &pty_seq[i];
    if (!add || nr_pty_seq == NR_PTY_SEQ)
        return NULL;
    pty_seq[nr_pty_seq] = (struct pty_flow){.rdev = rdev};
    return &pty_seq[nr_pty_seq++];
}

static bool is_pty(const struct tty_of_fd *tf)
{
    return major(tf->rdev) >= PTY_SLAVE_MAJOR &&
           major(tf->rdev) < PTY_SLAVE_MAJOR + 8;
}

/* The queue a read of this end takes from. */
static struct pty_queue *queue_read_by(struct pty_flow *f, bool master)
{
    return master ? &f->to_master : &f->to_slave;
}

/* Whether host_fd is a pty end whose pty was written since its last
 * settling look (which this is, then). */
static struct pty_flow *settle_due(int host_fd, struct tty_of_fd *tf)
{
    if (!nr_pty_seq || host_fd < 0 || tty_of_host_fd(host_fd, tf) < 0)
        return NULL;
    struct pty_flow *f = pty_flow_of(tf->rdev, false);
    if (!f || (host_fd < SETTLE_FDS && settled[host_fd] == f->writes))
        return NULL;
    if (host_fd < SETTLE_FDS)
        settled[host_fd] = f->writes;
    return f;
}

/* Bytes a read of the queue's end finds there at least, once the host's
 * work is done. */
static int queue_due(const struct pty_queue *q)
{
    uint64_t due = q->arrives > q->taken ? q->arrives - q->taken : 0;
    return due > PTY_LDISC_HOLDS ? PTY_LDISC_HOLDS : (int)due;
}

static int queued_now(int host_fd)
{
    int now = 0;
    return ioctl(host_fd, FIONREAD, &now) < 0 ? -1 : now;
}

/* Waits until the bytes queued for reading stop growing (one push may
 * come in parts, and an echo after the data): stable for
 * PTY_STABLE_STEPS looks 100 us apart, within PTY_SETTLE_MS. */
static void settle_stable(int host_fd)
{
    int before = -1, same = 0;
    struct timespec step = {0, 100000};
    for (int i = 0; i < PTY_SETTLE_MS * 10 && same < PTY_STABLE_STEPS; i++) {
        int now = queued_now(host_fd);
        if (now < 0)
            return;
        same = now == before ? same + 1 : 0;
        before = now;
        nanosleep(&step, NULL);
    }
}

/* Waits until `due` bytes are queued for reading on host_fd (a pty end
 * whose line discipline is the reader's). */
static void settle_counted(int host_fd, int due)
{
    struct timespec step = {0, 50000};
    for (int i = 0; i < PTY_COUNT_MS * 20; i++) {
        int now = queued_now(host_fd);
        if (now < 0 || now >= due)
            return;
        nanosleep(&step, NULL);
    }
}

/* Waits for the host's tty work on host_fd's pty to be done (above). */
static void settle(int host_fd, const struct tty_of_fd *tf,
                   const struct pty_flow *f, short events)
{
    const struct pty_queue *q = tf->master ? &f->to_master : &f->to_slave;
    if ((events & POLLIN) && !q->uncounted) {
        settle_counted(host_fd, queue_due(q));
        return;
    }
    struct pollfd pf = {host_fd, events, 0};
    if (poll(&pf, 1, 0) <= 0 && poll(&pf, 1, PTY_SETTLE_MS) <= 0)
        return;
    if (!(events & POLLIN))
        return;
    settle_counted(host_fd, queue_due(q));
    settle_stable(host_fd);
}

void proxy_tty_settle(int host_fd, short events)
{
    struct tty_of_fd tf;
    const struct pty_flow *f = settle_due(host_fd, &tf);
    if (f)
        settle(host_fd, &tf, f, events);
}

void proxy_tty_settle_set(const struct pollfd *fds, size_t n)
{
    struct tty_of_fd tf;
    for (size_t i = 0; i < n; i++) {
        const struct pty_flow *f = settle_due(fds[i].fd, &tf);
        if (f)
            settle(fds[i].fd, &tf, f, fds[i].events & (POLLIN | POLLOUT));
    }
}

/* The watched fds are read from the instance's fdinfo ("tfd: N events:
 * M"): hvrun keeps no copy of an epoll set. Only once a pty was written. */
void proxy_tty_settle_epoll(int host_epfd)
{
    if (!nr_pty_seq)
        return;
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", host_epfd);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return;
    int fd;
    unsigned events;
    struct tty_of_fd tf;
    const struct pty_flow *f;
    while (fgets(line, sizeof(line), fp))
        if (sscanf(line, "tfd: %d events: %x", &fd, &events) == 2 &&
            (f = settle_due(fd, &tf)) != NULL)
            settle(fd, &tf, f, (short)(events & (POLLIN | POLLOUT)));
    fclose(fp);
}

void proxy_tty_read_done(int host_fd, size_t bytes)
{
    struct tty_of_fd tf;
    if (!nr_pty_seq || tty_of_host_fd(host_fd, &tf) < 0 || !is_pty(&tf))
        return;
    struct pty_flow *f = pty_flow_of(tf.rdev, false);
    if (f)
        queue_read_by(f, tf.master)->taken += bytes;
}

/* What guests have not read of either direction is gone (TCFLSH, a new
 * pty under an old number): nothing is due, and what comes is timed. */
static void pty_flow_flushed(struct pty_flow *f)
{
    struct pty_queue *qs[2] = {&f->to_master, &f->to_slave};
    for (int i = 0; i < 2; i++) {
        qs[i]->taken = qs[i]->arrives;
        qs[i]->line = 0;
        qs[i]->uncounted = true;
    }
}

void proxy_tty_flushed(int host_fd)
{
    struct tty_of_fd tf;
    struct pty_flow *f;
    if (nr_pty_seq && tty_of_host_fd(host_fd, &tf) == 0 &&
        (f = pty_flow_of(tf.rdev, false)) != NULL)
        pty_flow_flushed(f);
}

/* ---- counting what a write makes arrive ---------------------------------- */

/* The bytes of a write as one span (a writev's parts in order). */
struct written {
    const struct iovec *iov;
    int n;
    size_t bytes;
};

static size_t written_count(const struct written *wr,
                            bool (*match)(unsigned char c, const void *arg),
                            const void *arg)
{
    size_t count = 0, left = wr->bytes;
    for (int i = 0; i < wr->n && left > 0; i++) {
        size_t len = wr->iov[i].iov_len < left ? wr->iov[i].iov_len : left;
        const unsigned char *b = wr->iov[i].iov_base;
        for (size_t k = 0; k < len; k++)
            count += match(b[k], arg);
        left -= len;
    }
    return count;
}

static bool is_char(unsigned char c, const void *arg)
{
    return c == *(const unsigned char *)arg;
}

/* A byte whose handling by the receiving discipline n_tty adds, drops or
 * holds: anything but a printable character or a newline, and any the
 * termios makes special (an EOL or VERASE set to a letter). */
static bool is_special_input(unsigned char c, const void *arg)
{
    const struct termios *tio = arg;
    if (c != '\n' && (c < 0x20 || c > 0x7e))
        return true;
    for (int i = 0; i < NCCS; i++)
        if (i != VMIN && i != VTIME && tio->c_cc[i] != _POSIX_VDISABLE &&
            tio->c_cc[i] == c)
            return true;
    return c == '\n' && (tio->c_iflag & INLCR);
}

/* Bytes the slave's output processing makes of `bytes` written (n_tty's
 * do_output_char): ONLCR doubles a newline; tab expansion and ONOCR
 * depend on the column, so such a write is not counted. */
static bool output_count(const struct termios *tio, const struct written *wr,
                         uint64_t *out)
{
    if (!(tio->c_oflag & OPOST)) {
        *out = wr->bytes;
        return true;
    }
    size_t newlines = written_count(wr, is_char, "\n");
    size_t tabs = (tio->c_oflag & TABDLY) == TAB3
                      ? written_count(wr, is_char, "\t")
                      : 0;
    size_t crs = (tio->c_oflag & ONOCR) ? written_count(wr, is_char, "\r") : 0;
    *out = wr->bytes + ((tio->c_oflag & ONLCR) ? newlines : 0) - crs;
    return tabs == 0 && crs == 0;
}
/* Bytes of the span up to and including its last newline (0: none). */
static size_t through_last_newline(const struct written *wr)
{
    size_t at = 0, through = 0, left = wr->bytes;
    for (int i = 0; i < wr->n && left > 0; i++) {
        size_t len = wr->iov[i].iov_len < left ? wr->iov[i].iov_len : left;
        const unsigned char *b = wr->iov[i].iov_base;
        for (size_t k = 0; k < len; k++, at++)
            if (b[k] == '\n')
                through = at + 1;
        left -= len;
    }
    return through;
}

/* A master's write: the slave's discipline takes it as input (under
 * ICANON a line is there once finished) and echoes it to the master,
 * through its own output processing. */
static void count_master_write(struct pty_flow *f, const struct termios *tio,
                               const struct written *wr)
{
    struct pty_queue *in = &f->to_slave, *echo = &f->to_master;
    bool echoes = (tio->c_lflag & ECHO) ||
                  (tio->c_lflag & (ECHONL | ICANON)) == (ECHONL | ICANON);
    if (written_count(wr, is_special_input, tio) > 0) {
        in->uncounted = true;
        in->line = 0;
        echo->uncounted |= echoes;
        return;
    }
    if (tio->c_lflag & ICANON) {
        size_t done = through_last_newline(wr);
        if (done) {
            in->arrives += in->line + done;
            in->line = 0;
        }
        in->line += wr->bytes - done;
        in->uncounted |= in->line > PTY_CANON_LINE_MAX;
    } else {
        in->arrives += wr->bytes;
    }
    size_t newlines = written_count(wr, is_char, "\n");
    bool onlcr = (tio->c_oflag & (OPOST | ONLCR)) == (OPOST | ONLCR);
    if (tio->c_lflag & ECHO)
        echo->arrives += wr->bytes + (onlcr ? newlines : 0);
    else if (echoes) /* ECHONL */
        echo->arrives += newlines * (onlcr ? 2 : 1);
}

static void count_write(struct pty_flow *f, const struct tty_of_fd *tf,
                        const struct termios *tio, const struct written *wr)
{
    if (!tio) {
        f->to_master.uncounted = f->to_slave.uncounted = true;
        return;
    }
    if (tf->master) {
        count_master_write(f, tio, wr);
        return;
    }
    uint64_t out;
    if (!output_count(tio, wr, &out))
        f->to_master.uncounted = true;
    f->to_master.arrives += out;
}

/* A termios change (TCSETS and the rest) of a pty: what was written is
 * taken by the slave's discipline under the termios it was written
 * under, so a slave's own change waits for that first; turning ICANON
 * off makes the unfinished line readable, turning it on makes what is
 * held a line being edited (n_tty_set_termios). */
bool proxy_tty_termios_setting(int host_fd, unsigned int *lflag_before)
{
    struct tty_of_fd tf;
    struct termios tio;
    const struct pty_flow *f;
    if (!nr_pty_seq || tty_of_host_fd(host_fd, &tf) < 0 ||
        !(f = pty_flow_of(tf.rdev, false)) || tcgetattr(host_fd, &tio) < 0)
        return false;
    if (!tf.master && !f->to_slave.uncounted)
        settle_counted(host_fd, queue_due(&f->to_slave));
    *lflag_before = tio.c_lflag;
    return true;
}

void proxy_tty_termios_set(int host_fd, unsigned int lflag_before)
{
    struct tty_of_fd tf;
    struct pty_flow *f;
    struct termios after;
    if (tty_of_host_fd(host_fd, &tf) < 0 ||
        !(f = pty_flow_of(tf.rdev, false)) || tcgetattr(host_fd, &after) < 0)
        return;
    bool was = lflag_before & ICANON, is = after.c_lflag & ICANON;
    if (was && !is) {
        f->to_slave.arrives += f->to_slave.line;
        f->to_slave.line = 0;
    } else if (!was && is) {
        f->to_slave.uncounted = true;
    }
}

void proxy_tty_wrote(struct proxy_process *p, int host_fd,
                     const struct iovec *iov, int n, size_t bytes)
{
    struct tty_of_fd tf;
    if (tty_of_host_fd(host_fd, &tf) < 0)
        return;
    struct pty_flow *f = is_pty(&tf) ? pty_flow_of(tf.rdev, true) : NULL;
    struct termios tio; /* a master's TCGETS is its slave's */
    bool have_tio = (f || tf.master) && tcgetattr(host_fd, &tio) == 0;
    if (f) {
        struct written wr = {iov, n, bytes};
        f->writes++;
        count_write(f, &tf, have_tio ? &tio : NULL, &wr);
    }
    if (!tf.master || !have_tio)
        return;
    /* The slave's echo of what was written comes back to the master from
     * the host's line discipline work: it is there before the writer's
     * next step, as its data is at the reader's (settle). */
    if (f && (tio.c_lflag & ECHO)) {
        settle(host_fd, &tf, f, POLLIN);
        if (host_fd < SETTLE_FDS)
            settled[host_fd] = f->writes;
    }
    struct proxy_tty *t = pty_sessions(p->world) ? tty_find(p->world, tf.rdev)
                                                 : NULL;
    if (!t || !t->pgrp || !(tio.c_lflag & ISIG))
        return;
    for (int i = 0; i < n && bytes > 0; i++) {
        size_t len = iov[i].iov_len < bytes ? iov[i].iov_len : bytes;
        const unsigned char *b = iov[i].iov_base;
        for (size_t k = 0; k < len; k++) {
            int sig = isig_signal(&tio, b[k]);
            if (sig)
                kill_pgrp(p->world, t->pgrp, sig);
        }
        bytes -= len;
    }
}

/* ---- open, setsid, exit -------------------------------------------------- */

/* A master opened is a new pty, though its number may be an old one's:
 * nothing of the old one's is in flight in it. */
static void pty_opened(int host_fd)
{
    struct tty_of_fd tf;
    struct pty_flow *f;
    if (nr_pty_seq && tty_of_host_fd(host_fd, &tf) == 0 && tf.master &&
        (f = pty_flow_of(tf.rdev, false)) != NULL)
        f->to_master = f->to_slave = (struct pty_queue){0};
}

void proxy_tty_opened(struct proxy_process *p, int host_fd, int flags)
{
    pty_opened(host_fd);
    /* tty_open_proc_set_tty: a leader without a ctty opening a terminal
     * no session has, without O_NOCTTY and for reading; never a pty
     * master. */
    if ((flags & (O_NOCTTY | O_PATH)) || !readable(flags) ||
        p->sid != p->pid || p->ctty || !p->world)
        return;
    struct tty_of_fd tf;
    if (tty_of_host_fd(host_fd, &tf) < 0 || tf.master ||
        tty_find(p->world, tf.rdev))
        return;
    struct proxy_tty *t = tty_add(p->world, tf.rdev);
    if (!t)
        return;
    tty_name_of(host_fd, t->path, sizeof(t->path));
    proc_set_tty(p, t);
}

bool proxy_tty_open_current(struct proxy_process *p, int dirfd,
                            const char *path, int flags, int *fd_or_err)
{
    struct stat st;
    int at = (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
    if ((flags & O_PATH) || /* an O_PATH fd is of /dev/tty's inode itself */
        fstatat(dirfd, path, &st, at) < 0 || !S_ISCHR(st.st_mode) ||
        st.st_rdev != makedev(TTY_AUX_MAJOR, DEV_TTY_MINOR))
        return false;
    struct proxy_tty *t = p->ctty ? tty_find(p->world, p->ctty) : NULL;
    if (!t) {
        *fd_or_err = -ENXIO;
        return true;
    }
    /* A reopen of the terminal by its name: hvrun's own through the
     * host's /dev/tty; a pty slave through /dev/pts/N (EIO once its
     * master is gone and the name with it). */
    int fd = open(t->path, flags | O_NOCTTY | O_CLOEXEC);
    *fd_or_err = fd >= 0 ? fd : errno == ENOENT ? -EIO : -errno;
    return true;
}

void proxy_tty_setsid(struct proxy_process *p)
{
    p->ctty = 0; /* proc_clear_tty */
}

void proxy_tty_exit(struct proxy_process *p)
{
    if (p->world && p->sid == p->pid && p->ctty)
        disassociate_ctty(p, true);
    p->ctty = 0;
}

unsigned int proxy_tty_nr(const struct proxy_process *p)
{
    /* new_encode_dev, as /proc/PID/stat's tty_nr */
    unsigned int maj = major(p->ctty), min = minor(p->ctty);
    return (min & 0xff) | (maj << 8) | ((min & ~0xffu) << 12);
}

int proxy_tty_fg_pgrp(struct proxy_process *p)
{
    struct proxy_tty *t = p->ctty ? tty_find(p->world, p->ctty) : NULL;
    return t && t->pgrp ? proxy_ns_pid_nr(p, t->pgrp) : -1;
}
