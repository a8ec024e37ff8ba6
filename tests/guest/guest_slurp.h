/*
 * guest_slurp.h - a whole file read with read(2), no stdio buffer (the
 * process's memory stays as it is between two reads of its smaps), for the
 * guest tests that read /proc files.
 */
#ifndef GUEST_SLURP_H
#define GUEST_SLURP_H

#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

/* The whole file into out (cap bytes, NUL-terminated); its length, or -1
 * (errno set). */
static inline ssize_t slurp_into(const char *path, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    size_t len = 0;
    ssize_t n;
    while ((n = read(fd, out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    int saved = errno;
    close(fd);
    errno = saved;
    out[len] = '\0';
    return n < 0 ? -1 : (ssize_t)len;
}

#endif
