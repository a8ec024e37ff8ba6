/*
 * splice_bad_out: a splice out of an empty pipe into a destination that
 * cannot take it fails at once, as Linux checks the destination before it
 * waits for data: a read-only file, an O_PATH fd, a directory and a closed
 * fd (EBADF), an O_APPEND file and an eventfd (EINVAL). (Each pipe keeps
 * its writer open, so a valid destination would wait.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void try(const char *what, int out)
{
    int p[2];
    if (pipe(p) < 0)
        return;
    long r = splice(p[0], NULL, out, NULL, 16, 0);
    printf("%-28s %s\n", what, r < 0 ? strerrorname_np(errno) : "moved?");
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    int ro = open("/etc/passwd", O_RDONLY);
    int opath = open("/etc/passwd", O_PATH);
    int dir = open("/", O_RDONLY | O_DIRECTORY);
    int app = open("splice_bad_out.tmp", O_WRONLY | O_CREAT | O_APPEND, 0600);
    int efd = eventfd(0, 0);
    try("read-only file", ro);
    try("O_PATH fd", opath);
    try("directory", dir);
    try("O_APPEND file", app);
    try("eventfd", efd);
    try("closed fd", 99);
    unlink("splice_bad_out.tmp");
    return 0;
}
