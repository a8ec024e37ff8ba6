/*
 * gdbserver_checkpoint.c - a run instance's side of checkpoints
 * (QHvrunCheckpoint, from gdbserver_reverse.c's front end).
 *
 * At a stop the instance copies itself by fork. The fork is the
 * checkpoint: it never runs the guests; it waits on a channel (a
 * SOCK_SEQPACKET socket whose other end the front end gets with the
 * reply) for restores. A restore forks the checkpoint again, and that
 * fork becomes an instance standing exactly where the checkpoint was
 * taken: it serves the front end's packets on the connection the request
 * brought, as the instance did at that stop.
 *
 * What a fork copies: hvrun's memory (the proxy's, detcore's and the
 * gdbserver's state, the guests' saved threads). What it shares with the
 * original, and how each is made the copy's own:
 *  - guest memory, and the ptrace stubs or the KVM VMs and vCPUs:
 *    vmm_vms_snapshot_* (vmm/);
 *  - open file descriptions, whose offsets the original moves on, and
 *    whose file locks live as long as any holder: each regular file and
 *    directory is opened again at the checkpoint's offset in the
 *    checkpoint itself and in each restored copy (/proc/self/fd/N, the
 *    same flags);
 *  - the guests' anonymous pipes: what each holds is read at the
 *    checkpoint without taking it out (tee into a pipe of hvrun's), and
 *    the restored copy gets a new pipe of the same size holding those
 *    bytes, its ends over the old ends' numbers (with their flags), and
 *    a write end closed when the run held none (its readers see the end
 *    of file after the bytes);
 *  - the guests' unix socket pairs (no name, the peer the guests' too or
 *    gone): each socket's receive queue, its options and shutdowns, made
 *    again as a new pair in the restored copy (gdbserver_ckpt_socket.c);
 *  - the guests' eventfds and epoll instances: made again with their
 *    counts and entries (gdbserver_ckpt_event.c), epoll instances after
 *    every fd they watch stands at its number again; signalfds, timerfds
 *    and message queue descriptors too, whose host fds are eventfds
 *    (their mask, pending signals, timers and queues are hvrun's, copied
 *    with it; hvrun's own reference to a timerfd's or a descriptor's
 *    eventfd made again as the same eventfd);
 *  - the run's stdout and stderr when they are the front end's pipes or
 *    pseudo-terminals: the restore brings new ones (so the front end
 *    reads each instance's output apart), and a new summary pipe and gdb
 *    connection;
 *  - the --verify-style journal of changed files: a checkpoint is only
 *    taken while it is empty, and the restored copy starts a new one
 *    (the front end undid and emptied the directory before);
 *  - System V segments (memfds of hvrun's): copied in the checkpoint and
 *    again in each restore;
 *  - the stub spawner (ptrace): the front end starts one per restore
 *    (hvrun's seccomp filter forbids the exec a spawner needs); kvm
 *    needs none (a restore makes its VMs through /dev/kvm).
 * The original goes on only when its copy has let go of all of these
 * (a word on the channel): until then the run would share them with it.
 * Refused (the reason in the reply): guest fds that are other sockets,
 * named FIFOs, packet-mode pipes, pidfds, message queues with a
 * SIGEV_THREAD notification, perf events and other anonymous inodes, or
 * memfds (their contents would be shared), a file lock a guest holds
 * (a restored copy would not hold it), a run with connections outside
 * it, a run that has changed files, memory shared with a host object
 * (an attached System V segment among them).
 */
#include "gdbserver.h"
#include "gdbserver_ckpt_event.h"
#include "gdbserver_ckpt_socket.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "fdpass.h"
#include "det.h"
#include "fdtable.h"
#include "fs.h"
#include "kernel.h"
#include "proxy.h"

/* One of hvrun's fds when the checkpoint was taken. */
struct saved_fd {
    int fd;
    mode_t type; /* S_IFMT bits */
    dev_t dev;
    ino_t ino;
    int status_flags, fd_flags;
    off_t offset;
    bool memfd;
    int stdio; /* 1 or 2: the run's stdout or stderr description, else 0 */
    /* An anonymous pipe of the guests': its size and, on the first fd of
     * each pipe saved, the bytes it held (malloc'd) */
    bool pipe;
    int pipe_size;
    char *pipe_data;
    size_t pipe_len;
    /* A unix socket of the guests' pairs, and on the first fd of each
     * socket what it is and holds (malloc'd) */
    bool sock;
    struct ckpt_socket *sock_state;
    /* An eventfd or epoll instance of the guests', its open file's id
     * (fdtable.c: dups share one object), and on the first fd of each
     * what it holds (malloc'd) */
    bool event;
    uint64_t file_id;
    struct ckpt_event *event_state;
};

static int instance_sum_fd = -1;

/* This instance's checkpoints: its fork children, each reaped once it has
 * ended (the front end deleted it and closed its channel), so that a
 * long session's deleted checkpoints (automatic ones every so many
 * events) are no zombies for the rest of the run. A checkpoint starts
 * with none: its children are its restores, which reap themselves. */
static pid_t *checkpoint_pids;
static size_t nr_checkpoint_pids, checkpoint_pids_cap;

static void checkpoint_born(pid_t pid)
{
    if (nr_checkpoint_pids == checkpoint_pids_cap) {
        size_t cap = checkpoint_pids_cap ? 2 * checkpoint_pids_cap : 16;
        pid_t *v = realloc(checkpoint_pids, cap * sizeof(*v));
        if (!v)
            return; /* reaped at the run's end, as before */
        checkpoint_pids = v;
        checkpoint_pids_cap = cap;
    }
    checkpoint_pids[nr_checkpoint_pids++] = pid;
}

void cli_gdb_checkpoints_reap(void)
{
    for (size_t i = 0; i < nr_checkpoint_pids;) {
        pid_t w = waitpid(checkpoint_pids[i], NULL, WNOHANG);
        if (w == checkpoint_pids[i] || (w < 0 && errno == ECHILD))
            checkpoint_pids[i] = checkpoint_pids[--nr_checkpoint_pids];
        else
            i++;
    }
}

void cli_gdb_checkpoint_set_sum_fd(int fd) { instance_sum_fd = fd; }

static bool is_memfd(int fd)
{
    char proc[40], link[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, link, sizeof(link) - 1);
    return n > 7 && strncmp(link, "/memfd:", 7) == 0;
}

/* An anonymous pipe ("pipe:[N]"), not a named FIFO. */
static bool is_anon_pipe(int fd)
{
    char proc[40], link[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, link, sizeof(link) - 1);
    return n > 5 && strncmp(link, "pipe:", 5) == 0;
}

/* Whether host fd fd's open file description holds a file lock (flock,
 * an OFD lock: /proc/self/fdinfo lists its own). */
static bool holds_lock(int fd)
{
    char path[48], buf[1024];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    int info = open(path, O_RDONLY | O_CLOEXEC);
    if (info < 0)
        return false;
    ssize_t n = read(info, buf, sizeof(buf) - 1);
    close(info);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strstr(buf, "\nlock:") != NULL;
}

#define LOCK_REFUSAL                                                     \
    "a file lock (flock, fcntl) is held: a restored copy would not hold " \
    "it"

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether a guest holds an fd on the socket with inode ino. */
static bool guests_hold_socket(uint64_t ino, void *ctx)
{
    const struct proxy_world *w = ctx;
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++) {
            struct stat st;
            if (t->fds[k].kind == PROXY_FD_HOST &&
                fstat(t->fds[k].host_fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
                (uint64_t)st.st_ino == ino)
                return true;
        }
    }
    return false;
}

/* Why guest fd slot f (host fd f->host_fd) cannot be copied, or NULL. */
static const char *fd_refusal(struct proxy_world *w, const struct proxy_fd *f,
                              const struct stat *io)
{
    /* (a signalfd's, a timerfd's and a message queue descriptor's host
     * fds are eventfds, below; their state is hvrun's, copied with it) */
    if (f->vfd || f->perf || f->pidfd_pid || f->secretmem)
        return "a pidfd, perf event, secret memory or /proc file of a "
               "process";
    if (f->mqd && proxy_mqd_host_notify(f->mqd))
        return "a message queue with a SIGEV_THREAD notification (a host "
               "queue of hvrun's stands for it)";
    struct stat st;
    if (fstat(f->host_fd, &st) < 0)
        return "an fd hvrun cannot stat";
    if (holds_lock(f->host_fd))
        return LOCK_REFUSAL;
    for (int s = 0; s < 3; s++)
        if (io[s].st_nlink != (nlink_t)-1 && same_file(&st, &io[s]))
            return NULL; /* the run's stdin, stdout or stderr */
    if (S_ISREG(st.st_mode))
        return is_memfd(f->host_fd) ? "a memfd (its contents would be "
                                      "shared)"
                                    : NULL;
    if (S_ISDIR(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
        return NULL;
    if (S_ISFIFO(st.st_mode) && is_anon_pipe(f->host_fd))
        return (fcntl(f->host_fd, F_GETFL) & O_DIRECT)
                   ? "a packet-mode pipe (its packets are not copied)"
                   : NULL;
    if (S_ISSOCK(st.st_mode))
        return ckpt_socket_refusal(f->host_fd, guests_hold_socket, w);
    if (ckpt_event_is(f->host_fd)) {
        struct ckpt_event e;
        const char *why = NULL;
        (void)ckpt_event_save(f->host_fd, &e, &why);
        ckpt_event_free(&e);
        return why;
    }
    return "a named FIFO or an anonymous inode other than an eventfd or "
           "epoll instance (its contents would be shared)";
}

static const char *world_refusal(struct proxy_world *w, const struct stat *io)
{
    if (w->outside)
        return "the run has connections outside it";
    if (proxy_tmp_made())
        return "the run has used its private /tmp (the copies would share "
               "its files)";
    if (proxy_shm_attached(w))
        return "a System V shared memory segment is attached (its mapping "
               "would be shared)";
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *p = w->procs[i];
        if (p->totals && !proxy_preserve_untouched(p->totals->preserve))
            return "the run has changed files before this point";
        if (proxy_plocks_held(&p->fds))
            return LOCK_REFUSAL;
        for (int k = 0; k < p->fds.cap; k++) {
            const struct proxy_fd *f = &p->fds.fds[k];
            if (f->kind != PROXY_FD_HOST)
                continue;
            const char *why = fd_refusal(w, f, io);
            if (why)
                return why;
        }
    }
    return NULL;
}

static void free_saved(struct saved_fd *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].pipe_data);
        if (v[i].sock_state)
            ckpt_socket_free(v[i].sock_state);
        free(v[i].sock_state);
        if (v[i].event_state)
            ckpt_event_free(v[i].event_state);
        free(v[i].event_state);
    }
    free(v);
}

/* A state the checkpoint could not save, said on stderr: -1. */
static int save_failed(const struct saved_fd *s, const char *why)
{
    fprintf(stderr, "hvrun: checkpoint: fd %d: %s\n", s->fd,
            why ? why : "out of memory");
    return -1;
}

/* Each saved socket's state, on the first fd of each. 0 or -1. */
static int save_sockets(struct saved_fd *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool first = v[i].sock;
        for (size_t j = 0; j < i && first; j++)
            first = !(v[j].sock && v[j].ino == v[i].ino && v[j].dev == v[i].dev);
        if (!first)
            continue;
        const char *why = NULL;
        v[i].sock_state = calloc(1, sizeof(*v[i].sock_state));
        if (!v[i].sock_state ||
            ckpt_socket_save(v[i].fd, v[i].sock_state, &why) < 0)
            return save_failed(&v[i], why);
    }
    return 0;
}

/* The bytes pipe fd (a read end) holds, without taking them: tee into a
 * pipe of hvrun's as large, then read that. 0 or -1. */
static int peek_pipe(int fd, int size, char **data, size_t *len)
{
    int tmp[2];
    *data = NULL;
    *len = 0;
    if (pipe2(tmp, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    int rc = -1;
    if (fcntl(tmp[1], F_SETPIPE_SZ, size) < size)
        goto out;
    ssize_t n = tee(fd, tmp[1], (size_t)size, SPLICE_F_NONBLOCK);
    if (n < 0 && errno != EAGAIN)
        goto out;
    if (n <= 0) {
        rc = 0;
        goto out;
    }
    *data = malloc((size_t)n);
    if (*data && read(tmp[0], *data, (size_t)n) == n) {
        *len = (size_t)n;
        rc = 0;
    }
out:
    close(tmp[0]);
    close(tmp[1]);
    return rc;
}

/* Each saved pipe's size, and on its first saved fd the bytes it holds
 * (read through any of its read ends). 0 or -1. */
static int save_pipes(struct saved_fd *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!v[i].pipe)
            continue;
        v[i].pipe_size = fcntl(v[i].fd, F_GETPIPE_SZ);
        if (v[i].pipe_size <= 0)
            return -1;
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = !(v[j].pipe && v[j].ino == v[i].ino && v[j].dev == v[i].dev);
        if (!first)
            continue;
        for (size_t j = i; j < n; j++)
            if (v[j].pipe && v[j].ino == v[i].ino && v[j].dev == v[i].dev &&
                (v[j].status_flags & O_ACCMODE) == O_RDONLY) {
                if (peek_pipe(v[j].fd, v[i].pipe_size, &v[i].pipe_data,
                              &v[i].pipe_len) < 0)
                    return -1;
                break;
            }
    }
    return 0;
}

/* Whether v[i] is the first saved fd of its eventfd or epoll instance. */
static bool is_first_event(const struct saved_fd *v, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (v[j].event && v[j].file_id == v[i].file_id)
            return false;
    return v[i].event;
}

/* Each saved eventfd's and epoll instance's state, on the first fd of
 * each. 0 or -1. */
static int save_events(struct saved_fd *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!is_first_event(v, i))
            continue;
        const char *why = NULL;
        v[i].event_state = calloc(1, sizeof(*v[i].event_state));
        if (!v[i].event_state ||
            ckpt_event_save(v[i].fd, v[i].event_state, &why) < 0)
            return save_failed(&v[i], why);
    }
    return 0;
}

/* The guest fd table holding host fd fd, and its number there (*slot);
 * NULL when no guest holds it. */
static const struct proxy_fdtable *guest_slot_of(const struct proxy_world *w,
                                                 int fd, int *slot)
{
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++)
            if (t->fds[k].kind == PROXY_FD_HOST && t->fds[k].host_fd == fd) {
                *slot = k;
                return t;
            }
    }
    return NULL;
}

/* The open file's id (fdtable.c) of host fd fd, which a guest holds. */
static uint64_t guest_file_id(const struct proxy_world *w, int fd)
{
    int k;
    const struct proxy_fdtable *t = guest_slot_of(w, fd, &k);
    return t ? proxy_fd_file_id(t, k) : 0;
}

/* hvrun's own fd of guest slot f's eventfd (a timerfd's, where
 * timerfd.c adds expirations; a message queue descriptor's, which
 * mqueue.c keeps ready as the queue is), or -1. */
static int hvruns_ref(const struct proxy_fd *f)
{
    if (f->timerfd)
        return proxy_timerfd_efd(f->timerfd);
    if (f->mqd)
        return proxy_mqd_efd(f->mqd);
    return -1;
}

/* Whether host fd fd is hvrun's own reference to a guest's eventfd
 * (hvruns_ref), and the guest's open file's id (*file_id): restored as
 * one eventfd with the guest's fds. */
static bool hvruns_eventfd(const struct proxy_world *w, int fd,
                           uint64_t *file_id)
{
    for (int i = 0; i < w->nr_procs; i++) {
        const struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++)
            if (t->fds[k].kind == PROXY_FD_HOST &&
                hvruns_ref(&t->fds[k]) == fd) {
                *file_id = proxy_fd_file_id(t, k);
                return true;
            }
    }
    return false;
}

/* Whether host fd fd is in a guest's fd table. */
static bool guests_hold(const struct proxy_world *w, int fd)
{
    int k;
    return guest_slot_of(w, fd, &k) != NULL;
}

/* hvrun's open fds, stdio's descriptions marked, the guests' pipes with
 * what they hold: *n of them (malloc'd). */
static struct saved_fd *save_fds(struct proxy_world *w, const struct stat *io,
                                 size_t *n)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return NULL;
    size_t cap = 64;
    struct saved_fd *v = malloc(cap * sizeof(*v));
    *n = 0;
    struct dirent *e;
    while (v && (e = readdir(d))) {
        int fd = atoi(e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &st) < 0)
            continue;
        if (*n == cap) {
            struct saved_fd *g = realloc(v, 2 * cap * sizeof(*v));
            if (!g)
                break;
            v = g;
            cap *= 2;
        }
        struct saved_fd *s = &v[(*n)++];
        *s = (struct saved_fd){.fd = fd,
                               .type = st.st_mode & S_IFMT,
                               .dev = st.st_dev,
                               .ino = st.st_ino,
                               .status_flags = fcntl(fd, F_GETFL),
                               .fd_flags = fcntl(fd, F_GETFD),
                               .offset = lseek(fd, 0, SEEK_CUR)};
        s->memfd = S_ISREG(st.st_mode) && is_memfd(fd);
        for (int k = 1; k < 3; k++)
            if (io[k].st_nlink != (nlink_t)-1 && same_file(&st, &io[k]) &&
                !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
                s->stdio = k;
        bool run_stdio = false; /* (stdin's pipe stays the outside's) */
        for (int k = 0; k < 3; k++)
            run_stdio |= io[k].st_nlink != (nlink_t)-1 && same_file(&st, &io[k]);
        if (S_ISFIFO(st.st_mode) && !run_stdio && is_anon_pipe(fd) &&
            guests_hold(w, fd))
            s->pipe = true; /* (hvrun's own pipes are left as they are) */
        if (S_ISSOCK(st.st_mode) && !run_stdio && guests_hold(w, fd))
            s->sock = true;
        if (!run_stdio && guests_hold(w, fd) && ckpt_event_is(fd)) {
            s->event = true;
            s->file_id = guest_file_id(w, fd);
        } else if (!run_stdio && ckpt_event_is(fd) &&
                   hvruns_eventfd(w, fd, &s->file_id)) {
            s->event = true;
        }
    }
    closedir(d);
    if (v && (save_pipes(v, *n) < 0 || save_sockets(v, *n) < 0 ||
              save_events(v, *n) < 0)) {
        free_saved(v, *n);
        return NULL;
    }
    return v;
}

/* The guests' VMs: one for each process; *n. */
static struct vmm_vm **world_vms(struct proxy_world *w, size_t *n)
{
    struct vmm_vm **v = calloc((size_t)w->nr_procs + 1, sizeof(*v));
    *n = 0;
    for (int i = 0; v && i < w->nr_procs; i++)
        if (w->procs[i]->vm)
            v[(*n)++] = w->procs[i]->vm;
    return v;
}

/* ---- the restore channel -------------------------------------------------- */

enum { CK_GDB, CK_HELPER, CK_SUM, CK_OUT1, CK_OUT2, CK_NR_FDS };

struct ck_request {
    int present[CK_NR_FDS]; /* which fds came, in this order */
};

struct ck_reply {
    int err;
    int pid;
    long long offset[3]; /* stdout's and stderr's file offsets ([1], [2]) */
    char why[200];
};

/* ---- restoring ------------------------------------------------------------ */

/* fd onto number at, with at's close-on-exec as it was. */
static void put_at(int fd, int at, int fd_flags)
{
    if (fd != at)
        (void)dup3(fd, at, (fd_flags & FD_CLOEXEC) ? O_CLOEXEC : 0);
}

/* Opens saved file s again at its offset, over its own number; false
 * when it could not be (its offset would be the original's). */
static bool reopen(const struct saved_fd *s)
{
    char proc[40];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s->fd);
    /* (O_NOFOLLOW would refuse the /proc link itself) */
    int flags = (s->status_flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW)) |
                O_CLOEXEC | O_NOCTTY;
    int fd = open(proc, flags);
    if (fd < 0)
        return (s->status_flags & O_PATH) != 0; /* (no offset there) */
    bool ok = s->offset < 0 || lseek(fd, s->offset, SEEK_SET) == s->offset;
    put_at(fd, s->fd, s->fd_flags);
    close(fd);
    return ok;
}

struct checkpoint {
    struct proxy_world *world;
    struct vmm_vm **vms;
    size_t nr_vms;
    struct saved_fd *fds;
    size_t nr_fds;
    int gdb_fd;
    struct sigaction chld;
};

/* Saved fd s is a new host object now (a new pipe for stdout): the
 * guests see it as the file they saw (its virtual inode number and
 * times; the fd table's and the world's notes of its identity). */
static void same_file_as_before(struct proxy_world *w,
                                const struct saved_fd *s, int now)
{
    struct stat st;
    if (fstat(now, &st) < 0)
        return;
    uint64_t od = (uint64_t)s->dev, oi = (uint64_t)s->ino;
    uint64_t nd = (uint64_t)st.st_dev, ni = (uint64_t)st.st_ino;
    if (od == nd && oi == ni)
        return;
    det_meta_rekey(w->procs[0]->det, od, oi, nd, ni);
    for (int k = 0; k < 2; k++)
        if (w->out_id[k][0] == od && w->out_id[k][1] == oi) {
            w->out_id[k][0] = nd;
            w->out_id[k][1] = ni;
        }
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_fdtable *t = &w->procs[i]->fds;
        for (int k = 0; k < t->cap; k++) {
            struct proxy_fd *f = &t->fds[k];
            if (f->kind == PROXY_FD_HOST && f->meta_known &&
                f->host_dev == od && f->host_ino == oi) {
                f->host_dev = nd;
                f->host_ino = ni;
            }
        }
    }
}

/* Whether c->fds[i] is the first saved fd of its pipe. */
static bool is_first_of_pipe(const struct checkpoint *c, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (c->fds[j].pipe && c->fds[j].ino == c->fds[i].ino &&
            c->fds[j].dev == c->fds[i].dev)
            return false;
    return true;
}

/* Saved pipe c->fds[first] (the first fd of its pipe) as a new pipe of
 * the same size holding the saved bytes, each saved end of it over its
 * number; the write end closed when the run held none. 0 or -1. */
static int restore_pipe(struct checkpoint *c, size_t first)
{
    const struct saved_fd *p = &c->fds[first];
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) < 0)
        return -1;
    int rc = -1;
    if (fcntl(ends[1], F_SETPIPE_SZ, p->pipe_size) < p->pipe_size ||
        (p->pipe_len &&
         write(ends[1], p->pipe_data, p->pipe_len) != (ssize_t)p->pipe_len))
        goto out;
    for (size_t i = first; i < c->nr_fds; i++) {
        const struct saved_fd *s = &c->fds[i];
        if (!s->pipe || s->ino != p->ino || s->dev != p->dev)
            continue;
        bool reader = (s->status_flags & O_ACCMODE) == O_RDONLY;
        put_at(ends[reader ? 0 : 1], s->fd, s->fd_flags);
        (void)fcntl(s->fd, F_SETFL, s->status_flags);
        same_file_as_before(c->world, s, s->fd);
    }
    rc = 0;
out:
    /* (a write end no saved fd names goes here: readers see the end of
     * file after the bytes) */
    close(ends[0]);
    close(ends[1]);
    return rc;
}

/* The saved socket state of inode ino (on its first fd), or NULL. */
static const struct ckpt_socket *saved_socket(const struct checkpoint *c,
                                              uint64_t ino, size_t *at)
{
    for (size_t i = 0; i < c->nr_fds; i++)
        if (c->fds[i].sock_state && c->fds[i].sock_state->ino == ino) {
            *at = i;
            return c->fds[i].sock_state;
        }
    return NULL;
}

/* Saved socket c->fds[first] (the first fd of its socket) and its peer as
 * a new pair, each saved fd of either over its number, unless the peer
 * came first (made with it). 0 or -1. */
static int restore_socket(struct checkpoint *c, size_t first)
{
    const struct ckpt_socket *a = c->fds[first].sock_state, *b = NULL;
    size_t peer_at = 0;
    if (a->connected && a->peer_ino)
        b = saved_socket(c, a->peer_ino, &peer_at);
    if (b && peer_at < first)
        return 0;
    int ends[2];
    if (ckpt_socket_restore(a, b, ends) < 0)
        return -1;
    for (size_t i = 0; i < c->nr_fds; i++) {
        const struct saved_fd *s = &c->fds[i];
        if (!s->sock || (s->ino != a->ino && (!b || s->ino != b->ino)))
            continue;
        int end = ends[s->ino == a->ino ? 0 : 1];
        put_at(end, s->fd, s->fd_flags);
        (void)fcntl(s->fd, F_SETFL, s->status_flags);
        same_file_as_before(c->world, s, s->fd);
    }
    for (int k = 0; k < 2; k++)
        if (ends[k] >= 0)
            close(ends[k]);
    return 0;
}

/* Saved eventfd or epoll instance c->fds[first] (the first fd of its
 * open file) made again, over each of its fds' numbers. 0 or -1. */
static int restore_event(struct checkpoint *c, size_t first)
{
    int fd = ckpt_event_restore(c->fds[first].event_state);
    if (fd < 0)
        return -1;
    for (size_t i = first; i < c->nr_fds; i++) {
        const struct saved_fd *s = &c->fds[i];
        if (!s->event || s->file_id != c->fds[first].file_id)
            continue;
        put_at(fd, s->fd, s->fd_flags);
        (void)fcntl(s->fd, F_SETFL, s->status_flags);
    }
    if (fd != c->fds[first].fd)
        close(fd);
    return 0;
}

/* The eventfds, then the epoll instances (their entries name the other
 * fds, which stand at their numbers by then). 0 or -1. */
static int restore_events(struct checkpoint *c)
{
    for (int epolls = 0; epolls < 2; epolls++)
        for (size_t i = 0; i < c->nr_fds; i++) {
            const struct saved_fd *s = &c->fds[i];
            if (!s->event_state || s->event_state->epoll != (epolls == 1))
                continue;
            if (restore_event(c, i) < 0) {
                fprintf(stderr, "hvrun: restoring a checkpoint: the %s of fd "
                                "%d cannot be made again: %s\n",
                        epolls ? "epoll instance" : "eventfd", s->fd,
                        strerror(errno));
                return -1;
            }
        }
    return 0;
}

/* The numbers a restore puts fds at, held while it runs: each saved fd's,
 * the summary pipe's and gdb's connection's that is free here gets a
 * placeholder (/dev/null), so that no fd the restore makes meanwhile (a
 * pipe's ends, a socket pair, a segment's copy) takes one of them and is
 * then put over (the copy of a System V segment once became the summary
 * pipe) or closed as a temporary where it was already in place. held
 * (room for nr_fds + 2) gets the numbers, *n of them; *ph the
 * placeholder's identity. top: above every saved number. */
static void hold_numbers(const struct checkpoint *c, int top, int *held,
                         size_t *n, struct stat *ph)
{
    *n = 0;
    int low = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int null_fd = low < 0 ? -1 : fcntl(low, F_DUPFD_CLOEXEC, top);
    if (low >= 0)
        close(low);
    if (null_fd < 0 || fstat(null_fd, ph) < 0) {
        if (null_fd >= 0)
            close(null_fd);
        return; /* (as before: nothing held) */
    }
    for (size_t i = 0; i < c->nr_fds + 2; i++) {
        int at = i < c->nr_fds        ? c->fds[i].fd
                 : i == c->nr_fds     ? instance_sum_fd
                                      : c->gdb_fd;
        if (at >= 0 && fcntl(at, F_GETFD) < 0 && errno == EBADF &&
            dup3(null_fd, at, O_CLOEXEC) == at)
            held[(*n)++] = at;
    }
    close(null_fd);
}

/* The placeholders nothing was put at (a saved fd not made again here: a
 * VM's, a memfd's) closed. */
static void release_numbers(const int *held, size_t n, const struct stat *ph)
{
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (fstat(held[i], &st) == 0 && st.st_dev == ph->st_dev &&
            st.st_ino == ph->st_ino)
            close(held[i]);
    }
}

/* In the fork of the checkpoint that becomes an instance: fds[] the
 * request's (-1 where none). 0, or -1 (the fork then exits). */
static int restore(struct checkpoint *c, int *fds)
{
    (void)sigaction(SIGCHLD, &c->chld, NULL);
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with the checkpoint */
    /* The request's fds above every saved number first. */
    int top = 3;
    for (size_t i = 0; i < c->nr_fds; i++)
        if (c->fds[i].fd >= top)
            top = c->fds[i].fd + 1;
    for (int k = 0; k < CK_NR_FDS; k++)
        if (fds[k] >= 0) {
            int high = fcntl(fds[k], F_DUPFD_CLOEXEC, top + 8);
            close(fds[k]);
            fds[k] = high;
        }
    size_t nr_held;
    struct stat ph;
    int *held = malloc((c->nr_fds + 2) * sizeof(*held));
    if (!held)
        return -1;
    hold_numbers(c, top, held, &nr_held, &ph);
    for (size_t i = 0; i < c->nr_fds; i++) {
        const struct saved_fd *s = &c->fds[i];
        int out = s->stdio == 1 ? fds[CK_OUT1] : s->stdio == 2 ? fds[CK_OUT2]
                                                              : -1;
        if (out >= 0) {
            put_at(out, s->fd, s->fd_flags);
            same_file_as_before(c->world, s, out);
        }
        else if (((s->type == S_IFREG && !s->memfd) || s->type == S_IFDIR) &&
                 !reopen(s)) {
            fprintf(stderr, "hvrun: restoring a checkpoint: fd %d cannot "
                            "be opened again\n", s->fd);
            return -1;
        } else if (s->pipe && s->pipe_size > 0 && is_first_of_pipe(c, i) &&
                   restore_pipe(c, i) < 0) {
            fprintf(stderr, "hvrun: restoring a checkpoint: the pipe of fd "
                            "%d cannot be made again: %s\n", s->fd,
                    strerror(errno));
            return -1;
        } else if (s->sock_state && restore_socket(c, i) < 0) {
            fprintf(stderr, "hvrun: restoring a checkpoint: the socket of fd "
                            "%d cannot be made again: %s\n", s->fd,
                    strerror(errno));
            return -1;
        }
    }
    if (restore_events(c) < 0)
        return -1;
    int rc = proxy_shm_copy_segments(c->world); /* (the checkpoint's stays) */
    if (rc < 0) {
        fprintf(stderr, "hvrun: restoring a checkpoint: copying a System V "
                        "segment: %s\n", strerror(-rc));
        return -1;
    }
    if (fds[CK_SUM] >= 0 && instance_sum_fd >= 0)
        put_at(fds[CK_SUM], instance_sum_fd, FD_CLOEXEC);
    put_at(fds[CK_GDB], c->gdb_fd, FD_CLOEXEC);
    for (int k = 0; k < CK_NR_FDS; k++)
        if (k != CK_HELPER && fds[k] >= 0)
            close(fds[k]);
    struct proxy_process *first = c->world->procs[0];
    if (first->totals && first->totals->preserve &&
        proxy_preserve_reopen(first->totals->preserve) < 0)
        return -1;
    release_numbers(held, nr_held, &ph);
    free(held);
    vmm_host_snapshot_adopt(c->world->host, fds[CK_HELPER]);
    char why[200];
    if (vmm_vms_snapshot_restore(c->vms, c->nr_vms, why, sizeof(why)) < 0) {
        fprintf(stderr, "hvrun: restoring a checkpoint: %s\n", why);
        return -1;
    }
    return 0;
}

/*
 * In the checkpoint, at once: its copies of what the run goes on using.
 * Until they are closed the run is not alone with its objects: a guest
 * pipe's reader would not see the end of file when the guests' writers
 * are gone (nor a writer EPIPE when the readers are), a socket's peer
 * its end, an epoll instance would keep a closed fd's entry; and when
 * the run met that would be the host's timing (a wakeup from outside
 * the run in its detlog). The front end's pipe sees its end too; each
 * restore makes its own of all of them. A file's open description
 * shared with the run would keep a lock the run takes later past the
 * close that drops it (flock, OFD and so POSIX locks belong to the
 * description): the copy opens each file again as its own (one that
 * holds a lock now is hvrun's own: the guests' are refused), and a
 * System V segment's memory becomes a copy. 0, or -1 with why.
 * HVRUN_GDB_CHECKPOINT_STALL_MS (to test hvrun): the wait a loaded host
 * can make before this copy runs, which the original must not see;
 * HVRUN_GDB_CHECKPOINT_FAIL (to test hvrun): the copy fails at the end,
 * as when a segment cannot be copied.
 */
static int let_go_of_run(struct checkpoint *c, char *why, size_t why_len)
{
    const char *stall = getenv("HVRUN_GDB_CHECKPOINT_STALL_MS");
    if (stall && atoi(stall) > 0)
        (void)usleep((useconds_t)atoi(stall) * 1000);
    close(c->gdb_fd);
    if (instance_sum_fd >= 0)
        close(instance_sum_fd);
    for (size_t i = 0; i < c->nr_fds; i++) {
        const struct saved_fd *s = &c->fds[i];
        if (s->stdio || s->pipe || s->sock || s->event) {
            close(s->fd);
        } else if (((s->type == S_IFREG && !s->memfd) || s->type == S_IFDIR) &&
                   !holds_lock(s->fd) && !reopen(s)) {
            snprintf(why, why_len, "fd %d cannot be opened again", s->fd);
            return -1;
        }
    }
    int rc = proxy_shm_copy_segments(c->world);
    if (rc < 0) {
        snprintf(why, why_len, "copying a System V segment: %s",
                 strerror(-rc));
        return -1;
    }
    if (getenv("HVRUN_GDB_CHECKPOINT_FAIL")) {
        snprintf(why, why_len, "made to fail (HVRUN_GDB_CHECKPOINT_FAIL)");
        return -1;
    }
    return 0;
}

/* The original's wait for its checkpoint's first word on the channel:
 * 'R', the copy has let go of the run's objects and stands ready, or
 * 'F' and why it failed. 0, or -errno with why. */
static int await_checkpoint(int chan, char *why, size_t why_len)
{
    char word[200];
    ssize_t n;
    while ((n = recv(chan, word, sizeof(word) - 1, 0)) < 0 && errno == EINTR)
        ;
    if (n >= 1 && word[0] == 'R')
        return 0;
    word[n > 0 ? n : 0] = '\0';
    snprintf(why, why_len, "the checkpoint's copy failed%s%s",
             n > 1 ? ": " : "", n > 1 ? word + 1 : "");
    return -EIO;
}

/* The checkpoint's life: restores on request until the channel ends.
 * Returns only in a restored fork (0). */
static int serve_restores(struct checkpoint *c, int chan)
{
    struct sigaction ign = {.sa_handler = SIG_IGN};
    (void)sigaction(SIGCHLD, &ign, &c->chld); /* its forks reap themselves */
    for (;;) {
        struct ck_request req;
        int fds[CK_NR_FDS];
        ssize_t n = vmm_recv_fds(chan, &req, sizeof(req), fds, CK_NR_FDS);
        if (n <= 0)
            _exit(0);
        /* fds came in order, the absent ones left out */
        int got[CK_NR_FDS], k = 0;
        for (int i = 0; i < CK_NR_FDS; i++)
            got[i] = req.present[i] ? fds[k++] : -1;
        pid_t pid = fork();
        if (pid == 0) {
            close(chan);
            if (restore(c, got) < 0)
                _exit(125);
            return 0;
        }
        for (int i = 0; i < CK_NR_FDS; i++)
            if (got[i] >= 0)
                close(got[i]);
        struct ck_reply r = {.err = pid < 0 ? errno : 0, .pid = (int)pid};
        for (size_t i = 0; i < c->nr_fds; i++)
            if (c->fds[i].fd == 1 || c->fds[i].fd == 2)
                r.offset[c->fds[i].fd] = c->fds[i].offset;
        if (pid < 0)
            snprintf(r.why, sizeof(r.why), "fork: %s", strerror(errno));
        (void)vmm_send_fds(chan, &r, sizeof(r), NULL, 0);
    }
}

int cli_gdb_checkpoint(struct proxy_world *w, int gdb_fd, int *chan_out,
                       char *why, size_t why_len)
{
    cli_gdb_checkpoints_reap();
    struct stat io[3];
    for (int s = 0; s < 3; s++)
        if (fstat(s, &io[s]) < 0)
            io[s].st_nlink = (nlink_t)-1;
    const char *bad = world_refusal(w, io);
    if (bad) {
        snprintf(why, why_len, "%s", bad);
        return -EOPNOTSUPP;
    }
    struct checkpoint c = {.world = w, .gdb_fd = gdb_fd};
    c.vms = world_vms(w, &c.nr_vms);
    c.fds = save_fds(w, io, &c.nr_fds);
    int chan[2] = {-1, -1};
    int rc = !c.vms || !c.fds ? -ENOMEM : 0;
    if (rc == 0)
        rc = vmm_vms_snapshot_take(c.vms, c.nr_vms, why, why_len);
    if (rc == 0 &&
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0) {
        rc = -errno;
        snprintf(why, why_len, "socketpair: %s", strerror(errno));
        (void)vmm_vms_snapshot_settle(c.vms, c.nr_vms, false);
    }
    pid_t pid = -1;
    if (rc == 0) {
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
            rc = -errno;
            snprintf(why, why_len, "fork: %s", strerror(errno));
        }
    }
    if (pid == 0) {
        close(chan[0]);
        nr_checkpoint_pids = 0; /* the original's children, not its */
        char word[200] = "F";
        if (let_go_of_run(&c, word + 1, sizeof(word) - 1) < 0) {
            (void)send(chan[1], word, strlen(word), 0);
            _exit(125);
        }
        vmm_host_snapshot_disown(w->host);
        if (vmm_vms_snapshot_settle(c.vms, c.nr_vms, true) < 0) {
            static const char unsettled[] = "Fguest memory cannot be settled";
            (void)send(chan[1], unsettled, sizeof(unsettled) - 1, 0);
            _exit(125);
        }
        if (send(chan[1], "R", 1, 0) != 1)
            _exit(125);
        serve_restores(&c, chan[1]);
        free(c.vms);
        free_saved(c.fds, c.nr_fds);
        return 1; /* a restored copy */
    }
    if (c.vms && rc == 0)
        (void)vmm_vms_snapshot_settle(c.vms, c.nr_vms, false);
    if (chan[1] >= 0)
        close(chan[1]);
    /* (the run goes on only when it is alone with its objects again) */
    if (rc == 0)
        rc = await_checkpoint(chan[0], why, why_len);
    if (rc < 0 && pid > 0) {
        /* a copy that failed said so (or ended without a word) and
         * exits: reaped now, not left a zombie of the run */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    } else if (pid > 0) {
        checkpoint_born(pid);
    }
    if (rc < 0 && chan[0] >= 0)
        close(chan[0]);
    free(c.vms);
    if (c.fds)
        free_saved(c.fds, c.nr_fds);
    if (rc < 0)
        return rc;
    *chan_out = chan[0];
    return 0;
}

int cli_gdb_checkpoint_reply(int gdb_fd, int chan)
{
    /* "$OK#9a" with the channel: the front end takes it from the frame */
    static const char frame[] = "$OK#9a";
    int rc = vmm_send_fds(gdb_fd, frame, sizeof(frame) - 1, &chan, 1);
    close(chan);
    return rc;
}

int cli_gdb_checkpoint_restore(int chan, const int fds[5], int *pid,
                               long long offset[3], char *why, size_t why_len)
{
    struct ck_request req;
    int list[CK_NR_FDS], k = 0;
    for (int i = 0; i < CK_NR_FDS; i++) {
        req.present[i] = fds[i] >= 0;
        if (fds[i] >= 0)
            list[k++] = fds[i];
    }
    struct ck_reply r;
    int none[CK_NR_FDS];
    if (vmm_send_fds(chan, &req, sizeof(req), list, k) < 0 ||
        vmm_recv_fds(chan, &r, sizeof(r), none, CK_NR_FDS) != (ssize_t)sizeof(r)) {
        snprintf(why, why_len, "the checkpoint is gone");
        return -EPIPE;
    }
    if (r.err) {
        snprintf(why, why_len, "%s", r.why);
        return -r.err;
    }
    *pid = r.pid;
    memcpy(offset, r.offset, sizeof(r.offset));
    return 0;
}

int cli_gdb_helper_start(const char *backend, int *fd, int *pid, char *why,
                         size_t why_len)
{
    enum vmm_backend_kind kind = VMM_BACKEND_KVM;
    if (backend && vmm_backend_parse(backend, &kind) < 0)
        kind = VMM_BACKEND_KVM;
    return vmm_helper_start(kind, fd, pid, why, why_len);
}
