/*
 * splice_refused: what splice refuses before it looks at either end's
 * contents (Linux's __do_splice/do_splice order): an offset for a pipe
 * (ESPIPE), a source not open for reading or a destination not open for
 * writing (EBADF), neither end a pipe (EINVAL), an end that cannot be
 * spliced at all (an eventfd, a perf event: EINVAL). Each source is
 * empty and each pipe keeps its writer, so a call hvrun let wait would
 * hang here (LTP splice07). Output compared with native.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static void try(const char *what, int in, loff_t *off_in, int out,
                loff_t *off_out)
{
    long r = splice(in, off_in, out, off_out, 16, 0);
    printf("%-34s %s\n", what, r < 0 ? strerrorname_np(errno) : "moved");
}

int main(void)
{
    int p[2], q[2];
    if (pipe(p) < 0 || pipe(q) < 0)
        return 1;
    int efd = eventfd(0, 0);
    int inet = socket(AF_INET, SOCK_STREAM, 0);
    int ino = inotify_init1(0);
    int file = open("splice_refused.tmp", O_RDWR | O_CREAT | O_TRUNC, 0600);
    int ro = open("/etc/passwd", O_RDONLY);
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.exclude_kernel = 1;
    int perf = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    loff_t off = 0;
    try("eventfd -> pipe", efd, NULL, q[1], NULL);
    try("eventfd -> file", efd, NULL, file, NULL);
    try("pipe -> pipe read end", p[0], NULL, q[0], NULL);
    try("pipe write end -> file", p[1], NULL, file, NULL);
    try("pipe -> read-only file", p[0], NULL, ro, NULL);
    try("pipe with an offset -> file", p[0], &off, file, NULL);
    try("inet socket -> pipe read end", inet, NULL, q[0], NULL);
    try("inet socket -> inotify", inet, NULL, ino, NULL);
    try("inet socket -> file", inet, NULL, file, NULL);
    try("file -> file", file, NULL, file, NULL);
    if (perf >= 0) {
        try("perf event -> pipe", perf, NULL, q[1], NULL);
        try("pipe -> perf event", p[0], NULL, perf, NULL);
    }
    unlink("splice_refused.tmp");
    return 0;
}
