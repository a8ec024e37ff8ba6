/*
 * aio_setup_limits.c - io_setup's limits in ioctx_alloc's order: a ring
 * of twice nr_events slots past what one holds (nr_events UINT_MAX) is
 * EINVAL, before aio-max-nr's EAGAIN (one more than /proc's
 * fs/aio-max-nr; 2^31, whose slot count wraps to 0); a small one works
 * (LTP's io_setup01). hvrun said EAGAIN for UINT_MAX.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void setup(const char *what, unsigned nr)
{
    aio_context_t ctx = 0;
    long rc = syscall(SYS_io_setup, nr, &ctx);
    printf("%s: %s\n", what, rc == 0 ? "ok" : strerrorname_np(errno));
    if (rc == 0)
        syscall(SYS_io_destroy, ctx);
}

int main(void)
{
    unsigned max = 65536;
    FILE *f = fopen("/proc/sys/fs/aio-max-nr", "r");
    if (f) {
        if (fscanf(f, "%u", &max) != 1)
            max = 65536;
        fclose(f);
    }
    setup("1", 1);
    setup("UINT_MAX", ~0u);
    setup("2^31", 1u << 31);
    setup("2^28", 1u << 28);
    setup("aio-max-nr + 1", max + 1);
    return 0;
}
