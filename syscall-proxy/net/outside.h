/*
 * outside.h - TCP connections from the run to outside it, under hvrun
 * record and replay (outside.c). net.c hands connect() and getpeername()
 * here, world.c the points where data from outside may come in.
 */
#ifndef HVRUN_OUTSIDE_H
#define HVRUN_OUTSIDE_H

#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "proxy.h"

/*
 * A connect() of host_fd (a TCP socket of the guest) to dst. False: not
 * a connection to outside under record/replay; connect as usual. True:
 * *ret < 0 is the connect's result (the recorded one, replaying); else
 * the guest's socket is to connect to *via (hvrun's relay, on loopback)
 * instead, and proxy_outside_connected called after.
 */
bool proxy_outside_connect(struct proxy_process *p, int host_fd,
                           const struct sockaddr *dst, socklen_t dst_len,
                           struct sockaddr_storage *via, socklen_t *via_len,
                           long *ret);
/* The guest's connect to the relay was made: hvrun takes its end. */
void proxy_outside_connected(struct proxy_process *p, int host_fd);
/* getpeername of host_fd: true if it is a relayed connection (*peer is
 * the outside peer's address, as the guest connected to it). */
bool proxy_outside_peer(struct proxy_world *w, int host_fd,
                        struct sockaddr_storage *peer, socklen_t *len);
/* Moves data between the relays and outside (or the recording), before
 * each guest syscall. */
void proxy_outside_pump(struct proxy_world *w);
/*
 * Nothing in the run can go on. Replaying: feeds the next recorded event
 * (true: something may run now). Recording: adds what hvrun waits on
 * for its relays to fds (at most room), returning how many.
 */
bool proxy_outside_idle_feed(struct proxy_world *w);
int proxy_outside_poll_fds(struct proxy_world *w, struct pollfd *fds,
                           int room);
void proxy_outside_free(struct proxy_world *w);

#endif
