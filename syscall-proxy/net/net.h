/*
 * net.h - what net/ offers the other subsystems: sockets' timeouts, the
 * network-device ioctls, and the exchanges with peers outside the run
 * (record/replay) the world loop and FIFO opens hand to it.
 */
#ifndef PROXY_NET_NET_H
#define PROXY_NET_NET_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"

struct pollfd;
struct proxy_world;

/* ---- network-device queries (net/netdev_ioctl.c) ------------------------- */
/* SIOCGIFCONF and the read-only SIOCGIF* requests of a socket, answered
 * from the host's interfaces (ENOTTY on anything but a socket). */
bool proxy_netdev_ioctl_is(unsigned int req);
long proxy_netdev_ioctl(struct proxy_process *p, int host_fd, unsigned int req,
                        gva_t arg);

/* ---- sockets (net/net.c) ------------------------------------------------- */
extern const struct proxy_syscall proxy_net_syscalls[];

/* ---- peers (net/peercred.c) ---------------------------------------------- */
/* What sock_diag says of the AF_UNIX socket with inode ino: whether it
 * has a peer, the peer's inode (0: the peer is gone) and its sk_shutdown
 * bits (RCV_SHUTDOWN 1, SEND_SHUTDOWN 2). false when it cannot say. */
bool proxy_unix_diag(uint64_t ino, bool *has_peer, uint64_t *peer_ino,
                     unsigned *shutdown);

/* ---- sending and receiving (net/msg.c) ----------------------------------- */
/* send*, recv* (msg.c) */
extern const struct proxy_syscall proxy_msg_syscalls[];

/* ---- FIFOs to outside the run (net/outside_fifo.c) ----------------------- */
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

/* ---- connections to outside the run (record/replay) (net/outside.c) ------ */
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
/* Frees the run's map of host ports to its own (net/inet_port.c). */
void proxy_net_inet_ports_free(struct proxy_world *w);

#endif
