/*
 * gdbserver_ckpt_event.h - eventfds and epoll instances in a checkpoint
 * (gdbserver_checkpoint.c): an eventfd is made again with its count and
 * semaphore mode, an epoll instance with its entries (/proc/self/fdinfo
 * says both), once every fd they name stands at its number again.
 */
#ifndef CLI_GDBSERVER_CKPT_EVENT_H
#define CLI_GDBSERVER_CKPT_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ckpt_epoll_entry {
    int fd;
    uint32_t events;
    uint64_t data;
};

struct ckpt_event {
    bool epoll; /* else an eventfd */
    uint64_t count;
    bool semaphore;
    struct ckpt_epoll_entry *entries;
    size_t nr_entries;
};

/* Whether host fd fd is an eventfd or an epoll instance (their anonymous
 * inodes' names). */
bool ckpt_event_is(int fd);

/* What fd is and holds, into *e. 0, or -1 with *why (an entry whose fd
 * was closed or is itself an epoll instance, an fdinfo without the
 * semaphore mode). */
int ckpt_event_save(int fd, struct ckpt_event *e, const char **why);

/* A new object as saved (close-on-exec): its fd, or -1 with errno. */
int ckpt_event_restore(const struct ckpt_event *e);

void ckpt_event_free(struct ckpt_event *e);

#endif
