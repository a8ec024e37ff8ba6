/*
 * hostname_resolves.c - the machine's own name resolves, as on a Debian
 * host whose /etc/hosts names it (127.0.1.1 hostname): hvrun's guest
 * /etc/hosts adds the run's hostname ("hvrun" by default) to the host's.
 * Prints whether gethostbyname and getaddrinfo find it, and that it is a
 * loopback address (127.0.0.1 or 127.0.1.1, whichever the file gives).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest_check.h"

int main(void)
{
    char name[256];
    CHECK(gethostname(name, sizeof(name)) == 0);
    struct hostent *h = gethostbyname(name);
    printf("gethostbyname(gethostname()): %s\n", h ? "found" : "not found");
    if (h && h->h_addrtype == AF_INET) {
        const unsigned char *a = (const unsigned char *)h->h_addr_list[0];
        printf("its address is loopback (127/8): %d\n", a[0] == 127);
        printf("its canonical name is the hostname: %d\n",
               strcasecmp(h->h_name, name) == 0);
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(name, NULL, &hints, &res);
    printf("getaddrinfo: %s\n", rc == 0 ? "found" : gai_strerror(rc));
    if (res)
        freeaddrinfo(res);
    h = gethostbyname("localhost");
    printf("localhost still resolves: %d\n", h != NULL);
    return 0;
}
