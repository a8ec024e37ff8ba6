/*
 * progress_unixname: binds an AF_UNIX datagram socket to a name of the
 * kernel's choosing (autobind: a bind of just the family, as Python's
 * bind("") does), reads it back with getsockname, computes as long as the
 * name's five hex digits say and prints the logical time that took. Linux
 * picks the digits at random; under hvrun the name is the run's (the n-th
 * autobind of the run, net/unix_name.c), so the time printed must be the
 * same in every run (tests/progress/run.sh). Before that, the host's name
 * reached the guest: Python's socket repr formats it (the ResourceWarning
 * of a socket collected unclosed), and tests/record's unix_dgram_client.py
 * counted a few units more or fewer in every run under --progress
 * software. The name itself is not printed: only counted progress shows
 * it here, as it did there.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A real syscall, not the vDSO: the counted units fold into time there. */
static long long now_ns(void)
{
    struct timespec ts;
    if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The autobound name's digits as a number; -1 when it is not Linux's
 * form (a NUL and five hex digits). */
static long autobind_name(void)
{
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof(sa);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa_family_t)) != 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) != 0 ||
        len != offsetof(struct sockaddr_un, sun_path) + 6 ||
        sa.sun_path[0] != '\0')
        return -1;
    char digits[6] = {0};
    for (int i = 0; i < 5; i++)
        digits[i] = sa.sun_path[1 + i];
    char *end;
    long v = strtol(digits, &end, 16);
    close(s);
    return *end == '\0' ? v : -1;
}

int main(void)
{
    long long t0 = now_ns();
    long name = autobind_name();
    if (name < 0) {
        printf("autobind: no name of Linux's form\n");
        return 1;
    }
    /* A loop as long as the name says: one counted back edge a turn. */
    volatile long sink = 0;
    for (long i = 0; i < name; i++)
        sink += i;
    long long t1 = now_ns();
    printf("autobound, computed for %lld ns\n", t1 - t0);
    return 0;
}
