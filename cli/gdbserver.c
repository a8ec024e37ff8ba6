/*
 * gdbserver.c - the GDB remote serial protocol over a run (`hvrun run
 * --gdb`): the connection, packets, and the stops the world loop hands it
 * (struct proxy_debugger, config.h).
 *
 * All-stop: exactly one guest thread runs at a time, so when the server
 * holds the loop (a stop), every thread of the run is stopped. The
 * debugged process is the run's first one (its pid is kept across
 * execve); a thread id is the guest's tid ("pPID.TID" with gdb's
 * multiprocess extensions).
 *
 * Breakpoints (Z0) are int3 bytes in the debugged process's memory, with
 * the original bytes kept here: gdb's reads (m) see the originals, and
 * around every syscall dispatch of a process on that address space they
 * are taken out and put back (around_call), so nothing hvrun reads or
 * copies for the guest (write(2) from its text, a fork's copy, /proc/self/
 * mem, the CPUID rewriter) sees them. A process sharing the memory (a
 * vfork child) that executes one steps over it silently. The trap and the
 * stop are no event of the run (world.c): same detlog, same schedule.
 * Only the guest's own loads from its text could see an int3; hardware
 * breakpoints would hide even that but are four, and gdb keeps more than
 * four (its shared-library, longjmp and step-resume breakpoints).
 *
 * Single steps set TF for the stepped thread's next run only (world.c);
 * a step over SYSCALL ends after the call, as on Linux.
 */
#include "gdbserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "config.h"
#include "det.h"
#include "kernel.h"
#include "proxy.h"

#define PACKET_MAX 16384
#define MAX_BREAKPOINTS 256
#define INT3 0xcc
#define GDB_SIGTRAP 5
#define GDB_SIGINT 2

struct gdb_breakpoint {
    int pid; /* the process gdb set it in */
    struct vmm_aspace *as; /* its memory then (an execve takes it away) */
    uint64_t addr;
    uint8_t orig;
    bool in_memory;
};

#define MAX_DEBUGGED 16

/* A Z1-Z4 in one of the four debug registers. */
struct gdb_watch {
    bool used;
    char type; /* '1' execute, '2' write, '3' read, '4' access */
    uint64_t addr;
    unsigned len;
    uint64_t seen; /* a data watch's bytes after the last step */
};

/* How a stop reply names each kind's hit. */
static const char *const watch_names[] = {"hwbreak", "watch", "rwatch",
                                          "awatch"};

struct gdb_server {
    int listen_fd, fd;
    char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    bool noack, multiprocess, started, detached, exit_reported;
    /* --gdb-start: gdb is let in at this event (0: at the first
     * instruction); `monitor goto`: the next stop at this event */
    uint64_t start_event, goto_event;
    /* received bytes not yet taken as packets */
    char in[PACKET_MAX * 2];
    size_t in_len;
    bool interrupt; /* gdb sent ^C while the run went on */
    /* the debugged processes, by pid (a pointer would not survive an
     * exit): the run's first, and with gdb's fork events the children
     * it keeps (detach-on-fork off) */
    int pids[MAX_DEBUGGED];
    int nr_pids;
    struct proxy_world *world;
    bool fork_events, exec_events; /* gdb asked for them (qSupported) */
    /* the process whose syscall is being dispatched, and its memory then:
     * a new process in the world is its fork, other memory after the
     * call its execve */
    int calling_pid;
    struct vmm_aspace *calling_as;
    /* a fork or exec event to report when the call is over ("" none) */
    char pending[PROXY_PATH_MAX * 2 + 16];
    int pending_pid;
    struct gdb_breakpoint bps[MAX_BREAKPOINTS];
    int nr_bps;
    bool bps_out; /* taken out around a syscall's dispatch */
    struct gdb_watch watches[4];
    /* what the debug registers of armed_vm hold (NULL: nothing of ours) */
    struct vmm_vm *armed_vm;
    uint64_t armed[5];
    int watch_hit; /* the slot whose #DB is being reported, -1: none */
    int step_tid;  /* the thread gdb single-steps, 0: none */
    int over_tid;  /* a non-debugged sharer stepping over a breakpoint */
    uint64_t over_addr;
    int stop_tid;  /* the thread of the last stop */
    int g_tid;     /* Hg's thread (0: the stop's) */
    int resume_sig; /* the Linux signal gdb resumed with, 0: none */
    uint64_t pass_sigs; /* Linux signals gdb passes without a stop */
    /* the debugger's steps of debugged threads so far (gdb's and those
     * kept for data watches): with the run deterministic, "after N steps"
     * is a point a re-run reaches again (gdbserver_reverse.c) */
    uint64_t steps;
    uint64_t stop_at_step; /* QHvrunStopAtStep: a stop there (0: none) */
    char last_stop[PROXY_PATH_MAX * 2 + 96];
    bool initial_stop; /* last_stop is the first instruction's */
    struct proxy_debugger ops;
    /* a packet's reply is built here */
    char out[PACKET_MAX * 2 + 8];
};

/* ---- GDB's signal numbers (gdb/signals.def) -------------------------- */

static const unsigned char linux_to_gdb_sig[65] = {
    [1] = 1,   [2] = 2,   [3] = 3,   [4] = 4,   [5] = 5,   [6] = 6,
    [7] = 10,  [8] = 8,   [9] = 9,   [10] = 30, [11] = 11, [12] = 31,
    [13] = 13, [14] = 14, [15] = 15, [16] = 0,  [17] = 20, [18] = 19,
    [19] = 17, [20] = 18, [21] = 21, [22] = 22, [23] = 16, [24] = 24,
    [25] = 25, [26] = 26, [27] = 27, [28] = 28, [29] = 23, [30] = 32,
    [31] = 12,
};

static int gdb_sig(int linux_sig)
{
    if (linux_sig == 32)
        return 77; /* GDB_SIGNAL_REALTIME_32 */
    if (linux_sig >= 33 && linux_sig <= 63)
        return 45 + (linux_sig - 33); /* GDB_SIGNAL_REALTIME_33.. */
    return linux_sig > 0 && linux_sig < 32 ? linux_to_gdb_sig[linux_sig] : 0;
}

static int linux_sig(int gdb)
{
    for (int s = 1; s < 65; s++)
        if (gdb_sig(s) == gdb)
            return s;
    return 0;
}

/* ---- the connection ----------------------------------------------------- */

static int listen_on(const char *spec, char *unix_path, size_t path_len,
                     char *why, size_t why_len)
{
    int fd;
    if (strncmp(spec, "unix:", 5) == 0) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(spec + 5) >= sizeof(sa.sun_path) || !spec[5]) {
            snprintf(why, why_len, "--gdb %s: path empty or too long", spec);
            return -EINVAL;
        }
        strcpy(sa.sun_path, spec + 5);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            listen(fd, 1) < 0) {
            int e = errno;
            snprintf(why, why_len, "--gdb %s: %s", spec, strerror(e));
            if (fd >= 0)
                close(fd);
            return -e;
        }
        snprintf(unix_path, path_len, "%s", spec + 5);
        return fd;
    }
    char host[256] = "127.0.0.1";
    const char *port = spec, *colon = strrchr(spec, ':');
    if (colon) {
        snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_family = AF_INET,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) {
        snprintf(why, why_len, "--gdb %s: %s; give PORT, HOST:PORT or "
                 "unix:PATH", spec, gai_strerror(rc));
        return -EINVAL;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
        listen(fd, 1) < 0) {
        int e = errno;
        snprintf(why, why_len, "--gdb %s: listen: %s", spec, strerror(e));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -e;
    }
    freeaddrinfo(ai);
    return fd;
}

static void gdb_hooks(struct gdb_server *g);

/* Takes gdb's connection; 0 or -errno. The listening socket goes: one
 * gdb per run. */
static int accept_gdb(struct gdb_server *g)
{
    /* SIGINT/SIGTERM (cmd_run.c's handlers, no SA_RESTART) end the
     * wait: the run then stops as it would anyway. */
    do
        g->fd = accept4(g->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    while (g->fd < 0 && errno == EINTR && !proxy_stop_signal);
    int e = errno;
    /* The path goes now, while hvrun may still unlink (its seccomp
     * filter comes later; --gdb-start, which accepts later, is TCP). */
    if (g->unix_path[0]) {
        unlink(g->unix_path);
        g->unix_path[0] = 0;
    } else if (g->fd >= 0) {
        int one = 1;
        setsockopt(g->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    close(g->listen_fd);
    g->listen_fd = -1;
    return g->fd < 0 ? -e : 0;
}

int cli_gdb_listen(const char *spec, bool quiet, uint64_t start_event,
                   char *unix_path, size_t path_len, char *why,
                   size_t why_len)
{
    bool is_unix = strncmp(spec, "unix:", 5) == 0;
    if (start_event && is_unix) {
        snprintf(why, why_len, "--gdb %s with a start event: a TCP port "
                 "only (a unix socket's path could not be removed later)",
                 spec);
        return -EINVAL;
    }
    unix_path[0] = 0;
    int fd = listen_on(spec, unix_path, path_len, why, why_len);
    if (fd < 0)
        return fd;
    char line[512];
    cli_gdb_waiting_line(spec, start_event, line, sizeof(line));
    if (!quiet)
        fputs(line, stderr);
    return fd;
}

void cli_gdb_waiting_line(const char *spec, uint64_t start_event, char *out,
                          size_t len)
{
    bool is_unix = strncmp(spec, "unix:", 5) == 0;
    if (start_event)
        snprintf(out, len, "hvrun: gdb can attach at event %llu on %s "
                 "(target extended-remote :%s)\n",
                 (unsigned long long)start_event, spec, spec);
    else
        snprintf(out, len, "hvrun: waiting for gdb on %s (target "
                 "extended-remote %s%s)\n", spec, is_unix ? "" : ":",
                 is_unix ? spec + 5 : spec);
}

int cli_gdb_accept(int listen_fd, char *unix_path)
{
    struct gdb_server g = {.listen_fd = listen_fd, .fd = -1};
    snprintf(g.unix_path, sizeof(g.unix_path), "%s", unix_path);
    int rc = accept_gdb(&g);
    unix_path[0] = 0;
    return rc < 0 ? rc : g.fd;
}

int cli_gdb_open(const char *spec, bool quiet, uint64_t start_event,
                 struct gdb_server **out, char *why, size_t why_len)
{
    struct gdb_server *g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
    g->fd = -1;
    g->watch_hit = -1;
    g->start_event = start_event;
    g->listen_fd = cli_gdb_listen(spec, quiet, start_event, g->unix_path,
                                  sizeof(g->unix_path), why, why_len);
    if (g->listen_fd < 0) {
        int rc = g->listen_fd;
        free(g);
        return rc;
    }
    gdb_hooks(g);
    int rc = start_event ? 0 : accept_gdb(g);
    if (rc < 0) {
        snprintf(why, why_len, "--gdb %s: %s%s", spec,
                 proxy_stop_signal ? "stopped by a signal while waiting "
                                     "for gdb"
                                   : "accept: ",
                 proxy_stop_signal ? "" : strerror(-rc));
        free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int cli_gdb_open_fd(int fd, uint64_t start_event, struct gdb_server **out)
{
    struct gdb_server *g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
    g->fd = fd;
    g->listen_fd = -1;
    g->watch_hit = -1;
    g->start_event = start_event;
    gdb_hooks(g);
    *out = g;
    return 0;
}

/* gdb left (or was let go): no more stops; breakpoints out of memory. */
static void forget_breakpoints(struct gdb_server *g);
static void let_go(struct gdb_server *g)
{
    forget_breakpoints(g);
    g->detached = true;
    g->step_tid = 0;
    if (g->fd >= 0)
        close(g->fd);
    g->fd = -1;
}

/* More bytes from gdb; false when it is gone. */
static bool receive(struct gdb_server *g)
{
    if (g->in_len == sizeof(g->in))
        g->in_len = 0; /* garbage: start again */
    ssize_t n;
    do
        n = read(g->fd, g->in + g->in_len, sizeof(g->in) - g->in_len);
    while (n < 0 && errno == EINTR && !proxy_stop_signal);
    if (n <= 0)
        return false;
    g->in_len += (size_t)n;
    return true;
}

static void consume(struct gdb_server *g, size_t n)
{
    memmove(g->in, g->in + n, g->in_len - n);
    g->in_len -= n;
}

static void send_raw(struct gdb_server *g, const char *buf, size_t len)
{
    if (g->fd >= 0 && cli_write_all(g->fd, buf, len) < 0)
        let_go(g);
}

/* Sends one packet (body already escaped where it is binary). */
static void send_packet(struct gdb_server *g, const char *body, size_t len)
{
    static char frame[PACKET_MAX * 2 + 8];
    unsigned sum = 0;
    frame[0] = '$';
    memcpy(frame + 1, body, len);
    for (size_t i = 0; i < len; i++)
        sum += (unsigned char)body[i];
    snprintf(frame + 1 + len, 4, "#%02x", sum & 0xff);
    send_raw(g, frame, len + 4);
}

static void send_str(struct gdb_server *g, const char *s)
{
    send_packet(g, s, strlen(s));
}

/*
 * The next packet into buf (NUL-ended, unescaped only of framing); false
 * when gdb is gone. A ^C byte between packets sets g->interrupt.
 */
static bool next_packet(struct gdb_server *g, char *buf, size_t cap,
                        size_t *len)
{
    for (;;) {
        size_t i = 0;
        while (i < g->in_len && g->in[i] != '$') {
            if (g->in[i] == 0x03)
                g->interrupt = true;
            i++;
        }
        consume(g, i);
        char *hash = g->in_len ? memchr(g->in, '#', g->in_len) : NULL;
        if (hash && (size_t)(hash - g->in) + 3 <= g->in_len) {
            size_t body = (size_t)(hash - g->in) - 1;
            if (body >= cap)
                body = cap - 1;
            memcpy(buf, g->in + 1, body);
            buf[body] = 0;
            *len = body;
            consume(g, (size_t)(hash - g->in) + 3);
            if (!g->noack)
                send_raw(g, "+", 1);
            return true;
        }
        if (!receive(g))
            return false;
    }
}

/* ---- encoding ----------------------------------------------------------- */

static const char hexdigits[] = "0123456789abcdef";

static void to_hex(char *out, const uint8_t *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hexdigits[in[i] >> 4];
        out[2 * i + 1] = hexdigits[in[i] & 15];
    }
    out[2 * n] = 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static size_t from_hex(uint8_t *out, const char *in, size_t max)
{
    size_t n = 0;
    while (n < max && hexval(in[2 * n]) >= 0 && hexval(in[2 * n + 1]) >= 0) {
        out[n] = (uint8_t)(hexval(in[2 * n]) << 4 | hexval(in[2 * n + 1]));
        n++;
    }
    return n;
}

static uint64_t parse_hex(const char **s)
{
    uint64_t v = 0;
    while (hexval(**s) >= 0)
        v = v << 4 | (uint64_t)hexval(*(*s)++);
    return v;
}

/* A thread id: "TID", "-1", "0", or "pPID.TID" (multiprocess). -1 for
 * all, 0 for any. */
static int parse_thread_in(const char **s, int *pid)
{
    *pid = 0;
    if (**s == 'p') {
        (*s)++;
        if (**s == '-') {
            *s += 2;
            return -1;
        }
        *pid = (int)parse_hex(s);
        if (**s != '.')
            return -1;
        (*s)++;
    }
    if (**s == '-') {
        *s += 2;
        return -1;
    }
    return (int)parse_hex(s);
}

static int parse_thread(const char **s)
{
    int pid;
    return parse_thread_in(s, &pid);
}

/* The process of a run-wide thread id (tids are unique in the run). */
static int pid_of_tid(struct gdb_server *g, int tid)
{
    struct proxy_process *q =
        g->world ? proxy_world_find_tid(g->world, tid) : NULL;
    return q ? q->pid : g->pids[0];
}

static int format_thread(struct gdb_server *g, char *out, size_t cap,
                         int tid)
{
    return g->multiprocess
               ? snprintf(out, cap, "p%x.%x", pid_of_tid(g, tid), tid)
               : snprintf(out, cap, "%x", tid);
}

/* Binary data as gdb's escapes it ('}' then the byte ^ 0x20). */
static size_t escape_binary(char *out, const uint8_t *in, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = in[i];
        if (c == '#' || c == '$' || c == '}' || c == '*') {
            out[o++] = '}';
            c ^= 0x20;
        }
        out[o++] = (char)c;
    }
    return o;
}

static size_t unescape_binary(uint8_t *out, const char *in, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        out[o++] = in[i] == '}' && i + 1 < n ? (uint8_t)(in[++i] ^ 0x20)
                                             : (uint8_t)in[i];
    return o;
}

/* ---- the debugged process ------------------------------------------------ */

static bool pid_debugged(const struct gdb_server *g, int pid)
{
    for (int i = 0; i < g->nr_pids; i++)
        if (g->pids[i] == pid)
            return true;
    return false;
}

static void forget_pid(struct gdb_server *g, int pid)
{
    for (int i = 0; i < g->nr_pids; i++)
        if (g->pids[i] == pid) {
            g->pids[i] = g->pids[--g->nr_pids];
            return;
        }
}

static struct proxy_process *live_process(struct gdb_server *g, int pid)
{
    struct proxy_process *q =
        g->world && pid_debugged(g, pid) ? proxy_world_find(g->world, pid)
                                         : NULL;
    return q && !q->zombie && !q->exited ? q : NULL;
}

static int regs_tid(struct gdb_server *g);

/* The process gdb's requests are about: that of its Hg thread, else of
 * the last stop's. */
static struct proxy_process *debugged(struct gdb_server *g)
{
    return live_process(g, pid_of_tid(g, regs_tid(g)));
}

static int tid_at(const struct proxy_process *q, int k)
{
    return k == q->cur ? q->tid : q->threads[k].tid;
}

static bool thread_alive(struct proxy_process *q, int tid)
{
    for (int k = 0; q && k < q->nr_threads; k++)
        if (q->threads[k].state != PROXY_THREAD_EXITED && tid_at(q, k) == tid)
            return true;
    return false;
}

static int regs_tid(struct gdb_server *g)
{
    return g->g_tid > 0 ? g->g_tid : g->stop_tid;
}

/* ---- breakpoints ----------------------------------------------------------- */

static struct gdb_breakpoint *find_bp(struct gdb_server *g,
                                      const struct vmm_aspace *as,
                                      uint64_t addr)
{
    for (int i = 0; i < g->nr_bps; i++)
        if (g->bps[i].addr == addr && g->bps[i].as == as)
            return &g->bps[i];
    return NULL;
}

static void bp_put(struct proxy_process *q, struct gdb_breakpoint *b)
{
    uint8_t int3 = INT3;
    b->in_memory = proxy_mem_read_forced(q, b->addr, &b->orig, 1) == 0 &&
                   proxy_mem_write_forced(q, b->addr, &int3, 1) == 0;
}

static void bp_take_out(struct proxy_process *q, struct gdb_breakpoint *b)
{
    if (b->in_memory)
        (void)proxy_mem_write_forced(q, b->addr, &b->orig, 1);
    b->in_memory = false;
}

/* The breakpoints of process pid (all: pid 0) out of memory and gone;
 * those whose memory an execve took only gone. */
static void forget_breakpoints_of(struct gdb_server *g, int pid)
{
    for (int i = 0; i < g->nr_bps;) {
        struct gdb_breakpoint *b = &g->bps[i];
        if (pid && b->pid != pid) {
            i++;
            continue;
        }
        struct proxy_process *q =
            g->world ? proxy_world_find(g->world, b->pid) : NULL;
        if (q && q->as == b->as && !q->exited)
            bp_take_out(q, b);
        *b = g->bps[--g->nr_bps];
    }
}

static void forget_breakpoints(struct gdb_server *g)
{
    forget_breakpoints_of(g, 0);
}

static bool insert_bp(struct gdb_server *g, uint64_t addr)
{
    struct proxy_process *q = debugged(g);
    if (!q)
        return false;
    if (find_bp(g, q->as, addr))
        return true;
    if (g->nr_bps == MAX_BREAKPOINTS)
        return false;
    struct gdb_breakpoint *b = &g->bps[g->nr_bps];
    *b = (struct gdb_breakpoint){.pid = q->pid, .as = q->as, .addr = addr};
    bp_put(q, b);
    if (!b->in_memory)
        return false;
    g->nr_bps++;
    return true;
}

/* z0: in a process that has none there (a fork child gdb cleans before
 * detaching it: its copy was made without them) nothing to do. */
static void remove_bp(struct gdb_server *g, uint64_t addr)
{
    struct proxy_process *q = debugged(g);
    struct gdb_breakpoint *b = q ? find_bp(g, q->as, addr) : NULL;
    if (!b)
        return;
    bp_take_out(q, b);
    *b = g->bps[--g->nr_bps];
}

/* gdb's view of memory: the original bytes under its breakpoints. */
static void hide_bps(struct gdb_server *g, struct proxy_process *q,
                     uint64_t addr, uint8_t *buf, size_t len)
{
    for (int i = 0; i < g->nr_bps; i++) {
        if (g->bps[i].as != q->as)
            continue;
        const struct gdb_breakpoint *b = &g->bps[i];
        if (b->in_memory && b->addr >= addr && b->addr - addr < len)
            buf[b->addr - addr] = b->orig;
    }
}

/* gdb wrote memory under breakpoints: those bytes are the new originals
 * and the int3 goes back. */
static void rewrite_bps(struct gdb_server *g, struct proxy_process *q,
                        uint64_t addr, size_t len)
{
    for (int i = 0; i < g->nr_bps; i++) {
        struct gdb_breakpoint *b = &g->bps[i];
        if (b->as != q->as)
            continue;
        if (b->in_memory && b->addr >= addr && b->addr - addr < len)
            bp_put(q, b);
    }
}

/* ---- watchpoints and hardware breakpoints (DR0-DR3, DR7) ------------------- */

static bool set_watch(struct gdb_server *g, char type, uint64_t addr,
                      unsigned len)
{
    if (type == '1')
        len = 1;
    /* A debug register watches 1, 2, 4 or 8 aligned bytes; gdb splits a
     * larger or unaligned range over several. */
    if ((len != 1 && len != 2 && len != 4 && len != 8) || (addr & (len - 1)))
        return false;
    /* Data watches are kept by stepping (stepped_watch): a read leaves
     * nothing to compare. */
    if (type == '3')
        return false;
    for (int i = 0; i < 4; i++)
        if (!g->watches[i].used) {
            struct gdb_watch *w = &g->watches[i];
            *w = (struct gdb_watch){true, type, addr, len, 0};
            struct proxy_process *q = debugged(g);
            if (type != '1' &&
                (!q || proxy_mem_read_forced(q, addr, &w->seen, len) < 0)) {
                w->used = false;
                return false;
            }
            return true;
        }
    return false;
}

/* Whether a data watch is set: then every thread of the debugged process
 * runs one instruction at a time, its watched bytes compared after each,
 * as guest ptrace keeps a tracer's watchpoints where the backend has no
 * debug registers (and where the host's, a VM's, never fire: this one's).
 * Deterministic, and slow (an exit per instruction). */
static bool data_watched(const struct gdb_server *g)
{
    for (int i = 0; i < 4; i++)
        if (g->watches[i].used && g->watches[i].type != '1')
            return true;
    return false;
}

/* After a step: the first data watch whose bytes changed, or -1. */
static int stepped_watch(struct gdb_server *g, struct proxy_process *p)
{
    int hit = -1;
    for (int i = 0; i < 4; i++) {
        struct gdb_watch *w = &g->watches[i];
        uint64_t now = 0;
        if (!w->used || w->type == '1' ||
            proxy_mem_read_forced(p, w->addr, &now, w->len) < 0)
            continue;
        if (now != w->seen && hit < 0)
            hit = i;
        w->seen = now;
    }
    return hit;
}

static void clear_watch(struct gdb_server *g, char type, uint64_t addr)
{
    for (int i = 0; i < 4; i++)
        if (g->watches[i].used && g->watches[i].type == type &&
            g->watches[i].addr == addr) {
            g->watches[i].used = false;
            return;
        }
}

/* DR7 for the watches: local enable, R/W (00 execute, 01 write, 11 read
 * or write: x86 has no read-only), LEN (00 1, 01 2, 11 4, 10 8 bytes). */
static uint64_t watch_dr7(const struct gdb_server *g, uint64_t addr[4])
{
    uint64_t dr7 = 0;
    for (int i = 0; i < 4; i++) {
        const struct gdb_watch *w = &g->watches[i];
        addr[i] = w->used ? w->addr : 0;
        if (!w->used)
            continue;
        if (w->type != '1') { /* data: by stepping */
            addr[i] = 0;
            continue;
        }
        uint64_t rw = 0;
        uint64_t len = w->len == 1 ? 0 : w->len == 2 ? 1 : w->len == 4 ? 3 : 2;
        dr7 |= 1ULL << (2 * i) | rw << (16 + 4 * i) | len << (18 + 4 * i);
        (void)len;
    }
    return dr7;
}

/* ---- packets ------------------------------------------------------------------ */

static void reply_regs(struct gdb_server *g)
{
    static uint8_t regs[GDB_REGS_BYTES];
    struct proxy_process *q = debugged(g);
    if (!q || cli_gdb_regs_get(q, regs_tid(g), regs) < 0) {
        send_str(g, "E01");
        return;
    }
    to_hex(g->out, regs, sizeof(regs));
    send_str(g, g->out);
}

static void write_regs(struct gdb_server *g, const char *hex)
{
    static uint8_t regs[GDB_REGS_BYTES];
    struct proxy_process *q = debugged(g);
    if (!q || cli_gdb_regs_get(q, regs_tid(g), regs) < 0) {
        send_str(g, "E01");
        return;
    }
    from_hex(regs, hex, sizeof(regs));
    send_str(g, cli_gdb_regs_set(q, regs_tid(g), regs) < 0 ? "E01" : "OK");
}

/* p N / P N=VALUE: one register, through the whole block. */
static void one_reg(struct gdb_server *g, const char *arg, bool write)
{
    static uint8_t regs[GDB_REGS_BYTES];
    struct proxy_process *q = debugged(g);
    int n = (int)parse_hex(&arg);
    size_t bytes;
    int at = cli_gdb_reg_at(n, &bytes);
    if (at < 0 || !q || cli_gdb_regs_get(q, regs_tid(g), regs) < 0) {
        send_str(g, "E01");
        return;
    }
    if (!write) {
        to_hex(g->out, regs + at, bytes);
        send_str(g, g->out);
        return;
    }
    if (*arg++ != '=') {
        send_str(g, "E01");
        return;
    }
    from_hex(regs + at, arg, bytes);
    send_str(g, cli_gdb_regs_set(q, regs_tid(g), regs) < 0 ? "E01" : "OK");
}

static void read_memory(struct gdb_server *g, const char *arg)
{
    static uint8_t buf[PACKET_MAX / 2];
    struct proxy_process *q = debugged(g);
    uint64_t addr = parse_hex(&arg);
    size_t len = *arg == ',' ? (arg++, (size_t)parse_hex(&arg)) : 0;
    if (len > sizeof(buf) - 16)
        len = sizeof(buf) - 16;
    /* As much as is readable from the start, as gdbserver answers. */
    size_t got = 0;
    while (q && got < len &&
           proxy_mem_read_forced(q, addr + got, buf + got, 1) == 0) {
        size_t chunk = len - got > 4096 ? 4096 : len - got;
        if (chunk > 1 &&
            proxy_mem_read_forced(q, addr + got, buf + got, chunk) == 0)
            got += chunk;
        else
            got++;
    }
    if (!got && len) {
        send_str(g, "E14");
        return;
    }
    hide_bps(g, q, addr, buf, got);
    to_hex(g->out, buf, got);
    send_str(g, g->out);
}

static void write_memory(struct gdb_server *g, const char *arg,
                         size_t arg_len, bool binary)
{
    static uint8_t buf[PACKET_MAX];
    struct proxy_process *q = debugged(g);
    const char *start = arg;
    uint64_t addr = parse_hex(&arg);
    size_t len = *arg == ',' ? (arg++, (size_t)parse_hex(&arg)) : 0;
    if (*arg++ != ':' || !q) {
        send_str(g, "E01");
        return;
    }
    size_t n = binary ? unescape_binary(buf, arg, arg_len - (size_t)(arg - start))
                      : from_hex(buf, arg, sizeof(buf));
    if (n < len || len > sizeof(buf)) {
        send_str(g, "E01");
        return;
    }
    if (len && proxy_mem_write_forced(q, addr, buf, len) < 0) {
        send_str(g, "E14");
        return;
    }
    rewrite_bps(g, q, addr, len);
    send_str(g, "OK");
}

/* qXfer:OBJECT:read:ANNEX:OFF,LEN over a whole object in memory. */
static void reply_xfer(struct gdb_server *g, const void *obj, size_t size,
                       const char *range)
{
    uint64_t off = parse_hex(&range);
    size_t len = *range == ',' ? (range++, (size_t)parse_hex(&range)) : 0;
    if (len > PACKET_MAX / 2)
        len = PACKET_MAX / 2;
    if (off >= size) {
        send_str(g, "l");
        return;
    }
    size_t n = size - off < len ? size - off : len;
    g->out[0] = n < size - off ? 'm' : 'l';
    size_t o = 1 + escape_binary(g->out + 1, (const uint8_t *)obj + off, n);
    send_packet(g, g->out, o);
}

static void xfer(struct gdb_server *g, const char *what)
{
    struct proxy_process *q = debugged(g);
    if (strncmp(what, "features:read:target.xml:", 25) == 0) {
        reply_xfer(g, cli_gdb_target_xml, strlen(cli_gdb_target_xml),
                   what + 25);
    } else if (strncmp(what, "auxv:read::", 11) == 0 && q) {
        static uint8_t auxv[64 * 16];
        reply_xfer(g, auxv, cli_gdb_auxv(q, auxv, sizeof(auxv)), what + 11);
    } else if (strncmp(what, "exec-file:read:", 15) == 0 && q) {
        const char *range = strchr(what + 15, ':');
        if (!range)
            send_str(g, "E01");
        else
            reply_xfer(g, q->exe_path, strlen(q->exe_path), range + 1);
    } else {
        send_str(g, "");
    }
}

static void thread_list(struct gdb_server *g)
{
    size_t o = 0;
    g->out[o++] = 'm';
    for (int i = 0; i < g->nr_pids; i++) {
        struct proxy_process *q = live_process(g, g->pids[i]);
        for (int k = 0; q && k < q->nr_threads && o < PACKET_MAX - 64; k++) {
            if (q->threads[k].state == PROXY_THREAD_EXITED)
                continue;
            if (o > 1)
                g->out[o++] = ',';
            o += (size_t)format_thread(g, g->out + o, 64, tid_at(q, k));
        }
    }
    send_str(g, o > 1 ? (g->out[o] = 0, g->out) : "l");
}

/* monitor COMMAND (qRcmd): hvrun's own questions. */
static void monitor(struct gdb_server *g, const char *hex)
{
    char cmd[256] = {0};
    from_hex((uint8_t *)cmd, hex, sizeof(cmd) - 1);
    char text[512];
    struct proxy_process *q = debugged(g);
    uint64_t now = q ? q->det->events : 0;
    if (strcmp(cmd, "when") == 0 && q) {
        uint64_t own = 0;
        for (int k = 0; k < q->nr_threads; k++)
            if (tid_at(q, k) == g->stop_tid)
                own = q->threads[k].events;
        /* The detlog's numbering too: `hvrun detlog FILE` prints the
         * records #0.. of a run --detlog FILE wrote; this stop is after
         * the last of them so far. */
        snprintf(text, sizeof(text),
                 "Current event: %llu (thread %d, %llu events of its "
                 "own); after detlog record #%llu; detlog digest %016llx\n",
                 (unsigned long long)now, g->stop_tid,
                 (unsigned long long)own,
                 (unsigned long long)(q->det->log.n
                                          ? q->det->log.n - 1
                                          : 0),
                 (unsigned long long)q->det->log.digest);
    } else if (strncmp(cmd, "goto ", 5) == 0 && q) {
        uint64_t to = strtoull(cmd + 5, NULL, 10);
        if (to > now) {
            g->goto_event = to;
            snprintf(text, sizeof(text),
                     "hvrun: the run stops at event %llu on `continue` "
                     "(or at a breakpoint before it)\n",
                     (unsigned long long)to);
        } else
            snprintf(text, sizeof(text),
                     "hvrun: event %llu is behind this stop (%llu): "
                     "reverse execution is not built; run again with "
                     "--gdb-start %llu\n", (unsigned long long)to,
                     (unsigned long long)now, (unsigned long long)to);
    } else
        snprintf(text, sizeof(text),
                 "hvrun: monitor commands: when (the run's event count "
                 "at this stop), goto EVENT (stop there at the next "
                 "continue)\n");
    g->out[0] = 'O';
    to_hex(g->out + 1, (const uint8_t *)text, strlen(text));
    send_str(g, g->out);
    send_str(g, "OK");
}

/*
 * qHvrunWhere (gdbserver_reverse.c's, not gdb's): this stop as a point of
 * the run: the event count, the stopped thread (pid, tid), its rip and
 * own event count, the detlog's digest so far (a re-run that took other
 * values differs there), the debugger's steps so far, and how many times
 * the run took something from outside (a wakeup by a host fd, a
 * host-timed preemption: what a re-run cannot repeat).
 */
static void reply_where(struct gdb_server *g)
{
    static uint8_t regs[GDB_REGS_BYTES];
    struct proxy_process *q = live_process(g, pid_of_tid(g, g->stop_tid));
    if (!q) {
        send_str(g, "E01");
        return;
    }
    uint64_t rip = 0, own = 0;
    size_t bytes;
    int at = cli_gdb_reg_at(16, &bytes);
    if (at >= 0 && cli_gdb_regs_get(q, g->stop_tid, regs) == 0)
        memcpy(&rip, regs + at, sizeof(rip));
    for (int k = 0; k < q->nr_threads; k++)
        if (tid_at(q, k) == g->stop_tid)
            own = q->threads[k].events;
    snprintf(g->out, sizeof(g->out),
             "E%llu;P%x;T%x;R%llx;O%llu;D%llx;S%llu;X%llu",
             (unsigned long long)q->det->events, q->pid, g->stop_tid,
             (unsigned long long)rip, (unsigned long long)own,
             (unsigned long long)q->det->log.digest,
             (unsigned long long)g->steps,
             (unsigned long long)q->det->reads[DET_SRC_EXTERNAL]);
    send_str(g, g->out);
}

/* QPassSignals:SIG;SIG...: gdb's signals to pass on without a stop. */
static void pass_signals(struct gdb_server *g, const char *list)
{
    g->pass_sigs = 0;
    while (*list) {
        int s = linux_sig((int)parse_hex(&list));
        if (s > 0 && s <= 64)
            g->pass_sigs |= 1ULL << (s - 1);
        if (*list == ';')
            list++;
        else
            break;
    }
    send_str(g, "OK");
}

enum served { SERVED_ON, SERVED_RESUME, SERVED_GONE };

/* vCont;ACTION[:THREAD];...: the step wanted, the signal to deliver. */
static enum served vcont(struct gdb_server *g, const char *s)
{
    g->step_tid = 0;
    g->resume_sig = 0;
    while (*s == ';') {
        char a = *++s;
        s++;
        int sig = 0;
        if (a == 'C' || a == 'S')
            sig = linux_sig((int)parse_hex(&s));
        int tid = -1;
        if (*s == ':') {
            s++;
            tid = parse_thread(&s);
        }
        bool this_one = tid <= 0 || tid == g->stop_tid;
        if ((a == 's' || a == 'S') && !g->step_tid)
            g->step_tid = tid > 0 ? tid : g->stop_tid;
        if (sig && this_one)
            g->resume_sig = sig;
        while (*s && *s != ';')
            s++;
    }
    return SERVED_RESUME;
}

static void kill_run(struct gdb_server *g)
{
    forget_breakpoints(g);
    proxy_stop_signal = SIGKILL;
}

/* QHvrunCheckpoint (gdbserver_checkpoint.c): "OK" with the checkpoint's
 * channel, or "E." and the reason; a restored copy says nothing (the
 * front end speaks first on its new connection). */
static void checkpoint(struct gdb_server *g)
{
    char why[200];
    int chan = -1;
    int rc = g->world ? cli_gdb_checkpoint(g->world, g->fd, &chan, why,
                                           sizeof(why))
                      : -EINVAL;
    if (rc == 1) {
        g->in_len = 0;
        return;
    }
    if (rc == 0) {
        if (cli_gdb_checkpoint_reply(g->fd, chan) < 0)
            let_go(g);
        return;
    }
    if (!g->world)
        snprintf(why, sizeof(why), "the run has not started");
    snprintf(g->out, sizeof(g->out), "E.%s", why);
    send_str(g, g->out);
}

/* One packet; what it did to the stop. */
static enum served handle(struct gdb_server *g, char *pkt, size_t len)
{
    switch (pkt[0]) {
    case '?':
        if (g->initial_stop) {
            char id[64];
            format_thread(g, id, sizeof(id), g->stop_tid);
            snprintf(g->last_stop, sizeof(g->last_stop), "T05thread:%s;",
                     id);
        }
        send_str(g, g->last_stop);
        return SERVED_ON;
    case '!':
        send_str(g, "OK");
        return SERVED_ON;
    case 'g':
        reply_regs(g);
        return SERVED_ON;
    case 'G':
        write_regs(g, pkt + 1);
        return SERVED_ON;
    case 'p':
    case 'P':
        one_reg(g, pkt + 1, pkt[0] == 'P');
        return SERVED_ON;
    case 'm':
        read_memory(g, pkt + 1);
        return SERVED_ON;
    case 'M':
    case 'X':
        write_memory(g, pkt + 1, len - 1, pkt[0] == 'X');
        return SERVED_ON;
    case 'Z':
    case 'z': {
        const char *a = pkt + 3;
        uint64_t addr = parse_hex(&a);
        if (pkt[1] >= '1' && pkt[1] <= '4') {
            unsigned kind = *a == ',' ? (a++, (unsigned)parse_hex(&a)) : 1;
            send_str(g, pkt[0] == 'Z' ? (set_watch(g, pkt[1], addr, kind)
                                             ? "OK" : "E01")
                                      : (clear_watch(g, pkt[1], addr), "OK"));
            return SERVED_ON;
        }
        if (pkt[1] != '0') {
            send_str(g, "");
            return SERVED_ON;
        }
        if (pkt[0] == 'Z')
            send_str(g, insert_bp(g, addr) ? "OK" : "E01");
        else {
            remove_bp(g, addr);
            send_str(g, "OK");
        }
        return SERVED_ON;
    }
    case 'H': {
        /* Hg pPID.TID; pPID.0 or pPID.-1: a thread of that process (gdb
         * selects an inferior so before its memory and breakpoints) */
        const char *a = pkt + 2;
        int pid, tid = parse_thread_in(&a, &pid);
        struct proxy_process *q = pid > 0 ? live_process(g, pid) : NULL;
        if (tid <= 0 && q)
            tid = q->tid;
        if (pkt[1] == 'g')
            g->g_tid = tid > 0 ? tid : 0;
        send_str(g, "OK");
        return SERVED_ON;
    }
    case 'T': {
        const char *a = pkt + 1;
        int tid = parse_thread(&a);
        send_str(g, thread_alive(live_process(g, pid_of_tid(g, tid)), tid)
                        ? "OK"
                        : "E01");
        return SERVED_ON;
    }
    case 'c':
    case 's':
        g->resume_sig = 0;
        g->step_tid = pkt[0] == 's' ? regs_tid(g) : 0;
        return SERVED_RESUME;
    case 'C':
    case 'S': {
        const char *a = pkt + 1;
        g->resume_sig = linux_sig((int)parse_hex(&a));
        g->step_tid = pkt[0] == 'S' ? regs_tid(g) : 0;
        return SERVED_RESUME;
    }
    case 'k':
        kill_run(g);
        return SERVED_GONE;
    case 'D':
        send_str(g, "OK");
        if (pkt[1] == ';') { /* D;PID: that process only (a fork child) */
            const char *a = pkt + 2;
            int pid = (int)parse_hex(&a);
            forget_breakpoints_of(g, pid);
            forget_pid(g, pid);
            if (g->nr_pids > 0)
                return SERVED_ON;
        }
        let_go(g);
        return SERVED_GONE;
    case 'v':
        if (strcmp(pkt, "vCont?") == 0)
            send_str(g, "vCont;c;C;s;S");
        else if (strncmp(pkt, "vCont;", 6) == 0)
            return vcont(g, pkt + 5);
        else if (strncmp(pkt, "vKill", 5) == 0) {
            kill_run(g);
            send_str(g, "OK");
            return SERVED_GONE;
        } else
            send_str(g, "");
        return SERVED_ON;
    case 'q':
        if (strncmp(pkt, "qSupported", 10) == 0) {
            g->multiprocess = strstr(pkt, "multiprocess+") != NULL;
            /* fork and exec events need the pPID.TID ids */
            g->fork_events =
                g->multiprocess && strstr(pkt, "fork-events+") != NULL;
            g->exec_events =
                g->multiprocess && strstr(pkt, "exec-events+") != NULL;
            snprintf(g->out, sizeof(g->out),
                     "PacketSize=4000;qXfer:features:read+;"
                     "qXfer:auxv:read+;qXfer:exec-file:read+;"
                     "QStartNoAckMode+;QPassSignals+;swbreak+;hwbreak+;"
                     "vContSupported+;multiprocess+%s%s",
                     g->fork_events ? ";fork-events+" : "",
                     g->exec_events ? ";exec-events+" : "");
            send_str(g, g->out);
        } else if (strncmp(pkt, "qXfer:", 6) == 0)
            xfer(g, pkt + 6);
        else if (strcmp(pkt, "qfThreadInfo") == 0)
            thread_list(g);
        else if (strcmp(pkt, "qsThreadInfo") == 0)
            send_str(g, "l");
        else if (strcmp(pkt, "qC") == 0) {
            char id[64];
            format_thread(g, id, sizeof(id), g->stop_tid);
            snprintf(g->out, sizeof(g->out), "QC%s", id);
            send_str(g, g->out);
        } else if (strncmp(pkt, "qAttached", 9) == 0)
            send_str(g, "1"); /* the run goes on when gdb leaves */
        else if (strncmp(pkt, "qRcmd,", 6) == 0)
            monitor(g, pkt + 6);
        else if (strcmp(pkt, "qSymbol::") == 0)
            send_str(g, "OK");
        else if (strcmp(pkt, "qHvrunWhere") == 0)
            reply_where(g);
        else
            send_str(g, "");
        return SERVED_ON;
    case 'Q':
        if (strcmp(pkt, "QStartNoAckMode") == 0) {
            send_str(g, "OK");
            g->noack = true;
        } else if (strncmp(pkt, "QPassSignals:", 13) == 0)
            pass_signals(g, pkt + 13);
        else if (strncmp(pkt, "QHvrunStopAtStep:", 17) == 0) {
            g->stop_at_step = strtoull(pkt + 17, NULL, 10);
            send_str(g, "OK");
        } else if (strcmp(pkt, "QHvrunCheckpoint") == 0)
            checkpoint(g);
        else if (strncmp(pkt, "QHvrunGoto:", 11) == 0) {
            /* the front end's own stop at an event (0: none) */
            g->goto_event = strtoull(pkt + 11, NULL, 10);
            send_str(g, "OK");
        }
        else
            send_str(g, "");
        return SERVED_ON;
    default:
        send_str(g, "");
        return SERVED_ON;
    }
}

/* Serves gdb at a stop until it resumes the run (true) or leaves. */
static bool serve(struct gdb_server *g)
{
    static char pkt[PACKET_MAX + 1];
    size_t len;
    g->interrupt = false;
    while (g->fd >= 0) {
        if (!next_packet(g, pkt, sizeof(pkt), &len)) {
            let_go(g); /* gdb went away: the run goes on without it */
            return false;
        }
        switch (handle(g, pkt, len)) {
        case SERVED_ON:
            break;
        case SERVED_RESUME:
            g->g_tid = 0;
            return true;
        case SERVED_GONE:
            return false;
        }
    }
    return false;
}

/* A stop of thread tid: told to gdb, then served. */
static bool stop(struct gdb_server *g, int tid, int sig, bool swbreak)
{
    cli_gdb_checkpoints_reap(); /* those deleted since the last stop */
    char id[64];
    g->stop_tid = tid;
    g->step_tid = 0;
    g->initial_stop = false;
    format_thread(g, id, sizeof(id), tid);
    char why[64] = "";
    if (swbreak)
        snprintf(why, sizeof(why), "swbreak:;");
    else if (g->watch_hit >= 0 && sig == SIGTRAP) {
        const struct gdb_watch *w = &g->watches[g->watch_hit];
        if (w->type == '1')
            snprintf(why, sizeof(why), "hwbreak:;");
        else
            snprintf(why, sizeof(why), "%s:%llx;",
                     watch_names[w->type - '1'],
                     (unsigned long long)w->addr);
    }
    g->watch_hit = -1;
    snprintf(g->last_stop, sizeof(g->last_stop), "T%02xthread:%s;%s",
             gdb_sig(sig), id, why);
    send_str(g, g->last_stop);
    return serve(g);
}

/* ---- the hooks ------------------------------------------------------------------- */

static bool is_debugged(struct gdb_server *g, const struct proxy_process *p)
{
    return !g->detached && g->fd >= 0 && pid_debugged(g, p->pid);
}

static void before_run(void *ctx, struct proxy_process *p)
{
    struct gdb_server *g = ctx;
    if (!g->started) {
        /* The first instruction, or the first turn at --gdb-start's
         * event: gdb asks '?' for this stop, of the first process. */
        if (p->det->events < g->start_event)
            return;
        if (g->fd < 0 && (g->listen_fd < 0 || accept_gdb(g) < 0)) {
            g->started = g->detached = true;
            return;
        }
        g->started = true;
        g->world = p->world;
        struct proxy_process *first = p->world->procs[0];
        g->pids[0] = first->pid;
        g->nr_pids = 1;
        g->stop_tid = first->tid;
        g->initial_stop = true; /* '?' says it once gdb chose its ids */
        serve(g);
        return;
    }
    if (g->detached || g->fd < 0)
        return;
    if (g->goto_event && p->det->events >= g->goto_event &&
        is_debugged(g, p)) {
        g->goto_event = 0;
        stop(g, p->tid, 0, false); /* T00: "stopped", no signal */
        return;
    }
    struct pollfd pfd = {.fd = g->fd, .events = POLLIN};
    if (!g->interrupt && poll(&pfd, 1, 0) == 1) {
        if (!receive(g)) {
            let_go(g);
            return;
        }
        for (size_t i = 0; i < g->in_len; i++)
            if (g->in[i] == 0x03)
                g->interrupt = true;
        g->in_len = 0;
    }
    /* ^C stops the debugged process when one of its threads comes next. */
    if (g->interrupt && is_debugged(g, p)) {
        g->interrupt = false;
        stop(g, p->tid, SIGINT, false);
    }
}

static bool stepping(void *ctx, struct proxy_process *p)
{
    struct gdb_server *g = ctx;
    return (is_debugged(g, p) &&
            ((g->step_tid && g->step_tid == p->tid) || data_watched(g))) ||
           (g->over_tid && g->over_tid == p->tid);
}

static void load_debugregs(void *ctx, struct proxy_process *p)
{
    struct gdb_server *g = ctx;
    if (!is_debugged(g, p) && g->armed_vm != p->vm)
        return;
    uint64_t addr[4], dr7 = is_debugged(g, p) ? watch_dr7(g, addr) : 0;
    if (!dr7 && g->armed_vm != p->vm)
        return;
    if (g->armed_vm == p->vm && g->armed[4] == dr7 &&
        memcmp(g->armed, addr, sizeof(addr)) == 0)
        return;
    if (!dr7)
        memset(addr, 0, sizeof(addr));
    (void)vmm_vm_set_debugregs(p->vm, addr, dr7);
    memcpy(g->armed, addr, sizeof(addr));
    g->armed[4] = dr7;
    g->armed_vm = dr7 ? p->vm : NULL;
    p->dr_loaded_vm = NULL; /* a guest tracer's go on again (ptrace.c) */
}

static bool owns_trap(void *ctx, struct proxy_process *p, unsigned vector)
{
    struct gdb_server *g = ctx;
    g->watch_hit = -1;
    if (vector == 1 && g->armed_vm == p->vm && is_debugged(g, p)) {
        uint64_t dr6 = vmm_vm_take_dr6(p->vm);
        for (int i = 0; i < 4; i++)
            if ((dr6 & (1ULL << i)) && g->watches[i].used)
                g->watch_hit = i;
        if (g->watch_hit >= 0)
            return true;
    }
    if (vector == 1)
        return stepping(ctx, p);
    if (g->detached)
        return false;
    const struct gdb_breakpoint *b =
        find_bp(g, p->as, vmm_vm_regs(p->vm)->rip - 1);
    return b && b->in_memory;
}

/* A step (or a syscall) while data is watched: true when it is no stop
 * (the bytes did not change, and gdb did not step this thread itself). */
static bool quiet_watch_step(struct gdb_server *g, struct proxy_process *p)
{
    if (!is_debugged(g, p) || !data_watched(g) || g->watch_hit >= 0)
        return false;
    g->watch_hit = stepped_watch(g, p);
    return g->watch_hit < 0 && g->step_tid != p->tid;
}

/* One more debugger step of a debugged thread (a #DB of its step, or a
 * syscall it ran stepped): true when it is QHvrunStopAtStep's, a stop. */
static bool counted_step(struct gdb_server *g, struct proxy_process *p)
{
    if (!is_debugged(g, p) || g->watch_hit >= 0 ||
        !(g->step_tid == p->tid || data_watched(g)))
        return false;
    g->steps++;
    if (!g->stop_at_step || g->steps != g->stop_at_step)
        return false;
    g->stop_at_step = 0;
    (void)stepped_watch(g, p); /* the watched bytes seen up to here */
    g->watch_hit = -1;
    return true;
}

static void trap(void *ctx, struct proxy_process *p, unsigned vector)
{
    struct gdb_server *g = ctx;
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    /* A step into hvrun's trampoline of a rewritten back edge (or an
     * RDTSC stub) goes on to where it leads back into the program: gdb
     * knows no function there, and took the stop for a call whose
     * return it could not find (a `step` through ld.so's resolver ran
     * to the end). One step to gdb, as a jump over the span. */
    if (vector == 1 && is_debugged(g, p) && g->step_tid == p->tid &&
        g->watch_hit < 0 && proxy_code_is_hvruns(p, r->rip))
        return;
    if (vector == 1 && counted_step(g, p)) {
        stop(g, p->tid, SIGTRAP, false);
        return;
    }
    if (vector == 1 && quiet_watch_step(g, p))
        return;
    if (g->over_tid && g->over_tid == p->tid && vector == 1) {
        /* A sharer stepped over: the breakpoint goes back. */
        struct gdb_breakpoint *b = find_bp(g, p->as, g->over_addr);
        if (b)
            bp_put(p, b);
        g->over_tid = 0;
        return;
    }
    if (vector == 3) {
        r->rip--; /* at the breakpoint, its byte the original's */
        if (!is_debugged(g, p)) {
            struct gdb_breakpoint *b = find_bp(g, p->as, r->rip);
            if (b)
                bp_take_out(p, b);
            g->over_tid = p->tid;
            g->over_addr = r->rip;
            return;
        }
    }
    if (is_debugged(g, p))
        stop(g, p->tid, SIGTRAP, vector == 3);
}

static bool on_signal(void *ctx, struct proxy_process *p, int sig)
{
    struct gdb_server *g = ctx;
    if (!is_debugged(g, p) || sig == SIGKILL ||
        (g->pass_sigs & (1ULL << (sig - 1))))
        return false;
    if (!stop(g, p->tid, sig, false))
        return false; /* gdb left: the signal goes on as without it */
    return g->resume_sig == 0;
}

/* Calls that may copy a process's memory where no argument points:
 * through an iovec or message (the pointer one level down), a file
 * position (/proc/self/mem), the whole image (fork, exec), or mappings
 * hvrun rewrites (the CPUID/RDTSC rewriter on mprotect and mmap). */
static bool copies_unseen(long nr)
{
    switch (nr) {
    case SYS_read: case SYS_readv: case SYS_pread64: case SYS_preadv:
    case SYS_preadv2: case SYS_writev: case SYS_pwritev: case SYS_pwritev2:
    case SYS_sendmsg: case SYS_sendmmsg: case SYS_recvmsg:
    case SYS_recvmmsg: case SYS_process_vm_readv: case SYS_process_vm_writev:
    case SYS_fork: case SYS_vfork: case SYS_clone: case SYS_clone3:
    case SYS_execve: case SYS_execveat: case SYS_mprotect: case SYS_mmap:
    case SYS_mremap: case SYS_madvise: case SYS_munmap: case SYS_ptrace:
    case SYS_io_submit: case SYS_io_uring_enter: case SYS_sendfile:
    case SYS_splice: case SYS_vmsplice: case SYS_copy_file_range:
        return true;
    default:
        return false;
    }
}

/* How many arguments a frequent call takes (registers past them hold
 * whatever the caller left, a code address often); 6 for the rest. */
static int call_args(long nr)
{
    switch (nr) {
    case SYS_getpid: case SYS_getppid: case SYS_gettid: case SYS_getuid:
    case SYS_geteuid: case SYS_getgid: case SYS_getegid:
    case SYS_sched_yield: case SYS_pause: case SYS_getpgrp:
    case SYS_setsid: case SYS_sync: case SYS_rt_sigreturn:
        return 0;
    case SYS_close: case SYS_dup: case SYS_exit: case SYS_exit_group:
    case SYS_alarm: case SYS_brk: case SYS_umask: case SYS_getpgid:
    case SYS_getsid: case SYS_epoll_create1: case SYS_fsync:
    case SYS_fdatasync: case SYS_fchdir: case SYS_set_tid_address:
    case SYS_time: case SYS_uname: case SYS_sysinfo: case SYS_pipe:
        return 1;
    case SYS_clock_gettime: case SYS_gettimeofday: case SYS_nanosleep:
    case SYS_kill: case SYS_dup2: case SYS_arch_prctl: case SYS_listen:
    case SYS_shutdown: case SYS_ftruncate: case SYS_fstat: case SYS_stat:
    case SYS_lstat: case SYS_access: case SYS_getcwd: case SYS_pipe2:
    case SYS_set_robust_list: case SYS_sigaltstack: case SYS_getrlimit:
        return 2;
    case SYS_write: case SYS_lseek: case SYS_ioctl: case SYS_socket:
    case SYS_connect: case SYS_accept: case SYS_bind: case SYS_getdents64:
    case SYS_fcntl: case SYS_open: case SYS_tgkill: case SYS_poll:
    case SYS_getrandom: case SYS_readlink: case SYS_dup3:
        return 3;
    case SYS_rt_sigprocmask: case SYS_rt_sigaction: case SYS_openat:
    case SYS_newfstatat: case SYS_epoll_wait: case SYS_epoll_ctl:
    case SYS_wait4: case SYS_clock_nanosleep: case SYS_prlimit64:
    case SYS_readlinkat: case SYS_rseq: case SYS_accept4:
        return 4;
    default:
        return 6;
    }
}

/* Whether p's syscall (its registers before dispatch) may copy memory
 * where a breakpoint of its address space is: an argument in a mapping
 * that holds one, or a call of copies_unseen. Otherwise the breakpoints
 * stay in: taking one out and back costs two mprotects of read-only
 * text, on every call. */
static bool call_may_see_bps(struct gdb_server *g, struct proxy_process *p)
{
    const struct vmm_regs *r = vmm_vm_regs(p->vm);
    bool any = false;
    for (int i = 0; i < g->nr_bps && !any; i++)
        any = g->bps[i].as == p->as && g->bps[i].in_memory;
    if (!any)
        return false;
    if (copies_unseen((long)r->rax))
        return true;
    const uint64_t args[6] = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9};
    for (int a = 0; a < call_args((long)r->rax); a++) {
        const struct vmm_vma *v = vmm_as_find_vma(p->as, args[a]);
        for (int i = 0; v && i < g->nr_bps; i++)
            if (g->bps[i].as == p->as && g->bps[i].addr >= v->start &&
                g->bps[i].addr < v->end)
                return true;
    }
    return false;
}

static void around_call(void *ctx, struct proxy_process *p, bool after)
{
    struct gdb_server *g = ctx;
    if (!after) {
        g->calling_pid = p->pid;
        g->calling_as = p->as;
        g->bps_out = false;
        if (!call_may_see_bps(g, p))
            return;
        for (int i = 0; i < g->nr_bps; i++)
            if (g->bps[i].as == p->as && g->bps[i].in_memory) {
                bp_take_out(p, &g->bps[i]);
                g->bps[i].in_memory = true; /* to go back after */
                g->bps_out = true;
            }
        return;
    }
    g->calling_pid = 0;
    if (p->exited)
        return;
    if (p->as != g->calling_as) {
        /* An execve: the breakpoints went with the old image; gdb sets
         * them again in the new one after the exec event. */
        forget_breakpoints_of(g, p->pid);
        if (is_debugged(g, p) && g->exec_events) {
            int n = snprintf(g->pending, sizeof(g->pending), "exec:");
            for (const char *c = p->exe_path;
                 *c && n + 3 < (int)sizeof(g->pending); c++)
                n += snprintf(g->pending + n, sizeof(g->pending) - (size_t)n,
                              "%02x", (unsigned char)*c);
            g->pending_pid = p->pid;
        }
        return;
    }
    if (!g->bps_out)
        return;
    g->bps_out = false;
    /* The same memory still: the breakpoints go back, over what the call
     * left there (their new originals). */
    for (int i = 0; i < g->nr_bps; i++)
        if (g->bps[i].as == p->as && g->bps[i].in_memory)
            bp_put(p, &g->bps[i]);
}

/* A process joined the run: the fork of the calling one, if that is
 * debugged and gdb takes fork events, is debugged too until gdb detaches
 * it. A vfork child (the parent's memory) is not: gdb's breakpoints there
 * are stepped over unseen. */
static void new_process(void *ctx, struct proxy_process *child)
{
    struct gdb_server *g = ctx;
    if (!g->fork_events || !pid_debugged(g, g->calling_pid) ||
        child->as == g->calling_as || g->nr_pids == MAX_DEBUGGED)
        return;
    g->pids[g->nr_pids++] = child->pid;
    snprintf(g->pending, sizeof(g->pending), "fork:p%x.%x", child->pid,
             child->tid);
    g->pending_pid = g->calling_pid;
}

/* A syscall of p's current thread is over (stepped: the thread gdb steps
 * ran it): a fork or exec event, a watched change, the step's end. */
static void syscall_done(void *ctx, struct proxy_process *p, bool stepped)
{
    struct gdb_server *g = ctx;
    if (g->pending[0] && g->pending_pid == p->pid && is_debugged(g, p)) {
        char id[64];
        format_thread(g, id, sizeof(id), p->tid);
        g->stop_tid = p->tid;
        g->step_tid = 0;
        g->initial_stop = false;
        snprintf(g->last_stop, sizeof(g->last_stop), "T05%s;thread:%s;",
                 g->pending, id);
        g->pending[0] = 0;
        send_str(g, g->last_stop);
        serve(g);
        return;
    }
    if (stepped && counted_step(g, p))
        stop(g, p->tid, SIGTRAP, false);
    else if (stepped && !quiet_watch_step(g, p))
        stop(g, p->tid, SIGTRAP, false);
}

static int idle_fd(void *ctx)
{
    struct gdb_server *g = ctx;
    return g->started && !g->detached ? g->fd : -1;
}

/* Every thread waits: ^C from gdb stops the run where they wait (the
 * first debugged process's thread reported); a deadlock is said first,
 * and the run ends after gdb resumes it. */
static void idle(void *ctx, struct proxy_world *w, bool deadlock)
{
    struct gdb_server *g = ctx;
    (void)w;
    if (!g->started || g->detached || g->fd < 0)
        return;
    if (!deadlock) {
        if (!receive(g)) {
            let_go(g);
            return;
        }
        for (size_t i = 0; i < g->in_len; i++)
            if (g->in[i] == 0x03)
                g->interrupt = true;
        g->in_len = 0;
        if (!g->interrupt)
            return;
    }
    g->interrupt = false;
    struct proxy_process *q = live_process(g, g->pids[0]);
    for (int i = 1; !q && i < g->nr_pids; i++)
        q = live_process(g, g->pids[i]);
    if (!q)
        return;
    if (deadlock) {
        static const char msg[] = "hvrun: deadlock: every guest thread "
                                  "waits and nothing can wake one; the run "
                                  "ends when you continue\n";
        g->out[0] = 'O';
        to_hex(g->out + 1, (const uint8_t *)msg, sizeof(msg) - 1);
        send_str(g, g->out);
    }
    stop(g, q->tid, deadlock ? 0 : SIGINT, false);
}

static void exit_reply(struct gdb_server *g, int pid, int status)
{
    char which[32] = "";
    if (g->multiprocess)
        snprintf(which, sizeof(which), ";process:%x", pid);
    if (WIFSIGNALED(status))
        snprintf(g->last_stop, sizeof(g->last_stop), "X%02x%s",
                 gdb_sig(WTERMSIG(status)), which);
    else
        snprintf(g->last_stop, sizeof(g->last_stop), "W%02x%s",
                 WEXITSTATUS(status) & 0xff, which);
    send_str(g, g->last_stop);
}

/* The last debugged process ended (or the run did): gdb is told once. */
static void report_exit(struct gdb_server *g, int pid, int status)
{
    if (g->exit_reported || g->detached || g->fd < 0)
        return;
    g->exit_reported = true;
    g->step_tid = 0;
    g->nr_bps = 0;
    exit_reply(g, pid, status);
}

static void exited(void *ctx, struct proxy_process *p)
{
    struct gdb_server *g = ctx;
    if (!is_debugged(g, p))
        return;
    bool first = p->pid == g->pids[0];
    forget_breakpoints_of(g, p->pid);
    if (first || g->nr_pids == 1) {
        report_exit(g, p->pid, p->exit_status);
        return;
    }
    /* Another of several: its exit is a stop; the others go on. */
    forget_pid(g, p->pid);
    exit_reply(g, p->pid, p->exit_status);
    serve(g);
}

static void gdb_hooks(struct gdb_server *g)
{
    g->ops = (struct proxy_debugger){
        .ctx = g,
        .before_run = before_run,
        .stepping = stepping,
        .load_debugregs = load_debugregs,
        .owns_trap = owns_trap,
        .trap = trap,
        .signal = on_signal,
        .around_call = around_call,
        .new_process = new_process,
        .idle_fd = idle_fd,
        .idle = idle,
        .syscall_done = syscall_done,
        .exited = exited,
    };
}

const struct proxy_debugger *cli_gdb_debugger(struct gdb_server *g)
{
    return &g->ops;
}

void cli_gdb_close(struct gdb_server *g, int wait_status)
{
    if (!g)
        return;
    g->world = NULL; /* the run's processes are going */
    report_exit(g, g->pids[0], wait_status);
    /* gdb may still ask (extended-remote stays connected): every resume
     * gets the exit again, until it leaves. */
    static char pkt[PACKET_MAX + 1];
    size_t len;
    while (g->fd >= 0 && next_packet(g, pkt, sizeof(pkt), &len)) {
        if (pkt[0] == 'k' || pkt[0] == 'D' || strncmp(pkt, "vKill", 5) == 0) {
            if (pkt[0] != 'k')
                send_str(g, "OK");
            break;
        }
        if (pkt[0] == 'c' || pkt[0] == 's' || pkt[0] == 'C' ||
            pkt[0] == 'S' || strncmp(pkt, "vCont;", 6) == 0 || pkt[0] == '?')
            send_str(g, g->last_stop);
        else if (strncmp(pkt, "QStartNoAckMode", 15) == 0) {
            send_str(g, "OK");
            g->noack = true;
        } else if (strcmp(pkt, "qfThreadInfo") == 0)
            send_str(g, "l");
        else
            send_str(g, pkt[0] == 'q' || pkt[0] == 'v' ? "" : "E01");
    }
    if (g->fd >= 0)
        close(g->fd);
    if (g->listen_fd >= 0)
        close(g->listen_fd);
    if (g->unix_path[0])
        unlink(g->unix_path);
    free(g);
}
