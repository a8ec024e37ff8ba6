/*
 * netdev_ioctl.c - a socket's read-only network-device ioctls answer as
 * Linux's: SIOCGIFCONF (the NULL-buffer length query, a short buffer, the
 * whole list), SIOCGIFINDEX/SIOCGIFNAME/SIOCGIFFLAGS/SIOCGIFMTU/SIOCGIFADDR
 * of the loopback interface, ENODEV for a name no interface has, ENOTTY on
 * a pipe, EFAULT for a bad pointer (stress-ng's netdev stressor).
 * Prints only what the loopback interface fixes, never the host's other
 * interfaces; run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest_check.h"

static void ifconf_checks(int s)
{
    struct ifconf ifc = {.ifc_len = 0, .ifc_buf = NULL};
    CHECK(ioctl(s, SIOCGIFCONF, &ifc) == 0);
    printf("ifconf length query: %s\n",
           ifc.ifc_len > 0 && ifc.ifc_len % (int)sizeof(struct ifreq) == 0
               ? "whole ifreqs" : "wrong");
    struct ifreq reqs[64];
    ifc.ifc_len = sizeof(reqs);
    ifc.ifc_req = reqs;
    CHECK(ioctl(s, SIOCGIFCONF, &ifc) == 0);
    int n = ifc.ifc_len / (int)sizeof(struct ifreq), lo = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(reqs[i].ifr_name, "lo") == 0) {
            struct sockaddr_in *a = (struct sockaddr_in *)&reqs[i].ifr_addr;
            lo = 1;
            printf("ifconf lo: family %d addr %s\n", a->sin_family,
                   inet_ntoa(a->sin_addr));
        }
    printf("ifconf lists lo: %d\n", lo);
    ifc.ifc_len = sizeof(struct ifreq) / 2; /* room for no whole entry */
    CHECK(ioctl(s, SIOCGIFCONF, &ifc) == 0);
    printf("ifconf half an entry: len %d\n", ifc.ifc_len);
    ifc.ifc_len = sizeof(reqs);
    ifc.ifc_buf = (char *)8;
    printf("ifconf bad buffer: %s\n", result_text(ioctl(s, SIOCGIFCONF, &ifc)));
    printf("ifconf bad struct: %s\n",
           result_text(ioctl(s, SIOCGIFCONF, (struct ifconf *)8)));
}

static void ifreq_checks(int s)
{
    struct ifreq r;
    memset(&r, 0, sizeof(r));
    strcpy(r.ifr_name, "lo");
    CHECK(ioctl(s, SIOCGIFINDEX, &r) == 0);
    int index = r.ifr_ifindex;
    printf("lo index > 0: %d\n", index > 0);
    memset(&r, 0, sizeof(r));
    r.ifr_ifindex = index;
    printf("SIOCGIFNAME: %s", result_text(ioctl(s, SIOCGIFNAME, &r)));
    printf(" %s\n", r.ifr_name);
    CHECK(ioctl(s, SIOCGIFFLAGS, &r) == 0);
    printf("lo flags: loopback %d\n", (r.ifr_flags & IFF_LOOPBACK) != 0);
    CHECK(ioctl(s, SIOCGIFMTU, &r) == 0);
    printf("lo mtu > 0: %d\n", r.ifr_mtu > 0);
    printf("SIOCGIFADDR: %s", result_text(ioctl(s, SIOCGIFADDR, &r)));
    printf(" %s\n", inet_ntoa(((struct sockaddr_in *)&r.ifr_addr)->sin_addr));
    memset(&r, 0, sizeof(r));
    strcpy(r.ifr_name, "nosuchif0");
    printf("unknown name: %s\n", result_text(ioctl(s, SIOCGIFFLAGS, &r)));
    printf("bad ifreq: %s\n", result_text(ioctl(s, SIOCGIFFLAGS, (struct ifreq *)8)));
}

int main(void)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(s >= 0);
    ifconf_checks(s);
    ifreq_checks(s);
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    struct ifconf ifc = {.ifc_len = 0, .ifc_buf = NULL};
    printf("pipe SIOCGIFCONF: %s\n", result_text(ioctl(pfd[0], SIOCGIFCONF, &ifc)));
    return 0;
}
