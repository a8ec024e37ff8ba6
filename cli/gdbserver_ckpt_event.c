/*
 * gdbserver_ckpt_event.c - eventfds and epoll instances in a checkpoint
 * (see the header).
 *
 * /proc/self/fdinfo gives an eventfd's count ("eventfd-count", hex) and
 * mode ("eventfd-semaphore"), and an epoll instance's entries, one "tfd:"
 * line each with the events mask and data as the instance holds them
 * (EPOLLET, EPOLLONESHOT and the EPOLLERR|EPOLLHUP epoll_ctl adds among
 * them) and the watched file's inode, which must still be that fd's: an
 * entry whose fd was closed while its file stayed open elsewhere cannot
 * be named again, and is refused. A restored entry is added afresh: a
 * level-triggered one reports as before; an edge-triggered one that was
 * ready reports once more, which the front end's check of each replayed
 * stop (the detlog digest) catches as a run that went otherwise.
 */
#include "gdbserver_ckpt_event.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

static bool anon_name(int fd, char *name, size_t len)
{
    char proc[40];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, name, len - 1);
    if (n < 0)
        return false;
    name[n] = '\0';
    return true;
}

static bool is_epoll(int fd)
{
    char name[64];
    return anon_name(fd, name, sizeof(name)) &&
           strcmp(name, "anon_inode:[eventpoll]") == 0;
}

bool ckpt_event_is(int fd)
{
    char name[64];
    return anon_name(fd, name, sizeof(name)) &&
           (strcmp(name, "anon_inode:[eventfd]") == 0 ||
            strcmp(name, "anon_inode:[eventpoll]") == 0);
}

/* One "tfd:" line into the entry list; NULL or why not. */
static const char *add_entry(struct ckpt_event *e, const char *line)
{
    int tfd;
    unsigned int events;
    uint64_t data, ino;
    if (sscanf(line, "tfd: %d events: %x data: %" SCNx64 " pos:%*d ino:%" SCNx64,
               &tfd, &events, &data, &ino) != 4)
        return "an epoll entry fdinfo does not describe";
    struct stat st;
    if (fstat(tfd, &st) < 0 || (uint64_t)st.st_ino != ino)
        return "an epoll entry whose fd was closed (its file open elsewhere)";
    if (is_epoll(tfd))
        return "an epoll instance watching another";
    struct ckpt_epoll_entry *v =
        realloc(e->entries, (e->nr_entries + 1) * sizeof(*v));
    if (!v)
        return "out of memory";
    e->entries = v;
    v[e->nr_entries++] = (struct ckpt_epoll_entry){tfd, events, data};
    return NULL;
}

int ckpt_event_save(int fd, struct ckpt_event *e, const char **why)
{
    memset(e, 0, sizeof(*e));
    e->epoll = is_epoll(fd);
    char path[48], line[256];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(path, "re");
    if (!f) {
        *why = "an eventfd or epoll instance whose fdinfo cannot be read";
        return -1;
    }
    bool count = false, mode = false;
    int semaphore = 0;
    *why = NULL;
    while (!*why && fgets(line, sizeof(line), f)) {
        if (e->epoll && strncmp(line, "tfd:", 4) == 0)
            *why = add_entry(e, line);
        else if (sscanf(line, "eventfd-count: %" SCNx64, &e->count) == 1)
            count = true;
        else if (sscanf(line, "eventfd-semaphore: %d", &semaphore) == 1) {
            e->semaphore = semaphore != 0;
            mode = true;
        }
    }
    fclose(f);
    if (!*why && !e->epoll && (!count || !mode))
        *why = "an eventfd whose count or mode fdinfo does not say";
    return *why ? -1 : 0;
}

/* An eventfd holding the saved count (a write adds it: the count may be
 * past what eventfd's initial value takes). */
static int restore_eventfd(const struct ckpt_event *e)
{
    int fd = eventfd(0, EFD_CLOEXEC | (e->semaphore ? EFD_SEMAPHORE : 0));
    if (fd >= 0 && e->count &&
        write(fd, &e->count, sizeof(e->count)) != (ssize_t)sizeof(e->count)) {
        int err = errno;
        close(fd);
        errno = err ? err : EIO;
        return -1;
    }
    return fd;
}

int ckpt_event_restore(const struct ckpt_event *e)
{
    if (!e->epoll)
        return restore_eventfd(e);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (size_t i = 0; ep >= 0 && i < e->nr_entries; i++) {
        struct epoll_event ev = {.events = e->entries[i].events,
                                 .data.u64 = e->entries[i].data};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, e->entries[i].fd, &ev) < 0) {
            int err = errno;
            close(ep);
            errno = err;
            return -1;
        }
    }
    return ep;
}

void ckpt_event_free(struct ckpt_event *e)
{
    free(e->entries);
    e->entries = NULL;
}
