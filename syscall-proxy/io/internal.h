/*
 * internal.h - what the files of io/ share among themselves: fd owners
 * and O_ASYNC, signalfd and timerfd contexts, terminal ioctls and job
 * control, parked transfers.
 */
#ifndef PROXY_IO_INTERNAL_H
#define PROXY_IO_INTERNAL_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "io.h"

struct iovec;
struct pollfd;

/* The host fd behind a guest fd argument, or -EBADF. */
static inline int guest_host_fd(struct proxy_process *p, uint64_t guest_fd)
{
    return proxy_fd_host(&p->fds, (int)guest_fd);
}

/* io.c's waiting state of the calling thread (struct proxy_thread_io:
 * what must outlive a park), or NULL for a process without threads. */
static inline struct proxy_thread_io *thread_io(struct proxy_process *p)
{
    return p->threads ? &p->threads[p->cur].io : NULL;
}

/* ---- fd owners, O_ASYNC, leases, dnotify (io/fasync.c) ------------------- */
/* fcntl's owner, signal, lease and dnotify commands (io/fasync.c). */
long proxy_fcntl_owner(struct proxy_process *p, int guest_fd, int cmd,
                       uint64_t arg);

/* O_ASYNC set (on) or cleared on guest_fd's open file (F_SETFL, FIOASYNC):
 * its owner is sent SIGIO (or F_SETSIG's signal) as its I/O moves. */
void proxy_fasync_set(struct proxy_process *p, int guest_fd, bool on);

/* ---- controlling terminals (io/tty.c) ------------------------------------ */
/* TIOCSCTTY, TIOCNOTTY, TIOCGSID, TIOCGPGRP, TIOCSPGRP: answered from the
 * model, never the host's session (proxy_tty_ioctl, on the fd's host fd). */
bool proxy_tty_ioctl_is(unsigned int req);
long proxy_tty_ioctl(struct proxy_process *p, int host_fd, unsigned int req,
                     uint64_t arg);

/* Job control before a read, a write or a change of a terminal (host_fd)
 * by a process of a background group of its session: 0 to go on, -EIO,
 * or PROXY_RET_BLOCK after SIGTTIN/SIGTTOU to the caller's group. */
enum proxy_tty_access { PROXY_TTY_READ, PROXY_TTY_WRITE, PROXY_TTY_CHANGE };
long proxy_tty_job_control(struct proxy_process *p, int host_fd,
                           enum proxy_tty_access how);

/* p wrote bytes (of iov[0..n)) to host_fd: to a pty master whose slave
 * has a foreground group, its VINTR/VQUIT/VSUSP characters (ISIG) send
 * SIGINT/SIGQUIT/SIGTSTP to that group. */
void proxy_tty_wrote(struct proxy_process *p, int host_fd,
                     const struct iovec *iov, int n, size_t bytes);

/* Before a look at host_fd (any fd) for events: if it is a pty end whose
 * pty was written since its last such look, waits for the host's tty work
 * to deliver what is on its way (a few ms at most). */
void proxy_tty_settle(int host_fd, short events);

/* The same for each fd of a poll set. */
void proxy_tty_settle_set(const struct pollfd *fds, size_t n);

/* The same for each fd a host epoll instance watches. */
void proxy_tty_settle_epoll(int host_epfd);
/* Counting a pty's bytes in flight (tty.c): what a guest read of an end,
 * a flush, and a termios change around its ioctl. */
void proxy_tty_read_done(int host_fd, size_t bytes);
void proxy_tty_flushed(int host_fd);
bool proxy_tty_termios_setting(int host_fd, unsigned int *lflag_before);
void proxy_tty_termios_set(int host_fd, unsigned int lflag_before);

/* ---- poll and select (io/poll.c) ----------------------------------------- */
/*
 * The signal mask of ppoll, pselect6, epoll_pwait(2): it replaces the
 * caller's while the call waits (a handler's frame saves the caller's);
 * _end puts the caller's back once the call is over (not parked) and
 * passes r through (io.c).
 */
long proxy_call_mask_apply(struct proxy_process *p, gva_t mask_gva,
                           uint64_t size);
long proxy_call_mask_end(struct proxy_process *p, long r);

#endif
