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
/* A blocking open of the FIFO (dirfd, path), key its absolute path:
 * false: not one whose other end is outside the run under record/replay
 * (opened as usual: fs.c's open, which may wait for an end in the run);
 * true: *ret is the open's result, a host fd (a pipe's end of hvrun's),
 * -errno, or PROXY_RET_BLOCK (replaying: this try waited, as the
 * recording's did). */
bool proxy_outside_fifo_open(struct proxy_process *p, const char *key,
                             int dirfd, const char *path, int flags,
                             long *ret);
/* Whether an open of (dirfd, path) may be one (cheap: recording, a FIFO
 * is there; replaying, the recording's next exchange is a FIFO's open). */
bool proxy_outside_fifo_maybe(struct proxy_process *p, int dirfd,
                              const char *path);
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
/*
 * Nothing in the run can go on, and the next thing due is the deadline of
 * a thread of p waiting for an fd (poll, SO_RCVTIMEO, ...) at deadline_ns
 * of logical time. Recording: waits that much host time at most for a
 * peer outside the run to send something; replaying: whether the
 * recording says one did here. True: it did (it was given); the deadline
 * stays. False: let it pass.
 */
bool proxy_outside_await(struct proxy_world *w, struct proxy_process *p,
                         uint64_t deadline_ns);
void proxy_outside_free(struct proxy_world *w);

#endif
