/*
 * aio_stream.c - native AIO on a pipe: a stream has no offsets, so a read
 * or write request moves data at the stream's own position whatever its
 * aio_offset (Linux's pipe read_iter/write_iter ignore it), and a read
 * with RWF_NOWAIT on an empty pipe completes with -EAGAIN. hvrun read at
 * the offset, which a pipe refuses (-ESPIPE: LTP's io_submit04).
 */
#define _GNU_SOURCE
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guest_check.h"

static aio_context_t ctx;

/* Submits one request and returns its event's res. */
static long one(int fd, int op, void *buf, size_t n, int64_t off, int rw_flags)
{
    struct iocb cb;
    memset(&cb, 0, sizeof(cb));
    cb.aio_fildes = (uint32_t)fd;
    cb.aio_lio_opcode = (uint16_t)op;
    cb.aio_buf = (uint64_t)(uintptr_t)buf;
    cb.aio_nbytes = n;
    cb.aio_offset = off;
    cb.aio_rw_flags = rw_flags;
    struct iocb *list[1] = {&cb};
    CHECK(syscall(SYS_io_submit, ctx, 1, list) == 1);
    struct io_event ev;
    struct timespec ts = {5, 0};
    CHECK(syscall(SYS_io_getevents, ctx, 1, 1, &ev, &ts) == 1);
    return (long)ev.res;
}

static const char *res_text(long res)
{
    static char buf[32];
    if (res < 0)
        return strerrorname_np((int)-res);
    snprintf(buf, sizeof(buf), "%ld", res);
    return buf;
}

int main(void)
{
    CHECK(syscall(SYS_io_setup, 4, &ctx) == 0);
    int p[2];
    CHECK(pipe(p) == 0);
    char in[16] = {0};
    printf("write \"hello\" at offset 99: %s\n",
           res_text(one(p[1], IOCB_CMD_PWRITE, "hello", 5, 99, 0)));
    printf("read at offset 1234: %s", res_text(one(p[0], IOCB_CMD_PREAD, in, sizeof(in), 1234, 0)));
    printf(" \"%s\"\n", in);
    printf("read, RWF_NOWAIT, empty pipe: %s\n",
           res_text(one(p[0], IOCB_CMD_PREAD, in, sizeof(in), 0, RWF_NOWAIT)));
    CHECK(write(p[1], "xy", 2) == 2);
    memset(in, 0, sizeof(in));
    printf("read, RWF_NOWAIT, 2 bytes there: %s",
           res_text(one(p[0], IOCB_CMD_PREAD, in, sizeof(in), 0, RWF_NOWAIT)));
    printf(" \"%s\"\n", in);
    CHECK(syscall(SYS_io_destroy, ctx) == 0);
    return 0;
}
