/*
 * aio_eventfd_full.c - an AIO request's IOCB_FLAG_RESFD on a blocking
 * eventfd whose count is already ULLONG_MAX - 1 (the most a write can
 * put there): the completion must not wait for room. hvrun signalled the
 * eventfd with a write of 1, which blocked hvrun itself, and the run hung.
 * Linux's signal saturates the count at ULLONG_MAX (POLLERR, LTP
 * eventfd06); hvrun's stays at ULLONG_MAX - 1 (io/aio.c says why), so
 * this prints only what both give. Run natively and under hvrun, the
 * output must match.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

int main(void)
{
    int efd = eventfd(0, 0); /* blocking */
    CHECK(efd >= 0);
    char name[] = "/tmp/aio_eventfd_full.XXXXXX";
    int fd = mkstemp(name);
    CHECK(fd >= 0);
    unlink(name);
    aio_context_t ctx = 0;
    CHECK(syscall(SYS_io_setup, 4, &ctx) == 0);
    uint64_t full = UINT64_MAX - 1, count = 0;
    CHECK(write(efd, &full, sizeof(full)) == sizeof(full));

    static char buf[64];
    struct iocb cb = {.aio_lio_opcode = IOCB_CMD_PWRITE,
                      .aio_fildes = (uint32_t)fd,
                      .aio_buf = (uintptr_t)buf,
                      .aio_nbytes = sizeof(buf),
                      .aio_flags = IOCB_FLAG_RESFD,
                      .aio_resfd = (uint32_t)efd};
    struct iocb *cbs[1] = {&cb};
    printf("io_submit: %s\n", result_text(syscall(SYS_io_submit, ctx, 1, cbs)));
    struct io_event ev;
    long n = syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL);
    printf("io_getevents: %s, res %lld\n", result_text(n), (long long)ev.res);
    struct pollfd pf = {.fd = efd, .events = POLLIN};
    long ready = poll(&pf, 1, 0);
    printf("poll: %s, POLLIN %d\n", result_text(ready),
           (pf.revents & POLLIN) != 0);
    printf("read: %s\n", result_text(read(efd, &count, sizeof(count))));
    printf("count at least ULLONG_MAX - 1: %d\n", count >= UINT64_MAX - 1);
    CHECK(syscall(SYS_io_destroy, ctx) == 0);
    return 0;
}
