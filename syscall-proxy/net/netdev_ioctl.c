/*
 * netdev_ioctl.c - the read-only network-device ioctls of a socket
 * (Linux's dev_ioctl/dev_ifconf: SIOCGIFCONF and the SIOCGIF* queries of
 * one interface by name or index).
 *
 * They answer from the host's interfaces, as the run's NETLINK_ROUTE
 * sockets already do (RTM_GET* requests pass through, net.c): the guest
 * sees the interfaces of the network namespace hvrun runs in. Every
 * request here only reads; a SIOCSIF* one (CAP_NET_ADMIN) reads its
 * ifreq (EFAULT) and is refused as in a container without the capability
 * (EPERM), so no guest changes a host interface.
 *
 * Each query takes a struct ifreq in and out. SIOCGIFCONF's struct ifconf
 * points to a guest buffer: the host fills a copy of it and the guest gets
 * as many bytes as the host wrote, and the length (with a NULL buffer: the
 * length the whole list needs, as Linux answers).
 */
#include "proxy.h"
#include "net.h"

#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

/* A longer SIOCGIFCONF buffer is clipped: Linux fills only whole ifreqs
 * that fit, so a guest that gets fewer asks again with more. */
#define IFCONF_MAX_BYTES (64 * 1024)

static long host_result(long r) { return r < 0 ? -errno : r; }

/* The interface changes dev_ioctl and devinet_ioctl make with
 * CAP_NET_ADMIN after reading the ifreq. */
static bool netdev_set_is(unsigned int req)
{
    switch (req) {
    case SIOCSIFFLAGS:
    case SIOCSIFMETRIC:
    case SIOCSIFMTU:
    case SIOCSIFHWADDR:
    case SIOCSIFMAP:
    case SIOCSIFTXQLEN:
    case SIOCSIFNAME:
    case SIOCSIFADDR:
    case SIOCSIFDSTADDR:
    case SIOCSIFBRDADDR:
    case SIOCSIFNETMASK:
    case SIOCSIFSLAVE:
    case SIOCSIFPFLAGS:
    case SIOCSIFHWBROADCAST:
        return true;
    }
    return false;
}

bool proxy_netdev_ioctl_is(unsigned int req)
{
    switch (req) {
    case SIOCGIFCONF:
    case SIOCGIFNAME:
    case SIOCGIFINDEX:
    case SIOCGIFFLAGS:
    case SIOCGIFMETRIC:
    case SIOCGIFMTU:
    case SIOCGIFHWADDR:
    case SIOCGIFMAP:
    case SIOCGIFTXQLEN:
    case SIOCGIFADDR:
    case SIOCGIFDSTADDR:
    case SIOCGIFBRDADDR:
    case SIOCGIFNETMASK:
    case SIOCGIFSLAVE:
        return true;
    }
    return netdev_set_is(req);
}

/* One interface's query: the ifreq in, the host's answer out. */
static long ifreq_query(struct proxy_process *p, int host_fd,
                        unsigned int req, gva_t arg)
{
    struct ifreq ifr;
    if (proxy_copy_in(p, &ifr, arg, sizeof(ifr)) < 0)
        return -EFAULT;
    ifr.ifr_name[IFNAMSIZ - 1] = '\0'; /* Linux terminates it too */
    long r = host_result(ioctl(host_fd, req, &ifr));
    if (r >= 0 && proxy_copy_out(p, arg, &ifr, sizeof(ifr)) < 0)
        return -EFAULT;
    return r;
}

static long ifconf_query(struct proxy_process *p, int host_fd, gva_t arg)
{
    struct ifconf ifc;
    if (proxy_copy_in(p, &ifc, arg, sizeof(ifc)) < 0)
        return -EFAULT;
    gva_t guest_buf = (gva_t)(uintptr_t)ifc.ifc_buf;
    if (guest_buf == 0) { /* the length the list needs */
        long r = host_result(ioctl(host_fd, SIOCGIFCONF, &ifc));
        if (r >= 0 && proxy_copy_out(p, arg, &ifc, sizeof(ifc)) < 0)
            return -EFAULT;
        return r;
    }
    if (ifc.ifc_len < 0)
        ifc.ifc_len = 0; /* Linux fills nothing and reports 0 */
    if (ifc.ifc_len > IFCONF_MAX_BYTES)
        ifc.ifc_len = IFCONF_MAX_BYTES;
    char *buf = calloc(1, (size_t)ifc.ifc_len + 1);
    if (!buf)
        return -ENOMEM;
    ifc.ifc_buf = buf;
    long r = host_result(ioctl(host_fd, SIOCGIFCONF, &ifc));
    if (r >= 0 && ifc.ifc_len > 0 &&
        proxy_copy_out(p, guest_buf, buf, (size_t)ifc.ifc_len) < 0)
        r = -EFAULT;
    free(buf);
    ifc.ifc_buf = (char *)(uintptr_t)guest_buf;
    if (r >= 0 && proxy_copy_out(p, arg, &ifc, sizeof(ifc)) < 0)
        r = -EFAULT;
    return r;
}

long proxy_netdev_ioctl(struct proxy_process *p, int host_fd, unsigned int req,
                        gva_t arg)
{
    struct stat st; /* sockets only: a device driver may mean another thing */
    if (fstat(host_fd, &st) < 0 || !S_ISSOCK(st.st_mode))
        return -ENOTTY;
    if (req == SIOCGIFCONF)
        return ifconf_query(p, host_fd, arg);
    if (netdev_set_is(req)) {
        struct ifreq ifr;
        return proxy_copy_in(p, &ifr, arg, sizeof(ifr)) < 0 ? -EFAULT
                                                            : -EPERM;
    }
    return ifreq_query(p, host_fd, req, arg);
}
