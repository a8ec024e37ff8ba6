/*
 * gdbserver_ckpt_socket.h - socket pairs in a checkpoint
 * (gdbserver_checkpoint.c): an AF_UNIX socket with no name whose peer is
 * the guests' too, or gone, is copied as a pipe is: what its receive
 * queue holds is read without taking it out, and a restore makes a new
 * pair holding the same bytes (each datagram apart).
 */
#ifndef CLI_GDBSERVER_CKPT_SOCKET_H
#define CLI_GDBSERVER_CKPT_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ckpt_socket {
    uint64_t ino, peer_ino; /* peer_ino 0: the peer is gone */
    bool connected;         /* it had a peer (socketpair, connect) */
    int type;               /* SOCK_STREAM, SOCK_DGRAM or SOCK_SEQPACKET */
    unsigned shutdown;      /* sk_shutdown's bits (net.h) */
    int peek_off;           /* SO_PEEK_OFF as the guest left it */
    int sndbuf, rcvbuf;     /* as getsockopt reads them */
    bool passcred;
    /* its receive queue: the bytes, and for the datagram types each
     * message's length (nr_msgs of them) */
    char *data;
    size_t len;
    size_t *msg_len;
    size_t nr_msgs;
};

/* Why host fd fd, a socket, cannot be copied (NULL: it can); peer_held
 * says whether an inode is a socket the guests hold. */
const char *ckpt_socket_refusal(int fd, bool (*peer_held)(uint64_t ino,
                                                          void *ctx),
                                void *ctx);

/* What fd's socket is and holds, into *s. 0, or -1 with *why. */
int ckpt_socket_save(int fd, struct ckpt_socket *s, const char **why);

/* A new pair standing for a (and b, its peer; NULL when gone), each
 * holding what the saved one held: ends[0] is a's, ends[1] b's (closed
 * when b is NULL, as the peer was). 0, or -1 with errno. */
int ckpt_socket_restore(const struct ckpt_socket *a,
                        const struct ckpt_socket *b, int ends[2]);

void ckpt_socket_free(struct ckpt_socket *s);

#endif
