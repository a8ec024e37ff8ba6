/*
 * outside.h - exchanges of the run with peers outside it under hvrun
 * record and replay: TCP and AF_UNIX stream connections (outside.c), UDP
 * and AF_UNIX datagrams (outside_udp.c), clients from outside accepted by
 * a listener of the run (outside_accept.c), FIFOs to processes outside
 * (outside_fifo.c). net.c hands listen(), connect(), the sends with an
 * address, the received source addresses and getpeername() here, world.c
 * the points where data from outside may come in.
 */
#ifndef HVRUN_OUTSIDE_H
#define HVRUN_OUTSIDE_H

#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "proxy.h"

struct proxy_world;
struct sockaddr;
struct sockaddr_storage;

/*
 * A connect() of host_fd (a TCP, AF_UNIX stream or UDP socket of the
 * guest) to dst. False: not a connection to outside under record/replay;
 * connect as usual. True:
 * *ret < 0 is the connect's result (the recorded one, replaying); else
 * the guest's socket is to connect to *via (hvrun's relay, on loopback)
 * instead, and proxy_outside_connected called after.
 */
bool proxy_outside_connect(struct proxy_process *p, int host_fd,
                           const struct sockaddr *dst, socklen_t dst_len,
                           struct sockaddr_storage *via, socklen_t *via_len,
                           long *ret);

/*
 * A send on host_fd (a guest socket) to *dst. True: a UDP or AF_UNIX
 * datagram socket's datagram to a peer outside the run under
 * record/replay (an AF_UNIX path is looked up from hvrun's cwd: the
 * caller is in the guest's); *ret < 0 is
 * the send's result, else *dst (*dst_len) now names hvrun's relay for
 * that peer, which takes it there (recording) or drops it (replaying).
 */
bool proxy_outside_dgram_route(struct proxy_process *p, int host_fd,
                               struct sockaddr_storage *dst,
                               socklen_t *dst_len, long *ret);

/* A received datagram's source: a relay's address becomes the address of
 * the peer it stands for. */
void proxy_outside_dgram_source(struct proxy_world *w,
                                struct sockaddr_storage *src,
                                socklen_t *src_len);

/* The guest's connect to the relay was made: hvrun takes its end. */
void proxy_outside_connected(struct proxy_process *p, int host_fd);

/* getpeername of host_fd: true if it is a relayed connection or a UDP
 * socket connected to a relayed peer (*peer is the outside peer's
 * address). */
bool proxy_outside_peer(struct proxy_world *w, int host_fd,
                        struct sockaddr_storage *peer, socklen_t *len);

/* listen() of host_fd: false: not one of a listener that may take clients
 * from outside under record/replay (listen as usual); true: *ret is its
 * result, and the guest's socket is a stand-in of hvrun's from now on. */
bool proxy_outside_listen(struct proxy_process *p, int host_fd, int backlog,
                          long *ret);

/* getsockname of host_fd: true if it is a stand-in's, or a connection to
 * one (*name is the name the guest would see). */
bool proxy_outside_sockname(struct proxy_world *w, int host_fd,
                            struct sockaddr_storage *name, socklen_t *len);

/* The peer address accept() got: a relay's becomes its client's. */
void proxy_outside_accepted_peer(struct proxy_world *w,
                                 struct sockaddr_storage *a, socklen_t *len);

/* Before a bind of the run's: listeners the run has closed let go of
 * their names. */
void proxy_outside_before_bind(struct proxy_process *p);

/* After a bind of host_fd: a UDP socket's gets a stand-in under
 * record/replay (what comes to it from outside is relayed). */
void proxy_outside_bound(struct proxy_process *p, int host_fd);

#endif
