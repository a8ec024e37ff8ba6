/*
 * sock_ioctl_args.c - SIOCATMARK answers on a TCP socket (EFAULT for a
 * bad pointer, EINVAL on UDP, ENOTTY on a file), and an interface change
 * (SIOCSIFFLAGS) reads its ifreq before anything else: EFAULT for a bad
 * pointer on a socket, ENOTTY on a file (LTP's sockioctl01). hvrun said
 * ENOTTY for both. (With a good ifreq the change needs CAP_NET_ADMIN:
 * hvrun refuses it, EPERM, as a container without it; not run here, where
 * natively it would change the host's interface.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *res(int rc)
{
    return rc >= 0 ? "ok" : strerrorname_np(errno);
}

int main(void)
{
    int tcp = socket(AF_INET, SOCK_STREAM, 0);
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    int file = open("/dev/null", O_RDONLY);
    int mark = -1;
    printf("SIOCATMARK: tcp %s", res(ioctl(tcp, SIOCATMARK, &mark)));
    printf(" (mark %d), tcp NULL %s", mark, res(ioctl(tcp, SIOCATMARK, NULL)));
    printf(", udp %s", res(ioctl(udp, SIOCATMARK, &mark)));
    printf(", file %s\n", res(ioctl(file, SIOCATMARK, &mark)));
    printf("SIOCSIFFLAGS NULL: udp %s, tcp %s, file %s\n",
           res(ioctl(udp, SIOCSIFFLAGS, NULL)),
           res(ioctl(tcp, SIOCSIFFLAGS, NULL)),
           res(ioctl(file, SIOCSIFFLAGS, NULL)));
    printf("SIOCSIFMTU NULL: udp %s\n", res(ioctl(udp, SIOCSIFMTU, NULL)));
    return 0;
}
