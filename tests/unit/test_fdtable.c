/*
 * test_fdtable.c - the guest fd table (syscall-proxy/fdtable.c, API in
 * proxy.h), with real host fds on /dev/null.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "proxy.h"
#include "fdtable.h"

static int devnull(void)
{
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    cr_assert_geq(fd, 0, "open /dev/null");
    return fd;
}

static bool host_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

static struct proxy_fdtable t;

static void fini(void) { proxy_fdtable_destroy(&t); }

TestSuite(fdtable, .fini = fini);

Test(fdtable, lowest_free_fd)
{
    cr_assert_eq(proxy_fdtable_init(&t, 1024), 0);
    int h[4];
    for (int i = 0; i < 4; i++) {
        h[i] = devnull();
        cr_assert_eq(proxy_fd_install(&t, h[i], false, 0), i);
        cr_assert_eq(proxy_fd_host(&t, i), h[i]);
    }
    cr_assert_eq(proxy_fd_close(&t, 1), 0);
    cr_assert_not(host_open(h[1]), "close must close the host fd");
    int h4 = devnull();
    cr_assert_eq(proxy_fd_install(&t, h4, false, 0), 1, "lowest free is 1");
    int h5 = devnull();
    cr_assert_eq(proxy_fd_install(&t, h5, false, 0), 4);
}

Test(fdtable, min_fd_is_respected)
{
    cr_assert_eq(proxy_fdtable_init(&t, 1024), 0);
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 0), 0);
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 10), 10);
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 10), 11);
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 5), 5);
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 0), 1);
    /* Far beyond the initial capacity (F_DUPFD 500). */
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 500), 500);
    cr_assert_geq(t.cap, 501);
}

Test(fdtable, many_fds_grow_the_table)
{
    cr_assert_eq(proxy_fdtable_init(&t, 1024), 0);
    int first = devnull();
    cr_assert_eq(proxy_fd_install(&t, first, false, 0), 0);
    for (int i = 1; i < 200; i++) {
        int h = dup(first);
        cr_assert_geq(h, 0);
        cr_assert_eq(proxy_fd_install(&t, h, false, 0), i);
    }
    for (int i = 1; i < 200; i++)
        cr_assert_geq(proxy_fd_host(&t, i), 0);
    cr_assert_eq(proxy_fd_host(&t, 0), first, "slot 0 survived growth");
}

Test(fdtable, install_at_replaces_and_closes_old)
{
    cr_assert_eq(proxy_fdtable_init(&t, 1024), 0);
    int h1 = devnull(), h2 = devnull();
    cr_assert_eq(proxy_fd_install(&t, h1, false, 3), 3);
    cr_assert_eq(proxy_fd_install_at(&t, 3, h2, true), 3);
    cr_assert_eq(proxy_fd_host(&t, 3), h2);
    cr_assert_not(host_open(h1), "old host fd must be closed");
    cr_assert(host_open(h2));
    struct proxy_fd *f = proxy_fd_get(&t, 3);
    cr_assert_not_null(f);
    cr_assert(f->cloexec);
    cr_assert_eq(f->kind, PROXY_FD_HOST);
}

Test(fdtable, install_at_empty_slot_beyond_cap)
{
    cr_assert_eq(proxy_fdtable_init(&t, 1024), 0);
    int h = devnull();
    cr_assert_eq(proxy_fd_install_at(&t, 700, h, false), 700);
    cr_assert_eq(proxy_fd_host(&t, 700), h);
    cr_assert_eq(proxy_fd_host(&t, 699), -EBADF);
    /* Lower numbers are still the lowest free. */
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 0), 0);
}

Test(fdtable, emfile_at_max_fds)
{
    cr_assert_eq(proxy_fdtable_init(&t, 4), 0);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(proxy_fd_install(&t, devnull(), false, 0), i);
    int extra = devnull();
    cr_assert_eq(proxy_fd_install(&t, extra, false, 0), -EMFILE);
    cr_assert_not(host_open(extra), "refused host fd must be closed");
    /* min_fd at or past the limit. */
    cr_assert_eq(proxy_fd_close(&t, 2), 0);
    extra = devnull();
    cr_assert_eq(proxy_fd_install(&t, extra, false, 4), -EMFILE);
    cr_assert_not(host_open(extra));
    /* The freed number below is still usable. */
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 0), 2);
}

Test(fdtable, install_at_past_max_is_ebadf)
{
    cr_assert_eq(proxy_fdtable_init(&t, 4), 0);
    int h = devnull();
    cr_assert_eq(proxy_fd_install_at(&t, 4, h, false), -EBADF);
    cr_assert_not(host_open(h));
    h = devnull();
    cr_assert_eq(proxy_fd_install_at(&t, -1, h, false), -EBADF);
    cr_assert_not(host_open(h));
}

Test(fdtable, ebadf_for_free_and_out_of_range)
{
    cr_assert_eq(proxy_fdtable_init(&t, 64), 0);
    cr_assert_eq(proxy_fd_host(&t, 0), -EBADF);
    cr_assert_eq(proxy_fd_host(&t, -1), -EBADF);
    cr_assert_eq(proxy_fd_host(&t, 63), -EBADF);
    cr_assert_eq(proxy_fd_host(&t, 100000), -EBADF);
    cr_assert_null(proxy_fd_get(&t, 0));
    cr_assert_null(proxy_fd_get(&t, -5));
    cr_assert_null(proxy_fd_get(&t, 1 << 20));
    cr_assert_eq(proxy_fd_close(&t, 0), -EBADF);
    cr_assert_eq(proxy_fd_close(&t, -1), -EBADF);
    cr_assert_eq(proxy_fd_close(&t, 1 << 20), -EBADF);
    /* Closed twice. */
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 0), 0);
    cr_assert_eq(proxy_fd_close(&t, 0), 0);
    cr_assert_eq(proxy_fd_close(&t, 0), -EBADF);
}

Test(fdtable, cloexec_sweep_closes_only_cloexec)
{
    cr_assert_eq(proxy_fdtable_init(&t, 64), 0);
    int h[6];
    for (int i = 0; i < 6; i++) {
        h[i] = devnull();
        cr_assert_eq(proxy_fd_install(&t, h[i], i % 2 == 1, 0), i);
    }
    proxy_fd_close_on_exec(&t);
    for (int i = 0; i < 6; i++) {
        if (i % 2 == 1) {
            cr_assert_eq(proxy_fd_host(&t, i), -EBADF, "fd %d kept", i);
            cr_assert_not(host_open(h[i]), "host fd of %d not closed", i);
        } else {
            cr_assert_eq(proxy_fd_host(&t, i), h[i], "fd %d lost", i);
            cr_assert(host_open(h[i]));
            cr_assert_not(proxy_fd_get(&t, i)->cloexec);
        }
    }
    /* The freed numbers are reused lowest first. */
    cr_assert_eq(proxy_fd_install(&t, devnull(), false, 0), 1);
}

Test(fdtable, destroy_closes_everything)
{
    cr_assert_eq(proxy_fdtable_init(&t, 64), 0);
    int a = devnull(), b = devnull();
    cr_assert_eq(proxy_fd_install(&t, a, false, 0), 0);
    cr_assert_eq(proxy_fd_install(&t, b, true, 7), 7);
    proxy_fdtable_destroy(&t);
    cr_assert_not(host_open(a));
    cr_assert_not(host_open(b));
    cr_assert_eq(proxy_fdtable_init(&t, 64), 0); /* for fini */
}

Test(fdtable, description_ids)
{
    cr_assert_eq(proxy_fdtable_init(&t, 64), 0);
    int a = devnull(), b = devnull();
    cr_assert_eq(proxy_fd_install(&t, a, false, 0), 0);
    cr_assert_eq(proxy_fd_install(&t, b, false, 0), 1);
    uint64_t ida = proxy_fd_file_id(&t, 0), idb = proxy_fd_file_id(&t, 1);
    cr_assert(ida != 0 && idb > ida, "made later, ordered after");
    /* a dup: the same host fd, the same description */
    cr_assert_eq(proxy_fd_install(&t, proxy_host_fd_ref(a), false, 0), 2);
    cr_assert_eq(proxy_fd_file_id(&t, 2), ida);
    /* epoll gives fd 0 a host fd of its own: still the description */
    int own = proxy_fd_epoll_key(&t, 0);
    cr_assert(own >= 0 && own != a);
    cr_assert_eq(proxy_fd_file_id(&t, 0), ida);
    cr_assert_eq(proxy_fd_file_id(&t, 2), ida);
    cr_assert_eq(proxy_fd_file_id(&t, 3), 0, "a free fd has none");
    cr_assert_eq(proxy_fd_file_id(&t, -1), 0);
    /* a new description on a reused host fd number is a new one */
    cr_assert_eq(proxy_fd_close(&t, 1), 0);
    int c = devnull();
    cr_assert_eq(c, b, "the host reuses the lowest number");
    cr_assert_eq(proxy_fd_install(&t, c, false, 0), 1);
    cr_assert_gt(proxy_fd_file_id(&t, 1), idb);
}
