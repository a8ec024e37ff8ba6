/*
 * aio.c - Linux native AIO as Linux answers it (stress-ng's aiol
 * stressor): io_setup's checks; IOCB_CMD_PWRITE, PREAD, PREADV, PWRITEV,
 * FSYNC and FDSYNC on a file, each event's data, obj and res; a short read
 * at end of file; IOCB_FLAG_RESFD's eventfd count; io_submit's refusals
 * (EBADF for a closed fd or a read of a write-only fd, EINVAL for NOOP or
 * fsync with a buffer, EFAULT for a bad iocb pointer); io_getevents'
 * EINVAL for min_nr > nr; io_pgetevents' checks of the timeout and
 * the signal mask before the context; io_cancel of a completed request (and its
 * EFAULT for a NULL iocb before the context, EINVAL for a wrong key); io_destroy,
 * after which the context is EINVAL.
 * One request at a time, so the event order is the same natively (where
 * completions may come in any order). Prints one line per check; run
 * natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guest_check.h"

static aio_context_t ctx;

static long submit(struct iocb *cb)
{
    struct iocb *list[1] = {cb};
    return syscall(SYS_io_submit, ctx, 1, list);
}

/* Submits cb and takes its event: prints res, and whether data and obj
 * are the iocb's. */
static void run(const char *what, struct iocb *cb)
{
    cb->aio_data = (uint64_t)(uintptr_t)what;
    long r = submit(cb);
    if (r != 1) {
        printf("%s: submit %s\n", what, result_text(r));
        return;
    }
    struct io_event ev;
    memset(&ev, 0, sizeof(ev));
    r = syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL);
    printf("%s: getevents %ld res %lld data ok %d obj ok %d\n", what, r,
           (long long)ev.res, ev.data == cb->aio_data,
           ev.obj == (uint64_t)(uintptr_t)cb);
}

static struct iocb rw(int op, int fd, void *buf, size_t len, off_t off)
{
    struct iocb cb;
    memset(&cb, 0, sizeof(cb));
    cb.aio_lio_opcode = (uint16_t)op;
    cb.aio_fildes = (uint32_t)fd;
    cb.aio_buf = (uint64_t)(uintptr_t)buf;
    cb.aio_nbytes = len;
    cb.aio_offset = off;
    return cb;
}

static void setup_checks(void)
{
    aio_context_t bad = 1;
    printf("setup ctx not 0: %s\n", result_text(syscall(SYS_io_setup, 8, &bad)));
    aio_context_t zero = 0;
    printf("setup nr 0: %s\n", result_text(syscall(SYS_io_setup, 0, &zero)));
    printf("setup bad pointer: %s\n",
           result_text(syscall(SYS_io_setup, 8, (aio_context_t *)8)));
    printf("setup: %s\n", result_text(syscall(SYS_io_setup, 8, &ctx)));
    printf("ctx nonzero: %d\n", ctx != 0);
}

static void transfer_checks(int fd)
{
    char out[] = "hello aio world", in[32] = "";
    struct iocb cb = rw(IOCB_CMD_PWRITE, fd, out, 15, 0);
    run("pwrite", &cb);
    cb = rw(IOCB_CMD_PREAD, fd, in, 5, 6);
    run("pread", &cb);
    printf("read back: %s\n", in);
    cb = rw(IOCB_CMD_PREAD, fd, in, sizeof(in), 10);
    run("pread past eof", &cb);
    char a[4] = "", b[8] = "";
    struct iovec iov[2] = {{a, 3}, {b, 7}};
    cb = rw(IOCB_CMD_PREADV, fd, iov, 2, 0);
    run("preadv", &cb);
    printf("preadv: %.3s|%.7s\n", a, b);
    struct iovec wv[2] = {{"AB", 2}, {"CD", 2}};
    cb = rw(IOCB_CMD_PWRITEV, fd, wv, 2, 20);
    run("pwritev", &cb);
    printf("file size: %lld\n", (long long)lseek(fd, 0, SEEK_END));
    cb = rw(IOCB_CMD_FSYNC, fd, NULL, 0, 0);
    run("fsync", &cb);
    cb = rw(IOCB_CMD_FDSYNC, fd, NULL, 0, 0);
    run("fdsync", &cb);
}

static void resfd_check(int fd)
{
    int efd = eventfd(0, EFD_NONBLOCK);
    CHECK(efd >= 0);
    char in[4];
    struct iocb cb = rw(IOCB_CMD_PREAD, fd, in, 4, 0);
    cb.aio_flags = IOCB_FLAG_RESFD;
    cb.aio_resfd = (uint32_t)efd;
    run("resfd pread", &cb);
    uint64_t count = 0;
    ssize_t got = read(efd, &count, 8);
    printf("eventfd read: %zd count %llu\n", got, (unsigned long long)count);
}

/* io_pgetevents' order: the timeout (EFAULT), the sigset struct
 * (EFAULT), its size (EINVAL), the mask (EFAULT), then the context. */
static void pgetevents_checks(void)
{
    struct io_event ev;
    struct timespec zero = {0, 0};
    uint64_t mask = 0;
    struct {
        void *sigmask;
        size_t sigsetsize;
    } usig = {&mask, 8}, bad_size = {&mask, 4}, bad_mask = {(void *)8, 8},
      no_mask = {NULL, 4};
    const struct {
        const char *what;
        aio_context_t ctx;
        void *timeout, *usig;
    } cases[] = {
        {"pgetevents ok", ctx, &zero, &usig},
        {"pgetevents no usig", ctx, &zero, NULL},
        {"pgetevents NULL mask", ctx, &zero, &no_mask},
        {"pgetevents bad usig", ctx, &zero, (void *)8},
        {"pgetevents bad size", ctx, &zero, &bad_size},
        {"pgetevents bad mask", ctx, &zero, &bad_mask},
        {"pgetevents bad ctx", 1, &zero, &usig},
        {"pgetevents bad ctx, bad usig", 1, &zero, (void *)8},
        {"pgetevents bad ctx, bad timeout", 1, (void *)8, &usig},
        {"getevents bad ctx, bad timeout", 1, (void *)8, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long r = i + 1 == sizeof(cases) / sizeof(cases[0])
                     ? syscall(SYS_io_getevents, cases[i].ctx, 0, 1, &ev,
                               cases[i].timeout)
                     : syscall(SYS_io_pgetevents, cases[i].ctx, 0, 1, &ev,
                               cases[i].timeout, cases[i].usig);
        printf("%s: %s\n", cases[i].what, result_text(r));
    }
}

static void refusal_checks(int fd)
{
    char buf[4];
    struct iocb cb = rw(IOCB_CMD_PREAD, 900, buf, 4, 0);
    run("closed fd", &cb);
    int wfd = open("/dev/null", O_WRONLY);
    cb = rw(IOCB_CMD_PREAD, wfd, buf, 4, 0);
    run("read of write-only fd", &cb);
    cb = rw(IOCB_CMD_NOOP, fd, buf, 4, 0);
    run("noop", &cb);
    cb = rw(IOCB_CMD_FSYNC, fd, buf, 4, 0);
    run("fsync with a buffer", &cb);
    cb = rw(IOCB_CMD_PREAD, fd, buf, 4, -1);
    run("negative offset", &cb);
    struct iocb *list[1] = {(struct iocb *)8};
    printf("bad iocb pointer: %s\n", result_text(syscall(SYS_io_submit, ctx, 1, list)));
    printf("submit nr -1: %s\n", result_text(syscall(SYS_io_submit, ctx, -1L, list)));
    struct io_event ev;
    printf("getevents min > nr: %s\n",
           result_text(syscall(SYS_io_getevents, ctx, 2, 1, &ev, NULL)));
    struct timespec zero = {0, 0};
    printf("getevents none ready: %s\n",
           result_text(syscall(SYS_io_getevents, ctx, 0, 1, &ev, &zero)));
    pgetevents_checks();
    cb = rw(IOCB_CMD_PREAD, fd, buf, 4, 0);
    run("for cancel", &cb);
    printf("cancel completed: %s\n",
           result_text(syscall(SYS_io_cancel, ctx, &cb, &ev)));
    /* the iocb's key is read before the context is looked up */
    printf("cancel of a NULL iocb: %s\n",
           result_text(syscall(SYS_io_cancel, ctx, NULL, NULL)));
    printf("cancel in a bad context, NULL iocb: %s\n",
           result_text(syscall(SYS_io_cancel, (aio_context_t)1, NULL, NULL)));
    cb.aio_key = 1;
    printf("cancel with a wrong key: %s\n",
           result_text(syscall(SYS_io_cancel, ctx, &cb, &ev)));
}

int main(void)
{
    char path[] = "/tmp/aioXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    setup_checks();
    transfer_checks(fd);
    resfd_check(fd);
    refusal_checks(fd);
    printf("destroy: %s\n", result_text(syscall(SYS_io_destroy, ctx)));
    printf("destroy again: %s\n", result_text(syscall(SYS_io_destroy, ctx)));
    struct iocb cb = rw(IOCB_CMD_PREAD, fd, path, 1, 0);
    printf("submit after destroy: %s\n", result_text(submit(&cb)));
    return 0;
}
