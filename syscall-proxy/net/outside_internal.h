/*
 * outside_internal.h - what outside.c (stream connections) and
 * outside_udp.c (datagram flows) share: the run's state of its exchanges
 * with peers outside it, and how an event of them is noted.
 */
#ifndef HVRUN_OUTSIDE_INTERNAL_H
#define HVRUN_OUTSIDE_INTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "proxy.h"

/* How long hvrun waits for the guest's end to take what it was given. */
#define OUTSIDE_DELIVERY_WAIT_NS (200 * 1000000LL)
#define OUTSIDE_PUMP_CHUNK 65536

struct outside_link; /* a stream connection (outside.c) */
struct outside_flow; /* a datagram socket's peer (outside_udp.c) */

struct proxy_outside {
    struct outside_link *links;
    size_t nr, cap;
    struct outside_flow **flows;
    size_t nr_flows, cap_flows;
    uint32_t next_id; /* links and flows are numbered together */
    struct det_state *det;
    const struct proxy_file_tap *tap;
};

bool outside_recording(const struct proxy_file_tap *t);
bool outside_replaying(const struct proxy_file_tap *t);
int64_t outside_now_ns(void);
uint64_t outside_sock_ino(int fd);
/* The loopback address of family (AF_INET: 127.0.0.1, else ::1), port 0. */
void outside_loopback_addr(int family, struct sockaddr_storage *a,
                           socklen_t *len);
/* The run's state, made at its first use (NULL: out of memory). */
struct proxy_outside *outside_of(struct proxy_process *p);
/* Recording: one event of link or flow id, at the run's event count. */
void outside_note(struct proxy_outside *o, uint32_t id, uint8_t kind,
                  int64_t value, const void *data, size_t len);

/* ---- datagram flows (outside_udp.c) ---- */
/* Replaying: a recorded datagram or error of a flow (false: not a flow
 * event; the caller deals with it). */
bool outside_udp_feed(struct proxy_outside *o, const struct proxy_link_event *e,
                      const void *data, size_t len);
/* Moves datagrams between the flows' relays and their peers (or the
 * recording); both false: only those the guest sent. */
void outside_udp_pump(struct proxy_outside *o, struct proxy_world *w,
                      bool both);
/* remotes_only: only hvrun's sockets to the peers (recording). */
int outside_udp_poll_fds(struct proxy_outside *o, struct pollfd *fds,
                         int room, bool remotes_only);
bool outside_udp_peer(struct proxy_outside *o, uint64_t ino,
                      struct sockaddr_storage *peer, socklen_t *len);
/* A connect() of a UDP socket to outside (see proxy_outside_connect);
 * false for any other connect (a UDP socket's elsewhere is noted). */
bool outside_udp_connect(struct proxy_process *p, int host_fd,
                         const struct sockaddr *dst, socklen_t dst_len,
                         struct sockaddr_storage *via, socklen_t *via_len,
                         long *ret);
/* Flows whose guest socket is gone are closed (nothing waits on them). */
void outside_udp_retire_gone(struct proxy_outside *o, struct proxy_world *w);
void outside_udp_free(struct proxy_outside *o);

#endif
