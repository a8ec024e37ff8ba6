/*
 * fdpass.h - one message with file descriptors over a unix socket
 * (SCM_RIGHTS): the ptrace spawner's requests and replies, the gdb front
 * end's checkpoints.
 */
#ifndef VMM_FDPASS_H
#define VMM_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define VMM_FDPASS_MAX 8 /* fds in one message */

/* Sends buf and nfds fds (at most VMM_FDPASS_MAX); 0 when all of buf
 * went, -1 otherwise. */
int vmm_send_fds(int sock, const void *buf, size_t len, const int *fds,
                 int nfds);
/* Receives one message and up to max_fds fds (-1 where none came; any
 * past max_fds are closed), close-on-exec: its length, 0 at the socket's
 * end, -1 on an error. */
ssize_t vmm_recv_fds(int sock, void *buf, size_t len, int *fds, int max_fds);

#endif
