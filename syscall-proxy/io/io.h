/*
 * io.h - what io/ (read/write families, fcntl, poll/select, epoll,
 * signalfd, timerfd, terminals, parked transfers) offers the other
 * subsystems.
 */
#ifndef PROXY_IO_IO_H
#define PROXY_IO_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"

struct proxy_fd;
struct proxy_fowner;
struct proxy_world;

/* ---- fd owners, O_ASYNC, leases, dnotify (io/fasync.c) ------------------- */
/* After each system call: the dnotify events it caused are signalled, and
 * the O_ASYNC files whose I/O it moved. */
void proxy_fasync_after_syscall(struct proxy_process *p);

/* Before an open of (dirfd, path) with flags: a lease of the run on the
 * file it conflicts with is broken (its holder signalled). 0: open it;
 * -EWOULDBLOCK (O_NONBLOCK) or PROXY_RET_BLOCK (the open waits and runs
 * again). */
long proxy_lease_break(struct proxy_process *p, int dirfd, const char *path,
                       int flags);

/* The fd owner context (io.c): shared from `from` to `to`, or dropped. */
void proxy_fowner_share(struct proxy_fd *to, struct proxy_fd *from);
void proxy_fowner_put(struct proxy_fowner *o);

/* host_fd, a guest fd of the open file o, was closed. */
void proxy_fasync_fd_closed(struct proxy_fowner *o, int host_fd);

/* ---- read/write families, fcntl, ioctl, poll/select (io/io.c) ------------ */
extern const struct proxy_syscall proxy_io_syscalls[];

/* Whether a guest of the run holds an fd on FIFO (dev, ino) that can
 * write it (writer) or read it (!writer). */
bool proxy_fifo_end_in_run(struct proxy_process *p, dev_t dev, ino_t ino,
                           bool writer);

/* A writer opened FIFO (dev, ino): the readers parked in open go on. */
void proxy_fifo_writer_opened(struct proxy_process *p, dev_t dev, ino_t ino);

/* A socket's SO_RCVTIMEO (events POLLIN) or SO_SNDTIMEO (POLLOUT) in ns;
 * 0 when unset or host_fd is not a socket (io.c). */
uint64_t proxy_sock_timeout_ns(int host_fd, short events);

/* ---- poll and select (io/poll.c) ----------------------------------------- */
/* poll, select (poll.c); dup, close, fcntl, flock, advice (fcntl.c). */
extern const struct proxy_syscall proxy_poll_syscalls[];

/* ---- fd numbers, fcntl, advice (io/fcntl.c) ------------------------------ */
extern const struct proxy_syscall proxy_fcntl_syscalls[];

/* ---- native AIO (io/aio.c) ----------------------------------------------- */
/* Linux native AIO (io/aio.c): the process's contexts freed (exit,
 * execve). */
extern const struct proxy_syscall proxy_aio_syscalls[];
void proxy_aio_release(struct proxy_process *p);

/* ---- epoll and eventfd (io/epoll.c) -------------------------------------- */
/* epoll instances and eventfds over host ones (epoll.c) */
extern const struct proxy_syscall proxy_epoll_syscalls[];

/* ---- controlling terminals (io/tty.c) ------------------------------------ */
/* hvrun's own controlling terminal, if any, becomes the virtual shell's
 * session's and the first process's; freed with the world. */
void proxy_tty_world_init(struct proxy_world *w, struct proxy_process *first);
void proxy_tty_world_free(struct proxy_world *w);

/* An open (flags as the guest gave them) of host_fd succeeded: a session
 * leader without a ctty may have gained it. */
void proxy_tty_opened(struct proxy_process *p, int host_fd, int flags);

/* Whether (dirfd, path) is /dev/tty; then *fd_or_err is a host fd of the
 * caller's ctty reopened with flags, or -ENXIO/-errno. */
bool proxy_tty_open_current(struct proxy_process *p, int dirfd,
                            const char *path, int flags, int *fd_or_err);

/* setsid drops the caller's ctty; a session leader's exit hangs its
 * session's terminal up (SIGHUP to the foreground group). */
void proxy_tty_setsid(struct proxy_process *p);
void proxy_tty_exit(struct proxy_process *p);

/* /proc/PID/stat's tty_nr and tpgid (-1: none) of p as p sees them. */
unsigned int proxy_tty_nr(const struct proxy_process *p);
int proxy_tty_fg_pgrp(struct proxy_process *p);

#endif
