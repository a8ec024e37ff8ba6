/*
 * outside_internal.h - what outside.c (stream connections) and
 * outside_udp.c (datagram flows) and outside_accept.c (listeners that
 * accept clients from outside) share: the run's state of its exchanges
 * with peers outside it, and how an event of them is noted.
 */
#ifndef HVRUN_OUTSIDE_INTERNAL_H
#define HVRUN_OUTSIDE_INTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "proxy.h"

/* How long hvrun waits for the guest's end to take what it was given. */
#define OUTSIDE_DELIVERY_WAIT_NS (200 * 1000000LL)
#define OUTSIDE_PUMP_CHUNK 65536

struct outside_link; /* a stream connection (outside.c) */
struct outside_flow; /* a datagram socket's peer (outside_udp.c) */
struct outside_shadow; /* a listener of the run (outside_accept.c) */

struct proxy_outside {
    struct outside_link *links;
    size_t nr, cap;
    struct outside_flow **flows;
    size_t nr_flows, cap_flows;
    struct outside_shadow **shadows;
    size_t nr_shadows, cap_shadows;
    uint32_t next_id; /* links, flows and listeners are numbered together */
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

/* A TCP (IPv4, IPv6) or AF_UNIX stream socket; its family. */
bool outside_stream_socket(int fd, int *family);
/* A socket whose connections to outside are relayed: a stream one (type
 * SOCK_STREAM) or an AF_UNIX seqpacket one (SOCK_SEQPACKET). */
bool outside_relayed_socket(int fd, int *family, int *type);
/* Whether the AF_UNIX listener named (name, name_len) is what a connect
 * to dst reaches. */
bool outside_unix_same_listener(const struct sockaddr_un *name,
                                socklen_t name_len, const struct sockaddr *dst,
                                socklen_t dst_len);
/* The same socket address (family, address and port; AF_UNIX: name). */
bool outside_addr_same(const struct sockaddr_storage *a, socklen_t alen,
                       const struct sockaddr_storage *b, socklen_t blen);

/* ---- connections from outside (outside.c for the bytes) ---- */
/* A client from outside accepted by a listener of the run whose guest
 * socket is at inner: a link whose relay connects to inner (the guest
 * accepts it there); type: the listener's (SOCK_STREAM, SOCK_SEQPACKET);
 * remote: the client (recording) or -1. */
void outside_link_accepted(struct proxy_outside *o, uint32_t id, int family,
                           int type, int remote,
                           const struct sockaddr_storage *peer,
                           socklen_t peer_len,
                           const struct sockaddr_storage *local,
                           socklen_t local_len, int inner_fd);
/* A FIFO to a process outside (outside_fifo.c): the guest reads
 * (reader) or writes the other end of the pipe whose end relay hvrun
 * keeps; remote: the FIFO (recording) or -1. */
void outside_link_fifo(struct proxy_outside *o, uint32_t id, bool reader,
                       int remote, int relay);
/* The accepted link whose relay is named relay (what the guest's end
 * sees as its peer): its client's address and its own name. */
bool outside_link_by_relay(struct proxy_outside *o,
                           const struct sockaddr_storage *relay,
                           socklen_t relay_len, struct sockaddr_storage *peer,
                           socklen_t *peer_len, struct sockaddr_storage *local,
                           socklen_t *local_len);

/* ---- listeners (outside_accept.c) ---- */
/* Recording: clients from outside waiting at the listeners, accepted. */
void outside_accept_take(struct proxy_outside *o, struct proxy_world *w);
/* Replaying: a recorded accept (false: not one). */
bool outside_accept_feed(struct proxy_outside *o, struct proxy_world *w,
                         const struct proxy_link_event *e, const void *data,
                         size_t len);
int outside_accept_poll_fds(struct proxy_outside *o, struct proxy_world *w,
                            struct pollfd *fds, int room);
/* A connect from inside the run to a listener of it, or a datagram to a
 * UDP socket it bound (dgram): to *via instead. */
bool outside_accept_redirect(struct proxy_outside *o, struct proxy_world *w,
                             bool dgram,
                             const struct sockaddr *dst, socklen_t dst_len,
                             struct sockaddr_storage *via, socklen_t *via_len);
/* A name the kernel reports that is a listener's stand-in (its guest
 * socket's own address): the name the guest gave it (connection: true
 * for the name as a connection's end shows it, a wildcard address
 * becoming loopback). */
bool outside_accept_name(struct proxy_outside *o, struct sockaddr_storage *sa,
                         socklen_t *len, bool connection);
void outside_accept_free(struct proxy_outside *o);

/* ---- datagram flows, UDP and AF_UNIX (outside_udp.c) ---- */
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
/* A connect() of a UDP or AF_UNIX datagram socket to outside (see
 * proxy_outside_connect); false for any other connect (a datagram
 * socket's elsewhere is noted). */
bool outside_udp_connect(struct proxy_process *p, int host_fd,
                         const struct sockaddr *dst, socklen_t dst_len,
                         struct sockaddr_storage *via, socklen_t *via_len,
                         long *ret);
/* A buffer with room for the next datagram on fd (of family) whole, its
 * size in *room: a UDP one fits OUTSIDE_PUMP_CHUNK; an AF_UNIX one may
 * be larger (up to its sender's buffer). hvrun's one buffer: valid until
 * the next call. */
uint8_t *outside_dgram_buffer(int fd, int family, size_t *room);
/* Flows whose guest socket is gone are closed (nothing waits on them). */
void outside_udp_retire_gone(struct proxy_outside *o, struct proxy_world *w);
/* A UDP or AF_UNIX datagram socket the run bound (its stand-in), as
 * outside_accept.c has it. */
struct outside_dgram_home {
    int family;
    uint64_t ino;   /* the stand-in (fstat) */
    int fd;         /* hvrun's fd of it */
    struct sockaddr_storage addr; /* the stand-in's address */
    socklen_t len;
    int outer;      /* recording: the socket the guest bound (replies go
                       out from it), else -1 */
};
/* Recording: a datagram from peer outside the run reached home's outer
 * socket: the flow of that peer (made if new: an I event of link number
 * home_id's socket) gives it to the stand-in (a G event). */
void outside_udp_arrived(struct proxy_outside *o, uint32_t home_id,
                         const struct outside_dgram_home *home,
                         const struct sockaddr_storage *peer,
                         socklen_t peer_len, const void *data, size_t len);
/* Replaying: an I event's flow, id, of peer to home. */
void outside_udp_inbound(struct proxy_outside *o, uint32_t id,
                         const struct outside_dgram_home *home,
                         const struct sockaddr_storage *peer,
                         socklen_t peer_len);
void outside_udp_free(struct proxy_outside *o);

#endif
