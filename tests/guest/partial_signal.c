/*
 * partial_signal.c - a blocking transfer that a signal (or a socket
 * timeout) ends part way returns the count that moved, as Linux does;
 * only a call that moved nothing fails (EINTR, EAGAIN) or restarts
 * (SA_RESTART). 16 MiB go through loopback TCP and a pipe while the peer
 * moves them slowly and signals the process that blocks, with and without
 * SA_RESTART; send, sendmsg, write, writev and recv with MSG_WAITALL,
 * read, readv. The receiver checks every byte against its position in the
 * stream, so a transfer made again from its start (data sent twice) or a
 * lost count shows. Output: totals and checks only, never the count of a
 * single call (that depends on timing; PARTIAL_SIGNAL_VERBOSE=1 prints
 * them to stderr). Under hvrun the pipe cases are deterministic; the TCP
 * ones move the same bytes, but how many each call moves follows the host
 * TCP stack's timers (delayed ACKs open the window in host time).
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOTAL (16u << 20)
#define CHUNK (64u << 10)
#define SIGNAL_EVERY 8 /* the slow peer signals after this many chunks */
#define PAUSE_US 300

enum op { OP_SEND, OP_SENDMSG, OP_WRITEV_TCP, OP_WRITE, OP_WRITEV,
          OP_RECV_WAITALL,
          OP_RECVMSG_WAITALL, OP_READ, OP_READV };
enum stop { BY_SIGNAL, BY_SIGNAL_RESTART, BY_TIMEOUT };

static volatile sig_atomic_t signals_seen;

static void on_usr1(int sig)
{
    (void)sig;
    signals_seen++;
}

static uint8_t pattern_at(size_t i)
{
    return (uint8_t)(i ^ (i >> 8) ^ (i >> 16) ^ 0x5a);
}

static uint8_t *pattern_buf(void)
{
    uint8_t *b = malloc(TOTAL);
    for (size_t i = 0; i < TOTAL; i++)
        b[i] = pattern_at(i);
    return b;
}

/* The checks one side made of its calls. */
struct calls {
    int bad;        /* a result other than a count or the allowed error */
    int short_ok;   /* calls that returned a partial count */
    int eintr;      /* -1 EINTR */
    int eagain;     /* -1 EAGAIN */
};

static void judge(struct calls *c, ssize_t r, enum stop how)
{
    if (r > 0)
        return;
    if (r < 0 && errno == EINTR && how == BY_SIGNAL)
        c->eintr++;
    else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
             how == BY_TIMEOUT)
        c->eagain++;
    else {
        c->bad++;
        fprintf(stderr, "unexpected result %zd errno %d\n", r, errno);
    }
}

/* Splits [base, base+len) into three unequal segments. */
static int split3(uint8_t *base, size_t len, struct iovec *v)
{
    size_t a = len / 3 + 1, b = len / 5;
    if (a + b > len)
        return (v[0] = (struct iovec){base, len}), 1;
    v[0] = (struct iovec){base, a};
    v[1] = (struct iovec){base + a, b};
    v[2] = (struct iovec){base + a + b, len - a - b};
    return 3;
}

/* One call of the blocking side, of `left` bytes from offset `at`; its
 * segments in the other of two arrays when `other` is set. */
static ssize_t one_call(int fd, enum op op, uint8_t *buf, size_t at,
                        size_t left, bool other)
{
    struct iovec arrays[2][3];
    struct iovec *v = arrays[other];
    struct msghdr m = {0};
    switch (op) {
    case OP_SEND:
        return send(fd, buf + at, left, 0);
    case OP_WRITE:
        return write(fd, buf + at, left);
    case OP_READ:
        return read(fd, buf + at, left);
    case OP_RECV_WAITALL:
        return recv(fd, buf + at, left, MSG_WAITALL);
    case OP_WRITEV:
    case OP_WRITEV_TCP:
        return writev(fd, v, split3(buf + at, left, v));
    case OP_READV:
        return readv(fd, v, split3(buf + at, left, v));
    case OP_SENDMSG:
        m.msg_iov = v;
        m.msg_iovlen = (size_t)split3(buf + at, left, v);
        return sendmsg(fd, &m, 0);
    case OP_RECVMSG_WAITALL:
        m.msg_iov = v;
        m.msg_iovlen = (size_t)split3(buf + at, left, v);
        return recvmsg(fd, &m, MSG_WAITALL);
    }
    return -1;
}

static bool op_reads(enum op op)
{
    return op == OP_RECV_WAITALL || op == OP_RECVMSG_WAITALL || op == OP_READ ||
           op == OP_READV;
}

/* The blocking side: moves TOTAL bytes in as many calls as it takes.
 * Returns the bytes moved; a read side stops at end of file. */
static size_t blocking_side(int fd, enum op op, enum stop how, uint8_t *buf,
                            struct calls *c)
{
    size_t at = 0;
    bool failed_before = false;
    while (at < TOTAL) {
        /* After EINTR or EAGAIN the call asks for one byte less, its
         * segments from another array: a call
         * that moved bytes and still said EINTR is then caught (its bytes
         * would count twice), even where an implementation quietly goes
         * on after them when the very same call is made again. */
        size_t left = TOTAL - at;
        ssize_t r = one_call(fd, op, buf, at,
                             left - (failed_before && left > 1),
                             failed_before);
        judge(c, r, how);
        failed_before = r < 0;
        if (r == 0 && op_reads(op))
            break;
        if (r > 0) {
            if ((size_t)r < left)
                c->short_ok++;
            at += (size_t)r;
        }
        if (c->bad)
            break;
    }
    return at;
}

/* The slow peer: moves CHUNK bytes at a time with pauses, signalling the
 * blocking side every SIGNAL_EVERY chunks. Returns the bytes moved; for a
 * reader, the offset of the first byte out of place goes to *bad_at. */
static size_t slow_peer(int fd, bool reads, pid_t blocked, bool signals,
                        size_t *bad_at)
{
    uint8_t *chunk = malloc(CHUNK);
    size_t at = 0;
    *bad_at = SIZE_MAX;
    for (int n = 1; at < TOTAL || reads; n++) {
        ssize_t r;
        if (reads) {
            r = read(fd, chunk, CHUNK);
            for (ssize_t i = 0; i < r && *bad_at == SIZE_MAX; i++)
                if (chunk[i] != pattern_at(at + (size_t)i))
                    *bad_at = at + (size_t)i;
        } else {
            size_t len = TOTAL - at < CHUNK ? TOTAL - at : CHUNK;
            for (size_t i = 0; i < len; i++)
                chunk[i] = pattern_at(at + i);
            r = write(fd, chunk, len);
        }
        if (r <= 0 && !(r < 0 && errno == EINTR))
            break;
        if (r > 0)
            at += (size_t)r;
        if (signals && n % SIGNAL_EVERY == 0)
            kill(blocked, SIGUSR1);
        usleep(PAUSE_US);
    }
    free(chunk);
    return at;
}

static void handler_install(enum stop how)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = how == BY_SIGNAL_RESTART ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}

/* A connected loopback TCP pair: fds[0] the client, fds[1] the accepted. */
static int tcp_pair(int fds[2])
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(l, 1) < 0 || getsockname(l, (struct sockaddr *)&a, &len) < 0)
        return -1;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fds[0], (struct sockaddr *)&a, sizeof(a)) < 0)
        return -1;
    fds[1] = accept(l, NULL, NULL);
    close(l);
    return fds[1] < 0 ? -1 : 0;
}

static void timeout_set(int fd, bool reads)
{
    struct timeval tv = {0, 20000};
    setsockopt(fd, SOL_SOCKET, reads ? SO_RCVTIMEO : SO_SNDTIMEO, &tv,
               sizeof(tv));
}

static const char *op_name(enum op op)
{
    static const char *names[] = {"send",          "sendmsg",
                                  "writev(TCP)",
                                  "write(pipe)",   "writev(pipe)",
                                  "recv WAITALL",  "recvmsg WAITALL",
                                  "read(pipe)",    "readv(pipe)"};
    return names[op];
}

static const char *stop_name(enum stop how)
{
    return how == BY_SIGNAL ? "signal" : how == BY_SIGNAL_RESTART
                                             ? "signal+SA_RESTART"
                                             : "timeout";
}

static bool op_is_pipe(enum op op)
{
    return op == OP_WRITE || op == OP_WRITEV || op == OP_READ ||
           op == OP_READV;
}

/*
 * One case: the parent is the blocking side, a child the slow peer (and
 * the signaller). The child prints what it saw of the stream before it
 * exits; the parent prints its own checks after reaping it.
 */
static int run_case(enum op op, enum stop how)
{
    int fds[2];
    bool reads = op_reads(op);
    if (op_is_pipe(op) ? pipe(fds) < 0 : tcp_pair(fds) < 0) {
        perror("setup");
        return 1;
    }
    /* pipe: fds[0] read end, fds[1] write end; tcp: either way */
    int mine = reads ? fds[0] : fds[1], peer = reads ? fds[1] : fds[0];
    /* made before the fork: a long computation while the peer could run
     * would be cut by host time, which --verify rightly calls a
     * nondeterminism */
    uint8_t *buf = reads ? calloc(1, TOTAL) : pattern_buf();
    fflush(stdout);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        close(mine);
        size_t bad_at;
        size_t moved =
            slow_peer(peer, !reads, parent, how != BY_TIMEOUT, &bad_at);
        if (!reads)
            printf("  peer received %zu bytes, %s\n", moved,
                   bad_at == SIZE_MAX ? "all in order"
                                      : "OUT OF ORDER (sent twice?)");
        fflush(stdout);
        _exit(!reads && (bad_at != SIZE_MAX || moved != TOTAL));
    }
    close(peer);
    signals_seen = 0;
    handler_install(how);
    if (how == BY_TIMEOUT)
        timeout_set(mine, reads);
    struct calls c = {0};
    size_t moved = blocking_side(mine, op, how, buf, &c);
    close(mine);
    int st;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR)
        ;
    bool in_order = true;
    if (reads)
        for (size_t i = 0; i < moved && in_order; i++)
            in_order = buf[i] == pattern_at(i);
    free(buf);
    printf("%s by %s: %s %zu bytes%s, results %s%s\n", op_name(op),
           stop_name(how), reads ? "received" : "sent", moved,
           reads ? (in_order ? ", all in order" : ", OUT OF ORDER") : "",
           c.bad ? "WRONG" : "ok",
           how == BY_SIGNAL_RESTART && c.eintr ? " (EINTR despite SA_RESTART)"
                                               : "");
    if (getenv("PARTIAL_SIGNAL_VERBOSE")) /* counts vary with timing */
        fprintf(stderr, "  [%s/%s: %d short, %d EINTR, %d EAGAIN, %d signals]\n",
            op_name(op), stop_name(how), c.short_ok, c.eintr, c.eagain,
            (int)signals_seen);
    return c.bad || moved != TOTAL || !in_order || !WIFEXITED(st) ||
           WEXITSTATUS(st) != 0;
}

/* argv[1], when given: "--pipes" runs only the pipe cases (the ones
 * whose every call is deterministic under hvrun: the chaos suite's
 * --verify runs), a number only the case of that number (a debugging
 * aid). */
int main(int argc, char **argv)
{
    bool pipes_only = argc > 1 && strcmp(argv[1], "--pipes") == 0;
    int failed = 0, n = 0;
    int only = argc > 1 && !pipes_only ? atoi(argv[1]) : -1;
    for (enum op op = OP_SEND; op <= OP_READV; op++)
        for (enum stop how = BY_SIGNAL; how <= BY_TIMEOUT; how++)
            if ((how != BY_TIMEOUT || !op_is_pipe(op)) &&
                (!pipes_only || op_is_pipe(op)) &&
                (only < 0 || only == n++))
                failed += run_case(op, how);
    printf("%s\n", failed ? "FAILED" : "all cases ok");
    return failed != 0;
}
