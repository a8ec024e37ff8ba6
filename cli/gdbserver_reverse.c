/*
 * gdbserver_reverse.c - reverse execution for `--gdb` (gdb's bc and bs,
 * `monitor goto` backwards): a front end between gdb and the run.
 *
 * The front end owns gdb's connection. The program runs in an instance:
 * a child process running cli_run_once with its gdbserver (gdbserver.c)
 * on a socket to the front end, which relays gdb's packets to it and its
 * replies back. Every run is the same run and gdb's stops change nothing
 * in it, so a point of the session is reached again by a new instance
 * that is sent the same packets: the front end keeps a log of those that
 * steer the run (breakpoints, watchpoints, resumes, writes, signals
 * passed), each resume with the stop it made.
 *
 * Going back is running forward again: a scan, then a reach.
 *  - The scan replays the log in a new instance with an instrument added
 *    from some event on (a window before the current point: `monitor
 *    goto` stops the instance there, silently): gdb's breakpoints and
 *    watchpoints for bc, a single-step of the thread for bs. Each stop of
 *    the instrument is noted (the stops the log expects are told from
 *    the others by their reply and their point, qHvrunWhere, and count
 *    for the instrument too when they are its kind); the last note
 *    before the log's end is the target. An empty window is widened,
 *    back to the start of the run.
 *  - The reach replays the log up to the target in a new instance: the
 *    same instrument armed at the same event, stopped at its N-th stop
 *    (a watchpoint's: at the instance's debugger step before the write,
 *    so gdb sees the value change going back, QHvrunStopAtStep). The log
 *    becomes that: the prefix, the arm and the cut, then gdb's
 *    breakpoints as they are now; later scans replay it the same way.
 * No stop is told to gdb on the way; the program's output is written
 * once: an output file is written again in place by each instance (cut
 * back to its length at the start: the same bytes), a pipe or terminal
 * of hvrun's is fed, through a pipe or pseudo-terminal per instance, the
 * bytes beyond the furthest any instance wrote. The files a run changed
 * are put back before the next (its journal, as --verify's).
 *
 * Refused (an 'O' message, then E01): a run that took something from
 * outside (a host fd woke it, a host-timed preemption: the instance's
 * count of DET_SRC_EXTERNAL) under `hvrun run`, a terminal or pipe on
 * stdin, --schedule-out, a run that has ended.
 */
#include "gdbserver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "fs.h"
#include "kernel.h"

#define RV_IN_MAX (1 << 17)
#define RV_REPLY_MAX 512
#define RV_KEY_MAX 128
#define RV_MAX_BPS 64
#define RV_MAX_ACTIVE 8
#define RV_MAX_REFS 512

/* HVRUN_GDB_TRACE=FILE: gdb's packets and the replays' notes and cuts
 * appended to FILE (to debug hvrun; not stderr, which a run writes again
 * after going back). */
__attribute__((format(printf, 1, 2))) static void trace(const char *fmt, ...)
{
    static FILE *out;
    static bool opened;
    if (!opened) {
        const char *path = getenv("HVRUN_GDB_TRACE");
        out = path ? fopen(path, "ae") : NULL;
        opened = true;
    }
    if (!out)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
    fflush(out);
}

/* ---- a point of the run (the instance's qHvrunWhere) -------------------- */

struct rv_where {
    uint64_t events, rip, own, steps, ext;
    int pid, tid;
    /* "E..;P..;T..;R..;O..;D..": the point (the detlog's digest too: a
     * re-run that took other values is not at the same point) without
     * the debugger's step count (which instruments change) */
    char key[RV_KEY_MAX];
};

static bool parse_where(const char *s, struct rv_where *w)
{
    unsigned long long e, r, o, d, st, x;
    int pid, tid;
    if (sscanf(s, "E%llu;P%x;T%x;R%llx;O%llu;D%llx;S%llu;X%llu", &e, &pid, &tid,
               &r, &o, &d, &st, &x) != 8)
        return false;
    *w = (struct rv_where){e, r, o, st, x, pid, tid, ""};
    const char *cut = strstr(s, ";S");
    snprintf(w->key, sizeof(w->key), "%.*s", (int)(cut - s), s);
    return true;
}

/* ---- the log ------------------------------------------------------------- */

struct rv_watch {
    char type;
    uint64_t addr;
    unsigned len;
};

/* What a scan adds to the run from its arm on. */
struct rv_instr {
    uint64_t bps[RV_MAX_BPS];
    int nr_bps;
    struct rv_watch watches[4];
    int nr_watches;
    int step_pid, step_tid; /* bs: this thread stepped (0: none) */
};

enum rv_kind {
    RV_PACKET, /* one of gdb's packets */
    RV_ARM,    /* an instrument armed at arm_event */
    RV_CUT,    /* the run stopped at that instrument's point */
};

struct rv_entry {
    enum rv_kind kind;
    char *pkt;
    size_t len;
    bool resume;
    /* a resume (or a cut): the stop it made */
    char reply[RV_REPLY_MAX];
    struct rv_where where;
    /* RV_ARM and RV_CUT: which arm */
    int arm_id;
    struct rv_instr instr;
    uint64_t arm_event;
    /* RV_CUT: at the instrument's count-th stop (0: the arm itself), or
     * by_steps: at the instance's steps-th debugger step after the arm */
    bool by_steps;
    uint64_t count, steps;
};

/* ---- an instance --------------------------------------------------------- */

enum rv_stream_kind { RV_OUT_PASS, RV_OUT_FILE, RV_OUT_PIPE, RV_OUT_TTY };

struct rv_instance {
    pid_t pid;
    int fd;     /* its gdbserver */
    int sum_fd; /* its exit code and summary, at its end */
    int out[2]; /* stdout, stderr: a memfd or a pipe's read end, or -1 */
    uint64_t out_seen[2];
    char in[RV_IN_MAX];
    size_t in_len;
    /* restored from a checkpoint: the checkpoint's child, not ours */
    bool restored;
    int passed_fd; /* an fd that came with its packets (a checkpoint's) */
};

/* A checkpoint (gdbserver_checkpoint.c): a copy of an instance at a stop
 * of the live run, forked again for each restore. */
struct rv_checkpoint {
    int id;         /* monitor restart's number */
    bool automatic; /* made every ckpt_every events (thinned) */
    int chan;       /* its channel; closing it ends the checkpoint */
    struct rv_where where;
    uint64_t out_seen[2];
    /* what the instance held of gdb's then */
    uint64_t bps[RV_MAX_BPS];
    int nr_bps;
    struct rv_watch watches[8];
    int nr_watches;
};
#define RV_MAX_CKPTS 64

/* An instrument's life during a replay. */
struct rv_active {
    int arm_id;
    const struct rv_instr *instr;
    uint64_t arm_event;
    bool armed;
    uint64_t count, arm_steps;
    /* its cut in the log: entry index, or -1 (a scan's: none) */
    long cut_entry;
};

/* What the instance holds of breakpoints: gdb's (the log's) and the
 * instruments'; it is sent Z0/z0 as the sum goes from and to zero. */
struct rv_ref {
    uint64_t addr;
    int log, instr;
    /* the instance holds it: an address not mapped yet (a library not
     * loaded) is tried again at each stop */
    bool held;
};

struct rv_note {
    bool any;
    size_t entry; /* the resume during which it came */
    uint64_t count;
    int kind;     /* 0 the arm, 1 a breakpoint, 2 a watchpoint, 3 a step */
    uint64_t seq; /* the replay's stop it was made at */
    uint64_t arm_steps;
    struct rv_where where;
    char reply[RV_REPLY_MAX];
};

struct rv_front {
    const struct run_options *o;
    const char *path, *detlog_path, *journal_dir;
    int gdb_fd;
    bool gdb_noack;
    char gdb_in[RV_IN_MAX];
    size_t gdb_in_len;
    bool gdb_interrupt;
    /* complete packets at the front of gdb_in already acknowledged (while
     * the front end was busy: gdb sends a packet again after 2 s without
     * a '+') */
    int gdb_pre_acked;
    struct rv_instance run;
    bool have_run;
    /* the log, and the point of its end */
    struct rv_entry *log;
    size_t nr_log, cap_log;
    struct rv_where where;
    char reply[RV_REPLY_MAX];
    uint64_t start_events;
    int next_arm_id;
    bool exited; /* the run ended (gdb was told W or X) */
    bool gone;   /* gdb left or killed the run */
    /* gdb's breakpoints and watchpoints now (from its Z and z) */
    uint64_t bps[RV_MAX_BPS];
    int nr_bps;
    struct rv_watch watches[4];
    int nr_watches;
    int hc_tid;         /* gdb's Hc thread (bs steps it), 0: the stop's */
    uint64_t goto_back; /* monitor goto behind: reached at the next c */
    /* the program's streams: a file is written again in place by each
     * run; a pipe (or terminal) is fed what no run before wrote */
    enum rv_stream_kind out_kind[2];
    uint64_t out_high[2]; /* bytes written to the real ones */
    off_t out_start[2];   /* a file's length when the run began */
    int out_flags[2];
    bool out_shared;  /* stderr is stdout's file */
    off_t waiting_at; /* where in stderr's file the waiting line goes */
    enum { RV_IN_INHERIT, RV_IN_FILE } in_kind;
    off_t in_offset;
    const char *refusal; /* why no re-run can repeat this run, or NULL */
    /* a replay */
    struct rv_active act[RV_MAX_ACTIVE];
    int nr_act;
    struct rv_ref refs[RV_MAX_REFS];
    int nr_refs;
    uint64_t goto_set; /* the goto the instance holds (0: none) */
    uint64_t step_cut; /* the QHvrunStopAtStep it holds (0: none) */
    int step_cut_arm;
    struct rv_note note;      /* a scan's last note */
    struct rv_note note_prev; /* the one before */
    uint64_t stops;           /* stops the replay has seen */
    int scan_arm;
    char scan_skip_key[RV_KEY_MAX]; /* bs: notes at this point skipped */
    /* the replay's own log (a scan's or a reach's) */
    struct rv_entry *plan;
    size_t nr_plan;
    size_t cut_at; /* the entry during which the cut came */
    /* a replay from a checkpoint: the resume it stands inside (its arms
     * before it are cut inside it), or (size_t)-1 */
    size_t mid_resume;
    struct run_summary *sum;
    /* checkpoints: made by `monitor checkpoint` and every ckpt_every
     * events of a continue (at most ckpt_auto_max automatic ones: past
     * that every other one goes and the spacing doubles) */
    struct rv_checkpoint ckpts[RV_MAX_CKPTS];
    int nr_ckpts, next_ckpt_id;
    uint64_t ckpt_every;
    int ckpt_auto_max;
    const char *ckpt_off; /* why none are taken (said once), or NULL */
    int run_ckpt_id;      /* the live instance was restored from it (0) */
    uint64_t goto_fwd;    /* gdb's `monitor goto` ahead, pending */
    bool intr_pending;    /* gdb's ^C, for the instance after a resume */
    pid_t helpers[64];    /* stub spawners started for restores */
    int nr_helpers;
};

/* ---- packets ------------------------------------------------------------- */

static void send_frame(int fd, const char *body, size_t len)
{
    static char frame[RV_IN_MAX + 8];
    unsigned sum = 0;
    if (fd < 0 || len > RV_IN_MAX)
        return;
    frame[0] = '$';
    memcpy(frame + 1, body, len);
    for (size_t i = 0; i < len; i++)
        sum += (unsigned char)body[i];
    snprintf(frame + 1 + len, 4, "#%02x", sum & 0xff);
    (void)cli_write_all(fd, frame, len + 4);
}

static void send_text(int fd, const char *s) { send_frame(fd, s, strlen(s)); }

/*
 * The next packet in buf[0, *len) into out (NUL-ended; its length in
 * *out_len): true when one was there. ^C bytes between packets set
 * *interrupt; '+' and '-' are dropped.
 */
static bool take_packet(char *buf, size_t *len, char *out, size_t cap,
                        size_t *out_len, bool *interrupt)
{
    size_t i = 0;
    while (i < *len && buf[i] != '$') {
        if (buf[i] == 0x03 && interrupt)
            *interrupt = true;
        i++;
    }
    memmove(buf, buf + i, *len - i);
    *len -= i;
    char *hash = *len ? memchr(buf, '#', *len) : NULL;
    if (!hash || (size_t)(hash - buf) + 3 > *len)
        return false;
    size_t body = (size_t)(hash - buf) - 1;
    if (body >= cap)
        body = cap - 1;
    memcpy(out, buf + 1, body);
    out[body] = 0;
    *out_len = body;
    size_t used = (size_t)(hash - buf) + 3;
    memmove(buf, buf + used, *len - used);
    *len -= used;
    return true;
}

static void pump_output(struct rv_front *f);

/* Reads what fd has into buf; false at its end or on an error. */
static bool fill(int fd, char *buf, size_t *len, size_t cap)
{
    if (*len == cap)
        *len = 0;
    ssize_t n;
    do
        n = read(fd, buf + *len, cap - *len);
    while (n < 0 && errno == EINTR && !proxy_stop_signal);
    if (n <= 0)
        return false;
    *len += (size_t)n;
    return true;
}

/* fill() for the instance's socket: an fd that comes with the bytes (a
 * checkpoint's channel, with its "OK") is kept in r->passed_fd. */
static bool fill_instance(struct rv_instance *r)
{
    if (r->in_len == sizeof(r->in))
        r->in_len = 0;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {r->in + r->in_len, sizeof(r->in) - r->in_len};
    struct msghdr m = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctl.buf,
                       .msg_controllen = sizeof(ctl.buf)};
    ssize_t n;
    do
        n = recvmsg(r->fd, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR && !proxy_stop_signal);
    if (n <= 0)
        return false;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        if (r->passed_fd >= 0)
            close(r->passed_fd);
        memcpy(&r->passed_fd, CMSG_DATA(c), sizeof(int));
    }
    r->in_len += (size_t)n;
    return true;
}

/*
 * The instance's next packet; while it is awaited, the program's output
 * is passed on and, if relay, a ^C from gdb goes to the instance. false:
 * the instance is gone.
 */
/* Acknowledges the packets gdb has sent but the front end not yet taken
 * (in ack mode): a long wait for the run is no reason for gdb to send one
 * again. */
static void ack_arrived(struct rv_front *f)
{
    if (f->gdb_noack || f->gdb_fd < 0)
        return;
    int complete = 0;
    for (size_t i = 0; i < f->gdb_in_len; i++) {
        if (f->gdb_in[i] != '$')
            continue;
        char *hash = memchr(f->gdb_in + i, '#', f->gdb_in_len - i);
        if (!hash || (size_t)(hash - f->gdb_in) + 3 > f->gdb_in_len)
            break;
        complete++;
        i = (size_t)(hash - f->gdb_in) + 2;
    }
    for (; f->gdb_pre_acked < complete; f->gdb_pre_acked++)
        (void)cli_write_all(f->gdb_fd, "+", 1);
}

static bool instance_packet(struct rv_front *f, char *out, size_t cap,
                            size_t *len, bool relay)
{
    struct rv_instance *r = &f->run;
    if (relay && f->intr_pending) { /* (the resume was just sent) */
        (void)cli_write_all(r->fd, "\x03", 1);
        f->intr_pending = false;
    }
    for (;;) {
        if (take_packet(r->in, &r->in_len, out, cap, len, NULL))
            return true;
        struct pollfd p[2] = {{r->fd, POLLIN, 0}, {f->gdb_fd, POLLIN, 0}};
        int n = poll(p, 2, 100);
        if (proxy_stop_signal && r->pid > 0)
            kill(r->pid, (int)proxy_stop_signal);
        pump_output(f);
        if (n <= 0)
            continue;
        if (p[1].revents) {
            if (!fill(f->gdb_fd, f->gdb_in, &f->gdb_in_len,
                      sizeof(f->gdb_in))) {
                f->gone = true;
                close(f->gdb_fd);
                f->gdb_fd = -1;
            } else if (relay && memchr(f->gdb_in, 0x03, f->gdb_in_len)) {
                /* ^C: passed on; packets gdb sent meanwhile stay */
                (void)cli_write_all(r->fd, "\x03", 1);
                size_t o = 0;
                for (size_t i = 0; i < f->gdb_in_len; i++)
                    if (f->gdb_in[i] != 0x03)
                        f->gdb_in[o++] = f->gdb_in[i];
                f->gdb_in_len = o;
            }
            ack_arrived(f);
        }
        if (p[0].revents && !fill_instance(r))
            return false;
    }
}

/* gdb's next packet (the program's output passed on meanwhile); false
 * when gdb is gone. */
static bool gdb_packet(struct rv_front *f, char *out, size_t cap, size_t *len)
{
    for (;;) {
        bool intr = false;
        if (take_packet(f->gdb_in, &f->gdb_in_len, out, cap, len, &intr)) {
            if (f->gdb_pre_acked > 0)
                f->gdb_pre_acked--;
            else if (!f->gdb_noack)
                (void)cli_write_all(f->gdb_fd, "+", 1);
            return true;
        }
        if (f->gdb_fd < 0)
            return false;
        struct pollfd p = {f->gdb_fd, POLLIN, 0};
        int n = poll(&p, 1, 100);
        pump_output(f);
        if (proxy_stop_signal)
            return false;
        if (n > 0 &&
            !fill(f->gdb_fd, f->gdb_in, &f->gdb_in_len, sizeof(f->gdb_in)))
            return false;
    }
}

/* src into dst[cap], cut to fit. */
static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* A console line ('O' and hex) rather than the reply. */
static bool is_console(const char *r)
{
    return r[0] == 'O' && r[1] && strcmp(r, "OK") != 0;
}

static void console(struct rv_front *f, const char *text)
{
    static char hex[4096];
    static const char digits[] = "0123456789abcdef";
    size_t o = 0;
    hex[o++] = 'O';
    for (const char *c = text; *c && o + 3 < sizeof(hex); c++) {
        hex[o++] = digits[(unsigned char)*c >> 4];
        hex[o++] = digits[*c & 15];
    }
    hex[o] = 0;
    send_text(f->gdb_fd, hex);
}

/* ---- the program's output ------------------------------------------------ */

static enum rv_stream_kind stream_kind(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return RV_OUT_PASS;
    if (S_ISREG(st.st_mode))
        return RV_OUT_FILE;
    if (isatty(fd))
        return RV_OUT_TTY;
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
        return RV_OUT_PIPE;
    return RV_OUT_PASS; /* /dev/null and the like: nothing written twice */
}

/* Bytes of stream s at offset at of the instance's: those beyond the
 * furthest any instance wrote go to the real stream. */
static void pass_on(struct rv_front *f, int s, const char *buf, size_t n)
{
    uint64_t at = f->run.out_seen[s], end = at + n;
    if (end > f->out_high[s]) {
        size_t skip = f->out_high[s] > at ? (size_t)(f->out_high[s] - at) : 0;
        (void)cli_write_all(s + 1, buf + skip, n - skip);
        f->out_high[s] = end;
    }
    f->run.out_seen[s] = end;
}

static void pump_output(struct rv_front *f)
{
    static char buf[65536];
    for (int s = 0; s < 2 && f->have_run; s++) {
        int fd = f->run.out[s];
        if (fd < 0)
            continue;
        for (;;) {
            ssize_t n;
            n = read(fd, buf, sizeof(buf));
            if (n <= 0)
                break;
            pass_on(f, s, buf, (size_t)n);
        }
    }
}

/* ---- instances ------------------------------------------------------------
 */

/*
 * A terminal for the instance's stream s (a terminal of hvrun's): a new
 * pseudo-terminal with the real one's settings and size, so the guest
 * sees a terminal as without gdb; the front end reads its master side
 * (*master, non-blocking) and passes on what no run before wrote. The
 * slave side, or -1.
 */
static int open_tty_for(int s, int *master)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[64];
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 ||
        ptsname_r(m, name, sizeof(name)) != 0) {
        if (m >= 0)
            close(m);
        return -1;
    }
    int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
        close(m);
        return -1;
    }
    struct termios t;
    struct winsize ws;
    if (tcgetattr(s + 1, &t) == 0)
        (void)tcsetattr(slave, TCSANOW, &t);
    if (ioctl(s + 1, TIOCGWINSZ, &ws) == 0)
        (void)ioctl(slave, TIOCSWINSZ, &ws);
    fcntl(m, F_SETFL, O_NONBLOCK);
    *master = m;
    return slave;
}

static void instance_child(struct rv_front *f, int fd, int sum_fd,
                           const int out[2])
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (f->in_kind == RV_IN_FILE) {
        /* its own description of the file, at the run's start */
        int in = open("/proc/self/fd/0", O_RDONLY);
        if (in >= 0) {
            (void)lseek(in, f->in_offset, SEEK_SET);
            dup2(in, 0);
            close(in);
        }
    }
    for (int s = 0; s < 2; s++)
        if (out[s] >= 0)
            dup2(out[s], s + 1);
    /* A file: the run's own description of it, at the length it had
     * when the run began (the front end cut it back there): what a
     * re-run writes is what the run before wrote, and the guest sees the
     * file as a run without gdb does. */
    int first = -1;
    for (int s = 0; s < 2; s++) {
        if (f->out_kind[s] != RV_OUT_FILE)
            continue;
        int nfd = s == 1 && f->out_shared ? first : -1;
        if (nfd < 0) {
            char proc[32];
            snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s + 1);
            nfd = open(proc, f->out_flags[s] & (O_ACCMODE | O_APPEND));
            if (nfd >= 0)
                (void)lseek(nfd, f->out_start[s], SEEK_SET);
        }
        if (nfd >= 0 && nfd != s + 1) {
            dup2(nfd, s + 1);
            if (nfd > 2)
                close(nfd);
        }
        if (s == 0)
            first = s + 1;
    }
    cli_gdb_checkpoint_set_sum_fd(sum_fd);
    struct run_options inner = *f->o;
    inner.gdb_instance = true;
    inner.gdb_instance_fd = fd;
    struct run_summary sum;
    memset(&sum, 0, sizeof(sum));
    int code =
        cli_run_once(&inner, f->path, f->detlog_path, f->journal_dir, &sum);
    fflush(NULL);
    (void)cli_write_all(sum_fd, &code, sizeof(code));
    (void)cli_write_all(sum_fd, &sum, sizeof(sum));
    _exit(code);
}

static void instance_end(struct rv_front *f)
{
    struct rv_instance *r = &f->run;
    if (!f->have_run)
        return;
    f->have_run = false;
    kill(r->pid, SIGKILL);
    if (r->restored) /* its checkpoint reaps it */
        for (int i = 0; i < 2000 && kill(r->pid, 0) == 0; i++)
            usleep(1000);
    else
        while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (r->passed_fd >= 0)
        close(r->passed_fd);
    r->passed_fd = -1;
    /* the stub spawners of restored instances end with them */
    for (int i = 0; i < f->nr_helpers;)
        if (waitpid(f->helpers[i], NULL, WNOHANG) == f->helpers[i])
            f->helpers[i] = f->helpers[--f->nr_helpers];
        else
            i++;
    close(r->fd);
    close(r->sum_fd);
    for (int s = 0; s < 2; s++)
        if (r->out[s] >= 0)
            close(r->out[s]);
    /* what a killed run left of its private /tmp */
    (void)proxy_scratch_sweep();
}

/* A new instance, stopped where the run starts for gdb; 0 or -1. */
static int instance_start(struct rv_front *f)
{
    struct rv_instance *r = &f->run;
    int sv[2], sp[2], outs[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    if (pipe2(sp, O_CLOEXEC) < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    memset(r, 0, sizeof(*r));
    r->passed_fd = -1;
    f->run_ckpt_id = 0;
    for (int s = 0; s < 2; s++) {
        r->out[s] = -1;
        if (f->out_kind[s] == RV_OUT_FILE) {
            (void)ftruncate(s + 1, f->out_start[s]);
        } else if (f->out_kind[s] == RV_OUT_TTY) {
            outs[s] = open_tty_for(s, &r->out[s]);
        } else if (f->out_kind[s] == RV_OUT_PIPE) {
            int p[2];
            if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
                /* the writer's end blocks as a stream does */
                fcntl(p[1], F_SETFL, 0);
                r->out[s] = p[0];
                outs[s] = p[1];
            }
        }
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        close(sp[0]);
        instance_child(f, sv[1], sp[1], outs);
    }
    close(sv[1]);
    close(sp[1]);
    for (int s = 0; s < 2; s++)
        if (outs[s] >= 0)
            close(outs[s]);
    if (pid < 0) {
        close(sv[0]);
        close(sp[0]);
        return -1;
    }
    r->pid = pid;
    r->fd = sv[0];
    r->sum_fd = sp[0];
    f->have_run = true;
    /* No acks between the front end and its instance. */
    static char pkt[RV_IN_MAX];
    size_t len;
    send_text(r->fd, "QStartNoAckMode");
    if (!instance_packet(f, pkt, sizeof(pkt), &len, false))
        return -1;
    r->in_len = 0; /* its '+' went with the reply's framing */
    return 0;
}

/* Sends pkt to the instance and takes its reply (console lines to gdb
 * if relay, else dropped) into out. false: the instance is gone. */
static bool ask(struct rv_front *f, const char *pkt, size_t len, char *out,
                size_t cap, size_t *out_len, bool relay)
{
    send_frame(f->run.fd, pkt, len);
    for (;;) {
        if (!instance_packet(f, out, cap, out_len, relay))
            return false;
        if (!is_console(out))
            return true;
        if (relay)
            send_frame(f->gdb_fd, out, *out_len);
    }
}

static bool query_where(struct rv_front *f, struct rv_where *w)
{
    static char out[RV_IN_MAX];
    size_t len;
    return ask(f, "qHvrunWhere", 11, out, sizeof(out), &len, false) &&
           parse_where(out, w);
}

/* ---- the log ----------------------------------------------------------------
 */

static struct rv_entry *append(struct rv_entry **log, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        struct rv_entry *g = realloc(*log, c * sizeof(**log));
        if (!g)
            return NULL;
        *log = g;
        *cap = c;
    }
    struct rv_entry *e = &(*log)[(*n)++];
    memset(e, 0, sizeof(*e));
    return e;
}

static void free_log(struct rv_entry *log, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(log[i].pkt);
    free(log);
}

/* A copy of log[0, n) with room for more (pkt strings copied too). */
static struct rv_entry *copy_log(const struct rv_entry *log, size_t n,
                                 size_t extra)
{
    struct rv_entry *c = calloc(n + extra + 1, sizeof(*c));
    for (size_t i = 0; c && i < n; i++) {
        c[i] = log[i];
        if (log[i].pkt) {
            c[i].pkt = malloc(log[i].len + 1);
            if (c[i].pkt)
                memcpy(c[i].pkt, log[i].pkt, log[i].len + 1);
        }
    }
    return c;
}

static bool is_resume(const char *p)
{
    return p[0] == 'c' || p[0] == 'C' || p[0] == 's' || p[0] == 'S' ||
           (strncmp(p, "vCont;", 6) == 0);
}

/* Whether a packet steers the run (logged, and sent again by a replay). */
static bool steers(const char *p)
{
    switch (p[0]) {
    case 'Z':
    case 'z':
    case 'H':
    case 'M':
    case 'X':
    case 'G':
    case 'P':
    case 'D':
        return true;
    case 'Q':
        return strcmp(p, "QStartNoAckMode") != 0;
    case 'q':
        return strncmp(p, "qSupported", 10) == 0 ||
               strncmp(p, "qRcmd,", 6) == 0;
    default:
        return is_resume(p);
    }
}

/* A Z (add) or z (remove) of an address in a set of breakpoints. */
static void z_address(uint64_t *set, int *n, int cap, bool add,
                      uint64_t addr)
{
    int i = 0;
    while (i < *n && set[i] != addr)
        i++;
    if (add && i == *n && *n < cap)
        set[(*n)++] = addr;
    else if (!add && i < *n)
        set[i] = set[--*n];
}

/* The same for a watchpoint or hardware breakpoint (its type and address
 * name it). */
static void z_watch(struct rv_watch *set, int *n, int cap, bool add,
                    struct rv_watch w)
{
    int i = 0;
    while (i < *n && (set[i].addr != w.addr || set[i].type != w.type))
        i++;
    if (add && i == *n && *n < cap)
        set[(*n)++] = w;
    else if (!add && i < *n)
        set[i] = set[--*n];
}

/* gdb's breakpoints and watchpoints, kept from its Z and z. */
static void track_state(struct rv_front *f, const char *p)
{
    if ((p[0] != 'Z' && p[0] != 'z') || p[2] != ',')
        return;
    const char *a = p + 3;
    char *end;
    uint64_t addr = strtoull(a, &end, 16);
    unsigned len = *end == ',' ? (unsigned)strtoul(end + 1, NULL, 16) : 1;
    if (p[1] == '0' || p[1] == '1')
        z_address(f->bps, &f->nr_bps, RV_MAX_BPS, p[0] == 'Z', addr);
    else
        z_watch(f->watches, &f->nr_watches, 4, p[0] == 'Z',
                (struct rv_watch){p[1], addr, len});
}

/* ---- replaying
 * ---------------------------------------------------------------- */

static struct rv_ref *ref_of(struct rv_front *f, uint64_t addr)
{
    for (int i = 0; i < f->nr_refs; i++)
        if (f->refs[i].addr == addr)
            return &f->refs[i];
    if (f->nr_refs == RV_MAX_REFS)
        return NULL;
    f->refs[f->nr_refs] = (struct rv_ref){addr, 0, 0, false};
    return &f->refs[f->nr_refs++];
}

static bool say(struct rv_front *f, const char *pkt)
{
    static char out[RV_IN_MAX];
    size_t len;
    return ask(f, pkt, strlen(pkt), out, sizeof(out), &len, false);
}

/* Sends a Z0 or z0 for r; false: the instance is gone. */
static bool hold(struct rv_front *f, struct rv_ref *r, bool in)
{
    static char out[RV_IN_MAX];
    char pkt[64];
    size_t len;
    snprintf(pkt, sizeof(pkt), "%c0,%" PRIx64 ",1", in ? 'Z' : 'z', r->addr);
    if (!ask(f, pkt, strlen(pkt), out, sizeof(out), &len, false))
        return false;
    r->held = in && strcmp(out, "OK") == 0;
    return true;
}

/* The breakpoints the instance could not take yet, tried again. */
static bool retry_refs(struct rv_front *f)
{
    for (int i = 0; i < f->nr_refs; i++) {
        struct rv_ref *r = &f->refs[i];
        if (r->log + r->instr > 0 && !r->held && !hold(f, r, true))
            return false;
    }
    return true;
}

/* A breakpoint more (or less) for owner log or an instrument: the
 * instance's memory changes only as the sum goes from or to zero. */
static bool ref_bp(struct rv_front *f, uint64_t addr, bool log, int delta)
{
    struct rv_ref *r = ref_of(f, addr);
    if (!r)
        return false;
    int before = r->log + r->instr;
    if (log)
        r->log += delta;
    else
        r->instr += delta;
    if (r->log < 0)
        r->log = 0;
    int after = r->log + r->instr;
    if (!before && after)
        return hold(f, r, true);
    /* gdb takes its breakpoint out (to step over it, mostly): out of
     * memory until the next continue or stop, even where an instrument
     * keeps it, or the step would trap there twice for one arrival. */
    if ((before && !after) || (log && delta < 0 && r->held))
        return !r->held || hold(f, r, false);
    return true;
}

static bool watch_packet(struct rv_front *f, const struct rv_watch *w, bool set)
{
    char pkt[64];
    snprintf(pkt, sizeof(pkt), "%c%c,%" PRIx64 ",%x", set ? 'Z' : 'z', w->type,
             w->addr, w->len);
    return say(f, pkt);
}

static bool arm(struct rv_front *f, struct rv_active *a, bool on)
{
    const struct rv_instr *in = a->instr;
    for (int i = 0; i < in->nr_bps; i++)
        if (!ref_bp(f, in->bps[i], false, on ? 1 : -1))
            return false;
    for (int i = 0; i < in->nr_watches; i++)
        if (!watch_packet(f, &in->watches[i], on))
            return false;
    a->armed = on;
    return true;
}

/* One of the log's non-resume packets: breakpoints through the counts. */
static bool replay_packet(struct rv_front *f, const struct rv_entry *e)
{
    static char out[RV_IN_MAX];
    size_t len;
    if ((e->pkt[0] == 'Z' || e->pkt[0] == 'z') && e->pkt[1] == '0') {
        uint64_t addr = strtoull(e->pkt + 3, NULL, 16);
        return ref_bp(f, addr, true, e->pkt[0] == 'Z' ? 1 : -1);
    }
    return ask(f, e->pkt, e->len, out, sizeof(out), &len, false);
}

/* The next arm to wait for (smallest event), or NULL. */
static struct rv_active *pending_arm(struct rv_front *f)
{
    struct rv_active *best = NULL;
    for (int i = 0; i < f->nr_act; i++)
        if (!f->act[i].armed && f->act[i].arm_id >= 0 &&
            (!best || f->act[i].arm_event < best->arm_event))
            best = &f->act[i];
    return best;
}

static bool set_goto(struct rv_front *f, uint64_t now)
{
    struct rv_active *a = pending_arm(f);
    if (!a || a->arm_event <= now || f->goto_set == a->arm_event)
        return true;
    char cmd[64], pkt[160];
    int n = snprintf(cmd, sizeof(cmd), "goto %" PRIu64, a->arm_event);
    int o = snprintf(pkt, sizeof(pkt), "qRcmd,");
    for (int i = 0; i < n; i++)
        o += snprintf(pkt + o, sizeof(pkt) - (size_t)o, "%02x",
                      (unsigned char)cmd[i]);
    f->goto_set = a->arm_event;
    return say(f, pkt);
}

/* The stop-at-step the instance should hold: the nearest pending cut by
 * steps of an armed instrument. */
static bool set_step_cut(struct rv_front *f)
{
    uint64_t best = 0;
    int arm_id = -1;
    for (int i = 0; i < f->nr_act; i++) {
        const struct rv_active *a = &f->act[i];
        if (!a->armed || a->cut_entry < 0)
            continue;
        const struct rv_entry *c = &f->plan[a->cut_entry];
        if (!c->by_steps)
            continue;
        uint64_t at = a->arm_steps + c->steps;
        if (!best || at < best) {
            best = at;
            arm_id = a->arm_id;
        }
    }
    if (best == f->step_cut)
        return true;
    f->step_cut = best;
    f->step_cut_arm = arm_id;
    char pkt[64];
    snprintf(pkt, sizeof(pkt), "QHvrunStopAtStep:%" PRIu64, best);
    return say(f, pkt);
}

/* The arms due at this stop (where w) are made; arm_id's count-0 cut
 * reached, if one was: its index in act, else -1. */
static int arm_due(struct rv_front *f, const struct rv_where *w, bool scan,
                   size_t entry)
{
    int cut = -1;
    for (int i = 0; i < f->nr_act; i++) {
        struct rv_active *a = &f->act[i];
        if (a->armed || a->arm_id < 0 || a->arm_event > w->events)
            continue;
        if (!arm(f, a, true))
            return -2;
        a->count = 0;
        a->arm_steps = w->steps;
        if (a->cut_entry >= 0) {
            const struct rv_entry *c = &f->plan[a->cut_entry];
            if ((!c->by_steps && c->count == 0) ||
                (c->by_steps && c->steps == 0))
                cut = i;
        }
        /* bs: the arm is a point of the thread too (not bc's: no stop) */
        if (scan && a->arm_id == f->scan_arm && a->instr->step_tid &&
            strcmp(w->key, f->scan_skip_key) != 0) {
            f->note =
                (struct rv_note){true, entry, 0, 0, f->stops, w->steps, *w, ""};
            snprintf(f->note.reply, sizeof(f->note.reply), "T05thread:p%x.%x;",
                     w->pid, w->tid);
        }
    }
    if (cut < 0 && (!set_goto(f, w->events) || !set_step_cut(f)))
        return -2;
    return cut;
}

/* Which kind of instrument stop reply r (at w) is for instr: 1 a
 * breakpoint, 2 a watchpoint, 3 a step of its thread, 0 none. */
static int instr_stop(const struct rv_instr *in, const char *r,
                      const struct rv_where *w)
{
    if (strstr(r, "swbreak:")) {
        for (int i = 0; i < in->nr_bps; i++)
            if (in->bps[i] == w->rip)
                return 1;
        return 0;
    }
    const char *wp = strstr(r, "watch:");
    if (wp) {
        uint64_t addr = strtoull(wp + 6, NULL, 16);
        for (int i = 0; i < in->nr_watches; i++)
            if (in->watches[i].addr == addr)
                return 2;
        return 0;
    }
    if (in->step_tid && w->tid == in->step_tid && strncmp(r, "T05", 3) == 0)
        return 3;
    return 0;
}

/* The resume packet as sent while instruments are armed: a continue
 * while a thread is instrumented to step steps it. */
static void resume_form(struct rv_front *f, const struct rv_entry *e, char *out,
                        size_t cap)
{
    snprintf(out, cap, "%s", e->pkt);
    for (int i = 0; i < f->nr_act; i++) {
        const struct rv_instr *in = f->act[i].instr;
        if (!f->act[i].armed || !in->step_tid)
            continue;
        bool cont =
            strcmp(e->pkt, "c") == 0 ||
            (strncmp(e->pkt, "vCont;c", 7) == 0 && !strchr(e->pkt + 6, 's') &&
             !strchr(e->pkt + 6, 'S') && !strchr(e->pkt + 6, 'C'));
        if (cont)
            snprintf(out, cap, "vCont;s:p%x.%x;c", in->step_pid, in->step_tid);
    }
}

enum replay_end { REPLAY_DONE, REPLAY_CUT, REPLAY_FAILED };

/* After an instrument's breakpoint stop at addr of thread pid.tid: the
 * thread steps over it (taken out for one instruction). The step's stop
 * into r/w. false: the instance failed. */
static bool step_over(struct rv_front *f, uint64_t addr, int pid, int tid,
                      const struct rv_entry *e, char *r, size_t cap,
                      struct rv_where *w)
{
    struct rv_ref *ref = ref_of(f, addr);
    char pkt[64];
    size_t len;
    snprintf(pkt, sizeof(pkt), "z0,%" PRIx64 ",1", addr);
    if (!say(f, pkt))
        return false;
    /* A step of this thread in the log is that step itself. */
    bool log_step = (e->pkt[0] == 's' && !e->pkt[1]) ||
                    (strncmp(e->pkt, "vCont;s", 7) == 0);
    if (log_step)
        snprintf(pkt, sizeof(pkt), "%s", e->pkt);
    else
        snprintf(pkt, sizeof(pkt), "vCont;s:p%x.%x", pid, tid);
    if (!ask(f, pkt, strlen(pkt), r, cap, &len, false) || !query_where(f, w))
        return false;
    if (ref && ref->log + ref->instr > 0) {
        snprintf(pkt, sizeof(pkt), "Z0,%" PRIx64 ",1", addr);
        if (!say(f, pkt))
            return false;
    }
    return true;
}

/* Whether this stop is a cut of an armed instrument: its index in act,
 * or -1. Counts the stop for every instrument it belongs to. */
static int count_stop(struct rv_front *f, const char *r,
                      const struct rv_where *w, bool scan, size_t entry,
                      bool *any)
{
    int cut = -1;
    *any = false;
    /* A cut by steps: the instance's stop at that step (a point of the
     * other instruments too: a thread's step, say). */
    if (f->step_cut && w->steps == f->step_cut && strncmp(r, "T05", 3) == 0 &&
        !strstr(r, "swbreak") && !strstr(r, "watch:")) {
        for (int i = 0; i < f->nr_act; i++)
            if (f->act[i].arm_id == f->step_cut_arm)
                cut = i;
        f->step_cut = 0;
        *any = true;
    }
    for (int i = 0; i < f->nr_act; i++) {
        struct rv_active *a = &f->act[i];
        int kind = a->armed ? instr_stop(a->instr, r, w) : 0;
        if (!kind)
            continue;
        *any = true;
        a->count++;
        if (a->cut_entry >= 0 && cut < 0) {
            const struct rv_entry *c = &f->plan[a->cut_entry];
            if (!c->by_steps && c->count == a->count)
                cut = i;
        }
        if (scan && a->arm_id == f->scan_arm &&
            strcmp(w->key, f->scan_skip_key) != 0) {
            f->note_prev = f->note;
            trace("note %" PRIu64 " kind %d at %s: %.80s", a->count, kind,
                  w->key, r);
            f->note = (struct rv_note){true,     entry,        a->count, kind,
                                       f->stops, a->arm_steps, *w,       ""};
            copy_str(f->note.reply, sizeof(f->note.reply), r);
        }
    }
    return cut;
}

/* Whether stop r at w is the one the log's resume e made: the same
 * point and reply, but for a watchpoint only an instrument has (the
 * log's step that wrote the bytes a scan watches). */
static bool expected(const struct rv_entry *e, const char *r,
                     const struct rv_where *w)
{
    if (strcmp(w->key, e->where.key) != 0)
        return false;
    if (strcmp(r, e->reply) == 0)
        return true;
    const char *wp = strstr(r, "watch:");
    if (!wp || strstr(e->reply, "watch:"))
        return false;
    const char *end = strchr(wp, ';');
    size_t head = (size_t)(wp - r);
    if (head >= 1 && (r[head - 1] == 'a' || r[head - 1] == 'r'))
        head--; /* awatch:, rwatch: */
    char plain[RV_REPLY_MAX];
    snprintf(plain, sizeof(plain), "%.*s%s", (int)head, r, end ? end + 1 : "");
    return strcmp(plain, e->reply) == 0;
}

/* Resume entry e of the plan (index i), until the stop it made or a cut. */
static enum replay_end replay_resume(struct rv_front *f, size_t i, bool scan,
                                     int *cut)
{
    static char r[RV_IN_MAX];
    const struct rv_entry *e = &f->plan[i];
    char pkt[RV_REPLY_MAX];
    size_t len;
    struct rv_where w;
    bool have_w = false;
    int over_tid = 0; /* the thread that just stepped over a breakpoint */
    bool step = strchr(e->pkt, 's') || strchr(e->pkt, 'S');
    resume_form(f, e, pkt, sizeof(pkt));
    if ((!step && !retry_refs(f)) ||
        !ask(f, pkt, strlen(pkt), r, sizeof(r), &len, false))
        return REPLAY_FAILED;
    for (;;) {
        if (r[0] == 'W' || r[0] == 'X')
            return strcmp(r, e->reply) == 0 ? REPLAY_DONE : REPLAY_FAILED;
        if (!have_w && !query_where(f, &w))
            return REPLAY_FAILED;
        have_w = false;
        f->stops++;
        if (!retry_refs(f))
            return REPLAY_FAILED;
        bool any = false;
        struct rv_active *due = pending_arm(f);
        bool arm_here = strncmp(r, "T00", 3) == 0 && due &&
                        w.events >= due->arm_event;
        if (expected(e, r, &w)) {
            /* the log's own stop: a point of the instruments too (a hit
             * of a breakpoint, a step of the thread); a goto's stop of
             * the log's at an arm's event is the arm's too (a goto back
             * to a stop of an earlier goto: monitor restart of a
             * checkpoint taken there) */
            *cut = -1;
            if (arm_here) {
                f->goto_set = 0;
                *cut = arm_due(f, &w, scan, i);
                if (*cut == -2)
                    return REPLAY_FAILED;
            }
            if (*cut < 0)
                *cut = count_stop(f, r, &w, scan, i, &any);
            if (*cut < 0)
                return REPLAY_DONE;
            trace("cut at %s: %.80s", w.key, r);
            f->where = w;
            return REPLAY_CUT;
        }
        if (arm_here) {
            f->goto_set = 0;
            *cut = arm_due(f, &w, scan, i);
            if (*cut == -2)
                return REPLAY_FAILED;
            any = true;
        } else {
            *cut = count_stop(f, r, &w, scan, i, &any);
        }
        if (*cut >= 0) {
            trace("cut at %s: %.80s", w.key, r);
            f->where = w;
            return REPLAY_CUT;
        }
        /* the plain stop of a step over an instrument's breakpoint */
        if (!any && over_tid == w.tid && strncmp(r, "T05", 3) == 0 &&
            !strstr(r, "swbreak") && !strstr(r, "watch:"))
            any = true;
        over_tid = 0;
        if (!any) {
            trace("replay: unexpected stop at %s: %.80s (wanted %s: %.80s)",
                  w.key, r, e->where.key, e->reply);
            return REPLAY_FAILED; /* not the run the log saw */
        }
        if (strstr(r, "swbreak:")) {
            if (!step_over(f, w.rip, w.pid, w.tid, e, r, sizeof(r), &w))
                return REPLAY_FAILED;
            have_w = true;
            over_tid = w.tid;
            continue;
        }
        resume_form(f, e, pkt, sizeof(pkt));
        if (!ask(f, pkt, strlen(pkt), r, sizeof(r), &len, false))
            return REPLAY_FAILED;
    }
}

/*
 * Replays plan[0, n) in the current instance (new): the run is then at
 * the plan's end, or at the cut that ended it (f->cut_at its resume).
 * A scan notes its instrument's stops in f->note. false: the run did not
 * go as the log says.
 */
static void replay_init(struct rv_front *f, struct rv_entry *plan, size_t n)
{
    f->plan = plan;
    f->nr_plan = n;
    f->nr_act = 0;
    f->nr_refs = 0;
    f->goto_set = 0;
    f->step_cut = 0;
    f->note.any = false;
    f->note_prev.any = false;
    f->stops = 0;
    f->cut_at = (size_t)-1;
    f->mid_resume = (size_t)-1;
}

/* replay's loop, from plan entry `from` on (the instance standing at the
 * point before it, its breakpoints the log's there). */
static bool replay_loop(struct rv_front *f, struct rv_entry *plan, size_t n,
                        bool scan, size_t from)
{
    struct rv_where w;
    if (!query_where(f, &w))
        return false;
    uint64_t now = w.events;
    for (size_t i = from; i < n; i++) {
        struct rv_entry *e = &plan[i];
        int cut = -1;
        if (e->kind == RV_ARM) {
            if (f->nr_act == RV_MAX_ACTIVE)
                return false;
            struct rv_active *a = &f->act[f->nr_act++];
            *a = (struct rv_active){
                e->arm_id, &e->instr, e->arm_event, false, 0, 0, -1};
            for (size_t k = i + 1; k < n; k++)
                if (plan[k].kind == RV_CUT && plan[k].arm_id == e->arm_id)
                    a->cut_entry = (long)k;
            if (!query_where(f, &w))
                return false;
            now = w.events;
            if (e->arm_event <= now) {
                e->arm_event = now; /* armed at this stop */
                a->arm_event = now;
                cut = arm_due(f, &w, scan, i);
                if (cut == -2)
                    return false;
            } else if (!set_goto(f, now)) {
                return false;
            }
        } else if (e->kind == RV_CUT) {
            continue; /* reached through its resume */
        } else if (!e->resume) {
            if (!replay_packet(f, e))
                return false;
            continue;
        } else {
            enum replay_end end = replay_resume(f, i, scan, &cut);
            if (end == REPLAY_FAILED)
                return false;
        }
        if (cut < 0)
            continue;
        /* The cut: its instrument goes; the plan goes on after its CUT. */
        struct rv_active *a = &f->act[cut];
        f->cut_at = f->mid_resume != (size_t)-1 && i < f->mid_resume
                        ? f->mid_resume
                        : i;
        if (!arm(f, a, false) || !set_step_cut(f))
            return false;
        a->arm_id = -1;
        if (a->cut_entry >= 0 && (size_t)a->cut_entry > i)
            i = (size_t)a->cut_entry;
    }
    /* A note at the stop the log ends at is that point, not one before. */
    if (scan && f->note.any && f->note.seq == f->stops)
        f->note =
            f->note_prev.seq == f->stops ? (struct rv_note){0} : f->note_prev;
    return true;
}

static bool replay(struct rv_front *f, struct rv_entry *plan, size_t n,
                   bool scan)
{
    replay_init(f, plan, n);
    return replay_loop(f, plan, n, scan, 0);
}

/* ---- going back
 * --------------------------------------------------------------- */

/* The files of directory path gone (a journal: its log and copies). */
static void empty_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* A new instance at the start, the files the last one changed put back
 * first (its journal, as --verify's second run has them). */
static bool restart(struct rv_front *f)
{
    instance_end(f);
    for (int s = 0; s < 2; s++)
        f->run.out_seen[s] = 0;
    if (f->journal_dir) {
        (void)cli_verify_undo(f->journal_dir);
        empty_dir(f->journal_dir);
    }
    return instance_start(f) == 0;
}

/* ---- checkpoints -------------------------------------------------------- */

/* A packet that changes the run's state (memory, registers, a signal
 * given to it): a checkpoint is no point of a run whose log has one. */
static bool writes_state(const char *p)
{
    return p[0] == 'M' || p[0] == 'X' || p[0] == 'G' || p[0] == 'P' ||
           p[0] == 'C' || p[0] == 'S' ||
           (strncmp(p, "vCont;", 6) == 0 &&
            (strstr(p, ";C") || strstr(p, ";S")));
}

/* What the instance holds of gdb's after log[0, upto): its software
 * breakpoints, its other Z (hardware breakpoints, watchpoints), and the
 * last H and QPassSignals packets. */
struct rv_held {
    uint64_t z0[RV_MAX_BPS];
    int nr_z0;
    struct rv_watch other[8];
    int nr_other;
    const char *hg, *hc, *pass;
};

static void held_after(const struct rv_entry *log, size_t upto,
                       struct rv_held *h)
{
    memset(h, 0, sizeof(*h));
    for (size_t i = 0; i < upto; i++) {
        const char *p = log[i].pkt;
        if (log[i].kind != RV_PACKET || !p || log[i].resume)
            continue;
        if (strncmp(p, "Hg", 2) == 0)
            h->hg = p;
        else if (strncmp(p, "Hc", 2) == 0)
            h->hc = p;
        else if (strncmp(p, "QPassSignals:", 13) == 0)
            h->pass = p;
        if ((p[0] != 'Z' && p[0] != 'z') || p[1] < '0' || p[1] > '4' ||
            p[2] != ',')
            continue;
        char *end;
        uint64_t addr = strtoull(p + 3, &end, 16);
        unsigned len = *end == ',' ? (unsigned)strtoul(end + 1, NULL, 16) : 1;
        if (p[1] == '0')
            z_address(h->z0, &h->nr_z0, RV_MAX_BPS, p[0] == 'Z', addr);
        else
            z_watch(h->other, &h->nr_other, 8, p[0] == 'Z',
                    (struct rv_watch){p[1], addr, len});
    }
}

static bool log_writes(const struct rv_entry *log, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (log[i].kind == RV_PACKET && log[i].pkt && writes_state(log[i].pkt))
            return true;
    return false;
}

/* Why no checkpoint is taken now, or NULL. */
static const char *no_checkpoint(struct rv_front *f)
{
    if (f->refusal || f->exited || (f->where.ext && !f->o->tap_replay))
        return "the run cannot be run again here (see reverse execution)";
    if (log_writes(f->log, f->nr_log))
        return "gdb changed the run's memory or registers or gave it a "
               "signal";
    return NULL;
}

static void drop_checkpoint(struct rv_front *f, int i)
{
    close(f->ckpts[i].chan);
    memmove(&f->ckpts[i], &f->ckpts[i + 1],
            (size_t)(f->nr_ckpts - i - 1) * sizeof(f->ckpts[0]));
    f->nr_ckpts--;
}

/* More automatic checkpoints than allowed: every other one goes (never
 * the live instance's) and the spacing doubles. */
static void thin_checkpoints(struct rv_front *f)
{
    int nauto = 0;
    for (int i = 0; i < f->nr_ckpts; i++)
        nauto += f->ckpts[i].automatic;
    if (nauto <= f->ckpt_auto_max)
        return;
    int k = 0;
    for (int i = 0; i < f->nr_ckpts;) {
        if (f->ckpts[i].automatic && k++ % 2 == 0 &&
            f->ckpts[i].id != f->run_ckpt_id) {
            drop_checkpoint(f, i);
            continue;
        }
        i++;
    }
    f->ckpt_every *= 2;
}

/* A checkpoint of the instance at its stop (f->where); its id, or 0
 * (why said in why). */
static int take_checkpoint(struct rv_front *f, bool automatic, char *why,
                           size_t why_len)
{
    static char out[RV_IN_MAX];
    size_t n;
    const char *no = no_checkpoint(f);
    for (int i = 0; automatic && i < f->nr_ckpts; i++)
        if (strcmp(f->ckpts[i].where.key, f->where.key) == 0)
            return f->ckpts[i].id; /* one there already */
    if (no || f->nr_ckpts == RV_MAX_CKPTS) {
        snprintf(why, why_len, "%s", no ? no : "too many checkpoints");
        return 0;
    }
    pump_output(f); /* (the output so far is the checkpoint's) */
    if (!ask(f, "QHvrunCheckpoint", 16, out, sizeof(out), &n, false)) {
        snprintf(why, why_len, "the run is gone");
        return 0;
    }
    if (strcmp(out, "OK") != 0 || f->run.passed_fd < 0) {
        copy_str(why, why_len,
                 strncmp(out, "E.", 2) == 0 ? out + 2 : "refused");
        return 0;
    }
    struct rv_checkpoint *c = &f->ckpts[f->nr_ckpts++];
    memset(c, 0, sizeof(*c));
    c->id = ++f->next_ckpt_id;
    c->automatic = automatic;
    c->chan = f->run.passed_fd;
    f->run.passed_fd = -1;
    c->where = f->where;
    memcpy(c->out_seen, f->run.out_seen, sizeof(c->out_seen));
    struct rv_held h;
    held_after(f->log, f->nr_log, &h);
    memcpy(c->bps, h.z0, sizeof(c->bps));
    c->nr_bps = h.nr_z0;
    memcpy(c->watches, h.other, sizeof(c->watches));
    c->nr_watches = h.nr_other;
    trace("checkpoint %d at %s", c->id, c->where.key);
    int id = c->id;
    if (automatic)
        thin_checkpoints(f);
    return id;
}

/* The entry of plan[0, n) a run at checkpoint c stands before: the run
 * passes c inside a resume (after the stop before it, before its own)
 * with no state written before and no instrument armed across it. */
static bool plan_start(const struct rv_front *f, const struct rv_entry *plan,
                       size_t n, const struct rv_checkpoint *c, size_t *from,
                       size_t *resume)
{
    uint64_t at = c->where.events, before = f->start_events;
    size_t j0 = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rv_entry *e = &plan[i];
        if (e->kind == RV_PACKET && e->pkt && writes_state(e->pkt))
            return false;
        if (e->kind == RV_CUT) {
            if (!e->where.events)
                return false;
            before = e->where.events;
            j0 = i + 1;
            continue;
        }
        if (e->kind != RV_PACKET || !e->resume)
            continue;
        bool cut = i + 1 < n && plan[i + 1].kind == RV_CUT &&
                   plan[i + 1].where.events;
        uint64_t end = cut ? plan[i + 1].where.events : e->where.events;
        if (before < at && at < end) {
            for (size_t k = 0; k < n; k++) {
                if (plan[k].kind != RV_ARM)
                    continue;
                if (k >= j0) {
                    if (plan[k].arm_event < at)
                        return false;
                    continue;
                }
                size_t m = k + 1;
                while (m < n && !(plan[m].kind == RV_CUT &&
                                  plan[m].arm_id == plan[k].arm_id))
                    m++;
                if (m >= j0)
                    return false; /* armed across the checkpoint */
            }
            *from = j0;
            *resume = i;
            return true;
        }
        if (end >= at || !end)
            return false;
        if (!cut) {
            before = end;
            j0 = i + 1;
        }
    }
    return false;
}

/* A new instance restored from checkpoint c (the files the last one
 * changed put back first). */
static bool restore_checkpoint(struct rv_front *f,
                               const struct rv_checkpoint *c)
{
    instance_end(f);
    if (f->journal_dir) {
        (void)cli_verify_undo(f->journal_dir);
        empty_dir(f->journal_dir);
    }
    struct rv_instance *r = &f->run;
    memset(r, 0, sizeof(*r));
    r->passed_fd = -1;
    int sv[2] = {-1, -1}, sp[2] = {-1, -1}, outs[2] = {-1, -1}, helper = -1,
        hpid = -1;
    char why[256] = "";
    bool ok = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0 &&
              pipe2(sp, O_CLOEXEC) == 0;
    for (int s = 0; s < 2; s++) {
        r->out[s] = -1;
        if (f->out_kind[s] == RV_OUT_TTY) {
            outs[s] = open_tty_for(s, &r->out[s]);
        } else if (f->out_kind[s] == RV_OUT_PIPE) {
            int p[2];
            if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
                fcntl(p[1], F_SETFL, 0);
                r->out[s] = p[0];
                outs[s] = p[1];
            }
        }
    }
    if (ok && cli_gdb_helper_start(f->o->backend, &helper, &hpid, why,
                                   sizeof(why)) == 0 &&
        f->nr_helpers < (int)(sizeof(f->helpers) / sizeof(f->helpers[0])))
        f->helpers[f->nr_helpers++] = hpid;
    int fds[5] = {sv[1], helper, sp[1], outs[0], outs[1]}, pid = 0;
    long long off[3] = {-1, -1, -1};
    ok = ok && helper >= 0 &&
         cli_gdb_checkpoint_restore(c->chan, fds, &pid, off, why,
                                    sizeof(why)) == 0;
    for (int k = 0; k < 5; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    if (!ok) {
        trace("restore of checkpoint %d failed: %s", c->id, why);
        for (int s = 0; s < 2; s++)
            if (r->out[s] >= 0)
                close(r->out[s]);
        if (sv[0] >= 0)
            close(sv[0]);
        if (sp[0] >= 0)
            close(sp[0]);
        return false;
    }
    r->pid = pid;
    r->fd = sv[0];
    r->sum_fd = sp[0];
    r->restored = true;
    f->have_run = true;
    for (int s = 0; s < 2; s++) {
        r->out_seen[s] = c->out_seen[s];
        if (f->out_kind[s] == RV_OUT_FILE && off[s + 1] >= 0)
            (void)ftruncate(s + 1, (off_t)off[s + 1]);
    }
    f->run_ckpt_id = c->id;
    f->goto_fwd = 0;
    trace("restored checkpoint %d (pid %d)", c->id, pid);
    return true;
}

static bool say_if(struct rv_front *f, const char *pkt)
{
    return !pkt || say(f, pkt);
}

/* The plan from entry `from` on, in an instance restored from c: its
 * breakpoints and watchpoints made the log's there first. */
static bool replay_from(struct rv_front *f, struct rv_entry *plan, size_t n,
                        bool scan, const struct rv_checkpoint *c, size_t from,
                        size_t resume)
{
    replay_init(f, plan, n);
    f->mid_resume = resume;
    struct rv_held want;
    held_after(plan, from, &want);
    char pkt[64];
    for (int k = 0; k < c->nr_bps; k++) {
        bool keep = false;
        for (int j = 0; j < want.nr_z0; j++)
            keep |= want.z0[j] == c->bps[k];
        snprintf(pkt, sizeof(pkt), "z0,%" PRIx64 ",1", c->bps[k]);
        if (!keep && !say(f, pkt))
            return false;
    }
    for (int j = 0; j < want.nr_z0; j++) {
        struct rv_ref *r = ref_of(f, want.z0[j]);
        if (!r)
            return false;
        r->log = 1;
        bool had_it = false;
        for (int k = 0; k < c->nr_bps; k++)
            had_it |= c->bps[k] == want.z0[j];
        if (had_it)
            r->held = true;
        else if (!hold(f, r, true))
            return false;
    }
    for (int k = 0; k < c->nr_watches; k++) {
        bool keep = false;
        for (int j = 0; j < want.nr_other; j++)
            keep |= want.other[j].addr == c->watches[k].addr &&
                    want.other[j].type == c->watches[k].type;
        if (!keep && !watch_packet(f, &c->watches[k], false))
            return false;
    }
    for (int j = 0; j < want.nr_other; j++) {
        bool had_it = false;
        for (int k = 0; k < c->nr_watches; k++)
            had_it |= want.other[j].addr == c->watches[k].addr &&
                      want.other[j].type == c->watches[k].type;
        if (!had_it && !watch_packet(f, &want.other[j], true))
            return false;
    }
    if (!say_if(f, want.hg) || !say_if(f, want.hc) || !say_if(f, want.pass))
        return false;
    trace("replay from entry %zu of %zu (resume %zu)", from, n, resume);
    return replay_loop(f, plan, n, scan, from);
}

/* The plan replayed in a new instance: from the latest checkpoint it can
 * start from, else from the start of the run. */
static bool run_plan(struct rv_front *f, struct rv_entry *plan, size_t n,
                     bool scan)
{
    int best = -1;
    size_t from = 0, resume = 0;
    for (int i = 0; i < f->nr_ckpts; i++) {
        size_t j, ri;
        if (plan_start(f, plan, n, &f->ckpts[i], &j, &ri) &&
            (best < 0 ||
             f->ckpts[i].where.events > f->ckpts[best].where.events)) {
            best = i;
            from = j;
            resume = ri;
        }
    }
    if (best >= 0) {
        const struct rv_checkpoint *c = &f->ckpts[best];
        if (restore_checkpoint(f, c) &&
            replay_from(f, plan, n, scan, c, from, resume))
            return true;
        trace("replay from checkpoint %d failed: from the start", c->id);
    }
    return restart(f) && replay(f, plan, n, scan);
}

/* The log with an arm of in at event from inserted before the resume
 * during which the run reaches it; its length in *n. */
static struct rv_entry *insert_arm(const struct rv_entry *src, size_t nr,
                                   uint64_t start, const struct rv_instr *in,
                                   uint64_t from, size_t *n, int arm_id)
{
    size_t at = nr;
    for (size_t i = 0; i < nr; i++) {
        const struct rv_entry *e = &src[i];
        if (!(e->kind == RV_PACKET && e->resume))
            continue;
        uint64_t end = e->where.events;
        if (i + 1 < nr && src[i + 1].kind == RV_CUT && src[i + 1].where.events)
            end = src[i + 1].where.events;
        if (end >= from) {
            at = i;
            break;
        }
    }
    struct rv_entry *plan = copy_log(src, nr, 1);
    if (!plan)
        return NULL;
    memmove(plan + at + 1, plan + at, (nr - at) * sizeof(*plan));
    struct rv_entry *arm_e = &plan[at];
    memset(arm_e, 0, sizeof(*arm_e));
    arm_e->kind = RV_ARM;
    arm_e->arm_id = arm_id;
    arm_e->instr = *in;
    uint64_t before = start;
    for (size_t k = at; k-- > 0;)
        if ((plan[k].kind == RV_PACKET && plan[k].resume) ||
            plan[k].kind == RV_CUT) {
            before = plan[k].where.events;
            break;
        }
    arm_e->arm_event = from > before ? from : 0;
    *n = nr + 1;
    return plan;
}

static struct rv_entry *plan_with_arm(struct rv_front *f,
                                      const struct rv_instr *in, uint64_t from,
                                      size_t *n, int arm_id)
{
    return insert_arm(f->log, f->nr_log, f->start_events, in, from, n,
                      arm_id);
}

/* A scan's plan ended at event upto (a stretch after it was scanned
 * already): an arm of nothing there whose cut ends the plan. */
static struct rv_entry *bound_plan(struct rv_front *f, struct rv_entry *plan,
                                   size_t *n, uint64_t upto)
{
    struct rv_instr none;
    memset(&none, 0, sizeof(none));
    int id = f->next_arm_id++;
    size_t m;
    struct rv_entry *b =
        insert_arm(plan, *n, f->start_events, &none, upto, &m, id);
    if (!b)
        return plan;
    free_log(plan, *n);
    size_t a = 0;
    while (a < m && !(b[a].kind == RV_ARM && b[a].arm_id == id))
        a++;
    size_t r = a + 1;
    while (r < m && !(b[r].kind == RV_PACKET && b[r].resume))
        r++;
    if (r >= m || !b[a].arm_event) {
        *n = m; /* beyond the plan's end, or at a stop: unbounded */
        return b;
    }
    for (size_t k = r + 1; k < m; k++) {
        free(b[k].pkt);
        b[k].pkt = NULL;
    }
    struct rv_entry *c = &b[r + 1];
    memset(c, 0, sizeof(*c));
    c->kind = RV_CUT;
    c->arm_id = id;
    *n = r + 2;
    return b;
}

/* Puts the instance's breakpoints and watchpoints to gdb's (f->bps,
 * f->watches), from what the replay left (the log's counts), logging
 * the packets that did it. */
static bool restore_state(struct rv_front *f, const struct rv_entry *plan,
                          size_t upto)
{
    /* the log's watches at that point */
    struct rv_watch have[8];
    int nr_have = 0;
    for (size_t i = 0; i < upto; i++) {
        const char *p = plan[i].pkt;
        if (plan[i].kind != RV_PACKET || !p || (p[0] != 'Z' && p[0] != 'z') ||
            p[1] < '2' || p[1] > '4')
            continue;
        uint64_t addr = strtoull(p + 3, NULL, 16);
        int k = 0;
        while (k < nr_have && (have[k].addr != addr || have[k].type != p[1]))
            k++;
        if (p[0] == 'Z' && k == nr_have && nr_have < 8)
            have[nr_have++] = (struct rv_watch){
                p[1], addr,
                (unsigned)strtoul(strchr(p + 3, ',') + 1, NULL, 16)};
        else if (p[0] == 'z' && k < nr_have)
            have[k] = have[--nr_have];
    }
    char pkt[64];
    for (int k = 0; k < nr_have; k++) {
        bool keep = false;
        for (int j = 0; j < f->nr_watches; j++)
            keep |= f->watches[j].addr == have[k].addr &&
                    f->watches[j].type == have[k].type;
        if (!keep) {
            snprintf(pkt, sizeof(pkt), "z%c,%" PRIx64 ",%x", have[k].type,
                     have[k].addr, have[k].len);
            struct rv_entry *e = append(&f->log, &f->nr_log, &f->cap_log);
            if (!e || !(e->pkt = strdup(pkt)) || !say(f, pkt))
                return false;
            e->len = strlen(pkt);
        }
    }
    for (int j = 0; j < f->nr_watches; j++) {
        bool had = false;
        for (int k = 0; k < nr_have; k++)
            had |= f->watches[j].addr == have[k].addr &&
                   f->watches[j].type == have[k].type;
        if (!had) {
            snprintf(pkt, sizeof(pkt), "Z%c,%" PRIx64 ",%x", f->watches[j].type,
                     f->watches[j].addr, f->watches[j].len);
            struct rv_entry *e = append(&f->log, &f->nr_log, &f->cap_log);
            if (!e || !(e->pkt = strdup(pkt)) || !say(f, pkt))
                return false;
            e->len = strlen(pkt);
        }
    }
    /* breakpoints: the replay's counts against gdb's set */
    for (int i = 0; i < f->nr_refs; i++) {
        struct rv_ref *r = &f->refs[i];
        bool want = false;
        for (int j = 0; j < f->nr_bps; j++)
            want |= f->bps[j] == r->addr;
        if ((r->log > 0) == want)
            continue;
        snprintf(pkt, sizeof(pkt), "%c0,%" PRIx64 ",1", want ? 'Z' : 'z',
                 r->addr);
        struct rv_entry *e = append(&f->log, &f->nr_log, &f->cap_log);
        if (!e || !(e->pkt = strdup(pkt)) || !say(f, pkt))
            return false;
        e->len = strlen(pkt);
        r->log = want;
    }
    for (int j = 0; j < f->nr_bps; j++) {
        bool known = false;
        for (int i = 0; i < f->nr_refs; i++)
            known |= f->refs[i].addr == f->bps[j];
        if (known)
            continue;
        snprintf(pkt, sizeof(pkt), "Z0,%" PRIx64 ",1", f->bps[j]);
        struct rv_entry *e = append(&f->log, &f->nr_log, &f->cap_log);
        if (!e || !(e->pkt = strdup(pkt)) || !say(f, pkt))
            return false;
        e->len = strlen(pkt);
    }
    return true;
}

/* The arms of plan[0, *n) without their cut in it go (but keep's): a
 * point reached before an older scan's window began would leave that
 * scan's instrument armed in the run after it. */
static void drop_uncut_arms(struct rv_entry *plan, size_t *n, int keep)
{
    size_t o = 0;
    for (size_t i = 0; i < *n; i++) {
        bool drop = false;
        if (plan[i].kind == RV_ARM && plan[i].arm_id != keep) {
            drop = true;
            for (size_t k = i + 1; k < *n; k++)
                if (plan[k].kind == RV_CUT && plan[k].arm_id == plan[i].arm_id)
                    drop = false;
        }
        if (!drop)
            plan[o++] = plan[i];
    }
    *n = o;
}

/* The stop gdb is told of names thread pid.tid: gdb takes it as its
 * general thread, so the instance's Hg is set to it (and logged). */
static bool name_thread(struct rv_front *f, int pid, int tid,
                        const char *reason)
{
    char pkt[64];
    snprintf(pkt, sizeof(pkt), "Hgp%x.%x", pid, tid);
    struct rv_entry *e = append(&f->log, &f->nr_log, &f->cap_log);
    if (!e || !(e->pkt = strdup(pkt)) || !say(f, pkt))
        return false;
    e->len = strlen(pkt);
    snprintf(f->reply, sizeof(f->reply), "T05thread:p%x.%x;%s", pid, tid,
             reason);
    return true;
}

/* The run again to the start (gdb's "replaylog:begin"). */
static bool reach_begin(struct rv_front *f)
{
    size_t first = 0;
    while (first < f->nr_log &&
           !(f->log[first].kind == RV_PACKET && f->log[first].resume))
        first++;
    struct rv_entry *plan = copy_log(f->log, first, 0);
    if (plan)
        drop_uncut_arms(plan, &first, -1);
    if (!plan || !run_plan(f, plan, first, false)) {
        free_log(plan, first);
        return false;
    }
    free_log(f->log, f->nr_log);
    f->log = plan;
    f->nr_log = f->cap_log = first;
    return query_where(f, &f->where) && restore_state(f, f->log, first) &&
           name_thread(f, f->where.pid, f->where.tid, "replaylog:begin;");
}

/* The run again to the scan's note: the plan up to the resume it came
 * in, then the cut. */
static bool reach_note(struct rv_front *f, struct rv_entry *scan_plan,
                       size_t arm_id, const struct rv_note *note)
{
    size_t n = note->entry + 1;
    struct rv_entry *plan = copy_log(scan_plan, n, 1);
    if (!plan)
        return false;
    struct rv_entry *c = &plan[n];
    memset(c, 0, sizeof(*c));
    c->kind = RV_CUT;
    c->arm_id = (int)arm_id;
    if (note->kind == 2) {
        /* a watchpoint going back: before the write (the step before) */
        c->by_steps = note->where.steps - 1 > note->arm_steps;
        c->steps = note->where.steps - 1 - note->arm_steps;
        c->count = 0;
    } else {
        c->count = note->count;
    }
    n++;
    drop_uncut_arms(plan, &n, (int)arm_id);
    if (!run_plan(f, plan, n, false) || f->cut_at == (size_t)-1) {
        free_log(plan, n);
        return false;
    }
    /* The cut came in entry cut_at: the log is the plan up to it. */
    plan[f->cut_at + 1] = plan[n - 1];
    for (size_t k = f->cut_at + 2; k < n; k++) {
        free(plan[k].pkt);
        plan[k].pkt = NULL;
    }
    n = f->cut_at + 2;
    if (!query_where(f, &plan[n - 1].where))
        return false;
    free_log(f->log, f->nr_log);
    f->log = plan;
    f->nr_log = n;
    f->cap_log = n + 1;
    f->where = plan[n - 1].where;
    if (!restore_state(f, f->log, n))
        return false;
    /* the thread: the writer's or the breakpoint's; bs's stepped one */
    int pid = note->kind ? note->where.pid : f->where.pid;
    int tid = note->kind ? note->where.tid : f->where.tid;
    for (size_t k = 0; k < n; k++) {
        const struct rv_entry *e = &f->log[k]; /* (plan may have moved) */
        if (e->kind == RV_ARM && e->arm_id == (int)arm_id &&
            e->instr.step_tid) {
            pid = e->instr.step_pid;
            tid = e->instr.step_tid;
        }
    }
    const char *wp = strstr(note->reply, "watch:");
    bool ok = name_thread(f, pid, tid,
                          note->kind == 2 && wp ? wp
                          : note->kind == 1     ? "swbreak:;"
                                                : "");
    /* (f->log, not plan: the packets appended may have moved it) */
    copy_str(f->log[n - 1].reply, sizeof(f->log[n - 1].reply), f->reply);
    return ok;
}

/* Why going back is refused here, or NULL. */
static const char *refused(struct rv_front *f)
{
    static char why[256];
    if (f->refusal)
        return f->refusal;
    if (f->exited)
        return "the run has ended; start it again to go back";
    if (f->where.ext && !f->o->tap_replay) {
        snprintf(why, sizeof(why),
                 "the run took something from outside (%" PRIu64
                 " host wakeups or host-timed preemptions): a re-run would "
                 "not repeat it; `hvrun record` the run and debug `hvrun "
                 "replay --gdb`",
                 f->where.ext);
        return why;
    }
    return NULL;
}

/*
 * bc (step false) or bs: the last stop of gdb's breakpoints and
 * watchpoints, or the thread's instruction, before this point; the run
 * then stands there and f->reply says it. false: not done (said to gdb).
 */
static bool go_back(struct rv_front *f, bool step)
{
    struct rv_instr in;
    memset(&in, 0, sizeof(in));
    if (step) {
        in.step_tid = f->hc_tid > 0 ? f->hc_tid : f->where.tid;
        in.step_pid = f->where.pid;
    } else {
        in.nr_bps = f->nr_bps;
        memcpy(in.bps, f->bps, sizeof(f->bps));
        in.nr_watches = f->nr_watches;
        memcpy(in.watches, f->watches, sizeof(f->watches));
    }
    bool any = in.nr_bps || in.nr_watches || in.step_tid;
    /* Breakpoints cost nothing until hit: one scan from the start. A
     * watchpoint or a step makes every instruction an exit: a window
     * just behind this point first, widened while it holds no stop. */
    uint64_t now = f->where.events;
    uint64_t back = step ? 0 : in.nr_watches ? 2 : now;
    /* breakpoints: the stretch since the latest checkpoint first */
    for (int i = 0; !step && !in.nr_watches && i < f->nr_ckpts; i++)
        if (f->ckpts[i].where.events < now &&
            now - f->ckpts[i].where.events < back)
            back = now - f->ckpts[i].where.events;
    struct rv_where here = f->where;
    uint64_t upto = 0; /* scanned from there on already (0: nothing) */
    while (any) {
        uint64_t from = now > back ? now - back : 0;
        if (from < f->start_events)
            from = f->start_events;
        int arm_id = f->next_arm_id++;
        size_t n;
        struct rv_entry *plan = plan_with_arm(f, &in, from, &n, arm_id);
        if (plan && upto && !in.step_tid && !in.nr_watches)
            plan = bound_plan(f, plan, &n, upto);
        if (!plan)
            return false;
        f->scan_arm = arm_id;
        snprintf(f->scan_skip_key, sizeof(f->scan_skip_key), "%s",
                 step ? here.key : "");
        bool ok = run_plan(f, plan, n, true);
        if (!ok) {
            free_log(plan, n);
            console(f, "hvrun: going back: the run did not repeat the "
                       "session's log (a bug of hvrun's, or a run that is "
                       "not deterministic)\n");
            return false;
        }
        if (f->note.any) {
            struct rv_note note = f->note;
            bool done = reach_note(f, plan, (size_t)arm_id, &note);
            free_log(plan, n);
            return done;
        }
        free_log(plan, n);
        if (from <= f->start_events)
            break;
        upto = from;
        back = back ? back * 8 : 1;
    }
    return reach_begin(f);
}

/* An entry for pkt appended to plan[*n] (room made by copy_log). */
static bool plan_packet(struct rv_entry *plan, size_t *n, const char *pkt,
                        bool resume)
{
    struct rv_entry *e = &plan[(*n)++];
    memset(e, 0, sizeof(*e));
    e->kind = RV_PACKET;
    e->resume = resume;
    if (!(e->pkt = strdup(pkt)))
        return false;
    e->len = strlen(pkt);
    return true;
}

/* A checkpoint ahead of this point (monitor restart): the log goes on
 * with gdb's breakpoints and watchpoints out, an arm at the event and a
 * continue it cuts, so later replays reach it the same way. */
static bool go_ahead(struct rv_front *f, uint64_t event)
{
    struct rv_held h;
    held_after(f->log, f->nr_log, &h);
    size_t n = f->nr_log;
    struct rv_entry *plan = copy_log(f->log, n, (size_t)(h.nr_z0 + h.nr_other) + 4);
    if (!plan)
        return false;
    char pkt[64];
    bool ok = true;
    for (int k = 0; k < h.nr_z0 && ok; k++) {
        snprintf(pkt, sizeof(pkt), "z0,%" PRIx64 ",1", h.z0[k]);
        ok = plan_packet(plan, &n, pkt, false);
    }
    for (int k = 0; k < h.nr_other && ok; k++) {
        snprintf(pkt, sizeof(pkt), "z%c,%" PRIx64 ",%x", h.other[k].type,
                 h.other[k].addr, h.other[k].len);
        ok = plan_packet(plan, &n, pkt, false);
    }
    int arm_id = f->next_arm_id++;
    struct rv_entry *a = &plan[n++];
    memset(a, 0, sizeof(*a));
    a->kind = RV_ARM;
    a->arm_id = arm_id;
    a->arm_event = event;
    struct rv_note at = {.any = true, .count = 0, .kind = 0, .entry = n};
    ok = ok && plan_packet(plan, &n, "vCont;c", true);
    if (ok)
        plan[n - 1].where.events = UINT64_MAX;
    ok = ok && reach_note(f, plan, (size_t)arm_id, &at);
    free_log(plan, n);
    if (ok)
        f->reply[2] = '0';
    return ok;
}

/* monitor goto N behind this point: the run again to event N (ahead:
 * monitor restart's checkpoint there). */
static bool go_to_event(struct rv_front *f, uint64_t event)
{
    struct rv_instr none;
    memset(&none, 0, sizeof(none));
    if (event > f->where.events)
        return go_ahead(f, event);
    if (event <= f->start_events)
        return reach_begin(f);
    int arm_id = f->next_arm_id++;
    size_t n;
    struct rv_entry *plan = plan_with_arm(f, &none, event, &n, arm_id);
    if (!plan)
        return false;
    struct rv_note at = {.any = true, .count = 0, .kind = 0};
    /* the arm's resume: the entry after the arm */
    for (size_t i = 0; i < n; i++)
        if (plan[i].kind == RV_ARM && plan[i].arm_id == arm_id)
            at.entry = i + 1 < n ? i + 1 : i;
    bool ok = reach_note(f, plan, (size_t)arm_id, &at);
    free_log(plan, n);
    if (ok)
        f->reply[2] = '0'; /* T00: stopped, no signal, as goto forward */
    return ok;
}

/* ---- relaying
 * ------------------------------------------------------------------- */

/* A continue of every thread (no step, no signal): it may be cut into
 * stretches of ckpt_every events, a checkpoint at each cut. */
static bool chunkable(const char *p)
{
    return strcmp(p, "c") == 0 ||
           (strncmp(p, "vCont;c", 7) == 0 && !strpbrk(p + 6, "sSC"));
}

static bool set_instance_goto(struct rv_front *f, uint64_t event)
{
    char pkt[64];
    snprintf(pkt, sizeof(pkt), "QHvrunGoto:%" PRIu64, event);
    return say(f, pkt);
}

/* The resume pkt sent and its stop's reply taken (console lines relayed
 * to gdb); a continue stops silently every ckpt_every events on the way
 * for an automatic checkpoint (gdb's stops change nothing in the run, so
 * neither do these). false: the instance is gone. */
static bool ask_resume(struct rv_front *f, const char *pkt, size_t len,
                       char *r, size_t cap, size_t *rlen)
{
    bool chunks = f->ckpt_every && chunkable(pkt) && !f->ckpt_off;
    for (;;) {
        /* a ^C gdb sent while the front end spoke to the instance (a
         * checkpoint, a goto): passed on after the resume */
        size_t o = 0;
        for (size_t i = 0; i < f->gdb_in_len; i++)
            if (f->gdb_in[i] == 0x03)
                f->intr_pending = true;
            else
                f->gdb_in[o++] = f->gdb_in[i];
        f->gdb_in_len = o;
        uint64_t next = 0;
        if (chunks && !no_checkpoint(f)) {
            next = (f->where.events / f->ckpt_every + 1) * f->ckpt_every;
            if (f->goto_fwd && f->goto_fwd <= next)
                next = 0; /* gdb's own goto comes first */
            if (!set_instance_goto(f, next ? next : f->goto_fwd))
                return false;
        }
        if (!ask(f, pkt, len, r, cap, rlen, true))
            return false;
        if (!next)
            return true;
        if (r[0] == 'W' || r[0] == 'X') {
            /* one process of several ended: the others go on, without
             * our goto (after the last the instance only serves gdb) */
            if (strstr(r, ";process:"))
                (void)set_instance_goto(f, f->goto_fwd);
            return true;
        }
        struct rv_where w;
        if (!query_where(f, &w))
            return false;
        trace("chunk to %" PRIu64 ": %.60s at %s", next, r, w.key);
        /* (the goto stops at the first turn of a debugged thread at or
         * after it) */
        if (strncmp(r, "T00", 3) != 0 || w.events < next) {
            /* the run's own stop: the instance forgets ours */
            return set_instance_goto(
                f, f->goto_fwd > w.events ? f->goto_fwd : 0);
        }
        f->where = w;
        char why[256];
        if (!take_checkpoint(f, true, why, sizeof(why))) {
            if (!f->have_run || f->gone)
                return false;
            /* said once; the continue goes on without them */
            f->ckpt_off = "off";
            char text[400];
            snprintf(text, sizeof(text),
                     "hvrun: no automatic checkpoints: %s (going back runs "
                     "from the start)\n",
                     why);
            console(f, text);
            chunks = false;
            /* the instance's goto was this chunk's end: gdb's own again
             * (kvm: a `monitor goto` past the first chunk ran on to the
             * end) */
            if (!set_instance_goto(f, f->goto_fwd))
                return false;
        }
    }
}

/* Relays a resume and its stop; logs it. */
static void relay_resume(struct rv_front *f, const char *pkt, size_t len)
{
    static char r[RV_IN_MAX];
    size_t rlen;
    struct rv_entry *e = append(&f->log, &f->nr_log, &f->cap_log);
    if (!e || !(e->pkt = malloc(len + 1))) {
        send_text(f->gdb_fd, "E01");
        return;
    }
    memcpy(e->pkt, pkt, len + 1);
    e->len = len;
    e->resume = true;
    if (!ask_resume(f, pkt, len, r, sizeof(r), &rlen)) {
        f->gone = true;
        return;
    }
    copy_str(e->reply, sizeof(e->reply), r);
    copy_str(f->reply, sizeof(f->reply), r);
    if (r[0] == 'W' || r[0] == 'X')
        f->exited = true;
    else if (query_where(f, &e->where))
        f->where = e->where;
    if (f->goto_fwd && f->where.events >= f->goto_fwd)
        f->goto_fwd = 0;
    send_frame(f->gdb_fd, r, rlen);
}

static void relay(struct rv_front *f, const char *pkt, size_t len)
{
    static char r[RV_IN_MAX];
    size_t rlen;
    if (steers(pkt)) {
        struct rv_entry *e = append(&f->log, &f->nr_log, &f->cap_log);
        if (e && (e->pkt = malloc(len + 1))) {
            memcpy(e->pkt, pkt, len + 1);
            e->len = len;
        }
        track_state(f, pkt);
        if (strncmp(pkt, "Hc", 2) == 0) {
            const char *dot = strchr(pkt, '.');
            long t = strtol(dot ? dot + 1 : pkt + 2, NULL, 16);
            f->hc_tid = t > 0 ? (int)t : 0;
        }
    }
    if (pkt[0] == 'k') { /* no reply: the run ends */
        send_frame(f->run.fd, pkt, len);
        f->gone = true;
        return;
    }
    if (!ask(f, pkt, len, r, sizeof(r), &rlen, true)) {
        f->gone = true;
        return;
    }
    if (strncmp(pkt, "qSupported", 10) == 0 && r[0]) {
        /* reverse execution is the front end's */
        size_t o = rlen;
        o += (size_t)snprintf(r + o, sizeof(r) - o,
                              ";ReverseStep+;ReverseContinue+");
        rlen = o;
    }
    send_frame(f->gdb_fd, r, rlen);
    if (pkt[0] == 'D' && pkt[1] != ';')
        f->gone = true; /* the run goes on without gdb */
    if (strncmp(pkt, "vKill", 5) == 0)
        f->gone = true;
}

/* monitor checkpoint, info checkpoints, restart N, delete checkpoint N
 * (gdb's own `checkpoint` is for native targets only). */
static bool monitor_checkpoint(struct rv_front *f, const char *cmd)
{
    char text[4096];
    size_t o = 0;
    text[0] = 0;
    if (strcmp(cmd, "checkpoint") == 0) {
        char why[256];
        int id = f->exited ? 0 : take_checkpoint(f, false, why, sizeof(why));
        if (id)
            snprintf(text, sizeof(text),
                     "Checkpoint %d at event %" PRIu64 " (thread %d)\n", id,
                     f->where.events, f->where.tid);
        else
            snprintf(text, sizeof(text), "hvrun: no checkpoint: %s\n",
                     f->exited ? "the run has ended" : why);
    } else if (strcmp(cmd, "info checkpoints") == 0) {
        for (int i = 0; i < f->nr_ckpts && o + 128 < sizeof(text); i++) {
            const struct rv_checkpoint *c = &f->ckpts[i];
            o += (size_t)snprintf(text + o, sizeof(text) - o,
                                  "%c %d event %" PRIu64 ", thread %d%s\n",
                                  c->id == f->run_ckpt_id ? '*' : ' ', c->id,
                                  c->where.events, c->where.tid,
                                  c->automatic ? " (automatic)" : "");
        }
        if (!f->nr_ckpts)
            snprintf(text, sizeof(text), "No checkpoints.\n");
        else if (o + 80 < sizeof(text))
            snprintf(text + o, sizeof(text) - o,
                     "(automatic: every %" PRIu64 " events of a continue)\n",
                     f->ckpt_every);
    } else {
        bool del = cmd[0] == 'd';
        int id = atoi(cmd + (del ? 17 : 7));
        int i = 0;
        while (i < f->nr_ckpts && f->ckpts[i].id != id)
            i++;
        const char *why = refused(f);
        if (i == f->nr_ckpts)
            snprintf(text, sizeof(text), "hvrun: no checkpoint %d\n", id);
        else if (del && id == f->run_ckpt_id)
            snprintf(text, sizeof(text),
                     "hvrun: checkpoint %d holds the run now\n", id);
        else if (del) {
            drop_checkpoint(f, i);
            snprintf(text, sizeof(text), "Deleted checkpoint %d\n", id);
        } else if (why)
            snprintf(text, sizeof(text), "hvrun: cannot restart: %s\n", why);
        else {
            f->goto_back = f->ckpts[i].where.events;
            snprintf(text, sizeof(text),
                     "hvrun: the run goes to checkpoint %d (event %" PRIu64
                     ") on `continue`\n",
                     id, f->goto_back);
        }
    }
    console(f, text);
    send_text(f->gdb_fd, "OK");
    return true;
}

/* monitor goto N with N behind this point: kept for the next continue,
 * as a goto forward is. true when it was one. */
static bool monitor_back(struct rv_front *f, const char *pkt)
{
    char cmd[128] = {0};
    const char *hex = pkt + 6;
    for (size_t i = 0; i + 1 < sizeof(cmd) && hex[2 * i] && hex[2 * i + 1];
         i++) {
        char b[3] = {hex[2 * i], hex[2 * i + 1], 0};
        cmd[i] = (char)strtol(b, NULL, 16);
    }
    if (strncmp(cmd, "checkpoint", 10) == 0 || strncmp(cmd, "restart", 7) == 0 ||
        strncmp(cmd, "info checkpoints", 16) == 0 ||
        strncmp(cmd, "delete checkpoint", 17) == 0)
        return monitor_checkpoint(f, cmd);
    if (strncmp(cmd, "goto ", 5) != 0)
        return false;
    uint64_t to = strtoull(cmd + 5, NULL, 10);
    if (to > f->where.events && !f->exited)
        f->goto_fwd = to; /* relayed: the instance stops there */
    if (to > f->where.events || f->exited)
        return false;
    const char *why = refused(f);
    char text[512];
    if (why)
        snprintf(text, sizeof(text),
                 "hvrun: cannot go back to event %" PRIu64 ": %s\n", to, why);
    else {
        f->goto_back = to;
        snprintf(text, sizeof(text),
                 "hvrun: the run goes back to event %" PRIu64
                 " on `continue` (run again to there)\n",
                 to);
    }
    console(f, text);
    send_text(f->gdb_fd, "OK");
    return true;
}

/* Going back failed part way: the run again to where gdb was (the log
 * is still that point's), or, if even that fails, the session ends. */
static void recover(struct rv_front *f, const struct rv_where *was)
{
    struct rv_where now;
    if (run_plan(f, f->log, f->nr_log, false) &&
        query_where(f, &now) && strcmp(now.key, was->key) == 0) {
        f->where = now;
        console(f, "hvrun: going back failed; the run is where it was\n");
        return;
    }
    console(f, "hvrun: going back failed and the run could not be brought "
               "back to this point: the session ends\n");
    f->gone = true;
}

static void reverse(struct rv_front *f, bool step)
{
    const char *why = refused(f);
    if (why) {
        char text[512];
        snprintf(text, sizeof(text), "hvrun: no reverse execution: %s\n", why);
        console(f, text);
        send_text(f->gdb_fd, "E01");
        return;
    }
    struct rv_where was = f->where;
    if (!go_back(f, step)) {
        recover(f, &was);
        send_text(f->gdb_fd, "E01");
        return;
    }
    send_text(f->gdb_fd, f->reply);
}

static void handle(struct rv_front *f, const char *pkt, size_t len)
{
    trace("gdb: %.200s", pkt);
    if (strcmp(pkt, "QStartNoAckMode") == 0) {
        send_text(f->gdb_fd, "OK");
        f->gdb_noack = true;
        return;
    }
    if (strcmp(pkt, "bc") == 0 || strcmp(pkt, "bs") == 0) {
        reverse(f, pkt[1] == 's');
        return;
    }
    if (strncmp(pkt, "qRcmd,", 6) == 0 && monitor_back(f, pkt))
        return;
    /* (gdb's own step over a breakpoint first is relayed: the goto
     * answers the continue after it) */
    bool step = pkt[0] == 's' || pkt[0] == 'S' || strstr(pkt, ";s") ||
                strstr(pkt, ";S");
    if (is_resume(pkt) && f->goto_back && !step) {
        uint64_t to = f->goto_back;
        f->goto_back = 0;
        struct rv_where was = f->where;
        if (!go_to_event(f, to)) {
            recover(f, &was);
            send_text(f->gdb_fd, "E01");
            return;
        }
        send_text(f->gdb_fd, f->reply);
        return;
    }
    if (is_resume(pkt))
        relay_resume(f, pkt, len);
    else
        relay(f, pkt, len);
}

/* ---- the front end
 * ------------------------------------------------------------ */

static void setup_streams(struct rv_front *f)
{
    struct stat st, st2;
    for (int s = 0; s < 2; s++) {
        f->out_kind[s] = stream_kind(s + 1);
        f->out_start[s] = lseek(s + 1, 0, SEEK_CUR);
        f->out_flags[s] = fcntl(s + 1, F_GETFL);
        if (f->out_kind[s] == RV_OUT_FILE &&
            (f->out_start[s] < 0 || f->out_flags[s] < 0))
            f->out_kind[s] = RV_OUT_PASS;
    }
    f->out_shared = f->out_kind[0] == RV_OUT_FILE &&
                    f->out_kind[1] == RV_OUT_FILE && fstat(1, &st) == 0 &&
                    fstat(2, &st2) == 0 && st.st_dev == st2.st_dev &&
                    st.st_ino == st2.st_ino;
    f->in_kind = RV_IN_INHERIT;
    if (fstat(0, &st) == 0 && S_ISREG(st.st_mode)) {
        f->in_kind = RV_IN_FILE;
        f->in_offset = lseek(0, 0, SEEK_CUR);
        if (f->in_offset < 0)
            f->in_offset = 0;
    } else if (!f->o->tap_replay &&
               (isatty(0) || (fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) ||
                                                     S_ISSOCK(st.st_mode))))) {
        f->refusal = "stdin is a terminal or a pipe from outside the run "
                     "(a re-run cannot read it again); give the program "
                     "its input from a file (< FILE) or /dev/null";
    }
    if (f->o->schedule_out)
        f->refusal = "--schedule-out writes the schedule as the run goes "
                     "(a re-run would write it again)";
}

/* The instance's end: its exit code, sum filled. */
static int finish(struct rv_front *f)
{
    struct rv_instance *r = &f->run;
    int code = CLI_EXIT_FAILURE, status;
    close(r->fd);
    r->fd = -1;
    /* the output passed on while the run goes to its end */
    status = 0;
    for (;;) {
        if (r->restored) { /* not ours to wait for: its summary says */
            struct pollfd sp = {r->sum_fd, POLLIN, 0};
            if (poll(&sp, 1, 0) == 1)
                break;
        } else {
            pid_t w = waitpid(r->pid, &status, WNOHANG);
            if (w == r->pid || (w < 0 && errno != EINTR))
                break;
        }
        struct pollfd p[2];
        for (int s = 0; s < 2; s++)
            p[s] = (struct pollfd){f->out_kind[s] == RV_OUT_PIPE ||
                                           f->out_kind[s] == RV_OUT_TTY
                                       ? r->out[s]
                                       : -1,
                                   POLLIN, 0};
        (void)poll(p, 2, 50);
        if (proxy_stop_signal)
            kill(r->pid, (int)proxy_stop_signal);
        pump_output(f);
    }
    pump_output(f);
    struct run_summary sum;
    if (read(r->sum_fd, &code, sizeof(code)) == (ssize_t)sizeof(code) &&
        read(r->sum_fd, &sum, sizeof(sum)) == (ssize_t)sizeof(sum) && f->sum)
        *f->sum = sum;
    else if (WIFSIGNALED(status))
        code = 128 + WTERMSIG(status);
    close(r->sum_fd);
    for (int s = 0; s < 2; s++) {
        if (r->out[s] >= 0)
            close(r->out[s]);
        /* what hvrun says after the run (--summary) goes after it */
        if (f->out_kind[s] == RV_OUT_FILE)
            (void)lseek(s + 1, 0, SEEK_END);
    }
    f->have_run = false;
    return code;
}

/* A journal directory for a run that has none (its changes to files
 * undone before a re-run); "" if none could be made. */
static void make_journal(char *out, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, len, "%s/hvrun-gdb.XXXXXX",
             tmp && *tmp && strlen(tmp) + 20 < len ? tmp : "/tmp");
    if (!mkdtemp(out))
        out[0] = 0;
}

/* The "waiting for gdb" line, said once hvrun listens; a stderr that is
 * a file gets it at its start, the runs writing after it. */
static void reserve_waiting_line(struct rv_front *f, char *line, size_t len)
{
    line[0] = 0;
    if (f->o->gdb_quiet)
        return;
    cli_gdb_waiting_line(f->o->gdb_spec, f->o->gdb_start_event, line, len);
    if (f->out_kind[1] != RV_OUT_FILE || (f->out_flags[1] & O_APPEND))
        return;
    off_t at = f->out_start[1];
    f->out_start[1] += (off_t)strlen(line);
    if (f->out_shared)
        f->out_start[0] = f->out_start[1];
    f->waiting_at = at;
}

static void say_waiting_line(struct rv_front *f, const char *line)
{
    if (!line[0])
        return;
    if (f->waiting_at >= 0 &&
        pwrite(2, line, strlen(line), f->waiting_at) == (ssize_t)strlen(line))
        (void)lseek(2, f->out_start[1], SEEK_SET);
    else
        fputs(line, stderr);
}

/* Serves gdb until it leaves or the run ends; the run's exit code. The
 * run starts first (to its start event), then hvrun listens: gdb waits
 * no more than 2 s for a reply, and a run's set-up (a replay's above all)
 * can take longer. */
static int front_end_serve(struct rv_front *f)
{
    char line[512];
    reserve_waiting_line(f, line, sizeof(line));
    if (instance_start(f) < 0 || !query_where(f, &f->where)) {
        if (f->have_run)
            return finish(f);
        cli_error("--gdb: the run did not start");
        return CLI_EXIT_FAILURE;
    }
    f->start_events = f->where.events;
    char why[512], unix_path[128];
    int listen_fd =
        cli_gdb_listen(f->o->gdb_spec, true, f->o->gdb_start_event, unix_path,
                       sizeof(unix_path), why, sizeof(why));
    if (listen_fd >= 0) {
        say_waiting_line(f, line);
        f->gdb_fd = cli_gdb_accept(listen_fd, unix_path);
    }
    if (listen_fd < 0 || f->gdb_fd < 0) {
        if (listen_fd < 0)
            cli_error("%s", why);
        else
            cli_error("--gdb %s: %s", f->o->gdb_spec,
                      proxy_stop_signal ? "stopped by a signal while "
                                          "waiting for gdb"
                                        : strerror(-f->gdb_fd));
        f->gdb_fd = -1;
        kill(f->run.pid, SIGTERM);
        finish(f);
        return CLI_EXIT_FAILURE;
    }
    static char pkt[RV_IN_MAX];
    size_t len;
    while (!f->gone && gdb_packet(f, pkt, sizeof(pkt), &len))
        handle(f, pkt, len);
    if (proxy_stop_signal && f->have_run)
        kill(f->run.pid, (int)proxy_stop_signal);
    if (f->gdb_fd >= 0) {
        close(f->gdb_fd);
        f->gdb_fd = -1;
    }
    return f->have_run ? finish(f) : CLI_EXIT_FAILURE;
}

int cli_gdb_front_end(const struct run_options *o, const char *path,
                      const char *detlog_path, const char *journal_dir,
                      struct run_summary *sum)
{
    static struct rv_front front;
    struct rv_front *f = &front;
    memset(f, 0, sizeof(*f));
    f->o = o;
    f->path = path;
    f->detlog_path = detlog_path;
    f->journal_dir = journal_dir;
    f->sum = sum;
    f->gdb_fd = -1;
    f->waiting_at = -1;
    /* HVRUN_GDB_CHECKPOINT_EVENTS: the spacing of automatic checkpoints
     * (0: none); HVRUN_GDB_CHECKPOINTS: how many are kept */
    const char *every = getenv("HVRUN_GDB_CHECKPOINT_EVENTS");
    const char *keep = getenv("HVRUN_GDB_CHECKPOINTS");
    f->ckpt_every = every && *every ? strtoull(every, NULL, 10) : 100000;
    f->ckpt_auto_max = keep && *keep ? atoi(keep) : 16;
    if (f->ckpt_auto_max < 2)
        f->ckpt_auto_max = 2;
    if (f->ckpt_auto_max > RV_MAX_CKPTS / 2)
        f->ckpt_auto_max = RV_MAX_CKPTS / 2;
    char journal[64] = "";
    setup_streams(f);
    if (!journal_dir) {
        make_journal(journal, sizeof(journal));
        if (journal[0])
            f->journal_dir = journal;
    }
    int code = front_end_serve(f);
    while (f->nr_ckpts > 0) /* a checkpoint ends with its channel */
        drop_checkpoint(f, f->nr_ckpts - 1);
    for (int i = 0; i < f->nr_helpers; i++)
        while (waitpid(f->helpers[i], NULL, 0) < 0 && errno == EINTR)
            ;
    free_log(f->log, f->nr_log);
    f->log = NULL;
    if (journal[0]) { /* the run's changes stay, as without gdb */
        empty_dir(journal);
        rmdir(journal);
    }
    return code;
}
